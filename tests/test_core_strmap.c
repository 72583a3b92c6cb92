/* core: the string -> int hash map (hr_strmap). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

Test(core_strmap, empty_map_finds_nothing)
{
    hr_strmap m = {0};
    cr_assert_eq(hr_strmap_find(&m, "a", 1), -1);
    cr_assert_eq(hr_strmap_find(NULL, "a", 1), -1);
    cr_assert_eq(hr_strmap_get(&m, "a", -7), -7);
    cr_assert_eq(hr_strmap_get(NULL, NULL, 3), 3);
    hr_strmap_free(&m);
    hr_strmap_free(NULL);
}

Test(core_strmap, keys_get_indices_in_order_and_keep_their_first_value)
{
    hr_strmap m = {0};
    int idx = -1;
    cr_assert_eq(hr_strmap_add(&m, "tile_m", 6, 10, &idx), 1);
    cr_assert_eq(idx, 0);
    cr_assert_eq(hr_strmap_add(&m, "tile_n", 6, 20, &idx), 1);
    cr_assert_eq(idx, 1);
    cr_assert_eq(hr_strmap_add(&m, "tile_m", 6, 30, &idx), 0, "a present key is not added again");
    cr_assert_eq(idx, 0);
    cr_assert_eq(hr_strmap_get(&m, "tile_m", -1), 10, "the first value is kept");
    cr_assert_eq(hr_strmap_get(&m, "tile_n", -1), 20);
    cr_assert_eq(m.n, 2);
    cr_assert_str_eq(m.keys[1], "tile_n");
    hr_strmap_free(&m);
    cr_assert_eq(m.n, 0);
    cr_assert_null(m.keys);
}

Test(core_strmap, keys_are_bytes_of_the_given_length)
{
    hr_strmap m = {0};
    const char *line = "M,N,K";
    cr_assert_eq(hr_strmap_add(&m, line, 1, 0, NULL), 1);
    cr_assert_eq(hr_strmap_add(&m, line + 2, 1, 1, NULL), 1);
    cr_assert_eq(hr_strmap_find(&m, "M,N", 1), 0);
    cr_assert_eq(hr_strmap_find(&m, "M,N", 3), -1, "a prefix of a longer key is another key");
    cr_assert_eq(hr_strmap_find(&m, "N", 1), 1);
    cr_assert_eq(hr_strmap_add(&m, "", 0, 2, NULL), 1, "the empty string is a key");
    cr_assert_eq(hr_strmap_find(&m, "", 0), 2);
    cr_assert_eq(hr_strmap_find(&m, NULL, 0), 2);
    hr_strmap_free(&m);
}

Test(core_strmap, many_keys_grow_the_table_and_all_stay_found)
{
    hr_strmap m = {0};
    char key[32];
    int n = 100000;
    for (int i = 0; i < n; i++) {
        int len = snprintf(key, sizeof key, "k%d", i);
        cr_assert_eq(hr_strmap_add(&m, key, (size_t)len, 3 * i, NULL), 1);
    }
    cr_assert_eq(m.n, n);
    cr_assert_geq(m.cap, 2 * n);
    for (int i = 0; i < n; i++) {
        int len = snprintf(key, sizeof key, "k%d", i);
        int at = hr_strmap_find(&m, key, (size_t)len);
        cr_assert_eq(at, i);
        cr_assert_eq(m.values[at], 3 * i);
    }
    cr_assert_eq(hr_strmap_find(&m, "k100000", 7), -1);
    hr_strmap_free(&m);
}

Test(core_strmap, a_taken_key_leaves_the_rest_freeable)
{
    hr_strmap m = {0};
    hr_strmap_add(&m, "a", 1, 0, NULL);
    hr_strmap_add(&m, "b", 1, 1, NULL);
    char *taken = m.keys[0];
    m.keys[0] = NULL;
    cr_assert_str_eq(taken, "a");
    hr_strmap_free(&m);
    free(taken);
}
