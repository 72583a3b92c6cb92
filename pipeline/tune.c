/* The tuning task in the pipeline: evaluation against the tuned parameter sequences, its report metrics, its
 * line and its markdown table (pipe_task_tune). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "pipeline/pipeline_internal.h"

/* Every row's sequence decoded by the model (timed: decode_us), then eval/'s metrics, with the solver's or the
 * table's validity rules where there are some. On a table the model is handed the row's measured configurations
 * (a model decoding in the measured space keeps to them), and each prediction is scored by the runtime of the
 * configuration it names when that was measured for the problem. */
static int tune_evaluate(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                         pipe_result *res)
{
    const data_tune *t = d->tune;
    int L = t->length;
    if (m->length != L) return hr_error(HR_EINVAL, "model predicts %d parameters, data has %d", m->length, L);
    if (!t->sel != !m->table)
        return hr_error(HR_EINVAL, "a %s model cannot be evaluated on %s data", m->table ? "benchmark-table" : "perf-db",
                        t->sel ? "benchmark-table" : "perf-db");
    /* the values of a categorical field are indices into its vocabulary: both must name every column and category
     * alike (data_table_spec_same) */
    if (t->sel && !data_table_spec_same(&t->sel->table->spec, m->table))
        return hr_error(HR_EINVAL, "the model's table has other columns or categories than the data's: a tune model "
                        "reads the sequences of a table with its own schema and vocabularies");
    int32_t *pred = hr_malloc((size_t)n_rows * L * sizeof *pred), *truth = hr_malloc((size_t)n_rows * L * sizeof *truth);
    unsigned char *valid = hr_malloc((size_t)n_rows);
    double *t_best = t->sel ? hr_malloc((size_t)n_rows * sizeof *t_best) : NULL;
    double *t_pred = t->sel ? hr_malloc((size_t)n_rows * sizeof *t_pred) : NULL;
    int rc = (!pred || !truth || !valid || (t->sel && (!t_best || !t_pred))) ? HR_ENOMEM : HR_OK;
    const data_constraint *con = data_tune_constraint(t);
    double t0 = hr_now();
    for (int i = 0; !rc && i < n_rows; i++) {
        int r = rows[i];
        data_tune_problem q = data_tune_problem_of(t, r, 1);
        rc = model_predict_tune_q(m, ws, &q, d->X + (size_t)r * d->n_features, pred + (size_t)i * L);
    }
    res->tune.decode_us = (hr_now() - t0) * 1e6 / n_rows;
    for (int i = 0; !rc && i < n_rows; i++) {
        int r = rows[i];
        const int32_t *v = pred + (size_t)i * L;
        memcpy(truth + (size_t)i * L, t->values + (size_t)r * L, (size_t)L * sizeof *truth);
        data_tune_problem q = data_tune_problem_of(t, r, 0);
        valid[i] = (unsigned char)data_constraint_check(con, &q, v, L);
        if (!t->sel) continue;
        const data_select *s = t->sel;
        t_best[i] = s->runtime[(size_t)r * s->n_kernels + t->best[r]];
        t_pred[i] = INFINITY;
        for (int c = t->cand_off[r]; c < t->cand_off[r + 1]; c++)
            if (!memcmp(t->cand + (size_t)c * L, v, (size_t)L * sizeof *v))
                t_pred[i] = s->runtime[(size_t)r * s->n_kernels + t->cand_kernel[c]];
    }
    if (!rc) eval_tune_compute(pred, truth, valid, n_rows, L, &res->tune.m);
    if (!rc && t->sel) eval_tune_efficiency(t_best, t_pred, valid, n_rows, &res->tune.m, NULL);
    res->tune.table = t->sel != NULL;
    free(pred);
    free(truth);
    free(valid);
    free(t_best);
    free(t_pred);
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
    if (!r->tune.table) return;
    pipe_json_num(o, "efficiency_mean", r->tune.m.efficiency_mean);
    pipe_json_num(o, "efficiency_p10", r->tune.m.efficiency_p10);
    pipe_json_num(o, "measured", r->tune.m.measured);
}

static void tune_format(const char *model_name, const pipe_result *r, char *buf, size_t n)
{
    char eff[160] = "";
    if (r->tune.table)
        snprintf(eff, sizeof eff, "  efficiency %.4f  p10 %.4f  measured %.4f", r->tune.m.efficiency_mean,
                 r->tune.m.efficiency_p10, r->tune.m.measured);
    snprintf(buf, n,
             "%-12s param_accuracy %.4f  exact %.4f  valid %.4f%s  decode %.1f us  train %.1f s  predict %.2f us"
             "  params %ld  bytes %ld",
             model_name, r->tune.m.param_accuracy, r->tune.m.exact, r->tune.m.valid, eff, r->tune.decode_us,
             r->train_seconds, r->predict_us, r->params, r->model_bytes);
}

static void tune_md_tables(FILE *f, const pipe_dataset *d, int nm, const char *const *names, const pipe_result *const *res,
                           const int *nres)
{
    int table = nm > 0 && nres[0] > 0 && res[0][0].tune.table;
    fprintf(f, "| model | param_accuracy | exact | valid |%s decode us | train s | predict us | params | model bytes |\n",
            table ? " efficiency mean | efficiency p10 | measured |" : "");
    fprintf(f, "|---|---|---|---|%s---|---|---|---|---|\n", table ? "---|---|---|" : "");
    for (int m = 0; m < nm; m++) {
        double v[11] = {0};
        for (int i = 0; i < nres[m]; i++) {
            const pipe_result *r = &res[m][i];
            double x[11] = {r->tune.m.param_accuracy, r->tune.m.exact, r->tune.m.valid, r->tune.decode_us,
                            r->train_seconds, r->predict_us, (double)r->params, (double)r->model_bytes,
                            r->tune.m.efficiency_mean, r->tune.m.efficiency_p10, r->tune.m.measured};
            for (int j = 0; j < 11; j++) v[j] += x[j] / nres[m];
        }
        fprintf(f, "| %s | %.4f | %.4f | %.4f |", names[m], v[0], v[1], v[2]);
        if (table) fprintf(f, " %.4f | %.4f | %.4f |", v[8], v[9], v[10]);
        fprintf(f, " %.1f | %.1f | %.2f | %.0f | %.0f |\n", v[3], v[4], v[5], v[6], v[7]);
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
