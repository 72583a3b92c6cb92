/* heurist diff: the acceptance gate between a shipped selection model and its retrained successor, on the same
 * problems (pipeline/diff.h). Exit 0 when every check passes, 1 when one fails, 2 on any error. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeline/diff.h"

/* The gate's exit statuses. */
enum { DIFF_PASS = 0, DIFF_FAIL = 1, DIFF_ERROR = 2 };

#define DIFF_MAX_FOLDS 1000

static const cli_opt diff_opts[] = {
    CLI_OPT_DATA,
    CLI_OPT_GROUP_BY,
    {"split", "random:F[:seed=S]", "compare on this split's test rows (default: every row)"},
    {"folds", "K", "with --fold: compare on GroupKFold fold F's test rows of K folds, 2..1000"},
    {"fold", "F", "the fold, 0..K-1 (with --folds)"},
    {"seed", "N", "seed of --split when it names none, and of --folds (default 0)"},
    {"tolerance", "T", "a problem's efficiency change beyond T counts as improved or degraded (default 0: any change)"},
    {"max-mean-drop", "D", "mean efficiency check: new >= old - D (default 0.005, half a point)"},
    {"max-median-drop", "D", "median efficiency check: new >= old - D (default 0.005)"},
    {"max-p10-drop", "D", "10th-percentile efficiency check: new >= old - D (default 0.02)"},
    {"max-problem-loss", "L", "problem check: no problem with new < (1 - L) x old efficiency, L in [0, 1] (default 0.1)"},
    {"worst", "N", "worst regressions to list, 0..100000 (default 10)"},
    {"report", "R.json", "also write the comparison as a JSON object (atomically)"},
    {"threads", "N", "threads for loading the data, 0..1024 (default 0: all cores)"},
    CLI_OPT_END,
};

const cli_spec cli_diff_spec = {
    "heurist diff OLD.h5 NEW.h5 --data FILE [--split random:F | --folds K --fold F] [options]",
    "Acceptance gate: evaluates two kernel-selection models on the same problems of FILE with the pipeline's\n"
    "metrics and checks that NEW loses no more efficiency than allowed. Exit 0 pass, 1 fail, 2 error.",
    diff_opts,
    "Efficiency of a problem = t_fastest / t_pick, 0 when the pick was not measured. Drops and the tolerance are\n"
    "in efficiency units (0.005 = half a point). A problem fails the problem check when\n"
    "efficiency_new < (1 - L) x efficiency_old, so the default fails any problem that loses more than 10% of its\n"
    "efficiency. Figure checks allow 1e-9 for rounding. The worst regressions are the degraded problems by\n"
    "new/old efficiency, lowest first. Both models must be selection models (any family, the frequent and\n"
    "vendor baselines included) that know every kernel the data measures.",
};

/* A number option with a default, in [lo, hi]; nonzero (message printed) when malformed or out of range. */
static int diff_get_number(const cli_args *a, const char *name, double def, double lo, double hi, double *out)
{
    const char *v = cli_get(a, name);
    *out = def;
    if (!v) return 0;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x) || x < lo || x > hi) {
        fprintf(stderr, "heurist diff: --%s '%s': expected a number from %g to %g\n", name, v, lo, hi);
        return 1;
    }
    *out = x;
    return 0;
}

/* Takes OLD and NEW, the arguments that are neither options nor option values, out of argv into pos; the
 * rest goes to rest (argc entries). Nonzero (message printed) unless exactly two, or when --help is asked. */
static int diff_args_split(int argc, char **argv, const char **pos, char **rest, int *n_rest)
{
    int n_pos = 0, help = 0;
    *n_rest = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0) {
            help = 1;
            rest[(*n_rest)++] = argv[i];
            continue;
        }
        help |= strcmp(arg, "--help") == 0;
        if (strncmp(arg, "--", 2) == 0) {
            const cli_opt *opt = NULL;
            for (const cli_opt *o = diff_opts; o->name && !opt; o++)
                if (strcmp(arg + 2, o->name) == 0) opt = o;
            /* an unknown option's value cannot be told from a model: it is refused here */
            if (!opt && strcmp(arg, "--help") != 0) {
                fprintf(stderr, "heurist: unknown option '%s'\n", arg);
                return 1;
            }
            rest[(*n_rest)++] = argv[i];
            if (opt && opt->value && i + 1 < argc) rest[(*n_rest)++] = argv[++i];
            continue;
        }
        if (n_pos == 2) {
            fprintf(stderr, "heurist diff: unexpected argument '%s' (takes two models, OLD and NEW)\n", arg);
            return 1;
        }
        pos[n_pos++] = arg;
    }
    if (n_pos < 2 && !help) {
        fprintf(stderr, "heurist diff: needs two models, OLD and NEW (heurist diff OLD.h5 NEW.h5 --data FILE)\n");
        return 1;
    }
    return 0;
}

static int diff_error(void)
{
    cli_fail("diff");
    return DIFF_ERROR;
}

/* The gate's options, checked before anything is loaded. */
static int diff_opts_parse(const cli_args *a, pipe_diff_opts *o, long long *seed, long long *folds, long long *fold,
                           long long *threads)
{
    *o = pipe_diff_opts_default();
    long long worst;
    if (diff_get_number(a, "tolerance", o->tolerance, 0, 1, &o->tolerance) ||
        diff_get_number(a, "max-mean-drop", o->max_mean_drop, 0, 1, &o->max_mean_drop) ||
        diff_get_number(a, "max-median-drop", o->max_median_drop, 0, 1, &o->max_median_drop) ||
        diff_get_number(a, "max-p10-drop", o->max_p10_drop, 0, 1, &o->max_p10_drop) ||
        diff_get_number(a, "max-problem-loss", o->max_problem_loss, 0, 1, &o->max_problem_loss) ||
        cli_get_int(a, "worst", o->worst, 0, 100000, &worst) || cli_get_int(a, "seed", 0, LLONG_MIN, LLONG_MAX, seed) ||
        cli_get_int(a, "threads", 0, 0, CLI_MAX_THREADS, threads) ||
        cli_get_int(a, "folds", 0, 2, DIFF_MAX_FOLDS, folds) || cli_get_int(a, "fold", -1, 0, DIFF_MAX_FOLDS - 1, fold))
        return 1;
    o->worst = (int)worst;
    if (cli_has(a, "folds") != cli_has(a, "fold")) {
        fprintf(stderr, "heurist diff: --folds K and --fold F go together\n");
        return 1;
    }
    if (cli_has(a, "folds") && *fold >= *folds) {
        fprintf(stderr, "heurist diff: --fold %lld: expected 0..%lld for --folds %lld\n", *fold, *folds - 1, *folds);
        return 1;
    }
    if (cli_has(a, "folds") && cli_has(a, "split")) {
        fprintf(stderr, "heurist diff: --split and --folds are alternatives: give one\n");
        return 1;
    }
    return 0;
}

/* The rows to compare: a split's test rows, a fold's, or every row (rows then owned by *all). */
static int diff_rows(const pipe_dataset *d, const cli_args *a, uint64_t seed, long long folds, long long fold,
                     data_split *s, int **all, const int **rows, int *n_rows, char *desc, size_t n)
{
    memset(s, 0, sizeof *s);
    *all = NULL;
    if (cli_has(a, "split")) {
        if (pipe_split_random(d, cli_get(a, "split"), seed, s, desc, n)) return HR_EINVAL;
    } else if (cli_has(a, "folds")) {
        int rc = data_split_group_kfold(d->group, d->n, d->n_groups, (int)folds, seed, (int)fold, s);
        if (rc) return rc;
        snprintf(desc, n, "groupkfold:%lld:seed=%llu:fold=%lld", folds, (unsigned long long)seed, fold);
    } else {
        if (!(*all = hr_malloc((size_t)(d->n > 0 ? d->n : 1) * sizeof **all))) return HR_ENOMEM;
        for (int i = 0; i < d->n; i++) (*all)[i] = i;
        snprintf(desc, n, "all");
        *rows = *all;
        *n_rows = d->n;
        return HR_OK;
    }
    *rows = s->test;
    *n_rows = s->n_test;
    return HR_OK;
}

static int diff_model_load(const char *path, const char *which, model **out)
{
    /* model_load's message names the path */
    if (model_load(path, out)) return hr_error_wrap(HR_EINVAL, "%s model", which);
    int rc = pipe_diff_model_check(*out, which);
    if (rc) {
        hr_error_wrap(rc, "%s", path);
        model_free(*out);
        *out = NULL;
        return rc;
    }
    return HR_OK;
}

/* Compares the loaded models on the chosen rows of d, prints the comparison and writes the report: the exit
 * status. */
static int diff_run(const cli_args *a, const pipe_dataset *d, const model *old_m, const model *new_m,
                    const char *const *pos, const pipe_diff_opts *o, long long seed, long long folds, long long fold)
{
    const char *rep = cli_get(a, "report");
    data_split s;
    int *all = NULL, n_rows = 0, rc;
    const int *rows = NULL;
    char desc[96];
    pipe_diff df;
    memset(&df, 0, sizeof df);
    if (diff_rows(d, a, (uint64_t)seed, folds, fold, &s, &all, &rows, &n_rows, desc, sizeof desc) ||
        pipe_diff_compute(d, old_m, new_m, rows, n_rows, o, &df)) {
        hr_error_wrap(HR_EINVAL, "%s", cli_get(a, "data"));
        rc = diff_error();
    } else {
        pipe_diff_print(d, &df, pos[0], pos[1], desc, stdout);
        rc = df.pass ? DIFF_PASS : DIFF_FAIL;
        if (rep) {
            cJSON *j = pipe_diff_report(d, &df, pos[0], pos[1], desc);
            if (!j || pipe_json_write(rep, j)) rc = diff_error();
            cJSON_Delete(j);
        }
    }
    pipe_diff_free(&df);
    data_split_free(&s);
    free(all);
    return rc;
}

int cli_cmd_diff(int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL};
    char **rest = hr_malloc((size_t)(argc > 0 ? argc : 1) * sizeof *rest);
    int n_rest;
    if (!rest) return diff_error();
    if (diff_args_split(argc, argv, pos, rest, &n_rest)) {
        free(rest);
        return DIFF_ERROR;
    }
    cli_args a;
    int prc = cli_args_parse(n_rest, rest, &cli_diff_spec, &a);
    free(rest); /* a keeps pointers into argv, not into rest */
    if (prc) return prc == CLI_HELP ? 0 : DIFF_ERROR;
    const char *dpath = cli_need(&a, "diff", "data");
    pipe_diff_opts o;
    long long seed, folds, fold, threads;
    int precisions;
    if (!dpath || diff_opts_parse(&a, &o, &seed, &folds, &fold, &threads) || cli_get_precisions(&a, "diff", &precisions))
        return DIFF_ERROR;
    cli_inputs in = {0};
    cli_inputs_add(&in, "OLD", pos[0]);
    cli_inputs_add(&in, "NEW", pos[1]);
    cli_inputs_add_data(&in, dpath, NULL, NULL);
    int bad = cli_check_output("diff", "report", cli_get(&a, "report"), &in);
    cli_inputs_free(&in);
    if (bad) return DIFF_ERROR;
    model *old_m = NULL, *new_m = NULL;
    pipe_dataset d;
    memset(&d, 0, sizeof d);
    hr_log log = hr_log_stderr(HR_LOG_WARN);
    int rc;
    pipe_load l = {.task = "select", .schema = cli_get(&a, "schema"), .threads = hr_threads_resolve((int)threads),
                   .log = &log, .precisions = precisions};
    if (diff_model_load(pos[0], "old", &old_m) || diff_model_load(pos[1], "new", &new_m) || pipe_dataset_open(dpath, &l, &d) ||
        pipe_dataset_group_by(&d, cli_get(&a, "group-by")))
        rc = diff_error();
    else
        rc = diff_run(&a, &d, old_m, new_m, pos, &o, seed, folds, fold);
    pipe_dataset_free(&d);
    model_free(old_m);
    model_free(new_m);
    return rc;
}
