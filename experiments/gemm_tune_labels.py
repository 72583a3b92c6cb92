#!/usr/bin/env python3
"""A training table for the seq2seq tuner of the cuBLASLt GEMM table whose label is chosen among cuBLASLt's list or
given to cuBLASLt's first pick on a near-tie. The tuner learns, per shape, the fields of the fastest of the shape's
rows (data/table_tune.c); this script keeps the rows whose fastest is the label wanted:

  --list      only the rows of cuBLASLt's list (a heuristic rank): the label is the fastest configuration among
              those the tuner decodes within (`--candidates list`, `verify --tune-candidates list`), not one
              outside the list that it can never write there
  --top N     only the rows of the list's first N entries (heuristic rank below N), for a tuner that decodes within
              them (`--candidates list:N`, `verify --tune-candidates list:N`)
  --tie R     where cuBLASLt's first pick (heuristic rank 0) runs within a factor R of the fastest kept row, the
              kept rows faster than it are left out, so the first pick is the label: a configuration that beats
              the first pick by less than the timing noise is not taught as the better one

The kept rows' times are unchanged; a shape without a first pick keeps its rows, one without a listed row is left
out under --list and --top. The schema and capability file
are copied beside the output, which is written to a temporary file and renamed into place. Prints how many shapes
changed label.

  python3 experiments/gemm_tune_labels.py --list --tie 1.02 IN.csv.gz OUT.csv.gz
Python 3 standard library only."""
import argparse
import gzip
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'collect', 'scripts'))
from gemm_table_io import check_header, copy_sidecars, open_table, shape_key  # noqa: E402


def keep_rows(rows, time_at, rank_at, list_only, top, tie):
    """The rows of one shape (split lines) kept under the rules above"""
    if list_only or top:
        rows = [r for r in rows if r[rank_at] != '' and (not top or int(r[rank_at]) < top)]
    first = [r for r in rows if r[rank_at] == '0']
    if not rows or not first or tie is None:
        return rows
    t_first = float(first[0][time_at])
    if t_first <= tie * min(float(r[time_at]) for r in rows):
        rows = [r for r in rows if float(r[time_at]) >= t_first]
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('table', help='a table heurist-collect gemm wrote (or concat_tables.py)')
    ap.add_argument('out', help='the training table, .csv.gz')
    ap.add_argument('--list', action='store_true', help="only the rows of cuBLASLt's list")
    ap.add_argument('--top', type=int, help="only the rows of the list's first N entries")
    ap.add_argument('--tie', type=float, help="the first pick is the label where it runs within this factor of the "
                    "fastest (>= 1)")
    a = ap.parse_args()
    if a.tie is not None and not a.tie >= 1:
        sys.exit('--tie %g: a factor >= 1' % a.tie)
    if a.top is not None and a.top < 1:
        sys.exit('--top %d: at least 1' % a.top)
    shapes, order = {}, []
    with open_table(a.table) as f:
        header = f.readline().rstrip('\n')
        check_header(a.table, header)
        cols = header.split(',')
        for name in ('time_us', 'heuristic_rank'):
            if name not in cols:
                sys.exit('%s:1: no %s column' % (a.table, name))
        time_at, rank_at = cols.index('time_us'), cols.index('heuristic_rank')
        for n, line in enumerate(f, 2):
            line = line.rstrip('\n')
            row = line.split(',')
            if len(row) != len(cols):
                sys.exit('%s:%d: %d fields, the header has %d' % (a.table, n, len(row), len(cols)))
            try:
                float(row[time_at])
            except ValueError:
                sys.exit('%s:%d: time_us %r is no number' % (a.table, n, row[time_at]))
            if row[rank_at] != '' and not row[rank_at].isdigit():
                sys.exit('%s:%d: heuristic_rank %r is no rank' % (a.table, n, row[rank_at]))
            key = shape_key(line, header)
            if key not in shapes:
                shapes[key] = []
                order.append(key)
            shapes[key].append(row)
    changed = dropped = 0
    tmp = a.out + '.tmp'
    with gzip.open(tmp, 'wt') as f:
        f.write(header + '\n')
        for key in order:
            rows = shapes[key]
            kept = keep_rows(rows, time_at, rank_at, a.list, a.top, a.tie)
            if not kept:
                dropped += 1
                continue
            changed += min(rows, key=lambda r: float(r[time_at])) is not min(kept, key=lambda r: float(r[time_at]))
            for r in kept:
                f.write(','.join(r) + '\n')
    os.replace(tmp, a.out)
    copy_sidecars(a.table, a.out)
    print('%s: %d shapes, %d with another label, %d left out without a listed row (list %s, top %s, tie %s)'
          % (a.out, len(order), changed, dropped, 'only' if a.list or a.top else 'and the rest', a.top, a.tie))


if __name__ == '__main__':
    main()
