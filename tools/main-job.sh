#!/usr/bin/env bash
# The main job: install, build, and compare the model families on the shipped data, the same 80/20 split
# for every family:
#   1. cuDNN convolution algorithm selection on an NVIDIA H100 (datasets/h100/, collected by heurist-collect),
#      beside cuDNN's own heuristic and the most frequent fastest algorithm -> out/compare-h100/
#   2. cuBLASLt GEMM configuration selection on the H100 (a benchmark table: every configuration scored from its
#      fields), beside cuBLASLt's own heuristic -> out/compare-gemm/
#   3. MIOpen solver selection on an AMD MI100 (datasets/miopen/gfx90878 find-db) -> out/compare/
# Each writes report.{md,json} and plots.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHEURIST_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target heurist heurist_api >/dev/null
MODELS=${HEURIST_MODELS:-gbdt,reformer,transformer}
# budgets that finish in minutes on 2 cores; the full-size runs are in docs/BENCHMARKS.md. On the H100 set the
# transformer needs 3 epochs: after 1 it still places a third of its picks on kernels never measured for the
# problem (top-1 0.30, forward 0.006); after 3, 0.5% (top-1 0.51, efficiency 0.959), for about 25 s more.
H100_CONFIG=${HEURIST_H100_CONFIG:-'{"gbdt":{"rounds":30,"log_every":10},"reformer":{"epochs":5},"transformer":{"epochs":3}}'}
CONFIG=${HEURIST_CONFIG:-'{"gbdt":{"rounds":15,"log_every":5},"reformer":{"epochs":10},"transformer":{"epochs":1}}'}

H100=datasets/h100/h100_cudnn_conv.fdb.txt.bz2
echo "== H100, cuDNN: heurist's families beside cuDNN's heuristic (vendor) and the most frequent fastest (frequent)"
./build/heurist data info --data "$H100" --quiet
./build/heurist compare --data "$H100" --task select --models "$MODELS" --split random:0.2:seed=0 \
  --config "$H100_CONFIG" --out out/compare-h100

GEMM=datasets/h100/h100_cublaslt_gemm.csv.gz
GEMM_CONFIG=${HEURIST_GEMM_CONFIG:-'{"gbdt":{"objective":"rank","rank_loss":"lambdarank","rounds":300,"learning_rate":0.1,"log_every":50},"reformer":{"mode":"pairs","epochs":15}}'}
echo "== H100, cuBLASLt: GEMM configurations scored from their fields, beside cuBLASLt's heuristic (vendor)"
./build/heurist data info --data "$GEMM" --quiet
./build/heurist compare --data "$GEMM" --task select --models gbdt,reformer --split random:0.2:seed=0 \
  --config "$GEMM_CONFIG" --out out/compare-gemm

MI100=datasets/miopen/gfx90878.HIP.fdb.txt.bz2
echo "== MI100, MIOpen: heurist's families beside the most frequent fastest solver"
./build/heurist data info --data "$MI100" --quiet
./build/heurist compare --data "$MI100" --task select --models "$MODELS" --split random:0.2:seed=0 \
  --config "$CONFIG" --out out/compare
