/* Position-wise feed-forward block of the transformer: Linear -> ReLU -> Linear over every token. */
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/nn_internal.h"

void nn_ffn_layout(nn_ffn *f, nn_params *p, const char *l1_name, const char *l2_name, int d, int d_ff)
{
    f->d = d;
    f->d_ff = d_ff;
    nn_linear_layout(&f->l1, p, l1_name, d, d_ff);
    nn_linear_layout(&f->l2, p, l2_name, d_ff, d);
}

void nn_ffn_reset(const nn_ffn *f, nn_params *p, hr_rng *rng)
{
    nn_linear_reset(&f->l1, p, rng);
    nn_linear_reset(&f->l2, p, rng);
}

int nn_ffn_cache_init(nn_ffn_cache *c, const nn_ffn *f, int max_n)
{
    int rc = HR_OK;
    memset(c, 0, sizeof *c);
    c->cap = max_n;
    rc = nn_floats_alloc(&c->a, (size_t)max_n * f->d_ff, rc);
    rc = nn_floats_alloc(&c->da, (size_t)max_n * f->d_ff, rc);
    if (rc != HR_OK) nn_ffn_cache_free(c);
    return rc;
}

void nn_ffn_cache_free(nn_ffn_cache *c)
{
    free(c->a);
    free(c->da);
    memset(c, 0, sizeof *c);
}

void nn_ffn_forward(const nn_ffn *f, const nn_params *p, nn_ffn_cache *c, const float *x, float *y, int N)
{
    HR_ASSERT(N <= c->cap);
    nn_linear_forward(&f->l1, p, x, c->a, N);
    nn_relu_forward(c->a, c->a, (size_t)N * f->d_ff);
    nn_linear_forward(&f->l2, p, c->a, y, N);
}

void nn_ffn_backward(const nn_ffn *f, nn_params *p, nn_ffn_cache *c, const float *x, const float *dy, float *dx,
                     int N)
{
    HR_ASSERT(N <= c->cap);
    size_t n = (size_t)N * f->d_ff;
    memset(c->da, 0, n * sizeof *c->da);
    nn_linear_backward(&f->l2, p, c->a, dy, c->da, N);
    /* ReLU backward in place: the gradient of a unit that was off is zero */
    for (size_t i = 0; i < n; i++) c->da[i] = nn_gate1(c->a[i], c->da[i]);
    nn_linear_backward(&f->l1, p, x, c->da, dx, N);
}
