/* gbdt training: accuracy on synthetic problems, categorical and NaN handling, determinism across
 * thread counts, early stopping, warm start, importance. */
#include <criterion/criterion.h>

#include "test_gbdt_util.h"

static double mse(const gbdt_booster *b, const float *x, const float *y, size_t n, int d)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double o;
        gbdt_booster_predict_row(b, x + i * d, &o);
        s += (o - y[i]) * (o - y[i]);
    }
    return s / n;
}

Test(gbdt_train, l2_regression_fits_a_smooth_function)
{
    size_t n = 4000, nt = 1000;
    int d = 5;
    float *x = malloc((n + nt) * d * sizeof *x), *y = malloc((n + nt) * sizeof *y);
    tgb_make_regression(11, n + nt, d, x, y);
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 150;
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    double var = 0, mean = 0;
    for (size_t i = n; i < n + nt; i++) mean += y[i] / nt;
    for (size_t i = n; i < n + nt; i++) var += (y[i] - mean) * (y[i] - mean) / nt;
    double test = mse(b, x + n * d, y + n, nt, d);
    cr_assert_lt(test, 0.03 * var, "test mse %g, variance %g", test, var);
    /* importance: the noise features x3, x4 matter least */
    double imp[5];
    gbdt_booster_importance(b, GBDT_IMPORTANCE_GAIN, imp);
    cr_assert_gt(imp[0], 10 * imp[3]);
    cr_assert_gt(imp[1], 10 * imp[4]);
    gbdt_booster_importance(b, GBDT_IMPORTANCE_SPLIT, imp);
    double splits = 0;
    for (int j = 0; j < 5; j++) splits += imp[j];
    cr_assert_eq(splits, 150.0 * 30);
    gbdt_booster_free(b);
    free(x), free(y);
}

Test(gbdt_train, l2_with_weights_and_init_score)
{
    /* two groups with different targets; the weighted base score is the weighted mean */
    size_t n = 200;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    double *init = malloc(n * sizeof *init);
    for (size_t i = 0; i < n; i++) x[i] = 0, y[i] = i < 100 ? 0.f : 1.f, w[i] = i < 100 ? 3.f : 1.f, init[i] = 10;
    gbdt_data data = {.x = x, .n = n, .d = 1, .y = y, .weight = w};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 5;
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    double o;
    gbdt_booster_predict_row(b, x, &o);
    cr_assert_float_eq(o, 0.25, 1e-12);
    gbdt_booster_free(b);
    /* with an init score of 10 per row the trees must pull the prediction down by ~9.75 */
    data.init_score = init;
    p.num_rounds = 200;
    p.learning_rate = 0.2;
    cr_assert_eq(gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b), 0);
    gbdt_booster_predict_row(b, x, &o);
    cr_assert_float_eq(o + 10, 0.25, 1e-6, "%g", o + 10);
    gbdt_booster_free(b);
    free(x), free(y), free(w), free(init);
}

Test(gbdt_train, multiclass_hard_labels_reach_high_accuracy)
{
    size_t n = 3000, nt = 1000;
    int d = 4, K = 3;
    float *x = malloc((n + nt) * d * sizeof *x), *y = malloc((n + nt) * sizeof *y);
    tgb_make_classes(12, n + nt, d, K, x, y);
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.num_rounds = 60;
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    cr_assert_eq(gbdt_booster_num_trees(b), 60 * K);
    int correct = 0;
    for (size_t i = n; i < n + nt; i++) {
        double pr[3];
        gbdt_booster_predict_row(b, x + i * d, pr);
        cr_assert_float_eq(pr[0] + pr[1] + pr[2], 1.0, 1e-12);
        correct += tgb_argmax(pr, K) == (int)y[i];
    }
    cr_assert_gt(correct, 0.95 * nt, "accuracy %d / %zu", correct, nt);
    gbdt_booster_free(b);
    free(x), free(y);
}

/* Soft targets p*(x) = softmax(3 (a_k . x)): the fitted probabilities approach them. */
Test(gbdt_train, multiclass_soft_labels_recover_target_probabilities)
{
    size_t n = 4000, nt = 500;
    int d = 3, K = 3;
    float *x = malloc((n + nt) * d * sizeof *x), *yp = malloc((n + nt) * K * sizeof *yp);
    hr_rng r;
    hr_rng_seed(&r, 13);
    for (size_t i = 0; i < n + nt; i++) {
        for (int j = 0; j < d; j++) x[i * d + j] = 2 * hr_rng_uniform(&r) - 1;
        double F[3] = {3 * x[i * d], 3 * x[i * d + 1], -1.5 * (x[i * d] + x[i * d + 1])}, pr[3];
        double m = fmax(F[0], fmax(F[1], F[2])), s = 0;
        for (int k = 0; k < K; k++) s += pr[k] = exp(F[k] - m);
        for (int k = 0; k < K; k++) yp[i * K + k] = (float)(pr[k] / s);
    }
    gbdt_data train = {.x = x, .n = n, .d = d, .y_prob = yp};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.num_rounds = 100;
    p.num_leaves = 15;
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    double err = 0;
    for (size_t i = n; i < n + nt; i++) {
        double pr[3];
        gbdt_booster_predict_row(b, x + i * d, pr);
        for (int k = 0; k < K; k++) err += fabs(pr[k] - yp[i * K + k]) / (nt * K);
    }
    cr_assert_lt(err, 0.03, "mean abs probability error %g", err);
    gbdt_booster_free(b);
    free(x), free(yp);
}

Test(gbdt_train, categorical_split_finds_the_category_set)
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
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 1;
    p.num_leaves = 2;
    p.learning_rate = 1;
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
    /* unseen and invalid categories go right */
    float probe[2] = {77, 0.5f}, neg[2] = {-1, 0.5f}, nan_[2] = {NAN, 0.5f};
    cr_assert_eq(gbdt_tree_predict_leaf(t, probe), ~t->right_child[0]);
    cr_assert_eq(gbdt_tree_predict_leaf(t, neg), ~t->right_child[0]);
    cr_assert_eq(gbdt_tree_predict_leaf(t, nan_), ~t->right_child[0]);
    gbdt_booster_free(b);
    free(x), free(y);
}

/* y = [x > 0] where x is known; rows with NaN have y = nan_target, so NaN must follow that side. */
static void check_nan_direction(float nan_target, int want_left)
{
    size_t n = 2000;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    hr_rng r;
    hr_rng_seed(&r, 15);
    for (size_t i = 0; i < n; i++) {
        x[i] = 2 * hr_rng_uniform(&r) - 1;
        y[i] = x[i] > 0 ? 1.0f : 0.0f;
        if (i % 5 == 0) x[i] = NAN, y[i] = nan_target;
    }
    gbdt_data train = {.x = x, .n = n, .d = 1, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 30;
    p.num_leaves = 2;
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
    const gbdt_tree *t = gbdt_booster_tree(b, 0);
    cr_assert_eq((t->decision_type[0] >> 1) & 1, want_left);
    cr_assert_eq((t->decision_type[0] >> 2) & 3, 2); /* missing type NaN */
    float q = NAN;
    double o;
    gbdt_booster_predict_row(b, &q, &o);
    cr_assert_float_eq(o, nan_target, 0.1, "NaN predicts %g", o);
    gbdt_booster_free(b);
    free(x), free(y);
}

Test(gbdt_train, nan_default_direction_is_learned)
{
    check_nan_direction(0.0f, 1);
    check_nan_direction(1.0f, 0);
}

static void assert_same_trees(const gbdt_booster *a, const gbdt_booster *b)
{
    cr_assert_eq(gbdt_booster_num_trees(a), gbdt_booster_num_trees(b));
    for (int i = 0; i < gbdt_booster_num_trees(a); i++) {
        const gbdt_tree *s = gbdt_booster_tree(a, i), *t = gbdt_booster_tree(b, i);
        int ni = s->num_leaves - 1, nl = s->num_leaves;
        cr_assert_eq(s->num_leaves, t->num_leaves, "tree %d", i);
        cr_assert_eq(s->num_cat, t->num_cat);
        cr_assert_eq(memcmp(s->split_feature, t->split_feature, ni * sizeof(int)), 0);
        cr_assert_eq(memcmp(s->threshold, t->threshold, ni * sizeof(double)), 0);
        cr_assert_eq(memcmp(s->split_gain, t->split_gain, ni * sizeof(double)), 0);
        cr_assert_eq(memcmp(s->decision_type, t->decision_type, ni), 0);
        cr_assert_eq(memcmp(s->left_child, t->left_child, ni * sizeof(int)), 0);
        cr_assert_eq(memcmp(s->right_child, t->right_child, ni * sizeof(int)), 0);
        cr_assert_eq(memcmp(s->leaf_value, t->leaf_value, nl * sizeof(double)), 0, "tree %d leaf values", i);
        cr_assert_eq(memcmp(s->cat_threshold, t->cat_threshold, s->cat_boundaries[s->num_cat] * sizeof(uint32_t)), 0);
    }
}

Test(gbdt_train, bit_identical_for_1_2_3_threads)
{
    /* enough rows (> 2 histogram blocks of 16384) and bins (> 8192) that histograms and the split
     * search really run in parallel */
    size_t n = 40000;
    int d = 36, K = 3;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    tgb_make_classes(16, n, d, K, x, y);
    hr_rng r;
    hr_rng_seed(&r, 17);
    uint8_t cat[36] = {0};
    cat[5] = 1;
    for (size_t i = 0; i < n; i++) {
        x[i * d + 5] = (float)hr_rng_below(&r, 20);
        if (hr_rng_uniform(&r) < 0.05f) x[i * d + 1] = NAN;
        w[i] = 0.5f + hr_rng_uniform(&r);
    }
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y, .weight = w, .is_categorical = cat};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.num_rounds = 4;
    p.bagging_fraction = 0.9;
    p.bagging_freq = 1;
    p.feature_fraction = 0.8;
    p.seed = 99;
    gbdt_booster *b[3];
    for (int t = 0; t < 3; t++) {
        p.num_threads = t + 1;
        cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b[t]), 0, "%s", hr_last_error());
    }
    assert_same_trees(b[0], b[1]);
    assert_same_trees(b[0], b[2]);
    /* a different seed gives a different model (the bagging is really random) */
    gbdt_booster *other;
    p.seed = 100;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &other), 0);
    cr_assert_neq(memcmp(gbdt_booster_tree(other, 0)->leaf_value, gbdt_booster_tree(b[0], 0)->leaf_value,
                         sizeof(double)), 0);
    for (int t = 0; t < 3; t++) gbdt_booster_free(b[t]);
    gbdt_booster_free(other);
    free(x), free(y), free(w);
}

Test(gbdt_train, early_stopping_stops_at_the_best_iteration)
{
    size_t n = 600, nv = 600;
    int d = 5;
    float *x = malloc((n + nv) * d * sizeof *x), *y = malloc((n + nv) * sizeof *y);
    tgb_make_regression(18, n + nv, d, x, y);
    hr_rng r;
    hr_rng_seed(&r, 19);
    for (size_t i = 0; i < n + nv; i++) y[i] += hr_rng_normal(&r); /* heavy noise: overfits quickly */
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y}, valid = {.x = x + n * d, .n = nv, .d = d, .y = y + n};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 1000;
    p.learning_rate = 0.3;
    p.num_leaves = 63;
    p.min_data_in_leaf = 2;
    p.early_stopping_rounds = 10;
    p.log_every = 5;
    char *logbuf = NULL;
    size_t loglen = 0;
    FILE *mem = open_memstream(&logbuf, &loglen);
    hr_log log = {mem, HR_LOG_INFO};
    gbdt_booster *b;
    cr_assert_eq(gbdt_booster_train(&p, &train, &valid, NULL, &log, &b), 0, "%s", hr_last_error());
    fclose(mem);
    int best = gbdt_booster_best_iteration(b);
    cr_assert_lt(gbdt_booster_num_iterations(b), 200);
    cr_assert_gt(best, 0);
    cr_assert_eq(gbdt_booster_num_iterations(b), best);
    cr_assert_not_null(strstr(logbuf, "early stopping"), "log: %s", logbuf);
    cr_assert_not_null(strstr(logbuf, "[5] train l2"), "log: %s", logbuf);
    /* the kept model is the best on the validation set: one more or one fewer iteration is not better */
    double vbest = mse(b, valid.x, valid.y, nv, d);
    p.early_stopping_rounds = 0;
    p.num_rounds = best + 5;
    gbdt_booster *longer;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &longer), 0);
    cr_assert_geq(mse(longer, valid.x, valid.y, nv, d), vbest);
    free(logbuf);
    gbdt_booster_free(b);
    gbdt_booster_free(longer);
    free(x), free(y);
}

Test(gbdt_train, warm_start_continues_with_more_trees_and_lower_loss)
{
    size_t n = 2000;
    int d = 4, K = 3;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    tgb_make_classes(20, n, d, K, x, y);
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.num_rounds = 10;
    gbdt_booster *b1, *b2, *b20;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b1), 0);
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, b1, NULL, &b2), 0, "%s", hr_last_error());
    cr_assert_eq(gbdt_booster_num_iterations(b2), 20);
    double l1 = 0, l2 = 0, l20 = 0;
    p.num_rounds = 20;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b20), 0);
    for (size_t i = 0; i < n; i++) {
        double a[3], c[3], e[3];
        gbdt_booster_predict_row(b1, x + i * d, a);
        gbdt_booster_predict_row(b2, x + i * d, c);
        gbdt_booster_predict_row(b20, x + i * d, e);
        l1 -= log(a[(int)y[i]]);
        l2 -= log(c[(int)y[i]]);
        l20 -= log(e[(int)y[i]]);
    }
    cr_assert_lt(l2, 0.8 * l1, "loss %g -> %g", l1 / n, l2 / n);
    /* without bagging, 10 + 10 warm-started rounds equal 20 rounds in one go */
    cr_assert_float_eq(l2, l20, 1e-9 * l20);
    /* a booster of another shape cannot be continued */
    p.num_class = 4;
    gbdt_booster *bad;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, b1, NULL, &bad), HR_EINVAL);
    gbdt_booster_free(b1);
    gbdt_booster_free(b2);
    gbdt_booster_free(b20);
    free(x), free(y);
}

/* A warm-started run that stops early names its best iteration as its progress lines count them (this run's
 * rounds), and the model's own count beside it: "[5] ... best iteration 32" read as a contradiction. */
Test(gbdt_train, warm_start_early_stopping_log_counts_this_runs_rounds)
{
    size_t n = 600, nv = 300;
    int d = 3;
    float *x = malloc((n + nv) * d * sizeof *x), *y = malloc((n + nv) * sizeof *y);
    hr_rng r;
    hr_rng_seed(&r, 4);
    /* labels independent of the features: validation loss rises as soon as the trees fit noise */
    for (size_t i = 0; i < (n + nv) * d; i++) x[i] = (float)hr_rng_uniform(&r);
    for (size_t i = 0; i < n + nv; i++) y[i] = (float)hr_rng_uniform(&r);
    gbdt_data train = {.x = x, .n = n, .d = d, .y = y}, valid = {.x = x + n * d, .n = nv, .d = d, .y = y + n};
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = 30;
    p.num_leaves = 31;
    p.min_data_in_leaf = 2;
    p.learning_rate = 0.5;
    gbdt_booster *b1, *b2;
    cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b1), 0, "%s", hr_last_error());
    p.early_stopping_rounds = 2;
    p.log_every = 1;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hr_log log = {f, HR_LOG_INFO};
    cr_assert_eq(gbdt_booster_train(&p, &train, &valid, b1, &log, &b2), 0, "%s", hr_last_error());
    fclose(f);
    int last = 0, best = -1, kept = -1, from = -1;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        int k;
        if (sscanf(l, "gbdt: [%d]", &k) == 1) last = k;
        sscanf(l, "gbdt: early stopping, best iteration %d (the model keeps %d: %d from", &best, &kept, &from);
    }
    cr_assert(best >= 1 && best <= last && last < 30, "%s", text);
    cr_assert_eq(from, 30, "%s", text);
    cr_assert_eq(kept, 30 + best, "%s", text);
    cr_assert_eq(gbdt_booster_best_iteration(b2), kept);
    free(text);
    gbdt_booster_free(b1);
    gbdt_booster_free(b2);
    free(x), free(y);
}

/* Many classes with soft labels and rare classes (priors down to ~1e-5), like runtime-ratio labels over
 * kernels: every round must lower the training loss. With plain Newton leaf values -G/H, leaves holding a
 * few rows of a rare class (h = p (1 - p) ~ 1e-5) got steps of thousands and the loss rose from round 2. */
Test(gbdt_train, many_class_soft_labels_loss_decreases_every_round)
{
    size_t n = 6000;
    int d = 4, K = 40, R = 8;
    float *x = malloc(n * d * sizeof *x), *yp = calloc(n * K, sizeof *yp);
    hr_rng r;
    hr_rng_seed(&r, 29);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < d; j++) x[i * d + j] = hr_rng_uniform(&r);
        /* home class: geometric in x0 (class c holds ~2^-c of the rows, capped), mass 0.6 on it, the rest
         * spread over two neighbours and a trace on a class chosen by x1 */
        int c = (int)floor(-log2(1e-6 + x[i * d])) % K;
        int c2 = (c + 1 + (int)(x[i * d + 1] * 5)) % K, c3 = (int)(x[i * d + 2] * K) % K;
        yp[i * K + c] += 0.6f;
        yp[i * K + c2] += 0.3f;
        yp[i * K + c3] += 0.0999f;
        yp[i * K + (c + 7) % K] += 0.0001f;
    }
    gbdt_data train = {.x = x, .n = n, .d = d, .y_prob = yp};
    gbdt_params p;
    gbdt_params_default(&p);
    p.objective = GBDT_OBJECTIVE_SOFTMAX;
    p.num_class = K;
    p.num_leaves = 31;
    p.min_data_in_leaf = 5;
    double prev = INFINITY;
    double *prob = malloc(n * K * sizeof *prob);
    for (int rounds = 0; rounds <= R; rounds++) {
        p.num_rounds = rounds;
        gbdt_booster *b;
        cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
        cr_assert_eq(gbdt_booster_predict(b, x, n, 0, 1, prob), 0);
        double loss = 0;
        for (size_t i = 0; i < n * K; i++)
            if (yp[i] > 0) loss -= yp[i] * log(fmax(prob[i], 1e-15)) / n;
        cr_assert(isfinite(loss) && loss < prev, "round %d: loss %g after %g", rounds, loss, prev);
        prev = loss;
        gbdt_booster_free(b);
    }
    free(prob);
    free(x), free(yp);
}

Test(gbdt_train, histograms_of_any_bin_count_parity_across_row_blocks)
{
    /* 70,000 rows: the histogram is built in four row blocks, three laid end to end in one buffer; the features
     * take 2..5 distinct values so the total bin count is odd for some of them (the blocks' doubles must
     * stay aligned: the sanitizer build checks it). Each fit must still find the step in feature 0. */
    size_t n = 70000;
    float *x = malloc(n * 2 * sizeof *x), *y = malloc(n * sizeof *y);
    for (int levels = 2; levels <= 5; levels++) {
        hr_rng rng;
        hr_rng_seed(&rng, (uint64_t)levels);
        for (size_t i = 0; i < n; i++) {
            int v = (int)hr_rng_below(&rng, (uint64_t)levels);
            x[2 * i] = (float)v;
            x[2 * i + 1] = hr_rng_uniform(&rng);
            y[i] = (float)v + 0.01f * x[2 * i + 1];
        }
        gbdt_data train = {.x = x, .n = n, .d = 2, .y = y};
        gbdt_params p;
        gbdt_params_default(&p);
        p.num_rounds = 20;
        p.learning_rate = 0.5;
        p.num_threads = 2;
        gbdt_booster *b;
        cr_assert_eq(gbdt_booster_train(&p, &train, NULL, NULL, NULL, &b), 0, "%s", hr_last_error());
        double err = mse(b, x, y, 1000, 2);
        cr_assert_lt(err, 0.01, "levels %d: mse %g", levels, err);
        gbdt_booster_free(b);
    }
    free(x), free(y);
}
