/* heurist: command-line entry point; dispatches to one file per command. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/version.h"
#include "core/h5.h"
#include "heurist.h"

/* A command runs on rank 0 alone (run), or on every rank of an MPI job (run_ranks). */
typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    int (*run_ranks)(int argc, char **argv, const dist_comm *comm);
    const char *summary;
    const cli_spec *spec; /* its options, for the reference (heurist help --markdown) */
} command;

static const command commands[] = {
    {"data", cli_cmd_data, NULL,
     "data info|cache|split --data FILE: summarise a database, write its HDF5 cache or split a table", &cli_data_spec},
    {"train", NULL, cli_cmd_train, "train a model on a split and save it (--data --task --model --out)", &cli_train_spec},
    {"cv", NULL, cli_cmd_cv, "GroupKFold cross-validation of one model family (--folds K --report R.json)",
     &cli_cv_spec},
    {"compare", NULL, cli_cmd_compare, "several families on the same folds or split (--models a,b --out DIR)",
     &cli_compare_spec},
    {"eval", cli_cmd_eval, NULL, "evaluate a saved model (--model --data [--split] --report)", &cli_eval_spec},
    {"predict", cli_cmd_predict, NULL, "rank kernels or predict parameters for one problem key", &cli_predict_spec},
    {"diff", cli_cmd_diff, NULL, "acceptance gate: OLD NEW --data FILE [--split]; exit 0 pass, 1 fail, 2 error",
     &cli_diff_spec},
    {"export", cli_cmd_export, NULL, "a model as a standalone C runtime (--format c) or LightGBM text (--format lightgbm)",
     &cli_export_spec},
    {"model", cli_cmd_model, NULL, "model info M.h5 [--json]: what a model file holds (family, task, features, importance)",
     &cli_model_spec},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

/* heurist help --markdown: the reference docs/cli.md */
static int markdown(void)
{
    const cli_spec *specs[N_COMMANDS];
    for (int i = 0; i < N_COMMANDS; i++) specs[i] = commands[i].spec;
    cli_help_markdown(stdout, specs, N_COMMANDS);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

/* heurist --version: the project's version, the C API's (include/heurist.h) and the commit it was built from */
static int version(void)
{
    printf("heurist %s\napi %d\ncommit %s\n", HEURIST_VERSION, HEURIST_API_VERSION, HEURIST_GIT_COMMIT);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: heurist <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-8s %s\n", "version", "the version, the C API's version and the commit built from (also --version)");
    fprintf(f, "\nheurist CMD --help (or heurist help CMD) lists a command's options and defaults; heurist help --markdown\n"
               "prints every command's and every family's options as docs/cli.md holds them.\n");
}

static int dispatch(int argc, char **argv, const dist_comm *comm)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    int help = strcmp(argv[1], "help") == 0;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || (help && argc == 2)) {
        usage(stdout);
        return 0;
    }
    if (help && strcmp(argv[2], "--markdown") == 0) return dist_comm_rank(comm) == 0 ? markdown() : 0;
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)
        return dist_comm_rank(comm) == 0 ? version() : 0;
    /* heurist help CMD: the command's own --help */
    const char *name = help ? argv[2] : argv[1];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(name, commands[i].name) != 0) continue;
        char *h[] = {(char *)"--help", NULL};
        int cargc = help ? 1 : argc - 2;
        char **cargv = help ? h : argv + 2;
        if (commands[i].run_ranks) return commands[i].run_ranks(cargc, cargv, comm);
        /* a one-process command under mpirun: rank 0 does it, the others have nothing to do */
        return dist_comm_rank(comm) == 0 ? commands[i].run(cargc, cargv) : 0;
    }
    fprintf(stderr, "heurist: unknown command '%s' (see heurist --help)\n", name);
    return 2;
}

int main(int argc, char **argv)
{
    hr_h5_quiet();
    dist_comm *comm = NULL;
    if (dist_comm_init(&argc, &argv, &comm)) {
        fprintf(stderr, "heurist: %s\n", hr_last_error());
        return 1;
    }
    int rc = dispatch(argc, argv, comm);
    if (rc != 0 && dist_comm_size(comm) > 1) {
        /* the other ranks may be waiting for this one in a collective: end them all, never hang */
        fprintf(stderr, "heurist: rank %d of %d failed (exit status %d): ending every rank\n", dist_comm_rank(comm),
                dist_comm_size(comm), rc);
        fflush(stderr);
        dist_comm_abort(comm, rc);
    }
    dist_comm_free(comm);
    return rc;
}
