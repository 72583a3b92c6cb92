/* core: what every heurist module shares.
 *
 * - Status codes: library functions return 0 (HR_OK) or a negative hr_status and leave a one-line
 *   message for the calling thread in hr_last_error(). Only main() exits.
 * - HR_ASSERT: programming errors (a wrong shape passed by our own code) abort with file and line.
 * - hr_log: a level-filtered sink passed explicitly; no global verbosity.
 * - hr_rng: a seeded xoshiro256** generator passed explicitly, so every run reproduces from its seed.
 * - hr_parallel_for: a static partition of [0, n) over a fixed number of pthreads; a partition depends
 *   only on n and the thread count, and reductions are done by the caller in a fixed order.
 * - Checked file I/O: whole-file reads, and write-to-temporary-then-rename so that a crash never
 *   leaves a half-written output in place.
 * Arrays are row-major everywhere in heurist: a (R, C) matrix stores element (r, c) at r * C + c.
 */
#ifndef HEURIST_CORE_H
#define HEURIST_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum hr_status {
    HR_OK = 0,
    HR_EINVAL = -1,   /* bad argument or configuration value */
    HR_EIO = -2,      /* a read or write failed, or a file is truncated */
    HR_ENOMEM = -3,   /* allocation failed */
    HR_EFORMAT = -4,  /* input does not follow its format */
    HR_EVERSION = -5, /* file written by a newer format version */
    HR_ESTATE = -6,   /* call not valid in the object's current state */
} hr_status;

/* Records "fmt ..." as the calling thread's last error and returns code (so `return hr_error(...)`). */
int hr_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the thread's last error with "fmt: ", keeping the deeper cause; returns code. */
int hr_error_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *hr_last_error(void);
/* Forgets the thread's last error (a caller that checks each failure comes with its own message). */
void hr_error_clear(void);

#define HR_ASSERT(cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) hr_assert_fail(#cond, __FILE__, __LINE__);                                    \
    } while (0)
_Noreturn void hr_assert_fail(const char *expr, const char *file, int line);

/* Checked allocation: NULL on failure with hr_error(HR_ENOMEM) recorded. Zeroed for calloc. */
void *hr_calloc(size_t n, size_t size);
void *hr_malloc(size_t size);
char *hr_strdup(const char *s);

/* ---- logging ---- */
typedef enum hr_log_level {
    HR_LOG_ERROR = 0,
    HR_LOG_WARN = 1,
    HR_LOG_INFO = 2,
    HR_LOG_DEBUG = 3,
} hr_log_level;

typedef struct hr_log {
    FILE *sink;    /* NULL: discard everything */
    int level;     /* messages above this level are dropped */
} hr_log;

/* A log that writes INFO and below to stderr. */
hr_log hr_log_stderr(int level);
/* A log that discards everything (tests, benchmarks). */
hr_log hr_log_silent(void);
void hr_log_printf(const hr_log *log, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- the processes of one computation ---- */
/* Collective operations over the processes that share one computation (data-parallel training), as plain
 * function pointers: dist/ implements them over MPI, and nothing below it knows MPI. Every process calls
 * them in the same order with the same n. */
typedef enum hr_reduce_op {
    HR_REDUCE_SUM = 0, /* int64 sums: exact, whatever the order of the processes */
    HR_REDUCE_MAX = 1,
} hr_reduce_op;

typedef struct hr_comm {
    int rank, size;
    /* buf (n) = op over every process of its buf (n), in place; returns 0 or a negative hr_status */
    int (*allreduce_i64)(void *ctx, int64_t *buf, size_t n, hr_reduce_op op);
    void *ctx;
} hr_comm;

/* ---- random numbers: xoshiro256**, seeded by splitmix64 ---- */
typedef struct hr_rng {
    uint64_t s[4];
} hr_rng;

void hr_rng_seed(hr_rng *rng, uint64_t seed);
uint64_t hr_rng_next(hr_rng *rng);
/* uniform integer in [0, n) without modulo bias */
uint64_t hr_rng_below(hr_rng *rng, uint64_t n);
/* uniform in [0, 1) with 24 random bits (float) or 53 (double) */
float hr_rng_uniform(hr_rng *rng);
double hr_rng_uniform_d(hr_rng *rng);
/* standard normal by Box-Muller (no cached second value, so the stream is state-only) */
float hr_rng_normal(hr_rng *rng);
/* Fisher-Yates shuffle of n ints */
void hr_rng_shuffle_int(hr_rng *rng, int *a, size_t n);
/* A generator for stream `stream` derived from (seed, stream): independent per-thread or per-tree RNGs. */
void hr_rng_derive(hr_rng *out, uint64_t seed, uint64_t stream);

/* ---- threads ---- */
/* Number of threads to use: n > 0 as given, n <= 0 means all online cores. */
int hr_threads_resolve(int n);
/* Sets OpenBLAS's thread count, process-wide state with one owner per run: in heurist the pipeline sets it
 * at the start of training and of evaluation (pipeline/pipeline.c), a benchmark in its main. hr_blas_threads
 * reads it. */
void hr_blas_set_threads(int n);
int hr_blas_threads(void);

/* fn(ctx, begin, end, tid) is called for contiguous chunks covering [0, n); chunk boundaries depend only
 * on (n, nthreads). Runs inline when nthreads == 1 or n is small. */
typedef void (*hr_range_fn)(void *ctx, size_t begin, size_t end, int tid);
int hr_parallel_for(int nthreads, size_t n, hr_range_fn fn, void *ctx);

/* A team of threads kept for many short parallel steps (a training run's mini-batches), where creating
 * threads per step would cost more than the step. hr_team_run calls fn(ctx, tid, n) on every member (the
 * caller is tid 0) and returns when all have returned; inside fn, hr_team_barrier waits for the whole team.
 * Waiting spins briefly, then yields the core, then sleeps in short turns. A team of 1 (or NULL) runs fn
 * inline. Not reentrant. */
typedef struct hr_team hr_team;
typedef void (*hr_team_fn)(void *ctx, int tid, int n);
/* *out = a team of nthreads (resolved as hr_threads_resolve). If a thread cannot be started, those started
 * are ended and joined and an error (HR_ENOMEM when the system is out of threads or memory) is returned. */
int hr_team_create(int nthreads, hr_team **out);
void hr_team_free(hr_team *t); /* NULL is fine */
int hr_team_size(const hr_team *t);
void hr_team_run(hr_team *t, hr_team_fn fn, void *ctx);
void hr_team_barrier(hr_team *t);

/* ---- sorting ---- */
/* Ascending LSD radix sort of n floats (no NaNs), 8 bits a pass; tmp holds n floats of scratch. */
void hr_sort_floats(float *v, float *tmp, size_t n);

/* ---- string maps ---- */
/* A string -> int hash map: keys (any bytes but NUL, copied and owned) get indices 0, 1, ... in the order they
 * were added; lookups and additions take expected constant time, so a table of names is built in linear time.
 * A zeroed struct is an empty map. A caller may take a key (read keys[i], then set it to NULL) when it makes
 * no call on the map other than hr_strmap_free afterwards. */
typedef struct hr_strmap {
    char **keys;      /* (n) in order of addition */
    int *values;      /* (n) */
    int n;
    int cap_keys;
    int *slots;       /* (cap) index + 1, 0: empty */
    uint64_t *hashes; /* (cap) hash of the key in each slot */
    int cap;          /* a power of two, at least twice n */
} hr_strmap;

/* Index of key[0..len) or -1 when absent (or m is NULL). */
int hr_strmap_find(const hr_strmap *m, const char *key, size_t len);
/* The value of the NUL-terminated key, or fallback when absent. */
int hr_strmap_get(const hr_strmap *m, const char *key, int fallback);
/* Adds key[0..len) -> value when absent: returns 1 (added), 0 (present: its value is kept) or HR_ENOMEM;
 * *index (may be NULL) = the key's index either way. */
int hr_strmap_add(hr_strmap *m, const char *key, size_t len, int value, int *index);
void hr_strmap_free(hr_strmap *m); /* NULL is fine; leaves an empty map */

/* ---- time ---- */
double hr_now(void); /* monotonic seconds */
/* Peak resident set size of this process in bytes (from /proc/self/status VmHWM), 0 if unknown. */
size_t hr_peak_rss(void);

/* ---- files ---- */
/* Reads a whole file; *buf is NUL-terminated (not counted in *len). Free with free(). */
int hr_file_read_all(const char *path, char **buf, size_t *len);
/* A temporary path beside `path` ("path.heurist-tmp.<pid>.<n>") for write-then-rename; first removes the
 * temporaries that killed heurist processes left in that folder (hr_file_remove_stale_tmps). Caller frees. */
char *hr_file_tmp_path(const char *path);
/* Removes regular files "*.heurist-tmp.<pid>.<n>" in dir ("" = current) whose pid no longer runs on this
 * machine; returns how many. */
int hr_file_remove_stale_tmps(const char *dir);
/* An output path may be replaced only when it is absent or a regular file (never a device, a directory
 * or a symlink); otherwise a one-line HR_EINVAL naming it. */
int hr_file_check_target(const char *path);
/* Renames tmp over path (atomic on one filesystem) after hr_file_check_target; on failure removes tmp. */
int hr_file_commit(const char *tmp, const char *path);
/* Writes len bytes atomically to path (temporary file, fsync, rename). */
int hr_file_write_atomic(const char *path, const void *data, size_t len);
int hr_file_exists(const char *path);
/* 1 when both paths exist and resolve to one file (the same device and inode: links, "./x" and "x" alike). */
int hr_file_same(const char *a, const char *b);
/* 1 when the first n characters of s end with suffix. */
int hr_ends_with(const char *s, size_t n, const char *suffix);
/* "DIR/NAME" into buf (cap bytes) with one '/' between them, whether or not DIR ends with one (`--out rt/`);
 * HR_EINVAL naming the path when it does not fit. */
int hr_path_join(char *buf, size_t cap, const char *dir, const char *name);
/* Final component of a path, pointing into `path`. */
const char *hr_path_basename(const char *path);
/* mkdir -p for a directory path. */
int hr_mkdir_p(const char *dir);

#endif
