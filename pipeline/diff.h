/* diff: the acceptance gate between two selection models on the same problems (heurist diff).
 *
 * Both models are evaluated by pipe_evaluate on the same rows of one dataset, so each problem's pick and its
 * efficiency e = t_fastest / t_pick (0 when the pick is unmeasured) are the pipeline's own. Then, with e_o and
 * e_n the old and new model's efficiency of a problem:
 *   agreement = share of problems where both pick the same kernel (two picks outside the data's kernels
 *               count as the same choice);
 *   improved: e_n - e_o > tolerance;  degraded: e_o - e_n > tolerance;  same: otherwise;
 *   checks (every one must pass):
 *     mean:         mean(e_n)   >= mean(e_o)   - max_mean_drop
 *     median:       median(e_n) >= median(e_o) - max_median_drop
 *     p10:          p10(e_n)    >= p10(e_o)    - max_p10_drop      (10th percentile, eval_quantile)
 *     problem_loss: no problem with e_n < (1 - max_problem_loss) * e_o
 *   the figure checks allow PIPE_DIFF_SLACK for rounding;
 *   worst regressions: the degraded problems by e_n / e_o ascending (then by the larger drop e_o - e_n, then
 *   by row), the first `worst` of them.
 * Drops and the tolerance are in efficiency units: 0.005 is half a point of efficiency.
 */
#ifndef HEURIST_PIPELINE_DIFF_H
#define HEURIST_PIPELINE_DIFF_H

#include <cJSON.h>
#include <stdio.h>

#include "pipeline/pipeline.h"

/* Rounding allowance of the figure checks: a drop equal to its limit passes whatever the last bit. */
#define PIPE_DIFF_SLACK 1e-9

typedef struct pipe_diff_opts {
    double max_mean_drop;    /* 0.005 */
    double max_median_drop;  /* 0.005 */
    double max_p10_drop;     /* 0.02 */
    double max_problem_loss; /* 0.10, in [0, 1] */
    double tolerance;        /* 0: any change of a problem's efficiency counts as improved or degraded */
    int worst;               /* regressions to list, 10 */
} pipe_diff_opts;

/* The defaults above. */
pipe_diff_opts pipe_diff_opts_default(void);

typedef struct pipe_diff_problem {
    int row;                 /* row of the dataset */
    int old_pick, new_pick;  /* column of the data's kernels; n_kernels: a kernel the data does not hold */
    double old_eff, new_eff;
} pipe_diff_problem;

typedef enum pipe_diff_check_id {
    PIPE_DIFF_MEAN,
    PIPE_DIFF_MEDIAN,
    PIPE_DIFF_P10,
    PIPE_DIFF_PROBLEM_LOSS,
    PIPE_DIFF_CHECKS
} pipe_diff_check_id;

typedef struct pipe_diff_check {
    const char *name;        /* "mean", "median", "p10", "problem_loss" */
    double old_value, new_value; /* the efficiency figures compared (problem_loss: NAN) */
    double limit;            /* the option: the largest drop allowed, or max_problem_loss */
    long failing;            /* problem_loss: problems with e_n < (1 - limit) * e_o; 0 for the others */
    int pass;
} pipe_diff_check;

typedef struct pipe_diff {
    pipe_diff_opts opts;
    int n;                       /* problems compared */
    const char *old_family, *new_family; /* the models' family names */
    pipe_result old_r, new_r;    /* each model's evaluation on the rows (metrics, efficiency, pick) */
    pipe_diff_problem *problems; /* (n) in the order of the rows given */
    long agree, improved, same, degraded;
    double agreement;            /* agree / n */
    pipe_diff_check checks[PIPE_DIFF_CHECKS];
    int pass;                    /* every check passes */
    int n_worst;
    int *worst;                  /* (n_worst) indices into problems, worst first */
} pipe_diff;

/* HR_OK for a selection model, else an error naming it the `which` model ("old", "new"): diff compares kernel
 * selections, so a caller may refuse a tuning model before it loads the data. */
int pipe_diff_model_check(const model *m, const char *which);
/* Evaluates both selection models on rows (n_rows) of d and compares them under o. A tuning model or tuning
 * data is an error, and so is any error of pipe_evaluate (named "old model" or "new model"). */
int pipe_diff_compute(const pipe_dataset *d, const model *old_m, const model *new_m, const int *rows, int n_rows,
                      const pipe_diff_opts *o, pipe_diff *out);
void pipe_diff_free(pipe_diff *df);

/* The comparison a person reads: agreement, counts, the figures and their deltas, the worst regressions,
 * each check and the PASS / FAIL line last. old_name and new_name label the models (their paths). */
void pipe_diff_print(const pipe_dataset *d, const pipe_diff *df, const char *old_name, const char *new_name,
                     const char *split_desc, FILE *f);

/* The report object: data, split, n_problems, old and new ({"model", "family", "metrics"}), deltas, agreement,
 * counts, tolerance, thresholds, checks (each with its pass flag), worst, pass and decision ("pass" or
 * "fail"). */
cJSON *pipe_diff_report(const pipe_dataset *d, const pipe_diff *df, const char *old_name, const char *new_name,
                        const char *split_desc);

#endif
