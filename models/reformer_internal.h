/* What the reformer family shares with its exporter (models/reformer_export.c). */
#ifndef HEURIST_MODELS_REFORMER_INTERNAL_H
#define HEURIST_MODELS_REFORMER_INTERNAL_H

#include <stdio.h>

#include "models/model.h"
#include "nn/nn.h"

#define REFORMER_VERSION 2 /* 2: the applicability head */
#define REFORMER_MAX_DEPTH 16
#define REFORMER_EVAL_CHUNK 1024

typedef struct reformer {
    model base;
    int depth, hidden, expand;
    nn_norm_kind norm;
    float dropout;
    data_label_kind label;
    float tau;
    int input_log;        /* features pass through slog first (see below) */
    float app_weight;     /* lambda of the applicability loss; 0: no applicability head */
    int app_combine;      /* reformer_combine: how predict ranks kernels from the two heads */
    int app_eff;          /* the head's target is the efficiency t_min / t_k (0 unmeasured), not 0/1 measured */
    float app_beta;       /* product: weight beta of log sigmoid(a) */
    float *zmean, *zstd;  /* (n_features), of the (transformed) features */
    nn_params p;          /* learnable: blocks then head */
    nn_params state;      /* BatchNorm running statistics */
    nn_gamma blocks[REFORMER_MAX_DEPTH];
    nn_linear head;       /* "head": hidden -> n_kernels */
    nn_linear app;        /* "app": hidden -> n_kernels, when app_weight > 0 */
    /* single-problem inference */
    float *fold;          /* batch norm: per block [W12 ((d_out + d_hidden), d_in) | b12 | A3 (d_out, d_hidden)] */
    size_t fold_off[REFORMER_MAX_DEPTH];
    float *ws;            /* workspace: x (n_features), two (hidden + expand) buffers, a (n_kernels) */
    nn_gamma_cache one[REFORMER_MAX_DEPTH]; /* layer norm: B = 1 caches */
} reformer;

/* Ranking from the two heads: log softmax(z) + log sigmoid(a); log softmax(z) with kernels whose
 * sigmoid(a) < 1/2 vetoed; or sigmoid(a) alone (with the efficiency target, the expected efficiency). */
typedef enum reformer_combine {
    REFORMER_COMBINE_PRODUCT,
    REFORMER_COMBINE_MASK,
    REFORMER_COMBINE_HEAD,
} reformer_combine;
int reformer_model_export_c(const model *m, FILE *out);

#endif
