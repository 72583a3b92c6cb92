/* Family "gbdt": our gradient-boosted trees behind the model interface.
 * select, objective "softmax" (default): one multiclass booster over kernels, trained on soft labels
 *   softmax(-t/(tau t_min)) (or "soft" runtime-ratio / "onehot" labels), scores = raw class scores.
 * select, objective "rank": one L2 booster over measured (problem, kernel) pairs regressing
 *   log(t / t_fastest) from problem features plus the kernel id (categorical); scores = -prediction.
 * tune: one multiclass booster per parameter position (the classical baseline), argmax per position.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "gbdt/gbdt.h"
#include "models/model.h"
#include "models/models_internal.h"


static const char *const known_keys[] = {"objective", "label", "tau", "rounds", "num_leaves", "learning_rate",
                                         "max_depth", "min_data_in_leaf", "min_sum_hessian_in_leaf", "lambda_l1",
                                         "lambda_l2", "min_gain_to_split", "bagging_fraction", "bagging_freq",
                                         "feature_fraction", "max_bin", "early_stopping_rounds", "log_every", NULL};

static void params_from_config(const cJSON *cfg, const model_ctx *ctx, gbdt_params *p)
{
    gbdt_params_default(p);
    p->num_rounds = (int)model_cfg_num(cfg, "rounds", 100);
    p->num_leaves = (int)model_cfg_num(cfg, "num_leaves", 63);
    /* lr 0.2 and min_data_in_leaf 10: on gfx90878 (random 80/20) the same accuracy as 0.1 / 20 in half the
     * rounds (docs/BENCHMARKS.md, section gbdt) */
    p->learning_rate = model_cfg_num(cfg, "learning_rate", 0.2);
    p->max_depth = (int)model_cfg_num(cfg, "max_depth", -1);
    p->min_data_in_leaf = (int)model_cfg_num(cfg, "min_data_in_leaf", 10);
    p->min_sum_hessian_in_leaf = model_cfg_num(cfg, "min_sum_hessian_in_leaf", 1e-3);
    p->lambda_l1 = model_cfg_num(cfg, "lambda_l1", 0);
    /* lambda_l2 1 and feature_fraction 0.8: +0.3 point top-1 on gfx90878 over 0 / 1.0 (docs/BENCHMARKS.md) */
    p->lambda_l2 = model_cfg_num(cfg, "lambda_l2", 1.0);
    p->min_gain_to_split = model_cfg_num(cfg, "min_gain_to_split", 0);
    p->bagging_fraction = model_cfg_num(cfg, "bagging_fraction", 1.0);
    p->bagging_freq = (int)model_cfg_num(cfg, "bagging_freq", 0);
    p->feature_fraction = model_cfg_num(cfg, "feature_fraction", 0.8);
    p->max_bin = (int)model_cfg_num(cfg, "max_bin", 255);
    p->early_stopping_rounds = (int)model_cfg_num(cfg, "early_stopping_rounds", 20);
    p->log_every = (int)model_cfg_num(cfg, "log_every", 10);
    p->seed = ctx->seed;
    p->num_threads = ctx->threads;
}

static void gbdt_model_free(model *m)
{
    gbdt_model *g = (gbdt_model *)m;
    for (int i = 0; i < g->n_boosters; i++) gbdt_booster_free(g->boosters[i]);
    free(g->boosters);
    free(g->rank_cand);
    model_base_free(&g->base);
    free(g);
}

/* Gathers rows of X into a contiguous (n, F) matrix. */
static float *gather(const float *X, int F, const int *rows, int n)
{
    float *x = hr_malloc((size_t)n * (size_t)F * sizeof *x);
    if (x)
        for (int i = 0; i < n; i++) memcpy(x + (size_t)i * F, X + (size_t)rows[i] * F, (size_t)F * sizeof *x);
    return x;
}

/* Signature of a problem for the rank mode's candidate kernels: direction, data type, layout, 2-D/3-D and
 * grouped or not. */
static int rank_signature(const data_problem *p)
{
    return ((((p->direction * DATA_DTYPE_COUNT + p->dtype) * DATA_LAYOUT_COUNT + p->layout) * 2 +
             (p->f[DATA_FIELD_SPATIAL_DIM] == 3)) * 2 + (p->f[DATA_FIELD_GROUPS] > 1));
}

#define RANK_SIGNATURES GBDT_RANK_SIGNATURES

/* Rank mode rows: every measured (problem, kernel) pair with target log(t / t_fastest), and every kernel that
 * was measured for some training problem of the same signature but not for this one, with target
 * log(t_slowest / t_fastest) + log 2: the find-db keeps only the kernels MIOpen measured, so an unmeasured
 * candidate is taken as slower than every measured one. Without those rows the regression never sees an
 * unmeasured kernel and ranks them first. `cand` (RANK_SIGNATURES, K) marks the candidates. */
static int rank_rows(const model_train_data *d, const unsigned char *cand, const int *rows, int n, float **xo,
                     float **yo, size_t *no)
{
    const data_select *s = d->sel;
    int F = d->n_features, K = s->n_kernels, Fe = F + 1;
    size_t cnt = 0;
    for (int i = 0; i < n; i++) {
        const unsigned char *c = cand + (size_t)rank_signature(&s->problems[rows[i]]) * K;
        for (int k = 0; k < K; k++) cnt += isfinite(s->runtime[(size_t)rows[i] * K + k]) || c[k];
    }
    float *x = hr_malloc(cnt * Fe * sizeof *x), *y = hr_malloc(cnt * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return HR_ENOMEM;
    }
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        const float *t = s->runtime + (size_t)rows[i] * K;
        const unsigned char *c = cand + (size_t)rank_signature(&s->problems[rows[i]]) * K;
        float tmin = INFINITY, tmax = 0;
        for (int k = 0; k < K; k++)
            if (isfinite(t[k])) {
                tmin = t[k] < tmin ? t[k] : tmin;
                tmax = t[k] > tmax ? t[k] : tmax;
            }
        for (int k = 0; k < K; k++) {
            if (!isfinite(t[k]) && !c[k]) continue;
            memcpy(x + at * Fe, d->X + (size_t)rows[i] * F, (size_t)F * sizeof *x);
            x[at * Fe + F] = (float)k;
            y[at] = isfinite(t[k]) ? logf(t[k] / tmin) : logf(tmax / tmin) + 0.6931472f;
            at++;
        }
    }
    *xo = x;
    *yo = y;
    *no = cnt;
    return HR_OK;
}

/* Candidates per signature from the training rows. */
static unsigned char *rank_candidates(const model_train_data *d)
{
    const data_select *s = d->sel;
    int K = s->n_kernels;
    unsigned char *cand = hr_calloc((size_t)RANK_SIGNATURES * K, 1);
    if (!cand) return NULL;
    for (int i = 0; i < d->n_train; i++) {
        unsigned char *c = cand + (size_t)rank_signature(&s->problems[d->train[i]]) * K;
        const float *t = s->runtime + (size_t)d->train[i] * K;
        for (int k = 0; k < K; k++) c[k] |= isfinite(t[k]) != 0;
    }
    return cand;
}

static int load_init(const model_ctx *ctx, const gbdt_model *like, gbdt_model **init)
{
    *init = NULL;
    if (!ctx->init_model) return HR_OK;
    model *m;
    int rc = model_load(ctx->init_model, &m);
    if (rc) return rc;
    gbdt_model *g = (gbdt_model *)m;
    if (strcmp(m->family->name, "gbdt") != 0 || g->mode != like->mode || g->n_boosters != like->n_boosters) {
        model_free(m);
        return hr_error(HR_EINVAL, "--init-model %s: not a gbdt model of the same task and objective", ctx->init_model);
    }
    *init = g;
    return HR_OK;
}

static int train_one(const gbdt_params *p, const gbdt_data *tr, const gbdt_data *va, const gbdt_booster *init,
                     const hr_log *log, gbdt_booster **out)
{
    int rc = gbdt_booster_train(p, tr, va, init, log, out);
    return rc ? hr_error_wrap(rc, "gbdt") : rc;
}

/* One progress line: the features carrying most of the split gain, summed over every booster. */
static void log_importance(const gbdt_model *g, const hr_log *log)
{
    int d = gbdt_booster_num_features(g->boosters[0]);
    double *sum = hr_calloc((size_t)d, sizeof *sum), *one = hr_calloc((size_t)d, sizeof *one);
    if (sum && one) {
        double total = 0;
        for (int i = 0; i < g->n_boosters; i++) {
            gbdt_booster_importance(g->boosters[i], GBDT_IMPORTANCE_GAIN, one);
            for (int j = 0; j < d; j++) sum[j] += one[j];
        }
        for (int j = 0; j < d; j++) total += sum[j];
        char line[512];
        int len = snprintf(line, sizeof line, "gbdt: gain importance:");
        for (int r = 0; r < 8 && total > 0; r++) {
            int best = 0;
            for (int j = 1; j < d; j++)
                if (sum[j] > sum[best]) best = j;
            if (sum[best] <= 0) break;
            const char *name = gbdt_booster_feature_name(g->boosters[0], best);
            len += snprintf(line + len, sizeof line - (size_t)len, " %s %.1f%%", name, 100.0 * sum[best] / total);
            sum[best] = -1;
            if (len >= (int)sizeof line) break;
        }
        hr_log_printf(log, HR_LOG_INFO, "%s\n", line);
    }
    free(sum);
    free(one);
}

/* The training curve of a softmax model: after every round, the validation multi_logloss and the
 * validation rows' top-1 (the highest raw score is a fastest kernel). */
typedef struct curve_ctx {
    model *m;
    const data_select *sel;
    const int *rows;      /* (n) validation rows */
    const float *fastest; /* (n) each validation row's fastest runtime, found once before training */
    int n, K;
    double t0;
    int rc;
} curve_ctx;

static void softmax_round(void *ctx, int round, double valid_metric, const double *scores)
{
    curve_ctx *c = ctx;
    long hit = 0;
    for (int i = 0; i < c->n; i++) {
        const double *f = scores + (size_t)i * (size_t)c->K;
        int pred = 0;
        for (int k = 1; k < c->K; k++)
            if (f[k] > f[pred]) pred = k;
        hit += c->sel->runtime[(size_t)c->rows[i] * (size_t)c->K + pred] == c->fastest[i];
    }
    model_curve_point pt = {round, NAN, (float)valid_metric, (float)hit / (float)c->n, (float)(hr_now() - c->t0)};
    if (!c->rc) c->rc = model_curve_add(c->m, pt);
}

static int gbdt_model_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    const char *objective = model_cfg_str(ctx->config, "objective", "softmax");
    int rc = model_cfg_check(ctx->config, "gbdt", known_keys);
    if (rc) return rc;
    gbdt_model *g = hr_calloc(1, sizeof *g);
    if (!g) return HR_ENOMEM;
    if ((rc = model_base_init(&g->base, &model_family_gbdt, d, ctx))) {
        gbdt_model_free(&g->base);
        return rc;
    }
    if (d->task == MODEL_TASK_TUNE) g->mode = GBDT_MODE_TUNE;
    else if (strcmp(objective, "softmax") == 0) g->mode = GBDT_MODE_SOFTMAX;
    else if (strcmp(objective, "rank") == 0) g->mode = GBDT_MODE_RANK;
    else {
        gbdt_model_free(&g->base);
        return hr_error(HR_EINVAL, "--config: gbdt objective '%s': expected softmax or rank", objective);
    }
    g->n_boosters = g->mode == GBDT_MODE_TUNE ? d->tune->length : 1;
    g->boosters = hr_calloc((size_t)g->n_boosters, sizeof *g->boosters);
    gbdt_params p;
    params_from_config(ctx->config, ctx, &p);
    gbdt_model *init = NULL;
    if (!g->boosters || (rc = load_init(ctx, g, &init))) {
        gbdt_model_free(&g->base);
        return g->boosters ? rc : HR_ENOMEM;
    }
    int F = d->n_features;
    float *xt = NULL, *xv = NULL, *yt = NULL, *yv = NULL;
    /* the features' names travel into the trees (LightGBM export, importance); rank mode adds the kernel */
    const char **names = hr_calloc((size_t)F + 1, sizeof *names);
    if (!names) {
        gbdt_model_free(&g->base);
        if (init) model_free(&init->base);
        return HR_ENOMEM;
    }
    for (int j = 0; j < F; j++) names[j] = g->base.feature_names[j];
    names[F] = "kernel";
    if (g->mode == GBDT_MODE_RANK) {
        size_t nt, nv;
        unsigned char *cand = g->rank_cand = rank_candidates(d);
        rc = cand ? rank_rows(d, cand, d->train, d->n_train, &xt, &yt, &nt) : HR_ENOMEM;
        if (!rc) rc = rank_rows(d, cand, d->valid, d->n_valid, &xv, &yv, &nv);
        if (!rc) {
            uint8_t *cat = hr_calloc((size_t)F + 1, 1);
            if (!cat) rc = HR_ENOMEM;
            else {
                cat[F] = 1;
                p.objective = GBDT_OBJECTIVE_L2;
                p.num_class = 1;
                gbdt_data tr = {xt, nt, F + 1, yt, NULL, NULL, NULL, cat, names};
                gbdt_data va = {xv, nv, F + 1, yv, NULL, NULL, NULL, cat, names};
                rc = train_one(&p, &tr, nv ? &va : NULL, init ? init->boosters[0] : NULL, ctx->log, &g->boosters[0]);
                free(cat);
            }
        }
    } else {
        xt = gather(d->X, F, d->train, d->n_train);
        xv = gather(d->X, F, d->valid, d->n_valid);
        if (!xt || !xv) rc = HR_ENOMEM;
        p.objective = GBDT_OBJECTIVE_SOFTMAX;
        if (!rc && g->mode == GBDT_MODE_SOFTMAX) {
            data_label_kind kind = DATA_LABEL_SOFT_RATIO;
            /* softmax over -t/tau (tau 0.1) beat runtime-ratio and one-hot labels on gfx90878 (docs/BENCHMARKS.md) */
            rc = data_label_kind_parse(model_cfg_str(ctx->config, "label", "softmax"), &kind);
            int K = d->sel->n_kernels;
            p.num_class = K;
            yt = hr_malloc((size_t)d->n_train * K * sizeof *yt);
            yv = hr_malloc((size_t)(d->n_valid ? d->n_valid : 1) * K * sizeof *yv);
            float *fastest = hr_malloc((size_t)(d->n_valid ? d->n_valid : 1) * sizeof *fastest);
            if (!rc && (!yt || !yv || !fastest)) rc = HR_ENOMEM;
            if (!rc) {
                float tau = (float)model_cfg_num(ctx->config, "tau", 0.1);
                data_labels_fill(d->sel, d->train, d->n_train, kind, tau, yt);
                data_labels_fill(d->sel, d->valid, d->n_valid, kind, tau, yv);
                gbdt_data tr = {xt, (size_t)d->n_train, F, NULL, yt, NULL, NULL, NULL, names};
                gbdt_data va = {xv, (size_t)d->n_valid, F, NULL, yv, NULL, NULL, NULL, names};
                for (int i = 0; i < d->n_valid; i++) {
                    int b = data_select_best(d->sel, d->valid[i]); /* every loaded problem has a measurement */
                    fastest[i] = b < 0 ? NAN : d->sel->runtime[(size_t)d->valid[i] * K + b];
                }
                curve_ctx curve = {&g->base, d->sel, d->valid, fastest, d->n_valid, K, hr_now(), HR_OK};
                p.on_round = softmax_round;
                p.on_round_ctx = &curve;
                rc = train_one(&p, &tr, d->n_valid ? &va : NULL, init ? init->boosters[0] : NULL, ctx->log,
                               &g->boosters[0]);
                if (!rc) rc = curve.rc;
            }
            free(fastest);
        } else if (!rc) {
            const data_tune *t = d->tune;
            yt = hr_malloc((size_t)d->n_train * sizeof *yt);
            yv = hr_malloc((size_t)(d->n_valid ? d->n_valid : 1) * sizeof *yv);
            if (!yt || !yv) rc = HR_ENOMEM;
            for (int j = 0; !rc && j < t->length; j++) {
                hr_log_printf(ctx->log, HR_LOG_INFO, "gbdt: parameter %d/%d (%s, %d values)\n", j + 1, t->length,
                              t->param_names[j], t->vocab_size[j]);
                for (int i = 0; i < d->n_train; i++) yt[i] = (float)t->tokens[(size_t)d->train[i] * t->length + j];
                for (int i = 0; i < d->n_valid; i++) yv[i] = (float)t->tokens[(size_t)d->valid[i] * t->length + j];
                p.num_class = t->vocab_size[j] > 1 ? t->vocab_size[j] : 2;
                gbdt_data tr = {xt, (size_t)d->n_train, F, yt, NULL, NULL, NULL, NULL, names};
                gbdt_data va = {xv, (size_t)d->n_valid, F, yv, NULL, NULL, NULL, NULL, names};
                rc = train_one(&p, &tr, d->n_valid ? &va : NULL, init ? init->boosters[j] : NULL, ctx->log,
                               &g->boosters[j]);
            }
        }
    }
    free(xt);
    free(xv);
    free(yt);
    free(yv);
    free(names);
    if (init) model_free(&init->base);
    if (rc) {
        gbdt_model_free(&g->base);
        return rc;
    }
    log_importance(g, ctx->log);
    *out = &g->base;
    return HR_OK;
}

#define GBDT_MAX_OUT 1024

static int gbdt_model_predict_select(const model *m, const data_problem *p, const float *x, float *scores)
{
    const gbdt_model *g = (const gbdt_model *)m;
    double out[GBDT_MAX_OUT];
    int K = m->n_kernels;
    if (g->mode == GBDT_MODE_SOFTMAX) {
        HR_ASSERT(gbdt_booster_num_class(g->boosters[0]) == K && K <= GBDT_MAX_OUT);
        gbdt_booster_predict_raw_row(g->boosters[0], x, out);
        for (int k = 0; k < K; k++) scores[k] = (float)out[k];
        return HR_OK;
    }
    float xe[256 + 1];
    HR_ASSERT(m->n_features <= 256);
    memcpy(xe, x, (size_t)m->n_features * sizeof *xe);
    /* kernels never measured for this signature in training are ranked last */
    const unsigned char *cand = g->rank_cand + (size_t)rank_signature(p) * K;
    for (int k = 0; k < K; k++) {
        xe[m->n_features] = (float)k;
        gbdt_booster_predict_raw_row(g->boosters[0], xe, out);
        scores[k] = cand[k] ? (float)-out[0] : -1e30f;
    }
    return HR_OK;
}

static int gbdt_model_predict_tune(const model *m, const data_problem *p, const float *x, int32_t *values)
{
    const gbdt_model *g = (const gbdt_model *)m;
    double out[GBDT_MAX_OUT];
    for (int j = 0; j < m->length; j++) {
        HR_ASSERT(gbdt_booster_num_class(g->boosters[j]) <= GBDT_MAX_OUT);
        gbdt_booster_predict_raw_row(g->boosters[j], x, out);
        int best = 0;
        for (int c = 1; c < m->vocab_size[j]; c++)
            if (out[c] > out[best]) best = c;
        values[j] = m->vocab[j][best];
    }
    return HR_OK;
}

static int gbdt_model_save(const model *m, hid_t group)
{
    const gbdt_model *g = (const gbdt_model *)m;
    static const char *const modes[] = {"softmax", "rank", "tune"};
    int rc = hr_h5_attr_write_str(group, "objective", modes[g->mode]);
    if (!rc) rc = hr_h5_attr_write_int(group, "boosters", g->n_boosters);
    if (!rc && g->mode == GBDT_MODE_RANK)
        rc = hr_h5_write(group, "rank_candidates", H5T_NATIVE_UCHAR, GBDT_RANK_SIGNATURES, (size_t)m->n_kernels,
                         g->rank_cand);
    for (int i = 0; !rc && i < g->n_boosters; i++) {
        char name[32];
        snprintf(name, sizeof name, "booster%d", i);
        hid_t b;
        if ((rc = hr_h5_group_create(group, name, &b))) break;
        rc = gbdt_booster_write_h5(g->boosters[i], b);
        H5Gclose(b);
    }
    return rc;
}

static int gbdt_model_load(hid_t group, model *base, model **out)
{
    gbdt_model *g = hr_calloc(1, sizeof *g);
    if (!g) return HR_ENOMEM;
    char *mode = NULL;
    long long nb = 0;
    int rc = hr_h5_attr_read_str(group, "objective", &mode);
    if (!rc) rc = hr_h5_attr_read_int(group, "boosters", &nb);
    if (!rc) {
        g->mode = strcmp(mode, "softmax") == 0 ? GBDT_MODE_SOFTMAX : strcmp(mode, "rank") == 0 ? GBDT_MODE_RANK
                  : strcmp(mode, "tune") == 0  ? GBDT_MODE_TUNE : -1;
        if (g->mode < 0 || nb < 1 || nb > 64) rc = hr_error(HR_EFORMAT, "gbdt model: bad objective or booster count");
    }
    free(mode);
    if (!rc && !(g->boosters = hr_calloc((size_t)nb, sizeof *g->boosters))) rc = HR_ENOMEM;
    for (int i = 0; !rc && i < nb; i++) {
        char name[32];
        snprintf(name, sizeof name, "booster%d", i);
        hid_t b;
        if ((rc = hr_h5_group_open(group, name, &b))) break;
        rc = gbdt_booster_read_h5(b, &g->boosters[i]);
        H5Gclose(b);
        if (!rc) g->n_boosters = i + 1;
    }
    if (!rc && g->mode == GBDT_MODE_RANK) {
        g->rank_cand = hr_malloc((size_t)GBDT_RANK_SIGNATURES * (size_t)base->n_kernels);
        rc = g->rank_cand ? hr_h5_read(group, "rank_candidates", H5T_NATIVE_UCHAR, GBDT_RANK_SIGNATURES,
                                       (size_t)base->n_kernels, g->rank_cand)
                          : HR_ENOMEM;
    }
    int expect_k = base->task == MODEL_TASK_SELECT && g->mode == GBDT_MODE_SOFTMAX ? base->n_kernels : 0;
    if (!rc && expect_k && gbdt_booster_num_class(g->boosters[0]) != expect_k)
        rc = hr_error(HR_EFORMAT, "gbdt model: booster has %d classes for %d kernels",
                      gbdt_booster_num_class(g->boosters[0]), expect_k);
    if (!rc && base->task == MODEL_TASK_TUNE && g->n_boosters != base->length)
        rc = hr_error(HR_EFORMAT, "gbdt model: %d boosters for %d parameters", g->n_boosters, base->length);
    if (rc) {
        for (int i = 0; i < g->n_boosters; i++) gbdt_booster_free(g->boosters[i]);
        free(g->boosters);
        free(g->rank_cand);
        free(g);
        return rc;
    }
    g->base = *base; /* ownership of the shared part moves into the model */
    memset(base, 0, sizeof *base);
    *out = &g->base;
    return HR_OK;
}

static long gbdt_model_n_params(const model *m)
{
    const gbdt_model *g = (const gbdt_model *)m;
    long nodes = 0;
    for (int i = 0; i < g->n_boosters; i++)
        for (int t = 0; t < gbdt_booster_num_trees(g->boosters[i]); t++) {
            const gbdt_tree *tr = gbdt_booster_tree(g->boosters[i], t);
            nodes += 2L * tr->num_leaves - 1;
        }
    return nodes;
}

const model_family model_family_gbdt = {
    "gbdt",
    MODEL_TASK_SELECT | MODEL_TASK_TUNE,
    gbdt_model_train,
    gbdt_model_predict_select,
    gbdt_model_predict_tune,
    gbdt_model_save,
    gbdt_model_load,
    gbdt_model_n_params,
    gbdt_model_free,
};
