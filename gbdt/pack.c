/* The inference layout (gbdt_packed): every tree's nodes and leaves as 16-byte records in one array, so
 * that predicting a row touches a line or two per tree. The decisions are exactly those of the gbdt_trees:
 * a double threshold thr becomes the largest float f <= thr, and for a float x, (double)x <= thr holds
 * exactly when x <= f (x <= f <= thr; and x <= thr makes x a float below thr, so x <= f). */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include "gbdt/gbdt_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define PACK_HUGE_PAGE ((size_t)2 << 20)

void gbdt_packed_free(gbdt_packed *p)
{
    free(p->block);
    memset(p, 0, sizeof *p);
}

/* A zeroed block of `bytes`; blocks of a megabyte or more are aligned to and padded to 2 MB huge pages
 * and advised to use them (the walk jumps between trees megabytes apart, and each 4 KB page would take
 * its own TLB entry). Freed with free(). */
static void *pack_block_alloc(size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= PACK_HUGE_PAGE / 2) {
        void *p;
        size_t padded = (bytes + PACK_HUGE_PAGE - 1) / PACK_HUGE_PAGE * PACK_HUGE_PAGE;
        if (posix_memalign(&p, PACK_HUGE_PAGE, padded) != 0) return NULL;
        madvise(p, padded, MADV_HUGEPAGE); /* advice only: without it the block is merely slower */
        memset(p, 0, padded);
        return p;
    }
#endif
    return hr_calloc(1, bytes);
}

/* The largest float <= thr (thr not NaN), with thresholds beyond the float range clamped by hand: a
 * conversion out of range is undefined behaviour in C. */
float gbdt_threshold_float(double thr)
{
    if (thr >= FLT_MAX) return thr == INFINITY ? INFINITY : FLT_MAX;
    if (thr < -FLT_MAX) return -INFINITY;
    float f = (float)thr;
    if ((double)f > thr) f = nextafterf(f, -INFINITY);
    return f;
}

/* The feature word of node i: plain numeric nodes decide on the packed record alone; anything else
 * (categorical, missing type Zero, an unknown missing type, a feature index beyond the flag bits) defers
 * to the tree, which the slow word indexes. */
static uint32_t pack_feature_word(const gbdt_tree *t, int i)
{
    unsigned dt = t->decision_type[i], missing = (dt >> 2) & 3u;
    int f = t->split_feature[i];
    double thr = t->threshold[i];
    if ((dt & GBDT_DT_CATEGORICAL) || (missing != GBDT_MISSING_NONE && missing != GBDT_MISSING_NAN) ||
        isnan(thr) || f < 0 || (uint32_t)f > GBDT_PACKED_INDEX)
        return GBDT_PACKED_SLOW | (uint32_t)i;
    /* missing type None reads NaN as 0; type NaN sends it the default way */
    int nan_left = missing == GBDT_MISSING_NONE ? 0.0 <= thr : (dt & GBDT_DT_DEFAULT_LEFT) != 0;
    return (uint32_t)f | (nan_left ? GBDT_PACKED_NAN_LEFT : 0u);
}

/* Per-tree scratch, sized for the largest tree. */
typedef struct pack_scratch {
    int *stack, *order; /* (2 L) child codes to visit, (L) internal nodes in a depth-first order */
    int *pos_node, *pos_leaf; /* (L) record of each internal node / leaf, from the tree's first record */
    double *rows;       /* (L) training rows that reached each internal node */
} pack_scratch;

/* Training rows that reached child code c (leaf_count for leaves). */
static double pack_rows(const gbdt_tree *t, const pack_scratch *s, int c)
{
    return c >= 0 ? s->rows[c] : (double)t->leaf_count[~c];
}

/* Places tree t's nodes and leaves depth first, visiting first the child that saw more training rows
 * (ties, and models without counts, go left first), so that the likelier path runs through neighbours.
 * Fills s->pos_node and s->pos_leaf; returns the records used (2 L - 1). */
static int pack_order(const gbdt_tree *t, pack_scratch *s)
{
    int n_int = t->num_leaves - 1, top = 0, next = 0;
    if (n_int > 0) {
        /* any depth-first order lists parents before children: accumulate the row counts backwards */
        s->stack[top++] = 0;
        while (top > 0) {
            int i = s->stack[--top];
            s->order[next++] = i;
            if (t->right_child[i] >= 0) s->stack[top++] = t->right_child[i];
            if (t->left_child[i] >= 0) s->stack[top++] = t->left_child[i];
        }
        HR_ASSERT(next == n_int);
        for (int j = n_int - 1; j >= 0; j--) {
            int i = s->order[j];
            s->rows[i] = pack_rows(t, s, t->left_child[i]) + pack_rows(t, s, t->right_child[i]);
        }
    }
    top = next = 0;
    s->stack[top++] = n_int > 0 ? 0 : ~0;
    while (top > 0) {
        int c = s->stack[--top];
        if (c < 0) {
            s->pos_leaf[~c] = next++;
            continue;
        }
        s->pos_node[c] = next++;
        int kids[2] = {t->left_child[c], t->right_child[c]};
        int first = pack_rows(t, s, kids[1]) > pack_rows(t, s, kids[0]); /* pushed last, popped next */
        s->stack[top++] = kids[!first];
        s->stack[top++] = kids[first];
    }
    HR_ASSERT(next == 2 * n_int + 1);
    return next;
}

/* Packs tree t into out[base ..); returns its root code. */
static int32_t pack_tree(const gbdt_tree *t, int32_t base, pack_scratch *s, gbdt_packed_node *out)
{
    pack_order(t, s);
    for (int i = 0; i < t->num_leaves - 1; i++) {
        gbdt_packed_node *nd = &out[base + s->pos_node[i]];
        int kids[2] = {t->left_child[i], t->right_child[i]};
        for (int k = 0; k < 2; k++)
            nd->split.child[k] = kids[k] >= 0 ? base + s->pos_node[kids[k]] : ~(base + s->pos_leaf[~kids[k]]);
        nd->split.feature = pack_feature_word(t, i);
        nd->split.threshold = (nd->split.feature & GBDT_PACKED_SLOW) ? 0.0f : gbdt_threshold_float(t->threshold[i]);
    }
    for (int l = 0; l < t->num_leaves; l++) out[base + s->pos_leaf[l]].leaf.value = t->leaf_value[l];
    return t->num_leaves > 1 ? base + s->pos_node[0] : ~(base + s->pos_leaf[0]);
}

/* records of a tree of L leaves, padded so that the next tree starts on a cache line */
#define PACK_LINE_RECORDS 4
static size_t pack_tree_records(int L)
{
    return ((size_t)2 * (size_t)L - 1 + PACK_LINE_RECORDS - 1) / PACK_LINE_RECORDS * PACK_LINE_RECORDS;
}

int gbdt_booster_pack(gbdt_booster *b)
{
    gbdt_packed_free(&b->packed);
    /* the line of record 0, and spare lines that prefetching past the last tree's start may touch */
    size_t records = (size_t)PACK_LINE_RECORDS * GBDT_PACKED_PREFETCH_LINES;
    int max_leaves = 1;
    for (int t = 0; t < b->num_trees; t++) {
        int L = b->trees[t].num_leaves;
        records += pack_tree_records(L);
        if (L > max_leaves) max_leaves = L;
    }
    /* child codes are int32 and slow words hold node indices: beyond that, predict walks the trees */
    if (b->num_trees == 0 || records > INT32_MAX || (uint32_t)max_leaves > GBDT_PACKED_INDEX) return HR_OK;
    size_t node_bytes = records * sizeof(gbdt_packed_node);
    gbdt_packed p = {0};
    p.block = pack_block_alloc(node_bytes + (size_t)b->num_trees * sizeof(int32_t));
    size_t m = (size_t)max_leaves;
    pack_scratch s = {hr_malloc(2 * m * sizeof(int)), hr_malloc(m * sizeof(int)), hr_malloc(m * sizeof(int)),
                      hr_malloc(m * sizeof(int)), hr_malloc(m * sizeof(double))};
    int rc = p.block && s.stack && s.order && s.pos_node && s.pos_leaf && s.rows
                 ? HR_OK
                 : hr_error(HR_ENOMEM, "gbdt: out of memory packing %d trees", b->num_trees);
    if (rc == HR_OK) {
        p.nodes = p.block;
        p.root = (int32_t *)((char *)p.block + node_bytes);
        /* record 0: a split on feature 0 that leads nowhere, read only by lanes already at a leaf */
        p.nodes[0].split.child[0] = p.nodes[0].split.child[1] = ~0;
        int32_t base = PACK_LINE_RECORDS;
        for (int t = 0; t < b->num_trees; t++) {
            p.root[t] = pack_tree(&b->trees[t], base, &s, p.nodes);
            base += (int32_t)pack_tree_records(b->trees[t].num_leaves);
        }
        p.num_trees = b->num_trees;
        b->packed = p;
    } else {
        gbdt_packed_free(&p);
    }
    free(s.stack);
    free(s.order);
    free(s.pos_node);
    free(s.pos_leaf);
    free(s.rows);
    return rc;
}
