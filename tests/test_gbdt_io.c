/* gbdt model files: HDF5 round trip, embedding in a caller's file, and refusal of newer or broken files. */
#include <criterion/criterion.h>
#include <unistd.h>

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
    static char path[128];
    snprintf(path, sizeof path, "/tmp/test_gbdt_%s_%ld.h5", tag, (long)getpid());
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
    cr_assert_not_null(strstr(hr_last_error(), "leaf_value"), "%s", hr_last_error());
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
