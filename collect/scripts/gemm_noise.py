#!/usr/bin/env python3
"""Run-to-run noise of a cuBLASLt GEMM table: a second collection of a prefix of the shapes (same seed, so the
same candidates) against the first. Times of candidates within 5x of their shape's best (the ones timed by
repeats) are compared per configuration, and the best time and fastest configuration per shape. The noise
ceiling: the first run's fastest configuration timed by the second (what a model that always picked a table's
best would reach when re-timed), its efficiency against the second run's best and the share of shapes where it
is slower than that best beyond x1.02. The single-pick ceiling: the first run's fastest among cuBLASLt's first N
candidates (N = 2, 3, 4, 8, and among all of the table's), timed by the second run, as a speed-up over the
second run's time of cuBLASLt's first pick (geometric mean and worst): what a model that knew the first run's
times would gain over the first pick, re-timed.

  python3 collect/scripts/gemm_noise.py datasets/h100/h100_cublaslt_gemm.csv.gz datasets/h100/h100_cublaslt_gemm.noise.csv.gz
  python3 collect/scripts/gemm_noise.py A.csv.gz B.csv.gz --groups TABLE.csv.gz --only llama3,mistral,resnet50

--groups TABLE: a table of the same shapes with a `family` column (the column --group-column names) that tags
each shape; --only keeps the shapes of those families (the held-out ones, say). Python 3 standard library only."""
import argparse
import csv
import gzip
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_table_io  # noqa: E402

SHAPE = ('M', 'N', 'K', 'dtype', 'trans_a', 'trans_b')  # and the batch, '1' in a table without the column
CONFIG = gemm_table_io.KERNEL
TOPS = (2, 3, 4, 8, None)


def load(path):
    """{shape: {configuration: (time, cuBLASLt's rank or None)}}."""
    d = {}
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        for r in csv.DictReader(f):
            shape = tuple(r[c] for c in SHAPE) + (r.get('batch', '1'),)
            rank = r.get('heuristic_rank', '')
            d.setdefault(shape, {})[tuple(r[c] for c in CONFIG)] = (float(r['time_us']), int(rank) if rank else None)
    return d


def groups_of(path, column):
    """{shape: its value of column} of a table."""
    g = {}
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        for r in csv.DictReader(f):
            if column not in r:
                sys.exit('%s:1: no column %s' % (path, column))
            g[tuple(r[c] for c in SHAPE) + (r.get('batch', '1'),)] = r[column]
    return g


def first_pick(cfgs):
    return next((c for c, (_, rank) in cfgs.items() if rank == 0), None)


def fastest(cfgs, top):
    """The fastest configuration among cuBLASLt's first `top` (all of them when top is None)."""
    pool = [c for c, (_, rank) in cfgs.items() if top is None or (rank is not None and rank < top)]
    return min(pool, key=lambda c: cfgs[c][0]) if pool else None


def single_pick_ceiling(a, b, top):
    """(geometric-mean speed-up, worst, shapes) over the second run's first pick of the first run's fastest among
    cuBLASLt's first `top`, both timed by the second run."""
    logs = []
    for s, cb in b.items():
        ca = a.get(s)
        f = first_pick(cb)
        if not ca or f is None or first_pick(ca) != f:
            continue
        c = fastest(ca, top)
        if c is None or c not in cb:
            continue
        logs.append(math.log(cb[f][0] / cb[c][0]))
    if not logs:
        return float('nan'), float('nan'), 0
    return math.exp(sum(logs) / len(logs)), math.exp(min(logs)), len(logs)


def q(v, p):
    v = sorted(v)
    return v[int(p * (len(v) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('first')
    ap.add_argument('second')
    ap.add_argument('--groups', help='a table of the same shapes with a group column')
    ap.add_argument('--group-column', default='family')
    ap.add_argument('--only', help='comma-separated groups whose shapes are kept')
    o = ap.parse_args()
    if o.only and not o.groups:
        ap.error('--only needs --groups')
    a, b = load(o.first), load(o.second)
    if o.only:
        g, keep = groups_of(o.groups, o.group_column), set(o.only.split(','))
        b = {s: c for s, c in b.items() if g.get(s) in keep}
        if not b:
            sys.exit('%s: no shape of %s' % (o.groups, o.only))
    missing = [s for s in b if s not in a]
    if missing:
        sys.exit('%s: shape %s is not in %s' % (o.second, ','.join(missing[0]), o.first))
    ratios, best_ratio, same_best, common = [], [], 0, 0
    for s, cb in b.items():
        ca = a[s]
        ks = set(ca) & set(cb)
        common += len(ks)
        ba, bb = min(t for t, _ in ca.values()), min(t for t, _ in cb.values())
        # only the candidates timed by repeats (within 5x of the best) have median times
        ratios += [cb[k][0] / ca[k][0] for k in ks if ca[k][0] < 5 * ba and cb[k][0] < 5 * bb]
        best_ratio.append(bb / ba)
        same_best += fastest(ca, None) == fastest(cb, None)
    print('shapes', len(b), 'common configurations', common, 'of', sum(len(v) for v in b.values()))
    print('per-configuration time ratio run2/run1 p10 %.3f p50 %.3f p90 %.3f' % (q(ratios, .1), q(ratios, .5),
                                                                                 q(ratios, .9)))
    print('best time ratio p10 %.3f p50 %.3f p90 %.3f; same fastest configuration %.3f' % (
        q(best_ratio, .1), q(best_ratio, .5), q(best_ratio, .9), same_best / len(b)))
    r90 = q([max(x, 1 / x) for x in best_ratio], .9)
    print('90%% of shapes: best time moved by less than x%.4f' % r90)
    # the heuristic's own pick timed twice: what "slower beyond x1.02" reads for a model that picks the same
    moved = [b[s][first_pick(b[s])][0] / a[s][first_pick(a[s])][0] for s in b
             if first_pick(b[s]) is not None and first_pick(a[s]) == first_pick(b[s])]
    if moved:
        print('the heuristic\'s first pick timed twice (%d shapes where it is the same configuration): slower beyond '
              'x1.02 on %.1f%%, faster on %.1f%%' % (len(moved), 100.0 * sum(m > 1.02 for m in moved) / len(moved),
                                                   100.0 * sum(m < 1 / 1.02 for m in moved) / len(moved)))
    # the noise ceiling: run 1's best configuration re-timed in run 2, against run 2's best
    ceiling = [min(t for t, _ in b[s].values()) / b[s][fastest(a[s], None)][0] for s in b
               if fastest(a[s], None) in b[s]]
    print('noise ceiling: the first run\'s best re-timed reaches efficiency mean %.4f (p10 %.4f), slower than the '
          'second run\'s best beyond x1.02 on %.1f%% of shapes' % (sum(ceiling) / len(ceiling), q(ceiling, .1),
                                                                  100.0 * sum(c < 1 / 1.02 for c in ceiling) / len(ceiling)))
    parts = []
    for top in TOPS:
        g, worst, n = single_pick_ceiling(a, b, top)
        parts.append('%s x%.4f (worst %.3f)' % ('table' if top is None else 'first %d' % top, g, worst))
    print('single-pick ceiling over cuBLASLt\'s first pick, the first run\'s fastest re-timed by the second '
          '(%d shapes): %s' % (n, ', '.join(parts)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
