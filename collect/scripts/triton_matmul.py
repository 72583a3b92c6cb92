#!/usr/bin/env python3
"""Times every configuration of a Triton matmul's autotuning space on real LLM and vision GEMM shapes, on every
GPU of the host, and writes a heurist benchmark table (data/table.h): OUT.csv, OUT.schema.json, OUT.skipped.csv.

The kernel (matmul_kernel below, written for this table): C (M, N) = A (M, K) @ B (K, N), row-major, fp16 or bf16
in and out, fp32 accumulation; tiles of BLOCK_M x BLOCK_N over C, BLOCK_K steps over K with K masked, programs
grouped GROUP_M tiles down a column for L2 reuse (Triton's tutorial ordering); rows and columns of A and B
wrap (% M, % N) and the store is masked, so any size runs. It is specialised as `triton.jit` does by default:
each integer argument by its class, 1 (a constant), divisible by 16, or neither (the strides K and N carry the
classes of K and N), so Triton compiles a configuration once per variant (dtype, class of M, of K, of N), and a
shape is timed only with binaries of its own variant (variant()).

Configurations (`--configs`, default 150): PyTorch inductor's mm configurations (BLOCK_M, BLOCK_N, BLOCK_K,
num_stages, num_warps, GROUP_M 8) and a seeded sample of the grid BLOCK_M, BLOCK_N in 16..256, BLOCK_K in 16..128
(powers of two), GROUP_M 1 / 4 / 8, num_warps 2 / 4 / 8, num_stages 2..5, keeping those whose pipelined operand
tiles, num_stages x (BLOCK_M + BLOCK_N) x BLOCK_K x 2 bytes, fit --smem-kib (227 KiB, an H100 block's shared
memory), whose accumulator holds at most 256 fp32 values a thread and at least 8 (BLOCK_M x BLOCK_N over 32 x
num_warps threads), with 2 warps only for tiles of at most 64 x 64 and 8 warps only from 64 x 128 up
(config_ok). The compile phase runs each (configuration, variant) once on a probe problem of the variant (M 304,
300 or 1, K 784, 750 or 1, N 264, 260 or 1 by class: partial tiles on every side, the unaligned rows of the
variant): a configuration
Triton refuses (compile error, out of resources) or one that breaks the CUDA context on the probe (the pool
process ends, a fresh one takes the rest of its share) is written to OUT.skipped.csv with the reason, for
every shape of its data type and alignment, and never reaches a timing process.

For a pruner: a table row's kernel columns are exactly triton.Config(kwargs={"BLOCK_M", "BLOCK_N", "BLOCK_K",
"GROUP_M"}, num_warps, num_stages), and its problem columns are M, N, K (the kernel's integer arguments) and
dtype ("fp16" or "bf16", the dtype of A). `family` (the shape's source family in gemm_real_shapes.txt) is the
schema's "group" (a split holds out whole families); `timed` is an extra column the schema does not name.

Shapes: the fp16 / bf16 lines of --shapes (default datasets/h100/gemm_real_shapes.txt) from LLM, MoE and
vision families, single GEMMs only (a line whose BATCH is over 1, a strided batch, is not one matmul call and is
left out), as (M, N, K, dtype) (transposes dropped: the kernel reads row-major operands), deduplicated,
modelled at most --max-us by gemm_shapes.py's cost model, the first --count in file order (the file is a round
robin over families, so any prefix holds each of them).

Timing (the cuBLASLt table's method, collect/gemm_gpu.h): A and B filled with uniform values in [-1, 1] per
shape; the configurations in the order of the space, inductor's first, so that a good one sets the slow bound
early; per configuration one untimed call on the shape's operands (a load or compile it needs is paid
there, never in a timed call), then one warm-up call timed with CUDA events; when it is more than --slow-factor
times the shape's best so far, a second warm-up (a warm-up is not queued behind a spin, so a stall of the host or
the GPU lands in it: a datasets/h100/triton run with one warm-up cut a run of ten configurations of one shape at
6 to 8 times their neighbours' times), and a configuration whose two warm-ups are both that slow keeps the
smaller (`timed` = warmup: it cannot win, and a slow configuration of a large shape costs a few calls, not
dozens). Otherwise 3 repeats of a batch of B
back-to-back calls (B so that a batch lasts >= 100 us, at most 64), queued behind torch.cuda._sleep, which
holds the stream until the host has queued them all (if the spin ended first, the repeats run again behind a
spin twice as long, up to three times), each batch between two CUDA events; time = the median of the 3 batch
means (`timed` = batches). The L2 cache is not flushed. The dry run's modelled time follows these rules
(shape_seconds, modelled_seconds).

Processes: the compile phase runs a pool of --compile-procs processes (default: the CPU count, at most 64)
(each share in a fresh process) that each compile and probe their share of (configuration, variant) pairs,
filling Triton's on-disk cache (TRITON_CACHE_DIR, default OUT.d/triton-cache), so every compile is paid once;
then one timing process per GPU (CUDA_VISIBLE_DEVICES) loads a variant's configurations from the cache before
its first shape of that variant (the probe launch again), asks the parent for shapes one at a
time over its own pipe (dealt longest first by shape_seconds, so that the run's tail is made of short shapes)
and appends each finished shape's rows to its part file OUT.d/part_G.csv, then the shape's key to
part_G.done. A run stopped by --time-limit or killed keeps every finished shape; running it again skips them
(rows of a shape whose key is not in a .done file are dropped). At the end the parts are merged, in
shape-list order, into OUT.csv (a temporary file renamed into place). Exit status: 0 every shape done, 3
shapes remain, 1 error, 2 usage.

Crashes: a configuration can break the CUDA context of its process (a sticky error such as "operation not
supported on global/shared address space": every later CUDA call fails). After any error while timing, the
process checks that the context still runs work; if not, it reports the (configuration, variant) and exits,
its shape unwritten. The parent (Supervision, run_timing) records that configuration as skipped for that
variant ("crash: ..." in OUT.skipped.csv, for that shape and every later one; OUT.d/crashes.txt keeps the pairs
for a later run), tells the other processes, deals the shape again first and starts a fresh process on
that GPU: a shape is written only when each of its configurations ran or was skipped for its own reason. A
process that dies with no report is handled alike, from the shape and configuration it had last noted; a crash
outside any configuration retries the shape, twice at most, and a GPU whose processes crash more than 8 times
gets no further process.

    python3 collect/scripts/triton_matmul.py --out OUT/h100_triton_mm --time-limit 170
    python3 collect/scripts/triton_matmul.py --out OUT/h100_triton_mm --dry-run       # no torch needed
"""
import argparse
import csv
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_shapes  # noqa: E402  (the GEMM cost model)

FAMILIES = ('llama3', 'mistral', 'qwen2.5', 'phi3', 'gemma2', 'gpt2', 'mixtral', 'deepseek_moe', 'vit', 'swin')
PROBLEM = ['M', 'N', 'K', 'dtype']
KERNEL = ['BLOCK_M', 'BLOCK_N', 'BLOCK_K', 'GROUP_M', 'num_warps', 'num_stages']
HEADER = PROBLEM + ['family'] + KERNEL + ['time_us', 'timed']
# PyTorch inductor's mm configurations (torch/_inductor/kernel/mm_common.py): BLOCK_M, BLOCK_N, BLOCK_K,
# num_stages, num_warps; GROUP_M 8
INDUCTOR_MM = [(32, 32, 16, 1, 2), (32, 32, 128, 2, 4), (32, 64, 32, 5, 8), (64, 32, 32, 5, 8), (64, 32, 128, 5, 4),
               (64, 64, 16, 2, 4), (64, 64, 32, 2, 4), (64, 64, 64, 3, 8), (64, 64, 128, 5, 4), (64, 128, 32, 3, 4),
               (64, 128, 32, 4, 8), (64, 128, 64, 3, 4), (64, 128, 128, 4, 4), (128, 64, 32, 3, 4),
               (128, 64, 32, 4, 8), (128, 128, 32, 2, 8), (128, 128, 32, 3, 4), (128, 128, 64, 3, 4),
               (128, 128, 64, 5, 8)]


def smem_bytes(c):
    bm, bn, bk, _, _, stages = c
    return stages * (bm + bn) * bk * 2


def config_ok(c, smem_kib):
    """The rules of a realistic space: the pipelined operand tiles fit shared memory, the accumulator holds 8 to
    256 fp32 values a thread, 2 warps only for tiles of at most 64 x 64 and 8 warps only from 64 x 128 up (as
    inductor's and Triton's tutorial configurations pair them), BLOCK_K at most 128."""
    bm, bn, bk, gm, warps, stages = c
    per_thread = bm * bn / (32.0 * warps)
    if warps == 2 and bm * bn > 64 * 64 or warps == 8 and bm * bn < 64 * 128 or bk > 128:
        return False
    return smem_bytes(c) <= smem_kib * 1024 and 8 <= per_thread <= 256


def config_space(count, seed, smem_kib):
    """Inductor's configurations (num_stages at least 2) and a seeded sample of the grid, in a fixed order."""
    out, seen = [], set()
    for bm, bn, bk, stages, warps in INDUCTOR_MM:
        c = (bm, bn, bk, 8, warps, max(2, stages))
        if smem_bytes(c) <= smem_kib * 1024 and c not in seen:
            seen.add(c)
            out.append(c)
    sizes = (16, 32, 64, 128, 256)
    grid = [(bm, bn, bk, gm, w, s) for bm in sizes for bn in sizes for bk in sizes for gm in (1, 4, 8)
            for w in (2, 4, 8) for s in (2, 3, 4, 5)]
    grid = [c for c in grid if c not in seen and config_ok(c, smem_kib)]
    rng = random.Random(seed)
    out += rng.sample(grid, max(0, min(len(grid), count - len(out))))
    return out[:count]


def read_shapes(path, count, max_us, dtypes=('fp16', 'bf16'), aligned=False):
    """The shapes of the module docstring; dtypes: those kept; aligned: only shapes with M > 1 and K and N
    divisible by 16 (the variants of the most common layers, half the compiles)."""
    shapes, seen = [], set()
    with open(path) as f:
        for line in f:
            body, _, comment = line.partition('#')
            w = body.split()
            if not w:
                continue
            m, n, k, dt = int(w[0]), int(w[1]), int(w[2]), w[3]
            if len(w) > 6 and int(w[6]) > 1:
                continue  # a strided batch of GEMMs, not one matmul
            family = comment.split()[0] if comment.split() else 'unknown'
            if dt not in dtypes or family not in FAMILIES or (m, n, k, dt) in seen:
                continue
            if aligned and (m == 1 or k % 16 or n % 16):
                continue
            if gemm_shapes.gemm_us(m, n, k, dt) > max_us:
                continue
            seen.add((m, n, k, dt))
            shapes.append((m, n, k, dt, family))
            if len(shapes) == count:
                break
    return shapes


def int_class(v):
    """Triton's specialisation of an integer argument: '1' (the constant 1), 'D' (divisible by 16) or 'N'."""
    return '1' if v == 1 else 'D' if v % 16 == 0 else 'N'


def variant(shape):
    """The compile variant a shape needs: (dtype, class of M, class of K, class of N) (int_class)."""
    m, n, k, dt = shape[:4]
    return dt, int_class(m), int_class(k), int_class(n)


# the best configuration of this space against gemm_shapes.py's modelled cuBLAS time: 1.09 (median; 0.90 to 1.28
# from the 10th to the 90th percentile) on the 312 shapes of datasets/h100/triton
TRITON_OVER_MODEL = 1.1
# per shape: the share of configurations slower than --slow-factor x the best, cut after their one warm-up,
# and how much slower than the best they and the fully timed ones run, on average (the same shapes)
CUT_SHARE, CUT_RATIO, FULL_RATIO = 0.34, 9.4, 2.3


def shape_seconds(shape, n_configs, launch_us=15.0):
    """One shape's timing, seconds, by the rules of the module docstring. Its best call takes t =
    TRITON_OVER_MODEL x gemm_shapes.py's modelled time; each configuration costs 0.2 ms of synchronisation;
    CUT_SHARE of them run an untimed and two warm-up calls of CUT_RATIO x t; the others an untimed call, a warm-up and
    3 batches of B =
    clamp(100 us / t', 1, 64) calls of t' = FULL_RATIO x t each, every call at least the host's launch_us,
    behind a spin of 1.5 x launch_us a queued call."""
    m, n, k, dt = shape[:4]
    t = TRITON_OVER_MODEL * gemm_shapes.gemm_us(m, n, k, dt)
    tf = FULL_RATIO * t
    b = min(64, max(1, math.ceil(100.0 / tf)))
    full = 200.0 + max(launch_us, tf) * (2 + 3 * b) + 1.5 * launch_us * 3 * b
    cut = 200.0 + 3 * max(launch_us, CUT_RATIO * t)
    return n_configs * ((1 - CUT_SHARE) * full + CUT_SHARE * cut) * 1e-6


# the compile phase: a process's start (torch and triton imported, a CUDA context) and the CPU seconds of one
# compile and probe, the slowest seen (1,350 pairs in 71.1 s with 64 processes on a 4-GPU H100 host; 300 in 19.1
# to 33.8 s with 16 on a one-GPU host)
COMPILE_START_S, COMPILE_S = 8.0, 3.0


def modelled_seconds(shapes, configs, load_ms=16.0, n_variants=4):
    """The timing phase's seconds: (one GPU's total, the longest shape, a timing process's start-up, which
    loads every (configuration, variant) once, load_ms each)."""
    each = [shape_seconds(s, len(configs)) for s in shapes]
    return sum(each), max(each, default=0.0), len(configs) * n_variants * load_ms * 1e-3


def key_of(shape):
    return '%d,%d,%d,%s' % tuple(shape[:4])


# ---- GPU side (imports torch and triton; never reached by --dry-run) ----

def build_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - kk * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - kk * BLOCK_K, other=0.0)
            acc += tl.dot(a, b)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = acc.to(c_ptr.dtype.element_ty)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    return matmul_kernel


def launch(kernel, a, b, c, cfg):
    import triton
    m, k = a.shape
    n = b.shape[1]
    bm, bn, bk, gm, warps, stages = cfg
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                 BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, num_warps=warps, num_stages=stages)


def short_error(e):
    name = type(e).__name__
    text = ' '.join(str(e).split())[:160]
    return ('%s: %s' % (name, text)).replace(',', ';')


def compile_task(args):
    """Pool worker (a fresh process a share): compiles and probes (launches once on the variant's probe problem)
    each (configuration, variant) of its share in order; returns (failures {(config, variant): reason}, the
    tasks left undone). A probe that breaks the CUDA context fails its pair with "crash: ..." and ends the
    share there: the rest goes to a fresh process."""
    tasks, device, cache, probe_shapes = args
    os.environ['CUDA_VISIBLE_DEVICES'] = str(device)
    os.environ['TRITON_CACHE_DIR'] = cache
    backend = TritonBackend(5.0)
    failed = {}
    for j, (cfg, var) in enumerate(tasks):
        try:
            backend.load(cfg, var, probe_shapes.get(var))
        except Exception as e:  # a compile error or out of resources: the configuration is skipped
            failed[(cfg, var)] = short_error(e)
            if not backend.context_ok():
                failed[(cfg, var)] = 'crash: ' + failed[(cfg, var)]
                return failed, tasks[j + 1:]
    return failed, []


def compile_all(ctx, tasks, procs, n_gpu, cache, log, probe_shapes=None):
    """Compiles and probes every (configuration, variant) of tasks over a pool of procs processes (each share in
    a fresh process, GPUs dealt round robin), dealing the shares a crash left undone again until none is left.
    probe_shapes {variant: shape}: the problem a variant is probed on (default: the synthetic probe of
    TritonBackend.load). Returns the failures {(config, variant): reason}."""
    failed, rounds = {}, 0
    while tasks:
        n = max(1, min(procs, len(tasks)))
        shares = [(tasks[p::n], p % n_gpu, cache, probe_shapes or {}) for p in range(n)]
        tasks = []
        with ctx.Pool(n, maxtasksperchild=1) as pool:
            for f, left in pool.imap_unordered(compile_task, shares):
                failed.update(f)
                tasks += left
        rounds += 1
        if tasks:
            log('compile round %d: %d crashes, %d variants left' % (
                rounds, sum(1 for v in failed.values() if v.startswith('crash: ')), len(tasks)))
    return failed


class Timer:
    """The timing method of the module docstring, on one GPU, for configurations loaded beforehand."""

    def __init__(self, torch, kernel, slow_factor):
        self.torch, self.kernel, self.slow = torch, kernel, slow_factor
        self.ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        self.spin_ev = torch.cuda.Event()
        self.cycles_per_us = 2000.0

    def once(self, a, b, c, cfg):
        self.ev[0].record()
        h0 = time.perf_counter()
        launch(self.kernel, a, b, c, cfg)
        host = time.perf_counter() - h0
        self.ev[1].record()
        self.ev[1].synchronize()
        return self.ev[0].elapsed_time(self.ev[1]) * 1e3, host * 1e6

    def time(self, a, b, c, cfg, best_us):
        launch(self.kernel, a, b, c, cfg)  # untimed: whatever the first call on these operands costs the host
        self.torch.cuda.synchronize()
        t_w, host_us = self.once(a, b, c, cfg)
        if best_us and t_w > self.slow * best_us:
            t_w2, host2 = self.once(a, b, c, cfg)  # a second warm-up: a host or GPU stall cuts nothing alone
            if t_w2 > self.slow * best_us:
                return min(t_w, t_w2), 'warmup'
            t_w, host_us = t_w2, host2
        batch = int(min(64, max(1, math.ceil(100.0 / max(t_w, 1e-3)))))
        spin_us = 20.0 + 1.5 * max(host_us, 5.0) * 3 * batch
        for _ in range(3):
            self.torch.cuda._sleep(int(spin_us * self.cycles_per_us))
            self.spin_ev.record()
            self.ev[0].record()
            for r in range(3):
                for _ in range(batch):
                    launch(self.kernel, a, b, c, cfg)
                self.ev[r + 1].record()
            covered = not self.spin_ev.query()  # the spin outlasted the host's queueing
            self.ev[3].synchronize()
            if covered:
                break
            spin_us *= 2
        times = sorted(self.ev[r].elapsed_time(self.ev[r + 1]) * 1e3 / batch for r in range(3))
        return times[1], 'batches'


# the probe problem's sizes by the class of each dimension (int_class)
PROBE_M, PROBE_K, PROBE_N = {'1': 1, 'D': 304, 'N': 300}, {'1': 1, 'D': 784, 'N': 750}, {'1': 1, 'D': 264, 'N': 260}


class TritonBackend:
    """What a timing process asks of the GPU: loading the compiled variants, a shape's operands, the timing of
    one configuration and whether the CUDA context still works."""

    def __init__(self, slow_factor):
        import torch
        self.torch = torch
        self.kernel = build_kernel()
        self.timer = Timer(torch, self.kernel, slow_factor)
        self.probes = {}

    def load(self, cfg, var, shape=None):
        """Launches cfg's variant var once on a problem of the variant: `shape` (M, N, K, dtype), else the
        variant's synthetic probe (module docstring), so that a configuration that cannot run the variant fails
        here and its binary is in Triton's caches."""
        torch = self.torch
        if shape is not None and self.probes.get(var, (None,))[0] != shape:
            self.probes.pop(var, None)
            ops = self.operands(shape, 0)
            self.probes[var] = (shape,) + tuple(ops)
        if var not in self.probes:
            dt, mc, kc, nc = var
            tdt = torch.float16 if dt == 'fp16' else torch.bfloat16
            m, k, n = PROBE_M[mc], PROBE_K[kc], PROBE_N[nc]
            self.probes[var] = (None, torch.rand((m, k), device='cuda').to(tdt),
                                torch.rand((k, n), device='cuda').to(tdt), torch.empty((m, n), device='cuda', dtype=tdt))
        launch(self.kernel, *self.probes[var][1:], cfg)
        torch.cuda.synchronize()

    def operands(self, shape, seed):
        torch = self.torch
        m, n, k, dt = shape[:4]
        tdt = torch.float16 if dt == 'fp16' else torch.bfloat16
        g = torch.Generator(device='cuda')
        g.manual_seed(seed)
        a = (torch.rand((m, k), device='cuda', dtype=torch.float32, generator=g) * 2 - 1).to(tdt)
        b = (torch.rand((k, n), device='cuda', dtype=torch.float32, generator=g) * 2 - 1).to(tdt)
        return a, b, torch.empty((m, n), device='cuda', dtype=tdt)

    def time(self, ops, cfg, best_us):
        return self.timer.time(ops[0], ops[1], ops[2], cfg, best_us)

    def compiled(self):
        """The compiled binaries this process's kernel holds in memory (every specialisation met so far)."""
        return [k for cache in self.kernel.device_caches.values() for k in cache[0]]

    def context_ok(self):
        """After an error: does the context still run work? A sticky CUDA error fails every later call."""
        try:
            self.torch.cuda.synchronize()
            return float((self.torch.ones(1, device='cuda') + 1).item()) == 2.0
        except Exception:
            return False


def triton_backend(slow_factor):
    return TritonBackend(slow_factor)


CRASH_EXIT = 70  # a timing process whose CUDA context broke


def timing_process(gpu, backend_factory, conn, state, shapes, configs, failed, part, cache, deadline, slow_factor):
    """One GPU's process: loads every (configuration, variant) it may time once, then asks the parent for shapes
    over its own pipe conn until none is left or the deadline nears, timing each shape's configurations in order
    and writing the shape's rows, skips and key when all are timed. The parent's answer carries the
    (configuration, variant) pairs it learnt are crashes. state[0] holds the configuration index being timed
    (-1: none), for the parent to read if the process dies. When an error leaves the CUDA context broken, it
    reports ('crash', gpu, shape, configuration index, variant, reason) and exits with CRASH_EXIT, the shape
    unwritten. The pipe is this process's alone: a process that dies holds no lock another one waits for."""
    os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)
    if cache:
        os.environ['TRITON_CACHE_DIR'] = cache
    failed = dict(failed)

    def crash(i, ci, var, why):
        conn.send(('crash', gpu, i, ci, var, why))
        os._exit(CRASH_EXIT)

    t0 = time.time()
    backend = backend_factory(slow_factor)
    loaded = set()

    def load(i, var):
        """Every configuration of var not known to fail, launched once on the variant's probe (before the first
        shape of the variant): a configuration that fails is skipped for the variant, one that breaks the
        context is reported as a crash of shape i."""
        for ci, cfg in enumerate(configs):
            if (cfg, var) in failed:
                continue
            state[0] = ci
            try:
                backend.load(cfg, var, shapes[i][:4])
            except Exception as e:
                why = short_error(e)
                if not backend.context_ok():
                    crash(i, ci, var, why)
                failed[(cfg, var)] = why
        state[0] = -1
        loaded.add(var)

    conn.send(('ready', gpu, 0, time.time() - t0))
    longest = 0.0
    with open(part + '.csv', 'a') as rows_f, open(part + '.done', 'a') as done_f, \
            open(part + '.skipped.csv', 'a') as skip_f:
        while True:
            if time.time() + max(2.0, 2 * longest) > deadline:
                conn.send(('stopped', gpu))
                return
            conn.send(('next', gpu))
            i, crashes = conn.recv()
            failed.update(crashes)
            if i < 0:
                return
            t0 = time.time()
            m, n, k, dt, family = shapes[i]
            var = variant(shapes[i])
            if var not in loaded:
                load(i, var)
            known = set(backend.compiled()) if hasattr(backend, 'compiled') else set()
            best, lines, skips, shape_why, ops = 0.0, [], [], None, None
            try:
                ops = backend.operands(shapes[i], i)
            except Exception as e:  # the operands do not fit: every configuration is skipped
                shape_why = short_error(e)
                if not backend.context_ok():
                    crash(i, -1, var, shape_why)
            for ci, cfg in enumerate(configs):
                why = shape_why or failed.get((cfg, var))
                if why is None:
                    state[0] = ci
                    try:
                        us, how = backend.time(ops, cfg, best)
                    except Exception as e:
                        why = short_error(e)
                        if not backend.context_ok():
                            crash(i, ci, var, why)
                    state[0] = -1
                if why is not None:
                    skips.append('%s,%s,%s\n' % (key_of(shapes[i]), ','.join(map(str, cfg)), why))
                    continue
                best = us if best == 0 or us < best else best
                lines.append('%d,%d,%d,%s,%s,%s,%.6g,%s\n' % (m, n, k, dt, family, ','.join(map(str, cfg)), us, how))
            ops = None
            rows_f.write(''.join(lines))
            rows_f.flush()
            skip_f.write(''.join(skips))
            skip_f.flush()
            done_f.write(key_of(shapes[i]) + '\n')
            done_f.flush()
            dt_s = time.time() - t0
            longest = max(longest, dt_s)
            new = sorted(set(backend.compiled()) - known) if hasattr(backend, 'compiled') else []
            if new:  # a binary compiled while timing: its specialisation differs from the loaded ones'
                print('gpu %d, shape %s: %d binaries compiled while timing, e.g. %s (loaded: %s)' % (
                    gpu, key_of(shapes[i]), len(new), new[0][:600], sorted(known)[0][:600] if known else '-'),
                    file=sys.stderr, flush=True)
            conn.send(('shape', gpu, i, len(lines), len(skips), dt_s, best, len(new)))


class Supervision:
    """The parent's bookkeeping of its timing processes, apart from the processes: which shapes are still to
    write, which (configuration, variant) pairs crashed, which shapes go back to the queue and which GPUs get a
    fresh process. A crash attributed to a configuration marks it skipped for the shape's variant
    ("crash: ..."), for every later shape, and the shape is timed again from its start by a fresh process: a
    shape is written only when every configuration of it ran or was skipped for its own reason. A crash outside
    any configuration (the operands, or a process that died between configurations) retries the shape, and
    after max_shape_crashes of them the parent writes it with every configuration skipped. A GPU whose
    processes crash more than max_restarts times gets no further process."""

    def __init__(self, shapes, configs, failed, todo, max_restarts=8, max_shape_crashes=2):
        self.shapes, self.configs, self.failed = shapes, configs, failed
        self.max_restarts, self.max_shape_crashes = max_restarts, max_shape_crashes
        self.outstanding = set(todo)   # shapes neither written by a process nor given up
        self.restarts, self.shape_crashes = {}, {}
        self.given_up = {}             # shape -> reason, written by the parent
        self.crashes = []              # (gpu, shape, configuration or None, variant, reason), in order

    def finished(self, i):
        self.outstanding.discard(i)

    def crashed(self, gpu, i, ci, var, why):
        """A process on gpu broke its context (or died) on shape i (-1: none) at configuration index ci (-1:
        none) of variant var (None: the shape's). Returns (shape to queue again or None, a new failed pair
        ((cfg, var), reason) or None, whether gpu gets a fresh process)."""
        if var is None and i >= 0:
            var = variant(self.shapes[i])
        cfg = self.configs[ci] if 0 <= ci < len(self.configs) else None
        self.crashes.append((gpu, i, cfg, var, why))
        new = None
        if cfg is not None and var is not None:
            new = ((cfg, var), 'crash: ' + why)
            self.failed[new[0]] = new[1]
        requeue = None
        if i >= 0 and i in self.outstanding:
            if cfg is None:
                self.shape_crashes[i] = self.shape_crashes.get(i, 0) + 1
            if self.shape_crashes.get(i, 0) >= self.max_shape_crashes:
                self.given_up[i] = 'crash: ' + why
                self.outstanding.discard(i)
            else:
                requeue = i
        self.restarts[gpu] = self.restarts.get(gpu, 0) + 1
        return requeue, new, self.restarts[gpu] <= self.max_restarts


def write_given_up(part, sup):
    """The shapes the parent gave up: every configuration skipped with the crash's reason, the key marked done."""
    with open(part + '.skipped.csv', 'a') as skip_f, open(part + '.done', 'a') as done_f:
        for i, why in sorted(sup.given_up.items()):
            for cfg in sup.configs:
                skip_f.write('%s,%s,%s\n' % (key_of(sup.shapes[i]), ','.join(map(str, cfg)), why))
            done_f.write(key_of(sup.shapes[i]) + '\n')


def run_timing(ctx, backend_factory, gpus, todo, shapes, configs, failed, folder, cache, deadline, slow_factor,
               log, max_restarts=8):
    """Times the shapes todo (in this order) on the GPUs (a list of indices), one timing_process each, dealing
    each process its next shape when it asks: a process that crashes is replaced by a fresh one on its GPU
    (Supervision says what becomes of its shape and configuration), a GPU left idle while shapes wait gets a
    process again. Returns the Supervision."""
    from collections import deque
    from multiprocessing.connection import wait

    sup = Supervision(shapes, configs, failed, todo, max_restarts)
    pending = deque(todo)
    procs, conns, states, holding, unsent, reports = {}, {}, {}, {}, {}, {}
    t_run, idle_starts = time.time(), 0

    def start(g):
        mine, theirs = ctx.Pipe()
        states[g] = ctx.Array('i', [-1], lock=False)
        procs[g] = ctx.Process(target=timing_process,
                               args=(g, backend_factory, theirs, states[g], shapes, configs, dict(sup.failed),
                                     os.path.join(folder, 'part_%d' % g), cache, deadline, slow_factor))
        procs[g].start()
        theirs.close()
        conns[g], unsent[g] = mine, []

    def handle(g, msg):
        kind = msg[0]
        if kind == 'ready':
            log('gpu %d: timing process started in %.1f s' % (g, msg[3]))
        elif kind == 'next':
            i = pending.popleft() if pending and time.time() < deadline else -1
            if i >= 0:
                holding[g] = i
            conns[g].send((i, unsent[g]))
            unsent[g] = []
        elif kind == 'shape':
            _, _, i, nr, ns, dt_s, best, n_new = msg
            sup.finished(i)
            holding.pop(g, None)
            done = len(todo) - len(sup.outstanding)
            if done % 10 == 0 or not sup.outstanding or n_new:
                rate = done / max(time.time() - t_run, 1e-9)
                log('%d/%d shapes, ETA %.0f s (gpu %d: %s, %d rows, %d skipped, best %.1f us, %.2f s, %d compiled '
                    'while timing)' % (done, len(todo), len(sup.outstanding) / max(rate, 1e-9), g, key_of(shapes[i]),
                                       nr, ns, best, dt_s, n_new))
        elif kind == 'crash':
            reports[g] = msg

    def drain(g):
        """Every message of g's pipe; False once the process has closed it."""
        try:
            while conns[g].poll():
                handle(g, conns[g].recv())
        except (EOFError, OSError):
            return False
        return True

    for g in gpus:
        start(g)
    while procs:
        ready = wait([conns[g] for g in procs] + [procs[g].sentinel for g in procs], timeout=1.0)
        for g in list(procs):
            if conns[g] in ready:
                drain(g)
        for g in list(procs):
            if procs[g].is_alive():
                continue
            procs[g].join()
            drain(g)
            conns[g].close()
            code = procs[g].exitcode
            del procs[g]
            held = holding.pop(g, -1)
            if code == 0 and g not in reports:
                continue  # ended normally: nothing left to deal or the deadline near
            if g in reports:
                _, _, i, ci, var, why = reports.pop(g)
            else:
                i, ci, var = held, states[g][0], None
                why = 'timing process died with status %s' % code
            requeue, new, again = sup.crashed(g, i, ci, var, why)
            log('gpu %d: %s (shape %s, configuration %s): %s' % (
                g, 'CUDA context broken' if code == CRASH_EXIT else 'process ended',
                key_of(shapes[i]) if i >= 0 else '-', ','.join(map(str, configs[ci])) if ci >= 0 else '-', why))
            if new:
                for h in procs:
                    unsent[h].append(new)
            if requeue is not None:
                pending.appendleft(requeue)
            if again and time.time() < deadline:
                start(g)
            elif not again:
                log('gpu %d: %d crashes, no further process' % (g, sup.restarts[g]))
        if not procs and pending and time.time() < deadline and idle_starts < len(todo):
            # shapes queued again after every process had ended: a GPU that may still take work runs them
            for g in gpus:
                if sup.restarts.get(g, 0) <= max_restarts:
                    idle_starts += 1
                    start(g)
                    break
    if sup.given_up:
        write_given_up(os.path.join(folder, 'part_parent'), sup)
    return sup


def read_crashes(folder):
    """The (configuration, variant) pairs that broke a timing process in an earlier run: {pair: reason}."""
    out = {}
    path = os.path.join(folder, 'crashes.txt')
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                w = line.rstrip('\n').split(',', 10)
                if len(w) == 11 and line.endswith('\n'):
                    out[(tuple(int(v) for v in w[:6]), tuple(w[6:10]))] = w[10]
    return out


def write_crashes(folder, pairs):
    """Appends crash pairs {(configuration, variant): reason} to the folder's list, read by the next run."""
    with open(os.path.join(folder, 'crashes.txt'), 'a') as f:
        for (cfg, var), why in sorted(pairs.items()):
            f.write('%s,%s,%s\n' % (','.join(map(str, cfg)), ','.join(var), why))


def read_done(folder):
    done = set()
    for name in sorted(os.listdir(folder)):
        if name.endswith('.done'):
            with open(os.path.join(folder, name)) as f:
                done.update(line.strip() for line in f if line.strip())
    return done


def keep_done(folder):
    """Drops from each part file the lines of shapes its .done file does not list (a shape cut by a kill is
    timed again) and lines cut short, so that a resumed run appends to clean parts."""
    for name in sorted(os.listdir(folder)):
        if not name.endswith('.done'):
            continue
        base = os.path.join(folder, name[:-len('.done')])
        with open(base + '.done') as f:
            done = set(line.strip() for line in f if line.strip())
        for path in (base + '.csv', base + '.skipped.csv'):
            if not os.path.exists(path):
                continue
            with open(path) as f:
                lines = [line for line in f if line.endswith('\n') and ','.join(line.split(',')[:4]) in done]
            with open(path + '.tmp', 'w') as f:
                f.writelines(lines)
            os.replace(path + '.tmp', path)


def merge(out, folder, shapes, done, gpus_cus):
    """The finished shapes' rows from every part, in shape-list order, into OUT.csv and OUT.skipped.csv."""
    order = {key_of(s): i for i, s in enumerate(shapes)}
    rows, skips = {}, {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        target = rows if name.endswith('.csv') and not name.endswith('.skipped.csv') else \
            skips if name.endswith('.skipped.csv') else None
        if target is None:
            continue
        with open(path) as f:
            for line in f:
                if not line.endswith('\n'):
                    continue  # a line cut by a kill
                key = ','.join(line.split(',')[:4])
                if key in done and key in order:
                    target.setdefault(key, []).append(line)
    for path, header, table in ((out + '.csv', HEADER, rows),
                                (out + '.skipped.csv', PROBLEM + KERNEL + ['reason'], skips)):
        with open(path + '.tmp', 'w') as f:
            f.write(','.join(header) + '\n')
            for key in sorted(table, key=order.get):
                f.writelines(table[key])
        os.replace(path + '.tmp', path)
    schema = ('{"problem": ["M", "N", "K", "dtype"],\n'
              ' "kernel": ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages"],\n'
              ' "hardware": [], "categorical": ["dtype"],\n'
              ' "measure": "time_us", "better": "lower",\n'
              ' "tiles": {"BLOCK_M": "M", "BLOCK_N": "N", "BLOCK_K": "K"}, "reduction": "K", "cus": %d,\n'
              ' "duplicates": "error", "group": "family"}\n' % gpus_cus)
    with open(out + '.schema.json.tmp', 'w') as f:
        f.write(schema)
    os.replace(out + '.schema.json.tmp', out + '.schema.json')
    return sum(len(v) for v in rows.values()), sum(len(v) for v in skips.values())


def device_info():
    """GPU count and SM count, asked in a child process so that this one stays free of CUDA."""
    import subprocess
    code = ('import torch, triton; p = torch.cuda.get_device_properties(0); '
            'print(torch.cuda.device_count(), p.multi_processor_count, repr(p.name), torch.__version__, '
            'triton.__version__)')
    w = subprocess.run([sys.executable, '-c', code], check=True, capture_output=True, text=True).stdout.split()
    return int(w[0]), int(w[1]), ' '.join(w[2:-2]), w[-2], w[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--shapes', default='datasets/h100/gemm_real_shapes.txt')
    ap.add_argument('--count', type=int, default=400, help='shapes taken from the file')
    ap.add_argument('--max-us', type=float, default=400.0, help='largest modelled cuBLAS time of a shape')
    ap.add_argument('--dtypes', default='fp16,bf16', help='data types kept (fp16, bf16)')
    ap.add_argument('--aligned', action='store_true', help='only shapes with M > 1, K and N divisible by 16')
    ap.add_argument('--configs', type=int, default=150)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--smem-kib', type=float, default=227.0)
    ap.add_argument('--out', required=True, help='OUT: writes OUT.csv, OUT.schema.json, OUT.skipped.csv, OUT.d/')
    ap.add_argument('--gpus', default='all', help='"all" or a count')
    ap.add_argument('--compile-procs', type=int, default=0, help='compile pool size (0: the CPU count, at most 64)')
    ap.add_argument('--time-limit', type=float, default=0, help='seconds for the whole run (0: none)')
    ap.add_argument('--slow-factor', type=float, default=5.0)
    ap.add_argument('--dry-run', action='store_true', help='list the shapes and configurations; no torch needed')
    a = ap.parse_args()
    start = time.time()
    shapes = read_shapes(a.shapes, a.count, a.max_us, tuple(a.dtypes.split(',')), a.aligned)
    configs = config_space(a.configs, a.seed, a.smem_kib)
    variants = sorted(set(variant(s) for s in shapes))
    if not shapes or not configs:
        print('triton_matmul: no shapes or no configurations', file=sys.stderr)
        return 2
    fams = {}
    for s in shapes:
        fams[s[4]] = fams.get(s[4], 0) + 1
    print('%d shapes (%s), %d configurations, %d compile variants (dtype x class of M, K, N): %d compiles'
          % (len(shapes), ', '.join('%s %d' % kv for kv in sorted(fams.items())), len(configs), len(variants),
             len(configs) * len(variants)))
    one, longest, load_s = modelled_seconds(shapes, configs, n_variants=len(variants))
    print('modelled timing: %.0f s on one GPU (the longest shape %.1f s), each timing process loading the variants '
          'it meets, %.1f s at most' % (one, longest, load_s))
    if a.dry_run:
        gpus = 4 if a.gpus == 'all' else int(a.gpus)
        procs = a.compile_procs or 64
        compile_s = COMPILE_START_S + len(configs) * len(variants) * COMPILE_S / procs
        print('modelled run on %d GPUs with %d compile processes: compile phase %.0f s, timing %.0f s, %.0f s in all'
              % (gpus, procs, compile_s, max(one / gpus, longest) + load_s,
                 compile_s + max(one / gpus, longest) + load_s))
        print('configurations (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages; shared memory KiB):')
        for c in configs:
            print('  %s  %.0f' % (','.join(map(str, c)), smem_bytes(c) / 1024.0))
        print('shapes (M, N, K, dtype, family):')
        for s in shapes:
            print('  %d %d %d %s %s' % s)
        return 0

    import multiprocessing as mp
    folder = a.out + '.d'
    os.makedirs(folder, exist_ok=True)
    cache = os.environ.get('TRITON_CACHE_DIR', os.path.abspath(os.path.join(folder, 'triton-cache')))
    n_gpu, cus, name, torch_v, triton_v = device_info()
    if a.gpus != 'all':
        n_gpu = min(n_gpu, int(a.gpus))
    print('%d GPUs (%s, %d SMs); torch %s, triton %s; Triton cache %s' % (n_gpu, name, cus, torch_v, triton_v, cache))
    print('modelled timing on %d GPUs: %.0f s after the compiles' % (n_gpu, max(one / n_gpu, longest) + load_s))
    deadline = start + a.time_limit if a.time_limit > 0 else float('inf')
    keep_done(folder)
    done = read_done(folder)
    # longest first, so that the run's tail is made of short shapes
    todo = sorted((i for i, s in enumerate(shapes) if key_of(s) not in done),
                  key=lambda i: (-shape_seconds(shapes[i], len(configs)), i))
    print('%d shapes already done, %d to do' % (len(shapes) - len(todo), len(todo)))
    sys.stdout.flush()
    ctx = mp.get_context('spawn')
    failed = read_crashes(folder)
    if failed:
        print('%d (configuration, variant) pairs skipped as they crashed an earlier run (%s)'
              % (len(failed), os.path.join(folder, 'crashes.txt')))
    if todo:
        need = sorted(set(variant(shapes[i]) for i in todo))
        tasks = [(c, v) for v in need for c in configs]
        procs = a.compile_procs or min(64, os.cpu_count() or 1)
        procs = max(1, min(procs, len(tasks)))
        t0 = time.time()
        probe_shapes = {}
        for i in todo:
            probe_shapes.setdefault(variant(shapes[i]), shapes[i][:4])
        failed.update(compile_all(ctx, [t for t in tasks if t not in failed], procs, n_gpu, cache,
                                  lambda line: (print(line), sys.stdout.flush()), probe_shapes))
        print('compiled and probed %d variants in %.1f s with %d processes; %d refused' % (
            len(tasks), time.time() - t0, procs, len(failed)))
        reasons = {}
        for why in failed.values():
            reasons[why.split(':')[0]] = reasons.get(why.split(':')[0], 0) + 1
        for why, n in sorted(reasons.items()):
            print('  refused: %s: %d' % (why, n))
        sys.stdout.flush()
        sup = run_timing(ctx, triton_backend, list(range(n_gpu)), todo, shapes, configs, failed, folder, cache,
                         deadline, a.slow_factor, lambda line: (print('%.1f s: %s' % (time.time() - start, line)),
                                                               sys.stdout.flush()))
        for g, i, cfg, var, why in sup.crashes:
            print('crash: gpu %d, shape %s, configuration %s, variant %s: %s'
                  % (g, key_of(shapes[i]) if i >= 0 else '-', ','.join(map(str, cfg)) if cfg else '-', var, why))
        known = read_crashes(folder)
        write_crashes(folder, {k: v for k, v in sup.failed.items() if v.startswith('crash: ') and k not in known})
        if sup.given_up:
            print('%d shapes written with every configuration skipped after repeated crashes' % len(sup.given_up))
    done = read_done(folder)
    n_rows, n_skip = merge(a.out, folder, shapes, done, cus)
    left = sum(1 for s in shapes if key_of(s) not in done)
    print('%d of %d shapes done, %d rows, %d skipped (shape, configuration) pairs; %.1f s; %s.csv'
          % (len(shapes) - left, len(shapes), n_rows, n_skip, time.time() - start, a.out))
    if left:
        print('%d shapes left: run the same command again to continue' % left)
    return 3 if left else 0


if __name__ == '__main__':
    sys.exit(main())
