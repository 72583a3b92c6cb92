/* heurist-collect conv: times every cuDNN algorithm x math type for each problem key and writes find-db
 * lines, plus cuDNN's own heuristic ranking in a sidecar file, on one GPU or on several (run.h).
 *
 * With --heuristic SIDE.txt, FP32 problems also get cuDNN's ranking under the other precision classes
 * (data/portable.h): SIDE.strict.txt (asked with FMA math) and SIDE.conversion.txt (TENSOR_OP_ALLOW_CONVERSION),
 * SIDE.txt keeping the TF32 class (DEFAULT math; TENSOR_OP for FP16 and BF16). SIDE.time.tsv records the host
 * time of each heuristic call: key, math type asked, microseconds, entries returned.
 *
 * Each worker appends and flushes its lines one problem at a time to its part files (parts.h), so that a run
 * stopped by a time limit or killed keeps every finished problem; the merge writes OUT and the files beside it
 * in the key list's order when every worker has ended, whatever the number of workers. --resume skips the keys
 * already in OUT or in a part. A problem that ends its worker with a CUDA error is listed in OUT.failed, which
 * --resume also skips, so that a resumed run gets past it. Problems are dealt longest first by
 * collect_conv_cost_s (run.h). Exit status: 0 (also when --time-limit stopped the
 * run: --resume continues), 3 a worker ended with a CUDA error, 1 another error, 2 usage. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "data/portable.h"
#include "parts.h"
#include "run.h"
#include "timer.h"

/* The files a collection writes: each merged from its workers' parts; a problem is done once its find-db line
 * is written, so the others are written before it and keep only the keys the find-db has. */
enum { CONV_FDB, CONV_SIDE, CONV_STRICT, CONV_CONVERSION, CONV_TIME, CONV_GPU, CONV_FAILED, CONV_FILES };

typedef struct conv_job {
    const char *problems;
    char path[CONV_FILES][4200]; /* "" when not written */
    double limit;
    int resume;
    collect_conv_opts opts;
    char **keys;
    int n_keys;
    int *todo, n_todo;
    int n_before;          /* keys in the output or its parts when the run began */
} conv_job;

static const char time_header[] = "key\tmath\tus\tentries\n";

/* How file i's lines are read: the tables' keys end at a tab and their header is kept; the time table has a
 * line per heuristic call of a key, the GPU table one line a key. */
static void conv_lines_init(collect_lines *l, int i)
{
    memset(l, 0, sizeof *l);
    if (i == CONV_TIME) {
        l->sep = '\t';
        l->header = time_header;
        l->group = 1;
    } else if (i == CONV_GPU) {
        l->sep = '\t';
        l->header = collect_gpu_table_header;
    }
}

/* Adds file i (with --resume) and its parts to l. */
static int conv_lines_read(const conv_job *j, int i, collect_lines *l)
{
    char **parts = NULL;
    int n_parts = 0, rc = j->resume ? collect_lines_add_file(l, j->path[i]) : 0;
    if (!rc && !(rc = collect_parts_list(j->path[i], &parts, &n_parts)))
        for (int k = 0; !rc && k < n_parts; k++) rc = collect_lines_add_file(l, parts[k]);
    collect_parts_free(parts, n_parts);
    collect_lines_index(l);
    return rc;
}

/* Sorts the to-do list longest first by collect_conv_cost_s (a key that does not parse costs 0: its worker
 * skips it at once); the estimated total and longest, seconds. */
static int conv_order(conv_job *j, double *total, double *longest)
{
    double *cost = malloc(((size_t)j->n_todo + 1) * sizeof *cost);
    if (!cost) return collect_error(COLLECT_ENOMEM, "out of memory");
    for (int i = 0; i < j->n_todo; i++) {
        const char *key = j->keys[j->todo[i]];
        collect_conv cv;
        cost[i] = collect_conv_from_key(key, strlen(key), &cv) ? 0.0 : collect_conv_cost_s(&cv);
        *total += cost[i];
        if (cost[i] > *longest) *longest = cost[i];
    }
    int rc = collect_deal_order(j->todo, cost, j->n_todo);
    free(cost);
    return rc;
}

/* The keys still to measure: not in the output or its parts, nor listed as failed (with --resume); without
 * --resume the parts of an earlier run are removed. -1 after printing an error, else the count. */
static int conv_plan(conv_job *j)
{
    collect_lines done, failed;
    conv_lines_init(&done, CONV_FDB);
    conv_lines_init(&failed, CONV_FAILED);
    int rc = 0, n_failed = 0;
    if (!j->resume) {
        for (int i = 0; !rc && i < CONV_FILES; i++)
            if (j->path[i][0]) rc = collect_parts_remove(j->path[i]);
    } else {
        rc = conv_lines_read(j, CONV_FDB, &done) || conv_lines_read(j, CONV_FAILED, &failed);
    }
    if (!rc && !(j->todo = malloc(((size_t)j->n_keys + 1) * sizeof *j->todo))) rc = collect_error(COLLECT_ENOMEM, "out of memory");
    j->n_todo = j->n_before = 0;
    for (int i = 0; !rc && i < j->n_keys; i++) {
        if (collect_lines_has(&done, j->keys[i])) j->n_before++;
        else if (collect_lines_has(&failed, j->keys[i])) n_failed++;
        else j->todo[j->n_todo++] = i;
    }
    collect_lines_free(&done);
    collect_lines_free(&failed);
    double total = 0, longest = 0;
    if (!rc) rc = conv_order(j, &total, &longest);
    if (rc) {
        fprintf(stderr, "heurist-collect conv: %s\n", collect_last_error());
        return -1;
    }
    printf("%d problem keys in %s: %d already in the output, %d skipped as they ended an earlier run with a CUDA "
           "error, %d to measure, dealt longest first (estimated %.0f s of measuring in all, the longest %.2f s)\n",
           j->n_keys, j->problems, j->n_before, n_failed, j->n_todo, total, longest);
    return j->n_todo;
}

/* A heuristic sidecar line: the (algo, math) pairs as kernel names. */
static int sidecar_write(FILE *f, const char *key, collect_dir dir, const int *algos, const int *maths, int n)
{
    char names[COLLECT_CONV_MAX_HEUR][64];
    const char *ptr[COLLECT_CONV_MAX_HEUR];
    for (int k = 0; k < n; k++) {
        collect_kernel_name(dir, algos[k], maths[k], names[k], sizeof names[k]);
        ptr[k] = names[k];
    }
    return collect_sidecar_write_line(f, key, ptr, n);
}

static int heuristic_time_write(FILE *f, const char *key, int math, double us, int n)
{
    if (fprintf(f, "%s\t%s\t%.2f\t%d\n", key, collect_math_name(math), us, n) < 0 || fflush(f))
        return collect_error(COLLECT_EIO, "heuristic time file: write failed");
    return COLLECT_OK;
}

/* A measured problem's lines: the sidecars, call times and the GPU that measured it (in `gpu`, its seconds
 * from its start), then its find-db line. */
static int conv_write(FILE *const *f, const char *key, collect_dir dir, collect_conv_measured *m, const char *gpu,
                      double seconds)
{
    if (collect_gpu_table_write(f[CONV_GPU], key, gpu, seconds)) return COLLECT_EIO;
    if (f[CONV_SIDE] && m->n_heur > 0 && sidecar_write(f[CONV_SIDE], key, dir, m->heur_algo, m->heur_math, m->n_heur))
        return COLLECT_EIO;
    if (f[CONV_TIME] && heuristic_time_write(f[CONV_TIME], key, m->heur_math_asked, m->heur_us, m->n_heur)) return COLLECT_EIO;
    for (int c = 0; c < m->n_cls; c++) {
        FILE *fc = f[c == 0 ? CONV_STRICT : CONV_CONVERSION];
        if ((f[CONV_TIME] && heuristic_time_write(f[CONV_TIME], key, collect_precision_math(collect_conv_classes[c]),
                                                  m->cls_us[c], m->cls_n[c])) ||
            (fc && m->cls_n[c] > 0 && sidecar_write(fc, key, dir, m->cls_algo[c], m->cls_math[c], m->cls_n[c])))
            return COLLECT_EIO;
    }
    return collect_fdb_write_line(f[CONV_FDB], key, dir, m->res, m->n_res);
}

/* One worker: its parts, its GPU, the positions the run deals it; its times in *tm. 0, 3 (a CUDA error), 1
 * (another error). */
static int conv_work(conv_job *j, collect_run *run, int *stopped, collect_worker_times *tm)
{
    const char *tag = collect_run_tag(run);
    char part[CONV_FILES][4300];
    FILE *f[CONV_FILES] = {NULL};
    collect_conv_timer t = {0};
    int rc = 1;
    /* the parts of a stopped run: cut off an unfinished line; the failed list is opened when written */
    for (int i = 0; i < CONV_FILES; i++) {
        if (!j->path[i][0]) continue;
        if (collect_part_path(j->path[i], run->worker, part[i], sizeof part[i]) || collect_text_trim(part[i])) goto fail;
        if (i != CONV_FAILED && !(f[i] = fopen(part[i], "a"))) {
            collect_error(COLLECT_EIO, "%s: cannot open for writing", part[i]);
            goto fail;
        }
    }
    char bus[64], gpu[384];
    if (collect_device_bus_id(run->device, bus, sizeof bus)) goto fail;
    collect_run_bind(run, bus);
    collect_run_gpu_columns(run, bus, gpu, sizeof gpu);
    if (collect_conv_timer_open(&t, run->device, &j->opts)) goto fail;
    char line[1024];
    t.describe(&t, line, sizeof line);
    printf("%s%s\n%srepeats %d, >= %.3f ms each; workspace limit %zu MiB\n", tag, line, tag, j->opts.repeats,
           j->opts.min_repeat_ms, j->opts.ws_limit >> 20);
    fflush(stdout);
    cli_tally skipped = {0}, cand = {0};
    int written = 0, pos;
    double longest = 0;
    collect_conv_measured m;
    double t_first = 0;
    rc = 0;
    while ((pos = collect_run_next(run)) >= 0) {
        const char *key = j->keys[j->todo[pos]];
        double t0 = cli_now_s();
        if (t_first == 0) t_first = t0;
        if (j->limit > 0 && t0 - run->t_start + (longest * 2 > 3 ? longest * 2 : 3) > j->limit) {
            *stopped = 1;
            break;
        }
        collect_conv cv;
        if (collect_conv_from_key(key, strlen(key), &cv)) {
            fprintf(stderr, "%sskip: %s\n", tag, collect_last_error());
            cli_tally_add(&skipped, "key not supported");
            continue;
        }
        const char *why = NULL;
        int mr = t.measure(&t, &cv, key, &m, &cand, &why);
        if (mr < 0) {
            fprintf(stderr, "%sheurist-collect conv: %s: %s\n", tag, key, collect_last_error());
            FILE *ff = fopen(part[CONV_FAILED], "a");
            if (ff) {
                fprintf(ff, "%s\n", key);
                fclose(ff);
            }
            collect_run_stop(run);
            rc = 3;
            break;
        }
        if (mr > 0 || m.n_res == 0) {
            cli_tally_add(&skipped, mr > 0 ? why : "no algorithm ran");
            continue;
        }
        double dt = cli_now_s() - t0;
        if (conv_write(f, key, cv.dir, &m, gpu, dt)) goto fail;
        written++;
        if (dt > longest) longest = dt;
        if (written % 100 == 0) {
            printf("%s%d problems written, position %d/%d, %.1f s\n", tag, written, pos + 1, j->n_todo,
                   cli_now_s() - run->t_start);
            fflush(stdout);
        }
    }
    double t_end = cli_now_s();
    *tm = (collect_worker_times){(t_first > 0 ? t_first : t_end) - run->t_began, t_first > 0 ? t_end - t_first : 0, 0, written};
    printf("%s%d problems written, %.1f s (longest problem %.2f s)\n", tag, written, t_end - run->t_start, longest);
    char title[96];
    snprintf(title, sizeof title, "%sproblems skipped", tag);
    cli_tally_print(&skipped, stdout, title);
    snprintf(title, sizeof title, "%scandidates rejected", tag);
    cli_tally_print(&cand, stdout, title);
    fflush(stdout);
    goto cleanup;
fail:
    fprintf(stderr, "%sheurist-collect conv: %s\n", tag, collect_last_error());
    collect_run_stop(run);
    rc = 1;
cleanup:;
    double t_close = cli_now_s();
    if (t.close) t.close(&t);
    for (int i = 0; i < CONV_FILES; i++)
        if (f[i] && fclose(f[i])) rc = 1;
    tm->closing = cli_now_s() - t_close;
    printf("%sworker times: start-up %.2f s, measuring %.2f s (%d problems), closing %.2f s\n", tag, tm->startup,
           tm->measuring, tm->problems, tm->closing);
    fflush(stdout);
    return rc;
}

/* OUT and the files beside it from the parts (and, with --resume, from themselves), then the parts go. */
static int conv_merge(conv_job *j, int *merged)
{
    collect_lines fdb, other;
    conv_lines_init(&fdb, CONV_FDB);
    int written = 0, rc = conv_lines_read(j, CONV_FDB, &fdb);
    *merged = 0;
    if (!rc) rc = collect_lines_merge(j->path[CONV_FDB], j->keys, j->n_keys, &fdb, NULL, merged);
    for (int i = CONV_FDB + 1; !rc && i < CONV_FILES; i++) {
        if (!j->path[i][0]) continue;
        conv_lines_init(&other, i);
        rc = conv_lines_read(j, i, &other);
        if (!rc && i == CONV_FAILED && other.n == 0) remove(j->path[i]);
        else if (!rc) rc = collect_lines_merge(j->path[i], j->keys, j->n_keys, &other, i == CONV_FAILED ? NULL : &fdb, &written);
        collect_lines_free(&other);
    }
    for (int i = 0; !rc && i < CONV_FILES; i++)
        if (j->path[i][0]) rc = collect_parts_remove(j->path[i]);
    collect_lines_free(&fdb);
    return rc;
}

int cmd_conv(int argc, char **argv)
{
    static const char *const known[] = {"--problems", "--out", "--heuristic", "--time-limit", "--repeats",
                                        "--min-repeat-ms", "--workspace-mib", "--gpus", "--chunk", NULL};
    static const char *const flags[] = {"--resume", "--no-bind", NULL};
    if (cli_check(argc, argv, known, flags)) return 2;
    conv_job j;
    memset(&j, 0, sizeof j);
    j.problems = cli_opt(argc, argv, "--problems");
    const char *out = cli_opt(argc, argv, "--out"), *side = cli_opt(argc, argv, "--heuristic");
    double repeats, min_ms, ws_mib, chunk;
    if (cli_number(argc, argv, "--time-limit", 0, 0, 1e9, &j.limit) ||
        cli_number(argc, argv, "--repeats", 5, 1, COLLECT_CONV_MAX_REPEATS, &repeats) ||
        cli_number(argc, argv, "--min-repeat-ms", 0.2, 0, 1e3, &min_ms) ||
        cli_number(argc, argv, "--workspace-mib", 4096, 0, 1 << 20, &ws_mib) ||
        cli_number(argc, argv, "--chunk", 1, 1, 1e6, &chunk))
        return 2;
    j.resume = cli_flag(argc, argv, "--resume");
    j.opts = (collect_conv_opts){(int)repeats, min_ms, (size_t)(ws_mib * 1048576.0), side != NULL};
    if (!j.problems || !out) {
        fprintf(stderr, "heurist-collect conv: --problems and --out are required\n");
        return 2;
    }
    if (strlen(out) + sizeof ".gpu.tsv" > sizeof j.path[0] || (side && strlen(side) >= sizeof j.path[0])) {
        fprintf(stderr, "heurist-collect conv: --out or --heuristic: path too long\n");
        return 2;
    }
    snprintf(j.path[CONV_FDB], sizeof j.path[CONV_FDB], "%s", out);
    snprintf(j.path[CONV_FAILED], sizeof j.path[CONV_FAILED], "%s.failed", out);
    snprintf(j.path[CONV_GPU], sizeof j.path[CONV_GPU], "%s.gpu.tsv", out);
    if (side) {
        snprintf(j.path[CONV_SIDE], sizeof j.path[CONV_SIDE], "%s", side);
        if (collect_sidecar_class_path(side, data_portable_precision_name(DATA_PRECISION_STRICT), ".txt",
                                       j.path[CONV_STRICT], sizeof j.path[CONV_STRICT]) ||
            collect_sidecar_class_path(side, data_portable_precision_name(DATA_PRECISION_CONVERSION), ".txt",
                                       j.path[CONV_CONVERSION], sizeof j.path[CONV_CONVERSION]) ||
            collect_sidecar_class_path(side, "time", ".tsv", j.path[CONV_TIME], sizeof j.path[CONV_TIME])) {
            fprintf(stderr, "heurist-collect conv: %s\n", collect_last_error());
            return 2;
        }
    }
    collect_run run;
    int rc = collect_run_init(&run, "conv", cli_opt(argc, argv, "--gpus"), (int)chunk);
    if (rc) {
        collect_run_free(&run);
        return rc;
    }
    run.bind = !cli_flag(argc, argv, "--no-bind");
    rc = 1;
    int n_todo = -1;
    if (cli_keys_read(j.problems, &j.keys, &j.n_keys) || collect_keys_unique(j.keys, &j.n_keys, NULL))
        fprintf(stderr, "heurist-collect conv: %s\n", collect_last_error());
    else if (collect_run_plans(&run))
        n_todo = conv_plan(&j);
    if (collect_run_share(&run, &j.todo, &n_todo)) goto done;
    j.n_todo = n_todo;
    if (run.workers > 1 && run.merger) printf("%d workers (%s)\n", run.workers, run.mpi ? "MPI ranks" : "--gpus");
    if (collect_run_start(&run, n_todo)) goto done;
    int stopped = 0, wrc = 0;
    collect_worker_times times = {0};
    if (run.worker >= 0 && j.keys) wrc = conv_work(&j, &run, &stopped, &times);
    else if (run.worker >= 0) {
        collect_run_stop(&run); /* this rank could not read the keys */
        wrc = 1;
    }
    collect_run_finish(&run, wrc, stopped, &times);
    if (run.forked) collect_run_exit(&run, wrc);
    if (!run.merger) {
        rc = wrc;
        goto done;
    }
    int merged = 0;
    double t_merge = cli_now_s();
    if (conv_merge(&j, &merged)) {
        fprintf(stderr, "heurist-collect conv: merge: %s\n", collect_last_error());
        rc = 1;
        goto done;
    }
    double el = cli_now_s() - run.t_start;
    int this_run = merged - j.n_before;
    printf("merged: %d problems in %s, %d measured this run by %d worker%s in %.1f s (%.2f problems/s)\n", merged,
           j.path[CONV_FDB], this_run, run.workers, run.workers > 1 ? "s" : "", el, el > 0 ? this_run / el : 0.0);
    collect_run_times_print(&run, this_run, t_merge);
    if (run.job_stopped) printf("stopped by --time-limit with problems left: run again with --resume to continue\n");
    rc = run.job_rc;
done:
    fflush(stdout);
    free(j.todo);
    cli_keys_free(j.keys, j.n_keys);
    collect_run_free(&run);
    return rc;
}
