#!/usr/bin/env python3
"""Run-to-run noise of a cuBLASLt GEMM table: a second collection of a prefix of the shapes (same seed, so the
same candidates) against the first. Times of candidates within 5x of their shape's best (the ones timed by
repeats) are compared per configuration, and the best time and fastest configuration per shape. The noise
ceiling: the first run's fastest configuration timed by the second (what a model that always picked a table's
best would reach when re-timed), its efficiency against the second run's best and the share of shapes where it
is slower than that best beyond x1.02.

  python3 collect/scripts/gemm_noise.py datasets/h100/h100_cublaslt_gemm.csv.gz datasets/h100/h100_cublaslt_gemm.noise.csv.gz
Python 3 standard library only."""
import gzip, csv, sys
def load(p):
    d = {}
    with gzip.open(p, 'rt') as f:
        for r in csv.DictReader(f):
            shape = tuple(r[c] for c in ('M','N','K','dtype','trans_a','trans_b'))
            cfg = tuple(r[c] for c in ('algo_id','tile_m','tile_n','stage_k','stages','split_k','reduction_scheme','swizzle','custom_option','cluster_m','cluster_n','inner_shape'))
            d.setdefault(shape, {})[cfg] = float(r['time_us'])
            if r['heuristic_rank'] == '0':
                first[(p, shape)] = cfg
    return d
first = {}
a, b = load(sys.argv[1]), load(sys.argv[2])
ratios, best_ratio, same_best, common = [], [], 0, 0
for s, cb in b.items():
    ca = a[s]
    ks = set(ca) & set(cb)
    common += len(ks)
    ba, bb = min(ca.values()), min(cb.values())
    # only the candidates timed by repeats (within 5x of the best) have median times
    ratios += [cb[k] / ca[k] for k in ks if ca[k] < 5 * ba and cb[k] < 5 * bb]
    best_ratio.append(bb / ba)
    same_best += min(ca, key=ca.get) == min(cb, key=cb.get)
def q(v, p): v = sorted(v); return v[int(p * (len(v) - 1))]
print('shapes', len(b), 'common configurations', common, 'of', sum(len(v) for v in b.values()))
print('per-configuration time ratio run2/run1 p10 %.3f p50 %.3f p90 %.3f' % (q(ratios,.1), q(ratios,.5), q(ratios,.9)))
print('best time ratio p10 %.3f p50 %.3f p90 %.3f; same fastest configuration %.3f' % (q(best_ratio,.1), q(best_ratio,.5), q(best_ratio,.9), same_best/len(b)))
r90 = sorted(max(x, 1/x) for x in best_ratio)[int(.9*(len(best_ratio)-1))]
print('90%% of shapes: best time moved by less than x%.4f' % r90)
# the noise ceiling: run 1's best configuration re-timed in run 2, against run 2's best
ceiling = [min(b[s_].values()) / b[s_][min(a[s_], key=a[s_].get)] for s_ in b if min(a[s_], key=a[s_].get) in b[s_]]
# the heuristic's own pick timed twice: what "slower beyond x1.02" reads for a model that picks the same
moved = [b[s_][first[(sys.argv[2], s_)]] / a[s_][first[(sys.argv[1], s_)]] for s_ in b
         if first.get((sys.argv[1], s_)) == first.get((sys.argv[2], s_)) and (sys.argv[1], s_) in first]
print('the heuristic\'s first pick timed twice (%d shapes where it is the same configuration): slower beyond x1.02 '
      'on %.1f%%, faster on %.1f%%' % (len(moved), 100.0 * sum(m > 1.02 for m in moved) / len(moved),
                                       100.0 * sum(m < 1 / 1.02 for m in moved) / len(moved)))
print('noise ceiling: the first run\'s best re-timed reaches efficiency mean %.4f (p10 %.4f), slower than the '
      'second run\'s best beyond x1.02 on %.1f%% of shapes' % (sum(ceiling) / len(ceiling), q(ceiling, .1),
                                                              100.0 * sum(c < 1 / 1.02 for c in ceiling) / len(ceiling)))
