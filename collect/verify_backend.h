/* verify_backend: what `heurist-collect verify` asks of the GPU, behind a table of functions so that its loops
 * (verify_cmd.c, verify_gemm_cmd.c) run without one.
 *
 * Two implementations: the GPU's (verify_gpu.c over gpu.h and gemm_gpu.h; built with CUDA) and a fake one
 * (verify_fake.c, under HEURIST_COLLECT_FAKE: timer.h) that answers from the collector's fake timer, so a
 * fake verify of a fake collection finds the collected times again: a convolution's candidates and
 * heuristic lists are what the fake `conv` records for its key, a GEMM's heuristic list the fake `gemm`
 * table's ranked rows and any configuration's time the table's formula.
 * Functions return 0, 1 with *why when the problem or candidate is refused, or a negative COLLECT_E* code on
 * a device error that ends the run.
 */
#ifndef HEURIST_COLLECT_VERIFY_BACKEND_H
#define HEURIST_COLLECT_VERIFY_BACKEND_H

#include <stddef.h>
#include <stdio.h>

#include "collect.h"
#include "gemm.h"

/* the fake backend's host work a kernel of a cudnnFind call, milliseconds */
#define VERIFY_FAKE_FIND_HOST_MS 0.25

/* the most kernels of one time_list pass (gpu.h's GPU_MAX_LIST) */
#define VERIFY_MAX_LIST 64

/* How a time_list pass launches its kernels (the GPU's gpu_list_opts; verify --shortlist-retime-within,
 * --shortlist-no-warmup). */
typedef struct verify_list_opts {
    int warmup;           /* 1: a warm-up launch of each kernel before the timed launches; 0: one timed launch each */
    double retime_within; /* with warm-ups, > 0: the warm-ups timed too, and only the kernels whose warm-up time is
                           * within this factor of the pass's fastest launched again (none when fewer than two
                           * are); 0: the warm-ups untimed and every kernel launched again */
} verify_list_opts;

/* How a time_list pass went (the GPU's gpu_list_stats). */
typedef struct verify_list_timing {
    double wall_ms;  /* the pass's wall time, from its first launch to its last synchronisation, re-runs included */
    int reruns;      /* passes run again because their hold timed out */
    int timed_out;   /* the last pass's hold timed out too: its times may include the host's gaps */
    int spin;        /* held by a spin sized from the warm-ups: mapped pinned memory was not available */
    int unheld;      /* held by nothing but the warm-ups: a warm-up's call took 0.5 ms of host time or more */
    int launches;    /* kernel launches, warm-ups included, re-runs included */
    double sync_ms;  /* the host's wait at the synchronisation between timed warm-ups and the launches again */
} verify_list_timing;

typedef struct verify_conv_backend verify_conv_backend;
struct verify_conv_backend {
    void (*describe)(verify_conv_backend *b, FILE *f);
    /* Tensors and descriptors of a problem, filled with fresh values; problem_end releases them. */
    int (*problem)(verify_conv_backend *b, const collect_conv *cv, const char *key, const char **why);
    void (*problem_end)(verify_conv_backend *b);
    /* cuDNN's v7 heuristic asked with math type `math`: its successful entries in order, *us the call's host
     * time. 0, or 1 when the call fails. */
    int (*heuristic)(verify_conv_backend *b, int math, int *algos, int *maths, int max, int *n, double *us);
    /* One kernel timed by the collector's method (gpu.h), bound_ms the 5x bound (0: none). */
    int (*time)(verify_conv_backend *b, int algo, int math, double bound_ms, double *ms, size_t *workspace,
                const char **why);
    /* One kernel timed as a runtime's shortlist would time it (gpu_time_once): one warm-up launch, then one
     * launch timed by events, no repeats and no spin. The fake backend answers the collected time scaled by a
     * hash of the key and the kernel, 0.5x to 1.5x (collect_fake_once_factor), as one launch's noise. */
    int (*time_once)(verify_conv_backend *b, int algo, int math, double *ms, const char **why);
    /* A shortlist of n kernels (algos[i], maths[i]) timed in one pass, as a runtime choosing among them on the
     * fly would time it (gpu_time_list): workspace asked and allocated before the clock, one warm-up launch of
     * each (o->warmup), the timed launches queued behind a hold the host releases, one event pair each, one
     * synchronisation; with o->retime_within the warm-ups are timed too and a synchronisation between the
     * halves decides which kernels are launched again. ms[i] the GPU time of kernel i's last launch, INFINITY
     * when it is refused; *lt the pass's wall time, launches and how its hold went. The fake backend answers
     * a held launch as time_once does, a timed warm-up as that times collect_fake_first_factor (1 to 1.5: the
     * host's gaps of an unheld launch), and the wall time as the pass's launches' times (no host time). 0, or
     * a negative COLLECT_E* code. */
    int (*time_list)(verify_conv_backend *b, const int *algos, const int *maths, int n, const verify_list_opts *o,
                     double *ms, verify_list_timing *lt);
    /* The wall time of one cudnnFind*AlgorithmEx call under math type `math`, the kernels it ran (its results of
     * status success) and the sum of their times as it reports them. The fake backend's call runs every
     * candidate once at its collected time, plus VERIFY_FAKE_FIND_HOST_MS of host work for each. 0, or 1 when it
     * fails. */
    int (*find)(verify_conv_backend *b, int math, double *ms, int *algos, double *kernel_ms);
    void (*close)(verify_conv_backend *b);
    void *state;
};

typedef struct verify_conv_opts {
    int repeats;
    double min_repeat_ms;
    size_t ws_limit;
} verify_conv_opts;

int verify_conv_backend_open_fake(verify_conv_backend *b, const verify_conv_opts *o);
int verify_conv_backend_open_gpu(verify_conv_backend *b, const verify_conv_opts *o);

typedef struct verify_gemm_backend verify_gemm_backend;
struct verify_gemm_backend {
    void (*describe)(verify_gemm_backend *b, FILE *f);
    int (*problem)(verify_gemm_backend *b, const collect_gemm_shape *s, const char *key, const char **why);
    void (*problem_end)(verify_gemm_backend *b);
    /* cuBLASLt's heuristic list (at most max entries), each as its configuration and a handle for time; *us
     * the call's host time. 0, or 1 when the call fails. */
    int (*heuristic)(verify_gemm_backend *b, int max, collect_gemm_config *cfg, int *handle, int *n, double *us);
    /* A configuration rebuilt and checked (cublasLtMatmulAlgoCheck): 0 with a handle for time. */
    int (*build)(verify_gemm_backend *b, const collect_gemm_config *cfg, int *handle, const char **why);
    /* One configuration timed by the collector's method (gemm_gpu.h), no bound. */
    int (*time)(verify_gemm_backend *b, int handle, double *us, const char **why);
    /* Configurations timed together (--shortlist-timing interleaved; gemm_gpu.h's gemm_gpu_time_interleaved):
     * a warm-up launch of each, then `rounds` rounds of one launch of each handle in turn, behind a hold the
     * host releases, one synchronisation; n x rounds at most VERIFY_GEMM_MAX_PASS_LAUNCHES. us[i] the median of handle i's launches (INFINITY when cuBLASLt refuses it), *ms the
     * pass's wall time, *timed_out 1 when the hold gave up before every launch was queued. The fake backend
     * answers each launch with the configuration's time times a factor of 0.9 to 1.1 hashed from the key, the
     * configuration and the round (collect_fake_pass_factor), refuses the launches of a configuration whose
     * hash is a multiple of 13 (as cublasLtMatmul may refuse at launch what AlgoCheck accepted; its careful
     * timing accepts them), costs the warm-up's and the launches' times plus 5 us of the host's work a launch
     * (the warm-up launch at the configuration's time), and says the hold
     * timed out on every seventh pass it is asked for (the 4th, the 11th, ...). 0, or a negative COLLECT_E*
     * code. */
    int (*time_pass)(verify_gemm_backend *b, const int *handles, int n, int rounds, double *us, double *ms,
                     int *timed_out);
    void (*close)(verify_gemm_backend *b);
    void *state;
};

/* the most timed launches of an interleaved pass (gemm_gpu.h's GEMM_GPU_MAX_PASS_LAUNCHES: a stream's queue
 * holds about a thousand commands behind the hold) */
#define VERIFY_GEMM_MAX_PASS_LAUNCHES 256

typedef struct verify_gemm_opts {
    size_t a_max, b_max, d_max, ws_bytes; /* operand bytes of the largest shape, the workspace */
    int repeats, max_batch;
    double min_batch_us;
} verify_gemm_opts;

int verify_gemm_backend_open_fake(verify_gemm_backend *b, const verify_gemm_opts *o);
int verify_gemm_backend_open_gpu(verify_gemm_backend *b, const verify_gemm_opts *o);

#endif
