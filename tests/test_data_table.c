/* Benchmark tables (data/table.h): parsing, schema validation, duplicates, costs, features against hand
 * computations, names, groups, caches and compressed inputs. */
#include <bzlib.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "data/data.h"
#include "data/table.h"
#include "helpers/testutil.h"

#define SCHEMA                                                                                                   \
    "{\"problem\":[\"M\",\"N\",\"K\",\"dtype\"],\"kernel\":[\"tm\",\"tn\",\"tk\",\"split\"],"                    \
    "\"categorical\":[\"dtype\"],\"measure\":\"us\",\"tiles\":{\"tm\":\"M\",\"tn\":\"N\",\"tk\":\"K\"},"           \
    "\"reduction\":\"K\",\"split\":\"split\",\"cus\":4}"
#define HEADER "M,N,K,dtype,tm,tn,tk,split,us\n"

static data_load_opts strict_opts = {.strict = 1, .threads = 1};
static data_load_opts lax_opts = {.threads = 1};

static data_select *parse_ok(const char *text, const char *schema, const data_load_opts *o)
{
    data_select *ds = NULL;
    int rc = data_table_parse("t.csv", text, strlen(text), ',', schema, o, &ds);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    return ds;
}

/* Strict parsing fails with a message holding every needle. */
static void parse_fails(const char *text, const char *schema, const char *n1, const char *n2)
{
    data_select *ds = NULL;
    int rc = data_table_parse("t.csv", text, strlen(text), ',', schema, &strict_opts, &ds);
    cr_assert_neq(rc, HR_OK, "accepted: %s", text);
    cr_assert_null(ds);
    const char *e = hr_last_error();
    cr_assert(strstr(e, n1), "'%s' lacks '%s'", e, n1);
    if (n2) cr_assert(strstr(e, n2), "'%s' lacks '%s'", e, n2);
}

Test(data_table, two_problems_costs_keys_and_sorted_configurations)
{
    const char *text = HEADER "100,64,32,bf16,64,32,32,1,10\n100,64,32,bf16,32,32,32,2,12\n"
                              "8,64,32,fp16,64,32,32,1,3\n";
    data_select *ds = parse_ok(text, SCHEMA, &strict_opts);
    cr_assert_eq(ds->n, 2);
    cr_assert_eq(ds->n_kernels, 2);
    cr_assert_str_eq(ds->keys[0], "M=100,N=64,K=32,dtype=bf16");
    cr_assert_str_eq(ds->keys[1], "M=8,N=64,K=32,dtype=fp16");
    /* sorted by name: tm=32 before tm=64 */
    cr_assert_str_eq(ds->kernels[0], "tm=32,tn=32,tk=32,split=2");
    cr_assert_str_eq(ds->kernels[1], "tm=64,tn=32,tk=32,split=1");
    cr_assert_float_eq(ds->runtime[0], 12.0f, 1e-6);
    cr_assert_float_eq(ds->runtime[1], 10.0f, 1e-6);
    cr_assert(isinf(ds->runtime[2]));
    cr_assert_float_eq(ds->runtime[3], 3.0f, 1e-6);
    cr_assert_eq(ds->problems[0].direction, DATA_DIR_F);
    cr_assert_eq(ds->problems[0].dtype, DATA_DTYPE_OTHER);
    cr_assert_str_eq(ds->source, "t.csv");
    const data_table *t = ds->table;
    cr_assert_not_null(t);
    cr_assert_eq(t->spec.problem[3].n_vocab, 2);
    cr_assert_str_eq(t->spec.problem[3].vocab[0], "bf16");
    cr_assert_eq(t->pv[3], 0.0);
    cr_assert_eq(t->pv[4 + 3], 1.0);
    cr_assert_eq(t->kv[0], 32.0);
    cr_assert_eq(t->kv[4], 64.0);
    cr_assert_null(ds->vendor_rank);
    data_select_free(ds);
}

Test(data_table, numbers_are_canonical)
{
    const char *text = HEADER "100,64,32,bf16,64,32,32,1,10\n100.0,6.4e1,32,bf16,64,32,32,1,14\n";
    data_select *ds = parse_ok(text, SCHEMA, &strict_opts);
    cr_assert_eq(ds->n, 1);
    cr_assert_eq(ds->table->duplicates, 1);
    cr_assert_float_eq(ds->runtime[0], 12.0f, 1e-6); /* the median of 10 and 14 */
    data_select_free(ds);
}

Test(data_table, malformed_rows_name_file_line_and_column)
{
    parse_fails(HEADER "1,2,3,bf16,16,16,32,1,5\n1,2,3,bf16,16,16,32,1\n", SCHEMA, "t.csv:3:", "'us'");
    parse_fails(HEADER "1,2,x,bf16,16,16,32,1,5\n", SCHEMA, "t.csv:2:", "column 'K'");
    parse_fails(HEADER "1,2,3,,16,16,32,1,5\n", SCHEMA, "t.csv:2:", "column 'dtype': empty cell");
    parse_fails(HEADER "1,2,3,bf16,16,16,32,1,-5\n", SCHEMA, "t.csv:2:", "column 'us'");
    parse_fails(HEADER "1,2,3,bf16,16,16,32,1,0\n", SCHEMA, "t.csv:2:", "column 'us'");
    parse_fails(HEADER "1,2,3,bf16,16,16,32,1,inf\n", SCHEMA, "t.csv:2:", "column 'us'");
    parse_fails(HEADER "1,2,3,bf16,16,16,32,1,5,9\n", SCHEMA, "t.csv:2:", "after column 'us'");
    parse_fails("M,N,dtype,tm,tn,tk,split,us\n1,2,bf16,16,16,32,1,5\n", SCHEMA, "t.csv:1:", "column 'K'");
    parse_fails("M,N,K,K,dtype,tm,tn,tk,split,us\n", SCHEMA, "t.csv:1:", "'K' appears twice");
    parse_fails("", SCHEMA, "t.csv", "no header");
    parse_fails(HEADER "1,2,3,\"bf16,16,16,32,1,5\n", SCHEMA, "t.csv:", "malformed CSV");
}

Test(data_table, lax_parsing_skips_and_counts_bad_rows)
{
    const char *text = HEADER "1,2,3,bf16,16,16,32,1,5\n1,2,3,bf16,16,16,32,1\n1,2,x,bf16,16,16,32,1,5\n"
                              "1,2,3,bf16,16,16,32,1,-1\n2,2,3,bf16,16,16,32,1,-1\n";
    data_select *ds = parse_ok(text, SCHEMA, &lax_opts);
    cr_assert_eq(ds->n, 1);
    cr_assert_eq(ds->skips.total, 4);
    cr_assert_str_eq(ds->skips.reason[0], "wrong number of fields");
    cr_assert_eq(ds->skips.first_line[0], 3);
    cr_assert_str_eq(ds->skips.reason[1], "not a number");
    cr_assert_eq(ds->skips.first_line[1], 4);
    cr_assert_str_eq(ds->skips.reason[2], "measure not a positive number");
    cr_assert_eq(ds->skips.count[2], 2);
    cr_assert_eq(ds->lines, 6);
    data_select_free(ds);
    /* a header problem stays an error without strict */
    data_select *bad = NULL;
    const char *nohdr = "M,N,dtype,tm,tn,tk,split,us\n1,2,bf16,16,16,32,1,5\n";
    cr_assert_neq(data_table_parse("t.csv", nohdr, strlen(nohdr), ',', SCHEMA, &lax_opts, &bad), HR_OK);
}

static void schema_fails(const char *schema, const char *needle)
{
    data_table_spec s;
    cr_assert_neq(data_table_spec_from_json(schema, "s.json", &s), HR_OK, "accepted %s", schema);
    cr_assert(strstr(hr_last_error(), needle), "'%s' lacks '%s'", hr_last_error(), needle);
    cr_assert(strstr(hr_last_error(), "s.json"));
}

Test(data_table, schema_validation)
{
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"colour\":1}", "unknown key \"colour\"");
    schema_fails("{\"kernel\":[\"t\"],\"measure\":\"us\"}", "\"problem\" is required");
    schema_fails("{\"problem\":[\"M\"],\"measure\":\"us\"}", "\"kernel\" is required");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[],\"measure\":\"us\"}", "\"kernel\" names no column");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"]}", "\"measure\"");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"categorical\":[\"x\"]}", "categorical column 'x'");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"tiles\":{\"t\":\"Q\"}}", "tiles: 't'");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"tiles\":{\"u\":\"M\"}}", "'u' is not a kernel column");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"M\"],\"measure\":\"us\"}", "named twice");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"duplicates\":\"max\"}", "duplicates");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"better\":\"faster\"}", "better");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"cus\":\"M\"}", "cus");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"cus\":-3}", "cus");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"split\":\"M\"}", "split");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"reduction\":\"t\"}", "reduction");
    schema_fails("{\"problem\":[\"M\",\"d\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"categorical\":[\"d\"],"
                 "\"vocab\":{\"d\":[\"a\",\"b\",\"c\"],\"d\":[\"a\"]}}", "key \"d\" is given twice");
    schema_fails("[1]", "not a JSON object");
    schema_fails("{", "not valid JSON");
}

Test(data_table, spec_json_round_trip)
{
    data_select *ds = parse_ok(HEADER "1,2,3,bf16,16,16,32,1,5\n1,2,3,fp32,16,16,32,1,5\n", SCHEMA, &strict_opts);
    char *json = data_table_spec_to_json(&ds->table->spec);
    data_table_spec back;
    cr_assert_eq(data_table_spec_from_json(json, "x", &back), HR_OK, "%s", hr_last_error());
    char *again = data_table_spec_to_json(&back);
    cr_assert_str_eq(json, again);
    cr_assert_eq(back.problem[3].n_vocab, 2);
    cr_assert_str_eq(back.problem[3].vocab[1], "fp32");
    cr_assert_eq(back.tile_of[2], 2);
    cr_assert_eq(back.reduction, 2);
    cr_assert_eq(back.split, 3);
    cr_assert_eq(back.cus, 4.0);
    free(json);
    free(again);
    data_table_spec_free(&back);
    data_select_free(ds);
}

static const char *dup_text = HEADER "1,2,3,bf16,16,16,32,1,5\n1,2,3,bf16,16,16,32,1,9\n1,2,3,bf16,16,16,32,1,6\n";

static float dup_cost(const char *policy)
{
    char schema[1024];
    snprintf(schema, sizeof schema, "{\"problem\":[\"M\",\"N\",\"K\",\"dtype\"],\"kernel\":[\"tm\",\"tn\",\"tk\",\"split\"],"
             "\"categorical\":[\"dtype\"],\"measure\":\"us\",\"duplicates\":\"%s\"}", policy);
    data_select *ds = parse_ok(dup_text, schema, &strict_opts);
    cr_assert_eq(ds->table->duplicates, 1);
    float c = ds->runtime[0];
    data_select_free(ds);
    return c;
}

Test(data_table, duplicate_policies)
{
    cr_assert_float_eq(dup_cost("median"), 6.0f, 1e-6);
    cr_assert_float_eq(dup_cost("min"), 5.0f, 1e-6);
    cr_assert_float_eq(dup_cost("mean"), 20.0f / 3.0f, 1e-5);
    data_select *ds = NULL;
    const char *schema = "{\"problem\":[\"M\",\"N\",\"K\",\"dtype\"],\"kernel\":[\"tm\",\"tn\",\"tk\",\"split\"],"
                         "\"categorical\":[\"dtype\"],\"measure\":\"us\",\"duplicates\":\"error\"}";
    cr_assert_neq(data_table_parse("t.csv", dup_text, strlen(dup_text), ',', schema, &lax_opts, &ds), HR_OK);
    cr_assert(strstr(hr_last_error(), "t.csv:3:"), "%s", hr_last_error());
    cr_assert(strstr(hr_last_error(), "first at line 2"), "%s", hr_last_error());
}

Test(data_table, higher_is_better_costs_are_reciprocals)
{
    const char *schema = "{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"tflops\",\"better\":\"higher\"}";
    data_select *ds = parse_ok("M,t,tflops\n1,16,4\n1,32,8\n", schema, &strict_opts);
    cr_assert_float_eq(ds->runtime[0], 0.25f, 1e-7);
    cr_assert_float_eq(ds->runtime[1], 0.125f, 1e-7);
    cr_assert_eq(data_select_best(ds, 0), 1); /* the higher throughput wins */
    data_select_free(ds);
}

Test(data_table, vendor_column)
{
    const char *schema = "{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"vendor\":\"h\"}";
    data_select *ds = parse_ok("M,t,us,h\n1,16,4,1\n1,32,8,0\n2,16,4,\n2,32,5,-1\n", schema, &strict_opts);
    cr_assert_not_null(ds->vendor_rank);
    cr_assert_eq(ds->vendor_rank[0], 1);
    cr_assert_eq(ds->vendor_rank[1], 0);
    cr_assert_eq(ds->vendor_rank[2], -1);
    cr_assert_eq(ds->vendor_rank[3], -1);
    data_select_free(ds);
    parse_fails("M,t,us,h\n1,16,4,x\n", schema, "t.csv:2:", "column 'h'");
}

Test(data_table, vendor_rank_as_a_kernel_column)
{
    const char *schema = "{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"vendor\":\"h\","
                         "\"vendor_feature\":true}";
    data_select *ds = parse_ok("M,t,us,h\n1,16,4,1\n1,32,8,0\n2,16,4,\n2,32,5,-1\n", schema, &strict_opts);
    const data_table_spec *s = &ds->table->spec;
    cr_assert_eq(s->n_kernel, 2);
    cr_assert_str_eq(s->kernel[1].name, DATA_TABLE_VENDOR_FEATURE);
    cr_assert_not(s->kernel[1].categorical);
    /* (t, rank): (16, 1), (32, 0), and both unlisted in problem 2: four configurations */
    cr_assert_eq(ds->n_kernels, 4);
    int seen_unlisted = 0, seen_rank1 = 0;
    for (int k = 0; k < ds->n_kernels; k++) {
        double t = ds->table->kv[2 * k], r = ds->table->kv[2 * k + 1];
        seen_unlisted += r == DATA_TABLE_VENDOR_UNLISTED;
        seen_rank1 += t == 16 && r == 1;
    }
    cr_assert_eq(seen_unlisted, 2);
    cr_assert_eq(seen_rank1, 1);
    cr_assert_not_null(ds->vendor_rank, "the vendor baseline still reads the column");
    /* the JSON names the table's own kernel columns and the option, and reads back to the same spec */
    char *json = data_table_spec_to_json(s);
    cr_assert(strstr(json, "\"kernel\":[\"t\"]"), "%s", json);
    cr_assert(strstr(json, "\"vendor_feature\":true"), "%s", json);
    data_table_spec back;
    cr_assert_eq(data_table_spec_from_json(json, "x", &back), HR_OK, "%s", hr_last_error());
    cr_assert_eq(back.n_kernel, 2);
    cr_assert_str_eq(back.kernel[1].name, DATA_TABLE_VENDOR_FEATURE);
    char *again = data_table_spec_to_json(&back);
    cr_assert_str_eq(json, again);
    free(json);
    free(again);
    data_table_spec_free(&back);
    data_select_free(ds);
    parse_fails("M,t,us,h\n1,16,4,1024\n", schema, "t.csv:2:", "column 'h'");
    parse_fails("M,t,us,h\n1,16,4,x\n", schema, "t.csv:2:", "column 'h'");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"vendor_feature\":true}",
                 "\"vendor_feature\" needs \"vendor\"");
    schema_fails("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"vendor\":\"h\",\"vendor_feature\":1}",
                 "true or false");
}

/* Two problems (M,N,K) = (100,64,32) and (8,64,32) with configurations (tm,tn,tk,split) = (64,32,32,1) and
 * (32,32,32,2), CUs 4: the features computed by hand. */
Test(data_table, features_by_hand)
{
    const char *text = HEADER "100,64,32,bf16,64,32,32,1,10\n100,64,32,bf16,32,32,32,2,12\n8,64,32,fp16,64,32,32,1,3\n";
    data_select *ds = parse_ok(text, SCHEMA, &strict_opts);
    const data_table_spec *s = &ds->table->spec;
    cr_assert_eq(data_table_problem_feature_count(s), 3 * 2 + 2);
    /* kernel columns 4 x 2, tiled dims 3 x 3, output tiles, waves, intensity */
    cr_assert_eq(data_table_pair_feature_count(s), 8 + 9 + 3);
    float x[8], f[20];
    data_table_problem_features(s, ds->table->pv, x);
    float px[8] = {100, (float)log2(101), 64, (float)log2(65), 32, (float)log2(33), 1, 0};
    for (int j = 0; j < 8; j++) cr_assert_float_eq(x[j], px[j], 1e-5, "problem feature %d", j);
    /* problem 0 with configuration 1 (sorted: tm=64,...) */
    data_table_pair_features(s, ds->table->pv, ds->table->kv + 4, f);
    double want[20] = {64, log2(65), 32, log2(33), 32, log2(33), 1, 1,
                       /* M=100, t=64: ceil 2, waste (128-100)/128, log2(100/64) */
                       2, 28.0 / 128, log2(100.0 / 64),
                       /* N=64, t=32 */ 2, 0, 1,
                       /* K=32, t=32 */ 1, 0, 0,
                       /* output tiles 2x2, waves 4*1/4, intensity 2*100*64*32/(100*32+32*64+100*64) */
                       4, 1, 2.0 * 100 * 64 * 32 / (100 * 32 + 32 * 64 + 100 * 64)};
    for (int j = 0; j < 20; j++) cr_assert_float_eq(f[j], (float)want[j], 1e-5, "pair feature %d: %g", j, f[j]);
    /* problem 1 (M=8) with configuration 0 (tm=32, split 2): waves = ceil(8/32) ceil(64/32) * 2 / 4 */
    data_table_pair_features(s, ds->table->pv + 4, ds->table->kv, f);
    cr_assert_float_eq(f[8], 1, 1e-6);
    cr_assert_float_eq(f[9], 24.0f / 32, 1e-6);
    cr_assert_float_eq(f[10], -2, 1e-6);
    cr_assert_float_eq(f[17], 2, 1e-6);
    cr_assert_float_eq(f[18], 1, 1e-6);
    char name[64];
    const char *names[] = {"M", "log2_M", "N", "log2_N", "K", "log2_K", "dtype=bf16", "dtype=fp16", "tm", "log2_tm",
                           "tn", "log2_tn", "tk", "log2_tk", "split", "log2_split", "tiles_M", "waste_M", "ratio_M",
                           "tiles_N", "waste_N", "ratio_N", "tiles_K", "waste_K", "ratio_K", "output_tiles", "waves",
                           "intensity"};
    for (int j = 0; j < 28; j++) {
        cr_assert_eq(data_table_feature_name(s, j, name, sizeof name), HR_OK);
        cr_assert_str_eq(name, names[j]);
    }
    cr_assert_neq(data_table_feature_name(s, 28, name, sizeof name), HR_OK);
    /* the inverse: values back from x */
    double pv[4];
    data_table_problem_features(s, ds->table->pv + 4, x);
    data_table_problem_values(s, x, pv);
    for (int j = 0; j < 4; j++) cr_assert_eq(pv[j], ds->table->pv[4 + j], "column %d", j);
    data_select_free(ds);
}

Test(data_table, guards_give_zero)
{
    const char *schema = "{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"tiles\":{\"t\":\"M\"},\"cus\":8}";
    data_select *ds = parse_ok("M,t,us\n0,16,1\n5,0,1\n", schema, &strict_opts);
    float f[7];
    cr_assert_eq(ds->table->kv[0], 0.0); /* "t=0" sorts before "t=16" */
    for (int i = 0; i < 2; i++) {
        /* M=0 with t=16, M=5 with t=0 */
        data_table_pair_features(&ds->table->spec, ds->table->pv + i, ds->table->kv + (1 - i), f);
        for (int j = 2; j < 7; j++) cr_assert(f[j] == 0 && isfinite(f[j]), "problem %d feature %d: %g", i, j, f[j]);
    }
    data_select_free(ds);
}

Test(data_table, problem_and_configuration_names_round_trip)
{
    data_select *ds = parse_ok(HEADER "1,2,3,bf16,16,16,32,1,5\n1.5,2,3,fp32,16,16,32,1,5\n", SCHEMA, &strict_opts);
    const data_table_spec *s = &ds->table->spec;
    double pv[4], kv[4];
    char buf[256];
    cr_assert_eq(data_table_problem_parse(s, "dtype=fp32,K=4096,N=11008,M=0.25", pv), HR_OK, "%s", hr_last_error());
    cr_assert_eq(data_table_problem_format(s, pv, buf, sizeof buf), HR_OK);
    cr_assert_str_eq(buf, "M=0.25,N=11008,K=4096,dtype=fp32");
    cr_assert_eq(data_table_problem_format(s, ds->table->pv + 4, buf, sizeof buf), HR_OK);
    cr_assert_str_eq(buf, ds->keys[1]);
    cr_assert_eq(data_table_config_parse(s, ds->kernels[0], kv), HR_OK);
    cr_assert_eq(data_table_config_format(s, kv, buf, sizeof buf), HR_OK);
    cr_assert_str_eq(buf, ds->kernels[0]);
    cr_assert_neq(data_table_problem_parse(s, "M=1,N=2,K=3", pv), HR_OK);
    cr_assert(strstr(hr_last_error(), "'dtype' is missing"), "%s", hr_last_error());
    cr_assert_neq(data_table_problem_parse(s, "M=1,N=2,K=3,dtype=int4", pv), HR_OK);
    cr_assert(strstr(hr_last_error(), "'int4'"), "%s", hr_last_error());
    cr_assert_neq(data_table_problem_parse(s, "M=1,N=2,K=3,dtype=bf16,Q=1", pv), HR_OK);
    cr_assert(strstr(hr_last_error(), "unknown column 'Q'"), "%s", hr_last_error());
    cr_assert_neq(data_table_problem_parse(s, "M=x,N=2,K=3,dtype=bf16", pv), HR_OK);
    cr_assert_neq(data_table_problem_parse(s, "M=1,M=1,N=2,K=3,dtype=bf16", pv), HR_OK);
    data_select_free(ds);
}

Test(data_table, groups_keep_a_shape_together_across_hardware)
{
    const char *schema = "{\"problem\":[\"M\",\"N\"],\"hardware\":[\"gpu\"],\"categorical\":[\"gpu\"],\"kernel\":[\"t\"],"
                         "\"measure\":\"us\"}";
    data_select *ds = parse_ok("M,N,gpu,t,us\n1,2,a,16,1\n1,2,b,16,1\n3,2,a,16,1\n1,2,a,32,1\n3,2,b,16,1\n5,5,a,16,1\n",
                               schema, &strict_opts);
    cr_assert_eq(ds->n, 5);
    int g[5], ng;
    cr_assert_eq(data_table_groups(ds->table, g, &ng), HR_OK);
    cr_assert_eq(ng, 3);
    cr_assert_eq(g[0], 0);
    cr_assert_eq(g[1], 0);
    cr_assert_eq(g[2], 1);
    cr_assert_eq(g[3], 1);
    cr_assert_eq(g[4], 2);
    for (int fold = 0; fold < 3; fold++) {
        data_split sp;
        cr_assert_eq(data_split_group_kfold(g, ds->n, ng, 3, 7, fold, &sp), HR_OK);
        for (int i = 0; i < sp.n_test; i++)
            for (int j = 0; j < sp.n_train; j++) cr_assert_neq(g[sp.test[i]], g[sp.train[j]]);
        data_split_free(&sp);
    }
    data_select_free(ds);
}

/* The same table written plain, gzip and bzip2 beside one schema loads to the same dataset. */
Test(data_table, gz_bz2_and_tsv_inputs)
{
    const char *text = HEADER "100,64,32,bf16,64,32,32,1,10\n100,64,32,bf16,32,32,32,2,12\n8,64,32,fp16,64,32,32,1,3\n";
    size_t len = strlen(text);
    char *dir = test_tmppath("");
    char path[1024];
    cr_assert_eq(hr_mkdir_p(dir), HR_OK);
    snprintf(path, sizeof path, "%s/g.schema.json", dir);
    cr_assert_eq(hr_file_write_atomic(path, SCHEMA, strlen(SCHEMA)), HR_OK);
    /* gzip */
    unsigned char gz[1024];
    z_stream z;
    memset(&z, 0, sizeof z);
    cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)text, z.avail_in = (uInt)len, z.next_out = gz, z.avail_out = sizeof gz;
    cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t gzlen = sizeof gz - z.avail_out;
    deflateEnd(&z);
    snprintf(path, sizeof path, "%s/g.csv.gz", dir);
    cr_assert_eq(hr_file_write_atomic(path, gz, gzlen), HR_OK);
    data_select *a = NULL, *b = NULL, *c = NULL;
    data_table_opts o = {0};
    cr_assert_eq(data_table_load(path, &o, &a), HR_OK, "%s", hr_last_error());
    /* a truncated gzip is an error */
    cr_assert_eq(hr_file_write_atomic(path, gz, gzlen / 2), HR_OK);
    cr_assert_neq(data_table_load(path, &o, &c), HR_OK);
    /* bzip2 */
    char bz[1024];
    unsigned int bzlen = sizeof bz;
    cr_assert_eq(BZ2_bzBuffToBuffCompress(bz, &bzlen, (char *)text, (unsigned)len, 9, 0, 0), BZ_OK);
    snprintf(path, sizeof path, "%s/g.csv.bz2", dir);
    cr_assert_eq(hr_file_write_atomic(path, bz, bzlen), HR_OK);
    data_load_opts lo = {.strict = 1, .threads = 1};
    data_tune *tune = NULL;
    cr_assert_eq(data_load(path, NULL, &lo, &b, &tune), HR_OK, "%s", hr_last_error());
    cr_assert_eq(a->n, b->n);
    cr_assert_eq(a->n_kernels, b->n_kernels);
    cr_assert_eq(memcmp(a->runtime, b->runtime, (size_t)a->n * a->n_kernels * sizeof *a->runtime), 0);
    data_select_free(b);
    /* a TSV, schema given inline */
    char tsv[512];
    size_t n = 0;
    for (const char *p = text; *p; p++) tsv[n++] = *p == ',' ? '\t' : *p;
    tsv[n] = '\0';
    snprintf(path, sizeof path, "%s/other.tsv", dir);
    cr_assert_eq(hr_file_write_atomic(path, tsv, n), HR_OK);
    cr_assert_neq(data_table_load(path, &o, &b), HR_OK); /* no schema beside it */
    cr_assert(strstr(hr_last_error(), "other.schema.json"), "%s", hr_last_error());
    lo.schema = SCHEMA;
    cr_assert_eq(data_load(path, NULL, &lo, &b, &tune), HR_OK, "%s", hr_last_error());
    cr_assert_eq(memcmp(a->runtime, b->runtime, (size_t)a->n * a->n_kernels * sizeof *a->runtime), 0);
    cr_assert_eq(data_source_kind_of("x.tsv.gz"), DATA_SOURCE_TABLE);
    cr_assert_eq(data_source_kind_of("x.csv.bz2"), DATA_SOURCE_TABLE);
    cr_assert_eq(data_source_kind_of("x.fdb.txt"), DATA_SOURCE_FDB);
    data_select_free(a);
    data_select_free(b);
    static const char *const made[] = {"g.schema.json", "g.csv.gz", "g.csv.bz2", "other.tsv"};
    for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[i]);
        remove(path);
    }
    rmdir(dir);
    free(dir);
}

Test(data_table, cache_round_trip)
{
    const char *schema = "{\"problem\":[\"M\"],\"hardware\":[\"gpu\"],\"categorical\":[\"gpu\"],\"kernel\":[\"t\"],"
                         "\"measure\":\"us\",\"vendor\":\"h\",\"tiles\":{\"t\":\"M\"}}";
    data_select *ds = parse_ok("M,gpu,t,us,h\n100,a,16,4,1\n100,a,32,8,0\n7,b,16,4,\n7,b,16,6,\n", schema, &strict_opts);
    char *path = test_tmppath(".h5");
    cr_assert_eq(data_cache_write_select(path, ds), HR_OK, "%s", hr_last_error());
    data_select *back = NULL;
    data_tune *tune = NULL;
    cr_assert_eq(data_cache_read(path, &back, &tune), HR_OK, "%s", hr_last_error());
    cr_assert_not_null(back->table);
    cr_assert_eq(back->n, ds->n);
    cr_assert_eq(back->n_kernels, ds->n_kernels);
    cr_assert_eq(back->table->duplicates, 1);
    cr_assert_eq(memcmp(back->table->pv, ds->table->pv, 2 * 2 * sizeof(double)), 0);
    cr_assert_eq(memcmp(back->table->kv, ds->table->kv, 2 * sizeof(double)), 0);
    cr_assert_eq(memcmp(back->runtime, ds->runtime, 4 * sizeof(float)), 0);
    cr_assert_eq(memcmp(back->vendor_rank, ds->vendor_rank, 4 * sizeof(int16_t)), 0);
    cr_assert_str_eq(back->table->spec.problem[1].vocab[1], "b");
    cr_assert_eq(back->table->spec.tile_of[0], 0);
    int g1[2], g2[2], n1, n2;
    data_table_groups(ds->table, g1, &n1);
    data_table_groups(back->table, g2, &n2);
    cr_assert_eq(n1, n2);
    data_select_free(back);
    data_select_free(ds);
    remove(path);
    free(path);
}

/* ---- a group column ---- */

#define GSCHEMA                                                                                                  \
    "{\"problem\":[\"M\",\"N\"],\"hardware\":[\"gpu\"],\"categorical\":[\"gpu\"],\"kernel\":[\"t\"],"              \
    "\"measure\":\"us\",\"group\":\"family\"}"

/* Each problem's group is its group column's value; ids follow first appearance; the problem columns' grouping
 * stays at hand for in-source splits. */
Test(data_table, a_group_column_names_each_problems_group)
{
    data_select *ds = parse_ok("M,N,gpu,t,us,family\n1,2,a,16,1,llm\n1,2,b,16,1,llm\n3,2,a,16,1,conv\n1,2,a,32,1,llm\n"
                               "3,2,b,16,1,conv\n5,5,a,16,1,llm\n9,9,a,16,2,vit\n",
                               GSCHEMA, &strict_opts);
    const data_table *t = ds->table;
    cr_assert_eq(ds->n, 6);
    cr_assert_str_eq(t->spec.group, "family");
    cr_assert_eq(t->n_group_names, 3);
    cr_assert_str_eq(t->group_names[0], "llm");
    cr_assert_str_eq(t->group_names[1], "conv");
    cr_assert_str_eq(t->group_names[2], "vit");
    int g[6], ng, want[6] = {0, 0, 1, 1, 0, 2};
    cr_assert_eq(data_table_groups(t, g, &ng), HR_OK);
    cr_assert_eq(ng, 3);
    cr_assert_arr_eq(g, want, sizeof want);
    /* by the problem columns: (1,2) on two GPUs is one group, (3,2) another, (5,5) and (9,9) their own */
    int p[6], np_, wantp[6] = {0, 0, 1, 1, 2, 3};
    cr_assert_eq(data_table_problem_groups(t, p, &np_), HR_OK);
    cr_assert_eq(np_, 4);
    cr_assert_arr_eq(p, wantp, sizeof wantp);
    /* the schema keeps its group role through JSON */
    char *json = data_table_spec_to_json(&t->spec);
    cr_assert(strstr(json, "\"group\":\"family\""), "%s", json);
    data_table_spec back;
    cr_assert_eq(data_table_spec_from_json(json, "back", &back), HR_OK, "%s", hr_last_error());
    cr_assert_str_eq(back.group, "family");
    data_table_spec_free(&back);
    free(json);
    data_select_free(ds);
}

Test(data_table, a_group_column_is_checked)
{
    const char *header = "M,N,gpu,t,us,family\n";
    char text[512];
    /* one problem, two groups: an error naming both lines, whatever the strictness */
    snprintf(text, sizeof text, "%s1,2,a,16,1,llm\n1,2,a,32,1,conv\n", header);
    parse_fails(text, GSCHEMA, "t.csv:3: problem 'M=1,N=2,gpu=a' is in group 'conv'", "'llm' at line 2");
    data_select *ds = NULL;
    cr_assert_neq(data_table_parse("t.csv", text, strlen(text), ',', GSCHEMA, &lax_opts, &ds), HR_OK);
    /* the column missing from the header */
    parse_fails("M,N,gpu,t,us\n1,2,a,16,1\n", GSCHEMA, "column 'family'", "missing from the header");
    /* an empty group cell: a bad row, skipped unless strict */
    snprintf(text, sizeof text, "%s1,2,a,16,1,\n3,2,a,16,1,llm\n", header);
    parse_fails(text, GSCHEMA, "t.csv:2: column 'family': empty cell", NULL);
    ds = parse_ok(text, GSCHEMA, &lax_opts);
    cr_assert_eq(ds->n, 1);
    cr_assert_eq(ds->table->n_group_names, 1);
    data_select_free(ds);
    /* the schema: a group column with another role, or not a name */
    data_table_spec s;
    cr_assert_neq(data_table_spec_from_json("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"group\":\"M\"}",
                                            "s", &s), HR_OK);
    cr_assert(strstr(hr_last_error(), "'M' is named twice"), "%s", hr_last_error());
    cr_assert_neq(data_table_spec_from_json("{\"problem\":[\"M\"],\"kernel\":[\"t\"],\"measure\":\"us\",\"group\":3}", "s",
                                            &s), HR_OK);
    cr_assert(strstr(hr_last_error(), "\"group\" must be a column name"), "%s", hr_last_error());
}

Test(data_table, a_group_column_survives_the_cache)
{
    data_select *ds = parse_ok("M,N,gpu,t,us,family\n1,2,a,16,1,llm\n3,2,a,16,1,conv\n5,5,a,16,1,llm\n", GSCHEMA,
                               &strict_opts);
    char *path = test_tmppath(".h5");
    cr_assert_eq(data_cache_write_select(path, ds), HR_OK, "%s", hr_last_error());
    data_select *back = NULL;
    data_tune *tune = NULL;
    cr_assert_eq(data_cache_read(path, &back, &tune), HR_OK, "%s", hr_last_error());
    cr_assert_str_eq(back->table->spec.group, "family");
    cr_assert_eq(back->table->n_group_names, 2);
    cr_assert_str_eq(back->table->group_names[1], "conv");
    cr_assert_arr_eq(back->table->group, ds->table->group, 3 * sizeof(int));
    data_select_free(back);
    data_select_free(ds);
    remove(path);
    free(path);
}

/* Two schemas that differ only in their group column are the same schema to a model. */
Test(data_table, schemas_alike_but_for_the_group_are_the_same)
{
    data_table_spec a, b, c;
    cr_assert_eq(data_table_spec_from_json(GSCHEMA, "a", &a), HR_OK);
    cr_assert_eq(data_table_spec_from_json("{\"problem\":[\"M\",\"N\"],\"hardware\":[\"gpu\"],\"categorical\":[\"gpu\"],"
                                           "\"kernel\":[\"t\"],\"measure\":\"us\"}", "b", &b), HR_OK);
    cr_assert_eq(data_table_spec_from_json("{\"problem\":[\"M\",\"N\"],\"hardware\":[\"gpu\"],\"categorical\":[\"gpu\"],"
                                           "\"kernel\":[\"t\"],\"measure\":\"ms\"}", "c", &c), HR_OK);
    cr_assert(data_table_spec_same(&a, &b));
    cr_assert_not(data_table_spec_same(&a, &c));
    cr_assert_str_eq(a.group, "family", "the comparison leaves the schema as it was");
    data_table_spec_free(&a);
    data_table_spec_free(&b);
    data_table_spec_free(&c);
}
