/* Reformer benchmark, our side of bench/run_reformer_bench.sh (PyTorch side: bench/reformer_torch.py).
 *
 *   bench_reformer export DATA DIR [test_fraction] [seed]
 *       loads DATA (find-db or dataset cache), computes the features, splits rows at random as
 *       `--split random:F:seed=S` does and writes little-endian raw arrays into DIR: x_train.f32 (n_train, d),
 *       t_train.f32 (n_train, K) runtimes in ms (+inf: not measured), x_test.f32, t_test.f32,
 *       meta.txt "n_train n_test d K" and kernels.txt (the K kernel names, one per line, in column order).
 *   bench_reformer train DATA DIR FAMILY EPOCHS THREADS CONFIG_JSON [MAX_TRAIN_ROWS]
 *       trains FAMILY (reformer or transformer) for EPOCHS on the same training rows (all of them, or the
 *       first MAX_TRAIN_ROWS; no validation, no early stopping: the training time is the loop alone),
 *       saves DIR/FAMILY.h5 and prints one line of key=value: seconds per epoch, test top1 and efficiency,
 *       parameters, peak resident memory (getrusage, whole process: dataset included).
 *   bench_reformer infer MODEL DATA CALLS
 *       loads MODEL, times CALLS single-problem predictions on one thread (family predict on a ready
 *       feature vector, as PyTorch's model(x); and model_predict_select from the problem key, which computes
 *       the features too) and prints the medians in microseconds.
 *   bench_reformer recombine MODEL product|mask|head [BETA]
 *       rewrites a saved Reformer's rule for combining its two heads (and the product's weight BETA) in
 *       place: an inference-time choice, so one training run serves every row of that ablation; `heurist
 *       eval` then measures each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cJSON.h>

#include "core/core.h"
#include "core/h5.h"
#include "data/data.h"
#include "eval/eval.h"
#include "models/model.h"

static int write_raw(const char *dir, const char *name, const void *p, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return hr_file_write_atomic(path, p, bytes);
}

/* The find-db's selection table and the features of all its rows. */
static int load_select(const char *data, data_select **s, float **X)
{
    data_load_opts opts = {0};
    data_tune *t = NULL;
    int rc = data_load(data, NULL, &opts, s, &t);
    if (rc) return rc;
    if (!*s) {
        data_tune_free(t);
        return hr_error(HR_EINVAL, "%s is not a find-db", data);
    }
    if (!(*X = malloc((size_t)(*s)->n * data_features_count() * sizeof **X))) return HR_ENOMEM;
    data_features_compute_all((*s)->problems, (*s)->n, *X);
    return HR_OK;
}

static int cmd_export(const char *data, const char *dir, double frac, uint64_t seed)
{
    data_select *s = NULL;
    float *X = NULL;
    int rc = load_select(data, &s, &X);
    if (rc) return rc;
    const int d = data_features_count(), K = s->n_kernels;
    data_split sp;
    if ((rc = data_split_random(s->n, frac, seed, &sp))) return rc;
    const int *rows[2] = {sp.train, sp.test};
    const int nr[2] = {sp.n_train, sp.n_test};
    const char *tag[2] = {"train", "test"};
    for (int part = 0; part < 2 && !rc; part++) {
        const int n = nr[part];
        float *x = malloc((size_t)n * d * sizeof *x), *t = malloc((size_t)n * K * sizeof *t);
        if (!x || !t) rc = HR_ENOMEM;
        for (int i = 0; !rc && i < n; i++) {
            memcpy(x + (size_t)i * d, X + (size_t)rows[part][i] * d, (size_t)d * sizeof *x);
            memcpy(t + (size_t)i * K, s->runtime + (size_t)rows[part][i] * K, (size_t)K * sizeof *t);
        }
        char name[64];
        snprintf(name, sizeof name, "x_%s.f32", tag[part]);
        if (!rc) rc = write_raw(dir, name, x, (size_t)n * d * sizeof *x);
        snprintf(name, sizeof name, "t_%s.f32", tag[part]);
        if (!rc) rc = write_raw(dir, name, t, (size_t)n * K * sizeof *t);
        free(x);
        free(t);
    }
    if (!rc) {
        char meta[128];
        int len = snprintf(meta, sizeof meta, "%d %d %d %d\n", sp.n_train, sp.n_test, d, K);
        rc = write_raw(dir, "meta.txt", meta, (size_t)len);
    }
    if (!rc) {
        /* the column names, so that another database's columns can be matched by kernel */
        size_t bytes = 0, at = 0;
        for (int k = 0; k < K; k++) bytes += strlen(s->kernels[k]) + 1;
        char *names = malloc(bytes ? bytes : 1);
        if (!names) rc = HR_ENOMEM;
        for (int k = 0; !rc && k < K; k++) at += (size_t)sprintf(names + at, "%s\n", s->kernels[k]);
        if (!rc) rc = write_raw(dir, "kernels.txt", names, bytes);
        free(names);
    }
    data_split_free(&sp);
    free(X);
    data_select_free(s);
    return rc;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

static int cmd_train(const char *data, const char *dir, const char *family, int epochs, int threads,
                     const char *config, int max_rows)
{
    const model_family *fam = model_family_find(family);
    if (!fam) return hr_error(HR_EINVAL, "unknown family %s", family);
    data_select *s = NULL;
    float *X = NULL;
    int rc = load_select(data, &s, &X);
    if (rc) return rc;
    data_split sp;
    if ((rc = data_split_random(s->n, 0.2, 0, &sp))) return rc;
    int n_train = max_rows > 0 && max_rows < sp.n_train ? max_rows : sp.n_train;
    cJSON *cfg = cJSON_Parse(config);
    if (!cfg) return hr_error(HR_EINVAL, "config is not JSON: %s", config);
    cJSON_DeleteItemFromObject(cfg, "epochs");
    cJSON_AddNumberToObject(cfg, "epochs", epochs);
    hr_log log = hr_log_stderr(HR_LOG_INFO);
    model_train_data td;
    if ((rc = model_train_data_select(s, &td))) return rc;
    td.train = sp.train, td.n_train = n_train;
    const int nv = data_codec_value_count(td.codec);
    model_ctx ctx = {0, threads, &log, cfg, NULL, 0, NULL, NULL, NULL, NULL};
    /* this benchmark owns OpenBLAS's thread count, as the pipeline does in heurist (pipeline/pipeline.c) */
    hr_blas_set_threads(fam->train_blas_threads ? fam->train_blas_threads(cfg, threads) : threads);
    model *m = NULL;
    double t0 = hr_now();
    rc = model_train(fam, &td, &ctx, &m);
    double secs = hr_now() - t0;
    cJSON_Delete(cfg);
    if (rc) return rc;
    /* test metrics through the single-problem path */
    hr_blas_set_threads(1);
    const int K = s->n_kernels, nf = data_features_count();
    float *scores = malloc((size_t)sp.n_test * K * sizeof *scores), *rt = malloc((size_t)sp.n_test * K * sizeof *rt);
    model_ws *ws = NULL;
    if (!scores || !rt) return HR_ENOMEM;
    if ((rc = model_ws_create(m, &ws))) return rc;
    for (int i = 0; i < sp.n_test && !rc; i++) {
        const int r = sp.test[i];
        rc = model_predict_select_x(m, ws, td.V + (size_t)r * nv, X + (size_t)r * nf, scores + (size_t)i * K);
        memcpy(rt + (size_t)i * K, s->runtime + (size_t)r * K, (size_t)K * sizeof *rt);
    }
    eval_select_metrics em;
    if (!rc) rc = eval_select_compute(rt, scores, sp.n_test, K, &em, NULL);
    /* the epochs alone, from the loop's clock (the last epoch's time since the loop began): what PyTorch's
     * script times; sec_per_epoch adds the input preparation and model set-up before the loop */
    const double loop = m->n_curve ? m->curve[m->n_curve - 1].seconds : secs;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.h5", dir, family);
    if (!rc) rc = model_save(m, path);
    if (!rc)
        printf("impl=heurist family=%s threads=%d n_train=%d epochs=%d sec_per_epoch=%.3f loop_sec_per_epoch=%.3f "
               "train_seconds=%.2f top1=%.4f efficiency_mean=%.4f unmeasured=%.4f params=%ld peak_rss_mb=%.1f\n",
               family, threads, n_train, epochs, secs / epochs, loop / epochs, secs, em.top1, em.efficiency_mean,
               em.unmeasured_rate, model_n_params(m), peak_rss_mb());
    free(scores);
    free(rt);
    model_ws_free(ws);
    model_free(m);
    data_split_free(&sp);
    model_train_data_free(&td);
    free(X);
    data_select_free(s);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmd_infer(const char *path, const char *data, int calls)
{
    hr_blas_set_threads(1);
    model *m = NULL;
    int rc = model_load(path, &m);
    if (rc) return rc;
    data_select *s = NULL;
    float *X = NULL;
    if ((rc = load_select(data, &s, &X))) return rc;
    const int nf = data_features_count();
    float *scores = malloc((size_t)m->n_kernels * sizeof *scores);
    double *dt = malloc((size_t)calls * sizeof *dt);
    double *V = malloc((size_t)s->n * DATA_PROBLEM_VALUES * sizeof *V);
    if (!V) return HR_ENOMEM;
    data_select_values(s, V);
    model_ws *ws = NULL;
    if (!scores || !dt) return HR_ENOMEM;
    if ((rc = model_ws_create(m, &ws))) return rc;
    double med[2];
    float sink = 0.0f;
    for (int way = 0; way < 2 && !rc; way++) {
        for (int i = 0; i < calls && !rc; i++) {
            const int r = (int)(((long)i * 7919) % s->n); /* different problems, same ones for each way */
            double t0 = hr_now();
            const double *pv = V + (size_t)r * DATA_PROBLEM_VALUES;
            rc = way ? model_predict_select(m, ws, pv, scores) : model_predict_select_x(m, ws, pv, X + (size_t)r * nf, scores);
            dt[i] = hr_now() - t0;
            sink += scores[0];
        }
        qsort(dt, (size_t)calls, sizeof *dt, cmp_double);
        med[way] = 1e6 * dt[calls / 2];
    }
    if (!rc)
        printf("impl=heurist family=%s calls=%d predict_us=%.2f predict_from_key_us=%.2f (checksum %g)\n",
               m->family->name, calls, med[0], med[1], (double)sink);
    free(scores);
    free(dt);
    free(V);
    free(X);
    data_select_free(s);
    model_ws_free(ws);
    model_free(m);
    return rc;
}

static int cmd_recombine(const char *path, const char *how, double beta)
{
    if (strcmp(how, "product") && strcmp(how, "mask") && strcmp(how, "head"))
        return hr_error(HR_EINVAL, "combine: product, mask or head");
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return hr_error(HR_EIO, "cannot open %s", path);
    hid_t g = H5Gopen2(f, "family", H5P_DEFAULT);
    int rc = g < 0 || H5Adelete(g, "combine") < 0 ? hr_error(HR_EFORMAT, "%s: no family/combine", path) : HR_OK;
    if (!rc) rc = hr_h5_attr_write_str(g, "combine", how);
    if (!rc && H5Aexists(g, "combine_weight") > 0 && H5Adelete(g, "combine_weight") < 0)
        rc = hr_error(HR_EFORMAT, "%s: cannot replace combine_weight", path);
    if (!rc) rc = hr_h5_attr_write_double(g, "combine_weight", beta);
    if (g >= 0) H5Gclose(g);
    if (H5Fclose(f) < 0 && !rc) rc = hr_error(HR_EIO, "cannot close %s", path);
    return rc;
}

int main(int argc, char **argv)
{
    int rc;
    if (argc >= 4 && !strcmp(argv[1], "export"))
        rc = cmd_export(argv[2], argv[3], argc > 4 ? atof(argv[4]) : 0.2, argc > 5 ? strtoull(argv[5], NULL, 10) : 0);
    else if (argc >= 8 && !strcmp(argv[1], "train"))
        rc = cmd_train(argv[2], argv[3], argv[4], atoi(argv[5]), atoi(argv[6]), argv[7], argc > 8 ? atoi(argv[8]) : 0);
    else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "recombine"))
        rc = cmd_recombine(argv[2], argv[3], argc == 5 ? atof(argv[4]) : 1.0);
    else if (argc == 5 && !strcmp(argv[1], "infer"))
        rc = cmd_infer(argv[2], argv[3], atoi(argv[4]));
    else {
        fprintf(stderr, "usage: bench_reformer export DATA DIR [frac] [seed]\n"
                        "       bench_reformer train DATA DIR FAMILY EPOCHS THREADS CONFIG_JSON [MAX_TRAIN_ROWS]\n"
                        "       bench_reformer infer MODEL DATA CALLS\n"
                        "       bench_reformer recombine MODEL product|mask|head [BETA]\n");
        return 2;
    }
    if (rc) {
        fprintf(stderr, "bench_reformer: %s\n", hr_last_error());
        return 1;
    }
    return 0;
}
