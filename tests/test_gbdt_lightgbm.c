/* gbdt LightGBM text format: fixtures from real LightGBM 4.6, malformed inputs, export/reimport. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "helpers/testutil.h"
#include "test_gbdt_util.h"

#define FIX HEURIST_SOURCE_DIR "/tests/fixtures/lightgbm/"

static void check_fixture(const char *model, const char *test, const char *expect, int raw)
{
    gbdt_booster *b;
    int rc = gbdt_lightgbm_load(model, &b);
    cr_assert_eq(rc, 0, "%s", hr_last_error());
    float *tab, *want;
    size_t n, nw;
    int cols, wc;
    cr_assert_eq(tgb_read_tsv(test, &tab, &n, &cols), 0);
    cr_assert_eq(tgb_read_tsv(expect, &want, &nw, &wc), 0);
    int d = cols - 1, K = gbdt_booster_num_class(b);
    cr_assert_eq(d, gbdt_booster_num_features(b));
    cr_assert_eq(nw, n);
    cr_assert_eq(wc, K);
    /* the expected values were printed with 17 digits; re-read them as doubles */
    double *ref = malloc(n * K * sizeof *ref);
    {
        char *buf;
        size_t len;
        cr_assert_eq(hr_file_read_all(expect, &buf, &len), 0);
        char *s = buf;
        for (size_t i = 0; i < n * K; i++) ref[i] = strtod(s, &s);
        free(buf);
    }
    float *x = malloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++) memcpy(x + i * d, tab + i * cols + 1, d * sizeof *x);
    double *out = malloc(n * K * sizeof *out);
    cr_assert_eq(gbdt_booster_predict(b, x, n, raw, 2, out), 0);
    double worst = 0;
    for (size_t i = 0; i < n * K; i++) worst = fmax(worst, fabs(out[i] - ref[i]));
    cr_assert_lt(worst, 1e-6, "%s: max abs error %g", expect, worst);
    /* single-row path agrees with the batch path */
    double row[8];
    gbdt_booster_predict_row(b, x, row);
    if (raw) gbdt_booster_predict_raw_row(b, x, row);
    for (int k = 0; k < K; k++) cr_assert_eq(row[k], out[k]);
    free(ref), free(x), free(out), free(tab), free(want);
    gbdt_booster_free(b);
}

Test(gbdt_lightgbm, regression_fixture_matches_lightgbm)
{
    check_fixture(FIX "regression_model.txt", FIX "regression_test.tsv", FIX "regression_pred.txt", 0);
}

Test(gbdt_lightgbm, multiclass_fixture_raw_and_probabilities_match_lightgbm)
{
    check_fixture(FIX "multiclass_model.txt", FIX "multiclass_test.tsv", FIX "multiclass_raw.txt", 1);
    check_fixture(FIX "multiclass_model.txt", FIX "multiclass_test.tsv", FIX "multiclass_pred.txt", 0);
}

Test(gbdt_lightgbm, fixture_header_is_read)
{
    gbdt_booster *b;
    cr_assert_eq(gbdt_lightgbm_load(FIX "multiclass_model.txt", &b), 0, "%s", hr_last_error());
    cr_assert_eq(gbdt_booster_num_class(b), 4);
    cr_assert_eq(gbdt_booster_num_trees(b), 120);
    cr_assert_eq(gbdt_booster_objective(b), GBDT_OBJECTIVE_SOFTMAX);
    cr_assert_str_eq(gbdt_booster_feature_name(b, 25), "Column_25");
    gbdt_booster_free(b);
}

/* Replaces the first occurrence of `from` in the fixture text by `to` and parses the result. */
static int parse_edited(const char *from, const char *to)
{
    char *buf;
    size_t len;
    cr_assert_eq(hr_file_read_all(FIX "regression_model.txt", &buf, &len), 0);
    char *at = strstr(buf, from);
    cr_assert_not_null(at, "fixture lacks '%s'", from);
    size_t nf = strlen(from), nt = strlen(to);
    char *edited = malloc(len - nf + nt + 1);
    memcpy(edited, buf, at - buf);
    memcpy(edited + (at - buf), to, nt);
    memcpy(edited + (at - buf) + nt, at + nf, len - (at - buf) - nf + 1);
    gbdt_booster *b = NULL;
    int rc = gbdt_lightgbm_parse(edited, strlen(edited), "edited.txt", &b);
    if (rc == 0) gbdt_booster_free(b);
    free(edited);
    free(buf);
    return rc;
}

Test(gbdt_lightgbm, malformed_text_gives_errors)
{
    struct { const char *from, *to, *msg; } cases[] = {
        {"tree\nversion", "forest\nversion", "not a LightGBM"},
        {"version=v4", "version=v9", "version"},
        {"max_feature_idx=25\n", "", "max_feature_idx"},
        {"objective=regression", "objective=binary", "objective"},
        {"split_feature=8 7 7 0", "split_feature=8 7 x 0", "split_feature"},
        {"split_feature=8 7 7 0", "split_feature=8 7 0", "split_feature"},
        {"split_feature=8 7 7 0", "split_feature=8 7 7 99", "feature 99"},
        {"threshold=5.5370700000000008", "threshold=abc", "threshold"},
        {"left_child=1 3 5 7", "left_child=1 3 5 0", "child"},
        {"leaf_value=-0.58033163506768448", "leaf_value=-0.5803x", "leaf_value"},
        {"cat_threshold=1\n", "cat_threshold=-1\n", "cat_threshold"},
        {"cat_boundaries=0 1\n", "", "cat_boundaries"},
        {"decision_type=10 10 10 10 10 8 8 8 8 8 1", "decision_type=10 10 10 10 10 8 8 8 8 8 300", "decision_type"},
        {"\nend of trees", "\n", "end of trees"},
        {"num_leaves=15", "num_leaves=-3", "num_leaves"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = parse_edited(cases[i].from, cases[i].to);
        cr_assert_lt(rc, 0, "case %zu accepted", i);
        cr_assert_not_null(strstr(hr_last_error(), cases[i].msg), "case %zu: '%s' lacks '%s'", i, hr_last_error(),
                           cases[i].msg);
    }
    gbdt_booster *b;
    cr_assert_lt(gbdt_lightgbm_parse("", 0, "empty.txt", &b), 0);
    cr_assert_null(b);
    cr_assert_lt(gbdt_lightgbm_load("/nonexistent/model.txt", &b), 0);
    /* every prefix of a model is malformed (truncation) and must fail cleanly */
    char *buf;
    size_t len;
    cr_assert_eq(hr_file_read_all(FIX "regression_model.txt", &buf, &len), 0);
    for (size_t cut = 0; cut < 40000 && cut < len; cut += 997) {
        cr_assert_lt(gbdt_lightgbm_parse(buf, cut, "cut.txt", &b), 0, "prefix %zu accepted", cut);
        cr_assert_null(b);
    }
    free(buf);
}

static void export_roundtrip(gbdt_params *p, const float *x, const float *y, size_t n, int d, const uint8_t *cat)
{
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y, .is_categorical = cat};
    gbdt_booster *b, *back;
    cr_assert_eq(gbdt_booster_train(p, &data, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    char path[512];
    snprintf(path, sizeof path, "%s/test_gbdt_lgb_XXXXXX", test_tmpdir());
    int fd = mkstemp(path);
    close(fd);
    cr_assert_eq(gbdt_lightgbm_save(b, path), 0, "%s", hr_last_error());
    cr_assert_eq(gbdt_lightgbm_load(path, &back), 0, "%s", hr_last_error());
    int K = gbdt_booster_num_class(b);
    cr_assert_eq(gbdt_booster_num_class(back), K);
    for (size_t i = 0; i < n; i++) {
        double a[8], c[8];
        gbdt_booster_predict_row(b, x + i * d, a);
        gbdt_booster_predict_row(back, x + i * d, c);
        for (int k = 0; k < K; k++) cr_assert_float_eq(a[k], c[k], 1e-12, "row %zu", i);
    }
    /* the writer's output parses back to the same text */
    char *t1, *t2;
    size_t l1, l2;
    char path2[512];
    snprintf(path2, sizeof path2, "%s/test_gbdt_lgb2_XXXXXX", test_tmpdir());
    fd = mkstemp(path2);
    close(fd);
    cr_assert_eq(gbdt_lightgbm_save(back, path2), 0);
    cr_assert_eq(hr_file_read_all(path, &t1, &l1), 0);
    cr_assert_eq(hr_file_read_all(path2, &t2, &l2), 0);
    char *tail1 = strstr(t1, "end of trees"), *tail2 = strstr(t2, "end of trees");
    cr_assert_eq(tail1 - t1, tail2 - t2);
    cr_assert_eq(memcmp(t1, t2, tail1 - t1), 0);
    free(t1), free(t2);
    unlink(path), unlink(path2);
    gbdt_booster_free(b);
    gbdt_booster_free(back);
}

Test(gbdt_lightgbm, export_reimport_round_trip_regression_with_nan_and_categorical)
{
    size_t n = 1500;
    int d = 4;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(3, n, d, x, y);
    hr_rng r;
    hr_rng_seed(&r, 4);
    for (size_t i = 0; i < n; i++) {
        x[i * d + 3] = (float)hr_rng_below(&r, 40);
        y[i] += (int)x[i * d + 3] % 3 == 0 ? 1.0f : 0.0f;
        if (hr_rng_uniform(&r) < 0.1f) x[i * d + 1] = NAN;
    }
    uint8_t cat[4] = {0, 0, 0, 1};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 20;
    p.min_data_per_group = 10;
    export_roundtrip(&p, x, y, n, d, cat);
    free(x), free(y);
}

Test(gbdt_lightgbm, export_reimport_round_trip_multiclass)
{
    size_t n = 1200;
    int d = 3;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_classes(5, n, d, 3, x, y);
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = 3;
    p.num_rounds = 10;
    export_roundtrip(&p, x, y, n, d, NULL);
    free(x), free(y);
}
