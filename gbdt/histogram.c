/* Gradient histograms: for each feature j and bin b, the sums of g, h and the row count over a leaf's
 * rows whose bin is b. Features whose rows all share one bin are left out. The bin matrix is row-major, so one pass over the leaf's rows reads each row's
 * bins from one cache line and adds its (g, h) to every feature's histogram. Large leaves are cut into
 * row blocks (boundaries depend only on the row count); blocks run in parallel into private histograms
 * which are then merged in block order, so every sum has one fixed order whatever the thread count. */
#include "gbdt/gbdt_internal.h"

#include <stdlib.h>
#include <string.h>

/* a block below this many rows costs more to merge than it saves */
#define HIST_MIN_BLOCK_ROWS 16384

int gbdt_hist_scratch_init(gbdt_hist_scratch *s, const gbdt_binned *bd)
{
    size_t total = bd->hist_offset[bd->d];
    size_t blocks = bd->n / HIST_MIN_BLOCK_ROWS;
    if (blocks > GBDT_HIST_MAX_BLOCKS) blocks = GBDT_HIST_MAX_BLOCKS;
    s->blocks = hr_malloc((blocks + 1) * GBDT_HIST_BYTES(total));
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

typedef struct hist_job {
    const gbdt_binned *bd;
    const int *rows;
    size_t nrows, nblocks;
    const double *gh;  /* (n, 2) */
    const int *features;
    const size_t *feat_offset; /* (nfeatures) histogram offset of each listed feature */
    int nfeatures;
    gbdt_hist_bin *hist;   /* block 0 */
    gbdt_hist_bin *blocks; /* blocks 1.. */
} hist_job;

static void hist_block(const hist_job *job, size_t blk)
{
    const gbdt_binned *bd = job->bd;
    size_t total = bd->hist_offset[bd->d], d = (size_t)bd->d;
    gbdt_hist_bin *h = blk == 0 ? job->hist
                                : (gbdt_hist_bin *)((char *)job->blocks + (blk - 1) * GBDT_HIST_BYTES(total));
    uint32_t *cnt = gbdt_hist_counts(h, total);
    const size_t *off = bd->hist_offset;
    const int *feats = job->features;
    int nf = job->nfeatures;
    for (int k = 0; k < nf; k++) {
        size_t o = off[feats[k]], nb = off[feats[k] + 1] - o;
        memset(h + o, 0, nb * sizeof *h);
        memset(cnt + o, 0, nb * sizeof *cnt);
    }
    size_t begin = job->nrows * blk / job->nblocks, end = job->nrows * (blk + 1) / job->nblocks;
    const size_t *foff = job->feat_offset;
    for (size_t i = begin; i < end; i++) {
        size_t r = (size_t)job->rows[i];
        double g = job->gh[2 * r], hh = job->gh[2 * r + 1];
        if (bd->bin_bytes == 1) {
            const uint8_t *row = (const uint8_t *)bd->bins + r * d;
            for (int k = 0; k < nf; k++) {
                size_t b = foff[k] + row[feats[k]];
                h[b].g += g;
                h[b].h += hh;
                cnt[b]++;
            }
        } else {
            const uint16_t *row = (const uint16_t *)bd->bins + r * d;
            for (int k = 0; k < nf; k++) {
                size_t b = foff[k] + row[feats[k]];
                h[b].g += g;
                h[b].h += hh;
                cnt[b]++;
            }
        }
    }
}

static void hist_range(void *ctx, size_t begin, size_t end, int tid)
{
    for (size_t blk = begin; blk < end; blk++) hist_block(ctx, blk);
}

int gbdt_hist_build(const gbdt_binned *bd, const int *rows, size_t nrows, const double *gh,
                    const uint8_t *used, int nthreads, gbdt_hist_scratch *scratch, gbdt_hist_bin *hist)
{
    int nf = 0;
    for (int j = 0; j < bd->d; j++)
        if ((!used || used[j]) && !bd->mappers[j].trivial) {
            scratch->offsets[nf] = bd->hist_offset[j];
            scratch->features[nf++] = j;
        }
    size_t nblocks = nrows / HIST_MIN_BLOCK_ROWS;
    size_t cap = bd->n / HIST_MIN_BLOCK_ROWS;
    if (cap > GBDT_HIST_MAX_BLOCKS) cap = GBDT_HIST_MAX_BLOCKS;
    if (nblocks > cap) nblocks = cap;
    if (nblocks < 1) nblocks = 1;
    hist_job job = {bd, rows, nrows, nblocks, gh, scratch->features, scratch->offsets, nf, hist, scratch->blocks};
    int rc = hr_parallel_for(nthreads, nblocks, hist_range, &job);
    if (rc) return rc;
    size_t total = bd->hist_offset[bd->d];
    uint32_t *cnt = gbdt_hist_counts(hist, total);
    for (size_t blk = 1; blk < nblocks; blk++) {
        const gbdt_hist_bin *src = (const gbdt_hist_bin *)((const char *)scratch->blocks + (blk - 1) * GBDT_HIST_BYTES(total));
        const uint32_t *scnt = gbdt_hist_counts(src, total);
        for (int k = 0; k < nf; k++) {
            int j = scratch->features[k];
            for (size_t b = bd->hist_offset[j]; b < bd->hist_offset[j + 1]; b++) {
                hist[b].g += src[b].g;
                hist[b].h += src[b].h;
                cnt[b] += scnt[b];
            }
        }
    }
    return HR_OK;
}

void gbdt_hist_subtract(gbdt_hist_bin *parent, const gbdt_hist_bin *smaller, const gbdt_binned *bd,
                        const uint8_t *used)
{
    size_t total = bd->hist_offset[bd->d];
    uint32_t *pc = gbdt_hist_counts(parent, total);
    const uint32_t *sc = gbdt_hist_counts(smaller, total);
    for (int j = 0; j < bd->d; j++) {
        if ((used && !used[j]) || bd->mappers[j].trivial) continue;
        for (size_t b = bd->hist_offset[j]; b < bd->hist_offset[j + 1]; b++) {
            parent[b].g -= smaller[b].g;
            parent[b].h -= smaller[b].h;
            pc[b] -= sc[b];
        }
    }
}
