/* LightGBM's side of bench/gbdt_vs_lightgbm.sh, through its C API, on the raw arrays that
 * gbdt_select_bench writes (so both trainers see the same rows as the same float32 values).
 * Built by that script against a LightGBM build; not part of heurist's CMake build (it needs LightGBM).
 *
 *   lgbm_bench select DIR rounds leaves lr max_bin threads min_data_in_leaf min_sum_hessian
 *       70-class softmax on DIR/x_train.f32, y_train.i32; scores DIR/x_test.f32 against t_test.f32
 *   lgbm_bench l2 DIR rounds leaves lr max_bin threads min_data_in_leaf min_sum_hessian
 *       L2 regression on DIR/x_train.f32, y_train.f32; validation loss on x_valid.f32, y_valid.f32
 *   Either takes a last optional argument EXTRA, LightGBM parameters appended to the matched ones
 *   (e.g. "use_quantized_grad=true num_grad_quant_bins=4").
 * Prints one line of key=value: construct_s (Dataset binning), train_s (construct + boosting), cpu_s (its
 * process CPU time, all threads), the
 * accuracy (top1 and eff, or valid_l2), predict_us (median of single-row predictions, one thread),
 * batch_us (whole test set with `threads` threads, per row) and peak_rss_mb.
 */
#include <stdint.h> /* before c_api.h, whose arrow.h uses int64_t without it */

#include <LightGBM/c_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "lgbm_bench: %s: %s\n", what, LGBM_GetLastError());
    exit(1);
}

static void *read_raw(const char *dir, const char *name, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    char *p = malloc(bytes ? bytes : 1);
    if (!f || !p || fread(p, 1, bytes, f) != bytes || fgetc(f) != EOF) {
        fprintf(stderr, "lgbm_bench: cannot read %zu bytes from %s\n", bytes, path);
        exit(1);
    }
    fclose(f);
    return p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median wall time of single-row predictions of the first rows of x (n, d), microseconds */
static double single_row_us(BoosterHandle bst, const float *x, int n, int d, int K)
{
    FastConfigHandle fc;
    if (LGBM_BoosterPredictForMatSingleRowFastInit(bst, C_API_PREDICT_NORMAL, 0, -1, C_API_DTYPE_FLOAT32, d,
                                                   "num_threads=1", &fc))
        die("single-row init");
    int calls = n < 2000 ? n : 2000;
    double *t = malloc((size_t)calls * sizeof *t), *out = malloc((size_t)K * sizeof *out);
    int64_t len;
    for (int i = 0; i < calls; i++) {
        double t0 = now();
        if (LGBM_BoosterPredictForMatSingleRowFast(fc, x + (size_t)i * d, &len, out)) die("single-row predict");
        t[i] = now() - t0;
    }
    qsort(t, (size_t)calls, sizeof *t, cmp_double);
    double med = 1e6 * t[calls / 2];
    LGBM_FastConfigFree(fc);
    free(t);
    free(out);
    return med;
}

int main(int argc, char **argv)
{
    if ((argc != 10 && argc != 11) || (strcmp(argv[1], "select") && strcmp(argv[1], "l2"))) {
        fprintf(stderr, "usage: lgbm_bench select|l2 DIR rounds leaves lr max_bin threads min_data_in_leaf "
                        "min_sum_hessian [EXTRA]\n");
        return 2;
    }
    int select = strcmp(argv[1], "select") == 0;
    const char *dir = argv[2];
    int rounds = atoi(argv[3]), threads = atoi(argv[7]);
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    FILE *f = fopen(path, "r");
    int ntr = 0, nte = 0, d = 0, K = 0;
    if (!f || fscanf(f, "%d %d %d %d", &ntr, &nte, &d, &K) != 4) {
        fprintf(stderr, "lgbm_bench: cannot read %s\n", path);
        return 1;
    }
    fclose(f);
    float *x = read_raw(dir, "x_train.f32", (size_t)ntr * d * sizeof(float));
    float *xt = read_raw(dir, select ? "x_test.f32" : "x_valid.f32", (size_t)nte * d * sizeof(float));
    float *label = malloc((size_t)ntr * sizeof *label);
    if (select) {
        int32_t *y = read_raw(dir, "y_train.i32", (size_t)ntr * sizeof(int32_t));
        for (int i = 0; i < ntr; i++) label[i] = (float)y[i];
        free(y);
    } else {
        free(label);
        label = read_raw(dir, "y_train.f32", (size_t)ntr * sizeof(float));
    }
    /* matched settings: everything that shapes a tree is given explicitly; bagging and feature sampling
     * stay off (LightGBM's defaults), as in heurist's defaults */
    char params[1024];
    int K_out = select ? K : 1;
    snprintf(params, sizeof params,
             "objective=%s num_class=%d num_iterations=%d num_leaves=%s learning_rate=%s max_bin=%s "
             "num_threads=%d min_data_in_leaf=%s min_sum_hessian_in_leaf=%s lambda_l1=0 lambda_l2=0 "
             "min_gain_to_split=0 max_depth=-1 feature_fraction=1 bagging_fraction=1 bagging_freq=0 "
             "boost_from_average=true verbosity=-1 seed=0 %s",
             select ? "multiclass" : "regression", K_out, rounds, argv[4], argv[5], argv[6], threads, argv[8],
             argv[9], argc > 10 ? argv[10] : "");
    double t0 = now(), c0 = cpu_now();
    DatasetHandle ds;
    if (LGBM_DatasetCreateFromMat(x, C_API_DTYPE_FLOAT32, ntr, d, 1, params, NULL, &ds)) die("dataset");
    if (LGBM_DatasetSetField(ds, "label", label, ntr, C_API_DTYPE_FLOAT32)) die("label");
    double t1 = now();
    BoosterHandle bst;
    if (LGBM_BoosterCreate(ds, params, &bst)) die("booster");
    for (int it = 0; it < rounds; it++) {
        int finished = 0;
        if (LGBM_BoosterUpdateOneIter(bst, &finished)) die("iteration");
        if (finished) break;
    }
    double t2 = now(), c2 = cpu_now();
    double *pred = malloc((size_t)nte * K_out * sizeof *pred);
    int64_t len = 0;
    char pparams[64];
    snprintf(pparams, sizeof pparams, "num_threads=%d", threads);
    double t3 = now();
    if (LGBM_BoosterPredictForMat(bst, xt, C_API_DTYPE_FLOAT32, nte, d, 1, C_API_PREDICT_NORMAL, 0, -1, pparams,
                                  &len, pred))
        die("predict");
    double batch_us = 1e6 * (now() - t3) / nte;
    double single_us = single_row_us(bst, xt, nte, d, K_out);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("construct_s=%.3f train_s=%.3f cpu_s=%.3f ", t1 - t0, t2 - t0, c2 - c0);
    if (select) {
        float *tt = read_raw(dir, "t_test.f32", (size_t)nte * K * sizeof(float));
        double top1 = 0, eff = 0;
        for (int i = 0; i < nte; i++) {
            const double *p = pred + (size_t)i * K;
            const float *t = tt + (size_t)i * K;
            int best = 0;
            float tbest = INFINITY;
            for (int k = 1; k < K; k++)
                if (p[k] > p[best]) best = k;
            for (int k = 0; k < K; k++)
                if (t[k] < tbest) tbest = t[k];
            top1 += t[best] == tbest;
            eff += isfinite(t[best]) ? tbest / t[best] : 0.0;
        }
        printf("top1=%.4f eff=%.4f ", top1 / nte, eff / nte);
        free(tt);
    } else {
        float *yv = read_raw(dir, "y_valid.f32", (size_t)nte * sizeof(float));
        double l2 = 0;
        for (int i = 0; i < nte; i++) l2 += (pred[i] - yv[i]) * (pred[i] - yv[i]);
        printf("valid_l2=%.6f ", l2 / nte);
        free(yv);
    }
    printf("predict_us=%.3f batch_us=%.3f peak_rss_mb=%.1f\n", single_us, batch_us, ru.ru_maxrss / 1024.0);
    LGBM_BoosterFree(bst);
    LGBM_DatasetFree(ds);
    free(x), free(xt), free(label), free(pred);
    return 0;
}
