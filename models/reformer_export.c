/* The reformer family as C source for an exported runtime: the same inference path as reformer_predict
 * (z-score input, Gamma-blocks with eval-mode BatchNorm folded into the first product, softmax head and
 * the applicability head), written as loops over static weights.
 *
 * Speed: the products (~87k multiply-adds, 350 KB of weights when dense) bound the time, mostly by the
 * bytes read. Every matrix is stored transposed, column j of W contiguous, its rows padded to a multiple
 * of QUANTUM; y = b + W x runs over the nonzero inputs only (about half of a ReLU's outputs and of the
 * centred features are zero, and their columns are not read), a block of up to 12 vectors of rows at a
 * time held in registers. The choice alone skips the log-softmax and most log-sigmoids (hm_choose). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/models_internal.h"
#include "models/reformer_internal.h"

enum { QUANTUM = 32 }; /* rows of every exported matrix are padded to a multiple of this (HM_Q) */

_Static_assert(QUANTUM == 32, "hm_relu_nonzero packs HM_Q signs into a uint32_t");

static int row_pad(int n)
{
    return (n + QUANTUM - 1) / QUANTUM * QUANTUM;
}

/* The product kernel and the compaction of a ReLU's nonzero outputs. With GNU C vector extensions (GCC,
 * Clang) a block of rows keeps its outputs in vector registers over one pass through the inputs: nv vectors
 * of rows times s inputs in flight (s > 1 only for narrow blocks, so that at least eight accumulators hide
 * the add latency), partial sums added at the end. FMA and AVX-512's compress come from intrinsics where
 * the target has them. Plain C loops are left to other compilers: GCC turns unrolled scalar accumulators
 * into in-order reductions, lane by lane, several times slower. */
static const char kernel_source[] =
    "#if defined(__GNUC__)\n#define HM_UNROLL _Pragma(\"GCC unroll 16\")\n"
    "#define HM_INLINE static inline __attribute__((always_inline))\n"
    "#if defined(__AVX512F__)\n#define HM_VL 16\n#define HM_NVMAX 12 /* of 32 registers */\n"
    "#elif defined(__AVX__)\n#define HM_VL 8\n#define HM_NVMAX 8\n#else\n#define HM_VL 4\n#define HM_NVMAX 8\n#endif\n"
    "typedef float hm_vec __attribute__((vector_size(HM_VL * sizeof(float))));\n"
    "#if defined(__FMA__) || defined(__AVX512F__)\n#include <immintrin.h>\n#endif\n"
    "#if defined(__FMA__) && (defined(__x86_64__) || defined(__i386__))\n"
    "/* a + t x fused: ISO C modes of GCC (-std=c11) do not contract a + t * x */\n"
    "#if HM_VL == 16\n#define HM_MADD(a, t, x) _mm512_fmadd_ps(t, _mm512_set1_ps(x), a)\n"
    "#elif HM_VL == 8\n#define HM_MADD(a, t, x) _mm256_fmadd_ps(t, _mm256_set1_ps(x), a)\n"
    "#else\n#define HM_MADD(a, t, x) _mm_fmadd_ps(t, _mm_set1_ps(x), a)\n#endif\n"
    "#else\n#define HM_MADD(a, t, x) ((a) + (t) * (x))\n#endif\n\n"
    "/* rows [0, nv HM_VL) of y = b + W x, column j of W at W + j ld, over the inputs nz[0..n): nv vectors\n"
    " * of rows times s inputs in flight, nv s <= 16 (inlined with constants: the accumulators are registers) */\n"
    "HM_INLINE void hm_rows(int nv, int s, int ld, int n, const int *restrict nz, const float *restrict x,\n"
    "                       const float *restrict W, const float *restrict b, float *restrict y)\n{\n"
    "    hm_vec a[16], t; /* a[i nv + v]: rows v HM_VL.., inputs k + i */\n"
    "    HM_UNROLL for (int i = 0; i < nv * s; i++) a[i] = (hm_vec){0};\n"
    "    HM_UNROLL for (int v = 0; v < nv; v++) memcpy(&a[v], b + v * HM_VL, sizeof t);\n"
    "    int k = 0;\n"
    "    for (; k + s <= n; k += s)\n"
    "        HM_UNROLL for (int i = 0; i < s; i++) {\n"
    "            const float *w = W + (size_t)nz[k + i] * ld, xi = x[nz[k + i]];\n"
    "            HM_UNROLL for (int v = 0; v < nv; v++) {\n"
    "                memcpy(&t, w + v * HM_VL, sizeof t);\n"
    "                a[i * nv + v] = HM_MADD(a[i * nv + v], t, xi);\n"
    "            }\n"
    "        }\n"
    "    for (; k < n; k++) {\n"
    "        const float *w = W + (size_t)nz[k] * ld, xi = x[nz[k]];\n"
    "        HM_UNROLL for (int v = 0; v < nv; v++) {\n"
    "            memcpy(&t, w + v * HM_VL, sizeof t);\n"
    "            a[v] = HM_MADD(a[v], t, xi);\n"
    "        }\n"
    "    }\n"
    "    HM_UNROLL for (int v = 0; v < nv; v++) {\n"
    "        HM_UNROLL for (int i = 1; i < s; i++) a[v] = a[v] + a[i * nv + v];\n"
    "        memcpy(y + v * HM_VL, &a[v], sizeof t);\n"
    "    }\n}\n#else\n#define HM_INLINE static inline\n#endif\n\n"
    "/* y (rows) = b + W x over the nonzero entries of x, at j = nz[0..n); W (rows, cols) stored transposed,\n"
    " * column j at W + j rows; rows a multiple of HM_Q. Inlined where rows is a constant, so that the blocks\n"
    " * of rows (each one pass over the inputs) are fixed at compile time. */\n"
    "HM_INLINE void hm_matvec(int rows, int n, const int *restrict nz, const float *restrict x, const float *restrict W,\n"
    "                         const float *restrict b, float *restrict y)\n{\n"
    "#if defined(__GNUC__)\n"
    "    int r = 0;\n"
    "    for (; r + HM_NVMAX * HM_VL <= rows; r += HM_NVMAX * HM_VL)\n"
    "        hm_rows(HM_NVMAX, 1, rows, n, nz, x, W + r, b + r, y + r);\n"
    "    const int nv = (rows - r) / HM_VL; /* the rest, with enough inputs in flight for 8 accumulators */\n"
    "    if (nv) hm_rows(nv, (8 + nv - 1) / nv, rows, n, nz, x, W + r, b + r, y + r);\n"
    "#else\n"
    "    for (int r = 0; r < rows; r++) y[r] = b[r];\n"
    "    for (int k = 0; k < n; k++)\n"
    "        for (int r = 0; r < rows; r++) y[r] += W[(size_t)nz[k] * rows + r] * x[nz[k]];\n"
    "#endif\n}\n\n"
    "/* The positions nz of the nonzero entries of relu(v (n)), whose values are v's; returns their count */\n"
    "static int hm_relu_nonzero(int n, const float *restrict v, int *restrict nz)\n{\n"
    "    int m = 0;\n"
    "#if defined(__GNUC__) && defined(__AVX512F__)\n"
    "    /* n a multiple of HM_Q: the positions of the positive entries of 16 at a time, compressed into nz\n"
    "     * (m <= j, so the full-width store stays within nz[0..n)) */\n"
    "    __m512i pos = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);\n"
    "    for (int j = 0; j < n; j += 16, pos = _mm512_add_epi32(pos, _mm512_set1_epi32(16))) {\n"
    "        const __mmask16 k = _mm512_cmp_ps_mask(_mm512_loadu_ps(v + j), _mm512_setzero_ps(), _CMP_GT_OQ);\n"
    "        _mm512_storeu_si512(nz + m, _mm512_maskz_compress_epi32(k, pos));\n"
    "        m += __builtin_popcount(k);\n    }\n"
    "#elif defined(__GNUC__) && defined(__AVX2__)\n"
    "    /* n a multiple of HM_Q: 32 signs at a time into a mask (vector compares), then its set bits */\n"
    "    for (int j0 = 0; j0 < n; j0 += HM_Q) {\n"
    "        uint32_t bits = 0;\n"
    "        for (int j = 0; j < HM_Q; j++) bits |= (uint32_t)(v[j0 + j] > 0.0f) << j;\n"
    "        for (; bits; bits &= bits - 1) nz[m++] = j0 + __builtin_ctz(bits);\n"
    "    }\n"
    "#else\n"
    "    for (int j = 0; j < n; j++) {\n        nz[m] = j;\n        m += v[j] > 0.0f;\n    }\n"
    "#endif\n"
    "    return m;\n}\n\n";

/* slog(v) = sign(v) log2(1 + |v|) as reformer_input.c's log2f gives it, up to the last bit's rounding (1 value in
 * 100 differs by 1 ulp), but without calls or branches, so that the loop over the features vectorises:
 * log2 u, u = 1 + |v| rounded to float as reformer_input.c does, is the exponent of u plus log2 of its mantissa
 * m in [sqrt 1/2, sqrt 2), 2 atanh(f) / ln 2 with f = (m - 1) / (m + 1), |f| < 0.172, whose series to
 * f^11 leaves a relative error below 1e-10 (in double). Selects are bit masks: a conditional expression
 * would keep GCC from vectorising (it will not speculate the division). */
static const char slog_source[] =
    "static inline float hm_slog(float v)\n{\n"
    "    const float a = fabsf(v), u = 1.0f + a;\n    uint32_t b, rb, vb;\n    memcpy(&b, &u, sizeof b);\n"
    "    const uint32_t up = (b & 0x7fffffu) > 0x3504f3u; /* mantissa above sqrt 2: halve it */\n"
    "    const int e = (int)(b >> 23) - 127 + (int)up;\n"
    "    b = (b & 0x7fffffu) | (0x3f800000u - (up << 23));\n    float m, r;\n    memcpy(&m, &b, sizeof m);\n"
    "    const double f = ((double)m - 1.0) / ((double)m + 1.0), f2 = f * f;\n"
    "    const double l = e + 2.8853900817779268 * f *\n"
    "                             (1.0 + f2 * (1.0 / 3 + f2 * (1.0 / 5 + f2 * (1.0 / 7 + f2 * (1.0 / 9 + f2 / 11)))));\n"
    "    r = copysignf((float)l, v);\n    memcpy(&rb, &r, sizeof rb);\n    memcpy(&vb, &v, sizeof vb);\n"
    "    const uint32_t keep = -(uint32_t)(a < HUGE_VALF); /* +-inf and NaN pass through */\n"
    "    rb = (rb & keep) | (vb & ~keep);\n    memcpy(&r, &rb, sizeof r);\n    return r;\n}\n\n";

/* as reformer_ple (reformer_internal.h), for the "ple" input */
static const char ple_source[] =
    "static inline float hm_ple(float v, float lo, float hi)\n{\n    const float t = (v - lo) / (hi - lo);\n"
    "    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;\n}\n\n";

/* as nn_log_sigmoid, for the product and head combinations */
static const char log_sigmoid_source[] =
    "static float hm_log_sigmoid(float z)\n{\n    float t = -z;\n"
    "    return -((t > 0.0f ? t : 0.0f) + log1pf(expf(-fabsf(t))));\n}\n\n";

/* s (K) from the heads h = [z (K) | a (K)], as combine_heads in reformer.c computes it */
static const char *const combine_source[] = {
    /* product */
    "    const float *z = h, *a = h + HM_K;\n    float mx = z[0], sum = 0.0f;\n"
    "    for (int k = 1; k < HM_K; k++) mx = z[k] > mx ? z[k] : mx;\n"
    "    for (int k = 0; k < HM_K; k++) sum += expf(z[k] - mx);\n    const float lse = mx + logf(sum);\n"
    "    for (int k = 0; k < HM_K; k++) s[k] = z[k] - lse + HM_BETA * hm_log_sigmoid(a[k]);\n",
    /* mask */
    "    const float *z = h, *a = h + HM_K;\n    float mx = z[0], sum = 0.0f;\n"
    "    for (int k = 1; k < HM_K; k++) mx = z[k] > mx ? z[k] : mx;\n"
    "    for (int k = 0; k < HM_K; k++) sum += expf(z[k] - mx);\n    const float lse = mx + logf(sum);\n"
    "    for (int k = 0; k < HM_K; k++) s[k] = z[k] - lse + (a[k] < 0.0f ? -1000.0f : 0.0f);\n",
    /* head */
    "    for (int k = 0; k < HM_K; k++) s[k] = hm_log_sigmoid(h[HM_K + k]);\n",
};

/* The choice without the scores. Every combined score is z_k - lse + c_k, with lse common to all kernels:
 * bounds on z_k + c_k that cover the rounding of the full computation (tol_k, ~60 ulp of the magnitudes
 * involved) rule out every kernel some other kernel beats for certain, and only the survivors' c_k are
 * computed. A single survivor is the full path's argmax; a near tie (-1) falls back to the full path, as
 * does anything not finite. The loops over all kernels are element-wise or running maxima, their one branch
 * rarely taken (a mispredicted branch per kernel would cost more than the rest). */
static const char choose_common[] =
    "/* max of v (n): eight running maxima, so that the loop vectorises. Inlined: GCC assumes a call returns\n"
    " * with the upper vector state clean, and a call in between would leave glibc's SSE code behind the\n"
    " * next libm call running several times slower. */\n"
    "HM_INLINE float hm_max(const float *v, int n)\n{\n"
    "    float p[8] = {v[0], v[0], v[0], v[0], v[0], v[0], v[0], v[0]};\n    int k = 0;\n"
    "    for (; k + 8 <= n; k += 8)\n        for (int l = 0; l < 8; l++) p[l] = v[k + l] > p[l] ? v[k + l] : p[l];\n"
    "    for (; k < n; k++) p[0] = v[k] > p[0] ? v[k] : p[0];\n"
    "    for (int l = 1; l < 8; l++) p[0] = p[l] > p[0] ? p[l] : p[0];\n    return p[0];\n}\n\n";
static const char *const choose_source[] = {
    /* product: log sigmoid(a) lies in [min(a, 0) - ln 2, min(a, 0)] */
    "static int hm_choose(const float *h)\n{\n    const float *z = h, *a = h + HM_K;\n"
    "    float hi[HM_K], lo[HM_K], tol[HM_K], q[HM_K];\n    int cand[HM_K], nc = 0, bad = 0;\n"
    "    const float base = fabsf(hm_max(z, HM_K)) + (float)HM_LOG_K + 1.0f;\n"
    "    for (int k = 0; k < HM_K; k++) {\n"
    "        const float m = 0.5f * (a[k] - fabsf(a[k])); /* min(a, 0) */\n"
    "        hi[k] = z[k] + HM_BETA * m;\n"
    "        tol[k] = 4e-6f * (base + fabsf(z[k]) + HM_BETA * (1.0f - m));\n"
    "        lo[k] = hi[k] - HM_BETA * 0.693147182f - tol[k];\n"
    "        bad |= !(tol[k] < HUGE_VALF); /* z or a not finite */\n    }\n"
    "    if (bad) return -1;\n"
    "    const float cut = hm_max(lo, HM_K);\n"
    "    for (int k = 0; k < HM_K; k++)\n        if (hi[k] + tol[k] >= cut) cand[nc++] = k;\n"
    "    float cut2 = -HUGE_VALF;\n"
    "    for (int i = 0; i < nc; i++) { /* the candidates' scores, exact up to tol */\n"
    "        q[i] = z[cand[i]] + HM_BETA * hm_log_sigmoid(a[cand[i]]);\n"
    "        cut2 = q[i] - tol[cand[i]] > cut2 ? q[i] - tol[cand[i]] : cut2;\n    }\n"
    "    int best = -1, count = 0;\n"
    "    for (int i = 0; i < nc; i++) {\n        const int alive = q[i] + tol[cand[i]] >= cut2;\n"
    "        count += alive;\n        best = alive ? cand[i] : best;\n    }\n    return count == 1 ? best : -1;\n}\n\n",
    /* mask: c_k is 0 or -1000 */
    "static int hm_choose(const float *h)\n{\n    const float *z = h, *a = h + HM_K;\n"
    "    float v[HM_K], lo[HM_K], tol[HM_K];\n    int bad = 0;\n"
    "    const float base = fabsf(hm_max(z, HM_K)) + (float)HM_LOG_K + 1.0f;\n"
    "    for (int k = 0; k < HM_K; k++) {\n"
    "        const float c = a[k] < 0.0f ? -1000.0f : 0.0f;\n"
    "        v[k] = z[k] + c;\n        tol[k] = 4e-6f * (base + fabsf(z[k]) - c);\n        lo[k] = v[k] - tol[k];\n"
    "        bad |= !(tol[k] < HUGE_VALF); /* z not finite */\n    }\n"
    "    if (bad) return -1;\n"
    "    const float cut = hm_max(lo, HM_K);\n"
    "    int best = -1, count = 0;\n"
    "    for (int k = 0; k < HM_K; k++) {\n        const int alive = v[k] + tol[k] >= cut;\n"
    "        count += alive;\n        best = alive ? k : best;\n    }\n    return count == 1 ? best : -1;\n}\n\n",
    /* head: ranks by log sigmoid(a) alone; no shortcut */
    NULL,
};

/* Copies src (rows, cols) row-major into dst at row `at` */
static void put_rows(float *dst, int at, const float *src, int rows, int cols)
{
    memcpy(dst + (size_t)at * cols, src, (size_t)rows * cols * sizeof *dst);
}

/* The first product's inputs are centred at a round number near the mean where there is one, c_j =
 * round(zmean_j) if |c_j - zmean_j| <= zstd_j, instead of at the mean itself: a feature at its usual value
 * (a one-hot code or flag at 0, a stride or depth at 1) then is a zero input, which the runtime skips.
 * The bias absorbs the shift, b += W12 (c - zmean) / zstd (in double); centring farther from the mean
 * would lose accuracy to cancellation. */
static float input_centre(const reformer *r, int j)
{
    const float c = roundf(r->zmean[j]);
    return fabsf(c - r->zmean[j]) <= r->zstd[j] ? c : r->zmean[j];
}

/* b12 (padded: the output part at 0, the hidden part at po) of block 0, with W12 ((dout + dh), n_in) */
static void shift_bias(const reformer *r, float *b12, int po, int dout, const float *W12, int dh)
{
    const int nf = r->n_in;
    for (int i = 0; i < dout + dh; i++) {
        double acc = i < dout ? b12[i] : b12[po + i - dout];
        for (int j = 0; j < nf; j++)
            acc += (double)W12[(size_t)i * nf + j] * ((double)input_centre(r, j) - r->zmean[j]) / r->zstd[j];
        if (i < dout) b12[i] = (float)acc;
        else b12[po + i - dout] = (float)acc;
    }
}

/* The weights: per block W12 and b12 with the output part and the hidden part each padded to whole
 * quanta, A3 padded likewise; the two heads stacked into one matrix [head; app]. */
static int export_weights(const reformer *r, FILE *out)
{
    const int K = r->base.n_kernels, app = r->app_weight > 0.0f, nh = app ? 2 * K : K;
    size_t most = (size_t)row_pad(nh) * r->hidden;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        size_t n = (size_t)(row_pad(g->d_out) + row_pad(g->d_hidden)) * g->d_in;
        most = n > most ? n : most;
    }
    float *M = malloc(most * sizeof *M);
    if (!M) return hr_error(HR_ENOMEM, "out of memory exporting the reformer");
    int rc = HR_OK;
    char name[64];
    for (int l = 0; !rc && l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int din = g->d_in, dh = g->d_hidden, dout = g->d_out, po = row_pad(dout), ph = row_pad(dh);
        const float *W12 = r->fold + r->fold_off[l], *b12 = W12 + (size_t)(dout + dh) * din;
        const float *A3 = b12 + dout + dh;
        memset(M, 0, (size_t)(po + ph) * din * sizeof *M);
        put_rows(M, 0, W12, dout, din);
        put_rows(M, po, W12 + (size_t)dout * din, dh, din);
        snprintf(name, sizeof name, "hm_w12_%d", l);
        if ((rc = export_c_floats_transposed(out, name, M, po + ph, din, 64))) break;
        memset(M, 0, (size_t)(po + ph) * sizeof *M);
        memcpy(M, b12, (size_t)dout * sizeof *M);
        memcpy(M + po, b12 + dout, (size_t)dh * sizeof *M);
        if (l == 0) shift_bias(r, M, po, dout, W12, dh);
        snprintf(name, sizeof name, "hm_b12_%d", l);
        export_c_floats_aligned(out, name, M, (size_t)(po + ph), 64);
        memset(M, 0, (size_t)po * dh * sizeof *M);
        put_rows(M, 0, A3, dout, dh);
        snprintf(name, sizeof name, "hm_a3_%d", l);
        rc = export_c_floats_transposed(out, name, M, po, dh, 64);
    }
    const int hp = row_pad(nh);
    if (!rc) {
        memset(M, 0, (size_t)hp * r->hidden * sizeof *M);
        put_rows(M, 0, r->p.w + r->head.w, K, r->hidden);
        if (app) put_rows(M, K, r->p.w + r->app.w, K, r->hidden);
        rc = export_c_floats_transposed(out, "hm_head_w", M, hp, r->hidden, 64);
    }
    if (!rc) {
        memset(M, 0, (size_t)hp * sizeof *M);
        memcpy(M, r->p.w + r->head.b, (size_t)K * sizeof *M);
        if (app) memcpy(M + K, r->p.w + r->app.b, (size_t)K * sizeof *M);
        export_c_floats_aligned(out, "hm_head_b", M, (size_t)hp, 64);
    }
    free(M);
    return rc;
}

/* hm_model_heads: features -> h = [z (K) | a (K)], the two heads' logits (rows padded to HM_Q) */
static void export_forward(const reformer *r, FILE *out)
{
    const int nf = r->base.n_features, ni = r->n_in, K = r->base.n_kernels, app = r->app_weight > 0.0f;
    int zmax = 0, ymax = 0, vmax = ni;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int po = row_pad(g->d_out), ph = row_pad(g->d_hidden);
        zmax = po + ph > zmax ? po + ph : zmax;
        ymax = po > ymax ? po : ymax;
        vmax = ph > vmax ? ph : vmax;
        vmax = po > vmax ? po : vmax;
    }
    fprintf(out, "#define HM_HEADS %d /* rows of h: z (HM_K), a (HM_K) when the model has it, padding */\n\n",
            row_pad(app ? 2 * K : K));
    fprintf(out, "static void hm_model_heads(const float *x, float *h)\n{\n"
                 "    _Alignas(64) float in[%d], z[%d], y[%d];\n"
                 "    int nz[%d], n = 0; /* the next product's nonzero inputs */\n",
            ni, zmax, ymax, vmax);
    if (r->n_ple) {
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = hm_slog(x[j]);\n", nf);
        fprintf(out, "    for (int c = 0; c < %d; c++) { /* the piecewise-linear encoding of the slog features */\n"
                     "        const float v = hm_ple(in[hm_ple_feature[c]], hm_ple_lo[c], hm_ple_hi[c]);\n"
                     "        in[%d + c] = (v - hm_centre[%d + c]) / hm_zstd[%d + c];\n    }\n",
                r->n_ple, nf, nf, nf);
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = (in[j] - hm_centre[j]) / hm_zstd[j];\n", nf);
    } else if (r->input_log) {
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = (hm_slog(x[j]) - hm_centre[j]) / hm_zstd[j];\n", nf);
    } else {
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = (x[j] - hm_centre[j]) / hm_zstd[j];\n", nf);
    }
    fprintf(out, "    for (int j = 0; j < %d; j++) {\n        nz[n] = j;\n        n += in[j] != 0.0f;\n    }\n", ni);
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int po = row_pad(g->d_out), ph = row_pad(g->d_hidden);
        fprintf(out,
                "    /* block %d: z = [W1; A2'] x + b (%d + %d), y = relu(z_out + A3 relu(z_hidden)) (%d) */\n"
                "    hm_matvec(%d, n, nz, %s, hm_w12_%d, hm_b12_%d, z);\n"
                "    n = hm_relu_nonzero(%d, z + %d, nz);\n"
                "    hm_matvec(%d, n, nz, z + %d, hm_a3_%d, z, y);\n"
                "    n = hm_relu_nonzero(%d, y, nz);\n",
                l, po, ph, po, po + ph, l ? "y" : "in", l, l, ph, po, po, po, l, po);
    }
    fprintf(out, "    hm_matvec(%d, n, nz, y, hm_head_w, hm_head_b, h);\n}\n\n", row_pad(app ? 2 * K : K));
}

int reformer_model_export_c(const model *mb, FILE *out)
{
    const reformer *r = (const reformer *)mb;
    if (r->norm != NN_NORM_BATCH || !r->fold)
        return hr_error(HR_EINVAL, "only batch-norm reformers can be exported to C (this one uses layer norm)");
    const int ni = r->n_in, K = mb->n_kernels, app = r->app_weight > 0.0f;
    fprintf(out, "/* Weight matrices are stored transposed, rows padded to a multiple of HM_Q (see hm_matvec). */\n"
                 "#define HM_Q %d\n#define HM_K %d\n#define HM_BETA %#.9gf\n#define HM_LOG_K %.17g\n\n",
            QUANTUM, K, (double)r->app_beta, log((double)K));
    float *mean = malloc((size_t)ni * sizeof *mean);
    if (!mean) return hr_error(HR_ENOMEM, "out of memory exporting the reformer");
    for (int j = 0; j < ni; j++) mean[j] = input_centre(r, j);
    export_c_floats_aligned(out, "hm_centre", mean, (size_t)ni, 64);
    free(mean);
    export_c_floats_aligned(out, "hm_zstd", r->zstd, (size_t)ni, 64);
    if (r->n_ple) {
        export_c_ints(out, "int", "hm_ple_feature", r->ple_src, (size_t)r->n_ple);
        export_c_floats(out, "hm_ple_lo", r->ple_lo, (size_t)r->n_ple);
        export_c_floats(out, "hm_ple_hi", r->ple_hi, (size_t)r->n_ple);
    }
    int rc = export_weights(r, out);
    if (rc) return rc;
    fputs(kernel_source, out);
    if (r->input_log) fputs(slog_source, out);
    if (r->n_ple) fputs(ple_source, out);
    if (app && r->app_combine != REFORMER_COMBINE_MASK) fputs(log_sigmoid_source, out);
    export_forward(r, out);
    const char *choose = app ? choose_source[r->app_combine] : NULL;
    if (choose) {
        fputs(choose_common, out);
        fputs(choose, out);
    }
    fputs("/* The chosen kernel (the first of the highest scores) and, when asked, every score */\n"
          "#define HM_MODEL_SELECT 1\n"
          "static int hm_model_select(const data_problem *p, const float *x, float *scores)\n{\n"
          "    _Alignas(64) float h[HM_HEADS];\n    (void)p;\n    hm_model_heads(x, h);\n",
          out);
    if (choose) fputs("    if (!scores) {\n        const int k = hm_choose(h);\n        if (k >= 0) return k;\n    }\n", out);
    if (app) fprintf(out, "    float s[HM_K];\n    {\n%s    }\n", combine_source[r->app_combine]);
    else fputs("    const float *s = h; /* no applicability head: the scores are the logits */\n", out);
    fputs("    int best = 0;\n    for (int k = 1; k < HM_K; k++)\n        if (s[k] > s[best]) best = k;\n"
          "    if (scores) memcpy(scores, s, HM_K * sizeof *s);\n    return best;\n}\n",
          out);
    return HR_OK;
}
