/* pipeline/: the applicability table and its model-file group, the temporary model, folds, the comparison. */
#include <criterion/criterion.h>
#include <math.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/h5.h"
#include "helpers/testutil.h"
#include "models/models_internal.h"
#include "pipeline/pipeline.h"

/* Forward FP32 problems run KA and KB, backward ones KA and KC; one FP16 forward problem runs KB only. */
static const char fdb_text[] = "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KA:1.0,0,a;KB:2.0,0,a\n"
                               "2-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KA:2.0,0,a;KB:1.0,0,a\n"
                               "3-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KA:1.0,0,a;KB:2.0,0,a\n"
                               "4-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B=KA:1.0,0,a;KC:2.0,0,a\n"
                               "5-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B=KA:2.0,0,a;KC:1.0,0,a\n"
                               "6-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B=KA:1.0,0,a;KC:2.0,0,a\n"
                               "7-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-F=KB:1.0,0,a\n"
                               "8-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-F=KB:1.0,0,a\n";

static pipe_dataset load_fixture(char **path)
{
    *path = test_tmpfile(".fdb.txt", fdb_text, strlen(fdb_text));
    hr_log log = hr_log_stderr(HR_LOG_ERROR);
    pipe_dataset d;
    cr_assert_eq(pipe_dataset_load(*path, "select", NULL, 0, &log, &d), HR_OK, "%s", hr_last_error());
    return d;
}

/* A problem's values, from its key. */
typedef struct problem {
    double v[DATA_CODEC_MAX_VALUES];
} problem;

static problem key(const char *k)
{
    data_problem p;
    const char *why;
    cr_assert_eq(data_key_parse(k, strlen(k), &p, &why), HR_OK);
    problem q;
    data_problem_values(&p, q.v);
    return q;
}

/* m's applicability table from the first n_train rows of rows as training rows and the first n_valid as
 * validation rows. */
static int applicability_of(model *m, const pipe_dataset *d, const int *rows, int n_train, int n_valid)
{
    model_train_data td = {.task = MODEL_TASK_SELECT, .sel = d->sel, .codec = d->codec, .V = d->V, .X = d->X,
                           .n_features = d->n_features, .train = rows, .n_train = n_train, .valid = rows,
                           .n_valid = n_valid};
    return model_applicability_compute(m, &td);
}

/* Trains a two-round gbdt on every row but the last; the model is returned. */
static model *train_small(const pipe_dataset *d, const char *save_path)
{
    hr_log log = hr_log_stderr(HR_LOG_ERROR);
    cJSON *cfg = cJSON_Parse("{\"rounds\": 2, \"log_every\": 0, \"min_data_in_leaf\": 1}");
    int train[16], test[1] = {d->n - 1};
    for (int i = 0; i < d->n - 1; i++) train[i] = i;
    data_split s = {.n_train = d->n - 1, .n_test = 1, .train = train, .test = test};
    pipe_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.log = &log;
    o.config = cfg;
    o.save_path = save_path;
    o.valid_fraction = -1;
    pipe_result r;
    model *m = NULL;
    cr_assert_eq(pipe_run(d, &s, &model_family_gbdt, &o, &r, &m), HR_OK, "%s", hr_last_error());
    cr_assert_gt(r.model_bytes, 0);
    pipe_result_free(&r);
    cJSON_Delete(cfg);
    return m;
}

/* One prediction through a workspace of its own. */
static int predict_select1(const model *m, const problem *p, float *scores)
{
    model_ws *ws = NULL;
    int rc = model_ws_create(m, &ws);
    if (!rc) rc = model_predict_select(m, ws, p->v, scores);
    model_ws_free(ws);
    return rc;
}

static int kernel(const model *m, const char *name)
{
    for (int k = 0; k < m->n_kernels; k++)
        if (strcmp(m->kernels[k], name) == 0) return k;
    cr_assert_fail("no kernel %s", name);
    return -1;
}

Test(pipeline, applicability_follows_the_measured_direction_dtype_and_layout)
{
    char *path;
    pipe_dataset d = load_fixture(&path);
    model *m = train_small(&d, NULL);
    int rows[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    cr_assert_eq(applicability_of(m, &d, rows, d.n, 0), HR_OK);
    unsigned char ok[3];
    int ka = kernel(m, "KA"), kb = kernel(m, "KB"), kc = kernel(m, "KC");
    problem fwd = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F");
    cr_assert_eq(model_applicable(m, fwd.v, ok), MODEL_APPLIES_EXACT);
    cr_assert(ok[ka] && ok[kb] && !ok[kc]);
    problem bwd = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B");
    cr_assert_eq(model_applicable(m, bwd.v, ok), MODEL_APPLIES_EXACT);
    cr_assert(ok[ka] && !ok[kb] && ok[kc]);
    problem half = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-F");
    cr_assert_eq(model_applicable(m, half.v, ok), MODEL_APPLIES_EXACT);
    cr_assert(!ok[ka] && ok[kb] && !ok[kc]);
    /* unseen data type: relaxed to the direction; unseen direction: every kernel */
    problem bf16 = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-BF16-B");
    cr_assert_eq(model_applicable(m, bf16.v, ok), MODEL_APPLIES_DIRECTION);
    cr_assert(ok[ka] && !ok[kb] && ok[kc]);
    problem wrw = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-W");
    cr_assert_eq(model_applicable(m, wrw.v, ok), MODEL_APPLIES_ALL);
    cr_assert(ok[ka] && ok[kb] && ok[kc]);
    /* only the rows given count, from both parts */
    cr_assert_eq(applicability_of(m, &d, rows, 2, 1), HR_OK);
    cr_assert_eq(model_applicable(m, bwd.v, ok), MODEL_APPLIES_ALL);
    cr_assert_eq(model_applicable(m, fwd.v, ok), MODEL_APPLIES_EXACT);
    model_free(m);
    pipe_dataset_free(&d);
    remove(path);
    free(path);
}

Test(pipeline, model_files_keep_the_table_and_older_files_have_none)
{
    char *path, *mpath = test_tmppath(".h5"), *old = test_tmppath(".h5");
    pipe_dataset d = load_fixture(&path);
    /* training keeps the table of its rows (all but the last, an FP16 forward problem) */
    model *m = train_small(&d, mpath);
    model *m2;
    cr_assert_eq(model_load(mpath, &m2), HR_OK, "%s", hr_last_error());
    size_t cells = (size_t)m->n_kernels * (size_t)m->n_combos;
    cr_assert_eq(m2->n_combos, m->n_combos);
    cr_assert_not_null(m2->applicable);
    cr_assert_eq(memcmp(m->applicable, m2->applicable, cells), 0, "the table read back differs from the one computed");
    int rows[7] = {0, 1, 2, 3, 4, 5, 6};
    unsigned char *want = malloc(cells);
    memcpy(want, m->applicable, cells);
    cr_assert_eq(applicability_of(m, &d, rows, 7, 0), HR_OK);
    cr_assert_eq(memcmp(m->applicable, want, cells), 0, "the saved table is not the training rows' table");
    model_free(m2);
    /* a file without the table (a model base built otherwise) loads, and ranks every kernel */
    unsigned char *keep = m->applicable;
    m->applicable = NULL;
    cr_assert_eq(model_save(m, old), HR_OK, "%s", hr_last_error());
    m->applicable = keep;
    cr_assert_eq(model_load(old, &m2), HR_OK);
    cr_assert_null(m2->applicable);
    unsigned char ok[3];
    problem bwd = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B");
    cr_assert_eq(model_applicable(m2, bwd.v, ok), MODEL_APPLIES_UNRECORDED);
    cr_assert(ok[0] && ok[1] && ok[2]);
    model_free(m2);
    free(want);
    model_free(m);
    pipe_dataset_free(&d);
    remove(path);
    remove(mpath);
    remove(old);
    free(path);
    free(mpath);
    free(old);
}

Test(pipeline, rank_orders_the_applicable_kernels_with_probabilities)
{
    char *path;
    pipe_dataset d = load_fixture(&path);
    model *m = train_small(&d, NULL);
    problem bwd = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B");
    float scores[3];
    cr_assert_eq(predict_select1(m, &bwd, scores), HR_OK);
    model_ranked r[3];
    model_applies rule;
    int n = model_rank(m, bwd.v, scores, r, &rule);
    cr_assert_eq(n, 2, "a backward problem is run by KA and KC only");
    cr_assert_eq(rule, MODEL_APPLIES_EXACT);
    cr_assert_neq(r[0].kernel, kernel(m, "KB"));
    cr_assert_neq(r[1].kernel, kernel(m, "KB"));
    cr_assert_geq(r[0].score, r[1].score);
    cr_assert_float_eq(r[0].prob + r[1].prob, 1.0f, 1e-6f);
    cr_assert_float_eq(r[0].prob / r[1].prob, expf(r[0].score - r[1].score), 1e-3f);
    model_free(m);
    pipe_dataset_free(&d);
    remove(path);
    free(path);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

Test(pipeline, the_temporary_model_lives_in_tmpdir_and_is_removed)
{
    char *path, *dir = test_tmppath("_tmpdir");
    pipe_dataset d = load_fixture(&path);
    cr_assert_eq(hr_mkdir_p(dir), HR_OK);
    const char *saved = getenv("TMPDIR");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("TMPDIR", dir, 1);
    model *m = train_small(&d, NULL); /* model_bytes > 0: the file was written there */
    cr_assert_eq(count_entries(dir), 0, "the temporary model was left behind in %s", dir);
    model_free(m);
    /* a TMPDIR that cannot hold it is an error naming the path */
    setenv("TMPDIR", "/nonexistent-heurist-dir", 1);
    hr_log log = hr_log_stderr(HR_LOG_ERROR);
    int train[7] = {0, 1, 2, 3, 4, 5, 6}, test[1] = {7};
    data_split s = {.n_train = 7, .n_test = 1, .train = train, .test = test};
    pipe_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.log = &log;
    o.valid_fraction = -1;
    cJSON *cfg = cJSON_Parse("{\"rounds\": 1, \"log_every\": 0, \"min_data_in_leaf\": 1}");
    o.config = cfg;
    pipe_result r;
    cr_assert_neq(pipe_run(&d, &s, &model_family_gbdt, &o, &r, NULL), HR_OK);
    cr_assert(strstr(hr_last_error(), "/nonexistent-heurist-dir/heurist_model_") != NULL, "%s", hr_last_error());
    pipe_result_free(&r);
    cJSON_Delete(cfg);
    if (keep) setenv("TMPDIR", keep, 1);
    else unsetenv("TMPDIR");
    free(keep);
    rmdir(dir);
    free(dir);
    pipe_dataset_free(&d);
    remove(path);
    free(path);
}

Test(pipeline, options_are_checked_against_the_family)
{
    pipe_opts o;
    memset(&o, 0, sizeof o);
    cr_assert_eq(pipe_opts_check(&model_family_gbdt, &o), HR_OK);
    o.resume = 1;
    cr_assert_neq(pipe_opts_check(&model_family_reformer, &o), HR_OK);
    cr_assert(strstr(hr_last_error(), "--resume needs --checkpoint") != NULL);
    o.checkpoint = "c.h5";
    cr_assert_eq(pipe_opts_check(&model_family_reformer, &o), HR_OK);
    cr_assert_neq(pipe_opts_check(&model_family_gbdt, &o), HR_OK);
    cr_assert(strstr(hr_last_error(), "'gbdt' does not write checkpoints") != NULL, "%s", hr_last_error());
    memset(&o, 0, sizeof o);
    o.init_model = "/nonexistent.h5";
    const model_family *fams[] = {&model_family_gbdt, &model_family_reformer, &model_family_transformer,
                                  &model_family_seq2seq};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        cr_assert_neq(pipe_opts_check(fams[i], &o), HR_OK, "%s accepted a missing --init-model", fams[i]->name);
        cr_assert(strstr(hr_last_error(), "/nonexistent.h5: no such file") != NULL, "%s", hr_last_error());
    }
}

Test(pipeline, folds_and_the_comparison)
{
    char *path, *dir = test_tmppath("_cmp");
    pipe_dataset d = load_fixture(&path);
    hr_log log = hr_log_stderr(HR_LOG_ERROR);
    cJSON *cfg = cJSON_Parse("{\"rounds\": 1, \"log_every\": 0, \"min_data_in_leaf\": 1}");
    pipe_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.log = &log;
    o.valid_fraction = -1;
    o.config = cfg;
    pipe_result folds[2];
    cr_assert_neq(pipe_run_folds(&d, &model_family_gbdt, 1, &o, folds, NULL, NULL), HR_OK);
    cr_assert(strstr(hr_last_error(), "at least 2 folds") != NULL, "%s", hr_last_error());
    cr_assert_eq(pipe_run_folds(&d, &model_family_gbdt, 2, &o, folds, NULL, NULL), HR_OK, "%s", hr_last_error());
    cr_assert_eq(folds[0].n_test + folds[1].n_test, d.n, "the folds' test rows cover the data once");
    pipe_result_free(&folds[0]);
    pipe_result_free(&folds[1]);
    pipe_compare_spec s;
    memset(&s, 0, sizeof s);
    s.n_models = 1;
    s.fams[0] = &model_family_gbdt;
    s.configs[0] = cfg;
    s.split = "random:0.25:seed=3";
    char *summary;
    cr_assert_eq(pipe_compare(&d, &s, &o, dir, NULL, NULL, &summary), HR_OK, "%s", hr_last_error());
    /* the summary is report.md up to its figures */
    char md[1024], *text;
    size_t len;
    snprintf(md, sizeof md, "%s/report.md", dir);
    cr_assert_eq(hr_file_read_all(md, &text, &len), HR_OK);
    cr_assert(strstr(summary, "| gbdt |") != NULL && strstr(summary, "random:0.25:seed=3") != NULL, "%s", summary);
    cr_assert(strstr(summary, "![") == NULL, "%s", summary);
    cr_assert_eq(strncmp(text, summary, strlen(summary)), 0, "report.md does not start with the summary");
    cr_assert(strstr(text, "![") != NULL, "report.md has no figures: %s", text);
    free(text);
    free(summary);
    s.split = "random:0.99999";
    cr_assert_neq(pipe_compare(&d, &s, &o, dir, NULL, NULL, &summary), HR_OK);
    cr_assert(strstr(hr_last_error(), "leaves no training rows") != NULL, "%s", hr_last_error());
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    cJSON_Delete(cfg);
    free(dir);
    pipe_dataset_free(&d);
    remove(path);
    free(path);
}

/* Trains family fam on every row of d (no test rows needed: the baselines are checked by their scores). */
static model *train_all(const pipe_dataset *d, const model_family *fam)
{
    int rows[16];
    for (int i = 0; i < d->n; i++) rows[i] = i;
    model_train_data td = {.task = MODEL_TASK_SELECT, .sel = d->sel, .codec = d->codec, .V = d->V, .X = d->X,
                           .n_features = d->n_features, .train = rows, .n_train = d->n};
    hr_log log = hr_log_silent();
    model_ctx ctx = {.seed = 1, .threads = 1, .log = &log};
    model *m = NULL;
    cr_assert_eq(model_train(fam, &td, &ctx, &m), HR_OK, "%s", hr_last_error());
    return m;
}

Test(pipeline, baselines_frequent_and_vendor)
{
    char *path;
    pipe_dataset d = load_fixture(&path);
    /* no sidecar: the vendor baseline is refused with a message saying what is missing */
    cr_assert_null(d.sel->vendor_rank);
    model_train_data td = {.task = MODEL_TASK_SELECT, .sel = d.sel, .codec = d.codec, .V = d.V, .X = d.X,
                           .n_features = d.n_features};
    hr_log log = hr_log_silent();
    model_ctx ctx = {.seed = 1, .threads = 1, .log = &log};
    model *m = NULL;
    cr_assert_neq(model_train(&model_family_vendor, &td, &ctx, &m), HR_OK);
    cr_assert(strstr(hr_last_error(), "heuristic.txt") != NULL, "%s", hr_last_error());
    /* frequent: forward FP32 problems were won twice by KA and once by KB */
    model *f = train_all(&d, &model_family_frequent);
    float s[3];
    problem fwd = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F");
    cr_assert_eq(predict_select1(f, &fwd, s), HR_OK);
    cr_assert_eq(eval_select_argmax(s, 3), kernel(f, "KA"));
    problem half = key("9-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-F");
    cr_assert_eq(predict_select1(f, &half, s), HR_OK);
    cr_assert_eq(eval_select_argmax(s, 3), kernel(f, "KB"));
    model_free(f);
    pipe_dataset_free(&d);

    /* a sidecar beside the find-db: FILE.heuristic.txt next to FILE.fdb.txt */
    size_t n = strlen(path);
    cr_assert(n > 8 && strcmp(path + n - 8, ".fdb.txt") == 0);
    char side[512];
    snprintf(side, sizeof side, "%.*s.heuristic.txt", (int)(n - 8), path);
    const char *text = "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KB;KA\n"
                       "4-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B=NOSUCH;KC;KA\n";
    FILE *fp = fopen(side, "w");
    cr_assert_not_null(fp);
    fputs(text, fp);
    fclose(fp);
    hr_log elog = hr_log_stderr(HR_LOG_ERROR);
    cr_assert_eq(pipe_dataset_load(path, "select", NULL, 0, &elog, &d), HR_OK, "%s", hr_last_error());
    cr_assert_not_null(d.sel->vendor_rank);
    model *v = train_all(&d, &model_family_vendor);
    problem p1 = key("1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F");
    cr_assert_eq(predict_select1(v, &p1, s), HR_OK);
    cr_assert_eq(eval_select_argmax(s, 3), kernel(v, "KB"), "the vendor's first pick");
    problem p4 = key("4-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-B");
    cr_assert_eq(predict_select1(v, &p4, s), HR_OK);
    cr_assert_eq(eval_select_argmax(s, 3), kernel(v, "KC"), "an unknown kernel name is left out of the ranking");
    /* a problem the sidecar does not rank gets no pick */
    problem p2 = key("2-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F");
    cr_assert_eq(predict_select1(v, &p2, s), HR_OK);
    cr_assert(isinf(s[0]) && isinf(s[1]) && isinf(s[2]));
    /* the model file round-trips */
    char *mpath = test_tmppath(".h5");
    cr_assert_eq(model_save(v, mpath), HR_OK, "%s", hr_last_error());
    model *v2;
    cr_assert_eq(model_load(mpath, &v2), HR_OK, "%s", hr_last_error());
    cr_assert_eq(predict_select1(v2, &p1, s), HR_OK);
    cr_assert_eq(eval_select_argmax(s, 3), kernel(v2, "KB"));
    model_free(v2);
    model_free(v);
    pipe_dataset_free(&d);
    remove(mpath);
    remove(side);
    remove(path);
    free(mpath);
    free(path);
}

/* The vendor guard in an evaluation (model.select_guard, select_guard_top: data_portable_guard) and the report's
 * figures against the vendor's first pick by slice and source. The frequent model picks KA for every forward FP32
 * problem; the vendor ranks KB first for problem 2, where KB is twice as fast. */
Test(pipeline, vendor_guard_and_slices_against_the_vendor)
{
    char *path;
    pipe_dataset d = load_fixture(&path);
    model *f = train_all(&d, &model_family_frequent);
    pipe_dataset_free(&d);
    size_t n = strlen(path);
    char side[512];
    snprintf(side, sizeof side, "%.*s.heuristic.txt", (int)(n - 8), path);
    FILE *fp = fopen(side, "w");
    cr_assert_not_null(fp);
    fputs("1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KA;KB\n2-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KB;KA\n", fp);
    fclose(fp);
    char *keys = test_tmpfile(".keys", "2-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F resnet\n", 51);
    hr_log log = hr_log_stderr(HR_LOG_ERROR);
    pipe_load l = {.task = "select", .log = &log, .sources = keys, .source = "pool"};
    cr_assert_eq(pipe_dataset_open(path, &l, &d), HR_OK, "%s", hr_last_error());
    int rows[3] = {0, 1, 2};
    cr_assert_str_eq(d.sel->keys[1], "2-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F");
    pipe_result r;
    memset(&r, 0, sizeof r);
    /* problem 3 (row 2) has no vendor ranking: it counts in no figure against the vendor, shortlists included */
    cr_assert_eq(pipe_evaluate(&d, f, rows, 3, &r), HR_OK, "%s", hr_last_error());
    cr_assert(r.sel.vendor);
    cr_assert_eq(r.sel.vs.n, 2);
    cr_assert_float_eq(r.sel.vendor_shortlist[0], 1.0, 1e-9, "the vendor's pick is the fastest of problems 1 and 2");
    cr_assert_eq(r.sel.pick[1], data_select_kernel_index(d.sel, "KA"));
    cr_assert_float_eq(r.sel.vs.geomean, sqrt(0.5), 1e-9, "KA is half as fast on problem 2");
    cr_assert_gt(r.sel.margin[1], 0, "the frequent model prefers KA");
    double margin = r.sel.margin[1];
    cJSON *o = pipe_report_object(&d, "frequent", "all", &r);
    cJSON *slices = cJSON_GetObjectItem(o, "slices");
    cJSON *tf32 = cJSON_GetObjectItem(cJSON_GetObjectItem(slices, "class"), "tf32");
    cr_assert_not_null(tf32);
    cr_assert_float_eq(cJSON_GetObjectItem(tf32, "speedup_worst")->valuedouble, 0.5, 1e-9);
    cJSON *resnet = cJSON_GetObjectItem(cJSON_GetObjectItem(slices, "source"), "resnet");
    cr_assert_eq(cJSON_GetObjectItem(resnet, "n")->valueint, 1);
    cr_assert_not_null(cJSON_GetObjectItem(cJSON_GetObjectItem(slices, "source"), "pool"));
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "guard_curve")), 2, "M = the one margin, then inf");
    cJSON_Delete(o);
    char *md = test_tmppath(".md");
    cr_assert_eq(pipe_report_md(md, &d, "frequent", "all", &r), HR_OK, "%s", hr_last_error());
    char *text;
    size_t len;
    cr_assert_eq(data_read_file(md, 1, &text, &len), HR_OK);
    cr_assert(strstr(text, "### By source") && strstr(text, "| resnet | 1 | frequent | 0.5000 |"), "%s", text);
    cr_assert(strstr(text, "### Guard of frequent"), "%s", text);
    free(text);
    pipe_result_free(&r);
    /* a margin above the model's keeps the vendor's pick; so does keeping to the vendor's first candidate */
    f->select_guard = (float)margin * 2;
    memset(&r, 0, sizeof r);
    cr_assert_eq(pipe_evaluate(&d, f, rows, 2, &r), HR_OK, "%s", hr_last_error());
    cr_assert_eq(r.sel.pick[1], data_select_kernel_index(d.sel, "KB"));
    cr_assert_float_eq(r.sel.vs.geomean, 1.0, 1e-9);
    pipe_result_free(&r);
    f->select_guard = (float)margin / 2;
    memset(&r, 0, sizeof r);
    cr_assert_eq(pipe_evaluate(&d, f, rows, 2, &r), HR_OK, "%s", hr_last_error());
    cr_assert_eq(r.sel.pick[1], data_select_kernel_index(d.sel, "KA"), "a margin below the model's");
    pipe_result_free(&r);
    f->select_guard = 0;
    f->select_guard_top = 1;
    memset(&r, 0, sizeof r);
    cr_assert_eq(pipe_evaluate(&d, f, rows, 2, &r), HR_OK, "%s", hr_last_error());
    cr_assert_eq(r.sel.pick[1], data_select_kernel_index(d.sel, "KB"));
    cr_assert_eq(r.sel.pick[0], data_select_kernel_index(d.sel, "KA"));
    pipe_result_free(&r);
    model_free(f);
    pipe_dataset_free(&d);
    remove(md);
    remove(side);
    remove(keys);
    remove(path);
    free(md);
    free(keys);
    free(path);
}

Test(pipeline, each_task_reports_its_own_metrics)
{
    pipe_dataset d;
    memset(&d, 0, sizeof d);
    d.name = "fixture.fdb.txt";
    d.task = MODEL_TASK_SELECT;
    pipe_result r;
    memset(&r, 0, sizeof r);
    r.task = MODEL_TASK_SELECT;
    r.sel.m.top1 = 0.75;
    r.sel.m.efficiency_mean = 0.5;
    r.sel.by_slice[0][0] = (pipe_slice){4, 3};
    cr_assert_eq(data_codec_conv(&d.codec), HR_OK);
    cJSON *o = pipe_report_object(&d, "gbdt", "random:0.2", &r);
    const cJSON *m = cJSON_GetObjectItem(o, "metrics");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "task")->valuestring, "select");
    cr_assert_float_eq(cJSON_GetObjectItem(m, "top1")->valuedouble, 0.75, 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItem(m, "efficiency_mean")->valuedouble, 0.5, 1e-12);
    const cJSON *dir = cJSON_GetObjectItem(m, "top1_by_direction");
    cr_assert_float_eq(cJSON_GetObjectItem(dir, data_direction_names[0])->valuedouble, 0.75, 1e-12);
    cr_assert_null(cJSON_GetObjectItem(m, "param_accuracy"));
    char line[512];
    pipe_result_format("gbdt", &r, line, sizeof line);
    cr_assert(strstr(line, "top1 0.7500") != NULL, "%s", line);
    cJSON_Delete(o);
    pipe_result_free(&r);

    d.task = MODEL_TASK_TUNE;
    memset(&r, 0, sizeof r);
    r.task = MODEL_TASK_TUNE;
    r.tune.m.param_accuracy = 0.5;
    r.tune.m.exact = 0.25;
    r.tune.decode_us = 2;
    o = pipe_report_object(&d, "seq2seq", "random:0.2", &r);
    m = cJSON_GetObjectItem(o, "metrics");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "task")->valuestring, "tune");
    cr_assert_float_eq(cJSON_GetObjectItem(m, "param_accuracy")->valuedouble, 0.5, 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItem(m, "exact")->valuedouble, 0.25, 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItem(m, "decode_us")->valuedouble, 2.0, 1e-12);
    cr_assert_null(cJSON_GetObjectItem(m, "top1"));
    pipe_result_format("seq2seq", &r, line, sizeof line);
    cr_assert(strstr(line, "param_accuracy 0.5000") != NULL, "%s", line);
    cJSON_Delete(o);
    pipe_result_free(&r);
    data_codec_free(d.codec);
    /* the curve's valid_metric is named by the task */
    cr_assert_str_eq(model_task_metric(MODEL_TASK_SELECT), "top1");
    cr_assert_str_eq(model_task_metric(MODEL_TASK_TUNE), "param_accuracy");
    cr_assert_str_eq(model_task_name(MODEL_TASK_TUNE), "tune");
    cr_assert_null(model_task_name((model_task)0));
}

/* eval on other data: kernels are matched by name; a kernel the data measures but the model does not know is
 * an error, and a pick of a kernel the data does not have counts as unmeasured (never as a hit). */
Test(pipeline, evaluation_matches_kernels_by_name)
{
    char *path;
    pipe_dataset d = load_fixture(&path);
    model *m = train_small(&d, NULL);
    hr_log log = hr_log_stderr(HR_LOG_ERROR);
    /* a one-kernel find-db with a kernel the model never saw */
    const char *other = "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KZ:1.0,0,a\n";
    char *opath = test_tmpfile(".fdb.txt", other, strlen(other));
    pipe_dataset o;
    cr_assert_eq(pipe_dataset_load(opath, "select", NULL, 1, &log, &o), HR_OK, "%s", hr_last_error());
    int row = 0;
    pipe_result r;
    memset(&r, 0, sizeof r);
    cr_assert_neq(pipe_evaluate(&o, m, &row, 1, &r), HR_OK);
    cr_assert(strstr(hr_last_error(), "'KZ'") && strstr(hr_last_error(), "does not know"), "%s", hr_last_error());
    pipe_result_free(&r);
    pipe_dataset_free(&o);
    /* the same problem measured for KC only: the model (trained on forward problems won by KA or KB) picks a
     * kernel this data lacks, so the pick is unmeasured, not a hit */
    const char *only_c = "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=KC:1.0,0,a\n";
    char *cpath = test_tmpfile(".fdb.txt", only_c, strlen(only_c));
    cr_assert_eq(pipe_dataset_load(cpath, "select", NULL, 1, &log, &o), HR_OK, "%s", hr_last_error());
    memset(&r, 0, sizeof r);
    cr_assert_eq(pipe_evaluate(&o, m, &row, 1, &r), HR_OK, "%s", hr_last_error());
    cr_assert_float_eq(r.sel.m.top1, 0.0, 1e-12);
    cr_assert_float_eq(r.sel.m.unmeasured_rate, 1.0, 1e-12);
    cr_assert_float_eq(r.sel.m.efficiency_mean, 0.0, 1e-12);
    pipe_result_free(&r);
    pipe_dataset_free(&o);
    model_free(m);
    pipe_dataset_free(&d);
    remove(path);
    remove(opath);
    remove(cpath);
    free(path);
    free(opath);
    free(cpath);
}
