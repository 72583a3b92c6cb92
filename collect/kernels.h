/* kernels: the collector's two device kernels (spin.cu), shared by the cuDNN and cuBLASLt commands. */
#ifndef HEURIST_COLLECT_KERNELS_H
#define HEURIST_COLLECT_KERNELS_H

#include <cuda_runtime_api.h>

#include "collect.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Holds the stream for `us` microseconds (so that event times after it measure the GPU, not the host's
 * launch rate). 0, or -1 when the launch fails. */
int gpu_spin(cudaStream_t s, double us);
/* Fills n elements of type t with uniform values in [-1, 1]. 0, or -1 when the launch fails. */
int gpu_fill(cudaStream_t s, void *p, size_t n, collect_dtype t, unsigned seed);

#ifdef __cplusplus
}
#endif
#endif
