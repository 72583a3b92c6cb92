// The device kernels the collector needs: a spin that holds the stream for a set time and a hold that waits for
// the host's release, both so that the host queues the timed launches before the first starts (event times then
// measure the GPU, not the host's launch rate), and a fill of the tensors with uniform values in [-1, 1]
// (timings on zeros can differ from timings on data).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
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

// Waits until the host writes flag[0] (mapped pinned memory, read through volatile loads) or timeout_ns pass;
// flag[1] = 1 says the timeout ended it.
__global__ void collect_hold_kernel(volatile unsigned *flag, unsigned long long timeout_ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (flag[0] == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= timeout_ns) {
            flag[1] = 1;
            break;
        }
    }
    __threadfence_system();
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

extern "C" int gpu_fill_e4m3(cudaStream_t s, void *p, size_t n, unsigned seed)
{
    collect_fill_kernel<<<1024, 256, 0, s>>>((__nv_fp8_e4m3 *)p, n, seed);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int gpu_hold_init(gpu_hold_flag *h)
{
    void *p = NULL, *d = NULL;
    h->host = NULL;
    h->dev = NULL;
    if (cudaHostAlloc(&p, 2 * sizeof(unsigned), cudaHostAllocMapped) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess) {
        cudaGetLastError();
        cudaFreeHost(p);
        return -1;
    }
    h->host = (volatile unsigned *)p;
    h->dev = (unsigned *)d;
    return 0;
}

extern "C" void gpu_hold_free(gpu_hold_flag *h)
{
    if (h->host) cudaFreeHost((void *)h->host);
    h->host = NULL;
    h->dev = NULL;
}

extern "C" int gpu_hold(cudaStream_t s, gpu_hold_flag *h, double timeout_us)
{
    h->host[0] = 0;
    h->host[1] = 0;
    __sync_synchronize();
    collect_hold_kernel<<<1, 1, 0, s>>>(h->dev, (unsigned long long)(timeout_us * 1000.0));
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" void gpu_hold_release(gpu_hold_flag *h)
{
    __sync_synchronize();
    h->host[0] = 1;
    __sync_synchronize();
}

extern "C" int gpu_hold_timed_out(const gpu_hold_flag *h)
{
    return h->host[1] != 0;
}
