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
table has no heuristic_rank or workspace for them. A re-timed (shape, configuration) listed twice, a line of either
file that is not as heurist-collect writes it (configuration fields whole numbers, times positive numbers as %.6g
writes them) or a file that does not read (not gzip, cut short, not text) stops the join naming the file and line;
an OUT that would be written over TABLE or RETIMED (or their schema and capability files) is refused.

  python3 collect/scripts/gemm_retimed_table.py --table datasets/h200/h200_cublaslt_gemm_real.csv.gz \\
      --retimed retimed.tsv.gz --keep-family llama3,mistral,resnet50 [--untimed floor] --out out/h200_retimed.csv.gz
Prints the shapes and rows kept, dropped and kept whole, and the share of re-timed shapes whose fastest
configuration among the kept rows differs between the table's times and the re-timings. Written to a temporary
file renamed into place. Python 3 standard library only."""
import argparse
import gzip
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_table_io import KERNEL, SIDECARS, check_header, copy_sidecars, open_table, shape_key, sidecar  # noqa: E402

MEASURE = 'time_us'
# a configuration field and a time as heurist-collect writes them (%d, %.6g): float() alone would take ' 5', '1_0'
WHOLE = re.compile(r'-?[0-9]+')
NUMBER = re.compile(r'([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?')


def numbered_lines(path):
    """(line number, text) of each line of a plain or gzip text file; exits naming the file and the line where it
    does not read (not gzip, cut short, not UTF-8 text)."""
    n = 0
    try:
        with open_table(path) as f:
            for n, line in enumerate(f, 1):
                yield n, line
    except (OSError, EOFError, UnicodeDecodeError) as e:
        sys.exit('%s:%d: does not read (%s)' % (path, n + 1, e))


def positive_time(path, n, text):
    """text as a time, or exits naming the file and line where it is not a finite positive number."""
    t = float(text) if NUMBER.fullmatch(text) else math.nan
    if not math.isfinite(t) or t <= 0:
        sys.exit('%s:%d: %s %r is not a positive time' % (path, n, MEASURE, text))
    return t


def read_retimed(path):
    """{shape key: {configuration fields (tuple of str): time text}} of a --retimed-out file."""
    want = '\t'.join(('key',) + KERNEL + (MEASURE,))
    out = {}
    lines = numbered_lines(path)
    header = next(lines, (1, ''))[1].rstrip('\r\n')
    if header != want:
        sys.exit('%s:1: not a file of verify --retimed-out (header %r)' % (path, header[:80]))
    for n, line in lines:
        v = line.rstrip('\r\n').split('\t')
        if len(v) != len(KERNEL) + 2:
            sys.exit('%s:%d: %d fields, expected %d' % (path, n, len(v), len(KERNEL) + 2))
        bad = [x for x in v[1:-1] if not WHOLE.fullmatch(x)]
        if bad:
            sys.exit('%s:%d: configuration field %r is not a whole number' % (path, n, bad[0]))
        positive_time(path, n, v[-1])
        cfgs = out.setdefault(v[0], {})
        cfg = tuple(v[1:-1])
        if cfg in cfgs:
            sys.exit('%s:%d: shape %s, configuration re-timed twice' % (path, n, v[0]))
        cfgs[cfg] = v[-1]
    return out


def write_joined(table, tmp, retimed, keep, floor=False):
    """Writes the joined table to tmp (with floor, the rows not re-timed of a re-timed shape kept at the floor);
    returns (the table's (shape, configuration) pairs, the table's shapes, {re-timed shape: [(table time, re-timed
    time, configuration)]}, shapes kept whole, shapes left out, rows kept, rows dropped, rows kept whole, rows
    floored)."""
    seen = set()
    table_keys = set()
    shapes = {}
    kept_whole = set()
    dropped_shapes = set()
    rows_kept = rows_dropped = rows_whole = rows_floored = 0
    lines = numbered_lines(table)
    header = next(lines, (1, ''))[1]
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
    with gzip.open(tmp, 'wt') as g:
        g.write(header)
        for n, line in lines:
            v = line.rstrip('\r\n').split(',')
            if len(v) != len(cols):
                sys.exit('%s:%d: %d fields, expected %d' % (table, n, len(v), len(cols)))
            key = shape_key(line, header)
            cfg = tuple(v[i] for i in ki)
            seen.add((key, cfg))
            table_keys.add(key)
            if fi >= 0 and v[fi] in keep:
                kept_whole.add(key)
                rows_whole += 1
                g.write(line)
                continue
            t_table = positive_time(table, n, v[ti])
            t = retimed.get(key, {}).get(cfg)
            if t is None and floor and key in retimed:
                # the floor: the shape's slowest re-timed median; written as %.6g, as the collector writes times
                t = '%.6g' % max(t_table, max(float(x) for x in retimed[key].values()))
                rows_floored += 1
            elif t is None:
                rows_dropped += 1
                if key not in retimed:
                    dropped_shapes.add(key)
                continue
            else:
                shapes.setdefault(key, []).append((t_table, float(t), cfg))
                rows_kept += 1
            v[ti] = t
            g.write(','.join(v) + '\n')
    return seen, table_keys, shapes, kept_whole, dropped_shapes, rows_kept, rows_dropped, rows_whole, rows_floored


def same_file(a, b):
    """Whether the paths a and b name one file (either may not exist yet)."""
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def check_not_over_inputs(out, tmp, inputs):
    """Exits naming OUT where it, its temporary file or a schema or capability file copied beside it would be
    written over an input (inputs: (option, path) pairs) or over the table's own schema and capability files."""
    written = [out, tmp] + [sidecar(out, suffix) for suffix in SIDECARS]
    read = list(inputs) + [('--table\'s ' + suffix, sidecar(inputs[0][1], suffix)) for suffix in SIDECARS]
    for w in written:
        for option, path in read:
            if same_file(w, path):
                sys.exit('%s: would be written over %s %s: write the table elsewhere' % (out, option, path))


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
    tmp = a.out + '.tmp'
    check_not_over_inputs(a.out, tmp, [('--table', a.table), ('--retimed', a.retimed)])
    retimed = read_retimed(a.retimed)
    try:
        joined = write_joined(a.table, tmp, retimed, keep, a.untimed == 'floor')
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    seen, table_keys, shapes, kept_whole, dropped_shapes, rows_kept, rows_dropped, rows_whole, rows_floored = joined
    os.replace(tmp, a.out)
    copy_sidecars(a.table, a.out)
    extra = sum(1 for key, cfgs in retimed.items() for cfg in cfgs if (key, cfg) not in seen)
    unknown = sum(1 for key in retimed if key not in table_keys)
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
