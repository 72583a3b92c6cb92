/* Problem keys to cuDNN convolution sizes, and the kernel names (algorithm x math type). */
#include "collect.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "data/portable.h"

static _Thread_local char last_error[512];

const char *collect_last_error(void)
{
    return last_error;
}

int collect_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int collect_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

int collect_conv_from_key(const char *key, size_t len, collect_conv *cv)
{
    const char *eq = memchr(key, '=', len);
    if (eq) len = (size_t)(eq - key);
    data_problem p;
    const char *why = NULL;
    if (data_portable_key_parse(key, len, &p, &why))
        return collect_error(COLLECT_EFORMAT, "%.*s: %s", (int)len, key, why);
    const int64_t *f = p.f;
    memset(cv, 0, sizeof *cv);
    cv->nd = (int)f[DATA_FIELD_SPATIAL_DIM];
    switch (p.layout) {
    case DATA_LAYOUT_NCHW: case DATA_LAYOUT_NCDHW: cv->layout = COLLECT_LAYOUT_NCHW; break;
    case DATA_LAYOUT_NHWC: case DATA_LAYOUT_NDHWC: cv->layout = COLLECT_LAYOUT_NHWC; break;
    default: return collect_error(COLLECT_EFORMAT, "%.*s: layout not supported (NCHW, NHWC, NCDHW, NDHWC)", (int)len, key);
    }
    if ((cv->nd == 2) != (p.layout == DATA_LAYOUT_NCHW || p.layout == DATA_LAYOUT_NHWC))
        return collect_error(COLLECT_EFORMAT, "%.*s: layout does not match the spatial dims", (int)len, key);
    switch (p.dtype) {
    case DATA_DTYPE_FP32: cv->dtype = COLLECT_DTYPE_FP32; break;
    case DATA_DTYPE_FP16: cv->dtype = COLLECT_DTYPE_FP16; break;
    case DATA_DTYPE_BF16: cv->dtype = COLLECT_DTYPE_BF16; break;
    default: return collect_error(COLLECT_EFORMAT, "%.*s: data type not supported (FP32, FP16, BF16)", (int)len, key);
    }
    cv->dir = (collect_dir)p.direction;
    /* the key's "in" tensor is x for F and dy for B and W */
    int fwd = cv->dir == COLLECT_DIR_F;
    int64_t in_c = f[DATA_FIELD_IN_C], out_c = f[DATA_FIELD_OUT_C];
    const int64_t in_sp[3] = {f[DATA_FIELD_IN_D], f[DATA_FIELD_IN_H], f[DATA_FIELD_IN_W]};
    const int64_t out_sp[3] = {f[DATA_FIELD_OUT_D], f[DATA_FIELD_OUT_H], f[DATA_FIELD_OUT_W]};
    const int64_t fil[3] = {f[DATA_FIELD_FIL_D], f[DATA_FIELD_FIL_H], f[DATA_FIELD_FIL_W]};
    const int64_t pad[3] = {f[DATA_FIELD_PAD_D], f[DATA_FIELD_PAD_H], f[DATA_FIELD_PAD_W]};
    const int64_t str[3] = {f[DATA_FIELD_STRIDE_D], f[DATA_FIELD_STRIDE_H], f[DATA_FIELD_STRIDE_W]};
    const int64_t dil[3] = {f[DATA_FIELD_DIL_D], f[DATA_FIELD_DIL_H], f[DATA_FIELD_DIL_W]};
    int64_t big = f[DATA_FIELD_BATCH] | in_c | out_c | f[DATA_FIELD_GROUPS];
    cv->n = (int)f[DATA_FIELD_BATCH];
    cv->c = (int)(fwd ? in_c : out_c);
    cv->k = (int)(fwd ? out_c : in_c);
    cv->groups = (int)f[DATA_FIELD_GROUPS];
    int first = cv->nd == 2 ? 1 : 0; /* 2-D keys carry depth 1 / pad 0 in slot 0 */
    for (int i = 0; i < cv->nd; i++) {
        int s = first + i;
        big |= in_sp[s] | out_sp[s] | fil[s] | pad[s] | str[s] | dil[s];
        cv->x_sp[i] = (int)(fwd ? in_sp[s] : out_sp[s]);
        cv->y_sp[i] = (int)(fwd ? out_sp[s] : in_sp[s]);
        cv->w_sp[i] = (int)fil[s];
        cv->pad[i] = (int)pad[s];
        cv->stride[i] = (int)str[s];
        cv->dil[i] = (int)dil[s];
    }
    if (big >= ((int64_t)1 << 30))
        return collect_error(COLLECT_EFORMAT, "%.*s: a size field is too large", (int)len, key);
    if (cv->c % cv->groups || cv->k % cv->groups)
        return collect_error(COLLECT_EFORMAT, "%.*s: groups %d do not divide channels %d and %d", (int)len, key,
                             cv->groups, cv->c, cv->k);
    for (int i = 0; i < cv->nd; i++) {
        if (cv->dil[i] < 1)
            return collect_error(COLLECT_EFORMAT, "%.*s: dilation 0", (int)len, key);
        if (cv->stride[i] < 1)
            return collect_error(COLLECT_EFORMAT, "%.*s: stride 0", (int)len, key);
        int64_t span = (int64_t)cv->dil[i] * (cv->w_sp[i] - 1) + 1;
        int64_t o = ((int64_t)cv->x_sp[i] + 2 * cv->pad[i] - span) / cv->stride[i] + 1;
        if (cv->x_sp[i] + 2 * cv->pad[i] < span || o != cv->y_sp[i])
            return collect_error(COLLECT_EFORMAT, "%.*s: output size %d of spatial dim %d is not the convolution's (%lld)",
                                 (int)len, key, cv->y_sp[i], i, (long long)(cv->x_sp[i] + 2 * cv->pad[i] < span ? 0 : o));
    }
    /* each tensor's bytes fit int64 (the element counts and the buffers cuDNN is given are products of sizes) */
    const int *sp[3] = {cv->x_sp, cv->y_sp, cv->w_sp};
    const int64_t lead[3][2] = {{cv->n, cv->c}, {cv->n, cv->k}, {cv->k, cv->c / cv->groups}};
    for (int t = 0; t < 3; t++) {
        int64_t e = collect_dtype_bytes(cv->dtype);
        int over = __builtin_mul_overflow(e, lead[t][0], &e) || __builtin_mul_overflow(e, lead[t][1], &e);
        for (int i = 0; i < cv->nd && !over; i++) over = __builtin_mul_overflow(e, (int64_t)sp[t][i], &e);
        if (over)
            return collect_error(COLLECT_EFORMAT, "%.*s: the %s tensor's size overflows 64 bits", (int)len, key,
                                 t == 0 ? "x" : t == 1 ? "y" : "w");
    }
    return COLLECT_OK;
}

static int dims_of(const collect_conv *cv, int a, int b, const int *sp, int dims[5])
{
    dims[0] = a;
    dims[1] = b;
    for (int i = 0; i < cv->nd; i++) dims[2 + i] = sp[i];
    return cv->nd + 2;
}

int collect_conv_x_dims(const collect_conv *cv, int dims[5])
{
    return dims_of(cv, cv->n, cv->c, cv->x_sp, dims);
}

int collect_conv_y_dims(const collect_conv *cv, int dims[5])
{
    return dims_of(cv, cv->n, cv->k, cv->y_sp, dims);
}

int collect_conv_w_dims(const collect_conv *cv, int dims[5])
{
    return dims_of(cv, cv->k, cv->c / cv->groups, cv->w_sp, dims);
}

static int64_t prod(const int *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

int64_t collect_conv_x_elems(const collect_conv *cv)
{
    return (int64_t)cv->n * cv->c * prod(cv->x_sp, cv->nd);
}

int64_t collect_conv_y_elems(const collect_conv *cv)
{
    return (int64_t)cv->n * cv->k * prod(cv->y_sp, cv->nd);
}

int64_t collect_conv_w_elems(const collect_conv *cv)
{
    return (int64_t)cv->k * (cv->c / cv->groups) * prod(cv->w_sp, cv->nd);
}

int collect_dtype_bytes(collect_dtype t)
{
    return t == COLLECT_DTYPE_FP32 ? 4 : 2;
}

/* 2 N K (C/G) prod(out) prod(filter): the same for the three directions */
double collect_conv_flops(const collect_conv *cv)
{
    return 2.0 * (double)collect_conv_y_elems(cv) * (double)(cv->c / cv->groups) * (double)prod(cv->w_sp, cv->nd);
}

/* log(seconds) = coef . (1, ln flops, ln bytes, (ln flops - 20)^2 / 10, B, W, half, 3-D, grouped, half x 3-D,
 * half x B, half x W), half = FP16 or BF16: least squares over the 30,000 problems of the H100 pool collection
 * (datasets/h100), each problem's measuring time rebuilt from its kernels' times by the timing method
 * (scripts/fit_cost.py conv, which prints these numbers; the pool holds FP16 and FP32 NCHW / NCDHW, so BF16
 * takes FP16's terms and NHWC NCHW's). */
static const double conv_cost_coef[12] = {-5.3879, 0.0339, 0.0960, 0.1218, -0.1544, -0.0763,
                                          -0.0742, -0.1212, 0.6733, 0.0081, 0.1525, 0.0998};

double collect_conv_cost_s(const collect_conv *cv)
{
    double bytes = (double)collect_dtype_bytes(cv->dtype) *
                   ((double)collect_conv_x_elems(cv) + (double)collect_conv_y_elems(cv) + (double)collect_conv_w_elems(cv));
    double lf = log(fmax(collect_conv_flops(cv), 1.0)), half = cv->dtype != COLLECT_DTYPE_FP32;
    double b = cv->dir == COLLECT_DIR_B, w = cv->dir == COLLECT_DIR_W, deep = cv->nd == 3;
    double x[12] = {1.0, lf, log(fmax(bytes, 1.0)), (lf - 20.0) * (lf - 20.0) / 10.0, b, w, half, deep,
                    cv->groups > 1, half * deep, half * b, half * w};
    double z = 0;
    for (int i = 0; i < 12; i++) z += conv_cost_coef[i] * x[i];
    return exp(z);
}

/* ---- kernel names ---- */
static const char *const fwd_algos[] = {"FWD_IMPLICIT_GEMM", "FWD_IMPLICIT_PRECOMP_GEMM", "FWD_GEMM", "FWD_DIRECT",
                                        "FWD_FFT", "FWD_FFT_TILING", "FWD_WINOGRAD", "FWD_WINOGRAD_NONFUSED"};
static const char *const bwd_data_algos[] = {"BWD_DATA_ALGO_0", "BWD_DATA_ALGO_1", "BWD_DATA_FFT",
                                             "BWD_DATA_FFT_TILING", "BWD_DATA_WINOGRAD", "BWD_DATA_WINOGRAD_NONFUSED"};
static const char *const bwd_filter_algos[] = {"BWD_FILTER_ALGO_0", "BWD_FILTER_ALGO_1", "BWD_FILTER_FFT",
                                               "BWD_FILTER_ALGO_3", "BWD_FILTER_WINOGRAD",
                                               "BWD_FILTER_WINOGRAD_NONFUSED", "BWD_FILTER_FFT_TILING"};
static const char *const math_names[COLLECT_MATH_COUNT] = {"default", "tensor_op", "tensor_op_allow_conversion", "fma"};

int collect_algo_count(collect_dir dir)
{
    switch (dir) {
    case COLLECT_DIR_F: return (int)(sizeof fwd_algos / sizeof *fwd_algos);
    case COLLECT_DIR_B: return (int)(sizeof bwd_data_algos / sizeof *bwd_data_algos);
    case COLLECT_DIR_W: return (int)(sizeof bwd_filter_algos / sizeof *bwd_filter_algos);
    default: return 0;
    }
}

const char *collect_algo_name(collect_dir dir, int algo)
{
    if (algo < 0 || algo >= collect_algo_count(dir)) return NULL;
    return dir == COLLECT_DIR_F ? fwd_algos[algo] : dir == COLLECT_DIR_B ? bwd_data_algos[algo] : bwd_filter_algos[algo];
}

const char *collect_math_name(int math)
{
    return math >= 0 && math < COLLECT_MATH_COUNT ? math_names[math] : NULL;
}

int collect_precision_math(int precision)
{
    const char *m = data_portable_precision_math(precision);
    for (int i = 0; m && i < COLLECT_MATH_COUNT; i++)
        if (strcmp(math_names[i], m) == 0) return i;
    return -1;
}

const char *collect_algo_column(collect_dir dir)
{
    static const char *const cols[COLLECT_DIR_COUNT] = {"cudnnConvolutionFwdAlgo", "cudnnConvolutionBwdDataAlgo",
                                                        "cudnnConvolutionBwdFilterAlgo"};
    return dir >= 0 && dir < COLLECT_DIR_COUNT ? cols[dir] : NULL;
}

int collect_kernel_name(collect_dir dir, int algo, int math, char *buf, size_t size)
{
    const char *a = collect_algo_name(dir, algo), *m = collect_math_name(math);
    if (!a || !m) return collect_error(COLLECT_EINVAL, "kernel (direction %d, algorithm %d, math %d) out of range", dir, algo, math);
    int w = snprintf(buf, size, "%s.%s", a, m);
    if (w < 0 || (size_t)w >= size) return collect_error(COLLECT_EINVAL, "kernel name longer than %zu bytes", size);
    return COLLECT_OK;
}

int collect_kernel_parse(const char *name, size_t len, collect_dir *dir, int *algo, int *math)
{
    const char *dot = memchr(name, '.', len);
    if (dot) {
        size_t an = (size_t)(dot - name), mn = len - an - 1;
        for (int d = 0; d < COLLECT_DIR_COUNT; d++)
            for (int a = 0; a < collect_algo_count((collect_dir)d); a++) {
                const char *s = collect_algo_name((collect_dir)d, a);
                if (strlen(s) != an || memcmp(s, name, an)) continue;
                for (int m = 0; m < COLLECT_MATH_COUNT; m++)
                    if (strlen(math_names[m]) == mn && memcmp(math_names[m], dot + 1, mn) == 0) {
                        *dir = (collect_dir)d;
                        *algo = a;
                        *math = m;
                        return COLLECT_OK;
                    }
            }
    }
    return collect_error(COLLECT_EFORMAT, "'%.*s' is not a cuDNN kernel name (<ALGORITHM>.<math>)", (int)len, name);
}
