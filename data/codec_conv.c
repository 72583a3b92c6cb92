/* The convolution key's codec: a problem is a find-db key (data/portable.h), its values the key fields then
 * layout, data type, direction and precision class; its kernels are known by name only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/codec_internal.h"

static int conv_parse(const data_codec *c, const char *text, double *pv)
{
    (void)c;
    const char *why, *eq = strchr(text, '=');
    data_problem p;
    /* a whole find-db line is a problem too: its key is what precedes '=' */
    if (data_key_parse(text, eq ? (size_t)(eq - text) : strlen(text), &p, &why))
        return hr_error(HR_EINVAL, "problem key '%.200s': %s", text, why);
    data_problem_values(&p, pv);
    return HR_OK;
}

static int conv_format(const data_codec *c, const double *pv, char *buf, size_t size)
{
    (void)c;
    data_problem p;
    data_conv_problem(pv, &p);
    data_key_format(&p, buf, size);
    return HR_OK;
}

static void conv_features(const data_codec *c, const double *pv, float *x)
{
    (void)c;
    data_problem p;
    data_conv_problem(pv, &p);
    data_features_compute(&p, x);
}

/* The key fields are the first features, the categories one-hot at the end (data/portable.h). */
static void conv_values_of_features(const data_codec *c, const float *x, double *pv)
{
    (void)c;
    for (int i = 0; i < DATA_FIELD_COUNT; i++) pv[i] = (double)x[i];
    const float *oh = x + DATA_N_NUMERIC;
    static const int counts[4] = {DATA_DIR_COUNT, DATA_DTYPE_COUNT, DATA_LAYOUT_COUNT, DATA_PRECISION_COUNT};
    static const int slot[4] = {DATA_CONV_DIRECTION, DATA_CONV_DTYPE, DATA_CONV_LAYOUT, DATA_CONV_PRECISION};
    for (int a = 0; a < 4; a++) {
        int best = 0;
        for (int i = 1; i < counts[a]; i++)
            if (oh[i] > oh[best]) best = i;
        pv[slot[a]] = best;
        oh += counts[a];
    }
}

static int conv_feature_name(const data_codec *c, int j, char *buf, size_t size)
{
    if (j < 0 || j >= c->n_features) return hr_error(HR_EINVAL, "convolution feature %d: out of range", j);
    snprintf(buf, size, "%s", data_feature_name(j));
    return HR_OK;
}

static void conv_pair_features(const data_codec *c, const double *pv, const double *kv, float *out)
{
    (void)c, (void)pv, (void)kv, (void)out; /* no configuration values: no pair features */
}

/* The key fields, then layout, data type, direction and precision class (DATA_CONV_*). */
static const char *conv_column(const data_codec *c, int j, int *n_names, const char *const **names)
{
    (void)c;
    static const char *const cats[4] = {"layout", "dtype", "direction", "precision"};
    static const int counts[4] = {DATA_LAYOUT_COUNT, DATA_DTYPE_COUNT, DATA_DIR_COUNT, DATA_PRECISION_COUNT};
    static const char *const *const vocab[4] = {data_layout_names, data_dtype_names, data_direction_names,
                                                data_precision_names};
    _Static_assert((int)DATA_CONV_LAYOUT == (int)DATA_FIELD_COUNT && (int)DATA_CONV_PRECISION == (int)DATA_FIELD_COUNT + 3,
                   "the categories follow the key fields");
    if (j < DATA_FIELD_COUNT) {
        *n_names = 0;
        *names = NULL;
        return data_field_names[j];
    }
    *n_names = counts[j - DATA_FIELD_COUNT];
    *names = vocab[j - DATA_FIELD_COUNT];
    return cats[j - DATA_FIELD_COUNT];
}

static int conv_config_parse(const data_codec *c, const char *name, double *kv)
{
    (void)c, (void)kv;
    return hr_error(HR_EINVAL, "kernel '%.200s': a convolution's kernels are known by name, they have no fields", name);
}

static int conv_config_format(const data_codec *c, const double *kv, char *buf, size_t size)
{
    (void)c, (void)kv, (void)buf, (void)size;
    return hr_error(HR_EINVAL, "a convolution's kernels are known by name, they have no fields");
}

static int conv_config_sequence(const data_codec *c, const double *kv, int32_t *seq)
{
    (void)seq;
    return conv_config_format(c, kv, NULL, 0);
}

static const char *conv_config_field_text(const data_codec *c, int j, int32_t v, char *buf, size_t size)
{
    (void)c, (void)j;
    snprintf(buf, size, "%d", v);
    return buf;
}

static const data_codec_slice conv_slices[4] = {
    {"direction", DATA_DIR_COUNT, data_direction_names, 1},
    {"dtype", DATA_DTYPE_COUNT, data_dtype_names, 1},
    {"layout", DATA_LAYOUT_COUNT, data_layout_names, 1},
    {"precision", DATA_PRECISION_COUNT, data_precision_names, 0},
};

/* An FP32 problem's precision class refuses the kernels of the other math (data_portable_precision_allows). */
static int conv_allow_class(const data_codec *c, const double *pv)
{
    (void)c;
    int precision = (int)pv[DATA_CONV_PRECISION];
    return (int)pv[DATA_CONV_DTYPE] == DATA_DTYPE_FP32 && precision >= 0 && precision < DATA_PRECISION_COUNT ? precision
                                                                                                              : -1;
}

static int conv_class_allows(const data_codec *c, int cls, const char *kernel)
{
    (void)c;
    return data_portable_precision_allows(cls, DATA_DTYPE_FP32, kernel, strlen(kernel));
}

static void conv_slice_values(const data_codec *c, const double *pv, int *v)
{
    (void)c;
    v[0] = (int)pv[DATA_CONV_DIRECTION];
    v[1] = (int)pv[DATA_CONV_DTYPE];
    v[2] = (int)pv[DATA_CONV_LAYOUT];
    v[3] = (int)pv[DATA_CONV_PRECISION];
}

/* direction, data type, layout, 2-D or 3-D, grouped or not, precision class */
#define CONV_KERNEL_CLASSES (DATA_DIR_COUNT * DATA_DTYPE_COUNT * DATA_LAYOUT_COUNT * 4)

static int conv_kernel_class(const data_codec *c, const double *pv)
{
    (void)c;
    int dir = (int)pv[DATA_CONV_DIRECTION], dtype = (int)pv[DATA_CONV_DTYPE], layout = (int)pv[DATA_CONV_LAYOUT];
    return (((dir * DATA_DTYPE_COUNT + dtype) * DATA_LAYOUT_COUNT + layout) * 2 + (pv[DATA_FIELD_SPATIAL_DIM] == 3)) * 2 +
           (pv[DATA_FIELD_GROUPS] > 1);
}

/* The encoder tokens: the sizes that vary between problems (2-D names for the 2-D fields), then the categories. */
static const int token_fields[16] = {
    DATA_FIELD_IN_C,   DATA_FIELD_IN_H,     DATA_FIELD_IN_W,     DATA_FIELD_FIL_H, DATA_FIELD_FIL_W,
    DATA_FIELD_OUT_C,  DATA_FIELD_OUT_H,    DATA_FIELD_OUT_W,    DATA_FIELD_BATCH, DATA_FIELD_PAD_H,
    DATA_FIELD_PAD_W,  DATA_FIELD_STRIDE_H, DATA_FIELD_STRIDE_W, DATA_FIELD_DIL_H, DATA_FIELD_DIL_W,
    DATA_FIELD_GROUPS,
};
#define CONV_TOKENS 19

static const data_codec_token conv_tokens[CONV_TOKENS] = {
    {"in_c", 0, NULL},     {"in_h", 0, NULL},     {"in_w", 0, NULL},     {"fil_h", 0, NULL},    {"fil_w", 0, NULL},
    {"out_c", 0, NULL},    {"out_h", 0, NULL},    {"out_w", 0, NULL},    {"batch", 0, NULL},    {"pad_h", 0, NULL},
    {"pad_w", 0, NULL},    {"stride_h", 0, NULL}, {"stride_w", 0, NULL}, {"dil_h", 0, NULL},    {"dil_w", 0, NULL},
    {"groups", 0, NULL},   {"direction", DATA_DIR_COUNT, data_direction_names},
    {"dtype", DATA_DTYPE_COUNT, data_dtype_names}, {"layout", DATA_LAYOUT_COUNT, data_layout_names},
};

static int64_t conv_token_value(const data_codec *c, const double *pv, int f, int bins)
{
    (void)c, (void)bins;
    static const int cats[3] = {DATA_CONV_DIRECTION, DATA_CONV_DTYPE, DATA_CONV_LAYOUT};
    return f < 16 ? (int64_t)pv[token_fields[f]] : (int64_t)pv[cats[f - 16]];
}

static int conv_map(const data_codec *c, const data_codec *from, int kernel_side, const double *v, int n, double *out)
{
    (void)from;
    if (kernel_side) return conv_config_format(c, v, NULL, 0);
    memcpy(out, v, (size_t)n * DATA_CONV_VALUES * sizeof *out);
    return HR_OK;
}

static int conv_equal(const data_codec *a, const data_codec *b)
{
    (void)a, (void)b;
    return 1;
}

static int conv_check_same(const data_codec *old, const data_codec *now, const char *name)
{
    (void)old, (void)now, (void)name; /* one fixed key format */
    return HR_OK;
}

static int conv_write(const data_codec *c, hid_t f)
{
    (void)c, (void)f; /* a model file without a codec is a convolution's */
    return HR_OK;
}

static const data_constraint *conv_constraint(const data_codec *c, const char *solver)
{
    (void)c;
    return solver ? data_constraint_find(solver) : NULL;
}

static int conv_copy(const data_codec *c, data_codec **out)
{
    (void)c;
    return data_codec_conv(out);
}

static void conv_free(data_codec *c)
{
    free(c);
}

const data_codec_ops data_codec_conv_ops = {
    .name = "convolution",
    .kind = NULL,
    .problem_parse = conv_parse,
    .problem_format = conv_format,
    .features = conv_features,
    .values_of_features = conv_values_of_features,
    .feature_name = conv_feature_name,
    .pair_features = conv_pair_features,
    .column = conv_column,
    .config_parse = conv_config_parse,
    .config_format = conv_config_format,
    .config_sequence = conv_config_sequence,
    .config_field_text = conv_config_field_text,
    .slices = conv_slice_values,
    .kernel_class = conv_kernel_class,
    .token_value = conv_token_value,
    .allow_class = conv_allow_class,
    .class_allows = conv_class_allows,
    .map = conv_map,
    .equal = conv_equal,
    .check_same = conv_check_same,
    .write = conv_write,
    .constraint = conv_constraint,
    .copy = conv_copy,
    .free = conv_free,
};

int data_codec_conv(data_codec **out)
{
    data_codec *c = hr_calloc(1, sizeof *c);
    if (!(*out = c)) return HR_ENOMEM;
    c->ops = &data_codec_conv_ops;
    c->n_values = DATA_CONV_VALUES;
    c->n_features = data_features_count();
    c->n_slices = 4;
    c->slices = conv_slices;
    c->n_kernel_classes = CONV_KERNEL_CLASSES;
    c->n_allow = DATA_PRECISION_COUNT;
    c->n_tokens = CONV_TOKENS;
    c->tokens = conv_tokens;
    return HR_OK;
}
