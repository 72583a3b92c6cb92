/* Helpers shared by the dense ops of nn/ and nothing outside it. */
#ifndef HEURIST_NN_INTERNAL_H
#define HEURIST_NN_INTERNAL_H

#include <stddef.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

/* ReLU and its gate without branches: signs of activations are random, so a compare-and-branch loop
 * mispredicts half the time and dominates small layers; at -O2 GCC keeps the branch, hence maxss/andps. */
static inline float nn_relu1(float v)
{
#if defined(__SSE__)
    return _mm_cvtss_f32(_mm_max_ss(_mm_set_ss(v), _mm_setzero_ps()));
#else
    return v > 0.0f ? v : 0.0f;
#endif
}

/* g where v > 0, else 0 */
static inline float nn_gate1(float v, float g)
{
#if defined(__SSE__)
    return _mm_cvtss_f32(_mm_and_ps(_mm_cmpgt_ss(_mm_set_ss(v), _mm_setzero_ps()), _mm_set_ss(g)));
#else
    return v > 0.0f ? g : 0.0f;
#endif
}

/* y (B, out) = x (B, in) W^T + beta y, W (out, in). For B == 1 this is sgemv: OpenBLAS's sgemm packs
 * its operands even for a single row, which costs more than the product at single-problem inference. */
void nn_gemm_xwt(int B, int out, int in, const float *x, const float *W, float beta, float *y);
/* y (B, n) += b broadcast over rows */
void nn_rows_add_bias(float *y, const float *b, int B, int n);
/* db (n) += sum over the B rows of dy (B, n) */
void nn_rows_sum_into(float *db, const float *dy, int B, int n);
/* y (n) = x (n) + z (n); y may alias x */
void nn_add(float *y, const float *x, const float *z, size_t n);
/* Allocates n zeroed floats into *out; returns 0 or HR_ENOMEM, and keeps failing once it failed (so
 * cache_init functions can allocate everything, check once and free what was obtained). */
int nn_floats_alloc(float **out, size_t n, int rc);

#endif
