/* heurist cv: GroupKFold cross-validation of one family. */
#include <stdlib.h>

#include "cli/cli.h"

/* More folds than this is never a useful cross-validation; the data's geometries bound it further. */
#define CV_MAX_FOLDS 1000

static const cli_opt cv_opts[] = {
    CLI_OPT_DATA,
    CLI_OPT_SOURCES,
    CLI_OPT_GUARD,
    CLI_OPT_GROUP_BY,
    CLI_OPT_TASK,
    CLI_OPT_CAPS,
    CLI_OPT_SOLVER,
    {"model", "M", "model family: gbdt, reformer, transformer or seq2seq (required)"},
    CLI_OPT_CONFIG,
    {"folds", "K", "number of folds, 2..1000 and at most the data's distinct geometries (default 5)"},
    CLI_OPT_SEED,
    {"report", "R.json", "the report: fold means and a \"folds\" list (required)"},
    CLI_OPT_THREADS,
    CLI_OPT_VALID,
    CLI_OPT_QUIET,
    CLI_OPT_END,
};

const cli_spec cli_cv_spec = {
    "heurist cv --data FILE --model M --folds K --report R.json [options]",
    "GroupKFold cross-validation grouped by problem geometry (no shape is both trained and tested on);\n"
    "prints each fold's figures and their means.",
    cv_opts,
    NULL,
};

int cli_cmd_cv(int argc, char **argv, const dist_comm *comm)
{
    return cli_job_cv(argc, argv, comm, stdout);
}

int cli_job_cv(int argc, char **argv, const dist_comm *comm, FILE *sink)
{
    cli_args a;
    cli_train_opts c;
    int prc = cli_args_parse(argc, argv, &cli_cv_spec, &a);
    if (prc) return cli_args_exit(prc);
    long long k;
    const char *rep;
    if (cli_train_opts_parse(&a, "cv", 1, &c) || !(rep = cli_need(&a, "cv", "report")) ||
        cli_get_int(&a, "folds", 5, 2, CV_MAX_FOLDS, &k)) {
        cli_train_opts_free(&c);
        return 2;
    }
    cli_inputs in = {0};
    cli_train_opts_inputs(&a, &c, &in);
    int bad = cli_check_output("cv", "report", rep, &in);
    cli_inputs_free(&in);
    if (bad) {
        cli_train_opts_free(&c);
        return 2;
    }
    pipe_opts o = cli_train_opts_pipe(&c);
    o.config = c.config;
    pipe_ranks rk = cli_ranks_of(comm);
    o.ranks = &rk;
    pipe_dataset d;
    if (cli_ranks_load(comm, &c, &d)) {
        cli_train_opts_free(&c);
        return cli_fail("cv");
    }
    static const char *const own[] = {"folds", NULL};
    if (cli_ranks_check(comm, "cv", &a, &c, own, &d, NULL)) {
        pipe_dataset_free(&d);
        cli_train_opts_free(&c);
        return cli_fail(NULL);
    }
    pipe_result *folds = hr_calloc((size_t)k, sizeof *folds);
    int rc = 0;
    if (!folds || pipe_run_folds(&d, c.fam, (int)k, &o, folds, cli_print_fold, sink)) {
        rc = cli_fail("cv");
    } else if (pipe_ranks_is_root(&rk)) {
        cJSON *j = pipe_report_cv(&d, c.fam->name, (int)k, c.seed, folds);
        cJSON_AddNumberToObject(j, "ranks", rk.size);
        char *mean = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "metrics"));
        if (sink) fprintf(sink, "%s %d-fold GroupKFold mean: %s\n", c.fam->name, (int)k, mean);
        free(mean);
        if (pipe_json_write(rep, j)) rc = cli_fail("cv");
        cJSON_Delete(j);
    }
    for (int f = 0; folds && f < k; f++) pipe_result_free(&folds[f]);
    free(folds);
    pipe_dataset_free(&d);
    cli_train_opts_free(&c);
    return rc;
}
