/* --task tune on a benchmark table: the target sequences, the capability rules (each one refuses the configuration
 * that breaks it, and every measured configuration passes), malformed capability files, the efficiency figures,
 * and seq2seq / gbdt / vendor trained and evaluated through the pipeline in both decode spaces. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "eval/eval.h"
#include "helpers/gemm_caps_fixture.h"
#include "helpers/testutil.h"
#include "pipeline/pipeline.h"

static pipe_dataset load(const char *csv)
{
    pipe_dataset d;
    cr_assert_eq(pipe_dataset_load_caps(csv, "tune", NULL, NULL, NULL, 1, NULL, &d), HR_OK, "%s", hr_last_error());
    cr_assert_not_null(d.tune);
    cr_assert_not_null(d.tune->sel);
    cr_assert_not_null(d.tune->constraint, "the caps sidecar is read");
    return d;
}

static int kcol(const data_table_spec *s, const char *name)
{
    for (int j = 0; j < s->n_kernel; j++)
        if (!strcmp(s->kernel[j].name, name)) return j;
    cr_assert_fail("no column %s", name);
    return -1;
}

/* the sequence value of a field: a number, or for a categorical field the index of its category string */
static int32_t val(const data_table_spec *s, const char *name, const char *v)
{
    const data_table_column *c = &s->kernel[kcol(s, name)];
    if (!c->categorical) return (int32_t)atoi(v);
    for (int i = 0; i < c->n_vocab; i++)
        if (!strcmp(c->vocab[i], v)) return i;
    cr_assert_fail("no category %s of %s", v, name);
    return -1;
}

static double num(const data_table_spec *s, const char *name, int32_t v)
{
    const data_table_column *c = &s->kernel[kcol(s, name)];
    return c->categorical ? atof(c->vocab[v]) : v;
}

Test(table_tune, target_is_the_fastest_measured_configuration)
{
    char *csv = gemm_caps_fixture_write(40, 1);
    pipe_dataset d = load(csv);
    const data_tune *t = d.tune;
    const data_select *s = t->sel;
    const data_table_spec *spec = &s->table->spec;
    cr_assert_eq(t->n, 40);
    cr_assert_eq(t->length, spec->n_kernel);
    cr_assert_eq(d.task, MODEL_TASK_TUNE);
    cr_assert_eq(d.n_features, data_table_problem_feature_count(spec));
    for (int i = 0; i < t->n; i++) {
        /* the slowest-first scan of the runtimes agrees with the stored target */
        int best = -1;
        for (int k = 0; k < s->n_kernels; k++) {
            float x = s->runtime[(size_t)i * s->n_kernels + k];
            if (isfinite(x) && (best < 0 || x < s->runtime[(size_t)i * s->n_kernels + best])) best = k;
        }
        cr_assert_eq(t->best[i], best, "problem %d", i);
        for (int j = 0; j < t->length; j++)
            cr_assert_eq((double)t->values[(size_t)i * t->length + j], s->table->kv[(size_t)best * spec->n_kernel + j]);
        /* the candidates are the measured configurations, the target among them */
        int n = t->cand_off[i + 1] - t->cand_off[i], found = 0;
        int measured = 0;
        for (int k = 0; k < s->n_kernels; k++) measured += isfinite(s->runtime[(size_t)i * s->n_kernels + k]) != 0;
        cr_assert_eq(n, measured);
        for (int c = t->cand_off[i]; c < t->cand_off[i + 1]; c++)
            found |= !memcmp(t->cand + (size_t)c * t->length, t->values + (size_t)i * t->length, (size_t)t->length * 4);
        cr_assert(found, "problem %d: its target is no candidate", i);
    }
    pipe_dataset_free(&d);
    free(csv);
}

Test(table_tune, rules_accept_measured_and_refuse_each_violation)
{
    char *csv = gemm_caps_fixture_write(60, 2);
    pipe_dataset d = load(csv);
    const data_tune *t = d.tune;
    const data_table_spec *spec = &t->sel->table->spec;
    const data_constraint *con = t->constraint;
    const int L = t->length;
    for (int i = 0; i < t->n; i++) {
        data_tune_problem q = data_tune_problem_of(t, d.V, i, 0);
        for (int c = t->cand_off[i]; c < t->cand_off[i + 1]; c++)
            for (int len = 0; len <= L; len++)
                cr_assert(data_constraint_check(con, &q, t->cand + (size_t)c * L, len), "problem %d candidate %d len %d", i,
                          c, len);
    }
    /* a bf16 problem with K >= 128 measuring an algo 21 configuration without split-K, and an fp32 one */
    int p16 = -1, p32 = -1, np = spec->n_problem + spec->n_hardware;
    int jd = -1, jk = -1;
    for (int j = 0; j < np; j++) {
        if (!strcmp(spec->problem[j].name, "dtype")) jd = j;
        if (!strcmp(spec->problem[j].name, "K")) jk = j;
    }
    for (int i = 0; i < t->n; i++) {
        const double *pv = t->sel->table->pv + (size_t)i * np;
        const char *dt = spec->problem[jd].vocab[(int)pv[jd]];
        if (p16 < 0 && !strcmp(dt, "bf16") && pv[jk] >= 128 && pv[jk] < 256) p16 = i;
        if (p32 < 0 && !strcmp(dt, "fp32")) p32 = i;
    }
    cr_assert(p16 >= 0 && p32 >= 0);
    int32_t base[64];
    int a = kcol(spec, "algo_id");
    const char *fields[] = {"algo_id", "tile_m", "tile_n", "stage_k", "stages", "split_k", "reduction_scheme", "swizzle",
                            "custom_option", "cluster_m", "cluster_n", "inner_shape"};
    const char *good21[] = {"21", "128", "64", "32", "3", "1", "0", "0", "1", "1", "1", "1"};
    for (int j = 0; j < 12; j++) base[kcol(spec, fields[j])] = val(spec, fields[j], good21[j]);
    data_tune_problem q16 = data_tune_problem_of(t, d.V, p16, 0), q32 = data_tune_problem_of(t, d.V, p32, 0);
    cr_assert(data_constraint_check(con, &q16, base, L), "the base configuration is valid");
    /* one field changed at a time: each breaks exactly one rule */
    static const struct {
        const char *field, *value;
    } bad[] = {
        {"tile_n", "128"},          /* (128, 128) is not among algo 21's tiles */
        {"stages", "5"},            /* (32, 5) is not among its stages */
        {"reduction_scheme", "2"},  /* a reduction without split-K */
        {"swizzle", "1"},           /* algo 21 does not swizzle */
        {"custom_option", "2"},     /* above its custom_option_max */
        {"cluster_m", "4"},         /* (4, 1) was not tried */
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        int32_t v[64];
        memcpy(v, base, sizeof v);
        int j = kcol(spec, bad[b].field);
        v[j] = spec->kernel[j].categorical ? val(spec, bad[b].field, bad[b].value) : atoi(bad[b].value);
        cr_assert_not(data_constraint_check(con, &q16, v, L), "%s = %s accepted", bad[b].field, bad[b].value);
        cr_assert_not(data_constraint_check(con, &q16, v, j + 1), "%s = %s accepted as a prefix", bad[b].field, bad[b].value);
        cr_assert(data_constraint_check(con, &q16, v, j), "the prefix before %s is refused", bad[b].field);
    }
    /* split-K 2 with reduction 4: outside algo 21's mask (2); with reduction 2 fine while K / 2 >= 32 */
    int32_t v[64];
    memcpy(v, base, sizeof v);
    v[kcol(spec, "split_k")] = 2;
    v[kcol(spec, "reduction_scheme")] = val(spec, "reduction_scheme", "2");
    cr_assert(data_constraint_check(con, &q16, v, L));
    v[kcol(spec, "reduction_scheme")] = val(spec, "reduction_scheme", "4");
    cr_assert_not(data_constraint_check(con, &q16, v, L), "reduction outside the mask accepted");
    /* split-K 8 leaves K / 8 < 32 for K < 256 */
    v[kcol(spec, "reduction_scheme")] = val(spec, "reduction_scheme", "2");
    v[kcol(spec, "split_k")] = 8;
    cr_assert_not(data_constraint_check(con, &q16, v, L), "K / split_k < 32 accepted");
    /* algo 11: no split-K at all */
    const char *good11[] = {"11", "0", "0", "0", "0", "1", "0", "0", "1", "0", "0", "0"};
    for (int j = 0; j < 12; j++) v[kcol(spec, fields[j])] = val(spec, fields[j], good11[j]);
    cr_assert(data_constraint_check(con, &q16, v, L));
    v[kcol(spec, "split_k")] = 2;
    v[kcol(spec, "reduction_scheme")] = val(spec, "reduction_scheme", "2");
    cr_assert_not(data_constraint_check(con, &q16, v, L), "split-K on an algo without support accepted");
    /* algo 11 is listed for bf16 only */
    for (int j = 0; j < 12; j++) v[kcol(spec, fields[j])] = val(spec, fields[j], good11[j]);
    cr_assert_not(data_constraint_check(con, &q32, v, 1), "an algo the dtype does not list accepted");
    /* algo 5: tiles are the table's (128x128 and undefined), inner shape 1 was never measured for it */
    const char *good5[] = {"5", "128", "128", "0", "0", "1", "0", "1", "0", "2", "1", "0"};
    for (int j = 0; j < 12; j++) v[kcol(spec, fields[j])] = val(spec, fields[j], good5[j]);
    cr_assert(data_constraint_check(con, &q16, v, L));
    v[kcol(spec, "tile_m")] = 64;
    v[kcol(spec, "tile_n")] = 64;
    cr_assert_not(data_constraint_check(con, &q16, v, L), "a tile the table never measured for algo 5 accepted");
    v[kcol(spec, "tile_m")] = v[kcol(spec, "tile_n")] = 128;
    v[kcol(spec, "inner_shape")] = val(spec, "inner_shape", "1");
    cr_assert_not(data_constraint_check(con, &q16, v, L), "an inner shape never measured for algo 5 accepted");
    cr_assert(num(spec, "algo_id", v[a]) == 5);
    pipe_dataset_free(&d);
    free(csv);
}

/* a capability file with one field broken: the error names it */
static void caps_refused(const char *from, const char *to, const char *field)
{
    char *csv = gemm_caps_fixture_write(12, 3);
    const char *at = strstr(gemm_caps_fixture_caps, from);
    cr_assert_not_null(at, "%s", from);
    size_t n = strlen(gemm_caps_fixture_caps), nf = strlen(from), nt = strlen(to);
    char *json = malloc(n + nt + 1);
    size_t pre = (size_t)(at - gemm_caps_fixture_caps);
    memcpy(json, gemm_caps_fixture_caps, pre);
    memcpy(json + pre, to, nt);
    strcpy(json + pre + nt, at + nf);
    char *caps = test_tmpfile("caps.json", json, strlen(json));
    pipe_dataset d;
    int rc = pipe_dataset_load_caps(csv, "tune", NULL, NULL, caps, 1, NULL, &d);
    cr_assert_neq(rc, HR_OK, "%s accepted", to);
    cr_assert(strstr(hr_last_error(), field), "'%s' does not name %s", hr_last_error(), field);
    cr_assert(strstr(hr_last_error(), caps), "'%s' does not name the file", hr_last_error());
    cr_assert_null(strchr(hr_last_error(), '\n'), "one line");
    free(json);
    free(caps);
    free(csv);
}

Test(table_tune, malformed_capability_files_name_the_field)
{
    caps_refused("heurist-collect gemm capabilities", "heurist-collect conv capabilities", "format");
    caps_refused("\"version\": 1", "\"version\": 9", "version");
    caps_refused("[[64, 64], [128, 64]", "[[64], [128, 64]", "types[0].algos[2].tiles[0]");
    caps_refused("\"splitk_support\": 0,", "\"splitk_support\": \"no\",", "types[0].algos[1].splitk_support");
    caps_refused("\"cluster_shapes_tried\": [[0, 0]", "\"cluster_shapes_tried\": [[0, 0.5]", "cluster_shapes_tried[0]");
    caps_refused("\"dtype\": \"fp32\"", "\"dtype\": 32", "types[1].dtype");
    /* an algo the table measures and the file does not list */
    caps_refused("{\"algo_id\": 11, \"tiles\": [], \"stages\": [], \"splitk_support\": 0", "{\"algo_id\": 12, \"tiles\": [], \"stages\": [], \"splitk_support\": 0",
                 "algo_id");
    /* --caps needs the tune task */
    char *csv = gemm_caps_fixture_write(12, 3);
    pipe_dataset d;
    cr_assert_neq(pipe_dataset_load_caps(csv, "select", NULL, NULL, csv, 1, NULL, &d), HR_OK);
    cr_assert(strstr(hr_last_error(), "--caps"), "%s", hr_last_error());
    free(csv);
}

Test(table_tune, rules_round_trip_through_their_json)
{
    char *csv = gemm_caps_fixture_write(30, 4);
    pipe_dataset d = load(csv);
    const data_tune *t = d.tune;
    char *json = data_table_rules_to_json(t->rules);
    cr_assert_not_null(json);
    data_table_rules *r2 = NULL;
    cr_assert_eq(data_table_rules_parse(json, "copy", &t->sel->table->spec, NULL, &r2), HR_OK, "%s", hr_last_error());
    char *json2 = data_table_rules_to_json(r2);
    cr_assert_str_eq(json, json2);
    /* the same answers on every measured configuration and on every one-field change of it */
    const int L = t->length;
    for (int i = 0; i < t->n; i++) {
        const data_table_spec *sp = &t->sel->table->spec;
        const double *pv = t->sel->table->pv + (size_t)i * (sp->n_problem + sp->n_hardware);
        for (int c = t->cand_off[i]; c < t->cand_off[i + 1]; c++) {
            int32_t v[64];
            memcpy(v, t->cand + (size_t)c * L, (size_t)L * sizeof *v);
            for (int j = 0; j < L; j++) {
                int32_t keep = v[j];
                v[j] = keep + 1;
                cr_assert_eq(data_table_rules_valid(t->rules, pv, v, L), data_table_rules_valid(r2, pv, v, L));
                v[j] = keep;
            }
        }
    }
    free(json);
    free(json2);
    data_table_rules_free(r2);
    pipe_dataset_free(&d);
    free(csv);
}

Test(table_tune, efficiency_of_a_hand_made_case)
{
    /* best times 10, 10, 4, 8; predictions at 20 (0.5), 10 (1.0), unmeasured (0), and 8 but invalid (0) */
    const double best[4] = {10, 10, 4, 8}, pred[4] = {20, 10, INFINITY, 8};
    const unsigned char valid[4] = {1, 1, 1, 0};
    eval_tune_metrics m;
    memset(&m, 0, sizeof m);
    double e[4];
    eval_tune_efficiency(best, pred, valid, 4, &m, e);
    cr_assert_float_eq(e[0], 0.5, 1e-12);
    cr_assert_float_eq(e[1], 1.0, 1e-12);
    cr_assert_float_eq(e[2], 0.0, 1e-12);
    cr_assert_float_eq(e[3], 0.0, 1e-12);
    cr_assert_float_eq(m.efficiency_mean, 0.375, 1e-12);
    cr_assert_float_eq(m.measured, 0.75, 1e-12);
    /* p10 of {0, 0, 0.5, 1} by linear interpolation: 0 */
    cr_assert_float_eq(m.efficiency_p10, 0.0, 1e-12);
    const double best2[2] = {1, 1}, pred2[2] = {2, 1};
    eval_tune_efficiency(best2, pred2, NULL, 2, &m, NULL);
    cr_assert_float_eq(m.efficiency_mean, 0.75, 1e-12);
    cr_assert_float_eq(m.efficiency_p10, 0.55, 1e-12); /* 0.5 + 0.1 * (1 - 0.5) */
}

/* Trains `family` with config on a seeded split of the fixture and evaluates it; returns the result. */
static pipe_result run(const pipe_dataset *d, const char *family, const char *config, model **out)
{
    data_split split;
    char desc[64];
    cr_assert_eq(pipe_split_random(d, "random:0.25", 0, &split, desc, sizeof desc), HR_OK);
    cJSON *cfg = config ? cJSON_Parse(config) : NULL;
    pipe_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.threads = 1;
    o.config = cfg;
    o.keep_model = out != NULL;
    pipe_result r;
    cr_assert_eq(pipe_run(d, &split, model_family_find(family), &o, &r, out), HR_OK, "%s: %s", family, hr_last_error());
    cJSON_Delete(cfg);
    data_split_free(&split);
    return r;
}

Test(table_tune, seq2seq_decodes_valid_and_measured_configurations, .timeout = 120)
{
    char *csv = gemm_caps_fixture_write(80, 5);
    pipe_dataset d = load(csv);
    /* caps space: every prediction within the rules, though not necessarily measured */
    pipe_result caps = run(&d, "seq2seq", "{\"epochs\":3,\"space\":\"caps\",\"embed\":8,\"hidden\":16,\"attn\":16,"
                           "\"conv_channels\":8}", NULL);
    cr_assert(caps.tune.measured);
    cr_assert_float_eq(caps.tune.m.valid, 1.0, 1e-12);
    cr_assert(caps.tune.m.measured >= 0 && caps.tune.m.measured <= 1);
    /* measured space: every prediction is one of the problem's measured configurations */
    model *m = NULL;
    pipe_result meas = run(&d, "seq2seq", "{\"epochs\":3,\"space\":\"measured\",\"embed\":8,\"hidden\":16,\"attn\":16,"
                           "\"conv_channels\":8}", &m);
    cr_assert_float_eq(meas.tune.m.valid, 1.0, 1e-12);
    cr_assert_float_eq(meas.tune.m.measured, 1.0, 1e-12);
    cr_assert(meas.tune.m.efficiency_mean > 0 && meas.tune.m.efficiency_mean <= 1.0);
    cr_assert(meas.tune.m.efficiency_p10 <= meas.tune.m.efficiency_mean);
    /* and problem by problem, through the model's own call */
    const data_tune *t = d.tune;
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    for (int i = 0; i < t->n; i++) {
        data_tune_problem q = data_tune_problem_of(t, d.V, i, 1);
        int32_t v[64];
        cr_assert_eq(model_predict_tune_x(m, ws, &q, d.X + (size_t)i * d.n_features, v), HR_OK);
        int found = 0;
        for (int c = 0; c < q.n_cand; c++) found |= !memcmp(q.cand + (size_t)c * t->length, v, (size_t)t->length * 4);
        cr_assert(found, "problem %d: an unmeasured configuration", i);
    }
    model_ws_free(ws);
    /* the model file keeps its schema, rules and space: the loaded model answers alike */
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK);
    model *m2 = NULL;
    cr_assert_eq(model_load(path, &m2), HR_OK, "%s", hr_last_error());
    cr_assert_not_null(m2->constraint);
    pipe_result again;
    memset(&again, 0, sizeof again);
    data_split split;
    char desc[64];
    cr_assert_eq(pipe_split_random(&d, "random:0.25", 0, &split, desc, sizeof desc), HR_OK);
    cr_assert_eq(pipe_evaluate(&d, m2, split.test, split.n_test, &again), HR_OK, "%s", hr_last_error());
    cr_assert_float_eq(again.tune.m.efficiency_mean, meas.tune.m.efficiency_mean, 1e-12);
    cr_assert_float_eq(again.tune.m.param_accuracy, meas.tune.m.param_accuracy, 1e-12);
    data_split_free(&split);
    remove(path);
    free(path);
    model_free(m);
    model_free(m2);
    pipe_result_free(&caps);
    pipe_result_free(&meas);
    pipe_result_free(&again);
    pipe_dataset_free(&d);
    free(csv);
}

Test(table_tune, gbdt_and_vendor_baselines, .timeout = 60)
{
    char *csv = gemm_caps_fixture_write(60, 6);
    pipe_dataset d = load(csv);
    pipe_result g = run(&d, "gbdt", "{\"rounds\":5}", NULL);
    cr_assert(g.tune.measured);
    cr_assert(g.tune.m.valid >= 0 && g.tune.m.valid <= 1);
    cr_assert(g.tune.m.efficiency_mean <= g.tune.m.measured + 1e-12, "efficiency counts only measured picks");
    /* the vendor replays its first pick: always measured and valid, and its efficiency is the table's own */
    pipe_result v = run(&d, "vendor", NULL, NULL);
    cr_assert_float_eq(v.tune.m.valid, 1.0, 1e-12);
    cr_assert_float_eq(v.tune.m.measured, 1.0, 1e-12);
    data_split split;
    char desc[64];
    cr_assert_eq(pipe_split_random(&d, "random:0.25", 0, &split, desc, sizeof desc), HR_OK);
    const data_tune *t = d.tune;
    const data_select *s = t->sel;
    double sum = 0;
    for (int i = 0; i < split.n_test; i++) {
        int r = split.test[i], pick = -1;
        for (int k = 0; k < s->n_kernels; k++)
            if (s->vendor_rank[(size_t)r * s->n_kernels + k] == 0) pick = k;
        cr_assert(pick >= 0);
        sum += (double)s->runtime[(size_t)r * s->n_kernels + t->best[r]] / s->runtime[(size_t)r * s->n_kernels + pick];
    }
    cr_assert_float_eq(v.tune.m.efficiency_mean, sum / split.n_test, 1e-9);
    data_split_free(&split);
    pipe_result_free(&g);
    pipe_result_free(&v);
    pipe_dataset_free(&d);
    free(csv);
}
