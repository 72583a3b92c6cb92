/* The Reformer's towers head (family "reformer", config "mode": "towers", for benchmark tables): a factorised
 * score of problem p (features x) and configuration c,
 *   u(x) = A_f Gamma_L(... Gamma_1(input(x))) + b_f      the trunk over the problem, a head of width D (tower_dim)
 *   v(c) = W_2 ReLU(W_1 zscore(e(c)) + b_1) + b_2        e(c): the kernel columns' encodings (values, log2,
 *                                                        one-hots), the first pair features; no problem in it
 *   s(p, c) = u(x) . v(c) + w . zscore(slog q(p, c)) + b  q: the remaining pair features (tiles, waste, ratio per
 *                                                        tiled dimension, output tiles, waves, intensity)
 * so a decision computes u once per problem and, per candidate, a dot product of width D and a linear term over a
 * few interaction features; v of a configuration the model knows can be computed once and kept (the exported
 * runtime does), and of any other from its fields. b adds the same to every candidate of a problem: the per-problem
 * softmax ignores it (it gets no gradient), and it changes no ranking.
 * Training is listwise (models/reformer_list.c): per problem, the softmax of its measured candidates' scores against
 * the runtime-ratio labels restricted to them (nn_xent_seg_*), a mini-batch being batch_size problems flattened
 * into their candidates; the problem tower runs once per problem of the batch (its BatchNorm statistics are over
 * those problems), the configuration tower once per candidate. The inputs of both sets (problem inputs,
 * configuration inputs, q) are computed once before the epochs. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/reformer_internal.h"

/* ---- inputs ---- */

/* cin (n_cfg) and q (n_q): the model inputs of one (problem, configuration) pair from its pair features pf */
static void towers_inputs(const reformer *r, const float *pf, float *cin, float *q)
{
    for (int j = 0; j < r->n_cfg; j++) cin[j] = (pf[j] - r->cfg_mean[j]) / r->cfg_std[j];
    for (int j = 0; j < r->n_q; j++) q[j] = (reformer_slog(pf[r->n_cfg + j]) - r->q_mean[j]) / r->q_std[j];
}

/* The configuration's own features lead the pair features (data_codec_config_feature_count): n_cfg is their width,
 * n_q the rest. */
static void towers_widths(reformer *r)
{
    r->n_cfg = data_codec_config_feature_count(r->base.codec);
    r->n_q = data_codec_pair_feature_count(r->base.codec) - r->n_cfg;
}

/* The configuration inputs' z-score and q's (slog, z-score) from the training pairs; sets n_cfg, n_q. */
static int towers_cfg_fit(reformer *r, const model_train_data *d)
{
    const data_select *sel = d->sel;
    const data_codec *codec = r->base.codec;
    const int nf = r->base.n_features, K = sel->n_kernels, nk = data_codec_config_width(codec);
    towers_widths(r);
    const int np = r->n_cfg + r->n_q;
    long total = 0;
    for (int i = 0; i < d->n_train; i++) {
        const float *t = sel->runtime + (size_t)d->train[i] * K;
        for (int k = 0; k < K; k++) total += isfinite(t[k]) != 0;
    }
    /* every stride-th training pair, as the pairs mode fits its pair columns */
    const long stride = total > REFORMER_FIT_PAIRS ? (total + REFORMER_FIT_PAIRS - 1) / REFORMER_FIT_PAIRS : 1;
    const int m = (int)((total + stride - 1) / stride);
    const size_t mm = (size_t)(m ? m : 1);
    float *X = hr_malloc(mm * (size_t)(np ? np : 1) * sizeof *X), *mean = hr_malloc((size_t)(np + 1) * sizeof *mean),
          *sd = hr_malloc((size_t)(np + 1) * sizeof *sd);
    double *pv = hr_malloc((size_t)(data_codec_value_count(codec) + 1) * sizeof *pv);
    int *idx = hr_malloc(mm * sizeof *idx);
    r->cfg_mean = hr_malloc((size_t)(r->n_cfg + 1) * sizeof *r->cfg_mean);
    r->cfg_std = hr_malloc((size_t)(r->n_cfg + 1) * sizeof *r->cfg_std);
    r->q_mean = hr_malloc((size_t)(r->n_q + 1) * sizeof *r->q_mean);
    r->q_std = hr_malloc((size_t)(r->n_q + 1) * sizeof *r->q_std);
    int rc = X && mean && sd && pv && idx && r->cfg_mean && r->cfg_std && r->q_mean && r->q_std ? HR_OK : HR_ENOMEM;
    long seen = 0;
    int e = 0;
    for (int i = 0; !rc && i < d->n_train; i++) {
        const int row = d->train[i];
        const float *t = sel->runtime + (size_t)row * K;
        data_codec_values_of_features(codec, d->X + (size_t)row * nf, pv);
        for (int k = 0; k < K; k++) {
            if (!isfinite(t[k]) || seen++ % stride) continue;
            float *pf = X + (size_t)e++ * np;
            data_codec_pair_features(codec, pv, data_select_config_values(sel) + (size_t)k * nk, pf);
            for (int j = r->n_cfg; j < np; j++) pf[j] = reformer_slog(pf[j]);
        }
    }
    for (int i = 0; !rc && i < m; i++) idx[i] = i;
    if (!rc) {
        data_zscore_fit(X, np, idx, m, mean, sd);
        memcpy(r->cfg_mean, mean, (size_t)r->n_cfg * sizeof *mean);
        memcpy(r->cfg_std, sd, (size_t)r->n_cfg * sizeof *sd);
        memcpy(r->q_mean, mean + r->n_cfg, (size_t)r->n_q * sizeof *mean);
        memcpy(r->q_std, sd + r->n_cfg, (size_t)r->n_q * sizeof *sd);
    }
    free(X);
    free(mean);
    free(sd);
    free(pv);
    free(idx);
    return rc;
}

/* A towers file's own part: the inputs' z-scores (each std positive and finite). */
static int towers_load(hid_t g, reformer *r)
{
    r->app_weight = 0.0f;
    int rc;
    towers_widths(r);
    r->cfg_mean = hr_malloc((size_t)(r->n_cfg + 1) * sizeof *r->cfg_mean);
    r->cfg_std = hr_malloc((size_t)(r->n_cfg + 1) * sizeof *r->cfg_std);
    r->q_mean = hr_malloc((size_t)(r->n_q + 1) * sizeof *r->q_mean);
    r->q_std = hr_malloc((size_t)(r->n_q + 1) * sizeof *r->q_std);
    if (!r->cfg_mean || !r->cfg_std || !r->q_mean || !r->q_std) return HR_ENOMEM;
    rc = hr_h5_read(g, "config_mean", H5T_NATIVE_FLOAT, (size_t)r->n_cfg, 0, r->cfg_mean);
    if (!rc) rc = hr_h5_read(g, "config_std", H5T_NATIVE_FLOAT, (size_t)r->n_cfg, 0, r->cfg_std);
    if (!rc && r->n_q) rc = hr_h5_read(g, "interaction_mean", H5T_NATIVE_FLOAT, (size_t)r->n_q, 0, r->q_mean);
    if (!rc && r->n_q) rc = hr_h5_read(g, "interaction_std", H5T_NATIVE_FLOAT, (size_t)r->n_q, 0, r->q_std);
    for (int j = 0; !rc && j < r->n_cfg + r->n_q; j++) {
        const float m = j < r->n_cfg ? r->cfg_mean[j] : r->q_mean[j - r->n_cfg];
        const float sd = j < r->n_cfg ? r->cfg_std[j] : r->q_std[j - r->n_cfg];
        if (!isfinite(m) || !(sd > 0.0f) || !isfinite(sd))
            rc = hr_error(HR_EFORMAT, "reformer: %s[%d]: mean %g, std %g", j < r->n_cfg ? "config" : "interaction",
                          j < r->n_cfg ? j : j - r->n_cfg, m, sd);
    }
    return rc;
}

static void towers_setup(reformer *r, const reformer_cfg *cfg)
{
    (void)cfg; /* the widths tower_dim and config_hidden come with the options */
    r->app_weight = 0.0f; /* every candidate scored is a configuration asked about: no applicability head */
}

/* The trunk's input over the training rows (their inputs kept for the fit), then the configuration tower's */
static int towers_input_fit(reformer *r, const model_train_data *d, int bins, float **train_in)
{
    int rc = reformer_input_fit(r, d, bins, train_in);
    if (!rc) rc = towers_cfg_fit(r, d);
    return rc;
}

static void towers_layout(reformer *r)
{
    nn_linear_layout(&r->head, &r->p, "head", r->hidden, r->tower_dim);
    nn_linear_layout(&r->cfg1, &r->p, "config.0", r->n_cfg, r->cfg_hidden);
    nn_linear_layout(&r->cfg2, &r->p, "config.1", r->cfg_hidden, r->tower_dim);
    if (r->n_q) nn_linear_layout(&r->inter, &r->p, "interaction", r->n_q, 1);
}

static void towers_reset(reformer *r, hr_rng *rng)
{
    nn_linear_reset(&r->head, &r->p, rng);
    nn_linear_reset(&r->cfg1, &r->p, rng);
    nn_linear_reset(&r->cfg2, &r->p, rng);
    if (r->n_q) nn_linear_reset(&r->inter, &r->p, rng);
}

/* The configuration inputs' and q's statistics (the widths are options, recorded with them) */
static int towers_save(const reformer *r, hid_t g)
{
    int rc = hr_h5_write(g, "config_mean", H5T_NATIVE_FLOAT, (size_t)r->n_cfg, 0, r->cfg_mean);
    if (!rc) rc = hr_h5_write(g, "config_std", H5T_NATIVE_FLOAT, (size_t)r->n_cfg, 0, r->cfg_std);
    if (!rc && r->n_q) rc = hr_h5_write(g, "interaction_mean", H5T_NATIVE_FLOAT, (size_t)r->n_q, 0, r->q_mean);
    if (!rc && r->n_q) rc = hr_h5_write(g, "interaction_std", H5T_NATIVE_FLOAT, (size_t)r->n_q, 0, r->q_std);
    return rc;
}

/* ---- scratch and scores ---- */

static int towers_ws_init(const reformer *r, reformer_ws *w)
{
    const size_t C = REFORMER_PAIR_CHUNK, wide = (size_t)r->hidden + (size_t)r->expand, D = (size_t)r->tower_dim;
    w->buf = hr_calloc((size_t)r->n_in + 2 * wide + D, sizeof *w->buf);
    w->pv = hr_calloc((size_t)(data_codec_value_count(r->base.codec) + 1), sizeof *w->pv);
    w->u = hr_calloc(D, sizeof *w->u);
    w->pf = hr_calloc((size_t)(r->n_cfg + r->n_q + 1), sizeof *w->pf);
    w->cin = hr_calloc(C * (size_t)(r->n_cfg + 1), sizeof *w->cin);
    w->ch = hr_calloc(C * (size_t)r->cfg_hidden, sizeof *w->ch);
    w->cv = hr_calloc(C * D, sizeof *w->cv);
    w->qin = hr_calloc(C * (size_t)(r->n_q + 1), sizeof *w->qin);
    int rc = w->buf && w->pv && w->u && w->pf && w->cin && w->ch && w->cv && w->qin ? HR_OK : HR_ENOMEM;
    for (int l = 0; !rc && r->norm == NN_NORM_LAYER && l < r->depth; l++)
        rc = nn_gamma_cache_init(&w->one[l], &r->blocks[l], 1);
    return rc;
}

/* v (B, D) = W_2 ReLU(W_1 cin + b_1) + b_2 over B configuration inputs; h (B, cfg_hidden) is written */
static void towers_config_forward(const reformer *r, const float *cin, float *h, float *v, int B)
{
    nn_linear_forward(&r->cfg1, &r->p, cin, h, B);
    nn_relu_forward(h, h, (size_t)B * r->cfg_hidden);
    nn_linear_forward(&r->cfg2, &r->p, h, v, B);
}

/* the chunk's inputs: configuration inputs and q of candidates kv (B, n_kernel) for the problem values pv */
static void towers_chunk_inputs(const reformer *r, reformer_ws *w, const double *pv, const double *kv, int B)
{
    const int nk = data_codec_config_width(r->base.codec);
    for (int i = 0; i < B; i++) {
        data_codec_pair_features(r->base.codec, pv, kv + (size_t)i * nk, w->pf);
        towers_inputs(r, w->pf, w->cin + (size_t)i * r->n_cfg, w->qin + (size_t)i * r->n_q);
    }
}

void reformer_towers_config(const reformer *r, reformer_ws *w, const double *kv, int n, float *v)
{
    const int nk = data_codec_config_width(r->base.codec), D = r->tower_dim;
    for (int c0 = 0; c0 < n; c0 += REFORMER_PAIR_CHUNK) {
        const int B = n - c0 < REFORMER_PAIR_CHUNK ? n - c0 : REFORMER_PAIR_CHUNK;
        towers_chunk_inputs(r, w, w->pv, kv + (size_t)c0 * nk, B); /* any problem: e(c) does not read it */
        towers_config_forward(r, w->cin, w->ch, v + (size_t)c0 * D, B);
    }
}

static int towers_candidates(const reformer *r, reformer_ws *w, const float *x, const double *kv, int n,
                             float *scores)
{
    const int nk = data_codec_config_width(r->base.codec), D = r->tower_dim;
    data_codec_values_of_features(r->base.codec, x, w->pv);
    reformer_head_forward1(r, reformer_trunk_forward1(r, w, x), w->u);
    for (int c0 = 0; c0 < n; c0 += REFORMER_PAIR_CHUNK) {
        const int B = n - c0 < REFORMER_PAIR_CHUNK ? n - c0 : REFORMER_PAIR_CHUNK;
        towers_chunk_inputs(r, w, w->pv, kv + (size_t)c0 * nk, B);
        towers_config_forward(r, w->cin, w->ch, w->cv, B);
        if (r->n_q) nn_linear_forward(&r->inter, &r->p, w->qin, scores + c0, B); /* w . q + b */
        else memset(scores + c0, 0, (size_t)B * sizeof *scores);
        cblas_sgemv(CblasRowMajor, CblasNoTrans, B, D, 1.0f, w->cv, D, w->u, 1, 1.0f, scores + c0, 1);
    }
    return HR_OK;
}

/* ---- training: the listwise fit's hooks ---- */

/* Per set, per problem its model inputs and per candidate its configuration inputs and q; per batch, the
 * problem tower's output, the configuration tower's and the interaction term. */
typedef struct towers_own {
    float *pin[2];       /* (n, n_in) the problems' model inputs */
    float *scin[2];      /* (nnz, n_cfg) the entries' configuration inputs */
    float *sqin[2];      /* (nnz, n_q) their interaction inputs */
    float *u, *du;       /* (cap_prob, D) */
    float *cin, *qin;    /* (cap, n_cfg), (cap, n_q) */
    float *h, *dh;       /* (cap, cfg_hidden) */
    float *v, *dv;       /* (cap, D) */
    float *lin;          /* (cap) */
} towers_own;

static void towers_free(reformer_list *f)
{
    towers_own *o = f->own;
    float *bufs[] = {o->pin[0], o->pin[1], o->scin[0], o->scin[1], o->sqin[0], o->sqin[1], o->u, o->du,
                     o->cin,    o->qin,    o->h,       o->dh,       o->v,       o->dv,       o->lin};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    free(o);
    f->own = NULL;
}

/* Set s's inputs; pin, the rows' inputs, is taken over when given, else computed */
static int towers_set_init(reformer_list *f, towers_own *o, int s, float *pin)
{
    const reformer *r = f->r;
    const reformer_cands *c = &f->set[s];
    const model_train_data *d = f->d;
    const data_codec *codec = r->base.codec;
    const int nf = r->base.n_features, ni = r->n_in, nk = data_codec_config_width(codec), nc = r->n_cfg, nq = r->n_q;
    const int n = c->n;
    const int nnz = c->off[n];
    const size_t z = (size_t)(nnz ? nnz : 1), nn = (size_t)(n ? n : 1);
    o->pin[s] = pin;
    float *pf = hr_malloc((size_t)(nc + nq + 1) * sizeof *pf);
    double *pv = hr_malloc((size_t)(data_codec_value_count(codec) + 1) * sizeof *pv);
    o->scin[s] = hr_malloc(z * (size_t)(nc + 1) * sizeof *o->scin[s]);
    o->sqin[s] = hr_malloc(z * (size_t)(nq + 1) * sizeof *o->sqin[s]);
    if (!o->pin[s]) o->pin[s] = hr_malloc(nn * (size_t)ni * sizeof *o->pin[s]);
    int rc = pf && pv && o->scin[s] && o->sqin[s] && o->pin[s] ? HR_OK : HR_ENOMEM;
    for (int i = 0; !rc && i < n; i++) {
        const float *x = d->X + (size_t)c->rows[i] * nf;
        if (!pin) reformer_input(r, x, o->pin[s] + (size_t)i * ni);
        data_codec_values_of_features(codec, x, pv);
        for (int e = c->off[i]; e < c->off[i + 1]; e++) {
            data_codec_pair_features(codec, pv, data_select_config_values(d->sel) + (size_t)c->kern[e] * nk, pf);
            towers_inputs(r, pf, o->scin[s] + (size_t)e * nc, o->sqin[s] + (size_t)e * nq);
        }
    }
    free(pf);
    free(pv);
    return rc;
}

static int towers_init(reformer_list *f, float *train_in)
{
    const reformer *r = f->r;
    towers_own *o = hr_calloc(1, sizeof *o);
    if (!o) {
        free(train_in);
        return HR_ENOMEM;
    }
    f->own = o;
    int rc = towers_set_init(f, o, 0, train_in);
    if (!rc) rc = towers_set_init(f, o, 1, NULL);
    const size_t c = (size_t)f->cap, cp = (size_t)f->cap_prob, D = (size_t)r->tower_dim, H = (size_t)r->cfg_hidden;
    if (!rc && (!(o->u = hr_calloc(cp * D, sizeof(float))) || !(o->du = hr_calloc(cp * D, sizeof(float))) ||
                !(o->cin = hr_calloc(c * (size_t)(r->n_cfg + 1), sizeof(float))) ||
                !(o->qin = hr_calloc(c * (size_t)(r->n_q + 1), sizeof(float))) ||
                !(o->h = hr_calloc(c * H, sizeof(float))) || !(o->dh = hr_calloc(c * H, sizeof(float))) ||
                !(o->v = hr_calloc(c * D, sizeof(float))) || !(o->dv = hr_calloc(c * D, sizeof(float))) ||
                !(o->lin = hr_calloc(c, sizeof(float)))))
        rc = HR_ENOMEM;
    return rc;
}

/* problem inputs act[0], candidate inputs, labels and offsets */
static int towers_gather(reformer_list *f, int set, const int *pos, int n)
{
    const reformer *r = f->r;
    towers_own *o = f->own;
    const reformer_cands *s = &f->set[set];
    const int ni = r->n_in, nc = r->n_cfg, nq = r->n_q;
    HR_ASSERT(n <= f->cap_prob);
    int e = 0;
    f->off[0] = 0;
    for (int i = 0; i < n; i++) {
        const int p = pos[i], a = s->off[p], m = s->off[p + 1] - a;
        HR_ASSERT(e + m <= f->cap);
        memcpy(f->t.act[0] + (size_t)i * ni, o->pin[set] + (size_t)p * ni, (size_t)ni * sizeof(float));
        memcpy(o->cin + (size_t)e * nc, o->scin[set] + (size_t)a * nc, (size_t)m * nc * sizeof(float));
        memcpy(o->qin + (size_t)e * nq, o->sqin[set] + (size_t)a * nq, (size_t)m * nq * sizeof(float));
        memcpy(f->y + e, s->y + a, (size_t)m * sizeof(float));
        e += m;
        f->off[i + 1] = e;
    }
    return e;
}

/* u of the n problems from the trunk, v of the N candidates, their scores */
static void towers_forward(reformer_list *f, int n, int N)
{
    const reformer *r = f->r;
    towers_own *o = f->own;
    nn_linear_forward(&r->head, &r->p, f->t.act[r->depth], o->u, n);
    towers_config_forward(r, o->cin, o->h, o->v, N);
    nn_seg_dot_forward(o->u, o->v, f->off, n, r->tower_dim, f->logit);
    if (r->n_q) {
        nn_linear_forward(&r->inter, &r->p, o->qin, o->lin, N);
        for (int i = 0; i < N; i++) f->logit[i] += o->lin[i];
    }
}

static void towers_backward(reformer_list *f, int n, int N)
{
    reformer *r = f->r;
    towers_own *o = f->own;
    const int L = r->depth, Hd = r->hidden, D = r->tower_dim, H = r->cfg_hidden;
    if (r->n_q) nn_linear_backward(&r->inter, &r->p, o->qin, f->dlogit, NULL, N);
    memset(o->du, 0, (size_t)n * D * sizeof(float));
    memset(o->dv, 0, (size_t)N * D * sizeof(float));
    nn_seg_dot_backward(o->u, o->v, f->off, n, D, f->dlogit, o->du, o->dv);
    /* the configuration tower: dh = dv W_2 through the ReLU (h is its output), then W_1 */
    memset(o->dh, 0, (size_t)N * H * sizeof(float));
    nn_linear_backward(&r->cfg2, &r->p, o->h, o->dv, o->dh, N);
    for (size_t i = 0; i < (size_t)N * H; i++) o->dh[i] = o->h[i] > 0.0f ? o->dh[i] : 0.0f;
    nn_linear_backward(&r->cfg1, &r->p, o->cin, o->dh, NULL, N);
    /* the problem tower's head, down to the trunk's output */
    memset(f->t.dact[L], 0, (size_t)n * Hd * sizeof(float));
    nn_linear_backward(&r->head, &r->p, f->t.act[L], o->du, f->t.dact[L], n);
}

static const reformer_list_head towers_list = {
    .per_problem = 1,
    .init = towers_init,
    .free = towers_free,
    .gather = towers_gather,
    .forward = towers_forward,
    .backward = towers_backward,
};

static int towers_fit(reformer *r, const model_train_data *d, const model_ctx *ctx, const reformer_cfg *cfg,
                      const train_opts *o, float *train_in)
{
    (void)ctx;
    (void)cfg;
    return reformer_list_fit(r, &towers_list, d, o, train_in);
}

const reformer_head reformer_head_towers = {
    .name = "towers",
    .valued = 1,
    .pair_input = 0,
    .setup = towers_setup,
    .input_fit = towers_input_fit,
    .layout = towers_layout,
    .reset = towers_reset,
    .fit = towers_fit,
    .ws_init = towers_ws_init,
    .candidates = towers_candidates,
    .save = towers_save,
    .load = towers_load,
};
