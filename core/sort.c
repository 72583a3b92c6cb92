/* Sorting shared by the modules that cut features into quantile bins (gbdt's histograms, the Reformer's
 * piecewise-linear input encoding). */
#include "core.h"

#include <string.h>

/* Order-preserving map of a float's bits to an unsigned key (negatives flipped). */
static uint32_t float_key(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

void hr_sort_floats(float *v, float *tmp, size_t n)
{
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[((float_key(v[i]) >> shift) & 0xffu) + 1]++;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) tmp[count[(float_key(v[i]) >> shift) & 0xffu]++] = v[i];
        memcpy(v, tmp, n * sizeof *v);
    }
}
