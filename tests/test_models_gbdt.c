/* The gbdt family on the models fixture (tests/helpers/models_fixture.h): its training curve and its config
 * checks (values of the wrong type or range are refused, not replaced by defaults). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/models_config.h"
#include "helpers/models_fixture.h"
#include "models/model.h"

/* The gbdt family records a training curve like the networks do: one point per boosting round with the
 * validation loss and top-1, the top-1 recomputed here from the validation rows' scores of the final model. */
Test(models_gbdt, softmax_records_a_curve_per_round, .timeout = 300)
{
    fixture f = fixture_load(400000);
    const char *cfg = "{\"rounds\": 6, \"num_leaves\": 15, \"log_every\": 0, \"early_stopping_rounds\": 0}";
    model *m = train_family(&f, "gbdt", cfg, 1, NULL, 0, NULL);
    cr_assert_gt(f.n_valid, 100);
    cr_assert_eq(m->n_curve, 6);
    for (int i = 0; i < m->n_curve; i++) {
        cr_assert_eq(m->curve[i].step, i + 1);
        cr_assert(isfinite(m->curve[i].valid_loss) && m->curve[i].valid_loss > 0);
        cr_assert(m->curve[i].valid_metric >= 0 && m->curve[i].valid_metric <= 1);
        if (i) cr_assert_lt(m->curve[i].valid_loss, m->curve[i - 1].valid_loss);
    }
    float *s = scores_of(m, &f, f.valid, f.n_valid);
    long hit = 0;
    for (int i = 0; i < f.n_valid; i++) {
        const float *t = f.sel->runtime + (size_t)f.valid[i] * f.sel->n_kernels;
        int pred = 0;
        float best = t[0];
        for (int k = 1; k < f.sel->n_kernels; k++) {
            if (s[(size_t)i * f.sel->n_kernels + k] > s[(size_t)i * f.sel->n_kernels + pred]) pred = k;
            if (t[k] < best) best = t[k];
        }
        hit += t[pred] == best;
    }
    cr_assert_float_eq(m->curve[5].valid_metric, (float)hit / (float)f.n_valid, 1e-6);
    free(s);
    model_free(m);
    fixture_free(&f);
}

/* Refused configs, read before the data is touched. Before the one config reader these trained: "x" as 100
 * rounds, true as one, 2.9 as two, 1e10 as "num_rounds -2147483648 < 0", tau 0 as "soft label 0 is -nan". */
Test(models_gbdt, config_values_of_the_wrong_type_or_range_are_refused)
{
    static const struct {
        const char *config, *message;
    } cases[] = {
        {"{\"rounds\": \"x\"}", "gbdt config: \"rounds\" must be an integer in [1, 1000000], got \"x\""},
        {"{\"rounds\": true}", "gbdt config: \"rounds\" must be an integer in [1, 1000000], got true"},
        {"{\"rounds\": 2.9}", "gbdt config: \"rounds\" must be an integer in [1, 1000000], got 2.9"},
        {"{\"rounds\": 1e10}", "gbdt config: \"rounds\" must be an integer in [1, 1000000], got 10000000000"},
        {"{\"rounds\": 0}", "gbdt config: \"rounds\" must be an integer in [1, 1000000], got 0"},
        {"{\"learning_rate\": 1e300}", "gbdt config: \"learning_rate\" must be a number in [1e-06, 10], got 1e+300"},
        {"{\"learning_rate\": \"0.1\"}", "gbdt config: \"learning_rate\" must be a number in [1e-06, 10], got \"0.1\""},
        {"{\"tau\": 0}", "gbdt config: \"tau\" must be a number in [1e-06, 1000000], got 0"},
        {"{\"objective\": \"lambdarank\"}", "gbdt config: \"objective\" must be one of auto, softmax or rank, got \"lambdarank\""},
        {"{\"label\": 1}", "gbdt config: \"label\" must be one of soft, ratio, onehot, hard or softmax, got 1"},
        {"{\"feature_fraction\": 0}", "gbdt config: \"feature_fraction\" must be a number in [1e-06, 1], got 0"},
        {"{\"max_bin\": 1}", "gbdt config: \"max_bin\" must be an integer in [2, 65535], got 1"},
        {"{\"num_leaves\": null}", "gbdt config: \"num_leaves\" must be an integer in [2, 131072], got null"},
        {"[1]", "gbdt config: must be a JSON object, got [1]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_config_refused(&model_family_gbdt, MODEL_TASK_SELECT, cases[i].config, cases[i].message);
    /* the tune task reads the same table */
    check_config_refused(&model_family_gbdt, MODEL_TASK_TUNE, "{\"rounds\": 2.9}",
                  "gbdt config: \"rounds\" must be an integer in [1, 1000000], got 2.9");
    cJSON *cfg = cJSON_Parse("{\"roundz\": 3}");
    hr_log silent = hr_log_silent();
    int row = 0;
    model_train_data d = {.task = MODEL_TASK_SELECT, .train = &row, .n_train = 1};
    model_ctx ctx = {1, 1, &silent, cfg, NULL, 0, NULL, NULL, NULL, NULL};
    model *m = NULL;
    cr_assert_eq(model_train(&model_family_gbdt, &d, &ctx, &m), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "gbdt config: unknown option \"roundz\" (known: objective, label, tau, rounds,"),
              "%s", hr_last_error());
    cJSON_Delete(cfg);
}

/* The table prints one line per option with its default and range. */
Test(models_gbdt, config_tables_print)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    model_config_print(&model_family_gbdt, out);
    fclose(out);
    cr_assert(strstr(buf, "  rounds ") && strstr(buf, "[1, 1000000]") && strstr(buf, "softmax or rank"), "%s", buf);
    cr_assert(!strstr(buf, "  epochs "), "%s", buf); /* gbdt does not train through the loop */
    free(buf);
}
