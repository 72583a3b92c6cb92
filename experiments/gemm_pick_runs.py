#!/usr/bin/env python3
"""The single pick of GEMM verify reports over two or more runs of the same shapes (heurist-collect verify --table,
one report a run; columns key, model_name, model, heuristic, speedup, read by name), per model: each run's
geomean speed-up over cuBLASLt's first pick, its shares slower and faster beyond --noise and its worst; the shapes
where the pick is another configuration than the first pick; the shapes slower beyond --noise in every run (a
loss that repeats, against one that a single re-timing shows); and the runs' per-shape geometric mean of the
speed-up (one figure per shape, less of each run's timing noise) with its geomean's 95% bootstrap interval (the
shapes resampled with replacement, seeded), its slower and faster shares and its worst.

  /usr/bin/python3 experiments/gemm_pick_runs.py RUN1.tsv RUN2.tsv... [--by-dtype NAME] [--agree NAME=A,B]
(gzip-compressed reports read as they are). Two rules are read from the runtimes a report holds, as models of their
own: --by-dtype NAME, a guard per data type, takes each shape's row of the model NAME_TYPE (TYPE the shape key's
data type; NAME_default where no such model is in the report); --agree NAME=A,B keeps model A's pick where it is
cuBLASLt's first pick or model B picks the same configuration, and cuBLASLt's first pick (speed-up 1) elsewhere.
Python 3 standard library only."""
import argparse
import math
import sys

from verify_reports import mean_interval, read_rows


def read(path):
    """{model: {shape key: (speed-up, pick differs from the first pick, the pick)}} of a report's rows"""
    runs = {}
    for lineno, r in read_rows(path, ('key', 'model_name', 'model', 'heuristic', 'speedup'), 'a GEMM verify report'):
        try:
            s = float(r['speedup'])
        except ValueError:
            sys.exit('%s:%d: speedup %r is not a number' % (path, lineno, r['speedup']))
        if not s > 0:
            sys.exit('%s:%d: speedup %r is not positive' % (path, lineno, r['speedup']))
        runs.setdefault(r['model_name'], {})[r['key']] = (s, r['model'] != r['heuristic'], r['model'])
    return runs


def by_dtype(run, name):
    """The rows of the per-dtype rule NAME: each shape's row of NAME_TYPE, else NAME_default."""
    shapes = {k for m, rows in run.items() if m.startswith(name + '_') for k in rows}
    out = {}
    for k in shapes:
        t = k.split(',')[3]
        model = name + '_' + t if name + '_' + t in run else name + '_default'
        if k not in run.get(model, {}):
            sys.exit('gemm_pick_runs.py: --by-dtype %s: no model %s_%s or %s_default with shape %s' %
                     (name, name, t, name, k))
        out[k] = run[model][k]
    return out


def agree(run, a, b):
    """A's rows where its pick is the first pick or B's pick, the first pick's (speed-up 1) elsewhere."""
    for m in (a, b):
        if m not in run:
            sys.exit('gemm_pick_runs.py: --agree: model %s is not in the report' % m)
    return {k: r if not r[1] or (k in run[b] and run[b][k][2] == r[2]) else (1.0, False, '')
            for k, r in run[a].items()}


def geomean_interval(x, resamples, seed):
    """The geometric mean of x and its 95% bootstrap interval (the mean of the logs resampled)."""
    logs = [math.log(v) for v in x]
    lo, hi = mean_interval(logs, resamples, seed)
    return math.exp(sum(logs) / len(logs)), math.exp(lo), math.exp(hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('reports', nargs='+')
    ap.add_argument('--noise', type=float, default=1.02)
    ap.add_argument('--resamples', type=int, default=2000)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--by-dtype', action='append', default=[], metavar='NAME',
                    help='the rule of a guard per data type from the models NAME_TYPE')
    ap.add_argument('--agree', action='append', default=[], metavar='NAME=A,B',
                    help='the rule: model A\'s pick where model B picks the same, else the first pick')
    a = ap.parse_args()
    if len(a.reports) < 2:
        sys.exit('gemm_pick_runs.py: give two reports or more (the same shapes verified in separate runs)')
    runs = [read(p) for p in a.reports]
    for r in runs:
        for name in a.by_dtype:
            r[name] = by_dtype(r, name)
        for spec in a.agree:
            name, sep, pair = spec.partition('=')
            models = pair.split(',')
            if not sep or len(models) != 2:
                sys.exit('--agree %s: expected NAME=A,B' % spec)
            r[name] = agree(r, *models)
    for model in runs[0]:
        if any(model not in r for r in runs):
            sys.exit('gemm_pick_runs.py: model %s is not in every report' % model)
        keys = [k for k in runs[0][model] if all(k in r[model] for r in runs)]
        print('model %s: %d shapes in all %d runs' % (model, len(keys), len(runs)))
        for i, r in enumerate(runs, 1):
            s = [r[model][k][0] for k in keys]
            g, lo, hi = geomean_interval(s, a.resamples, a.seed)
            moved = sum(r[model][k][1] for k in keys) / len(keys)
            print('  run %d: speed-up %.4f (%.4f-%.4f) slower %.4f faster %.4f worst %.3f; another pick than '
                  'the first on %.4f' % (i, g, lo, hi, sum(x < 1 / a.noise for x in s) / len(s),
                                         sum(x > a.noise for x in s) / len(s), min(s), moved))
        every = sum(all(r[model][k][0] < 1 / a.noise for r in runs) for k in keys) / len(keys)
        mean = [math.exp(sum(math.log(r[model][k][0]) for r in runs) / len(runs)) for k in keys]
        g, lo, hi = geomean_interval(mean, a.resamples, a.seed)
        print('  slower in every run %.4f; per-shape mean of the runs: speed-up %.4f (%.4f-%.4f) slower %.4f '
              'faster %.4f worst %.3f' % (every, g, lo, hi, sum(x < 1 / a.noise for x in mean) / len(mean),
                                          sum(x > a.noise for x in mean) / len(mean), min(mean)))


if __name__ == '__main__':
    main()
