/* The gbdt runtime: LightGBM's tree traversal over flat per-tree arrays, as gbdt/predict.c decides.
 *
 * Copied into exported gbdt runtimes by section (export/gbdt.c, which writes the arrays) and compiled
 * as it is by tests/test_export_runtime.c, which checks it against gbdt's own prediction. Needs <math.h>.
 */
#include <math.h>

/* @section traversal */
typedef struct hm_trees {
    const short *feat;
    const unsigned char *dt;
    const int *left, *right;
    const double *thr;
    const int *cb, *cw;
} hm_trees;

static int hm_node_count(const int *off, int t)
{
    return off[t + 1] - off[t];
}

/* LightGBM's decision rules: numeric x <= threshold goes left, NaN by the missing type and default
 * direction; categorical int(x) in the node's bitset goes left, NaN and negatives go right. */
static int hm_tree_leaf(const hm_trees *t, const float *x)
{
    int node = 0;
    while (node >= 0) {
        double v = x[t->feat[node]];
        unsigned dt = t->dt[node];
        if (dt & 1u) {
            int go_left = 0;
            if (!isnan(v) && v >= 0 && v < 2147483648.0) {
                unsigned c = (unsigned)(int)v;
                int k = (int)t->thr[node];
                int begin = t->cb[k], words = t->cb[k + 1] - begin;
                if (c / 32u < (unsigned)words) go_left = ((unsigned)t->cw[begin + c / 32u] >> (c % 32u)) & 1u;
            }
            node = go_left ? t->left[node] : t->right[node];
        } else {
            unsigned missing = (dt >> 2) & 3u;
            if (isnan(v) && missing != 2u) v = 0.0;
            if ((missing == 1u && v >= -1e-35 && v <= 1e-35) || (missing == 2u && isnan(v)))
                node = (dt & 2u) ? t->left[node] : t->right[node];
            else
                node = v <= t->thr[node] ? t->left[node] : t->right[node];
        }
    }
    return ~node;
}
