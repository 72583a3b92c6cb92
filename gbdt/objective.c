/* Objectives: per-row gradients and hessians of the loss with respect to the raw scores F, the
 * validation metric, and the base score.
 *   L2:       loss = w (F - y)^2 / 2,              g = w (F - y),    h = w
 *   softmax:  loss = -w sum_k y_k log p_k,          g_k = w (p_k - y_k), h_k = w p_k (1 - p_k)
 *   lambdarank: pairwise logistic loss inside each query weighted by |dNDCG| (gbdt.h); each query's rows are
 *             one thread's, in a fixed order, so the gradients do not depend on the thread count
 * where p = softmax(F) and y is one-hot (hard labels) or a probability row (soft labels); with
 * sum_k y_k = 1 the gradient is exact and h_k is the exact diagonal of the Hessian.
 * A softmax leaf's Newton step can overshoot by orders of magnitude where p_k is near 0 or 1 (see
 * gbdt_objective_softmax_steps), so it is capped at the exact minimiser of the leaf's loss. */
#include "gbdt/gbdt_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* largest softmax leaf step before the learning rate: odds change by at most e^10 ~ 2e4 per leaf */
#define GBDT_SOFTMAX_MAX_STEP 10.0
#define M_LOG2E_D 1.44269504088896340736
/* softmax for at most this many classes uses the stack */
#define OBJ_MAX_STACK_CLASSES 256
/* rows per chunk of a softmax leaf's sums (softmax_step_sums): a multiple of 4 */
#define OBJ_STEP_CHUNK 64
/* rows ahead whose gradient softmax_step_sums asks memory for */
#define OBJ_STEP_AHEAD 32

int gbdt_data_check(const gbdt_params *p, const gbdt_data *data, const char *what)
{
    int K = p->objective == GBDT_OBJECTIVE_SOFTMAX ? p->num_class : 1;
    if (!data->x || data->n == 0 || data->d <= 0)
        return hr_error(HR_EINVAL, "gbdt: %s data is empty (n=%zu, d=%d)", what, data->n, data->d);
    if (data->n > (size_t)INT32_MAX) return hr_error(HR_EINVAL, "gbdt: %s data has too many rows", what);
    if (!data->y == !data->y_prob)
        return hr_error(HR_EINVAL, "gbdt: %s data needs exactly one of y and y_prob", what);
    if (data->y_prob && p->objective != GBDT_OBJECTIVE_SOFTMAX)
        return hr_error(HR_EINVAL, "gbdt: %s soft labels need the softmax objective", what);
    for (size_t i = 0; i < data->n; i++) {
        if (data->weight && !(data->weight[i] >= 0 && isfinite(data->weight[i])))
            return hr_error(HR_EINVAL, "gbdt: %s row %zu has weight %g", what, i, data->weight[i]);
        if (data->y_prob) {
            double s = 0;
            for (int k = 0; k < K; k++) {
                float v = data->y_prob[i * (size_t)K + (size_t)k];
                if (!(v >= 0 && v <= 1))
                    return hr_error(HR_EINVAL, "gbdt: %s row %zu soft label %d is %g", what, i, k, v);
                s += v;
            }
            if (fabs(s - 1) > 1e-3)
                return hr_error(HR_EINVAL, "gbdt: %s row %zu soft labels sum to %g, not 1", what, i, s);
        } else if (p->objective == GBDT_OBJECTIVE_SOFTMAX) {
            float c = data->y[i];
            if (!(c >= 0 && c < K) || c != floorf(c))
                return hr_error(HR_EINVAL, "gbdt: %s row %zu label %g is not a class 0..%d", what, i, c, K - 1);
        } else if (!isfinite(data->y[i]) || (p->objective == GBDT_OBJECTIVE_LAMBDARANK && !(data->y[i] >= 0))) {
            return hr_error(HR_EINVAL, "gbdt: %s row %zu label is not finite%s", what, i,
                            p->objective == GBDT_OBJECTIVE_LAMBDARANK ? " and >= 0" : "");
        }
    }
    if (p->objective == GBDT_OBJECTIVE_LAMBDARANK) {
        if (!data->query || !data->n_query || data->query[0] != 0 || data->query[data->n_query] != data->n)
            return hr_error(HR_EINVAL, "gbdt: %s data: lambdarank needs query boundaries from row 0 to row %zu", what,
                            data->n);
        for (size_t q = 0; q < data->n_query; q++)
            if (data->query[q + 1] < data->query[q])
                return hr_error(HR_EINVAL, "gbdt: %s data: query %zu ends before it begins", what, q);
    }
    return HR_OK;
}

static double obj_target(const gbdt_data *data, int K, size_t i, int k)
{
    if (data->y_prob) return data->y_prob[i * (size_t)K + (size_t)k];
    return (int)data->y[i] == k ? 1.0 : 0.0;
}

/* Four doubles as one vector (AVX where the CPU has it: the loops are compiled for both and picked at
 * load time; the same IEEE operations either way). */
typedef double obj_v4 __attribute__((vector_size(32), aligned(8), may_alias));
typedef int64_t obj_i4 __attribute__((vector_size(32), aligned(8), may_alias));

/* rows whose softmax is evaluated together: a multiple of 4; (OBJ_MAX_STACK_CLASSES, OBJ_BLOCK) doubles stay on
 * the stack, and each class's gradients of a block are written as one contiguous run */
#define OBJ_BLOCK 16

#define OBJ_V4(v) ((obj_v4){(v), (v), (v), (v)})
/* lanes i0..i3 of the eight of a then b (GCC's and Clang's builtins differ) */
#ifdef __clang__
#define OBJ_SHUFFLE(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#else
#define OBJ_SHUFFLE(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (obj_i4){i0, i1, i2, i3})
#endif

/* *px = e^x for four values x = *px <= 0: x = j ln2 + r, j an integer, |r| <= ln2 / 2, e^r from its Taylor
 * series to degree 13 (relative error below 1e-16 there) and 2^j from the exponent bits; below x = -700
 * (e^x < 1e-304) it is 0. */
static inline void obj_exp4(obj_v4 *px)
{
    obj_v4 x = *px;
    const obj_v4 lo = OBJ_V4(-700.0), shifter = OBJ_V4(6755399441055744.0);
    obj_i4 under = x < lo;
    x = (obj_v4)((obj_i4)x & ~under) + (obj_v4)((obj_i4)lo & under); /* max(x, -700) */
    /* j = x log2e rounded to the nearest integer: adding 1.5 2^52 leaves it in the low mantissa bits (integer
     * operations only, which every SIMD level has) */
    obj_v4 t = x * OBJ_V4(M_LOG2E_D) + shifter;
    obj_v4 jd = t - shifter;
    obj_i4 j = (obj_i4)t - (obj_i4)shifter;
    obj_v4 r = (x - jd * OBJ_V4(6.93147180369123816490e-01)) - jd * OBJ_V4(1.90821492927058770002e-10);
    obj_v4 e = OBJ_V4(1.0 / 6227020800.0);
    static const double c[13] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                                 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
                                 1.0 / 6.0, 0.5, 1.0, 1.0};
#pragma GCC unroll 13
    for (int i = 0; i < 13; i++) e = e * r + c[i];
    e *= (obj_v4)((j + 1023) << 52);
    *px = (obj_v4)((obj_i4)e & ~under);
}

/* The softmax of rows i0 .. i0 + nb - 1 (nb <= OBJ_BLOCK) as class-major blocks: on return
 * ex[k OBJ_BLOCK + r] inv[r] = p_k of row i0 + r (lanes r >= nb repeat row i0). Each row's values are
 * those of a row-at-a-time softmax: x_k = F_k - max F, e^x_k (obj_exp4), and the sum over classes in class
 * order (as in gbdt_softmax); the rows only share the vector lanes. */
GBDT_SIMD_CLONES static void obj_softmax_block(const double *F, int K, size_t i0, int nb, double *ex, double *inv)
{
    for (int r = 0; r < OBJ_BLOCK; r++) {
        const double *f = F + (i0 + (size_t)(r < nb ? r : 0)) * (size_t)K;
        for (int k = 0; k < K; k++) ex[k * OBJ_BLOCK + r] = f[k];
    }
    /* the row groups of four run side by side: independent chains through obj_exp4 */
    enum { G = OBJ_BLOCK / 4 };
    obj_v4 m[G], s[G];
#pragma GCC unroll 8
    for (int g = 0; g < G; g++) m[g] = *(obj_v4 *)&ex[4 * g], s[g] = OBJ_V4(0.0);
    for (int k = 1; k < K; k++)
#pragma GCC unroll 8
        for (int g = 0; g < G; g++) {
            obj_v4 v = *(obj_v4 *)&ex[k * OBJ_BLOCK + 4 * g];
            obj_i4 gt = v > m[g];
            m[g] = (obj_v4)(((obj_i4)v & gt) | ((obj_i4)m[g] & ~gt));
        }
    for (int k = 0; k < K; k++)
#pragma GCC unroll 8
        for (int g = 0; g < G; g++) {
            obj_v4 *e = (obj_v4 *)&ex[k * OBJ_BLOCK + 4 * g];
            *e -= m[g];
            obj_exp4(e);
            s[g] += *e;
        }
#pragma GCC unroll 8
    for (int g = 0; g < G; g++) *(obj_v4 *)&inv[4 * g] = OBJ_V4(1.0) / s[g];
}

/* vector lanes picked by mask m: a where m, else b */
#define OBJ_PICK(m, a, b) ((obj_v4)(((obj_i4)(a) & (m)) | ((obj_i4)(b) & ~(m))))

/* gh of class k for rows i0 .. i0 + nb - 1 from their softmax (obj_softmax_block): g = w (p - y), h = w p (1 - p),
 * with y from the labels lab (hard) or y_prob (soft, rows of K), w the row weights. With acc non-NULL, lane by
 * lane, acc[0] = max |g|, acc[1] = min h, acc[2] = max h, acc[3] NaN bits of the rows so far (quantized_grad's
 * range; lanes past nb hold row i0's values again, already in it). */
GBDT_SIMD_CLONES static void obj_softmax_gh(const double *ex, const double *inv, const int64_t *lab, const float *y_prob,
                                      const double *w, int K, int k, int nb, double *gh, obj_v4 *acc)
{
    const obj_v4 one = OBJ_V4(1.0);
    const obj_i4 kk = {k, k, k, k}, abs_mask = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    obj_v4 gmax = OBJ_V4(0.0), lo = gmax, hi = gmax;
    obj_i4 nan = {0, 0, 0, 0};
    if (acc) gmax = acc[0], lo = acc[1], hi = acc[2], nan = (obj_i4)acc[3];
    for (int r = 0; r < nb; r += 4) {
        obj_v4 p = *(const obj_v4 *)&ex[k * OBJ_BLOCK + r] * *(const obj_v4 *)&inv[r], y;
        if (y_prob)
            for (int j = 0; j < 4; j++) y[j] = y_prob[(size_t)(r + j < nb ? r + j : 0) * (size_t)K + (size_t)k];
        else
            y = (obj_v4)((obj_i4)one & (*(const obj_i4 *)&lab[r] == kk));
        obj_v4 wv = *(const obj_v4 *)&w[r];
        obj_v4 g = wv * (p - y), h = wv * p * (one - p);
        if (acc) {
            obj_v4 ag = (obj_v4)((obj_i4)g & abs_mask);
            gmax = OBJ_PICK(ag > gmax, ag, gmax);
            lo = OBJ_PICK(h < lo, h, lo);
            hi = OBJ_PICK(h > hi, h, hi);
            nan |= (g != g) | (h != h);
        }
        if (r + 4 <= nb) {
            *(obj_v4 *)&gh[2 * r] = OBJ_SHUFFLE(g, h, 0, 4, 1, 5);
            *(obj_v4 *)&gh[2 * r + 4] = OBJ_SHUFFLE(g, h, 2, 6, 3, 7);
        } else {
            for (int j = 0; r + j < nb; j++) gh[2 * (r + j)] = g[j], gh[2 * (r + j) + 1] = h[j];
        }
    }
    if (acc) acc[0] = gmax, acc[1] = lo, acc[2] = hi, acc[3] = (obj_v4)nan;
}

typedef struct grad_job {
    const gbdt_params *p;
    const gbdt_data *data;
    const double *F;
    double *gh;
    obj_v4 *acc; /* softmax with ranges: (threads, K, 4) obj_softmax_gh's accumulators of each thread; else NULL */
} grad_job;

static void grad_range(void *ctx, size_t begin, size_t end, int tid)
{
    const grad_job *job = ctx;
    const gbdt_data *data = job->data;
    size_t n = data->n;
    if (job->p->objective == GBDT_OBJECTIVE_L2) {
        for (size_t i = begin; i < end; i++) {
            double w = data->weight ? data->weight[i] : 1.0;
            job->gh[2 * i] = w * (job->F[i] - data->y[i]);
            job->gh[2 * i + 1] = w;
        }
        return;
    }
    int K = job->p->num_class;
    double ex[OBJ_MAX_STACK_CLASSES * OBJ_BLOCK], inv[OBJ_BLOCK], w[OBJ_BLOCK];
    int64_t lab[OBJ_BLOCK];
    obj_v4 *acc = job->acc ? job->acc + (size_t)tid * (size_t)K * 4 : NULL;
    for (size_t i0 = begin; i0 < end; i0 += OBJ_BLOCK) {
        int nb = end - i0 < OBJ_BLOCK ? (int)(end - i0) : OBJ_BLOCK;
        for (int r = 0; r < OBJ_BLOCK; r++) {
            size_t i = i0 + (size_t)(r < nb ? r : 0);
            w[r] = data->weight ? data->weight[i] : 1.0;
            lab[r] = data->y_prob ? 0 : (int)data->y[i];
        }
        obj_softmax_block(job->F, K, i0, nb, ex, inv);
        const float *y_prob = data->y_prob ? data->y_prob + i0 * (size_t)K : NULL;
        for (int k = 0; k < K; k++)
            obj_softmax_gh(ex, inv, lab, y_prob, w, K, k, nb, job->gh + 2 * ((size_t)k * n + i0),
                           acc ? acc + 4 * k : NULL);
    }
}

const char *const gbdt_objective_names[] = {"l2", "softmax", "lambdarank", NULL};
const char *const gbdt_histogram_names[] = {"float", "int", NULL};
const int gbdt_histogram_values[] = {GBDT_HISTOGRAM_FLOAT, GBDT_HISTOGRAM_INT};

const char *gbdt_objective_name(gbdt_objective o)
{
    return o >= GBDT_OBJECTIVE_L2 && o <= GBDT_OBJECTIVE_LAMBDARANK ? gbdt_objective_names[o] : "l2";
}

int gbdt_objective_parse(const char *s, gbdt_objective *out)
{
    for (int i = 0; gbdt_objective_names[i]; i++)
        if (!strcmp(s, gbdt_objective_names[i])) {
            *out = (gbdt_objective)i;
            return HR_OK;
        }
    return hr_error(HR_EINVAL, "objective '%s': expected l2, softmax or lambdarank", s);
}

/* ---- LambdaRank ---- */

/* A row of a query by its score, for sorting without a context argument. */
typedef struct obj_ranked {
    double key;
    size_t row;
} obj_ranked;

/* higher key first, ties to the lower row: the order a ranking by F would show */
static int obj_ranked_cmp(const void *a, const void *b)
{
    const obj_ranked *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

typedef struct lambda_job {
    const gbdt_data *data;
    const double *F;
    double *gh;
    obj_ranked *scratch; /* (threads, longest query) */
    size_t longest;
} lambda_job;

static double obj_gain(float y)
{
    return exp2((double)y) - 1.0;
}

static void lambda_range(void *ctx, size_t begin, size_t end, int tid)
{
    const lambda_job *job = ctx;
    const gbdt_data *data = job->data;
    obj_ranked *r = job->scratch + (size_t)tid * job->longest;
    for (size_t q = begin; q < end; q++) {
        size_t b = data->query[q], m = data->query[q + 1] - b;
        for (size_t i = 0; i < m; i++) {
            job->gh[2 * (b + i)] = 0;
            job->gh[2 * (b + i) + 1] = 0;
        }
        if (m < 2) continue;
        /* ideal DCG: the gains in decreasing order */
        for (size_t i = 0; i < m; i++) r[i] = (obj_ranked){data->y[b + i], b + i};
        qsort(r, m, sizeof *r, obj_ranked_cmp);
        double idcg = 0;
        for (size_t i = 0; i < m; i++) idcg += obj_gain((float)r[i].key) / log2(2.0 + (double)i);
        if (!(idcg > 0)) continue;
        /* positions by the current scores: r[pos].row; the discount of a row is read through its position */
        for (size_t i = 0; i < m; i++) r[i] = (obj_ranked){job->F[b + i], b + i};
        qsort(r, m, sizeof *r, obj_ranked_cmp);
        for (size_t pi = 0; pi < m; pi++)
            for (size_t pj = pi + 1; pj < m; pj++) {
                size_t i = r[pi].row, j = r[pj].row;
                float yi = data->y[i], yj = data->y[j];
                if (yi == yj) continue;
                size_t hi = yi > yj ? i : j, lo = yi > yj ? j : i;
                double dndcg = fabs((obj_gain(yi) - obj_gain(yj)) *
                                    (1.0 / log2(2.0 + (double)pi) - 1.0 / log2(2.0 + (double)pj))) / idcg;
                double rho = 1.0 / (1.0 + exp(job->F[hi] - job->F[lo]));
                job->gh[2 * hi] -= dndcg * rho;
                job->gh[2 * lo] += dndcg * rho;
                double h = dndcg * rho * (1.0 - rho);
                job->gh[2 * hi + 1] += h;
                job->gh[2 * lo + 1] += h;
            }
    }
}

static int lambda_gradients(const gbdt_data *data, const double *F, int nthreads, double *gh)
{
    lambda_job job = {data, F, gh, NULL, 1};
    for (size_t q = 0; q < data->n_query; q++)
        if (data->query[q + 1] - data->query[q] > job.longest) job.longest = data->query[q + 1] - data->query[q];
    int threads = hr_threads_resolve(nthreads);
    job.scratch = hr_malloc((size_t)threads * job.longest * sizeof *job.scratch);
    if (!job.scratch) return HR_ENOMEM;
    int rc = hr_parallel_for(threads, data->n_query, lambda_range, &job);
    free(job.scratch);
    return rc;
}

/* 1 - mean NDCG@1 over the queries: the gain of the row of highest F (ties to the first) over the best gain. */
static double lambda_metric(const gbdt_data *data, const double *F)
{
    double sum = 0;
    size_t counted = 0;
    for (size_t q = 0; q < data->n_query; q++) {
        size_t b = data->query[q], e = data->query[q + 1], pick = b;
        if (e == b) continue;
        double best = 0;
        for (size_t i = b; i < e; i++) {
            if (F[i] > F[pick]) pick = i;
            if (obj_gain(data->y[i]) > best) best = obj_gain(data->y[i]);
        }
        sum += best > 0 ? obj_gain(data->y[pick]) / best : 1.0;
        counted++;
    }
    return counted ? 1.0 - sum / (double)counted : 0.0;
}

int gbdt_objective_gradients(const gbdt_params *p, const gbdt_data *data, const double *F, int nthreads,
                             double *gh)
{
    return gbdt_objective_gradients_range(p, data, F, nthreads, gh, NULL);
}

int gbdt_objective_gradients_range(const gbdt_params *p, const gbdt_data *data, const double *F, int nthreads,
                                   double *gh, gbdt_gh_range *ranges)
{
    int softmax = p->objective == GBDT_OBJECTIVE_SOFTMAX, K = softmax ? p->num_class : 1, rc;
    size_t n = data->n;
    if (softmax && K > OBJ_MAX_STACK_CLASSES)
        return hr_error(HR_EINVAL, "gbdt: at most %d classes", OBJ_MAX_STACK_CLASSES);
    if (!softmax || !ranges) {
        grad_job job = {p, data, F, gh, NULL};
        rc = p->objective == GBDT_OBJECTIVE_LAMBDARANK ? lambda_gradients(data, F, nthreads, gh)
                                                       : hr_parallel_for(nthreads, n, grad_range, &job);
        for (int k = 0; rc == HR_OK && ranges && k < K; k++) gbdt_qgrad_range(gh + 2 * (size_t)k * n, n, &ranges[k]);
        return rc;
    }
    /* each thread gathers its rows' ranges; minima and maxima make their combination exact in any order */
    int threads = hr_threads_resolve(nthreads);
    if ((size_t)threads > n) threads = n ? (int)n : 1;
    obj_v4 *acc = hr_malloc((size_t)threads * (size_t)K * 4 * sizeof *acc);
    if (!acc) return HR_ENOMEM;
    for (size_t a = 0; a < (size_t)threads * (size_t)K; a++)
        acc[4 * a] = OBJ_V4(0.0), acc[4 * a + 1] = OBJ_V4(INFINITY), acc[4 * a + 2] = OBJ_V4(-INFINITY),
        acc[4 * a + 3] = OBJ_V4(0.0);
    grad_job job = {p, data, F, gh, acc};
    rc = hr_parallel_for(threads, n, grad_range, &job);
    for (int k = 0; k < K; k++) {
        ranges[k] = GBDT_GH_RANGE_EMPTY;
        for (int t = 0; t < threads; t++) {
            const obj_v4 *a = acc + ((size_t)t * (size_t)K + (size_t)k) * 4;
            obj_i4 nan = (obj_i4)a[3];
            for (int j = 0; j < 4; j++) gbdt_gh_range_add(&ranges[k], a[0][j], a[1][j], a[2][j], nan[j] != 0);
        }
    }
    free(acc);
    return rc;
}

double gbdt_objective_metric(const gbdt_params *p, const gbdt_data *data, const double *F)
{
    if (p->objective == GBDT_OBJECTIVE_LAMBDARANK) return lambda_metric(data, F);
    double loss = 0, wsum = 0;
    int K = p->objective == GBDT_OBJECTIVE_SOFTMAX ? p->num_class : 1;
    double prob[OBJ_MAX_STACK_CLASSES];
    for (size_t i = 0; i < data->n; i++) {
        double w = data->weight ? data->weight[i] : 1.0;
        wsum += w;
        if (K == 1 && p->objective == GBDT_OBJECTIVE_L2) {
            double e = F[i] - data->y[i];
            loss += w * e * e;
            continue;
        }
        gbdt_softmax(F + i * (size_t)K, K, prob);
        for (int k = 0; k < K; k++) {
            double y = obj_target(data, K, i, k);
            /* LightGBM's multi_logloss clamps p at 1e-15 */
            if (y > 0) loss -= w * y * log(prob[k] > 1e-15 ? prob[k] : 1e-15);
        }
    }
    return wsum > 0 ? loss / wsum : 0.0;
}

void gbdt_objective_base_score(const gbdt_params *p, const gbdt_data *data, double *base)
{
    int K = p->objective == GBDT_OBJECTIVE_SOFTMAX ? p->num_class : 1;
    /* a ranking is unchanged by a constant */
    if (p->objective == GBDT_OBJECTIVE_LAMBDARANK) {
        base[0] = 0;
        return;
    }
    if (!p->boost_from_average) {
        for (int k = 0; k < K; k++) base[k] = p->base_score;
        return;
    }
    double wsum = 0;
    for (int k = 0; k < K; k++) base[k] = 0;
    for (size_t i = 0; i < data->n; i++) {
        double w = data->weight ? data->weight[i] : 1.0;
        wsum += w;
        if (p->objective == GBDT_OBJECTIVE_L2)
            base[0] += w * data->y[i];
        else
            for (int k = 0; k < K; k++) base[k] += w * obj_target(data, K, i, k);
    }
    if (wsum <= 0) wsum = 1;
    for (int k = 0; k < K; k++) {
        base[k] /= wsum;
        if (p->objective == GBDT_OBJECTIVE_SOFTMAX) base[k] = log(base[k] > 1e-15 ? base[k] : 1e-15);
    }
}

/* The sums of phi'(delta) and phi''(delta) over a leaf's rows, phi(delta) = sum_i w_i (-y_i delta + log(1 - p_i +
 * p_i e^delta)) (the softmax loss of rows whose class-k score moves by delta), with q_i = p_i e^delta / (1 - p_i +
 * p_i e^delta) the moved probability: sums[0] = sum w (q - y), sums[1] = sum w q (1 - q), each term rounded to
 * the grid 2^ue unless ue is INT_MIN. */
GBDT_SIMD_CLONES static void softmax_step_sums(const gbdt_params *p, const gbdt_data *data, const double *gh, int k,
                                         const int *rows, const double *gl, size_t nrows, double delta, int ue,
                                         double *sums)
{
    int K = p->num_class;
    /* q = p / (p + (1 - p) e^-delta) for delta >= 0, p e^delta / (1 - p + p e^delta) below: never inf/inf */
    double e = exp(-fabs(delta)), s = 0, c = 0;
    double scale = ue == INT_MIN ? 1.0 : ldexp(1.0, -ue), unit = ue == INT_MIN ? 1.0 : ldexp(1.0, ue);
    const obj_v4 one = OBJ_V4(1.0), ev = OBJ_V4(e), sv = OBJ_V4(scale), uv = OBJ_V4(unit);
    const obj_v4 shifter = OBJ_V4(6755399441055744.0);
    /* a chunk of rows at a time: their terms side by side in vectors, then added in row order */
    double g[OBJ_STEP_CHUNK], y[OBJ_STEP_CHUNK], w[OBJ_STEP_CHUNK], ts[OBJ_STEP_CHUNK], tc[OBJ_STEP_CHUNK];
    for (size_t b = 0; b < nrows; b += OBJ_STEP_CHUNK) {
        size_t end = nrows - b < OBJ_STEP_CHUNK ? nrows : b + OBJ_STEP_CHUNK;
        int m = 0;
        for (size_t i = b; i < end; i++) {
            size_t r = (size_t)rows[i];
            /* a leaf's rows are scattered over gh: fetch ahead, or each row waits on memory */
            if (!gl && i + OBJ_STEP_AHEAD < nrows) __builtin_prefetch(gh + 2 * (size_t)rows[i + OBJ_STEP_AHEAD]);
            double wr = data->weight ? data->weight[r] : 1.0;
            if (wr <= 0) continue;
            g[m] = gl ? gl[i] : gh[2 * r], y[m] = obj_target(data, K, r, k), w[m] = wr;
            m++;
        }
        for (int j = m; j < ((m + 3) & ~3); j++) g[j] = 0, y[j] = 0, w[j] = 1;
        for (int j = 0; j < m; j += 4) {
            /* p = g / w + y, as g = w (p - y); g / 1 = g */
            obj_v4 yv = *(obj_v4 *)&y[j], wv = *(obj_v4 *)&w[j], pv = *(obj_v4 *)&g[j];
            if (data->weight) pv /= wv;
            pv += yv;
            /* p is clamped to [0, 1]: the ends give q = 0 and q = 1 */
            obj_i4 zero = pv <= OBJ_V4(0.0), full = pv >= one;
            obj_v4 q;
            if (delta >= 0) q = pv / (pv + (one - pv) * ev);
            else q = pv * ev / (one - pv + pv * ev);
            q = (obj_v4)(((obj_i4)q & ~(zero | full)) | ((obj_i4)one & full & ~zero));
            obj_v4 a = wv * (q - yv), h = wv * q * (one - q);
            if (ue != INT_MIN) { /* gbdt_quant_round_scaled */
                a = (((a * sv) + shifter) - shifter) * uv;
                h = (((h * sv) + shifter) - shifter) * uv;
            }
            *(obj_v4 *)&ts[j] = a, *(obj_v4 *)&tc[j] = h;
        }
        for (int j = 0; j < m; j++) {
            s += ts[j];
            c += tc[j];
        }
    }
    sums[0] = s, sums[1] = c;
}

/* One leaf's search for its step: the Newton step (clamped), the bracket [lo, hi] around the root of phi' and
 * the current point x with phi'(x) (slope) and phi''(x) (curv). */
typedef struct step_state {
    double newton, sign, lo, hi, x, slope, curv;
    int active;
} step_state;

/* The second-order leaf value -T(G)/(H + l2) uses h = p (1 - p), which vanishes where p is near 0 or 1,
 * while the loss there is nearly linear, not quadratic: a leaf holding a few rows of a rare class
 * (p ~ 1e-5, y ~ 0.3) gets a step ~ y/p ~ 1e4 where the exact minimiser is ~ log(y/p) ~ 10, and the
 * rows of other classes that share the leaf are then predicted with certainty; their hessians vanish in
 * turn and training diverges. The step is therefore replaced by the exact minimiser of the convex leaf
 * loss phi (above, plus l1 |delta| + l2 delta^2 / 2) when that lies between 0 and the Newton step (the
 * Newton step overshoots); when the Newton step falls short it is kept, as LightGBM does. Either way the
 * leaf loss decreases for any learning rate in (0, 1]. Steps are also capped at +-GBDT_SOFTMAX_MAX_STEP: a
 * leaf that is pure for class k (minimiser at infinity) and holds rows with tiny hessians would otherwise
 * move its raw score by thousands, which is right for its training rows and ruinous for any new row that
 * lands there. Each leaf's search depends on its own sums only, so searching all leaves in lockstep (one
 * exchange of sums per iteration) gives each the step it would get alone. */
int gbdt_objective_softmax_steps(const gbdt_params *p, const gbdt_data *data, const double *gh, const int *cls,
                                 int L, const int *const *rows, const double *const *gl, const size_t *neg,
                                 const size_t *nrows, const double *newton, int ue, double *steps)
{
    step_state *st = hr_calloc((size_t)L + 1, sizeof *st);
    double *sums = hr_malloc((2 * (size_t)L + 1) * sizeof *sums);
    if (!st || !sums) {
        free(st);
        free(sums);
        return HR_ENOMEM;
    }
    int units[1] = {ue == INT_MIN ? 0 : ue};
    int active = 0, rc = HR_OK;
    for (int l = 0; l < L; l++) {
        double nt = newton[l];
        steps[l] = isfinite(nt) ? nt : 0.0;
        if (!(nt != 0) || !isfinite(nt)) continue;
        /* a leaf whose rows all agree (every y_k = 0, or every y_k = 1) has its minimiser at infinity */
        if (nt > GBDT_SOFTMAX_MAX_STEP) nt = GBDT_SOFTMAX_MAX_STEP;
        if (nt < -GBDT_SOFTMAX_MAX_STEP) nt = -GBDT_SOFTMAX_MAX_STEP;
        steps[l] = nt;
        /* hard labels, no l1 or l2: where every row has y_k = 0 (no g < 0) phi' = sum w q > 0, and where every row
         * has y_k = 1, phi' = sum w (q - 1) < 0, so a step away from those labels can never overshoot: the test
         * below would keep the Newton step without reading the rows */
        if (neg && !data->y_prob && p->lambda_l1 == 0 && p->lambda_l2 == 0 &&
            ((nt < 0 && neg[l] == 0) || (nt > 0 && neg[l] == nrows[l])))
            continue;
        st[l] = (step_state){nt, nt > 0 ? 1.0 : -1.0, 0, nt, nt, 0, 0, 1};
        active++;
    }
    /* phi' and phi'' at each active leaf's x, summed over the processes */
#define STEP_SLOPES()                                                                                           \
    do {                                                                                                        \
        for (int l = 0; l < L; l++) {                                                                           \
            sums[2 * l] = sums[2 * l + 1] = 0;                                                                  \
            if (st[l].active)                                                                                   \
                softmax_step_sums(p, data, gh + 2 * (size_t)cls[l] * data->n, cls[l], rows[l], gl ? gl[l] : NULL, \
                                  nrows[l], st[l].x, ue, sums + 2 * l);                                         \
        }                                                                                                       \
        if (ue != INT_MIN) rc = gbdt_quant_allreduce(p->comm, sums, 2 * (size_t)L, units, 1);                   \
        for (int l = 0; l < L; l++) {                                                                           \
            st[l].curv = sums[2 * l + 1] + p->lambda_l2;                                                        \
            st[l].slope = sums[2 * l] + p->lambda_l2 * st[l].x + p->lambda_l1 * st[l].sign;                     \
        }                                                                                                       \
    } while (0)
    if (active) STEP_SLOPES();
    for (int l = 0; l < L && rc == HR_OK; l++)
        if (st[l].active && st[l].slope * st[l].sign <= 0) { /* the minimiser is at or beyond the Newton step */
            st[l].active = 0;
            active--;
        }
    /* the root of phi' lies strictly between 0 and newton: safeguarded Newton on [lo, hi] */
    for (int it = 0; it < 60 && active && rc == HR_OK; it++) {
        for (int l = 0; l < L; l++) {
            step_state *a = &st[l];
            if (!a->active) continue;
            /* keep the bracket: phi' has the opposite sign of `sign` at lo and the same sign at hi */
            if (a->slope * a->sign > 0) a->hi = a->x;
            else a->lo = a->x;
            double next = a->curv > 0 ? a->x - a->slope / a->curv : NAN;
            if (!(fabs(next - a->lo) < fabs(a->hi - a->lo)) || !(fabs(next - a->hi) < fabs(a->hi - a->lo)))
                next = 0.5 * (a->lo + a->hi); /* Newton left the bracket: bisect */
            int done = fabs(next - a->x) <= 1e-9 * (1.0 + fabs(a->x)) || fabs(a->hi - a->lo) <= 1e-9 * (1.0 + fabs(a->x));
            a->x = next;
            steps[l] = next;
            if (done || it == 59) {
                a->active = 0;
                active--;
            }
        }
        if (active) STEP_SLOPES();
    }
#undef STEP_SLOPES
    free(st);
    free(sums);
    return rc;
}

int gbdt_objective_metric_all(const gbdt_params *p, const gbdt_data *data, const double *F, double *out)
{
    *out = gbdt_objective_metric(p, data, F);
    if (!gbdt_comm_active(p->comm)) return HR_OK;
    /* a process whose loss is not finite (diverged scores) makes the figure NaN on every process, before any
     * rounding to a grid, which needs finite numbers */
    int64_t bad = !isfinite(*out);
    int rc = p->comm->allreduce_i64(p->comm->ctx, &bad, 1, HR_REDUCE_MAX);
    if (rc) return rc;
    if (bad) {
        *out = NAN;
        return HR_OK;
    }
    /* a progress figure, not a decision: the mean over the processes' rows of each share's weighted loss sum,
     * rounded to a grid that the sum over the shares fits (its last bits depend on the number of processes) */
    double ws = 0;
    for (size_t i = 0; i < data->n; i++) ws += data->weight ? data->weight[i] : 1.0;
    double loss = *out * ws, mx = loss > ws ? loss : ws;
    rc = gbdt_quant_allmax(p->comm, &mx, 1);
    if (rc) return rc;
    int units[1] = {gbdt_quant_exponent(mx, gbdt_quant_bits((size_t)p->comm->size))};
    double v[2] = {gbdt_quant_round(loss, units[0]), gbdt_quant_round(ws, units[0])};
    rc = gbdt_quant_allreduce(p->comm, v, 2, units, 1);
    if (rc == HR_OK) *out = v[1] > 0 ? v[0] / v[1] : 0.0;
    return rc;
}
