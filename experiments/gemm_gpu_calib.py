#!/usr/bin/env python3
"""The vendor guard of a GEMM table model calibrated on the GPU's re-timings instead of a table's times: the guard
grid and rule of collect/scripts/gemm_offline.py (report --calibrate) with each grid point's single pick read from
heurist-collect verify reports of the calibration shapes.

  /usr/bin/python3 experiments/gemm_gpu_calib.py --fold SCORES.tsv,TABLE.csv.gz,REPORT.tsv,PREFIX ...
        [--table-guard N,M] [--shapes-out SHAPES.tsv]

One --fold per calibration fold: SCORES, gemm_offline.py score's output of the fold model's unguarded runtime on
its held-out table TABLE (the table's times and cuBLASLt ranks, the runtime's scores); REPORT, a verify --table
report of TABLE's shapes with the same model exported as PREFIX (unguarded: the pick among every candidate) and as
PREFIX_topN for N in 2, 3, 4 (heurist export --guard-top N without --guard: the pick among cuBLASLt's first N). A
guard (N, M) keeps cuBLASLt's first pick unless the best of the model's scores among the first N (all for N 0)
beats the first pick's by M (data/portable.h's rule), so its pick on a shape is either the first pick (speed-up 1)
or the pick of PREFIX_topN, whose re-timed speed-up the report holds; the score gap is read from SCORES. The grid is
gemm_offline.calibrate's (N in any, 2, 3, 4; M 0 and the deciles of the positive gaps at N any), each point's
figures over the re-timed speed-ups (geomean with its 95% bootstrap interval, shares slower and faster beyond
x1.02, worst, efficiency against the best re-timed) beside the table's figures of the same point; the guard is
chosen by gemm_offline.choose. --table-guard N,M: a guard chosen otherwise (on the table's times), its re-timed
figures. --shapes-out: one row per shape and N (the score gap, the pick, the re-timed and the table's speed-ups).
Shapes without every model's row in the report (a job stopped by its limit) are left out and counted.
Python 3 standard library only; run from the repository root."""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'collect', 'scripts'))
import gemm_offline as gof  # noqa: E402
from verify_reports import read_rows  # noqa: E402

TOPS = gof.GUARD_TOPS


def model_name(prefix, top):
    return prefix if top == 0 else '%s_top%d' % (prefix, top)


def spell(values):
    """a table row's configuration as a verify report spells it"""
    return ','.join('%s=%s' % (c, values[c]) for c in gof.KERNEL)


def load_fold(scores_path, table_path, report_path, prefix):
    """shape key (the scores' spelling) -> dict(family, t, rank, score, gpu: {N: (speed-up, t_pick, t_best, pick
    is the first pick, pick is the scores' best among the first N)}); the count of shapes without every row"""
    scores = gof.load_scores([scores_path])
    table = gof.load_table(table_path)
    report = {}
    for n, r in read_rows(report_path, ('key', 'model_name', 'model', 'heuristic', 'speedup', 't_model_us',
                                        't_heur_us', 't_best_us'), 'a GEMM verify report'):
        try:
            report[(r['model_name'], r['key'])] = (float(r['speedup']), float(r['t_model_us']),
                                                   float(r['t_heur_us']), float(r['t_best_us']),
                                                   r['model'], r['heuristic'])
        except ValueError:
            sys.exit('%s:%d: a time or speed-up that is not a number' % (report_path, n))
    names = {model_name(prefix, top) for top in TOPS}
    if not names & {m for m, _ in report}:
        sys.exit('%s: no model %s in the report' % (report_path, prefix))
    shapes, missing = {}, 0
    for key, d in scores.items():
        if key not in table:
            sys.exit('%s: shape %s is not in %s' % (scores_path, key, table_path))
        cfgs = [spell(v) for v, _, _ in table[key][1]]
        if len(cfgs) != len(d['t']):
            sys.exit('%s: shape %s has %d candidates, %s %d' % (scores_path, key, len(d['t']), table_path,
                                                               len(cfgs)))
        rkey = ','.join(key.split('x'))
        rows = {top: report.get((model_name(prefix, top), rkey)) for top in TOPS}
        if any(r is None for r in rows.values()) or 0 not in d['rank']:
            missing += 1
            continue
        d['gpu'], d['cfgs'] = {}, cfgs
        for top in TOPS:
            sp, t_model, t_heur, t_best, pick, first = rows[top]
            best, _ = gof.guard(d['score'], d['rank'], top, 0.0)
            d['gpu'][top] = (sp, t_model, t_heur, t_best, pick == first, pick == cfgs[best])
        d['first_agrees'] = rows[0][5] == cfgs[d['rank'].index(0)]
        shapes[key] = d
    return shapes, missing


def gap(d, top):
    """the score of the model's best among cuBLASLt's first `top` (all: 0) less the first pick's, and that best"""
    fp = d['rank'].index(0)
    best, s = gof.guard(d['score'], d['rank'], top, 0.0)
    return s[best] - d['score'][fp], best


def gpu_figures(shapes, top, margin):
    """re-timed speed-ups and efficiencies of the guard (top, margin): the first pick (speed-up 1) where the gap
    falls short of the margin, PREFIX_topN's re-timed pick elsewhere"""
    sp, eff = [], []
    for d in shapes.values():
        g, best = gap(d, top)
        s, t_model, t_heur, t_best, _, _ = d['gpu'][top]
        fp = d['rank'].index(0)
        if best != fp and (not margin > 0 or g >= margin):
            sp.append(s)
            eff.append(t_best / t_model)
        else:
            sp.append(1.0)
            eff.append(t_best / t_heur)
    return sp, eff


def calibrate(shapes):
    """[((top, margin), re-timed summary, table summary)] over the grid"""
    rows = []
    for top in TOPS:
        for m in gof.margin_grid(shapes):
            rows.append(((top, m), gof.summary(*gpu_figures(shapes, top, m)),
                         gof.summary(*gof.pick_figures(shapes, top, m))))
    return rows


def line(s):
    return '%.4f (%.4f-%.4f) %.4f %.4f %.3f %.4f' % (s['geomean'], s['lo'], s['hi'], s['slower'], s['faster'],
                                                    s['worst'], s['eff'])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--fold', action='append', required=True, help='SCORES.tsv,TABLE.csv.gz,REPORT.tsv,PREFIX')
    ap.add_argument('--table-guard', help='N,M: a guard chosen on the table, its re-timed figures')
    ap.add_argument('--shapes-out')
    a = ap.parse_args()
    shapes, missing, disagree = {}, 0, 0
    for spec in a.fold:
        parts = spec.split(',')
        if len(parts) != 4:
            sys.exit('gemm_gpu_calib.py: --fold %r: expected SCORES,TABLE,REPORT,PREFIX' % spec)
        got, miss = load_fold(*parts)
        missing += miss
        for k, d in got.items():
            if k in shapes:
                sys.exit('gemm_gpu_calib.py: shape %s in two folds' % k)
            shapes[k] = d
    if not shapes:
        sys.exit('gemm_gpu_calib.py: no shape has every model\'s row in the reports')
    disagree = sum(not d['first_agrees'] for d in shapes.values())
    unmatched = {top: sum(not d['gpu'][top][5] for d in shapes.values()) for top in TOPS}
    print('%d calibration shapes re-timed (%d left out: not every model\'s row); cuBLASLt\'s first pick on the GPU '
          'another than the table\'s rank 0 on %d; the pick not the scores\' best among the first N on %s' %
          (len(shapes), missing, disagree, ', '.join('N %s: %d' % (t or 'any', unmatched[t]) for t in TOPS)))
    # the table's and the re-timed speed-ups of the unguarded pick, where it is not the first pick
    xs, ys = [], []
    for d in shapes.values():
        best = gap(d, 0)[1]
        fp = d['rank'].index(0)
        if best != fp and d['gpu'][0][5]:
            xs.append(math.log(d['t'][fp] / d['t'][best]))
            ys.append(math.log(d['gpu'][0][0]))
    if len(xs) > 1:
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
        sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
        sy = math.sqrt(sum((y - my) ** 2 for y in ys))
        print('unguarded pick not the first pick on %d shapes: the table\'s log speed-up against the re-timed one, '
              'correlation %.3f, mean |difference| %.4f; slower beyond x%.2f: table %d, re-timed %d' %
              (len(xs), cov / (sx * sy) if sx > 0 and sy > 0 else float('nan'),
               sum(abs(x - y) for x, y in zip(xs, ys)) / len(xs), gof.NOISE,
               sum(x < -math.log(gof.NOISE) for x in xs), sum(y < -math.log(gof.NOISE) for y in ys)))
    rows = calibrate(shapes)
    print('grid: guard-top, margin; re-timed: speed-up (95% CI) slower faster worst eff; table: the same')
    for (t, m), g, tb in rows:
        print('  %d %.6g; %s; %s' % (t, m, line(g), line(tb)))
    (t, m), g = gof.choose([(p, g) for p, g, _ in rows])
    print('chosen on the re-timings: --guard-top %d --guard %.6g (slower %.4f, geomean %.4f)' %
          (t, m, g['slower'], g['geomean']))
    meet = [g['geomean'] for _, g, _ in rows if g['slower'] <= 0.02]
    print('re-timed frontier: best geomean at <= 2%% slower %s; best geomean of the grid %.4f' %
          ('%.4f' % max(meet) if meet else 'none', max(g['geomean'] for _, g, _ in rows)))
    if a.table_guard:
        try:
            tt, tm = a.table_guard.split(',')
            tt, tm = int(tt), float(tm)
        except ValueError:
            sys.exit('gemm_gpu_calib.py: --table-guard %r: expected N,M' % a.table_guard)
        print('the table\'s guard (--guard-top %d --guard %.6g) re-timed: %s; on the table: %s' %
              (tt, tm, line(gof.summary(*gpu_figures(shapes, tt, tm))),
               line(gof.summary(*gof.pick_figures(shapes, tt, tm)))))
    if a.shapes_out:
        tmp = a.shapes_out + '.tmp'
        with open(tmp, 'w') as f:
            f.write('shape\tfamily\ttop\tgap\tpick_is_first\tretimed_speedup\ttable_speedup\n')
            for k in sorted(shapes):
                d = shapes[k]
                fp = d['rank'].index(0)
                for top in TOPS:
                    g, best = gap(d, top)
                    f.write('%s\t%s\t%d\t%.6g\t%d\t%.4f\t%.4f\n' % (k, d['family'], top, g, d['gpu'][top][4],
                                                                    d['gpu'][top][0], d['t'][fp] / d['t'][best]))
        os.replace(tmp, a.shapes_out)


if __name__ == '__main__':
    main()
