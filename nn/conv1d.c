/* Conv1D over a batch-first token sequence as im2col + one GEMM for the whole batch.
 * cols row (b, t) holds x[b, t*stride + j - pad, c] at column c*k + j (zero outside [0, T)), so
 * that y = cols W^T with W (C_out, C_in*k) read straight from PyTorch's (C_out, C_in, k) weight. */
#include "nn/seq.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void nn_conv1d_layout(nn_conv1d *l, nn_params *p, const char *name, int in, int out, int kernel,
                      int stride, int pad)
{
    HR_ASSERT(in > 0 && out > 0 && kernel > 0 && stride > 0 && pad >= 0);
    char buf[64];
    l->in = in;
    l->out = out;
    l->kernel = kernel;
    l->stride = stride;
    l->pad = pad;
    snprintf(buf, sizeof buf, "%s.weight", name);
    l->w = nn_params_add(p, buf, (size_t)out * in * kernel);
    snprintf(buf, sizeof buf, "%s.bias", name);
    l->b = nn_params_add(p, buf, (size_t)out);
}

void nn_conv1d_reset(const nn_conv1d *l, nn_params *p, hr_rng *rng)
{
    float bound = 1.0f / sqrtf((float)(l->in * l->kernel));
    size_t nw = (size_t)l->out * l->in * l->kernel;
    for (size_t i = 0; i < nw; i++) p->w[l->w + i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
    for (int i = 0; i < l->out; i++) p->w[l->b + i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
}

int nn_conv1d_out_len(const nn_conv1d *l, int T)
{
    int span = T + 2 * l->pad - l->kernel;
    return span < 0 ? 0 : span / l->stride + 1;
}

int nn_conv1d_cache_init(nn_conv1d_cache *c, const nn_conv1d *l, int max_batch, int max_time)
{
    memset(c, 0, sizeof *c);
    c->max_rows = max_batch * nn_conv1d_out_len(l, max_time);
    size_t n = (size_t)c->max_rows * l->in * l->kernel;
    c->cols = hr_malloc((n ? n : 1) * sizeof *c->cols);
    c->dcols = hr_malloc((n ? n : 1) * sizeof *c->dcols);
    if (!c->cols || !c->dcols) {
        nn_conv1d_cache_free(c);
        return hr_error(HR_ENOMEM, "conv1d cache: %zu floats", 2 * n);
    }
    return HR_OK;
}

void nn_conv1d_cache_free(nn_conv1d_cache *c)
{
    free(c->cols);
    free(c->dcols);
    c->cols = c->dcols = NULL;
}

void nn_conv1d_forward(const nn_conv1d *l, const nn_params *p, nn_conv1d_cache *c, int B, int T,
                       const float *x, float *y)
{
    int To = nn_conv1d_out_len(l, T), K = l->kernel, Ci = l->in, Co = l->out;
    int rows = B * To, kc = Ci * K;
    HR_ASSERT(rows <= c->max_rows);
    if (rows == 0) return;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < To; t++) {
            float *col = c->cols + ((size_t)b * To + t) * kc; /* (C_in * k) */
            for (int j = 0; j < K; j++) {
                int src = t * l->stride + j - l->pad;
                if (src < 0 || src >= T) {
                    for (int ci = 0; ci < Ci; ci++) col[ci * K + j] = 0.0f;
                    continue;
                }
                const float *xs = x + ((size_t)b * T + src) * Ci; /* (C_in) */
                for (int ci = 0; ci < Ci; ci++) col[ci * K + j] = xs[ci];
            }
        }
    const float *bias = p->w + l->b;
    for (int r = 0; r < rows; r++) memcpy(y + (size_t)r * Co, bias, (size_t)Co * sizeof *y);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, Co, kc, 1.0f, c->cols, kc,
                p->w + l->w, kc, 1.0f, y, Co);
}

void nn_conv1d_backward(const nn_conv1d *l, nn_params *p, nn_conv1d_cache *c, int B, int T,
                        const float *dy, float *dx)
{
    int To = nn_conv1d_out_len(l, T), K = l->kernel, Ci = l->in, Co = l->out;
    int rows = B * To, kc = Ci * K;
    HR_ASSERT(rows <= c->max_rows);
    if (rows == 0) return;
    /* dW (C_out, C_in*k) += dy^T cols; db += column sums of dy */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Co, kc, rows, 1.0f, dy, Co, c->cols, kc,
                1.0f, p->dw + l->w, kc);
    float *db = p->dw + l->b;
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < Co; o++) db[o] += dy[(size_t)r * Co + o];
    if (!dx) return;
    /* dcols = dy W, then col2im scatters each column entry back to the input position it came from */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, kc, Co, 1.0f, dy, Co, p->w + l->w,
                kc, 0.0f, c->dcols, kc);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < To; t++) {
            const float *col = c->dcols + ((size_t)b * To + t) * kc;
            for (int j = 0; j < K; j++) {
                int src = t * l->stride + j - l->pad;
                if (src < 0 || src >= T) continue;
                float *xs = dx + ((size_t)b * T + src) * Ci;
                for (int ci = 0; ci < Ci; ci++) xs[ci] += col[ci * K + j];
            }
        }
}
