/* Training, cv, compare and eval through the C API (include/heurist.h) as another program calls them: the same
 * options as the command line, the same model as `heurist train` makes, the report as text, and the command
 * line's messages for bad options. Only heurist.h and the tests' helpers, linked against libheurist. */
#define _POSIX_C_SOURCE 200809L /* this test sees only heurist.h, not the library's build flags */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heurist.h"
#include "helpers/testutil.h"

#define CONFIG "{\"objective\":\"rank\",\"rounds\":3}"

static char *gen_table(void)
{
    char *csv = test_tmppath(".csv"), cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' --problems 40 --seed 4 --out '%s'", HEURIST_GEN_GEMM_TABLE, csv);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    return csv;
}

static void remove_table(char *csv)
{
    remove(csv);
    strcpy(strstr(csv, ".csv"), ".schema.json");
    remove(csv);
    free(csv);
}

/* Both models rank every problem of the list alike, with the same scores. */
static void same_predictions(const char *a, const char *b)
{
    static const char *const problems[] = {"M=128,N=4096,K=4096,dtype=bf16", "M=1,N=11008,K=4096,dtype=fp16",
                                           "M=4096,N=4096,K=4096,dtype=fp32"};
    heurist_model *ma, *mb;
    cr_assert_eq(heurist_model_load(a, &ma), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_model_load(b, &mb), HEURIST_OK, "%s", heurist_last_error());
    int K = heurist_model_kernel_count(ma);
    cr_assert_eq(heurist_model_kernel_count(mb), K);
    int *ia = malloc((size_t)K * sizeof *ia), *ib = malloc((size_t)K * sizeof *ib), na, nb;
    float *sa = malloc((size_t)K * sizeof *sa), *sb = malloc((size_t)K * sizeof *sb);
    heurist_predictor *pa, *pb;
    cr_assert_eq(heurist_predictor_create(ma, &pa), HEURIST_OK);
    cr_assert_eq(heurist_predictor_create(mb, &pb), HEURIST_OK);
    for (size_t i = 0; i < sizeof problems / sizeof *problems; i++) {
        cr_assert_eq(heurist_predictor_rank(pa, problems[i], NULL, 0, K, ia, sa, &na), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_eq(heurist_predictor_rank(pb, problems[i], NULL, 0, K, ib, sb, &nb), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_eq(na, nb);
        cr_assert_arr_eq(ia, ib, (size_t)na * sizeof *ia, "%s", problems[i]);
        cr_assert_arr_eq(sa, sb, (size_t)na * sizeof *sa, "%s", problems[i]);
    }
    heurist_predictor_free(pa);
    heurist_predictor_free(pb);
    heurist_model_free(ma);
    heurist_model_free(mb);
    free(ia), free(ib), free(sa), free(sb);
}

Test(api_jobs, train_makes_the_model_heurist_train_makes_and_returns_its_report, .timeout = 600)
{
    char *csv = gen_table(), *cli_model = test_tmppath(".h5"), *api_model = test_tmppath(".h5"), *out, args[2048];
    snprintf(args, sizeof args, "train --data '%s' --model gbdt --config '" CONFIG "' --split random:0.3 --seed 2 "
             "--threads 1 --out '%s' --quiet", csv, cli_model);
    cr_assert_eq(test_run_heurist(args, 1, &out), 0, "%s", out);
    free(out);
    char *report = NULL;
    int rc = heurist_train(csv, "model=gbdt config=" CONFIG " split=random:0.3\nseed=2 threads=1 quiet=1", api_model,
                           &report);
    cr_assert_eq(rc, HEURIST_OK, "%s", heurist_last_error());
    cr_assert_not_null(report);
    cr_assert(strstr(report, "\"metrics\"") && strstr(report, "gbdt"), "%s", report);
    heurist_free(report);
    same_predictions(cli_model, api_model);
    /* the report may be left out; a config in quotes holds spaces */
    cr_assert_eq(heurist_train(csv, "model=gbdt config='{\"objective\": \"rank\", \"rounds\": 3}' split=random:0.3 seed=2 "
                               "threads=1 quiet=true", api_model, NULL), HEURIST_OK, "%s", heurist_last_error());
    same_predictions(cli_model, api_model);
    /* eval of the saved model on the same split */
    cr_assert_eq(heurist_eval(api_model, csv, "split=random:0.3 seed=2", &report), HEURIST_OK, "%s", heurist_last_error());
    cr_assert(strstr(report, "\"metrics\""), "%s", report);
    heurist_free(report);
    remove(cli_model), remove(api_model);
    free(cli_model), free(api_model);
    remove_table(csv);
}

Test(api_jobs, cv_and_compare_return_their_reports, .timeout = 600)
{
    char *csv = gen_table(), *report = NULL;
    /* the jobs leave the program's stdout alone: it goes to a file that must stay empty */
    char *captured = test_tmppath(".out");
    fflush(stdout);
    int saved = dup(1), fd = open(captured, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert(saved >= 0 && fd >= 0);
    cr_assert_eq(dup2(fd, 1), 1);
    close(fd);
    cr_assert_eq(heurist_cv(csv, "model=gbdt folds=2 config=" CONFIG " threads=1 quiet=1", &report), HEURIST_OK, "%s",
                 heurist_last_error());
    cr_assert(strstr(report, "\"folds\""), "%s", report);
    heurist_free(report);
    /* a report named in the params stays there, and is the text returned */
    char *path = test_tmppath(".json"), params[1024], text[1 << 16];
    snprintf(params, sizeof params, "model=frequent folds=2 threads=1 quiet=1 report='%s'", path);
    cr_assert_eq(heurist_cv(csv, params, &report), HEURIST_OK, "%s", heurist_last_error());
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    cr_assert_str_eq(report, text);
    heurist_free(report);
    remove(path);
    free(path);
    cr_assert_eq(heurist_compare(csv, "models=frequent,gbdt folds=2 config={\"gbdt\":" CONFIG "} threads=1 quiet=1",
                                 &report), HEURIST_OK, "%s", heurist_last_error());
    cr_assert(strstr(report, "frequent") && strstr(report, "gbdt"), "%s", report);
    heurist_free(report);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    struct stat st;
    cr_assert_eq(stat(captured, &st), 0);
    cr_assert_eq(st.st_size, 0, "the jobs wrote %lld bytes to stdout", (long long)st.st_size);
    remove(captured);
    free(captured);
    remove_table(csv);
}

Test(api_jobs, bad_options_are_einval_with_the_command_lines_message, .timeout = 300)
{
    char *csv = gen_table(), *model = test_tmppath(".h5"), *report = (char *)"untouched";
    struct {
        const char *params, *says;
    } bad[] = {
        {"model=gbdt colour=red", "unknown option 'colour'"},
        {"model=gbdt threads=many", "--threads 'many': expected an integer"},
        {"model=forest", "unknown --model 'forest'"},
        {"model=gbdt quiet=maybe", "quiet is a flag"},
        {"model=gbdt out=/tmp/x.h5", "out is the call's own argument"},
        {"model=gbdt seed", "'seed' is no name=value pair"},
        {"model=gbdt config={\"rounds\":3", "unbalanced braces"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(heurist_train(csv, bad[i].params, model, &report), HEURIST_EINVAL, "%s", bad[i].params);
        cr_assert(strstr(heurist_last_error(), bad[i].says) != NULL, "%s: %s", bad[i].params, heurist_last_error());
        cr_assert_null(report);
    }
    cr_assert_eq(heurist_train(NULL, "model=gbdt", model, NULL), HEURIST_EINVAL);
    cr_assert(strstr(heurist_last_error(), "data"), "%s", heurist_last_error());
    /* a data file that does not exist: the command's message, naming it */
    cr_assert_neq(heurist_train("/nonexistent/t.csv", "model=gbdt quiet=1", model, NULL), HEURIST_OK);
    cr_assert(strstr(heurist_last_error(), "/nonexistent/t.csv"), "%s", heurist_last_error());
    remove(model);
    free(model);
    remove_table(csv);
}
