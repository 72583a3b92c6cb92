/* cuBLASLt GEMMs, their configuration space and the timing method (gemm_gpu.h). */
#include "gemm_gpu.h"
#include "timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(CUBLASLT_REDUCTION_SCHEME_INPLACE == 1 && CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE == 2 &&
               CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE == 4, "reduction scheme bits (gemm.h)");
_Static_assert(CUBLASLT_MATMUL_TILE_UNDEFINED == 0 && CUBLASLT_MATMUL_STAGES_UNDEFINED == 0 &&
               CUBLASLT_CLUSTER_SHAPE_AUTO == 0 && CUBLASLT_MATMUL_INNER_SHAPE_UNDEFINED == 0,
               "undefined ids are 0 (gemm.h)");

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cuda_fail(cudaError_t e, const char *what)
{
    return collect_error(COLLECT_EIO, "CUDA: %s: %s", what, cudaGetErrorString(e));
}

static int lt_fail(cublasStatus_t st, const char *what)
{
    return collect_error(COLLECT_EIO, "cuBLASLt: %s: status %d", what, (int)st);
}

/* data, compute and scale types of a collect_gemm_dtype: FP32 compute and scale throughout (bf16 and fp16
 * accumulate in FP32, as PyTorch does); tf32 is FP32 data on the TF32 tensor-core path; fp8e4m3 is E4M3 A and
 * B (data_type) with C and D in bf16 (out_type), as Transformer Engine's FP8 linear layers run */
static cudaDataType_t data_type(collect_gemm_dtype t)
{
    return t == COLLECT_GEMM_FP8E4M3 ? CUDA_R_8F_E4M3
           : t == COLLECT_GEMM_BF16  ? CUDA_R_16BF
           : t == COLLECT_GEMM_FP16  ? CUDA_R_16F
                                     : CUDA_R_32F;
}

static cudaDataType_t out_type(collect_gemm_dtype t)
{
    return t == COLLECT_GEMM_FP8E4M3 ? CUDA_R_16BF : data_type(t);
}

static cublasComputeType_t compute_type(collect_gemm_dtype t)
{
    return t == COLLECT_GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

static collect_dtype fill_type(collect_gemm_dtype t)
{
    return t == COLLECT_GEMM_BF16 ? COLLECT_DTYPE_BF16 : t == COLLECT_GEMM_FP16 ? COLLECT_DTYPE_FP16 : COLLECT_DTYPE_FP32;
}

int gemm_gpu_init(gemm_gpu *g, size_t a_bytes, size_t b_bytes, size_t d_bytes, size_t ws_bytes, int repeats,
                  double min_batch_us, int max_batch, double slow_factor)
{
    memset(g, 0, sizeof *g);
    if (repeats < 1 || repeats > GEMM_GPU_MAX_REPEATS)
        return collect_error(COLLECT_EINVAL, "--repeats %d: must be in 1..%d", repeats, GEMM_GPU_MAX_REPEATS);
    g->repeats = repeats;
    g->min_batch_us = min_batch_us;
    g->max_batch = max_batch;
    g->slow_factor = slow_factor;
    g->seed = 12345;
    g->exact = collect_timer_memcheck();
    cudaError_t e;
    if ((e = cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking))) return cuda_fail(e, "stream");
    for (int i = 0; i <= repeats; i++)
        if ((e = cudaEventCreate(&g->ev[i]))) return cuda_fail(e, "event");
    cublasStatus_t st = cublasLtCreate(&g->lt);
    if (st != CUBLAS_STATUS_SUCCESS) return lt_fail(st, "cublasLtCreate");
    size_t want[4] = {a_bytes, b_bytes, d_bytes, ws_bytes};
    void **buf[4] = {&g->a, &g->b, &g->d, &g->ws};
    for (int i = 0; i < 4; i++)
        if ((e = cudaMalloc(buf[i], want[i] ? want[i] : 256)))
            return collect_error(COLLECT_ENOMEM, "CUDA: allocating %zu MiB: %s", want[i] >> 20, cudaGetErrorString(e));
    g->a_cap = a_bytes;
    g->b_cap = b_bytes;
    g->d_cap = d_bytes;
    g->ws_size = ws_bytes;
    /* the per-tensor scales of FP8 operands: 1 */
    static const float one = 1.0f;
    if ((e = cudaMalloc((void **)&g->scale, sizeof one)) || (e = cudaMemcpy(g->scale, &one, sizeof one, cudaMemcpyHostToDevice)))
        return cuda_fail(e, "FP8 scale");
    return COLLECT_OK;
}

/* Grows an operand buffer to at least `bytes` (a quarter more when it fits, so that a run of growing shapes
 * reallocates rarely), or with `exact` (HEURIST_COLLECT_MEMCHECK) makes it exactly `bytes`; 0, 1 when the GPU's
 * memory cannot hold it. */
static int operand_grow(void **p, size_t *cap, size_t bytes, int exact)
{
    if (exact ? *cap == bytes : *cap >= bytes) return 0;
    cudaFree(*p);
    *p = NULL;
    *cap = 0;
    size_t want = exact ? bytes : bytes + bytes / 4;
    if (cudaMalloc(p, want) != cudaSuccess) {
        cudaGetLastError(); /* an out-of-memory error is not sticky: clear it */
        want = bytes;
        if (cudaMalloc(p, want) != cudaSuccess) {
            cudaGetLastError();
            *p = NULL;
            return 1;
        }
    }
    *cap = want;
    return 0;
}

void gemm_gpu_free(gemm_gpu *g)
{
    cudaFree(g->a);
    cudaFree(g->b);
    cudaFree(g->d);
    cudaFree(g->ws);
    cudaFree(g->scale);
    if (g->lt) cublasLtDestroy(g->lt);
    for (int i = 0; i <= g->repeats && i <= GEMM_GPU_MAX_REPEATS; i++)
        if (g->ev[i]) cudaEventDestroy(g->ev[i]);
    for (int i = 0; i < g->n_pass_ev; i++) cudaEventDestroy(g->pass_ev[i]);
    free(g->pass_ev);
    if (g->hold.host) gpu_hold_free(&g->hold);
    if (g->s) cudaStreamDestroy(g->s);
    /* under compute-sanitizer, the context destroyed here: its leak check reports what is still allocated */
    if (g->exact) cudaDeviceReset();
    memset(g, 0, sizeof *g);
}

long gemm_gpu_cublaslt_version(void)
{
    return (long)cublasLtGetVersion();
}

void gemm_gpu_describe(FILE *f, char *name, size_t size, int *sms)
{
    int dev = 0, drv = 0, rt = 0;
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) cudaGetLastError();
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    fprintf(f, "gpu: %s, %d SMs, %.1f GiB, L2 %d MiB, cc %d.%d; CUDA driver API %d, runtime %d; cuBLASLt %zu "
               "(headers %d)\n", prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0,
            prop.l2CacheSize >> 20, prop.major, prop.minor, drv, rt, cublasLtGetVersion(), CUBLAS_VERSION);
    snprintf(name, size, "%s", prop.name);
    *sms = prop.multiProcessorCount;
}

/* ---- capabilities ---- */

/* Scalar capabilities of the exact size cuBLASLt stores (int32, uint32, uint64); 0 when not readable. */
static int32_t cap_i32(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoCapAttributes_t attr)
{
    int32_t v = 0;
    size_t written = 0;
    return cublasLtMatmulAlgoCapGetAttribute(algo, attr, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS ? v : 0;
}

static uint32_t cap_u32(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoCapAttributes_t attr)
{
    uint32_t v = 0;
    size_t written = 0;
    return cublasLtMatmulAlgoCapGetAttribute(algo, attr, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS ? v : 0;
}

static uint64_t cap_u64(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoCapAttributes_t attr)
{
    uint64_t v = 0;
    size_t written = 0;
    return cublasLtMatmulAlgoCapGetAttribute(algo, attr, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS ? v : 0;
}

/* An array capability (tile or stages ids); NULL with *n 0 when there is none. */
static int cap_ids(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoCapAttributes_t attr, int **ids, int *n)
{
    *ids = NULL;
    *n = 0;
    size_t need = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(algo, attr, NULL, 0, &need) != CUBLAS_STATUS_SUCCESS || need == 0)
        return COLLECT_OK;
    uint32_t *raw = malloc(need);
    int *out = malloc((need / sizeof *raw + 1) * sizeof *out);
    if (!raw || !out) {
        free(raw);
        free(out);
        return collect_error(COLLECT_ENOMEM, "out of memory");
    }
    size_t written = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(algo, attr, raw, need, &written) == CUBLAS_STATUS_SUCCESS) {
        for (size_t i = 0; i < written / sizeof *raw; i++) out[(*n)++] = (int)raw[i];
    }
    free(raw);
    *ids = out;
    return COLLECT_OK;
}

int gemm_gpu_caps(gemm_gpu *g, collect_gemm_dtype t, collect_gemm_capset *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = t;
    cudaDataType_t dt = data_type(t), ot = out_type(t);
    cublasComputeType_t ct = compute_type(t);
    int ids[1024], n = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetIds(g->lt, ct, CUDA_R_32F, dt, dt, ot, ot, 1024, ids, &n);
    /* a cuBLASLt or GPU without FP8 GEMMs lists none: its FP8 shapes are skipped, the run goes on */
    if (st != CUBLAS_STATUS_SUCCESS && t == COLLECT_GEMM_FP8E4M3) n = 0;
    else if (st != CUBLAS_STATUS_SUCCESS) return lt_fail(st, "cublasLtMatmulAlgoGetIds");
    if (!(out->algos = calloc((size_t)(n ? n : 1), sizeof *out->algos))) return collect_error(COLLECT_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        cublasLtMatmulAlgo_t algo;
        if (cublasLtMatmulAlgoInit(g->lt, ct, CUDA_R_32F, dt, dt, ot, ot, ids[i], &algo) != CUBLAS_STATUS_SUCCESS)
            continue;
        collect_gemm_caps *c = &out->algos[out->n_algos++];
        c->algo_id = ids[i];
        c->splitk_support = cap_i32(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT);
        c->reduction_mask = cap_u32(&algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
        c->swizzle_support = cap_u32(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT);
        c->strided_batch = cap_i32(&algo, CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT);
        c->out_of_place = cap_i32(&algo, CUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT);
        c->uplo = cap_i32(&algo, CUBLASLT_ALGO_CAP_UPLO_SUPPORT);
        c->custom_option_max = cap_i32(&algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
        c->custom_memory_order = cap_i32(&algo, CUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER);
        c->pointer_mode_mask = cap_u32(&algo, CUBLASLT_ALGO_CAP_POINTER_MODE_MASK);
        c->epilogue_mask = cap_u32(&algo, CUBLASLT_ALGO_CAP_EPILOGUE_MASK);
        c->ld_negative = cap_i32(&algo, CUBLASLT_ALGO_CAP_LD_NEGATIVE);
        c->numerical_impl_flags = cap_u64(&algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS);
        c->min_align[0] = cap_u32(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES);
        c->min_align[1] = cap_u32(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES);
        c->min_align[2] = cap_u32(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES);
        c->min_align[3] = cap_u32(&algo, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES);
        c->pointer_array_batch = cap_i32(&algo, CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT);
        c->fp_emulation = cap_i32(&algo, CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT);
        if (cap_ids(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, &c->tiles, &c->n_tiles) ||
            cap_ids(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, &c->stages, &c->n_stages)) {
            collect_gemm_capset_free(out);
            return COLLECT_ENOMEM;
        }
    }
    return COLLECT_OK;
}

/* ---- problems ---- */

void gemm_problem_free(gemm_problem *p)
{
    if (p->op) cublasLtMatmulDescDestroy(p->op);
    if (p->la) cublasLtMatrixLayoutDestroy(p->la);
    if (p->lb) cublasLtMatrixLayoutDestroy(p->lb);
    if (p->ld) cublasLtMatrixLayoutDestroy(p->ld);
    memset(p, 0, sizeof *p);
}

/* A strided batch of `batch` matrices, matrix i starting i * stride elements after matrix 0 (packed: stride is
 * one matrix's elements); nothing to set for a single GEMM. 0, or 1 when cuBLASLt refuses an attribute. */
static int layout_batch(cublasLtMatrixLayout_t l, long batch, int64_t stride)
{
    if (batch <= 1) return 0;
    int32_t count = (int32_t)batch;
    return cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count) !=
               CUBLAS_STATUS_SUCCESS ||
           cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride) !=
               CUBLAS_STATUS_SUCCESS;
}

int gemm_problem_init(gemm_gpu *g, gemm_problem *p, const collect_gemm_shape *s, const char **why)
{
    memset(p, 0, sizeof *p);
    p->s = *s;
    size_t ab, bb, db;
    collect_gemm_shape_bytes(s, &ab, &bb, &db);
    if (operand_grow(&g->a, &g->a_cap, ab, g->exact) || operand_grow(&g->b, &g->b_cap, bb, g->exact) ||
        operand_grow(&g->d, &g->d_cap, db, g->exact)) {
        *why = "operands larger than the GPU's free memory";
        return 1;
    }
    cudaDataType_t dt = data_type(s->dtype), ot = out_type(s->dtype);
    cublasOperation_t ta = s->trans_a == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s->trans_b == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    /* column-major: op(A) is M x K, so A is stored M x K (N) or K x M (T); likewise B */
    uint64_t ar = ta == CUBLAS_OP_N ? (uint64_t)s->m : (uint64_t)s->k, ac = ta == CUBLAS_OP_N ? (uint64_t)s->k : (uint64_t)s->m;
    uint64_t br = tb == CUBLAS_OP_N ? (uint64_t)s->k : (uint64_t)s->n, bc = tb == CUBLAS_OP_N ? (uint64_t)s->n : (uint64_t)s->k;
    if (cublasLtMatmulDescCreate(&p->op, compute_type(s->dtype), CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&p->la, dt, ar, ac, (int64_t)ar) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&p->lb, dt, br, bc, (int64_t)br) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&p->ld, ot, (uint64_t)s->m, (uint64_t)s->n, s->m) != CUBLAS_STATUS_SUCCESS ||
        layout_batch(p->la, s->batch, (int64_t)(ar * ac)) || layout_batch(p->lb, s->batch, (int64_t)(br * bc)) ||
        layout_batch(p->ld, s->batch, (int64_t)s->m * s->n)) {
        *why = "cuBLASLt refuses the descriptors";
        return 1;
    }
    if (s->dtype == COLLECT_GEMM_FP8E4M3 &&
        (cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &g->scale, sizeof g->scale) !=
             CUBLAS_STATUS_SUCCESS ||
         cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &g->scale, sizeof g->scale) !=
             CUBLAS_STATUS_SUCCESS)) {
        *why = "cuBLASLt refuses the FP8 scale pointers";
        return 1;
    }
    int fill = s->dtype == COLLECT_GEMM_FP8E4M3
                   ? gpu_fill_e4m3(g->s, g->a, ab, g->seed) || gpu_fill_e4m3(g->s, g->b, bb, g->seed + 1)
                   : gpu_fill(g->s, g->a, ab / (size_t)collect_gemm_dtype_bytes(s->dtype), fill_type(s->dtype), g->seed) ||
                         gpu_fill(g->s, g->b, bb / (size_t)collect_gemm_dtype_bytes(s->dtype), fill_type(s->dtype), g->seed + 1);
    g->seed += 2;
    if (fill) return collect_error(COLLECT_EIO, "CUDA: fill kernel failed");
    cudaError_t e = cudaStreamSynchronize(g->s);
    if (e) return cuda_fail(e, "fill");
    return 0;
}

/* ---- configurations ---- */

static int config_read(const cublasLtMatmulAlgo_t *algo, collect_gemm_config *c)
{
    int32_t id = 0, split = 1;
    uint32_t tile = 0, stages = 0, red = 0, swz = 0, custom = 0;
    uint16_t inner = 0, cluster = 0;
    size_t w;
    memset(c, 0, sizeof *c);
    if (cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w) ||
        cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w) ||
        cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w) ||
        cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof split, &w) ||
        cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w) ||
        cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz, &w) ||
        cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, &w) ||
        cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner, &w) ||
        cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &w))
        return 1;
    *c = (collect_gemm_config){(int)id, (int)tile, (int)stages, (int)split, (int)red, (int)swz, (int)custom,
                               (int)cluster, (int)inner};
    return 0;
}

int gemm_gpu_heuristic(gemm_gpu *g, gemm_problem *p, gemm_candidate *out, int max, int *n, double *us)
{
    *n = 0;
    *us = 0;
    cublasLtMatmulPreference_t pref;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return 1;
    uint64_t ws = g->ws_size;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t res[64];
    int got = 0;
    if (max > 64) max = 64;
    double t0 = now_us();
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(g->lt, p->op, p->la, p->lb, p->ld, p->ld, pref, max, res, &got);
    *us = now_us() - t0;
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) return 1;
    for (int i = 0; i < got; i++) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
        gemm_candidate *c = &out[*n];
        if (config_read(&res[i].algo, &c->cfg)) continue;
        c->algo = res[i].algo;
        c->workspace = res[i].workspaceSize;
        c->heuristic_rank = i;
        (*n)++;
    }
    return 0;
}

int gemm_gpu_build(gemm_gpu *g, gemm_problem *p, const collect_gemm_config *cfg, gemm_candidate *out,
                   const char **why)
{
    memset(out, 0, sizeof *out);
    out->cfg = *cfg;
    out->heuristic_rank = -1;
    cudaDataType_t dt = data_type(p->s.dtype), ot = out_type(p->s.dtype);
    if (cublasLtMatmulAlgoInit(g->lt, compute_type(p->s.dtype), CUDA_R_32F, dt, dt, ot, ot, cfg->algo_id, &out->algo) !=
        CUBLAS_STATUS_SUCCESS) {
        *why = "cublasLtMatmulAlgoInit refused the algorithm id";
        return 1;
    }
    uint32_t tile = (uint32_t)cfg->tile_id, stages = (uint32_t)cfg->stages_id, red = (uint32_t)cfg->reduction_scheme;
    uint32_t swz = (uint32_t)cfg->swizzle, custom = (uint32_t)cfg->custom_option;
    int32_t split = cfg->split_k;
    uint16_t inner = (uint16_t)cfg->inner_shape_id, cluster = (uint16_t)cfg->cluster_id;
    cublasLtMatmulAlgo_t *a = &out->algo;
    if (cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile) ||
        cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages) ||
        cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof split) ||
        cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red) ||
        cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz) ||
        cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom) ||
        cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner) ||
        cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster)) {
        *why = "a config attribute was refused";
        return 1;
    }
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    cublasStatus_t st = cublasLtMatmulAlgoCheck(g->lt, p->op, p->la, p->lb, p->ld, p->ld, a, &res);
    if (st != CUBLAS_STATUS_SUCCESS) {
        *why = st == CUBLAS_STATUS_NOT_SUPPORTED ? "AlgoCheck: not supported" : "AlgoCheck: invalid value or other";
        return 1;
    }
    if (res.workspaceSize > g->ws_size) {
        *why = "AlgoCheck: workspace over the limit";
        return 1;
    }
    out->workspace = res.workspaceSize;
    return 0;
}

/* ---- timing ---- */

static cublasStatus_t launch(gemm_gpu *g, gemm_problem *p, const gemm_candidate *c)
{
    static const float one = 1.0f, zero = 0.0f;
    return cublasLtMatmul(g->lt, p->op, &one, g->a, p->la, g->b, p->lb, &zero, g->d, p->ld, g->d, p->ld, &c->algo,
                          g->ws, c->workspace, g->s);
}

/* One call timed by events; also its host time. 0, 1 when cuBLASLt rejects it, <0 fatal. */
static int time_once(gemm_gpu *g, gemm_problem *p, const gemm_candidate *c, double *gpu_us, double *host_us)
{
    cudaEventRecord(g->ev[0], g->s);
    double t0 = now_us();
    cublasStatus_t st = launch(g, p, c);
    *host_us = now_us() - t0;
    cudaEventRecord(g->ev[1], g->s);
    cudaError_t e = cudaEventSynchronize(g->ev[1]);
    if (e) return cuda_fail(e, "candidate call");
    if (st != CUBLAS_STATUS_SUCCESS) {
        cudaGetLastError(); /* a rejected call may leave a non-sticky error behind */
        return 1;
    }
    float ms;
    cudaEventElapsedTime(&ms, g->ev[0], g->ev[1]);
    *gpu_us = ms * 1e3;
    return 0;
}

/* R batches of n calls behind a spin of spin_us; *covered: the host queued every call before the spin ended */
static int time_batches(gemm_gpu *g, gemm_problem *p, const gemm_candidate *c, int n, double spin_us, double *us,
                        int *covered, const char **why)
{
    if (gpu_spin(g->s, spin_us)) return collect_error(COLLECT_EIO, "CUDA: spin kernel failed");
    cudaEventRecord(g->ev[0], g->s);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int r = 0; r < g->repeats && st == CUBLAS_STATUS_SUCCESS; r++) {
        for (int i = 0; i < n && st == CUBLAS_STATUS_SUCCESS; i++) st = launch(g, p, c);
        cudaEventRecord(g->ev[r + 1], g->s);
    }
    *covered = cudaEventQuery(g->ev[0]) == cudaErrorNotReady;
    cudaError_t e = cudaStreamSynchronize(g->s);
    if (e) return cuda_fail(e, "timed calls");
    if (st != CUBLAS_STATUS_SUCCESS) {
        cudaGetLastError();
        *why = "cublasLtMatmul failed";
        return 1;
    }
    double t[GEMM_GPU_MAX_REPEATS];
    for (int r = 0; r < g->repeats; r++) {
        float f;
        cudaEventElapsedTime(&f, g->ev[r], g->ev[r + 1]);
        t[r] = f * 1e3 / n;
    }
    *us = collect_median(t, g->repeats);
    return 0;
}

int gemm_gpu_time(gemm_gpu *g, gemm_problem *p, const gemm_candidate *c, double bound_us, double *us,
                  gemm_time_kind *kind, int *respun, const char **why)
{
    double t_w, h_w;
    int rc = time_once(g, p, c, &t_w, &h_w);
    if (rc) {
        if (rc > 0) *why = "cublasLtMatmul failed";
        return rc;
    }
    if (bound_us > 0 && t_w > g->slow_factor * bound_us) {
        /* the first call may have paid for loading its kernel: look once more before giving up on it */
        if ((rc = time_once(g, p, c, &t_w, &h_w))) {
            if (rc > 0) *why = "cublasLtMatmul failed";
            return rc;
        }
        if (t_w > g->slow_factor * bound_us) {
            *us = t_w;
            *kind = GEMM_TIME_SLOW;
            return 0;
        }
    }
    int n = (int)ceil(g->min_batch_us / fmax(t_w, 0.5));
    if (n < 1) n = 1;
    if (n > g->max_batch) n = g->max_batch;
    /* hold the stream while the host queues n x R calls: 1.5 x the warm-up's host time each (at least 3 us) */
    double spin_us = fmin(50e3, 20.0 + 1.5 * fmax(h_w, 3.0) * n * g->repeats);
    int covered = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        if ((rc = time_batches(g, p, c, n, spin_us, us, &covered, why))) return rc;
        if (covered || spin_us >= 50e3) break;
        spin_us = fmin(50e3, spin_us * 4);
        (*respun)++;
    }
    *kind = GEMM_TIME_REPEATS;
    return 0;
}

/* At least n pass events, created the first time a pass needs them. */
static int pass_events(gemm_gpu *g, int n)
{
    if (g->n_pass_ev >= n) return COLLECT_OK;
    cudaEvent_t *ev = realloc(g->pass_ev, (size_t)n * sizeof *ev);
    if (!ev) return collect_error(COLLECT_ENOMEM, "out of memory");
    g->pass_ev = ev;
    for (; g->n_pass_ev < n; g->n_pass_ev++) {
        cudaError_t e = cudaEventCreate(&g->pass_ev[g->n_pass_ev]);
        if (e) return cuda_fail(e, "event");
    }
    return COLLECT_OK;
}

int gemm_gpu_time_interleaved(gemm_gpu *g, gemm_problem *p, const gemm_candidate *const *c, int n, int rounds,
                              double hold_timeout_us, double *us, double *wall_ms, int *timed_out)
{
    *wall_ms = 0;
    *timed_out = 0;
    if (n < 1 || rounds < 1 || rounds > GEMM_GPU_MAX_REPEATS || (long)n * rounds > GEMM_GPU_MAX_PASS_LAUNCHES)
        return collect_error(COLLECT_EINVAL, "an interleaved pass of %d candidates x %d rounds: at most %d rounds and "
                             "%d launches", n, rounds, GEMM_GPU_MAX_REPEATS, GEMM_GPU_MAX_PASS_LAUNCHES);
    int rc = pass_events(g, n * rounds + 1);
    if (rc) return rc;
    if (!g->hold.host && gpu_hold_init(&g->hold))
        return collect_error(COLLECT_EIO, "CUDA: no mapped pinned memory for the interleaved pass's hold");
    unsigned char refused[GEMM_GPU_MAX_PASS_LAUNCHES] = {0}; /* n <= n x rounds <= the cap, checked above */
    cudaEvent_t *ev = g->pass_ev;
    double t0 = now_us();
    for (int i = 0; i < n; i++)
        if (launch(g, p, c[i]) != CUBLAS_STATUS_SUCCESS) {
            cudaGetLastError();
            refused[i] = 1;
        }
    cudaError_t e = cudaStreamSynchronize(g->s);
    if (e) return cuda_fail(e, "warm-up of an interleaved pass");
    if (gpu_hold(g->s, &g->hold, hold_timeout_us)) return collect_error(COLLECT_EIO, "CUDA: hold kernel failed");
    cudaEventRecord(ev[0], g->s);
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < n; i++) {
            if (!refused[i] && launch(g, p, c[i]) != CUBLAS_STATUS_SUCCESS) {
                cudaGetLastError(); /* a rejected call may leave a non-sticky error behind */
                refused[i] = 1;
            }
            cudaEventRecord(ev[r * n + i + 1], g->s);
        }
    gpu_hold_release(&g->hold);
    e = cudaStreamSynchronize(g->s);
    *wall_ms = (now_us() - t0) * 1e-3;
    if (e) return cuda_fail(e, "interleaved pass");
    *timed_out = gpu_hold_timed_out(&g->hold);
    for (int i = 0; i < n; i++) {
        double t[GEMM_GPU_MAX_REPEATS];
        for (int r = 0; r < rounds && !refused[i]; r++) {
            float f;
            if (cudaEventElapsedTime(&f, ev[r * n + i], ev[r * n + i + 1]) != cudaSuccess) {
                cudaGetLastError(); /* an event that cannot be read: the candidate's time is not known */
                refused[i] = 1;
                break;
            }
            t[r] = f * 1e3;
        }
        us[i] = refused[i] ? INFINITY : collect_median(t, rounds);
    }
    return COLLECT_OK;
}
