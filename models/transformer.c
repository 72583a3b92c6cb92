/* The attention baseline (family "transformer", task select): every scalar feature is a token.
 *   z_j = (x_j - mean_j) / std_j                         z-score fitted on the training rows
 *   e_j = z_j w_j + p_j             (T = n_features tokens of width d; w, p learned per feature)
 *   h = TransformerEncoderLayer(e)  (nn_transformer: one block, post-norm, ReLU FFN)
 *   scores = A_f mean_j(h_j) + b_f  linear head, softmax = the kernel distribution
 * trained like the Reformer: soft-target cross-entropy against runtime-ratio labels (or one-hot /
 * softmax) through train/'s loop. Single-problem prediction runs the same ops with a B = 1 cache in the
 * caller's workspace (tfm_ws, one per thread; the model is only read).
 * This file holds the family: its config table, the training entry and the model_family table; the model, its
 * inference and its files are models/transformer_model.c, the mini-batch step models/transformer_train.c.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/model.h"
#include "models/transformer_internal.h"
#include "nn/nn.h"
#include "train/train.h"

typedef struct tfm_cfg {
    train_opts train;
    int d, heads, d_ff, norm_first;
    float tau;
    int label; /* data_label_kind */
} tfm_cfg;

#define C(field) offsetof(tfm_cfg, field)
static const hr_config_option transformer_options[] = {
    {.name = "d", .type = HR_CONFIG_INT, .offset = C(d), .def = 32, .min = 1, .max = 4096,
     .doc = "token width (a multiple of heads)"},
    {.name = "heads", .type = HR_CONFIG_INT, .offset = C(heads), .def = 4, .min = 1, .max = 256,
     .doc = "attention heads"},
    {.name = "d_ff", .type = HR_CONFIG_INT, .offset = C(d_ff), .def = 64, .min = 1, .max = 65536,
     .doc = "width of the feed-forward layer"},
    {.name = "norm_first", .type = HR_CONFIG_INT, .offset = C(norm_first), .def = 0, .min = 0, .max = 1,
     .doc = "1: LayerNorm before attention and feed-forward (pre-norm); 0: after (post-norm)"},
    {.name = "label", .type = HR_CONFIG_ENUM, .offset = C(label), .def_name = "soft", .names = model_label_names,
     .values = model_label_values, .doc = "target distribution: runtime ratio, one-hot or softmax(-t/(tau t_min))"},
    {.name = "tau", .type = HR_CONFIG_FLOAT, .offset = C(tau), .def = 0.1, .min = 1e-6, .max = 1e6,
     .doc = "temperature of the softmax labels"},
};
#undef C

/* Defaults: d 32, 4 heads, d_ff 64, 8 epochs (an epoch costs ~20x a Reformer epoch). */
static size_t transformer_config_options(hr_config_option *rows)
{
    train_opts loop = train_opts_defaults();
    loop.epochs = 8;
    loop.batch_size = 256;
    loop.lr = 2e-3f;
    loop.optim = nn_optim_defaults(NN_OPTIM_ADAMW);
    loop.optim.weight_decay = 1e-4f;
    loop.clip = 1.0f;
    size_t n = sizeof transformer_options / sizeof *transformer_options;
    memcpy(rows, transformer_options, sizeof transformer_options);
    return n + train_config_options(&loop, offsetof(tfm_cfg, train), rows + n);
}

static int tfm_cfg_parse(const cJSON *c, tfm_cfg *o)
{
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {"transformer", rows, transformer_config_options(rows)};
    o->train = train_opts_defaults();
    int rc = hr_config_read(&t, c, o);
    if (rc) return rc;
    train_config_finish(&o->train);
    if (o->d % o->heads)
        return hr_error(HR_EINVAL, "transformer config: \"d\" must be a multiple of \"heads\" (%d), got %d", o->heads,
                        o->d);
    return HR_OK;
}

static int transformer_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    if (d->task != MODEL_TASK_SELECT) return hr_error(HR_EINVAL, "transformer: only the select task");
    tfm_cfg cfg;
    int rc = tfm_cfg_parse(ctx->config, &cfg);
    if (rc) return rc;
    tfm *m = hr_calloc(1, sizeof *m);
    if (!m) return HR_ENOMEM;
    if ((rc = model_base_init(&m->base, &model_family_transformer, d, ctx))) goto fail;
    m->d = cfg.d;
    m->heads = cfg.heads;
    m->d_ff = cfg.d_ff;
    m->norm_first = cfg.norm_first;
    m->label = cfg.label;
    m->tau = cfg.tau;
    const int nf = d->n_features;
    m->zmean = hr_malloc((size_t)nf * sizeof *m->zmean);
    m->zstd = hr_malloc((size_t)nf * sizeof *m->zstd);
    if (!m->zmean || !m->zstd) {
        rc = HR_ENOMEM;
        goto fail;
    }
    data_zscore_fit(d->X, nf, d->train, d->n_train, m->zmean, m->zstd);
    if ((rc = transformer_build(m))) goto fail;
    hr_rng init;
    hr_rng_derive(&init, ctx->seed, 1);
    /* value weights and position embeddings ~ N(0, 1) (nn.Embedding's default) */
    for (size_t i = 0; i < (size_t)nf * m->d; i++) m->p.w[m->value + i] = hr_rng_normal(&init);
    for (size_t i = 0; i < (size_t)nf * m->d; i++) m->p.w[m->pos + i] = hr_rng_normal(&init);
    nn_transformer_reset(&m->block, &m->p, &init);
    nn_linear_reset(&m->head, &m->p, &init);

    train_opts o = cfg.train;
    model_loop_opts(&o, ctx, "transformer");
    o.metric_name = model_task_metric(MODEL_TASK_SELECT);
    const int cap = cfg.train.batch_size > TRANSFORMER_EVAL_CHUNK ? cfg.train.batch_size : TRANSFORMER_EVAL_CHUNK;
    if ((rc = transformer_fit(m, d, &o, cap))) goto fail;
    *out = &m->base;
    return HR_OK;
fail:
    transformer_free(&m->base);
    return rc;
}

const model_family model_family_transformer = {
    .name = "transformer",
    .tasks = MODEL_TASK_SELECT,
    .train = transformer_train,
    .ws_create = tfm_ws_create,
    .ws_free = tfm_ws_free,
    .predict_select = tfm_predict,
    .save = tfm_save,
    .load = tfm_load,
    .n_params = tfm_n_params,
    .free = transformer_free,
    .views = tfm_views,
    .config_options = transformer_config_options,
};
