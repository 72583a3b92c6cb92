/* collect: heurist-collect conv and gemm over several workers (--gpus with the fake timer's devices, and
 * mpirun -np 2 where CMake finds MPI and its launcher) write, once merged, the file one worker writes, byte
 * for byte, in the key list's order; problems are dealt longest first; a killed or failing worker keeps its
 * finished problems and --resume completes the same file; the GPU table (OUT.gpu.tsv) names the worker and GPU
 * of each problem in the output's order; workers bind to their GPU's CPUs from a fake sysfs tree, or not
 * with --no-bind; the part files and the merge (parts.h) and the dealing order and chunks (run.h) on their
 * own. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "collect.h"
#include "gemm.h"
#include "helpers/testutil.h"
#include "parts.h"
#include "run.h"

static void assert_same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = test_file_read(a, &la), *y = test_file_read(b, &lb);
    cr_assert_not_null(x, "%s missing", a);
    cr_assert_not_null(y, "%s missing", b);
    cr_assert(la > 0, "%s is empty", a);
    cr_assert(la == lb && memcmp(x, y, la) == 0, "%s (%zu bytes) and %s (%zu bytes) differ", a, la, b, lb);
    free(x);
    free(y);
}

/* Runs "env heurist-collect args" (ranks 0) or under "mpirun -np ranks"; *out gets stdout and stderr. */
static int collect_run_cmd(const char *env, int ranks, const char *args, char **out)
{
    char cmd[8192];
    int n = -1;
    if (ranks > 0) {
#ifdef HEURIST_MPIEXEC
        n = snprintf(cmd, sizeof cmd,
                     "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" OMPI_ALLOW_RUN_AS_ROOT=1 "
                     "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s timeout 120 %s -np %d --oversubscribe %s %s 2>&1",
                     env, HEURIST_MPIEXEC, ranks, HEURIST_COLLECT_BINARY, args);
#else
        cr_assert_fail("no MPI launcher");
#endif
    } else {
        n = snprintf(cmd, sizeof cmd, "%s timeout 120 %s %s 2>&1", env, HEURIST_COLLECT_BINARY, args);
    }
    /* a cut command would run something else than the test means */
    cr_assert(n >= 0 && (size_t)n < sizeof cmd, "the command does not fit in %zu bytes: %s", sizeof cmd, args);
    return test_run_shell(cmd, out);
}

/* n convolution keys of every direction and data type (two of them repeated: measured once) */
static char *conv_keys_write(int n)
{
    static const int chans[] = {3, 16, 32, 64, 96}, sizes[] = {7, 14, 28, 56}, outs[] = {16, 32, 64, 128};
    static const char *dirs[] = {"F", "B", "W"}, *types[] = {"FP32", "FP16", "BF16"};
    size_t cap = (size_t)n * 80 + 256, len = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    len += (size_t)snprintf(text + len, cap - len, "# keys\n");
    for (int i = 0; i < n; i++) {
        int c = chans[i % 5], h = sizes[(i / 5) % 4], k = outs[(i / 20) % 4], f = i % 2 ? 3 : 1, p = f / 2;
        len += (size_t)snprintf(text + len, cap - len, "%d-%d-%d-%dx%d-%d-%d-%d-%d-%dx%d-1x1-1x1-0-NCHW-%s-%s\n", c, h, h,
                                f, f, k, h, h, 1 + i / 80, p, p, types[(i / 3) % 3], dirs[i % 3]);
    }
    len += (size_t)snprintf(text + len, cap - len, "3-7-7-1x1-16-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F\n");
    len += (size_t)snprintf(text + len, cap - len, "3-7-7-1x1-16-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F\n");
    char *path = test_tmpfile(".keys.txt", text, len);
    free(text);
    return path;
}

/* The n-th line (1-based) of a file, malloc'd without its newline. */
static char *key_line(const char *path, int n)
{
    char *text = test_file_read(path, NULL), *line = text;
    cr_assert_not_null(text);
    for (int i = 1; i < n && line; i++) line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    cr_assert(line && *line, "%s has fewer than %d lines", path, n);
    char *key = strndup(line, strcspn(line, "\n"));
    free(text);
    return key;
}

static char *gemm_shapes_write(void)
{
    static const char text[] = "# shapes\n4096 4096 4096 bf16 N T\n1024 512 256 fp16 N N\n128 128 64 fp32 T N\n"
                               "4096 11008 4096 bf16 N T\n256 256 256 tf32 N N\n1024 512 256 fp16 N N\n"
                               "64 64 64 bf16 T T\n2048 1024 512 fp32 N N\n512 2048 128 fp16 T N\n"
                               "8192 128 1024 bf16 N N\n96 96 96 tf32 T T\n1536 1536 64 fp32 N T\n";
    return test_tmpfile(".shapes.txt", text, sizeof text - 1);
}

/* "<out>" with a suffix, malloc'd */
static char *with(const char *out, const char *suffix)
{
    size_t n = strlen(out) + strlen(suffix) + 1;
    char *p = malloc(n);
    snprintf(p, n, "%s%s", out, suffix);
    return p;
}

/* Collects keys into a fresh OUT.fdb.txt (+ OUT.side.txt) with env and extra arguments; the exit status. */
static int conv_collect(const char *env, int ranks, const char *keys, const char *out, const char *extra, char **log)
{
    char args[4096];
    snprintf(args, sizeof args, "conv --problems %s --out %s.fdb.txt --heuristic %s.side.txt %s", keys, out, out, extra);
    return collect_run_cmd(env, ranks, args, log);
}

static int gemm_collect(const char *env, int ranks, const char *shapes, const char *out, const char *extra, char **log)
{
    char args[4096];
    snprintf(args, sizeof args, "gemm --shapes %s --out %s.csv.gz --candidates 24 %s", shapes, out, extra);
    return collect_run_cmd(env, ranks, args, log);
}

/* The find-db, the heuristic sidecar, the precision classes' sidecars and the heuristic call times */
static void assert_same_conv(const char *a, const char *b)
{
    static const char *const files[] = {".fdb.txt", ".side.txt", ".side.strict.txt", ".side.conversion.txt",
                                        ".side.time.tsv"};
    for (int i = 0; i < 5; i++) {
        char *fa = with(a, files[i]), *fb = with(b, files[i]);
        assert_same_file(fa, fb);
        free(fa);
        free(fb);
    }
}

static void assert_no_parts(const char *base)
{
    char **paths;
    int n;
    cr_assert_eq(collect_parts_list(base, &paths, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 0, "%s: %d parts left after the merge", base, n);
    collect_parts_free(paths, n);
}

/* A merge keeps the key list's order: every line of `part` appears in `whole`, in the same order. */
static void assert_ordered_subset(const char *part_path, const char *whole_path)
{
    char *part = test_file_read(part_path, NULL), *whole = test_file_read(whole_path, NULL);
    cr_assert(part && whole);
    const char *at = whole;
    int lines = 0;
    for (char *line = strtok(part, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        const char *hit = strstr(at, line);
        cr_assert_not_null(hit, "line %d of %s is not in %s after the previous one", lines + 1, part_path, whole_path);
        at = hit + strlen(line);
    }
    cr_assert_gt(lines, 0, "%s kept no finished problem", part_path);
    free(part);
    free(whole);
}

/* Removes what a collection into base wrote. */
static void cleanup(const char *base)
{
    static const char *const files[] = {".fdb.txt", ".fdb.txt.failed", ".side.txt", ".side.strict.txt",
                                        ".side.conversion.txt", ".side.time.tsv", ".csv.gz", ".csv.gz.failed",
                                        ".schema.json", ".caps.json", ".fdb.txt.gpu.tsv", ".gpu.tsv"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *p = with(base, files[i]);
        remove(p);
        collect_parts_remove(p);
        free(p);
    }
}

/* The GPU table gpu_path: its header, then one line a problem, with the keys of `keys` (NULL: not checked)
 * in their order; each measured by a worker below `workers` on the fake GPU of its index (forked workers:
 * worker w binds GPU w) with that device's bus id, in a time >= 0. Returns the number of distinct workers. */
static int assert_gpu_table(const char *gpu_path, char **keys, int n_keys, int workers)
{
    char *text = test_file_read(gpu_path, NULL);
    cr_assert_not_null(text, "%s missing", gpu_path);
    cr_assert(strncmp(text, collect_gpu_table_header, strlen(collect_gpu_table_header)) == 0, "%s: header", gpu_path);
    int seen[64] = {0}, n = 0, distinct = 0;
    char *save = NULL;
    for (char *line = strtok_r(text + strlen(collect_gpu_table_header), "\n", &save); line;
         line = strtok_r(NULL, "\n", &save), n++) {
        char key[512], host[256], bus[64];
        int worker, gpu;
        double seconds;
        cr_assert_eq(sscanf(line, "%511[^\t]\t%d\t%255[^\t]\t%d\t%63[^\t]\t%lf", key, &worker, host, &gpu, bus, &seconds), 6,
                     "%s: line %d: %s", gpu_path, n + 2, line);
        if (keys) {
            cr_assert_lt(n, n_keys, "%s: more lines than the output's %d problems", gpu_path, n_keys);
            cr_assert_str_eq(key, keys[n], "%s: line %d", gpu_path, n + 2);
        }
        cr_assert(worker >= 0 && worker < workers && gpu == worker, "%s: line %d: worker %d, GPU %d", gpu_path, n + 2,
                  worker, gpu);
        char want[32];
        snprintf(want, sizeof want, "0000:%02x:00.0", gpu + 1);
        cr_assert_str_eq(bus, want, "%s: line %d", gpu_path, n + 2);
        cr_assert_geq(seconds, 0.0);
        if (!seen[worker]++) distinct++;
    }
    if (keys) cr_assert_eq(n, n_keys, "%s: %d lines for %d problems", gpu_path, n, n_keys);
    free(text);
    return distinct;
}

static char **lines_of(const char *path, char cut, int *n);
static void lines_free(char **l, int n);

/* The GPU table of a conv collection into base lists its find-db's keys; the distinct workers. */
static int assert_conv_gpu_table(const char *base, int workers)
{
    char *fdb = with(base, ".fdb.txt"), *gpu = with(base, ".fdb.txt.gpu.tsv");
    int n;
    char **keys = lines_of(fdb, '=', &n);
    int distinct = assert_gpu_table(gpu, keys, n, workers);
    lines_free(keys, n);
    free(fdb);
    free(gpu);
    return distinct;
}

#define FAKE4 "HEURIST_COLLECT_FAKE=4"
#define FAKE4_SLOW "HEURIST_COLLECT_FAKE=4 HEURIST_COLLECT_FAKE_US=300"
/* GEMM shapes are few (10): each candidate held 2 ms, so that the first worker to start cannot measure them all
 * before the others have started, even under the sanitizers on a loaded machine */
#define FAKE4_SLOW_GEMM "HEURIST_COLLECT_FAKE=4 HEURIST_COLLECT_FAKE_US=2000"

Test(collect_run, conv_two_and_four_workers_equal_one, .timeout = 120)
{
    char *keys = conv_keys_write(150), *one = test_tmppath(""), *two = test_tmppath(""), *four = test_tmppath(""), *log;
    cr_assert_eq(conv_collect(FAKE4, 0, keys, one, "", &log), 0, "%s", log);
    cr_assert(strstr(log, "merged: ") && strstr(log, "fake: problem refused"), "%s", log);
    free(log);
    cr_assert_eq(conv_collect(FAKE4_SLOW, 0, keys, two, "--gpus 2", &log), 0, "%s", log);
    cr_assert(strstr(log, "[worker 1/2]") && strstr(log, "by 2 workers"), "%s", log);
    free(log);
    cr_assert_eq(conv_collect(FAKE4_SLOW, 0, keys, four, "--gpus all --chunk 3", &log), 0, "%s", log);
    cr_assert(strstr(log, "by 4 workers"), "%s", log);
    free(log);
    assert_same_conv(one, two);
    assert_same_conv(one, four);
    cr_assert_eq(assert_conv_gpu_table(one, 1), 1);
    cr_assert_eq(assert_conv_gpu_table(two, 2), 2);
    cr_assert_geq(assert_conv_gpu_table(four, 4), 3, "four workers, 150 problems of 0.3 ms each");
    char *fdb = with(four, ".fdb.txt");
    assert_no_parts(fdb);
    free(fdb);
    remove(keys);
    free(keys);
    cleanup(one);
    free(one);
    cleanup(two);
    free(two);
    cleanup(four);
    free(four);
}

Test(collect_run, gemm_three_workers_equal_one, .timeout = 120)
{
    char *shapes = gemm_shapes_write(), *one = test_tmppath(""), *three = test_tmppath(""), *log;
    cr_assert_eq(gemm_collect(FAKE4, 0, shapes, one, "", &log), 0, "%s", log);
    free(log);
    cr_assert_eq(gemm_collect(FAKE4_SLOW_GEMM, 0, shapes, three, "--gpus 3", &log), 0, "%s", log);
    cr_assert(strstr(log, "by 3 workers"), "%s", log);
    free(log);
    char *ta = with(one, ".csv.gz"), *tb = with(three, ".csv.gz"), *ca = with(one, ".caps.json"),
         *cb = with(three, ".caps.json"), *sa = with(one, ".schema.json"), *sb = with(three, ".schema.json");
    assert_same_file(ta, tb);
    assert_same_file(ca, cb);
    assert_same_file(sa, sb);
    /* the merged table is the one collect_gemm_measured_read reads: every distinct shape but the refused */
    collect_gemm_measured *m;
    int n;
    cr_assert_eq(collect_gemm_measured_read(tb, &m, &n), 0, "%s", collect_last_error());
    cr_assert(n >= 9 && n <= 11, "%d shapes", n);
    /* a GPU line a shape of the table, in the shape list's order (the first shape is the list's first) */
    char *ga = with(one, ".gpu.tsv"), *gb = with(three, ".gpu.tsv"), *first = with("4096,4096,4096,bf16,N,T", "");
    cr_assert_eq(assert_gpu_table(ga, NULL, 0, 1), 1);
    cr_assert_geq(assert_gpu_table(gb, NULL, 0, 3), 2);
    int n_gpu;
    char **gpu_keys = lines_of(gb, '\t', &n_gpu);
    cr_assert_eq(n_gpu, n + 1, "%d GPU lines (header included) for %d shapes", n_gpu, n);
    cr_assert_str_eq(gpu_keys[1], first);
    lines_free(gpu_keys, n_gpu);
    free(first);
    free(ga);
    free(gb);
    collect_gemm_measured_free(m, n);
    assert_no_parts(tb);
    free(ta);
    free(tb);
    free(ca);
    free(cb);
    free(sa);
    free(sb);
    remove(shapes);
    free(shapes);
    cleanup(one);
    free(one);
    cleanup(three);
    free(three);
}

/* Strided batched shapes: their own problems beside the single GEMM of the same sizes, drawn from the algorithm
 * that lists strided batch support (the fake timer's id 1), keyed with their batch; a resumed run finds them done,
 * and a table without the batch column is refused as an output to resume. */
Test(collect_run, gemm_batched_shapes_are_problems_of_their_own, .timeout = 60)
{
    static const char text[] = "128 128 64 bf16 T N\n128 128 64 bf16 T N 32  # attn\n512 64 2048 bf16 N N 8\n";
    char *shapes = test_tmpfile(".shapes.txt", text, sizeof text - 1), *out = test_tmppath(""), *log;
    cr_assert_eq(gemm_collect(FAKE4, 0, shapes, out, "", &log), 0, "%s", log);
    free(log);
    char *table = with(out, ".csv.gz"), *gpu = with(out, ".gpu.tsv");
    collect_gemm_measured *m;
    int n;
    cr_assert_eq(collect_gemm_measured_read(table, &m, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 3);
    cr_assert(m[0].s.batch == 1 && m[1].s.batch == 32 && m[2].s.batch == 8 && m[1].s.m == 128 && m[2].s.k == 2048);
    for (int i = 1; i < 3; i++)
        for (int r = 0; r < m[i].n; r++)
            cr_assert_eq(m[i].rows[r].cfg.algo_id, 1, "a batched shape drew algorithm %d", m[i].rows[r].cfg.algo_id);
    int algo2 = 0;
    for (int r = 0; r < m[0].n; r++) algo2 += m[0].rows[r].cfg.algo_id == 2;
    cr_assert_gt(algo2, 0, "the single GEMM draws from both algorithms");
    collect_gemm_measured_free(m, n);
    int n_gpu;
    char **keys = lines_of(gpu, '\t', &n_gpu);
    cr_assert_eq(n_gpu, 4);
    cr_assert_str_eq(keys[1], "128,128,64,bf16,T,N");
    cr_assert_str_eq(keys[2], "128,128,64,bf16,T,N,32");
    cr_assert_str_eq(keys[3], "512,64,2048,bf16,N,N,8");
    lines_free(keys, n_gpu);
    cr_assert_eq(gemm_collect(FAKE4, 0, shapes, out, "--resume", &log), 0, "%s", log);
    cr_assert(strstr(log, "3 already in the output"), "%s", log);
    free(log);
    /* an output without the batch column */
    gzFile gz = gzopen(table, "wb");
    gzputs(gz, collect_gemm_csv_header_unbatched());
    gzclose(gz);
    cr_assert_eq(gemm_collect(FAKE4, 0, shapes, out, "--resume", &log), 1, "%s", log);
    cr_assert(strstr(log, "without the batch column: collect into a new file"), "%s", log);
    free(log);
    free(table);
    free(gpu);
    remove(shapes);
    free(shapes);
    cleanup(out);
    free(out);
}

/* FP8 shapes: those cuBLASLt runs (TN, sizes multiples of 16) are collected, the others skipped with the reason
 * (the fake timer refuses them as cuBLASLt on sm_90 does); the capability file lists the fp8e4m3 data type. */
Test(collect_run, gemm_fp8_shapes_collected_or_skipped_with_the_reason, .timeout = 60)
{
    static const char text[] = "512 256 1024 fp8e4m3 T N\n512 256 1024 fp8e4m3 N T\n500 256 1024 fp8e4m3 T N\n"
                               "512 256 1024 fp8e4m3 T N 4\n";
    char *shapes = test_tmpfile(".shapes.txt", text, sizeof text - 1), *out = test_tmppath(""), *log;
    cr_assert_eq(gemm_collect(FAKE4, 0, shapes, out, "", &log), 0, "%s", log);
    cr_assert(strstr(log, "skip 512,256,1024,fp8e4m3,N,T: fake: cuBLASLt offers no configuration (FP8 runs TN"), "%s", log);
    cr_assert(strstr(log, "skip 500,256,1024,fp8e4m3,T,N: fake: cuBLASLt offers no configuration"), "%s", log);
    free(log);
    char *table = with(out, ".csv.gz"), *caps = with(out, ".caps.json");
    collect_gemm_measured *m;
    int n;
    cr_assert_eq(collect_gemm_measured_read(table, &m, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 2);
    cr_assert(m[0].s.dtype == COLLECT_GEMM_FP8E4M3 && m[0].s.batch == 1 && m[1].s.batch == 4);
    cr_assert_gt(m[0].n, 0);
    collect_gemm_measured_free(m, n);
    char *json = test_file_read(caps, NULL);
    cr_assert(json && strstr(json, "\"dtype\": \"fp8e4m3\""), "%s", json ? json : "no caps file");
    free(json);
    free(table);
    free(caps);
    remove(shapes);
    free(shapes);
    cleanup(out);
    free(out);
}

/* The lines of a file, malloc'd, each without its newline and cut at cut (when not 0); *n their count. */
static char **lines_of(const char *path, char cut, int *n)
{
    char *text = test_file_read(path, NULL);
    cr_assert_not_null(text, "%s missing", path);
    int cap = 64;
    char **out = malloc((size_t)cap * sizeof *out);
    *n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        if (*n == cap) out = realloc(out, (size_t)(cap *= 2) * sizeof *out);
        out[(*n)++] = strndup(line, cut && strchr(line, cut) ? (size_t)(strchr(line, cut) - line) : strlen(line));
    }
    free(text);
    return out;
}

static void lines_free(char **l, int n)
{
    for (int i = 0; i < n; i++) free(l[i]);
    free(l);
}

/* The keys of `sub` appear in `list` in the same order. */
static void assert_subsequence(char **sub, int n_sub, char **list, int n_list, const char *what)
{
    int at = 0;
    for (int i = 0; i < n_sub; i++) {
        while (at < n_list && strcmp(list[at], sub[i]) != 0) at++;
        cr_assert_lt(at, n_list, "%s: key %d (%s) is out of the key list's order", what, i, sub[i]);
        at++;
    }
}

static double conv_cost(const char *key)
{
    collect_conv cv;
    cr_assert_eq(collect_conv_from_key(key, strlen(key), &cv), 0, "%s", collect_last_error());
    return collect_conv_cost_s(&cv);
}

static double gemm_cost(const char *key)
{
    collect_gemm_shape s;
    char line[256];
    snprintf(line, sizeof line, "%s", key);
    for (char *c = line; *c; c++)
        if (*c == ',') *c = ' ';
    cr_assert_eq(collect_gemm_shape_parse(line, &s), 0, "%s", collect_last_error());
    return collect_gemm_shape_cost_s(&s, 24, 32);
}

Test(collect_run, problems_are_dealt_longest_first_and_merged_in_list_order, .timeout = 120)
{
    char *keys = conv_keys_write(150), *shapes = gemm_shapes_write(), *one = test_tmppath(""), *three = test_tmppath(""),
         *trace = test_tmppath(".trace"), *log, env[1024];
    /* one worker: the trace is the dealing order, every problem measured in decreasing estimated cost */
    snprintf(env, sizeof env, FAKE4 " HEURIST_COLLECT_FAKE_TRACE=%s", trace);
    cr_assert_eq(conv_collect(env, 0, keys, one, "", &log), 0, "%s", log);
    cr_assert(strstr(log, "dealt longest first"), "%s", log);
    free(log);
    int n_dealt, n_list, n_out;
    char **dealt = lines_of(trace, 0, &n_dealt), **list = lines_of(keys, 0, &n_list);
    /* the list's last two lines repeat its first key */
    cr_assert_eq(n_dealt, n_list - 2, "every distinct key measured once: %d of %d", n_dealt, n_list - 2);
    for (int i = 1; i < n_dealt; i++)
        cr_assert_geq(conv_cost(dealt[i - 1]), conv_cost(dealt[i]), "problem %d (%s) dealt after a cheaper one", i,
                      dealt[i]);
    cr_assert_gt(conv_cost(dealt[0]), conv_cost(dealt[n_dealt - 1]), "the keys' costs differ");
    int moved = 0;
    for (int i = 0; i < n_dealt; i++) moved += strcmp(dealt[i], list[i]) != 0;
    cr_assert_gt(moved, 0, "the dealing order is not the list's");
    /* the output keeps the key list's order; three workers write the same bytes */
    char *fdb = with(one, ".fdb.txt");
    char **out = lines_of(fdb, '=', &n_out);
    cr_assert_gt(n_out, 100);
    assert_subsequence(out, n_out, list, n_list, fdb);
    lines_free(out, n_out);
    free(fdb);
    lines_free(dealt, n_dealt);
    remove(trace);
    cr_assert_eq(conv_collect(FAKE4_SLOW, 0, keys, three, "--gpus 3 --chunk 4", &log), 0, "%s", log);
    cr_assert(strstr(log, "timings: plan") && strstr(log, "over the longest measuring (steady state)") &&
              strstr(log, "[worker 2/3] worker times: start-up"), "%s", log);
    free(log);
    assert_same_conv(one, three);
    /* gemm: the same */
    cr_assert_eq(gemm_collect(env, 0, shapes, one, "", &log), 0, "%s", log);
    free(log);
    dealt = lines_of(trace, 0, &n_dealt);
    cr_assert_eq(n_dealt, 11, "the distinct shapes: %d", n_dealt);
    for (int i = 1; i < n_dealt; i++)
        cr_assert_geq(gemm_cost(dealt[i - 1]), gemm_cost(dealt[i]), "shape %d (%s) dealt after a cheaper one", i, dealt[i]);
    lines_free(dealt, n_dealt);
    remove(trace);
    cr_assert_eq(gemm_collect(FAKE4_SLOW, 0, shapes, three, "--gpus 3", &log), 0, "%s", log);
    free(log);
    char *ta = with(one, ".csv.gz"), *tb = with(three, ".csv.gz");
    assert_same_file(ta, tb);
    free(ta);
    free(tb);
    lines_free(list, n_list);
    remove(keys);
    free(keys);
    remove(shapes);
    free(shapes);
    free(trace);
    cleanup(one);
    free(one);
    cleanup(three);
    free(three);
}

Test(collect_run, conv_killed_worker_keeps_its_problems_and_resume_completes, .timeout = 120)
{
    char *keys = conv_keys_write(120), *one = test_tmppath(""), *two = test_tmppath(""), *log;
    cr_assert_eq(conv_collect(FAKE4, 0, keys, one, "", &log), 0, "%s", log);
    free(log);
    /* the 60th key kills the worker that measures it */
    char env[512], *kill = key_line(keys, 60);
    snprintf(env, sizeof env, FAKE4_SLOW " HEURIST_COLLECT_FAKE_KILL=%s", kill);
    free(kill);
    int rc = conv_collect(env, 0, keys, two, "--gpus 2", &log);
    cr_assert_eq(rc, 1, "%s", log);
    cr_assert(strstr(log, "killed by signal 9"), "%s", log);
    free(log);
    char *fa = with(one, ".fdb.txt"), *fb = with(two, ".fdb.txt");
    assert_ordered_subset(fb, fa);
    /* finished problems stay; the killed problem is measured again */
    cr_assert_eq(conv_collect(FAKE4_SLOW, 0, keys, two, "--gpus 3 --resume", &log), 0, "%s", log);
    cr_assert(!strstr(log, " 0 already in the output"), "%s", log);
    free(log);
    assert_same_conv(one, two);
    /* the killed run's workers and the resumed run's: every problem once, in the output's order */
    assert_conv_gpu_table(two, 3);
    free(fa);
    free(fb);
    remove(keys);
    free(keys);
    cleanup(one);
    free(one);
    cleanup(two);
    free(two);
}

Test(collect_run, gemm_killed_worker_resumes_to_the_same_table, .timeout = 120)
{
    char *shapes = gemm_shapes_write(), *one = test_tmppath(""), *two = test_tmppath(""), *log;
    cr_assert_eq(gemm_collect(FAKE4, 0, shapes, one, "", &log), 0, "%s", log);
    free(log);
    cr_assert_eq(gemm_collect(FAKE4_SLOW " HEURIST_COLLECT_FAKE_KILL=4096,11008", 0, shapes, two, "--gpus 2", &log), 1,
                 "%s", log);
    free(log);
    cr_assert_eq(gemm_collect(FAKE4_SLOW, 0, shapes, two, "--gpus 2 --resume", &log), 0, "%s", log);
    free(log);
    char *ta = with(one, ".csv.gz"), *tb = with(two, ".csv.gz");
    assert_same_file(ta, tb);
    free(ta);
    free(tb);
    remove(shapes);
    free(shapes);
    cleanup(one);
    free(one);
    cleanup(two);
    free(two);
}

Test(collect_run, failing_worker_ends_the_job_and_resume_skips_its_problem, .timeout = 120)
{
    char *keys = conv_keys_write(60), *one = test_tmppath(""), *two = test_tmppath(""), *log;
    const char *bad = "HEURIST_COLLECT_FAKE_FAIL=64-28-28-3x3-32-28-28-1-1x1-";
    char env[512];
    snprintf(env, sizeof env, FAKE4 " %s", bad);
    cr_assert_eq(conv_collect(env, 0, keys, one, "", &log), 3, "%s", log);
    free(log);
    cr_assert_eq(conv_collect(FAKE4, 0, keys, one, "--resume", &log), 0, "%s", log);
    free(log);
    snprintf(env, sizeof env, FAKE4_SLOW " %s", bad);
    cr_assert_eq(conv_collect(env, 0, keys, two, "--gpus 2", &log), 3, "%s", log);
    cr_assert(strstr(log, "ended with status 3") && strstr(log, "device error injected"), "%s", log);
    free(log);
    cr_assert_eq(conv_collect(FAKE4_SLOW, 0, keys, two, "--gpus 2 --resume", &log), 0, "%s", log);
    cr_assert(strstr(log, "1 skipped as they ended an earlier run"), "%s", log);
    free(log);
    assert_same_conv(one, two);
    char *xa = with(one, ".fdb.txt.failed"), *xb = with(two, ".fdb.txt.failed");
    assert_same_file(xa, xb);
    free(xa);
    free(xb);
    remove(keys);
    free(keys);
    cleanup(one);
    free(one);
    cleanup(two);
    free(two);
}

Test(collect_run, time_limit_stops_every_worker_and_resume_completes, .timeout = 120)
{
    char *keys = conv_keys_write(80), *one = test_tmppath(""), *two = test_tmppath(""), *log;
    cr_assert_eq(conv_collect(FAKE4, 0, keys, one, "", &log), 0, "%s", log);
    free(log);
    /* 40 ms a problem on 2 workers against a 3.2 s limit, which keeps 3 s in hand: stopped after ~0.2 s */
    cr_assert_eq(conv_collect("HEURIST_COLLECT_FAKE=2 HEURIST_COLLECT_FAKE_US=40000", 0, keys, two,
                              "--gpus 2 --time-limit 3.2", &log), 0, "%s", log);
    cr_assert(strstr(log, "stopped by --time-limit"), "%s", log);
    free(log);
    cr_assert_eq(conv_collect(FAKE4_SLOW, 0, keys, two, "--gpus 2 --resume", &log), 0, "%s", log);
    free(log);
    assert_same_conv(one, two);
    remove(keys);
    free(keys);
    cleanup(one);
    free(one);
    cleanup(two);
    free(two);
}

Test(collect_run, usage_errors_name_the_option)
{
    char *keys = conv_keys_write(4), *out = test_tmppath(""), *log;
    cr_assert_eq(conv_collect(FAKE4, 0, keys, out, "--gpus 0", &log), 2, "%s", log);
    cr_assert(strstr(log, "--gpus '0'"), "%s", log);
    free(log);
    cr_assert_eq(conv_collect(FAKE4, 0, keys, out, "--gpus 5", &log), 1, "%s", log);
    cr_assert(strstr(log, "fake device 4"), "%s", log);
    free(log);
    remove(keys);
    free(keys);
    cleanup(out);
    free(out);
}

Test(collect_run, workers_bind_to_their_gpu_cpus_unless_no_bind, .timeout = 120)
{
    /* a fake sysfs tree: fake GPU 0 (bus 0000:01:00.0) near the first CPU this process may use, GPU 1 absent */
    char *keys = conv_keys_write(40), *root = test_tmppath(".sysfs"), *one = test_tmppath(""), *two = test_tmppath(""),
         *log, cmd[4400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/bus/pci/devices/0000:01:00.0' && cd '%s/bus/pci/devices/0000:01:00.0' && "
                              "taskset -cp $$ | sed 's/.*: //; s/[,-].*//' > local_cpulist && echo 0 > numa_node && "
                              "cat local_cpulist",
             root, root);
    cr_assert_eq(test_run_shell(cmd, &log), 0, "%s", log);
    int cpu = atoi(log);
    free(log);
    char env[4400];
    snprintf(env, sizeof env, FAKE4 " HEURIST_COLLECT_SYSFS='%s'", root);
    cr_assert_eq(conv_collect(env, 0, keys, one, "", &log), 0, "%s", log);
    free(log);
    cr_assert_eq(conv_collect(env, 0, keys, two, "--gpus 2", &log), 0, "%s", log);
    char want[128];
    snprintf(want, sizeof want, "[worker 0/2] GPU 0 (bus 0000:01:00.0): bound to NUMA node 0: CPUs %d (1 of", cpu);
    cr_assert(strstr(log, want) || strstr(log, "[worker 0/2] GPU 0 (bus 0000:01:00.0): not bound: NUMA node 0, its CPUs"),
              "%s", log);
    cr_assert(strstr(log, "[worker 1/2] GPU 1 (bus 0000:02:00.0): not bound: no local_cpulist for 0000:02:00.0"), "%s", log);
    free(log);
    assert_same_conv(one, two);
    cr_assert_eq(conv_collect(env, 0, keys, two, "--gpus 2 --no-bind", &log), 0, "%s", log);
    cr_assert(strstr(log, "[worker 0/2] GPU 0 (bus 0000:01:00.0): not bound (--no-bind)"), "%s", log);
    free(log);
    assert_same_conv(one, two);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(test_run_shell(cmd, &log), 0);
    free(log);
    free(root);
    remove(keys);
    free(keys);
    cleanup(one);
    free(one);
    cleanup(two);
    free(two);
}

#ifdef HEURIST_MPIEXEC
Test(collect_run, mpirun_two_ranks_equal_one_worker, .timeout = 300)
{
    char *keys = conv_keys_write(90), *shapes = gemm_shapes_write(), *one = test_tmppath(""), *two = test_tmppath(""),
         *log;
    cr_assert_eq(conv_collect(FAKE4, 0, keys, one, "", &log), 0, "%s", log);
    free(log);
    cr_assert_eq(conv_collect(FAKE4_SLOW, 2, keys, two, "", &log), 0, "%s", log);
    cr_assert(strstr(log, "2 workers (MPI ranks)") && strstr(log, "[worker 1/2]"), "%s", log);
    free(log);
    assert_same_conv(one, two);
    cr_assert_eq(assert_conv_gpu_table(two, 2), 2);
    cr_assert_eq(gemm_collect(FAKE4, 0, shapes, one, "", &log), 0, "%s", log);
    free(log);
    cr_assert_eq(gemm_collect(FAKE4_SLOW, 2, shapes, two, "", &log), 0, "%s", log);
    free(log);
    char *ta = with(one, ".csv.gz"), *tb = with(two, ".csv.gz");
    assert_same_file(ta, tb);
    free(ta);
    free(tb);
    remove(keys);
    free(keys);
    remove(shapes);
    free(shapes);
    cleanup(one);
    free(one);
    cleanup(two);
    free(two);
}
#endif

/* ---- parts and merge on their own ---- */

static char *text_file(const char *text)
{
    return test_tmpfile(".txt", text, strlen(text));
}

Test(collect_parts, merge_orders_by_key_list_first_copy_wins_extras_last)
{
    char *a = text_file("k3=a3\nk1=a1\nzz=extra1\nk9=unfinished"), *b = text_file("k2=b2\nk1=b1-late\nyy=extra2\n");
    char *keys[] = {"k1", "k2", "k3", "k4"};
    collect_lines l = {0};
    cr_assert_eq(collect_lines_add_file(&l, a), 0);
    cr_assert_eq(collect_lines_add_file(&l, b), 0);
    cr_assert_eq(collect_lines_add_file(&l, "/nonexistent/heurist/part"), 0, "a missing part adds nothing");
    collect_lines_index(&l);
    cr_assert(collect_lines_has(&l, "k1") && !collect_lines_has(&l, "k9") && !collect_lines_has(&l, "k"));
    char *out = test_tmppath(".txt");
    int written;
    cr_assert_eq(collect_lines_merge(out, keys, 4, &l, NULL, &written), 0, "%s", collect_last_error());
    cr_assert_eq(written, 5);
    char *got = test_file_read(out, NULL);
    cr_assert_str_eq(got, "k1=a1\nk2=b2\nk3=a3\nzz=extra1\nyy=extra2\n");
    free(got);
    /* only the keys another set has */
    collect_lines only = {0};
    char *o = text_file("k3=x\nyy=x\n");
    cr_assert_eq(collect_lines_add_file(&only, o), 0);
    collect_lines_index(&only);
    cr_assert_eq(collect_lines_merge(out, keys, 4, &l, &only, &written), 0);
    got = test_file_read(out, NULL);
    cr_assert_str_eq(got, "k3=a3\nyy=extra2\n");
    free(got);
    collect_lines_free(&only);
    collect_lines_free(&l);
    remove(a);
    remove(b);
    remove(o);
    remove(out);
    free(a);
    free(b);
    free(o);
    free(out);
}

Test(collect_parts, grouped_table_keeps_a_key_lines_from_one_source_under_one_header)
{
    char *a = text_file("key\tmath\n k2\tdefault\t1\nk1\tdefault\t2\nk1\tfma\t3\n"),
         *b = text_file("k1\tdefault\t9\nk2\tdefault\t8\nk2\tfma\t7\n");
    char *keys[] = {"k1", "k2"};
    collect_lines l = {.sep = '\t', .header = "key\tmath\n", .group = 1};
    cr_assert_eq(collect_lines_add_file(&l, a), 0);
    cr_assert_eq(collect_lines_add_file(&l, b), 0);
    collect_lines_index(&l);
    char *out = test_tmppath(".tsv");
    int written;
    cr_assert_eq(collect_lines_merge(out, keys, 2, &l, NULL, &written), 0, "%s", collect_last_error());
    char *got = test_file_read(out, NULL);
    cr_assert_str_eq(got, "key\tmath\nk1\tdefault\t2\nk1\tfma\t3\nk2\tdefault\t8\nk2\tfma\t7\n k2\tdefault\t1\n");
    free(got);
    collect_lines_free(&l);
    remove(a);
    remove(b);
    remove(out);
    free(a);
    free(b);
    free(out);
}

Test(collect_parts, trim_drops_an_unfinished_line_and_lists_find_parts)
{
    char *base = test_tmppath(".fdb.txt"), p0[600], p12[600], other[600];
    cr_assert_eq(collect_part_path(base, 0, p0, sizeof p0), 0);
    cr_assert_eq(collect_part_path(base, 12, p12, sizeof p12), 0);
    snprintf(other, sizeof other, "%s.partx", base);
    FILE *f = fopen(p12, "w");
    fputs("k1=a\nk2=b", f);
    fclose(f);
    f = fopen(p0, "w");
    fclose(f);
    f = fopen(other, "w");
    fclose(f);
    cr_assert_eq(collect_text_trim(p12), 0);
    char *got = test_file_read(p12, NULL);
    cr_assert_str_eq(got, "k1=a\n");
    free(got);
    char **paths;
    int n;
    cr_assert_eq(collect_parts_list(base, &paths, &n), 0);
    cr_assert_eq(n, 2, "base.partx is not a part");
    cr_assert_str_eq(paths[0], p0);
    cr_assert_str_eq(paths[1], p12);
    collect_parts_free(paths, n);
    cr_assert_eq(collect_parts_remove(base), 0);
    cr_assert_eq(collect_parts_list(base, &paths, &n), 0);
    cr_assert_eq(n, 0);
    collect_parts_free(paths, n);
    remove(other);
    free(base);
}

Test(collect_parts, keys_unique_keeps_first_places)
{
    char **keys = malloc(5 * sizeof *keys);
    const char *in[5] = {"b", "a", "b", "c", "a"};
    for (int i = 0; i < 5; i++) keys[i] = strdup(in[i]);
    int n = 5, kept[5];
    cr_assert_eq(collect_keys_unique(keys, &n, kept), 0);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(keys[0], "b");
    cr_assert_str_eq(keys[1], "a");
    cr_assert_str_eq(keys[2], "c");
    cr_assert(kept[0] == 0 && kept[1] == 1 && kept[2] == 3);
    for (int i = 0; i < n; i++) free(keys[i]);
    free(keys);
}

Test(collect_parts, members_keep_finished_shapes_and_cut_an_unfinished_one)
{
    char *path = test_tmppath(".csv.gz");
    collect_gemm_out o;
    collect_gemm_shape s[2] = {{64, 64, 64, COLLECT_GEMM_BF16, 'N', 'T', 1}, {128, 64, 32, COLLECT_GEMM_FP32, 'N', 'N', 1}};
    collect_gemm_row r = {{1, 15, 1, 1, 0, 0, 0, 0, 0}, 3.5, 0, 0};
    cr_assert_eq(collect_gemm_out_open(&o, path, 0), 0, "%s", collect_last_error());
    cr_assert_eq(collect_gemm_out_write(&o, &s[0], &r, 1), 0, "%s", collect_last_error());
    cr_assert_eq(collect_gemm_out_write(&o, &s[1], &r, 1), 0);
    cr_assert_eq(collect_gemm_out_close(&o), 0);
    size_t whole;
    char *bytes = test_file_read(path, &whole);
    /* a kill inside the last member */
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, whole - 5, f);
    fclose(f);
    collect_members m = {0};
    long good;
    cr_assert_eq(collect_members_add_file(&m, path, &good), 0, "%s", collect_last_error());
    collect_members_index(&m);
    cr_assert_eq(m.n, 1);
    cr_assert(collect_members_has(&m, "64,64,64,bf16,N,T") && !collect_members_has(&m, "128,64,32,fp32,N,N"));
    cr_assert(good > 0 && (size_t)good < whole - 5);
    /* a file that is not a table is refused */
    char *bad = test_tmpfile(".csv.gz", bytes + good, whole - (size_t)good);
    collect_members m2 = {0};
    cr_assert_eq(collect_members_add_file(&m2, bad, NULL), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "header"), "%s", collect_last_error());
    collect_members_free(&m2);
    collect_members_free(&m);
    free(bytes);
    remove(path);
    remove(bad);
    free(path);
    free(bad);
}

/* ---- dealing ---- */

Test(collect_deal, order_is_decreasing_cost_ties_in_key_order)
{
    int todo[6] = {4, 0, 7, 2, 9, 5};
    const double cost[6] = {0.5, 2.0, 0.5, NAN, 3.0, 0.1};
    cr_assert_eq(collect_deal_order(todo, cost, 6), 0);
    /* 9 (3.0), 0 (2.0), 4 and 7 (0.5, by key), 5 (0.1), 2 (an unknown cost counts as 0) */
    const int want[6] = {9, 0, 4, 7, 5, 2};
    for (int i = 0; i < 6; i++) cr_assert_eq(todo[i], want[i], "position %d: %d, expected %d", i, todo[i], want[i]);
    cr_assert_eq(collect_deal_order(todo, cost, 1), 0, "one problem: nothing to order");
    cr_assert_eq(collect_deal_order(NULL, NULL, 0), 0);
}

Test(collect_deal, chunks_shrink_to_one_near_the_end)
{
    /* 1000 problems, chunks of 16, 4 workers: 16 while a share of what is left among 8 is at least 16 */
    cr_assert_eq(collect_deal_chunk(0, 1000, 16, 4), 16);
    cr_assert_eq(collect_deal_chunk(800, 1000, 16, 4), 16);
    cr_assert_eq(collect_deal_chunk(900, 1000, 16, 4), 12);
    cr_assert_eq(collect_deal_chunk(990, 1000, 16, 4), 1);
    cr_assert_eq(collect_deal_chunk(999, 1000, 16, 4), 1);
    cr_assert_eq(collect_deal_chunk(1000, 1000, 16, 4), 0, "nothing left");
    cr_assert_eq(collect_deal_chunk(0, 10, 1, 1), 1, "chunks of one stay one");
    /* every position dealt once, in order, whatever the chunk */
    for (int chunk = 1; chunk <= 7; chunk++) {
        int at = 0, chunks = 0;
        while (at < 103) {
            int size = collect_deal_chunk(at, 103, chunk, 3);
            cr_assert(size >= 1 && size <= chunk && at + size <= 103, "chunk %d at %d: %d", chunk, at, size);
            at += size;
            chunks++;
        }
        cr_assert_eq(at, 103);
        cr_assert_geq(chunks, 103 / chunk);
    }
}

Test(collect_deal, cost_estimates_rank_larger_problems_first)
{
    collect_conv small, large, deep;
    const char *ks = "16-14-14-1x1-16-14-14-1-0x0-1x1-1x1-0-NCHW-FP16-F",
               *kl = "256-56-56-3x3-256-56-56-256-1x1-1x1-1x1-0-NCHW-FP16-F",
               *kd = "256-8-56-56-3x3x3-256-8-56-56-64-1x1x1-1x1x1-1x1x1-0-NCDHW-FP16-F";
    cr_assert_eq(collect_conv_from_key(ks, strlen(ks), &small), 0, "%s", collect_last_error());
    cr_assert_eq(collect_conv_from_key(kl, strlen(kl), &large), 0, "%s", collect_last_error());
    cr_assert_eq(collect_conv_from_key(kd, strlen(kd), &deep), 0, "%s", collect_last_error());
    double cs = collect_conv_cost_s(&small), cl = collect_conv_cost_s(&large), cd = collect_conv_cost_s(&deep);
    /* the pool's problems take 59 ms on average: a small one tens of milliseconds, not nothing */
    cr_assert(cs > 0.005 && cs < 0.1, "small %g", cs);
    cr_assert(cl > 3 * cs && cd > cl, "small %g, large %g, 3-D %g", cs, cl, cd);
    collect_conv grouped = large;
    grouped.groups = 4;
    cr_assert_gt(collect_conv_cost_s(&grouped), cs, "grouped %g", collect_conv_cost_s(&grouped));
    collect_gemm_shape a = {64, 64, 64, COLLECT_GEMM_BF16, 'N', 'T', 1}, b = {8192, 8192, 8192, COLLECT_GEMM_BF16, 'N', 'T', 1};
    double ga = collect_gemm_shape_cost_s(&a, 64, 32), gb = collect_gemm_shape_cost_s(&b, 64, 32);
    cr_assert(ga > 0.005 && ga < 2 && ga < gb, "small %g, large %g", ga, gb);
    cr_assert_lt(collect_gemm_shape_cost_s(&b, 8, 32), gb, "fewer sampled candidates cost less");
    cr_assert_lt(collect_gemm_shape_cost_s(&b, 64, 4), gb, "a shorter heuristic list costs less");
}
