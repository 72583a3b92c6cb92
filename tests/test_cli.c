/* The command line end to end: exit codes, one-line errors, data info on the shipped files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "helpers/testutil.h"

Test(cli, usage_errors_are_one_line_and_nonzero)
{
    char *out;
    cr_assert_neq(test_cli_run("frobnicate", &out), 0);
    cr_assert(strstr(out, "unknown command 'frobnicate'") != NULL, "%s", out);
    cr_assert_eq(test_lines_count(out), 1);
    free(out);
    cr_assert_neq(test_cli_run("data info --bogus 1", &out), 0);
    cr_assert(strstr(out, "unknown option '--bogus'") != NULL, "%s", out);
    cr_assert_eq(test_lines_count(out), 1);
    free(out);
    cr_assert_neq(test_cli_run("data info", &out), 0);
    cr_assert(strstr(out, "--data is required") != NULL, "%s", out);
    free(out);
    cr_assert_neq(test_cli_run("data info --data /nonexistent/file.fdb.txt", &out), 0);
    cr_assert(strstr(out, "/nonexistent/file.fdb.txt") != NULL, "%s", out);
    cr_assert_eq(test_lines_count(out), 1);
    free(out);
    char args[600], *never = test_tmppath(".h5"); /* the command fails before it would write this */
    snprintf(args, sizeof args, "train --data x.fdb.txt --model nosuchmodel --out %s", never);
    cr_assert_neq(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, "unknown --model 'nosuchmodel'") != NULL, "%s", out);
    free(out);
    free(never);
    cr_assert_neq(test_cli_run("predict --model /nonexistent.h5 --problem 1-2-3", &out), 0);
    cr_assert(strstr(out, "too few key fields") != NULL, "%s", out);
    free(out);
    cr_assert_eq(test_cli_run("--help", &out), 0);
    cr_assert(strstr(out, "usage: heurist") != NULL);
    free(out);
}

Test(cli, data_info_reports_the_perf_db, .timeout = 120)
{
    char *out, args[1024];
    snprintf(args, sizeof args, "data info --data %s --solver ConvAsm1x1U", test_miopen("gfx906_60.db.bz2"));
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "problems         17314") != NULL, "%s", out);
    cr_assert(strstr(out, "17314 of 17314 sequences valid") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "data info --data %s", test_miopen("gfx906_60.db.bz2"));
    cr_assert_neq(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, "needs a solver name") != NULL, "%s", out);
    free(out);
}

Test(cli, data_info_and_cache_of_a_find_db, .timeout = 120)
{
    const char *text = "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=A:1.0,0,a;B:2.0,0,a\n"
                       "2-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-B=B:3.0,0,a;A:0,0,a\n"
                       "3-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-W=B:3.0,0,a\n";
    char *path = test_tmpfile(".fdb.txt", text, strlen(text));
    char *h5 = test_tmppath(".h5");
    char *out, args[1024];
    snprintf(args, sizeof args, "data info --data %s", path);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "problems         2") != NULL, "%s", out);
    cr_assert(strstr(out, "non-positive or infinite time") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "data info --data %s --strict", path);
    cr_assert_neq(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, ":2: non-positive or infinite time") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "data cache --data %s --out %s", path, h5);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "data info --data %s", h5);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "problems         2") != NULL, "%s", out);
    free(out);
    remove(path);
    remove(h5);
    free(path);
    free(h5);
}

Test(cli, train_eval_predict_export_cv_compare_end_to_end, .timeout = 600)
{
    char *data = test_fdb_synthetic_write(576, 1);
    char *model = test_tmppath(".h5"), *report = test_tmppath(".json"), *lgb = test_tmppath(".txt");
    char *outdir = test_tmppath("_cmp");
    char *out, args[4096];
    snprintf(args, sizeof args,
             "train --data %s --task select --model gbdt --config '{\"rounds\": 20, \"log_every\": 0, \"min_data_in_leaf\": 5}'"
             " --split random:0.25:seed=1 --out %s --report %s",
             data, model, report);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    char *json;
    size_t len;
    cr_assert_eq(hr_file_read_all(report, &json, &len), HR_OK);
    cr_assert(strstr(json, "\"select\"") != NULL, "%s", json);
    const char *keys[] = {"top1", "top5", "efficiency_mean", "efficiency_median", "efficiency_p10", "efficiency_min",
                          "unmeasured_rate", "train_seconds", "predict_us", "params", "model_bytes", "n_train", "n_test"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) cr_assert(strstr(json, keys[i]) != NULL, "missing %s", keys[i]);
    /* the rule is learnable: top-1 on held-out problems is high */
    const char *t1 = strstr(json, "\"top1\":");
    cr_assert_not_null(t1);
    cr_assert_gt(atof(t1 + 7), 0.9, "%s", json);
    free(json);
    /* predict: KA is fastest for C < 32 */
    snprintf(args, sizeof args, "predict --model %s --problem 4-14-14-1x1-8-14-14-2-0x0-1x1-1x1-0-NCHW-FP32-F", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "   1  ") != NULL && strstr(strstr(out, "   1  "), "KA") != NULL, "%s", out);
    /* only the kernels measured for forward FP32 NCHW problems, with probabilities that sum to 100% */
    cr_assert(strstr(out, "3 of 4 kernels can run it") != NULL, "%s", out);
    cr_assert(strstr(out, "KD") == NULL, "a backward-only kernel ranked for a forward problem:\n%s", out);
    double total = 0;
    for (const char *q = strchr(out, '%'); q; q = strchr(q + 1, '%')) {
        const char *b = q;
        while (b > out && b[-1] != ' ') b--;
        total += atof(b);
    }
    cr_assert(total > 99.9 && total < 100.1, "probabilities sum to %g:\n%s", total, out);
    free(out);
    snprintf(args, sizeof args, "predict --model %s --problem 4-14-14-1x1-8-14-14-2-0x0-1x1-1x1-0-NCHW-FP32-B", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "4 of 4 kernels can run it") != NULL && strstr(out, "KD") != NULL, "%s", out);
    free(out);
    /* a data type no training problem had: the kernels of its direction */
    snprintf(args, sizeof args, "predict --model %s --problem 4-14-14-1x1-8-14-14-2-0x0-1x1-1x1-0-NCHW-FP16-F", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "3 of 4 kernels") != NULL && strstr(out, "measured for its direction") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "eval --model %s --data %s --split random:0.25:seed=1 --report %s", model, data, report);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "export --model %s --format lightgbm --out %s", model, lgb);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    cr_assert_eq(hr_file_read_all(lgb, &json, &len), HR_OK);
    cr_assert(strstr(json, "version=v4") != NULL);
    /* the trees carry heurist's feature names, in the header and the importance list */
    const char *names = strstr(json, "feature_names=");
    cr_assert_not_null(names);
    const char *eol = strchr(names, '\n');
    const char *flops = strstr(names, " log2_flops ");
    cr_assert(flops != NULL && eol != NULL && flops < eol, "feature names missing from the LightGBM export");
    free(json);
    /* --out DIR/ as README writes it: the files it names have one '/' */
    char *rt = test_tmppath(".rt"), wrote[1200];
    snprintf(args, sizeof args, "export --model %s --format c --out %s/", model, rt);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    snprintf(wrote, sizeof wrote, "wrote %s/heurist_model.c and %s/heurist_model.h\n", rt, rt);
    cr_assert_str_eq(out, wrote);
    free(out);
    free(rt);
    snprintf(args, sizeof args,
             "cv --data %s --task select --model gbdt --config '{\"rounds\": 10, \"log_every\": 0}' --folds 3 --report %s",
             data, report);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    cr_assert_eq(hr_file_read_all(report, &json, &len), HR_OK);
    cr_assert(strstr(json, "\"folds\"") != NULL && strstr(json, "groupkfold:3") != NULL, "%s", json);
    free(json);
    snprintf(args, sizeof args,
             "compare --data %s --task select --models gbdt,reformer --split random:0.25 --out %s --quiet"
             " --config '{\"gbdt\": {\"rounds\": 10, \"log_every\": 0}, \"reformer\": {\"epochs\": 3, \"batch_size\": 64}}'",
             data, outdir);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "| gbdt |") != NULL && strstr(out, "| reformer |") != NULL, "%s", out);
    free(out);
    const char *files[] = {"report.json", "report.md", "efficiency_cdf.png", "top1_slices.png", "tradeoff.png"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", outdir, files[i]);
        cr_assert(hr_file_exists(p), "%s missing", p);
    }
    snprintf(args, sizeof args, "rm -rf '%s'", outdir);
    cr_assert_eq(system(args), 0);
    /* configuration errors are one line naming the key */
    snprintf(args, sizeof args, "train --data %s --model gbdt --config '{\"roundz\": 3}' --out %s --quiet", data, model);
    cr_assert_neq(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, "gbdt config: unknown option \"roundz\"") != NULL, "%s", out);
    cr_assert_eq(test_lines_count(out), 1, "%s", out);
    free(out);
    snprintf(args, sizeof args, "train --data %s --model gbdt --config '{not json' --out %s", data, model);
    cr_assert_neq(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, "--config") != NULL, "%s", out);
    free(out);
    remove(data);
    remove(model);
    remove(report);
    remove(lgb);
    free(data);
    free(model);
    free(report);
    free(lgb);
    free(outdir);
}

Test(cli, valid_fraction_zero_fits_every_training_row, .timeout = 300)
{
    char *data = test_fdb_synthetic_write(576, 1);
    char *model = test_tmppath(".h5");
    char *out, args[4096];
    /* default: 10% of the training rows are held back and scored every 5 rounds */
    snprintf(args, sizeof args,
             "train --data %s --task select --model gbdt --config '{\"rounds\": 10, \"log_every\": 5}' --out %s",
             data, model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "valid multi_logloss") != NULL, "%s", out);
    free(out);
    /* 0: no validation slice, so no validation loss and all rounds trained */
    snprintf(args, sizeof args,
             "train --data %s --task select --model gbdt --config '{\"rounds\": 10, \"log_every\": 5}' --out %s"
             " --valid-fraction 0",
             data, model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "valid multi_logloss") == NULL, "%s", out);
    cr_assert(strstr(out, "[10] train multi_logloss") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args,
             "train --data %s --task select --model reformer --config '{\"epochs\": 2, \"batch_size\": 64}' --out %s"
             " --valid-fraction 0",
             data, model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "epoch   2/2  train loss") != NULL && strstr(out, "valid loss") == NULL, "%s", out);
    free(out);
    const char *bad[] = {"1", "-0.1", "x", "0.5x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "train --data %s --model gbdt --out %s --valid-fraction %s", data, model, bad[i]);
        cr_assert_neq(test_cli_run(args, &out), 0);
        cr_assert(strstr(out, "--valid-fraction") != NULL, "%s", out);
        cr_assert_eq(test_lines_count(out), 1, "%s", out);
        free(out);
    }
    remove(data);
    remove(model);
    free(data);
    free(model);
}

Test(cli, every_command_answers_help)
{
    const char *cmds[] = {"data", "train", "cv", "compare", "eval", "predict", "export"};
    char *out, args[256];
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char usage[64];
        snprintf(usage, sizeof usage, "usage: heurist %s", cmds[i]);
        const char *forms[] = {"%s --help", "help %s", "%s -h"};
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            snprintf(args, sizeof args, forms[f], cmds[i]);
            cr_assert_eq(test_cli_run(args, &out), 0, "heurist %s: %s", args, out);
            cr_assert(strstr(out, usage) != NULL, "heurist %s: %s", args, out);
            cr_assert(strstr(out, "--help") != NULL, "heurist %s: %s", args, out);
            free(out);
        }
    }
    /* options with their defaults */
    cr_assert_eq(test_cli_run("train --help", &out), 0);
    cr_assert(strstr(out, "--split random:F[:seed=S]") != NULL && strstr(out, "default random:0.2") != NULL, "%s", out);
    cr_assert(strstr(out, "--checkpoint PATH") != NULL && strstr(out, "--init-model") != NULL, "%s", out);
    free(out);
    cr_assert_eq(test_cli_run("cv --folds 3 --help", &out), 0, "%s", out);
    cr_assert(strstr(out, "(default 5)") != NULL, "%s", out);
    free(out);
    cr_assert_eq(test_cli_run("data info --help", &out), 0, "%s", out);
    cr_assert(strstr(out, "--strict") != NULL, "%s", out);
    free(out);
    cr_assert_eq(test_cli_run("help", &out), 0);
    cr_assert(strstr(out, "heurist help CMD") != NULL, "%s", out);
    free(out);
    cr_assert_neq(test_cli_run("help frobnicate", &out), 0);
    cr_assert(strstr(out, "unknown command 'frobnicate'") != NULL && test_lines_count(out) == 1, "%s", out);
    free(out);
}

/* Runs a command expected to fail with one line on stderr containing `want`. */
static void expect_one_line_error(const char *args, const char *want)
{
    char *out;
    int rc = test_cli_run(args, &out);
    cr_assert_neq(rc, 0, "heurist %s exited 0:\n%s", args, out);
    cr_assert(strstr(out, want) != NULL, "heurist %s: expected '%s' in:\n%s", args, want, out);
    cr_assert_eq(test_lines_count(out), 1, "heurist %s: not one line:\n%s", args, out);
    free(out);
}

Test(cli, hostile_options_are_one_line_errors, .timeout = 300)
{
    char *data = test_fdb_synthetic_write(72, 1);
    char *model = test_tmppath(".h5"), *report = test_tmppath(".json"), *outdir = test_tmppath("_cmp");
    char args[4096];
    /* --folds out of range: nothing trained, nothing written */
    const char *folds[] = {"0", "-1", "4294967298", "1", "x"};
    for (size_t i = 0; i < sizeof folds / sizeof folds[0]; i++) {
        snprintf(args, sizeof args, "cv --data %s --model gbdt --folds %s --report %s --quiet", data, folds[i], report);
        expect_one_line_error(args, "--folds");
        cr_assert(!hr_file_exists(report), "cv --folds %s wrote a report", folds[i]);
        snprintf(args, sizeof args, "compare --data %s --models gbdt --folds %s --out %s --quiet", data, folds[i], outdir);
        expect_one_line_error(args, "--folds");
    }
    /* more folds than geometries: named by the data */
    snprintf(args, sizeof args, "cv --data %s --model gbdt --folds 1000 --report %s --quiet", data, report);
    expect_one_line_error(args, "groups (by problem geometry)");
    /* --models that names nothing, or an unknown family */
    snprintf(args, sizeof args, "compare --data %s --models , --split random:0.2 --out %s", data, outdir);
    expect_one_line_error(args, "names no model");
    snprintf(args, sizeof args, "compare --data %s --models gbdt,,nosuch --split random:0.2 --out %s", data, outdir);
    expect_one_line_error(args, "unknown model 'nosuch'");
    /* compare --config not keyed by family names the key */
    snprintf(args, sizeof args, "compare --data %s --models gbdt --split random:0.2 --out %s --config '{\"rounds\": 3}'",
             data, outdir);
    expect_one_line_error(args, "--config key 'rounds' is not a model family");
    snprintf(args, sizeof args, "compare --data %s --models gbdt --split random:0.2 --out %s --config '{\"gbdt\": 3}'",
             data, outdir);
    expect_one_line_error(args, "expected a JSON object");
    /* --init-model that does not exist, for every family */
    const char *fams[] = {"gbdt", "reformer", "transformer"};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        snprintf(args, sizeof args, "train --data %s --model %s --init-model /nonexistent.h5 --out %s --quiet", data, fams[i],
                 model);
        expect_one_line_error(args, "--init-model /nonexistent.h5: no such file");
    }
    snprintf(args, sizeof args, "train --data %s --model reformer --init-model %s --out %s --quiet", data, data, model);
    expect_one_line_error(args, "model family 'reformer' cannot start from a saved model");
    /* --checkpoint where the family writes none; --resume without --checkpoint */
    snprintf(args, sizeof args, "train --data %s --model gbdt --checkpoint %s --out %s --quiet", data, report, model);
    expect_one_line_error(args, "model family 'gbdt' does not write checkpoints");
    snprintf(args, sizeof args, "train --data %s --model reformer --resume --out %s --quiet", data, model);
    expect_one_line_error(args, "--resume needs --checkpoint");
    /* a test fraction that leaves no training rows says so, with the numbers */
    snprintf(args, sizeof args, "train --data %s --model gbdt --split random:0.99999 --out %s --quiet", data, model);
    expect_one_line_error(args, "a test fraction of 0.99999 of 72 problems leaves no training rows");
    /* --threads out of bounds */
    const char *threads[] = {"1025", "10000", "-1", "99999999999999999999"};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        snprintf(args, sizeof args, "train --data %s --model gbdt --threads %s --out %s --quiet", data, threads[i], model);
        expect_one_line_error(args, "--threads");
    }
    cr_assert(!hr_file_exists(model), "a failed train wrote %s", model);
    remove(data);
    remove(report);
    free(data);
    free(model);
    free(report);
    free(outdir);
}

Test(cli, outputs_are_checked_before_training, .timeout = 300)
{
    char *data = test_fdb_synthetic_write(72, 1);
    char *model = test_tmppath(".h5");
    char args[4096];
    /* a report into a missing folder: refused before loading or training, no model written */
    snprintf(args, sizeof args,
             "train --data %s --model gbdt --config '{\"rounds\": 2}' --out %s --report /nonexistent/dir/r.json", data, model);
    expect_one_line_error(args, "--report /nonexistent/dir/r.json: folder /nonexistent/dir does not exist");
    cr_assert(!hr_file_exists(model), "the model was written although the report cannot be");
    snprintf(args, sizeof args, "train --data %s --model gbdt --out /nonexistent/m.h5", data);
    expect_one_line_error(args, "--out /nonexistent/m.h5: folder /nonexistent does not exist");
    snprintf(args, sizeof args, "train --data %s --model reformer --checkpoint /nonexistent/c.h5 --out %s", data, model);
    expect_one_line_error(args, "--checkpoint /nonexistent/c.h5: folder /nonexistent does not exist");
    snprintf(args, sizeof args, "cv --data %s --model gbdt --folds 2 --report /nonexistent/r.json", data);
    expect_one_line_error(args, "folder /nonexistent does not exist");
    char *dir = test_tmppath("_dir");
    cr_assert_eq(hr_mkdir_p(dir), HR_OK);
    snprintf(args, sizeof args, "train --data %s --model gbdt --out %s", data, dir);
    expect_one_line_error(args, "is a folder");
    snprintf(args, sizeof args, "compare --data %s --models gbdt --split random:0.2 --out %s", data, data);
    expect_one_line_error(args, "not a folder");
    /* a read-only folder (root writes anywhere, so only checked for other users) */
    if (geteuid() != 0) {
        char rep[512];
        snprintf(rep, sizeof rep, "%s/r.json", dir);
        cr_assert_eq(chmod(dir, 0555), 0);
        snprintf(args, sizeof args, "train --data %s --model gbdt --out %s --report %s", data, model, rep);
        expect_one_line_error(args, "is not writable");
        cr_assert(!hr_file_exists(model));
        chmod(dir, 0755);
    }
    rmdir(dir);
    remove(data);
    free(data);
    free(model);
    free(dir);
}

/* eval's report by source (--sources, --source) and in markdown (--md); --guard and --guard-top are checked before
 * anything runs, and a guard is refused where it cannot apply. */
Test(cli, eval_sources_markdown_and_guard_options, .timeout = 300)
{
    char *data = test_fdb_synthetic_write(192, 1);
    char *model = test_tmppath(".h5"), *report = test_tmppath(".json"), *md = test_tmppath(".md");
    char *out, args[4096];
    snprintf(args, sizeof args,
             "train --data %s --model gbdt --config '{\"rounds\": 3, \"log_every\": 0, \"min_data_in_leaf\": 5}' --out %s",
             data, model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    /* the first line's key is tagged "net", every other problem "pool" */
    char *text;
    size_t len;
    cr_assert_eq(hr_file_read_all(data, &text, &len), HR_OK);
    *strchr(text, '=') = '\0';
    char *keys = test_tmppath(".keys");
    FILE *f = fopen(keys, "w");
    fprintf(f, "%s net\n", text);
    fclose(f);
    free(text);
    snprintf(args, sizeof args, "eval --model %s --data %s --sources %s --source pool --report %s --md %s", model, data,
             keys, report, md);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    cr_assert_eq(hr_file_read_all(report, &text, &len), HR_OK);
    const char *src = strstr(text, "\"source\"");
    cr_assert(src && strstr(src, "\"net\"") && strstr(src, "\"pool\"") && strstr(text, "\"groups\""), "%s", text);
    free(text);
    cr_assert_eq(hr_file_read_all(md, &text, &len), HR_OK);
    cr_assert(strstr(text, "# heurist eval: gbdt on ") != NULL, "%s", text);
    free(text);
    snprintf(args, sizeof args, "eval --model %s --data %s --sources /nonexistent.keys --report %s", model, data, report);
    cr_assert_eq(test_cli_run(args, &out), 1);
    cr_assert(strstr(out, "/nonexistent.keys") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "eval --model %s --data %s --guard -1 --report %s", model, data, report);
    cr_assert_eq(test_cli_run(args, &out), 2);
    cr_assert(strstr(out, "--guard '-1'") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "eval --model %s --data %s --guard-top x --report %s", model, data, report);
    cr_assert_eq(test_cli_run(args, &out), 2, "%s", out);
    free(out);
    snprintf(args, sizeof args, "export --model %s --format lightgbm --out %s --guard 1", model, report);
    cr_assert_eq(test_cli_run(args, &out), 2);
    cr_assert(strstr(out, "--format c") != NULL, "%s", out);
    free(out);
    remove(data);
    remove(model);
    remove(report);
    remove(md);
    remove(keys);
    free(data);
    free(model);
    free(report);
    free(md);
    free(keys);
}
