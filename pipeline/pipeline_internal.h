/* What only pipeline/ uses: what the pipeline does differently for each task, one table per task
 * (select.c, tune.c), so that the shared code (pipeline.c, report.c, compare.c, plot.c, ranks.c) asks the table
 * instead of branching on the task; the tables call only record.c and plot.c's figures, never the code that
 * calls them (tools/check_layers.py). */
#ifndef HEURIST_PIPELINE_INTERNAL_H
#define HEURIST_PIPELINE_INTERNAL_H

#include <stdio.h>

#include "pipeline/pipeline.h"

/* Largest single-problem output measured for predict_us: kernel scores or parameter values. */
#define PIPE_PREDICT_MAX 1024

typedef struct pipe_task {
    model_task task;
    const char *data_desc;      /* what data of the task holds, in messages ("kernel-selection") */
    const char *accuracy_label; /* the headline metric on a figure's axis ("top-1 accuracy") */
    const char *curve_label;    /* the curve's valid_metric on a figure's axis ("validation top-1") */
    /* The task's dataset: checked against the options (path names it in errors), its codec, every row's values,
     * its GroupKFold groups, freed. */
    int (*dataset_check)(const pipe_dataset *d, const char *path, const char *solver);
    int (*dataset_codec)(const pipe_dataset *d, data_codec **out);
    void (*dataset_values)(const pipe_dataset *d, double *V);
    int (*dataset_groups)(const pipe_dataset *d, const char *by, int *group, int *n_groups, const char **rule,
                          int *whole);
    void (*dataset_free)(pipe_dataset *d);
    /* The task's data from selection data whose source reads as it (data_select_tunes): takes s over; NULL: the
     * task does not read selection data. */
    int (*from_select)(const char *path, data_select *s, const char *caps, const hr_log *log, data_tune **out);
    /* The task's dataset into a family's train data. */
    void (*train_data)(const pipe_dataset *d, model_train_data *td);
    /* The solver reports name, or NULL. */
    const char *(*solver)(const pipe_dataset *d);
    /* The task's part of pipe_dataset_digest. */
    uint64_t (*digest)(const pipe_dataset *d, uint64_t h);
    /* pipe_baselines */
    int (*baselines)(const pipe_dataset *d, const model_family **out);
    /* Predicts rows[0..n_rows) of d with m (scratch ws) and fills res's task member (sel or tune); not params;
     * predict_us too when it sets *timed. */
    int (*evaluate)(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows, pipe_result *res,
                    int *timed);
    /* One single-problem prediction of row `row` through the model's public predict, into out (PIPE_PREDICT_MAX
     * values). */
    int (*predict_one)(const pipe_dataset *d, const model *m, model_ws *ws, int row, void *out);
    double (*accuracy)(const pipe_result *r); /* the headline metric: top1 or param_accuracy */
    void (*metrics_json)(cJSON *metrics, const pipe_dataset *d, const pipe_result *r);
    void (*format)(const char *model_name, const pipe_result *r, char *buf, size_t n);
    /* What a report holds beyond the mean metrics, from the results' problems pooled (nres results over data d):
     * "pooled" figures when nres > 1 and "slices"; may be NULL. */
    void (*report_json)(cJSON *report, const pipe_dataset *d, const pipe_result *res, int nres);
    /* The tables of report.md: per model the mean over its nres results, and what pools their problems. */
    void (*md_tables)(FILE *f, const pipe_dataset *d, int nm, const char *const *names, const pipe_result *const *res,
                      const int *nres);
    /* The task's own figures into dir with their links in md (may be NULL): how many, or a negative status;
     * NULL: none. */
    int (*figures)(const char *dir, const pipe_dataset *d, int nm, const char *const *names,
                   const pipe_result *const *res, const int *nres, FILE *md);
    void (*result_free)(pipe_result *r);
    /* The task's arrays of a result, after its record between ranks (pipeline/ranks.c): written, and read back
     * into r, whose pointers are the sender's. */
    void (*pack)(FILE *f, const pipe_result *r);
    int (*unpack)(const char *buf, size_t len, size_t *at, pipe_result *r);
} pipe_task;

extern const pipe_task pipe_task_select;
extern const pipe_task pipe_task_tune;

/* The table of a task; NULL (with the error set) for a value that is no task. */
const pipe_task *pipe_task_of(model_task task);

/* ---- record.c: what the task tables share with the rest ---- */
/* JSON has no NaN/inf: a figure that is not finite is written as null. */
void pipe_json_num(cJSON *o, const char *key, double v);
/* v with `decimals` decimals into buf (n bytes), or "-" when it is not finite (a single-problem prediction that
 * could not be timed, the R^2 of a model that regresses no target): the result line's and report.md's form of
 * what report.json writes as null. */
const char *pipe_text_num(char *buf, size_t n, double v, int decimals);

/* A selection dataset's kernels, keys and runtimes into a digest. */
uint64_t pipe_digest_select(const data_select *s, uint64_t h);

/* Reads n bytes at *at of buf (len) into dst: a rank's result records (pipeline/ranks.c writes them). */
int pipe_ranks_read(const char *buf, size_t len, size_t *at, void *dst, size_t n);

#endif
