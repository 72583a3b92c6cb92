/* The Reformer's Gamma-block (eq. 1 of the Reformer paper): a linear path A1 x + b1 and a nonlinear path
 * A3 T(x) + b3 with T = dropout . ReLU . norm . A2, summed and ReLU-ed. Three matrix products per
 * forward; the two output products share one (B, d_out) accumulator and one fused bias + ReLU pass.
 * A1 and A2 both read x, so their weights (and their biases) are laid out back to back as [A1; A2]
 * ((d_out + d_hidden), d_in): backward takes the gradients of both, and x's, in one matrix product each
 * over the stacked gradient [dz | dh]. Forward keeps two products: stacked, it measured no faster, and
 * BatchNorm would read h with a stride. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/nn_internal.h"
#include "nn/parts.h"

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
    /* [A1; A2] weights, then [b1; b2]: the same names and shapes as two nn_linear layouts */
    g->a1.in = g->a2.in = d_in;
    g->a1.out = d_out;
    g->a2.out = d_hidden;
    snprintf(buf, sizeof buf, "%s.A1.weight", name);
    g->a1.w = nn_params_add(p, buf, (size_t)d_out * d_in);
    snprintf(buf, sizeof buf, "%s.A2.weight", name);
    g->a2.w = nn_params_add(p, buf, (size_t)d_hidden * d_in);
    snprintf(buf, sizeof buf, "%s.A1.bias", name);
    g->a1.b = nn_params_add(p, buf, (size_t)d_out);
    snprintf(buf, sizeof buf, "%s.A2.bias", name);
    g->a2.b = nn_params_add(p, buf, (size_t)d_hidden);
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
    rc = nn_floats_alloc(&c->dz, (size_t)max_b * (g->d_out + g->d_hidden), rc);
    rc = nn_floats_alloc(&c->dt, nh, rc);
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
    memset(c, 0, sizeof *c);
}

/* t is the dropout output only when dropout was applied; otherwise r is used directly (no copy). */
static const float *gamma_t(const nn_gamma *g, const nn_gamma_cache *c)
{
    return c->train && g->dropout > 0.0f ? c->t : c->r;
}

/* Elementwise kernels over restrict parameters, so that the body loop vectorises (see NN_VEC4) */

/* y (B, n) = ReLU(y + b1 + b3) */
NN_KERNEL void bias2_relu(float *restrict y, const float *restrict b1, const float *restrict b3, int B, int n)
{
    const int n4 = NN_VEC4(n);
    for (int i = 0; i < B; i++, y += n) {
        for (int j = 0; j < n4; j++) {
            float v = y[j] + b1[j] + b3[j];
            y[j] = v > 0.0f ? v : 0.0f;
        }
        for (int j = n4; j < n; j++) y[j] = nn_relu1(y[j] + b1[j] + b3[j]);
    }
}

/* out (B, n; rows ld apart) = g where v > 0, else 0, for v and g (B, n) */
NN_KERNEL void gate_rows(float *restrict out, int ld, const float *restrict v, const float *restrict g, int B, int n)
{
    const int n4 = NN_VEC4(n);
    for (int i = 0; i < B; i++, out += ld, v += n, g += n) {
        for (int j = 0; j < n4; j++) {
            float vj = v[j], gj = g[j];
            out[j] = vj > 0.0f ? gj : 0.0f;
        }
        for (int j = n4; j < n; j++) out[j] = nn_gate1(v[j], g[j]);
    }
}

/* the same in place: g (n) = g where v > 0, else 0 */
NN_KERNEL void gate_inplace(float *restrict g, const float *restrict v, size_t n)
{
    const size_t n4 = NN_VEC4(n);
    for (size_t i = 0; i < n4; i++) {
        float vi = v[i], gi = g[i];
        g[i] = vi > 0.0f ? gi : 0.0f;
    }
    for (size_t i = n4; i < n; i++) g[i] = nn_gate1(v[i], g[i]);
}

void nn_gamma_forward_part(const nn_gamma *g, const nn_params *p, nn_params *state, nn_gamma_cache *c,
                           const float *x, float *y, int Bp, int train, hr_rng *rng, const nn_part *part,
                           int phase)
{
    HR_ASSERT(Bp <= c->cap);
    const int dh = g->d_hidden, dout = g->d_out;
    const size_t nh = (size_t)Bp * dh;
    const int batch_stats = train && g->norm == NN_NORM_BATCH;
    float *sums = part->scratch, *ss = part->scratch + (size_t)part->n * dh; /* (n, d_hidden) each */
    if (phase == 0) {
        c->train = train;
        nn_linear_forward(&g->a2, p, x, c->h, Bp);
        if (batch_stats) nn_batchnorm_part_sum(&g->bn, c->h, Bp, sums + (size_t)part->index * dh);
        return;
    }
    if (phase == 1) {
        if (batch_stats) {
            nn_batchnorm_part_mean(&g->bn, sums, part->n, part->B, c->mean);
            nn_batchnorm_part_sumsq(&g->bn, c->h, Bp, c->mean, ss + (size_t)part->index * dh);
        }
        return;
    }
    if (batch_stats) {
        nn_batchnorm_part_rstd(&g->bn, state, c->mean, ss, part->n, part->B, c->rstd);
        nn_batchnorm_part_apply(&g->bn, p, c->h, c->r, c->mean, c->rstd, Bp);
    } else if (g->norm == NN_NORM_BATCH) {
        nn_batchnorm_forward(&g->bn, p, state, c->h, c->r, c->mean, c->rstd, Bp, 0);
    } else {
        nn_layernorm_forward(&g->ln, p, c->h, c->r, c->mean, c->rstd, Bp);
    }
    nn_relu_forward(c->r, c->r, nh);
    if (train && g->dropout > 0.0f) nn_dropout_forward(c->r, c->t, c->mask, nh, g->dropout, rng);
    /* y (B, d_out) = x A1^T + t A3^T, then y = ReLU(y + b1 + b3) in one pass */
    nn_gemm_xwt(Bp, dout, g->d_in, x, p->w + g->a1.w, 0.0f, y);
    nn_gemm_xwt(Bp, dout, dh, gamma_t(g, c), p->w + g->a3.w, 1.0f, y);
    bias2_relu(y, p->w + g->a1.b, p->w + g->a3.b, Bp, dout);
}

void nn_gamma_forward(const nn_gamma *g, const nn_params *p, nn_params *state, nn_gamma_cache *c,
                      const float *x, float *y, int B, int train, hr_rng *rng)
{
    /* one part: its scratch holds the column sums and centred squares between the phases */
    float scratch[2 * g->d_hidden]; /* VLA: a layer width, small */
    nn_part one = {0, 1, B, scratch};
    for (int phase = 0; phase < 3; phase++) nn_gamma_forward_part(g, p, state, c, x, y, B, train, rng, &one, phase);
}

void nn_gamma_backward_part(const nn_gamma *g, nn_params *p, nn_gamma_cache *c, const float *x, const float *y,
                            const float *dy, float *dx, int Bp, const nn_part *part, int phase)
{
    HR_ASSERT(Bp <= c->cap);
    const int din = g->d_in, dh = g->d_hidden, dout = g->d_out, ld = dout + dh;
    const size_t nh = (size_t)Bp * dh;
    const int batch_stats = c->train && g->norm == NN_NORM_BATCH;
    float *dz = c->dz, *dhz = c->dz + dout; /* the two halves of the rows of [dz | dh] (B, ld) */
    if (phase == 0) {
        gate_rows(dz, ld, y, dy, Bp, dout);
        /* A3: dA3 += dz^T t, db3 += sum dz, then dt = dz A3 (written, so dt needs no zeroing) */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dout, dh, Bp, 1.0f, dz, ld, gamma_t(g, c), dh, 1.0f,
                    p->dw + g->a3.w, dh);
        nn_rows_sum_into_ld(p->dw + g->a3.b, dz, Bp, dout, ld);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Bp, dh, dout, 1.0f, dz, ld, p->w + g->a3.w, dh,
                    0.0f, c->dt, dh);
        /* through dropout and ReLU in place: dt becomes the gradient w.r.t. the norm output */
        if (c->train && g->dropout > 0.0f)
            for (size_t i = 0; i < nh; i++) c->dt[i] = nn_gate1(c->r[i], c->dt[i] * c->mask[i]);
        else
            gate_inplace(c->dt, c->r, nh);
        if (batch_stats)
            nn_batchnorm_part_dsums(&g->bn, c->h, c->dt, c->mean, c->rstd, Bp,
                                    part->scratch + (size_t)part->index * 2 * dh);
        return;
    }
    /* dh into the right half of [dz | dh] */
    if (batch_stats) {
        nn_batchnorm_part_backward(&g->bn, p, c->h, c->dt, c->mean, c->rstd, part->scratch, part->n, part->index,
                                   Bp, dhz, ld, 0, part->B);
    } else if (g->norm == NN_NORM_BATCH) {
        nn_batchnorm_backward_ld(&g->bn, p, c->h, c->mean, c->rstd, c->dt, dhz, ld, 0, Bp, 0);
    } else {
        for (int i = 0; i < Bp; i++) memset(dhz + (size_t)i * ld, 0, (size_t)dh * sizeof *dhz);
        nn_layernorm_backward_ld(&g->ln, p, c->h, c->mean, c->rstd, c->dt, dhz, ld, Bp);
    }
    /* [A1; A2]: d[A1; A2] += [dz | dh]^T x, d[b1; b2] += column sums, dx += [dz | dh] [A1; A2] */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ld, din, Bp, 1.0f, c->dz, ld, x, din, 1.0f,
                p->dw + g->a1.w, din);
    nn_rows_sum_into(p->dw + g->a1.b, c->dz, Bp, ld);
    if (dx) nn_gemm_xw(Bp, din, ld, c->dz, p->w + g->a1.w, 1.0f, dx);
}

void nn_gamma_backward(const nn_gamma *g, nn_params *p, nn_gamma_cache *c, const float *x, const float *y,
                       const float *dy, float *dx, int B)
{
    float scratch[2 * g->d_hidden]; /* VLA: a layer width, small */
    nn_part one = {0, 1, B, scratch};
    nn_gamma_backward_part(g, p, c, x, y, dy, dx, B, &one, 0);
    nn_gamma_backward_part(g, p, c, x, y, dy, dx, B, &one, 1);
}
