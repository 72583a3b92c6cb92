#!/usr/bin/env python3
"""The active-collection rule of issue #34: the convolution keys to collect next, where a model is wrong or unsure.

  wrong:  a problem of a heurist-collect verify report (--report, any number) whose model pick was slower than
          cuDNN's heuristic pick beyond the noise ratio (speed-up < 1 / --noise), worst first, and with
          --batches its layer at each of those batch sizes (the same geometry, direction and data type);
  unsure: a problem of `heurist predict --problems KEYS --output PRED.tsv --top 8` (--predict) whose best
          algorithm's score beats the next algorithm's by less than --margin (the model's own margin; math types of
          one algorithm are one algorithm), smallest margin first.
  slices: with --slices (e.g. W,3d,grouped,depthwise,small), an unsure problem is kept only in one of the slices
          where models fail most (issue #34): a direction (F, B, W), 3d, grouped, depthwise, or small (the
          convolution's input or output channels a group at most --small-channels, 16).
A key is written once, without its precision class suffix (a collection times every math type of a key), wrong
keys first, at most --count, and with --budget-s only while the keys' modelled collection seconds on one H100
(conv_networks.py's cost model of the pool's find-db and run logs) stay within it; one a line (heurist-collect conv's
--problems), or with --chunk N in OUT/chunk_000.txt ... files of N keys each (the run resumes chunk by chunk);
OUT.why.tsv (OUT/why.tsv with --chunk) gives each key's reason, value (the speed-up, or the margin) and modelled
seconds. Without --budget-s the estimate printed is at the pool's measured 58.9 ms a problem.

Keys of --exclude files (a key list or networks.tsv: the first column) are never written: a held-out set stays
out of pool only while none of its keys is collected for training, so its verify reports feed the rule only to
rank candidates elsewhere, and the candidates given to predict are geometries outside it (e.g. the traced layers
conv_networks.py did not sample, or other batch sizes of the wrong layers). A batch-size neighbour is no geometry
of the held-out set (the set's rule: every numeric field equal), but it is one of its layers: say so beside figures
measured after training on it.

  heurist predict --model M.h5 --problems CANDIDATES.txt --output PRED.tsv --top 8
  python3 collect/scripts/active_keys.py --report datasets/h100/verify/h100_networks_oos_k3.tsv.gz --model-name rt_ref \\
      --batches 1,2,4,8,16,32,64,128 --predict PRED.tsv --margin 0.1 --exclude datasets/h100/networks/networks.tsv \\
      --count 1500 --out NEXT.txt
  heurist-collect conv --problems NEXT.txt ...

The pool's own generator space (geometries of the MIOpen find-dbs the pool did not sample, none of a held-out
set's), ranked by the model's margin within the failing slices, collected within a GPU budget:
  python3 collect/scripts/sample_problems.py --geometries 6000 --seed 1 --chunk 6000 --dtypes FP32,FP16,BF16 \\
      --exclude datasets/h100/problems/chunk_*.txt datasets/h100/networks/chunk_*.txt --out CAND
  heurist predict --model M.h5 --problems CAND/chunk_000.txt --output PRED.tsv --top 8
  python3 collect/scripts/active_keys.py --predict PRED.tsv --margin 0.1 --slices W,3d,grouped,depthwise,small \\
      --exclude datasets/h100/networks/networks.tsv --count 1500 --budget-s 100 --chunk 250 --out datasets/h100/active
Python 3 standard library only."""
import argparse
import glob
import gzip
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sample_problems  # noqa: E402  (the key parser)

CLASS_SUFFIXES = ('_strict', '_conversion')
SECONDS_A_PROBLEM = 0.0589


def plain_key(key):
    """The key without a precision class suffix."""
    for s in CLASS_SUFFIXES:
        if key.endswith(s):
            return key[:-len(s)]
    return key


def wrong_keys(path, model_name, noise):
    """[(speed-up, key)] of a verify report's rows (of model_name, or any model) slower than the heuristic beyond
    the noise."""
    out = []
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        header = f.readline().rstrip('\n').split('\t')
        try:
            c_key, c_speedup = header.index('key'), header.index('speedup')
        except ValueError:
            sys.exit('%s:1: not a verify report (no key and speedup columns)' % path)
        c_name = header.index('model_name') if 'model_name' in header else -1
        for n, line in enumerate(f, 2):
            if line.startswith('#') or not line.strip():
                continue
            cols = line.rstrip('\n').split('\t')
            if len(cols) <= max(c_key, c_speedup, c_name):
                sys.exit('%s:%d: %d fields, expected %d' % (path, n, len(cols), len(header)))
            if model_name and c_name >= 0 and cols[c_name] != model_name:
                continue
            if cols[c_speedup] == '-':
                continue
            try:
                s = float(cols[c_speedup])
            except ValueError:
                sys.exit('%s:%d: speedup %r is not a number' % (path, n, cols[c_speedup]))
            if s < 1.0 / noise:
                out.append((s, plain_key(cols[c_key])))
    return out


def unsure_keys(path, margin):
    """[(margin, key)] of a predict TSV's problems whose best algorithm beats the next one by less than margin."""
    best = {}
    with open(path) as f:
        header = f.readline().rstrip('\n').split('\t')
        if header[:4] != ['problem', 'rank', 'score', 'kernel']:
            sys.exit('%s:1: expected heurist predict --problems output (problem, rank, score, kernel)' % path)
        for n, line in enumerate(f, 2):
            cols = line.rstrip('\n').split('\t')
            if len(cols) < 4:
                sys.exit('%s:%d: expected problem, rank, score and kernel' % (path, n))
            try:
                score = float(cols[2])
            except ValueError:
                sys.exit('%s:%d: score %r is not a number' % (path, n, cols[2]))
            algo = cols[3].rsplit('.', 1)[0]
            algos = best.setdefault(cols[0], {})
            algos[algo] = max(score, algos.get(algo, score))
    out = []
    for key, algos in best.items():
        scores = sorted(algos.values(), reverse=True)
        m = scores[0] - scores[1] if len(scores) > 1 else float('inf')
        if m < margin:
            out.append((m, plain_key(key)))
    return out


SLICES = ('F', 'B', 'W', '3d', 'grouped', 'depthwise', 'small')


def slices_of(key, small):
    """The failure slices a key belongs to (SLICES' names)."""
    g = sample_problems.parse(plain_key(key))
    if g is None:
        return set()
    nd, cin, _, _, cout, _, _, _, _, _, _, groups = g
    out = {plain_key(key).split('-')[-1][0]}
    if nd == 3:
        out.add('3d')
    if groups > 1:
        out.add('depthwise' if groups == cin else 'grouped')
    if min(cin // groups, cout) <= small:
        out.add('small')
    return out


def with_batch(key, batch):
    """The key with its batch size replaced (a 2-D key's eighth field, a 3-D key's tenth)."""
    parts = key.split('-')
    at = 7 if 'x' in parts[3] else 9
    return '-'.join(parts[:at] + [str(batch)] + parts[at + 1:])


def excluded(paths):
    """The plain keys of key lists or key tables (the first column; a header line starting with "key" skipped)."""
    keys = set()
    for path in paths:
        with open(path) as f:
            for line in f:
                k = line.split('\t', 1)[0].split()[0] if line.strip() else ''
                if k and k != 'key' and not k.startswith('#'):
                    keys.add(plain_key(k.split('=', 1)[0]))
    return keys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--report', action='append', default=[], help='a heurist-collect verify report (conv)')
    ap.add_argument('--model-name', help="the report's model to read (default: every model)")
    ap.add_argument('--noise', type=float, default=1.0175, help='noise ratio of a verify report (default 1.0175)')
    ap.add_argument('--predict', help='heurist predict --problems output')
    ap.add_argument('--margin', type=float, default=0.1, help="an unsure problem's margin is below this")
    ap.add_argument('--exclude', action='append', default=[], help='keys never to write (a held-out set)')
    ap.add_argument('--batches', help='a wrong problem adds its layer at these batch sizes, e.g. 1,2,4,8,16,32,64,128')
    ap.add_argument('--slices', help='keep unsure problems of these slices only: ' + ', '.join(SLICES))
    ap.add_argument('--small-channels', type=int, default=16, help="the 'small' slice's channels a group")
    ap.add_argument('--count', type=int, required=True)
    ap.add_argument('--budget-s', type=float, help="stop before the keys' modelled collection seconds pass this")
    ap.add_argument('--cost-fdb', default='datasets/h100/h100_cudnn_conv.fdb.txt.bz2', help='the cost model\'s pool')
    ap.add_argument('--run-logs', nargs='+', default=sorted(glob.glob('datasets/h100/logs/run*.log')))
    ap.add_argument('--chunk', type=int, help='write OUT/chunk_NNN.txt files of this many keys')
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    if not a.report and not a.predict:
        sys.exit('give --report, --predict or both')
    want = set(a.slices.split(',')) if a.slices else set()
    if want - set(SLICES):
        sys.exit('--slices: %s unknown (expected %s)' % (','.join(sorted(want - set(SLICES))), ', '.join(SLICES)))
    cost = None
    if a.budget_s is not None:
        import conv_networks  # the pool's cost model; imported only here, as it reads the pool's find-db
        cost = conv_networks.cost_model(a.cost_fdb, a.run_logs)[0]
    rows, seen = [], excluded(a.exclude)
    wrong = sorted(w for r in a.report for w in wrong_keys(r, a.model_name, a.noise))
    if a.batches:
        try:
            batches = [int(b) for b in a.batches.split(',')]
        except ValueError:
            sys.exit('--batches %r: expected comma-separated integers' % a.batches)
        wrong = [(v, k2) for v, k in wrong for k2 in [k] + [with_batch(k, b) for b in batches]]
    unsure = sorted(unsure_keys(a.predict, a.margin)) if a.predict else []
    if want:
        unsure = [(m, k) for m, k in unsure if slices_of(k, a.small_channels) & want]
    spent = 0.0
    for reason, items in (('wrong', wrong), ('unsure', unsure)):
        for value, key in items:
            if key in seen or len(rows) >= a.count:
                continue
            s = cost(key) if cost else SECONDS_A_PROBLEM
            if a.budget_s is not None and spent + s > a.budget_s:
                continue
            seen.add(key)
            spent += s
            rows.append((key, reason, value, s))
    why = 'key\treason\tvalue\tmodelled_s\n' + ''.join('%s\t%s\t%.4g\t%.4f\n' % r for r in rows)
    if a.chunk:
        os.makedirs(a.out, exist_ok=True)
        files = [(os.path.join(a.out, 'chunk_%03d.txt' % c), ''.join('%s\n' % r[0] for r in rows[at:at + a.chunk]))
                 for c, at in enumerate(range(0, len(rows), a.chunk))]
        files.append((os.path.join(a.out, 'why.tsv'), why))
    else:
        files = [(a.out, ''.join('%s\n' % r[0] for r in rows)), (a.out + '.why.tsv', why)]
    for path, text in files:
        with open(path + '.tmp', 'w') as f:
            f.write(text)
        os.replace(path + '.tmp', path)
    n_wrong = sum(r[1] == 'wrong' for r in rows)
    print('%s: %d keys (%d wrong, %d unsure); about %.0f s to collect on one H100%s' %
          (a.out, len(rows), n_wrong, len(rows) - n_wrong, spent, ' (modelled)' if cost else ''))
    if want:
        for sl in SLICES:
            print('  slice %s: %d keys' % (sl, sum(1 for r in rows if sl in slices_of(r[0], a.small_channels))))


if __name__ == '__main__':
    main()
