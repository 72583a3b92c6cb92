/* train/'s loop on a toy model: early stopping restores the best epoch's parameters, the schedule
 * warms up then decays, a run reproduces from its seed, bad options are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

/* y = w . x fitted by least squares on rows of a fixed synthetic table; evaluate() returns scripted
 * validation losses so early stopping is exercised exactly. */
typedef struct toy {
    nn_params p;
    nn_linear lin;
    float X[64][4], Y[64];
    int epoch;
    const float *script; /* validation loss per epoch */
    float *saved;        /* params seen at each evaluation, (epochs, n) */
} toy;

static int toy_batch(void *ctx, const int *rows, int n, hr_rng *rng, float *loss)
{
    toy *t = ctx;
    double l = 0.0;
    for (int i = 0; i < n; i++) {
        float y;
        nn_linear_forward(&t->lin, &t->p, t->X[rows[i]], &y, 1);
        float dy = 2.0f * (y - t->Y[rows[i]]) / n;
        l += (y - t->Y[rows[i]]) * (y - t->Y[rows[i]]);
        nn_linear_backward(&t->lin, &t->p, t->X[rows[i]], &dy, NULL, 1);
    }
    *loss = (float)(l / n);
    (void)rng;
    return HR_OK;
}

static int toy_evaluate(void *ctx, const int *rows, int n, float *loss, float *metric)
{
    toy *t = ctx;
    memcpy(t->saved + (size_t)t->epoch * t->p.n, t->p.w, t->p.n * sizeof(float));
    *loss = t->script[t->epoch++];
    *metric = -*loss;
    return HR_OK;
}

/* extra: parameters beyond the linear layer's, with no gradient (AdamW only decays them) */
static void toy_init_extra(toy *t, const float *script, int epochs, int extra)
{
    memset(t, 0, sizeof *t);
    nn_params_init(&t->p);
    nn_linear_layout(&t->lin, &t->p, "lin", 4, 1);
    if (extra) nn_params_add(&t->p, "unused", (size_t)extra);
    cr_assert_eq(nn_params_alloc(&t->p), HR_OK);
    hr_rng r;
    hr_rng_seed(&r, 3);
    nn_linear_reset(&t->lin, &t->p, &r);
    for (int i = 0; i < 64; i++) {
        for (int j = 0; j < 4; j++) t->X[i][j] = hr_rng_normal(&r);
        t->Y[i] = 1.5f * t->X[i][0] - t->X[i][2] + 0.1f * hr_rng_normal(&r);
    }
    t->script = script;
    t->saved = calloc((size_t)epochs * t->p.n, sizeof(float));
}

static void toy_init(toy *t, const float *script, int epochs)
{
    toy_init_extra(t, script, epochs, 0);
}

Test(train_loop, early_stopping_restores_the_best_epoch)
{
    const float script[] = {1.0f, 0.5f, 0.9f, 0.8f, 0.7f, 0.6f, 0.55f, 0.52f};
    toy t;
    toy_init(&t, script, 8);
    int rows[48], valid[16];
    for (int i = 0; i < 48; i++) rows[i] = i;
    for (int i = 0; i < 16; i++) valid[i] = 48 + i;
    train_opts o = train_opts_defaults();
    o.epochs = 8;
    o.batch_size = 8;
    o.patience = 3;
    o.lr = 0.05f;
    train_result res;
    cr_assert_eq(train_run(&(train_ops){toy_batch, toy_evaluate}, &t, &t.p, NULL, rows, 48, valid, 16, &o, &res), HR_OK);
    cr_assert_eq(res.epochs_run, 5);
    cr_assert(res.stopped_early);
    cr_assert_eq(res.best_epoch, 2);
    cr_assert_eq(res.n_curve, 5);
    cr_assert(memcmp(t.p.w, t.saved + 1 * t.p.n, t.p.n * sizeof(float)) == 0, "best epoch's parameters not restored");
    cr_assert_lt(res.curve[4].train_loss, res.curve[0].train_loss);
    train_result_free(&res);
    nn_params_free(&t.p);
    free(t.saved);
}

Test(train_loop, same_seed_same_parameters_and_bad_options_refused)
{
    const float script[] = {3, 2, 1, 0.5f};
    float w[2][8];
    for (int k = 0; k < 2; k++) {
        toy t;
        toy_init(&t, script, 4);
        int rows[64];
        for (int i = 0; i < 64; i++) rows[i] = i;
        train_opts o = train_opts_defaults();
        o.epochs = 4;
        o.batch_size = 7;
        o.seed = 42;
        train_result res;
        cr_assert_eq(train_run(&(train_ops){toy_batch, toy_evaluate}, &t, &t.p, NULL, rows, 64, rows, 4, &o, &res), HR_OK);
        memcpy(w[k], t.p.w, t.p.n * sizeof(float));
        train_result_free(&res);
        o.batch_size = 1;
        cr_assert_eq(train_run(&(train_ops){toy_batch, toy_evaluate}, &t, &t.p, NULL, rows, 64, NULL, 0, &o, &res), HR_EINVAL);
        nn_params_free(&t.p);
        free(t.saved);
    }
    cr_assert(memcmp(w[0], w[1], 5 * sizeof(float)) == 0);
}

/* The loop's passes over all parameters (zeroing, the Adam update) on a team of 2 or 3 threads give the
 * parameters of the caller alone, bit for bit (37 parameters: uneven slices, an empty one at 3 threads). */
Test(train_loop, team_passes_give_the_same_parameters)
{
    const float script[] = {3, 2, 1};
    float *w[3];
    for (int k = 0; k < 3; k++) {
        toy t;
        toy_init_extra(&t, script, 3, 32);
        hr_rng r;
        hr_rng_seed(&r, 3);
        for (size_t i = 0; i < t.p.n; i++) t.p.w[i] = hr_rng_normal(&r);
        int rows[64];
        for (int i = 0; i < 64; i++) rows[i] = i;
        train_opts o = train_opts_defaults();
        o.epochs = 3;
        o.batch_size = 8;
        o.seed = 42;
        o.optim = nn_optim_defaults(NN_OPTIM_ADAMW);
        if (k) cr_assert_eq(hr_team_create(k + 1, &o.team), HR_OK);
        train_result res;
        cr_assert_eq(train_run(&(train_ops){toy_batch, toy_evaluate}, &t, &t.p, NULL, rows, 64, rows, 4, &o, &res), HR_OK);
        cr_assert_eq(t.p.n, 37);
        w[k] = malloc(t.p.n * sizeof(float));
        memcpy(w[k], t.p.w, t.p.n * sizeof(float));
        train_result_free(&res);
        hr_team_free(o.team);
        nn_params_free(&t.p);
        free(t.saved);
    }
    cr_assert(memcmp(w[0], w[1], 37 * sizeof(float)) == 0, "2 threads changed the parameters");
    cr_assert(memcmp(w[0], w[2], 37 * sizeof(float)) == 0, "3 threads changed the parameters");
    for (int k = 0; k < 3; k++) free(w[k]);
}

Test(train_loop, schedule_warms_up_then_decays_to_the_floor)
{
    train_opts o = train_opts_defaults();
    o.epochs = 10;
    o.lr = 1.0f;
    o.lr_min = 0.1f;
    o.warmup = 2;
    nn_lr_schedule s = train_schedule(&o, 5);
    cr_assert_eq(s.warmup, 10);
    cr_assert_float_eq(nn_lr_at(&s, 0), 0.1f, 1e-6);
    cr_assert_float_eq(nn_lr_at(&s, 9), 1.0f, 1e-6);
    cr_assert_float_eq(nn_lr_at(&s, 10), 1.0f, 1e-6);
    cr_assert_float_eq(nn_lr_at(&s, 50), 0.1f, 1e-6);
    cr_assert_lt(nn_lr_at(&s, 30), nn_lr_at(&s, 20));
}
