/* Softmax and cross-entropy against soft targets (the Reformer's runtime-derived probabilities), and
 * per-class binary cross-entropy on logits (the Reformer's applicability head). */
#include <math.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "nn/nn.h"
#include "nn/nn_internal.h"

/* e^x for x <= 0 only (softmax after its max shift, the sigmoid's e^-|z|), Cephes' expf: x = n ln2 + r with
 * n = floor(x log2(e) + 1/2), e^r by its polynomial, 2^n through the exponent field; within 2 ulp of expf.
 * x is clamped at ln 2^-126, where expf turns subnormal (e^x is then 2^-126 instead of ~0, which no loss
 * term can tell apart). exp4_neg is the same operations on four lanes (SSE2): an element's value does not
 * depend on its position in the row, and both forms propagate NaN. */
#define EXP_LO -87.33654475f /* ln 2^-126 */
#define EXP_LOG2E 1.44269504088896341f
#define EXP_C1 0.693359375f /* ln 2 = C1 + C2, C1 with few bits so that n C1 is exact */
#define EXP_C2 -2.12194440e-4f
#define EXP_P0 1.9875691500e-4f
#define EXP_P1 1.3981999507e-3f
#define EXP_P2 8.3334519073e-3f
#define EXP_P3 4.1665795894e-2f
#define EXP_P4 1.6666665459e-1f
#define EXP_P5 5.0000001201e-1f

static inline float exp_neg(float x)
{
    if (x != x) return x; /* NaN (converting it to int below would be undefined) */
    x = x < EXP_LO ? EXP_LO : x;
    float t = x * EXP_LOG2E + 0.5f;
    int n = (int)t; /* truncation, then floor for negative t */
    n -= (float)n > t;
    float fn = (float)n;
    float r = x - fn * EXP_C1 - fn * EXP_C2;
    float z = r * r;
    float y = ((((EXP_P0 * r + EXP_P1) * r + EXP_P2) * r + EXP_P3) * r + EXP_P4) * r + EXP_P5;
    y = y * z + r + 1.0f;
    union { uint32_t u; float f; } scale = {(uint32_t)(n + 127) << 23};
    return y * scale.f;
}

#if defined(__SSE2__)
static inline __m128 exp4_neg(__m128 x)
{
    x = _mm_max_ps(_mm_set1_ps(EXP_LO), x); /* NaN lanes keep x (maxps returns its second operand) */
    __m128 t = _mm_add_ps(_mm_mul_ps(x, _mm_set1_ps(EXP_LOG2E)), _mm_set1_ps(0.5f));
    __m128i n = _mm_cvttps_epi32(t);
    __m128 gt = _mm_cmpgt_ps(_mm_cvtepi32_ps(n), t);
    n = _mm_sub_epi32(n, _mm_and_si128(_mm_castps_si128(gt), _mm_set1_epi32(1)));
    __m128 fn = _mm_cvtepi32_ps(n);
    __m128 r = _mm_sub_ps(_mm_sub_ps(x, _mm_mul_ps(fn, _mm_set1_ps(EXP_C1))), _mm_mul_ps(fn, _mm_set1_ps(EXP_C2)));
    __m128 z = _mm_mul_ps(r, r);
    __m128 y = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(EXP_P0), r), _mm_set1_ps(EXP_P1));
    y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(EXP_P2));
    y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(EXP_P3));
    y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(EXP_P4));
    y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(EXP_P5));
    y = _mm_add_ps(_mm_add_ps(_mm_mul_ps(y, z), r), _mm_set1_ps(1.0f));
    __m128i scale = _mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)), 23);
    return _mm_mul_ps(y, _mm_castsi128_ps(scale));
}
#endif

/* Writes softmax(z) into p for one row (p may alias z) and returns log(sum exp(z)) (max-shifted, so no
 * overflow). With SSE2 the max, the exponentials, the sum (four partial sums) and the scaling go four
 * lanes at a time. */
static float softmax_row(const float *z, float *p, int C)
{
    float mx = z[0];
    int i = 0;
#if defined(__SSE2__)
    if (C >= 4) {
        __m128 m4 = _mm_loadu_ps(z);
        for (i = 4; i + 4 <= C; i += 4) m4 = _mm_max_ps(m4, _mm_loadu_ps(z + i));
        float m[4];
        _mm_storeu_ps(m, m4);
        mx = m[0] > m[1] ? m[0] : m[1];
        mx = m[2] > mx ? m[2] : mx;
        mx = m[3] > mx ? m[3] : mx;
    }
#endif
    for (; i < C; i++) mx = z[i] > mx ? z[i] : mx;
    float s = 0.0f;
    i = 0;
#if defined(__SSE2__)
    const __m128 vmx = _mm_set1_ps(mx);
    __m128 s4 = _mm_setzero_ps();
    for (; i + 4 <= C; i += 4) {
        __m128 e = exp4_neg(_mm_sub_ps(_mm_loadu_ps(z + i), vmx));
        _mm_storeu_ps(p + i, e);
        s4 = _mm_add_ps(s4, e);
    }
    float part[4];
    _mm_storeu_ps(part, s4);
    s = (part[0] + part[1]) + (part[2] + part[3]);
#endif
    for (; i < C; i++) {
        p[i] = exp_neg(z[i] - mx);
        s += p[i];
    }
    const float inv = 1.0f / s;
    i = 0;
#if defined(__SSE2__)
    const __m128 vinv = _mm_set1_ps(inv);
    for (; i + 4 <= C; i += 4) _mm_storeu_ps(p + i, _mm_mul_ps(_mm_loadu_ps(p + i), vinv));
#endif
    for (; i < C; i++) p[i] *= inv;
    return mx + logf(s);
}

void nn_softmax_forward(const float *z, float *p, int B, int C)
{
    for (int b = 0; b < B; b++) softmax_row(z + (size_t)b * C, p + (size_t)b * C, C);
}

float nn_xent_forward(const float *z, const float *y, float *prob, int B, int C)
{
    double loss = 0.0;
    for (int b = 0; b < B; b++) {
        const float *zr = z + (size_t)b * C, *yr = y + (size_t)b * C;
        float lse = softmax_row(zr, prob + (size_t)b * C, C);
        /* log softmax = z - lse stays finite where the probability underflows; y_i = 0 terms vanish */
        for (int i = 0; i < C; i++)
            if (yr[i] != 0.0f) loss -= (double)yr[i] * (zr[i] - lse);
    }
    return (float)(loss / B);
}

/* dz (B, C) += s (prob ysum_row - y), the rows' target sums computed first (see NN_VEC4) */
NN_KERNEL void xent_grad(float *restrict dz, const float *restrict prob, const float *restrict y, int B, int C,
                         float s)
{
    const int C4 = NN_VEC4(C);
    for (int b = 0; b < B; b++, dz += C, prob += C, y += C) {
        float ysum = 0.0f;
        for (int i = 0; i < C; i++) ysum += y[i];
        for (int i = 0; i < C4; i++) dz[i] += s * (prob[i] * ysum - y[i]);
        for (int i = C4; i < C; i++) dz[i] += s * (prob[i] * ysum - y[i]);
    }
}

void nn_xent_backward(const float *prob, const float *y, float *dz, int B, int C, float scale)
{
    xent_grad(dz, prob, y, B, C, scale / (float)B);
}

/* Softmax cross-entropy over segments: the Reformer's pair mode scores every candidate of a problem with one
 * logit, and a problem's candidates (their number varies) are one softmax. */
float nn_xent_seg_forward(const float *z, const float *y, const int *off, int S, float *prob)
{
    double loss = 0.0;
    for (int s = 0; s < S; s++) {
        const int a = off[s], n = off[s + 1] - a;
        if (n <= 0) continue;
        float lse = softmax_row(z + a, prob + a, n);
        for (int i = a; i < a + n; i++)
            if (y[i] != 0.0f) loss -= (double)y[i] * (z[i] - lse);
    }
    return S > 0 ? (float)(loss / S) : 0.0f;
}

void nn_xent_seg_backward(const float *prob, const float *y, const int *off, int S, float *dz, float scale)
{
    if (S <= 0) return;
    const float s = scale / (float)S;
    for (int g = 0; g < S; g++) {
        const int a = off[g], b = off[g + 1];
        float ysum = 0.0f;
        for (int i = a; i < b; i++) ysum += y[i];
        for (int i = a; i < b; i++) dz[i] += s * (prob[i] * ysum - y[i]);
    }
}

/* softplus(z) = log(1 + e^z) = max(z, 0) + log1p(e^-|z|) */
static float softplus(float z)
{
    return (z > 0.0f ? z : 0.0f) + log1pf(expf(-fabsf(z)));
}

float nn_log_sigmoid(float z)
{
    return -softplus(-z);
}

/* Per element: loss = softplus(z) - y z, softplus(z) = max(z, 0) + log1p(e), e = e^-|z|, and sigmoid(z) =
 * 1 / (1 + e) for z >= 0, e / (1 + e) below (neither overflows). The log1p terms of a row are summed as
 * the log of the product of the (1 + e), each in (1, 2], accumulated in double: one logarithm a row (a
 * chunk of at most BCE_CHUNK classes, so the product stays below 2^512) instead of one a class, and no
 * less accurate. */
#define BCE_CHUNK 512

/* The terms of one row's z[0..n), n <= BCE_CHUNK: returns sum (max(z, 0) - y z) + sum log1p(e) and writes
 * sigmoid(z). Four float lanes feed two double products each. */
static double bce_chunk(const float *z, const float *y, float *prob, int n)
{
    double lin = 0.0;
    int i = 0;
#if defined(__SSE2__)
    const __m128 sign = _mm_set1_ps(-0.0f), one = _mm_set1_ps(1.0f);
    const __m128d one_d = _mm_set1_pd(1.0);
    __m128d lin_lo = _mm_setzero_pd(), lin_hi = _mm_setzero_pd(), prod_lo = one_d, prod_hi = one_d;
    for (; i + 4 <= n; i += 4) {
        __m128 zv = _mm_loadu_ps(z + i), yv = _mm_loadu_ps(y + i);
        __m128 e = exp4_neg(_mm_or_ps(zv, sign)); /* e^-|z| */
        __m128 pos = _mm_cmpge_ps(zv, _mm_setzero_ps());
        __m128 num = _mm_or_ps(_mm_and_ps(pos, one), _mm_andnot_ps(pos, e));
        _mm_storeu_ps(prob + i, _mm_div_ps(num, _mm_add_ps(one, e)));
        __m128 relu = _mm_max_ps(zv, _mm_setzero_ps());
        __m128 zhi = _mm_movehl_ps(zv, zv), yhi = _mm_movehl_ps(yv, yv), rhi = _mm_movehl_ps(relu, relu),
               ehi = _mm_movehl_ps(e, e);
        lin_lo = _mm_add_pd(lin_lo, _mm_sub_pd(_mm_cvtps_pd(relu), _mm_mul_pd(_mm_cvtps_pd(yv), _mm_cvtps_pd(zv))));
        lin_hi = _mm_add_pd(lin_hi, _mm_sub_pd(_mm_cvtps_pd(rhi), _mm_mul_pd(_mm_cvtps_pd(yhi), _mm_cvtps_pd(zhi))));
        prod_lo = _mm_mul_pd(prod_lo, _mm_add_pd(one_d, _mm_cvtps_pd(e)));
        prod_hi = _mm_mul_pd(prod_hi, _mm_add_pd(one_d, _mm_cvtps_pd(ehi)));
    }
    double l[2], q[2];
    _mm_storeu_pd(l, _mm_add_pd(lin_lo, lin_hi));
    _mm_storeu_pd(q, _mm_mul_pd(prod_lo, prod_hi));
    lin = l[0] + l[1];
    double prod = q[0] * q[1];
#else
    double prod = 1.0;
#endif
    for (; i < n; i++) {
        const float zv = z[i], e = exp_neg(-fabsf(zv));
        prob[i] = (zv >= 0.0f ? 1.0f : e) / (1.0f + e);
        lin += (double)nn_relu1(zv) - (double)y[i] * zv;
        prod *= 1.0 + (double)e;
    }
    return lin + log(prod);
}

float nn_bce_logits_forward(const float *z, const float *y, float *prob, int B, int C)
{
    double loss = 0.0;
    for (int b = 0; b < B; b++) {
        const size_t row = (size_t)b * C;
        for (int c = 0; c < C; c += BCE_CHUNK) {
            const int n = C - c < BCE_CHUNK ? C - c : BCE_CHUNK;
            loss += bce_chunk(z + row + c, y + row + c, prob + row + c, n);
        }
    }
    return (float)(loss / B);
}

/* dz (n) += s (prob - y) (see NN_VEC4) */
NN_KERNEL void bce_grad(float *restrict dz, const float *restrict prob, const float *restrict y, size_t n, float s)
{
    const size_t n4 = NN_VEC4(n);
    for (size_t i = 0; i < n4; i++) dz[i] += s * (prob[i] - y[i]);
    for (size_t i = n4; i < n; i++) dz[i] += s * (prob[i] - y[i]);
}

void nn_bce_logits_backward(const float *prob, const float *y, float *dz, int B, int C, float scale)
{
    bce_grad(dz, prob, y, (size_t)B * C, scale / (float)B);
}
