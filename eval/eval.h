/* eval: the metrics kernel users care about, computed from predictions and measurements only.
 *
 * Selection (per problem, measured runtimes t (K) with inf = not measured, model scores s (K)):
 *   pred = argmax_k s_k;  top1 = [t_pred == min t];  top5 = [argmin t in the 5 highest scores];
 *   a runtime tie makes every kernel at min t a fastest one (eval_select_hit is the one top-1 rule: the
 *   test metrics, the families' validation during training and gbdt's curve all count with it, and
 *   eval_select_list_hit applies it to a problem's list of candidates);
 *   efficiency = t_min / t_pred, 0 when t_pred = inf;  unmeasured = [t_pred = inf].
 *   Aggregates: mean, median, p10 (10th percentile), min of efficiency.
 *   ndcg1 = mean of NDCG@1 with graded relevance rel_k = t_min / t_k (the efficiency of k, 0 when unmeasured)
 *   and gain 2^rel - 1: the ideal first item has rel 1 (gain 1), so NDCG@1 = 2^efficiency(pred) - 1.
 * Against the vendor's first pick v (a benchmark table's vendor column, rank 0), where v was measured:
 *   speedup = t_v / t_pred (> 1: the pick is faster; 0 when t_pred = inf); speedup_geomean = exp(mean log speedup)
 *   over the problems whose pick was measured; slower = share with speedup < 1 / EVAL_NOISE_RATIO (a pick not
 *   measured included), faster = share with speedup > EVAL_NOISE_RATIO; worst = min speedup. The noise ratio is
 *   the run-to-run spread of a best time (x1.02 on the H100 GEMM table's second pass), so a pick inside it is a tie.
 * Shortlists (timing k candidates once and keeping the fastest, as an autotuner does), k = 1..EVAL_SHORTLIST_MAX:
 *   the efficiency of the fastest among the model's k highest scored plus the vendor's first pick; the vendor's
 *   own first k (ranks 0..k-1); the vendor's whole list.
 * Vendor guard (data_portable_guard: the pick replaces the vendor's only when its score beats the vendor pick's by
 * a margin M): margin_i = s_pick - s_vendor; at M the guarded speedup is speedup_i where margin_i >= M and 1 where
 * the vendor's pick stays (a problem whose pick is the vendor's has margin 0; one without a margin, NaN, keeps its
 * pick: the guard cannot apply); override = share of problems whose pick replaces the vendor's by a positive margin. The curve takes M at the quantiles q = 0, 1/EVAL_GUARD_POINTS, ... of the positive
 * margins, then M = inf (the vendor's pick everywhere).
 * Regression: r2 = 1 - sum (y - f)^2 / sum (y - mean y)^2 of predictions f against targets y.
 * Tuning (per problem, predicted and true sequences of length L):
 *   param_accuracy = mean over positions of exact matches; exact = whole sequence right;
 *   valid = the sequence satisfies the solver's rules (given by the caller).
 *   Where runtimes exist (a benchmark table): efficiency = t_best / t_pred when the predicted configuration was
 *   measured for the problem and is valid, else 0; measured = share of predictions that were measured;
 *   aggregates efficiency_mean and efficiency_p10.
 * Knows nothing of data formats or models: arrays in, numbers out.
 */
#ifndef HEURIST_EVAL_H
#define HEURIST_EVAL_H

#include <stdint.h>

#include "core/core.h"

typedef struct eval_select_metrics {
    int n;
    double top1, top5;
    double efficiency_mean, efficiency_median, efficiency_p10, efficiency_min;
    double unmeasured_rate;
    double ndcg1;      /* mean NDCG@1, above */
} eval_select_metrics;

/* Metrics of one problem. Ties in scores go to the lower kernel index (deterministic). */
int eval_select_argmax(const float *scores, int K);
double eval_select_efficiency(const float *runtime, int K, int pred);
/* The top-1 rule: 1 when kernel pred was measured at the fastest runtime of the problem (runtime (K), inf =
 * not measured; a problem with no measurement has no hit). */
int eval_select_hit(const float *runtime, int K, int pred);
/* Hits over n problems: problem i is row rows[i] of runtime (n_rows, K), scored by scores (n, K); the
 * prediction is eval_select_argmax. */
long eval_select_hits(const float *runtime, int K, const int *rows, const float *scores, int n);
/* The same rule over a candidate list: of n candidates, kernels kern[0..n) scored scores[0..n), whether the
 * highest scored (the first of equal scores) was measured at the fastest runtime (0 for an empty list). */
int eval_select_list_hit(const float *runtime, int K, const int *kern, const float *scores, int n);
/* 1 when a fastest measured kernel is among the k best scored (k = 1: eval_select_hit of the argmax); a runtime tie makes both kernels the fastest,
 * as top1 of docs/contract.md reads ("a runtime tie makes every kernel at that runtime a fastest one"). */
int eval_select_in_topk(const float *runtime, const float *scores, int K, int k);

/* runtime and scores are (n, K); efficiency (n) receives per-problem efficiencies when not NULL. */
int eval_select_compute(const float *runtime, const float *scores, int n, int K, eval_select_metrics *out,
                        double *efficiency);

#define EVAL_NOISE_RATIO 1.02
#define EVAL_SHORTLIST_MAX 8

typedef struct eval_speedup_metrics {
    int n;             /* problems compared: the vendor's first pick measured */
    double geomean;    /* exp(mean log speedup) over those whose pick was measured (NaN: none) */
    double slower, faster; /* shares beyond the noise ratio, of n */
    double worst;      /* min speedup (0: a pick not measured) */
} eval_speedup_metrics;

/* speedup of pick pred over the vendor's first pick `vendor` (runtime (K), inf = not measured): t_vendor / t_pred,
 * 0 when pred was not measured, NaN when the vendor's pick was not (or vendor < 0: no pick). */
double eval_select_speedup(const float *runtime, int pred, int vendor);
/* The aggregates of n speedups (NaN entries left out). */
void eval_speedup_compute(const double *speedup, int n, eval_speedup_metrics *out);
/* One problem's shortlists: runtime and scores (K), vendor_rank (K: the vendor's rank of each kernel, 0 its pick,
 * -1 not listed; NULL: no vendor). model_k[k-1] = efficiency of the fastest of the k best scored (ties to the lower
 * index) plus the vendor's first pick, vendor_k[k-1] that of the vendor's first k, *vendor_list that of its whole
 * list (k = 1..EVAL_SHORTLIST_MAX; 0 where nothing measured is in it). */
void eval_select_shortlist(const float *runtime, const float *scores, const int16_t *vendor_rank, int K, double *model_k,
                           double *vendor_k, double *vendor_list);

/* The pick's margin over the vendor's first pick: scores[pick] - scores[vendor], NaN when vendor < 0 or either score
 * is not finite. */
double eval_select_margin(const float *scores, int pick, int vendor);
#define EVAL_GUARD_POINTS 20
typedef struct eval_guard_point {
    double margin;     /* M (inf: the vendor's pick everywhere) */
    double override;   /* share of the n problems whose pick replaces the vendor's */
    eval_speedup_metrics vs;
} eval_guard_point;
/* The guard's curve (above) of n problems' margins and speedups (NaN entries: no vendor figure, left out of the
 * speedups); out receives at most EVAL_GUARD_POINTS + 1 points, ascending margins. Returns how many. */
int eval_guard_curve(const double *margin, const double *speedup, int n, eval_guard_point *out);

/* NDCG@1 of one problem whose pick has this efficiency: (2^eff - 1) / (2^1 - 1). */
double eval_select_ndcg1(double efficiency);
/* Coefficient of determination of pred against truth (n); NaN when n < 2 or truth is constant. */
double eval_r2(const double *pred, const double *truth, long n);

typedef struct eval_tune_metrics {
    int n;
    double param_accuracy, exact, valid;
    double efficiency_mean, efficiency_p10, measured; /* eval_tune_efficiency; 0 until it runs */
} eval_tune_metrics;

/* pred and truth are (n, L) values; valid (n) is 1 where pred satisfies the rules (NULL: all valid). */
void eval_tune_compute(const int32_t *pred, const int32_t *truth, const unsigned char *valid, int n, int L,
                       eval_tune_metrics *out);
/* The runtime figures of n predictions: t_best (n) each problem's fastest measured time, t_pred (n) the predicted
 * configuration's (inf: not measured), valid (n) as above (NULL: all valid); efficiency (n) receives each problem's
 * when not NULL. Sets out's efficiency_mean, efficiency_p10 and measured. */
void eval_tune_efficiency(const double *t_best, const double *t_pred, const unsigned char *valid, int n,
                          eval_tune_metrics *out, double *efficiency);

/* q-quantile (0..1) of v (n), linear interpolation; sorts a copy. */
double eval_quantile(const double *v, int n, double q);
/* Sorts n doubles ascending, in place. */
void eval_sort_doubles(double *v, long n);
/* Median of n doubles (sorts in place). */
double eval_median_inplace(double *v, int n);

#endif
