/* Split -> train -> evaluate, identical for every family. */
#include "pipeline/pipeline_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pipe_dataset_load(const char *path, const char *task, const char *solver, int threads, const hr_log *log,
                      pipe_dataset *out)
{
    return pipe_dataset_load_schema(path, task, solver, NULL, threads, log, out);
}

int pipe_dataset_load_schema(const char *path, const char *task, const char *solver, const char *schema, int threads,
                             const hr_log *log, pipe_dataset *out)
{
    return pipe_dataset_load_caps(path, task, solver, schema, NULL, threads, log, out);
}

/* The rows of a loaded dataset through its task's table: codec, values, features and groups. */
static int dataset_rows(pipe_dataset *out, const char *path, const char *solver)
{
    const pipe_task *t = pipe_task_of(out->task);
    int rc = t->dataset_check(out, path, solver);
    if (!rc) rc = t->dataset_codec(out, &out->codec);
    if (rc) return rc;
    out->n_values = data_codec_value_count(out->codec);
    out->n_features = data_codec_feature_count(out->codec);
    out->V = hr_malloc((size_t)(out->n ? out->n : 1) * (size_t)out->n_values * sizeof *out->V);
    out->X = hr_malloc((size_t)(out->n ? out->n : 1) * (size_t)out->n_features * sizeof *out->X);
    out->group = hr_malloc((size_t)(out->n ? out->n : 1) * sizeof *out->group);
    out->name = hr_strdup(hr_path_basename(path));
    if (!out->V || !out->X || !out->group || !out->name) return HR_ENOMEM;
    t->dataset_values(out, out->V);
    for (int i = 0; i < out->n; i++)
        data_codec_features(out->codec, out->V + (size_t)i * out->n_values, out->X + (size_t)i * out->n_features);
    return t->dataset_groups(out, NULL, out->group, &out->n_groups, &out->grouping, &out->by_column);
}

int pipe_dataset_group_by(pipe_dataset *d, const char *by)
{
    if (!by) return HR_OK;
    int rc = pipe_task_of(d->task)->dataset_groups(d, by, d->group, &d->n_groups, &d->grouping, &d->by_column);
    return rc ? hr_error_wrap(rc, "--group-by %s", by) : HR_OK;
}

int pipe_dataset_load_caps(const char *path, const char *task, const char *solver, const char *schema,
                           const char *caps, int threads, const hr_log *log, pipe_dataset *out)
{
    pipe_load l = {.task = task, .solver = solver, .schema = schema, .caps = caps, .threads = threads, .log = log};
    return pipe_dataset_open(path, &l, out);
}

int pipe_dataset_open(const char *path, const pipe_load *l, pipe_dataset *out)
{
    memset(out, 0, sizeof *out);
    const char *task = l->task, *solver = l->solver, *caps = l->caps;
    const hr_log *log = l->log;
    data_load_opts opts = {.strict = 0, .log = log, .threads = l->threads, .schema = l->schema, .precisions = l->precisions};
    data_select *sel = NULL;
    data_tune *tune = NULL;
    int rc = data_load(path, solver, &opts, &sel, &tune);
    if (rc) return rc;
    /* selection data becomes the asked task's when that task reads it and its source can: --task tune on a table
     * tunes, per problem the fields of its fastest configuration */
    const pipe_task *asked = task ? pipe_task_of(model_task_of_name(task)) : NULL;
    int convert = sel && asked && asked->from_select && data_select_tunes(sel);
    if (caps && !convert) {
        data_select_free(sel);
        data_tune_free(tune);
        return hr_error(HR_EINVAL, "--caps %s: capability rules are for --task tune on a benchmark table", caps);
    }
    if (convert) {
        rc = asked->from_select(path, sel, caps, log, &tune);
        sel = NULL;
        if (rc) return rc;
    }
    /* the data decides the task: a find-db selects, a perf-db tunes */
    out->task = sel ? MODEL_TASK_SELECT : MODEL_TASK_TUNE;
    if (sel) out->sel = sel, out->n = sel->n;
    else out->tune = tune, out->n = tune->n;
    if (task && model_task_of_name(task) != out->task) {
        rc = hr_error(HR_EINVAL, "%s holds %s data, but --task is %s", path, pipe_task_of(out->task)->data_desc, task);
        pipe_dataset_free(out);
        return rc;
    }
    if ((l->sources || l->source) && !out->sel) {
        pipe_dataset_free(out);
        return hr_error(HR_EINVAL, "%s: problem sources (--sources, --source) tag selection data", path);
    }
    if (l->sources) rc = data_sources_read(out->sel, l->sources, l->source);
    else if (l->source) rc = data_sources_set(out->sel, l->source);
    if (rc) {
        pipe_dataset_free(out);
        return l->sources ? hr_error_wrap(rc, "--sources %s", l->sources) : rc;
    }
    if ((rc = dataset_rows(out, path, solver))) pipe_dataset_free(out);
    return rc;
}

void pipe_dataset_free(pipe_dataset *d)
{
    const pipe_task *t = d->task ? pipe_task_of(d->task) : NULL;
    if (t) t->dataset_free(d);
    data_codec_free(d->codec);
    free(d->V);
    free(d->X);
    free(d->group);
    free(d->name);
    memset(d, 0, sizeof *d);
}

int pipe_baselines(const pipe_dataset *d, const model_family **out)
{
    return pipe_task_of(d->task)->baselines(d, out);
}

uint64_t pipe_dataset_digest(const pipe_dataset *d, uint64_t h)
{
    int head[4] = {(int)d->task, d->n, d->n_values, d->n_features};
    h = pipe_digest(h, head, sizeof head);
    if (d->V) h = pipe_digest(h, d->V, (size_t)d->n * (size_t)d->n_values * sizeof *d->V);
    if (d->X) h = pipe_digest(h, d->X, (size_t)d->n * (size_t)d->n_features * sizeof *d->X);
    return pipe_task_of(d->task)->digest(d, h);
}

const pipe_task *pipe_task_of(model_task task)
{
    static const pipe_task *const tasks[] = {&pipe_task_select, &pipe_task_tune};
    for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++)
        if (tasks[i]->task == task) return tasks[i];
    hr_error(HR_EINVAL, "no task %d", (int)task);
    return NULL;
}

void pipe_result_free(pipe_result *r)
{
    const pipe_task *t = r->task ? pipe_task_of(r->task) : NULL;
    if (t) t->result_free(r);
    free(r->curve);
    r->curve = NULL;
}

/* OpenBLAS's thread count is process-wide, and the pipeline alone sets it, at the start of each phase of a run:
 * training (pipe_run) gets --threads, or what the family asks for when its own threads call OpenBLAS side by
 * side (model_family.train_blas_threads); evaluation (pipe_evaluate) gets one, since one problem's products are
 * too small to split and predict_us is a one-thread figure. Nothing under models/, nn/ or train/ changes it. */
static void blas_threads_for_training(const model_family *fam, const pipe_opts *o)
{
    hr_blas_set_threads(fam->train_blas_threads ? fam->train_blas_threads(o->config, o->threads) : o->threads);
}

/* Median wall time of single-problem predictions over test rows through the model's public predict (the
 * problem's values in, its features computed by the codec), one thread (set by pipe_evaluate); NAN when a
 * prediction fails (an output larger than PIPE_PREDICT_MAX values, or a model whose codec reads other
 * vocabularies than the data's). */
static double measure_predict_us(const pipe_dataset *d, const model *m, const pipe_task *task, model_ws *ws,
                                 const int *rows, int n_rows)
{
    enum { CALLS = 1000 };
    double t[CALLS];
    union {
        float scores[PIPE_PREDICT_MAX];
        int32_t values[PIPE_PREDICT_MAX];
    } out;
    if (!data_codec_equal(d->codec, m->codec)) return NAN;
    for (int c = 0; c < CALLS; c++) {
        int r = rows[c % n_rows];
        double t0 = hr_now();
        if (task->predict_one(d, m, ws, r, &out)) return NAN;
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
    const pipe_task *task = pipe_task_of(m->task);
    if (!task) return HR_EINVAL;
    hr_blas_set_threads(1); /* see blas_threads_for_training */
    model_ws *ws = NULL;
    int timed = 0;
    int rc = model_ws_create(m, &ws);
    if (!rc) rc = task->evaluate(d, m, ws, rows, n_rows, res, &timed);
    /* an evaluation that timed the model's decisions itself (pipeline/select.c, on candidate configurations)
     * keeps its figure */
    if (!rc && !timed) res->predict_us = measure_predict_us(d, m, task, ws, rows, n_rows);
    model_ws_free(ws);
    if (rc) return rc;
    res->params = model_n_params(m);
    return HR_OK;
}

int pipe_split_random(const pipe_dataset *d, const char *spec, uint64_t default_seed, data_split *s, char *desc,
                      size_t n)
{
    memset(s, 0, sizeof *s);
    double frac;
    uint64_t seed;
    int rc = data_split_spec_parse(spec, &frac, &seed, default_seed);
    if (rc) return rc;
    if (frac == 0) { /* every problem trained on, and the figures are the training problems' own */
        s->train = hr_malloc((size_t)(d->n > 0 ? d->n : 1) * sizeof *s->train);
        s->test = hr_malloc((size_t)(d->n > 0 ? d->n : 1) * sizeof *s->test);
        if (!s->train || !s->test) {
            data_split_free(s);
            return HR_ENOMEM;
        }
        for (int i = 0; i < d->n; i++) s->train[i] = s->test[i] = i;
        s->n_train = s->n_test = d->n;
        snprintf(desc, n, "none");
        return HR_OK;
    }
    /* data_split_random rounds the test share and keeps at least one row on each side */
    long n_test = (long)(frac * d->n + 0.5);
    if (d->n - n_test < 1)
        return hr_error(HR_EINVAL, "--split %s: a test fraction of %g of %d problems leaves no training rows", spec, frac,
                        d->n);
    snprintf(desc, n, "random:%g:seed=%llu", frac, (unsigned long long)seed);
    if (d->by_column) {
        rc = data_split_random_groups(d->group, d->n, d->n_groups, frac, seed, s);
        return rc ? hr_error_wrap(rc, "--split %s, whole groups by %s", spec, d->grouping) : rc;
    }
    return data_split_random(d->n, frac, seed, s);
}

/* What each family does with the run options that only some use. The families' own structs would be
 * the better home for these flags; they are kept here while models/ is being reworked. */
static const struct family_caps {
    const char *family;
    int checkpoint; /* trains in train/'s loop, which writes and resumes checkpoints */
    int init_model; /* can start from a saved model of its own family */
    int shares_rows; /* trains data-parallel over pipe_opts.shard */
} family_caps[] = {
    {"gbdt", 0, 1, 1},
    {"reformer", 1, 0, 0},
    {"transformer", 1, 0, 0},
    {"seq2seq", 1, 0, 0},
};

int pipe_family_shares_rows(const model_family *fam)
{
    for (size_t i = 0; i < sizeof family_caps / sizeof family_caps[0]; i++)
        if (strcmp(family_caps[i].family, fam->name) == 0) return family_caps[i].shares_rows;
    return 0;
}

int pipe_opts_check(const model_family *fam, const pipe_opts *o)
{
    struct family_caps caps = {fam->name, 0, 0, 0};
    for (size_t i = 0; i < sizeof family_caps / sizeof family_caps[0]; i++)
        if (strcmp(family_caps[i].family, fam->name) == 0) caps = family_caps[i];
    if (o->resume && !o->checkpoint) return hr_error(HR_EINVAL, "--resume needs --checkpoint PATH");
    if (o->checkpoint && !caps.checkpoint)
        return hr_error(HR_EINVAL, "--checkpoint: model family '%s' does not write checkpoints (reformer, transformer and seq2seq do)",
                        fam->name);
    if (o->init_model) {
        struct stat st;
        if (stat(o->init_model, &st) != 0 || !S_ISREG(st.st_mode))
            return hr_error(HR_EINVAL, "--init-model %s: no such file", o->init_model);
    }
    if (o->init_model && !caps.init_model)
        return hr_error(HR_EINVAL, "--init-model: model family '%s' cannot start from a saved model (gbdt can)", fam->name);
    return HR_OK;
}

/* A temporary model path under $TMPDIR (default /tmp), created empty; NULL with the error recorded. */
static char *tmp_model_path(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *path = hr_malloc(n);
    if (!path) return NULL;
    snprintf(path, n, "%s/heurist_model_XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        hr_error(HR_EIO, "%s: cannot create a temporary model file: %s", path, strerror(errno));
        free(path);
        return NULL;
    }
    close(fd);
    return path;
}

int pipe_run(const pipe_dataset *d, const data_split *split, const model_family *fam, const pipe_opts *o,
             pipe_result *res, model **out_model)
{
    memset(res, 0, sizeof *res);
    if (out_model) *out_model = NULL;
    if (!model_family_task(fam, d->task))
        return hr_error(HR_EINVAL, "model family '%s' does not support the %s task", fam->name,
                        model_task_name(d->task));
    int rc = pipe_opts_check(fam, o);
    if (rc) return rc;
    /* early-stopping rows: a seeded share (10% by default) of the training rows, or none (every training
     * row is fitted) */
    const int *fit = split->train;
    int n_fit = split->n_train, n_valid = 0, *fit_rows = NULL, *valid = NULL;
    if (o->valid_fraction >= 0 && split->n_train < 2)
        return hr_error(HR_EINVAL, "%d training row%s: too few to hold back rows for early stopping (--valid-fraction 0 fits them all)",
                        split->n_train, split->n_train == 1 ? "" : "s");
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
    model_train_data td = {.task = d->task, .codec = d->codec, .V = d->V, .X = d->X, .n_features = d->n_features,
                           .train = fit, .n_train = n_fit, .valid = valid, .n_valid = n_valid};
    pipe_task_of(d->task)->train_data(d, &td);
    if (o->shard && o->shard->size > 1 && !pipe_family_shares_rows(fam))
        return hr_error(HR_EINVAL, "model family '%s' does not train over several processes' rows (gbdt does)", fam->name);
    /* a checkpoint records every option in effect, by name, so that a resume with other options is refused */
    char *effective = NULL;
    if (o->checkpoint && fam->config_options) {
        hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
        hr_config_table t = {fam->name, rows, fam->config_options(rows)};
        if (!(effective = hr_config_effective(&t, o->config))) {
            free(fit_rows);
            free(valid);
            return HR_ENOMEM;
        }
    }
    model *init = NULL;
    rc = o->init_model ? model_load(o->init_model, &init) : HR_OK;
    model_ctx ctx = {o->seed, o->threads, o->log, o->config, o->checkpoint, o->resume, o->init_model, o->shard, effective,
                     init};
    model *m = NULL;
    blas_threads_for_training(fam, o);
    double t0 = hr_now();
    if (!rc) rc = model_train(fam, &td, &ctx, &m);
    double secs = hr_now() - t0;
    model_free(init);
    free(effective);
    free(fit_rows);
    free(valid);
    if (rc) return rc;
    m->train_seconds = secs;
    res->train_seconds = secs;
    res->n_train = split->n_train;
    if (o->shard && o->shard->rank != 0) { /* the same model as rank 0's, which evaluates and saves it */
        model_free(m);
        return HR_OK;
    }
    if (m->n_curve) {
        res->curve = hr_malloc((size_t)m->n_curve * sizeof *res->curve);
        if (res->curve) {
            memcpy(res->curve, m->curve, (size_t)m->n_curve * sizeof *res->curve);
            res->n_curve = m->n_curve;
        }
    }
    m->select_guard = o->guard;
    m->select_guard_top = o->guard_top;
    rc = pipe_evaluate(d, m, split->test, split->n_test, res);
    /* model_bytes is the size of the saved model (a temporary file, then removed, when no path was asked for) */
    char *tmp = NULL;
    const char *path = o->save_path;
    if (!rc && !path && !(path = tmp = tmp_model_path())) rc = HR_EIO;
    if (!rc) {
        rc = model_save(m, path);
        struct stat st;
        if (!rc && stat(path, &st) == 0) res->model_bytes = (long)st.st_size;
    }
    if (tmp) remove(tmp);
    free(tmp);
    if (rc || !out_model) model_free(m);
    else *out_model = m;
    return rc;
}
