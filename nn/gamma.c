/* The Reformer's Gamma-block (eq. 1 of the Reformer paper): a linear path A1 x + b1 and a nonlinear path
 * A3 T(x) + b3 with T = dropout . ReLU . norm . A2, summed and ReLU-ed. Three matrix products per
 * forward; the two output products share one (B, d_out) accumulator and one fused bias + ReLU pass. */
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/nn_internal.h"

void nn_gamma_layout(nn_gamma *g, nn_params *p, nn_params *state, const char *name, int d_in, int d_hidden,
                     int d_out, nn_norm_kind norm, float dropout)
{
    char buf[64];
    memset(g, 0, sizeof *g);
    g->d_in = d_in;
    g->d_hidden = d_hidden;
    g->d_out = d_out;
    g->norm = norm;
    g->dropout = dropout;
    snprintf(buf, sizeof buf, "%s.A1", name);
    nn_linear_layout(&g->a1, p, buf, d_in, d_out);
    snprintf(buf, sizeof buf, "%s.A2", name);
    nn_linear_layout(&g->a2, p, buf, d_in, d_hidden);
    snprintf(buf, sizeof buf, "%s.norm", name);
    if (norm == NN_NORM_BATCH) {
        HR_ASSERT(state != NULL);
        nn_batchnorm_layout(&g->bn, p, state, buf, d_hidden);
    } else {
        nn_layernorm_layout(&g->ln, p, buf, d_hidden);
    }
    snprintf(buf, sizeof buf, "%s.A3", name);
    nn_linear_layout(&g->a3, p, buf, d_hidden, d_out);
}

void nn_gamma_reset(const nn_gamma *g, nn_params *p, nn_params *state, hr_rng *rng)
{
    nn_linear_reset(&g->a1, p, rng);
    nn_linear_reset(&g->a2, p, rng);
    if (g->norm == NN_NORM_BATCH)
        nn_batchnorm_reset(&g->bn, p, state);
    else
        nn_layernorm_reset(&g->ln, p);
    nn_linear_reset(&g->a3, p, rng);
}

int nn_gamma_cache_init(nn_gamma_cache *c, const nn_gamma *g, int max_b)
{
    size_t nh = (size_t)max_b * g->d_hidden;
    size_t nstat = (size_t)(max_b > g->d_hidden ? max_b : g->d_hidden);
    int rc = HR_OK;
    memset(c, 0, sizeof *c);
    c->cap = max_b;
    rc = nn_floats_alloc(&c->h, nh, rc);
    rc = nn_floats_alloc(&c->r, nh, rc);
    rc = nn_floats_alloc(&c->t, nh, rc);
    rc = nn_floats_alloc(&c->mask, nh, rc);
    rc = nn_floats_alloc(&c->mean, nstat, rc);
    rc = nn_floats_alloc(&c->rstd, nstat, rc);
    rc = nn_floats_alloc(&c->dz, (size_t)max_b * g->d_out, rc);
    rc = nn_floats_alloc(&c->dt, nh, rc);
    rc = nn_floats_alloc(&c->dh, nh, rc);
    if (rc != HR_OK) nn_gamma_cache_free(c);
    return rc;
}

void nn_gamma_cache_free(nn_gamma_cache *c)
{
    free(c->h);
    free(c->r);
    free(c->t);
    free(c->mask);
    free(c->mean);
    free(c->rstd);
    free(c->dz);
    free(c->dt);
    free(c->dh);
    memset(c, 0, sizeof *c);
}

/* t is the dropout output only when dropout was applied; otherwise r is used directly (no copy). */
static const float *gamma_t(const nn_gamma *g, const nn_gamma_cache *c)
{
    return c->train && g->dropout > 0.0f ? c->t : c->r;
}

void nn_gamma_forward(const nn_gamma *g, const nn_params *p, nn_params *state, nn_gamma_cache *c,
                      const float *x, float *y, int B, int train, hr_rng *rng)
{
    HR_ASSERT(B <= c->cap);
    const int dh = g->d_hidden, dout = g->d_out;
    const size_t nh = (size_t)B * dh;
    c->train = train;
    nn_linear_forward(&g->a2, p, x, c->h, B);
    if (g->norm == NN_NORM_BATCH)
        nn_batchnorm_forward(&g->bn, p, state, c->h, c->r, c->mean, c->rstd, B, train);
    else
        nn_layernorm_forward(&g->ln, p, c->h, c->r, c->mean, c->rstd, B);
    nn_relu_forward(c->r, c->r, nh);
    if (train && g->dropout > 0.0f) nn_dropout_forward(c->r, c->t, c->mask, nh, g->dropout, rng);
    /* y (B, d_out) = x A1^T + t A3^T, then y = ReLU(y + b1 + b3) in one pass */
    nn_gemm_xwt(B, dout, g->d_in, x, p->w + g->a1.w, 0.0f, y);
    nn_gemm_xwt(B, dout, dh, gamma_t(g, c), p->w + g->a3.w, 1.0f, y);
    const float *b1 = p->w + g->a1.b, *b3 = p->w + g->a3.b;
    for (int i = 0; i < B; i++) {
        float *yr = y + (size_t)i * dout;
        for (int j = 0; j < dout; j++) {
            yr[j] = nn_relu1(yr[j] + b1[j] + b3[j]);
        }
    }
}

void nn_gamma_backward(const nn_gamma *g, nn_params *p, nn_gamma_cache *c, const float *x, const float *y,
                       const float *dy, float *dx, int B)
{
    HR_ASSERT(B <= c->cap);
    const int dh = g->d_hidden;
    const size_t nh = (size_t)B * dh, nout = (size_t)B * g->d_out;
    for (size_t i = 0; i < nout; i++) c->dz[i] = nn_gate1(y[i], dy[i]);
    nn_linear_backward(&g->a1, p, x, c->dz, dx, B);
    memset(c->dt, 0, nh * sizeof *c->dt);
    nn_linear_backward(&g->a3, p, gamma_t(g, c), c->dz, c->dt, B);
    /* through dropout and ReLU in place: dt becomes the gradient w.r.t. the norm output */
    if (c->train && g->dropout > 0.0f)
        for (size_t i = 0; i < nh; i++) c->dt[i] = nn_gate1(c->r[i], c->dt[i] * c->mask[i]);
    else
        for (size_t i = 0; i < nh; i++) c->dt[i] = nn_gate1(c->r[i], c->dt[i]);
    memset(c->dh, 0, nh * sizeof *c->dh);
    if (g->norm == NN_NORM_BATCH)
        nn_batchnorm_backward(&g->bn, p, c->h, c->mean, c->rstd, c->dt, c->dh, B, c->train);
    else
        nn_layernorm_backward(&g->ln, p, c->h, c->mean, c->rstd, c->dt, c->dh, B);
    nn_linear_backward(&g->a2, p, x, c->dh, dx, B);
}
