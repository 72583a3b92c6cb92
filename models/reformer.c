/* The Reformer (family "reformer", task select), after the Reformer paper (sec. 2 and 4):
 *   x0 = (x - mean) / std                        z-score fitted on the training rows, stored in the model
 *   x_l = Gamma_l(x_{l-1}), l = 1..L             Gamma-blocks (nn_gamma: A1 x + b1 + A3 T(x) + b3, ReLU)
 *   scores = head(x_L)
 * one trunk (models/reformer_trunk.c) under one of three heads (models/reformer_internal.h): classes, the paper's
 * softmax over the kernel vocabulary with an applicability head (models/reformer_classes.c); pairs, one score per
 * (problem, configuration) of a benchmark table from the problem's and the pair's features
 * (models/reformer_pairs.c); towers, u(problem) . v(configuration) + w . q(pair) (models/reformer_towers.c).
 * With input "ple" (models/reformer_input.c) the z-scored slog features are followed by their piecewise-linear
 * encoding (after Gorishniy et al., "On Embeddings for Numerical Features in Tabular Deep Learning", 2022): per
 * feature, B bins between quantiles of the training rows, column t = clamp((v - e_t) / (e_{t+1} - e_t), 0, 1),
 * also z-scored. A ReLU network then sees where a size sits between the values the data has (a channel count of
 * 64 vs 96, a batch of 1) as separate inputs instead of one slope, which is what trees get from their splits.
 * Single-problem prediction allocates nothing: it runs in the caller's workspace (reformer_ws, one per thread;
 * the model is only read). This file holds the family: the training written once over the head's hooks, and
 * prediction through the head; models/reformer_options.c holds its options, models/reformer_file.c its files.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/reformer_internal.h"

/* With a team (batch_parts > 1 on more than one thread, as the classes head's fit makes it) the parts' own
 * threads do the parallel work, and OpenBLAS keeps one thread inside each. */
static int reformer_train_blas_threads(const cJSON *config, int threads)
{
    reformer_cfg cfg;
    if (reformer_cfg_parse(config, &cfg)) return threads;
    if (cfg.mode == REFORMER_MODE_PAIRS || cfg.mode == REFORMER_MODE_TOWERS)
        return threads; /* one pass over the batch, threads inside OpenBLAS */
    return cfg.batch_parts > 1 && hr_threads_resolve(threads) > 1 ? 1 : threads;
}

static int reformer_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    reformer_cfg cfg;
    int rc = reformer_cfg_parse(ctx->config, &cfg);
    if (rc) return rc;
    const int valued = data_codec_config_width(d->codec) > 0;
    if ((cfg.mode == REFORMER_MODE_PAIRS || cfg.mode == REFORMER_MODE_TOWERS) && !valued)
        return hr_error(HR_EINVAL, "reformer config: \"mode\": \"%s\" needs a benchmark table (--data FILE.csv)",
                        reformer_mode_names[cfg.mode]);
    if (cfg.mode == REFORMER_MODE_AUTO && valued) {
        cfg.mode = REFORMER_MODE_PAIRS;
        if (!hr_config_has(ctx->config, "batch_size")) cfg.train.batch_size = REFORMER_PAIR_BATCH;
    }
    reformer *r = hr_calloc(1, sizeof *r);
    if (!r) return HR_ENOMEM;
    float *train_in = NULL;
    if ((rc = model_base_init(&r->base, &model_family_reformer, d, ctx))) goto fail;
    reformer_options_apply(r, &cfg);
    r->n_raw = r->base.n_features;
    if (r->mode->valued && !r->base.kernel_values) {
        rc = hr_error(HR_EINVAL, "reformer: the model records no table schema (%s mode)", r->mode->name);
        goto fail;
    }
    if (r->mode->setup) r->mode->setup(r, &cfg);
    if ((rc = r->mode->input_fit(r, d, cfg.input == REFORMER_INPUT_PLE ? cfg.input_bins : 0, &train_in))) goto fail;
    if ((rc = reformer_build(r))) goto fail;
    hr_rng init;
    hr_rng_derive(&init, ctx->seed, 1);
    reformer_reset(r, &init);
    train_opts o = cfg.train;
    model_loop_opts(&o, ctx, "reformer");
    o.metric_name = model_task_metric(MODEL_TASK_SELECT);
    rc = r->mode->fit(r, d, ctx, &cfg, &o, train_in); /* takes train_in over */
    train_in = NULL;
    if (rc) goto fail;
    reformer_fold(r);
    *out = &r->base;
    return HR_OK;
fail:
    free(train_in);
    reformer_free(&r->base);
    return rc;
}

/* ---- prediction ---- */

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
    int rc = r->mode->ws_init(r, w);
    if (rc) {
        reformer_ws_free(w);
        return rc;
    }
    *out = w;
    return HR_OK;
}

/* scores (n_kernels): the head's over the vocabulary, or its candidates' scores of the model's configurations */
static int reformer_predict(const model *mb, void *ws, const double *pv, const float *x, float *scores)
{
    const reformer *r = (const reformer *)mb;
    (void)pv;
    if (r->mode->select) return r->mode->select(r, ws, x, scores);
    return r->mode->candidates(r, ws, x, mb->kernel_values, mb->n_kernels, scores);
}

/* A table model's candidates: the pairs and towers heads score their fields; the classes head scores its
 * vocabulary, which model_predict_candidates maps them to by name. */
static int reformer_candidates(const model *mb, void *ws, const float *x, const double *kv, int n, float *scores)
{
    const reformer *r = (const reformer *)mb;
    if (!r->mode->candidates) return MODEL_CANDIDATES_BY_NAME;
    return r->mode->candidates(r, ws, x, kv, n, scores);
}

static long reformer_n_params(const model *mb)
{
    return (long)((const reformer *)mb)->p.n;
}

static const model_select_ops reformer_select = {
    .ops = {.train = reformer_train, .save = reformer_save, .load = reformer_load},
    .predict = reformer_predict,
    .predict_candidates = reformer_candidates,
};

const model_family model_family_reformer = {
    .name = "reformer",
    .select = &reformer_select,
    .train_blas_threads = reformer_train_blas_threads,
    .ws_create = reformer_ws_create,
    .ws_free = reformer_ws_free,
    .n_params = reformer_n_params,
    .free = reformer_free,
    .views = reformer_views,
    .config_options = reformer_config_options,
};
