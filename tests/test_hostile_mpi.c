/* Hostile MPI jobs (registered only where CMake finds MPI and its launcher): ranks given different runs (an MPMD
 * launch, a wrapper that varies per host) waited for each other forever. The ranks agree on the options, the data,
 * the split and the seed before they work, and the one that differs is named; a rank that leaves the training
 * loop early tells the others. Every job here ends within its timeout, with a non-zero status. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers/run_in.h"
#include "helpers/testutil.h"

static char *dir;

static void setup(void)
{
    dir = test_gemm_table_dir();
    char cmd[2048], *out;
    /* o.csv: t.csv with one time changed, the same problems and configurations */
    snprintf(cmd, sizeof cmd, "cd '%s' && awk -F, 'BEGIN{OFS=\",\"} NR==2{$9=$9*2} {print}' t.csv > o.csv && "
             "cp t.schema.json o.schema.json", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    free(out);
}

static void teardown(void)
{
    test_dir_remove(dir);
}

/* "mpirun -np 1 heurist A : -np 1 heurist B" in the fixture's folder under a 120 s timeout (124: it hung);
 * *out gets every rank's stdout and stderr. */
static int mpmd(char **out, const char *env, const char *a, const char *b)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" %s timeout 120 %s --oversubscribe %s -np 1 %s %s "
             ": -np 1 %s %s 2>&1",
             dir, env ? env : "", HEURIST_MPIEXEC, env ? "-x HEURIST_TEST_NO_AGREEMENT" : "", HEURIST_BINARY, a,
             HEURIST_BINARY, b);
    return test_run_shell(cmd, out);
}

static void disagree(const char *a, const char *b, const char *why)
{
    char *out;
    int rc = mpmd(&out, NULL, a, b);
    cr_assert(rc != 0 && rc != 124, "exit %d (124: hung)\n%s", rc, out);
    cr_assert(strstr(out, "ranks disagree: rank 1's") && strstr(out, why), "'%s' lacks '%s'", out, why);
    free(out);
}

#define G "train --data %s --task select --model gbdt --threads 1 --valid-fraction 0 --quiet --out m.h5 "
#define CFG(r) "--config '{\"rounds\":" #r ",\"early_stopping_rounds\":0}'"

TestSuite(hostile_mpi, .init = setup, .fini = teardown, .timeout = 600);

Test(hostile_mpi, ranks_given_other_options_data_or_seed_are_named)
{
    char a[1024], b[1024];
    snprintf(a, sizeof a, G CFG(5), "t.csv");
    snprintf(b, sizeof b, G CFG(50), "t.csv");
    disagree(a, b, "options");
    snprintf(b, sizeof b, G CFG(5), "o.csv");
    disagree(a, b, "data");
    snprintf(b, sizeof b, G CFG(5) " --seed 9", "t.csv");
    disagree(a, b, "seed");
    snprintf(b, sizeof b, G CFG(5) " --split random:0.3", "t.csv");
    disagree(a, b, "options");
    disagree("cv --data t.csv --task select --model gbdt --config '{\"rounds\":2}' --threads 1 --folds 2 --report r.json",
             "cv --data t.csv --task select --model gbdt --config '{\"rounds\":2}' --threads 1 --folds 3 --report r.json",
             "options");
    disagree("cv --data t.csv --task select --model frequent --folds 2 --report r.json --seed 1",
             "cv --data t.csv --task select --model frequent --folds 2 --report r.json --seed 2", "seed");
    disagree("compare --data t.csv --task select --models frequent --split random:0.2 --out c1 --quiet",
             "compare --data t.csv --task select --models gbdt --split random:0.2 --out c1 --quiet", "options");
    /* the same run on both: agreed, and written once */
    char *out;
    snprintf(b, sizeof b, G CFG(5), "t.csv");
    int rc = mpmd(&out, NULL, a, b);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
}

/* Without the agreement (a test hook), ranks given 5 and 50 rounds: the rank that leaves after 5 tells the other,
 * and both end with that message instead of one spinning in its next all-reduce. */
Test(hostile_mpi, a_rank_that_leaves_the_training_loop_early_tells_the_others)
{
    char a[1024], b[1024], *out;
    snprintf(a, sizeof a, G CFG(5), "t.csv");
    snprintf(b, sizeof b, G CFG(50), "t.csv");
    int rc = mpmd(&out, "HEURIST_TEST_NO_AGREEMENT=1", a, b);
    cr_assert(rc != 0 && rc != 124, "exit %d (124: hung)\n%s", rc, out);
    cr_assert(strstr(out, "left the training loop before iteration 6"), "%s", out);
    free(out);
}
