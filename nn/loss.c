/* Softmax and cross-entropy against soft targets (the Reformer's runtime-derived probabilities). */
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
