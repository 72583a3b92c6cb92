/* heurist diff, the acceptance gate: exit statuses, the checks, the worst list against the pipeline's own
 * per-problem figures, the report's keys, and one-line errors. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers/testutil.h"
#include "pipeline/diff.h"

/* The data, a gbdt that learns it and the frequent baseline, trained on the same split. */
typedef struct diff_fixture {
    char *data, *gbdt, *weak;
} diff_fixture;

static void train(const char *data, const char *family, const char *config, const char *out_path)
{
    char args[2048], *out;
    snprintf(args, sizeof args, "train --data %s --task select --model %s %s --split random:0.25:seed=1 --quiet --out %s",
             data, family, config, out_path);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
}

static diff_fixture fixture_make(void)
{
    diff_fixture f = {test_fdb_synthetic_write(576, 1), test_tmppath(".h5"), test_tmppath(".h5")};
    train(f.data, "gbdt", "--config '{\"rounds\": 20, \"log_every\": 0, \"min_data_in_leaf\": 5}'", f.gbdt);
    train(f.data, "frequent", "", f.weak);
    return f;
}

static void fixture_remove(diff_fixture *f)
{
    char *p[] = {f->data, f->gbdt, f->weak};
    for (int i = 0; i < 3; i++) {
        remove(p[i]);
        free(p[i]);
    }
}

static cJSON *read_json(const char *path)
{
    char *text;
    size_t len;
    cr_assert_eq(hr_file_read_all(path, &text, &len), HR_OK, "%s", hr_last_error());
    cJSON *j = cJSON_Parse(text);
    cr_assert(j, "not JSON: %s", text);
    free(text);
    return j;
}

static double num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    cr_assert(cJSON_IsNumber(x), "no number %s%s%s", a, b ? "." : "", b ? b : "");
    return x->valuedouble;
}

static int flag(const cJSON *o, const char *check)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "checks"), check);
    x = cJSON_GetObjectItemCaseSensitive(x, "pass");
    cr_assert(cJSON_IsBool(x), "no checks.%s.pass", check);
    return cJSON_IsTrue(x);
}

/* Runs "diff OLD NEW --data DATA EXTRA --report R" expecting exit status `status` and returns the report R;
 * *out gets the command's output (stdout and stderr). */
static cJSON *diff_report_run(const char *old_model, const char *new_model, const char *data, const char *extra,
                              int status, char **out)
{
    char *rep = test_tmppath(".json"), args[2048];
    snprintf(args, sizeof args, "diff %s %s --data %s %s --report %s", old_model, new_model, data, extra, rep);
    cr_assert_eq(test_cli_run(args, out), status, "%s", *out);
    cJSON *j = read_json(rep);
    remove(rep);
    free(rep);
    return j;
}

Test(cli_diff, a_model_against_itself_passes, .timeout = 300)
{
    diff_fixture f = fixture_make();
    char *out;
    cJSON *j = diff_report_run(f.gbdt, f.gbdt, f.data, "", 0, &out);
    cr_assert(strstr(out, "agreement  1.0000  (576 of 576"), "%s", out);
    cr_assert(strstr(out, "improved 0  same 576  degraded 0"), "%s", out);
    cr_assert(strstr(out, "\nPASS: 4 of 4 checks pass\n"), "%s", out);
    free(out);
    cr_assert_eq(num(j, "agreement", NULL), 1.0);
    cr_assert_eq(num(j, "n_problems", NULL), 576);
    cr_assert_eq(num(j, "counts", "same"), 576);
    cr_assert_eq(num(j, "counts", "improved") + num(j, "counts", "degraded"), 0);
    const char *deltas[] = {"efficiency_mean", "efficiency_median", "efficiency_p10", "efficiency_min", "top1", "top5"};
    for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++) cr_assert_eq(num(j, "deltas", deltas[i]), 0.0, "%s", deltas[i]);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "worst")), 0);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "decision")->valuestring, "pass");
    cJSON_Delete(j);
    /* a GroupKFold fold's test rows: fewer problems, the same verdict */
    j = diff_report_run(f.gbdt, f.gbdt, f.data, "--folds 3 --fold 1", 0, &out);
    free(out);
    cr_assert(num(j, "n_problems", NULL) > 0 && num(j, "n_problems", NULL) < 576);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "split")->valuestring, "groupkfold:3:seed=0:fold=1");
    cJSON_Delete(j);
    fixture_remove(&f);
}

Test(cli_diff, a_weak_model_fails_and_loose_thresholds_pass_it, .timeout = 300)
{
    diff_fixture f = fixture_make();
    char args[2048], *out;
    cJSON *j = diff_report_run(f.gbdt, f.weak, f.data, "--split random:0.25:seed=1", 1, &out);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "decision")->valuestring, "fail");
    cr_assert(num(j, "deltas", "efficiency_mean") < -0.005, "%s", out);
    /* every failing check is named on the FAIL line and flagged in the report, and only those */
    const char *fail = strstr(out, "\nFAIL: ");
    cr_assert(fail, "%s", out);
    const char *checks[] = {"mean", "median", "p10", "problem_loss"};
    int failed = 0;
    for (int c = 0; c < 4; c++) {
        char word[32];
        snprintf(word, sizeof word, " %s", checks[c]);
        const char *at = strstr(strchr(fail, ':') + 1, word);
        int named = at && (at[strlen(word)] == ' ' || at[strlen(word)] == '\n');
        cr_assert_eq(named, !flag(j, checks[c]), "check %s: %s", checks[c], fail);
        failed += !flag(j, checks[c]);
    }
    cr_assert(!flag(j, "mean") && !flag(j, "problem_loss"), "%s", out);
    char head[64];
    snprintf(head, sizeof head, "\nFAIL: %d of 4 checks fail:", failed);
    cr_assert(strstr(out, head), "%s", out);
    cr_assert(num(cJSON_GetObjectItemCaseSensitive(j, "checks"), "problem_loss", "failing") > 0);
    cJSON_Delete(j);
    free(out);
    /* the same pair under loosened thresholds */
    snprintf(args, sizeof args,
             "diff %s %s --data %s --split random:0.25:seed=1 --max-mean-drop 1 --max-median-drop 1 --max-p10-drop 1 "
             "--max-problem-loss 1",
             f.gbdt, f.weak, f.data);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "\nPASS: "), "%s", out);
    free(out);
    /* and the other way round, the weak model as the old one, passes the defaults */
    snprintf(args, sizeof args, "diff %s %s --data %s --split random:0.25:seed=1", f.weak, f.gbdt, f.data);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    fixture_remove(&f);
}

/* The worst list is the degraded problems by new/old efficiency, lowest first, and its figures are those
 * pipe_evaluate gives each problem. */
Test(cli_diff, the_worst_list_is_sorted_and_matches_the_evaluation, .timeout = 300)
{
    diff_fixture f = fixture_make();
    char *out;
    cJSON *j = diff_report_run(f.gbdt, f.weak, f.data, "--worst 5", 1, &out);
    free(out);
    pipe_dataset d;
    cr_assert_eq(pipe_dataset_load(f.data, "select", NULL, 1, NULL, &d), HR_OK, "%s", hr_last_error());
    model *mo, *mn;
    cr_assert_eq(model_load(f.gbdt, &mo), HR_OK);
    cr_assert_eq(model_load(f.weak, &mn), HR_OK);
    int *rows = malloc((size_t)d.n * sizeof *rows);
    for (int i = 0; i < d.n; i++) rows[i] = i;
    pipe_result ro, rn;
    memset(&ro, 0, sizeof ro);
    memset(&rn, 0, sizeof rn);
    cr_assert_eq(pipe_evaluate(&d, mo, rows, d.n, &ro), HR_OK);
    cr_assert_eq(pipe_evaluate(&d, mn, rows, d.n, &rn), HR_OK);
    long degraded = 0;
    for (int i = 0; i < d.n; i++) degraded += rn.sel.efficiency[i] < ro.sel.efficiency[i];
    cr_assert_eq(num(j, "counts", "degraded"), degraded);
    const cJSON *worst = cJSON_GetObjectItemCaseSensitive(j, "worst");
    cr_assert_eq(cJSON_GetArraySize(worst), degraded < 5 ? degraded : 5);
    double prev = -1, last = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, worst)
    {
        const char *key = cJSON_GetObjectItemCaseSensitive(e, "key")->valuestring;
        int row = -1;
        for (int i = 0; i < d.n && row < 0; i++)
            if (strcmp(d.sel->keys[i], key) == 0) row = i;
        cr_assert(row >= 0, "key %s is no problem of the data", key);
        double eo = num(e, "old_efficiency", NULL), en = num(e, "new_efficiency", NULL);
        cr_assert_eq(eo, ro.sel.efficiency[row], "%s", key);
        cr_assert_eq(en, rn.sel.efficiency[row], "%s", key);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(e, "old_pick")->valuestring, d.sel->kernels[ro.sel.pick[row]]);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(e, "new_pick")->valuestring, d.sel->kernels[rn.sel.pick[row]]);
        cr_assert(en < eo);
        cr_assert(en / eo >= prev, "not sorted at %s", key);
        prev = last = en / eo;
    }
    /* no degraded problem left out is worse than the last one listed */
    for (int i = 0; i < d.n; i++)
        if (rn.sel.efficiency[i] < ro.sel.efficiency[i]) cr_assert(rn.sel.efficiency[i] / ro.sel.efficiency[i] >= last);
    /* the library call agrees with the command: per-problem figures are the evaluation's */
    pipe_diff df;
    pipe_diff_opts o = pipe_diff_opts_default();
    cr_assert_eq(pipe_diff_compute(&d, mo, mn, rows, d.n, &o, &df), HR_OK, "%s", hr_last_error());
    long agree = 0;
    for (int i = 0; i < d.n; i++) {
        cr_assert_eq(df.problems[i].old_eff, ro.sel.efficiency[i]);
        cr_assert_eq(df.problems[i].new_pick, rn.sel.pick[i]);
        agree += ro.sel.pick[i] == rn.sel.pick[i];
    }
    cr_assert_eq(df.agree, agree);
    cr_assert_eq(df.improved + df.same + df.degraded, d.n);
    cr_assert_eq(df.pass, 0);
    pipe_diff_free(&df);
    pipe_result_free(&ro);
    pipe_result_free(&rn);
    free(rows);
    model_free(mo);
    model_free(mn);
    pipe_dataset_free(&d);
    cJSON_Delete(j);
    fixture_remove(&f);
}

Test(cli_diff, the_report_has_the_documented_keys, .timeout = 300)
{
    diff_fixture f = fixture_make();
    char *out;
    cJSON *j = diff_report_run(f.weak, f.gbdt, f.data, "--tolerance 0.01", 0, &out);
    free(out);
    const char *top[] = {"task", "data", "split", "n_problems", "old", "new", "deltas", "agreement", "counts",
                         "tolerance", "thresholds", "checks", "worst", "pass", "decision"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
        cr_assert(cJSON_GetObjectItemCaseSensitive(j, top[i]), "missing %s", top[i]);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "old"), "family")->valuestring,
                     "frequent");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "new"), "model")->valuestring,
                     f.gbdt);
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "new");
    const char *metrics[] = {"top1", "top5", "efficiency_mean", "efficiency_median", "efficiency_p10", "efficiency_min"};
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) num(nm, "metrics", metrics[i]);
    cr_assert_eq(num(j, "tolerance", NULL), 0.01);
    cr_assert_eq(num(j, "thresholds", "max_mean_drop"), 0.005);
    cr_assert_eq(num(j, "thresholds", "max_median_drop"), 0.005);
    cr_assert_eq(num(j, "thresholds", "max_p10_drop"), 0.02);
    cr_assert_eq(num(j, "thresholds", "max_problem_loss"), 0.1);
    const cJSON *ck = cJSON_GetObjectItemCaseSensitive(j, "checks");
    cr_assert_eq(num(ck, "mean", "max_drop"), 0.005);
    cr_assert(fabs(num(ck, "mean", "new") - num(nm, "metrics", "efficiency_mean")) < 1e-12);
    cr_assert_eq(num(ck, "problem_loss", "failing"), 0);
    cr_assert(flag(j, "mean") && flag(j, "median") && flag(j, "p10") && flag(j, "problem_loss"));
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "pass")));
    cr_assert_eq(num(j, "counts", "improved") + num(j, "counts", "same") + num(j, "counts", "degraded"), 576);
    cJSON_Delete(j);
    fixture_remove(&f);
}

/* Runs a diff expected to fail with status 2 and one line on stderr containing `want`. */
static void expect_error(const char *args, const char *want)
{
    char *out;
    int rc = test_cli_run(args, &out);
    cr_assert_eq(rc, 2, "heurist %s exited %d:\n%s", args, rc, out);
    cr_assert(strstr(out, want), "heurist %s: expected '%s' in:\n%s", args, want, out);
    cr_assert_eq(test_lines_count(out), 1, "heurist %s: not one line:\n%s", args, out);
    free(out);
}

Test(cli_diff, errors_exit_2_with_one_line, .timeout = 300)
{
    diff_fixture f = fixture_make();
    char args[4096];
    snprintf(args, sizeof args, "diff /nonexistent/old.h5 %s --data %s", f.gbdt, f.data);
    expect_error(args, "/nonexistent/old.h5");
    snprintf(args, sizeof args, "diff %s %s --data /nonexistent/data.fdb.txt", f.gbdt, f.gbdt);
    expect_error(args, "/nonexistent/data.fdb.txt");
    snprintf(args, sizeof args, "diff %s %s --data %s --bogus 1", f.gbdt, f.gbdt, f.data);
    expect_error(args, "unknown option '--bogus'");
    snprintf(args, sizeof args, "diff %s --data %s", f.gbdt, f.data);
    expect_error(args, "needs two models, OLD and NEW");
    snprintf(args, sizeof args, "diff %s %s %s --data %s", f.gbdt, f.gbdt, f.gbdt, f.data);
    expect_error(args, "unexpected argument");
    snprintf(args, sizeof args, "diff %s %s", f.gbdt, f.gbdt);
    expect_error(args, "--data is required");
    snprintf(args, sizeof args, "diff %s %s --data %s --max-problem-loss 1.5", f.gbdt, f.gbdt, f.data);
    expect_error(args, "--max-problem-loss '1.5'");
    snprintf(args, sizeof args, "diff %s %s --data %s --max-mean-drop -0.1", f.gbdt, f.gbdt, f.data);
    expect_error(args, "--max-mean-drop '-0.1'");
    snprintf(args, sizeof args, "diff %s %s --data %s --folds 3", f.gbdt, f.gbdt, f.data);
    expect_error(args, "--folds K and --fold F go together");
    snprintf(args, sizeof args, "diff %s %s --data %s --folds 3 --fold 3", f.gbdt, f.gbdt, f.data);
    expect_error(args, "--fold 3");
    snprintf(args, sizeof args, "diff %s %s --data %s --split random:2", f.gbdt, f.gbdt, f.data);
    expect_error(args, "random:2");
    /* a tuning model */
    char *tune = test_tmppath(".h5"), *out;
    snprintf(args, sizeof args,
             "train --data %s/fuzz/corpus/cache/tune_small.h5 --task tune --model gbdt --config '{\"rounds\": 2}' "
             "--valid-fraction 0 --quiet --out %s",
             HEURIST_SOURCE_DIR, tune);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "diff %s %s --data %s", f.gbdt, tune, f.data);
    expect_error(args, "is a tune model");
    /* a kernel the data measures that a learned model does not know: the pipeline's message (a baseline's fixed
     * rule never picks it, and decides) */
    char *fwd = test_fdb_synthetic_write(288, 0), *fwd_model = test_tmppath(".h5");
    train(fwd, "gbdt", "--config '{\"rounds\": 2}'", fwd_model);
    snprintf(args, sizeof args, "diff %s %s --data %s", fwd_model, f.gbdt, f.data);
    expect_error(args, "the data measures kernel 'KD'");
    /* help lists every option with the defaults */
    cr_assert_eq(test_cli_run("diff --help", &out), 0, "%s", out);
    const char *opts[] = {"--data", "--split", "--folds", "--fold", "--seed", "--tolerance", "--max-mean-drop",
                          "--max-median-drop", "--max-p10-drop", "--max-problem-loss", "--worst", "--report",
                          "--threads", "(default 0.005", "(default 0.02)", "(default 0.1)", "(default 10)"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) cr_assert(strstr(out, opts[i]), "no %s in %s", opts[i], out);
    free(out);
    cr_assert_eq(test_cli_run("help diff", &out), 0, "%s", out);
    cr_assert(strstr(out, "usage: heurist diff"), "%s", out);
    free(out);
    char *p[] = {tune, fwd, fwd_model};
    for (int i = 0; i < 3; i++) {
        remove(p[i]);
        free(p[i]);
    }
    fixture_remove(&f);
}
