/* Hostile warm starts and resumes: --init-model and --checkpoint --resume of a model or checkpoint that was
 * trained on something else. Everything a model depends on is compared by name; a mismatch is refused with one
 * line naming it, and no model is written. Through the command line, on the reproducers' GEMM table. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "helpers/run_in.h"
#include "helpers/testutil.h"

static char *dir;

static void setup(void)
{
    dir = test_gemm_table_dir();
}

static void teardown(void)
{
    test_dir_remove(dir);
}

/* heurist succeeds */
#define OK(...) TEST_HEURIST_OK(dir, __VA_ARGS__)

/* heurist refuses: non-zero exit, one line holding `why`, and no file `absent` (NULL: none to check) */
#define REFUSED(why, absent, ...)                                                                                 \
    do {                                                                                                          \
        char *o_;                                                                                                 \
        int r_ = test_heurist_in(dir, &o_, __VA_ARGS__);                                                                        \
        refused_check(r_, o_, why, absent);                                                                       \
    } while (0)

static void refused_check(int rc, char *out, const char *why, const char *absent)
{
    cr_assert(rc > 0, "accepted (exit %d): %s", rc, out);
    cr_assert_eq(test_lines_count(out), 1, "not one line: %s", out);
    cr_assert(strstr(out, why), "'%s' lacks '%s'", out, why);
    free(out);
    test_assert_absent(dir, absent);
}

#define TRAIN "train --task select --valid-fraction 0 --quiet "

/* Any --init-model the gbdt family refuses (a cache, another family, another objective) freed the model and then
 * read it (ASan: heap-use-after-free): each is one line now, in every build. */
TestSuite(hostile_checkpoints, .init = setup, .fini = teardown, .timeout = 120);

Test(hostile_checkpoints, refused_init_models_are_one_line_errors)
{
    OK("data cache --data t.csv --out cache.h5 --quiet");
    OK(TRAIN "--data t.csv --model frequent --out freq.h5");
    OK(TRAIN "--data t.csv --model gbdt --config '{\"rounds\":2,\"objective\":\"rank\"}' --out rank.h5");
    REFUSED("cache.h5", "n.h5", TRAIN "--data t.csv --model gbdt --config '{\"rounds\":2}' --init-model cache.h5 --out n.h5");
    REFUSED("not a gbdt model", "n.h5", TRAIN "--data t.csv --model gbdt --config '{\"rounds\":2}' --init-model freq.h5 --out n.h5");
    REFUSED("not a gbdt model of the same task and objective", "n.h5",
            TRAIN "--data t.csv --model gbdt --config '{\"rounds\":2,\"objective\":\"softmax\"}' --init-model rank.h5 --out n.h5");
    REFUSED("a rank model of rank_loss l2, the config asks lambdarank", "n.h5",
            TRAIN "--data t.csv --model gbdt --config '{\"rounds\":2,\"objective\":\"rank\",\"rank_loss\":\"lambdarank\"}' "
                  "--init-model rank.h5 --out n.h5");
    /* objective auto continues the initial model's objective and loss */
    OK(TRAIN "--data t.csv --model gbdt --config '{\"rounds\":2}' --init-model rank.h5 --out n.h5");
}

/* The same number of configurations and categories with other values: trees of tile_k=64 would score tile_k=512,
 * fp16's one-hot would mean fp32. Each difference is named. */
Test(hostile_checkpoints, init_model_of_other_configurations_or_categories_is_refused)
{
    const char *cfg = "--model gbdt --config '{\"rounds\":2,\"objective\":\"softmax\"}'";
    OK(TRAIN "--data t.csv %s --out old.h5", cfg);
    OK(TRAIN "--data t.csv %s --init-model old.h5 --out same.h5", cfg);
    TEST_SHELL_OK(dir, "awk -F, 'BEGIN{OFS=\",\"} NR>1{ if($7==64)$7=512 } {print}' t.csv > k.csv && cp t.schema.json k.schema.json");
    TEST_SHELL_OK(dir, "awk -F, 'BEGIN{OFS=\",\"} NR>1{ if($4==\"fp16\")$4=\"fp32\" } {print}' t.csv > d.csv && "
             "cp t.schema.json d.schema.json");
    REFUSED("the same kernel set is needed", "n.h5", TRAIN "--data k.csv %s --init-model old.h5 --out n.h5", cfg);
    REFUSED("column 'dtype' has the categories", "n.h5", TRAIN "--data d.csv %s --init-model old.h5 --out n.h5", cfg);
    /* a rank model of a table scores configurations by their fields: another set of them is fine, other categories
     * are not */
    const char *rank = "--model gbdt --config '{\"rounds\":2,\"objective\":\"rank\"}'";
    OK(TRAIN "--data t.csv %s --out rold.h5", rank);
    OK(TRAIN "--data k.csv %s --init-model rold.h5 --out r1.h5", rank);
    REFUSED("column 'dtype' has the categories", "r2.h5", TRAIN "--data d.csv %s --init-model rold.h5 --out r2.h5", rank);
}

/* --resume of a checkpoint written under other options (input, lr, label, dropout, ...) continued "after epoch 202"
 * into a model of neither run. The checkpoint records every option in effect and a resume under another value is
 * refused naming it; the same options (spelt otherwise: 3e-3 for the default 0.003) resume. */
Test(hostile_checkpoints, resume_under_other_options_is_refused_naming_the_option)
{
    const char *base = "\"epochs\":3,\"hidden\":8,\"expand\":8,\"depth\":1";
    OK(TRAIN "--data t.csv --model reformer --config '{%s}' --checkpoint ck.h5 --out a.h5", base);
    static const char *const other[][2] = {
        {"\"lr\":0.05", "option lr is 0.00300000003 there, 0.0500000007 here"},
        {"\"input\":\"zscore\"", "option input is log there, zscore here"},
        {"\"label\":\"soft\"", "option label is"},
        {"\"dropout\":0.1", "option dropout is 0 there"},
        {"\"weight_decay\":0.5", "option weight_decay is"},
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        REFUSED(other[i][1], "b.h5", TRAIN "--data t.csv --model reformer --config '{%s,%s}' --checkpoint ck.h5 --resume "
                "--out b.h5", base, other[i][0]);
    OK(TRAIN "--data t.csv --model reformer --config '{%s,\"lr\":3e-3}' --checkpoint ck.h5 --resume --out c.h5", base);
}

/* A checkpoint written before checkpoints recorded the options cannot be checked: refused, not resumed. */
Test(hostile_checkpoints, a_checkpoint_without_recorded_options_is_refused)
{
    char cmd[2048], *out;
    snprintf(cmd, sizeof cmd, "cp '%s/../tests/fixtures/repro/reformer_checkpoint_no_options.h5' '%s/old.h5'",
             HEURIST_DATASETS_DIR, dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0, "%s", out);
    free(out);
    REFUSED("records no training options", "b.h5",
            "train --task select --quiet --data t.csv --model reformer --config '{\"epochs\":600,\"hidden\":8,\"expand\":8,\"depth\":1,"
            "\"applicability\":0}' --checkpoint old.h5 --resume --out b.h5");
}
