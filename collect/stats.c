/* Statistics of the noise pass and of the verify report. */
#include "collect.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double collect_percentile(double *v, int n, double p)
{
    if (n < 1) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double pos = p / 100.0 * (n - 1);
    int lo = (int)floor(pos);
    if (lo >= n - 1) return v[n - 1];
    double frac = pos - lo;
    return v[lo] + frac * (v[lo + 1] - v[lo]);
}

double collect_median(double *v, int n)
{
    if (n < 1) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int collect_retime_select(const double *first, const double *lower, int n, double within, char *again)
{
    double fastest = INFINITY;
    for (int i = 0; i < n; i++) fastest = fmin(fastest, first[i]);
    int count = 0;
    for (int i = 0; i < n; i++) count += again[i] = isfinite(first[i]) && lower[i] <= within * fastest;
    if (count < 2) {
        memset(again, 0, (size_t)(n > 0 ? n : 0));
        count = 0;
    }
    return count;
}

/* the fastest entry of a find-db line (lines are written fastest first, but do not rely on it) */
static int line_best(const collect_line *l)
{
    int b = 0;
    for (int i = 1; i < l->n; i++)
        if (l->ms[i] < l->ms[b]) b = i;
    return b;
}

int collect_noise_compute(const collect_file *a, const collect_file *b, collect_noise *out)
{
    memset(out, 0, sizeof *out);
    double *r = malloc(((size_t)a->n + 1) * sizeof *r), *s = malloc(((size_t)a->n + 1) * sizeof *s);
    if (!r || !s) {
        free(r);
        free(s);
        return collect_error(COLLECT_ENOMEM, "noise: out of memory");
    }
    int n = 0, agree = 0;
    for (int i = 0; i < a->n; i++) {
        int j = collect_file_find(b, a->lines[i].key);
        if (j < 0) continue;
        const collect_line *la = &a->lines[i], *lb = &b->lines[j];
        int ba = line_best(la), bb = line_best(lb);
        agree += strcmp(la->names[ba], lb->names[bb]) == 0;
        r[n] = lb->ms[bb] / la->ms[ba];
        s[n] = r[n] >= 1 ? r[n] : 1 / r[n];
        n++;
    }
    if (n == 0) {
        free(r);
        free(s);
        return collect_error(COLLECT_EINVAL, "noise: the two files share no key");
    }
    out->n = n;
    out->agree = (double)agree / n;
    out->ratio_p10 = collect_percentile(r, n, 10);
    out->ratio_p50 = collect_percentile(r, n, 50);
    out->ratio_p90 = collect_percentile(r, n, 90);
    out->noise_ratio = collect_percentile(s, n, 90);
    free(r);
    free(s);
    return COLLECT_OK;
}

int collect_verify_summarize(const collect_verify_row *rows, int n, double noise_ratio, collect_verify_summary *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1) return collect_error(COLLECT_EINVAL, "verify: no problem to summarize");
    if (!(noise_ratio >= 1)) return collect_error(COLLECT_EINVAL, "verify: noise ratio %g is below 1", noise_ratio);
    double *sp = malloc((size_t)n * sizeof *sp);
    if (!sp) return collect_error(COLLECT_ENOMEM, "verify: out of memory");
    double log_sum = 0, list_log = 0, topk_log = 0, vtopk_log = 0, topk_cost = 0, vtopk_cost = 0, find_cost = 0;
    int n_cost = 0;
    out->speedup_worst = INFINITY;
    out->topk_speedup_worst = INFINITY;
    for (int i = 0; i < n; i++) {
        const collect_verify_row *r = &rows[i];
        if (!(r->t_model > 0 && r->t_heur > 0 && r->t_best > 0) ||
            (r->k > 0 && !(r->t_topk > 0 && r->t_vtopk > 0))) {
            free(sp);
            return collect_error(COLLECT_EINVAL, "verify: problem %d has a non-positive time", i);
        }
        double best = fmin(r->t_best, fmin(r->t_model, r->t_heur));
        sp[i] = r->t_heur / r->t_model;
        log_sum += log(sp[i]);
        out->speedup_worst = fmin(out->speedup_worst, sp[i]);
        out->efficiency_mean += best / r->t_model;
        out->heur_efficiency_mean += best / r->t_heur;
        out->share_slower += r->t_model > r->t_heur * noise_ratio;
        out->share_faster += r->t_heur > r->t_model * noise_ratio;
        out->decide_us_mean += r->decide_us;
        out->find_ms_mean += r->find_ms;
        out->n_find += r->find_ms > 0;
        if (r->t_list > 0) {
            out->n_list++;
            out->list_efficiency_mean += fmin(best, r->t_list) / r->t_list;
            list_log += log(r->t_heur / r->t_list);
        }
        if (r->k > 0) {
            double b = fmin(best, fmin(r->t_topk, r->t_vtopk)), s = r->t_heur / r->t_topk;
            out->n_topk++;
            out->topk_efficiency_mean += b / r->t_topk;
            out->vtopk_efficiency_mean += b / r->t_vtopk;
            topk_log += log(s);
            vtopk_log += log(r->t_heur / r->t_vtopk);
            out->topk_speedup_worst = fmin(out->topk_speedup_worst, s);
            out->topk_ms_mean += r->topk_ms;
            out->vtopk_ms_mean += r->vtopk_ms;
            out->share_topk_slower += r->t_topk > r->t_heur * noise_ratio;
            out->share_topk_extra += r->topk_timings > r->k;
            if (r->find_ms > 0) {
                n_cost++;
                topk_cost += r->topk_ms;
                vtopk_cost += r->vtopk_ms;
                find_cost += r->find_ms;
            }
        }
    }
    out->n = n;
    out->speedup_geomean = exp(log_sum / n);
    out->efficiency_mean /= n;
    out->heur_efficiency_mean /= n;
    out->share_slower /= n;
    out->share_faster /= n;
    out->decide_us_mean /= n;
    out->find_ms_mean /= n;
    out->speedup_p10 = collect_percentile(sp, n, 10);
    out->speedup_p50 = collect_percentile(sp, n, 50);
    out->speedup_p90 = collect_percentile(sp, n, 90);
    if (out->n_list) {
        out->list_efficiency_mean /= out->n_list;
        out->list_speedup_geomean = exp(list_log / out->n_list);
    }
    int m = out->n_topk;
    if (m) {
        out->topk_efficiency_mean /= m;
        out->vtopk_efficiency_mean /= m;
        out->topk_speedup_geomean = exp(topk_log / m);
        out->vtopk_speedup_geomean = exp(vtopk_log / m);
        out->topk_ms_mean /= m;
        out->vtopk_ms_mean /= m;
        out->share_topk_slower /= m;
        out->share_topk_extra /= m;
    } else {
        out->topk_speedup_worst = NAN;
    }
    out->topk_find_ratio = n_cost ? topk_cost / find_cost : NAN;
    out->vtopk_find_ratio = n_cost ? vtopk_cost / find_cost : NAN;
    free(sp);
    return COLLECT_OK;
}

/* splitmix64: the bootstrap's draws */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int collect_bootstrap_geomean(const double *x, int n, int resamples, uint64_t seed, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (n < 1 || resamples < 1) return collect_error(COLLECT_EINVAL, "bootstrap: %d values, %d resamples", n, resamples);
    double *lx = malloc((size_t)n * sizeof *lx), *g = malloc((size_t)resamples * sizeof *g);
    if (!lx || !g) {
        free(lx);
        free(g);
        return collect_error(COLLECT_ENOMEM, "bootstrap: out of memory");
    }
    for (int i = 0; i < n; i++) {
        if (!(x[i] > 0)) {
            free(lx);
            free(g);
            return collect_error(COLLECT_EINVAL, "bootstrap: value %d is not positive", i);
        }
        lx[i] = log(x[i]);
    }
    uint64_t s = seed;
    for (int b = 0; b < resamples; b++) {
        double sum = 0;
        /* an index below n from the high bits of a 64-bit draw: the modulo bias is below n / 2^32 */
        for (int i = 0; i < n; i++) sum += lx[(splitmix64(&s) >> 32) % (uint64_t)n];
        g[b] = exp(sum / n);
    }
    *lo = collect_percentile(g, resamples, 2.5);
    *hi = collect_percentile(g, resamples, 97.5);
    free(lx);
    free(g);
    return COLLECT_OK;
}
