/* seq2seq timings on the real ConvAsm1x1U perf-db (random 80/20 split, seed 0): one training epoch
 * (no validation) at a given thread count, then per decoding mode (greedy, beam and constrained
 * beam of widths 1, 4 and 10) the single-problem decode time and the test metrics. With a MODEL file
 * (trained on the same split) training is skipped; with a BASELINE file (a `--task tune --model gbdt`
 * model trained on the same split) its per-parameter classifiers are timed and scored the same way,
 * so the table compares every decoder on one split in one run. The PyTorch counterpart of the
 * training epoch is bench/seq2seq_torch.py (same architecture, batch and threads).
 *   seq2seq_bench PERFDB [threads] [config-json | MODEL.h5] [BASELINE.h5]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model.h"
#include "models/seq2seq_internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: seq2seq_bench PERFDB [threads] [config-json | MODEL.h5] [BASELINE.h5]\n");
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    const char *cfg_text = argc > 3 ? argv[3] : "{\"epochs\": 1}";
    data_load_opts lo = {0};
    data_tune *t = NULL;
    if (data_perfdb_load(argv[1], "ConvAsm1x1U", &lo, &t)) {
        fprintf(stderr, "seq2seq_bench: %s\n", hr_last_error());
        return 1;
    }
    data_split split;
    if (data_split_random(t->n, 0.2, 0, &split)) {
        fprintf(stderr, "seq2seq_bench: %s\n", hr_last_error());
        return 1;
    }
    cJSON *cfg = cJSON_Parse(cfg_text);
    hr_log log = hr_log_silent();
    model_train_data d;
    if (model_train_data_tune(t, &d)) {
        fprintf(stderr, "seq2seq_bench: %s\n", hr_last_error());
        return 1;
    }
    d.train = split.train, d.n_train = split.n_train;
    const int nv = data_codec_value_count(d.codec);
    model_ctx ctx = {0, threads, &log, cfg, NULL, 0, NULL, NULL, NULL, NULL};
    hr_blas_set_threads(threads);
    model *m = NULL;
    size_t len = argc > 3 ? strlen(argv[3]) : 0;
    if (len > 3 && strcmp(argv[3] + len - 3, ".h5") == 0) {
        if (model_load(argv[3], &m)) {
            fprintf(stderr, "seq2seq_bench: %s\n", hr_last_error());
            return 1;
        }
    } else {
        double t0 = hr_now();
        if (model_train(&model_family_seq2seq, &d, &ctx, &m)) {
            fprintf(stderr, "seq2seq_bench: %s\n", hr_last_error());
            return 1;
        }
        double secs = hr_now() - t0;
        int epochs = m->n_curve;
        printf("train: %d rows, %d epoch(s), %.2f s/epoch (%d threads), %ld params\n", split.n_train, epochs,
               secs / epochs, threads, model_n_params(m));
    }
    const seq2seq *s = (const seq2seq *)m;
    const int L = t->length;
    const data_constraint *con = data_constraint_find(t->solver);

    hr_blas_set_threads(1);
    model *base = NULL;
    if (argc > 4 && model_load(argv[4], &base)) {
        fprintf(stderr, "seq2seq_bench: %s\n", hr_last_error());
        return 1;
    }
    if (base && (base->task != MODEL_TASK_TUNE || base->length != L)) {
        fprintf(stderr, "seq2seq_bench: %s: not a tune model of %d parameters\n", argv[4], L);
        return 1;
    }
    /* kind -1: the baseline model's own prediction */
    struct { int kind; int k; const char *name; } runs[] = {
        {-1, 0, "gbdt per-param"},
        {S2S_DECODE_GREEDY, 1, "greedy"},      {S2S_DECODE_BEAM, 4, "beam k=4"},
        {S2S_DECODE_BEAM, 10, "beam k=10"},     {S2S_DECODE_CONSTRAINED, 1, "constrained k=1"},
        {S2S_DECODE_CONSTRAINED, 4, "constrained k=4"}, {S2S_DECODE_CONSTRAINED, 10, "constrained k=10"},
    };
    model_ws *base_ws = NULL;
    s2s_infer *w = NULL;
    if ((base && model_ws_create(base, &base_ws)) || s2s_infer_create(s, &w)) {
        fprintf(stderr, "seq2seq_bench: %s\n", hr_last_error());
        return 1;
    }
    int n = split.n_test;
    double *us = malloc((size_t)n * sizeof *us);
    int32_t v[64];
    for (size_t r = base ? 0 : 1; r < sizeof runs / sizeof *runs; r++) {
        long hit = 0, exact = 0, valid = 0, fell = 0;
        for (int i = 0; i < n; i++) {
            const int row = split.test[i];
            int fb = 0;
            data_tune_problem q = {d.V + (size_t)row * nv, NULL, 0, L, NULL};
            double a = hr_now();
            if (runs[r].kind < 0) {
                if (model_predict_tune(base, base_ws, &q, v)) {
                    fprintf(stderr, "seq2seq_bench: %s\n", hr_last_error());
                    return 1;
                }
            } else {
                s2s_decode(s, w, &q, (s2s_decode_kind)runs[r].kind, runs[r].k, v, &fb);
            }
            us[i] = (hr_now() - a) * 1e6;
            int h = 0;
            for (int j = 0; j < L; j++) h += v[j] == t->values[(size_t)row * L + j];
            hit += h;
            exact += h == L;
            valid += con->valid_prefix(&t->problems[row], v, L);
            fell += fb;
        }
        printf("%-17s param_accuracy %.4f  exact %.4f  valid %.4f  fallbacks %ld\n", runs[r].name,
               (double)hit / ((double)n * L), (double)exact / n, (double)valid / n, fell);
        qsort(us, (size_t)n, sizeof *us, cmp_double);
        double mean = 0;
        for (int i = 0; i < n; i++) mean += us[i];
        printf("decode %-17s median %7.1f us  mean %7.1f us  p99 %7.1f us  (%d problems, 1 thread)\n", runs[r].name,
               us[n / 2], mean / n, us[(int)(0.99 * (n - 1))], n);
    }
    free(us);
    s2s_infer_free(w);
    model_ws_free(base_ws);
    model_free(base);
    model_free(m);
    cJSON_Delete(cfg);
    model_train_data_free(&d);
    data_split_free(&split);
    data_tune_free(t);
    return 0;
}
