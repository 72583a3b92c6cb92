/* The tuning task in the pipeline: evaluation against the tuned parameter sequences, its report metrics, its
 * line and its markdown table (pipe_task_tune). */
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_internal.h"

/* Every row's sequence decoded by the model (timed: decode_us), then eval/'s metrics, with the solver's
 * validity rules where it has them. */
static int tune_evaluate(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                         pipe_result *res)
{
    const data_tune *t = d->tune;
    int L = t->length;
    if (m->length != L) return hr_error(HR_EINVAL, "model predicts %d parameters, data has %d", m->length, L);
    int32_t *pred = hr_malloc((size_t)n_rows * L * sizeof *pred), *truth = hr_malloc((size_t)n_rows * L * sizeof *truth);
    unsigned char *valid = hr_malloc((size_t)n_rows);
    int rc = (!pred || !truth || !valid) ? HR_ENOMEM : HR_OK;
    const data_constraint *con = data_constraint_find(t->solver);
    double t0 = hr_now();
    for (int i = 0; !rc && i < n_rows; i++) {
        int r = rows[i];
        rc = model_predict_tune_x(m, ws, &t->problems[r], d->X + (size_t)r * d->n_features, pred + (size_t)i * L);
    }
    res->tune.decode_us = (hr_now() - t0) * 1e6 / n_rows;
    for (int i = 0; !rc && i < n_rows; i++) {
        memcpy(truth + (size_t)i * L, t->values + (size_t)rows[i] * L, (size_t)L * sizeof *truth);
        valid[i] = con ? (unsigned char)con->valid_prefix(&t->problems[rows[i]], pred + (size_t)i * L, L) : 1;
    }
    if (!rc) eval_tune_compute(pred, truth, valid, n_rows, L, &res->tune.m);
    free(pred);
    free(truth);
    free(valid);
    return rc;
}

static int tune_predict_one(const model *m, model_ws *ws, const data_problem *p, void *out)
{
    if (m->length > PIPE_PREDICT_MAX) return hr_error(HR_EINVAL, "%d parameters: too many to time", m->length);
    return model_predict_tune(m, ws, p, out);
}

static double tune_accuracy(const pipe_result *r)
{
    return r->tune.m.param_accuracy;
}

static void tune_metrics_json(cJSON *o, const pipe_result *r)
{
    pipe_json_num(o, "param_accuracy", r->tune.m.param_accuracy);
    pipe_json_num(o, "exact", r->tune.m.exact);
    pipe_json_num(o, "valid", r->tune.m.valid);
    pipe_json_num(o, "decode_us", r->tune.decode_us);
}

static void tune_format(const char *model_name, const pipe_result *r, char *buf, size_t n)
{
    snprintf(buf, n,
             "%-12s param_accuracy %.4f  exact %.4f  valid %.4f  decode %.1f us  train %.1f s  predict %.2f us"
             "  params %ld  bytes %ld",
             model_name, r->tune.m.param_accuracy, r->tune.m.exact, r->tune.m.valid, r->tune.decode_us,
             r->train_seconds, r->predict_us, r->params, r->model_bytes);
}

static void tune_md_tables(FILE *f, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    fprintf(f, "| model | param_accuracy | exact | valid | decode us | train s | predict us | params | model bytes |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < nm; m++) {
        double v[8] = {0};
        for (int i = 0; i < nres[m]; i++) {
            const pipe_result *r = &res[m][i];
            double x[8] = {r->tune.m.param_accuracy, r->tune.m.exact, r->tune.m.valid, r->tune.decode_us,
                           r->train_seconds, r->predict_us, (double)r->params, (double)r->model_bytes};
            for (int j = 0; j < 8; j++) v[j] += x[j] / nres[m];
        }
        fprintf(f, "| %s | %.4f | %.4f | %.4f | %.1f | %.1f | %.2f | %.0f | %.0f |\n", names[m], v[0], v[1], v[2], v[3],
                v[4], v[5], v[6], v[7]);
    }
}

static void tune_result_free(pipe_result *r)
{
    (void)r;
}

const pipe_task pipe_task_tune = {
    .task = MODEL_TASK_TUNE,
    .accuracy_label = "parameter accuracy",
    .curve_label = "validation accuracy",
    .evaluate = tune_evaluate,
    .predict_one = tune_predict_one,
    .accuracy = tune_accuracy,
    .metrics_json = tune_metrics_json,
    .format = tune_format,
    .md_tables = tune_md_tables,
    .figures = NULL,
    .result_free = tune_result_free,
};
