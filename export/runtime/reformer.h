/* The reformer runtime: sparse products over static transposed weights, the input transforms, the
 * heads' combinations and the choice without the scores.
 *
 * Copied into exported reformer runtimes by section (export/reformer.c, which writes the weights, the
 * forward pass shaped by the model's sizes, and these constants before them: HM_Q the row quantum,
 * HM_K the kernels, HM_BETA the applicability weight, HM_LOG_K = ln HM_K) and compiled as it is by
 * tests/test_export_runtime.c, which checks each function against nn/ and models/reformer.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

/* @section matvec */
/* The product kernel and the compaction of a ReLU's nonzero outputs. With GNU C vector extensions (GCC,
 * Clang) a block of rows keeps its outputs in vector registers over one pass through the inputs: nv vectors
 * of rows times s inputs in flight (s > 1 only for narrow blocks, so that at least eight accumulators hide
 * the add latency), partial sums added at the end. FMA and AVX-512's compress come from intrinsics where
 * the target has them. Plain C loops are left to other compilers: GCC turns unrolled scalar accumulators
 * into in-order reductions, lane by lane, several times slower. */
#if defined(__GNUC__)
#define HM_UNROLL _Pragma("GCC unroll 16")
#define HM_INLINE static inline __attribute__((always_inline))
#if defined(__AVX512F__)
#define HM_VL 16
#define HM_NVMAX 12 /* of 32 registers */
#elif defined(__AVX__)
#define HM_VL 8
#define HM_NVMAX 8
#else
#define HM_VL 4
#define HM_NVMAX 8
#endif
typedef float hm_vec __attribute__((vector_size(HM_VL * sizeof(float))));
#if defined(__FMA__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__FMA__) && (defined(__x86_64__) || defined(__i386__))
/* a + t x fused: ISO C modes of GCC (-std=c11) do not contract a + t * x */
#if HM_VL == 16
#define HM_MADD(a, t, x) _mm512_fmadd_ps(t, _mm512_set1_ps(x), a)
#elif HM_VL == 8
#define HM_MADD(a, t, x) _mm256_fmadd_ps(t, _mm256_set1_ps(x), a)
#else
#define HM_MADD(a, t, x) _mm_fmadd_ps(t, _mm_set1_ps(x), a)
#endif
#else
#define HM_MADD(a, t, x) ((a) + (t) * (x))
#endif

/* rows [0, nv HM_VL) of y = b + W x, column j of W at W + j ld, over the inputs nz[0..n): nv vectors
 * of rows times s inputs in flight, nv s <= 16 (inlined with constants: the accumulators are registers) */
HM_INLINE void hm_rows(int nv, int s, int ld, int n, const int *restrict nz, const float *restrict x,
                       const float *restrict W, const float *restrict b, float *restrict y)
{
    hm_vec a[16], t; /* a[i nv + v]: rows v HM_VL.., inputs k + i */
    HM_UNROLL for (int i = 0; i < nv * s; i++) a[i] = (hm_vec){0};
    HM_UNROLL for (int v = 0; v < nv; v++) memcpy(&a[v], b + v * HM_VL, sizeof t);
    int k = 0;
    for (; k + s <= n; k += s)
        HM_UNROLL for (int i = 0; i < s; i++) {
            const float *w = W + (size_t)nz[k + i] * ld, xi = x[nz[k + i]];
            HM_UNROLL for (int v = 0; v < nv; v++) {
                memcpy(&t, w + v * HM_VL, sizeof t);
                a[i * nv + v] = HM_MADD(a[i * nv + v], t, xi);
            }
        }
    for (; k < n; k++) {
        const float *w = W + (size_t)nz[k] * ld, xi = x[nz[k]];
        HM_UNROLL for (int v = 0; v < nv; v++) {
            memcpy(&t, w + v * HM_VL, sizeof t);
            a[v] = HM_MADD(a[v], t, xi);
        }
    }
    HM_UNROLL for (int v = 0; v < nv; v++) {
        HM_UNROLL for (int i = 1; i < s; i++) a[v] = a[v] + a[i * nv + v];
        memcpy(y + v * HM_VL, &a[v], sizeof t);
    }
}
#else
#define HM_INLINE static inline
#endif

/* y (rows) = b + W x over the nonzero entries of x, at j = nz[0..n); W (rows, cols) stored transposed,
 * column j at W + j rows; rows a multiple of HM_Q. Inlined where rows is a constant, so that the blocks
 * of rows (each one pass over the inputs) are fixed at compile time. */
HM_INLINE void hm_matvec(int rows, int n, const int *restrict nz, const float *restrict x, const float *restrict W,
                         const float *restrict b, float *restrict y)
{
#if defined(__GNUC__)
    int r = 0;
    for (; r + HM_NVMAX * HM_VL <= rows; r += HM_NVMAX * HM_VL)
        hm_rows(HM_NVMAX, 1, rows, n, nz, x, W + r, b + r, y + r);
    const int nv = (rows - r) / HM_VL; /* the rest, with enough inputs in flight for 8 accumulators */
    if (nv) hm_rows(nv, (8 + nv - 1) / nv, rows, n, nz, x, W + r, b + r, y + r);
#else
    for (int r = 0; r < rows; r++) y[r] = b[r];
    for (int k = 0; k < n; k++)
        for (int r = 0; r < rows; r++) y[r] += W[(size_t)nz[k] * rows + r] * x[nz[k]];
#endif
}

/* The positions nz of the nonzero entries of relu(v (n)), whose values are v's; returns their count */
static int hm_relu_nonzero(int n, const float *restrict v, int *restrict nz)
{
    int m = 0;
#if defined(__GNUC__) && defined(__AVX512F__)
    /* n a multiple of HM_Q: the positions of the positive entries of 16 at a time, compressed into nz
     * (m <= j, so the full-width store stays within nz[0..n)) */
    __m512i pos = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int j = 0; j < n; j += 16, pos = _mm512_add_epi32(pos, _mm512_set1_epi32(16))) {
        const __mmask16 k = _mm512_cmp_ps_mask(_mm512_loadu_ps(v + j), _mm512_setzero_ps(), _CMP_GT_OQ);
        _mm512_storeu_si512(nz + m, _mm512_maskz_compress_epi32(k, pos));
        m += __builtin_popcount(k);
    }
#elif defined(__GNUC__) && defined(__AVX2__)
    /* n a multiple of HM_Q: 32 signs at a time into a mask (vector compares), then its set bits */
    for (int j0 = 0; j0 < n; j0 += HM_Q) {
        uint32_t bits = 0;
        for (int j = 0; j < HM_Q; j++) bits |= (uint32_t)(v[j0 + j] > 0.0f) << j;
        for (; bits; bits &= bits - 1) nz[m++] = j0 + __builtin_ctz(bits);
    }
#else
    for (int j = 0; j < n; j++) {
        nz[m] = j;
        m += v[j] > 0.0f;
    }
#endif
    return m;
}

/* @section slog */
/* slog(v) = sign(v) log2(1 + |v|) as models/reformer_input.c's log2f gives it, up to the last bit's rounding (1 value in
 * 100 differs by 1 ulp), but without calls or branches, so that the loop over the features vectorises:
 * log2 u, u = 1 + |v| rounded to float as models/reformer_input.c does, is the exponent of u plus log2 of its mantissa
 * m in [sqrt 1/2, sqrt 2), 2 atanh(f) / ln 2 with f = (m - 1) / (m + 1), |f| < 0.172, whose series to
 * f^11 leaves a relative error below 1e-10 (in double). Selects are bit masks: a conditional expression
 * would keep GCC from vectorising (it will not speculate the division). */
static inline float hm_slog(float v)
{
    const float a = fabsf(v), u = 1.0f + a;
    uint32_t b, rb, vb;
    memcpy(&b, &u, sizeof b);
    const uint32_t up = (b & 0x7fffffu) > 0x3504f3u; /* mantissa above sqrt 2: halve it */
    const int e = (int)(b >> 23) - 127 + (int)up;
    b = (b & 0x7fffffu) | (0x3f800000u - (up << 23));
    float m, r;
    memcpy(&m, &b, sizeof m);
    const double f = ((double)m - 1.0) / ((double)m + 1.0), f2 = f * f;
    const double l = e + 2.8853900817779268 * f *
                             (1.0 + f2 * (1.0 / 3 + f2 * (1.0 / 5 + f2 * (1.0 / 7 + f2 * (1.0 / 9 + f2 / 11)))));
    r = copysignf((float)l, v);
    memcpy(&rb, &r, sizeof rb);
    memcpy(&vb, &v, sizeof vb);
    const uint32_t keep = -(uint32_t)(a < HUGE_VALF); /* +-inf and NaN pass through */
    rb = (rb & keep) | (vb & ~keep);
    memcpy(&r, &rb, sizeof r);
    return r;
}

/* @section ple */
/* as reformer_ple (reformer_internal.h), for the "ple" input */
static inline float hm_ple(float v, float lo, float hi)
{
    const float t = (v - lo) / (hi - lo);
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

/* @section log_sigmoid */
/* as nn_log_sigmoid, for the product and head combinations */
static float hm_log_sigmoid(float z)
{
    float t = -z;
    return -((t > 0.0f ? t : 0.0f) + log1pf(expf(-fabsf(t))));
}

/* @section combine_product */
/* s (HM_K) from the heads h = [z (HM_K) | a (HM_K)], as combine_heads in models/reformer_classes.c: log softmax(z)
 * + HM_BETA log sigmoid(a) */
static void hm_combine_product(const float *h, float *s)
{
    const float *z = h, *a = h + HM_K;
    float mx = z[0], sum = 0.0f;
    for (int k = 1; k < HM_K; k++) mx = z[k] > mx ? z[k] : mx;
    for (int k = 0; k < HM_K; k++) sum += expf(z[k] - mx);
    const float lse = mx + logf(sum);
    for (int k = 0; k < HM_K; k++) s[k] = z[k] - lse + HM_BETA * hm_log_sigmoid(a[k]);
}

/* @section combine_mask */
/* the same for "mask": log softmax(z), kernels with a < 0 vetoed (-1000) */
static void hm_combine_mask(const float *h, float *s)
{
    const float *z = h, *a = h + HM_K;
    float mx = z[0], sum = 0.0f;
    for (int k = 1; k < HM_K; k++) mx = z[k] > mx ? z[k] : mx;
    for (int k = 0; k < HM_K; k++) sum += expf(z[k] - mx);
    const float lse = mx + logf(sum);
    for (int k = 0; k < HM_K; k++) s[k] = z[k] - lse + (a[k] < 0.0f ? -1000.0f : 0.0f);
}

/* @section combine_head */
/* the same for "head": log sigmoid(a) alone */
static void hm_combine_head(const float *h, float *s)
{
    for (int k = 0; k < HM_K; k++) s[k] = hm_log_sigmoid(h[HM_K + k]);
}

/* @section choose_common */
/* The choice without the scores. Every combined score is z_k - lse + c_k, with lse common to all kernels:
 * bounds on z_k + c_k that cover the rounding of the full computation (tol_k, ~60 ulp of the magnitudes
 * involved) rule out every kernel some other kernel beats for certain, and only the survivors' c_k are
 * computed. A single survivor is the full path's argmax; a near tie (-1) falls back to the full path, as
 * does anything not finite. The loops over all kernels are element-wise or running maxima, their one branch
 * rarely taken (a mispredicted branch per kernel would cost more than the rest). */
/* max of v (n): eight running maxima, so that the loop vectorises. Inlined: GCC assumes a call returns
 * with the upper vector state clean, and a call in between would leave glibc's SSE code behind the
 * next libm call running several times slower. */
HM_INLINE float hm_max(const float *v, int n)
{
    float p[8] = {v[0], v[0], v[0], v[0], v[0], v[0], v[0], v[0]};
    int k = 0;
    for (; k + 8 <= n; k += 8)
        for (int l = 0; l < 8; l++) p[l] = v[k + l] > p[l] ? v[k + l] : p[l];
    for (; k < n; k++) p[0] = v[k] > p[0] ? v[k] : p[0];
    for (int l = 1; l < 8; l++) p[0] = p[l] > p[0] ? p[l] : p[0];
    return p[0];
}

/* @section choose_product */
static int hm_choose_product(const float *h)
{
    const float *z = h, *a = h + HM_K;
    float hi[HM_K], lo[HM_K], tol[HM_K], q[HM_K];
    int cand[HM_K], nc = 0, bad = 0;
    const float base = fabsf(hm_max(z, HM_K)) + (float)HM_LOG_K + 1.0f;
    for (int k = 0; k < HM_K; k++) {
        const float m = 0.5f * (a[k] - fabsf(a[k])); /* min(a, 0) */
        hi[k] = z[k] + HM_BETA * m;
        tol[k] = 4e-6f * (base + fabsf(z[k]) + HM_BETA * (1.0f - m));
        lo[k] = hi[k] - HM_BETA * 0.693147182f - tol[k];
        bad |= !(tol[k] < HUGE_VALF); /* z or a not finite */
    }
    if (bad) return -1;
    const float cut = hm_max(lo, HM_K);
    for (int k = 0; k < HM_K; k++)
        if (hi[k] + tol[k] >= cut) cand[nc++] = k;
    float cut2 = -HUGE_VALF;
    for (int i = 0; i < nc; i++) { /* the candidates' scores, exact up to tol */
        q[i] = z[cand[i]] + HM_BETA * hm_log_sigmoid(a[cand[i]]);
        cut2 = q[i] - tol[cand[i]] > cut2 ? q[i] - tol[cand[i]] : cut2;
    }
    int best = -1, count = 0;
    for (int i = 0; i < nc; i++) {
        const int alive = q[i] + tol[cand[i]] >= cut2;
        count += alive;
        best = alive ? cand[i] : best;
    }
    return count == 1 ? best : -1;
}

/* @section choose_mask */
static int hm_choose_mask(const float *h)
{
    const float *z = h, *a = h + HM_K;
    float v[HM_K], lo[HM_K], tol[HM_K];
    int bad = 0;
    const float base = fabsf(hm_max(z, HM_K)) + (float)HM_LOG_K + 1.0f;
    for (int k = 0; k < HM_K; k++) {
        const float c = a[k] < 0.0f ? -1000.0f : 0.0f;
        v[k] = z[k] + c;
        tol[k] = 4e-6f * (base + fabsf(z[k]) - c);
        lo[k] = v[k] - tol[k];
        bad |= !(tol[k] < HUGE_VALF); /* z not finite */
    }
    if (bad) return -1;
    const float cut = hm_max(lo, HM_K);
    int best = -1, count = 0;
    for (int k = 0; k < HM_K; k++) {
        const int alive = v[k] + tol[k] >= cut;
        count += alive;
        best = alive ? k : best;
    }
    return count == 1 ? best : -1;
}
