/* The Reformer's options (models/reformer_internal.h): one table that reads --config, writes and reads the options
 * a model file records, and prints the option reference; and the model's fields set from them, by training and by
 * loading alike. */
#include <stddef.h>
#include <string.h>

#include "models/reformer_internal.h"

const char *const reformer_combine_names[] = {"product", "mask", "head", NULL};
const char *const reformer_norm_names[] = {"batch", "layer", NULL};
const int reformer_norm_values[] = {NN_NORM_BATCH, NN_NORM_LAYER};
const char *const reformer_mode_names[] = {"auto", "classes", "pairs", "towers", NULL};
static const char *const input_names[] = {"zscore", "log", "ple", NULL};
static const char *const app_target_names[] = {"measured", "efficiency", NULL};

/* The rows in the order a model file records them (REFORMER_FILE_*: depth .. mode, the towers' widths, then the
 * classes head's options). */
#define C(field) offsetof(reformer_cfg, field)
static const hr_config_option reformer_options[] = {
    {.name = "depth", .type = HR_CONFIG_INT, .offset = C(depth), .def = 3, .min = 1, .max = REFORMER_MAX_DEPTH,
     .doc = "Gamma-blocks", .file = REFORMER_FILE_TRUNK},
    {.name = "hidden", .type = HR_CONFIG_INT, .offset = C(hidden), .def = 92, .min = 1, .max = 8192,
     .doc = "width of each Gamma-block", .file = REFORMER_FILE_TRUNK},
    {.name = "expand", .type = HR_CONFIG_INT, .offset = C(expand), .def = 96, .min = 1, .max = 8192,
     .doc = "width of each block's T branch", .file = REFORMER_FILE_TRUNK},
    {.name = "norm", .type = HR_CONFIG_ENUM, .offset = C(norm), .def_name = "batch", .names = reformer_norm_names,
     .values = reformer_norm_values, .doc = "normalisation inside the blocks", .file = REFORMER_FILE_TRUNK},
    {.name = "dropout", .type = HR_CONFIG_FLOAT, .offset = C(dropout), .def = 0, .min = 0, .max = 0.99,
     .doc = "dropout rate in training", .file = REFORMER_FILE_TRUNK},
    {.name = "label", .type = HR_CONFIG_ENUM, .offset = C(label), .def_name = "softmax", .names = data_label_names,
     .values = data_label_values, .doc = "target distribution: softmax(-t/(tau t_min)), runtime ratio or one-hot",
     .file = REFORMER_FILE_TRUNK},
    {.name = "tau", .type = HR_CONFIG_FLOAT, .offset = C(tau), .def = 0.05, .min = 1e-6, .max = 1e6,
     .doc = "temperature of the softmax labels", .file = REFORMER_FILE_TRUNK},
    {.name = "tie_ratio", .type = HR_CONFIG_FLOAT, .offset = C(tie), .def = 1, .min = 1, .max = 10,
     .doc = "pairs and towers: a candidate within this ratio of a problem's fastest takes its label (the run-to-run "
            "noise, 1.02 on the H100 GEMM table; 1: none)"},
    {.name = "input", .type = HR_CONFIG_ENUM, .offset = C(input), .def_name = "log", .names = input_names,
     .doc = "features: z-score, slog then z-score, or slog plus piecewise-linear bins", .file = REFORMER_FILE_TRUNK},
    {.name = "input_bins", .type = HR_CONFIG_INT, .offset = C(input_bins), .def = 32, .min = 2, .max = 4096,
     .doc = "bins per feature of input ple"},
    /* files before version 4 hold classes-mode models */
    {.name = "mode", .type = HR_CONFIG_ENUM, .offset = C(mode), .def_name = "auto", .names = reformer_mode_names,
     .doc = "classes: scores over the kernel vocabulary; pairs (tables): one score per problem and configuration;"
            " towers (tables): the score u(problem) . v(configuration) + w . q(pair); auto: pairs for a benchmark"
            " table, else classes",
     .file = REFORMER_FILE_TRUNK, .file_since = 4},
    {.name = "tower_dim", .type = HR_CONFIG_INT, .offset = C(tower_dim), .def = 16, .min = 1, .max = 8192,
     .doc = "towers: width D of the problem's and the configuration's vectors u and v", .file = REFORMER_FILE_TOWERS},
    {.name = "config_hidden", .type = HR_CONFIG_INT, .offset = C(config_hidden), .def = 64, .min = 1, .max = 8192,
     .doc = "towers: width of the configuration tower's hidden layer", .file = REFORMER_FILE_TOWERS},
    /* version 1 files predate the applicability head */
    {.name = "applicability", .type = HR_CONFIG_FLOAT, .offset = C(app_weight), .def = 0.1, .min = 0, .max = 1e3,
     .doc = "weight of the applicability head's loss (0: no head)", .file = REFORMER_FILE_HEADS, .file_since = 2},
    {.name = "combine", .type = HR_CONFIG_ENUM, .offset = C(app_combine), .def_name = "product",
     .names = reformer_combine_names, .doc = "how the two heads rank kernels", .file = REFORMER_FILE_HEADS,
     .file_since = 2},
    {.name = "app_target", .type = HR_CONFIG_ENUM, .offset = C(app_eff), .def_name = "measured",
     .names = app_target_names, .doc = "applicability head's target: measured or not, or the efficiency",
     .file = REFORMER_FILE_HEADS, .file_since = 2, .file_optional = 1},
    {.name = "combine_weight", .type = HR_CONFIG_FLOAT, .offset = C(app_beta), .def = 1.0, .min = 0, .max = 1e3,
     .doc = "weight of the applicability head in the ranking", .file = REFORMER_FILE_HEADS, .file_since = 2,
     .file_optional = 1},
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

void reformer_config_table(hr_config_table *t, hr_config_option *rows)
{
    t->family = "reformer";
    t->options = rows;
    t->n = reformer_config_options(rows);
}

int reformer_cfg_parse(const cJSON *c, reformer_cfg *o)
{
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t;
    reformer_config_table(&t, rows);
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

const reformer_head *reformer_head_of(int mode)
{
    return mode == REFORMER_MODE_PAIRS ? &reformer_head_pairs
           : mode == REFORMER_MODE_TOWERS ? &reformer_head_towers
                                          : &reformer_head_classes;
}

void reformer_options_apply(reformer *r, const reformer_cfg *cfg)
{
    r->mode = reformer_head_of(cfg->mode);
    r->depth = cfg->depth;
    r->hidden = cfg->hidden;
    r->expand = cfg->expand;
    r->norm = cfg->norm;
    r->dropout = cfg->dropout;
    r->label = cfg->label;
    r->tau = cfg->tau;
    r->tie = cfg->tie;
    r->app_weight = cfg->app_weight;
    r->app_combine = cfg->app_combine;
    r->app_eff = cfg->app_eff;
    r->app_beta = cfg->app_beta;
    r->input_log = cfg->input != REFORMER_INPUT_ZSCORE;
    r->tower_dim = cfg->tower_dim;
    r->cfg_hidden = cfg->config_hidden;
}

void reformer_options_of(const reformer *r, reformer_cfg *cfg)
{
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t;
    reformer_config_table(&t, rows);
    hr_config_defaults(&t, cfg);
    cfg->mode = r->mode == &reformer_head_pairs    ? REFORMER_MODE_PAIRS
                : r->mode == &reformer_head_towers ? REFORMER_MODE_TOWERS
                                                   : REFORMER_MODE_CLASSES;
    cfg->depth = r->depth;
    cfg->hidden = r->hidden;
    cfg->expand = r->expand;
    cfg->norm = r->norm;
    cfg->dropout = r->dropout;
    cfg->label = r->label;
    cfg->tau = r->tau;
    cfg->tie = r->tie;
    cfg->app_weight = r->app_weight;
    cfg->app_combine = r->app_combine;
    cfg->app_eff = r->app_eff;
    cfg->app_beta = r->app_beta;
    cfg->input = r->n_ple ? REFORMER_INPUT_PLE : r->input_log ? REFORMER_INPUT_LOG : REFORMER_INPUT_ZSCORE;
    cfg->tower_dim = r->tower_dim;
    cfg->config_hidden = r->cfg_hidden;
}
