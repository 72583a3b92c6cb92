#!/usr/bin/env python3
"""A learned GEMM shortlist against timing cuBLASLt's whole list, paired by shape, per model of verify reports
(heurist-collect verify --table ... --top-k K with the list timed: columns t_best_us, t_topk_us, t_list_us,
topk_ms, autotune_ms, read by name). Per (report, model): shapes; the shortlist's efficiency against the best
re-timed (mean of t_best / t_topk), the list's (t_best / t_list) and cuBLASLt's own first K's; the shortlist minus
the list, paired by shape, with its 95% bootstrap interval (the shapes resampled with replacement, seeded); the
shortlist's worst efficiency; the share of shapes where the shortlist's pick is slower than the list's beyond
--noise; the cost ratios, the shortlists' timing over the list's (sums over the shapes, as `heurist-collect
summarize` reports them); and how the report timed them (shortlist_timing).

  /usr/bin/python3 experiments/gemm_shortlist_compare.py datasets/h200/verify/h200_gemm_shortlist_*_verify.tsv.gz
(gzip-compressed reports read as they are).
Python 3 standard library only."""
import argparse
import sys

from verify_reports import mean_interval, read_rows


def read(path):
    """{model: [row, ...]} of a report's rows ('#' lines skipped)."""
    rows = {}
    need = ('model_name', 't_best_us', 't_topk_us', 't_list_us', 'topk_ms', 'autotune_ms', 't_vendor_topk_us',
            'vendor_topk_ms')
    for lineno, r in read_rows(path, need, 'a GEMM verify report with --top-k and the list timed'):
        if '-' in (r['t_topk_us'], r['t_list_us']):
            sys.exit('%s:%d: no shortlist or no list timed on this row' % (path, lineno))
        rows.setdefault(r['model_name'], []).append(r)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('reports', nargs='+')
    ap.add_argument('--noise', type=float, default=1.02)
    ap.add_argument('--bootstrap', type=int, default=2000)
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    print('| report | model | timing | shapes | shortlist eff. | list eff. | vendor top-K eff. | shortlist - list '
          '(95%% CI) | worst | slower than the list > x%g | cost / list | vendor top-K cost / list |' % a.noise)
    print('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for path in a.reports:
        for model, rows in read(path).items():
            f = lambda r, c: float(r[c])
            tk = [f(r, 't_best_us') / f(r, 't_topk_us') for r in rows]
            li = [f(r, 't_best_us') / f(r, 't_list_us') for r in rows]
            vt = [f(r, 't_best_us') / f(r, 't_vendor_topk_us') for r in rows]
            d = [x - y for x, y in zip(tk, li)]
            lo, hi = mean_interval(d, a.bootstrap, a.seed)
            n = len(rows)
            slower = sum(f(r, 't_topk_us') > f(r, 't_list_us') * a.noise for r in rows) / n
            list_ms = sum(f(r, 'autotune_ms') for r in rows)
            timing = rows[0].get('shortlist_timing', 'careful')
            print('| %s | %s | %s | %d | %.4f | %.4f | %.4f | %+.4f (%+.4f, %+.4f) | %.4f | %.4f | %.3f | %.3f |' % (
                path.rsplit('/', 1)[-1], model, timing, n, sum(tk) / n, sum(li) / n, sum(vt) / n, sum(d) / n, lo, hi,
                min(tk), slower, sum(f(r, 'topk_ms') for r in rows) / list_ms,
                sum(f(r, 'vendor_topk_ms') for r in rows) / list_ms))


if __name__ == '__main__':
    main()
