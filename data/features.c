/* Features of a convolution problem: raw key fields, derived sizes and one-hot categoricals.
 * The list is fixed and named; models record the names they were trained on. */
#include <math.h>

#include "data/data.h"

/* The names, in feature order, from the same X-macro lists as the enums (data/portable.h): the raw key fields,
 * the derived features, then the one-hot categoricals "dir_F", "type_FP32", "layout_NCHW", ..., "precision_tf32" */
#define FEATURE_NAME(id, name) name,
#define DIR_NAME(id, name) "dir_" name,
#define DTYPE_NAME(id, name) "type_" name,
#define LAYOUT_NAME(id, name) "layout_" name,
#define PRECISION_NAME(id, name) "precision_" name,
static const char *const feature_names[] = {
    DATA_FIELD_LIST(FEATURE_NAME) DATA_FEAT_LIST(FEATURE_NAME) DATA_DIRECTION_LIST(DIR_NAME)
    DATA_DTYPE_LIST(DTYPE_NAME) DATA_LAYOUT_LIST(LAYOUT_NAME) DATA_PRECISION_LIST(PRECISION_NAME)
};
_Static_assert(sizeof feature_names / sizeof *feature_names == DATA_N_FEATURES, "a name for every feature");

int data_features_count(void)
{
    return DATA_N_FEATURES;
}

const char *data_feature_name(int j)
{
    HR_ASSERT(j >= 0 && j < DATA_N_FEATURES);
    return feature_names[j];
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
