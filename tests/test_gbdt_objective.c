/* The softmax objective's row-parallel evaluation: a row's gradients and a leaf's step depend on that row's and that
 * leaf's values only, not on which rows share a block, a chunk or a thread. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "gbdt/gbdt_internal.h"
#include "helpers/testutil.h"

Test(gbdt_objective, softmax_gradients_of_a_row_do_not_depend_on_the_rows_beside_it)
{
    /* 37 rows: blocks of rows end inside the data; scores that underflow e^x (a difference of hundreds) too */
    enum { N = 37, KMAX = 70 };
    hr_rng r;
    hr_rng_seed(&r, 5);
    for (int K = 5; K <= KMAX; K += 65)
        for (int mode = 0; mode < 3; mode++) { /* hard labels, hard labels and weights, soft labels and weights */
            gbdt_params p;
            gbdt_params_default(&p);
            p.objective = GBDT_OBJECTIVE_SOFTMAX;
            p.num_class = K;
            double *F = malloc(N * (size_t)K * sizeof *F), *gh = malloc(2 * N * (size_t)K * sizeof *gh),
                   *gh3 = malloc(2 * N * (size_t)K * sizeof *gh3), one[2 * KMAX];
            float *yp = calloc(N * (size_t)K, sizeof *yp), y[N], w[N], x[N] = {0};
            for (int i = 0; i < N; i++) {
                for (int k = 0; k < K; k++) F[i * K + k] = (i % 4 == 0 ? 300.0 : 3.0) * hr_rng_normal(&r);
                y[i] = (float)hr_rng_below(&r, (uint64_t)K);
                w[i] = i % 7 == 3 ? 0.0f : (float)(0.25 + hr_rng_uniform(&r));
                yp[i * K + (int)y[i]] = 0.75f;
                yp[i * K + (i % K)] += 0.25f;
            }
            gbdt_data data = {.x = x, .n = N, .d = 1};
            if (mode < 2) data.y = y; else data.y_prob = yp;
            if (mode > 0) data.weight = w;
            cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 1, gh), 0);
            cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 3, gh3), 0);
            cr_assert(!memcmp(gh, gh3, 2 * N * (size_t)K * sizeof *gh), "K %d mode %d: 1 and 3 threads differ", K,
                      mode);
            for (int i = 0; i < N; i++) {
                gbdt_data row = {.x = x, .n = 1, .d = 1};
                if (mode < 2) row.y = y + i; else row.y_prob = yp + i * K;
                if (mode > 0) row.weight = w + i;
                cr_assert_eq(gbdt_objective_gradients(&p, &row, F + i * K, 1, one), 0);
                for (int k = 0; k < K; k++)
                    cr_assert(!memcmp(one + 2 * k, gh + 2 * ((size_t)k * N + i), 2 * sizeof *one),
                              "K %d mode %d row %d class %d: %.17g %.17g alone, %.17g %.17g among others", K, mode,
                              i, k, one[2 * k], one[2 * k + 1], gh[2 * ((size_t)k * N + i)],
                              gh[2 * ((size_t)k * N + i) + 1]);
            }
            free(F), free(gh), free(gh3), free(yp);
        }
}

/* phi'(x) of a class-k leaf (gbdt_objective_softmax_steps) in long double, from the probabilities behind gh
 * (n, 2), the class's gradients */
static double leaf_slope(const gbdt_data *data, const double *gh, int k, const int *rows, size_t m, double x,
                         double l2)
{
    long double s = 0;
    for (size_t i = 0; i < m; i++) {
        int r = rows[i];
        double w = data->weight[r], y = (int)data->y[r] == k;
        if (w <= 0) continue;
        long double pk = gh[2 * r] / w + y, q = pk * expl(x) / (1 - pk + pk * expl(x));
        s += w * (q - y);
    }
    return (double)(s + l2 * x);
}

Test(gbdt_objective, softmax_steps_reach_the_minimiser_and_ignore_row_order_on_the_grid_and_zero_weights)
{
    /* leaves of 300 rows (several chunks of rows), each row of class 0 in one of two leaves; one row in five
     * weighs 0 */
    enum { N = 600, K = 3, L = 4 };
    hr_rng r;
    hr_rng_seed(&r, 9);
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.lambda_l2 = 0.5;
    double F[N * K], gh[2 * N * K];
    float y[N], w[N], x[N] = {0};
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < K; k++) F[i * K + k] = 2.0 * hr_rng_normal(&r) + (k == 0 ? 3.0 : 0.0);
        y[i] = (float)(i % 5 == 1 ? 1 : i % 5 == 2 ? 2 : 0);
        w[i] = i % 5 == 4 ? 0.0f : (float)(0.5 + hr_rng_uniform(&r));
    }
    gbdt_data data = {.x = x, .n = N, .d = 1, .y = y, .weight = w};
    cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 1, gh), 0);
    /* leaves 0, 1: even and odd rows of class 0; 2, 3: the same of class 1 */
    int rows[L][N / 2], rev[L][N / 2], pos[L][N / 2], cls[L] = {0, 0, 1, 1};
    size_t nrows[L] = {N / 2, N / 2, N / 2, N / 2}, npos[L] = {0};
    double newton[L], steps[L], again[L];
    for (int l = 0; l < L; l++) {
        double G = 0, H = 0;
        for (int i = 0; i < N / 2; i++) {
            int row = 2 * i + l % 2;
            rows[l][i] = row, rev[l][N / 2 - 1 - i] = row;
            if (w[row] > 0) pos[l][npos[l]++] = row;
            G += gh[2 * (cls[l] * N + row)], H += gh[2 * (cls[l] * N + row) + 1];
        }
        /* leaves 0 and 2 overshoot: the search must find the root of phi' */
        newton[l] = -G / (H + p.lambda_l2) * (l % 2 == 0 ? 6.0 : 0.5);
    }
    const int *rp[L] = {rows[0], rows[1], rows[2], rows[3]}, *rr[L] = {rev[0], rev[1], rev[2], rev[3]},
              *pp[L] = {pos[0], pos[1], pos[2], pos[3]};
    cr_assert_eq(gbdt_objective_softmax_steps(&p, &data, gh, cls, L, rp, NULL, NULL, nrows, newton, INT_MIN, steps), 0);
    for (int l = 0; l < L; l++) {
        if (l % 2) {
            cr_assert_eq(steps[l], newton[l], "leaf %d: a Newton step that falls short is kept", l);
            continue;
        }
        cr_assert(steps[l] * newton[l] > 0 && fabs(steps[l]) < fabs(newton[l]), "leaf %d: %g of %g", l, steps[l],
                  newton[l]);
        double slope = leaf_slope(&data, gh + 2 * cls[l] * N, cls[l], rows[l], nrows[l], steps[l], p.lambda_l2);
        cr_assert(fabs(slope) < 1e-7, "leaf %d: phi'(%.17g) = %g", l, steps[l], slope);
    }
    /* the rows' gradients handed over in the rows' order (as a renewing tree keeps them) give the same steps */
    double ord[L][N / 2];
    for (int l = 0; l < L; l++)
        for (size_t i = 0; i < nrows[l]; i++) ord[l][i] = gh[2 * (cls[l] * N + rows[l][i])];
    const double *op[L] = {ord[0], ord[1], ord[2], ord[3]};
    cr_assert_eq(gbdt_objective_softmax_steps(&p, &data, gh, cls, L, rp, op, NULL, nrows, newton, INT_MIN, again), 0);
    for (int l = 0; l < L; l++) cr_assert_eq(steps[l], again[l], "leaf %d, ordered: %.17g vs %.17g", l, steps[l], again[l]);
    /* rows of weight 0 add nothing (their p is 0/0) */
    cr_assert_eq(gbdt_objective_softmax_steps(&p, &data, gh, cls, L, pp, NULL, NULL, npos, newton, INT_MIN, again), 0);
    for (int l = 0; l < L; l++) cr_assert_eq(steps[l], again[l], "leaf %d: %.17g vs %.17g", l, steps[l], again[l]);
    /* on the grid 2^-30 the sums are exact: the rows' order does not matter */
    cr_assert_eq(gbdt_objective_softmax_steps(&p, &data, gh, cls, L, rp, NULL, NULL, nrows, newton, -30, steps), 0);
    cr_assert_eq(gbdt_objective_softmax_steps(&p, &data, gh, cls, L, rr, NULL, NULL, nrows, newton, -30, again), 0);
    for (int l = 0; l < L; l++) {
        cr_assert_eq(steps[l], again[l], "leaf %d on the grid: %.17g vs %.17g", l, steps[l], again[l]);
        double slope = leaf_slope(&data, gh + 2 * cls[l] * N, cls[l], rows[l], nrows[l], steps[l], p.lambda_l2);
        if (l % 2 == 0) cr_assert(fabs(slope) < 1e-6, "leaf %d on the grid: phi'(%.17g) = %g", l, steps[l], slope);
    }
}

/* Hard labels without l1 or l2: a leaf with no row of its class (no g < 0) stepping down, or only rows of its class
 * stepping up, keeps its Newton step however long, and handing over the count of g < 0 (which skips reading those
 * leaves' rows) gives the very steps of the full search, mixed leaves included. */
Test(gbdt_objective, one_sided_leaves_keep_their_newton_step)
{
    enum { N = 400, K = 3, L = 6 };
    hr_rng r;
    hr_rng_seed(&r, 13);
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    double F[N * K], gh[2 * N * K];
    float y[N], x[N] = {0};
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < K; k++) F[i * K + k] = 2.0 * hr_rng_normal(&r);
        y[i] = (float)(i % K);
    }
    gbdt_data data = {.x = x, .n = N, .d = 1, .y = y};
    cr_assert_eq(gbdt_objective_gradients(&p, &data, F, 1, gh), 0);
    /* class 0: leaves 0, 1 hold rows of classes 1 and 2 only, leaves 2, 3 rows of class 0 only, 4, 5 all rows */
    int rows[L][N], cls[L] = {0, 0, 0, 0, 0, 0};
    size_t nrows[L] = {0}, neg[L] = {0};
    for (int i = 0; i < N; i++) {
        int l = y[i] != 0 ? i % 2 : 2 + i % 2;
        rows[l][nrows[l]++] = i;
        rows[4 + i % 2][nrows[4 + i % 2]++] = i;
    }
    double newton[L], full[L], fast[L];
    const double *gl[L];
    double ord[L][N];
    for (int l = 0; l < L; l++) {
        double G = 0, H = 0;
        for (size_t i = 0; i < nrows[l]; i++) {
            G += ord[l][i] = gh[2 * rows[l][i]];
            H += gh[2 * rows[l][i] + 1];
            neg[l] += ord[l][i] < 0;
        }
        gl[l] = ord[l];
        newton[l] = -G / H * (l % 2 ? 0.5 : 3.0); /* overshooting and falling-short Newton steps */
    }
    cr_assert_eq(neg[0] + neg[1], 0);
    cr_assert_eq(neg[2] + neg[3], nrows[2] + nrows[3]);
    const int *rp[L] = {rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]};
    cr_assert_eq(gbdt_objective_softmax_steps(&p, &data, gh, cls, L, rp, gl, NULL, nrows, newton, INT_MIN, full), 0);
    cr_assert_eq(gbdt_objective_softmax_steps(&p, &data, gh, cls, L, rp, gl, neg, nrows, newton, INT_MIN, fast), 0);
    for (int l = 0; l < L; l++) cr_assert_eq(full[l], fast[l], "leaf %d: %.17g vs %.17g", l, full[l], fast[l]);
    for (int l = 0; l < 4; l++) { /* steps are capped at +-10 */
        double capped = newton[l] > 10 ? 10 : newton[l] < -10 ? -10 : newton[l];
        cr_assert_eq(full[l], capped, "leaf %d keeps its Newton step: %.17g of %.17g", l, full[l], newton[l]);
    }
    cr_assert_neq(full[4], newton[4], "the mixed leaf's overshooting Newton step is replaced");
}
