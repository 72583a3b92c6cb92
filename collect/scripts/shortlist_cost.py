#!/usr/bin/env python3
"""The cost of verify's shortlists against cudnnFind's, from convolution verify reports (heurist-collect verify
--top-k K --find-cost; Python 3 standard library only).

    python3 collect/scripts/shortlist_cost.py REPORT.tsv [MORE.tsv ...] [--first N] [--by-key] [--costliest N]
                                              [--by best|dir|dtype|class|dims|groups] [--bootstrap B] [--seed S]

Per report and model (its model's shortlist, then cuDNN's first K as `vendor`): the problems, the shortlist's
efficiency against the fresh best (mean of t_best / t_topk) and its worst problem's, the cost summed over the
problems as a share of cudnnFind's (sum topk_ms / sum find_ms) and the median per-problem share, each with a 95%
bootstrap interval (problems drawn with replacement, seeded), the p90 and worst per-problem share, and the problem
whose shortlist cost most (--costliest N: the N costliest, each with its cost, cudnnFind's and its best kernel's
time). With several reports, only the problems every report holds at the same place are counted (the first N of a
list that one run finished and another stopped early on), or with --by-key the problems every report holds
whatever their place (a run over a subset of another's list), so that their figures compare on the same
problems; --first N keeps fewer. --by SLICE adds the figures per slice of the problems (best: the fresh best
kernel's time, < 20 us, 20-50 us, 50-200 us, 0.2-1 ms, >= 1 ms; dir, dtype, dims 2d / 3d and groups dense / grouped
/ depthwise from the key; class: the report's precision column) with the mean and median cost and cudnnFind's
time, so that two sets' shares can be compared where their problems differ.
"""
import argparse
import csv
import gzip
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sample_problems  # noqa: E402  (the key parser)


def read_tsv(path):
    """A verify report's (or any tab-separated table's) rows as dicts, gzip read by the name's .gz, '#' lines
    skipped."""
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt', newline='') as f:
        lines = [line for line in f if not line.startswith('#')]
    return list(csv.DictReader(lines, delimiter='\t'))


def read_report(path):
    """{model: [row, ...]} in the report's order; '#' lines skipped; rows without a timed shortlist or cudnnFind
    refused, naming the line."""
    out = {}
    for n, row in enumerate(read_tsv(path), start=2):
        try:
            r = {'key': row['key'], 'best': float(row['t_best_ms']), 'find': float(row['find_ms']),
                 'topk': float(row['topk_ms']), 't_topk': float(row['t_topk_ms']),
                 'vtopk': float(row['vendor_topk_ms']), 't_vtopk': float(row['t_vendor_topk_ms']),
                 'precision': row.get('precision') or '-'}
        except (KeyError, TypeError, ValueError):
            raise SystemExit(f'{path}: line {n}: no shortlist cost or cudnnFind time (verify --top-k K --find-cost)')
        out.setdefault(row['model_name'], []).append(r)
    return out


def quantile(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def figures(rows, cost, t, boot, seed):
    """Efficiency and cost share of one shortlist (cost, t: its columns) over rows."""
    share = [r[cost] / r['find'] for r in rows]
    total = sum(r[cost] for r in rows) / sum(r['find'] for r in rows)
    rng = random.Random(seed)
    draws, medians = [], []
    for _ in range(boot):
        pick = [rng.randrange(len(rows)) for _ in rows]
        draws.append(sum(rows[i][cost] for i in pick) / sum(rows[i]['find'] for i in pick))
        medians.append(quantile([share[i] for i in pick], 0.5))
    draws.sort()
    medians.sort()
    worst = max(rows, key=lambda r: r[cost])
    median = quantile(share, 0.5)
    return {'eff': sum(r['best'] / r[t] for r in rows) / len(rows), 'eff_worst': min(r['best'] / r[t] for r in rows),
            'total': total,
            'lo': draws[int(0.025 * boot)] if boot else total, 'hi': draws[int(0.975 * boot) - 1] if boot else total,
            'median': median, 'med_lo': medians[int(0.025 * boot)] if boot else median,
            'med_hi': medians[int(0.975 * boot) - 1] if boot else median,
            'p90': quantile(share, 0.9), 'worst_share': max(share),
            'cost_ms': sum(r[cost] for r in rows) / len(rows), 'find_ms': sum(r['find'] for r in rows) / len(rows),
            'worst': worst}


BEST_EDGES_MS = ((0.02, '<20us'), (0.05, '20-50us'), (0.2, '50-200us'), (1.0, '0.2-1ms'), (float('inf'), '>=1ms'))
SLICES = ('best', 'dir', 'dtype', 'class', 'dims', 'groups')


def slice_of(r, by):
    """The problem's value of one slice; a field the key does not hold reads '?'."""
    if by == 'best':
        return next(name for edge, name in BEST_EDGES_MS if r['best'] < edge)
    if by == 'class':
        return r['precision']
    if by in ('dims', 'groups'):
        g = sample_problems.parse(r['key'])
        if g is None:
            return '?'
        nd, cin, groups = g[0], g[1], g[-1]
        if by == 'dims':
            return '3d' if nd == 3 else '2d'
        return 'dense' if groups == 1 else 'depthwise' if groups == cin else 'grouped'
    parts = r['key'].split('-')
    if len(parts) < 3 or not parts[-1]:
        return '?'
    return parts[-1][0] if by == 'dir' else parts[-2]


def slice_rows(rows, cost, t, by):
    """Per slice value, in BEST_EDGES_MS's order for best and sorted otherwise: (value, n, efficiency, summed share,
    median share, mean and median cost, mean and median cudnnFind time)."""
    groups = {}
    for r in rows:
        groups.setdefault(slice_of(r, by), []).append(r)
    order = [name for _, name in BEST_EDGES_MS] if by == 'best' else sorted(groups)
    out = []
    for v in order:
        g = groups.get(v)
        if not g:
            continue
        out.append((v, len(g), sum(r['best'] / r[t] for r in g) / len(g),
                    sum(r[cost] for r in g) / sum(r['find'] for r in g), quantile([r[cost] / r['find'] for r in g], 0.5),
                    sum(r[cost] for r in g) / len(g), quantile([r[cost] for r in g], 0.5),
                    sum(r['find'] for r in g) / len(g), quantile([r['find'] for r in g], 0.5)))
    return out


def common_prefix(reports, model):
    """How many leading problems every report holds, the same keys in the same order."""
    lists = [rep.get(model, []) for rep in reports]
    n = min(len(rows) for rows in lists)
    for i in range(n):
        if any(rows[i]['key'] != lists[0][i]['key'] for rows in lists):
            return i
    return n


def common_keys(reports, model):
    """The problems every report holds, by key, each once (a list may name a problem twice), in the first report's
    order."""
    held = [{r['key'] for r in rep.get(model, [])} for rep in reports[1:]]
    keys = dict.fromkeys(r['key'] for r in reports[0].get(model, []) if all(r['key'] in h for h in held))
    return list(keys)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('reports', nargs='+')
    ap.add_argument('--first', type=int, default=0, help='at most this many problems (0: all in common)')
    ap.add_argument('--by-key', action='store_true',
                    help='compare the problems every report holds by key, not by place')
    ap.add_argument('--costliest', type=int, default=0, help='list the N costliest problems of each shortlist')
    ap.add_argument('--by', choices=SLICES, help='the figures per slice of the problems as well')
    ap.add_argument('--bootstrap', type=int, default=2000)
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args(argv)
    reports = [read_report(p) for p in a.reports]
    models = [m for m in reports[0] if all(m in rep for rep in reports)]
    if not models:
        raise SystemExit('no model is in every report')
    print('report\tshortlist\tproblems\tefficiency\tworst efficiency\tcost/find\t95% interval\tmedian\t95% interval\t'
          'p90\tworst\tcost_ms\tfind_ms\tcostliest (ms)')
    costliest, sliced = [], []
    for mi, m in enumerate(models):
        keys = common_keys(reports, m) if a.by_key else [r['key'] for r in reports[0][m][:common_prefix(reports, m)]]
        if a.first:
            keys = keys[:a.first]
        n = len(keys)
        if n == 0:
            raise SystemExit(f"model {m}: no problem that every report holds "
                             f"{'(by key)' if a.by_key else 'at the same place (--by-key compares by key)'}")
        for path, rep in zip(a.reports, reports):
            by_key = {}
            for r in rep[m]:
                by_key.setdefault(r['key'], r)  # a problem named twice: its first row
            rows = [by_key[k] for k in keys] if a.by_key else rep[m][:n]
            # cuDNN's shortlist is the same in every model's rows: once, with the first model's problems
            for name, cost, t in ((m, 'topk', 't_topk'),) + ((('vendor', 'vtopk', 't_vtopk'),) if mi == 0 else ()):
                f = figures(rows, cost, t, a.bootstrap, a.seed)
                print(f"{path}\t{name}\t{n}\t{f['eff']:.4f}\t{f['eff_worst']:.4f}\t{f['total']:.4f}\t"
                      f"{f['lo']:.4f}-{f['hi']:.4f}\t{f['median']:.4f}\t{f['med_lo']:.4f}-{f['med_hi']:.4f}\t{f['p90']:.4f}\t{f['worst_share']:.3f}\t{f['cost_ms']:.3f}\t"
                      f"{f['find_ms']:.3f}\t{f['worst']['key']} ({f['worst'][cost]:.1f})")
                for v in (slice_rows(rows, cost, t, a.by) if a.by else []):
                    sliced.append(f"{path}\t{name}\t{v[0]}\t{v[1]}\t{v[2]:.4f}\t{v[3]:.4f}\t{v[4]:.4f}\t"
                                  f"{v[5]:.3f}\t{v[6]:.3f}\t{v[7]:.3f}\t{v[8]:.3f}")
                for r in sorted(rows, key=lambda r: -r[cost])[:a.costliest]:
                    costliest.append(f"{path}\t{name}\t{r['key']}\t{r[cost]:.3f}\t{r['find']:.3f}\t{r['best']:.6g}")
    if sliced:
        print(f'\nreport\tshortlist\t{a.by}\tproblems\tefficiency\tcost/find\tmedian\tcost_ms\tmedian cost_ms\t'
              'find_ms\tmedian find_ms')
        print('\n'.join(sliced))
    if costliest:
        print('\nreport\tshortlist\tcostliest problem\tcost_ms\tfind_ms\tt_best_ms')
        print('\n'.join(costliest))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
