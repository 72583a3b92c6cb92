/* What only the models folder shares: the family structs that exporters read. */
#ifndef HEURIST_MODELS_INTERNAL_H
#define HEURIST_MODELS_INTERNAL_H

#include <stdio.h>

#include "gbdt/gbdt.h"
#include "models/model.h"

enum { GBDT_MODE_SOFTMAX = 0, GBDT_MODE_RANK = 1, GBDT_MODE_TUNE = 2 };

typedef struct gbdt_model {
    model base;
    int mode;
    int n_boosters;
    gbdt_booster **boosters; /* (n_boosters): 1 for select, length for tune */
    unsigned char *rank_cand; /* rank mode: (GBDT_RANK_SIGNATURES, n_kernels) kernels measured in training per signature */
} gbdt_model;

/* Rank mode: a problem's signature (direction, data type, layout, 2-D/3-D, grouped) selects its candidate
 * kernels; the same expression is written into exported runtimes. */
#define GBDT_RANK_SIGNATURES (DATA_DIR_COUNT * DATA_DTYPE_COUNT * DATA_LAYOUT_COUNT * 4)
#define GBDT_RANK_SIGNATURE_EXPR \
    "((((p->direction * DATA_DTYPE_COUNT + p->dtype) * DATA_LAYOUT_COUNT + p->layout) * 2 + " \
    "(p->f[DATA_FIELD_SPATIAL_DIM] == 3)) * 2 + (p->f[DATA_FIELD_GROUPS] > 1))"

/* models/applicability.c: m->applicable from the rows rows[0] (n_rows[0]) and rows[1] (n_rows[1]) of s,
 * over m's kernels matched by name; its group in a model file. */
int model_applicability_compute(model *m, const data_select *s, const int *const rows[2], const int n_rows[2]);
int model_applicability_write(const model *m, hid_t f);
int model_applicability_read(model *m, hid_t f);

/* The gbdt family's parts in models/gbdt.c and models/gbdt_train.c. */
int gbdt_model_rank_signature(const data_problem *p);
void gbdt_model_free(model *m);
int gbdt_model_train(const model_train_data *d, const model_ctx *ctx, model **out);
size_t gbdt_model_config_options(hr_config_option *rows);

#endif
