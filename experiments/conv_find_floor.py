#!/usr/bin/env python3
"""Why a convolution shortlist's cost stays near 0.3 of cudnnFind's per problem (issue #34, item 4): the two
sides' costs split into kernels and the rest, per problem class. Python 3 standard library only.

    /usr/bin/python3 experiments/conv_find_floor.py --report REPORT.tsv.gz --model NAME --margins MARGINS.tsv \
        --fdb FDB.txt [--list LIST]

REPORT: `heurist-collect verify --top-k 3 --find-cost` with the columns find_algos and find_kernel_ms (how many
kernels cudnnFind ran and their times as it reports them); MARGINS: experiments/conv_margins.c's output for the
same list and runtime (its top-3 names the shortlist's kernels); FDB: the find-db the run was given (the
collected time of each shortlist kernel, the only per-kernel time these files hold for kernels a shortlist timed
but did not pick).

Per class (direction x 2-D / 3-D x dense / grouped / depthwise, then "*": every direction), medians over its
problems:
  n        kernels cudnnFind ran (find_algos);
  find     its wall time (find_ms), kern its kernels' reported times summed (find_kernel_ms), and
  hf       (find - kern) / n: its cost a kernel beyond the kernel (host work, workspace queries, repeats);
  sl       the shortlist pass's wall time (topk_ms) over its t timings (topk_timings), sl_k its kernels' times
           (the find-db's collected times of the shortlist's kernels: the runtime's top-3 and cuDNN's pick when
           not among them), and hs = (sl - sl_k) / t;
  share    sl / find, as measured (= (t hs + sl_k) / (n hf + kern));
  floor    sl_k / find: the share of a pass with no host work, timing the same kernels; f2 and f1 the same for the
           runtime's first two algorithms and its pick alone (one launch each, the find-db's times);
  k-only   sl_k / kern (no host work on either side), and h-only t hs / (n hf) (kernels of no length).
The find-db's times are the collection's (an H100's for datasets/h100), the others the verify run's GPU's.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'collect', 'scripts'))
import sample_problems  # noqa: E402  (the key parser)
from shortlist_cost import read_tsv, slice_of  # noqa: E402  (a verify report's rows, a key's dir / dims / groups)


def fdb_times(path):
    """{key: {kernel name: collected ms}}"""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, start=1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            key, _, entries = line.partition('=')
            times = {}
            for e in entries.split(';'):
                name, _, rest = e.partition(':')
                try:
                    times[name] = float(rest.split(',')[0])
                except ValueError:
                    sys.exit(f'{path}:{n}: entry {e!r} has no time')
            out[key] = times
    return out


def problem_class(key):
    """"DIR 2d|3d dense|grouped|depthwise" (the groups as shortlist_cost.py --by groups names them)"""
    if sample_problems.parse(key) is None:
        sys.exit(f'{key}: not a key sample_problems.py parses')
    return ' '.join(slice_of({'key': key}, by) for by in ('dir', 'dims', 'groups'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--report', required=True)
    ap.add_argument('--model', required=True)
    ap.add_argument('--margins', required=True)
    ap.add_argument('--fdb', required=True)
    a = ap.parse_args()
    margins = {(m['key'], m['precision']): m for m in read_tsv(a.margins)}
    fdb = fdb_times(a.fdb)
    by = {}
    for n, r in enumerate(read_tsv(a.report), start=2):
        if r['model_name'] != a.model:
            continue
        if r.get('find_algos') in (None, '', '-'):
            sys.exit(f'{a.report}: line {n}: no find_algos (a report of heurist-collect verify --find-cost with '
                     f'cudnnFind\'s kernel columns)')
        m = margins.get((r['key'], r['precision']))
        if m is None or m['top1'] != r['model']:
            sys.exit(f'{a.report}: line {n}: {r["key"]} not in {a.margins} with the report\'s pick')
        names = {x for x in (m['top1'], m['top2'], m['top3']) if x != '-'} | {r['heuristic']}
        kt = fdb.get(r['key'], {})
        if any(x not in kt for x in names):
            sys.exit(f'{a.report}: line {n}: a shortlist kernel of {r["key"]} has no time in {a.fdb}')
        t = int(r['topk_timings'])
        d = {'n': int(r['find_algos']), 'find': float(r['find_ms']), 'kern': float(r['find_kernel_ms']),
             'sl': float(r['topk_ms']), 't': t, 'sl_k': sum(kt[x] for x in names), 'k1': kt[m['top1']],
             'k2': kt[m['top1']] + (kt[m['top2']] if m['top2'] != '-' else 0.0)}
        d['h_find'] = (d['find'] - d['kern']) / d['n'] if d['n'] else float('nan')
        d['h_sl'] = (d['sl'] - d['sl_k']) / t
        c = problem_class(r['key'])
        for c in (c, '* ' + c.split(' ', 1)[1], 'all'):
            by.setdefault(c, []).append(d)
    med = statistics.median
    print(f'{a.report}, {a.model}: medians per class (ms)')
    print(f'{"class":<16} {"probs":>5} {"n":>4} {"find":>7} {"kern":>7} {"hf":>6} {"sl":>6} {"t":>3} {"sl_k":>6} '
          f'{"hs":>6} {"share":>6} {"floor":>6} {"f2":>6} {"f1":>6} {"k-only":>6} {"h-only":>6}')
    for c in sorted(by, key=lambda c: (c == 'all', c.startswith('*'), c)):
        ds = [d for d in by[c] if d['n'] > 0]
        if not ds:
            continue
        print(f'{c:<16} {len(ds):>5} {med(d["n"] for d in ds):>4.0f} {med(d["find"] for d in ds):>7.2f} '
              f'{med(d["kern"] for d in ds):>7.3f} {med(d["h_find"] for d in ds):>6.3f} '
              f'{med(d["sl"] for d in ds):>6.3f} {med(d["t"] for d in ds):>3.0f} {med(d["sl_k"] for d in ds):>6.3f} '
              f'{med(d["h_sl"] for d in ds):>6.3f} {med(d["sl"] / d["find"] for d in ds):>6.3f} '
              f'{med(d["sl_k"] / d["find"] for d in ds):>6.3f} {med(d["k2"] / d["find"] for d in ds):>6.3f} '
              f'{med(d["k1"] / d["find"] for d in ds):>6.3f} '
              f'{med(d["sl_k"] / d["kern"] for d in ds if d["kern"] > 0):>6.3f} '
              f'{med(d["t"] * d["h_sl"] / (d["n"] * d["h_find"]) for d in ds if d["h_find"] > 0):>6.3f}')


if __name__ == '__main__':
    main()
