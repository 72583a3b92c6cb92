#!/usr/bin/env python3
"""Variants of the vendor guard of the GEMM single pick, compared on the training families' out-of-fold scores
(experiments/gemm_real_models.sh calib: three folds, each scored by a model trained on the other two) before any
held-out figure is looked at:
  global   one guard (N, M) for every shape: collect/scripts/gemm_offline.py's grid and rule;
  dtype    one guard per data type, each chosen by the same grid and rule on that type's shapes (a type the
           calibration lacks takes the global guard);
  agree    the global grid and rule over a pick that stays the guarded model's only where a second model's
           first choice is the same configuration, cuBLASLt's first pick otherwise.
Each variant is fitted on two folds and scored on the third, for each fold in turn (nested: the figures of a
choice on shapes it was not chosen on), and the variant of the best nested figures is taken by the same rule (the
best geomean among those slower beyond x1.02 on at most 2% of the shapes; else the smallest slower share among
those of geomean >= 1.01; else the best geomean). The chosen variant fitted on all three folds is then applied to
held-out scores (--heldout: the first model's scores and, for agree, the second's). --choice-out FILE writes the
chosen variant and its guards, a line each: "VARIANT all N M" for global and agree, "dtype TYPE N M" per data
type (and "dtype default N M") for dtype.

  /usr/bin/python3 experiments/gemm_guard_variants.py --calib A.tsv B.tsv C.tsv --second FA.tsv FB.tsv FC.tsv \\
      [--heldout HELD.tsv --heldout-second FHELD.tsv [--keys KEYS.txt]]
Score files are gemm_offline.py score's (the two models' files of a fold scored on the same table). Python 3
standard library only."""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'collect', 'scripts'))
import gemm_offline as go  # noqa: E402

VARIANTS = ('global', 'dtype', 'agree')


def dtype_of(key):
    return key.split('x')[3]


def second_choice(d):
    """The second model's first choice: its best score, the lowest candidate index on a tie (as the guard orders)."""
    s = d['second']
    return max(range(len(s)), key=lambda k: (s[k], -k))


def pick(d, variant, params):
    """The candidate a variant picks on one shape with fitted params: (N, M) for global and agree, {dtype: (N, M)}
    with a 'default' for dtype."""
    if variant == 'dtype':
        top, margin = params.get(dtype_of(d['key']), params['default'])
    else:
        top, margin = params
    p, _ = go.guard(d['score'], d['rank'], top, margin)
    if variant == 'agree' and d['rank'][p] != 0 and second_choice(d) != p:
        return d['rank'].index(0)
    return p


def figures(shapes, variant, params, interval=True):
    """gemm_offline.summary's figures of a variant's picks; without the bootstrap interval where interval is
    false (the geomean and the slower share are all the rule reads)."""
    sp, eff = [], []
    for d in shapes.values():
        if 0 not in d['rank']:
            continue
        t, p = d['t'], pick(d, variant, params)
        sp.append(t[d['rank'].index(0)] / t[p])
        eff.append(min(t) / t[p])
    if interval:
        return go.summary(sp, eff)
    return {'geomean': math.exp(sum(math.log(x) for x in sp) / len(sp)),
            'slower': sum(x < 1 / go.NOISE for x in sp) / len(sp)}


def grid(shapes):
    """gemm_offline.calibrate's grid: N in (any, 2, 3, 4), M 0 and the deciles of the positive score gaps (N any
    alone where the model never scores another candidate above the first pick)."""
    margins = go.margin_grid(shapes)
    return [(top, m) for top in (go.GUARD_TOPS if len(margins) > 1 else (0,)) for m in margins]


def fit(shapes, variant):
    """The params the rule chooses for a variant on a set of scored shapes."""
    if variant == 'dtype':
        params = {'default': fit(shapes, 'global')}
        for t in sorted({dtype_of(k) for k in shapes}):
            sub = {k: d for k, d in shapes.items() if dtype_of(k) == t}
            params[t] = fit(sub, 'global')
        return params
    rows = [(g, figures(shapes, variant, g, False)) for g in grid(shapes)]
    return go.choose(rows)[0]


def load(paths, second_paths):
    """The first model's scored shapes, each with the second model's scores of the same candidates beside them."""
    shapes = go.load_scores(paths)
    for k, d in shapes.items():
        d['key'] = k
    if second_paths:
        other = go.load_scores(second_paths)
        for k, d in shapes.items():
            o = other.get(k)
            if o is None or o['t'] != d['t'] or o['rank'] != d['rank']:
                sys.exit('%s: shape %s is not scored on the same candidates in %s' %
                         (','.join(paths), k, ','.join(second_paths)))
            d['second'] = o['score']
    return shapes


def line(label, s):
    return ('%s: n %d speed-up %.4f (%.4f-%.4f) slower %.4f faster %.4f worst %.3f eff %.4f' %
            (label, s['n'], s['geomean'], s['lo'], s['hi'], s['slower'], s['faster'], s['worst'], s['eff']))


def describe(variant, params):
    if variant == 'dtype':
        return ', '.join('%s N %d M %.6g' % (t, p[0], p[1]) for t, p in sorted(params.items()))
    return 'N %d M %.6g' % params


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--calib', nargs=3, required=True, help='the first model\'s three folds\' scores')
    ap.add_argument('--second', nargs=3, required=True, help='the second model\'s scores of the same folds')
    ap.add_argument('--heldout', help='the first model\'s held-out scores')
    ap.add_argument('--heldout-second', help='the second model\'s held-out scores')
    ap.add_argument('--keys', help='a file of shape keys, one a line: the held-out figures again on those shapes')
    ap.add_argument('--choice-out', help='the chosen variant and its guards, written to this file')
    a = ap.parse_args()
    folds = [load([p], [q]) for p, q in zip(a.calib, a.second)]
    nested = {}
    for v in VARIANTS:
        sp_all = []
        for i, fold in enumerate(folds):
            train = {}
            for j, f in enumerate(folds):
                if j != i:
                    train.update(f)
            params = fit(train, v)
            for d in fold.values():
                if 0 in d['rank']:
                    p = pick(d, v, params)
                    sp_all.append((d['t'][d['rank'].index(0)] / d['t'][p], min(d['t']) / d['t'][p]))
            print('%s, fitted without fold %d: %s' % (v, i + 1, describe(v, params)))
        nested[v] = go.summary([x for x, _ in sp_all], [y for _, y in sp_all])
        print(line('%s, nested (each fold scored by the choice on the other two)' % v, nested[v]))
    chosen = go.choose([(v, nested[v]) for v in VARIANTS])[0]
    every = {}
    for f in folds:
        every.update(f)
    params = fit(every, chosen)
    print('chosen variant: %s, fitted on the three folds: %s' % (chosen, describe(chosen, params)))
    print(line('%s on the three folds (in sample)' % chosen, figures(every, chosen, params)))
    if a.choice_out:
        rows = sorted(params.items()) if chosen == 'dtype' else [('all', params)]
        with open(a.choice_out + '.tmp', 'w') as f:
            f.write(''.join('%s %s %d %.6g\n' % (chosen, t, n, m) for t, (n, m) in rows))
        os.replace(a.choice_out + '.tmp', a.choice_out)
    if a.heldout:
        held = load([a.heldout], [a.heldout_second] if a.heldout_second else [])
        if chosen == 'agree' and not a.heldout_second:
            sys.exit('--heldout-second: the agree variant needs the second model\'s held-out scores')
        print(line('held out, %s' % chosen, figures(held, chosen, params)))
        if a.keys:
            with open(a.keys) as f:
                keep = {k.strip() for k in f if k.strip()}
            sub = {k: d for k, d in held.items() if k in keep}
            print(line('held out, %s, the shapes of %s' % (chosen, a.keys), figures(sub, chosen, params)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
