// The two device kernels the collector needs: a spin that holds the stream while the host queues the timed
// launches (so that event times measure the GPU, not the host's launch rate), and a fill of the tensors
// with uniform values in [-1, 1] (timings on zeros can differ from timings on data).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels.h"

__global__ void collect_spin_kernel(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

__device__ static float uniform(unsigned long long i, unsigned seed)
{
    unsigned long long z = i * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

template <typename T> __global__ void collect_fill_kernel(T *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (T)uniform(i, seed);
}

extern "C" int gpu_spin(cudaStream_t s, double us)
{
    collect_spin_kernel<<<1, 1, 0, s>>>((unsigned long long)(us * 1000.0));
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int gpu_fill(cudaStream_t s, void *p, size_t n, collect_dtype t, unsigned seed)
{
    const int threads = 256, blocks = 1024;
    switch (t) {
    case COLLECT_DTYPE_FP32: collect_fill_kernel<<<blocks, threads, 0, s>>>((float *)p, n, seed); break;
    case COLLECT_DTYPE_FP16: collect_fill_kernel<<<blocks, threads, 0, s>>>((__half *)p, n, seed); break;
    case COLLECT_DTYPE_BF16: collect_fill_kernel<<<blocks, threads, 0, s>>>((__nv_bfloat16 *)p, n, seed); break;
    }
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
