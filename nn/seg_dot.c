/* Segment dot products: the score of a candidate i of problem s in a two-tower model, z_i = u_s . v_i, over a
 * mini-batch of problems flattened into their candidates (the offsets of nn_xent_seg). */
#include <cblas.h>

#include "nn/nn.h"

void nn_seg_dot_forward(const float *u, const float *v, const int *off, int S, int D, float *z)
{
    for (int s = 0; s < S; s++) {
        const int n = off[s + 1] - off[s];
        if (n > 0)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, n, D, 1.0f, v + (size_t)off[s] * D, D, u + (size_t)s * D, 1,
                        0.0f, z + off[s], 1);
    }
}

void nn_seg_dot_backward(const float *u, const float *v, const int *off, int S, int D, const float *dz, float *du,
                         float *dv)
{
    for (int s = 0; s < S; s++) {
        const int a = off[s], n = off[s + 1] - a;
        if (n <= 0) continue;
        /* du_s += v[a..a+n)^T dz[a..a+n); dv[a..a+n) += dz u_s^T */
        if (du)
            cblas_sgemv(CblasRowMajor, CblasTrans, n, D, 1.0f, v + (size_t)a * D, D, dz + a, 1, 1.0f,
                        du + (size_t)s * D, 1);
        if (dv) cblas_sger(CblasRowMajor, n, D, 1.0f, dz + a, 1, u + (size_t)s * D, 1, dv + (size_t)a * D, D);
    }
}
