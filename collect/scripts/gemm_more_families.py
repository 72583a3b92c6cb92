"""The GEMMs of real model families outside the real-shape pool of gemm_real_shapes.py (its `--set more`): more
training families for the single pick, each its own family tag. Conventions are gemm_real_shapes.py's: a linear
layer (out, in) at T tokens gives fwd (T, out, in, N T), dgrad (T, in, out, N N) and wgrad (out, in, T, T N);
inference is forward only, training all three GEMMs.
  decoder LLMs   Falcon-7B (multi-query attention, GELU MLP), Llama-2-13B, OLMo-7B, StableLM-3B-4E1T,
                 InternLM2-20B, Yi-6B, MPT-7B (GELU MLP): bf16, prefill / decode (fused QKV and gate/up, the LM
                 head at decode) and training (separate projections), as gemm_real_shapes.py's LLMs
  t5             Flan-T5-base / -large (gated-GELU FFN): encoder at 512 tokens, decoder self- and cross-attention
                 at 128 target tokens (training) or a token a sequence (decode), the LM head; bf16
  whisper        Whisper-small / -large-v3: the two conv1d front-end layers lowered to GEMM, the encoder at 1,500
                 frames, the decoder at decode (cross-attention keys and values over the frames) and at training
                 (448 target tokens); fp16 inference, bf16 training
  clip           CLIP ViT-L/14: the vision tower (257 tokens, patch embedding as a GEMM) and the text tower (77
                 tokens, 768 wide), the projections into the joint space; fp16 inference, bf16 / tf32 training
  dinov2         DINOv2 ViT-g/14 (1536 wide, SwiGLU 4096): 257 tokens (224 px) and 1,370 (518 px); fp16 / bf16
  sam            SAM's image encoder ViT-B and ViT-H at 1024 px: 14x14 windowed blocks (25 windows of 196
                 tokens, the 64x64 grid padded to 70x70) and global blocks (4,096 tokens), the neck's 1x1 conv;
                 fp16 inference, bf16 fine-tuning
  deit           DeiT-S and DeiT-B distilled (198 tokens: class and distillation tokens); fp16, bf16 / tf32
  sd_unet        Stable Diffusion 1.5 (512 px) and SDXL (1024 px) U-Net transformer blocks: self-attention q/k/v/o,
                 cross-attention q and the k/v of the 77 text tokens (context 768 / 2048), GEGLU (c -> 8c) and
                 the FFN output, proj_in / proj_out; batch 2 a prompt (classifier-free guidance); fp16 inference,
                 bf16 training
  efficientnet, densenet, convnext
                 EfficientNet-B0, DenseNet-121 and ConvNeXt-T (224 px) lowered to implicit GEMMs as
                 gemm_real_shapes.py's convolutions (groups 1 only: depthwise convolutions are not GEMMs);
                 ConvNeXt's block MLP (pointwise 4x expansion) as linear layers over the pixels
"""

import conv_networks
import gemm_shapes

# family, model, hidden, q width, kv width, mlp width, gated MLP, vocabulary
LLMS = [
    ('falcon', 'falcon_7b', 4544, 4544, 64, 18176, False, 65024),
    ('llama2', 'llama2_13b', 5120, 5120, 5120, 13824, True, 32000),
    ('olmo', 'olmo_7b', 4096, 4096, 4096, 11008, True, 50304),
    ('stablelm', 'stablelm_3b', 2560, 2560, 2560, 6912, True, 50304),
    ('internlm', 'internlm2_20b', 6144, 6144, 1024, 16384, True, 92544),
    ('yi', 'yi_6b', 4096, 4096, 512, 11008, True, 64000),
    ('mpt', 'mpt_7b', 4096, 4096, 4096, 16384, False, 50432),
]
PREFILL = (128, 512, 1024, 2048, 4096, 8192)
DECODE = (1, 4, 16, 32, 64, 128, 256)
TRAIN = (2048, 4096, 8192)


def llm_shapes(rng, linear, out):
    for family, model, h, q, kv, ffn, gated, vocab in LLMS:
        up = 2 * ffn if gated else ffn
        fused = [('qkv', q + 2 * kv, h), ('o', h, q), ('gate_up' if gated else 'up', up, h), ('down', h, ffn)]
        ragged = sorted(set(gemm_shapes.log_uniform(rng, 17, 8192) for _ in range(2)))
        for t in PREFILL + tuple(ragged):
            for layer, o, i in fused:
                linear(out, t, o, i, ('bf16',), ('fwd',), '%s %s.%s.prefill' % (family, model, layer))
        for t in DECODE:
            for layer, o, i in fused + [('lm_head', vocab, h)]:
                linear(out, t, o, i, ('bf16',), ('fwd',), '%s %s.%s.decode' % (family, model, layer))
        split = [('q', q, h), ('k', kv, h), ('v', kv, h), ('o', h, q), ('up', ffn, h), ('down', h, ffn),
                 ('lm_head', vocab, h)] + ([('gate', ffn, h)] if gated else [])
        for t in TRAIN:
            for layer, o, i in split:
                linear(out, t, o, i, ('bf16',), ('fwd', 'dgrad', 'wgrad'), '%s %s.%s.train' % (family, model, layer))


def t5_shapes(linear, out):
    for model, d, ffn, vocab in (('flan_t5_base', 768, 2048, 32128), ('flan_t5_large', 1024, 2816, 32128)):
        enc = [('enc.q', d, d), ('enc.k', d, d), ('enc.v', d, d), ('enc.o', d, d), ('enc.wi_0', ffn, d),
               ('enc.wi_1', ffn, d), ('enc.wo', d, ffn)]
        dec = [('dec.self_q', d, d), ('dec.self_k', d, d), ('dec.self_v', d, d), ('dec.self_o', d, d),
               ('dec.cross_q', d, d), ('dec.cross_o', d, d), ('dec.wi_0', ffn, d), ('dec.wi_1', ffn, d),
               ('dec.wo', d, ffn), ('lm_head', vocab, d)]
        cross_kv = [('dec.cross_k', d, d), ('dec.cross_v', d, d)]
        for b in (1, 8, 32):
            for layer, o, i in enc + cross_kv:
                linear(out, 512 * b, o, i, ('bf16',), ('fwd',), 't5 %s.%s.infer' % (model, layer))
            for layer, o, i in dec:
                linear(out, b, o, i, ('bf16',), ('fwd',), 't5 %s.%s.decode' % (model, layer))
        for b in (8, 32):
            for layer, o, i in enc + cross_kv:
                linear(out, 512 * b, o, i, ('bf16',), ('fwd', 'dgrad', 'wgrad'), 't5 %s.%s.train' % (model, layer))
            for layer, o, i in dec:
                linear(out, 128 * b, o, i, ('bf16',), ('fwd', 'dgrad', 'wgrad'), 't5 %s.%s.train' % (model, layer))


def whisper_shapes(linear, roles, out):
    for model, d, ffn, mels, vocab in (('whisper_small', 768, 3072, 80, 51865),
                                       ('whisper_large_v3', 1280, 5120, 128, 51866)):
        attn = [('q', d, d), ('k', d, d), ('v', d, d), ('o', d, d), ('fc1', ffn, d), ('fc2', d, ffn)]
        for b in (1, 4, 16):
            # conv1 (mels -> d, kernel 3) over 3,000 frames, conv2 (d -> d, kernel 3, stride 2) to 1,500
            out.append((3000 * b, d, 3 * mels, 'fp16', roles['fwd'], 'whisper %s.conv1.infer.fwd' % model, 1))
            out.append((1500 * b, d, 3 * d, 'fp16', roles['fwd'], 'whisper %s.conv2.infer.fwd' % model, 1))
            for layer, o, i in attn:
                linear(out, 1500 * b, o, i, ('fp16',), ('fwd',), 'whisper %s.enc.%s.infer' % (model, layer))
            for layer, o, i in attn[:2]:
                linear(out, 1500 * b, o, i, ('fp16',), ('fwd',), 'whisper %s.dec.cross_%s.infer' % (model, layer))
            for layer, o, i in attn + [('lm_head', vocab, d)]:
                linear(out, b, o, i, ('fp16',), ('fwd',), 'whisper %s.dec.%s.decode' % (model, layer))
        b = 16
        for layer, o, i in attn:
            linear(out, 1500 * b, o, i, ('bf16',), ('fwd', 'dgrad', 'wgrad'), 'whisper %s.enc.%s.train' % (model, layer))
        for layer, o, i in attn + [('lm_head', vocab, d)]:
            linear(out, 448 * b, o, i, ('bf16',), ('fwd', 'dgrad', 'wgrad'), 'whisper %s.dec.%s.train' % (model, layer))


def vit_block(linear, out, family, model, tokens, h, ffn, gated, batches, train_batches, patch):
    """A ViT's patch embedding (a GEMM over the patches) and its blocks' projections, inference in fp16 at every
    batch, training in bf16 and tf32 at train_batches."""
    layers = [('qkv', 3 * h, h), ('proj', h, h), ('fc1', 2 * ffn if gated else ffn, h), ('fc2', h, ffn)]
    for b in batches:
        if patch:
            linear(out, patch[0] * b, h, patch[1], ('fp16',), ('fwd',), '%s %s.patch_embed.infer' % (family, model))
        for layer, o, i in layers:
            linear(out, tokens * b, o, i, ('fp16',), ('fwd',), '%s %s.%s.infer' % (family, model, layer))
        if b in train_batches:
            for layer, o, i in layers:
                linear(out, tokens * b, o, i, ('bf16', 'tf32'), ('fwd', 'dgrad', 'wgrad'),
                       '%s %s.%s.train' % (family, model, layer))


def vision_shapes(linear, out):
    # CLIP ViT-L/14: vision 257 tokens (16x16 patches of 14 px, 3 x 14 x 14 = 588 inputs), text 77 tokens
    vit_block(linear, out, 'clip', 'clip_l14_vision', 257, 1024, 4096, False, (1, 8, 32, 128), (32,), (256, 588))
    vit_block(linear, out, 'clip', 'clip_l14_text', 77, 768, 3072, False, (1, 8, 32, 128), (32, 128), None)
    for b in (1, 32, 128):
        linear(out, b, 768, 1024, ('fp16',), ('fwd',), 'clip clip_l14.visual_proj.infer')
        linear(out, b, 768, 768, ('fp16',), ('fwd',), 'clip clip_l14.text_proj.infer')
    # DINOv2 ViT-g/14: 224 px (256 patches + class) and 518 px (37 x 37 + class)
    vit_block(linear, out, 'dinov2', 'dinov2_g14', 257, 1536, 4096, True, (1, 8, 32), (8,), (256, 588))
    vit_block(linear, out, 'dinov2', 'dinov2_g14_518', 1370, 1536, 4096, True, (1, 4), (), (1369, 588))
    # DeiT-S and DeiT-B distilled: 196 patches + class + distillation tokens
    vit_block(linear, out, 'deit', 'deit_s', 198, 384, 1536, False, (1, 8, 64, 256), (64, 256), (196, 768))
    vit_block(linear, out, 'deit', 'deit_b_distilled', 198, 768, 3072, False, (1, 8, 64, 256), (64,), (196, 768))
    # SAM image encoders at 1024 px: 64 x 64 patches of 16 px
    for model, h, ffn in (('sam_vit_b', 768, 3072), ('sam_vit_h', 1280, 5120)):
        for b in (1, 4):
            phases = [('infer', ('fp16',), ('fwd',))] + ([('train', ('bf16',), ('fwd', 'dgrad', 'wgrad'))]
                                                         if b == 4 else [])
            for phase, dts, roles in phases:
                linear(out, 4096 * b, h, 768, dts, roles, 'sam %s.patch_embed.%s' % (model, phase))
                for blocks, tokens in (('window', 4900), ('global', 4096)):
                    for layer, o, i in (('qkv', 3 * h, h), ('proj', h, h), ('fc1', ffn, h), ('fc2', h, ffn)):
                        linear(out, tokens * b, o, i, dts, roles, 'sam %s.%s.%s.%s' % (model, blocks, layer, phase))
                linear(out, 4096 * b, 256, h, dts, roles, 'sam %s.neck_conv1.%s' % (model, phase))


def sd_unet_shapes(linear, out):
    """The U-Net's transformer blocks: tokens a latent pixel, channels c at each resolution."""
    for model, levels, ctx in (('sd15', ((64, 320), (32, 640), (16, 1280), (8, 1280)), 768),
                               ('sdxl', ((64, 640), (32, 1280)), 2048)):
        for side, c in levels:
            layers = [('proj_in', c, c), ('attn1_q', c, c), ('attn1_k', c, c), ('attn1_v', c, c),
                      ('attn1_o', c, c), ('attn2_q', c, c), ('attn2_o', c, c), ('ff_geglu', 8 * c, c),
                      ('ff_out', c, 4 * c), ('proj_out', c, c)]
            for b in (2, 8):
                tag = 'sd_unet %s.%dpx_%%s.%s' % (model, side, 'infer')
                for layer, o, i in layers:
                    linear(out, side * side * b, o, i, ('fp16',), ('fwd',), tag % layer)
                for layer in ('attn2_k', 'attn2_v'):
                    linear(out, 77 * b, c, ctx, ('fp16',), ('fwd',), tag % layer)
            b = 8
            tag = 'sd_unet %s.%dpx_%%s.train' % (model, side)
            for layer, o, i in layers:
                linear(out, side * side * b, o, i, ('bf16',), ('fwd', 'dgrad', 'wgrad'), tag % layer)
            for layer in ('attn2_k', 'attn2_v'):
                linear(out, 77 * b, c, ctx, ('bf16',), ('fwd', 'dgrad', 'wgrad'), tag % layer)


def conv_shapes(linear, roles, out):
    nets = (('efficientnet', 'efficientnet_b0', conv_networks.efficientnet(224, 1.0, 1.0)),
            ('densenet', 'densenet121', conv_networks.densenet121(224)),
            ('convnext', 'convnext_t', conv_networks.convnext_tiny(224)))
    for family, model, net in nets:
        conv_networks.implicit_gemms(out, family, model, net, roles)
    # ConvNeXt-T's block MLP: pointwise linear layers (dim -> 4 dim -> dim) over the stage's pixels
    for stage, (side, dim) in enumerate(((56, 96), (28, 192), (14, 384), (7, 768))):
        for b in (1, 8, 32):
            for layer, o, i in (('pwconv1', 4 * dim, dim), ('pwconv2', dim, 4 * dim)):
                linear(out, side * side * b, o, i, ('fp16',), ('fwd',),
                       'convnext convnext_t.stages.%d.%s.infer' % (stage, layer))
                if b == 32:
                    linear(out, side * side * b, o, i, ('tf32', 'fp32'), ('fwd', 'dgrad', 'wgrad'),
                           'convnext convnext_t.stages.%d.%s.train' % (stage, layer))


def more_shapes(rng, linear, roles, out):
    """Appends every new family's GEMMs to out, in family order: gemm_real_shapes.py's tuples, through its
    `linear` and its trans of each role (`roles`), passed in so that this module does not import its caller."""
    llm_shapes(rng, linear, out)
    t5_shapes(linear, out)
    whisper_shapes(linear, roles, out)
    vision_shapes(linear, out)
    sd_unet_shapes(linear, out)
    conv_shapes(linear, roles, out)
