/* The GPU's verify backend (verify_backend.h): cuDNN convolutions over gpu.h, cuBLASLt GEMMs over gemm_gpu.h. */
#include <stdlib.h>
#include <string.h>

#include "gemm_gpu.h"
#include "gpu.h"
#include "verify_backend.h"

/* ---- convolutions ---- */

typedef struct gpu_conv {
    gpu g;
    gpu_problem p;
    int open;       /* p holds a problem's descriptors */
} gpu_conv;

static void conv_describe(verify_conv_backend *b, FILE *f)
{
    (void)b;
    gpu_describe(f);
}

static void conv_problem_end(verify_conv_backend *b)
{
    gpu_conv *s = b->state;
    if (s->open) gpu_problem_free(&s->p);
    s->open = 0;
}

static int conv_problem(verify_conv_backend *b, const collect_conv *cv, const char *key, const char **why)
{
    (void)key;
    gpu_conv *s = b->state;
    conv_problem_end(b);
    s->open = 1;
    int rc = gpu_problem_init(&s->g, &s->p, cv, why);
    if (rc) conv_problem_end(b);
    return rc;
}

static int conv_heuristic(verify_conv_backend *b, int math, int *algos, int *maths, int max, int *n, double *us)
{
    gpu_conv *s = b->state;
    return gpu_heuristic_timed(&s->g, &s->p, math, algos, maths, max, n, us);
}

static int conv_time(verify_conv_backend *b, int algo, int math, double bound_ms, double *ms, size_t *workspace,
                     const char **why)
{
    gpu_conv *s = b->state;
    return gpu_time(&s->g, &s->p, algo, math, bound_ms, ms, workspace, why);
}

static int conv_time_once(verify_conv_backend *b, int algo, int math, double *ms, const char **why)
{
    gpu_conv *s = b->state;
    return gpu_time_once(&s->g, &s->p, algo, math, ms, why);
}

_Static_assert(VERIFY_MAX_LIST == GPU_MAX_LIST, "one limit of a pass's kernels");

static int conv_time_list(verify_conv_backend *b, const int *algos, const int *maths, int n, const verify_list_opts *o,
                          double *ms, verify_list_timing *lt)
{
    gpu_conv *s = b->state;
    gpu_list_stats st;
    gpu_list_opts go = {o->warmup, o->retime_within};
    int rc = gpu_time_list(&s->g, &s->p, algos, maths, n, &go, ms, &st);
    *lt = (verify_list_timing){st.wall_ms, st.reruns, st.timed_out, st.spin, st.unheld, st.launches, st.sync_ms};
    return rc;
}

static int conv_find(verify_conv_backend *b, int math, double *ms, int *algos, double *kernel_ms)
{
    gpu_conv *s = b->state;
    return gpu_find_ms(&s->g, &s->p, math, ms, algos, kernel_ms);
}

static void conv_close(verify_conv_backend *b)
{
    gpu_conv *s = b->state;
    if (s) {
        conv_problem_end(b);
        gpu_free(&s->g);
    }
    free(s);
    b->state = NULL;
}

int verify_conv_backend_open_gpu(verify_conv_backend *b, const verify_conv_opts *o)
{
    memset(b, 0, sizeof *b);
    gpu_conv *s = calloc(1, sizeof *s);
    if (!s) return collect_error(COLLECT_ENOMEM, "out of memory");
    int rc = gpu_init(&s->g, o->repeats, o->min_repeat_ms, o->ws_limit);
    if (rc) {
        gpu_free(&s->g);
        free(s);
        return rc;
    }
    *b = (verify_conv_backend){conv_describe, conv_problem, conv_problem_end, conv_heuristic, conv_time,
                               conv_time_once, conv_time_list, conv_find, conv_close, s};
    return COLLECT_OK;
}

/* ---- GEMMs ---- */

typedef struct gpu_gemm {
    gemm_gpu g;
    gemm_problem p;
    int open;
    gemm_candidate *c;  /* (n): the handles of the current shape */
    int n, cap;
} gpu_gemm;

static void gemm_b_describe(verify_gemm_backend *b, FILE *f)
{
    gpu_gemm *s = b->state;
    char name[256];
    int sms = 0;
    (void)s;
    gemm_gpu_describe(f, name, sizeof name, &sms);
}

static void gemm_b_problem_end(verify_gemm_backend *b)
{
    gpu_gemm *s = b->state;
    if (s->open) gemm_problem_free(&s->p);
    s->open = 0;
    s->n = 0;
}

static int gemm_b_problem(verify_gemm_backend *b, const collect_gemm_shape *sh, const char *key, const char **why)
{
    (void)key;
    gpu_gemm *s = b->state;
    gemm_b_problem_end(b);
    s->open = 1;
    int rc = gemm_problem_init(&s->g, &s->p, sh, why);
    if (rc) gemm_b_problem_end(b);
    return rc;
}

static int gemm_b_add(gpu_gemm *s, const gemm_candidate *c, int *handle)
{
    if (s->n == s->cap) {
        int nc = s->cap ? 2 * s->cap : 128;
        gemm_candidate *ncs = realloc(s->c, (size_t)nc * sizeof *ncs);
        if (!ncs) return collect_error(COLLECT_ENOMEM, "out of memory");
        s->c = ncs;
        s->cap = nc;
    }
    s->c[s->n] = *c;
    *handle = s->n++;
    return COLLECT_OK;
}

static int gemm_b_heuristic(verify_gemm_backend *b, int max, collect_gemm_config *cfg, int *handle, int *n, double *us)
{
    gpu_gemm *s = b->state;
    gemm_candidate heur[64];
    *n = 0;
    if (max > 64) max = 64;
    int got = 0;
    if (gemm_gpu_heuristic(&s->g, &s->p, heur, max, &got, us)) return 1;
    for (int k = 0; k < got; k++) {
        int rc = gemm_b_add(s, &heur[k], &handle[k]);
        if (rc) return rc;
        cfg[k] = heur[k].cfg;
    }
    *n = got;
    return 0;
}

static int gemm_b_build(verify_gemm_backend *b, const collect_gemm_config *cfg, int *handle, const char **why)
{
    gpu_gemm *s = b->state;
    gemm_candidate c;
    if (gemm_gpu_build(&s->g, &s->p, cfg, &c, why)) return 1;
    return gemm_b_add(s, &c, handle);
}

static int gemm_b_time(verify_gemm_backend *b, int handle, double *us, const char **why)
{
    gpu_gemm *s = b->state;
    gemm_time_kind kind;
    int respun = 0;
    return gemm_gpu_time(&s->g, &s->p, &s->c[handle], 0, us, &kind, &respun, why);
}

_Static_assert(VERIFY_GEMM_MAX_PASS_LAUNCHES == GEMM_GPU_MAX_PASS_LAUNCHES, "one limit of a pass's launches");

/* the hold's patience: far longer than the host takes to queue a pass (a few microseconds a launch) */
#define PASS_HOLD_TIMEOUT_US 200e3

static int gemm_b_time_pass(verify_gemm_backend *b, const int *handles, int n, int rounds, double *us, double *ms,
                            int *timed_out)
{
    gpu_gemm *s = b->state;
    const gemm_candidate **c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (!c) return collect_error(COLLECT_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) c[i] = &s->c[handles[i]];
    int rc = gemm_gpu_time_interleaved(&s->g, &s->p, c, n, rounds, PASS_HOLD_TIMEOUT_US, us, ms, timed_out);
    free(c);
    return rc;
}

static void gemm_b_close(verify_gemm_backend *b)
{
    gpu_gemm *s = b->state;
    if (s) {
        gemm_b_problem_end(b);
        gemm_gpu_free(&s->g);
        free(s->c);
    }
    free(s);
    b->state = NULL;
}

int verify_gemm_backend_open_gpu(verify_gemm_backend *b, const verify_gemm_opts *o)
{
    memset(b, 0, sizeof *b);
    gpu_gemm *s = calloc(1, sizeof *s);
    if (!s) return collect_error(COLLECT_ENOMEM, "out of memory");
    /* no slow bound (1e9): every configuration verify times is one it may keep */
    int rc = gemm_gpu_init(&s->g, o->a_max, o->b_max, o->d_max, o->ws_bytes, o->repeats, o->min_batch_us, o->max_batch,
                           1e9);
    if (rc) {
        gemm_gpu_free(&s->g);
        free(s);
        return rc;
    }
    *b = (verify_gemm_backend){gemm_b_describe, gemm_b_problem, gemm_b_problem_end, gemm_b_heuristic, gemm_b_build,
                               gemm_b_time, gemm_b_time_pass, gemm_b_close, s};
    return COLLECT_OK;
}
