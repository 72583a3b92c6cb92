#!/usr/bin/env python3
"""The single pick of GEMM verify reports over two or more runs of the same shapes (heurist-collect verify --table,
one report a run; columns key, model_name, model, heuristic, speedup, read by name), per model: each run's
geomean speed-up over cuBLASLt's first pick, its shares slower and faster beyond --noise and its worst; the shapes
where the pick is another configuration than the first pick; the shapes slower beyond --noise in every run (a
loss that repeats, against one that a single re-timing shows); and the runs' per-shape geometric mean of the
speed-up (one figure per shape, less of each run's timing noise) with its geomean's 95% bootstrap interval (the
shapes resampled with replacement, seeded), its slower and faster shares and its worst.

  /usr/bin/python3 experiments/gemm_pick_runs.py RUN1.tsv RUN2.tsv... [--by-dtype NAME] [--agree NAME=A,B] [--pair A,B]
(gzip-compressed reports read as they are). Two rules are read from the runtimes a report holds, as models of their
own: --by-dtype NAME, a guard per data type, takes each shape's row of the model NAME_TYPE (TYPE the shape key's
data type; NAME_default where no such model is in the report); --agree NAME=A,B keeps model A's pick where it is
cuBLASLt's first pick or model B picks the same configuration, and cuBLASLt's first pick (speed-up 1) elsewhere.
--table NAME=T.csv.gz (repeatable) sets each model's picks against a collected table's times of the same
configurations: on the shapes where the pick is not the first pick and the table holds both, the correlation of
the table's log speed-up (t_first / t_pick) with the runs' per-shape mean, their mean absolute difference, and
the shapes the table reads slower beyond --noise against those slower in every run (how well one table's times
foretell the re-timing).
--pair A,B (repeatable) compares two models of the same runs shape by shape: per run the geomean of A's speed-up
over B's (both over the same first pick, so the ratio of B's pick time to A's) with its 95% bootstrap interval,
the shares of shapes where A is slower or faster than B beyond --noise, and the same on the runs' per-shape mean
(a paired difference, narrower than the two models' separate intervals).
Python 3 standard library only."""
import argparse
import csv
import gzip
import math
import os
import sys

from verify_reports import mean_interval, read_rows

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'collect', 'scripts'))
import gemm_table_io  # noqa: E402


def read(path):
    """{model: {shape key: (speed-up, pick differs from the first pick, the pick, the first pick)}} of a report's
    rows"""
    runs = {}
    for lineno, r in read_rows(path, ('key', 'model_name', 'model', 'heuristic', 'speedup'), 'a GEMM verify report'):
        try:
            s = float(r['speedup'])
        except ValueError:
            sys.exit('%s:%d: speedup %r is not a number' % (path, lineno, r['speedup']))
        if not s > 0:
            sys.exit('%s:%d: speedup %r is not positive' % (path, lineno, r['speedup']))
        runs.setdefault(r['model_name'], {})[r['key']] = (s, r['model'] != r['heuristic'], r['model'], r['heuristic'])
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
    return {k: r if not r[1] or (k in run[b] and run[b][k][2] == r[2]) else (1.0, False, r[3], r[3])
            for k, r in run[a].items()}


def geomean_interval(x, resamples, seed):
    """The geometric mean of x and its 95% bootstrap interval (the mean of the logs resampled)."""
    logs = [math.log(v) for v in x]
    lo, hi = mean_interval(logs, resamples, seed)
    return math.exp(sum(logs) / len(logs)), math.exp(lo), math.exp(hi)


CONFIG = gemm_table_io.KERNEL


def read_table(path):
    """{shape key: {configuration: time_us}} of a GEMM table, spelt as a verify report spells them."""
    times = {}
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        for n, r in enumerate(csv.DictReader(f), 2):
            try:
                key = ','.join([r[c] for c in ('M', 'N', 'K', 'dtype', 'trans_a', 'trans_b')] +
                               ([r['batch']] if r.get('batch', '1') != '1' else []))
                cfg = ','.join('%s=%s' % (c, r[c]) for c in CONFIG)
                times.setdefault(key, {})[cfg] = float(r['time_us'])
            except (KeyError, TypeError, ValueError):
                sys.exit('%s:%d: not a row of a GEMM table' % (path, n))
    return times


def against_table(runs, model, keys, times, noise):
    """(shapes, correlation, mean |log difference|, table slower, slower in every run, both) of a model's picks
    other than the first pick, the table's log speed-up against the runs' per-shape mean."""
    xs, ys, table_slow, run_slow, both = [], [], 0, 0, 0
    for k in keys:
        rows = [r[model][k] for r in runs]
        pick, first = rows[0][2], rows[0][3]
        if not rows[0][1] or k not in times or pick not in times[k] or first not in times[k]:
            continue
        x = math.log(times[k][first] / times[k][pick])
        xs.append(x)
        ys.append(sum(math.log(r[0]) for r in rows) / len(rows))
        slow = [x < -math.log(noise), all(r[0] < 1 / noise for r in rows)]
        table_slow += slow[0]
        run_slow += slow[1]
        both += slow[0] and slow[1]
    if len(xs) < 2:
        return len(xs), math.nan, math.nan, table_slow, run_slow, both
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    vx, vy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    corr = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(vx * vy) if vx > 0 and vy > 0 else math.nan
    return (len(xs), corr, sum(abs(x - y) for x, y in zip(xs, ys)) / len(xs), table_slow, run_slow, both)


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
    ap.add_argument('--table', action='append', default=[], metavar='NAME=T.csv.gz',
                    help='a collected table whose times of the picks are set against the runs')
    ap.add_argument('--pair', action='append', default=[], metavar='A,B',
                    help='model A against model B shape by shape: the geomean of A\'s speed-up over B\'s')
    a = ap.parse_args()
    pairs = []
    for spec in a.pair:
        models = spec.split(',')
        if len(models) != 2 or not all(models):
            sys.exit('--pair %s: expected A,B' % spec)
        pairs.append(models)
    tables = []
    for spec in a.table:
        name, sep, path = spec.partition('=')
        if not sep or not name or not path:
            sys.exit('--table %s: expected NAME=T.csv.gz' % spec)
        tables.append((name, read_table(path)))
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
        for name, times in tables:
            n, corr, diff, ts, rs, both = against_table(runs, model, keys, times, a.noise)
            print('  against table %s (%d shapes of another pick that it holds): correlation of the log speed-ups '
                  '%.3f, mean |log difference| %.4f; slower beyond x%g in the table %d, in every run %d, both %d' %
                  (name, n, corr, diff, a.noise, ts, rs, both))
    for m_a, m_b in pairs:
        for m in (m_a, m_b):
            if any(m not in r for r in runs):
                sys.exit('gemm_pick_runs.py: --pair: model %s is not in every report' % m)
        keys = [k for k in runs[0][m_a] if all(k in r[m_a] and k in r[m_b] for r in runs)]
        print('pair %s over %s: %d shapes in all %d runs' % (m_a, m_b, len(keys), len(runs)))
        ratios = [[r[m_a][k][0] / r[m_b][k][0] for k in keys] for r in runs]
        mean = [math.exp(sum(math.log(x[i]) for x in ratios) / len(ratios)) for i in range(len(keys))]
        rows = [('run %d' % (i + 1), x) for i, x in enumerate(ratios)] + [('per-shape mean of the runs', mean)]
        for label, x in rows:
            g, lo, hi = geomean_interval(x, a.resamples, a.seed)
            print('  %s: ratio %.4f (%.4f-%.4f), %s slower beyond x%g on %.4f, faster on %.4f, worst %.3f, best '
                  '%.3f' % (label, g, lo, hi, m_a, a.noise, sum(v < 1 / a.noise for v in x) / len(x),
                            sum(v > a.noise for v in x) / len(x), min(x), max(x)))


if __name__ == '__main__':
    main()
