/* What the transformer family's files share (models/transformer.c, transformer_model.c, transformer_train.c). */
#ifndef HEURIST_MODELS_TRANSFORMER_INTERNAL_H
#define HEURIST_MODELS_TRANSFORMER_INTERNAL_H

#include <stdio.h>

#include "models/model.h"
#include "nn/nn.h"
#include "train/train.h"

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

/* The family's options (the config table in models/transformer_model.c fills it). */
typedef struct tfm_cfg {
    train_opts train;
    int d, heads, d_ff, norm_first;
    float tau;
    int label; /* data_label_kind */
} tfm_cfg;
/* The config table (its own options, then the training loop's) into rows (HR_CONFIG_MAX_OPTIONS); --config's
 * options; the model's fields from them. */
size_t transformer_config_options(hr_config_option *rows);
int tfm_cfg_parse(const cJSON *c, tfm_cfg *o);
void tfm_options_apply(tfm *m, const tfm_cfg *cfg);

/* models/transformer_model.c: lays out and allocates m's parameters from its sizes;
 * e (B, T, d) = z (B, T) w + p; pooled (B, d) = mean over T of h (B, T, d); frees a model; and the family's
 * workspace, prediction and files (model_family). */
int transformer_build(tfm *m);
void transformer_embed(const tfm *m, const float *z, float *e, int B);
void transformer_pool(const float *h, float *pooled, int B, int T, int d);
void transformer_free(model *m);
int tfm_ws_create(const model *mb, void **out);
void tfm_ws_free(void *vws);
int tfm_predict(const model *mb, void *vws, const double *pv, const float *x, float *scores);
int tfm_save(const model *mb, hid_t g);
int tfm_load(hid_t g, model *base, model **out);
long tfm_n_params(const model *mb);
struct model_views;
int tfm_views(const model *mb, struct model_views *v);
/* models/transformer_train.c: trains m (built and drawn) on d through train/'s loop, in batches and evaluation
 * chunks of up to cap rows. */
struct train_opts;
int transformer_fit(tfm *m, const model_train_data *d, const struct train_opts *o, int cap);


#endif
