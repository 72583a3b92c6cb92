/* perf-db and constraints, labels, features, splits and the dataset cache. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/data.h"
#include "helpers/testutil.h"

static data_tune *load_asm1x1u(void)
{
    data_tune *dt;
    int rc = data_perfdb_load(test_miopen("gfx906_60.db.bz2"), "ConvAsm1x1U", NULL, &dt);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    return dt;
}

Test(data_perfdb, every_asm1x1u_row_loads_and_satisfies_the_rules, .timeout = 120)
{
    data_tune *dt = load_asm1x1u();
    cr_assert_eq(dt->n, 17314);
    cr_assert_eq(dt->skips.total, 0);
    cr_assert_eq(dt->length, 8);
    cr_assert_str_eq(dt->param_names[0], "read_size");
    const data_constraint *c = data_constraint_find("ConvAsm1x1U");
    cr_assert_not_null(c);
    for (int i = 0; i < dt->n; i++) {
        const int32_t *v = dt->values + (size_t)i * 8;
        for (int len = 0; len <= 8; len++) cr_assert(c->valid_prefix(&dt->problems[i], v, len), "row %d len %d", i, len);
        for (int j = 0; j < 8; j++) cr_assert_eq(dt->vocab[j][dt->tokens[(size_t)i * 8 + j]], v[j]);
    }
    data_tune_free(dt);
}

/* A valid FP16 forward problem and sequence, then one change per rule. */
Test(data_constraint, rules_reject_hand_made_invalid_sequences)
{
    const data_constraint *c = data_constraint_find("ConvAsm1x1U");
    data_problem p;
    const char *why;
    const char *key = "64-28-28-1x1-64-28-28-16-0x0-1x1-1x1-0-NCHW-FP16-F";
    cr_assert_eq(data_key_parse(key, strlen(key), &p, &why), HR_OK);
    int32_t ok[8] = {1, 4, 2, 16, 2, 2, 1, 1};
    cr_assert(c->valid_prefix(&p, ok, 8));
    struct {
        int pos;
        int32_t v;
        int len;
    } bad[] = {
        {0, 5, 1},   /* read_size out of 1..4 */
        {1, 6, 2},   /* k_mult not 1 or a multiple of 4 */
        {1, 1, 2},   /* k_mult % e (e = 2 for FP16) */
        {2, 3, 3},   /* chunks_per_wave % e */
        {3, 3, 4},   /* chunk_size not a power of two */
        {4, 9, 5},   /* n_mult out of range */
        {4, 8, 5},   /* n_mult > ceil(N / (64 / chunk_size)) = 4 */
        {5, 1, 6},   /* c_mult % e */
        {5, 32, 6},  /* 25 + 2 * k_mult * c_mult >= 102 */
        {6, 5, 7},   /* c_per_wave = ceil(64 / 5) = 13: not divisible by c_mult 2 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int32_t v[8];
        memcpy(v, ok, sizeof v);
        v[bad[i].pos] = bad[i].v;
        cr_assert_not(c->valid_prefix(&p, v, bad[i].len), "case %zu accepted", i);
        cr_assert_not(c->valid_prefix(&p, v, 8), "case %zu accepted as a whole", i);
    }
    int32_t many_waves[8] = {1, 4, 2, 16, 2, 2, 8, 4}; /* waves_c * waves_k = 32 > 16 */
    cr_assert(c->valid_prefix(&p, many_waves, 7));
    cr_assert_not(c->valid_prefix(&p, many_waves, 8));
    /* backward data: K % k_mult */
    const char *kb = "60-28-28-1x1-60-28-28-16-0x0-1x1-1x1-0-NCHW-FP32-B";
    cr_assert_eq(data_key_parse(kb, strlen(kb), &p, &why), HR_OK);
    int32_t kb8[2] = {1, 8};
    cr_assert_not(c->valid_prefix(&p, kb8, 2));
    int32_t kb4[2] = {1, 4};
    cr_assert(c->valid_prefix(&p, kb4, 2));
    cr_assert_null(data_constraint_find("NoSuchSolver"));
}

Test(data_perfdb, malformed_perfdb_inputs)
{
    data_tune *dt;
    char *txt = test_tmpfile(".db", "this is not sqlite at all", 25);
    cr_assert_eq(data_perfdb_load(txt, "ConvAsm1x1U", NULL, &dt), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "not an SQLite database") != NULL, "%s", hr_last_error());
    remove(txt);
    free(txt);
    /* an SQLite file without the perf-db tables */
    char *path = test_tmppath(".db");
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE other(x INT); INSERT INTO other VALUES (1);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    cr_assert_eq(data_perfdb_load(path, "ConvAsm1x1U", NULL, &dt), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "table 'config' is missing") != NULL, "%s", hr_last_error());
    remove(path);
    free(path);
    cr_assert_eq(data_perfdb_load(test_miopen("gfx906_60.db.bz2"), "NoSuchSolver", NULL, &dt), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "no usable perf_db row for solver 'NoSuchSolver'") != NULL, "%s", hr_last_error());
}

static data_select *small_select(void)
{
    const char *t = "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=A:1.0,0,a;B:2.0,0,a;C:4.0,0,a\n"
                    "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-B=B:3.0,0,a\n";
    data_select *ds;
    cr_assert_eq(data_fdb_parse("s.txt", t, strlen(t), NULL, &ds), HR_OK);
    return ds;
}

Test(data_labels, soft_onehot_and_softmax)
{
    data_select *ds = small_select();
    int rows[2] = {0, 1};
    float y[6];
    data_labels_fill(ds, rows, 2, DATA_LABEL_SOFT_RATIO, 1.0f, y);
    /* p = (1/t) / sum(1/t) = (1, 1/2, 1/4) / 1.75 */
    cr_assert_float_eq(y[0], 1.0f / 1.75f, 1e-6);
    cr_assert_float_eq(y[1], 0.5f / 1.75f, 1e-6);
    cr_assert_float_eq(y[2], 0.25f / 1.75f, 1e-6);
    cr_assert_float_eq(y[3], 0.0f, 0);
    cr_assert_float_eq(y[4], 1.0f, 1e-7);
    data_labels_fill(ds, rows, 2, DATA_LABEL_ONEHOT, 1.0f, y);
    cr_assert(y[0] == 1 && y[1] == 0 && y[2] == 0 && y[4] == 1);
    data_labels_fill(ds, rows, 2, DATA_LABEL_SOFTMAX, 0.5f, y);
    double z = 1 + exp(-2.0) + exp(-6.0);
    cr_assert_float_eq(y[0], 1 / z, 1e-6);
    cr_assert_float_eq(y[1], exp(-2.0) / z, 1e-6);
    data_label_kind k;
    cr_assert_eq(data_label_kind_parse("onehot", &k), HR_OK);
    cr_assert_eq(k, DATA_LABEL_ONEHOT);
    cr_assert_eq(data_label_kind_parse("nonsense", &k), HR_EINVAL);
    data_select_free(ds);
}

/* Kernels within the tie ratio of the fastest share its label; outside it nothing changes. */
Test(data_labels, ties_within_the_noise_share_the_label)
{
    const char *t = "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=A:1.0,0,a;B:1.01,0,a;C:4.0,0,a\n";
    data_select *ds;
    cr_assert_eq(data_fdb_parse("t.txt", t, strlen(t), NULL, &ds), HR_OK);
    int row = 0;
    float y[3], y1[3];
    data_labels_fill_ties(ds, &row, 1, DATA_LABEL_ONEHOT, 1.0f, 1.02f, y);
    cr_assert(y[0] == 0.5f && y[1] == 0.5f && y[2] == 0, "one-hot shared: %g %g %g", y[0], y[1], y[2]);
    data_labels_fill_ties(ds, &row, 1, DATA_LABEL_SOFTMAX, 0.5f, 1.02f, y);
    double z = 2 + exp(-6.0);
    cr_assert_float_eq(y[0], 1 / z, 1e-6);
    cr_assert_float_eq(y[1], 1 / z, 1e-6);
    cr_assert_float_eq(y[2], exp(-6.0) / z, 1e-6);
    data_labels_fill_ties(ds, &row, 1, DATA_LABEL_SOFT_RATIO, 1.0f, 1.02f, y);
    cr_assert_float_eq(y[1], 1 / 2.25, 1e-6);
    /* tie 1 (or a ratio the runner-up is outside of) is data_labels_fill */
    data_labels_fill_ties(ds, &row, 1, DATA_LABEL_SOFTMAX, 0.5f, 1.0f, y);
    data_labels_fill(ds, &row, 1, DATA_LABEL_SOFTMAX, 0.5f, y1);
    cr_assert_arr_eq(y, y1, sizeof y);
    data_labels_fill_ties(ds, &row, 1, DATA_LABEL_ONEHOT, 1.0f, 1.005f, y);
    cr_assert(y[0] == 1 && y[1] == 0);
    data_select_free(ds);
}

Test(data_features, named_finite_and_z_scored_on_train_rows_only)
{
    int F = data_features_count();
    cr_assert_gt(F, 40);
    for (int j = 0; j < F; j++)
        for (int k = 0; k < j; k++) cr_assert_str_neq(data_feature_name(j), data_feature_name(k));
    data_select *ds = small_select();
    float *X = malloc((size_t)ds->n * F * sizeof *X);
    data_features_compute_all(ds->problems, ds->n, X);
    for (int i = 0; i < ds->n * F; i++) cr_assert(isfinite(X[i]));
    /* 2 * N * C * K * fil * out_sp = 2 * 2 * 1 * 4 * 1 * 64 = 1024 -> log2 = 10 */
    for (int j = 0; j < F; j++)
        if (strcmp(data_feature_name(j), "log2_flops") == 0) cr_assert_float_eq(X[j], 10.0f, 1e-5);
    float mean[128], sd[128];
    int rows[1] = {1};
    data_zscore_fit(X, F, rows, 1, mean, sd);
    for (int j = 0; j < F; j++) cr_assert_float_eq(mean[j], X[F + j], 1e-6); /* only row 1 used */
    free(X);
    data_select_free(ds);
}

static float feature_of(const float *x, const char *name)
{
    for (int j = 0; j < data_features_count(); j++)
        if (strcmp(data_feature_name(j), name) == 0) return x[j];
    cr_assert_fail("no feature %s", name);
    return NAN;
}

Test(data_features, alignment_features_by_hand)
{
    /* C 3, K 64, N 1, 7x7 filter, forward output 112x112: GEMM M = 12544 = 2^8 * 49, N = 64, K = 3 * 49 = 147 */
    const char *key = "3-224-224-7x7-64-112-112-1-3x3-2x2-1x1-0-NCHW-FP32-F";
    data_problem p;
    const char *why = NULL;
    cr_assert_eq(data_key_parse(key, strlen(key), &p, &why), 0, "%s", why);
    float x[256];
    cr_assert_leq(data_features_count(), 256);
    data_features_compute(&p, x);
    cr_assert_float_eq(feature_of(x, "tz_in_c"), 0.0f, 0);
    cr_assert_float_eq(feature_of(x, "tz_out_c"), 6.0f, 0);
    cr_assert_float_eq(feature_of(x, "tz_gemm_m"), 8.0f, 0);
    cr_assert_float_eq(feature_of(x, "tz_gemm_k"), 0.0f, 0);
    cr_assert_float_eq(feature_of(x, "waste_m_128"), 0.0f, 0);
    cr_assert_float_eq(feature_of(x, "waste_k_32"), 160.0f / 147.0f - 1.0f, 1e-6);
    cr_assert_float_eq(feature_of(x, "waste_k_128"), 256.0f / 147.0f - 1.0f, 1e-6);
    cr_assert_float_eq(feature_of(x, "waste_n_128"), 1.0f, 1e-6); /* 64 padded to 128 */
    /* 2^11 * 49 rows: the trailing-zero count stops at 10 */
    key = "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F";
    cr_assert_eq(data_key_parse(key, strlen(key), &p, &why), 0, "%s", why);
    data_features_compute(&p, x);
    cr_assert_float_eq(feature_of(x, "tz_gemm_m"), 10.0f, 0);
    cr_assert_float_eq(feature_of(x, "tz_batch"), 5.0f, 0);
    cr_assert_float_eq(feature_of(x, "waste_m_32"), 0.0f, 0);
}

Test(data_split, random_split_is_seeded_disjoint_and_complete)
{
    data_split a, b, c;
    cr_assert_eq(data_split_random(1000, 0.2, 7, &a), HR_OK);
    cr_assert_eq(data_split_random(1000, 0.2, 7, &b), HR_OK);
    cr_assert_eq(data_split_random(1000, 0.2, 8, &c), HR_OK);
    cr_assert_eq(a.n_test, 200);
    cr_assert_eq(a.n_train, 800);
    cr_assert_eq(memcmp(a.test, b.test, 200 * sizeof(int)), 0);
    cr_assert_neq(memcmp(a.test, c.test, 200 * sizeof(int)), 0);
    int seen[1000] = {0};
    for (int i = 0; i < a.n_test; i++) seen[a.test[i]]++;
    for (int i = 0; i < a.n_train; i++) seen[a.train[i]]++;
    for (int i = 0; i < 1000; i++) cr_assert_eq(seen[i], 1);
    data_split_free(&a);
    data_split_free(&b);
    data_split_free(&c);
    double f;
    uint64_t s;
    cr_assert_eq(data_split_spec_parse("random:0.2:seed=5", &f, &s, 0), HR_OK);
    cr_assert(f == 0.2 && s == 5);
    cr_assert_eq(data_split_spec_parse("random:0.3", &f, &s, 9), HR_OK);
    cr_assert(s == 9);
    cr_assert_eq(data_split_spec_parse("random:1.5", &f, &s, 0), HR_EINVAL);
    cr_assert_eq(data_split_spec_parse("kfold:3", &f, &s, 0), HR_EINVAL);
}

Test(data_split, group_kfold_on_real_geometries, .timeout = 120)
{
    data_tune *dt = load_asm1x1u();
    int n = dt->n, *group = malloc((size_t)n * sizeof *group), ng;
    cr_assert_eq(data_groups_compute(dt->problems, n, group, &ng), HR_OK);
    cr_assert_gt(ng, 1000);
    cr_assert_lt(ng, n);
    int *fold_of_row = malloc((size_t)n * sizeof *fold_of_row);
    for (int i = 0; i < n; i++) fold_of_row[i] = -1;
    for (int f = 0; f < 5; f++) {
        data_split s, s2;
        cr_assert_eq(data_split_group_kfold(group, n, ng, 5, 3, f, &s), HR_OK);
        cr_assert_eq(data_split_group_kfold(group, n, ng, 5, 3, f, &s2), HR_OK);
        cr_assert_eq(s.n_test, s2.n_test);
        cr_assert_eq(memcmp(s.test, s2.test, (size_t)s.n_test * sizeof(int)), 0);
        cr_assert_eq(s.n_train + s.n_test, n);
        cr_assert(s.n_test > n / 6 && s.n_test < n / 4, "fold %d has %d rows", f, s.n_test);
        for (int i = 0; i < s.n_test; i++) {
            cr_assert_eq(fold_of_row[s.test[i]], -1); /* folds are disjoint */
            fold_of_row[s.test[i]] = f;
        }
        /* no geometry on both sides */
        unsigned char *in_test = calloc((size_t)ng, 1);
        for (int i = 0; i < s.n_test; i++) in_test[group[s.test[i]]] = 1;
        for (int i = 0; i < s.n_train; i++) cr_assert_not(in_test[group[s.train[i]]]);
        free(in_test);
        data_split_free(&s);
        data_split_free(&s2);
    }
    for (int i = 0; i < n; i++) cr_assert_neq(fold_of_row[i], -1); /* folds cover every row */
    /* rows with equal geometry share a group; different geometry never does */
    for (int i = 1; i < 200; i++) {
        int same = memcmp(dt->problems[i].f, dt->problems[0].f, sizeof dt->problems[0].f) == 0;
        cr_assert_eq(same, group[i] == group[0]);
    }
    data_split s;
    cr_assert_eq(data_split_group_kfold(group, n, ng, 1, 0, 0, &s), HR_EINVAL);
    free(group);
    free(fold_of_row);
    data_tune_free(dt);
}

Test(data_cache, select_round_trip_and_version_check)
{
    data_select *ds = small_select();
    char *path = test_tmppath(".h5");
    cr_assert_eq(data_cache_write_select(path, ds), HR_OK, "%s", hr_last_error());
    data_select *back;
    data_tune *tb;
    cr_assert_eq(data_cache_read(path, &back, &tb), HR_OK, "%s", hr_last_error());
    cr_assert_null(tb);
    cr_assert_eq(back->n, ds->n);
    cr_assert_eq(back->n_kernels, ds->n_kernels);
    for (int k = 0; k < ds->n_kernels; k++) cr_assert_str_eq(back->kernels[k], ds->kernels[k]);
    for (int i = 0; i < ds->n; i++) {
        cr_assert_str_eq(back->keys[i], ds->keys[i]);
        cr_assert_eq(memcmp(&back->problems[i], &ds->problems[i], sizeof(data_problem)), 0);
    }
    for (int i = 0; i < ds->n * ds->n_kernels; i++)
        cr_assert(back->runtime[i] == ds->runtime[i] || (isinf(back->runtime[i]) && isinf(ds->runtime[i])));
    data_select_free(back);
    /* a cache from a newer heurist is refused with a clear message */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    H5Adelete(f, "version");
    hr_h5_attr_write_int(f, "version", DATA_CACHE_VERSION + 1);
    H5Fclose(f);
    cr_assert_eq(hr_h5_seal_file(path), HR_OK, "%s", hr_last_error());
    cr_assert_eq(data_cache_read(path, &back, &tb), HR_EVERSION);
    cr_assert(strstr(hr_last_error(), "newer") != NULL, "%s", hr_last_error());
    remove(path);
    free(path);
    data_select_free(ds);
}

Test(data_cache, tune_round_trip_and_truncated_file, .timeout = 120)
{
    data_tune *dt = load_asm1x1u();
    char *path = test_tmppath(".h5");
    cr_assert_eq(data_cache_write_tune(path, dt), HR_OK, "%s", hr_last_error());
    data_select *sb;
    data_tune *back;
    cr_assert_eq(data_cache_read(path, &sb, &back), HR_OK, "%s", hr_last_error());
    cr_assert_eq(back->n, dt->n);
    cr_assert_eq(back->length, dt->length);
    cr_assert_str_eq(back->solver, "ConvAsm1x1U");
    cr_assert_eq(memcmp(back->values, dt->values, (size_t)dt->n * 8 * sizeof(int32_t)), 0);
    cr_assert_eq(memcmp(back->tokens, dt->tokens, (size_t)dt->n * 8 * sizeof(int)), 0);
    data_tune_free(back);
    /* cut the file in half: an error naming the file, no crash */
    char *buf;
    size_t len;
    cr_assert_eq(hr_file_read_all(path, &buf, &len), HR_OK);
    char *cut = test_tmpfile(".h5", buf, len / 2);
    cr_assert_neq(data_cache_read(cut, &sb, &back), HR_OK);
    cr_assert(strstr(hr_last_error(), cut) != NULL, "%s", hr_last_error());
    char *junk = test_tmpfile(".h5", "not hdf5", 8);
    cr_assert_eq(data_cache_read(junk, &sb, &back), HR_EFORMAT);
    remove(junk);
    remove(cut);
    remove(path);
    free(buf);
    free(cut);
    free(junk);
    free(path);
    data_tune_free(dt);
}

/* Whole groups held out: no group on both sides, near the asked share, seeded, and refused when it cannot hold. */
Test(data_split, random_groups_hold_out_whole_groups)
{
    enum { N = 400, G = 13 };
    int group[N];
    for (int i = 0; i < N; i++) group[i] = (i * 7 + i / 50) % G; /* uneven sizes */
    data_split a, b, c;
    cr_assert_eq(data_split_random_groups(group, N, G, 0.2, 3, &a), HR_OK, "%s", hr_last_error());
    cr_assert_eq(data_split_random_groups(group, N, G, 0.2, 3, &b), HR_OK);
    cr_assert_eq(data_split_random_groups(group, N, G, 0.2, 4, &c), HR_OK);
    cr_assert_eq(a.n_test, b.n_test);
    cr_assert_arr_eq(a.test, b.test, (size_t)a.n_test * sizeof(int));
    cr_assert(a.n_test != c.n_test || memcmp(a.test, c.test, (size_t)a.n_test * sizeof(int)), "the seed changes nothing");
    cr_assert_eq(a.n_train + a.n_test, N);
    unsigned char in_test[G] = {0};
    for (int i = 0; i < a.n_test; i++) in_test[group[a.test[i]]] = 1;
    for (int i = 0; i < a.n_train; i++) cr_assert_not(in_test[group[a.train[i]]], "group %d on both sides", group[a.train[i]]);
    /* about 31 rows a group: within half a group of 80 */
    cr_assert(abs(a.n_test - 80) <= 16, "%d test rows for 0.2 of %d", a.n_test, N);
    data_split_free(&a);
    data_split_free(&b);
    data_split_free(&c);
    /* a tiny share still holds out one group; one group cannot be split; a share that takes all is refused */
    cr_assert_eq(data_split_random_groups(group, N, G, 0.001, 3, &a), HR_OK);
    cr_assert_gt(a.n_test, 0);
    data_split_free(&a);
    int one[4] = {0, 0, 0, 0};
    cr_assert_eq(data_split_random_groups(one, 4, 1, 0.5, 0, &a), HR_EINVAL);
    int two[4] = {0, 1, 1, 1};
    cr_assert_eq(data_split_random_groups(two, 4, 2, 0.99, 0, &a), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "all 2 groups"), "%s", hr_last_error());
}
