/* Gradient histograms: for each feature j and bin b, the sums of g, h and the row count over a leaf's
 * rows whose bin is b. Gradients are first gathered in the leaf's row order, then each feature's column
 * is scanned by one thread, so every sum is accumulated in one fixed order whatever the thread count. */
#include "gbdt/gbdt_internal.h"

#include <string.h>

typedef struct hist_job {
    const gbdt_binned *bd;
    const int *rows;
    size_t nrows;
    const double *ordered; /* (nrows, 2) */
    const uint8_t *used;
    gbdt_hist_bin *hist;
} hist_job;

static void hist_range(void *ctx, size_t begin, size_t end, int tid)
{
    const hist_job *job = ctx;
    const gbdt_binned *bd = job->bd;
    for (size_t j = begin; j < end; j++) {
        if (job->used && !job->used[j]) continue;
        gbdt_hist_bin *h = job->hist + bd->hist_offset[j];
        memset(h, 0, (bd->hist_offset[j + 1] - bd->hist_offset[j]) * sizeof *h);
        const double *gh = job->ordered;
        if (bd->bin_bytes == 1) {
            const uint8_t *col = (const uint8_t *)bd->bins + j * bd->n;
            for (size_t i = 0; i < job->nrows; i++) {
                gbdt_hist_bin *e = &h[col[job->rows[i]]];
                e->g += gh[2 * i];
                e->h += gh[2 * i + 1];
                e->n++;
            }
        } else {
            const uint16_t *col = (const uint16_t *)bd->bins + j * bd->n;
            for (size_t i = 0; i < job->nrows; i++) {
                gbdt_hist_bin *e = &h[col[job->rows[i]]];
                e->g += gh[2 * i];
                e->h += gh[2 * i + 1];
                e->n++;
            }
        }
    }
}

int gbdt_hist_build(const gbdt_binned *bd, const int *rows, size_t nrows, const double *gh,
                    const uint8_t *used, int nthreads, double *ordered, gbdt_hist_bin *hist)
{
    for (size_t i = 0; i < nrows; i++) {
        ordered[2 * i] = gh[2 * (size_t)rows[i]];
        ordered[2 * i + 1] = gh[2 * (size_t)rows[i] + 1];
    }
    hist_job job = {bd, rows, nrows, ordered, used, hist};
    /* small leaves are not worth a thread start */
    if (nrows < 2048) nthreads = 1;
    return hr_parallel_for(nthreads, (size_t)bd->d, hist_range, &job);
}

void gbdt_hist_subtract(gbdt_hist_bin *parent, const gbdt_hist_bin *smaller, const gbdt_binned *bd,
                        const uint8_t *used)
{
    for (int j = 0; j < bd->d; j++) {
        if (used && !used[j]) continue;
        for (size_t b = bd->hist_offset[j]; b < bd->hist_offset[j + 1]; b++) {
            parent[b].g -= smaller[b].g;
            parent[b].h -= smaller[b].h;
            parent[b].n -= smaller[b].n;
        }
    }
}
