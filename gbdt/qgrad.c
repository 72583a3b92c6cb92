/* Quantized gradients (quantized_grad, after LightGBM's use_quantized_grad, Shi et al. 2022, "Quantized
 * Training of Gradient Boosting Decision Trees").
 *
 * Each round, each class's gradients are mapped to integers in [-bins/2, bins/2] and its hessians to [0, bins]
 * by stochastic rounding: x / scale + u truncated towards zero, u uniform in [0, 1), has expectation x / scale,
 * so sums over many rows keep their expected value. u comes from a hash of (seed, round, class, row), never from
 * a shared random stream, so the words do not depend on the thread count nor on which thread computes which row.
 * A row keeps (gq, hq) as a 2-byte code, an eighth of its (g, h) doubles, and the histogram kernels unpack it into
 * a word of (gq, hq, 1); histogram bins add words as plain 64-bit integers (exact, order-free), a quarter of the
 * memory traffic of the (g, h, n, pad) doubles of a float bin.
 */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64's finaliser: a bijection of 64-bit words whose outputs pass as independent for counter inputs */
static inline uint64_t qgrad_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* murmur3's 32-bit finaliser, a bijection: distinct rows of one (round, class) get distinct words; 32-bit
 * multiplies, so the row loop runs in vector registers */
static inline uint32_t qgrad_fmix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    return x ^ (x >> 16);
}

static uint32_t qgrad_key(uint64_t seed, uint64_t round, int k)
{
    return (uint32_t)qgrad_mix(qgrad_mix(seed) ^ qgrad_mix((round << 20) ^ (uint64_t)(unsigned)k));
}

uint32_t gbdt_qgrad_hash(uint64_t seed, uint64_t round, int k, size_t row)
{
    return qgrad_fmix32(qgrad_key(seed, round, k) + (uint32_t)row);
}

/* bits to hold the non-negative integer v */
static int qgrad_bits(uint64_t v)
{
    int b = 0;
    while (b < 64 && (v >> b) != 0) b++;
    return b;
}

int gbdt_qgrad_fit(size_t rows, int bins, int hess_constant, gbdt_qgrad *q)
{
    uint64_t m = (uint64_t)rows;
    q->n_bits = qgrad_bits(m);
    q->h_bits = hess_constant ? 0 : qgrad_bits(m * (uint64_t)bins);
    int g_bits = qgrad_bits(m * (uint64_t)(bins / 2)) + 1; /* and a sign */
    if (q->n_bits + q->h_bits + g_bits > 64)
        return hr_error(HR_EINVAL,
                        "gbdt: quantized_grad: sums over %zu rows with grad_bins %d need %d bits per histogram bin "
                        "(at most 64); use fewer grad_bins or quantized_grad false",
                        rows, bins, q->n_bits + q->h_bits + g_bits);
    return HR_OK;
}


typedef uint32_t qgrad_u4 __attribute__((vector_size(16)));
typedef int32_t qgrad_i4 __attribute__((vector_size(16)));
typedef double qgrad_d4 __attribute__((vector_size(32)));
typedef int64_t qgrad_l4 __attribute__((vector_size(32)));
typedef uint16_t qgrad_c4 __attribute__((vector_size(8)));

/* qc[i] = the code of row i: the offsets u, u' are the midpoints of 2^16 equal steps of [0, 1) (the low
 * and high halves of the row's hash), so trunc(x + u) is off its expectation x by at most 2^-17 of a level.
 * Four rows at a time as vectors (AVX2 where the CPU has it; the same IEEE operations either way), the rest one
 * by one with the same operations. Returns the number of codes 0. */
GBDT_SIMD_CLONES static size_t qgrad_pack(const double *gh, size_t n, uint32_t key, double ig, double ih, uint16_t *qc)
{
    const double step = 1.0 / 65536.0, half = 0.5 / 65536.0;
    const qgrad_d4 vstep = {step, step, step, step}, vhalf = {half, half, half, half};
    const qgrad_d4 vig = {ig, ig, ig, ig}, vih = {ih, ih, ih, ih}, zero = {0, 0, 0, 0};
    const qgrad_u4 lane = {0, 1, 2, 3}, low = {0xffffu, 0xffffu, 0xffffu, 0xffffu};
    const qgrad_i4 byte = {0xff, 0xff, 0xff, 0xff}, word = {0xffff, 0xffff, 0xffff, 0xffff};
    qgrad_u4 zeros = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        qgrad_u4 r = (qgrad_u4){key, key, key, key} + (uint32_t)i + lane;
        r ^= r >> 16;
        r *= 0x85ebca6bu;
        r ^= r >> 13;
        r *= 0xc2b2ae35u;
        r ^= r >> 16;
        qgrad_d4 u = __builtin_convertvector((qgrad_i4)(r & low), qgrad_d4) * vstep + vhalf;
        qgrad_d4 uh = __builtin_convertvector((qgrad_i4)(r >> 16), qgrad_d4) * vstep + vhalf;
        const double *e = gh + 2 * i;
        qgrad_d4 g = (qgrad_d4){e[0], e[2], e[4], e[6]} * vig, h = (qgrad_d4){e[1], e[3], e[5], e[7]};
        qgrad_l4 neg = g < zero;
        qgrad_d4 t = g + (qgrad_d4)(((qgrad_l4)u & ~neg) | ((qgrad_l4)(-u) & neg));
        qgrad_i4 gq = __builtin_convertvector(t, qgrad_i4), hq = __builtin_convertvector(h * vih + uh, qgrad_i4);
        qgrad_i4 w = ((gq & byte) | (hq << 8)) & word;
        zeros -= (qgrad_u4)(w == 0); /* a lane of -1 where the code is 0 */
        qgrad_c4 c = __builtin_convertvector(w, qgrad_c4);
        memcpy(qc + i, &c, sizeof c);
    }
    size_t z = (size_t)zeros[0] + zeros[1] + zeros[2] + zeros[3];
    for (; i < n; i++) {
        uint32_t r = qgrad_fmix32(key + (uint32_t)i);
        double u = (double)(int32_t)(r & 0xffffu) * step + half, uh = (double)(int32_t)(r >> 16) * step + half;
        double g = gh[2 * i] * ig;
        int32_t gq = (int32_t)(g < 0 ? g - u : g + u);
        int32_t hq = (int32_t)(gh[2 * i + 1] * ih + uh);
        qc[i] = (uint16_t)((gq & 0xff) | (hq << 8));
        z += qc[i] == 0;
    }
    return z;
}

/* *r = the range of gh (n, 2); four rows at a time (maxima and minima are exact: the same whatever the order) */
GBDT_SIMD_CLONES static void qgrad_scan(const double *gh, size_t n, gbdt_gh_range *r)
{
    const qgrad_l4 abs_mask = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    qgrad_d4 vg = {0, 0, 0, 0}, lo = {INFINITY, INFINITY, INFINITY, INFINITY}, hi = -lo;
    qgrad_l4 nan = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const double *e = gh + 2 * i;
        qgrad_d4 g = (qgrad_d4){e[0], e[2], e[4], e[6]}, h = (qgrad_d4){e[1], e[3], e[5], e[7]};
        qgrad_d4 ag = (qgrad_d4)((qgrad_l4)g & abs_mask);
        qgrad_l4 bg = ag > vg, bl = h < lo, bh = h > hi;
        vg = (qgrad_d4)(((qgrad_l4)ag & bg) | ((qgrad_l4)vg & ~bg));
        lo = (qgrad_d4)(((qgrad_l4)h & bl) | ((qgrad_l4)lo & ~bl));
        hi = (qgrad_d4)(((qgrad_l4)h & bh) | ((qgrad_l4)hi & ~bh));
        nan |= (g != g) | (h != h);
    }
    *r = GBDT_GH_RANGE_EMPTY;
    for (int k = 0; k < 4; k++) gbdt_gh_range_add(r, vg[k], lo[k], hi[k], nan[k] != 0);
    for (; i < n; i++) {
        double g = gh[2 * i], h = gh[2 * i + 1];
        gbdt_gh_range_add(r, fabs(g), h, h, isnan(g) || isnan(h));
    }
}

int gbdt_qgrad_discretize_range(const double *gh, size_t n, const gbdt_gh_range *r, size_t rows, int bins,
                                uint64_t seed, uint64_t round, int k, uint16_t *qc, gbdt_qgrad *q)
{
    /* no rows: no hessian to tell apart, as with equal ones */
    int empty = r->hmin > r->hmax, hconst = empty || r->hmin == r->hmax;
    double mg = r->gmax, mh = empty ? 0.0 : fmax(fabs(r->hmin), fabs(r->hmax));
    if (r->nan || !isfinite(mg) || !isfinite(mh))
        return hr_error(HR_EINVAL, "gbdt: quantized_grad: class %d's gradients or hessians are not finite", k);
    int rc = gbdt_qgrad_fit(rows, bins, hconst, q);
    if (rc) return rc;
    q->gscale = mg > 0 ? mg / (double)(bins / 2) : 1.0;
    q->hscale = hconst ? (n ? gh[1] : 0.0) : mh / (double)bins;
    double ig = 1.0 / q->gscale, ih = hconst ? 0.0 : 1.0 / q->hscale;
    /* a constant hessian leaves hq = trunc(0 + u') = 0 */
    q->zeros = qgrad_pack(gh, n, qgrad_key(seed, round, k), ig, ih, qc);
    return HR_OK;
}

void gbdt_qgrad_range(const double *gh, size_t n, gbdt_gh_range *r)
{
    qgrad_scan(gh, n, r);
}

int gbdt_qgrad_discretize(const double *gh, size_t n, size_t rows, int bins, uint64_t seed, uint64_t round, int k,
                          uint16_t *qc, gbdt_qgrad *q)
{
    gbdt_gh_range r;
    qgrad_scan(gh, n, &r);
    return gbdt_qgrad_discretize_range(gh, n, &r, rows, bins, seed, round, k, qc, q);
}
