/* Hostile benchmark tables (data/table.c): inputs that crashed, hung or were read wrong, each refused with a
 * message naming the file, line and column, or handled. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "data/data.h"
#include "data/table.h"
#include "helpers/testutil.h"

#define SCHEMA "{\"problem\":[\"M\",\"N\"],\"kernel\":[\"tm\"],\"measure\":\"us\"}"

static data_load_opts strict_opts = {.strict = 1, .threads = 1};

/* The header's duplicate check and role lookups are linear in its width: 300,000 columns read in well under
 * the timeout (a pairwise check takes minutes). */
Test(hostile_tables, wide_header_is_read_in_linear_time, .timeout = 20)
{
    int ncol = 300000;
    size_t cap = (size_t)ncol * 12 + 64, at = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    at += (size_t)snprintf(text + at, cap - at, "M,N,tm,us");
    for (int i = 0; i < ncol; i++) at += (size_t)snprintf(text + at, cap - at, ",c%d", i);
    at += (size_t)snprintf(text + at, cap - at, "\n1,2,3,4");
    for (int i = 0; i < ncol; i++) at += (size_t)snprintf(text + at, cap - at, ",0");
    text[at++] = '\n';
    data_select *ds = NULL;
    int rc = data_table_parse("wide.csv", text, at, ',', SCHEMA, &strict_opts, &ds);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 1);
    cr_assert_eq(ds->n_kernels, 1);
    data_select_free(ds);
    free(text);
}

Test(hostile_tables, wide_header_with_a_repeated_name_names_it)
{
    const char *text = "M,N,c1,tm,c2,us,c1\n1,2,0,3,0,4,0\n";
    data_select *ds = NULL;
    int rc = data_table_parse("dup.csv", text, strlen(text), ',', SCHEMA, &strict_opts, &ds);
    cr_assert_eq(rc, HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "dup.csv:1: column 'c1' appears twice"), "%s", hr_last_error());
}

static void parse_fails(const char *name, const char *text, const char *schema, const char *n1, const char *n2)
{
    data_select *ds = NULL;
    int rc = data_table_parse(name, text, strlen(text), ',', schema, &strict_opts, &ds);
    cr_assert_neq(rc, HR_OK, "accepted: %s", text);
    cr_assert_null(ds);
    const char *e = hr_last_error();
    cr_assert(strstr(e, n1), "'%s' lacks '%s'", e, n1);
    if (n2) cr_assert(strstr(e, n2), "'%s' lacks '%s'", e, n2);
}

/* A UTF-8 byte-order mark before the header is skipped, not read into the first column's name. */
Test(hostile_tables, utf8_bom_before_the_header_is_skipped)
{
    const char *text = "\xEF\xBB\xBFM,N,tm,us\n1,2,32,5\n1,2,64,4\n";
    data_select *ds = NULL;
    int rc = data_table_parse("bom.csv", text, strlen(text), ',', SCHEMA, &strict_opts, &ds);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 1);
    cr_assert_str_eq(ds->keys[0], "M=1,N=2");
    data_select_free(ds);
}

/* CR-only line ends (classic Mac) are line ends: rows parse, and an error names the line it is on. */
Test(hostile_tables, cr_only_line_ends_count_lines)
{
    const char *text = "M,N,tm,us\r1,2,32,5\r1,2,64,4\r";
    data_select *ds = NULL;
    int rc = data_table_parse("mac.csv", text, strlen(text), ',', SCHEMA, &strict_opts, &ds);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n_kernels, 2);
    cr_assert_eq(ds->lines, 3);
    data_select_free(ds);
    parse_fails("mac.csv", "M,N,tm,us\r1,2,32,5\r1,2,64,x\r", SCHEMA, "mac.csv:3:", "'x'");
    parse_fails("mixed.csv", "M,N,tm,us\r\n1,2,32,5\r\n1,2,64,4\r1,2,16,y\n", SCHEMA, "mixed.csv:4:", "'y'");
}

/* 64 kernel columns plus the derived vendor_rank are 65: refused by the schema, not written past kv[64]. */
Test(hostile_tables, kernel_columns_and_vendor_feature_are_bounded)
{
    char schema[4096];
    size_t at = (size_t)snprintf(schema, sizeof schema, "{\"problem\":[\"M\"],\"kernel\":[");
    for (int k = 0; k < DATA_TABLE_MAX_COLUMNS; k++)
        at += (size_t)snprintf(schema + at, sizeof schema - at, "%s\"k%d\"", k ? "," : "", k);
    snprintf(schema + at, sizeof schema - at, "],\"measure\":\"t\",\"vendor\":\"v\",\"vendor_feature\":true}");
    data_table_spec s;
    cr_assert_eq(data_table_spec_from_json(schema, "wide.schema.json", &s), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "wide.schema.json: schema: \"kernel\" names 64 columns"), "%s", hr_last_error());
    /* 63 + the rank is the largest allowed */
    char *cut = strstr(schema, ",\"k63\"");
    memmove(cut, cut + 6, strlen(cut + 6) + 1);
    cr_assert_eq(data_table_spec_from_json(schema, "ok.schema.json", &s), HR_OK, "%s", hr_last_error());
    cr_assert_eq(s.n_kernel, DATA_TABLE_MAX_COLUMNS);
    data_table_spec_free(&s);
}

/* Measures whose cost leaves float range (1e-50, 1e39; 1 / 1e-320 when higher is better) are skipped, or an error
 * under strict, as find-db times are; they never become a cost of 0 or "not measured". */
Test(hostile_tables, measures_outside_float_range_are_skipped_or_refused)
{
    const char *text = "M,N,tm,us\n1,2,32,5\n1,2,64,1e-50\n1,2,16,1e39\n3,4,32,1e-320\n3,4,64,1e308\n";
    data_load_opts lax = {.threads = 1};
    data_select *ds = NULL;
    int rc = data_table_parse("tiny.csv", text, strlen(text), ',', SCHEMA, &lax, &ds);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 1, "the problem measured only out of range is gone");
    cr_assert_eq(ds->n_kernels, 1);
    cr_assert_float_eq(ds->runtime[0], 5.0f, 1e-6);
    cr_assert_eq(ds->skips.total, 4);
    cr_assert_str_eq(ds->skips.reason[0], "measure out of float range");
    data_select_free(ds);
    parse_fails("tiny.csv", text, SCHEMA, "tiny.csv:3:", "outside float range");
    const char *higher = "{\"problem\":[\"M\",\"N\"],\"kernel\":[\"tm\"],\"measure\":\"us\",\"better\":\"higher\"}";
    parse_fails("fast.csv", "M,N,tm,us\n1,2,32,5\n1,2,64,1e-320\n", higher, "fast.csv:3:", "outside float range");
    parse_fails("fast.csv", "M,N,tm,us\n1,2,32,5\n1,2,64,1e39\n", higher, "fast.csv:3:", "outside float range");
}

/* A folder given where a table, its schema or a model file goes is named as a folder. */
Test(hostile_tables, folder_given_as_a_file_is_named)
{
    char *dir = test_tmppath(".csv");
    cr_assert_eq(mkdir(dir, 0755), 0);
    data_table_opts o = {0};
    o.schema_json = SCHEMA;
    data_select *ds = NULL;
    cr_assert_neq(data_table_load(dir, &o, &ds), HR_OK);
    cr_assert(strstr(hr_last_error(), dir) && strstr(hr_last_error(), "is a folder, not a file"), "%s", hr_last_error());
    char *buf;
    size_t len;
    cr_assert_eq(hr_file_read_all(dir, &buf, &len), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "is a folder"), "%s", hr_last_error());
    rmdir(dir);
    free(dir);
}

/* A problem or configuration value past float range became an infinite feature: skipped, or an error under strict. */
Test(hostile_tables, values_outside_float_range_are_skipped_or_refused)
{
    const char *text = "M,N,tm,us\n1,2,32,5\n1e39,2,32,4\n1,2,-1e300,3\n";
    data_load_opts lax = {.threads = 1};
    data_select *ds = NULL;
    cr_assert_eq(data_table_parse("big.csv", text, strlen(text), ',', SCHEMA, &lax, &ds), HR_OK, "%s", hr_last_error());
    cr_assert_eq(ds->n, 1);
    cr_assert_eq(ds->n_kernels, 1);
    cr_assert_eq(ds->skips.total, 2);
    data_select_free(ds);
    parse_fails("big.csv", text, SCHEMA, "big.csv:3: column 'M': '1e39' is outside float range", NULL);
}
