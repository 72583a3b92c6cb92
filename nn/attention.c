/* Multi-head self-attention (Vaswani et al. 2017) laid out like torch.nn.MultiheadAttention: one fused
 * in-projection producing [Q K V] per token, heads as column slices of width D/H, no masks. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/nn_internal.h"

void nn_mhsa_layout(nn_mhsa *a, nn_params *p, const char *name, int d, int heads)
{
    HR_ASSERT(heads > 0 && d % heads == 0);
    char buf[64];
    a->d = d;
    a->heads = heads;
    snprintf(buf, sizeof buf, "%s.in_proj", name);
    nn_linear_layout(&a->in_proj, p, buf, d, 3 * d);
    snprintf(buf, sizeof buf, "%s.out_proj", name);
    nn_linear_layout(&a->out_proj, p, buf, d, d);
}

void nn_mhsa_reset(const nn_mhsa *a, nn_params *p, hr_rng *rng)
{
    float bound = sqrtf(6.0f / (float)(a->d + 3 * a->d)); /* xavier_uniform on (3D, D) */
    float *w = p->w + a->in_proj.w;
    for (size_t i = 0; i < (size_t)3 * a->d * a->d; i++) w[i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
    memset(p->w + a->in_proj.b, 0, (size_t)3 * a->d * sizeof *p->w);
    nn_linear_reset(&a->out_proj, p, rng);
    memset(p->w + a->out_proj.b, 0, (size_t)a->d * sizeof *p->w);
}

int nn_mhsa_cache_init(nn_mhsa_cache *c, const nn_mhsa *a, int max_b, int t)
{
    size_t n = (size_t)max_b * t, d = (size_t)a->d;
    int rc = HR_OK;
    memset(c, 0, sizeof *c);
    c->cap_b = max_b;
    c->cap_t = t;
    rc = nn_floats_alloc(&c->qkv, n * 3 * d, rc);
    rc = nn_floats_alloc(&c->att, (size_t)max_b * a->heads * t * t, rc);
    rc = nn_floats_alloc(&c->ctx, n * d, rc);
    rc = nn_floats_alloc(&c->dctx, n * d, rc);
    rc = nn_floats_alloc(&c->dqkv, n * 3 * d, rc);
    rc = nn_floats_alloc(&c->datt, (size_t)t * t, rc);
    if (rc != HR_OK) nn_mhsa_cache_free(c);
    return rc;
}

void nn_mhsa_cache_free(nn_mhsa_cache *c)
{
    free(c->qkv);
    free(c->att);
    free(c->ctx);
    free(c->dctx);
    free(c->dqkv);
    free(c->datt);
    memset(c, 0, sizeof *c);
}

static void softmax_rows_inplace(float *s, int rows, int cols)
{
    for (int i = 0; i < rows; i++, s += cols) {
        float mx = s[0], sum = 0.0f;
        for (int j = 1; j < cols; j++) mx = s[j] > mx ? s[j] : mx;
        for (int j = 0; j < cols; j++) sum += (s[j] = expf(s[j] - mx));
        float inv = 1.0f / sum;
        for (int j = 0; j < cols; j++) s[j] *= inv;
    }
}

void nn_mhsa_forward(const nn_mhsa *a, const nn_params *p, nn_mhsa_cache *c, const float *x, float *y, int B,
                     int T)
{
    HR_ASSERT(B <= c->cap_b && T <= c->cap_t);
    const int D = a->d, H = a->heads, dh = D / H, D3 = 3 * D;
    const float scale = 1.0f / sqrtf((float)dh);
    nn_linear_forward(&a->in_proj, p, x, c->qkv, B * T);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const float *q = c->qkv + (size_t)b * T * D3 + (size_t)h * dh, *k = q + D, *v = q + 2 * D;
            float *att = c->att + ((size_t)b * H + h) * T * T; /* (T, T) */
            /* S (T, T) = Q K^T / sqrt(dh), Q and K (T, dh) with row stride 3D */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, dh, scale, q, D3, k, D3, 0.0f, att, T);
            softmax_rows_inplace(att, T, T);
            /* ctx_h (T, dh) = P V, written into columns [h dh, (h + 1) dh) of ctx (T, D) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, dh, T, 1.0f, att, T, v, D3, 0.0f,
                        c->ctx + (size_t)b * T * D + (size_t)h * dh, D);
        }
    nn_linear_forward(&a->out_proj, p, c->ctx, y, B * T);
}

void nn_mhsa_backward(const nn_mhsa *a, nn_params *p, nn_mhsa_cache *c, const float *x, const float *dy,
                      float *dx, int B, int T)
{
    HR_ASSERT(B <= c->cap_b && T <= c->cap_t);
    const int D = a->d, H = a->heads, dh = D / H, D3 = 3 * D;
    const float scale = 1.0f / sqrtf((float)dh);
    const size_t N = (size_t)B * T;
    memset(c->dctx, 0, N * D * sizeof *c->dctx);
    memset(c->dqkv, 0, N * D3 * sizeof *c->dqkv);
    nn_linear_backward(&a->out_proj, p, c->ctx, dy, c->dctx, B * T);
    float *dp = c->datt; /* (T, T) */
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            size_t off = (size_t)b * T * D3 + (size_t)h * dh;
            const float *q = c->qkv + off, *k = q + D, *v = q + 2 * D;
            float *dq = c->dqkv + off, *dk = dq + D, *dv = dq + 2 * D;
            const float *att = c->att + ((size_t)b * H + h) * T * T;
            const float *dctx = c->dctx + (size_t)b * T * D + (size_t)h * dh; /* (T, dh), stride D */
            /* dP (T, T) = dctx V^T;  dV (T, dh) += P^T dctx */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, dh, 1.0f, dctx, D, v, D3, 0.0f, dp, T);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, dh, T, 1.0f, att, T, dctx, D, 1.0f, dv, D3);
            /* softmax backward per row: dS = P (dP - sum_j dP_j P_j) */
            for (int i = 0; i < T; i++) {
                const float *pr = att + (size_t)i * T;
                float *dr = dp + (size_t)i * T, dot = 0.0f;
                for (int j = 0; j < T; j++) dot += dr[j] * pr[j];
                for (int j = 0; j < T; j++) dr[j] = pr[j] * (dr[j] - dot);
            }
            /* dQ += dS K / sqrt(dh);  dK += dS^T Q / sqrt(dh) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, dh, T, scale, dp, T, k, D3, 1.0f, dq, D3);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, dh, T, scale, dp, T, q, D3, 1.0f, dk, D3);
        }
    nn_linear_backward(&a->in_proj, p, x, c->dqkv, dx, B * T);
}
