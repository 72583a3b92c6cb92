/* Features of a convolution problem: raw key fields, derived sizes and one-hot categoricals.
 * The list is fixed and named; models record the names they were trained on. */
#include <math.h>
#include <string.h>

#include "data/data.h"

static const char *const derived_names[DATA_FEAT_COUNT] = {
    "log2_in_c",     "log2_out_c",   "log2_batch",       "log2_in_spatial", "log2_out_spatial",
    "log2_filter",   "log2_flops",   "log2_bytes",       "log2_intensity",  "log2_gemm_m",
    "log2_gemm_n",   "log2_gemm_k",  "bytes_per_element", "is_1x1",         "unit_stride",
    "zero_pad",      "c_mod4",       "k_mod4",           "c_mod8",          "k_mod8",
    "log2_c_per_group",
    "tz_in_c",       "tz_out_c",     "tz_batch",         "tz_gemm_m",       "tz_gemm_n",
    "tz_gemm_k",     "waste_m_32",   "waste_m_128",      "waste_n_32",      "waste_n_128",
    "waste_k_32",    "waste_k_128",
};

static char feature_names[DATA_N_FEATURES][40];
static int names_ready;

static void names_init(void)
{
    /* written once with identical contents; racing first calls write the same bytes */
    if (names_ready) return;
    int j = 0;
    for (int i = 0; i < DATA_FIELD_COUNT; i++) snprintf(feature_names[j++], 40, "%s", data_field_names[i]);
    for (int i = 0; i < DATA_FEAT_COUNT; i++) snprintf(feature_names[j++], 40, "%s", derived_names[i]);
    for (int i = 0; i < DATA_DIR_COUNT; i++) snprintf(feature_names[j++], 40, "dir_%s", data_direction_names[i]);
    for (int i = 0; i < DATA_DTYPE_COUNT; i++) snprintf(feature_names[j++], 40, "type_%s", data_dtype_names[i]);
    for (int i = 0; i < DATA_LAYOUT_COUNT; i++)
        snprintf(feature_names[j++], 40, "layout_%s", data_layout_names[i]);
    names_ready = 1;
}

int data_features_count(void)
{
    return DATA_N_FEATURES;
}

const char *data_feature_name(int j)
{
    HR_ASSERT(j >= 0 && j < DATA_N_FEATURES);
    names_init();
    return feature_names[j];
}

data_feature_info data_features_info(void)
{
    data_feature_info info = {DATA_N_FEATURES, DATA_N_NUMERIC};
    return info;
}

void data_features_compute(const data_problem *p, float *x)
{
    data_portable_features(p, x);
}

void data_features_compute_all(const data_problem *p, int n, float *X)
{
    for (int i = 0; i < n; i++) data_features_compute(&p[i], X + (size_t)i * DATA_N_FEATURES);
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
