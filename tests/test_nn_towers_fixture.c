/* The towers mode's score and loss (models/reformer_towers.c) composed from nn/ ops as the trainer composes them,
 * against an independent float64 reference (tests/fixtures/make_towers_fixture.py: plain Python, the backward pass
 * written out by hand): a Gamma-block (BatchNorm, training statistics) and the head give u per problem, the
 * configuration tower v per candidate, z = u . v + w . q + b, and the per-problem softmax cross-entropy; the scores,
 * the loss and the gradient of every parameter must match. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"

#define FIXTURE HEURIST_SOURCE_DIR "/tests/fixtures/towers/towers.txt"
#define MAX_TENSORS 64

enum { S = 3, NI = 4, DH = 5, DO = 4, D = 3, NC = 4, H = 5, NQ = 2, N = 7 };

typedef struct fixture {
    int n;
    char name[MAX_TENSORS][80];
    size_t size[MAX_TENSORS];
    float *data[MAX_TENSORS];
} fixture;

static void fixture_load(fixture *f)
{
    FILE *fp = fopen(FIXTURE, "r");
    cr_assert_not_null(fp, "cannot open %s", FIXTURE);
    memset(f, 0, sizeof *f);
    char line[256], name[80];
    size_t size;
    cr_assert_not_null(fgets(line, sizeof line, fp)); /* comment line */
    while (fscanf(fp, "%79s %zu", name, &size) == 2) {
        cr_assert_lt(f->n, MAX_TENSORS);
        strcpy(f->name[f->n], name);
        f->size[f->n] = size;
        f->data[f->n] = malloc(size * sizeof(float) + 1);
        for (size_t i = 0; i < size; i++) cr_assert_eq(fscanf(fp, "%f", &f->data[f->n][i]), 1, "%s: short", name);
        f->n++;
    }
    cr_assert(feof(fp), "%s: trailing garbage", FIXTURE);
    fclose(fp);
}

static const float *get(const fixture *f, const char *name, size_t size)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->name[i], name)) {
            cr_assert_eq(f->size[i], size, "%s: %zu values, expected %zu", name, f->size[i], size);
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

Test(nn_towers_fixture, scores_loss_and_gradients_match_the_reference)
{
    fixture f;
    fixture_load(&f);
    nn_params p, state;
    nn_params_init(&p);
    nn_params_init(&state);
    nn_gamma g;
    nn_linear head, cfg1, cfg2, inter;
    nn_gamma_layout(&g, &p, &state, "g", NI, DH, DO, NN_NORM_BATCH, 0.0f);
    nn_linear_layout(&head, &p, "head", DO, D);
    nn_linear_layout(&cfg1, &p, "config.0", NC, H);
    nn_linear_layout(&cfg2, &p, "config.1", H, D);
    nn_linear_layout(&inter, &p, "interaction", NQ, 1);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    cr_assert_eq(nn_params_alloc(&state), HR_OK);
    hr_rng rng;
    hr_rng_seed(&rng, 1);
    nn_gamma_reset(&g, &p, &state, &rng);
    for (int i = 0; i < p.n_views; i++)
        memcpy(p.w + p.views[i].offset, get(&f, p.views[i].name, p.views[i].size), p.views[i].size * sizeof(float));
    nn_gamma_cache c;
    cr_assert_eq(nn_gamma_cache_init(&c, &g, S), HR_OK);
    const float *xp = get(&f, "xp", S * NI), *xc = get(&f, "xc", N * NC), *q = get(&f, "q", N * NQ);
    const float *y = get(&f, "y", N), *offf = get(&f, "off", S + 1);
    int off[S + 1];
    for (int s = 0; s <= S; s++) off[s] = (int)offf[s];

    float gy[S * DO], u[S * D], h[N * H], v[N * D], z[N], lin[N], prob[N];
    nn_gamma_forward(&g, &p, &state, &c, xp, gy, S, 1, &rng);
    nn_linear_forward(&head, &p, gy, u, S);
    nn_linear_forward(&cfg1, &p, xc, h, N);
    nn_relu_forward(h, h, N * H);
    nn_linear_forward(&cfg2, &p, h, v, N);
    nn_seg_dot_forward(u, v, off, S, D, z);
    nn_linear_forward(&inter, &p, q, lin, N);
    for (int i = 0; i < N; i++) z[i] += lin[i];
    float loss = nn_xent_seg_forward(z, y, off, S, prob);
    expect_close(z, get(&f, "z", N), N, "z");
    expect_close(&loss, get(&f, "loss", 1), 1, "loss");

    float dz[N] = {0}, du[S * D] = {0}, dv[N * D] = {0}, dh[N * H] = {0}, dgy[S * DO] = {0};
    nn_params_zero_grad(&p);
    nn_xent_seg_backward(prob, y, off, S, dz, 1.0f);
    nn_linear_backward(&inter, &p, q, dz, NULL, N);
    nn_seg_dot_backward(u, v, off, S, D, dz, du, dv);
    nn_linear_backward(&cfg2, &p, h, dv, dh, N);
    for (int i = 0; i < N * H; i++) dh[i] = h[i] > 0.0f ? dh[i] : 0.0f;
    nn_linear_backward(&cfg1, &p, xc, dh, NULL, N);
    nn_linear_backward(&head, &p, gy, du, dgy, S);
    nn_gamma_backward(&g, &p, &c, xp, gy, dgy, NULL, S);
    char name[96];
    for (int i = 0; i < p.n_views; i++) {
        snprintf(name, sizeof name, "grad.%s", p.views[i].name);
        expect_close(p.dw + p.views[i].offset, get(&f, name, p.views[i].size), p.views[i].size, name);
    }
    /* b moves every score of a problem alike: the softmax gives it no gradient */
    cr_expect(fabsf(p.dw[inter.b]) < 1e-6f, "interaction.bias gradient %g", p.dw[inter.b]);

    nn_gamma_cache_free(&c);
    nn_params_free(&p);
    nn_params_free(&state);
    for (int i = 0; i < f.n; i++) free(f.data[i]);
}
