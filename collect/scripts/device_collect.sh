#!/usr/bin/env bash
# Builds heurist-collect and collects cuDNN convolution timings on the GPU machine within a time budget, on
# every GPU of the host (GPUS=N for N of them; GPUS=1 for one).
#   [GPUS=all|N] bash collect/scripts/device_collect.sh OUTDIR SECONDS PROBLEMS...
# Writes OUTDIR/NAME.fdb.txt (find-db lines; NAME is $COLLECT_NAME, h100_cudnn_conv by default),
# OUTDIR/NAME.heuristic.txt (cuDNN's heuristic ranking), OUTDIR/collect.log (which names each worker's GPU) and
# OUTDIR/env.txt (every GPU: name, UUID, bus id, NUMA node and local CPUs; driver, versions). Reruns with --resume after a CUDA error (the
# failed problem is skipped), until the problems are done or the budget is spent; run it again with the same
# OUTDIR files to continue.
set -u -o pipefail
out=$1
budget=$2
shift 2
start=$SECONDS
name=${COLLECT_NAME:-h100_cudnn_conv}
build=${BUILD_DIR:-/tmp/build-collect}
mkdir -p "$out"
gpus=${GPUS:-all}
{ nvidia-smi; nvidia-smi --query-gpu=index,name,uuid,pci.bus_id --format=csv; bash "$(dirname "$0")/gpu_numa.sh"
  nvcc --version; date -u; } > "$out/env.txt" 2>&1
if ! { cmake -S collect -B "$build" -DCMAKE_BUILD_TYPE=Release -DHEURIST_CUDA=ON ${COLLECT_CMAKE_ARGS:-} &&
       cmake --build "$build" -j"$(nproc)"; } > "$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    exit 1
fi
problems=$build/problems.txt
cat "$@" > "$problems"
rc=3
while [ $rc -eq 3 ]; do
    left=$((budget - (SECONDS - start)))
    [ $left -gt 20 ] || break
    "$build/heurist-collect" conv --problems "$problems" --out "$out/$name.fdb.txt" \
        --heuristic "$out/$name.heuristic.txt" --time-limit "$left" --resume --gpus "$gpus" ${COLLECT_ARGS:-} 2>&1 |
        tee -a "$out/collect.log"
    rc=${PIPESTATUS[0]}
done
exit $rc
