/* cuDNN convolutions from collect_conv, and the timing method (gpu.h). */
#include "gpu.h"
#include "timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(CUDNN_CONVOLUTION_FWD_ALGO_COUNT == 8, "forward algorithm names follow cuDNN's enum");
_Static_assert(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT == 6, "backward-data algorithm names follow cuDNN's enum");
_Static_assert(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT == 7, "backward-filter algorithm names follow cuDNN's enum");
_Static_assert(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED == 7 && CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING == 3 &&
               CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING == 6, "algorithm numbering");
_Static_assert((int)CUDNN_DEFAULT_MATH == (int)COLLECT_MATH_DEFAULT && (int)CUDNN_TENSOR_OP_MATH == (int)COLLECT_MATH_TENSOR_OP &&
               (int)CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION == (int)COLLECT_MATH_TENSOR_OP_ALLOW_CONVERSION &&
               (int)CUDNN_FMA_MATH == (int)COLLECT_MATH_FMA, "math numbering follows cudnnMathType_t");

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cuda_fail(cudaError_t e, const char *what)
{
    return collect_error(COLLECT_EIO, "CUDA: %s: %s", what, cudaGetErrorString(e));
}

int gpu_init(gpu *g, int repeats, double min_repeat_ms, size_t ws_limit)
{
    memset(g, 0, sizeof *g);
    if (repeats < 1 || repeats > GPU_MAX_REPEATS)
        return collect_error(COLLECT_EINVAL, "--repeats %d: must be in 1..%d", repeats, GPU_MAX_REPEATS);
    g->repeats = repeats;
    g->min_repeat_ms = min_repeat_ms;
    g->ws_limit = ws_limit;
    g->seed = 12345;
    g->exact = collect_timer_memcheck();
    cudaError_t e;
    if ((e = cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking))) return cuda_fail(e, "stream");
    for (int i = 0; i <= repeats; i++)
        if ((e = cudaEventCreate(&g->ev[i]))) return cuda_fail(e, "event");
    cudnnStatus_t st = cudnnCreate(&g->h);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetStream(g->h, g->s);
    if (st != CUDNN_STATUS_SUCCESS) return collect_error(COLLECT_EIO, "cuDNN: %s", cudnnGetErrorString(st));
    return COLLECT_OK;
}

void gpu_free(gpu *g)
{
    for (int i = 0; i < 2 * GPU_MAX_LIST; i++)
        if (g->list_ev[i]) cudaEventDestroy(g->list_ev[i]);
    if (g->hold_state > 0) gpu_hold_free(&g->hold);
    for (int i = 0; i < 3; i++) cudaFree(g->buf[i]);
    cudaFree(g->ws);
    if (g->h) cudnnDestroy(g->h);
    for (int i = 0; i <= g->repeats && i <= GPU_MAX_REPEATS; i++)
        if (g->ev[i]) cudaEventDestroy(g->ev[i]);
    if (g->s) cudaStreamDestroy(g->s);
    /* under compute-sanitizer, the context destroyed here: its leak check reports what is still allocated */
    if (g->exact) cudaDeviceReset();
    memset(g, 0, sizeof *g);
}

void gpu_describe(FILE *f)
{
    int dev = 0, drv = 0, rt = 0;
    struct cudaDeviceProp prop;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    fprintf(f, "gpu: %s, %d SMs, %.1f GiB, cc %d.%d; CUDA driver API %d, runtime %d; cuDNN %zu (headers %d.%d.%d)\n",
            prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0, prop.major, prop.minor, drv, rt,
            cudnnGetVersion(), CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
}

int gpu_heuristic_math(collect_dtype t)
{
    return t == COLLECT_DTYPE_FP32 ? COLLECT_MATH_DEFAULT : COLLECT_MATH_TENSOR_OP;
}

static cudnnDataType_t cudnn_dtype(collect_dtype t)
{
    return t == COLLECT_DTYPE_FP32 ? CUDNN_DATA_FLOAT : t == COLLECT_DTYPE_FP16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
}

/* Grows a device buffer to at least `bytes` (a quarter more, so that growing problems reallocate rarely), or with
 * `exact` (HEURIST_COLLECT_MEMCHECK) makes it exactly `bytes`; 0, 1 when the allocation fails (the problem does not
 * fit). */
static int ensure(void **p, size_t *cap, size_t bytes, int exact)
{
    if (exact ? *cap == bytes : *cap >= bytes) return 0;
    cudaFree(*p);
    *p = NULL;
    *cap = 0;
    size_t want = exact ? bytes : bytes + bytes / 4;
    if (cudaMalloc(p, want) != cudaSuccess) {
        cudaGetLastError(); /* an out-of-memory error is not sticky: clear it */
        if (cudaMalloc(p, bytes) != cudaSuccess) {
            cudaGetLastError();
            *p = NULL;
            return 1;
        }
        want = bytes;
    }
    *cap = want;
    return 0;
}

void gpu_problem_free(gpu_problem *p)
{
    if (p->xd) cudnnDestroyTensorDescriptor(p->xd);
    if (p->yd) cudnnDestroyTensorDescriptor(p->yd);
    if (p->wd) cudnnDestroyFilterDescriptor(p->wd);
    if (p->cd) cudnnDestroyConvolutionDescriptor(p->cd);
    memset(p, 0, sizeof *p);
}

int gpu_problem_init(gpu *g, gpu_problem *p, const collect_conv *cv, const char **why)
{
    memset(p, 0, sizeof *p);
    p->cv = *cv;
    int xdims[5], ydims[5], wdims[5], out[5];
    int nb = collect_conv_x_dims(cv, xdims);
    collect_conv_y_dims(cv, ydims);
    collect_conv_w_dims(cv, wdims);
    cudnnDataType_t dt = cudnn_dtype(cv->dtype);
    cudnnTensorFormat_t fmt = cv->layout == COLLECT_LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    if (cudnnCreateTensorDescriptor(&p->xd) || cudnnCreateTensorDescriptor(&p->yd) ||
        cudnnCreateFilterDescriptor(&p->wd) || cudnnCreateConvolutionDescriptor(&p->cd)) {
        gpu_problem_free(p);
        return collect_error(COLLECT_ENOMEM, "cuDNN: descriptor creation failed");
    }
    if (cudnnSetTensorNdDescriptorEx(p->xd, fmt, dt, nb, xdims) || cudnnSetTensorNdDescriptorEx(p->yd, fmt, dt, nb, ydims) ||
        cudnnSetFilterNdDescriptor(p->wd, dt, fmt, nb, wdims) ||
        cudnnSetConvolutionNdDescriptor(p->cd, cv->nd, cv->pad, cv->stride, cv->dil, CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT) ||
        cudnnSetConvolutionGroupCount(p->cd, cv->groups)) {
        *why = "cuDNN refuses the descriptors";
        return 1;
    }
    if (cudnnGetConvolutionNdForwardOutputDim(p->cd, p->xd, p->wd, nb, out) || memcmp(out, ydims, sizeof(int) * (size_t)nb)) {
        *why = "cuDNN's output size differs from the key's";
        return 1;
    }
    size_t eb = (size_t)collect_dtype_bytes(cv->dtype);
    int64_t elems[3] = {collect_conv_x_elems(cv), collect_conv_y_elems(cv), collect_conv_w_elems(cv)};
    for (int i = 0; i < 3; i++) {
        if (ensure(&g->buf[i], &g->cap[i], (size_t)elems[i] * eb, g->exact)) {
            *why = "tensors do not fit the GPU's memory";
            return 1;
        }
        if (gpu_fill(g->s, g->buf[i], (size_t)elems[i], cv->dtype, g->seed++))
            return collect_error(COLLECT_EIO, "CUDA: fill kernel failed");
    }
    cudaError_t e = cudaStreamSynchronize(g->s);
    if (e) return cuda_fail(e, "fill");
    return 0;
}

static cudnnStatus_t workspace_size(gpu *g, gpu_problem *p, int algo, size_t *ws)
{
    switch (p->cv.dir) {
    case COLLECT_DIR_F:
        return cudnnGetConvolutionForwardWorkspaceSize(g->h, p->xd, p->wd, p->cd, p->yd, (cudnnConvolutionFwdAlgo_t)algo, ws);
    case COLLECT_DIR_B:
        return cudnnGetConvolutionBackwardDataWorkspaceSize(g->h, p->wd, p->yd, p->cd, p->xd,
                                                            (cudnnConvolutionBwdDataAlgo_t)algo, ws);
    default:
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(g->h, p->xd, p->yd, p->cd, p->wd,
                                                              (cudnnConvolutionBwdFilterAlgo_t)algo, ws);
    }
}

static cudnnStatus_t launch(gpu *g, gpu_problem *p, int algo, size_t ws)
{
    const float one = 1.0f, zero = 0.0f;
    switch (p->cv.dir) {
    case COLLECT_DIR_F:
        return cudnnConvolutionForward(g->h, &one, p->xd, g->buf[0], p->wd, g->buf[2], p->cd,
                                       (cudnnConvolutionFwdAlgo_t)algo, g->ws, ws, &zero, p->yd, g->buf[1]);
    case COLLECT_DIR_B:
        return cudnnConvolutionBackwardData(g->h, &one, p->wd, g->buf[2], p->yd, g->buf[1], p->cd,
                                            (cudnnConvolutionBwdDataAlgo_t)algo, g->ws, ws, &zero, p->xd, g->buf[0]);
    default:
        return cudnnConvolutionBackwardFilter(g->h, &one, p->xd, g->buf[0], p->yd, g->buf[1], p->cd,
                                              (cudnnConvolutionBwdFilterAlgo_t)algo, g->ws, ws, &zero, p->wd, g->buf[2]);
    }
}

/* One launch timed by events; also the host time of the call. 0, 1 when cuDNN rejects it, <0 fatal. */
static int time_once(gpu *g, gpu_problem *p, int algo, size_t ws, double *gpu_ms, double *host_ms)
{
    cudaEventRecord(g->ev[0], g->s);
    double t0 = now_ms();
    cudnnStatus_t st = launch(g, p, algo, ws);
    *host_ms = now_ms() - t0;
    cudaEventRecord(g->ev[1], g->s);
    cudaError_t e = cudaEventSynchronize(g->ev[1]);
    if (e) return cuda_fail(e, "candidate launch");
    if (st != CUDNN_STATUS_SUCCESS) {
        cudaGetLastError(); /* a rejected launch may leave a non-sticky error behind */
        return 1;
    }
    float ms;
    cudaEventElapsedTime(&ms, g->ev[0], g->ev[1]);
    *gpu_ms = ms;
    return 0;
}

/* The math type set and the workspace of a candidate asked and allocated. 0; 1 with *why when refused. */
static int candidate_prepare(gpu *g, gpu_problem *p, int algo, int math, size_t *ws, const char **why)
{
    if (cudnnSetConvolutionMathType(p->cd, (cudnnMathType_t)math) != CUDNN_STATUS_SUCCESS) {
        *why = "math type refused";
        return 1;
    }
    *ws = 0;
    if (workspace_size(g, p, algo, ws) != CUDNN_STATUS_SUCCESS) {
        cudaGetLastError();
        *why = "workspace query failed";
        return 1;
    }
    if (*ws > g->ws_limit) {
        *why = "workspace over the limit";
        return 1;
    }
    if (ensure(&g->ws, &g->ws_cap, *ws ? *ws : 1, g->exact)) {
        *why = "workspace does not fit the GPU's memory";
        return 1;
    }
    return 0;
}

int gpu_time_once(gpu *g, gpu_problem *p, int algo, int math, double *ms, const char **why)
{
    size_t ws;
    if (candidate_prepare(g, p, algo, math, &ws, why)) return 1;
    double host_ms;
    int rc = time_once(g, p, algo, ws, ms, &host_ms); /* the warm-up */
    if (rc == 0) {
        /* hold the stream behind a spin of twice the warm-up's host cost (at least 10 us): the timed launch is
         * queued before its start event fires, so the events see the kernels and not the host's launch work */
        if (gpu_spin(g->s, 20.0 + 2.0 * fmax(host_ms * 1e3, 10.0)))
            return collect_error(COLLECT_EIO, "CUDA: spin kernel failed");
        rc = time_once(g, p, algo, ws, ms, &host_ms);
    }
    if (rc > 0) *why = "launch failed";
    return rc;
}

int gpu_time(gpu *g, gpu_problem *p, int algo, int math, double bound_ms, double *ms, size_t *workspace,
             const char **why)
{
    size_t ws = 0;
    if (candidate_prepare(g, p, algo, math, &ws, why)) return 1;
    *workspace = ws;
    double t_w, h_w;
    int rc = time_once(g, p, algo, ws, &t_w, &h_w);
    if (rc) {
        if (rc > 0) *why = "launch failed";
        return rc;
    }
    if (bound_ms > 0 && t_w > 5 * bound_ms) {
        /* the first launch may have paid for loading its kernels: look once more before giving up on it */
        if ((rc = time_once(g, p, algo, ws, &t_w, &h_w))) {
            if (rc > 0) *why = "launch failed";
            return rc;
        }
        if (t_w > 5 * bound_ms) {
            *ms = t_w;
            return 0;
        }
    }
    int n = (int)ceil(g->min_repeat_ms / fmax(t_w, 1e-4));
    if (n < 1) n = 1;
    if (n > 1000) n = 1000;
    /* hold the stream long enough for the host to queue every launch (twice the warm-up's host cost
     * each, at least 10 us), at most 50 ms */
    double spin_us = fmin(50e3, 20.0 + 2.0 * fmax(h_w * 1e3, 10.0) * n * g->repeats);
    if (gpu_spin(g->s, spin_us)) return collect_error(COLLECT_EIO, "CUDA: spin kernel failed");
    cudaEventRecord(g->ev[0], g->s);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    for (int r = 0; r < g->repeats && st == CUDNN_STATUS_SUCCESS; r++) {
        for (int i = 0; i < n && st == CUDNN_STATUS_SUCCESS; i++) st = launch(g, p, algo, ws);
        cudaEventRecord(g->ev[r + 1], g->s);
    }
    cudaError_t e = cudaStreamSynchronize(g->s);
    if (e) return cuda_fail(e, "timed launches");
    if (st != CUDNN_STATUS_SUCCESS) {
        cudaGetLastError();
        *why = "launch failed";
        return 1;
    }
    double t[GPU_MAX_REPEATS];
    for (int r = 0; r < g->repeats; r++) {
        float f;
        cudaEventElapsedTime(&f, g->ev[r], g->ev[r + 1]);
        t[r] = f / n;
    }
    *ms = collect_median(t, g->repeats);
    return 0;
}

/* Candidate i launched (its math type set, then the call), between its event pair when `timed`; ok[i] cleared
 * when cuDNN refuses it. Returns the host's time in the call, microseconds. */
static double list_launch(gpu *g, gpu_problem *p, int i, int algo, int math, size_t ws, int timed, char *ok)
{
    if (timed) cudaEventRecord(g->list_ev[2 * i], g->s);
    double h0 = now_ms();
    if (cudnnSetConvolutionMathType(p->cd, (cudnnMathType_t)math) != CUDNN_STATUS_SUCCESS ||
        launch(g, p, algo, ws) != CUDNN_STATUS_SUCCESS) {
        cudaGetLastError(); /* a rejected launch may leave a non-sticky error behind */
        ok[i] = 0;
    }
    double h = (now_ms() - h0) * 1e3;
    if (timed) cudaEventRecord(g->list_ev[2 * i + 1], g->s);
    return h;
}

/* The GPU time between candidate i's events, INFINITY when they cannot be read. */
static double list_elapsed(gpu *g, int i)
{
    float f;
    if (cudaEventElapsedTime(&f, g->list_ev[2 * i], g->list_ev[2 * i + 1]) == cudaSuccess) return f;
    cudaGetLastError();
    return INFINITY;
}

/* A warm-up whose call holds the host this long (microseconds) launches many kernels (a grouped convolution
 * launched group by group) or waits for the GPU: its pass is not held (gpu_time_list). */
#define LIST_HOLD_MAX_HOST_US 500.0

/* One pass of gpu_time_list over the candidates marked in ok (cleared for a launch cuDNN refuses): warm-ups (timed
 * with o->retime_within, then a synchronisation and the choice of the kernels launched again), the hold (or a
 * spin) unless a warm-up's call was as slow as LIST_HOLD_MAX_HOST_US, the timed launches, one synchronisation;
 * ms[i] each candidate's last time. */
static int list_pass(gpu *g, gpu_problem *p, const int *algos, const int *maths, int n, size_t ws,
                     const gpu_list_opts *o, char *ok, double *ms, gpu_list_stats *st)
{
    cudaError_t e;
    double t0 = now_ms(), host_us = 0, host_max_us = 0, first[GPU_MAX_LIST], lower[GPU_MAX_LIST];
    char again[GPU_MAX_LIST];
    int timed_warmup = o->warmup && o->retime_within > 0;
    st->timed_out = 0; /* this pass's hold, not an earlier pass's: a pass that launches nothing again holds none */
    for (int i = 0; i < n; i++) {
        ms[i] = first[i] = lower[i] = INFINITY;
        if (!ok[i] || !o->warmup) continue;
        double h = list_launch(g, p, i, algos[i], maths[i], ws, timed_warmup, ok);
        st->launches++;
        host_us += h;
        host_max_us = fmax(host_max_us, h);
        lower[i] = -h * 1e-3;
    }
    for (int i = 0; i < n; i++) again[i] = ok[i];
    if (timed_warmup) {
        /* the warm-ups' times decide which kernels run again: the host waits for the GPU here, and the timed
         * launches are queued only after the warm-ups have run, not while they run */
        double s0 = now_ms();
        e = cudaStreamSynchronize(g->s);
        st->sync_ms += now_ms() - s0;
        if (e) return cuda_fail(e, "shortlist warm-ups");
        for (int i = 0; i < n; i++)
            if (ok[i]) {
                ms[i] = first[i] = list_elapsed(g, i);
                lower[i] += first[i]; /* less the host's call, which an unheld launch may have waited on */
            }
        collect_retime_select(first, lower, n, o->retime_within, again);
    }
    int n_again = 0;
    for (int i = 0; i < n; i++) n_again += again[i] = again[i] && ok[i];
    if (n_again == 0) {
        st->wall_ms += now_ms() - t0;
        return 0;
    }
    /* A call that launches many kernels would fill the stream's queue behind a hold, and the host, waiting on the
     * queue, could not release it before its timeout (a call that waits for the GPU likewise): such a pass queues
     * its timed launches behind the warm-ups alone, and its times include the host's launch rate, which is the
     * call's own. Otherwise the hold outlasts the host's queuing of the timed launches, which costs about what
     * the warm-ups' did; without warm-ups the host's calls are not known, and the hold allows
     * LIST_HOLD_MAX_HOST_US a call. */
    int unheld = o->warmup && host_max_us >= LIST_HOLD_MAX_HOST_US, held = !unheld && g->hold_state > 0;
    double wait_us = o->warmup ? host_us : n_again * LIST_HOLD_MAX_HOST_US / 4.0;
    st->unheld = unheld;
    if (held ? gpu_hold(g->s, &g->hold, 5e3 + 4.0 * wait_us) : !unheld && gpu_spin(g->s, 20.0 + 2.0 * fmax(wait_us, 10.0)))
        return collect_error(COLLECT_EIO, "CUDA: %s kernel failed", held ? "hold" : "spin");
    for (int i = 0; i < n; i++)
        if (again[i]) {
            list_launch(g, p, i, algos[i], maths[i], ws, 1, ok);
            st->launches++;
        }
    if (held) gpu_hold_release(&g->hold);
    e = cudaStreamSynchronize(g->s);
    st->wall_ms += now_ms() - t0;
    if (e) return cuda_fail(e, "shortlist pass");
    st->timed_out = held && gpu_hold_timed_out(&g->hold);
    for (int i = 0; i < n; i++)
        if (again[i]) ms[i] = ok[i] ? list_elapsed(g, i) : INFINITY;
    return 0;
}

int gpu_time_list(gpu *g, gpu_problem *p, const int *algos, const int *maths, int n, const gpu_list_opts *o, double *ms,
                  gpu_list_stats *st)
{
    memset(st, 0, sizeof *st);
    if (n < 0 || n > GPU_MAX_LIST)
        return collect_error(COLLECT_EINVAL, "a shortlist of %d candidates: at most %d in one pass", n, GPU_MAX_LIST);
    cudaError_t e;
    for (int i = 0; i < 2 * n; i++)
        if (!g->list_ev[i] && (e = cudaEventCreate(&g->list_ev[i]))) return cuda_fail(e, "event");
    if (g->hold_state == 0) g->hold_state = gpu_hold_init(&g->hold) == 0 ? 1 : -1;
    st->spin = g->hold_state < 0;
    /* before the clock: every candidate's workspace asked, one workspace for the largest allocated */
    char ok[GPU_MAX_LIST];
    size_t need = 0, ws[GPU_MAX_LIST];
    for (int i = 0; i < n; i++) {
        ms[i] = INFINITY;
        ws[i] = 0;
        ok[i] = cudnnSetConvolutionMathType(p->cd, (cudnnMathType_t)maths[i]) == CUDNN_STATUS_SUCCESS &&
                workspace_size(g, p, algos[i], &ws[i]) == CUDNN_STATUS_SUCCESS && ws[i] <= g->ws_limit;
        if (!ok[i]) cudaGetLastError();
        if (ok[i] && ws[i] > need) need = ws[i];
    }
    if (ensure(&g->ws, &g->ws_cap, need ? need : 1, g->exact)) {
        /* the largest does not fit the GPU's memory: those needing none still run */
        for (int i = 0; i < n; i++) ok[i] &= ws[i] == 0;
        need = 0;
        if (ensure(&g->ws, &g->ws_cap, 1, g->exact)) return collect_error(COLLECT_ENOMEM, "CUDA: no memory for a workspace");
    }
    if ((e = cudaStreamSynchronize(g->s))) return cuda_fail(e, "before a shortlist pass");
    /* one re-run at most, with the same hold: a host that stalled once will not stall again, and a call that
     * stalls the host each time (one that waits for the GPU) is not helped by a longer hold; none without
     * warm-ups, whose timed-out pass was most likely a call filling the queue and would time out again */
    for (int pass = 0;; pass++) {
        int rc = list_pass(g, p, algos, maths, n, need, o, ok, ms, st);
        if (rc) return rc;
        if (!st->timed_out || pass == 1 || !o->warmup) break;
        st->reruns++;
    }
    return 0;
}

int gpu_heuristic(gpu *g, gpu_problem *p, int math, int *algos, int *maths, int max, int *n)
{
    double us;
    return gpu_heuristic_timed(g, p, math, algos, maths, max, n, &us);
}

int gpu_heuristic_timed(gpu *g, gpu_problem *p, int math, int *algos, int *maths, int max, int *n, double *us)
{
    *n = 0;
    *us = 0;
    if (cudnnSetConvolutionMathType(p->cd, (cudnnMathType_t)math) != CUDNN_STATUS_SUCCESS) return 1;
    int got = 0;
    cudnnStatus_t st;
    double t0 = now_ms();
    switch (p->cv.dir) {
    case COLLECT_DIR_F: {
        cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        st = cudnnGetConvolutionForwardAlgorithm_v7(g->h, p->xd, p->wd, p->cd, p->yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                    &got, r);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && *n < max; i++)
            if (r[i].status == CUDNN_STATUS_SUCCESS) {
                algos[*n] = (int)r[i].algo;
                maths[(*n)++] = (int)r[i].mathType;
            }
        break;
    }
    case COLLECT_DIR_B: {
        cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        st = cudnnGetConvolutionBackwardDataAlgorithm_v7(g->h, p->wd, p->yd, p->cd, p->xd,
                                                         CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, r);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && *n < max; i++)
            if (r[i].status == CUDNN_STATUS_SUCCESS) {
                algos[*n] = (int)r[i].algo;
                maths[(*n)++] = (int)r[i].mathType;
            }
        break;
    }
    default: {
        cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        st = cudnnGetConvolutionBackwardFilterAlgorithm_v7(g->h, p->xd, p->yd, p->cd, p->wd,
                                                           CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, r);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && *n < max; i++)
            if (r[i].status == CUDNN_STATUS_SUCCESS) {
                algos[*n] = (int)r[i].algo;
                maths[(*n)++] = (int)r[i].mathType;
            }
        break;
    }
    }
    *us = (now_ms() - t0) * 1e3;
    return st == CUDNN_STATUS_SUCCESS ? 0 : 1;
}

/* the kernels a cudnnFind call ran: its results of status success, and their summed times */
#define FIND_TALLY(r, got, algos, kernel_ms)                                                                           \
    do {                                                                                                               \
        for (int i_ = 0; i_ < (got); i_++)                                                                            \
            if ((r)[i_].status == CUDNN_STATUS_SUCCESS && (r)[i_].time >= 0) {                                         \
                (*(algos))++;                                                                                          \
                *(kernel_ms) += (r)[i_].time;                                                                          \
            }                                                                                                          \
    } while (0)

int gpu_find_ms(gpu *g, gpu_problem *p, int math, double *ms, int *algos, double *kernel_ms)
{
    *ms = 0;
    *algos = 0;
    *kernel_ms = 0;
    if (cudnnSetConvolutionMathType(p->cd, (cudnnMathType_t)math) != CUDNN_STATUS_SUCCESS) return 1;
    /* the workspace: the largest any algorithm asks under the limit, as the exhaustive timing allows */
    size_t ws = 0;
    for (int a = 0; a < collect_algo_count(p->cv.dir); a++) {
        size_t w = 0;
        if (workspace_size(g, p, a, &w) != CUDNN_STATUS_SUCCESS) {
            cudaGetLastError();
            continue;
        }
        if (w <= g->ws_limit && w > ws) ws = w;
    }
    if (ensure(&g->ws, &g->ws_cap, ws ? ws : 1, g->exact)) return 1;
    int got = 0;
    cudnnStatus_t st;
    cudaStreamSynchronize(g->s);
    double t0 = now_ms();
    switch (p->cv.dir) {
    case COLLECT_DIR_F: {
        cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        st = cudnnFindConvolutionForwardAlgorithmEx(g->h, p->xd, g->buf[0], p->wd, g->buf[2], p->cd, p->yd, g->buf[1],
                                                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, r, g->ws, ws);
        FIND_TALLY(r, got, algos, kernel_ms);
        break;
    }
    case COLLECT_DIR_B: {
        cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        st = cudnnFindConvolutionBackwardDataAlgorithmEx(g->h, p->wd, g->buf[2], p->yd, g->buf[1], p->cd, p->xd,
                                                         g->buf[0], CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, r,
                                                         g->ws, ws);
        FIND_TALLY(r, got, algos, kernel_ms);
        break;
    }
    default: {
        cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        st = cudnnFindConvolutionBackwardFilterAlgorithmEx(g->h, p->xd, g->buf[0], p->yd, g->buf[1], p->cd, p->wd,
                                                           g->buf[2], CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, r,
                                                           g->ws, ws);
        FIND_TALLY(r, got, algos, kernel_ms);
        break;
    }
    }
    cudaStreamSynchronize(g->s);
    *ms = now_ms() - t0;
    cudaGetLastError();
    return st == CUDNN_STATUS_SUCCESS ? 0 : 1;
}
#undef FIND_TALLY
