/* Features of a convolution problem: raw key fields, derived sizes and one-hot categoricals.
 * The list is fixed and named; models record the names they were trained on. */
#include <math.h>
#include <string.h>

#include "data/data.h"

/* derived numeric features, after the DATA_FIELD_COUNT raw fields */
enum {
    DERIVED_LOG2_IN_C,
    DERIVED_LOG2_OUT_C,
    DERIVED_LOG2_BATCH,
    DERIVED_LOG2_IN_SPATIAL,
    DERIVED_LOG2_OUT_SPATIAL,
    DERIVED_LOG2_FILTER,
    DERIVED_LOG2_FLOPS,
    DERIVED_LOG2_BYTES,
    DERIVED_LOG2_INTENSITY,
    DERIVED_LOG2_GEMM_M,
    DERIVED_LOG2_GEMM_N,
    DERIVED_LOG2_GEMM_K,
    DERIVED_BYTES_PER_ELEMENT,
    DERIVED_IS_1X1,
    DERIVED_UNIT_STRIDE,
    DERIVED_ZERO_PAD,
    DERIVED_C_MOD4,
    DERIVED_K_MOD4,
    DERIVED_C_MOD8,
    DERIVED_K_MOD8,
    DERIVED_C_PER_GROUP_LOG2,
    DERIVED_COUNT
};

static const char *const derived_names[DERIVED_COUNT] = {
    "log2_in_c",     "log2_out_c",   "log2_batch",       "log2_in_spatial", "log2_out_spatial",
    "log2_filter",   "log2_flops",   "log2_bytes",       "log2_intensity",  "log2_gemm_m",
    "log2_gemm_n",   "log2_gemm_k",  "bytes_per_element", "is_1x1",         "unit_stride",
    "zero_pad",      "c_mod4",       "k_mod4",           "c_mod8",          "k_mod8",
    "log2_c_per_group",
};

#define N_NUMERIC (DATA_FIELD_COUNT + DERIVED_COUNT)
#define N_FEATURES (N_NUMERIC + DATA_DIR_COUNT + DATA_DTYPE_COUNT + DATA_LAYOUT_COUNT)

static char feature_names[N_FEATURES][40];
static int names_ready;

static void names_init(void)
{
    /* written once with identical contents; racing first calls write the same bytes */
    if (names_ready) return;
    int j = 0;
    for (int i = 0; i < DATA_FIELD_COUNT; i++) snprintf(feature_names[j++], 40, "%s", data_field_names[i]);
    for (int i = 0; i < DERIVED_COUNT; i++) snprintf(feature_names[j++], 40, "%s", derived_names[i]);
    for (int i = 0; i < DATA_DIR_COUNT; i++) snprintf(feature_names[j++], 40, "dir_%s", data_direction_names[i]);
    for (int i = 0; i < DATA_DTYPE_COUNT; i++) snprintf(feature_names[j++], 40, "type_%s", data_dtype_names[i]);
    for (int i = 0; i < DATA_LAYOUT_COUNT; i++)
        snprintf(feature_names[j++], 40, "layout_%s", data_layout_names[i]);
    names_ready = 1;
}

int data_features_count(void)
{
    return N_FEATURES;
}

const char *data_feature_name(int j)
{
    HR_ASSERT(j >= 0 && j < N_FEATURES);
    names_init();
    return feature_names[j];
}

data_feature_info data_features_info(void)
{
    data_feature_info info = {N_FEATURES, N_NUMERIC};
    return info;
}

static int dtype_bytes(int dtype)
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

static float lg2(double v)
{
    return (float)log2(v > 0 ? v : 0) ;
}

void data_features_compute(const data_problem *p, float *x)
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
    double bpe = dtype_bytes(p->dtype);
    double bytes = bpe * (n * c * in_sp + n * k * out_sp + c * k / g * fil);
    d[DERIVED_LOG2_IN_C] = lg2(c);
    d[DERIVED_LOG2_OUT_C] = lg2(k);
    d[DERIVED_LOG2_BATCH] = lg2(n);
    d[DERIVED_LOG2_IN_SPATIAL] = lg2(in_sp);
    d[DERIVED_LOG2_OUT_SPATIAL] = lg2(out_sp);
    d[DERIVED_LOG2_FILTER] = lg2(fil);
    d[DERIVED_LOG2_FLOPS] = lg2(2.0 * macs);
    d[DERIVED_LOG2_BYTES] = lg2(bytes);
    d[DERIVED_LOG2_INTENSITY] = lg2(2.0 * macs / (bytes > 0 ? bytes : 1));
    d[DERIVED_LOG2_GEMM_M] = lg2(n * fwd_out_sp);
    d[DERIVED_LOG2_GEMM_N] = lg2(p->direction == DATA_DIR_F ? k : c);
    d[DERIVED_LOG2_GEMM_K] = lg2((p->direction == DATA_DIR_F ? c : k) / g * fil);
    d[DERIVED_BYTES_PER_ELEMENT] = (float)bpe;
    d[DERIVED_IS_1X1] = fil == 1.0;
    d[DERIVED_UNIT_STRIDE] = f[DATA_FIELD_STRIDE_D] == 1 && f[DATA_FIELD_STRIDE_H] == 1 && f[DATA_FIELD_STRIDE_W] == 1;
    d[DERIVED_ZERO_PAD] = f[DATA_FIELD_PAD_D] == 0 && f[DATA_FIELD_PAD_H] == 0 && f[DATA_FIELD_PAD_W] == 0;
    d[DERIVED_C_MOD4] = (float)(f[DATA_FIELD_IN_C] % 4);
    d[DERIVED_K_MOD4] = (float)(f[DATA_FIELD_OUT_C] % 4);
    d[DERIVED_C_MOD8] = (float)(f[DATA_FIELD_IN_C] % 8);
    d[DERIVED_K_MOD8] = (float)(f[DATA_FIELD_OUT_C] % 8);
    d[DERIVED_C_PER_GROUP_LOG2] = lg2(c / g);
    float *oh = x + N_NUMERIC;
    memset(oh, 0, (N_FEATURES - N_NUMERIC) * sizeof *oh);
    oh[p->direction] = 1.0f;
    oh[DATA_DIR_COUNT + p->dtype] = 1.0f;
    oh[DATA_DIR_COUNT + DATA_DTYPE_COUNT + p->layout] = 1.0f;
}

void data_features_compute_all(const data_problem *p, int n, float *X)
{
    for (int i = 0; i < n; i++) data_features_compute(&p[i], X + (size_t)i * N_FEATURES);
}

void data_zscore_fit(const float *X, int n_cols, const int *rows, int n_rows, float *mean, float *std)
{
    for (int j = 0; j < n_cols; j++) {
        double s = 0, s2 = 0;
        for (int r = 0; r < n_rows; r++) {
            double v = X[(size_t)rows[r] * (size_t)n_cols + (size_t)j];
            s += v;
        }
        double m = n_rows ? s / n_rows : 0;
        for (int r = 0; r < n_rows; r++) {
            double v = X[(size_t)rows[r] * (size_t)n_cols + (size_t)j] - m;
            s2 += v * v;
        }
        double sd = n_rows ? sqrt(s2 / n_rows) : 0;
        mean[j] = (float)m;
        std[j] = sd > 1e-6 ? (float)sd : 1.0f;
    }
}
