/* Codecs (data/codec.h): each source's problems as text and values, features, configurations and pair features,
 * slices and kernel classes, encoder tokens, mapping between tables, and the codec in a model file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/codec.h"
#include "data/table.h"
#include "helpers/testutil.h"

#define KEY "64-56-56-3x3-128-28-28-32-1x1-2x2-1x1-0-NHWC-FP16-B"

#define SCHEMA                                                                                                   \
    "{\"problem\":[\"M\",\"N\",\"K\",\"dtype\"],\"kernel\":[\"tm\",\"tn\",\"tk\",\"split\"],"                    \
    "\"categorical\":[\"dtype\"],\"measure\":\"us\",\"tiles\":{\"tm\":\"M\",\"tn\":\"N\",\"tk\":\"K\"},"           \
    "\"reduction\":\"K\",\"split\":\"split\",\"cus\":4}"
#define HEADER "M,N,K,dtype,tm,tn,tk,split,us\n"

static data_select *table_parse(const char *text)
{
    data_select *ds = NULL;
    data_load_opts o = {.strict = 1, .threads = 1};
    cr_assert_eq(data_table_parse("t.csv", text, strlen(text), ',', SCHEMA, &o, &ds), HR_OK, "%s", hr_last_error());
    return ds;
}

Test(data_codec, a_convolution_key_round_trips_and_gives_the_find_db_features)
{
    data_codec *c;
    cr_assert_eq(data_codec_conv(&c), HR_OK);
    cr_assert_eq(data_codec_value_count(c), DATA_PROBLEM_VALUES);
    cr_assert_eq(data_codec_feature_count(c), data_features_count());
    cr_assert_eq(data_codec_config_width(c), 0);
    cr_assert_eq(data_codec_pair_feature_count(c), 0);
    cr_assert_null(data_codec_kind(c));
    double pv[DATA_CODEC_MAX_VALUES], back[DATA_CODEC_MAX_VALUES];
    /* a whole find-db line is a problem too */
    cr_assert_eq(data_codec_problem_parse(c, KEY "=ConvDirect:1.5", pv), HR_OK, "%s", hr_last_error());
    char buf[256];
    cr_assert_eq(data_codec_problem_format(c, pv, buf, sizeof buf), HR_OK);
    cr_assert_str_eq(buf, KEY);
    data_problem p;
    const char *why;
    cr_assert_eq(data_key_parse(KEY, strlen(KEY), &p, &why), HR_OK);
    double want[DATA_PROBLEM_VALUES];
    data_problem_values(&p, want);
    cr_assert_arr_eq(pv, want, sizeof want);
    float x[256], y[256];
    data_codec_features(c, pv, x);
    data_features_compute(&p, y);
    cr_assert_arr_eq(x, y, (size_t)data_features_count() * sizeof *x);
    data_codec_values_of_features(c, x, back);
    cr_assert_arr_eq(back, pv, sizeof want);
    cr_assert_eq(data_codec_feature_name(c, 0, buf, sizeof buf), HR_OK);
    cr_assert_str_eq(buf, data_feature_name(0));
    /* slices: direction, data type, layout, precision class */
    cr_assert_eq(data_codec_slice_count(c), 4);
    int v[4];
    data_codec_slices(c, pv, v);
    cr_assert_eq(v[0], DATA_DIR_B);
    cr_assert_eq(v[1], DATA_DTYPE_FP16);
    cr_assert_eq(v[2], DATA_LAYOUT_NHWC);
    cr_assert_eq(v[3], DATA_PRECISION_TF32);
    cr_assert_eq(data_codec_slice_find(c, "dtype"), 1);
    cr_assert_eq(data_codec_slice_find(c, "precision"), 3);
    cr_assert_eq(data_codec_slice_find(c, "solver"), -1);
    /* the kernel class: the measured slices, 2-D, not grouped (the precision class refuses kernels by rule) */
    int klass = ((DATA_DIR_B * DATA_DTYPE_COUNT + DATA_DTYPE_FP16) * DATA_LAYOUT_COUNT + DATA_LAYOUT_NHWC) * 4;
    cr_assert_eq(data_codec_kernel_class(c, pv), klass);
    cr_assert_eq(data_codec_kernel_class_count(c), DATA_DIR_COUNT * DATA_DTYPE_COUNT * DATA_LAYOUT_COUNT * 4);
    /* an FP16 problem allows every kernel; an FP32 one's class refuses the other math's */
    cr_assert_eq(data_codec_allow_class(c, pv), -1);
    /* a strict FP32 key's class is a value of its own and round-trips */
    cr_assert_eq(data_codec_problem_parse(c, "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F_strict", pv), HR_OK);
    data_codec_slices(c, pv, v);
    cr_assert_eq(v[3], DATA_PRECISION_STRICT);
    cr_assert_eq(data_codec_problem_format(c, pv, buf, sizeof buf), HR_OK);
    cr_assert_str_eq(buf, "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F_strict");
    data_codec_features(c, pv, x);
    data_codec_values_of_features(c, x, back);
    cr_assert_arr_eq(back, pv, sizeof want);
    cr_assert_eq(data_codec_problem_parse(c, KEY, pv), HR_OK);
    /* tokens: the sizes, then the categories stored by name */
    cr_assert_eq(data_codec_token_count(c), 19);
    cr_assert_str_eq(data_codec_token_at(c, 0)->name, "in_c");
    cr_assert_eq(data_codec_token_value(c, pv, 0, 4), 64);
    cr_assert_str_eq(data_codec_token_at(c, 16)->name, "direction");
    cr_assert_str_eq(data_codec_token_at(c, 16)->names[data_codec_token_value(c, pv, 16, 4)], "B");
    data_codec_free(c);
}

Test(data_codec, convolution_errors_name_the_key_and_the_reason)
{
    data_codec *c;
    cr_assert_eq(data_codec_conv(&c), HR_OK);
    double pv[DATA_CODEC_MAX_VALUES], kv[4];
    cr_assert_eq(data_codec_problem_parse(c, "M=128,N=64", pv), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "problem key 'M=128,N=64'"), "%s", hr_last_error());
    cr_assert_eq(data_codec_config_parse(c, "ConvDirect", kv), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "known by name"), "%s", hr_last_error());
    cr_assert_eq(data_codec_config_feature_count(c), 0);
    data_codec_free(c);
}

Test(data_codec, a_table_codec_reads_its_schema_for_problems_configurations_and_pairs)
{
    data_select *ds = table_parse(HEADER "100,64,32,bf16,64,32,32,1,10\n100,64,32,bf16,32,32,32,2,12\n"
                                         "8,64,32,fp16,64,32,32,1,3\n");
    data_codec *c;
    cr_assert_eq(data_codec_of_select(ds, &c), HR_OK);
    const data_table_spec *s = &ds->table->spec;
    cr_assert_eq(data_codec_table_spec(c) != NULL, 1);
    cr_assert_str_eq(data_codec_kind(c), "benchmark table");
    cr_assert_eq(data_codec_value_count(c), 4);
    cr_assert_eq(data_codec_feature_count(c), data_table_problem_feature_count(s));
    cr_assert_eq(data_codec_config_width(c), 4);
    cr_assert_eq(data_codec_pair_feature_count(c), data_table_pair_feature_count(s));
    cr_assert_eq(data_codec_slice_count(c), 0);
    cr_assert_eq(data_codec_kernel_class_count(c), 1);
    double V[2 * 4], pv[DATA_CODEC_MAX_VALUES];
    data_select_values(ds, V);
    cr_assert_arr_eq(V, ds->table->pv, sizeof V);
    cr_assert_eq(data_codec_problem_parse(c, "dtype=fp16,K=32,N=64,M=8", pv), HR_OK, "%s", hr_last_error());
    cr_assert_arr_eq(pv, V + 4, 4 * sizeof *pv);
    char buf[256];
    cr_assert_eq(data_codec_problem_format(c, pv, buf, sizeof buf), HR_OK);
    cr_assert_str_eq(buf, "M=8,N=64,K=32,dtype=fp16");
    float x[64], y[64], pf[64], pg[64];
    data_codec_features(c, pv, x);
    data_table_problem_features(s, pv, y);
    cr_assert_arr_eq(x, y, (size_t)data_codec_feature_count(c) * sizeof *x);
    const double *kv = data_select_config_values(ds);
    data_codec_pair_features(c, pv, kv + 4, pf);
    data_table_pair_features(s, pv, kv + 4, pg);
    cr_assert_arr_eq(pf, pg, (size_t)data_codec_pair_feature_count(c) * sizeof *pf);
    /* the four numeric configuration columns, each a number and its log2, lead the pair features whatever the
     * problem */
    cr_assert_eq(data_codec_config_feature_count(c), 8);
    double other[DATA_CODEC_MAX_VALUES];
    cr_assert_eq(data_codec_problem_parse(c, "dtype=bf16,K=32,N=64,M=100", other), HR_OK, "%s", hr_last_error());
    data_codec_pair_features(c, other, kv + 4, pg);
    cr_assert_arr_eq(pf, pg, 8 * sizeof *pf);
    double k2[4];
    cr_assert_eq(data_codec_config_parse(c, ds->kernels[1], k2), HR_OK);
    cr_assert_arr_eq(k2, kv + 4, sizeof k2);
    cr_assert_eq(data_codec_config_format(c, k2, buf, sizeof buf), HR_OK);
    cr_assert_str_eq(buf, ds->kernels[1]);
    int32_t seq[4];
    cr_assert_eq(data_codec_config_sequence(c, k2, seq), HR_OK);
    cr_assert_eq(seq[0], 64);
    /* a problem key is no table problem: the error says what one looks like */
    cr_assert_eq(data_codec_problem_parse(c, KEY, pv), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "column values"), "%s", hr_last_error());
    cr_assert_eq(data_codec_problem_parse(c, "M=8,N=64,dtype=fp16", pv), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "'K' is missing"), "%s", hr_last_error());
    data_codec_free(c);
    data_select_free(ds);
}

Test(data_codec, another_tables_values_map_into_a_codecs_columns_and_vocabularies)
{
    data_select *a = table_parse(HEADER "100,64,32,bf16,64,32,32,1,10\n8,64,32,fp16,64,32,32,1,3\n");
    data_select *b = table_parse(HEADER "8,64,32,fp16,64,32,32,1,3\n9,64,32,fp8,32,32,32,1,3\n");
    data_codec *ca, *cb, *conv;
    cr_assert_eq(data_codec_of_select(a, &ca), HR_OK);
    cr_assert_eq(data_codec_of_select(b, &cb), HR_OK);
    cr_assert_eq(data_codec_conv(&conv), HR_OK);
    cr_assert_not(data_codec_equal(ca, cb));
    cr_assert(data_codec_equal(ca, ca));
    double V[2 * 4], out[2 * 4];
    data_select_values(b, V);
    /* fp16 is a's category 1; fp8 is none of a's: a problem of it is refused, as parsing refuses it, with a's
     * categories */
    cr_assert_eq(data_codec_map_problems(ca, cb, V, 1, out), HR_OK, "%s", hr_last_error());
    cr_assert_eq(out[0], 8);
    cr_assert_eq(out[3], 1);
    cr_assert_eq(data_codec_map_problems(ca, cb, V, 2, out), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "column 'dtype': 'fp8' is not one of its 2 known values: bf16, fp16"), "%s",
              hr_last_error());
    double pv[4];
    cr_assert_eq(data_codec_problem_parse(ca, "M=9,N=64,K=32,dtype=fp8", pv), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "column 'dtype': 'fp8' is not one of its 2 known values: bf16, fp16"), "%s",
              hr_last_error());
    cr_assert_eq(data_codec_map_configs(ca, cb, data_select_config_values(b), 2, out), HR_OK);
    cr_assert_eq(out[0], 32);
    cr_assert_eq(out[4], 64);
    cr_assert_eq(data_codec_map_problems(ca, conv, V, 1, out), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "convolution"), "%s", hr_last_error());
    data_codec_free(ca);
    data_codec_free(cb);
    data_codec_free(conv);
    data_select_free(a);
    data_select_free(b);
}

/* A codec written into a file reads back equal; a file without one is a convolution's. */
Test(data_codec, a_codec_round_trips_through_a_model_file)
{
    data_select *ds = table_parse(HEADER "100,64,32,bf16,64,32,32,1,10\n8,64,32,fp16,64,32,32,1,3\n");
    data_codec *c, *back, *conv;
    cr_assert_eq(data_codec_of_select(ds, &c), HR_OK);
    cr_assert_eq(data_codec_conv(&conv), HR_OK);
    char *path = test_tmppath(".h5");
    for (int i = 0; i < 2; i++) {
        const data_codec *w = i ? conv : c;
        hr_h5_out out;
        cr_assert_eq(hr_h5_create(path, &out), HR_OK);
        cr_assert_eq(hr_h5_attr_write_str(out.file, "format", "codec-test"), HR_OK);
        cr_assert_eq(hr_h5_attr_write_int(out.file, "version", 1), HR_OK);
        cr_assert_eq(data_codec_write(w, out.file), HR_OK);
        cr_assert_eq(hr_h5_close(&out, 1), HR_OK);
        hid_t f;
        cr_assert_eq(hr_h5_open(path, "codec-test", 1, &f, NULL), HR_OK, "%s", hr_last_error());
        cr_assert_eq(data_codec_read(f, path, &back), HR_OK, "%s", hr_last_error());
        H5Fclose(f);
        cr_assert(data_codec_equal(w, back));
        cr_assert_eq(data_codec_feature_count(w), data_codec_feature_count(back));
        data_codec_free(back);
    }
    remove(path);
    free(path);
    data_codec_free(c);
    data_codec_free(conv);
    data_select_free(ds);
}
