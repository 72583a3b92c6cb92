#!/usr/bin/env python3
"""How far other learners get on the tune task (gfx906 ConvAsm1x1U), as a yardstick for seq2seq.

Reads the perf-db rows the project trains on (`heurist train --task tune --solver ConvAsm1x1U`), builds
plain numeric features from the problem fields (raw values, log2 sizes, output extent) and fits, on a seeded
random 80/20 split, one classifier per parameter position (random forest, extra trees, XGBoost hist,
1-nearest neighbour); prints param_accuracy (positions right, averaged) and exact (whole sequence right) for
each. It also counts how often two problems that differ only in batch size (neighbouring batch sizes, every other field
equal) carry the same tuned sequence: a measure of how smooth the labels are.

usage: /usr/bin/python3 experiments/tune_learners.py PERFDB.db[.bz2] [--threads N]
"""
import argparse
import bz2
import os
import sqlite3
import sys
import tempfile
import time

import numpy as np


def load(path):
    if path.endswith(".bz2"):
        tmp = tempfile.NamedTemporaryFile(suffix=".db", delete=False)
        with bz2.open(path, "rb") as f:
            tmp.write(f.read())
        tmp.close()
        path = tmp.name
    con = sqlite3.connect(path)
    cols = ("c.direction, c.data_type, c.in_channels, c.in_h, c.in_w, c.out_channels, c.batchsize, "
            "c.pad_h, c.pad_w, c.conv_stride_h, c.conv_stride_w, c.group_count")
    rows = con.execute(f"SELECT {cols}, p.params FROM perf_db p JOIN config c ON p.config = c.id "
                       "WHERE p.solver = 'ConvAsm1x1U' ORDER BY p.id").fetchall()
    con.close()
    if path.startswith(tempfile.gettempdir()):
        os.unlink(path)
    X, Y = [], []
    for r in rows:
        X.append([{"F": 0, "B": 1, "W": 2}.get(r[0], 3), {"FP32": 0, "FP16": 1, "BF16": 2}.get(r[1], 3)]
                 + [float(v) for v in r[2:12]])
        Y.append([int(t) for t in r[12].split(",")])
    return np.array(X), np.array(Y)


def features(X):
    c, h, w, k, n = X[:, 2], X[:, 3], X[:, 4], X[:, 5], X[:, 6]
    ph, pw, sh, sw = X[:, 7], X[:, 8], X[:, 9], X[:, 10]
    oh = np.floor((h + 2 * ph - 1) / sh) + 1
    ow = np.floor((w + 2 * pw - 1) / sw) + 1
    lg = np.log2(np.maximum(X[:, 2:], 1))
    return np.column_stack([X, lg, oh, ow, np.log2(oh * ow), np.log2(n * oh * ow), np.log2(h * w * c)])


def scores(P, Y):
    right = P == Y
    return right.mean(), right.all(axis=1).mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("perfdb")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import LabelEncoder
    import xgboost as xgb

    X, Y = load(a.perfdb)
    F = features(X)
    n, L = Y.shape
    rng = np.random.default_rng(a.seed)
    idx = rng.permutation(n)
    nt = int(round(0.2 * n))
    te, tr = idx[:nt], idx[nt:]
    print(f"{n} problems, {L} parameters, {len(set(map(tuple, Y)))} distinct sequences; "
          f"{len(tr)} train / {len(te)} test (seeded random 80/20, seed {a.seed})")

    def per_position(make, feats):
        P = np.zeros((nt, L), dtype=int)
        for j in range(L):
            enc = LabelEncoder().fit(Y[:, j])
            m = make()
            m.fit(feats[tr], enc.transform(Y[tr, j]))
            P[:, j] = enc.inverse_transform(m.predict(feats[te]).astype(int))
        return P

    learners = [
        ("random forest, 300 trees, per position",
         lambda: per_position(lambda: RandomForestClassifier(300, n_jobs=a.threads, random_state=a.seed), F)),
        ("extra trees, 300 trees, per position",
         lambda: per_position(lambda: ExtraTreesClassifier(300, n_jobs=a.threads, random_state=a.seed), F)),
        ("XGBoost hist, 200 rounds depth 8, per position",
         lambda: per_position(lambda: xgb.XGBClassifier(n_estimators=200, max_depth=8, learning_rate=0.1,
                                                        tree_method="hist", n_jobs=a.threads,
                                                        random_state=a.seed), F)),
        ("1-nearest neighbour on log2 fields, per position",
         lambda: per_position(lambda: KNeighborsClassifier(1), np.log2(np.maximum(X, 1)))),
    ]
    print(f"{'learner':<52} {'param_accuracy':>14} {'exact':>7} {'seconds':>8}")
    for name, run in learners:
        t0 = time.time()
        P = run()
        pa, ex = scores(P, Y[te])
        print(f"{name:<52} {pa:14.4f} {ex:7.4f} {time.time() - t0:8.1f}", flush=True)
    # label smoothness along batch size
    key = {}
    for i in range(n):
        rest = tuple(np.delete(X[i], 6))
        key.setdefault(rest, []).append((X[i, 6], i))
    pairs = same = pos_same = 0
    for lst in key.values():
        lst.sort()
        for (_, i), (_, j) in zip(lst, lst[1:]):
            pairs += 1
            same += bool((Y[i] == Y[j]).all())
            pos_same += (Y[i] == Y[j]).mean()
    print(f"neighbouring batch sizes (all other fields equal): {pairs} pairs, same sequence {same / pairs:.4f}, "
          f"same value per position {pos_same / pairs:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
