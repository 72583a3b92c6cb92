/* Selection and tuning metrics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

int eval_select_argmax(const float *scores, int K)
{
    int best = 0;
    for (int k = 1; k < K; k++)
        if (scores[k] > scores[best]) best = k;
    return best;
}

double eval_select_efficiency(const float *runtime, int K, int pred)
{
    float tmin = INFINITY;
    for (int k = 0; k < K; k++)
        if (runtime[k] < tmin) tmin = runtime[k];
    if (!isfinite(runtime[pred]) || !isfinite(tmin)) return 0.0;
    return (double)tmin / (double)runtime[pred];
}

int eval_select_hit(const float *runtime, int K, int pred)
{
    float tmin = INFINITY;
    for (int k = 0; k < K; k++)
        if (runtime[k] < tmin) tmin = runtime[k];
    /* every kernel measured at exactly the fastest runtime is a fastest kernel (the find-db prints runtimes to
     * a few digits, so about 0.3% of gfx90878's problems have two) */
    return isfinite(tmin) && runtime[pred] == tmin;
}

long eval_select_hits(const float *runtime, int K, const int *rows, const float *scores, int n)
{
    long hits = 0;
    for (int i = 0; i < n; i++)
        hits += eval_select_hit(runtime + (size_t)rows[i] * K, K, eval_select_argmax(scores + (size_t)i * K, K));
    return hits;
}

int eval_select_list_hit(const float *runtime, int K, const int *kern, const float *scores, int n)
{
    if (n <= 0) return 0;
    return eval_select_hit(runtime, K, kern[eval_select_argmax(scores, n)]);
}

/* Kernels ranked ahead of kernel j: scored strictly higher, plus equal scores with a lower index (the same
 * tie rule as argmax). */
static int rank_of(const float *scores, int K, int j)
{
    int ahead = 0;
    for (int i = 0; i < K; i++)
        if (scores[i] > scores[j] || (scores[i] == scores[j] && i < j)) ahead++;
    return ahead;
}

int eval_select_in_topk(const float *runtime, const float *scores, int K, int k)
{
    float tmin = INFINITY;
    for (int j = 0; j < K; j++)
        if (runtime[j] < tmin) tmin = runtime[j];
    if (!isfinite(tmin)) return 0;
    /* every kernel tied at the fastest runtime is a fastest kernel (eval_select_hit): the best ranked counts */
    int best_rank = K;
    for (int j = 0; j < K; j++)
        if (runtime[j] == tmin) {
            int r = rank_of(scores, K, j);
            if (r < best_rank) best_rank = r;
        }
    return best_rank < k;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void eval_sort_doubles(double *v, long n)
{
    if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_double);
}

double eval_median_inplace(double *v, int n)
{
    if (n <= 0) return 0;
    eval_sort_doubles(v, n);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double eval_quantile(const double *v, int n, double q)
{
    if (n <= 0) return 0;
    double *c = malloc((size_t)n * sizeof *c);
    if (!c) return NAN;
    memcpy(c, v, (size_t)n * sizeof *c);
    eval_sort_doubles(c, n);
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    double r = c[lo] + (pos - lo) * (c[hi] - c[lo]);
    free(c);
    return r;
}

int eval_select_compute(const float *runtime, const float *scores, int n, int K, eval_select_metrics *out,
                        double *efficiency)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n <= 0) return hr_error(HR_EINVAL, "no test problems to evaluate");
    double *eff = efficiency ? efficiency : malloc((size_t)n * sizeof *eff);
    if (!eff) return hr_error(HR_ENOMEM, "out of memory");
    long top1 = 0, top5 = 0, unmeasured = 0;
    double sum = 0, mn = INFINITY, ndcg = 0;
    for (int i = 0; i < n; i++) {
        const float *t = runtime + (size_t)i * (size_t)K, *s = scores + (size_t)i * (size_t)K;
        int pred = eval_select_argmax(s, K);
        eff[i] = eval_select_efficiency(t, K, pred);
        unmeasured += !isfinite(t[pred]);
        top1 += eval_select_hit(t, K, pred);
        top5 += eval_select_in_topk(t, s, K, 5);
        sum += eff[i];
        ndcg += eval_select_ndcg1(eff[i]);
        if (eff[i] < mn) mn = eff[i];
    }
    out->ndcg1 = ndcg / n;
    out->top1 = (double)top1 / n;
    out->top5 = (double)top5 / n;
    out->unmeasured_rate = (double)unmeasured / n;
    out->efficiency_mean = sum / n;
    out->efficiency_min = mn;
    out->efficiency_p10 = eval_quantile(eff, n, 0.10);
    out->efficiency_median = eval_quantile(eff, n, 0.5);
    if (!efficiency) free(eff);
    return HR_OK;
}

double eval_select_speedup(const float *runtime, int pred, int vendor)
{
    if (vendor < 0 || !isfinite(runtime[vendor])) return NAN;
    if (!isfinite(runtime[pred])) return 0.0;
    return (double)runtime[vendor] / (double)runtime[pred];
}

void eval_speedup_compute(const double *speedup, int n, eval_speedup_metrics *out)
{
    memset(out, 0, sizeof *out);
    double logs = 0, worst = INFINITY;
    long measured = 0, slower = 0, faster = 0;
    for (int i = 0; i < n; i++) {
        double s = speedup[i];
        if (isnan(s)) continue;
        out->n++;
        if (s < worst) worst = s;
        slower += s < 1.0 / EVAL_NOISE_RATIO;
        faster += s > EVAL_NOISE_RATIO;
        if (s > 0) {
            logs += log(s);
            measured++;
        }
    }
    out->geomean = measured ? exp(logs / (double)measured) : NAN;
    out->slower = out->n ? (double)slower / out->n : NAN;
    out->faster = out->n ? (double)faster / out->n : NAN;
    out->worst = out->n ? worst : NAN;
}

double eval_select_margin(const float *scores, int pick, int vendor)
{
    if (vendor < 0 || pick < 0 || !isfinite(scores[vendor]) || !isfinite(scores[pick])) return NAN;
    return (double)scores[pick] - (double)scores[vendor];
}

int eval_guard_curve(const double *margin, const double *speedup, int n, eval_guard_point *out)
{
    double *pos = malloc((size_t)(n > 0 ? n : 1) * sizeof *pos), *sp = malloc((size_t)(n > 0 ? n : 1) * sizeof *sp);
    if (!pos || !sp) {
        free(pos);
        free(sp);
        return 0;
    }
    int np = 0, nout = 0;
    for (int i = 0; i < n; i++)
        if (margin[i] > 0 && !isnan(speedup[i])) pos[np++] = margin[i];
    eval_sort_doubles(pos, np);
    for (int q = 0; q <= EVAL_GUARD_POINTS; q++) {
        /* the q-th quantile of the positive margins (each a margin some problem has), then inf */
        double m = q < EVAL_GUARD_POINTS ? (np ? pos[(long)q * np / EVAL_GUARD_POINTS] : INFINITY) : INFINITY;
        if (nout > 0 && out[nout - 1].margin == m) continue;
        long over = 0;
        for (int i = 0; i < n; i++) {
            /* no margin (the vendor's pick has no score): the guard does not apply, the pick stays */
            int over_i = margin[i] > 0 && margin[i] >= m, keep = isnan(margin[i]) || over_i;
            over += over_i;
            /* else the vendor's pick stays: speedup 1 where the vendor's pick was measured */
            sp[i] = keep || isnan(speedup[i]) ? speedup[i] : 1.0;
        }
        out[nout].margin = m;
        out[nout].override = n ? (double)over / n : NAN;
        eval_speedup_compute(sp, n, &out[nout].vs);
        nout++;
    }
    free(pos);
    free(sp);
    return nout;
}

void eval_select_shortlist(const float *runtime, const float *scores, const int16_t *vendor_rank, int K, double *model_k,
                           double *vendor_k, double *vendor_list)
{
    float tmin = INFINITY, vbest[EVAL_SHORTLIST_MAX], list = INFINITY, first = INFINITY;
    for (int k = 0; k < K; k++)
        if (runtime[k] < tmin) tmin = runtime[k];
    for (int j = 0; j < EVAL_SHORTLIST_MAX; j++) vbest[j] = INFINITY;
    for (int k = 0; vendor_rank && k < K; k++) {
        int r = vendor_rank[k];
        if (r < 0) continue;
        if (runtime[k] < list) list = runtime[k];
        if (r == 0) first = runtime[k];
        for (int j = r; j < EVAL_SHORTLIST_MAX; j++)
            if (runtime[k] < vbest[j]) vbest[j] = runtime[k];
    }
    /* the model's best scored in rank order (rank_of's tie rule: the lower index first), in one pass */
    int top[EVAL_SHORTLIST_MAX], nt = 0;
    for (int k = 0; k < K; k++) {
        int at = nt;
        while (at > 0 && scores[k] > scores[top[at - 1]]) at--;
        if (at >= EVAL_SHORTLIST_MAX) continue;
        if (nt < EVAL_SHORTLIST_MAX) nt++;
        memmove(top + at + 1, top + at, (size_t)(nt - 1 - at) * sizeof *top);
        top[at] = k;
    }
    float fast = first;
    for (int j = 0; j < EVAL_SHORTLIST_MAX; j++) {
        if (j < nt && runtime[top[j]] < fast) fast = runtime[top[j]];
        model_k[j] = isfinite(fast) && isfinite(tmin) ? (double)tmin / fast : 0.0;
        vendor_k[j] = isfinite(vbest[j]) ? (double)tmin / vbest[j] : 0.0;
    }
    *vendor_list = isfinite(list) ? (double)tmin / list : 0.0;
}

double eval_select_ndcg1(double efficiency)
{
    return exp2(efficiency) - 1.0;
}

double eval_r2(const double *pred, const double *truth, long n)
{
    if (n < 2) return NAN;
    double mean = 0;
    for (long i = 0; i < n; i++) mean += truth[i];
    mean /= (double)n;
    double res = 0, tot = 0;
    for (long i = 0; i < n; i++) {
        res += (truth[i] - pred[i]) * (truth[i] - pred[i]);
        tot += (truth[i] - mean) * (truth[i] - mean);
    }
    return tot > 0 ? 1.0 - res / tot : NAN;
}

void eval_tune_compute(const int32_t *pred, const int32_t *truth, const unsigned char *valid, int n, int L,
                       eval_tune_metrics *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n <= 0 || L <= 0) return;
    long right = 0, exact = 0, ok = 0;
    for (int i = 0; i < n; i++) {
        int all = 1;
        for (int j = 0; j < L; j++) {
            int r = pred[(size_t)i * L + j] == truth[(size_t)i * L + j];
            right += r;
            all &= r;
        }
        exact += all;
        ok += valid ? valid[i] != 0 : 1;
    }
    out->param_accuracy = (double)right / ((double)n * L);
    out->exact = (double)exact / n;
    out->valid = (double)ok / n;
}

void eval_tune_efficiency(const double *t_best, const double *t_pred, const unsigned char *valid, int n,
                          eval_tune_metrics *out, double *efficiency)
{
    out->efficiency_mean = out->efficiency_p10 = out->measured = 0.0;
    if (n <= 0) return;
    double *e = efficiency ? efficiency : hr_malloc((size_t)n * sizeof *e);
    if (!e) return;
    double sum = 0.0;
    long measured = 0;
    for (int i = 0; i < n; i++) {
        int m = isfinite(t_pred[i]) && t_pred[i] > 0;
        measured += m;
        e[i] = m && (!valid || valid[i]) ? t_best[i] / t_pred[i] : 0.0;
        sum += e[i];
    }
    out->efficiency_mean = sum / n;
    out->efficiency_p10 = eval_quantile(e, n, 0.10);
    out->measured = (double)measured / n;
    if (e != efficiency) free(e);
}
