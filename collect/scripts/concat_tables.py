#!/usr/bin/env python3
"""Concatenates tables heurist-collect gemm wrote (the same header) into one, so that heurist trains on two pools
at once: a pool of real-workload shapes and the generator's pool, say. A shape (M, N, K, dtype, trans_a,
trans_b) of a later table that an earlier one already holds is dropped with all its rows: each shape keeps the
candidates and times of the first table that has it, and a shape held out of the first table's groups never
reaches training through the second. The group column (the schema's "group", e.g. `family`) keeps each table's
values, so the second pool's groups are groups of their own for GroupKFold; --prefix renames a table's groups
(gen: gives gen:llm, gen:conv) where two pools name groups alike. --exclude drops every shape of the tables it
names (a held-out set, so that no held-out shape trains through the other pool). The output carries the first
table's schema and capability file beside it; a later table whose schema differs is refused.

  python3 collect/scripts/concat_tables.py --out /tmp/both.csv.gz \\
      datasets/h100/h100_cublaslt_gemm_real.csv.gz datasets/h100/h100_cublaslt_gemm.csv.gz
  -> /tmp/both.csv.gz (+ .schema.json, .caps.json)
  python3 collect/scripts/concat_tables.py --out /tmp/train.csv.gz --exclude /tmp/real.test.csv.gz \\
      /tmp/real.train.csv.gz /tmp/gen.train.csv.gz --prefix 2=gen:
Python 3 standard library only."""
import argparse
import gzip
import json
import os
import sys

from gemm_table_io import check_header, copy_sidecars, open_table, shape_key, sidecar


def read_schema(table):
    path = sidecar(table, '.schema.json')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('tables', nargs='+', help='tables in order of precedence (a shape is kept from the first)')
    ap.add_argument('--out', required=True, help='the concatenated table, .csv.gz')
    ap.add_argument('--exclude', action='append', default=[], help='a table whose shapes are left out; repeatable')
    ap.add_argument('--prefix', action='append', default=[],
                    help='N=TEXT: prefix the group values of the N-th table (1-based) with TEXT; repeatable')
    a = ap.parse_args()
    if not a.out.endswith('.csv.gz'):
        sys.exit('--out %s: expected a .csv.gz path' % a.out)
    prefixes = {}
    for p in a.prefix:
        n, sep, text = p.partition('=')
        if not sep or not n.isdigit() or not 1 <= int(n) <= len(a.tables) or not text:
            sys.exit('--prefix %s: expected N=TEXT with N a table between 1 and %d' % (p, len(a.tables)))
        prefixes[int(n) - 1] = text
    schema = read_schema(a.tables[0])
    group = schema.get('group') if schema else None
    header, seen, kept, tmp = None, set(), [], a.out + '.tmp'
    excluded = set()
    for table in a.exclude:
        with open_table(table) as f:
            h = f.readline()
            excluded |= {shape_key(l, h) for l in f if l.strip()}
    # the table is written beside its destination and renamed into place; an error leaves neither behind
    try:
        with gzip.open(tmp, 'wt') as out:
            for t, table in enumerate(a.tables):
                if t and read_schema(table) not in (None, schema):
                    sys.exit('%s: its schema differs from %s\'s' % (sidecar(table, '.schema.json'), a.tables[0]))
                with open_table(table) as f:
                    h = f.readline()
                    check_header(table, h)
                    if header is None:
                        header = h
                        out.write(h)
                        columns = h.rstrip('\r\n').split(',')
                    elif h != header:
                        sys.exit('%s:1: its header differs from %s\'s' % (table, a.tables[0]))
                    if t in prefixes and group not in columns:
                        sys.exit('%s:1: no group column to prefix (the schema names %s)' % (table, group))
                    gi = columns.index(group) if t in prefixes else -1
                    mine, rows, dropped = set(), 0, set()
                    for line in f:
                        if not line.strip():
                            continue
                        key = shape_key(line, header)
                        if key in seen or key in excluded:
                            dropped.add(key)
                            continue
                        mine.add(key)
                        if gi >= 0:
                            v = line.rstrip('\r\n').split(',')
                            v[gi] = prefixes[t] + v[gi]
                            line = ','.join(v) + '\n'
                        out.write(line)
                        rows += 1
                seen |= mine
                kept.append('%s: %d shapes, %d rows kept, %d shapes dropped (in an earlier table or excluded)'
                            % (table, len(mine), rows, len(dropped)))
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    os.replace(tmp, a.out)
    copy_sidecars(a.tables[0], a.out)
    print('\n'.join(kept))


if __name__ == '__main__':
    main()
