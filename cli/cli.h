/* cli: the `heurist` command line (see shared CONTRACT.md). Each command lives in its own file and
 * returns a process exit status; only main() exits. */
#ifndef HEURIST_CLI_H
#define HEURIST_CLI_H

#include "core/core.h"

#define CLI_MAX_OPTS 32

/* Parsed "--name value" / "--flag" options of one command. */
typedef struct cli_args {
    int n;
    const char *name[CLI_MAX_OPTS];
    const char *value[CLI_MAX_OPTS]; /* NULL for flags */
} cli_args;

/* Parses argv against `spec`: a NULL-terminated list of "name" (takes a value) or "name!" (flag).
 * Prints a one-line error and returns nonzero on an unknown or incomplete option. */
int cli_args_parse(int argc, char **argv, const char *const *spec, cli_args *out);
const char *cli_get(const cli_args *a, const char *name);
int cli_has(const cli_args *a, const char *name);
/* Required option: prints "heurist CMD: --name is required" when missing. */
const char *cli_need(const cli_args *a, const char *cmd, const char *name);
/* Integer option with default; prints an error and returns nonzero if malformed. */
int cli_get_int(const cli_args *a, const char *name, long long def, long long *out);
/* --valid-fraction F, the share of training rows held back for early stopping, as pipe_opts.valid_fraction:
 * absent -> 0 (the default 0.1), F in (0, 1) -> F, 0 -> -1 (none: every training row is fitted and the
 * model trains its full budget). Nonzero return (message printed) on a bad value. */
int cli_get_valid_fraction(const cli_args *a, double *out);

/* Prints "heurist: <message>" from the last error, returns 1. */
int cli_fail(const char *context);

struct pipe_dataset;
struct pipe_opts;
struct pipe_result;
struct model_family;
/* Runs k GroupKFold folds of one family (cmd_train.c); prints one line per fold. */
int cli_run_folds(const struct pipe_dataset *d, const struct model_family *fam, int k, const struct pipe_opts *o,
                  struct pipe_result *folds);

int cli_cmd_data(int argc, char **argv);
int cli_cmd_train(int argc, char **argv);
int cli_cmd_cv(int argc, char **argv);
int cli_cmd_compare(int argc, char **argv);
int cli_cmd_eval(int argc, char **argv);
int cli_cmd_predict(int argc, char **argv);
int cli_cmd_export(int argc, char **argv);

#endif
