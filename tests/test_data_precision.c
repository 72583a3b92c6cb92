/* Precision classes as part of a convolution problem: the key's class suffix, a find-db's FP32 lines made one
 * problem per class with the class's kernels only, each class's vendor ranking from its own sidecar, and the class
 * through the dataset cache. (tests/test_models_precision.c: a model never scores a kernel outside the class.) */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/codec.h"
#include "data/data.h"
#include "helpers/testutil.h"

static data_problem parse_ok(const char *key)
{
    data_problem p;
    const char *why = NULL;
    cr_assert_eq(data_key_parse(key, strlen(key), &p, &why), HR_OK, "key %s: %s", key, why ? why : "");
    return p;
}

Test(data_precision, key_suffix_sets_the_class_of_fp32_problems)
{
    data_problem p = parse_ok("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F");
    cr_assert_eq(p.precision, DATA_PRECISION_TF32, "no suffix: the TF32 class");
    p = parse_ok("64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-W_g64_strict");
    cr_assert_eq(p.precision, DATA_PRECISION_STRICT);
    cr_assert_eq(p.f[DATA_FIELD_GROUPS], 64, "the group suffix still reads beside the class");
    p = parse_ok("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-B_conversion_g2");
    cr_assert_eq(p.precision, DATA_PRECISION_CONVERSION);
    cr_assert_eq(p.f[DATA_FIELD_GROUPS], 2);
    p = parse_ok("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F_tf32");
    cr_assert_eq(p.precision, DATA_PRECISION_TF32);
    /* every class allows an FP16 problem every kernel: it is TF32 whatever its suffix */
    p = parse_ok("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP16-F_strict");
    cr_assert_eq(p.precision, DATA_PRECISION_TF32);
    /* an unknown suffix is still ignored */
    p = parse_ok("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F_foo");
    cr_assert_eq(p.precision, DATA_PRECISION_TF32);
}

Test(data_precision, canonical_key_writes_the_class_but_not_tf32)
{
    static const char *const keys[][2] = {
        {"64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-W_g64_strict", NULL},
        {"64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-B_conversion", NULL},
        {"64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F_tf32", "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F"},
        {"64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP16-F_strict", "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP16-F"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        data_problem p = parse_ok(keys[i][0]);
        char buf[256];
        data_key_format(&p, buf, sizeof buf);
        cr_assert_str_eq(buf, keys[i][1] ? keys[i][1] : keys[i][0]);
        data_problem q = parse_ok(buf);
        cr_assert_eq(q.precision, p.precision, "%s", buf);
    }
}

Test(data_precision, features_carry_the_class_one_hot)
{
    float a[DATA_N_FEATURES], b[DATA_N_FEATURES];
    data_problem p = parse_ok("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F");
    data_problem q = parse_ok("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F_strict");
    data_features_compute(&p, a);
    data_features_compute(&q, b);
    int differ = 0;
    for (int j = 0; j < DATA_N_FEATURES; j++) {
        const char *name = data_feature_name(j);
        if (!strncmp(name, "precision_", 10)) {
            cr_assert_eq(a[j], strcmp(name, "precision_tf32") == 0 ? 1.0f : 0.0f, "%s", name);
            cr_assert_eq(b[j], strcmp(name, "precision_strict") == 0 ? 1.0f : 0.0f, "%s", name);
        } else {
            differ += a[j] != b[j];
        }
    }
    cr_assert_eq(differ, 0, "only the class's one-hot differs");
    cr_assert(data_feature_name(DATA_N_FEATURES - 1) != NULL);
}

Test(data_precision, list_parse)
{
    int mask;
    cr_assert_eq(data_precision_list_parse("all", &mask), HR_OK);
    cr_assert_eq(mask, DATA_PRECISION_ALL);
    cr_assert_eq(data_precision_list_parse("strict,conversion", &mask), HR_OK);
    cr_assert_eq(mask, (1 << DATA_PRECISION_STRICT) | (1 << DATA_PRECISION_CONVERSION));
    cr_assert_neq(data_precision_list_parse("strict,fp8", &mask), HR_OK);
    cr_assert(strstr(hr_last_error(), "'fp8'") != NULL, "%s", hr_last_error());
    cr_assert_neq(data_precision_list_parse("", &mask), HR_OK);
}

/* Two FP32 problems and one FP16 one, each kernel a math type of one algorithm. */
static const char fdb[] =
    "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F=A.tensor_op_allow_conversion:1,0,x;A.tensor_op:2,0,x;A.default:3,0,x;"
    "A.fma:4,0,x;B.fma:5,0,x\n"
    "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-B=A.tensor_op_allow_conversion:1,0,x\n"
    "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP16-F=A.tensor_op_allow_conversion:1,0,x;A.fma:4,0,x\n";

static float time_of(const data_select *ds, int row, const char *kernel)
{
    int k = data_select_kernel_index(ds, kernel);
    cr_assert_geq(k, 0, "%s", kernel);
    return ds->runtime[(size_t)row * ds->n_kernels + k];
}

static int row_of(const data_select *ds, const char *key)
{
    for (int i = 0; i < ds->n; i++)
        if (!strcmp(ds->keys[i], key)) return i;
    cr_assert_fail("no row %s", key);
    return -1;
}

Test(data_precision, fp32_lines_become_one_problem_per_class)
{
    /* the default: TF32 alone, its conversion kernels refused; a problem left with none is a skip */
    data_load_opts o = {.threads = 1};
    data_select *ds;
    cr_assert_eq(data_fdb_parse("t.fdb.txt", fdb, strlen(fdb), &o, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 2);
    cr_assert(isinf(time_of(ds, 0, "A.tensor_op_allow_conversion")));
    cr_assert_eq(time_of(ds, 0, "A.tensor_op"), 2.0f);
    cr_assert_eq(time_of(ds, 1, "A.tensor_op_allow_conversion"), 1.0f, "FP16 keeps every kernel");
    cr_assert_eq(ds->skips.total, 1);
    cr_assert_str_eq(ds->skips.reason[0], "no kernel of its precision class");
    data_select_free(ds);

    /* every class: strict keeps the fma kernels, conversion every kernel */
    o.precisions = DATA_PRECISION_ALL;
    cr_assert_eq(data_fdb_parse("t.fdb.txt", fdb, strlen(fdb), &o, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 3 + 1 + 1, "three classes of F, the conversion class of B, the FP16 problem");
    int s = row_of(ds, "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F_strict");
    int t = row_of(ds, "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F");
    int c = row_of(ds, "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F_conversion");
    row_of(ds, "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-B_conversion");
    cr_assert_eq(ds->problems[s].precision, DATA_PRECISION_STRICT);
    cr_assert_eq(ds->problems[c].precision, DATA_PRECISION_CONVERSION);
    cr_assert(isinf(time_of(ds, s, "A.default")) && isinf(time_of(ds, s, "A.tensor_op")));
    cr_assert_eq(time_of(ds, s, "A.fma"), 4.0f);
    cr_assert_eq(data_select_best(ds, s), data_select_kernel_index(ds, "A.fma"));
    cr_assert_eq(data_select_best(ds, t), data_select_kernel_index(ds, "A.tensor_op"));
    cr_assert_eq(data_select_best(ds, c), data_select_kernel_index(ds, "A.tensor_op_allow_conversion"));
    cr_assert_eq(data_problem_geometry_hash(&ds->problems[s]), data_problem_geometry_hash(&ds->problems[c]),
                 "the classes of a problem share its geometry, so a split keeps them together");
    data_select_free(ds);

    /* a key that names its class is that class alone, whatever the option */
    static const char named[] = "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F_strict=A.tensor_op:2,0,x;A.fma:4,0,x\n";
    cr_assert_eq(data_fdb_parse("n.fdb.txt", named, strlen(named), &o, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 1);
    cr_assert(isinf(time_of(ds, 0, "A.tensor_op")));
    data_select_free(ds);
}

static char *write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    return hr_strdup(path);
}

Test(data_precision, each_class_reads_its_own_vendor_sidecar)
{
    char *stem = test_tmppath("");
    char p[512], h[512], hs[512], hc[512];
    snprintf(p, sizeof p, "%s.fdb.txt", stem);
    snprintf(h, sizeof h, "%s.heuristic.txt", stem);
    snprintf(hs, sizeof hs, "%s.heuristic.strict.txt", stem);
    snprintf(hc, sizeof hc, "%s.heuristic.conversion.txt", stem);
    const char *key = "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F";
    char line[512];
    free(write_text(p, fdb));
    snprintf(line, sizeof line, "%s=A.default;A.fma\n", key);
    free(write_text(h, line));
    snprintf(line, sizeof line, "%s=B.fma;A.fma\n", key);
    free(write_text(hs, line));
    /* a sidecar entry the class refuses is left out */
    snprintf(line, sizeof line, "%s=A.tensor_op_allow_conversion;A.tensor_op\n", key);
    free(write_text(hc, line));
    data_load_opts o = {.threads = 1, .precisions = DATA_PRECISION_ALL};
    data_select *ds, *dt;
    data_tune *tune;
    cr_assert_eq(data_load(p, NULL, &o, &ds, &tune), HR_OK, "%s", hr_last_error());
    cr_assert_not_null(ds->vendor_rank);
    int K = ds->n_kernels;
    char keyed[600];
    snprintf(keyed, sizeof keyed, "%s_strict", key);
    int s = row_of(ds, keyed), t = row_of(ds, key);
    snprintf(keyed, sizeof keyed, "%s_conversion", key);
    int c = row_of(ds, keyed);
    cr_assert_eq(ds->vendor_rank[(size_t)s * K + data_select_kernel_index(ds, "B.fma")], 0, "the strict sidecar");
    cr_assert_eq(ds->vendor_rank[(size_t)s * K + data_select_kernel_index(ds, "A.fma")], 1);
    cr_assert_eq(ds->vendor_rank[(size_t)t * K + data_select_kernel_index(ds, "A.default")], 0, "the TF32 sidecar");
    cr_assert_eq(ds->vendor_rank[(size_t)c * K + data_select_kernel_index(ds, "A.tensor_op_allow_conversion")], 0);
    cr_assert_eq(ds->vendor_rank[(size_t)c * K + data_select_kernel_index(ds, "A.tensor_op")], 1);
    /* the cache keeps each problem's class */
    char *cache = test_tmppath(".h5");
    cr_assert_eq(data_cache_write_select(cache, ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(data_cache_read(cache, &dt, &tune), HR_OK, "%s", hr_last_error());
    cr_assert_eq(dt->n, ds->n);
    for (int i = 0; i < ds->n; i++) cr_assert_eq(dt->problems[i].precision, ds->problems[i].precision, "row %d", i);
    data_select_free(dt);
    data_select_free(ds);
    remove(cache);
    free(cache);
    remove(p);
    remove(h);
    remove(hs);
    remove(hc);
    free(stem);
}


/* Where problems come from (data/sources.c): a key list tags each class of a problem by its key without the class
 * suffix, a key table by its source (or network, or family) column, and a problem neither names gets the fallback;
 * the report's axes then hold the source and each convolution axis (data_select_axes). */
Test(data_precision, sources_tag_every_class_of_a_listed_problem)
{
    data_load_opts o = {.threads = 1, .precisions = DATA_PRECISION_ALL};
    data_select *ds;
    cr_assert_eq(data_fdb_parse("t.fdb.txt", fdb, strlen(fdb), &o, &ds), HR_OK, "%s", hr_last_error());
    char *list = test_tmppath(".keys"), *table = test_tmppath(".tsv");
    free(write_text(list, "# a comment\n8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F resnet extra\n"));
    free(write_text(table, "key\tlayer\tnetwork\tfamily\n8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP16-F\tconv1\tvgg\tv\n"));
    cr_assert_eq(data_sources_read(ds, list, "pool"), HR_OK, "%s", hr_last_error());
    int s = row_of(ds, "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F_strict");
    int t = row_of(ds, "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F");
    int b = row_of(ds, "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-B_conversion");
    cr_assert_str_eq(ds->source_names[ds->problem_source[s]], "resnet");
    cr_assert_str_eq(ds->source_names[ds->problem_source[t]], "resnet");
    cr_assert_str_eq(ds->source_names[ds->problem_source[b]], "pool", "not listed: the fallback");
    /* the table's network column, the first of source, network, family it has */
    cr_assert_eq(data_sources_read(ds, table, NULL), HR_OK, "%s", hr_last_error());
    int h = row_of(ds, "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP16-F");
    cr_assert_str_eq(ds->source_names[ds->problem_source[h]], "vgg");
    cr_assert_str_eq(ds->source_names[ds->problem_source[t]], "-");
    data_axis ax[DATA_AXES_MAX];
    int na = data_select_axes(ds, ax, DATA_AXES_MAX);
    cr_assert_eq(na, 6);
    cr_assert_str_eq(ax[0].name, "source");
    cr_assert_str_eq(ax[0].values[data_select_axis_value(ds, &ax[0], h)], "vgg");
    cr_assert_str_eq(ax[1].name, "class");
    cr_assert_str_eq(ax[1].values[data_select_axis_value(ds, &ax[1], s)], "strict");
    cr_assert_str_eq(ax[1].values[data_select_axis_value(ds, &ax[1], h)], "FP16");
    cr_assert_str_eq(ax[2].values[data_select_axis_value(ds, &ax[2], b)], "B");
    cr_assert_str_eq(ax[4].values[data_select_axis_value(ds, &ax[4], b)], "2d");
    cr_assert_str_eq(ax[5].values[data_select_axis_value(ds, &ax[5], b)], "dense");
    /* a table without a source column is an error naming the file's first line */
    free(write_text(table, "key\tlayer\n8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP16-F\tconv1\n"));
    cr_assert_neq(data_sources_read(ds, table, NULL), HR_OK);
    cr_assert(strstr(hr_last_error(), ":1:") && strstr(hr_last_error(), "source"), "%s", hr_last_error());
    cr_assert_eq(ds->n_sources, 0, "a failed read leaves the problems untagged");
    remove(list);
    remove(table);
    free(list);
    free(table);
    data_select_free(ds);
}

/* A depthwise convolution (a group per input channel: in_c of F, out_c of B and W, whose "in" is dy) and a grouped
 * 3-D one in the report's axes. */
Test(data_precision, groups_and_dims_axes)
{
    static const char text[] = "32-8-8-3x3-32-8-8-2-1x1-1x1-1x1-0-NCHW-FP16-F_g32=A.tensor_op:1,0,x\n"
                               "64-8-8-3x3-32-8-8-2-1x1-1x1-1x1-0-NCHW-FP16-W_g32=A.tensor_op:1,0,x\n"
                               "8-4-8-8-3x3x3-16-4-8-8-2-1x1x1-1x1x1-1x1x1-0-NCDHW-FP16-F_g4=A.tensor_op:1,0,x\n";
    data_load_opts o = {.threads = 1};
    data_select *ds;
    cr_assert_eq(data_fdb_parse("g.fdb.txt", text, strlen(text), &o, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 3);
    data_axis ax[DATA_AXES_MAX];
    int na = data_select_axes(ds, ax, DATA_AXES_MAX);
    cr_assert_eq(na, 5, "no source axis before the problems are tagged");
    const data_axis *dims = &ax[3], *groups = &ax[4];
    cr_assert_str_eq(groups->name, "groups");
    cr_assert_str_eq(groups->values[data_select_axis_value(ds, groups, 0)], "depthwise");
    cr_assert_str_eq(groups->values[data_select_axis_value(ds, groups, 1)], "depthwise", "W: out_c is x's channels");
    cr_assert_str_eq(groups->values[data_select_axis_value(ds, groups, 2)], "grouped");
    cr_assert_str_eq(dims->values[data_select_axis_value(ds, dims, 0)], "2d");
    cr_assert_str_eq(dims->values[data_select_axis_value(ds, dims, 2)], "3d");
    data_select_free(ds);
}
