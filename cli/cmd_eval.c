/* heurist eval: a saved model's figures on a database, or on its held-out split. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const cli_opt eval_opts[] = {
    {"model", "MODEL.h5", "the saved model (required)"},
    CLI_OPT_DATA,
    CLI_OPT_SOURCES,
    CLI_OPT_GUARD,
    CLI_OPT_GROUP_BY,
    CLI_OPT_CAPS,
    {"solver", "S", "solver of a perf-db (default: the model's)"},
    {"split", "random:F[:seed=S]", "evaluate on this split's test rows (default: every row)"},
    {"seed", "N", "seed of --split when it names none (default 0)"},
    {"report", "R.json", "the report object (required)"},
    {"md", "R.md", "also the report's tables in markdown (a selection model on data with the vendor's ranking: its figures against the vendor's pick, shortlists, the guard's curve and every slice)"},
    CLI_OPT_QUIET,
    CLI_OPT_END,
};

const cli_spec cli_eval_spec = {
    "heurist eval --model MODEL.h5 --data FILE [--split random:F] --report R.json",
    "Evaluates a saved model with the contract's metrics; the same --split and --seed as at training\n"
    "give the same test rows.",
    eval_opts,
    NULL,
};

int cli_cmd_eval(int argc, char **argv)
{
    return cli_job_eval(argc, argv, stdout);
}

int cli_job_eval(int argc, char **argv, FILE *sink)
{
    cli_args a;
    int prc = cli_args_parse(argc, argv, &cli_eval_spec, &a);
    if (prc) return cli_args_exit(prc);
    const char *mpath = cli_need(&a, "eval", "model"), *dpath = cli_need(&a, "eval", "data");
    const char *rep = cli_need(&a, "eval", "report");
    long long seed;
    int precisions;
    float guard;
    int guard_top;
    const char *md = cli_get(&a, "md");
    if (!mpath || !dpath || !rep || cli_get_int(&a, "seed", 0, LLONG_MIN, LLONG_MAX, &seed) ||
        cli_get_precisions(&a, "eval", &precisions) || cli_get_guard(&a, "eval", &guard, &guard_top))
        return 2;
    cli_inputs in = {0};
    cli_inputs_add(&in, "--model", mpath);
    cli_inputs_add_data(&in, dpath, cli_get(&a, "schema"), cli_get(&a, "caps"));
    cli_inputs_add(&in, "--sources", cli_get(&a, "sources"));
    int bad = cli_check_output("eval", "report", rep, &in) || (md && cli_check_output("eval", "md", md, &in));
    cli_inputs_free(&in);
    if (bad) return 2;
    hr_log log = hr_log_stderr(HR_LOG_WARN);
    model *m;
    if (model_load(mpath, &m)) return cli_fail("eval");
    m->select_guard = guard;
    m->select_guard_top = guard_top;
    pipe_dataset d;
    /* the data is read for the model's task (a tune model of a table reads its table as tune data) and, for a tune
     * model, its solver */
    const char *task = model_task_name(m->task);
    const char *solver = m->solver ? m->solver : cli_get(&a, "solver");
    pipe_load l = {.task = task, .solver = solver, .schema = cli_get(&a, "schema"), .caps = cli_get(&a, "caps"),
                   .log = &log, .precisions = precisions, .sources = cli_get(&a, "sources"), .source = cli_get(&a, "source")};
    if (pipe_dataset_open(dpath, &l, &d) || pipe_dataset_group_by(&d, cli_get(&a, "group-by"))) {
        pipe_dataset_free(&d);
        model_free(m);
        return cli_fail("eval");
    }
    int rc = 0;
    data_split s;
    memset(&s, 0, sizeof s);
    char desc[64] = "all";
    int *rows = NULL, n_rows = d.n;
    if (cli_get(&a, "split")) {
        if (pipe_split_random(&d, cli_get(&a, "split"), (uint64_t)seed, &s, desc, sizeof desc)) rc = cli_fail("eval");
        rows = s.test;
        n_rows = s.n_test;
    } else {
        rows = hr_malloc((size_t)(d.n > 0 ? d.n : 1) * sizeof *rows);
        for (int i = 0; rows && i < d.n; i++) rows[i] = i;
    }
    pipe_result r;
    memset(&r, 0, sizeof r);
    if (!rc && !rows) rc = cli_fail("eval");
    if (!rc && pipe_evaluate(&d, m, rows, n_rows, &r)) {
        hr_error_wrap(HR_EINVAL, "model %s on %s", mpath, dpath);
        rc = cli_fail("eval");
    }
    if (!rc) {
        r.train_seconds = m->train_seconds;
        cli_print_result(sink, m->family->name, &r);
        cJSON *j = pipe_report_object(&d, m->family->name, desc, &r);
        if (pipe_json_write(rep, j) || (md && pipe_report_md(md, &d, m->family->name, desc, &r))) rc = cli_fail("eval");
        cJSON_Delete(j);
    }
    if (!cli_get(&a, "split")) free(rows);
    pipe_result_free(&r);
    data_split_free(&s);
    pipe_dataset_free(&d);
    model_free(m);
    return rc;
}
