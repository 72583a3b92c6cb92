/* gbdt building blocks: binning, histograms, one tree, gradients, and a hand-computed reference. */
#include <criterion/criterion.h>

#include "gbdt/gbdt_internal.h"
#include "test_gbdt_util.h"

Test(gbdt_core, binning_few_distinct_values_get_own_bins_and_nan_its_bin)
{
    float x[] = {3, 1, 2, 2, NAN, 1, 3, 3};
    gbdt_data data = {.x = x, .n = 8, .d = 1};
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 255, 1, &bd), 0);
    const gbdt_bin_mapper *m = &bd.mappers[0];
    cr_assert_eq(m->num_bins, 4); /* 1, 2, 3 and NaN */
    cr_assert_eq(m->upper[0], 1.5);
    cr_assert_eq(m->upper[1], 2.5);
    cr_assert(isinf(m->upper[2]));
    int want[] = {2, 0, 1, 1, 3, 0, 2, 2};
    for (int i = 0; i < 8; i++) cr_assert_eq(gbdt_binned_get(&bd, 0, i), want[i], "row %d", i);
    cr_assert_eq(bd.bin_bytes, 1);
    gbdt_binned_free(&bd);
}

Test(gbdt_core, binning_quantiles_balance_counts_and_respect_bounds)
{
    size_t n = 10000;
    float *x = malloc(n * 2 * sizeof *x);
    hr_rng r;
    hr_rng_seed(&r, 1);
    for (size_t i = 0; i < n; i++) {
        x[2 * i] = hr_rng_normal(&r);
        x[2 * i + 1] = (float)hr_rng_below(&r, 7); /* categorical */
    }
    uint8_t cat[2] = {0, 1};
    gbdt_data data = {.x = x, .n = n, .d = 2, .is_categorical = cat};
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 16, 2, &bd), 0);
    const gbdt_bin_mapper *m = &bd.mappers[0];
    cr_assert_eq(m->num_bins, 17);
    size_t counts[17] = {0};
    for (size_t i = 0; i < n; i++) {
        int b = gbdt_binned_get(&bd, 0, i);
        counts[b]++;
        double v = x[2 * i];
        cr_assert(v <= m->upper[b]);
        if (b > 0) cr_assert(v > m->upper[b - 1]);
    }
    for (int b = 0; b < 16; b++) cr_assert(counts[b] > 400 && counts[b] < 850, "bin %d has %zu", b, counts[b]);
    cr_assert_eq(counts[16], 0);
    const gbdt_bin_mapper *c = &bd.mappers[1];
    cr_assert_eq(c->num_bins, 8);
    for (size_t i = 0; i < n; i++) cr_assert_eq(c->category[gbdt_binned_get(&bd, 1, i)], (int)x[2 * i + 1]);
    /* more bins than 255 switch to 16-bit storage */
    gbdt_binned wide;
    cr_assert_eq(gbdt_binned_build(&data, 1000, 1, &wide), 0);
    cr_assert_eq(wide.bin_bytes, 2);
    cr_assert_gt(wide.mappers[0].num_bins, 900);
    gbdt_binned_free(&wide);
    gbdt_binned_free(&bd);
    free(x);
}

Test(gbdt_core, histogram_subtraction_equals_direct_build)
{
    size_t n = 70000; /* several row blocks */
    int d = 5;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(2, n, d, x, y);
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 63, 2, &bd), 0);
    double *gh = malloc(2 * n * sizeof *gh);
    gbdt_hist_scratch ord;
    cr_assert_eq(gbdt_hist_scratch_init(&ord, &bd), 0);
    hr_rng r;
    hr_rng_seed(&r, 3);
    for (size_t i = 0; i < n; i++) gh[2 * i] = hr_rng_normal(&r), gh[2 * i + 1] = hr_rng_uniform(&r);
    int *all = malloc(n * sizeof *all), *left = malloc(n * sizeof *left), *right = malloc(n * sizeof *right);
    size_t nl = 0, nr = 0;
    for (size_t i = 0; i < n; i++) {
        all[i] = (int)i;
        if (x[i * d] < -0.3f) left[nl++] = (int)i;
        else right[nr++] = (int)i;
    }
    size_t T = bd.hist_total;
    gbdt_hist_bin *hp = malloc(GBDT_HIST_BYTES(T)), *hl = malloc(GBDT_HIST_BYTES(T)), *hr = malloc(GBDT_HIST_BYTES(T));
    cr_assert_eq(gbdt_hist_build(&bd, all, n, gh, NULL, 2, &ord, hp), 0);
    cr_assert_eq(gbdt_hist_build(&bd, left, nl, gh, NULL, 1, &ord, hl), 0);
    cr_assert_eq(gbdt_hist_build(&bd, right, nr, gh, NULL, 3, &ord, hr), 0);
    gbdt_hist_subtract(hp, hl, &bd, NULL);
    for (size_t b = 0; b < T; b++) {
        cr_assert_eq(hp[b].n, hr[b].n);
        cr_assert_float_eq(hp[b].g, hr[b].g, 1e-9);
        cr_assert_float_eq(hp[b].h, hr[b].h, 1e-9);
    }
    /* thread count does not change a histogram bit */
    gbdt_hist_bin *h1 = malloc(GBDT_HIST_BYTES(T));
    cr_assert_eq(gbdt_hist_build(&bd, right, nr, gh, NULL, 1, &ord, h1), 0);
    cr_assert_eq(memcmp(h1, hr, GBDT_HIST_BYTES(T)), 0);
    free(h1), free(hp), free(hl), free(hr), free(all), free(left), free(right), gbdt_hist_scratch_free(&ord);
    free(gh), free(x), free(y);
    gbdt_binned_free(&bd);
}

Test(gbdt_core, class_group_roots_and_bundles_equal_per_class_direct_counts)
{
    /* features of 2..6 values are bundled into shared columns, the continuous ones keep their own; the K
     * root histograms of one pass must equal, bin by bin, sums taken directly from each row's bins */
    size_t n = 5000;
    int d = 7, K = 11;
    float *x = malloc(n * d * sizeof *x);
    hr_rng r;
    hr_rng_seed(&r, 5);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < d; j++)
            x[i * d + j] = j < 5 ? (float)hr_rng_below(&r, (uint64_t)(2 + j)) : hr_rng_normal(&r);
    gbdt_data data = {.x = x, .n = n, .d = d};
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 63, 1, &bd), 0);
    cr_assert_gt(bd.nbundles, 0);
    cr_assert_lt(bd.ncols, d);
    double *gh = malloc(2 * n * (size_t)K * sizeof *gh);
    for (size_t i = 0; i < 2 * n * (size_t)K; i++) gh[i] = i % 2 ? hr_rng_uniform(&r) : hr_rng_normal(&r);
    int *rows = malloc(n * sizeof *rows);
    for (size_t i = 0; i < n; i++) rows[i] = (int)i;
    size_t T = bd.hist_total, F = bd.hist_offset[d];
    gbdt_hist_bin *roots[11], *want = calloc(F, sizeof *want);
    for (int k = 0; k < K; k++) roots[k] = gbdt_hist_alloc(GBDT_HIST_BYTES(T));
    for (int threads = 1; threads <= 3; threads++) {
        cr_assert_eq(gbdt_hist_build_classes(&bd, rows, n, gh, K, threads, roots), 0);
        for (int k = 0; k < K; k++) {
            memset(want, 0, F * sizeof *want);
            for (size_t i = 0; i < n; i++)
                for (int j = 0; j < d; j++) {
                    gbdt_hist_bin *e = &want[bd.hist_offset[j] + (size_t)gbdt_binned_get(&bd, j, i)];
                    e->g += gh[2 * (k * n + i)];
                    e->h += gh[2 * (k * n + i) + 1];
                    e->n += 1;
                }
            for (int j = 0; j < d; j++)
                for (size_t b = bd.hist_offset[j]; b < bd.hist_offset[j + 1]; b++) {
                    cr_assert_eq(roots[k][b].n, want[b].n, "class %d feature %d bin %zu", k, j, b);
                    cr_assert_float_eq(roots[k][b].g, want[b].g, 1e-9);
                    cr_assert_float_eq(roots[k][b].h, want[b].h, 1e-9);
                }
        }
    }
    /* one class's root from the group pass equals the single-class build (both sum rows in order) */
    gbdt_hist_scratch sc;
    cr_assert_eq(gbdt_hist_scratch_init(&sc, &bd), 0);
    gbdt_hist_bin *one = gbdt_hist_alloc(GBDT_HIST_BYTES(T));
    cr_assert_eq(gbdt_hist_build(&bd, rows, n, gh + 2 * 3 * n, NULL, 1, &sc, one), 0);
    for (size_t b = 0; b < F; b++) cr_assert_eq(one[b].g, roots[3][b].g, "bin %zu", b);
    free(one), gbdt_hist_scratch_free(&sc);
    for (int k = 0; k < K; k++) free(roots[k]);
    free(want), free(rows), free(gh), free(x);
    gbdt_binned_free(&bd);
}

Test(gbdt_core, one_tree_reduces_squared_error)
{
    size_t n = 3000;
    int d = 3;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(4, n, d, x, y);
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.learning_rate = 1.0;
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 255, 1, &bd), 0);
    gbdt_grower *g;
    cr_assert_eq(gbdt_grower_new(&bd, &p, 2, &g), 0);
    double *gh = malloc(2 * n * sizeof *gh);
    int *rows = malloc(n * sizeof *rows);
    double before = 0, after = 0;
    for (size_t i = 0; i < n; i++) gh[2 * i] = -y[i], gh[2 * i + 1] = 1, rows[i] = (int)i, before += y[i] * y[i];
    gbdt_tree t;
    cr_assert_eq(gbdt_grower_grow(g, gh, rows, n, NULL, NULL, &t), 0);
    cr_assert_eq(t.num_leaves, 31);
    int leaf_rows = 0;
    for (int l = 0; l < t.num_leaves; l++) leaf_rows += t.leaf_count[l];
    cr_assert_eq(leaf_rows, (int)n);
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - gbdt_tree_predict(&t, x + i * d);
        after += e * e;
    }
    cr_assert_lt(after, 0.1 * before, "sse %g -> %g", before, after);
    cr_assert_eq(gbdt_tree_validate(&t, d, "grown"), 0);
    gbdt_tree_free(&t);
    gbdt_grower_free(g);
    gbdt_binned_free(&bd);
    free(gh), free(rows), free(x), free(y);
}

/* Four rows x = 0, 0, 1, 1 and y = 0, 0, 2, 2: the base score is 1, so g = 1, 1, -1, -1 and h = 1.
 * The only split (x <= 0.5) has G_L = 2, G_R = -2, H_L = H_R = 2, so with lambda_l2 = 1:
 * gain = 2^2/3 + 2^2/3 - 0 = 8/3, leaves -2/3 and +2/3; with lambda_l1 = 0.5 as well T(2) = 1.5:
 * gain = 2 * 1.5^2/3 = 1.5, leaves -0.5 and +0.5. */
Test(gbdt_core, l2_one_split_matches_hand_computation)
{
    float x[] = {0, 0, 1, 1}, y[] = {0, 0, 2, 2};
    gbdt_data data = {.x = x, .n = 4, .d = 1, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 1;
    p.learning_rate = 1;
    p.num_leaves = 2;
    p.min_data_in_leaf = 1;
    p.min_sum_hessian_in_leaf = 0;
    p.lambda_l2 = 1;
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    const gbdt_tree *t = gbdt_booster_tree(b, 0);
    cr_assert_eq(gbdt_booster_num_trees(b), 1);
    cr_assert_eq(t->num_leaves, 2);
    cr_assert_eq(t->threshold[0], 0.5);
    cr_assert_eq(t->split_gain[0], 8.0 / 3);
    cr_assert_eq(t->leaf_value[0], -2.0 / 3);
    cr_assert_eq(t->leaf_value[1], 2.0 / 3);
    cr_assert_eq(t->leaf_count[0], 2);
    cr_assert_eq(t->leaf_weight[1], 2.0);
    double out;
    gbdt_booster_predict_row(b, x, &out);
    cr_assert_eq(out, 1.0 - 2.0 / 3);
    gbdt_booster_free(b);

    p.lambda_l1 = 0.5;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), 0);
    t = gbdt_booster_tree(b, 0);
    cr_assert_eq(t->split_gain[0], 1.5);
    cr_assert_eq(t->leaf_value[0], -0.5);
    cr_assert_eq(t->leaf_value[1], 0.5);
    gbdt_booster_free(b);

    /* min_data_in_leaf = 3 forbids the split: no tree is kept, the prediction is the mean */
    p.min_data_in_leaf = 3;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), 0);
    cr_assert_eq(gbdt_booster_num_trees(b), 0);
    gbdt_booster_predict_row(b, x, &out);
    cr_assert_eq(out, 1.0);
    gbdt_booster_free(b);
}

static double softmax_loss(const double *F, const float *y, int K, double w)
{
    double p[8], l = 0;
    gbdt_softmax(F, K, p);
    for (int k = 0; k < K; k++) l -= w * y[k] * log(p[k]);
    return l;
}

/* g_k = dL/dF_k and h_k = d^2L/dF_k^2 against central differences of the loss and of g. */
Test(gbdt_core, softmax_gradient_and_hessian_match_finite_differences)
{
    enum { K = 4, N = 6 };
    double F[N * K], gh[K * N * 2], gh2[K * N * 2];
    float y[N * K], w[N], yh[N];
    hr_rng r;
    hr_rng_seed(&r, 9);
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int k = 0; k < K; k++) s += y[i * K + k] = hr_rng_uniform(&r) + 0.05f;
        for (int k = 0; k < K; k++) y[i * K + k] /= (float)s;
        for (int k = 0; k < K; k++) F[i * K + k] = 2 * hr_rng_normal(&r);
        w[i] = 0.5f + hr_rng_uniform(&r);
        yh[i] = (float)(i % K);
    }
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    float dummy_x[N] = {0};
    for (int hard = 0; hard < 2; hard++) {
        float yone[N * K];
        for (int i = 0; i < N * K; i++) yone[i] = hard ? (yh[i / K] == i % K) : y[i];
        gbdt_data data = {.x = dummy_x, .n = N, .d = 1, .weight = w};
        if (hard) data.y = yh; else data.y_prob = y;
        cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 2, gh), 0);
        const double eps = 1e-5;
        for (int i = 0; i < N; i++)
            for (int k = 0; k < K; k++) {
                double Fp[N * K], Fm[N * K];
                memcpy(Fp, F, sizeof F);
                memcpy(Fm, F, sizeof F);
                Fp[i * K + k] += eps;
                Fm[i * K + k] -= eps;
                double num_g = (softmax_loss(Fp + i * K, yone + i * K, K, w[i]) -
                                softmax_loss(Fm + i * K, yone + i * K, K, w[i])) / (2 * eps);
                double g = gh[2 * (k * N + i)], h = gh[2 * (k * N + i) + 1];
                cr_assert_float_eq(g, num_g, 1e-7, "g row %d class %d: %g vs %g", i, k, g, num_g);
                double gp[K * N * 2];
                cr_assert_eq(gbdt_objective_gradients(&p, &data, Fp, 1, gp), 0);
                cr_assert_eq(gbdt_objective_gradients(&p, &data, Fm, 1, gh2), 0);
                double num_h = (gp[2 * (k * N + i)] - gh2[2 * (k * N + i)]) / (2 * eps);
                cr_assert_float_eq(h, num_h, 1e-7, "h row %d class %d: %g vs %g", i, k, h, num_h);
            }
    }
    /* L2: g = w (F - y), h = w */
    gbdt_params_default(&p);
    float yl[N];
    for (int i = 0; i < N; i++) yl[i] = (float)i;
    gbdt_data data = {.x = dummy_x, .n = N, .d = 1, .y = yl, .weight = w};
    cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 1, gh), 0);
    for (int i = 0; i < N; i++) {
        cr_assert_float_eq(gh[2 * i], w[i] * (F[i] - yl[i]), 1e-12);
        cr_assert_eq(gh[2 * i + 1], (double)w[i]);
    }
}

Test(gbdt_core, softmax_gradients_match_libm_softmax_over_a_wide_range_of_scores)
{
    /* the gradient path evaluates e^x itself; p must agree with exp()-based softmax within 1e-15 (relative), also
     * where scores differ by hundreds (p underflows) and for class counts that are not multiples of 4 */
    enum { N = 400 };
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    hr_rng r;
    hr_rng_seed(&r, 12);
    for (int K = 2; K <= 71; K += 23) {
        p.num_class = K;
        double *F = malloc(N * (size_t)K * sizeof *F), *gh = malloc(2 * N * (size_t)K * sizeof *gh), prob[71];
        float *y = malloc(N * sizeof *y), x[N] = {0};
        for (int i = 0; i < N; i++) {
            double scale = i % 3 == 0 ? 400.0 : 8.0;
            for (int k = 0; k < K; k++) F[i * K + k] = scale * hr_rng_normal(&r);
            y[i] = (float)(i % K);
        }
        gbdt_data data = {.x = x, .n = N, .d = 1, .y = y};
        cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 2, gh), 0);
        for (int i = 0; i < N; i++) {
            gbdt_softmax(F + i * K, K, prob);
            for (int k = 0; k < K; k++) {
                double g = gh[2 * ((size_t)k * N + i)], want = prob[k] - (y[i] == k);
                double tol = 1e-15 * fabs(prob[k]) + 1e-300 + (y[i] == k ? 2.3e-16 : 0);
                cr_assert(fabs(g - want) <= tol, "K %d row %d class %d: %.17g vs %.17g", K, i, k, g, want);
            }
        }
        free(F), free(gh), free(y);
    }
}

Test(gbdt_core, invalid_params_and_data_are_rejected)
{
    gbdt_params p;
    gbdt_params_default(&p);
    float x[4] = {0, 1, 2, 3}, y[4] = {0, 1, 5, 1};
    gbdt_data data = {.x = x, .n = 4, .d = 1, .y = y};
    gbdt_booster *b;
    p.num_leaves = 1;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), HR_EINVAL);
    cr_assert_null(b);
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = 3;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), HR_EINVAL); /* label 5 */
    cr_assert_not_null(strstr(hr_last_error(), "label"));
    gbdt_params_default(&p);
    p.bagging_fraction = 0;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), HR_EINVAL);
}
