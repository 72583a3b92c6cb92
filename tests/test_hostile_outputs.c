/* Hostile output paths: an output that resolves (device and inode: the same name, a hard link, a symbolic link) to
 * one of the command's inputs replaced it with exit 0. Every output option of every command is refused against
 * every input before any work, the input left as it was; and a failed write of an output (a figure on a full
 * disk) is an error that leaves no temporary behind. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
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
}

static void teardown(void)
{
    test_dir_remove(dir);
}

/* shell command lines in the fixture's folder, $H the heurist binary */
#define OK(...) TEST_SHELL_OK(dir, __VA_ARGS__)

static int n_cases;

/* The command is refused naming `input`, and every file of the folder keeps its bytes. */
#define REFUSED(input, ...)                                                                                       \
    do {                                                                                                          \
        char *o_, *before_, *after_;                                                                              \
        cr_assert_eq(test_shell_in(dir, &before_, "find . -type f | sort | xargs cat | md5sum"), 0);                                                       \
        int r_ = test_shell_in(dir, &o_, __VA_ARGS__);                                                                         \
        cr_assert(r_ > 0, "accepted (exit %d): %s", r_, o_);                                                      \
        cr_assert(strstr(o_, "refusing to replace an input") && strstr(o_, input), "%s", o_);                     \
        cr_assert_eq(test_lines_count(o_), 1, "%s", o_);                                                          \
        cr_assert_eq(test_shell_in(dir, &after_, "find . -type f | sort | xargs cat | md5sum"), 0);                                                        \
        cr_assert_str_eq(before_, after_, "an input changed");                                                    \
        free(o_);                                                                                                 \
        free(before_);                                                                                            \
        free(after_);                                                                                             \
        n_cases++;                                                                                                \
    } while (0)

TestSuite(hostile_outputs, .init = setup, .fini = teardown, .timeout = 180);

#define TRAIN "$H train --task select --model gbdt --valid-fraction 0 --config '{\"rounds\":2}' --quiet "

Test(hostile_outputs, train_outputs_never_replace_an_input)
{
    OK(TRAIN "--data t.csv --out m.h5 && echo '{\"rounds\":2}' > cfg.json && ln t.csv hard.csv && ln -s t.csv soft.csv");
    REFUSED("--data t.csv", TRAIN "--data t.csv --out t.csv");
    REFUSED("its schema t.schema.json", TRAIN "--data t.csv --out t.schema.json");
    REFUSED("--data t.csv", TRAIN "--data t.csv --out n.h5 --report t.csv");
    REFUSED("--data t.csv", TRAIN "--data t.csv --out n.h5 --checkpoint t.csv");
    REFUSED("--data t.csv", TRAIN "--data t.csv --out hard.csv");
    REFUSED("--data t.csv", TRAIN "--data t.csv --out soft.csv");
    REFUSED("--init-model m.h5", TRAIN "--data t.csv --init-model m.h5 --out m.h5");
    REFUSED("--config cfg.json", "$H train --task select --model gbdt --config cfg.json --data t.csv --out n.h5 --report cfg.json");
    REFUSED("--schema t.schema.json", TRAIN "--data hard.csv --schema t.schema.json --out t.schema.json");
    /* two outputs of one run are one file */
    REFUSED("--out m2.h5", "touch m2.h5 && " TRAIN "--data t.csv --out m2.h5 --report m2.h5");
}

Test(hostile_outputs, eval_diff_cv_data_export_outputs_never_replace_an_input)
{
    OK(TRAIN "--data t.csv --out m.h5 && " TRAIN "--data t.csv --out m2.h5 && mkdir c && cp m.h5 c/heurist_model.h");
    REFUSED("--model m.h5", "$H eval --model m.h5 --data t.csv --report m.h5");
    REFUSED("--data t.csv", "$H eval --model m.h5 --data t.csv --report t.csv");
    REFUSED("OLD m.h5", "$H diff m.h5 m2.h5 --data t.csv --report m.h5");
    REFUSED("NEW m2.h5", "$H diff m.h5 m2.h5 --data t.csv --report m2.h5");
    REFUSED("its schema", "$H diff m.h5 m2.h5 --data t.csv --report t.schema.json");
    REFUSED("--data t.csv", "$H cv --data t.csv --task select --model frequent --folds 2 --report t.csv");
    REFUSED("its schema", "$H data cache --data t.csv --out t.schema.json");
    REFUSED("--data t.csv", "$H data cache --data t.csv --out t.csv");
    REFUSED("--model m.h5", "$H export --model m.h5 --format lightgbm --out m.h5");
    REFUSED("--model c/heurist_model.h", "$H export --model c/heurist_model.h --format c --out c");
}

/* compare writes fixed names into its folder: one of them is an input (a schema kept as report.json). */
Test(hostile_outputs, compare_files_never_replace_an_input)
{
    OK("mkdir cmp && cp t.schema.json cmp/report.json");
    REFUSED("--schema cmp/report.json",
            "$H compare --data t.csv --schema cmp/report.json --task select --models frequent --split random:0.2 --out cmp --quiet");
}

/* A full disk while compare draws its figures (a 24 KiB file-size limit, SIGXFSZ ignored): exit 0 and a
 * half-written .heurist-tmp figure were left; the run fails and removes it. */
Test(hostile_outputs, a_failed_figure_write_is_an_error_and_leaves_no_temporary)
{
    char *out;
    int rc = test_shell_in(dir, &out, "bash -c \"trap '' XFSZ; ulimit -f 24; $H compare --data t.csv --task select --models frequent "
                         "--split random:0.2 --out cmp --quiet\"");
    cr_assert(rc > 0, "exit %d: %s", rc, out);
    cr_assert(strstr(out, "cannot write PNG") || strstr(out, "write failed"), "%s", out);
    free(out);
    char path[1024];
    snprintf(path, sizeof path, "%s/cmp", dir);
    DIR *d = opendir(path);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) cr_assert_null(strstr(e->d_name, ".heurist-tmp"), "left %s", e->d_name);
    closedir(d);
}
