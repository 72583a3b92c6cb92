/* models: the model families (gbdt, reformer, transformer, seq2seq, the baselines) behind one interface.
 *
 * A family trains on a model_train_data view (the task's dataset, the source's codec, every row's problem values
 * and features, the training rows, a validation slice for early stopping) and answers single problems through the
 * table of each task it does (model_family.select, model_family.tune):
 * - select: scores (n_kernels) over the model's kernel vocabulary, higher = more likely fastest; on a source whose
 *   configurations have values, scores of any candidate configurations from their fields;
 * - tune:   a parameter value sequence (length), valid under the codec's constraint when one exists.
 * A problem reaches a family as its values and features (data/codec.h), never in its source's terms: the model's
 * codec parses and formats problems, computes features and pair features, and names configurations.
 * Every model file is HDF5: format "heurist-model", version, family, task, the feature names and kernel names /
 * parameter vocabularies by name, the codec (a benchmark table's schema and rules), the config JSON that produced
 * it, and the family's own content under the group "family". A loader refuses newer versions.
 */
#ifndef HEURIST_MODELS_MODEL_H
#define HEURIST_MODELS_MODEL_H

#include <cJSON.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>

#include "core/config.h"
#include "core/core.h"
#include "data/codec.h"
#include "data/data.h"

#define MODEL_FILE_FORMAT "heurist-model"
#define MODEL_FILE_VERSION 1

typedef enum model_task { MODEL_TASK_SELECT = 1, MODEL_TASK_TUNE = 2 } model_task;

typedef struct model_train_data {
    model_task task;
    union {
        const data_select *sel; /* select: problems, kernels, runtimes */
        const data_tune *tune;  /* tune: problems, parameter sequences and vocabularies */
    };
    const data_codec *codec; /* the source: features, configurations, slices (data/codec.h) */
    const double *V;        /* (n_rows, data_codec_value_count) every row's problem values */
    const float *X;         /* (n_rows, n_features) every row's features (data_codec_features of V) */
    int n_features;
    const int *train;       /* (n_train) rows to fit */
    int n_train;
    const int *valid;       /* (n_valid) rows for early stopping, carved from the training rows; may be 0 */
    int n_valid;
} model_train_data;

/* The train data of every row of a dataset (the source's codec, V and X, owned; no rows: the caller sets train
 * and valid), for callers that do not go through the pipeline. Free with model_train_data_free. */
int model_train_data_select(const data_select *s, model_train_data *d);
int model_train_data_tune(const data_tune *t, model_train_data *d);
void model_train_data_free(model_train_data *d);

typedef struct model_ctx {
    uint64_t seed;
    int threads;             /* training threads (<= 0: all cores) */
    const hr_log *log;       /* progress lines */
    const cJSON *config;     /* family options; NULL = defaults */
    const char *checkpoint;  /* path for periodic checkpoints (NULL: none) */
    int resume;              /* continue from `checkpoint` if it exists */
    const char *init_model;  /* warm start from a saved model (gbdt): its path, for messages */
    /* the processes that share this training run's rows (data-parallel gbdt; each calls train with the same
     * data and ctx), or NULL: one process */
    const hr_comm *comm;
    /* every family option in effect (hr_config_effective), recorded in checkpoints and compared by name on
     * resume; NULL: none recorded */
    const char *config_effective;
    const struct model *init; /* the model at init_model, loaded by the caller (families never read model files) */
} model_ctx;

/* What a task is called ("select", "tune") and the name of its validation metric, the curve's valid_metric
 * ("top1", "param_accuracy"); NULL for a value that is no task. */
const char *model_task_name(model_task task);
const char *model_task_metric(model_task task);
/* The task of a name ("select", "tune"), 0 for any other. */
model_task model_task_of_name(const char *name);

/* One point of a training curve (epoch or boosting round); saved as a 5-column row in this order. */
typedef struct model_curve_point {
    int step;
    float train_loss;
    float valid_loss;
    float valid_metric; /* the task's validation metric, model_task_metric(task): top-1 or parameter accuracy */
    float seconds;
} model_curve_point;

typedef struct model model;
typedef struct model_ws model_ws; /* scratch for one prediction at a time; one per thread */
struct model_views;

/* predict_candidates' answer for a model that scores only its kernel vocabulary (not an error). */
#define MODEL_CANDIDATES_BY_NAME 1

/* What every task's table of a family holds: training, and the family's content in a model file. */
typedef struct model_task_ops {
    int (*train)(const model_train_data *d, const model_ctx *ctx, model **out);
    int (*save)(const model *m, hid_t group);
    /* base: the shared part read from the file (its task's included), moved into *out on success */
    int (*load)(hid_t group, model *base, model **out);
} model_task_ops;

/* A family's kernel selection. */
typedef struct model_select_ops {
    model_task_ops ops;
    /* scores (n_kernels) of the problem with values pv and features x; ws the family's scratch from ws_create.
     * Allocates nothing and writes only ws and scores, so threads with a workspace each may share m. */
    int (*predict)(const model *m, void *ws, const double *pv, const float *x, float *scores);
    /* scores (n) of n candidate configurations kv (n, config width), measured or not, for the problem whose
     * features are x; as predict. NULL, or MODEL_CANDIDATES_BY_NAME returned (nothing written) by a model that
     * scores only its kernel vocabulary: model_predict_candidates maps the candidates to that vocabulary by name. */
    int (*predict_candidates)(const model *m, void *ws, const float *x, const double *kv, int n, float *scores);
    /* What the model's scores regress (a model_target; NULL or MODEL_TARGET_NONE: scores that are no regression of
     * a per-pair target, so no R^2). */
    int (*score_target)(const model *m);
} model_select_ops;

/* A family's tuning. */
typedef struct model_tune_ops {
    model_task_ops ops;
    /* values (length) for problem q (its values, and the sequences it may take when they are known), features x;
     * decoded with the model's constraint when it has one; as model_select_ops.predict. */
    int (*predict)(const model *m, void *ws, const data_tune_problem *q, const float *x, int32_t *values);
    /* scores (n) of the sequences seqs[0..n) (each length values) for problem q, features x: the model's
     * log-probability of each, the scale of the tuner's vendor guard; -INFINITY for a sequence with a value the
     * model never writes at its position. NULL: the family scores no sequence (a baseline), and is not guarded. */
    int (*score)(const model *m, void *ws, const data_tune_problem *q, const float *x, const int32_t *const *seqs,
                 int n, float *scores);
} model_tune_ops;

typedef struct model_family {
    const char *name;
    const model_select_ops *select; /* NULL: the family does not select kernels */
    const model_tune_ops *tune;     /* NULL: it does not tune */
    /* OpenBLAS threads the run should set for train with ctx->threads = threads and this config (invalid
     * configs: any answer, train reports them): fewer when the family's own threads call OpenBLAS side by
     * side. NULL: all of `threads`. The caller sets the count; a family never changes it. */
    int (*train_blas_threads)(const cJSON *config, int threads);
    /* The family's scratch for one prediction at a time (models/predict.c wraps it in a model_ws): *out =
     * NULL when predict needs none; ws_free frees it (NULL is fine). Either hook may be NULL: no scratch. */
    int (*ws_create)(const model *m, void **out);
    void (*ws_free)(void *ws);
    long (*n_params)(const model *m);
    void (*free)(model *m);
    /* The model's named views for the layers above it, export/ (models/view.h); NULL: the family shows none. */
    int (*views)(const model *m, struct model_views *v);
    /* Writes the family's config table (its own options, then the training loop's for the nn families) into
     * rows (HR_CONFIG_MAX_OPTIONS) and returns how many: what train reads from --config, with defaults. */
    size_t (*config_options)(hr_config_option *rows);
    /* The baselines' rules for data other than their training data (any benchmark table): known_only, a
     * configuration the data measures and the family does not know is never its pick (not an error, as it is for a
     * learned model: a fixed rule has nothing to score it with); vendor_column, the data's own vendor ranking, where
     * the data records one, is what it answers for every problem of that data. */
    int known_only;
    int vendor_column;
} model_family;

/* The part every model shares; each family's struct starts with it. */
struct model {
    const model_family *family;
    model_task task;
    data_codec *codec;         /* the source's codec (owned): problems as text, features, configurations */
    int n_features;
    char **feature_names;      /* (n_features) */
    /* select */
    int n_kernels;
    char **kernels;            /* (n_kernels) */
    double *kernel_values;     /* (n_kernels, config width) each configuration's values; NULL for kernels known by
                                * name only */
    int n_combos;              /* combinations of the codec's slices (applicable's columns) */
    unsigned char *applicable; /* (n_kernels, n_combos): 1 where the training rows measured kernel k for a problem
                                * of that combination of slices (a convolution's direction, data type and layout);
                                * NULL when the model file records none or the source has no slices */
    struct model_match *match; /* valued configurations: those measured per combination of the categorical problem
                                * columns (models/match.c), or NULL */
    /* tune */
    char *solver;
    int length;
    char **param_names;        /* (length) */
    int *vocab_size;           /* (length) */
    int32_t **vocab;           /* (length)[vocab_size] */
    const data_constraint *constraint; /* the codec's rules for the solver (data_codec_constraint), or NULL */
    /* provenance */
    char *config_json;         /* the config that produced the model */
    uint64_t seed;
    int n_curve;
    model_curve_point *curve;  /* (n_curve) */
    double train_seconds;
    /* the vendor guard that an evaluation on data with the vendor's ranking and an exported runtime apply: its
     * margin (0: none) and the vendor's first candidates the pick is kept to (0: any kernel). A selection's is
     * data_portable_guard; a tuner's (model_predict_tune, margin only) keeps the decoded sequence where its score
     * beats the vendor's first pick's by the margin. Options of the command that evaluates or exports (--guard,
     * --guard-top), not saved in the model file. */
    float select_guard;
    int select_guard_top;
};

extern const model_family model_family_gbdt;
extern const model_family model_family_reformer;
extern const model_family model_family_transformer;
extern const model_family model_family_seq2seq;
extern const model_family model_family_frequent; /* baseline: the most frequent fastest kernel */
extern const model_family model_family_vendor;   /* baseline: the vendor heuristic recorded beside the data */

/* A tune model's value sequence where it makes no prediction (every value): the vendor baseline on a problem its
 * list does not hold. Evaluation counts it a miss; a command or API call that hands out predictions refuses it. */
#define MODEL_TUNE_NO_PICK INT32_MIN
static inline int model_tune_no_pick(const int32_t *values, int length)
{
    for (int j = 0; j < length; j++)
        if (values[j] == MODEL_TUNE_NO_PICK) return 1;
    return 0;
}

/* Registered families, by name ("gbdt", "reformer", "transformer", "seq2seq"). */
const model_family *model_family_find(const char *name);
/* The i-th registered family (0, 1, ...), NULL past the last. */
const model_family *model_family_at(int i);
/* "gbdt, reformer, ..." for messages. */
const char *model_family_names(void);
/* The family's table for a task, NULL when it does not do that task. */
const model_task_ops *model_family_task(const model_family *fam, model_task task);
/* Trains `fam` on d for d->task; an error when the family does not do it. */
int model_train(const model_family *fam, const model_train_data *d, const model_ctx *ctx, model **out);

/* Fills the shared part from the training data (codec, vocabularies, feature names, config, seed). */
int model_base_init(model *m, const model_family *fam, const model_train_data *d, const model_ctx *ctx);
void model_base_free(model *m);
/* Appends a curve point. */
int model_curve_add(model *m, model_curve_point pt);
/* Whether `old` (a model loaded to continue training, named `name` in messages) was trained on what `now` (a
 * model initialised from the new data) is: the same task, feature names, kernel names (when by_kernel: a model
 * whose outputs or features index the kernel vocabulary), table columns with their categorical vocabularies,
 * and tune parameters with their values, each compared by name (models/vocab_check.c). HR_OK, or HR_EINVAL
 * naming the first difference. */
int model_vocab_check(const model *old, const model *now, int by_kernel, const char *name);

int model_save(const model *m, const char *path);
int model_load(const char *path, model **out);
void model_free(model *m);
long model_n_params(const model *m);

/* ---- which kernels can run a problem (models/applicability.c) ---- */
/* The rule model_applicable used, from the most to the least specific. */
typedef enum model_applies {
    MODEL_APPLIES_UNRECORDED = -1, /* the model file records no table: every kernel */
    MODEL_APPLIES_ALL = 0,         /* no training problem had the problem's first slice (direction): every kernel;
                                    * a source without slices ranks every kernel by this rule */
    MODEL_APPLIES_DIRECTION = 1,   /* none had its other slices: the kernels measured for its first slice */
    MODEL_APPLIES_EXACT = 2,       /* the kernels measured for its combination of slices */
} model_applies;

/* ok (n_kernels): 1 for the kernels that can run the problem with values pv, as the training data shows it. */
model_applies model_applicable(const model *m, const double *pv, unsigned char *ok);

typedef struct model_ranked {
    int kernel;  /* index into m->kernels */
    float score; /* the model's score */
    float prob;  /* softmax of the scores over the ranked kernels */
} model_ranked;

/* Ranks (models/rank.c) the kernels that can run the problem with values pv by their finite scores (n_kernels,
 * from model_predict_select), best first, into out (n_kernels); returns how many were ranked, at least one, or a negative
 * status: HR_ESTATE when no kernel that can run the problem has a finite score, or when its precision class allows
 * none; *rule (may be NULL) as above. */
int model_rank(const model *m, const double *pv, const float *scores, model_ranked *out, model_applies *rule);

/* ---- single-problem prediction (models/predict.c) ----
 * A model does not change while it predicts: the scratch lives in a workspace the caller creates for that model,
 * one per thread, so one loaded model serves any number of threads at once. A workspace fits only the model it
 * was created for. A problem is given by its values (data_codec_problem_parse with m->codec, or a dataset's row).
 * A selection model's scores of the kernels a problem refuses by rule (an FP32 problem's precision class,
 * data_codec_allow_class) are -INFINITY. */
int model_ws_create(const model *m, model_ws **out);
void model_ws_free(model_ws *ws);   /* NULL is fine */
/* The problem's values from text (a find-db key or line, a table problem's "col=value,...") through m's codec:
 * pv holds data_codec_value_count(m->codec) values. */
int model_problem_parse(const model *m, const char *text, double *pv);
/* select: scores (n_kernels) of the problem, its features computed by the codec. */
int model_predict_select(const model *m, model_ws *ws, const double *pv, float *scores);
/* The same from the problem's feature vector x (n_features) when the caller has it. */
int model_predict_select_x(const model *m, model_ws *ws, const double *pv, const float *x, float *scores);
/* A model's scores (n) of any n candidate configurations kv (n, config width) for the problem with features x:
 * the family's predict_candidates, or its vocabulary scores by configuration name (-INFINITY for a configuration
 * the model does not know). Needs a source whose configurations have values. */
int model_predict_candidates(const model *m, model_ws *ws, const float *x, const double *kv, int n, float *scores);
/* select: scores (n_kernels) of the kernels ok (n_kernels) marks, -INFINITY for the others; where configurations
 * have values and the family scores them by their fields, only the marked ones are scored (a candidate's score does
 * not depend on the others'). */
int model_predict_within(const model *m, model_ws *ws, const double *pv, const unsigned char *ok, float *scores);
/* select, with the workspace's scratch only (no allocation): the kernels that can run the problem with values pv
 * (model_rank's rule and errors), best first into out (n_kernels), of which only the first k are sorted; returns
 * how many were ranked (at least one) or a negative status; prob is left 0. */
int model_rank_problem(const model *m, model_ws *ws, const double *pv, int k, model_ranked *out, model_applies *rule);
/* select: n candidate configurations kv (n, config width: any configuration, measured or not) ranked for the
 * problem with values pv by model_predict_candidates' scores into scores (n); the candidates with a finite score
 * best first into out (n; kernel = the candidate's row), only the first k sorted. Returns how many were ranked, or
 * HR_ESTATE when none has a finite score; allocates nothing. */
int model_rank_candidates(const model *m, model_ws *ws, const double *pv, const double *kv, int n, int k, float *scores,
                          model_ranked *out);
/* tune: values (length) of problem q (its values, and its candidate sequences when known). With the vendor guard
 * (m->select_guard > 0) and the vendor's first pick q->vendor, the decoded sequence stands only where its score
 * (model_tune_ops.score) beats the first pick's, a finite one, by at least the margin; otherwise values is the
 * first pick. */
int model_predict_tune(const model *m, model_ws *ws, const data_tune_problem *q, int32_t *values);
int model_predict_tune_x(const model *m, model_ws *ws, const data_tune_problem *q, const float *x, int32_t *values);
/* tune: scores (n) of the sequences seqs[0..n) for problem q (model_tune_ops.score); HR_EINVAL for a family that
 * scores none. */
int model_score_tune(const model *m, model_ws *ws, const data_tune_problem *q, const int32_t *const *seqs, int n,
                     float *scores);

/* Per-pair targets a model's scores may regress (higher = better), from a pair's cost (time, or 1 / value for
 * better=higher tables) and its problem's best cost:
 *   RELATIVE -log(cost / cost_best),  ABSOLUTE -log(cost),  LOG1P log1p(1 / cost). */
typedef enum model_target {
    MODEL_TARGET_NONE = 0,
    MODEL_TARGET_RELATIVE = 1,
    MODEL_TARGET_ABSOLUTE = 2,
    MODEL_TARGET_LOG1P = 3,
} model_target;
double model_target_value(int target, double cost, double cost_best);
/* The family's score_target, MODEL_TARGET_NONE without one. */
int model_score_target(const model *m);

/* The family's config table (config_options) printed one option a line: name, type, default, range, doc. */
void model_config_print(const model_family *fam, FILE *out);

/* For the families trained by train/'s loop: the run's fields of the loop's options from ctx (seed, log,
 * checkpoint, resume) and the family's name for its progress lines; then, after the loop, its epochs appended to m's curve. */
struct train_opts;
struct train_result;
void model_loop_opts(struct train_opts *o, const model_ctx *ctx, const char *name);
int model_loop_curve(model *m, const struct train_result *res);

#endif
