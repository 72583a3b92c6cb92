/* Elementwise activations. ReLU's backward reads its output so that callers may overwrite the input. */
#include <math.h>

#include "nn/nn.h"
#include "nn/nn_internal.h"

/* y (n) = max(x, 0) over restrict parameters, so that the body loop vectorises (see NN_VEC4) */
NN_KERNEL void relu_body(float *restrict y, const float *restrict x, size_t n4)
{
    for (size_t i = 0; i < n4; i++) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

/* the same in place */
NN_KERNEL void relu_body_inplace(float *restrict y, size_t n4)
{
    for (size_t i = 0; i < n4; i++) {
        float v = y[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

void nn_relu_forward(const float *x, float *y, size_t n)
{
    const size_t n4 = NN_VEC4(n);
    if (x == y) relu_body_inplace(y, n4);
    else relu_body(y, x, n4);
    for (size_t i = n4; i < n; i++) y[i] = nn_relu1(x[i]);
}

void nn_relu_backward(const float *y, const float *dy, float *dx, size_t n)
{
    for (size_t i = 0; i < n; i++) dx[i] += nn_gate1(y[i], dy[i]);
}

void nn_gelu_forward(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}

void nn_gelu_backward(const float *x, const float *dy, float *dx, size_t n)
{
    const float inv_sqrt_2pi = 0.3989422804014327f;
    for (size_t i = 0; i < n; i++) {
        float cdf = 0.5f * (1.0f + erff(x[i] * 0.70710678118654752f));
        float pdf = inv_sqrt_2pi * expf(-0.5f * x[i] * x[i]);
        dx[i] += dy[i] * (cdf + x[i] * pdf);
    }
}
