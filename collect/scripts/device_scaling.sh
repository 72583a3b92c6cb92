#!/usr/bin/env bash
# Collection throughput on 1, 2 and all GPUs of the host (heurist-collect --gpus, no MPI needed), for the same
# convolution problem list and the same GEMM shape list, and a check that each merged file lists the same
# problems in the same order as the one-GPU file. Run from the repository root on the GPU machine:
#   bash collect/scripts/device_scaling.sh OUTDIR KEYS...
# KEYS: convolution key files (their first CONV_N keys are used, read across the files in order). Environment
# (defaults):
#   CONV_N=900        convolution problems per run (0: no conv runs)
#   GEMM_N=400        GEMM shapes per run, the first of GEMM_SHAPES (0: no gemm runs)
#   GEMM_SHAPES=datasets/h100/gemm_shapes.txt
#   GPU_COUNTS="1 2 all"   the runs, in order ("1 all": one GPU and every GPU); the first is the baseline of
#                     the speed-ups
#   RUN_LIMIT=300     --time-limit of each run, seconds (a stopped run is marked "stopped" in the summary)
#   NO_BIND_TOO=0     1: each run of several GPUs is made twice, bound (each worker on its GPU's NUMA node, the
#                     default) and then with --no-bind
#   UNBOUND_BEFORE_S  with NO_BIND_TOO=1, start an unbound run only this many seconds after the script's start
#                     at the latest (unset: always), so that a command with a hard limit keeps its bound runs
#   BUILD_DIR=/tmp/build-collect, COLLECT_CMAKE_ARGS, CONV_ARGS, GEMM_ARGS (extra heurist-collect options)
#   COLLECT_BIN       a built heurist-collect to use instead of building one (with HEURIST_COLLECT_FAKE=N, the
#                     fake timer's N devices stand for the GPUs: a dry run of this script without a GPU)
# Sizes: one H200 measures about 17 conv problems/s and 6 GEMM shapes/s (chunk_000.txt, gemm_shapes.txt), so
# GPU_COUNTS="1 all" CONV_N=2000 GEMM_N=500 on a 4-GPU host measures for about 4 minutes (conv 115 + 32 s,
# gemm 82 + 23 s), plus the build (1-2 minutes, none with COLLECT_BIN); two chunk files give 3000 keys. One
# H100 measured chunk_004 + chunk_011 (3000 keys) at 17.1 problems/s: 176 s alone, 47 s on four.
# Writes OUTDIR/scaling.tsv, the runs' logs and outputs (with each run's GPU table, OUT.gpu.tsv: which worker
# and GPU measured each problem, in how many seconds), OUTDIR/env.txt (every GPU: index, name, UUID, bus id,
# NUMA node and local CPUs) and OUTDIR/build.log; prints the table. scaling.tsv's columns: kind, gpus, bound
# (B/W: B of the W workers bound to their GPU's CPUs, from their log lines; none where the host has one NUMA
# node or no sysfs entry, see env.txt; no-bind: --no-bind), problems (in the merged file),
# wall_s and per_s (the command's wall time and problems / wall: the headline), speedup (per_s against the
# first run's), steady_per_s (problems / the longest measuring time of a worker: the throughput without the
# start-up, the tail and the merge) and steady_speedup, plan_s (reading the list, the order), startup_s (the
# slowest worker's, from its fork to its first problem: CUDA context, library handles, buffers), measure_s (the
# longest measuring), measure_sum_s (the workers' measuring times added: against the one-GPU run's, what
# measuring on several GPUs costs in all), ended_s (when the last worker had ended, from the start), merge_s,
# same_order (the merged file lists the baseline's problems in its order) and stopped.
set -u -o pipefail
out=$1
shift
conv_n=${CONV_N:-900}
gemm_n=${GEMM_N:-400}
shapes=${GEMM_SHAPES:-datasets/h100/gemm_shapes.txt}
counts=${GPU_COUNTS:-1 2 all}
limit=${RUN_LIMIT:-300}
build=${BUILD_DIR:-/tmp/build-collect}
mkdir -p "$out"
t_script=$(date +%s)
{
    nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version --format=csv
    bash "$(dirname "$0")/gpu_numa.sh"
    nvcc --version | tail -2
    date -u
} > "$out/env.txt" 2>&1
bin=${COLLECT_BIN:-$build/heurist-collect}
if [ -z "${COLLECT_BIN:-}" ] &&
   ! { cmake -S collect -B "$build" -DCMAKE_BUILD_TYPE=Release -DHEURIST_CUDA=ON ${COLLECT_CMAKE_ARGS:-} &&
       cmake --build "$build" -j"$(nproc)" --target heurist-collect; } > "$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    exit 1
fi
all=${HEURIST_COLLECT_FAKE:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "$all" -ge 1 ] || { echo "device_scaling: no GPU listed by nvidia-smi -L"; exit 1; }

# the problem lists: keys and shapes (comments and blank lines dropped)
if [ "$conv_n" -gt 0 ]; then
    [ $# -gt 0 ] || { echo "device_scaling: CONV_N=$conv_n but no KEYS file given"; exit 2; }
    cat "$@" | sed -e 's/=.*//' -e '/^#/d' -e '/^[[:space:]]*$/d' | head -n "$conv_n" > "$out/conv_keys.txt"
    got=$(wc -l < "$out/conv_keys.txt")
    [ "$got" -eq "$conv_n" ] || echo "device_scaling: CONV_N=$conv_n, the KEYS files hold $got keys: $got used"
fi
if [ "$gemm_n" -gt 0 ]; then
    sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$shapes" | head -n "$gemm_n" > "$out/gemm_shapes.txt"
    got=$(wc -l < "$out/gemm_shapes.txt")
    [ "$got" -eq "$gemm_n" ] || echo "device_scaling: GEMM_N=$gemm_n, $shapes holds $got shapes: $got used"
fi

# the runs' GPU counts: "all" resolved, repeats dropped
runs=""
for c in $counts; do
    [ "$c" = all ] && c=$all
    case $c in ''|*[!0-9]*) echo "device_scaling: GPU_COUNTS: '$c' is neither a count nor all"; exit 2 ;; esac
    [ "$c" -ge 1 ] && [ "$c" -le "$all" ] || { echo "device_scaling: $c GPUs asked, $all on the host: skipped"; continue; }
    case " $runs " in *" $c "*) ;; *) runs="$runs $c" ;; esac
done
[ -n "$runs" ] || { echo "device_scaling: no run left of GPU_COUNTS='$counts'"; exit 2; }

# the keys of an output, in order: find-db keys, or the table's shapes (first six columns, one per shape)
keys_of() {
    case $1 in
        *.gz) zcat "$1" | tail -n +2 | cut -d, -f1-6 | uniq ;;
        *) cut -d= -f1 "$1" ;;
    esac
}

rm -f "$out/gpus.txt"
printf 'kind\tgpus\tbound\tproblems\twall_s\tper_s\tspeedup\tsteady_per_s\tsteady_speedup\tplan_s\tstartup_s\tmeasure_s\tmeasure_sum_s\tended_s\tmerge_s\tsame_order\tstopped\n' \
    > "$out/scaling.tsv"
# a figure of the run's "timings:" line (the merger's): "plan", "start-up", "measuring", "closing", "workers
# ended at" or "merge"; "-" when absent
timing() {
    sed -n -e "s/^timings: \(.*[(,] *\)\{0,1\}$2 \([0-9.]*\) s.*/\2/p" "$1" | tail -1 | grep . || echo -
}
# the workers' measuring times added ("worker times: ..., measuring M s")
measure_sum() {
    sed -n 's/.*worker times: .*measuring \([0-9.]*\) s.*/\1/p' "$1" | awk '{ s += $1 } END { printf "%.2f", s }'
}
# the runs: each GPU count, and with NO_BIND_TOO=1 each count above one again unbound ("4u")
plan=""
for g in $runs; do
    plan="$plan $g"
    [ "${NO_BIND_TOO:-0}" = 1 ] && [ "$g" -gt 1 ] && plan="$plan ${g}u"
done
run_kind() { # kind: conv or gemm
    local kind=$1 base="" n wall t0 per speed same stopped rc startup measure merge steady steady_speed base_steady=""
    local plan_s msum ended bind_arg bound g
    for run in $plan; do
        g=${run%u}
        bind_arg=""
        if [ "$run" != "$g" ]; then
            bind_arg=--no-bind
            if [ -n "${UNBOUND_BEFORE_S:-}" ] && [ $(( $(date +%s) - t_script )) -gt "$UNBOUND_BEFORE_S" ]; then
                echo "device_scaling: $kind on $g GPUs unbound: skipped, past UNBOUND_BEFORE_S=$UNBOUND_BEFORE_S s"
                continue
            fi
        fi
        local name=$out/${kind}_g$run
        rm -f "$name".* 2>/dev/null
        t0=$(date +%s%N)
        if [ "$kind" = conv ]; then
            "$bin" conv --problems "$out/conv_keys.txt" --out "$name.fdb.txt" --heuristic "$name.heuristic.txt" \
                --gpus "$g" --time-limit "$limit" $bind_arg ${CONV_ARGS:-} > "$name.log" 2>&1
            rc=$?
            file=$name.fdb.txt
        else
            "$bin" gemm --shapes "$out/gemm_shapes.txt" --out "$name.csv.gz" --gpus "$g" --time-limit "$limit" \
                $bind_arg ${GEMM_ARGS:-} > "$name.log" 2>&1
            rc=$?
            file=$name.csv.gz
        fi
        wall=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
        [ -f "$file" ] || { echo "device_scaling: $kind on $g GPUs wrote no output (exit $rc):"; tail -5 "$name.log"; continue; }
        keys_of "$file" > "$name.keys"
        n=$(wc -l < "$name.keys")
        per=$(awk -v n="$n" -v w="$wall" 'BEGIN { printf "%.4f", n / w }')
        stopped=no
        grep -q "stopped by --time-limit" "$name.log" && stopped=yes
        if [ $rc -ne 0 ] && ! { [ $rc -eq 3 ] && [ $stopped = yes ]; }; then
            stopped="exit $rc"
            tail -3 "$name.log"
        fi
        if [ -z "$base" ]; then
            base=$name
            base_per=$per
            same=baseline
        else
            # the same problems in the same order: on the keys both runs finished when one was stopped
            if [ "$stopped" = no ] && cmp -s "$base.keys" "$name.keys"; then
                same=yes
            elif awk 'NR == FNR { want[$0] = 1; next } ($0 in want)' "$name.keys" "$base.keys" > "$name.common" &&
                 awk 'NR == FNR { want[$0] = 1; next } ($0 in want)' "$base.keys" "$name.keys" | cmp -s - "$name.common"; then
                same="yes (on $(wc -l < "$name.common") common)"
            else
                same=NO
            fi
        fi
        speed=$(awk -v a="$per" -v b="$base_per" 'BEGIN { printf "%.2f", a / b }')
        bound=no-bind
        [ -z "$bind_arg" ] && bound="$(grep -c '): bound to NUMA node' "$name.log")/$g"
        plan_s=$(timing "$name.log" plan)
        startup=$(timing "$name.log" start-up)
        measure=$(timing "$name.log" measuring)
        ended=$(timing "$name.log" "workers ended at")
        merge=$(timing "$name.log" merge)
        msum=$(measure_sum "$name.log")
        steady=$(awk -v n="$n" -v m="$measure" 'BEGIN { if (m + 0 > 0) printf "%.2f", n / m; else print "-" }')
        [ -z "$base_steady" ] && base_steady=$steady
        steady_speed=$(awk -v a="$steady" -v b="$base_steady" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
        printf '%s\t%d\t%s\t%d\t%.1f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$g" "$bound" "$n" \
            "$wall" "$per" "$speed" "$steady" "$steady_speed" "$plan_s" "$startup" "$measure" "$msum" "$ended" "$merge" \
            "$same" "$stopped" >> "$out/scaling.tsv"
        grep -h -E "^(\[worker [0-9]+/[0-9]+\] )?(host .*, GPU [0-9]+:|fake device|GPU [0-9]+ \(bus )" "$name.log" >> "$out/gpus.txt"
    done
}
[ "$conv_n" -gt 0 ] && run_kind conv
[ "$gemm_n" -gt 0 ] && run_kind gemm
# every GPU of every run's workers (host, name, bus id, UUID), once each
sed -E 's/^\[worker [0-9]+\/[0-9]+\] //' "$out/gpus.txt" 2>/dev/null | sort -u >> "$out/env.txt"
if command -v column >/dev/null; then column -t -s $'\t' "$out/scaling.tsv"; else cat "$out/scaling.tsv"; fi
