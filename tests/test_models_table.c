/* Table models (the gbdt family with objective rank on a generated GEMM table): the pair regression recovers the
 * cost model's best configuration, scores any configuration from its fields, and keeps its scores through a
 * model file; a vocabulary model (softmax) is mapped by configuration name. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "helpers/table_fixture.h"
#include "helpers/testutil.h"
#include "models/model.h"

static const char *rank_cfg =
    "{\"objective\": \"rank\", \"rounds\": 300, \"min_data_in_leaf\": 3, \"early_stopping_rounds\": 0, \"log_every\": 0}";

/* m saved to a model file and loaded back: asserts the copy gives m's test scores, bit for bit, and returns it;
 * *scores gets m's test scores (malloc'd). */
static model *table_model_reload(const table_fixture *f, const model *m, const char *suffix, float **scores)
{
    char *path = test_tmppath(suffix);
    cr_assert_eq(model_save(m, path), HR_OK, "%s", hr_last_error());
    model *l = NULL;
    cr_assert_eq(model_load(path, &l), HR_OK, "%s", hr_last_error());
    remove(path);
    free(path);
    float *a = table_fixture_test_scores(f, m), *b = table_fixture_test_scores(f, l);
    cr_assert_eq(memcmp(a, b, (size_t)f->n_test * f->sel->n_kernels * sizeof *a), 0);
    free(b);
    *scores = a;
    return l;
}

/* With no noise the best configuration is a function of the problem and configuration fields, which the pair
 * features encode up to the cost model's wave and K-loop rounding (tiles, waste, unrounded waves): on problems it
 * never saw the regression picks the best configuration or one close to it. Measured on 300-problem tables of
 * seeds 3 to 6: efficiency mean 0.987 to 0.990, p10 0.957 to 0.969, top-1 0.67 to 0.77; 5-fold on 2,000 problems
 * reaches 0.989. */
Test(models_table, rank_recovers_the_cost_models_best_configuration, .timeout = 300)
{
    table_fixture f = table_fixture_make(300, 3, 0.0);
    model *m = table_fixture_train(&f, "gbdt", rank_cfg);
    cr_assert_not_null(data_codec_table_spec(m->codec));
    cr_assert_eq(model_score_target(m), MODEL_TARGET_RELATIVE);
    float *s = table_fixture_test_scores(&f, m);
    int K = f.sel->n_kernels;
    float *rt = malloc((size_t)f.n_test * K * sizeof *rt);
    for (int i = 0; i < f.n_test; i++)
        memcpy(rt + (size_t)i * K, f.sel->runtime + (size_t)f.test[i] * K, (size_t)K * sizeof *rt);
    eval_select_metrics e;
    cr_assert_eq(eval_select_compute(rt, s, f.n_test, K, &e, NULL), HR_OK);
    cr_assert_gt(e.efficiency_mean, 0.985, "test efficiency %.4f (top1 %.3f)", e.efficiency_mean, e.top1);
    cr_assert_gt(e.efficiency_p10, 0.95, "test efficiency p10 %.4f", e.efficiency_p10);
    cr_assert_gt(e.top1, 0.6, "test top-1 %.3f", e.top1);
    cr_assert_eq(e.unmeasured_rate, 0);
    /* the training curve: one point per round with the validation problems' top-1 */
    cr_assert_gt(m->n_curve, 0);
    cr_assert(m->curve[m->n_curve - 1].valid_metric >= 0 && m->curve[m->n_curve - 1].valid_metric <= 1);
    free(rt);
    free(s);
    model_free(m);
    table_fixture_free(&f);
}

/* predict_select scores the model's own configurations through the same path as predict_candidates: the same
 * bits. A configuration no problem measured gets a finite score of its own. */
Test(models_table, candidates_equal_select_and_score_unseen_configurations, .timeout = 300)
{
    table_fixture f = table_fixture_make(120, 5, 0.05);
    model *m = table_fixture_train(&f, "gbdt", "{\"objective\": \"rank\", \"rounds\": 30, \"log_every\": 0}");
    int K = m->n_kernels, nk = data_codec_config_width(m->codec);
    float *a = malloc((size_t)K * sizeof *a), *b = malloc((size_t)K * sizeof *b);
    model_ws *ws;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    const data_table *t = f.sel->table;
    int np = t->spec.n_problem + t->spec.n_hardware;
    for (int i = 0; i < f.n_test; i++) {
        const float *x = f.X + (size_t)f.test[i] * f.F;
        const double *pv = t->pv + (size_t)f.test[i] * np;
        cr_assert_eq(model_predict_candidates(m, ws, x, m->kernel_values, K, a), HR_OK, "%s", hr_last_error());
        cr_assert_eq(model_predict_select_x(m, ws, pv, x, b), HR_OK, "%s", hr_last_error());
        cr_assert_eq(memcmp(a, b, (size_t)K * sizeof *a), 0, "problem %d", i);
    }
    /* tile_m = 24, tile_n = 40: no generated configuration has them */
    double kv[2][16];
    cr_assert_leq(nk, 16);
    memcpy(kv[0], m->kernel_values, (size_t)nk * sizeof(double));
    memcpy(kv[1], m->kernel_values, (size_t)nk * sizeof(double));
    kv[1][0] = 24;
    kv[1][1] = 40;
    char name[512];
    cr_assert_geq(data_table_config_format(data_codec_table_spec(m->codec), kv[1], name, sizeof name), 0);
    for (int k = 0; k < K; k++) cr_assert_str_neq(m->kernels[k], name);
    float s2[2];
    cr_assert_eq(model_predict_candidates(m, ws, f.X, &kv[0][0], 1, s2), HR_OK);
    cr_assert_eq(model_predict_candidates(m, ws, f.X, kv[1], 1, s2 + 1), HR_OK);
    cr_assert(isfinite(s2[0]) && isfinite(s2[1]));
    /* the first is configuration 0 of the model: its score from the vocabulary path too */
    cr_assert_eq(model_predict_select_x(m, ws, t->pv, f.X, b), HR_OK);
    cr_assert_eq(s2[0], b[0]);
    /* a problem key is a convolution's: a table model's codec refuses it instead of answering */
    double pk[DATA_CODEC_MAX_VALUES];
    cr_assert_eq(model_problem_parse(m, "64-56-56-1x1-64-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F", pk), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "column values"), "%s", hr_last_error());
    model_ws_free(ws);
    free(a);
    free(b);
    model_free(m);
    table_fixture_free(&f);
}

/* A saved and loaded rank model gives the same scores, bit for bit, and keeps its target. */
Test(models_table, save_load_round_trip_keeps_the_scores, .timeout = 300)
{
    table_fixture f = table_fixture_make(100, 7, 0.05);
    model *m = table_fixture_train(&f, "gbdt",
                                   "{\"objective\": \"rank\", \"rank_target\": \"absolute\", \"rounds\": 20, \"log_every\": 0}");
    float *a;
    model *l = table_model_reload(&f, m, "_table_model.h5", &a);
    cr_assert_not_null(data_codec_table_spec(l->codec));
    cr_assert_eq(model_score_target(l), MODEL_TARGET_ABSOLUTE);
    size_t n = (size_t)f.n_test * f.sel->n_kernels;
    int finite = 0;
    for (size_t i = 0; i < n; i++) finite += isfinite(a[i]) != 0;
    cr_assert_gt(finite, f.n_test);
    free(a);
    model_free(m);
    model_free(l);
    table_fixture_free(&f);
}

/* A softmax model scores its vocabulary: model_predict_candidates maps candidates to it by name, a known
 * configuration to its class score and an unknown one to -INFINITY. */
Test(models_table, vocabulary_models_map_candidates_by_name, .timeout = 300)
{
    table_fixture f = table_fixture_make(80, 11, 0.05);
    model *m = table_fixture_train(&f, "gbdt", "{\"objective\": \"softmax\", \"rounds\": 5, \"log_every\": 0}");
    cr_assert_eq(model_score_target(m), MODEL_TARGET_NONE);
    int K = m->n_kernels, nk = data_codec_config_width(m->codec);
    float *voc = malloc((size_t)K * sizeof *voc);
    model_ws *ws;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    cr_assert_eq(model_predict_select_x(m, ws, f.sel->table->pv, f.X, voc), HR_OK);
    /* candidates: configuration K-1, an unknown one, configuration 0 */
    double *kv = malloc(3 * (size_t)nk * sizeof *kv);
    memcpy(kv, m->kernel_values + (size_t)(K - 1) * nk, (size_t)nk * sizeof *kv);
    memcpy(kv + nk, m->kernel_values, (size_t)nk * sizeof *kv);
    kv[nk] = 24;
    memcpy(kv + 2 * nk, m->kernel_values, (size_t)nk * sizeof *kv);
    float s[3];
    cr_assert_eq(model_predict_candidates(m, ws, f.X, kv, 3, s), HR_OK, "%s", hr_last_error());
    cr_assert_eq(s[0], voc[K - 1]);
    cr_assert(isinf(s[1]) && s[1] < 0);
    cr_assert_eq(s[2], voc[0]);
    model_ws_free(ws);
    free(kv);
    free(voc);
    model_free(m);
    table_fixture_free(&f);
}

/* rank_loss lambdarank: scores that order a problem's candidates but regress no target (no R^2), kept with the
 * loss through a model file. */
Test(models_table, lambdarank_scores_regress_no_target_and_round_trip, .timeout = 300)
{
    table_fixture f = table_fixture_make(60, 19, 0.05);
    model *m = table_fixture_train(&f, "gbdt",
                                   "{\"objective\": \"rank\", \"rank_loss\": \"lambdarank\", \"rounds\": 10, \"log_every\": 0}");
    cr_assert_eq(model_score_target(m), MODEL_TARGET_NONE);
    float *a;
    model *l = table_model_reload(&f, m, "_table_lambdarank.h5", &a);
    cr_assert_eq(model_score_target(l), MODEL_TARGET_NONE);
    free(a);
    model_free(m);
    model_free(l);
    table_fixture_free(&f);
}

/* tie_ratio reaches lambdarank's relevance: 1 leaves the model as the default trains it, bit for bit; a ratio wide
 * enough to tie most candidates with their problem's best changes the scores. */
Test(models_table, lambdarank_tie_ratio_shares_the_relevance_of_near_ties, .timeout = 300)
{
    table_fixture f = table_fixture_make(60, 19, 0.05);
    const char *base = "{\"objective\": \"rank\", \"rank_loss\": \"lambdarank\", \"rounds\": 10, \"log_every\": 0";
    char cfg[256];
    model *m = table_fixture_train(&f, "gbdt", "{\"objective\": \"rank\", \"rank_loss\": \"lambdarank\", \"rounds\": 10, "
                                               "\"log_every\": 0}");
    snprintf(cfg, sizeof cfg, "%s, \"tie_ratio\": 1}", base);
    model *one = table_fixture_train(&f, "gbdt", cfg);
    snprintf(cfg, sizeof cfg, "%s, \"tie_ratio\": 3}", base);
    model *wide = table_fixture_train(&f, "gbdt", cfg);
    float *a = table_fixture_test_scores(&f, m), *b = table_fixture_test_scores(&f, one), *c = table_fixture_test_scores(&f, wide);
    size_t n = (size_t)f.n_test * f.sel->n_kernels;
    cr_assert_eq(memcmp(a, b, n * sizeof *a), 0, "tie_ratio 1 is the default");
    cr_assert_neq(memcmp(a, c, n * sizeof *a), 0, "tie_ratio 3 changed nothing");
    free(a), free(b), free(c);
    model_free(m), model_free(one), model_free(wide);
    table_fixture_free(&f);
}
