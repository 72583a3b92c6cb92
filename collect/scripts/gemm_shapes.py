#!/usr/bin/env python3
"""The GEMM shape mix `heurist-collect gemm` times: seeded, deterministic, one shape a line
("M N K DTYPE TRANS_A TRANS_B  # source"), shuffled so that any prefix is itself a sample of the mix.

Sources (shares of --count):
  llm    45%  transformer linear layers: tokens (batch x sequence) 1..8192 against the (out, in) sizes of
              real models, as the forward (M tokens, N out, K in; A N, B T), the data gradient (M tokens,
              N in, K out; N N) and the weight gradient (M out, N in, K tokens; T N, long K)
  conv   20%  convolutions as implicit GEMMs: M = batch x output pixels, N = output channels,
              K = input channels x filter size, from ResNet-50, VGG-16 and U-Net layers, batch 1..64
  skinny 15%  one of M, N tiny (1..64) or K small (8..256) against large other sizes
  odd    12%  log-uniform sizes 1..8192, half of them odd or prime (alignment and wave-quantisation edges)
  square  8%  powers of two and their neighbours (2^k - 1, 2^k + 1) on all three sizes
Data types: bf16 40%, fp16 25%, tf32 15%, fp32 20% (FP32 compute for all; tf32 = FP32 data on TF32 tensor
cores); transposes as the source says (llm) or uniform over NN, NT, TN, TT (the rest).
Size cap: a shape whose modelled time (below) exceeds --max-us is drawn again, so the largest GEMM stays
about 2 ms.

Cost model (--estimate): a GEMM's time t = max(2MNK / peak, bytes / 3.35 TB/s) + 4 us, peak 600 TFLOPS for
bf16/fp16, 300 for tf32, 50 for fp32 (an H100 SXM's dense rates, rounded down). Per shape: the heuristic's
list (8) plus --candidates sampled configurations; a sampled configuration runs at 2.5 t on average and one
in four is slower than 5x the best (timed by its two warm-ups only); each fully timed candidate costs 40 us of
host work (AlgoCheck, synchronisations), a warm-up, a spin of 1.5 x 4 us per queued call, and 3 batches of
B = clamp(100 us / t, 1, 64) calls; plus 5 ms per shape (heuristic call, fills, output) and 10 us for each
AlgoCheck draw (three per sampled candidate).

    python3 collect/scripts/gemm_shapes.py --count 2000 --seed 0 --out datasets/h100/gemm_shapes.txt --estimate
"""
import argparse
import math
import random
import sys

# (name, [(out, in), ...]) of linear layers: attention projections (q/k/v fused or split, output) and MLP
MODELS = [
    ("llama2-7b", [(12288, 4096), (4096, 4096), (11008, 4096), (4096, 11008)]),
    ("llama3-8b", [(6144, 4096), (4096, 4096), (14336, 4096), (4096, 14336), (1024, 4096)]),
    ("llama2-13b", [(15360, 5120), (5120, 5120), (13824, 5120), (5120, 13824)]),
    ("llama2-70b", [(10240, 8192), (8192, 8192), (28672, 8192), (8192, 28672)]),
    ("qwen2-7b", [(4608, 3584), (3584, 3584), (18944, 3584), (3584, 18944)]),
    ("phi3-mini", [(9216, 3072), (3072, 3072), (16384, 3072), (3072, 8192)]),
    ("gemma-2b", [(2560, 2048), (2048, 2048), (16384, 2048), (2048, 16384)]),
    ("gpt2", [(2304, 768), (768, 768), (3072, 768), (768, 3072)]),
    ("bert-large", [(3072, 1024), (1024, 1024), (4096, 1024), (1024, 4096)]),
    ("vocab", [(32000, 4096), (128256, 4096), (50257, 768)]),
]

# (output pixels at batch 1, output channels, input channels x filter) of convolution layers
CONVS = [
    (112 * 112, 64, 3 * 49), (56 * 56, 64, 64), (56 * 56, 64, 576), (56 * 56, 256, 64), (56 * 56, 64, 256),
    (28 * 28, 128, 1152), (28 * 28, 512, 128), (28 * 28, 128, 512), (14 * 14, 256, 2304), (14 * 14, 1024, 256),
    (14 * 14, 256, 1024), (7 * 7, 512, 4608), (7 * 7, 2048, 512), (7 * 7, 512, 2048),
    (224 * 224, 64, 27), (224 * 224, 64, 576), (112 * 112, 128, 1152), (56 * 56, 256, 2304), (28 * 28, 512, 4608),
    (14 * 14, 512, 4608), (128 * 128, 64, 576), (64 * 64, 128, 1152), (32 * 32, 256, 2304), (16 * 16, 512, 4608),
]

DTYPES = [("bf16", 0.40), ("fp16", 0.25), ("tf32", 0.15), ("fp32", 0.20)]
PEAK = {"bf16": 600e12, "fp16": 600e12, "tf32": 300e12, "fp32": 50e12, "fp8e4m3": 1200e12}
BYTES = {"bf16": 2, "fp16": 2, "tf32": 4, "fp32": 4, "fp8e4m3": 1}  # fp8e4m3: A and B (its bf16 D counted as them)
BANDWIDTH = 3.35e12
TRANS = ["N N", "N T", "T N", "T T"]


def gemm_us(m, n, k, dtype, batch=1):
    """The modelled time of a GEMM (a strided batch of `batch` of them)."""
    flops = 2.0 * m * n * k * batch
    traffic = BYTES[dtype] * (m * k + k * n + m * n) * batch
    return max(flops / PEAK[dtype], traffic / BANDWIDTH) * 1e6 + 4.0


def pick(rng, weighted):
    x = rng.random() * sum(w for _, w in weighted)
    for v, w in weighted:
        x -= w
        if x < 0:
            return v
    return weighted[-1][0]


def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def is_prime(x):
    return x > 1 and all(x % p for p in range(2, int(x ** 0.5) + 1))


def tokens(rng):
    """Batch x sequence: powers of two (half), else log-uniform 1..8192."""
    if rng.random() < 0.5:
        return 2 ** rng.randint(0, 13)
    return log_uniform(rng, 1, 8192)


def draw_llm(rng):
    _, layers = rng.choice(MODELS)
    out, inp = rng.choice(layers)
    t = tokens(rng)
    role = pick(rng, [("fwd", 0.6), ("dgrad", 0.2), ("wgrad", 0.2)])
    if role == "fwd":
        return t, out, inp, "N T"
    if role == "dgrad":
        return t, inp, out, "N N"
    return out, inp, t, "T N"


def draw_conv(rng):
    pix, cout, k = rng.choice(CONVS)
    b = 2 ** rng.randint(0, 6)
    return pix * b, cout, k, rng.choice(TRANS)


def draw_skinny(rng):
    small = log_uniform(rng, 1, 64)
    big1, big2 = log_uniform(rng, 256, 16384), log_uniform(rng, 256, 16384)
    which = rng.randint(0, 2)
    if which == 0:
        return small, big1, big2, rng.choice(TRANS)
    if which == 1:
        return big1, small, big2, rng.choice(TRANS)
    return big1, big2, log_uniform(rng, 8, 256), rng.choice(TRANS)


def draw_odd(rng):
    dims = []
    for _ in range(3):
        d = log_uniform(rng, 1, 8192)
        if rng.random() < 0.5 and d > 2:
            d |= 1
            if rng.random() < 0.5:
                while not is_prime(d):
                    d += 2
        dims.append(d)
    return dims[0], dims[1], dims[2], rng.choice(TRANS)


def draw_square(rng):
    dims = []
    for _ in range(3):
        d = 2 ** rng.randint(4, 13)
        dims.append(max(1, d + rng.choice([-1, 0, 0, 1])))
    return dims[0], dims[1], dims[2], rng.choice(TRANS)


SOURCES = [("llm", 0.45, draw_llm), ("conv", 0.20, draw_conv), ("skinny", 0.15, draw_skinny),
           ("odd", 0.12, draw_odd), ("square", 0.08, draw_square)]


def generate(count, seed, max_us):
    rng = random.Random(seed)
    seen, out = set(), []
    quotas = [(name, int(round(count * share)), draw) for name, share, draw in SOURCES]
    quotas[0] = (quotas[0][0], quotas[0][1] + count - sum(q for _, q, _ in quotas), quotas[0][2])
    for name, quota, draw in quotas:
        got = 0
        while got < quota:
            m, n, k, trans = draw(rng)
            dtype = pick(rng, DTYPES)
            if min(m, n, k) < 1 or max(m, n, k) > 1 << 20 or gemm_us(m, n, k, dtype) > max_us:
                continue
            key = (m, n, k, dtype, trans)
            if key in seen:
                continue
            seen.add(key)
            out.append((m, n, k, dtype, trans, name))
            got += 1
    rng.shuffle(out)
    return out


def estimate(shapes, n_enum, n_heur=8):
    """Modelled collection seconds of (m, n, k, dtype, trans, tag[, batch]) shapes."""
    total = 0.0
    for shape in shapes:
        t = gemm_us(*shape[:4], batch=shape[6] if len(shape) > 6 else 1)
        cost = 5000.0 + 3 * n_enum * 10.0
        for f, count, slow in ((1.1, n_heur, False), (2.5, 0.75 * n_enum, False), (6.0, 0.25 * n_enum, True)):
            tc = f * t
            if slow:
                cost += count * (40.0 + 2 * tc)
                continue
            b = min(64, max(1, math.ceil(100.0 / tc)))
            cost += count * (40.0 + tc + 1.5 * 4.0 * b * 3 + 3 * b * tc)
        total += cost
    return total / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-us", type=float, default=2000.0, help="largest modelled GEMM time")
    ap.add_argument("--candidates", type=int, default=64, help="sampled configurations per shape (for --estimate)")
    ap.add_argument("--out", default="-")
    ap.add_argument("--estimate", action="store_true", help="print the modelled collection time to stderr")
    a = ap.parse_args()
    shapes = generate(a.count, a.seed, a.max_us)
    lines = ["# heurist-collect gemm shapes: python3 collect/scripts/gemm_shapes.py --count %d --seed %d --max-us %g"
             % (a.count, a.seed, a.max_us), "# M N K DTYPE TRANS_A TRANS_B  # source"]
    lines += ["%d %d %d %s %s  # %s" % s for s in shapes]
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)
    if a.estimate:
        times = sorted(gemm_us(m, n, k, d) for m, n, k, d, _, _ in shapes)
        by_src = {}
        for s in shapes:
            by_src[s[5]] = by_src.get(s[5], 0) + 1
        by_dtype = {}
        for s in shapes:
            by_dtype[s[3]] = by_dtype.get(s[3], 0) + 1
        sys.stderr.write("%d shapes; sources %s; dtypes %s\n" % (len(shapes), by_src, by_dtype))
        sys.stderr.write("modelled GEMM time: median %.1f us, p90 %.1f us, max %.1f us\n"
                         % (times[len(times) // 2], times[int(len(times) * 0.9)], times[-1]))
        sys.stderr.write("modelled collection time with %d sampled + 8 heuristic candidates a shape: %.0f s\n"
                         % (a.candidates, estimate(shapes, a.candidates)))


if __name__ == "__main__":
    main()
