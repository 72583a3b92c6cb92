/* Single-problem prediction: the caller's workspace and the dispatch to the family's task table.
 * A model is read-only while it predicts; everything a prediction writes besides its answer lives in a
 * model_ws, which wraps the family's own scratch (its ws_create hook) and remembers the model it fits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/models_internal.h"

struct model_ws {
    const model *m;      /* the model the scratch was sized for */
    void *family;        /* the family's scratch (NULL when it needs none) */
    float *x;            /* (n_features) the features model_predict_select computes */
    /* a selection model's ranking (models/rank.c) */
    float *scores;       /* (n_kernels) */
    unsigned char *ok;   /* (n_kernels) the kernels that can run the problem (model_applicable) */
    /* valued configurations: the allowed ones gathered, so that only they are scored (model_predict_within) */
    double *sub_kv;      /* (n_kernels, config width) */
    int *sub_index;      /* (n_kernels) */
    float *sub_scores;   /* (n_kernels) */
    /* a model of valued configurations that scores only its vocabulary: model_predict_candidates maps names
     * through these */
    float *vocab_scores; /* (n_kernels) */
    int *by_name;        /* (n_kernels) kernel indices in strcmp order of their names, for bsearch */
    /* kernels known by name: refused[c * n_kernels + k] is 1 when allowance class c (data_codec_allow_class: an FP32
     * convolution's precision class) refuses kernel k, whose score is then -INFINITY; NULL without classes */
    unsigned char *refused;
};

/* The kernels each allowance class refuses, from their names, once per workspace. */
static int ws_refused_create(const model *m, model_ws *ws)
{
    int K = m->n_kernels, nc = data_codec_allow_count(m->codec);
    if (!nc) return HR_OK;
    if (!(ws->refused = hr_malloc((size_t)(K ? K : 1) * (size_t)nc))) return HR_ENOMEM;
    for (int c = 0; c < nc; c++)
        for (int k = 0; k < K; k++) ws->refused[(size_t)c * K + k] = !data_codec_class_allows(m->codec, c, m->kernels[k]);
    return HR_OK;
}

/* qsort's comparator has no context argument: sort (name, index) pairs instead of indices */
typedef struct ws_named {
    const char *name;
    int index;
} ws_named;

static int ws_named_cmp(const void *a, const void *b)
{
    return strcmp(((const ws_named *)a)->name, ((const ws_named *)b)->name);
}

/* The name lookup of model_predict_candidates, built once per workspace so a call allocates nothing: a model
 * whose configurations have values may score only its vocabulary, and candidates map to it by name. */
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

static void ws_release(model_ws *ws)
{
    free(ws->refused);
    free(ws->x);
    free(ws->scores);
    free(ws->ok);
    free(ws->sub_kv);
    free(ws->sub_index);
    free(ws->sub_scores);
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
    int rc = (ws->x = hr_malloc((size_t)(m->n_features > 0 ? m->n_features : 1) * sizeof *ws->x)) ? HR_OK : HR_ENOMEM;
    if (!rc && m->task == MODEL_TASK_SELECT) {
        size_t K = (size_t)(m->n_kernels > 0 ? m->n_kernels : 1);
        if (!(ws->scores = hr_malloc(K * sizeof *ws->scores)) || !(ws->ok = hr_malloc(K))) rc = HR_ENOMEM;
        size_t width = (size_t)data_codec_config_width(m->codec);
        if (!rc && m->kernel_values &&
            (!(ws->sub_kv = hr_malloc(K * (width ? width : 1) * sizeof *ws->sub_kv)) ||
             !(ws->sub_index = hr_malloc(K * sizeof *ws->sub_index)) || !(ws->sub_scores = hr_malloc(K * sizeof *ws->sub_scores))))
            rc = HR_ENOMEM;
    }
    if (!rc && m->kernel_values) rc = ws_by_name_create(m, ws);
    else if (!rc && m->n_kernels) rc = ws_refused_create(m, ws);
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

float *model_ws_scores(model_ws *ws)
{
    return ws->scores;
}

unsigned char *model_ws_mask(model_ws *ws)
{
    return ws->ok;
}

float *model_ws_features(model_ws *ws)
{
    return ws->x;
}

static int ws_check(const model *m, const model_ws *ws, model_task task)
{
    if (m->task != task)
        return hr_error(HR_EINVAL, "this %s model does the %s task, not %s", m->family->name, model_task_name(m->task),
                        model_task_name(task));
    if (!ws || ws->m != m)
        return hr_error(HR_EINVAL, "%s prediction: the workspace was not created for this model (model_ws_create)",
                        m->family->name);
    return HR_OK;
}

int model_problem_parse(const model *m, const char *text, double *pv)
{
    return data_codec_problem_parse(m->codec, text, pv);
}

/* The family's scores, the kernels the problem refuses by rule set to -INFINITY: never a pick. */
static int select_scores(const model *m, model_ws *ws, const double *pv, const float *x, float *scores)
{
    int rc = m->family->select->predict(m, ws->family, pv, x, scores);
    int cls = ws->refused ? data_codec_allow_class(m->codec, pv) : -1;
    if (!rc && cls >= 0) {
        const unsigned char *r = ws->refused + (size_t)cls * m->n_kernels;
        for (int k = 0; k < m->n_kernels; k++)
            if (r[k]) scores[k] = -INFINITY;
    }
    return rc;
}

int model_predict_select_x(const model *m, model_ws *ws, const double *pv, const float *x, float *scores)
{
    int rc = ws_check(m, ws, MODEL_TASK_SELECT);
    return rc ? rc : select_scores(m, ws, pv, x, scores);
}

int model_predict_select(const model *m, model_ws *ws, const double *pv, float *scores)
{
    int rc = ws_check(m, ws, MODEL_TASK_SELECT);
    if (rc) return rc;
    data_codec_features(m->codec, pv, ws->x);
    return select_scores(m, ws, pv, ws->x, scores);
}

/* The tuner's vendor guard on the decoded values of q: the vendor's first pick replaces them unless their score
 * beats the pick's by at least the margin; a pick with a value the model never writes (score -INFINITY) is beyond
 * what the model can judge, and stands. No guard without a margin, without the pick, or for a family that scores no
 * sequence. */
static int tune_guard(const model *m, model_ws *ws, const data_tune_problem *q, const float *x, int32_t *values)
{
    const model_tune_ops *t = m->family->tune;
    if (!(m->select_guard > 0) || !q->vendor || !t->score) return HR_OK;
    if (!memcmp(values, q->vendor, (size_t)m->length * sizeof *values)) return HR_OK;
    const int32_t *seqs[2] = {values, q->vendor};
    float sc[2];
    int rc = t->score(m, ws->family, q, x, seqs, 2, sc);
    if (rc) return rc;
    if (!isfinite(sc[1]) || !(sc[0] - sc[1] >= m->select_guard))
        memcpy(values, q->vendor, (size_t)m->length * sizeof *values);
    return HR_OK;
}

int model_predict_tune_x(const model *m, model_ws *ws, const data_tune_problem *q, const float *x, int32_t *values)
{
    int rc = ws_check(m, ws, MODEL_TASK_TUNE);
    if (!rc) rc = m->family->tune->predict(m, ws->family, q, x, values);
    return rc ? rc : tune_guard(m, ws, q, x, values);
}

int model_predict_tune(const model *m, model_ws *ws, const data_tune_problem *q, int32_t *values)
{
    int rc = ws_check(m, ws, MODEL_TASK_TUNE);
    if (rc) return rc;
    data_codec_features(m->codec, q->pv, ws->x);
    rc = m->family->tune->predict(m, ws->family, q, ws->x, values);
    return rc ? rc : tune_guard(m, ws, q, ws->x, values);
}

int model_score_tune(const model *m, model_ws *ws, const data_tune_problem *q, const int32_t *const *seqs, int n,
                     float *scores)
{
    int rc = ws_check(m, ws, MODEL_TASK_TUNE);
    if (rc) return rc;
    if (!m->family->tune->score)
        return hr_error(HR_EINVAL, "a %s tune model scores no sequence", m->family->name);
    data_codec_features(m->codec, q->pv, ws->x);
    return m->family->tune->score(m, ws->family, q, ws->x, seqs, n, scores);
}

int model_predict_within(const model *m, model_ws *ws, const double *pv, const unsigned char *ok, float *scores)
{
    int rc = ws_check(m, ws, MODEL_TASK_SELECT);
    if (rc) return rc;
    const model_select_ops *ops = m->family->select;
    if (m->kernel_values && ops->predict_candidates) {
        int width = data_codec_config_width(m->codec), n = 0;
        for (int k = 0; k < m->n_kernels; k++)
            if (ok[k]) {
                memcpy(ws->sub_kv + (size_t)n * width, m->kernel_values + (size_t)k * width, (size_t)width * sizeof *ws->sub_kv);
                ws->sub_index[n++] = k;
            }
        data_codec_features(m->codec, pv, ws->x);
        rc = ops->predict_candidates(m, ws->family, ws->x, ws->sub_kv, n, ws->sub_scores);
        if (rc != MODEL_CANDIDATES_BY_NAME) {
            for (int k = 0; !rc && k < m->n_kernels; k++) scores[k] = -INFINITY;
            for (int i = 0; !rc && i < n; i++) scores[ws->sub_index[i]] = ws->sub_scores[i];
            return rc;
        }
    }
    rc = model_predict_select(m, ws, pv, scores);
    for (int k = 0; !rc && k < m->n_kernels; k++)
        if (!ok[k]) scores[k] = -INFINITY;
    return rc;
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
    if (!m->kernel_values)
        return hr_error(HR_EINVAL, "%s model: a %s's kernels are known by name, they have no fields to score candidate "
                        "configurations by", m->family->name, data_codec_name(m->codec));
    const model_select_ops *ops = m->family->select;
    if (ops->predict_candidates) {
        rc = ops->predict_candidates(m, ws->family, x, kv, n, scores);
        if (rc != MODEL_CANDIDATES_BY_NAME) return rc;
    }
    /* the vocabulary's scores, for the problem whose values the features hold */
    double pv[DATA_CODEC_MAX_VALUES];
    data_codec_values_of_features(m->codec, x, pv);
    if ((rc = ops->predict(m, ws->family, pv, x, ws->vocab_scores))) return rc;
    int nk = data_codec_config_width(m->codec);
    for (int i = 0; i < n; i++) {
        char name[4096];
        if ((rc = data_codec_config_format(m->codec, kv + (size_t)i * nk, name, sizeof name)) < 0) return rc;
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
    const model_select_ops *ops = m->family->select;
    return ops && ops->score_target ? ops->score_target(m) : MODEL_TARGET_NONE;
}
