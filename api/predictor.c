/* The predictor (include/heurist.h): a model with one workspace, sized when it is created, so that the calls that
 * rank or tune a problem allocate nothing; the column accessors; the batch of problems given as values. */
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"

struct heurist_predictor {
    const model *m;
    model_ws *ws;
    int capacity;          /* rows of scores and ranked: the model's kernels, or the most candidates a call had */
    float *scores;         /* (capacity) the candidates' scores */
    model_ranked *ranked;  /* (capacity) */
};

int heurist_predictor_create(const heurist_model *h, heurist_predictor **out)
{
    if (out) *out = NULL;
    if (!out) return hr_error(HEURIST_EINVAL, "heurist_predictor_create: out is NULL");
    int rc = api_need_model(h, "heurist_predictor_create");
    if (rc) return rc;
    heurist_predictor *p = hr_calloc(1, sizeof *p);
    if (!p) return HEURIST_ENOMEM;
    p->m = h->m;
    p->capacity = h->m->n_kernels > 0 ? h->m->n_kernels : 1;
    if ((rc = model_ws_create(h->m, &p->ws)) == HR_OK &&
        (!(p->scores = hr_malloc((size_t)p->capacity * sizeof *p->scores)) ||
         !(p->ranked = hr_malloc((size_t)p->capacity * sizeof *p->ranked))))
        rc = HEURIST_ENOMEM;
    if (rc) {
        heurist_predictor_free(p);
        return rc;
    }
    *out = p;
    return HEURIST_OK;
}

void heurist_predictor_free(heurist_predictor *p)
{
    if (!p) return;
    model_ws_free(p->ws);
    free(p->scores);
    free(p->ranked);
    free(p);
}

/* ---- columns ---- */

static const data_codec *codec_of(const heurist_model *h, const char *fn)
{
    return api_need_model(h, fn) ? NULL : h->m->codec;
}

int heurist_model_problem_count(const heurist_model *h)
{
    const data_codec *c = codec_of(h, "heurist_model_problem_count");
    return c ? data_codec_value_count(c) : 0;
}

const char *heurist_model_problem_name(const heurist_model *h, int j)
{
    const data_codec *c = codec_of(h, "heurist_model_problem_name");
    return c && j >= 0 && j < data_codec_value_count(c) ? data_codec_column(c, j, NULL, NULL) : NULL;
}

int heurist_model_config_count(const heurist_model *h)
{
    const data_codec *c = codec_of(h, "heurist_model_config_count");
    return c ? data_codec_config_width(c) : 0;
}

const char *heurist_model_config_name(const heurist_model *h, int j)
{
    const data_codec *c = codec_of(h, "heurist_model_config_name");
    return c && j >= 0 ? data_codec_column(c, data_codec_value_count(c) + j, NULL, NULL) : NULL;
}

int heurist_model_category_count(const heurist_model *h, int column)
{
    const data_codec *c = codec_of(h, "heurist_model_category_count");
    int n = 0;
    if (c) data_codec_column(c, column, &n, NULL);
    return n;
}

const char *heurist_model_category_name(const heurist_model *h, int column, int v)
{
    const data_codec *c = codec_of(h, "heurist_model_category_name");
    int n = 0;
    const char *const *names = NULL;
    if (c) data_codec_column(c, column, &n, &names);
    return v >= 0 && v < n ? names[v] : NULL;
}

int heurist_model_problem_parse(const heurist_model *h, const char *problem, double *values)
{
    int rc = api_need_model(h, "heurist_model_problem_parse");
    if (rc) return rc;
    if (!problem || !values) return hr_error(HEURIST_EINVAL, "heurist_model_problem_parse: problem and values are required");
    return model_problem_parse(h->m, problem, values) ? hr_error_wrap(HEURIST_EINVAL, "heurist_model_problem_parse") : 0;
}

/* ---- ranking ---- */

/* Every value of a problem (row < 0) or of the candidates' rows checked against its column (data_codec_column_check),
 * the error naming the row. */
static int check_values(const model *m, const double *v, int rows, int is_config, const char *fn)
{
    const data_codec *c = m->codec;
    int np = data_codec_value_count(c), width = is_config ? data_codec_config_width(c) : np;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < width; j++) {
            int rc = data_codec_column_check(c, is_config ? np + j : j, v[(size_t)r * width + j]);
            if (rc && is_config) return hr_error_wrap(rc, "%s: candidate %d", fn, r);
            if (rc) return hr_error_wrap(rc, "%s: problem", fn);
        }
    return HEURIST_OK;
}

/* The candidate matrix's arguments: n_candidates >= 1 rows, of a model whose configurations have values. */
static int check_candidates(const model *m, const double *candidates, int n, const char *fn)
{
    if (!candidates) return HEURIST_OK;
    if (!data_codec_config_width(m->codec))
        return hr_error(HEURIST_EINVAL, "%s: a %s model's kernels are known by name only, it takes no candidate "
                        "matrix (candidates must be NULL)", fn, data_codec_name(m->codec));
    if (n < 1) return hr_error(HEURIST_EINVAL, "%s: n_candidates is %d, at least 1 with a candidate matrix", fn, n);
    return check_values(m, candidates, n, 1, fn);
}

/* Grows the predictor's candidate scratch to n rows (only when a call has more candidates than any before). */
static int reserve(heurist_predictor *p, int n)
{
    if (n <= p->capacity) return HEURIST_OK;
    float *s = realloc(p->scores, (size_t)n * sizeof *s);
    if (s) p->scores = s;
    model_ranked *r = s ? realloc(p->ranked, (size_t)n * sizeof *r) : NULL;
    if (!r) return hr_error(HEURIST_ENOMEM, "a predictor's scratch for %d candidates", n);
    p->ranked = r;
    p->capacity = n;
    return HEURIST_OK;
}

/* Ranks problem pv (checked) over the candidates (checked, or NULL) into p->ranked, its first k sorted; returns how
 * many were ranked or a negative status. */
static int rank_checked(heurist_predictor *p, const double *pv, const double *candidates, int n, int k)
{
    if (!candidates) return model_rank_problem(p->m, p->ws, pv, k, p->ranked, NULL);
    int rc = reserve(p, n);
    return rc ? rc : model_rank_candidates(p->m, p->ws, pv, candidates, n, k, p->scores, p->ranked);
}

static int rank_out(heurist_predictor *p, const double *pv, const double *candidates, int n_candidates, int capacity,
                    int *index, float *score, int *n_ranked, const char *fn)
{
    if (capacity < 0 || (capacity > 0 && !index))
        return hr_error(HEURIST_EINVAL, "%s: index must hold capacity (%d) entries", fn, capacity);
    int rc = check_candidates(p->m, candidates, n_candidates, fn);
    int n = rc ? rc : rank_checked(p, pv, candidates, n_candidates, capacity);
    if (n < 0) return rc ? rc : hr_error_wrap(n, "%s", fn);
    for (int i = 0; i < n && i < capacity; i++) {
        index[i] = p->ranked[i].kernel;
        if (score) score[i] = p->ranked[i].score;
    }
    if (n_ranked) *n_ranked = n;
    return HEURIST_OK;
}

static int need_predictor(const heurist_predictor *p, model_task task, const char *fn)
{
    if (!p) return hr_error(HEURIST_EINVAL, "%s: predictor is NULL", fn);
    if (p->m->task != task)
        return hr_error(HEURIST_ESTATE, "%s: this model does the %s task, not %s", fn, model_task_name(p->m->task),
                        model_task_name(task));
    return HEURIST_OK;
}

int heurist_predictor_rank(heurist_predictor *p, const char *problem, const double *candidates, int n_candidates,
                           int capacity, int *index, float *score, int *n_ranked)
{
    const char *fn = "heurist_predictor_rank";
    int rc = need_predictor(p, MODEL_TASK_SELECT, fn);
    if (rc) return rc;
    if (!problem) return hr_error(HEURIST_EINVAL, "%s: problem is NULL", fn);
    double pv[DATA_CODEC_MAX_VALUES];
    if (model_problem_parse(p->m, problem, pv)) return hr_error_wrap(HEURIST_EINVAL, "%s", fn);
    return rank_out(p, pv, candidates, n_candidates, capacity, index, score, n_ranked, fn);
}

int heurist_predictor_rank_values(heurist_predictor *p, const double *problem, const double *candidates,
                                  int n_candidates, int capacity, int *index, float *score, int *n_ranked)
{
    const char *fn = "heurist_predictor_rank_values";
    int rc = need_predictor(p, MODEL_TASK_SELECT, fn);
    if (rc) return rc;
    if (!problem) return hr_error(HEURIST_EINVAL, "%s: problem is NULL", fn);
    if ((rc = check_values(p->m, problem, 1, 0, fn))) return rc;
    return rank_out(p, problem, candidates, n_candidates, capacity, index, score, n_ranked, fn);
}

int heurist_predictor_tune(heurist_predictor *p, const char *problem, int32_t *values)
{
    const char *fn = "heurist_predictor_tune";
    int rc = need_predictor(p, MODEL_TASK_TUNE, fn);
    if (rc) return rc;
    if (!problem || !values) return hr_error(HEURIST_EINVAL, "%s: problem and values are required", fn);
    double pv[DATA_CODEC_MAX_VALUES];
    if (model_problem_parse(p->m, problem, pv)) return hr_error_wrap(HEURIST_EINVAL, "%s", fn);
    data_tune_problem q = {pv, NULL, 0, p->m->length, NULL};
    if ((rc = model_predict_tune(p->m, p->ws, &q, values))) return rc;
    if (model_tune_no_pick(values, p->m->length)) {
        memset(values, 0, (size_t)p->m->length * sizeof *values);
        return hr_error(HEURIST_ESTATE, "%s: the model makes no prediction for '%.200s' (the vendor's list does not hold "
                        "it)", fn, problem);
    }
    return HEURIST_OK;
}

/* ---- a batch of problems as values ---- */

typedef struct values_batch {
    const heurist_model *h;
    const double *problems;
    const double *candidates;
    int n_candidates, k;
    int *top;          /* (n, k) */
    int *chunk_rc;     /* (threads) the first error of each thread's rows, in row order */
    int *chunk_row;
    char (*chunk_msg)[256];
} values_batch;

static void values_chunk(void *ctx, size_t begin, size_t end, int tid)
{
    values_batch *b = ctx;
    heurist_predictor *p = NULL;
    int rc = heurist_predictor_create(b->h, &p), first = HEURIST_OK, np = data_codec_value_count(b->h->m->codec);
    for (size_t i = begin; i < end; i++) {
        const double *pv = b->problems + i * (size_t)np;
        int *row = b->top + i * (size_t)b->k;
        int n = rc ? rc : check_values(p->m, pv, 1, 0, "heurist_rank_values_batch");
        if (!n) n = rank_checked(p, pv, b->candidates, b->n_candidates, b->k);
        for (int j = 0; j < b->k; j++) row[j] = j < n ? p->ranked[j].kernel : -1;
        if (n < 0 && !first) {
            first = n;
            b->chunk_row[tid] = (int)i;
            snprintf(b->chunk_msg[tid], sizeof b->chunk_msg[tid], "%s", hr_last_error());
        }
    }
    heurist_predictor_free(p);
    b->chunk_rc[tid] = first;
}

int heurist_rank_values_batch(const heurist_model *h, const double *problems, int n, const double *candidates,
                              int n_candidates, int k, int threads, int *top)
{
    const char *fn = "heurist_rank_values_batch";
    int rc = api_need_task(h, MODEL_TASK_SELECT, fn);
    if (rc) return rc;
    if (n < 0 || k < 1 || (n > 0 && (!problems || !top)))
        return hr_error(HEURIST_EINVAL, "%s: %d problems, k = %d (at least 1), problems and top are required", fn, n, k);
    if ((rc = check_candidates(h->m, candidates, n_candidates, fn)) || n == 0) return rc;
    int nt = hr_threads_resolve(threads);
    if (nt > n) nt = n;
    values_batch b = {h, problems, candidates, n_candidates, k, top, NULL, NULL, NULL};
    b.chunk_rc = hr_calloc((size_t)nt, sizeof *b.chunk_rc);
    b.chunk_row = hr_calloc((size_t)nt, sizeof *b.chunk_row);
    b.chunk_msg = hr_calloc((size_t)nt, sizeof *b.chunk_msg);
    rc = b.chunk_rc && b.chunk_row && b.chunk_msg ? hr_parallel_for(nt, (size_t)n, values_chunk, &b) : HEURIST_ENOMEM;
    for (int t = 0; !rc && t < nt; t++)
        if (b.chunk_rc[t]) rc = hr_error(b.chunk_rc[t], "%s: problem %d: %s", fn, b.chunk_row[t], b.chunk_msg[t]);
    free(b.chunk_rc);
    free(b.chunk_row);
    free(b.chunk_msg);
    return rc;
}
