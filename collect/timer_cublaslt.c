/* The GPU's GEMM timer (timer.h) over gemm_gpu.h: per shape the union of cuBLASLt's heuristic list and a
 * seeded, bounded sample of the configuration space, each checked with cublasLtMatmulAlgoCheck and timed.
 *
 * The sample, per shape (seeded by --seed and the shape, so a resumed run draws what a whole run would): up
 * to --candidates configurations beyond the heuristic's list, half of them neighbours of the heuristic's first
 * four picks (one field redrawn), the rest uniform draws from each algorithm id's capabilities taken round
 * robin over the ids (an id whose last 24 draws all failed AlgoCheck is dropped for the shape; for a batched
 * shape, the ids without strided batch support are left out); at most 20 x --candidates AlgoCheck calls. Configurations are deduplicated by their fields. */
#include <stdlib.h>
#include <string.h>

#include "gemm_gpu.h"
#include "timer.h"

_Static_assert(COLLECT_GEMM_MAX_REPEATS == GEMM_GPU_MAX_REPEATS, "gemm's --repeats bound is the timer's");

#define MAX_HEUR 64
#define MAX_CANDIDATES COLLECT_GEMM_MAX_CANDIDATES

typedef struct gemm_stats {
    cli_tally reject, skipped;
    long checks, heur_calls, timed, slow, respun, heur_total, heur_rebuilt_same, heur_rebuilt_differs, heur_rebuilt_invalid;
    double check_us, heur_us, time_s;
} gemm_stats;

static int cand_has(const gemm_candidate *c, int n, const collect_gemm_config *cfg)
{
    for (int i = 0; i < n; i++)
        if (collect_gemm_config_equal(&c[i].cfg, cfg)) return 1;
    return 0;
}

static const collect_gemm_caps *caps_find(const collect_gemm_capset *cs, int algo_id)
{
    for (int i = 0; i < cs->n_algos; i++)
        if (cs->algos[i].algo_id == algo_id) return &cs->algos[i];
    return NULL;
}

/* Checks cfg and appends it when valid and new; 1 when appended. */
static int try_add(gemm_gpu *g, gemm_problem *p, const collect_gemm_config *cfg, gemm_candidate *cand, int *n,
                   gemm_stats *st)
{
    int f[COLLECT_GEMM_N_FIELDS];
    if (cand_has(cand, *n, cfg)) {
        cli_tally_add(&st->reject, "draw repeated a candidate");
        return 0;
    }
    if (collect_gemm_config_fields(cfg, f)) {
        cli_tally_add(&st->reject, "an id missing from gemm_enums.c");
        return 0;
    }
    const char *why = NULL;
    double t0 = cli_now_s();
    int rc = gemm_gpu_build(g, p, cfg, &cand[*n], &why);
    st->check_us += (cli_now_s() - t0) * 1e6;
    st->checks++;
    if (rc) {
        cli_tally_add(&st->reject, why);
        return 0;
    }
    (*n)++;
    return 1;
}

/* The heuristic's list, then the seeded sample (see the top of this file). */
static int candidates_build(gemm_gpu *g, gemm_problem *p, const collect_gemm_capset *cs, const char *key,
                            const collect_gemm_opts *o, gemm_candidate *cand, int *n, gemm_stats *st)
{
    gemm_candidate heur[MAX_HEUR];
    int nh = 0;
    double hus = 0;
    *n = 0;
    if (gemm_gpu_heuristic(g, p, heur, o->n_heur, &nh, &hus)) cli_tally_add(&st->skipped, "heuristic call failed (sample only)");
    st->heur_us += hus;
    st->heur_calls++;
    for (int i = 0; i < nh; i++) {
        int f[COLLECT_GEMM_N_FIELDS];
        if (collect_gemm_config_fields(&heur[i].cfg, f)) {
            cli_tally_add(&st->reject, "heuristic entry with an id missing from gemm_enums.c");
            continue;
        }
        if (cand_has(cand, *n, &heur[i].cfg)) {
            cli_tally_add(&st->reject, "heuristic entry repeating an earlier one's fields");
            continue;
        }
        /* is the configuration, rebuilt from its fields alone, the algorithm the heuristic returned? */
        gemm_candidate rebuilt;
        const char *why = NULL;
        if (gemm_gpu_build(g, p, &heur[i].cfg, &rebuilt, &why)) st->heur_rebuilt_invalid++;
        else if (memcmp(&rebuilt.algo, &heur[i].algo, sizeof rebuilt.algo) == 0) st->heur_rebuilt_same++;
        else st->heur_rebuilt_differs++;
        st->heur_total++;
        cand[(*n)++] = heur[i];
    }
    collect_gemm_rng r;
    collect_gemm_rng_seed(&r, o->seed, key);
    int target, n_near, base_n, attempts = 20 * o->n_enum;
    collect_gemm_sample_plan(*n, o->n_enum, MAX_CANDIDATES, &base_n, &n_near, &target);
    /* neighbours of the heuristic's first picks kept */
    while (*n < n_near && attempts > 0) {
        const gemm_candidate *base = &cand[collect_gemm_rng_below(&r, base_n)];
        const collect_gemm_caps *cap = caps_find(cs, base->cfg.algo_id);
        if (!cap) break;
        collect_gemm_config c;
        collect_gemm_config_neighbour(cap, p->s.k, &base->cfg, &r, &c);
        attempts--;
        try_add(g, p, &c, cand, n, st);
    }
    /* uniform draws, round robin over the algorithm ids (for a batch, those that list strided batch support,
     * when any does) */
    int fails[1024] = {0}, alive = cs->n_algos < 1024 ? cs->n_algos : 1024;
    collect_gemm_draw_exclude(cs, &p->s, fails, 24, &alive);
    for (int a = 0; *n < target && attempts > 0 && alive > 0; a = (a + 1) % cs->n_algos) {
        if (a >= 1024 || fails[a] >= 24) continue;
        collect_gemm_config c;
        collect_gemm_config_draw(&cs->algos[a], p->s.k, &r, &c);
        attempts--;
        if (try_add(g, p, &c, cand, n, st)) fails[a] = 0;
        else if (++fails[a] == 24) alive--;
    }
    return COLLECT_OK;
}

/* Times every candidate, the heuristic's in its order first so that the slow bound applies early. */
static int candidates_time(gemm_gpu *g, gemm_problem *p, gemm_candidate *cand, int n, collect_gemm_row *rows,
                           int *n_rows, gemm_stats *st)
{
    double best = 0;
    *n_rows = 0;
    for (int i = 0; i < n; i++) {
        double us;
        gemm_time_kind kind;
        int respun = 0;
        const char *why = NULL;
        int rc = gemm_gpu_time(g, p, &cand[i], best, &us, &kind, &respun, &why);
        if (rc < 0) return rc;
        st->respun += respun;
        if (rc > 0) {
            cli_tally_add(&st->reject, why);
            continue;
        }
        st->timed++;
        st->slow += kind == GEMM_TIME_SLOW;
        rows[(*n_rows)++] = (collect_gemm_row){cand[i].cfg, us, cand[i].heuristic_rank, cand[i].workspace};
        if (best == 0 || us < best) best = us;
    }
    return COLLECT_OK;
}

static void print_stats(const gemm_stats *st, FILE *f)
{
    fprintf(f, "AlgoCheck calls: %ld (mean %.1f us); heuristic calls: mean %.1f us\n", st->checks,
            st->checks ? st->check_us / st->checks : 0.0, st->heur_calls ? st->heur_us / st->heur_calls : 0.0);
    fprintf(f, "heuristic entries: %ld; rebuilt from their fields: %ld identical algorithm structs, %ld differing, "
               "%ld failing AlgoCheck\n", st->heur_total, st->heur_rebuilt_same, st->heur_rebuilt_differs,
            st->heur_rebuilt_invalid);
    fprintf(f, "candidates timed: %ld (%ld given a single warm-up time as too slow; %ld re-measured behind a longer "
               "spin)\n", st->timed, st->slow, st->respun);
    cli_tally_print(&st->reject, f, "candidates rejected");
    cli_tally_print(&st->skipped, f, "shapes sampled without the heuristic's list");
}

typedef struct lt_timer {
    gemm_gpu g;
    collect_gemm_opts o;
    gemm_stats st;
    gemm_candidate cand[MAX_CANDIDATES];
} lt_timer;

static void lt_describe(collect_gemm_timer *t, char *buf, size_t size, char *name, size_t name_size, int *sms)
{
    (void)t;
    char lib[64];
    int dev = 0;
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) cudaGetLastError();
    snprintf(lib, sizeof lib, "cuBLASLt %zu (headers %d)", cublasLtGetVersion(), CUBLAS_VERSION);
    collect_gpu_name(buf, size, lib);
    snprintf(name, name_size, "%s", prop.name);
    *sms = prop.multiProcessorCount;
}

static long lt_version(collect_gemm_timer *t)
{
    (void)t;
    return gemm_gpu_cublaslt_version();
}

static int lt_caps(collect_gemm_timer *t, collect_gemm_dtype dtype, collect_gemm_capset *out)
{
    lt_timer *l = t->state;
    return gemm_gpu_caps(&l->g, dtype, out);
}

static int lt_measure(collect_gemm_timer *t, const collect_gemm_shape *s, const char *key, const collect_gemm_capset *caps,
                      collect_gemm_row *rows, int *n_rows, int *n_cand, const char **why)
{
    lt_timer *l = t->state;
    gemm_problem p;
    *n_rows = *n_cand = 0;
    int rc = gemm_problem_init(&l->g, &p, s, why);
    if (rc == 0 && !(rc = candidates_build(&l->g, &p, caps, key, &l->o, l->cand, n_cand, &l->st)))
        rc = candidates_time(&l->g, &p, l->cand, *n_cand, rows, n_rows, &l->st);
    gemm_problem_free(&p);
    if (rc == 0 && *n_cand == 0) {
        *why = s->dtype == COLLECT_GEMM_FP8E4M3 ? "cuBLASLt offers no configuration for this FP8 GEMM (no heuristic "
                                                  "entry, every sampled one refused by AlgoCheck)"
                                                : "cuBLASLt offers no configuration (no heuristic entry, every "
                                                  "sampled one refused by AlgoCheck)";
        rc = 1;
    } else if (rc == 0 && *n_rows == 0) {
        *why = "no configuration ran";
        rc = 1;
    }
    return rc;
}

static void lt_print_stats(collect_gemm_timer *t, FILE *f)
{
    lt_timer *l = t->state;
    print_stats(&l->st, f);
}

static void lt_close(collect_gemm_timer *t)
{
    lt_timer *l = t->state;
    if (l) gemm_gpu_free(&l->g);
    free(l);
    t->state = NULL;
}

int collect_gemm_timer_open_cublaslt(collect_gemm_timer *t, int device, const collect_gemm_opts *o)
{
    memset(t, 0, sizeof *t);
    lt_timer *l = calloc(1, sizeof *l);
    if (!l) return collect_error(COLLECT_ENOMEM, "out of memory");
    l->o = *o;
    int rc = collect_gpu_bind(device);
    if (!rc && (rc = gemm_gpu_init(&l->g, o->a_max, o->b_max, o->d_max, o->ws_bytes, o->repeats, o->min_batch_us,
                                   o->max_batch, o->slow_factor)))
        gemm_gpu_free(&l->g);
    if (rc) {
        free(l);
        return rc;
    }
    *t = (collect_gemm_timer){lt_describe, lt_version, lt_caps, lt_measure, lt_print_stats, lt_close, l};
    return COLLECT_OK;
}
