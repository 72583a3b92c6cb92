/* heurist-collect verify, for GEMM: an exported table model's pick against cuBLASLt's heuristic on the GPU, per
 * held-out shape.
 *
 * Built with an exported table runtime (heurist export --model M.h5 --format c on a model of the GEMM table,
 * prefix heurist_model), whose heurist_model_rank scores candidate configurations from their fields. Input: a
 * table heurist-collect gemm wrote, holding the held-out shapes (collect/scripts/split_table.py); each shape's rows are
 * its candidates, the configurations the collector's enumeration found valid (cublasLtMatmulAlgoCheck) and timed.
 * Per shape:
 *   - cuBLASLt's heuristic, called fresh: its first pick, and its whole list, whose fastest entry is what
 *     autotuning over the list gets; list entries missing from the shape's rows join the candidates;
 *   - the model's decision: its runtime ranks the candidates (decide_us: the mean over repeated calls), given
 *     each one's rank in the heuristic's list when the model reads it (a table read with "vendor_feature"); its
 *     pick is the best-ranked one cuBLASLt still accepts (rebuilt from its fields and checked);
 *   - the table's fastest configuration;
 * then every distinct configuration among them is timed again, interleaved, --rounds times (median per
 * configuration; the collector's method, gemm_gpu.h). The best is the fastest of those re-timed.
 * Report: one tab-separated row per shape (the first twelve columns as the convolution verify's, so
 * `heurist-collect summarize` reads both), then '#' summary lines. Rows are flushed as they come (no temporary
 * file and rename) so that a run stopped early keeps them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "collect.h"
#include "gemm_gpu.h"
#include "heurist_model.h"

#define MAX_HEUR 64
#define MAX_TIMED (MAX_HEUR + 2)

static const collect_gemm_model_api model_api = {HEURIST_MODEL_N_PROBLEM, HEURIST_MODEL_N_KERNEL,
                                                 heurist_model_problem_column, heurist_model_kernel_column,
                                                 heurist_model_category};

/* Index of cfg in set (appended when new); -1 when the set is full. */
static int set_add(gemm_candidate *set, int *n, const gemm_candidate *c)
{
    for (int i = 0; i < *n; i++)
        if (collect_gemm_config_equal(&set[i].cfg, &c->cfg)) return i;
    if (*n == MAX_TIMED) return -1;
    set[*n] = *c;
    return (*n)++;
}

static void summary_print(FILE *f, const collect_verify_summary *s, const collect_verify_summary *tune, double noise,
                          double heur_us, double cands)
{
    fprintf(f,
            "# shapes: %d\n"
            "# speed-up over cuBLASLt's heuristic (first pick): geometric mean %.4f (p10 %.4f, median %.4f, p90 %.4f)\n"
            "# efficiency against the best re-timed: model %.4f, heuristic %.4f, best of the heuristic's list %.4f\n"
            "# autotuning over the heuristic's list: speed-up over its first pick %.4f (geometric mean)\n"
            "# slower than the heuristic by more than x%.4f: %.4f; faster by more: %.4f\n"
            "# decision: model %.2f us a shape (%.1f candidates ranked; a model reading cuBLASLt's ranks needs the "
            "heuristic call too); heuristic call %.1f us; autotuning the list %.2f ms\n",
            s->n, s->speedup_geomean, s->speedup_p10, s->speedup_p50, s->speedup_p90, s->efficiency_mean,
            s->heur_efficiency_mean, tune->efficiency_mean, tune->speedup_geomean, noise, s->share_slower,
            s->share_faster, s->decide_us_mean, cands, heur_us, s->find_ms_mean);
}

int cmd_verify_gemm(int argc, char **argv)
{
    static const char *const known[] = {"--table", "--out", "--repeats", "--rounds", "--noise-ratio", "--time-limit",
                                        "--limit", "--heuristic-count", "--min-batch-us", "--max-batch",
                                        "--workspace-mib", NULL};
    if (cli_check(argc, argv, known, NULL)) return 2;
    const char *table = cli_opt(argc, argv, "--table"), *out = cli_opt(argc, argv, "--out");
    double repeats, rounds_d, noise, limit, max_shapes, n_heur_d, min_batch, max_batch, ws_mib;
    if (cli_number(argc, argv, "--repeats", 3, 1, GEMM_GPU_MAX_REPEATS, &repeats) ||
        cli_number(argc, argv, "--rounds", 3, 1, 16, &rounds_d) ||
        cli_number(argc, argv, "--noise-ratio", 1.0, 1.0, 1e3, &noise) ||
        cli_number(argc, argv, "--time-limit", 0, 0, 1e9, &limit) ||
        cli_number(argc, argv, "--limit", 0, 0, 1e9, &max_shapes) ||
        cli_number(argc, argv, "--heuristic-count", 32, 1, MAX_HEUR, &n_heur_d) ||
        cli_number(argc, argv, "--min-batch-us", 100, 0, 1e6, &min_batch) ||
        cli_number(argc, argv, "--max-batch", 64, 1, 1e4, &max_batch) ||
        cli_number(argc, argv, "--workspace-mib", 32, 0, 1 << 16, &ws_mib))
        return 2;
    if (!table || !out) {
        fprintf(stderr, "heurist-collect verify: --table and --out are required (this build holds a table model)\n");
        return 2;
    }
    int rounds = (int)rounds_d, n_heur = (int)n_heur_d;
    double t_start = cli_now_s();
    collect_gemm_measured *shapes = NULL;
    int n_shapes = 0, n_read = 0, rc = 1, gpu_ok = 0, n_rows = 0;
    collect_verify_row *rows = NULL, *tune_rows = NULL;
    FILE *fo = NULL;
    gemm_gpu g;
    double *pv = NULL, *kv = NULL;
    float *scores = NULL;
    int *ranking = NULL, *vrank = NULL;
    collect_gemm_config *cfgs = NULL;
    if (collect_gemm_measured_read(table, &shapes, &n_read)) goto fail;
    n_shapes = n_read;
    if (max_shapes > 0 && n_shapes > (int)max_shapes) n_shapes = (int)max_shapes;
    int max_c = 1;
    size_t amax = 0, bmax = 0, dmax = 0;
    for (int i = 0; i < n_shapes; i++) {
        size_t a, b, d;
        collect_gemm_shape_bytes(&shapes[i].s, &a, &b, &d);
        amax = a > amax ? a : amax;
        bmax = b > bmax ? b : bmax;
        dmax = d > dmax ? d : dmax;
        if (shapes[i].n > max_c) max_c = shapes[i].n;
    }
    max_c += MAX_HEUR;
    pv = malloc(HEURIST_MODEL_N_PROBLEM * sizeof *pv);
    vrank = malloc((size_t)max_c * sizeof *vrank);
    kv = malloc((size_t)max_c * HEURIST_MODEL_N_KERNEL * sizeof *kv);
    scores = malloc((size_t)max_c * sizeof *scores);
    ranking = malloc((size_t)max_c * sizeof *ranking);
    cfgs = malloc((size_t)max_c * sizeof *cfgs);
    rows = calloc((size_t)n_shapes + 1, sizeof *rows);
    tune_rows = calloc((size_t)n_shapes + 1, sizeof *tune_rows);
    if (!pv || !vrank || !kv || !scores || !ranking || !cfgs || !rows || !tune_rows) {
        collect_error(COLLECT_ENOMEM, "out of memory");
        goto fail;
    }
    if (!(fo = fopen(out, "w"))) {
        collect_error(COLLECT_EIO, "%s: cannot open for writing", out);
        goto fail;
    }
    if (gemm_gpu_init(&g, amax, bmax, dmax, (size_t)(ws_mib * 1048576.0), (int)repeats, min_batch, (int)max_batch, 1e9))
        goto fail;
    gpu_ok = 1;
    char gpu_name[256];
    int sms = 0;
    gemm_gpu_describe(stdout, gpu_name, sizeof gpu_name, &sms);
    printf("model: a table model of %d problem and %d kernel columns, %d configurations known; %d shapes in %s; "
           "%d interleaved rounds of %d batches (>= %.0f us each)\n", HEURIST_MODEL_N_PROBLEM, HEURIST_MODEL_N_KERNEL,
           heurist_model_n_configs(), n_shapes, table, rounds, g.repeats, g.min_batch_us);
    fflush(stdout);
    fprintf(fo, "key\tmodel\theuristic\tbest\tt_model_us\tt_heur_us\tt_best_us\tspeedup\tefficiency\tdecide_us\t"
                "heur_us\tautotune_ms\tlist_best\tt_list_us\tcandidates\tlist\tmodel_rank_fallbacks\n");
    cli_tally skipped = {0};
    int stopped = 0;
    double longest = 0, heur_us_sum = 0, cand_sum = 0;
    for (int i = 0; i < n_shapes; i++) {
        const collect_gemm_measured *sh = &shapes[i];
        double t0 = cli_now_s();
        if (limit > 0 && t0 - t_start + (longest * 2 > 3 ? longest * 2 : 3) > limit) {
            stopped = 1;
            break;
        }
        char key[128];
        collect_gemm_shape_key(&sh->s, key, sizeof key);
        gemm_problem p;
        const char *why = NULL;
        int pr = gemm_problem_init(&g, &p, &sh->s, &why);
        if (pr) {
            gemm_problem_free(&p);
            if (pr < 0) goto fail;
            cli_tally_add(&skipped, why);
            continue;
        }
        /* cuBLASLt's heuristic, fresh */
        gemm_candidate heur[MAX_HEUR];
        int nh = 0;
        double hus = 0;
        if (gemm_gpu_heuristic(&g, &p, heur, n_heur, &nh, &hus)) nh = 0;
        /* the candidates: the shape's timed configurations and any list entry missing from them, each with its
         * rank in the list */
        int nc = 0;
        for (int c = 0; c < sh->n; c++) cfgs[nc++] = sh->rows[c].cfg;
        for (int k = 0; k < nh; k++) {
            int c = 0;
            while (c < nc && !collect_gemm_config_equal(&cfgs[c], &heur[k].cfg)) c++;
            if (c == nc) cfgs[nc++] = heur[k].cfg;
        }
        for (int c = 0; c < nc; c++) {
            vrank[c] = -1;
            for (int k = 0; k < nh && vrank[c] < 0; k++)
                if (collect_gemm_config_equal(&cfgs[c], &heur[k].cfg)) vrank[c] = k;
        }
        /* the model's decision over them, as a deployed runtime makes it */
        if (collect_gemm_model_values(&model_api, &sh->s, cfgs, vrank, nc, pv, kv)) {
            gemm_problem_free(&p);
            goto fail;
        }
        int reps = 200;
        double d0 = cli_now_s();
        for (int r = 0; r < reps; r++) heurist_model_rank(pv, kv, nc, scores, ranking);
        double decide_us = (cli_now_s() - d0) * 1e6 / reps;
        gemm_candidate set[MAX_TIMED];
        int n_set = 0, im = -1, fallbacks = 0;
        for (int r = 0; r < nc && im < 0; r++) {
            gemm_candidate c;
            if (gemm_gpu_build(&g, &p, &cfgs[ranking[r]], &c, &why)) {
                fallbacks++;
                continue;
            }
            im = set_add(set, &n_set, &c);
        }
        int hidx[MAX_HEUR];
        for (int k = 0; k < nh; k++) hidx[k] = set_add(set, &n_set, &heur[k]);
        /* the table's fastest */
        int tb = 0;
        for (int c = 1; c < sh->n; c++)
            if (sh->rows[c].time_us < sh->rows[tb].time_us) tb = c;
        gemm_candidate tbc;
        if (!gemm_gpu_build(&g, &p, &sh->rows[tb].cfg, &tbc, &why)) set_add(set, &n_set, &tbc);
        if (im < 0 || nh == 0) {
            gemm_problem_free(&p);
            cli_tally_add(&skipped, im < 0 ? "no candidate of the model passed AlgoCheck" : "no heuristic entry");
            continue;
        }
        /* interleaved re-timing; the first round's time over the list is autotuning's cost */
        double t[MAX_TIMED][16], autotune_ms = 0;
        int fatal = 0;
        for (int r = 0; r < rounds && !fatal; r++)
            for (int u = 0; u < n_set && !fatal; u++) {
                double us, a0 = cli_now_s();
                gemm_time_kind kind;
                int respun = 0;
                const char *w2 = NULL;
                int trc = gemm_gpu_time(&g, &p, &set[u], 0, &us, &kind, &respun, &w2);
                if (trc < 0) fatal = 1;
                t[u][r] = trc ? INFINITY : us;
                int in_list = 0;
                for (int k = 0; k < nh; k++) in_list |= hidx[k] == u;
                if (r == 0 && in_list) autotune_ms += (cli_now_s() - a0) * 1e3;
            }
        gemm_problem_free(&p);
        if (fatal) goto fail;
        double med[MAX_TIMED];
        int ib = 0, il = hidx[0];
        for (int u = 0; u < n_set; u++) {
            med[u] = collect_median(t[u], rounds);
            if (med[u] < med[ib]) ib = u;
        }
        for (int k = 0; k < nh; k++)
            if (med[hidx[k]] < med[il]) il = hidx[k];
        int ih = hidx[0];
        if (!isfinite(med[im]) || !isfinite(med[ih])) {
            cli_tally_add(&skipped, "the model's or the heuristic's pick failed to run");
            continue;
        }
        rows[n_rows] = (collect_verify_row){med[im], med[ih], med[ib], decide_us, autotune_ms};
        tune_rows[n_rows] = (collect_verify_row){med[il], med[ih], med[ib], 0, autotune_ms};
        n_rows++;
        heur_us_sum += hus;
        cand_sum += nc;
        char nm[4][256];
        int pick[4] = {im, ih, ib, il};
        for (int a = 0; a < 4; a++) collect_gemm_config_name(&set[pick[a]].cfg, nm[a], sizeof nm[a]);
        fprintf(fo, "%s\t%s\t%s\t%s\t%.6g\t%.6g\t%.6g\t%.4f\t%.4f\t%.3f\t%.1f\t%.3f\t%s\t%.6g\t%d\t%d\t%d\n", key, nm[0],
                nm[1], nm[2], med[im], med[ih], med[ib], med[ih] / med[im], med[ib] / med[im], decide_us, hus,
                autotune_ms, nm[3], med[il], nc, nh, fallbacks);
        fflush(fo);
        double dt = cli_now_s() - t0;
        if (dt > longest) longest = dt;
        if (n_rows % 50 == 0) {
            printf("%d/%d shapes, %.1f s\n", i + 1, n_shapes, cli_now_s() - t_start);
            fflush(stdout);
        }
    }
    if (stopped) printf("stopped by --time-limit after %d shapes\n", n_rows);
    cli_tally_print(&skipped, stdout, "shapes skipped");
    collect_verify_summary s, tune;
    if (collect_verify_summarize(rows, n_rows, noise, &s) || collect_verify_summarize(tune_rows, n_rows, noise, &tune))
        goto fail;
    summary_print(fo, &s, &tune, noise, heur_us_sum / n_rows, cand_sum / n_rows);
    summary_print(stdout, &s, &tune, noise, heur_us_sum / n_rows, cand_sum / n_rows);
    printf("%.1f s\n", cli_now_s() - t_start);
    rc = 0;
    goto cleanup;
fail:
    fprintf(stderr, "heurist-collect verify: %s\n", collect_last_error());
cleanup:
    if (gpu_ok) gemm_gpu_free(&g);
    if (fo && fclose(fo)) rc = 1;
    collect_gemm_measured_free(shapes, n_read);
    free(rows);
    free(tune_rows);
    free(pv);
    free(kv);
    free(scores);
    free(ranking);
    free(vrank);
    free(cfgs);
    return rc;
}
