/* Gradient histograms: for each feature j and bin b, the sums of g, h and the row count over a leaf's
 * rows whose bin is b. Features whose rows all share one bin are left out. The packed bin matrix is
 * row-major, so one pass over the leaf's rows reads each row's bins from one cache line and adds the row's
 * (g, h, 1, 0) to every column's bin as one 4-double vector; a bundle column's joint bins are then summed
 * into its features' histograms (hist_expand). Large leaves are cut into row blocks (boundaries depend
 * only on the row count); blocks run in parallel into private histograms which are then merged in block
 * order, so every sum has one fixed order whatever the thread count.
 * The K root histograms of a softmax iteration share their rows: gbdt_hist_build_classes reads each row's
 * bins once per group of 8 classes and adds 16 doubles (8 classes' g, h) to each of its bins, which costs
 * about what one class's pass costs. */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a block below this many rows costs more to merge than it saves */
#define HIST_MIN_BLOCK_ROWS 16384
/* a leaf's rows are scattered: the bins and gradients of the row this far ahead are fetched early */
#define HIST_PREFETCH_ROWS 8
/* doubles per bin in a class-group histogram: (g, h) of HIST_GROUP_CLASSES classes, 4 vectors */
#define HIST_GROUP_CLASSES 8
#define HIST_GROUP_LANES (2 * HIST_GROUP_CLASSES)

/* Four doubles added as one vector (AVX where the CPU has it, two SSE2 halves elsewhere: the same IEEE
 * additions in the same order either way). may_alias: it reads and writes the doubles of gbdt_hist_bin. */
typedef double hist_v4 __attribute__((vector_size(32), aligned(8), may_alias));


void *gbdt_hist_alloc(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!p) hr_error(HR_ENOMEM, "gbdt: out of memory for %zu bytes of histograms", bytes);
    return p;
}

int gbdt_hist_scratch_init(gbdt_hist_scratch *s, const gbdt_binned *bd)
{
    size_t total = bd->hist_total;
    size_t blocks = bd->n / HIST_MIN_BLOCK_ROWS;
    if (blocks > GBDT_HIST_MAX_BLOCKS) blocks = GBDT_HIST_MAX_BLOCKS;
    s->blocks = gbdt_hist_alloc((blocks + 1) * GBDT_HIST_BYTES(total));
    s->features = hr_malloc(((size_t)bd->d + 1) * sizeof *s->features);
    s->offsets = hr_malloc(((size_t)bd->d + 1) * sizeof *s->offsets);
    if (!s->blocks || !s->features || !s->offsets) {
        gbdt_hist_scratch_free(s);
        return HR_ENOMEM;
    }
    return HR_OK;
}

void gbdt_hist_scratch_free(gbdt_hist_scratch *s)
{
    free(s->blocks);
    free(s->features);
    free(s->offsets);
    s->blocks = NULL;
    s->features = NULL;
    s->offsets = NULL;
}

/* h[coff[c] + column c of the row] += (g, h, 1, 0) of each row in rows[begin..end) of the packed matrix */
#define HIST_ROWS(name, bin_t)                                                                                  \
    GBDT_SIMD_CLONES static void name(const bin_t *packed, size_t nc, const int *rows, size_t begin, size_t end,     \
                                 const double *gh, const size_t *coff, gbdt_hist_bin *h)                        \
    {                                                                                                           \
        for (size_t i = begin; i < end; i++) {                                                                  \
            size_t r = (size_t)rows[i];                                                                         \
            if (i + HIST_PREFETCH_ROWS < end) {                                                                 \
                size_t ahead = (size_t)rows[i + HIST_PREFETCH_ROWS];                                            \
                __builtin_prefetch(packed + ahead * nc);                                                        \
                __builtin_prefetch(packed + ahead * nc + nc - 1);                                               \
                __builtin_prefetch(gh + 2 * ahead);                                                             \
            }                                                                                                   \
            hist_v4 v = {gh[2 * r], gh[2 * r + 1], 1.0, 0.0};                                                   \
            const bin_t *row = packed + r * nc;                                                                 \
            for (size_t c = 0; c < nc; c++) *(hist_v4 *)&h[coff[c] + row[c]] += v;                              \
        }                                                                                                       \
    }
HIST_ROWS(hist_rows8, uint8_t)
HIST_ROWS(hist_rows16, uint16_t)

typedef struct hist_job {
    const gbdt_binned *bd;
    const int *rows;
    size_t nrows, nblocks;
    const double *gh;  /* (n, 2) */
    gbdt_hist_bin *hist;   /* block 0 */
    gbdt_hist_bin *blocks; /* blocks 1.. */
} hist_job;

/* zeroes the bins that columns add to */
static void hist_zero_columns(const gbdt_binned *bd, gbdt_hist_bin *h)
{
    for (int c = 0; c < bd->ncols; c++) memset(h + bd->col_offset[c], 0, (size_t)bd->col_nbins[c] * sizeof *h);
}

static void hist_block(const hist_job *job, size_t blk)
{
    const gbdt_binned *bd = job->bd;
    gbdt_hist_bin *h = blk == 0 ? job->hist : job->blocks + (blk - 1) * bd->hist_total;
    hist_zero_columns(bd, h);
    size_t begin = job->nrows * blk / job->nblocks, end = job->nrows * (blk + 1) / job->nblocks;
    if (bd->pack_bytes == 1)
        hist_rows8(bd->packed, (size_t)bd->ncols, job->rows, begin, end, job->gh, bd->col_offset, h);
    else
        hist_rows16(bd->packed, (size_t)bd->ncols, job->rows, begin, end, job->gh, bd->col_offset, h);
}

static void hist_range(void *ctx, size_t begin, size_t end, int tid)
{
    for (size_t blk = begin; blk < end; blk++) hist_block(ctx, blk);
}

GBDT_SIMD_CLONES static void hist_add(gbdt_hist_bin *dst, const gbdt_hist_bin *src, size_t nb)
{
    for (size_t b = 0; b < nb; b++) *(hist_v4 *)&dst[b] += *(const hist_v4 *)&src[b];
}

GBDT_SIMD_CLONES static void hist_sub(gbdt_hist_bin *dst, const gbdt_hist_bin *src, size_t nb)
{
    for (size_t b = 0; b < nb; b++) *(hist_v4 *)&dst[b] -= *(const hist_v4 *)&src[b];
}

/* the digits (v / stride[f]) % radix[f] of the joint bin after v, from those of v: the bundle's strides are the
 * places of a mixed-radix number, feature 0 the lowest (bin.c), so counting up replaces a division per digit */
static inline void bundle_digits_next(const gbdt_bundle *bu, int *digit)
{
    for (int f = 0; f < bu->nfeatures && ++digit[f] == bu->radix[f]; f++) digit[f] = 0;
}

/* the bundled features' histograms from their bundles' joint bins: feature f's bin b sums the joint bins
 * whose digit for f is b */
static void hist_expand(const gbdt_binned *bd, gbdt_hist_bin *h)
{
    for (int b = 0; b < bd->nbundles; b++) {
        const gbdt_bundle *bu = &bd->bundles[b];
        size_t base[GBDT_BUNDLE_MAX_FEATURES];
        int digit[GBDT_BUNDLE_MAX_FEATURES] = {0};
        for (int f = 0; f < bu->nfeatures; f++) {
            size_t o = base[f] = bd->hist_offset[bu->feature[f]];
            memset(h + o, 0, (bd->hist_offset[bu->feature[f] + 1] - o) * sizeof *h);
        }
        for (int v = 0; v < bu->nbins; v++, bundle_digits_next(bu, digit)) {
            const gbdt_hist_bin *e = &h[bu->offset + (size_t)v];
            if (e->n == 0) continue;
            for (int f = 0; f < bu->nfeatures; f++) {
                size_t t = base[f] + (size_t)digit[f];
                h[t].g += e->g;
                h[t].h += e->h;
                h[t].n += e->n;
            }
        }
    }
}

int gbdt_hist_build(const gbdt_binned *bd, const int *rows, size_t nrows, const double *gh,
                    const uint8_t *used, int nthreads, gbdt_hist_scratch *scratch, gbdt_hist_bin *hist)
{
    size_t nblocks = nrows / HIST_MIN_BLOCK_ROWS;
    size_t cap = bd->n / HIST_MIN_BLOCK_ROWS;
    if (cap > GBDT_HIST_MAX_BLOCKS) cap = GBDT_HIST_MAX_BLOCKS;
    if (nblocks > cap) nblocks = cap;
    if (nblocks < 1) nblocks = 1;
    hist_job job = {bd, rows, nrows, nblocks, gh, hist, scratch->blocks};
    int rc = hr_parallel_for(nthreads, nblocks, hist_range, &job);
    if (rc) return rc;
    for (size_t blk = 1; blk < nblocks; blk++) {
        const gbdt_hist_bin *src = scratch->blocks + (blk - 1) * bd->hist_total;
        for (int c = 0; c < bd->ncols; c++)
            hist_add(hist + bd->col_offset[c], src + bd->col_offset[c], (size_t)bd->col_nbins[c]);
    }
    hist_expand(bd, hist);
    return HR_OK;
}

void gbdt_hist_subtract(gbdt_hist_bin *parent, const gbdt_hist_bin *smaller, const gbdt_binned *bd,
                        const uint8_t *used)
{
    for (int j = 0; j < bd->d; j++) {
        if ((used && !used[j]) || bd->mappers[j].trivial) continue;
        size_t o = bd->hist_offset[j];
        hist_sub(parent + o, smaller + o, bd->hist_offset[j + 1] - o);
    }
}

/* ---- the K histograms of one row set ---- */

/* J[(coff[c] + column c of the row) * 16 + lane] += the row's 16 lanes: (g, h) of the group's classes
 * ghk[k] (n, 2), and when count_lane >= 0 a 1 in that lane; lanes past them stay 0 */
#define HIST_GROUP_ROWS(name, bin_t)                                                                            \
    GBDT_SIMD_CLONES static void name(const bin_t *packed, size_t nc, const int *rows, size_t nrows,                 \
                                 const double *const *ghk, int nk, int count_lane, const size_t *coff,          \
                                 double *J)                                                                     \
    {                                                                                                           \
        double lane[HIST_GROUP_LANES];                                                                          \
        memset(lane, 0, sizeof lane);                                                                           \
        if (count_lane >= 0) lane[count_lane] = 1.0;                                                            \
        for (size_t i = 0; i < nrows; i++) {                                                                    \
            size_t r = (size_t)rows[i];                                                                         \
            for (int k = 0; k < nk; k++) {                                                                      \
                lane[2 * k] = ghk[k][2 * r];                                                                    \
                lane[2 * k + 1] = ghk[k][2 * r + 1];                                                            \
            }                                                                                                   \
            hist_v4 v0 = *(const hist_v4 *)&lane[0], v1 = *(const hist_v4 *)&lane[4];                           \
            hist_v4 v2 = *(const hist_v4 *)&lane[8], v3 = *(const hist_v4 *)&lane[12];                          \
            const bin_t *row = packed + r * nc;                                                                 \
            for (size_t c = 0; c < nc; c++) {                                                                   \
                hist_v4 *p = (hist_v4 *)(J + (coff[c] + row[c]) * HIST_GROUP_LANES);                            \
                p[0] += v0;                                                                                     \
                p[1] += v1;                                                                                     \
                p[2] += v2;                                                                                     \
                p[3] += v3;                                                                                     \
            }                                                                                                   \
        }                                                                                                       \
    }
HIST_GROUP_ROWS(hist_group_rows8, uint8_t)
HIST_GROUP_ROWS(hist_group_rows16, uint16_t)

typedef struct classes_job {
    const gbdt_binned *bd;
    const int *rows;
    size_t nrows;
    const double *gh; /* (K, n, 2) */
    int K, per_group, count_group, count_lane; /* classes per group; the row count's group and lane */
    double **J;       /* (nthreads) group histograms, (hist_total, HIST_GROUP_LANES) */
    double *counts;   /* (hist_total) row counts */
    gbdt_hist_bin *const *hists;
} classes_job;

static void classes_range(void *ctx, size_t begin, size_t end, int tid)
{
    const classes_job *job = ctx;
    const gbdt_binned *bd = job->bd;
    size_t n = bd->n;
    double *J = job->J[tid];
    for (size_t grp = begin; grp < end; grp++) {
        int k0 = (int)grp * job->per_group, nk = job->K - k0;
        if (nk > job->per_group) nk = job->per_group;
        if (nk < 0) nk = 0;
        const double *ghk[HIST_GROUP_CLASSES];
        for (int k = 0; k < nk; k++) ghk[k] = job->gh + 2 * (size_t)(k0 + k) * n;
        int count_lane = (int)grp == job->count_group ? job->count_lane : -1;
        for (int c = 0; c < bd->ncols; c++)
            memset(J + bd->col_offset[c] * HIST_GROUP_LANES, 0,
                   (size_t)bd->col_nbins[c] * HIST_GROUP_LANES * sizeof *J);
        if (bd->pack_bytes == 1)
            hist_group_rows8(bd->packed, (size_t)bd->ncols, job->rows, job->nrows, ghk, nk, count_lane,
                             bd->col_offset, J);
        else
            hist_group_rows16(bd->packed, (size_t)bd->ncols, job->rows, job->nrows, ghk, nk, count_lane,
                              bd->col_offset, J);
        for (int k = 0; k < nk; k++) {
            gbdt_hist_bin *h = job->hists[k0 + k];
            for (int c = 0; c < bd->ncols; c++)
                for (size_t b = bd->col_offset[c]; b < bd->col_offset[c] + (size_t)bd->col_nbins[c]; b++) {
                    h[b].g = J[b * HIST_GROUP_LANES + 2 * k];
                    h[b].h = J[b * HIST_GROUP_LANES + 2 * k + 1];
                    h[b].pad = 0;
                }
        }
        if (count_lane >= 0)
            for (int c = 0; c < bd->ncols; c++)
                for (size_t b = bd->col_offset[c]; b < bd->col_offset[c] + (size_t)bd->col_nbins[c]; b++)
                    job->counts[b] = J[b * HIST_GROUP_LANES + count_lane];
    }
}

typedef struct expand_job {
    const gbdt_binned *bd;
    const double *counts;
    gbdt_hist_bin *const *hists;
} expand_job;

static void expand_range(void *ctx, size_t begin, size_t end, int tid)
{
    const expand_job *job = ctx;
    const gbdt_binned *bd = job->bd;
    for (size_t k = begin; k < end; k++) {
        gbdt_hist_bin *h = job->hists[k];
        for (int c = 0; c < bd->ncols; c++)
            for (size_t b = bd->col_offset[c]; b < bd->col_offset[c] + (size_t)bd->col_nbins[c]; b++)
                h[b].n = job->counts[b];
        hist_expand(bd, h);
    }
}

int gbdt_hist_build_classes(const gbdt_binned *bd, const int *rows, size_t nrows, const double *gh, int K,
                            int nthreads, gbdt_hist_bin *const *hists)
{
    /* as few groups as the lanes allow, rounded up to a multiple of the threads so that they share the
     * groups evenly (a class's sums are the same in any group); the row count rides in the lane after the
     * last class's (g, h), in a group of its own if the last group is full */
    nthreads = hr_threads_resolve(nthreads);
    int ngroups = (2 * K + HIST_GROUP_LANES - 1) / HIST_GROUP_LANES;
    if (ngroups > nthreads) ngroups = (ngroups + nthreads - 1) / nthreads * nthreads;
    else if (nthreads <= K) ngroups = nthreads;
    int per_group = (K + ngroups - 1) / ngroups;
    ngroups = (K + per_group - 1) / per_group;
    int last = K - (ngroups - 1) * per_group, count_group = ngroups - 1, count_lane = 2 * last;
    if (count_lane >= HIST_GROUP_LANES) count_group = ngroups++, count_lane = 0;
    int nt = nthreads < ngroups ? nthreads : ngroups;
    double *counts = hr_malloc((bd->hist_total + 1) * sizeof *counts);
    double **J = hr_calloc((size_t)nt, sizeof *J);
    int rc = counts && J ? HR_OK : HR_ENOMEM;
    for (int t = 0; t < nt && rc == HR_OK; t++)
        if (!(J[t] = gbdt_hist_alloc((bd->hist_total + 1) * HIST_GROUP_LANES * sizeof(double)))) rc = HR_ENOMEM;
    if (rc == HR_OK) {
        classes_job job = {bd, rows, nrows, gh, K, per_group, count_group, count_lane, J, counts, hists};
        rc = hr_parallel_for(nt, (size_t)ngroups, classes_range, &job);
    }
    if (rc == HR_OK) {
        expand_job job = {bd, counts, hists};
        rc = hr_parallel_for(nthreads, (size_t)K, expand_range, &job);
    }
    for (int t = 0; J && t < nt; t++) free(J[t]);
    free(J);
    free(counts);
    return rc;
}

int gbdt_hist_allreduce(const hr_comm *comm, const gbdt_binned *bd, gbdt_hist_bin *const *hists, int nh,
                        const int *ue)
{
    if (!gbdt_comm_active(comm) || nh <= 0) return HR_OK;
    /* (g, h, n) of every bin as counts of grid steps, in one message; the padding lane stays home */
    size_t nb = bd->hist_total, n = 3 * nb * (size_t)nh;
    int64_t *v = hr_malloc((n + 1) * sizeof *v);
    if (!v) return HR_ENOMEM;
    /* products by powers of two: exact, and far cheaper than ldexp */
    for (int k = 0; k < nh; k++) {
        const gbdt_hist_bin *h = hists[k];
        double sg = ldexp(1.0, -ue[2 * k]), sh = ldexp(1.0, -ue[2 * k + 1]);
        for (size_t b = 0; b < nb; b++) {
            int64_t *o = v + 3 * ((size_t)k * nb + b);
            o[0] = (int64_t)(h[b].g * sg), o[1] = (int64_t)(h[b].h * sh), o[2] = (int64_t)h[b].n;
        }
    }
    int rc = comm->allreduce_i64(comm->ctx, v, n, HR_REDUCE_SUM);
    for (int k = 0; k < nh && rc == HR_OK; k++) {
        gbdt_hist_bin *h = hists[k];
        double ug = ldexp(1.0, ue[2 * k]), uh = ldexp(1.0, ue[2 * k + 1]);
        for (size_t b = 0; b < nb; b++) {
            const int64_t *o = v + 3 * ((size_t)k * nb + b);
            h[b].g = (double)o[0] * ug, h[b].h = (double)o[1] * uh, h[b].n = (double)o[2];
        }
    }
    free(v);
    return rc;
}

/* ---- quantized histograms (quantized_grad): one 64-bit word a bin, the sum of the rows' packed words ---- */

/* a block of rows whose words are summed on their own (integers: the sum is the same in any order) */
#define QHIST_MIN_BLOCK_ROWS 16384
/* leaves below this many rows are summed into one histogram, not a pair (2x faster below 128 rows, 1.2x at a
 * few hundred; about even from 2048 up) */
#define QHIST_ONE_HIST_ROWS 2048
/* classes of a group in gbdt_qhist_build_classes: a bin holds 16 words, 128 bytes, as a float group bin */
#define QHIST_GROUP_CLASSES 16

typedef uint64_t qhist_u4 __attribute__((vector_size(32), aligned(8), may_alias));

/* h[coff[c] + column c of the row] += the row's word, for each row in rows[begin..end). Rows go in pairs, the
 * second row of a pair into a second histogram h2 (added to h at the end; h2 = h sums into one): within a leaf
 * neighbouring rows often share a bin, and one histogram would chain their read-modify-writes of it, each waiting
 * for the last store. */
#define QHIST_ROWS(name, bin_t)                                                                                 \
    GBDT_SIMD_CLONES static void name(const bin_t *packed, size_t nc, const int *rows, size_t begin, size_t end,     \
                                 const uint16_t *qc, int hs, int gs, const size_t *coff, uint64_t *h,           \
                                 uint64_t *h2)                                                                  \
    {                                                                                                           \
        size_t i = begin;                                                                                       \
        for (; i + 1 < end; i += 2) {                                                                           \
            size_t r0 = (size_t)rows[i], r1 = (size_t)rows[i + 1];                                              \
            if (i + HIST_PREFETCH_ROWS + 1 < end) {                                                             \
                size_t a0 = (size_t)rows[i + HIST_PREFETCH_ROWS], a1 = (size_t)rows[i + HIST_PREFETCH_ROWS + 1]; \
                __builtin_prefetch(packed + a0 * nc);                                                           \
                __builtin_prefetch(packed + a0 * nc + nc - 1);                                                  \
                __builtin_prefetch(packed + a1 * nc);                                                           \
                __builtin_prefetch(packed + a1 * nc + nc - 1);                                                  \
                __builtin_prefetch(qc + a0);                                                                    \
                __builtin_prefetch(qc + a1);                                                                    \
            }                                                                                                   \
            uint64_t w0 = gbdt_qgrad_word(qc[r0], hs, gs), w1 = gbdt_qgrad_word(qc[r1], hs, gs);                \
            const bin_t *row0 = packed + r0 * nc, *row1 = packed + r1 * nc;                                     \
            for (size_t c = 0; c < nc; c++) {                                                                   \
                size_t o = coff[c];                                                                             \
                h[o + row0[c]] += w0;                                                                           \
                h2[o + row1[c]] += w1;                                                                          \
            }                                                                                                   \
        }                                                                                                       \
        for (; i < end; i++) {                                                                                  \
            size_t r = (size_t)rows[i];                                                                         \
            const bin_t *row = packed + r * nc;                                                                 \
            uint64_t w = gbdt_qgrad_word(qc[r], hs, gs);                                                        \
            for (size_t c = 0; c < nc; c++) h[coff[c] + row[c]] += w;                                           \
        }                                                                                                       \
    }
QHIST_ROWS(qhist_rows8, uint8_t)
QHIST_ROWS(qhist_rows16, uint16_t)

static void qhist_zero_columns(const gbdt_binned *bd, uint64_t *h)
{
    for (int c = 0; c < bd->ncols; c++) memset(h + bd->col_offset[c], 0, (size_t)bd->col_nbins[c] * sizeof *h);
}

typedef struct qhist_job {
    const gbdt_binned *bd;
    const int *rows;
    size_t nrows, nblocks;
    const uint16_t *qc;
    int hs, gs;
    uint64_t *hist, *scratch; /* block 0's histogram; block b's second one at scratch + b total, b >= 1's own
                               * at scratch + (nblocks + b - 1) total */
} qhist_job;

static void qhist_range(void *ctx, size_t begin, size_t end, int tid)
{
    const qhist_job *job = ctx;
    const gbdt_binned *bd = job->bd;
    for (size_t blk = begin; blk < end; blk++) {
        uint64_t *h = blk == 0 ? job->hist : job->scratch + (job->nblocks + blk - 1) * bd->hist_total;
        uint64_t *h2 = job->scratch + blk * bd->hist_total;
        qhist_zero_columns(bd, h);
        qhist_zero_columns(bd, h2);
        size_t b0 = job->nrows * blk / job->nblocks, b1 = job->nrows * (blk + 1) / job->nblocks;
        if (bd->pack_bytes == 1)
            qhist_rows8(bd->packed, (size_t)bd->ncols, job->rows, b0, b1, job->qc, job->hs, job->gs, bd->col_offset, h, h2);
        else
            qhist_rows16(bd->packed, (size_t)bd->ncols, job->rows, b0, b1, job->qc, job->hs, job->gs, bd->col_offset, h, h2);
        for (int c = 0; c < bd->ncols; c++)
            for (size_t b = bd->col_offset[c]; b < bd->col_offset[c] + (size_t)bd->col_nbins[c]; b++) h[b] += h2[b];
    }
}

/* A small leaf (< QHIST_ONE_HIST_ROWS rows) into hist alone: zeroing a second histogram of thousands of bins and
 * adding it in costs more than the chained read-modify-writes it saves. */
static void qhist_small(const gbdt_binned *bd, const int *rows, size_t nrows, const uint16_t *qc, int hs, int gs,
                        uint64_t *hist)
{
    qhist_zero_columns(bd, hist);
    if (bd->pack_bytes == 1)
        qhist_rows8(bd->packed, (size_t)bd->ncols, rows, 0, nrows, qc, hs, gs, bd->col_offset, hist, hist);
    else
        qhist_rows16(bd->packed, (size_t)bd->ncols, rows, 0, nrows, qc, hs, gs, bd->col_offset, hist, hist);
}

int gbdt_qhist_build(const gbdt_binned *bd, const int *rows, size_t nrows, const uint16_t *qc, const gbdt_qgrad *q,
                     int nthreads, gbdt_hist_scratch *scratch, uint64_t *hist)
{
    if (nrows < QHIST_ONE_HIST_ROWS) {
        qhist_small(bd, rows, nrows, qc, q->n_bits, q->n_bits + q->h_bits, hist);
        return HR_OK;
    }
    nthreads = hr_threads_resolve(nthreads);
    size_t nblocks = nrows / QHIST_MIN_BLOCK_ROWS, cap = bd->n / QHIST_MIN_BLOCK_ROWS;
    if (cap > GBDT_HIST_MAX_BLOCKS) cap = GBDT_HIST_MAX_BLOCKS;
    if (nblocks > cap) nblocks = cap;
    if (nblocks > (size_t)nthreads) nblocks = (size_t)nthreads; /* any split gives the same sums */
    if (nblocks < 1) nblocks = 1;
    /* the scratch holds 4 (blocks + 1) word histograms, blocks >= nblocks - 1: the 2 nblocks - 1 needed fit */
    qhist_job job = {bd, rows, nrows, nblocks, qc, q->n_bits, q->n_bits + q->h_bits, hist, (uint64_t *)scratch->blocks};
    int rc = hr_parallel_for(nthreads, nblocks, qhist_range, &job);
    if (rc) return rc;
    for (size_t blk = 1; blk < nblocks; blk++) {
        const uint64_t *src = job.scratch + (nblocks + blk - 1) * bd->hist_total;
        for (int c = 0; c < bd->ncols; c++)
            for (size_t b = bd->col_offset[c]; b < bd->col_offset[c] + (size_t)bd->col_nbins[c]; b++) hist[b] += src[b];
    }
    return HR_OK;
}

void gbdt_qhist_subtract(uint64_t *parent, const uint64_t *smaller, const gbdt_binned *bd)
{
    for (int c = 0; c < bd->ncols; c++)
        for (size_t b = bd->col_offset[c]; b < bd->col_offset[c] + (size_t)bd->col_nbins[c]; b++)
            parent[b] -= smaller[b];
}

/* A bundle's joint bin is a mixed-radix number with feature 0 its lowest digit (bin.c): feature 0's bin d sums
 * the joint bins v with v % radix[0] = d, and each run of radix[0] joint bins, summed, is one joint bin of the
 * features after it. So each feature's bins come from one pass over the run sums of the one before, a pass
 * radix times shorter than the last. Integer sums: any order gives the same words. */
void gbdt_qhist_expand(const gbdt_binned *bd, uint64_t *h)
{
    uint64_t runs[2][GBDT_BUNDLE_MAX_BINS];
    for (int b = 0; b < bd->nbundles; b++) {
        const gbdt_bundle *bu = &bd->bundles[b];
        const uint64_t *s = h + bu->offset;
        int len = bu->nbins;
        for (int f = 0; f < bu->nfeatures; f++) {
            size_t o = bd->hist_offset[bu->feature[f]];
            uint64_t *hf = h + o, *next = runs[f & 1];
            memset(hf, 0, (bd->hist_offset[bu->feature[f] + 1] - o) * sizeof *h);
            int r = bu->radix[f];
            for (int v = 0; v < len / r; v++) {
                uint64_t acc = 0;
                for (int d = 0; d < r; d++) {
                    hf[d] += s[v * r + d];
                    acc += s[v * r + d];
                }
                next[v] = acc;
            }
            s = next;
            len /= r;
        }
    }
}

void gbdt_qhist_unpack_range(const uint64_t *q, size_t nb, const gbdt_qgrad *lay, gbdt_hist_bin *out)
{
    for (size_t b = 0; b < nb; b++) {
        uint64_t v = q[b];
        out[b].g = (double)gbdt_qgrad_g(lay, v) * lay->gscale;
        out[b].h = (double)gbdt_qgrad_h(lay, v) * lay->hscale;
        out[b].n = (double)gbdt_qgrad_n(lay, v);
        out[b].pad = 0;
    }
}

void gbdt_qhist_unpack(const gbdt_binned *bd, uint64_t *q, const gbdt_qgrad *lay, gbdt_hist_bin *out)
{
    gbdt_qhist_expand(bd, q);
    for (int j = 0; j < bd->d; j++)
        if (!bd->mappers[j].trivial)
            gbdt_qhist_unpack_range(q + bd->hist_offset[j], bd->hist_offset[j + 1] - bd->hist_offset[j], lay,
                                    out + bd->hist_offset[j]);
}

/* J[(coff[c] + column c of the row) * 16 + k] += the word of class k of the group, of code qck[k][r] with fields at
 * hs[k], gs[k]; lanes past nk stay 0 */
#define QHIST_GROUP_ROWS(name, bin_t)                                                                           \
    GBDT_SIMD_CLONES static void name(const bin_t *packed, size_t nc, const int *rows, size_t nrows,                 \
                                 const uint16_t *const *qck, const int *hs, const int *gs, int nk,              \
                                 const size_t *coff, uint64_t *J)                                               \
    {                                                                                                           \
        uint64_t lane[QHIST_GROUP_CLASSES];                                                                     \
        memset(lane, 0, sizeof lane);                                                                           \
        for (size_t i = 0; i < nrows; i++) {                                                                    \
            size_t r = (size_t)rows[i];                                                                         \
            for (int k = 0; k < nk; k++) lane[k] = gbdt_qgrad_word(qck[k][r], hs[k], gs[k]);                    \
            qhist_u4 v0 = *(const qhist_u4 *)&lane[0], v1 = *(const qhist_u4 *)&lane[4];                        \
            qhist_u4 v2 = *(const qhist_u4 *)&lane[8], v3 = *(const qhist_u4 *)&lane[12];                       \
            const bin_t *row = packed + r * nc;                                                                 \
            for (size_t c = 0; c < nc; c++) {                                                                   \
                qhist_u4 *p = (qhist_u4 *)(J + (coff[c] + row[c]) * QHIST_GROUP_CLASSES);                       \
                p[0] += v0;                                                                                     \
                p[1] += v1;                                                                                     \
                p[2] += v2;                                                                                     \
                p[3] += v3;                                                                                     \
            }                                                                                                   \
        }                                                                                                       \
    }
QHIST_GROUP_ROWS(qhist_group_rows8, uint8_t)
QHIST_GROUP_ROWS(qhist_group_rows16, uint16_t)

typedef struct qclasses_job {
    const gbdt_binned *bd;
    const int *rows;
    size_t nrows;
    const uint16_t *qc; /* (classes, n) */
    const gbdt_qgrad *q; /* (classes) */
    const int *cls;     /* (K) the classes built */
    int K, per_group;
    uint64_t **J;       /* (nthreads) group histograms, (hist_total, QHIST_GROUP_CLASSES) */
    uint64_t *const *hists;
} qclasses_job;

static void qclasses_range(void *ctx, size_t begin, size_t end, int tid)
{
    const qclasses_job *job = ctx;
    const gbdt_binned *bd = job->bd;
    uint64_t *J = job->J[tid];
    for (size_t grp = begin; grp < end; grp++) {
        int k0 = (int)grp * job->per_group, nk = job->K - k0;
        if (nk > job->per_group) nk = job->per_group;
        if (nk <= 0) continue;
        const uint16_t *qck[QHIST_GROUP_CLASSES];
        int hs[QHIST_GROUP_CLASSES], gs[QHIST_GROUP_CLASSES];
        for (int k = 0; k < nk; k++) {
            int c = job->cls[k0 + k];
            qck[k] = job->qc + (size_t)c * bd->n;
            hs[k] = job->q[c].n_bits;
            gs[k] = job->q[c].n_bits + job->q[c].h_bits;
        }
        for (int c = 0; c < bd->ncols; c++)
            memset(J + bd->col_offset[c] * QHIST_GROUP_CLASSES, 0,
                   (size_t)bd->col_nbins[c] * QHIST_GROUP_CLASSES * sizeof *J);
        if (bd->pack_bytes == 1)
            qhist_group_rows8(bd->packed, (size_t)bd->ncols, job->rows, job->nrows, qck, hs, gs, nk, bd->col_offset, J);
        else
            qhist_group_rows16(bd->packed, (size_t)bd->ncols, job->rows, job->nrows, qck, hs, gs, nk, bd->col_offset, J);
        for (int k = 0; k < nk; k++) {
            uint64_t *h = job->hists[job->cls[k0 + k]];
            for (int c = 0; c < bd->ncols; c++)
                for (size_t b = bd->col_offset[c]; b < bd->col_offset[c] + (size_t)bd->col_nbins[c]; b++)
                    h[b] = J[b * QHIST_GROUP_CLASSES + (size_t)k];
        }
    }
}

int gbdt_qhist_build_classes(const gbdt_binned *bd, const int *rows, size_t nrows, const uint16_t *qc,
                             const gbdt_qgrad *q, const int *cls, int K, int nthreads, uint64_t *const *hists)
{
    /* as few groups as the lanes allow, as many as the threads when there are classes enough for them */
    nthreads = hr_threads_resolve(nthreads);
    int ngroups = (K + QHIST_GROUP_CLASSES - 1) / QHIST_GROUP_CLASSES;
    if (ngroups > nthreads) ngroups = (ngroups + nthreads - 1) / nthreads * nthreads;
    else ngroups = nthreads <= K ? nthreads : K;
    int per_group = (K + ngroups - 1) / ngroups;
    ngroups = (K + per_group - 1) / per_group;
    int nt = nthreads < ngroups ? nthreads : ngroups;
    uint64_t **J = hr_calloc((size_t)nt, sizeof *J);
    int rc = J ? HR_OK : HR_ENOMEM;
    for (int t = 0; t < nt && rc == HR_OK; t++)
        if (!(J[t] = gbdt_hist_alloc((bd->hist_total + 1) * QHIST_GROUP_CLASSES * sizeof(uint64_t)))) rc = HR_ENOMEM;
    if (rc == HR_OK) {
        qclasses_job job = {bd, rows, nrows, qc, q, cls, K, per_group, J, hists};
        rc = hr_parallel_for(nt, (size_t)ngroups, qclasses_range, &job);
    }
    for (int t = 0; J && t < nt; t++) free(J[t]);
    free(J);
    return rc;
}
