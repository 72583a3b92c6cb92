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
 * the model is only read). This file holds the family: its config table, the training written once over the
 * head's hooks, and prediction through the head; models/reformer_file.c holds its files.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "models/reformer_internal.h"

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
    {.name = "tie_ratio", .type = HR_CONFIG_FLOAT, .offset = C(tie), .def = 1, .min = 1, .max = 10,
     .doc = "pairs and towers: a candidate within this ratio of a problem's fastest takes its label (the run-to-run "
            "noise, 1.02 on the H100 GEMM table; 1: none)"},
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
static size_t reformer_config_options(hr_config_option *rows)
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
    float *train_in = NULL;
    if ((rc = model_base_init(&r->base, &model_family_reformer, d, ctx))) goto fail;
    r->mode = cfg.mode == REFORMER_MODE_PAIRS    ? &reformer_head_pairs
              : cfg.mode == REFORMER_MODE_TOWERS ? &reformer_head_towers
                                                 : &reformer_head_classes;
    r->depth = cfg.depth;
    r->hidden = cfg.hidden;
    r->expand = cfg.expand;
    r->norm = cfg.norm;
    r->dropout = cfg.dropout;
    r->label = cfg.label;
    r->tau = cfg.tau;
    r->tie = cfg.tie;
    r->app_weight = cfg.app_weight;
    r->app_combine = cfg.app_combine;
    r->app_eff = cfg.app_eff;
    r->app_beta = cfg.app_beta;
    r->input_log = cfg.input != REFORMER_INPUT_ZSCORE;
    r->n_raw = r->base.n_features;
    if (r->mode->table && (!r->base.table || !r->base.kernel_values)) {
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
static int reformer_predict(const model *mb, void *ws, const data_problem *prob, const float *x, float *scores)
{
    const reformer *r = (const reformer *)mb;
    (void)prob;
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
    .views = reformer_views,
    .config_options = reformer_config_options,
};
