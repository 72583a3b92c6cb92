/* Embedding table lookup: row ids of a (count, d) table. */
#include <stdio.h>
#include <string.h>

#include "nn/nn.h"

void nn_embedding_layout(nn_embedding *e, nn_params *p, const char *name, int count, int d)
{
    char buf[64];
    e->count = count;
    e->d = d;
    snprintf(buf, sizeof buf, "%s.weight", name);
    e->w = nn_params_add(p, buf, (size_t)count * d);
}

void nn_embedding_reset(const nn_embedding *e, nn_params *p, hr_rng *rng)
{
    for (size_t i = 0; i < (size_t)e->count * e->d; i++) p->w[e->w + i] = hr_rng_normal(rng);
}

void nn_embedding_forward(const nn_embedding *e, const nn_params *p, const int *ids, float *y, int N)
{
    for (int n = 0; n < N; n++) {
        HR_ASSERT(ids[n] >= 0 && ids[n] < e->count);
        memcpy(y + (size_t)n * e->d, p->w + e->w + (size_t)ids[n] * e->d, (size_t)e->d * sizeof *y);
    }
}

void nn_embedding_backward(const nn_embedding *e, nn_params *p, const int *ids, const float *dy, int N)
{
    for (int n = 0; n < N; n++) {
        float *dw = p->dw + e->w + (size_t)ids[n] * e->d;
        const float *g = dy + (size_t)n * e->d;
        for (int j = 0; j < e->d; j++) dw[j] += g[j];
    }
}
