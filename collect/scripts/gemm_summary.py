#!/usr/bin/env python3
"""Summary of a cuBLASLt GEMM table: candidates per shape, and cuBLASLt's heuristic (its first pick, and the best
of its list) against the fastest configuration timed, overall and per data type.

  python3 collect/scripts/gemm_summary.py datasets/h100/h100_cublaslt_gemm.csv.gz
Python 3 standard library only."""
import gzip, csv, collections, statistics, sys
rows = collections.defaultdict(list)
with gzip.open(sys.argv[1], 'rt') as f:
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
