/* core: error messages, RNG reproducibility, parallel-for coverage, atomic writes, HDF5 helpers. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/h5.h"
#include "helpers/testutil.h"

Test(core, error_message_is_per_call_and_wrapped)
{
    int rc = hr_error(HR_EFORMAT, "file.txt:%d: bad field", 12);
    cr_assert_eq(rc, HR_EFORMAT);
    cr_assert_str_eq(hr_last_error(), "file.txt:12: bad field");
    hr_error_wrap(rc, "loading");
    cr_assert_str_eq(hr_last_error(), "loading: file.txt:12: bad field");
}

Test(core, rng_same_seed_same_stream_different_seed_differs)
{
    hr_rng a, b, c;
    hr_rng_seed(&a, 42);
    hr_rng_seed(&b, 42);
    hr_rng_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = hr_rng_next(&a), y = hr_rng_next(&b), z = hr_rng_next(&c);
        cr_assert_eq(x, y);
        differ += x != z;
    }
    cr_assert_gt(differ, 95);
}

Test(core, rng_uniform_and_normal_moments)
{
    hr_rng r;
    hr_rng_seed(&r, 7);
    double su = 0, sn = 0, sn2 = 0;
    int n = 200000;
    for (int i = 0; i < n; i++) {
        float u = hr_rng_uniform(&r);
        cr_assert(u >= 0.0f && u < 1.0f);
        su += u;
        float z = hr_rng_normal(&r);
        sn += z;
        sn2 += (double)z * z;
    }
    cr_assert_float_eq(su / n, 0.5, 0.01);
    cr_assert_float_eq(sn / n, 0.0, 0.01);
    cr_assert_float_eq(sn2 / n, 1.0, 0.02);
}

Test(core, shuffle_is_a_permutation)
{
    hr_rng r;
    hr_rng_seed(&r, 1);
    int a[1000], seen[1000] = {0};
    for (int i = 0; i < 1000; i++) a[i] = i;
    hr_rng_shuffle_int(&r, a, 1000);
    int moved = 0;
    for (int i = 0; i < 1000; i++) {
        seen[a[i]]++;
        moved += a[i] != i;
    }
    for (int i = 0; i < 1000; i++) cr_assert_eq(seen[i], 1);
    cr_assert_gt(moved, 900);
}

static void mark(void *ctx, size_t b, size_t e, int tid)
{
    int *hits = ctx;
    for (size_t i = b; i < e; i++) hits[i] += 1 + tid * 0;
}

Test(core, parallel_for_covers_each_index_once)
{
    for (int t = 1; t <= 5; t++) {
        int hits[1003] = {0};
        hr_parallel_for(t, 1003, mark, hits);
        for (int i = 0; i < 1003; i++) cr_assert_eq(hits[i], 1, "threads %d index %d", t, i);
    }
}

/* A team job: every member writes its round number, waits, and checks every other member's; a second
 * barrier keeps the next round's writes out of this round's reads. */
typedef struct team_job {
    int slots[4];
    int runs[4];
    int rounds;
    int bad; /* written by a member only when it sees a wrong value: any nonzero value fails */
} team_job;

static hr_team *test_team;

static void team_rounds(void *ctx, int tid, int n)
{
    team_job *j = ctx;
    j->runs[tid]++;
    for (int r = 1; r <= j->rounds; r++) {
        j->slots[tid] = r;
        hr_team_barrier(test_team);
        for (int k = 0; k < n; k++)
            if (j->slots[k] != r) j->bad = 1;
        hr_team_barrier(test_team);
    }
}

Test(core, team_runs_each_member_once_per_run_and_barriers_separate_phases)
{
    for (int n = 1; n <= 3; n++) {
        cr_assert_eq(hr_team_create(n, &test_team), HR_OK);
        cr_assert_eq(hr_team_size(test_team), n);
        team_job j = {{0}, {0}, 200, 0};
        for (int run = 0; run < 20; run++) hr_team_run(test_team, team_rounds, &j);
        cr_assert_eq(j.bad, 0, "team of %d: a member read a slot before its round's barrier", n);
        for (int t = 0; t < n; t++) cr_assert_eq(j.runs[t], 20, "team of %d: member %d ran %d times", n, t, j.runs[t]);
        for (int t = n; t < 4; t++) cr_assert_eq(j.runs[t], 0);
        hr_team_free(test_team);
    }
    /* no team: the caller alone, inline */
    test_team = NULL;
    team_job j = {{0}, {0}, 3, 0};
    hr_team_run(NULL, team_rounds, &j);
    cr_assert_eq(j.runs[0], 1);
    cr_assert_eq(j.slots[0], 3);
    hr_team_free(NULL);
}

Test(core, atomic_write_replaces_and_reads_back)
{
    char path[512];
    snprintf(path, sizeof path, "%s/heurist_core_XXXXXX", test_tmpdir());
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(hr_file_write_atomic(path, "hello", 5), HR_OK);
    char *buf;
    size_t len;
    cr_assert_eq(hr_file_read_all(path, &buf, &len), HR_OK);
    cr_assert_eq(len, 5);
    cr_assert_str_eq(buf, "hello");
    free(buf);
    remove(path);
    cr_assert_neq(hr_file_read_all("/nonexistent/dir/file", &buf, &len), HR_OK);
    cr_assert(strstr(hr_last_error(), "/nonexistent/dir/file") != NULL);
}

Test(core, ends_with_looks_at_the_first_n_characters_only)
{
    const char *p = "data/t.csv.gz";
    cr_assert(hr_ends_with(p, strlen(p), ".gz"));
    cr_assert(hr_ends_with(p, strlen(p) - 3, ".csv"));
    cr_assert_not(hr_ends_with(p, strlen(p), ".csv"));
    cr_assert_not(hr_ends_with("gz", 2, ".gz"));
    cr_assert(hr_ends_with("x", 1, ""));
}

/* One '/' between a folder and a name however the folder is written (`--out rt/`); a path that does not fit is an
 * error naming it, not a shorter path. */
Test(core, path_join_puts_one_slash_and_refuses_what_does_not_fit)
{
    char buf[16];
    cr_assert_eq(hr_path_join(buf, sizeof buf, "rt/", "a.c"), HR_OK);
    cr_assert_str_eq(buf, "rt/a.c");
    cr_assert_eq(hr_path_join(buf, sizeof buf, "rt", "a.c"), HR_OK);
    cr_assert_str_eq(buf, "rt/a.c");
    cr_assert_eq(hr_path_join(buf, sizeof buf, "/", "a.c"), HR_OK);
    cr_assert_str_eq(buf, "/a.c");
    cr_assert_eq(hr_path_join(buf, sizeof buf, "out/cmp", "report.json"), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "out/cmp/report.json") != NULL, "%s", hr_last_error());
}

Test(core, h5_list_names_the_links_of_a_group_in_name_order)
{
    char path[512];
    snprintf(path, sizeof path, "%s/test_core_h5_%ld.h5", test_tmpdir(), (long)getpid());
    hr_h5_quiet();
    hr_h5_out out;
    cr_assert_eq(hr_h5_create(path, &out), HR_OK, "%s", hr_last_error());
    hid_t g, sub;
    cr_assert_eq(hr_h5_group_create(out.file, "g", &g), HR_OK);
    const float v[3] = {1, 2, 3};
    cr_assert_eq(hr_h5_write(g, "zeta", H5T_NATIVE_FLOAT, 3, 0, v), HR_OK);
    cr_assert_eq(hr_h5_write(g, "alpha", H5T_NATIVE_FLOAT, 0, 0, v), HR_OK); /* empty datasets count too */
    cr_assert_eq(hr_h5_group_create(g, "mid", &sub), HR_OK);
    H5Gclose(sub);
    char **names;
    size_t n;
    cr_assert_eq(hr_h5_list(g, &names, &n), HR_OK, "%s", hr_last_error());
    cr_assert_eq(n, 3);
    cr_assert_str_eq(names[0], "alpha");
    cr_assert_str_eq(names[1], "mid");
    cr_assert_str_eq(names[2], "zeta");
    hr_h5_free_strings(names, n);
    cr_assert_neq(hr_h5_list(sub, &names, &n), HR_OK); /* sub is closed: an error, not a crash */
    cr_assert(names == NULL && n == 0);
    H5Gclose(g);
    cr_assert_eq(hr_h5_close(&out, 0), HR_OK);
}

Test(core, h5_fixed_strings_and_uint64_attributes_round_trip)
{
    char path[512];
    snprintf(path, sizeof path, "%s/test_core_h5s_%ld.h5", test_tmpdir(), (long)getpid());
    hr_h5_out out;
    cr_assert_eq(hr_h5_create(path, &out), HR_OK, "%s", hr_last_error());
    hid_t f = out.file;
    char *const words[] = {"batch", "", "a_much_longer_name"};
    cr_assert_eq(hr_h5_write_fixed_strings(f, "words", words, 3), HR_OK, "%s", hr_last_error());
    cr_assert_eq(hr_h5_write_fixed_strings(f, "none", words, 0), HR_OK, "%s", hr_last_error());
    cr_assert_eq(hr_h5_attr_write_uint64(f, "seed", UINT64_MAX - 1), HR_OK);
    /* a string filling its whole width with no NUL (NUL-padded, as numpy/h5py write 'S' arrays) */
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 4);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    hsize_t two = 2;
    hid_t sp = H5Screate_simple(1, &two, NULL);
    hid_t d = H5Dcreate2(f, "padded", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, "abcdxy\0\0"), 0);
    H5Dclose(d), H5Sclose(sp), H5Tclose(t);
    const int ints[2] = {1, 2};
    cr_assert_eq(hr_h5_write(f, "ints", H5T_NATIVE_INT, 2, 0, ints), HR_OK);

    char **s;
    size_t n;
    cr_assert_eq(hr_h5_read_fixed_strings(f, "words", &s, &n), HR_OK, "%s", hr_last_error());
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < n; i++) cr_assert_str_eq(s[i], words[i]);
    hr_h5_free_strings(s, n);
    cr_assert_eq(hr_h5_read_fixed_strings(f, "none", &s, &n), HR_OK, "%s", hr_last_error());
    cr_assert_eq(n, 0);
    hr_h5_free_strings(s, n);
    cr_assert_eq(hr_h5_read_fixed_strings(f, "padded", &s, &n), HR_OK, "%s", hr_last_error());
    cr_assert_eq(n, 2);
    cr_assert_str_eq(s[0], "abcd");
    cr_assert_str_eq(s[1], "xy");
    hr_h5_free_strings(s, n);
    /* not strings, or absent: an error naming the dataset */
    cr_assert_eq(hr_h5_read_fixed_strings(f, "ints", &s, &n), HR_EFORMAT);
    cr_assert(s == NULL && n == 0);
    cr_assert(strstr(hr_last_error(), "'ints'") != NULL, "%s", hr_last_error());
    cr_assert_eq(hr_h5_read_fixed_strings(f, "nothing", &s, &n), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "'nothing'") != NULL, "%s", hr_last_error());

    /* u64 survives above 2^63, where a signed read would clip */
    uint64_t u = 0;
    cr_assert_eq(hr_h5_attr_read_uint64(f, "seed", &u), HR_OK, "%s", hr_last_error());
    cr_assert_eq(u, UINT64_MAX - 1);
    cr_assert_eq(hr_h5_attr_read_uint64(f, "absent", &u), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "'absent'") != NULL, "%s", hr_last_error());
    cr_assert_eq(hr_h5_close(&out, 0), HR_OK);
}
