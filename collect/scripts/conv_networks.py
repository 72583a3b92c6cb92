#!/usr/bin/env python3
"""The convolution layers of real networks as cuDNN collection problem keys: an out-of-pool test set.

Each network is written by hand from its published architecture (layer by layer, as torchvision, the papers
or the reference code build it; no framework is imported), traced at several batch sizes and input
resolutions, and every convolution becomes a geometry (sample_problems.py's forward-convention tuple: every
numeric field of a key). A geometry gives nine keys: F, B, W in FP32, FP16 and BF16 (NCHW / NCDHW, MIOpen's
find-db key syntax that `heurist-collect conv` reads).

Filters, in order (each counted in the summary):
  - the pool's size caps (sample_problems.py): every tensor at most --max-tensor-mib MiB in FP32, forward
    FLOPs at most 2^--max-log2-flops;
  - geometries already in the training pool (every key of --pool, any direction or data type), so the set is
    never trained on;
  - duplicates: a geometry met in several networks or layers is kept once, under the first (network order
    below, then layer order); the TSV's `also` column names the other networks that have it.
Then a seeded sample of --geometries geometries: each network gets an equal share (a network with fewer
geometries gives its remainder to the others), drawn uniformly from its geometries; the sample is shuffled and
written in chunks of --chunk geometries (all nine keys of a geometry in one chunk), so any prefix of chunks is
itself a sample of every network.

Outputs in --out: chunk_NNN.txt (keys), networks.tsv (key, network, layer, batch, resolution, family, dims,
groups class, also), and on stdout the counts; --estimate models the collection time from the pool's
find-db (see estimate()).

    python3 collect/scripts/conv_networks.py --out datasets/h100/networks --estimate
"""
import argparse
import bz2
import glob
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sample_problems  # noqa: E402  (parse, key, flops, max_tensor_bytes: the pool's own definitions)

DTYPES = ('FP32', 'FP16', 'BF16')
DIRECTIONS = 'FBW'


def _tuple(v, nd):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd


class Net:
    """Traces a network's convolutions at batch 1: conv() takes the input (channels, spatial) and returns the
    output's. Layers are (name, cin, insp, fil, cout, outsp, pad, stride, dil, groups)."""

    def __init__(self, nd):
        self.nd = nd
        self.layers = []

    def conv(self, name, x, cout, k, s=1, p=None, g=1, d=1):
        cin, sp = x
        nd = self.nd
        k, s, d = _tuple(k, nd), _tuple(s, nd), _tuple(d, nd)
        p = tuple(dd * (kk - 1) // 2 for kk, dd in zip(k, d)) if p is None else _tuple(p, nd)
        out = tuple((i + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for i, pp, dd, kk, ss in zip(sp, p, d, k, s))
        assert cin % g == 0 and cout % g == 0 and min(out) >= 1, (name, x, cout, k, s, p, g)
        self.layers.append((name, cin, tuple(sp), k, cout, out, p, s, d, g))
        return cout, out


def pool(x, k, s, p=0):
    c, sp = x
    return c, tuple((i + 2 * p - k) // s + 1 for i in sp)


def upsample(x, c_skip):
    """Nearest/bilinear x2 upsampling concatenated with a skip connection of c_skip channels."""
    c, sp = x
    return c + c_skip, tuple(2 * i for i in sp)


def make_divisible(v, divisor=8):
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


# ---- 2-D image classifiers ----

def resnet(res, blocks, bottleneck, width_per_group=64, groups=1, width_mult=1):
    n = Net(2)
    x = n.conv('conv1', (3, (res, res)), 64, 7, 2, 3)
    x = pool(x, 3, 2, 1)
    for li, (planes, nb) in enumerate(zip((64, 128, 256, 512), blocks)):
        for b in range(nb):
            s = 2 if li > 0 and b == 0 else 1
            pre = 'layer%d.%d.' % (li + 1, b)
            cin = x[0]
            if bottleneck:
                width = int(planes * width_per_group / 64.0) * groups * width_mult
                cout = planes * 4
                y = n.conv(pre + 'conv1', x, width, 1)
                y = n.conv(pre + 'conv2', y, width, 3, s, g=groups)
                y = n.conv(pre + 'conv3', y, cout, 1)
            else:
                cout = planes
                y = n.conv(pre + 'conv1', x, cout, 3, s)
                y = n.conv(pre + 'conv2', y, cout, 3)
            if s != 1 or cin != cout:
                n.conv(pre + 'downsample', x, cout, 1, s)
            x = y
    return n


def vgg16(res):
    n = Net(2)
    x = (3, (res, res))
    i = 0
    for v in (64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'):
        if v == 'M':
            x = pool(x, 2, 2)
        else:
            x = n.conv('features.%d' % i, x, v, 3)
        i += 1
    return n


def densenet121(res):
    n = Net(2)
    x = n.conv('conv0', (3, (res, res)), 64, 7, 2, 3)
    x = pool(x, 3, 2, 1)
    c, sp = x
    for bi, nl in enumerate((6, 12, 24, 16)):
        for li in range(nl):
            pre = 'denseblock%d.denselayer%d.' % (bi + 1, li + 1)
            y = n.conv(pre + 'conv1', (c, sp), 128, 1)
            n.conv(pre + 'conv2', y, 32, 3)
            c += 32
        if bi < 3:
            x = n.conv('transition%d.conv' % (bi + 1), (c, sp), c // 2, 1)
            c, sp = pool(x, 2, 2)
    return n


def mobilenet_v2(res):
    n = Net(2)
    x = n.conv('features.0', (3, (res, res)), 32, 3, 2)
    i = 1
    for t, c, reps, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                          (6, 320, 1, 1)):
        for r in range(reps):
            pre = 'features.%d.' % i
            hidden = x[0] * t
            y = n.conv(pre + 'expand', x, hidden, 1) if t != 1 else x
            y = n.conv(pre + 'dw', y, hidden, 3, s if r == 0 else 1, g=hidden)
            x = n.conv(pre + 'project', y, c, 1)
            i += 1
    n.conv('features.18', x, 1280, 1)
    return n


def se(n, pre, x, squeeze):
    """Squeeze-excite: two 1x1 convolutions on the pooled (1x1) features."""
    c = x[0]
    one = (1,) * n.nd
    y = n.conv(pre + 'se.fc1', (c, one), squeeze, 1)
    n.conv(pre + 'se.fc2', y, c, 1)


def mobilenet_v3_large(res):
    n = Net(2)
    x = n.conv('features.0', (3, (res, res)), 16, 3, 2)
    rows = ((3, 16, 16, 0, 1), (3, 64, 24, 0, 2), (3, 72, 24, 0, 1), (5, 72, 40, 1, 2), (5, 120, 40, 1, 1),
            (5, 120, 40, 1, 1), (3, 240, 80, 0, 2), (3, 200, 80, 0, 1), (3, 184, 80, 0, 1), (3, 184, 80, 0, 1),
            (3, 480, 112, 1, 1), (3, 672, 112, 1, 1), (5, 672, 160, 1, 2), (5, 960, 160, 1, 1), (5, 960, 160, 1, 1))
    for i, (k, exp, out, use_se, s) in enumerate(rows):
        pre = 'features.%d.' % (i + 1)
        y = n.conv(pre + 'expand', x, exp, 1) if exp != x[0] else x
        y = n.conv(pre + 'dw', y, exp, k, s, g=exp)
        if use_se:
            se(n, pre, y, make_divisible(exp // 4))
        x = n.conv(pre + 'project', y, out, 1)
    n.conv('features.16', x, 960, 1)
    return n


def efficientnet(res, width, depth):
    n = Net(2)
    x = n.conv('features.0', (3, (res, res)), make_divisible(32 * width), 3, 2)
    stage = 1
    for e, k, s, cin, cout, reps in ((1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2),
                                     (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
                                     (6, 3, 1, 192, 320, 1)):
        cout = make_divisible(cout * width)
        for r in range(int(math.ceil(reps * depth))):
            pre = 'features.%d.%d.' % (stage, r)
            cin_b = x[0]
            hidden = make_divisible(cin_b * e)
            y = n.conv(pre + 'expand', x, hidden, 1) if e != 1 else x
            y = n.conv(pre + 'dw', y, hidden, k, s if r == 0 else 1, g=hidden)
            se(n, pre, y, max(1, cin_b // 4))
            x = n.conv(pre + 'project', y, cout, 1)
        stage += 1
    n.conv('features.%d' % stage, x, make_divisible(1280 * width), 1)
    return n


def convnext_tiny(res):
    n = Net(2)
    x = n.conv('stem', (3, (res, res)), 96, 4, 4, 0)
    dims = (96, 192, 384, 768)
    for si, (dim, reps) in enumerate(zip(dims, (3, 3, 9, 3))):
        if si:
            x = n.conv('downsample%d' % si, x, dim, 2, 2, 0)
        for b in range(reps):
            n.conv('stages.%d.%d.dwconv' % (si, b), x, dim, 7, 1, 3, g=dim)
    return n


def regnet(res, depths, widths, group_width, se_ratio):
    n = Net(2)
    x = n.conv('stem', (3, (res, res)), 32, 3, 2)
    for si, (d, w) in enumerate(zip(depths, widths)):
        for b in range(d):
            pre = 'trunk.block%d-%d.' % (si + 1, b)
            s = 2 if b == 0 else 1
            cin = x[0]
            y = n.conv(pre + 'a', x, w, 1)
            y = n.conv(pre + 'b', y, w, 3, s, g=w // group_width)
            if se_ratio:
                se(n, pre, y, int(round(cin * se_ratio)))
            n.conv(pre + 'c', y, w, 1)
            if s != 1 or cin != w:
                n.conv(pre + 'proj', x, w, 1, s)
            x = (w, y[1])
    return n


def inception_v3(res):
    n = Net(2)
    x = n.conv('Conv2d_1a_3x3', (3, (res, res)), 32, 3, 2, 0)
    x = n.conv('Conv2d_2a_3x3', x, 32, 3, 1, 0)
    x = n.conv('Conv2d_2b_3x3', x, 64, 3, 1, 1)
    x = pool(x, 3, 2)
    x = n.conv('Conv2d_3b_1x1', x, 80, 1)
    x = n.conv('Conv2d_4a_3x3', x, 192, 3, 1, 0)
    x = pool(x, 3, 2)
    for name, pf in (('Mixed_5b', 32), ('Mixed_5c', 64), ('Mixed_5d', 64)):  # InceptionA
        n.conv(name + '.branch1x1', x, 64, 1)
        y = n.conv(name + '.branch5x5_1', x, 48, 1)
        n.conv(name + '.branch5x5_2', y, 64, 5)
        y = n.conv(name + '.branch3x3dbl_1', x, 64, 1)
        y = n.conv(name + '.branch3x3dbl_2', y, 96, 3)
        n.conv(name + '.branch3x3dbl_3', y, 96, 3)
        n.conv(name + '.branch_pool', x, pf, 1)
        x = (64 + 64 + 96 + pf, x[1])
    y = n.conv('Mixed_6a.branch3x3', x, 384, 3, 2, 0)  # InceptionB
    z = n.conv('Mixed_6a.branch3x3dbl_1', x, 64, 1)
    z = n.conv('Mixed_6a.branch3x3dbl_2', z, 96, 3)
    n.conv('Mixed_6a.branch3x3dbl_3', z, 96, 3, 2, 0)
    x = (384 + 96 + x[0], y[1])
    for name, c7 in (('Mixed_6b', 128), ('Mixed_6c', 160), ('Mixed_6d', 160), ('Mixed_6e', 192)):  # InceptionC
        n.conv(name + '.branch1x1', x, 192, 1)
        y = n.conv(name + '.branch7x7_1', x, c7, 1)
        y = n.conv(name + '.branch7x7_2', y, c7, (1, 7), p=(0, 3))
        n.conv(name + '.branch7x7_3', y, 192, (7, 1), p=(3, 0))
        y = n.conv(name + '.branch7x7dbl_1', x, c7, 1)
        y = n.conv(name + '.branch7x7dbl_2', y, c7, (7, 1), p=(3, 0))
        y = n.conv(name + '.branch7x7dbl_3', y, c7, (1, 7), p=(0, 3))
        y = n.conv(name + '.branch7x7dbl_4', y, c7, (7, 1), p=(3, 0))
        n.conv(name + '.branch7x7dbl_5', y, 192, (1, 7), p=(0, 3))
        n.conv(name + '.branch_pool', x, 192, 1)
        x = (768, x[1])
    y = n.conv('Mixed_7a.branch3x3_1', x, 192, 1)  # InceptionD
    y = n.conv('Mixed_7a.branch3x3_2', y, 320, 3, 2, 0)
    z = n.conv('Mixed_7a.branch7x7x3_1', x, 192, 1)
    z = n.conv('Mixed_7a.branch7x7x3_2', z, 192, (1, 7), p=(0, 3))
    z = n.conv('Mixed_7a.branch7x7x3_3', z, 192, (7, 1), p=(3, 0))
    n.conv('Mixed_7a.branch7x7x3_4', z, 192, 3, 2, 0)
    x = (320 + 192 + 768, y[1])
    for name in ('Mixed_7b', 'Mixed_7c'):  # InceptionE
        n.conv(name + '.branch1x1', x, 320, 1)
        y = n.conv(name + '.branch3x3_1', x, 384, 1)
        n.conv(name + '.branch3x3_2a', y, 384, (1, 3), p=(0, 1))
        n.conv(name + '.branch3x3_2b', y, 384, (3, 1), p=(1, 0))
        y = n.conv(name + '.branch3x3dbl_1', x, 448, 1)
        y = n.conv(name + '.branch3x3dbl_2', y, 384, 3)
        n.conv(name + '.branch3x3dbl_3a', y, 384, (1, 3), p=(0, 1))
        n.conv(name + '.branch3x3dbl_3b', y, 384, (3, 1), p=(1, 0))
        n.conv(name + '.branch_pool', x, 192, 1)
        x = (2048, x[1])
    return n


def unet2d(res):
    """U-Net with bilinear upsampling (the common PyTorch variant): double 3x3 convolutions, channels
    64..512 (1024 // 2 at the bottom), a 1x1 head to 2 classes."""
    n = Net(2)
    skips = []
    x = (3, (res, res))
    for i, c in enumerate((64, 128, 256, 512, 512)):
        if i:
            x = pool(x, 2, 2)
        x = n.conv('down%d.conv1' % i, x, c, 3)
        x = n.conv('down%d.conv2' % i, x, c, 3)
        skips.append(x)
    for i, (mid, c) in enumerate(((512, 256), (256, 128), (128, 64), (64, 64))):
        x = upsample(x, skips[3 - i][0])
        x = n.conv('up%d.conv1' % i, x, mid, 3)
        x = n.conv('up%d.conv2' % i, x, c, 3)
    n.conv('outc', x, 2, 1)
    return n


# ---- 3-D: video ----

def r2plus1d_18(t, res):
    n = Net(3)
    x = n.conv('stem.0', (3, (t, res, res)), 45, (1, 7, 7), (1, 2, 2), (0, 3, 3))
    x = n.conv('stem.3', x, 64, (3, 1, 1), 1, (1, 0, 0))
    for li, planes in enumerate((64, 128, 256, 512)):
        for b in range(2):
            s = 2 if li > 0 and b == 0 else 1
            pre = 'layer%d.%d.' % (li + 1, b)
            cin = x[0]
            y = x
            for ci, c_in in enumerate((cin, planes)):
                mid = (c_in * planes * 27) // (c_in * 9 + 3 * planes)
                y = n.conv(pre + 'conv%d.spatial' % (ci + 1), y, mid, (1, 3, 3), (1, s, s) if ci == 0 else 1, (0, 1, 1))
                y = n.conv(pre + 'conv%d.temporal' % (ci + 1), y, planes, (3, 1, 1), (s, 1, 1) if ci == 0 else 1,
                           (1, 0, 0))
            if s != 1 or cin != planes:
                n.conv(pre + 'downsample', x, planes, 1, s, 0)
            x = y
    return n


def x3d_m(t, res):
    """X3D-M: a (1,3,3) stem with a depthwise (5,1,1) temporal convolution, bottlenecks with depthwise 3x3x3
    convolutions (expansion 2.25), squeeze-excite in every other block."""
    n = Net(3)
    x = n.conv('stem.conv_xy', (3, (t, res, res)), 24, (1, 3, 3), (1, 2, 2), (0, 1, 1))
    x = n.conv('stem.conv_t', x, 24, (5, 1, 1), 1, (2, 0, 0), g=24)
    for si, (w, reps) in enumerate(zip((24, 48, 96, 192), (3, 5, 11, 7))):
        inner = int(2.25 * w)
        for b in range(reps):
            pre = 's%d.res%d.' % (si + 2, b)
            s = (1, 2, 2) if b == 0 else 1
            cin = x[0]
            y = n.conv(pre + 'a', x, inner, 1)
            y = n.conv(pre + 'b', y, inner, 3, s, 1, g=inner)
            if b % 2 == 0:
                se(n, pre, y, make_divisible(inner * 0.0625))
            n.conv(pre + 'c', y, w, 1)
            if b == 0:
                n.conv(pre + 'branch1', x, w, 1, s, 0)
            x = (w, y[1])
    n.conv('head.conv_5', x, 432, 1)
    return n


def slowfast_r50(t, res, alpha=4, beta_inv=8, fusion_k=7):
    """SlowFast R50 (8x8): slow pathway t // alpha frames, fast t frames with 1/8 the channels; lateral
    (fusion_k,1,1) convolutions of stride alpha from fast to slow after the stem and each of res2-res4."""
    n = Net(3)
    slow = n.conv('s1.slow.conv', (3, (t // alpha, res, res)), 64, (1, 7, 7), (1, 2, 2), (0, 3, 3))
    fast = n.conv('s1.fast.conv', (3, (t, res, res)), 64 // beta_inv, (5, 7, 7), (1, 2, 2), (2, 3, 3))
    # the (1,3,3) stride (1,2,2) max pool of both pathways
    slow = (slow[0], (slow[1][0], (slow[1][1] - 1) // 2 + 1, (slow[1][2] - 1) // 2 + 1))
    fast = (fast[0], (fast[1][0], (fast[1][1] - 1) // 2 + 1, (fast[1][2] - 1) // 2 + 1))
    for si, (planes, reps) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3))):
        lat = n.conv('s%d_fuse.conv_f2s' % (si + 1), fast, 2 * fast[0], (fusion_k, 1, 1), (alpha, 1, 1),
                     (fusion_k // 2, 0, 0))
        slow = (slow[0] + lat[0], slow[1])
        for path, x, div, t_slow in (('slow', slow, 1, si >= 2), ('fast', fast, beta_inv, True)):
            width, cout = planes // div, 4 * planes // div
            kt = 3 if t_slow else 1
            for b in range(reps):
                pre = 's%d.%s.res%d.' % (si + 2, path, b)
                s = (1, 2, 2) if si > 0 and b == 0 else 1
                cin = x[0]
                y = n.conv(pre + 'a', x, width, (kt, 1, 1), 1, (kt // 2, 0, 0))
                y = n.conv(pre + 'b', y, width, (1, 3, 3), s, (0, 1, 1))
                y = n.conv(pre + 'c', y, cout, 1)
                if b == 0:
                    n.conv(pre + 'branch1', x, cout, 1, s, 0)
                x = (cout, y[1])
            if path == 'slow':
                slow = x
            else:
                fast = x
    return n


# ---- 3-D: medical ----

def unet3d(d, res):
    """3-D U-Net (Cicek et al., padded convolutions, trilinear upsampling): two 3x3x3 convolutions per level,
    32-64 / 64-128 / 128-256 / 256-512, decoder levels on the concatenation, a 1x1x1 head to 3 classes."""
    n = Net(3)
    x = (1, (d, res, res))
    skips = []
    for i, (c1, c2) in enumerate(((32, 64), (64, 128), (128, 256), (256, 512))):
        if i:
            x = pool(x, 2, 2)
        x = n.conv('enc%d.conv1' % i, x, c1, 3)
        x = n.conv('enc%d.conv2' % i, x, c2, 3)
        skips.append(x)
    for i, c in enumerate((256, 128, 64)):
        x = upsample(x, skips[2 - i][0])
        x = n.conv('dec%d.conv1' % i, x, c, 3)
        x = n.conv('dec%d.conv2' % i, x, c, 3)
    n.conv('head', x, 3, 1)
    return n


def vnet(d, res):
    """V-Net (Milletari et al.): 5x5x5 convolutions, 1-3 a stage, 2x2x2 stride-2 down convolutions, channels
    16..256; the decoder's up-convolutions are transposed (not plain convolutions) and left out, its 5x5x5
    convolutions kept."""
    n = Net(3)
    x = n.conv('in_tr', (1, (d, res, res)), 16, 5)
    skips = [x]
    for i, (c, reps) in enumerate(((32, 1), (64, 2), (128, 3), (256, 2))):
        x = n.conv('down%d.down_conv' % i, x, c, 2, 2, 0)
        for r in range(reps):
            x = n.conv('down%d.conv%d' % (i, r), x, c, 5)
        skips.append(x)
    for i, (c, reps) in enumerate(((256, 2), (128, 2), (64, 1), (32, 1))):
        half = c // 2
        sp = tuple(2 * v for v in x[1])
        x = (half + skips[3 - i][0], sp)
        for r in range(reps):
            x = n.conv('up%d.conv%d' % (i, r), x, c, 5)
    n.conv('out_tr', x, 2, 1)
    return n


# (name, family, builder(resolution), resolutions, batches)
CLS_BATCH = (1, 8, 32, 128)
NETWORKS = [
    ('resnet18', 'resnet', lambda r: resnet(r, (2, 2, 2, 2), False), (224, 320), CLS_BATCH),
    ('resnet50', 'resnet', lambda r: resnet(r, (3, 4, 6, 3), True), (224, 320), CLS_BATCH),
    ('resnet101', 'resnet', lambda r: resnet(r, (3, 4, 23, 3), True), (224, 320), CLS_BATCH),
    ('resnext50_32x4d', 'resnext', lambda r: resnet(r, (3, 4, 6, 3), True, 4, 32), (224, 320), CLS_BATCH),
    ('wide_resnet50_2', 'wide_resnet', lambda r: resnet(r, (3, 4, 6, 3), True, width_mult=2), (224, 320), CLS_BATCH),
    ('mobilenet_v2', 'mobilenet', mobilenet_v2, (224, 320), CLS_BATCH),
    ('mobilenet_v3_large', 'mobilenet', mobilenet_v3_large, (224, 320), CLS_BATCH),
    ('efficientnet_b0', 'efficientnet', lambda r: efficientnet(r, 1.0, 1.0), (224, 320), CLS_BATCH),
    ('efficientnet_b4', 'efficientnet', lambda r: efficientnet(r, 1.4, 1.8), (320, 380), CLS_BATCH),
    ('convnext_tiny', 'convnext', convnext_tiny, (224, 288), CLS_BATCH),
    ('regnet_x_3_2gf', 'regnet', lambda r: regnet(r, (2, 6, 15, 2), (96, 192, 432, 1008), 48, 0), (224, 288), CLS_BATCH),
    ('regnet_y_3_2gf', 'regnet', lambda r: regnet(r, (2, 5, 13, 1), (72, 216, 576, 1512), 24, 0.25), (224, 288),
     CLS_BATCH),
    ('vgg16', 'vgg', vgg16, (224,), (1, 8, 32)),
    ('densenet121', 'densenet', densenet121, (224, 320), CLS_BATCH),
    ('inception_v3', 'inception', inception_v3, (299,), CLS_BATCH),
    ('unet2d', 'unet2d', unet2d, (256, 384, 512), (1, 4, 16)),
    ('r2plus1d_18', 'video3d', lambda r: r2plus1d_18(16, r), (112, 160), (1, 8, 16)),
    ('x3d_m', 'video3d', lambda r: x3d_m(16, r), (160, 224), (1, 4, 8)),
    ('slowfast_r50', 'video3d', lambda r: slowfast_r50(32, r), (224,), (1, 4, 8)),
    ('unet3d', 'medical3d', lambda r: unet3d(r, r), (64, 96, 128), (1, 2)),
    ('vnet', 'medical3d', lambda r: vnet(r // 2, r), (64, 128), (1, 2)),
]


def geometry(layer, nd, batch):
    name, cin, insp, fil, cout, outsp, pad, stride, dil, groups = layer
    return (nd, cin, insp, fil, cout, outsp, batch, pad, stride, dil, 0, groups)


def group_class(g):
    groups, cin = g[11], g[1]
    return 'dense' if groups == 1 else 'depthwise' if groups == cin and g[4] == cin else 'grouped'


def enumerate_networks():
    """Every (geometry, network, family, layer, batch, resolution) in network, resolution, batch, layer order."""
    for name, family, build, resolutions, batches in NETWORKS:
        for r in resolutions:
            net = build(r)
            for b in batches:
                for layer in net.layers:
                    yield geometry(layer, net.nd, b), name, family, layer[0], b, r



def implicit_gemms(out, family, model, net, roles):
    """Appends the GEMMs of net's convolutions with one group lowered to implicit GEMM, at batches 1, 8 and 32
    (gemm_real_shapes.py's tuples (m, n, k, dtype, trans, "FAMILY MODEL.LAYER.PHASE.ROLE", 1), `roles` its trans of
    each role): fwd M = batch x output pixels, N = out channels, K = in channels x filter, fp16 inference at every
    batch; training (batches 8 and 32, tf32 and fp32) fwd, dgrad M = batch x input pixels, N = in channels, K = out
    channels x filter, and wgrad M = out channels, N = in channels x filter, K = batch x output pixels."""
    for name, cin, insp, fil, cout, outsp, pad, stride, dil, groups in net.layers:
        if groups != 1:
            continue
        kk = math.prod(fil)
        for b in (1, 8, 32):
            p_out, p_in = b * math.prod(outsp), b * math.prod(insp)
            tag = '%s %s.%s' % (family, model, name)
            out.append((p_out, cout, cin * kk, 'fp16', roles['fwd'], tag + '.infer.fwd', 1))
            if b == 1:
                continue
            for dt in ('tf32', 'fp32'):
                out.append((p_out, cout, cin * kk, dt, roles['fwd'], tag + '.train.fwd', 1))
                out.append((p_in, cin, cout * kk, dt, roles['dgrad'], tag + '.train.dgrad', 1))
                out.append((cout, cin * kk, p_out, dt, roles['wgrad'], tag + '.train.wgrad', 1))


def pool_geometries(paths):
    out = set()
    for path in paths:
        opener = bz2.open if path.endswith('.bz2') else open
        with opener(path, 'rt') as f:
            for line in f:
                g = sample_problems.parse(line.split('=', 1)[0].strip())
                if g is not None:
                    out.add(g)
    return out


def select(args):
    """The filtered, deduplicated geometries and the seeded sample (see the module's docstring)."""
    pool = pool_geometries(args.pool)
    counts = {'layers traced (all batches and resolutions)': 0, 'tensor cap': 0, 'FLOP cap': 0,
              'in the training pool': 0, 'duplicate of an earlier layer': 0}
    first, also, by_net = {}, {}, {}
    in_pool = set()
    for g, net, family, layer, batch, res in enumerate_networks():
        counts['layers traced (all batches and resolutions)'] += 1
        if sample_problems.max_tensor_bytes(g) > args.max_tensor_mib * 2**20:
            counts['tensor cap'] += 1
        elif math.log2(max(sample_problems.flops(g), 1.0)) > args.max_log2_flops:
            counts['FLOP cap'] += 1
        elif g in pool:
            counts['in the training pool'] += 1
            in_pool.add(g)
        elif g in first:
            counts['duplicate of an earlier layer'] += 1
            if net != first[g][0] and net not in also[g]:
                also[g].append(net)
        else:
            first[g] = (net, family, layer, batch, res)
            also[g] = []
            by_net.setdefault(net, []).append(g)
    rng = random.Random(args.seed)
    want = min(args.geometries, len(first))
    names = [n for n, *_ in NETWORKS if n in by_net]
    quota = {n: 0 for n in names}
    left, open_nets = want, list(names)
    while left > 0 and open_nets:  # equal shares; a network with fewer geometries gives the rest away
        share = max(1, left // len(open_nets))
        for n in list(open_nets):
            take = min(share, len(by_net[n]) - quota[n], left)
            quota[n] += take
            left -= take
            if quota[n] == len(by_net[n]):
                open_nets.remove(n)
            if left == 0:
                break
    sample = []
    for n in names:
        sample += rng.sample(by_net[n], quota[n])
    rng.shuffle(sample)
    return sample, first, also, counts, len(in_pool), by_net


def cost_model(fdb, run_logs):
    """The modelled collection seconds of a problem key on one GPU, from the pool's find-db and its run logs.

    Per pool problem, m = the sum over its timed kernels of the timing method's GPU time (gpu.h): a warm-up t
    plus 5 repeats of max(0.2 ms, t), or two warm-ups 2t for a kernel slower than 5x the best; the runs' wall
    seconds T_r (run logs, contiguous ranges of the find-db's lines) fit T_r = a n_r + b M_r by least squares
    (a >= 0).
    A key costs the mean fitted cost of the pool's problems of its direction, data type (BF16 as FP16), dims
    and log2-FLOP bucket (the nearest bucket when its own is empty).
    Returns (cost(key) in seconds, a, b, the runs' mean seconds a problem)."""
    costs = []
    with bz2.open(fdb, 'rt') as f:
        for line in f:
            key, _, rest = line.partition('=')
            times = [float(e.split(':', 1)[1].split(',', 1)[0]) for e in rest.strip().split(';') if e]
            best = min(times)
            m = sum(2 * t if t > 5 * best else t + 5 * max(0.2, t) for t in times)
            t = key.split('-')
            g = sample_problems.parse(key)
            costs.append((m * 1e-3, (t[-1][0], t[-2], g[0]), int(math.log2(max(sample_problems.flops(g), 1)))))
    runs = []
    for path in run_logs:
        with open(path) as f:
            for line in f:
                if 'problems written' in line:
                    w = line.split()
                    runs.append((int(w[0]), float(w[w.index('output,') + 1])))
    pos, rows = 0, []
    for n_r, t_r in runs:
        rows.append((n_r, sum(c[0] for c in costs[pos:pos + n_r]), t_r))
        pos += n_r
    saa = sum(n * n for n, _, _ in rows)
    sab = sum(n * m for n, m, _ in rows)
    sbb = sum(m * m for _, m, _ in rows)
    sat = sum(n * t for n, _, t in rows)
    sbt = sum(m * t for _, m, t in rows)
    det = saa * sbb - sab * sab
    a, b = (sat * sbb - sbt * sab) / det, (saa * sbt - sab * sat) / det
    if a < 0:  # no negative fixed cost: the fit through the origin
        a, b = 0.0, sbt / sbb
    bins = {}
    for m, cls, fb in costs:
        bins.setdefault(cls, {}).setdefault(fb, []).append(a + b * m)

    def cost(key):
        t = key.split('-')
        g = sample_problems.parse(key)
        dt = t[-2]
        cls = (t[-1][0], 'FP16' if dt == 'BF16' else dt, g[0])
        fb = int(math.log2(max(sample_problems.flops(g), 1)))
        near = min(bins[cls], key=lambda x: (abs(x - fb), x))
        v = bins[cls][near]
        return sum(v) / len(v)

    return cost, a, b, sum(t for _, _, t in rows) / sum(n for n, _, _ in rows)


def estimate(fdb, sample, run_logs):
    """Modelled collection seconds of the sample's keys (every data type and direction) on one GPU
    (cost_model)."""
    cost, a, b, mean = cost_model(fdb, run_logs)
    total = sum(cost(sample_problems.key(g, dt, d)) for g in sample for dt in DTYPES for d in DIRECTIONS)
    return total, a, b, mean


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pool', nargs='+', default=sorted(glob.glob('datasets/h100/problems/*.txt')),
                    help='the training pool\'s key files (default datasets/h100/problems/*.txt)')
    ap.add_argument('--geometries', type=int, default=1000, help='geometries sampled (nine keys each)')
    ap.add_argument('--chunk', type=int, default=100, help='geometries per chunk file')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--max-tensor-mib', type=float, default=512)
    ap.add_argument('--max-log2-flops', type=float, default=35)
    ap.add_argument('--out', help='folder for chunk_NNN.txt and networks.tsv (omitted: counts only)')
    ap.add_argument('--estimate', action='store_true', help='model the collection time (needs the pool find-db)')
    ap.add_argument('--fdb', default='datasets/h100/h100_cudnn_conv.fdb.txt.bz2')
    ap.add_argument('--run-logs', nargs='+', default=sorted(glob.glob('datasets/h100/logs/run*.log')))
    a = ap.parse_args()
    if not a.pool:
        ap.error('no pool key files: pass --pool')
    sample, first, also, counts, n_pool_geo, by_net = select(a)

    if a.out:
        os.makedirs(a.out, exist_ok=True)
        rows = []
        for c in range((len(sample) + a.chunk - 1) // a.chunk):
            path = os.path.join(a.out, 'chunk_%03d.txt' % c)
            with open(path + '.tmp', 'w') as f:
                for g in sample[c * a.chunk:(c + 1) * a.chunk]:
                    net, family, layer, batch, res = first[g]
                    for dt in DTYPES:
                        for d in 'FWB':
                            k = sample_problems.key(g, dt, d)
                            f.write(k + '\n')
                            rows.append((k, net, layer, batch, res, family, '%dd' % g[0], group_class(g),
                                         ','.join(also[g]) or '-'))
            os.replace(path + '.tmp', path)
        path = os.path.join(a.out, 'networks.tsv')
        with open(path + '.tmp', 'w') as f:
            f.write('key\tnetwork\tlayer\tbatch\tresolution\tfamily\tdims\tgroups\talso\n')
            for r in rows:
                f.write('\t'.join(map(str, r)) + '\n')
        os.replace(path + '.tmp', path)

    print('%d distinct geometries out of the pool in %d networks; sampled %d (%d keys), seed %d'
          % (len(first), len(by_net), len(sample), len(sample) * len(DTYPES) * len(DIRECTIONS), a.seed))
    for why, n in counts.items():
        print('  %s: %d' % (why, n))
    print('  distinct geometries dropped as in the training pool: %d' % n_pool_geo)
    per = {}
    for g in sample:
        net, family, *_ = first[g]
        s = per.setdefault(net, [0, 0, 0, 0])
        s[0] += 1
        s[{'dense': 1, 'grouped': 2, 'depthwise': 3}[group_class(g)]] += 1
    print('network\tavailable\tsampled\tdense\tgrouped\tdepthwise')
    for name, *_ in NETWORKS:
        if name in per:
            print('%s\t%d\t%d\t%d\t%d\t%d' % (name, len(by_net[name]), *per[name]))
    print('3-D geometries sampled: %d of %d' % (sum(1 for g in sample if g[0] == 3), len(sample)))
    if a.estimate:
        total, ca, cb, mean = estimate(a.fdb, sample, a.run_logs)
        print('modelled collection time on one GPU: %.0f s (%.1f ms a problem; pool fit: %.1f ms + %.2f x the '
              'timing method\'s GPU time, pool mean %.1f ms)' % (total, 1e3 * total / (9 * len(sample)), 1e3 * ca, cb,
                                                                 1e3 * mean))


if __name__ == '__main__':
    sys.exit(main())
