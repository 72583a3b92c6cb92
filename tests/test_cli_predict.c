/* heurist predict on a benchmark-table model: the configurations measured for the problem's categorical values,
 * candidates from a CSV file, the model's scores (no softmax), and a file of problems answered into a file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers/testutil.h"

/* A table whose fp16 problems are measured on configurations (tile_m 64 or 128) x tile_n 64 and whose fp32 problems
 * on tile_m 16 or 32 x tile_n 64: the configurations a dtype runs do not tell by their fields. Trained into a gbdt
 * rank model; returns the model's path (malloc'd), the folder in *dir. */
static char *dtype_model(char **dir)
{
    *dir = test_tmppath("");
    cr_assert_eq(hr_mkdir_p(*dir), HR_OK);
    char path[1024], *out, args[4096];
    snprintf(path, sizeof path, "%s/t.csv", *dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "M,N,K,dtype,tile_m,tile_n,time_us\n");
    for (int p = 0; p < 24; p++) {
        int M = 64 << (p % 6), N = 128 << (p / 6 % 4), fp32 = p % 2;
        for (int c = 0; c < 2; c++) {
            int tm = fp32 ? (16 << c) : (64 << c);
            fprintf(f, "%d,%d,512,%s,%d,64,%.3f\n", M, N, fp32 ? "fp32" : "fp16", tm, 10.0 + (double)M / tm + c);
        }
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/t.schema.json", *dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"problem\": [\"M\",\"N\",\"K\",\"dtype\"], \"kernel\": [\"tile_m\",\"tile_n\"], \"hardware\": [], "
               "\"categorical\": [\"dtype\"], \"measure\": \"time_us\", \"better\": \"lower\", "
               "\"tiles\": {\"tile_m\": \"M\", \"tile_n\": \"N\"}}\n");
    fclose(f);
    size_t len = strlen(*dir) + 16;
    char *model = malloc(len);
    snprintf(model, len, "%s/m.h5", *dir);
    snprintf(args, sizeof args, "train --data '%s/t.csv' --model gbdt --config '{\"objective\":\"rank\",\"rounds\":3}' "
             "--split none --threads 1 --out '%s' --quiet", *dir, model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    return model;
}

Test(cli_predict, a_table_model_ranks_the_configurations_measured_for_the_problems_categorical_values, .timeout = 300)
{
    char *dir, *model = dtype_model(&dir), *out, args[4096];
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=100,N=300,K=512,dtype=fp32'", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "2 of 4 configurations ranked (those measured in training for its categorical values)"),
              "%s", out);
    cr_assert(strstr(out, "tile_m=16,tile_n=64") && strstr(out, "tile_m=32,tile_n=64"), "%s", out);
    cr_assert_null(strstr(out, "tile_m=64,"), "an fp16 configuration: %s", out);
    /* the model's score, not a probability */
    cr_assert(strstr(out, "rank       score  configuration"), "%s", out);
    cr_assert_null(strstr(out, "%"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=100,N=300,K=512,dtype=fp16' --top 1", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "2 of 4 configurations ranked"), "%s", out);
    cr_assert(strstr(out, "   1  ") && (strstr(out, "tile_m=64,") || strstr(out, "tile_m=128,")), "%s", out);
    cr_assert_null(strstr(out, "   2  "), "%s", out);
    free(out);
    remove(model);
    free(model);
    free(dir);
}

Test(cli_predict, candidates_from_a_csv_file_are_ranked_and_bad_files_named, .timeout = 300)
{
    char *dir, *model = dtype_model(&dir), *out, args[4096], path[1024];
    snprintf(path, sizeof path, "%s/cand.csv", dir);
    /* columns in another order than the schema's, a configuration the model never saw */
    FILE *f = fopen(path, "w");
    fprintf(f, "tile_n,tile_m\n64,16\n128,256\n64,64\n");
    fclose(f);
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=100,N=300,K=512,dtype=fp32' --candidates '%s'", model,
             path);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "3 of 3 candidates ranked"), "%s", out);
    cr_assert(strstr(out, "rank       score  line  configuration"), "%s", out);
    cr_assert(strstr(out, "tile_m=256,tile_n=128"), "an unmeasured configuration is scored by its fields: %s", out);
    free(out);
    const char *bad[][2] = {{"tile_m,tile_n\n64\n", ":2: 1 values, the header names 2 columns"},
                            {"tile_m\n64\n", ":1: the header names 1 columns, the model's configurations have 2: tile_m,tile_n"},
                            {"tile_m,tile_x\n64,64\n", "tile_x"},
                            {"tile_m,tile_n\n64,abc\n", ":2"},
                            {"tile_m,tile_n\n", "no candidate configuration"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = fopen(path, "w");
        fputs(bad[i][0], f);
        fclose(f);
        cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
        cr_assert(strstr(out, bad[i][1]) && strstr(out, "cand.csv"), "case %zu: %s", i, out);
        cr_assert_eq(test_lines_count(out), 1, "one line: %s", out);
        free(out);
    }
    remove(path);
    remove(model);
    free(model);
    free(dir);
}

Test(cli_predict, a_file_of_problems_is_answered_into_a_file, .timeout = 300)
{
    char *dir, *model = dtype_model(&dir), *out, args[4096], in[1024], res[1024];
    snprintf(in, sizeof in, "%s/problems.txt", dir);
    snprintf(res, sizeof res, "%s/top.tsv", dir);
    FILE *f = fopen(in, "w");
    fprintf(f, "# problems\nM=100,N=300,K=512,dtype=fp32\n\nM=4096,N=128,K=512,dtype=fp16\n");
    fclose(f);
    snprintf(args, sizeof args, "predict --model '%s' --problems '%s' --output '%s' --top 2", model, in, res);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    char *text;
    size_t len;
    cr_assert_eq(hr_file_read_all(res, &text, &len), HR_OK);
    cr_assert_eq(test_lines_count(text), 5, "a header and two rows a problem: %s", text);
    cr_assert(strncmp(text, "problem\trank\tscore\tkernel\n", 26) == 0, "%s", text);
    cr_assert(strstr(text, "M=100,N=300,K=512,dtype=fp32\t1\t"), "%s", text);
    cr_assert(strstr(text, "M=4096,N=128,K=512,dtype=fp16\t2\t"), "%s", text);
    free(text);
    /* a bad line: an error naming the file and line, and no output */
    remove(res);
    f = fopen(in, "w");
    fprintf(f, "M=100,N=300,K=512,dtype=fp32\nM=100,N=300,dtype=fp32\n");
    fclose(f);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "problems.txt:2") && strstr(out, "'K'"), "%s", out);
    cr_assert_eq(hr_file_exists(res), 0, "no output after an error");
    free(out);
    /* --problems without --output, and with --problem */
    snprintf(args, sizeof args, "predict --model '%s' --problems '%s'", model, in);
    cr_assert_eq(test_cli_run(args, &out), 2, "%s", out);
    free(out);
    remove(in);
    remove(model);
    free(model);
    free(dir);
}
