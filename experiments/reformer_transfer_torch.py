#!/usr/bin/python3
"""Does another GPU's find-db help the Reformer? A PyTorch experiment on bench/reformer_torch.py's model.

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
    experiments/reformer_transfer_torch.py T A --aux 0.2 [--pretrain 15] [--hidden 128 --dropout 0.1 --epochs 30 --seed 0]
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
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
DT, DA = args.target, args.auxdir
ntr, nte, d, K = map(int, open(f"{DT}/meta.txt").read().split())
na_tr, na_te, _, K_aux = map(int, open(f"{DA}/meta.txt").read().split())
x_tr, t_tr = load(DT, "x_train.f32", (ntr, d)), load(DT, "t_train.f32", (ntr, K))
x_te, t_te = load(DT, "x_test.f32", (nte, d)), load(DT, "t_test.f32", (nte, K))
x_aux = np.vstack([load(DA, "x_train.f32", (na_tr, d)), load(DA, "x_test.f32", (na_te, d))])
t_aux = np.vstack([load(DA, "t_train.f32", (na_tr, K_aux)), load(DA, "t_test.f32", (na_te, K_aux))])
def agreement():
    """On the target's test problems that the auxiliary database holds too (same feature row): how often the
    auxiliary GPU's fastest kernel is the target's fastest (ties counted), and how often the target measured it"""
    k_t = open(f"{DT}/kernels.txt").read().split()
    k_aux = open(f"{DA}/kernels.txt").read().split()
    col = {name: c for c, name in enumerate(k_t)}
    row_aux = {bytes(r): i for i, r in enumerate(x_aux)}
    hit = same = measured = 0
    for i in range(nte):
        j = row_aux.get(bytes(x_te[i]))
        if j is None:
            continue
        hit += 1
        c = col.get(k_aux[int(np.argmin(t_aux[j]))])
        if c is not None:
            measured += bool(np.isfinite(t_te[i, c]))
            same += bool(t_te[i, c] == t_te[i].min())
    print(f"target test problems in the auxiliary database: {hit} of {nte}; its fastest kernel is the target's fastest "
          f"on {same / max(hit, 1):.4f} of them, measured on the target on {measured / max(hit, 1):.4f}", flush=True)


agreement()
slog = lambda a: (np.sign(a) * np.log2(1.0 + np.abs(a))).astype(np.float32)
x_tr, x_te, x_aux = slog(x_tr), slog(x_te), slog(x_aux)
ple = ple_fit(x_tr, 32)
x_tr, x_te, x_aux = ple_encode(x_tr, ple), ple_encode(x_te, ple), ple_encode(x_aux, ple)
mean = x_tr.astype(np.float64).mean(0); std = x_tr.astype(np.float64).std(0); std[std <= 1e-6] = 1
norm = lambda a: ((a - mean) / std).astype(np.float32)
x_tr, x_te, x_aux = norm(x_tr), norm(x_te), norm(x_aux)
def labels(t, tau=0.05):
    fin = np.isfinite(t); tmin = np.where(fin, t, np.inf).min(1, keepdims=True)
    w = np.where(fin, np.exp(-(np.where(fin, t, 0.0) / tmin - 1.0) / tau), 0.0)
    return (w / w.sum(1, keepdims=True)).astype(np.float32), fin.astype(np.float32)
p_tr, m_tr = labels(t_tr); p_aux, m_aux = labels(t_aux)
H = args.hidden
body = nn.Sequential(*[Gamma(x_tr.shape[1] if i == 0 else H, H, H, args.dropout) for i in range(3)])
head, app = nn.Linear(H, K), nn.Linear(H, K)
head_aux, app_aux = nn.Linear(H, K_aux), nn.Linear(H, K_aux)
params = list(body.parameters()) + list(head.parameters()) + list(app.parameters())
if args.aux > 0: params += list(head_aux.parameters()) + list(app_aux.parameters())
opt = torch.optim.AdamW(params, lr=3e-3, weight_decay=1e-4)
X, P, M = map(torch.from_numpy, (x_tr, p_tr, m_tr)); X_aux, P_aux, M_aux = map(torch.from_numpy, (x_aux, p_aux, m_aux))
bs = 512; steps = ntr // bs; bs_aux = len(x_aux) // steps
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
    popt = torch.optim.AdamW(list(body.parameters()) + list(head_aux.parameters()) + list(app_aux.parameters()), lr=3e-3, weight_decay=1e-4)
    n_aux = len(x_aux); st_aux = n_aux // bs; tot_aux = st_aux * args.pretrain; k = 0
    for ep in range(args.pretrain):
        perm_aux = torch.randperm(n_aux)
        for s in range(st_aux):
            lr = 3e-3 * (k + 1) / st_aux if k < st_aux else 0.5 * 3e-3 * (1 + math.cos(math.pi * min(1.0, (k - st_aux) / max(1, tot_aux - st_aux))))
            for g in popt.param_groups: g["lr"] = lr
            i_aux = perm_aux[s * bs:(s + 1) * bs]
            loss = loss_of(body(X_aux[i_aux]), head_aux, app_aux, P_aux[i_aux], M_aux[i_aux], bs)
            popt.zero_grad(set_to_none=True); loss.backward(); popt.step(); k += 1
    print(f"pretrained {args.pretrain} epochs on the auxiliary rows, {time.time() - t0:.0f}s", flush=True)
for ep in range(args.epochs):
    perm = torch.randperm(ntr); perm_aux = torch.randperm(len(x_aux))
    for s in range(steps):
        lr = 3e-3 * (step + 1) / warm if step < warm else 0.5 * 3e-3 * (1 + math.cos(math.pi * min(1.0, (step - warm) / max(1, total - warm))))
        for g in opt.param_groups: g["lr"] = lr
        idx = perm[s * bs:(s + 1) * bs]
        if args.aux > 0:
            i_aux = perm_aux[s * bs_aux:(s + 1) * bs_aux]
            h = body(torch.cat([X[idx], X_aux[i_aux]]))
            loss = loss_of(h[:bs], head, app, P[idx], M[idx], bs) + args.aux * loss_of(h[bs:], head_aux, app_aux, P_aux[i_aux], M_aux[i_aux], bs_aux)
        else:
            loss = loss_of(body(X[idx]), head, app, P[idx], M[idx], bs)
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); step += 1
    if ep % 5 == 4 or ep == args.epochs - 1:
        print(f"epoch {ep+1} loss {loss.item():.4f} test top1/eff {evaluate()} {time.time()-t0:.0f}s", flush=True)
print("final", vars(args), evaluate())
