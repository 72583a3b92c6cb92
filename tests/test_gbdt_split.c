/* The numeric split search on quantized histogram words: gbdt_split_find_numeric_words (prefix sums and gains four
 * thresholds at a time) against the plain one-threshold-at-a-time gbdt_split_find_numeric_words_scalar, on random
 * histograms of random codes: the same split, field for field and bit for bit, with and without hessian_counts,
 * with NaN rows or none, many empty bins, coarse codes (many tied gains), and the limits on a side. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gbdt/gbdt_internal.h"

/* the fields of two splits that a numeric search sets, compared bit for bit */
static void assert_same_split(const gbdt_split *a, const gbdt_split *b, int trial)
{
    cr_assert_eq(memcmp(&a->gain, &b->gain, sizeof a->gain), 0, "trial %d: gain %.17g vs %.17g", trial, a->gain,
                 b->gain);
    if (a->gain == -INFINITY) return;
    cr_assert_eq(a->threshold_bin, b->threshold_bin, "trial %d", trial);
    cr_assert_eq(a->default_left, b->default_left, "trial %d", trial);
    cr_assert_eq(a->is_cat, b->is_cat, "trial %d", trial);
    cr_assert_eq(a->ln, b->ln, "trial %d", trial);
    cr_assert_eq(a->rn, b->rn, "trial %d", trial);
    cr_assert_eq(a->lw, b->lw, "trial %d", trial);
    cr_assert_eq(a->rw, b->rw, "trial %d", trial);
    const double *x[] = {&a->lg, &a->lh, &a->rg, &a->rh, &a->lout, &a->rout};
    const double *y[] = {&b->lg, &b->lh, &b->rg, &b->rh, &b->lout, &b->rout};
    for (int i = 0; i < 6; i++) cr_assert_eq(memcmp(x[i], y[i], sizeof(double)), 0, "trial %d: field %d", trial, i);
}

Test(gbdt_split, vector_search_matches_the_plain_scan)
{
    hr_rng rng;
    hr_rng_seed(&rng, 20240611);
    int found[2] = {0}, nan_left = 0, trials = 3000;
    uint64_t *w = malloc(400 * sizeof *w);
    for (int trial = 0; trial < trials; trial++) {
        /* small leaves too: their estimated counts land on the limits' rounding boundaries */
        int R = 1 + (int)(hr_rng_next(&rng) % (trial % 3 ? 3000 : 40));
        int nb = 3 + (int)(hr_rng_next(&rng) % 300);
        int gbins = (int[]){2, 4, 16, 64}[hr_rng_next(&rng) % 4];
        int hconst = hr_rng_next(&rng) % 5 == 0;
        int hcount = !hconst && hr_rng_next(&rng) % 2;
        int nan_rows = hr_rng_next(&rng) % 3 == 0;
        int used_bins = 1 + (int)(hr_rng_next(&rng) % (unsigned)nb); /* few: many empty bins */
        double zero_frac = hr_rng_uniform_d(&rng) * 0.8;
        gbdt_qgrad q;
        cr_assert_eq(gbdt_qgrad_fit((size_t)R, gbins, hconst, &q), 0);
        q.gscale = 0.5 + hr_rng_uniform_d(&rng);
        q.hscale = hconst ? 0.25 : 0.01 + hr_rng_uniform_d(&rng);
        gbdt_params p;
        gbdt_params_default(&p);
        p.min_data_in_leaf = (int[]){0, 1, 3, 20}[hr_rng_next(&rng) % 4];
        p.min_sum_hessian_in_leaf = (double[]){0, 1e-3, 0.5, 5}[hr_rng_next(&rng) % 4];
        p.lambda_l1 = hr_rng_next(&rng) % 2 ? 0.0 : 0.7;
        p.lambda_l2 = (double[]){0, 1e-9, 1}[hr_rng_next(&rng) % 3];
        gbdt_split_ctx g = {.p = &p, .qlay = &q, .hcount = hcount, .nmask = hcount ? ((uint64_t)1 << q.n_bits) - 1 : 0};
        memset(w, 0, (size_t)nb * sizeof *w);
        uint64_t total = 0;
        for (int i = 0; i < R; i++) {
            int gq = (int)(hr_rng_next(&rng) % (uint64_t)(gbins + 1)) - gbins / 2;
            int hq = hconst ? 0 : (int)(hr_rng_next(&rng) % (uint64_t)(gbins + 1));
            if (hr_rng_uniform_d(&rng) < zero_frac) gq = 0, hq = 0;
            uint64_t word = gbdt_qgrad_word((uint16_t)(((unsigned)hq << 8) | ((unsigned)gq & 0xffu)), q.n_bits,
                                            q.n_bits + q.h_bits);
            int b = nan_rows && hr_rng_next(&rng) % 4 == 0 ? nb - 1 : (int)(hr_rng_next(&rng) % (uint64_t)used_bins);
            if (b == nb - 1 && !nan_rows) b = 0;
            total += word;
            /* hessian_counts: the histogram sums only rows whose word adds more than a count */
            if (!hcount || word != 1) w[b] += word;
        }
        double G = (double)gbdt_qgrad_g(&q, total) * q.gscale, H = (double)gbdt_qgrad_h(&q, total) * q.hscale;
        double shift = gbdt_leaf_gain(G, H, p.lambda_l1, p.lambda_l2) + (hr_rng_next(&rng) % 2 ? 0.0 : 0.01);
        gbdt_split a, b;
        memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
        a.gain = b.gain = -INFINITY;
        gbdt_split_find_numeric_words_scalar(&g, w, nb, total, (int64_t)R, shift, &a);
        gbdt_split_find_numeric_words(&g, w, nb, total, (int64_t)R, shift, &b);
        assert_same_split(&a, &b, trial);
        if (a.gain > -INFINITY) found[hcount]++, nan_left += a.default_left;
    }
    /* the comparisons covered splits of both kinds, NaN rows going left among them */
    cr_assert_gt(found[0], trials / 10);
    cr_assert_gt(found[1], trials / 20);
    cr_assert_gt(nan_left, 10);
    free(w);
}
