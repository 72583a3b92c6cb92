/* Which timer measures (timer.h): the fake one under HEURIST_COLLECT_FAKE, else the GPU's where the build has
 * CUDA. Part of the executable, which knows whether it was built with CUDA (HEURIST_COLLECT_CUDA). */
#include "timer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int collect_timer_is_fake(void)
{
    const char *n = getenv("HEURIST_COLLECT_FAKE");
    return n && *n && strcmp(n, "0") != 0;
}

int collect_timer_memcheck(void)
{
    const char *v = getenv("HEURIST_COLLECT_MEMCHECK");
    return v && *v && strcmp(v, "0") != 0;
}

int collect_device_count(int *n)
{
    *n = 0;
    if (collect_timer_is_fake()) {
        char *end;
        long v = strtol(getenv("HEURIST_COLLECT_FAKE"), &end, 10);
        if (*end || v < 1 || v > 64) return collect_error(COLLECT_EINVAL, "HEURIST_COLLECT_FAKE: expected a device count in [1, 64]");
        *n = (int)v;
        return COLLECT_OK;
    }
#ifdef HEURIST_COLLECT_CUDA
    /* CUDA cannot be used across fork once initialised: a child counts the GPUs and exits with the count */
    pid_t p = fork();
    if (p < 0) return collect_error(COLLECT_EIO, "fork: %s", strerror(errno));
    if (p == 0) {
        int count = 0;
        if (collect_gpu_count(&count)) {
            fprintf(stderr, "heurist-collect: %s\n", collect_last_error());
            _exit(255);
        }
        _exit(count < 250 ? count : 250);
    }
    int st;
    while (waitpid(p, &st, 0) < 0)
        if (errno != EINTR) return collect_error(COLLECT_EIO, "waitpid: %s", strerror(errno));
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 255) return collect_error(COLLECT_EIO, "CUDA could not count the GPUs");
    *n = WEXITSTATUS(st);
    return COLLECT_OK;
#else
    return collect_error(COLLECT_EINVAL, "this build has no CUDA (configure with -DHEURIST_CUDA=ON)");
#endif
}

int collect_device_bus_id(int device, char *buf, size_t size)
{
    if (collect_timer_is_fake()) {
        int n = snprintf(buf, size, "0000:%02x:00.0", (device + 1) & 0xff);
        return n < 0 || (size_t)n >= size ? collect_error(COLLECT_EINVAL, "bus id: buffer too small") : COLLECT_OK;
    }
#ifdef HEURIST_COLLECT_CUDA
    return collect_gpu_bus_id(device, buf, size);
#else
    (void)device;
    if (size) buf[0] = '\0';
    return collect_error(COLLECT_EINVAL, "this build has no CUDA (configure with -DHEURIST_CUDA=ON)");
#endif
}

int collect_conv_timer_open(collect_conv_timer *t, int device, const collect_conv_opts *o)
{
    if (collect_timer_is_fake()) return collect_conv_timer_open_fake(t, device, o);
#ifdef HEURIST_COLLECT_CUDA
    return collect_conv_timer_open_cudnn(t, device, o);
#else
    memset(t, 0, sizeof *t);
    return collect_error(COLLECT_EINVAL, "this build has no CUDA/cuDNN (configure with -DHEURIST_CUDA=ON)");
#endif
}

int collect_gemm_timer_open(collect_gemm_timer *t, int device, const collect_gemm_opts *o)
{
    if (collect_timer_is_fake()) return collect_gemm_timer_open_fake(t, device, o);
#ifdef HEURIST_COLLECT_CUDA
    return collect_gemm_timer_open_cublaslt(t, device, o);
#else
    memset(t, 0, sizeof *t);
    return collect_error(COLLECT_EINVAL, "this build has no CUDA/cuBLASLt (configure with -DHEURIST_CUDA=ON)");
#endif
}
