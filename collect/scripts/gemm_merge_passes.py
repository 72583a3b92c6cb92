#!/usr/bin/env python3
"""Merges several passes of one cuBLASLt GEMM table (heurist-collect gemm run again over the same shapes, same
seed: the same candidates) into one table whose time of each (shape, configuration) is the median of its passes'
times. One pass cannot separate configurations within about 3% of each other (datasets/h200/README.md, "Noise of
the real pool"); the median of three passes is a label that one pass's outliers do not move.

A row's key is its columns before time_us (the shape, its batch where the table has the column, and the
configuration). Every pass must hold the same keys, each once, in any order; a key that one pass lacks or holds
twice stops the merge with the file and line. The output keeps the first table's rows, in its order, with all its
other columns (family, heuristic_rank, workspace) and its schema and capability file beside it; a later pass may
lack columns after time_us (the noise passes have no family). With an odd number of passes the median is one
pass's time as that pass wrote it; with an even number, the mean of the two middle times (%.6g, as the collector
writes times).

  python3 collect/scripts/gemm_merge_passes.py --out out/h200_real3.csv.gz \\
      datasets/h200/h200_cublaslt_gemm_real.csv.gz datasets/h200/h200_cublaslt_gemm_real.noise.csv.gz \\
      datasets/h200/h200_cublaslt_gemm_real.noise2.csv.gz
Prints the rows and shapes merged and the share of shapes whose fastest configuration differs from the first
pass's. Python 3 standard library only."""
import argparse
import gzip
import io
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_table_io import check_header, copy_sidecars, open_table, shape_key  # noqa: E402

MEASURE = 'time_us'


def key_width(table, header):
    """The number of columns before time_us: a row's key."""
    columns = header.rstrip('\r\n').split(',')
    if MEASURE not in columns:
        sys.exit('%s:1: no %s column' % (table, MEASURE))
    return columns.index(MEASURE)


def split_row(table, n, line, width):
    """(key, time text) of a data line."""
    v = line.rstrip('\r\n').split(',')
    if len(v) <= width:
        sys.exit('%s:%d: %d fields, expected more than %d' % (table, n, len(v), width))
    try:
        t = float(v[width])
    except ValueError:
        t = math.nan
    if not math.isfinite(t) or t <= 0:
        sys.exit('%s:%d: %s %r is not a positive time' % (table, n, MEASURE, v[width]))
    return ','.join(v[:width]), v[width]


def read_pass(table, width, key_header):
    """{key: (time text, line)} of a later pass, whose header must agree with the first's up to time_us."""
    times = {}
    with open_table(table) as f:
        header = f.readline()
        check_header(table, header)
        if header.rstrip('\r\n').split(',')[:width + 1] != key_header:
            sys.exit('%s:1: its columns up to %s differ from the first table\'s (%s)' %
                     (table, MEASURE, ','.join(key_header)))
        for n, line in enumerate(f, 2):
            if not line.strip():
                continue
            key, t = split_row(table, n, line, width)
            if key in times:
                sys.exit('%s:%d: the row %s again (first on line %d)' % (table, n, key, times[key][1]))
            times[key] = (t, n)
    return times


def median_text(texts):
    """The median of the time texts: the middle one as written for an odd count, else the two middles' mean."""
    v = sorted(texts, key=float)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else '%.6g' % ((float(v[mid - 1]) + float(v[mid])) / 2)


def merge(tables, out):
    """Writes the merged table to out (through out.tmp); returns (rows, shapes, shapes whose fastest configuration
    differs from the first pass's)."""
    with open_table(tables[0]) as f:
        header = f.readline()
    check_header(tables[0], header)
    width = key_width(tables[0], header)
    key_header = header.rstrip('\r\n').split(',')[:width + 1]
    later = [read_pass(t, width, key_header) for t in tables[1:]]
    seen = {}
    best_first, best_merged = {}, {}
    tmp = out + '.tmp'
    try:
        # gzip without a name or time, so that the same passes give the same bytes
        with open_table(tables[0]) as f, open(tmp, 'wb') as raw, \
                gzip.GzipFile(filename='', mode='wb', fileobj=raw, mtime=0) as z, \
                io.TextIOWrapper(z, encoding='utf-8', newline='') as o:
            o.write(f.readline())
            for n, line in enumerate(f, 2):
                if not line.strip():
                    continue
                key, t = split_row(tables[0], n, line, width)
                if key in seen:
                    sys.exit('%s:%d: the row %s again (first on line %d)' % (tables[0], n, key, seen[key]))
                seen[key] = n
                texts = [t]
                for table, times in zip(tables[1:], later):
                    if key not in times:
                        sys.exit('%s:%d: the row %s is not in %s' % (tables[0], n, key, table))
                    texts.append(times[key][0])
                m = median_text(texts)
                v = line.rstrip('\r\n').split(',')
                v[width] = m
                o.write(','.join(v) + '\n')
                shape = shape_key(line, header)
                for best, time in ((best_first, float(t)), (best_merged, float(m))):
                    if shape not in best or time < best[shape][0]:
                        best[shape] = (time, key)
        for table, times in zip(tables[1:], later):
            extra = [(n, k) for k, (_, n) in times.items() if k not in seen]
            if extra:
                n, k = min(extra)
                sys.exit('%s:%d: the row %s is not in %s' % (table, n, k, tables[0]))
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    os.replace(tmp, out)
    copy_sidecars(tables[0], out)
    moved = sum(best_first[s][1] != best_merged[s][1] for s in best_first)
    return len(seen), len(best_first), moved


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('tables', nargs='+', help='the passes, the first one\'s other columns kept')
    ap.add_argument('--out', required=True, help='the merged table, .csv.gz')
    a = ap.parse_args()
    if not a.out.endswith('.csv.gz'):
        sys.exit('--out %s: expected a .csv.gz path' % a.out)
    if len(a.tables) < 2:
        sys.exit('gemm_merge_passes.py: expected two passes or more, got %d' % len(a.tables))
    rows, shapes, moved = merge(a.tables, a.out)
    print('%s: %d rows of %d shapes, each time the median of %d passes; the fastest configuration differs from '
          'the first pass\'s on %d shapes (%.1f%%)' % (a.out, rows, shapes, len(a.tables), moved,
                                                      100.0 * moved / shapes if shapes else 0.0))
    return 0


if __name__ == '__main__':
    sys.exit(main())
