/* LayerNorm (per row) and BatchNorm1d (per feature, running statistics in the state block), both with
 * eps 1e-5 and the PyTorch conventions: biased variance to normalise, unbiased variance in running_var. */
#include <math.h>
#include <stdio.h>

#include "nn/nn.h"

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
    const int d = ln->d;
    const float *g = p->w + ln->gamma;
    float *dg = p->dw + ln->gamma, *db = p->dw + ln->beta;
    for (int i = 0; i < B; i++) {
        const float *xr = x + (size_t)i * d, *dyr = dy + (size_t)i * d;
        float *dxr = dx + (size_t)i * d;
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
            for (int i = 0; i < B; i++) {
                const float *xr = x + (size_t)i * d;
                float *yr = y + (size_t)i * d;
                for (int j = 0; j < d; j++) yr[j] = g[j] * (xr[j] - rm[j]) * rstd[j] + be[j];
            }
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
    /* column statistics accumulated row by row so that x is read contiguously */
    for (int j = 0; j < d; j++) mean[j] = rstd[j] = 0.0f;
    for (int i = 0; i < B; i++)
        for (int j = 0; j < d; j++) mean[j] += x[(size_t)i * d + j];
    for (int j = 0; j < d; j++) mean[j] /= (float)B;
    for (int i = 0; i < B; i++)
        for (int j = 0; j < d; j++) {
            float c = x[(size_t)i * d + j] - mean[j];
            rstd[j] += c * c; /* sum of squares for now */
        }
    for (int j = 0; j < d; j++) {
        float var = rstd[j] / (float)B;
        rm[j] = (1.0f - bn->momentum) * rm[j] + bn->momentum * mean[j];
        rv[j] = (1.0f - bn->momentum) * rv[j] + bn->momentum * rstd[j] / (float)(B - 1);
        rstd[j] = 1.0f / sqrtf(var + bn->eps);
    }
    for (int i = 0; i < B; i++) {
        const float *xr = x + (size_t)i * d;
        float *yr = y + (size_t)i * d;
        for (int j = 0; j < d; j++) yr[j] = g[j] * (xr[j] - mean[j]) * rstd[j] + be[j];
    }
}

void nn_batchnorm_backward(const nn_batchnorm *bn, nn_params *p, const float *x, const float *mean,
                           const float *rstd, const float *dy, float *dx, int B, int train)
{
    const int d = bn->d;
    const float *g = p->w + bn->gamma;
    float *dg = p->dw + bn->gamma, *db = p->dw + bn->beta;
    /* dg = sum_rows dy xh, db = sum_rows dy; in train mode these are also the column sums the dx formula
     * needs: mean_col(g) = gamma db / B, mean_col(g xh) = gamma dg / B (before accumulating into dw). */
    float sdy[d > 0 ? d : 1], sdyx[d > 0 ? d : 1]; /* VLA: d is a layer width, small */
    for (int j = 0; j < d; j++) sdy[j] = sdyx[j] = 0.0f;
    for (int i = 0; i < B; i++)
        for (int j = 0; j < d; j++) {
            float dyv = dy[(size_t)i * d + j];
            sdy[j] += dyv;
            sdyx[j] += dyv * (x[(size_t)i * d + j] - mean[j]) * rstd[j];
        }
    for (int j = 0; j < d; j++) {
        dg[j] += sdyx[j];
        db[j] += sdy[j];
    }
    if (!train) {
        for (int i = 0; i < B; i++)
            for (int j = 0; j < d; j++) dx[(size_t)i * d + j] += dy[(size_t)i * d + j] * g[j] * rstd[j];
        return;
    }
    for (int j = 0; j < d; j++) {
        sdy[j] /= (float)B;
        sdyx[j] /= (float)B;
    }
    for (int i = 0; i < B; i++)
        for (int j = 0; j < d; j++) {
            float xh = (x[(size_t)i * d + j] - mean[j]) * rstd[j];
            dx[(size_t)i * d + j] += g[j] * rstd[j] * (dy[(size_t)i * d + j] - sdy[j] - xh * sdyx[j]);
        }
}
