/* Config checks shared by the model family tests (see models_config.h). */
#include "helpers/models_config.h"

#include <criterion/criterion.h>
#include <stdio.h>

void check_config_refused(const model_family *fam, model_task task, const char *config, const char *message)
{
    cJSON *cfg = cJSON_Parse(config);
    cr_assert(cfg, "bad test config %s", config);
    hr_log silent = hr_log_silent();
    int row = 0;
    model_train_data d = {.task = task, .train = &row, .n_train = 1};
    model_ctx ctx = {1, 1, &silent, cfg, NULL, 0, NULL, NULL, NULL, NULL};
    model *m = NULL;
    cr_assert_eq(model_train(fam, &d, &ctx, &m), HR_EINVAL, "%s %s accepted", fam->name, config);
    cr_assert_null(m);
    cr_assert_str_eq(hr_last_error(), message, "%s %s", fam->name, config);
    cJSON_Delete(cfg);
}

void check_loop_config_refused(const model_family *fam, model_task task)
{
    const char *values[] = {"\"x\"", "true", "2.9", "1e10", "0"};
    const char *shown[] = {"\"x\"", "true", "2.9", "10000000000", "0"};
    char config[64], want[256];
    for (size_t v = 0; v < sizeof values / sizeof *values; v++) {
        snprintf(config, sizeof config, "{\"epochs\": %s}", values[v]);
        snprintf(want, sizeof want, "%s config: \"epochs\" must be an integer in [1, 1000000], got %s", fam->name,
                 shown[v]);
        check_config_refused(fam, task, config, want);
    }
    snprintf(want, sizeof want, "%s config: \"lr\" must be a number in [1e-09, 100], got 1e+300", fam->name);
    check_config_refused(fam, task, "{\"lr\": 1e300}", want);
    snprintf(want, sizeof want, "%s config: \"optimizer\" must be one of adam, adamw or sgd, got \"lion\"", fam->name);
    check_config_refused(fam, task, "{\"optimizer\": \"lion\"}", want);
}
