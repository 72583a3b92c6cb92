#!/usr/bin/env python3
"""Self-checks of gemm_real_shapes.py's `--set more` (collect/scripts/gemm_more_families.py; Python 3 standard
library only, run from the repository root as ctest does): layer sizes of a few new models, the set's generator
independent of the other sets', and the committed datasets/h200/gemm_more_shapes.txt free of every shape of the
real pool and of every shape the held-out families (llama3, mistral, resnet50) enumerate, each line tagged with a
new family."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'collect', 'scripts'))
os.chdir(ROOT)

import gemm_more_families as gmf  # noqa: E402
import gemm_real_shapes as grs  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


more = grs.enumerate_shapes(0, ('more',))
tags = {(m, n, k, dt, tr, tag) for m, n, k, dt, tr, tag, b in more}
# Falcon-7B's fused QKV: 71 query heads of 64 and one key and one value head (multi-query), 4544 + 2 x 64 = 4672
check((1024, 4672, 4544, 'bf16', 'N T', 'falcon falcon_7b.qkv.prefill.fwd') in tags, 'falcon_7b fused QKV')
# MPT-7B's MLP is not gated: one up projection of 16384, no gate
check((1024, 16384, 4096, 'bf16', 'N T', 'mpt mpt_7b.up.prefill.fwd') in tags and
      not any(t[5].startswith('mpt mpt_7b.gate') for t in tags), 'mpt_7b ungated MLP')
# SD 1.5 at 64x64 latents, batch 2: GEGLU 320 -> 2560, cross-attention keys of 77 text tokens from 768
check((8192, 2560, 320, 'fp16', 'N T', 'sd_unet sd15.64px_ff_geglu.infer.fwd') in tags and
      (154, 320, 768, 'fp16', 'N T', 'sd_unet sd15.64px_attn2_k.infer.fwd') in tags, 'sd15 GEGLU and cross-attention')
# Whisper-large-v3's first conv1d: 128 mels x 3 taps over 3,000 frames
check((3000, 1280, 384, 'fp16', 'N T', 'whisper whisper_large_v3.conv1.infer.fwd') in tags, 'whisper conv1')
check({t[5].split()[0] for t in tags} == {f for f, *_ in gmf.LLMS} | {
    't5', 'whisper', 'clip', 'dinov2', 'sam', 'deit', 'sd_unet', 'efficientnet', 'densenet', 'convnext'},
      'families of --set more')
# the set draws from its own generator: enumerated alone or after the single set, the same shapes
both = grs.enumerate_shapes(0, ('single', 'more'))
check(both[len(both) - len(more):] == more, '--set more depends on the sets enumerated before it')

pool = set(grs.read_shapes('datasets/h100/gemm_real_shapes.txt'))
held = {(m, n, k, dt, tr, b) for m, n, k, dt, tr, tag, b in both[:len(both) - len(more)]
        if tag.split()[0] in ('llama3', 'mistral', 'resnet50')}
families = {t[5].split()[0] for t in tags}
committed = grs.read_shapes('datasets/h200/gemm_more_shapes.txt')
check(800 <= len(committed) == len(set(committed)), 'gemm_more_shapes.txt: %d shapes or a repeat' % len(committed))
check(not set(committed) & pool, 'gemm_more_shapes.txt: %d shapes of the pool' % len(set(committed) & pool))
check(not set(committed) & held, 'gemm_more_shapes.txt: %d held-out shapes' % len(set(committed) & held))
with open('datasets/h200/gemm_more_shapes.txt') as f:
    fams = {line.split('#')[1].split()[0] for line in f if not line.startswith('#')}
check(fams == families, 'gemm_more_shapes.txt: families %s' % sorted(fams ^ families))
for f in failures:
    print('FAIL: %s' % f)
print('gemm --set more: %s' % ('%d failures' % len(failures) if failures else 'ok'))
sys.exit(1 if failures else 0)
