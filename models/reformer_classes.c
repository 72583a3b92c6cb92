/* The Reformer's classes head (family "reformer", config "mode": "classes", the default off benchmark tables),
 * after the Reformer paper (sec. 2 and 4):
 *   z = A_f x_L + b_f                            linear head over the trunk's output; softmax(z) is the kernel
 *                                                distribution
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
 * The training rows are prepared once, and the mini-batch step runs whole or in parts on a team of threads (see
 * "a training batch in parts" below). Prediction is the folded trunk and the heads over one problem in the
 * caller's workspace (reformer_ws, one per thread; the model is only read). */
#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "nn/parts.h"
#include "models/reformer_internal.h"

static int classes_input_fit(reformer *r, const model_train_data *d, int bins, float **train_in)
{
    return reformer_input_fit(r, d, bins, train_in);
}

static void classes_layout(reformer *r)
{
    nn_linear_layout(&r->head, &r->p, "head", r->hidden, r->base.n_kernels);
    if (r->app_weight > 0.0f) nn_linear_layout(&r->app, &r->p, "app", r->hidden, r->base.n_kernels);
}

static void classes_reset(reformer *r, hr_rng *rng)
{
    nn_linear_reset(&r->head, &r->p, rng);
    if (r->app_weight > 0.0f) nn_linear_reset(&r->app, &r->p, rng);
}

/* scores (K) in place over z: product: log softmax(z) + beta log sigmoid(a), the log of P(fastest) P(measured)^beta;
 * mask: log softmax(z) - 1000 [sigmoid(a) < 1/2] (the head only vetoes; an all-vetoed row keeps the softmax
 * order); head: log sigmoid(a). */
static void combine_heads(float *z, const float *a, int K, int how, float beta)
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

/* ---- scratch and scores ---- */

static int classes_ws_init(const reformer *r, reformer_ws *w)
{
    const size_t wide = (size_t)r->hidden + (size_t)r->expand;
    int rc = (w->buf = hr_calloc((size_t)r->n_in + 2 * wide + (size_t)r->base.n_kernels, sizeof *w->buf)) ? HR_OK
                                                                                                        : HR_ENOMEM;
    for (int l = 0; !rc && r->norm == NN_NORM_LAYER && l < r->depth; l++)
        rc = nn_gamma_cache_init(&w->one[l], &r->blocks[l], 1);
    return rc;
}

static int classes_select(const reformer *r, reformer_ws *w, const float *x, float *scores)
{
    const float *cur = reformer_trunk_forward1(r, w, x);
    reformer_head_forward1(r, cur, scores);
    if (r->app_weight > 0.0f) {
        const int K = r->base.n_kernels, wide = r->hidden + r->expand;
        float *app = w->buf + r->n_in + 2 * wide;
        memcpy(app, r->p.w + r->app.b, (size_t)K * sizeof *app);
        cblas_sgemv(CblasRowMajor, CblasNoTrans, K, r->hidden, 1.0f, r->p.w + r->app.w, r->hidden, cur, 1, 1.0f,
                    app, 1);
        combine_heads(scores, app, K, r->app_combine, r->app_beta);
    }
    return HR_OK;
}

/* ---- training ---- */


/* ---- training ---- */

/* A row set (the training or the validation rows) prepared once before the epochs: inputs and targets do
 * not change between epochs, so slog, z-score, labels and applicability targets are computed here rather
 * than for every mini-batch. The loop passes positions 0..n-1 into the set (shuffled), not dataset rows. */
typedef struct fit_set {
    const int *rows; /* (n) dataset rows */
    int n;
    int *pos;        /* (n) 0..n-1: the row list handed to train_run */
    float *in;       /* (n, n_in) model inputs */
    int *off;        /* (n + 1): row i's nonzero targets are entries off[i] .. off[i+1] */
    int *kern;       /* (nnz) kernel of an entry: measured, or nonzero label */
    float *y, *ay;   /* (nnz) its label and applicability target (ay NULL without the head) */
} fit_set;

typedef struct reformer_fit {
    reformer *r;
    const data_select *sel;
    fit_set train, valid;
    int cap;
    int *rowbuf;                         /* (cap) dataset rows of an evaluation chunk */
    reformer_trunk_bufs t;               /* cap rows: act[0] (cap, n_in) z-scored input, act[l] (cap, hidden) */
    float *logits, *prob, *y, *dlogits;  /* (cap, K) */
    float *alogits, *aprob, *ay, *dalogits; /* (cap, K): applicability head, NULL without it */
    /* a training batch in parts (batch_parts > 1), see fit_batch_parts */
    int nparts;
    hr_team *team;                       /* min(threads, nparts) members; NULL for one thread */
    nn_gamma_cache pcache[REFORMER_MAX_PARTS][REFORMER_MAX_DEPTH]; /* parts 1..: their caches (0 uses cache) */
    nn_params pp[REFORMER_MAX_PARTS];    /* part q's view: the shared w, its own dw (part 0: the model's) */
    float *pdw;                          /* (nparts - 1, n params): dw of parts 1.. */
    float *scratch;                      /* (2 depth, 2 nparts expand): per block, forward then backward */
    hr_rng prng[REFORMER_MAX_PARTS];     /* dropout streams of the parts, drawn per batch */
    float ploss[REFORMER_MAX_PARTS];
} reformer_fit;

static void fit_set_free(fit_set *s)
{
    free(s->pos);
    free(s->in);
    free(s->off);
    free(s->kern);
    free(s->y);
    free(s->ay);
    memset(s, 0, sizeof *s);
}

/* Targets of one dataset row, appended to s from entry s->off[i]: the label y_k (data_labels_fill) and the
 * applicability target (1, or t_min / t_k with app_eff, where k was measured; 0 elsewhere) of every kernel
 * that was measured or has a nonzero label. yrow (K) is scratch. */
static int fit_set_targets(const reformer *r, const data_select *sel, fit_set *s, int i, float *yrow, int *cap)
{
    const int K = r->base.n_kernels, row = s->rows[i];
    const float *t = sel->runtime + (size_t)row * K;
    data_labels_fill(sel, &row, 1, r->label, r->tau, yrow);
    float tmin = INFINITY;
    for (int k = 0; k < K; k++) tmin = t[k] < tmin ? t[k] : tmin;
    int e = s->off[i];
    for (int k = 0; k < K; k++) {
        if (!isfinite(t[k]) && yrow[k] == 0.0f) continue;
        if (e == *cap) {
            int c = 2 * *cap;
            int *kern = realloc(s->kern, (size_t)c * sizeof *kern);
            if (kern) s->kern = kern;
            float *y = realloc(s->y, (size_t)c * sizeof *y);
            if (y) s->y = y;
            float *ay = s->ay ? realloc(s->ay, (size_t)c * sizeof *ay) : NULL;
            if (ay) s->ay = ay;
            if (!kern || !y || (s->ay && !ay)) return HR_ENOMEM;
            *cap = c;
        }
        s->kern[e] = k;
        s->y[e] = yrow[k];
        if (s->ay) s->ay[e] = !isfinite(t[k]) ? 0.0f : r->app_eff ? tmin / t[k] : 1.0f;
        e++;
    }
    s->off[i + 1] = e;
    return HR_OK;
}

/* Prepares rows[0..n) of the dataset; in (n, n_in) is taken over when given (and freed on failure),
 * else computed. */
static int fit_set_init(fit_set *s, const reformer *r, const model_train_data *d, const int *rows, int n, float *in)
{
    memset(s, 0, sizeof *s);
    s->rows = rows;
    s->n = n;
    s->in = in;
    const int nf = r->base.n_features, ni = r->n_in, K = r->base.n_kernels;
    int cap = 4 * n + 16;
    float *yrow = hr_malloc((size_t)K * sizeof *yrow);
    s->pos = hr_malloc((size_t)(n ? n : 1) * sizeof *s->pos);
    s->off = hr_malloc((size_t)(n + 1) * sizeof *s->off);
    s->kern = hr_malloc((size_t)cap * sizeof *s->kern);
    s->y = hr_malloc((size_t)cap * sizeof *s->y);
    if (r->app_weight > 0.0f) s->ay = hr_malloc((size_t)cap * sizeof *s->ay);
    if (!s->in) s->in = hr_malloc((size_t)(n ? n : 1) * ni * sizeof *s->in);
    int rc = !yrow || !s->pos || !s->off || !s->kern || !s->y || (r->app_weight > 0.0f && !s->ay) || !s->in
                 ? HR_ENOMEM
                 : HR_OK;
    if (!rc) s->off[0] = 0;
    for (int i = 0; !rc && i < n; i++) {
        s->pos[i] = i;
        if (!in) reformer_input(r, d->X + (size_t)rows[i] * nf, s->in + (size_t)i * ni);
        rc = fit_set_targets(r, d->sel, s, i, yrow, &cap);
    }
    free(yrow);
    if (rc) fit_set_free(s);
    return rc;
}

static void fit_free(reformer_fit *f)
{
    fit_set_free(&f->train);
    fit_set_free(&f->valid);
    free(f->rowbuf);
    reformer_trunk_bufs_free(&f->t, f->r);
    free(f->logits);
    free(f->prob);
    free(f->y);
    free(f->dlogits);
    free(f->alogits);
    free(f->aprob);
    free(f->ay);
    free(f->dalogits);
    for (int q = 1; q < f->nparts; q++)
        for (int l = 0; l < f->r->depth; l++) nn_gamma_cache_free(&f->pcache[q][l]);
    free(f->pdw);
    free(f->scratch);
    hr_team_free(f->team);
}

/* train_in (n_train, n_in): the training rows' inputs, owned by f from here on (freed on failure). */
static int fit_init(reformer_fit *f, reformer *r, const model_train_data *d, float *train_in, int cap, int batch,
                    int nparts, int threads)
{
    memset(f, 0, sizeof *f);
    f->r = r;
    f->sel = d->sel;
    f->cap = cap;
    const size_t K = (size_t)r->base.n_kernels, c = (size_t)cap;
    int rc = fit_set_init(&f->train, r, d, d->train, d->n_train, train_in);
    if (!rc) rc = fit_set_init(&f->valid, r, d, d->valid, d->n_valid, NULL);
    if (!rc && !(f->rowbuf = hr_malloc(c * sizeof *f->rowbuf))) rc = HR_ENOMEM;
    if (!rc) rc = reformer_trunk_bufs_init(&f->t, r, cap);
    if (!rc && (!(f->logits = hr_calloc(c * K, sizeof(float))) || !(f->prob = hr_calloc(c * K, sizeof(float))) ||
                !(f->y = hr_calloc(c * K, sizeof(float))) || !(f->dlogits = hr_calloc(c * K, sizeof(float)))))
        rc = HR_ENOMEM;
    if (!rc && r->app_weight > 0.0f &&
        (!(f->alogits = hr_calloc(c * K, sizeof(float))) || !(f->aprob = hr_calloc(c * K, sizeof(float))) ||
         !(f->ay = hr_calloc(c * K, sizeof(float))) || !(f->dalogits = hr_calloc(c * K, sizeof(float)))))
        rc = HR_ENOMEM;
    if (!rc && nparts > 1) {
        /* parts 1.. get caches for their rows and gradient blocks of their own; part 0 uses the model's */
        f->nparts = nparts;
        const int part_cap = (batch > cap ? batch : cap) / nparts + 1; /* a batch's or an evaluation chunk's part */
        for (int q = 1; q < nparts && !rc; q++)
            for (int l = 0; l < r->depth && !rc; l++)
                rc = nn_gamma_cache_init(&f->pcache[q][l], &r->blocks[l], part_cap);
        if (!rc && (!(f->pdw = hr_calloc((size_t)(nparts - 1) * r->p.n, sizeof(float))) ||
                    !(f->scratch = hr_calloc((size_t)4 * r->depth * nparts * r->expand, sizeof(float)))))
            rc = HR_ENOMEM;
        for (int q = 0; q < nparts && !rc; q++) {
            f->pp[q] = r->p;
            if (q) f->pp[q].dw = f->pdw + (size_t)(q - 1) * r->p.n;
        }
        threads = hr_threads_resolve(threads);
        if (!rc && threads > 1) rc = hr_team_create(threads < nparts ? threads : nparts, &f->team);
    }
    if (rc) fit_free(f);
    return rc;
}

/* ---- a training batch in parts ----
 * With batch_parts P > 1 the batch's rows are cut into P contiguous parts, which go through the forward
 * and backward passes side by side, on min(threads, P) threads. BatchNorm's statistics still cover the
 * whole batch: a block's passes run in phases, and between them every part adds its column sums in part
 * order (nn_gamma_forward_part). Each part accumulates its parameter gradients into its own block (part 0
 * into the model's), and the blocks are added in part order. Every sum therefore has an order fixed by P
 * alone, so the model depends on batch_parts and not on the thread count; P = 1 is the single pass of
 * fit_batch below. */

typedef struct part_job {
    reformer_fit *f;
    const int *pos;
    int n;
} part_job;

static void part_rows(int n, int nparts, int q, int *start, int *len)
{
    *start = (int)((long)n * q / nparts);
    *len = (int)((long)n * (q + 1) / nparts) - *start;
}

static nn_gamma_cache *part_cache(reformer_fit *f, int q, int l)
{
    return q ? &f->pcache[q][l] : &f->t.cache[l];
}

/* inputs act[0] and targets y, ay (rows s0..s0+n of the work buffers) of positions pos[0..n) of set s */
static void fit_gather(reformer_fit *f, const fit_set *s, const int *pos, int s0, int n)
{
    reformer *r = f->r;
    HR_ASSERT(s0 + n <= f->cap);
    const int nf = r->n_in, K = r->base.n_kernels;
    const size_t oK = (size_t)s0 * K;
    for (int i = 0; i < n; i++)
        memcpy(f->t.act[0] + (size_t)(s0 + i) * nf, s->in + (size_t)pos[i] * nf, (size_t)nf * sizeof(float));
    memset(f->y + oK, 0, (size_t)n * K * sizeof *f->y);
    for (int i = 0; i < n; i++)
        for (int e = s->off[pos[i]]; e < s->off[pos[i] + 1]; e++) f->y[oK + (size_t)i * K + s->kern[e]] = s->y[e];
    if (r->app_weight > 0.0f) {
        memset(f->ay + oK, 0, (size_t)n * K * sizeof *f->ay);
        for (int i = 0; i < n; i++)
            for (int e = s->off[pos[i]]; e < s->off[pos[i] + 1]; e++)
                f->ay[oK + (size_t)i * K + s->kern[e]] = s->ay[e];
    }
}

/* the heads' logits of rows s0..s0+n from the last block's output */
static void fit_heads_forward(reformer_fit *f, int s0, int n)
{
    reformer *r = f->r;
    const size_t oK = (size_t)s0 * r->base.n_kernels, oH = (size_t)s0 * r->hidden;
    nn_linear_forward(&r->head, &r->p, f->t.act[r->depth] + oH, f->logits + oK, n);
    if (r->app_weight > 0.0f) nn_linear_forward(&r->app, &r->p, f->t.act[r->depth] + oH, f->alogits + oK, n);
}

/* The losses' gradients of rows s0..s0+n through both heads (after fit_loss): the heads' parameter
 * gradients into p, dact[L] of those rows written. share scales the losses' means over the n rows to the
 * batch's (1 for a whole batch). */
static void fit_heads_backward(reformer_fit *f, nn_params *p, int s0, int n, float share)
{
    reformer *r = f->r;
    const int K = r->base.n_kernels, L = r->depth, H = r->hidden;
    const size_t oK = (size_t)s0 * K, oH = (size_t)s0 * H;
    memset(f->dlogits + oK, 0, (size_t)n * K * sizeof *f->dlogits);
    nn_xent_backward(f->prob + oK, f->y + oK, f->dlogits + oK, n, K, share);
    memset(f->t.dact[L] + oH, 0, (size_t)n * H * sizeof(float));
    nn_linear_backward(&r->head, p, f->t.act[L] + oH, f->dlogits + oK, f->t.dact[L] + oH, n);
    if (r->app_weight > 0.0f) {
        memset(f->dalogits + oK, 0, (size_t)n * K * sizeof *f->dalogits);
        nn_bce_logits_backward(f->aprob + oK, f->ay + oK, f->dalogits + oK, n, K, r->app_weight * share);
        nn_linear_backward(&r->app, p, f->t.act[L] + oH, f->dalogits + oK, f->t.dact[L] + oH, n);
    }
}

/* logits (n, K) for positions pos[0..n) of set s into rows s0.. of the work buffers, through part q's caches
 * (q = 0: the model's), after fit_gather */
static void fit_forward(reformer_fit *f, const fit_set *s, const int *pos, int s0, int n, int train, hr_rng *rng,
                        int q)
{
    fit_gather(f, s, pos, s0, n);
    reformer_trunk_forward(f->r, q ? f->pcache[q] : f->t.cache, f->t.act, s0, n, train, rng);
    fit_heads_forward(f, s0, n);
}

/* The training objective over rows s0..s0+n of the forward pass: H(y, softmax(z)) + lambda BCE(a, measured). */
static float fit_loss(reformer_fit *f, int s0, int n)
{
    const int K = f->r->base.n_kernels;
    const size_t oK = (size_t)s0 * K;
    float loss = nn_xent_forward(f->logits + oK, f->y + oK, f->prob + oK, n, K);
    if (f->r->app_weight > 0.0f)
        loss += f->r->app_weight * nn_bce_logits_forward(f->alogits + oK, f->ay + oK, f->aprob + oK, n, K);
    return loss;
}

/* block l's shared scratch: forward (back = 0) or backward */
static float *part_scratch(const reformer_fit *f, int l, int back)
{
    return f->scratch + (size_t)(2 * l + back) * 2 * f->nparts * f->r->expand;
}

/* part q's heads: logits, its share of the loss, and the gradients down to dact[L] */
static void part_heads(reformer_fit *f, int q, int s0, int m, int n)
{
    fit_heads_forward(f, s0, m);
    f->ploss[q] = fit_loss(f, s0, m);
    fit_heads_backward(f, &f->pp[q], s0, m, (float)m / (float)n); /* the part's mean loss counts m / n */
}

/* one thread's share of the step: parts tid, tid + T, ... */
static void part_step(void *ctx, int tid, int T)
{
    part_job *j = ctx;
    reformer_fit *f = j->f;
    reformer *r = f->r;
    const int P = f->nparts, L = r->depth, H = r->hidden, n = j->n;
    int s0, m;
    for (int q = tid; q < P; q += T) {
        part_rows(n, P, q, &s0, &m);
        fit_gather(f, &f->train, j->pos + s0, s0, m);
    }
    for (int l = 0; l < L; l++) {
        const int win = l ? H : r->n_in;
        for (int phase = 0; phase < 3; phase++) {
            for (int q = tid; q < P; q += T) {
                part_rows(n, P, q, &s0, &m);
                nn_part part = {q, P, n, part_scratch(f, l, 0)};
                nn_gamma_forward_part(&r->blocks[l], &r->p, q ? NULL : &r->state, part_cache(f, q, l),
                                      f->t.act[l] + (size_t)s0 * win, f->t.act[l + 1] + (size_t)s0 * H, m, 1,
                                      &f->prng[q], &part, phase);
            }
            if (phase < 2) hr_team_barrier(f->team);
        }
    }
    for (int q = tid; q < P; q += T) {
        part_rows(n, P, q, &s0, &m);
        part_heads(f, q, s0, m, n);
    }
    for (int l = L - 1; l >= 0; l--) {
        const int win = l ? H : r->n_in;
        for (int phase = 0; phase < 2; phase++) {
            for (int q = tid; q < P; q += T) {
                part_rows(n, P, q, &s0, &m);
                nn_part part = {q, P, n, part_scratch(f, l, 1)};
                float *dx = l ? f->t.dact[l] + (size_t)s0 * H : NULL;
                if (phase == 0 && dx) memset(dx, 0, (size_t)m * H * sizeof(float));
                nn_gamma_backward_part(&r->blocks[l], &f->pp[q], part_cache(f, q, l), f->t.act[l] + (size_t)s0 * win,
                                       f->t.act[l + 1] + (size_t)s0 * H, f->t.dact[l + 1] + (size_t)s0 * H, dx, m,
                                       &part, phase);
            }
            if (phase == 0) hr_team_barrier(f->team);
        }
    }
}

/* the model's dw += the other parts' blocks, in part order, which are zeroed for the next batch (they start
 * zeroed); thread tid takes a fixed slice */
static void part_reduce(void *ctx, int tid, int T)
{
    reformer_fit *f = ((part_job *)ctx)->f;
    const size_t np = f->r->p.n, lo = np * (size_t)tid / (size_t)T, hi = np * (size_t)(tid + 1) / (size_t)T;
    float *dw = f->r->p.dw;
    for (int q = 1; q < f->nparts; q++) {
        float *src = f->pp[q].dw;
        for (size_t i = lo; i < hi; i++) {
            dw[i] += src[i];
            src[i] = 0.0f;
        }
    }
}

static int fit_batch_parts(reformer_fit *f, const int *pos, int n, hr_rng *rng, float *loss)
{
    HR_ASSERT(n <= f->cap);
    if (f->r->dropout > 0.0f) {
        uint64_t seed = hr_rng_next(rng);
        for (int q = 0; q < f->nparts; q++) hr_rng_derive(&f->prng[q], seed, (uint64_t)q);
    }
    part_job j = {f, pos, n};
    hr_team_run(f->team, part_step, &j);
    hr_team_run(f->team, part_reduce, &j);
    float sum = 0.0f;
    for (int q = 0; q < f->nparts; q++) {
        int s0, m;
        part_rows(n, f->nparts, q, &s0, &m);
        sum += f->ploss[q] * ((float)m / (float)n);
    }
    *loss = sum;
    return HR_OK;
}

static int fit_batch(void *ctx, const int *pos, int n, hr_rng *rng, float *loss)
{
    reformer_fit *f = ctx;
    reformer *r = f->r;
    if (f->nparts > 1 && n >= 2 * f->nparts) return fit_batch_parts(f, pos, n, rng, loss);
    fit_forward(f, &f->train, pos, 0, n, 1, rng, 0);
    *loss = fit_loss(f, 0, n);
    fit_heads_backward(f, &r->p, 0, n, 1.0f);
    reformer_trunk_backward(r, &r->p, f->t.cache, f->t.act, f->t.dact, n);
    return HR_OK;
}

/* Evaluation of positions pos[0..n) of the validation set: chunks of up to cap rows, each cut into the
 * training's parts (on the team's threads when there is one); losses add per part, then in part order. */
typedef struct eval_job {
    reformer_fit *f;
    const int *pos;
    int n;
    double loss[REFORMER_MAX_PARTS]; /* sum over the part's rows */
    long hits[REFORMER_MAX_PARTS];
} eval_job;

static void part_evaluate(void *ctx, int tid, int T)
{
    eval_job *j = ctx;
    reformer_fit *f = j->f;
    const int P = f->nparts > 1 ? f->nparts : 1;
    const size_t K = (size_t)f->r->base.n_kernels;
    for (int q = tid; q < P; q += T) {
        int s0, m;
        part_rows(j->n, P, q, &s0, &m);
        j->loss[q] = 0.0;
        j->hits[q] = 0;
        if (m == 0) continue;
        fit_forward(f, &f->valid, j->pos + s0, s0, m, 0, NULL, q);
        j->loss[q] = (double)fit_loss(f, s0, m) * m;
        if (f->r->app_weight > 0.0f) /* rank as predict does (logits are not needed again) */
            for (int i = s0; i < s0 + m; i++)
                combine_heads(f->logits + i * K, f->alogits + i * K, (int)K, f->r->app_combine, f->r->app_beta);
        for (int i = s0; i < s0 + m; i++) f->rowbuf[i] = f->valid.rows[j->pos[i]];
        j->hits[q] = eval_select_hits(f->sel->runtime, (int)K, f->rowbuf + s0, f->logits + (size_t)s0 * K, m);
    }
}

static int fit_evaluate(void *ctx, const int *pos, int n, float *loss, float *metric)
{
    reformer_fit *f = ctx;
    const int P = f->nparts > 1 ? f->nparts : 1;
    double sum = 0.0;
    long hits = 0;
    for (int i = 0; i < n; i += f->cap) {
        eval_job j = {f, pos + i, n - i < f->cap ? n - i : f->cap, {0}, {0}};
        hr_team_run(f->team, part_evaluate, &j);
        for (int q = 0; q < P; q++) {
            sum += j.loss[q];
            hits += j.hits[q];
        }
    }
    *loss = (float)(sum / n);
    *metric = (float)hits / (float)n;
    return HR_OK;
}

static int classes_fit(reformer *r, const model_train_data *d, const model_ctx *ctx, const reformer_cfg *cfg,
                       const train_opts *o, float *train_in)
{
    reformer_fit fit;
    const int cap = cfg->train.batch_size > REFORMER_EVAL_CHUNK ? cfg->train.batch_size : REFORMER_EVAL_CHUNK;
    int rc = fit_init(&fit, r, d, train_in, cap, cfg->train.batch_size, cfg->batch_parts, ctx->threads);
    if (rc) return rc;
    train_opts opts = *o;
    opts.team = fit.team;
    train_ops ops = {fit_batch, fit_evaluate};
    train_result res;
    /* positions into the prepared sets: the shuffle permutes them exactly as it would the rows */
    rc = train_run(&ops, &fit, &r->p, &r->state, fit.train.pos, d->n_train, fit.valid.pos, d->n_valid, &opts, &res);
    fit_free(&fit);
    if (!rc) rc = model_loop_curve(&r->base, &res);
    train_result_free(&res);
    return rc;
}

const reformer_head reformer_head_classes = {
    .name = "classes",
    .valued = 0,
    .pair_input = 0,
    .input_fit = classes_input_fit,
    .layout = classes_layout,
    .reset = classes_reset,
    .fit = classes_fit,
    .ws_init = classes_ws_init,
    .select = classes_select,
};
