/* Selection on a benchmark table through the pipeline: a pair model's evaluation scores each test problem's
 * measured configurations by their fields, and the report gains NDCG@1 and R^2, each recomputed here from the
 * model's own scores (R^2 null for a model whose scores regress no target). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "helpers/testutil.h"
#include "pipeline/pipeline.h"

static void table_generate(const char *path, int problems)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --problems %d --seed 21 --noise 0.05 --out %s", HEURIST_GEN_GEMM_TABLE, problems, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void table_remove(const char *path)
{
    char schema[1024];
    snprintf(schema, sizeof schema, "%.*s.schema.json", (int)strlen(path) - 4, path);
    remove(path);
    remove(schema);
}

/* Trains `config` of gbdt on every fifth problem held out, keeping the model. */
static model *run(const pipe_dataset *d, const char *config, pipe_result *r)
{
    int *train = malloc((size_t)d->n * sizeof *train), *test = malloc((size_t)d->n * sizeof *test);
    data_split s = {0, 0, train, test};
    for (int i = 0; i < d->n; i++) {
        if (i % 5 == 0) test[s.n_test++] = i;
        else train[s.n_train++] = i;
    }
    cJSON *cfg = cJSON_Parse(config);
    hr_log silent = hr_log_silent();
    pipe_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.log = &silent;
    o.config = cfg;
    o.keep_model = 1;
    model *m = NULL;
    cr_assert_eq(pipe_run(d, &s, model_family_find("gbdt"), &o, r, &m), HR_OK, "%s", hr_last_error());
    cJSON_Delete(cfg);
    free(train);
    free(test);
    return m;
}

Test(pipeline_table, report_has_ndcg1_and_r2_recomputed_from_the_scores, .timeout = 300)
{
    char *path = test_tmppath("_pipe_table.csv");
    table_generate(path, 150);
    hr_log silent = hr_log_silent();
    pipe_dataset d;
    cr_assert_eq(pipe_dataset_load(path, "select", NULL, 1, &silent, &d), HR_OK, "%s", hr_last_error());
    const data_table *t = d.sel->table;
    cr_assert_not_null(t);
    pipe_result r;
    memset(&r, 0, sizeof r);
    model *m = run(&d, "{\"objective\": \"rank\", \"rounds\": 40, \"log_every\": 0}", &r);
    cr_assert(r.sel.candidates);
    int K = d.sel->n_kernels, target = model_score_target(m);
    cr_assert_eq(target, MODEL_TARGET_RELATIVE);
    /* the test problems again, by hand: pick = best score among measured, NDCG@1 = 2^eff - 1, R^2 over pairs */
    model_ws *ws;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    float *s = malloc((size_t)K * sizeof *s);
    double *pred = malloc((size_t)r.n_test * K * sizeof *pred), *truth = malloc((size_t)r.n_test * K * sizeof *truth);
    double ndcg = 0, eff_sum = 0, ss_res = 0, mean = 0, ss_tot = 0;
    long n = 0;
    for (int i = 0; i < d.n; i += 5) {
        const float *rt = d.sel->runtime + (size_t)i * K;
        cr_assert_eq(model_predict_candidates(m, ws, d.X + (size_t)i * d.n_features, t->kv, K, s), HR_OK);
        int pick = -1;
        double best = INFINITY;
        for (int k = 0; k < K; k++) {
            if (!isfinite(rt[k])) continue;
            if (pick < 0 || s[k] > s[pick]) pick = k;
            if (rt[k] < best) best = rt[k];
        }
        for (int k = 0; k < K; k++) {
            if (!isfinite(rt[k])) continue;
            pred[n] = s[k];
            truth[n++] = -log(rt[k] / best);
        }
        double eff = best / rt[pick];
        eff_sum += eff;
        ndcg += pow(2.0, eff) - 1.0;
    }
    cr_assert_eq(r.n_test, (d.n + 4) / 5);
    for (long j = 0; j < n; j++) mean += truth[j] / (double)n;
    for (long j = 0; j < n; j++) {
        ss_res += (truth[j] - pred[j]) * (truth[j] - pred[j]);
        ss_tot += (truth[j] - mean) * (truth[j] - mean);
    }
    cr_assert_float_eq(r.sel.m.efficiency_mean, eff_sum / r.n_test, 1e-9);
    cr_assert_float_eq(r.sel.m.ndcg1, ndcg / r.n_test, 1e-9);
    cr_assert_float_eq(r.sel.r2, 1.0 - ss_res / ss_tot, 1e-6);
    cr_assert_gt(r.sel.r2, 0.5);
    cJSON *o = pipe_report_object(&d, "gbdt", "test", &r);
    cJSON *metrics = cJSON_GetObjectItem(o, "metrics");
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(metrics, "ndcg1")));
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(metrics, "r2")));
    cJSON_Delete(o);
    model_ws_free(ws);
    model_free(m);
    pipe_result_free(&r);

    /* a softmax model's scores regress nothing: NDCG@1 still, R^2 null */
    m = run(&d, "{\"rounds\": 5, \"log_every\": 0}", &r);
    cr_assert(r.sel.candidates);
    cr_assert(isnan(r.sel.r2));
    o = pipe_report_object(&d, "gbdt", "test", &r);
    metrics = cJSON_GetObjectItem(o, "metrics");
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(metrics, "ndcg1")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(metrics, "r2")));
    cJSON_Delete(o);
    model_free(m);
    pipe_result_free(&r);
    free(s);
    free(pred);
    free(truth);
    pipe_dataset_free(&d);
    table_remove(path);
    free(path);
}

/* A model evaluated on another table whose vocabularies differ (only the fp16 rows of its training table, so
 * "fp16" is category 0 there and 1 in the model): the data's values are read in the model's terms, and the
 * figures equal those of the same problems in the training table. */
Test(pipeline_table, another_tables_categories_are_read_by_name, .timeout = 300)
{
    char *path = test_tmppath("_pipe_table_a.csv"), *sub = test_tmppath("_pipe_table_b.csv");
    table_generate(path, 120);
    /* B: the header and the fp16 rows of A, with A's schema */
    FILE *in = fopen(path, "r"), *out = fopen(sub, "w");
    cr_assert(in && out);
    char line[512];
    for (int i = 0; fgets(line, sizeof line, in); i++)
        if (!i || strstr(line, ",fp16,")) fputs(line, out);
    fclose(in);
    fclose(out);
    char sa[1024], sb[1024], cmd[2200];
    snprintf(sa, sizeof sa, "%.*s.schema.json", (int)strlen(path) - 4, path);
    snprintf(sb, sizeof sb, "%.*s.schema.json", (int)strlen(sub) - 4, sub);
    snprintf(cmd, sizeof cmd, "cp %s %s", sa, sb);
    cr_assert_eq(system(cmd), 0);
    hr_log silent = hr_log_silent();
    pipe_dataset a, b;
    cr_assert_eq(pipe_dataset_load(path, "select", NULL, 1, &silent, &a), HR_OK, "%s", hr_last_error());
    cr_assert_eq(pipe_dataset_load(sub, "select", NULL, 1, &silent, &b), HR_OK, "%s", hr_last_error());
    cr_assert_eq(b.sel->table->spec.problem[3].n_vocab, 1);
    cr_assert_str_eq(a.sel->table->spec.problem[3].vocab[1], "fp16");
    pipe_result r;
    memset(&r, 0, sizeof r);
    model *m = run(&a, "{\"objective\": \"rank\", \"rounds\": 30, \"log_every\": 0}", &r);
    pipe_result_free(&r);
    int *rows = malloc((size_t)a.n * sizeof *rows), n = 0, np = a.sel->table->spec.n_problem;
    for (int i = 0; i < a.n; i++)
        if (a.sel->table->pv[(size_t)i * np + 3] == 1) rows[n++] = i;
    cr_assert_eq(n, b.n);
    int *all = malloc((size_t)b.n * sizeof *all);
    for (int i = 0; i < b.n; i++) all[i] = i;
    pipe_result ra, rb;
    memset(&ra, 0, sizeof ra);
    memset(&rb, 0, sizeof rb);
    cr_assert_eq(pipe_evaluate(&a, m, rows, n, &ra), HR_OK, "%s", hr_last_error());
    cr_assert_eq(pipe_evaluate(&b, m, all, b.n, &rb), HR_OK, "%s", hr_last_error());
    cr_assert_float_eq(ra.sel.m.efficiency_mean, rb.sel.m.efficiency_mean, 1e-12);
    cr_assert_float_eq(ra.sel.m.top1, rb.sel.m.top1, 1e-12);
    cr_assert_float_eq(ra.sel.m.ndcg1, rb.sel.m.ndcg1, 1e-12);
    cr_assert_float_eq(ra.sel.r2, rb.sel.r2, 1e-9);
    pipe_result_free(&ra);
    pipe_result_free(&rb);
    model_free(m);
    free(rows);
    free(all);
    pipe_dataset_free(&a);
    pipe_dataset_free(&b);
    table_remove(path);
    table_remove(sub);
    free(path);
    free(sub);
}

/* A table whose schema names a group column: --split holds out whole groups, GroupKFold folds by them and the
 * reports say so; --group-by problem brings back the per-problem splits (the in-source figure). */
Test(pipeline_table, a_group_column_drives_every_split, .timeout = 120)
{
    const char *schema = "{\"problem\":[\"M\",\"N\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"vendor\":\"rank\","
                         "\"group\":\"family\"}";
    static const char *const fam[4] = {"llm", "conv", "vit", "moe"};
    char text[8192];
    size_t at = (size_t)snprintf(text, sizeof text, "M,N,t,us,rank,family\n");
    for (int i = 0; i < 24; i++)
        for (int t = 16; t <= 32; t += 16)
            at += (size_t)snprintf(text + at, sizeof text - at, "%d,8,%d,%d,%d,%s\n", i + 1, t, t == 16 ? 2 + i % 3 : 3,
                                   t == 16 ? 1 : 0, fam[(i * 5) % 4]);
    char *path = test_tmpfile("groups.csv", text, at);
    hr_log silent = hr_log_silent();
    pipe_dataset d;
    cr_assert_eq(pipe_dataset_load_schema(path, "select", NULL, schema, 1, &silent, &d), HR_OK, "%s", hr_last_error());
    cr_assert(d.by_column);
    cr_assert_eq(d.n_groups, 4);
    cr_assert_str_eq(d.grouping, "family");
    data_split s;
    char desc[128];
    cr_assert_eq(pipe_split_random(&d, "random:0.25", 0, &s, desc, sizeof desc), HR_OK, "%s", hr_last_error());
    cr_assert_str_eq(desc, "random:0.25:seed=0");
    cr_assert_eq(s.n_test, 6, "one family of six problems");
    for (int i = 0; i < s.n_test; i++)
        for (int j = 0; j < s.n_train; j++) cr_assert_neq(d.group[s.test[i]], d.group[s.train[j]]);
    data_split_free(&s);
    /* folds: every fold a whole family, and the report names the grouping */
    pipe_result folds[5]; /* the last for the refused 5-fold run, which clears its results first */
    pipe_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.log = &silent;
    cr_assert_eq(pipe_run_folds(&d, model_family_find("frequent"), 4, &o, folds, NULL, NULL), HR_OK, "%s", hr_last_error());
    for (int f = 0; f < 4; f++) cr_assert_eq(folds[f].n_test, 6);
    cJSON *rep = pipe_report_cv(&d, "frequent", 4, 0, folds);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(rep, "groups")), "family");
    cJSON_Delete(rep);
    for (int f = 0; f < 4; f++) pipe_result_free(&folds[f]);
    /* the vendor replayed: x1 over its own pick; its first pick is 2/3 of the best where t=16 runs in 2 us (a third
     * of the problems), its list of both the best; pooled over the folds and sliced by family and by no other column */
    cr_assert_eq(pipe_run_folds(&d, model_family_find("vendor"), 4, &o, folds, NULL, NULL), HR_OK, "%s", hr_last_error());
    rep = pipe_report_cv(&d, "vendor", 4, 0, folds);
    const cJSON *pooled = cJSON_GetObjectItem(rep, "pooled");
    cr_assert_not_null(pooled);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(pooled, "n")), 24, 0);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(pooled, "speedup_geomean")), 1.0, 1e-12);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(pooled, "slower_share")), 0.0, 0);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(pooled, "efficiency_mean")), (8 * 2.0 / 3 + 16) / 24, 1e-6);
    const cJSON *sl = cJSON_GetObjectItem(pooled, "shortlist_efficiency");
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetArrayItem(sl, 0)), (8 * 2.0 / 3 + 16) / 24, 1e-6);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetArrayItem(sl, 1)), 1.0, 1e-6);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(pooled, "vendor_list_efficiency")), 1.0, 1e-6);
    const cJSON *slices = cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "slices"), "family");
    cr_assert_eq(cJSON_GetArraySize(slices), 4);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(slices, "vit"), "n")), 6, 0);
    cr_assert_float_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "metrics"), "speedup_worst")), 1.0,
                       1e-12);
    cJSON_Delete(rep);
    for (int f = 0; f < 4; f++) pipe_result_free(&folds[f]);
    cr_assert_eq(pipe_run_folds(&d, model_family_find("frequent"), 5, &o, folds, NULL, NULL), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "only 4 groups (by family)"), "%s", hr_last_error());
    /* in-source: each problem its own group, the random split by rows */
    cr_assert_eq(pipe_dataset_group_by(&d, "family"), HR_OK);
    cr_assert(d.by_column);
    cr_assert_eq(pipe_dataset_group_by(&d, "problem"), HR_OK);
    cr_assert_not(d.by_column);
    cr_assert_eq(d.n_groups, 24);
    cr_assert_str_eq(d.grouping, "problem columns");
    cr_assert_eq(pipe_split_random(&d, "random:0.25", 0, &s, desc, sizeof desc), HR_OK);
    cr_assert_eq(s.n_test, 6);
    int families = 0, seen[4] = {0};
    for (int i = 0; i < s.n_test; i++) families += !seen[d.sel->table->group[s.test[i]]]++;
    cr_assert_gt(families, 1, "a random split of rows drew one family only");
    data_split_free(&s);
    cr_assert_eq(pipe_dataset_group_by(&d, "model"), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "expected problem or family"), "%s", hr_last_error());
    cr_assert_eq(pipe_dataset_group_by(&d, "family"), HR_OK);
    cr_assert(d.by_column);
    cr_assert_eq(d.n_groups, 4);
    pipe_dataset_free(&d);
    remove(path);
    free(path);
}
