/* collect: find-db lines as heurist's loaders read them, the heuristic sidecar, malformed files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "helpers/testutil.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(collect_fdb, line_is_sorted_fastest_first_with_column)
{
    char *path = test_tmppath(".fdb.txt");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    collect_result r[3] = {{4, COLLECT_MATH_FMA, 1.25, 1024}, {2, COLLECT_MATH_DEFAULT, 0.5, 0},
                           {1, COLLECT_MATH_TENSOR_OP, 0.0123456789, 77}};
    cr_assert_eq(collect_fdb_write_line(f, "K-F", COLLECT_DIR_F, r, 3), 0);
    fclose(f);
    cr_assert_str_eq(slurp(path), "K-F=FWD_IMPLICIT_PRECOMP_GEMM.tensor_op:0.0123457,77,cudnnConvolutionFwdAlgo;"
                                  "FWD_GEMM.default:0.5,0,cudnnConvolutionFwdAlgo;"
                                  "FWD_FFT.fma:1.25,1024,cudnnConvolutionFwdAlgo\n");
    cr_assert_eq(r[0].algo, 1, "results are sorted in place");
    collect_file cf;
    cr_assert_eq(collect_file_read(path, &cf), 0, "%s", collect_last_error());
    cr_assert_eq(cf.n, 1);
    cr_assert_str_eq(cf.lines[0].key, "K-F");
    cr_assert_eq(cf.lines[0].n, 3);
    cr_assert_str_eq(cf.lines[0].names[2], "FWD_FFT.fma");
    cr_assert_float_eq(cf.lines[0].ms[1], 0.5, 1e-12);
    collect_file_free(&cf);
    remove(path);
    free(path);
}

Test(collect_fdb, tiny_times_stay_positive_and_empty_is_refused)
{
    char *path = test_tmppath(".fdb.txt");
    FILE *f = fopen(path, "w");
    collect_result r[1] = {{0, 0, 0.0, 0}};
    cr_assert_eq(collect_fdb_write_line(f, "K-B", COLLECT_DIR_B, r, 1), 0);
    cr_assert_eq(collect_fdb_write_line(f, "K-B", COLLECT_DIR_B, r, 0), COLLECT_EINVAL);
    fclose(f);
    cr_assert_str_eq(slurp(path), "K-B=BWD_DATA_ALGO_0.default:1e-06,0,cudnnConvolutionBwdDataAlgo\n");
    remove(path);
    free(path);
}

Test(collect_sidecar, round_trip_and_lookup)
{
    char *path = test_tmppath(".heuristic.txt");
    FILE *f = fopen(path, "w");
    const char *a[2] = {"BWD_FILTER_ALGO_1.tensor_op", "BWD_FILTER_ALGO_0.default"};
    const char *b[1] = {"FWD_GEMM.default"};
    cr_assert_eq(collect_sidecar_write_line(f, "A-W", a, 2), 0);
    cr_assert_eq(collect_sidecar_write_line(f, "B-F", b, 1), 0);
    fclose(f);
    cr_assert_str_eq(slurp(path), "A-W=BWD_FILTER_ALGO_1.tensor_op;BWD_FILTER_ALGO_0.default\nB-F=FWD_GEMM.default\n");
    collect_file cf;
    cr_assert_eq(collect_file_read(path, &cf), 0);
    cr_assert_eq(cf.n, 2);
    cr_assert_eq(collect_file_find(&cf, "B-F"), 1);
    cr_assert_eq(collect_file_find(&cf, "C-F"), -1);
    cr_assert_str_eq(cf.lines[0].names[1], "BWD_FILTER_ALGO_0.default");
    cr_assert_float_eq(cf.lines[0].ms[0], 0.0, 0.0);
    collect_file_free(&cf);
    remove(path);
    free(path);
}

static void read_bad(const char *text, const char *want)
{
    char *path = test_tmpfile(".txt", text, strlen(text));
    collect_file cf;
    cr_assert_eq(collect_file_read(path, &cf), COLLECT_EFORMAT, "'%s' was read", text);
    cr_assert(strstr(collect_last_error(), want), "message '%s' lacks '%s'", collect_last_error(), want);
    cr_assert_eq(cf.n, 0);
    remove(path);
    free(path);
}

Test(collect_file, malformed_lines_name_file_and_line)
{
    read_bad("A-F=X:1,0,c\nno equals sign\n", ":2: missing key or '='");
    read_bad("A-F=X:abc,0,c\n", ":1: bad time");
    read_bad("A-F=X:-1,0,c\n", ":1: bad time");
    read_bad("A-F=X:1,0,c;;Y:2,0,c\n", ":1: empty entry");
    read_bad("A-F=\n", ":1: no entry");
    collect_file cf;
    cr_assert_eq(collect_file_read("/nonexistent/dir/x.txt", &cf), COLLECT_EIO);
    cr_assert(strstr(collect_last_error(), "/nonexistent/dir/x.txt"));
}
