/* Benchmark tables through the command line: a generated GEMM table (gen_gemm_table) goes through data info,
 * data cache, train, eval, cv and predict as a find-db does. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers/testutil.h"

/* Writes a generated table of n problems under a fresh folder; returns the CSV path (malloc'd). */
static char *gen_table(int n, const char *name)
{
    char *dir = test_tmppath("");
    cr_assert_eq(hr_mkdir_p(dir), HR_OK);
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = malloc(len), cmd[2048];
    snprintf(path, len, "%s/%s", dir, name);
    snprintf(cmd, sizeof cmd, "'%s' --problems %d --seed 3 --out '%s'", HEURIST_GEN_GEMM_TABLE, n, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    free(dir);
    return path;
}

Test(cli_table, generator_is_deterministic)
{
    char *a = gen_table(20, "a.csv"), *b = gen_table(20, "a.csv");
    char *ta, *tb;
    size_t la, lb;
    cr_assert_eq(hr_file_read_all(a, &ta, &la), HR_OK);
    cr_assert_eq(hr_file_read_all(b, &tb, &lb), HR_OK);
    cr_assert_eq(la, lb);
    cr_assert_eq(memcmp(ta, tb, la), 0);
    cr_assert(strncmp(ta, "M,N,K,dtype,tile_m,tile_n,tile_k,stages,split_k,time_us\n", 56) == 0);
    free(ta), free(tb), free(a), free(b);
}

Test(cli_table, train_eval_cv_predict_end_to_end, .timeout = 300)
{
    char *csv = gen_table(200, "g.csv.gz"), *model = test_tmppath(".h5"), *rep = test_tmppath(".json");
    char *cache = test_tmppath(".h5"), args[4096], *out = NULL;
    snprintf(args, sizeof args, "data info --data '%s'", csv);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "benchmark table"), "%s", out);
    cr_assert(strstr(out, "problems         200"), "%s", out);
    cr_assert(strstr(out, "runner-up gap"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "data cache --data '%s' --out '%s'", csv, cache);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args,
             "train --data '%s' --model gbdt --config '{\"rounds\":10}' --threads 2 --out '%s' --report '%s' --quiet", csv,
             model, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "top1"), "%s", out);
    free(out);
    char *report;
    size_t len;
    cr_assert_eq(hr_file_read_all(rep, &report, &len), HR_OK);
    cr_assert(strstr(report, "\"data_kind\":\t\"benchmark table\""), "%s", report);
    cr_assert(strstr(report, "\"unmeasured_rate\":\t0"), "%s", report);
    free(report);
    /* eval on the cache gives the figures it gives on the table */
    char *o1, *o2;
    snprintf(args, sizeof args, "eval --model '%s' --data '%s' --report '%s'", model, csv, rep);
    cr_assert_eq(test_cli_run(args, &o1), 0, "%s", o1);
    snprintf(args, sizeof args, "eval --model '%s' --data '%s' --report '%s'", model, cache, rep);
    cr_assert_eq(test_cli_run(args, &o2), 0, "%s", o2);
    cr_assert_eq(strncmp(o1, o2, strstr(o1, "train") - o1), 0, "%s\n%s", o1, o2);
    free(o1), free(o2);
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=128,N=4096,K=4096,dtype=bf16' --top 3", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "M=128,N=4096,K=4096,dtype=bf16: 140 of 140 configurations ranked"), "%s", out);
    cr_assert(strstr(out, "   1  "), "%s", out);
    cr_assert(strstr(out, "tile_m="), "%s", out);
    cr_assert_null(strstr(out, "   4  "), "%s", out);
    free(out);
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=128,N=4096,dtype=bf16'", model);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "'K' is missing"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "cv --data '%s' --model frequent --folds 3 --report '%s' --quiet", cache, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "frequent"), "%s", out);
    free(out);
    /* --split none: every problem trained on, and the report's figures are theirs */
    snprintf(args, sizeof args, "train --data '%s' --model frequent --split none --out '%s' --report '%s' --quiet", csv,
             model, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    cr_assert_eq(hr_file_read_all(rep, &report, &len), HR_OK);
    cr_assert(strstr(report, "\"split\":\t\"none\""), "%s", report);
    cr_assert(strstr(report, "\"n_train\":\t200") && strstr(report, "\"n_test\":\t200"), "%s", report);
    free(report);
    remove(model), remove(rep), remove(cache);
    free(csv), free(model), free(rep), free(cache);
}

Test(cli_table, schema_option_and_errors)
{
    char *dir = test_tmppath("");
    cr_assert_eq(hr_mkdir_p(dir), HR_OK);
    char path[1024], args[2048], *out = NULL;
    snprintf(path, sizeof path, "%s/t.csv", dir);
    const char *text = "M,t,us\n1,16,4\n1,32,3\n2,16,x\n";
    cr_assert_eq(hr_file_write_atomic(path, text, strlen(text)), HR_OK);
    snprintf(args, sizeof args, "data info --data '%s'", path);
    cr_assert_neq(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, "t.schema.json"), "%s", out);
    free(out);
    snprintf(args, sizeof args,
             "data info --data '%s' --strict --schema '{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\"}'", path);
    cr_assert_neq(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, "t.csv:4: column 'us'"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "data info --data '%s' --schema '{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\"}'",
             path);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "measure not a positive number"), "%s", out);
    free(out);
    free(dir);
}

/* A single-problem prediction that cannot be timed (the frequent baseline of a table of more than 1,024
 * configurations: pipeline/select.c times up to 1,024 scores) prints "-" on the result line, as report.json writes
 * null, not "nan". */
Test(cli_table, untimed_prediction_prints_a_dash, .timeout = 120)
{
    char *csv = test_tmppath(".csv"), *schema = test_tmppath(".json"), *model = test_tmppath(".h5"), args[4096];
    char *out = NULL;
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fprintf(f, "M,N,cfg,time_us\n");
    for (int p = 0; p < 40; p++)
        for (int c = 0; c < 30; c++) fprintf(f, "%d,%d,%d,%d\n", 64 + p, 32 + p % 3, p * 30 + c, 1 + (c * 7 + p) % 30);
    cr_assert_eq(fclose(f), 0);
    f = fopen(schema, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"problem\": [\"M\", \"N\"], \"kernel\": [\"cfg\"], \"measure\": \"time_us\", \"better\": \"lower\"}\n");
    cr_assert_eq(fclose(f), 0);
    snprintf(args, sizeof args, "train --data '%s' --schema '%s' --model frequent --out '%s' --quiet", csv, schema,
             model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "predict - us"), "%s", out);
    cr_assert_null(strstr(out, "nan"), "%s", out);
    free(out);
    free(csv);
    free(schema);
    free(model);
}
