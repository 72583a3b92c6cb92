/* Training of the gbdt family (models/gbdt.c has the model, its prediction and its files, models/gbdt_options.c
 * its options): the rows and labels of each mode, the boosters trained through gbdt/, and the family's table.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "gbdt/gbdt.h"
#include "models/model.h"
#include "models/models_internal.h"

/* Gathers rows of X into a contiguous (n, F) matrix. */
static float *gather(const float *X, int F, const int *rows, int n)
{
    float *x = hr_malloc((size_t)n * (size_t)F * sizeof *x);
    if (x)
        for (int i = 0; i < n; i++) memcpy(x + (size_t)i * F, X + (size_t)rows[i] * F, (size_t)F * sizeof *x);
    return x;
}


/* Rank mode rows: every measured (problem, kernel) pair with target log(t / t_fastest), and every kernel that
 * was measured for some training problem of the same signature but not for this one, with target
 * log(t_slowest / t_fastest) + log 2: the find-db keeps only the kernels MIOpen measured, so an unmeasured
 * candidate is taken as slower than every measured one. Without those rows the regression never sees an
 * unmeasured kernel and ranks them first. `cand` (kernel classes, K) marks the candidates. */
static int rank_rows(const model_train_data *d, const unsigned char *cand, const int *rows, int n, float **xo,
                     float **yo, size_t *no)
{
    const data_select *s = d->sel;
    int F = d->n_features, K = s->n_kernels, Fe = F + 1, nv = data_codec_value_count(d->codec);
    size_t cnt = 0;
    for (int i = 0; i < n; i++) {
        const unsigned char *c = cand + (size_t)data_codec_kernel_class(d->codec, d->V + (size_t)rows[i] * nv) * K;
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
        const unsigned char *c = cand + (size_t)data_codec_kernel_class(d->codec, d->V + (size_t)rows[i] * nv) * K;
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

/* Candidates per kernel class from the training rows. */
static unsigned char *rank_candidates(const model_train_data *d)
{
    const data_select *s = d->sel;
    int K = s->n_kernels, nv = data_codec_value_count(d->codec);
    unsigned char *cand = hr_calloc((size_t)data_codec_kernel_class_count(d->codec) * K, 1);
    if (!cand) return NULL;
    for (int i = 0; i < d->n_train; i++) {
        unsigned char *c = cand + (size_t)data_codec_kernel_class(d->codec, d->V + (size_t)d->train[i] * nv) * K;
        const float *t = s->runtime + (size_t)d->train[i] * K;
        for (int k = 0; k < K; k++) c[k] |= isfinite(t[k]) != 0;
    }
    return cand;
}

static int check_init(const model_ctx *ctx, const gbdt_model *like, const gbdt_model **init)
{
    *init = NULL;
    const model *m = ctx->init;
    if (!m) return HR_OK;
    const gbdt_model *g = (const gbdt_model *)m;
    if (strcmp(m->family->name, "gbdt") != 0 || g->mode != like->mode || g->n_boosters != like->n_boosters)
        return hr_error(HR_EINVAL, "--init-model %s: not a gbdt model of the same task and objective", ctx->init_model);
    /* the trees address kernels (softmax classes, the rank model's kernel feature on a find-db), one-hot
     * categories and parameter values by position: the positions must name what they named in training. A rank
     * model of a table scores a configuration by its fields, whatever the set of configurations. */
    char name[1024];
    snprintf(name, sizeof name, "--init-model %s", ctx->init_model);
    int by_kernel = !(like->mode == GBDT_MODE_RANK && like->base.kernel_values);
    int rc = model_vocab_check(m, &like->base, by_kernel, name);
    if (!rc) *init = g;
    return rc;
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
 * validation rows' top-1 (eval/'s rule applied to the kernel of highest raw score, ties to the lower index). */
typedef struct curve_ctx {
    model *m;
    const data_select *sel;
    const int *rows;      /* (n) validation rows */
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
        hit += eval_select_hit(c->sel->runtime + (size_t)c->rows[i] * (size_t)c->K, c->K, pred);
    }
    model_curve_point pt = {round, NAN, (float)valid_metric, (float)hit / (float)c->n, (float)(hr_now() - c->t0)};
    if (!c->rc) c->rc = model_curve_add(c->m, pt);
}

/* The curve of a rank model on a table: after every round the validation L2 and the validation problems' top-1
 * (the pair of highest prediction, ties to the first). */
typedef struct table_curve_ctx {
    model *m;
    const data_select *sel;
    const int *rows;               /* (n) validation problems */
    int n;
    const gbdt_table_pairs *pairs; /* their pairs */
    double t0;
    int rc;
} table_curve_ctx;

static void table_round(void *ctx, int round, double valid_metric, const double *scores)
{
    table_curve_ctx *c = ctx;
    int K = c->sel->n_kernels;
    long hit = 0;
    for (int i = 0; i < c->n; i++) {
        size_t b = c->pairs->start[i], e = c->pairs->start[i + 1], best = b;
        for (size_t j = b + 1; j < e; j++)
            if (scores[j] > scores[best]) best = j;
        if (e > b) hit += eval_select_hit(c->sel->runtime + (size_t)c->rows[i] * K, K, c->pairs->kernel[best]);
    }
    model_curve_point pt = {round, NAN, (float)valid_metric, c->n ? (float)hit / (float)c->n : NAN,
                            (float)(hr_now() - c->t0)};
    if (!c->rc) c->rc = model_curve_add(c->m, pt);
}

/* Rank mode on a source of valued configurations: one L2 booster over every measured pair of the training
 * problems. */
static int train_table(gbdt_model *g, const model_train_data *d, const model_ctx *ctx, const gbdt_cfg *cfg,
                       const gbdt_booster *init)
{
    g->target = cfg->rank_target;
    g->loss = cfg->rank_loss;
    int lambdarank = g->loss == GBDT_TABLE_LOSS_LAMBDARANK;
    gbdt_params p = cfg->p;
    p.objective = lambdarank ? GBDT_OBJECTIVE_LAMBDARANK : GBDT_OBJECTIVE_L2;
    p.num_class = 1;
    gbdt_table_pairs tr, va;
    char **names = NULL;
    int Fe = gbdt_table_feature_count(&g->base);
    /* lambdarank's relevance is the pair's efficiency: built as the weight, then moved into the label */
    int weight = lambdarank ? GBDT_TABLE_WEIGHT_EFFICIENCY : cfg->rank_weight;
    int rc = gbdt_table_pairs_build(d, g->target, weight, d->train, d->n_train, &tr);
    if (!rc && (rc = gbdt_table_pairs_build(d, g->target, weight, d->valid, d->n_valid, &va)))
        gbdt_table_pairs_free(&tr);
    if (rc) return rc;
    if (lambdarank) {
        /* a pair within the tie ratio of its problem's best is as relevant as the best */
        for (size_t i = 0; i < tr.n; i++) tr.y[i] = cfg->tie > 1 && tr.w[i] * cfg->tie >= 1 ? 1.0f : tr.w[i];
        for (size_t i = 0; i < va.n; i++) va.y[i] = cfg->tie > 1 && va.w[i] * cfg->tie >= 1 ? 1.0f : va.w[i];
    }
    if (!tr.n) rc = hr_error(HR_EINVAL, "gbdt rank: the training problems measure no configuration");
    if (!rc) rc = gbdt_table_names_create(&g->base, &names);
    if (!rc) {
        hr_log_printf(ctx->log, HR_LOG_INFO, "gbdt: rank on %zu training pairs, %zu validation pairs, %d features\n",
                      tr.n, va.n, Fe);
        gbdt_data dt = {tr.x, tr.n, Fe, tr.y, NULL, lambdarank ? NULL : tr.w, NULL, NULL,
                        (const char *const *)names, tr.start, (size_t)d->n_train};
        gbdt_data dv = {va.x, va.n, Fe, va.y, NULL, lambdarank ? NULL : va.w, NULL, NULL,
                        (const char *const *)names, va.start, (size_t)d->n_valid};
        table_curve_ctx curve = {&g->base, d->sel, d->valid, d->n_valid, &va, hr_now(), HR_OK};
        p.on_round = table_round;
        p.on_round_ctx = &curve;
        rc = train_one(&p, &dt, va.n ? &dv : NULL, init, ctx->log, &g->boosters[0]);
        if (!rc) rc = curve.rc;
    }
    if (names)
        for (int j = 0; j < Fe; j++) free(names[j]);
    free(names);
    gbdt_table_pairs_free(&tr);
    gbdt_table_pairs_free(&va);
    return rc;
}

/* Trains the boosters of `mode` (select: the config's objective; tune: one booster per parameter). */
static int gbdt_model_train(const model_train_data *d, const model_ctx *ctx, const gbdt_cfg *cfgp, int mode,
                            model **out)
{
    gbdt_cfg cfg = *cfgp;
    int rc;
    gbdt_model *g = hr_calloc(1, sizeof *g);
    if (!g) return HR_ENOMEM;
    if ((rc = model_base_init(&g->base, &model_family_gbdt, d, ctx))) {
        gbdt_model_free(&g->base);
        return rc;
    }
    g->mode = mode;
    g->n_boosters = g->mode == GBDT_MODE_TUNE ? d->tune->length : 1;
    g->boosters = hr_calloc((size_t)g->n_boosters, sizeof *g->boosters);
    gbdt_params p = cfg.p;
    const gbdt_model *init = NULL;
    rc = g->boosters ? check_init(ctx, g, &init) : HR_ENOMEM;
    if (rc) {
        gbdt_model_free(&g->base);
        return rc;
    }
    int F = d->n_features;
    float *xt = NULL, *xv = NULL, *yt = NULL, *yv = NULL;
    /* the features' names travel into the trees (LightGBM export, importance); rank mode adds the kernel */
    const char **names = hr_calloc((size_t)F + 1, sizeof *names);
    if (!names) {
        gbdt_model_free(&g->base);
        return HR_ENOMEM;
    }
    for (int j = 0; j < F; j++) names[j] = g->base.feature_names[j];
    names[F] = "kernel";
    if (g->mode == GBDT_MODE_RANK && data_codec_config_width(d->codec) > 0) {
        if (init && init->target != cfg.rank_target)
            rc = hr_error(HR_EINVAL, "--init-model %s: a rank model of another rank_target", ctx->init_model);
        else if (init && init->loss != cfg.rank_loss)
            rc = hr_error(HR_EINVAL, "--init-model %s: a rank model of rank_loss %s, the config asks %s", ctx->init_model,
                          gbdt_table_loss_names[init->loss], gbdt_table_loss_names[cfg.rank_loss]);
        else if (init && gbdt_booster_num_features(init->boosters[0]) != gbdt_table_feature_count(&g->base))
            rc = hr_error(HR_EINVAL, "--init-model %s: %d features, this table gives %d", ctx->init_model,
                          gbdt_booster_num_features(init->boosters[0]), gbdt_table_feature_count(&g->base));
        else rc = train_table(g, d, ctx, &cfg, init ? init->boosters[0] : NULL);
    } else if (g->mode == GBDT_MODE_RANK) {
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
                gbdt_data tr = {xt, nt, F + 1, yt, NULL, NULL, NULL, cat, names, NULL, 0};
                gbdt_data va = {xv, nv, F + 1, yv, NULL, NULL, NULL, cat, names, NULL, 0};
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
            data_label_kind kind = (data_label_kind)cfg.label;
            int K = d->sel->n_kernels;
            p.num_class = K;
            yt = hr_malloc((size_t)d->n_train * K * sizeof *yt);
            yv = hr_malloc((size_t)(d->n_valid ? d->n_valid : 1) * K * sizeof *yv);
            if (!rc && (!yt || !yv)) rc = HR_ENOMEM;
            if (!rc) {
                float tau = cfg.tau;
                data_labels_fill_ties(d->sel, d->train, d->n_train, kind, tau, cfg.tie, yt);
                data_labels_fill_ties(d->sel, d->valid, d->n_valid, kind, tau, cfg.tie, yv);
                gbdt_data tr = {xt, (size_t)d->n_train, F, NULL, yt, NULL, NULL, NULL, names, NULL, 0};
                gbdt_data va = {xv, (size_t)d->n_valid, F, NULL, yv, NULL, NULL, NULL, names, NULL, 0};
                curve_ctx curve = {&g->base, d->sel, d->valid, d->n_valid, K, hr_now(), HR_OK};
                p.on_round = softmax_round;
                p.on_round_ctx = &curve;
                rc = train_one(&p, &tr, d->n_valid ? &va : NULL, init ? init->boosters[0] : NULL, ctx->log,
                               &g->boosters[0]);
                if (!rc) rc = curve.rc;
            }
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
                gbdt_data tr = {xt, (size_t)d->n_train, F, yt, NULL, NULL, NULL, NULL, names, NULL, 0};
                gbdt_data va = {xv, (size_t)d->n_valid, F, yv, NULL, NULL, NULL, NULL, names, NULL, 0};
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
    if (rc) {
        gbdt_model_free(&g->base);
        return rc;
    }
    log_importance(g, ctx->log);
    *out = &g->base;
    return HR_OK;
}

static int gbdt_model_train_select(const model_train_data *d, const model_ctx *ctx, model **out)
{
    gbdt_cfg cfg;
    int rc = gbdt_cfg_read(ctx, &cfg);
    if (!rc) rc = gbdt_objective_resolve(d, ctx, &cfg);
    return rc ? rc : gbdt_model_train(d, ctx, &cfg, cfg.objective, out);
}

static int gbdt_model_train_tune(const model_train_data *d, const model_ctx *ctx, model **out)
{
    gbdt_cfg cfg;
    int rc = gbdt_cfg_read(ctx, &cfg);
    return rc ? rc : gbdt_model_train(d, ctx, &cfg, GBDT_MODE_TUNE, out);
}

/* ---- the family ---- */

static const model_select_ops gbdt_select = {
    .ops = {.train = gbdt_model_train_select, .save = gbdt_model_save, .load = gbdt_model_load_select},
    .predict = gbdt_model_predict_select,
    .predict_candidates = gbdt_table_predict_candidates,
    .score_target = gbdt_model_score_target,
};

static const model_tune_ops gbdt_tune = {
    .ops = {.train = gbdt_model_train_tune, .save = gbdt_model_save, .load = gbdt_model_load_tune},
    .predict = gbdt_model_predict_tune,
    .score = gbdt_model_score_tune,
};

const model_family model_family_gbdt = {
    .name = "gbdt",
    .select = &gbdt_select,
    .tune = &gbdt_tune,
    .ws_create = gbdt_table_ws_create,
    .ws_free = gbdt_table_ws_free,
    .n_params = gbdt_model_n_params,
    .free = gbdt_model_free,
    .views = gbdt_model_views,
    .config_options = gbdt_model_config_options,
};
