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
    cJSON *dir = cJSON_AddObjectToObject(o, "top1_by_direction");
    for (int i = 0; i < DATA_DIR_COUNT; i++)
        if (r->sel.by_direction[i].n)
            pipe_json_num(dir, data_direction_names[i], (double)r->sel.by_direction[i].top1 / r->sel.by_direction[i].n);
    cJSON *dt = cJSON_AddObjectToObject(o, "top1_by_dtype");
    for (int i = 0; i < DATA_DTYPE_COUNT; i++)
        if (r->sel.by_dtype[i].n)
            pipe_json_num(dt, data_dtype_names[i], (double)r->sel.by_dtype[i].top1 / r->sel.by_dtype[i].n);
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

static void select_md_tables(FILE *f, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    md_metrics_table(f, nm, names, res, nres);
    /* a table's problems have no direction or convolution data type */
    if (!md_all_tables(nm, res, nres)) md_slices(f, nm, names, res, nres);
}

static void select_result_free(pipe_result *r)
{
    free(r->sel.efficiency);
    free(r->sel.pick);
    r->sel.efficiency = NULL;
    r->sel.pick = NULL;
}

const pipe_task pipe_task_select = {
    .task = MODEL_TASK_SELECT,
    .accuracy_label = "top-1 accuracy",
    .curve_label = "validation top-1",
    .evaluate = select_evaluate,
    .predict_one = select_predict_one,
    .accuracy = select_accuracy,
    .metrics_json = select_metrics_json,
    .format = select_format,
    .md_tables = select_md_tables,
    .figures = plot_select_figures,
    .result_free = select_result_free,
};
