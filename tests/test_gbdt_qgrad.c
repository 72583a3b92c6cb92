/* quantized_grad: the discretiser (unbiased stochastic rounding, ranges, determinism, field widths), integer
 * histograms against float histograms of the same discretised values, models identical for any thread count,
 * accuracy close to the float path's, hessian_counts (side counts from hessian sums, histograms over the rows
 * whose words add more than a count), and the settings it refuses. */
#include <criterion/criterion.h>

#include "gbdt/gbdt_internal.h"
#include "test_gbdt_util.h"

/* the word of a row's code under the fields of q */
static uint64_t word(const gbdt_qgrad *q, uint16_t c)
{
    return gbdt_qgrad_word(c, q->n_bits, q->n_bits + q->h_bits);
}

/* Rows of three kinds: row 0 holds the largest |g| and h (so the scales are 1 / (bins/2) and 1 / bins), the
 * others g = 0.37 or -0.81 and h = 0.23 or 0.61, values between two levels. The mean of the dequantised
 * values of a kind is its value up to the sampling error of the rounding: at most 0.5 level / sqrt(rows). */
Test(gbdt_qgrad, stochastic_rounding_is_unbiased_and_in_range)
{
    size_t n = 200001;
    int bins = 4;
    double *gh = malloc(2 * n * sizeof *gh);
    uint16_t *qv = malloc(n * sizeof *qv), *qv2 = malloc(n * sizeof *qv2);
    gh[0] = 1.0, gh[1] = 1.0;
    for (size_t i = 1; i < n; i++) {
        gh[2 * i] = i % 2 ? 0.37 : -0.81;
        gh[2 * i + 1] = i % 2 ? 0.23 : 0.61;
    }
    gbdt_qgrad q;
    cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, bins, 7, 3, 5, qv, &q), 0, "%s", hr_last_error());
    cr_assert_float_eq(q.gscale, 1.0 / (bins / 2), 1e-15);
    cr_assert_float_eq(q.hscale, 1.0 / bins, 1e-15);
    cr_assert_gt(q.h_bits, 0);
    double sg[2] = {0}, sh[2] = {0};
    size_t cnt[2] = {0};
    for (size_t i = 0; i < n; i++) {
        int64_t g = gbdt_qgrad_g(&q, word(&q, qv[i])), h = gbdt_qgrad_h(&q, word(&q, qv[i]));
        cr_assert_eq(gbdt_qgrad_n(&q, word(&q, qv[i])), 1);
        cr_assert(g >= -bins / 2 && g <= bins / 2, "row %zu: gq %lld", i, (long long)g);
        cr_assert(h >= 0 && h <= bins, "row %zu: hq %lld", i, (long long)h);
        /* a value between two levels rounds to one of them */
        cr_assert_leq(fabs((double)g * q.gscale - gh[2 * i]), q.gscale);
        cr_assert_leq(fabs((double)h * q.hscale - gh[2 * i + 1]), q.hscale);
        if (i == 0) continue;
        sg[i % 2] += (double)g * q.gscale, sh[i % 2] += (double)h * q.hscale, cnt[i % 2]++;
    }
    double tol = 4 * 0.5 * q.gscale / sqrt((double)cnt[0]); /* four standard errors */
    cr_assert_float_eq(sg[1] / cnt[1], 0.37, tol, "mean g %.6f", sg[1] / cnt[1]);
    cr_assert_float_eq(sg[0] / cnt[0], -0.81, tol, "mean g %.6f", sg[0] / cnt[0]);
    cr_assert_float_eq(sh[1] / cnt[1], 0.23, tol, "mean h %.6f", sh[1] / cnt[1]);
    cr_assert_float_eq(sh[0] / cnt[0], 0.61, tol, "mean h %.6f", sh[0] / cnt[0]);
    /* the same (seed, round, class) gives the same words; another round other ones */
    gbdt_qgrad q2;
    cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, bins, 7, 3, 5, qv2, &q2), 0);
    cr_assert_eq(memcmp(qv, qv2, n * sizeof *qv), 0);
    cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, bins, 7, 4, 5, qv2, &q2), 0);
    cr_assert_neq(memcmp(qv, qv2, n * sizeof *qv), 0);
    /* the offsets of neighbouring rows are not correlated (a counter hash, not a lattice) */
    double c = 0, m = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        double a = (gbdt_qgrad_hash(7, 3, 5, i) & 0xffff) / 65536.0 - 0.5;
        double b = (gbdt_qgrad_hash(7, 3, 5, i + 1) & 0xffff) / 65536.0 - 0.5;
        c += a * b, m += a;
    }
    cr_assert_lt(fabs(c / (double)n), 0.003, "lag-1 correlation %g", c / (double)n / (1.0 / 12));
    cr_assert_lt(fabs(m / (double)n), 0.003, "mean offset %g", m / (double)n + 0.5);
    free(gh), free(qv), free(qv2);
}

/* Every word is the documented function of its row's hash, in the rows done four at a time and in the rest */
Test(gbdt_qgrad, words_follow_the_rounding_formula)
{
    size_t n = 23;
    int bins = 8;
    double gh[46];
    uint16_t qv[23];
    for (size_t i = 0; i < n; i++) gh[2 * i] = sin(1.7 * (double)i + 0.3), gh[2 * i + 1] = 0.05 + 0.2 * (double)(i % 5);
    gbdt_qgrad q;
    cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, bins, 11, 2, 3, qv, &q), 0);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = gbdt_qgrad_hash(11, 2, 3, i);
        double u = ((r & 0xffffu) + 0.5) / 65536.0, uh = ((r >> 16) + 0.5) / 65536.0;
        double g = gh[2 * i] * (1.0 / q.gscale), h = gh[2 * i + 1] * (1.0 / q.hscale);
        int64_t gq = (int64_t)(g < 0 ? g - u : g + u), hq = (int64_t)(h + uh);
        cr_assert_eq(gbdt_qgrad_g(&q, word(&q, qv[i])), gq, "row %zu", i);
        cr_assert_eq(gbdt_qgrad_h(&q, word(&q, qv[i])), hq, "row %zu", i);
        cr_assert_eq(gbdt_qgrad_n(&q, word(&q, qv[i])), 1);
    }
}

/* Equal hessians (L2) are kept exactly: no hessian field, h = count x the hessian. */
Test(gbdt_qgrad, a_constant_hessian_is_exact)
{
    size_t n = 1001; /* a row past the last four */
    double *gh = malloc(2 * n * sizeof *gh);
    uint16_t *qv = malloc(n * sizeof *qv);
    for (size_t i = 0; i < n; i++) gh[2 * i] = sin((double)i), gh[2 * i + 1] = 0.75;
    gbdt_qgrad q;
    cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, 8, 1, 0, 0, qv, &q), 0);
    cr_assert_eq(q.h_bits, 0);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += word(&q, qv[i]);
    cr_assert_eq(gbdt_qgrad_n(&q, sum), (int64_t)n);
    cr_assert_eq((double)gbdt_qgrad_h(&q, sum) * q.hscale, 0.75 * (double)n);
    /* a gradient that is not a number is refused, in the rows done four at a time and in the rest */
    for (size_t at = 0; at < 2; at++) {
        double keep = gh[2 * (at ? n - 1 : 5)];
        gh[2 * (at ? n - 1 : 5)] = NAN;
        cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, 8, 1, 0, 0, qv, &q), HR_EINVAL);
        cr_assert(strstr(hr_last_error(), "not finite"), "%s", hr_last_error());
        gh[2 * (at ? n - 1 : 5)] = keep;
    }
    free(gh), free(qv);
}

/* The ranges gathered while softmax gradients are written are those of a pass over the written gh, for any
 * thread count and with rows past the last block of 16; quantizing from them gives the codes, scales and count of
 * zero codes that quantizing with its own pass gives; a score that is not a number is refused the same way. */
Test(gbdt_qgrad, gradient_ranges_match_a_pass_over_the_gradients)
{
    enum { N = 1003, K = 7 };
    hr_rng r;
    hr_rng_seed(&r, 9);
    double *F = malloc(N * K * sizeof *F), *gh = malloc(2 * N * K * sizeof *gh), *gh1 = malloc(2 * N * K * sizeof *gh);
    float y[N], w[N], x[N] = {0}, *yp = calloc(N * K, sizeof *yp);
    uint16_t *qc = malloc(N * sizeof *qc), *qc1 = malloc(N * sizeof *qc1);
    for (int i = 0; i < N; i++) {
        /* far apart scores: most classes' p ~ 0, so many codes are 0 */
        for (int k = 0; k < K; k++) F[i * K + k] = 12.0 * hr_rng_normal(&r);
        y[i] = (float)hr_rng_below(&r, K);
        w[i] = (float)(0.5 + hr_rng_uniform(&r));
        yp[i * K + (int)y[i]] = 0.6f, yp[i * K + i % K] += 0.4f;
    }
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    for (int mode = 0; mode < 3; mode++) /* hard labels, hard labels and weights, soft labels */
        for (int threads = 1; threads <= 3; threads++) {
            gbdt_data data = {.x = x, .y = mode < 2 ? y : NULL, .y_prob = mode == 2 ? yp : NULL,
                              .weight = mode == 1 ? w : NULL, .n = N, .d = 1};
            gbdt_gh_range ranges[K];
            cr_assert_eq(gbdt_objective_gradients_range(&p, &data, F, threads, gh, ranges), 0);
            cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 1, gh1), 0);
            cr_assert(!memcmp(gh, gh1, 2 * N * K * sizeof *gh), "mode %d threads %d", mode, threads);
            size_t zeros = 0;
            for (int k = 0; k < K; k++) {
                const double *g = gh + 2 * (size_t)k * N;
                gbdt_gh_range want = {0, INFINITY, -INFINITY, 0}, scan;
                for (int i = 0; i < N; i++) {
                    want.gmax = fmax(want.gmax, fabs(g[2 * i]));
                    want.hmin = fmin(want.hmin, g[2 * i + 1]), want.hmax = fmax(want.hmax, g[2 * i + 1]);
                }
                gbdt_qgrad_range(g, N, &scan);
                cr_assert(want.gmax == ranges[k].gmax && want.hmin == ranges[k].hmin &&
                              want.hmax == ranges[k].hmax && !ranges[k].nan,
                          "mode %d threads %d class %d: %.17g %.17g %.17g, want %.17g %.17g %.17g", mode, threads, k,
                          ranges[k].gmax, ranges[k].hmin, ranges[k].hmax, want.gmax, want.hmin, want.hmax);
                cr_assert(want.gmax == scan.gmax && want.hmin == scan.hmin && want.hmax == scan.hmax && !scan.nan);
                gbdt_qgrad q, q1;
                cr_assert_eq(gbdt_qgrad_discretize_range(g, N, &ranges[k], N, 4, 3, 2, k, qc, &q), 0);
                cr_assert_eq(gbdt_qgrad_discretize(g, N, N, 4, 3, 2, k, qc1, &q1), 0);
                cr_assert(!memcmp(qc, qc1, N * sizeof *qc) && !memcmp(&q, &q1, sizeof q), "class %d", k);
                size_t z = 0;
                for (int i = 0; i < N; i++) z += qc[i] == 0;
                cr_assert_eq(q.zeros, z, "class %d: %zu zero codes counted, %zu there", k, q.zeros, z);
                zeros += z;
            }
            cr_assert_gt(zeros, N, "too few zero codes to test their count");
        }
    /* a score that is not a number makes every class of its row's gradients not finite: in a block of 16 rows and
     * in the last rows */
    for (int at = 0; at < 2; at++) {
        int i = at ? N - 1 : 21;
        double keep = F[i * K + 3];
        F[i * K + 3] = NAN;
        gbdt_data data = {.x = x, .y = y, .n = N, .d = 1};
        gbdt_gh_range ranges[K];
        cr_assert_eq(gbdt_objective_gradients_range(&p, &data, F, 2, gh, ranges), 0);
        for (int k = 0; k < K; k++) {
            cr_assert(ranges[k].nan, "row %d class %d", i, k);
            gbdt_qgrad q;
            cr_assert_eq(gbdt_qgrad_discretize_range(gh + 2 * (size_t)k * N, N, &ranges[k], N, 4, 3, 2, k, qc, &q),
                         HR_EINVAL);
            cr_assert(strstr(hr_last_error(), "not finite"), "%s", hr_last_error());
        }
        F[i * K + 3] = keep;
    }
    /* other objectives get the ranges of a pass over gh */
    p.objective = GBDT_OBJECTIVE_L2;
    p.num_class = 1;
    gbdt_data data = {.x = x, .y = y, .weight = w, .n = N, .d = 1};
    gbdt_gh_range l2;
    cr_assert_eq(gbdt_objective_gradients_range(&p, &data, F, 2, gh, &l2), 0);
    double gmax = 0, hmin = INFINITY, hmax = -INFINITY;
    for (int i = 0; i < N; i++)
        gmax = fmax(gmax, fabs(gh[2 * i])), hmin = fmin(hmin, gh[2 * i + 1]), hmax = fmax(hmax, gh[2 * i + 1]);
    cr_assert(l2.gmax == gmax && l2.hmin == hmin && l2.hmax == hmax && !l2.nan);
    free(F), free(gh), free(gh1), free(yp), free(qc), free(qc1);
}

/* The fields must hold sums over all rows of a tree in 64 bits; more rows than that are refused by name. */
Test(gbdt_qgrad, field_widths_fit_the_rows_or_are_refused)
{
    gbdt_qgrad q;
    cr_assert_eq(gbdt_qgrad_fit(145942, 4, 0, &q), 0);
    cr_assert_eq(q.n_bits, 18);
    cr_assert_eq(q.h_bits, 20);
    cr_assert_eq(gbdt_qgrad_fit((size_t)1 << 22, 64, 0, &q), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "quantized_grad") && strstr(hr_last_error(), "grad_bins"), "%s",
              hr_last_error());
    cr_assert_eq(gbdt_qgrad_fit((size_t)1 << 22, 64, 1, &q), 0); /* without the hessian field they fit */
    /* the largest sums of each field do not reach the next one */
    size_t m = 100000;
    cr_assert_eq(gbdt_qgrad_fit(m, 8, 0, &q), 0);
    uint64_t w = ((uint64_t)(int64_t)-4 << (q.n_bits + q.h_bits)) + ((uint64_t)8 << q.n_bits) + 1, s = 0;
    for (size_t i = 0; i < m; i++) s += w;
    cr_assert_eq(gbdt_qgrad_n(&q, s), (int64_t)m);
    cr_assert_eq(gbdt_qgrad_h(&q, s), 8 * (int64_t)m);
    cr_assert_eq(gbdt_qgrad_g(&q, s), -4 * (int64_t)m);
}

/* An integer histogram, unpacked, is the float histogram of the discretised values: same bins, counts exact,
 * bundles of small features expanded the same way. */
Test(gbdt_qgrad, integer_histogram_matches_the_float_one)
{
    size_t n = 40000;
    int d = 6;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(21, n, d, x, y);
    for (size_t i = 0; i < n; i++) { /* small features that the binning bundles */
        x[i * d + 3] = (float)(i % 3);
        x[i * d + 4] = (float)((i / 7) % 5);
    }
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 63, 1, &bd), 0);
    double *gh = malloc(2 * n * sizeof *gh), *ghq = malloc(2 * n * sizeof *ghq);
    for (size_t i = 0; i < n; i++) gh[2 * i] = y[i], gh[2 * i + 1] = 0.5 + 0.5 * fabs(sin((double)i));
    uint16_t *qv = malloc(n * sizeof *qv);
    gbdt_qgrad q;
    cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, 16, 3, 0, 0, qv, &q), 0);
    for (size_t i = 0; i < n; i++) {
        ghq[2 * i] = (double)gbdt_qgrad_g(&q, word(&q, qv[i])) * q.gscale;
        ghq[2 * i + 1] = (double)gbdt_qgrad_h(&q, word(&q, qv[i])) * q.hscale;
    }
    int *rows = malloc(n * sizeof *rows);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i % 3 != 1) rows[m++] = (int)i;
    gbdt_hist_scratch sc;
    cr_assert_eq(gbdt_hist_scratch_init(&sc, &bd), 0);
    gbdt_hist_bin *hf = gbdt_hist_alloc(GBDT_HIST_BYTES(bd.hist_total));
    gbdt_hist_bin *hq = gbdt_hist_alloc(GBDT_HIST_BYTES(bd.hist_total));
    uint64_t *w = gbdt_hist_alloc(bd.hist_total * sizeof *w);
    cr_assert_eq(gbdt_hist_build(&bd, rows, m, ghq, NULL, 1, &sc, hf), 0);
    for (int t = 1; t <= 3; t++) {
        cr_assert_eq(gbdt_qhist_build(&bd, rows, m, qv, &q, t, &sc, w), 0);
        gbdt_qhist_unpack(&bd, w, &q, hq);
        for (int j = 0; j < d; j++) {
            if (bd.mappers[j].trivial) continue;
            for (size_t b = bd.hist_offset[j]; b < bd.hist_offset[j + 1]; b++) {
                cr_assert_eq(hq[b].n, hf[b].n, "feature %d bin %zu", j, b);
                cr_assert_float_eq(hq[b].g, hf[b].g, 1e-9 * (1 + fabs(hf[b].g)), "feature %d bin %zu", j, b);
                cr_assert_float_eq(hq[b].h, hf[b].h, 1e-9 * (1 + hf[b].h), "feature %d bin %zu", j, b);
            }
        }
    }
    cr_assert_gt(bd.nbundles, 0, "the test means to cover bundles");
    free(hf), free(hq), free(w), free(rows), free(qv), free(gh), free(ghq), free(x), free(y);
    gbdt_hist_scratch_free(&sc);
    gbdt_binned_free(&bd);
}

/* A leaf's histogram holds, in every column's bins, the sums of its rows' words, whichever way its size sends it
 * (one histogram below a few thousand rows, a pair above, blocks across threads from 16384 rows): leaves of 0 to
 * all rows, scattered rows in ascending order, random codes of both signs, with and without a hessian field, bins
 * packed in one and in two bytes. */
Test(gbdt_qgrad, leaf_histograms_are_the_sums_of_their_words_at_any_size)
{
    size_t n = 40000;
    int d = 4;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(5, n, d, x, y);
    for (size_t i = 0; i < n; i++) x[i * d + 3] = (float)(i % 3); /* a column whose rows crowd three bins */
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    uint16_t *qv = malloc(n * sizeof *qv);
    int *rows = malloc(n * sizeof *rows), *perm = malloc(n * sizeof *perm);
    uint8_t *pick = malloc(n);
    hr_rng r;
    hr_rng_seed(&r, 17);
    const size_t sizes[] = {0, 1, 2, 3, 127, 2047, 2048, 2049, 9000, 16383, 16384, 33000, 40000};
    const int max_bins[] = {255, 600};
    for (int mb = 0; mb < 2; mb++) {
        gbdt_binned bd;
        cr_assert_eq(gbdt_binned_build(&data, max_bins[mb], 1, &bd), 0);
        cr_assert_eq(bd.pack_bytes, mb + 1, "the test means to cover %d-byte bins", mb + 1);
        gbdt_hist_scratch sc;
        cr_assert_eq(gbdt_hist_scratch_init(&sc, &bd), 0);
        uint64_t *want = malloc(bd.hist_total * sizeof *want), *got = gbdt_hist_alloc(bd.hist_total * sizeof *got);
        for (int hconst = 0; hconst < 2; hconst++) {
            gbdt_qgrad q;
            cr_assert_eq(gbdt_qgrad_fit(n, 4, hconst, &q), 0);
            for (size_t i = 0; i < n; i++) { /* gq in [-2, 2], hq in [0, 4] (0 with a constant hessian) */
                int g = (int)(hr_rng_uniform(&r) * 5) - 2, h = hconst ? 0 : (int)(hr_rng_uniform(&r) * 5);
                qv[i] = (uint16_t)((uint8_t)(int8_t)g | (unsigned)h << 8);
            }
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
                size_t m = sizes[s];
                /* m rows picked at random, in ascending order */
                for (size_t i = 0; i < n; i++) perm[i] = (int)i;
                for (size_t i = 0; i < m; i++) {
                    size_t j = i + (size_t)(hr_rng_uniform_d(&r) * (double)(n - i));
                    if (j >= n) j = n - 1;
                    int tmp = perm[i];
                    perm[i] = perm[j], perm[j] = tmp;
                }
                memset(pick, 0, n);
                for (size_t i = 0; i < m; i++) pick[perm[i]] = 1;
                size_t k = 0;
                for (size_t i = 0; i < n; i++)
                    if (pick[i]) rows[k++] = (int)i;
                cr_assert_eq(k, m);
                memset(want, 0, bd.hist_total * sizeof *want);
                for (size_t i = 0; i < m; i++) {
                    size_t row = (size_t)rows[i];
                    for (int c = 0; c < bd.ncols; c++) {
                        size_t at = (size_t)bd.ncols * row + (size_t)c;
                        int bin = bd.pack_bytes == 1 ? ((const uint8_t *)bd.packed)[at] : ((const uint16_t *)bd.packed)[at];
                        want[bd.col_offset[c] + (size_t)bin] += word(&q, qv[row]);
                    }
                }
                for (int t = 1; t <= 3; t += 2) {
                    memset(got, 0xff, bd.hist_total * sizeof *got);
                    cr_assert_eq(gbdt_qhist_build(&bd, rows, m, qv, &q, t, &sc, got), 0);
                    for (int c = 0; c < bd.ncols; c++)
                        for (size_t b = bd.col_offset[c]; b < bd.col_offset[c] + (size_t)bd.col_nbins[c]; b++)
                            cr_assert_eq(got[b], want[b], "%d-byte bins, constant hessian %d, %zu rows, %d threads, "
                                         "column %d bin %zu", bd.pack_bytes, hconst, m, t, c, b);
                }
            }
        }
        free(want), free(got);
        gbdt_hist_scratch_free(&sc);
        gbdt_binned_free(&bd);
    }
    free(qv), free(rows), free(perm), free(pick), free(x), free(y);
}

/* The root histograms of many classes, built 16 classes a pass (and the groups shared between threads), hold the
 * words that one class's build gives. */
Test(gbdt_qgrad, class_group_histograms_match_one_class_builds)
{
    size_t n = 5000;
    int d = 5, K = 19; /* groups of 10 and 9 classes at one and two threads, 7, 7 and 5 at three */
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(8, n, d, x, y);
    for (size_t i = 0; i < n; i++) x[i * d + 4] = (float)(i % 4);
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 255, 1, &bd), 0);
    double *gh = malloc(2 * n * sizeof *gh);
    uint16_t *qv = malloc((size_t)K * n * sizeof *qv);
    gbdt_qgrad q[19];
    for (int k = 0; k < K; k++) { /* class 7's hessians are constant: fields of other widths than its neighbours' */
        for (size_t i = 0; i < n; i++)
            gh[2 * i] = sin((double)(i * (k + 1))), gh[2 * i + 1] = k == 7 ? 0.25 : 0.3 + 0.1 * cos((double)i);
        cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, 4, 1, 0, k, qv + (size_t)k * n, &q[k]), 0);
    }
    cr_assert_eq(q[7].h_bits, 0);
    cr_assert_gt(q[6].h_bits, 0);
    int *rows = malloc(n * sizeof *rows);
    for (size_t i = 0; i < n; i++) rows[i] = (int)(n - 1 - i);
    uint64_t *hists[19], *one = gbdt_hist_alloc(bd.hist_total * sizeof *one);
    for (int k = 0; k < K; k++) hists[k] = gbdt_hist_alloc(bd.hist_total * sizeof(uint64_t));
    gbdt_hist_scratch sc;
    cr_assert_eq(gbdt_hist_scratch_init(&sc, &bd), 0);
    /* every class, then a few in another order (the others' histograms are left as they are) */
    int all[19], some[5] = {18, 3, 7, 11, 0};
    for (int k = 0; k < K; k++) all[k] = k;
    for (int t = 1; t <= 4; t++) {
        const int *cls = t <= 3 ? all : some;
        int nk = t <= 3 ? K : 5;
        for (int k = 0; k < K; k++) memset(hists[k], 0xff, bd.hist_total * sizeof(uint64_t));
        cr_assert_eq(gbdt_qhist_build_classes(&bd, rows, n, qv, q, cls, nk, t <= 3 ? t : 2, hists), 0);
        for (int i = 0; i < nk; i++) {
            int k = cls[i];
            cr_assert_eq(gbdt_qhist_build(&bd, rows, n, qv + (size_t)k * n, &q[k], 1, &sc, one), 0);
            for (int c = 0; c < bd.ncols; c++)
                for (size_t b = bd.col_offset[c]; b < bd.col_offset[c] + (size_t)bd.col_nbins[c]; b++)
                    cr_assert_eq(hists[k][b], one[b], "threads %d class %d bin %zu", t, k, b);
        }
    }
    for (int k = 0; k < K; k++) free(hists[k]);
    free(one), free(rows), free(qv), free(gh), free(x), free(y);
    gbdt_hist_scratch_free(&sc);
    gbdt_binned_free(&bd);
}

static void assert_same_trees(const gbdt_booster *a, const gbdt_booster *b)
{
    cr_assert_eq(gbdt_booster_num_trees(a), gbdt_booster_num_trees(b));
    for (int i = 0; i < gbdt_booster_num_trees(a); i++) {
        const gbdt_tree *s = gbdt_booster_tree(a, i), *t = gbdt_booster_tree(b, i);
        int ni = s->num_leaves - 1, nl = s->num_leaves;
        cr_assert_eq(s->num_leaves, t->num_leaves, "tree %d", i);
        cr_assert_eq(memcmp(s->split_feature, t->split_feature, ni * sizeof(int)), 0);
        cr_assert_eq(memcmp(s->threshold, t->threshold, ni * sizeof(double)), 0);
        cr_assert_eq(memcmp(s->split_gain, t->split_gain, ni * sizeof(double)), 0);
        cr_assert_eq(memcmp(s->decision_type, t->decision_type, ni), 0);
        cr_assert_eq(memcmp(s->leaf_value, t->leaf_value, nl * sizeof(double)), 0, "tree %d leaf values", i);
    }
}

/* Softmax with bagging and feature sampling, and L2 (one tree at a time, its histograms cut into row blocks
 * summed in parallel), give bit-identical models at 1, 2 and 3 threads. */
Test(gbdt_qgrad, bit_identical_for_1_2_3_threads, .timeout = 60)
{
    size_t n = 40000;
    int d = 12, K = 3;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y), *yr = malloc(n * sizeof *yr);
    tgb_make_classes(16, n, d, K, x, y);
    for (size_t i = 0; i < n; i++) yr[i] = x[i * d] * x[i * d + 1] + (float)(i % 4) * 0.1f;
    for (int run = 0; run < 3; run++) {
        int obj = run == 1, hcount = run == 2; /* softmax, L2, softmax with hessian_counts */
        gbdt_data train = {.x = x, .n = n, .d = d, .y = obj ? yr : y};
        gbdt_params p;
        gbdt_params_default(&p);
        p.hessian_counts = hcount;
        if (!obj) {
            p.objective = GBDT_OBJECTIVE_SOFTMAX;
            p.num_class = K;
            p.bagging_fraction = 0.9;
            p.bagging_freq = 1;
            p.feature_fraction = 0.8;
        }
        p.num_rounds = 4;
        p.seed = 99;
        p.quantized_grad = 1;
        gbdt_booster *b[3];
        for (int t = 0; t < 3; t++) {
            p.num_threads = t + 1;
            cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b[t]), 0, "%s", hr_last_error());
        }
        assert_same_trees(b[0], b[1]);
        assert_same_trees(b[0], b[2]);
        /* the rounding depends on the seed: another seed, another model */
        gbdt_booster *other;
        p.seed = 100;
        cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &other), 0);
        const gbdt_tree *t0 = gbdt_booster_tree(b[0], gbdt_booster_num_trees(b[0]) - 1);
        const gbdt_tree *t1 = gbdt_booster_tree(other, gbdt_booster_num_trees(other) - 1);
        cr_assert(t0->num_leaves != t1->num_leaves ||
                      memcmp(t0->split_gain, t1->split_gain, (size_t)(t0->num_leaves - 1) * sizeof(double)) != 0,
                  "objective %d: seeds 99 and 100 gave the same last tree", obj);
        for (int t = 0; t < 3; t++) gbdt_booster_free(b[t]);
        gbdt_booster_free(other);
    }
    free(x), free(y), free(yr);
}

/* Accuracy within a stated distance of the float path's: test accuracy of a 3-class problem at most 1.5 points
 * lower, and an L2 regression's test error at most 10% higher (with and without renewing leaf values from the
 * true gradients). */
Test(gbdt_qgrad, accuracy_is_close_to_the_float_path)
{
    size_t n = 4000, nt = 2000;
    int d = 4, K = 3;
    float *x = malloc((n + nt) * d * sizeof *x), *y = malloc((n + nt) * sizeof *y);
    tgb_make_classes(12, n + nt, d, K, x, y);
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y};
    double acc[3];
    for (int qz = 0; qz < 3; qz++) {
        gbdt_params p;
        gbdt_params_default(&p);
        p.objective = GBDT_OBJECTIVE_SOFTMAX;
        p.num_class = K;
        p.num_rounds = 60;
        p.quantized_grad = qz > 0;
        p.hessian_counts = qz == 2;
        gbdt_booster *b;
        cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
        int correct = 0;
        for (size_t i = n; i < n + nt; i++) {
            double pr[3];
            gbdt_booster_predict_row(b, x + i * d, pr);
            correct += tgb_argmax(pr, K) == (int)y[i];
        }
        acc[qz] = (double)correct / (double)nt;
        gbdt_booster_free(b);
    }
    cr_assert_gt(acc[0], 0.95);
    cr_assert_geq(acc[1], acc[0] - 0.015, "quantized %.4f, float %.4f", acc[1], acc[0]);
    cr_assert_geq(acc[2], acc[0] - 0.015, "quantized, hessian_counts %.4f, float %.4f", acc[2], acc[0]);
    tgb_make_regression(5, n + nt, d, x, y);
    double err[3];
    for (int mode = 0; mode < 3; mode++) {
        gbdt_params p;
        gbdt_params_default(&p);
        p.num_rounds = 100;
        p.quantized_grad = mode > 0;
        p.renew_leaf = mode == 1;
        gbdt_booster *b;
        cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
        double s = 0;
        for (size_t i = n; i < n + nt; i++) {
            double o;
            gbdt_booster_predict_row(b, x + i * d, &o);
            s += (o - y[i]) * (o - y[i]);
        }
        err[mode] = s / (double)nt;
        gbdt_booster_free(b);
    }
    cr_assert_lt(err[0], 0.02, "float mse %g", err[0]);
    cr_assert_leq(err[1], 1.10 * err[0], "quantized (renewed leaves) mse %g, float %g", err[1], err[0]);
    cr_assert_leq(err[2], 1.10 * err[0], "quantized mse %g, float %g", err[2], err[0]);
    free(x), free(y);
}

/* A categorical split on quantized histograms: the category set is found, the sides' row counts add up, and the
 * leaves' values are the sides' means (renewed from the true gradients, or from the quantized sums: unbiased, so
 * within a few hundredths over ~2,000 rows) */
Test(gbdt_qgrad, categorical_split_finds_the_category_set)
{
    size_t n = 4000;
    int d = 2, ncat = 30;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    int in_set[30];
    hr_rng r;
    hr_rng_seed(&r, 14);
    for (int c = 0; c < ncat; c++) in_set[c] = hr_rng_uniform(&r) < 0.5f;
    for (size_t i = 0; i < n; i++) {
        int c = (int)hr_rng_below(&r, ncat);
        x[i * d] = (float)c;
        x[i * d + 1] = hr_rng_uniform(&r);
        y[i] = (in_set[c] ? 2.0f : 0.0f) + 0.1f * hr_rng_normal(&r);
    }
    uint8_t cat[2] = {1, 0};
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y, .is_categorical = cat};
    for (int renew = 0; renew < 2; renew++) {
        gbdt_params p;
        gbdt_params_default(&p);
        p.num_rounds = 1;
        p.num_leaves = 3;
        p.learning_rate = 1;
        p.quantized_grad = 1;
        p.renew_leaf = renew;
        gbdt_booster *b;
        cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
        const gbdt_tree *t = gbdt_booster_tree(b, 0);
        cr_assert_eq(t->split_feature[0], 0);
        cr_assert(t->decision_type[0] & 1);
        int left_is_set = (t->cat_threshold[0] >> 0) & 1 ? in_set[0] : !in_set[0];
        for (int c = 0; c < ncat; c++) {
            int bit = (t->cat_threshold[t->cat_boundaries[0] + c / 32] >> (c % 32)) & 1;
            cr_assert_eq(bit, left_is_set ? in_set[c] : !in_set[c], "category %d", c);
        }
        int total = 0;
        for (int l = 0; l < t->num_leaves; l++) total += t->leaf_count[l];
        cr_assert_eq(total, (int)n);
        for (size_t i = 0; i < n; i += 97) {
            double o;
            gbdt_booster_predict_row(b, x + i * d, &o);
            cr_assert_float_eq(o, in_set[(int)x[i * d]] ? 2.0 : 0.0, 0.15, "renew %d row %zu: %g", renew, i, o);
        }
        gbdt_booster_free(b);
    }
    free(x), free(y);
}

/* Settings it cannot serve are refused with a message that names the option. */
Test(gbdt_qgrad, refused_where_it_cannot_apply)
{
    size_t n = 200;
    int d = 3;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(1, n, d, x, y);
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 2;
    p.quantized_grad = 1;
    gbdt_booster *b = NULL;
    p.histogram = GBDT_HISTOGRAM_INT;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "quantized_grad") && strstr(hr_last_error(), "histogram"), "%s", hr_last_error());
    p.histogram = GBDT_HISTOGRAM_FLOAT;
    p.grad_bins = 5;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "grad_bins"), "%s", hr_last_error());
    cr_assert_null(b);
    p.grad_bins = 4;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    cr_assert_eq(gbdt_booster_params(b)->quantized_grad, 1);
    gbdt_booster_free(b);
    b = NULL;
    p.quantized_grad = 0;
    p.hessian_counts = 1;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "hessian_counts") && strstr(hr_last_error(), "quantized_grad"), "%s",
              hr_last_error());
    cr_assert_null(b);
    free(x), free(y);
}

/* hessian_counts: a tree grown from the root histogram of every row (built with other classes') equals the tree
 * grown from its own root over the rows whose words add more than a count (the histograms then differ in their
 * count fields only, and a leaf total's count field is then not the sum of its histogram's); most rows of a rare
 * class quantize to 0. */
Test(gbdt_qgrad, hessian_counts_grow_the_same_tree_from_either_root)
{
    size_t n = 6000;
    int d = 4;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(21, n, d, x, y);
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 255, 1, &bd), 0);
    double *gh = malloc(2 * n * sizeof *gh);
    for (size_t i = 0; i < n; i++) { /* a rare class: 1 row in 20 has a large gradient, the rest tiny ones */
        int rare = i % 20 == 0;
        double pk = rare ? 0.3 : 0.002 * (1.0 + x[i * d]);
        gh[2 * i] = rare ? pk - (x[i * d + 1] > 0 ? 1.0 : 0.0) : pk;
        gh[2 * i + 1] = pk * (1 - pk);
    }
    uint16_t *qc = malloc(n * sizeof *qc);
    gbdt_qgrad q;
    cr_assert_eq(gbdt_qgrad_discretize(gh, n, n, 4, 3, 0, 0, qc, &q), 0);
    cr_assert_gt(q.zeros, n / 2, "%zu of %zu rows are 0", q.zeros, n);
    int *rows = malloc(n * sizeof *rows), cls = 0;
    for (size_t i = 0; i < n; i++) rows[i] = (int)i;
    uint64_t *root = gbdt_hist_alloc(bd.hist_total * sizeof *root);
    cr_assert_eq(gbdt_qhist_build_classes(&bd, rows, n, qc, &q, &cls, 1, 1, &root), 0);
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_leaves = 15;
    p.quantized_grad = 1;
    p.hessian_counts = 1;
    p.min_data_in_leaf = 50;
    p.min_sum_hessian_in_leaf = 0;
    gbdt_grower *g;
    cr_assert_eq(gbdt_grower_new(&bd, &p, 1, &g), 0);
    gbdt_tree a, b;
    cr_assert_eq(gbdt_grower_grow_quant(g, gh, qc, &q, rows, n, NULL, root, &a), 0, "%s", hr_last_error());
    cr_assert_eq(gbdt_grower_grow_quant(g, gh, qc, &q, rows, n, NULL, NULL, &b), 0, "%s", hr_last_error());
    cr_assert_gt(a.num_leaves, 1);
    cr_assert_eq(a.num_leaves, b.num_leaves);
    int ni = a.num_leaves - 1, total = 0;
    cr_assert_eq(memcmp(a.split_feature, b.split_feature, ni * sizeof(int)), 0);
    cr_assert_eq(memcmp(a.threshold, b.threshold, ni * sizeof(double)), 0);
    cr_assert_eq(memcmp(a.split_gain, b.split_gain, ni * sizeof(double)), 0);
    cr_assert_eq(memcmp(a.leaf_value, b.leaf_value, a.num_leaves * sizeof(double)), 0);
    for (int l = 0; l < a.num_leaves; l++) total += a.leaf_count[l];
    cr_assert_eq(total, (int)n, "the leaves' exact counts add up to the rows");
    gbdt_tree_free(&a);
    gbdt_tree_free(&b);
    gbdt_grower_free(g);
    free(root), free(rows), free(qc), free(gh), free(x), free(y);
    gbdt_binned_free(&bd);
}
