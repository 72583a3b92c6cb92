/* Softmax and cross-entropy against soft targets (the Reformer's runtime-derived probabilities), and
 * per-class binary cross-entropy on logits (the Reformer's applicability head). */
#include <math.h>

#include "nn/nn.h"

/* Writes softmax(z) into p for one row and returns log(sum exp(z)) (max-shifted, so no overflow). */
static float softmax_row(const float *z, float *p, int C)
{
    float mx = z[0];
    for (int i = 1; i < C; i++) mx = z[i] > mx ? z[i] : mx;
    float s = 0.0f;
    for (int i = 0; i < C; i++) {
        p[i] = expf(z[i] - mx);
        s += p[i];
    }
    float inv = 1.0f / s;
    for (int i = 0; i < C; i++) p[i] *= inv;
    return mx + logf(s);
}

void nn_softmax_forward(const float *z, float *p, int B, int C)
{
    for (int b = 0; b < B; b++) softmax_row(z + (size_t)b * C, p + (size_t)b * C, C);
}

float nn_xent_forward(const float *z, const float *y, float *prob, int B, int C)
{
    double loss = 0.0;
    for (int b = 0; b < B; b++) {
        const float *zr = z + (size_t)b * C, *yr = y + (size_t)b * C;
        float lse = softmax_row(zr, prob + (size_t)b * C, C);
        /* log softmax = z - lse stays finite where the probability underflows; y_i = 0 terms vanish */
        for (int i = 0; i < C; i++)
            if (yr[i] != 0.0f) loss -= (double)yr[i] * (zr[i] - lse);
    }
    return (float)(loss / B);
}

void nn_xent_backward(const float *prob, const float *y, float *dz, int B, int C, float scale)
{
    float s = scale / (float)B;
    for (int b = 0; b < B; b++) {
        const float *pr = prob + (size_t)b * C, *yr = y + (size_t)b * C;
        float *dr = dz + (size_t)b * C;
        float ysum = 0.0f;
        for (int i = 0; i < C; i++) ysum += yr[i];
        for (int i = 0; i < C; i++) dr[i] += s * (pr[i] * ysum - yr[i]);
    }
}

/* softplus(z) = log(1 + e^z) = max(z, 0) + log1p(e^-|z|) */
static float softplus(float z)
{
    return (z > 0.0f ? z : 0.0f) + log1pf(expf(-fabsf(z)));
}

float nn_log_sigmoid(float z)
{
    return -softplus(-z);
}

float nn_bce_logits_forward(const float *z, const float *y, float *prob, int B, int C)
{
    double loss = 0.0;
    const size_t n = (size_t)B * C;
    for (size_t i = 0; i < n; i++) {
        /* sigmoid through e^-|z| so neither branch overflows */
        float e = expf(-fabsf(z[i]));
        prob[i] = z[i] >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
        loss += (double)((z[i] > 0.0f ? z[i] : 0.0f) + log1pf(e)) - (double)y[i] * z[i]; /* softplus, e reused */
    }
    return (float)(loss / B);
}

void nn_bce_logits_backward(const float *prob, const float *y, float *dz, int B, int C, float scale)
{
    const float s = scale / (float)B;
    const size_t n = (size_t)B * C;
    for (size_t i = 0; i < n; i++) dz[i] += s * (prob[i] - y[i]);
}
