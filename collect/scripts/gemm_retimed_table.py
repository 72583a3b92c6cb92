#!/usr/bin/env python3
"""A cuBLASLt GEMM table whose times are verify's re-timings: the rows of TABLE (heurist-collect gemm's) whose
(shape, configuration) `heurist-collect verify --table ... --retimed-out RETIMED` re-timed, each with time_us
replaced by the re-timing's median over its interleaved rounds and every other column kept (heuristic_rank,
workspace, family), in TABLE's order; the schema and capability file copied beside OUT. Labels measured by the
method that evaluates the picks (every configuration of a shape timed again, interleaved over rounds, median)
instead of the collector's (each configuration's batches behind a spin, one configuration after another).

Rows of configurations verify did not re-time are left out (--untimed drop, the default: LambdaRank needs only the
order of what is there), or with --untimed floor kept, each with time_us the larger of its table time and the
shape's slowest re-timed median: ranked after every configuration re-timed, among themselves in the table's order
(a model trained on the re-timed rows alone never sees the slow tail of the candidates it ranks when deployed, and
picks from it: docs/BENCHMARKS.md, "The single pick from labels re-timed by verify"). Shapes verify did not
re-time are left out; the shapes of the --keep-family families are kept whole with TABLE's times (the
held-out families, never trained on, whose offline figures stay on the table's times). Re-timed configurations
TABLE lacks (entries of cuBLASLt's fresh list that the collection did not hold) are counted and left out: the
table has no heuristic_rank or workspace for them. A re-timed (shape, configuration) listed twice stops the join
naming the file and line.

  python3 collect/scripts/gemm_retimed_table.py --table datasets/h200/h200_cublaslt_gemm_real.csv.gz \\
      --retimed retimed.tsv.gz --keep-family llama3,mistral,resnet50 [--untimed floor] --out out/h200_retimed.csv.gz
Prints the shapes and rows kept, dropped and kept whole, and the share of re-timed shapes whose fastest
configuration among the kept rows differs between the table's times and the re-timings. Written to a temporary
file renamed into place. Python 3 standard library only."""
import argparse
import gzip
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_table_io import check_header, copy_sidecars, open_table, shape_key  # noqa: E402

KERNEL = ('algo_id', 'tile_m', 'tile_n', 'stage_k', 'stages', 'split_k', 'reduction_scheme', 'swizzle',
          'custom_option', 'cluster_m', 'cluster_n', 'inner_shape')
MEASURE = 'time_us'


def read_retimed(path):
    """{shape key: {configuration fields (tuple of str): time text}} of a --retimed-out file."""
    want = '\t'.join(('key',) + KERNEL + (MEASURE,))
    out = {}
    with open_table(path) as f:
        header = f.readline().rstrip('\r\n')
        if header != want:
            sys.exit('%s:1: not a file of verify --retimed-out (header %r)' % (path, header[:80]))
        for n, line in enumerate(f, 2):
            v = line.rstrip('\r\n').split('\t')
            if len(v) != len(KERNEL) + 2:
                sys.exit('%s:%d: %d fields, expected %d' % (path, n, len(v), len(KERNEL) + 2))
            try:
                t = float(v[-1])
            except ValueError:
                t = math.nan
            if not math.isfinite(t) or t <= 0:
                sys.exit('%s:%d: %s %r is not a positive time' % (path, n, MEASURE, v[-1]))
            cfgs = out.setdefault(v[0], {})
            cfg = tuple(v[1:-1])
            if cfg in cfgs:
                sys.exit('%s:%d: shape %s, configuration re-timed twice' % (path, n, v[0]))
            cfgs[cfg] = v[-1]
    return out


def write_joined(table, tmp, retimed, keep, floor=False):
    """Writes the joined table to tmp (with floor, the rows not re-timed of a re-timed shape kept at the floor); (the table's (shape, configuration) pairs, {re-timed shape: [(table time,
    re-timed time, configuration)]}, shapes kept whole, shapes left out, rows kept, rows dropped, rows kept
    whole)."""
    seen = set()
    shapes = {}
    kept_whole = set()
    dropped_shapes = set()
    rows_kept = rows_dropped = rows_whole = rows_floored = 0
    with open_table(table) as f, gzip.open(tmp, 'wt') as g:
        header = f.readline()
        check_header(table, header)
        cols = header.rstrip('\r\n').split(',')
        missing = [c for c in KERNEL + (MEASURE,) if c not in cols]
        if missing:
            sys.exit('%s:1: no %s column' % (table, missing[0]))
        if keep and 'family' not in cols:
            sys.exit('%s:1: no family column, which --keep-family reads' % table)
        ki = [cols.index(c) for c in KERNEL]
        ti = cols.index(MEASURE)
        fi = cols.index('family') if 'family' in cols else -1
        g.write(header)
        for n, line in enumerate(f, 2):
            v = line.rstrip('\r\n').split(',')
            if len(v) != len(cols):
                sys.exit('%s:%d: %d fields, expected %d' % (table, n, len(v), len(cols)))
            key = shape_key(line, header)
            if fi >= 0 and v[fi] in keep:
                kept_whole.add(key)
                rows_whole += 1
                g.write(line)
                continue
            cfg = tuple(v[i] for i in ki)
            seen.add((key, cfg))
            t = retimed.get(key, {}).get(cfg)
            if t is None and floor and key in retimed:
                # the floor: the shape's slowest re-timed median; written as %.6g, as the collector writes times
                t = '%.6g' % max(float(v[ti]), max(float(x) for x in retimed[key].values()))
                rows_floored += 1
            elif t is None:
                rows_dropped += 1
                if key not in retimed:
                    dropped_shapes.add(key)
                continue
            else:
                shapes.setdefault(key, []).append((float(v[ti]), float(t), cfg))
                rows_kept += 1
            v[ti] = t
            g.write(','.join(v) + '\n')
    return seen, shapes, kept_whole, dropped_shapes, rows_kept, rows_dropped, rows_whole, rows_floored


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--table', required=True, help='the table heurist-collect gemm wrote (plain or .gz)')
    ap.add_argument('--retimed', required=True, help='verify --retimed-out\'s file (plain or .gz)')
    ap.add_argument('--out', required=True, help='the table to write (.csv.gz)')
    ap.add_argument('--keep-family', default='', help='families kept whole with the table\'s times, comma-separated')
    ap.add_argument('--untimed', choices=('drop', 'floor'), default='drop',
                    help='rows of configurations not re-timed: left out, or kept at the shape\'s slowest re-timed time')
    a = ap.parse_args()
    keep = set(x for x in a.keep_family.split(',') if x)
    retimed = read_retimed(a.retimed)
    tmp = a.out + '.tmp'
    try:
        joined = write_joined(a.table, tmp, retimed, keep, a.untimed == 'floor')
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    seen, shapes, kept_whole, dropped_shapes, rows_kept, rows_dropped, rows_whole, rows_floored = joined
    os.replace(tmp, a.out)
    copy_sidecars(a.table, a.out)
    extra = sum(1 for key, cfgs in retimed.items() for cfg in cfgs if (key, cfg) not in seen)
    unknown = sum(1 for key in retimed if key not in shapes and key not in kept_whole)
    moved = sum(1 for rows in shapes.values()
                if min(rows, key=lambda r: r[0])[2] != min(rows, key=lambda r: r[1])[2])
    print('%s: %d shapes re-timed (%d rows re-timed, %.1f a shape), %d shapes not re-timed left out (%d rows of '
          'configurations not re-timed dropped in all), %d shapes of %s kept whole (%d rows)'
          % (a.out, len(shapes), rows_kept, rows_kept / max(len(shapes), 1), len(dropped_shapes), rows_dropped,
             len(kept_whole), ','.join(sorted(keep)) or 'no family', rows_whole))
    if a.untimed == 'floor':
        print('rows not re-timed kept at the floor of their shape (--untimed floor): %d' % rows_floored)
    print('re-timed configurations the table lacks (left out): %d; re-timed shapes the table lacks: %d'
          % (extra, unknown))
    print('fastest of the kept rows differs between the table\'s times and the re-timings on %d of %d shapes (%.1f%%)'
          % (moved, len(shapes), 100.0 * moved / max(len(shapes), 1)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
