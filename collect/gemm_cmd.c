/* heurist-collect gemm: times cuBLASLt GEMM configurations for each shape and writes a benchmark table
 * (gemm.h): per shape the union of cuBLASLt's heuristic list and a seeded, bounded sample of the configuration
 * space, each checked with cublasLtMatmulAlgoCheck and timed (gemm_gpu.h).
 *
 * The sample, per shape (seeded by --seed and the shape, so a resumed run draws what a whole run would): up
 * to --candidates configurations beyond the heuristic's list, half of them neighbours of the heuristic's first
 * four picks (one field redrawn), the rest uniform draws from each algorithm id's capabilities taken round
 * robin over the ids (an id whose last 24 draws all failed AlgoCheck is dropped for the shape); at most
 * 20 x --candidates AlgoCheck calls. Configurations are deduplicated by their fields.
 *
 * Each shape's rows are one gzip member appended and flushed when the shape ends, so a run stopped by
 * --time-limit, --limit or a kill keeps every finished shape; --resume skips them (cutting off an unfinished
 * last member). A shape that ends the run with a CUDA error is listed in OUT.failed, which --resume skips.
 * Exit status: 0 every shape done; 3 shapes remain (time limit, --limit or a CUDA error: run again with
 * --resume); 1 error; 2 usage. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gemm_gpu.h"

#define MAX_HEUR 64
#define MAX_CANDIDATES 1024

typedef struct gemm_opts {
    int n_enum, n_heur, verbose;
    double slow_factor;
    uint64_t seed;
} gemm_opts;

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
                            const gemm_opts *o, gemm_candidate *cand, int *n, gemm_stats *st)
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
    int target = *n + o->n_enum, attempts = 20 * o->n_enum;
    if (target > MAX_CANDIDATES) target = MAX_CANDIDATES;
    /* neighbours of the heuristic's first picks */
    int n_near = nh > 0 ? *n + o->n_enum / 2 : *n, base_n = *n < 4 ? *n : 4;
    while (*n < n_near && attempts > 0) {
        const gemm_candidate *base = &cand[collect_gemm_rng_below(&r, base_n)];
        const collect_gemm_caps *cap = caps_find(cs, base->cfg.algo_id);
        if (!cap) break;
        collect_gemm_config c;
        collect_gemm_config_neighbour(cap, p->s.k, &base->cfg, &r, &c);
        attempts--;
        try_add(g, p, &c, cand, n, st);
    }
    /* uniform draws, round robin over the algorithm ids */
    int fails[1024] = {0}, alive = cs->n_algos < 1024 ? cs->n_algos : 1024;
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
    cli_tally_print(&st->skipped, f, "shapes skipped");
}

int cmd_gemm(int argc, char **argv)
{
    static const char *const known[] = {"--shapes", "--out", "--time-limit", "--limit", "--candidates",
                                        "--heuristic-count", "--repeats", "--min-batch-us", "--max-batch",
                                        "--workspace-mib", "--slow-factor", "--seed", NULL};
    static const char *const flags[] = {"--resume", "--verbose", "--describe", NULL};
    if (cli_check(argc, argv, known, flags)) return 2;
    if (cli_flag(argc, argv, "--describe")) {
        char name[256];
        int sms;
        gemm_gpu_describe(stdout, name, sizeof name, &sms);
        return 0;
    }
    const char *shapes_path = cli_opt(argc, argv, "--shapes"), *out = cli_opt(argc, argv, "--out");
    double limit, max_shapes, n_enum, n_heur, repeats, min_batch, max_batch, ws_mib, slow, seed;
    if (cli_number(argc, argv, "--time-limit", 0, 0, 1e9, &limit) ||
        cli_number(argc, argv, "--limit", 0, 0, 1e9, &max_shapes) ||
        cli_number(argc, argv, "--candidates", 64, 0, 900, &n_enum) ||
        cli_number(argc, argv, "--heuristic-count", 32, 1, MAX_HEUR, &n_heur) ||
        cli_number(argc, argv, "--repeats", 3, 1, GEMM_GPU_MAX_REPEATS, &repeats) ||
        cli_number(argc, argv, "--min-batch-us", 100, 0, 1e6, &min_batch) ||
        cli_number(argc, argv, "--max-batch", 64, 1, 1e4, &max_batch) ||
        cli_number(argc, argv, "--workspace-mib", 32, 0, 1 << 16, &ws_mib) ||
        cli_number(argc, argv, "--slow-factor", 5, 1, 1e6, &slow) ||
        cli_number(argc, argv, "--seed", 0, 0, 1e15, &seed))
        return 2;
    int resume = cli_flag(argc, argv, "--resume");
    gemm_opts o = {(int)n_enum, (int)n_heur, cli_flag(argc, argv, "--verbose"), slow, (uint64_t)seed};
    if (!shapes_path || !out) {
        fprintf(stderr, "heurist-collect gemm: --shapes and --out are required\n");
        return 2;
    }
    double t_start = cli_now_s();
    collect_gemm_shape *shapes = NULL;
    int n_shapes = 0, rc = 1, gpu_ok = 0;
    collect_gemm_done done = {0};
    collect_gemm_out fo = {0};
    collect_gemm_capset caps[COLLECT_GEMM_DTYPE_COUNT] = {{0}};
    char **failed = NULL;
    int n_failed = 0;
    char failed_path[4200], schema_path[4200], caps_path[4200];
    gemm_candidate *cand = malloc(MAX_CANDIDATES * sizeof *cand);
    collect_gemm_row *rows = malloc(MAX_CANDIDATES * sizeof *rows);
    gemm_stats st;
    memset(&st, 0, sizeof st);
    gemm_gpu g;
    if (!cand || !rows) {
        collect_error(COLLECT_ENOMEM, "out of memory");
        goto fail;
    }
    snprintf(failed_path, sizeof failed_path, "%s.failed", out);
    if (collect_gemm_sidecar_path(out, ".schema.json", schema_path, sizeof schema_path) ||
        collect_gemm_sidecar_path(out, ".caps.json", caps_path, sizeof caps_path) ||
        collect_gemm_shapes_read(shapes_path, &shapes, &n_shapes))
        goto fail;
    if (resume) {
        if (collect_gemm_done_scan(out, &done)) goto fail;
        FILE *ff = fopen(failed_path, "r");
        if (ff) {
            fclose(ff);
            if (cli_keys_read(failed_path, &failed, &n_failed)) goto fail;
        }
    }
    size_t amax = 0, bmax = 0, dmax = 0;
    for (int i = 0; i < n_shapes; i++) {
        size_t a, b, d;
        collect_gemm_shape_bytes(&shapes[i], &a, &b, &d);
        amax = a > amax ? a : amax;
        bmax = b > bmax ? b : bmax;
        dmax = d > dmax ? d : dmax;
    }
    if (gemm_gpu_init(&g, amax, bmax, dmax, (size_t)(ws_mib * 1048576.0), (int)repeats, min_batch, (int)max_batch, slow))
        goto fail;
    gpu_ok = 1;
    char gpu_name[256];
    int sms = 0;
    gemm_gpu_describe(stdout, gpu_name, sizeof gpu_name, &sms);
    printf("%d shapes in %s; %s%d already in the output (%ld rows)%s; candidates: the heuristic's list (up to %d) "
           "+ up to %d sampled, seed %llu\n", n_shapes, shapes_path, resume ? "resume: " : "", done.n, done.rows,
           done.truncated ? ", an unfinished last shape dropped" : "", o.n_heur, o.n_enum,
           (unsigned long long)o.seed);
    printf("timing: 1 warm-up, median of %d batches of B calls (B: batch >= %.0f us, at most %d) behind a spin; "
           "a warm-up > %gx the best so far: single time; L2 not flushed; workspace %.0f MiB; buffers A %zu MiB, "
           "B %zu MiB, D %zu MiB\n", g.repeats, g.min_batch_us, g.max_batch, g.slow_factor, ws_mib, amax >> 20,
           bmax >> 20, dmax >> 20);
    fflush(stdout);
    for (int t = 0; t < COLLECT_GEMM_DTYPE_COUNT; t++) {
        if (gemm_gpu_caps(&g, (collect_gemm_dtype)t, &caps[t])) goto fail;
        int tiles = 0;
        for (int a = 0; a < caps[t].n_algos; a++) tiles += caps[t].algos[a].n_tiles;
        printf("%s: %d algorithm ids, %d tiles over them\n", collect_gemm_dtype_name((collect_gemm_dtype)t),
               caps[t].n_algos, tiles);
    }
    if (collect_gemm_schema_write(schema_path, sms) ||
        collect_gemm_caps_write(caps_path, gpu_name, gemm_gpu_cublaslt_version(), caps, COLLECT_GEMM_DTYPE_COUNT) ||
        collect_gemm_out_open(&fo, out, done.good_bytes))
        goto fail;
    int written = 0, todo = 0, stopped = 0, fatal = 0;
    double longest = 0;
    for (int i = 0; i < n_shapes; i++) {
        char key[128];
        collect_gemm_shape_key(&shapes[i], key, sizeof key);
        todo += !collect_gemm_done_has(&done, key);
    }
    for (int i = 0; i < n_shapes; i++) {
        char key[128];
        collect_gemm_shape_key(&shapes[i], key, sizeof key);
        if (collect_gemm_done_has(&done, key)) continue;
        int was_failed = 0;
        for (int k = 0; k < n_failed && !was_failed; k++) was_failed = strcmp(failed[k], key) == 0;
        if (was_failed) {
            cli_tally_add(&st.skipped, "ended an earlier run with a CUDA error");
            continue;
        }
        double t0 = cli_now_s();
        if ((limit > 0 && t0 - t_start + (longest * 2 > 3 ? longest * 2 : 3) > limit) ||
            (max_shapes > 0 && written >= (int)max_shapes)) {
            stopped = 1;
            break;
        }
        gemm_problem p;
        const char *why = NULL;
        int pr = gemm_problem_init(&g, &p, &shapes[i], &why);
        if (pr < 0) goto fail_shape;
        if (pr > 0) {
            fprintf(stderr, "skip %s: %s\n", key, why);
            cli_tally_add(&st.skipped, why);
            gemm_problem_free(&p);
            continue;
        }
        int nc = 0, nr = 0;
        if (candidates_build(&g, &p, &caps[shapes[i].dtype], key, &o, cand, &nc, &st) ||
            candidates_time(&g, &p, cand, nc, rows, &nr, &st) < 0)
            goto fail_shape;
        gemm_problem_free(&p);
        if (nr == 0) {
            fprintf(stderr, "skip %s: no configuration ran\n", key);
            cli_tally_add(&st.skipped, "no configuration ran");
            continue;
        }
        if (collect_gemm_out_write(&fo, &shapes[i], rows, nr)) goto fail;
        written++;
        double now = cli_now_s(), dt = now - t0;
        if (dt > longest) longest = dt;
        if (o.verbose || written % 25 == 0 || written == todo) {
            double el = now - t_start, eta = el / written * (todo - written);
            double best = rows[0].time_us, heur0 = 0;
            for (int k = 0; k < nr; k++) {
                if (rows[k].time_us < best) best = rows[k].time_us;
                if (rows[k].heuristic_rank == 0) heur0 = rows[k].time_us;
            }
            fprintf(stderr, "shape %d/%d (%s): %d candidates, %d timed, best %.2f us, heuristic pick %.2f us, %.2f s; "
                            "this run %d/%d shapes, %ld candidates timed, elapsed %.0f s, ETA %.0f s\n",
                    i + 1, n_shapes, key, nc, nr, best, heur0, dt, written, todo, st.timed, el, eta);
        }
        continue;
    fail_shape:
        gemm_problem_free(&p);
        fprintf(stderr, "heurist-collect gemm: %s: %s\n", key, collect_last_error());
        FILE *ff = fopen(failed_path, "a");
        if (ff) {
            fprintf(ff, "%s=%s\n", key, collect_last_error());
            fclose(ff);
        }
        fatal = 1;
        break;
    }
    rc = fatal || stopped ? 3 : 0;
    printf("%d shapes written this run, %d before, %.1f s (longest shape %.2f s)\n", written, done.n,
           cli_now_s() - t_start, longest);
    if (stopped) printf("stopped by --time-limit or --limit: run again with --resume to continue\n");
    print_stats(&st, stdout);
    goto cleanup;
fail:
    fprintf(stderr, "heurist-collect gemm: %s\n", collect_last_error());
    rc = 1;
cleanup:
    if (collect_gemm_out_close(&fo)) {
        fprintf(stderr, "heurist-collect gemm: %s\n", collect_last_error());
        rc = 1;
    }
    if (gpu_ok) gemm_gpu_free(&g);
    for (int t = 0; t < COLLECT_GEMM_DTYPE_COUNT; t++) collect_gemm_capset_free(&caps[t]);
    collect_gemm_done_free(&done);
    cli_keys_free(failed, n_failed);
    free(shapes);
    free(cand);
    free(rows);
    return rc;
}
