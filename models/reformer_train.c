/* Training of the Reformer family (models/reformer.c has the model, its inference and its files): the
 * config, the training and validation rows prepared once, and the mini-batch step, whole or in parts on a
 * team of threads (see "a training batch in parts" below), through the shared loop of train/. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "models/model.h"
#include "nn/nn.h"
#include "nn/parts.h"
#include "data/table.h"
#include "train/train.h"

#include "models/reformer_internal.h"

typedef struct reformer_cfg {
    train_opts train;
    int hidden, depth, expand;
    float dropout, tau, app_weight, app_beta;
    int input, input_bins, app_combine, app_eff;
    int batch_parts;
    int tower_dim, config_hidden;
    int mode;  /* reformer_mode */
    int norm;  /* nn_norm_kind */
    int label; /* data_label_kind */
} reformer_cfg;

enum { REFORMER_INPUT_ZSCORE, REFORMER_INPUT_LOG, REFORMER_INPUT_PLE };
enum { REFORMER_MODE_AUTO, REFORMER_MODE_CLASSES, REFORMER_MODE_PAIRS, REFORMER_MODE_TOWERS };
static const char *const mode_names[] = {"auto", "classes", "pairs", "towers", NULL};
static const char *const input_names[] = {"zscore", "log", "ple", NULL};
static const char *const app_target_names[] = {"measured", "efficiency", NULL};

#define C(field) offsetof(reformer_cfg, field)
static const hr_config_option reformer_options[] = {
    {.name = "mode", .type = HR_CONFIG_ENUM, .offset = C(mode), .def_name = "auto", .names = mode_names,
     .doc = "classes: scores over the kernel vocabulary; pairs (tables): one score per problem and configuration;"
            " towers (tables): the score u(problem) . v(configuration) + w . q(pair); auto: pairs for a benchmark"
            " table, else classes"},
    {.name = "tower_dim", .type = HR_CONFIG_INT, .offset = C(tower_dim), .def = 16, .min = 1, .max = 8192,
     .doc = "towers: width D of the problem's and the configuration's vectors u and v"},
    {.name = "config_hidden", .type = HR_CONFIG_INT, .offset = C(config_hidden), .def = 64, .min = 1, .max = 8192,
     .doc = "towers: width of the configuration tower's hidden layer"},
    {.name = "hidden", .type = HR_CONFIG_INT, .offset = C(hidden), .def = 92, .min = 1, .max = 8192,
     .doc = "width of each Gamma-block"},
    {.name = "depth", .type = HR_CONFIG_INT, .offset = C(depth), .def = 3, .min = 1, .max = REFORMER_MAX_DEPTH,
     .doc = "Gamma-blocks"},
    {.name = "expand", .type = HR_CONFIG_INT, .offset = C(expand), .def = 96, .min = 1, .max = 8192,
     .doc = "width of each block's T branch"},
    {.name = "norm", .type = HR_CONFIG_ENUM, .offset = C(norm), .def_name = "batch", .names = reformer_norm_names,
     .values = reformer_norm_values, .doc = "normalisation inside the blocks"},
    {.name = "dropout", .type = HR_CONFIG_FLOAT, .offset = C(dropout), .def = 0, .min = 0, .max = 0.99,
     .doc = "dropout rate in training"},
    {.name = "label", .type = HR_CONFIG_ENUM, .offset = C(label), .def_name = "softmax", .names = model_label_names,
     .values = model_label_values, .doc = "target distribution: softmax(-t/(tau t_min)), runtime ratio or one-hot"},
    {.name = "tau", .type = HR_CONFIG_FLOAT, .offset = C(tau), .def = 0.05, .min = 1e-6, .max = 1e6,
     .doc = "temperature of the softmax labels"},
    {.name = "input", .type = HR_CONFIG_ENUM, .offset = C(input), .def_name = "log", .names = input_names,
     .doc = "features: z-score, slog then z-score, or slog plus piecewise-linear bins"},
    {.name = "input_bins", .type = HR_CONFIG_INT, .offset = C(input_bins), .def = 32, .min = 2, .max = 4096,
     .doc = "bins per feature of input ple"},
    {.name = "applicability", .type = HR_CONFIG_FLOAT, .offset = C(app_weight), .def = 0.1, .min = 0, .max = 1e3,
     .doc = "weight of the applicability head's loss (0: no head)"},
    {.name = "combine", .type = HR_CONFIG_ENUM, .offset = C(app_combine), .def_name = "product",
     .names = reformer_combine_names, .doc = "how the two heads rank kernels"},
    {.name = "combine_weight", .type = HR_CONFIG_FLOAT, .offset = C(app_beta), .def = 1.0, .min = 0, .max = 1e3,
     .doc = "weight of the applicability head in the ranking"},
    {.name = "app_target", .type = HR_CONFIG_ENUM, .offset = C(app_eff), .def_name = "measured",
     .names = app_target_names, .doc = "applicability head's target: measured or not, or the efficiency"},
    /* two parts by default, so that a second core can share a batch (experiments/LOG.md: the two-thread runs) */
    {.name = "batch_parts", .type = HR_CONFIG_INT, .offset = C(batch_parts), .def = 2, .min = 1,
     .max = REFORMER_MAX_PARTS,
     .doc = "parts a batch is split into, one per thread (default 1 below batch 4; classes mode)"},
};
#undef C

/* Defaults: the paper-size model, 3 blocks of width 92 with T of width 96 (83,302 parameters for 76 features
 * and 70 kernels; the paper's instantiation has 80,978), plus the applicability head (6,510 more) at lambda 0.1,
 * slog input, softmax labels (tau 0.05), AdamW with warm-up + cosine, 30 epochs of batch 512 (in two parts).
 * The paper's own recipe is {"applicability": 0, "input": "zscore", "label": "soft"}; docs/BENCHMARKS.md gives
 * the current figures of both, experiments/LOG.md how each choice was measured. */
size_t reformer_config_options(hr_config_option *rows)
{
    train_opts loop = train_opts_defaults();
    loop.epochs = 30;
    loop.batch_size = 512;
    loop.lr = 3e-3f;
    loop.optim = nn_optim_defaults(NN_OPTIM_ADAMW);
    loop.optim.weight_decay = 1e-4f;
    size_t n = sizeof reformer_options / sizeof *reformer_options;
    memcpy(rows, reformer_options, sizeof reformer_options);
    return n + train_config_options(&loop, offsetof(reformer_cfg, train), rows + n);
}

static int reformer_cfg_parse(const cJSON *c, reformer_cfg *o)
{
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {"reformer", rows, reformer_config_options(rows)};
    /* the loop's run fields (name, metric name) keep train_opts_defaults' values */
    o->train = train_opts_defaults();
    int rc = hr_config_read(&t, c, o);
    if (rc) return rc;
    train_config_finish(&o->train);
    /* pairs mode: a batch is that many problems with all their candidates */
    if ((o->mode == REFORMER_MODE_PAIRS || o->mode == REFORMER_MODE_TOWERS) && !hr_config_has(c, "batch_size"))
        o->train.batch_size = REFORMER_PAIR_BATCH;
    if (!hr_config_has(c, "batch_parts") && o->train.batch_size < 4) o->batch_parts = 1;
    if (o->batch_parts > o->train.batch_size / 2)
        return hr_error(HR_EINVAL, "reformer config: \"batch_parts\" must be at most batch_size / 2 (%d), got %d",
                        o->train.batch_size / 2, o->batch_parts);
    return HR_OK;
}

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
    nn_gamma_cache cache[REFORMER_MAX_DEPTH];
    float *act[REFORMER_MAX_DEPTH + 1];  /* act[0] (cap, n_in) z-scored input, act[l] (cap, hidden) */
    float *dact[REFORMER_MAX_DEPTH + 1]; /* gradients of act[1..L] */
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
    for (int l = 0; l < f->r->depth; l++) nn_gamma_cache_free(&f->cache[l]);
    for (int l = 0; l <= f->r->depth; l++) {
        free(f->act[l]);
        free(f->dact[l]);
    }
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
    for (int l = 0; l < r->depth && !rc; l++) rc = nn_gamma_cache_init(&f->cache[l], &r->blocks[l], cap);
    for (int l = 0; l <= r->depth && !rc; l++) {
        size_t w = l ? (size_t)r->hidden : (size_t)r->n_in;
        if (!(f->act[l] = hr_calloc(c * w, sizeof(float)))) rc = HR_ENOMEM;
        if (!rc && l && !(f->dact[l] = hr_calloc(c * w, sizeof(float)))) rc = HR_ENOMEM;
    }
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
    return q ? &f->pcache[q][l] : &f->cache[l];
}

/* inputs act[0] and targets y, ay (rows s0..s0+n of the work buffers) of positions pos[0..n) of set s */
static void fit_gather(reformer_fit *f, const fit_set *s, const int *pos, int s0, int n)
{
    reformer *r = f->r;
    HR_ASSERT(s0 + n <= f->cap);
    const int nf = r->n_in, K = r->base.n_kernels;
    const size_t oK = (size_t)s0 * K;
    for (int i = 0; i < n; i++)
        memcpy(f->act[0] + (size_t)(s0 + i) * nf, s->in + (size_t)pos[i] * nf, (size_t)nf * sizeof(float));
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
    nn_linear_forward(&r->head, &r->p, f->act[r->depth] + oH, f->logits + oK, n);
    if (r->app_weight > 0.0f) nn_linear_forward(&r->app, &r->p, f->act[r->depth] + oH, f->alogits + oK, n);
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
    memset(f->dact[L] + oH, 0, (size_t)n * H * sizeof(float));
    nn_linear_backward(&r->head, p, f->act[L] + oH, f->dlogits + oK, f->dact[L] + oH, n);
    if (r->app_weight > 0.0f) {
        memset(f->dalogits + oK, 0, (size_t)n * K * sizeof *f->dalogits);
        nn_bce_logits_backward(f->aprob + oK, f->ay + oK, f->dalogits + oK, n, K, r->app_weight * share);
        nn_linear_backward(&r->app, p, f->act[L] + oH, f->dalogits + oK, f->dact[L] + oH, n);
    }
}

/* logits (n, K) for positions pos[0..n) of set s into rows s0.. of the work buffers, through part q's caches
 * (q = 0: the model's), after fit_gather */
static void fit_forward(reformer_fit *f, const fit_set *s, const int *pos, int s0, int n, int train, hr_rng *rng,
                        int q)
{
    reformer *r = f->r;
    const int nf = r->n_in, H = r->hidden;
    const size_t oH = (size_t)s0 * H;
    fit_gather(f, s, pos, s0, n);
    for (int l = 0; l < r->depth; l++)
        nn_gamma_forward(&r->blocks[l], &r->p, &r->state, part_cache(f, q, l),
                         f->act[l] + (size_t)s0 * (l ? H : nf), f->act[l + 1] + oH, n, train, rng);
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
                                      f->act[l] + (size_t)s0 * win, f->act[l + 1] + (size_t)s0 * H, m, 1,
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
                float *dx = l ? f->dact[l] + (size_t)s0 * H : NULL;
                if (phase == 0 && dx) memset(dx, 0, (size_t)m * H * sizeof(float));
                nn_gamma_backward_part(&r->blocks[l], &f->pp[q], part_cache(f, q, l), f->act[l] + (size_t)s0 * win,
                                       f->act[l + 1] + (size_t)s0 * H, f->dact[l + 1] + (size_t)s0 * H, dx, m,
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
    const int L = r->depth;
    if (f->nparts > 1 && n >= 2 * f->nparts) return fit_batch_parts(f, pos, n, rng, loss);
    fit_forward(f, &f->train, pos, 0, n, 1, rng, 0);
    *loss = fit_loss(f, 0, n);
    fit_heads_backward(f, &r->p, 0, n, 1.0f);
    for (int l = L - 1; l >= 0; l--) {
        if (l) memset(f->dact[l], 0, (size_t)n * r->hidden * sizeof(float));
        nn_gamma_backward(&r->blocks[l], &r->p, &f->cache[l], f->act[l], f->act[l + 1], f->dact[l + 1],
                          l ? f->dact[l] : NULL, n);
    }
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
                reformer_combine_heads(f->logits + i * K, f->alogits + i * K, (int)K, f->r->app_combine,
                                       f->r->app_beta);
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

/* With a team (batch_parts > 1 on more than one thread, as fit_init makes it) the parts' own threads do the
 * parallel work, and OpenBLAS keeps one thread inside each. */
int reformer_train_blas_threads(const cJSON *config, int threads)
{
    reformer_cfg cfg;
    if (reformer_cfg_parse(config, &cfg)) return threads;
    if (cfg.mode == REFORMER_MODE_PAIRS || cfg.mode == REFORMER_MODE_TOWERS)
        return threads; /* one pass over the batch, threads inside OpenBLAS */
    return cfg.batch_parts > 1 && hr_threads_resolve(threads) > 1 ? 1 : threads;
}

int reformer_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    if (d->task != MODEL_TASK_SELECT) return hr_error(HR_EINVAL, "reformer: only the select task");
    reformer_cfg cfg;
    int rc = reformer_cfg_parse(ctx->config, &cfg);
    if (rc) return rc;
    const data_table *table = d->sel ? d->sel->table : NULL;
    if ((cfg.mode == REFORMER_MODE_PAIRS || cfg.mode == REFORMER_MODE_TOWERS) && !table)
        return hr_error(HR_EINVAL, "reformer config: \"mode\": \"%s\" needs a benchmark table (--data FILE.csv)",
                        mode_names[cfg.mode]);
    if (cfg.mode == REFORMER_MODE_AUTO && table) {
        cfg.mode = REFORMER_MODE_PAIRS;
        if (!hr_config_has(ctx->config, "batch_size")) cfg.train.batch_size = REFORMER_PAIR_BATCH;
    }
    reformer *r = hr_calloc(1, sizeof *r);
    if (!r) return HR_ENOMEM;
    if ((rc = model_base_init(&r->base, &model_family_reformer, d, ctx))) goto fail;
    r->depth = cfg.depth;
    r->hidden = cfg.hidden;
    r->expand = cfg.expand;
    r->norm = cfg.norm;
    r->dropout = cfg.dropout;
    r->label = cfg.label;
    r->tau = cfg.tau;
    r->app_weight = cfg.app_weight;
    r->app_combine = cfg.app_combine;
    r->app_eff = cfg.app_eff;
    r->app_beta = cfg.app_beta;
    r->input_log = cfg.input != REFORMER_INPUT_ZSCORE;
    r->n_raw = r->base.n_features;
    if (cfg.mode == REFORMER_MODE_PAIRS) {
        if (!r->base.table || !r->base.kernel_values) {
            rc = hr_error(HR_EINVAL, "reformer: the model records no table schema (pairs mode)");
            goto fail;
        }
        r->pairs = 1;
        r->app_weight = 0.0f; /* every candidate scored is a configuration asked about: no applicability head */
        r->n_pair = data_table_pair_feature_count(r->base.table);
        r->n_raw += r->n_pair;
        if ((rc = reformer_input_fit_pairs(r, d, cfg.input == REFORMER_INPUT_PLE ? cfg.input_bins : 0))) goto fail;
        if ((rc = reformer_build(r))) goto fail;
        hr_rng init;
        hr_rng_derive(&init, ctx->seed, 1);
        for (int l = 0; l < r->depth; l++) nn_gamma_reset(&r->blocks[l], &r->p, &r->state, &init);
        nn_linear_reset(&r->head, &r->p, &init);
        train_opts o = cfg.train;
        model_loop_opts(&o, ctx, "reformer");
        o.metric_name = model_task_metric(MODEL_TASK_SELECT);
        if ((rc = reformer_pairs_fit(r, d, ctx, &o))) goto fail;
        reformer_fold(r);
        *out = &r->base;
        return HR_OK;
    }
    float *train_in = NULL;
    if (cfg.mode == REFORMER_MODE_TOWERS) {
        if (!r->base.table || !r->base.kernel_values) {
            rc = hr_error(HR_EINVAL, "reformer: the model records no table schema (towers mode)");
            goto fail;
        }
        r->towers = 1;
        r->app_weight = 0.0f; /* every candidate scored is a configuration asked about: no applicability head */
        r->tower_dim = cfg.tower_dim;
        r->cfg_hidden = cfg.config_hidden;
        if ((rc = reformer_input_fit(r, d, cfg.input == REFORMER_INPUT_PLE ? cfg.input_bins : 0, &train_in))) goto fail;
        if ((rc = reformer_towers_input_fit(r, d)) || (rc = reformer_build(r))) {
            free(train_in);
            goto fail;
        }
        hr_rng init;
        hr_rng_derive(&init, ctx->seed, 1);
        for (int l = 0; l < r->depth; l++) nn_gamma_reset(&r->blocks[l], &r->p, &r->state, &init);
        nn_linear_reset(&r->head, &r->p, &init);
        nn_linear_reset(&r->cfg1, &r->p, &init);
        nn_linear_reset(&r->cfg2, &r->p, &init);
        if (r->n_q) nn_linear_reset(&r->inter, &r->p, &init);
        train_opts o = cfg.train;
        model_loop_opts(&o, ctx, "reformer");
        o.metric_name = model_task_metric(MODEL_TASK_SELECT);
        if ((rc = reformer_towers_fit(r, d, ctx, &o, train_in))) goto fail;
        reformer_fold(r);
        *out = &r->base;
        return HR_OK;
    }
    if ((rc = reformer_input_fit(r, d, cfg.input == REFORMER_INPUT_PLE ? cfg.input_bins : 0, &train_in))) goto fail;
    if ((rc = reformer_build(r))) {
        free(train_in);
        goto fail;
    }
    hr_rng init;
    hr_rng_derive(&init, ctx->seed, 1);
    for (int l = 0; l < r->depth; l++) nn_gamma_reset(&r->blocks[l], &r->p, &r->state, &init);
    nn_linear_reset(&r->head, &r->p, &init);
    if (r->app_weight > 0.0f) nn_linear_reset(&r->app, &r->p, &init);

    train_opts o = cfg.train;
    model_loop_opts(&o, ctx, "reformer");
    o.metric_name = model_task_metric(MODEL_TASK_SELECT);
    reformer_fit fit;
    int cap = cfg.train.batch_size > REFORMER_EVAL_CHUNK ? cfg.train.batch_size : REFORMER_EVAL_CHUNK;
    if ((rc = fit_init(&fit, r, d, train_in, cap, cfg.train.batch_size, cfg.batch_parts, ctx->threads))) goto fail;
    o.team = fit.team;
    train_ops ops = {fit_batch, fit_evaluate};
    train_result res;
    /* positions into the prepared sets: the shuffle permutes them exactly as it would the rows */
    rc = train_run(&ops, &fit, &r->p, &r->state, fit.train.pos, d->n_train, fit.valid.pos, d->n_valid, &o, &res);
    fit_free(&fit);
    if (!rc) rc = model_loop_curve(&r->base, &res);
    train_result_free(&res);
    if (rc) goto fail;
    reformer_fold(r);
    *out = &r->base;
    return HR_OK;
fail:
    reformer_free(&r->base);
    return rc;
}

