/* Comparison figures with cairo: axes, series, legend; one function per figure. */
#include "pipeline/plot.h"
#include "pipeline/pipeline_internal.h"

#include <cairo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_PI 3.14159265358979323846
#define PLOT_W 800
#define PLOT_H 500
#define MARGIN_L 70
#define MARGIN_R 170
#define MARGIN_T 40
#define MARGIN_B 60

static const double palette[8][3] = {{0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
                                     {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50}};

typedef struct axes {
    cairo_t *cr;
    double x0, x1, y0, y1; /* data ranges */
    int logx;
} axes;

static double ax_px(const axes *a, double x)
{
    if (a->logx) {
        x = log10(x);
        return MARGIN_L + (x - log10(a->x0)) / (log10(a->x1) - log10(a->x0)) * (PLOT_W - MARGIN_L - MARGIN_R);
    }
    return MARGIN_L + (x - a->x0) / (a->x1 - a->x0) * (PLOT_W - MARGIN_L - MARGIN_R);
}

static double ax_py(const axes *a, double y)
{
    return PLOT_H - MARGIN_B - (y - a->y0) / (a->y1 - a->y0) * (PLOT_H - MARGIN_T - MARGIN_B);
}

static void text_at(cairo_t *cr, double x, double y, const char *s, double align_x, double size)
{
    cairo_set_font_size(cr, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - align_x * e.width, y);
    cairo_show_text(cr, s);
}

static cairo_t *figure_begin(cairo_surface_t **surf, const char *title, const char *xlabel, const char *ylabel)
{
    *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, PLOT_W, PLOT_H);
    cairo_t *cr = cairo_create(*surf);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, PLOT_W / 2.0, 24, title, 0.5, 16);
    text_at(cr, MARGIN_L + (PLOT_W - MARGIN_L - MARGIN_R) / 2.0, PLOT_H - 15, xlabel, 0.5, 13);
    cairo_save(cr);
    cairo_translate(cr, 18, MARGIN_T + (PLOT_H - MARGIN_T - MARGIN_B) / 2.0);
    cairo_rotate(cr, -PLOT_PI / 2);
    text_at(cr, 0, 0, ylabel, 0.5, 13);
    cairo_restore(cr);
    return cr;
}

static void draw_axes(const axes *a, int nxt, int nyt)
{
    cairo_t *cr = a->cr;
    char buf[32];
    cairo_set_line_width(cr, 1);
    for (int i = 0; i <= nyt; i++) {
        double y = a->y0 + (a->y1 - a->y0) * i / nyt, py = ax_py(a, y);
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, MARGIN_L, py);
        cairo_line_to(cr, PLOT_W - MARGIN_R, py);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        snprintf(buf, sizeof buf, "%.3g", y);
        text_at(cr, MARGIN_L - 6, py + 4, buf, 1.0, 11);
    }
    for (int i = 0; i <= nxt; i++) {
        double x = a->logx ? pow(10, log10(a->x0) + (log10(a->x1) - log10(a->x0)) * i / nxt)
                           : a->x0 + (a->x1 - a->x0) * i / nxt;
        double px = ax_px(a, x);
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, px, MARGIN_T);
        cairo_line_to(cr, px, PLOT_H - MARGIN_B);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        if (a->logx && x >= 1) snprintf(buf, sizeof buf, "%.0f", x);
        else snprintf(buf, sizeof buf, "%.3g", x);
        text_at(cr, px, PLOT_H - MARGIN_B + 16, buf, 0.5, 11);
    }
    cairo_rectangle(cr, MARGIN_L, MARGIN_T, PLOT_W - MARGIN_L - MARGIN_R, PLOT_H - MARGIN_T - MARGIN_B);
    cairo_stroke(cr);
}

static void legend(cairo_t *cr, int n, const char *const *names)
{
    for (int m = 0; m < n; m++) {
        double y = MARGIN_T + 20 + 22 * m, x = PLOT_W - MARGIN_R + 15;
        cairo_set_source_rgb(cr, palette[m % 8][0], palette[m % 8][1], palette[m % 8][2]);
        cairo_rectangle(cr, x, y - 10, 14, 12);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, x + 20, y, names[m], 0, 12);
    }
}

static int figure_end(cairo_surface_t *surf, cairo_t *cr, const char *dir, const char *file)
{
    cairo_destroy(cr);
    char path[1024], *tmp = NULL;
    int rc = hr_path_join(path, sizeof path, dir, file);
    if (!rc && !(tmp = hr_file_tmp_path(path))) rc = HR_ENOMEM;
    if (!rc && cairo_surface_write_to_png(surf, tmp) != CAIRO_STATUS_SUCCESS) {
        /* cairo leaves what it wrote: the temporary goes, nothing half-written stays beside the report */
        remove(tmp);
        rc = hr_error(HR_EIO, "%s: cannot write PNG", path);
    } else if (!rc) {
        rc = hr_file_commit(tmp, path);
    }
    free(tmp);
    cairo_surface_destroy(surf);
    return rc;
}

static int plot_efficiency_cdf(const char *dir, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    cairo_surface_t *s;
    cairo_t *cr = figure_begin(&s, "Efficiency on test problems (CDF)", "efficiency = t_fastest / t_chosen",
                               "fraction of problems <= x");
    axes a = {cr, 0.0, 1.0, 0.0, 1.0, 0};
    /* zoom on the interesting range: from the lowest 1st percentile of any model */
    double lo = 1.0;
    for (int m = 0; m < nm; m++) {
        for (int f = 0; f < nres[m]; f++) {
            double q = eval_quantile(res[m][f].sel.efficiency, res[m][f].n_test, 0.01);
            if (q < lo) lo = q;
        }
    }
    a.x0 = floor(lo * 10) / 10;
    if (a.x0 > 0.9) a.x0 = 0.9;
    draw_axes(&a, 5, 5);
    for (int m = 0; m < nm; m++) {
        long n = 0;
        for (int f = 0; f < nres[m]; f++) n += res[m][f].n_test;
        double *e = malloc((size_t)n * sizeof *e);
        if (!e) break;
        long at = 0;
        for (int f = 0; f < nres[m]; f++) {
            memcpy(e + at, res[m][f].sel.efficiency, (size_t)res[m][f].n_test * sizeof *e);
            at += res[m][f].n_test;
        }
        eval_sort_doubles(e, n);
        cairo_set_source_rgb(cr, palette[m % 8][0], palette[m % 8][1], palette[m % 8][2]);
        cairo_set_line_width(cr, 2);
        cairo_move_to(cr, ax_px(&a, a.x0), ax_py(&a, 0));
        long step = n > 2000 ? n / 2000 : 1;
        for (long i = 0; i < n; i += step) {
            double x = e[i] < a.x0 ? a.x0 : e[i];
            cairo_line_to(cr, ax_px(&a, x), ax_py(&a, (double)(i + 1) / n));
        }
        cairo_line_to(cr, ax_px(&a, 1.0), ax_py(&a, 1.0));
        cairo_stroke(cr);
        free(e);
    }
    legend(cr, nm, names);
    return figure_end(s, cr, dir, "efficiency_cdf.png");
}

static int plot_slices(const char *dir, const pipe_dataset *d, int nm, const char *const *names,
                       const pipe_result *const *res, const int *nres)
{
    /* bars: every value of the first report slice the source has (a convolution's F, B, W), then each value of the
     * others with at least 100 test problems (its data types) */
    const char *labels[PIPE_REPORT_SLICES * PIPE_SLICE_VALUES];
    int of_slice[PIPE_REPORT_SLICES * PIPE_SLICE_VALUES], of_value[PIPE_REPORT_SLICES * PIPE_SLICE_VALUES];
    double val[COMPARE_PLOT_MAX][PIPE_REPORT_SLICES * PIPE_SLICE_VALUES];
    int ns = 0;
    for (int j = 0; j < PIPE_REPORT_SLICES; j++) {
        int at = data_codec_slice_find(d->codec, pipe_report_slices[j]);
        const data_codec_slice *sl = at >= 0 ? data_codec_slice_at(d->codec, at) : NULL;
        for (int v = 0; sl && v < sl->n_values && v < PIPE_SLICE_VALUES; v++) {
            long n = 0;
            for (int m = 0; m < nm; m++)
                for (int f = 0; f < nres[m]; f++) n += res[m][f].sel.by_slice[j][v].n;
            if (j > 0 && n < 100) continue;
            of_slice[ns] = j;
            of_value[ns] = v;
            labels[ns++] = sl->names[v];
        }
    }
    if (ns == 0) return 0; /* no slice to show (a benchmark table's problems have none): no figure */
    for (int m = 0; m < nm && m < COMPARE_PLOT_MAX; m++) {
        for (int i = 0; i < ns; i++) {
            long n = 0, h = 0;
            for (int f = 0; f < nres[m]; f++) {
                const pipe_slice *sl = &res[m][f].sel.by_slice[of_slice[i]][of_value[i]];
                n += sl->n;
                h += sl->top1;
            }
            val[m][i] = n ? (double)h / n : 0;
        }
    }
    double lo = 1.0;
    for (int m = 0; m < nm; m++)
        for (int i = 0; i < ns; i++)
            if (val[m][i] < lo) lo = val[m][i];
    cairo_surface_t *s;
    cairo_t *cr = figure_begin(&s, "Top-1 by direction and data type", "slice", "top-1 accuracy");
    axes a = {cr, 0, ns, floor(lo * 10) / 10 - 0.1 < 0 ? 0 : floor(lo * 10) / 10 - 0.1, 1.0, 0};
    /* y axis only: the x axis is categorical */
    char buf[32];
    for (int i = 0; i <= 5; i++) {
        double y = a.y0 + (a.y1 - a.y0) * i / 5, py = ax_py(&a, y);
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, MARGIN_L, py);
        cairo_line_to(cr, PLOT_W - MARGIN_R, py);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        snprintf(buf, sizeof buf, "%.2f", y);
        text_at(cr, MARGIN_L - 6, py + 4, buf, 1.0, 11);
    }
    double slot = (PLOT_W - MARGIN_L - MARGIN_R) / (double)(ns ? ns : 1), bw = slot * 0.8 / (nm ? nm : 1);
    for (int i = 0; i < ns; i++) {
        double x0 = MARGIN_L + slot * i + slot * 0.1;
        for (int m = 0; m < nm && m < COMPARE_PLOT_MAX; m++) {
            double py = ax_py(&a, val[m][i] < a.y0 ? a.y0 : val[m][i]);
            cairo_set_source_rgb(cr, palette[m % 8][0], palette[m % 8][1], palette[m % 8][2]);
            cairo_rectangle(cr, x0 + bw * m, py, bw * 0.9, ax_py(&a, a.y0) - py);
            cairo_fill(cr);
        }
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, MARGIN_L + slot * (i + 0.5), PLOT_H - MARGIN_B + 16, labels[i], 0.5, 12);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, MARGIN_L, MARGIN_T, PLOT_W - MARGIN_L - MARGIN_R, PLOT_H - MARGIN_T - MARGIN_B);
    cairo_stroke(cr);
    legend(cr, nm, names);
    int rc = figure_end(s, cr, dir, "top1_slices.png");
    return rc ? rc : 1;
}

static int plot_tradeoff(const char *dir, const pipe_task *task, int nm, const char *const *names,
                         const pipe_result *const *res, const int *nres)
{
    double acc[COMPARE_PLOT_MAX], us[COMPARE_PLOT_MAX];
    double lo = 1, hi = 0, tmin = INFINITY, tmax = 0;
    for (int m = 0; m < nm && m < COMPARE_PLOT_MAX; m++) {
        acc[m] = us[m] = 0;
        for (int f = 0; f < nres[m]; f++) {
            acc[m] += task->accuracy(&res[m][f]) / nres[m];
            us[m] += res[m][f].predict_us / nres[m];
        }
        if (acc[m] < lo) lo = acc[m];
        if (acc[m] > hi) hi = acc[m];
        if (us[m] < tmin) tmin = us[m];
        if (us[m] > tmax) tmax = us[m];
    }
    cairo_surface_t *s;
    cairo_t *cr = figure_begin(&s, "Accuracy against single-problem inference time",
                               "predict time per problem (us, log scale)",
                               task->accuracy_label);
    axes a = {cr, pow(10, floor(log10(tmin > 0 ? tmin : 0.1))), pow(10, ceil(log10(tmax > 0 ? tmax : 1) + 1e-9)),
              floor(lo * 20) / 20 - 0.05, ceil(hi * 20) / 20 + 0.05, 1};
    if (a.y1 > 1.0) a.y1 = 1.0;
    if (a.y0 < 0) a.y0 = 0;
    if (a.x1 <= a.x0) a.x1 = a.x0 * 10;
    draw_axes(&a, (int)round(log10(a.x1 / a.x0)), 5);
    for (int m = 0; m < nm && m < COMPARE_PLOT_MAX; m++) {
        if (!isfinite(us[m])) continue; /* a prediction that could not be timed has no place on the time axis */
        cairo_set_source_rgb(cr, palette[m % 8][0], palette[m % 8][1], palette[m % 8][2]);
        cairo_arc(cr, ax_px(&a, us[m]), ax_py(&a, acc[m]), 7, 0, 2 * PLOT_PI);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, ax_px(&a, us[m]) + 10, ax_py(&a, acc[m]) - 8, names[m], 0, 12);
    }
    legend(cr, nm, names);
    return figure_end(s, cr, dir, "tradeoff.png");
}

/* Validation metric per epoch or round of the first fold's model, one line per family. */
static int plot_curves(const char *dir, const pipe_task *task, int nm, const char *const *names,
                       const pipe_result *const *res, const int *nres)
{
    double xmax = 1, lo = 1, hi = 0;
    int any = 0;
    for (int m = 0; m < nm; m++) {
        if (!nres[m]) continue;
        const pipe_result *r = &res[m][0];
        for (int i = 0; i < r->n_curve; i++) {
            double v = r->curve[i].valid_metric;
            if (!isfinite(v)) continue;
            any = 1;
            if (r->curve[i].step > xmax) xmax = r->curve[i].step;
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    if (!any) return 0;
    cairo_surface_t *s;
    cairo_t *cr = figure_begin(&s, "Training curves (validation rows of the first fold)", "epoch or boosting round",
                               task->curve_label);
    axes a = {cr, 0, xmax, floor(lo * 20) / 20, ceil(hi * 20) / 20, 0};
    if (a.y1 <= a.y0) a.y1 = a.y0 + 0.05;
    draw_axes(&a, 5, 5);
    for (int m = 0; m < nm; m++) {
        if (!nres[m]) continue;
        const pipe_result *r = &res[m][0];
        cairo_set_source_rgb(cr, palette[m % 8][0], palette[m % 8][1], palette[m % 8][2]);
        cairo_set_line_width(cr, 2);
        int started = 0;
        for (int i = 0; i < r->n_curve; i++) {
            double v = r->curve[i].valid_metric;
            if (!isfinite(v)) continue;
            if (started) cairo_line_to(cr, ax_px(&a, r->curve[i].step), ax_py(&a, v));
            else cairo_move_to(cr, ax_px(&a, r->curve[i].step), ax_py(&a, v));
            started = 1;
        }
        cairo_stroke(cr);
        /* a marker per point, so a one-epoch run still shows */
        for (int i = 0; i < r->n_curve; i++) {
            double v = r->curve[i].valid_metric;
            if (!isfinite(v)) continue;
            cairo_arc(cr, ax_px(&a, r->curve[i].step), ax_py(&a, v), 3, 0, 2 * PLOT_PI);
            cairo_fill(cr);
        }
    }
    legend(cr, nm, names);
    int rc = figure_end(s, cr, dir, "training_curves.png");
    return rc ? rc : 1;
}

int plot_select_figures(const char *dir, const pipe_dataset *d, int nm, const char *const *names, const pipe_result *const *res,
                        const int *nres, FILE *md)
{
    int rc;
    if ((rc = plot_efficiency_cdf(dir, nm, names, res, nres))) return rc;
    if (md) fprintf(md, "![efficiency CDF](efficiency_cdf.png)\n\n");
    if ((rc = plot_slices(dir, d, nm, names, res, nres)) < 0) return rc;
    if (rc && md) fprintf(md, "![top-1 by slice](top1_slices.png)\n\n");
    return 1 + rc;
}

int plot_compare(const char *dir, const pipe_dataset *d, const pipe_task *task, int n_models,
                 const char *const *names, const pipe_result *const *res, const int *n_res, FILE *md)
{
    if (!task) return HR_EINVAL;
    if (n_models > COMPARE_PLOT_MAX) n_models = COMPARE_PLOT_MAX;
    int n = 0, rc;
    if (md) fprintf(md, "\n### Figures\n\n");
    if (task->figures) {
        if ((rc = task->figures(dir, d, n_models, names, res, n_res, md)) < 0) return rc;
        n += rc;
    }
    rc = plot_curves(dir, task, n_models, names, res, n_res);
    if (rc < 0) return rc;
    if (rc == 1) {
        if (md) fprintf(md, "![training curves](training_curves.png)\n\n");
        n++;
    }
    if ((rc = plot_tradeoff(dir, task, n_models, names, res, n_res))) return rc;
    if (md) fprintf(md, "![accuracy vs inference time](tradeoff.png)\n");
    return n + 1;
}
