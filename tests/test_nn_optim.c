/* nn: optimizer steps against hand-computed values (the same numbers torch.optim gives), gradient clipping,
 * learning-rate schedules, and checkpoint round-trip and rejection of mismatched checkpoints. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helpers/testutil.h"
#include "nn/nn.h"

/* A two-scalar parameter block w = [1, -2]. */
static void tiny_params(nn_params *p)
{
    nn_params_init(p);
    nn_params_add(p, "w", 2);
    cr_assert_eq(nn_params_alloc(p), HR_OK);
    p->w[0] = 1.0f;
    p->w[1] = -2.0f;
}

static void step_with(nn_optim *o, nn_params *p, float lr, float g0, float g1)
{
    p->dw[0] = g0;
    p->dw[1] = g1;
    nn_optim_step(o, p, lr);
}

Test(nn_optim, sgd_momentum_weight_decay_two_steps)
{
    nn_params p;
    tiny_params(&p);
    nn_optim_config cfg = nn_optim_defaults(NN_OPTIM_SGD);
    cfg.weight_decay = 0.1f;
    nn_optim o;
    cr_assert_eq(nn_optim_init(&o, &cfg, p.n), HR_OK);
    /* g + wd w = [0.6, 0.05] = m;  w - 0.1 m = [0.94, -2.005] */
    step_with(&o, &p, 0.1f, 0.5f, 0.25f);
    cr_expect_float_eq(p.w[0], 0.94f, 1e-6);
    cr_expect_float_eq(p.w[1], -2.005f, 1e-6);
    /* d = [0.594, 0.0495];  m = 0.9 [0.6, 0.05] + d = [1.134, 0.0945];  w = [0.8266, -2.01445] */
    step_with(&o, &p, 0.1f, 0.5f, 0.25f);
    cr_expect_float_eq(p.w[0], 0.8266f, 1e-6);
    cr_expect_float_eq(p.w[1], -2.01445f, 1e-6);
    nn_optim_free(&o);
    nn_params_free(&p);
}

static void adam_two_steps(nn_optim_kind kind, float wd, const float want[4])
{
    nn_params p;
    tiny_params(&p);
    nn_optim_config cfg = nn_optim_defaults(kind);
    cfg.weight_decay = wd;
    nn_optim o;
    cr_assert_eq(nn_optim_init(&o, &cfg, p.n), HR_OK);
    step_with(&o, &p, 0.01f, 0.5f, -0.1f);
    cr_expect_float_eq(p.w[0], want[0], 2e-6, "step 1: %.8f", p.w[0]);
    cr_expect_float_eq(p.w[1], want[1], 2e-6, "step 1: %.8f", p.w[1]);
    step_with(&o, &p, 0.01f, 0.2f, 0.3f);
    cr_expect_float_eq(p.w[0], want[2], 2e-6, "step 2: %.8f", p.w[0]);
    cr_expect_float_eq(p.w[1], want[3], 2e-6, "step 2: %.8f", p.w[1]);
    cr_expect_eq(o.step, 2);
    nn_optim_free(&o);
    nn_params_free(&p);
}

Test(nn_optim, adam_two_steps)
{
    /* step 1: m^ = g, v^ = g^2, so w -= lr sign(g) -> [0.99, -1.99].
     * step 2: m = [0.065, 0.021], v = [2.8975e-4, 9.999e-5], bias corrections 0.19 and 0.001999:
     * m^ = [0.3421053, 0.1105263], sqrt(v^) = [0.3807197, 0.2236515] -> w -= 0.01 [0.8985750, 0.4941899] */
    const float want[4] = {0.99f, -1.99f, 0.98101425f, -1.99494190f};
    adam_two_steps(NN_OPTIM_ADAM, 0.0f, want);
}

Test(nn_optim, adam_l2_weight_decay_enters_the_gradient)
{
    /* g + 0.1 w: step 1 is still lr sign(g'); step 2 sees g' = [0.2 + 0.099, 0.3 - 0.199] */
    const float want[4] = {0.99f, -1.99f, 0.98068309f, -1.98602535f};
    adam_two_steps(NN_OPTIM_ADAM, 0.1f, want);
}

Test(nn_optim, adamw_decays_weights_directly)
{
    /* step 1: w (1 - 0.01 * 0.1) = [0.999, -1.998], then - 0.01 sign(g) -> [0.989, -1.988] */
    const float want[4] = {0.989f, -1.988f, 0.97902525f, -1.99095390f};
    adam_two_steps(NN_OPTIM_ADAMW, 0.1f, want);
}

/* The update of a block long enough for the four-lane path (and a tail) against the scalar rule, step by step. */
static void adam_lanes(nn_optim_kind kind)
{
    enum { N = 11 };
    nn_params p;
    nn_params_init(&p);
    nn_params_add(&p, "w", N);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    nn_optim_config cfg = nn_optim_defaults(kind);
    cfg.weight_decay = 0.05f;
    nn_optim o;
    cr_assert_eq(nn_optim_init(&o, &cfg, p.n), HR_OK);
    float w[N], m[N] = {0}, v[N] = {0};
    for (int i = 0; i < N; i++) w[i] = p.w[i] = 0.3f * (float)(i - 5);
    for (int step = 1; step <= 3; step++) {
        const float lr = 0.01f, b1 = cfg.beta1, b2 = cfg.beta2;
        const float bc1 = 1.0f - (float)pow(b1, step), bc2 = 1.0f - (float)pow(b2, step);
        for (int i = 0; i < N; i++) {
            p.dw[i] = 0.1f * (float)((i * 7 + step * 3) % 11) - 0.5f;
            float g = kind == NN_OPTIM_ADAMW ? p.dw[i] : p.dw[i] + cfg.weight_decay * w[i];
            if (kind == NN_OPTIM_ADAMW) w[i] *= 1.0f - lr * cfg.weight_decay;
            m[i] = b1 * m[i] + (1.0f - b1) * g;
            v[i] = b2 * v[i] + (1.0f - b2) * g * g;
            w[i] -= lr / bc1 * m[i] / (sqrtf(v[i]) / sqrtf(bc2) + cfg.eps);
        }
        nn_optim_step(&o, &p, lr);
        for (int i = 0; i < N; i++)
            cr_expect_float_eq(p.w[i], w[i], 1e-6, "step %d, w[%d] = %.8f, want %.8f", step, i, p.w[i], w[i]);
    }
    nn_optim_free(&o);
    nn_params_free(&p);
}

Test(nn_optim, adam_vector_lanes_follow_the_scalar_rule) { adam_lanes(NN_OPTIM_ADAM); }
Test(nn_optim, adamw_vector_lanes_follow_the_scalar_rule) { adam_lanes(NN_OPTIM_ADAMW); }

Test(nn_optim, bad_config_is_an_error)
{
    nn_optim_config cfg = nn_optim_defaults(NN_OPTIM_ADAM);
    cfg.beta2 = 1.0f;
    nn_optim o;
    cr_expect_eq(nn_optim_init(&o, &cfg, 4), HR_EINVAL);
    cr_expect_not_null(strstr(hr_last_error(), "betas"));
}

Test(nn_optim, global_norm_clipping)
{
    nn_params p;
    tiny_params(&p);
    p.dw[0] = 3.0f;
    p.dw[1] = 4.0f;
    cr_expect_float_eq(nn_grad_clip(&p, 10.0f), 5.0f, 1e-6); /* under the limit: untouched */
    cr_expect_eq(p.dw[0], 3.0f);
    cr_expect_float_eq(nn_grad_clip(&p, 1.0f), 5.0f, 1e-6);
    cr_expect_float_eq(p.dw[0], 0.6f, 1e-6);
    cr_expect_float_eq(p.dw[1], 0.8f, 1e-6);
    nn_params_free(&p);
}

Test(nn_optim, warmup_then_cosine)
{
    nn_lr_schedule s = {.lr = 1.0f, .warmup = 4, .decay = NN_LR_COSINE, .total = 14, .lr_min = 0.1f};
    cr_expect_float_eq(nn_lr_at(&s, 0), 0.25f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&s, 1), 0.5f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&s, 3), 1.0f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&s, 4), 1.0f, 1e-6);   /* cosine starts at the peak */
    cr_expect_float_eq(nn_lr_at(&s, 9), 0.55f, 1e-6);  /* half way: lr_min + (lr - lr_min) / 2 */
    cr_expect_float_eq(nn_lr_at(&s, 14), 0.1f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&s, 1000), 0.1f, 1e-6); /* stays at the floor */
}

Test(nn_optim, warmup_then_step_decay_and_constant)
{
    nn_lr_schedule s = {.lr = 1.0f, .warmup = 4, .decay = NN_LR_STEP, .step_size = 3, .gamma = 0.5f};
    cr_expect_float_eq(nn_lr_at(&s, 2), 0.75f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&s, 4), 1.0f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&s, 6), 1.0f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&s, 7), 0.5f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&s, 10), 0.25f, 1e-6);
    nn_lr_schedule c = {.lr = 0.3f, .decay = NN_LR_CONSTANT};
    cr_expect_float_eq(nn_lr_at(&c, 0), 0.3f, 1e-6);
    cr_expect_float_eq(nn_lr_at(&c, 12345), 0.3f, 1e-6);
}

/* ---- checkpoints ---- */
static char ckpt_path[512];

static hid_t ckpt_create(void)
{
    snprintf(ckpt_path, sizeof ckpt_path, "%s/heurist_test_nn_ckpt_%d.h5", test_tmpdir(), (int)getpid());
    hid_t f = H5Fcreate(ckpt_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    return f;
}

static void two_layers(nn_params *p, int out2, const char *second)
{
    nn_linear a, b;
    nn_params_init(p);
    nn_linear_layout(&a, p, "fc1", 3, 4);
    nn_linear_layout(&b, p, second, 4, out2);
    cr_assert_eq(nn_params_alloc(p), HR_OK);
}

Test(nn_optim, checkpoint_round_trip_with_adam_moments)
{
    nn_params p, q;
    two_layers(&p, 5, "fc2");
    two_layers(&q, 5, "fc2");
    hr_rng rng;
    hr_rng_seed(&rng, 3);
    for (size_t i = 0; i < p.n; i++) {
        p.w[i] = hr_rng_normal(&rng);
        p.dw[i] = hr_rng_normal(&rng);
    }
    nn_optim_config cfg = nn_optim_defaults(NN_OPTIM_ADAMW);
    nn_optim o, o2;
    cr_assert_eq(nn_optim_init(&o, &cfg, p.n), HR_OK);
    cr_assert_eq(nn_optim_init(&o2, &cfg, q.n), HR_OK);
    nn_optim_step(&o, &p, 0.01f);
    nn_optim_step(&o, &p, 0.01f);

    hid_t f = ckpt_create();
    cr_assert_eq(nn_checkpoint_write(f, "model", &p, &o), HR_OK, "%s", hr_last_error());
    cr_expect_eq(nn_checkpoint_write(f, "model", &p, &o), HR_EINVAL); /* no silent overwrite */
    cr_assert_eq(nn_checkpoint_read(f, "model", &q, &o2), HR_OK, "%s", hr_last_error());
    cr_expect_eq(memcmp(p.w, q.w, p.n * sizeof *p.w), 0);
    cr_expect_eq(memcmp(o.m, o2.m, p.n * sizeof *o.m), 0);
    cr_expect_eq(memcmp(o.v, o2.v, p.n * sizeof *o.v), 0);
    cr_expect_eq(o2.step, 2);

    /* reading with a different optimizer kind is refused */
    nn_optim sgd;
    nn_optim_config scfg = nn_optim_defaults(NN_OPTIM_SGD);
    cr_assert_eq(nn_optim_init(&sgd, &scfg, q.n), HR_OK);
    cr_expect_eq(nn_checkpoint_read(f, "model", &q, &sgd), HR_EFORMAT);
    cr_expect_not_null(strstr(hr_last_error(), "optimizer kind"), "%s", hr_last_error());
    nn_optim_free(&sgd);

    H5Fclose(f);
    unlink(ckpt_path);
    nn_optim_free(&o);
    nn_optim_free(&o2);
    nn_params_free(&p);
    nn_params_free(&q);
}

Test(nn_optim, checkpoint_mismatches_give_clear_errors)
{
    nn_params p;
    two_layers(&p, 5, "fc2");
    hid_t f = ckpt_create();
    cr_assert_eq(nn_checkpoint_write(f, "model", &p, NULL), HR_OK, "%s", hr_last_error());

    nn_params wrong_size, wrong_name, fewer;
    two_layers(&wrong_size, 6, "fc2");
    cr_expect_eq(nn_checkpoint_read(f, "model", &wrong_size, NULL), HR_EFORMAT);
    cr_expect_not_null(strstr(hr_last_error(), "'model/w/fc2.weight' has 20 values, model expects 24"), "%s",
                       hr_last_error());

    two_layers(&wrong_name, 5, "head");
    cr_expect_eq(nn_checkpoint_read(f, "model", &wrong_name, NULL), HR_EFORMAT);
    cr_expect_not_null(strstr(hr_last_error(), "no tensor 'head.weight'"), "%s", hr_last_error());

    nn_linear a;
    nn_params_init(&fewer);
    nn_linear_layout(&a, &fewer, "fc1", 3, 4);
    cr_assert_eq(nn_params_alloc(&fewer), HR_OK);
    cr_expect_eq(nn_checkpoint_read(f, "model", &fewer, NULL), HR_EFORMAT);
    cr_expect_not_null(strstr(hr_last_error(), "unexpected 'fc2."), "%s", hr_last_error());

    cr_expect_eq(nn_checkpoint_read(f, "nothing", &p, NULL), HR_EFORMAT);
    cr_expect_not_null(strstr(hr_last_error(), "no checkpoint group 'nothing'"), "%s", hr_last_error());

    /* moments requested from a checkpoint written without them */
    nn_optim o;
    nn_optim_config cfg = nn_optim_defaults(NN_OPTIM_SGD);
    cr_assert_eq(nn_optim_init(&o, &cfg, p.n), HR_OK);
    cr_expect_eq(nn_checkpoint_read(f, "model", &p, &o), HR_EFORMAT);
    nn_optim_free(&o);

    H5Fclose(f);
    unlink(ckpt_path);
    nn_params_free(&p);
    nn_params_free(&wrong_size);
    nn_params_free(&wrong_name);
    nn_params_free(&fewer);
}
