/* The gbdt runtime: LightGBM's tree traversal over flat per-tree arrays, as gbdt/predict.c decides (traversal),
 * and the one-record-per-node layout of a table model's trees, walked one step at a time for many rows (flat).
 *
 * Copied into exported gbdt runtimes by section (export/gbdt.c, which writes the arrays) and compiled
 * as it is by tests/test_export_runtime.c, which checks the traversal against gbdt's own prediction (the flat
 * records are checked through whole table models, tests/test_export_table.c). Needs <math.h>.
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

/* @section flat */
/* The trees as flat records, one per split and per leaf, each tree depth first from its root (export/gbdt.c,
 * export_gbdt_flat): a split sends x to kid[0] when x[feat] <= thr and to kid[1] above it, NaN to kid[1] when the
 * feature word's top bit is set (missing type NaN: the default direction; None: where 0 goes); a leaf's kids are
 * the leaf itself, so that `height` steps from any record end on the leaf that a walk from there reaches. thr is
 * the largest float <= the model's double threshold, which decides every float x alike. */
typedef struct hm_flat_node {
    float thr;
    unsigned short feat;   /* the feature (low 15 bits); the top bit: NaN goes right */
    unsigned short height; /* the longest walk from this record to a leaf of its subtree (a leaf: 0) */
    int kid[2];
} hm_flat_node;

/* The record after c for the features x: one step, with no branch on the data. */
static inline int hm_flat_next(const hm_flat_node *nodes, int c, const float *x)
{
    const hm_flat_node *d = &nodes[c];
    unsigned f = d->feat;
    float v = x[f & 0x7fffu];
    return d->kid[(v > d->thr) | ((f >> 15) & (v != v))];
}

/* The same for features x that hold no NaN. */
static inline int hm_flat_next_number(const hm_flat_node *nodes, int c, const float *x)
{
    const hm_flat_node *d = &nodes[c];
    return d->kid[x[d->feat & 0x7fffu] > d->thr];
}
