/* gbdt internals shared by the files of this folder only. */
#ifndef HEURIST_GBDT_INTERNAL_H
#define HEURIST_GBDT_INTERNAL_H

#include <math.h>

#include "gbdt/gbdt.h"

#define GBDT_DT_CATEGORICAL 1u
#define GBDT_DT_DEFAULT_LEFT 2u
#define GBDT_MISSING_NONE 0u
#define GBDT_MISSING_ZERO 1u
#define GBDT_MISSING_NAN 2u
#define GBDT_ZERO_THRESHOLD 1e-35
/* categories at or above this are never binned on their own (they share the always-right "other" bin) */
#define GBDT_MAX_CATEGORY (1 << 20)

/* ---- pack.c: the inference layout ---- */
/* One node of a tree in 16 bytes, a quarter cache line (the gbdt_tree arrays spread a node over ~5 lines).
 * A split record of a plain numeric node (missing type None or NaN) decides on its own: x <= threshold
 * goes left, and NaN goes left when GBDT_PACKED_NAN_LEFT. Other nodes (categorical, missing type Zero)
 * carry GBDT_PACKED_SLOW and, instead of the feature, their index in the gbdt_tree, whose generic rule
 * decides. A leaf record holds the leaf's value. */
#define GBDT_PACKED_SLOW 0x80000000u
#define GBDT_PACKED_NAN_LEFT 0x40000000u
#define GBDT_PACKED_INDEX 0x3fffffffu /* the feature, or for slow nodes the node index */
/* lines from a tree's first record that prediction prefetches; the records end with enough spare lines */
#define GBDT_PACKED_PREFETCH_LINES 3
typedef union gbdt_packed_node {
    struct {
        float threshold;   /* largest float <= the double threshold: float x <= it iff (double)x <= thr */
        uint32_t feature;  /* index and GBDT_PACKED_* flags */
        int32_t child[2];  /* left, right: code c >= 0 a split record, c < 0 the leaf record ~c */
    } split;
    struct {
        double value;      /* learning rate applied, as in gbdt_tree.leaf_value */
        double unused;
    } leaf;
} gbdt_packed_node;

/* Every tree of a booster as records in one array (in one block, on huge pages where the system offers
 * them: a model of megabytes would otherwise cost a TLB miss per tree). Record 0 is a split record that
 * no tree uses (prediction re-reads it for trees already at their leaf). Each tree starts on a cache line
 * with its root, and continues depth first, leaves included, with the child that saw more training rows
 * right after its parent: the likely path from root to leaf lies in a line or two, which prediction
 * prefetches for the trees ahead. Built once the trees are final; prediction uses it only while
 * num_trees equals the booster's, and any change of the tree list drops it. */
typedef struct gbdt_packed {
    int num_trees;            /* trees covered; 0: none (predict walks the gbdt_trees) */
    gbdt_packed_node *nodes;  /* (a line for record 0, per tree 2 num_leaves - 1 records padded to whole
                               * lines, then GBDT_PACKED_PREFETCH_LINES - 1 spare lines) */
    int32_t *root;            /* (num_trees) child code of tree t's root: a leaf record for stumps */
    void *block;              /* the allocation holding nodes and root */
} gbdt_packed;

/* (Re)builds b->packed from b->trees; call whenever the tree list is final. Trees too large for the
 * layout's 32-bit indices leave it empty, which only costs speed. */
int gbdt_booster_pack(gbdt_booster *b);
void gbdt_packed_free(gbdt_packed *p);

struct gbdt_booster {
    gbdt_params params;      /* the config that trained it (defaults for imported models) */
    int num_features;
    int num_class;           /* K: outputs per row, trees per iteration */
    double *base_score;      /* (K) added to every raw score */
    int num_trees, cap_trees;
    gbdt_tree *trees;        /* (num_trees); tree t adds to class t % K */
    char **feature_names;    /* (num_features) */
    uint8_t *is_categorical; /* (num_features) */
    int best_iteration;      /* -1 unless early stopping chose one */
    gbdt_packed packed;      /* inference layout of trees[0 .. packed.num_trees) */
};

/* ---- booster.c: allocation and tree helpers ---- */
int gbdt_booster_alloc(int num_features, int num_class, gbdt_booster **out);
/* Appends an empty slot and returns it (zeroed), NULL on allocation failure. Both drop b->packed. */
gbdt_tree *gbdt_booster_push_tree(gbdt_booster *b);
void gbdt_booster_truncate(gbdt_booster *b, int num_trees);
int gbdt_booster_set_feature_name(gbdt_booster *b, int j, const char *name);
/* Allocates the arrays of a tree with num_leaves leaves and cat_words bitset words. */
int gbdt_tree_alloc(gbdt_tree *t, int num_leaves, int num_cat, int cat_words);
void gbdt_tree_free(gbdt_tree *t);
int gbdt_tree_copy(gbdt_tree *dst, const gbdt_tree *src);
/* Checks that a tree read from a file is well formed (children form a tree, indices in range). */
int gbdt_tree_validate(const gbdt_tree *t, int num_features, const char *where);

/* ---- bin.c: quantile binning ---- */
typedef struct gbdt_bin_mapper {
    int is_categorical;
    int num_bins;        /* numeric: value bins + 1 NaN bin (the last); categorical: categories + 1 other bin */
    double *upper;       /* numeric (num_bins - 1): bin b holds upper[b-1] < x <= upper[b]; last is +inf */
    int *category;       /* categorical (num_bins - 1): the category of each bin, most frequent first */
    int trivial;         /* every row falls in one bin: never split on, and left out of histograms */
} gbdt_bin_mapper;

/* The histogram matrix packs the non-trivial features into columns: a column holds one feature's bin, or
 * the bins of a bundle of small features as one mixed-radix number (product of their radices <= 256),
 * whose joint histogram is summed into each feature's histogram after a build. A row then costs one
 * histogram update per column, not per feature. */
#define GBDT_BUNDLE_MAX_FEATURES 8
#define GBDT_BUNDLE_MAX_BINS 256
typedef struct gbdt_bundle {
    size_t offset; /* its joint bins in a histogram buffer: [offset, offset + nbins) */
    int nbins;     /* product of the radices */
    int nfeatures;
    int feature[GBDT_BUNDLE_MAX_FEATURES];
    int radix[GBDT_BUNDLE_MAX_FEATURES];  /* bins of the feature that occur: its largest bin + 1 */
    int stride[GBDT_BUNDLE_MAX_FEATURES]; /* joint bin = sum of bin * stride over the features */
} gbdt_bundle;

typedef struct gbdt_binned {
    size_t n;
    int d;
    int bin_bytes;            /* 1 (uint8) when every feature has <= 256 bins, else 2 (uint16) */
    void *cols;               /* (d, n) column-major bins, j * n + i (partitioning a leaf's rows) */
    gbdt_bin_mapper *mappers; /* (d) */
    size_t *hist_offset;      /* (d + 1): feature j's histogram is [hist_offset[j], hist_offset[j+1]) */
    int ncols, pack_bytes;    /* columns of the histogram matrix; 1 (uint8) or 2 (uint16) bytes each */
    void *packed;             /* (n, ncols) row-major: row i adds to bin col_offset[c] + packed[i, c] */
    size_t *col_offset;       /* (ncols) where column c's bins start in a histogram */
    int *col_nbins;           /* (ncols) and how many there are */
    int nbundles;
    gbdt_bundle *bundles;     /* (nbundles) */
    size_t hist_total;        /* bins of a histogram buffer: hist_offset[d], then the bundles' joint bins */
} gbdt_binned;

/* Bins every feature; cuts come from all rows, or an evenly strided 200000-row sample of larger data. */
int gbdt_binned_build(const gbdt_data *data, int max_bin, int nthreads, gbdt_binned *out);
/* The same bins (cuts, bundles and histogram layout from all of data's rows) kept for rows [begin, end) only:
 * out->n = end - begin, and out's row i is data's row begin + i. */
int gbdt_binned_build_shard(const gbdt_data *data, int max_bin, int nthreads, size_t begin, size_t end,
                            gbdt_binned *out);
void gbdt_binned_free(gbdt_binned *bd);
int gbdt_bin_value(const gbdt_bin_mapper *m, float v);
static inline int gbdt_binned_get(const gbdt_binned *bd, int j, size_t i)
{
    size_t k = (size_t)j * bd->n + i;
    return bd->bin_bytes == 1 ? ((const uint8_t *)bd->cols)[k] : ((const uint16_t *)bd->cols)[k];
}

/* The hot loops (histograms, gradients, quantizing, split search) are compiled twice, for AVX2 and for the baseline
 * ISA, and picked at load time; the same IEEE operations either way. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define GBDT_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GBDT_SIMD_CLONES
#endif

/* ---- qgrad.c: quantized gradients (quantized_grad) ---- */
/* One class's discretised gradients for one round. A row r's (g, h) become integers
 *   gq = trunc(g / gscale +- u),  hq = trunc(h / hscale + u'),   gscale = max|g| / (bins/2),  hscale = max h / bins,
 * u, u' uniform in [0, 1) from a hash of (seed, round, class, row) (stochastic rounding: E[gq gscale] = g), kept as
 * a 2-byte code (gq as int8 in the low byte, hq in the high one) and, where summed, packed with a row count of 1
 * into one 64-bit word (gbdt_qgrad_word): bits [0, n_bits) count rows, [n_bits, n_bits + h_bits) sum
 * hq, the bits above sum gq (signed). The widths fit the sums over the `rows` rows of a tree, so adding words adds
 * the three fields without carries between them, and a histogram bin is one 8-byte integer. A class whose
 * hessians are all equal keeps them exactly: h_bits = 0 and hscale = that hessian (h = n hscale). */
typedef struct gbdt_qgrad {
    int n_bits, h_bits;
    double gscale, hscale;
    size_t zeros; /* rows whose code is 0 (gq = hq = 0) */
} gbdt_qgrad;
/* bits of the count, hessian and gradient fields for sums over `rows` rows; 0 when they fit 64 bits, else an error */
int gbdt_qgrad_fit(size_t rows, int bins, int hess_constant, gbdt_qgrad *q);
/* the hash of (seed, round, class, row) whose low and high 16 bits give the row's rounding offsets u and u' */
uint32_t gbdt_qgrad_hash(uint64_t seed, uint64_t round, int k, size_t row);
/* qc (n) = the codes of gh (n, 2) (one class); *q gets the scales and the word's fields, sized for sums over `rows`
 * rows */
int gbdt_qgrad_discretize(const double *gh, size_t n, size_t rows, int bins, uint64_t seed, uint64_t round, int k,
                          uint16_t *qc, gbdt_qgrad *q);
/* What the scales of one class's gh (n, 2) depend on: max |g|, the least and largest h (hmin > hmax: no rows), and
 * whether a g or h is NaN. Minima and maxima do not depend on the order of the rows, so ranges of parts of the rows
 * combine (gbdt_gh_range_add) into exactly the range of all of them. */
typedef struct gbdt_gh_range {
    double gmax, hmin, hmax;
    int nan;
} gbdt_gh_range;
/* the range of no rows */
#define GBDT_GH_RANGE_EMPTY ((gbdt_gh_range){0.0, INFINITY, -INFINITY, 0})
/* *r = the range of its rows and of rows with max |g| ag, h in [lo, hi], a NaN where nan */
static inline void gbdt_gh_range_add(gbdt_gh_range *r, double ag, double lo, double hi, int nan)
{
    r->gmax = ag > r->gmax ? ag : r->gmax;
    r->hmin = lo < r->hmin ? lo : r->hmin;
    r->hmax = hi > r->hmax ? hi : r->hmax;
    r->nan |= nan;
}
/* *r = the range of gh (n, 2) */
void gbdt_qgrad_range(const double *gh, size_t n, gbdt_gh_range *r);
/* gbdt_qgrad_discretize with r the range of gh (gbdt_qgrad_range, or gathered as gh was written) */
int gbdt_qgrad_discretize_range(const double *gh, size_t n, const gbdt_gh_range *r, size_t rows, int bins,
                                uint64_t seed, uint64_t round, int k, uint16_t *qc, gbdt_qgrad *q);
/* the word of code c: gq at bit gs = n_bits + h_bits, hq at bit hs = n_bits, a count of 1 */
static inline uint64_t gbdt_qgrad_word(uint16_t c, int hs, int gs)
{
    return ((uint64_t)(int64_t)(int8_t)(c & 0xffu) << gs) + ((uint64_t)(c >> 8) << hs) + 1;
}
/* the fields of a sum of packed words */
static inline int64_t gbdt_qgrad_n(const gbdt_qgrad *q, uint64_t v)
{
    return (int64_t)(v & (((uint64_t)1 << q->n_bits) - 1));
}
static inline int64_t gbdt_qgrad_h(const gbdt_qgrad *q, uint64_t v)
{
    return q->h_bits ? (int64_t)((v >> q->n_bits) & (((uint64_t)1 << q->h_bits) - 1)) : gbdt_qgrad_n(q, v);
}
static inline int64_t gbdt_qgrad_g(const gbdt_qgrad *q, uint64_t v)
{
    /* an arithmetic shift of the two's complement word (GCC and Clang define it so for signed values) */
    return (int64_t)v >> (q->n_bits + q->h_bits);
}

/* ---- histogram.c ---- */
/* One bin of a histogram: sums of gradients, hessians and the row count (a double: exact to 2^53 rows),
 * padded to 32 bytes so that a row adds its (g, h, 1, 0) to a bin as one 4-double vector. */
typedef struct gbdt_hist_bin {
    double g, h, n, pad;
} gbdt_hist_bin;
/* bytes of one histogram of `total` bins (a gbdt_binned's hist_total) */
#define GBDT_HIST_BYTES(total) ((size_t)(total) * sizeof(gbdt_hist_bin))

/* A histogram buffer on a cache-line boundary (a 32-byte bin never straddles two lines); free() frees it. */
void *gbdt_hist_alloc(size_t bytes);

/* Reusable buffers of gbdt_hist_build: per-block partial histograms and the list of used features. */
typedef struct gbdt_hist_scratch {
    gbdt_hist_bin *blocks; /* (GBDT_HIST_MAX_BLOCKS - 1) histograms of GBDT_HIST_BYTES(total bins) */
    int *features;         /* (d) the features histogrammed */
    size_t *offsets;       /* (d) their histogram offsets */
} gbdt_hist_scratch;
#define GBDT_HIST_MAX_BLOCKS 32
int gbdt_hist_scratch_init(gbdt_hist_scratch *s, const gbdt_binned *bd);
void gbdt_hist_scratch_free(gbdt_hist_scratch *s);
/* hist[bins of feature j] = sums over rows[0..nrows) of gh (n, 2) pairs, for features with used[j]
 * (used NULL: all). Rows are cut into blocks that depend only on nrows; blocks are summed in parallel and
 * merged in block order, so the result is bit-identical for any thread count. */
int gbdt_hist_build(const gbdt_binned *bd, const int *rows, size_t nrows, const double *gh,
                    const uint8_t *used, int nthreads, gbdt_hist_scratch *scratch, gbdt_hist_bin *hist);
/* hists[k] (K histograms of every non-trivial feature) = gbdt_hist_build of class k's gh + 2 k n over
 * rows[0..nrows), all K in one pass over the bins per group of 8 classes (gh is (K, n, 2)). Each sum runs
 * over the rows in order whatever nthreads is. */
int gbdt_hist_build_classes(const gbdt_binned *bd, const int *rows, size_t nrows, const double *gh, int K,
                            int nthreads, gbdt_hist_bin *const *hists);
/* hists[0..nh) summed over the processes of comm (a no-op without one): every bin's g and h are on the
 * grids 2^ue[2 h], 2^ue[2 h + 1] of histogram h (quant.c), its count an integer. */
int gbdt_hist_allreduce(const hr_comm *comm, const gbdt_binned *bd, gbdt_hist_bin *const *hists, int nh,
                        const int *ue);
/* Quantized histograms (quantized_grad): hist[col_offset[c] + bin] = the sum of the words of the codes qc (n)
 * with fields q (qgrad.c) over rows[0..nrows) with that bin in column c, for every column (a bundle's joint bins
 * are not expanded). Integer sums: the same for any thread count and block split. */
int gbdt_qhist_build(const gbdt_binned *bd, const int *rows, size_t nrows, const uint16_t *qc, const gbdt_qgrad *q,
                     int nthreads, gbdt_hist_scratch *scratch, uint64_t *hist);
/* hists[c] = gbdt_qhist_build of class c's codes qc + c n and fields q[c], for each class c = cls[i], i < K, 16
 * classes per pass over the bins */
int gbdt_qhist_build_classes(const gbdt_binned *bd, const int *rows, size_t nrows, const uint16_t *qc,
                             const gbdt_qgrad *q, const int *cls, int K, int nthreads, uint64_t *const *hists);
/* parent -= smaller over every column's bins */
void gbdt_qhist_subtract(uint64_t *parent, const uint64_t *smaller, const gbdt_binned *bd);
/* the bundled features' bins of h from their bundles' joint bins (the words of a feature's bin b: the sum of the
 * joint bins whose digit for it is b) */
void gbdt_qhist_expand(const gbdt_binned *bd, uint64_t *h);
/* out (nb) = the float bins of the words q (nb): g = gq gscale, h = hq hscale, n */
void gbdt_qhist_unpack_range(const uint64_t *q, size_t nb, const gbdt_qgrad *lay, gbdt_hist_bin *out);
/* out = the float histogram of every non-trivial feature of q, bundles expanded (in q too) */
void gbdt_qhist_unpack(const gbdt_binned *bd, uint64_t *q, const gbdt_qgrad *lay, gbdt_hist_bin *out);
/* larger = parent - smaller, in place in parent (the sibling's histogram). */
void gbdt_hist_subtract(gbdt_hist_bin *parent, const gbdt_hist_bin *smaller, const gbdt_binned *bd,
                        const uint8_t *used);

/* ---- partition.c: a leaf's rows split by a split's side ---- */
/* rows[i0..i1), each by its bin b in col (a feature's column of gbdt_binned cols, bin_bytes 1 or 2): those with
 * goes_left[b] (0 or 1) to rows[*nl..], the others to right[*nr..], each in order; *nl and *nr advance by their
 * counts. *nl <= i0 on entry. */
void gbdt_partition_rows(const uint8_t *goes_left, const void *col, int bin_bytes, int *rows, size_t i0, size_t i1,
                         int *right, size_t *nl, size_t *nr);

/* ---- tree.c: leaf-wise growth ---- */
typedef struct gbdt_grower gbdt_grower;
int gbdt_grower_new(const gbdt_binned *bd, const gbdt_params *p, int nthreads, gbdt_grower **out);
void gbdt_grower_free(gbdt_grower *g);
/* Grows one tree on gh (n, 2) over rows[0..nrows) with the features used[j]; leaf values include the
 * learning rate. root (or NULL: built here) is the histogram of those rows, from gbdt_hist_build_classes. */
int gbdt_grower_grow(gbdt_grower *g, const double *gh, const int *rows, size_t nrows, const uint8_t *used,
                     const gbdt_hist_bin *root, gbdt_tree *out);
/* The same with gh on the grids 2^ue[0] (g) and 2^ue[1] (h) (histogram INT, gbdt_quant_gradients), or ue
 * NULL; with p->comm the rows are this process's share, every histogram and count is summed over the
 * processes, and a root histogram passed in must already be. */
int gbdt_grower_grow_exact(gbdt_grower *g, const double *gh, const int *rows, size_t nrows, const uint8_t *used,
                           const gbdt_hist_bin *root, const int *ue, gbdt_tree *out);
/* The same on quantized gradients: qc (n) the rows' codes with scales lay (gbdt_qgrad_discretize), root
 * (or NULL) their root histogram from gbdt_qhist_build_classes; gh (n, 2), the true gradients, renew the leaf
 * values when params renew_leaf. One process, histogram FLOAT. */
int gbdt_grower_grow_quant(gbdt_grower *g, const double *gh, const uint16_t *qc, const gbdt_qgrad *lay,
                           const int *rows, size_t nrows, const uint8_t *used, const uint64_t *root, gbdt_tree *out);
/* F[r, k] += the leaf value of each row r the last grown tree t was fit on (the same leaf as predicting
 * from x: bin b <= t exactly when x <= upper[t]). */
/* rows of leaf l of the last grown tree; *count gets their number */
const int *gbdt_grower_leaf_rows(const gbdt_grower *g, int leaf, size_t *count);
/* the gradients g of those rows, in their order, when the last tree renewed its leaf values (quantized_grad with
 * renew_leaf, which reads them), and *neg how many are < 0; else NULL */
const double *gbdt_grower_leaf_grads(const gbdt_grower *g, int leaf, size_t *neg);
void gbdt_grower_add_scores(const gbdt_grower *g, const gbdt_tree *t, int K, int k, double *F);
/* leaf_of[r] = the leaf of each row r the last grown tree was fit on (num_leaves <= 256) */
void gbdt_grower_leaf_ids(const gbdt_grower *g, int num_leaves, uint8_t *leaf_of);

/* ---- split.c: a leaf's best split over one feature ---- */
/* -T(g)/(h + l2) and T(g)^2/(h + l2), T the soft threshold at l1: a leaf's value and its gain */
double gbdt_leaf_output(double g, double h, double l1, double l2);
double gbdt_leaf_gain(double g, double h, double l1, double l2);
/* A candidate split and the sums of its sides. */
typedef struct gbdt_split {
    double gain;         /* gain over the unsplit leaf; -INFINITY: no valid split */
    int feature;
    int is_cat;
    int threshold_bin;   /* numeric: value bins <= this go left */
    int default_left;    /* numeric: the NaN bin goes left */
    int num_cat_bins;    /* categorical: number of bins going left */
    int *cat_bins;       /* (cat_cap) categorical: the bins going left */
    double lg, lh, rg, rh;
    int64_t ln, rn;
    uint64_t lw, rw;     /* quantized_grad: the children's summed words */
    double lout, rout;   /* child outputs before the learning rate */
} gbdt_split;
/* What the searches read besides the histogram. */
typedef struct gbdt_split_ctx {
    const gbdt_params *p;
    const gbdt_qgrad *qlay; /* quantized_grad: the words' fields and scales */
    int hcount;             /* hessian_counts: a side's count estimated from its hessian sum */
    uint64_t nmask;         /* hessian_counts: the words' count field, left out of side sums (the counts of a
                             * histogram, rows it sums, and of a leaf total, all rows, differ) */
    int **sort_scratch;     /* (threads, max_bins) categorical ordering */
    double **ctr_scratch;   /* (threads, max_bins) */
} gbdt_split_ctx;
/* Each search sets *s when it finds a split of gain - shift above s->gain (best "value bins <= t go left", the NaN
 * bin, last, tried on each side; categorical: LightGBM's one-vs-rest or sorted-prefix sets), leaf sums G, H, N. */
void gbdt_split_find_numeric(const gbdt_split_ctx *g, const gbdt_hist_bin *h, int nb, double G, double H, int64_t N,
                             double shift, gbdt_split *s);
/* the same on the words w (nb) of a quantized histogram whose leaf's words sum to total, four thresholds at a time;
 * _scalar: one at a time (the reference the tests hold it to) */
void gbdt_split_find_numeric_words(const gbdt_split_ctx *g, const uint64_t *w, int nb, uint64_t total, int64_t N,
                                   double shift, gbdt_split *s);
void gbdt_split_find_numeric_words_scalar(const gbdt_split_ctx *g, const uint64_t *w, int nb, uint64_t total,
                                          int64_t N, double shift, gbdt_split *s);
void gbdt_split_find_categorical(const gbdt_split_ctx *g, const gbdt_hist_bin *h, int nb, double G, double H,
                                 int64_t N, double shift, int tid, gbdt_split *s);
/* a categorical split's side words, from the bins going left */
void gbdt_split_cat_words(const uint64_t *w, uint64_t total, uint64_t nmask, gbdt_split *s);
/* hessian_counts: rows per unit of quantized hessian in a leaf of N rows whose words sum to total (0 when its
 * hessian is 0) */
double gbdt_split_count_factor(const gbdt_split_ctx *g, uint64_t total, int64_t N);
/* the estimated row count of words w: its hessian in rows, rounded as LightGBM rounds it */
static inline int64_t gbdt_split_count(const gbdt_qgrad *q, uint64_t w, double factor)
{
    return (int64_t)((double)gbdt_qgrad_h(q, w) * factor + 0.5);
}

/* ---- objective.c ---- */
/* gh (K, n, 2): per class gradient/hessian pairs of the loss at raw scores F (n, K). */
int gbdt_objective_gradients(const gbdt_params *p, const gbdt_data *data, const double *F, int nthreads,
                             double *gh);
/* The same, and with ranges non-NULL ranges[k] = the range of class k's gh (K ranges; quantized_grad): gathered
 * while softmax gradients are written, so that quantizing them needs no pass of its own over gh. */
int gbdt_objective_gradients_range(const gbdt_params *p, const gbdt_data *data, const double *F, int nthreads,
                                   double *gh, gbdt_gh_range *ranges);
/* Weighted mean loss (L2: w (F-y)^2, softmax: multi_logloss) of raw scores F (n, K). */
double gbdt_objective_metric(const gbdt_params *p, const gbdt_data *data, const double *F);
/* steps[l] (l < L): the step (before the learning rate) of a softmax leaf holding rows[l][0..nrows[l]) of class
 * cls[l] (gh: (K, n, 2)): the Newton step newton[l], or the exact minimiser of the leaf's loss when the Newton
 * step overshoots it.
 * The leaves iterate together, so that with p->comm (rows: this process's share) each iteration sums every
 * leaf's terms over the processes at once. ue == INT_MIN: plain double sums in row order; otherwise each
 * row's terms are rounded to the grid 2^ue (exact sums, quant.c). gl (or NULL) gives, per leaf (or NULL), the
 * gradients of rows[l] in that order, gl[l][i] = gh's g of row rows[l][i], read in place of gh's scattered ones,
 * and neg[l] how many of them are < 0. */
int gbdt_objective_softmax_steps(const gbdt_params *p, const gbdt_data *data, const double *gh, const int *cls,
                                 int L, const int *const *rows, const double *const *gl, const size_t *neg,
                                 const size_t *nrows, const double *newton, int ue, double *steps);
/* Base raw score per class from the labels (mean, or log class priors). */
void gbdt_objective_base_score(const gbdt_params *p, const gbdt_data *data, double *base);
/* Mean loss as gbdt_objective_metric, summed over the processes of p->comm (rows: this process's share); NaN on every
 * process when it is not finite on one. */
int gbdt_objective_metric_all(const gbdt_params *p, const gbdt_data *data, const double *F, double *out);
/* p = softmax(F) over K values, numerically stable. */
void gbdt_softmax(const double *F, int K, double *p);
int gbdt_data_check(const gbdt_params *p, const gbdt_data *data, const char *what);

/* ---- quant.c: exact sums ---- */
/* B for n_total rows: values of magnitude <= 2^e on the grid 2^(e - B) sum exactly over any n_total of them */
int gbdt_quant_bits(size_t n_total);
/* the grid exponent e - B for values of magnitude <= maxabs (0 when maxabs is 0) */
int gbdt_quant_exponent(double maxabs, int bits);
/* v rounded to the nearest multiple of 2^ue */
double gbdt_quant_round(double v, int ue);
/* the same with scale = 2^-ue and unit = 2^ue given, for |v| scale <= 2^51 (always so for values of the magnitude
 * the grid was fitted to): adding and taking away 1.5 2^52 rounds to an integer (to even, as nearbyint does) in
 * two additions, which are exact, as are the products by powers of two */
static inline double gbdt_quant_round_scaled(double v, double scale, double unit)
{
    double t = v * scale;
    t = (t + 6755399441055744.0) - 6755399441055744.0;
    return t * unit;
}
/* 1 when comm joins several processes */
int gbdt_comm_active(const hr_comm *comm);
/* v (n) summed over the processes, exactly: v[i] is a multiple of 2^ue[i % period] below 2^53 of them */
int gbdt_quant_allreduce(const hr_comm *comm, double *v, size_t n, const int *ue, size_t period);
/* v (n) = the largest over the processes of each max(v[i], 0) */
int gbdt_quant_allmax(const hr_comm *comm, double *v, size_t n);
/* Rounds gh (K, n, 2) in place to per-class grids fitted to the largest |g| and h over every process's rows
 * (n_total in all): ue (K, 2) gets the grid exponents of g and h. */
int gbdt_quant_gradients(const gbdt_params *p, size_t n, int K, size_t n_total, double *gh, int *ue);

#endif
