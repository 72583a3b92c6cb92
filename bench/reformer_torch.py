#!/usr/bin/python3
"""The Reformer of models/reformer.c in PyTorch, for bench/run_reformer_bench.sh.

Same architecture (slog input sign(x) log2(1 + |x|) then z-score, `depth` Gamma-blocks y = ReLU(A1 x + b1 + A3 ReLU(BN(A2 x + b2)) + b3) of width
`hidden` with T of width `expand`, linear softmax head, and the applicability head when `applicability` > 0:
scores = log softmax(z) + log sigmoid(a)), same initialisation family (PyTorch's nn.Linear default, which ours
copies), same loss (cross-entropy against softmax labels p_k ~ exp(-(t_k / t_min - 1) / tau), tau 0.05, 0 where
unmeasured, + lambda * per-kernel BCE on the "measured" mask, lambda 0.1), same
optimizer (AdamW, lr 3e-3, weight decay 1e-4), same schedule (1 warm-up epoch, cosine to 0, per step), same batch
size with the remainder dropped, on the rows `bench_reformer export` wrote.

    reformer_torch.py DIR EPOCHS THREADS [--calls N] [--hidden H --expand E --depth L --applicability W]
                      [--dropout P] [--ple BINS]

--dropout P puts nn.Dropout(P) after T's ReLU (the models' "dropout"). --ple BINS adds the models' "input": "ple":
after the slog features, for each feature whose order statistics v[i (n - 1) / BINS], i = 0..BINS, of the sorted
training column have at least three distinct values, one column clamp((v - lo) / (hi - lo), 0, 1) per pair of
consecutive distinct edges, z-scored with the features. The training rows are encoded once before the epochs
(heurist prepares its inputs once too); the single-problem timing encodes inside the timed call.

Prints one key=value line: seconds per epoch, test top1 / efficiency, parameters, single-problem inference
median (1 thread, eval mode, no_grad, z-score, encoding and head combination included; the slog of the features
is done in numpy beforehand, so PyTorch's time excludes it and ours includes it) and peak resident memory.
"""
import argparse
import math
import resource
import time

import numpy as np
import torch
from torch import nn


class Gamma(nn.Module):
    def __init__(self, d_in, d_hidden, d_out, dropout):
        super().__init__()
        self.A1 = nn.Linear(d_in, d_out)
        self.A2 = nn.Linear(d_in, d_hidden)
        self.norm = nn.BatchNorm1d(d_hidden)
        self.A3 = nn.Linear(d_hidden, d_out)
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x):
        return torch.relu(self.A1(x) + self.A3(self.drop(torch.relu(self.norm(self.A2(x))))))


class Reformer(nn.Module):
    def __init__(self, mean, std, n_kernels, hidden, expand, depth, applicability, dropout=0.0, ple=None):
        super().__init__()
        self.register_buffer("mean", torch.from_numpy(mean))
        self.register_buffer("std", torch.from_numpy(std))
        src, lo, hi = ple if ple is not None else (np.zeros(0, np.int64), np.zeros(0, np.float32), np.ones(0, np.float32))
        self.register_buffer("ple_src", torch.from_numpy(src))
        self.register_buffer("ple_lo", torch.from_numpy(lo))
        self.register_buffer("ple_hi", torch.from_numpy(hi))
        d = mean.shape[0]
        self.blocks = nn.Sequential(*[Gamma(d if i == 0 else hidden, expand, hidden, dropout) for i in range(depth)])
        self.head = nn.Linear(hidden, n_kernels)
        self.app = nn.Linear(hidden, n_kernels) if applicability > 0 else None

    def forward(self, x):
        h = self.blocks((x - self.mean) / self.std)
        return self.head(h), (self.app(h) if self.app is not None else None)

    def encode(self, x):
        """slog features -> model input: the features followed by their piecewise-linear columns"""
        if self.ple_src.numel() == 0:
            return x
        v = x[:, self.ple_src]
        return torch.cat([x, ((v - self.ple_lo) / (self.ple_hi - self.ple_lo)).clamp(0.0, 1.0)], 1)

    def scores(self, x):
        z, a = self.forward(x)
        s = torch.log_softmax(z, dim=1)
        return s + nn.functional.logsigmoid(a) if a is not None else s


def load(d, name, shape):
    a = np.fromfile(f"{d}/{name}", dtype=np.float32)
    assert a.size == int(np.prod(shape)), (name, a.size, shape)
    return a.reshape(shape)


def ple_fit(x, bins):
    """The bins of the models' "input": "ple" from the slog training rows x: (source feature, lo, hi) arrays"""
    n = x.shape[0]
    src, lo, hi = [], [], []
    for j in range(x.shape[1]):
        v = np.sort(x[:, j])
        e = []
        for i in range(bins + 1):
            q = v[i * (n - 1) // bins]
            if not e or q > e[-1]:
                e.append(q)
        if len(e) < 3:
            continue
        src += [j] * (len(e) - 1)
        lo += e[:-1]
        hi += e[1:]
    return np.array(src, np.int64), np.array(lo, np.float32), np.array(hi, np.float32)


def ple_encode(x, ple):
    src, lo, hi = ple
    return np.hstack([x, np.clip((x[:, src] - lo) / (hi - lo), 0.0, 1.0)]).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("epochs", type=int)
    ap.add_argument("threads", type=int)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--hidden", type=int, default=92)
    ap.add_argument("--expand", type=int, default=96)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--applicability", type=float, default=0.1)
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--max-train", type=int, default=0)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--ple", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    ntr, nte, d, K = map(int, open(f"{args.dir}/meta.txt").read().split())
    x_tr, t_tr = load(args.dir, "x_train.f32", (ntr, d)), load(args.dir, "t_train.f32", (ntr, K))
    x_te, t_te = load(args.dir, "x_test.f32", (nte, d)), load(args.dir, "t_test.f32", (nte, K))
    if args.max_train:
        ntr = min(ntr, args.max_train)
        x_tr, t_tr = x_tr[:ntr], t_tr[:ntr]
    slog = lambda a: np.sign(a) * np.log2(1.0 + np.abs(a))
    x_tr, x_te = slog(x_tr).astype(np.float32), slog(x_te).astype(np.float32)  # the models' "input": "log"
    ple = ple_fit(x_tr, args.ple) if args.ple else None
    x_te_slog = x_te
    if ple is not None:
        x_tr, x_te = ple_encode(x_tr, ple), ple_encode(x_te, ple)
    mean = x_tr.astype(np.float64).mean(0)
    std = x_tr.astype(np.float64).std(0)
    std[std <= 1e-6] = 1.0
    fin = np.isfinite(t_tr)
    tmin = np.where(fin, t_tr, np.inf).min(1, keepdims=True)
    w = np.where(fin, np.exp(-(np.where(fin, t_tr, 0.0) / tmin - 1.0) / args.tau), 0.0)
    p_tr = (w / w.sum(1, keepdims=True)).astype(np.float32)  # softmax labels (the models' "label": "softmax")
    m_tr = np.isfinite(t_tr).astype(np.float32)                  # applicability targets
    X, P, M = torch.from_numpy(x_tr), torch.from_numpy(p_tr), torch.from_numpy(m_tr)

    model = Reformer(mean.astype(np.float32), std.astype(np.float32), K, args.hidden, args.expand, args.depth,
                     args.applicability, args.dropout, ple)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4, eps=1e-8)
    bs = min(args.batch, ntr)
    steps = ntr // bs
    total, warm = steps * args.epochs, steps  # one warm-up epoch, cosine to 0
    bce = nn.BCEWithLogitsLoss(reduction="sum")
    step = 0
    t0 = time.perf_counter()
    for _ in range(args.epochs):
        model.train()
        perm = torch.randperm(ntr)
        for s in range(steps):
            idx = perm[s * bs:(s + 1) * bs]
            lr = args.lr * (step + 1) / warm if step < warm else \
                0.5 * args.lr * (1 + math.cos(math.pi * min(1.0, (step - warm) / max(1, total - warm))))
            for g in opt.param_groups:
                g["lr"] = lr
            z, a = model(X[idx])
            loss = -(P[idx] * torch.log_softmax(z, dim=1)).sum(1).mean()
            if a is not None:
                loss = loss + args.applicability * bce(a, M[idx]) / bs
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
    secs = time.perf_counter() - t0
    rss_train = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    model.eval()
    with torch.no_grad():
        s = model.scores(torch.from_numpy(x_te)).numpy()
    pred = s.argmax(1)
    t_pred = t_te[np.arange(nte), pred]
    t_best = t_te.min(1)
    top1 = float(np.mean(t_pred == t_best))
    eff = float(np.mean(np.where(np.isfinite(t_pred), t_best / np.where(np.isfinite(t_pred), t_pred, 1.0), 0.0)))

    torch.set_num_threads(1)
    dt = []
    with torch.no_grad():
        for i in range(args.calls):
            x = torch.from_numpy(x_te_slog[(i * 7919) % nte:(i * 7919) % nte + 1])
            t = time.perf_counter()
            model.scores(model.encode(x))
            dt.append(time.perf_counter() - t)
    print(f"impl=pytorch threads={args.threads} n_train={ntr} epochs={args.epochs} sec_per_epoch={secs / args.epochs:.3f} "
          f"train_seconds={secs:.2f} top1={top1:.4f} efficiency_mean={eff:.4f} params={n_params} "
          f"predict_us={1e6 * float(np.median(dt)):.2f} calls={args.calls} peak_rss_mb={rss_train:.1f} "
          f"torch={torch.__version__}")


if __name__ == "__main__":
    main()
