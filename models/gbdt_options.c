/* The gbdt family's options (gbdt_cfg, models/models_internal.h): one table that reads --config, writes and reads
 * the options a rank model of a table records (models/gbdt.c), and prints the option reference. */
#include <stddef.h>
#include <string.h>

#include "data/data.h"
#include "gbdt/gbdt.h"
#include "models/models_internal.h"

/* The objectives a select config chooses: auto, then gbdt_mode_names without "tune", which no config names (the task
 * does) */
static const char *const objective_names[] = {"auto", "softmax", "rank", NULL};
static const int objective_values[] = {GBDT_MODE_AUTO, GBDT_MODE_SOFTMAX, GBDT_MODE_RANK};

#define P(field) offsetof(gbdt_cfg, p.field)
/* The defaults favour training time at the accuracy of slower settings (a higher learning rate, smaller leaves,
 * L2 and feature sampling, softmax labels over -t/(tau t_min)); the measurements behind each are in experiments/LOG.md. */
static const hr_config_option gbdt_options[] = {
    {.name = "objective", .type = HR_CONFIG_ENUM, .offset = offsetof(gbdt_cfg, objective), .def_name = "auto",
     .names = objective_names, .values = objective_values,
     .doc = "select: softmax over kernels, or rank (L2 per (problem, kernel) pair: log(t / t_fastest), or on a "
            "table rank_target from the pair's features); auto: rank (lambdarank) on a table or over more than 256 "
            "kernels, else softmax"},
    {.name = "label", .type = HR_CONFIG_ENUM, .offset = offsetof(gbdt_cfg, label), .def_name = "softmax",
     .names = data_label_names, .values = data_label_values,
     .doc = "softmax objective's labels: softmax(-t/(tau t_min)), runtime ratio or one-hot"},
    {.name = "tau", .type = HR_CONFIG_FLOAT, .offset = offsetof(gbdt_cfg, tau), .def = 0.1, .min = 1e-6, .max = 1e6,
     .doc = "temperature of the softmax labels"},
    {.name = "rounds", .type = HR_CONFIG_INT, .offset = P(num_rounds), .def = 100, .min = 1, .max = 1000000,
     .doc = "boosting rounds (each adds one tree per class)"},
    {.name = "num_leaves", .type = HR_CONFIG_INT, .offset = P(num_leaves), .def = 63, .min = 2, .max = 131072,
     .doc = "leaves per tree"},
    {.name = "learning_rate", .type = HR_CONFIG_DOUBLE, .offset = P(learning_rate), .def = 0.2, .min = 1e-6,
     .max = 10, .doc = "shrinkage of each tree"},
    {.name = "max_depth", .type = HR_CONFIG_INT, .offset = P(max_depth), .def = -1, .min = -1, .max = 65536,
     .doc = "deepest leaf (-1 or 0: unlimited)"},
    {.name = "min_data_in_leaf", .type = HR_CONFIG_INT, .offset = P(min_data_in_leaf), .def = 10, .min = 0,
     .max = 1 << 30, .doc = "fewest rows in a leaf"},
    {.name = "min_sum_hessian_in_leaf", .type = HR_CONFIG_DOUBLE, .offset = P(min_sum_hessian_in_leaf),
     .def = 1e-3, .min = 0, .max = 1e12, .doc = "smallest hessian sum in a leaf"},
    {.name = "lambda_l1", .type = HR_CONFIG_DOUBLE, .offset = P(lambda_l1), .def = 0, .min = 0, .max = 1e12,
     .doc = "L1 penalty on leaf values"},
    {.name = "lambda_l2", .type = HR_CONFIG_DOUBLE, .offset = P(lambda_l2), .def = 1.0, .min = 0, .max = 1e12,
     .doc = "L2 penalty on leaf values"},
    {.name = "min_gain_to_split", .type = HR_CONFIG_DOUBLE, .offset = P(min_gain_to_split), .def = 0, .min = 0,
     .max = 1e12, .doc = "smallest gain a split must bring"},
    {.name = "bagging_fraction", .type = HR_CONFIG_DOUBLE, .offset = P(bagging_fraction), .def = 1.0, .min = 1e-6,
     .max = 1, .doc = "rows sampled per bag (without replacement)"},
    {.name = "bagging_freq", .type = HR_CONFIG_INT, .offset = P(bagging_freq), .def = 0, .min = 0, .max = 1000000,
     .doc = "re-bag every this many rounds (0: no bagging)"},
    {.name = "feature_fraction", .type = HR_CONFIG_DOUBLE, .offset = P(feature_fraction), .def = 0.8, .min = 1e-6,
     .max = 1, .doc = "features sampled per tree"},
    {.name = "max_bin", .type = HR_CONFIG_INT, .offset = P(max_bin), .def = 255, .min = 2, .max = 65535,
     .doc = "value bins per feature"},
    {.name = "early_stopping_rounds", .type = HR_CONFIG_INT, .offset = P(early_stopping_rounds), .def = 20,
     .min = 0, .max = 1000000, .doc = "stop after this many rounds without a better validation loss (0: never)"},
    {.name = "histogram", .type = HR_CONFIG_ENUM, .offset = P(histogram), .def_name = "float",
     .names = gbdt_histogram_names, .values = gbdt_histogram_values,
     .doc = "gradient sums: float, or int (fixed-point, exact: the same model for any number of MPI ranks)"},
    {.name = "quantized_grad", .type = HR_CONFIG_BOOL, .offset = P(quantized_grad), .def = 0,
     .doc = "gradients discretised each round to grad_bins levels by stochastic rounding, integer histograms "
            "(LightGBM's use_quantized_grad; needs histogram float and one process)"},
    {.name = "grad_bins", .type = HR_CONFIG_INT, .offset = P(grad_bins), .def = 4, .min = 2, .max = 64,
     .doc = "quantized_grad: levels of a gradient (even)"},
    {.name = "renew_leaf", .type = HR_CONFIG_BOOL, .offset = P(renew_leaf), .def = 1,
     .doc = "quantized_grad: leaf values from the true gradients of each leaf's rows"},
    {.name = "hessian_counts", .type = HR_CONFIG_BOOL, .offset = P(hessian_counts), .def = 0,
     .doc = "quantized_grad: a split side's row count estimated from its hessian sum as LightGBM does, so "
            "histograms skip rows whose quantized gradient and hessian are 0"},
    {.name = "log_every", .type = HR_CONFIG_INT, .offset = P(log_every), .def = 10, .min = 0, .max = 1000000,
     .doc = "progress line every this many rounds (0: none)"},
    {.name = "rank_target", .type = HR_CONFIG_ENUM, .offset = offsetof(gbdt_cfg, rank_target), .def_name = "relative",
     .names = gbdt_table_target_names, .values = gbdt_table_target_values,
     .doc = "rank objective on a benchmark table: relative -log(cost/cost_best), absolute -log(cost), log1p "
            "log1p(1/cost)",
     .file = GBDT_FILE_TABLE_RANK},
    {.name = "rank_weight", .type = HR_CONFIG_ENUM, .offset = offsetof(gbdt_cfg, rank_weight), .def_name = "efficiency",
     .names = gbdt_table_weight_names, .values = NULL,
     .doc = "rank objective on a benchmark table: weight of a pair in the loss, none or its efficiency cost_best/cost"},
    {.name = "rank_loss", .type = HR_CONFIG_ENUM, .offset = offsetof(gbdt_cfg, rank_loss), .def_name = "l2",
     .names = gbdt_table_loss_names, .values = NULL,
     .doc = "rank objective on a benchmark table: l2 on rank_target, or lambdarank over each problem's pairs "
            "(relevance = efficiency)",
     .file = GBDT_FILE_TABLE_RANK},
    {.name = "tie_ratio", .type = HR_CONFIG_FLOAT, .offset = offsetof(gbdt_cfg, tie), .def = 1, .min = 1, .max = 10,
     .doc = "a candidate within this ratio of a problem's fastest takes its label: lambdarank relevance 1, the "
            "softmax objective's label (the run-to-run noise, 1.02 on the H100 GEMM table; 1: none)"},
};
#undef P

size_t gbdt_model_config_options(hr_config_option *rows)
{
    memcpy(rows, gbdt_options, sizeof gbdt_options);
    return sizeof gbdt_options / sizeof *gbdt_options;
}

/* The booster parameters, objective and labels from the config; gbdt/'s defaults for what the table lacks. */
int gbdt_cfg_read(const model_ctx *ctx, gbdt_cfg *c)
{
    hr_config_table t = {"gbdt", gbdt_options, sizeof gbdt_options / sizeof *gbdt_options};
    gbdt_params_default(&c->p);
    int rc = hr_config_read(&t, ctx->config, c);
    c->p.seed = ctx->seed;
    c->p.num_threads = ctx->threads;
    c->p.comm = ctx->comm;
    /* several processes share the rows: only exact (int) sums give every process, and one process, the same trees */
    if (rc == HR_OK && ctx->comm && c->p.histogram != GBDT_HISTOGRAM_INT) {
        c->p.histogram = GBDT_HISTOGRAM_INT;
        hr_log_printf(ctx->log, HR_LOG_INFO, "gbdt: histogram int over %d ranks (one process gives the same model with "
                      "{\"histogram\": \"int\"})\n", ctx->comm->size);
    }
    return rc;
}

int gbdt_objective_resolve(const model_train_data *d, const model_ctx *ctx, gbdt_cfg *c)
{
    const int valued = data_codec_config_width(d->codec) > 0, K = d->sel->n_kernels;
    if (c->objective == GBDT_MODE_SOFTMAX && K > GBDT_SOFTMAX_MAX_CLASSES)
        return hr_error(HR_EINVAL, "gbdt config: \"objective\": \"softmax\" scores at most %d kernels with one "
                        "booster, the data has %d: use {\"objective\": \"rank\"} (or leave it auto)",
                        GBDT_SOFTMAX_MAX_CLASSES, K);
    if (c->objective != GBDT_MODE_AUTO) return HR_OK;
    /* a warm start continues its initial model's objective, and on a table its loss unless the config names one */
    const gbdt_model *init = ctx->init && !strcmp(ctx->init->family->name, "gbdt") ? (const gbdt_model *)ctx->init : NULL;
    if (init && (init->mode == GBDT_MODE_SOFTMAX || init->mode == GBDT_MODE_RANK)) {
        c->objective = init->mode;
        if (init->mode == GBDT_MODE_RANK && init->base.kernel_values && !hr_config_has(ctx->config, "rank_loss"))
            c->rank_loss = init->loss;
        return HR_OK;
    }
    if (!valued && K <= GBDT_SOFTMAX_MAX_CLASSES) {
        c->objective = GBDT_MODE_SOFTMAX;
        return HR_OK;
    }
    c->objective = GBDT_MODE_RANK;
    /* on a table every problem's measured configurations are a list to order: lambdarank fits that order */
    if (valued && !hr_config_has(ctx->config, "rank_loss")) c->rank_loss = GBDT_TABLE_LOSS_LAMBDARANK;
    hr_log_printf(ctx->log, HR_LOG_INFO, "gbdt: objective auto: rank%s over %d %s\n",
                  c->rank_loss == GBDT_TABLE_LOSS_LAMBDARANK && valued ? " (lambdarank)" : "", K,
                  valued ? "valued configurations" : "kernels");
    return HR_OK;
}
