#!/usr/bin/env bash
# Writes the model fuzz target's seeds (fuzz/corpus/model/*.h5): one small model of each family kind trained on
# the shipped MIOpen data with tiny budgets. Run again whenever the model file or the feature set changes (the
# hostile tests load every seed with the current build).
#   bash fuzz/corpus/make_model_seeds.sh [BUILD]      (BUILD: a build folder with the heurist binary, default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/heurist
out=fuzz/corpus/model
fdb=datasets/miopen/gfx90878.HIP.fdb.txt.bz2
pdb=datasets/miopen/gfx906_60.db.bz2
"$bin" train --data $fdb --task select --model gbdt --config '{"rounds":3,"num_leaves":4}' --seed 0 --out $out/gbdt_small.h5 >/dev/null
"$bin" train --data $fdb --task select --model reformer --config '{"epochs":1,"hidden":4,"expand":4,"depth":1}' --seed 0 \
    --out $out/reformer_small.h5 >/dev/null
"$bin" train --data $pdb --task tune --solver ConvAsm1x1U --model seq2seq --config '{"epochs":1,"hidden":8,"embed":4}' --seed 0 \
    --out $out/seq2seq_small.h5 >/dev/null
ls -l $out
