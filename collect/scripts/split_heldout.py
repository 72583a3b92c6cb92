#!/usr/bin/env python3
"""Splits a collected find-db by convolution geometry (all directions and types of one geometry on the same
side, as collect/scripts/sample_problems.py forms them): a seeded share of geometries is held out. Writes the
training lines, the held-out lines and the held-out keys in a seeded random order (verify's problem list).

  python3 collect/scripts/split_heldout.py --fdb H100.fdb.txt --share 0.2 --seed 0 --out-prefix /tmp/h100
  -> /tmp/h100.train.fdb.txt, /tmp/h100.test.fdb.txt, /tmp/h100.test.keys.txt
Python 3 standard library only."""
import argparse
import bz2
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sample_problems  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--fdb', required=True)
    ap.add_argument('--share', type=float, default=0.2)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--out-prefix', required=True)
    a = ap.parse_args()
    opener = bz2.open if a.fdb.endswith('.bz2') else open
    with opener(a.fdb, 'rt') as f:
        lines = [l.rstrip('\n') for l in f if l.strip()]
    geo = [sample_problems.parse(l.split('=', 1)[0]) for l in lines]
    if any(g is None for g in geo):
        sys.exit('%s: a key outside the sampler\'s vocabulary' % a.fdb)
    distinct = sorted(set(geo))
    rng = random.Random(a.seed)
    test = set(rng.sample(distinct, int(len(distinct) * a.share)))
    train_lines = [l for l, g in zip(lines, geo) if g not in test]
    test_lines = [l for l, g in zip(lines, geo) if g in test]
    keys = [l.split('=', 1)[0] for l in test_lines]
    rng.shuffle(keys)
    for suffix, rows in (('.train.fdb.txt', train_lines), ('.test.fdb.txt', test_lines), ('.test.keys.txt', keys)):
        with open(a.out_prefix + suffix, 'w') as f:
            f.write('\n'.join(rows) + '\n')
    print('%d geometries, %d held out; %d training lines, %d held-out lines' % (len(distinct), len(test),
                                                                                  len(train_lines), len(test_lines)))


if __name__ == '__main__':
    main()
