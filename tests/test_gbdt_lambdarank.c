/* The LambdaRank objective: its gradients against a hand-computed pair, its refusal of data without queries, and
 * a booster that learns to rank synthetic queries, the same for one and two threads. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "gbdt/gbdt_internal.h"

/* One query of two rows, relevance 1 and 0, scores 0 and 0 (the first row ranks first on the tie):
 * IDCG = (2^1 - 1) / log2(2) = 1; swapping the two changes NDCG by (1 - 0) (1/log2(2) - 1/log2(3)) = 0.369070;
 * r = 1 / (1 + e^0) = 1/2, so g = -0.184535 for the relevant row and +0.184535 for the other, h = 0.092267 each. */
Test(gbdt_lambdarank, gradients_of_one_pair_hand_computed)
{
    float x[2] = {0, 1}, y[2] = {1, 0};
    size_t query[2] = {0, 2};
    gbdt_data data = {.x = x, .n = 2, .d = 1, .y = y, .query = query, .n_query = 1};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_LAMBDARANK;
    double F[2] = {0, 0}, gh[4];
    cr_assert_eq(gbdt_data_check(&p, &data, "training"), HR_OK, "%s", hr_last_error());
    cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 1, gh), HR_OK);
    double d = 1.0 - 1.0 / log2(3.0);
    cr_assert_float_eq(gh[0], -0.5 * d, 1e-12);
    cr_assert_float_eq(gh[2], 0.5 * d, 1e-12);
    cr_assert_float_eq(gh[1], 0.25 * d, 1e-12);
    cr_assert_float_eq(gh[3], 0.25 * d, 1e-12);
    /* NDCG@1 is 1 when the relevant row scores highest, 0 when the other does */
    cr_assert_float_eq(gbdt_objective_metric(&p, &data, F), 0.0, 1e-12);
    double G[2] = {0, 1};
    cr_assert_float_eq(gbdt_objective_metric(&p, &data, G), 1.0, 1e-12);
    /* no query boundaries: refused */
    data.query = NULL;
    cr_assert_eq(gbdt_data_check(&p, &data, "training"), HR_EINVAL);
}

/* 200 training queries of 20 rows, relevance a hidden function of two features: the booster's pick is the most
 * relevant row (or close to it) on 50 unseen queries, and one and two threads give the same trees. */
Test(gbdt_lambdarank, learns_to_rank_and_is_thread_count_independent, .timeout = 120)
{
    enum { Q = 250, M = 20, D = 3 };
    size_t n = (size_t)Q * M, nt = (size_t)200 * M;
    float *x = malloc(n * D * sizeof *x), *y = malloc(n * sizeof *y);
    size_t query[Q + 1];
    hr_rng r;
    hr_rng_seed(&r, 5);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < D; j++) x[i * D + j] = hr_rng_uniform(&r);
        float v = x[i * D] - 0.5f * x[i * D + 1];
        y[i] = v > 0 ? v : 0;
    }
    for (int q = 0; q <= Q; q++) query[q] = (size_t)q * M;
    size_t vquery[Q - 200 + 1];
    for (int q = 0; q <= Q - 200; q++) vquery[q] = (size_t)q * M;
    gbdt_data tr = {.x = x, .n = nt, .d = D, .y = y, .query = query, .n_query = 200};
    gbdt_data va = {.x = x + nt * D, .n = n - nt, .d = D, .y = y + nt, .query = vquery, .n_query = Q - 200};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_LAMBDARANK;
    p.num_rounds = 40;
    p.num_leaves = 15;
    p.learning_rate = 0.2;
    p.log_every = 0;
    p.num_threads = 1;
    gbdt_booster *a, *b;
    cr_assert_eq(gbdt_booster_train(&p, &tr, &va, NULL, NULL, &a), HR_OK, "%s", hr_last_error());
    p.num_threads = 2;
    cr_assert_eq(gbdt_booster_train(&p, &tr, &va, NULL, NULL, &b), HR_OK, "%s", hr_last_error());
    double *fa = malloc((n - nt) * sizeof *fa), *fb = malloc((n - nt) * sizeof *fb);
    cr_assert_eq(gbdt_booster_predict(a, va.x, va.n, 1, 1, fa), HR_OK);
    cr_assert_eq(gbdt_booster_predict(b, va.x, va.n, 1, 1, fb), HR_OK);
    for (size_t i = 0; i < va.n; i++) cr_assert_eq(fa[i], fb[i], "row %zu", i);
    double ndcg1 = 1.0 - gbdt_objective_metric(&p, &va, fa);
    cr_assert_gt(ndcg1, 0.9, "validation NDCG@1 %.4f", ndcg1);
    gbdt_booster_free(a);
    gbdt_booster_free(b);
    free(fa);
    free(fb);
    free(x);
    free(y);
}
