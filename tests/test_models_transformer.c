/* The transformer family (the attention baseline) on the models fixture (tests/helpers/models_fixture.h):
 * learning, save/load, resume, single-problem vs batched paths, version refusal, config checks. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "helpers/models_config.h"
#include "helpers/models_fixture.h"
#include "models/model.h"

#define SMALL_TRANSFORMER "{\"epochs\": 3, \"batch_size\": 64, \"d\": 16, \"heads\": 2, \"d_ff\": 32, \"lr\": 0.003}"

Test(models_transformer, learns, .timeout = 120)
{
    check_learns("transformer", SMALL_TRANSFORMER);
}

Test(models_transformer, save_load_and_resume, .timeout = 120)
{
    check_round_trip("transformer", SMALL_TRANSFORMER);
    check_resume("transformer", "{\"epochs\": 4, \"batch_size\": 64, \"d\": 8, \"heads\": 2, \"d_ff\": 16}");
}

Test(models_transformer, single_problem_prediction_equals_batched_and_newer_refused, .timeout = 120)
{
    check_single_vs_batched("transformer", SMALL_TRANSFORMER, 1);
    check_newer_refused("transformer", "{\"epochs\": 1, \"d\": 8, \"heads\": 2, \"d_ff\": 16}", "transformer_version");
}

/* A const model is shared by threads with a workspace each. */
Test(models_transformer, threads_share_one_model, .timeout = 120)
{
    check_threads_share("transformer", "{\"epochs\": 1, \"batch_size\": 64, \"d\": 8, \"heads\": 2, \"d_ff\": 16}");
}

Test(models_transformer, config_is_checked)
{
    check_loop_config_refused(&model_family_transformer, MODEL_TASK_SELECT);
    check_config_refused(&model_family_transformer, MODEL_TASK_SELECT, "{\"tau\": 0}",
                         "transformer config: \"tau\" must be a number in [1e-06, 1000000], got 0");
    check_config_refused(&model_family_transformer, MODEL_TASK_SELECT, "{\"d\": 30}",
                         "transformer config: \"d\" must be a multiple of \"heads\" (4), got 30");
    check_config_refused(&model_family_transformer, MODEL_TASK_SELECT, "{\"norm_first\": 2}",
                         "transformer config: \"norm_first\" must be an integer in [0, 1], got 2");
    check_config_refused(&model_family_transformer, MODEL_TASK_SELECT, "{\"label\": \"fastest\"}",
                         "transformer config: \"label\" must be one of soft, ratio, onehot, hard or softmax, got"
                         " \"fastest\"");
}

