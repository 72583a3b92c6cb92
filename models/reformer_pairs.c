/* The Reformer's pairs mode (family "reformer", config "mode": "pairs", for benchmark tables): every candidate
 * configuration k of a problem gets one score
 *   u = [x | data_table_pair_features(pv, kv_k)]     problem features, then the pair's features (data/table.h)
 *   s_k = A_f Gamma_L(... Gamma_1(input(u))) + b_f    the classes mode's Gamma-blocks, a head of width 1
 * where input() is the classes mode's transform (slog, z-score, "ple" bins), its problem columns fitted on the
 * training rows and its pair columns on the training pairs (models/reformer_input.c). Training is listwise:
 * per problem, the softmax of its measured candidates' scores against the runtime-ratio labels restricted to
 * them (data_labels_fill: softmax over -t/(tau t_min), soft ratio or one-hot), a mini-batch of problems
 * flattened into their candidates with per-problem offsets (nn_xent_seg_*). Such a model scores any
 * configuration from its fields, measured for the problem or not, and any number of them.
 * Prediction goes in chunks of REFORMER_PAIR_CHUNK candidates through the folded blocks of reformer_fold, as
 * matrix products over the chunk, in the caller's workspace; it allocates nothing. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "models/model.h"
#include "nn/nn.h"
#include "train/train.h"

#include "models/reformer_internal.h"

/* ---- scratch and scores ---- */

int reformer_pairs_ws_init(const reformer *r, reformer_ws *w)
{
    const data_table_spec *s = r->base.table;
    const size_t C = REFORMER_PAIR_CHUNK, wide = (size_t)r->hidden + (size_t)r->expand;
    w->buf = hr_calloc((size_t)r->n_raw, sizeof *w->buf);
    w->pv = hr_calloc((size_t)(s->n_problem + s->n_hardware + 1), sizeof *w->pv);
    w->in = hr_calloc(C * (size_t)r->n_in, sizeof *w->in);
    w->z = hr_calloc(C * wide, sizeof *w->z);
    w->y[0] = hr_calloc(C * (size_t)r->hidden, sizeof *w->y[0]);
    w->y[1] = hr_calloc(C * (size_t)r->hidden, sizeof *w->y[1]);
    int rc = w->buf && w->pv && w->in && w->z && w->y[0] && w->y[1] ? HR_OK : HR_ENOMEM;
    for (int l = 0; !rc && r->norm == NN_NORM_LAYER && l < r->depth; l++)
        rc = nn_gamma_cache_init(&w->one[l], &r->blocks[l], REFORMER_PAIR_CHUNK);
    return rc;
}

/* scores (B) of B <= REFORMER_PAIR_CHUNK model inputs w->in: per block, Z = in [A1; A2']^T + [b1 + b3; b2']
 * (batch norm folded), t = ReLU(Z's last d_hidden columns), y = ReLU(Z's first d_out + t A3^T); then the head */
static void pairs_chunk_forward(const reformer *r, reformer_ws *w, int B, float *scores)
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
    const float bf = r->p.w[r->head.b];
    for (int i = 0; i < B; i++) scores[i] = bf;
    cblas_sgemv(CblasRowMajor, CblasNoTrans, B, r->hidden, 1.0f, cur, r->hidden, r->p.w + r->head.w, 1, 1.0f, scores,
                1);
}

int reformer_pairs_predict_candidates(const model *m, void *vws, const float *x, const double *kv, int n,
                                      float *scores)
{
    const reformer *r = (const reformer *)m;
    reformer_ws *w = vws;
    if (!r->pairs) return hr_error(HR_EINVAL, "reformer: candidates of a classes-mode model go by name");
    const int nk = m->table->n_kernel, ni = r->n_in;
    data_table_problem_values(m->table, x, w->pv);
    for (int c0 = 0; c0 < n; c0 += REFORMER_PAIR_CHUNK) {
        const int B = n - c0 < REFORMER_PAIR_CHUNK ? n - c0 : REFORMER_PAIR_CHUNK;
        for (int i = 0; i < B; i++) {
            reformer_pair_raw(r, x, w->pv, kv + (size_t)(c0 + i) * nk, w->buf);
            reformer_input(r, w->buf, w->in + (size_t)i * ni);
        }
        pairs_chunk_forward(r, w, B, scores + c0);
    }
    return HR_OK;
}

/* ---- training ---- */

/* A problem set: its candidates, and each problem's values. */
typedef struct pair_set {
    reformer_cands c;
    double *pv;      /* (n, n_problem + n_hardware) */
} pair_set;

typedef struct pairs_fit {
    reformer *r;
    const model_train_data *d;
    pair_set train, valid;
    int cap;                             /* candidates of a batch or an evaluation chunk, at most */
    int cap_prob;                        /* problems of a batch */
    int *off;                            /* (cap_prob + 1) the batch's offsets */
    float *u;                            /* (n_raw) one pair's raw inputs */
    nn_gamma_cache cache[REFORMER_MAX_DEPTH];
    float *act[REFORMER_MAX_DEPTH + 1];  /* act[0] (cap, n_in), act[l] (cap, hidden) */
    float *dact[REFORMER_MAX_DEPTH + 1];
    float *logit, *prob, *y, *dlogit;    /* (cap) */
} pairs_fit;

void reformer_cands_free(reformer_cands *c)
{
    free(c->pos);
    free(c->off);
    free(c->kern);
    free(c->y);
    memset(c, 0, sizeof *c);
}

int reformer_cands_init(reformer_cands *c, const reformer *r, const data_select *sel, const int *rows, int n)
{
    memset(c, 0, sizeof *c);
    c->rows = rows;
    c->n = n;
    const int K = sel->n_kernels;
    long nnz = 0;
    for (int i = 0; i < n; i++) {
        const float *t = sel->runtime + (size_t)rows[i] * K;
        int m = 0;
        for (int k = 0; k < K; k++) m += isfinite(t[k]) != 0;
        nnz += m;
        c->most = m > c->most ? m : c->most;
    }
    float *yrow = hr_malloc((size_t)K * sizeof *yrow);
    c->pos = hr_malloc((size_t)(n ? n : 1) * sizeof *c->pos);
    c->off = hr_malloc((size_t)(n + 1) * sizeof *c->off);
    c->kern = hr_malloc((size_t)(nnz ? nnz : 1) * sizeof *c->kern);
    c->y = hr_malloc((size_t)(nnz ? nnz : 1) * sizeof *c->y);
    if (!yrow || !c->pos || !c->off || !c->kern || !c->y) {
        free(yrow);
        reformer_cands_free(c);
        return HR_ENOMEM;
    }
    int e = 0;
    c->off[0] = 0;
    for (int i = 0; i < n; i++) {
        const int row = rows[i];
        const float *t = sel->runtime + (size_t)row * K;
        c->pos[i] = i;
        /* the labels are 0 off the measured configurations, so restricting them to those keeps their sum */
        data_labels_fill(sel, &row, 1, r->label, r->tau, yrow);
        for (int k = 0; k < K; k++)
            if (isfinite(t[k])) {
                c->kern[e] = k;
                c->y[e++] = yrow[k];
            }
        c->off[i + 1] = e;
    }
    free(yrow);
    return HR_OK;
}

static void pair_set_free(pair_set *s)
{
    reformer_cands_free(&s->c);
    free(s->pv);
    s->pv = NULL;
}

static int pair_set_init(pair_set *s, const reformer *r, const model_train_data *d, const int *rows, int n)
{
    const data_table_spec *spec = r->base.table;
    const int nf = r->base.n_features, npv = spec->n_problem + spec->n_hardware;
    s->pv = NULL;
    int rc = reformer_cands_init(&s->c, r, d->sel, rows, n);
    if (rc) return rc;
    if (!(s->pv = hr_malloc((size_t)(n ? n : 1) * (npv ? npv : 1) * sizeof *s->pv))) {
        pair_set_free(s);
        return HR_ENOMEM;
    }
    for (int i = 0; i < n; i++)
        data_table_problem_values(spec, d->X + (size_t)rows[i] * nf, s->pv + (size_t)i * npv);
    return HR_OK;
}

static void pairs_fit_free(pairs_fit *f)
{
    pair_set_free(&f->train);
    pair_set_free(&f->valid);
    free(f->off);
    free(f->u);
    for (int l = 0; l < f->r->depth; l++) nn_gamma_cache_free(&f->cache[l]);
    for (int l = 0; l <= f->r->depth; l++) {
        free(f->act[l]);
        free(f->dact[l]);
    }
    free(f->logit);
    free(f->prob);
    free(f->y);
    free(f->dlogit);
}

static int pairs_fit_init(pairs_fit *f, reformer *r, const model_train_data *d, int batch)
{
    memset(f, 0, sizeof *f);
    f->r = r;
    f->d = d;
    int rc = pair_set_init(&f->train, r, d, d->train, d->n_train);
    if (!rc) rc = pair_set_init(&f->valid, r, d, d->valid, d->n_valid);
    if (rc) {
        pair_set_free(&f->train);
        return rc;
    }
    /* a batch's candidates are at most batch times the most of one problem; evaluation fills chunks up to
     * that as well, and one problem alone always fits */
    long cap = (long)batch * f->train.c.most;
    cap = cap > f->valid.c.most ? cap : f->valid.c.most;
    cap = cap > REFORMER_PAIR_CHUNK ? cap : REFORMER_PAIR_CHUNK;
    if (cap > (1L << 30)) {
        pairs_fit_free(f);
        return hr_error(HR_EINVAL, "reformer pairs: %ld candidates in a batch", cap);
    }
    f->cap = (int)cap;
    f->cap_prob = batch > f->valid.c.n ? batch : f->valid.c.n;
    const size_t c = (size_t)cap;
    if (!(f->off = hr_malloc(((size_t)f->cap_prob + 1) * sizeof *f->off)) ||
        !(f->u = hr_malloc((size_t)r->n_raw * sizeof *f->u)))
        rc = HR_ENOMEM;
    for (int l = 0; l < r->depth && !rc; l++) rc = nn_gamma_cache_init(&f->cache[l], &r->blocks[l], f->cap);
    for (int l = 0; l <= r->depth && !rc; l++) {
        const size_t wd = l ? (size_t)r->hidden : (size_t)r->n_in;
        if (!(f->act[l] = hr_calloc(c * wd, sizeof(float)))) rc = HR_ENOMEM;
        if (!rc && l && !(f->dact[l] = hr_calloc(c * wd, sizeof(float)))) rc = HR_ENOMEM;
    }
    if (!rc && (!(f->logit = hr_calloc(c, sizeof(float))) || !(f->prob = hr_calloc(c, sizeof(float))) ||
                !(f->y = hr_calloc(c, sizeof(float))) || !(f->dlogit = hr_calloc(c, sizeof(float)))))
        rc = HR_ENOMEM;
    if (rc) pairs_fit_free(f);
    return rc;
}

/* inputs act[0], labels y and offsets of positions pos[0..n) of set s; returns the candidates gathered */
static int pairs_gather(pairs_fit *f, const pair_set *s, const int *pos, int n)
{
    const reformer *r = f->r;
    const data_table_spec *spec = r->base.table;
    const int nf = r->base.n_features, ni = r->n_in, nk = spec->n_kernel, npv = spec->n_problem + spec->n_hardware;
    const double *kv = f->d->sel->table->kv;
    int e = 0;
    f->off[0] = 0;
    for (int i = 0; i < n; i++) {
        const int p = pos[i];
        const float *x = f->d->X + (size_t)s->c.rows[p] * nf;
        HR_ASSERT(e + s->c.off[p + 1] - s->c.off[p] <= f->cap);
        for (int j = s->c.off[p]; j < s->c.off[p + 1]; j++, e++) {
            reformer_pair_raw(r, x, s->pv + (size_t)p * npv, kv + (size_t)s->c.kern[j] * nk, f->u);
            reformer_input(r, f->u, f->act[0] + (size_t)e * ni);
            f->y[e] = s->c.y[j];
        }
        f->off[i + 1] = e;
    }
    return e;
}

/* the blocks and the head over N gathered candidates, then the listwise loss over the n problems */
static float pairs_forward(pairs_fit *f, int n, int N, int train, hr_rng *rng)
{
    reformer *r = f->r;
    for (int l = 0; l < r->depth; l++)
        nn_gamma_forward(&r->blocks[l], &r->p, &r->state, &f->cache[l], f->act[l], f->act[l + 1], N, train, rng);
    nn_linear_forward(&r->head, &r->p, f->act[r->depth], f->logit, N);
    return nn_xent_seg_forward(f->logit, f->y, f->off, n, f->prob);
}

static int pairs_batch(void *ctx, const int *pos, int n, hr_rng *rng, float *loss)
{
    pairs_fit *f = ctx;
    reformer *r = f->r;
    const int L = r->depth, H = r->hidden;
    const int N = pairs_gather(f, &f->train, pos, n);
    if (N < 2) { /* BatchNorm needs two rows; a batch of problems without two measurements teaches nothing */
        *loss = 0.0f;
        return HR_OK;
    }
    *loss = pairs_forward(f, n, N, 1, rng);
    memset(f->dlogit, 0, (size_t)N * sizeof *f->dlogit);
    nn_xent_seg_backward(f->prob, f->y, f->off, n, f->dlogit, 1.0f);
    memset(f->dact[L], 0, (size_t)N * H * sizeof(float));
    nn_linear_backward(&r->head, &r->p, f->act[L], f->dlogit, f->dact[L], N);
    for (int l = L - 1; l >= 0; l--) {
        if (l) memset(f->dact[l], 0, (size_t)N * H * sizeof(float));
        nn_gamma_backward(&r->blocks[l], &r->p, &f->cache[l], f->act[l], f->act[l + 1], f->dact[l + 1],
                          l ? f->dact[l] : NULL, N);
    }
    return HR_OK;
}

long reformer_pairs_top1_hits(const data_select *sel, const float *logit, const int *boff, int m, const int *pos,
                              const int *rows, const int *off, const int *kern)
{
    const int K = sel->n_kernels;
    long hits = 0;
    for (int q = 0; q < m; q++) {
        const int p = pos[q], a = boff[q], b = boff[q + 1];
        if (a == b) continue;
        const float *t = sel->runtime + (size_t)rows[p] * K;
        int best = a;
        float tmin = INFINITY;
        for (int e = a; e < b; e++) {
            if (logit[e] > logit[best]) best = e;
            const float te = t[kern[off[p] + e - a]];
            tmin = te < tmin ? te : tmin;
        }
        hits += t[kern[off[p] + best - a]] == tmin;
    }
    return hits;
}

/* Validation: chunks of whole problems up to cap candidates; loss per problem, top-1 = the highest-scored
 * measured configuration is a fastest one (the first of equal scores, as eval/ breaks ties). */
static int pairs_evaluate(void *ctx, const int *pos, int n, float *loss, float *metric)
{
    pairs_fit *f = ctx;
    const pair_set *s = &f->valid;
    double sum = 0.0;
    long hits = 0;
    for (int i = 0; i < n;) {
        int m = 0, N = 0;
        while (i + m < n && N + s->c.off[pos[i + m] + 1] - s->c.off[pos[i + m]] <= f->cap) {
            N += s->c.off[pos[i + m] + 1] - s->c.off[pos[i + m]];
            m++;
        }
        N = pairs_gather(f, s, pos + i, m);
        sum += (double)pairs_forward(f, m, N, 0, NULL) * m;
        hits += reformer_pairs_top1_hits(f->d->sel, f->logit, f->off, m, pos + i, s->c.rows, s->c.off, s->c.kern);
        i += m;
    }
    *loss = n ? (float)(sum / n) : 0.0f;
    *metric = n ? (float)hits / (float)n : 0.0f;
    return HR_OK;
}

int reformer_pairs_fit(reformer *r, const model_train_data *d, const model_ctx *ctx, const train_opts *o)
{
    pairs_fit fit;
    int rc = pairs_fit_init(&fit, r, d, o->batch_size);
    if (rc) return rc;
    train_ops ops = {pairs_batch, pairs_evaluate};
    train_result res;
    rc = train_run(&ops, &fit, &r->p, &r->state, fit.train.c.pos, d->n_train, fit.valid.c.pos, d->n_valid, o, &res);
    pairs_fit_free(&fit);
    if (!rc) rc = model_loop_curve(&r->base, &res);
    train_result_free(&res);
    return rc;
}
