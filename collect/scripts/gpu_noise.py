#!/usr/bin/env python3
"""The run-to-run noise between two conv collections of the same keys, split by the GPU that measured each
problem in the second one (its GPU table, OUT.gpu.tsv, which heurist-collect writes beside the find-db):

    python3 collect/scripts/gpu_noise.py --a ONE_GPU.fdb.txt --b FOUR_GPUS.fdb.txt [--gpus-b FOUR_GPUS.fdb.txt.gpu.tsv]
                                         [--gpus-a ONE_GPU.fdb.txt.gpu.tsv]

Per GPU of b (and over all): problems, the share with the same fastest kernel, the best-time ratio b/a at p10,
p50 and p90, and the noise ratio, the p90 of max(r, 1/r): the figures of `heurist-collect noise`, computed the
same way (linear interpolation between order statistics). With the GPU tables, also each GPU's mean measuring
seconds a problem in b against the same problems' in a, which tells a slow GPU from a noisy one.
"""
import argparse
import math
import sys


def read_fdb(path):
    """key -> (fastest kernel name, its ms), the first fastest entry on ties."""
    out = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            key, sep, rest = line.rstrip("\n").partition("=")
            if not sep:
                continue
            best = None
            for entry in rest.split(";"):
                name, _, vals = entry.partition(":")
                if not vals:
                    sys.exit(f"gpu_noise: {path}:{number}: entry '{entry[:40]}' has no time")
                ms = float(vals.split(",")[0])
                if best is None or ms < best[1]:
                    best = (name, ms)
            if best:
                out[key] = best
    return out


def read_gpus(path):
    """key -> (gpu label "worker/bus", seconds)."""
    out = {}
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        try:
            ki, wi, bi, si = (header.index(c) for c in ("key", "worker", "bus", "seconds"))
        except ValueError:
            sys.exit(f"gpu_noise: {path}: not a GPU table (header {header})")
        for line in f:
            c = line.rstrip("\n").split("\t")
            if len(c) == len(header):
                out[c[ki]] = (f"GPU {c[wi]} ({c[bi]})", float(c[si]))
    return out


def percentile(v, p):
    v = sorted(v)
    pos = p / 100.0 * (len(v) - 1)
    lo = int(math.floor(pos))
    if lo >= len(v) - 1:
        return v[-1]
    return v[lo] + (pos - lo) * (v[lo + 1] - v[lo])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the first collection (the baseline), a find-db")
    ap.add_argument("--b", required=True, help="the second collection, a find-db")
    ap.add_argument("--gpus-b", help="b's GPU table (default: B.gpu.tsv)")
    ap.add_argument("--gpus-a", help="a's GPU table (default: A.gpu.tsv, when it exists)")
    args = ap.parse_args()
    a, b = read_fdb(args.a), read_fdb(args.b)
    gb = read_gpus(args.gpus_b or args.b + ".gpu.tsv")
    try:
        ga = read_gpus(args.gpus_a or args.a + ".gpu.tsv")
    except OSError:
        ga = {}
    groups = {}
    for key, (name_b, ms_b) in b.items():
        if key not in a:
            continue
        name_a, ms_a = a[key]
        label = gb.get(key, ("GPU ?", 0.0))[0]
        for g in (label, "all"):
            groups.setdefault(g, []).append((ms_b / ms_a, name_a == name_b, key))
    if not groups:
        sys.exit("gpu_noise: the two files share no key")
    print("gpu\tproblems\tsame_fastest\tratio_p10\tratio_p50\tratio_p90\tnoise_ratio\tsec_b\tsec_a")
    for g in sorted(groups, key=lambda s: (s == "all", s)):
        rows = groups[g]
        r = [x[0] for x in rows]
        s = [x if x >= 1 else 1 / x for x in r]
        sec_b = [gb[x[2]][1] for x in rows if x[2] in gb]
        sec_a = [ga[x[2]][1] for x in rows if x[2] in ga]
        mean = lambda v: f"{sum(v) / len(v):.4f}" if v else "-"
        print(f"{g}\t{len(rows)}\t{sum(x[1] for x in rows) / len(rows):.4f}\t{percentile(r, 10):.4f}\t"
              f"{percentile(r, 50):.4f}\t{percentile(r, 90):.4f}\t{percentile(s, 90):.4f}\t{mean(sec_b)}\t{mean(sec_a)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
