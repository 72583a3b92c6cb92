/* collect: percentiles, the shortlist pass's choice of kernels to launch again, the noise pass statistics and the
 * verify summary, against hand-computed values. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "helpers/testutil.h"

Test(collect_stats, percentile_interpolates)
{
    double v[4] = {4, 1, 3, 2};
    cr_assert_float_eq(collect_percentile(v, 4, 10), 1.3, 1e-12);
    cr_assert_float_eq(collect_percentile(v, 4, 50), 2.5, 1e-12);
    cr_assert_float_eq(collect_percentile(v, 4, 90), 3.7, 1e-12);
    cr_assert_float_eq(collect_percentile(v, 4, 100), 4.0, 1e-12);
    double one[1] = {7};
    cr_assert_float_eq(collect_percentile(one, 1, 90), 7.0, 1e-12);
    cr_assert(isnan(collect_percentile(one, 0, 50)));
}

Test(collect_stats, median_of_odd_and_even_counts)
{
    double odd[3] = {5, 1, 3}, even[4] = {4, 1, 3, 2}, one[1] = {7};
    cr_assert_eq(collect_median(odd, 3), 3.0);
    cr_assert_eq(collect_median(even, 4), 2.5);
    cr_assert_eq(collect_median(one, 1), 7.0);
}

/* The kernels a shortlist pass launches again after timed warm-ups: those whose bound below their own time (the
 * warm-up less the host's call) is within the factor of the fastest warm-up, none when fewer than two are. */
Test(collect_stats, retime_selects_by_the_lower_bound)
{
    const double first[4] = {1.0, 2.0, 1.8, INFINITY}, lower[4] = {0.9, 1.4, 1.8, INFINITY};
    char again[4];
    /* 2.0 is over x1.5 of 1.0, but its bound 1.4 is not: launched again; 1.8 is not, nor a refused kernel */
    cr_assert_eq(collect_retime_select(first, lower, 4, 1.5, again), 2);
    cr_assert(again[0] && again[1] && !again[2] && !again[3]);
    cr_assert_eq(collect_retime_select(first, lower, 4, 2.0, again), 3);
    cr_assert(again[2] && !again[3]);
    /* only the fastest within the factor: the pick is decided, none launched again */
    cr_assert_eq(collect_retime_select(first, first, 4, 1.5, again), 0);
    cr_assert(!again[0] && !again[1] && !again[2] && !again[3]);
}

static collect_file read_text(const char *text)
{
    char *path = test_tmpfile(".fdb.txt", text, strlen(text));
    collect_file f;
    cr_assert_eq(collect_file_read(path, &f), 0, "%s", collect_last_error());
    remove(path);
    free(path);
    return f;
}

/* k1: same fastest, ratio 1.1; k2: other fastest, ratio 0.5 (max(r,1/r) 2); k3: same, ratio 1; k4 only in a. */
Test(collect_noise, agreement_and_spread)
{
    collect_file a = read_text("k1=A:1,0,c;B:2,0,c\nk2=A:2,0,c;B:3,0,c\nk3=B:4,0,c;A:5,0,c\nk4=A:1,0,c\n");
    collect_file b = read_text("k3=B:4,0,c\nk2=B:1,0,c;A:1.5,0,c\nk1=B:3,0,c;A:1.1,0,c\n");
    collect_noise nz;
    cr_assert_eq(collect_noise_compute(&a, &b, &nz), 0);
    cr_assert_eq(nz.n, 3);
    cr_assert_float_eq(nz.agree, 2.0 / 3.0, 1e-12);
    /* ratios sorted 0.5, 1, 1.1: p10 = 0.5 + 0.2 * 0.5, p50 = 1, p90 = 1 + 0.8 * 0.1 */
    cr_assert_float_eq(nz.ratio_p10, 0.6, 1e-12);
    cr_assert_float_eq(nz.ratio_p50, 1.0, 1e-12);
    cr_assert_float_eq(nz.ratio_p90, 1.08, 1e-12);
    /* max(r, 1/r) sorted 1, 1.1, 2: p90 = 1.1 + 0.8 * 0.9 */
    cr_assert_float_eq(nz.noise_ratio, 1.82, 1e-12);
    collect_file c = read_text("other=A:1,0,c\n");
    cr_assert_eq(collect_noise_compute(&a, &c, &nz), COLLECT_EINVAL);
    collect_file_free(&a);
    collect_file_free(&b);
    collect_file_free(&c);
}

Test(collect_verify, summary_by_hand)
{
    const collect_verify_row rows[3] = {
        /* speed-up 2, efficiency 1, heuristic 0.5 */
        {.t_model = 1.0, .t_heur = 2.0, .t_best = 1.0, .decide_us = 5.0, .find_ms = 20.0},
        /* speed-up 0.5, efficiency 0.5, heuristic 1 */
        {.t_model = 2.0, .t_heur = 1.0, .t_best = 1.0, .decide_us = 7.0, .find_ms = 30.0},
        /* speed-up 1.01 (inside the noise), efficiency 0.9, heuristic 0.9/1.01 */
        {.t_model = 1.0, .t_heur = 1.01, .t_best = 0.9, .decide_us = 6.0, .find_ms = 40.0},
    };
    collect_verify_summary s;
    cr_assert_eq(collect_verify_summarize(rows, 3, 1.02, &s), 0);
    cr_assert_eq(s.n, 3);
    cr_assert_float_eq(s.speedup_geomean, cbrt(1.01), 1e-12);
    cr_assert_float_eq(s.efficiency_mean, 0.8, 1e-12);
    cr_assert_float_eq(s.heur_efficiency_mean, (0.5 + 1.0 + 0.9 / 1.01) / 3, 1e-12);
    cr_assert_float_eq(s.share_slower, 1.0 / 3, 1e-12);
    cr_assert_float_eq(s.share_faster, 1.0 / 3, 1e-12);
    /* speed-ups sorted 0.5, 1.01, 2: p10 = 0.5 + 0.2 * 0.51 */
    cr_assert_float_eq(s.speedup_p10, 0.602, 1e-12);
    cr_assert_float_eq(s.speedup_p50, 1.01, 1e-12);
    cr_assert_float_eq(s.decide_us_mean, 6.0, 1e-12);
    cr_assert_float_eq(s.find_ms_mean, 30.0, 1e-12);
    /* with no noise allowance the third problem counts as faster too */
    cr_assert_eq(collect_verify_summarize(rows, 3, 1.0, &s), 0);
    cr_assert_float_eq(s.share_faster, 2.0 / 3, 1e-12);
    cr_assert_eq(collect_verify_summarize(rows, 0, 1.0, &s), COLLECT_EINVAL);
    cr_assert_eq(collect_verify_summarize(rows, 3, 0.9, &s), COLLECT_EINVAL);
    const collect_verify_row bad[1] = {{.t_model = 0.0, .t_heur = 1.0, .t_best = 1.0, .decide_us = 0, .find_ms = 0}};
    cr_assert_eq(collect_verify_summarize(bad, 1, 1.0, &s), COLLECT_EINVAL);
}
