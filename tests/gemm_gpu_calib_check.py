#!/usr/bin/env python3
"""Self-check of experiments/gemm_gpu_calib.py (Python 3 standard library only; run from anywhere, as ctest does):
on two shapes of a hand-made fold (scores, table, verify report), each guard's pick is the first pick (speed-up 1)
where the score gap among cuBLASLt's first N falls short of the margin and the re-timed pick of the runtime with
that N elsewhere; a shape without every runtime's row is left out and counted; a report without the fold's
runtimes is refused naming it."""
import gzip
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'experiments'))
import gemm_gpu_calib as ggc  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def cfg(algo):
    return ','.join('%s=%s' % (c, algo if c == 'algo_id' else 0) for c in ggc.gof.KERNEL)


def write_fold(d, report_rows):
    """shape 8x8x8: candidates ranked 0, 1, 2, scores 1.0, 2.5, 1.5 (the best, rank 1, gap 1.5 at every N);
    shape 16x8x8: ranked 0, 1 and unlisted, scores 1.0, 1.2, 3.0 (N any: the unlisted one, gap 2.0; N 2-4: rank 1,
    gap 0.2)"""
    shapes = {'8x8x8xfp16xNxT': ([0, 1, 2], [1.0, 2.5, 1.5]), '16x8x8xfp16xNxT': ([0, 1, -1], [1.0, 1.2, 3.0])}
    cols = ['M', 'N', 'K', 'dtype', 'trans_a', 'trans_b'] + list(ggc.gof.KERNEL) + ['time_us', 'heuristic_rank',
                                                                                     'family']
    with gzip.open(os.path.join(d, 't.csv.gz'), 'wt') as t, open(os.path.join(d, 's.tsv'), 'w') as s:
        t.write(','.join(cols) + '\n')
        s.write('shape\tfamily\tcandidate\ttime_us\theuristic_rank\tscore\n')
        for key, (ranks, scores) in shapes.items():
            for i, (r, sc) in enumerate(zip(ranks, scores)):
                v = dict(zip(('M', 'N', 'K', 'dtype', 'trans_a', 'trans_b'), key.split('x')))
                v.update({c: 0 for c in ggc.gof.KERNEL})
                v.update({'algo_id': i, 'time_us': 10.0, 'heuristic_rank': r if r >= 0 else '', 'family': 'f'})
                t.write(','.join(str(v[c]) for c in cols) + '\n')
                s.write('%s\tf\t%d\t10\t%d\t%g\n' % (key, i, r, sc))
    with open(os.path.join(d, 'r.tsv'), 'w') as r:
        r.write('key\tmodel\theuristic\tbest\tt_model_us\tt_heur_us\tt_best_us\tspeedup\tmodel_name\n')
        for key, name, pick, sp in report_rows:
            r.write('%s\t%s\t%s\t%s\t%g\t10\t8\t%g\t%s\n' % (key, cfg(pick), cfg(0), cfg(0), 10 / sp, sp, name))
        r.write('# model P\n')
    return '%s/s.tsv' % d, '%s/t.csv.gz' % d, '%s/r.tsv' % d


def main():
    rows = [('8,8,8,fp16,N,T', n, 1, 0.9) for n in ('P', 'P_top2', 'P_top3', 'P_top4')]
    rows += [('16,8,8,fp16,N,T', 'P', 2, 1.1)] + [('16,8,8,fp16,N,T', n, 1, 1.05) for n in ('P_top2', 'P_top3',
                                                                                            'P_top4')]
    with tempfile.TemporaryDirectory() as d:
        shapes, missing = ggc.load_fold(*write_fold(d, rows), 'P')
        check(missing == 0 and len(shapes) == 2, 'gemm_gpu_calib: %d shapes, %d left out' % (len(shapes), missing))
        for (top, m), want in (((0, 0.0), [0.9, 1.1]), ((0, 1.8), [1.0, 1.1]), ((0, 2.5), [1.0, 1.0]),
                               ((2, 0.1), [0.9, 1.05]), ((2, 0.5), [0.9, 1.0]), ((4, 1.6), [1.0, 1.0])):
            sp, _ = ggc.gpu_figures(shapes, top, m)
            check(sorted(sp) == sorted(want), 'gemm_gpu_calib: guard (%d, %g): %s, not %s' % (top, m, sp, want))
        grid = ggc.gof.margin_grid(shapes)
        check(grid[0] == 0.0 and len(grid) == 10, 'gemm_gpu_calib: grid %s' % grid)
        shapes, missing = ggc.load_fold(*write_fold(d, rows[:-1]), 'P')
        check(missing == 1 and list(shapes) == ['8x8x8xfp16xNxT'],
              'gemm_gpu_calib: a shape without P_top4 kept (%s, %d left out)' % (list(shapes), missing))
        try:
            ggc.load_fold(*write_fold(d, rows), 'Q')
            check(False, 'gemm_gpu_calib: a report without the fold\'s runtimes read')
        except SystemExit as e:
            check('no model Q' in str(e.code), 'gemm_gpu_calib: %s' % e.code)
    for f in failures:
        print('FAIL: %s' % f)
    print('gemm_gpu_calib: %s' % ('%d failures' % len(failures) if failures else 'ok'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
