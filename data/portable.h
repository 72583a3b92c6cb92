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

/* Numeric fields of a problem key, in this order. For 2-D problems the depth fields are 1 (sizes,
 * stride, dilation) or 0 (pad). For B and W problems "in" is dy and "out" is dx/x (MIOpen's key
 * convention), kept as written. */
typedef enum data_field {
    DATA_FIELD_IN_C,
    DATA_FIELD_IN_D,
    DATA_FIELD_IN_H,
    DATA_FIELD_IN_W,
    DATA_FIELD_FIL_D,
    DATA_FIELD_FIL_H,
    DATA_FIELD_FIL_W,
    DATA_FIELD_OUT_C,
    DATA_FIELD_OUT_D,
    DATA_FIELD_OUT_H,
    DATA_FIELD_OUT_W,
    DATA_FIELD_BATCH,
    DATA_FIELD_PAD_D,
    DATA_FIELD_PAD_H,
    DATA_FIELD_PAD_W,
    DATA_FIELD_STRIDE_D,
    DATA_FIELD_STRIDE_H,
    DATA_FIELD_STRIDE_W,
    DATA_FIELD_DIL_D,
    DATA_FIELD_DIL_H,
    DATA_FIELD_DIL_W,
    DATA_FIELD_BIAS,
    DATA_FIELD_GROUPS,
    DATA_FIELD_SPATIAL_DIM,
    DATA_FIELD_COUNT
} data_field;

typedef enum data_direction { DATA_DIR_F = 0, DATA_DIR_B = 1, DATA_DIR_W = 2, DATA_DIR_COUNT } data_direction;

/* Fixed vocabularies, so an encoding never depends on which file was read first. */
typedef enum data_dtype {
    DATA_DTYPE_FP32, DATA_DTYPE_FP16, DATA_DTYPE_BF16, DATA_DTYPE_INT8, DATA_DTYPE_INT32,
    DATA_DTYPE_FP8, DATA_DTYPE_BFP8, DATA_DTYPE_FP64, DATA_DTYPE_OTHER, DATA_DTYPE_COUNT
} data_dtype;

typedef enum data_layout {
    DATA_LAYOUT_NCHW, DATA_LAYOUT_NHWC, DATA_LAYOUT_NCDHW, DATA_LAYOUT_NDHWC, DATA_LAYOUT_CHWN,
    DATA_LAYOUT_MIXED, DATA_LAYOUT_OTHER, DATA_LAYOUT_COUNT
} data_layout;

typedef struct data_problem {
    int64_t f[DATA_FIELD_COUNT]; /* indexed by data_field */
    int8_t layout;               /* data_layout */
    int8_t dtype;                /* data_dtype */
    int8_t direction;            /* data_direction */
} data_problem;

/* derived numeric features, after the DATA_FIELD_COUNT raw fields */
enum {
    DATA_FEAT_LOG2_IN_C,
    DATA_FEAT_LOG2_OUT_C,
    DATA_FEAT_LOG2_BATCH,
    DATA_FEAT_LOG2_IN_SPATIAL,
    DATA_FEAT_LOG2_OUT_SPATIAL,
    DATA_FEAT_LOG2_FILTER,
    DATA_FEAT_LOG2_FLOPS,
    DATA_FEAT_LOG2_BYTES,
    DATA_FEAT_LOG2_INTENSITY,
    DATA_FEAT_LOG2_GEMM_M,
    DATA_FEAT_LOG2_GEMM_N,
    DATA_FEAT_LOG2_GEMM_K,
    DATA_FEAT_BYTES_PER_ELEMENT,
    DATA_FEAT_IS_1X1,
    DATA_FEAT_UNIT_STRIDE,
    DATA_FEAT_ZERO_PAD,
    DATA_FEAT_C_MOD4,
    DATA_FEAT_K_MOD4,
    DATA_FEAT_C_MOD8,
    DATA_FEAT_K_MOD8,
    DATA_FEAT_C_PER_GROUP_LOG2,
    DATA_FEAT_COUNT
};

#define DATA_N_NUMERIC (DATA_FIELD_COUNT + DATA_FEAT_COUNT)
#define DATA_N_FEATURES (DATA_N_NUMERIC + DATA_DIR_COUNT + DATA_DTYPE_COUNT + DATA_LAYOUT_COUNT)

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
    float *oh = x + DATA_N_NUMERIC;
    memset(oh, 0, (DATA_N_FEATURES - DATA_N_NUMERIC) * sizeof *oh);
    oh[p->direction] = 1.0f;
    oh[DATA_DIR_COUNT + p->dtype] = 1.0f;
    oh[DATA_DIR_COUNT + DATA_DTYPE_COUNT + p->layout] = 1.0f;
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
