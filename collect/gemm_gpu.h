/* gemm_gpu: cuBLASLt GEMMs built from collect_gemm_shape, configurations built from collect_gemm_config, and
 * their timing (cublaslt_gemm.c).
 *
 * Timing of one candidate: one warm-up call timed with CUDA events; if a best time is known and the warm-up
 * took more than slow_factor times it, a second warm-up, and a candidate still that slow is given that single
 * time (it cannot win; this bounds the cost of slow configurations). Otherwise R repeats of a batch of B
 * back-to-back calls, B chosen from the warm-up so that a batch lasts >= min_batch_us (at most max_batch),
 * queued behind a spin kernel that holds the stream until the host has queued every call (checked: when the
 * spin ended before the last call was queued, the measurement is repeated behind a four times longer spin);
 * each batch timed by a pair of events; the time is the median over repeats of (batch time / B). The L2
 * cache is not flushed between calls: a batch's calls after its first find A and B in L2 when they fit
 * (50 MiB on an H100), as back-to-back layers of a model do not.
 *
 * Timing of several candidates together (gemm_gpu_time_interleaved, verify's `--shortlist-timing interleaved`):
 * one warm-up launch of each candidate and a synchronisation (a kernel's first launch in the process loads its
 * module, which under CUDA's lazy loading can wait for the context to go idle, that is for the hold), then R
 * rounds, each one launch of every candidate in turn, all queued behind a hold the host releases once the last
 * launch is queued (kernels.h), an event between consecutive launches (each launch timed by the pair around
 * it), one synchronisation; a candidate's time is the median of its R launches. The candidates share the
 * moment and the GPU's state, so drift between them cancels, and the pass costs about R + 1 times their own
 * run times plus the host's launches: a shortlist of fast kernels costs less than a list holding slow ones.
 * A stream's queue holds about a thousand commands and the host blocks on the next one while the hold keeps
 * them queued, so a pass is at most GEMM_GPU_MAX_PASS_LAUNCHES launches (a GEMM may be two kernels, split-K's
 * reduction, and each launch has its event).
 */
#ifndef HEURIST_COLLECT_GEMM_GPU_H
#define HEURIST_COLLECT_GEMM_GPU_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "gemm.h"
#include "kernels.h"

#define GEMM_GPU_MAX_REPEATS 16
/* the most timed launches of one interleaved pass (candidates x rounds) */
#define GEMM_GPU_MAX_PASS_LAUNCHES 256

typedef struct gemm_gpu {
    cublasLtHandle_t lt;
    cudaStream_t s;
    cudaEvent_t ev[GEMM_GPU_MAX_REPEATS + 1];
    void *a, *b, *d, *ws;     /* operands, grown to the largest shape measured so far, and the workspace */
    float *scale;             /* 1.0 on the device: the A and B scales of FP8 GEMMs */
    size_t a_cap, b_cap, d_cap, ws_size;
    int repeats, max_batch;
    double min_batch_us, slow_factor;
    unsigned seed;
    cudaEvent_t *pass_ev;     /* (n_pass_ev): the interleaved pass's events, created as a pass needs them */
    int n_pass_ev;
    gpu_hold_flag hold;       /* the interleaved pass's hold; host NULL until the first pass */
    int exact;                /* HEURIST_COLLECT_MEMCHECK (timer.h): operands at each shape's exact size, a device
                               * reset in gemm_gpu_free */
} gemm_gpu;

typedef struct gemm_problem {
    collect_gemm_shape s;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld; /* ld: C and D */
} gemm_problem;

typedef struct gemm_candidate {
    collect_gemm_config cfg;
    cublasLtMatmulAlgo_t algo;
    size_t workspace;
    int heuristic_rank;  /* -1: not in the heuristic's list */
} gemm_candidate;

/* What one timing did, for the log's tallies. */
typedef enum gemm_time_kind {
    GEMM_TIME_REPEATS,    /* median of R batch means */
    GEMM_TIME_SLOW,       /* a single warm-up (slower than slow_factor x the best) */
} gemm_time_kind;

/* The stream, events, handle and workspace; the operand buffers at the given sizes (0: allocated by the
 * first shape), each grown by gemm_problem_init to the shapes it is given. */
int gemm_gpu_init(gemm_gpu *g, size_t a_bytes, size_t b_bytes, size_t d_bytes, size_t ws_bytes, int repeats,
                  double min_batch_us, int max_batch, double slow_factor);
void gemm_gpu_free(gemm_gpu *g);
/* Prints GPU, driver, runtime and cuBLASLt versions; the GPU's name and SM count through the last arguments. */
void gemm_gpu_describe(FILE *f, char *name, size_t size, int *sms);
long gemm_gpu_cublaslt_version(void);

/* Every algorithm id cuBLASLt lists for the data type (cublasLtMatmulAlgoGetIds) with its capabilities.
 * 0, or a negative code. */
int gemm_gpu_caps(gemm_gpu *g, collect_gemm_dtype t, collect_gemm_capset *out);

/* Descriptors for a shape, the operand buffers grown to it, and A and B filled with fresh uniform values in
 * [-1, 1]. 0; 1 with *why when cuBLASLt refuses it or the GPU's memory cannot hold it; negative on a CUDA
 * error that ends the run. */
int gemm_problem_init(gemm_gpu *g, gemm_problem *p, const collect_gemm_shape *s, const char **why);
void gemm_problem_free(gemm_problem *p);

/* cuBLASLt's heuristic list (cublasLtMatmulAlgoGetHeuristic, at most max entries, workspace <= the run's),
 * each read back into a configuration, ranks 0.. in its order; host microseconds of the call in *us.
 * 0, or 1 when the call fails. */
int gemm_gpu_heuristic(gemm_gpu *g, gemm_problem *p, gemm_candidate *out, int max, int *n, double *us);

/* A configuration as a cuBLASLt algorithm (cublasLtMatmulAlgoInit and every config attribute set), checked
 * with cublasLtMatmulAlgoCheck. 0 when valid with workspace <= the run's; 1 with *why otherwise. */
int gemm_gpu_build(gemm_gpu *g, gemm_problem *p, const collect_gemm_config *cfg, gemm_candidate *out,
                   const char **why);

/* Times a candidate (see above); bound_us is the best time so far (0: none). 0 with *us and *kind; 1 with
 * *why when the call fails; negative on a CUDA error that ends the run. *respun counts re-measurements
 * behind a longer spin. */
int gemm_gpu_time(gemm_gpu *g, gemm_problem *p, const gemm_candidate *c, double bound_us, double *us,
                  gemm_time_kind *kind, int *respun, const char **why);

/* Times candidates c[0..n) together (see above): a warm-up and `rounds` launches each, behind a hold that gives
 * up after hold_timeout_us. us[i] the median of candidate i's launches (INFINITY when cuBLASLt refuses it),
 * *wall_ms the pass's host wall time from the warm-up to the last synchronisation, *timed_out 1 when the hold ended by
 * its timeout (the launches behind it were not all queued in time and their times may hold host gaps).
 * 0; negative on a CUDA error that ends the run, or when n x rounds exceeds GEMM_GPU_MAX_PASS_LAUNCHES. */
int gemm_gpu_time_interleaved(gemm_gpu *g, gemm_problem *p, const gemm_candidate *const *c, int n, int rounds,
                              double hold_timeout_us, double *us, double *wall_ms, int *timed_out);

#endif
