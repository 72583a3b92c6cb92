/* core/config: the table-driven config reader: defaults, each type's checks, enum names and values,
 * unknown keys, and the one-line messages; the options of model files written and read by set; the printed
 * numbers. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/core.h"
#include "core/h5.h"

typedef struct opts {
    int n;
    float f;
    double d;
    int b;
    int e;
} opts;

static const char *const e_names[] = {"red", "green", "verde", NULL};
static const int e_values[] = {10, 20, 20};

static const hr_config_option rows[] = {
    {.name = "n", .type = HR_CONFIG_INT, .offset = offsetof(opts, n), .def = 5, .min = -1, .max = 100, .doc = "n"},
    {.name = "f", .type = HR_CONFIG_FLOAT, .offset = offsetof(opts, f), .def = 0.5, .min = 0, .max = 1, .doc = "f"},
    {.name = "d", .type = HR_CONFIG_DOUBLE, .offset = offsetof(opts, d), .def = 1e-3, .min = 0, .max = 1e12,
     .doc = "d"},
    {.name = "b", .type = HR_CONFIG_BOOL, .offset = offsetof(opts, b), .def = 1, .doc = "b"},
    {.name = "e", .type = HR_CONFIG_ENUM, .offset = offsetof(opts, e), .def_name = "green", .names = e_names,
     .values = e_values, .doc = "colour"},
};
static const hr_config_table table = {"test", rows, sizeof rows / sizeof *rows};

static int read_text(const char *text, opts *o)
{
    cJSON *c = cJSON_Parse(text);
    cr_assert(c, "bad test JSON %s", text);
    memset(o, 0x55, sizeof *o);
    int rc = hr_config_read(&table, c, o);
    cJSON_Delete(c);
    return rc;
}

Test(core_config, defaults_then_given_values)
{
    opts o;
    memset(&o, 0, sizeof o);
    cr_assert_eq(hr_config_read(&table, NULL, &o), HR_OK);
    cr_assert(o.n == 5 && o.f == 0.5f && o.d == 1e-3 && o.b == 1 && o.e == 20);
    cr_assert_eq(read_text("{}", &o), HR_OK);
    cr_assert(o.n == 5 && o.e == 20);
    cr_assert_eq(read_text("{\"n\": -1, \"f\": 1, \"d\": 1e12, \"b\": false, \"e\": \"red\"}", &o), HR_OK);
    cr_assert(o.n == -1 && o.f == 1.0f && o.d == 1e12 && o.b == 0 && o.e == 10);
    cr_assert_eq(read_text("{\"n\": 100.0, \"e\": \"verde\"}", &o), HR_OK); /* integral doubles and aliases */
    cr_assert(o.n == 100 && o.e == 20 && o.f == 0.5f);
}

Test(core_config, wrong_types_and_ranges_are_refused_naming_key_value_and_range)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"{\"n\": \"x\"}", "test config: \"n\" must be an integer in [-1, 100], got \"x\""},
        {"{\"n\": true}", "test config: \"n\" must be an integer in [-1, 100], got true"},
        {"{\"n\": 2.5}", "test config: \"n\" must be an integer in [-1, 100], got 2.5"},
        {"{\"n\": 101}", "test config: \"n\" must be an integer in [-1, 100], got 101"},
        {"{\"n\": -2}", "test config: \"n\" must be an integer in [-1, 100], got -2"},
        {"{\"n\": 1e300}", "test config: \"n\" must be an integer in [-1, 100], got 1e+300"},
        {"{\"n\": [1]}", "test config: \"n\" must be an integer in [-1, 100], got [1]"},
        {"{\"f\": 1.5}", "test config: \"f\" must be a number in [0, 1], got 1.5"},
        {"{\"f\": false}", "test config: \"f\" must be a number in [0, 1], got false"},
        {"{\"d\": -1e-9}", "test config: \"d\" must be a number in [0, 1000000000000], got -1e-09"},
        {"{\"b\": 1}", "test config: \"b\" must be true or false, got 1"},
        {"{\"e\": \"blue\"}", "test config: \"e\" must be one of red, green or verde, got \"blue\""},
        {"{\"e\": 0}", "test config: \"e\" must be one of red, green or verde, got 0"},
        {"{\"x\": 0}", "test config: unknown option \"x\" (known: n, f, d, b, e)"},
        {"\"n\"", "test config: must be a JSON object, got \"n\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        opts o;
        cr_assert_eq(read_text(cases[i].text, &o), HR_EINVAL, "%s accepted", cases[i].text);
        cr_assert_str_eq(hr_last_error(), cases[i].message);
    }
}

Test(core_config, long_values_are_cut_in_messages)
{
    char text[400] = "{\"e\": \"";
    memset(text + strlen(text), 'z', 300);
    strcat(text, "\"}");
    opts o;
    cr_assert_eq(read_text(text, &o), HR_EINVAL);
    cr_assert_lt(strlen(hr_last_error()), 160, "%s", hr_last_error());
    cr_assert(strstr(hr_last_error(), "zzz...") != NULL, "%s", hr_last_error());
}

Test(core_config, has_and_print)
{
    cJSON *c = cJSON_Parse("{\"n\": 3}");
    cr_assert(hr_config_has(c, "n") && !hr_config_has(c, "f") && !hr_config_has(NULL, "n"));
    cJSON_Delete(c);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    hr_config_print(&table, out);
    fclose(out);
    cr_assert(strstr(buf, "  n ") && strstr(buf, "[-1, 100]") && strstr(buf, "red, green or verde"), "%s", buf);
    cr_assert(strstr(buf, " true ") && strstr(buf, "colour"), "%s", buf);
    int lines = 0;
    for (char *p = buf; *p; p++) lines += *p == '\n';
    cr_assert_eq(lines, 5);
    free(buf);
}

/* The options in effect as recorded in checkpoints: every option by name, defaults filled, one text per value
 * whatever its spelling (1e-3 and 0.001, an enum's aliases). */
Test(core_config, effective_options_are_canonical_name_value_lines)
{
    char *a = hr_config_effective(&table, NULL);
    cr_assert_str_eq(a, "n=5\nf=0.5\nd=0.001\nb=true\ne=green\n");
    cJSON *c = cJSON_Parse("{\"d\": 1e-3, \"e\": \"verde\", \"n\": 5.0}");
    char *b = hr_config_effective(&table, c);
    cr_assert_str_eq(a, b, "the same options spelt otherwise");
    cJSON_Delete(c);
    c = cJSON_Parse("{\"f\": 0.25, \"b\": false, \"e\": \"red\"}");
    char *d = hr_config_effective(&table, c);
    cr_assert_str_eq(d, "n=5\nf=0.25\nd=0.001\nb=false\ne=red\n");
    cJSON_Delete(c);
    free(a);
    free(b);
    free(d);
}

/* Defaults print in their shortest form that reads back to the same value at the field's precision. */
Test(core_config, numbers_print_in_their_shortest_exact_form)
{
    char buf[64];
    hr_config_number(HR_CONFIG_FLOAT, 3e-3f, buf, sizeof buf);
    cr_assert_str_eq(buf, "0.003");
    hr_config_number(HR_CONFIG_FLOAT, 1e-4f, buf, sizeof buf);
    cr_assert_str_eq(buf, "0.0001");
    hr_config_number(HR_CONFIG_DOUBLE, 0.1, buf, sizeof buf);
    cr_assert_str_eq(buf, "0.1");
    hr_config_number(HR_CONFIG_DOUBLE, 1e-6, buf, sizeof buf);
    cr_assert_str_eq(buf, "1e-06");
    hr_config_number(HR_CONFIG_INT, 1000000, buf, sizeof buf);
    cr_assert_str_eq(buf, "1000000");
    hr_config_number(HR_CONFIG_FLOAT, 0.1f, buf, sizeof buf);
    cr_assert_str_eq(buf, "0.1");
    cr_assert(strtof(buf, NULL) == 0.1f);
    /* a double that needs all its digits keeps them */
    hr_config_number(HR_CONFIG_DOUBLE, 0.1f, buf, sizeof buf);
    cr_assert(strtod(buf, NULL) == (double)0.1f, "%s", buf);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    hr_config_option lr = {.name = "lr", .type = HR_CONFIG_FLOAT, .def = 3e-3f, .min = 1e-9f, .max = 100, .doc = "lr"};
    hr_config_table t = {"test", &lr, 1};
    hr_config_print(&t, out);
    hr_config_markdown(&t, out);
    fclose(out);
    cr_assert(strstr(text, " 0.003 ") && strstr(text, "[1e-09, 100]") && strstr(text, "| `lr` | float | `0.003` |"),
              "%s", text);
    cr_assert_null(strstr(text, "0.00300000002607703"), "%s", text);
    free(text);
}

/* ---- model files ---- */

static const hr_config_option file_rows[] = {
    {.name = "n", .type = HR_CONFIG_INT, .offset = offsetof(opts, n), .def = 5, .min = -1, .max = 100, .file = 1},
    {.name = "f", .type = HR_CONFIG_FLOAT, .offset = offsetof(opts, f), .def = 0.5, .min = 0, .max = 1, .file = 1,
     .file_since = 3},
    {.name = "d", .type = HR_CONFIG_DOUBLE, .offset = offsetof(opts, d), .def = 1e-3, .min = 0, .max = 1e12,
     .file = 2, .file_optional = 1},
    {.name = "b", .type = HR_CONFIG_BOOL, .offset = offsetof(opts, b), .def = 1},
    {.name = "e", .type = HR_CONFIG_ENUM, .offset = offsetof(opts, e), .def_name = "green", .names = e_names,
     .values = e_values, .file = 1},
};
static const hr_config_table file_table = {"test", file_rows, sizeof file_rows / sizeof *file_rows};

static hid_t fresh_file(char *path, size_t cap)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, cap, "%s/hr_config_h5_%d.h5", dir && *dir ? dir : "/tmp", (int)getpid());
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    return f;
}

/* The rows of the sets asked for are written as attributes (an integer, a double, the enum's first name of its
 * value) and read back; the others are not written and read back as their defaults. */
Test(core_config, model_file_options_round_trip_by_set)
{
    char path[512];
    hid_t f = fresh_file(path, sizeof path);
    opts in = {42, 0.25f, 7.5, 0, 20}, out;
    cr_assert_eq(hr_config_write_h5(&file_table, &in, 1, f), HR_OK);
    cr_assert_eq(H5Aexists(f, "n"), 1);
    cr_assert_eq(H5Aexists(f, "d"), 0); /* set 2 */
    cr_assert_eq(H5Aexists(f, "b"), 0); /* no set */
    char *s = NULL;
    cr_assert_eq(hr_h5_attr_read_str(f, "e", &s), HR_OK);
    cr_assert_str_eq(s, "green"); /* the first name of value 20 */
    free(s);
    memset(&out, 0x55, sizeof out);
    cr_assert_eq(hr_config_read_h5(&file_table, f, 1 | 2, 3, &out), HR_OK, "%s", hr_last_error());
    cr_assert(out.n == 42 && out.f == 0.25f && out.e == 20, "%d %g %d", out.n, out.f, out.e);
    cr_assert(out.d == 1e-3 && out.b == 1, "d %g (optional, absent: default), b %d", out.d, out.b);
    H5Fclose(f);
    remove(path);
}

/* A file older than a row's file_since may lack it; a newer one may not (unless optional); values out of range
 * or names outside the enum are refused naming the family and the attribute. */
Test(core_config, model_file_options_missing_out_of_range_and_unknown_are_refused)
{
    char path[512];
    hid_t f = fresh_file(path, sizeof path);
    opts out;
    cr_assert_eq(hr_h5_attr_write_int(f, "n", 7), HR_OK);
    cr_assert_eq(hr_h5_attr_write_str(f, "e", "verde"), HR_OK);
    /* f (since 3) absent: fine at version 2, refused at 3 */
    cr_assert_eq(hr_config_read_h5(&file_table, f, 1, 2, &out), HR_OK, "%s", hr_last_error());
    cr_assert(out.n == 7 && out.f == 0.5f && out.e == 20);
    cr_assert_eq(hr_config_read_h5(&file_table, f, 1, 3, &out), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "test") && strstr(hr_last_error(), " f"), "%s", hr_last_error());
    cr_assert_eq(hr_h5_attr_write_double(f, "f", 2.0), HR_OK);
    cr_assert_eq(hr_config_read_h5(&file_table, f, 1, 3, &out), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "f = 2"), "%s", hr_last_error());
    H5Adelete(f, "f");
    cr_assert_eq(hr_h5_attr_write_double(f, "f", 0.75), HR_OK);
    H5Adelete(f, "n");
    cr_assert_eq(hr_h5_attr_write_int(f, "n", 101), HR_OK);
    cr_assert_eq(hr_config_read_h5(&file_table, f, 1, 3, &out), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "n = 101"), "%s", hr_last_error());
    H5Adelete(f, "n");
    cr_assert_eq(hr_h5_attr_write_int(f, "n", 100), HR_OK);
    H5Adelete(f, "e");
    cr_assert_eq(hr_h5_attr_write_str(f, "e", "blue"), HR_OK);
    cr_assert_eq(hr_config_read_h5(&file_table, f, 1, 3, &out), HR_EFORMAT);
    cr_assert(strstr(hr_last_error(), "'blue'") && strstr(hr_last_error(), "red, green or verde"), "%s",
              hr_last_error());
    H5Adelete(f, "e");
    cr_assert_eq(hr_h5_attr_write_str(f, "e", "red"), HR_OK);
    cr_assert_eq(hr_config_read_h5(&file_table, f, 1, 3, &out), HR_OK, "%s", hr_last_error());
    cr_assert(out.n == 100 && out.f == 0.75f && out.e == 10);
    H5Fclose(f);
    remove(path);
}
