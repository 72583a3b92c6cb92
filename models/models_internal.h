/* What only the models folder shares: each task's part of the shared model struct, and the family structs that
 * exporters read. */
#ifndef HEURIST_MODELS_INTERNAL_H
#define HEURIST_MODELS_INTERNAL_H

#include <stdio.h>

#include "gbdt/gbdt.h"
#include "models/model.h"

/* What each task adds to the part every model shares (models/task_select.c, models/task_tune.c): its fields from
 * the training data, in a model file and back, freed; its name and validation metric; and a family's table for it. */
typedef struct model_task_part {
    model_task task;
    const char *name, *metric;
    int (*init)(model *m, const model_train_data *d);
    int (*write)(const model *m, hid_t f);
    int (*read)(model *m, hid_t f, const char *path);
    void (*free)(model *m);
    const model_task_ops *(*family_ops)(const model_family *fam);
    /* model_vocab_check's part of the task: its vocabularies in old and now named alike, position by position */
    int (*vocab_check)(const model *old, const model *now, int by_kernel, const char *name);
} model_task_part;
extern const model_task_part model_task_select;
extern const model_task_part model_task_tune;
/* The part of a task; NULL (with the error set) for a value that is no task. */
const model_task_part *model_task_part_of(model_task task);

/* The model in an open model file (model_load) whose "family" attribute names `fam`. */
int model_file_read(hid_t f, const char *path, const model_family *fam, model **out);

/* A copy of n strings (NULL on allocation failure). */
char **model_strv_dup(char *const *s, int n);
/* The first index where two name lists differ, or -1 when they are equal (n is the length of both). */
int model_names_differ(char *const *a, char *const *b, int n);

/* GBDT_MODE_AUTO is a config's choice only (gbdt_objective_resolve turns it into softmax or rank before training) */
enum { GBDT_MODE_AUTO = -1, GBDT_MODE_SOFTMAX = 0, GBDT_MODE_RANK = 1, GBDT_MODE_TUNE = 2 };
extern const char *const gbdt_mode_names[]; /* by GBDT_MODE_*, NULL-terminated: a model file's "objective" */

/* The family's options (models/gbdt_train.c's config table fills it); a rank model of a table records rank_target
 * and rank_loss (GBDT_FILE_TABLE_RANK). */
typedef struct gbdt_cfg {
    gbdt_params p;
    int objective;   /* select: GBDT_MODE_AUTO, GBDT_MODE_SOFTMAX or GBDT_MODE_RANK */
    int label;       /* softmax objective: data_label_kind */
    float tau;
    float tie;       /* a candidate within this ratio of a problem's fastest counts as the fastest (1: none) */
    int rank_target; /* rank objective on a table: model_target */
    int rank_weight; /* rank objective on a table: GBDT_TABLE_WEIGHT_* */
    int rank_loss;   /* rank objective on a table: GBDT_TABLE_LOSS_* */
} gbdt_cfg;
enum { GBDT_FILE_TABLE_RANK = 1 };

typedef struct gbdt_model {
    model base;
    int mode;
    int n_boosters;
    gbdt_booster **boosters; /* (n_boosters): 1 for select, length for tune */
    unsigned char *rank_cand; /* rank mode on kernels known by name: (kernel classes, n_kernels) kernels measured in
                               * training per kernel class of the codec; NULL for valued configurations */
    int target;               /* rank mode on valued configurations: the model_target the booster regresses (l2) */
    int loss;                 /* rank mode on valued configurations: GBDT_TABLE_LOSS_* */
} gbdt_model;

/* Rank mode on a convolution: a problem's kernel class (data_codec_kernel_class: direction, data type, layout,
 * 2-D/3-D, grouped) selects its candidate kernels; the same expression is written into exported runtimes. */
#define GBDT_RANK_SIGNATURES (DATA_DIR_COUNT * DATA_DTYPE_COUNT * DATA_LAYOUT_COUNT * 4)
#define GBDT_RANK_SIGNATURE_EXPR \
    "((((p->direction * DATA_DTYPE_COUNT + p->dtype) * DATA_LAYOUT_COUNT + p->layout) * 2 + " \
    "(p->f[DATA_FIELD_SPATIAL_DIM] == 3)) * 2 + (p->f[DATA_FIELD_GROUPS] > 1))"

/* A selection workspace's scratch for ranking (models/predict.c): scores and a mask (n_kernels each), and the
 * problem's features (n_features). */
float *model_ws_scores(model_ws *ws);
unsigned char *model_ws_mask(model_ws *ws);
float *model_ws_features(model_ws *ws);
/* models/rank.c: puts the k best of r (n entries: higher score first, then the lower kernel index, a total order
 * so the answer does not depend on the algorithm) first, in order; the rest follow in no order. */
void model_ranked_top(model_ranked *r, int n, int k);
/* model_rank with the caller's scratch ok (n_kernels) and only the k best sorted (model_ranked_top), prob left 0:
 * allocates nothing. */
int model_rank_within(const model *m, const double *pv, const float *scores, unsigned char *ok, int k,
                      model_ranked *out, model_applies *rule);

/* models/match.c: m->match from d's training and validation rows, for a source of valued configurations with
 * categorical problem columns (nothing otherwise); model_match_apply keeps in ok (n_kernels) the configurations
 * measured for the problem's combination and returns 1, or leaves ok and returns 0 when training had no problem of
 * that combination (or none of ok's there); its group in a model file. */
typedef struct model_match model_match;
int model_match_compute(model *m, const model_train_data *d);
int model_match_apply(const model *m, const double *pv, unsigned char *ok);
int model_match_write(const model *m, hid_t f);
int model_match_read(model *m, hid_t f);
void model_match_free(model_match *t);

/* models/applicability.c: m->applicable from d's training and validation rows, over m's kernels matched by name
 * (nothing for a source without slices); its group in a model file. */
int model_applicability_compute(model *m, const model_train_data *d);
int model_applicability_write(const model *m, hid_t f);
int model_applicability_read(model *m, hid_t f);
/* Combinations of a codec's slices, and a problem's (mixed radix in slice order; 0 without slices). */
int model_applicability_combos(const data_codec *c);
int model_slice_combo(const data_codec *c, const double *pv);

/* The gbdt family's parts: the model, its prediction and its files (models/gbdt.c), which the family's table in
 * models/gbdt_train.c names beside the training. */
void gbdt_model_free(model *m);
long gbdt_model_n_params(const model *m);
int gbdt_model_predict_select(const model *m, void *ws, const double *pv, const float *x, float *scores);
int gbdt_model_predict_tune(const model *m, void *ws, const data_tune_problem *q, const float *x, int32_t *values);
int gbdt_model_score_tune(const model *m, void *ws, const data_tune_problem *q, const float *x,
                          const int32_t *const *seqs, int n, float *scores);
int gbdt_model_score_target(const model *m);
int gbdt_model_save(const model *m, hid_t group);
int gbdt_model_load_select(hid_t group, model *base, model **out);
int gbdt_model_load_tune(hid_t group, model *base, model **out);
/* models/gbdt_options.c: the option rows, and a training's options read from its context. */
size_t gbdt_model_config_options(hr_config_option *rows);
int gbdt_cfg_read(const model_ctx *ctx, gbdt_cfg *c);
/* The select objective the config's objective comes to on d: auto is the initial model's objective (and loss) on a
 * warm start (ctx->init), else rank (lambdarank on a table, unless the config names rank_loss) where the kernels are
 * valued configurations or more than GBDT_SOFTMAX_MAX_CLASSES, softmax otherwise; an explicit softmax over more
 * kernels than that is HR_EINVAL naming {"objective": "rank"}. */
int gbdt_objective_resolve(const model_train_data *d, const model_ctx *ctx, gbdt_cfg *c);
/* models/gbdt_view.c: the family's views (model_family.views, models/view.h). */
struct model_views;
int gbdt_model_views(const model *m, struct model_views *v);

/* The gbdt family on a source of valued configurations (models/gbdt_table.c): rank rows over (problem,
 * configuration) pairs with the problem features then the pair features, and prediction of any candidates. */
typedef struct gbdt_table_pairs {
    float *x;      /* (n, d) problem features then pair features */
    float *y;      /* (n) the target, or with lambdarank the relevance: the pair's efficiency cost_best / cost */
    float *w;      /* (n) the weight: 1, or the pair's efficiency cost_best / cost */
    int *kernel;   /* (n) each pair's configuration (data kernel index) */
    size_t *start; /* (problems + 1) pairs of the i-th problem are start[i] .. start[i+1] */
    size_t n;
    int d;
} gbdt_table_pairs;
extern const char *const gbdt_table_target_names[]; /* "relative", "absolute", "log1p", NULL */
extern const int gbdt_table_target_values[];
/* Weights of the pairs in the L2 loss: none (1) or the pair's efficiency, so the fit spends its leaves on the
 * configurations near a problem's best, where a ranking is decided. */
enum { GBDT_TABLE_WEIGHT_NONE = 0, GBDT_TABLE_WEIGHT_EFFICIENCY = 1 };
/* The loss: l2 regression of the target, or LambdaRank over each problem's pairs with relevance the pair's
 * efficiency (gbdt.h's GBDT_OBJECTIVE_LAMBDARANK), whose scores order candidates but regress nothing. */
enum { GBDT_TABLE_LOSS_L2 = 0, GBDT_TABLE_LOSS_LAMBDARANK = 1 };
extern const char *const gbdt_table_loss_names[]; /* "l2", "lambdarank", NULL */
extern const char *const gbdt_table_weight_names[]; /* "none", "efficiency", NULL */
/* Every measured pair of rows[0..n) of d->sel (whose configurations have values) with `target` and `weight`. */
int gbdt_table_pairs_build(const model_train_data *d, int target, int weight, const int *rows, int n,
                           gbdt_table_pairs *out);
void gbdt_table_pairs_free(gbdt_table_pairs *p);
/* Features of one pair row: m->n_features + the codec's pair features. */
int gbdt_table_feature_count(const model *m);
/* (feature count) malloc'd names for the trees. */
int gbdt_table_names_create(const model *m, char ***out);
int gbdt_table_ws_create(const model *m, void **out);
void gbdt_table_ws_free(void *ws);
int gbdt_table_predict_candidates(const model *m, void *ws, const float *x, const double *kv, int n, float *scores);

#endif
