/* plot: the comparison figures, drawn with cairo into PNG files (written atomically).
 * - efficiency_cdf.png: per model, the fraction of test problems with efficiency <= x.
 * - top1_slices.png: top-1 per direction and data type, grouped bars (where the source has those slices).
 * - training_curves.png: the curves' validation metric (top-1 or param accuracy) per epoch or round.
 * - tradeoff.png: top-1 (or param accuracy) against single-problem inference time (log scale).
 */
#ifndef HEURIST_PLOT_H
#define HEURIST_PLOT_H

#include <stdio.h>

#include "pipeline/pipeline.h"

#define COMPARE_PLOT_MAX 8

struct pipe_task;

/* Draws the figures of a comparison of data d of the task `task` (pipe_task_of(d->task)) into dir and appends
 * markdown image links to md (may be NULL). Returns the number of figures written, or a negative status. */
int plot_compare(const char *dir, const pipe_dataset *d, const struct pipe_task *task, int n_models,
                 const char *const *names, const pipe_result *const *res, const int *n_res, FILE *md);

/* The selection task's own figures (efficiency_cdf.png, top1_slices.png) with their links in md (may be
 * NULL): how many, or a negative status. */
int plot_select_figures(const char *dir, const pipe_dataset *d, int n_models, const char *const *names, const pipe_result *const *res,
                        const int *n_res, FILE *md);

#endif
