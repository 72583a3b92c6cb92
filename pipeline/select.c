/* The selection task in the pipeline: evaluation against measured runtimes, its report metrics, its line, its
 * markdown tables and figures (pipe_task_select). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_internal.h"
#include "pipeline/plot.h"

/* Scores of every row over the data's kernels, the model's vocabulary mapped by name, then eval/'s metrics and
 * the top-1 of each value of the report's slices. A kernel the data measures but the model does not know is an
 * error (the model cannot rank it); the kernels the model knows but the data lacks share one extra column
 * with no measurement, so a model that picks one of them is charged with an unmeasured pick. On a source whose
 * configurations have values each problem's candidates are the configurations measured for it, and only those
 * are ranked. */

/* One rule for every family, as select_evaluate applies it: a measured configuration the model does not know by
 * name is an error when the model scores only the configurations it knows (it would rank it -inf, never pick it,
 * and be charged nothing); a model that scores configurations by their fields ranks it like any other. mkv and mpv
 * hold the data's configurations and problems in the model's codec. */
static int unknown_config_check(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                                const double *mkv, const double *mpv)
{
    const data_select *s = d->sel;
    int K = s->n_kernels, nk = data_codec_config_width(m->codec), np = data_codec_value_count(m->codec);
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
    data_codec_features(m->codec, mpv + (size_t)first_row * np, x);
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
    sr->margin = hr_malloc((size_t)n_rows * sizeof *sr->margin);
    sr->shortlists = hr_malloc((size_t)n_rows * PIPE_SHORTLIST_ROW * sizeof *sr->shortlists);
    if (!vr || !sr->speedup || !sr->margin || !sr->shortlists) {
        free(vr);
        return HR_ENOMEM;
    }
    sr->vendor = 1;
    memset(sr->shortlist, 0, sizeof sr->shortlist);
    memset(sr->vendor_shortlist, 0, sizeof sr->vendor_shortlist);
    sr->vendor_list = 0;
    int n_vendor = 0;
    for (int i = 0; i < n_rows; i++) {
        const float *t = rt + (size_t)i * KX;
        const int16_t *rank = s->vendor_rank + (size_t)rows[i] * K;
        int first = -1;
        for (int k = 0; k < KX; k++) {
            vr[k] = k < K ? rank[k] : -1;
            if (vr[k] == 0) first = k;
        }
        sr->speedup[i] = eval_select_speedup(t, sr->pick[i], first);
        sr->margin[i] = eval_select_margin(scores + (size_t)i * KX, sr->pick[i], first);
        double *mk = sr->shortlists + (size_t)i * PIPE_SHORTLIST_ROW, *vk = mk + EVAL_SHORTLIST_MAX, vl;
        eval_select_shortlist(t, scores + (size_t)i * KX, vr, KX, mk, vk, &vl);
        vk[EVAL_SHORTLIST_MAX] = vl;
        /* the shortlists' means are over the problems whose vendor pick was measured, as the speed-ups are */
        if (isnan(sr->speedup[i])) continue;
        n_vendor++;
        for (int j = 0; j < EVAL_SHORTLIST_MAX; j++) {
            sr->shortlist[j] += mk[j];
            sr->vendor_shortlist[j] += vk[j];
        }
        sr->vendor_list += vl;
    }
    for (int j = 0; j < EVAL_SHORTLIST_MAX; j++) {
        sr->shortlist[j] = n_vendor ? sr->shortlist[j] / n_vendor : NAN;
        sr->vendor_shortlist[j] = n_vendor ? sr->vendor_shortlist[j] / n_vendor : NAN;
    }
    sr->vendor_list = n_vendor ? sr->vendor_list / n_vendor : NAN;
    eval_speedup_compute(sr->speedup, n_rows, &sr->vs);
    free(vr);
    return HR_OK;
}

/* The model's vendor guard (model.select_guard and select_guard_top, data_portable_guard) on each row's scores
 * (n_rows, KX: the data's K kernels, then columns the vendor never ranks), where the data ranks its kernels by the
 * vendor's heuristic. */
static int select_guard_apply(const data_select *s, const model *m, const int *rows, int n_rows, float *scores, int KX)
{
    int K = s->n_kernels;
    if ((!(m->select_guard > 0) && m->select_guard_top <= 0) || !s->vendor_rank) return HR_OK;
    int16_t *vr = hr_malloc((size_t)KX * sizeof *vr);
    if (!vr) return HR_ENOMEM;
    for (int k = K; k < KX; k++) vr[k] = -1;
    for (int i = 0; i < n_rows; i++) {
        memcpy(vr, s->vendor_rank + (size_t)rows[i] * K, (size_t)K * sizeof *vr);
        data_portable_guard(scores + (size_t)i * KX, KX, vr, m->select_guard_top, m->select_guard);
    }
    free(vr);
    return HR_OK;
}

/* A model that scores configurations from their fields (model_predict_candidates) on a source of valued
 * configurations: each problem's measured configurations scored by their values, so one the model never saw is
 * ranked like any other (the data's columns and categories read in the model's codec, so another table with other
 * vocabularies can be evaluated); and, for scores that regress a per-pair target, R^2 of the scores against that
 * target over the measured pairs. */
static int select_evaluate_pairs(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                                 pipe_result *res)
{
    const data_select *s = d->sel;
    pipe_select_result *sr = &res->sel;
    const data_codec *mc = m->codec;
    int K = s->n_kernels, nk = data_codec_config_width(mc), np = data_codec_value_count(mc);
    int target = model_score_target(m);
    if (data_codec_feature_count(mc) != m->n_features)
        return hr_error(HR_EINVAL, "the model has %d features, its codec gives %d", m->n_features,
                        data_codec_feature_count(mc));
    /* the data's values in the model's columns and vocabularies, and the problem features from those */
    double *mkv = hr_malloc((size_t)(K ? K : 1) * (size_t)(nk ? nk : 1) * sizeof *mkv);
    double *mpv = hr_malloc((size_t)(d->n ? d->n : 1) * (size_t)(np ? np : 1) * sizeof *mpv);
    int rc = mkv && mpv ? HR_OK : HR_ENOMEM;
    if (!rc) rc = data_codec_map_configs(mc, d->codec, data_select_config_values(s), K, mkv);
    if (!rc) rc = data_codec_map_problems(mc, d->codec, d->V, d->n, mpv);
    if (!rc) rc = unknown_config_check(d, m, ws, rows, n_rows, mkv, mpv);
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
        data_codec_features(mc, mpv + (size_t)r * np, x);
        rc = model_predict_candidates(m, ws, x, kv, n, cs);
        for (int j = 0; !rc && j < n; j++) {
            si[cand[j]] = cs[j];
            if (!target) continue;
            pred[at] = cs[j];
            truth[at++] = model_target_value(target, ti[cand[j]], best);
        }
    }
    if (!rc) rc = select_guard_apply(s, m, rows, n_rows, scores, K);
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
        data_codec_features(mc, mpv + (size_t)r * np, x);
        rc = model_predict_candidates(m, ws, x, kv, n, cs);
        us[c] = (hr_now() - t0) * 1e6;
    }
    if (!rc) res->predict_us = eval_median_inplace(us, calls);
    free(us);
    sr->candidates = 1;
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

/* The index of each report slice in the codec's slices (-1: the source has none of that name). */
static void report_slices(const data_codec *c, int *at)
{
    for (int i = 0; i < PIPE_REPORT_SLICES; i++) at[i] = c ? data_codec_slice_find(c, pipe_report_slices[i]) : -1;
}

/* col (n_kernels): each model kernel's column among the data's kernels, -1 for one the data lacks; known (K): the
 * data's kernels the model knows. By name; on valued configurations by their values read in the model's columns and
 * vocabularies (the name the model's codec gives them), so that another table with other columns or categories maps
 * alike, and a configuration with a category the model never saw is one it does not know. */
static int kernel_columns(const pipe_dataset *d, const model *m, int *col, unsigned char *known)
{
    const data_select *s = d->sel;
    int K = s->n_kernels, nk = data_codec_config_width(m->codec);
    int by_value = nk > 0 && data_select_config_values(s) && !data_codec_equal(d->codec, m->codec);
    hr_strmap names = {0};
    double *kv = by_value ? hr_malloc((size_t)nk * sizeof *kv) : NULL;
    int rc = by_value && !kv ? HR_ENOMEM : HR_OK;
    for (int k = 0; k < m->n_kernels; k++) col[k] = -1;
    for (int k = 0; !rc && k < m->n_kernels; k++)
        if (hr_strmap_add(&names, m->kernels[k], strlen(m->kernels[k]), k, NULL) < 0) rc = HR_ENOMEM;
    for (int k = 0; !rc && k < K; k++) {
        char buf[1024];
        const char *name = s->kernels[k];
        if (by_value) {
            rc = data_codec_map_configs(m->codec, d->codec, data_select_config_values(s) + (size_t)k * nk, 1, kv);
            if (rc) break;
            if (data_codec_config_format(m->codec, kv, buf, sizeof buf)) continue; /* a category the model lacks */
            name = buf;
        }
        int mk = hr_strmap_find(&names, name, strlen(name));
        if (mk < 0) continue;
        col[mk] = k;
        known[k] = 1;
    }
    hr_strmap_free(&names);
    free(kv);
    return rc;
}

static int select_evaluate(const pipe_dataset *d, const model *m, model_ws *ws, const int *rows, int n_rows,
                           pipe_result *res, int *timed)
{
    /* on valued configurations each problem's candidates are the configurations measured for it */
    int candidates = data_codec_config_width(d->codec) > 0;
    if (candidates && m->kernel_values && m->family->select->predict_candidates) {
        *timed = 1;
        return select_evaluate_pairs(d, m, ws, rows, n_rows, res);
    }
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
    if (!rc) rc = kernel_columns(d, m, col, known);
    for (int k = 0, unknown = 0; !rc && k < K; k++) {
        if (known[k] || m->family->known_only) continue;
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
    /* the data's problems in the model's columns and vocabularies where the two sources differ (another table):
     * a category the model never saw is refused, as predict refuses it */
    const int same = data_codec_equal(d->codec, m->codec), np = data_codec_value_count(m->codec);
    double pv[DATA_CODEC_MAX_VALUES];
    float *x = same ? NULL : hr_malloc((size_t)(m->n_features ? m->n_features : 1) * sizeof *x);
    if (!rc && !same && !x) rc = HR_ENOMEM;
    HR_ASSERT(np <= DATA_CODEC_MAX_VALUES);
    /* the vendor baseline on data that records the vendor's ranking answers with that ranking */
    const int replay = m->family->vendor_column && s->vendor_rank;
    for (int i = 0; !rc && i < n_rows; i++) {
        int r = rows[i];
        float *t = rt + (size_t)i * KX, *sc = scores + (size_t)i * KX;
        memcpy(t, s->runtime + (size_t)r * K, (size_t)K * sizeof *t);
        t[K] = INFINITY;
        for (int k = 0; k < KX; k++) sc[k] = -INFINITY;
        if (replay) {
            for (int k = 0; k < K; k++)
                if (s->vendor_rank[(size_t)r * K + k] >= 0) sc[k] = -(float)s->vendor_rank[(size_t)r * K + k];
            continue;
        }
        if (same) {
            rc = model_predict_select_x(m, ws, pipe_dataset_values(d, r), d->X + (size_t)r * d->n_features, ms);
        } else if (!(rc = data_codec_map_problems(m->codec, d->codec, pipe_dataset_values(d, r), 1, pv))) {
            data_codec_features(m->codec, pv, x);
            rc = model_predict_select_x(m, ws, pv, x, ms);
        }
        for (int k = 0; !rc && k < m->n_kernels; k++) {
            int c = col[k] >= 0 ? col[k] : K;
            if (ms[k] > sc[c]) sc[c] = ms[k];
        }
        for (int k = 0; candidates && k < KX; k++)
            if (!isfinite(t[k])) sc[k] = -INFINITY;
    }
    free(x);
    if (!rc) rc = select_guard_apply(s, m, rows, n_rows, scores, KX);
    if (!rc) rc = eval_select_compute(rt, scores, n_rows, KX, &sr->m, sr->efficiency);
    sr->candidates = candidates;
    sr->r2 = NAN;
    for (int i = 0; !rc && i < n_rows; i++) sr->pick[i] = eval_select_argmax(scores + (size_t)i * KX, KX);
    if (!rc) rc = select_vendor_figures(s, rt, scores, KX, rows, n_rows, sr);
    /* top-1 by each value of the report's slices the source has */
    int at[PIPE_REPORT_SLICES], v[16];
    report_slices(d->codec, at);
    for (int i = 0; !rc && i < n_rows; i++) {
        int hit = eval_select_hit(rt + (size_t)i * KX, KX, sr->pick[i]);
        data_codec_slices(d->codec, pipe_dataset_values(d, rows[i]), v);
        for (int j = 0; j < PIPE_REPORT_SLICES; j++) {
            if (at[j] < 0) continue;
            HR_ASSERT(v[at[j]] >= 0 && v[at[j]] < PIPE_SLICE_VALUES);
            sr->by_slice[j][v[at[j]]].n++;
            sr->by_slice[j][v[at[j]]].top1 += hit;
        }
    }
    free(col);
    free(known);
    free(scores);
    free(rt);
    free(ms);
    return rc;
}

static int select_predict_one(const pipe_dataset *d, const model *m, model_ws *ws, int row, void *out)
{
    if (m->n_kernels > PIPE_PREDICT_MAX) return hr_error(HR_EINVAL, "%d kernels: too many to time", m->n_kernels);
    return model_predict_select(m, ws, pipe_dataset_values(d, row), out);
}

static double select_accuracy(const pipe_result *r)
{
    return r->sel.m.top1;
}

/* The values of report slice j that a table shows: every value of the first (a convolution's directions), the
 * values some result holds of the others. */
static int slice_shown(int j, int nm, const pipe_result *const *res, const int *nres, int v)
{
    if (j == 0) return 1;
    for (int m = 0; m < nm; m++)
        for (int i = 0; i < nres[m]; i++)
            if (res[m][i].sel.by_slice[j][v].n > 0) return 1;
    return 0;
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

static void select_metrics_json(cJSON *o, const pipe_dataset *d, const pipe_result *r)
{
    const eval_select_metrics *m = &r->sel.m;
    pipe_json_num(o, "top1", m->top1);
    pipe_json_num(o, "top5", m->top5);
    pipe_json_num(o, "efficiency_mean", m->efficiency_mean);
    pipe_json_num(o, "efficiency_median", m->efficiency_median);
    pipe_json_num(o, "efficiency_p10", m->efficiency_p10);
    pipe_json_num(o, "efficiency_min", m->efficiency_min);
    pipe_json_num(o, "unmeasured_rate", m->unmeasured_rate);
    if (r->sel.candidates) {
        /* eval.h defines NDCG@1; R^2 only for scores that regress a per-pair target (null otherwise) */
        pipe_json_num(o, "ndcg1", m->ndcg1);
        pipe_json_num(o, "r2", r->sel.r2);
    }
    if (r->sel.vendor) vendor_json(o, &r->sel.vs, r->sel.shortlist, r->sel.vendor_shortlist, r->sel.vendor_list);
    /* the contract's slices, empty where the source has none */
    int at[PIPE_REPORT_SLICES];
    report_slices(d->codec, at);
    for (int j = 0; j < PIPE_REPORT_SLICES; j++) {
        char key[64];
        snprintf(key, sizeof key, "top1_by_%s", pipe_report_slices[j]);
        cJSON *so = cJSON_AddObjectToObject(o, key);
        const data_codec_slice *sl = at[j] >= 0 ? data_codec_slice_at(d->codec, at[j]) : NULL;
        for (int v = 0; sl && v < sl->n_values; v++)
            if (r->sel.by_slice[j][v].n)
                pipe_json_num(so, sl->names[v], (double)r->sel.by_slice[j][v].top1 / r->sel.by_slice[j][v].n);
    }
}

/* ---- the results' problems pooled: every fold's test problems together, and by slice ---- */


/* The pooled figures of the problems of nres results whose row lies in slice (axis a, value v); a NULL: all. With
 * the vendor's ranking: the speed-up figures, the mean shortlist efficiencies and, when curve is not NULL, the
 * guard's curve (eval_guard_curve). */
typedef struct pooled {
    long n;
    double efficiency_mean;
    eval_speedup_metrics vs;
    int vendor;
    double shortlist[EVAL_SHORTLIST_MAX], vendor_shortlist[EVAL_SHORTLIST_MAX], vendor_list;
    int n_curve;
    eval_guard_point curve[EVAL_GUARD_POINTS + 1];
} pooled;

static int pooled_compute(const pipe_dataset *d, const pipe_result *res, int nres, const data_axis *a, int v, int curve,
                          pooled *out)
{
    long total = 0;
    for (int f = 0; f < nres; f++) total += res[f].n_test;
    memset(out, 0, sizeof *out);
    double *sp = hr_malloc((size_t)(total ? total : 1) * sizeof *sp), sum = 0;
    double *mg = hr_malloc((size_t)(total ? total : 1) * sizeof *mg);
    if (!sp || !mg) {
        free(sp);
        free(mg);
        return HR_ENOMEM;
    }
    int vendor = nres > 0;
    long n_vendor = 0;
    for (int f = 0; f < nres; f++) vendor &= res[f].sel.vendor && res[f].sel.shortlists && res[f].sel.margin;
    for (int f = 0; f < nres; f++) {
        const pipe_select_result *r = &res[f].sel;
        for (int i = 0; i < res[f].n_test; i++) {
            if (a && (!r->rows || data_select_axis_value(d->sel, a, r->rows[i]) != v)) continue;
            sum += r->efficiency ? r->efficiency[i] : NAN;
            sp[out->n] = r->speedup ? r->speedup[i] : NAN;
            mg[out->n++] = vendor ? r->margin[i] : NAN;
            /* shortlists over the problems whose vendor pick was measured, as the speed-ups */
            const double *row = vendor && !isnan(sp[out->n - 1]) ? r->shortlists + (size_t)i * PIPE_SHORTLIST_ROW : NULL;
            n_vendor += row != NULL;
            for (int k = 0; row && k < EVAL_SHORTLIST_MAX; k++) {
                out->shortlist[k] += row[k];
                out->vendor_shortlist[k] += row[EVAL_SHORTLIST_MAX + k];
            }
            if (row) out->vendor_list += row[2 * EVAL_SHORTLIST_MAX];
        }
    }
    out->efficiency_mean = out->n ? sum / out->n : NAN;
    for (int k = 0; k < EVAL_SHORTLIST_MAX; k++) {
        out->shortlist[k] = n_vendor ? out->shortlist[k] / n_vendor : NAN;
        out->vendor_shortlist[k] = n_vendor ? out->vendor_shortlist[k] / n_vendor : NAN;
    }
    out->vendor_list = n_vendor ? out->vendor_list / n_vendor : NAN;
    out->vendor = vendor;
    eval_speedup_compute(sp, (int)out->n, &out->vs);
    if (vendor && curve) out->n_curve = eval_guard_curve(mg, sp, (int)out->n, out->curve);
    free(sp);
    free(mg);
    return HR_OK;
}

static void pooled_json(cJSON *o, const pooled *p)
{
    cJSON_AddNumberToObject(o, "n", (double)p->n);
    pipe_json_num(o, "efficiency_mean", p->efficiency_mean);
    if (p->vendor) vendor_json(o, &p->vs, p->shortlist, p->vendor_shortlist, p->vendor_list);
}

static void guard_curve_json(cJSON *o, const pooled *p)
{
    cJSON *a = cJSON_AddArrayToObject(o, "guard_curve");
    for (int c = 0; c < p->n_curve; c++) {
        const eval_guard_point *g = &p->curve[c];
        cJSON *e = cJSON_CreateObject();
        pipe_json_num(e, "margin", g->margin);
        pipe_json_num(e, "override_share", g->override);
        vendor_json(e, &g->vs, NULL, NULL, NAN);
        cJSON_AddItemToArray(a, e);
    }
}

/* "pooled" (over several results; the guard's curve, eval.h, over every result's problems) and "slices" of the
 * problems: per axis of the data (data_select_axes: its source, a table's group column and categorical problem
 * columns, a convolution's class, direction, data type, dims and groups) and value, the pooled figures. */
static void select_report_json(cJSON *o, const pipe_dataset *d, const pipe_result *res, int nres)
{
    if (nres < 1 || !d->sel) return;
    pooled p;
    if (pooled_compute(d, res, nres, NULL, 0, 1, &p) != HR_OK) return;
    if (nres > 1) {
        cJSON *po = cJSON_AddObjectToObject(o, "pooled");
        pooled_json(po, &p);
    }
    if (p.vendor) guard_curve_json(o, &p);
    data_axis ax[DATA_AXES_MAX];
    int na = data_select_axes(d->sel, ax, DATA_AXES_MAX);
    cJSON *so = cJSON_AddObjectToObject(o, "slices");
    for (int a = 0; a < na; a++) {
        cJSON *axo = cJSON_AddObjectToObject(so, ax[a].name);
        for (int v = 0; v < ax[a].n_values; v++) {
            if (pooled_compute(d, res, nres, &ax[a], v, 0, &p) != HR_OK || !p.n) continue;
            pooled_json(cJSON_AddObjectToObject(axo, ax[a].values[v]), &p);
        }
    }
}

static void select_format(const char *model_name, const pipe_result *r, char *buf, size_t n)
{
    const eval_select_metrics *m = &r->sel.m;
    char pu[32];
    snprintf(buf, n,
             "%-12s top1 %.4f  top5 %.4f  efficiency mean %.4f median %.4f p10 %.4f min %.4f  unmeasured %.4f"
             "  train %.1f s  predict %s us  params %ld  bytes %ld",
             model_name, m->top1, m->top5, m->efficiency_mean, m->efficiency_median, m->efficiency_p10,
             m->efficiency_min, m->unmeasured_rate, r->train_seconds,
             pipe_text_num(pu, sizeof pu, r->predict_us, 2), r->params, r->model_bytes);
    size_t len = strlen(buf);
    /* r2 is undefined for a model whose scores regress no per-pair target: "-", as report.md prints it */
    char r2[32];
    if (r->sel.candidates && len < n)
        snprintf(buf + len, n - len, "  ndcg@1 %.4f  r2 %s", m->ndcg1, pipe_text_num(r2, sizeof r2, r->sel.r2, 4));
    len = strlen(buf);
    if (r->sel.vendor && len < n)
        snprintf(buf + len, n - len, "  speedup x%.4f  slower %.4f  worst x%.3f", r->sel.vs.geomean, r->sel.vs.slower,
                 r->sel.vs.worst);
}

/* 1 when every result ranked each problem's measured configurations. */
static int md_all_candidates(int nm, const pipe_result *const *res, const int *nres)
{
    for (int m = 0; m < nm; m++)
        for (int i = 0; i < nres[m]; i++)
            if (!res[m][i].sel.candidates) return 0;
    return nm > 0;
}

/* Ranking measured configurations, the table gains NDCG@1 and R^2 (eval.h; "-" for a model whose scores regress no
 * target). */
static void md_metrics_table(FILE *f, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    int cand = md_all_candidates(nm, res, nres);
    fprintf(f, "| model | top1 | top5 | eff. mean | eff. median | eff. p10 | eff. min | unmeasured |%s train s | predict us "
               "| params | model bytes |\n", cand ? " NDCG@1 | R^2 |" : "");
    fprintf(f, "|---|---|---|---|---|---|---|---|%s---|---|---|---|\n", cand ? "---|---|" : "");
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
        char r2[32], pu[32];
        if (cand) fprintf(f, " %.4f | %s |", v[11], pipe_text_num(r2, sizeof r2, v[12], 4));
        fprintf(f, " %.1f | %s | %.0f | %.0f |\n", v[7], pipe_text_num(pu, sizeof pu, v[8], 2), v[9], v[10]);
    }
}

static void md_slices(FILE *f, const data_codec *c, const int *at, int nm, const char *const *names,
                      const pipe_result *const *res, const int *nres)
{
    fprintf(f, "\n### Top-1 by direction and data type\n\n| model |");
    for (int j = 0; j < PIPE_REPORT_SLICES; j++) {
        const data_codec_slice *sl = at[j] >= 0 ? data_codec_slice_at(c, at[j]) : NULL;
        for (int v = 0; sl && v < sl->n_values; v++)
            if (slice_shown(j, nm, res, nres, v)) fprintf(f, " %s |", sl->names[v]);
    }
    fprintf(f, "\n|---|");
    for (int j = 0; j < PIPE_REPORT_SLICES; j++) {
        const data_codec_slice *sl = at[j] >= 0 ? data_codec_slice_at(c, at[j]) : NULL;
        for (int v = 0; sl && v < sl->n_values; v++)
            if (slice_shown(j, nm, res, nres, v)) fprintf(f, "---|");
    }
    fprintf(f, "\n");
    for (int m = 0; m < nm; m++) {
        fprintf(f, "| %s |", names[m]);
        for (int j = 0; j < PIPE_REPORT_SLICES; j++) {
            const data_codec_slice *sl = at[j] >= 0 ? data_codec_slice_at(c, at[j]) : NULL;
            for (int v = 0; sl && v < sl->n_values; v++) {
                if (!slice_shown(j, nm, res, nres, v)) continue;
                long n = 0, h = 0;
                for (int i = 0; i < nres[m]; i++) {
                    n += res[m][i].sel.by_slice[j][v].n;
                    h += res[m][i].sel.by_slice[j][v].top1;
                }
                fprintf(f, " %.4f |", n ? (double)h / n : NAN);
            }
        }
        fprintf(f, "\n");
    }
}

/* The shortlist sizes the per-slice tables show (of EVAL_SHORTLIST_MAX) */
#define MD_SLICE_SHORTLISTS 3

/* With the vendor's ranking: each model against the vendor's first pick and its shortlists, every result's test
 * problems pooled, the guard's curve of each model whose pick differs from the vendor's somewhere, then per axis
 * of the data (data_select_axes) and value the same figures. */
static void md_vendor_tables(FILE *f, const pipe_dataset *d, int nm, const char *const *names,
                             const pipe_result *const *res, const int *nres)
{
    pooled *p = hr_malloc((size_t)(nm > 0 ? nm : 1) * sizeof *p);
    if (!p) return;
    for (int m = 0; m < nm; m++)
        if (pooled_compute(d, res[m], nres[m], NULL, 0, 1, &p[m]) || !p[m].vendor) {
            free(p);
            return;
        }
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
    for (int m = 0; m <= nm && nm > 0; m++) {
        const pooled *q = &p[m < nm ? m : 0];
        fprintf(f, "| %s |", m < nm ? names[m] : "vendor's own first k");
        for (int k = 0; k < EVAL_SHORTLIST_MAX; k++) fprintf(f, " %.4f |", m < nm ? q->shortlist[k] : q->vendor_shortlist[k]);
        if (m < nm) fprintf(f, " |\n");
        else fprintf(f, " %.4f |\n", q->vendor_list);
    }
    for (int m = 0; m < nm; m++) {
        if (p[m].n_curve < 2 || !(p[m].curve[0].override > 0)) continue;
        fprintf(f, "\n### Guard of %s: its pick only where its score beats the vendor pick's by M\n\n"
                   "M at quantiles of the positive margins (eval.h); override: the share of problems where the pick "
                   "replaces the vendor's.\n\n| M | override | speed-up (geomean) | slower | faster | worst |\n"
                   "|---|---|---|---|---|---|\n", names[m]);
        for (int c = 0; c < p[m].n_curve; c++) {
            const eval_guard_point *g = &p[m].curve[c];
            fprintf(f, "| %.4g | %.4f | %.4f | %.4f | %.4f | %.3f |\n", g->margin, g->override, g->vs.geomean,
                    g->vs.slower, g->vs.faster, g->vs.worst);
        }
    }
    free(p);
    data_axis ax[DATA_AXES_MAX];
    int na = data_select_axes(d->sel, ax, DATA_AXES_MAX);
    for (int a = 0; a < na; a++) {
        fprintf(f, "\n### By %s\n\nShortlists: the model's k best plus the vendor's pick; vendor: its own first k.\n\n"
                   "| %s | n | model | speed-up | slower | faster | worst | eff. |", ax[a].name, ax[a].name);
        for (int k = 1; k <= MD_SLICE_SHORTLISTS; k++) fprintf(f, " k=%d |", k);
        for (int k = 1; k <= MD_SLICE_SHORTLISTS; k++) fprintf(f, " vendor k=%d |", k);
        fprintf(f, "\n|---|---|---|---|---|---|---|---|");
        for (int k = 0; k < 2 * MD_SLICE_SHORTLISTS; k++) fprintf(f, "---|");
        fprintf(f, "\n");
        for (int v = 0; v < ax[a].n_values; v++) {
            pooled q;
            if (pooled_compute(d, res[0], nres[0], &ax[a], v, 0, &q) || !q.n) continue;
            for (int m = 0; m < nm; m++) {
                if (pooled_compute(d, res[m], nres[m], &ax[a], v, 0, &q)) return;
                fprintf(f, "| %s | %ld | %s | %.4f | %.4f | %.4f | %.3f | %.4f |", ax[a].values[v], q.n, names[m],
                        q.vs.geomean, q.vs.slower, q.vs.faster, q.vs.worst, q.efficiency_mean);
                for (int k = 0; k < MD_SLICE_SHORTLISTS; k++) fprintf(f, " %.4f |", q.shortlist[k]);
                for (int k = 0; k < MD_SLICE_SHORTLISTS; k++) fprintf(f, " %.4f |", q.vendor_shortlist[k]);
                fprintf(f, "\n");
            }
        }
    }
}

static void select_md_tables(FILE *f, const pipe_dataset *d, int nm, const char *const *names,
                             const pipe_result *const *res, const int *nres)
{
    md_metrics_table(f, nm, names, res, nres);
    /* the slices where the source has them (a table's problems have no direction or convolution data type) */
    int at[PIPE_REPORT_SLICES], any = 0;
    report_slices(d->codec, at);
    for (int j = 0; j < PIPE_REPORT_SLICES; j++) any |= at[j] >= 0;
    if (any) md_slices(f, d->codec, at, nm, names, res, nres);
    if (d->sel && d->sel->vendor_rank) md_vendor_tables(f, d, nm, names, res, nres);
}

static void select_result_free(pipe_result *r)
{
    free(r->sel.efficiency);
    free(r->sel.pick);
    free(r->sel.rows);
    free(r->sel.speedup);
    free(r->sel.shortlists);
    free(r->sel.margin);
    r->sel.efficiency = NULL;
    r->sel.pick = NULL;
    r->sel.rows = NULL;
    r->sel.speedup = NULL;
    r->sel.shortlists = NULL;
    r->sel.margin = NULL;
}

/* The per-problem figures travel after a result's record (pipeline/ranks.c). */
static void select_pack(FILE *f, const pipe_result *r)
{
    uint8_t has_eff = r->sel.efficiency != NULL;
    fwrite(&has_eff, 1, 1, f);
    if (has_eff && r->n_test > 0) fwrite(r->sel.efficiency, sizeof(double), (size_t)r->n_test, f);
    uint8_t has_pick = r->sel.pick != NULL;
    fwrite(&has_pick, 1, 1, f);
    if (has_pick && r->n_test > 0) fwrite(r->sel.pick, sizeof(int), (size_t)r->n_test, f);
    uint8_t has_rows = r->sel.rows != NULL;
    fwrite(&has_rows, 1, 1, f);
    if (has_rows && r->n_test > 0) fwrite(r->sel.rows, sizeof(int), (size_t)r->n_test, f);
    uint8_t has_speedup = r->sel.speedup != NULL;
    fwrite(&has_speedup, 1, 1, f);
    if (has_speedup && r->n_test > 0) fwrite(r->sel.speedup, sizeof(double), (size_t)r->n_test, f);
    uint8_t has_vendor_rows = r->sel.shortlists && r->sel.margin;
    fwrite(&has_vendor_rows, 1, 1, f);
    if (has_vendor_rows && r->n_test > 0) {
        fwrite(r->sel.shortlists, sizeof(double), (size_t)r->n_test * PIPE_SHORTLIST_ROW, f);
        fwrite(r->sel.margin, sizeof(double), (size_t)r->n_test, f);
    }
}

/* An array select_pack wrote only where the result has it: its flag byte, then n bytes into a new *out. */
static int unpack_optional(const char *buf, size_t len, size_t *at, size_t n, void **out)
{
    uint8_t has = 0;
    int rc = pipe_ranks_read(buf, len, at, &has, 1);
    if (rc || !has) return rc;
    if (!(*out = hr_malloc(n ? n : 1))) return HR_ENOMEM;
    return pipe_ranks_read(buf, len, at, *out, n);
}

static int select_unpack(const char *buf, size_t len, size_t *at, pipe_result *r)
{
    r->sel.efficiency = NULL;
    r->sel.pick = NULL;
    r->sel.rows = NULL;
    r->sel.speedup = NULL;
    r->sel.shortlists = NULL;
    r->sel.margin = NULL;
    void *eff = NULL, *pick = NULL, *rows = NULL, *speedup = NULL;
    size_t nd = (size_t)r->n_test * sizeof(double), ni = (size_t)r->n_test * sizeof(int);
    int rc = unpack_optional(buf, len, at, nd, &eff);
    r->sel.efficiency = eff;
    if (!rc) rc = unpack_optional(buf, len, at, ni, &pick);
    r->sel.pick = pick;
    if (!rc) rc = unpack_optional(buf, len, at, ni, &rows);
    r->sel.rows = rows;
    if (!rc) rc = unpack_optional(buf, len, at, nd, &speedup);
    r->sel.speedup = speedup;
    uint8_t has_vendor_rows = 0;
    if (!rc) rc = pipe_ranks_read(buf, len, at, &has_vendor_rows, 1);
    if (!rc && has_vendor_rows) {
        size_t n = (size_t)r->n_test * PIPE_SHORTLIST_ROW * sizeof(double), nm = (size_t)r->n_test * sizeof(double);
        if (!(r->sel.shortlists = hr_malloc(n ? n : 1)) || !(r->sel.margin = hr_malloc(nm ? nm : 1))) return HR_ENOMEM;
        rc = pipe_ranks_read(buf, len, at, r->sel.shortlists, n);
        if (!rc) rc = pipe_ranks_read(buf, len, at, r->sel.margin, nm);
    }
    return rc;
}

/* ---- the dataset ---- */

static int select_dataset_check(const pipe_dataset *d, const char *path, const char *solver)
{
    (void)d, (void)path, (void)solver;
    return HR_OK;
}

static int select_dataset_codec(const pipe_dataset *d, data_codec **out)
{
    return data_codec_of_select(d->sel, out);
}

static void select_dataset_values(const pipe_dataset *d, double *V)
{
    data_select_values(d->sel, V);
}

static int select_dataset_groups(const pipe_dataset *d, const char *by, int *group, int *n_groups, const char **rule,
                                 int *whole)
{
    return data_select_groups(d->sel, by, group, n_groups, rule, whole);
}

static void select_dataset_free(pipe_dataset *d)
{
    data_select_free(d->sel);
}

static void select_train_data(const pipe_dataset *d, model_train_data *td)
{
    td->sel = d->sel;
}

/* The most frequent fastest kernel, and the vendor's own heuristic where one is recorded beside the data. */
static int select_baselines(const pipe_dataset *d, const model_family **out)
{
    int n = 0;
    out[n++] = &model_family_frequent;
    if (d->sel->vendor_rank) out[n++] = &model_family_vendor;
    return n;
}

static uint64_t select_digest(const pipe_dataset *d, uint64_t h)
{
    return pipe_digest_select(d->sel, h);
}

static const char *select_solver(const pipe_dataset *d)
{
    (void)d;
    return NULL;
}

const pipe_task pipe_task_select = {
    .task = MODEL_TASK_SELECT,
    .data_desc = "kernel-selection",
    .accuracy_label = "top-1 accuracy",
    .curve_label = "validation top-1",
    .dataset_check = select_dataset_check,
    .dataset_codec = select_dataset_codec,
    .dataset_values = select_dataset_values,
    .dataset_groups = select_dataset_groups,
    .dataset_free = select_dataset_free,
    .from_select = NULL,
    .train_data = select_train_data,
    .solver = select_solver,
    .digest = select_digest,
    .baselines = select_baselines,
    .evaluate = select_evaluate,
    .predict_one = select_predict_one,
    .accuracy = select_accuracy,
    .metrics_json = select_metrics_json,
    .report_json = select_report_json,
    .format = select_format,
    .md_tables = select_md_tables,
    .figures = plot_select_figures,
    .result_free = select_result_free,
    .pack = select_pack,
    .unpack = select_unpack,
};
