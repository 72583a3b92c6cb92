#!/usr/bin/env bash
# The figures of docs/BENCHMARKS.md "H200: batched and FP8 GEMMs of real workloads": on the H200 table of the
# batched and FP8 real shapes (datasets/h200/h200_cublaslt_gemm_batched.csv.gz, gemm_real_batched_shapes.txt),
#   summary  cuBLASLt's first pick against the best of its own list, per class (attention, moe_batched, fp8)
#   pool     the H200-pool models (gbdt LambdaRank with and without vendor_feature, trained as
#            experiments/gemm_real_models.sh trains them, on every shape of
#            datasets/h200/h200_cublaslt_gemm_real.noise.csv.gz: single GEMMs in bf16/fp16/fp32/tf32, no batch and
#            no FP8), exported and ranking the new table's candidates offline: an out-of-source figure
#   compare  gbdt LambdaRank with vendor_feature in a 5-fold GroupKFold by family of the new table itself
#            (in pool, out of family)
#   bash experiments/gemm_batched_fp8.sh STAGE...      (from the repository root, after a Release build)
# Writes under $OUT (default out/gemm_batched); THREADS (default 2).
set -eu -o pipefail
T=datasets/h200/h200_cublaslt_gemm_batched.csv.gz
SHAPES=datasets/h200/gemm_real_batched_shapes.txt
POOL=datasets/h200/h200_cublaslt_gemm_real.noise.csv.gz
OUT=${OUT:-out/gemm_batched}
THREADS=${THREADS:-2}
H=./build/heurist
PY=${PY:-/usr/bin/python3}
CONFIG='{"objective":"rank","rank_loss":"lambdarank","rounds":300,"learning_rate":0.1,"tie_ratio":1}'
mkdir -p "$OUT"

# schema NAME SRC [vendor_feature]: SRC's schema without its group role (the noise table has no family column)
schema() {
    $PY -c 'import json, sys
s = json.load(open(sys.argv[1])); s.pop("group", None)
if len(sys.argv) > 3: s["vendor_feature"] = True
open(sys.argv[2], "w").write(json.dumps(s, indent=1) + "\n")' "$2" "$OUT/$1.schema.json" ${3:+vf}
}

for stage in "$@"; do
    case $stage in
    summary)
        $PY collect/scripts/gemm_summary.py "$T" --shapes "$SHAPES"
        ;;
    pool)
        schema pool_vf datasets/h200/h200_cublaslt_gemm_real.schema.json vf
        schema pool_plain datasets/h200/h200_cublaslt_gemm_real.schema.json
        for m in vf plain; do
            nice -n 5 $H train --data "$POOL" --schema "$OUT/pool_$m.schema.json" --task select --model gbdt \
                --threads "$THREADS" --seed 0 --split none --valid-fraction 0.1 --config "$CONFIG" \
                --out "$OUT/pool_$m.h5" --quiet
            rm -rf "$OUT/rt_pool_$m"
            $H export --model "$OUT/pool_$m.h5" --format c --out "$OUT/rt_pool_$m" --prefix "pool_$m"
            $PY collect/scripts/gemm_offline.py score --runtime "$OUT/rt_pool_$m" --table "$T" --out "$OUT/pool_$m.tsv"
            $PY collect/scripts/gemm_offline.py report "$OUT/pool_$m.tsv" --tables "$T" --classes "$SHAPES"
        done
        ;;
    compare)
        $H compare --data "$T" --task select --models gbdt --folds 5 --seed 0 --threads "$THREADS" \
            --schema datasets/h200/h200_cublaslt_gemm_batched.vendor_feature.schema.json \
            --config "{\"gbdt\":$CONFIG}" --out "$OUT/compare_vf"
        ;;
    *)
        echo "unknown stage $stage (summary, pool, compare)" >&2
        exit 2
        ;;
    esac
done
