/* Bahdanau (additive) attention, Bahdanau et al. 2015 eq. (6):
 *   e_s = v^T tanh(W_q q + W_k k_s + b_k),  a = softmax_s(e),  ctx = sum_s a_s k_s.
 * The key projection W_k K + b_k depends only on the encoder output, so it is computed once per
 * sequence (nn_attn_additive_keys) and its gradient is accumulated over every decoder step before
 * one GEMM pushes it back into W_k and the keys (nn_attn_additive_keys_backward). */
/* Pointwise loops here run over nn_tanh_fast; let GCC vectorise them at -O2 (no FP traps are used). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic")
#endif
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

NN_SEQ_CLONES
void nn_attn_additive_forward(const nn_attn_additive *a, const nn_params *p, const float *w_q_t, int B,
                              int S, const float *q, const float *keys, const float *kproj,
                              const unsigned char *mask, float *tanh_e, float *w, float *ctx)
{
    int A = a->attn, Dk = a->key, Dq = a->query;
    size_t sa = (size_t)S * A;
    /* q W_q^T lands in row s = 0 of each sequence's tanh_e block; rows are then filled from the
     * last to the first, so row 0 is overwritten (element by element, in place) only at the end. */
    if (w_q_t)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, A, Dq, 1.0f, q, Dq, w_q_t, A, 0.0f,
                    tanh_e, (int)sa);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, A, Dq, 1.0f, q, Dq, p->w + a->w_q, Dq,
                    0.0f, tanh_e, (int)sa);
    for (int b = 0; b < B; b++) {
        float *eb = tanh_e + b * sa; /* (S, A) */
        const float *kb = kproj + b * sa, *qp = eb;
        for (int s = S - 1; s >= 0; s--) {
            float *e = eb + (size_t)s * A;
            const float *k = kb + (size_t)s * A;
            for (int j = 0; j < A; j++) e[j] = nn_tanh_fast(qp[j] + k[j]);
        }
    }
    /* scores e_s = tanh_e[b, s] . v for all B*S rows at once */
    cblas_sgemv(CblasRowMajor, CblasNoTrans, B * S, A, 1.0f, tanh_e, A, p->w + a->v, 1, 0.0f, w, 1);
    for (int b = 0; b < B; b++) {
        float *wb = w + (size_t)b * S; /* (S) */
        const unsigned char *mb = mask ? mask + (size_t)b * S : NULL;
        float mx = -INFINITY;
        for (int s = 0; s < S; s++)
            if ((!mb || mb[s]) && wb[s] > mx) mx = wb[s];
        float sum = 0.0f;
        for (int s = 0; s < S; s++) {
            wb[s] = (!mb || mb[s]) ? expf(wb[s] - mx) : 0.0f;
            sum += wb[s];
        }
        float inv = sum > 0.0f ? 1.0f / sum : 0.0f; /* every key masked: a = 0, ctx = 0 */
        float *cb = ctx + (size_t)b * Dk;
        memset(cb, 0, (size_t)Dk * sizeof(float));
        for (int s = 0; s < S; s++) {
            float ws = wb[s] *= inv;
            const float *ks = keys + ((size_t)b * S + s) * Dk;
            for (int d = 0; d < Dk; d++) cb[d] += ws * ks[d];
        }
    }
}

NN_SEQ_CLONES
void nn_attn_additive_backward(const nn_attn_additive *a, nn_params *p, int B, int S, const float *q,
                               const float *keys, const float *tanh_e, const float *w,
                               const float *dctx, float *scratch, float *dq, float *dkeys,
                               float *dkproj)
{
    int A = a->attn, Dk = a->key, Dq = a->query;
    const float *v = p->w + a->v;
    float *dv = p->dw + a->v;
    float *desum_all = scratch;                   /* (B, A): sum_s dL/d(pre-tanh)_s, the query's share */
    float *da = scratch + (size_t)B * A;          /* (S): dL/da_s = dctx . k_s for the current row */
    for (int b = 0; b < B; b++) {
        const float *wb = w + (size_t)b * S, *dcb = dctx + (size_t)b * Dk;
        const float *kb = keys + (size_t)b * S * Dk;
        float *desum = desum_all + (size_t)b * A;
        memset(desum, 0, (size_t)A * sizeof(float));
        cblas_sgemv(CblasRowMajor, CblasNoTrans, S, Dk, 1.0f, kb, Dk, dcb, 1, 0.0f, da, 1);
        /* softmax backward: ds_s = a_s (da_s - sum_r a_r da_r) */
        float dot = 0.0f;
        for (int s = 0; s < S; s++) dot += wb[s] * da[s];
        for (int s = 0; s < S; s++) {
            float ws = wb[s];
            if (dkeys) {
                float *dks = dkeys + ((size_t)b * S + s) * Dk;
                for (int d = 0; d < Dk; d++) dks[d] += ws * dcb[d];
            }
            if (ws == 0.0f) continue; /* masked: no gradient through the score */
            float ds = ws * (da[s] - dot);
            const float *e = tanh_e + ((size_t)b * S + s) * A;
            for (int j = 0; j < A; j++) {
                float de = ds * v[j] * (1.0f - e[j] * e[j]);
                dv[j] += ds * e[j];
                desum[j] += de;
            }
            if (dkproj) {
                float *dkp = dkproj + ((size_t)b * S + s) * A;
                for (int j = 0; j < A; j++) dkp[j] += ds * v[j] * (1.0f - e[j] * e[j]);
            }
        }
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, A, Dq, B, 1.0f, desum_all, A, q, Dq, 1.0f,
                p->dw + a->w_q, Dq);
    if (dq)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, Dq, A, 1.0f, desum_all, A,
                    p->w + a->w_q, Dq, 1.0f, dq, Dq);
}
