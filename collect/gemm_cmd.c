/* heurist-collect gemm: times cuBLASLt GEMM configurations for each shape and writes a benchmark table
 * (gemm.h): per shape the union of cuBLASLt's heuristic list and a seeded, bounded sample of the configuration
 * space (timer_cublaslt.c), on one GPU or on several (run.h).
 *
 * Each shape's rows are one gzip member appended and flushed to the worker's part (parts.h) when the shape
 * ends, so a run stopped by --time-limit, --limit or a kill keeps every finished shape; the merge writes the
 * table in the shape list's order when every worker has ended, whatever the number of workers. --resume skips
 * the shapes in the table or in a part (cutting off an unfinished last member). A shape that ends its worker
 * with a CUDA error is listed in OUT.failed, which --resume skips. Shapes are dealt longest first by
 * collect_gemm_shape_cost_s (run.h). Exit status: 0 every shape done; 3 shapes
 * remain (time limit, --limit or a CUDA error: run again with --resume); 1 error; 2 usage. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parts.h"
#include "run.h"
#include "timer.h"

typedef struct gemm_job {
    const char *shapes_path, *out;
    char failed[4200], schema[4200], caps[4200], gpu[4200];
    double limit;
    int resume, limit_shapes;
    collect_gemm_opts opts;
    collect_gemm_shape *shapes;
    char **keys;           /* (n_keys) each shape's problem columns, repeated shapes dropped */
    int n_keys;
    int *todo, n_todo;
    int n_before;          /* shapes in the table or its parts when the run began */
    int cut;               /* --limit left shapes out of this run */
    size_t a_max, b_max, d_max; /* operand bytes of the list's largest shape, for the log */
} gemm_job;

/* The shapes still to measure (see conv_plan); --limit keeps the first N of them. -1 after printing an error. */
static int gemm_plan(gemm_job *j)
{
    collect_members done = {0};
    collect_lines failed = {0};
    char **parts = NULL;
    int n_parts = 0, rc = 0, n_failed = 0;
    if (!j->resume) {
        rc = collect_parts_remove(j->out) || collect_parts_remove(j->failed) || collect_parts_remove(j->gpu);
    } else {
        rc = collect_members_add_file(&done, j->out, NULL) || collect_parts_list(j->out, &parts, &n_parts) ||
             collect_lines_add_file(&failed, j->failed);
        for (int i = 0; !rc && i < n_parts; i++) rc = collect_members_add_file(&done, parts[i], NULL);
        collect_parts_free(parts, n_parts);
        if (!rc && !(rc = collect_parts_list(j->failed, &parts, &n_parts)))
            for (int i = 0; !rc && i < n_parts; i++) rc = collect_lines_add_file(&failed, parts[i]);
        collect_parts_free(parts, n_parts);
    }
    collect_members_index(&done);
    collect_lines_index(&failed);
    if (!rc && !(j->todo = malloc(((size_t)j->n_keys + 1) * sizeof *j->todo))) rc = collect_error(COLLECT_ENOMEM, "out of memory");
    j->n_todo = j->n_before = 0;
    for (int i = 0; !rc && i < j->n_keys; i++) {
        if (collect_members_has(&done, j->keys[i])) j->n_before++;
        else if (collect_lines_has(&failed, j->keys[i])) n_failed++;
        else j->todo[j->n_todo++] = i;
    }
    collect_members_free(&done);
    collect_lines_free(&failed);
    if (rc) {
        fprintf(stderr, "heurist-collect gemm: %s\n", collect_last_error());
        return -1;
    }
    printf("%d shapes in %s: %d already in the output, %d skipped as they ended an earlier run with a CUDA error, "
           "%d to measure", j->n_keys, j->shapes_path, j->n_before, n_failed, j->n_todo);
    if (j->limit_shapes > 0 && j->n_todo > j->limit_shapes) {
        j->n_todo = j->limit_shapes;
        j->cut = 1;
        printf(" (the first %d: --limit)", j->n_todo);
    }
    /* the shapes this run measures, longest first */
    double *cost = malloc(((size_t)j->n_todo + 1) * sizeof *cost), total = 0, longest = 0;
    if (!cost) {
        fprintf(stderr, "\nheurist-collect gemm: out of memory\n");
        return -1;
    }
    for (int i = 0; i < j->n_todo; i++) {
        cost[i] = collect_gemm_shape_cost_s(&j->shapes[j->todo[i]], j->opts.n_enum, j->opts.n_heur);
        total += cost[i];
        if (cost[i] > longest) longest = cost[i];
    }
    rc = collect_deal_order(j->todo, cost, j->n_todo);
    free(cost);
    if (rc) {
        fprintf(stderr, "\nheurist-collect gemm: %s\n", collect_last_error());
        return -1;
    }
    printf(", dealt longest first (estimated %.0f s of measuring in all, the longest %.2f s); candidates: the "
           "heuristic's list (up to %d) + up to %d sampled, seed %llu\n", total, longest, j->opts.n_heur,
           j->opts.n_enum, (unsigned long long)j->opts.seed);
    return j->n_todo;
}

/* One worker (see conv_work); worker 0 also writes the schema and the capability lists. */
static int gemm_work(gemm_job *j, collect_run *run, int *stopped, collect_worker_times *tm)
{
    const char *tag = collect_run_tag(run);
    char part[4200], failed_part[4300], gpu_part[4300], bus[64], gpu[384];
    FILE *gf = NULL;
    collect_gemm_out fo = {0};
    collect_gemm_timer t = {0};
    collect_gemm_capset caps[COLLECT_GEMM_DTYPE_COUNT];
    memset(caps, 0, sizeof caps);
    collect_gemm_row *rows = malloc(COLLECT_GEMM_MAX_CANDIDATES * sizeof *rows);
    int rc = 1;
    long good = 0;
    collect_members prev = {0};
    if (!rows) {
        collect_error(COLLECT_ENOMEM, "out of memory");
        goto fail;
    }
    if (collect_part_path(j->out, run->worker, part, sizeof part) ||
        collect_part_path(j->failed, run->worker, failed_part, sizeof failed_part) ||
        collect_part_path(j->gpu, run->worker, gpu_part, sizeof gpu_part) || collect_text_trim(gpu_part))
        goto fail;
    if (!(gf = fopen(gpu_part, "a"))) {
        collect_error(COLLECT_EIO, "%s: cannot open for writing", gpu_part);
        goto fail;
    }
    if (collect_device_bus_id(run->device, bus, sizeof bus)) goto fail;
    collect_run_bind(run, bus);
    collect_run_gpu_columns(run, bus, gpu, sizeof gpu);
    /* a part left by a stopped run: keep its finished members, cut off an unfinished one */
    int scan = collect_members_add_file(&prev, part, &good);
    collect_members_free(&prev);
    if (scan || collect_gemm_out_open(&fo, part, good)) goto fail;
    if (collect_gemm_timer_open(&t, run->device, &j->opts)) goto fail;
    char line[1024], gpu_name[256];
    int sms = 0;
    t.describe(&t, line, sizeof line, gpu_name, sizeof gpu_name, &sms);
    printf("%s%s\n", tag, line);
    if (run->worker == 0)
        printf("timing: 1 warm-up, median of %d batches of B calls (B: batch >= %.0f us, at most %d) behind a spin; "
               "a warm-up > %gx the best so far: single time; L2 not flushed; workspace %zu MiB; operand buffers "
               "grown to the largest shape a worker measures (the list's largest: A %zu MiB, B %zu MiB, D %zu MiB)\n",
               j->opts.repeats, j->opts.min_batch_us, j->opts.max_batch, j->opts.slow_factor, j->opts.ws_bytes >> 20,
               j->a_max >> 20, j->b_max >> 20, j->d_max >> 20);
    for (int d = 0; d < COLLECT_GEMM_DTYPE_COUNT; d++) {
        if (t.caps(&t, (collect_gemm_dtype)d, &caps[d])) goto fail;
        int tiles = 0;
        for (int a = 0; a < caps[d].n_algos; a++) tiles += caps[d].algos[a].n_tiles;
        if (run->worker == 0)
            printf("%s: %d algorithm ids, %d tiles over them\n", collect_gemm_dtype_name((collect_gemm_dtype)d),
                   caps[d].n_algos, tiles);
    }
    fflush(stdout);
    if (run->worker == 0 && (collect_gemm_schema_write(j->schema, sms) ||
                             collect_gemm_caps_write(j->caps, gpu_name, t.library_version(&t), caps, COLLECT_GEMM_DTYPE_COUNT)))
        goto fail;
    cli_tally skipped = {0};
    int written = 0, pos;
    long timed = 0;
    double longest = 0, t_first = 0;
    rc = 0;
    while ((pos = collect_run_next(run)) >= 0) {
        int i = j->todo[pos];
        const collect_gemm_shape *s = &j->shapes[i];
        const char *key = j->keys[i];
        double t0 = cli_now_s();
        if (t_first == 0) t_first = t0;
        if (j->limit > 0 && t0 - run->t_start + (longest * 2 > 3 ? longest * 2 : 3) > j->limit) {
            *stopped = 1;
            break;
        }
        int nr = 0, nc = 0;
        const char *why = NULL;
        int mr = t.measure(&t, s, key, &caps[s->dtype], rows, &nr, &nc, &why);
        if (mr < 0) {
            fprintf(stderr, "%sheurist-collect gemm: %s: %s\n", tag, key, collect_last_error());
            FILE *ff = fopen(failed_part, "a");
            if (ff) {
                fprintf(ff, "%s=%s\n", key, collect_last_error());
                fclose(ff);
            }
            collect_run_stop(run);
            rc = 3;
            break;
        }
        if (mr > 0) {
            fprintf(stderr, "%sskip %s: %s\n", tag, key, why);
            cli_tally_add(&skipped, why);
            continue;
        }
        double dt = cli_now_s() - t0;
        /* the shape is done once its member is written; its GPU line follows it */
        if (collect_gemm_out_write(&fo, s, rows, nr) || collect_gpu_table_write(gf, key, gpu, dt)) goto fail;
        written++;
        timed += nr;
        double now = cli_now_s();
        if (dt > longest) longest = dt;
        if (j->opts.verbose || written % 25 == 0) {
            double best = rows[0].time_us, heur0 = 0;
            for (int k = 0; k < nr; k++) {
                if (rows[k].time_us < best) best = rows[k].time_us;
                if (rows[k].heuristic_rank == 0) heur0 = rows[k].time_us;
            }
            fprintf(stderr, "%sshape %d/%d (%s): %d candidates, %d timed, best %.2f us, heuristic pick %.2f us, %.2f s; "
                            "this worker %d shapes, %ld candidates timed, elapsed %.0f s\n",
                    tag, pos + 1, j->n_todo, key, nc, nr, best, heur0, dt, written, timed, now - run->t_start);
        }
    }
    double t_end = cli_now_s();
    *tm = (collect_worker_times){(t_first > 0 ? t_first : t_end) - run->t_began, t_first > 0 ? t_end - t_first : 0, 0, written};
    printf("%s%d shapes written, %.1f s (longest shape %.2f s)\n", tag, written, t_end - run->t_start, longest);
    char title[96];
    snprintf(title, sizeof title, "%sshapes skipped", tag);
    cli_tally_print(&skipped, stdout, title);
    if (*tag) printf("%stimer's tallies:\n", tag);
    t.print_stats(&t, stdout);
    fflush(stdout);
    goto cleanup;
fail:
    fprintf(stderr, "%sheurist-collect gemm: %s\n", tag, collect_last_error());
    collect_run_stop(run);
    rc = 1;
cleanup:;
    double t_close = cli_now_s();
    if (collect_gemm_out_close(&fo)) {
        fprintf(stderr, "%sheurist-collect gemm: %s\n", tag, collect_last_error());
        rc = 1;
    }
    if (t.close) t.close(&t);
    if (gf && fclose(gf)) rc = 1;
    for (int d = 0; d < COLLECT_GEMM_DTYPE_COUNT; d++) collect_gemm_capset_free(&caps[d]);
    free(rows);
    tm->closing = cli_now_s() - t_close;
    printf("%sworker times: start-up %.2f s, measuring %.2f s (%d shapes), closing %.2f s\n", tag, tm->startup,
           tm->measuring, tm->problems, tm->closing);
    fflush(stdout);
    return rc;
}

/* The table and OUT.failed from the parts (and, with --resume, from themselves), then the parts go. */
static int gemm_merge(gemm_job *j, int *merged)
{
    collect_members table = {0};
    collect_lines failed = {0};
    char **parts = NULL;
    int n_parts = 0, written = 0;
    *merged = 0;
    int rc = j->resume ? collect_members_add_file(&table, j->out, NULL) : 0;
    if (!rc && !(rc = collect_parts_list(j->out, &parts, &n_parts)))
        for (int i = 0; !rc && i < n_parts; i++) rc = collect_members_add_file(&table, parts[i], NULL);
    collect_parts_free(parts, n_parts);
    collect_members_index(&table);
    if (!rc) rc = collect_members_merge(j->out, j->keys, j->n_keys, &table, merged);
    if (!rc) {
        rc = j->resume ? collect_lines_add_file(&failed, j->failed) : 0;
        if (!rc && !(rc = collect_parts_list(j->failed, &parts, &n_parts)))
            for (int i = 0; !rc && i < n_parts; i++) rc = collect_lines_add_file(&failed, parts[i]);
        collect_parts_free(parts, n_parts);
        collect_lines_index(&failed);
        if (!rc && failed.n > 0) rc = collect_lines_merge(j->failed, j->keys, j->n_keys, &failed, NULL, &written);
        else if (!rc) remove(j->failed);
    }
    if (!rc) {
        collect_lines gpu = {.sep = '\t', .header = collect_gpu_table_header};
        rc = j->resume ? collect_lines_add_file(&gpu, j->gpu) : 0;
        if (!rc && !(rc = collect_parts_list(j->gpu, &parts, &n_parts)))
            for (int i = 0; !rc && i < n_parts; i++) rc = collect_lines_add_file(&gpu, parts[i]);
        collect_parts_free(parts, n_parts);
        collect_lines_index(&gpu);
        if (!rc) rc = collect_lines_merge(j->gpu, j->keys, j->n_keys, &gpu, NULL, &written);
        collect_lines_free(&gpu);
    }
    if (!rc) rc = collect_parts_remove(j->out) || collect_parts_remove(j->failed) || collect_parts_remove(j->gpu);
    collect_members_free(&table);
    collect_lines_free(&failed);
    return rc;
}

static int gemm_describe(const collect_gemm_opts *o)
{
    collect_gemm_timer t;
    if (collect_gemm_timer_open(&t, 0, o)) {
        fprintf(stderr, "heurist-collect gemm: %s\n", collect_last_error());
        return 1;
    }
    char line[1024], name[256];
    int sms;
    t.describe(&t, line, sizeof line, name, sizeof name, &sms);
    printf("%s\n", line);
    t.close(&t);
    return 0;
}

int cmd_gemm(int argc, char **argv)
{
    static const char *const known[] = {"--shapes", "--out", "--time-limit", "--limit", "--candidates",
                                        "--heuristic-count", "--repeats", "--min-batch-us", "--max-batch",
                                        "--workspace-mib", "--slow-factor", "--seed", "--gpus", "--chunk", NULL};
    static const char *const flags[] = {"--resume", "--verbose", "--describe", "--no-bind", NULL};
    if (cli_check(argc, argv, known, flags)) return 2;
    gemm_job j;
    memset(&j, 0, sizeof j);
    j.shapes_path = cli_opt(argc, argv, "--shapes");
    j.out = cli_opt(argc, argv, "--out");
    double max_shapes, n_enum, n_heur, repeats, min_batch, max_batch, ws_mib, slow, seed, chunk;
    if (cli_number(argc, argv, "--time-limit", 0, 0, 1e9, &j.limit) ||
        cli_number(argc, argv, "--limit", 0, 0, 1e9, &max_shapes) ||
        cli_number(argc, argv, "--candidates", 64, 0, 900, &n_enum) ||
        cli_number(argc, argv, "--heuristic-count", 32, 1, 64, &n_heur) ||
        cli_number(argc, argv, "--repeats", 3, 1, COLLECT_GEMM_MAX_REPEATS, &repeats) ||
        cli_number(argc, argv, "--min-batch-us", 100, 0, 1e6, &min_batch) ||
        cli_number(argc, argv, "--max-batch", 64, 1, 1e4, &max_batch) ||
        cli_number(argc, argv, "--workspace-mib", 32, 0, 1 << 16, &ws_mib) ||
        cli_number(argc, argv, "--slow-factor", 5, 1, 1e6, &slow) ||
        cli_number(argc, argv, "--seed", 0, 0, 1e15, &seed) ||
        cli_number(argc, argv, "--chunk", 1, 1, 1e6, &chunk))
        return 2;
    j.resume = cli_flag(argc, argv, "--resume");
    j.limit_shapes = (int)max_shapes;
    j.opts = (collect_gemm_opts){(int)n_enum, (int)n_heur, cli_flag(argc, argv, "--verbose"), (uint64_t)seed,
                                 (int)repeats, (int)max_batch, min_batch, slow, (size_t)(ws_mib * 1048576.0), 0, 0, 0};
    if (cli_flag(argc, argv, "--describe")) return gemm_describe(&j.opts);
    if (!j.shapes_path || !j.out) {
        fprintf(stderr, "heurist-collect gemm: --shapes and --out are required\n");
        return 2;
    }
    snprintf(j.failed, sizeof j.failed, "%s.failed", j.out);
    if (collect_gemm_sidecar_path(j.out, ".schema.json", j.schema, sizeof j.schema) ||
        collect_gemm_sidecar_path(j.out, ".caps.json", j.caps, sizeof j.caps) ||
        collect_gemm_sidecar_path(j.out, ".gpu.tsv", j.gpu, sizeof j.gpu)) {
        fprintf(stderr, "heurist-collect gemm: %s\n", collect_last_error());
        return 2;
    }
    collect_run run;
    int rc = collect_run_init(&run, "gemm", cli_opt(argc, argv, "--gpus"), (int)chunk);
    if (rc) {
        collect_run_free(&run);
        return rc;
    }
    run.bind = !cli_flag(argc, argv, "--no-bind");
    rc = 1;
    int n_todo = -1, n_shapes = 0, *kept = NULL, keys_ok = 0;
    if (!collect_gemm_shapes_read(j.shapes_path, &j.shapes, &n_shapes)) {
        kept = malloc(((size_t)n_shapes + 1) * sizeof *kept);
        j.keys = calloc((size_t)n_shapes + 1, sizeof *j.keys);
        keys_ok = kept && j.keys;
        for (int i = 0; keys_ok && i < n_shapes; i++) {
            char key[128];
            keys_ok = !collect_gemm_shape_key(&j.shapes[i], key, sizeof key) && (j.keys[i] = strdup(key)) != NULL;
            j.n_keys += keys_ok;
        }
        if (!keys_ok) collect_error(COLLECT_ENOMEM, "out of memory");
        /* a shape listed twice is measured once, at its first place */
        if (keys_ok && !(keys_ok = !collect_keys_unique(j.keys, &j.n_keys, kept)))
            collect_error(COLLECT_ENOMEM, "out of memory");
        for (int i = 0; keys_ok && i < j.n_keys; i++) j.shapes[i] = j.shapes[kept[i]];
    }
    free(kept);
    for (int i = 0; keys_ok && i < j.n_keys; i++) {
        size_t a, b, d;
        collect_gemm_shape_bytes(&j.shapes[i], &a, &b, &d);
        j.a_max = a > j.a_max ? a : j.a_max;
        j.b_max = b > j.b_max ? b : j.b_max;
        j.d_max = d > j.d_max ? d : j.d_max;
    }
    if (!keys_ok) fprintf(stderr, "heurist-collect gemm: %s\n", collect_last_error());
    else if (collect_run_plans(&run)) n_todo = gemm_plan(&j);
    if (collect_run_share(&run, &j.todo, &n_todo)) goto done;
    j.n_todo = n_todo;
    if (run.workers > 1 && run.merger) printf("%d workers (%s)\n", run.workers, run.mpi ? "MPI ranks" : "--gpus");
    if (collect_run_start(&run, n_todo)) goto done;
    int stopped = 0, wrc = 0;
    collect_worker_times times = {0};
    if (run.worker >= 0 && keys_ok) wrc = gemm_work(&j, &run, &stopped, &times);
    else if (run.worker >= 0) {
        collect_run_stop(&run); /* this rank could not read the shapes */
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
    if (gemm_merge(&j, &merged)) {
        fprintf(stderr, "heurist-collect gemm: merge: %s\n", collect_last_error());
        rc = 1;
        goto done;
    }
    double el = cli_now_s() - run.t_start;
    int this_run = merged - j.n_before;
    printf("merged: %d shapes in %s, %d measured this run by %d worker%s in %.1f s (%.2f shapes/s)\n", merged, j.out,
           this_run, run.workers, run.workers > 1 ? "s" : "", el, el > 0 ? this_run / el : 0.0);
    collect_run_times_print(&run, this_run, t_merge);
    if (run.job_stopped || j.cut) printf("stopped by --time-limit or --limit: run again with --resume to continue\n");
    rc = run.job_rc ? run.job_rc : run.job_stopped || j.cut ? 3 : 0;
done:
    fflush(stdout);
    free(j.todo);
    free(j.shapes);
    cli_keys_free(j.keys, j.n_keys);
    collect_run_free(&run);
    return rc;
}
