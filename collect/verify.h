/* verify: the CPU part of `heurist-collect verify`, which times exported heurist models' picks against the
 * vendor's on the GPU (convolutions: verify_cmd.c with cuDNN; GEMMs: verify_gemm_cmd.c with cuBLASLt).
 *
 * Problem lists carry each problem's source (`pool`, a network, a GEMM family) and, for convolutions, its
 * precision class (data/portable.h's DATA_PRECISION_LIST: which math types an FP32 problem allows). A
 * shortlist is a ranking's first k distinct candidates plus the vendor's pick when it is not among them; the
 * GPU times each once and keeps the fastest, as torch.backends.cudnn.benchmark or Triton's autotuner do.
 * The report is a tab-separated file, one row per (problem, model), then '#' summary lines; its reader goes
 * by column names, so reports of every version (twelve columns, or more) read the same, and summaries are
 * recomputed from it with bootstrap intervals and per-slice rows (report.c).
 * Free of CUDA and of the exported models; functions return 0 or a negative COLLECT_E* code (collect.h).
 */
#ifndef HEURIST_COLLECT_VERIFY_H
#define HEURIST_COLLECT_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "collect.h"
#include "gemm.h"

/* ---- problem lists ---- */
typedef struct collect_problem {
    char *key;
    char *source;    /* the list's tag, or the default source */
    int precision;   /* data_precision from the list, or -1: the run's --precision */
} collect_problem;

/* A list of problem keys with optional tags, '#' lines and blank lines skipped:
 *   - a table whose first line starts with "key<TAB>": columns by name, the source from the first of
 *     "source", "network", "family", the class from "precision" (datasets/h100/networks/networks.tsv reads so);
 *   - otherwise one problem a line: KEY [SOURCE [PRECISION]], whitespace-separated ("KEY=..." find-db lines
 *     give their key).
 * Fails naming the file and line of an unknown precision class or a table row without its key. */
int collect_problems_read(const char *path, const char *default_source, collect_problem **out, int *n);
void collect_problems_free(collect_problem *p, int n);

/* ---- precision classes of convolutions ---- */
/* The class named name[0..len) ("strict", "tf32", "conversion"), or -1. */
int collect_precision_parse(const char *name, size_t len);
/* 1 when kernel (dir, algo, math) may serve a problem of type t under class cls
 * (data_portable_precision_allows: FP16 and BF16 problems allow every kernel). */
int collect_kernel_allowed(int cls, collect_dtype t, collect_dir dir, int algo, int math);
/* The math type cuDNN's heuristic is asked with: the class's (FMA, DEFAULT, ALLOW_CONVERSION) for FP32,
 * TENSOR_OP for FP16 and BF16. */
int collect_heuristic_math(int cls, collect_dtype t);
/* cuDNN's heuristic list (ha, hm)[0..nh), asked with math type hmath (collect_heuristic_math), as the kernels
 * a user of it runs: an entry whose reported math type the class does not allow runs with the descriptor's,
 * hmath; repeats and algorithms out of range dropped. Writes out_a, out_m (room for nh); returns the count. */
int collect_heuristic_kernels(int cls, collect_dtype t, collect_dir dir, int hmath, const int *ha, const int *hm, int nh,
                              int *out_a, int *out_m);
/* Every (algo, math) pair of the direction that class cls allows for type t, the pairs (first_a, first_m)
 * first in their order (cuDNN's heuristic list, so that the timing's 5x bound applies early), then the
 * others by algorithm and math type; out_a and out_m need room for 8 x COLLECT_MATH_COUNT. Returns the count. */
int collect_conv_candidates(collect_dir dir, collect_dtype t, int cls, const int *first_a, const int *first_m,
                            int n_first, int *out_a, int *out_m);
/* The entries of a find-db line of direction dir that class cls allows for type t, as results (ms the
 * collected time, workspace 0), fastest first; at most max. Fails on an entry that is not a kernel of dir. */
int collect_fdb_candidates(const collect_line *l, collect_dir dir, collect_dtype t, int cls, collect_result *res,
                           int max, int *n);

/* ---- rankings and shortlists ---- */
/* order[0..n): indices of the candidates whose score is finite, highest score first, ties to the lower
 * index (as the exported runtimes rank). Returns how many. */
int collect_rank_scores(const float *scores, int n, int *order);
/* Each candidate's score s[0..n_res) from a model's vocabulary of nk kernels (algo, math as collect_kernel_parse
 * reads their names; allowed: of the problem's direction and allowed by its class; score: the model's): the score
 * of the allowed kernel of the candidate's algorithm and math type, -INFINITY where the model has none, so that
 * collect_rank_scores leaves the candidate out. */
void collect_candidate_scores(const collect_result *res, int n_res, const int *algo, const int *math,
                              const char *allowed, const float *score, int nk, float *s);
/* The shortlist of a ranking: the first k candidates of order[0..n) whose group (group[c]: the algorithm of
 * candidate c, to keep one math type per algorithm; NULL: every candidate its own) no earlier one has, then
 * `must` (the vendor's pick; -1: none) when it is not among them. Writes the candidates to out (room for
 * k + 1); returns their count: k, k + 1 with the vendor's pick, or fewer when the ranking is shorter. */
int collect_shortlist(const int *order, int n, const int *group, int k, int must, int *out);

/* ---- GEMM sources ---- */
/* The family of each shape of a shapes file ("M N K DTYPE TA TB  # FAMILY ..."): the first word of each
 * shape line's comment, "-" when it has none. */
typedef struct collect_gemm_tag {
    char *key, *tag;
    int line;       /* in the file, 1-based */
} collect_gemm_tag;
typedef struct collect_gemm_tags {
    int n;
    collect_gemm_tag *items; /* (n), sorted by key; a key listed twice keeps its first line's tag */
} collect_gemm_tags;
int collect_gemm_tags_read(const char *path, collect_gemm_tags *out);
/* The tag of a table key (collect_gemm_shape_key), or NULL. */
const char *collect_gemm_tags_find(const collect_gemm_tags *t, const char *key);
void collect_gemm_tags_free(collect_gemm_tags *t);

/* ---- the report ----
 * Convolutions: key, model, heuristic, best (kernel names), t_model_ms, t_heur_ms, t_best_ms, speedup,
 * efficiency, decide_us, heur_us, find_ms (the first twelve columns of every version), then model_name,
 * source, precision, the shortlist columns (k .. vendor_topk_ms, "_ms" times) and shortlist_timing (how the
 * shortlists' kernels were timed: "careful", the collection's method, "once", one launch after a warm-up, or
 * "batch", the whole shortlist in one pass behind a hold, "batch-retime-F" with timed warm-ups and only the
 * kernels within F of the fastest launched again, "batch-no-warmup" one launch each;
 * verify --shortlist-timing, --shortlist-retime-within, --shortlist-no-warmup), then find_algos and find_kernel_ms
 * (with --find-cost: the kernels cudnnFind ran and the sum of their times as it reports them). GEMMs: the first
 * seventeen columns of COLLECT_REPORT_GEMM_HEADER, then the same shortlist columns with "_us" times and
 * shortlist_timing: how cuBLASLt's list and the shortlists were timed ("careful", or "interleaved": each
 * shortlist's configurations together in one pass). "-" marks a value not measured (no shortlist asked, cudnnFind
 * not timed). */
#define COLLECT_REPORT_CONV_HEADER                                                                              \
    "key\tmodel\theuristic\tbest\tt_model_ms\tt_heur_ms\tt_best_ms\tspeedup\tefficiency\tdecide_us\theur_us\t"   \
    "find_ms\tmodel_name\tsource\tprecision\tk\ttopk_timings\ttopk_pick\tt_topk_ms\ttopk_ms\tvendor_topk_pick\t"  \
    "t_vendor_topk_ms\tvendor_topk_ms\tshortlist_timing\tfind_algos\tfind_kernel_ms\n"
#define COLLECT_REPORT_GEMM_HEADER                                                                              \
    "key\tmodel\theuristic\tbest\tt_model_us\tt_heur_us\tt_best_us\tspeedup\tefficiency\tdecide_us\theur_us\t"   \
    "autotune_ms\tlist_best\tt_list_us\tcandidates\tlist\tmodel_rank_fallbacks\tmodel_name\tsource\tk\t"         \
    "topk_timings\ttopk_pick\tt_topk_us\ttopk_ms\tvendor_topk_pick\tt_vendor_topk_us\tvendor_topk_ms\t"          \
    "shortlist_timing\n"

typedef enum collect_report_kind { COLLECT_REPORT_CONV, COLLECT_REPORT_GEMM } collect_report_kind;

typedef struct collect_report_row {
    char *key, *model, *source, *precision; /* model, source, precision "-" when the report has no such column */
    collect_verify_row v;
    double heur_us;                         /* the heuristic call's host time */
    double candidates;                      /* GEMMs: candidates the model ranked (0: not in the report) */
} collect_report_row;

typedef struct collect_report {
    collect_report_kind kind;
    int n;
    collect_report_row *rows;
} collect_report;

/* Reads a report, plain or gzip-compressed (its header names the columns; '#' lines skipped); fails naming the
 * file and line of a row with a missing or malformed value. */
int collect_report_read(const char *path, collect_report *r);
void collect_report_free(collect_report *r);

/* For --resume: the distinct keys of the finished rows of a report being written, sorted, each row read as
 * collect_report_read reads it. The file is cut back before its first '#' line (an earlier run's summary) or
 * after its last complete line; a file that is missing or empty gives no key and *has_header 0. Fails, the file
 * untouched, on a header other than `header` and naming the line of a finished row that does not read (the
 * resumed run's summary would fail on it at its end). */
int collect_report_resume(const char *path, const char *header, char ***keys, int *n, int *has_header);

/* The value of a slice field for a row: "model", "source", "precision", and from the key "dir" (F, B, W),
 * "dtype", "dims" (2d, 3d) and "groups" (dense, grouped, depthwise) for convolutions, "dtype" and "trans"
 * (NN, NT, ...) for GEMMs. COLLECT_EINVAL naming an unknown field. */
int collect_report_field(const collect_report *r, int row, const char *field, char *buf, size_t size);

/* Summary of a report's rows: the single-pick figures of collect_verify_summarize, the 95% bootstrap
 * interval of the geometric-mean speed-up (resamples draws of the rows with replacement, seeded), and the
 * slices: for each spec of `by` (comma-separated; "dir+dtype" crosses fields), one row per value. Rows of
 * several models are summarized per model. Prints to f. */
int collect_report_summarize(FILE *f, const collect_report *r, double noise_ratio, int resamples, uint64_t seed,
                             const char *by);
/* The end of a verify run (verify_cmd.c, verify_gemm_cmd.c): closes its report fo, then appends to the report
 * at `out` and prints the summary of all its rows (earlier runs' too: collect_report_tail) and this run's time
 * an `item` ("problem", "shape") over the `measured` ones, in all (seconds) and per part (n_parts, by name, in
 * seconds); "no <item> verified" when the report holds no row. 0, or a negative code with the error set. */
int collect_report_finish(FILE *fo, const char *out, const char *item, int measured, double seconds, int n_parts,
                          const char *const *part_names, const double *part, double noise_ratio);
/* The '#' lines a verify run ends its report with: per model, the summary lines of collect_report_summarize
 * without slices and bootstrap. */
int collect_report_tail(FILE *f, const collect_report *r, double noise_ratio);

/* ---- the re-timed configurations of a GEMM verify (verify --table --retimed-out PATH) ----
 * A tab-separated file: the header "key", collect_gemm_kernel_columns, "time_us", then per shape one row for each
 * configuration its interleaved re-timing ran, time_us the median over the rounds (a configuration that failed
 * to run left out). Written to PATH.tmp and renamed to PATH when the run ends (stopped by --time-limit too); a
 * shape's rows are flushed before its report rows, so that PATH.tmp of a run cut short holds every shape of the
 * report. */
typedef struct collect_retimed_out {
    FILE *f;
    char path[4096], tmp[4096];
} collect_retimed_out;
/* Opens PATH.tmp. With resume, it starts with the rows of PATH.tmp (an interrupted run's) or else PATH whose key is
 * among done (n_done, sorted: the report's finished shapes, collect_report_resume), so that the resumed file
 * equals an uninterrupted run's (written to PATH.tmp.new and renamed over PATH.tmp, which is never truncated
 * first); COLLECT_EFORMAT naming the file when it lacks one of them, its header is not this format's, or a
 * complete line is not a row as collect_retimed_write writes it (naming the line). */
int collect_retimed_open(collect_retimed_out *o, const char *path, char *const *done, int n_done, int resume);
/* Appends a shape's n configurations and their median times (those not finite left out) and flushes. */
int collect_retimed_write(collect_retimed_out *o, const char *key, const collect_gemm_config *cfg, const double *us,
                          int n);
/* Closes PATH.tmp and renames it to PATH. */
int collect_retimed_close(collect_retimed_out *o);
/* Closes PATH.tmp and leaves it for --resume (a failed run). */
void collect_retimed_abandon(collect_retimed_out *o);

#endif
