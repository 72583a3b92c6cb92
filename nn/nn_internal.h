/* Helpers shared by the dense ops of nn/ and nothing outside it. */
#ifndef HEURIST_NN_INTERNAL_H
#define HEURIST_NN_INTERNAL_H

#include <stddef.h>

#include "nn/nn.h"
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

/* GCC at -O2 (the release flags) vectorises a loop only when its trip count is a known multiple of the
 * vector width and its pointers cannot alias ("very cheap" cost model), and a select only when both
 * operands were loaded unconditionally. The hot elementwise passes are therefore functions of restrict
 * parameters (restrict on a local pointer is not used by GCC), kept out of line (NN_KERNEL: inlined into
 * a caller, the trip count's multiple-of-4 fact gets lost), looping over a body of NN_VEC4(n) iterations
 * and a scalar tail, with operands read into locals before any comparison. Every element sees the same
 * operations as in a plain scalar loop, so results are identical bit for bit. */
#define NN_VEC4(n) ((n) & ~3)
#if defined(__GNUC__)
#define NN_KERNEL __attribute__((noinline)) static
#else
#define NN_KERNEL static
#endif

/* y (B, out) = x (B, in) W^T + beta y, W (out, in). For B == 1 this is sgemv: OpenBLAS's sgemm packs
 * its operands even for a single row, which costs more than the product at single-problem inference. */
void nn_gemm_xwt(int B, int out, int in, const float *x, const float *W, float beta, float *y);
/* dx (B, in) = dy (B, out) W + beta dx, W (out, in): the input gradient of y = x W^T */
void nn_gemm_xw(int B, int in, int out, const float *dy, const float *W, float beta, float *dx);
/* db (n) += sum over the B rows of dy, whose rows are ld apart */
void nn_rows_sum_into_ld(float *restrict db, const float *restrict dy, int B, int n, int ld);
/* nn_batchnorm_backward with dx's rows ld apart, accumulating into dx when add, else writing it */
void nn_batchnorm_backward_ld(const nn_batchnorm *bn, nn_params *p, const float *x, const float *mean,
                              const float *rstd, const float *dy, float *dx, int ld, int add, int B, int train);
/* nn_layernorm_backward with dx's rows ld apart (accumulating) */
void nn_layernorm_backward_ld(const nn_layernorm *ln, nn_params *p, const float *x, const float *mean,
                              const float *rstd, const float *dy, float *dx, int ld, int B);
/* db (n) += sum over the B rows of dy (B, n) */
void nn_rows_sum_into(float *restrict db, const float *restrict dy, int B, int n);
/* y (n) = x (n) + z (n); y may alias x */
void nn_add(float *y, const float *x, const float *z, size_t n);
/* Allocates n zeroed floats into *out; returns 0 or HR_ENOMEM, and keeps failing once it failed (so
 * cache_init functions can allocate everything, check once and free what was obtained). */
int nn_floats_alloc(float **out, size_t n, int rc);

#endif
