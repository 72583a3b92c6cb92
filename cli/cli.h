/* cli: the `heurist` command line (docs/contract.md). One file per command, each returning a process
 * exit status (only main() exits); the work itself is pipeline/'s. args.c holds what the commands share:
 * option parsing against a described option table (which is also what `--help` prints), the options of the
 * training commands, and the checks of output paths made before any training starts. */
#ifndef HEURIST_CLI_H
#define HEURIST_CLI_H

#include <cJSON.h>
#include <stdint.h>

#include "core/core.h"
#include "dist/dist.h"
#include "pipeline/pipeline.h"

#define CLI_MAX_OPTS 32
/* --threads above this is refused: more threads than any machine's cores only exhausts memory. */
#define CLI_MAX_THREADS 1024

/* One option of a command: "--name VALUE" (value names the argument) or "--name" (value NULL: a flag). */
typedef struct cli_opt {
    const char *name;
    const char *value;
    const char *help; /* one line, with the default when there is one */
} cli_opt;

/* A command's options and its help text. */
typedef struct cli_spec {
    const char *usage;    /* "heurist train --data FILE ..." */
    const char *about;    /* what the command does, one or two lines */
    const cli_opt *opts;  /* terminated by an entry with name NULL */
    const char *notes;    /* printed after the options; may be NULL */
} cli_spec;

/* Options shared by several commands, for their cli_opt tables. */
/* --data comes with --schema, a benchmark table's schema (data/table.h), and --precision, the classes of a
 * find-db's FP32 problems (data/precision.c) */
#define CLI_OPT_DATA                                                                                             \
    {"data", "FILE", "find-db (.fdb.txt[.bz2]), perf-db (.db[.bz2]), benchmark table (.csv/.tsv[.gz|.bz2]) or dataset cache (.h5)"}, \
    {"schema", "JSON", "a benchmark table's schema, inline JSON or a file (default: FILE.schema.json beside the table)"}, \
    {"precision", "LIST", "find-db: the precision classes each FP32 problem is asked under, strict,tf32,conversion or all (default tf32)"}
/* --sources and --source: where a selection dataset's problems come from, for the reports' figures by source
 * (pipe_load) */
#define CLI_OPT_SOURCES                                                                                           \
    {"sources", "FILE", "selection data: each problem's source for the report's slices, a key list (KEY SOURCE lines, or a table with a key and a source, network or family column)"}, \
    {"source", "TAG", "the source of every problem --sources does not name (default -; alone: of every problem)"}
/* --guard, --guard-top: the vendor guard of the evaluated models (data_portable_guard; a tuner's, model_predict_tune) */
#define CLI_OPT_GUARD                                                                                             \
    {"guard", "M", "on data with the vendor's ranking: the model's pick (a tune model's decoded configuration, scored by its log-probability) replaces the vendor's first pick only where its score beats the vendor pick's by M (default 0: always)"}, \
    {"guard-top", "N", "on data with the vendor's ranking: the model picks among the vendor's first N candidates only (default 0: any kernel; not a tune model's)"}
/* --group-by: what every split holds out whole (pipe_dataset_group_by) */
#define CLI_OPT_GROUP_BY                                                                                          \
    {"group-by", "problem|COLUMN", "what splits hold out whole: problem (each alone: in-source) or the schema's group column (its default)"}
#define CLI_OPT_TASK {"task", "select|tune", "the task; checked against the data (default: the data's own; a table tunes when asked)"}
#define CLI_OPT_CAPS {"caps", "FILE", "--task tune on a table: its capability file (default: FILE.caps.json beside the table)"}
#define CLI_OPT_SOLVER {"solver", "S", "solver whose tuned parameters a perf-db provides (tune)"}
#define CLI_OPT_CONFIG {"config", "JSON", "family options, inline JSON or a file holding it (default {}; listed below)"}
#define CLI_OPT_SEED {"seed", "N", "seed of the split, the validation rows and training (default 0)"}
#define CLI_OPT_THREADS {"threads", "N", "threads for loading the data and training, 0..1024 (default 0: all cores)"}
#define CLI_OPT_VALID {"valid-fraction", "F", "share of training rows held back for early stopping, [0, 1) (default 0.1, 0 under a split of 0; 0: none)"}
#define CLI_OPT_QUIET {"quiet", NULL, "only warnings and errors on stderr"}
#define CLI_OPT_END {NULL, NULL, NULL}

/* Parsed "--name value" / "--flag" options of one command. */
typedef struct cli_args {
    int n;
    const char *name[CLI_MAX_OPTS];
    const char *value[CLI_MAX_OPTS]; /* NULL for flags */
} cli_args;

/* Parses argv against spec->opts. Returns 0 when parsed; CLI_HELP when --help (or -h) was given, after
 * printing the help on stdout; CLI_ERROR after printing a one-line error on stderr. */
enum { CLI_ERROR = -1, CLI_HELP = 1 };
int cli_args_parse(int argc, char **argv, const cli_spec *spec, cli_args *out);
/* The exit status for a nonzero cli_args_parse result: 0 after help, 2 after an error. */
int cli_args_exit(int parse_rc);
/* Prints the help of a command to f. */
void cli_help_print(FILE *f, const cli_spec *spec);
/* The families that take --config options, by name (gbdt, reformer, seq2seq, transformer): the order their options
 * are listed in after a command's own, in --help and in docs/cli.md. Returns how many (at most CLI_MAX_FAMILIES). */
#define CLI_MAX_FAMILIES 16
int cli_families_with_options(const model_family **out);

const char *cli_get(const cli_args *a, const char *name);
int cli_has(const cli_args *a, const char *name);
/* Required option: prints "heurist CMD: --name is required" when missing. */
const char *cli_need(const cli_args *a, const char *cmd, const char *name);
/* Integer option with a default, in [lo, hi]; prints an error naming the option and the range and
 * returns nonzero when malformed or out of range. */
int cli_get_int(const cli_args *a, const char *name, long long def, long long lo, long long hi, long long *out);
/* --valid-fraction F, the share of training rows held back for early stopping, as pipe_opts.valid_fraction:
 * absent -> 0 (the default 0.1), F in (0, 1) -> F, 0 -> -1 (none: every training row is fitted and the
 * model trains its full budget). Nonzero return (message printed) on a bad value. */
int cli_get_valid_fraction(const cli_args *a, double *out);
/* --config: inline JSON or a file holding a JSON object; *out NULL when absent. Nonzero (message printed)
 * when neither. */
int cli_get_config(const cli_args *a, const char *cmd, cJSON **out);
/* The files a command reads, which no output may replace: each with the option that names it. */
#define CLI_MAX_INPUTS 16
typedef struct cli_inputs {
    int n;
    char *opt[CLI_MAX_INPUTS];  /* "--data", "its schema", ... (owned) */
    char *path[CLI_MAX_INPUTS]; /* (owned) */
} cli_inputs;
/* Adds path (NULL, or inline JSON starting with '{': nothing) as read through opt. */
void cli_inputs_add(cli_inputs *in, const char *opt, const char *path);
/* Adds --data and what it brings along: --schema and --caps when given as files, else a table's FILE.schema.json
 * and FILE.caps.json beside it, a find-db's FILE.heuristic.txt[.bz2] beside it. */
void cli_inputs_add_data(cli_inputs *in, const char *data, const char *schema, const char *caps);
void cli_inputs_free(cli_inputs *in);
/* Checks that an output file can be created: its folder exists and is writable, the path is not a folder, and
 * it is not one of the inputs (in may be NULL), compared by device and inode. Prints "heurist CMD: --opt PATH:
 * reason" and returns nonzero otherwise. NULL path: nothing. */
int cli_check_output(const char *cmd, const char *opt, const char *path, const cli_inputs *in);
/* The same for a file named `name` that a command writes into the folder given by --opt. */
int cli_check_output_in(const char *cmd, const char *opt, const char *dir, const char *name, const cli_inputs *in);

/* Options every training command shares (train, cv, compare). */
typedef struct cli_train_opts {
    const char *data, *task, *solver;
    const char *schema;      /* --schema: a benchmark table's schema, or NULL */
    const char *caps;        /* --caps: a table's capability file for --task tune, or NULL */
    const char *group_by;    /* --group-by (pipe_dataset_group_by), or NULL */
    const model_family *fam; /* --model, when asked for */
    cJSON *config;           /* owned */
    uint64_t seed;
    int threads;
    double valid_fraction;   /* pipe_opts.valid_fraction */
    int precisions;          /* --precision: data_load_opts.precisions */
    const char *sources, *source; /* --sources, --source: pipe_load's */
    float guard;             /* --guard: pipe_opts.guard */
    int guard_top;           /* --guard-top: pipe_opts.guard_top */
    hr_log log;
} cli_train_opts;

/* --guard M as a margin >= 0 and --guard-top N (0 when absent). Nonzero (message printed) on a bad value. */
int cli_get_guard(const cli_args *a, const char *cmd, float *margin, int *top);
/* --precision LIST as data_load_opts.precisions (0 when absent). Nonzero (message printed) on a bad list. */
int cli_get_precisions(const cli_args *a, const char *cmd, int *out);
/* Reads the shared options; need_model: --model is required. Nonzero (message printed) on a bad option. */
int cli_train_opts_parse(const cli_args *a, const char *cmd, int need_model, cli_train_opts *c);
void cli_train_opts_free(cli_train_opts *c);
/* The files the shared options read: --data with its schema and caps, --config when it names a file. */
void cli_train_opts_inputs(const cli_args *a, const cli_train_opts *c, cli_inputs *in);
/* The pipe_opts of a run from the shared options (config, save path and the rest left empty). */
pipe_opts cli_train_opts_pipe(const cli_train_opts *c);

/* Prints one result line (pipe_result_format) on sink (NULL: nothing). */
void cli_print_result(FILE *sink, const char *name, const pipe_result *r);
/* A pipe_fold_fn printing each fold's result line on ctx, a FILE * (NULL: nothing). */
void cli_print_fold(void *ctx, const char *name, int fold, int k, const pipe_result *r);

/* The pipeline's view of the job's ranks (rank, size, a gather through comm); comm must outlive it. */
pipe_ranks cli_ranks_of(const dist_comm *comm);
/* What the all-reduces of a data-parallel training run cost this rank: calls, int64 values, and seconds inside
 * them (waiting for the other ranks included). */
typedef struct cli_reduce_stats {
    const dist_comm *comm;
    long calls;
    double values, seconds;
} cli_reduce_stats;
/* The ranks as the collectives that data-parallel training calls: an all-reduce through st->comm that adds
 * to *st; st must outlive the result. */
hr_comm cli_ranks_comm(cli_reduce_stats *st);
/* pipe_dataset_load of the shared options' data, grouped as --group-by asks, on every rank (each holds the whole
 * dataset). */
int cli_ranks_load(const dist_comm *comm, const cli_train_opts *c, pipe_dataset *d);

/* Ranks agree before they work: what each rank was given, as 64-bit digests (FNV-1a), compared with rank 0's. */
typedef enum cli_agree_part {
    CLI_AGREE_OPTIONS, /* the command, family(ies), task, solver, the config, the split or folds, --valid-fraction */
    CLI_AGREE_DATA,    /* every row: problems, features, kernels and measurements or parameter values */
    CLI_AGREE_SEED,
    CLI_AGREE_SPLIT,   /* the training and test rows (train; cv and compare draw theirs from the data and seed) */
    CLI_AGREE_PARTS,
} cli_agree_part;
/* Where the ranks' digests start (FNV-1a's offset basis; pipe_digest, pipe_digest_str continue from it). */
#define CLI_DIGEST_INIT 1469598103934665603ULL
/* The digest of a loaded dataset's rows (CLI_AGREE_DATA). */
uint64_t cli_digest_dataset(const pipe_dataset *d);
/* Collective over every rank of comm (nothing on one process): each rank's digests (CLI_AGREE_PARTS) are compared
 * with rank 0's; when a part differs anywhere, every rank returns HR_EINVAL with one line naming the lowest rank
 * that differs and the part ("ranks disagree: rank 1's options differ from rank 0's (...)"). */
int cli_ranks_agree(const dist_comm *comm, const char *cmd, const uint64_t digest[CLI_AGREE_PARTS]);
/* cli_ranks_agree on a training command's run: the shared options (c) and the command's own (the values of the
 * options named in `opts`, NULL-terminated), the loaded data d, the split s (NULL: the folds follow from the data
 * and the seed) and the seed. Prints nothing; HR_EINVAL with the message above. */
int cli_ranks_check(const dist_comm *comm, const char *cmd, const cli_args *a, const cli_train_opts *c,
                    const char *const *opts, const pipe_dataset *d, const data_split *s);

/* Prints "heurist CONTEXT: <message>" from the last error, returns 1. */
int cli_fail(const char *context);
/* A bad option's one-line message: recorded as the thread's error (HR_EINVAL), so that the C API's jobs
 * (api/jobs.c) return the command line's message, and printed on stderr; returns 1. */
int cli_complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Each command's options and help, for --help and for the reference docs/cli.md (cli_help_markdown). */
extern const cli_spec cli_data_spec, cli_train_spec, cli_cv_spec, cli_compare_spec, cli_eval_spec, cli_predict_spec,
    cli_diff_spec, cli_export_spec, cli_model_spec;
/* docs/cli.md: every command's usage, options and defaults, then every family's --config options, as Markdown, from
 * the same tables --help prints (`heurist help --markdown`). specs (n) in the order the commands are listed. */
void cli_help_markdown(FILE *f, const cli_spec *const *specs, int n);

int cli_cmd_data(int argc, char **argv);
/* The commands that every rank of an MPI job runs (the others run on rank 0 alone): their reports record
 * "ranks", the job's size (1 without mpirun). */
int cli_cmd_train(int argc, char **argv, const dist_comm *comm);
int cli_cmd_cv(int argc, char **argv, const dist_comm *comm);
int cli_cmd_compare(int argc, char **argv, const dist_comm *comm);
int cli_cmd_eval(int argc, char **argv);
/* The same commands with their result lines written to sink (NULL: none): cli_cmd_X is cli_job_X with stdout, the
 * C API's jobs (api/jobs.c) pass NULL, so a program's stdout stays its own. */
int cli_job_train(int argc, char **argv, const dist_comm *comm, FILE *sink);
int cli_job_cv(int argc, char **argv, const dist_comm *comm, FILE *sink);
int cli_job_compare(int argc, char **argv, const dist_comm *comm, FILE *sink);
int cli_job_eval(int argc, char **argv, FILE *sink);
int cli_cmd_predict(int argc, char **argv);
int cli_cmd_export(int argc, char **argv);
int cli_cmd_diff(int argc, char **argv);
int cli_cmd_model(int argc, char **argv);

#endif
