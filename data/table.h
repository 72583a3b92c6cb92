/* table: benchmark tables, one row per (problem, kernel configuration) measurement, as a selection dataset.
 *
 * A table is a CSV (`.csv`, `.tsv` by extension; plain, gzip or bzip2 by content) with a header row, and a
 * schema (`FILE.schema.json` beside it, or given) naming the columns' roles:
 *   {"problem": ["M","N","K","dtype"], "kernel": ["tile_m","tile_n","tile_k","stages","split_k"],
 *    "hardware": [], "categorical": ["dtype"], "measure": "time_us", "better": "lower",
 *    "tiles": {"tile_m": "M", "tile_n": "N", "tile_k": "K"},
 *    optional: "reduction": "K", "split": "split_k", "cus": "sms" (a hardware column or a number),
 *              "vendor": "heuristic_rank", "vendor_feature": true (the rank as a kernel column, below),
 *              "duplicates": "median" | "min" | "mean" | "error",
 *              "group": "family" (a column naming each problem's group: the unit every split holds out)}
 * It becomes a data_select whose problems are the distinct problem+hardware values (key "M=128,N=4096,..."),
 * whose kernels are the distinct configurations (name "tile_m=128,tile_n=64,...", in schema order), and whose
 * runtime matrix holds a cost: the measure itself when lower is better, 1 / measure when higher is better
 * (so efficiency = cost_best / cost_pick = value_pick / value_best either way); INFINITY where a configuration
 * was not measured for a problem. The table itself (schema, vocabularies, column values) hangs off
 * data_select.table, so models can score configurations from their fields, including configurations never
 * measured for a problem.
 *
 * Features (the formulas are in data/table_features.h, portable C copied into exported runtimes):
 * - problem features x (n_problem_features): for every numeric problem and hardware column its value and
 *   log2(1 + |v|); every categorical problem column one-hot over its vocabulary.
 * - pair features (n_pair_features) of a problem x and a configuration kv: the kernel columns (numeric: value
 *   and log2; categorical: one-hot), then per tiled dimension d with tile t: ceil(d / t), the waste
 *   (ceil(d/t)*t - d) / (ceil(d/t)*t), log2(d / t); then output tiles (product over the non-reduction tiled
 *   dimensions), output tiles x split / CUs (when the schema names CUs), and the problem's arithmetic
 *   intensity 2MNK / (MK + KN + MN) when exactly two output dimensions and a reduction are tiled.
 */
#ifndef HEURIST_DATA_TABLE_H
#define HEURIST_DATA_TABLE_H

#include <stddef.h>

#include "data/data.h"

#define DATA_TABLE_MAX_COLUMNS 64
/* With "vendor_feature": true the vendor's rank of each measured pair becomes a numeric kernel column of this
 * name, the last one (DATA_TABLE_VENDOR_UNLISTED where the vendor did not list the configuration; ranks must be
 * below it), so every family scores a candidate knowing where the vendor's heuristic put it. */
#define DATA_TABLE_VENDOR_FEATURE "vendor_rank"
#define DATA_TABLE_VENDOR_UNLISTED 1024

typedef enum data_table_dup {
    DATA_TABLE_DUP_MEDIAN = 0, /* default: the median of a (problem, configuration) pair's measurements */
    DATA_TABLE_DUP_MIN,
    DATA_TABLE_DUP_MEAN,
    DATA_TABLE_DUP_ERROR,      /* a second measurement of a pair is an error */
} data_table_dup;

/* One column the schema uses. Values are doubles: the number, or for a categorical column the index of the
 * string in `vocab` (sorted, fixed when the table is read and recorded by models). */
typedef struct data_table_column {
    char *name;
    int categorical;
    int n_vocab;
    char **vocab;      /* (n_vocab) sorted distinct strings of a categorical column; NULL otherwise */
} data_table_column;

/* What a model needs to compute features and name problems and configurations: the schema with its
 * vocabularies. Serialised to JSON (data_table_spec_to_json) inside models and caches. */
typedef struct data_table_spec {
    int n_problem;     /* problem columns, then hardware columns: the problem's values pv (n_problem + n_hardware) */
    int n_hardware;
    int n_kernel;      /* kernel columns: a configuration's values kv (n_kernel) */
    data_table_column *problem;  /* (n_problem + n_hardware) */
    data_table_column *kernel;   /* (n_kernel) */
    int *tile_of;      /* (n_kernel) index into problem of the dimension the kernel column tiles, or -1 */
    int reduction;     /* problem index of the reduction dimension, or -1 */
    int split;         /* kernel index of the reduction split (split-K), or -1 */
    int cus_column;    /* problem index (a hardware column) holding the compute-unit count, or -1 */
    double cus;        /* a fixed compute-unit count when cus_column is -1 (0: none) */
    char *measure;     /* the measured column */
    int higher_better;
    char *vendor;      /* column with the vendor heuristic's rank of the configuration (0 = its pick), or NULL */
    int vendor_feature; /* the vendor's rank is also the last kernel column, DATA_TABLE_VENDOR_FEATURE */
    data_table_dup duplicates;
    char *group;       /* column naming each problem's group (a string, one per problem), or NULL: problems are
                        * grouped by their problem columns */
} data_table_spec;

typedef struct data_table {
    data_table_spec spec;
    int n, n_kernels;  /* as the data_select's */
    double *pv;        /* (n, n_problem + n_hardware) each problem's values */
    double *kv;        /* (n_kernels, n_kernel) each configuration's values */
    long duplicates;   /* (problem, configuration) pairs measured more than once, merged by the policy */
    int *group;        /* (n) each problem's index into group_names, with a group column; NULL without one */
    char **group_names; /* (n_group_names) the group column's values, in order of first appearance */
    int n_group_names;
} data_table;

typedef struct data_table_opts {
    const char *schema_path;   /* NULL: FILE.schema.json beside the table (its name without .gz/.bz2 and .csv/.tsv) */
    const char *schema_json;   /* the schema as text (wins over schema_path) */
    const hr_log *log;
    int threads;
    int strict;                /* as data_load_opts.strict: the first bad row is an error instead of a skip */
} data_table_opts;

/* The path of a file beside a table: its name without .gz/.bz2 and .csv/.tsv, then suffix (".schema.json",
 * ".caps.json"); malloc'd, NULL on ENOMEM. */
char *data_table_sidecar(const char *path, const char *suffix);
/* True for names a table loader reads: .csv / .tsv, optionally followed by .gz or .bz2. */
int data_table_is_table(const char *path);
/* Loads a table into a selection dataset with ds->table set. Errors name file, line and column. */
int data_table_load(const char *path, const data_table_opts *opts, data_select **out);
/* The same from text in memory (already decompressed); `name` names it in errors; delim ',' or '\t'. */
int data_table_parse(const char *name, const char *text, size_t len, char delim, const char *schema_json,
                     const data_load_opts *opts, data_select **out);
void data_table_free(data_table *t);

/* Schema <-> JSON text (malloc'd); spec_from_json validates (unknown keys, missing roles, a tile that names no
 * problem column, ...) and names the offending field. */
int data_table_spec_from_json(const char *json, const char *name, data_table_spec *out);
char *data_table_spec_to_json(const data_table_spec *s);
void data_table_spec_free(data_table_spec *s);
int data_table_spec_copy(const data_table_spec *s, data_table_spec *out);
/* 1 when two schemas name every column and category alike (their JSON texts are equal), the group column aside: it
 * splits the data and is no part of a problem's features. */
int data_table_spec_same(const data_table_spec *a, const data_table_spec *b);

/* Feature counts and names ("M", "log2_M", "dtype=bf16", "tile_m", "tiles_M", "waste_M", ...). */
int data_table_problem_feature_count(const data_table_spec *s);
int data_table_pair_feature_count(const data_table_spec *s);
/* The pair features of the configuration alone: its columns' encodings, which lead the pair features. */
int data_table_config_feature_count(const data_table_spec *s);
/* name of problem feature j (0 <= j < problem count) or pair feature problem count + j; static or spec-owned */
int data_table_feature_name(const data_table_spec *s, int j, char *buf, size_t size);
/* x (n_problem_features) from a problem's values pv. */
void data_table_problem_features(const data_table_spec *s, const double *pv, float *x);
/* out (n_pair_features) from a problem's values pv and a configuration's values kv. */
void data_table_pair_features(const data_table_spec *s, const double *pv, const double *kv, float *out);
/* A problem's values pv from x, the inverse of problem_features for the numeric columns (categoricals from the
 * one-hot), so a family that is handed only x can compute pair features. */
void data_table_problem_values(const data_table_spec *s, const float *x, double *pv);

/* The one rule for a categorical value a column's vocabulary lacks, whoever meets it (a problem or configuration
 * parsed from text, a problem of new data evaluated by a model): HR_EINVAL with one line, "CONTEXT: column 'COL':
 * 'VALUE' is not one of its N known values: a, b, c" (the first DATA_TABLE_KNOWN_LISTED, then "and N more"). */
#define DATA_TABLE_KNOWN_LISTED 20
int data_table_category_unknown(const data_table_column *c, const char *value, size_t len, const char *context);
/* Parses "M=128,N=4096,K=4096,dtype=bf16" (every problem and hardware column once, any order) into pv;
 * an unknown column, a missing one or a category the vocabulary lacks (data_table_category_unknown) is an error
 * naming it. */
int data_table_problem_parse(const data_table_spec *s, const char *text, double *pv);
/* Parses a configuration name "tile_m=128,..." into kv the same way. */
int data_table_config_parse(const data_table_spec *s, const char *text, double *kv);
/* Canonical problem key / configuration name (schema order) into buf. */
int data_table_problem_format(const data_table_spec *s, const double *pv, char *buf, size_t size);
int data_table_config_format(const data_table_spec *s, const double *kv, char *buf, size_t size);

/* A table split by problem into a training table and a held-out one (data/table_split.c): every row of a problem
 * (its problem and hardware columns' values, as written) goes to one side, the header and the rows' order and
 * text kept. What is held out: with hold_column, every problem whose value in that column is one of hold_values
 * (a value the column never holds is an error); else a seeded share of the units, in a seeded order: the values
 * of group_column (whole groups) or, without one, the problems (round(share x units), at least one on each side).
 * Each table is written through a temporary file (gzip when its name ends in .gz). */
typedef struct data_table_split_opts {
    const char *schema_json;             /* the table's schema (its problem and hardware columns) */
    const char *hold_column;             /* or NULL */
    char *const *hold_values;
    int n_hold;
    double share;                        /* without hold_column: the share of the units held out, (0, 1) */
    uint64_t seed;
    const char *group_column;            /* without hold_column: the unit held out whole, or NULL: the problem */
    const char *train_path, *test_path;
} data_table_split_opts;
typedef struct data_table_split_counts {
    long rows[2], problems[2]; /* [0] training, [1] held out */
    int units, held_units;     /* groups (or problems) and how many were held out */
} data_table_split_counts;
int data_table_split(const char *path, const data_table_split_opts *o, data_table_split_counts *counts);

/* The schema of a table's codec (data/codec.h), for code that reads a table's own columns (a table runtime's
 * writer); NULL for a codec of any other source. */
struct data_codec;
const data_table_spec *data_codec_table_spec(const struct data_codec *c);

/* GroupKFold groups of a table, the unit every split holds out: with a group column its values (group[i] indexes
 * group_names), else data_table_problem_groups'. */
int data_table_groups(const data_table *t, int *group, int *n_groups);
/* Groups by the problem columns alone: problems that share every problem column (hardware aside) share a group,
 * ids in order of first appearance. */
int data_table_problem_groups(const data_table *t, int *group, int *n_groups);

/* ---- tuning on a table (data/table_tune.c, data/table_caps.c) ----
 * `--task tune` on a table: per problem the target sequence is the kernel fields of its fastest measured
 * configuration (ties: the lowest configuration index), in schema order, as int32 (a numeric field's value, which
 * must be an integer; a categorical field's vocabulary index). The problem's measured configurations stay
 * reachable (data_tune.cand) to score a prediction by its runtime and to decode within them.
 * Validity rules come from a capability file in the format heurist-collect writes ("format": "heurist-collect gemm
 * capabilities", FILE.caps.json beside the table or given): per (dtype, algo_id)
 *   tile (tile_m, tile_n) and stage (stage_k, stages) pairs from its lists (an empty list: the pairs the table
 *   measured for that algo); split_k 1, or > 1 with splitk_support and K / split_k >= the algo's minimum (32, the
 *   collector's draws, or lower where the table holds cuBLASLt's own lower picks), or a code <= 0 (cuBLASLt's
 *   automatic split) with a reduction scheme the table pairs with it; reduction_scheme 0 iff split_k 1, else a bit
 *   of reduction_scheme_mask; swizzle 0 or with cta_swizzling_support; 0 <= custom_option <= custom_option_max;
 *   (cluster_m, cluster_n) from cluster_shapes_tried or the shapes the table measured for that algo; inner_shape
 *   among the values the table measured for that algo.
 * A rule is checked as soon as the prefix holds one of its fields (a pair by the half it holds), so a beam search
 * prunes early. The rules name the kernel columns above and the problem columns dtype and K (the reduction). */
typedef struct data_table_rules data_table_rules;

/* Compiles a capability file's JSON against a schema: with ds (the table, its spec `spec`), the values the table
 * measured fill the lists the file leaves empty; without, the file is taken as written (a model's own rules, from
 * data_table_rules_to_json). Errors name `name` and the offending field ("types[0].algos[2].tiles[1]"). */
int data_table_rules_parse(const char *json, const char *name, const data_table_spec *spec, const data_select *ds,
                           data_table_rules **out);
/* The compiled rules as capability JSON (every list filled), which data_table_rules_parse reads back. */
char *data_table_rules_to_json(const data_table_rules *r);
void data_table_rules_free(data_table_rules *r);
/* The rules' valid_prefix_pv (data_constraint): 1 when values[0..len) of a problem with values pv can still be
 * a valid configuration. */
int data_table_rules_valid(const void *rules, const double *pv, const int32_t *values, int len);
/* A constraint over rules (owned by the caller, freed with free; rules must outlive it), param names from spec. */
data_constraint *data_table_rules_constraint(const data_table_rules *r, const data_table_spec *spec);

/* Turns a loaded table (ds, taken over: freed on error too) into a tune dataset. caps: a capability file; NULL:
 * FILE.caps.json beside the table at `path` when it exists (else no rules, logged). */
int data_table_tune(const char *path, data_select *ds, const char *caps, const hr_log *log, data_tune **out);
/* The sequence of configuration values kv (n_kernel) into v (n_kernel); an error names a numeric field that is
 * no int32 integer. */
int data_table_config_sequence(const data_table_spec *s, const double *kv, int32_t *v);

#endif
