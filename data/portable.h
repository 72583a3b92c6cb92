/* portable: the problem descriptor, its features and the solver rules in plain C11 with libm only.
 *
 * This file is the single source of these computations: heurist includes it, and `heurist export
 * --format c` copies it verbatim into the generated runtime, so an exported model computes exactly the
 * features it was trained on. Everything here is static inline; nothing allocates.
 */
#ifndef HEURIST_DATA_PORTABLE_H
#define HEURIST_DATA_PORTABLE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Each vocabulary below is one X-macro list, X(ID, "name"), in order: the one definition of its enum and of
 * its names (data/problem.c's name tables, data/features.c's feature names, the key parser). */

/* Numeric fields of a problem key, in this order. For 2-D problems the depth fields are 1 (sizes,
 * stride, dilation) or 0 (pad). For B and W problems "in" is dy and "out" is dx/x (MIOpen's key
 * convention), kept as written. */
#define DATA_FIELD_LIST(X)                                                                                      \
    X(IN_C, "in_c") X(IN_D, "in_d") X(IN_H, "in_h") X(IN_W, "in_w") X(FIL_D, "fil_d") X(FIL_H, "fil_h")         \
    X(FIL_W, "fil_w") X(OUT_C, "out_c") X(OUT_D, "out_d") X(OUT_H, "out_h") X(OUT_W, "out_w")                  \
    X(BATCH, "batch") X(PAD_D, "pad_d") X(PAD_H, "pad_h") X(PAD_W, "pad_w") X(STRIDE_D, "stride_d")            \
    X(STRIDE_H, "stride_h") X(STRIDE_W, "stride_w") X(DIL_D, "dil_d") X(DIL_H, "dil_h") X(DIL_W, "dil_w")      \
    X(BIAS, "bias") X(GROUPS, "groups") X(SPATIAL_DIM, "spatial_dim")
#define DATA_DIRECTION_LIST(X) X(F, "F") X(B, "B") X(W, "W")
/* Fixed vocabularies, so an encoding never depends on which file was read first. */
#define DATA_DTYPE_LIST(X)                                                                                      \
    X(FP32, "FP32") X(FP16, "FP16") X(BF16, "BF16") X(INT8, "INT8") X(INT32, "INT32") X(FP8, "FP8")            \
    X(BFP8, "BFP8") X(FP64, "FP64") X(OTHER, "other")
#define DATA_LAYOUT_LIST(X)                                                                                     \
    X(NCHW, "NCHW") X(NHWC, "NHWC") X(NCDHW, "NCDHW") X(NDHWC, "NDHWC") X(CHWN, "CHWN") X(MIXED, "mixed")      \
    X(OTHER, "other")

#define DATA_PORTABLE_NAME(id, name) name,
#define DATA_PORTABLE_FIELD_ENUM(id, name) DATA_FIELD_##id,
#define DATA_PORTABLE_DIR_ENUM(id, name) DATA_DIR_##id,
#define DATA_PORTABLE_DTYPE_ENUM(id, name) DATA_DTYPE_##id,
#define DATA_PORTABLE_LAYOUT_ENUM(id, name) DATA_LAYOUT_##id,
typedef enum data_field { DATA_FIELD_LIST(DATA_PORTABLE_FIELD_ENUM) DATA_FIELD_COUNT } data_field;
typedef enum data_direction { DATA_DIRECTION_LIST(DATA_PORTABLE_DIR_ENUM) DATA_DIR_COUNT } data_direction;
typedef enum data_dtype { DATA_DTYPE_LIST(DATA_PORTABLE_DTYPE_ENUM) DATA_DTYPE_COUNT } data_dtype;
typedef enum data_layout { DATA_LAYOUT_LIST(DATA_PORTABLE_LAYOUT_ENUM) DATA_LAYOUT_COUNT } data_layout;


/* A problem: its key's fields and categories, and the precision class it is asked under (data_precision, below):
 * the key's suffix "_strict" or "_conversion" after the direction (and its "_g<G>"); an FP32 key without one is
 * the TF32 class, PyTorch's default, and a problem of any other data type is TF32 whatever its suffix says, since
 * every class allows it every kernel. */
typedef struct data_problem {
    int64_t f[DATA_FIELD_COUNT]; /* indexed by data_field */
    int8_t layout;               /* data_layout */
    int8_t dtype;                /* data_dtype */
    int8_t direction;            /* data_direction */
    int8_t precision;            /* data_precision */
} data_problem;

/* ---- problem keys ---- */
static inline const char *data_portable_layout_name(int i)
{
    static const char *const names[DATA_LAYOUT_COUNT] = {DATA_LAYOUT_LIST(DATA_PORTABLE_NAME)};
    return names[i];
}

static inline const char *data_portable_dtype_name(int i)
{
    static const char *const names[DATA_DTYPE_COUNT] = {DATA_DTYPE_LIST(DATA_PORTABLE_NAME)};
    return names[i];
}

#define DATA_KEY_MAX_TOKENS 24

typedef struct data_portable_tok {
    const char *s;
    size_t n;
} data_portable_tok;

static inline int data_portable_tok_eq(data_portable_tok t, const char *lit)
{
    size_t n = strlen(lit);
    return t.n == n && memcmp(t.s, lit, n) == 0;
}

/* ---- precision classes ----
 * Which arithmetic an FP32 convolution allows, as a filter of cuDNN kernel names "<ALGORITHM>.<math>"
 * (heurist-collect's find-db, one kernel per algorithm x cudnnMathType_t):
 *   STRICT      FP32 arithmetic only: the `fma` kernels (CUDNN_FMA_MATH)
 *   TF32        PyTorch's allow_tf32: `default`, `tensor_op` (TF32 tensor cores) and `fma` kernels
 *   CONVERSION  FP32 inputs may be converted to FP16 / BF16: every kernel, `tensor_op_allow_conversion` too
 * cuDNN's heuristic is asked for a class with the math type data_portable_precision_math names. FP16 and BF16
 * problems allow every kernel in every class (their heuristic is asked with TENSOR_OP); a name without one of
 * the four math suffixes (an MIOpen solver, a table configuration) is allowed by every class. */
#define DATA_PRECISION_LIST(X) X(STRICT, "strict") X(TF32, "tf32") X(CONVERSION, "conversion")
#define DATA_PORTABLE_PRECISION_ENUM(id, name) DATA_PRECISION_##id,
typedef enum data_precision { DATA_PRECISION_LIST(DATA_PORTABLE_PRECISION_ENUM) DATA_PRECISION_COUNT } data_precision;

static inline const char *data_portable_precision_name(int i)
{
    static const char *const names[DATA_PRECISION_COUNT] = {DATA_PRECISION_LIST(DATA_PORTABLE_NAME)};
    return i >= 0 && i < DATA_PRECISION_COUNT ? names[i] : NULL;
}

/* The math type cuDNN's heuristic is asked with under class i: "fma", "default" or
 * "tensor_op_allow_conversion" (cudnnMathType_t's names as heurist-collect writes them), NULL out of range. */
static inline const char *data_portable_precision_math(int i)
{
    static const char *const maths[DATA_PRECISION_COUNT] = {"fma", "default", "tensor_op_allow_conversion"};
    return i >= 0 && i < DATA_PRECISION_COUNT ? maths[i] : NULL;
}

/* 1 when kernel name[0..len) may serve a problem of data type dtype (data_dtype) under class precision. */
static inline int data_portable_precision_allows(int precision, int dtype, const char *name, size_t len)
{
    if (dtype != DATA_DTYPE_FP32 || precision == DATA_PRECISION_CONVERSION) return 1;
    size_t dot = len;
    while (dot > 0 && name[dot - 1] != '.') dot--;
    if (dot == 0) return 1;
    data_portable_tok math = {name + dot, len - dot};
    if (data_portable_tok_eq(math, "fma")) return 1;
    if (data_portable_tok_eq(math, "default") || data_portable_tok_eq(math, "tensor_op"))
        return precision == DATA_PRECISION_TF32;
    if (data_portable_tok_eq(math, "tensor_op_allow_conversion")) return 0;
    return 1;
}

/* @section guard */
/* The vendor guard of a selection, the one rule of heurist's evaluation and of an exported runtime, given the
 * vendor's rank of each kernel (vendor_rank (n): 0 its first pick, -1 not listed): with top > 0 the kernels outside
 * the vendor's first `top` score -INFINITY (the model re-ranks the vendor's candidates); then the kernel of the
 * highest score (the first of equal ones) replaces the vendor's first pick only when its score beats the vendor
 * pick's by at least `margin`, else the vendor's pick is raised just above it, so that it ranks first. scores (n)
 * are updated in place; returns the pick. The margin rule is skipped when margin <= 0 or the vendor's pick has no
 * finite score; a problem the vendor does not rank (no kernel of rank 0, or vendor_rank NULL) keeps its scores. */
static inline int data_portable_guard(float *scores, int n, const int16_t *vendor_rank, int top, float margin)
{
    int vendor = -1, best = 0;
    for (int k = 0; vendor_rank && k < n && vendor < 0; k++)
        if (vendor_rank[k] == 0) vendor = k;
    for (int k = 0; vendor >= 0 && top > 0 && k < n; k++)
        if (vendor_rank[k] < 0 || vendor_rank[k] >= top) scores[k] = -INFINITY;
    for (int k = 1; k < n; k++)
        if (scores[k] > scores[best]) best = k;
    if (!(margin > 0) || vendor < 0 || !isfinite(scores[vendor]) || best == vendor) return best;
    if (scores[best] - scores[vendor] >= margin) return best;
    scores[vendor] = nextafterf(scores[best], INFINITY);
    return vendor;
}
/* @section parse */

/* Non-negative decimal integer, the whole token. */
static inline int data_portable_parse_uint(const char *s, size_t n, int64_t *v)
{
    if (n == 0 || n > 12) return -1;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

/* "AxB" or "AxBxC": exactly `dims` numbers separated by 'x'. */
static inline int data_portable_parse_dims(data_portable_tok t, int dims, int64_t *v)
{
    size_t start = 0;
    int k = 0;
    for (size_t i = 0; i <= t.n; i++) {
        if (i == t.n || t.s[i] == 'x') {
            if (k >= dims || data_portable_parse_uint(t.s + start, i - start, &v[k])) return -1;
            k++;
            start = i + 1;
        }
    }
    return k == dims ? 0 : -1;
}

static inline int data_portable_count_x(data_portable_tok t)
{
    int c = 0;
    for (size_t i = 0; i < t.n; i++) c += t.s[i] == 'x';
    return c;
}

static inline int data_portable_layout_of(data_portable_tok t)
{
    for (int i = 0; i < DATA_LAYOUT_MIXED; i++)
        if (data_portable_tok_eq(t, data_portable_layout_name(i))) return i;
    return DATA_LAYOUT_OTHER;
}

static inline int data_portable_dtype_of(data_portable_tok t)
{
    for (int i = 0; i < DATA_DTYPE_OTHER; i++)
        if (data_portable_tok_eq(t, data_portable_dtype_name(i))) return i;
    return -1;
}


/* Parses a find-db problem key; 0, or -1 with *why naming the problem. */
static inline int data_portable_key_parse(const char *key, size_t len, data_problem *out, const char **why)
{
    data_portable_tok t[DATA_KEY_MAX_TOKENS];
    int nt = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || key[i] == '-') {
            if (nt == DATA_KEY_MAX_TOKENS) {
                *why = "too many key fields";
                return -1;
            }
            t[nt].s = key + start;
            t[nt].n = i - start;
            nt++;
            start = i + 1;
        }
    }
    if (nt < 15) {
        *why = "too few key fields";
        return -1;
    }
    memset(out, 0, sizeof *out);
    int64_t *f = out->f;
    int is3d;
    if (data_portable_count_x(t[3]) == 1) is3d = 0;
    else if (data_portable_count_x(t[3]) == 0 && data_portable_count_x(t[4]) == 2) is3d = 1;
    else {
        *why = "bad filter field";
        return -1;
    }
    int nd = is3d ? 3 : 2;
    int bias_at = is3d ? 13 : 11;
    if (nt < bias_at + 4) {
        *why = "too few key fields";
        return -1;
    }
    int64_t v3[3];
    int i = 0;
    if (data_portable_parse_uint(t[i++].s, t[0].n, &f[DATA_FIELD_IN_C])) goto numeric;
    f[DATA_FIELD_IN_D] = 1;
    if (is3d && data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_IN_D])) goto numeric;
    i += is3d;
    if (data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_IN_H])) goto numeric;
    i++;
    if (data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_IN_W])) goto numeric;
    i++;
    if (data_portable_parse_dims(t[i++], nd, v3)) {
        *why = "bad filter field";
        return -1;
    }
    f[DATA_FIELD_FIL_D] = is3d ? v3[0] : 1;
    f[DATA_FIELD_FIL_H] = v3[nd - 2];
    f[DATA_FIELD_FIL_W] = v3[nd - 1];
    if (data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_OUT_C])) goto numeric;
    i++;
    f[DATA_FIELD_OUT_D] = 1;
    if (is3d && data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_OUT_D])) goto numeric;
    i += is3d;
    if (data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_OUT_H])) goto numeric;
    i++;
    if (data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_OUT_W])) goto numeric;
    i++;
    if (data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_BATCH])) goto numeric;
    i++;
    static const data_field triple[3][3] = {
        {DATA_FIELD_PAD_D, DATA_FIELD_PAD_H, DATA_FIELD_PAD_W},
        {DATA_FIELD_STRIDE_D, DATA_FIELD_STRIDE_H, DATA_FIELD_STRIDE_W},
        {DATA_FIELD_DIL_D, DATA_FIELD_DIL_H, DATA_FIELD_DIL_W},
    };
    static const char *const triple_why[3] = {"bad pad field", "bad stride field", "bad dilation field"};
    for (int k = 0; k < 3; k++) {
        if (data_portable_parse_dims(t[i++], nd, v3)) {
            *why = triple_why[k];
            return -1;
        }
        f[triple[k][0]] = is3d ? v3[0] : (k == 0 ? 0 : 1);
        f[triple[k][1]] = v3[nd - 2];
        f[triple[k][2]] = v3[nd - 1];
    }
    if (data_portable_parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_BIAS]) || f[DATA_FIELD_BIAS] > 1) {
        *why = "bad bias field";
        return -1;
    }
    i++;
    int rest = nt - i;
    if (rest == 3) {
        out->layout = (int8_t)data_portable_layout_of(t[i]);
    } else if (rest == 5) {
        int a = data_portable_layout_of(t[i]), b = data_portable_layout_of(t[i + 1]), c = data_portable_layout_of(t[i + 2]);
        out->layout = (int8_t)((a == b && b == c) ? a : DATA_LAYOUT_MIXED);
    } else {
        *why = "bad layout/type/direction fields";
        return -1;
    }
    int dt = data_portable_dtype_of(t[nt - 2]);
    if (dt < 0) {
        /* unknown but well-formed type names (upper-case letters and digits) are kept as "other" */
        data_portable_tok d = t[nt - 2];
        if (d.n == 0) {
            *why = "bad data type field";
            return -1;
        }
        for (size_t k = 0; k < d.n; k++)
            if (!((d.s[k] >= 'A' && d.s[k] <= 'Z') || (d.s[k] >= '0' && d.s[k] <= '9'))) {
                *why = "bad data type field";
                return -1;
            }
        dt = DATA_DTYPE_OTHER;
    }
    out->dtype = (int8_t)dt;
    data_portable_tok d = t[nt - 1];
    if (d.n == 0 || (d.n > 1 && d.s[1] != '_')) {
        *why = "bad direction field";
        return -1;
    }
    switch (d.s[0]) {
    case 'F': out->direction = DATA_DIR_F; break;
    case 'B': out->direction = DATA_DIR_B; break;
    case 'W': out->direction = DATA_DIR_W; break;
    default: *why = "bad direction field"; return -1;
    }
    f[DATA_FIELD_GROUPS] = 1;
    out->precision = DATA_PRECISION_TF32;
    /* suffixes: "_g<G>" sets the group count, "_strict", "_tf32" and "_conversion" the precision class (of an FP32
     * problem: another data type stays TF32); other "_..." suffixes are accepted and ignored */
    for (size_t k = 1; k < d.n; k++) {
        if (d.s[k] != '_') continue;
        size_t e = k + 1;
        while (e < d.n && d.s[e] != '_') e++;
        data_portable_tok sfx = {d.s + k + 1, e - k - 1};
        if (sfx.n > 0 && sfx.s[0] == 'g') {
            if (data_portable_parse_uint(sfx.s + 1, sfx.n - 1, &f[DATA_FIELD_GROUPS]) || f[DATA_FIELD_GROUPS] < 1) {
                *why = "bad group suffix";
                return -1;
            }
        }
        for (int c = 0; c < DATA_PRECISION_COUNT; c++)
            if (data_portable_tok_eq(sfx, data_portable_precision_name(c)) && out->dtype == DATA_DTYPE_FP32)
                out->precision = (int8_t)c;
    }
    f[DATA_FIELD_SPATIAL_DIM] = nd;
    /* every size, filter, stride and dilation of every spatial slot (depth too) is at least 1: a consumer
     * divides by strides and multiplies sizes */
    static const data_field nonzero[] = {DATA_FIELD_IN_C,     DATA_FIELD_OUT_C,    DATA_FIELD_BATCH,    DATA_FIELD_IN_D,
                                         DATA_FIELD_IN_H,     DATA_FIELD_IN_W,     DATA_FIELD_OUT_D,    DATA_FIELD_OUT_H,
                                         DATA_FIELD_OUT_W,    DATA_FIELD_FIL_D,    DATA_FIELD_FIL_H,    DATA_FIELD_FIL_W,
                                         DATA_FIELD_STRIDE_D, DATA_FIELD_STRIDE_H, DATA_FIELD_STRIDE_W, DATA_FIELD_DIL_D,
                                         DATA_FIELD_DIL_H,    DATA_FIELD_DIL_W};
    for (size_t z = 0; z < sizeof nonzero / sizeof nonzero[0]; z++)
        if (f[nonzero[z]] == 0) {
            *why = "zero size field";
            return -1;
        }
    /* every tensor's element count (x, y, and w without the group split) fits int64, so the integer products of
     * sizes the features take (data_portable_features) cannot overflow */
    static const data_field tensor[3][5] = {
        {DATA_FIELD_BATCH, DATA_FIELD_IN_C, DATA_FIELD_IN_D, DATA_FIELD_IN_H, DATA_FIELD_IN_W},
        {DATA_FIELD_BATCH, DATA_FIELD_OUT_C, DATA_FIELD_OUT_D, DATA_FIELD_OUT_H, DATA_FIELD_OUT_W},
        {DATA_FIELD_IN_C, DATA_FIELD_OUT_C, DATA_FIELD_FIL_D, DATA_FIELD_FIL_H, DATA_FIELD_FIL_W},
    };
    for (int a = 0; a < 3; a++) {
        int64_t e = 1;
        for (int b = 0; b < 5; b++) {
            if (f[tensor[a][b]] > INT64_MAX / e) {
                *why = "tensor size overflows 64 bits";
                return -1;
            }
            e *= f[tensor[a][b]];
        }
    }
    return 0;
numeric:
    *why = "non-numeric size field";
    return -1;
}

/* derived numeric features, after the DATA_FIELD_COUNT raw fields: X(ID, "name") as above */
#define DATA_FEAT_LIST(X)                                                                                       \
    X(LOG2_IN_C, "log2_in_c") X(LOG2_OUT_C, "log2_out_c") X(LOG2_BATCH, "log2_batch")                          \
    X(LOG2_IN_SPATIAL, "log2_in_spatial") X(LOG2_OUT_SPATIAL, "log2_out_spatial") X(LOG2_FILTER, "log2_filter") \
    X(LOG2_FLOPS, "log2_flops") X(LOG2_BYTES, "log2_bytes") X(LOG2_INTENSITY, "log2_intensity")                \
    X(LOG2_GEMM_M, "log2_gemm_m") X(LOG2_GEMM_N, "log2_gemm_n") X(LOG2_GEMM_K, "log2_gemm_k")                  \
    X(BYTES_PER_ELEMENT, "bytes_per_element") X(IS_1X1, "is_1x1") X(UNIT_STRIDE, "unit_stride")                \
    X(ZERO_PAD, "zero_pad") X(C_MOD4, "c_mod4") X(K_MOD4, "k_mod4") X(C_MOD8, "c_mod8") X(K_MOD8, "k_mod8")    \
    X(C_PER_GROUP_LOG2, "log2_c_per_group")                                                                     \
    /* power-of-two divisibility (trailing zero bits, at most 10) and GEMM tile padding waste */                \
    X(TZ_IN_C, "tz_in_c") X(TZ_OUT_C, "tz_out_c") X(TZ_BATCH, "tz_batch") X(TZ_GEMM_M, "tz_gemm_m")            \
    X(TZ_GEMM_N, "tz_gemm_n") X(TZ_GEMM_K, "tz_gemm_k") X(WASTE_M_32, "waste_m_32")                            \
    X(WASTE_M_128, "waste_m_128") X(WASTE_N_32, "waste_n_32") X(WASTE_N_128, "waste_n_128")                    \
    X(WASTE_K_32, "waste_k_32") X(WASTE_K_128, "waste_k_128")
#define DATA_PORTABLE_FEAT_ENUM(id, name) DATA_FEAT_##id,
enum { DATA_FEAT_LIST(DATA_PORTABLE_FEAT_ENUM) DATA_FEAT_COUNT };

#define DATA_N_NUMERIC (DATA_FIELD_COUNT + DATA_FEAT_COUNT)
#define DATA_N_FEATURES (DATA_N_NUMERIC + DATA_DIR_COUNT + DATA_DTYPE_COUNT + DATA_LAYOUT_COUNT + DATA_PRECISION_COUNT)

static inline int data_portable_dtype_bytes(int dtype)
{
    switch (dtype) {
    case DATA_DTYPE_FP16:
    case DATA_DTYPE_BF16: return 2;
    case DATA_DTYPE_INT8:
    case DATA_DTYPE_FP8:
    case DATA_DTYPE_BFP8: return 1;
    case DATA_DTYPE_FP64: return 8;
    default: return 4;
    }
}

static inline float data_portable_lg2(double v)
{
    return (float)log2(v > 0 ? v : 1); /* sizes are positive; 0 only for absent quantities */
}

/* trailing zero bits of v, at most 10 (0 for v <= 0) */
static inline float data_portable_tz(int64_t v)
{
    int z = 0;
    while (v > 0 && z < 10 && (v & 1) == 0) {
        v >>= 1;
        z++;
    }
    return (float)z;
}

/* fraction of a tile-padded extent that is padding: ceil(v / t) * t / v - 1 */
static inline float data_portable_waste(int64_t v, int64_t t)
{
    if (v <= 0) return 0.0f;
    return (float)((double)((v + t - 1) / t * t) / (double)v - 1.0);
}

static inline void data_portable_features(const data_problem *p, float *x)
{
    const int64_t *f = p->f;
    for (int i = 0; i < DATA_FIELD_COUNT; i++) x[i] = (float)f[i];
    float *d = x + DATA_FIELD_COUNT;
    double in_sp = (double)f[DATA_FIELD_IN_D] * (double)f[DATA_FIELD_IN_H] * (double)f[DATA_FIELD_IN_W];
    double out_sp = (double)f[DATA_FIELD_OUT_D] * (double)f[DATA_FIELD_OUT_H] * (double)f[DATA_FIELD_OUT_W];
    double fil = (double)f[DATA_FIELD_FIL_D] * (double)f[DATA_FIELD_FIL_H] * (double)f[DATA_FIELD_FIL_W];
    double g = (double)(f[DATA_FIELD_GROUPS] > 0 ? f[DATA_FIELD_GROUPS] : 1);
    double n = (double)f[DATA_FIELD_BATCH], c = (double)f[DATA_FIELD_IN_C], k = (double)f[DATA_FIELD_OUT_C];
    /* the forward output is the key's "out" for F and its "in" (dy) for B and W */
    double fwd_out_sp = p->direction == DATA_DIR_F ? out_sp : in_sp;
    double macs = n * c * k / g * fil * fwd_out_sp;
    double bpe = data_portable_dtype_bytes(p->dtype);
    double bytes = bpe * (n * c * in_sp + n * k * out_sp + c * k / g * fil);
    d[DATA_FEAT_LOG2_IN_C] = data_portable_lg2(c);
    d[DATA_FEAT_LOG2_OUT_C] = data_portable_lg2(k);
    d[DATA_FEAT_LOG2_BATCH] = data_portable_lg2(n);
    d[DATA_FEAT_LOG2_IN_SPATIAL] = data_portable_lg2(in_sp);
    d[DATA_FEAT_LOG2_OUT_SPATIAL] = data_portable_lg2(out_sp);
    d[DATA_FEAT_LOG2_FILTER] = data_portable_lg2(fil);
    d[DATA_FEAT_LOG2_FLOPS] = data_portable_lg2(2.0 * macs);
    d[DATA_FEAT_LOG2_BYTES] = data_portable_lg2(bytes);
    d[DATA_FEAT_LOG2_INTENSITY] = data_portable_lg2(2.0 * macs / (bytes > 0 ? bytes : 1));
    d[DATA_FEAT_LOG2_GEMM_M] = data_portable_lg2(n * fwd_out_sp);
    d[DATA_FEAT_LOG2_GEMM_N] = data_portable_lg2(p->direction == DATA_DIR_F ? k : c);
    d[DATA_FEAT_LOG2_GEMM_K] = data_portable_lg2((p->direction == DATA_DIR_F ? c : k) / g * fil);
    d[DATA_FEAT_BYTES_PER_ELEMENT] = (float)bpe;
    d[DATA_FEAT_IS_1X1] = fil == 1.0;
    d[DATA_FEAT_UNIT_STRIDE] = f[DATA_FIELD_STRIDE_D] == 1 && f[DATA_FIELD_STRIDE_H] == 1 && f[DATA_FIELD_STRIDE_W] == 1;
    d[DATA_FEAT_ZERO_PAD] = f[DATA_FIELD_PAD_D] == 0 && f[DATA_FIELD_PAD_H] == 0 && f[DATA_FIELD_PAD_W] == 0;
    d[DATA_FEAT_C_MOD4] = (float)(f[DATA_FIELD_IN_C] % 4);
    d[DATA_FEAT_K_MOD4] = (float)(f[DATA_FIELD_OUT_C] % 4);
    d[DATA_FEAT_C_MOD8] = (float)(f[DATA_FIELD_IN_C] % 8);
    d[DATA_FEAT_K_MOD8] = (float)(f[DATA_FIELD_OUT_C] % 8);
    d[DATA_FEAT_C_PER_GROUP_LOG2] = data_portable_lg2(c / g);
    {
        const int64_t gi = f[DATA_FIELD_GROUPS] > 0 ? f[DATA_FIELD_GROUPS] : 1;
        const int64_t fil_i = f[DATA_FIELD_FIL_D] * f[DATA_FIELD_FIL_H] * f[DATA_FIELD_FIL_W];
        const int64_t sp_i = p->direction == DATA_DIR_F
                                 ? f[DATA_FIELD_OUT_D] * f[DATA_FIELD_OUT_H] * f[DATA_FIELD_OUT_W]
                                 : f[DATA_FIELD_IN_D] * f[DATA_FIELD_IN_H] * f[DATA_FIELD_IN_W];
        const int64_t gm = f[DATA_FIELD_BATCH] * sp_i;
        const int64_t gn = p->direction == DATA_DIR_F ? f[DATA_FIELD_OUT_C] : f[DATA_FIELD_IN_C];
        const int64_t gk = (p->direction == DATA_DIR_F ? f[DATA_FIELD_IN_C] : f[DATA_FIELD_OUT_C]) / gi * fil_i;
        d[DATA_FEAT_TZ_IN_C] = data_portable_tz(f[DATA_FIELD_IN_C]);
        d[DATA_FEAT_TZ_OUT_C] = data_portable_tz(f[DATA_FIELD_OUT_C]);
        d[DATA_FEAT_TZ_BATCH] = data_portable_tz(f[DATA_FIELD_BATCH]);
        d[DATA_FEAT_TZ_GEMM_M] = data_portable_tz(gm);
        d[DATA_FEAT_TZ_GEMM_N] = data_portable_tz(gn);
        d[DATA_FEAT_TZ_GEMM_K] = data_portable_tz(gk);
        d[DATA_FEAT_WASTE_M_32] = data_portable_waste(gm, 32);
        d[DATA_FEAT_WASTE_M_128] = data_portable_waste(gm, 128);
        d[DATA_FEAT_WASTE_N_32] = data_portable_waste(gn, 32);
        d[DATA_FEAT_WASTE_N_128] = data_portable_waste(gn, 128);
        d[DATA_FEAT_WASTE_K_32] = data_portable_waste(gk, 32);
        d[DATA_FEAT_WASTE_K_128] = data_portable_waste(gk, 128);
    }
    float *oh = x + DATA_N_NUMERIC;
    memset(oh, 0, (DATA_N_FEATURES - DATA_N_NUMERIC) * sizeof *oh);
    oh[p->direction] = 1.0f;
    oh[DATA_DIR_COUNT + p->dtype] = 1.0f;
    oh[DATA_DIR_COUNT + DATA_DTYPE_COUNT + p->layout] = 1.0f;
    oh[DATA_DIR_COUNT + DATA_DTYPE_COUNT + DATA_LAYOUT_COUNT + p->precision] = 1.0f;
}

/* ConvAsm1x1U tuning parameters, checked prefix by prefix (the rules of the data README). */
static inline int data_portable_pow2_upto(int64_t v, int64_t max)
{
    return v >= 1 && v <= max && (v & (v - 1)) == 0;
}

static inline int64_t data_portable_ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static inline int data_portable_asm1x1u_value_ok(int pos, int64_t v)
{
    switch (pos) {
    case 0: return v >= 1 && v <= 4;
    case 1: return v == 1 || (v >= 4 && v <= 32 && v % 4 == 0);
    case 2: return v >= 1 && v <= 16;
    case 3: return data_portable_pow2_upto(v, 64);
    case 4: return v >= 1 && v <= 8;
    case 5: return data_portable_pow2_upto(v, 32);
    case 6: return v >= 1 && v <= 8;
    case 7: return v == 1 || v == 2 || v == 4 || v == 8;
    }
    return 0;
}

/* ConvAsm1x1U (MIOpen's IsValidValue/IsValid rules as described in the data README). */
static inline int data_portable_asm1x1u_valid(const data_problem *p, const int32_t *v, int len)
{
    if (len > 8) return 0;
    for (int i = 0; i < len; i++)
        if (!data_portable_asm1x1u_value_ok(i, v[i])) return 0;
    int bytes = (p->dtype == DATA_DTYPE_FP16 || p->dtype == DATA_DTYPE_BF16) ? 2 : 4;
    int64_t e = 4 / bytes;
    int64_t C = p->f[DATA_FIELD_IN_C], K = p->f[DATA_FIELD_OUT_C], N = p->f[DATA_FIELD_BATCH];
    int64_t hw = p->f[DATA_FIELD_OUT_H] * p->f[DATA_FIELD_OUT_W];
    if (len < 2) return 1;
    int64_t read_size = v[0], k_mult = v[1];
    if (k_mult % e) return 0;
    if (p->direction == DATA_DIR_B && K % k_mult) return 0;
    if (len < 3) return 1;
    int64_t cpw = v[2];
    if (read_size * e > cpw || cpw % e) return 0;
    if (len < 4) return 1;
    int64_t chunk = v[3];
    if (cpw > data_portable_ceil_div(hw, chunk)) return 0;
    if (len < 5) return 1;
    int64_t n_mult = v[4];
    if (n_mult > data_portable_ceil_div(N, 64 / chunk)) return 0;
    if (len < 6) return 1;
    int64_t c_mult = v[5];
    if (c_mult % e) return 0;
    int64_t vgprs = 4 + 2 * data_portable_ceil_div(cpw * n_mult * c_mult, e) + cpw * n_mult * k_mult + (hw % e ? 1 : 0) + 1;
    if (vgprs >= 256) return 0;
    if (25 + 2 * k_mult * c_mult >= 102) return 0;
    if (len < 7) return 1;
    int64_t waves_c = v[6];
    if (waves_c > C) return 0;
    int64_t c_per_wave = data_portable_ceil_div(C, waves_c);
    int64_t last = C - c_per_wave * (waves_c - 1);
    if (c_per_wave % c_mult || last % c_mult) return 0;
    if (len < 8) return 1;
    int64_t waves_k = v[7];
    if (k_mult * waves_k > K) return 0;
    if (waves_c * waves_k > 16) return 0;
    if ((256 / vgprs) * 4 < waves_c * waves_k) return 0;
    return 1;
}

#endif
