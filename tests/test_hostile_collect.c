/* Hostile input to heurist-collect's host code (collect/, built without CUDA and, in the ASan tree, under address
 * and undefined-behaviour sanitizers): the inputs the collect mutation fuzz found, and a replay of the libFuzzer
 * target's seeds and regressions (fuzz/fuzz_collect.c) through the same code. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "collect/collect.h"
#include "collect/gemm.h"
#include "helpers/testutil.h"

#include "fuzz/fuzz_collect.c"

static void key_refused(const char *key, const char *why)
{
    collect_conv cv;
    cr_assert_eq(collect_conv_from_key(key, strlen(key), &cv), COLLECT_EFORMAT, "accepted %s", key);
    cr_assert(strstr(collect_last_error(), why), "'%s' lacks '%s'", collect_last_error(), why);
}

/* A zero depth stride divided by zero (SIGFPE); every slot of a 3-D key is checked. */
Test(hostile_collect, zero_strides_and_dilations_of_3d_keys_are_refused)
{
    key_refused("1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-0x1x1-1x1x1-0-NCDHW-FP16-F", "zero size field");
    key_refused("1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-1x1x0-1x1x1-0-NCDHW-FP16-F", "zero size field");
    key_refused("1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-1x1x1-0x1x1-0-NCDHW-FP16-F", "zero size field");
    collect_conv cv;
    const char *ok = "1312-1-14-14-1x1x1-128-1-14-14-64-0x0x0-1x1x1-1x1x1-0-NCDHW-FP16-F";
    cr_assert_eq(collect_conv_from_key(ok, strlen(ok), &cv), COLLECT_OK, "%s", collect_last_error());
    cr_assert_eq(cv.nd, 3);
    cr_assert_eq(cv.stride[0], 1);
}

/* Tensor sizes whose element counts overflow int64 (each size below the 2^30 bound) are refused before any product
 * is taken; the largest that fit give exact counts. */
Test(hostile_collect, tensor_sizes_that_overflow_are_refused)
{
    key_refused("1000000-1000000-1000000-1000000-1x1x1-1000000-1000000-1000000-1000000-1000000-0x0x0-1x1x1-1x1x1-0-NCDHW-"
                "FP32-F",
                "overflows 64 bits");
    collect_conv cv;
    const char *big = "65536-1-65536-1024-1x1x1-1-1-65536-1024-1024-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F";
    cr_assert_eq(collect_conv_from_key(big, strlen(big), &cv), COLLECT_OK, "%s", collect_last_error());
    cr_assert_eq(collect_conv_x_elems(&cv), (int64_t)1 << 52);
}

/* A gemm table holding only its header member (a run killed before its first problem, what --resume scans):
 * no key, nothing sorted, the header's bytes good. */
Test(hostile_collect, done_scan_of_a_header_only_table)
{
    char *path = test_tmppath(".csv.gz");
    gzFile g = gzopen(path, "wb");
    cr_assert_not_null(g);
    gzputs(g, collect_gemm_csv_header());
    cr_assert_eq(gzclose(g), Z_OK);
    collect_gemm_done d;
    cr_assert_eq(collect_gemm_done_scan(path, &d), COLLECT_OK, "%s", collect_last_error());
    cr_assert_eq(d.n, 0);
    cr_assert_gt(d.good_bytes, 0);
    cr_assert_eq(d.truncated, 0);
    cr_assert_eq(collect_gemm_done_has(&d, "64,128,256,bf16,N,T"), 0);
    collect_gemm_done_free(&d);
    remove(path);
    free(path);
}

Test(hostile_collect, statistics_of_no_values_are_nan)
{
    cr_assert(isnan(collect_median(NULL, 0)));
    cr_assert(isnan(collect_percentile(NULL, 0, 50)));
}

/* Every seed of fuzz/corpus/collect is read; every input of fuzz/regressions/collect is read or refused with a
 * message; none faults (the ASan tree runs this under the sanitizers). Returns the inputs replayed. */
static int replay(const char *folder, int seeds)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/fuzz/%s/collect", HEURIST_SOURCE_DIR, folder);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        unsigned char buf[1 << 16];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        collect_error(COLLECT_OK, "%s", "");
        int rc = fuzz_collect_load(buf, len);
        if (seeds) cr_assert_eq(rc, COLLECT_OK, "seed %s: %s", e->d_name, collect_last_error());
        else if (rc) cr_assert(*collect_last_error(), "%s: refused without a message", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

Test(hostile_collect, fuzz_seeds_load_and_regressions_are_clean)
{
    cr_assert_geq(replay("corpus", 1), 16);
    cr_assert_geq(replay("regressions", 0), 15);
}

/* verify --resume --retimed-out: a complete line of the re-timed file that is not a row as verify writes it (a field
 * that is no whole number or has a sign or space before its digits, a time that is not a positive decimal number) is refused naming the file and line, before anything is
 * written: the file is left as it was and no PATH.tmp appears */
Test(hostile_collect, retimed_resume_refuses_a_bad_row)
{
    static const char *const bad[] = {
        "96,96,96,bf16,T,N\t43\t256\tx128\t32\t0\t1\t0\t0\t0\t2\t1\t0\t8.75\n",
        "96,96,96,bf16,T,N\t43\t256\t128\t32\t0\t1\t0\t0\t0\t2\t1\t0\t-8.75\n",
        "96,96,96,bf16,T,N\t43\t256\t128\t32\t0\t1\t0\t0\t0\t2\t1\t8.75\n",
        "96,96,96,bf16,T,N\t43\t256\t128\t32\t0\t1\t0\t0\t0\t2\t1\t0\tnan\n",
        /* what strtol and strtod take but verify never writes, and gemm_retimed_table.py refuses */
        "96,96,96,bf16,T,N\t43\t+256\t128\t32\t0\t1\t0\t0\t0\t2\t1\t0\t8.75\n",
        "96,96,96,bf16,T,N\t43\t 256\t128\t32\t0\t1\t0\t0\t0\t2\t1\t0\t8.75\n",
        "96,96,96,bf16,T,N\t43\t256\t128\t32\t0\t1\t0\t0\t0\t2\t1\t0\t0x10\n",
        "96,96,96,bf16,T,N\t43\t256\t128\t32\t0\t1\t0\t0\t0\t2\t1\t0\t 8.75\n"};
    const char *dir = getenv("TMPDIR");
    char path[1024], tmp[1100];
    snprintf(path, sizeof path, "%s/hostile_retimed_%d.tsv", dir && *dir ? dir : "/tmp", (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    char *const done[] = {"128,64,32,fp16,N,T", "96,96,96,bf16,T,N"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[2048];
        int len = snprintf(text, sizeof text,
                           "key\talgo_id\ttile_m\ttile_n\tstage_k\tstages\tsplit_k\treduction_scheme\tswizzle\t"
                           "custom_option\tcluster_m\tcluster_n\tinner_shape\ttime_us\n"
                           "128,64,32,fp16,N,T\t43\t128\t128\t32\t0\t1\t0\t0\t0\t2\t1\t0\t12.5\n%s", bad[i]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(text, f);
        fclose(f);
        collect_retimed_out o;
        cr_assert_eq(collect_retimed_open(&o, path, done, 2, 1), COLLECT_EFORMAT, "case %zu taken", i);
        cr_assert_not_null(strstr(collect_last_error(), "line 3"), "case %zu: %s", i, collect_last_error());
        cr_assert_not_null(strstr(collect_last_error(), path), "case %zu: %s", i, collect_last_error());
        collect_retimed_abandon(&o);
        cr_assert_neq(access(tmp, F_OK), 0, "case %zu: %s written", i, tmp);
        size_t got = 0;
        char *back = test_file_read(path, &got);
        cr_assert(back && got == (size_t)len && memcmp(back, text, got) == 0, "case %zu: the file changed", i);
        free(back);
    }
    remove(path);
}
