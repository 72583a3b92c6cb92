#!/usr/bin/env python3
"""Triton autotuning with and without heurist's pruner (python/heurist/triton.py), on the GPU, for held-out shapes.

For each shape of the held-out families of the Triton matmul table (collect/scripts/triton_matmul.py wrote it;
--hold names the families the model was not trained on), a real `triton.autotune(configs, key=["M", "N", "K"])`
of triton_matmul.py's kernel runs over the full configuration list, then over the pruner's k best (k in --ks,
`prune_configs_by={"early_config_prune": heurist.triton.pruner(model, k)}`), each side a fresh Autotuner, and:

- autotuning wall time: the first call's host time (synchronised before and after), which holds the pruner's own
  call, Triton's benchmarking of every config left and one launch of the pick; two ways:
  `loaded`: the kernel object already holds every compiled config in memory (compile excluded);
  `disk`: a fresh JITFunction over a warm on-disk Triton cache, as a new process sees it: each config's
  compiled binary is loaded from the cache during autotuning (compile included, from a warm cache).
  Benchmarking is Triton's do_bench, --bench-ms WARMUP,REP ms a config (Triton's default 25,100), the same on
  both sides; with k = 1 Triton benchmarks nothing.
- the kernel time of each side's pick, re-timed with the table's method (triton_matmul.Timer: batches behind a
  spin, median of 3), --retime times each, their median.
Per k: the geometric mean over shapes of full / pruned autotuning time (the cut, both ways) and its least value,
and of the full pick's kernel time / the pruned pick's (>= 1: the pruned pick is as fast), with the worst shape.

Before timing, every (configuration, variant) the shapes need is compiled and probed by triton_matmul.py's
compile pool into the Triton cache (TRITON_CACHE_DIR, default OUT.d/triton-cache); a configuration that fails
its probe is left out of both sides' lists for that variant.

    python3 collect/scripts/triton_pruner_demo.py --model M.h5 --table T.csv.gz --hold llama3,mistral --out OUT
writes OUT.json (every shape's figures and the summary) and prints the summary; --time-limit stops before a
shape that could run past it. The library is found as `import heurist` finds it (HEURIST_LIBRARY).

    python3 collect/scripts/triton_pruner_demo.py --model M.h5 --table T.csv.gz --hold llama3,mistral --offline
needs no GPU: for every held-out shape, the same pruner call over the table's configurations and the best
measured time among the k it keeps, against the table's best (the kernel-time side, from the table's times).
"""
import argparse
import csv
import gzip
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import triton_matmul as tm  # noqa: E402


def heldout_shapes(table, hold, count):
    """The distinct (M, N, K, dtype, family) of the table's rows whose family is in hold, taken round robin over
    the families in order of first appearance, at most count."""
    opener = gzip.open if table.endswith('.gz') else open
    by_family, seen = {}, set()
    with opener(table, 'rt') as f:
        for row in csv.DictReader(f):
            if row['family'] not in hold:
                continue
            s = (int(row['M']), int(row['N']), int(row['K']), row['dtype'], row['family'])
            if s[:4] not in seen:
                seen.add(s[:4])
                by_family.setdefault(s[4], []).append(s)
    out, lists = [], list(by_family.values())
    while len(out) < count and any(lists):
        for lst in lists:
            if lst and len(out) < count:
                out.append(lst.pop(0))
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def summarize(rows, ks):
    """Per k: geomean and least full / pruned autotuning time (loaded, disk), geomean and worst kernel-time
    ratio full pick / pruned pick."""
    out = {}
    for k in ks:
        done = [r for r in rows if str(k) in r['pruned']]
        if not done:
            continue
        cut_l = [r['full']['loaded_s'] / r['pruned'][str(k)]['loaded_s'] for r in done]
        cut_d = [r['full']['disk_s'] / r['pruned'][str(k)]['disk_s'] for r in done]
        speed = [r['full']['pick_us'] / r['pruned'][str(k)]['pick_us'] for r in done]
        worst = min(range(len(done)), key=lambda i: speed[i])
        out[str(k)] = {'shapes': len(done), 'cut_loaded_geomean': geomean(cut_l), 'cut_loaded_min': min(cut_l),
                       'cut_disk_geomean': geomean(cut_d), 'cut_disk_min': min(cut_d),
                       'kernel_ratio_geomean': geomean(speed), 'kernel_ratio_worst': speed[worst],
                       'worst_shape': tm.key_of(done[worst]['shape']),
                       'same_pick_share': sum(r['pruned'][str(k)]['pick'] == r['full']['pick'] for r in done)
                       / len(done)}
    return out


def run_demo(a, make_pruner, log):
    """The measurement of the module docstring; make_pruner(k) gives the early_config_prune callable. Writes
    a.out + '.json' after every shape; returns the report dict."""
    import multiprocessing as mp
    start = time.time()
    folder = a.out + '.d'
    os.makedirs(folder, exist_ok=True)
    cache = os.environ.setdefault('TRITON_CACHE_DIR', os.path.abspath(os.path.join(folder, 'triton-cache')))
    shapes = heldout_shapes(a.table, set(a.hold.split(',')), a.count)
    space = tm.config_space(a.configs, a.seed, a.smem_kib)
    ks = [int(k) for k in a.ks.split(',')]
    variants = sorted(set(tm.variant(s) for s in shapes))
    log('%d held-out shapes (%s), %d configurations, %d variants' % (
        len(shapes), ','.join(sorted(set(s[4] for s in shapes))), len(space), len(variants)))
    t0 = time.time()
    probes = {}
    for s in shapes:
        probes.setdefault(tm.variant(s), s[:4])
    failed = tm.compile_all(mp.get_context('spawn'), [(c, v) for v in variants for c in space],
                            a.compile_procs or min(64, os.cpu_count() or 1), 1, cache, log, probes)
    compile_s = time.time() - t0
    log('compiled and probed %d variants in %.1f s; %d refused' % (len(space) * len(variants), compile_s,
                                                                    len(failed)))

    import torch
    import triton
    import triton.testing

    def as_config(c):
        bm, bn, bk, gm, w, s = c
        return triton.Config({'BLOCK_M': bm, 'BLOCK_N': bn, 'BLOCK_K': bk, 'GROUP_M': gm}, num_warps=w, num_stages=s)

    def as_tuple(cfg):
        kw = cfg.kwargs
        return (kw['BLOCK_M'], kw['BLOCK_N'], kw['BLOCK_K'], kw['GROUP_M'], cfg.num_warps, cfg.num_stages)

    warm_ms, rep_ms = (float(v) for v in a.bench_ms.split(','))

    def bench(fn, quantiles):
        return triton.testing.do_bench(fn, warmup=warm_ms, rep=rep_ms, quantiles=quantiles)

    base = tm.build_kernel()
    timer = tm.Timer(torch, base, float('inf'))
    backend = tm.TritonBackend(5.0)
    lists = {v: [as_config(c) for c in space if (c, v) not in failed] for v in variants}
    loaded_variants = set()

    def autotune(cfgs, prune, fresh, ops):
        a_, b_, c_ = ops
        m, kk = a_.shape
        n = b_.shape[1]
        kern = tm.build_kernel() if fresh else base
        at = triton.autotune(configs=cfgs, key=['M', 'N', 'K'], do_bench=bench,
                             prune_configs_by={'early_config_prune': prune} if prune else None)(kern)

        def grid(meta):
            return (triton.cdiv(m, meta['BLOCK_M']) * triton.cdiv(n, meta['BLOCK_N']),)
        torch.cuda.synchronize()
        t = time.perf_counter()
        at[grid](a_, b_, c_, m, n, kk, a_.stride(0), a_.stride(1), b_.stride(0), b_.stride(1), c_.stride(0),
                 c_.stride(1))
        torch.cuda.synchronize()
        return time.perf_counter() - t, as_tuple(at.best_config), getattr(at, 'bench_time', 0.0)

    def retime(ops, cfg):
        return statistics.median(timer.time(ops[0], ops[1], ops[2], cfg, 0.0)[0] for _ in range(a.retime))

    report = {'card': torch.cuda.get_device_name(0), 'torch': torch.__version__, 'triton': triton.__version__,
              'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), 'configs': len(space),
              'bench_ms': [warm_ms, rep_ms], 'hold': a.hold, 'ks': ks, 'compile_s': compile_s,
              'refused': len(failed), 'shapes': [], 'summary': {}}
    longest = 0.0
    for s in shapes:
        if a.time_limit and time.time() - start + 1.5 * longest > a.time_limit:
            log('time limit: %d of %d shapes measured' % (len(report['shapes']), len(shapes)))
            break
        t_shape = time.time()
        var = tm.variant(s)
        cfgs = lists[var]
        ops = backend.operands(s, 0)
        row = {'shape': list(s), 'configs': len(cfgs), 'full': {}, 'pruned': {}}
        d_s, pick_d, _ = autotune(cfgs, None, True, ops)
        if var not in loaded_variants:
            # every config into the base kernel's memory, outside any timing, launched with the keyword arguments
            # the autotuner passes (Config.all_kwargs: num_ctas too), so that its calls find them there
            m, kk = ops[0].shape
            n = ops[1].shape[1]
            for c in cfgs:
                base[(1,)](ops[0], ops[1], ops[2], m, n, kk, ops[0].stride(0), ops[0].stride(1), ops[1].stride(0),
                           ops[1].stride(1), ops[2].stride(0), ops[2].stride(1), **c.all_kwargs())
            torch.cuda.synchronize()
            loaded_variants.add(var)
        l_s, pick, bench_s = autotune(cfgs, None, False, ops)
        row['full'] = {'disk_s': d_s, 'loaded_s': l_s, 'bench_s': bench_s, 'pick': list(pick),
                       'pick_disk': list(pick_d)}
        for k in ks:
            prune = make_pruner(k)
            d_s, _, _ = autotune(cfgs, prune, True, ops)
            l_s, pk, bench_s = autotune(cfgs, prune, False, ops)
            row['pruned'][str(k)] = {'disk_s': d_s, 'loaded_s': l_s, 'bench_s': bench_s, 'pick': list(pk)}
        times = {}
        for p in [tuple(row['full']['pick'])] + [tuple(r['pick']) for r in row['pruned'].values()]:
            if p not in times:
                times[p] = retime(ops, p)
        row['full']['pick_us'] = times[tuple(row['full']['pick'])]
        for r in row['pruned'].values():
            r['pick_us'] = times[tuple(r['pick'])]
        ops = None
        report['shapes'].append(row)
        report['summary'] = summarize(report['shapes'], ks)
        with open(a.out + '.json.tmp', 'w') as f:
            json.dump(report, f, indent=1)
        os.replace(a.out + '.json.tmp', a.out + '.json')
        longest = max(longest, time.time() - t_shape)
        log('%s: full %.2f s loaded / %.2f s disk, pick %.1f us; %s' % (
            tm.key_of(s), row['full']['loaded_s'], row['full']['disk_s'], row['full']['pick_us'],
            '; '.join('k=%s %.3f s, %.1f us' % (k, r['loaded_s'], r['pick_us']) for k, r in row['pruned'].items())))
    report['wall_s'] = time.time() - start
    with open(a.out + '.json.tmp', 'w') as f:
        json.dump(report, f, indent=1)
    os.replace(a.out + '.json.tmp', a.out + '.json')
    return report


def offline(a, model):
    """The kernel-time side of the demonstration from the table alone, no GPU: for each held-out shape (all of
    them, --count aside) the pruner's k configs (the same call Triton makes, over the same config list in
    config_space order) and the best measured time among them, against the best of the full list. Returns
    {k: (geomean of best / best of the k, worst, its shape, share of shapes whose best is among the k)}."""
    import heurist.triton
    opener = gzip.open if a.table.endswith('.gz') else open
    hold = set(a.hold.split(','))
    times = {}
    with opener(a.table, 'rt') as f:
        for row in csv.DictReader(f):
            if row['family'] in hold:
                s = (int(row['M']), int(row['N']), int(row['K']), row['dtype'])
                c = tuple(int(row[k]) for k in tm.KERNEL)
                times.setdefault(s, {})[c] = float(row['time_us'])

    class Config:  # what the pruner reads of a triton.Config
        def __init__(self, c):
            self.kwargs = dict(zip(tm.KERNEL[:4], c[:4]))
            self.num_warps, self.num_stages, self.c = c[4], c[5], c

    class Tensor:
        def __init__(self, dtype):
            self.dtype = {'bf16': 'torch.bfloat16', 'fp16': 'torch.float16'}[dtype]

        def data_ptr(self):
            return 0

    space = tm.config_space(a.configs, a.seed, a.smem_kib)
    out = {}
    for k in [int(v) for v in a.ks.split(',')]:
        prune = heurist.triton.pruner(model, k)
        ratios, hits = [], 0
        for s, t in times.items():
            configs = [Config(c) for c in space if c in t]
            kept = prune(configs, {'a_ptr': Tensor(s[3]), 'M': s[0], 'N': s[1], 'K': s[2]})
            best, got = min(t.values()), min(t[c.c] for c in kept)
            ratios.append((best / got, s))
            hits += got == best
        worst = min(ratios)
        out[str(k)] = {'shapes': len(ratios), 'kernel_ratio_geomean': geomean([r for r, _ in ratios]),
                       'kernel_ratio_worst': worst[0], 'worst_shape': tm.key_of(worst[1]),
                       'best_in_k_share': hits / len(ratios), 'configs': len(space)}
    return out


def print_summary(report, out=sys.stdout):
    out.write('%s, torch %s, triton %s, %s: %d held-out shapes (%s), %d configurations, do_bench %g/%g ms\n' % (
        report['card'], report['torch'], report['triton'], report['date'], len(report['shapes']), report['hold'],
        report['configs'], report['bench_ms'][0], report['bench_ms'][1]))
    out.write('k  shapes  cut loaded (geomean, least)  cut disk (geomean, least)  kernel full/pruned (geomean, '
              'worst)  same pick\n')
    for k, v in report['summary'].items():
        out.write('%-2s %6d  %8.1fx %8.1fx            %8.1fx %8.1fx          %6.3f %6.3f (%s)  %5.0f%%\n' % (
            k, v['shapes'], v['cut_loaded_geomean'], v['cut_loaded_min'], v['cut_disk_geomean'], v['cut_disk_min'],
            v['kernel_ratio_geomean'], v['kernel_ratio_worst'], v['worst_shape'], 100 * v['same_pick_share']))


def arguments(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--model', help='a heurist table model trained on the Triton table')
    ap.add_argument('--table', required=True, help='the Triton table (the held-out shapes come from it)')
    ap.add_argument('--hold', required=True, help='held-out families, comma-separated')
    ap.add_argument('--count', type=int, default=12, help='held-out shapes at most')
    ap.add_argument('--ks', default='1,2,3,4')
    ap.add_argument('--configs', type=int, default=150, help='as triton_matmul.py: the same space')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--smem-kib', type=float, default=227.0)
    ap.add_argument('--bench-ms', default='25,100', help="do_bench's WARMUP,REP ms a config (Triton's default)")
    ap.add_argument('--retime', type=int, default=3)
    ap.add_argument('--compile-procs', type=int, default=0)
    ap.add_argument('--time-limit', type=float, default=0)
    ap.add_argument('--out', help='OUT.json (the GPU demonstration)')
    ap.add_argument('--offline', action='store_true',
                    help="no GPU: the pruned picks' measured times in the table against the table's best")
    return ap.parse_args(argv)


def main():
    a = arguments()
    if not a.model:
        print('triton_pruner_demo: --model is needed', file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), 'python'))
    import heurist
    import heurist.triton
    model = heurist.Model.load(a.model)
    if a.offline:
        for k, v in offline(a, model).items():
            print('k=%s: %d held-out shapes, best of the k / best of %d: geomean %.4f, worst %.4f (%s), the best '
                  'among the k on %.0f%%' % (k, v['shapes'], v['configs'], v['kernel_ratio_geomean'],
                                            v['kernel_ratio_worst'], v['worst_shape'], 100 * v['best_in_k_share']))
        return 0
    if not a.out:
        print('triton_pruner_demo: --out is needed', file=sys.stderr)
        return 2
    report = run_demo(a, lambda k: heurist.triton.pruner(model, k), lambda line: (print(line), sys.stdout.flush()))
    report['model'] = os.path.basename(a.model)
    print_summary(report)
    return 0 if report['shapes'] else 1


if __name__ == '__main__':
    sys.exit(main())
