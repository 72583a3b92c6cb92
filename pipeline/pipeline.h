/* pipeline: split -> train -> evaluate -> report, the same for every model family.
 *
 * A pipe_dataset is a loaded database with the features of every row and its geometry groups.
 * pipe_run trains one family on one split's training rows (a seeded 10% of them held back for early
 * stopping, or another share, or none: pipe_opts.valid_fraction), evaluates it on the split's test rows
 * with the contract's metrics, and measures train_seconds, predict_us (median of >= 1000 single-problem
 * calls, one thread), params and model_bytes. Reports are the contract's JSON objects, written atomically.
 */
#ifndef HEURIST_PIPELINE_H
#define HEURIST_PIPELINE_H

#include <cJSON.h>

#include "data/data.h"
#include "eval/eval.h"
#include "models/model.h"

typedef struct pipe_dataset {
    model_task task;
    data_select *sel;
    data_tune *tune;
    int n;            /* rows */
    int n_features;
    float *X;         /* (n, n_features) */
    int *group;       /* (n) geometry group */
    int n_groups;
    char *name;       /* file basename, for reports */
} pipe_dataset;

/* Loads a dataset for `task` ("select" or "tune"; a perf-db needs `solver`). */
int pipe_dataset_load(const char *path, const char *task, const char *solver, const hr_log *log, pipe_dataset *out);
void pipe_dataset_free(pipe_dataset *d);
const data_problem *pipe_dataset_problem(const pipe_dataset *d, int row);

/* Per-slice breakdown for selection: top-1 by direction and by data type. */
typedef struct pipe_slice {
    long n, top1;
} pipe_slice;

typedef struct pipe_result {
    model_task task;
    int n_train, n_test;
    eval_select_metrics sel;
    eval_tune_metrics tune;
    pipe_slice by_direction[DATA_DIR_COUNT];
    pipe_slice by_dtype[DATA_DTYPE_COUNT];
    double *efficiency;   /* (n_test) select: per-problem efficiency, for plots */
    double train_seconds;
    double predict_us;
    double decode_us;     /* tune: mean decode time per problem */
    long params;
    long model_bytes;
    int n_curve;
    model_curve_point *curve; /* (n_curve) the training curve of the model */
} pipe_result;

void pipe_result_free(pipe_result *r);

typedef struct pipe_opts {
    uint64_t seed;
    int threads;
    const hr_log *log;
    const cJSON *config;
    const char *save_path;   /* keep the trained model here (NULL: a temporary file, removed) */
    const char *checkpoint;
    int resume;
    const char *init_model;
    int keep_model;          /* return the model through *out_model */
    double valid_fraction;   /* share of the training rows held back for early stopping: 0 = 0.1, < 0 = none */
} pipe_opts;

/* Trains `fam` on split->train and evaluates on split->test. */
int pipe_run(const pipe_dataset *d, const data_split *split, const model_family *fam, const pipe_opts *o,
             pipe_result *res, model **out_model);
/* Evaluates an existing model on rows `rows` (n_rows) of d. */
int pipe_evaluate(const pipe_dataset *d, const model *m, const int *rows, int n_rows, pipe_result *res);

/* The contract's report object for one result (metrics, timing, size). */
cJSON *pipe_report_object(const pipe_dataset *d, const char *model_name, const char *split_desc,
                          const pipe_result *r);
/* Mean of fold results into a report object with a "folds" array. */
cJSON *pipe_report_cv(const pipe_dataset *d, const char *model_name, int k, uint64_t seed, const pipe_result *folds);
/* Writes JSON atomically (pretty-printed). */
int pipe_json_write(const char *path, const cJSON *json);

#endif
