#!/usr/bin/env python3
"""Offline figures of exported GEMM table models (heurist export --format c) on a held-out table, per shape, as
heurist-collect verify decides on the GPU but with the table's times: each runtime (compiled here into a shared
library and called through ctypes with the values collect/gemm_read.c's collect_gemm_model_values gives it, the
table's heuristic_rank as the vendor's list) scores every candidate of each shape.

  score:   python3 collect/scripts/gemm_offline.py score --runtime DIR --table HELD.csv.gz --out SCORES.tsv
           one row per candidate: shape, family, the candidate's index, time_us, heuristic_rank, score
  report:  python3 collect/scripts/gemm_offline.py report SCORES.tsv... [--guard M] [--guard-top N]
                 [--calibrate CALIB.tsv...] [--families F1,F2]
           per scores file (its shapes pooled with the files given together; `+` joins files into one set):
           the single pick against cuBLASLt's first pick (speed-up geomean with a bootstrap 95% interval, shares
           slower and faster beyond x1.02, worst, efficiency against the table's best), the vendor guard
           (data/portable.h's rule) at --guard M / --guard-top N, and the shortlists of at most 3 timings
           (below), each the fastest of its candidates by the table's times.
           --calibrate: M and N chosen on other scores (the training families' out-of-fold scores), each grid
           point's figures there, and the chosen rule applied to the scores reported.
           --classes SHAPES: the figures again per class of the shape list's tags (gemm_table_io.shape_classes:
           attention, moe_batched, fp8, other).

Shortlists (efficiency = best / fastest of the set; timings = the set's size):
  top-k        the model's k best;
  top-k+fp     the model's k best and cuBLASLt's first pick (verify --top-k k: k or k+1 timings);
  top-K-1+fp/K cuBLASLt's first pick and the model's K - 1 best other candidates (verify --shortlist-fill: K);
  div-algo-3   the model's 3 best of distinct algo_id; div-tile-3: of distinct (tile_m, tile_n);
  fp+top-2-div the first pick and the model's 2 best of an algo_id or tile other than the first pick's.
Python 3 standard library only; cc builds the runtimes."""
import argparse
import ctypes
import gzip
import math
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_table_io  # noqa: E402

PROBLEM = ('M', 'N', 'K', 'dtype', 'trans_a', 'trans_b')
KERNEL = gemm_table_io.KERNEL
CATEGORICAL = {'dtype', 'trans_a', 'trans_b', 'algo_id', 'reduction_scheme', 'inner_shape'}
UNLISTED = 1024  # collect/gemm.h COLLECT_GEMM_UNLISTED
NOISE = 1.02     # eval.h EVAL_NOISE_RATIO


def load_table(path):
    """shape key -> (family, [(values dict, time_us, heuristic_rank)]) in the table's row order"""
    shapes = {}
    with gzip.open(path, 'rt') as f:
        cols = f.readline().rstrip('\r\n').split(',')
        for n, line in enumerate(f, 2):
            v = dict(zip(cols, line.rstrip('\r\n').split(',')))
            v.setdefault('batch', '1')  # a table without the batch column: single GEMMs
            try:
                t = float(v['time_us'])
            except (KeyError, ValueError):
                sys.exit('%s:%d: no time_us' % (path, n))
            key = 'x'.join([v[c] for c in PROBLEM] + ([v['batch']] if v.get('batch', '1') != '1' else []))
            rank = int(v['heuristic_rank']) if v.get('heuristic_rank', '') != '' else -1
            shapes.setdefault(key, (v.get('family', '-'), []))[1].append((v, t, rank))
    return shapes


def load_runtime(folder, build):
    hs = [f for f in os.listdir(folder) if f.endswith('.h')]
    if len(hs) != 1:
        sys.exit('%s: expected the one header of an exported runtime' % folder)
    prefix = hs[0][:-2]
    so = os.path.join(build, prefix + '.so')
    subprocess.check_call(['cc', '-O2', '-std=c11', '-shared', '-fPIC', '-o', so, os.path.join(folder, prefix + '.c'),
                           '-lm'])
    lib = ctypes.CDLL(so)
    for name, res in (('problem_column', ctypes.c_char_p), ('kernel_column', ctypes.c_char_p)):
        getattr(lib, prefix + '_' + name).restype = res
    getattr(lib, prefix + '_category').restype = ctypes.c_double
    getattr(lib, prefix + '_category').argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    with open(os.path.join(folder, hs[0])) as f:
        text = f.read()
    up = prefix.upper()
    n_problem = int(text.split('#define %s_N_PROBLEM ' % up)[1].split()[0])
    n_kernel = int(text.split('#define %s_N_KERNEL ' % up)[1].split()[0])
    pcols = [getattr(lib, prefix + '_problem_column')(j).decode() for j in range(n_problem)]
    kcols = [getattr(lib, prefix + '_kernel_column')(j).decode() for j in range(n_kernel)]
    return prefix, lib, pcols, kcols


def score(a):
    shapes = load_table(a.table)
    with tempfile.TemporaryDirectory() as build:
        prefix, lib, pcols, kcols = load_runtime(a.runtime, build)
        cat = getattr(lib, prefix + '_category')
        rank = getattr(lib, prefix + '_rank')

        def value(col, text):
            return cat(col.encode(), text.encode()) if col in CATEGORICAL else float(text)
        tmp = a.out + '.tmp'
        with open(tmp, 'w') as out:
            out.write('shape\tfamily\tcandidate\ttime_us\theuristic_rank\tscore\n')
            for key, (family, rows) in shapes.items():
                n = len(rows)
                pv = (ctypes.c_double * len(pcols))(*[value(c, rows[0][0][c]) for c in pcols])
                kv = (ctypes.c_double * (n * len(kcols)))()
                for i, (v, t, r) in enumerate(rows):
                    for j, c in enumerate(kcols):
                        kv[i * len(kcols) + j] = (r if r >= 0 else UNLISTED) if c == 'vendor_rank' else value(c, v[c])
                sc = (ctypes.c_float * n)()
                if rank(pv, kv, n, sc, None):
                    sys.exit('%s: %s_rank failed' % (key, prefix))
                for i, (v, t, r) in enumerate(rows):
                    out.write('%s\t%s\t%d\t%.6g\t%d\t%.9g\n' % (key, family, i, t, r, sc[i]))
        os.replace(tmp, a.out)
    print('%s: %d shapes scored by %s' % (a.out, len(shapes), prefix))


def load_scores(paths):
    """shape -> dict(family, t (n), rank (n), score (n), cfg (n) as (algo_id, tile) pairs when known)"""
    shapes = {}
    for p in paths:
        with open(p) as f:
            f.readline()
            for line in f:
                key, family, i, t, r, s = line.rstrip('\n').split('\t')
                d = shapes.setdefault(key, {'family': family, 't': [], 'rank': [], 'score': []})
                d['t'].append(float(t))
                d['rank'].append(int(r))
                d['score'].append(float(s))
    return shapes


def guard(scores, rank, top, margin):
    """data/portable.h's data_portable_guard: the pick under the guard (scores updated as the rule does)"""
    s = list(scores)
    vendor = next((k for k, r in enumerate(rank) if r == 0), -1)
    if vendor >= 0 and top > 0:
        s = [x if 0 <= rank[k] < top else -math.inf for k, x in enumerate(s)]
    best = max(range(len(s)), key=lambda k: (s[k], -k))
    if not margin > 0 or vendor < 0 or not math.isfinite(s[vendor]) or best == vendor:
        return best, s
    if s[best] - s[vendor] >= margin:
        return best, s
    s[vendor] = math.nextafter(s[best], math.inf) if hasattr(math, 'nextafter') else s[best] + 1e-6
    return vendor, s


def order(s):
    return sorted(range(len(s)), key=lambda k: (-s[k], k))


def pick_figures(shapes, top=0, margin=0.0):
    sp, eff = [], []
    for d in shapes.values():
        t = d['t']
        fp = d['rank'].index(0) if 0 in d['rank'] else None
        if fp is None:
            continue
        p, _ = guard(d['score'], d['rank'], top, margin)
        sp.append(t[fp] / t[p])
        eff.append(min(t) / t[p])
    return sp, eff


def summary(sp, eff, seed=0):
    n = len(sp)
    logs = [math.log(x) for x in sp]
    g = math.exp(sum(logs) / n)
    rng = random.Random(seed)
    boots = sorted(math.exp(sum(logs[rng.randrange(n)] for _ in range(n)) / n) for _ in range(1000))
    return {'n': n, 'geomean': g, 'lo': boots[25], 'hi': boots[974], 'slower': sum(x < 1 / NOISE for x in sp) / n,
            'faster': sum(x > NOISE for x in sp) / n, 'worst': min(sp), 'eff': sum(eff) / n}


def shortlists(shapes, cfgs, top=0, margin=0.0):
    """efficiency mean and timings mean of each shortlist rule"""
    rules = {}

    def add(name, d, s):
        r = rules.setdefault(name, [0.0, 0, 0])
        r[0] += min(d['t']) / min(d['t'][k] for k in s)
        r[1] += len(s)
        r[2] += 1
    for key, d in shapes.items():
        if 0 not in d['rank']:
            continue
        fp = d['rank'].index(0)
        _, s = guard(d['score'], d['rank'], top, margin)
        o = order(s)
        cf = cfgs.get(key)
        for k in (1, 2, 3):
            add('top-%d' % k, d, set(o[:k]))
        for k in (1, 2):
            add('top-%d+fp' % k, d, set(o[:k]) | {fp})
        # verify --shortlist-fill: the first pick and the model's K - 1 best others, K timings in all
        add('top-1+fp/2', d, {fp} | set([k for k in o if k != fp][:1]))
        add('top-2+fp/3', d, {fp} | set([k for k in o if k != fp][:2]))
        if cf:
            for name, field in (('div-algo-3', lambda k: cf[k][0]), ('div-tile-3', lambda k: cf[k][1])):
                chosen, seen = [], set()
                for k in o:
                    if field(k) not in seen:
                        chosen.append(k)
                        seen.add(field(k))
                    if len(chosen) == 3:
                        break
                add(name, d, set(chosen))
            other = [k for k in o if k != fp and (cf[k][0] != cf[fp][0] or cf[k][1] != cf[fp][1])][:2]
            add('fp+top-2-div', d, {fp} | set(other))
        vl = sorted((r, k) for k, r in enumerate(d['rank']) if r >= 0)
        for k in (1, 2, 3):
            add('vendor-first-%d' % k, d, {x for _, x in vl[:k]})
        add('vendor-list', d, {x for _, x in vl})
    return {n: (r[0] / r[2], r[1] / r[2]) for n, r in rules.items()}


def table_cfgs(paths):
    """shape -> [(algo_id, (tile_m, tile_n))] per candidate, from the tables the scores came from"""
    cfgs = {}
    for p in paths:
        for key, (family, rows) in load_table(p).items():
            cfgs[key] = [(v['algo_id'], (v['tile_m'], v['tile_n'])) for v, t, r in rows]
    return cfgs


GUARD_TOPS = (0, 2, 3, 4)  # the calibration grid's N: any, then cuBLASLt's first 2, 3, 4


def margin_grid(shapes):
    """The calibration grid's margins: 0 and the deciles of the positive gaps between the model's best score and
    the first pick's (shapes without a first pick left out); [0.0] where the model never scores another higher."""
    gaps = sorted(max(d['score']) - d['score'][d['rank'].index(0)] for d in shapes.values()
                  if 0 in d['rank'] and max(d['score']) > d['score'][d['rank'].index(0)])
    if not gaps:
        return [0.0]
    return [0.0] + [gaps[int(q * (len(gaps) - 1))] for q in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]


def calibrate(shapes):
    """the guard (top, margin) of the best geomean among those no worse than the unguarded pick on the slower share
    and the worst ratio, over a grid of margins at quantiles of the positive score gaps"""
    rows = []
    for top in GUARD_TOPS:
        for m in margin_grid(shapes):
            s = summary(*pick_figures(shapes, top, m))
            rows.append((top, m, s))
    return rows


def choose(rows):
    """The (point, summary) the calibration rule takes from rows of them: the best geomean among the points slower
    beyond x1.02 on at most 2% of the shapes; where none is, the smallest slower share among those of geomean >=
    1.01; else the best geomean. The first of equal points wins."""
    meet = [r for r in rows if r[1]['slower'] <= 0.02]
    half = [r for r in rows if r[1]['geomean'] >= 1.01]
    if meet:
        return max(meet, key=lambda r: r[1]['geomean'])
    if half:
        return min(half, key=lambda r: (r[1]['slower'], -r[1]['geomean']))
    return max(rows, key=lambda r: r[1]['geomean'])


def report(a):
    cfgs = table_cfgs(a.tables) if a.tables else {}
    fams = set(a.families.split(',')) if a.families else None
    chosen = (a.guard_top, a.guard)
    if a.calibrate:
        cal = load_scores(a.calibrate)
        rows = calibrate(cal)
        base = next(s for t, m, s in rows if t == 0 and m == 0)
        print('calibration on %s (%d shapes): guard-top, margin, speed-up, slower, faster, worst, eff' %
              (','.join(a.calibrate), base['n']))
        for t, m, s in rows:
            print('  %d %.4g %.4f %.4f %.4f %.3f %.4f' % (t, m, s['geomean'], s['slower'], s['faster'], s['worst'],
                                                      s['eff']))
        (t, m), s = choose([((t, m), s) for t, m, s in rows])
        chosen = (t, m)
        print('chosen on the calibration scores: --guard-top %d --guard %.6g (slower %.4f, geomean %.4f)' %
              (t, m, s['slower'], s['geomean']))
    classes = gemm_table_io.shape_classes(a.classes) if a.classes else None
    for group in a.scores:
        paths = group.split('+')
        shapes = load_scores(paths)
        if fams:
            shapes = {k: d for k, d in shapes.items() if d['family'] in fams}
        report_scores(group, shapes, cfgs, chosen)
        if classes is not None:
            by = {}
            for k, d in shapes.items():
                f = k.split('x')
                by.setdefault(classes.get(tuple(f[:6]) + (f[6] if len(f) > 6 else '1',), 'unlisted'), {})[k] = d
            for c in sorted(by):
                report_scores('%s, %s' % (group, c), by[c], cfgs, chosen)


def report_scores(group, shapes, cfgs, chosen):
    """The single pick (and the guarded one), then the shortlists, of one set of scored shapes."""
    for label, (t, m) in (('single pick', (0, 0.0)), ('guarded (top %d, M %.4g)' % chosen, chosen)):
        if label.startswith('guarded') and chosen == (0, 0.0):
            continue
        s = summary(*pick_figures(shapes, t, m))
        print('%s [%s]: n %d speed-up %.4f (%.4f-%.4f) slower %.4f faster %.4f worst %.3f eff %.4f' %
              (group, label, s['n'], s['geomean'], s['lo'], s['hi'], s['slower'], s['faster'], s['worst'], s['eff']))
    sl = shortlists(shapes, cfgs)
    print('%s shortlists (eff, timings): %s' % (group, ', '.join('%s %.4f/%.2f' % (n, e, c) for n, (e, c) in sl.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('score')
    s.add_argument('--runtime', required=True)
    s.add_argument('--table', required=True)
    s.add_argument('--out', required=True)
    r = sub.add_parser('report')
    r.add_argument('scores', nargs='+')
    r.add_argument('--tables', nargs='*', default=[], help='the held-out tables, for the diversity shortlists')
    r.add_argument('--guard', type=float, default=0.0)
    r.add_argument('--guard-top', type=int, default=0)
    r.add_argument('--calibrate', nargs='*', default=[])
    r.add_argument('--families')
    r.add_argument('--classes', help='a shape list: the figures per class of its tags as well')
    a = ap.parse_args()
    score(a) if a.cmd == 'score' else report(a)


if __name__ == '__main__':
    main()
