/* The configurations a GEMM verify times for one shape and the timing of cuBLASLt's list and the shortlists among
 * them, carefully or in interleaved passes (verify_gemm_pool.h). */
#include "verify_gemm_pool.h"

#include <math.h>
#include <stdlib.h>

#include "cli.h"

/* the most configurations of a shortlist or of the list */
#define PASS_MAX (2 * VERIFY_GEMM_MAX_HEUR + 2)

const char *const verify_shortlist_timing_names[] = {"careful", "interleaved"};

int verify_gemm_pool_init(verify_gemm_pool *p, int cap)
{
    p->n = 0;
    p->cap = cap;
    p->cfg = malloc((size_t)cap * sizeof *p->cfg);
    p->handle = malloc((size_t)cap * sizeof *p->handle);
    p->t1 = malloc((size_t)cap * sizeof *p->t1);
    p->c1 = malloc((size_t)cap * sizeof *p->c1);
    if (!p->cfg || !p->handle || !p->t1 || !p->c1) {
        verify_gemm_pool_free(p);
        return collect_error(COLLECT_ENOMEM, "out of memory");
    }
    return COLLECT_OK;
}

void verify_gemm_pool_free(verify_gemm_pool *p)
{
    free(p->cfg);
    free(p->handle);
    free(p->t1);
    free(p->c1);
    p->cfg = NULL;
    p->handle = NULL;
    p->t1 = p->c1 = NULL;
    p->n = p->cap = 0;
}

int verify_gemm_pool_add(verify_gemm_pool *p, const collect_gemm_config *cfg, int handle)
{
    for (int i = 0; i < p->n; i++)
        if (collect_gemm_config_equal(&p->cfg[i], cfg)) return i;
    if (p->n == p->cap) return -1;
    p->cfg[p->n] = *cfg;
    p->handle[p->n] = handle;
    p->t1[p->n] = p->c1[p->n] = NAN;
    return p->n++;
}

int verify_gemm_candidate_build(verify_gemm_backend *b, verify_gemm_pool *pl, const collect_gemm_config *cfgs,
                                const int *vrank, const int *hidx, int *built, int c)
{
    if (built[c] != -2) return 0;
    if (vrank[c] >= 0) {
        built[c] = hidx[vrank[c]];
        return 0;
    }
    const char *why = NULL;
    int handle, rc = b->build(b, &cfgs[c], &handle, &why);
    built[c] = rc == 0 ? verify_gemm_pool_add(pl, &cfgs[c], handle) : -1;
    return rc < 0 ? rc : 0;
}

/* Configuration u timed once by the collector's method, unless it was already */
static int time_single(verify_gemm_backend *b, verify_gemm_pool *p, int u)
{
    if (!isnan(p->t1[u])) return 0;
    double us, a0 = cli_now_s();
    const char *why = NULL;
    int rc = b->time(b, p->handle[u], &us, &why);
    p->c1[u] = (cli_now_s() - a0) * 1e3;
    if (rc < 0) return rc;
    p->t1[u] = rc ? INFINITY : us;
    return 0;
}

/* A shortlist timed carefully: its fastest entry (-1 when none ran) and the time spent on all of them. */
static int shortlist_careful(verify_gemm_backend *b, verify_gemm_pool *p, const int *sl, int n, int *pick,
                             double *cost)
{
    *pick = -1;
    *cost = 0;
    for (int i = 0; i < n; i++) {
        int rc = time_single(b, p, sl[i]);
        if (rc < 0) return rc;
        *cost += p->c1[sl[i]];
        if (isfinite(p->t1[sl[i]]) && (*pick < 0 || p->t1[sl[i]] < p->t1[*pick])) *pick = sl[i];
    }
    return 0;
}

/* A shortlist timed in one interleaved pass (a pass whose hold timed out run again, up to
 * VERIFY_GEMM_PASS_ATTEMPTS in all): its fastest entry by the pass's medians (-1 when none ran) and the wall time
 * of every attempt. */
static int shortlist_pass(verify_gemm_backend *b, verify_gemm_pool *p, verify_shortlist_how *how, const int *sl,
                          int n, int *pick, double *cost)
{
    int idx[PASS_MAX], hd[PASS_MAX], m = 0;
    double us[PASS_MAX];
    *pick = -1;
    *cost = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < m; j++) dup |= idx[j] == sl[i];
        if (dup) continue;
        if (m == PASS_MAX) return collect_error(COLLECT_EINVAL, "a shortlist of more than %d configurations", PASS_MAX);
        idx[m] = sl[i];
        hd[m++] = p->handle[sl[i]];
    }
    if (m == 0) return 0;
    for (int attempt = 1;; attempt++) {
        double ms;
        int timed_out, rc = b->time_pass(b, hd, m, how->rounds, us, &ms, &timed_out);
        if (rc < 0) return rc;
        *cost += ms;
        how->passes++;
        if (!timed_out) break;
        if (attempt == VERIFY_GEMM_PASS_ATTEMPTS) {
            how->timed_out++;
            break;
        }
        how->rerun++;
    }
    for (int j = 0; j < m; j++)
        if (isfinite(us[j]) && (*pick < 0 || us[j] < us[*pick])) *pick = j;
    if (*pick >= 0) *pick = idx[*pick];
    return 0;
}

int verify_gemm_shortlist_time(verify_gemm_backend *b, verify_gemm_pool *p, verify_shortlist_how *how, const int *sl,
                               int n, int *pick, double *cost)
{
    return how->timing == VERIFY_SHORTLIST_INTERLEAVED ? shortlist_pass(b, p, how, sl, n, pick, cost)
                                                       : shortlist_careful(b, p, sl, n, pick, cost);
}

void verify_gemm_shortlist_how_print(FILE *f, const char *prefix, const verify_shortlist_how *how)
{
    fprintf(f, "%sshortlist timing interleaved: %d rounds a pass; %ld passes this run, %ld run again after their "
               "hold timed out, %ld kept after %d timed-out attempts\n",
            prefix, how->rounds, how->passes, how->rerun, how->timed_out, VERIFY_GEMM_PASS_ATTEMPTS);
}
