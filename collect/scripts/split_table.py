#!/usr/bin/env python3
"""Splits a table heurist-collect gemm wrote by shape: a seeded share of the shapes is held out, or with --hold
every shape of the named groups (the values of a column such as `family`: an out-of-source split, no group on
both sides). Writes the training table and the held-out table (gzip CSV, the same header and row order), each
with a copy of the schema (and capability file, when present) beside it, so heurist trains on the first and
`heurist-collect verify --table` times the second.

  python3 collect/scripts/split_table.py --table datasets/h100/h100_cublaslt_gemm.csv.gz --share 0.2 --seed 0 \\
      --out-prefix /tmp/gemm
  -> /tmp/gemm.train.csv.gz (+ .schema.json, .caps.json), /tmp/gemm.test.csv.gz (+ .schema.json, .caps.json)
  python3 collect/scripts/split_table.py --table datasets/h200/h200_cublaslt_gemm_real.csv.gz \\
      --hold family=llama3,mistral,resnet50 --out-prefix /tmp/real
`heurist data split` (docs/cli.md) splits any table with its schema, --hold alike; this script stays for the
--share splits the recorded GEMM figures were measured on (Python's random.sample of the shapes).
Python 3 standard library only."""
import argparse
import gzip
import os
import random
import sys

from gemm_table_io import check_header, copy_sidecars, open_table, shape_key


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--table', required=True)
    ap.add_argument('--share', type=float, default=0.2)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--out-prefix', required=True)
    ap.add_argument('--hold', help='COLUMN=V1,V2,...: hold out every shape whose COLUMN is one of the values '
                    '(instead of --share)')
    a = ap.parse_args()
    if not 0 < a.share < 1:
        sys.exit('--share %g: expected a number in (0, 1)' % a.share)
    hold_col, hold = None, set()
    if a.hold:
        if '=' not in a.hold:
            sys.exit('--hold %s: expected COLUMN=V1,V2,...' % a.hold)
        hold_col, values = a.hold.split('=', 1)
        hold = set(v for v in values.split(',') if v)
    with open_table(a.table) as f:
        header = f.readline()
        rows = [l for l in f if l.strip()]
    check_header(a.table, header)
    columns = header.rstrip('\r\n').split(',')
    if hold_col is not None and hold_col not in columns:
        sys.exit('%s:1: no column %s (--hold)' % (a.table, hold_col))
    shapes = []
    seen, held, found = set(), set(), set()
    for i, l in enumerate(rows):
        key = shape_key(l, header)
        if key not in seen:
            seen.add(key)
            shapes.append(key)
            if hold_col is not None:
                value = l.rstrip('\r\n').split(',')[columns.index(hold_col)]
                found.add(value)
                if value in hold:
                    held.add(key)
    if hold - found:
        sys.exit('--hold: %s never appears in column %s' % (', '.join(sorted(hold - found)), hold_col))
    if hold_col is not None:
        test = held
    else:
        rng = random.Random(a.seed)
        test = set(rng.sample(shapes, int(len(shapes) * a.share)))
    for part, keep in (('train', lambda k: k not in test), ('test', lambda k: k in test)):
        path = '%s.%s.csv.gz' % (a.out_prefix, part)
        tmp = path + '.tmp'
        with gzip.open(tmp, 'wt') as f:
            f.write(header)
            for l in rows:
                if keep(shape_key(l, header)):
                    f.write(l)
        os.replace(tmp, path)
        copy_sidecars(a.table, path)
    print('%d shapes: %d training, %d held out (%s)' % (len(shapes), len(shapes) - len(test), len(test),
                                                       'seed %d' % a.seed if hold_col is None else a.hold))


if __name__ == '__main__':
    main()
