/* gemm: the CPU part of `heurist-collect gemm`, which times cuBLASLt GEMM configurations on an NVIDIA GPU and
 * writes a benchmark table (data/table.h's format): one CSV row per (problem, configuration), gzip-compressed,
 * a schema JSON beside it, and the per-algorithm capability lists (the validity rules of the tuning task).
 *
 * Problems: C (M x N) = op(A) op(B), op(A) M x K, column-major, each operand transposed or not, in one of four
 * data types (bf16, fp16: FP32 compute and scale, output in the input type; fp32: FP32 compute; tf32: FP32
 * data with CUBLAS_COMPUTE_32F_FAST_TF32) or fp8e4m3 (A and B FP8 E4M3 with per-tensor scales of 1, FP32
 * compute, C and D bf16: cuBLASLt's FP8 GEMM, which sm_90 runs for A transposed and B not, "TN", with sizes
 * multiples of 16; a shape outside what cuBLASLt runs is skipped with its reason); a batch count B > 1 makes it
 * B such GEMMs over packed operands
 * (strided batched: matrix i of A starts i M K elements after matrix 0, likewise B and C).
 * A configuration is cuBLASLt's: algorithm id, tile, stages, split-K, reduction scheme, CTA swizzling, custom
 * option, cluster shape and inner shape; its table fields are numbers taken from the enum names
 * (CUBLASLT_MATMUL_TILE_128x256 -> tile_m 128, tile_n 256), gemm_enums.c, generated from cublasLt.h by
 * scripts/gen_gemm_enums.py.
 *
 * The output file is a sequence of gzip members: the header row, then one member per problem holding all of
 * its rows, so that a member that ends is a finished problem. A run stopped mid-problem leaves a truncated last
 * member, which the resume scan drops (the file is cut back to the last finished problem and appended to).
 * Free of CUDA and of heurist's libraries; functions return 0 or a negative COLLECT_E* code (collect.h).
 */
#ifndef HEURIST_COLLECT_GEMM_H
#define HEURIST_COLLECT_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"

/* ---- problems ---- */
typedef enum collect_gemm_dtype {
    COLLECT_GEMM_BF16, COLLECT_GEMM_FP16, COLLECT_GEMM_FP32, COLLECT_GEMM_TF32, COLLECT_GEMM_FP8E4M3,
    COLLECT_GEMM_DTYPE_COUNT
} collect_gemm_dtype;

const char *collect_gemm_dtype_name(collect_gemm_dtype t); /* "bf16", "fp16", "fp32", "tf32", "fp8e4m3" */
int collect_gemm_dtype_bytes(collect_gemm_dtype t);        /* element size of A and B: 1, 2 or 4 */
int collect_gemm_dtype_out_bytes(collect_gemm_dtype t);    /* element size of C and D: 2 or 4 (fp8e4m3: bf16) */

typedef struct collect_gemm_shape {
    long m, n, k;
    collect_gemm_dtype dtype;
    char trans_a, trans_b; /* 'N' or 'T' */
    long batch;            /* GEMMs of the strided batch; 1: a single GEMM */
} collect_gemm_shape;

#define COLLECT_GEMM_MAX_DIM (1L << 20)
#define COLLECT_GEMM_MAX_BATCH (1L << 16)

/* One shape line: "M N K DTYPE TRANS_A TRANS_B [BATCH]", whitespace-separated, '#' starts a comment; BATCH
 * defaults to 1. 0 with *s set; 1 for a blank or comment-only line; COLLECT_EFORMAT with a message saying which
 * field is wrong. */
int collect_gemm_shape_parse(const char *line, collect_gemm_shape *s);
/* Every shape of a file, in order; fails naming the file and line of the first malformed one. */
int collect_gemm_shapes_read(const char *path, collect_gemm_shape **shapes, int *n);
/* The key that identifies a problem: its table columns "M,N,K,dtype,trans_a,trans_b" ("4096,11008,4096,bf16,N,T"),
 * then ",BATCH" when the batch is over 1 ("128,128,64,bf16,T,N,256"), so that a single GEMM keeps the key of a
 * table without the batch column. 0, or COLLECT_EINVAL when buf is too small. */
int collect_gemm_shape_key(const collect_gemm_shape *s, char *buf, size_t size);
/* The key of a table row that starts with the seven problem columns (M..trans_b, batch), into buf. 0, or
 * COLLECT_EFORMAT when the row has fewer than eight fields, COLLECT_EINVAL when buf is too small. */
int collect_gemm_row_key(const char *row, char *buf, size_t size);
/* Bytes of A (M x K), B (K x N) and D (M x N) (each in its element size), times the batch; 2 M N K times the
 * batch. */
void collect_gemm_shape_bytes(const collect_gemm_shape *s, size_t *a, size_t *b, size_t *d);
double collect_gemm_shape_flops(const collect_gemm_shape *s);
/* An estimate of the seconds `gemm` spends on the shape with n_enum sampled configurations and up to n_heur
 * heuristic entries (the list holds about 8), to deal long shapes first (run.h): exp of a linear model of
 * ln FLOPs, ln bytes, the data type and the transposes, fitted to the shapes' measured seconds of the H100
 * collection (gemm.c, scripts/fit_cost.py), scaled by the configurations timed. */
double collect_gemm_shape_cost_s(const collect_gemm_shape *s, int n_enum, int n_heur);

/* ---- configurations ---- */
/* A configuration by cuBLASLt's ids (cublasLtMatmulAlgoConfigAttributes_t). */
typedef struct collect_gemm_config {
    int algo_id;
    int tile_id;          /* cublasLtMatmulTile_t */
    int stages_id;        /* cublasLtMatmulStages_t */
    int split_k;          /* 1: no split */
    int reduction_scheme; /* cublasLtReductionScheme_t: 0 none, 1 in place, 2 compute type, 4 output type */
    int swizzle;          /* CTA swizzling 0 or 1 */
    int custom_option;
    int cluster_id;       /* cublasLtClusterShape_t; 0: automatic */
    int inner_shape_id;   /* cublasLtMatmulInnerShape_t; 0: undefined */
} collect_gemm_config;

/* The table's kernel columns, in order: algo_id, tile_m, tile_n, stage_k, stages, split_k, reduction_scheme,
 * swizzle, custom_option, cluster_m, cluster_n, inner_shape. Undefined or automatic ids give 0 sizes (tile
 * 0 x 0, stages 0 x 0, cluster 0 x 0); AUTO stage counts give stages 0 with the stage's K size. */
#define COLLECT_GEMM_N_FIELDS 12
extern const char *const collect_gemm_kernel_columns[COLLECT_GEMM_N_FIELDS];
/* The categorical columns of the table (problem and kernel), as its schema lists them. */
#define COLLECT_GEMM_N_CATEGORICAL 6
extern const char *const collect_gemm_categorical_columns[COLLECT_GEMM_N_CATEGORICAL];

/* Configuration -> field values; COLLECT_EINVAL naming an id the enum tables do not know. */
int collect_gemm_config_fields(const collect_gemm_config *c, int f[COLLECT_GEMM_N_FIELDS]);
/* Field values -> configuration; COLLECT_EINVAL when no id encodes the sizes. */
int collect_gemm_config_from_fields(const int f[COLLECT_GEMM_N_FIELDS], collect_gemm_config *c);
/* "algo_id=6,tile_m=128,tile_n=256,...": the columns in order, as heurist names a table's configurations. */
int collect_gemm_config_name(const collect_gemm_config *c, char *buf, size_t size);
/* Inverse of collect_gemm_config_name (every column, in order); COLLECT_EFORMAT otherwise. */
int collect_gemm_config_parse(const char *name, collect_gemm_config *c);
int collect_gemm_config_equal(const collect_gemm_config *a, const collect_gemm_config *b);

/* The enum tables (gemm_enums.c): id and the two sizes of its name, sorted by id; *_end is the enum's END. */
typedef struct collect_gemm_enum {
    int id, a, b;
} collect_gemm_enum;
extern const collect_gemm_enum collect_gemm_tiles[], collect_gemm_stages[], collect_gemm_clusters[];
extern const int collect_gemm_n_tiles, collect_gemm_n_stages, collect_gemm_n_clusters;
extern const int collect_gemm_tiles_end, collect_gemm_stages_end, collect_gemm_clusters_end;
/* id -> sizes (0), or COLLECT_EINVAL for an unknown id. */
int collect_gemm_enum_sizes(const collect_gemm_enum *tab, int n, int id, int *a, int *b);
/* sizes -> id (0), or COLLECT_EINVAL. */
int collect_gemm_enum_id(const collect_gemm_enum *tab, int n, int a, int b, int *id);

/* ---- capabilities: what cuBLASLt allows per algorithm id for one data type ---- */
typedef struct collect_gemm_caps {
    int algo_id;
    int n_tiles, n_stages;
    int *tiles, *stages;             /* (n_tiles), (n_stages) ids, as CUBLASLT_ALGO_CAP_TILE_IDS / STAGES_IDS */
    int splitk_support;
    uint32_t reduction_mask;         /* supported cublasLtReductionScheme_t bits */
    uint32_t swizzle_support;
    int custom_option_max;
    int strided_batch, out_of_place, uplo, custom_memory_order, ld_negative, pointer_array_batch, fp_emulation;
    uint32_t pointer_mode_mask, epilogue_mask;
    uint64_t numerical_impl_flags;
    uint32_t min_align[4];           /* bytes, A B C D */
} collect_gemm_caps;

typedef struct collect_gemm_capset {
    collect_gemm_dtype dtype;
    int n_algos;
    collect_gemm_caps *algos;        /* (n_algos), in cublasLtMatmulAlgoGetIds order */
} collect_gemm_capset;

void collect_gemm_capset_free(collect_gemm_capset *cs);

/* Deterministic draws (splitmix64), seeded per problem so that a resumed run draws what a whole run would. */
typedef struct collect_gemm_rng {
    uint64_t s;
} collect_gemm_rng;
void collect_gemm_rng_seed(collect_gemm_rng *r, uint64_t seed, const char *key);
uint64_t collect_gemm_rng_next(collect_gemm_rng *r);
int collect_gemm_rng_below(collect_gemm_rng *r, int n); /* uniform in [0, n) */

/* The cluster shapes the enumeration tries (cuBLASLt has no capability listing them; AlgoCheck decides). */
extern const int collect_gemm_cluster_tries[];
extern const int collect_gemm_n_cluster_tries;

/* A uniform draw from an algorithm's capabilities for a problem of reduction size k: a tile and stages from
 * its lists, split-K 1 (half the draws) or one of 2, 3, 4, 8, 16 leaving at least 32 of K per split (when the
 * algorithm splits), a supported reduction scheme when split, swizzle, custom option, a cluster shape from
 * collect_gemm_cluster_tries and the inner shape undefined (three draws in four) or 1..4. */
void collect_gemm_config_draw(const collect_gemm_caps *cap, long k, collect_gemm_rng *r, collect_gemm_config *c);
/* Marks the algorithms a shape's uniform draws leave out: for a batched shape, those whose capabilities do not
 * list strided batch support, when at least one does (cuBLASLt's AlgoCheck refuses them). Each left-out index
 * a < min(n_algos, 1024) gets fails[a] = mark, and *alive loses one. */
void collect_gemm_draw_exclude(const collect_gemm_capset *cs, const collect_gemm_shape *s, int *fails, int mark,
                               int *alive);
/* The sample of a shape whose candidates begin with `kept` entries of cuBLASLt's heuristic list (those read back
 * into fields gemm_enums.c knows): neighbour draws of its first *bases = min(kept, 4) entries until the candidates
 * number *near_end (kept + n_enum / 2; kept when no entry was kept, as a neighbour needs a base among the shape's
 * own entries), then uniform draws until *target (kept + n_enum); both at most max. */
void collect_gemm_sample_plan(int kept, int n_enum, int max, int *bases, int *near_end, int *target);
/* base with one field redrawn from cap (tile, stages, split-K with its reduction scheme, swizzle, custom
 * option or cluster shape): the neighbourhood of the heuristic's picks. */
void collect_gemm_config_neighbour(const collect_gemm_caps *cap, long k, const collect_gemm_config *base,
                                   collect_gemm_rng *r, collect_gemm_config *c);

/* ---- output ---- */
/* The CSV header row (with its newline): the problem columns (M, N, K, dtype, trans_a, trans_b, batch),
 * collect_gemm_kernel_columns, then time_us (median time of one call, microseconds), heuristic_rank and
 * workspace (bytes). */
const char *collect_gemm_csv_header(void);
/* The header of tables without the batch column (every shape a single GEMM), which the readers accept. */
const char *collect_gemm_csv_header_unbatched(void);
/* 0 when text (a file's first gzip member) is the header row this command writes; COLLECT_EFORMAT naming path
 * otherwise, saying so when it is a table without the batch column (which a run cannot append to). */
int collect_gemm_header_check(const char *path, const char *text);

typedef struct collect_gemm_row {
    collect_gemm_config cfg;
    double time_us;
    int heuristic_rank; /* position in cuBLASLt's heuristic list (0: its pick), -1: not in the list */
    size_t workspace;
} collect_gemm_row;

/* One CSV row with its newline into buf; its length, or COLLECT_EINVAL (unknown id, buf too small). */
int collect_gemm_row_format(const collect_gemm_shape *s, const collect_gemm_row *r, char *buf, size_t size);

/* ---- reading a table back ---- */
/* A shape and the configurations timed for it, in the file's order. */
typedef struct collect_gemm_measured {
    collect_gemm_shape s;
    int n, cap;
    collect_gemm_row *rows; /* (n) */
} collect_gemm_measured;

/* Every shape of a table this command wrote (plain or gzip), with its rows; a table without the batch column
 * reads as batch 1. Fails naming the file and line of the first malformed row, or a shape whose rows are not
 * consecutive. */
int collect_gemm_measured_read(const char *path, collect_gemm_measured **out, int *n);
void collect_gemm_measured_free(collect_gemm_measured *p, int n);
/* 1 for the table's categorical columns (the schema's "categorical" list), else 0. */
int collect_gemm_is_categorical(const char *column);

/* What verify needs of an exported table model's runtime (export/runtime/table.h, prefix heurist_model): its
 * column order and its categorical vocabularies. */
typedef struct collect_gemm_model_api {
    int n_problem, n_kernel;
    const char *(*problem_column)(int j);
    const char *(*kernel_column)(int j);
    double (*category)(const char *column, const char *value); /* -1: a value the model never saw */
} collect_gemm_model_api;

/* A shape's values pv (n_problem) and n configurations' values kv (n, n_kernel) in the model's column order,
 * categorical columns through api->category (dtype "bf16", trans "N", ids as their decimal text); a model with
 * the kernel column "vendor_rank" (a table read with "vendor_feature") gets vendor_rank[i], cuBLASLt's rank of
 * configuration i (COLLECT_GEMM_UNLISTED when not in its list). COLLECT_EINVAL naming a model column the gemm
 * table does not have, or "vendor_rank" when vendor_rank is NULL. */
#define COLLECT_GEMM_UNLISTED 1024
int collect_gemm_model_values(const collect_gemm_model_api *api, const collect_gemm_shape *s,
                              const collect_gemm_config *cfg, const int *vendor_rank, int n, double *pv, double *kv);

/* The configuration of values (n_kernel) in the model's column order, as a tune model writes it (the inverse of
 * collect_gemm_model_values): categorical columns through category_name (a category's index to its text, NULL when
 * unknown). COLLECT_EINVAL naming a field the model's columns lack, a category it does not know, or a value that is
 * no integer. */
int collect_gemm_model_config(const collect_gemm_model_api *api, const char *(*category_name)(const char *column, int value),
                              const double *values, collect_gemm_config *cfg);

/* TABLE.csv.gz -> TABLE<suffix> (".schema.json", ".caps.json"): the name without .gz and .csv. */
int collect_gemm_sidecar_path(const char *table, const char *suffix, char *buf, size_t size);
/* The schema JSON data/table.h reads, written to a temporary file and renamed into place. */
int collect_gemm_schema_write(const char *path, int cus);
/* The capability lists per data type and algorithm id (JSON), with the GPU's name and the cuBLASLt version;
 * written to a temporary file and renamed into place. */
int collect_gemm_caps_write(const char *path, const char *gpu, long cublaslt_version, const collect_gemm_capset *sets,
                            int n_sets);

/* The problems already in an output file: the keys of its finished members, sorted, and the byte length of
 * the file up to its last finished member (0 when the file is missing, empty or holds no header member). */
typedef struct collect_gemm_done {
    char **keys;
    int n;
    long rows;
    long good_bytes;
    int truncated; /* the file went on past good_bytes (an unfinished problem, dropped) */
} collect_gemm_done;

/* Scans a table this command wrote; COLLECT_EFORMAT when its first member is not the header row. */
int collect_gemm_done_scan(const char *path, collect_gemm_done *d);
int collect_gemm_done_has(const collect_gemm_done *d, const char *key);
void collect_gemm_done_free(collect_gemm_done *d);

/* The output: a fresh file starting with the header member (good_bytes 0), or an existing one cut back to
 * good_bytes and appended to. */
typedef struct collect_gemm_out {
    void *gz; /* gzFile */
    char path[4096];
} collect_gemm_out;
int collect_gemm_out_open(collect_gemm_out *o, const char *path, long good_bytes);
/* Writes a problem's rows as one gzip member and flushes it to the file. */
int collect_gemm_out_write(collect_gemm_out *o, const collect_gemm_shape *s, const collect_gemm_row *rows, int n);
int collect_gemm_out_close(collect_gemm_out *o);

#endif
