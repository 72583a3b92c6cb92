#!/usr/bin/env bash
# Builds heurist-collect with an exported GEMM table model and verifies its picks on the GPU machine.
#   bash collect/scripts/device_verify_gemm.sh OUTDIR MODEL_DIR HELDOUT.csv.gz [extra heurist-collect verify options]
# MODEL_DIR holds heurist_model.{c,h} (heurist export --model M.h5 --format c --out MODEL_DIR, a model of the
# GEMM table); HELDOUT the held-out shapes' table (collect/scripts/split_table.py). Writes OUTDIR/verify.tsv (one row a
# shape, '#' summary lines), OUTDIR/verify.log and OUTDIR/env.txt. Smoke test: add --limit 3.
set -u -o pipefail
out=$1
model=$(cd "$2" && pwd)
table=$3
shift 3
build=${BUILD_DIR:-build-verify-gemm}
mkdir -p "$out"
if ! { cmake -S collect -B "$build" -DCMAKE_BUILD_TYPE=Release -DHEURIST_CUDA=ON -DHEURIST_COLLECT_MODEL_DIR="$model" \
         ${COLLECT_CMAKE_ARGS:-} && cmake --build "$build" -j"$(nproc)"; } > "$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    exit 1
fi
{
    nvidia-smi
    "$build/heurist-collect" gemm --describe
    lscpu | sed -n '1,20p'
    date -u
} > "$out/env.txt" 2>&1
"$build/heurist-collect" verify --table "$table" --out "$out/verify.tsv" "$@" 2>&1 | tee "$out/verify.log"
exit "${PIPESTATUS[0]}"
