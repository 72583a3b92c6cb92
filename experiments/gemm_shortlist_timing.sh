#!/usr/bin/env bash
# Issue #35's learned GEMM shortlist on the GPU machine: the GEMM table models trained on the H100 and on the H200
# real-shape pools (experiments/gemm_real_models.sh, vendor_feature, tie 1.03; a guarded 300-round model beside
# them) verified on the 345 held-out shapes of the families llama3, mistral and resnet50, with K = 3 and 2, with
# and without --shortlist-fill, cuBLASLt's list and the shortlists timed interleaved and carefully (heurist-collect
# verify --shortlist-timing); and, first, the guarded runtimes' decision time on this host's CPU
# (bench/towers_decision.sh, mode vendor).
#   bash experiments/gemm_shortlist_timing.sh OUT DIR
# DIR (made on the CPU machine: docs/BENCHMARKS.md, "Shortlists timed interleaved") holds
#   R.test.csv.gz, R.test.schema.json   the held-out shapes' table (heurist data split) and the vendor_feature
#                                       schema beside it (the bench reads each candidate's place in cuBLASLt's list)
#   rt_h100_vf103, rt_h200_vf103, rt_vf_guard   the runtimes verify is built with (prefixes distinct)
#   rt_guard, rt_fast                   the guarded 300-round and fast runtimes, exported with --prefix heurist_model
# Environment: VERIFY_S, verify's budget in seconds (default 150); the jobs run most wanted first (K = 3 before
# K = 2, --shortlist-fill first, interleaved before careful), so a short budget leaves the last ones out or
# partial (device_verify.sh resumes them when called again with the same OUT).
# Writes OUT/jobs.txt, OUT/decision.txt (lscpu, then two passes of each runtime's bench line) and OUT/v
# (device_verify.sh: per job NAME.tsv, NAME.log, NAME.summary.txt; env.txt, build.log).
set -u -o pipefail
if [ $# -ne 2 ]; then
    echo "usage: bash experiments/gemm_shortlist_timing.sh OUT DIR" >&2
    exit 2
fi
out=$1
dir=$2
mkdir -p "$out/v"
table=$dir/R.test.csv.gz
common="--table $table --shapes datasets/h100/gemm_real_shapes.txt --noise-ratio 1.02"
for k in 3 2; do
    for fill in fill plain; do
        for how in interleaved careful; do
            opt=
            [ "$fill" = fill ] && opt=--shortlist-fill
            secs=40
            [ "$how" = interleaved ] && secs=25
            echo "k$k${fill}_$how $secs $common --top-k $k $opt --shortlist-timing $how"
        done
    done
done > "$out/jobs.txt"
models="$dir/rt_h100_vf103 $dir/rt_h200_vf103 $dir/rt_vf_guard"
# the build alone (no job), so that the bench below has the CPU to itself
# shellcheck disable=SC2086 # models are whitespace-separated on purpose
BUDGET_S=1 bash collect/scripts/device_verify.sh "$out/v" /dev/null $models || exit 1
{
    lscpu | sed -n '1,20p'
    for pass in 1 2; do
        for rt in guard fast; do
            echo "$rt, pass $pass: $(bench/towers_decision.sh "$dir/rt_$rt" "$table" "-O2 -march=native" vendor)"
        done
    done
} > "$out/decision.txt" 2>&1
# shellcheck disable=SC2086
BUDGET_S=${VERIFY_S:-150} bash collect/scripts/device_verify.sh "$out/v" "$out/jobs.txt" $models
