#!/usr/bin/env python3
"""Times every configuration of a Triton matmul's autotuning space on real LLM and vision GEMM shapes, on every
GPU of the host, and writes a heurist benchmark table (data/table.h): OUT.csv, OUT.schema.json, OUT.skipped.csv.

The kernel (matmul_kernel below, written for this table): C (M, N) = A (M, K) @ B (K, N), row-major, fp16 or bf16
in and out, fp32 accumulation; tiles of BLOCK_M x BLOCK_N over C, BLOCK_K steps over K with K masked, programs
grouped GROUP_M tiles down a column for L2 reuse (Triton's tutorial ordering); rows and columns of A and B
wrap (% M, % N) and the store is masked, so any size runs. M, N and K are not specialised (do_not_specialize):
Triton compiles a configuration once per data type and per divisibility by 16 of the strides K and N.

Configurations (`--configs`, default 150): PyTorch inductor's mm configurations (BLOCK_M, BLOCK_N, BLOCK_K,
num_stages, num_warps, GROUP_M 8) and a seeded sample of the grid BLOCK_M, BLOCK_N, BLOCK_K in 16..256 (powers of
two), GROUP_M 1 / 4 / 8, num_warps 2 / 4 / 8, num_stages 2..6, keeping those whose pipelined operand tiles,
num_stages x (BLOCK_M + BLOCK_N) x BLOCK_K x 2 bytes, fit --smem-kib (227 KiB, an H100 block's shared memory),
whose accumulator holds at most 256 fp32 values a thread and at least 8 (BLOCK_M x BLOCK_N over 32 x num_warps
threads). A configuration Triton still refuses (compile error, out of resources) is written to OUT.skipped.csv
with the reason, for every shape of its data type and alignment.

For a pruner: a table row's kernel columns are exactly triton.Config(kwargs={"BLOCK_M", "BLOCK_N", "BLOCK_K",
"GROUP_M"}, num_warps, num_stages), and its problem columns are M, N, K (the kernel's integer arguments) and
dtype ("fp16" or "bf16", the dtype of A). `family` (the shape's source family in gemm_real_shapes.txt) and
`timed` are extra columns the schema does not name.

Shapes: the fp16 / bf16 lines of --shapes (default datasets/h100/gemm_real_shapes.txt) from LLM, MoE and
vision families, as (M, N, K, dtype) (transposes dropped: the kernel reads row-major operands), deduplicated,
modelled at most --max-us by gemm_shapes.py's cost model, the first --count in file order (the file is a round
robin over families, so any prefix holds each of them).

Timing (the cuBLASLt table's method, collect/gemm_gpu.h): A and B filled with uniform values in [-1, 1] per
shape; per configuration one untimed call (loading the compiled kernel), one warm-up call timed with CUDA
events; a configuration whose warm-up is more than --slow-factor times the shape's best so far gets a second
warm-up and, still that slow, that single time (`timed` = warmup). Otherwise 3 repeats of a batch of B
back-to-back calls (B so that a batch lasts >= 100 us, at most 64), queued behind torch.cuda._sleep, which
holds the stream until the host has queued them all (if the spin ended first, the repeats run again behind a
spin twice as long, up to three times), each batch between two CUDA events; time = the median of the 3 batch
means (`timed` = batches). The L2 cache is not flushed.

Processes: the compile phase runs a pool of --compile-procs processes (default: the CPU count, at most 64)
that each launch their share of (configuration, dtype, alignment) variants once on a tiny problem, filling
Triton's on-disk cache (TRITON_CACHE_DIR, default OUT.d/triton-cache), so every compile is paid once; then one
timing process per GPU (CUDA_VISIBLE_DEVICES) takes shapes from a shared queue and appends each finished shape's
rows to its part file OUT.d/part_G.csv, then the shape's key to part_G.done. A run stopped by --time-limit or
killed keeps every finished shape; running it again skips them (rows of a shape whose key is not in a .done
file are dropped). At the end the parts are merged, in shape-list order, into OUT.csv (a temporary file
renamed into place). Exit status: 0 every shape done, 3 shapes remain, 1 error, 2 usage.

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
    bm, bn, bk, gm, warps, stages = c
    per_thread = bm * bn / (32.0 * warps)
    return smem_bytes(c) <= smem_kib * 1024 and 8 <= per_thread <= 256


def config_space(count, seed, smem_kib):
    """Inductor's configurations (num_stages at least 2) and a seeded sample of the grid, in a fixed order."""
    out, seen = [], set()
    for bm, bn, bk, stages, warps in INDUCTOR_MM:
        c = (bm, bn, bk, 8, warps, max(2, stages))
        if config_ok(c, smem_kib) and c not in seen:
            seen.add(c)
            out.append(c)
    sizes = (16, 32, 64, 128, 256)
    grid = [(bm, bn, bk, gm, w, s) for bm in sizes for bn in sizes for bk in sizes for gm in (1, 4, 8)
            for w in (2, 4, 8) for s in (2, 3, 4, 5, 6)]
    grid = [c for c in grid if c not in seen and config_ok(c, smem_kib)]
    rng = random.Random(seed)
    out += rng.sample(grid, max(0, min(len(grid), count - len(out))))
    return out[:count]


def read_shapes(path, count, max_us):
    shapes, seen = [], set()
    with open(path) as f:
        for line in f:
            body, _, comment = line.partition('#')
            w = body.split()
            if not w:
                continue
            m, n, k, dt = int(w[0]), int(w[1]), int(w[2]), w[3]
            family = comment.split()[0] if comment.split() else 'unknown'
            if dt not in ('fp16', 'bf16') or family not in FAMILIES or (m, n, k, dt) in seen:
                continue
            if gemm_shapes.gemm_us(m, n, k, dt) > max_us:
                continue
            seen.add((m, n, k, dt))
            shapes.append((m, n, k, dt, family))
            if len(shapes) == count:
                break
    return shapes


def variant(shape):
    """The compile variant a shape needs: (dtype, K % 16 == 0, N % 16 == 0)."""
    m, n, k, dt = shape[:4]
    return dt, k % 16 == 0, n % 16 == 0


def modelled_seconds(shapes, configs, launch_us=15.0):
    """Seconds of timing on one GPU: per (shape, configuration) 0.2 ms of synchronisation, then every call costs
    the host launch_us (Triton's Python launch) and the GPU its time t, 1.5x gemm_shapes.py's modelled cuBLAS
    time: two warm-ups and 3 batches of B = clamp(100 us / t, 1, 64) calls; a quarter of the configurations stop
    after two warm-ups (slower than 5x the best)."""
    total = 0.0
    for m, n, k, dt, _ in shapes:
        t = 1.5 * gemm_shapes.gemm_us(m, n, k, dt)
        b = min(64, max(1, math.ceil(100.0 / t)))
        full = 200.0 + 2 * (launch_us + t) + 3 * b * (launch_us + t)
        cut = 200.0 + 2 * (launch_us + 5 * t)
        total += len(configs) * (0.75 * full + 0.25 * cut) * 1e-6
    return total


def key_of(shape):
    return '%d,%d,%d,%s' % tuple(shape[:4])


# ---- GPU side (imports torch and triton; never reached by --dry-run) ----

def build_kernel():
    import triton
    import triton.language as tl

    @triton.jit(do_not_specialize=['M', 'N', 'K'])
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
    """Pool worker: compiles (launches once on a tiny problem) every variant of its share; returns the
    failures {(config, variant): reason}."""
    tasks, device, cache = args
    os.environ['CUDA_VISIBLE_DEVICES'] = str(device)
    os.environ['TRITON_CACHE_DIR'] = cache
    import torch
    kernel = build_kernel()
    failed = {}
    for cfg, (dt, k_al, n_al) in tasks:
        tdt = torch.float16 if dt == 'fp16' else torch.bfloat16
        k, n = (16 if k_al else 24), (16 if n_al else 24)
        a = torch.zeros((16, k), device='cuda', dtype=tdt)
        b = torch.zeros((k, n), device='cuda', dtype=tdt)
        c = torch.empty((16, n), device='cuda', dtype=tdt)
        try:
            launch(kernel, a, b, c, cfg)
            torch.cuda.synchronize()
        except Exception as e:  # a compile error or out of resources: the configuration is skipped
            failed[(cfg, (dt, k_al, n_al))] = short_error(e)
    return failed


class Timer:
    """The timing method of the module docstring, on one GPU."""

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
        launch(self.kernel, a, b, c, cfg)  # loads the compiled kernel
        t_w, host_us = self.once(a, b, c, cfg)
        if best_us and t_w > self.slow * best_us:
            t_w, host_us = self.once(a, b, c, cfg)
            if t_w > self.slow * best_us:
                return t_w, 'warmup'
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


def time_worker(gpu, queue, shapes, configs, failed, part, cache, deadline, out_q):
    """One GPU's process: takes shape indices from queue until it is empty or the deadline nears."""
    os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)
    os.environ['TRITON_CACHE_DIR'] = cache
    import torch
    kernel = build_kernel()
    timer = Timer(torch, kernel, 5.0)
    longest, done, rows_n = 0.0, 0, 0
    with open(part + '.csv', 'a') as rows_f, open(part + '.done', 'a') as done_f, \
            open(part + '.skipped.csv', 'a') as skip_f:
        while True:
            if time.time() + max(2.0, 2 * longest) > deadline:
                out_q.put(('stopped', gpu, done))
                return
            try:
                i = queue.get(timeout=1.0)
            except Exception:
                out_q.put(('empty', gpu, done))
                return
            t0 = time.time()
            m, n, k, dt, family = shapes[i]
            tdt = torch.float16 if dt == 'fp16' else torch.bfloat16
            best, lines, skips, shape_why = 0.0, [], [], None
            try:
                g = torch.Generator(device='cuda')
                g.manual_seed(i)
                a = (torch.rand((m, k), device='cuda', dtype=torch.float32, generator=g) * 2 - 1).to(tdt)
                b = (torch.rand((k, n), device='cuda', dtype=torch.float32, generator=g) * 2 - 1).to(tdt)
                c = torch.empty((m, n), device='cuda', dtype=tdt)
            except Exception as e:  # the operands do not fit: every configuration is skipped
                shape_why = short_error(e)
                a = b = c = None
            for cfg in configs:
                why = shape_why or failed.get((cfg, variant(shapes[i])))
                if why is None:
                    try:
                        us, how = timer.time(a, b, c, cfg, best)
                    except Exception as e:
                        why = short_error(e)
                if why is not None:
                    skips.append('%s,%s,%s\n' % (key_of(shapes[i]), ','.join(map(str, cfg)), why))
                    continue
                best = us if best == 0 or us < best else best
                lines.append('%d,%d,%d,%s,%s,%s,%.6g,%s\n' % (m, n, k, dt, family, ','.join(map(str, cfg)), us, how))
            del a, b, c
            rows_f.write(''.join(lines))
            rows_f.flush()
            skip_f.write(''.join(skips))
            skip_f.flush()
            done_f.write(key_of(shapes[i]) + '\n')
            done_f.flush()
            dt_s = time.time() - t0
            longest = max(longest, dt_s)
            done += 1
            rows_n += len(lines)
            out_q.put(('shape', gpu, i, len(lines), len(skips), dt_s, best))


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
              ' "duplicates": "error"}\n' % gpus_cus)
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
    shapes = read_shapes(a.shapes, a.count, a.max_us)
    configs = config_space(a.configs, a.seed, a.smem_kib)
    variants = sorted(set(variant(s) for s in shapes))
    if not shapes or not configs:
        print('triton_matmul: no shapes or no configurations', file=sys.stderr)
        return 2
    fams = {}
    for s in shapes:
        fams[s[4]] = fams.get(s[4], 0) + 1
    print('%d shapes (%s), %d configurations, %d compile variants (dtype x K, N divisible by 16): %d compiles'
          % (len(shapes), ', '.join('%s %d' % kv for kv in sorted(fams.items())), len(configs), len(variants),
             len(configs) * len(variants)))
    print('modelled timing: %.0f s on one GPU' % modelled_seconds(shapes, configs))
    if a.dry_run:
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
    deadline = start + a.time_limit if a.time_limit > 0 else float('inf')
    keep_done(folder)
    done = read_done(folder)
    todo = [i for i, s in enumerate(shapes) if key_of(s) not in done]
    print('%d shapes already done, %d to do' % (len(shapes) - len(todo), len(todo)))
    sys.stdout.flush()
    ctx = mp.get_context('spawn')
    failed = {}
    if todo:
        need = sorted(set(variant(shapes[i]) for i in todo))
        tasks = [(c, v) for v in need for c in configs]
        procs = a.compile_procs or min(64, os.cpu_count() or 1)
        procs = max(1, min(procs, len(tasks)))
        shares = [(tasks[p::procs], p % n_gpu, cache) for p in range(procs)]
        t0 = time.time()
        with ctx.Pool(procs) as pool:
            for f in pool.imap_unordered(compile_task, shares):
                failed.update(f)
        print('compiled %d variants in %.1f s with %d processes; %d refused' % (len(tasks), time.time() - t0, procs,
                                                                                len(failed)))
        reasons = {}
        for why in failed.values():
            reasons[why.split(':')[0]] = reasons.get(why.split(':')[0], 0) + 1
        for why, n in sorted(reasons.items()):
            print('  refused: %s: %d' % (why, n))
        sys.stdout.flush()
        queue, out_q = ctx.Queue(), ctx.Queue()
        for i in todo:
            queue.put(i)
        workers = [ctx.Process(target=time_worker, args=(g, queue, shapes, configs, failed,
                                                         os.path.join(folder, 'part_%d' % g), cache, deadline, out_q))
                   for g in range(n_gpu)]
        for w in workers:
            w.start()
        ended, finished, t_run = 0, 0, time.time()
        while ended < n_gpu:
            try:
                msg = out_q.get(timeout=5)
            except Exception:
                if not any(w.is_alive() for w in workers):
                    break
                continue
            if msg[0] == 'shape':
                finished += 1
                _, g, i, nr, ns, dt_s, best = msg
                if finished % 10 == 0 or finished == len(todo):
                    left = len(todo) - finished
                    rate = finished / max(time.time() - t_run, 1e-9)
                    print('%d/%d shapes, %.1f s, ETA %.0f s (gpu %d: %s, %d rows, %d skipped, best %.1f us, %.2f s)'
                          % (finished, len(todo), time.time() - start, left / max(rate, 1e-9), g, key_of(shapes[i]),
                             nr, ns, best, dt_s))
                    sys.stdout.flush()
            else:
                ended += 1
        for w in workers:
            w.join()
        bad = [w.exitcode for w in workers if w.exitcode]
        if bad:
            print('triton_matmul: a timing process ended with status %s' % bad, file=sys.stderr)
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
