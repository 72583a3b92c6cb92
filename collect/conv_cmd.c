/* heurist-collect conv: times every cuDNN algorithm x math type for each problem key and writes find-db
 * lines, plus cuDNN's own heuristic ranking in a sidecar file.
 *
 * With --heuristic SIDE.txt, FP32 problems also get cuDNN's ranking under the other precision classes
 * (data/portable.h): SIDE.strict.txt (asked with FMA math) and SIDE.conversion.txt (TENSOR_OP_ALLOW_CONVERSION),
 * SIDE.txt keeping the TF32 class (DEFAULT math; TENSOR_OP for FP16 and BF16). SIDE.time.tsv records the host
 * time of each heuristic call: key, math type asked, microseconds, entries returned.
 *
 * Lines are appended and flushed one problem at a time (not written to a temporary file and renamed like
 * heurist's outputs) so that a run stopped by a time limit or killed keeps every finished problem; --resume
 * skips the keys already in the output and appends. A problem that ends the run with a CUDA error is
 * appended to <out>.failed, which --resume also skips, so that a resumed run gets past it. */
#include <stdlib.h>
#include <string.h>

#include "data/portable.h"
#include "gpu.h"

int gpu_time_all(gpu *g, gpu_problem *p, const int *first_algos, const int *first_maths, int n_first,
                 collect_result *res, int *n_res, cli_tally *skips)
{
    int n_algo = collect_algo_count(p->cv.dir);
    int order_a[8 * COLLECT_MATH_COUNT], order_m[8 * COLLECT_MATH_COUNT], n = 0;
    char seen[8][COLLECT_MATH_COUNT] = {{0}};
    for (int i = 0; i < n_first; i++)
        if (first_algos[i] >= 0 && first_algos[i] < n_algo && first_maths[i] >= 0 && first_maths[i] < COLLECT_MATH_COUNT &&
            !seen[first_algos[i]][first_maths[i]]) {
            seen[first_algos[i]][first_maths[i]] = 1;
            order_a[n] = first_algos[i];
            order_m[n++] = first_maths[i];
        }
    for (int a = 0; a < n_algo; a++)
        for (int m = 0; m < COLLECT_MATH_COUNT; m++)
            if (!seen[a][m]) {
                order_a[n] = a;
                order_m[n++] = m;
            }
    double best = 0;
    *n_res = 0;
    for (int i = 0; i < n; i++) {
        double ms;
        size_t ws;
        const char *why = NULL;
        int rc = gpu_time(g, p, order_a[i], order_m[i], best, &ms, &ws, &why);
        if (rc < 0) return rc;
        if (rc > 0) {
            cli_tally_add(skips, why);
            continue;
        }
        res[*n_res] = (collect_result){order_a[i], order_m[i], ms, ws};
        (*n_res)++;
        if (best == 0 || ms < best) best = ms;
    }
    return 0;
}

/* A heuristic sidecar line: the (algo, math) pairs as kernel names. */
static int sidecar_write(FILE *f, const char *key, collect_dir dir, const int *algos, const int *maths, int n)
{
    char names[64][64];
    const char *ptr[64];
    for (int k = 0; k < n && k < 64; k++) {
        collect_kernel_name(dir, algos[k], maths[k], names[k], sizeof names[k]);
        ptr[k] = names[k];
    }
    return collect_sidecar_write_line(f, key, ptr, n < 64 ? n : 64);
}

static int heuristic_time_write(FILE *f, const char *key, int math, double us, int n)
{
    if (fprintf(f, "%s\t%s\t%.2f\t%d\n", key, collect_math_name(math), us, n) < 0 || fflush(f))
        return collect_error(COLLECT_EIO, "heuristic time file: write failed");
    return COLLECT_OK;
}

/* keys already written to a find-db file (for --resume) */
static int done_keys(const char *path, collect_file *done)
{
    memset(done, 0, sizeof *done);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    fclose(f);
    return collect_file_read(path, done);
}

int cmd_conv(int argc, char **argv)
{
    static const char *const known[] = {"--problems", "--out", "--heuristic", "--time-limit", "--repeats",
                                        "--min-repeat-ms", "--workspace-mib", NULL};
    static const char *const flags[] = {"--resume", NULL};
    if (cli_check(argc, argv, known, flags)) return 2;
    const char *problems = cli_opt(argc, argv, "--problems"), *out = cli_opt(argc, argv, "--out");
    const char *side = cli_opt(argc, argv, "--heuristic");
    double limit, repeats, min_ms, ws_mib;
    if (cli_number(argc, argv, "--time-limit", 0, 0, 1e9, &limit) ||
        cli_number(argc, argv, "--repeats", 5, 1, GPU_MAX_REPEATS, &repeats) ||
        cli_number(argc, argv, "--min-repeat-ms", 0.2, 0, 1e3, &min_ms) ||
        cli_number(argc, argv, "--workspace-mib", 4096, 0, 1 << 20, &ws_mib))
        return 2;
    int resume = cli_flag(argc, argv, "--resume");
    if (!problems || !out) {
        fprintf(stderr, "heurist-collect conv: --problems and --out are required\n");
        return 2;
    }
    double t_start = cli_now_s();
    char **keys = NULL;
    int n_keys = 0;
    collect_file done = {0};
    char **failed = NULL;
    int n_failed = 0;
    char failed_path[4096];
    snprintf(failed_path, sizeof failed_path, "%s.failed", out);
    FILE *fo = NULL, *fs = NULL, *fcls[2] = {NULL, NULL}, *ft = NULL;
    static const int cls[2] = {DATA_PRECISION_STRICT, DATA_PRECISION_CONVERSION};
    gpu g;
    int gpu_ok = 0, rc = 1;
    if (cli_keys_read(problems, &keys, &n_keys)) goto fail;
    if (resume && done_keys(out, &done)) goto fail;
    if (resume) {
        FILE *ff = fopen(failed_path, "r");
        if (ff) {
            fclose(ff);
            if (cli_keys_read(failed_path, &failed, &n_failed)) goto fail;
        }
    }
    if (!(fo = fopen(out, resume ? "a" : "w")) || (side && !(fs = fopen(side, resume ? "a" : "w")))) {
        collect_error(COLLECT_EIO, "%s: cannot open for writing", fo ? side : out);
        goto fail;
    }
    for (int c = 0; side && c < 3; c++) {
        char path[4200];
        if (collect_sidecar_class_path(side, c < 2 ? data_portable_precision_name(cls[c]) : "time", c < 2 ? ".txt" : ".tsv",
                                       path, sizeof path))
            goto fail;
        FILE *f = fopen(path, resume ? "a" : "w");
        if (!f) {
            collect_error(COLLECT_EIO, "%s: cannot open for writing", path);
            goto fail;
        }
        if (c < 2) fcls[c] = f;
        else ft = f;
    }
    if (ft && fseek(ft, 0, SEEK_END) == 0 && ftell(ft) == 0 && fputs("key\tmath\tus\tentries\n", ft) == EOF) {
        collect_error(COLLECT_EIO, "%s.time.tsv: write failed", side);
        goto fail;
    }
    if (gpu_init(&g, (int)repeats, min_ms, (size_t)(ws_mib * 1048576.0))) goto fail;
    gpu_ok = 1;
    gpu_describe(stdout);
    printf("%d problem keys in %s; repeats %d, >= %.3f ms each; workspace limit %zu MiB\n", n_keys, problems,
           g.repeats, g.min_repeat_ms, g.ws_limit >> 20);
    fflush(stdout);
    cli_tally skipped = {0}, cand = {0};
    int written = 0, stopped = 0, fatal = 0, resumed = 0, done_i = 0;
    double longest = 0;
    collect_result res[8 * COLLECT_MATH_COUNT];
    for (int i = 0; i < n_keys; i++, done_i = i) {
        int was_failed = 0;
        for (int k = 0; k < n_failed && !was_failed; k++) was_failed = strcmp(failed[k], keys[i]) == 0;
        if (was_failed) {
            cli_tally_add(&skipped, "ended an earlier run with a CUDA error");
            continue;
        }
        if (resume && collect_file_find(&done, keys[i]) >= 0) {
            resumed++;
            continue;
        }
        double t0 = cli_now_s();
        if (limit > 0 && t0 - t_start + (longest * 2 > 3 ? longest * 2 : 3) > limit) {
            stopped = 1;
            break;
        }
        collect_conv cv;
        if (collect_conv_from_key(keys[i], strlen(keys[i]), &cv)) {
            fprintf(stderr, "skip: %s\n", collect_last_error());
            cli_tally_add(&skipped, "key not supported");
            continue;
        }
        gpu_problem p;
        const char *why = NULL;
        int pr = gpu_problem_init(&g, &p, &cv, &why);
        if (pr < 0) goto fail_problem;
        if (pr > 0) {
            cli_tally_add(&skipped, why);
            gpu_problem_free(&p);
            continue;
        }
        int ha[64], hm[64], nh = 0;
        double hus = 0;
        if (gpu_heuristic_timed(&g, &p, gpu_heuristic_math(cv.dtype), ha, hm, 64, &nh, &hus))
            cli_tally_add(&cand, "heuristic call failed");
        /* the other precision classes of an FP32 problem (their lists do not order the timing) */
        int ca[2][64], cm[2][64], nc[2] = {0, 0}, n_cls = fcls[0] && cv.dtype == COLLECT_DTYPE_FP32 ? 2 : 0;
        double cus[2] = {0, 0};
        for (int c = 0; c < n_cls; c++)
            if (gpu_heuristic_timed(&g, &p, collect_precision_math(cls[c]), ca[c], cm[c], 64, &nc[c], &cus[c]))
                cli_tally_add(&cand, "heuristic call failed");
        int nr = 0;
        if (gpu_time_all(&g, &p, ha, hm, nh, res, &nr, &cand) < 0) goto fail_problem;
        gpu_problem_free(&p);
        if (nr == 0) {
            cli_tally_add(&skipped, "no algorithm ran");
            continue;
        }
        if (collect_fdb_write_line(fo, keys[i], cv.dir, res, nr)) goto fail;
        if (fs && nh > 0 && sidecar_write(fs, keys[i], cv.dir, ha, hm, nh)) goto fail;
        if (ft && heuristic_time_write(ft, keys[i], gpu_heuristic_math(cv.dtype), hus, nh)) goto fail;
        for (int c = 0; c < n_cls; c++)
            if (heuristic_time_write(ft, keys[i], collect_precision_math(cls[c]), cus[c], nc[c]) ||
                (nc[c] > 0 && sidecar_write(fcls[c], keys[i], cv.dir, ca[c], cm[c], nc[c])))
                goto fail;
        written++;
        double dt = cli_now_s() - t0;
        if (dt > longest) longest = dt;
        if (written % 100 == 0) {
            printf("%d/%d problems, %d written, %.1f s\n", i + 1, n_keys, written, cli_now_s() - t_start);
            fflush(stdout);
        }
        continue;
    fail_problem:
        gpu_problem_free(&p);
        fprintf(stderr, "heurist-collect conv: %s: %s\n", keys[i], collect_last_error());
        FILE *ff = fopen(failed_path, "a");
        if (ff) {
            fprintf(ff, "%s\n", keys[i]);
            fclose(ff);
        }
        fatal = 1;
        break;
    }
    /* 3: a CUDA error ended the run; --resume continues after the failed problem */
    rc = fatal ? 3 : 0;
    printf("%d problems written, %d already in the output, %.1f s (longest problem %.2f s)\n", written, resumed,
           cli_now_s() - t_start, longest);
    if (stopped)
        printf("stopped by --time-limit before problem %d of %d: run again with --resume to continue\n", done_i + 1, n_keys);
    cli_tally_print(&skipped, stdout, "problems skipped");
    cli_tally_print(&cand, stdout, "candidates rejected");
    goto cleanup;
fail:
    fprintf(stderr, "heurist-collect conv: %s\n", collect_last_error());
cleanup:
    if (gpu_ok) gpu_free(&g);
    if (fo && fclose(fo)) rc = 1;
    if (fs && fclose(fs)) rc = 1;
    for (int c = 0; c < 2; c++)
        if (fcls[c] && fclose(fcls[c])) rc = 1;
    if (ft && fclose(ft)) rc = 1;
    collect_file_free(&done);
    cli_keys_free(failed, n_failed);
    cli_keys_free(keys, n_keys);
    return rc;
}
