#!/usr/bin/python3
"""Does another GPU's find-db help the Reformer? A PyTorch experiment beside bench/reformer_torch.py.

The encoded Reformer of reformer_torch.py (slog input, 32-bin piecewise-linear columns, z-score, three Gamma-blocks
of width H, softmax labels tau 0.05 + 0.1 applicability BCE, AdamW 3e-3 / 1e-4, one warm-up epoch then cosine,
batch 512) is trained on the target rows of `bench_reformer export` (TARGET_DIR: e.g. gfx90878, random 0.2 split)
with the rows of a second find-db (AUX_DIR: e.g. gfx906_60, every row, exported with a tiny test share) in one of
two ways:
  --aux W       multi-task: each step adds an auxiliary batch (the auxiliary rows spread over the target's steps)
                through the same blocks into the auxiliary database's own two heads, its loss weighted W;
  --pretrain E  transfer: the blocks first train E epochs on the auxiliary rows alone (own heads, own schedule),
                then on the target rows as usual.
Bins and z-score come from the target's training rows. Prints first how often the two GPUs' fastest kernels agree
on the target's test problems that both databases hold (matched by feature row and kernel name, kernels.txt), then
the target's test top-1 (runtime ties counted) and mean efficiency every 5 epochs and at the end.

    bench_reformer export gfx90878.HIP.fdb.txt.bz2 T 0.2 0 && bench_reformer export gfx906_60.HIP.fdb.txt.bz2 A 0.01 0
    reformer_transfer_torch.py T A --aux 0.2 [--pretrain 15] [--hidden 128 --dropout 0.1 --epochs 30 --seed 0]
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reformer_torch import Gamma, load, ple_fit, ple_encode  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("target")
ap.add_argument("auxdir")
ap.add_argument("--aux", type=float, default=0.0)  # weight of the auxiliary loss; 0 = none
ap.add_argument("--epochs", type=int, default=30)
ap.add_argument("--hidden", type=int, default=128)
ap.add_argument("--dropout", type=float, default=0.1)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--pretrain", type=int, default=0)
args = ap.parse_args()
torch.set_num_threads(args.threads); torch.manual_seed(args.seed); np.random.seed(args.seed)
D8, D6 = args.target, args.auxdir
ntr, nte, d, K = map(int, open(f"{D8}/meta.txt").read().split())
n6a, n6b, _, K6 = map(int, open(f"{D6}/meta.txt").read().split())
x_tr, t_tr = load(D8, "x_train.f32", (ntr, d)), load(D8, "t_train.f32", (ntr, K))
x_te, t_te = load(D8, "x_test.f32", (nte, d)), load(D8, "t_test.f32", (nte, K))
x6 = np.vstack([load(D6, "x_train.f32", (n6a, d)), load(D6, "x_test.f32", (n6b, d))])
t6 = np.vstack([load(D6, "t_train.f32", (n6a, K6)), load(D6, "t_test.f32", (n6b, K6))])
def agreement():
    """On the target's test problems that the auxiliary database holds too (same feature row): how often the
    auxiliary GPU's fastest kernel is the target's fastest (ties counted), and how often the target measured it"""
    k8 = open(f"{D8}/kernels.txt").read().split()
    k6 = open(f"{D6}/kernels.txt").read().split()
    col = {name: c for c, name in enumerate(k8)}
    row6 = {bytes(r): i for i, r in enumerate(x6)}
    hit = same = measured = 0
    for i in range(nte):
        j = row6.get(bytes(x_te[i]))
        if j is None:
            continue
        hit += 1
        c = col.get(k6[int(np.argmin(t6[j]))])
        if c is not None:
            measured += bool(np.isfinite(t_te[i, c]))
            same += bool(t_te[i, c] == t_te[i].min())
    print(f"target test problems in the auxiliary database: {hit} of {nte}; its fastest kernel is the target's fastest "
          f"on {same / max(hit, 1):.4f} of them, measured on the target on {measured / max(hit, 1):.4f}", flush=True)


agreement()
slog = lambda a: (np.sign(a) * np.log2(1.0 + np.abs(a))).astype(np.float32)
x_tr, x_te, x6 = slog(x_tr), slog(x_te), slog(x6)
ple = ple_fit(x_tr, 32)
x_tr, x_te, x6 = ple_encode(x_tr, ple), ple_encode(x_te, ple), ple_encode(x6, ple)
mean = x_tr.astype(np.float64).mean(0); std = x_tr.astype(np.float64).std(0); std[std <= 1e-6] = 1
norm = lambda a: ((a - mean) / std).astype(np.float32)
x_tr, x_te, x6 = norm(x_tr), norm(x_te), norm(x6)
def labels(t, tau=0.05):
    fin = np.isfinite(t); tmin = np.where(fin, t, np.inf).min(1, keepdims=True)
    w = np.where(fin, np.exp(-(np.where(fin, t, 0.0) / tmin - 1.0) / tau), 0.0)
    return (w / w.sum(1, keepdims=True)).astype(np.float32), fin.astype(np.float32)
p_tr, m_tr = labels(t_tr); p6, m6 = labels(t6)
H = args.hidden
body = nn.Sequential(*[Gamma(x_tr.shape[1] if i == 0 else H, H, H, args.dropout) for i in range(3)])
head, app = nn.Linear(H, K), nn.Linear(H, K)
head6, app6 = nn.Linear(H, K6), nn.Linear(H, K6)
params = list(body.parameters()) + list(head.parameters()) + list(app.parameters())
if args.aux > 0: params += list(head6.parameters()) + list(app6.parameters())
opt = torch.optim.AdamW(params, lr=3e-3, weight_decay=1e-4)
X, P, M = map(torch.from_numpy, (x_tr, p_tr, m_tr)); X6, P6, M6 = map(torch.from_numpy, (x6, p6, m6))
bs = 512; steps = ntr // bs; bs6 = len(x6) // steps
total, warm = steps * args.epochs, steps
bce = nn.BCEWithLogitsLoss(reduction="sum")
def loss_of(h, hd, ap_, Pb, Mb, n):
    z, a = hd(h), ap_(h)
    return -(Pb * torch.log_softmax(z, 1)).sum(1).mean() + 0.1 * bce(a, Mb) / n
def evaluate():
    body.eval()
    with torch.no_grad():
        h = body(torch.from_numpy(x_te)); s = (torch.log_softmax(head(h), 1) + nn.functional.logsigmoid(app(h))).numpy()
    body.train()
    pred = s.argmax(1); tp = t_te[np.arange(nte), pred]; tb = t_te.min(1)
    return float(np.mean(tp == tb)), float(np.mean(np.where(np.isfinite(tp), tb / np.where(np.isfinite(tp), tp, 1), 0)))
step = 0; t0 = time.time()
if args.pretrain:
    popt = torch.optim.AdamW(list(body.parameters()) + list(head6.parameters()) + list(app6.parameters()), lr=3e-3, weight_decay=1e-4)
    n6 = len(x6); st6 = n6 // bs; tot6 = st6 * args.pretrain; k = 0
    for ep in range(args.pretrain):
        perm6 = torch.randperm(n6)
        for s in range(st6):
            lr = 3e-3 * (k + 1) / st6 if k < st6 else 0.5 * 3e-3 * (1 + math.cos(math.pi * min(1.0, (k - st6) / max(1, tot6 - st6))))
            for g in popt.param_groups: g["lr"] = lr
            i6 = perm6[s * bs:(s + 1) * bs]
            loss = loss_of(body(X6[i6]), head6, app6, P6[i6], M6[i6], bs)
            popt.zero_grad(set_to_none=True); loss.backward(); popt.step(); k += 1
    print(f"pretrained {args.pretrain} epochs on the auxiliary rows, {time.time() - t0:.0f}s", flush=True)
for ep in range(args.epochs):
    perm = torch.randperm(ntr); perm6 = torch.randperm(len(x6))
    for s in range(steps):
        lr = 3e-3 * (step + 1) / warm if step < warm else 0.5 * 3e-3 * (1 + math.cos(math.pi * min(1.0, (step - warm) / max(1, total - warm))))
        for g in opt.param_groups: g["lr"] = lr
        idx = perm[s * bs:(s + 1) * bs]
        if args.aux > 0:
            i6 = perm6[s * bs6:(s + 1) * bs6]
            h = body(torch.cat([X[idx], X6[i6]]))
            loss = loss_of(h[:bs], head, app, P[idx], M[idx], bs) + args.aux * loss_of(h[bs:], head6, app6, P6[i6], M6[i6], bs6)
        else:
            loss = loss_of(body(X[idx]), head, app, P[idx], M[idx], bs)
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); step += 1
    if ep % 5 == 4 or ep == args.epochs - 1:
        print(f"epoch {ep+1} loss {loss.item():.4f} test top1/eff {evaluate()} {time.time()-t0:.0f}s", flush=True)
print("final", vars(args), evaluate())
