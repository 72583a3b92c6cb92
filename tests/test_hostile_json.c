/* Hostile JSON (core/json.c and its readers): a key given twice, text after the value and NUL characters are
 * refused by the one strict reader that --config, table schemas, capability files and the JSON inside model
 * and cache files go through; each refusal names the document. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/json.h"
#include "data/data.h"
#include "data/table.h"
#include "helpers/gemm_caps_fixture.h"
#include "helpers/testutil.h"

static void json_fails(const char *text, size_t len, const char *needle)
{
    cJSON *j = (cJSON *)1;
    int rc = hr_json_parse(text, len, "doc.json", &j);
    cr_assert_eq(rc, HR_EFORMAT, "accepted: %s", text);
    cr_assert_null(j);
    cr_assert(strstr(hr_last_error(), "doc.json") && strstr(hr_last_error(), needle), "'%s' lacks '%s'", hr_last_error(),
              needle);
}

Test(hostile_json, repeated_keys_are_refused_at_any_depth)
{
    json_fails("{\"rounds\":3,\"rounds\":7}", 23, "key \"rounds\" is given twice");
    const char *tiles = "{\"tiles\":{\"tile_m\":\"M\",\"tile_m\":\"N\"}}";
    json_fails(tiles, strlen(tiles), "key \"tile_m\" is given twice in \"tiles\"");
    const char *inarr = "{\"types\":[{\"a\":1},{\"b\":1,\"c\":2,\"b\":3}]}";
    json_fails(inarr, strlen(inarr), "key \"b\" is given twice");
    /* a wide object is checked without comparing every pair */
    size_t cap = 20000 * 16, at = 0;
    char *wide = malloc(cap);
    at += (size_t)snprintf(wide, cap, "{");
    for (int i = 0; i < 20000; i++) at += (size_t)snprintf(wide + at, cap - at, "%s\"k%d\":%d", i ? "," : "", i, i);
    at += (size_t)snprintf(wide + at, cap - at, ",\"k17\":0}");
    json_fails(wide, at, "key \"k17\" is given twice");
    free(wide);
}

Test(hostile_json, text_after_the_value_is_refused)
{
    json_fails("{\"a\":1} trailing text", 21, "doc.json:1: text after the JSON value");
    json_fails("{\"a\":1}\n{\"b\":2}", 15, "doc.json:2: text after the JSON value");
    cJSON *j;
    cr_assert_eq(hr_json_parse("{\"a\":1}\n  \r\n", 12, "doc.json", &j), HR_OK, "%s", hr_last_error());
    cJSON_Delete(j);
}

Test(hostile_json, nul_characters_are_refused)
{
    json_fails("{\"M\\u0000junk\":1}", 17, "NUL character");
    json_fails("{\"a\":\"x\\u0000\"}", 15, "NUL character");
    json_fails("{\"a\":1}\0{}", 10, "NUL character");
    /* an escaped backslash before u0000 is text, not a NUL */
    cJSON *j;
    const char *ok = "{\"a\":\"\\\\u0000\"}";
    cr_assert_eq(hr_json_parse_str(ok, "doc.json", &j), HR_OK, "%s", hr_last_error());
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "a")->valuestring, "\\u0000");
    cJSON_Delete(j);
}

Test(hostile_json, bom_is_skipped_and_syntax_errors_name_the_line)
{
    cJSON *j;
    cr_assert_eq(hr_json_parse_str("\xEF\xBB\xBF{\"a\":1}", "doc.json", &j), HR_OK, "%s", hr_last_error());
    cJSON_Delete(j);
    json_fails("{\"a\":1,\n\"b\":}", 13, "doc.json:2: not valid JSON");
    cr_assert_eq(hr_json_parse(NULL, 0, "doc.json", &j), HR_EINVAL);
}

#define SCHEMA_HEAD "{\"problem\":[\"M\",\"N\"],\"kernel\":[\"tm\",\"tn\"],\"measure\":\"us\""
#define TABLE "M,N,tm,tn,us,vr\n1,2,32,32,5,0\n1,2,64,32,4,1\n"

static void schema_fails(const char *schema, const char *needle)
{
    data_load_opts o = {.strict = 1, .threads = 1};
    data_select *ds = NULL;
    cr_assert_neq(data_table_parse("t.csv", TABLE, strlen(TABLE), ',', schema, &o, &ds), HR_OK, "accepted %s", schema);
    cr_assert(strstr(hr_last_error(), "t.csv: schema") && strstr(hr_last_error(), needle), "'%s' lacks '%s'",
              hr_last_error(), needle);
}

/* The schema reader: a repeated role key (which one wins?), a repeated tile, trailing text, a NUL in a name. */
Test(hostile_json, schemas_are_strict)
{
    schema_fails(SCHEMA_HEAD ",\"measure\":\"vr\"}", "key \"measure\" is given twice");
    schema_fails(SCHEMA_HEAD ",\"tiles\":{\"tm\":\"M\",\"tm\":\"N\"}}", "key \"tm\" is given twice in \"tiles\"");
    schema_fails(SCHEMA_HEAD "} trailing text", "text after the JSON value");
    schema_fails("{\"problem\":[\"M\\u0000junk\",\"N\"],\"kernel\":[\"tm\",\"tn\"],\"measure\":\"us\"}", "NUL character");
    /* and the spec kept inside a model or a cache goes through the same reader */
    data_table_spec s;
    cr_assert_neq(data_table_spec_from_json(SCHEMA_HEAD ",\"better\":\"lower\",\"better\":\"higher\"}", "m.h5", &s), HR_OK);
    cr_assert(strstr(hr_last_error(), "m.h5: schema: key \"better\" is given twice"), "%s", hr_last_error());
}

/* The capability reader: the same rules, naming the file. */
Test(hostile_json, capability_files_are_strict)
{
    char *csv = gemm_caps_fixture_write(8, 1);
    data_table_opts o = {0};
    data_select *ds = NULL;
    cr_assert_eq(data_table_load(csv, &o, &ds), HR_OK, "%s", hr_last_error());
    size_t n = strlen(gemm_caps_fixture_caps);
    char *bad = malloc(n + 64);
    /* "version" given twice */
    memcpy(bad, gemm_caps_fixture_caps, n + 1);
    char *v = strstr(bad, "\"version\": 1,");
    cr_assert_not_null(v);
    memmove(v + 14, v, strlen(v) + 1);
    memcpy(v, "\"version\": 2, ", 14);
    data_table_rules *r = NULL;
    cr_assert_neq(data_table_rules_parse(bad, "gemm.caps.json", &ds->table->spec, ds, &r), HR_OK);
    cr_assert_null(r);
    cr_assert(strstr(hr_last_error(), "gemm.caps.json: key \"version\" is given twice"), "%s", hr_last_error());
    snprintf(bad, n + 64, "%s,", gemm_caps_fixture_caps);
    cr_assert_neq(data_table_rules_parse(bad, "gemm.caps.json", &ds->table->spec, ds, &r), HR_OK);
    cr_assert(strstr(hr_last_error(), "gemm.caps.json:") && strstr(hr_last_error(), "text after the JSON value"), "%s",
              hr_last_error());
    free(bad);
    data_select_free(ds);
    free(csv);
}

/* --config: the same reader, inline and from a file; a repeated key is an error, not "the last wins". */
Test(hostile_json, config_is_strict_inline_and_from_a_file)
{
    char *out;
    const char *fdb = test_miopen("gfx906_60.HIP.fdb.txt.bz2");
    char args[2048];
    snprintf(args, sizeof args, "train --data %s --model gbdt --config '{\"rounds\":3,\"rounds\":7}' --out /nonexistent/m.h5", fdb);
    cr_assert_gt(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, "--config: key \"rounds\" is given twice"), "%s", out);
    free(out);
    char *cfg = test_tmpfile("cfg.json", "{\"rounds\":3}\n{\"rounds\":7}\n", 26);
    snprintf(args, sizeof args, "train --data %s --model gbdt --config %s --out /nonexistent/m.h5", fdb, cfg);
    cr_assert_gt(test_cli_run(args, &out), 0);
    cr_assert(strstr(out, cfg) && strstr(out, ":2: text after the JSON value"), "%s", out);
    free(out);
    free(cfg);
}
