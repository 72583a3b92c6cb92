/* The acceptance gate between two selection models (diff.h): both evaluated by pipe_evaluate, compared
 * problem by problem and on the contract's efficiency figures. */
#include "pipeline/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_internal.h"

pipe_diff_opts pipe_diff_opts_default(void)
{
    pipe_diff_opts o = {.max_mean_drop = 0.005,
                        .max_median_drop = 0.005,
                        .max_p10_drop = 0.02,
                        .max_problem_loss = 0.10,
                        .tolerance = 0.0,
                        .worst = 10};
    return o;
}

static int check_opts(const pipe_diff_opts *o)
{
    const struct {
        const char *name;
        double v;
    } drops[] = {{"max_mean_drop", o->max_mean_drop}, {"max_median_drop", o->max_median_drop},
                 {"max_p10_drop", o->max_p10_drop}, {"tolerance", o->tolerance}};
    for (size_t i = 0; i < sizeof drops / sizeof drops[0]; i++)
        if (!(drops[i].v >= 0) || !isfinite(drops[i].v))
            return hr_error(HR_EINVAL, "diff %s %g: expected a finite number >= 0", drops[i].name, drops[i].v);
    if (!(o->max_problem_loss >= 0 && o->max_problem_loss <= 1))
        return hr_error(HR_EINVAL, "diff max_problem_loss %g: expected a number in [0, 1]", o->max_problem_loss);
    if (o->worst < 0) return hr_error(HR_EINVAL, "diff worst %d: expected a count >= 0", o->worst);
    return HR_OK;
}

int pipe_diff_model_check(const model *m, const char *which)
{
    if (m->task != MODEL_TASK_SELECT)
        return hr_error(HR_EINVAL, "the %s model is a %s model (%s parameters); diff compares kernel-selection models",
                        which, model_task_name(m->task), m->solver ? m->solver : "tuning");
    return HR_OK;
}

static int evaluate(const pipe_dataset *d, const model *m, const int *rows, int n_rows, pipe_result *r,
                    const char *which)
{
    int rc = pipe_evaluate(d, m, rows, n_rows, r);
    if (rc) return hr_error_wrap(rc, "%s model (%s)", which, m->family->name);
    if (!r->sel.efficiency || !r->sel.pick) return hr_error(HR_ESTATE, "%s model: no per-problem figures", which);
    return HR_OK;
}

/* The worst regressions come first: lowest new / old ratio, then the larger drop, then the lower row. */
static int regression_cmp(const void *a, const void *b, const pipe_diff_problem *p)
{
    const pipe_diff_problem *x = &p[*(const int *)a], *y = &p[*(const int *)b];
    double rx = x->new_eff / x->old_eff, ry = y->new_eff / y->old_eff;
    if (rx != ry) return rx < ry ? -1 : 1;
    double dx = x->old_eff - x->new_eff, dy = y->old_eff - y->new_eff;
    if (dx != dy) return dx > dy ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Insertion into a sorted list of at most `cap` entries: the worst list without sorting every problem. */
static void worst_insert(int *list, int *n, int cap, int idx, const pipe_diff_problem *p)
{
    if (cap <= 0) return;
    if (*n == cap && regression_cmp(&idx, &list[cap - 1], p) >= 0) return;
    int at = *n < cap ? (*n)++ : cap - 1;
    while (at > 0 && regression_cmp(&idx, &list[at - 1], p) < 0) {
        list[at] = list[at - 1];
        at--;
    }
    list[at] = idx;
}

static void set_check(pipe_diff_check *c, const char *name, double old_v, double new_v, double limit)
{
    c->name = name;
    c->old_value = old_v;
    c->new_value = new_v;
    c->limit = limit;
    c->failing = 0;
    c->pass = new_v >= old_v - limit - PIPE_DIFF_SLACK;
}

int pipe_diff_compute(const pipe_dataset *d, const model *old_m, const model *new_m, const int *rows, int n_rows,
                      const pipe_diff_opts *o, pipe_diff *out)
{
    memset(out, 0, sizeof *out);
    int rc = check_opts(o);
    if (rc) return rc;
    out->opts = *o;
    if (d->task != MODEL_TASK_SELECT)
        return hr_error(HR_EINVAL, "%s holds %s data; diff compares kernel-selection models on selection data", d->name,
                        model_task_name(d->task));
    if ((rc = pipe_diff_model_check(old_m, "old")) || (rc = pipe_diff_model_check(new_m, "new"))) return rc;
    if ((rc = evaluate(d, old_m, rows, n_rows, &out->old_r, "old")) ||
        (rc = evaluate(d, new_m, rows, n_rows, &out->new_r, "new"))) {
        pipe_diff_free(out);
        return rc;
    }
    out->n = n_rows;
    out->old_family = old_m->family->name;
    out->new_family = new_m->family->name;
    out->problems = hr_malloc((size_t)n_rows * sizeof *out->problems);
    out->worst = hr_malloc((size_t)(o->worst > 0 ? o->worst : 1) * sizeof *out->worst);
    if (!out->problems || !out->worst) {
        pipe_diff_free(out);
        return HR_ENOMEM;
    }
    const pipe_select_result *a = &out->old_r.sel, *b = &out->new_r.sel;
    long losing = 0;
    for (int i = 0; i < n_rows; i++) {
        pipe_diff_problem *p = &out->problems[i];
        *p = (pipe_diff_problem){rows[i], a->pick[i], b->pick[i], a->efficiency[i], b->efficiency[i]};
        out->agree += p->old_pick == p->new_pick;
        if (p->new_eff - p->old_eff > o->tolerance) out->improved++;
        else if (p->old_eff - p->new_eff > o->tolerance) {
            out->degraded++;
            worst_insert(out->worst, &out->n_worst, o->worst, i, out->problems);
        } else out->same++;
        losing += p->new_eff < (1.0 - o->max_problem_loss) * p->old_eff;
    }
    out->agreement = (double)out->agree / n_rows;
    const eval_select_metrics *mo = &a->m, *mn = &b->m;
    set_check(&out->checks[PIPE_DIFF_MEAN], "mean", mo->efficiency_mean, mn->efficiency_mean, o->max_mean_drop);
    set_check(&out->checks[PIPE_DIFF_MEDIAN], "median", mo->efficiency_median, mn->efficiency_median,
              o->max_median_drop);
    set_check(&out->checks[PIPE_DIFF_P10], "p10", mo->efficiency_p10, mn->efficiency_p10, o->max_p10_drop);
    pipe_diff_check *pl = &out->checks[PIPE_DIFF_PROBLEM_LOSS];
    *pl = (pipe_diff_check){"problem_loss", NAN, NAN, o->max_problem_loss, losing, losing == 0};
    out->pass = 1;
    for (int c = 0; c < PIPE_DIFF_CHECKS; c++) out->pass &= out->checks[c].pass;
    return HR_OK;
}

void pipe_diff_free(pipe_diff *df)
{
    pipe_result_free(&df->old_r);
    pipe_result_free(&df->new_r);
    free(df->problems);
    free(df->worst);
    memset(df, 0, sizeof *df);
}

static const char *kernel_name(const pipe_dataset *d, int pick)
{
    return pick >= 0 && pick < d->sel->n_kernels ? d->sel->kernels[pick] : "(a kernel the data does not hold)";
}

static const char *problem_key(const pipe_dataset *d, int row, char *buf, size_t n)
{
    if (d->sel->keys && d->sel->keys[row]) return d->sel->keys[row];
    if (data_codec_problem_format(d->codec, pipe_dataset_values(d, row), buf, n)) snprintf(buf, n, "(row %d)", row);
    return buf;
}

void pipe_diff_print(const pipe_dataset *d, const pipe_diff *df, const char *old_name, const char *new_name,
                     const char *split_desc, FILE *f)
{
    const eval_select_metrics *mo = &df->old_r.sel.m, *mn = &df->new_r.sel.m;
    fprintf(f, "old  %s (%s)\nnew  %s (%s)\n", old_name, df->old_family, new_name, df->new_family);
    fprintf(f, "data %s, split %s: %d problems\n\n", d->name, split_desc, df->n);
    fprintf(f, "agreement  %.4f  (%ld of %d problems pick the same kernel)\n", df->agreement, df->agree, df->n);
    fprintf(f, "problems   improved %ld  same %ld  degraded %ld  (a change beyond tolerance %g counts)\n\n",
            df->improved, df->same, df->degraded, df->opts.tolerance);
    fprintf(f, "%-18s %8s %8s %9s\n", "", "old", "new", "delta");
    const struct {
        const char *name;
        double o, n;
    } rows[] = {{"efficiency mean", mo->efficiency_mean, mn->efficiency_mean},
                {"efficiency median", mo->efficiency_median, mn->efficiency_median},
                {"efficiency p10", mo->efficiency_p10, mn->efficiency_p10},
                {"efficiency min", mo->efficiency_min, mn->efficiency_min},
                {"top1", mo->top1, mn->top1},
                {"top5", mo->top5, mn->top5},
                {"unmeasured", mo->unmeasured_rate, mn->unmeasured_rate}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "%-18s %8.4f %8.4f %+9.4f\n", rows[i].name, rows[i].o, rows[i].n, rows[i].n - rows[i].o);
    fprintf(f, "\nworst regressions (%d of %ld degraded, lowest new/old efficiency first):\n", df->n_worst, df->degraded);
    for (int i = 0; i < df->n_worst; i++) {
        const pipe_diff_problem *p = &df->problems[df->worst[i]];
        char key[256];
        fprintf(f, "  %s\n    old %.4f  %s\n    new %.4f  %s\n", problem_key(d, p->row, key, sizeof key), p->old_eff,
                kernel_name(d, p->old_pick), p->new_eff, kernel_name(d, p->new_pick));
    }
    fprintf(f, "\nchecks:\n");
    for (int c = 0; c < PIPE_DIFF_PROBLEM_LOSS; c++) {
        const pipe_diff_check *k = &df->checks[c];
        fprintf(f, "  %-13s new %.4f >= old %.4f - %.4f  %s\n", k->name, k->new_value, k->old_value, k->limit,
                k->pass ? "pass" : "FAIL");
    }
    const pipe_diff_check *pl = &df->checks[PIPE_DIFF_PROBLEM_LOSS];
    fprintf(f, "  %-13s %ld problems with new < %.4f x old  %s\n", pl->name, pl->failing, 1.0 - pl->limit,
            pl->pass ? "pass" : "FAIL");
    if (df->pass) {
        fprintf(f, "PASS: %d of %d checks pass\n", PIPE_DIFF_CHECKS, PIPE_DIFF_CHECKS);
        return;
    }
    int failed = 0;
    for (int c = 0; c < PIPE_DIFF_CHECKS; c++) failed += !df->checks[c].pass;
    fprintf(f, "FAIL: %d of %d checks fail:", failed, PIPE_DIFF_CHECKS);
    for (int c = 0; c < PIPE_DIFF_CHECKS; c++)
        if (!df->checks[c].pass) fprintf(f, " %s", df->checks[c].name);
    fprintf(f, "\n");
}

static cJSON *model_object(const pipe_dataset *d, const char *family, const char *name, const pipe_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", name);
    cJSON_AddStringToObject(o, "family", family);
    cJSON *mj = cJSON_AddObjectToObject(o, "metrics");
    pipe_task_select.metrics_json(mj, d, r);
    pipe_json_num(o, "predict_us", r->predict_us);
    cJSON_AddNumberToObject(o, "params", (double)r->params);
    return o;
}

cJSON *pipe_diff_report(const pipe_dataset *d, const pipe_diff *df, const char *old_name, const char *new_name,
                        const char *split_desc)
{
    const eval_select_metrics *mo = &df->old_r.sel.m, *mn = &df->new_r.sel.m;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", "select");
    cJSON_AddStringToObject(o, "data", d->name);
    cJSON_AddStringToObject(o, "split", split_desc);
    if (d->grouping) cJSON_AddStringToObject(o, "groups", d->grouping);
    cJSON_AddNumberToObject(o, "n_problems", df->n);
    cJSON_AddItemToObject(o, "old", model_object(d, df->old_family, old_name, &df->old_r));
    cJSON_AddItemToObject(o, "new", model_object(d, df->new_family, new_name, &df->new_r));
    cJSON *dl = cJSON_AddObjectToObject(o, "deltas");
    pipe_json_num(dl, "efficiency_mean", mn->efficiency_mean - mo->efficiency_mean);
    pipe_json_num(dl, "efficiency_median", mn->efficiency_median - mo->efficiency_median);
    pipe_json_num(dl, "efficiency_p10", mn->efficiency_p10 - mo->efficiency_p10);
    pipe_json_num(dl, "efficiency_min", mn->efficiency_min - mo->efficiency_min);
    pipe_json_num(dl, "top1", mn->top1 - mo->top1);
    pipe_json_num(dl, "top5", mn->top5 - mo->top5);
    pipe_json_num(dl, "unmeasured_rate", mn->unmeasured_rate - mo->unmeasured_rate);
    pipe_json_num(o, "agreement", df->agreement);
    cJSON *cn = cJSON_AddObjectToObject(o, "counts");
    cJSON_AddNumberToObject(cn, "agree", (double)df->agree);
    cJSON_AddNumberToObject(cn, "improved", (double)df->improved);
    cJSON_AddNumberToObject(cn, "same", (double)df->same);
    cJSON_AddNumberToObject(cn, "degraded", (double)df->degraded);
    cJSON_AddNumberToObject(o, "tolerance", df->opts.tolerance);
    cJSON *th = cJSON_AddObjectToObject(o, "thresholds");
    cJSON_AddNumberToObject(th, "max_mean_drop", df->opts.max_mean_drop);
    cJSON_AddNumberToObject(th, "max_median_drop", df->opts.max_median_drop);
    cJSON_AddNumberToObject(th, "max_p10_drop", df->opts.max_p10_drop);
    cJSON_AddNumberToObject(th, "max_problem_loss", df->opts.max_problem_loss);
    cJSON *ck = cJSON_AddObjectToObject(o, "checks");
    for (int c = 0; c < PIPE_DIFF_CHECKS; c++) {
        const pipe_diff_check *k = &df->checks[c];
        cJSON *cj = cJSON_AddObjectToObject(ck, k->name);
        if (c == PIPE_DIFF_PROBLEM_LOSS) {
            cJSON_AddNumberToObject(cj, "max_loss", k->limit);
            cJSON_AddNumberToObject(cj, "failing", (double)k->failing);
        } else {
            pipe_json_num(cj, "old", k->old_value);
            pipe_json_num(cj, "new", k->new_value);
            pipe_json_num(cj, "max_drop", k->limit);
        }
        cJSON_AddBoolToObject(cj, "pass", k->pass);
    }
    cJSON *w = cJSON_AddArrayToObject(o, "worst");
    for (int i = 0; i < df->n_worst; i++) {
        const pipe_diff_problem *p = &df->problems[df->worst[i]];
        char key[256];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "key", problem_key(d, p->row, key, sizeof key));
        cJSON_AddStringToObject(e, "old_pick", kernel_name(d, p->old_pick));
        cJSON_AddNumberToObject(e, "old_efficiency", p->old_eff);
        cJSON_AddStringToObject(e, "new_pick", kernel_name(d, p->new_pick));
        cJSON_AddNumberToObject(e, "new_efficiency", p->new_eff);
        cJSON_AddItemToArray(w, e);
    }
    cJSON_AddBoolToObject(o, "pass", df->pass);
    cJSON_AddStringToObject(o, "decision", df->pass ? "pass" : "fail");
    return o;
}
