/* The fake verify backend (verify_backend.h): the collector's fake timer (timer.h) answers, so that every
 * number is a hash of the problem key and the candidate, and agrees with what a fake collection wrote. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"
#include "verify_backend.h"

/* ---- convolutions ---- */

typedef struct fake_conv {
    collect_conv_timer t;
    collect_conv_measured m;  /* the current problem, as the fake `conv` records it */
    collect_conv cv;
    char key[256];            /* the current problem's key, for the single-launch factor */
} fake_conv;

static void conv_describe(verify_conv_backend *b, FILE *f)
{
    fake_conv *s = b->state;
    char line[512];
    s->t.describe(&s->t, line, sizeof line);
    fprintf(f, "%s\n", line);
}

static int conv_problem(verify_conv_backend *b, const collect_conv *cv, const char *key, const char **why)
{
    fake_conv *s = b->state;
    cli_tally cand = {0};
    s->cv = *cv;
    snprintf(s->key, sizeof s->key, "%s", key);
    return s->t.measure(&s->t, cv, key, &s->m, &cand, why);
}

static void conv_problem_end(verify_conv_backend *b)
{
    fake_conv *s = b->state;
    s->m.n_res = s->m.n_heur = s->m.n_cls = 0;
}

/* The list the fake `conv` records for the math type asked: its own (DEFAULT, TENSOR_OP) or a class's. */
static int conv_heuristic(verify_conv_backend *b, int math, int *algos, int *maths, int max, int *n, double *us)
{
    fake_conv *s = b->state;
    const int *a = s->m.heur_algo, *m = s->m.heur_math;
    int count = s->m.n_heur;
    *us = s->m.heur_us;
    for (int c = 0; c < s->m.n_cls; c++)
        if (math != s->m.heur_math_asked && math == collect_precision_math(collect_conv_classes[c])) {
            a = s->m.cls_algo[c];
            m = s->m.cls_math[c];
            count = s->m.cls_n[c];
            *us = s->m.cls_us[c];
        }
    *n = 0;
    for (int i = 0; i < count && *n < max; i++) {
        algos[*n] = a[i];
        maths[(*n)++] = m[i];
    }
    return 0;
}

static int conv_time(verify_conv_backend *b, int algo, int math, double bound_ms, double *ms, size_t *workspace,
                     const char **why)
{
    (void)bound_ms;
    fake_conv *s = b->state;
    for (int r = 0; r < s->m.n_res; r++)
        if (s->m.res[r].algo == algo && s->m.res[r].math == math) {
            *ms = s->m.res[r].ms;
            *workspace = s->m.res[r].workspace;
            return 0;
        }
    *why = "fake: candidate rejected";
    return 1;
}

/* one launch after a warm-up: the collected time times the key's and kernel's factor */
static int conv_time_once(verify_conv_backend *b, int algo, int math, double *ms, const char **why)
{
    size_t ws;
    int rc = conv_time(b, algo, math, 0, ms, &ws, why);
    if (rc == 0) *ms *= collect_fake_once_factor(((fake_conv *)b->state)->key, algo, math);
    return rc;
}

/* a shortlist in one pass (verify_backend.h): a held launch as time_once answers it, a timed warm-up as the held
 * launch's time times collect_fake_first_factor, an untimed warm-up as a held launch; the wall time the launches'
 * times */
static int conv_time_list(verify_conv_backend *b, const int *algos, const int *maths, int n, const verify_list_opts *o,
                          double *ms, verify_list_timing *lt)
{
    fake_conv *s = b->state;
    *lt = (verify_list_timing){0};
    if (n < 0 || n > VERIFY_MAX_LIST)
        return collect_error(COLLECT_EINVAL, "a shortlist of %d candidates: at most %d in one pass", n, VERIFY_MAX_LIST);
    double first[VERIFY_MAX_LIST] = {0};
    char again[VERIFY_MAX_LIST];
    for (int i = 0; i < n; i++) {
        const char *why;
        again[i] = conv_time_once(b, algos[i], maths[i], &ms[i], &why) == 0;
        if (!again[i]) ms[i] = first[i] = INFINITY;
        else first[i] = ms[i] * collect_fake_first_factor(s->key, algos[i], maths[i]);
    }
    int timed_warmup = o->warmup && o->retime_within > 0;
    if (timed_warmup) collect_retime_select(first, first, n, o->retime_within, again);
    for (int i = 0; i < n; i++) {
        if (!isfinite(first[i])) continue;
        if (o->warmup) {
            lt->wall_ms += timed_warmup ? first[i] : ms[i];
            lt->launches++;
        }
        if (again[i] || !o->warmup) {
            lt->wall_ms += ms[i];
            lt->launches++;
        } else {
            ms[i] = first[i];
        }
    }
    return 0;
}

/* cudnnFind's cost: every candidate run once at its collected time, as many kernels as it ran and their times
 * reported, and VERIFY_FAKE_FIND_HOST_MS of host work for each (verify_backend.h) */
static int conv_find(verify_conv_backend *b, int math, double *ms, int *algos, double *kernel_ms)
{
    (void)math;
    fake_conv *s = b->state;
    *kernel_ms = 0;
    for (int r = 0; r < s->m.n_res; r++) *kernel_ms += s->m.res[r].ms;
    *algos = s->m.n_res;
    *ms = *kernel_ms + VERIFY_FAKE_FIND_HOST_MS * s->m.n_res;
    return s->m.n_res ? 0 : 1;
}

static void conv_close(verify_conv_backend *b)
{
    fake_conv *s = b->state;
    if (s) s->t.close(&s->t);
    free(s);
    b->state = NULL;
}

int verify_conv_backend_open_fake(verify_conv_backend *b, const verify_conv_opts *o)
{
    memset(b, 0, sizeof *b);
    fake_conv *s = calloc(1, sizeof *s);
    if (!s) return collect_error(COLLECT_ENOMEM, "out of memory");
    collect_conv_opts co = {.repeats = o->repeats, .min_repeat_ms = o->min_repeat_ms, .ws_limit = o->ws_limit,
                            .classes = 1};
    int rc = collect_conv_timer_open_fake(&s->t, 0, &co);
    if (rc) {
        free(s);
        return rc;
    }
    *b = (verify_conv_backend){conv_describe, conv_problem, conv_problem_end, conv_heuristic, conv_time,
                               conv_time_once, conv_time_list, conv_find, conv_close, s};
    return COLLECT_OK;
}

/* ---- GEMMs ---- */

typedef struct fake_gemm {
    collect_gemm_timer t;
    collect_gemm_capset caps[COLLECT_GEMM_DTYPE_COUNT];
    char key[128];
    collect_gemm_row rows[COLLECT_GEMM_MAX_CANDIDATES]; /* the current shape, as the fake `gemm` records it */
    int n_rows;
    collect_gemm_config *built;                         /* (n_built): the handles' configurations */
    int n_built, cap_built;
    long passes;                                        /* interleaved passes asked so far */
} fake_gemm;

static void gemm_describe(verify_gemm_backend *b, FILE *f)
{
    fake_gemm *s = b->state;
    char line[512], name[64];
    int sms;
    s->t.describe(&s->t, line, sizeof line, name, sizeof name, &sms);
    fprintf(f, "%s\n", line);
}

static int gemm_problem(verify_gemm_backend *b, const collect_gemm_shape *sh, const char *key, const char **why)
{
    fake_gemm *s = b->state;
    int n_cand;
    s->n_built = 0;
    snprintf(s->key, sizeof s->key, "%s", key);
    return s->t.measure(&s->t, sh, key, &s->caps[sh->dtype], s->rows, &s->n_rows, &n_cand, why);
}

static void gemm_problem_end(verify_gemm_backend *b)
{
    fake_gemm *s = b->state;
    s->n_rows = s->n_built = 0;
}

/* The fake collector's hash of a configuration of the current shape (timer_fake.c's gemm_measure). */
static uint64_t gemm_hash(const fake_gemm *s, const collect_gemm_config *c, int *ok)
{
    char name[512];
    *ok = collect_gemm_config_name(c, name, sizeof name) == 0;
    return *ok ? collect_fake_hash(s->key, collect_fake_hash(name, 0, 0), 1) : 0;
}

/* The fake collector's time of a configuration of hash h, in microseconds */
static double gemm_us(uint64_t h)
{
    return 1.0 + (double)((h >> 16) % 1000000) / 100.0;
}

static int gemm_add(fake_gemm *s, const collect_gemm_config *c, int *handle)
{
    if (s->n_built == s->cap_built) {
        int nc = s->cap_built ? 2 * s->cap_built : 64;
        collect_gemm_config *nb = realloc(s->built, (size_t)nc * sizeof *nb);
        if (!nb) return collect_error(COLLECT_ENOMEM, "out of memory");
        s->built = nb;
        s->cap_built = nc;
    }
    s->built[s->n_built] = *c;
    *handle = s->n_built++;
    return COLLECT_OK;
}

/* The shape's rows with a heuristic rank, in rank order */
static int gemm_heuristic(verify_gemm_backend *b, int max, collect_gemm_config *cfg, int *handle, int *n, double *us)
{
    fake_gemm *s = b->state;
    *n = 0;
    *us = 100.0;
    for (int rank = 0; *n < max; rank++) {
        int found = 0;
        for (int r = 0; r < s->n_rows && !found; r++)
            if (s->rows[r].heuristic_rank == rank) {
                found = 1;
                if (gemm_add(s, &s->rows[r].cfg, &handle[*n])) return COLLECT_ENOMEM;
                cfg[(*n)++] = s->rows[r].cfg;
            }
        if (!found) break;
    }
    return 0;
}

static int gemm_build(verify_gemm_backend *b, const collect_gemm_config *cfg, int *handle, const char **why)
{
    fake_gemm *s = b->state;
    int ok;
    uint64_t h = gemm_hash(s, cfg, &ok);
    if (!ok || h % 11 == 0) {
        *why = "fake: AlgoCheck rejects the configuration";
        return 1;
    }
    return gemm_add(s, cfg, handle);
}

static int gemm_time(verify_gemm_backend *b, int handle, double *us, const char **why)
{
    fake_gemm *s = b->state;
    int ok;
    uint64_t h = gemm_hash(s, &s->built[handle], &ok);
    if (!ok) {
        *why = "fake: configuration refused";
        return 1;
    }
    *us = gemm_us(h);
    return 0;
}

/* A pass (verify_backend.h): each launch the configuration's time times its round's factor; a configuration whose
 * hash is a multiple of 13 refused at launch; the cost the warm-up's (the configuration's time) and the launches'
 * times plus 5 us for the host's work each; the hold
 * of every seventh pass (the 4th, 11th, ... of the backend's life) timed out */
static int gemm_time_pass(verify_gemm_backend *b, const int *handles, int n, int rounds, double *us, double *ms,
                          int *timed_out)
{
    fake_gemm *s = b->state;
    double t[64];
    if (rounds < 1 || rounds > 64) return collect_error(COLLECT_EINVAL, "a pass of %d rounds: at most 64", rounds);
    *ms = 0;
    *timed_out = s->passes++ % 7 == 3;
    for (int i = 0; i < n; i++) {
        int ok;
        uint64_t h = gemm_hash(s, &s->built[handles[i]], &ok);
        *ms += (rounds + 1) * 5e-3;
        if (!ok || h % 13 == 0) {
            us[i] = INFINITY;
            continue;
        }
        double base = gemm_us(h);
        *ms += base * 1e-3;
        for (int r = 0; r < rounds; r++) {
            t[r] = base * collect_fake_pass_factor(s->key, h, r);
            *ms += t[r] * 1e-3;
        }
        us[i] = collect_median(t, rounds);
    }
    return 0;
}

static void gemm_close(verify_gemm_backend *b)
{
    fake_gemm *s = b->state;
    if (s) {
        for (int d = 0; d < COLLECT_GEMM_DTYPE_COUNT; d++) collect_gemm_capset_free(&s->caps[d]);
        s->t.close(&s->t);
        free(s->built);
    }
    free(s);
    b->state = NULL;
}

int verify_gemm_backend_open_fake(verify_gemm_backend *b, const verify_gemm_opts *o)
{
    memset(b, 0, sizeof *b);
    fake_gemm *s = calloc(1, sizeof *s);
    if (!s) return collect_error(COLLECT_ENOMEM, "out of memory");
    /* the collector's defaults (gemm_cmd.c): the same draws, so the ranked rows are the table's */
    collect_gemm_opts go = {.n_enum = 64, .n_heur = 32, .seed = 0, .repeats = o->repeats, .max_batch = o->max_batch,
                            .min_batch_us = o->min_batch_us, .slow_factor = 5.0, .ws_bytes = o->ws_bytes,
                            .a_max = o->a_max, .b_max = o->b_max, .d_max = o->d_max};
    int rc = collect_gemm_timer_open_fake(&s->t, 0, &go);
    for (int d = 0; !rc && d < COLLECT_GEMM_DTYPE_COUNT; d++) rc = s->t.caps(&s->t, (collect_gemm_dtype)d, &s->caps[d]);
    if (rc) {
        b->state = s;
        gemm_close(b);
        return rc;
    }
    *b = (verify_gemm_backend){gemm_describe, gemm_problem, gemm_problem_end, gemm_heuristic, gemm_build, gemm_time,
                               gemm_time_pass, gemm_close, s};
    return COLLECT_OK;
}
