/* kernels: the collector's device kernels (spin.cu), shared by the cuDNN and cuBLASLt commands. */
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
/* Fills n FP8 E4M3 elements (bytes) with uniform values in [-1, 1] rounded to E4M3. 0, or -1. */
int gpu_fill_e4m3(cudaStream_t s, void *p, size_t n, unsigned seed);

/* A hold the host releases: gpu_hold queues a kernel that waits until gpu_hold_release writes a flag in mapped
 * pinned host memory (or until timeout_us passes), so that every launch the host queues behind it starts only
 * once all are queued, however long the host took, without guessing a spin's length (nvbench's blocking kernel
 * does the same). After the stream's synchronisation, gpu_hold_timed_out says whether the hold gave up waiting:
 * then the launches behind it were not all queued in time and their events may include host gaps. */
typedef struct gpu_hold_flag {
    volatile unsigned *host; /* [0] release, [1] timed out; cudaHostAlloc'd, mapped */
    unsigned *dev;           /* the same words as the device sees them */
} gpu_hold_flag;

/* Allocates the flag. 0, or -1 when mapped pinned memory is not available. */
int gpu_hold_init(gpu_hold_flag *h);
void gpu_hold_free(gpu_hold_flag *h);
/* Resets the flag and queues the waiting kernel on s. 0, or -1 when the launch fails. */
int gpu_hold(cudaStream_t s, gpu_hold_flag *h, double timeout_us);
/* Releases the kernel queued by gpu_hold. */
void gpu_hold_release(gpu_hold_flag *h);
/* After the stream is synchronised: 1 when the hold ended by its timeout, not by the release. */
int gpu_hold_timed_out(const gpu_hold_flag *h);

#ifdef __cplusplus
}
#endif
#endif
