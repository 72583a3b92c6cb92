#!/usr/bin/env python3
"""An adaptive convolution shortlist priced offline from a verify report (issue #34, item 4): where the model is
sure it takes its own pick untimed, elsewhere it times its top-3 as the report's shortlist did. Python 3 standard
library only.

    /usr/bin/python3 experiments/conv_adaptive.py --report REPORT.tsv.gz --margins MARGINS.tsv --model NAME \
        [--guarded NAME] [--by margin|p1] [--at T] [--bootstrap 2000] [--seed 0] [--frontier OUT.tsv]

REPORT: `heurist-collect verify --top-k 3 --find-cost` (columns t_model_ms, t_heur_ms, t_best_ms, t_topk_ms, topk_ms,
topk_timings, find_ms, vendor_topk_*); MARGINS: experiments/conv_margins.c's output for the same list, find-db and
runtime (NAME, the report's model_name). Rows are joined on (key, precision); the margins' top-1 must be the report's
model pick on every row, and the report's shortlist pick one of the margins' top-3 or cuDNN's pick, or the script
stops naming the row.

Per threshold T on the margin (top-1 score minus the next algorithm's) or on p1 (the pick's algorithm's softmax
probability): a problem with margin >= T takes t_model_ms at no cost (the decision's microseconds left out, as the
report's shortlist cost leaves them out), the others t_topk_ms at topk_ms. Printed: the share of problems timed, the
efficiency against the fresh best (mean of t_best / t), its worst problem, the cost summed over the problems as a
share of cudnnFind's, and the per-problem share's median and p90; beside them the model's pick alone, its top-3
everywhere, cuDNN's top-3, the guarded model's top-3 (--guarded), and two simple rules:
  - differ3: the top-3 timed only where the model's pick is not cuDNN's;
  - differ2: only the two picks timed where they differ, the faster kept: its time min(t_model, t_heur) (both
    re-timed carefully, so a perfect ranking of the two), its cost ESTIMATED as the report's top-3 pass scaled by
    launches (topk_ms x 2 / topk_timings), the pass's host cost shrinking with its kernels, which makes it an
    upper bound of the host's share and a lower bound where the two picks are the pass's slowest kernels.
Then the threshold given (--at T: one chosen on another set, so that the figure is not fitted to these problems)
or chosen (the cheapest whose efficiency reaches --target, 0.995 by default, or else the most
efficient under --max-share) with a 95% bootstrap interval of its efficiency and summed share (problems drawn with
replacement, seeded) and its worst problem.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'collect', 'scripts'))
from shortlist_cost import quantile, read_tsv  # noqa: E402  (a verify report's rows, the quantile its figures use)


def load(report, margins, model):
    """The report's rows of model joined with their margins, checked against the report's picks."""
    by_key = {}
    for n, m in enumerate(read_tsv(margins), start=2):
        by_key[(m['key'], m['precision'])] = m
    rows, heur = [], {}
    for n, r in enumerate(read_tsv(report), start=2):
        if r['model_name'] != model:
            continue
        k = (r['key'], r['precision'])
        m = by_key.get(k)
        if m is None:
            sys.exit(f'{report}: line {n}: {k[0]} ({k[1]}) is not in {margins}')
        if m['top1'] != r['model']:
            sys.exit(f'{report}: line {n}: the report picks {r["model"]}, the runtime ranks {m["top1"]} first')
        if r['topk_pick'] not in (m['top1'], m['top2'], m['top3'], r['heuristic']):
            sys.exit(f'{report}: line {n}: the shortlist\'s pick {r["topk_pick"]} is neither among the runtime\'s '
                     f'top-3 nor cuDNN\'s pick')
        rows.append({'key': r['key'], 'precision': r['precision'], 'model': r['model'], 'heur': r['heuristic'],
                     't_model': float(r['t_model_ms']), 't_heur': float(r['t_heur_ms']),
                     'best': float(r['t_best_ms']), 't_topk': float(r['t_topk_ms']), 'topk': float(r['topk_ms']),
                     'n_timed': int(r['topk_timings']), 'find': float(r['find_ms']),
                     't_vtopk': float(r['t_vendor_topk_ms']), 'vtopk': float(r['vendor_topk_ms']),
                     'margin': float(m['margin']), 'p1': float(m['p1'])})
    if not rows:
        sys.exit(f'{report}: no row of model {model}')
    return rows


def figures(rows, plan):
    """plan(row) -> (time, cost): efficiency, its worst, summed share, per-problem share median and p90, share
    of problems that pay a cost."""
    tc = [plan(r) for r in rows]
    eff = [r['best'] / t for r, (t, _) in zip(rows, tc)]
    share = [c / r['find'] for r, (_, c) in zip(rows, tc)]
    return {'eff': sum(eff) / len(eff), 'worst': min(eff), 'sum': sum(c for _, c in tc) / sum(r['find'] for r in rows),
            'median': quantile(share, 0.5), 'p90': quantile(share, 0.9),
            'timed': sum(1 for _, c in tc if c > 0) / len(rows)}


def threshold_plan(field, t):
    return lambda r: (r['t_model'], 0.0) if r[field] >= t else (r['t_topk'], r['topk'])


def differ3(r):
    return (r['t_model'], 0.0) if r['model'] == r['heur'] else (r['t_topk'], r['topk'])


def differ2(r):
    if r['model'] == r['heur']:
        return r['t_model'], 0.0
    return min(r['t_model'], r['t_heur']), r['topk'] * 2 / r['n_timed']


def line(name, f):
    return (f'{name:<28} {f["timed"]:6.3f} {f["eff"]:8.4f} {f["worst"]:6.3f} {f["sum"]:7.3f} {f["median"]:7.3f} '
            f'{f["p90"]:6.3f}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--report', required=True)
    ap.add_argument('--margins', required=True)
    ap.add_argument('--model', required=True)
    ap.add_argument('--guarded', help="a guarded model's name in the same report, its top-3 printed beside")
    ap.add_argument('--by', choices=('margin', 'p1'), default='margin')
    ap.add_argument('--target', type=float, default=0.995)
    ap.add_argument('--max-share', type=float, default=0.20)
    ap.add_argument('--bootstrap', type=int, default=2000)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--frontier', help='write every threshold\'s figures to this TSV')
    ap.add_argument('--at', type=float, help='report this threshold (chosen on another set) instead of choosing one')
    a = ap.parse_args()
    rows = load(a.report, a.margins, a.model)
    print(f'{a.report}: {len(rows)} problems of {a.model}; every pick reproduced by the runtime\'s ranking')
    print(f'{"":<28} {"timed":>6} {"eff":>8} {"worst":>6} {"summed":>7} {"median":>7} {"p90":>6}')
    print(line('own pick, untimed', figures(rows, lambda r: (r['t_model'], 0.0))))
    print(line('top-3 everywhere', figures(rows, lambda r: (r['t_topk'], r['topk']))))
    print(line("cuDNN's top-3", figures(rows, lambda r: (r['t_vtopk'], r['vtopk']))))
    if a.guarded:
        g = [r for r in read_tsv(a.report) if r['model_name'] == a.guarded]
        gk = {(r['key'], r['precision']): r for r in g}
        if len(g) != len(rows) or any((r['key'], r['precision']) not in gk for r in rows):
            sys.exit(f'{a.report}: {a.guarded} does not cover the problems of {a.model}')
        grows = [dict(r, t_topk=float(gk[(r['key'], r['precision'])]['t_topk_ms']),
                      topk=float(gk[(r['key'], r['precision'])]['topk_ms'])) for r in rows]
        print(line(f'guarded top-3 ({a.guarded})', figures(grows, lambda r: (r['t_topk'], r['topk']))))
    print(line('differ3: top-3 if != cuDNN', figures(rows, differ3)))
    print(line('differ2: both if != (est.)', figures(rows, differ2)))
    # the sweep: every distinct value of the margin is a threshold
    ts = sorted({r[a.by] for r in rows})
    frontier = [(t, figures(rows, threshold_plan(a.by, t))) for t in ts] + \
        [(float('inf'), figures(rows, threshold_plan(a.by, float('inf'))))]
    if a.frontier:
        with open(a.frontier + '.tmp', 'w') as f:
            f.write(f'{a.by}\ttimed\tefficiency\tworst\tsummed_share\tmedian_share\tp90_share\n')
            for t, fg in frontier:
                f.write(f'{t:.6g}\t{fg["timed"]:.4f}\t{fg["eff"]:.5f}\t{fg["worst"]:.4f}\t{fg["sum"]:.4f}\t'
                        f'{fg["median"]:.4f}\t{fg["p90"]:.4f}\n')
        os.replace(a.frontier + '.tmp', a.frontier)
    print(f'adaptive, by {a.by} (a problem is timed where {a.by} < T): T at each tenth of the problems timed')
    shown = set()
    for q in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        t, fg = min(frontier, key=lambda x: abs(x[1]['timed'] - q))
        if t not in shown:
            shown.add(t)
            print(line(f'T = {t:.4g}', fg))
    ok = [(t, fg) for t, fg in frontier if fg['eff'] >= a.target]
    cheap = [(t, fg) for t, fg in frontier if fg['sum'] <= a.max_share]
    print(f'cheapest (summed share) reaching efficiency {a.target}: ' +
          (line(f'T = {min(ok, key=lambda x: x[1]["sum"])[0]:.4g}', min(ok, key=lambda x: x[1]['sum'])[1])
           if ok else 'none'))
    print(f'cheapest (median share) reaching efficiency {a.target}: ' +
          (line(f'T = {min(ok, key=lambda x: (x[1]["median"], x[1]["sum"]))[0]:.4g}',
                min(ok, key=lambda x: (x[1]['median'], x[1]['sum']))[1]) if ok else 'none'))
    print(f'most efficient at summed share <= {a.max_share}: ' +
          (line(f'T = {max(cheap, key=lambda x: x[1]["eff"])[0]:.4g}', max(cheap, key=lambda x: x[1]['eff'])[1])
           if cheap else 'none'))
    # the threshold reported: --at (chosen on another set), else the cheapest reaching the target, else the most
    # efficient within the share
    if a.at is not None:
        t = a.at
        print(line(f'at T = {t:.4g}', figures(rows, threshold_plan(a.by, t))))
    elif ok:
        t, _ = min(ok, key=lambda x: x[1]['sum'])
    elif cheap:
        t, _ = max(cheap, key=lambda x: x[1]['eff'])
    else:
        return
    plan = threshold_plan(a.by, t)
    rng = random.Random(a.seed)
    effs, sums = [], []
    for _ in range(a.bootstrap):
        pick = [rows[rng.randrange(len(rows))] for _ in rows]
        fg = figures(pick, plan)
        effs.append(fg['eff'])
        sums.append(fg['sum'])
    effs.sort()
    sums.sort()
    lo, hi = int(0.025 * a.bootstrap), int(0.975 * a.bootstrap) - 1
    worst = min(rows, key=lambda r: r['best'] / plan(r)[0])
    print(f'{"given" if a.at is not None else "chosen"} T = {t:.4g}: efficiency 95% bootstrap '
          f'{effs[lo]:.4f}-{effs[hi]:.4f}, summed share '
          f'{sums[lo]:.3f}-{sums[hi]:.3f}; worst problem {worst["key"]} ({worst["precision"]}) at '
          f'{worst["best"] / plan(worst)[0]:.3f} of the best: {a.by} {worst[a.by]:.4g}, '
          f'{"untimed " + worst["model"] if worst[a.by] >= t else "top-3 timed"}')


if __name__ == '__main__':
    main()
