"""PyTorch counterpart of heurist's seq2seq family, for timing one training epoch side by side with
bench/seq2seq_bench.c: same data (gfx906 ConvAsm1x1U rows, random 80/20 split), same architecture
(embedding 32, Conv1D 64 k=3 + ReLU, BiLSTM 64 per direction, attention LSTM decoder 64 with additive
attention 64, per-position output slices), batch 64, Adam, clip 5, teacher forcing.

    /usr/bin/python3 bench/seq2seq_torch.py datasets/miopen/gfx906_60.db.bz2 [threads] [max_batches]

With max_batches the epoch is cut short and its time extrapolated to the full epoch (reported as such).
"""
import bz2
import os
import sqlite3
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

FIELDS = ["in_channels", "in_h", "in_w", "fil_h", "fil_w", "out_channels", "in_d", "fil_d", "batchsize",
          "pad_h", "pad_w", "conv_stride_h", "conv_stride_w", "dilation_h", "dilation_w", "group_count",
          "direction", "data_type", "layout"]  # 19 tokens, as heurist's encoder


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:3] == b"BZh":
        raw = bz2.decompress(raw)
    fd, tmp = tempfile.mkstemp(suffix=".db")
    os.write(fd, raw)
    os.close(fd)
    con = sqlite3.connect(tmp)
    cols = ", ".join("c." + f for f in FIELDS)
    rows = con.execute(f"SELECT {cols}, p.params FROM perf_db p JOIN config c ON p.config = c.id "
                       "WHERE p.solver = 'ConvAsm1x1U' ORDER BY p.id").fetchall()
    con.close()
    os.remove(tmp)
    X = [r[:-1] for r in rows]
    Y = [[int(v) for v in r[-1].split(",")] for r in rows]
    return X, Y


def vocab_encode(cols):
    vocabs = [sorted(set(c)) for c in cols]
    return vocabs, [[v.index(x) for x in c] for v, c in zip(vocabs, cols)]


class Seq2Seq(nn.Module):
    def __init__(self, n_emb, pos_vocab, E=32, C=64, H=64, A=64):
        super().__init__()
        self.vb = [sum(pos_vocab[:j]) for j in range(len(pos_vocab))]
        self.pos_vocab = pos_vocab
        n_out = sum(pos_vocab)
        self.emb = nn.Embedding(n_emb, E)
        self.conv = nn.Conv1d(E, C, 3, padding=1)
        self.enc = nn.LSTM(C, H, batch_first=True, bidirectional=True)
        Dk = 2 * H
        self.dec_emb = nn.Embedding(1 + n_out, E)
        self.w_q = nn.Linear(H, A, bias=False)
        self.w_k = nn.Linear(Dk, A)
        self.v = nn.Linear(A, 1, bias=False)
        self.cell = nn.LSTMCell(E + Dk, H)
        self.out = nn.Linear(H + Dk, n_out)
        self.H = H

    def forward(self, ids, tok):
        x = self.emb(ids)                                  # (B, S, E)
        x = F.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        keys, _ = self.enc(x)                              # (B, S, 2H)
        kproj = self.w_k(keys)                             # (B, S, A)
        B = ids.shape[0]
        h = keys.new_zeros(B, self.H)
        c = keys.new_zeros(B, self.H)
        prev = torch.zeros(B, dtype=torch.long)
        loss = 0.0
        for j, V in enumerate(self.pos_vocab):
            e = torch.tanh(kproj + self.w_q(h).unsqueeze(1))
            a = torch.softmax(self.v(e).squeeze(2), dim=1)
            ctx = torch.bmm(a.unsqueeze(1), keys).squeeze(1)
            h, c = self.cell(torch.cat([self.dec_emb(prev), ctx], 1), (h, c))
            vb = self.vb[j]
            logits = F.linear(torch.cat([h, ctx], 1), self.out.weight[vb:vb + V], self.out.bias[vb:vb + V])
            loss = loss + F.cross_entropy(logits, tok[:, j])
            prev = 1 + vb + tok[:, j]
        return loss / len(self.pos_vocab)


def main():
    path = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    max_batches = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    X, Y = load(path)
    in_vocab, in_tok = vocab_encode(list(zip(*X)))
    offs = [sum(len(v) for v in in_vocab[:f]) for f in range(len(in_vocab))]
    ids = torch.tensor([[offs[f] + in_tok[f][i] for f in range(len(FIELDS))] for i in range(len(X))])
    out_vocab, out_tok = vocab_encode(list(zip(*Y)))
    tok = torch.tensor(list(zip(*out_tok)))
    n = len(X)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(0))
    train = perm[: n - n // 5]
    model = Seq2Seq(sum(len(v) for v in in_vocab), [len(v) for v in out_vocab])
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    nparams = sum(p.numel() for p in model.parameters())
    t0 = time.time()
    order = train[torch.randperm(len(train))]
    n_batches = (len(order) + 63) // 64
    run = min(n_batches, max_batches) if max_batches > 0 else n_batches
    for s in range(0, run * 64, 64):
        b = order[s:s + 64]
        opt.zero_grad()
        loss = model(ids[b], tok[b])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
    secs = (time.time() - t0) * n_batches / run
    note = "" if run == n_batches else f" (extrapolated from {run} of {n_batches} batches)"
    print(f"torch {torch.__version__}: {len(train)} rows, 1 epoch {secs:.2f} s{note} ({threads} threads), "
          f"{nparams} params, last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
