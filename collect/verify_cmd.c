/* heurist-collect verify: an exported heurist model's pick against cuDNN's heuristic pick and the best of a
 * fresh exhaustive timing, on the GPU, per problem.
 *
 * Built with an exported selection runtime (heurist export --model M.h5 --format c --out DIR; prefix
 * heurist_model), whose heurist_model_select_key scores every kernel the model knows. The model's pick is
 * its highest-scored kernel of the problem's direction that cuDNN ran in the exhaustive timing. The three
 * picks are then timed again, interleaved, --rounds times (median per kernel), with the same method (gpu.h).
 * Report: one tab-separated row per problem, then '#' summary lines (heurist-collect summarize recomputes
 * them with another noise ratio). Rows are flushed as they come (no temporary file and rename) so that a
 * run stopped early keeps them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "heurist_model.h"

typedef struct model_vocab {
    int n;
    collect_dir *dir;   /* (n): direction of each model kernel, -1 if not a cuDNN name */
    int *algo, *math;   /* (n) */
    float *scores;      /* (n) */
} model_vocab;

/* The model's highest-scored runnable kernel of dir (index into res), or -1. */
static int model_pick(const model_vocab *v, collect_dir dir, const collect_result *res, int n_res)
{
    int best = -1;
    float best_s = -INFINITY;
    for (int k = 0; k < v->n; k++) {
        if (v->dir[k] != dir || !(v->scores[k] > best_s)) continue;
        for (int r = 0; r < n_res; r++)
            if (res[r].algo == v->algo[k] && res[r].math == v->math[k]) {
                best = r;
                best_s = v->scores[k];
                break;
            }
    }
    return best;
}

/* The model's decision as a deployed runtime makes it: scores, then the best kernel of the direction. */
static int model_decide(const model_vocab *v, const char *key, collect_dir dir)
{
    if (heurist_model_select_key(key, v->scores) < 0) return -1;
    int best = -1;
    for (int k = 0; k < v->n; k++)
        if (v->dir[k] == dir && (best < 0 || v->scores[k] > v->scores[best])) best = k;
    return best;
}

int cmd_verify(int argc, char **argv)
{
    static const char *const known[] = {"--problems", "--out", "--repeats", "--rounds", "--noise-ratio",
                                        "--time-limit", "--min-repeat-ms", "--workspace-mib", NULL};
    static const char *const flags[] = {"--no-find", NULL};
    if (cli_check(argc, argv, known, flags)) return 2;
    const char *problems = cli_opt(argc, argv, "--problems"), *out = cli_opt(argc, argv, "--out");
    double repeats, rounds_d, noise, limit, min_ms, ws_mib;
    if (cli_number(argc, argv, "--repeats", 5, 1, GPU_MAX_REPEATS, &repeats) ||
        cli_number(argc, argv, "--rounds", 3, 1, 16, &rounds_d) ||
        cli_number(argc, argv, "--noise-ratio", 1.0, 1.0, 1e3, &noise) ||
        cli_number(argc, argv, "--time-limit", 0, 0, 1e9, &limit) ||
        cli_number(argc, argv, "--min-repeat-ms", 0.2, 0, 1e3, &min_ms) ||
        cli_number(argc, argv, "--workspace-mib", 4096, 0, 1 << 20, &ws_mib))
        return 2;
    int no_find = cli_flag(argc, argv, "--no-find");
    if (!problems || !out) {
        fprintf(stderr, "heurist-collect verify: --problems and --out are required\n");
        return 2;
    }
    int rounds = (int)rounds_d;
    double t_start = cli_now_s();
    model_vocab v = {0};
    v.n = heurist_model_n_kernels();
    v.dir = calloc((size_t)v.n, sizeof *v.dir);
    v.algo = calloc((size_t)v.n, sizeof *v.algo);
    v.math = calloc((size_t)v.n, sizeof *v.math);
    v.scores = calloc((size_t)v.n, sizeof *v.scores);
    char **keys = NULL;
    int n_keys = 0, rc = 1, gpu_ok = 0, n_rows = 0, known_k = 0;
    collect_verify_row *rows = NULL;
    FILE *fo = NULL;
    gpu g;
    if (!v.dir || !v.algo || !v.math || !v.scores) {
        collect_error(COLLECT_ENOMEM, "out of memory");
        goto fail;
    }
    for (int k = 0; k < v.n; k++) {
        const char *name = heurist_model_kernel_name(k);
        if (collect_kernel_parse(name, strlen(name), &v.dir[k], &v.algo[k], &v.math[k])) v.dir[k] = (collect_dir)-1;
        else known_k++;
    }
    if (cli_keys_read(problems, &keys, &n_keys)) goto fail;
    if (!(rows = calloc((size_t)n_keys + 1, sizeof *rows))) {
        collect_error(COLLECT_ENOMEM, "out of memory");
        goto fail;
    }
    if (!(fo = fopen(out, "w"))) {
        collect_error(COLLECT_EIO, "%s: cannot open for writing", out);
        goto fail;
    }
    if (gpu_init(&g, (int)repeats, min_ms, (size_t)(ws_mib * 1048576.0))) goto fail;
    gpu_ok = 1;
    gpu_describe(stdout);
    printf("model: %d kernels, %d of them cuDNN kernels; %d problems; %d interleaved rounds\n", v.n, known_k, n_keys,
           rounds);
    fflush(stdout);
    fprintf(fo, "key\tmodel\theuristic\tbest\tt_model_ms\tt_heur_ms\tt_best_ms\tspeedup\tefficiency\tdecide_us\t"
                "heur_us\tfind_ms\n");
    cli_tally skipped = {0}, cand = {0};
    int stopped = 0;
    double longest = 0;
    collect_result res[8 * COLLECT_MATH_COUNT];
    for (int i = 0; i < n_keys; i++) {
        double t0 = cli_now_s();
        if (limit > 0 && t0 - t_start + (longest * 2 > 3 ? longest * 2 : 3) > limit) {
            stopped = 1;
            break;
        }
        collect_conv cv;
        if (collect_conv_from_key(keys[i], strlen(keys[i]), &cv)) {
            cli_tally_add(&skipped, "key not supported");
            continue;
        }
        gpu_problem p;
        const char *why = NULL;
        int pr = gpu_problem_init(&g, &p, &cv, &why);
        if (pr) {
            gpu_problem_free(&p);
            if (pr < 0) goto fail;
            cli_tally_add(&skipped, why);
            continue;
        }
        /* decision times: the model (many calls, averaged) and cuDNN's v7 heuristic (one call) */
        int reps = 50;
        double d0 = cli_now_s();
        for (int r = 0; r < reps; r++) model_decide(&v, keys[i], cv.dir);
        double decide_us = (cli_now_s() - d0) * 1e6 / reps;
        int ha[64], hm[64], nh = 0;
        d0 = cli_now_s();
        gpu_heuristic(&g, &p, gpu_heuristic_math(cv.dtype), ha, hm, 64, &nh);
        double heur_us = (cli_now_s() - d0) * 1e6;
        double find_ms = 0;
        if (!no_find && gpu_find_ms(&g, &p, &find_ms)) cli_tally_add(&cand, "cudnnFind failed");
        int n_res = 0;
        if (gpu_time_all(&g, &p, ha, hm, nh, res, &n_res, &cand) < 0) {
            gpu_problem_free(&p);
            goto fail;
        }
        int ib = -1, im = model_pick(&v, cv.dir, res, n_res), ih = -1;
        for (int r = 0; r < n_res; r++)
            if (ib < 0 || res[r].ms < res[ib].ms) ib = r;
        for (int k = 0; k < nh && ih < 0; k++)
            for (int r = 0; r < n_res; r++)
                if (res[r].algo == ha[k] && res[r].math == hm[k]) {
                    ih = r;
                    break;
                }
        if (ib < 0 || im < 0 || ih < 0) {
            gpu_problem_free(&p);
            cli_tally_add(&skipped, ib < 0 ? "no algorithm ran" : im < 0 ? "model knows no runnable kernel"
                                                                         : "no heuristic pick ran");
            continue;
        }
        /* interleaved re-timing of the distinct picks */
        int pick[3] = {im, ih, ib}, uniq[3], nu = 0;
        for (int a = 0; a < 3; a++) {
            int dup = 0;
            for (int b = 0; b < nu; b++) dup |= uniq[b] == pick[a];
            if (!dup) uniq[nu++] = pick[a];
        }
        double t[3][16];
        int fatal = 0;
        int nrounds = rounds;
        for (int r = 0; r < nrounds && !fatal; r++)
            for (int u = 0; u < nu; u++) {
                size_t ws;
                const char *w2 = NULL;
                int trc = gpu_time(&g, &p, res[uniq[u]].algo, res[uniq[u]].math, 0, &t[u][r], &ws, &w2);
                if (trc < 0) fatal = 1;
                if (trc) t[u][r] = res[uniq[u]].ms;
            }
        gpu_problem_free(&p);
        if (fatal) goto fail;
        double med[3];
        for (int u = 0; u < nu; u++) med[u] = collect_median(t[u], nrounds);
        double tp[3];
        for (int a = 0; a < 3; a++)
            for (int u = 0; u < nu; u++)
                if (uniq[u] == pick[a]) tp[a] = med[u];
        collect_verify_row *row = &rows[n_rows++];
        *row = (collect_verify_row){tp[0], tp[1], tp[2], decide_us, find_ms};
        char nm[3][64];
        for (int a = 0; a < 3; a++) collect_kernel_name(cv.dir, res[pick[a]].algo, res[pick[a]].math, nm[a], sizeof nm[a]);
        double best = fmin(tp[2], fmin(tp[0], tp[1]));
        fprintf(fo, "%s\t%s\t%s\t%s\t%.6g\t%.6g\t%.6g\t%.4f\t%.4f\t%.3f\t%.1f\t%.3f\n", keys[i], nm[0], nm[1], nm[2], tp[0],
                tp[1], tp[2], tp[1] / tp[0], best / tp[0], decide_us, heur_us, find_ms);
        fflush(fo);
        double dt = cli_now_s() - t0;
        if (dt > longest) longest = dt;
        if (n_rows % 50 == 0) {
            printf("%d/%d problems, %.1f s\n", i + 1, n_keys, cli_now_s() - t_start);
            fflush(stdout);
        }
    }
    if (stopped) printf("stopped by --time-limit after %d problems\n", n_rows);
    cli_tally_print(&skipped, stdout, "problems skipped");
    cli_tally_print(&cand, stdout, "candidates rejected");
    collect_verify_summary s;
    if (collect_verify_summarize(rows, n_rows, noise, &s)) goto fail;
    char text[1024];
    snprintf(text, sizeof text,
             "# problems: %d\n# speed-up over cuDNN's heuristic: geometric mean %.4f (p10 %.4f, median %.4f, p90 %.4f)\n"
             "# efficiency against the fresh best: model %.4f, heuristic %.4f\n"
             "# slower than the heuristic by more than x%.4f: %.4f; faster by more: %.4f\n"
             "# decision time: model %.2f us per problem; cudnnFind %.2f ms per problem\n",
             s.n, s.speedup_geomean, s.speedup_p10, s.speedup_p50, s.speedup_p90, s.efficiency_mean,
             s.heur_efficiency_mean, noise, s.share_slower, s.share_faster, s.decide_us_mean, s.find_ms_mean);
    fputs(text, fo);
    fputs(text, stdout);
    rc = 0;
    goto cleanup;
fail:
    fprintf(stderr, "heurist-collect verify: %s\n", collect_last_error());
cleanup:
    if (gpu_ok) gpu_free(&g);
    if (fo && fclose(fo)) rc = 1;
    free(rows);
    cli_keys_free(keys, n_keys);
    free(v.dir);
    free(v.algo);
    free(v.math);
    free(v.scores);
    return rc;
}
