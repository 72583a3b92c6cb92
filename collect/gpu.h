/* gpu: cuDNN convolutions built from collect_conv, and the timing method shared by conv and verify.
 *
 * Timing of one candidate (algorithm x math type): one warm-up launch timed with CUDA events; if a best
 * time is known and the warm-up took more than 5x it, a second warm-up, and a candidate still that slow is
 * given that single time (it cannot win; this bounds the cost of slow algorithms). Otherwise n back-to-back
 * launches per repeat, n chosen so that a repeat lasts >= min_repeat_ms, R repeats queued behind a spin
 * kernel that holds the stream until the host has queued them all, each repeat timed by a pair of events;
 * the time is the median over repeats of (repeat time / n).
 */
#ifndef HEURIST_COLLECT_GPU_H
#define HEURIST_COLLECT_GPU_H

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "cli.h"
#include "collect.h"
#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPU_MAX_REPEATS 64
#define GPU_MAX_LIST 64 /* candidates of one gpu_time_list pass */

typedef struct gpu {
    cudnnHandle_t h;
    cudaStream_t s;
    cudaEvent_t ev[GPU_MAX_REPEATS + 1];
    void *buf[3];           /* x, y, w (dx, dy, dw for the backward directions) */
    size_t cap[3];          /* bytes */
    void *ws;
    size_t ws_cap, ws_limit;
    int repeats;
    double min_repeat_ms;
    unsigned seed;
    cudaEvent_t list_ev[2 * GPU_MAX_LIST]; /* gpu_time_list's event pairs, created on first use */
    gpu_hold_flag hold;                     /* gpu_time_list's hold */
    int hold_state;                         /* 0 not tried yet, 1 the hold, -1 a spin (gpu_hold_init failed) */
    int exact;                              /* HEURIST_COLLECT_MEMCHECK (timer.h): exact-size buffers, a device
                                             * reset in gpu_free */
} gpu;

typedef struct gpu_problem {
    collect_conv cv;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
} gpu_problem;

int gpu_init(gpu *g, int repeats, double min_repeat_ms, size_t ws_limit);
void gpu_free(gpu *g);
/* Prints GPU, driver, runtime and cuDNN versions. */
void gpu_describe(FILE *f);

/* Descriptors and tensors for a problem (tensors filled with fresh uniform values). 0; 1 with *why when
 * cuDNN refuses it or it does not fit; negative on a CUDA error that ends the run. */
int gpu_problem_init(gpu *g, gpu_problem *p, const collect_conv *cv, const char **why);
void gpu_problem_free(gpu_problem *p);

/* Times one candidate (see above); bound_ms is the best median so far (0: none). 0 with ms and workspace;
 * 1 with *why when cuDNN rejects it; negative on a CUDA error that ends the run. */
int gpu_time(gpu *g, gpu_problem *p, int algo, int math, double bound_ms, double *ms, size_t *workspace,
             const char **why);

/* Times one candidate as a runtime's shortlist does (cudnnFind's way, cheaply): the workspace query, one
 * warm-up launch, then one launch timed by events, no repeats and no spin; ms its GPU time. Returns as gpu_time. */
int gpu_time_once(gpu *g, gpu_problem *p, int algo, int math, double *ms, const char **why);

/* How a gpu_time_list pass launches its kernels. */
typedef struct gpu_list_opts {
    int warmup;           /* 1: a warm-up launch of each kernel first; 0: one launch each, behind the hold */
    double retime_within; /* with warm-ups, > 0: the warm-ups timed, and launched again only the kernels within this
                           * factor of the fastest warm-up (collect_retime_select); 0: every kernel launched again */
} gpu_list_opts;

/* How a gpu_time_list pass went. */
typedef struct gpu_list_stats {
    double wall_ms;  /* host wall time from the first launch to the last synchronisation, re-runs included */
    int reruns;      /* passes run again because their hold timed out */
    int timed_out;   /* the last pass's hold timed out too: its times may include the host's gaps */
    int spin;        /* the stream was held by a spin sized from the warm-ups (no mapped pinned memory) */
    int unheld;      /* nothing held the stream: a warm-up's call took 0.5 ms of host time or more */
    int launches;    /* kernel launches, warm-ups and re-runs included */
    double sync_ms;  /* the host's wait at the synchronisation between timed warm-ups and the launches again */
} gpu_list_stats;

/* Times a shortlist of n candidates (algos[i], maths[i]) in one pass, as a runtime choosing among them on the fly
 * would: before the clock starts, each candidate's workspace asked and one workspace for the largest allocated
 * (as gpu_find_ms does for cudnnFind); then one warm-up launch of each (o->warmup), the timed launches queued
 * behind a hold the host releases once all are queued (kernels.h; a spin where the hold is not available; nothing
 * but the warm-ups where a warm-up's call took 0.5 ms of host time or more, a call launching many kernels or
 * waiting for the GPU, which would fill the queue behind the hold), one event pair each, and one synchronisation.
 * With o->retime_within the warm-ups are each timed between events (unheld: a short kernel's time includes the
 * host's call), the stream synchronised, and only the kernels collect_retime_select picks launched again; the
 * others keep their warm-up's time. Without warm-ups each kernel is launched once behind the hold, its timeout
 * 5 ms and 0.5 ms a kernel (the host's calls are not known yet), and a pass whose hold timed out is not run again
 * (a call that fills the queue would time it out again). ms[i] the GPU time of candidate i's last launch,
 * INFINITY when cuDNN refuses it (its math type, workspace query or launch) or its workspace is over the limit.
 * A pass with warm-ups whose hold timed out is run again once. 0, or negative on a CUDA error that ends the run. */
int gpu_time_list(gpu *g, gpu_problem *p, const int *algos, const int *maths, int n, const gpu_list_opts *o, double *ms,
                  gpu_list_stats *st);

/* cuDNN's heuristic ranking (cudnnGet*Algorithm_v7 with the given math type on the descriptor): the
 * successful entries in order, as (algo, math) pairs; *n set. 0, or 1 when the call fails. */
int gpu_heuristic(gpu *g, gpu_problem *p, int math, int *algos, int *maths, int max, int *n);
/* The same with the host time of the cudnnGet*Algorithm_v7 call alone, microseconds (the vendor's decision
 * cost; setting the math type is outside it). */
int gpu_heuristic_timed(gpu *g, gpu_problem *p, int math, int *algos, int *maths, int max, int *n, double *us);

/* Wall-clock milliseconds of one cudnnFind*AlgorithmEx call for the problem under math type `math`, on the
 * problem's tensors with a workspace as large as any algorithm asks within the limit: the cost of the
 * vendor's exhaustive search. *algos the results it returned with status success (the kernels it ran and
 * timed), *kernel_ms the sum of their times as it reports them, so that the call's time splits into its
 * kernels' and the rest (host work, workspace queries, repeats). 0, or 1 on failure. */
int gpu_find_ms(gpu *g, gpu_problem *p, int math, double *ms, int *algos, double *kernel_ms);

/* Times every algorithm x math type of the problem's direction, the pairs (first_algos, first_maths) first
 * (the heuristic's order, so that the 5x bound applies early), and every other pair after them. res needs
 * room for 8 x 4 results; rejected candidates are tallied in skips. 0, or negative on a fatal CUDA error. */
int gpu_time_all(gpu *g, gpu_problem *p, const int *first_algos, const int *first_maths, int n_first,
                 collect_result *res, int *n_res, cli_tally *skips);

/* The math type cuDNN's heuristic is asked with: DEFAULT for FP32, TENSOR_OP for FP16 and BF16. */
int gpu_heuristic_math(collect_dtype t);

#ifdef __cplusplus
}
#endif
#endif
