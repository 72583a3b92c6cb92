/* The Reformer (family "reformer", task select), after the Reformer paper (sec. 2 and 4):
 *   x0 = (x - mean) / std                        z-score fitted on the training rows, stored in the model
 *   x_l = Gamma_l(x_{l-1}), l = 1..L             Gamma-blocks (nn_gamma: A1 x + b1 + A3 T(x) + b3, ReLU)
 *   z = A_f x_L + b_f                            linear head; softmax(z) is the kernel distribution
 *   a = A_a x_L + b_a                            applicability head: sigmoid(a_k) = P(kernel k is measured)
 *   scores_k = log softmax(z)_k + log sigmoid(a_k)
 * trained with soft-target cross-entropy H(p, softmax(z)) against runtime-ratio labels p_k ~ 1/t_k (or
 * one-hot / softmax labels) plus lambda times the per-kernel binary cross-entropy of a against the 0/1
 * "was kernel k measured for this problem" mask, through the shared loop of train/. The second head is
 * ours, not the paper's: a problem has 1-4 measured kernels of ~70, and a softmax trained on ratio labels
 * spreads mass over kernels that do not apply; choosing one of those scores efficiency 0. lambda = 0 drops
 * the head (the paper's model, scores = z). With app_target "efficiency" the head's BCE target is
 * t_min / t_k (0 where unmeasured), so sigmoid(a_k) estimates the expected efficiency of picking k, and
 * combine "head" ranks by it alone (see reformer_combine).
 * With input "ple" (models/reformer_input.c) the z-scored slog features are followed by their piecewise-linear
 * encoding (after Gorishniy et al., "On Embeddings for Numerical Features in Tabular Deep Learning", 2022): per
 * feature, B bins between quantiles of the training rows, column t = clamp((v - e_t) / (e_{t+1} - e_t), 0, 1),
 * also z-scored. A ReLU network then sees where a size sits between the values the data has (a channel count of
 * 64 vs 96, a batch of 1) as separate inputs instead of one slope, which is what trees get from their splits.
 * Single-problem prediction allocates nothing: eval-mode BatchNorm is folded into A2 (A2' = diag(g r) A2,
 * b2' = g r (b2 - mu) + beta with r = 1/sqrt(var + eps)) and stacked under A1, so a block is two
 * matrix-vector products over the caller's workspace (reformer_ws, one per thread; the model is only read).
 * On a benchmark table, mode "pairs" (the default there) replaces the head over the kernel vocabulary by one
 * score per (problem, configuration) from the problem's and the pair's features: models/reformer_pairs.c.
 * This file holds the model, its inference and its files; models/reformer_train.c trains it.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/table.h"
#include "models/model.h"
#include "nn/nn.h"

#include "models/reformer_internal.h"

const char *const reformer_combine_names[] = {"product", "mask", "head", NULL};
const char *const reformer_norm_names[] = {"batch", "layer", NULL};
const int reformer_norm_values[] = {NN_NORM_BATCH, NN_NORM_LAYER};

int reformer_parse_combine(const char *s, int *out)
{
    for (int i = 0; reformer_combine_names[i]; i++)
        if (!strcmp(s, reformer_combine_names[i])) {
            *out = i;
            return HR_OK;
        }
    return hr_error(HR_EINVAL, "combine '%s': expected product, mask or head", s);
}

int reformer_parse_norm(const char *s, nn_norm_kind *k)
{
    for (int i = 0; reformer_norm_names[i]; i++)
        if (!strcmp(s, reformer_norm_names[i])) {
            *k = (nn_norm_kind)reformer_norm_values[i];
            return HR_OK;
        }
    return hr_error(HR_EINVAL, "norm '%s': expected batch or layer", s);
}

/* ---- layout and inference ---- */

/* Lays out blocks and head, allocates parameters and the folded inference weights. */
int reformer_build(reformer *r)
{
    const int nf = r->n_in, nf_raw = r->base.n_features, K = r->base.n_kernels;
    nn_params_init(&r->p);
    nn_params_init(&r->state);
    char name[32];
    for (int l = 0; l < r->depth; l++) {
        snprintf(name, sizeof name, "block%d", l);
        nn_gamma_layout(&r->blocks[l], &r->p, &r->state, name, l ? r->hidden : nf, r->expand, r->hidden, r->norm,
                        r->dropout);
    }
    nn_linear_layout(&r->head, &r->p, "head", r->hidden, r->towers ? r->tower_dim : r->pairs ? 1 : K);
    if (r->towers) {
        nn_linear_layout(&r->cfg1, &r->p, "config.0", r->n_cfg, r->cfg_hidden);
        nn_linear_layout(&r->cfg2, &r->p, "config.1", r->cfg_hidden, r->tower_dim);
        if (r->n_q) nn_linear_layout(&r->inter, &r->p, "interaction", r->n_q, 1);
    }
    if (r->app_weight > 0.0f && !r->pairs) nn_linear_layout(&r->app, &r->p, "app", r->hidden, K);
    int rc = nn_params_alloc(&r->p);
    if (!rc && r->state.n) rc = nn_params_alloc(&r->state);
    size_t nfold = 0;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        r->fold_off[l] = nfold;
        nfold += (size_t)(g->d_out + g->d_hidden) * (g->d_in + 1) + (size_t)g->d_out * g->d_hidden;
    }
    if (!rc && r->norm == NN_NORM_BATCH && !(r->fold = hr_calloc(nfold, sizeof *r->fold))) rc = HR_ENOMEM;
    if (!rc && r->norm == NN_NORM_BATCH && r->n_ple > 0 && !r->pairs) {
        const size_t o = (size_t)r->hidden + (size_t)r->expand;
        r->in_fold = hr_malloc(o * (1 + (size_t)nf_raw + 2 * (size_t)r->n_ple) * sizeof *r->in_fold);
        r->ple_group = hr_malloc(((size_t)r->n_ple + 1) * sizeof *r->ple_group);
        if (!r->in_fold || !r->ple_group) rc = HR_ENOMEM;
    }
    return rc;
}

static void reformer_ws_free(void *vws)
{
    reformer_ws *w = vws;
    if (!w) return;
    for (int l = 0; l < REFORMER_MAX_DEPTH; l++) nn_gamma_cache_free(&w->one[l]);
    free(w->buf);
    free(w->pv);
    free(w->in);
    free(w->z);
    free(w->y[0]);
    free(w->y[1]);
    free(w->u);
    free(w->pf);
    free(w->cin);
    free(w->ch);
    free(w->cv);
    free(w->qin);
    free(w);
}

static int reformer_ws_create(const model *mb, void **out)
{
    const reformer *r = (const reformer *)mb;
    *out = NULL;
    reformer_ws *w = hr_calloc(1, sizeof *w);
    if (!w) return HR_ENOMEM;
    const size_t wide = (size_t)r->hidden + (size_t)r->expand;
    int rc;
    if (r->pairs) {
        rc = reformer_pairs_ws_init(r, w);
    } else if (r->towers) {
        rc = reformer_towers_ws_init(r, w);
    } else {
        rc = (w->buf = hr_calloc((size_t)r->n_in + 2 * wide + (size_t)r->base.n_kernels, sizeof *w->buf)) ? HR_OK
                                                                                                          : HR_ENOMEM;
        for (int l = 0; !rc && r->norm == NN_NORM_LAYER && l < r->depth; l++)
            rc = nn_gamma_cache_init(&w->one[l], &r->blocks[l], 1);
    }
    if (rc) {
        reformer_ws_free(w);
        return rc;
    }
    *out = w;
    return HR_OK;
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

/* scores (K) in place over z: product: log softmax(z) + beta log sigmoid(a), the log of P(fastest) P(measured)^beta;
 * mask: log softmax(z) - 1000 [sigmoid(a) < 1/2] (the head only vetoes; an all-vetoed row keeps the softmax
 * order); head: log sigmoid(a). */
void reformer_combine_heads(float *z, const float *a, int K, int how, float beta)
{
    if (how == REFORMER_COMBINE_HEAD) {
        for (int k = 0; k < K; k++) z[k] = nn_log_sigmoid(a[k]);
        return;
    }
    const int mask = how == REFORMER_COMBINE_MASK;
    float mx = z[0];
    for (int k = 1; k < K; k++) mx = z[k] > mx ? z[k] : mx;
    float s = 0.0f;
    for (int k = 0; k < K; k++) s += expf(z[k] - mx);
    const float lse = mx + logf(s);
    for (int k = 0; k < K; k++)
        z[k] = z[k] - lse + (mask ? (a[k] < 0.0f ? -1000.0f : 0.0f) : beta * nn_log_sigmoid(a[k]));
}

/* The last block's output (hidden) of the problem with features x, in w's buffer: the blocks over the input,
 * batch norm folded (two matrix-vector products a block) or layer norm through a B = 1 cache. */
static const float *reformer_blocks_forward(const reformer *r, reformer_ws *w, const float *x)
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

/* out (head width) = the head over the last block's output */
static void reformer_head_forward(const reformer *r, const float *cur, float *out)
{
    const int K = r->head.out;
    memcpy(out, r->p.w + r->head.b, (size_t)K * sizeof *out);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, K, r->hidden, 1.0f, r->p.w + r->head.w, r->hidden, cur, 1, 1.0f, out, 1);
}

void reformer_problem_forward(const reformer *r, reformer_ws *w, const float *x, float *u)
{
    reformer_head_forward(r, reformer_blocks_forward(r, w, x), u);
}

static int reformer_predict(const model *mb, void *vws, const data_problem *prob, const float *x, float *scores)
{
    const reformer *r = (const reformer *)mb;
    reformer_ws *w = vws;
    (void)prob;
    if (r->pairs) return reformer_pairs_predict_candidates(mb, vws, x, mb->kernel_values, mb->n_kernels, scores);
    if (r->towers) return reformer_towers_predict_candidates(mb, vws, x, mb->kernel_values, mb->n_kernels, scores);
    const float *cur = reformer_blocks_forward(r, w, x);
    reformer_head_forward(r, cur, scores);
    if (r->app_weight > 0.0f) {
        const int K = r->base.n_kernels, wide = r->hidden + r->expand;
        float *app = w->buf + r->n_in + 2 * wide;
        memcpy(app, r->p.w + r->app.b, (size_t)K * sizeof *app);
        cblas_sgemv(CblasRowMajor, CblasNoTrans, K, r->hidden, 1.0f, r->p.w + r->app.w, r->hidden, cur, 1, 1.0f,
                    app, 1);
        reformer_combine_heads(scores, app, K, r->app_combine, r->app_beta);
    }
    return HR_OK;
}

/* A table model's candidates: pairs and towers modes score their fields; classes mode scores its vocabulary,
 * which model_predict_candidates maps them to by name. */
static int reformer_candidates(const model *mb, void *vws, const float *x, const double *kv, int n, float *scores)
{
    if (((const reformer *)mb)->towers) return reformer_towers_predict_candidates(mb, vws, x, kv, n, scores);
    if (!((const reformer *)mb)->pairs) return MODEL_CANDIDATES_BY_NAME;
    return reformer_pairs_predict_candidates(mb, vws, x, kv, n, scores);
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

/* ---- files ---- */

static const char *norm_name(nn_norm_kind k)
{
    return k == NN_NORM_BATCH ? "batch" : "layer";
}

static int reformer_save(const model *mb, hid_t g)
{
    const reformer *r = (const reformer *)mb;
    int rc = hr_h5_attr_write_int(g, "reformer_version", REFORMER_VERSION);
    if (!rc) rc = hr_h5_attr_write_int(g, "depth", r->depth);
    if (!rc) rc = hr_h5_attr_write_int(g, "hidden", r->hidden);
    if (!rc) rc = hr_h5_attr_write_int(g, "expand", r->expand);
    if (!rc) rc = hr_h5_attr_write_str(g, "norm", norm_name(r->norm));
    if (!rc) rc = hr_h5_attr_write_double(g, "dropout", r->dropout);
    if (!rc) rc = hr_h5_attr_write_str(g, "label", data_label_kind_name(r->label));
    if (!rc) rc = hr_h5_attr_write_double(g, "tau", r->tau);
    if (!rc) rc = hr_h5_attr_write_str(g, "input", r->n_ple ? "ple" : r->input_log ? "log" : "zscore");
    if (!rc) rc = hr_h5_attr_write_str(g, "mode", r->towers ? "towers" : r->pairs ? "pairs" : "classes");
    if (!rc && r->towers) rc = hr_h5_attr_write_int(g, "tower_dim", r->tower_dim);
    if (!rc && r->towers) rc = hr_h5_attr_write_int(g, "config_hidden", r->cfg_hidden);
    if (!rc && r->towers) rc = hr_h5_write(g, "config_mean", H5T_NATIVE_FLOAT, (size_t)r->n_cfg, 0, r->cfg_mean);
    if (!rc && r->towers) rc = hr_h5_write(g, "config_std", H5T_NATIVE_FLOAT, (size_t)r->n_cfg, 0, r->cfg_std);
    if (!rc && r->towers && r->n_q) rc = hr_h5_write(g, "interaction_mean", H5T_NATIVE_FLOAT, (size_t)r->n_q, 0, r->q_mean);
    if (!rc && r->towers && r->n_q) rc = hr_h5_write(g, "interaction_std", H5T_NATIVE_FLOAT, (size_t)r->n_q, 0, r->q_std);
    if (!rc) rc = hr_h5_attr_write_double(g, "applicability", r->app_weight);
    if (!rc) rc = hr_h5_attr_write_str(g, "combine", reformer_combine_names[r->app_combine]);
    if (!rc) rc = hr_h5_attr_write_str(g, "app_target", r->app_eff ? "efficiency" : "measured");
    if (!rc) rc = hr_h5_attr_write_double(g, "combine_weight", r->app_beta);
    if (!rc) rc = hr_h5_write(g, "zscore_mean", H5T_NATIVE_FLOAT, (size_t)r->n_in, 0, r->zmean);
    if (!rc) rc = hr_h5_write(g, "zscore_std", H5T_NATIVE_FLOAT, (size_t)r->n_in, 0, r->zstd);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_feature", H5T_NATIVE_INT, (size_t)r->n_ple, 0, r->ple_src);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_lo", H5T_NATIVE_FLOAT, (size_t)r->n_ple, 0, r->ple_lo);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_hi", H5T_NATIVE_FLOAT, (size_t)r->n_ple, 0, r->ple_hi);
    if (!rc) rc = nn_checkpoint_write(g, "params", &r->p, NULL);
    if (!rc && r->state.n_views) rc = nn_checkpoint_write(g, "state", &r->state, NULL);
    return rc;
}

/* The encoding's bins of a "ple" file, checked: every column names a feature, its bin has lo < hi */
static int reformer_ple_load(hid_t g, reformer *r)
{
    size_t n = 0, cols = 0;
    int rc = hr_h5_shape(g, "ple_feature", &n, &cols);
    if (!rc && (n < 1 || n > (size_t)r->n_raw * 4096 || cols != 0))
        rc = hr_error(HR_EFORMAT, "reformer: ple_feature: %zu entries", n);
    if (!rc && (!(r->ple_src = hr_malloc(n * sizeof *r->ple_src)) || !(r->ple_lo = hr_malloc(n * sizeof *r->ple_lo)) ||
                !(r->ple_hi = hr_malloc(n * sizeof *r->ple_hi))))
        rc = HR_ENOMEM;
    if (!rc) rc = hr_h5_read(g, "ple_feature", H5T_NATIVE_INT, n, 0, r->ple_src);
    if (!rc) rc = hr_h5_read(g, "ple_lo", H5T_NATIVE_FLOAT, n, 0, r->ple_lo);
    if (!rc) rc = hr_h5_read(g, "ple_hi", H5T_NATIVE_FLOAT, n, 0, r->ple_hi);
    for (size_t c = 0; !rc && c < n; c++) {
        if (r->ple_src[c] < 0 || r->ple_src[c] >= r->n_raw)
            rc = hr_error(HR_EFORMAT, "reformer: ple_feature[%zu] = %d: not a feature", c, r->ple_src[c]);
        else if (!(r->ple_lo[c] < r->ple_hi[c]) || !isfinite(r->ple_lo[c]) || !isfinite(r->ple_hi[c]))
            rc = hr_error(HR_EFORMAT, "reformer: ple bin %zu: [%g, %g] is not an interval", c, r->ple_lo[c],
                          r->ple_hi[c]);
    }
    if (!rc) r->n_ple = (int)n;
    return rc;
}

static int reformer_load(hid_t g, model *base, model **out)
{
    *out = NULL;
    reformer *r = hr_calloc(1, sizeof *r);
    if (!r) return HR_ENOMEM;
    r->base = *base;
    int version = 0, rc = hr_h5_attr_read_int_in(g, "reformer", "reformer_version", 0, 1 << 30, &version);
    if (!rc && version > REFORMER_VERSION)
        rc = hr_error(HR_EVERSION, "reformer content version %d is newer than this heurist's %d", version,
                      REFORMER_VERSION);
    if (!rc && r->base.task != MODEL_TASK_SELECT) rc = hr_error(HR_EFORMAT, "reformer: task must be select");
    if (!rc) rc = hr_h5_attr_read_int_in(g, "reformer", "depth", 1, REFORMER_MAX_DEPTH, &r->depth);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "reformer", "hidden", 1, 8192, &r->hidden);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "reformer", "expand", 1, 8192, &r->expand);
    char *s = NULL;
    if (!rc) rc = hr_h5_attr_read_str(g, "norm", &s);
    if (!rc) rc = reformer_parse_norm(s, &r->norm);
    free(s);
    s = NULL;
    if (!rc) rc = hr_h5_attr_read_str(g, "label", &s);
    if (!rc && data_label_kind_parse(s, &r->label)) rc = hr_error(HR_EFORMAT, "reformer: unknown label '%s'", s);
    free(s);
    s = NULL;
    double v = 0;
    if (!rc) rc = hr_h5_attr_read_double(g, "dropout", &v);
    r->dropout = (float)v;
    if (!rc) rc = hr_h5_attr_read_double(g, "tau", &v);
    r->tau = (float)v;
    if (!rc) rc = hr_h5_attr_read_str(g, "input", &s);
    if (!rc && strcmp(s, "log") && strcmp(s, "zscore") && strcmp(s, "ple"))
        rc = hr_error(HR_EFORMAT, "reformer: unknown input '%s'", s);
    const int ple = !rc && strcmp(s, "ple") == 0;
    if (!rc) r->input_log = strcmp(s, "zscore") != 0;
    free(s);
    /* version 1 files predate the applicability head */
    if (!rc && version >= 2) rc = hr_h5_attr_read_double(g, "applicability", &v);
    r->app_weight = !rc && version >= 2 ? (float)v : 0.0f;
    if (!rc && !(r->app_weight >= 0.0f)) rc = hr_error(HR_EFORMAT, "reformer: applicability %g < 0", v);
    s = NULL;
    if (!rc && version >= 2) rc = hr_h5_attr_read_str(g, "combine", &s);
    if (!rc && s && reformer_parse_combine(s, &r->app_combine)) rc = HR_EFORMAT; /* the message names the value */
    free(s);
    s = NULL;
    if (!rc && version >= 2 && hr_h5_attr_exists(g, "app_target") > 0)
        rc = hr_h5_attr_read_str(g, "app_target", &s);
    if (!rc && s && strcmp(s, "measured") && strcmp(s, "efficiency"))
        rc = hr_error(HR_EFORMAT, "reformer: unknown app_target '%s'", s);
    r->app_eff = s && !strcmp(s, "efficiency");
    free(s);
    v = 1.0;
    if (!rc && version >= 2 && hr_h5_attr_exists(g, "combine_weight") > 0)
        rc = hr_h5_attr_read_double(g, "combine_weight", &v);
    r->app_beta = (float)v;
    if (!rc && !(r->app_beta >= 0.0f)) rc = hr_error(HR_EFORMAT, "reformer: combine_weight %g < 0", v);
    /* files before version 4 are classes mode */
    s = NULL;
    if (!rc && version >= 4) rc = hr_h5_attr_read_str(g, "mode", &s);
    if (!rc && s && strcmp(s, "classes") && strcmp(s, "pairs") && strcmp(s, "towers"))
        rc = hr_error(HR_EFORMAT, "reformer: unknown mode '%s'", s);
    r->pairs = !rc && s && !strcmp(s, "pairs");
    r->towers = !rc && s && !strcmp(s, "towers");
    free(s);
    if (!rc && (r->pairs || r->towers) && !r->base.table)
        rc = hr_error(HR_EFORMAT, "reformer: a %s-mode model without its table's schema", r->pairs ? "pairs" : "towers");
    if (!rc && (r->pairs || r->towers) && !r->base.kernel_values)
        rc = hr_error(HR_EFORMAT, "reformer: a %s-mode model without its configurations' values",
                      r->pairs ? "pairs" : "towers");
    if (!rc && r->towers) rc = reformer_towers_load(g, r);
    if (!rc && r->pairs) {
        r->n_pair = data_table_pair_feature_count(r->base.table);
        r->app_weight = 0.0f;
    }
    r->n_raw = r->base.n_features + r->n_pair;
    if (!rc && ple) rc = reformer_ple_load(g, r);
    r->n_in = r->n_raw + r->n_ple;
    const size_t ni = (size_t)r->n_in;
    if (!rc && (!(r->zmean = hr_malloc(ni * sizeof *r->zmean)) || !(r->zstd = hr_malloc(ni * sizeof *r->zstd))))
        rc = HR_ENOMEM;
    if (!rc) rc = hr_h5_read(g, "zscore_mean", H5T_NATIVE_FLOAT, ni, 0, r->zmean);
    if (!rc) rc = hr_h5_read(g, "zscore_std", H5T_NATIVE_FLOAT, ni, 0, r->zstd);
    if (!rc) rc = reformer_build(r);
    if (!rc) rc = nn_checkpoint_read(g, "params", &r->p, NULL);
    if (!rc && r->state.n_views) rc = nn_checkpoint_read(g, "state", &r->state, NULL);
    if (rc) {
        memset(&r->base, 0, sizeof r->base); /* still owned by the caller */
        reformer_free(&r->base);
        return rc;
    }
    reformer_fold(r);
    *out = &r->base;
    return HR_OK;
}

static long reformer_n_params(const model *mb)
{
    return (long)((const reformer *)mb)->p.n;
}

const model_family model_family_reformer = {
    .name = "reformer",
    .tasks = MODEL_TASK_SELECT,
    .train = reformer_train,
    .train_blas_threads = reformer_train_blas_threads,
    .ws_create = reformer_ws_create,
    .ws_free = reformer_ws_free,
    .predict_select = reformer_predict,
    .predict_candidates = reformer_candidates,
    .save = reformer_save,
    .load = reformer_load,
    .n_params = reformer_n_params,
    .free = reformer_free,
    .config_options = reformer_config_options,
};
