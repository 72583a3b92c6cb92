/* heurist under `mpirun -np 2` (registered only where CMake finds MPI and its launcher): the same reports and
 * gbdt models as one process, timings aside, with "ranks": 2; a rank that fails ends the whole job with its
 * message. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers/run_in.h"
#include "helpers/testutil.h"

/* Runs "[env] mpirun -np 2 heurist args" (ranks > 0) or "heurist args" (ranks 0); *out gets stdout and stderr.
 * `timeout` ends a job that would hang, which the tests then see as a failure. In a sanitizer build the ranks
 * keep AddressSanitizer's checks but not its leak report: OpenMPI unloads its components at MPI_Finalize,
 * and what they keep for the life of the process is then reported from an unknown module, which no
 * suppression can name (the one-process runs here keep the leak check). */
static int run_ranks(int ranks, const char *env, const char *args, char **out)
{
    char cmd[8192];
    if (ranks > 0)
        snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" %s timeout 300 %s -np %d --oversubscribe %s %s 2>&1",
                 env ? env : "", HEURIST_MPIEXEC, ranks, HEURIST_BINARY, args);
    else
        snprintf(cmd, sizeof cmd, "%s %s 2>&1", HEURIST_BINARY, args);
    return test_run_shell(cmd, out);
}

static cJSON *read_json(const char *path)
{
    char *text;
    size_t len;
    cr_assert_eq(hr_file_read_all(path, &text, &len), HR_OK, "%s", path);
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "%s: not JSON", path);
    free(text);
    return j;
}

/* every number of a and b's "metrics" objects is the same, bit for bit, and there is at least one */
static void assert_same_metrics(const cJSON *a, const cJSON *b, const char *what)
{
    const cJSON *ma = cJSON_GetObjectItem(a, "metrics"), *mb = cJSON_GetObjectItem(b, "metrics"), *it;
    cr_assert(cJSON_IsObject(ma) && cJSON_IsObject(mb), "%s: no metrics", what);
    int n = 0;
    cJSON_ArrayForEach(it, ma)
    {
        const cJSON *v = cJSON_GetObjectItem(mb, it->string);
        cr_assert_not_null(v, "%s: %s missing under mpirun", what, it->string);
        if (cJSON_IsNumber(it)) {
            cr_assert(cJSON_IsNumber(v) && v->valuedouble == it->valuedouble, "%s: %s is %.17g alone, %.17g with 2 ranks",
                      what, it->string, it->valuedouble, v->valuedouble);
            n++;
        }
    }
    cr_assert_gt(n, 3, "%s: too few metrics", what);
}

static int ranks_of(const cJSON *o)
{
    const cJSON *r = cJSON_GetObjectItem(o, "ranks");
    return cJSON_IsNumber(r) ? r->valueint : -1;
}

#define GBDT_CFG "{\"rounds\": 12, \"log_every\": 0, \"min_data_in_leaf\": 5}"

Test(cli_mpi, cv_two_ranks_equals_one_process, .timeout = 600)
{
    char *data = test_fdb_synthetic_write(576, 1), *r1 = test_tmppath(".json"), *r2 = test_tmppath(".json"), *out, args[4096];
    const char *cmd = "cv --data %s --task select --model gbdt --config '" GBDT_CFG "' --folds 3 --threads 1 --report %s";
    snprintf(args, sizeof args, cmd, data, r1);
    cr_assert_eq(run_ranks(0, NULL, args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, cmd, data, r2);
    cr_assert_eq(run_ranks(2, NULL, args, &out), 0, "%s", out);
    /* rank 0 alone prints the folds, in fold order, and the mean */
    const char *mean = strstr(out, "3-fold GroupKFold mean");
    cr_assert(mean && !strstr(mean + 1, "3-fold GroupKFold mean"), "%s", out);
    free(out);
    cJSON *a = read_json(r1), *b = read_json(r2);
    cr_assert_eq(ranks_of(a), 1);
    cr_assert_eq(ranks_of(b), 2);
    assert_same_metrics(a, b, "cv mean");
    const cJSON *fa = cJSON_GetObjectItem(a, "folds"), *fb = cJSON_GetObjectItem(b, "folds");
    cr_assert_eq(cJSON_GetArraySize(fa), 3);
    cr_assert_eq(cJSON_GetArraySize(fb), 3);
    for (int f = 0; f < 3; f++) {
        const cJSON *x = cJSON_GetArrayItem(fa, f), *y = cJSON_GetArrayItem(fb, f);
        assert_same_metrics(x, y, "cv fold");
        /* the same trees: as many nodes */
        const cJSON *px = cJSON_GetObjectItem(cJSON_GetObjectItem(x, "size"), "params");
        const cJSON *py = cJSON_GetObjectItem(cJSON_GetObjectItem(y, "size"), "params");
        cr_assert(cJSON_IsNumber(px) && cJSON_IsNumber(py) && px->valuedouble == py->valuedouble, "fold %d: another model", f);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    remove(r1);
    remove(r2);
    remove(data);
    free(r1);
    free(r2);
    free(data);
}

Test(cli_mpi, compare_two_ranks_equals_one_process, .timeout = 600)
{
    char *data = test_fdb_synthetic_write(576, 1), *d1 = test_tmppath("_cmp1"), *d2 = test_tmppath("_cmp2"), *out, args[4096];
    const char *cmd = "compare --data %s --task select --models gbdt --config '{\"gbdt\": " GBDT_CFG "}' --folds 3"
                      " --threads 1 --quiet --out %s";
    snprintf(args, sizeof args, cmd, data, d1);
    cr_assert_eq(run_ranks(0, NULL, args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, cmd, data, d2);
    cr_assert_eq(run_ranks(2, NULL, args, &out), 0, "%s", out);
    cr_assert(strstr(out, "| gbdt |") != NULL && strstr(out, "| frequent |") != NULL, "%s", out);
    free(out);
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s/report.json", d1);
    snprintf(p2, sizeof p2, "%s/report.json", d2);
    cJSON *a = read_json(p1), *b = read_json(p2);
    cr_assert_eq(cJSON_GetArraySize(a), 2); /* gbdt and the frequent baseline */
    cr_assert_eq(cJSON_GetArraySize(b), 2);
    for (int m = 0; m < 2; m++) {
        cr_assert_eq(ranks_of(cJSON_GetArrayItem(a, m)), 1);
        cr_assert_eq(ranks_of(cJSON_GetArrayItem(b, m)), 2);
        assert_same_metrics(cJSON_GetArrayItem(a, m), cJSON_GetArrayItem(b, m), "compare");
    }
    const char *figs[] = {"report.md", "efficiency_cdf.png", "top1_slices.png"};
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        snprintf(p2, sizeof p2, "%s/%s", d2, figs[i]);
        cr_assert(hr_file_exists(p2), "%s missing", p2);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    snprintf(args, sizeof args, "rm -rf '%s' '%s'", d1, d2);
    cr_assert_eq(system(args), 0);
    remove(data);
    free(d1);
    free(d2);
    free(data);
}

Test(cli_mpi, train_under_mpirun_writes_one_model, .timeout = 600)
{
    char *data = test_fdb_synthetic_write(576, 1), *model = test_tmppath(".h5"), *rep = test_tmppath(".json"), *out, args[4096];
    snprintf(args, sizeof args,
             "train --data %s --task select --model gbdt --config '" GBDT_CFG "' --threads 1 --out %s --report %s --quiet",
             data, model, rep);
    cr_assert_eq(run_ranks(2, NULL, args, &out), 0, "%s", out);
    /* both ranks train (gbdt shares its rows), rank 0 alone writes and reports */
    const char *w = strstr(out, "model written to");
    cr_assert(w && !strstr(w + 1, "model written to"), "%s", out);
    free(out);
    cr_assert(hr_file_exists(model));
    cJSON *j = read_json(rep);
    cr_assert_eq(ranks_of(j), 2);
    cJSON_Delete(j);
    remove(model);
    remove(rep);
    remove(data);
    free(model);
    free(rep);
    free(data);
}

/* trains cfg on data alone and under `mpirun -np ranks`, and checks that the two models export to the same
 * LightGBM text, byte for byte, and that the report records the ranks */
static void check_train_spread(const char *data, const char *cfg, int ranks)
{
    char *m1 = test_tmppath(".h5"), *m2 = test_tmppath(".h5"), *t1 = test_tmppath(".txt"), *t2 = test_tmppath(".txt");
    char *rep = test_tmppath(".json"), *out, args[4096];
    const char *cmd = "train --data %s --task select --model gbdt --config '%s' --threads 1 --out %s --quiet";
    snprintf(args, sizeof args, cmd, data, cfg, m1);
    cr_assert_eq(run_ranks(0, NULL, args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "train --data %s --task select --model gbdt --config '%s' --threads 1 --out %s --report %s --quiet",
             data, cfg, m2, rep);
    cr_assert_eq(run_ranks(ranks, NULL, args, &out), 0, "%s", out);
    const char *w = strstr(out, "model written to");
    cr_assert(w && !strstr(w + 1, "model written to"), "rank 0 alone writes: %s", out);
    free(out);
    cJSON *j = read_json(rep);
    cr_assert_eq(ranks_of(j), ranks);
    cJSON_Delete(j);
    snprintf(args, sizeof args, "export --model %s --format lightgbm --out %s", m1, t1);
    cr_assert_eq(run_ranks(0, NULL, args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "export --model %s --format lightgbm --out %s", m2, t2);
    cr_assert_eq(run_ranks(0, NULL, args, &out), 0, "%s", out);
    free(out);
    char *a, *b;
    size_t la, lb;
    cr_assert_eq(hr_file_read_all(t1, &a, &la), HR_OK);
    cr_assert_eq(hr_file_read_all(t2, &b, &lb), HR_OK);
    cr_assert(strstr(a, "Tree=1") != NULL, "too few trees:\n%s", a);
    cr_assert(la == lb && memcmp(a, b, la) == 0, "%s: %d ranks trained another model than one process", cfg, ranks);
    free(a);
    free(b);
    const char *paths[] = {m1, m2, t1, t2, rep};
    for (int i = 0; i < 5; i++) remove(paths[i]);
    free(m1);
    free(m2);
    free(t1);
    free(t2);
    free(rep);
}

Test(cli_mpi, gbdt_train_over_two_ranks_is_the_one_process_model, .timeout = 600)
{
    char *data = test_fdb_synthetic_write(576, 1);
    check_train_spread(data, "{\"rounds\": 12, \"log_every\": 0, \"min_data_in_leaf\": 5, \"histogram\": \"int\"}", 2);
    check_train_spread(data, "{\"rounds\": 12, \"log_every\": 0, \"min_data_in_leaf\": 5, \"histogram\": \"int\", "
                             "\"bagging_fraction\": 0.7, \"bagging_freq\": 2, \"feature_fraction\": 0.6}", 2);
    check_train_spread(data, "{\"rounds\": 6, \"log_every\": 0, \"objective\": \"rank\", \"histogram\": \"int\"}", 2);
    remove(data);
    free(data);
}

/* lambdarank pairs the rows of a query: the processes' shares are whole queries (a benchmark table's problems),
 * the same model whatever the number of processes */
Test(cli_mpi, lambdarank_over_ranks_is_the_one_process_model, .timeout = 600)
{
    char *dir = test_gemm_table_dir(), data[4096];
    snprintf(data, sizeof data, "%s/t.csv", dir);
    const char *cfg = "{\"rounds\": 5, \"log_every\": 0, \"early_stopping_rounds\": 0, \"objective\": \"rank\", "
                      "\"rank_loss\": \"lambdarank\", \"histogram\": \"int\"}";
    check_train_spread(data, cfg, 2);
    check_train_spread(data, cfg, 3);
    test_dir_remove(dir);
}

Test(cli_mpi, a_failing_rank_ends_a_spread_training, .timeout = 600)
{
    char *data = test_fdb_synthetic_write(576, 1), *model = test_tmppath(".h5"), *out, args[4096];
    snprintf(args, sizeof args, "train --data %s --task select --model gbdt --config '" GBDT_CFG "' --threads 1 --out %s",
             data, model);
    /* rank 1 fails while rank 0 goes on to train and waits for it in the first all-reduce */
    int rc = run_ranks(2, "HEURIST_TEST_FAIL_RANK=1", args, &out);
    cr_assert(rc != 0 && rc != 124, "exit status %d:\n%s", rc, out);
    cr_assert(strstr(out, "rank 1 of 2: load failed on purpose") != NULL, "%s", out);
    cr_assert(!hr_file_exists(model), "a failed job wrote its model");
    free(out);
    remove(data);
    free(model);
    free(data);
}

Test(cli_mpi, a_failing_rank_ends_the_job, .timeout = 600)
{
    char *data = test_fdb_synthetic_write(576, 1), *rep = test_tmppath(".json"), *out, args[4096];
    snprintf(args, sizeof args, "cv --data %s --task select --model gbdt --config '" GBDT_CFG "' --folds 3 --threads 1 --report %s",
             data, rep);
    int rc = run_ranks(2, "HEURIST_TEST_FAIL_RANK=1", args, &out);
    /* non-zero, not timeout's 124 (a hang), with rank 1's own message, and no report */
    cr_assert(rc != 0 && rc != 124, "exit status %d:\n%s", rc, out);
    cr_assert(strstr(out, "rank 1 of 2: load failed on purpose") != NULL, "%s", out);
    cr_assert(strstr(out, "rank 1 of 2 failed") != NULL, "%s", out);
    cr_assert(!hr_file_exists(rep), "a failed job wrote its report");
    free(out);
    /* rank 0 failing while rank 1 goes on to train its folds ends the job too */
    rc = run_ranks(2, "HEURIST_TEST_FAIL_RANK=0", args, &out);
    cr_assert(rc != 0 && rc != 124, "exit status %d:\n%s", rc, out);
    cr_assert(strstr(out, "rank 0 of 2: load failed on purpose") != NULL, "%s", out);
    cr_assert(!hr_file_exists(rep), "a failed job wrote its report");
    free(out);
    remove(data);
    free(rep);
    free(data);
}
