/* core/config: the table-driven config reader: defaults, each type's checks, enum names and values,
 * unknown keys, and the one-line messages. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/core.h"

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
