/* The tuning task in the pipeline: evaluation against the tuned parameter sequences, its report metrics, its
 * line and its markdown table (pipe_task_tune). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_internal.h"

/* Every row's sequence decoded by the model (timed: decode_us), then eval/'s metrics, with the codec's validity
 * rules where there are some. Where the data holds each problem's measured configurations (a table) the model is
 * handed them (a model decoding in the measured space keeps to them) and the vendor's first pick among them (the
 * model's vendor guard falls back to it), and each prediction is scored by the runtime of the configuration it names
 * when that was measured for the problem. */
static int tune_evaluate(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                         pipe_result *res, int *timed)
{
    (void)timed;
    const data_tune *t = d->tune;
    int L = t->length;
    if (m->length != L) return hr_error(HR_EINVAL, "model predicts %d parameters, data has %d", m->length, L);
    if (m->select_guard_top > 0)
        return hr_error(HR_EINVAL, "--guard-top: a tune model's vendor guard takes a margin only (--guard M)");
    /* the values of a categorical field are indices into its vocabulary: a tune model reads the sequences of a
     * source with its own codec only */
    if (strcmp(data_codec_name(m->codec), data_codec_name(d->codec)))
        return hr_error(HR_EINVAL, "a %s model cannot be evaluated on %s data", data_codec_name(m->codec),
                        data_codec_name(d->codec));
    if (!data_codec_equal(m->codec, d->codec))
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
        data_tune_problem q = data_tune_problem_of(t, d->V, r, 1);
        rc = model_predict_tune_x(m, ws, &q, d->X + (size_t)r * d->n_features, pred + (size_t)i * L);
    }
    res->tune.decode_us = (hr_now() - t0) * 1e6 / n_rows;
    for (int i = 0; !rc && i < n_rows; i++) {
        int r = rows[i];
        const int32_t *v = pred + (size_t)i * L;
        memcpy(truth + (size_t)i * L, t->values + (size_t)r * L, (size_t)L * sizeof *truth);
        data_tune_problem q = data_tune_problem_of(t, d->V, r, 0);
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
    res->tune.measured = t->sel != NULL;
    free(pred);
    free(truth);
    free(valid);
    free(t_best);
    free(t_pred);
    return rc;
}

/* One row through the public predict, with its measured configurations where the data holds them. */
static int tune_predict_one(const pipe_dataset *d, const model *m, model_ws *ws, int row, void *out)
{
    if (m->length > PIPE_PREDICT_MAX) return hr_error(HR_EINVAL, "%d parameters: too many to time", m->length);
    data_tune_problem q = data_tune_problem_of(d->tune, d->V, row, 1);
    return model_predict_tune(m, ws, &q, out);
}

static double tune_accuracy(const pipe_result *r)
{
    return r->tune.m.param_accuracy;
}

static void tune_metrics_json(cJSON *o, const pipe_dataset *d, const pipe_result *r)
{
    (void)d;
    pipe_json_num(o, "param_accuracy", r->tune.m.param_accuracy);
    pipe_json_num(o, "exact", r->tune.m.exact);
    pipe_json_num(o, "valid", r->tune.m.valid);
    pipe_json_num(o, "decode_us", r->tune.decode_us);
    if (!r->tune.measured) return;
    pipe_json_num(o, "efficiency_mean", r->tune.m.efficiency_mean);
    pipe_json_num(o, "efficiency_p10", r->tune.m.efficiency_p10);
    pipe_json_num(o, "measured", r->tune.m.measured);
}

static void tune_format(const char *model_name, const pipe_result *r, char *buf, size_t n)
{
    char eff[160] = "";
    if (r->tune.measured)
        snprintf(eff, sizeof eff, "  efficiency %.4f  p10 %.4f  measured %.4f", r->tune.m.efficiency_mean,
                 r->tune.m.efficiency_p10, r->tune.m.measured);
    char pu[32];
    snprintf(buf, n,
             "%-12s param_accuracy %.4f  exact %.4f  valid %.4f%s  decode %.1f us  train %.1f s  predict %s us"
             "  params %ld  bytes %ld",
             model_name, r->tune.m.param_accuracy, r->tune.m.exact, r->tune.m.valid, eff, r->tune.decode_us,
             r->train_seconds, pipe_text_num(pu, sizeof pu, r->predict_us, 2), r->params, r->model_bytes);
}

static void tune_md_tables(FILE *f, const pipe_dataset *d, int nm, const char *const *names,
                           const pipe_result *const *res, const int *nres)
{
    (void)d;
    int measured = nm > 0 && nres[0] > 0 && res[0][0].tune.measured;
    fprintf(f, "| model | param_accuracy | exact | valid |%s decode us | train s | predict us | params | model bytes |\n",
            measured ? " efficiency mean | efficiency p10 | measured |" : "");
    fprintf(f, "|---|---|---|---|%s---|---|---|---|---|\n", measured ? "---|---|---|" : "");
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
        if (measured) fprintf(f, " %.4f | %.4f | %.4f |", v[8], v[9], v[10]);
        char pu[32];
        fprintf(f, " %.1f | %.1f | %s | %.0f | %.0f |\n", v[3], v[4], pipe_text_num(pu, sizeof pu, v[5], 2), v[6],
                v[7]);
    }
}

static void tune_result_free(pipe_result *r)
{
    (void)r;
}

static void tune_pack(FILE *f, const pipe_result *r)
{
    (void)f, (void)r; /* a tune result has no arrays */
}

static int tune_unpack(const char *buf, size_t len, size_t *at, pipe_result *r)
{
    (void)buf, (void)len, (void)at, (void)r;
    return HR_OK;
}

/* ---- the dataset ---- */

/* A perf-db holds one solver's parameters: the one asked for. */
static int tune_dataset_check(const pipe_dataset *d, const char *path, const char *solver)
{
    const data_tune *t = d->tune;
    if (!t->sel && solver && strcmp(t->solver, solver) != 0)
        return hr_error(HR_EINVAL, "%s holds %s parameters, not --solver %s", path, t->solver, solver);
    return HR_OK;
}

static int tune_dataset_codec(const pipe_dataset *d, data_codec **out)
{
    return data_codec_of_tune(d->tune, out);
}

static void tune_dataset_values(const pipe_dataset *d, double *V)
{
    data_tune_values(d->tune, V);
}

static int tune_dataset_groups(const pipe_dataset *d, const char *by, int *group, int *n_groups, const char **rule,
                               int *whole)
{
    return data_tune_groups(d->tune, by, group, n_groups, rule, whole);
}

static void tune_dataset_free(pipe_dataset *d)
{
    data_tune_free(d->tune);
}

static void tune_train_data(const pipe_dataset *d, model_train_data *td)
{
    td->tune = d->tune;
}

/* The vendor's pick where the data records the vendor's ranking of its configurations (a table's). */
static int tune_baselines(const pipe_dataset *d, const model_family **out)
{
    const data_select *s = d->tune->sel;
    if (!s || !s->vendor_rank) return 0;
    out[0] = &model_family_vendor;
    return 1;
}

/* The sequences, and the measurements they came from where the data keeps them. */
static uint64_t tune_digest(const pipe_dataset *d, uint64_t h)
{
    const data_tune *t = d->tune;
    if (t->sel) h = pipe_digest_select(t->sel, h);
    h = pipe_digest(h, &t->length, sizeof t->length);
    for (int j = 0; j < t->length; j++) h = pipe_digest_str(h, t->param_names[j]);
    return pipe_digest(h, t->values, (size_t)t->n * (size_t)t->length * sizeof *t->values);
}

static const char *tune_solver(const pipe_dataset *d)
{
    return d->tune ? d->tune->solver : NULL;
}

const pipe_task pipe_task_tune = {
    .task = MODEL_TASK_TUNE,
    .data_desc = "tuning",
    .accuracy_label = "parameter accuracy",
    .curve_label = "validation accuracy",
    .dataset_check = tune_dataset_check,
    .dataset_codec = tune_dataset_codec,
    .dataset_values = tune_dataset_values,
    .dataset_groups = tune_dataset_groups,
    .dataset_free = tune_dataset_free,
    .from_select = data_select_tune,
    .train_data = tune_train_data,
    .solver = tune_solver,
    .digest = tune_digest,
    .baselines = tune_baselines,
    .evaluate = tune_evaluate,
    .predict_one = tune_predict_one,
    .accuracy = tune_accuracy,
    .metrics_json = tune_metrics_json,
    .format = tune_format,
    .md_tables = tune_md_tables,
    .figures = NULL,
    .result_free = tune_result_free,
    .pack = tune_pack,
    .unpack = tune_unpack,
};
