/* The selection task in the pipeline: evaluation against measured runtimes, its report metrics, its line, its
 * markdown tables and figures (pipe_task_select). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "pipeline/pipeline_internal.h"
#include "pipeline/plot.h"

/* Scores of every row over the data's kernels, the model's vocabulary mapped by name, then eval/'s metrics and
 * the top-1 of each direction and data type. A kernel the data measures but the model does not know is an
 * error (the model cannot rank it); the kernels the model knows but the data lacks share one extra column
 * with no measurement, so a model that picks one of them is charged with an unmeasured pick. On a benchmark table
 * each problem's candidates are the configurations measured for it, and only those are ranked. */
/* Where the values of `to`'s columns come from in `from`'s: src[j] is the column of `from` named as column j of
 * `to` (the problem then hardware columns, or the kernel columns); a column the data lacks is an error. */
static int table_columns_map(const data_table_column *from, int n_from, const data_table_column *to, int n_to,
                             const char *role, int *src)
{
    for (int j = 0; j < n_to; j++) {
        src[j] = -1;
        for (int i = 0; i < n_from && src[j] < 0; i++)
            if (!strcmp(from[i].name, to[j].name)) src[j] = i;
        if (src[j] < 0) return hr_error(HR_EINVAL, "the model's %s column '%s' is not in the data", role, to[j].name);
    }
    return HR_OK;
}

/* Value v of data column fc in model column tc's terms: a category by its string in the model's vocabulary (-1, no
 * category, for one the model never saw), since the two tables may have read different vocabularies. */
static double table_value_map(const data_table_column *fc, const data_table_column *tc, double v)
{
    if (!tc->categorical) return v;
    int i = (int)v;
    if (!fc->categorical || i < 0 || i >= fc->n_vocab) return -1;
    for (int k = 0; k < tc->n_vocab; k++)
        if (!strcmp(tc->vocab[k], fc->vocab[i])) return k;
    return -1;
}

/* The data's configurations (K, model kernel columns) and problem values (n, model problem columns) in the
 * model's columns and vocabularies. */
static int table_values_map(const data_table *t, const data_table_spec *ms, double **kv_out, double **pv_out)
{
    const data_table_spec *ds = &t->spec;
    int dnp = ds->n_problem + ds->n_hardware, mnp = ms->n_problem + ms->n_hardware, mnk = ms->n_kernel;
    int *psrc = hr_malloc((size_t)(mnp ? mnp : 1) * sizeof *psrc);
    int *ksrc = hr_malloc((size_t)(mnk ? mnk : 1) * sizeof *ksrc);
    double *kv = hr_malloc((size_t)(t->n_kernels ? t->n_kernels : 1) * (size_t)(mnk ? mnk : 1) * sizeof *kv);
    double *pv = hr_malloc((size_t)(t->n ? t->n : 1) * (size_t)(mnp ? mnp : 1) * sizeof *pv);
    int rc = psrc && ksrc && kv && pv ? HR_OK : HR_ENOMEM;
    if (!rc) rc = table_columns_map(ds->problem, dnp, ms->problem, mnp, "problem", psrc);
    if (!rc) rc = table_columns_map(ds->kernel, ds->n_kernel, ms->kernel, mnk, "kernel", ksrc);
    for (int k = 0; !rc && k < t->n_kernels; k++)
        for (int j = 0; j < mnk; j++)
            kv[(size_t)k * mnk + j] = table_value_map(&ds->kernel[ksrc[j]], &ms->kernel[j],
                                                      t->kv[(size_t)k * ds->n_kernel + ksrc[j]]);
    for (int i = 0; !rc && i < t->n; i++)
        for (int j = 0; j < mnp; j++)
            pv[(size_t)i * mnp + j] = table_value_map(&ds->problem[psrc[j]], &ms->problem[j],
                                                      t->pv[(size_t)i * dnp + psrc[j]]);
    free(psrc);
    free(ksrc);
    if (rc) {
        free(kv);
        free(pv);
        return rc;
    }
    *kv_out = kv;
    *pv_out = pv;
    return HR_OK;
}

/* One rule for every family, as select_evaluate applies it: a measured configuration the model does not know by
 * name is an error when the model scores only the configurations it knows (it would rank it -inf, never pick it,
 * and be charged nothing); a model that scores configurations by their fields ranks it like any other. */
static int table_unknown_check(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                               const double *mkv, const double *mpv)
{
    const data_select *s = d->sel;
    int K = s->n_kernels, nk = m->table->n_kernel, np = m->table->n_problem + m->table->n_hardware;
    hr_strmap names = {0};
    int rc = HR_OK;
    for (int k = 0; !rc && k < m->n_kernels; k++)
        if (hr_strmap_add(&names, m->kernels[k], strlen(m->kernels[k]), k, NULL) < 0) rc = HR_ENOMEM;
    int first = -1, first_row = -1, n_unknown = 0;
    for (int k = 0; !rc && k < K; k++) {
        if (hr_strmap_find(&names, s->kernels[k], strlen(s->kernels[k])) >= 0) continue;
        int row = -1;
        for (int i = 0; i < n_rows && row < 0; i++)
            if (isfinite(s->runtime[(size_t)rows[i] * K + k])) row = rows[i];
        if (row < 0) continue;
        if (first < 0) first = k, first_row = row;
        n_unknown++;
    }
    hr_strmap_free(&names);
    if (rc || first < 0) return rc;
    float *x = hr_malloc((size_t)m->n_features * sizeof *x), score = 0;
    if (!x) return HR_ENOMEM;
    data_table_problem_features(m->table, mpv + (size_t)first_row * np, x);
    rc = model_predict_candidates(m, ws, x, mkv + (size_t)first * nk, 1, &score);
    free(x);
    if (!rc && !isfinite(score))
        rc = hr_error(HR_EINVAL, "the data measures configuration '%s', which the model does not know (%d measured "
                      "configurations are not the model's): a %s model ranks only the configurations it was trained on",
                      s->kernels[first], n_unknown, m->family->name);
    return rc;
}

/* The evaluated rows, and where the data ranks its kernels by the vendor's heuristic, each pick's speed-up over the
 * vendor's first pick and the shortlists (eval.h): rt and scores are (n_rows, KX) over the data's K kernels and
 * KX - K columns the vendor never ranks. */
static int select_vendor_figures(const data_select *s, const float *rt, const float *scores, int KX, const int *rows,
                                 int n_rows, pipe_select_result *sr)
{
    int K = s->n_kernels;
    if (!(sr->rows = hr_malloc((size_t)n_rows * sizeof *sr->rows))) return HR_ENOMEM;
    memcpy(sr->rows, rows, (size_t)n_rows * sizeof *rows);
    if (!s->vendor_rank) return HR_OK;
    int16_t *vr = hr_malloc((size_t)KX * sizeof *vr);
    sr->speedup = hr_malloc((size_t)n_rows * sizeof *sr->speedup);
    if (!vr || !sr->speedup) {
        free(vr);
        return HR_ENOMEM;
    }
    sr->vendor = 1;
    memset(sr->shortlist, 0, sizeof sr->shortlist);
    memset(sr->vendor_shortlist, 0, sizeof sr->vendor_shortlist);
    sr->vendor_list = 0;
    for (int i = 0; i < n_rows; i++) {
        const float *t = rt + (size_t)i * KX;
        const int16_t *rank = s->vendor_rank + (size_t)rows[i] * K;
        int first = -1;
        for (int k = 0; k < KX; k++) {
            vr[k] = k < K ? rank[k] : -1;
            if (vr[k] == 0) first = k;
        }
        sr->speedup[i] = eval_select_speedup(t, sr->pick[i], first);
        double mk[EVAL_SHORTLIST_MAX], vk[EVAL_SHORTLIST_MAX], vl;
        eval_select_shortlist(t, scores + (size_t)i * KX, vr, KX, mk, vk, &vl);
        for (int j = 0; j < EVAL_SHORTLIST_MAX; j++) {
            sr->shortlist[j] += mk[j] / n_rows;
            sr->vendor_shortlist[j] += vk[j] / n_rows;
        }
        sr->vendor_list += vl / n_rows;
    }
    eval_speedup_compute(sr->speedup, n_rows, &sr->vs);
    free(vr);
    return HR_OK;
}

/* A model that scores configurations from their fields (model_predict_candidates) on a table: each problem's
 * measured configurations scored by their values, so one the model never saw is ranked like any other (the
 * data's columns and categories read in the model's schema, so another table with other vocabularies can be
 * evaluated); and, for
 * scores that regress a per-pair target, R^2 of the scores against that target over the measured pairs. */
static int select_evaluate_pairs(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                                 pipe_result *res)
{
    const data_select *s = d->sel;
    const data_table *t = s->table;
    pipe_select_result *sr = &res->sel;
    const data_table_spec *ms = m->table;
    int K = s->n_kernels, nk = ms->n_kernel, np = ms->n_problem + ms->n_hardware, target = model_score_target(m);
    if (data_table_problem_feature_count(ms) != m->n_features)
        return hr_error(HR_EINVAL, "the model has %d features, its schema gives %d", m->n_features,
                        data_table_problem_feature_count(ms));
    /* the data's values in the model's columns and vocabularies, and the problem features from those */
    double *mkv = NULL, *mpv = NULL;
    int rc = table_values_map(t, ms, &mkv, &mpv);
    if (!rc) rc = table_unknown_check(d, m, ws, rows, n_rows, mkv, mpv);
    if (rc) {
        free(mkv);
        free(mpv);
        return rc;
    }
    long pairs = 0;
    for (int i = 0; i < n_rows; i++)
        for (int k = 0; k < K; k++) pairs += isfinite(s->runtime[(size_t)rows[i] * K + k]) != 0;
    float *scores = hr_malloc((size_t)n_rows * (size_t)K * sizeof *scores);
    float *rt = hr_malloc((size_t)n_rows * (size_t)K * sizeof *rt);
    double *kv = hr_malloc((size_t)K * (size_t)nk * sizeof *kv);
    float *cs = hr_malloc((size_t)K * sizeof *cs);
    int *cand = hr_malloc((size_t)K * sizeof *cand);
    double *pred = target ? hr_malloc((size_t)(pairs ? pairs : 1) * sizeof *pred) : NULL;
    double *truth = target ? hr_malloc((size_t)(pairs ? pairs : 1) * sizeof *truth) : NULL;
    float *x = hr_malloc((size_t)m->n_features * sizeof *x);
    sr->efficiency = hr_malloc((size_t)n_rows * sizeof *sr->efficiency);
    sr->pick = hr_malloc((size_t)n_rows * sizeof *sr->pick);
    if (!scores || !rt || !kv || !cs || !cand || !x || !sr->efficiency || !sr->pick || (target && (!pred || !truth)))
        rc = HR_ENOMEM;
    long at = 0;
    for (int i = 0; !rc && i < n_rows; i++) {
        int r = rows[i], n = 0;
        float *ti = rt + (size_t)i * K, *si = scores + (size_t)i * K;
        memcpy(ti, s->runtime + (size_t)r * K, (size_t)K * sizeof *ti);
        double best = INFINITY;
        for (int k = 0; k < K; k++) {
            si[k] = -INFINITY;
            if (!isfinite(ti[k])) continue;
            best = ti[k] < best ? ti[k] : best;
            memcpy(kv + (size_t)n * nk, mkv + (size_t)k * nk, (size_t)nk * sizeof *kv);
            cand[n++] = k;
        }
        data_table_problem_features(ms, mpv + (size_t)r * np, x);
        rc = model_predict_candidates(m, ws, x, kv, n, cs);
        for (int j = 0; !rc && j < n; j++) {
            si[cand[j]] = cs[j];
            if (!target) continue;
            pred[at] = cs[j];
            truth[at++] = model_target_value(target, ti[cand[j]], best);
        }
    }
    if (!rc) rc = eval_select_compute(rt, scores, n_rows, K, &sr->m, sr->efficiency);
    for (int i = 0; !rc && i < n_rows; i++) sr->pick[i] = eval_select_argmax(scores + (size_t)i * K, K);
    if (!rc) rc = select_vendor_figures(s, rt, scores, K, rows, n_rows, sr);
    /* predict_us of a pair model is what a library pays to decide: one problem's features and the scores of
     * its measured candidates (the median of >= 1000 such calls, one thread) */
    enum { CALLS = 1000 };
    int calls = n_rows > CALLS ? n_rows : CALLS;
    double *us = rc ? NULL : hr_malloc((size_t)calls * sizeof *us);
    if (!rc && !us) rc = HR_ENOMEM;
    for (int c = 0; !rc && c < calls; c++) {
        int r = rows[c % n_rows], n = 0;
        for (int k = 0; k < K; k++)
            if (isfinite(s->runtime[(size_t)r * K + k]))
                memcpy(kv + (size_t)n++ * nk, mkv + (size_t)k * nk, (size_t)nk * sizeof *kv);
        double t0 = hr_now();
        data_table_problem_features(ms, mpv + (size_t)r * np, x);
        rc = model_predict_candidates(m, ws, x, kv, n, cs);
        us[c] = (hr_now() - t0) * 1e6;
    }
    if (!rc) res->predict_us = eval_median_inplace(us, calls);
    free(us);
    sr->table = 1;
    sr->r2 = target && !rc ? eval_r2(pred, truth, at) : NAN;
    free(scores);
    free(rt);
    free(kv);
    free(cs);
    free(cand);
    free(pred);
    free(truth);
    free(x);
    free(mkv);
    free(mpv);
    return rc;
}

static int select_evaluate(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                           pipe_result *res)
{
    if (d->sel->table && m->table && m->family->predict_candidates)
        return select_evaluate_pairs(d, m, ws, rows, n_rows, res);
    if (d->sel->table && d->n_features != m->n_features)
        return hr_error(HR_EINVAL, "the data has %d problem features, the %s model %d: its table has other columns or "
                        "categories, which only a model scoring configurations by their fields reads by name",
                        d->n_features, m->family->name, m->n_features);
    const data_select *s = d->sel;
    pipe_select_result *sr = &res->sel;
    int K = s->n_kernels, KX = K + 1;
    int *col = hr_malloc((size_t)m->n_kernels * sizeof *col);
    unsigned char *known = hr_calloc((size_t)K, 1);
    float *scores = hr_malloc((size_t)n_rows * (size_t)KX * sizeof *scores);
    float *rt = hr_malloc((size_t)n_rows * (size_t)KX * sizeof *rt);
    float *ms = hr_malloc((size_t)m->n_kernels * sizeof *ms);
    sr->efficiency = hr_malloc((size_t)n_rows * sizeof *sr->efficiency);
    sr->pick = hr_malloc((size_t)n_rows * sizeof *sr->pick);
    int rc = HR_OK;
    if (!col || !known || !scores || !rt || !ms || !sr->efficiency || !sr->pick) rc = HR_ENOMEM;
    for (int k = 0; !rc && k < m->n_kernels; k++)
        if ((col[k] = data_select_kernel_index(s, m->kernels[k])) >= 0) known[col[k]] = 1;
    for (int k = 0, unknown = 0; !rc && k < K; k++) {
        if (known[k]) continue;
        int measured = 0;
        for (int i = 0; i < n_rows; i++) measured += isfinite(s->runtime[(size_t)rows[i] * K + k]) != 0;
        if (measured && !unknown++) {
            int n_unknown = 0;
            for (int j = 0; j < K; j++) n_unknown += !known[j];
            rc = hr_error(HR_EINVAL, "the data measures kernel '%s' (%d problems), which the model does not know "
                          "(%d of the data's %d kernels are not the model's): a model ranks only the kernels it "
                          "was trained on", s->kernels[k], measured, n_unknown, K);
        }
    }
    for (int i = 0; !rc && i < n_rows; i++) {
        int r = rows[i];
        float *t = rt + (size_t)i * KX, *sc = scores + (size_t)i * KX;
        memcpy(t, s->runtime + (size_t)r * K, (size_t)K * sizeof *t);
        t[K] = INFINITY;
        rc = model_predict_select_x(m, ws, &s->problems[r], d->X + (size_t)r * d->n_features, ms);
        for (int k = 0; k < KX; k++) sc[k] = -INFINITY;
        for (int k = 0; k < m->n_kernels; k++) {
            int c = col[k] >= 0 ? col[k] : K;
            if (ms[k] > sc[c]) sc[c] = ms[k];
        }
        /* on a table a problem's candidates are the configurations measured for it: the model ranks only those */
        for (int k = 0; s->table && k < KX; k++)
            if (!isfinite(t[k])) sc[k] = -INFINITY;
    }
    if (!rc) rc = eval_select_compute(rt, scores, n_rows, KX, &sr->m, sr->efficiency);
    sr->table = s->table != NULL;
    sr->r2 = NAN;
    for (int i = 0; !rc && i < n_rows; i++) sr->pick[i] = eval_select_argmax(scores + (size_t)i * KX, KX);
    if (!rc) rc = select_vendor_figures(s, rt, scores, KX, rows, n_rows, sr);
    /* the direction and data-type slices are a find-db's; a table's problems have neither */
    for (int i = 0; !rc && !s->table && i < n_rows; i++) {
        const data_problem *p = &s->problems[rows[i]];
        const float *t = rt + (size_t)i * KX;
        int hit = eval_select_hit(t, KX, sr->pick[i]);
        sr->by_direction[p->direction].n++;
        sr->by_direction[p->direction].top1 += hit;
        sr->by_dtype[p->dtype].n++;
        sr->by_dtype[p->dtype].top1 += hit;
    }
    free(col);
    free(known);
    free(scores);
    free(rt);
    free(ms);
    return rc;
}

static int select_predict_one(const model *m, model_ws *ws, const data_problem *p, void *out)
{
    if (m->n_kernels > PIPE_PREDICT_MAX) return hr_error(HR_EINVAL, "%d kernels: too many to time", m->n_kernels);
    return model_predict_select(m, ws, p, out);
}

static double select_accuracy(const pipe_result *r)
{
    return r->sel.m.top1;
}

/* The figures against the vendor's first pick (eval.h), the same keys in every report. */
static void vendor_json(cJSON *o, const eval_speedup_metrics *v, const double *shortlist, const double *vendor_shortlist,
                        double vendor_list)
{
    pipe_json_num(o, "speedup_geomean", v->geomean);
    pipe_json_num(o, "slower_share", v->slower);
    pipe_json_num(o, "faster_share", v->faster);
    pipe_json_num(o, "speedup_worst", v->worst);
    if (!shortlist) return;
    cJSON *a = cJSON_AddArrayToObject(o, "shortlist_efficiency"), *b = cJSON_AddArrayToObject(o, "vendor_topk_efficiency");
    for (int k = 0; k < EVAL_SHORTLIST_MAX; k++) {
        cJSON_AddItemToArray(a, cJSON_CreateNumber(shortlist[k]));
        cJSON_AddItemToArray(b, cJSON_CreateNumber(vendor_shortlist[k]));
    }
    pipe_json_num(o, "vendor_list_efficiency", vendor_list);
}

static void select_metrics_json(cJSON *o, const pipe_result *r)
{
    const eval_select_metrics *m = &r->sel.m;
    pipe_json_num(o, "top1", m->top1);
    pipe_json_num(o, "top5", m->top5);
    pipe_json_num(o, "efficiency_mean", m->efficiency_mean);
    pipe_json_num(o, "efficiency_median", m->efficiency_median);
    pipe_json_num(o, "efficiency_p10", m->efficiency_p10);
    pipe_json_num(o, "efficiency_min", m->efficiency_min);
    pipe_json_num(o, "unmeasured_rate", m->unmeasured_rate);
    if (r->sel.table) {
        /* eval.h defines NDCG@1; R^2 only for scores that regress a per-pair target (null otherwise) */
        pipe_json_num(o, "ndcg1", m->ndcg1);
        pipe_json_num(o, "r2", r->sel.r2);
    }
    if (r->sel.vendor) vendor_json(o, &r->sel.vs, r->sel.shortlist, r->sel.vendor_shortlist, r->sel.vendor_list);
    cJSON *dir = cJSON_AddObjectToObject(o, "top1_by_direction");
    for (int i = 0; i < DATA_DIR_COUNT; i++)
        if (r->sel.by_direction[i].n)
            pipe_json_num(dir, data_direction_names[i], (double)r->sel.by_direction[i].top1 / r->sel.by_direction[i].n);
    cJSON *dt = cJSON_AddObjectToObject(o, "top1_by_dtype");
    for (int i = 0; i < DATA_DTYPE_COUNT; i++)
        if (r->sel.by_dtype[i].n)
            pipe_json_num(dt, data_dtype_names[i], (double)r->sel.by_dtype[i].top1 / r->sel.by_dtype[i].n);
}

/* ---- the results' problems pooled: every fold's test problems together, and by slice ---- */

/* A slicing axis of a table's problems: its group column (axis -1) or a categorical problem column. */
typedef struct slice_axis {
    const char *name;
    int n_values;
    char *const *values;
    int column; /* -1: the group column */
} slice_axis;

static int slice_axes(const data_table *t, slice_axis *ax, int max)
{
    int n = 0;
    if (t->group && n < max) ax[n++] = (slice_axis){t->spec.group, t->n_group_names, t->group_names, -1};
    for (int j = 0; j < t->spec.n_problem + t->spec.n_hardware && n < max; j++)
        if (t->spec.problem[j].categorical)
            ax[n++] = (slice_axis){t->spec.problem[j].name, t->spec.problem[j].n_vocab, t->spec.problem[j].vocab, j};
    return n;
}

static int slice_value(const data_table *t, const slice_axis *a, int row)
{
    int np = t->spec.n_problem + t->spec.n_hardware;
    return a->column < 0 ? t->group[row] : (int)t->pv[(size_t)row * np + a->column];
}

/* The pooled figures of the problems of nres results whose row lies in slice (axis a, value v); a NULL: all. */
typedef struct pooled {
    long n;
    double efficiency_mean;
    eval_speedup_metrics vs;
    int vendor;
} pooled;

static int pooled_compute(const pipe_dataset *d, const pipe_result *res, int nres, const slice_axis *a, int v, pooled *out)
{
    const data_table *t = d->sel ? d->sel->table : NULL;
    long total = 0;
    for (int f = 0; f < nres; f++) total += res[f].n_test;
    memset(out, 0, sizeof *out);
    double *sp = hr_malloc((size_t)(total ? total : 1) * sizeof *sp), sum = 0;
    if (!sp) return HR_ENOMEM;
    int vendor = nres > 0;
    for (int f = 0; f < nres; f++) {
        const pipe_select_result *r = &res[f].sel;
        vendor &= r->vendor;
        for (int i = 0; i < res[f].n_test; i++) {
            if (a && (!r->rows || !t || slice_value(t, a, r->rows[i]) != v)) continue;
            sum += r->efficiency ? r->efficiency[i] : NAN;
            sp[out->n++] = r->speedup ? r->speedup[i] : NAN;
        }
    }
    out->efficiency_mean = out->n ? sum / out->n : NAN;
    out->vendor = vendor;
    eval_speedup_compute(sp, (int)out->n, &out->vs);
    free(sp);
    return HR_OK;
}

static void pooled_json(cJSON *o, const pooled *p)
{
    cJSON_AddNumberToObject(o, "n", (double)p->n);
    pipe_json_num(o, "efficiency_mean", p->efficiency_mean);
    if (p->vendor) vendor_json(o, &p->vs, NULL, NULL, NAN);
}

/* "pooled" (over several results) and "slices" of a table's problems: per slicing axis (the group column, each
 * categorical problem column) and value, the pooled figures. */
static void select_report_json(cJSON *o, const pipe_dataset *d, const pipe_result *res, int nres)
{
    if (nres < 1 || !res[0].sel.table || !d->sel || !d->sel->table) return;
    pooled p;
    if (nres > 1 && pooled_compute(d, res, nres, NULL, 0, &p) == HR_OK) {
        cJSON *po = cJSON_AddObjectToObject(o, "pooled");
        pooled_json(po, &p);
        if (p.vendor) {
            double sl[EVAL_SHORTLIST_MAX] = {0}, vs[EVAL_SHORTLIST_MAX] = {0}, vl = 0;
            long n = 0;
            for (int f = 0; f < nres; f++) n += res[f].n_test;
            for (int f = 0; f < nres; f++) {
                double w = n ? (double)res[f].n_test / n : 0;
                for (int k = 0; k < EVAL_SHORTLIST_MAX; k++) {
                    sl[k] += w * res[f].sel.shortlist[k];
                    vs[k] += w * res[f].sel.vendor_shortlist[k];
                }
                vl += w * res[f].sel.vendor_list;
            }
            vendor_json(po, &p.vs, sl, vs, vl);
        }
    }
    const data_table *t = d->sel->table;
    slice_axis ax[DATA_TABLE_MAX_COLUMNS + 1];
    int na = slice_axes(t, ax, DATA_TABLE_MAX_COLUMNS + 1);
    cJSON *so = cJSON_AddObjectToObject(o, "slices");
    for (int a = 0; a < na; a++) {
        cJSON *axo = cJSON_AddObjectToObject(so, ax[a].name);
        for (int v = 0; v < ax[a].n_values; v++) {
            if (pooled_compute(d, res, nres, &ax[a], v, &p) != HR_OK || !p.n) continue;
            pooled_json(cJSON_AddObjectToObject(axo, ax[a].values[v]), &p);
        }
    }
}

static void select_format(const char *model_name, const pipe_result *r, char *buf, size_t n)
{
    const eval_select_metrics *m = &r->sel.m;
    snprintf(buf, n,
             "%-12s top1 %.4f  top5 %.4f  efficiency mean %.4f median %.4f p10 %.4f min %.4f  unmeasured %.4f"
             "  train %.1f s  predict %.2f us  params %ld  bytes %ld",
             model_name, m->top1, m->top5, m->efficiency_mean, m->efficiency_median, m->efficiency_p10,
             m->efficiency_min, m->unmeasured_rate, r->train_seconds, r->predict_us, r->params, r->model_bytes);
    size_t len = strlen(buf);
    /* r2 is undefined for a model whose scores regress no per-pair target: "-", as report.md prints it */
    char r2[32] = "-";
    if (isfinite(r->sel.r2)) snprintf(r2, sizeof r2, "%.4f", r->sel.r2);
    if (r->sel.table && len < n) snprintf(buf + len, n - len, "  ndcg@1 %.4f  r2 %s", m->ndcg1, r2);
    len = strlen(buf);
    if (r->sel.vendor && len < n)
        snprintf(buf + len, n - len, "  speedup x%.4f  slower %.4f  worst x%.3f", r->sel.vs.geomean, r->sel.vs.slower,
                 r->sel.vs.worst);
}

/* 1 when every result was evaluated on a benchmark table. */
static int md_all_tables(int nm, const pipe_result *const *res, const int *nres)
{
    for (int m = 0; m < nm; m++)
        for (int i = 0; i < nres[m]; i++)
            if (!res[m][i].sel.table) return 0;
    return nm > 0;
}

/* On a table the table gains NDCG@1 and R^2 (eval.h; "-" for a model whose scores regress no target). */
static void md_metrics_table(FILE *f, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    int table = md_all_tables(nm, res, nres);
    fprintf(f, "| model | top1 | top5 | eff. mean | eff. median | eff. p10 | eff. min | unmeasured |%s train s | predict us "
               "| params | model bytes |\n", table ? " NDCG@1 | R^2 |" : "");
    fprintf(f, "|---|---|---|---|---|---|---|---|%s---|---|---|---|\n", table ? "---|---|" : "");
    for (int m = 0; m < nm; m++) {
        double v[13] = {0};
        for (int i = 0; i < nres[m]; i++) {
            const pipe_result *r = &res[m][i];
            const eval_select_metrics *e = &r->sel.m;
            double x[13] = {e->top1, e->top5, e->efficiency_mean, e->efficiency_median, e->efficiency_p10,
                            e->efficiency_min, e->unmeasured_rate, r->train_seconds, r->predict_us,
                            (double)r->params, (double)r->model_bytes, e->ndcg1, r->sel.r2};
            for (int j = 0; j < 13; j++) v[j] += x[j] / nres[m];
        }
        fprintf(f, "| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |", names[m], v[0], v[1], v[2], v[3], v[4],
                v[5], v[6]);
        if (table) fprintf(f, " %.4f |", v[11]);
        if (table && isfinite(v[12])) fprintf(f, " %.4f |", v[12]);
        else if (table) fprintf(f, " - |");
        fprintf(f, " %.1f | %.2f | %.0f | %.0f |\n", v[7], v[8], v[9], v[10]);
    }
}

static void md_slices(FILE *f, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    fprintf(f, "\n### Top-1 by direction and data type\n\n| model |");
    for (int d = 0; d < DATA_DIR_COUNT; d++) fprintf(f, " %s |", data_direction_names[d]);
    int used[DATA_DTYPE_COUNT] = {0};
    for (int m = 0; m < nm; m++)
        for (int i = 0; i < nres[m]; i++)
            for (int t = 0; t < DATA_DTYPE_COUNT; t++) used[t] |= res[m][i].sel.by_dtype[t].n > 0;
    for (int t = 0; t < DATA_DTYPE_COUNT; t++)
        if (used[t]) fprintf(f, " %s |", data_dtype_names[t]);
    fprintf(f, "\n|---|");
    for (int d = 0; d < DATA_DIR_COUNT; d++) fprintf(f, "---|");
    for (int t = 0; t < DATA_DTYPE_COUNT; t++)
        if (used[t]) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int m = 0; m < nm; m++) {
        fprintf(f, "| %s |", names[m]);
        for (int d = 0; d < DATA_DIR_COUNT; d++) {
            long n = 0, h = 0;
            for (int i = 0; i < nres[m]; i++) {
                n += res[m][i].sel.by_direction[d].n;
                h += res[m][i].sel.by_direction[d].top1;
            }
            fprintf(f, " %.4f |", n ? (double)h / n : NAN);
        }
        for (int t = 0; t < DATA_DTYPE_COUNT; t++) {
            if (!used[t]) continue;
            long n = 0, h = 0;
            for (int i = 0; i < nres[m]; i++) {
                n += res[m][i].sel.by_dtype[t].n;
                h += res[m][i].sel.by_dtype[t].top1;
            }
            fprintf(f, " %.4f |", n ? (double)h / n : NAN);
        }
        fprintf(f, "\n");
    }
}

/* On a table with the vendor's ranking: each model against the vendor's first pick and its shortlists, every
 * result's test problems pooled, then per slice (the group column, each categorical problem column). */
static void md_vendor_tables(FILE *f, const pipe_dataset *d, int nm, const char *const *names,
                             const pipe_result *const *res, const int *nres)
{
    pooled p[PIPE_COMPARE_MAX];
    for (int m = 0; m < nm; m++)
        if (pooled_compute(d, res[m], nres[m], NULL, 0, &p[m]) || !p[m].vendor) return;
    fprintf(f, "\n### Against the vendor's first pick (every test problem once)\n\n"
               "Speed-up = t_vendor / t_pick; slower and faster: beyond x%.2f (eval.h).\n\n"
               "| model | speed-up (geomean) | slower | faster | worst | eff. mean |\n|---|---|---|---|---|---|\n",
            EVAL_NOISE_RATIO);
    for (int m = 0; m < nm; m++)
        fprintf(f, "| %s | %.4f | %.4f | %.4f | %.3f | %.4f |\n", names[m], p[m].vs.geomean, p[m].vs.slower,
                p[m].vs.faster, p[m].vs.worst, p[m].efficiency_mean);
    fprintf(f, "\n### Shortlists: efficiency of the fastest of k candidates timed once\n\n"
               "A model's k best plus the vendor's first pick; the vendor's own first k; its whole list.\n\n| model |");
    for (int k = 1; k <= EVAL_SHORTLIST_MAX; k++) fprintf(f, " k=%d |", k);
    fprintf(f, " list |\n|---|");
    for (int k = 0; k <= EVAL_SHORTLIST_MAX; k++) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int m = 0; m <= nm; m++) {
        const pipe_result *r = res[m < nm ? m : 0];
        int n = nres[m < nm ? m : 0];
        long total = 0;
        for (int i = 0; i < n; i++) total += r[i].n_test;
        fprintf(f, "| %s |", m < nm ? names[m] : "vendor's own first k");
        double vl = 0;
        for (int k = 0; k < EVAL_SHORTLIST_MAX; k++) {
            double v = 0;
            for (int i = 0; i < n; i++)
                v += (double)r[i].n_test / total * (m < nm ? r[i].sel.shortlist[k] : r[i].sel.vendor_shortlist[k]);
            fprintf(f, " %.4f |", v);
        }
        for (int i = 0; i < n; i++) vl += (double)r[i].n_test / total * r[i].sel.vendor_list;
        if (m < nm) fprintf(f, " |\n");
        else fprintf(f, " %.4f |\n", vl);
    }
    const data_table *t = d->sel->table;
    slice_axis ax[DATA_TABLE_MAX_COLUMNS + 1];
    int na = slice_axes(t, ax, DATA_TABLE_MAX_COLUMNS + 1);
    for (int a = 0; a < na; a++) {
        fprintf(f, "\n### By %s: speed-up over the vendor's first pick (geomean) / slower share / efficiency\n\n"
                   "| %s | n |", ax[a].name, ax[a].name);
        for (int m = 0; m < nm; m++) fprintf(f, " %s |", names[m]);
        fprintf(f, "\n|---|---|");
        for (int m = 0; m < nm; m++) fprintf(f, "---|");
        fprintf(f, "\n");
        for (int v = 0; v < ax[a].n_values; v++) {
            pooled q;
            if (pooled_compute(d, res[0], nres[0], &ax[a], v, &q) || !q.n) continue;
            fprintf(f, "| %s | %ld |", ax[a].values[v], q.n);
            for (int m = 0; m < nm; m++) {
                if (pooled_compute(d, res[m], nres[m], &ax[a], v, &q)) return;
                fprintf(f, " %.3f / %.3f / %.3f |", q.vs.geomean, q.vs.slower, q.efficiency_mean);
            }
            fprintf(f, "\n");
        }
    }
}

static void select_md_tables(FILE *f, const pipe_dataset *d, int nm, const char *const *names,
                             const pipe_result *const *res, const int *nres)
{
    md_metrics_table(f, nm, names, res, nres);
    /* a table's problems have no direction or convolution data type: its slices are its own columns */
    if (!md_all_tables(nm, res, nres)) md_slices(f, nm, names, res, nres);
    else if (d->sel && d->sel->table) md_vendor_tables(f, d, nm, names, res, nres);
}

static void select_result_free(pipe_result *r)
{
    free(r->sel.efficiency);
    free(r->sel.pick);
    free(r->sel.rows);
    free(r->sel.speedup);
    r->sel.efficiency = NULL;
    r->sel.pick = NULL;
    r->sel.rows = NULL;
    r->sel.speedup = NULL;
}

const pipe_task pipe_task_select = {
    .task = MODEL_TASK_SELECT,
    .accuracy_label = "top-1 accuracy",
    .curve_label = "validation top-1",
    .evaluate = select_evaluate,
    .predict_one = select_predict_one,
    .accuracy = select_accuracy,
    .metrics_json = select_metrics_json,
    .report_json = select_report_json,
    .format = select_format,
    .md_tables = select_md_tables,
    .figures = plot_select_figures,
    .result_free = select_result_free,
};
