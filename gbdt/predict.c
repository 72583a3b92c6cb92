/* Prediction: LightGBM's decision rules, so that imported and exported models predict identically. */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <string.h>

/* Numeric node: with missing type NaN, NaN takes the default direction; otherwise NaN is read as 0, and
 * with missing type Zero any |x| <= 1e-35 takes the default direction. Else x <= threshold goes left. */
static int tree_decide_numeric(const gbdt_tree *t, int node, double v)
{
    unsigned dt = t->decision_type[node];
    unsigned missing = (dt >> 2) & 3u;
    if (isnan(v) && missing != GBDT_MISSING_NAN) v = 0.0;
    if ((missing == GBDT_MISSING_ZERO && v >= -GBDT_ZERO_THRESHOLD && v <= GBDT_ZERO_THRESHOLD) ||
        (missing == GBDT_MISSING_NAN && isnan(v)))
        return (dt & GBDT_DT_DEFAULT_LEFT) ? t->left_child[node] : t->right_child[node];
    return v <= t->threshold[node] ? t->left_child[node] : t->right_child[node];
}

/* Categorical node: int(x) is looked up in the node's bitset; NaN, negative and unlisted values go right. */
static int tree_decide_categorical(const gbdt_tree *t, int node, double v)
{
    if (isnan(v) || v < 0 || !(v < 2147483648.0)) return t->right_child[node];
    unsigned c = (unsigned)(int)v;
    int k = (int)t->threshold[node];
    int begin = t->cat_boundaries[k], words = t->cat_boundaries[k + 1] - begin;
    if (c / 32u >= (unsigned)words) return t->right_child[node];
    return (t->cat_threshold[begin + c / 32u] >> (c % 32u)) & 1u ? t->left_child[node] : t->right_child[node];
}

int gbdt_tree_predict_leaf(const gbdt_tree *t, const float *x)
{
    if (t->num_leaves <= 1) return 0;
    int node = 0;
    while (node >= 0) {
        double v = x[t->split_feature[node]];
        node = (t->decision_type[node] & GBDT_DT_CATEGORICAL) ? tree_decide_categorical(t, node, v)
                                                               : tree_decide_numeric(t, node, v);
    }
    return ~node;
}

double gbdt_tree_predict(const gbdt_tree *t, const float *x)
{
    return t->leaf_value[gbdt_tree_predict_leaf(t, x)];
}

void gbdt_booster_predict_raw_row(const gbdt_booster *b, const float *x, double *out)
{
    int K = b->num_class;
    memcpy(out, b->base_score, (size_t)K * sizeof *out);
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
