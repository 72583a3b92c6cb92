/* gbdt model files: HDF5 round trip, embedding in a caller's file, and refusal of newer or broken files. */
#include <criterion/criterion.h>
#include <float.h>
#include <unistd.h>

#include "core/h5.h"
#include "gbdt/gbdt_internal.h"
#include "helpers/testutil.h"
#include "test_gbdt_util.h"

static gbdt_booster *train_small(int softmax, float **xo, size_t *no, int *dout)
{
    size_t n = 1500;
    int d = 4;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    if (softmax)
        tgb_make_classes(30, n, d, 3, x, y);
    else
        tgb_make_regression(30, n, d, x, y);
    hr_rng r;
    hr_rng_seed(&r, 31);
    for (size_t i = 0; i < n; i++) {
        x[i * d + 3] = (float)hr_rng_below(&r, 12);
        if (!softmax) y[i] += (int)x[i * d + 3] % 4 == 1;
        if (hr_rng_uniform(&r) < 0.1f) x[i * d + 2] = NAN;
    }
    uint8_t cat[4] = {0, 0, 0, 1};
    const char *names[4] = {"batch", "channels", "height", "layout"};
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y, .is_categorical = cat, .feature_names = names};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 15;
    p.min_data_per_group = 20;
    if (softmax) p.objective = GBDT_OBJECTIVE_SOFTMAX, p.num_class = 3;
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    free(y);
    *xo = x, *no = n, *dout = d;
    return b;
}

static void assert_same_predictions(const gbdt_booster *a, const gbdt_booster *b, const float *x, size_t n, int d)
{
    int K = gbdt_booster_num_class(a);
    cr_assert_eq(gbdt_booster_num_class(b), K);
    for (size_t i = 0; i < n; i++) {
        double pa[3], pb[3];
        gbdt_booster_predict_row(a, x + i * d, pa);
        gbdt_booster_predict_row(b, x + i * d, pb);
        cr_assert_eq(memcmp(pa, pb, K * sizeof(double)), 0, "row %zu", i);
    }
}

static char *tmp_name(const char *tag)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/test_gbdt_%s_%ld.h5", test_tmpdir(), tag, (long)getpid());
    return path;
}

Test(gbdt_io, save_load_round_trip_is_exact)
{
    for (int softmax = 0; softmax < 2; softmax++) {
        float *x;
        size_t n;
        int d;
        gbdt_booster *b = train_small(softmax, &x, &n, &d), *back;
        const char *path = tmp_name("rt");
        cr_assert_eq(gbdt_booster_save(b, path), 0, "%s", hr_last_error());
        cr_assert_eq(gbdt_booster_load(path, &back), 0, "%s", hr_last_error());
        assert_same_predictions(b, back, x, n, d);
        cr_assert_eq(gbdt_booster_num_trees(back), gbdt_booster_num_trees(b));
        cr_assert_str_eq(gbdt_booster_feature_name(back, 3), "layout");
        cr_assert_eq(gbdt_booster_params(back)->num_rounds, 15);
        cr_assert_eq(gbdt_booster_params(back)->min_data_per_group, 20);
        cr_assert_eq(gbdt_booster_objective(back), softmax ? GBDT_OBJECTIVE_SOFTMAX : GBDT_OBJECTIVE_L2);
        unlink(path);
        gbdt_booster_free(b);
        gbdt_booster_free(back);
        free(x);
    }
}

Test(gbdt_io, booster_embeds_in_a_callers_hdf5_group)
{
    float *x;
    size_t n;
    int d;
    gbdt_booster *b = train_small(1, &x, &n, &d), *back;
    const char *path = tmp_name("embed");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Gcreate2(f, "gbdt", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_eq(gbdt_booster_write_h5(b, g), 0, "%s", hr_last_error());
    H5Gclose(g);
    H5Fclose(f);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    g = H5Gopen2(f, "gbdt", H5P_DEFAULT);
    cr_assert_eq(gbdt_booster_read_h5(g, &back), 0, "%s", hr_last_error());
    H5Gclose(g);
    H5Fclose(f);
    assert_same_predictions(b, back, x, n, d);
    unlink(path);
    gbdt_booster_free(b);
    gbdt_booster_free(back);
    free(x);
}

/* Saves a model, then lets `edit` damage the file through HDF5. */
static int load_edited(void (*edit)(hid_t f))
{
    float *x;
    size_t n;
    int d;
    gbdt_booster *b = train_small(0, &x, &n, &d), *back = NULL;
    const char *path = tmp_name("edit");
    cr_assert_eq(gbdt_booster_save(b, path), 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    edit(f);
    H5Fclose(f);
    /* an edit behind the loader's back breaks the seal; resealed, it reaches the checks behind it */
    cr_assert_eq(gbdt_booster_load(path, &back), HR_EFORMAT);
    cr_assert_not_null(strstr(hr_last_error(), "checksum mismatch"), "%s", hr_last_error());
    cr_assert_eq(hr_h5_seal_file(path), HR_OK, "%s", hr_last_error());
    int rc = gbdt_booster_load(path, &back);
    cr_assert_null(back);
    cr_assert_not_null(strstr(hr_last_error(), path), "error does not name the file: %s", hr_last_error());
    unlink(path);
    gbdt_booster_free(b);
    free(x);
    return rc;
}

static void edit_newer_version(hid_t f)
{
    int v = GBDT_FORMAT_VERSION + 1;
    hid_t a = H5Aopen(f, "version", H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
}

static void edit_drop_dataset(hid_t f) { H5Ldelete(f, "trees/leaf_value", H5P_DEFAULT); }

static void edit_bad_child(hid_t f)
{
    hid_t ds = H5Dopen2(f, "trees/left_child", H5P_DEFAULT);
    int v[1] = {12345};
    hid_t fs = H5Dget_space(ds);
    hsize_t start = 0, count = 1;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v);
    H5Sclose(ms), H5Sclose(fs), H5Dclose(ds);
}

static void edit_format_name(hid_t f)
{
    H5Adelete(f, "format");
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 6);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "format", t, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, "other");
    H5Aclose(a), H5Sclose(s), H5Tclose(t);
}

Test(gbdt_io, loader_rejects_newer_version_and_damaged_content)
{
    cr_assert_eq(load_edited(edit_newer_version), HR_EVERSION);
    cr_assert_not_null(strstr(hr_last_error(), "newer") ? strstr(hr_last_error(), "newer")
                                                         : strstr(hr_last_error(), "version"));
    cr_assert_eq(load_edited(edit_drop_dataset), HR_EFORMAT);
    cr_assert_not_null(strstr(hr_last_error(), "trees/missing dataset 'leaf_value'"), "%s", hr_last_error());
    cr_assert_eq(load_edited(edit_bad_child), HR_EFORMAT);
    cr_assert_not_null(strstr(hr_last_error(), "child"), "%s", hr_last_error());
    cr_assert_eq(load_edited(edit_format_name), HR_EFORMAT);
    cr_assert_not_null(strstr(hr_last_error(), "heurist-gbdt"), "%s", hr_last_error());
}

Test(gbdt_io, loader_rejects_truncated_and_foreign_files)
{
    float *x;
    size_t n;
    int d;
    gbdt_booster *b = train_small(0, &x, &n, &d), *back;
    const char *path = tmp_name("trunc");
    cr_assert_eq(gbdt_booster_save(b, path), 0);
    char *buf;
    size_t len;
    cr_assert_eq(hr_file_read_all(path, &buf, &len), 0);
    size_t cuts[] = {0, 100, len / 2, len - 100};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        cr_assert_eq(hr_file_write_atomic(path, buf, cuts[c]), 0);
        int rc = gbdt_booster_load(path, &back);
        cr_assert_lt(rc, 0, "truncated at %zu accepted", cuts[c]);
        cr_assert_null(back);
        cr_assert_not_null(strstr(hr_last_error(), path), "%s", hr_last_error());
    }
    const char *text = "tree\nversion=v4\n";
    cr_assert_eq(hr_file_write_atomic(path, text, strlen(text)), 0);
    cr_assert_lt(gbdt_booster_load(path, &back), 0);
    cr_assert_not_null(strstr(hr_last_error(), path));
    cr_assert_lt(gbdt_booster_load("/nonexistent/dir/model.h5", &back), 0);
    cr_assert_not_null(strstr(hr_last_error(), "/nonexistent/dir/model.h5"));
    /* saving into a missing directory is an error, not a crash */
    cr_assert_lt(gbdt_booster_save(b, "/nonexistent/dir/model.h5"), 0);
    unlink(path);
    free(buf);
    free(x);
    gbdt_booster_free(b);
}

/* Files written by the format-1 writer before gbdt/io.c moved onto core/h5 (32-bit top-level integers,
 * tests/fixtures/gbdt/make_gbdt_v1_fixtures.c) load into the same model: raw scores equal bit for bit. */
Test(gbdt_io, loads_format_1_files_of_the_previous_writer)
{
    const char *kinds[] = {"l2", "softmax"};
    for (int m = 0; m < 2; m++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/fixtures/gbdt/gbdt_v1_%s.h5", HEURIST_SOURCE_DIR, kinds[m]);
        gbdt_booster *b;
        cr_assert_eq(gbdt_booster_load(path, &b), 0, "%s", hr_last_error());
        int K = gbdt_booster_num_class(b);
        cr_assert_eq(K, m ? 3 : 1);
        cr_assert_eq(gbdt_booster_best_iteration(b), m ? 7 : -1);
        cr_assert_eq(gbdt_booster_num_trees(b), m ? 21 : 40);
        const gbdt_params *p = gbdt_booster_params(b);
        cr_assert_eq(p->seed, 0xfedcba9876543210ULL);
        cr_assert(p->num_rounds == 40 && p->num_leaves == 6 && p->min_data_per_group == 20);
        cr_assert(p->learning_rate == 0.3 && p->lambda_l2 == 0.5);
        const char *names[] = {"batch", "channels", "h", "memory_layout"};
        for (int j = 0; j < 4; j++) cr_assert_str_eq(gbdt_booster_feature_name(b, j), names[j]);
        snprintf(path, sizeof path, "%s/tests/fixtures/gbdt/gbdt_v1_%s.tsv", HEURIST_SOURCE_DIR, kinds[m]);
        char *text;
        size_t len;
        cr_assert_eq(hr_file_read_all(path, &text, &len), 0, "%s", hr_last_error());
        int rows = 0;
        for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            if (*line == '#' || *line == '\n') continue;
            float x[4];
            double want[3], got[3];
            char *at = line;
            for (int j = 0; j < 4; j++) x[j] = strtof(at, &at);
            for (int k = 0; k < K; k++) want[k] = strtod(at, &at);
            gbdt_booster_predict_raw_row(b, x, got);
            for (int k = 0; k < K; k++)
                cr_assert_eq(memcmp(&got[k], &want[k], sizeof(double)), 0, "%s row %d class %d: %.17g != %.17g",
                             kinds[m], rows, k, got[k], want[k]);
            rows++;
        }
        cr_assert_eq(rows, 40);
        free(text);
        gbdt_booster_free(b);
    }
}

static void edit_drop_optional(hid_t f)
{
    H5Adelete(f, "best_iteration");
    H5Adelete_by_name(f, "params", "num_leaves", H5P_DEFAULT);
    H5Adelete_by_name(f, "params", "lambda_l2", H5P_DEFAULT);
    H5Adelete_by_name(f, "params", "seed", H5P_DEFAULT);
}

/* Attributes a file may lack keep their defaults; the seed keeps all 64 bits. */
Test(gbdt_io, absent_optional_attributes_keep_their_defaults)
{
    float *x;
    size_t n;
    int d;
    gbdt_booster *b = train_small(0, &x, &n, &d), *back;
    b->params.seed = UINT64_MAX - 2;
    b->params.num_leaves = 9;
    b->params.lambda_l2 = 0.25;
    b->best_iteration = 4;
    const char *path = tmp_name("optional");
    cr_assert_eq(gbdt_booster_save(b, path), 0, "%s", hr_last_error());
    cr_assert_eq(gbdt_booster_load(path, &back), 0, "%s", hr_last_error());
    cr_assert_eq(gbdt_booster_params(back)->seed, UINT64_MAX - 2);
    cr_assert_eq(gbdt_booster_params(back)->num_leaves, 9);
    cr_assert_eq(gbdt_booster_best_iteration(back), 4);
    gbdt_booster_free(back);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    edit_drop_optional(f);
    H5Fclose(f);
    cr_assert_eq(hr_h5_seal_file(path), HR_OK, "%s", hr_last_error());
    cr_assert_eq(gbdt_booster_load(path, &back), 0, "%s", hr_last_error());
    gbdt_params def;
    gbdt_params_default(&def);
    const gbdt_params *p = gbdt_booster_params(back);
    cr_assert_eq(p->seed, def.seed);
    cr_assert_eq(p->num_leaves, def.num_leaves);
    cr_assert(p->lambda_l2 == def.lambda_l2);
    cr_assert_eq(p->num_rounds, 15); /* still stored */
    cr_assert_eq(gbdt_booster_best_iteration(back), -1);
    assert_same_predictions(b, back, x, n, d);
    unlink(path);
    gbdt_booster_free(b);
    gbdt_booster_free(back);
    free(x);
}

/* ---- the packed inference layout (gbdt/pack.c) against the tree-by-tree walk ---- */

/* F(x) from the gbdt_trees one after the other: the reference the packed walk must equal bit for bit. */
static void generic_raw_row(const gbdt_booster *b, const float *x, double *out)
{
    int K = gbdt_booster_num_class(b);
    memcpy(out, gbdt_booster_base_score(b), K * sizeof(double));
    for (int t = 0; t < gbdt_booster_num_trees(b); t++) out[t % K] += gbdt_tree_predict(gbdt_booster_tree(b, t), x);
}

static int packed_is_used(const gbdt_booster *b)
{
    return b->packed.root != NULL && b->packed.num_trees == b->num_trees;
}

/* Rows probing every split of b: base rows with the split feature set to the threshold, the floats
 * next to it, the largest float below it, NaN, +-0, +-inf, and for categorical splits the categories
 * around the bitset and values no category has. (n, d) rows go to *out. */
static float *probe_rows(const gbdt_booster *b, const float *base, size_t nbase, int d, size_t *n)
{
    size_t cap = 1024, m = 0;
    float *rows = malloc(cap * d * sizeof *rows);
    for (int t = 0; t < gbdt_booster_num_trees(b); t++) {
        const gbdt_tree *tr = gbdt_booster_tree(b, t);
        for (int i = 0; i < tr->num_leaves - 1; i++) {
            double thr = tr->threshold[i];
            float f = (float)thr, below = (double)f > thr ? nextafterf(f, -INFINITY) : f;
            float numeric[] = {f, nextafterf(f, INFINITY), nextafterf(f, -INFINITY), below, NAN, 0.0f, -0.0f,
                               INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 1e-40f};
            float categ[] = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 31, 32, 33, 2.5f, 1e10f, NAN};
            int cat = tr->decision_type[i] & GBDT_DT_CATEGORICAL;
            const float *vals = cat ? categ : numeric;
            size_t nv = cat ? sizeof categ / sizeof *categ : sizeof numeric / sizeof *numeric;
            for (size_t v = 0; v < nv; v++) {
                if (m == cap) rows = realloc(rows, (cap *= 2) * d * sizeof *rows);
                memcpy(rows + m * d, base + (m % nbase) * d, d * sizeof *rows);
                rows[m * d + tr->split_feature[i]] = vals[v];
                m++;
            }
        }
    }
    *n = m;
    return rows;
}

/* Packed and generic predictions agree bit for bit on x (n, d) and on b's probe rows; so do the
 * probability and batch paths, which go through the packed raw scores. */
static void assert_packed_matches(const gbdt_booster *b, const float *x, size_t n, int d)
{
    cr_assert(packed_is_used(b), "the packed layout is missing or stale");
    size_t np;
    float *probe = probe_rows(b, x, n, d, &np);
    int K = gbdt_booster_num_class(b);
    double *batch = malloc(np * K * sizeof *batch);
    cr_assert_eq(gbdt_booster_predict(b, probe, np, 1, 2, batch), 0);
    for (int set = 0; set < 2; set++) {
        const float *rows = set ? probe : x;
        size_t nr = set ? np : n;
        for (size_t i = 0; i < nr; i++) {
            double got[8], want[8];
            gbdt_booster_predict_raw_row(b, rows + i * d, got);
            generic_raw_row(b, rows + i * d, want);
            cr_assert_eq(memcmp(got, want, K * sizeof(double)), 0, "%s row %zu: %.17g != %.17g",
                         set ? "probe" : "data", i, got[0], want[0]);
            if (set) cr_assert_eq(memcmp(got, batch + i * K, K * sizeof(double)), 0, "batch row %zu", i);
        }
    }
    free(batch);
    free(probe);
}

/* Random data with NaNs in every numeric feature, a feature of few distinct values (thresholds fall
 * between them, and rows sit exactly on them) and a categorical feature with NaN. */
static gbdt_booster *train_packed_case(int softmax, const gbdt_booster *init, float **xo, size_t *no, int *dout)
{
    size_t n = 3000;
    int d = 6;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    hr_rng r;
    hr_rng_seed(&r, softmax ? 41 : 42);
    for (size_t i = 0; i < n; i++) {
        float *xi = x + i * d;
        for (int j = 0; j < 3; j++) xi[j] = hr_rng_uniform(&r) < 0.15f ? NAN : 4 * hr_rng_uniform(&r) - 2;
        xi[3] = hr_rng_uniform(&r) < 0.1f ? NAN : (float)hr_rng_below(&r, 15);
        xi[4] = hr_rng_uniform(&r) < 0.1f ? NAN : (float)hr_rng_below(&r, 6) * 0.1f;
        xi[5] = 1e30f * hr_rng_normal(&r);
        int c = isnan(xi[3]) ? 0 : (int)xi[3];
        double s = (isnan(xi[0]) ? 1 : sin(2 * xi[0])) + (c % 3 == 1) - (isnan(xi[1]) ? -0.5 : xi[1] * xi[1]) +
                   (isnan(xi[4]) ? 0.3 : xi[4]) + 0.1 * hr_rng_normal(&r);
        y[i] = softmax ? (float)(s < -0.5 ? 0 : s < 0.7 ? 1 : 2) : (float)s;
    }
    uint8_t cat[6] = {0, 0, 0, 1, 0, 0};
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y, .is_categorical = cat};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 12;
    p.num_leaves = 20;
    p.min_data_in_leaf = 10;
    p.min_data_per_group = 20;
    if (softmax) p.objective = GBDT_OBJECTIVE_SOFTMAX, p.num_class = 3;
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, init, NULL, &b), 0, "%s", hr_last_error());
    free(y);
    *xo = x, *no = n, *dout = d;
    return b;
}

Test(gbdt_io, packed_prediction_equals_the_tree_walk_after_training_loading_and_import)
{
    for (int softmax = 0; softmax < 2; softmax++) {
        float *x;
        size_t n;
        int d;
        gbdt_booster *b = train_packed_case(softmax, NULL, &x, &n, &d);
        /* the model exercises both packed paths: plain numeric splits (some sending NaN left) and slow ones */
        size_t fast = 0, slow = 0, nan_left = 0;
        for (int t = 0; t < b->num_trees; t++) {
            const gbdt_tree *tr = &b->trees[t];
            for (int i = 0; i < tr->num_leaves - 1; i++) {
                unsigned dt = tr->decision_type[i], missing = (dt >> 2) & 3u;
                if (dt & GBDT_DT_CATEGORICAL) {
                    slow++;
                    continue;
                }
                fast++;
                nan_left += missing == GBDT_MISSING_NAN ? (dt & GBDT_DT_DEFAULT_LEFT) != 0 : 0.0 <= tr->threshold[i];
            }
        }
        cr_assert_gt(fast, 0);
        cr_assert_gt(nan_left, 0);
        cr_assert_gt(slow, 0, "no categorical split: the slow path goes untested");
        assert_packed_matches(b, x, n, d);

        /* our format */
        const char *path = tmp_name("packed");
        gbdt_booster *back;
        cr_assert_eq(gbdt_booster_save(b, path), 0, "%s", hr_last_error());
        cr_assert_eq(gbdt_booster_load(path, &back), 0, "%s", hr_last_error());
        unlink(path);
        assert_packed_matches(back, x, n, d);
        assert_same_predictions(b, back, x, n, d);
        gbdt_booster_free(back);

        /* LightGBM text */
        char txt[512];
        snprintf(txt, sizeof txt, "%s/test_gbdt_packed_%ld.txt", test_tmpdir(), (long)getpid());
        cr_assert_eq(gbdt_lightgbm_save(b, txt), 0, "%s", hr_last_error());
        cr_assert_eq(gbdt_lightgbm_load(txt, &back), 0, "%s", hr_last_error());
        unlink(txt);
        assert_packed_matches(back, x, n, d);
        gbdt_booster_free(back);

        /* warm start appends trees to a copy of the old ones: packed again at the end */
        float *x2;
        size_t n2;
        int d2;
        gbdt_booster *more = train_packed_case(softmax, b, &x2, &n2, &d2);
        cr_assert_gt(gbdt_booster_num_trees(more), gbdt_booster_num_trees(b));
        assert_packed_matches(more, x2, n2, d2);
        gbdt_booster_free(more);
        free(x2);

        /* dropping trees drops the layout: predict falls back to the trees and stays right */
        gbdt_booster_truncate(b, b->num_class);
        cr_assert(!packed_is_used(b));
        double got[8], want[8];
        gbdt_booster_predict_raw_row(b, x, got);
        generic_raw_row(b, x, want);
        cr_assert_eq(memcmp(got, want, b->num_class * sizeof(double)), 0);
        cr_assert_eq(gbdt_booster_pack(b), 0);
        assert_packed_matches(b, x, n, d);
        gbdt_booster_free(b);
        free(x);
    }
}

/* Missing type Zero, the other missing types with both default directions, and thresholds at and beyond
 * the ends of the float range, set by hand on a trained model and packed again. */
Test(gbdt_io, packed_prediction_handles_every_missing_type_and_extreme_thresholds)
{
    float *x;
    size_t n;
    int d;
    gbdt_booster *b = train_packed_case(0, NULL, &x, &n, &d);
    const double extreme[] = {1e39, -1e39, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, FLT_MAX, -FLT_MAX,
                              (double)FLT_MAX * (1 + 1e-12), 1e-310, -1e-310, 1e-45, 0.1, -0.0};
    size_t e = 0;
    for (int variant = 0; variant < 6; variant++) {
        unsigned missing = (unsigned)variant % 3, left = (unsigned)variant / 3;
        for (int t = 0; t < b->num_trees; t++) {
            gbdt_tree *tr = &b->trees[t];
            for (int i = 0; i < tr->num_leaves - 1; i++) {
                if (tr->decision_type[i] & GBDT_DT_CATEGORICAL) continue;
                tr->decision_type[i] = (uint8_t)((missing << 2) | (left ? GBDT_DT_DEFAULT_LEFT : 0));
                if ((i + t) % 3 == 0) tr->threshold[i] = extreme[e++ % (sizeof extreme / sizeof *extreme)];
            }
        }
        cr_assert_eq(gbdt_booster_pack(b), 0);
        /* rows right at the zero band's edges, besides the probes */
        float *rows = malloc(n * d * sizeof *rows);
        memcpy(rows, x, n * d * sizeof *rows);
        const float zeroish[] = {1e-35f, -1e-35f, 1.0000001e-35f, 1e-36f, 0.0f, -0.0f};
        for (size_t i = 0; i < n; i += 7) rows[i * d + (i / 7) % d] = zeroish[(i / 7) % 6];
        assert_packed_matches(b, rows, n, d);
        free(rows);
    }
    gbdt_booster_free(b);
    free(x);
}

Test(gbdt_io, packed_prediction_matches_on_the_lightgbm_fixture)
{
    const char *fix = HEURIST_SOURCE_DIR "/tests/fixtures/lightgbm/";
    const char *models[] = {"regression_model.txt", "multiclass_model.txt"};
    const char *tables[] = {"regression_test.tsv", "multiclass_test.tsv"};
    for (int m = 0; m < 2; m++) {
        char path[512];
        snprintf(path, sizeof path, "%s%s", fix, models[m]);
        gbdt_booster *b;
        cr_assert_eq(gbdt_lightgbm_load(path, &b), 0, "%s", hr_last_error());
        snprintf(path, sizeof path, "%s%s", fix, tables[m]);
        float *tab;
        size_t n;
        int cols;
        cr_assert_eq(tgb_read_tsv(path, &tab, &n, &cols), 0);
        int d = cols - 1; /* the label comes first */
        cr_assert_eq(d, gbdt_booster_num_features(b));
        float *x = malloc(n * d * sizeof *x);
        for (size_t i = 0; i < n; i++) memcpy(x + i * d, tab + i * cols + 1, d * sizeof *x);
        assert_packed_matches(b, x, n, d);
        free(x);
        free(tab);
        gbdt_booster_free(b);
    }
}
