/* The runtime of a Reformer towers model of a benchmark table (models/reformer_towers.c): the problem tower once per
 * problem, then per candidate a look-up of v among the configurations the model knows (v precomputed at export),
 * or the configuration tower for one it does not know, a dot product of width HM_D and the linear term over the
 * interaction features q.
 *
 * Copied into exported runtimes by section (export/reformer_towers.c, which writes before it the shape hm_shape,
 * the sizes HM_NP, HM_NK, HM_NX (problem features), HM_NIN (model inputs), HM_NPLE, HM_LOG, HM_DEPTH, HM_HID,
 * HM_EXP, HM_D, HM_NC, HM_CH, HM_NQ, HM_NKNOWN, HM_HASH, and the weights), after data/table_features.h and the
 * table runtime's sort section. Matrices are stored transposed, column j contiguous, so that y = b + W x is a
 * sum of columns scaled by the inputs, which compilers vectorise without reassociating sums; a zero input
 * (a one-hot code, a ReLU output) skips its column.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "data/table_features.h"

/* @section hash */
/* The slot of a configuration's values in the known configurations' open-addressing table (size a power of two,
 * mask = size - 1): FNV-1a over the values' bits (-0 read as +0), then MurmurHash3's 64-bit finaliser, since the
 * low bits of small integers' doubles are all zero. The exporter fills the table with this function. */
static inline uint32_t hm_config_hash(const double *kv, int nk, uint32_t mask)
{
    uint64_t h = 1469598103934665603ull;
    for (int j = 0; j < nk; j++) {
        const double v = kv[j] + 0.0;
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        h = (h ^ b) * 1099511628211ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (uint32_t)h & mask;
}

/* @section scores */
#ifdef HM_D
/* slog(v) = sign(v) log2(1 + |v|), exactly models/reformer_internal.h's */
static inline float hm_slog(float v)
{
    if (v == 0.0f) return 0.0f;
    if (v == 1.0f) return 1.0f;
    return v >= 0.0f ? log2f(1.0f + v) : -log2f(1.0f - v);
}

/* y (m) = b + W x, W stored transposed (n, m); add: y += W x */
static void hm_mv(int m, int n, const float *Wt, const float *b, const float *x, float *y, int add)
{
    if (!add) memcpy(y, b, (size_t)m * sizeof *y);
    for (int j = 0; j < n; j++) {
        const float xj = x[j];
        if (xj == 0.0f) continue;
        const float *w = Wt + (size_t)j * m;
        for (int i = 0; i < m; i++) y[i] += xj * w[i];
    }
}

static void hm_relu(float *y, int n)
{
    for (int i = 0; i < n; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

/* u (HM_D) of the problem features x: input transform, the Gamma-blocks (batch norm folded) and the head */
static void hm_problem_u(const float *x, float *u)
{
    float in[HM_NIN], a[HM_HID + HM_EXP], b[HM_HID + HM_EXP];
    for (int j = 0; j < HM_NX; j++) in[j] = HM_LOG ? hm_slog(x[j]) : x[j];
    for (int c = 0; c < HM_NPLE; c++) {
        const float t = (in[hm_ple_src[c]] - hm_ple_lo[c]) / (hm_ple_hi[c] - hm_ple_lo[c]);
        in[HM_NX + c] = ((t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t) - hm_zmean[HM_NX + c]) / hm_zstd[HM_NX + c];
    }
    for (int j = 0; j < HM_NX; j++) in[j] = (in[j] - hm_zmean[j]) / hm_zstd[j];
    const float *cur = in;
    for (int l = 0; l < HM_DEPTH; l++) {
        float *z = l % 2 ? b : a;
        hm_mv(HM_HID + HM_EXP, l ? HM_HID : HM_NIN, hm_w12[l], hm_b12[l], cur, z, 0);
        hm_relu(z + HM_HID, HM_EXP);
        hm_mv(HM_HID, HM_EXP, hm_a3[l], 0, z + HM_HID, z, 1);
        hm_relu(z, HM_HID);
        cur = z;
    }
    hm_mv(HM_D, HM_HID, hm_head_w, hm_head_b, cur, u, 0);
}

/* v (HM_D) of a configuration kv the model does not know: its columns' encodings, z-scored, through the tower */
static void hm_config_v(const double *kv, float *v)
{
    float e[HM_NC], h[HM_CH];
    int o = 0;
    for (int k = 0; k < HM_NK; k++) o += data_table_shape_encode(hm_shape.kernel_vocab[k], kv[k], e + o);
    for (int j = 0; j < HM_NC; j++) e[j] = (e[j] - hm_cmean[j]) / hm_cstd[j];
    hm_mv(HM_CH, HM_NC, hm_c1_w, hm_c1_b, e, h, 0);
    hm_relu(h, HM_CH);
    hm_mv(HM_D, HM_CH, hm_c2_w, hm_c2_b, h, v, 0);
}

/* v of kv: the precomputed one of a known configuration, else computed into buf */
static const float *hm_config_lookup(const double *kv, float *buf)
{
    for (uint32_t s = hm_config_hash(kv, HM_NK, HM_HASH - 1);; s = (s + 1) & (HM_HASH - 1)) {
        const int k = hm_slot[s];
        if (k < 0) break;
        if (!memcmp(hm_configs + (size_t)k * HM_NK, kv, HM_NK * sizeof *kv)) return hm_vknown + (size_t)k * HM_D;
    }
    hm_config_v(kv, buf);
    return buf;
}

/* Scores (n) of n candidates kv (n, HM_NK) for the problem pv (HM_NP). As the library does, the pair features
 * read the problem's values back from its float features. */
static void hm_table_scores(const double *pv, const double *kv, int n, float *scores)
{
    float x[HM_NX + 1], u[HM_D], buf[HM_D], q[HM_NQ + 1];
    double pr[HM_NP];
    data_table_shape_problem_features(&hm_shape, pv, x);
    data_table_shape_problem_values(&hm_shape, x, pr);
    hm_problem_u(x, u);
    for (int i = 0; i < n; i++) {
        const double *c = kv + (size_t)i * HM_NK;
        const float *v = hm_config_lookup(c, buf);
        float s = hm_inter_b;
        if (HM_NQ) {
            data_table_shape_interaction_features(&hm_shape, pr, c, q);
            for (int j = 0; j < HM_NQ; j++) s += hm_inter_w[j] * ((hm_slog(q[j]) - hm_qmean[j]) / hm_qstd[j]);
        }
        for (int k = 0; k < HM_D; k++) s += u[k] * v[k];
        scores[i] = s;
    }
}
#endif
