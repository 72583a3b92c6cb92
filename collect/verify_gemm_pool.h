/* verify_gemm_pool: the configurations a GEMM verify times for one shape (verify_gemm_cmd.c), and how it times
 * cuBLASLt's list and the shortlists among them (--shortlist-timing).
 *
 * The pool holds each configuration once with its backend handle (verify_backend.h) and, for the careful timing,
 * its single time t1 and that timing's cost c1, so that a configuration in several shortlists is timed once.
 * A list or shortlist of n configurations timed:
 *   careful:     each configuration once by the collector's method; pick = argmin t1, cost = sum c1 (of all n);
 *   interleaved: the distinct configurations in one pass of `rounds` launches each (time_pass), a pass whose hold
 *                timed out run again, up to VERIFY_GEMM_PASS_ATTEMPTS in all; pick = argmin of the pass's
 *                medians, cost = the wall time of every attempt.
 * A pick is -1 when no configuration ran. Functions return 0 or a negative COLLECT_E* code (a device error or a
 * full pool) with the message in collect_last_error().
 */
#ifndef HEURIST_COLLECT_VERIFY_GEMM_POOL_H
#define HEURIST_COLLECT_VERIFY_GEMM_POOL_H

#include <stdio.h>

#include "verify_backend.h"

/* the most entries of cuBLASLt's heuristic list a GEMM verify asks for (--heuristic-count, --top-k) */
#define VERIFY_GEMM_MAX_HEUR 64
/* attempts at an interleaved pass whose hold times out before it is kept as it is (and counted) */
#define VERIFY_GEMM_PASS_ATTEMPTS 3

/* The configurations of a shape that the GPU times, each once at most for the shortlists (t1, cost c1 in ms;
 * NAN until timed, INFINITY when the call failed). */
typedef struct verify_gemm_pool {
    int n, cap;
    collect_gemm_config *cfg; /* (cap) */
    int *handle;              /* (cap): the backend's */
    double *t1, *c1;          /* (cap) each */
} verify_gemm_pool;

/* An empty pool of cap configurations: 0, or COLLECT_ENOMEM. */
int verify_gemm_pool_init(verify_gemm_pool *p, int cap);
void verify_gemm_pool_free(verify_gemm_pool *p);
/* Index of cfg in the pool (appended with its handle when new); -1 when the pool is full. */
int verify_gemm_pool_add(verify_gemm_pool *p, const collect_gemm_config *cfg, int handle);

/* Candidate c's pool index into built[c] (-2 until asked): its entry of the heuristic's list (vrank[c] >= 0, whose
 * pool index is hidx[vrank[c]], as cuBLASLt built it), else the configuration cfgs[c] rebuilt and checked, -1 when
 * cuBLASLt refuses it. 0, or a negative COLLECT_E* code on a device error. */
int verify_gemm_candidate_build(verify_gemm_backend *b, verify_gemm_pool *pl, const collect_gemm_config *cfgs,
                                const int *vrank, const int *hidx, int *built, int c);

/* How a run times cuBLASLt's list and the shortlists (--shortlist-timing), and what its passes did. */
typedef enum verify_shortlist_timing { VERIFY_SHORTLIST_CAREFUL, VERIFY_SHORTLIST_INTERLEAVED } verify_shortlist_timing;
/* the report's names of verify_shortlist_timing, by value */
extern const char *const verify_shortlist_timing_names[];
typedef struct verify_shortlist_how {
    verify_shortlist_timing timing;
    int rounds;                    /* launches of each configuration a pass (interleaved) */
    long passes, rerun, timed_out; /* passes run, re-run after their hold timed out, kept timed out */
} verify_shortlist_how;

/* The n pool indices sl timed as how->timing says (the header's rule): *pick the fastest (-1 when none ran), *cost
 * the time spent in ms; the passes counted in *how. */
int verify_gemm_shortlist_time(verify_gemm_backend *b, verify_gemm_pool *p, verify_shortlist_how *how, const int *sl,
                               int n, int *pick, double *cost);
/* The run's interleaved passes, as one line (prefix "# " in the report) */
void verify_gemm_shortlist_how_print(FILE *f, const char *prefix, const verify_shortlist_how *how);

#endif
