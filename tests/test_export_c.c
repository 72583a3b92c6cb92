/* Exported C runtimes: compiled with cc, they must agree with heurist's own predictions on held-out
 * problems (same choice, scores within 1e-5). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/data.h"
#include "helpers/exported_runtime.h"
#include "helpers/testutil.h"
#include "models/model.h"
#include "export/export.h"
#include "models/models_internal.h"
#include "models/seq2seq_internal.h"
#include "models/transformer_internal.h"

static const char *driver_select =
    "#include <stdio.h>\n#include <string.h>\n#include \"hm.h\"\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"w\");\n"
    "  char line[4096]; float s[4096];\n"
    "  if (!in || !out) return 1;\n"
    "  while (fgets(line, sizeof line, in)) {\n"
    "    line[strcspn(line, \"\\n\")] = 0;\n"
    "    int k = hm_select_key(line, s), k0 = hm_select_key(line, 0);\n"
    "    fprintf(out, \"%d %d\", k, k0);\n"
    "    for (int j = 0; k >= 0 && j < hm_n_kernels(); j++) fprintf(out, \" %.9g\", s[j]);\n"
    "    fprintf(out, \"\\n\");\n  }\n  fclose(out);\n  return 0;\n}\n";

static const char *driver_tune =
    "#include <stdio.h>\n#include <string.h>\n#include \"hm.h\"\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"w\");\n"
    "  char line[4096]; int v[64];\n"
    "  if (!in || !out) return 1;\n"
    "  while (fgets(line, sizeof line, in)) {\n"
    "    line[strcspn(line, \"\\n\")] = 0;\n"
    "    if (hm_tune_key(line, v)) { fprintf(out, \"ERR\\n\"); continue; }\n"
    "    for (int j = 0; j < hm_length(); j++) fprintf(out, \"%s%d\", j ? \" \" : \"\", v[j]);\n"
    "    fprintf(out, \"\\n\");\n  }\n  fclose(out);\n  return 0;\n}\n";

/* Exports m, compiles it with a driver (cc -std=c11 -Wall -Werror and `cflags`), runs it over keys;
 * returns the output file path. */
static char *export_and_run(const model *m, const char *driver, char **keys, int n, const char *cflags)
{
    char *dir = test_tmppath("_export");
    test_runtime_build(m, dir, driver, cflags);
    char path[1024];
    snprintf(path, sizeof path, "%s/keys.txt", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < n; i++) fprintf(f, "%s\n", keys[i]);
    fclose(f);
    /* the caller reads the output, then removes the whole folder (remove_export) */
    fclose(test_runtime_run(dir, "keys.txt"));
    char *out = malloc(1100);
    snprintf(out, 1100, "%s/out.txt", dir);
    free(dir);
    return out;
}

static void remove_export(const char *out_txt)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf \"$(dirname '%s')\"", out_txt);
    cr_assert_eq(system(cmd), 0);
}

static model *train_gbdt(const model_train_data *d, const char *cfg_text)
{
    cJSON *cfg = cJSON_Parse(cfg_text);
    hr_log silent = hr_log_silent();
    model_ctx ctx = {7, 2, &silent, cfg, NULL, 0, NULL, NULL, NULL, NULL};
    model *m;
    const model_family *fam = model_family_find("gbdt");
    cr_assert_not_null(fam);
    cr_assert_eq(model_train(fam, d, &ctx, &m), HR_OK, "%s", hr_last_error());
    cJSON_Delete(cfg);
    return m;
}

Test(export_c, gbdt_tune_agrees_on_held_out_problems, .timeout = 300)
{
    hr_h5_quiet();
    data_tune *dt;
    cr_assert_eq(data_perfdb_load(test_miopen("gfx906_60.db.bz2"), "ConvAsm1x1U", NULL, &dt), HR_OK);
    int F = data_features_count();
    float *X = malloc((size_t)dt->n * F * sizeof *X);
    data_features_compute_all(dt->problems, dt->n, X);
    data_split s;
    cr_assert_eq(data_split_random(dt->n, 0.2, 3, &s), HR_OK);
    int n_fit = s.n_train < 4000 ? s.n_train : 4000;
    model_train_data d;
    cr_assert_eq(model_train_data_tune(dt, &d), HR_OK);
    d.train = s.train, d.n_train = n_fit;
    model *m = train_gbdt(&d, "{\"rounds\": 8, \"num_leaves\": 15, \"log_every\": 0}");
    int n = 1000;
    char **keys = malloc((size_t)n * sizeof *keys);
    for (int i = 0; i < n; i++) {
        keys[i] = malloc(256);
        data_key_format(&dt->problems[s.test[i]], keys[i], 256);
    }
    char *out = export_and_run(m, driver_tune, keys, n, "-O1");
    FILE *f = fopen(out, "r");
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    for (int i = 0; i < n; i++) {
        int32_t want[8];
        double pv[DATA_CODEC_MAX_VALUES];
        /* through the key, as the runtime sees it */
        cr_assert_eq(model_problem_parse(m, keys[i], pv), HR_OK, "%s", keys[i]);
        data_tune_problem q = {pv, NULL, 0, m->length, NULL};
        cr_assert_eq(model_predict_tune(m, ws, &q, want), HR_OK);
        for (int j = 0; j < 8; j++) {
            int got;
            cr_assert_eq(fscanf(f, "%d", &got), 1, "problem %d", i);
            cr_assert_eq(got, want[j], "problem %d (%s) parameter %d", i, keys[i], j);
        }
        free(keys[i]);
    }
    fclose(f);
    remove_export(out);
    free(out);
    free(keys);
    model_ws_free(ws);
    model_free(m);
    data_split_free(&s);
    free(X);
    model_train_data_free(&d);
    data_tune_free(dt);
}

/* The first 12,000 lines of the MI100 find-db keep these tests quick (decompressing the whole 57 MB file
 * would take longer than the rest of most of them). */
static data_select *mi100_head(void)
{
    size_t len;
    char *text = test_bz2_lines(test_miopen("gfx90878.HIP.fdb.txt.bz2"), 12000, &len);
    cr_assert_not_null(text);
    cr_assert_eq(test_lines_count(text), 12000);
    data_select *ds;
    cr_assert_eq(data_fdb_parse("head", text, len, NULL, &ds), HR_OK, "%s", hr_last_error());
    free(text);
    return ds;
}

/* Trains `family` with each config of `cfgs` (NULL-terminated) on the head of the find-db (its first
 * max_fit training rows when max_fit > 0), exports it, and checks that the runtime compiled with each of
 * `cflags` (NULL-terminated; NULL: just -O1) makes the same choice as heurist, with scores within 1e-5, on
 * 1,000 held-out problems, and the same choice again when asked for no scores (a family may take a
 * shorter path then). */
static void check_select_exports(const char *family, const char *const *cfgs, int max_fit,
                                 const char *const *cflags)
{
    hr_h5_quiet();
    data_select *ds = mi100_head();
    int F = data_features_count();
    float *X = malloc((size_t)ds->n * F * sizeof *X);
    data_features_compute_all(ds->problems, ds->n, X);
    data_split s;
    cr_assert_eq(data_split_random(ds->n, 0.2, 3, &s), HR_OK);
    int n_fit = max_fit > 0 && max_fit < s.n_train ? max_fit : s.n_train;
    model_train_data d;
    cr_assert_eq(model_train_data_select(ds, &d), HR_OK);
    d.train = s.train, d.n_train = n_fit;
    int n = s.n_test < 1000 ? s.n_test : 1000;
    cr_assert_geq(n, 1000);
    char **sel = malloc((size_t)n * sizeof *sel);
    for (int i = 0; i < n; i++) sel[i] = ds->keys[s.test[i]];
    for (int c = 0; cfgs[c]; c++) {
        cJSON *cfg = cJSON_Parse(cfgs[c]);
        hr_log silent = hr_log_silent();
        model_ctx ctx = {7, 2, &silent, cfg, NULL, 0, NULL, NULL, NULL, NULL};
        model *m;
        cr_assert_eq(model_train(model_family_find(family), &d, &ctx, &m), HR_OK, "%s", hr_last_error());
        cJSON_Delete(cfg);
        static const char *const just_o1[] = {"-O1", NULL};
        const char *const *flags = cflags ? cflags : just_o1;
        float *want = malloc((size_t)m->n_kernels * sizeof *want);
        model_ws *ws = NULL;
        cr_assert_eq(model_ws_create(m, &ws), HR_OK);
        for (int fl = 0; flags[fl]; fl++) {
            char *out = export_and_run(m, driver_select, sel, n, flags[fl]);
            FILE *f = fopen(out, "r");
            for (int i = 0; i < n; i++) {
                cr_assert_eq(model_predict_select(m, ws, d.V + (size_t)s.test[i] * data_codec_value_count(d.codec), want),
                             HR_OK);
                int best = 0;
                for (int k = 1; k < m->n_kernels; k++)
                    if (want[k] > want[best]) best = k;
                int got, got_no_scores;
                cr_assert_eq(fscanf(f, "%d %d", &got, &got_no_scores), 2);
                cr_assert_eq(got, best, "%s %s (%s): problem %d (%s)", family, cfgs[c], flags[fl], i, sel[i]);
                cr_assert_eq(got_no_scores, best, "%s %s (%s), no scores: problem %d (%s)", family, cfgs[c], flags[fl],
                             i, sel[i]);
                for (int k = 0; k < m->n_kernels; k++) {
                    float v;
                    cr_assert_eq(fscanf(f, "%g", &v), 1);
                    cr_assert(fabsf(v - want[k]) <= 1e-5f * (1 + fabsf(want[k])),
                              "%s %s (%s): problem %d kernel %d: %g vs %g", family, cfgs[c], flags[fl], i, k, v, want[k]);
                }
            }
            fclose(f);
            remove_export(out);
            free(out);
        }
        free(want);
        model_ws_free(ws);
        model_free(m);
    }
    free(sel);
    data_split_free(&s);
    free(X);
    model_train_data_free(&d);
    data_select_free(ds);
}

static void check_select_export(const char *family, const char *cfg_text)
{
    const char *const cfgs[] = {cfg_text, NULL};
    check_select_exports(family, cfgs, 0, NULL);
}

Test(export_c, gbdt_select_agrees_on_held_out_problems, .timeout = 300)
{
    check_select_export("gbdt", "{\"rounds\": 5, \"num_leaves\": 15, \"log_every\": 0}");
}

Test(export_c, gbdt_rank_select_agrees_on_held_out_problems, .timeout = 300)
{
    check_select_export("gbdt", "{\"objective\": \"rank\", \"rounds\": 5, \"num_leaves\": 15, \"log_every\": 0}");
}

/* The reformer runtime has vector paths (FMA, AVX-512) chosen at compile time and a shorter path for
 * the choice alone: both builds and both paths must agree with heurist. */
Test(export_c, reformer_select_agrees_on_held_out_problems, .timeout = 300)
{
    const char *const cfgs[] = {"{\"epochs\": 3, \"batch_size\": 256}",
                                "{\"epochs\": 3, \"batch_size\": 256, \"input\": \"ple\", \"input_bins\": 16}", NULL};
    const char *const flags[] = {"-O1", "-O3 -march=native", NULL};
    check_select_exports("reformer", cfgs, 0, flags);
}

static const char *driver_guard =
    "#include <stdio.h>\n#include <string.h>\n#include \"hm.h\"\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"w\");\n"
    "  char line[4096]; float s[4096];\n"
    "  if (!in || !out) return 1;\n"
    "  while (fgets(line, sizeof line, in)) {\n"
    "    int v[3]; char key[4096];\n"
    "    if (sscanf(line, \"%s %d %d %d\", key, &v[0], &v[1], &v[2]) != 4) return 2;\n"
    "    int k = hm_select_key_vendor(key, v, 3, s), k0 = hm_select_key_vendor(key, v, 3, 0);\n"
    "    fprintf(out, \"%d %d\", k, k0);\n"
    "    for (int j = 0; k >= 0 && j < hm_n_kernels(); j++) fprintf(out, \" %.9g\", s[j]);\n"
    "    fprintf(out, \"\\n\");\n  }\n  fclose(out);\n  return 0;\n}\n";

/* A runtime exported with the vendor guard (--guard, --guard-top) decides as heurist's evaluation does
 * (data_portable_guard over the model's scores): the same choice and scores on held-out problems, each given a
 * vendor list of three kernels (the last one a kernel the model does not know on every fifth problem). */
Test(export_c, guarded_runtime_agrees_with_the_guard_rule, .timeout = 300)
{
    hr_h5_quiet();
    data_select *ds = mi100_head();
    data_split s;
    cr_assert_eq(data_split_random(ds->n, 0.2, 3, &s), HR_OK);
    model_train_data d;
    cr_assert_eq(model_train_data_select(ds, &d), HR_OK);
    d.train = s.train, d.n_train = s.n_train;
    model *m = train_gbdt(&d, "{\"rounds\": 3, \"num_leaves\": 7, \"log_every\": 0}");
    m->select_guard = 0.05f;
    m->select_guard_top = 2;
    int n = 500, K = m->n_kernels;
    char **lines = malloc((size_t)n * sizeof *lines);
    int (*vendor)[3] = malloc((size_t)n * sizeof *vendor);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < 3; j++) vendor[i][j] = (i * 7 + j * 13) % K;
        if (i % 5 == 0) vendor[i][2] = -1;
        lines[i] = malloc(512);
        snprintf(lines[i], 512, "%s %d %d %d", ds->keys[s.test[i]], vendor[i][0], vendor[i][1], vendor[i][2]);
    }
    char *out = export_and_run(m, driver_guard, lines, n, "-O1");
    FILE *f = fopen(out, "r");
    float *want = malloc((size_t)K * sizeof *want);
    int16_t *rank = malloc((size_t)K * sizeof *rank);
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    int fell_back = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_eq(model_predict_select(m, ws, d.V + (size_t)s.test[i] * data_codec_value_count(d.codec), want), HR_OK);
        int best = 0;
        for (int k = 1; k < K; k++)
            if (want[k] > want[best]) best = k;
        for (int k = 0; k < K; k++) rank[k] = -1;
        for (int j = 2; j >= 0; j--)
            if (vendor[i][j] >= 0) rank[vendor[i][j]] = (int16_t)j;
        int pick = data_portable_guard(want, K, rank, 2, 0.05f);
        fell_back += pick == vendor[i][0] && pick != best;
        int got, got0;
        cr_assert_eq(fscanf(f, "%d %d", &got, &got0), 2);
        cr_assert_eq(got, pick, "problem %d (%s): %d vs %d", i, lines[i], got, pick);
        cr_assert_eq(got0, pick, "problem %d, no scores", i);
        for (int k = 0; k < K; k++) {
            float v;
            cr_assert_eq(fscanf(f, "%g", &v), 1);
            cr_assert((isinf(v) && isinf(want[k]) && (v < 0) == (want[k] < 0)) || fabsf(v - want[k]) <= 1e-5f * (1 + fabsf(want[k])),
                      "problem %d kernel %d: %g vs %g", i, k, v, want[k]);
        }
    }
    cr_assert_gt(fell_back, 0, "the guard kept the vendor's pick somewhere");
    fclose(f);
    remove_export(out);
    free(out);
    for (int i = 0; i < n; i++) free(lines[i]);
    free(lines);
    free(vendor);
    free(want);
    free(rank);
    model_ws_free(ws);
    model_free(m);
    data_split_free(&s);
    model_train_data_free(&d);
    data_select_free(ds);
}

/* Both block orders, post-norm (the default) and pre-norm, each a small block trained for one epoch on
 * 3,000 rows: agreement needs distinct weights, not a good model, and keeps the test quick. */
Test(export_c, transformer_select_agrees_on_held_out_problems, .timeout = 300)
{
    const char *const cfgs[] = {
        "{\"epochs\": 1, \"batch_size\": 128, \"d\": 16, \"heads\": 4, \"d_ff\": 32}",
        "{\"epochs\": 1, \"batch_size\": 128, \"d\": 8, \"heads\": 2, \"d_ff\": 16, \"norm_first\": 1}",
        NULL,
    };
    check_select_exports("transformer", cfgs, 3000, NULL);
}

/* A small seq2seq (constrained beam of width 4, the family's default decoding) exported and compiled:
 * the runtime must pick the same parameter sequence as model_predict_tune on 1,000 held-out problems,
 * each valid under the solver's rules. The same weights are then exported with greedy and plain beam
 * decoding, which must agree as well. */
Test(export_c, seq2seq_tune_agrees_on_held_out_problems, .timeout = 300)
{
    hr_h5_quiet();
    data_tune *dt;
    cr_assert_eq(data_perfdb_load(test_miopen("gfx906_60.db.bz2"), "ConvAsm1x1U", NULL, &dt), HR_OK);
    const data_constraint *con = data_constraint_find("ConvAsm1x1U");
    cr_assert_not_null(con);
    int F = data_features_count();
    float *X = malloc((size_t)dt->n * F * sizeof *X);
    data_features_compute_all(dt->problems, dt->n, X);
    data_split s;
    cr_assert_eq(data_split_random(dt->n, 0.2, 3, &s), HR_OK);
    int n_fit = s.n_train < 3000 ? s.n_train : 3000;
    model_train_data d;
    cr_assert_eq(model_train_data_tune(dt, &d), HR_OK);
    d.train = s.train, d.n_train = n_fit;
    cJSON *cfg = cJSON_Parse("{\"epochs\": 3, \"embed\": 8, \"conv_channels\": 16, \"hidden\": 16, \"attn\": 16}");
    hr_log silent = hr_log_silent();
    model_ctx ctx = {7, 2, &silent, cfg, NULL, 0, NULL, NULL, NULL, NULL};
    model *m;
    cr_assert_eq(model_train(model_family_find("seq2seq"), &d, &ctx, &m), HR_OK, "%s", hr_last_error());
    cJSON_Delete(cfg);
    int n = 1000, L = m->length;
    cr_assert_geq(s.n_test, n);
    cr_assert_eq(L, 8);
    char **keys = malloc((size_t)n * sizeof *keys);
    double *probs = malloc((size_t)n * DATA_CODEC_MAX_VALUES * sizeof *probs);
    for (int i = 0; i < n; i++) {
        keys[i] = malloc(256);
        data_key_format(&dt->problems[s.test[i]], keys[i], 256);
        /* through the key, as the runtime sees it */
        cr_assert_eq(model_problem_parse(m, keys[i], probs + (size_t)i * DATA_CODEC_MAX_VALUES), HR_OK, "%s", keys[i]);
    }
    seq2seq *sm = (seq2seq *)m;
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    const s2s_decode_kind kinds[3] = {S2S_DECODE_CONSTRAINED, S2S_DECODE_GREEDY, S2S_DECODE_BEAM};
    cr_assert_eq(sm->a.decode, S2S_DECODE_CONSTRAINED);
    for (int mode = 0; mode < 3; mode++) {
        sm->a.decode = kinds[mode];
        char *out = export_and_run(m, driver_tune, keys, n, "-O1");
        FILE *f = fopen(out, "r");
        int differ = 0, first = -1;
        for (int i = 0; i < n; i++) {
            int32_t want[8], got[8];
            data_tune_problem q = {probs + (size_t)i * DATA_CODEC_MAX_VALUES, NULL, 0, L, NULL};
            cr_assert_eq(model_predict_tune(m, ws, &q, want), HR_OK);
            int same = 1;
            for (int j = 0; j < L; j++) {
                cr_assert_eq(fscanf(f, "%d", &got[j]), 1, "problem %d", i);
                same &= got[j] == want[j];
            }
            if (!same && first < 0) first = i;
            differ += !same;
            if (kinds[mode] == S2S_DECODE_CONSTRAINED)
                cr_assert(data_constraint_check(con, &q, got, L), "problem %d (%s): exported sequence breaks the rules",
                          i, keys[i]);
        }
        cr_assert_eq(differ, 0, "decode %d: %d of %d sequences differ, first problem %d (%s)", (int)kinds[mode], differ, n,
                     first, first >= 0 ? keys[first] : "");
        fclose(f);
        remove_export(out);
        free(out);
    }
    for (int i = 0; i < n; i++) free(keys[i]);
    free(keys);
    free(probs);
    model_ws_free(ws);
    model_free(m);
    data_split_free(&s);
    free(X);
    model_train_data_free(&d);
    data_tune_free(dt);
}

/* A model with a non-finite weight is refused with one line naming the model file and the tensor, and
 * nothing is written (before, a NaN weight was written as `-nanf`, C that does not compile). */
Test(export_c, non_finite_weights_are_refused_naming_file_and_tensor, .timeout = 300)
{
    hr_h5_quiet();
    data_select *ds = mi100_head();
    int F = data_features_count();
    float *X = malloc((size_t)ds->n * F * sizeof *X);
    data_features_compute_all(ds->problems, ds->n, X);
    data_split s;
    cr_assert_eq(data_split_random(ds->n, 0.2, 3, &s), HR_OK);
    model_train_data d;
    cr_assert_eq(model_train_data_select(ds, &d), HR_OK);
    d.train = s.train, d.n_train = 2000;
    const char *const families[] = {"gbdt", "transformer"};
    const char *const cfgs[] = {"{\"rounds\": 2, \"num_leaves\": 7, \"log_every\": 0}",
                                "{\"epochs\": 1, \"batch_size\": 128, \"d\": 8, \"heads\": 2, \"d_ff\": 16}"};
    for (int f = 0; f < 2; f++) {
        cJSON *cfg = cJSON_Parse(cfgs[f]);
        hr_log silent = hr_log_silent();
        model_ctx ctx = {7, 2, &silent, cfg, NULL, 0, NULL, NULL, NULL, NULL};
        model *m;
        cr_assert_eq(model_train(model_family_find(families[f]), &d, &ctx, &m), HR_OK, "%s", hr_last_error());
        cJSON_Delete(cfg);
        char *dir = test_tmppath("_nonfinite");
        const char *tensor;
        if (f == 0) {
            const gbdt_model *g = (const gbdt_model *)m;
            gbdt_booster_tree(g->boosters[0], 1)->leaf_value[0] = NAN;
            tensor = "booster 0 tree 1 leaf values";
        } else {
            const tfm *t = (const tfm *)m;
            const size_t at = t->block.ffn.l1.w + 5;
            t->p.w[at] = INFINITY;
            tensor = NULL;
            for (int v = 0; v < t->p.n_views; v++)
                if (t->p.views[v].offset <= at && at < t->p.views[v].offset + t->p.views[v].size) tensor = t->p.views[v].name;
            cr_assert_not_null(tensor);
        }
        cr_assert_eq(export_c_write(m, "bad_model.h5", dir, "hm"), HR_EINVAL, "%s", families[f]);
        const char *msg = hr_last_error();
        cr_assert(strstr(msg, "bad_model.h5") && strstr(msg, tensor) && !strchr(msg, '\n'), "%s: %s", families[f], msg);
        char path[1100];
        snprintf(path, sizeof path, "%s/hm.c", dir);
        cr_assert_null(fopen(path, "r"), "%s: a runtime was written", families[f]);
        free(dir);
        model_free(m);
    }
    data_split_free(&s);
    free(X);
    model_train_data_free(&d);
    data_select_free(ds);
}
