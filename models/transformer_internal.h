/* What the transformer family shares with its exporter (models/transformer_export.c). */
#ifndef HEURIST_MODELS_TRANSFORMER_INTERNAL_H
#define HEURIST_MODELS_TRANSFORMER_INTERNAL_H

#include <stdio.h>

#include "models/model.h"
#include "nn/nn.h"

#define TRANSFORMER_VERSION 1
#define TRANSFORMER_EVAL_CHUNK 256

typedef struct tfm {
    model base;
    int d, heads, d_ff, norm_first;
    data_label_kind label;
    float tau;
    float *zmean, *zstd; /* (n_features) */
    nn_params p;
    size_t value, pos;   /* "embed.value" (T, d), "embed.position" (T, d) */
    nn_transformer block;/* "block" */
    nn_linear head;      /* "head": d -> n_kernels */
} tfm;

/* models/transformer.c: lays out and allocates m's parameters from its sizes;
 * e (B, T, d) = z (B, T) w + p; pooled (B, d) = mean over T of h (B, T, d); frees a model. */
int transformer_build(tfm *m);
void transformer_embed(const tfm *m, const float *z, float *e, int B);
void transformer_pool(const float *h, float *pooled, int B, int T, int d);
void transformer_free(model *m);
/* models/transformer_train.c: the family's training and its config table. */
int transformer_train(const model_train_data *d, const model_ctx *ctx, model **out);
size_t transformer_config_options(hr_config_option *rows);


#endif
