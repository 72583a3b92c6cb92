/* The Reformer's trunk (models/reformer_internal.h): the parameter block (the L Gamma-blocks, then the head's
 * parameters), its layout, initial values and memory, and the blocks' passes:
 *   x_l = Gamma_l(x_{l-1}), l = 1..L      nn_gamma: A1 x + b1 + A3 T(x) + b3, ReLU, T(x) = ReLU(norm(A2 x + b2))
 * in training over a batch's rows through per-block caches, and in prediction with eval-mode BatchNorm folded
 * into A2 (A2' = diag(g r) A2, b2' = g r (b2 - mu) + beta with r = 1/sqrt(var + eps)) and stacked under A1, so a
 * block is two products over the caller's workspace: matrix-vector for one problem, matrix-matrix for a chunk of
 * candidates. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/reformer_internal.h"

int reformer_build(reformer *r)
{
    const int nf = r->n_in, nf_raw = r->base.n_features;
    nn_params_init(&r->p);
    nn_params_init(&r->state);
    char name[32];
    for (int l = 0; l < r->depth; l++) {
        snprintf(name, sizeof name, "block%d", l);
        nn_gamma_layout(&r->blocks[l], &r->p, &r->state, name, l ? r->hidden : nf, r->expand, r->hidden, r->norm,
                        r->dropout);
    }
    r->mode->layout(r);
    int rc = nn_params_alloc(&r->p);
    if (!rc && r->state.n) rc = nn_params_alloc(&r->state);
    size_t nfold = 0;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        r->fold_off[l] = nfold;
        nfold += (size_t)(g->d_out + g->d_hidden) * (g->d_in + 1) + (size_t)g->d_out * g->d_hidden;
    }
    if (!rc && r->norm == NN_NORM_BATCH && !(r->fold = hr_calloc(nfold, sizeof *r->fold))) rc = HR_ENOMEM;
    if (!rc && r->norm == NN_NORM_BATCH && r->n_ple > 0 && !r->mode->pair_input) {
        const size_t o = (size_t)r->hidden + (size_t)r->expand;
        r->in_fold = hr_malloc(o * (1 + (size_t)nf_raw + 2 * (size_t)r->n_ple) * sizeof *r->in_fold);
        r->ple_group = hr_malloc(((size_t)r->n_ple + 1) * sizeof *r->ple_group);
        if (!r->in_fold || !r->ple_group) rc = HR_ENOMEM;
    }
    return rc;
}

void reformer_reset(reformer *r, hr_rng *rng)
{
    for (int l = 0; l < r->depth; l++) nn_gamma_reset(&r->blocks[l], &r->p, &r->state, rng);
    r->mode->reset(r, rng);
}

/* Folds eval-mode BatchNorm into A2 and stacks [A1; A2'] with biases [b1 + b3; b2'] (then, input "ple", the
 * first block's product over the encoding: reformer_fold_input). */
void reformer_fold(reformer *r)
{
    if (r->norm != NN_NORM_BATCH) return;
    const float *w = r->p.w, *s = r->state.w;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int din = g->d_in, dh = g->d_hidden, dout = g->d_out;
        float *W12 = r->fold + r->fold_off[l];
        float *b12 = W12 + (size_t)(dout + dh) * din;
        float *A3 = b12 + dout + dh;
        memcpy(W12, w + g->a1.w, (size_t)dout * din * sizeof *W12);
        for (int j = 0; j < dout; j++) b12[j] = w[g->a1.b + j] + w[g->a3.b + j];
        for (int j = 0; j < dh; j++) {
            float sc = w[g->bn.gamma + j] / sqrtf(s[g->bn.run_var + j] + g->bn.eps);
            const float *a2 = w + g->a2.w + (size_t)j * din;
            float *dst = W12 + (size_t)(dout + j) * din;
            for (int i = 0; i < din; i++) dst[i] = sc * a2[i];
            b12[dout + j] = sc * (w[g->a2.b + j] - s[g->bn.run_mean + j]) + w[g->bn.beta + j];
        }
        memcpy(A3, w + g->a3.w, (size_t)dout * dh * sizeof *A3);
    }
    reformer_fold_input(r);
}

void reformer_free(model *mb)
{
    reformer *r = (reformer *)mb;
    if (!r) return;
    nn_params_free(&r->p);
    nn_params_free(&r->state);
    free(r->fold);
    free(r->in_fold);
    free(r->ple_group);
    free(r->zmean);
    free(r->zstd);
    free(r->ple_src);
    free(r->ple_lo);
    free(r->ple_hi);
    free(r->cfg_mean);
    free(r->cfg_std);
    free(r->q_mean);
    free(r->q_std);
    model_base_free(&r->base);
    free(r);
}

/* ---- training passes ---- */

void reformer_trunk_bufs_free(reformer_trunk_bufs *t, const reformer *r)
{
    for (int l = 0; l < r->depth; l++) nn_gamma_cache_free(&t->cache[l]);
    for (int l = 0; l <= r->depth; l++) {
        free(t->act[l]);
        free(t->dact[l]);
        t->act[l] = t->dact[l] = NULL;
    }
}

int reformer_trunk_bufs_init(reformer_trunk_bufs *t, const reformer *r, int rows)
{
    memset(t, 0, sizeof *t);
    int rc = HR_OK;
    for (int l = 0; l < r->depth && !rc; l++) rc = nn_gamma_cache_init(&t->cache[l], &r->blocks[l], rows);
    for (int l = 0; l <= r->depth && !rc; l++) {
        const size_t w = l ? (size_t)r->hidden : (size_t)r->n_in;
        if (!(t->act[l] = hr_calloc((size_t)rows * w, sizeof(float)))) rc = HR_ENOMEM;
        if (!rc && l && !(t->dact[l] = hr_calloc((size_t)rows * w, sizeof(float)))) rc = HR_ENOMEM;
    }
    if (rc) reformer_trunk_bufs_free(t, r);
    return rc;
}

void reformer_trunk_forward(reformer *r, nn_gamma_cache *cache, float *const *act, int s0, int n, int train,
                            hr_rng *rng)
{
    const int nf = r->n_in, H = r->hidden;
    for (int l = 0; l < r->depth; l++)
        nn_gamma_forward(&r->blocks[l], &r->p, &r->state, &cache[l],
                         act[l] + (size_t)s0 * (l ? H : nf), act[l + 1] + (size_t)s0 * H, n, train, rng);
}

void reformer_trunk_backward(const reformer *r, nn_params *p, nn_gamma_cache *cache, float *const *act,
                             float *const *dact, int n)
{
    for (int l = r->depth - 1; l >= 0; l--) {
        if (l) memset(dact[l], 0, (size_t)n * r->hidden * sizeof(float));
        nn_gamma_backward(&r->blocks[l], p, &cache[l], act[l], act[l + 1], dact[l + 1], l ? dact[l] : NULL, n);
    }
}

/* ---- prediction ---- */

const float *reformer_trunk_forward1(const reformer *r, reformer_ws *w, const float *x)
{
    const int nf = r->n_in, wide = r->hidden + r->expand;
    float *in = w->buf, *a = w->buf + nf, *b = a + wide;
    if (!r->ple_fast) reformer_input(r, x, in);
    const float *cur = in;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int din = g->d_in, dh = g->d_hidden, dout = g->d_out;
        float *y = l % 2 ? b : a;
        if (r->norm == NN_NORM_BATCH) {
            const float *W12 = r->fold + r->fold_off[l], *b12 = W12 + (size_t)(dout + dh) * din;
            const float *A3 = b12 + dout + dh;
            float *z = y; /* (dout + dh): y's buffer holds z, then y in its first dout entries */
            if (l == 0 && r->ple_fast) {
                reformer_first_product(r, x, in, z);
            } else {
                memcpy(z, b12, (size_t)(dout + dh) * sizeof *z);
                cblas_sgemv(CblasRowMajor, CblasNoTrans, dout + dh, din, 1.0f, W12, din, cur, 1, 1.0f, z, 1);
            }
            float *t = z + dout;
            nn_relu_forward(t, t, (size_t)dh); /* branch-free: half the signs are a coin flip */
            cblas_sgemv(CblasRowMajor, CblasNoTrans, dout, dh, 1.0f, A3, dh, t, 1, 1.0f, z, 1);
            nn_relu_forward(z, y, (size_t)dout);
        } else {
            nn_gamma_forward(g, &r->p, NULL, &w->one[l], cur, y, 1, 0, NULL); /* layer norm: no state */
        }
        cur = y;
    }
    return cur;
}

/* per block, Z = in [A1; A2']^T + [b1 + b3; b2'] (batch norm folded), t = ReLU(Z's last d_hidden columns),
 * y = ReLU(Z's first d_out + t A3^T) */
const float *reformer_trunk_forward_chunk(const reformer *r, reformer_ws *w, int B)
{
    const float *cur = w->in;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int din = g->d_in, dh = g->d_hidden, dout = g->d_out, o = dout + dh;
        float *y = w->y[l % 2];
        if (r->norm == NN_NORM_BATCH) {
            const float *W12 = r->fold + r->fold_off[l], *b12 = W12 + (size_t)o * din, *A3 = b12 + o;
            float *z = w->z;
            for (int i = 0; i < B; i++) memcpy(z + (size_t)i * o, b12, (size_t)o * sizeof *z);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, o, din, 1.0f, cur, din, W12, din, 1.0f, z, o);
            for (int i = 0; i < B; i++) nn_relu_forward(z + (size_t)i * o + dout, z + (size_t)i * o + dout, (size_t)dh);
            /* the first d_out columns of each row += its last d_hidden columns A3^T: disjoint parts of z */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, dout, dh, 1.0f, z + dout, o, A3, dh, 1.0f, z, o);
            for (int i = 0; i < B; i++) nn_relu_forward(z + (size_t)i * o, y + (size_t)i * dout, (size_t)dout);
        } else {
            nn_gamma_forward(g, &r->p, NULL, &w->one[l], cur, y, B, 0, NULL);
        }
        cur = y;
    }
    return cur;
}

void reformer_head_forward1(const reformer *r, const float *cur, float *out)
{
    const int K = r->head.out;
    memcpy(out, r->p.w + r->head.b, (size_t)K * sizeof *out);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, K, r->hidden, 1.0f, r->p.w + r->head.w, r->hidden, cur, 1, 1.0f, out, 1);
}
