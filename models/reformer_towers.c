/* The Reformer's towers mode (family "reformer", config "mode": "towers", for benchmark tables): a factorised
 * score of problem p (features x) and configuration c,
 *   u(x) = A_f Gamma_L(... Gamma_1(input(x))) + b_f      the classes mode's network, a head of width D (tower_dim)
 *   v(c) = W_2 ReLU(W_1 zscore(e(c)) + b_1) + b_2        e(c): the kernel columns' encodings (values, log2,
 *                                                        one-hots), the first pair features; no problem in it
 *   s(p, c) = u(x) . v(c) + w . zscore(slog q(p, c)) + b  q: the remaining pair features (tiles, waste, ratio per
 *                                                        tiled dimension, output tiles, waves, intensity)
 * so a decision computes u once per problem and, per candidate, a dot product of width D and a linear term over a
 * few interaction features; v of a configuration the model knows can be computed once and kept (the exported
 * runtime does), and of any other from its fields. b adds the same to every candidate of a problem: the per-problem
 * softmax ignores it (it gets no gradient), and it changes no ranking.
 * Training is the pairs mode's (models/reformer_pairs.c): per problem, the softmax of its measured candidates'
 * scores against the runtime-ratio labels restricted to them (nn_xent_seg_*), a mini-batch being batch_size problems
 * flattened into their candidates; the problem tower runs once per problem of the batch (its BatchNorm statistics
 * are over those problems), the configuration tower once per candidate. The inputs of both sets (problem inputs,
 * configuration inputs, q) are computed once before the epochs. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/table.h"
#include "models/model.h"
#include "nn/nn.h"
#include "train/train.h"

#include "models/reformer_internal.h"

/* ---- inputs ---- */

void reformer_towers_inputs(const reformer *r, const float *pf, float *cin, float *q)
{
    for (int j = 0; j < r->n_cfg; j++) cin[j] = (pf[j] - r->cfg_mean[j]) / r->cfg_std[j];
    for (int j = 0; j < r->n_q; j++) q[j] = (reformer_slog(pf[r->n_cfg + j]) - r->q_mean[j]) / r->q_std[j];
}

/* The kernel columns' encodings lead the pair features (data/table.h): n_cfg is their width, n_q the rest. */
static void towers_widths(reformer *r)
{
    const data_table_spec *s = r->base.table;
    r->n_cfg = 0;
    for (int k = 0; k < s->n_kernel; k++) r->n_cfg += s->kernel[k].categorical ? s->kernel[k].n_vocab : 2;
    r->n_q = data_table_pair_feature_count(s) - r->n_cfg;
}

int reformer_towers_input_fit(reformer *r, const model_train_data *d)
{
    const data_select *sel = d->sel;
    const data_table_spec *spec = r->base.table;
    const int nf = r->base.n_features, K = sel->n_kernels, nk = spec->n_kernel;
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
    double *pv = hr_malloc((size_t)(spec->n_problem + spec->n_hardware + 1) * sizeof *pv);
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
        data_table_problem_values(spec, d->X + (size_t)row * nf, pv);
        for (int k = 0; k < K; k++) {
            if (!isfinite(t[k]) || seen++ % stride) continue;
            float *pf = X + (size_t)e++ * np;
            data_table_pair_features(spec, pv, sel->table->kv + (size_t)k * nk, pf);
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

/* A towers file's own part: the widths, and the inputs' z-scores (each std positive and finite). */
int reformer_towers_load(hid_t g, reformer *r)
{
    r->app_weight = 0.0f;
    int rc = hr_h5_attr_read_int_in(g, "reformer", "tower_dim", 1, 8192, &r->tower_dim);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "reformer", "config_hidden", 1, 8192, &r->cfg_hidden);
    if (rc) return rc;
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

/* ---- scratch and scores ---- */

int reformer_towers_ws_init(const reformer *r, reformer_ws *w)
{
    const data_table_spec *s = r->base.table;
    const size_t C = REFORMER_PAIR_CHUNK, wide = (size_t)r->hidden + (size_t)r->expand, D = (size_t)r->tower_dim;
    w->buf = hr_calloc((size_t)r->n_in + 2 * wide + D, sizeof *w->buf);
    w->pv = hr_calloc((size_t)(s->n_problem + s->n_hardware + 1), sizeof *w->pv);
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
    const int nk = r->base.table->n_kernel;
    for (int i = 0; i < B; i++) {
        data_table_pair_features(r->base.table, pv, kv + (size_t)i * nk, w->pf);
        reformer_towers_inputs(r, w->pf, w->cin + (size_t)i * r->n_cfg, w->qin + (size_t)i * r->n_q);
    }
}

void reformer_towers_config(const reformer *r, reformer_ws *w, const double *kv, int n, float *v)
{
    const int nk = r->base.table->n_kernel, D = r->tower_dim;
    for (int c0 = 0; c0 < n; c0 += REFORMER_PAIR_CHUNK) {
        const int B = n - c0 < REFORMER_PAIR_CHUNK ? n - c0 : REFORMER_PAIR_CHUNK;
        towers_chunk_inputs(r, w, w->pv, kv + (size_t)c0 * nk, B); /* any problem: e(c) does not read it */
        towers_config_forward(r, w->cin, w->ch, v + (size_t)c0 * D, B);
    }
}

int reformer_towers_predict_candidates(const model *m, void *vws, const float *x, const double *kv, int n,
                                       float *scores)
{
    const reformer *r = (const reformer *)m;
    reformer_ws *w = vws;
    const int nk = m->table->n_kernel, D = r->tower_dim;
    data_table_problem_values(m->table, x, w->pv);
    reformer_problem_forward(r, w, x, w->u);
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

/* ---- training ---- */

/* A problem set: its candidates, per problem its model inputs, per candidate its configuration inputs and q. */
typedef struct tower_set {
    reformer_cands c;
    float *pin;      /* (n, n_in) the problems' model inputs */
    float *cin;      /* (nnz, n_cfg) the entries' configuration inputs */
    float *qin;      /* (nnz, n_q) their interaction inputs */
} tower_set;

typedef struct towers_fit {
    reformer *r;
    const model_train_data *d;
    tower_set train, valid;
    int cap;                             /* candidates of a batch or an evaluation chunk, at most */
    int cap_prob;                        /* problems of a batch or a chunk */
    int *off;                            /* (cap_prob + 1) the batch's offsets */
    nn_gamma_cache cache[REFORMER_MAX_DEPTH];
    float *act[REFORMER_MAX_DEPTH + 1];  /* act[0] (cap_prob, n_in), act[l] (cap_prob, hidden) */
    float *dact[REFORMER_MAX_DEPTH + 1];
    float *u, *du;                       /* (cap_prob, D) */
    float *cin, *qin;                    /* (cap, n_cfg), (cap, n_q) */
    float *h, *dh;                       /* (cap, cfg_hidden) */
    float *v, *dv;                       /* (cap, D) */
    float *logit, *lin, *prob, *y, *dlogit; /* (cap) */
} towers_fit;

static void tower_set_free(tower_set *s)
{
    reformer_cands_free(&s->c);
    free(s->pin);
    free(s->cin);
    free(s->qin);
    s->pin = s->cin = s->qin = NULL;
}

/* pin (n, n_in), the rows' inputs, is taken over when given (and freed on failure), else computed */
static int tower_set_init(tower_set *s, const reformer *r, const model_train_data *d, const int *rows, int n,
                          float *pin)
{
    s->pin = pin;
    s->cin = s->qin = NULL;
    const data_select *sel = d->sel;
    const data_table_spec *spec = r->base.table;
    const int nf = r->base.n_features, ni = r->n_in, nk = spec->n_kernel, nc = r->n_cfg, nq = r->n_q;
    int rc = reformer_cands_init(&s->c, r, sel, rows, n);
    if (rc) {
        free(pin);
        s->pin = NULL;
        return rc;
    }
    const int nnz = s->c.off[n];
    const size_t z = (size_t)(nnz ? nnz : 1), nn = (size_t)(n ? n : 1);
    float *pf = hr_malloc((size_t)(nc + nq + 1) * sizeof *pf);
    double *pv = hr_malloc((size_t)(spec->n_problem + spec->n_hardware + 1) * sizeof *pv);
    s->cin = hr_malloc(z * (size_t)(nc + 1) * sizeof *s->cin);
    s->qin = hr_malloc(z * (size_t)(nq + 1) * sizeof *s->qin);
    if (!s->pin) s->pin = hr_malloc(nn * (size_t)ni * sizeof *s->pin);
    rc = pf && pv && s->cin && s->qin && s->pin ? HR_OK : HR_ENOMEM;
    for (int i = 0; !rc && i < n; i++) {
        const float *x = d->X + (size_t)rows[i] * nf;
        if (!pin) reformer_input(r, x, s->pin + (size_t)i * ni);
        data_table_problem_values(spec, x, pv);
        for (int e = s->c.off[i]; e < s->c.off[i + 1]; e++) {
            data_table_pair_features(spec, pv, sel->table->kv + (size_t)s->c.kern[e] * nk, pf);
            reformer_towers_inputs(r, pf, s->cin + (size_t)e * nc, s->qin + (size_t)e * nq);
        }
    }
    free(pf);
    free(pv);
    if (rc) tower_set_free(s);
    return rc;
}

static void towers_fit_free(towers_fit *f)
{
    tower_set_free(&f->train);
    tower_set_free(&f->valid);
    free(f->off);
    for (int l = 0; l < f->r->depth; l++) nn_gamma_cache_free(&f->cache[l]);
    for (int l = 0; l <= f->r->depth; l++) {
        free(f->act[l]);
        free(f->dact[l]);
    }
    float *bufs[] = {f->u, f->du, f->cin, f->qin, f->h, f->dh, f->v, f->dv, f->logit, f->lin, f->prob, f->y, f->dlogit};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
}

static int towers_fit_init(towers_fit *f, reformer *r, const model_train_data *d, int batch, float *train_in)
{
    memset(f, 0, sizeof *f);
    f->r = r;
    f->d = d;
    int rc = tower_set_init(&f->train, r, d, d->train, d->n_train, train_in);
    if (!rc) rc = tower_set_init(&f->valid, r, d, d->valid, d->n_valid, NULL);
    if (rc) {
        tower_set_free(&f->train);
        return rc;
    }
    long cap = (long)batch * f->train.c.most;
    cap = cap > f->valid.c.most ? cap : f->valid.c.most;
    cap = cap > REFORMER_PAIR_CHUNK ? cap : REFORMER_PAIR_CHUNK;
    if (cap > (1L << 30)) {
        towers_fit_free(f);
        return hr_error(HR_EINVAL, "reformer towers: %ld candidates in a batch", cap);
    }
    f->cap = (int)cap;
    /* an evaluation chunk holds whole problems up to cap candidates: at most cap problems with one each */
    f->cap_prob = batch > f->cap ? batch : f->cap;
    const size_t c = (size_t)cap, cp = (size_t)f->cap_prob, D = (size_t)r->tower_dim, H = (size_t)r->cfg_hidden;
    if (!(f->off = hr_malloc((cp + 1) * sizeof *f->off))) rc = HR_ENOMEM;
    for (int l = 0; l < r->depth && !rc; l++) rc = nn_gamma_cache_init(&f->cache[l], &r->blocks[l], f->cap_prob);
    for (int l = 0; l <= r->depth && !rc; l++) {
        const size_t wd = l ? (size_t)r->hidden : (size_t)r->n_in;
        if (!(f->act[l] = hr_calloc(cp * wd, sizeof(float)))) rc = HR_ENOMEM;
        if (!rc && l && !(f->dact[l] = hr_calloc(cp * wd, sizeof(float)))) rc = HR_ENOMEM;
    }
    if (!rc && (!(f->u = hr_calloc(cp * D, sizeof(float))) || !(f->du = hr_calloc(cp * D, sizeof(float))) ||
                !(f->cin = hr_calloc(c * (size_t)(r->n_cfg + 1), sizeof(float))) ||
                !(f->qin = hr_calloc(c * (size_t)(r->n_q + 1), sizeof(float))) ||
                !(f->h = hr_calloc(c * H, sizeof(float))) || !(f->dh = hr_calloc(c * H, sizeof(float))) ||
                !(f->v = hr_calloc(c * D, sizeof(float))) || !(f->dv = hr_calloc(c * D, sizeof(float))) ||
                !(f->logit = hr_calloc(c, sizeof(float))) || !(f->lin = hr_calloc(c, sizeof(float))) ||
                !(f->prob = hr_calloc(c, sizeof(float))) || !(f->y = hr_calloc(c, sizeof(float))) ||
                !(f->dlogit = hr_calloc(c, sizeof(float)))))
        rc = HR_ENOMEM;
    if (rc) towers_fit_free(f);
    return rc;
}

/* problem inputs act[0], candidate inputs, labels and offsets of positions pos[0..n) of set s; returns the
 * candidates gathered */
static int towers_gather(towers_fit *f, const tower_set *s, const int *pos, int n)
{
    const reformer *r = f->r;
    const int ni = r->n_in, nc = r->n_cfg, nq = r->n_q;
    HR_ASSERT(n <= f->cap_prob);
    int e = 0;
    f->off[0] = 0;
    for (int i = 0; i < n; i++) {
        const int p = pos[i], a = s->c.off[p], m = s->c.off[p + 1] - a;
        HR_ASSERT(e + m <= f->cap);
        memcpy(f->act[0] + (size_t)i * ni, s->pin + (size_t)p * ni, (size_t)ni * sizeof(float));
        memcpy(f->cin + (size_t)e * nc, s->cin + (size_t)a * nc, (size_t)m * nc * sizeof(float));
        memcpy(f->qin + (size_t)e * nq, s->qin + (size_t)a * nq, (size_t)m * nq * sizeof(float));
        memcpy(f->y + e, s->c.y + a, (size_t)m * sizeof(float));
        e += m;
        f->off[i + 1] = e;
    }
    return e;
}

/* u of the n problems, v of the N candidates, their scores and the listwise loss */
static float towers_forward(towers_fit *f, int n, int N, int train, hr_rng *rng)
{
    reformer *r = f->r;
    for (int l = 0; l < r->depth; l++)
        nn_gamma_forward(&r->blocks[l], &r->p, &r->state, &f->cache[l], f->act[l], f->act[l + 1], n, train, rng);
    nn_linear_forward(&r->head, &r->p, f->act[r->depth], f->u, n);
    towers_config_forward(r, f->cin, f->h, f->v, N);
    nn_seg_dot_forward(f->u, f->v, f->off, n, r->tower_dim, f->logit);
    if (r->n_q) {
        nn_linear_forward(&r->inter, &r->p, f->qin, f->lin, N);
        for (int i = 0; i < N; i++) f->logit[i] += f->lin[i];
    }
    return nn_xent_seg_forward(f->logit, f->y, f->off, n, f->prob);
}

static int towers_batch(void *ctx, const int *pos, int n, hr_rng *rng, float *loss)
{
    towers_fit *f = ctx;
    reformer *r = f->r;
    const int L = r->depth, Hd = r->hidden, D = r->tower_dim, H = r->cfg_hidden;
    const int N = towers_gather(f, &f->train, pos, n);
    if (n < 2 || N < 2) { /* BatchNorm needs two problems; one without two measurements teaches nothing */
        *loss = 0.0f;
        return HR_OK;
    }
    *loss = towers_forward(f, n, N, 1, rng);
    memset(f->dlogit, 0, (size_t)N * sizeof *f->dlogit);
    nn_xent_seg_backward(f->prob, f->y, f->off, n, f->dlogit, 1.0f);
    if (r->n_q) nn_linear_backward(&r->inter, &r->p, f->qin, f->dlogit, NULL, N);
    memset(f->du, 0, (size_t)n * D * sizeof(float));
    memset(f->dv, 0, (size_t)N * D * sizeof(float));
    nn_seg_dot_backward(f->u, f->v, f->off, n, D, f->dlogit, f->du, f->dv);
    /* the configuration tower: dh = dv W_2 through the ReLU (h is its output), then W_1 */
    memset(f->dh, 0, (size_t)N * H * sizeof(float));
    nn_linear_backward(&r->cfg2, &r->p, f->h, f->dv, f->dh, N);
    for (size_t i = 0; i < (size_t)N * H; i++) f->dh[i] = f->h[i] > 0.0f ? f->dh[i] : 0.0f;
    nn_linear_backward(&r->cfg1, &r->p, f->cin, f->dh, NULL, N);
    /* the problem tower */
    memset(f->dact[L], 0, (size_t)n * Hd * sizeof(float));
    nn_linear_backward(&r->head, &r->p, f->act[L], f->du, f->dact[L], n);
    for (int l = L - 1; l >= 0; l--) {
        if (l) memset(f->dact[l], 0, (size_t)n * Hd * sizeof(float));
        nn_gamma_backward(&r->blocks[l], &r->p, &f->cache[l], f->act[l], f->act[l + 1], f->dact[l + 1],
                          l ? f->dact[l] : NULL, n);
    }
    return HR_OK;
}

/* Validation: chunks of whole problems up to cap candidates; loss per problem, top-1 = the highest-scored
 * measured configuration is a fastest one (the first of equal scores, as eval/ breaks ties). */
static int towers_evaluate(void *ctx, const int *pos, int n, float *loss, float *metric)
{
    towers_fit *f = ctx;
    const tower_set *s = &f->valid;
    double sum = 0.0;
    long hits = 0;
    for (int i = 0; i < n;) {
        int m = 0, N = 0;
        while (i + m < n && m < f->cap_prob && N + s->c.off[pos[i + m] + 1] - s->c.off[pos[i + m]] <= f->cap) {
            N += s->c.off[pos[i + m] + 1] - s->c.off[pos[i + m]];
            m++;
        }
        N = towers_gather(f, s, pos + i, m);
        sum += (double)towers_forward(f, m, N, 0, NULL) * m;
        hits += reformer_pairs_top1_hits(f->d->sel, f->logit, f->off, m, pos + i, s->c.rows, s->c.off, s->c.kern);
        i += m;
    }
    *loss = n ? (float)(sum / n) : 0.0f;
    *metric = n ? (float)hits / (float)n : 0.0f;
    return HR_OK;
}

int reformer_towers_fit(reformer *r, const model_train_data *d, const model_ctx *ctx, const train_opts *o,
                        float *train_in)
{
    (void)ctx;
    towers_fit fit;
    int rc = towers_fit_init(&fit, r, d, o->batch_size, train_in);
    if (rc) return rc;
    train_ops ops = {towers_batch, towers_evaluate};
    train_result res;
    rc = train_run(&ops, &fit, &r->p, &r->state, fit.train.c.pos, d->n_train, fit.valid.c.pos, d->n_valid, o, &res);
    towers_fit_free(&fit);
    if (!rc) rc = model_loop_curve(&r->base, &res);
    train_result_free(&res);
    return rc;
}
