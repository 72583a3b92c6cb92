#!/usr/bin/env python3
"""Offline figures of an exported seq2seq tune model of the GEMM table (heurist export --format c of a `--task
tune` model, docs/tables.md) on a held-out table heurist-collect gemm wrote: per shape the runtime decodes within
the shape's measured configurations (its rows, as `heurist-collect verify --table` gives them, less the entries
of a fresh heuristic call), and the configuration it writes is looked up among the rows for its time.

Prints: how many decodes are one of the shape's rows (the share the table times), the geometric-mean speed-up over
cuBLASLt's first pick (heuristic_rank 0) with a 95% bootstrap interval over the shapes, its 10th / 50th / 90th
percentiles and worst, the shares slower and faster beyond --noise-ratio, the efficiency against the table's best
(model's and first pick's), the same per family when the table has a `family` column, and the decode's time (one
call through ctypes, median over the shapes). The times are the
table's (one timing per configuration), so a ratio within the noise ratio is a tie.

  python3 experiments/gemm_tune_offline.py --runtime DIR --table HELDOUT.csv.gz [--candidates rows|list|list:N]
      [--noise-ratio 1.02] [--bootstrap 2000] [--seed 0] [--cc cc] [--scores OUT.tsv]
  python3 experiments/gemm_tune_offline.py --calibrate SCORES.tsv... [--noise-ratio 1.02]

--candidates list gives the runtime only the entries of cuBLASLt's list (the rows with a heuristic rank), in the
list's order: the model then chooses among what cuBLASLt's heuristic proposes; list:N only its first N entries
(`heurist-collect verify --tune-candidates list:N`).

The vendor guard (heurist export --guard M of a tune model): a runtime exported with it is called through
P_tune_vendor with cuBLASLt's first pick, so the figures are the guarded tuner's (its override share printed).
--scores writes, per shape the table times, the unguarded decode's speed-up over the first pick and its margin,
P_score of the decoded configuration less P_score of the first pick (the model's log-probabilities; nan where the
first pick holds a value the model never writes, which the guard keeps). --calibrate
reads such files (the training families' out-of-fold shapes: models trained without them) and chooses M as
collect/scripts/gemm_offline.py chooses a selection guard: over margins 0 (no guard) and the 10th..90th
percentiles of the positive margins, the best geomean among those slower beyond the noise ratio on at most 2% of
the shapes; where none is, the smallest slower share among those of geomean >= 1.01; else the best geomean.

DIR holds the runtime's P.c and P.h; it is compiled into a shared library beside a temporary folder and called
through ctypes. Python 3 standard library and a C compiler only."""
import argparse
import csv
import ctypes
import glob
import gzip
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time

PROBLEM = ["M", "N", "K", "dtype", "trans_a", "trans_b", "batch"]


def load_runtime(folder, cc):
    headers = glob.glob(os.path.join(folder, "*.h"))
    if len(headers) != 1:
        sys.exit("%s: expected one exported runtime header, found %d" % (folder, len(headers)))
    prefix = os.path.basename(headers[0])[:-2]
    text = open(headers[0]).read()
    if "%s_tune(" % prefix not in text:
        sys.exit("%s: not a tune runtime (no %s_tune)" % (headers[0], prefix))
    sizes = {}
    for name in ("N_PROBLEM", "N_KERNEL"):
        m = re.search(r"#define %s_%s (\d+)" % (prefix.upper(), name), text)
        if not m:
            sys.exit("%s: no %s_%s" % (headers[0], prefix.upper(), name))
        sizes[name] = int(m.group(1))
    tmp = tempfile.mkdtemp(prefix="gemm_tune_offline_")
    lib = os.path.join(tmp, "rt.so")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", lib, os.path.join(folder, prefix + ".c"), "-lm"], check=True)
    rt = ctypes.CDLL(lib)
    for fn, res, args in (("problem_column", ctypes.c_char_p, [ctypes.c_int]),
                          ("kernel_column", ctypes.c_char_p, [ctypes.c_int]),
                          ("category", ctypes.c_double, [ctypes.c_char_p, ctypes.c_char_p]),
                          ("tune", ctypes.c_int, [ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
                                                  ctypes.c_int, ctypes.POINTER(ctypes.c_double)])):
        f = getattr(rt, "%s_%s" % (prefix, fn))
        f.restype = res
        f.argtypes = args
        setattr(rt, fn, f)
    dptr = ctypes.POINTER(ctypes.c_double)
    rt.guard = None
    if "%s_score(" % prefix in text:
        rt.score = getattr(rt, "%s_score" % prefix)
        rt.score.restype = ctypes.c_float
        rt.score.argtypes = [dptr, dptr]
    m = re.search(r"#define %s_GUARD_MARGIN ([0-9.eE+-]+)f" % prefix.upper(), text)
    if m and "%s_tune_vendor(" % prefix in text:
        rt.guard = float(m.group(1))
        rt.tune_vendor = getattr(rt, "%s_tune_vendor" % prefix)
        rt.tune_vendor.restype = ctypes.c_int
        rt.tune_vendor.argtypes = [dptr, dptr, ctypes.c_int, dptr, dptr]
    pcols = [rt.problem_column(j).decode() for j in range(sizes["N_PROBLEM"])]
    kcols = [rt.kernel_column(j).decode() for j in range(sizes["N_KERNEL"])]
    return rt, pcols, kcols


def read_shapes(path):
    opener = gzip.open if path.endswith(".gz") else open
    shapes = {}
    order = []
    with opener(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            row.setdefault("batch", "1")  # a table without the batch column: single GEMMs
            key = tuple(row[c] for c in PROBLEM)
            if key not in shapes:
                shapes[key] = []
                order.append(key)
            shapes[key].append(row)
    return [(k, shapes[k]) for k in order]


def value(rt, column, text, categorical):
    if column in categorical:
        v = rt.category(column.encode(), text.encode())
        return v
    return float(text)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def percentile(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))]


def summary(name, rows, noise, boot, seed):
    """rows: (speed-up over the first pick, model efficiency, first pick efficiency) of the shapes the table times"""
    sp = [r[0] for r in rows]
    g = geomean(sp)
    rng = random.Random(seed)
    draws = sorted(geomean([sp[rng.randrange(len(sp))] for _ in sp]) for _ in range(boot))
    lo, hi = draws[int(0.025 * boot)], draws[min(boot - 1, int(0.975 * boot))]
    slower = sum(1 for x in sp if x < 1 / noise) / len(sp)
    faster = sum(1 for x in sp if x > noise) / len(sp)
    print("%-10s %5d shapes  speed-up %.4f (95%% CI %.4f-%.4f)  p10/50/90 %.4f/%.4f/%.4f  worst %.4f  "
          "slower %.1f%% faster %.1f%%  eff %.4f (first pick %.4f)"
          % (name, len(sp), g, lo, hi, percentile(sp, 0.1), percentile(sp, 0.5), percentile(sp, 0.9), min(sp),
             100 * slower, 100 * faster, sum(r[1] for r in rows) / len(rows), sum(r[2] for r in rows) / len(rows)))


def guarded(rows, margin):
    """speed-ups of (speed-up, margin, same as the first pick) rows under the guard: the decode where the margin is 0
    (no guard) or its margin is >= margin, else the first pick (1)"""
    return [sp if not margin > 0 or mg >= margin else 1.0 for sp, mg, same in rows]


def calibrate(paths, noise):
    rows = []
    for p in paths:
        with open(p) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                rows.append((float(r["speedup"]), float(r["margin"]), r["same"] == "1"))
    if not rows:
        sys.exit("%s: no shapes" % ",".join(paths))
    gaps = sorted(mg for sp, mg, same in rows if mg > 0 and not same)
    grid = [0.0] + ([gaps[int(q * (len(gaps) - 1))] for q in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]
                    if gaps else [])
    print("calibration on %s (%d shapes): margin, override share, speed-up, slower, faster, worst"
          % (",".join(paths), len(rows)))
    points = []
    for m in grid:
        sp = guarded(rows, m)
        pt = (m, sum(1 for s0, mg, same in rows if not same and (not m > 0 or mg >= m)) / len(rows), geomean(sp),
              sum(1 for x in sp if x < 1 / noise) / len(sp), sum(1 for x in sp if x > noise) / len(sp), min(sp))
        points.append(pt)
        print("  %.6g %.4f %.4f %.4f %.4f %.3f" % pt)
    meet = [p for p in points if p[3] <= 0.02]
    half = [p for p in points if p[2] >= 1.01]
    if meet:
        best = max(meet, key=lambda p: p[2])
    elif half:
        best = min(half, key=lambda p: (p[3], -p[2]))
    else:
        best = max(points, key=lambda p: p[2])
    print("chosen on the calibration scores: --guard %.6g (override %.4f, speed-up %.4f, slower %.4f, worst %.3f)"
          % (best[0], best[1], best[2], best[3], best[5]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runtime")
    ap.add_argument("--table")
    ap.add_argument("--candidates", default="rows", help="rows, list or list:N")
    ap.add_argument("--noise-ratio", type=float, default=1.02)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--scores", help="per shape: the unguarded decode's speed-up and margin over the first pick")
    ap.add_argument("--calibrate", nargs="+", help="--scores files of out-of-fold shapes: choose the guard's margin")
    a = ap.parse_args()
    if a.calibrate:
        calibrate(a.calibrate, a.noise_ratio)
        return
    if not a.runtime or not a.table:
        ap.error("--runtime and --table are required (or --calibrate)")
    m = re.fullmatch(r"list(?::([1-9][0-9]*))?|rows", a.candidates)
    if not m:
        ap.error("--candidates %r: expected rows, list or list:N (N >= 1)" % a.candidates)
    list_top = int(m.group(1)) if m.group(1) else None
    rt, pcols, kcols = load_runtime(a.runtime, a.cc)
    if a.scores and not hasattr(rt, "score"):
        sys.exit("%s: --scores needs a runtime with its score function (P_score)" % a.runtime)
    scores = [] if a.scores else None
    n_override = 0
    categorical = {"dtype", "trans_a", "trans_b", "algo_id", "reduction_scheme", "inner_shape"}
    nk = len(kcols)
    rows, fams, n_total, n_in, n_cand, no_first, decode_us = [], {}, 0, 0, 0, 0, []
    for key, cands in read_shapes(a.table):
        first = [r for r in cands if r["heuristic_rank"] == "0"]
        if not first:
            no_first += 1
            continue
        n_total += 1
        best = min(float(r["time_us"]) for r in cands)
        if a.candidates != "rows":
            cands = sorted((r for r in cands if r["heuristic_rank"] != ""), key=lambda r: int(r["heuristic_rank"]))
            cands = cands[:list_top]
        pv = (ctypes.c_double * len(pcols))(*[value(rt, c, dict(zip(PROBLEM, key))[c], categorical) for c in pcols])
        kv = (ctypes.c_double * (nk * len(cands)))()
        for i, r in enumerate(cands):
            for j, c in enumerate(kcols):
                kv[i * nk + j] = value(rt, c, r[c], categorical)
        out = (ctypes.c_double * nk)()
        fv = (ctypes.c_double * nk)(*[value(rt, c, first[0][c], categorical) for c in kcols])
        t0 = time.perf_counter()
        if rt.guard is not None:
            at = rt.tune_vendor(pv, kv, len(cands), fv, out)
        else:
            at = rt.tune(pv, kv, len(cands), out)
        decode_us.append((time.perf_counter() - t0) * 1e6)
        n_cand += at >= 0
        if at < 0:
            continue
        n_in += 1
        t = float(cands[at]["time_us"])
        t_first = float(first[0]["time_us"])
        n_override += list(out) != list(fv)
        if scores is not None:
            same = list(out) == list(fv)
            s_first = rt.score(pv, fv)
            # a first pick the model cannot write (score -inf) is beyond the guard's judgement: no margin (nan)
            margin = 0.0 if same else rt.score(pv, out) - s_first if math.isfinite(s_first) else float("nan")
            scores.append((",".join(key), cands[0].get("family", "-"), t_first / t, margin, int(same)))
        rec = (t_first / t, best / t, best / t_first)
        rows.append(rec)
        fams.setdefault(cands[0].get("family", "-"), []).append(rec)
    print("%s: %d shapes (%d without cuBLASLt's first pick left out); decoded configurations among the shape's rows: "
          "%d (%.1f%%), timed by the table: %d; decode %.0f us (median, %s candidates)"
          % (a.table, n_total, no_first, n_cand, 100.0 * n_cand / max(1, n_total), n_in,
             percentile(decode_us, 0.5) if decode_us else 0.0, a.candidates))
    if rt.guard is not None:
        print("vendor guard: margin %.6g (P_tune_vendor); the decode replaces the first pick on %d of %d shapes (%.1f%%)"
              % (rt.guard, n_override, n_in, 100.0 * n_override / max(1, n_in)))
    if scores is not None:
        tmp = a.scores + ".tmp"
        with open(tmp, "w") as f:
            f.write("shape\tfamily\tspeedup\tmargin\tsame\n")
            for r in scores:
                f.write("%s\t%s\t%.9g\t%.9g\t%d\n" % r)
        os.replace(tmp, a.scores)
    if rows:
        summary("all", rows, a.noise_ratio, a.bootstrap, a.seed)
        for fam in sorted(fams):
            summary(fam, fams[fam], a.noise_ratio, a.bootstrap, a.seed)


if __name__ == "__main__":
    main()
