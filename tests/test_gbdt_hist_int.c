/* histogram int: gradients on a fixed-point grid sum exactly, so histograms and trees do not depend on the
 * row order, and training spread over processes (here two threads with an in-memory all-reduce) gives the
 * booster one process trains. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "gbdt/gbdt_internal.h"
#include "helpers/testutil.h"
#include "test_gbdt_util.h"

/* gh (K, n, 2) of the softmax loss at raw scores drawn around 0, for labels y */
static double *softmax_gradients(const gbdt_params *p, const gbdt_data *data, uint64_t seed)
{
    int K = p->num_class;
    double *F = malloc(data->n * (size_t)K * sizeof *F), *gh = malloc(2 * data->n * (size_t)K * sizeof *gh);
    hr_rng r;
    hr_rng_seed(&r, seed);
    for (size_t i = 0; i < data->n * (size_t)K; i++) F[i] = hr_rng_normal(&r);
    cr_assert_eq(gbdt_objective_gradients(p, data, F, 1, gh), 0);
    free(F);
    return gh;
}

Test(gbdt_hist_int, finds_the_split_the_float_histogram_finds)
{
    size_t n = 2000;
    int d = 4;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_regression(3, n, d, x, y);
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_leaves = 8;
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 63, 1, &bd), 0);
    double *gh = malloc(2 * n * sizeof *gh), *ghq = malloc(2 * n * sizeof *ghq);
    for (size_t i = 0; i < n; i++) gh[2 * i] = -y[i], gh[2 * i + 1] = 1.0; /* L2 at F = 0 */
    memcpy(ghq, gh, 2 * n * sizeof *gh);
    int ue[2];
    cr_assert_eq(gbdt_quant_gradients(&p, n, 1, n, ghq, ue), 0);
    cr_assert_eq(ue[1], gbdt_quant_exponent(1.0, gbdt_quant_bits(n)));
    int *rows = malloc(n * sizeof *rows);
    for (size_t i = 0; i < n; i++) rows[i] = (int)i;
    gbdt_grower *g;
    cr_assert_eq(gbdt_grower_new(&bd, &p, 1, &g), 0);
    gbdt_tree tf, ti;
    cr_assert_eq(gbdt_grower_grow(g, gh, rows, n, NULL, NULL, &tf), 0);
    cr_assert_eq(gbdt_grower_grow_exact(g, ghq, rows, n, NULL, NULL, ue, &ti), 0);
    cr_assert_eq(tf.num_leaves, 8);
    cr_assert_eq(ti.num_leaves, tf.num_leaves);
    for (int k = 0; k < tf.num_leaves - 1; k++) {
        cr_assert_eq(ti.split_feature[k], tf.split_feature[k], "node %d", k);
        cr_assert_eq(ti.threshold[k], tf.threshold[k], "node %d", k);
        cr_assert_eq(ti.left_child[k], tf.left_child[k], "node %d", k);
        cr_assert_eq(ti.right_child[k], tf.right_child[k], "node %d", k);
    }
    for (int l = 0; l < tf.num_leaves; l++) {
        cr_assert_eq(ti.leaf_count[l], tf.leaf_count[l], "leaf %d", l);
        cr_assert(fabs(ti.leaf_value[l] - tf.leaf_value[l]) <= 1e-9 * (1 + fabs(tf.leaf_value[l])), "leaf %d: %.17g vs %.17g",
                  l, ti.leaf_value[l], tf.leaf_value[l]);
    }
    gbdt_tree_free(&tf);
    gbdt_tree_free(&ti);
    gbdt_grower_free(g);
    gbdt_binned_free(&bd);
    free(rows);
    free(gh);
    free(ghq);
    free(x);
    free(y);
}

Test(gbdt_hist_int, sums_do_not_depend_on_the_row_order)
{
    size_t n = 6000;
    int d = 5, K = 3;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_classes(5, n, d, K, x, y);
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    gbdt_binned bd;
    cr_assert_eq(gbdt_binned_build(&data, 63, 1, &bd), 0);
    double *gh = softmax_gradients(&p, &data, 9);
    int ue[6];
    cr_assert_eq(gbdt_quant_gradients(&p, n, K, n, gh, ue), 0);
    int *rows = malloc(n * sizeof *rows), *shuffled = malloc(n * sizeof *shuffled);
    for (size_t i = 0; i < n; i++) rows[i] = shuffled[i] = (int)i;
    hr_rng r;
    hr_rng_seed(&r, 77);
    hr_rng_shuffle_int(&r, shuffled, n);
    gbdt_hist_scratch sc;
    cr_assert_eq(gbdt_hist_scratch_init(&sc, &bd), 0);
    size_t bytes = GBDT_HIST_BYTES(bd.hist_total);
    for (int k = 0; k < K; k++) {
        gbdt_hist_bin *a = gbdt_hist_alloc(bytes), *b = gbdt_hist_alloc(bytes);
        const double *ghk = gh + 2 * (size_t)k * n;
        /* in order on one thread, and shuffled over three threads' blocks */
        cr_assert_eq(gbdt_hist_build(&bd, rows, n, ghk, NULL, 1, &sc, a), 0);
        cr_assert_eq(gbdt_hist_build(&bd, shuffled, n, ghk, NULL, 3, &sc, b), 0);
        size_t nonzero = 0;
        for (int j = 0; j < d; j++)
            for (size_t i = bd.hist_offset[j]; i < bd.hist_offset[j + 1]; i++) {
                cr_assert(a[i].g == b[i].g && a[i].h == b[i].h && a[i].n == b[i].n, "class %d feature %d bin %zu: %.17g vs %.17g",
                          k, j, i, a[i].g, b[i].g);
                /* every sum is a whole number of grid steps */
                cr_assert_eq(ldexp(a[i].g, -ue[2 * k]), nearbyint(ldexp(a[i].g, -ue[2 * k])));
                nonzero += a[i].g != 0;
            }
        cr_assert_gt(nonzero, 10);
        free(a);
        free(b);
    }
    gbdt_hist_scratch_free(&sc);
    gbdt_binned_free(&bd);
    free(rows);
    free(shuffled);
    free(gh);
    free(x);
    free(y);
}

/* raw predictions (n, K) of b on x */
static double *predict_all(const gbdt_booster *b, const float *x, size_t n)
{
    double *out = malloc(n * (size_t)gbdt_booster_num_class(b) * sizeof *out);
    cr_assert_eq(gbdt_booster_predict(b, x, n, 1, 1, out), 0);
    return out;
}

Test(gbdt_hist_int, a_booster_on_shuffled_rows_is_the_same)
{
    size_t n = 3000;
    int d = 4, K = 3;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    float *xs = malloc(n * d * sizeof *xs), *ys = malloc(n * sizeof *ys);
    tgb_make_classes(11, n, d, K, x, y);
    int *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = (int)i;
    hr_rng r;
    hr_rng_seed(&r, 12);
    hr_rng_shuffle_int(&r, perm, n);
    for (size_t i = 0; i < n; i++) {
        memcpy(xs + i * d, x + (size_t)perm[i] * d, d * sizeof *x);
        ys[i] = y[perm[i]];
    }
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.num_rounds = 12;
    p.num_leaves = 15;
    p.histogram = GBDT_HISTOGRAM_INT;
    p.num_threads = 2;
    gbdt_data a = {.x = x, .n = n, .d = d, .y = y}, b = {.x = xs, .n = n, .d = d, .y = ys};
    gbdt_booster *ba, *bb;
    cr_assert_eq(gbdt_booster_train(&p, &a, NULL, NULL, NULL, &ba), 0);
    cr_assert_eq(gbdt_booster_train(&p, &b, NULL, NULL, NULL, &bb), 0);
    cr_assert_eq(gbdt_booster_num_trees(ba), gbdt_booster_num_trees(bb));
    double *pa = predict_all(ba, x, n), *pb = predict_all(bb, x, n);
    cr_assert_eq(memcmp(pa, pb, n * K * sizeof *pa), 0, "the row order changed the model");
    /* the file says how its sums were made */
    char *path = test_tmppath(".h5");
    gbdt_booster *back;
    cr_assert_eq(gbdt_booster_save(ba, path), 0);
    cr_assert_eq(gbdt_booster_load(path, &back), 0);
    cr_assert_eq(gbdt_booster_params(back)->histogram, GBDT_HISTOGRAM_INT);
    gbdt_booster_free(back);
    remove(path);
    free(path);
    free(pa);
    free(pb);
    gbdt_booster_free(ba);
    gbdt_booster_free(bb);
    free(perm);
    free(x);
    free(y);
    free(xs);
    free(ys);
}

/* ---- two threads standing for two processes ---- */

/* An all-reduce between the threads of one test: each posts its buffer, waits for the others, computes the
 * result from every posted buffer in rank order, and waits again before anyone reuses a buffer. */
typedef struct fake_world {
    int size;
    pthread_barrier_t bar;
    int64_t *slot[4];
    size_t n[4];
} fake_world;

typedef struct fake_proc {
    fake_world *w;
    hr_comm comm;
    const gbdt_params *p;
    const gbdt_data *train, *valid;
    gbdt_booster *out;
    int rc;
} fake_proc;

static int fake_allreduce(void *ctx, int64_t *buf, size_t n, hr_reduce_op op)
{
    fake_proc *me = ctx;
    fake_world *w = me->w;
    w->slot[me->comm.rank] = buf;
    w->n[me->comm.rank] = n;
    pthread_barrier_wait(&w->bar);
    int same = 1;
    for (int r = 0; r < w->size; r++) same &= w->n[r] == n;
    int64_t *tmp = calloc(n + 1, sizeof *tmp);
    for (size_t i = 0; same && i < n; i++) {
        int64_t v = w->slot[0][i];
        for (int r = 1; r < w->size; r++) v = op == HR_REDUCE_SUM ? v + w->slot[r][i] : (w->slot[r][i] > v ? w->slot[r][i] : v);
        tmp[i] = v;
    }
    pthread_barrier_wait(&w->bar);
    if (same) memcpy(buf, tmp, n * sizeof *buf);
    free(tmp);
    return same ? HR_OK : hr_error(HR_ESTATE, "fake all-reduce: processes disagree on the length");
}

static void *fake_train(void *arg)
{
    fake_proc *me = arg;
    gbdt_params p = *me->p;
    p.comm = &me->comm;
    me->rc = gbdt_booster_train(&p, me->train, me->valid, NULL, NULL, &me->out);
    return NULL;
}

/* trains p on train over `size` threads as processes and checks each booster predicts x exactly as one
 * process's */
static void check_spread(const gbdt_params *p, const gbdt_data *train, const gbdt_data *valid, int size)
{
    gbdt_booster *one;
    cr_assert_eq(gbdt_booster_train(p, train, valid, NULL, NULL, &one), 0, "%s", hr_last_error());
    fake_world w = {.size = size};
    pthread_barrier_init(&w.bar, NULL, (unsigned)size);
    fake_proc procs[4];
    pthread_t th[4];
    for (int r = 0; r < size; r++) {
        procs[r] = (fake_proc){&w, {r, size, fake_allreduce, &procs[r]}, p, train, valid, NULL, 0};
        cr_assert_eq(pthread_create(&th[r], NULL, fake_train, &procs[r]), 0);
    }
    for (int r = 0; r < size; r++) pthread_join(th[r], NULL);
    pthread_barrier_destroy(&w.bar);
    int K = gbdt_booster_num_class(one);
    double *want = predict_all(one, train->x, train->n);
    for (int r = 0; r < size; r++) {
        cr_assert_eq(procs[r].rc, 0, "process %d of %d failed", r, size);
        cr_assert_eq(gbdt_booster_num_trees(procs[r].out), gbdt_booster_num_trees(one), "process %d of %d", r, size);
        cr_assert_eq(gbdt_booster_best_iteration(procs[r].out), gbdt_booster_best_iteration(one));
        double *got = predict_all(procs[r].out, train->x, train->n);
        cr_assert_eq(memcmp(got, want, train->n * (size_t)K * sizeof *got), 0, "process %d of %d: another model", r, size);
        free(got);
        gbdt_booster_free(procs[r].out);
    }
    free(want);
    gbdt_booster_free(one);
}

Test(gbdt_hist_int, softmax_spread_over_processes_is_the_one_process_model)
{
    size_t n = 2400, nv = 400;
    int d = 5, K = 4;
    float *x = malloc((n + nv) * d * sizeof *x), *y = malloc((n + nv) * sizeof *y);
    tgb_make_classes(21, n + nv, d, K, x, y);
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y}, valid = {.x = x + n * d, .n = nv, .d = d, .y = y + n};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.num_rounds = 15;
    p.num_leaves = 12;
    p.min_data_in_leaf = 5;
    p.early_stopping_rounds = 3;
    p.histogram = GBDT_HISTOGRAM_INT;
    p.num_threads = 1;
    check_spread(&p, &train, &valid, 2);
    /* bagging and feature sampling follow the global row indices and the seed */
    p.bagging_fraction = 0.7;
    p.bagging_freq = 2;
    p.feature_fraction = 0.6;
    check_spread(&p, &train, &valid, 3);
    free(x);
    free(y);
}

Test(gbdt_hist_int, regression_spread_over_processes_is_the_one_process_model)
{
    size_t n = 3001;
    int d = 4;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    tgb_make_regression(31, n, d, x, y);
    for (size_t i = 0; i < n; i++) w[i] = 0.5f + (float)(i % 7) / 4.0f;
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y, .weight = w};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 10;
    p.histogram = GBDT_HISTOGRAM_INT;
    p.num_threads = 1;
    p.bagging_fraction = 0.5;
    p.bagging_freq = 1;
    check_spread(&p, &train, NULL, 2);
    free(x);
    free(y);
    free(w);
}

Test(gbdt_hist_int, several_processes_need_the_int_histogram)
{
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    gbdt_data train = {.x = x, .n = 8, .d = 1, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    hr_comm two = {0, 2, fake_allreduce, NULL};
    p.comm = &two;
    gbdt_booster *b = NULL;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), HR_EINVAL);
    cr_assert_null(b);
    cr_assert(strstr(hr_last_error(), "histogram int") != NULL, "%s", hr_last_error());
}
