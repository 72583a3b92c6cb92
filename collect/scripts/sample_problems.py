#!/usr/bin/env python3
"""Draws a stratified, seeded sample of the distinct convolution geometries of the shipped MIOpen find-dbs
and writes cuDNN collection problem keys (MIOpen find-db key syntax) for directions F, B, W in FP32 and FP16.

A geometry is a key with its data type and direction removed, written in the forward convention (MIOpen's
B and W keys name dy as "in": they are swapped back so that one convolution is one geometry whatever
direction it was measured in). Strata: filter class x stride class x group class x spatial dims x log2-FLOP
bucket of the forward convolution. Each stratum gets its proportional share of the sample, at least one.

Caps (so that a problem fits an H100 and collection time stays bounded):
  - every tensor (x, y, w) at most --max-tensor-mib MiB in FP32 (default 512);
  - forward FLOPs (2 N K C/G out_spatial filter) at most 2^--max-log2-flops (default 35, about 34 GFLOP);
  - layouts NCHW and NCDHW only (plain 2-D / 3-D; the collector also accepts NHWC keys).
The output lists keys chunk by chunk (geometries in random order, all six keys of a geometry in the same
chunk), one file per chunk, so that any prefix of chunks is itself a stratified random sample.

--exclude KEYFILES drops the geometries of those key lists (any direction or data type, every numeric field
equal) before sampling: the same space's candidates for a later collection (collect/scripts/active_keys.py)
that overlap neither the pool nor a held-out set. --dtypes chooses the data types written (FP32,FP16).

Python 3 standard library only:
  python3 collect/scripts/sample_problems.py --geometries 5000 --chunk 250 --out datasets/h100/problems
  python3 collect/scripts/sample_problems.py --geometries 6000 --seed 1 --chunk 6000 --dtypes FP32,FP16,BF16 \\
      --exclude datasets/h100/problems/chunk_*.txt datasets/h100/networks/chunk_*.txt --out CANDIDATES
"""
import argparse
import bz2
import math
import os
import random
import sys


def parse(key):
    """Returns the forward-convention geometry tuple of a key, or None for keys outside the sample."""
    t = key.split('-')
    if len(t) < 15:
        return None
    d = t[-1]
    direction, suffix = d[0], d[1:]
    groups = 1
    for part in suffix.split('_'):
        if part.startswith('g') and part[1:].isdigit():
            groups = int(part[1:])
        elif part:
            return None  # other suffixes (transpose and the like) are left out
    layout = t[-3]
    if len(t) == 15 and layout == "NCHW":
        nd = 2
    elif len(t) == 17 and layout == "NCDHW":
        nd = 3
    else:
        return None
    try:
        i = 0
        cin = int(t[i]); i += 1
        insp = tuple(int(v) for v in t[i:i + nd]); i += nd
        fil = tuple(int(v) for v in t[i].split('x')); i += 1
        cout = int(t[i]); i += 1
        outsp = tuple(int(v) for v in t[i:i + nd]); i += nd
        n = int(t[i]); i += 1
        pad = tuple(int(v) for v in t[i].split('x')); i += 1
        stride = tuple(int(v) for v in t[i].split('x')); i += 1
        dil = tuple(int(v) for v in t[i].split('x')); i += 1
        bias = int(t[i])
    except ValueError:
        return None
    if any(len(v) != nd for v in (fil, pad, stride, dil)):
        return None
    if direction in 'BW':
        cin, cout, insp, outsp = cout, cin, outsp, insp
    elif direction != 'F':
        return None
    if cin % groups or cout % groups:
        return None
    for k in range(nd):
        expect = (insp[k] + 2 * pad[k] - dil[k] * (fil[k] - 1) - 1) // stride[k] + 1
        if expect != outsp[k] or expect < 1:
            return None
    return (nd, cin, insp, fil, cout, outsp, n, pad, stride, dil, bias, groups)


def flops(g):
    nd, cin, insp, fil, cout, outsp, n, pad, stride, dil, bias, groups = g
    return 2.0 * n * cout * (cin // groups) * math.prod(outsp) * math.prod(fil)


def max_tensor_bytes(g):
    nd, cin, insp, fil, cout, outsp, n, pad, stride, dil, bias, groups = g
    return 4 * max(n * cin * math.prod(insp), n * cout * math.prod(outsp), cout * (cin // groups) * math.prod(fil))


def stratum(g):
    nd, cin, insp, fil, cout, outsp, n, pad, stride, dil, bias, groups = g
    fcls = 'x'.join(map(str, fil)) if all(f == fil[0] for f in fil) and fil[0] in (1, 3, 5, 7) else 'other'
    s = max(stride)
    scls = str(s) if s <= 2 else 'gt2'
    gcls = '1' if groups == 1 else ('depthwise' if groups == cin else 'grouped')
    return (nd, fcls, scls, gcls, int(math.log2(max(flops(g), 1.0))) // 3)


def key(g, dtype, direction):
    nd, cin, insp, fil, cout, outsp, n, pad, stride, dil, bias, groups = g
    layout = 'NCHW' if nd == 2 else 'NCDHW'
    if direction in 'BW':
        cin, cout, insp, outsp = cout, cin, outsp, insp
    x = lambda v: 'x'.join(map(str, v))
    fields = [str(cin)] + [str(v) for v in insp] + [x(fil), str(cout)] + [str(v) for v in outsp]
    fields += [str(n), x(pad), x(stride), x(dil), str(bias), layout, dtype, direction]
    return '-'.join(fields) + ('_g%d' % groups if groups > 1 else '')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--fdb', nargs='+', default=['datasets/miopen/gfx90878.HIP.fdb.txt.bz2',
                                                  'datasets/miopen/gfx906_60.HIP.fdb.txt.bz2'])
    ap.add_argument('--geometries', type=int, default=5000)
    ap.add_argument('--chunk', type=int, default=250, help='geometries per chunk file')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--max-tensor-mib', type=float, default=512)
    ap.add_argument('--max-log2-flops', type=float, default=35)
    ap.add_argument('--exclude', nargs='*', default=[], help="key lists whose geometries are left out")
    ap.add_argument('--dtypes', default='FP32,FP16', help='data types written, comma-separated (FP32, FP16, BF16)')
    ap.add_argument('--out', required=True, help='folder for chunk_NNN.txt')
    a = ap.parse_args()
    dtypes = a.dtypes.split(',')
    if not dtypes or any(d not in ('FP32', 'FP16', 'BF16') for d in dtypes):
        ap.error('--dtypes %r: expected FP32, FP16 and BF16, comma-separated' % a.dtypes)
    excluded = set()
    for path in a.exclude:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                k = line.split('=', 1)[0].split()[0] if line.strip() else ''
                if not k or k.startswith('#') or k == 'key':
                    continue
                g = parse(k.split('\t')[0])
                if g is None:
                    sys.exit('%s:%d: %r is not a 2-D / 3-D NCHW key of the sample' % (path, n, k))
                excluded.add(g)

    geos, seen, dropped = [], set(), {'outside the sample (layout, suffix, size check)': 0, 'tensor cap': 0,
                                       'FLOP cap': 0, 'in an --exclude list': 0}
    for path in a.fdb:
        with bz2.open(path, 'rt') as f:
            for line in f:
                g = parse(line.split('=', 1)[0])
                if g is None:
                    dropped['outside the sample (layout, suffix, size check)'] += 1
                    continue
                if g in seen:
                    continue
                seen.add(g)
                if g in excluded:
                    dropped['in an --exclude list'] += 1
                elif max_tensor_bytes(g) > a.max_tensor_mib * 2**20:
                    dropped['tensor cap'] += 1
                elif math.log2(max(flops(g), 1.0)) > a.max_log2_flops:
                    dropped['FLOP cap'] += 1
                else:
                    geos.append(g)
    geos.sort()
    rng = random.Random(a.seed)
    strata = {}
    for g in geos:
        strata.setdefault(stratum(g), []).append(g)
    want = min(a.geometries, len(geos))
    sample = []
    for s in sorted(strata):
        members = strata[s]
        take = max(1, round(want * len(members) / len(geos)))
        sample += rng.sample(members, min(take, len(members)))
    rng.shuffle(sample)
    sample = sample[:want] if len(sample) > want else sample
    os.makedirs(a.out, exist_ok=True)
    n_chunks = (len(sample) + a.chunk - 1) // a.chunk
    for c in range(n_chunks):
        path = os.path.join(a.out, 'chunk_%03d.txt' % c)
        with open(path + '.tmp', 'w') as f:
            for g in sample[c * a.chunk:(c + 1) * a.chunk]:
                for dtype in dtypes:
                    for direction in 'FWB':
                        f.write(key(g, dtype, direction) + '\n')
        os.replace(path + '.tmp', path)
    print('%d distinct geometries kept of %d seen, %d strata; sampled %d into %d chunks of %d geometries (%d keys)'
          % (len(geos), len(seen), len(strata), len(sample), n_chunks, a.chunk, 3 * len(dtypes) * len(sample)))
    for why, n in dropped.items():
        print('  dropped: %s: %d' % (why, n))


if __name__ == '__main__':
    sys.exit(main())
