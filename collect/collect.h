/* collect: measures cuDNN's convolution algorithms on an NVIDIA GPU and writes MIOpen find-db text.
 *
 * `heurist-collect conv` reads problem keys (MIOpen find-db key syntax, data/portable.h parses them),
 * times every algorithm x math type cuDNN accepts for each, and writes one find-db line per problem, so
 * heurist's loaders, features, splits and exports read the result unchanged. A sidecar file records cuDNN's
 * own heuristic ranking per problem (the vendor baseline). `verify` times an exported model's pick against
 * cuDNN's heuristic pick and a fresh exhaustive best; `noise` compares two collections of the same keys.
 *
 * This header is the CPU part, free of CUDA and of heurist's own libraries (it builds where only a C
 * compiler is found, and its tests run in CI): key -> descriptor sizes, kernel names, the text formats and
 * the report statistics. gpu.h (cudnn_conv.c, spin.cu) and the conv / verify commands need the GPU.
 * Functions return 0 or a negative COLLECT_E* code and leave a one-line message in collect_last_error().
 */
#ifndef HEURIST_COLLECT_H
#define HEURIST_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { COLLECT_OK = 0, COLLECT_EINVAL = -1, COLLECT_EFORMAT = -2, COLLECT_EIO = -3, COLLECT_ENOMEM = -4 };

/* The message of the last failed call on this thread ("" if none). */
const char *collect_last_error(void);
int collect_error(int code, const char *fmt, ...);
/* strcmp of two strings through pointers to them: qsort and bsearch of a list of keys (char *). */
int collect_cmp_str(const void *a, const void *b);

/* ---- problems ---- */
typedef enum collect_dir { COLLECT_DIR_F, COLLECT_DIR_B, COLLECT_DIR_W, COLLECT_DIR_COUNT } collect_dir;
typedef enum collect_dtype { COLLECT_DTYPE_FP32, COLLECT_DTYPE_FP16, COLLECT_DTYPE_BF16 } collect_dtype;
typedef enum collect_layout { COLLECT_LAYOUT_NCHW, COLLECT_LAYOUT_NHWC } collect_layout;

/* A convolution in cuDNN's terms: x (n, c, sp...), w (k, c/groups, fil...), y (n, k, out...), whatever the
 * direction (the key's "in" is x for F and dy for B and W, MIOpen's convention). Spatial arrays hold nd
 * entries, depth first for 3-D. */
typedef struct collect_conv {
    int nd;                    /* spatial dims: 2 or 3 */
    int n, c, k, groups;
    int x_sp[3], w_sp[3], y_sp[3];
    int pad[3], stride[3], dil[3];
    collect_layout layout;
    collect_dtype dtype;
    collect_dir dir;
} collect_conv;

/* Parses a problem key (up to '=' or len) into a convolution; checks strides and dilations are at least 1, groups
 * divide c and k, the key's output size is the convolution's and each tensor's bytes fit int64. 0, or
 * COLLECT_EFORMAT naming the reason. */
int collect_conv_from_key(const char *key, size_t len, collect_conv *cv);

/* cuDNN dimension arrays (n, c, [d], h, w) of x, y and w; each returns nd + 2. */
int collect_conv_x_dims(const collect_conv *cv, int dims[5]);
int collect_conv_y_dims(const collect_conv *cv, int dims[5]);
int collect_conv_w_dims(const collect_conv *cv, int dims[5]);
/* Elements of x, y and w; bytes per element; multiply-adds x 2 of the forward convolution. */
int64_t collect_conv_x_elems(const collect_conv *cv);
int64_t collect_conv_y_elems(const collect_conv *cv);
int64_t collect_conv_w_elems(const collect_conv *cv);
int collect_dtype_bytes(collect_dtype t);
double collect_conv_flops(const collect_conv *cv);
/* An estimate of the seconds `conv` spends on the problem, to deal long problems first (run.h), not a
 * prediction of a kernel's time: exp of a linear model of ln FLOPs, ln bytes, direction, data type, 3-D and
 * grouped, fitted to the measuring times of the H100 pool collection (problem.c, scripts/fit_cost.py). */
double collect_conv_cost_s(const collect_conv *cv);

/* ---- kernels: algorithm x math type ---- */
/* Math types, numbered as cudnnMathType_t. */
enum { COLLECT_MATH_DEFAULT, COLLECT_MATH_TENSOR_OP, COLLECT_MATH_TENSOR_OP_ALLOW_CONVERSION, COLLECT_MATH_FMA,
       COLLECT_MATH_COUNT };
/* Algorithms of a direction (numbered as cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t). */
int collect_algo_count(collect_dir dir);
/* "FWD_IMPLICIT_PRECOMP_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_FFT", ...; NULL when out of range. */
const char *collect_algo_name(collect_dir dir, int algo);
const char *collect_math_name(int math); /* "default", "tensor_op", "tensor_op_allow_conversion", "fma" */
/* The find-db algorithm column: "cudnnConvolutionFwdAlgo", "cudnnConvolutionBwdDataAlgo", ... */
const char *collect_algo_column(collect_dir dir);
/* The math type (COLLECT_MATH_*) cuDNN's heuristic is asked with under a precision class (data_precision of
 * data/portable.h, which holds the rule of the kernels each class allows): FMA for strict FP32, DEFAULT for
 * TF32, TENSOR_OP_ALLOW_CONVERSION for conversion; -1 out of range. */
int collect_precision_math(int precision);
/* A file beside the heuristic sidecar side: "X.txt" -> "X.<cls><ext>", any other name -> "side.<cls><ext>"
 * (ext ".txt" for another class's sidecar, ".tsv" for the call times). 0, or COLLECT_EINVAL when buf is too small. */
int collect_sidecar_class_path(const char *side, const char *cls, const char *ext, char *buf, size_t size);
/* Writes "<algo>.<math>" into buf; 0, or COLLECT_EINVAL when out of range or buf too small. */
int collect_kernel_name(collect_dir dir, int algo, int math, char *buf, size_t size);
/* Inverse of collect_kernel_name; 0 with dir/algo/math set, or COLLECT_EFORMAT. */
int collect_kernel_parse(const char *name, size_t len, collect_dir *dir, int *algo, int *math);

/* ---- find-db lines ---- */
typedef struct collect_result {
    int algo, math;
    double ms;          /* median time of one launch */
    size_t workspace;   /* bytes */
} collect_result;

/* Writes "<key>=<kernel>:<ms>,<workspace>,<column>;..." fastest first and a newline, then flushes.
 * Sorts res in place. 0, or COLLECT_EIO / COLLECT_EINVAL (no result). */
int collect_fdb_write_line(FILE *f, const char *key, collect_dir dir, collect_result *res, int n);

/* One parsed line of a find-db or sidecar file: the key and its entries in file order. */
typedef struct collect_line {
    char *key;
    int n;
    char **names;   /* (n) */
    double *ms;     /* (n): times for a find-db line, 0 for a sidecar */
} collect_line;

typedef struct collect_file {
    collect_line *lines;
    int n;
} collect_file;

/* Reads a find-db ("name:ms,ws,algo" entries) or sidecar ("name" entries) text file; fails naming the
 * file and line of the first malformed one. */
int collect_file_read(const char *path, collect_file *out);
void collect_file_free(collect_file *f);
/* Index of the line with this key, or -1 (linear search is fine for a few thousand lines). */
int collect_file_find(const collect_file *f, const char *key);
/* Writes a sidecar line "<key>=<name>;<name>;..." and flushes. */
int collect_sidecar_write_line(FILE *f, const char *key, const char *const *names, int n);

/* ---- statistics ---- */
/* p-th percentile (0..100) of v[0..n), linear interpolation between order statistics (sorts v). */
double collect_percentile(double *v, int n, double p);
/* The median of v[0..n): the middle order statistic, or the mean of the two middle ones (sorts v); NAN when n < 1. */
double collect_median(double *v, int n);

/* Which kernels of a shortlist pass are launched again after timed warm-ups (gpu_time_list, the fake verify
 * backend): again[i] = 1 when first[i] is finite and lower[i] <= within x min_j first[j], first[i] the warm-up's
 * time and lower[i] <= first[i] a bound below the kernel's own time (the warm-up's time less the host's call, which
 * an unheld launch may have waited on): a kernel is spared its second launch only when it is clearly slower than
 * the fastest warm-up. When fewer than two qualify, none is launched again (the pick is already decided). Returns
 * how many are. */
int collect_retime_select(const double *first, const double *lower, int n, double within, char *again);

/* The 2.5th and 97.5th percentiles of the geometric mean of x[0..n) over `resamples` draws of n values with
 * replacement (splitmix64 from seed): a 95% bootstrap interval. */
int collect_bootstrap_geomean(const double *x, int n, int resamples, uint64_t seed, double *lo, double *hi);

/* Two collections of the same keys: how often they agree on the fastest kernel and how the best time moves
 * (ratio b/a of each problem's best time). */
typedef struct collect_noise {
    int n;                   /* keys present in both */
    double agree;            /* share with the same fastest kernel */
    double ratio_p10, ratio_p50, ratio_p90;
    double noise_ratio;      /* 90th percentile of max(r, 1/r): a time difference below it is noise */
} collect_noise;
int collect_noise_compute(const collect_file *a, const collect_file *b, collect_noise *out);

/* One verified problem: interleaved times of the model's pick, the heuristic's pick and the fresh best (the
 * fastest of every kernel re-timed), and of the shortlists' picks when a shortlist was asked (k > 0). Times
 * are milliseconds for convolutions, microseconds for GEMMs; the costs (find_ms, topk_ms, vtopk_ms) are
 * milliseconds of wall time. */
typedef struct collect_verify_row {
    double t_model, t_heur, t_best;
    double decide_us;                   /* model decision time per problem */
    double find_ms;                     /* cost of the exhaustive search: cudnnFind* (0: not measured), or
                                         * timing every entry of cuBLASLt's list once */
    int find_algos;                     /* convolutions: the kernels cudnnFind ran and timed (its results of
                                         * status success; 0: not in the report) */
    double find_kernel_ms;              /* the sum of those kernels' times as cudnnFind reports them */
    double t_list;                      /* GEMMs: the re-timed pick of that list timing (0: none) */
    int k;                              /* shortlist length asked; 0: none */
    int topk_timings;                   /* kernels the model's shortlist timed: k, or k + 1 with the vendor's pick */
    double t_topk, topk_ms;             /* the model's shortlist: its pick re-timed, the time spent timing it */
    double t_vtopk, vtopk_ms;           /* the same for the vendor's first k */
} collect_verify_row;

typedef struct collect_verify_summary {
    int n;
    double speedup_geomean;             /* geometric mean of t_heur / t_model */
    double speedup_p10, speedup_p50, speedup_p90;
    double speedup_worst;               /* the smallest t_heur / t_model */
    double efficiency_mean;             /* mean of min(t_best, t_model, t_heur) / t_model */
    double heur_efficiency_mean;        /* the same for the heuristic */
    double share_slower;                /* t_model > t_heur * noise_ratio */
    double share_faster;                /* t_heur > t_model * noise_ratio */
    double decide_us_mean, find_ms_mean;
    int n_find;                         /* rows whose exhaustive search was timed (find_ms > 0) */
    int n_list;                         /* rows with t_list (GEMMs) */
    double list_efficiency_mean, list_speedup_geomean;
    int n_topk;                         /* rows with shortlists; the figures below are over them */
    double topk_efficiency_mean, vtopk_efficiency_mean;   /* best / t_topk, best / t_vtopk */
    double topk_speedup_geomean, topk_speedup_worst;      /* t_heur / t_topk */
    double vtopk_speedup_geomean;
    double topk_ms_mean, vtopk_ms_mean;
    double topk_find_ratio, vtopk_find_ratio;  /* sum of topk_ms / sum of find_ms over rows with both; NAN: none */
    double share_topk_slower;           /* t_topk > t_heur * noise_ratio */
    double share_topk_extra;            /* k + 1 timings (the vendor's pick added) */
} collect_verify_summary;
int collect_verify_summarize(const collect_verify_row *rows, int n, double noise_ratio, collect_verify_summary *out);

#endif
