/* The GPU's convolution timer (timer.h) over gpu.h, and what both GPU timers share: binding a device,
 * naming it, counting the visible ones. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "timer.h"

_Static_assert(COLLECT_CONV_MAX_REPEATS == GPU_MAX_REPEATS, "conv's --repeats bound is the timer's");

int collect_gpu_bind(int device)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e) return collect_error(COLLECT_EIO, "CUDA: device count: %s", cudaGetErrorString(e));
    if (device < 0 || device >= n)
        return collect_error(COLLECT_EINVAL, "GPU %d: %d visible (CUDA_VISIBLE_DEVICES)", device, n);
    if ((e = cudaSetDevice(device))) return collect_error(COLLECT_EIO, "CUDA: set device %d: %s", device, cudaGetErrorString(e));
    return COLLECT_OK;
}

int collect_gpu_count(int *n)
{
    *n = 0;
    cudaError_t e = cudaGetDeviceCount(n);
    if (e) return collect_error(COLLECT_EIO, "CUDA: device count: %s", cudaGetErrorString(e));
    return COLLECT_OK;
}

int collect_gpu_bus_id(int device, char *buf, size_t size)
{
    cudaError_t e = cudaDeviceGetPCIBusId(buf, (int)size, device);
    if (e) {
        cudaGetLastError();
        return collect_error(COLLECT_EIO, "CUDA: PCI bus id of GPU %d: %s", device, cudaGetErrorString(e));
    }
    return COLLECT_OK;
}

void collect_gpu_name(char *buf, size_t size, const char *library)
{
    int dev = 0, drv = 0, rt = 0;
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) cudaGetLastError();
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    char bus[32] = "?", host[256] = "?";
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) cudaGetLastError();
    gethostname(host, sizeof host - 1);
    const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
    snprintf(buf, size,
             "host %s, GPU %d: %s, bus %s, UUID GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x, "
             "%d SMs, %.1f GiB, L2 %d MiB, cc %d.%d; CUDA driver API %d, runtime %d; %s",
             host, dev, prop.name, bus, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15], prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0, prop.l2CacheSize >> 20,
             prop.major, prop.minor, drv, rt, library);
}

int gpu_time_all(gpu *g, gpu_problem *p, const int *first_algos, const int *first_maths, int n_first,
                 collect_result *res, int *n_res, cli_tally *skips)
{
    int n_algo = collect_algo_count(p->cv.dir);
    int order_a[8 * COLLECT_MATH_COUNT], order_m[8 * COLLECT_MATH_COUNT], n = 0;
    char seen[8][COLLECT_MATH_COUNT] = {{0}};
    for (int i = 0; i < n_first; i++)
        if (first_algos[i] >= 0 && first_algos[i] < n_algo && first_maths[i] >= 0 && first_maths[i] < COLLECT_MATH_COUNT &&
            !seen[first_algos[i]][first_maths[i]]) {
            seen[first_algos[i]][first_maths[i]] = 1;
            order_a[n] = first_algos[i];
            order_m[n++] = first_maths[i];
        }
    for (int a = 0; a < n_algo; a++)
        for (int m = 0; m < COLLECT_MATH_COUNT; m++)
            if (!seen[a][m]) {
                order_a[n] = a;
                order_m[n++] = m;
            }
    double best = 0;
    *n_res = 0;
    for (int i = 0; i < n; i++) {
        double ms;
        size_t ws;
        const char *why = NULL;
        int rc = gpu_time(g, p, order_a[i], order_m[i], best, &ms, &ws, &why);
        if (rc < 0) return rc;
        if (rc > 0) {
            cli_tally_add(skips, why);
            continue;
        }
        res[*n_res] = (collect_result){order_a[i], order_m[i], ms, ws};
        (*n_res)++;
        if (best == 0 || ms < best) best = ms;
    }
    return 0;
}

typedef struct cudnn_timer {
    gpu g;
    collect_conv_opts o;
} cudnn_timer;

static void conv_describe(collect_conv_timer *t, char *buf, size_t size)
{
    (void)t;
    char lib[64];
    snprintf(lib, sizeof lib, "cuDNN %zu (headers %d.%d.%d)", cudnnGetVersion(), CUDNN_MAJOR, CUDNN_MINOR,
             CUDNN_PATCHLEVEL);
    collect_gpu_name(buf, size, lib);
}

/* Descriptors and tensors, cuDNN's heuristic ranking, then every candidate, the heuristic's first. */
static int conv_measure(collect_conv_timer *t, const collect_conv *cv, const char *key, collect_conv_measured *m,
                        cli_tally *cand, const char **why)
{
    (void)key;
    cudnn_timer *ct = t->state;
    gpu *g = &ct->g;
    const collect_conv_opts *o = &ct->o;
    gpu_problem p;
    m->n_res = m->n_heur = 0;
    m->n_cls = 0;
    m->heur_math_asked = gpu_heuristic_math(cv->dtype);
    int rc = gpu_problem_init(g, &p, cv, why);
    if (rc == 0) {
        if (gpu_heuristic_timed(g, &p, m->heur_math_asked, m->heur_algo, m->heur_math, COLLECT_CONV_MAX_HEUR, &m->n_heur,
                                &m->heur_us))
            cli_tally_add(cand, "heuristic call failed");
        /* the other precision classes of an FP32 problem (their lists do not order the timing) */
        m->n_cls = o->classes && cv->dtype == COLLECT_DTYPE_FP32 ? COLLECT_CONV_CLASSES : 0;
        for (int c = 0; c < m->n_cls; c++)
            if (gpu_heuristic_timed(g, &p, collect_precision_math(collect_conv_classes[c]), m->cls_algo[c], m->cls_math[c],
                                    COLLECT_CONV_MAX_HEUR, &m->cls_n[c], &m->cls_us[c]))
                cli_tally_add(cand, "heuristic call failed");
        rc = gpu_time_all(g, &p, m->heur_algo, m->heur_math, m->n_heur, m->res, &m->n_res, cand);
    }
    gpu_problem_free(&p);
    return rc;
}

static void conv_close(collect_conv_timer *t)
{
    cudnn_timer *ct = t->state;
    if (ct) gpu_free(&ct->g);
    free(ct);
    t->state = NULL;
}

int collect_conv_timer_open_cudnn(collect_conv_timer *t, int device, const collect_conv_opts *o)
{
    memset(t, 0, sizeof *t);
    cudnn_timer *ct = calloc(1, sizeof *ct);
    if (!ct) return collect_error(COLLECT_ENOMEM, "out of memory");
    ct->o = *o;
    int rc = collect_gpu_bind(device);
    if (!rc && (rc = gpu_init(&ct->g, o->repeats, o->min_repeat_ms, o->ws_limit))) gpu_free(&ct->g);
    if (rc) {
        free(ct);
        return rc;
    }
    *t = (collect_conv_timer){conv_describe, conv_measure, conv_close, ct};
    return COLLECT_OK;
}
