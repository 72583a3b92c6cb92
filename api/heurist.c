/* The C API (include/heurist.h) over models/: a handle owns a loaded model; the calls on a handle take their own
 * workspace, so one handle serves many threads (a predictor, api/predictor.c, keeps one). Problems are text its
 * model's codec reads. */
#include "heurist.h"

#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"

/* The API's status values are core's (core/core.h), so a library error passes through unchanged. */
_Static_assert((int)HEURIST_OK == (int)HR_OK, "HEURIST_OK is HR_OK");
_Static_assert((int)HEURIST_EINVAL == (int)HR_EINVAL, "HEURIST_EINVAL is HR_EINVAL");
_Static_assert((int)HEURIST_EIO == (int)HR_EIO, "HEURIST_EIO is HR_EIO");
_Static_assert((int)HEURIST_ENOMEM == (int)HR_ENOMEM, "HEURIST_ENOMEM is HR_ENOMEM");
_Static_assert((int)HEURIST_EFORMAT == (int)HR_EFORMAT, "HEURIST_EFORMAT is HR_EFORMAT");
_Static_assert((int)HEURIST_EVERSION == (int)HR_EVERSION, "HEURIST_EVERSION is HR_EVERSION");
_Static_assert((int)HEURIST_ESTATE == (int)HR_ESTATE, "HEURIST_ESTATE is HR_ESTATE");

const char *heurist_last_error(void)
{
    return hr_last_error();
}

int heurist_api_version(void)
{
    return HEURIST_API_VERSION;
}

int heurist_model_load(const char *path, heurist_model **out)
{
    if (out) *out = NULL;
    if (!path || !out) return hr_error(HEURIST_EINVAL, "heurist_model_load: path and out are required");
    heurist_model *h = hr_calloc(1, sizeof *h);
    if (!h) return HEURIST_ENOMEM;
    int rc = model_load(path, &h->m);
    if (rc) {
        free(h);
        return rc;
    }
    *out = h;
    return HEURIST_OK;
}

void heurist_model_free(heurist_model *h)
{
    if (!h) return;
    model_free(h->m);
    free(h);
}

/* The accessors answer a NULL handle (a failed heurist_model_load leaves one) with 0 or NULL and a message, as
 * the calls that return a status answer it with HEURIST_EINVAL. */
static int have_model(const heurist_model *h, const char *fn)
{
    if (h && h->m) return 1;
    hr_error(HEURIST_EINVAL, "%s: model is NULL", fn);
    return 0;
}

_Static_assert((int)HEURIST_TASK_SELECT == (int)MODEL_TASK_SELECT && (int)HEURIST_TASK_TUNE == (int)MODEL_TASK_TUNE,
               "the API's tasks are the models'");

heurist_task heurist_model_task(const heurist_model *h)
{
    if (!have_model(h, "heurist_model_task")) return HEURIST_TASK_NONE;
    return (heurist_task)h->m->task;
}

/* A model of one task holds no vocabulary of the other: its count is 0. */
int heurist_model_kernel_count(const heurist_model *h)
{
    if (!have_model(h, "heurist_model_kernel_count")) return 0;
    return h->m->n_kernels;
}

const char *heurist_model_kernel_name(const heurist_model *h, int k)
{
    if (!have_model(h, "heurist_model_kernel_name")) return NULL;
    return k >= 0 && k < heurist_model_kernel_count(h) ? h->m->kernels[k] : NULL;
}

int heurist_model_param_count(const heurist_model *h)
{
    if (!have_model(h, "heurist_model_param_count")) return 0;
    return h->m->length;
}

const char *heurist_model_param_name(const heurist_model *h, int j)
{
    if (!have_model(h, "heurist_model_param_name")) return NULL;
    return j >= 0 && j < heurist_model_param_count(h) ? h->m->param_names[j] : NULL;
}

/* A problem as text through the model's codec: a find-db key or a whole find-db line, a table problem's
 * "col=value,...". */
static int parse_key(const model *m, const char *key, double *pv)
{
    if (!key) return hr_error(HEURIST_EINVAL, "problem key is NULL");
    return model_problem_parse(m, key, pv) ? HEURIST_EINVAL : HEURIST_OK;
}

int api_need_model(const heurist_model *h, const char *fn)
{
    return h && h->m ? HEURIST_OK : hr_error(HEURIST_EINVAL, "%s: model is NULL", fn);
}

int api_need_task(const heurist_model *h, model_task task, const char *fn)
{
    if (!h || !h->m) return hr_error(HEURIST_EINVAL, "%s: model is NULL", fn);
    if (h->m->task != task)
        return hr_error(HEURIST_ESTATE, "%s: this model does the %s task, not %s", fn, model_task_name(h->m->task),
                        model_task_name(task));
    return HEURIST_OK;
}

/* Scratch of one thread's selection calls: the workspace, scores and ranking. */
typedef struct select_scratch {
    model_ws *ws;
    float *scores;
    model_ranked *ranked;
} select_scratch;

static void select_scratch_free(select_scratch *s)
{
    model_ws_free(s->ws);
    free(s->scores);
    free(s->ranked);
}

static int select_scratch_init(const model *m, select_scratch *s)
{
    memset(s, 0, sizeof *s);
    int rc = model_ws_create(m, &s->ws);
    if (!rc && (!(s->scores = hr_malloc((size_t)m->n_kernels * sizeof *s->scores)) ||
                !(s->ranked = hr_malloc((size_t)m->n_kernels * sizeof *s->ranked))))
        rc = HEURIST_ENOMEM;
    if (rc) select_scratch_free(s);
    return rc;
}

/* Ranks one parsed problem into s->ranked; returns how many, at least one, or a negative status (HEURIST_ESTATE
 * when no kernel gets a finite score: model_rank's rule, the same as `heurist predict`'s). */
static int rank_one(const model *m, select_scratch *s, const double *pv)
{
    int rc = model_predict_select(m, s->ws, pv, s->scores);
    return rc ? rc : model_rank(m, pv, s->scores, s->ranked, NULL);
}

int heurist_rank(const heurist_model *h, const char *key, int capacity, int *kernel, float *prob, int *n_ranked)
{
    int rc = api_need_task(h, MODEL_TASK_SELECT, "heurist_rank");
    if (rc) return rc;
    if (capacity < 0 || (capacity > 0 && !kernel))
        return hr_error(HEURIST_EINVAL, "heurist_rank: kernel must hold capacity (%d) entries", capacity);
    double pv[DATA_CODEC_MAX_VALUES];
    if ((rc = parse_key(h->m, key, pv))) return rc;
    select_scratch s;
    if ((rc = select_scratch_init(h->m, &s))) return rc;
    int n = rank_one(h->m, &s, pv);
    if (n < 0) hr_error_wrap(n, "heurist_rank: '%.200s'", key);
    if (n >= 0) {
        for (int i = 0; i < n && i < capacity; i++) {
            kernel[i] = s.ranked[i].kernel;
            if (prob) prob[i] = s.ranked[i].prob;
        }
        if (n_ranked) *n_ranked = n;
    }
    select_scratch_free(&s);
    return n < 0 ? n : HEURIST_OK;
}

/* A batch over threads: each thread owns its scratch; the first error of each chunk is kept, and the
 * batch's error is the first chunk's, so it does not depend on timing. */
typedef struct batch {
    const model *m;
    const char *const *keys;
    int *best;          /* select */
    int32_t *values;    /* tune */
    int *chunk_rc;      /* (threads) */
    char (*chunk_msg)[256];
} batch;

static void select_chunk(void *ctx, size_t begin, size_t end, int tid)
{
    batch *b = ctx;
    select_scratch s;
    int rc = select_scratch_init(b->m, &s), first = HEURIST_OK;
    for (size_t i = begin; i < end; i++) {
        double pv[DATA_CODEC_MAX_VALUES];
        int n = rc ? rc : parse_key(b->m, b->keys[i], pv);
        if (!n) n = rank_one(b->m, &s, pv);
        b->best[i] = n > 0 ? s.ranked[0].kernel : -1;
        if (n < 0 && !first) {
            first = n;
            snprintf(b->chunk_msg[tid], sizeof b->chunk_msg[tid], "problem %zu: %s", i, hr_last_error());
        }
    }
    if (!rc) select_scratch_free(&s);
    b->chunk_rc[tid] = first;
}

static void tune_chunk(void *ctx, size_t begin, size_t end, int tid)
{
    batch *b = ctx;
    model_ws *ws = NULL;
    int rc = model_ws_create(b->m, &ws), first = HEURIST_OK, L = b->m->length;
    for (size_t i = begin; i < end; i++) {
        double pv[DATA_CODEC_MAX_VALUES];
        int32_t *row = b->values + i * (size_t)L;
        int r = rc ? rc : parse_key(b->m, b->keys[i], pv);
        data_tune_problem q = {pv, NULL, 0, L, NULL};
        if (!r) r = model_predict_tune(b->m, ws, &q, row);
        if (!r && model_tune_no_pick(row, L)) r = hr_error(HEURIST_ESTATE, "the model makes no prediction for this problem");
        if (r) {
            memset(row, 0, (size_t)L * sizeof *row);
            if (!first) {
                first = r;
                snprintf(b->chunk_msg[tid], sizeof b->chunk_msg[tid], "problem %zu: %s", i, hr_last_error());
            }
        }
    }
    model_ws_free(ws);
    b->chunk_rc[tid] = first;
}

static int run_batch(const heurist_model *h, const char *const *keys, int n, int threads, batch *b,
                     hr_range_fn fn, const char *name)
{
    if (n < 0 || (n > 0 && !keys)) return hr_error(HEURIST_EINVAL, "%s: %d keys", name, n);
    int nt = hr_threads_resolve(threads);
    if (nt > n) nt = n > 0 ? n : 1;
    b->m = h->m;
    b->keys = keys;
    b->chunk_rc = hr_calloc((size_t)nt, sizeof *b->chunk_rc);
    b->chunk_msg = hr_calloc((size_t)nt, sizeof *b->chunk_msg);
    int rc = b->chunk_rc && b->chunk_msg ? hr_parallel_for(nt, (size_t)n, fn, b) : HEURIST_ENOMEM;
    for (int t = 0; !rc && t < nt; t++)
        if (b->chunk_rc[t]) rc = hr_error(b->chunk_rc[t], "%s: %s", name, b->chunk_msg[t]);
    free(b->chunk_rc);
    free(b->chunk_msg);
    return rc;
}

int heurist_rank_batch(const heurist_model *h, const char *const *keys, int n, int threads, int *best)
{
    int rc = api_need_task(h, MODEL_TASK_SELECT, "heurist_rank_batch");
    if (rc) return rc;
    if (n > 0 && !best) return hr_error(HEURIST_EINVAL, "heurist_rank_batch: best is NULL");
    batch b = {.best = best};
    return run_batch(h, keys, n, threads, &b, select_chunk, "heurist_rank_batch");
}

int heurist_tune(const heurist_model *h, const char *key, int32_t *values)
{
    int rc = api_need_task(h, MODEL_TASK_TUNE, "heurist_tune");
    if (rc) return rc;
    if (!values) return hr_error(HEURIST_EINVAL, "heurist_tune: values is NULL");
    double pv[DATA_CODEC_MAX_VALUES];
    if ((rc = parse_key(h->m, key, pv))) return rc;
    model_ws *ws;
    if ((rc = model_ws_create(h->m, &ws))) return rc;
    data_tune_problem q = {pv, NULL, 0, h->m->length, NULL};
    rc = model_predict_tune(h->m, ws, &q, values);
    model_ws_free(ws);
    if (!rc && model_tune_no_pick(values, h->m->length)) {
        memset(values, 0, (size_t)h->m->length * sizeof *values);
        rc = hr_error(HEURIST_ESTATE, "heurist_tune: the model makes no prediction for '%.200s' (the vendor's list does "
                      "not hold it)", key);
    }
    return rc;
}

int heurist_tune_batch(const heurist_model *h, const char *const *keys, int n, int threads, int32_t *values)
{
    int rc = api_need_task(h, MODEL_TASK_TUNE, "heurist_tune_batch");
    if (rc) return rc;
    if (n > 0 && !values) return hr_error(HEURIST_EINVAL, "heurist_tune_batch: values is NULL");
    batch b = {.values = values};
    return run_batch(h, keys, n, threads, &b, tune_chunk, "heurist_tune_batch");
}
