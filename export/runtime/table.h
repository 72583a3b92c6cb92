/* The runtime of a table model: a problem's values and candidate configurations in, scores and a ranking out.
 *
 * Copied into exported runtimes of gbdt rank models of benchmark tables by section (export/table.c, which
 * writes the shape hm_shape, the sizes HM_NP, HM_NX, HM_NF, HM_NK, the vocabularies and the booster before it:
 * its flat records for rank_flat, or hm_b0_raw for rank where a tree has splits the records do not hold). The
 * features are data/table_features.h's, copied verbatim before this; as the library does, the pair features read
 * the problem's values back from its float features, so both see the same numbers.
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

/* @section rank_flat */
/* Candidates are scored HM_BLOCK at a time: their features (HM_BLOCK, HM_NF) on the stack, each tree walked for
 * all of them in lockstep (independent walks that the processor overlaps, over a tree that stays in cache); a
 * block of m < HM_BLOCK walks HM_BLOCK / m trees at once. 32 at most, fewer where the features would pass 32 KB
 * of stack (wide one-hots). */
#define HM_BLOCK_FIT (8192 / HM_NF)
#define HM_BLOCK (HM_BLOCK_FIT < 1 ? 1 : HM_BLOCK_FIT > 32 ? 32 : HM_BLOCK_FIT)

/* Scores (n) of n candidates kv (n, HM_NK) for the problem pv (HM_NP): the booster's prediction per pair, its
 * leaf values added in tree order as the library does, from the pair features some split reads. Where no feature
 * of a block is NaN, the walk skips the NaN test. */
static void hm_table_scores(const double *pv, const double *kv, int n, float *scores)
{
    float x[HM_BLOCK][HM_NF];
    double pr[HM_NP], acc[HM_BLOCK];
    int at[HM_BLOCK];
    data_table_shape_problem_features(&hm_shape, pv, x[0]);
    data_table_shape_problem_values(&hm_shape, x[0], pr);
    for (int b = 0; b < n; b += HM_BLOCK) {
        const int m = n - b < HM_BLOCK ? n - b : HM_BLOCK;
        for (int j = 0; j < m; j++) {
            if (j) memcpy(x[j], x[0], sizeof(float) * HM_NX);
            data_table_shape_pair_features_needed(&hm_shape, pr, kv + (size_t)(b + j) * HM_NK, hm_flat_used + HM_NX,
                                                  x[j] + HM_NX);
            acc[j] = hm_flat_base;
        }
        int nan = 0;
        for (int j = 0; j < m; j++)
            for (int f = 0; f < HM_NF; f++) nan |= x[j][f] != x[j][f];
        /* g trees at a time, so that a small block (the guard's few candidates) still has HM_BLOCK walks in
         * flight; each walk takes the group's tallest height, a leaf stepping onto itself */
        const int g = HM_BLOCK / m;
        for (int t = 0; t < HM_FLAT_TREES; t += g) {
            const int gt = HM_FLAT_TREES - t < g ? HM_FLAT_TREES - t : g;
            int h = 0;
            for (int q = 0; q < gt; q++) {
                const int root = hm_flat_root[t + q];
                if (hm_flat[root].height > h) h = hm_flat[root].height;
                for (int j = 0; j < m; j++) at[q * m + j] = root;
            }
            for (int s = h; s > 0; s--) {
                if (nan)
                    for (int q = 0; q < gt; q++)
                        for (int j = 0; j < m; j++) at[q * m + j] = hm_flat_next(hm_flat, at[q * m + j], x[j]);
                else
                    for (int q = 0; q < gt; q++)
                        for (int j = 0; j < m; j++) at[q * m + j] = hm_flat_next_number(hm_flat, at[q * m + j], x[j]);
            }
            /* leaf values in tree order, as the library adds them */
            for (int q = 0; q < gt; q++)
                for (int j = 0; j < m; j++) acc[j] += hm_flat_value[at[q * m + j]];
        }
        for (int j = 0; j < m; j++) scores[b + j] = (float)acc[j];
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

/* Up to this many candidates are ranked by insertion into sorted keys on the stack (each key's move a comparison
 * of integers, the one unpredictable branch per candidate where it stops); more by heapsort (n log n). */
#define HM_RANK_SMALL 128

/* Candidate i's sort key, in the ranking's order: the score's bits made to compare as unsigned integers (the higher
 * score, the smaller key), then the index (ties to the first). s + 0.0f makes -0 and +0 one score. */
static unsigned long long hm_rank_key(const float *s, int i)
{
    float f = s[i] + 0.0f;
    unsigned u;
    memcpy(&u, &f, sizeof u);
    u = (u >> 31) ? ~u : u | 0x80000000u; /* increasing with the score */
    return (unsigned long long)(~u) << 32 | (unsigned)i;
}

/* ranking (n): candidate indices best first, ties to the lower index. No allocation. */
static void hm_rank_sort(const float *s, int *r, int n)
{
    if (n <= HM_RANK_SMALL) {
        unsigned long long key[HM_RANK_SMALL];
        for (int i = 0; i < n; i++) {
            unsigned long long k = hm_rank_key(s, i);
            int j = i;
            for (; j > 0 && key[j - 1] > k; j--) key[j] = key[j - 1];
            key[j] = k;
        }
        for (int i = 0; i < n; i++) r[i] = (int)(unsigned)key[i];
        return;
    }
    for (int i = 0; i < n; i++) r[i] = i;
    for (int i = n / 2 - 1; i >= 0; i--) hm_rank_sift(s, r, i, n);
    for (int end = n - 1; end > 0; end--) {
        int t = r[0];
        r[0] = r[end];
        r[end] = t;
        hm_rank_sift(s, r, 0, end);
    }
}

/* @section vendor */
/* The ranking under the vendor guard (data_portable_guard, with HM_GUARD_TOP and HM_GUARD_MARGIN written before
 * this section). With HM_GUARD_TOP > 0 and the vendor's first pick present, the guard scores every candidate
 * outside the vendor's first HM_GUARD_TOP -INFINITY whatever the model says, so only those are scored: their
 * configurations copied into a block on the stack. A candidate's score depends on its own configuration alone, so
 * the scores, the pick and the ranking are those of scoring all n. Where the block cannot hold the listed
 * candidates (places repeated in vendor_rank, or HM_GUARD_TOP past HM_GUARD_ROWS), all n are scored. */
#define HM_GUARD_ROWS (HM_GUARD_TOP < 1 ? 1 : HM_GUARD_TOP > 64 ? 64 : HM_GUARD_TOP)

/* ranking (n) of the scores s under the guard: the m listed candidates (listed (m), increasing indices) by their
 * sorted keys (m), merged with the others, every one -INFINITY and so in index order. hm_rank_sort's order, that
 * of the keys, wherever no score is NaN (past HM_RANK_SMALL candidates its heapsort places a NaN otherwise). */
static void hm_rank_merge(const float *s, const int *listed, const unsigned long long *key, int m, int *r, int n)
{
    int a = 0, l = 0, o = 0;
    for (int i = 0; i < n; i++) {
        if (l < m && listed[l] == i) {
            l++;
            continue;
        }
        const unsigned long long k = hm_rank_key(s, i);
        while (a < m && key[a] < k) r[o++] = (int)(unsigned)key[a++];
        r[o++] = i;
    }
    while (a < m) r[o++] = (int)(unsigned)key[a++];
}

static void hm_rank_vendor_scores(const double *pv, const double *kv, int n, const int16_t *vendor_rank,
                                  float *scores, int *ranking)
{
    double block[HM_GUARD_ROWS * HM_NK]; /* (m, HM_NK): the listed candidates' configurations */
    float s[HM_GUARD_ROWS];
    int listed[HM_GUARD_ROWS], vendor = -1, m = 0;
    for (int k = 0; vendor_rank && k < n && vendor < 0; k++)
        if (vendor_rank[k] == 0) vendor = k;
    for (int k = 0; vendor >= 0 && HM_GUARD_TOP > 0 && k < n; k++) {
        if (vendor_rank[k] < 0 || vendor_rank[k] >= HM_GUARD_TOP) continue;
        if (m == HM_GUARD_ROWS) {
            m = -1;
            break;
        }
        memcpy(block + (size_t)m * HM_NK, kv + (size_t)k * HM_NK, sizeof(double) * HM_NK);
        listed[m++] = k;
    }
    if (vendor < 0 || HM_GUARD_TOP <= 0 || m < 0) {
        hm_table_scores(pv, kv, n, scores);
        data_portable_guard(scores, n, vendor_rank, HM_GUARD_TOP, HM_GUARD_MARGIN);
        if (ranking) hm_rank_sort(scores, ranking, n);
        return;
    }
    hm_table_scores(pv, block, m, s);
    for (int k = 0; k < n; k++) scores[k] = -INFINITY;
    for (int j = 0; j < m; j++) scores[listed[j]] = s[j];
    data_portable_guard(scores, n, vendor_rank, HM_GUARD_TOP, HM_GUARD_MARGIN);
    if (!ranking) return;
    unsigned long long key[HM_GUARD_ROWS];
    int nan = 0;
    for (int j = 0; j < m; j++) {
        const unsigned long long k = hm_rank_key(scores, listed[j]);
        int i = j;
        for (; i > 0 && key[i - 1] > k; i--) key[i] = key[i - 1];
        key[i] = k;
        nan |= scores[listed[j]] != scores[listed[j]];
    }
    if (nan)
        hm_rank_sort(scores, ranking, n);
    else
        hm_rank_merge(scores, listed, key, m, ranking, n);
}
