/* Split -> train -> evaluate, identical for every family. */
#include "pipeline/pipeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pipe_dataset_load(const char *path, const char *task, const char *solver, const hr_log *log, pipe_dataset *out)
{
    memset(out, 0, sizeof *out);
    data_load_opts opts = {0, log};
    int rc = data_load(path, solver, &opts, &out->sel, &out->tune);
    if (rc) return rc;
    out->task = out->sel ? MODEL_TASK_SELECT : MODEL_TASK_TUNE;
    if (task && strcmp(task, out->sel ? "select" : "tune") != 0) {
        rc = hr_error(HR_EINVAL, "%s holds %s data, but --task is %s", path, out->sel ? "kernel-selection (find-db)" : "tuning (perf-db)", task);
        pipe_dataset_free(out);
        return rc;
    }
    if (out->tune && solver && strcmp(out->tune->solver, solver) != 0) {
        rc = hr_error(HR_EINVAL, "%s holds %s parameters, not --solver %s", path, out->tune->solver, solver);
        pipe_dataset_free(out);
        return rc;
    }
    out->n = out->sel ? out->sel->n : out->tune->n;
    out->n_features = data_features_count();
    const data_problem *p = out->sel ? out->sel->problems : out->tune->problems;
    out->X = hr_malloc((size_t)out->n * (size_t)out->n_features * sizeof *out->X);
    out->group = hr_malloc((size_t)out->n * sizeof *out->group);
    out->name = hr_strdup(hr_path_basename(path));
    if (!out->X || !out->group || !out->name) {
        pipe_dataset_free(out);
        return HR_ENOMEM;
    }
    data_features_compute_all(p, out->n, out->X);
    if ((rc = data_groups_compute(p, out->n, out->group, &out->n_groups))) pipe_dataset_free(out);
    return rc;
}

void pipe_dataset_free(pipe_dataset *d)
{
    data_select_free(d->sel);
    data_tune_free(d->tune);
    free(d->X);
    free(d->group);
    free(d->name);
    memset(d, 0, sizeof *d);
}

const data_problem *pipe_dataset_problem(const pipe_dataset *d, int row)
{
    return d->sel ? &d->sel->problems[row] : &d->tune->problems[row];
}

void pipe_result_free(pipe_result *r)
{
    free(r->efficiency);
    free(r->curve);
    r->efficiency = NULL;
    r->curve = NULL;
}

/* Median wall time of single-problem predictions over test rows, one thread. */
static double measure_predict_us(const pipe_dataset *d, const model *m, const int *rows, int n_rows)
{
    enum { CALLS = 1000 };
    double t[CALLS];
    float scores[1024];
    int32_t values[64];
    if (m->task == MODEL_TASK_SELECT && m->n_kernels > 1024) return NAN;
    hr_blas_set_threads(1);
    for (int c = 0; c < CALLS; c++) {
        const data_problem *p = pipe_dataset_problem(d, rows[c % n_rows]);
        double t0 = hr_now();
        if (m->task == MODEL_TASK_SELECT) model_predict_select(m, p, scores);
        else model_predict_tune(m, p, values);
        t[c] = (hr_now() - t0) * 1e6;
    }
    return eval_median_inplace(t, CALLS);
}

int pipe_evaluate(const pipe_dataset *d, const model *m, const int *rows, int n_rows, pipe_result *res)
{
    res->task = m->task;
    res->n_test = n_rows;
    if (n_rows <= 0) return hr_error(HR_EINVAL, "no rows to evaluate");
    if (m->task != d->task) return hr_error(HR_EINVAL, "model task does not match the data");
    if (m->task == MODEL_TASK_SELECT) {
        const data_select *s = d->sel;
        int K = s->n_kernels;
        /* map the model's kernel vocabulary onto the data's by name */
        int *col = hr_malloc((size_t)m->n_kernels * sizeof *col);
        float *scores = hr_malloc((size_t)n_rows * (size_t)K * sizeof *scores);
        float *rt = hr_malloc((size_t)n_rows * (size_t)K * sizeof *rt);
        float *ms = hr_malloc((size_t)m->n_kernels * sizeof *ms);
        res->efficiency = hr_malloc((size_t)n_rows * sizeof *res->efficiency);
        int rc = HR_OK;
        if (!col || !scores || !rt || !ms || !res->efficiency) rc = HR_ENOMEM;
        for (int k = 0; !rc && k < m->n_kernels; k++) col[k] = data_select_kernel_index(s, m->kernels[k]);
        for (int i = 0; !rc && i < n_rows; i++) {
            int r = rows[i];
            memcpy(rt + (size_t)i * K, s->runtime + (size_t)r * K, (size_t)K * sizeof *rt);
            rc = m->family->predict_select(m, &s->problems[r], d->X + (size_t)r * d->n_features, ms);
            float *sc = scores + (size_t)i * K;
            for (int k = 0; k < K; k++) sc[k] = -INFINITY;
            for (int k = 0; k < m->n_kernels; k++)
                if (col[k] >= 0) sc[col[k]] = ms[k];
        }
        if (!rc) rc = eval_select_compute(rt, scores, n_rows, K, &res->sel, res->efficiency);
        for (int i = 0; !rc && i < n_rows; i++) {
            const data_problem *p = &s->problems[rows[i]];
            int hit = eval_select_in_topk(rt + (size_t)i * K, scores + (size_t)i * K, K, 1);
            res->by_direction[p->direction].n++;
            res->by_direction[p->direction].top1 += hit;
            res->by_dtype[p->dtype].n++;
            res->by_dtype[p->dtype].top1 += hit;
        }
        free(col);
        free(scores);
        free(rt);
        free(ms);
        if (rc) return rc;
    } else {
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
            rc = m->family->predict_tune(m, &t->problems[r], d->X + (size_t)r * d->n_features, pred + (size_t)i * L);
        }
        res->decode_us = (hr_now() - t0) * 1e6 / n_rows;
        for (int i = 0; !rc && i < n_rows; i++) {
            memcpy(truth + (size_t)i * L, t->values + (size_t)rows[i] * L, (size_t)L * sizeof *truth);
            valid[i] = con ? (unsigned char)con->valid_prefix(&t->problems[rows[i]], pred + (size_t)i * L, L) : 1;
        }
        if (!rc) eval_tune_compute(pred, truth, valid, n_rows, L, &res->tune);
        free(pred);
        free(truth);
        free(valid);
        if (rc) return rc;
    }
    res->predict_us = measure_predict_us(d, m, rows, n_rows);
    res->params = model_n_params(m);
    return HR_OK;
}

int pipe_run(const pipe_dataset *d, const data_split *split, const model_family *fam, const pipe_opts *o,
             pipe_result *res, model **out_model)
{
    memset(res, 0, sizeof *res);
    if (out_model) *out_model = NULL;
    if (!(fam->tasks & d->task))
        return hr_error(HR_EINVAL, "model family '%s' does not support the %s task", fam->name,
                        d->task == MODEL_TASK_SELECT ? "select" : "tune");
    /* early-stopping rows: a seeded share (10% by default) of the training rows, or none (every training
     * row is fitted) */
    const int *fit = split->train;
    int n_fit = split->n_train, n_valid = 0, *fit_rows = NULL, *valid = NULL;
    int rc = HR_OK;
    if (o->valid_fraction >= 0) {
        data_split inner;
        rc = data_split_random(split->n_train, o->valid_fraction > 0 ? o->valid_fraction : 0.1, o->seed ^ 0x5eed,
                               &inner);
        if (rc) return rc;
        fit_rows = hr_malloc((size_t)(inner.n_train > 0 ? inner.n_train : 1) * sizeof *fit_rows);
        valid = hr_malloc((size_t)(inner.n_test > 0 ? inner.n_test : 1) * sizeof *valid);
        if (fit_rows && valid) {
            for (int i = 0; i < inner.n_train; i++) fit_rows[i] = split->train[inner.train[i]];
            for (int i = 0; i < inner.n_test; i++) valid[i] = split->train[inner.test[i]];
            fit = fit_rows, n_fit = inner.n_train, n_valid = inner.n_test;
        }
        data_split_free(&inner);
        if (!fit_rows || !valid) {
            free(fit_rows);
            free(valid);
            return HR_ENOMEM;
        }
    }
    model_train_data td = {d->task, d->sel, d->tune, d->X, d->n_features, fit, n_fit, valid, n_valid};
    model_ctx ctx = {o->seed, o->threads, o->log, o->config, o->checkpoint, o->resume, o->init_model};
    model *m = NULL;
    hr_blas_set_threads(o->threads);
    double t0 = hr_now();
    rc = fam->train(&td, &ctx, &m);
    double secs = hr_now() - t0;
    free(fit_rows);
    free(valid);
    if (rc) return rc;
    m->train_seconds = secs;
    res->train_seconds = secs;
    res->n_train = split->n_train;
    if (m->n_curve) {
        res->curve = hr_malloc((size_t)m->n_curve * sizeof *res->curve);
        if (res->curve) {
            memcpy(res->curve, m->curve, (size_t)m->n_curve * sizeof *res->curve);
            res->n_curve = m->n_curve;
        }
    }
    rc = pipe_evaluate(d, m, split->test, split->n_test, res);
    /* model_bytes: the size of the saved file */
    char *tmp = NULL;
    const char *path = o->save_path;
    if (!rc && !path) {
        tmp = hr_malloc(64);
        if (tmp) snprintf(tmp, 64, "/tmp/heurist_model_%ld_%p.h5", (long)getpid(), (void *)m);
        path = tmp;
    }
    if (!rc && path) {
        rc = model_save(m, path);
        struct stat st;
        if (!rc && stat(path, &st) == 0) res->model_bytes = (long)st.st_size;
        if (tmp) remove(tmp);
    }
    free(tmp);
    if (rc || !out_model) model_free(m);
    else *out_model = m;
    hr_blas_set_threads(o->threads);
    return rc;
}
