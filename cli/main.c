/* heurist: command-line entry point; dispatches to one file per command. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/h5.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"data", cli_cmd_data, "data info|cache --data FILE: summarise a database or write its HDF5 cache"},
    {"train", cli_cmd_train, "train a model on a split and save it (--data --task --model --out)"},
    {"cv", cli_cmd_cv, "GroupKFold cross-validation of one model family (--folds K --report R.json)"},
    {"compare", cli_cmd_compare, "several families on the same folds or split (--models a,b --out DIR)"},
    {"eval", cli_cmd_eval, "evaluate a saved model (--model --data [--split] --report)"},
    {"predict", cli_cmd_predict, "rank kernels or predict parameters for one problem key"},
    {"diff", cli_cmd_diff, "acceptance gate: OLD NEW --data FILE [--split]; exit 0 pass, 1 fail, 2 error"},
    {"export", cli_cmd_export, "a model as a standalone C runtime (--format c) or LightGBM text (--format lightgbm)"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: heurist <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nheurist CMD --help (or heurist help CMD) lists a command's options and defaults.\n");
}

int main(int argc, char **argv)
{
    hr_h5_quiet();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    int help = strcmp(argv[1], "help") == 0;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || (help && argc == 2)) {
        usage(stdout);
        return 0;
    }
    /* heurist help CMD: the command's own --help */
    const char *name = help ? argv[2] : argv[1];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(name, commands[i].name) != 0) continue;
        if (help) {
            char *h[] = {(char *)"--help", NULL};
            return commands[i].run(1, h);
        }
        return commands[i].run(argc - 2, argv + 2);
    }
    fprintf(stderr, "heurist: unknown command '%s' (see heurist --help)\n", name);
    return 2;
}
