/* The Reformer's pairs mode on a small benchmark table written by the test from a known cost model (a GEMM
 * on 108 compute units: waves of output tiles times split-K, larger tiles faster per element, split-K paying
 * a reduction), each problem measuring about three quarters of the configurations: it recovers the cost
 * model's best configuration, its files give identical scores, predict_candidates agrees with
 * predict_select, and the mode is checked; the same for the towers mode, and its thread-count determinism. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/h5.h"
#include "data/table.h"
#include "helpers/table_fixture.h"
#include "helpers/testutil.h"
#include "models/model.h"

#define SCHEMA                                                                                                  \
    "{\"problem\": [\"M\", \"N\", \"K\"], \"kernel\": [\"tile_m\", \"tile_n\", \"split_k\"],"                 \
    " \"measure\": \"time_us\", \"better\": \"lower\", \"tiles\": {\"tile_m\": \"M\", \"tile_n\": \"N\"},"        \
    " \"reduction\": \"K\", \"split\": \"split_k\", \"cus\": 108}"
#define PAIRS_CFG                                                                                               \
    "{\"mode\": \"pairs\", \"epochs\": 40, \"batch_size\": 16, \"hidden\": 32, \"expand\": 24, \"lr\": 0.003," \
    " \"patience\": 0}"

static const int tiles[] = {16, 32, 64, 128, 256};
static const int splits[] = {1, 2, 4};
enum { NT = 5, NS = 3 };

/* microseconds of tile (tm, tn) split s ways on M x N x K: waves of 108 tiles, a tile's efficiency a / (a + 24)
 * with a = tm tn / (tm + tn), and split-K's reduction */
static double cost(int M, int N, int K, int tm, int tn, int s)
{
    const double ctas = ceil((double)M / tm) * ceil((double)N / tn) * s, waves = ceil(ctas / 108.0);
    const double a = (double)tm * tn / (tm + tn);
    const double compute = waves * tm * tn * ceil((double)K / s) / (a / (a + 24.0)) * 1e-5;
    return 3.0 + compute + (s > 1 ? 2.0 + s * (double)M * N * 4e-6 : 0.0);
}

/* n problems (seeded), each measuring the configurations a hash keeps */
static table_fixture pairs_table_make(int n, uint64_t seed)
{
    hr_rng rng;
    hr_rng_seed(&rng, seed);
    size_t cap = (size_t)n * NT * NT * NS * 64 + 64, len = 0;
    char *csv = malloc(cap);
    len += (size_t)snprintf(csv, cap, "M,N,K,tile_m,tile_n,split_k,time_us\n");
    for (int i = 0; i < n; i++) {
        const int M = 16 << (hr_rng_next(&rng) % 9), N = 16 << (hr_rng_next(&rng) % 9);
        const int K = 64 << (hr_rng_next(&rng) % 8);
        for (int a = 0; a < NT; a++)
            for (int b = 0; b < NT; b++)
                for (int c = 0; c < NS; c++) {
                    if (hr_rng_next(&rng) % 4 == 0 && !(a == 2 && b == 2 && c == 0)) continue; /* unmeasured */
                    len += (size_t)snprintf(csv + len, cap - len, "%d,%d,%d,%d,%d,%d,%.6f\n", M, N, K, tiles[a],
                                            tiles[b], splits[c], cost(M, N, K, tiles[a], tiles[b], splits[c]));
                }
    }
    data_load_opts opts = {.strict = 1, .threads = 1};
    data_select *sel = NULL;
    cr_assert_eq(data_table_parse("gemm.csv", csv, len, ',', SCHEMA, &opts, &sel), HR_OK);
    free(csv);
    return table_fixture_from_select(sel);
}

static model *train_on(const table_fixture *f, const char *config, uint64_t seed)
{
    cJSON *cfg = cJSON_Parse(config);
    cr_assert_not_null(cfg, "bad JSON %s", config);
    model_train_data d;
    cr_assert_eq(model_train_data_select(f->sel, &d), HR_OK, "%s", hr_last_error());
    d.train = f->train, d.n_train = f->n_train, d.valid = f->valid, d.n_valid = f->n_valid;
    model_ctx ctx = {.seed = seed, .threads = 1, .config = cfg};
    model *m = NULL;
    int rc = model_train(&model_family_reformer, &d, &ctx, &m);
    model_train_data_free(&d);
    cJSON_Delete(cfg);
    cr_assert_eq(rc, HR_OK, "train: %s", hr_last_error());
    return m;
}

/* scores (n, K) of rows through model_predict_candidates over the model's own configurations */
static float *scores_of(const model *m, const table_fixture *f, const int *rows, int n)
{
    const int K = m->n_kernels;
    float *s = malloc((size_t)n * K * sizeof *s);
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    for (int i = 0; i < n; i++)
        cr_assert_eq(model_predict_candidates(m, ws, f->X + (size_t)rows[i] * f->F, m->kernel_values, K,
                                              s + (size_t)i * K),
                     HR_OK, "%s", hr_last_error());
    model_ws_free(ws);
    return s;
}

/* mean over rows of t_best / t_pick, the pick ranked among the problem's measured configurations only */
static double efficiency_mean(const table_fixture *f, const float *scores, const int *rows, int n)
{
    const int K = f->sel->n_kernels;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        const float *t = f->sel->runtime + (size_t)rows[i] * K, *s = scores + (size_t)i * K;
        int pick = -1;
        float tmin = INFINITY;
        for (int k = 0; k < K; k++) {
            if (!isfinite(t[k])) continue;
            tmin = t[k] < tmin ? t[k] : tmin;
            if (pick < 0 || s[k] > s[pick]) pick = k;
        }
        sum += tmin / t[pick];
    }
    return sum / n;
}

Test(models_reformer_pairs, recovers_the_cost_models_best_configuration, .timeout = 120)
{
    table_fixture f = pairs_table_make(400, 3);
    model *m = train_on(&f, PAIRS_CFG, 1);
    cr_assert_not_null(data_codec_table_spec(m->codec));
    float *s = scores_of(m, &f, f.test, f.n_test);
    const double eff = efficiency_mean(&f, s, f.test, f.n_test);
    cr_expect_gt(eff, 0.99, "test efficiency mean %.4f", eff);
    /* the table is no easy one: the configuration most often fastest on the training problems, first among the
     * measured by that count, does much worse */
    const int K = f.sel->n_kernels;
    float *count = calloc((size_t)K, sizeof *count), *base = malloc((size_t)f.n_test * K * sizeof *base);
    for (int i = 0; i < f.n_train; i++) count[data_select_best(f.sel, f.train[i])] += 1.0f;
    for (int i = 0; i < f.n_test; i++) memcpy(base + (size_t)i * K, count, (size_t)K * sizeof *base);
    const double eff_base = efficiency_mean(&f, base, f.test, f.n_test);
    cr_expect_lt(eff_base, 0.9, "majority baseline efficiency %.4f", eff_base);
    free(count);
    free(base);
    /* the head is one score: far fewer parameters than a head over the 25 configurations would add */
    cr_expect_lt(model_n_params(m), 32L * 75 + 32 * 32 * 8);
    free(s);
    model_free(m);
    table_fixture_free(&f);
}

Test(models_reformer_pairs, save_load_round_trip_gives_identical_scores, .timeout = 120)
{
    table_fixture f = pairs_table_make(120, 4);
    const char *cfgs[] = {
        "{\"mode\": \"pairs\", \"epochs\": 3, \"batch_size\": 8, \"hidden\": 16, \"expand\": 8}",
        "{\"mode\": \"pairs\", \"epochs\": 3, \"batch_size\": 8, \"hidden\": 16, \"expand\": 8, \"norm\": \"layer\","
        " \"input\": \"zscore\", \"label\": \"soft\"}",
        "{\"mode\": \"pairs\", \"epochs\": 3, \"batch_size\": 8, \"hidden\": 16, \"expand\": 8, \"input\": \"ple\","
        " \"input_bins\": 4, \"label\": \"onehot\"}",
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
        model *m = train_on(&f, cfgs[c], 2), *back = NULL;
        char *path = test_tmppath(".h5");
        cr_assert_eq(model_save(m, path), HR_OK, "%s", hr_last_error());
        cr_assert_eq(model_load(path, &back), HR_OK, "%s", hr_last_error());
        float *a = scores_of(m, &f, f.test, f.n_test), *b = scores_of(back, &f, f.test, f.n_test);
        cr_expect(memcmp(a, b, (size_t)f.n_test * m->n_kernels * sizeof *a) == 0, "config %zu: scores differ", c);
        cr_expect_eq(model_n_params(m), model_n_params(back));
        free(a);
        free(b);
        remove(path);
        free(path);
        model_free(m);
        model_free(back);
    }
    table_fixture_free(&f);
}

/* predict_select scores the model's configurations through predict_candidates: the same bits; any other
 * list (reversed, one configuration alone) scores each configuration the same up to rounding. */
Test(models_reformer_pairs, predict_candidates_equals_predict_select, .timeout = 120)
{
    table_fixture f = pairs_table_make(120, 5);
    model *m =
        train_on(&f, "{\"mode\": \"pairs\", \"epochs\": 3, \"batch_size\": 8, \"hidden\": 16, \"expand\": 8}", 3);
    const int K = m->n_kernels, nk = data_codec_config_width(m->codec);
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    float *sel = malloc((size_t)K * sizeof *sel), *cand = malloc((size_t)K * sizeof *cand);
    float *rev = malloc((size_t)K * sizeof *rev);
    double *kv_rev = malloc((size_t)K * nk * sizeof *kv_rev);
    for (int k = 0; k < K; k++)
        memcpy(kv_rev + (size_t)k * nk, m->kernel_values + (size_t)(K - 1 - k) * nk, (size_t)nk * sizeof *kv_rev);
    const data_table *t = f.sel->table;
    const int np = t->spec.n_problem + t->spec.n_hardware;
    for (int i = 0; i < f.n_test; i++) {
        const float *x = f.X + (size_t)f.test[i] * f.F;
        cr_assert_eq(model_predict_select_x(m, ws, t->pv + (size_t)f.test[i] * np, x, sel), HR_OK, "%s", hr_last_error());
        cr_assert_eq(model_predict_candidates(m, ws, x, m->kernel_values, K, cand), HR_OK);
        cr_assert(memcmp(sel, cand, (size_t)K * sizeof *sel) == 0, "problem %d: predict_select differs", i);
        cr_assert_eq(model_predict_candidates(m, ws, x, kv_rev, K, rev), HR_OK);
        for (int k = 0; k < K; k++) {
            cr_assert_float_eq(rev[K - 1 - k], sel[k], 1e-4f * (1.0f + fabsf(sel[k])), "problem %d kernel %d", i, k);
            float one;
            cr_assert_eq(model_predict_candidates(m, ws, x, m->kernel_values + (size_t)k * nk, 1, &one), HR_OK);
            cr_assert_float_eq(one, sel[k], 1e-4f * (1.0f + fabsf(sel[k])), "problem %d kernel %d alone", i, k);
        }
    }
    free(sel);
    free(cand);
    free(rev);
    free(kv_rev);
    model_ws_free(ws);
    model_free(m);
    table_fixture_free(&f);
}

/* auto picks pairs on a table (a head of one score), classes stays available there and records its mode */
Test(models_reformer_pairs, mode_auto_classes_and_files, .timeout = 120)
{
    table_fixture f = pairs_table_make(120, 6);
    const char *base = "\"epochs\": 2, \"batch_size\": 8, \"hidden\": 16, \"expand\": 8, \"applicability\": 0";
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{%s}", base);
    model *a = train_on(&f, cfg, 4);
    snprintf(cfg, sizeof cfg, "{\"mode\": \"pairs\", %s}", base);
    model *p = train_on(&f, cfg, 4);
    snprintf(cfg, sizeof cfg, "{\"mode\": \"classes\", %s}", base);
    model *c = train_on(&f, cfg, 4);
    cr_expect_eq(model_n_params(a), model_n_params(p));
    cr_expect_neq(model_n_params(c), model_n_params(p));
    /* a classes model answers candidates by name: an unknown configuration scores -inf */
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(c, &ws), HR_OK);
    double kv[3] = {c->kernel_values[0], 12345.0, 1.0};
    float s[2];
    const double *two = c->kernel_values;
    cr_assert_eq(model_predict_candidates(c, ws, f.X, two, 1, s), HR_OK, "%s", hr_last_error());
    cr_expect(isfinite(s[0]));
    cr_assert_eq(model_predict_candidates(c, ws, f.X, kv, 1, s), HR_OK, "%s", hr_last_error());
    cr_expect(isinf(s[0]) && s[0] < 0, "unknown configuration scored %g", s[0]);
    model_ws_free(ws);
    /* the file records the mode */
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(p, path), HR_OK);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(file, 0);
    hid_t g = H5Gopen2(file, "family", H5P_DEFAULT);
    char *mode = NULL;
    cr_assert_eq(hr_h5_attr_read_str(g, "mode", &mode), HR_OK);
    cr_expect_str_eq(mode, "pairs");
    free(mode);
    H5Gclose(g);
    H5Fclose(file);
    remove(path);
    free(path);
    model_free(a);
    model_free(p);
    model_free(c);
    table_fixture_free(&f);
}

Test(models_reformer_pairs, pairs_mode_needs_a_table)
{
    cJSON *cfg = cJSON_Parse("{\"mode\": \"pairs\"}");
    data_select sel;
    memset(&sel, 0, sizeof sel);
    float X[1] = {0};
    int rows[1] = {0};
    data_codec *conv = NULL;
    cr_assert_eq(data_codec_conv(&conv), HR_OK);
    model_train_data d = {.task = MODEL_TASK_SELECT, .codec = conv, .sel = &sel, .X = X, .n_features = 1,
                          .train = rows, .n_train = 1};
    model_ctx ctx = {.seed = 1, .threads = 1, .config = cfg};
    model *m = NULL;
    cr_expect_eq(model_train(&model_family_reformer, &d, &ctx, &m), HR_EINVAL);
    cr_expect_null(m);
    cr_expect(strstr(hr_last_error(), "benchmark table") != NULL, "%s", hr_last_error());
    cJSON_Delete(cfg);
    cfg = cJSON_Parse("{\"mode\": \"rows\"}");
    ctx.config = cfg;
    cr_expect_neq(model_train(&model_family_reformer, &d, &ctx, &m), HR_OK);
    cr_expect(strstr(hr_last_error(), "mode") != NULL, "%s", hr_last_error());
    cJSON_Delete(cfg);
    data_codec_free(conv);
}

/* ---- mode "towers": u(problem) . v(configuration) + w . q(pair) ---- */

#define TOWERS_CFG                                                                                               \
    "{\"mode\": \"towers\", \"epochs\": 80, \"batch_size\": 16, \"hidden\": 32, \"expand\": 24, \"tower_dim\": 16," \
    " \"config_hidden\": 32, \"lr\": 0.003, \"patience\": 0}"

static model *train_threads(const table_fixture *f, const char *config, uint64_t seed, int threads)
{
    cJSON *cfg = cJSON_Parse(config);
    cr_assert_not_null(cfg, "bad JSON %s", config);
    model_train_data d;
    cr_assert_eq(model_train_data_select(f->sel, &d), HR_OK, "%s", hr_last_error());
    d.train = f->train, d.n_train = f->n_train, d.valid = f->valid, d.n_valid = f->n_valid;
    model_ctx ctx = {.seed = seed, .threads = threads, .config = cfg};
    model *m = NULL;
    int rc = model_train(&model_family_reformer, &d, &ctx, &m);
    model_train_data_free(&d);
    cJSON_Delete(cfg);
    cr_assert_eq(rc, HR_OK, "train: %s", hr_last_error());
    return m;
}

/* the factorised score still finds the cost model's best configurations: above 0.97 where the majority
 * configuration stays below 0.9 (the pairs test above) */
Test(models_reformer_towers, recovers_the_cost_models_best_configuration, .timeout = 120)
{
    table_fixture f = pairs_table_make(400, 3);
    model *m = train_on(&f, TOWERS_CFG, 1);
    float *s = scores_of(m, &f, f.test, f.n_test);
    const double eff = efficiency_mean(&f, s, f.test, f.n_test);
    cr_expect_gt(eff, 0.97, "test efficiency mean %.4f", eff);
    free(s);
    model_free(m);
    table_fixture_free(&f);
}

/* same data, config and seed: the same model bits on one thread and on two */
Test(models_reformer_towers, deterministic_for_any_thread_count, .timeout = 120)
{
    table_fixture f = pairs_table_make(120, 7);
    const char *cfg = "{\"mode\": \"towers\", \"epochs\": 3, \"batch_size\": 8, \"hidden\": 16, \"expand\": 8}";
    model *a = train_threads(&f, cfg, 5, 1), *b = train_threads(&f, cfg, 5, 2), *c = train_threads(&f, cfg, 6, 1);
    float *sa = scores_of(a, &f, f.test, f.n_test), *sb = scores_of(b, &f, f.test, f.n_test);
    float *sc = scores_of(c, &f, f.test, f.n_test);
    const size_t n = (size_t)f.n_test * a->n_kernels * sizeof *sa;
    cr_expect(memcmp(sa, sb, n) == 0, "one and two threads train different models");
    cr_expect(memcmp(sa, sc, n) != 0, "another seed trains the same model");
    free(sa);
    free(sb);
    free(sc);
    model_free(a);
    model_free(b);
    model_free(c);
    table_fixture_free(&f);
}

/* files: identical scores after a round trip (batch and layer norm, ple input); a truncated file and a file whose
 * configuration z-score was overwritten with a zero std are refused with a reason */
Test(models_reformer_towers, files_round_trip_and_corrupted_files_are_refused, .timeout = 120)
{
    table_fixture f = pairs_table_make(120, 4);
    const char *cfgs[] = {
        "{\"mode\": \"towers\", \"epochs\": 3, \"batch_size\": 8, \"hidden\": 16, \"expand\": 8}",
        "{\"mode\": \"towers\", \"epochs\": 3, \"batch_size\": 8, \"hidden\": 16, \"expand\": 8, \"norm\": \"layer\","
        " \"input\": \"ple\", \"input_bins\": 4, \"tower_dim\": 4}",
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
        model *m = train_on(&f, cfgs[c], 2), *back = NULL;
        char *path = test_tmppath(".h5");
        cr_assert_eq(model_save(m, path), HR_OK, "%s", hr_last_error());
        cr_assert_eq(model_load(path, &back), HR_OK, "%s", hr_last_error());
        float *a = scores_of(m, &f, f.test, f.n_test), *b = scores_of(back, &f, f.test, f.n_test);
        cr_expect(memcmp(a, b, (size_t)f.n_test * m->n_kernels * sizeof *a) == 0, "config %zu: scores differ", c);
        free(a);
        free(b);
        model_free(back);
        if (c == 0) {
            /* a zero std in config_std */
            hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
            cr_assert_geq(file, 0);
            hid_t g = H5Gopen2(file, "family", H5P_DEFAULT);
            cr_assert_geq(g, 0);
            hid_t ds = H5Dopen2(g, "config_std", H5P_DEFAULT);
            cr_assert_geq(ds, 0);
            float *sd = calloc(64, sizeof *sd);
            cr_assert_geq(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, sd), 0);
            sd[0] = 0.0f;
            cr_assert_geq(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, sd), 0);
            free(sd);
            H5Dclose(ds);
            H5Gclose(g);
            H5Fclose(file);
            back = NULL;
            cr_expect_neq(model_load(path, &back), HR_OK);
            /* the file's checksum catches it first; a file without one would fail the std check */
            cr_expect(strstr(hr_last_error(), "damaged") || strstr(hr_last_error(), "config[0]"), "%s",
                      hr_last_error());
            cr_expect_null(back);
            /* truncated to half its size */
            FILE *fp = fopen(path, "rb");
            fseek(fp, 0, SEEK_END);
            long size = ftell(fp);
            fclose(fp);
            cr_assert_eq(truncate(path, size / 2), 0);
            cr_expect_neq(model_load(path, &back), HR_OK);
            cr_expect_null(back);
        }
        remove(path);
        free(path);
        model_free(m);
    }
    table_fixture_free(&f);
}
