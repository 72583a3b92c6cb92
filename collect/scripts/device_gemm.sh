#!/usr/bin/env bash
# Builds heurist-collect and times cuBLASLt GEMM configurations on the GPU machine within a time budget, on
# every GPU of the host (GPUS=N for N of them; GPUS=1 for one).
#   [GPUS=all|N] [GEMM_NAME=NAME] bash collect/scripts/device_gemm.sh OUTDIR SECONDS SHAPES [extra heurist-collect gemm options]
# Writes OUTDIR/NAME.csv.gz (the table; NAME is $GEMM_NAME, h100_cublaslt_gemm by default: name the card that ran
# it), its .schema.json and .caps.json, OUTDIR/gemm.log (which
# names each worker's GPU) and OUTDIR/env.txt (every GPU: name, UUID, bus id, NUMA node, local CPUs; driver, nvcc, cuBLASLt version).
# Reruns with --resume after a CUDA error (the failed shape is skipped) until the shapes are done or the budget
# is spent; run it again with the same OUTDIR to continue. Smoke test:
#   GPUS=1 bash collect/scripts/device_gemm.sh OUTDIR 120 SHAPES --limit 3 --verbose
set -u -o pipefail
out=$1
budget=$2
shapes=$3
shift 3
start=$SECONDS
build=${BUILD_DIR:-build-collect}
mkdir -p "$out"
if ! { cmake -S collect -B "$build" -DCMAKE_BUILD_TYPE=Release -DHEURIST_CUDA=ON ${COLLECT_CMAKE_ARGS:-} &&
       cmake --build "$build" -j"$(nproc)"; } > "$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    exit 1
fi
gpus=${GPUS:-all}
{
    nvidia-smi
    nvidia-smi --query-gpu=index,name,uuid,pci.bus_id --format=csv
    bash "$(dirname "$0")/gpu_numa.sh"
    nvidia-smi -q -d CLOCK | sed -n '1,40p'
    nvcc --version
    "$build/heurist-collect" gemm --describe
    ls -l "$(ldconfig -p | awk '/libcublasLt.so /{print $NF; exit}')" 2>/dev/null
    date -u
} > "$out/env.txt" 2>&1
table=$out/${GEMM_NAME:-h100_cublaslt_gemm}.csv.gz
rc=3
while [ $rc -eq 3 ]; do
    left=$((budget - (SECONDS - start)))
    [ $left -gt 20 ] || break
    "$build/heurist-collect" gemm --shapes "$shapes" --out "$table" --time-limit "$left" --resume --gpus "$gpus" "$@" 2>&1 |
        tee -a "$out/gemm.log"
    rc=${PIPESTATUS[0]}
    # --limit stops with shapes left on purpose: one round only
    case " $* " in *" --limit "*) break ;; esac
done
exit $rc
