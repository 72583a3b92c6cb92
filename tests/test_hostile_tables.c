/* Hostile benchmark tables (data/table.c): inputs that crashed, hung or were read wrong, each refused with a
 * message naming the file, line and column, or handled. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "data/table.h"

#define SCHEMA "{\"problem\":[\"M\",\"N\"],\"kernel\":[\"tm\"],\"measure\":\"us\"}"

static data_load_opts strict_opts = {1, NULL, 1, NULL};

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
