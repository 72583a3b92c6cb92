/* data: real tuning databases turned into datasets; knows nothing of models.
 *
 * - A convolution problem (data_problem) is the parsed problem key: named numeric fields plus three
 *   categorical ones (layout, data type, direction). find-db keys and perf-db rows both map to it.
 * - A find-db (`.fdb.txt[.bz2]`) becomes a data_select: problems x kernels runtimes (ms, +inf where a
 *   kernel was not measured). Lines that do not parse are skipped and counted by reason.
 * - A perf-db (SQLite, `.db[.bz2]`) and a solver name become a data_tune: per problem the tuned
 *   parameter sequence, with a per-position value vocabulary. A benchmark table becomes one too
 *   (data_table_tune, data/table.h): per problem the kernel fields of its fastest measured configuration,
 *   with the table's runtimes kept to score any predicted configuration.
 * - Features: raw key fields, derived sizes (FLOPs, bytes, intensity, log2 sizes) and one-hot
 *   categoricals, each named; normalisation is fitted on training rows only.
 * - Labels for selection: hard argmin_k t_k; soft runtime-ratio p_k = (1/t_k) / sum_j (1/t_j);
 *   one-hot; softmax over -t/tau.
 * - Splits: seeded random hold-out; GroupKFold grouped by geometry (every numeric key field).
 * - Dataset cache: a self-describing, versioned HDF5 file so a database is parsed once.
 * - Constraints: valid_prefix(problem, values, length) per solver, or a table's capability rules
 *   (data/table.h), asked through data_constraint_check for constrained decoding.
 */
#ifndef HEURIST_DATA_H
#define HEURIST_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "data/portable.h"

/* ---- problems ---- */

extern const char *const data_field_names[DATA_FIELD_COUNT];
extern const char *const data_direction_names[DATA_DIR_COUNT];
extern const char *const data_dtype_names[DATA_DTYPE_COUNT];
extern const char *const data_layout_names[DATA_LAYOUT_COUNT];
extern const char *const data_precision_names[DATA_PRECISION_COUNT];

/* Parses a find-db problem key ("C-H-W-FyxFx-K-oH-oW-N-PxP-SxS-DxD-bias-layout-type-dir[_gG][_class]", the class
 * one of DATA_PRECISION_LIST's names).
 * Returns 0, or HR_EFORMAT with `why` (a short reason, also the skip-count category) filled. */
int data_key_parse(const char *key, size_t len, data_problem *out, const char **why);
/* Writes the canonical key of a problem (2-D or 3-D form; an FP32 problem's class as a suffix unless it is TF32)
 * into buf; returns its length. */
int data_key_format(const data_problem *p, char *buf, size_t size);
/* A convolution's values as its codec reads them (data/codec.h): the key fields in data_field order, then layout,
 * data type, direction and precision class. */
#define DATA_PROBLEM_VALUES (DATA_FIELD_COUNT + 4)
enum { DATA_CONV_LAYOUT = DATA_FIELD_COUNT, DATA_CONV_DTYPE, DATA_CONV_DIRECTION, DATA_CONV_PRECISION, DATA_CONV_VALUES };
void data_problem_values(const data_problem *p, double *pv);
/* A convolution's problem from its values. */
void data_conv_problem(const double *pv, data_problem *p);
/* Hash of the geometry (every numeric field), the GroupKFold group. */
uint64_t data_problem_geometry_hash(const data_problem *p);

/* ---- skipped lines ---- */
#define DATA_SKIP_MAX_REASONS 16
typedef struct data_skips {
    int n_reasons;
    char reason[DATA_SKIP_MAX_REASONS][48];
    long count[DATA_SKIP_MAX_REASONS];
    long first_line[DATA_SKIP_MAX_REASONS];
    long total;
} data_skips;

void data_skips_add(data_skips *s, const char *reason, long line);

/* ---- kernel selection (find-db) ---- */
typedef struct data_select {
    int n;               /* problems */
    int n_kernels;       /* kernel vocabulary size */
    data_problem *problems; /* (n) */
    char **keys;         /* (n) problem keys as written in the file */
    char **kernels;      /* (n_kernels) solver names, sorted */
    float *runtime;      /* (n, n_kernels) milliseconds; INFINITY where not measured */
    int16_t *vendor_rank; /* (n, n_kernels) position of each kernel in the vendor's own heuristic ranking (0 =
                           * its pick), -1 where it does not rank it; NULL without a sidecar (data/vendor.c) */
    data_skips skips;
    long lines;          /* lines read, including skipped ones */
    char *source;        /* basename of the file it came from */
    struct data_table *table; /* a benchmark table's schema and column values (data/table.h); NULL for a find-db */
    /* where each problem comes from (data/sources.c), for reports by source: NULL until tagged */
    int *problem_source;  /* (n) index into source_names */
    char **source_names;  /* (n_sources) */
    int n_sources;
} data_select;

typedef struct data_load_opts {
    int strict;          /* nonzero: the first bad line is an error instead of a skip */
    const hr_log *log;   /* progress and skip summary; may be NULL */
    int threads;         /* decompression and parsing threads (<= 0: all cores; a NULL opts means all too) */
    const char *schema;  /* a benchmark table's schema: inline JSON (starting with '{') or a file holding it;
                          * NULL: FILE.schema.json beside the table (data/table.h) */
    int precisions;      /* find-db: the precision classes (bits 1 << data_precision) each FP32 line without a class
                          * in its key becomes one problem of (data/precision.c); 0: TF32 alone */
} data_load_opts;

/* ---- precision classes (data/precision.c) ---- */
#define DATA_PRECISION_ALL ((1 << DATA_PRECISION_COUNT) - 1)
/* "strict,tf32,conversion" (any of them, comma-separated) or "all" into a mask of 1 << data_precision bits. */
int data_precision_list_parse(const char *s, int *mask);
/* Makes each FP32 problem of a find-db whose key names no class one problem per class of `classes` (0 or TF32
 * alone: the TF32 problem as it is), keyed with the class's suffix; then refuses in every FP32 problem the kernels
 * its class does not allow (data_portable_precision_allows: their times become INFINITY) and drops a problem left
 * with none (a skip). Before the vendor's rankings are read. */
int data_precision_apply(data_select *ds, int classes);

/* Loads a find-db: plain text, or bzip2 (detected by content). */
int data_fdb_load(const char *path, const data_load_opts *opts, data_select **out);
/* Reads the vendor heuristic's ranking recorded beside a find-db (FILE.heuristic.txt[.bz2] next to
 * FILE.fdb.txt[.bz2]; an FP32 problem of the strict or conversion class from FILE.heuristic.strict.txt or
 * FILE.heuristic.conversion.txt, as heurist-collect writes them) into ds->vendor_rank, decompressing on `threads`
 * threads (<= 0: all cores); *found = 0 and nothing changes when there is no such file. */
int data_vendor_attach(data_select *ds, const char *fdb_path, int threads, int *found);
/* Parses find-db text already in memory (used by the loader and by tests); `name` names it in errors. */
int data_fdb_parse(const char *name, const char *text, size_t len, const data_load_opts *opts,
                   data_select **out);
void data_select_free(data_select *ds);
/* Index of the fastest measured kernel of problem i (-1 if none measured). */
int data_select_best(const data_select *ds, int i);
int data_select_kernel_index(const data_select *ds, const char *name);

/* ---- where problems come from (data/sources.c) ---- */
/* Tags every problem of ds from a key list (lines "KEY [SOURCE ...]", or a table whose header starts with "key<TAB>"
 * and whose source is its first column named source, network or family: heurist-collect verify's problem lists); a
 * problem is matched by its key without the precision class suffix, and one the list does not name gets `fallback`
 * (NULL: "-"), always source 0. Errors name the file and line. */
int data_sources_read(data_select *ds, const char *path, const char *fallback);
/* Tags every problem with one source. */
int data_sources_set(data_select *ds, const char *name);
void data_sources_clear(data_select *ds);

/* ---- labels ---- */
typedef enum data_label_kind {
    DATA_LABEL_SOFT_RATIO, /* p_k = (1/t_k) / sum_j (1/t_j), 0 where t_k = inf */
    DATA_LABEL_ONEHOT,     /* 1 at the fastest kernel */
    DATA_LABEL_SOFTMAX,    /* p_k ~ exp(-(t_k / t_min - 1) / tau), 0 where t_k = inf */
} data_label_kind;

/* Fills y (n_rows, n_kernels) for the listed rows. tau is used by DATA_LABEL_SOFTMAX only. */
void data_labels_fill(const data_select *ds, const int *rows, int n_rows, data_label_kind kind, float tau,
                      float *y);
/* The same where a kernel within `tie` of a problem's fastest runtime (t <= tie t_min, tie >= 1) ties with it: it
 * takes the fastest's label (one-hot: the label shared evenly among the tied; softmax and ratio: the value of
 * t_min), so runs that differ only inside the run-to-run noise get one label. tie <= 1: data_labels_fill. */
void data_labels_fill_ties(const data_select *ds, const int *rows, int n_rows, data_label_kind kind, float tau, float tie,
                           float *y);
/* The kinds' names, NULL-terminated ("ratio" and "hard" are other names of soft and onehot), and the kind of each;
 * a kind's name is the first with its value. */
extern const char *const data_label_names[];
extern const int data_label_values[];
int data_label_kind_parse(const char *s, data_label_kind *out);
const char *data_label_kind_name(data_label_kind k);

/* ---- features ---- */
/* Number of features data_features_compute writes, and their names (stable, recorded by models). */
int data_features_count(void);
const char *data_feature_name(int j);
/* x (n_features) for one problem; allocates nothing. */
void data_features_compute(const data_problem *p, float *x);
/* X (n, n_features) for many problems. */
void data_features_compute_all(const data_problem *p, int n, float *X);

/* z-score statistics fitted on rows (mean, std with std floor 1e-6 -> 1). */
void data_zscore_fit(const float *X, int n_cols, const int *rows, int n_rows, float *mean, float *std);

/* ---- tuning parameters (perf-db, or a benchmark table) ---- */
typedef struct data_constraint data_constraint;
struct data_table_rules;

typedef struct data_tune {
    int n;                  /* problems */
    int length;             /* parameters per sequence */
    char *solver;
    char **param_names;     /* (length) */
    data_problem *problems; /* (n) */
    int32_t *values;        /* (n, length) parameter values as tuned */
    int *vocab_size;        /* (length) distinct values per position */
    int32_t **vocab;        /* (length)[vocab_size] sorted distinct values */
    int *tokens;            /* (n, length) index of values[i, j] in vocab[j] */
    data_skips skips;
    char *source;
    /* a benchmark table's tuning data (data_table_tune); all NULL for a perf-db, whose problems are convolutions */
    data_select *sel;       /* the table as a selection dataset: runtimes, schema, problem values (owned) */
    int *best;              /* (n) the configuration (column of sel) each problem's sequence is */
    int *cand_off;          /* (n + 1) problem i's measured configurations are rows cand_off[i] .. cand_off[i+1] of cand */
    int32_t *cand;          /* (cand_off[n], length) their sequences, in configuration order */
    int *cand_kernel;       /* (cand_off[n]) the configuration (column of sel) of each */
    struct data_table_rules *rules; /* the capability rules, or NULL without a capability file (owned) */
    data_constraint *constraint;    /* the constraint over rules, or NULL (owned) */
} data_tune;

/* Loads every row of `solver` from a perf-db (SQLite file, plain or bzip2). */
int data_perfdb_load(const char *path, const char *solver, const data_load_opts *opts, data_tune **out);
void data_tune_free(data_tune *dt);
/* Builds vocab/vocab_size/tokens from dt->values (n, length); sets dt->length. */
int data_tune_build_vocab(data_tune *dt, int length);
/* Index of value v in position j's vocabulary, or -1. */
int data_tune_token(const data_tune *dt, int j, int32_t v);

/* ---- constraints ---- */
struct data_constraint {
    const char *solver;
    int length;
    const char *const *param_names;
    /* Returns 1 when values[0..len) can still be part of a valid sequence for problem p, else 0.
     * len == length checks the whole sequence. */
    int (*valid_prefix)(const data_problem *p, const int32_t *values, int len);
    /* Rules with state, about a table problem's values pv (used where valid_prefix is NULL): the same answer
     * from `rules` (a data_table_rules). */
    int (*valid_prefix_pv)(const void *rules, const double *pv, const int32_t *values, int len);
    const void *rules;
};
/* The rules of a solver, or NULL when none are known. */
const data_constraint *data_constraint_find(const char *solver);

/* One problem as a constraint sees it: its values (data/codec.h: a convolution's key fields and categories, or a
 * table problem's columns), with the sequences it may take when they are known (the configurations measured for
 * it: the "measured" space). */
typedef struct data_tune_problem {
    const double *pv;         /* the problem's values */
    const int32_t *cand;      /* (n_cand, length) the sequences it may take, or NULL: any the rules allow */
    int n_cand;
    int length;               /* values per candidate sequence */
    const int32_t *vendor;    /* (length) the vendor heuristic's first pick (a table's heuristic rank 0), or NULL:
                               * what a tune model's vendor guard (model.select_guard) falls back to */
} data_tune_problem;

/* 1 when values[0..len) can still be part of a valid sequence for q: with q->cand, a prefix of one of them;
 * otherwise c's rules (c NULL: any). */
int data_constraint_check(const data_constraint *c, const data_tune_problem *q, const int32_t *values, int len);
/* Problem i of a tune dataset as data_constraint_check takes it, its values row i of V (data_tune_values);
 * measured: with its measured sequences. On a table that records the vendor's ranking, also the vendor's first pick
 * among them. */
data_tune_problem data_tune_problem_of(const data_tune *dt, const double *V, int i, int measured);
/* The constraint a tune dataset's sequences are checked with: its table's rules, or its solver's; NULL: none. */
const data_constraint *data_tune_constraint(const data_tune *dt);

/* ---- splits ---- */
typedef struct data_split {
    int n_train, n_test;
    int *train; /* (n_train) row indices, ascending */
    int *test;  /* (n_test) */
} data_split;

/* Group ids (0..n_groups-1, in order of first appearance) of problems by geometry. */
int data_groups_compute(const data_problem *p, int n, int *group, int *n_groups);
/* Seeded random hold-out of a fraction of rows. */
int data_split_random(int n, double test_fraction, uint64_t seed, data_split *out);
/* Seeded random hold-out of whole groups: the groups in a seeded order, each taken into the test set when that
 * brings the test rows nearer to test_fraction x n (the first always), so no group is on both sides. Fewer than
 * two groups is an error, and so is a fraction that takes every group. */
int data_split_random_groups(const int *group, int n, int n_groups, double test_fraction, uint64_t seed,
                             data_split *out);
/* GroupKFold: groups assigned to k folds (largest groups first, to the lightest fold; ties broken by a
 * seeded shuffle), fold f's rows are its test set. */
int data_split_group_kfold(const int *group, int n, int n_groups, int k, uint64_t seed, int fold,
                           data_split *out);
void data_split_free(data_split *s);
/* Parses "random:F[:seed=S]" (F in [0, 1)) or "none" (F = 0: no test rows, every row trained on); seed defaults to
 * default_seed. */
int data_split_spec_parse(const char *spec, double *fraction, uint64_t *seed, uint64_t default_seed);

/* ---- dataset cache (HDF5) ---- */
#define DATA_CACHE_FORMAT "heurist-dataset"
#define DATA_CACHE_VERSION 1
int data_cache_write_select(const char *path, const data_select *ds);
int data_cache_write_tune(const char *path, const data_tune *dt);
/* Reads a cache; exactly one of *sel / *tune is set according to the task stored. */
int data_cache_read(const char *path, data_select **sel, data_tune **tune);

/* ---- any input ---- */
typedef enum data_source_kind { DATA_SOURCE_FDB, DATA_SOURCE_PERFDB, DATA_SOURCE_CACHE, DATA_SOURCE_TABLE } data_source_kind;
/* By file name: .h5 cache, .db[.bz2] perf-db, .csv/.tsv[.gz|.bz2] benchmark table, anything else a find-db. */
data_source_kind data_source_kind_of(const char *path);
/* Loads any input; a perf-db needs `solver`. Exactly one of *sel / *tune is set on success. */
int data_load(const char *path, const char *solver, const data_load_opts *opts, data_select **sel,
              data_tune **tune);

/* ---- input bytes ---- */
/* Reads a whole file (data/decompress.c), decompressing it by content: bzip2 when it starts with "BZh", its blocks
 * on `threads` threads (<= 0: all cores); gzip when it starts with 1f 8b. *buf is NUL-terminated. */
int data_read_file(const char *path, int threads, char **buf, size_t *len);

#endif
