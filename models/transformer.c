/* The attention baseline (family "transformer", task select): every scalar feature is a token.
 *   z_j = (x_j - mean_j) / std_j                         z-score fitted on the training rows
 *   e_j = z_j w_j + p_j             (T = n_features tokens of width d; w, p learned per feature)
 *   h = TransformerEncoderLayer(e)  (nn_transformer: one block, post-norm, ReLU FFN)
 *   scores = A_f mean_j(h_j) + b_f  linear head, softmax = the kernel distribution
 * trained like the Reformer: soft-target cross-entropy against runtime-ratio labels (or one-hot /
 * softmax) through train/'s loop. Single-problem prediction runs the same ops with a B = 1 cache in the
 * caller's workspace (tfm_ws, one per thread; the model is only read).
 * This file holds the family: the training entry and the model_family table; the model, its options, inference and
 * files are models/transformer_model.c, the mini-batch step models/transformer_train.c.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/model.h"
#include "models/transformer_internal.h"
#include "nn/nn.h"
#include "train/train.h"

static int transformer_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    tfm_cfg cfg;
    int rc = tfm_cfg_parse(ctx->config, &cfg);
    if (rc) return rc;
    tfm *m = hr_calloc(1, sizeof *m);
    if (!m) return HR_ENOMEM;
    if ((rc = model_base_init(&m->base, &model_family_transformer, d, ctx))) goto fail;
    tfm_options_apply(m, &cfg);
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

static const model_select_ops tfm_select = {
    .ops = {.train = transformer_train, .save = tfm_save, .load = tfm_load},
    .predict = tfm_predict,
};

const model_family model_family_transformer = {
    .name = "transformer",
    .select = &tfm_select,
    .ws_create = tfm_ws_create,
    .ws_free = tfm_ws_free,
    .n_params = tfm_n_params,
    .free = transformer_free,
    .views = tfm_views,
    .config_options = transformer_config_options,
};
