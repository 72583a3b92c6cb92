/* --task tune on a benchmark table through the command line: train, eval, predict, compare (with the vendor row),
 * a malformed capability file, and export's refusal, on the small cuBLASLt-style fixture. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers/gemm_caps_fixture.h"
#include "helpers/testutil.h"

#define SMALL "{\"epochs\":2,\"embed\":8,\"hidden\":16,\"attn\":16,\"conv_channels\":8}"

Test(cli_table_tune, train_eval_predict_compare, .timeout = 300)
{
    char *csv = gemm_caps_fixture_write(60, 7), *model = test_tmppath(".h5"), *rep = test_tmppath(".json");
    char *dir = test_tmppath(""), args[4096], *out = NULL, *text = NULL;
    size_t len;
    snprintf(args, sizeof args,
             "train --data '%s' --task tune --model seq2seq --config '" SMALL "' --threads 1 --out '%s' --report '%s' --quiet",
             csv, model, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "valid 1.0000"), "%s", out);
    cr_assert(strstr(out, "measured 1.0000"), "the default space is measured: %s", out);
    free(out);
    cr_assert_eq(hr_file_read_all(rep, &text, &len), HR_OK);
    cr_assert(strstr(text, "\"task\":\t\"tune\""), "%s", text);
    cr_assert(strstr(text, "\"efficiency_mean\""), "%s", text);
    cr_assert(strstr(text, "\"efficiency_p10\""), "%s", text);
    cr_assert(strstr(text, "\"measured\""), "%s", text);
    free(text);
    /* eval reads the table as tune data because the model is a table tune model */
    snprintf(args, sizeof args, "eval --model '%s' --data '%s' --split random:0.2 --report '%s'", model, csv, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "efficiency"), "%s", out);
    free(out);
    /* predict: a configuration, field by field, valid under the rules the model file keeps */
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=128,N=300,K=256,dtype=bf16,trans_a=N,trans_b=T'", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "algo_id="), "%s", out);
    cr_assert(strstr(out, "  split_k "), "%s", out);
    cr_assert(strstr(out, "valid under the capability rules: yes"), "%s", out);
    free(out);
    /* a problem key of a convolution is no table problem */
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=128,N=300'", model);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    /* export refuses with a reason */
    snprintf(args, sizeof args, "export --model '%s' --format c --out '%s.c'", model, model);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "tune model of a benchmark table cannot be exported"), "%s", out);
    free(out);
    /* compare: both families and the vendor row, in the terminal and in report.md */
    snprintf(args, sizeof args,
             "compare --data '%s' --task tune --models seq2seq,gbdt --config '{\"seq2seq\":" SMALL ",\"gbdt\":{\"rounds\":5}}' "
             "--split random:0.25 --threads 1 --out '%s' --quiet",
             csv, dir);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "| vendor |"), "%s", out);
    cr_assert(strstr(out, "efficiency mean"), "%s", out);
    free(out);
    char md[4096];
    snprintf(md, sizeof md, "%s/report.json", dir);
    cr_assert_eq(hr_file_read_all(md, &text, &len), HR_OK);
    cr_assert(strstr(text, "\"model\":\t\"vendor\""), "%s", text);
    free(text);
    remove(model);
    remove(rep);
    free(csv), free(model), free(rep), free(dir);
}

Test(cli_table_tune, malformed_caps_is_one_line_naming_the_field)
{
    char *csv = gemm_caps_fixture_write(12, 8), args[4096], *out = NULL;
    const char bad[] = "{\"format\": \"heurist-collect gemm capabilities\", \"version\": 1, \"cluster_shapes_tried\": [],"
                       " \"types\": [{\"dtype\": \"bf16\", \"algos\": [{\"algo_id\": 5, \"tiles\": 3}]}]}";
    char *caps = test_tmpfile("caps.json", bad, sizeof bad - 1);
    snprintf(args, sizeof args, "train --data '%s' --task tune --caps '%s' --model gbdt --out '%s.h5' --quiet", csv, caps, caps);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "types[0].algos[0].tiles"), "%s", out);
    cr_assert_eq(test_lines_count(out), 1, "%s", out);
    free(out);
    snprintf(args, sizeof args, "train --data '%s' --task tune --caps '%s.none' --model gbdt --out '%s.h5' --quiet", csv, caps,
             caps);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "--caps"), "%s", out);
    free(out);
    free(caps);
    free(csv);
}
