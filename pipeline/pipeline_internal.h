/* What only pipeline/ uses: what the pipeline does differently for each task, one table per task
 * (select.c, tune.c), so that the shared code (pipeline.c, report.c, compare.c, plot.c) asks the table
 * instead of branching on the task. */
#ifndef HEURIST_PIPELINE_INTERNAL_H
#define HEURIST_PIPELINE_INTERNAL_H

#include <stdio.h>

#include "pipeline/pipeline.h"

/* Largest single-problem output measured for predict_us: kernel scores or parameter values. */
#define PIPE_PREDICT_MAX 1024

typedef struct pipe_task {
    model_task task;
    const char *accuracy_label; /* the headline metric on a figure's axis ("top-1 accuracy") */
    const char *curve_label;    /* the curve's valid_metric on a figure's axis ("validation top-1") */
    /* Predicts rows[0..n_rows) of d with m (scratch ws) and fills res's task member (sel or tune); not
     * predict_us or params. */
    int (*evaluate)(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows, pipe_result *res);
    /* One single-problem prediction through the model's public predict, into out (PIPE_PREDICT_MAX values). */
    int (*predict_one)(const model *m, model_ws *ws, const data_problem *p, void *out);
    double (*accuracy)(const pipe_result *r); /* the headline metric: top1 or param_accuracy */
    void (*metrics_json)(cJSON *metrics, const pipe_result *r);
    void (*format)(const char *model_name, const pipe_result *r, char *buf, size_t n);
    /* What a report holds beyond the mean metrics, from the results' problems pooled (nres results over data d):
     * "pooled" figures when nres > 1 and "slices"; may be NULL. */
    void (*report_json)(cJSON *report, const pipe_dataset *d, const pipe_result *res, int nres);
    /* The tables of report.md: per model the mean over its nres results, and what pools their problems. */
    void (*md_tables)(FILE *f, const pipe_dataset *d, int nm, const char *const *names, const pipe_result *const *res,
                      const int *nres);
    /* The task's own figures into dir with their links in md (may be NULL): how many, or a negative status;
     * NULL: none. */
    int (*figures)(const char *dir, int nm, const char *const *names, const pipe_result *const *res, const int *nres,
                   FILE *md);
    void (*result_free)(pipe_result *r);
} pipe_task;

extern const pipe_task pipe_task_select;
extern const pipe_task pipe_task_tune;

/* The table of a task; NULL (with the error set) for a value that is no task. */
const pipe_task *pipe_task_of(model_task task);

/* JSON has no NaN/inf: a figure that is not finite is written as null. */
void pipe_json_num(cJSON *o, const char *key, double v);

#endif
