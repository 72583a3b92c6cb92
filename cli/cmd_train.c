/* heurist train: one family on a random hold-out split, the model saved. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const cli_opt train_opts[] = {
    CLI_OPT_DATA,
    CLI_OPT_GROUP_BY,
    CLI_OPT_TASK,
    CLI_OPT_CAPS,
    CLI_OPT_SOLVER,
    {"model", "M", "model family: gbdt, reformer, transformer or seq2seq (required)"},
    CLI_OPT_CONFIG,
    {"split", "random:F[:seed=S]|none", "held-out test share in [0, 1) (default random:0.2, seed --seed); random:0 or none: train on every problem, no validation rows, figures on the training problems"},
    CLI_OPT_SEED,
    {"out", "MODEL.h5", "where the model is saved (required)"},
    {"report", "R.json", "the run's report object (contract JSON)"},
    CLI_OPT_THREADS,
    {"checkpoint", "PATH", "checkpoint after every epoch (reformer, transformer, seq2seq)"},
    {"resume", NULL, "continue from --checkpoint when it exists"},
    {"init-model", "MODEL.h5", "start from a saved model of the same task (gbdt)"},
    CLI_OPT_VALID,
    CLI_OPT_QUIET,
    CLI_OPT_END,
};

const cli_spec cli_train_spec = {
    "heurist train --data FILE --model M --out MODEL.h5 [options]",
    "Trains one model family on the training rows of a random split, evaluates it on the held-out rows and\n"
    "saves it; prints the contract's figures.",
    train_opts,
    NULL,
};

int cli_cmd_train(int argc, char **argv, const dist_comm *comm)
{
    return cli_job_train(argc, argv, comm, stdout);
}

int cli_job_train(int argc, char **argv, const dist_comm *comm, FILE *sink)
{
    cli_args a;
    cli_train_opts c;
    int prc = cli_args_parse(argc, argv, &cli_train_spec, &a);
    if (prc) return cli_args_exit(prc);
    if (cli_train_opts_parse(&a, "train", 1, &c)) {
        cli_train_opts_free(&c);
        return 2;
    }
    const char *out = cli_need(&a, "train", "out"), *rep = cli_get(&a, "report");
    pipe_opts o = cli_train_opts_pipe(&c);
    o.config = c.config;
    o.save_path = out;
    o.checkpoint = cli_get(&a, "checkpoint");
    o.resume = cli_has(&a, "resume");
    o.init_model = cli_get(&a, "init-model");
    /* every output's folder is checked before the data is loaded and the model trained, and no output may be
     * an input or another output */
    cli_inputs in = {0};
    cli_train_opts_inputs(&a, &c, &in);
    cli_inputs_add(&in, "--init-model", o.init_model);
    int bad = !out || cli_check_output("train", "out", out, &in);
    cli_inputs_add(&in, "--out", out);
    bad = bad || cli_check_output("train", "report", rep, &in);
    cli_inputs_add(&in, "--report", rep);
    bad = bad || cli_check_output("train", "checkpoint", o.checkpoint, &in);
    cli_inputs_free(&in);
    if (bad) {
        cli_train_opts_free(&c);
        return 2;
    }
    if (pipe_opts_check(c.fam, &o)) {
        cli_train_opts_free(&c);
        return cli_fail("train");
    }
    /* gbdt spreads its training rows over the ranks (every rank loads the data, splits it the same way and
     * trains on its share; rank 0 evaluates and writes); the other families train on rank 0 alone. Under mpirun
     * a single rank takes the same path, so the model is the same for every N, 1 included. */
    int rank = dist_comm_rank(comm), shared = dist_comm_is_mpi(comm) && pipe_family_shares_rows(c.fam);
    cli_reduce_stats stats = {comm, 0, 0, 0};
    hr_comm shard = cli_ranks_comm(&stats);
    if (shared) o.shard = &shard;
    if (rank != 0 && !shared) {
        cli_train_opts_free(&c);
        return 0;
    }
    hr_log quiet = hr_log_silent();
    if (rank != 0) o.log = &quiet;
    pipe_dataset d;
    if (cli_ranks_load(comm, &c, &d)) {
        cli_train_opts_free(&c);
        return cli_fail("train");
    }
    data_split s;
    char desc[64];
    int rc = 0;
    if (pipe_split_random(&d, cli_get(&a, "split") ? cli_get(&a, "split") : "random:0.2", c.seed, &s, desc, sizeof desc)) {
        pipe_dataset_free(&d);
        cli_train_opts_free(&c);
        return cli_fail("train");
    }
    /* the ranks that share the training rows agree on the run before they work on it */
    static const char *const own[] = {"split", "init-model", "resume", "checkpoint", NULL};
    if (shared && cli_ranks_check(comm, "train", &a, &c, own, &d, &s)) {
        data_split_free(&s);
        pipe_dataset_free(&d);
        cli_train_opts_free(&c);
        return cli_fail(NULL);
    }
    hr_log_printf(o.log, HR_LOG_INFO, "train: %s on %s, %d training / %d test problems (%s), %d threads%s\n",
                  c.fam->name, d.name, s.n_train, s.n_test, desc, c.threads,
                  shared ? ", the training rows shared by the ranks" : "");
    pipe_result r;
    model *m = NULL;
    if (pipe_run(&d, &s, c.fam, &o, &r, &m)) {
        rc = cli_fail("train");
    } else if (rank == 0) {
        if (shared)
            hr_log_printf(o.log, HR_LOG_INFO, "train: rank 0: %ld all-reduces of %.1f MB in all, %.1f s in them\n",
                          stats.calls, stats.values * 8 / 1e6, stats.seconds);
        cli_print_result(sink, c.fam->name, &r);
        if (sink) fprintf(sink, "model written to %s\n", out);
        if (rep) {
            cJSON *j = pipe_report_object(&d, c.fam->name, desc, &r);
            cJSON_AddNumberToObject(j, "ranks", dist_comm_size(comm));
            /* what the saved model holds, as heurist model info --json prints it */
            cJSON *info = m ? pipe_model_info(m, out) : NULL;
            if (info) cJSON_AddItemToObject(j, "model_info", info);
            if (pipe_json_write(rep, j)) rc = cli_fail("train");
            cJSON_Delete(j);
        }
    }
    model_free(m);
    pipe_result_free(&r);
    data_split_free(&s);
    pipe_dataset_free(&d);
    cli_train_opts_free(&c);
    return rc;
}
