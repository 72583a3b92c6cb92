/* The reformer family on a small real subset of gfx90878's find-db (tests/helpers/models_fixture.h): learning,
 * determinism, resume, save/load, single-problem vs batched paths, version refusal, config checks, and the
 * Reformer's applicability head (fewer unmeasured picks, version-1 files without it still load) and its
 * piecewise-linear input encoding (bins from the training rows' quantiles, checked files). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "eval/eval.h"
#include "helpers/models_config.h"
#include "helpers/models_fixture.h"
#include "helpers/testutil.h"
#include "models/model.h"
#include "nn/nn.h"

#define SMALL_REFORMER "{\"epochs\": 6, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"lr\": 0.003}"
/* the paper's recipe: no applicability head, z-score input, runtime-ratio labels */
#define SMALL_REFORMER_PAPER                                                                                    \
    "{\"epochs\": 6, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"lr\": 0.003, \"applicability\": 0,"  \
    " \"input\": \"zscore\", \"label\": \"soft\"}"

Test(models_reformer, loss_decreases_and_beats_the_majority_baseline, .timeout = 120)
{
    check_learns("reformer", SMALL_REFORMER);
}

Test(models_reformer, save_load_round_trip_is_bit_identical, .timeout = 120)
{
    check_round_trip("reformer", SMALL_REFORMER);
    check_round_trip("reformer", "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8, \"norm\": \"layer\","
                                 " \"input\": \"zscore\", \"dropout\": 0.1, \"label\": \"soft\", \"tau\": 0.5,"
                                 " \"combine\": \"mask\"}");
    check_round_trip("reformer", "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8, \"combine\": \"head\","
                                 " \"app_target\": \"efficiency\", \"combine_weight\": 2}");
    check_round_trip("reformer", "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8, \"applicability\": 0}");
    check_round_trip("reformer", "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8,"
                                 " \"input\": \"ple\", \"input_bins\": 8}");
}

/* Same seed and data => the same model bit for bit, with 1 or 2 OpenBLAS threads; another seed differs. */
Test(models_reformer, same_seed_is_bit_identical_across_blas_threads, .timeout = 120)
{
    fixture f = fixture_load(400000);
    const char *cfg = "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"dropout\": 0.1}";
    hr_blas_set_threads(1);
    model *a = train_family(&f, "reformer", cfg, 5, NULL, 0, NULL);
    hr_blas_set_threads(2);
    model *b = train_family(&f, "reformer", cfg, 5, NULL, 0, NULL);
    hr_blas_set_threads(1);
    model *c = train_family(&f, "reformer", cfg, 6, NULL, 0, NULL);
    float *sa = scores_of(a, &f, f.test, f.n_test), *sb = scores_of(b, &f, f.test, f.n_test);
    float *sc = scores_of(c, &f, f.test, f.n_test);
    size_t bytes = (size_t)f.n_test * a->n_kernels * sizeof *sa;
    cr_assert(memcmp(sa, sb, bytes) == 0, "same seed, 1 vs 2 BLAS threads: different models");
    cr_assert(memcmp(sa, sc, bytes) != 0, "different seeds gave the same model");
    free(sa);
    free(sb);
    free(sc);
    model_free(a);
    model_free(b);
    model_free(c);
    fixture_free(&f);
}

/* "batch_parts": a batch's parts go through the passes on up to that many threads, with BatchNorm's
 * statistics and the gradients summed in part order, so the model is the same bit for bit at 1, 2 or 3
 * threads (3 threads on 2 parts start 2). Dropout draws per part; a part count of 3 does not divide the
 * batch of 64; layer norm has no statistics to share. With SGD (updates proportional to the gradients)
 * two parts stay within float rounding of one pass. */
Test(models_reformer, batch_parts_are_bit_identical_across_threads, .timeout = 240)
{
    fixture f = fixture_load(400000);
    const char *cfgs[] = {
        "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"dropout\": 0.1, \"batch_parts\": 2}",
        "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"batch_parts\": 3, \"input\": \"ple\","
        " \"input_bins\": 8}",
        "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"batch_parts\": 3, \"norm\": \"layer\","
        " \"applicability\": 0}",
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
        float *s[3];
        model *m[3];
        for (int t = 0; t < 3; t++) {
            train_threads = t + 1;
            m[t] = train_family(&f, "reformer", cfgs[c], 5, NULL, 0, NULL);
            s[t] = scores_of(m[t], &f, f.test, f.n_test);
        }
        train_threads = 1;
        size_t bytes = (size_t)f.n_test * m[0]->n_kernels * sizeof **s;
        cr_assert(memcmp(s[0], s[1], bytes) == 0, "%s: 1 vs 2 threads: different models", cfgs[c]);
        cr_assert(memcmp(s[0], s[2], bytes) == 0, "%s: 1 vs 3 threads: different models", cfgs[c]);
        for (int t = 0; t < 3; t++) {
            free(s[t]);
            model_free(m[t]);
        }
    }
    const char *sgd[] = {"{\"epochs\": 1, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"optimizer\": \"sgd\","
                         " \"lr\": 0.01}",
                         "{\"epochs\": 1, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"optimizer\": \"sgd\","
                         " \"lr\": 0.01, \"batch_parts\": 2}"};
    train_threads = 2;
    model *one = train_family(&f, "reformer", sgd[0], 5, NULL, 0, NULL);
    model *two = train_family(&f, "reformer", sgd[1], 5, NULL, 0, NULL);
    train_threads = 1;
    float *s1 = scores_of(one, &f, f.test, f.n_test), *s2 = scores_of(two, &f, f.test, f.n_test);
    double worst = 0.0;
    for (size_t i = 0; i < (size_t)f.n_test * one->n_kernels; i++) worst = fmax(worst, fabs(s1[i] - s2[i]));
    cr_assert(worst < 1e-3, "1 vs 2 parts under SGD: scores differ by %g", worst);
    free(s1);
    free(s2);
    model_free(one);
    model_free(two);
    fixture_free(&f);
}

Test(models_reformer, resume_from_checkpoint_equals_uninterrupted_training, .timeout = 120)
{
    check_resume("reformer", "{\"epochs\": 5, \"batch_size\": 64, \"hidden\": 24, \"expand\": 16, \"dropout\": 0.1,"
                             " \"patience\": 3}");
}

Test(models_reformer, single_problem_prediction_equals_batched, .timeout = 120)
{
    check_single_vs_batched("reformer", SMALL_REFORMER, 0);
    check_single_vs_batched("reformer", SMALL_REFORMER_PAPER, 1);
    check_single_vs_batched("reformer", "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 16, \"expand\": 16,"
                                        " \"norm\": \"layer\", \"depth\": 2, \"applicability\": 0,"
                                        " \"label\": \"soft\"}", 1);
    check_single_vs_batched("reformer", "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 16, \"expand\": 16,"
                                        " \"norm\": \"layer\", \"depth\": 2, \"combine\": \"mask\"}", 0);
    check_single_vs_batched("reformer", "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 16, \"expand\": 16,"
                                        " \"input\": \"ple\", \"input_bins\": 16}", 0);
    /* the encoded input's first product folded into two columns per feature (reformer_fold_input) against the
     * batched forward over the 16-bin encoding: the validation loss to 1e-4 */
    check_single_vs_batched("reformer", "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 16, \"expand\": 16,"
                                        " \"input\": \"ple\", \"input_bins\": 16, \"applicability\": 0,"
                                        " \"label\": \"soft\"}", 1);
}

/* A const model is shared by threads with a workspace each: batch norm (the folded path) and layer norm. */
Test(models_reformer, threads_share_one_model, .timeout = 120)
{
    check_threads_share("reformer", "{\"epochs\": 1, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8}");
    check_threads_share("reformer", "{\"epochs\": 1, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8,"
                                    " \"norm\": \"layer\"}");
}

Test(models_reformer, newer_model_file_is_refused, .timeout = 120)
{
    check_newer_refused("reformer", "{\"epochs\": 1, \"hidden\": 8, \"expand\": 8}", "reformer_version");
}

Test(models_reformer, config_is_validated)
{
    fixture f = fixture_load(100000);
    const model_family *fam = model_family_find("reformer");
    const char *bad[] = {"{\"epoch\": 3}", "{\"norm\": \"group\"}", "{\"optimizer\": \"lion\"}", "{\"depth\": 0}",
                         "{\"label\": \"fastest\"}", "{\"dropout\": 1.5}", "{\"batch_size\": 1}", "{\"hidden\": 2.5}",
                         "{\"applicability\": -1}", "{\"combine\": \"sum\"}", "{\"combine_weight\": -1}",
                         "{\"app_target\": \"fastest\"}", "{\"input\": \"bins\"}", "{\"input_bins\": 1}",
                         "{\"input\": \"ple\", \"input_bins\": 5000}", "{\"batch_parts\": 0}", "{\"batch_parts\": 9}",
                         "{\"batch_size\": 8, \"batch_parts\": 5}"};
    hr_log silent = hr_log_silent();
    model_train_data d = fixture_train_data(&f);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cJSON *cfg = cJSON_Parse(bad[i]);
        model_ctx ctx = {1, 1, &silent, cfg, NULL, 0, NULL, NULL, NULL, NULL};
        model *m = NULL;
        cr_assert_eq(model_train(fam, &d, &ctx, &m), HR_EINVAL, "%s accepted", bad[i]);
        cr_assert_null(m);
        cJSON_Delete(cfg);
    }
    fixture_free(&f);
    check_loop_config_refused(&model_family_reformer, MODEL_TASK_SELECT);
    check_config_refused(&model_family_reformer, MODEL_TASK_SELECT, "{\"tau\": 0}",
                         "reformer config: \"tau\" must be a number in [1e-06, 1000000], got 0");
    check_config_refused(&model_family_reformer, MODEL_TASK_SELECT, "{\"batch_size\": 8, \"batch_parts\": 5}",
                         "reformer config: \"batch_parts\" must be at most batch_size / 2 (4), got 5");
    check_config_refused(&model_family_reformer, MODEL_TASK_SELECT, "{\"norm\": \"group\"}",
                         "reformer config: \"norm\" must be one of batch or layer, got \"group\"");
}

/* The table prints one line per option, the loop's options with the reformer's defaults included. */
Test(models_reformer, config_table_prints)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    model_config_print(&model_family_reformer, out);
    fclose(out);
    cr_assert(strstr(buf, "  batch_parts ") && strstr(buf, "product, mask or head"), "%s", buf);
    cr_assert(strstr(buf, "  epochs ") && strstr(buf, " 30 ") && strstr(buf, "adam, adamw or sgd"), "%s", buf);
    free(buf);
}

Test(models_reformer, default_size_is_about_the_papers, .timeout = 300)
{
    /* the default architecture with the full kernel vocabulary (70 kernels on gfx90878) */
    fixture f = fixture_load(100000);
    cr_assert_lt(f.sel->n_kernels, 70);
    long blocks = 0, in = f.nf, w = 92, e = 96, K = 70;
    for (int l = 0; l < 3; l++) {
        blocks += in * w + w + in * e + e + 2 * e + e * w + w;
        in = w;
    }
    cr_assert_eq(f.nf, 79);
    cr_assert_eq(blocks + w * K + K, 83866); /* the paper's instantiation: 80,978 */
    model *m = train_family(&f, "reformer", "{\"epochs\": 1, \"applicability\": 0}", 1, NULL, 0, NULL);
    cr_assert_eq(model_n_params(m), blocks + w * f.sel->n_kernels + f.sel->n_kernels);
    model_free(m);
    /* the default adds the applicability head, one more hidden -> K linear map */
    m = train_family(&f, "reformer", "{\"epochs\": 1}", 1, NULL, 0, NULL);
    cr_assert_eq(model_n_params(m), blocks + 2 * (w * f.sel->n_kernels + f.sel->n_kernels));
    model_free(m);
    fixture_free(&f);
}

/* The applicability head learns which kernels were measured for a held-out problem: ranked by the head alone
 * (combine "head": scores = log sigmoid(a)), measured kernels get a much higher mean probability than the
 * others (3-4 of ~60 kernels are measured), and its first choice was measured for most problems. (Whether it
 * lowers the unmeasured picks of the combined ranking is measured on the full data in experiments/LOG.md; a
 * 6-epoch model on a small subset cannot show it reliably.) */
Test(models_reformer, applicability_head_separates_measured_kernels, .timeout = 180)
{
    fixture f = fixture_load(1200000);
    const int K = f.sel->n_kernels;
    const char *cfg = "{\"epochs\": 6, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"lr\": 0.003,"
                      " \"combine\": \"head\"}";
    model *m = train_family(&f, "reformer", cfg, 1, NULL, 0, NULL);
    float *s = scores_of(m, &f, f.test, f.n_test);
    double sum[2] = {0, 0};
    long cnt[2] = {0, 0}, first_measured = 0;
    for (int i = 0; i < f.n_test; i++) {
        const float *t = f.sel->runtime + (size_t)f.test[i] * K, *si = s + (size_t)i * K;
        for (int k = 0; k < K; k++) {
            int measured = isfinite(t[k]) != 0;
            sum[measured] += exp(si[k]);
            cnt[measured]++;
        }
        first_measured += isfinite(t[eval_select_argmax(si, K)]) != 0;
    }
    double p_meas = sum[1] / cnt[1], p_other = sum[0] / cnt[0], hit = (double)first_measured / f.n_test;
    cr_log_info("applicability head: mean P %.3f on measured kernels, %.3f on the others; first choice measured"
                " %.3f\n", p_meas, p_other, hit);
    cr_assert_gt(p_meas, p_other + 0.4, "P(measured) %.3f vs %.3f", p_meas, p_other);
    cr_assert_gt(hit, 0.85, "first choice measured for %.3f of the problems", hit);
    free(s);
    model_free(m);
    fixture_free(&f);
}

/* Version-1 files (before the applicability head) still load, as models without the head. */
Test(models_reformer, version_1_file_loads_without_the_head, .timeout = 120)
{
    fixture f = fixture_load(200000);
    model *m = train_family(&f, "reformer", "{\"epochs\": 1, \"hidden\": 8, \"expand\": 8, \"applicability\": 0}", 1,
                            NULL, 0, NULL);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK);
    set_int_attr(path, "family", "reformer_version", 1);
    model *m2 = NULL;
    cr_assert_eq(model_load(path, &m2), HR_OK, "%s", hr_last_error());
    float *a = scores_of(m, &f, f.test, f.n_test), *b = scores_of(m2, &f, f.test, f.n_test);
    cr_assert(memcmp(a, b, (size_t)f.n_test * m->n_kernels * sizeof *a) == 0);
    free(a);
    free(b);
    model_free(m2);
    model_free(m);
    remove(path);
    free(path);
    fixture_free(&f);
}

/* ---- piecewise-linear input encoding ---- */

static float test_slog(float v)
{
    return v >= 0.0f ? log2f(1.0f + v) : -log2f(1.0f - v);
}

static int cmp_f(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Input "ple": the bins stored in the model file are, feature by feature and in order, the intervals between
 * the distinct order statistics v_(floor(i (n - 1) / B)), i = 0..B, of the slog feature over the training rows
 * (recomputed here on their own); features with fewer than three distinct edges (flags, one-hot codes) have
 * none; the first block reads the features and the encoding columns. */
Test(models_reformer, ple_bins_are_the_training_quantiles, .timeout = 120)
{
    fixture f = fixture_load(400000);
    const int B = 8, H = 16, E = 8;
    char cfg[160];
    snprintf(cfg, sizeof cfg, "{\"epochs\": 1, \"hidden\": %d, \"expand\": %d, \"input\": \"ple\", \"input_bins\": %d}",
             H, E, B);
    model *m = train_family(&f, "reformer", cfg, 1, NULL, 0, NULL);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK, "%s", hr_last_error());
    size_t n = 0, n2;
    int *src = family_read(path, "ple_feature", H5T_NATIVE_INT, &n);
    float *lo = family_read(path, "ple_lo", H5T_NATIVE_FLOAT, &n2);
    cr_assert_eq(n2, n);
    float *hi = family_read(path, "ple_hi", H5T_NATIVE_FLOAT, &n2);
    cr_assert_eq(n2, n);
    float *v = malloc((size_t)f.n_train * sizeof *v), e[9];
    size_t c = 0;
    int with_bins = 0, flags_without = 0;
    for (int j = 0; j < f.nf; j++) {
        for (int i = 0; i < f.n_train; i++) v[i] = test_slog(f.X[(size_t)f.train[i] * f.nf + j]);
        qsort(v, (size_t)f.n_train, sizeof *v, cmp_f);
        int ne = 0;
        for (int i = 0; i <= B; i++) {
            float q = v[(size_t)i * (size_t)(f.n_train - 1) / B];
            if (ne == 0 || q > e[ne - 1]) e[ne++] = q;
        }
        if (ne < 3) {
            flags_without += ne == 2;
            continue;
        }
        with_bins++;
        for (int t = 0; t + 1 < ne; t++, c++) {
            cr_assert_lt(c, n, "fewer bins stored than computed (feature %d)", j);
            cr_assert_eq(src[c], j, "bin %zu: feature %d, expected %d", c, src[c], j);
            cr_assert(lo[c] == e[t] && hi[c] == e[t + 1], "feature %d bin %d: [%g, %g] vs [%g, %g]", j, t, lo[c], hi[c],
                      e[t], e[t + 1]);
        }
    }
    cr_assert_eq(c, n, "%zu bins stored, %zu computed", n, c);
    cr_assert_gt(with_bins, 20, "%d features encoded", with_bins);
    cr_assert_gt(flags_without, 10, "%d two-valued features", flags_without);
    /* the first block reads nf + n inputs: A1 (H) and A2 (E) rows */
    const long in = f.nf + (long)n;
    long expect = in * H + H + in * E + E + 2 * E + E * H + H + 2 * (H * E + E + H * H + H + 2 * E + E * H + H);
    expect += 2 * (H * m->n_kernels + m->n_kernels);
    cr_assert_eq(model_n_params(m), expect, "%ld params, expected %ld", model_n_params(m), expect);
    free(v);
    free(src);
    free(lo);
    free(hi);
    model_free(m);
    remove(path);
    free(path);
    fixture_free(&f);
}

/* A model file whose encoding bins are broken is refused with a message naming the bin */
Test(models_reformer, broken_ple_bins_are_refused, .timeout = 120)
{
    fixture f = fixture_load(200000);
    const char *cfg = "{\"epochs\": 1, \"hidden\": 8, \"expand\": 8, \"input\": \"ple\"}";
    model *m = train_family(&f, "reformer", cfg, 1, NULL, 0, NULL);
    for (int what = 0; what < 2; what++) {
        char *path = test_tmppath(".h5");
        cr_assert_eq(model_save(m, path), HR_OK);
        size_t n;
        const char *name = what ? "ple_feature" : "ple_hi";
        const hid_t type = what ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT;
        void *buf = family_read(path, name, type, &n);
        if (what) ((int *)buf)[n - 1] = 1000; /* not a feature */
        else ((float *)buf)[0] = -1e30f;     /* hi below lo */
        family_write(path, name, type, buf);
        free(buf);
        model *m2 = NULL;
        cr_assert_eq(model_load(path, &m2), HR_EFORMAT, "%s", hr_last_error());
        cr_assert_null(m2);
        cr_assert(strstr(hr_last_error(), what ? "not a feature" : "is not an interval"), "%s", hr_last_error());
        remove(path);
        free(path);
    }
    model_free(m);
    fixture_free(&f);
}

/* A file whose bins overlap (here by one float step, which moves no training value) is still a model: prediction
 * takes the plain product over the z-scored encoding instead of the folded one, and agrees with the original */
Test(models_reformer, overlapping_ple_bins_take_the_plain_product, .timeout = 120)
{
    fixture f = fixture_load(200000);
    const char *cfg = "{\"epochs\": 2, \"hidden\": 8, \"expand\": 8, \"input\": \"ple\", \"input_bins\": 8}";
    model *m = train_family(&f, "reformer", cfg, 1, NULL, 0, NULL);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK);
    size_t n, n2;
    float *lo = family_read(path, "ple_lo", H5T_NATIVE_FLOAT, &n);
    int *src = family_read(path, "ple_feature", H5T_NATIVE_INT, &n2);
    size_t c = 1;
    while (c < n && src[c] != src[c - 1]) c++;
    cr_assert_lt(c, n, "no feature with two bins");
    lo[c] = nextafterf(lo[c], -INFINITY); /* below the end of the bin before */
    family_write(path, "ple_lo", H5T_NATIVE_FLOAT, lo);
    model *m2 = NULL;
    cr_assert_eq(model_load(path, &m2), HR_OK, "%s", hr_last_error());
    const int K = m->n_kernels;
    float *s1 = scores_of(m, &f, f.valid, f.n_valid), *s2 = scores_of(m2, &f, f.valid, f.n_valid);
    for (size_t i = 0; i < (size_t)f.n_valid * K; i++)
        cr_assert_float_eq(s2[i], s1[i], 1e-4f * fabsf(s1[i]) + 1e-4f, "score %zu: %g vs %g", i, s2[i], s1[i]);
    free(s1);
    free(s2);
    free(lo);
    free(src);
    model_free(m2);
    model_free(m);
    remove(path);
    free(path);
    fixture_free(&f);
}
