/* xoshiro256** (Blackman and Vigna), seeded through splitmix64. */
#include "core.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void hr_rng_seed(hr_rng *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&x);
}

void hr_rng_derive(hr_rng *out, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (0xd1b54a32d192ed03ULL * (stream + 1));
    hr_rng_seed(out, splitmix64(&x));
}

uint64_t hr_rng_next(hr_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t hr_rng_below(hr_rng *rng, uint64_t n)
{
    HR_ASSERT(n > 0);
    /* rejection sampling on the top of the range keeps the draw unbiased */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do r = hr_rng_next(rng);
    while (r >= limit);
    return r % n;
}

float hr_rng_uniform(hr_rng *rng)
{
    return (float)(hr_rng_next(rng) >> 40) * (1.0f / 16777216.0f);
}

double hr_rng_uniform_d(hr_rng *rng)
{
    return (double)(hr_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

float hr_rng_normal(hr_rng *rng)
{
    double u1 = hr_rng_uniform_d(rng), u2 = hr_rng_uniform_d(rng);
    if (u1 < 1e-300) u1 = 1e-300;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

void hr_rng_shuffle_int(hr_rng *rng, int *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)hr_rng_below(rng, i);
        int t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}
