/* LayerNorm (per row) and BatchNorm1d (per feature, running statistics in the state block), both with
 * eps 1e-5 and the PyTorch conventions: biased variance to normalise, unbiased variance in running_var. */
#include <math.h>
#include <stdio.h>

#include "nn/nn.h"
#include "nn/nn_internal.h"
#include "nn/parts.h"

void nn_layernorm_layout(nn_layernorm *ln, nn_params *p, const char *name, int d)
{
    char buf[64];
    ln->d = d;
    ln->eps = 1e-5f;
    snprintf(buf, sizeof buf, "%s.weight", name);
    ln->gamma = nn_params_add(p, buf, (size_t)d);
    snprintf(buf, sizeof buf, "%s.bias", name);
    ln->beta = nn_params_add(p, buf, (size_t)d);
}

void nn_layernorm_reset(const nn_layernorm *ln, nn_params *p)
{
    for (int j = 0; j < ln->d; j++) {
        p->w[ln->gamma + j] = 1.0f;
        p->w[ln->beta + j] = 0.0f;
    }
}

void nn_layernorm_forward(const nn_layernorm *ln, const nn_params *p, const float *x, float *y, float *mean,
                          float *rstd, int B)
{
    const int d = ln->d;
    const float *g = p->w + ln->gamma, *be = p->w + ln->beta;
    for (int i = 0; i < B; i++) {
        const float *xr = x + (size_t)i * d;
        float *yr = y + (size_t)i * d;
        float mu = 0.0f;
        for (int j = 0; j < d; j++) mu += xr[j];
        mu /= (float)d;
        float var = 0.0f; /* two-pass variance: no cancellation for rows with a large mean */
        for (int j = 0; j < d; j++) var += (xr[j] - mu) * (xr[j] - mu);
        float rs = 1.0f / sqrtf(var / (float)d + ln->eps);
        for (int j = 0; j < d; j++) yr[j] = g[j] * (xr[j] - mu) * rs + be[j];
        if (mean) mean[i] = mu;
        if (rstd) rstd[i] = rs;
    }
}

void nn_layernorm_backward(const nn_layernorm *ln, nn_params *p, const float *x, const float *mean,
                           const float *rstd, const float *dy, float *dx, int B)
{
    nn_layernorm_backward_ld(ln, p, x, mean, rstd, dy, dx, ln->d, B);
}

void nn_layernorm_backward_ld(const nn_layernorm *ln, nn_params *p, const float *x, const float *mean,
                              const float *rstd, const float *dy, float *dx, int ld, int B)
{
    const int d = ln->d;
    const float *g = p->w + ln->gamma;
    float *dg = p->dw + ln->gamma, *db = p->dw + ln->beta;
    for (int i = 0; i < B; i++) {
        const float *xr = x + (size_t)i * d, *dyr = dy + (size_t)i * d;
        float *dxr = dx + (size_t)i * ld;
        float mu = mean[i], rs = rstd[i];
        float sum_g = 0.0f, sum_gx = 0.0f;
        for (int j = 0; j < d; j++) {
            float xh = (xr[j] - mu) * rs;
            float gj = dyr[j] * g[j];
            dg[j] += dyr[j] * xh;
            db[j] += dyr[j];
            sum_g += gj;
            sum_gx += gj * xh;
        }
        sum_g /= (float)d;
        sum_gx /= (float)d;
        for (int j = 0; j < d; j++) {
            float xh = (xr[j] - mu) * rs;
            dxr[j] += rs * (dyr[j] * g[j] - sum_g - xh * sum_gx);
        }
    }
}

void nn_batchnorm_layout(nn_batchnorm *bn, nn_params *p, nn_params *state, const char *name, int d)
{
    char buf[64];
    bn->d = d;
    bn->eps = 1e-5f;
    bn->momentum = 0.1f;
    snprintf(buf, sizeof buf, "%s.weight", name);
    bn->gamma = nn_params_add(p, buf, (size_t)d);
    snprintf(buf, sizeof buf, "%s.bias", name);
    bn->beta = nn_params_add(p, buf, (size_t)d);
    snprintf(buf, sizeof buf, "%s.running_mean", name);
    bn->run_mean = nn_params_add(state, buf, (size_t)d);
    snprintf(buf, sizeof buf, "%s.running_var", name);
    bn->run_var = nn_params_add(state, buf, (size_t)d);
}

void nn_batchnorm_reset(const nn_batchnorm *bn, nn_params *p, nn_params *state)
{
    for (int j = 0; j < bn->d; j++) {
        p->w[bn->gamma + j] = 1.0f;
        p->w[bn->beta + j] = 0.0f;
        state->w[bn->run_mean + j] = 0.0f;
        state->w[bn->run_var + j] = 1.0f;
    }
}

/* BatchNorm's passes over a (B, d) matrix, as functions of restrict parameters so that the loops over
 * features vectorise (see NN_VEC4) */

/* acc (d) += sum over rows of x (B, d) */
NN_KERNEL void bn_colsum(float *restrict acc, const float *restrict x, int B, int d)
{
    const int d4 = NN_VEC4(d);
    for (int i = 0; i < B; i++, x += d) {
        for (int j = 0; j < d4; j++) acc[j] += x[j];
        for (int j = d4; j < d; j++) acc[j] += x[j];
    }
}

/* ss (d) += sum over rows of (x - mu)^2 */
NN_KERNEL void bn_colsumsq(float *restrict ss, const float *restrict x, const float *restrict mu, int B, int d)
{
    const int d4 = NN_VEC4(d);
    for (int i = 0; i < B; i++, x += d) {
        for (int j = 0; j < d4; j++) {
            float c = x[j] - mu[j];
            ss[j] += c * c;
        }
        for (int j = d4; j < d; j++) {
            float c = x[j] - mu[j];
            ss[j] += c * c;
        }
    }
}

/* y (B, d) = g (x - mean) rstd + beta */
NN_KERNEL void bn_affine_to(float *restrict y, const float *restrict x, const float *restrict g,
                         const float *restrict mean, const float *restrict rstd, const float *restrict be, int B,
                         int d)
{
    const int d4 = NN_VEC4(d);
    for (int i = 0; i < B; i++, x += d, y += d) {
        for (int j = 0; j < d4; j++) y[j] = g[j] * (x[j] - mean[j]) * rstd[j] + be[j];
        for (int j = d4; j < d; j++) y[j] = g[j] * (x[j] - mean[j]) * rstd[j] + be[j];
    }
}

/* the same in place */
NN_KERNEL void bn_affine_inplace(float *restrict y, const float *restrict g, const float *restrict mean,
                              const float *restrict rstd, const float *restrict be, int B, int d)
{
    const int d4 = NN_VEC4(d);
    for (int i = 0; i < B; i++, y += d) {
        for (int j = 0; j < d4; j++) y[j] = g[j] * (y[j] - mean[j]) * rstd[j] + be[j];
        for (int j = d4; j < d; j++) y[j] = g[j] * (y[j] - mean[j]) * rstd[j] + be[j];
    }
}

static void bn_affine(const float *x, float *y, const float *g, const float *mean, const float *rstd,
                      const float *be, int B, int d)
{
    if (x == y) bn_affine_inplace(y, g, mean, rstd, be, B, d);
    else bn_affine_to(y, x, g, mean, rstd, be, B, d);
}

/* sdy (d) += sum over rows of dy; sdyx (d) += sum over rows of dy (x - mean) rstd */
NN_KERNEL void bn_dsums(float *restrict sdy, float *restrict sdyx, const float *restrict x, const float *restrict dy,
                     const float *restrict mean, const float *restrict rstd, int B, int d)
{
    const int d4 = NN_VEC4(d);
    for (int i = 0; i < B; i++, x += d, dy += d) {
        for (int j = 0; j < d4; j++) {
            float dyv = dy[j];
            sdy[j] += dyv;
            sdyx[j] += dyv * (x[j] - mean[j]) * rstd[j];
        }
        for (int j = d4; j < d; j++) {
            float dyv = dy[j];
            sdy[j] += dyv;
            sdyx[j] += dyv * (x[j] - mean[j]) * rstd[j];
        }
    }
}

/* dx (B, d; rows ld apart) += g rstd (dy - mdy - xh mdyx), xh = (x - mean) rstd; written (=) when !add */
NN_KERNEL void bn_dx(float *restrict dx, int ld, int add, const float *restrict x, const float *restrict dy,
                     const float *restrict g, const float *restrict mean, const float *restrict rstd,
                     const float *restrict mdy, const float *restrict mdyx, int B, int d)
{
    const int d4 = NN_VEC4(d);
    for (int i = 0; i < B; i++, x += d, dy += d, dx += ld) {
        if (add)
            for (int j = 0; j < d4; j++) {
                float xh = (x[j] - mean[j]) * rstd[j];
                dx[j] += g[j] * rstd[j] * (dy[j] - mdy[j] - xh * mdyx[j]);
            }
        else
            for (int j = 0; j < d4; j++) {
                float xh = (x[j] - mean[j]) * rstd[j];
                dx[j] = g[j] * rstd[j] * (dy[j] - mdy[j] - xh * mdyx[j]);
            }
        for (int j = d4; j < d; j++) {
            float xh = (x[j] - mean[j]) * rstd[j], v = g[j] * rstd[j] * (dy[j] - mdy[j] - xh * mdyx[j]);
            dx[j] = add ? dx[j] + v : v;
        }
    }
}

/* dx (B, d; rows ld apart) += dy g rstd; written (=) when !add */
NN_KERNEL void bn_dx_eval(float *restrict dx, int ld, int add, const float *restrict dy, const float *restrict g,
                          const float *restrict rstd, int B, int d)
{
    const int d4 = NN_VEC4(d);
    for (int i = 0; i < B; i++, dy += d, dx += ld) {
        if (add)
            for (int j = 0; j < d4; j++) dx[j] += dy[j] * g[j] * rstd[j];
        else
            for (int j = 0; j < d4; j++) dx[j] = dy[j] * g[j] * rstd[j];
        for (int j = d4; j < d; j++) dx[j] = add ? dx[j] + dy[j] * g[j] * rstd[j] : dy[j] * g[j] * rstd[j];
    }
}

void nn_batchnorm_forward(const nn_batchnorm *bn, const nn_params *p, nn_params *state, const float *x,
                          float *y, float *mean, float *rstd, int B, int train)
{
    const int d = bn->d;
    const float *g = p->w + bn->gamma, *be = p->w + bn->beta;
    float *rm = state->w + bn->run_mean, *rv = state->w + bn->run_var;
    if (!train) {
        /* inference is an affine map per feature; the statistics are written first when asked for (backward
         * in eval mode) so each sqrt is taken once (a model that needs it faster folds this map into the
         * preceding linear layer at export) */
        if (mean && rstd) {
            for (int j = 0; j < d; j++) {
                mean[j] = rm[j];
                rstd[j] = 1.0f / sqrtf(rv[j] + bn->eps);
            }
            bn_affine(x, y, g, mean, rstd, be, B, d);
        } else {
            for (int i = 0; i < B; i++) {
                const float *xr = x + (size_t)i * d;
                float *yr = y + (size_t)i * d;
                for (int j = 0; j < d; j++) yr[j] = g[j] * (xr[j] - rm[j]) / sqrtf(rv[j] + bn->eps) + be[j];
            }
        }
        return;
    }
    HR_ASSERT(B > 1 && mean && rstd);
    /* column statistics accumulated row by row so that x is read contiguously; two passes (mean, then the
     * centred squares) so that a large mean does not cancel the variance */
    nn_batchnorm_part_sum(bn, x, B, mean);
    nn_batchnorm_part_mean(bn, mean, 1, B, mean);
    nn_batchnorm_part_sumsq(bn, x, B, mean, rstd);
    nn_batchnorm_part_rstd(bn, state, mean, rstd, 1, B, rstd);
    bn_affine(x, y, g, mean, rstd, be, B, d);
}

/* ---- a batch in parts ---- */

/* v[0] + v[stride] + ... + v[(nparts - 1) stride]: one statistic summed over the parts, in part order */
static float parts_total(const float *v, int nparts, size_t stride)
{
    float s = v[0];
    for (int q = 1; q < nparts; q++) s += v[(size_t)q * stride];
    return s;
}

void nn_batchnorm_part_sum(const nn_batchnorm *bn, const float *x, int Bp, float *sum)
{
    for (int j = 0; j < bn->d; j++) sum[j] = 0.0f;
    bn_colsum(sum, x, Bp, bn->d);
}

void nn_batchnorm_part_mean(const nn_batchnorm *bn, const float *sums, int nparts, int B, float *mean)
{
    const int d = bn->d;
    for (int j = 0; j < d; j++) mean[j] = parts_total(sums + j, nparts, (size_t)d) / (float)B;
}

void nn_batchnorm_part_sumsq(const nn_batchnorm *bn, const float *x, int Bp, const float *mean, float *ss)
{
    for (int j = 0; j < bn->d; j++) ss[j] = 0.0f;
    bn_colsumsq(ss, x, mean, Bp, bn->d);
}

void nn_batchnorm_part_rstd(const nn_batchnorm *bn, nn_params *state, const float *mean, const float *ss,
                            int nparts, int B, float *rstd)
{
    const int d = bn->d;
    for (int j = 0; j < d; j++) {
        const float s = parts_total(ss + j, nparts, (size_t)d);
        if (state) {
            float *rm = state->w + bn->run_mean, *rv = state->w + bn->run_var;
            rm[j] = (1.0f - bn->momentum) * rm[j] + bn->momentum * mean[j];
            rv[j] = (1.0f - bn->momentum) * rv[j] + bn->momentum * s / (float)(B - 1);
        }
        rstd[j] = 1.0f / sqrtf(s / (float)B + bn->eps);
    }
}

void nn_batchnorm_part_apply(const nn_batchnorm *bn, const nn_params *p, const float *x, float *y,
                             const float *mean, const float *rstd, int Bp)
{
    bn_affine(x, y, p->w + bn->gamma, mean, rstd, p->w + bn->beta, Bp, bn->d);
}

/* dgamma += sums[d..2d), dbeta += sums[0..d): one part's rows of dsums */
static void bn_param_grads(const nn_batchnorm *bn, nn_params *p, const float *sums)
{
    const int d = bn->d;
    float *dg = p->dw + bn->gamma, *db = p->dw + bn->beta;
    for (int j = 0; j < d; j++) {
        dg[j] += sums[d + j];
        db[j] += sums[j];
    }
}

void nn_batchnorm_backward(const nn_batchnorm *bn, nn_params *p, const float *x, const float *mean,
                           const float *rstd, const float *dy, float *dx, int B, int train)
{
    nn_batchnorm_backward_ld(bn, p, x, mean, rstd, dy, dx, bn->d, 1, B, train);
}

void nn_batchnorm_backward_ld(const nn_batchnorm *bn, nn_params *p, const float *x, const float *mean,
                              const float *rstd, const float *dy, float *dx, int ld, int add, int B, int train)
{
    const int d = bn->d;
    /* dg = sum_rows dy xh, db = sum_rows dy; in train mode these are also the column sums the dx formula
     * needs: mean_col(g) = gamma db / B, mean_col(g xh) = gamma dg / B (before accumulating into dw). */
    float sums[d > 0 ? 2 * d : 1]; /* VLA: d is a layer width, small */
    nn_batchnorm_part_dsums(bn, x, dy, mean, rstd, B, sums);
    if (!train) {
        bn_param_grads(bn, p, sums);
        bn_dx_eval(dx, ld, add, dy, p->w + bn->gamma, rstd, B, d);
        return;
    }
    nn_batchnorm_part_backward(bn, p, x, dy, mean, rstd, sums, 1, 0, B, dx, ld, add, B);
}

void nn_batchnorm_part_dsums(const nn_batchnorm *bn, const float *x, const float *dy, const float *mean,
                             const float *rstd, int Bp, float *sums)
{
    const int d = bn->d;
    for (int j = 0; j < 2 * d; j++) sums[j] = 0.0f;
    bn_dsums(sums, sums + d, x, dy, mean, rstd, Bp, d);
}

void nn_batchnorm_part_backward(const nn_batchnorm *bn, nn_params *p, const float *x, const float *dy,
                                const float *mean, const float *rstd, const float *sums, int nparts, int part,
                                int Bp, float *dx, int ld, int add, int B)
{
    const int d = bn->d;
    bn_param_grads(bn, p, sums + (size_t)part * 2 * d);
    float mdy[d > 0 ? d : 1], mdyx[d > 0 ? d : 1]; /* VLA: d is a layer width, small */
    for (int j = 0; j < d; j++) {
        mdy[j] = parts_total(sums + j, nparts, (size_t)2 * d) / (float)B;
        mdyx[j] = parts_total(sums + d + j, nparts, (size_t)2 * d) / (float)B;
    }
    bn_dx(dx, ld, add, x, dy, p->w + bn->gamma, mean, rstd, mdy, mdyx, Bp, d);
}
