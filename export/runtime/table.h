/* The runtime of a table model: a problem's values and candidate configurations in, scores and a ranking out.
 *
 * Copied into exported runtimes of gbdt rank models of benchmark tables by section (export/table.c, which
 * writes the shape hm_shape, the sizes HM_NP, HM_NX, HM_NF, HM_NK, the vocabularies and the booster hm_b0_raw
 * before it). The features are data/table_features.h's, copied verbatim before this; as the library does, the
 * pair features read the problem's values back from its float features, so both see the same numbers.
 */
#include <string.h>

#include "data/table_features.h"

/* @section rank */
/* Scores (n) of n candidates kv (n, HM_NK) for the problem pv (HM_NP): the booster's prediction per pair. */
static void hm_table_scores(const double *pv, const double *kv, int n, float *scores)
{
    float x[HM_NF];
    double pr[HM_NP];
    data_table_shape_problem_features(&hm_shape, pv, x);
    data_table_shape_problem_values(&hm_shape, x, pr);
    for (int i = 0; i < n; i++) {
        double raw;
        data_table_shape_pair_features(&hm_shape, pr, kv + (size_t)i * HM_NK, x + HM_NX);
        hm_b0_raw(x, &raw);
        scores[i] = (float)raw;
    }
}

/* @section sort */
/* 1 when candidate a ranks after b: a lower score, or an equal one at a higher index (ties to the first). */
static int hm_rank_after(const float *s, int a, int b)
{
    return s[a] < s[b] || (s[a] == s[b] && a > b);
}

static void hm_rank_sift(const float *s, int *r, int root, int n)
{
    for (;;) {
        int c = 2 * root + 1;
        if (c >= n) return;
        /* a min-heap in ranking order: the root is the candidate that ranks last */
        if (c + 1 < n && hm_rank_after(s, r[c + 1], r[c])) c++;
        if (!hm_rank_after(s, r[c], r[root])) return;
        int t = r[root];
        r[root] = r[c];
        r[c] = t;
        root = c;
    }
}

/* ranking (n): candidate indices best first, by heapsort (no allocation, n log n). */
static void hm_rank_sort(const float *s, int *r, int n)
{
    for (int i = 0; i < n; i++) r[i] = i;
    for (int i = n / 2 - 1; i >= 0; i--) hm_rank_sift(s, r, i, n);
    for (int end = n - 1; end > 0; end--) {
        int t = r[0];
        r[0] = r[end];
        r[end] = t;
        hm_rank_sift(s, r, 0, end);
    }
}
