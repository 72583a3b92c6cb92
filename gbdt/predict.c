/* Prediction: LightGBM's decision rules, so that imported and exported models predict identically. A
 * booster's rows are predicted from its packed layout (pack.c) when that covers every tree, else by
 * walking the gbdt_trees (as during training); both give bit-identical scores. */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <string.h>

/* Numeric node: with missing type NaN, NaN takes the default direction; otherwise NaN is read as 0, and
 * with missing type Zero any |x| <= 1e-35 takes the default direction. Else x <= threshold goes left. */
static int tree_goes_left_numeric(const gbdt_tree *t, int node, double v)
{
    unsigned dt = t->decision_type[node];
    unsigned missing = (dt >> 2) & 3u;
    if (isnan(v) && missing != GBDT_MISSING_NAN) v = 0.0;
    if ((missing == GBDT_MISSING_ZERO && v >= -GBDT_ZERO_THRESHOLD && v <= GBDT_ZERO_THRESHOLD) ||
        (missing == GBDT_MISSING_NAN && isnan(v)))
        return (dt & GBDT_DT_DEFAULT_LEFT) != 0;
    return v <= t->threshold[node];
}

/* Categorical node: int(x) is looked up in the node's bitset; NaN, negative and unlisted values go right. */
static int tree_goes_left_categorical(const gbdt_tree *t, int node, double v)
{
    if (isnan(v) || v < 0 || !(v < 2147483648.0)) return 0;
    unsigned c = (unsigned)(int)v;
    int k = (int)t->threshold[node];
    int begin = t->cat_boundaries[k], words = t->cat_boundaries[k + 1] - begin;
    if (c / 32u >= (unsigned)words) return 0;
    return (t->cat_threshold[begin + c / 32u] >> (c % 32u)) & 1u;
}

/* 1 if row x goes to the left child of node, by LightGBM's rules */
static int tree_goes_left(const gbdt_tree *t, int node, const float *x)
{
    double v = x[t->split_feature[node]];
    return (t->decision_type[node] & GBDT_DT_CATEGORICAL) ? tree_goes_left_categorical(t, node, v)
                                                          : tree_goes_left_numeric(t, node, v);
}

int gbdt_tree_predict_leaf(const gbdt_tree *t, const float *x)
{
    if (t->num_leaves <= 1) return 0;
    int node = 0;
    while (node >= 0) node = tree_goes_left(t, node, x) ? t->left_child[node] : t->right_child[node];
    return ~node;
}

double gbdt_tree_predict(const gbdt_tree *t, const float *x)
{
    return t->leaf_value[gbdt_tree_predict_leaf(t, x)];
}

/* A plain numeric split record: x <= threshold goes left, and so does NaN when the record says so,
 * computed with bit operations rather than a branch on the data. */
static inline int packed_goes_left(const gbdt_packed_node *nd, const float *x)
{
    uint32_t w = nd->split.feature;
    float v = x[w & GBDT_PACKED_INDEX];
    return (v <= nd->split.threshold) | (((w & GBDT_PACKED_NAN_LEFT) != 0) & (v != v));
}

/* The child code after split record c of tree t; slow records ask the tree. */
static inline int32_t packed_next(const gbdt_booster *b, int t, int32_t c, const float *x)
{
    const gbdt_packed_node *nd = &b->packed.nodes[c];
    uint32_t w = nd->split.feature;
    int left = (w & GBDT_PACKED_SLOW) ? tree_goes_left(&b->trees[t], (int)(w & GBDT_PACKED_INDEX), x)
                                      : packed_goes_left(nd, x);
    return nd->split.child[!left];
}

/* One step of a lane that may be at its leaf already (c < 0): it then reads record 0 and keeps c, so that
 * lanes advance together without a branch per lane (the selects are masks: compilers turn ?: into jumps). */
static inline int32_t packed_lane_next(const gbdt_booster *b, int t, int32_t c, const float *x)
{
    int32_t done = -(int32_t)(c < 0);
    const gbdt_packed_node *nd = &b->packed.nodes[c & ~done];
    if (nd->split.feature & GBDT_PACKED_SLOW) return done ? c : packed_next(b, t, c, x);
    return (c & done) | (nd->split.child[!packed_goes_left(nd, x)] & ~done);
}

#if defined(__GNUC__)
#define PACKED_PREFETCH(addr) __builtin_prefetch(addr)
#else
#define PACKED_PREFETCH(addr) ((void)0)
#endif

/* Starts loading the first lines of tree t, where its likely paths lie: where a tree lives does not depend
 * on the row, so this runs ahead of the walks. */
static inline void packed_prefetch_tree(const gbdt_packed *p, int t)
{
    int32_t r = p->root[t];
    const gbdt_packed_node *first = &p->nodes[r ^ -(int32_t)(r < 0)]; /* r or ~r */
    for (int q = 0; q < GBDT_PACKED_PREFETCH_LINES; q++) PACKED_PREFETCH(first + 4 * q);
}

/* Trees are walked PACKED_LANES at a time, interleaved, so that their cache misses overlap, while the
 * trees PACKED_AHEAD on are prefetched. Leaf values are still added in tree order, so the sums are
 * bit-identical to one tree after the other. On a 7000-tree model 8 or 16 lanes were slower: lanes idle
 * at their leaf until the deepest walk of the group is done. */
#define PACKED_LANES 4
#define PACKED_AHEAD 16

static void packed_predict_raw_row(const gbdt_booster *b, const float *x, double *out)
{
    const gbdt_packed *p = &b->packed;
    int K = b->num_class, T = p->num_trees, t = 0, k = 0;
    for (int a = 0; a < PACKED_AHEAD && a < T; a++) packed_prefetch_tree(p, a);
    for (; t + PACKED_LANES <= T; t += PACKED_LANES) {
        int32_t c[PACKED_LANES], all = -1;
        for (int l = 0; l < PACKED_LANES; l++) {
            all &= c[l] = p->root[t + l];
            if (t + l + PACKED_AHEAD < T) packed_prefetch_tree(p, t + l + PACKED_AHEAD);
        }
        while (all >= 0) {
            all = -1;
            for (int l = 0; l < PACKED_LANES; l++) all &= c[l] = packed_lane_next(b, t + l, c[l], x);
        }
        for (int l = 0; l < PACKED_LANES; l++) {
            out[k] += p->nodes[~c[l]].leaf.value;
            if (++k == K) k = 0;
        }
    }
    for (; t < T; t++) {
        int32_t c = p->root[t];
        while (c >= 0) c = packed_next(b, t, c, x);
        out[k] += p->nodes[~c].leaf.value;
        if (++k == K) k = 0;
    }
}

void gbdt_booster_predict_raw_row(const gbdt_booster *b, const float *x, double *out)
{
    int K = b->num_class;
    memcpy(out, b->base_score, (size_t)K * sizeof *out);
    if (b->packed.root && b->packed.num_trees == b->num_trees) {
        packed_predict_raw_row(b, x, out);
        return;
    }
    for (int t = 0; t < b->num_trees; t++) out[t % K] += gbdt_tree_predict(&b->trees[t], x);
}

void gbdt_softmax(const double *F, int K, double *p)
{
    double m = F[0];
    for (int k = 1; k < K; k++)
        if (F[k] > m) m = F[k];
    double s = 0;
    for (int k = 0; k < K; k++) s += p[k] = exp(F[k] - m);
    for (int k = 0; k < K; k++) p[k] /= s;
}

void gbdt_booster_predict_row(const gbdt_booster *b, const float *x, double *out)
{
    gbdt_booster_predict_raw_row(b, x, out);
    if (b->params.objective == GBDT_OBJECTIVE_SOFTMAX) gbdt_softmax(out, b->num_class, out);
}

typedef struct predict_job {
    const gbdt_booster *b;
    const float *x;
    int raw;
    double *out;
} predict_job;

static void predict_range(void *ctx, size_t begin, size_t end, int tid)
{
    const predict_job *job = ctx;
    size_t d = (size_t)job->b->num_features, K = (size_t)job->b->num_class;
    for (size_t i = begin; i < end; i++) {
        if (job->raw)
            gbdt_booster_predict_raw_row(job->b, job->x + i * d, job->out + i * K);
        else
            gbdt_booster_predict_row(job->b, job->x + i * d, job->out + i * K);
    }
}

int gbdt_booster_predict(const gbdt_booster *b, const float *x, size_t n, int raw, int num_threads,
                         double *out)
{
    if (!b || (!x && n) || (!out && n)) return hr_error(HR_EINVAL, "gbdt_booster_predict: NULL argument");
    predict_job job = {b, x, raw, out};
    return hr_parallel_for(num_threads, n, predict_range, &job);
}
