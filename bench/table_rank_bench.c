/* The gbdt rank model of a benchmark table: training time, and the time to rank 1,000 candidate configurations
 * of one problem through the library and through the exported C runtime.
 *
 *   table_rank_bench DATA.csv [--config JSON] [--threads N] [--calls N] [--candidates N] [--seed S] [--cc CC]
 *
 * Trains gbdt with {"objective":"rank"} (and --config's options) on every problem of the table, a seeded 10%
 * held back for early stopping, on --threads threads (default 1). The candidates are the model's configurations
 * and, past them, seeded combinations of the values each kernel column takes (configurations never measured,
 * which a pair model scores like any other). Ranking times are the median over --calls (default 1,000) calls on
 * one thread, each on the next problem of the table: library = model_predict_candidates then a sort of the
 * indices by score; runtime = <prefix>_rank of the exported model built with `CC -O2` (default cc), timed by a
 * driver compiled with it (in a folder under $TMPDIR, or the current one, removed after). One line of key=value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "data/table.h"
#include "eval/eval.h"
#include "export/export.h"
#include "pipeline/pipeline.h"

static const char *driver =
    "#define _POSIX_C_SOURCE 200809L\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n#include \"hm.h\"\n"
    "static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b;"
    " return (x > y) - (x < y); }\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *f = fopen(argv[1], \"r\");\n  int np, n, calls;\n"
    "  if (!f || argc != 2 || fscanf(f, \"%d %d %d\", &np, &n, &calls) != 3) return 1;\n"
    "  double *pv = malloc(sizeof(double) * np * HM_N_PROBLEM), *kv = malloc(sizeof(double) * n * HM_N_KERNEL);\n"
    "  double *us = malloc(sizeof(double) * calls);\n  float *s = malloc(sizeof(float) * n);\n"
    "  int *r = malloc(sizeof(int) * n);\n  double sink = 0;\n"
    "  for (int i = 0; i < np * HM_N_PROBLEM; i++) if (fscanf(f, \"%lf\", &pv[i]) != 1) return 1;\n"
    "  for (int i = 0; i < n * HM_N_KERNEL; i++) if (fscanf(f, \"%lf\", &kv[i]) != 1) return 1;\n"
    "  for (int c = -10; c < calls; c++) {\n"
    "    struct timespec a, b;\n    clock_gettime(CLOCK_MONOTONIC, &a);\n"
    "    hm_rank(pv + (size_t)((c + 10) % np) * HM_N_PROBLEM, kv, n, s, r);\n"
    "    clock_gettime(CLOCK_MONOTONIC, &b);\n    sink += r[0];\n"
    "    if (c >= 0) us[c] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) * 1e-3;\n  }\n"
    "  qsort(us, calls, sizeof *us, cmp);\n  printf(\"%.3f %g\\n\", us[calls / 2], sink);\n  return 0;\n}\n";

/* qsort has no context: the scores the comparator reads */
typedef struct bench_ranked {
    float score;
    int index;
} bench_ranked;

static int bench_ranked_cmp(const void *a, const void *b)
{
    const bench_ranked *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->index - y->index;
}

/* n candidates (n, nk): the model's configurations, then seeded combinations of each column's values. */
static double *bench_candidates(const model *m, int n, uint64_t seed)
{
    int nk = data_codec_config_width(m->codec), K = m->n_kernels;
    double *kv = malloc((size_t)n * nk * sizeof *kv);
    if (!kv) return NULL;
    hr_rng rng;
    hr_rng_seed(&rng, seed);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < nk; j++)
            kv[(size_t)i * nk + j] = i < K ? m->kernel_values[(size_t)i * nk + j]
                                           : m->kernel_values[(size_t)hr_rng_below(&rng, (uint64_t)K) * nk + j];
    return kv;
}

static int bench_run(const char *data, const char *config, int threads, int calls, int n_cand, uint64_t seed,
                     const char *cc)
{
    hr_log silent = hr_log_silent();
    pipe_dataset d;
    int rc = pipe_dataset_load(data, "select", NULL, threads, &silent, &d);
    if (rc) return rc;
    if (!d.sel->table) {
        pipe_dataset_free(&d);
        return hr_error(HR_EINVAL, "%s: not a benchmark table", data);
    }
    /* every problem trains, a seeded 10% of them validates */
    int *order = malloc((size_t)d.n * sizeof *order);
    if (!order) return HR_ENOMEM;
    for (int i = 0; i < d.n; i++) order[i] = i;
    hr_rng rng;
    hr_rng_seed(&rng, seed);
    hr_rng_shuffle_int(&rng, order, (size_t)d.n);
    int n_valid = d.n / 10;
    char cfg_text[1024];
    snprintf(cfg_text, sizeof cfg_text, "%s", config);
    cJSON *cfg = cJSON_Parse(cfg_text);
    if (!cfg) return hr_error(HR_EINVAL, "--config: not JSON");
    if (!cJSON_GetObjectItem(cfg, "objective")) cJSON_AddStringToObject(cfg, "objective", "rank");
    model_train_data td = {.task = MODEL_TASK_SELECT, .sel = d.sel, .codec = d.codec, .V = d.V, .X = d.X,
                           .n_features = d.n_features, .train = order + n_valid, .n_train = d.n - n_valid,
                           .valid = order, .n_valid = n_valid};
    model_ctx ctx = {.seed = seed, .threads = threads, .log = &silent, .config = cfg};
    model *m = NULL;
    double t0 = hr_now();
    rc = model_train(&model_family_gbdt, &td, &ctx, &m);
    double train_s = hr_now() - t0;
    cJSON_Delete(cfg);
    free(order);
    double *kv = rc ? NULL : bench_candidates(m, n_cand, seed);
    float *scores = malloc((size_t)n_cand * sizeof *scores);
    bench_ranked *ranked = malloc((size_t)n_cand * sizeof *ranked);
    double *us = malloc((size_t)calls * sizeof *us), *us_scores = malloc((size_t)calls * sizeof *us_scores);
    model_ws *ws = NULL;
    if (!rc && (!kv || !scores || !ranked || !us || !us_scores)) rc = HR_ENOMEM;
    if (!rc) rc = model_ws_create(m, &ws);
    double sink = 0;
    for (int c = -10; !rc && c < calls; c++) {
        const float *x = d.X + (size_t)((c + 10) % d.n) * d.n_features;
        double a = hr_now();
        rc = model_predict_candidates(m, ws, x, kv, n_cand, scores);
        double b = hr_now();
        for (int i = 0; i < n_cand; i++) ranked[i] = (bench_ranked){scores[i], i};
        qsort(ranked, (size_t)n_cand, sizeof *ranked, bench_ranked_cmp);
        double e = hr_now();
        sink += ranked[0].index;
        if (c >= 0) {
            us[c] = (e - a) * 1e6;
            us_scores[c] = (b - a) * 1e6;
        }
    }
    /* the exported runtime, timed by a driver over the same problems and candidates */
    double runtime_us = NAN;
    char dir[1024];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/table_rank_bench_XXXXXX", tmp && *tmp ? tmp : ".");
    if (!rc && !mkdtemp(dir)) rc = hr_error(HR_EIO, "%s: cannot create a temporary folder", dir);
    if (!rc) rc = export_c_write(m, data, dir, "hm");
    if (!rc) {
        char path[1100], cmd[6000];
        snprintf(path, sizeof path, "%s/driver.c", dir);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(driver, f);
            fclose(f);
        }
        snprintf(path, sizeof path, "%s/in.txt", dir);
        f = fopen(path, "w");
        int np = d.sel->table->spec.n_problem + d.sel->table->spec.n_hardware, nk = data_codec_config_width(m->codec);
        if (f) {
            fprintf(f, "%d %d %d\n", d.n, n_cand, calls);
            for (size_t i = 0; i < (size_t)d.n * np; i++) fprintf(f, "%.17g\n", d.sel->table->pv[i]);
            for (size_t i = 0; i < (size_t)n_cand * nk; i++) fprintf(f, "%.17g\n", kv[i]);
            fclose(f);
        }
        snprintf(cmd, sizeof cmd, "%s -O2 -std=c11 -o %s/drv %s/driver.c %s/hm.c -lm && %s/drv %s/in.txt", cc, dir,
                 dir, dir, dir, dir);
        FILE *p = popen(cmd, "r");
        if (!p || fscanf(p, "%lf", &runtime_us) != 1) rc = hr_error(HR_EIO, "the exported runtime's driver failed: %s", cmd);
        if (p) pclose(p);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) fprintf(stderr, "table_rank_bench: could not remove %s\n", dir);
    }
    if (!rc)
        printf("problems=%d configurations=%d pairs_features=%d train_threads=%d train_seconds=%.2f tree_nodes=%ld "
               "candidates=%d calls=%d library_rank_us=%.1f library_scores_us=%.1f runtime_rank_us=%.1f cc=%s sink=%g\n",
               d.n, m->n_kernels, m->n_features + data_codec_pair_feature_count(m->codec), threads, train_s,
               model_n_params(m), n_cand, calls, eval_median_inplace(us, calls), eval_median_inplace(us_scores, calls),
               runtime_us, cc, sink);
    model_ws_free(ws);
    if (m) model_free(m);
    free(kv);
    free(scores);
    free(ranked);
    free(us);
    free(us_scores);
    pipe_dataset_free(&d);
    return rc;
}

int main(int argc, char **argv)
{
    const char *data = NULL, *config = "{}", *cc = "cc";
    int threads = 1, calls = 1000, n_cand = 1000;
    uint64_t seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--config") && v) config = argv[++i];
        else if (!strcmp(a, "--threads") && v) threads = atoi(argv[++i]);
        else if (!strcmp(a, "--calls") && v) calls = atoi(argv[++i]);
        else if (!strcmp(a, "--candidates") && v) n_cand = atoi(argv[++i]);
        else if (!strcmp(a, "--seed") && v) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--cc") && v) cc = argv[++i];
        else if (a[0] != '-' && !data) data = a;
        else {
            fprintf(stderr, "usage: table_rank_bench DATA.csv [--config JSON] [--threads N] [--calls N] "
                            "[--candidates N] [--seed S] [--cc CC]\n");
            return 2;
        }
    }
    if (!data || calls < 1 || n_cand < 1 || threads < 1) {
        fprintf(stderr, "table_rank_bench: needs DATA.csv, and positive --calls, --candidates, --threads\n");
        return 2;
    }
    int rc = bench_run(data, config, threads, calls, n_cand, seed, cc);
    if (rc) {
        fprintf(stderr, "table_rank_bench: %s\n", hr_last_error());
        return 1;
    }
    return 0;
}
