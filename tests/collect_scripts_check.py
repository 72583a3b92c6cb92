#!/usr/bin/env python3
"""Self-checks of collect/scripts' problem and shape generators (Python 3 standard library only; run from the
repository root, as ctest does): layer counts of traced networks against their published architectures, the
committed sets equal to what their commands regenerate (seeded, reproducible), no network geometry in the
training pool, triton_matmul.py's configuration space, shape selection and resume/merge of part files,
table_groups.py's join of a shape list's tags into a table, fit_cost.py's key features, least squares and rank
correlation, gpu_noise.py's split of the noise by GPU, gemm_noise.py's single-pick ceiling, gemm_merge_passes.py's
median of passes, gemm_retimed_table.py's join of verify's re-timings, gemm_offline.py's calibration rule,
shortlist_cost.py's shares of cudnnFind's time, whole and per slice, and experiments/gemm_tune_labels.py's rows kept
for the tuner's labels."""
import contextlib
import io
import math
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'collect', 'scripts'))
os.chdir(ROOT)

import conv_networks as cn  # noqa: E402
import fit_cost as fc  # noqa: E402
import gpu_noise as gn  # noqa: E402
import active_keys as ak  # noqa: E402
import concat_tables as ct  # noqa: E402
import gemm_merge_passes as gmp  # noqa: E402
import gemm_retimed_table as grt  # noqa: E402
import gemm_offline as gof  # noqa: E402
import gemm_noise as gno  # noqa: E402
import gemm_real_shapes as grs  # noqa: E402
import gemm_table_io as gti  # noqa: E402
import networks_subset as ns  # noqa: E402
import sample_problems as sp  # noqa: E402
import shortlist_cost as sc  # noqa: E402
import split_table as st  # noqa: E402
import table_groups as tg  # noqa: E402
import triton_matmul as tm  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, 'experiments'))
import gemm_tune_labels as gtl  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(module, argv):
    saved = sys.argv, sys.stdout, sys.stderr
    sys.argv = [module.__file__] + argv
    sys.stdout = sys.stderr = open(os.devnull, 'w')
    try:
        return module.main()
    finally:
        sys.stdout.close()
        sys.argv, sys.stdout, sys.stderr = saved


def networks():
    # convolution counts of torchvision's models (aux classifiers aside) and the last feature map
    for name, net, count, last in (('resnet18', cn.resnet(224, (2, 2, 2, 2), False), 20, (7, 7)),
                                   ('resnet50', cn.resnet(224, (3, 4, 6, 3), True), 53, (7, 7)),
                                   ('mobilenet_v2', cn.mobilenet_v2(224), 52, (7, 7)),
                                   ('densenet121', cn.densenet121(224), 120, (7, 7)),
                                   ('inception_v3', cn.inception_v3(299), 94, (8, 8)),
                                   ('efficientnet_b0', cn.efficientnet(224, 1.0, 1.0), 81, (7, 7)),
                                   ('convnext_tiny', cn.convnext_tiny(224), 22, (7, 7))):
        check(len(net.layers) == count, '%s: %d convolutions, expected %d' % (name, len(net.layers), count))
        check(net.layers[-1][5] == last, '%s: last map %s, expected %s' % (name, net.layers[-1][5], last))
    # every traced layer's key parses back (sample_problems.parse checks the output size) to its geometry
    for name, _, build, resolutions, _ in cn.NETWORKS:
        net = build(resolutions[0])
        for layer in net.layers:
            g = cn.geometry(layer, net.nd, 2)
            for d in 'FBW':
                k = sp.key(g, 'FP32', d)
                check(sp.parse(k) == g, '%s %s: key %s does not parse back' % (name, layer[0], k))
    # the committed set is what the command writes; none of its geometries is in the pool
    with tempfile.TemporaryDirectory() as tmp:
        run(cn, ['--out', tmp])
        for f in sorted(os.listdir(tmp)):
            with open(os.path.join(tmp, f)) as a, open(os.path.join('datasets/h100/networks', f)) as b:
                check(a.read() == b.read(), 'datasets/h100/networks/%s differs from conv_networks.py\'s output' % f)
    pool = cn.pool_geometries(sorted(os.path.join('datasets/h100/problems', f)
                                     for f in os.listdir('datasets/h100/problems')))
    n = 0
    for f in sorted(os.listdir('datasets/h100/networks')):
        if f.startswith('chunk_'):
            with open(os.path.join('datasets/h100/networks', f)) as fh:
                for line in fh:
                    g = sp.parse(line.strip())
                    n += 1
                    check(g is not None and g not in pool, 'network key %s is in the pool or unparsable' % line.strip())
    check(n == 9000, 'network set: %d keys, expected 9000' % n)


def networks_subset():
    # a verify list of the networks set: FP32 keys under each precision class, any prefix spread over the cells
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'list.txt')
        run(ns, ['--networks', 'datasets/h100/networks/networks.tsv', '--count', '600', '--seed', '0', '--out', out])
        with open(out) as f:
            rows = [l.split() for l in f.read().splitlines()]
        check(len(rows) == 600, 'networks_subset: %d rows, expected 600' % len(rows))
        cells = {(r[1], r[0].split('-')[-1][0], r[2] if r[0].split('-')[-2] == 'FP32' else r[0].split('-')[-2])
                 for r in rows[:300]}
        check(len(cells) == 300, 'networks_subset: the first 300 rows cover %d of 300 cells' % len(cells))
        check(all(r[2] == 'tf32' for r in rows if r[0].split('-')[-2] != 'FP32'), 'networks_subset: FP16/BF16 class')
        check(len({tuple(r) for r in rows}) == len(rows), 'networks_subset: a row twice')
        run(ns, ['--networks', 'datasets/h100/networks/networks.tsv', '--count', '600', '--seed', '0', '--out', out])
        with open(out) as f:
            check([l.split() for l in f.read().splitlines()] == rows, 'networks_subset: not reproducible')
        # a plain key list under one source: cells direction x class, an FP32 key once per class
        keys = os.path.join(tmp, 'keys.txt')
        with open(keys, 'w') as f:
            f.write('64-28-28-3x3-64-28-28-8-1x1-1x1-1x1-0-NCHW-FP32-F\n'
                    '64-28-28-3x3-64-28-28-8-1x1-1x1-1x1-0-NCHW-FP16-W\n\n'
                    '32-14-14-1x1-16-14-14-4-0x0-1x1-1x1-0-NCHW-FP32-B extra fields\n')
        run(ns, ['--keys', keys, '--source', 'pool', '--count', '10', '--seed', '0', '--out', out])
        with open(out) as f:
            rows = sorted(l.split() for l in f.read().splitlines())
        check(len(rows) == 7, 'networks_subset --keys: %d rows, expected 7' % len(rows))
        check(all(r[1] == 'pool' for r in rows), 'networks_subset --keys: the source')
        check(sorted(r[2] for r in rows if r[0].endswith('FP32-F')) == ['conversion', 'strict', 'tf32'],
              'networks_subset --keys: an FP32 key under each class')
        check([r[2] for r in rows if r[0].endswith('FP16-W')] == ['tf32'], 'networks_subset --keys: FP16 class')
        with open(keys, 'a') as f:
            f.write('64-28-28-NCHW-FP32-X\n')
        try:
            run(ns, ['--keys', keys, '--count', '10', '--out', out])
            check(False, 'networks_subset --keys: a bad key read')
        except SystemExit as e:
            check('keys.txt:5' in str(e), 'networks_subset --keys: %s' % e)


def active_keys():
    # the active rule: wrong problems of a verify report (worst first, with their batch-size neighbours), then
    # unsure ones of a predict TSV (smallest margin between algorithms first), a held-out key never written
    with tempfile.TemporaryDirectory() as tmp:
        rep, pred, held, out = (os.path.join(tmp, f) for f in ('r.tsv', 'p.tsv', 'held.txt', 'next.txt'))
        k2 = '8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-W'
        k3 = '4-2-8-8-3x3x3-4-2-8-8-1-1x1x1-1x1x1-1x1x1-0-NCDHW-FP16-B'
        with open(rep, 'w') as f:
            f.write('key\tmodel\tspeedup\tmodel_name\n%s\tA\t0.5\tm\n%s\tA\t0.99\tm\n%s\tA\t0.2\tother\n'
                    '%s\tA\t0.9\tm\n# summary\n' % (k2, k2.replace('-W', '-F'), k2.replace('-W', '-B'), k3))
        with open(pred, 'w') as f:
            f.write('problem\trank\tscore\tkernel\n'
                    'u1_strict\t1\t0.50\tA.fma\nu1_strict\t2\t0.45\tA.default\nu1_strict\t3\t0.48\tB.fma\n'
                    'u2\t1\t0.9\tA.fma\nu2\t2\t0.1\tB.fma\n'
                    'u3\t1\t0.5\tA.fma\nu3\t2\t0.49\tB.fma\n')
        with open(held, 'w') as f:
            f.write('key\tnetwork\n%s\tnet\n' % k2.replace('-2-1x1', '-4-1x1'))
        run(ak, ['--report', rep, '--model-name', 'm', '--batches', '4,16', '--predict', pred, '--margin', '0.05',
                 '--exclude', held, '--count', '100', '--out', out])
        with open(out) as f:
            got = f.read().split()
        want = [k2, k2.replace('-2-1x1', '-16-1x1'), k3, k3.replace('-1-1x1x1', '-4-1x1x1'),
                k3.replace('-1-1x1x1', '-16-1x1x1'), 'u3', 'u1']
        check(got == want, 'active_keys: %s, expected %s' % (got, want))
        # --slices keeps unsure problems of the failing slices only (3-D, depthwise here, a dense 2-D F key out),
        # smallest margin first, written in chunks of --chunk keys
        dense = '64-28-28-3x3-64-28-28-8-1x1-1x1-1x1-0-NCHW-FP16-F'
        dw = '32-14-14-3x3-32-14-14-8-1x1-1x1-1x1-0-NCHW-BF16-W_g32'
        k3s = k3.replace('FP16', 'FP32')
        with open(pred, 'w') as f:
            f.write('problem\trank\tscore\tkernel\n%s\t1\t1\tA.x\n%s\t2\t0.99\tB.x\n%s\t1\t1\tA.x\n%s\t2\t0.9\tB.x\n'
                    '%s_strict\t1\t1\tA.x\n%s_strict\t2\t0.95\tB.x\n' % (dense, dense, dw, dw, k3s, k3s))
        chunks = os.path.join(tmp, 'active')
        run(ak, ['--predict', pred, '--margin', '0.5', '--slices', '3d,depthwise', '--count', '10', '--chunk', '1',
                 '--out', chunks])
        got = [open(os.path.join(chunks, 'chunk_%03d.txt' % c)).read() for c in range(2)]
        check(got == [k3s + '\n', dw + '\n'] and not os.path.exists(os.path.join(chunks, 'chunk_002.txt')),
              'active_keys --slices --chunk: %s' % got)
        check(ak.slices_of(dw, 16) == {'W', 'depthwise', 'small'} and ak.slices_of(dense, 16) == {'F'},
              'active_keys: slices %s %s' % (ak.slices_of(dw, 16), ak.slices_of(dense, 16)))
    # the committed active set: none of its geometries in the pool or the networks set
    held = cn.pool_geometries(sorted(os.path.join(d, f) for d in ('datasets/h100/problems', 'datasets/h100/networks')
                                     for f in os.listdir(d) if f.startswith('chunk_')))
    active = cn.pool_geometries(sorted(os.path.join('datasets/h100/active', f)
                                       for f in os.listdir('datasets/h100/active') if f.startswith('chunk_')))
    check(active and not active & held, 'datasets/h100/active: %d geometries in the pool or the networks set'
          % len(active & held))


def gemm_shapes():
    out = []
    grs.linear(out, 7, 300, 100, ('bf16',), ('fwd', 'dgrad', 'wgrad'), 'f m.l.train')
    check([r[:5] for r in out] == [(7, 300, 100, 'bf16', 'N T'), (7, 100, 300, 'bf16', 'N N'),
                                   (300, 100, 7, 'bf16', 'T N')], 'linear(): fwd / dgrad / wgrad sizes %s' % out)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'shapes.txt')
        run(grs, ['--out', path])
        with open(path) as a, open('datasets/h100/gemm_real_shapes.txt') as b:
            check(a.read() == b.read(), 'datasets/h100/gemm_real_shapes.txt differs from gemm_real_shapes.py\'s output')
    # --set batched: attention's Q K^T and P V per head, batch sequences x heads; MoE experts as one batch
    out = []
    grs.attention_shapes(out)
    check((512, 512, 128, 'bf16', 'N T', 'llama3 llama3_8b.attn_qk.prefill.fwd', 128) in out and
          (512, 128, 512, 'bf16', 'N N', 'llama3 llama3_8b.attn_pv.prefill.fwd', 128) in out,
          'attention_shapes: llama3_8b at 512 tokens, 4 sequences')
    out = []
    grs.moe_batched_shapes(out)
    check((640, 28672, 4096, 'bf16', 'N T', 'mixtral mixtral_8x7b.experts_batched.w13.prefill.fwd', 8) in out,
          'moe_batched_shapes: mixtral w13 at 2048 tokens (capacity 640)')
    # --set fp8: the LLM projections, weight first and transposed (TN), every size a multiple of 16
    out = []
    grs.fp8_shapes(out)
    check(out and all(r[3] == 'fp8e4m3' and r[4] == 'T N' and r[0] % 16 == 0 and r[1] % 16 == 0 and r[2] % 16 == 0
                      for r in out), 'fp8_shapes: TN fp8e4m3 with sizes multiples of 16')
    check((6144, 512, 4096, 'fp8e4m3', 'T N', 'llama3 llama3_8b.qkv.prefill.fwd', 1) in out, 'fp8_shapes: llama3_8b qkv')
    seen = set()
    with open('datasets/h100/gemm_real_shapes.txt') as f:
        for line in f:
            if line.startswith('#'):
                continue
            body, _, comment = line.partition('#')
            key = tuple(body.split())
            check(key not in seen, 'shape %s twice' % (key,))
            seen.add(key)
            check(comment.split()[0] in {'llama3', 'mistral', 'qwen2.5', 'phi3', 'gemma2', 'gpt2', 'bert', 'vit', 'swin',
                                         'resnet50', 'unet2d', 'mixtral', 'deepseek_moe'}, 'family of %s' % line)


def triton():
    configs = tm.config_space(150, 0, 227)
    check(len(configs) == 150 and len(set(configs)) == 150, 'triton: %d configurations' % len(configs))
    check(all(tm.smem_bytes(c) <= 227 * 1024 for c in configs), 'triton: a configuration over shared memory')
    check((128, 128, 64, 8, 8, 5) in configs, 'triton: inductor\'s configurations are in the space')
    check(configs == tm.config_space(150, 0, 227), 'triton: the space depends on the seed only')
    shapes = tm.read_shapes('datasets/h100/gemm_real_shapes.txt', 400, 400.0)
    check(len(shapes) == 400 and all(s[3] in ('fp16', 'bf16') and s[4] in tm.FAMILIES for s in shapes),
          'triton: shape selection')
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'shapes.txt')
        with open(path, 'w') as f:  # the batched line first: a single GEMM of the same sizes is kept, not it
            f.write('64 64 128 fp16 T N 32  # llama3 llama3.attn_qk.prefill.fwd\n'
                    '64 64 128 fp16 T N  # vit vit.qkv.infer.fwd\n'
                    '32 64 128 bf16 N N 1  # llama3 llama3.o.decode.fwd\n')
        shapes = tm.read_shapes(path, 10, 1e9)
        check(shapes == [(64, 64, 128, 'fp16', 'vit'), (32, 64, 128, 'bf16', 'llama3')],
              'triton: a batched shape read as one matmul: %s' % shapes)
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, 'o.d')
        os.makedirs(d)
        sh = [(16, 32, 64, 'fp16', 'llama3'), (8, 16, 32, 'bf16', 'vit'), (4, 4, 4, 'fp16', 'swin')]
        with open(os.path.join(d, 'part_0.csv'), 'w') as f:  # a shape without .done and a line cut short
            f.write('8,16,32,bf16,vit,32,32,16,8,2,2,1.5,batches\n4,4,4,fp16,swin,32,32,16,8,2,2,9,batches\n4,4,4,fp')
        with open(os.path.join(d, 'part_0.done'), 'w') as f:
            f.write('8,16,32,bf16\n')
        with open(os.path.join(d, 'part_1.csv'), 'w') as f:
            f.write('16,32,64,fp16,llama3,64,64,16,8,2,2,3.5,warmup\n')
        with open(os.path.join(d, 'part_1.done'), 'w') as f:
            f.write('16,32,64,fp16\n')
        with open(os.path.join(d, 'part_1.skipped.csv'), 'w') as f:
            f.write('16,32,64,fp16,256,256,256,8,8,6,OutOfResources: shared memory\n')
        tm.keep_done(d)
        with open(os.path.join(d, 'part_0.csv')) as f:
            check(f.read() == '8,16,32,bf16,vit,32,32,16,8,2,2,1.5,batches\n', 'triton: keep_done')
        done = tm.read_done(d)
        check(tm.merge(os.path.join(tmp, 'o'), d, sh, done, 132) == (2, 1), 'triton: merge counts')
        with open(os.path.join(tmp, 'o.csv')) as f:
            lines = f.read().splitlines()
        check(lines[0] == ','.join(tm.HEADER) and lines[1].startswith('16,32,64,fp16') and
              lines[2].startswith('8,16,32,bf16') and len(lines) == 3, 'triton: merged table in shape order')


def table_groups():
    import gzip
    import json
    with tempfile.TemporaryDirectory() as tmp:
        shapes = os.path.join(tmp, 'shapes.txt')
        with open(shapes, 'w') as f:
            f.write('# M N K DTYPE TRANS_A TRANS_B  # FAMILY MODEL\n'
                    '64 128 256 bf16 N T  # llama3 llama3_8b.qkv\n'
                    '7 9 11 fp32 T N  # resnet50 resnet50.conv1\n'
                    '64 128 256 bf16 N T  # mistral mistral.qkv\n')
        table = os.path.join(tmp, 't.csv.gz')
        rows = ('M,N,K,dtype,trans_a,trans_b,algo_id,time_us,heuristic_rank,workspace\n'
                '64,128,256,bf16,N,T,66,12.5,0,0\n64,128,256,bf16,N,T,21,13,,0\n7,9,11,fp32,T,N,6,3,0,0\n')
        with gzip.open(table, 'wt') as f:
            f.write(rows)
        with open(os.path.join(tmp, 't.schema.json'), 'w') as f:
            json.dump({'problem': ['M', 'N', 'K', 'dtype', 'trans_a', 'trans_b'], 'kernel': ['algo_id'],
                       'measure': 'time_us'}, f)
        out = os.path.join(tmp, 'g.csv.gz')
        run(tg, ['--table', table, '--shapes', shapes, '--out', out])
        with gzip.open(out, 'rt') as f:
            got = f.read().splitlines()
        check(got[0].endswith(',workspace,family'), 'table_groups: header %s' % got[0])
        check([l.rsplit(',', 1)[1] for l in got[1:]] == ['llama3', 'llama3', 'resnet50'],
              'table_groups: tags %s (a key listed twice keeps its first)' % got[1:])
        with open(os.path.join(tmp, 'g.schema.json')) as f:
            check(json.load(f).get('group') == 'family', 'table_groups: the schema beside the output has no group role')
        # run again on its own output: the column is replaced, the bytes are the same (no gzip timestamp)
        with open(out, 'rb') as f:
            first = f.read()
        run(tg, ['--table', out, '--shapes', shapes])
        with open(out, 'rb') as f:
            check(f.read() == first, 'table_groups: rewriting a joined table changed it')
        # a problem the list lacks is an error, unless --missing tags it
        with open(shapes, 'w') as f:
            f.write('64 128 256 bf16 N T  # llama3\n')
        try:
            run(tg, ['--table', table, '--shapes', shapes, '--out', out])
            check(False, 'table_groups: a problem without a tag was accepted')
        except SystemExit as e:
            check('7 9 11 fp32 T N' in str(e.code), 'table_groups: the error names no problem: %s' % e.code)
        run(tg, ['--table', table, '--shapes', shapes, '--out', out, '--missing', 'other'])
        with gzip.open(out, 'rt') as f:
            check(f.read().splitlines()[3].endswith(',other'), 'table_groups: --missing not applied')
        # --single: a table with the collector's batch column gets the pool's header, its schema loses batch
        btable, bout = os.path.join(tmp, 'b.csv.gz'), os.path.join(tmp, 'bg.csv.gz')
        with gzip.open(btable, 'wt') as f:
            f.write('M,N,K,dtype,trans_a,trans_b,batch,algo_id,time_us\n64,128,256,bf16,N,T,1,66,12.5\n')
        with open(os.path.join(tmp, 'b.schema.json'), 'w') as f:
            json.dump({'problem': ['M', 'N', 'K', 'dtype', 'trans_a', 'trans_b', 'batch'], 'kernel': ['algo_id'],
                       'measure': 'time_us'}, f)
        run(tg, ['--table', btable, '--shapes', shapes, '--out', bout, '--single'])
        with gzip.open(bout, 'rt') as f:
            got = f.read().splitlines()
        check(got == ['M,N,K,dtype,trans_a,trans_b,algo_id,time_us,family', '64,128,256,bf16,N,T,66,12.5,llama3'],
              'table_groups --single: %s' % got)
        with open(os.path.join(tmp, 'bg.schema.json')) as f:
            check('batch' not in json.load(f)['problem'], 'table_groups --single: batch left in the schema')
        with gzip.open(btable, 'wt') as f:
            f.write('M,N,K,dtype,trans_a,trans_b,batch,algo_id,time_us\n64,128,256,bf16,N,T,4,66,12.5\n')
        try:
            run(tg, ['--table', btable, '--shapes', shapes, '--out', bout, '--single', '--missing', 'x'])
            check(False, 'table_groups --single: a batch of 4 was accepted')
        except SystemExit as e:
            check(':2: batch 4' in str(e.code), 'table_groups --single: the error names no line: %s' % e.code)
        # split_table.py --hold: every shape of the named groups held out, the rest trained on
        prefix = os.path.join(tmp, 's')
        run(st, ['--table', out, '--hold', 'family=other', '--out-prefix', prefix])
        for part, want in (('test', ['7,9,11']), ('train', ['64,128,256', '64,128,256'])):
            with gzip.open('%s.%s.csv.gz' % (prefix, part), 'rt') as f:
                got = [','.join(l.split(',')[:3]) for l in f.read().splitlines()[1:]]
            check(got == want, 'split_table --hold: %s rows %s, expected %s' % (part, got, want))
        try:
            run(st, ['--table', out, '--hold', 'family=nosuch', '--out-prefix', prefix])
            check(False, 'split_table --hold: a value the column never holds was accepted')
        except SystemExit as e:
            check('nosuch' in str(e.code), 'split_table --hold: %s' % e.code)


def batched_tables():
    """A table with the batch column: shapes that differ only in their batch are separate problems to
    table_groups.py, split_table.py and concat_tables.py, a single GEMM's key is its six columns."""
    import gzip
    import json
    hdr = 'M,N,K,dtype,trans_a,trans_b,batch,algo_id,time_us,heuristic_rank,workspace\n'
    check(gti.shape_key('64,64,128,bf16,T,N,32,66,1,0,0', hdr) == '64,64,128,bf16,T,N,32' and
          gti.shape_key('64,64,128,bf16,T,N,1,66,1,0,0', hdr) == '64,64,128,bf16,T,N' and
          gti.shape_key('64,64,128,bf16,T,N,66,1,0,0', hdr.replace('batch,', '')) == '64,64,128,bf16,T,N',
          'gemm_table_io.shape_key: batched keys')
    with tempfile.TemporaryDirectory() as tmp:
        shapes = os.path.join(tmp, 'shapes.txt')
        with open(shapes, 'w') as f:
            f.write('# M N K DTYPE TRANS_A TRANS_B  # FAMILY MODEL\n'
                    '64 64 128 bf16 T N  # vit vit.qkv\n'
                    '64 64 128 bf16 T N 32  # llama3 llama3.attn_qk.prefill.fwd\n')
        table = os.path.join(tmp, 't.csv.gz')
        with gzip.open(table, 'wt') as f:
            f.write(hdr + '64,64,128,bf16,T,N,1,66,2,0,0\n64,64,128,bf16,T,N,32,66,9,0,0\n'
                    '64,64,128,bf16,T,N,32,21,8,,0\n')
        with open(os.path.join(tmp, 't.schema.json'), 'w') as f:
            json.dump({'problem': ['M', 'N', 'K', 'dtype', 'trans_a', 'trans_b', 'batch'], 'kernel': ['algo_id'],
                       'measure': 'time_us'}, f)
        out = os.path.join(tmp, 'g.csv.gz')
        run(tg, ['--table', table, '--shapes', shapes, '--out', out])
        with gzip.open(out, 'rt') as f:
            got = [l.rsplit(',', 1)[1] for l in f.read().splitlines()[1:]]
        check(got == ['vit', 'llama3', 'llama3'], 'table_groups: batched tags %s' % got)
        prefix = os.path.join(tmp, 's')
        run(st, ['--table', out, '--hold', 'family=llama3', '--out-prefix', prefix])
        with gzip.open(prefix + '.test.csv.gz', 'rt') as f:
            got = [l.split(',')[6] for l in f.read().splitlines()[1:]]
        check(got == ['32', '32'], 'split_table --hold: batched rows held out %s' % got)
        classes = gti.shape_classes(shapes)
        check(classes == {('64', '64', '128', 'bf16', 'T', 'N', '1'): 'other',
                          ('64', '64', '128', 'bf16', 'T', 'N', '32'): 'attention'}, 'shape_classes: %s' % classes)
        # a table whose header differs stops concat_tables.py, which leaves no output and no temporary file
        other = os.path.join(tmp, 'o.csv.gz')
        with gzip.open(other, 'wt') as f:
            f.write(hdr.replace('batch,', '') + '64,64,128,bf16,T,N,66,2,0,0\n')
        both = os.path.join(tmp, 'both.csv.gz')
        try:
            run(ct, ['--out', both, table, other])
            check(False, 'concat_tables: a table with another header accepted')
        except SystemExit as e:
            check('header differs' in str(e.code), 'concat_tables: %s' % e.code)
        check(not os.path.exists(both) and not os.path.exists(both + '.tmp'),
              'concat_tables: an output or its temporary file left after an error')
        with open(shapes, 'w') as f:
            f.write('64 64 128 bf16 T N 0  # vit\n')
        try:
            run(tg, ['--table', table, '--shapes', shapes, '--out', out])
            check(False, 'table_groups: BATCH 0 accepted')
        except SystemExit as e:
            check(':1: BATCH 0' in str(e.code), 'table_groups: %s' % e.code)


def cost_models():
    # a key's FLOPs and bytes as collect_conv_flops counts them: 2 n k out (c / g) fil; x, y, w elements
    feats, flops, nbytes, nd, dtype = fc.conv_parse('16-14-14-3x3-32-14-14-2-1x1-1x1-1x1-0-NCHW-FP16-F')
    check(flops == 2.0 * 2 * 32 * 196 * 16 * 9 and nbytes == 2 * (2 * 16 * 196 + 2 * 32 * 196 + 32 * 16 * 9),
          'fit_cost: forward flops %g bytes %g' % (flops, nbytes))
    # backward keys hold dy first (MIOpen's convention): W of the strided problem has x 56 x 56, y 28 x 28
    feats, flops, nbytes, nd, dtype = fc.conv_parse('24-28-28-3x3-24-56-56-22-1x1-2x2-1x1-0-NCHW-FP32-W_g24')
    check(flops == 2.0 * 22 * 24 * 784 * 1 * 9 and feats['grouped'] == 1 and feats['dir_W'] == 1 and feats['half'] == 0,
          'fit_cost: grouped backward key: flops %g %s' % (flops, feats))
    check(fc.conv_parse('24-28-28-3x3-24-56-56-22') is None, 'fit_cost: a short key parsed')
    # least squares recovers an exact linear relation; Spearman is 1 for any increasing map, ties averaged
    xs = [[1.0, float(i), float(i * i % 7)] for i in range(20)]
    coef = fc.lstsq(xs, [0.5 + 2.0 * r[1] - 0.25 * r[2] for r in xs])
    check(all(abs(a - b) < 1e-4 for a, b in zip(coef, [0.5, 2.0, -0.25])), 'fit_cost: lstsq %s' % coef)
    check(abs(fc.spearman([1, 2, 3, 4], [1, 8, 27, 64]) - 1) < 1e-12 and fc.ranks([3, 1, 3]) == [1.5, 0.0, 1.5],
          'fit_cost: ranks or spearman')
    # a GEMM key's features as collect_gemm_shape_cost_s computes them: FP8 A and B a byte an element, its bf16 D
    # two, all times the batch; the hand-set model before the fit knows the data type too
    feats, _ = fc.gemm_feats('64,32,16,fp8e4m3,T,N,4')
    check(abs(feats['log_bytes'] - math.log(4 * (64 * 16 + 16 * 32 + 2 * 64 * 32))) < 1e-12 and
          abs(feats['log_flops'] - math.log(2.0 * 64 * 32 * 16 * 4)) < 1e-12 and feats['trans_a'] == 1.0,
          'fit_cost: an FP8 batched key %s' % feats)
    check(fc.gemm_cost_before(*fc.gemm_feats('64,32,16,fp8e4m3,T,N')[1]) > 0, 'fit_cost: the FP8 model before the fit')
    # gpu_noise: the percentile of heurist-collect's stats.c (linear between order statistics)
    check(gn.percentile([1.0, 2.0, 3.0, 4.0], 90) == 3.7 and gn.percentile([5.0], 10) == 5.0, 'gpu_noise: percentile')


def gemm_noise():
    # two runs of two shapes: run 1 finds cuBLASLt's second candidate fastest on shape p and its third on shape q;
    # run 2 times p's second at 0.8 of its first pick (x1.25) and q's third at 1.25 (x0.8): first 2 keeps q's first
    # pick (sqrt(1.25), worst 1), first 3 takes q's third (1, worst 0.8); a configuration outside the list counts
    # only for the table's
    cfg = lambda i: (str(i),) + ('0',) * (len(gno.CONFIG) - 1)
    p, q = ('64', '64', '64', 'bf16', 'N', 'N'), ('128', '64', '64', 'bf16', 'N', 'N')
    a = {p: {cfg(0): (10.0, 0), cfg(1): (8.0, 1), cfg(2): (9.0, 2), cfg(3): (7.0, None)},
         q: {cfg(0): (10.0, 0), cfg(1): (11.0, 1), cfg(2): (9.0, 2)}}
    b = {p: {cfg(0): (10.0, 0), cfg(1): (8.0, 1), cfg(2): (9.0, 2), cfg(3): (12.0, None)},
         q: {cfg(0): (10.0, 0), cfg(1): (11.0, 1), cfg(2): (12.5, 2)}}
    g2, w2, n2 = gno.single_pick_ceiling(a, b, 2)
    g3, w3, n3 = gno.single_pick_ceiling(a, b, 3)
    gt, wt, nt = gno.single_pick_ceiling(a, b, None)
    check(n2 == n3 == nt == 2 and abs(g2 - 1.25 ** 0.5) < 1e-12 and abs(w2 - 1.0) < 1e-12,
          'gemm_noise: first 2 %g worst %g over %d' % (g2, w2, n2))
    check(abs(g3 - 1.0) < 1e-12 and abs(w3 - 0.8) < 1e-12, 'gemm_noise: first 3 %g worst %g' % (g3, w3))
    check(abs(gt - (10 / 12.0 * 0.8) ** 0.5) < 1e-12 and abs(wt - 0.8) < 1e-12,
          'gemm_noise: the table %g worst %g' % (gt, wt))


def gemm_merge_passes():
    """Three passes of two shapes (the later ones without the family column, one in another row order): each
    time the median of its passes, the first table's other columns; two passes take the mean of the two; a row
    that one pass lacks or holds twice names the file and line and leaves no output."""
    import gzip
    hdr = 'M,N,K,dtype,trans_a,trans_b,algo_id,time_us,heuristic_rank,workspace'
    first = [hdr + ',family', '64,64,64,bf16,N,T,66,10,0,0,vit', '64,64,64,bf16,N,T,21,11,1,0,vit',
             '8,8,8,fp32,N,N,6,3,0,0,bert']
    second = [hdr, '8,8,8,fp32,N,N,6,5,0,0', '64,64,64,bf16,N,T,21,9,1,0', '64,64,64,bf16,N,T,66,12,0,0']
    third = [hdr, '64,64,64,bf16,N,T,66,10.5,0,0', '64,64,64,bf16,N,T,21,9.5,1,0', '8,8,8,fp32,N,N,6,4,0,0']
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, rows in (('a', first), ('b', second), ('c', third)):
            paths.append(os.path.join(tmp, name + '.csv.gz'))
            with gzip.open(paths[-1], 'wt') as f:
                f.write('\n'.join(rows) + '\n')
        out = os.path.join(tmp, 'm.csv.gz')
        run(gmp, ['--out', out] + paths)
        with gzip.open(out, 'rt') as f:
            got = f.read().splitlines()
        check(got == [first[0], '64,64,64,bf16,N,T,66,10.5,0,0,vit', '64,64,64,bf16,N,T,21,9.5,1,0,vit',
                      '8,8,8,fp32,N,N,6,4,0,0,bert'], 'gemm_merge_passes: %s' % got[1:])
        check(gmp.merge(paths, out) == (3, 2, 1), 'gemm_merge_passes: the moved fastest configurations')
        run(gmp, ['--out', out] + paths[:2])
        with gzip.open(out, 'rt') as f:
            got = [l.split(',')[7] for l in f.read().splitlines()[1:]]
        check(got == ['11', '10', '4'], 'gemm_merge_passes: two passes %s' % got)
        os.remove(out)
        for rows, want in ((third[:3], ('a.csv.gz:4: the row 8,8,8,fp32,N,N,6 is not in', 'c.csv.gz')),
                           (third + [third[1]], ('c.csv.gz:5: the row 64,64,64,bf16,N,T,66 again (first on line 2)',)),
                           (third + ['9,8,8,fp32,N,N,6,4,0,0'], ('c.csv.gz:5: the row 9,8,8,fp32,N,N,6 is not in',)),
                           ([third[0], third[1].replace('10.5', 'x')] + third[2:], ("c.csv.gz:2: time_us 'x'",))):
            with gzip.open(paths[2], 'wt') as f:
                f.write('\n'.join(rows) + '\n')
            try:
                run(gmp, ['--out', out] + paths)
                check(False, 'gemm_merge_passes: accepted %s' % rows)
            except SystemExit as e:
                check(all(w in str(e.code) for w in want), 'gemm_merge_passes: %s' % e.code)
            check(not os.path.exists(out) and not os.path.exists(out + '.tmp'),
                  'gemm_merge_passes: an output left after an error')


def gemm_retimed_table():
    """verify's re-timings joined to a table: re-timed rows with the re-timed time and the table's other columns,
    rows not re-timed and shapes not re-timed left out (with --untimed floor, a row not re-timed of a re-timed shape
    kept at the shape's slowest re-timed time), a kept family whole; a configuration re-timed twice names
    the file and line and leaves no output."""
    import gzip
    kern = ','.join(grt.KERNEL)
    hdr = 'M,N,K,dtype,trans_a,trans_b,' + kern + ',time_us,heuristic_rank,workspace,family'
    cfg = lambda a: '%d,128,128,64,3,1,0,0,0,1,1,0' % a  # noqa: E731
    table = [hdr, '64,64,64,bf16,N,T,%s,10,0,0,vit' % cfg(66), '64,64,64,bf16,N,T,%s,11,1,4,vit' % cfg(21),
             '64,64,64,bf16,N,T,%s,12,-1,0,vit' % cfg(6), '8,8,8,fp32,N,N,%s,3,0,0,bert' % cfg(6),
             '16,16,16,fp16,N,N,%s,5,0,0,llama3' % cfg(6)]
    rt_hdr = '\t'.join(('key',) + grt.KERNEL + ('time_us',))
    tab = lambda k, a, t: '\t'.join([k] + cfg(a).split(',') + [t])  # noqa: E731
    retimed = [rt_hdr, tab('64,64,64,bf16,N,T', 66, '12.5'), tab('64,64,64,bf16,N,T', 21, '9.25'),
               tab('64,64,64,bf16,N,T', 7, '8')]
    with tempfile.TemporaryDirectory() as tmp:
        src, rt, out = (os.path.join(tmp, n) for n in ('t.csv.gz', 'r.tsv', 'o.csv.gz'))
        with gzip.open(src, 'wt') as f:
            f.write('\n'.join(table) + '\n')
        with open(rt, 'w') as f:
            f.write('\n'.join(retimed) + '\n')
        run(grt, ['--table', src, '--retimed', rt, '--out', out, '--keep-family', 'llama3'])
        with gzip.open(out, 'rt') as f:
            got = f.read().splitlines()
        check(got == [hdr, '64,64,64,bf16,N,T,%s,12.5,0,0,vit' % cfg(66), '64,64,64,bf16,N,T,%s,9.25,1,4,vit' % cfg(21),
                      table[5]], 'gemm_retimed_table: %s' % got[1:])
        os.remove(out)
        # --untimed floor: the row not re-timed kept at its shape's slowest re-timed time (12.5 over its own 12)
        run(grt, ['--table', src, '--retimed', rt, '--out', out, '--keep-family', 'llama3', '--untimed', 'floor'])
        with gzip.open(out, 'rt') as f:
            got = f.read().splitlines()
        check(got == [hdr, '64,64,64,bf16,N,T,%s,12.5,0,0,vit' % cfg(66), '64,64,64,bf16,N,T,%s,9.25,1,4,vit' % cfg(21),
                      '64,64,64,bf16,N,T,%s,12.5,-1,0,vit' % cfg(6), table[5]],
              'gemm_retimed_table --untimed floor: %s' % got[1:])
        os.remove(out)
        with open(rt, 'a') as f:
            f.write(retimed[2] + '\n')
        try:
            run(grt, ['--table', src, '--retimed', rt, '--out', out])
            check(False, 'gemm_retimed_table: a configuration re-timed twice accepted')
        except SystemExit as e:
            check('r.tsv:5: shape 64,64,64,bf16,N,T, configuration re-timed twice' in str(e.code),
                  'gemm_retimed_table: %s' % e.code)
        check(not os.path.exists(out) and not os.path.exists(out + '.tmp'), 'gemm_retimed_table: an output left')
        # an output over an input, a line not as heurist-collect writes it, a file that does not read: one line
        # naming the file (and line), no output, the inputs as they were
        with open(rt, 'w') as f:
            f.write('\n'.join(retimed) + '\n')
        with open(src, 'rb') as f:
            src_bytes = f.read()
        bad_rt, bad_src, not_gz = (os.path.join(tmp, n) for n in ('bad.tsv', 'bad.csv', 'not.csv.gz'))
        with open(bad_src, 'w') as f:
            f.write('\n'.join([hdr, table[1], table[2].replace(',11,1,4,', ',fast,1,4,')]) + '\n')
        with open(not_gz, 'w') as f:
            f.write('\n'.join(table) + '\n')
        with open(os.path.join(tmp, 't.schema.json'), 'w') as f:
            f.write('{}\n')
        cases = [(None, ['--table', src, '--retimed', rt, '--out', src], 'would be written over --table ' + src),
                 (None, ['--table', src, '--retimed', rt, '--out', rt], 'would be written over --retimed ' + rt),
                 (None, ['--table', src, '--retimed', rt, '--out', os.path.join(tmp, 't.csv')],
                  'would be written over --table\'s .schema.json'),
                 (None, ['--table', bad_src, '--retimed', rt, '--out', out], 'bad.csv:3: time_us \'fast\' is not a'),
                 (None, ['--table', not_gz, '--retimed', rt, '--out', out], 'not.csv.gz:1: does not read')]
        for field, time in (('+21', '9.25'), (' 21', '9.25'), ('21', '1_0'), ('21', '0x10'), ('21', ' 9')):
            row = tab('64,64,64,bf16,N,T', 21, time).replace('\t21\t', '\t%s\t' % field)
            what = 'configuration field %r' % field if field != '21' else 'time_us %r' % time
            cases.append((row, ['--table', src, '--retimed', bad_rt, '--out', out], 'bad.tsv:3: ' + what))
        for row, argv, want in cases:
            if row:
                with open(bad_rt, 'w') as f:
                    f.write('\n'.join(retimed[:2] + [row]) + '\n')
            try:
                run(grt, argv)
                check(False, 'gemm_retimed_table: %s accepted' % argv)
            except SystemExit as e:
                check(want in str(e.code), 'gemm_retimed_table: %s: %s' % (argv, e.code))
            with open(src, 'rb') as f:
                check(f.read() == src_bytes, 'gemm_retimed_table: %s: the table changed' % argv)
            check(not os.path.exists(out) and not os.path.exists(out + '.tmp'),
                  'gemm_retimed_table: %s: an output left' % argv)


def gemm_offline_choose():
    """The calibration rule: the best geomean among the points slower on at most 2%; else the smallest slower share
    among those of geomean >= 1.01; else the best geomean."""
    pt = lambda g, sl: {'geomean': g, 'slower': sl}
    rows = [('a', pt(1.03, 0.05)), ('b', pt(1.018, 0.02)), ('c', pt(1.015, 0.019)), ('d', pt(1.02, 0.021))]
    check(gof.choose(rows)[0] == 'b', 'gemm_offline.choose: %s among the points at or under 2%%' % gof.choose(rows)[0])
    rows = [('a', pt(1.03, 0.05)), ('b', pt(1.011, 0.03)), ('c', pt(1.005, 0.021))]
    check(gof.choose(rows)[0] == 'b', 'gemm_offline.choose: %s, the fallback' % gof.choose(rows)[0])
    rows = [('a', pt(1.004, 0.05)), ('b', pt(1.008, 0.03))]
    check(gof.choose(rows)[0] == 'b', 'gemm_offline.choose: %s, the best geomean' % gof.choose(rows)[0])


def shortlist_cost():
    # three problems of one model: shares 0.1, 0.5, 1.0 (26 of 40 ms in all), efficiencies 1, 0.5, 1; a second
    # report that holds the first two problems only, so that the two compare on them
    head = ('key\tmodel_name\tt_best_ms\tfind_ms\ttopk_ms\tt_topk_ms\tvendor_topk_ms\tt_vendor_topk_ms\n')
    rows = ('a\tm\t1\t10\t1\t1\t2\t1\n', 'b\tm\t1\t10\t5\t2\t5\t1\n', 'c\tm\t2\t20\t20\t2\t2\t2\n')
    with tempfile.TemporaryDirectory() as tmp:
        one, two = os.path.join(tmp, 'one.tsv'), os.path.join(tmp, 'two.tsv')
        with open(one, 'w') as f:
            f.write(head + ''.join(rows) + '# a summary line\n')
        with open(two, 'w') as f:
            f.write(head + ''.join(rows[:2]))
        rep = sc.read_report(one)
        fig = sc.figures(rep['m'], 'topk', 't_topk', 0, 0)
        check(abs(fig['total'] - 26 / 40) < 1e-12 and abs(fig['median'] - 0.5) < 1e-12 and fig['worst_share'] == 1.0
              and abs(fig['eff'] - 2.5 / 3) < 1e-12 and fig['worst']['key'] == 'c',
              'shortlist_cost: %s' % {k: v for k, v in fig.items() if k != 'worst'})
        check(sc.common_prefix([rep, sc.read_report(two)], 'm') == 2, 'shortlist_cost: the common problems')
        check(fig['eff_worst'] == 0.5 and fig['med_lo'] == fig['med_hi'] == 0.5, 'shortlist_cost: worst, median interval')
        boot = sc.figures(rep['m'], 'topk', 't_topk', 200, 1)
        check(0.1 <= boot['med_lo'] <= 0.5 <= boot['med_hi'] <= 1.0, 'shortlist_cost: median interval %s-%s' %
              (boot['med_lo'], boot['med_hi']))
        # a run over a subset of the list, in another order: the problems both hold, by key, in the first's order
        three = os.path.join(tmp, 'three.tsv')
        with open(three, 'w') as f:
            f.write(head + rows[2] + rows[0] + rows[2])
        check(sc.common_keys([rep, sc.read_report(three)], 'm') == ['a', 'c'] and
              sc.common_prefix([rep, sc.read_report(three)], 'm') == 0, 'shortlist_cost: the common keys')
        # a problem the first report names twice is one problem
        check(sc.common_keys([sc.read_report(three), rep], 'm') == ['c', 'a'], 'shortlist_cost: a key named twice')
        # reports without a problem in common at the same place: a message, not figures over no problem
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                sc.main([one, three])
            check(False, 'shortlist_cost: reports without a common problem compared')
        except SystemExit as e:
            check('no problem that every report holds' in str(e.code), 'shortlist_cost: %s' % e.code)
        # slices: the best kernel's time, and dims and groups from the key (depthwise: as many groups as channels)
        keyed = [dict(r, key=k) for r, k in zip(rep['m'], (
            '32-14-14-3x3-32-14-14-8-1x1-1x1-1x1-0-NCHW-FP16-B_g32', '64-14-14-3x3-64-14-14-8-1x1-1x1-1x1-0-NCHW-FP32-W_g4',
            '8-4-8-8-3x3x3-8-4-8-8-2-1x1x1-1x1x1-1x1x1-0-NCDHW-FP32-F'))]
        check([sc.slice_of(r, 'groups') for r in keyed] == ['depthwise', 'grouped', 'dense'] and
              [sc.slice_of(r, 'dims') for r in keyed] == ['2d', '2d', '3d'] and
              [sc.slice_of(r, 'dtype') for r in keyed] == ['FP16', 'FP32', 'FP32'] and
              [sc.slice_of(r, 'dir') for r in keyed] == ['B', 'W', 'F'] and sc.slice_of(rep['m'][0], 'groups') == '?',
              'shortlist_cost: slices %s' % [sc.slice_of(r, 'groups') for r in keyed])
        by_best = sc.slice_rows(rep['m'], 'topk', 't_topk', 'best')
        check([v[:2] for v in by_best] == [('>=1ms', 3)] and abs(by_best[0][3] - 26 / 40) < 1e-12 and
              by_best[0][6] == 5 and by_best[0][8] == 10, 'shortlist_cost: slice rows %s' % by_best)
        by_dims = sc.slice_rows(keyed, 'topk', 't_topk', 'dims')
        check([(v[0], v[1], v[3]) for v in by_dims] == [('2d', 2, 0.3), ('3d', 1, 1.0)],
              'shortlist_cost: slice rows by dims %s' % by_dims)
        with open(two, 'a') as f:
            f.write('d\tm\t1\t-\t1\t1\t1\t1\n')
        try:
            sc.read_report(two)
            check(False, 'shortlist_cost: a row without cudnnFind\'s time read')
        except SystemExit as e:
            check('line 4' in str(e), 'shortlist_cost: %s' % e)


def gemm_tune_labels():
    """The tuner's training rows: --list keeps cuBLASLt's list, --top N its first N entries, --tie R gives the label
    to the first pick within R of the fastest kept row (not beyond it); a shape without a first pick keeps its rows,
    one with no listed row is left out; a rank that is no number names the file and line."""
    import gzip
    hdr = 'M,N,K,dtype,trans_a,trans_b,algo_id,time_us,heuristic_rank,workspace'
    rows = ['64,64,64,bf16,N,T,1,10,0,0', '64,64,64,bf16,N,T,2,9.9,1,0', '64,64,64,bf16,N,T,3,9,,0',
            '8,8,8,fp32,N,N,1,5,1,0', '8,8,8,fp32,N,N,2,4,,0', '16,16,16,fp16,N,N,1,3,,0',
            '32,32,32,fp16,N,N,1,10,0,0', '32,32,32,fp16,N,N,2,9.9,1,0', '32,32,32,fp16,N,N,3,10.5,2,0']
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, 't.csv.gz'), os.path.join(tmp, 'o.csv.gz')
        with gzip.open(src, 'wt') as f:
            f.write('\n'.join([hdr] + rows) + '\n')
        for argv, want in (([], rows),
                           (['--list'], [rows[i] for i in (0, 1, 3, 6, 7, 8)]),
                           (['--top', '2'], [rows[i] for i in (0, 1, 3, 6, 7)]),
                           (['--tie', '1.02'], [rows[i] for i in (0, 1, 2, 3, 4, 5, 6, 8)]),
                           (['--list', '--tie', '1.02'], [rows[i] for i in (0, 3, 6, 8)]),
                           (['--top', '2', '--tie', '1.2'], [rows[i] for i in (0, 3, 6)])):
            run(gtl, argv + [src, out])
            with gzip.open(out, 'rt') as f:
                got = f.read().splitlines()
            check(got == [hdr] + want, 'gemm_tune_labels %s: %s' % (argv, got[1:]))
        with gzip.open(src, 'wt') as f:
            f.write('\n'.join([hdr] + rows[:2] + [rows[2].replace(',,', ',x,')]) + '\n')
        try:
            run(gtl, ['--list', src, out])
            check(False, 'gemm_tune_labels: a rank x read')
        except SystemExit as e:
            check("t.csv.gz:4: heuristic_rank 'x'" in str(e.code), 'gemm_tune_labels: %s' % e.code)


networks()
cost_models()
gemm_noise()
gemm_merge_passes()
gemm_retimed_table()
gemm_offline_choose()
networks_subset()
active_keys()
gemm_shapes()
triton()
table_groups()
batched_tables()
shortlist_cost()
gemm_tune_labels()
for f in failures:
    print('FAIL: %s' % f)
print('collect scripts: %s' % ('%d failures' % len(failures) if failures else 'ok'))
sys.exit(1 if failures else 0)
