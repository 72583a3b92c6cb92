/* Stable partition of a leaf's rows by a split: the rows whose bin goes left keep their order at the front of the
 * leaf's slice, the others keep theirs in a scratch array. With AVX2 (picked at run time) eight rows at a time:
 * their bins gathered from the split feature's column, their sides from a table of 32-bit flags, and each side's
 * rows packed to the front of a vector by a permutation looked up from the 8-bit mask of sides, then stored whole
 * (the lanes past a side's count are overwritten by the next store or lie past the slice). Either way the same
 * rows in the same order. */
#include "gbdt/gbdt_internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#include <immintrin.h>
#define PARTITION_AVX2 1
#endif

int gbdt_partition_init(gbdt_partition *pt, int max_bins)
{
    memset(pt, 0, sizeof *pt);
    pt->perm = aligned_alloc(32, 256 * sizeof *pt->perm);
    pt->left32 = hr_calloc((size_t)(max_bins > 256 ? max_bins : 256) + 1, sizeof *pt->left32);
    if (!pt->perm || !pt->left32) {
        gbdt_partition_free(pt);
        return hr_error(HR_ENOMEM, "gbdt: out of memory for the row partition");
    }
    /* perm[m] lists the lanes whose bit is set in m, in order, then the others */
    for (int m = 0; m < 256; m++) {
        int k = 0;
        for (int j = 0; j < 8; j++)
            if (m >> j & 1) pt->perm[m][k++] = j;
        for (int j = 0; j < 8; j++)
            if (!(m >> j & 1)) pt->perm[m][k++] = j;
    }
    return HR_OK;
}

void gbdt_partition_free(gbdt_partition *pt)
{
    free(pt->perm);
    free(pt->left32);
    pt->perm = NULL;
    pt->left32 = NULL;
}

void gbdt_partition_set(gbdt_partition *pt, const uint8_t *goes_left, int nb)
{
    for (int b = 0; b < nb; b++) pt->left32[b] = goes_left[b] ? -1 : 0;
}

#define PARTITION_SCALAR(name, bin_t)                                                                           \
    static void name(const bin_t *col, const int32_t *left, int *rows, size_t i0, size_t i1, int *right,         \
                     size_t *pnl, size_t *pnr)                                                                  \
    {                                                                                                           \
        size_t nl = *pnl, nr = *pnr;                                                                            \
        for (size_t i = i0; i < i1; i++) { /* branch-free: the side of a row is unpredictable */                \
            int r = rows[i];                                                                                    \
            size_t l = (size_t)(left[col[r]] & 1);                                                              \
            rows[nl] = r;                                                                                       \
            right[nr] = r;                                                                                      \
            nl += l;                                                                                            \
            nr += 1 - l;                                                                                        \
        }                                                                                                       \
        *pnl = nl, *pnr = nr;                                                                                   \
    }
PARTITION_SCALAR(partition_scalar8, uint8_t)
PARTITION_SCALAR(partition_scalar16, uint16_t)

#ifdef PARTITION_AVX2
/* col needs 3 readable bytes past its last row's bin (gbdt_binned pads its columns) */
__attribute__((target("avx2"))) static void partition_avx2(const uint8_t *col, const int32_t *left,
                                                           const int32_t (*perm)[8], int *rows, size_t i0, size_t i1,
                                                           int *right, size_t *pnl, size_t *pnr)
{
    size_t nl = *pnl, nr = *pnr, i = i0;
    const __m256i low = _mm256_set1_epi32(0xff);
    for (; i + 8 <= i1; i += 8) {
        __m256i idx = _mm256_loadu_si256((const __m256i *)(rows + i));
        __m256i bin = _mm256_and_si256(_mm256_i32gather_epi32((const int *)col, idx, 1), low);
        __m256i side = _mm256_i32gather_epi32((const int *)left, bin, 4);
        int m = _mm256_movemask_ps(_mm256_castsi256_ps(side)), c = __builtin_popcount((unsigned)m);
        __m256i lv = _mm256_permutevar8x32_epi32(idx, _mm256_load_si256((const __m256i *)perm[m]));
        __m256i rv = _mm256_permutevar8x32_epi32(idx, _mm256_load_si256((const __m256i *)perm[~m & 0xff]));
        /* nl <= i: the store ends inside the rows just read */
        _mm256_storeu_si256((__m256i *)(rows + nl), lv);
        _mm256_storeu_si256((__m256i *)(right + nr), rv);
        nl += (size_t)c;
        nr += (size_t)(8 - c);
    }
    *pnl = nl, *pnr = nr;
    partition_scalar8(col, left, rows, i, i1, right, pnl, pnr);
}
#endif

void gbdt_partition_rows(const gbdt_partition *pt, const void *col, int bin_bytes, int *rows, size_t i0, size_t i1,
                         int *right, size_t *nl, size_t *nr)
{
    if (bin_bytes != 1) {
        partition_scalar16(col, pt->left32, rows, i0, i1, right, nl, nr);
        return;
    }
#ifdef PARTITION_AVX2
    if (__builtin_cpu_supports("avx2")) {
        partition_avx2(col, pt->left32, (const int32_t(*)[8])pt->perm, rows, i0, i1, right, nl, nr);
        return;
    }
#endif
    partition_scalar8(col, pt->left32, rows, i0, i1, right, nl, nr);
}
