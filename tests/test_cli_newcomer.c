/* What a new user meets first, through the command line, on small benchmark tables written here (the frictions of
 * issue 36's list, each with the command that showed it). */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers/testutil.h"
#include "include/heurist.h"

/* Runs heurist with the printf-formatted arguments and checks its exit status and that its output (stdout and
 * stderr) holds needle. */
static void cli_expect(int status, const char *needle, const char *fmt, ...)
{
    char args[8192], *out = NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    cr_assert(len >= 0 && (size_t)len < sizeof args, "arguments too long: %s", fmt);
    cr_assert_eq(test_cli_run(args, &out), status, "%s\n%s", args, out);
    cr_assert(strstr(out, needle), "%s: no '%s' in\n%s", args, needle, out);
    free(out);
}

/* A table of `problems` problems (M, N from the index, dtype `dtypes`[i % n], group family i % 4) x `tiles` tiles x
 * split 1..2, its time a smooth function of the problem and the configuration, the vendor ranking its guess of the
 * three fastest; the schema beside it. Returns the CSV's path (malloc'd) in the folder dir. */
static char *table_write(const char *dir, const char *name, int problems, int first, int tiles,
                         const char *const *dtypes, int n_dtypes)
{
    size_t len = strlen(dir) + strlen(name) + 16;
    char *path = malloc(len), *schema = malloc(len + 16);
    snprintf(path, len, "%s/%s.csv", dir, name);
    snprintf(schema, len + 16, "%s/%s.schema.json", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "M,N,dtype,tile,split,time_us,rank,family\n");
    for (int i = first; i < first + problems; i++) {
        int M = 16 * (1 + i % 7), N = 16 * (1 + (i / 7) % 5);
        const char *dt = dtypes[i % n_dtypes];
        for (int t = 0; t < tiles; t++)
            for (int sp = 1; sp <= 2; sp++) {
                int tile = 8 * (t + 1), c = t * 2 + sp - 1;
                double tm = 1 + (M > tile ? M - tile : tile - M) / 16.0 + (N > tile ? N - tile : tile - N) / 32.0 +
                            0.3 * sp + 0.01 * ((i * 31 + c * 17) % 7);
                /* the vendor ranks its guess of the best three: the tiles nearest M */
                int d = M > tile ? M - tile : tile - M;
                int rank = d < 8 ? sp - 1 : d < 16 && sp == 1 ? 2 : -1;
                fprintf(f, "%d,%d,%s,%d,%d,%.4f,%d,f%d\n", M, N, dt, tile, sp, tm, rank, i % 4);
            }
    }
    cr_assert_eq(fclose(f), 0);
    f = fopen(schema, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"problem\":[\"M\",\"N\",\"dtype\"],\"kernel\":[\"tile\",\"split\"],\"categorical\":[\"dtype\"],"
               "\"measure\":\"time_us\",\"better\":\"lower\",\"vendor\":\"rank\",\"duplicates\":\"error\","
               "\"group\":\"family\"}\n");
    cr_assert_eq(fclose(f), 0);
    free(schema);
    return path;
}

static char *fresh_dir(void)
{
    char *dir = test_tmppath("");
    cr_assert_eq(hr_mkdir_p(dir), HR_OK);
    return dir;
}

static const char *const two_dtypes[] = {"fp16", "bf16"};

/* gbdt's objective is auto: rank (lambdarank) on a table, whatever its number of configurations; softmax asked for
 * over more kernels than one booster takes names the objective that works. */
Test(cli_newcomer, gbdt_objective_auto_ranks_a_table_of_many_configurations, .timeout = 300)
{
    char *dir = fresh_dir(), *csv = table_write(dir, "wide", 12, 0, 150, two_dtypes, 2), args[4096], *out = NULL;
    char *model = test_tmppath(".h5");
    cli_expect(0, "objective auto: rank (lambdarank) over 300 valued configurations",
               "train --data '%s' --model gbdt --config '{\"rounds\":3}' --split none --threads 1 "
               "--out '%s'", csv, model);
    snprintf(args, sizeof args, "train --data '%s' --model gbdt --config '{\"rounds\":3,\"objective\":\"softmax\"}' "
             "--split none --threads 1 --out '%s' --quiet", csv, model);
    cr_assert_eq(test_cli_run(args, &out), 1, "%s", out);
    cr_assert(strstr(out, "at most 256 kernels") && strstr(out, "use {\"objective\": \"rank\"}"), "%s", out);
    cr_assert_eq(test_lines_count(out), 1, "%s", out);
    free(out);
    /* compare runs both families on the folds */
    char *cmp = test_tmppath("");
    snprintf(args, sizeof args, "compare --data '%s' --models gbdt,reformer --folds 2 --threads 1 --quiet "
             "--config '{\"gbdt\":{\"rounds\":2},\"reformer\":{\"epochs\":1}}' --out '%s'", csv, cmp);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "gbdt") && strstr(out, "reformer"), "%s", out);
    free(out);
    /* a table's report has no chart of slices it does not have */
    char path[4096], *md;
    size_t len;
    snprintf(path, sizeof path, "%s/report.md", cmp);
    cr_assert_eq(hr_file_read_all(path, &md, &len), HR_OK);
    cr_assert_null(strstr(md, "top1_slices.png"), "%s", md);
    free(md);
    snprintf(path, sizeof path, "%s/top1_slices.png", cmp);
    cr_assert_eq(hr_file_exists(path), 0);
    free(cmp), free(model), free(csv), free(dir);
}

/* random:0 and none train on every row, with no validation rows unless asked; any other fraction outside [0, 1) says
 * what is allowed. */
Test(cli_newcomer, split_of_zero_trains_on_every_row, .timeout = 120)
{
    char *dir = fresh_dir(), *csv = table_write(dir, "t", 20, 0, 4, two_dtypes, 2), args[4096], *out = NULL;
    char *model = test_tmppath(".h5"), *rep = test_tmppath(".json");
    snprintf(args, sizeof args, "train --data '%s' --model gbdt --config '{\"rounds\":2}' --split random:0 --threads 1 "
             "--out '%s' --report '%s'", csv, model, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "20 training / 20 test problems (none)"), "%s", out);
    cr_assert(strstr(out, "rank on 160 training pairs, 0 validation pairs"), "%s", out);
    free(out);
    char *report;
    size_t len;
    cr_assert_eq(hr_file_read_all(rep, &report, &len), HR_OK);
    cr_assert(strstr(report, "\"split\":\t\"none\""), "%s", report);
    free(report);
    /* an explicit --valid-fraction still holds rows back */
    cli_expect(0, "rank on 120 training pairs, 40 validation pairs",
               "train --data '%s' --model gbdt --config '{\"rounds\":2}' --split random:0 "
               "--valid-fraction 0.25 --threads 1 --out '%s'", csv, model);
    /* the table's schema names a group column: random:0.5 holds out whole groups, random:0 none */
    cli_expect(0, "10 training / 10 test problems",
               "train --data '%s' --model gbdt --config '{\"rounds\":2}' --split random:0.5 "
               "--threads 1 --out '%s'", csv, model);
    cli_expect(2, "in [0, 1) (0 or none: train on every row)",
               "train --data '%s' --model gbdt --split random:1 --out '%s'", csv, model);
    free(model), free(rep), free(csv), free(dir);
}

/* The baselines trained on one table evaluate on another that measures configurations the first did not: frequent
 * never picks one it does not know, vendor answers with the new table's own ranking, and diff compares them. */
Test(cli_newcomer, baselines_evaluate_on_a_new_table, .timeout = 120)
{
    char *dir = fresh_dir(), *a = table_write(dir, "a", 30, 0, 4, two_dtypes, 2);
    char *b = table_write(dir, "b", 10, 25, 6, two_dtypes, 2); /* tiles 40 and 48 are new, so are problems 30..34 */
    char *f = test_tmppath(".h5"), *v = test_tmppath(".h5"), *rep = test_tmppath(".json"), args[4096], *out = NULL;
    snprintf(args, sizeof args, "train --data '%s' --model frequent --split none --out '%s' --quiet", a, f);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "train --data '%s' --model vendor --split none --out '%s' --quiet", a, v);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    cli_expect(0, "frequent", "eval --model '%s' --data '%s' --report '%s'", f, b, rep);
    snprintf(args, sizeof args, "eval --model '%s' --data '%s' --report '%s'", v, b, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    /* every problem of b, those a lacks included, gets the vendor's pick of b: none is unmeasured, and the vendor
     * against itself is x1 */
    cr_assert(strstr(out, "unmeasured 0.0000") && strstr(out, "speedup x1.0000"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "diff '%s' '%s' --data '%s'", v, f, b);
    int rc = test_cli_run(args, &out);
    cr_assert(rc == 0 || rc == 1, "%d: %s", rc, out);
    cr_assert(strstr(out, "10 problems"), "%s", out);
    free(out);
    free(f), free(v), free(rep), free(a), free(b), free(dir);
}

/* A problem's category a model never saw is refused alike by predict and eval, listing the known values. */
Test(cli_newcomer, unseen_category_is_refused_alike_listing_the_known, .timeout = 120)
{
    static const char *const three[] = {"fp16", "bf16", "fp32"};
    char *dir = fresh_dir(), *a = table_write(dir, "a", 20, 0, 4, two_dtypes, 2);
    char *c = table_write(dir, "c", 9, 0, 4, three, 3);
    char *m = test_tmppath(".h5"), *rep = test_tmppath(".json"), args[4096], *out = NULL;
    snprintf(args, sizeof args, "train --data '%s' --model frequent --split none --out '%s' --quiet", a, m);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    const char *known = "column 'dtype': 'fp32' is not one of its 2 known values: bf16, fp16";
    snprintf(args, sizeof args, "eval --model '%s' --data '%s' --report '%s'", m, c, rep);
    cr_assert_eq(test_cli_run(args, &out), 1, "%s", out);
    cr_assert(strstr(out, known), "%s", out);
    cr_assert_eq(test_lines_count(out), 1, "%s", out);
    free(out);
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=16,N=16,dtype=fp32'", m);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, known), "%s", out);
    free(out);
    free(m), free(rep), free(a), free(c), free(dir);
}

/* heurist --version and heurist version: the project's version, the C API's and the commit built from. */
Test(cli_newcomer, version_names_the_project_api_and_commit)
{
    char *a = NULL, *b = NULL, api[32];
    cr_assert_eq(test_cli_run("--version", &a), 0, "%s", a);
    cr_assert_eq(test_cli_run("version", &b), 0, "%s", b);
    cr_assert_str_eq(a, b);
    cr_assert_eq(test_lines_count(a), 3, "%s", a);
    cr_assert(strncmp(a, "heurist ", 8) == 0 && a[8] >= '0' && a[8] <= '9', "%s", a);
    snprintf(api, sizeof api, "\napi %d\n", HEURIST_API_VERSION);
    cr_assert(strstr(a, api), "%s", a);
    const char *commit = strstr(a, "\ncommit ");
    cr_assert_not_null(commit, "%s", a);
    commit += 8;
    size_t n = strspn(commit, "0123456789abcdef");
    cr_assert(n >= 7 || strncmp(commit, "unknown", 7) == 0, "%s", a);
    free(a), free(b);
}

/* heurist data split: any table with its schema, by the values of a column or a seeded share of the problems (of
 * the schema's groups), into two tables that keep the rows as written, each with the schema beside it. */
Test(cli_newcomer, data_split_writes_train_and_test_tables_of_any_table, .timeout = 120)
{
    char *dir = fresh_dir(), *csv = table_write(dir, "t", 20, 0, 3, two_dtypes, 2), args[4096], *out = NULL, path[4096];
    snprintf(args, sizeof args, "data split --data '%s' --hold dtype=bf16 --out '%s/h'", csv, dir);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "20 problems: 10 training (60 rows)") && strstr(out, "10 held out (60 rows)"), "%s", out);
    free(out);
    /* every held-out row is bf16, every training row fp16, and each table loads with its schema */
    snprintf(args, sizeof args, "cd '%s' && zcat h.test.csv.gz | tail -n +2 | grep -vc ',bf16,'; zcat h.train.csv.gz | "
             "tail -n +2 | grep -c ',bf16,'; zcat h.train.csv.gz | head -1", dir);
    test_run_shell(args, &out); /* grep -c exits 1 when it counts 0 */
    cr_assert_str_eq(out, "0\n0\nM,N,dtype,tile,split,time_us,rank,family\n");
    free(out);
    snprintf(path, sizeof path, "%s/h.test.schema.json", dir);
    cr_assert(hr_file_exists(path));
    cli_expect(0, "problems         10", "data info --data '%s/h.test.csv.gz'", dir);
    /* a seeded share of the schema's groups (family: 4 values), the same for the same seed */
    cli_expect(0, "held out 2 of 4 values of family, seed 3",
               "data split --data '%s' --share 0.5 --seed 3 --out '%s/s'", csv, dir);
    cli_expect(0, "held out 10 of 20 problems",
               "data split --data '%s' --share 0.5 --seed 3 --group-by problem --out '%s/p'", csv, dir);
    /* errors name what is wrong */
    cli_expect(1, "'fp8' never appears in column 'dtype'",
               "data split --data '%s' --hold dtype=fp8 --out '%s/x'", csv, dir);
    cli_expect(1, "no column 'nosuch' (--hold)", "data split --data '%s' --hold nosuch=1 --out '%s/x'", csv, dir);
    cli_expect(2, "--share '1.5'", "data split --data '%s' --share 1.5 --out '%s/x'", csv, dir);
    snprintf(path, sizeof path, "%s/x.train.csv.gz", dir);
    cr_assert_not(hr_file_exists(path));
    free(csv), free(dir);
}

/* heurist model info: what a model file holds, as text and as JSON, and the same object in train's report. */
Test(cli_newcomer, model_info_shows_family_features_and_importance, .timeout = 120)
{
    char *dir = fresh_dir(), *csv = table_write(dir, "t", 20, 0, 4, two_dtypes, 2), args[4096], *out = NULL;
    char *model = test_tmppath(".h5"), *rep = test_tmppath(".json");
    snprintf(args, sizeof args, "train --data '%s' --model gbdt --config '{\"rounds\":5,\"min_data_in_leaf\":2}' "
             "--split none --threads 1 --out '%s' --report '%s' --quiet", csv, model, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "model info '%s'", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "family      gbdt, objective rank, rank_loss lambdarank"), "%s", out);
    cr_assert(strstr(out, "task        select over 8 kernels"), "%s", out);
    cr_assert(strstr(out, "source      benchmark table"), "%s", out);
    cr_assert(strstr(out, "features    6: M, log2_M, N, log2_N, dtype=bf16, dtype=fp16"), "%s", out);
    cr_assert(strstr(out, "importance  gain: "), "%s", out);
    cr_assert(strstr(out, " bytes)"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "model info --model '%s' --json", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cJSON *j = cJSON_Parse(out), *importance = cJSON_GetObjectItemCaseSensitive(j, "importance");
    cr_assert_not_null(j, "%s", out);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "family")->valuestring, "gbdt");
    cr_assert_gt(cJSON_GetObjectItemCaseSensitive(j, "file_bytes")->valuedouble, 0);
    double total = 0, last = 2;
    const cJSON *e;
    cJSON_ArrayForEach(e, importance)
    {
        double g = cJSON_GetObjectItemCaseSensitive(e, "gain")->valuedouble;
        cr_assert_leq(g, last, "%s", out);
        last = g;
        total += g;
    }
    cr_assert_float_eq(total, 1.0, 1e-9, "%s", out);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(importance, 0), "feature")->valuestring, "tile",
                     "%s", out);
    free(out);
    /* train's report holds the same object */
    char *text;
    size_t len;
    cr_assert_eq(hr_file_read_all(rep, &text, &len), HR_OK);
    cJSON *r = cJSON_Parse(text), *m = cJSON_GetObjectItemCaseSensitive(r, "model_info");
    cr_assert_not_null(m, "%s", text);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(m, "family")->valuestring, "gbdt");
    const cJSON *ri = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "importance"), 0);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ri, "feature")->valuestring, "tile", "%s", text);
    cr_assert_float_eq(cJSON_GetObjectItemCaseSensitive(ri, "gain")->valuedouble,
                       cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(importance, 0), "gain")->valuedouble, 1e-6);
    cJSON_Delete(r);
    cJSON_Delete(j);
    free(text);
    /* a Reformer's parameter count */
    snprintf(args, sizeof args, "train --data '%s' --model reformer --config '{\"epochs\":1}' --split none --threads 1 "
             "--out '%s' --quiet", csv, model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "model info '%s'", model);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "family      reformer"), "%s", out);
    long params = 0;
    const char *p = strstr(out, "params      ");
    cr_assert(p && sscanf(p, "params      %ld", &params) == 1 && params > 1000, "%s", out);
    free(out);
    cr_assert_eq(test_cli_run("model info /nonexistent.h5", &out), 1, "%s", out);
    cr_assert(strstr(out, "/nonexistent.h5"), "%s", out);
    free(out);
    free(model), free(rep), free(csv), free(dir);
}
