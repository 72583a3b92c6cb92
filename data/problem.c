/* Convolution problem keys: parsing, formatting, their values (data/codec_conv.c) and the geometry group hash. */
#include <stdio.h>
#include <string.h>

#include "data/data.h"

const char *const data_field_names[DATA_FIELD_COUNT] = {DATA_FIELD_LIST(DATA_PORTABLE_NAME)};
const char *const data_direction_names[DATA_DIR_COUNT] = {DATA_DIRECTION_LIST(DATA_PORTABLE_NAME)};
const char *const data_dtype_names[DATA_DTYPE_COUNT] = {DATA_DTYPE_LIST(DATA_PORTABLE_NAME)};
const char *const data_layout_names[DATA_LAYOUT_COUNT] = {DATA_LAYOUT_LIST(DATA_PORTABLE_NAME)};
const char *const data_precision_names[DATA_PRECISION_COUNT] = {DATA_PRECISION_LIST(DATA_PORTABLE_NAME)};

int data_key_parse(const char *key, size_t len, data_problem *out, const char **why)
{
    return data_portable_key_parse(key, len, out, why) ? HR_EFORMAT : HR_OK;
}

int data_key_format(const data_problem *p, char *buf, size_t size)
{
    const int64_t *f = p->f;
    char dir[48];
    int at = f[DATA_FIELD_GROUPS] > 1 ? snprintf(dir, sizeof dir, "%s_g%lld", data_direction_names[p->direction],
                                                 (long long)f[DATA_FIELD_GROUPS])
                                      : snprintf(dir, sizeof dir, "%s", data_direction_names[p->direction]);
    /* the precision class, of an FP32 problem outside the default TF32 class */
    if (p->dtype == DATA_DTYPE_FP32 && p->precision != DATA_PRECISION_TF32 && data_portable_precision_name(p->precision))
        snprintf(dir + at, sizeof dir - (size_t)at, "_%s", data_portable_precision_name(p->precision));
    const char *layout = data_layout_names[p->layout];
    if (p->layout >= DATA_LAYOUT_MIXED) layout = f[DATA_FIELD_SPATIAL_DIM] == 3 ? "NCDHW" : "NCHW";
    if (f[DATA_FIELD_SPATIAL_DIM] == 3)
        return snprintf(buf, size,
                        "%lld-%lld-%lld-%lld-%lldx%lldx%lld-%lld-%lld-%lld-%lld-%lld-%lldx%lldx%lld-"
                        "%lldx%lldx%lld-%lldx%lldx%lld-%lld-%s-%s-%s",
                        (long long)f[0], (long long)f[1], (long long)f[2], (long long)f[3], (long long)f[4],
                        (long long)f[5], (long long)f[6], (long long)f[7], (long long)f[8], (long long)f[9],
                        (long long)f[10], (long long)f[11], (long long)f[12], (long long)f[13],
                        (long long)f[14], (long long)f[15], (long long)f[16], (long long)f[17],
                        (long long)f[18], (long long)f[19], (long long)f[20], (long long)f[21], layout,
                        data_dtype_names[p->dtype], dir);
    return snprintf(buf, size,
                    "%lld-%lld-%lld-%lldx%lld-%lld-%lld-%lld-%lld-%lldx%lld-%lldx%lld-%lldx%lld-%lld-%s-%s-%s",
                    (long long)f[DATA_FIELD_IN_C], (long long)f[DATA_FIELD_IN_H], (long long)f[DATA_FIELD_IN_W],
                    (long long)f[DATA_FIELD_FIL_H], (long long)f[DATA_FIELD_FIL_W], (long long)f[DATA_FIELD_OUT_C],
                    (long long)f[DATA_FIELD_OUT_H], (long long)f[DATA_FIELD_OUT_W], (long long)f[DATA_FIELD_BATCH],
                    (long long)f[DATA_FIELD_PAD_H], (long long)f[DATA_FIELD_PAD_W],
                    (long long)f[DATA_FIELD_STRIDE_H], (long long)f[DATA_FIELD_STRIDE_W],
                    (long long)f[DATA_FIELD_DIL_H], (long long)f[DATA_FIELD_DIL_W], (long long)f[DATA_FIELD_BIAS],
                    layout, data_dtype_names[p->dtype], dir);
}

void data_problem_values(const data_problem *p, double *pv)
{
    for (int i = 0; i < DATA_FIELD_COUNT; i++) pv[i] = (double)p->f[i];
    pv[DATA_CONV_LAYOUT] = p->layout;
    pv[DATA_CONV_DTYPE] = p->dtype;
    pv[DATA_CONV_DIRECTION] = p->direction;
    pv[DATA_CONV_PRECISION] = p->precision;
}

void data_conv_problem(const double *pv, data_problem *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < DATA_FIELD_COUNT; i++) p->f[i] = (int64_t)pv[i];
    p->layout = (int8_t)pv[DATA_CONV_LAYOUT];
    p->dtype = (int8_t)pv[DATA_CONV_DTYPE];
    p->direction = (int8_t)pv[DATA_CONV_DIRECTION];
    p->precision = (int8_t)pv[DATA_CONV_PRECISION];
}

uint64_t data_problem_geometry_hash(const data_problem *p)
{
    /* word-wise multiply-xorshift; equal geometries are then compared exactly by the callers */
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < DATA_FIELD_COUNT; i++) {
        h ^= (uint64_t)p->f[i] + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdULL;
    }
    h ^= h >> 33;
    return h;
}
