#!/usr/bin/python3
"""Training time of our gbdt against XGBoost's `hist` method on the same kernel-selection matrix.

Both fit a K-class softmax on hard labels (argmin runtime: XGBoost has no soft labels) with matched
settings: rounds, leaves (leaf-wise growth: XGBoost grow_policy=lossguide, max_depth=0), learning rate,
bins, min rows/hessian per leaf, threads. Each runs in its own process, back to back in one run, so peak
memory is per trainer. Prints times, the ratio ours/XGBoost, test accuracy (top1) and mean efficiency
(t_best / t_predicted, 0 when the predicted kernel was not measured) of both.

usage (from the repository root, after building the gbdt_select_bench target):
  /usr/bin/python3 bench/gbdt_vs_xgboost.py --build build-gb2 \
      --data datasets/miopen/gfx90878.HIP.fdb.txt.bz2 --rounds 30 --leaves 31 --threads 2
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository root


def load(dirname):
    import numpy as np

    n_train, n_test, d, K = map(int, open(os.path.join(dirname, "meta.txt")).read().split())
    x = np.fromfile(os.path.join(dirname, "x_train.f32"), np.float32).reshape(n_train, d)
    y = np.fromfile(os.path.join(dirname, "y_train.i32"), np.int32)
    xt = np.fromfile(os.path.join(dirname, "x_test.f32"), np.float32).reshape(n_test, d)
    yt = np.fromfile(os.path.join(dirname, "y_test.i32"), np.int32)
    tt = np.fromfile(os.path.join(dirname, "t_test.f32"), np.float32).reshape(n_test, K)
    return x, y, xt, yt, tt, K


def metrics(pred, yt, tt):
    import numpy as np

    tbest = tt.min(axis=1)
    tpred = tt[np.arange(len(pred)), pred]
    top1 = float((tpred == tbest).mean())  # a kernel tied with the fastest is a fastest one, as in heurist's eval
    eff = np.where(np.isfinite(tpred), tbest / tpred, 0.0)
    return top1, float(eff.mean())


def run_xgboost(args):
    """Child process: train XGBoost, print one line of key=value."""
    import numpy as np
    import xgboost as xgb

    x, y, xt, yt, tt, K = load(args.dir)
    t0 = time.perf_counter()
    c0 = time.process_time()
    dtrain = xgb.DMatrix(x, label=y, nthread=args.threads)
    params = {
        "objective": "multi:softprob", "num_class": K, "tree_method": "hist", "grow_policy": "lossguide",
        "max_depth": 0, "max_leaves": args.leaves, "eta": args.lr, "max_bin": args.bins + 1,
        "min_child_weight": 1e-3, "lambda": 0.0, "alpha": 0.0, "nthread": args.threads, "verbosity": 0,
    }
    booster = xgb.train(params, dtrain, num_boost_round=args.rounds)
    c1 = time.process_time()
    t1 = time.perf_counter()
    prob = booster.predict(xgb.DMatrix(xt, nthread=args.threads))
    pred = prob.reshape(len(xt), K).argmax(axis=1)
    top1, eff = metrics(pred, yt, tt)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    trees = args.rounds * K
    print(f"train_s={t1 - t0:.3f} cpu_s={c1 - c0:.3f} ms_per_tree={1e3 * (t1 - t0) / trees:.3f} "
          f"top1={top1:.4f} eff={eff:.4f} peak_rss_mb={rss:.1f}")


def parse_kv(line):
    return {k: float(v) for k, v in (f.split("=") for f in line.split())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", default=os.path.join(ROOT, "datasets/miopen/gfx90878.HIP.fdb.txt.bz2"))
    ap.add_argument("--dir", default=None, help="exported matrices (default: a fresh temporary folder)")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--bins", type=int, default=255)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--xgboost-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.xgboost_child:
        run_xgboost(args)
        return
    bench = os.path.join(args.build, "gbdt_select_bench")
    tmp = None
    if args.dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="gbdt_vs_xgb_")
        args.dir = tmp.name
    if not os.path.exists(os.path.join(args.dir, "meta.txt")):
        subprocess.run([bench, "export", args.data, args.dir, "0.2", "0"], check=True)
    n_train, n_test, d, K = open(os.path.join(args.dir, "meta.txt")).read().split()
    print(f"data {os.path.basename(args.data)}: {n_train} train x {d} features, {n_test} test, {K} classes; "
          f"{args.rounds} rounds x {K} trees, {args.leaves} leaves, lr {args.lr}, {args.bins} bins, "
          f"{args.threads} threads; load average {os.getloadavg()[0]:.2f}")
    _, yt, tt = None, None, None
    import numpy as np

    yt = np.fromfile(os.path.join(args.dir, "y_test.i32"), np.int32)
    tt = np.fromfile(os.path.join(args.dir, "t_test.f32"), np.float32).reshape(len(yt), int(K))
    for rep in range(args.repeat):
        ours = subprocess.run([bench, "train", args.dir, str(args.rounds), str(args.leaves), str(args.lr),
                               str(args.bins), str(args.threads), "onehot"], check=True, capture_output=True,
                              text=True).stdout.strip()
        o = parse_kv(ours.splitlines()[-1])
        pred = np.fromfile(os.path.join(args.dir, "pred_gbdt.i32"), np.int32)
        o_top1, o_eff = metrics(pred, yt, tt)
        xg = subprocess.run([sys.executable, __file__, "--xgboost-child", "--dir", args.dir, "--rounds",
                             str(args.rounds), "--leaves", str(args.leaves), "--lr", str(args.lr), "--bins",
                             str(args.bins), "--threads", str(args.threads)], check=True, capture_output=True,
                            text=True).stdout.strip()
        x = parse_kv(xg.splitlines()[-1])
        print(f"[{rep}] ours    train {o['train_s']:.2f} s ({o['ms_per_tree']:.2f} ms/tree, cpu {o['cpu_s']:.2f} s)"
              f"  top1 {o_top1:.4f}  eff {o_eff:.4f}  peak RSS {o['peak_rss_mb']:.0f} MB")
        print(f"[{rep}] xgboost train {x['train_s']:.2f} s ({x['ms_per_tree']:.2f} ms/tree, cpu {x['cpu_s']:.2f} s)"
              f"  top1 {x['top1']:.4f}  eff {x['eff']:.4f}  peak RSS {x['peak_rss_mb']:.0f} MB")
        print(f"[{rep}] ratio ours/xgboost: wall {o['train_s'] / x['train_s']:.3f}  cpu {o['cpu_s'] / x['cpu_s']:.3f}"
              f"  (load average {os.getloadavg()[0]:.2f})")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
