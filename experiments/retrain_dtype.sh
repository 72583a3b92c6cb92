#!/usr/bin/env bash
# Retraining when the target changes, measured on the H100 cuDNN data (datasets/h100/): FP32 problems stand
# for the old target and FP16 problems for the new one (both 68 cuDNN algorithm x math-type kernels, so one
# model's vocabulary serves both). Split by geometry (collect/scripts/split_heldout.py, 20% held out); the FP16
# problems of the held-out geometries are the test set. Compared on it: the old model (FP32 only), a model
# retrained on all new training problems, one trained from scratch on 10% of them, one warm-started from the
# old model (gbdt --init-model) on the same 10%, and cuDNN's heuristic. Each model trains on its data as `heurist
# train` does by default: 80% of the rows, 10% of those held back for early stopping.
#   bash experiments/retrain_dtype.sh [WORKDIR]     (default out/retrain-dtype; needs build/heurist)
set -euo pipefail
cd "$(dirname "$0")/.."
H=${HEURIST:-build/heurist}
W=${1:-out/retrain-dtype}
mkdir -p "$W"
bzcat datasets/h100/h100_cudnn_conv.fdb.txt.bz2 > "$W/all.fdb.txt"
bzcat datasets/h100/h100_cudnn_conv.heuristic.txt.bz2 > "$W/all.heuristic.txt"
python3 collect/scripts/split_heldout.py --fdb "$W/all.fdb.txt" --share 0.2 --seed 0 --out-prefix "$W/h"
grep -e '-FP32-' "$W/h.train.fdb.txt" > "$W/old.fdb.txt"
grep -e '-FP16-' "$W/h.train.fdb.txt" > "$W/new.fdb.txt"
grep -e '-FP16-' "$W/h.test.fdb.txt" > "$W/test.fdb.txt"
# 10% of the new training geometries
python3 collect/scripts/split_heldout.py --fdb "$W/new.fdb.txt" --share 0.1 --seed 1 --out-prefix "$W/n"
mv "$W/n.test.fdb.txt" "$W/new10.fdb.txt"
# cuDNN's ranking beside the test set, for the vendor row
awk -F= 'NR == FNR { keep[$1] = 1; next } ($1 in keep)' "$W/test.fdb.txt" "$W/all.heuristic.txt" > "$W/test.heuristic.txt"
for f in old new new10 test; do echo "$f: $(wc -l < "$W/$f.fdb.txt") problems"; done
G='{"rounds":100}'
train() { # name data [extra args]
    local name=$1 data=$2
    shift 2
    "$H" train --data "$W/$data.fdb.txt" --task select --model gbdt --config "$G" --seed 0 \
        --out "$W/$name.h5" --report "$W/$name.train.json" --quiet "$@"
    "$H" eval --model "$W/$name.h5" --data "$W/test.fdb.txt" --report "$W/$name.eval.json" --quiet
}
train old old
train retrained new
train scratch10 new10
train warm10 new10 --init-model "$W/old.h5"
"$H" train --data "$W/test.fdb.txt" --task select --model vendor --out "$W/vendor.h5" --quiet
"$H" eval --model "$W/vendor.h5" --data "$W/test.fdb.txt" --report "$W/vendor.eval.json" --quiet
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
print('| model | trained on | top1 | efficiency mean | median | p10 | train s |')
print('|---|---|---|---|---|---|---|')
for name, on in (('old', 'FP32 problems (old target)'), ('retrained', 'all new FP16 training problems'),
                 ('scratch10', '10% of them, from scratch'), ('warm10', '10% of them, warm start from old'),
                 ('vendor', "cuDNN's heuristic")):
    m = json.load(open('%s/%s.eval.json' % (w, name)))['metrics']
    try:
        t = '%.1f' % json.load(open('%s/%s.train.json' % (w, name)))['timing']['train_seconds']
    except (OSError, KeyError):
        t = '-'
    print('| %s | %s | %.4f | %.4f | %.4f | %.4f | %s |' % (name, on, m['top1'], m['efficiency_mean'],
          m['efficiency_median'], m['efficiency_p10'], t))
PY
