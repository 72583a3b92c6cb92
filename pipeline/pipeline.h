/* pipeline: split -> train -> evaluate -> report, the same for every model family and every source.
 *
 * A pipe_dataset is a loaded database with its codec (data/codec.h), every row's problem values and features and
 * its GroupKFold groups.
 * pipe_run trains one family on one split's training rows (a seeded 10% of them held back for early
 * stopping, or another share, or none: pipe_opts.valid_fraction), evaluates it on the split's test rows
 * with the contract's metrics, and measures train_seconds, predict_us (median of >= 1000 single-problem
 * calls, one thread), params and model_bytes. pipe_run_folds does the same over K GroupKFold folds, and
 * pipe_compare runs several families on the same folds or split and writes the comparison (report.json,
 * report.md, figures). Reports are the contract's JSON objects (docs/contract.md), written atomically.
 * What differs between the tasks (the evaluation, the metrics a result holds, the report's metrics, the
 * tables and figures) lives in one table per task, select.c and tune.c; a pipe_result holds the figures of
 * its own task (sel or tune) and the shared ones.
 * diff.h compares two saved selection models on the same rows (heurist diff, the acceptance gate).
 */
#ifndef HEURIST_PIPELINE_H
#define HEURIST_PIPELINE_H

#include <cJSON.h>

#include "data/data.h"
#include "eval/eval.h"
#include "models/model.h"

typedef struct pipe_dataset {
    model_task task;
    union {
        data_select *sel; /* select: problems, kernels, runtimes */
        data_tune *tune;  /* tune: problems, tuned sequences */
    };
    data_codec *codec; /* the source's codec */
    int n;             /* rows */
    int n_values;      /* values per problem (data_codec_value_count) */
    int n_features;
    double *V;         /* (n, n_values) every problem's values */
    float *X;          /* (n, n_features) their features */
    int *group;        /* (n) each row's group, the unit every split holds out */
    int n_groups;
    const char *grouping; /* what the groups are, for reports: "problem geometry" (a convolution's), "problem
                           * columns" (a table's) or the name of a table's group column */
    int by_column;     /* the groups are a table's group column: --split holds out whole groups too */
    char *name;        /* file basename, for reports */
} pipe_dataset;

/* Loads a dataset for `task` ("select" or "tune"; a perf-db needs `solver`), decompressing and parsing on
 * `threads` threads (<= 0: all cores). */
int pipe_dataset_load(const char *path, const char *task, const char *solver, int threads, const hr_log *log,
                      pipe_dataset *out);
/* The same with a benchmark table's schema (inline JSON or a file; NULL: FILE.schema.json beside the table). Its
 * groups are the schema's group column when it names one, else the problem columns (data_select_groups). */
int pipe_dataset_load_schema(const char *path, const char *task, const char *solver, const char *schema, int threads,
                             const hr_log *log, pipe_dataset *out);
/* The same with a capability file for --task tune on a source whose selection data tunes (a benchmark table:
 * data_select_tune; NULL: FILE.caps.json beside the table when it exists). */
int pipe_dataset_load_caps(const char *path, const char *task, const char *solver, const char *schema,
                           const char *caps, int threads, const hr_log *log, pipe_dataset *out);
/* What a dataset is loaded with: pipe_dataset_load_caps' arguments, the precision classes of a find-db's FP32
 * problems (data_load_opts.precisions; 0: TF32 alone), and where its selection problems come from, for reports by
 * source: the key list `sources` (data_sources_read), every problem it does not name tagged `source` (NULL: "-"),
 * or without a list every problem tagged `source` when given. */
typedef struct pipe_load {
    const char *task, *solver, *schema, *caps;
    int threads;
    const hr_log *log;
    int precisions;
    const char *sources, *source;
} pipe_load;
int pipe_dataset_open(const char *path, const pipe_load *l, pipe_dataset *out);
void pipe_dataset_free(pipe_dataset *d);
/* Chooses what groups the rows (--group-by): "problem" groups a table's problems by their problem columns alone
 * (every problem its own unit: an in-source figure), the name of the schema's group column keeps its groups; NULL
 * changes nothing. On a find-db or perf-db only "problem" (its geometry) is known. */
int pipe_dataset_group_by(pipe_dataset *d, const char *by);
/* The values of row `row` (n_values). */
const double *pipe_dataset_values(const pipe_dataset *d, int row);
/* FNV-1a over everything a run reads of d (its rows' values and features, the task's kernels, measurements or
 * sequences), continuing from h: equal on two processes that hold the same data. */
uint64_t pipe_dataset_digest(const pipe_dataset *d, uint64_t h);
/* FNV-1a of n bytes, continuing from h; of a string (NULL hashes apart from "", by a tag byte before it). */
uint64_t pipe_digest(uint64_t h, const void *p, size_t n);
uint64_t pipe_digest_str(uint64_t h, const char *s);

/* Per-slice breakdown for selection: top-1 by each value of the report's slices, the contract's direction and
 * data type (pipe_report_slices), where the source has them. */
#define PIPE_REPORT_SLICES 2
#define PIPE_SLICE_VALUES 16
extern const char *const pipe_report_slices[PIPE_REPORT_SLICES]; /* "direction", "dtype" */
typedef struct pipe_slice {
    long n, top1;
} pipe_slice;

#define PIPE_SHORTLIST_ROW (2 * EVAL_SHORTLIST_MAX + 1)

/* What an evaluation of a selection model finds (pipeline/select.c). */
typedef struct pipe_select_result {
    eval_select_metrics m;
    pipe_slice by_slice[PIPE_REPORT_SLICES][PIPE_SLICE_VALUES]; /* by value of each report slice */
    double *efficiency;   /* (n_test) per-problem efficiency, for plots */
    int *pick;            /* (n_test) each problem's pick, a column of the data's kernels; n_kernels for a kernel
                           * the model knows and the data does not hold (heurist diff) */
    int candidates;       /* each problem ranked among the configurations measured for it (a source whose
                           * configurations have values): the report adds ndcg1 and r2 */
    double r2;            /* R^2 of the scores against the per-pair target the model regresses; NaN: none */
    int *rows;            /* (n_test) the data row of each evaluated problem */
    /* against the vendor's first pick, on data with a vendor ranking (vendor set; else speedup NULL) */
    int vendor;
    double *speedup;      /* (n_test) eval_select_speedup of each pick; NaN where the vendor's pick was not measured */
    eval_speedup_metrics vs;
    double shortlist[EVAL_SHORTLIST_MAX];        /* mean efficiency of the model's top-k plus the vendor's pick */
    double vendor_shortlist[EVAL_SHORTLIST_MAX]; /* mean efficiency of the vendor's own first k */
    double vendor_list;                          /* mean efficiency of the vendor's whole list */
    double *shortlists;   /* (n_test, PIPE_SHORTLIST_ROW) each problem's model_k, vendor_k and vendor_list
                           * (eval_select_shortlist) */
    double *margin;       /* (n_test) the pick's score minus the vendor's first pick's (eval_select_margin); NaN where
                           * the vendor's pick has no finite score */
} pipe_select_result;

/* What an evaluation of a tuning model finds (pipeline/tune.c). */
typedef struct pipe_tune_result {
    eval_tune_metrics m;
    double decode_us;     /* mean decode time per problem */
    int measured;         /* the data holds each problem's measured configurations and their runtimes: m's
                           * efficiency figures and measured share are set */
} pipe_tune_result;

/* One trained (or loaded) model's figures: the task's own in sel or tune, as `task` says, then what every
 * task measures. */
typedef struct pipe_result {
    model_task task;
    int n_train, n_test;
    union {
        pipe_select_result sel;
        pipe_tune_result tune;
    };
    double train_seconds;
    double predict_us;
    long params;
    long model_bytes;
    int n_curve;
    model_curve_point *curve; /* (n_curve) the training curve of the model */
} pipe_result;

void pipe_result_free(pipe_result *r);

/* The processes of a distributed run (cli/ fills it from dist/, so that the pipeline knows nothing of MPI).
 * The (family, fold) jobs of pipe_run_folds and pipe_compare are spread over the ranks by a fixed rule (job
 * j = family * folds + fold runs on rank j % size); every rank holds the whole dataset, a job's result does
 * not depend on the rank that computes it, and rank 0 gathers the results and alone writes the reports. */
typedef struct pipe_ranks {
    int rank, size;
    /* Collective: rank 0 receives every rank's len bytes concatenated in rank order into *all (malloc'd),
     * lens[r] (size entries) from rank r; other ranks get *all NULL. */
    int (*gather)(void *ctx, const void *buf, size_t len, char **all, size_t *lens);
    void *ctx;
} pipe_ranks;

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
    const pipe_ranks *ranks; /* NULL: one process runs every job */
    /* pipe_run: the processes that share the training rows of this one run (data-parallel, for the families
     * where pipe_family_shares_rows), each calling pipe_run with the same data and options; rank 0 alone
     * evaluates and saves, the others return once trained (res: train_seconds only). NULL: one process. */
    const hr_comm *shard;
    /* the vendor guard set on each trained model before it is evaluated (model.select_guard, select_guard_top) */
    float guard;
    int guard_top;
} pipe_opts;

/* A seeded random hold-out from a "random:F[:seed=S]" spec (seed defaults to default_seed): of rows, or of whole
 * groups when the groups are a table's group column (data_split_random_groups); desc (n bytes) receives the
 * split's description for reports. A fraction that leaves no training row is an error. "none" and a fraction of 0
 * (random:0) train on every row and test on the same rows, described as "none" (figures on the training problems:
 * a model meant for other data). */
int pipe_split_random(const pipe_dataset *d, const char *spec, uint64_t default_seed, data_split *s, char *desc,
                      size_t n);

/* Checks a run's options against the family before any data is loaded: --resume needs --checkpoint,
 * --checkpoint and --init-model only for the families that use them, --init-model must exist. */
int pipe_opts_check(const model_family *fam, const pipe_opts *o);
/* 1 when the family trains one model over several processes' shares of the rows (pipe_opts.shard): gbdt */
int pipe_family_shares_rows(const model_family *fam);

/* Trains `fam` on split->train and evaluates on split->test; sets OpenBLAS's thread count for each phase. */
int pipe_run(const pipe_dataset *d, const data_split *split, const model_family *fam, const pipe_opts *o,
             pipe_result *res, model **out_model);
/* Evaluates an existing model on rows `rows` (n_rows) of d, with OpenBLAS on one thread. */
int pipe_evaluate(const pipe_dataset *d, const model *m, const int *rows, int n_rows, pipe_result *res);

/* Called with each result as soon as it is known (fold is 0 and k 1 for a single split). */
typedef void (*pipe_result_fn)(void *ctx, const char *model_name, int fold, int k, const pipe_result *r);

/* k GroupKFold folds of one family (grouped by d->group, seeded by o->seed): results into
 * folds (k), each passed to on_result (may be NULL) when its fold is done. Under o->ranks the folds are
 * spread over the ranks; rank 0 gets every fold's result (and calls on_result for each once all are in),
 * the other ranks none (folds left zeroed). */
int pipe_run_folds(const pipe_dataset *d, const model_family *fam, int k, const pipe_opts *o, pipe_result *folds,
                   pipe_result_fn on_result, void *ctx);

#define PIPE_COMPARE_MAX 8

/* Several families on exactly the same folds or split. */
typedef struct pipe_compare_spec {
    int n_models;
    const model_family *fams[PIPE_COMPARE_MAX];
    const cJSON *configs[PIPE_COMPARE_MAX]; /* each family's options (NULL: defaults) */
    int folds;             /* >= 2: GroupKFold with that many folds; 0: one random split */
    const char *split;     /* folds == 0: "random:F[:seed=S]" (seed defaults to pipe_opts.seed) */
} pipe_compare_spec;

/* Runs the comparison (o: seed, threads, log, valid_fraction, ranks; o->config is ignored for s->configs) and
 * writes dir/report.json (one report object per family, each with "ranks"), dir/report.md (tables and figure
 * links) and the figures; *summary (malloc'd) is report.md's text without the figures, for a terminal. Under
 * o->ranks only rank 0 writes, and the other ranks get *summary NULL. */
int pipe_compare(const pipe_dataset *d, const pipe_compare_spec *s, const pipe_opts *o, const char *dir,
                 pipe_result_fn on_result, void *ctx, char **summary);
/* The names of every file pipe_compare may write into dir, NULL-terminated (so a caller can check none is an
 * input). */
extern const char *const pipe_compare_files[];

/* The baseline families every comparison on d shows beside the learned ones (the most frequent fastest kernel, the
 * vendor's heuristic where the data records it) into out (PIPE_COMPARE_MAX); returns how many. */
int pipe_baselines(const pipe_dataset *d, const model_family **out);

/* One line of a result's figures, "NAME  top1 0.9000  top5 ..." (select) or "NAME  param_accuracy ..." */
void pipe_result_format(const char *model_name, const pipe_result *r, char *buf, size_t n);

/* The contract's report object for one result (metrics, timing, size). */
cJSON *pipe_report_object(const pipe_dataset *d, const char *model_name, const char *split_desc,
                          const pipe_result *r);
/* The task's markdown tables of one result (those of pipe_compare's report.md), written atomically at path. */
int pipe_report_md(const char *path, const pipe_dataset *d, const char *model_name, const char *split_desc,
                   const pipe_result *r);
/* Mean of fold results into a report object with a "folds" array. */
cJSON *pipe_report_cv(const pipe_dataset *d, const char *model_name, int k, uint64_t seed, const pipe_result *folds);
/* Runs the jobs (family m, fold f) of nm families on `folds` GroupKFold folds, or on `split` when folds is 0
 * (one job per family), that belong to this rank (pipe_ranks); configs[m] (or o->config when configs is NULL)
 * configures family m. On rank 0 res[m] (nfold entries each) receives every job's result, passed to on_result
 * in (family, fold) order; other ranks' res stay zeroed. */
int pipe_jobs_run(const pipe_dataset *d, int nm, const model_family *const *fams, const cJSON *const *configs,
                  int folds, const data_split *split, const pipe_opts *o, pipe_result *const *res,
                  pipe_result_fn on_result, void *ctx);
/* 1 when this process writes reports: no ranks, or rank 0. */
int pipe_ranks_is_root(const pipe_ranks *r);

/* Writes JSON atomically (pretty-printed). */
int pipe_json_write(const char *path, const cJSON *json);

/* What a model holds, as one JSON object: "path" and "file_bytes" of its file (path NULL: neither), "family",
 * "task", the family's "objective", "mode" and "rank_loss" where it shows them, "source" (the codec's name) and a
 * table's "schema", "features" by name, "kernels" (select) or "solver" and "parameters" (tune), "params" (the
 * parameter count), a gbdt model's "importance" ([{"feature", "gain"}]: each feature's share of the boosters' total
 * split gain, highest first), "config", "seed" and "train_seconds". NULL on ENOMEM. */
cJSON *pipe_model_info(const model *m, const char *path);
/* The same as text for a person, one "key  value" line each. */
void pipe_model_info_print(const cJSON *info, FILE *f);

#endif
