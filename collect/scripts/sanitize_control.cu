// The controls of device_sanitize.sh: a planted fault compute-sanitizer's memcheck must report before a clean run of
// heurist-collect under it means anything (that the tool looked, not that it could not see on this machine).
//   sanitize_control oob    a kernel writes one int past the end of a 256-int allocation
//   sanitize_control leak   1 KiB allocated and never freed, the context destroyed (cudaDeviceReset) at the end
// Exit status 0 when the CUDA calls succeeded (memcheck's own exit status says what it found), 2 on usage.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void write_past_end(int *p, int n)
{
    p[n] = 1;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "oob") && strcmp(argv[1], "leak"))) {
        fprintf(stderr, "usage: sanitize_control oob|leak\n");
        return 2;
    }
    const int n = 256;
    int *p = nullptr;
    if (cudaMalloc(&p, n * sizeof *p) != cudaSuccess) return 1;
    if (!strcmp(argv[1], "oob")) {
        write_past_end<<<1, 1>>>(p, n);
        cudaDeviceSynchronize();
        cudaFree(p);
        return 0;
    }
    void *leaked = nullptr;
    if (cudaMalloc(&leaked, 1024) != cudaSuccess) return 1;
    cudaFree(p);
    cudaDeviceReset();
    return 0;
}
