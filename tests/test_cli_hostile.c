/* Hostile input (issue #22): every reproducer and every fuzzer-found input is a one-line error naming the
 * file and the problem, through the same loaders a user's file reaches, in every build (release and
 * ASan/UBSan). fuzz/regressions/<target>/ is replayed through fuzz/fuzz_load.c, the code the libFuzzer
 * targets run. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "core/h5.h"
#include "data/data.h"
#include "helpers/testutil.h"

/* the fuzz targets' loaders, compiled into this test so the replay runs exactly the fuzzed code */
#include "fuzz/fuzz_load.c"

#define KEY "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F"
#define REPRO HEURIST_SOURCE_DIR "/tests/fixtures/repro/"

/* A command on a reproducer: non-zero exit, exactly one line, naming the file and containing `why`. */
static void expect_one_line_error(const char *args, const char *file, const char *why)
{
    char *out;
    int rc = test_cli_run(args, &out);
    cr_assert(rc > 0, "exit %d for: %s\n%s", rc, args, out);
    cr_assert_eq(test_lines_count(out), 1, "not one line for: %s\n%s", args, out);
    cr_assert(strstr(out, file), "does not name %s: %s", file, out);
    cr_assert(strstr(out, why), "does not say '%s': %s", why, out);
    free(out);
}

Test(hostile, reproducers_exit_nonzero_with_one_line, .timeout = 300)
{
    const char *p1025 = REPRO "perfdb_empty_params_1025.db", *p500 = REPRO "perfdb_empty_params_500.db";
    const char *flipped = REPRO "gbdt_model_flipped.h5";
    char args[2048];
    snprintf(args, sizeof args, "data info --data %s --solver EmptySolver", p1025);
    expect_one_line_error(args, p1025, "empty parameter string");
    const char *families[] = {"gbdt", "seq2seq"};
    for (int k = 0; k < 2; k++) {
        char *out = test_tmppath(".h5");
        snprintf(args, sizeof args, "train --data %s --task tune --solver EmptySolver --model %s --out %s", p500,
                 families[k], out);
        expect_one_line_error(args, p500, "no usable perf_db row");
        cr_assert(!hr_file_exists(out));
        free(out);
    }
    char *cache = test_tmppath(".h5");
    snprintf(args, sizeof args, "data cache --data %s --solver EmptySolver --out %s", p500, cache);
    expect_one_line_error(args, p500, "no usable perf_db row");
    cr_assert(!hr_file_exists(cache));
    free(cache);
    snprintf(args, sizeof args, "predict --model %s --problem " KEY, flipped);
    expect_one_line_error(args, flipped, "integrity block");
    snprintf(args, sizeof args, "export --model %s --format c --out %s", flipped, "/nonexistent-dir");
    expect_one_line_error(args, flipped, "integrity block");
}

/* Every committed regression input is refused cleanly by its loader; every seed of the corpora loads. */
Test(hostile, fuzz_regressions_are_clean_errors_and_seeds_load, .timeout = 300)
{
    for (int t = 0; t < FUZZ_COUNT; t++) {
        for (int corpus = 0; corpus < 2; corpus++) {
            char dir[1024];
            snprintf(dir, sizeof dir, "%s/fuzz/%s/%s", HEURIST_SOURCE_DIR, corpus ? "corpus" : "regressions",
                     fuzz_target_names[t]);
            DIR *d = opendir(dir);
            cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
            int seen = 0;
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.') continue;
                char path[2048];
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                char *buf;
                size_t len;
                cr_assert_eq(hr_file_read_all(path, &buf, &len), HR_OK);
                hr_error_clear();
                int rc = fuzz_load(t, (const uint8_t *)buf, len);
                free(buf);
                seen++;
                if (corpus) {
                    /* config seeds include bad values on purpose; the file seeds are all valid */
                    if (t != FUZZ_CONFIG) cr_assert_eq(rc, HR_OK, "seed %s: %s", path, hr_last_error());
                    continue;
                }
                cr_assert(rc < 0, "regression %s loads", path);
                const char *msg = hr_last_error();
                cr_assert(strcmp(msg, "no error recorded") != 0 && !strchr(msg, '\n'), "%s: '%s'", path, msg);
            }
            closedir(d);
            cr_assert(seen > 0, "%s is empty", dir);
        }
    }
}

/* Rows with an empty parameter string are skipped with a counted reason; the others load. */
Test(hostile, perfdb_empty_parameter_rows_are_skipped)
{
    char *path = test_tmppath(".db");
    char *src;
    size_t len;
    cr_assert_eq(hr_file_read_all(REPRO "perfdb_empty_params_500.db", &src, &len), HR_OK);
    FILE *f = fopen(path, "wb");
    cr_assert_eq(fwrite(src, 1, len, f), len);
    fclose(f);
    free(src);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "UPDATE perf_db SET params = '3,1,4' WHERE id IN "
                                  "(SELECT id FROM perf_db WHERE solver = 'EmptySolver' ORDER BY id LIMIT 7)",
                              NULL, NULL, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(db));
    /* a value that would wrap to another int32 is skipped too, never stored wrapped */
    cr_assert_eq(sqlite3_exec(db, "UPDATE perf_db SET params = '3,99999999999,4' WHERE id IN "
                                  "(SELECT id FROM perf_db WHERE solver = 'EmptySolver' ORDER BY id DESC LIMIT 1)",
                              NULL, NULL, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);
    data_tune *dt;
    cr_assert_eq(data_perfdb_load(path, "EmptySolver", NULL, &dt), HR_OK, "%s", hr_last_error());
    cr_assert_eq(dt->n, 7);
    cr_assert_eq(dt->length, 3);
    cr_assert_eq(dt->skips.total, 493);
    cr_assert_str_eq(dt->skips.reason[0], "empty parameter string");
    cr_assert_eq(dt->skips.count[0], 492);
    cr_assert_str_eq(dt->skips.reason[1], "parameter outside the int32 range");
    data_tune_free(dt);
    remove(path);
    free(path);
}

Test(hostile, cache_refuses_zero_length_datasets)
{
    data_tune dt;
    memset(&dt, 0, sizeof dt);
    data_problem p[2];
    memset(p, 0, sizeof p);
    dt.n = 2;
    dt.problems = p;
    char *path = test_tmppath(".h5");
    cr_assert_eq(data_cache_write_tune(path, &dt), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), path) && strstr(hr_last_error(), "0 parameters"), "%s", hr_last_error());
    cr_assert(!hr_file_exists(path));
    data_select ds;
    memset(&ds, 0, sizeof ds);
    ds.n = 2;
    cr_assert_eq(data_cache_write_select(path, &ds), HR_EINVAL);
    cr_assert(!hr_file_exists(path));
    free(path);
}

/* The seal: a flipped byte anywhere after the block, a truncation, or a plain HDF5 file is refused before
 * HDF5 parses the file. */
Test(hostile, sealed_files_refuse_damage_and_plain_hdf5)
{
    char *src;
    size_t len;
    cr_assert_eq(hr_file_read_all(HEURIST_SOURCE_DIR "/fuzz/corpus/cache/tune_small.h5", &src, &len), HR_OK);
    char *path = test_tmppath(".h5");
    data_select *ds;
    data_tune *dt;
    for (size_t at = HR_H5_USERBLOCK; at < len; at += len / 7) {
        src[at] ^= 0x01;
        FILE *f = fopen(path, "wb");
        fwrite(src, 1, len, f);
        fclose(f);
        src[at] ^= 0x01;
        cr_assert_eq(data_cache_read(path, &ds, &dt), HR_EFORMAT);
        cr_assert(strstr(hr_last_error(), "checksum mismatch, the file is damaged") && strstr(hr_last_error(), path),
                  "%s", hr_last_error());
    }
    FILE *f = fopen(path, "wb");
    fwrite(src, 1, len - 100, f);
    fclose(f);
    cr_assert_eq(data_cache_read(path, &ds, &dt), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "truncated"), "%s", hr_last_error());
    /* the HDF5 part alone, as another tool would write it */
    f = fopen(path, "wb");
    fwrite(src + HR_H5_USERBLOCK, 1, len - HR_H5_USERBLOCK, f);
    fclose(f);
    cr_assert_eq(data_cache_read(path, &ds, &dt), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "without heurist's integrity block"), "%s", hr_last_error());
    /* sealed on purpose, it loads again: the block is all that was missing */
    cr_assert_eq(hr_h5_seal_file(path), HR_OK, "%s", hr_last_error());
    cr_assert_eq(data_cache_read(path, &ds, &dt), HR_OK, "%s", hr_last_error());
    cr_assert_eq(dt->n, 12);
    data_tune_free(dt);
    remove(path);
    free(path);
    free(src);
}

Test(hostile, one_line_with_200k_kernels_parses_in_well_under_a_second)
{
    const int K = 200000;
    size_t cap = (size_t)K * 24 + 128, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text, cap, KEY "=");
    for (int k = 0; k < K; k++) n += (size_t)snprintf(text + n, cap - n, "%sK%d:1.5,0,0", k ? ";" : "", k);
    text[n++] = '\n';
    double t0 = hr_now();
    data_select *ds;
    cr_assert_eq(data_fdb_parse("wide.fdb.txt", text, n, NULL, &ds), HR_OK, "%s", hr_last_error());
    double dt = hr_now() - t0;
    int n_kernels = ds->n_kernels;
    data_select_free(ds);
    cr_assert_eq(n_kernels, K);
    /* the quadratic check took 7 s for 160k entries in a release build (issue #22); sanitizers slow the parse */
#if defined(__SANITIZE_ADDRESS__)
    const double limit = 5.0;
#else
    const double limit = 1.0;
#endif
    cr_assert(dt < limit, "%.2f s", dt);
    /* a repeat at the far end is still found */
    n -= 1;
    n += (size_t)snprintf(text + n, cap - n, ";K0:2.0,0,0\n");
    cr_assert_neq(data_fdb_parse("wide.fdb.txt", text, n, NULL, &ds), HR_OK);
    cr_assert(strstr(hr_last_error(), "duplicate kernel in line"), "%s", hr_last_error());
    free(text);
}

static long skip_count(const data_select *ds, const char *reason)
{
    for (int r = 0; r < ds->skips.n_reasons; r++)
        if (strcmp(ds->skips.reason[r], reason) == 0) return ds->skips.count[r];
    return 0;
}

Test(hostile, times_outside_float_range_control_bytes_and_cr_only)
{
    const char text[] = KEY "=A:1.0,0,0\n"
                        KEY "=B:1e300,0,0\n"
                        KEY "=C:1e39,0,0\n"
                        KEY "=D:1e-300,0,0\n"
                        KEY "=E:1e-40,0,0\n"
                        KEY "=F\001x:1.0,0,0\n"
                        KEY "=G:inf,0,0\n"
                        KEY "=H:0,0,0\n";
    data_select *ds;
    cr_assert_eq(data_fdb_parse("t.fdb.txt", text, sizeof text - 1, NULL, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 1);
    cr_assert_eq(ds->n_kernels, 1);
    cr_assert_eq(skip_count(ds, "time out of float range"), 4);
    cr_assert_eq(skip_count(ds, "control byte in kernel name"), 1);
    cr_assert_eq(skip_count(ds, "non-positive or infinite time"), 2);
    data_select_free(ds);
    /* two names that differ after a NUL are not one kernel: both lines are refused */
    const char nul[] = KEY "=X\0a:1.0,0,0\n" KEY "=X\0b:2.0,0,0\n";
    cr_assert_eq(data_fdb_parse("nul.fdb.txt", nul, sizeof nul - 1, NULL, &ds), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "control byte in kernel name"), "%s", hr_last_error());
    const char cr[] = KEY "=A:1.0,0,0\r" KEY "=B:1.0,0,0\r";
    cr_assert_eq(data_fdb_parse("cr.fdb.txt", cr, sizeof cr - 1, NULL, &ds), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "cr.fdb.txt: CR-only line endings"), "%s", hr_last_error());
    /* CRLF stays fine */
    const char crlf[] = KEY "=A:1.0,0,0\r\n";
    cr_assert_eq(data_fdb_parse("crlf.fdb.txt", crlf, sizeof crlf - 1, NULL, &ds), HR_OK, "%s", hr_last_error());
    data_select_free(ds);
}

Test(hostile, outputs_never_replace_a_non_regular_file)
{
    struct stat st;
    cr_assert_eq(hr_file_write_atomic("/dev/null", "x", 1), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "/dev/null: exists and is not a regular file"), "%s", hr_last_error());
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode));
    hr_h5_out out;
    cr_assert_eq(hr_h5_create("/dev/null", &out), HR_EINVAL);
    char *dir = test_tmppath(".d");
    cr_assert_eq(mkdir(dir, 0755), 0);
    cr_assert_eq(hr_file_write_atomic(dir, "x", 1), HR_EINVAL);
    /* a missing folder, found when the file is started and when it is written: the message names the path
     * and the system's reason */
    char missing[1200];
    snprintf(missing, sizeof missing, "%s/no/such/model.h5", dir);
    cr_assert_eq(hr_h5_create(missing, &out), HR_EIO);
    cr_assert(strstr(hr_last_error(), missing) && strstr(hr_last_error(), "No such file or directory"), "%s",
              hr_last_error());
    snprintf(missing, sizeof missing, "%s/model.h5", dir);
    cr_assert_eq(hr_h5_create(missing, &out), HR_OK, "%s", hr_last_error());
    hr_h5_attr_write_str(out.file, "format", "test");
    cr_assert_eq(rmdir(dir), 0);
    cr_assert_eq(hr_h5_close(&out, 1), HR_EIO);
    cr_assert(strstr(hr_last_error(), missing) && strstr(hr_last_error(), "No such file or directory"), "%s",
              hr_last_error());
    free(dir);
}

Test(hostile, stale_temporaries_of_dead_runs_are_removed)
{
    char *dir = test_tmppath(".d");
    cr_assert_eq(mkdir(dir, 0755), 0);
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0); /* a pid that no longer runs */
    char dead[1200], live[1200], other[1200], target[1200];
    snprintf(dead, sizeof dead, "%s/old.h5.heurist-tmp.%d.0", dir, (int)child);
    snprintf(live, sizeof live, "%s/old.h5.heurist-tmp.%d.0", dir, (int)getpid());
    snprintf(other, sizeof other, "%s/notes.tmp.%d.0", dir, (int)child);
    const char *files[] = {dead, live, other};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(files[i], "w");
        cr_assert_not_null(f);
        fclose(f);
    }
    snprintf(target, sizeof target, "%s/new.h5", dir);
    cr_assert_eq(hr_file_write_atomic(target, "abc", 3), HR_OK, "%s", hr_last_error());
    cr_assert(!hr_file_exists(dead), "a dead run's temporary was left");
    cr_assert(hr_file_exists(live), "a running process's temporary was removed");
    cr_assert(hr_file_exists(other), "a file heurist did not name was removed");
    for (int i = 1; i < 3; i++) remove(files[i]);
    remove(target);
    rmdir(dir);
    free(dir);
}

/* Too many threads for the address space: creation fails with an error after joining what it started. */
Test(hostile, thread_team_creation_fails_cleanly, .timeout = 60)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("ASan reserves terabytes of address space; the limit below cannot apply");
#else
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert(f && fscanf(f, "%ld", &pages) == 1);
    fclose(f);
    struct rlimit old, lim;
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256u << 20);
    cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
    hr_team *t = (hr_team *)0x1;
    int rc = hr_team_create(10000, &t);
    cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);
    cr_assert_eq(rc, HR_ENOMEM, "%d: %s", rc, hr_last_error());
    cr_assert_null(t);
    cr_assert(strstr(hr_last_error(), "cannot start a team of 10000 threads"), "%s", hr_last_error());
    /* a team still forms afterwards, and runs */
    cr_assert_eq(hr_team_create(3, &t), HR_OK);
    cr_assert_eq(hr_team_size(t), 3);
    hr_team_free(t);
#endif
}
