#!/usr/bin/env python3
"""The GEMMs of real model families as a `heurist-collect gemm` shape file: a pool of real shapes, each
tagged with the family it comes from (a GroupKFold group) and its model, layer, phase and role.

Line format (gemm_shapes.py's): "M N K DTYPE TRANS_A TRANS_B [BATCH]  # FAMILY MODEL.LAYER.PHASE.ROLE" (BATCH
only for a strided batch of more than one GEMM); the first word of the comment is the family, one group per model family (llama3, mistral, qwen2.5, phi3, gemma2, gpt2,
bert, vit, swin, resnet50, unet2d, mixtral, deepseek_moe), so that no family is both trained and tested on.

A linear layer of (out, in) features at T tokens is, as gemm_shapes.py writes it (column-major cuBLAS terms):
  fwd    M = T,   N = out, K = in   N T
  dgrad  M = T,   N = in,  K = out  N N   (the data gradient)
  wgrad  M = out, N = in,  K = T    T N   (the weight gradient)
Phases: `prefill` (T = batch x prompt tokens, powers of two and three seeded ragged counts a model) and
`decode` (T = batch, 1..256) are forward only, with vLLM's fused QKV and gate/up projections; `train`
(T = batch x sequence) has all three GEMMs, with separate q/k/v and gate/up projections (Hugging Face's
modules). Data types: LLMs and MoE bf16 (gpt2 and phi3 inference fp16 as well), encoders and vision fp16
inference and bf16 / tf32 training, convolutions fp16 inference and tf32 / fp32 training.
  decoder LLMs   Llama-3 8B / 70B (70B also as tensor-parallel shards of 8 GPUs), Mistral-7B, Qwen2.5-7B / 72B
                 (72B also TP 8), Phi-3-mini, Gemma-2-9B, GPT-2; attention QKV and output, MLP gate/up and
                 down, the LM head (vocabulary projection: decode and train)
  encoders       BERT-base / -large, sequences 128 / 384 / 512
  vision         ViT-B/16, ViT-L/16 (197 tokens an image, patch embedding as a GEMM), Swin-T (window
                 attention and MLP per stage, patch merging)
  convolutions   ResNet-50 (224 px) and U-Net (256 px) lowered to implicit GEMMs (conv_networks.py's layers,
                 groups 1): fwd M = batch x output pixels, N = out channels, K = in channels x filter; dgrad M
                 = batch x input pixels, N = in channels, K = out channels x filter; wgrad M = out channels, N
                 = in channels x filter, K = batch x output pixels
  MoE experts    Mixtral 8x7B (8 experts, top 2, 14336 wide) and DeepSeek-V2-Lite (64 routed experts, top 6,
                 1408 wide): per expert the tokens routed to it, drawn from a seeded Dirichlet(1) router
                 (uneven counts), for prefill, decode and training token totals

--set fp8: the LLMs' projections above (fused QKV, output, gate/up, down; the LM head at decode; the TP 8 shards
  too) in FP8 (fp8e4m3: E4M3 inputs, bf16 output) as Transformer Engine runs them through cuBLASLt on sm_90:
  weight first, transposed ("TN": M = out, N = tokens, K = in), every size a multiple of 16 (a projection with
  another size is left out), at prefill T in 128..8192 and decode T in 16..256, forward only.
--set batched (a pool of its own, beside the default --set single above):
  attention      per head, unfused (as eager PyTorch's bmm runs it), at prefill token counts T (512..4096) for
                 1, 4 and 16 sequences: scores S = Q K^T (M = T, N = T, K = head dim, N T) and the output P V
                 (M = T, N = head dim, K = T, N N), batch = sequences x query heads; head dims 64 and 128: Llama-3
                 8B / 70B (TP 8: 8 heads a GPU), Mistral-7B, Qwen2.5-7B (128), GPT-2, BERT-base / -large,
                 ViT-B/16 / -L/16 (64; BERT at sequences 128 / 384 / 512, ViT at 197 tokens an image)
  MoE experts    every expert's GEMM as one strided batch over the experts (capacity-padded routing: each
                 expert gets ceil(1.25 x tokens x top / experts) tokens, rounded up to a multiple of 8), the
                 fused w13 and w2 forward at prefill and decode totals, w1 / w3 / w2 with their two backward
                 GEMMs at a training total

--set more (a pool of its own, more training families: gemm_more_families.py lists them): T5, Whisper, CLIP,
  DINOv2, SAM, DeiT, Stable Diffusion's U-Net, seven more decoder LLMs, EfficientNet, DenseNet, ConvNeXt, each
  its own family; its shapes are drawn from a seeded generator of their own, so the other sets' stay as they are.
  --exclude SHAPES drops every shape of a shape file (the existing pool) and --exclude-families F,... every shape
  the single set enumerates for those families (the held-out ones, whether or not their pool kept it), before
  the round robin; the summary counts each.

Filters: a shape modelled above --max-us (gemm_shapes.py's cost model) is dropped; a shape met in several
places is kept once, under its first family (the summary counts shapes shared by families). Then a seeded
round robin over the families (each family's shapes shuffled) takes shapes until --count or until the
modelled collection time reaches --budget-s GPU seconds; the modelled time is gemm_shapes.py's estimate
scaled by the measured / modelled ratio of the generator pool's run (--calibrate: 2,000 shapes of
datasets/h100/gemm_shapes.txt took 307 s on one H100). The file lists the shapes in that round-robin order,
so any prefix holds every family.

    python3 collect/scripts/gemm_real_shapes.py --out datasets/h100/gemm_real_shapes.txt
    python3 collect/scripts/gemm_real_shapes.py --set more --count 1100 --budget-s 215 \
        --exclude datasets/h100/gemm_real_shapes.txt --exclude-families llama3,mistral,resnet50 \
        --out datasets/h200/gemm_more_shapes.txt
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv_networks  # noqa: E402  (the ResNet-50 and U-Net layers)
import gemm_more_families  # noqa: E402  (the --set more families)
import gemm_shapes  # noqa: E402  (the cost model and its estimate)

# family, model, hidden, q width, kv width, mlp width, vocabulary, inference dtypes
LLMS = [
    ('llama3', 'llama3_8b', 4096, 4096, 1024, 14336, 128256, ('bf16',)),
    ('llama3', 'llama3_70b', 8192, 8192, 1024, 28672, 128256, ('bf16',)),
    ('mistral', 'mistral_7b', 4096, 4096, 1024, 14336, 32000, ('bf16',)),
    ('qwen2.5', 'qwen2.5_7b', 3584, 3584, 512, 18944, 152064, ('bf16',)),
    ('qwen2.5', 'qwen2.5_72b', 8192, 8192, 1024, 29568, 152064, ('bf16',)),
    ('phi3', 'phi3_mini', 3072, 3072, 3072, 8192, 32064, ('bf16', 'fp16')),
    ('gemma2', 'gemma2_9b', 3584, 4096, 2048, 14336, 256000, ('bf16',)),
    ('gpt2', 'gpt2', 768, 768, 768, 3072, 50257, ('fp16', 'fp32')),
]
TP = {'llama3_70b': 8, 'qwen2.5_72b': 8}
PREFILL = (128, 512, 1024, 2048, 4096, 8192, 16384)
DECODE = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256)
TRAIN = (2048, 4096, 8192, 16384)
ROLES = {'fwd': 'N T', 'dgrad': 'N N', 'wgrad': 'T N'}


def linear(out, t, o, i, dtypes, roles, tag, batch=1):
    """Appends the GEMMs of a linear layer (o, i) at t tokens (`batch` of them in a strided batch):
    (m, n, k, dtype, trans, "FAMILY MODEL.LAYER.PHASE.ROLE", batch)."""
    for role in roles:
        m, n, k = (t, o, i) if role == 'fwd' else (t, i, o) if role == 'dgrad' else (o, i, t)
        for dt in dtypes:
            out.append((m, n, k, dt, ROLES[role], '%s.%s' % (tag, role), batch))


def llm_shapes(rng, out):
    for family, model, h, q, kv, ffn, vocab, dts in LLMS:
        shards = [(1, model)] + ([(TP[model], model + '_tp%d' % TP[model])] if model in TP else [])
        ragged = sorted(set(gemm_shapes.log_uniform(rng, 17, 8192) for _ in range(3)))
        for tp, name in shards:
            fused = [('qkv', (q + 2 * kv) // tp, h), ('o', h, q // tp), ('gate_up', 2 * ffn // tp, h),
                     ('down', h, ffn // tp)]
            for t in PREFILL + tuple(ragged):
                for layer, o, i in fused:
                    linear(out, t, o, i, dts, ('fwd',), '%s %s.%s.prefill' % (family, name, layer))
            for t in DECODE:
                for layer, o, i in fused + [('lm_head', vocab // tp, h)]:
                    linear(out, t, o, i, dts, ('fwd',), '%s %s.%s.decode' % (family, name, layer))
        split = [('q', q, h), ('k', kv, h), ('v', kv, h), ('o', h, q), ('gate', ffn, h), ('up', ffn, h),
                 ('down', h, ffn), ('lm_head', vocab, h)]
        train_dt = ('bf16',) if family != 'gpt2' else ('bf16', 'tf32')
        for t in TRAIN:
            for layer, o, i in split:
                linear(out, t, o, i, train_dt, ('fwd', 'dgrad', 'wgrad'),
                       '%s %s.%s.train' % (family, model, layer))


def encoder_shapes(out):
    for model, h, ffn in (('bert_base', 768, 3072), ('bert_large', 1024, 4096)):
        layers = [('q', h, h), ('k', h, h), ('v', h, h), ('o', h, h), ('intermediate', ffn, h), ('output', h, ffn)]
        for seq in (128, 384, 512):
            for b in (1, 8, 32, 64):
                for layer, o, i in layers:
                    linear(out, b * seq, o, i, ('fp16',), ('fwd',), 'bert %s.%s.infer' % (model, layer))
                if b >= 8:
                    for layer, o, i in layers:
                        linear(out, b * seq, o, i, ('bf16', 'tf32'), ('fwd', 'dgrad', 'wgrad'),
                               'bert %s.%s.train' % (model, layer))


def vision_shapes(out):
    for model, h, ffn in (('vit_b16', 768, 3072), ('vit_l16', 1024, 4096)):
        layers = [('qkv', 3 * h, h), ('proj', h, h), ('fc1', ffn, h), ('fc2', h, ffn)]
        for b in (1, 8, 32, 64, 128):
            linear(out, 196 * b, h, 3 * 16 * 16, ('fp16',), ('fwd',), 'vit %s.patch_embed.infer' % model)
            for layer, o, i in layers:
                linear(out, 197 * b, o, i, ('fp16',), ('fwd',), 'vit %s.%s.infer' % (model, layer))
            if b in (32, 64):
                for layer, o, i in layers:
                    linear(out, 197 * b, o, i, ('bf16', 'tf32'), ('fwd', 'dgrad', 'wgrad'),
                           'vit %s.%s.train' % (model, layer))
    for b in (1, 8, 32, 64):
        for stage, (tokens, c) in enumerate(((3136, 96), (784, 192), (196, 384), (49, 768))):
            layers = [('qkv', 3 * c, c), ('proj', c, c), ('fc1', 4 * c, c), ('fc2', c, 4 * c)]
            if stage:
                layers.append(('merge', c, 2 * c))
            phases = [('infer', ('fp16',), ('fwd',))] + ([('train', ('bf16',), ('fwd', 'dgrad', 'wgrad'))]
                                                          if b == 32 else [])
            for phase, dts, roles in phases:
                for layer, o, i in layers:
                    linear(out, tokens * b, o, i, dts, roles, 'swin swin_t.stage%d.%s.%s' % (stage, layer, phase))
    return out


def conv_shapes(out):
    for family, net in (('resnet50', conv_networks.resnet(224, (3, 4, 6, 3), True)),
                        ('unet2d', conv_networks.unet2d(256))):
        conv_networks.implicit_gemms(out, family, family, net, ROLES)


def routed(rng, tokens, experts, top):
    """Tokens routed to each expert: tokens x top assignments spread by a Dirichlet(1) router."""
    w = [rng.gammavariate(1.0, 1.0) for _ in range(experts)]
    s = sum(w)
    counts = [0] * experts
    for _ in range(tokens * top):
        x = rng.random() * s
        for e, we in enumerate(w):
            x -= we
            if x < 0:
                counts[e] += 1
                break
        else:
            counts[-1] += 1
    return sorted(set(c for c in counts if c > 0))


# family, model, hidden size, expert width, routed experts, experts a token
MOES = (('mixtral', 'mixtral_8x7b', 4096, 14336, 8, 2), ('deepseek_moe', 'deepseek_v2_lite', 2048, 1408, 64, 6))
# phase, token totals, roles, gate and up projections fused
MOE_PHASES = (('prefill', (512, 2048, 8192), ('fwd',), True), ('decode', (16, 64, 256), ('fwd',), True),
              ('train', (4096,), ('fwd', 'dgrad', 'wgrad'), False))


def moe_phases():
    """(family, model, experts, top, phase, token total, roles, expert layers as (name, out, in)) of every MoE model
    and phase, in order: what the per-expert and the batched MoE shapes share."""
    for family, model, h, ffn, experts, top in MOES:
        for phase, totals, roles, fused in MOE_PHASES:
            layers = [('w13', 2 * ffn, h), ('w2', h, ffn)] if fused else [('w1', ffn, h), ('w3', ffn, h), ('w2', h, ffn)]
            for total in totals:
                yield family, model, experts, top, phase, total, roles, layers


def moe_shapes(rng, out):
    for family, model, experts, top, phase, total, roles, layers in moe_phases():
        for t in routed(rng, total, experts, top):
            for layer, o, i in layers:
                linear(out, t, o, i, ('bf16',), roles, '%s %s.expert.%s.%s' % (family, model, layer, phase))


# family, model, query heads (a GPU's share under tensor parallelism), head dim, tokens a sequence, dtype
ATTENTION = [
    ('llama3', 'llama3_8b', 32, 128, (512, 1024, 2048, 4096), 'bf16'),
    ('llama3', 'llama3_70b_tp8', 8, 128, (512, 1024, 2048, 4096), 'bf16'),
    ('mistral', 'mistral_7b', 32, 128, (512, 1024, 2048, 4096), 'bf16'),
    ('qwen2.5', 'qwen2.5_7b', 28, 128, (512, 1024, 2048, 4096), 'bf16'),
    ('gpt2', 'gpt2', 12, 64, (512, 1024), 'fp16'),
    ('bert', 'bert_base', 12, 64, (128, 384, 512), 'fp16'),
    ('bert', 'bert_large', 16, 64, (128, 384, 512), 'fp16'),
    ('vit', 'vit_b16', 12, 64, (197,), 'fp16'),
    ('vit', 'vit_l16', 16, 64, (197,), 'fp16'),
]
SEQUENCES = (1, 4, 16)


def attention_shapes(out):
    """Attention's two batched GEMMs a layer, per (sequence, head): S = Q K^T and O = P V."""
    for family, model, heads, d, lengths, dt in ATTENTION:
        for t in lengths:
            for seqs in SEQUENCES:
                tag = '%s %s.attn_%%s.prefill.fwd' % (family, model)
                out.append((t, t, d, dt, ROLES['fwd'], tag % 'qk', seqs * heads))
                out.append((t, d, t, dt, ROLES['dgrad'], tag % 'pv', seqs * heads))


def moe_batched_shapes(out):
    """Every expert's GEMM as one strided batch over the experts, at a padded capacity a expert."""
    for family, model, experts, top, phase, total, roles, layers in moe_phases():
        cap = -(-math.ceil(1.25 * total * top / experts) // 8) * 8
        for layer, o, i in layers:
            linear(out, cap, o, i, ('bf16',), roles, '%s %s.experts_batched.%s.%s' % (family, model, layer, phase),
                   experts)


def fp8_shapes(out):
    """The LLM projections in FP8, weight first and transposed (TN), every size a multiple of 16."""
    for family, model, h, q, kv, ffn, vocab, _ in LLMS:
        for tp, name in [(1, model)] + ([(TP[model], model + '_tp%d' % TP[model])] if model in TP else []):
            fused = [('qkv', (q + 2 * kv) // tp, h), ('o', h, q // tp), ('gate_up', 2 * ffn // tp, h),
                     ('down', h, ffn // tp)]
            for phase, tokens, layers in (('prefill', FP8_PREFILL, fused),
                                          ('decode', FP8_DECODE, fused + [('lm_head', vocab // tp, h)])):
                for t in tokens:
                    for layer, o, i in layers:
                        if o % 16 == 0 and i % 16 == 0:
                            out.append((o, t, i, 'fp8e4m3', 'T N', '%s %s.%s.%s.fwd' % (family, name, layer, phase), 1))


FP8_PREFILL = (128, 512, 1024, 2048, 4096, 8192)
FP8_DECODE = (16, 32, 64, 128, 256)
SETS = ('single', 'batched', 'fp8', 'more')


def enumerate_shapes(seed, sets=('single',)):
    """(m, n, k, dtype, trans, tag, batch) of the sets asked for, each set's in its order."""
    rng = random.Random(seed)
    out = []
    if 'single' in sets:
        llm_shapes(rng, out)
        encoder_shapes(out)
        vision_shapes(out)
        conv_shapes(out)
        moe_shapes(rng, out)
    if 'batched' in sets:
        attention_shapes(out)
        moe_batched_shapes(out)
    if 'fp8' in sets:
        fp8_shapes(out)
    if 'more' in sets:
        gemm_more_families.more_shapes(random.Random('more-%d' % seed), linear, ROLES, out)
    return out


def read_shapes(path):
    """(m, n, k, dtype, trans, batch) of a shape file's lines."""
    shapes = []
    with open(path) as f:
        for line in f:
            body = line.split('#', 1)[0].split()
            if body:
                shapes.append((int(body[0]), int(body[1]), int(body[2]), body[3], body[4] + ' ' + body[5],
                               int(body[6]) if len(body) > 6 else 1))
    return shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--count', type=int, default=3000, help='most shapes kept')
    ap.add_argument('--budget-s', type=float, default=540.0, help='most modelled collection GPU seconds')
    ap.add_argument('--max-us', type=float, default=2000.0, help='largest modelled GEMM time')
    ap.add_argument('--candidates', type=int, default=64, help='sampled configurations a shape (the collector\'s)')
    ap.add_argument('--calibrate', default='datasets/h100/gemm_shapes.txt:307',
                    help='SHAPES:SECONDS, a shape file and its measured collection seconds (empty: no scaling)')
    ap.add_argument('--pool', default='datasets/h100/gemm_shapes.txt', help='the generator pool, for the overlap')
    ap.add_argument('--set', default='single', help='comma-separated shape sets: %s (default single)' % ', '.join(SETS))
    ap.add_argument('--exclude', action='append', default=[], help='a shape file whose shapes are left out; repeatable')
    ap.add_argument('--exclude-families', default='',
                    help='comma-separated families whose single-set shapes (every one enumerated) are left out')
    ap.add_argument('--out', default='-')
    a = ap.parse_args()
    sets = a.set.split(',')
    if not sets or any(x not in SETS for x in sets):
        sys.exit('--set %s: expected a comma-separated list of %s' % (a.set, ', '.join(SETS)))

    scale = 1.0
    if a.calibrate:
        path, secs = a.calibrate.rsplit(':', 1)
        ref = [(m, n, k, d, t, '', b) for m, n, k, d, t, b in read_shapes(path)]
        scale = float(secs) / gemm_shapes.estimate(ref, a.candidates)

    raw = enumerate_shapes(a.seed, sets)
    held_fams = [f for f in a.exclude_families.split(',') if f]
    held = set((m, n, k, dt, trans, batch) for m, n, k, dt, trans, tag, batch in enumerate_shapes(a.seed, ('single',))
               if tag.split()[0] in held_fams)
    known = set()
    for path in a.exclude:
        known.update(read_shapes(path))
    first, fams_of, too_big, dropped_held, dropped_known = {}, {}, 0, set(), set()
    for m, n, k, dt, trans, tag, batch in raw:
        key = (m, n, k, dt, trans, batch)
        fam = tag.split()[0]
        if gemm_shapes.gemm_us(m, n, k, dt, batch) > a.max_us or min(m, n, k) < 1 or max(m, n, k) > 1 << 20:
            too_big += 1
            continue
        if key in held:
            dropped_held.add(key)
            continue
        if key in known:
            dropped_known.add(key)
            continue
        fams_of.setdefault(key, set()).add(fam)
        if key not in first:
            first[key] = tag
    by_fam = {}
    for key, tag in first.items():
        by_fam.setdefault(tag.split()[0], []).append(key)
    rng = random.Random(a.seed)
    for fam in sorted(by_fam):
        by_fam[fam].sort()
        rng.shuffle(by_fam[fam])
    order, pos, spent = [], {f: 0 for f in by_fam}, 0.0
    fams = sorted(by_fam)
    while len(order) < a.count and fams:
        for f in list(fams):
            if pos[f] == len(by_fam[f]):
                fams.remove(f)
                continue
            key = by_fam[f][pos[f]]
            cost = scale * gemm_shapes.estimate([key[:5] + ('', key[5])], a.candidates)
            if spent + cost > a.budget_s or len(order) >= a.count:
                fams = []
                break
            pos[f] += 1
            spent += cost
            order.append(key)

    lines = ['# heurist-collect gemm shapes of real model families: python3 collect/scripts/gemm_real_shapes.py '
             '--seed %d --count %d --budget-s %g --max-us %g' % (a.seed, a.count, a.budget_s, a.max_us) +
             (' --set %s' % a.set if sets != ['single'] else '') + ''.join(' --exclude %s' % p for p in a.exclude) +
             (' --exclude-families %s' % a.exclude_families if held_fams else ''),
             '# M N K DTYPE TRANS_A TRANS_B%s  # FAMILY MODEL.LAYER.PHASE.ROLE' % (' [BATCH]' if sets != ['single'] else '')]
    lines += ['%d %d %d %s %s%s  # %s' % (key[:5] + (' %d' % key[5] if key[5] > 1 else '', first[key])) for key in order]
    text = '\n'.join(lines) + '\n'
    if a.out == '-':
        sys.stdout.write(text)
    else:
        with open(a.out + '.tmp', 'w') as f:
            f.write(text)
        os.replace(a.out + '.tmp', a.out)

    pool = set(read_shapes(a.pool)) if a.pool and os.path.exists(a.pool) else set()
    kept_fam, kept_dt, kept_role = {}, {}, {}
    for key in order:
        tag = first[key]
        kept_fam[tag.split()[0]] = kept_fam.get(tag.split()[0], 0) + 1
        kept_dt[key[3]] = kept_dt.get(key[3], 0) + 1
        role = '.'.join(tag.rsplit('.', 2)[-2:])
        kept_role[role] = kept_role.get(role, 0) + 1
    times = sorted(gemm_shapes.gemm_us(m, n, k, d, b) for m, n, k, d, _, b in order)
    err = sys.stderr
    err.write('%d GEMMs enumerated, %d modelled above %g us dropped, %d distinct shapes (%d in more than one '
              'family); kept %d\n' % (len(raw), too_big, a.max_us, len(first),
                                      sum(1 for v in fams_of.values() if len(v) > 1), len(order)))
    if held_fams or a.exclude:
        err.write('left out: %d distinct shapes of the families %s, %d more of %s\n'
                  % (len(dropped_held), ','.join(held_fams) or '-', len(dropped_known), ', '.join(a.exclude) or '-'))
    err.write('per family (kept / distinct): %s\n' % ', '.join('%s %d/%d' % (f, kept_fam.get(f, 0), len(by_fam[f]))
                                                              for f in sorted(by_fam)))
    err.write('per dtype: %s\n' % kept_dt)
    err.write('per phase.role: %s\n' % dict(sorted(kept_role.items())))
    err.write('modelled GEMM time: median %.1f us, p90 %.1f us, max %.1f us\n'
              % (times[len(times) // 2], times[int(len(times) * 0.9)], times[-1]))
    err.write('modelled collection time on one GPU: %.0f s (gemm_shapes.py estimate x %.2f, the measured / '
              'modelled ratio of the calibration run)\n' % (spent, scale))
    err.write('in the generator pool %s as well: %d of %d\n' % (a.pool, sum(1 for k in order if k in pool), len(order)))


if __name__ == '__main__':
    sys.exit(main())
