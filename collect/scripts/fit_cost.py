#!/usr/bin/env python3
"""Fits the cost models that deal a collection's problems longest first (collect_conv_cost_s in
collect/problem.c, collect_gemm_shape_cost_s in collect/gemm.c) and checks them against measured times.

    python3 collect/scripts/fit_cost.py conv [--fdb datasets/h100/h100_cudnn_conv.fdb.txt.bz2] [--real OUT.gpu.tsv ...]
    python3 collect/scripts/fit_cost.py gemm [--logs datasets/h100/logs/gemm_run1.log ...] [--real OUT.gpu.tsv ...]

conv: a problem's measuring time is not logged, so it is rebuilt from the find-db's kernel times by the timing
method (collect/README.md, cudnn_conv.c gpu_time): per timed candidate of time t (ms) a warm-up, then R = 5
repeats of n = ceil(0.2 / t) launches (1..1000) behind a spin of 0.02 + 0.02 n R ms (the host queues them at
about 10 us a launch), plus CAND_MS of synchronisation and events; a candidate more than 5x the problem's best
is timed by two warm-ups alone; per problem PROBLEM_MS (descriptors, fills) and HEUR_MS a heuristic call (three
for FP32: the TF32, strict and conversion classes). CAND_MS is chosen so that the mean is the pool collection's
59 ms a problem (30,000 problems in 1,768 s on one H100). Then log(seconds) is regressed on log FLOPs,
log bytes (x, y, w), the direction, the data type, 3-D and grouped, by least squares.

gemm: the run logs print a shape's measured seconds every 25 shapes ("shape i/N (M,N,K,dtype,ta,tb): ..., S s"):
log(seconds) is regressed on log FLOPs, log bytes, the data type and the transposes of those shapes.

Prints the coefficients as C initialisers, the fit's R^2 and Spearman rank correlations of the fitted model
and of the model in the code before (the hand-set one) with the targets; --real adds the correlations with
the per-problem seconds of heurist-collect's GPU tables (OUT.gpu.tsv, the `seconds` column).
No dependency beyond Python's standard library.
"""
import argparse
import bz2
import gzip
import math
import re
import sys

CONV_FEATURES = ["1", "log_flops", "log_bytes", "log_flops2", "dir_B", "dir_W", "half", "3d", "grouped", "half_3d",
                 "half_B", "half_W"]
GEMM_FEATURES = ["1", "log_flops", "log_bytes", "fp16", "fp32", "tf32", "trans_a", "trans_b"]

REPEATS, MIN_REPEAT_MS, SLOW = 5, 0.2, 5.0
PROBLEM_MS, HEUR_MS, MEAN_MS = 2.0, 1.0, 59.0
DTYPE_BYTES = {"FP32": 4, "FP16": 2, "BF16": 2}


def conv_parse(key):
    """(features dict, flops, bytes, nd) of a MIOpen key; None when it does not parse."""
    body, _, _ = key.partition("=")
    f = body.split("-")
    if len(f) not in (15, 17):
        return None
    nd = 2 if len(f) == 15 else 3
    tail = f[-1].split("_")
    direction, groups = tail[0], 1
    for s in tail[1:]:
        if s.startswith("g") and s[1:].isdigit():
            groups = int(s[1:])
    dtype = f[-2]
    try:
        c = int(f[0])
        in_sp = [int(v) for v in f[1:1 + nd]]
        fil = [int(v) for v in f[1 + nd].split("x")]
        k = int(f[2 + nd])
        out_sp = [int(v) for v in f[3 + nd:3 + 2 * nd]]
        n = int(f[3 + 2 * nd])
    except ValueError:
        return None
    # the key's "in" is x for F, dy for B and W (MIOpen's convention)
    if direction == "F":
        xc, xs, yc, ys = c, in_sp, k, out_sp
    else:
        xc, xs, yc, ys = k, out_sp, c, in_sp
    prod = lambda v: math.prod(v) if v else 1
    flops = 2.0 * n * yc * prod(ys) * (xc / groups) * prod(fil)
    elems = n * xc * prod(xs) + n * yc * prod(ys) + yc * (xc / groups) * prod(fil)
    nbytes = DTYPE_BYTES.get(dtype, 4) * elems
    lf = math.log(max(flops, 1.0))
    half = float(dtype in ("FP16", "BF16"))
    feats = {"1": 1.0, "log_flops": lf, "log_bytes": math.log(max(nbytes, 1.0)), "log_flops2": (lf - 20.0) ** 2 / 10.0,
             "dir_B": float(direction == "B"), "dir_W": float(direction == "W"), "half": half, "3d": float(nd == 3),
             "grouped": float(groups > 1), "half_3d": half * (nd == 3), "half_B": half * (direction == "B"),
             "half_W": half * (direction == "W")}
    return feats, flops, nbytes, nd, dtype


def conv_cost_before(flops, nbytes, nd):
    """collect_conv_cost_s as hand-set before the fit: 0.03 s + the slowest candidates' time."""
    return 0.03 + (3.0 if nd == 3 else 1.0) * (flops / 10e12 + nbytes / 100e9)


def conv_rebuild_parts(times_ms):
    """(GPU-side ms, candidates timed) of a problem's timing from its kernels' times (see the docstring)."""
    best = min(times_ms)
    ms = 0.0
    for t in times_ms:
        if t > SLOW * best:
            ms += 2 * t
            continue
        n = min(1000, max(1, math.ceil(MIN_REPEAT_MS / max(t, 1e-4))))
        spin = min(50.0, 0.02 + 0.02 * n * REPEATS)
        ms += t + spin + REPEATS * n * t
    return ms, len(times_ms)


def open_text(path):
    if path.endswith(".bz2"):
        return bz2.open(path, "rt")
    if path.endswith(".gz"):
        return gzip.open(path, "rt")
    return open(path)


def read_fdb(path):
    """key -> list of kernel times (ms)."""
    out = {}
    with open_text(path) as f:
        for line in f:
            key, sep, rest = line.rstrip("\n").partition("=")
            if not sep:
                continue
            times = []
            for entry in rest.split(";"):
                name, _, vals = entry.partition(":")
                if vals:
                    times.append(float(vals.split(",")[0]))
            if times:
                out[key] = times
    return out


def read_real(paths):
    """key -> seconds from GPU tables (the last table listing a key wins)."""
    out = {}
    for p in paths:
        with open(p) as f:
            header = f.readline().rstrip("\n").split("\t")
            ki, si = header.index("key"), header.index("seconds")
            for line in f:
                cols = line.rstrip("\n").split("\t")
                if len(cols) == len(header):
                    out[cols[ki]] = float(cols[si])
    return out


def lstsq(rows, ys):
    """Least squares by the normal equations (Gauss-Jordan with partial pivoting, a small ridge for rank)."""
    p = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) + (1e-6 if i == j else 0.0) for j in range(p)] for i in range(p)]
    b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(p)]
    for c in range(p):
        piv = max(range(c, p), key=lambda r: abs(a[r][c]))
        a[c], a[piv], b[c], b[piv] = a[piv], a[c], b[piv], b[c]
        for r in range(p):
            if r != c and a[c][c] != 0:
                m = a[r][c] / a[c][c]
                a[r] = [x - m * y for x, y in zip(a[r], a[c])]
                b[r] -= m * b[c]
    return [b[i] / a[i][i] for i in range(p)]


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def pearson(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def spearman(x, y):
    return pearson(ranks(x), ranks(y))


def predict(coef, names, feats):
    return math.exp(sum(c * feats[n] for c, n in zip(coef, names)))


def report(name, coef, names, xs, ys):
    fit = [sum(c * f for c, f in zip(coef, row)) for row in xs]
    mean = sum(ys) / len(ys)
    ss = sum((y - mean) ** 2 for y in ys)
    r2 = 1 - sum((y - f) ** 2 for y, f in zip(ys, fit)) / ss if ss > 0 else float("nan")
    print(f"{name}: {len(ys)} problems, R^2 of log seconds {r2:.3f}")
    print("coefficients (C): {" + ", ".join(f"{c:.4f}" for c in coef) + "}  /* " + ", ".join(names) + " */")


def fit_conv(args):
    fdb = read_fdb(args.fdb)
    probs = []
    for key, times in fdb.items():
        parsed = conv_parse(key)
        if parsed is None:
            continue
        feats, flops, nbytes, nd, dtype = parsed
        gpu_ms, cands = conv_rebuild_parts(times)
        heur = HEUR_MS * (3 if dtype == "FP32" else 1)
        probs.append((key, feats, flops, nbytes, nd, gpu_ms, cands, heur))
    # CAND_MS: the per-candidate overhead that brings the mean to the pool collection's
    total_gpu = sum(p[5] + PROBLEM_MS + p[7] for p in probs)
    total_cands = sum(p[6] for p in probs)
    cand_ms = max(0.0, (MEAN_MS * len(probs) - total_gpu) / total_cands)
    print(f"conv: {len(probs)} problems of {args.fdb}; per-candidate overhead {cand_ms:.3f} ms "
          f"(mean {MEAN_MS} ms a problem), {total_cands / len(probs):.1f} candidates timed a problem")
    ys = [math.log((p[5] + PROBLEM_MS + p[7] + cand_ms * p[6]) / 1e3) for p in probs]
    xs = [[p[1][n] for n in CONV_FEATURES] for p in probs]
    coef = lstsq(xs, ys)
    report("conv fit", coef, CONV_FEATURES, xs, ys)
    new = [predict(coef, CONV_FEATURES, p[1]) for p in probs]
    old = [conv_cost_before(p[2], p[3], p[4]) for p in probs]
    print(f"Spearman with the rebuilt seconds: fitted {spearman(new, ys):.3f}, before {spearman(old, ys):.3f}")
    if args.real:
        real = read_real(args.real)
        keyed = {}
        for key in real:
            parsed = conv_parse(key)
            if parsed:
                keyed[key] = parsed
        ks = list(keyed)
        r = [real[k] for k in ks]
        new_r = [predict(coef, CONV_FEATURES, keyed[k][0]) for k in ks]
        old_r = [conv_cost_before(keyed[k][1], keyed[k][2], keyed[k][3]) for k in ks]
        print(f"Spearman with the measured seconds of {len(ks)} problems ({', '.join(args.real)}): "
              f"fitted {spearman(new_r, r):.3f}, before {spearman(old_r, r):.3f}")
        if args.coef:
            c = [float(v) for v in args.coef.split(",")]
            code = [predict(c, CONV_FEATURES, keyed[k][0]) for k in ks]
            print(f"  the code's coefficients (--coef): {spearman(code, r):.3f}")


GEMM_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "tf32": 4, "fp8e4m3": 1}  # A and B (collect_gemm_dtype_bytes)
GEMM_OUT_BYTES = dict(GEMM_BYTES, fp8e4m3=2)  # C and D: FP8 GEMMs write bf16 (collect_gemm_dtype_out_bytes)


def gemm_feats(key):
    f = key.split(",")
    m, n, k, dtype, ta, tb = f[:6]
    m, n, k = int(m), int(n), int(k)
    batch = int(f[6]) if len(f) > 6 else 1  # a batched key ends with its batch (collect/gemm.h)
    if dtype not in GEMM_BYTES:
        raise SystemExit(f"gemm key {key}: data type {dtype!r}, expected one of {', '.join(GEMM_BYTES)}")
    flops = 2.0 * m * n * k * batch
    nbytes = (GEMM_BYTES[dtype] * (m * k + k * n) + GEMM_OUT_BYTES[dtype] * m * n) * batch
    return {"1": 1.0, "log_flops": math.log(flops), "log_bytes": math.log(nbytes), "fp16": float(dtype == "fp16"),
            "fp32": float(dtype == "fp32"), "tf32": float(dtype == "tf32"), "trans_a": float(ta == "T"),
            "trans_b": float(tb == "T")}, (m, n, k, dtype)


def gemm_cost_before(m, n, k, dtype, n_enum=64, n_heur=32):
    """collect_gemm_shape_cost_s as hand-set before the fit (scripts/gemm_shapes.py's model)."""
    peak = {"bf16": 600e12, "fp16": 600e12, "fp32": 50e12, "tf32": 300e12, "fp8e4m3": 1200e12}[dtype]
    e = GEMM_BYTES[dtype]
    t = max(2.0 * m * n * k / peak, e * (m * k + k * n + m * n) / 3.35e12) * 1e6 + 4.0
    groups = [(1.1, min(n_heur, 8), 0), (2.5, 0.75 * n_enum, 0), (6.0, 0.25 * n_enum, 1)]
    us = 5000.0 + 3.0 * n_enum * 10.0
    for factor, count, slow in groups:
        tc = factor * t
        if slow:
            us += count * (40.0 + 2.0 * tc)
            continue
        batch = min(64.0, max(1.0, math.ceil(100.0 / tc)))
        us += count * (40.0 + tc + 1.5 * 4.0 * batch * 3.0 + 3.0 * batch * tc)
    return us / 1e6


SHAPE_LINE = re.compile(r"shape \d+/\d+ \(([^)]*)\): .*?, ([0-9.]+) s;")


def fit_gemm(args):
    seen = {}
    for path in args.logs:
        with open(path) as f:
            for line in f:
                m = SHAPE_LINE.search(line)
                if m and float(m.group(2)) > 0:
                    seen.setdefault(m.group(1), float(m.group(2)))
    keys = list(seen)
    xs, ys, before = [], [], []
    for key in keys:
        feats, (m, n, k, dtype) = gemm_feats(key)
        xs.append([feats[f] for f in GEMM_FEATURES])
        ys.append(math.log(seen[key]))
        before.append(gemm_cost_before(m, n, k, dtype))
    print(f"gemm: {len(keys)} shapes with a logged time in {', '.join(args.logs)}")
    coef = lstsq(xs, ys)
    report("gemm fit", coef, GEMM_FEATURES, xs, ys)
    fitted = [sum(c * f for c, f in zip(coef, row)) for row in xs]
    # leave-one-out: each shape predicted by the fit of the others (the honest figure on 100 points)
    loo = []
    for i in range(len(keys)):
        c = lstsq(xs[:i] + xs[i + 1:], ys[:i] + ys[i + 1:])
        loo.append(sum(a * b for a, b in zip(c, xs[i])))
    print(f"Spearman with the logged seconds: fitted {spearman(fitted, ys):.3f} (leave-one-out {spearman(loo, ys):.3f}), "
          f"before {spearman(before, ys):.3f}")
    if args.real:
        real = read_real(args.real)
        ks = [k for k in real if k.count(",") >= 5]
        r = [real[k] for k in ks]
        new_r = [predict(coef, GEMM_FEATURES, gemm_feats(k)[0]) for k in ks]
        old_r = [gemm_cost_before(*gemm_feats(k)[1]) for k in ks]
        print(f"Spearman with the measured seconds of {len(ks)} shapes: fitted {spearman(new_r, r):.3f}, "
              f"before {spearman(old_r, r):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["conv", "gemm"])
    ap.add_argument("--fdb", default="datasets/h100/h100_cudnn_conv.fdb.txt.bz2")
    ap.add_argument("--logs", nargs="+", default=["datasets/h100/logs/gemm_run1.log", "datasets/h100/logs/gemm_noise.log"])
    ap.add_argument("--real", nargs="*", default=[], help="GPU tables (OUT.gpu.tsv) with measured seconds")
    ap.add_argument("--coef", help="comma-separated coefficients to check against --real (conv)")
    args = ap.parse_args()
    if args.kind == "conv":
        fit_conv(args)
    else:
        fit_gemm(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
