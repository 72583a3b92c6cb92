/* Single-problem prediction: the caller's workspace and the dispatch to the family.
 * A model is read-only while it predicts; everything a prediction writes besides its answer lives in a
 * model_ws, which wraps the family's own scratch (its ws_create hook) and remembers the model it fits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "models/model.h"

struct model_ws {
    const model *m;  /* the model the scratch was sized for */
    void *family;    /* the family's scratch (NULL when it needs none) */
    /* a table model that scores only its vocabulary: model_predict_candidates maps names through these */
    float *vocab_scores; /* (n_kernels) */
    int *by_name;        /* (n_kernels) kernel indices in strcmp order of their names, for bsearch */
    /* a find-db selection model: refused[c * n_kernels + k] is 1 when precision class c refuses kernel k of an FP32
     * problem (data_portable_precision_allows), whose score is then -INFINITY */
    unsigned char *refused;
};

/* qsort's comparator has no context argument: sort (name, index) pairs instead of indices */
typedef struct ws_named {
    const char *name;
    int index;
} ws_named;

static int ws_named_cmp(const void *a, const void *b)
{
    return strcmp(((const ws_named *)a)->name, ((const ws_named *)b)->name);
}

/* The name lookup of model_predict_candidates, built once per workspace so a call allocates nothing. */
static int ws_by_name_create(const model *m, model_ws *ws)
{
    int K = m->n_kernels;
    ws_named *tmp = hr_malloc((size_t)(K ? K : 1) * sizeof *tmp);
    ws->by_name = hr_malloc((size_t)(K ? K : 1) * sizeof *ws->by_name);
    ws->vocab_scores = hr_malloc((size_t)(K ? K : 1) * sizeof *ws->vocab_scores);
    if (!tmp || !ws->by_name || !ws->vocab_scores) {
        free(tmp);
        return HR_ENOMEM;
    }
    for (int k = 0; k < K; k++) tmp[k] = (ws_named){m->kernels[k], k};
    qsort(tmp, (size_t)K, sizeof *tmp, ws_named_cmp);
    for (int k = 0; k < K; k++) ws->by_name[k] = tmp[k].index;
    free(tmp);
    return HR_OK;
}

/* The kernels each precision class refuses, from their names, once per workspace. */
static int ws_refused_create(const model *m, model_ws *ws)
{
    int K = m->n_kernels;
    if (!(ws->refused = hr_malloc((size_t)(K ? K : 1) * DATA_PRECISION_COUNT))) return HR_ENOMEM;
    for (int c = 0; c < DATA_PRECISION_COUNT; c++)
        for (int k = 0; k < K; k++)
            ws->refused[(size_t)c * K + k] =
                !data_portable_precision_allows(c, DATA_DTYPE_FP32, m->kernels[k], strlen(m->kernels[k]));
    return HR_OK;
}

static void ws_release(model_ws *ws)
{
    free(ws->refused);
    free(ws->vocab_scores);
    free(ws->by_name);
    free(ws);
}

int model_ws_create(const model *m, model_ws **out)
{
    *out = NULL;
    model_ws *ws = hr_calloc(1, sizeof *ws);
    if (!ws) return HR_ENOMEM;
    ws->m = m;
    int rc = HR_OK;
    if (m->table && m->task == MODEL_TASK_SELECT) rc = ws_by_name_create(m, ws);
    else if (m->task == MODEL_TASK_SELECT) rc = ws_refused_create(m, ws);
    if (!rc && m->family->ws_create) rc = m->family->ws_create(m, &ws->family);
    if (rc) {
        ws_release(ws);
        return rc;
    }
    *out = ws;
    return HR_OK;
}

void model_ws_free(model_ws *ws)
{
    if (!ws) return;
    if (ws->m->family->ws_free) ws->m->family->ws_free(ws->family);
    ws_release(ws);
}

static int ws_check(const model *m, const model_ws *ws, model_task task)
{
    if (m->task != task)
        return hr_error(HR_EINVAL, task == MODEL_TASK_SELECT ? "this %s model predicts tuning parameters, not kernels"
                                                             : "this %s model selects kernels, not tuning parameters",
                        m->family->name);
    if (!ws || ws->m != m)
        return hr_error(HR_EINVAL, "%s prediction: the workspace was not created for this model (model_ws_create)",
                        m->family->name);
    return HR_OK;
}

int model_predict_select_x(const model *m, model_ws *ws, const data_problem *p, const float *x, float *scores)
{
    int rc = ws_check(m, ws, MODEL_TASK_SELECT);
    if (!rc) rc = m->family->predict_select(m, ws->family, p, x, scores);
    /* a kernel outside an FP32 problem's precision class is never a pick */
    if (!rc && ws->refused && p->dtype == DATA_DTYPE_FP32 && p->precision >= 0 && p->precision < DATA_PRECISION_COUNT) {
        const unsigned char *r = ws->refused + (size_t)p->precision * m->n_kernels;
        for (int k = 0; k < m->n_kernels; k++)
            if (r[k]) scores[k] = -INFINITY;
    }
    return rc;
}

int model_predict_tune_x(const model *m, model_ws *ws, const data_problem *p, const float *x, int32_t *values)
{
    int rc = ws_check(m, ws, MODEL_TASK_TUNE);
    return rc ? rc : m->family->predict_tune(m, ws->family, p, x, values);
}

int model_predict_tune_q(const model *m, model_ws *ws, const data_tune_problem *q, const float *x, int32_t *values)
{
    int rc = ws_check(m, ws, MODEL_TASK_TUNE);
    if (rc) return rc;
    if (m->family->predict_tune_q) return m->family->predict_tune_q(m, ws->family, q, x, values);
    data_problem none;
    memset(&none, 0, sizeof none);
    return m->family->predict_tune(m, ws->family, q->conv ? q->conv : &none, x, values);
}

int model_predict_select(const model *m, model_ws *ws, const data_problem *p, float *scores)
{
    /* a convolution key says nothing of a table's columns: scoring its features would answer for another problem */
    if (m->table)
        return hr_error(HR_EINVAL, "a benchmark-table model ranks a problem given by its column values "
                        "(model_predict_candidates, heurist predict --problem 'col=value,...'), not by a problem key");
    float x[256];
    HR_ASSERT(m->n_features <= 256);
    data_features_compute(p, x);
    return model_predict_select_x(m, ws, p, x, scores);
}

int model_predict_tune(const model *m, model_ws *ws, const data_problem *p, int32_t *values)
{
    if (m->table)
        return hr_error(HR_EINVAL, "a benchmark-table model tunes a problem given by its column values "
                        "(model_predict_tune_q, heurist predict --problem 'col=value,...'), not by a problem key");
    float x[256];
    HR_ASSERT(m->n_features <= 256);
    data_features_compute(p, x);
    return model_predict_tune_x(m, ws, p, x, values);
}

/* The vocabulary index of configuration name `name`, or -1. */
static int ws_kernel_find(const model *m, const model_ws *ws, const char *name)
{
    int lo = 0, hi = m->n_kernels - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(name, m->kernels[ws->by_name[mid]]);
        if (!c) return ws->by_name[mid];
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return -1;
}

int model_predict_candidates(const model *m, model_ws *ws, const float *x, const double *kv, int n, float *scores)
{
    int rc = ws_check(m, ws, MODEL_TASK_SELECT);
    if (rc) return rc;
    if (!m->table)
        return hr_error(HR_EINVAL, "%s model: scoring candidate configurations needs a model of a benchmark table",
                        m->family->name);
    if (m->family->predict_candidates) {
        rc = m->family->predict_candidates(m, ws->family, x, kv, n, scores);
        if (rc != MODEL_CANDIDATES_BY_NAME) return rc;
    }
    /* a table problem has no convolution fields: families that read p see zeros */
    data_problem p;
    memset(&p, 0, sizeof p);
    if ((rc = m->family->predict_select(m, ws->family, &p, x, ws->vocab_scores))) return rc;
    int nk = m->table->n_kernel;
    for (int i = 0; i < n; i++) {
        char name[4096];
        /* a negative status, or the name's length */
        if ((rc = data_table_config_format(m->table, kv + (size_t)i * nk, name, sizeof name)) < 0) return rc;
        int k = ws_kernel_find(m, ws, name);
        scores[i] = k >= 0 ? ws->vocab_scores[k] : -INFINITY;
    }
    return HR_OK;
}

double model_target_value(int target, double cost, double cost_best)
{
    switch (target) {
    case MODEL_TARGET_RELATIVE: return -log(cost / cost_best);
    case MODEL_TARGET_ABSOLUTE: return -log(cost);
    case MODEL_TARGET_LOG1P: return log1p(1.0 / cost);
    default: return NAN;
    }
}

int model_score_target(const model *m)
{
    return m->task == MODEL_TASK_SELECT && m->family->score_target ? m->family->score_target(m) : MODEL_TARGET_NONE;
}
