/* nn: Gamma-block (BatchNorm and LayerNorm), transformer encoder block (post- and pre-norm) and soft-target
 * cross-entropy against PyTorch references (tests/fixtures/make_nn_fixtures.py, float64): outputs, running
 * statistics and the gradients of every parameter and of the input for the loss sum(out * R). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"

#define FIXTURE_DIR HEURIST_SOURCE_DIR "/tests/fixtures/nn/"
#define MAX_TENSORS 64

typedef struct fixture {
    int n;
    char name[MAX_TENSORS][80];
    size_t size[MAX_TENSORS];
    float *data[MAX_TENSORS];
} fixture;

static void fixture_load(fixture *f, const char *file)
{
    char path[512];
    snprintf(path, sizeof path, FIXTURE_DIR "%s", file);
    FILE *fp = fopen(path, "r");
    cr_assert_not_null(fp, "cannot open %s", path);
    memset(f, 0, sizeof *f);
    char line[256];
    cr_assert_not_null(fgets(line, sizeof line, fp)); /* comment line */
    char name[80];
    size_t size;
    while (fscanf(fp, "%79s %zu", name, &size) == 2) {
        cr_assert_lt(f->n, MAX_TENSORS);
        strcpy(f->name[f->n], name);
        f->size[f->n] = size;
        f->data[f->n] = malloc(size * sizeof(float) + 1);
        for (size_t i = 0; i < size; i++) cr_assert_eq(fscanf(fp, "%f", &f->data[f->n][i]), 1, "%s: short", name);
        f->n++;
    }
    cr_assert(feof(fp), "%s: trailing garbage", path);
    fclose(fp);
}

static void fixture_free(fixture *f)
{
    for (int i = 0; i < f->n; i++) free(f->data[i]);
}

static const float *fixture_get(const fixture *f, const char *name, size_t size)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->name[i], name) == 0) {
            cr_assert_eq(f->size[i], size, "%s: fixture has %zu values, expected %zu", name, f->size[i], size);
            return f->data[i];
        }
    cr_assert_fail("fixture has no tensor %s", name);
    return NULL;
}

/* max |got - want| <= 1e-4 max |want| + 1e-6 */
static void expect_close(const float *got, const float *want, size_t n, const char *what)
{
    double scale = 0.0, err = 0.0;
    for (size_t i = 0; i < n; i++) {
        scale = fmax(scale, fabs(want[i]));
        err = fmax(err, fabs((double)got[i] - want[i]));
    }
    cr_expect(err <= 1e-4 * scale + 1e-6, "%s: max abs error %.3g (max |ref| %.3g)", what, err, scale);
}

/* Copies every view of p from the fixture (by name). */
static void params_from_fixture(nn_params *p, const fixture *f)
{
    for (int i = 0; i < p->n_views; i++) {
        const nn_param_view *v = &p->views[i];
        memcpy(p->w + v->offset, fixture_get(f, v->name, v->size), v->size * sizeof(float));
    }
}

static void grads_match_fixture(const nn_params *p, const fixture *f)
{
    char name[96];
    for (int i = 0; i < p->n_views; i++) {
        const nn_param_view *v = &p->views[i];
        snprintf(name, sizeof name, "grad.%s", v->name);
        expect_close(p->dw + v->offset, fixture_get(f, name, v->size), v->size, name);
    }
}

static void check_gamma(const char *file, nn_norm_kind norm)
{
    const int B = 6, d_in = 5, d_hidden = 7, d_out = 4;
    fixture f;
    fixture_load(&f, file);
    nn_params p, state;
    nn_params_init(&p);
    nn_params_init(&state);
    nn_gamma g;
    nn_gamma_layout(&g, &p, &state, "g", d_in, d_hidden, d_out, norm, 0.0f);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    cr_assert_eq(nn_params_alloc(&state), HR_OK);
    hr_rng rng;
    hr_rng_seed(&rng, 1);
    nn_gamma_reset(&g, &p, &state, &rng); /* running stats 0 / 1 as in PyTorch */
    params_from_fixture(&p, &f);
    nn_gamma_cache c;
    cr_assert_eq(nn_gamma_cache_init(&c, &g, B), HR_OK);

    const float *x = fixture_get(&f, "x", (size_t)B * d_in), *R = fixture_get(&f, "R", (size_t)B * d_out);
    float y[6 * 4], dx[6 * 5] = {0};
    nn_gamma_forward(&g, &p, &state, &c, x, y, B, 1, &rng);
    expect_close(y, fixture_get(&f, "y", (size_t)B * d_out), (size_t)B * d_out, "y");
    if (norm == NN_NORM_BATCH) {
        expect_close(state.w + g.bn.run_mean, fixture_get(&f, "after.g.norm.running_mean", d_hidden), d_hidden,
                     "running_mean");
        expect_close(state.w + g.bn.run_var, fixture_get(&f, "after.g.norm.running_var", d_hidden), d_hidden,
                     "running_var");
    }
    nn_gamma_backward(&g, &p, &c, x, y, R, dx, B); /* d(sum(y R))/dy = R */
    expect_close(dx, fixture_get(&f, "grad.x", (size_t)B * d_in), (size_t)B * d_in, "grad.x");
    grads_match_fixture(&p, &f);

    nn_gamma_cache_free(&c);
    nn_params_free(&p);
    nn_params_free(&state);
    fixture_free(&f);
}

Test(nn_fixture, gamma_block_batchnorm_train_matches_pytorch)
{
    check_gamma("gamma_batch.txt", NN_NORM_BATCH);
}

Test(nn_fixture, gamma_block_layernorm_matches_pytorch)
{
    check_gamma("gamma_layer.txt", NN_NORM_LAYER);
}

static void check_transformer(const char *file, int norm_first)
{
    enum { B = 2, T = 3, D = 8, H = 2, F = 16, N = B * T * D };
    fixture f;
    fixture_load(&f, file);
    nn_params p;
    nn_params_init(&p);
    nn_transformer tb;
    nn_transformer_layout(&tb, &p, "tb", D, H, F, norm_first);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    params_from_fixture(&p, &f);
    nn_transformer_cache c;
    cr_assert_eq(nn_transformer_cache_init(&c, &tb, B, T), HR_OK);

    const float *x = fixture_get(&f, "x", N), *R = fixture_get(&f, "R", N);
    float y[N], dx[N] = {0};
    nn_transformer_forward(&tb, &p, &c, x, y, B, T);
    expect_close(y, fixture_get(&f, "y", N), N, "y");
    nn_transformer_backward(&tb, &p, &c, x, R, dx, B, T);
    expect_close(dx, fixture_get(&f, "grad.x", N), N, "grad.x");
    grads_match_fixture(&p, &f);

    nn_transformer_cache_free(&c);
    nn_params_free(&p);
    fixture_free(&f);
}

Test(nn_fixture, transformer_postnorm_matches_pytorch)
{
    check_transformer("transformer_postnorm.txt", 0);
}

Test(nn_fixture, transformer_prenorm_matches_pytorch)
{
    check_transformer("transformer_prenorm.txt", 1);
}

Test(nn_fixture, soft_target_cross_entropy_matches_pytorch)
{
    enum { B = 4, C = 6 };
    fixture f;
    fixture_load(&f, "xent.txt");
    const float *z = fixture_get(&f, "z", B * C), *t = fixture_get(&f, "target", B * C);
    float prob[B * C], dz[B * C] = {0};
    float loss = nn_xent_forward(z, t, prob, B, C);
    expect_close(&loss, fixture_get(&f, "loss", 1), 1, "loss");
    nn_xent_backward(prob, t, dz, B, C, 1.0f);
    expect_close(dz, fixture_get(&f, "grad.z", B * C), B * C, "grad.z");
    fixture_free(&f);
}
