/* Leaf-wise (best-first) tree growth, as in LightGBM: every leaf keeps its best split, and the leaf whose
 * split gains most is split next until num_leaves is reached or no split gains more than
 * min_gain_to_split. Rows are kept partitioned by leaf in one array; a split histograms only the smaller
 * child and gets the larger one as parent - smaller. Nodes are numbered in split order with the left
 * child keeping the parent's leaf index and the right child taking the next one (LightGBM's layout). */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


struct gbdt_grower {
    const gbdt_binned *bd;
    const gbdt_params *p;
    int nthreads, max_leaves, cat_cap, max_bins, d;
    size_t total_bins;
    int *rows;               /* (n) rows of the tree, grouped by leaf */
    int *scratch_rows;       /* (n) */
    gbdt_hist_scratch scratch;
    size_t *begin, *count;   /* (max_leaves) a leaf's slice of rows */
    size_t *nz;              /* (max_leaves) the leading rows of a leaf's slice that its histogram sums: all of
                              * them, but with hessian_counts only those whose quantized (g, h) is not (0, 0) */
    int64_t *gcount;         /* (max_leaves) a leaf's rows over every process (count with one process) */
    const hr_comm *comm;     /* the processes sharing the rows, while a tree grows with gbdt_grower_grow_exact */
    const int *ue;           /* (2) the grids of g and h then */
    /* quantized_grad, while a tree grows with gbdt_grower_grow_quant: the rows' codes and their scales;
     * the leaves' histogram buffers then hold one uint64_t a bin, and a search unpacks one feature at a time
     * into its thread's qfloat (a few KB that stay in the first-level cache) */
    const uint16_t *qv;
    const gbdt_qgrad *qlay;
    gbdt_hist_bin **qfloat; /* (nthreads, max_bins) */
    gbdt_split_ctx sc;      /* what the split searches read: params, quantized fields, hessian_counts */
    uint64_t *qsum;         /* (max_leaves) a leaf's summed words */
    double *gord;           /* (n) renew_leaf: the true g of rows[i], kept by the renewal for the leaf steps */
    size_t *neg;            /* (max_leaves) renew_leaf: a leaf's rows with g < 0 */
    int renewed;            /* whether gord holds the last tree's */
    int *depth;              /* (max_leaves) */
    double *sum_g, *sum_h, *out; /* (max_leaves) leaf sums and output before the learning rate */
    int *parent_node, *parent_side; /* (max_leaves) node pointing at the leaf, -1 for the root */
    gbdt_hist_bin **hist;    /* (max_leaves) histogram of a splittable leaf, else NULL */
    gbdt_hist_bin **pool;    /* (max_leaves) free histogram buffers */
    int pool_n, pool_made;
    gbdt_split *best;        /* (max_leaves) */
    gbdt_split *feat;        /* (d) per-feature best during a search */
    int **sort_scratch;      /* (nthreads, max_bins) categorical ordering */
    double **ctr_scratch;    /* (nthreads, max_bins) */
    uint8_t *goes_left;      /* (max_bins) the side of each bin of the split being applied */
    /* the tree being grown */
    int *split_feature, *left_child, *right_child, *cat_begin;
    double *threshold, *split_gain;
    uint8_t *decision_type;
    uint32_t *cat_words;
    int num_cat, cat_words_n, cat_words_cap;
};

static int split_init(gbdt_split *s, int cap)
{
    memset(s, 0, sizeof *s);
    s->gain = -INFINITY;
    s->cat_bins = hr_calloc((size_t)cap, sizeof(int));
    return s->cat_bins ? HR_OK : HR_ENOMEM;
}

static void split_copy(gbdt_split *dst, const gbdt_split *src, int cap)
{
    int *keep = dst->cat_bins;
    *dst = *src;
    dst->cat_bins = keep;
    memcpy(keep, src->cat_bins, (size_t)cap * sizeof(int));
}

void gbdt_grower_free(gbdt_grower *g)
{
    if (!g) return;
    free(g->rows);
    free(g->scratch_rows);
    gbdt_hist_scratch_free(&g->scratch);
    free(g->begin);
    free(g->count);
    free(g->nz);
    free(g->gcount);
    free(g->depth);
    free(g->sum_g);
    free(g->sum_h);
    free(g->out);
    free(g->parent_node);
    free(g->parent_side);
    if (g->hist)
        for (int l = 0; l < g->max_leaves; l++) free(g->hist[l]);
    if (g->pool)
        for (int l = 0; l < g->pool_n; l++) free(g->pool[l]);
    free(g->hist);
    free(g->pool);
    if (g->best)
        for (int l = 0; l < g->max_leaves; l++) free(g->best[l].cat_bins);
    if (g->feat)
        for (int j = 0; j < g->d; j++) free(g->feat[j].cat_bins);
    free(g->best);
    free(g->feat);
    if (g->sort_scratch)
        for (int t = 0; t < g->nthreads; t++) free(g->sort_scratch[t]);
    if (g->ctr_scratch)
        for (int t = 0; t < g->nthreads; t++) free(g->ctr_scratch[t]);
    free(g->sort_scratch);
    free(g->ctr_scratch);
    free(g->goes_left);
    if (g->qfloat)
        for (int t = 0; t < g->nthreads; t++) free(g->qfloat[t]);
    free(g->qfloat);
    free(g->qsum);
    free(g->gord);
    free(g->neg);
    free(g->split_feature);
    free(g->left_child);
    free(g->right_child);
    free(g->cat_begin);
    free(g->threshold);
    free(g->split_gain);
    free(g->decision_type);
    free(g->cat_words);
    free(g);
}

int gbdt_grower_new(const gbdt_binned *bd, const gbdt_params *p, int nthreads, gbdt_grower **out)
{
    *out = NULL;
    gbdt_grower *g = hr_calloc(1, sizeof *g);
    if (!g) return HR_ENOMEM;
    g->bd = bd;
    g->d = bd->d;
    g->p = p;
    g->nthreads = hr_threads_resolve(nthreads);
    g->max_leaves = p->num_leaves;
    g->cat_cap = p->max_cat_threshold > 1 ? p->max_cat_threshold : 1;
    g->total_bins = bd->hist_total;
    for (int j = 0; j < bd->d; j++)
        if (bd->mappers[j].num_bins > g->max_bins) g->max_bins = bd->mappers[j].num_bins;
    size_t n = bd->n + 1, L = (size_t)g->max_leaves;
    int ok = (g->rows = hr_malloc(n * sizeof(int))) && (g->scratch_rows = hr_malloc(n * sizeof(int))) &&
             (gbdt_hist_scratch_init(&g->scratch, bd) == HR_OK) && (g->begin = hr_calloc(L, sizeof(size_t))) &&
             (g->count = hr_calloc(L, sizeof(size_t))) && (g->nz = hr_calloc(L, sizeof(size_t))) &&
             (g->gcount = hr_calloc(L, sizeof(int64_t))) && (g->depth = hr_calloc(L, sizeof(int))) &&
             (g->sum_g = hr_calloc(L, sizeof(double))) && (g->sum_h = hr_calloc(L, sizeof(double))) &&
             (g->out = hr_calloc(L, sizeof(double))) && (g->parent_node = hr_calloc(L, sizeof(int))) &&
             (g->parent_side = hr_calloc(L, sizeof(int))) && (g->hist = hr_calloc(L, sizeof(void *))) &&
             (g->pool = hr_calloc(L, sizeof(void *))) && (g->best = hr_calloc(L, sizeof(gbdt_split))) &&
             (g->feat = hr_calloc((size_t)bd->d, sizeof(gbdt_split))) &&
             (g->sort_scratch = hr_calloc((size_t)g->nthreads, sizeof(int *))) &&
             (g->ctr_scratch = hr_calloc((size_t)g->nthreads, sizeof(double *))) &&
             (g->goes_left = hr_calloc((size_t)g->max_bins + 1, 1)) &&
             (g->split_feature = hr_calloc(L, sizeof(int))) && (g->left_child = hr_calloc(L, sizeof(int))) &&
             (g->right_child = hr_calloc(L, sizeof(int))) && (g->cat_begin = hr_calloc(L + 1, sizeof(int))) &&
             (g->threshold = hr_calloc(L, sizeof(double))) && (g->split_gain = hr_calloc(L, sizeof(double))) &&
             (g->decision_type = hr_calloc(L, 1));
    for (size_t l = 0; ok && l < L; l++) ok = split_init(&g->best[l], g->cat_cap) == HR_OK;
    for (int j = 0; ok && j < bd->d; j++) ok = split_init(&g->feat[j], g->cat_cap) == HR_OK;
    for (int t = 0; ok && t < g->nthreads; t++)
        ok = (g->sort_scratch[t] = hr_malloc((size_t)g->max_bins * sizeof(int))) &&
             (g->ctr_scratch[t] = hr_malloc((size_t)g->max_bins * sizeof(double)));
    if (!ok) {
        gbdt_grower_free(g);
        return HR_ENOMEM;
    }
    g->sc = (gbdt_split_ctx){.p = p, .sort_scratch = g->sort_scratch, .ctr_scratch = g->ctr_scratch};
    *out = g;
    return HR_OK;
}

static gbdt_hist_bin *grower_hist_get(gbdt_grower *g)
{
    if (g->pool_n > 0) return g->pool[--g->pool_n];
    return gbdt_hist_alloc(GBDT_HIST_BYTES(g->total_bins));
}

static void grower_hist_release(gbdt_grower *g, int leaf)
{
    if (g->hist[leaf]) g->pool[g->pool_n++] = g->hist[leaf];
    g->hist[leaf] = NULL;
}

typedef struct find_job {
    gbdt_grower *g;
    const gbdt_hist_bin *hist; /* float; or with g->qv the words, as uint64_t */
    uint64_t total;            /* with g->qv: the leaf's summed words */
    const uint8_t *used;
    double G, H, shift;
    int64_t N;
} find_job;

static void find_range(void *ctx, size_t begin, size_t end, int tid)
{
    const find_job *job = ctx;
    gbdt_grower *g = job->g;
    for (size_t j = begin; j < end; j++) {
        gbdt_split *s = &g->feat[j];
        s->gain = -INFINITY;
        const gbdt_bin_mapper *m = &g->bd->mappers[j];
        if ((job->used && !job->used[j]) || m->trivial) continue;
        size_t o = g->bd->hist_offset[j];
        const gbdt_hist_bin *h = job->hist + o;
        if (g->qv && !m->is_categorical) {
            gbdt_split_find_numeric_words(&g->sc, (const uint64_t *)job->hist + o, m->num_bins, job->total, job->N, job->shift, s);
            s->feature = (int)j;
            continue;
        }
        if (g->qv) {
            gbdt_qhist_unpack_range((const uint64_t *)job->hist + o, (size_t)m->num_bins, g->qlay, g->qfloat[tid]);
            if (g->sc.hcount) {
                double cnt = gbdt_split_count_factor(&g->sc, job->total, job->N);
                for (int b = 0; b < m->num_bins; b++)
                    g->qfloat[tid][b].n = (double)gbdt_split_count(g->qlay, ((const uint64_t *)job->hist)[o + (size_t)b], cnt);
            }
            gbdt_split_find_categorical(&g->sc, g->qfloat[tid], m->num_bins, job->G, job->H, job->N, job->shift, tid, s);
            if (s->gain > -INFINITY) gbdt_split_cat_words((const uint64_t *)job->hist + o, job->total, g->sc.nmask, s);
            s->feature = (int)j;
            continue;
        }
        if (m->is_categorical)
            gbdt_split_find_categorical(&g->sc, h, m->num_bins, job->G, job->H, job->N, job->shift, tid, s);
        else
            gbdt_split_find_numeric(&g->sc, h, m->num_bins, job->G, job->H, job->N, job->shift, s);
        s->feature = (int)j;
    }
}

/* whether a leaf may have children at all: enough rows, hessian and depth left for two */
static int grower_splittable(const gbdt_grower *g, int leaf)
{
    const gbdt_params *p = g->p;
    return g->gcount[leaf] >= 2 * (int64_t)(p->min_data_in_leaf > 1 ? p->min_data_in_leaf : 1) &&
           (p->max_depth <= 0 || g->depth[leaf] < p->max_depth) && g->sum_h[leaf] >= 2 * p->min_sum_hessian_in_leaf;
}

/* Sets best[leaf], releasing the leaf's histogram when it cannot be split any further. */
static int grower_find_best(gbdt_grower *g, int leaf, const uint8_t *used)
{
    const gbdt_params *p = g->p;
    gbdt_split *best = &g->best[leaf];
    best->gain = -INFINITY;
    if (grower_splittable(g, leaf)) {
        double shift = gbdt_leaf_gain(g->sum_g[leaf], g->sum_h[leaf], p->lambda_l1, p->lambda_l2) +
                       p->min_gain_to_split;
        if (g->qv) gbdt_qhist_expand(g->bd, (uint64_t *)g->hist[leaf]);
        find_job job = {g, g->hist[leaf], g->qv ? g->qsum[leaf] : 0, used, g->sum_g[leaf], g->sum_h[leaf], shift, g->gcount[leaf]};
        /* a search over few bins is faster than starting threads */
        int nt = g->total_bins >= 8192 ? g->nthreads : 1;
        int rc = hr_parallel_for(nt, (size_t)g->bd->d, find_range, &job);
        if (rc) return rc;
        for (int j = 0; j < g->bd->d; j++)
            if (g->feat[j].gain > best->gain) split_copy(best, &g->feat[j], g->cat_cap);
    }
    if (best->gain == -INFINITY) grower_hist_release(g, leaf);
    return HR_OK;
}

/* Records the split of `leaf` as node k and partitions its rows: left keeps `leaf`, right is `right`. */
static int grower_apply_split(gbdt_grower *g, int leaf, int right, int k)
{
    const gbdt_split *s = &g->best[leaf];
    const gbdt_bin_mapper *m = &g->bd->mappers[s->feature];
    g->split_feature[k] = s->feature;
    g->split_gain[k] = s->gain;
    g->left_child[k] = ~leaf;
    g->right_child[k] = ~right;
    if (g->parent_node[leaf] >= 0) {
        if (g->parent_side[leaf] == 0)
            g->left_child[g->parent_node[leaf]] = k;
        else
            g->right_child[g->parent_node[leaf]] = k;
    }
    g->parent_node[leaf] = k, g->parent_side[leaf] = 0;
    g->parent_node[right] = k, g->parent_side[right] = 1;
    memset(g->goes_left, 0, (size_t)m->num_bins);
    if (s->is_cat) {
        int maxc = 0;
        for (int i = 0; i < s->num_cat_bins; i++) {
            g->goes_left[s->cat_bins[i]] = 1;
            if (m->category[s->cat_bins[i]] > maxc) maxc = m->category[s->cat_bins[i]];
        }
        int words = maxc / 32 + 1;
        if (g->cat_words_n + words > g->cat_words_cap) {
            int cap = 2 * (g->cat_words_n + words);
            uint32_t *w = realloc(g->cat_words, (size_t)cap * sizeof *w);
            if (!w) return hr_error(HR_ENOMEM, "gbdt: out of memory for a categorical split");
            g->cat_words = w;
            g->cat_words_cap = cap;
        }
        uint32_t *bits = g->cat_words + g->cat_words_n;
        memset(bits, 0, (size_t)words * sizeof *bits);
        for (int i = 0; i < s->num_cat_bins; i++) {
            int c = m->category[s->cat_bins[i]];
            bits[c / 32] |= 1u << (c % 32);
        }
        g->threshold[k] = g->num_cat;
        g->decision_type[k] = GBDT_DT_CATEGORICAL;
        g->cat_begin[g->num_cat] = g->cat_words_n;
        g->cat_words_n += words;
        g->num_cat++;
        g->cat_begin[g->num_cat] = g->cat_words_n;
    } else {
        for (int b = 0; b <= s->threshold_bin; b++) g->goes_left[b] = 1;
        g->goes_left[m->num_bins - 1] = (uint8_t)s->default_left;
        g->threshold[k] = m->upper[s->threshold_bin];
        g->decision_type[k] = (uint8_t)((GBDT_MISSING_NAN << 2) | (s->default_left ? GBDT_DT_DEFAULT_LEFT : 0));
    }
    /* stable partition of the leaf's rows: left ones first, in their original order; the histogrammed rows
     * (the first nz) and the others apart, so that each child's histogrammed rows lead its slice too */
    int *rows = g->rows + g->begin[leaf];
    size_t n = g->count[leaf], nl = 0, nr = 0, nzl, nzr;
    const gbdt_binned *bd = g->bd;
    const void *col = (const uint8_t *)bd->cols + (size_t)s->feature * bd->n * (size_t)bd->bin_bytes;
    gbdt_partition_rows(g->goes_left, col, bd->bin_bytes, rows, 0, g->nz[leaf], g->scratch_rows, &nl, &nr);
    nzl = nl, nzr = nr;
    gbdt_partition_rows(g->goes_left, col, bd->bin_bytes, rows, g->nz[leaf], n, g->scratch_rows, &nl, &nr);
    memcpy(rows + nl, g->scratch_rows, nr * sizeof(int));
    g->begin[right] = g->begin[leaf] + nl;
    g->count[right] = nr;
    g->count[leaf] = nl;
    g->nz[leaf] = nzl;
    g->nz[right] = nzr;
    /* the histograms' counts are every process's rows */
    g->gcount[leaf] = gbdt_comm_active(g->comm) ? s->ln : (int64_t)nl;
    g->gcount[right] = gbdt_comm_active(g->comm) ? s->rn : (int64_t)nr;
    g->depth[right] = ++g->depth[leaf];
    if (g->qv) g->qsum[leaf] = s->lw, g->qsum[right] = s->rw;
    g->sum_g[leaf] = s->lg, g->sum_h[leaf] = s->lh, g->out[leaf] = s->lout;
    g->sum_g[right] = s->rg, g->sum_h[right] = s->rh, g->out[right] = s->rout;
    return HR_OK;
}

static int grower_emit(gbdt_grower *g, const double *gh, int num_leaves, gbdt_tree *out)
{
    int rc = gbdt_tree_alloc(out, num_leaves, g->num_cat, g->cat_words_n);
    if (rc) return rc;
    size_t ni = (size_t)(num_leaves - 1);
    out->shrinkage = g->p->learning_rate;
    memcpy(out->split_feature, g->split_feature, ni * sizeof(int));
    memcpy(out->split_gain, g->split_gain, ni * sizeof(double));
    memcpy(out->threshold, g->threshold, ni * sizeof(double));
    memcpy(out->decision_type, g->decision_type, ni);
    memcpy(out->left_child, g->left_child, ni * sizeof(int));
    memcpy(out->right_child, g->right_child, ni * sizeof(int));
    memcpy(out->cat_boundaries, g->cat_begin, ((size_t)g->num_cat + 1) * sizeof(int));
    if (g->cat_words_n) memcpy(out->cat_threshold, g->cat_words, (size_t)g->cat_words_n * sizeof(uint32_t));
    /* quantized_grad with renew_leaf: each leaf's value from the true sums of its rows' gradients, the even and the
     * odd positions of its rows summed apart (two chains of additions, not one) and the rows' gradients fetched
     * ahead: a leaf's rows ascend with gaps that the hardware prefetcher does not follow */
    g->renewed = g->qv && g->p->renew_leaf;
    for (int l = 0; g->renewed && l < num_leaves; l++) {
        const int *rows = g->rows + g->begin[l];
        double *go = g->gord + g->begin[l];
        size_t cnt = g->count[l], i = 0, neg = 0;
        double G0 = 0, H0 = 0, G1 = 0, H1 = 0;
        for (; i + 1 < cnt; i += 2) {
            if (i + 16 < cnt) __builtin_prefetch(gh + 2 * (size_t)rows[i + 16]);
            if (i + 17 < cnt) __builtin_prefetch(gh + 2 * (size_t)rows[i + 17]);
            G0 += go[i] = gh[2 * (size_t)rows[i]];
            H0 += gh[2 * (size_t)rows[i] + 1];
            G1 += go[i + 1] = gh[2 * (size_t)rows[i + 1]];
            H1 += gh[2 * (size_t)rows[i + 1] + 1];
            neg += (size_t)(go[i] < 0) + (size_t)(go[i + 1] < 0);
        }
        if (i < cnt) {
            G0 += go[i] = gh[2 * (size_t)rows[i]];
            H0 += gh[2 * (size_t)rows[i] + 1];
            neg += (size_t)(go[i] < 0);
        }
        g->neg[l] = neg;
        double G = G0 + G1, H = H0 + H1;
        g->out[l] = gbdt_leaf_output(G, H, g->p->lambda_l1, g->p->lambda_l2);
        g->sum_h[l] = H;
    }
    for (int l = 0; l < num_leaves; l++) {
        out->leaf_value[l] = g->p->learning_rate * g->out[l];
        out->leaf_weight[l] = g->sum_h[l];
        out->leaf_count[l] = (int)g->gcount[l];
    }
    return HR_OK;
}

/* a histogram of this process's rows summed over every process */
static int grower_hist_reduce(const gbdt_grower *g, gbdt_hist_bin *h)
{
    return gbdt_hist_allreduce(g->comm, g->bd, &h, 1, g->ue);
}

/* a histogram of rows[0..nrows) into buf: float (and summed over the processes) or quantized */
static int grower_hist_build(gbdt_grower *g, const double *gh, const int *rows, size_t nrows, const uint8_t *used,
                             gbdt_hist_bin *buf)
{
    if (g->qv) return gbdt_qhist_build(g->bd, rows, nrows, g->qv, g->qlay, g->nthreads, &g->scratch, (uint64_t *)buf);
    int rc = gbdt_hist_build(g->bd, rows, nrows, gh, used, g->nthreads, &g->scratch, buf);
    return rc ? rc : grower_hist_reduce(g, buf);
}

static int grower_grow(gbdt_grower *g, const double *gh, const int *rows, size_t nrows, const uint8_t *used,
                       const void *root, gbdt_tree *out);

int gbdt_grower_grow(gbdt_grower *g, const double *gh, const int *rows, size_t nrows, const uint8_t *used,
                     const gbdt_hist_bin *root, gbdt_tree *out)
{
    return gbdt_grower_grow_exact(g, gh, rows, nrows, used, root, NULL, out);
}

int gbdt_grower_grow_exact(gbdt_grower *g, const double *gh, const int *rows, size_t nrows, const uint8_t *used,
                           const gbdt_hist_bin *root, const int *ue, gbdt_tree *out)
{
    g->ue = ue;
    g->comm = ue ? g->p->comm : NULL;
    g->qv = NULL;
    g->qlay = NULL;
    return grower_grow(g, gh, rows, nrows, used, root, out);
}

int gbdt_grower_grow_quant(gbdt_grower *g, const double *gh, const uint16_t *qc, const gbdt_qgrad *lay,
                           const int *rows, size_t nrows, const uint8_t *used, const uint64_t *root, gbdt_tree *out)
{
    if (!g->qsum && !(g->qsum = hr_calloc((size_t)g->max_leaves, sizeof *g->qsum))) return HR_ENOMEM;
    if (g->p->renew_leaf && !g->gord &&
        (!(g->gord = hr_malloc((g->bd->n + 1) * sizeof *g->gord)) || !(g->neg = hr_calloc((size_t)g->max_leaves, sizeof *g->neg))))
        return HR_ENOMEM;
    if (!g->qfloat) {
        if (!(g->qfloat = hr_calloc((size_t)g->nthreads, sizeof *g->qfloat))) return HR_ENOMEM;
        for (int t = 0; t < g->nthreads; t++)
            if (!(g->qfloat[t] = gbdt_hist_alloc(GBDT_HIST_BYTES(g->max_bins)))) return HR_ENOMEM;
    }
    g->ue = NULL;
    g->comm = NULL;
    g->qv = qc;
    g->qlay = lay;
    /* a constant hessian is in every row's word (its count), zero codes or not */
    g->sc.qlay = lay;
    g->sc.hcount = g->p->hessian_counts && lay->h_bits > 0;
    g->sc.nmask = g->sc.hcount ? ((uint64_t)1 << lay->n_bits) - 1 : 0;
    int rc = grower_grow(g, gh, rows, nrows, used, root, out);
    g->qv = NULL;
    g->qlay = NULL;
    g->sc.qlay = NULL;
    g->sc.hcount = 0;
    g->sc.nmask = 0;
    return rc;
}

static int grower_grow(gbdt_grower *g, const double *gh, const int *rows, size_t nrows, const uint8_t *used,
                       const void *root, gbdt_tree *out)
{
    const gbdt_params *p = g->p;
    const int *ue = g->ue;
    const gbdt_hist_bin *froot = g->qv ? NULL : root;
    memset(out, 0, sizeof *out);
    g->nz[0] = nrows;
    if (g->sc.hcount) { /* the rows whose words add more than a count first, each part in row order */
        size_t a = 0, z = 0;
        for (size_t i = 0; i < nrows; i++) {
            int r = rows[i], keep = g->qv[r] != 0;
            g->rows[a] = r;
            g->scratch_rows[z] = r;
            a += (size_t)keep;
            z += (size_t)(1 - keep);
        }
        memcpy(g->rows + a, g->scratch_rows, z * sizeof(int));
        g->nz[0] = a;
    } else {
        memcpy(g->rows, rows, nrows * sizeof(int));
    }
    for (int l = 0; l < g->max_leaves; l++) grower_hist_release(g, l);
    g->num_cat = 0;
    g->cat_words_n = 0;
    g->cat_begin[0] = 0;
    g->begin[0] = 0;
    g->count[0] = nrows;
    g->depth[0] = 0;
    g->parent_node[0] = -1;
    double G = 0, H = 0;
    if (g->qv) { /* the quantized sums, which the children's sums come from */
        uint64_t w = 0;
        if (root && g->bd->ncols > 0)
            for (size_t b = g->bd->col_offset[0]; b < g->bd->col_offset[0] + (size_t)g->bd->col_nbins[0]; b++)
                w += ((const uint64_t *)root)[b];
        else
            for (size_t i = 0; i < g->nz[0]; i++)
                w += gbdt_qgrad_word(g->qv[g->rows[i]], g->qlay->n_bits, g->qlay->n_bits + g->qlay->h_bits);
        g->qsum[0] = w;
        G = (double)gbdt_qgrad_g(g->qlay, w) * g->qlay->gscale;
        H = (double)gbdt_qgrad_h(g->qlay, w) * g->qlay->hscale;
    } else if (froot && g->bd->ncols > 0) { /* every row is in one bin of any column: sum a column of the root */
        for (size_t b = g->bd->col_offset[0]; b < g->bd->col_offset[0] + (size_t)g->bd->col_nbins[0]; b++) {
            G += froot[b].g;
            H += froot[b].h;
        }
    } else {
        for (size_t i = 0; i < nrows; i++) {
            G += gh[2 * (size_t)rows[i]];
            H += gh[2 * (size_t)rows[i] + 1];
        }
    }
    g->gcount[0] = (int64_t)nrows;
    if (gbdt_comm_active(g->comm)) {
        if (froot && g->bd->ncols > 0) { /* the root histogram is every process's already */
            g->gcount[0] = 0;
            for (size_t b = g->bd->col_offset[0]; b < g->bd->col_offset[0] + (size_t)g->bd->col_nbins[0]; b++)
                g->gcount[0] += (int64_t)froot[b].n;
        } else {
            double ghn[3] = {G, H, (double)nrows};
            int units[3] = {ue[0], ue[1], 0};
            int rc = gbdt_quant_allreduce(g->comm, ghn, 3, units, 3);
            if (rc) return rc;
            G = ghn[0], H = ghn[1], g->gcount[0] = (int64_t)ghn[2];
        }
    }
    g->sum_g[0] = G, g->sum_h[0] = H;
    g->out[0] = gbdt_leaf_output(G, H, p->lambda_l1, p->lambda_l2);
    int rc = HR_OK;
    g->best[0].gain = -INFINITY;
    if (grower_splittable(g, 0)) { /* a root that cannot split (a rare class's, say) needs no histogram */
        if (!(g->hist[0] = grower_hist_get(g))) return HR_ENOMEM;
        if (root)
            memcpy(g->hist[0], root, g->qv ? g->total_bins * sizeof(uint64_t) : GBDT_HIST_BYTES(g->total_bins));
        else
            rc = grower_hist_build(g, gh, g->rows, g->nz[0], used, g->hist[0]);
        if (rc == HR_OK) rc = grower_find_best(g, 0, used);
    }
    int num_leaves = 1;
    while (rc == HR_OK && num_leaves < g->max_leaves) {
        int leaf = -1;
        for (int l = 0; l < num_leaves; l++)
            if (g->best[l].gain > -INFINITY && (leaf < 0 || g->best[l].gain > g->best[leaf].gain)) leaf = l;
        if (leaf < 0) break;
        int right = num_leaves++;
        rc = grower_apply_split(g, leaf, right, right - 1);
        if (rc) break;
        /* the child with fewer rows to histogram; over processes, the one with fewer rows in all */
        int small = g->qv ? (g->nz[leaf] <= g->nz[right] ? leaf : right)
                          : (g->gcount[leaf] <= g->gcount[right] ? leaf : right);
        int large = small == leaf ? right : leaf;
        /* the histograms of children that will never be split are never needed: not after the last
         * split, nor where both children are too small */
        if (num_leaves == g->max_leaves || (!grower_splittable(g, leaf) && !grower_splittable(g, right))) {
            g->best[leaf].gain = g->best[right].gain = -INFINITY;
            grower_hist_release(g, leaf);
            continue;
        }
        gbdt_hist_bin *parent = g->hist[leaf], *buf = grower_hist_get(g);
        if (!buf) {
            rc = HR_ENOMEM;
            break;
        }
        rc = grower_hist_build(g, gh, g->rows + g->begin[small], g->nz[small], used, buf);
        if (rc) {
            free(buf);
            break;
        }
        if (g->qv)
            gbdt_qhist_subtract((uint64_t *)parent, (const uint64_t *)buf, g->bd);
        else
            gbdt_hist_subtract(parent, buf, g->bd, used);
        g->hist[small] = buf;
        g->hist[large] = parent;
        rc = grower_find_best(g, leaf, used);
        if (rc == HR_OK) rc = grower_find_best(g, right, used);
    }
    if (rc == HR_OK) rc = grower_emit(g, gh, num_leaves, out);
    for (int l = 0; l < g->max_leaves; l++) grower_hist_release(g, l);
    return rc;
}

const double *gbdt_grower_leaf_grads(const gbdt_grower *g, int leaf, size_t *neg)
{
    *neg = g->renewed ? g->neg[leaf] : 0;
    return g->renewed ? g->gord + g->begin[leaf] : NULL;
}

const int *gbdt_grower_leaf_rows(const gbdt_grower *g, int leaf, size_t *count)
{
    *count = g->count[leaf];
    return g->rows + g->begin[leaf];
}

void gbdt_grower_leaf_ids(const gbdt_grower *g, int num_leaves, uint8_t *leaf_of)
{
    for (int l = 0; l < num_leaves; l++) {
        const int *rows = g->rows + g->begin[l];
        for (size_t i = 0; i < g->count[l]; i++) leaf_of[rows[i]] = (uint8_t)l;
    }
}

void gbdt_grower_add_scores(const gbdt_grower *g, const gbdt_tree *t, int K, int k, double *F)
{
    for (int l = 0; l < t->num_leaves; l++) {
        const int *rows = g->rows + g->begin[l];
        for (size_t i = 0; i < g->count[l]; i++) F[(size_t)rows[i] * (size_t)K + (size_t)k] += t->leaf_value[l];
    }
}
