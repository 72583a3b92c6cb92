/* cli: what the heurist-collect subcommands share: options, key lists, reason tallies, clocks. */
#ifndef HEURIST_COLLECT_CLI_H
#define HEURIST_COLLECT_CLI_H

#include <stdio.h>

/* The value of --name in argv, or NULL. */
const char *cli_opt(int argc, char **argv, const char *name);
int cli_flag(int argc, char **argv, const char *name);
/* The number given to --name (def when absent), checked to lie in [lo, hi]; 0, or -1 after printing a
 * one-line message naming the option. */
int cli_number(int argc, char **argv, const char *name, double def, double lo, double hi, double *out);
/* Checks every argument is one of the known "--name" options (values follow options not in flags);
 * 0, or -1 after printing the offending argument. */
int cli_check(int argc, char **argv, const char *const *known, const char *const *flags);

/* Problem keys of a file, one a line (blank lines and lines starting with '#' are skipped; "key=..." keeps
 * the key). 0, or a negative COLLECT_E* code. */
int cli_keys_read(const char *path, char ***keys, int *n);
void cli_keys_free(char **keys, int n);

/* Counts of reasons (static strings, compared by text). */
typedef struct cli_tally {
    const char *why[32];
    long count[32];
    int n;
} cli_tally;
void cli_tally_add(cli_tally *t, const char *why);
void cli_tally_print(const cli_tally *t, FILE *f, const char *title);

double cli_now_s(void);
/* 1 when the paths a and b name one file: the same device and inode where both exist, else the same text (an
 * output not written yet), so that a command refuses an output that would be written over one of its inputs. */
int cli_same_file(const char *a, const char *b);
/* 1, after a line on stderr naming both ("CMD: --out X would be written over --table X"), when one of the nw
 * outputs (option, path; a NULL or empty path: none) names the same file as one of the nr inputs given by another
 * option; else 0. */
int cli_written_over(const char *cmd, const char *const writes[][2], int nw, const char *const reads[][2], int nr);

int cmd_noise(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_conv(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_verify_gemm(int argc, char **argv);
int cmd_gemm(int argc, char **argv);

#endif
