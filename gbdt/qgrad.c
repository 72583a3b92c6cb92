/* Quantized gradients (quantized_grad, after LightGBM's use_quantized_grad, Shi et al. 2022, "Quantized
 * Training of Gradient Boosting Decision Trees").
 *
 * Each round, each class's gradients are mapped to integers in [-bins/2, bins/2] and its hessians to [0, bins]
 * by stochastic rounding: x / scale + u truncated towards zero, u uniform in [0, 1), has expectation x / scale,
 * so sums over many rows keep their expected value. u comes from a hash of (seed, round, class, row), never from
 * a shared random stream, so the words do not depend on the thread count nor on which thread computes which row.
 * A row's word packs (gq, hq, 1); histogram bins add words as plain 64-bit integers (exact, order-free), which
 * is a quarter of the memory traffic of the (g, h, n, pad) doubles of a float bin.
 */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>

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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define QGRAD_TARGET __attribute__((target_clones("avx2", "default")))
#else
#define QGRAD_TARGET
#endif

/* qv[i] = the packed word of row i: the offsets u, u' are the midpoints of 2^16 equal steps of [0, 1) (the low
 * and high halves of the row's hash), so trunc(x + u) is off its expectation x by at most 2^-17 of a level */
QGRAD_TARGET static void qgrad_pack(const double *gh, size_t n, uint32_t key, double ig, double ih, int hs, int gs,
                                    uint64_t *qv)
{
    const double step = 1.0 / 65536.0, half = 0.5 / 65536.0;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = qgrad_fmix32(key + (uint32_t)i);
        double u = (double)(r & 0xffffu) * step + half, uh = (double)(r >> 16) * step + half;
        double g = gh[2 * i] * ig;
        int32_t gq = (int32_t)(g >= 0 ? g + u : g - u);
        int32_t hq = (int32_t)(gh[2 * i + 1] * ih + uh);
        qv[i] = ((uint64_t)(int64_t)gq << gs) + ((uint64_t)(uint32_t)hq << hs) + 1;
    }
}

int gbdt_qgrad_discretize(const double *gh, size_t n, size_t rows, int bins, uint64_t seed, uint64_t round, int k,
                          uint64_t *qv, gbdt_qgrad *q)
{
    double mg = 0, mh = 0;
    int hconst = 1;
    for (size_t i = 0; i < n; i++) {
        double a = fabs(gh[2 * i]), b = fabs(gh[2 * i + 1]);
        mg = a > mg ? a : mg;
        mh = b > mh ? b : mh;
        hconst &= gh[2 * i + 1] == gh[1];
    }
    if (!isfinite(mg) || !isfinite(mh))
        return hr_error(HR_EINVAL, "gbdt: quantized_grad: class %d's gradients or hessians are not finite", k);
    int rc = gbdt_qgrad_fit(rows, bins, hconst, q);
    if (rc) return rc;
    q->gscale = mg > 0 ? mg / (double)(bins / 2) : 1.0;
    q->hscale = hconst ? (n ? gh[1] : 0.0) : mh / (double)bins;
    double ig = 1.0 / q->gscale, ih = hconst ? 0.0 : 1.0 / q->hscale;
    /* a constant hessian leaves hq = trunc(0 + u') = 0 */
    qgrad_pack(gh, n, qgrad_key(seed, round, k), ig, ih, q->n_bits, q->n_bits + q->h_bits, qv);
    return HR_OK;
}
