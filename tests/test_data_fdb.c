/* find-db: key parsing, line formats, skip accounting, malformed input, bzip2 and gzip input, real files. */
#include <bzlib.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/data.h"
#include "helpers/testutil.h"

static data_problem parse_ok(const char *key)
{
    data_problem p;
    const char *why = NULL;
    int rc = data_key_parse(key, strlen(key), &p, &why);
    cr_assert_eq(rc, HR_OK, "key %s: %s", key, why ? why : "");
    return p;
}

static const char *parse_bad(const char *key)
{
    data_problem p;
    const char *why = NULL;
    cr_assert_neq(data_key_parse(key, strlen(key), &p, &why), HR_OK, "key %s parsed", key);
    cr_assert_not_null(why);
    return why;
}

Test(data_key, two_d_key_fields)
{
    data_problem p = parse_ok("64-56-28-3x1-128-28-14-16-1x0-2x2-1x1-0-NCHW-FP16-B");
    cr_assert_eq(p.f[DATA_FIELD_IN_C], 64);
    cr_assert_eq(p.f[DATA_FIELD_IN_H], 56);
    cr_assert_eq(p.f[DATA_FIELD_IN_W], 28);
    cr_assert_eq(p.f[DATA_FIELD_FIL_H], 3);
    cr_assert_eq(p.f[DATA_FIELD_FIL_W], 1);
    cr_assert_eq(p.f[DATA_FIELD_OUT_C], 128);
    cr_assert_eq(p.f[DATA_FIELD_OUT_H], 28);
    cr_assert_eq(p.f[DATA_FIELD_OUT_W], 14);
    cr_assert_eq(p.f[DATA_FIELD_BATCH], 16);
    cr_assert_eq(p.f[DATA_FIELD_PAD_H], 1);
    cr_assert_eq(p.f[DATA_FIELD_PAD_W], 0);
    cr_assert_eq(p.f[DATA_FIELD_STRIDE_H], 2);
    cr_assert_eq(p.f[DATA_FIELD_IN_D], 1);
    cr_assert_eq(p.f[DATA_FIELD_SPATIAL_DIM], 2);
    cr_assert_eq(p.f[DATA_FIELD_GROUPS], 1);
    cr_assert_eq(p.dtype, DATA_DTYPE_FP16);
    cr_assert_eq(p.direction, DATA_DIR_B);
    cr_assert_eq(p.layout, DATA_LAYOUT_NCHW);
}

Test(data_key, three_d_key_with_group_suffix)
{
    data_problem p = parse_ok("120-1-14-14-1x1x1-480-1-14-14-1-0x0x0-1x1x1-1x1x1-0-NCDHW-BF16-F_g3");
    cr_assert_eq(p.f[DATA_FIELD_IN_C], 120);
    cr_assert_eq(p.f[DATA_FIELD_IN_D], 1);
    cr_assert_eq(p.f[DATA_FIELD_IN_H], 14);
    cr_assert_eq(p.f[DATA_FIELD_OUT_C], 480);
    cr_assert_eq(p.f[DATA_FIELD_GROUPS], 3);
    cr_assert_eq(p.f[DATA_FIELD_SPATIAL_DIM], 3);
    cr_assert_eq(p.dtype, DATA_DTYPE_BF16);
    cr_assert_eq(p.layout, DATA_LAYOUT_NCDHW);
    cr_assert_eq(p.direction, DATA_DIR_F);
}

Test(data_key, three_layouts_and_format_round_trip)
{
    data_problem p = parse_ok("16-7-7-1x1-32-7-7-8-0x0-1x1-1x1-1-NCHW-NHWC-NCHW-FP32-W");
    cr_assert_eq(p.layout, DATA_LAYOUT_MIXED);
    cr_assert_eq(p.f[DATA_FIELD_BIAS], 1);
    const char *k = "64-56-28-3x1-128-28-14-16-1x0-2x2-1x1-0-NHWC-INT8-F_g2";
    data_problem q = parse_ok(k);
    char buf[256];
    data_key_format(&q, buf, sizeof buf);
    cr_assert_str_eq(buf, k);
}

Test(data_key, malformed_keys_name_their_reason)
{
    cr_assert_str_eq(parse_bad("64-56-28-3x1-128-28-14-16-1x0-2x2"), "too few key fields");
    cr_assert_str_eq(parse_bad("64-5a-28-3x1-128-28-14-16-1x0-2x2-1x1-0-NCHW-FP16-B"), "non-numeric size field");
    cr_assert_str_eq(parse_bad("64-56-28-3-128-28-14-16-1x0-2x2-1x1-0-NCHW-FP16-B-x"), "bad filter field");
    cr_assert_str_eq(parse_bad("64-56-28-3x1-128-28-14-16-1x0-2x2-1x1-0-NCHW-FP16-Q"), "bad direction field");
    cr_assert_str_eq(parse_bad("64-56-28-3x1-128-28-14-16-1x0-2x2x2-1x1-0-NCHW-FP16-B"), "bad stride field");
    cr_assert_str_eq(parse_bad("0-56-28-3x1-128-28-14-16-1x0-2x2-1x1-0-NCHW-FP16-B"), "zero size field");
    cr_assert_str_eq(parse_bad("64-56-28-3x1-128-28-14-16-1x0-2x2-1x1-0-NCHW-FP16-B_gx"), "bad group suffix");
}

Test(data_key, geometry_hash_ignores_direction_and_type)
{
    data_problem a = parse_ok("64-56-28-3x1-128-28-14-16-1x0-2x2-1x1-0-NCHW-FP16-B");
    data_problem b = parse_ok("64-56-28-3x1-128-28-14-16-1x0-2x2-1x1-0-NHWC-FP32-F");
    data_problem c = parse_ok("64-56-28-3x1-128-28-14-32-1x0-2x2-1x1-0-NCHW-FP16-B");
    cr_assert_eq(data_problem_geometry_hash(&a), data_problem_geometry_hash(&b));
    cr_assert_neq(data_problem_geometry_hash(&a), data_problem_geometry_hash(&c));
}

static const char *good_text =
    "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KernB:0.5,0,algo;KernA:0.25,0,algo\n"
    "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B=miopenConvolutionBwdDataAlgoDirect:KernC,1.5,0,"
    "miopenConvolutionBwdDataAlgoDirect,<unused>;miopenX:KernA,0.75,0,miopenX,<unused>\n";

Test(data_fdb, both_entry_formats_and_inf_for_unmeasured)
{
    data_select *ds;
    cr_assert_eq(data_fdb_parse("t.fdb.txt", good_text, strlen(good_text), NULL, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 2);
    cr_assert_eq(ds->n_kernels, 3);
    cr_assert_str_eq(ds->kernels[0], "KernA");
    cr_assert_str_eq(ds->kernels[2], "KernC");
    cr_assert_float_eq(ds->runtime[0 * 3 + 0], 0.25f, 1e-7);
    cr_assert_float_eq(ds->runtime[0 * 3 + 1], 0.5f, 1e-7);
    cr_assert(isinf(ds->runtime[0 * 3 + 2]));
    cr_assert(isinf(ds->runtime[1 * 3 + 1]));
    cr_assert_float_eq(ds->runtime[1 * 3 + 2], 1.5f, 1e-7);
    cr_assert_eq(data_select_best(ds, 0), 0);
    cr_assert_eq(data_select_best(ds, 1), 0);
    cr_assert_eq(ds->skips.total, 0);
    data_select_free(ds);
}

static long skip_count(const data_select *ds, const char *reason)
{
    for (int r = 0; r < ds->skips.n_reasons; r++)
        if (strcmp(ds->skips.reason[r], reason) == 0) return ds->skips.count[r];
    return 0;
}

static const char *bad_text =
    "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KernA:0.25,0,a\n"       /* good */
    "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B=KernA:abc,0,a\n"        /* non-numeric time */
    "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-W=KernA:-1.0,0,a\n"       /* negative time */
    "2-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-W=KernA:0.0,0,a\n"        /* zero time */
    "3-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-W=KernA:1,0,a;KernA:2,0,a\n" /* duplicate kernel */
    "4-8-8-1x1-4-8=KernA:1,0,a\n"                                      /* short key */
    "no equals sign here\n"
    "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KernA:0.3,0,a\n"        /* duplicate problem */
    "5-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=\n";                   /* no entries */

Test(data_fdb, bad_lines_are_counted_by_reason)
{
    data_select *ds;
    cr_assert_eq(data_fdb_parse("bad.txt", bad_text, strlen(bad_text), NULL, &ds), HR_OK);
    cr_assert_eq(ds->n, 1);
    cr_assert_eq(ds->lines, 9);
    cr_assert_eq(ds->skips.total, 8);
    cr_assert_eq(skip_count(ds, "non-numeric time"), 1);
    cr_assert_eq(skip_count(ds, "non-positive or infinite time"), 2);
    cr_assert_eq(skip_count(ds, "duplicate kernel in line"), 1);
    cr_assert_eq(skip_count(ds, "too few key fields"), 1);
    cr_assert_eq(skip_count(ds, "missing '='"), 1);
    cr_assert_eq(skip_count(ds, "duplicate problem key"), 1);
    cr_assert_eq(skip_count(ds, "no kernel entries"), 1);
    cr_assert_float_eq(ds->runtime[0], 0.25f, 1e-7); /* the first of a duplicated problem wins */
    data_select_free(ds);
}

Test(data_fdb, strict_mode_names_file_and_line)
{
    data_select *ds;
    data_load_opts o = {.strict = 1};
    cr_assert_eq(data_fdb_parse("bad.txt", bad_text, strlen(bad_text), &o, &ds), HR_EFORMAT);
    cr_assert_null(ds);
    cr_assert_str_eq(hr_last_error(), "bad.txt:2: non-numeric time");
}

Test(data_fdb, file_without_usable_line_is_an_error)
{
    const char *t = "garbage\nmore garbage\n";
    data_select *ds;
    cr_assert_eq(data_fdb_parse("g.txt", t, strlen(t), NULL, &ds), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "g.txt: no usable line") != NULL, "%s", hr_last_error());
    cr_assert_eq(data_fdb_parse("e.txt", "", 0, NULL, &ds), HR_EFORMAT);
}

static char *bz2_of(const char *text, unsigned *out_len)
{
    unsigned cap = (unsigned)strlen(text) * 2 + 1024;
    char *out = malloc(cap);
    cr_assert_eq(BZ2_bzBuffToBuffCompress(out, &cap, (char *)text, (unsigned)strlen(text), 9, 0, 0), BZ_OK);
    *out_len = cap;
    return out;
}

Test(data_fdb, reads_bzip2_and_rejects_truncated_bzip2)
{
    unsigned n;
    char *z = bz2_of(good_text, &n);
    char *path = test_tmpfile(".fdb.txt.bz2", z, n);
    data_select *ds;
    cr_assert_eq(data_fdb_load(path, NULL, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 2);
    data_select_free(ds);
    remove(path);
    free(path);
    path = test_tmpfile(".fdb.txt.bz2", z, n - 20);
    cr_assert_neq(data_fdb_load(path, NULL, &ds), HR_OK);
    cr_assert(strstr(hr_last_error(), path) != NULL, "%s", hr_last_error());
    cr_assert(strstr(hr_last_error(), "bzip2") != NULL, "%s", hr_last_error());
    remove(path);
    free(path);
    free(z);
    cr_assert_eq(data_fdb_load("/nonexistent/x.fdb.txt", NULL, &ds), HR_EIO);
}

/* The input module decompresses gzip by content as it does bzip2, whatever the name says. */
Test(data_fdb, reads_gzip_and_rejects_truncated_gzip)
{
    uLong cap = compressBound((uLong)strlen(good_text)) + 64;
    unsigned char *z = malloc(cap);
    z_stream s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(deflateInit2(&s, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    s.next_in = (unsigned char *)good_text;
    s.avail_in = (uInt)strlen(good_text);
    s.next_out = z;
    s.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&s, Z_FINISH), Z_STREAM_END);
    size_t n = s.total_out;
    deflateEnd(&s);
    char *path = test_tmpfile(".fdb.txt", z, n);
    data_select *ds;
    cr_assert_eq(data_fdb_load(path, NULL, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 2);
    data_select_free(ds);
    remove(path);
    free(path);
    path = test_tmpfile(".fdb.txt", z, n - 8);
    cr_assert_neq(data_fdb_load(path, NULL, &ds), HR_OK);
    cr_assert(strstr(hr_last_error(), "gzip") != NULL, "%s", hr_last_error());
    remove(path);
    free(path);
    free(z);
}

Test(data_fdb, shipped_mi100_find_db, .timeout = 120)
{
    data_select *ds;
    cr_assert_eq(data_fdb_load(test_miopen("gfx90878.HIP.fdb.txt.bz2"), NULL, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->lines, 183610);
    cr_assert_eq(ds->n + ds->skips.total, 183610);
    cr_assert_eq(ds->n_kernels, 70); /* the data README: 70 distinct solvers */
    /* every skipped line of this file has a zero time; at most 4 kernels per problem */
    cr_assert_eq(ds->skips.n_reasons, 1);
    cr_assert_str_eq(ds->skips.reason[0], "non-positive or infinite time");
    long measured = 0;
    int dir[3] = {0};
    for (int i = 0; i < ds->n; i++) {
        int m = 0;
        for (int k = 0; k < ds->n_kernels; k++) m += isfinite(ds->runtime[(size_t)i * 70 + k]) != 0;
        cr_assert(m >= 1 && m <= 4);
        measured += m;
        dir[ds->problems[i].direction]++;
    }
    double mean = (double)measured / ds->n;
    cr_assert(mean > 3.2 && mean < 3.4, "mean kernels per problem %f", mean);
    for (int d = 0; d < 3; d++) cr_assert(dir[d] > ds->n / 4 && dir[d] < ds->n / 2.5);
    data_select_free(ds);
}

Test(data_fdb, shipped_mi50_find_db_older_entry_format, .timeout = 120)
{
    data_select *ds;
    cr_assert_eq(data_fdb_load(test_miopen("gfx906_60.HIP.fdb.txt.bz2"), NULL, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->lines, 120454);
    cr_assert_eq(ds->n + ds->skips.total, 120454);
    cr_assert_gt(ds->n, 110000);
    cr_assert_gt(ds->n_kernels, 10);
    data_select_free(ds);
}

/* The block-parallel decompressor must give exactly libbz2's serial output. */
Test(data_bz2, parallel_blocks_equal_serial_decompression, .timeout = 120)
{
    const char *path = test_miopen("gfx906_60.HIP.fdb.txt.bz2");
    char *z, *par;
    size_t zn, pn;
    cr_assert_eq(hr_file_read_all(path, &z, &zn), HR_OK);
    cr_assert_eq(data_read_file(path, 0, &par, &pn), HR_OK, "%s", hr_last_error());
    unsigned cap = (unsigned)pn + 1;
    char *ser = malloc(cap);
    cr_assert_eq(BZ2_bzBuffToBuffDecompress(ser, &cap, z, (unsigned)zn, 0, 0), BZ_OK);
    cr_assert_eq(cap, pn);
    cr_assert_eq(memcmp(ser, par, pn), 0);
    free(z);
    free(par);
    free(ser);
}

/* Large inputs parse in line-aligned chunks on several threads: the result must be what one pass gives,
 * including a duplicate key that spans chunks and the order of skip reasons. */
Test(data_fdb, chunked_parse_matches_one_pass_semantics)
{
    int n = 40000;
    size_t cap = (size_t)n * 96, len = 0;
    char *t = malloc(cap);
    for (int i = 1; i <= n; i++) {
        int c = i == 30000 ? 5 : i; /* line 30000 repeats line 5's problem */
        if (i == 35000)
            len += (size_t)snprintf(t + len, cap - len, "%d-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=A:x,0,a\n", c);
        else
            len += (size_t)snprintf(t + len, cap - len, "%d-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=A:%d.5,0,a;B:1,0,a\n", c, i % 3);
    }
    cr_assert_gt(len, 1u << 20);
    data_select *ds;
    cr_assert_eq(data_fdb_parse("big.txt", t, len, NULL, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, n - 2);
    cr_assert_eq(ds->lines, n);
    cr_assert_eq(ds->skips.total, 2);
    cr_assert_str_eq(ds->skips.reason[0], "duplicate problem key");
    cr_assert_eq(ds->skips.first_line[0], 30000);
    cr_assert_str_eq(ds->skips.reason[1], "non-numeric time");
    cr_assert_eq(ds->skips.first_line[1], 35000);
    /* order kept: problem i is line i + 1 for the first lines, and line 5 keeps its own times */
    cr_assert_eq(ds->problems[4].f[DATA_FIELD_IN_C], 5);
    cr_assert_float_eq(ds->runtime[4 * 2 + 0], 2.5f, 1e-6);
    cr_assert_eq(ds->problems[ds->n - 1].f[DATA_FIELD_IN_C], n);
    /* the chunks follow the thread count of the options; the dataset does not */
    for (int threads = 1; threads <= 5; threads += 4) {
        data_load_opts o = {.threads = threads};
        data_select *dt;
        cr_assert_eq(data_fdb_parse("big.txt", t, len, &o, &dt), HR_OK, "%s", hr_last_error());
        cr_assert_eq(dt->n, ds->n);
        cr_assert_eq(dt->skips.total, ds->skips.total);
        cr_assert_eq(dt->skips.first_line[1], 35000);
        cr_assert_eq(memcmp(dt->problems, ds->problems, (size_t)ds->n * sizeof *ds->problems), 0);
        cr_assert_eq(memcmp(dt->runtime, ds->runtime, (size_t)ds->n * ds->n_kernels * sizeof *ds->runtime), 0);
        data_select_free(dt);
    }
    data_select_free(ds);
    data_load_opts strict = {.strict = 1};
    cr_assert_eq(data_fdb_parse("big.txt", t, len, &strict, &ds), HR_EFORMAT);
    cr_assert_str_eq(hr_last_error(), "big.txt:30000: duplicate problem key");
    free(t);
}
