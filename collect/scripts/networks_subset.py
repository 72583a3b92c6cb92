#!/usr/bin/env python3
"""A stratified subset of the out-of-pool networks set as heurist-collect verify's problem list: every FP32 key
asked under each precision class it lists (strict, tf32, conversion), FP16 and BF16 keys under their own, drawn
round-robin over the cells (network, direction, class) in a seeded order, so that any prefix of the list (a run
stopped by --time-limit, a --limit) samples every network, direction and class about evenly.

  python3 collect/scripts/networks_subset.py --networks datasets/h100/networks/networks.tsv --count 1200 \\
      --seed 0 --out LIST.txt
  -> LIST.txt: "KEY NETWORK CLASS" lines (verify's KEY [SOURCE [PRECISION]]; an FP16 or BF16 key's class is tf32)

The same for a plain key list (the first field of each line, e.g. split_heldout.py's held-out keys), every key
tagged with one source, so that an in-pool list is drawn as the out-of-pool one is (cells: direction x class):

  python3 collect/scripts/networks_subset.py --keys h100.test.keys.txt --source pool --count 2000 --seed 0 --out LIST.txt
Python 3 standard library only."""
import argparse
import os
import random
import sys

CLASSES_FP32 = ('strict', 'tf32', 'conversion')


def add_key(cells, key, network, where):
    """Files key under (network, direction, class), an FP32 key once per class; where names it in an error."""
    parts = key.split('-')
    if len(parts) < 3 or not parts[-1] or parts[-1][0] not in 'FBW':
        sys.exit('%s: %s is not a convolution key (...-TYPE-F|B|W)' % (where, key))
    dtype, direction = parts[-2], parts[-1][0]
    if dtype == 'FP32':
        for cls in CLASSES_FP32:
            cells.setdefault((network, direction, cls), []).append((key, cls))
    else:
        cells.setdefault((network, direction, dtype), []).append((key, 'tf32'))


def cells_of(path):
    """{(network, direction, class): [key, ...]} from networks.tsv (key, network, ...)."""
    cells = {}
    with open(path) as f:
        header = f.readline().rstrip('\n').split('\t')
        if header[:2] != ['key', 'network']:
            sys.exit('%s:1: expected the columns key, network, ... (conv_networks.py writes them)' % path)
        for n, line in enumerate(f, 2):
            cols = line.rstrip('\n').split('\t')
            if len(cols) < 2:
                sys.exit('%s:%d: expected a key and a network' % (path, n))
            add_key(cells, cols[0], cols[1], '%s:%d' % (path, n))
    return cells


def cells_of_keys(path, source):
    """{(source, direction, class): [key, ...]} from a key list (the first field of each non-empty line)."""
    cells = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                add_key(cells, line.split()[0], source, '%s:%d' % (path, n))
    return cells


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument('--networks', help='networks.tsv (conv_networks.py)')
    what.add_argument('--keys', help='a key list, one key a line (its first field)')
    ap.add_argument('--source', default='pool', help='the source written for every key of --keys')
    ap.add_argument('--count', type=int, required=True, help='rows to write')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cells = cells_of(a.networks) if a.networks else cells_of_keys(a.keys, a.source)
    order = sorted(cells)
    for c in order:
        rng.shuffle(cells[c])
    rng.shuffle(order)
    rows, at = [], 0
    while len(rows) < a.count and any(at < len(cells[c]) for c in order):
        for c in order:
            if at < len(cells[c]) and len(rows) < a.count:
                key, cls = cells[c][at]
                rows.append('%s %s %s' % (key, c[0], cls))
        at += 1
    tmp = a.out + '.tmp'
    with open(tmp, 'w') as f:
        f.write('\n'.join(rows) + '\n')
    os.replace(tmp, a.out)
    print('%s: %d rows over %d cells (source x direction x class)' % (a.out, len(rows), len(order)))


if __name__ == '__main__':
    main()
