/* The transformer family (the attention baseline) on the models fixture (tests/helpers/models_fixture.h):
 * learning, save/load, resume, single-problem vs batched paths, version refusal, config checks. */
#include <criterion/criterion.h>
#include <stdlib.h>

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
