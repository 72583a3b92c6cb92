#!/usr/bin/env python3
"""Summary of a cuBLASLt GEMM table: candidates per shape, and cuBLASLt's heuristic (its first pick, and the best
of its list) against the fastest configuration timed, overall and per data type.

  python3 collect/scripts/gemm_summary.py datasets/h100/h100_cublaslt_gemm.csv.gz
  python3 collect/scripts/gemm_summary.py TABLE.csv.gz --shapes SHAPES.txt

--shapes: per class of the shape list's tags (attention: an `.attn_` layer; moe_batched: `.experts_batched.`;
fp8: dtype fp8e4m3; other), cuBLASLt's first pick against the best of its own list (speed-up geomean with a
seeded bootstrap 95% interval over the shapes, share beyond x1.02, the largest) and both against the table's best.
Python 3 standard library only."""
import gzip, csv, collections, os, random, math, statistics, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_table_io  # noqa: E402
args = sys.argv[1:]
shapes_path = None
if '--shapes' in args:
    i = args.index('--shapes')
    if i + 1 >= len(args):
        sys.exit('--shapes: expected a shape file')
    shapes_path = args[i + 1]
    del args[i:i + 2]
if len(args) != 1:
    sys.exit('usage: gemm_summary.py TABLE.csv.gz [--shapes SHAPES.txt]')
rows = collections.defaultdict(list)
with gzip.open(args[0], 'rt') as f:
    for r in csv.DictReader(f):
        rows[(r['M'], r['N'], r['K'], r['dtype'], r['trans_a'], r['trans_b'], r.get('batch', '1'))].append(r)
eff_pick, eff_list, gain_space, ncand, nheur = [], [], [], [], []
by_dtype = collections.defaultdict(list)
for k, rs in rows.items():
    t = [float(r['time_us']) for r in rs]
    best = min(t)
    h = [(int(r['heuristic_rank']), float(r['time_us'])) for r in rs if r['heuristic_rank'] != '']
    h.sort()
    pick = h[0][1]
    hbest = min(x[1] for x in h)
    eff_pick.append(best / pick); eff_list.append(best / hbest); gain_space.append(hbest / best)
    ncand.append(len(rs)); nheur.append(len(h)); by_dtype[k[3]].append(best / pick)
def q(v, p): v = sorted(v); return v[int(p * (len(v) - 1))]
print('shapes', len(rows), 'rows', sum(ncand), 'candidates/shape median', statistics.median(ncand), 'min', min(ncand), 'max', max(ncand), 'heuristic list median', statistics.median(nheur))
print('heuristic first pick vs table best: mean %.4f median %.4f p10 %.4f below0.9 %.3f min %.4f' % (statistics.mean(eff_pick), statistics.median(eff_pick), q(eff_pick, .1), sum(e < .9 for e in eff_pick) / len(eff_pick), min(eff_pick)))
print('best of heuristic list vs table best: mean %.4f p10 %.4f ; shapes where the sampled space beats the list by >2%%: %.3f' % (statistics.mean(eff_list), q(eff_list, .1), sum(g > 1.02 for g in gain_space) / len(gain_space)))
for d, v in sorted(by_dtype.items()): print('  %s: %d shapes, heuristic pick eff mean %.4f p10 %.4f' % (d, len(v), statistics.mean(v), q(v, .1)))


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


if shapes_path:
    cls = gemm_table_io.shape_classes(shapes_path)
    per = collections.defaultdict(list)
    for k, rs in rows.items():
        t = [float(r['time_us']) for r in rs]
        h = sorted((int(r['heuristic_rank']), float(r['time_us'])) for r in rs if r['heuristic_rank'] != '')
        if not h:
            continue
        per[cls.get(k, 'unlisted')].append((h[0][1], min(x[1] for x in h), min(t), len(h)))
    print('class: shapes; best of cuBLASLt\'s list over its first pick: geomean (95% bootstrap), list better '
          'beyond x1.02, largest; efficiency vs the table\'s best: first pick, best of the list; list entries')
    rng = random.Random(0)
    for c in sorted(per):
        v = per[c]
        sp = [pick / lbest for pick, lbest, _, _ in v]
        boots = sorted(geomean([sp[rng.randrange(len(sp))] for _ in sp]) for _ in range(1000))
        print('  %s: %d; x%.4f (%.4f-%.4f), %.1f%%, x%.3f; %.4f, %.4f; %.1f' % (
            c, len(v), geomean(sp), boots[25], boots[974], 100.0 * sum(x > 1.02 for x in sp) / len(sp), max(sp),
            statistics.mean(b / p for p, _, b, _ in v), statistics.mean(b / l for _, l, b, _ in v),
            statistics.mean(n for _, _, _, n in v)))
