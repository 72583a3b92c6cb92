/* Inverted dropout: kept units are scaled by 1/(1 - rate) in training so inference is the identity. */
#include <string.h>

#include "nn/nn.h"

void nn_dropout_forward(const float *x, float *y, float *mask, size_t n, float rate, hr_rng *rng)
{
    HR_ASSERT(rate >= 0.0f && rate < 1.0f);
    if (rate == 0.0f) {
        if (y != x) memcpy(y, x, n * sizeof *y);
        for (size_t i = 0; i < n; i++) mask[i] = 1.0f;
        return;
    }
    float keep = 1.0f / (1.0f - rate);
    for (size_t i = 0; i < n; i++) {
        mask[i] = hr_rng_uniform(rng) >= rate ? keep : 0.0f;
        y[i] = x[i] * mask[i];
    }
}

void nn_dropout_backward(const float *dy, const float *mask, float *dx, size_t n)
{
    for (size_t i = 0; i < n; i++) dx[i] += dy[i] * mask[i];
}
