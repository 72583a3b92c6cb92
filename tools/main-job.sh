#!/usr/bin/env bash
# The main job: install, build, and compare the model families on the shipped MI100 find-db
# (same 80/20 split for every family), writing out/compare/report.{md,json} and plots.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHEURIST_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target heurist >/dev/null
DATA=datasets/miopen/gfx90878.HIP.fdb.txt.bz2
MODELS=${HEURIST_MODELS:-gbdt,reformer,transformer}
# a budget that finishes in minutes on 2 cores; the full-size runs are in docs/BENCHMARKS.md
CONFIG=${HEURIST_CONFIG:-'{"gbdt":{"rounds":15,"log_every":5},"reformer":{"epochs":10},"transformer":{"epochs":1}}'}
./build/heurist data info --data "$DATA" --quiet
./build/heurist compare --data "$DATA" --task select --models "$MODELS" --split random:0.2:seed=0 \
  --config "$CONFIG" --out out/compare
