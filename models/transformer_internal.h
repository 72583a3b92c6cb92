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
    /* single-problem inference */
    nn_transformer_cache one;
    float *ws;           /* z (T) | e (T, d) | h (T, d) | pooled (d) */
} tfm;

#endif
