/* The generated-table fixture of the table model tests (table_fixture.h). */
#include "helpers/table_fixture.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/testutil.h"

table_fixture table_fixture_make(int problems, int seed, double noise)
{
    char *path = test_tmppath("_table.csv"), cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --problems %d --seed %d --noise %g --out %s", HEURIST_GEN_GEMM_TABLE, problems, seed,
             noise, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    data_table_opts o = {0};
    o.threads = 1;
    data_select *sel = NULL;
    cr_assert_eq(data_table_load(path, &o, &sel), HR_OK, "%s", hr_last_error());
    table_fixture f = table_fixture_from_select(sel);
    f.path = path;
    return f;
}

table_fixture table_fixture_from_select(data_select *sel)
{
    table_fixture f = {0};
    f.sel = sel;
    cr_assert_not_null(f.sel->table);
    const data_table *t = f.sel->table;
    int n = f.sel->n, np = t->spec.n_problem + t->spec.n_hardware;
    f.F = data_table_problem_feature_count(&t->spec);
    f.X = malloc((size_t)n * (size_t)f.F * sizeof *f.X);
    f.train = malloc((size_t)n * sizeof *f.train);
    f.valid = malloc((size_t)n * sizeof *f.valid);
    f.test = malloc((size_t)n * sizeof *f.test);
    cr_assert(f.X && f.train && f.valid && f.test);
    for (int i = 0; i < n; i++) {
        data_table_problem_features(&t->spec, t->pv + (size_t)i * np, f.X + (size_t)i * f.F);
        if (i % 5 == 0) f.test[f.n_test++] = i;
        else if (i % 10 == 1) f.valid[f.n_valid++] = i;
        else f.train[f.n_train++] = i;
    }
    return f;
}

void table_fixture_free(table_fixture *f)
{
    if (f->path) {
        char schema[1024];
        snprintf(schema, sizeof schema, "%.*s.schema.json", (int)strlen(f->path) - 4, f->path);
        remove(f->path);
        remove(schema);
        free(f->path);
    }
    data_select_free(f->sel);
    free(f->X);
    free(f->train);
    free(f->valid);
    free(f->test);
}

model *table_fixture_train(const table_fixture *f, const char *family, const char *config)
{
    const model_family *fam = model_family_find(family);
    cr_assert_not_null(fam);
    cJSON *cfg = cJSON_Parse(config);
    cr_assert_not_null(cfg, "%s", config);
    hr_log silent = hr_log_silent();
    model_train_data d;
    cr_assert_eq(model_train_data_select(f->sel, &d), HR_OK, "%s", hr_last_error());
    d.train = f->train, d.n_train = f->n_train, d.valid = f->valid, d.n_valid = f->n_valid;
    model_ctx ctx = {.seed = 1, .threads = 1, .log = &silent, .config = cfg};
    model *m = NULL;
    cr_assert_eq(model_train(fam, &d, &ctx, &m), HR_OK, "%s", hr_last_error());
    model_train_data_free(&d);
    cJSON_Delete(cfg);
    return m;
}

float *table_fixture_test_scores(const table_fixture *f, const model *m)
{
    const data_table *t = f->sel->table;
    int K = f->sel->n_kernels;
    float *s = malloc((size_t)f->n_test * (size_t)K * sizeof *s), *one = malloc((size_t)K * sizeof *one);
    cr_assert(s && one);
    model_ws *ws;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK, "%s", hr_last_error());
    for (int i = 0; i < f->n_test; i++) {
        int r = f->test[i];
        cr_assert_eq(model_predict_candidates(m, ws, f->X + (size_t)r * f->F, t->kv, K, one), HR_OK, "%s",
                     hr_last_error());
        for (int k = 0; k < K; k++)
            s[(size_t)i * K + k] = isfinite(f->sel->runtime[(size_t)r * K + k]) ? one[k] : -INFINITY;
    }
    model_ws_free(ws);
    free(one);
    return s;
}
