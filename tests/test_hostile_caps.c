/* Hostile capability files (data/table_caps.c): a value outside the range the rules hold it in was accepted and
 * went wrong later (a flag of 7 read as true, a negative mask as every bit, a tile of 1e12 past int32), reported,
 * if at all, without the file's name. Each is refused as the file is read, naming the file and the field. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "data/data.h"
#include "data/table.h"
#include "helpers/gemm_caps_fixture.h"

static data_select *ds;
static char *csv;

static void setup(void)
{
    csv = gemm_caps_fixture_write(8, 1);
    data_table_opts o = {0};
    cr_assert_eq(data_table_load(csv, &o, &ds), HR_OK, "%s", hr_last_error());
}

static void teardown(void)
{
    data_select_free(ds);
    free(csv);
}

/* The fixture's capability file with the first `from` replaced by `to`, refused with a message holding `why`. */
static void caps_refused(const char *from, const char *to, const char *why)
{
    const char *at = strstr(gemm_caps_fixture_caps, from);
    cr_assert_not_null(at, "the fixture lacks %s", from);
    size_t n = strlen(gemm_caps_fixture_caps) + strlen(to) + 1;
    char *text = malloc(n);
    snprintf(text, n, "%.*s%s%s", (int)(at - gemm_caps_fixture_caps), gemm_caps_fixture_caps, to, at + strlen(from));
    data_table_rules *r = NULL;
    int rc = data_table_rules_parse(text, "gemm.caps.json", &ds->table->spec, ds, &r);
    cr_assert_neq(rc, HR_OK, "accepted %s -> %s", from, to);
    cr_assert_null(r);
    cr_assert(strstr(hr_last_error(), "gemm.caps.json: ") && strstr(hr_last_error(), why), "'%s' lacks '%s'",
              hr_last_error(), why);
    free(text);
}

TestSuite(hostile_caps, .init = setup, .fini = teardown);

Test(hostile_caps, flags_are_zero_or_one)
{
    caps_refused("\"splitk_support\": 1", "\"splitk_support\": 7", "types[0].algos[0].splitk_support: 7 is outside [0, 1]");
    caps_refused("\"cta_swizzling_support\": 1", "\"cta_swizzling_support\": -1",
                 "types[0].algos[0].cta_swizzling_support: -1 is outside [0, 1]");
}

Test(hostile_caps, masks_maxima_and_sizes_are_non_negative_int32)
{
    caps_refused("\"reduction_scheme_mask\": 7", "\"reduction_scheme_mask\": -1",
                 "types[0].algos[0].reduction_scheme_mask: -1 is outside [0, 2147483647]");
    caps_refused("\"custom_option_max\": 0", "\"custom_option_max\": 4000000000",
                 "types[0].algos[0].custom_option_max: 4000000000 is outside");
    caps_refused("\"algo_id\": 5", "\"algo_id\": -5", "types[0].algos[0].algo_id: -5 is outside");
    caps_refused("[[64, 64]", "[[-64, 64]", "types[0].algos[2].tiles[0]: -64 is outside");
    caps_refused("[[64, 64]", "[[1e12, 64]", "types[0].algos[2].tiles[0]: 1000000000000 is outside");
    caps_refused("[[32, 3]", "[[32, 3000000000]", "types[0].algos[2].stages[0]: 3000000000 is outside");
    caps_refused("[[0, 0]", "[[0, 99999999999]", "cluster_shapes_tried[0]: 99999999999 is outside");
}

Test(hostile_caps, numbers_that_are_no_integers_or_not_finite)
{
    caps_refused("\"version\": 1", "\"version\": 1.5", "version: expected an integer");
    caps_refused("\"custom_option_max\": 0", "\"custom_option_max\": 0, \"min_k_per_split\": 1e400",
                 "min_k_per_split: expected a finite number >= 0");
    caps_refused("\"splitk_support\": 1", "\"splitk_support\": true", "splitk_support: expected an integer");
}
