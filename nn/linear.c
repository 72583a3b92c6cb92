/* Linear layer y = x W^T + b with W stored (out, in) like torch.nn.Linear, so weights load unchanged. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/nn_internal.h"

void nn_rows_sum_into(float *restrict db, const float *restrict dy, int B, int n)
{
    nn_rows_sum_into_ld(db, dy, B, n, n);
}

void nn_rows_sum_into_ld(float *restrict db, const float *restrict dy, int B, int n, int ld)
{
    const int n4 = NN_VEC4(n);
    for (int i = 0; i < B; i++, dy += ld) {
        for (int j = 0; j < n4; j++) db[j] += dy[j];
        for (int j = n4; j < n; j++) db[j] += dy[j];
    }
}

void nn_add(float *y, const float *x, const float *z, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = x[i] + z[i];
}

void nn_gemm_xwt(int B, int out, int in, const float *x, const float *W, float beta, float *y)
{
    if (B == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0f, W, in, x, 1, beta, y, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0f, x, in, W, in, beta, y, out);
}

void nn_gemm_xw(int B, int in, int out, const float *dy, const float *W, float beta, float *dx)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, in, out, 1.0f, dy, out, W, in, beta, dx, in);
}

void nn_linear_layout(nn_linear *l, nn_params *p, const char *name, int in, int out)
{
    char buf[64];
    l->in = in;
    l->out = out;
    snprintf(buf, sizeof buf, "%s.weight", name);
    l->w = nn_params_add(p, buf, (size_t)out * in);
    snprintf(buf, sizeof buf, "%s.bias", name);
    l->b = nn_params_add(p, buf, (size_t)out);
}

void nn_linear_reset(const nn_linear *l, nn_params *p, hr_rng *rng)
{
    /* kaiming_uniform(a = sqrt(5)) in PyTorch reduces to U(-1/sqrt(in), 1/sqrt(in)), same bound for b */
    float bound = 1.0f / sqrtf((float)l->in);
    float *w = p->w + l->w, *b = p->w + l->b;
    for (size_t i = 0; i < (size_t)l->out * l->in; i++) w[i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
    for (int i = 0; i < l->out; i++) b[i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
}

void nn_linear_forward(const nn_linear *l, const nn_params *p, const float *x, float *y, int B)
{
    /* bias first, then one sgemm with beta = 1: a single pass over y */
    const float *b = p->w + l->b;
    float *row = y;
    for (int i = 0; i < B; i++, row += l->out) memcpy(row, b, (size_t)l->out * sizeof *row);
    nn_gemm_xwt(B, l->out, l->in, x, p->w + l->w, 1.0f, y);
}

void nn_linear_backward(const nn_linear *l, nn_params *p, const float *x, const float *dy, float *dx, int B)
{
    /* dW (out, in) += dy^T (out, B) x (B, in) */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l->out, l->in, B, 1.0f, dy, l->out, x, l->in, 1.0f,
                p->dw + l->w, l->in);
    nn_rows_sum_into(p->dw + l->b, dy, B, l->out);
    /* dx (B, in) += dy (B, out) W (out, in) */
    if (dx) nn_gemm_xw(B, l->in, l->out, dy, p->w + l->w, 1.0f, dx);
}

int nn_floats_alloc(float **out, size_t n, int rc)
{
    *out = NULL;
    if (rc != HR_OK) return rc;
    *out = hr_calloc(n ? n : 1, sizeof **out);
    return *out ? HR_OK : HR_ENOMEM;
}
