/* Stable partition of a leaf's rows by a split: the rows whose bin goes left keep their order at the front of the
 * leaf's slice, the others keep theirs in a scratch array. Branch-free: a row's side is unpredictable. The loop is
 * bound by the latency of loading each row's bin from the split feature's column; SIMD versions (bins gathered,
 * or sides packed into a mask and rows moved by a permutation) measured no faster on AMD EPYC. */
#include "gbdt/gbdt_internal.h"

#define PARTITION_ROWS(name, bin_t)                                                                             \
    static void name(const bin_t *col, const uint8_t *left, int *rows, size_t i0, size_t i1, int *right,         \
                     size_t *pnl, size_t *pnr)                                                                  \
    {                                                                                                           \
        size_t nl = *pnl, nr = *pnr;                                                                            \
        for (size_t i = i0; i < i1; i++) {                                                                      \
            int r = rows[i];                                                                                    \
            size_t l = left[col[r]];                                                                            \
            rows[nl] = r;                                                                                       \
            right[nr] = r;                                                                                      \
            nl += l;                                                                                            \
            nr += 1 - l;                                                                                        \
        }                                                                                                       \
        *pnl = nl, *pnr = nr;                                                                                   \
    }
PARTITION_ROWS(partition_rows8, uint8_t)
PARTITION_ROWS(partition_rows16, uint16_t)

void gbdt_partition_rows(const uint8_t *goes_left, const void *col, int bin_bytes, int *rows, size_t i0, size_t i1,
                         int *right, size_t *nl, size_t *nr)
{
    if (bin_bytes == 1) partition_rows8(col, goes_left, rows, i0, i1, right, nl, nr);
    else partition_rows16(col, goes_left, rows, i0, i1, right, nl, nr);
}
