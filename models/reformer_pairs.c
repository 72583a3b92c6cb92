/* The Reformer's pairs head (family "reformer", config "mode": "pairs", for benchmark tables): every candidate
 * configuration k of a problem gets one score
 *   u = [x | data_codec_pair_features(pv, kv_k)]     problem features, then the pair's features (data/codec.h)
 *   s_k = A_f Gamma_L(... Gamma_1(input(u))) + b_f    the trunk's Gamma-blocks, a head of width 1
 * where input() is the trunk's transform (slog, z-score, "ple" bins), its problem columns fitted on the training
 * rows and its pair columns on the training pairs (models/reformer_input.c). Training is listwise
 * (models/reformer_list.c), the trunk running once per candidate. Such a model scores any configuration from its
 * fields, measured for the problem or not, and any number of them.
 * Prediction goes in chunks of REFORMER_PAIR_CHUNK candidates through the folded blocks, as matrix products over
 * the chunk, in the caller's workspace; it allocates nothing. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/reformer_internal.h"

static void pairs_setup(reformer *r, const reformer_cfg *cfg)
{
    (void)cfg;
    r->app_weight = 0.0f; /* every candidate scored is a configuration asked about: no applicability head */
    r->n_pair = data_codec_pair_feature_count(r->base.codec);
    r->n_raw = r->base.n_features + r->n_pair;
}

static int pairs_input_fit(reformer *r, const model_train_data *d, int bins, float **train_in)
{
    *train_in = NULL;
    return reformer_input_fit_pairs(r, d, bins);
}

static void pairs_layout(reformer *r)
{
    nn_linear_layout(&r->head, &r->p, "head", r->hidden, 1);
}

static void pairs_reset(reformer *r, hr_rng *rng)
{
    nn_linear_reset(&r->head, &r->p, rng);
}

/* ---- scratch and scores ---- */

static int pairs_ws_init(const reformer *r, reformer_ws *w)
{
    const size_t C = REFORMER_PAIR_CHUNK, wide = (size_t)r->hidden + (size_t)r->expand;
    w->buf = hr_calloc((size_t)r->n_raw, sizeof *w->buf);
    w->pv = hr_calloc((size_t)(data_codec_value_count(r->base.codec) + 1), sizeof *w->pv);
    w->in = hr_calloc(C * (size_t)r->n_in, sizeof *w->in);
    w->z = hr_calloc(C * wide, sizeof *w->z);
    w->y[0] = hr_calloc(C * (size_t)r->hidden, sizeof *w->y[0]);
    w->y[1] = hr_calloc(C * (size_t)r->hidden, sizeof *w->y[1]);
    int rc = w->buf && w->pv && w->in && w->z && w->y[0] && w->y[1] ? HR_OK : HR_ENOMEM;
    for (int l = 0; !rc && r->norm == NN_NORM_LAYER && l < r->depth; l++)
        rc = nn_gamma_cache_init(&w->one[l], &r->blocks[l], REFORMER_PAIR_CHUNK);
    return rc;
}

static int pairs_candidates(const reformer *r, reformer_ws *w, const float *x, const double *kv, int n,
                            float *scores)
{
    const int nk = data_codec_config_width(r->base.codec), ni = r->n_in;
    data_codec_values_of_features(r->base.codec, x, w->pv);
    const float bf = r->p.w[r->head.b];
    for (int c0 = 0; c0 < n; c0 += REFORMER_PAIR_CHUNK) {
        const int B = n - c0 < REFORMER_PAIR_CHUNK ? n - c0 : REFORMER_PAIR_CHUNK;
        for (int i = 0; i < B; i++) {
            reformer_pair_raw(r, x, w->pv, kv + (size_t)(c0 + i) * nk, w->buf);
            reformer_input(r, w->buf, w->in + (size_t)i * ni);
        }
        const float *cur = reformer_trunk_forward_chunk(r, w, B);
        for (int i = 0; i < B; i++) scores[c0 + i] = bf;
        cblas_sgemv(CblasRowMajor, CblasNoTrans, B, r->hidden, 1.0f, cur, r->hidden, r->p.w + r->head.w, 1, 1.0f,
                    scores + c0, 1);
    }
    return HR_OK;
}

/* ---- training: the listwise fit's hooks ---- */

/* Each problem's values, per set (n, n_problem + n_hardware), and one pair's raw inputs (n_raw). */
typedef struct pairs_own {
    double *pv[2];
    float *u;
} pairs_own;

static void pairs_free(reformer_list *f)
{
    pairs_own *o = f->own;
    free(o->pv[0]);
    free(o->pv[1]);
    free(o->u);
    free(o);
    f->own = NULL;
}

static int pairs_init(reformer_list *f, float *train_in)
{
    free(train_in); /* the pairs' inputs are gathered per batch */
    const reformer *r = f->r;
    const data_codec *codec = r->base.codec;
    const int nf = r->base.n_features, npv = data_codec_value_count(codec);
    pairs_own *o = hr_calloc(1, sizeof *o);
    if (!o) return HR_ENOMEM;
    f->own = o;
    for (int s = 0; s < 2; s++) {
        const reformer_cands *c = &f->set[s];
        if (!(o->pv[s] = hr_malloc((size_t)(c->n ? c->n : 1) * (npv ? npv : 1) * sizeof *o->pv[s]))) return HR_ENOMEM;
        for (int i = 0; i < c->n; i++)
            data_codec_values_of_features(codec, f->d->X + (size_t)c->rows[i] * nf, o->pv[s] + (size_t)i * npv);
    }
    return (o->u = hr_malloc((size_t)r->n_raw * sizeof *o->u)) ? HR_OK : HR_ENOMEM;
}

/* model inputs act[0] of every candidate, labels y and offsets */
static int pairs_gather(reformer_list *f, int set, const int *pos, int n)
{
    const reformer *r = f->r;
    const pairs_own *o = f->own;
    const reformer_cands *s = &f->set[set];
    const data_codec *codec = r->base.codec;
    const int nf = r->base.n_features, ni = r->n_in, nk = data_codec_config_width(codec);
    const int npv = data_codec_value_count(codec);
    const double *kv = data_select_config_values(f->d->sel);
    int e = 0;
    f->off[0] = 0;
    for (int i = 0; i < n; i++) {
        const int p = pos[i];
        const float *x = f->d->X + (size_t)s->rows[p] * nf;
        HR_ASSERT(e + s->off[p + 1] - s->off[p] <= f->cap);
        for (int j = s->off[p]; j < s->off[p + 1]; j++, e++) {
            reformer_pair_raw(r, x, o->pv[set] + (size_t)p * npv, kv + (size_t)s->kern[j] * nk, o->u);
            reformer_input(r, o->u, f->t.act[0] + (size_t)e * ni);
            f->y[e] = s->y[j];
        }
        f->off[i + 1] = e;
    }
    return e;
}

static void pairs_forward(reformer_list *f, int n, int N)
{
    (void)n;
    nn_linear_forward(&f->r->head, &f->r->p, f->t.act[f->r->depth], f->logit, N);
}

static void pairs_backward(reformer_list *f, int n, int N)
{
    reformer *r = f->r;
    const int L = r->depth;
    (void)n;
    memset(f->t.dact[L], 0, (size_t)N * r->hidden * sizeof(float));
    nn_linear_backward(&r->head, &r->p, f->t.act[L], f->dlogit, f->t.dact[L], N);
}

static const reformer_list_head pairs_list = {
    .per_problem = 0,
    .init = pairs_init,
    .free = pairs_free,
    .gather = pairs_gather,
    .forward = pairs_forward,
    .backward = pairs_backward,
};

static int pairs_fit(reformer *r, const model_train_data *d, const model_ctx *ctx, const reformer_cfg *cfg,
                     const train_opts *o, float *train_in)
{
    (void)ctx;
    (void)cfg;
    return reformer_list_fit(r, &pairs_list, d, o, train_in);
}

static int pairs_load(hid_t g, reformer *r)
{
    (void)g;
    pairs_setup(r, NULL);
    return HR_OK;
}

const reformer_head reformer_head_pairs = {
    .name = "pairs",
    .valued = 1,
    .pair_input = 1,
    .setup = pairs_setup,
    .input_fit = pairs_input_fit,
    .layout = pairs_layout,
    .reset = pairs_reset,
    .fit = pairs_fit,
    .ws_init = pairs_ws_init,
    .candidates = pairs_candidates,
    .load = pairs_load,
};
