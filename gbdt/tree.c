/* Leaf-wise (best-first) tree growth, as in LightGBM: every leaf keeps its best split, and the leaf whose
 * split gains most is split next until num_leaves is reached or no split gains more than
 * min_gain_to_split. Rows are kept partitioned by leaf in one array; a split histograms only the smaller
 * child and gets the larger one as parent - smaller. Nodes are numbered in split order with the left
 * child keeping the parent's leaf index and the right child taking the next one (LightGBM's layout). */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    int hcount;             /* hessian_counts: a split side's count estimated from its hessian sum */
    uint64_t nmask;         /* hessian_counts: a word's count field, left out of side sums: the counts of the
                             * histograms (rows they sum) and of the leaf totals (all rows) then differ */
    uint64_t *qsum;         /* (max_leaves) a leaf's summed words */
    double *gord;           /* (n) renew_leaf: the true g of rows[i], kept by the renewal for the leaf steps */
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
    gbdt_partition part;
    /* the tree being grown */
    int *split_feature, *left_child, *right_child, *cat_begin;
    double *threshold, *split_gain;
    uint8_t *decision_type;
    uint32_t *cat_words;
    int num_cat, cat_words_n, cat_words_cap;
};

double gbdt_leaf_output(double g, double h, double l1, double l2)
{
    double t = fabs(g) > l1 ? g - copysign(l1, g) : 0.0;
    return -t / (h + l2);
}

/* inlined into the split searches, which call it twice a bin */
static inline double leaf_gain(double g, double h, double l1, double l2)
{
    double t = fabs(g) > l1 ? g - copysign(l1, g) : 0.0;
    return t * t / (h + l2);
}

double gbdt_leaf_gain(double g, double h, double l1, double l2)
{
    return leaf_gain(g, h, l1, l2);
}

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
    gbdt_partition_free(&g->part);
    if (g->qfloat)
        for (int t = 0; t < g->nthreads; t++) free(g->qfloat[t]);
    free(g->qfloat);
    free(g->qsum);
    free(g->gord);
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
    int ok = (g->rows = hr_malloc(n * sizeof(int))) && (g->scratch_rows = hr_malloc((n + 8) * sizeof(int))) &&
             gbdt_partition_init(&g->part, g->max_bins) == HR_OK &&
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

/* Best "value bins <= t go left" split, trying the NaN bin on each side when the leaf has NaNs. */
static void split_find_numeric(const gbdt_grower *g, const gbdt_hist_bin *h, int nb,
                               double G, double H, int64_t N, double shift, gbdt_split *s)
{
    const gbdt_params *p = g->p;
    const gbdt_hist_bin *nan = &h[nb - 1];
    int ndir = nan->n > 0 ? 2 : 1;
    for (int dir = 0; dir < ndir; dir++) {
        double lg = dir ? nan->g : 0, lh = dir ? nan->h : 0;
        int64_t ln = dir ? (int64_t)nan->n : 0;
        for (int t = 0; t < nb - 2; t++) {
            lg += h[t].g;
            lh += h[t].h;
            ln += (int64_t)h[t].n;
            if (ln < p->min_data_in_leaf || lh < p->min_sum_hessian_in_leaf || lh <= 0) continue;
            double rg = G - lg, rh = H - lh;
            int64_t rn = N - ln;
            if (rn < p->min_data_in_leaf || rh < p->min_sum_hessian_in_leaf || rh <= 0) break;
            double gain = leaf_gain(lg, lh, p->lambda_l1, p->lambda_l2) +
                          leaf_gain(rg, rh, p->lambda_l1, p->lambda_l2);
            if (gain <= shift || gain - shift <= s->gain) continue;
            s->gain = gain - shift;
            s->is_cat = 0;
            s->threshold_bin = t;
            s->default_left = dir;
            s->lg = lg, s->lh = lh, s->ln = ln, s->rg = rg, s->rh = rh, s->rn = rn;
            s->lout = gbdt_leaf_output(lg, lh, p->lambda_l1, p->lambda_l2);
            s->rout = gbdt_leaf_output(rg, rh, p->lambda_l1, p->lambda_l2);
        }
    }
}

/* hessian_counts: rows per unit of quantized hessian in a leaf of N rows whose words sum to total (0 when its
 * hessian is 0: such a leaf has no split) */
static double grower_count_factor(const gbdt_grower *g, uint64_t total, int64_t N)
{
    int64_t h = gbdt_qgrad_h(g->qlay, total);
    return h > 0 ? (double)N / (double)h : 0.0;
}

/* the estimated row count of words w: its hessian in rows, rounded as LightGBM rounds it */
static inline int64_t grower_count(const gbdt_qgrad *q, uint64_t w, double factor)
{
    return (int64_t)((double)gbdt_qgrad_h(q, w) * factor + 0.5);
}

/* split_find_numeric on the words of a quantized histogram, without unpacking it: the left side's words are
 * summed as integers and the right side's are the leaf's total less them, so both sides' sums are exact.
 * The plain form, one threshold after another: split_find_numeric_words gives the same split faster. */
static void split_find_numeric_words_scalar(const gbdt_grower *g, const uint64_t *w, int nb, uint64_t total,
                                            int64_t N, double shift, gbdt_split *s)
{
    const gbdt_params *p = g->p;
    const gbdt_qgrad *q = g->qlay;
    uint64_t nan = w[nb - 1];
    int ndir = gbdt_qgrad_n(q, nan) > 0 || (g->hcount && nan != 0) ? 2 : 1;
    double cnt = grower_count_factor(g, total, N);
    for (int dir = 0; dir < ndir; dir++) {
        uint64_t lw = dir ? nan : 0;
        for (int t = 0; t < nb - 2; t++) {
            lw += w[t];
            int64_t ln = g->hcount ? grower_count(q, lw, cnt) : gbdt_qgrad_n(q, lw);
            double lh = (double)gbdt_qgrad_h(q, lw) * q->hscale;
            if (ln < p->min_data_in_leaf || lh < p->min_sum_hessian_in_leaf || lh <= 0) continue;
            uint64_t rw = (total & ~g->nmask) - (lw & ~g->nmask);
            int64_t rn = g->hcount ? N - ln : gbdt_qgrad_n(q, rw);
            double rh = (double)gbdt_qgrad_h(q, rw) * q->hscale;
            if (rn < p->min_data_in_leaf || rh < p->min_sum_hessian_in_leaf || rh <= 0) break;
            double lg = (double)gbdt_qgrad_g(q, lw) * q->gscale, rg = (double)gbdt_qgrad_g(q, rw) * q->gscale;
            double gain = leaf_gain(lg, lh, p->lambda_l1, p->lambda_l2) + leaf_gain(rg, rh, p->lambda_l1, p->lambda_l2);
            if (gain <= shift || gain - shift <= s->gain) continue;
            s->gain = gain - shift;
            s->is_cat = 0;
            s->threshold_bin = t;
            s->default_left = dir;
            s->lg = lg, s->lh = lh, s->ln = ln, s->rg = rg, s->rh = rh, s->rn = rn;
            s->lw = lw, s->rw = rw;
            s->lout = gbdt_leaf_output(lg, lh, p->lambda_l1, p->lambda_l2);
            s->rout = gbdt_leaf_output(rg, rh, p->lambda_l1, p->lambda_l2);
        }
    }
}

/* The threshold search is compiled twice, for AVX2 and for the baseline ISA, and picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define SPLIT_TARGET __attribute__((target_clones("avx2", "default")))
#else
#define SPLIT_TARGET
#endif

typedef double split_d4 __attribute__((vector_size(32)));
typedef int64_t split_l4 __attribute__((vector_size(32)));
typedef uint64_t split_u4 __attribute__((vector_size(32)));
/* lanes i0..i3 of the eight of a then b */
#ifdef __clang__
#define SPLIT_SHUFFLE(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#else
#define SPLIT_SHUFFLE(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (split_u4){i0, i1, i2, i3})
#endif

/* What the gains of thresholds on words need: the fields, the scales and the limits on a side. */
typedef struct split_words_ctx {
    uint64_t total;         /* the leaf's words, less the count field with hessian_counts (g->nmask) */
    uint64_t keep;          /* ~g->nmask */
    uint64_t nfield, hfield; /* the count and hessian fields' masks, shifted to bit 0 */
    int hshift, gshift;
    int hcount;
    double hscale, gscale, cnt, l1, l2, msh;
    double lmin, rmax;      /* hessian_counts: the left count (x = hq cnt + 0.5 truncated) is too small while
                             * x < lmin, the right one (N - trunc(x)) once x >= rmax */
    int64_t mdl;            /* min_data_in_leaf */
} split_words_ctx;

/* Helpers are macros: a function taking or returning these vectors changes the ABI between the two builds.
 * SPLIT_I2D: the doubles of integers -2^51 <= x < 2^51 given as int64 bits: x added to the mantissa of
 * 1.5 2^52, less 1.5 2^52, is exactly (double)x (AVX2 converts no 64-bit integers itself). */
#define SPLIT_MAGIC 0x4338000000000000u
#define SPLIT_I2D(x) ((split_d4)((x) + (split_u4){SPLIT_MAGIC, SPLIT_MAGIC, SPLIT_MAGIC, SPLIT_MAGIC}) - \
                      (split_d4){0x1.8p52, 0x1.8p52, 0x1.8p52, 0x1.8p52})
/* leaf_gain of four sides, with the same IEEE operations: t = g - copysign(l1, g) where |g| > l1, else +0 */
#define SPLIT_LEAF_GAIN4(out, g, h, vl1, vl2)                                                                   \
    do {                                                                                                       \
        const split_u4 sign_ = {0x8000000000000000u, 0x8000000000000000u, 0x8000000000000000u,               \
                                0x8000000000000000u};                                                          \
        split_u4 gb_ = (split_u4)(g);                                                                          \
        split_d4 t_ = (split_d4)((split_u4)((g) - (split_d4)((split_u4)(vl1) | (gb_ & sign_))) &              \
                                 (split_u4)((split_d4)(gb_ & ~sign_) > (vl1)));                               \
        (out) = t_ * t_ / ((h) + (vl2));                                                                       \
    } while (0)

/* The best threshold of one direction: the left side of threshold t sums base and w[0..t] (t < m), and the
 * first t whose gain - shift is strictly above *best (gain > shift, both sides with enough rows and hessian)
 * sets *best, *lw and is returned; -1 when none is. Four thresholds at a time: prefix sums of the words as
 * integers, gains with the same IEEE operations as leaf_gain (the same doubles), and per lane the first
 * strictly best, merged by gain then threshold, which is the first strictly best of the plain scan. Once a
 * right side is too small every later one is (they only shrink): the plain scan breaks there, this one stops.
 * Returns -2, leaving *best, where a gain is NaN: the plain scan's order then decides. */
SPLIT_TARGET static int split_best_words(const split_words_ctx *c, const uint64_t *w, int m, uint64_t base,
                                         double shift, double *best, uint64_t *lw)
{
    const split_u4 total = {c->total, c->total, c->total, c->total}, keep = {c->keep, c->keep, c->keep, c->keep};
    const split_u4 nfield = {c->nfield, c->nfield, c->nfield, c->nfield};
    const split_u4 hfield = {c->hfield, c->hfield, c->hfield, c->hfield};
    const uint64_t sb = (uint64_t)1 << (63 - c->gshift);
    const split_u4 gsign = {sb, sb, sb, sb}, zero_u = {0, 0, 0, 0};
    const split_d4 hscale = {c->hscale, c->hscale, c->hscale, c->hscale};
    const split_d4 gscale = {c->gscale, c->gscale, c->gscale, c->gscale};
    const split_d4 cnt = {c->cnt, c->cnt, c->cnt, c->cnt}, half = {0.5, 0.5, 0.5, 0.5};
    const split_d4 msh = {c->msh, c->msh, c->msh, c->msh}, zero = {0, 0, 0, 0};
    const split_d4 lmin = {c->lmin, c->lmin, c->lmin, c->lmin}, rmax = {c->rmax, c->rmax, c->rmax, c->rmax};
    const split_l4 mdl = {c->mdl, c->mdl, c->mdl, c->mdl};
    const split_d4 l1 = {c->l1, c->l1, c->l1, c->l1}, l2 = {c->l2, c->l2, c->l2, c->l2};
    const split_d4 vshift = {shift, shift, shift, shift};
    const split_l4 lane = {0, 1, 2, 3}, four = {4, 4, 4, 4}, vm = {m, m, m, m};
    split_d4 bd = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    split_l4 bt = {-1, -1, -1, -1}, idx = lane, nan = {0, 0, 0, 0};
    split_u4 bw = zero_u, carry = {base, base, base, base};
    for (int i = 0; i < m; i += 4, idx += four) {
        split_u4 l;
        if (i + 4 <= m + 2) { /* w has m + 2 words */
            memcpy(&l, w + i, sizeof l);
        } else {
            uint64_t tail[4] = {0, 0, 0, 0};
            memcpy(tail, w + i, (size_t)(m + 2 - i) * sizeof *w);
            memcpy(&l, tail, sizeof l);
        }
        /* inclusive prefix sums across the lanes, plus those of the words before */
        l += SPLIT_SHUFFLE(l, zero_u, 4, 0, 1, 2);
        l += SPLIT_SHUFFLE(l, zero_u, 4, 4, 0, 1);
        l += carry;
        carry = SPLIT_SHUFFLE(l, l, 3, 3, 3, 3);
        split_u4 r = total - (l & keep);
        split_d4 lhq = SPLIT_I2D((l >> c->hshift) & hfield), rhq = SPLIT_I2D((r >> c->hshift) & hfield);
        split_d4 lh = lhq * hscale, rh = rhq * hscale;
        split_l4 lbad = (lh < msh) | (lh <= zero), rbad = (rh < msh) | (rh <= zero);
        if (c->hcount) {
            split_d4 x = lhq * cnt + half;
            lbad |= x < lmin;
            rbad |= x >= rmax;
        } else {
            lbad |= (split_l4)(l & nfield) < mdl;
            rbad |= (split_l4)(r & nfield) < mdl;
        }
        rbad |= idx >= vm;
        if (rbad[0] & rbad[1] & rbad[2] & rbad[3]) break;
        split_l4 bad = lbad | rbad;
        if (bad[0] & bad[1] & bad[2] & bad[3]) continue;
        /* the gradient field, sign-extended: AVX2 has no 64-bit arithmetic shift */
        split_d4 lg = SPLIT_I2D(((l >> c->gshift) ^ gsign) - gsign) * gscale;
        split_d4 rg = SPLIT_I2D(((r >> c->gshift) ^ gsign) - gsign) * gscale;
        split_d4 lgain, rgain;
        SPLIT_LEAF_GAIN4(lgain, lg, lh, l1, l2);
        SPLIT_LEAF_GAIN4(rgain, rg, rh, l1, l2);
        split_d4 v = lgain + rgain, d = v - vshift;
        nan |= (v != v) & ~bad;
        split_l4 up = ~bad & (v > vshift) & (d > bd);
        bd = (split_d4)(((split_l4)d & up) | ((split_l4)bd & ~up));
        bt = (idx & up) | (bt & ~up);
        bw = (l & (split_u4)up) | (bw & ~(split_u4)up);
    }
    if (nan[0] | nan[1] | nan[2] | nan[3]) return -2;
    int k = -1;
    for (int j = 0; j < 4; j++)
        if (bt[j] >= 0 && (k < 0 || bd[j] > bd[k] || (bd[j] == bd[k] && bt[j] < bt[k]))) k = j;
    if (k < 0 || !(bd[k] > *best)) return -1;
    *best = bd[k];
    *lw = bw[k];
    return (int)bt[k];
}

/* split_find_numeric_words_scalar's split, found by split_best_words per direction */
static void split_find_numeric_words(const gbdt_grower *g, const uint64_t *w, int nb, uint64_t total, int64_t N,
                                     double shift, gbdt_split *s)
{
    const gbdt_params *p = g->p;
    const gbdt_qgrad *q = g->qlay;
    int hb = q->h_bits ? q->h_bits : q->n_bits;
    /* SPLIT_I2D needs every field below 2^51: rows' int8 gradient codes sum to at most 128 N */
    if (q->n_bits > 51 || hb > 51 || N < 0 || N >= ((int64_t)1 << 43) || shift != shift || s->gain != -INFINITY) {
        split_find_numeric_words_scalar(g, w, nb, total, N, shift, s);
        return;
    }
    uint64_t nan = w[nb - 1];
    int ndir = gbdt_qgrad_n(q, nan) > 0 || (g->hcount && nan != 0) ? 2 : 1;
    double cnt = grower_count_factor(g, total, N);
    split_words_ctx c = {
        .total = total & ~g->nmask,
        .keep = ~g->nmask,
        .nfield = ((uint64_t)1 << q->n_bits) - 1,
        .hfield = ((uint64_t)1 << hb) - 1,
        .hshift = q->h_bits ? q->n_bits : 0,
        .gshift = q->n_bits + q->h_bits,
        .hcount = g->hcount,
        .hscale = q->hscale,
        .gscale = q->gscale,
        .cnt = cnt,
        .l1 = p->lambda_l1,
        .l2 = p->lambda_l2,
        .msh = p->min_sum_hessian_in_leaf,
        .lmin = (double)p->min_data_in_leaf,
        .rmax = (double)(N - p->min_data_in_leaf + 1),
        .mdl = p->min_data_in_leaf,
    };
    int best_t = -1, best_dir = 0;
    double best = -INFINITY;
    uint64_t lw = 0;
    for (int dir = 0; dir < ndir; dir++) {
        int t = split_best_words(&c, w, nb - 2, dir ? nan : 0, shift, &best, &lw);
        if (t == -2) {
            split_find_numeric_words_scalar(g, w, nb, total, N, shift, s);
            return;
        }
        if (t >= 0) best_t = t, best_dir = dir;
    }
    if (best_t < 0) return;
    uint64_t rw = (total & ~g->nmask) - (lw & ~g->nmask);
    int64_t ln = g->hcount ? grower_count(q, lw, cnt) : gbdt_qgrad_n(q, lw);
    int64_t rn = g->hcount ? N - ln : gbdt_qgrad_n(q, rw);
    double lh = (double)gbdt_qgrad_h(q, lw) * q->hscale, rh = (double)gbdt_qgrad_h(q, rw) * q->hscale;
    double lg = (double)gbdt_qgrad_g(q, lw) * q->gscale, rg = (double)gbdt_qgrad_g(q, rw) * q->gscale;
    s->gain = best;
    s->is_cat = 0;
    s->threshold_bin = best_t;
    s->default_left = best_dir;
    s->lg = lg, s->lh = lh, s->ln = ln, s->rg = rg, s->rh = rh, s->rn = rn;
    s->lw = lw, s->rw = rw;
    s->lout = gbdt_leaf_output(lg, lh, p->lambda_l1, p->lambda_l2);
    s->rout = gbdt_leaf_output(rg, rh, p->lambda_l1, p->lambda_l2);
}

/* the words of a categorical split's sides, from the bins going left */
static void split_cat_words(const uint64_t *w, uint64_t total, uint64_t nmask, gbdt_split *s)
{
    s->lw = 0;
    for (int i = 0; i < s->num_cat_bins; i++) s->lw += w[s->cat_bins[i]];
    s->rw = (total & ~nmask) - (s->lw & ~nmask);
}

/* LightGBM's categorical split: with few categories, one category against the rest; otherwise
 * categories (with enough rows) sorted by g / (h + cat_smooth) and a prefix of that order from either
 * end, up to max_cat_threshold categories, goes left. The "other" bin (last) always goes right. */
static void split_find_categorical(const gbdt_grower *g, const gbdt_hist_bin *h, int nb,
                                   double G, double H, int64_t N, double shift, int tid, gbdt_split *s)
{
    const gbdt_params *p = g->p;
    int used = 0;
    for (int b = 0; b < nb - 1; b++) used += h[b].n > 0;
    if (used <= p->max_cat_to_onehot) {
        for (int b = 0; b < nb - 1; b++) {
            if (h[b].n == 0) continue;
            double lg = h[b].g, lh = h[b].h, rg = G - lg, rh = H - lh;
            int64_t ln = (int64_t)h[b].n, rn = N - ln;
            if (ln < p->min_data_in_leaf || rn < p->min_data_in_leaf || lh < p->min_sum_hessian_in_leaf ||
                rh < p->min_sum_hessian_in_leaf || lh <= 0 || rh <= 0)
                continue;
            double gain = leaf_gain(lg, lh, p->lambda_l1, p->lambda_l2) +
                          leaf_gain(rg, rh, p->lambda_l1, p->lambda_l2);
            if (gain <= shift || gain - shift <= s->gain) continue;
            s->gain = gain - shift;
            s->is_cat = 1;
            s->num_cat_bins = 1;
            s->cat_bins[0] = b;
            s->lg = lg, s->lh = lh, s->ln = ln, s->rg = rg, s->rh = rh, s->rn = rn;
            s->lout = gbdt_leaf_output(lg, lh, p->lambda_l1, p->lambda_l2);
            s->rout = gbdt_leaf_output(rg, rh, p->lambda_l1, p->lambda_l2);
        }
        return;
    }
    int *order = g->sort_scratch[tid];
    double *ctr = g->ctr_scratch[tid];
    int m = 0;
    for (int b = 0; b < nb - 1; b++)
        if (h[b].n > 0 && h[b].n >= p->cat_smooth) {
            order[m] = b;
            ctr[b] = h[b].g / (h[b].h + p->cat_smooth);
            m++;
        }
    /* insertion sort by ctr, ties by bin: stable and deterministic; m is at most max_bin */
    for (int i = 1; i < m; i++) {
        int b = order[i], k = i - 1;
        while (k >= 0 && ctr[order[k]] > ctr[b]) {
            order[k + 1] = order[k];
            k--;
        }
        order[k + 1] = b;
    }
    double l2 = p->lambda_l2 + p->cat_l2;
    int max_num = p->max_cat_threshold < (m + 1) / 2 ? p->max_cat_threshold : (m + 1) / 2;
    for (int dir = 0; dir < 2; dir++) {
        double lg = 0, lh = 0;
        int64_t ln = 0, group = 0;
        for (int i = 0; i < m && i < max_num; i++) {
            int b = order[dir ? m - 1 - i : i];
            lg += h[b].g;
            lh += h[b].h;
            ln += (int64_t)h[b].n;
            group += (int64_t)h[b].n;
            if (ln < p->min_data_in_leaf || lh < p->min_sum_hessian_in_leaf || lh <= 0) continue;
            double rg = G - lg, rh = H - lh;
            int64_t rn = N - ln;
            if (rn < p->min_data_in_leaf || rn < p->min_data_per_group || rh < p->min_sum_hessian_in_leaf ||
                rh <= 0)
                break;
            if (group < p->min_data_per_group) continue;
            group = 0;
            double gain = leaf_gain(lg, lh, p->lambda_l1, l2) + leaf_gain(rg, rh, p->lambda_l1, l2);
            if (gain <= shift || gain - shift <= s->gain) continue;
            s->gain = gain - shift;
            s->is_cat = 1;
            s->num_cat_bins = i + 1;
            for (int k = 0; k <= i; k++) s->cat_bins[k] = order[dir ? m - 1 - k : k];
            s->lg = lg, s->lh = lh, s->ln = ln, s->rg = rg, s->rh = rh, s->rn = rn;
            s->lout = gbdt_leaf_output(lg, lh, p->lambda_l1, l2);
            s->rout = gbdt_leaf_output(rg, rh, p->lambda_l1, l2);
        }
    }
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
            split_find_numeric_words(g, (const uint64_t *)job->hist + o, m->num_bins, job->total, job->N, job->shift, s);
            s->feature = (int)j;
            continue;
        }
        if (g->qv) {
            gbdt_qhist_unpack_range((const uint64_t *)job->hist + o, (size_t)m->num_bins, g->qlay, g->qfloat[tid]);
            if (g->hcount) {
                double cnt = grower_count_factor(g, job->total, job->N);
                for (int b = 0; b < m->num_bins; b++)
                    g->qfloat[tid][b].n = (double)grower_count(g->qlay, ((const uint64_t *)job->hist)[o + (size_t)b], cnt);
            }
            split_find_categorical(g, g->qfloat[tid], m->num_bins, job->G, job->H, job->N, job->shift, tid, s);
            if (s->gain > -INFINITY) split_cat_words((const uint64_t *)job->hist + o, job->total, g->nmask, s);
            s->feature = (int)j;
            continue;
        }
        if (m->is_categorical)
            split_find_categorical(g, h, m->num_bins, job->G, job->H, job->N, job->shift, tid, s);
        else
            split_find_numeric(g, h, m->num_bins, job->G, job->H, job->N, job->shift, s);
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
        double shift = leaf_gain(g->sum_g[leaf], g->sum_h[leaf], p->lambda_l1, p->lambda_l2) +
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
    gbdt_partition_set(&g->part, g->goes_left, m->num_bins);
    gbdt_partition_rows(&g->part, col, bd->bin_bytes, rows, 0, g->nz[leaf], g->scratch_rows, &nl, &nr);
    nzl = nl, nzr = nr;
    gbdt_partition_rows(&g->part, col, bd->bin_bytes, rows, g->nz[leaf], n, g->scratch_rows, &nl, &nr);
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
        size_t cnt = g->count[l], i = 0;
        double G0 = 0, H0 = 0, G1 = 0, H1 = 0;
        for (; i + 1 < cnt; i += 2) {
            if (i + 16 < cnt) __builtin_prefetch(gh + 2 * (size_t)rows[i + 16]);
            if (i + 17 < cnt) __builtin_prefetch(gh + 2 * (size_t)rows[i + 17]);
            G0 += go[i] = gh[2 * (size_t)rows[i]];
            H0 += gh[2 * (size_t)rows[i] + 1];
            G1 += go[i + 1] = gh[2 * (size_t)rows[i + 1]];
            H1 += gh[2 * (size_t)rows[i + 1] + 1];
        }
        if (i < cnt) {
            G0 += go[i] = gh[2 * (size_t)rows[i]];
            H0 += gh[2 * (size_t)rows[i] + 1];
        }
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
    if (g->p->renew_leaf && !g->gord && !(g->gord = hr_malloc((g->bd->n + 1) * sizeof *g->gord))) return HR_ENOMEM;
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
    g->hcount = g->p->hessian_counts && lay->h_bits > 0;
    g->nmask = g->hcount ? ((uint64_t)1 << lay->n_bits) - 1 : 0;
    int rc = grower_grow(g, gh, rows, nrows, used, root, out);
    g->qv = NULL;
    g->qlay = NULL;
    g->hcount = 0;
    g->nmask = 0;
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
    if (g->hcount) { /* the rows whose words add more than a count first, each part in row order */
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

const double *gbdt_grower_leaf_grads(const gbdt_grower *g, int leaf)
{
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
