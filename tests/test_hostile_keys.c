/* Hostile problem keys (data/portable.h, shared by heurist's loaders, exported runtimes and heurist-collect): a
 * zero in any size, stride or dilation slot of a 2-D or 3-D key, and sizes whose products overflow, are refused
 * at parse time, so no consumer divides by zero or multiplies past int64. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "data/data.h"
#include "helpers/testutil.h"

static const char *key_refused(const char *key)
{
    data_problem p;
    const char *why = NULL;
    cr_assert_neq(data_key_parse(key, strlen(key), &p, &why), HR_OK, "accepted %s", key);
    cr_assert_not_null(why);
    return why;
}

Test(hostile_keys, zero_in_any_slot_of_a_3d_key_is_refused)
{
    /* C-D-H-W-FdxFhxFw-K-oD-oH-oW-N-PdxPhxPw-SdxShxSw-DdxDhxDw-bias-layout-type-dir */
    static const char *const bad[] = {
        "1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-0x1x1-1x1x1-0-NCDHW-FP16-F", /* depth stride */
        "1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-1x0x1-1x1x1-0-NCDHW-FP16-F", /* height stride */
        "1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-1x1x1-0x1x1-0-NCDHW-FP16-F", /* depth dilation */
        "1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-1x1x1-1x1x0-0-NCDHW-FP16-F", /* width dilation */
        "1312-0-14-14-1x1x1-128-1-14-14-64-0x0x0-1x1x1-1x1x1-0-NCDHW-FP16-F", /* input depth */
        "1312-1-14-14-0x1x1-128-1-14-14-64-0x0x0-1x1x1-1x1x1-0-NCDHW-FP16-F", /* filter depth */
        "1312-1-14-14-1x1x1-128-0-14-14-64-0x0x0-1x1x1-1x1x1-0-NCDHW-FP16-F", /* output depth */
        "1312-1-14-14-1x1x1-128-1-0-14-64-0x0x0-1x1x1-1x1x1-0-NCDHW-FP16-F",  /* output height */
        "64-56-56-1x1-256-56-56-32-0x0-1x1-0x1-0-NCHW-FP32-F",                 /* 2-D dilation */
        "64-56-56-1x1-256-56-0-32-0x0-1x1-1x1-0-NCHW-FP32-F",                  /* 2-D output width */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) cr_assert_str_eq(key_refused(bad[i]), "zero size field", "%s", bad[i]);
    data_problem p;
    const char *why = NULL;
    const char *ok = "1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-1x1x1-1x1x1-0-NCDHW-FP16-F";
    cr_assert_eq(data_key_parse(ok, strlen(ok), &p, &why), HR_OK, "%s", why);
}

/* Twelve-digit sizes: each fits, their products do not. The largest key whose tensors fit is computed on. */
Test(hostile_keys, sizes_whose_products_overflow_are_refused)
{
    cr_assert_str_eq(key_refused("999999999999-999999999999-999999999999-999999999999-1x1x1-1-1-1-1-1-0x0x0-1x1x1-1x1x1-0-"
                                 "NCDHW-FP32-F"),
                     "tensor size overflows 64 bits");
    cr_assert_str_eq(key_refused("1-1-1-1-999999x999999x999999-999999-1-1-1-1-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F"),
                     "tensor size overflows 64 bits");
    cr_assert_str_eq(key_refused("1-1-1-1-1x1x1-1-999999-999999-999999-999999-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F"),
                     "tensor size overflows 64 bits");
    /* 2^62 elements in x: accepted, and its features are finite (the integer products stay in range) */
    const char *big = "2097152-1-1048576-1024-1x1x1-1-1-1-1-2048-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-B";
    data_problem p;
    const char *why = NULL;
    cr_assert_eq(data_key_parse(big, strlen(big), &p, &why), HR_OK, "%s", why);
    float *x = malloc((size_t)data_features_count() * sizeof *x);
    data_features_compute(&p, x);
    for (int j = 0; j < data_features_count(); j++) cr_assert(isfinite(x[j]), "feature %s", data_feature_name(j));
    free(x);
}

/* A find-db line with such a key is skipped (counted under its reason), or an error under strict. */
Test(hostile_keys, find_db_lines_with_refused_keys_are_skipped)
{
    const char *text = "1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-0x1x1-1x1x1-0-NCDHW-FP16-F=k0:1.0,0,a;k1:2.0,0,a\n"
                       "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F=k0:1.0,0,a;k1:2.0,0,a\n";
    data_load_opts lax = {.threads = 1}, strict = {.strict = 1, .threads = 1};
    data_select *ds = NULL;
    cr_assert_eq(data_fdb_parse("z.fdb.txt", text, strlen(text), &lax, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 1);
    cr_assert_eq(ds->skips.total, 1);
    cr_assert_str_eq(ds->skips.reason[0], "zero size field");
    data_select_free(ds);
    cr_assert_neq(data_fdb_parse("z.fdb.txt", text, strlen(text), &strict, &ds), HR_OK);
    cr_assert(strstr(hr_last_error(), "z.fdb.txt:1") && strstr(hr_last_error(), "zero size field"), "%s", hr_last_error());
}

/* The vendor's ranking beside a find-db with CR-only line ends, and blank lines: lines count as they are, so a bad
 * line is named by its own number (it was one long line, or numbered without its blank lines). */
Test(hostile_keys, vendor_sidecar_lines_are_numbered_as_written)
{
    const char *fdb = "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F=k0:1.0,0,a;k1:2.0,0,a\n";
    char *dir = test_tmppath(".d"), path[1024], side[1024], cmd[2048], *out;
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/x.fdb.txt", dir);
    snprintf(side, sizeof side, "%s/x.heuristic.txt", dir);
    FILE *f = fopen(path, "w");
    fputs(fdb, f);
    fclose(f);
    static const char *const sidecars[2] = {
        "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F=k1;k0\r\r# a comment\rno equals sign\r",
        "\n\n64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F=k1;k0\r\nno equals sign\r\n",
    };
    const char *want[2] = {":4: expected <problem key>=", ":4: expected <problem key>="};
    for (int s = 0; s < 2; s++) {
        f = fopen(side, "w");
        fputs(sidecars[s], f);
        fclose(f);
        data_select *ds = NULL;
        cr_assert_eq(data_fdb_parse(path, fdb, strlen(fdb), NULL, &ds), HR_OK, "%s", hr_last_error());
        int found;
        cr_assert_neq(data_vendor_attach(ds, path, 1, &found), HR_OK, "sidecar %d accepted", s);
        cr_assert(strstr(hr_last_error(), side) && strstr(hr_last_error(), want[s]), "%s", hr_last_error());
        data_select_free(ds);
    }
    /* and a good CR-only sidecar ranks */
    f = fopen(side, "w");
    fputs("# ranks\r64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F=k1;k0\r", f);
    fclose(f);
    data_select *ds = NULL;
    cr_assert_eq(data_fdb_parse(path, fdb, strlen(fdb), NULL, &ds), HR_OK);
    int found;
    cr_assert_eq(data_vendor_attach(ds, path, 1, &found), HR_OK, "%s", hr_last_error());
    cr_assert(found);
    cr_assert_eq(ds->vendor_rank[0], 1);
    cr_assert_eq(ds->vendor_rank[1], 0);
    data_select_free(ds);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    test_run_shell(cmd, &out);
    free(out);
    free(dir);
}
