/* Small pieces every nn family's ops need: z-scored mini-batch gathering and selection top-1 counting. */

#include "eval/eval.h"
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

int train_select_hits(const data_select *sel, const int *rows, const float *scores, int n)
{
    const int K = sel->n_kernels;
    int hits = 0;
    for (int i = 0; i < n; i++) /* eval's top-1: a kernel tied with the fastest counts */
        hits += eval_select_in_topk(sel->runtime + (size_t)rows[i] * K, scores + (size_t)i * K, K, 1);
    return hits;
}
