#!/usr/bin/env python3
"""The active-collection rule of issue #34: the convolution keys to collect next, where a model is wrong or unsure.

  wrong:  a problem of a heurist-collect verify report (--report, any number) whose model pick was slower than
          cuDNN's heuristic pick beyond the noise ratio (speed-up < 1 / --noise), worst first, and with
          --batches its layer at each of those batch sizes (the same geometry, direction and data type);
  unsure: a problem of `heurist predict --problems KEYS --output PRED.tsv --top 8` (--predict) whose best
          algorithm's score beats the next algorithm's by less than --margin (the model's own margin; math types of
          one algorithm are one algorithm), smallest margin first.
A key is written once, without its precision class suffix (a collection times every math type of a key), wrong
keys first, at most --count, one a line (heurist-collect conv's --problems); OUT.why.tsv gives each key's reason and
value (the speed-up, or the margin). The estimate printed is the keys' collection time on one H100 at the pool's
measured 58.9 ms a problem (datasets/h100/networks/README.md).

Keys of --exclude files (a key list or networks.tsv: the first column) are never written: a held-out set stays
out of pool only while none of its keys is collected for training, so its verify reports feed the rule only to
rank candidates elsewhere, and the candidates given to predict are geometries outside it (e.g. the traced layers
conv_networks.py did not sample, or other batch sizes of the wrong layers). A batch-size neighbour is no geometry
of the held-out set (the set's rule: every numeric field equal), but it is one of its layers: say so beside figures
measured after training on it.

  heurist predict --model M.h5 --problems CANDIDATES.txt --output PRED.tsv --top 8
  python3 collect/scripts/active_keys.py --report datasets/h100/verify/h100_networks_oos_k3.tsv --model-name rt_ref \\
      --batches 1,2,4,8,16,32,64,128 --predict PRED.tsv --margin 0.1 --exclude datasets/h100/networks/networks.tsv \\
      --count 1500 --out NEXT.txt
  heurist-collect conv --problems NEXT.txt ...
Python 3 standard library only."""
import argparse
import os
import sys

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
    with open(path) as f:
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
    ap.add_argument('--count', type=int, required=True)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    if not a.report and not a.predict:
        sys.exit('give --report, --predict or both')
    rows, seen = [], excluded(a.exclude)
    wrong = sorted(w for r in a.report for w in wrong_keys(r, a.model_name, a.noise))
    if a.batches:
        try:
            batches = [int(b) for b in a.batches.split(',')]
        except ValueError:
            sys.exit('--batches %r: expected comma-separated integers' % a.batches)
        wrong = [(v, k2) for v, k in wrong for k2 in [k] + [with_batch(k, b) for b in batches]]
    unsure = sorted(unsure_keys(a.predict, a.margin)) if a.predict else []
    for reason, items in (('wrong', wrong), ('unsure', unsure)):
        for value, key in items:
            if key not in seen and len(rows) < a.count:
                seen.add(key)
                rows.append((key, reason, value))
    for path, text in ((a.out, ''.join('%s\n' % r[0] for r in rows)),
                       (a.out + '.why.tsv', 'key\treason\tvalue\n' + ''.join('%s\t%s\t%.4g\n' % r for r in rows))):
        with open(path + '.tmp', 'w') as f:
            f.write(text)
        os.replace(path + '.tmp', path)
    n_wrong = sum(r[1] == 'wrong' for r in rows)
    print('%s: %d keys (%d wrong, %d unsure); about %.0f s to collect on one H100' %
          (a.out, len(rows), n_wrong, len(rows) - n_wrong, len(rows) * SECONDS_A_PROBLEM))


if __name__ == '__main__':
    main()
