/* Bahdanau (additive) attention, Bahdanau et al. 2015 eq. (6):
 *   e_s = v^T tanh(W_q q + W_k k_s + b_k),  a = softmax_s(e),  ctx = sum_s a_s k_s.
 * The key projection W_k K + b_k depends only on the encoder output, so it is computed once per
 * sequence (nn_attn_additive_keys) and its gradient is accumulated over every decoder step before
 * one GEMM pushes it back into W_k and the keys (nn_attn_additive_keys_backward). */
#include "nn/seq.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

void nn_attn_additive_layout(nn_attn_additive *a, nn_params *p, const char *name, int query, int key,
                             int attn)
{
    HR_ASSERT(query > 0 && key > 0 && attn > 0);
    char buf[64];
    a->query = query;
    a->key = key;
    a->attn = attn;
    snprintf(buf, sizeof buf, "%s.w_q", name);
    a->w_q = nn_params_add(p, buf, (size_t)attn * query);
    snprintf(buf, sizeof buf, "%s.w_k", name);
    a->w_k = nn_params_add(p, buf, (size_t)attn * key);
    snprintf(buf, sizeof buf, "%s.b_k", name);
    a->b_k = nn_params_add(p, buf, (size_t)attn);
    snprintf(buf, sizeof buf, "%s.v", name);
    a->v = nn_params_add(p, buf, (size_t)attn);
}

static void uniform_fill(float *w, size_t n, float bound, hr_rng *rng)
{
    for (size_t i = 0; i < n; i++) w[i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
}

void nn_attn_additive_reset(const nn_attn_additive *a, nn_params *p, hr_rng *rng)
{
    int A = a->attn;
    uniform_fill(p->w + a->w_q, (size_t)A * a->query, 1.0f / sqrtf((float)a->query), rng);
    uniform_fill(p->w + a->w_k, (size_t)A * a->key, 1.0f / sqrtf((float)a->key), rng);
    uniform_fill(p->w + a->b_k, (size_t)A, 1.0f / sqrtf((float)a->key), rng);
    uniform_fill(p->w + a->v, (size_t)A, 1.0f / sqrtf((float)A), rng);
}

void nn_attn_additive_keys(const nn_attn_additive *a, const nn_params *p, int B, int S,
                           const float *keys, float *kproj)
{
    int A = a->attn, Dk = a->key;
    const float *bk = p->w + a->b_k;
    for (size_t r = 0; r < (size_t)B * S; r++) memcpy(kproj + r * A, bk, (size_t)A * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B * S, A, Dk, 1.0f, keys, Dk, p->w + a->w_k,
                Dk, 1.0f, kproj, A);
}

void nn_attn_additive_keys_backward(const nn_attn_additive *a, nn_params *p, int B, int S,
                                    const float *keys, const float *dkproj, float *dkeys)
{
    int A = a->attn, Dk = a->key, rows = B * S;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, A, Dk, rows, 1.0f, dkproj, A, keys, Dk, 1.0f,
                p->dw + a->w_k, Dk);
    float *dbk = p->dw + a->b_k;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < A; j++) dbk[j] += dkproj[(size_t)r * A + j];
    if (dkeys)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, Dk, A, 1.0f, dkproj, A,
                    p->w + a->w_k, Dk, 1.0f, dkeys, Dk);
}

void nn_attn_additive_forward(const nn_attn_additive *a, const nn_params *p, int B, int S,
                              const float *q, const float *keys, const float *kproj,
                              const unsigned char *mask, float *tanh_e, float *w, float *ctx)
{
    int A = a->attn, Dk = a->key, Dq = a->query;
    size_t sa = (size_t)S * A;
    const float *v = p->w + a->v;
    /* q W_q^T lands in row s = 0 of each sequence's tanh_e block; rows are then filled from the
     * last to the first, so row 0 is overwritten (element by element, in place) only at the end. */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, A, Dq, 1.0f, q, Dq, p->w + a->w_q, Dq, 0.0f,
                tanh_e, (int)sa);
    for (int b = 0; b < B; b++) {
        float *eb = tanh_e + b * sa; /* (S, A) */
        const float *kb = kproj + b * sa, *qp = eb;
        float *wb = w + (size_t)b * S; /* (S) */
        const unsigned char *mb = mask ? mask + (size_t)b * S : NULL;
        float mx = -INFINITY;
        for (int s = S - 1; s >= 0; s--) {
            float *e = eb + (size_t)s * A;
            const float *k = kb + (size_t)s * A;
            float score = 0.0f;
            for (int j = 0; j < A; j++) {
                e[j] = tanhf(qp[j] + k[j]);
                score += v[j] * e[j];
            }
            wb[s] = score;
            if ((!mb || mb[s]) && score > mx) mx = score;
        }
        float sum = 0.0f;
        for (int s = 0; s < S; s++) {
            wb[s] = (!mb || mb[s]) ? expf(wb[s] - mx) : 0.0f;
            sum += wb[s];
        }
        float inv = sum > 0.0f ? 1.0f / sum : 0.0f; /* every key masked: a = 0, ctx = 0 */
        float *cb = ctx + (size_t)b * Dk;
        memset(cb, 0, (size_t)Dk * sizeof(float));
        for (int s = 0; s < S; s++) {
            wb[s] *= inv;
            const float *ks = keys + ((size_t)b * S + s) * Dk;
            for (int d = 0; d < Dk; d++) cb[d] += wb[s] * ks[d];
        }
    }
}

void nn_attn_additive_backward(const nn_attn_additive *a, nn_params *p, int B, int S, const float *q,
                               const float *keys, const float *tanh_e, const float *w,
                               const float *dctx, float *scratch, float *dq, float *dkeys,
                               float *dkproj)
{
    int A = a->attn, Dk = a->key, Dq = a->query;
    const float *v = p->w + a->v;
    float *dv = p->dw + a->v;
    for (int b = 0; b < B; b++) {
        const float *wb = w + (size_t)b * S, *dcb = dctx + (size_t)b * Dk;
        const float *kb = keys + (size_t)b * S * Dk;
        float *desum = scratch + (size_t)b * A; /* (A): sum_s dL/d(pre-tanh)_s, the query's share */
        memset(desum, 0, (size_t)A * sizeof(float));
        /* softmax backward: ds_s = a_s (da_s - sum_r a_r da_r) with da_s = dctx . k_s */
        float dot = 0.0f;
        for (int s = 0; s < S; s++) {
            float da = 0.0f;
            for (int d = 0; d < Dk; d++) da += dcb[d] * kb[(size_t)s * Dk + d];
            dot += wb[s] * da;
        }
        for (int s = 0; s < S; s++) {
            const float *ks = kb + (size_t)s * Dk;
            if (dkeys) {
                float *dks = dkeys + ((size_t)b * S + s) * Dk;
                for (int d = 0; d < Dk; d++) dks[d] += wb[s] * dcb[d];
            }
            if (wb[s] == 0.0f) continue; /* masked: no gradient through the score */
            float da = 0.0f;
            for (int d = 0; d < Dk; d++) da += dcb[d] * ks[d];
            float ds = wb[s] * (da - dot);
            const float *e = tanh_e + ((size_t)b * S + s) * A;
            float *dkp = dkproj ? dkproj + ((size_t)b * S + s) * A : NULL;
            for (int j = 0; j < A; j++) {
                float de = ds * v[j] * (1.0f - e[j] * e[j]);
                dv[j] += ds * e[j];
                desum[j] += de;
                if (dkp) dkp[j] += de;
            }
        }
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, A, Dq, B, 1.0f, scratch, A, q, Dq, 1.0f,
                p->dw + a->w_q, Dq);
    if (dq)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, Dq, A, 1.0f, scratch, A, p->w + a->w_q,
                    Dq, 1.0f, dq, Dq);
}
