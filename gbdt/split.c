/* Split search: the best split of a leaf over one feature's histogram, from float bins (g, h, n) or from the words
 * of quantized gradients (qgrad.c), and the leaf values and gains they use (LightGBM's formulas: a side's gain is
 * T(G)^2 / (H + l2), T the l1 soft threshold, its value -T(G) / (H + l2)). Every search keeps the first
 * threshold of the strictly largest gain above `shift`, so the searches agree with one another bit for bit. */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* *s = the numeric split "bins <= t go left" (NaN bin left when dir) of gain `gain` and the sides' sums */
static void split_set_numeric(const gbdt_params *p, gbdt_split *s, double gain, int t, int dir, double lg, double lh,
                              int64_t ln, double rg, double rh, int64_t rn)
{
    s->gain = gain;
    s->is_cat = 0;
    s->threshold_bin = t;
    s->default_left = dir;
    s->lg = lg, s->lh = lh, s->ln = ln, s->rg = rg, s->rh = rh, s->rn = rn;
    s->lout = gbdt_leaf_output(lg, lh, p->lambda_l1, p->lambda_l2);
    s->rout = gbdt_leaf_output(rg, rh, p->lambda_l1, p->lambda_l2);
}

/* Best "value bins <= t go left" split, trying the NaN bin on each side when the leaf has NaNs. */
void gbdt_split_find_numeric(const gbdt_split_ctx *g, const gbdt_hist_bin *h, int nb,
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
            split_set_numeric(p, s, gain - shift, t, dir, lg, lh, ln, rg, rh, rn);
        }
    }
}

/* hessian_counts: rows per unit of quantized hessian in a leaf of N rows whose words sum to total (0 when its
 * hessian is 0: such a leaf has no split) */
double gbdt_split_count_factor(const gbdt_split_ctx *g, uint64_t total, int64_t N)
{
    int64_t h = gbdt_qgrad_h(g->qlay, total);
    return h > 0 ? (double)N / (double)h : 0.0;
}


/* gbdt_split_find_numeric on the words of a quantized histogram, without unpacking it: the left side's words are
 * summed as integers and the right side's are the leaf's total less them, so both sides' sums are exact.
 * The plain form, one threshold after another: gbdt_split_find_numeric_words gives the same split faster. */
void gbdt_split_find_numeric_words_scalar(const gbdt_split_ctx *g, const uint64_t *w, int nb, uint64_t total,
                                            int64_t N, double shift, gbdt_split *s)
{
    const gbdt_params *p = g->p;
    const gbdt_qgrad *q = g->qlay;
    uint64_t nan = w[nb - 1];
    int ndir = gbdt_qgrad_n(q, nan) > 0 || (g->hcount && nan != 0) ? 2 : 1;
    double cnt = gbdt_split_count_factor(g, total, N);
    for (int dir = 0; dir < ndir; dir++) {
        uint64_t lw = dir ? nan : 0;
        for (int t = 0; t < nb - 2; t++) {
            lw += w[t];
            int64_t ln = g->hcount ? gbdt_split_count(q, lw, cnt) : gbdt_qgrad_n(q, lw);
            double lh = (double)gbdt_qgrad_h(q, lw) * q->hscale;
            if (ln < p->min_data_in_leaf || lh < p->min_sum_hessian_in_leaf || lh <= 0) continue;
            uint64_t rw = (total & ~g->nmask) - (lw & ~g->nmask);
            int64_t rn = g->hcount ? N - ln : gbdt_qgrad_n(q, rw);
            double rh = (double)gbdt_qgrad_h(q, rw) * q->hscale;
            if (rn < p->min_data_in_leaf || rh < p->min_sum_hessian_in_leaf || rh <= 0) break;
            double lg = (double)gbdt_qgrad_g(q, lw) * q->gscale, rg = (double)gbdt_qgrad_g(q, rw) * q->gscale;
            double gain = leaf_gain(lg, lh, p->lambda_l1, p->lambda_l2) + leaf_gain(rg, rh, p->lambda_l1, p->lambda_l2);
            if (gain <= shift || gain - shift <= s->gain) continue;
            split_set_numeric(p, s, gain - shift, t, dir, lg, lh, ln, rg, rh, rn);
            s->lw = lw, s->rw = rw;
        }
    }
}


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
GBDT_SIMD_CLONES static int split_best_words(const split_words_ctx *c, const uint64_t *w, int m, uint64_t base,
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

/* gbdt_split_find_numeric_words_scalar's split, found by split_best_words per direction */
void gbdt_split_find_numeric_words(const gbdt_split_ctx *g, const uint64_t *w, int nb, uint64_t total, int64_t N,
                                     double shift, gbdt_split *s)
{
    const gbdt_params *p = g->p;
    const gbdt_qgrad *q = g->qlay;
    int hb = q->h_bits ? q->h_bits : q->n_bits;
    /* SPLIT_I2D needs every field below 2^51: rows' int8 gradient codes sum to at most 128 N */
    if (q->n_bits > 51 || hb > 51 || N < 0 || N >= ((int64_t)1 << 43) || shift != shift || s->gain != -INFINITY) {
        gbdt_split_find_numeric_words_scalar(g, w, nb, total, N, shift, s);
        return;
    }
    uint64_t nan = w[nb - 1];
    int ndir = gbdt_qgrad_n(q, nan) > 0 || (g->hcount && nan != 0) ? 2 : 1;
    double cnt = gbdt_split_count_factor(g, total, N);
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
            gbdt_split_find_numeric_words_scalar(g, w, nb, total, N, shift, s);
            return;
        }
        if (t >= 0) best_t = t, best_dir = dir;
    }
    if (best_t < 0) return;
    uint64_t rw = (total & ~g->nmask) - (lw & ~g->nmask);
    int64_t ln = g->hcount ? gbdt_split_count(q, lw, cnt) : gbdt_qgrad_n(q, lw);
    int64_t rn = g->hcount ? N - ln : gbdt_qgrad_n(q, rw);
    double lh = (double)gbdt_qgrad_h(q, lw) * q->hscale, rh = (double)gbdt_qgrad_h(q, rw) * q->hscale;
    double lg = (double)gbdt_qgrad_g(q, lw) * q->gscale, rg = (double)gbdt_qgrad_g(q, rw) * q->gscale;
    split_set_numeric(p, s, best, best_t, best_dir, lg, lh, ln, rg, rh, rn);
    s->lw = lw, s->rw = rw;
}

/* the words of a categorical split's sides, from the bins going left */
void gbdt_split_cat_words(const uint64_t *w, uint64_t total, uint64_t nmask, gbdt_split *s)
{
    s->lw = 0;
    for (int i = 0; i < s->num_cat_bins; i++) s->lw += w[s->cat_bins[i]];
    s->rw = (total & ~nmask) - (s->lw & ~nmask);
}

/* LightGBM's categorical split: with few categories, one category against the rest; otherwise
 * categories (with enough rows) sorted by g / (h + cat_smooth) and a prefix of that order from either
 * end, up to max_cat_threshold categories, goes left. The "other" bin (last) always goes right. */
void gbdt_split_find_categorical(const gbdt_split_ctx *g, const gbdt_hist_bin *h, int nb,
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
