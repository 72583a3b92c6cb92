/* Small pieces every nn family's ops need: z-scored mini-batch gathering. */

#include "train/train.h"

void train_gather_zscore(const float *X, int nf, const int *rows, int n, const float *mean, const float *std,
                         float *out)
{
    for (int i = 0; i < n; i++) {
        const float *x = X + (size_t)rows[i] * nf;
        float *o = out + (size_t)i * nf;
        for (int j = 0; j < nf; j++) o[j] = (x[j] - mean[j]) / std[j];
    }
}
