/* heurist.h: the C API of heurist, for programs and language bindings (in the manner of LightGBM's c_api.h).
 *
 * A trained model file (written by `heurist train`) is loaded once and then asked, for one problem or a batch of
 * them, which kernels to run (a selection model) or which tuning parameters to use (a tuning model). Problems are
 * text in the terms of the data the model was trained on: MIOpen find-db keys for a convolution model, e.g.
 * "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F", or a benchmark table's column values for a table model,
 * e.g. "M=128,N=4096,K=4096,dtype=bf16".
 *
 * - Every function returns HEURIST_OK (0) or a negative heurist_status; heurist_last_error() then holds a
 *   one-line message for the calling thread. Every function takes a NULL model: the calls that return a status
 *   return HEURIST_EINVAL, the accessors 0 (HEURIST_TASK_NONE) or NULL with that message left.
 * - A loaded model is never modified: one handle may serve any number of threads at once. A predictor
 *   (heurist_predictor_create) is a model with its own workspace, for one thread at a time: its calls allocate
 *   nothing, the way to ask many single problems.
 * - A problem may also be given as values (heurist_model_problem_count doubles, a categorical column's value as
 *   the index of its name, heurist_model_category_name), and a table model's candidates as a matrix of
 *   configuration values (heurist_model_config_count doubles a row, row-major), so a program that holds the
 *   numbers never formats text.
 * - Build with `pkg-config --cflags --libs heurist` (an install's lib/pkgconfig, or the build folder's
 *   heurist-uninstalled.pc): -lheurist with an rpath, so the program finds libheurist.so.1 where it was linked.
 * - The status codes are core's (HR_* in core/core.h), checked at build time.
 */
#ifndef HEURIST_H
#define HEURIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HEURIST_API_VERSION 2

/* The symbols libheurist exports. */
#if defined(HEURIST_BUILDING_API) && defined(__GNUC__)
#define HEURIST_API __attribute__((visibility("default")))
#else
#define HEURIST_API
#endif

typedef enum heurist_status {
    HEURIST_OK = 0,
    HEURIST_EINVAL = -1,   /* bad argument: a problem key that does not parse, a model of the other task */
    HEURIST_EIO = -2,      /* a file could not be read */
    HEURIST_ENOMEM = -3,   /* out of memory */
    HEURIST_EFORMAT = -4,  /* not a heurist model file, or a damaged one */
    HEURIST_EVERSION = -5, /* a model file written by a newer heurist */
    HEURIST_ESTATE = -6,   /* call not valid for this model */
} heurist_status;

typedef enum heurist_task { HEURIST_TASK_NONE = 0 /* a NULL model */, HEURIST_TASK_SELECT = 1, HEURIST_TASK_TUNE = 2 } heurist_task;

typedef struct heurist_model heurist_model;

/* The calling thread's message for the last failed call. */
HEURIST_API const char *heurist_last_error(void);
/* HEURIST_API_VERSION of the library linked. */
HEURIST_API int heurist_api_version(void);

HEURIST_API int heurist_model_load(const char *path, heurist_model **out);
HEURIST_API void heurist_model_free(heurist_model *m); /* NULL is fine */

/* What the model does, and its vocabularies. */
HEURIST_API heurist_task heurist_model_task(const heurist_model *m);
HEURIST_API int heurist_model_kernel_count(const heurist_model *m);              /* selection: kernels it knows */
HEURIST_API const char *heurist_model_kernel_name(const heurist_model *m, int k); /* NULL when k is out of range */
HEURIST_API int heurist_model_param_count(const heurist_model *m);               /* tuning: parameters it predicts */
HEURIST_API const char *heurist_model_param_name(const heurist_model *m, int j);       /* NULL when j is out of range */

/* Selection, one problem: the kernels that can run it (as the training data shows), best first.
 * kernel[i] indexes the model's kernels, prob[i] (may be NULL) is its softmax probability over the ranked
 * kernels; at most `capacity` entries are written and *n_ranked receives how many kernels were ranked (at
 * least one). A kernel whose score is NaN or infinite is not ranked; when no kernel gets a finite score (a
 * diverged or damaged model), or the problem's precision class allows none of the model's kernels, the call
 * returns HEURIST_ESTATE and writes nothing. */
HEURIST_API int heurist_rank(const heurist_model *m, const char *key, int capacity, int *kernel, float *prob, int *n_ranked);
/* Selection, a batch: best[i] is the first kernel heurist_rank gives for keys[i]; threads 0 = all cores.
 * On a key that does not parse (HEURIST_EINVAL) or that no kernel gets a finite score for (HEURIST_ESTATE),
 * best[i] = -1 and the call returns the first such error after the whole batch. */
HEURIST_API int heurist_rank_batch(const heurist_model *m, const char *const *keys, int n, int threads, int *best);

/* Tuning, one problem: values (heurist_model_param_count) receives the predicted parameter values; a model that
 * makes no prediction for the problem (the vendor baseline on a problem its list does not hold) returns
 * HEURIST_ESTATE with values zeroed. */
HEURIST_API int heurist_tune(const heurist_model *m, const char *key, int32_t *values);
/* Tuning, a batch: values is (n, param_count), row-major. A key that does not parse, or one the model makes no
 * prediction for, gets a row of zeros and the call returns the first such error after the whole batch. */
HEURIST_API int heurist_tune_batch(const heurist_model *m, const char *const *keys, int n, int threads, int32_t *values);

/* A predictor: a model with a reusable workspace, for one thread at a time. Its calls allocate nothing, but for a
 * call with more candidates than the model knows configurations and any call before it had: the workspace grows
 * once to that count. (The Reformer's matrix products go through OpenBLAS, which allocates job buffers of its own
 * when it runs on several threads: OPENBLAS_NUM_THREADS=1 suits a predictor per thread.) The model must outlive its
 * predictors. */
typedef struct heurist_predictor heurist_predictor;
HEURIST_API int heurist_predictor_create(const heurist_model *m, heurist_predictor **out);
HEURIST_API void heurist_predictor_free(heurist_predictor *p); /* NULL is fine */

/* A problem's columns (a table's problem then hardware columns; a convolution key's fields, then layout, dtype,
 * direction and precision class) and a table model's configuration columns (0 for a model whose kernels are known
 * by name only). A name is NULL for j out of range. */
HEURIST_API int heurist_model_problem_count(const heurist_model *m);
HEURIST_API const char *heurist_model_problem_name(const heurist_model *m, int j);
HEURIST_API int heurist_model_config_count(const heurist_model *m);
HEURIST_API const char *heurist_model_config_name(const heurist_model *m, int j);
/* A categorical column's vocabulary: column j < problem_count is a problem column, else configuration column
 * j - problem_count. A numeric column has 0 categories; a name is NULL for v out of range. */
HEURIST_API int heurist_model_category_count(const heurist_model *m, int column);
HEURIST_API const char *heurist_model_category_name(const heurist_model *m, int column, int v);
/* A problem as text (as heurist_predictor_rank takes it) into its values (problem_count doubles), for the calls
 * that take values. */
HEURIST_API int heurist_model_problem_parse(const heurist_model *m, const char *problem, double *values);

/* Selection. The problem as text (a find-db key, or "M=128,N=4096,K=4096,dtype=bf16") or as values
 * (problem_count doubles; a category as its index). candidates NULL: the kernels / configurations the model knows
 * that the problem allows (a table: those whose categorical problem columns match, when the model file records
 * them); else n_candidates rows of config_count doubles (category as index) in the caller's order, for a table
 * model only. Writes at most `capacity` entries, best first: index[i] (into candidates, or the model's kernels
 * when candidates is NULL) and score[i] (may be NULL; the model's score, higher is better; ties go to the lower
 * index); *n_ranked (may be NULL) = how many were ranked, those with a finite score. shortlist(k) = capacity k.
 * A value that is not finite, a category index outside its vocabulary, or n_candidates < 1 is HEURIST_EINVAL
 * naming the column (and the candidate's row); no finite score at all is HEURIST_ESTATE. */
HEURIST_API int heurist_predictor_rank(heurist_predictor *p, const char *problem, const double *candidates,
                                       int n_candidates, int capacity, int *index, float *score, int *n_ranked);
HEURIST_API int heurist_predictor_rank_values(heurist_predictor *p, const double *problem, const double *candidates,
                                              int n_candidates, int capacity, int *index, float *score, int *n_ranked);
/* A batch of n problems as values (n x problem_count, row-major), all against the same candidates (or NULL as
 * above): top (n x k) receives each problem's k best indices (-1 past the ranked count); threads 0 = all cores.
 * A problem that fails gets a row of -1 and the call returns the first such error (in problem order) after the
 * whole batch; the answer does not depend on the thread count. */
HEURIST_API int heurist_rank_values_batch(const heurist_model *m, const double *problems, int n,
                                          const double *candidates, int n_candidates, int k, int threads, int *top);
/* Tuning with a predictor: values receives param_count int32 (as heurist_tune). */
HEURIST_API int heurist_predictor_tune(heurist_predictor *p, const char *problem, int32_t *values);

/* Training, cross-validation, comparison, evaluation: the command line's jobs (`heurist train`, `cv`, `compare`,
 * `eval`), run by the same code in the calling process and thread. data: a path (find-db, perf-db, or table .csv
 * with its schema beside); params: "name=value" pairs separated by spaces or newlines, names and values exactly as
 * the command line's long options (docs/cli.md) without the "--", e.g. "model=gbdt folds=5 seed=1 threads=2"; a
 * value in quotes ('...' or "...") or a JSON object ({...}) may hold spaces; a flag takes 1, true or yes (0, false
 * or no leave it off). The call's own arguments (data, model_out, eval's model) are no params. report_json (may be
 * NULL) receives the report.json text the command writes, freed with heurist_free (where params name report=
 * or, for compare, out=, the files stay there; else they are written to a temporary folder and removed). A bad
 * option is HEURIST_EINVAL with the command line's message; a job that fails (data that does not load, training
 * that fails) is HEURIST_EIO with its message. Nothing is written to stdout (the command line's result lines are
 * the report's figures); progress goes to stderr as the command line prints it (quiet=1: warnings only), and so
 * does a bad option's message. */
HEURIST_API int heurist_train(const char *data, const char *params, const char *model_out, char **report_json);
HEURIST_API int heurist_cv(const char *data, const char *params, char **report_json);
HEURIST_API int heurist_compare(const char *data, const char *params, char **report_json);
HEURIST_API int heurist_eval(const char *model, const char *data, const char *params, char **report_json);
HEURIST_API void heurist_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
