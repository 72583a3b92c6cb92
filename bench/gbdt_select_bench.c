/* Data and heurist's side of the gbdt benchmarks against XGBoost (bench/gbdt_vs_xgboost.py) and LightGBM
 * (bench/gbdt_vs_lightgbm.sh).
 *
 *   gbdt_select_bench export DATA DIR [test_fraction] [seed]
 *       loads a find-db, computes the features, splits rows at random (as `--split random:F:seed=S`) and
 *       writes little-endian raw arrays into DIR: x_train.f32 (n_train, d), y_train.i32 (argmin runtime),
 *       p_train.f32 (n_train, K) soft runtime-ratio labels, x_test.f32, y_test.i32, t_test.f32 (n_test, K)
 *       runtimes (+inf: unmeasured), and meta.txt "n_train n_test d K".
 *   gbdt_select_bench train DIR rounds leaves learning_rate max_bin threads label [max_depth [min_data [log
 *                     [min_sum_hessian [CONFIG]]]]]
 *       trains our softmax booster on the exported training rows (label "onehot" or "soft"), predicts the
 *       test rows, writes DIR/pred_gbdt.i32 and prints one line of key=value: timings, top1 and eff (mean
 *       efficiency t_best / t_predicted, 0 when unmeasured), predict_us (median single-row prediction, one
 *       thread), batch_us (the whole test set with `threads` threads, per row), peak_rss_mb.
 *   gbdt_select_bench synth DIR n d seed [n_valid]
 *       writes a synthetic L2 regression (below) as x_train.f32 (n, d), y_train.f32, x_valid.f32, y_valid.f32
 *       and meta.txt "n n_valid d 1" (n_valid default n / 10).
 *   gbdt_select_bench l2 DIR rounds leaves learning_rate max_bin threads min_data min_sum_hessian [CONFIG]
 *       trains an L2 booster on it and prints the same key=value line with valid_l2 for the accuracy.
 * CONFIG: a JSON object of the heurist gbdt options below (the model config's names), e.g.
 * '{"quantized_grad": true, "grad_bins": 4}'.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "core/config.h"
#include "core/core.h"
#include "data/data.h"
#include "gbdt/gbdt.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int write_raw(const char *dir, const char *name, const void *p, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return hr_file_write_atomic(path, p, bytes);
}

static void *read_raw(const char *dir, const char *name, size_t bytes)
{
    char path[4096], *p = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (hr_file_read_all(path, &p, &len) == HR_OK && len != bytes) {
        hr_error(HR_EFORMAT, "%s: %zu bytes, expected %zu", path, len, bytes);
        free(p);
        p = NULL;
    }
    return p;
}

static int cmd_export(const char *data, const char *dir, double frac, uint64_t seed)
{
    data_load_opts opts = {0};
    data_select *s = NULL;
    data_tune *t = NULL;
    int rc = data_load(data, NULL, &opts, &s, &t);
    if (rc) return rc;
    if (!s) {
        data_tune_free(t);
        return hr_error(HR_EINVAL, "%s is not a find-db", data);
    }
    int d = data_features_count(), K = s->n_kernels;
    float *X = malloc((size_t)s->n * d * sizeof *X);
    data_split sp;
    if (!X) return HR_ENOMEM;
    data_features_compute_all(s->problems, s->n, X);
    if ((rc = data_split_random(s->n, frac, seed, &sp))) return rc;
    const int *rows[2] = {sp.train, sp.test};
    int nr[2] = {sp.n_train, sp.n_test};
    const char *tag[2] = {"train", "test"};
    for (int part = 0; part < 2 && rc == HR_OK; part++) {
        int n = nr[part];
        float *x = malloc((size_t)n * d * sizeof *x), *p = malloc((size_t)n * K * sizeof *p);
        float *tt = malloc((size_t)n * K * sizeof *tt);
        int32_t *y = malloc((size_t)n * sizeof *y);
        if (!x || !p || !tt || !y) rc = HR_ENOMEM;
        for (int i = 0; rc == HR_OK && i < n; i++) {
            memcpy(x + (size_t)i * d, X + (size_t)rows[part][i] * d, (size_t)d * sizeof *x);
            memcpy(tt + (size_t)i * K, s->runtime + (size_t)rows[part][i] * K, (size_t)K * sizeof *tt);
            y[i] = data_select_best(s, rows[part][i]);
        }
        if (rc == HR_OK) data_labels_fill(s, rows[part], n, DATA_LABEL_SOFT_RATIO, 0.1f, p);
        char name[64];
        snprintf(name, sizeof name, "x_%s.f32", tag[part]);
        if (rc == HR_OK) rc = write_raw(dir, name, x, (size_t)n * d * sizeof *x);
        snprintf(name, sizeof name, "y_%s.i32", tag[part]);
        if (rc == HR_OK) rc = write_raw(dir, name, y, (size_t)n * sizeof *y);
        snprintf(name, sizeof name, "%s_%s.f32", part ? "t" : "p", tag[part]);
        if (rc == HR_OK) rc = write_raw(dir, name, part ? tt : p, (size_t)n * K * sizeof *p);
        free(x), free(p), free(tt), free(y);
    }
    if (rc == HR_OK) {
        char meta[128];
        int len = snprintf(meta, sizeof meta, "%d %d %d %d\n", sp.n_train, sp.n_test, d, K);
        rc = write_raw(dir, "meta.txt", meta, (size_t)len);
    }
    data_split_free(&sp);
    free(X);
    data_select_free(s);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median wall time (us) of single-row predictions of the first rows of x (n, d), and the time per row of
 * predicting all n rows at once with `threads` threads */
static int predict_timing(const gbdt_booster *b, const float *x, size_t n, int d, int threads, double *single_us,
                          double *batch_us)
{
    int K = gbdt_booster_num_class(b);
    size_t calls = n < 2000 ? n : 2000;
    double *t = malloc(calls * sizeof *t), *out = malloc(n * (size_t)K * sizeof *out);
    if (!t || !out) {
        free(t), free(out);
        return HR_ENOMEM;
    }
    for (size_t i = 0; i < calls; i++) {
        double t0 = hr_now();
        gbdt_booster_predict_row(b, x + i * (size_t)d, out);
        t[i] = hr_now() - t0;
    }
    qsort(t, calls, sizeof *t, cmp_double);
    *single_us = 1e6 * t[calls / 2];
    double t0 = hr_now();
    int rc = gbdt_booster_predict(b, x, n, 0, threads, out);
    *batch_us = 1e6 * (hr_now() - t0) / (double)n;
    free(t), free(out);
    return rc;
}

/* the options CONFIG may set, with the defaults and ranges of the gbdt model config (models/gbdt_train.c) */
static const hr_config_option bench_options[] = {
    {.name = "quantized_grad", .type = HR_CONFIG_BOOL, .offset = offsetof(gbdt_params, quantized_grad), .def = 0,
     .doc = "integer histograms of quantized gradients"},
    {.name = "grad_bins", .type = HR_CONFIG_INT, .offset = offsetof(gbdt_params, grad_bins), .def = 4, .min = 2,
     .max = 64, .doc = "levels of a quantized gradient"},
    {.name = "renew_leaf", .type = HR_CONFIG_BOOL, .offset = offsetof(gbdt_params, renew_leaf), .def = 1,
     .doc = "leaf values from the true gradients"},
    {.name = "hessian_counts", .type = HR_CONFIG_BOOL, .offset = offsetof(gbdt_params, hessian_counts), .def = 0,
     .doc = "split sides' row counts from their hessian sums; histograms skip zero rows"},
};

static int bench_config(const char *json, gbdt_params *p)
{
    cJSON *c = cJSON_Parse(json);
    if (!c || !cJSON_IsObject(c)) {
        cJSON_Delete(c);
        return hr_error(HR_EINVAL, "CONFIG '%s' is not a JSON object", json);
    }
    hr_config_table t = {"gbdt_select_bench", bench_options, sizeof bench_options / sizeof *bench_options};
    int rc = hr_config_read(&t, c, p);
    cJSON_Delete(c);
    return rc;
}

static int cmd_train(int argc, char **argv)
{
    const char *dir = argv[0];
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    FILE *f = fopen(path, "r");
    int ntr = 0, nte = 0, d = 0, K = 0;
    if (!f || fscanf(f, "%d %d %d %d", &ntr, &nte, &d, &K) != 4) {
        if (f) fclose(f);
        return hr_error(HR_EIO, "cannot read %s", path);
    }
    fclose(f);
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.num_rounds = atoi(argv[1]);
    p.num_leaves = atoi(argv[2]);
    p.learning_rate = atof(argv[3]);
    p.max_bin = atoi(argv[4]);
    p.num_threads = atoi(argv[5]);
    int soft = strcmp(argv[6], "soft") == 0;
    if (argc > 7) p.max_depth = atoi(argv[7]);
    if (argc > 8) p.min_data_in_leaf = atoi(argv[8]);
    if (argc > 9) p.log_every = atoi(argv[9]);
    if (argc > 10) p.min_sum_hessian_in_leaf = atof(argv[10]);
    if (argc > 11 && bench_config(argv[11], &p)) return HR_EINVAL;
    hr_log log = {stderr, HR_LOG_INFO};
    float *x = read_raw(dir, "x_train.f32", (size_t)ntr * d * sizeof(float));
    float *xt = read_raw(dir, "x_test.f32", (size_t)nte * d * sizeof(float));
    int32_t *y = read_raw(dir, "y_train.i32", (size_t)ntr * sizeof(int32_t));
    float *prob = soft ? read_raw(dir, "p_train.f32", (size_t)ntr * K * sizeof(float)) : NULL;
    float *yf = malloc((size_t)ntr * sizeof *yf);
    int32_t *pred = malloc((size_t)nte * sizeof *pred);
    double *out = malloc((size_t)K * sizeof *out);
    if (!x || !xt || !y || (soft && !prob) || !yf || !pred || !out) return HR_ENOMEM;
    for (int i = 0; i < ntr; i++) yf[i] = (float)y[i];
    gbdt_data tr = {.x = x, .n = (size_t)ntr, .d = d, .y = soft ? NULL : yf, .y_prob = prob};
    gbdt_booster *b;
    double t0 = hr_now(), c0 = cpu_now();
    int rc = gbdt_booster_train(&p, &tr, NULL, NULL, &log, &b);
    double t1 = hr_now(), c1 = cpu_now();
    if (rc) return rc;
    for (int i = 0; i < nte; i++) {
        gbdt_booster_predict_raw_row(b, xt + (size_t)i * d, out);
        int best = 0;
        for (int k = 1; k < K; k++)
            if (out[k] > out[best]) best = k;
        pred[i] = best;
    }
    double t2 = hr_now();
    rc = write_raw(dir, "pred_gbdt.i32", pred, (size_t)nte * sizeof *pred);
    float *tt = rc == HR_OK ? read_raw(dir, "t_test.f32", (size_t)nte * K * sizeof(float)) : NULL;
    double top1 = 0, eff = 0, single_us = 0, batch_us = 0;
    if (rc == HR_OK && !tt) rc = HR_EIO;
    for (int i = 0; rc == HR_OK && i < nte; i++) {
        const float *t = tt + (size_t)i * K;
        float tbest = INFINITY;
        for (int k = 0; k < K; k++)
            if (t[k] < tbest) tbest = t[k];
        top1 += t[pred[i]] == tbest;
        eff += isfinite(t[pred[i]]) ? tbest / t[pred[i]] : 0.0;
    }
    if (rc == HR_OK) rc = predict_timing(b, xt, (size_t)nte, d, p.num_threads, &single_us, &batch_us);
    printf("train_s=%.3f cpu_s=%.3f cpu_ms_per_tree=%.3f ms_per_tree=%.3f predict_loop_us=%.3f trees=%d top1=%.4f "
           "eff=%.4f predict_us=%.3f batch_us=%.3f peak_rss_mb=%.1f\n",
           t1 - t0, c1 - c0, 1e3 * (c1 - c0) / gbdt_booster_num_trees(b), 1e3 * (t1 - t0) / gbdt_booster_num_trees(b),
           1e6 * (t2 - t1) / nte, gbdt_booster_num_trees(b), top1 / nte, eff / nte, single_us, batch_us,
           (double)hr_peak_rss() / 1048576.0);
    free(tt);
    gbdt_booster_free(b);
    free(x), free(xt), free(y), free(prob), free(yf), free(pred), free(out);
    return rc;
}

/* The synthetic regression: x_ij ~ U[0, 1), and
 *   y = sum_j a_j sin(2 pi (1 + j mod 3) x_j) + 2 x_0 x_1 + [x_2 > 0.5] (x_3 - 0.5) + 0.3 e,  a_j = 1 / (1 + j / 10),
 * e ~ N(0, 1): smooth effects of every feature, an interaction and a step, so trees keep improving for
 * hundreds of rounds. Rows come from one generator seeded with `seed`, training rows first. */
static int cmd_synth(const char *dir, size_t n, int d, uint64_t seed, size_t nv)
{
    hr_rng rng;
    hr_rng_seed(&rng, seed);
    int rc = HR_OK;
    for (int part = 0; part < 2 && rc == HR_OK; part++) {
        size_t m = part ? nv : n;
        float *x = malloc(m * (size_t)d * sizeof *x), *y = malloc(m * sizeof *y);
        if (!x || !y) rc = HR_ENOMEM;
        for (size_t i = 0; rc == HR_OK && i < m; i++) {
            float *xi = x + i * (size_t)d;
            double v = 0;
            for (int j = 0; j < d; j++) xi[j] = hr_rng_uniform(&rng);
            for (int j = 0; j < d; j++) v += sin(6.283185307179586 * (1 + j % 3) * xi[j]) / (1.0 + j / 10.0);
            if (d >= 4) v += 2.0 * xi[0] * xi[1] + (xi[2] > 0.5f ? xi[3] - 0.5 : 0.0);
            y[i] = (float)(v + 0.3 * hr_rng_normal(&rng));
        }
        if (rc == HR_OK) rc = write_raw(dir, part ? "x_valid.f32" : "x_train.f32", x, m * (size_t)d * sizeof *x);
        if (rc == HR_OK) rc = write_raw(dir, part ? "y_valid.f32" : "y_train.f32", y, m * sizeof *y);
        free(x), free(y);
    }
    if (rc == HR_OK) {
        char meta[128];
        int len = snprintf(meta, sizeof meta, "%zu %zu %d 1\n", n, nv, d);
        rc = write_raw(dir, "meta.txt", meta, (size_t)len);
    }
    return rc;
}

static int cmd_l2(int argc, char **argv)
{
    const char *dir = argv[0];
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    FILE *f = fopen(path, "r");
    int ntr = 0, nv = 0, d = 0, K = 0;
    if (!f || fscanf(f, "%d %d %d %d", &ntr, &nv, &d, &K) != 4) {
        if (f) fclose(f);
        return hr_error(HR_EIO, "cannot read %s", path);
    }
    fclose(f);
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = atoi(argv[1]);
    p.num_leaves = atoi(argv[2]);
    p.learning_rate = atof(argv[3]);
    p.max_bin = atoi(argv[4]);
    p.num_threads = atoi(argv[5]);
    p.min_data_in_leaf = atoi(argv[6]);
    p.min_sum_hessian_in_leaf = atof(argv[7]);
    if (argc > 8 && bench_config(argv[8], &p)) return HR_EINVAL;
    float *x = read_raw(dir, "x_train.f32", (size_t)ntr * d * sizeof(float));
    float *y = read_raw(dir, "y_train.f32", (size_t)ntr * sizeof(float));
    float *xv = read_raw(dir, "x_valid.f32", (size_t)nv * d * sizeof(float));
    float *yv = read_raw(dir, "y_valid.f32", (size_t)nv * sizeof(float));
    double *out = malloc((size_t)nv * sizeof *out);
    int rc = x && y && xv && yv && out ? HR_OK : HR_ENOMEM;
    gbdt_booster *b = NULL;
    double t0 = hr_now(), c0 = cpu_now(), t1 = t0, c1 = c0, l2 = 0, single_us = 0, batch_us = 0;
    if (rc == HR_OK) {
        gbdt_data tr = {.x = x, .n = (size_t)ntr, .d = d, .y = y};
        rc = gbdt_booster_train(&p, &tr, NULL, NULL, NULL, &b);
        t1 = hr_now(), c1 = cpu_now();
    }
    if (rc == HR_OK) rc = gbdt_booster_predict(b, xv, (size_t)nv, 0, p.num_threads, out);
    for (int i = 0; rc == HR_OK && i < nv; i++) l2 += (out[i] - yv[i]) * (out[i] - yv[i]);
    if (rc == HR_OK) rc = predict_timing(b, xv, (size_t)nv, d, p.num_threads, &single_us, &batch_us);
    if (rc == HR_OK)
        printf("train_s=%.3f cpu_s=%.3f trees=%d valid_l2=%.6f predict_us=%.3f batch_us=%.3f peak_rss_mb=%.1f\n",
               t1 - t0, c1 - c0, gbdt_booster_num_trees(b), l2 / nv, single_us, batch_us,
               (double)hr_peak_rss() / 1048576.0);
    gbdt_booster_free(b);
    free(x), free(y), free(xv), free(yv), free(out);
    return rc;
}

int main(int argc, char **argv)
{
    int rc;
    if (argc >= 4 && strcmp(argv[1], "export") == 0)
        rc = cmd_export(argv[2], argv[3], argc > 4 ? atof(argv[4]) : 0.2, argc > 5 ? strtoull(argv[5], NULL, 10) : 0);
    else if (argc >= 9 && strcmp(argv[1], "train") == 0)
        rc = cmd_train(argc - 2, argv + 2);
    else if (argc >= 6 && strcmp(argv[1], "synth") == 0)
        rc = cmd_synth(argv[2], strtoull(argv[3], NULL, 10), atoi(argv[4]), strtoull(argv[5], NULL, 10),
                       argc > 6 ? strtoull(argv[6], NULL, 10) : strtoull(argv[3], NULL, 10) / 10);
    else if ((argc == 10 || argc == 11) && strcmp(argv[1], "l2") == 0)
        rc = cmd_l2(argc - 2, argv + 2);
    else {
        fprintf(stderr, "usage: gbdt_select_bench export DATA DIR [test_fraction] [seed]\n"
                        "       gbdt_select_bench train DIR rounds leaves learning_rate max_bin threads "
                        "onehot|soft [max_depth [min_data_in_leaf [log_every [min_sum_hessian [CONFIG]]]]]\n"
                        "       gbdt_select_bench synth DIR n d seed [n_valid]\n"
                        "       gbdt_select_bench l2 DIR rounds leaves learning_rate max_bin threads min_data_in_leaf "
                        "min_sum_hessian [CONFIG]\n");
        return 2;
    }
    if (rc) fprintf(stderr, "gbdt_select_bench: %s\n", hr_last_error());
    return rc ? 1 : 0;
}
