/* collect: problem keys to cuDNN convolution sizes (MIOpen's in/out convention per direction), kernel names. */
#include <criterion/criterion.h>
#include <string.h>

#include "collect.h"
#include "data/portable.h"

static collect_conv conv_ok(const char *key)
{
    collect_conv cv;
    int rc = collect_conv_from_key(key, strlen(key), &cv);
    cr_assert_eq(rc, COLLECT_OK, "key %s: %s", key, collect_last_error());
    return cv;
}

static void conv_bad(const char *key, const char *why_part)
{
    collect_conv cv;
    cr_assert_eq(collect_conv_from_key(key, strlen(key), &cv), COLLECT_EFORMAT, "key %s parsed", key);
    cr_assert(strstr(collect_last_error(), why_part), "key %s: message '%s' lacks '%s'", key, collect_last_error(),
              why_part);
}

static void dims_eq(const int *got, int n, const int *want, int wn)
{
    cr_assert_eq(n, wn);
    for (int i = 0; i < n; i++) cr_assert_eq(got[i], want[i], "dim %d: %d, expected %d", i, got[i], want[i]);
}

Test(collect_conv, forward_2d)
{
    collect_conv cv = conv_ok("256-21-21-3x3-512-11-11-114-1x1-2x2-1x1-0-NCHW-FP16-F");
    int d[5];
    cr_assert_eq(cv.dir, COLLECT_DIR_F);
    cr_assert_eq(cv.dtype, COLLECT_DTYPE_FP16);
    cr_assert_eq(cv.layout, COLLECT_LAYOUT_NCHW);
    dims_eq(d, collect_conv_x_dims(&cv, d), (int[]){114, 256, 21, 21}, 4);
    dims_eq(d, collect_conv_y_dims(&cv, d), (int[]){114, 512, 11, 11}, 4);
    dims_eq(d, collect_conv_w_dims(&cv, d), (int[]){512, 256, 3, 3}, 4);
    cr_assert_eq(cv.pad[0], 1);
    cr_assert_eq(cv.stride[1], 2);
    cr_assert_eq(cv.dil[0], 1);
    cr_assert_eq(collect_dtype_bytes(cv.dtype), 2);
    /* 2 * (114*512*121 outputs) * 256 * 9 */
    cr_assert_float_eq(collect_conv_flops(&cv), 2.0 * 114 * 512 * 121 * 256 * 9, 1.0);
}

/* For B and W the key's "in" tensor is dy: the same convolution as the forward key above. */
Test(collect_conv, backward_keys_swap_in_and_out)
{
    const char *keys[2] = {"512-11-11-3x3-256-21-21-114-1x1-2x2-1x1-0-NCHW-FP32-B",
                           "512-11-11-3x3-256-21-21-114-1x1-2x2-1x1-0-NCHW-FP32-W"};
    for (int i = 0; i < 2; i++) {
        collect_conv cv = conv_ok(keys[i]);
        int d[5];
        cr_assert_eq(cv.dir, i == 0 ? COLLECT_DIR_B : COLLECT_DIR_W);
        cr_assert_eq(cv.dtype, COLLECT_DTYPE_FP32);
        dims_eq(d, collect_conv_x_dims(&cv, d), (int[]){114, 256, 21, 21}, 4);
        dims_eq(d, collect_conv_y_dims(&cv, d), (int[]){114, 512, 11, 11}, 4);
        dims_eq(d, collect_conv_w_dims(&cv, d), (int[]){512, 256, 3, 3}, 4);
        cr_assert_eq(collect_conv_x_elems(&cv), 114LL * 256 * 441);
        cr_assert_eq(collect_conv_y_elems(&cv), 114LL * 512 * 121);
        cr_assert_eq(collect_conv_w_elems(&cv), 512LL * 256 * 9);
    }
}

/* 3-D, groups and dilation: out_h = (10 + 2*2 - 2*(3-1) - 1) / 1 + 1 = 10, out_d = (4 + 2 - 3) + 1 = 4. */
Test(collect_conv, three_d_groups_dilation)
{
    collect_conv cv = conv_ok("8-4-10-10-3x3x3-16-4-10-10-2-1x2x2-1x1x1-1x2x2-0-NCDHW-FP32-F_g4");
    int d[5];
    cr_assert_eq(cv.nd, 3);
    cr_assert_eq(cv.groups, 4);
    dims_eq(d, collect_conv_x_dims(&cv, d), (int[]){2, 8, 4, 10, 10}, 5);
    dims_eq(d, collect_conv_w_dims(&cv, d), (int[]){16, 2, 3, 3, 3}, 5);
    dims_eq(cv.pad, 3, (int[]){1, 2, 2}, 3);
    dims_eq(cv.dil, 3, (int[]){1, 2, 2}, 3);
    cr_assert_float_eq(collect_conv_flops(&cv), 2.0 * (2 * 16 * 400) * 2 * 27, 1e-6);
}

Test(collect_conv, nhwc_and_key_with_entries)
{
    collect_conv cv = conv_ok("64-56-56-1x1-64-56-56-8-0x0-1x1-1x1-0-NHWC-BF16-F=FWD_GEMM.default:1,0,x");
    cr_assert_eq(cv.layout, COLLECT_LAYOUT_NHWC);
    cr_assert_eq(cv.dtype, COLLECT_DTYPE_BF16);
    cr_assert_eq(cv.n, 8);
}

Test(collect_conv, refuses_what_cudnn_cannot_take)
{
    conv_bad("6-8-8-3x3-8-6-6-1-0x0-1x1-1x1-0-NCHW-FP32-F_g4", "groups 4 do not divide");
    conv_bad("8-8-8-3x3-8-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F", "output size 7");
    conv_bad("8-8-8-3x3-8-6-6-1-0x0-1x1-1x1-0-NCHW-INT8-F", "data type not supported");
    conv_bad("8-8-8-3x3-8-6-6-1-0x0-1x1-1x1-0-NCDHW-FP32-F", "layout does not match");
    conv_bad("8-8-8-3x3-8-6-6-1-0x0-1x1-1x1-0-CHWN-FP32-F", "layout not supported");
    conv_bad("8-8-8-3x3-8-6-6", "too few key fields");
    conv_bad("8-2-2-5x5-8-1-1-1-0x0-1x1-1x1-0-NCHW-FP32-F", "output size 1");
}

Test(collect_kernel, names_follow_cudnn_and_say_the_direction)
{
    char b[64];
    cr_assert_eq(collect_kernel_name(COLLECT_DIR_F, 1, COLLECT_MATH_TENSOR_OP, b, sizeof b), 0);
    cr_assert_str_eq(b, "FWD_IMPLICIT_PRECOMP_GEMM.tensor_op");
    cr_assert_eq(collect_kernel_name(COLLECT_DIR_B, 1, COLLECT_MATH_DEFAULT, b, sizeof b), 0);
    cr_assert_str_eq(b, "BWD_DATA_ALGO_1.default");
    cr_assert_eq(collect_kernel_name(COLLECT_DIR_W, 2, COLLECT_MATH_FMA, b, sizeof b), 0);
    cr_assert_str_eq(b, "BWD_FILTER_FFT.fma");
    cr_assert_eq(collect_kernel_name(COLLECT_DIR_W, 6, COLLECT_MATH_TENSOR_OP_ALLOW_CONVERSION, b, sizeof b), 0);
    cr_assert_str_eq(b, "BWD_FILTER_FFT_TILING.tensor_op_allow_conversion");
    cr_assert_str_eq(collect_algo_column(COLLECT_DIR_B), "cudnnConvolutionBwdDataAlgo");
    cr_assert_eq(collect_algo_count(COLLECT_DIR_F), 8);
    cr_assert_eq(collect_algo_count(COLLECT_DIR_B), 6);
    cr_assert_eq(collect_algo_count(COLLECT_DIR_W), 7);
    cr_assert_eq(collect_kernel_name(COLLECT_DIR_B, 6, 0, b, sizeof b), COLLECT_EINVAL);
    cr_assert_eq(collect_kernel_name(COLLECT_DIR_F, 0, 4, b, sizeof b), COLLECT_EINVAL);
    cr_assert_eq(collect_kernel_name(COLLECT_DIR_F, 1, 0, b, 8), COLLECT_EINVAL);
}

/* Every (direction, algorithm, math) has its own name, and parsing gives it back. */
Test(collect_kernel, names_are_unique_and_parse_back)
{
    char names[3 * 8 * 4][64];
    int n = 0;
    for (int d = 0; d < COLLECT_DIR_COUNT; d++)
        for (int a = 0; a < collect_algo_count((collect_dir)d); a++)
            for (int m = 0; m < COLLECT_MATH_COUNT; m++) {
                cr_assert_eq(collect_kernel_name((collect_dir)d, a, m, names[n], sizeof names[n]), 0);
                collect_dir pd;
                int pa, pm;
                cr_assert_eq(collect_kernel_parse(names[n], strlen(names[n]), &pd, &pa, &pm), 0, "%s", names[n]);
                cr_assert(pd == (collect_dir)d && pa == a && pm == m, "%s parsed as %d/%d/%d", names[n], pd, pa, pm);
                for (int j = 0; j < n; j++) cr_assert_str_neq(names[j], names[n]);
                n++;
            }
    cr_assert_eq(n, (8 + 6 + 7) * 4);
    collect_dir d;
    int a, m;
    cr_assert_eq(collect_kernel_parse("FWD_FFT", 7, &d, &a, &m), COLLECT_EFORMAT);
    cr_assert_eq(collect_kernel_parse("FWD_FFT.fast", 12, &d, &a, &m), COLLECT_EFORMAT);
    cr_assert_eq(collect_kernel_parse("ConvOclDirectFwd1x1", 19, &d, &a, &m), COLLECT_EFORMAT);
    /* a prefix of a longer name is not that name */
    cr_assert_eq(collect_kernel_parse("FWD_FFT.default", 15, &d, &a, &m), 0);
    cr_assert_eq(a, 4);
}

/* The precision classes (data/portable.h) as filters of the kernel names the collector writes. */
Test(collect_precision, classes_filter_fp32_kernels_by_math_type)
{
    static const char *const maths[] = {"fma", "default", "tensor_op", "tensor_op_allow_conversion"};
    /* allowed[class][math]: strict = fma; tf32 = default, tensor_op, fma; conversion = all */
    static const int allowed[DATA_PRECISION_COUNT][4] = {{1, 0, 0, 0}, {1, 1, 1, 0}, {1, 1, 1, 1}};
    for (int c = 0; c < DATA_PRECISION_COUNT; c++)
        for (int m = 0; m < 4; m++) {
            char name[64];
            snprintf(name, sizeof name, "FWD_IMPLICIT_PRECOMP_GEMM.%s", maths[m]);
            cr_assert_eq(data_portable_precision_allows(c, DATA_DTYPE_FP32, name, strlen(name)), allowed[c][m],
                         "class %s, kernel %s", data_portable_precision_name(c), name);
            /* FP16 and BF16 problems allow every kernel in every class */
            cr_assert(data_portable_precision_allows(c, DATA_DTYPE_FP16, name, strlen(name)));
            cr_assert(data_portable_precision_allows(c, DATA_DTYPE_BF16, name, strlen(name)));
        }
    /* names without a cuDNN math suffix are not filtered; the length bounds the name */
    const char *miopen = "ConvHipImplicitGemmV4R1Fwd", *cut = "BWD_FILTER_ALGO_1.tensor_op_allow_conversionXYZ";
    cr_assert(data_portable_precision_allows(DATA_PRECISION_STRICT, DATA_DTYPE_FP32, miopen, strlen(miopen)));
    cr_assert_not(data_portable_precision_allows(DATA_PRECISION_TF32, DATA_DTYPE_FP32, cut, strlen(cut) - 3));
    cr_assert(data_portable_precision_allows(DATA_PRECISION_TF32, DATA_DTYPE_FP32, cut, strlen(cut)));
    cr_assert_null(data_portable_precision_name(DATA_PRECISION_COUNT));
}

Test(collect_precision, heuristic_math_of_each_class_is_allowed_by_it)
{
    cr_assert_eq(collect_precision_math(DATA_PRECISION_STRICT), COLLECT_MATH_FMA);
    cr_assert_eq(collect_precision_math(DATA_PRECISION_TF32), COLLECT_MATH_DEFAULT);
    cr_assert_eq(collect_precision_math(DATA_PRECISION_CONVERSION), COLLECT_MATH_TENSOR_OP_ALLOW_CONVERSION);
    cr_assert_eq(collect_precision_math(-1), -1);
    cr_assert_eq(collect_precision_math(DATA_PRECISION_COUNT), -1);
    /* the math a class's heuristic is asked with never yields a kernel outside the class */
    for (int c = 0; c < DATA_PRECISION_COUNT; c++) {
        char name[64];
        cr_assert_eq(collect_kernel_name(COLLECT_DIR_W, 1, collect_precision_math(c), name, sizeof name), COLLECT_OK);
        cr_assert(data_portable_precision_allows(c, DATA_DTYPE_FP32, name, strlen(name)), "%s", name);
    }
}

Test(collect_precision, class_sidecar_paths)
{
    char buf[64];
    cr_assert_eq(collect_sidecar_class_path("out/h100.heuristic.txt", "strict", ".txt", buf, sizeof buf), COLLECT_OK);
    cr_assert_str_eq(buf, "out/h100.heuristic.strict.txt");
    cr_assert_eq(collect_sidecar_class_path("out/h100.heuristic.txt", "time", ".tsv", buf, sizeof buf), COLLECT_OK);
    cr_assert_str_eq(buf, "out/h100.heuristic.time.tsv");
    cr_assert_eq(collect_sidecar_class_path("side", "conversion", ".txt", buf, sizeof buf), COLLECT_OK);
    cr_assert_str_eq(buf, "side.conversion.txt");
    cr_assert_eq(collect_sidecar_class_path("a/very/long/path/to/the/heuristic/sidecar.txt", "conversion", ".txt", buf,
                                            16),
                 COLLECT_EINVAL);
}
