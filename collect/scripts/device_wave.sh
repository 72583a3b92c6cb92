#!/usr/bin/env bash
# One collection wave on a GPU host, from the repository root: the out-of-pool convolution set of real networks
# (datasets/h100/networks), the real-shape GEMM pool (datasets/h100/gemm_real_shapes.txt) and the Triton matmul
# table, each on every GPU of the host within its time limit.
#   bash collect/scripts/device_wave.sh OUT            the wave: limits 170 + 140 + 150 s (about 8 minutes)
#   bash collect/scripts/device_wave.sh --smoke OUT    a few problems of each part on one GPU, under 2 minutes
# Builds heurist-collect once (build-collect/, kept between calls), writes OUT/env.txt (nvidia-smi, versions),
# OUT/build.log and per call and part OUT/{conv,gemm,triton}-STAMP.log (.gpu_G: one GPU's process). Every part resumes: calling the script again with the same OUT finishes what
# an earlier call left (heurist-collect --resume, triton_matmul.py's .done files), a finished part costs only its
# start-up. Limits can be changed with CONV_S, GEMM_S and TRITON_S (seconds).
#
# Multi-GPU: when heurist-collect accepts --gpus, one command a part with --gpus all (it merges its workers'
# files); otherwise one heurist-collect process per GPU (CUDA_VISIBLE_DEVICES) on every N-th line of the list,
# its files under OUT/<part>/gpu_G.*, joined at the end into OUT/<part>/<name>.* (line order of the parts, not of
# the list). Outputs:
#   OUT/networks/h100_networks.fdb.txt            find-db of the network set; .heuristic.txt (TF32 class / TENSOR_OP),
#                                                 .heuristic.strict.txt, .heuristic.conversion.txt, .heuristic.time.tsv
#   OUT/gemm_real/h100_cublaslt_gemm_real.csv.gz  cuBLASLt table of the real shapes, .schema.json, .caps.json
#   OUT/triton/h100_triton_mm.csv                 Triton table, .schema.json, .skipped.csv (triton_matmul.py)
# Exit status: 0 every part finished, 3 a part has problems left (call again), 1 a part failed.
set -u -o pipefail
smoke=0
if [ "${1:-}" = --smoke ]; then
    smoke=1
    shift
fi
if [ $# -ne 1 ]; then
    echo "usage: bash collect/scripts/device_wave.sh [--smoke] OUT" >&2
    exit 2
fi
out=$1
start=$SECONDS
build=${BUILD_DIR:-build-collect}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stamp=$(date -u +%Y%m%d-%H%M%S) # names this call's logs

if [ $smoke = 1 ]; then
    ngpu=1
    conv_s=${CONV_S:-30}; gemm_s=${GEMM_S:-30}; triton_s=${TRITON_S:-50}
else
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    [ "$ngpu" -ge 1 ] || ngpu=1
    conv_s=${CONV_S:-170}; gemm_s=${GEMM_S:-140}; triton_s=${TRITON_S:-150}
fi

{
    date -u
    nvidia-smi
    nvidia-smi -L
    nvidia-smi -q -d CLOCK | sed -n '1,40p'
    nvcc --version
    python3 -c 'import torch, triton; print("torch", torch.__version__, "CUDA", torch.version.cuda, "triton", triton.__version__)'
    git rev-parse HEAD 2>/dev/null
} > "$out/env.txt" 2>&1
echo "wave: $ngpu GPU(s), limits conv $conv_s s, gemm $gemm_s s, triton $triton_s s; smoke $smoke; OUT $out"

t0=$SECONDS
if ! { cmake -S collect -B "$build" -DCMAKE_BUILD_TYPE=Release -DHEURIST_CUDA=ON ${COLLECT_CMAKE_ARGS:-} &&
       cmake --build "$build" -j"$(nproc)"; } > "$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    exit 1
fi
bin=$(cd "$build" && pwd)/heurist-collect # BUILD_DIR relative or absolute
"$bin" gemm --describe >> "$out/env.txt" 2>&1
echo "built heurist-collect in $((SECONDS - t0)) s"
gpus_flag=0
usage=$("$bin" 2>&1) # the usage text: does this heurist-collect spread a list over GPUs itself?
case $usage in *--gpus*) gpus_flag=1 ;; esac

# Every ngpu-th line of a list (comments kept in each), for one process per GPU.
split_list() { # FILE DIR NAME
    for ((g = 0; g < ngpu; g++)); do
        awk -v n="$ngpu" -v g="$g" '/^#/ {print; next} NF {if (i++ % n == g) print}' "$1" > "$2/gpu_$g.$3"
    done
}

# Runs heurist-collect with the given arguments (no --time-limit) until DEADLINE (in $SECONDS), again after a
# CUDA error (status 3: the failed problem is skipped by --resume) while more than 15 s are left.
collect_loop() { # DEADLINE LOG GPU|"" args...
    local deadline=$1 log=$2 gpu=$3
    shift 3
    local rc=3 left
    while [ $rc = 3 ]; do
        left=$((deadline - SECONDS))
        [ $left -gt 15 ] || break
        if [ -n "$gpu" ]; then
            CUDA_VISIBLE_DEVICES=$gpu "$bin" "$@" --time-limit "$left" --resume >> "$log" 2>&1
        else
            "$bin" "$@" --time-limit "$left" --resume >> "$log" 2>&1
        fi
        rc=$?
    done
    return $rc
}

# Runs heurist-collect CMD over LIST for SEC seconds on every GPU: one command with --gpus, or one process a
# GPU on every ngpu-th line, its output OUTNAME with the part's name prefix replaced by gpu_G. In the options
# after OUTFLAG, @GPU@ stands for the GPU's index. Status: 1 if a process failed, else 3 if one has work left.
status=0
run_part() { # LOG CMD LIST SEC OUTNAME LISTFLAG [options...]
    local log=$1 cmd=$2 list=$3 sec=$4 name=$5 flag=$6
    shift 6
    local dir deadline=$((SECONDS + sec))
    dir=$(dirname "$name")
    mkdir -p "$dir"
    if [ $gpus_flag = 1 ] || [ "$ngpu" = 1 ]; then
        local g=()
        [ $gpus_flag = 1 ] && g=(--gpus "$ngpu")
        local opts=()
        for o in "$@"; do opts+=("${o//@GPU@/0}"); done
        collect_loop $deadline "$log" "" "$cmd" "$flag" "$list" --out "$name" "${g[@]}" "${opts[@]}"
        return $?
    fi
    split_list "$list" "$dir" list.txt
    local pids=() gg rc=0 suffix
    suffix=$(basename "$name" | sed 's/^[^.]*\.//')
    for ((gg = 0; gg < ngpu; gg++)); do
        local opts=()
        for o in "$@"; do opts+=("${o//@GPU@/$gg}"); done
        collect_loop $deadline "$log.gpu_$gg" $gg "$cmd" "$flag" "$dir/gpu_$gg.list.txt" --out "$dir/gpu_$gg.$suffix" \
            "${opts[@]}" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p"
        local r=$?
        if [ $r != 0 ] && [ $rc != 1 ]; then rc=$r; fi
    done
    return $rc
}

note() { # PART RC
    case $2 in
        0) echo "$1: finished" ;;
        3) echo "$1: problems left (call again to continue)"; [ $status = 1 ] || status=3 ;;
        *) echo "$1: failed with status $2 (see its log)"; status=1 ;;
    esac
}

# ---- 1. convolutions of real networks ----
t0=$SECONDS
conv_dir=$out/networks
mkdir -p "$conv_dir"
keys=$conv_dir/keys.txt
if [ $smoke = 1 ]; then
    head -n 18 datasets/h100/networks/chunk_000.txt > "$keys"
else
    cat datasets/h100/networks/chunk_*.txt > "$keys"
fi
if [ $gpus_flag = 1 ] || [ "$ngpu" = 1 ]; then
    side=$conv_dir/h100_networks.heuristic.txt
else
    side=$conv_dir/gpu_@GPU@.heuristic.txt
fi
run_part "$out/conv-$stamp.log" conv "$keys" "$conv_s" "$conv_dir/h100_networks.fdb.txt" --problems --heuristic "$side"
rc=$?
if [ $gpus_flag = 0 ] && [ "$ngpu" -gt 1 ]; then
    # join the GPUs' files (each in its own key order)
    cat "$conv_dir"/gpu_*.fdb.txt > "$conv_dir/h100_networks.fdb.txt" 2>/dev/null
    for s in heuristic.txt heuristic.strict.txt heuristic.conversion.txt; do
        cat "$conv_dir"/gpu_*.$s > "$conv_dir/h100_networks.$s" 2>/dev/null
    done
    awk 'FNR > 1 || NR == 1' "$conv_dir"/gpu_*.heuristic.time.tsv > "$conv_dir/h100_networks.heuristic.time.tsv" 2>/dev/null
    cat "$conv_dir"/gpu_*.fdb.txt.failed > "$conv_dir/h100_networks.fdb.txt.failed" 2>/dev/null
fi
n_done=$(wc -l < "$conv_dir/h100_networks.fdb.txt" 2>/dev/null || echo 0)
# conv ends with status 0 when its time limit stops it: its log says so
[ $rc = 0 ] && cat "$out/conv-$stamp.log"* 2>/dev/null | grep -q 'stopped by --time-limit' && rc=3
note "conv networks ($n_done of $(grep -c . "$keys") problems written, $((SECONDS - t0)) s)" $rc

# ---- 2. cuBLASLt GEMMs of real shapes ----
t0=$SECONDS
gemm_dir=$out/gemm_real
mkdir -p "$gemm_dir"
shapes=$gemm_dir/shapes.txt
if [ $smoke = 1 ]; then
    grep -v '^#' datasets/h100/gemm_real_shapes.txt | head -n 3 > "$shapes"
else
    cp datasets/h100/gemm_real_shapes.txt "$shapes"
fi
table=$gemm_dir/h100_cublaslt_gemm_real.csv.gz
run_part "$out/gemm-$stamp.log" gemm "$shapes" "$gemm_s" "$table" --shapes
rc=$?
if [ $gpus_flag = 0 ] && [ "$ngpu" -gt 1 ]; then
    # one header row, then every GPU's rows; the schema and capabilities of GPU 0
    {
        zcat "$gemm_dir/gpu_0.csv.gz" | head -n 1
        for f in "$gemm_dir"/gpu_*.csv.gz; do zcat "$f" | tail -n +2; done
    } | gzip > "$table.tmp" && mv "$table.tmp" "$table"
    cp "$gemm_dir/gpu_0.schema.json" "${table%.csv.gz}.schema.json" 2>/dev/null
    cp "$gemm_dir/gpu_0.caps.json" "${table%.csv.gz}.caps.json" 2>/dev/null
    cat "$gemm_dir"/gpu_*.csv.gz.failed > "$table.failed" 2>/dev/null
fi
n_done=$(zcat "$table" 2>/dev/null | tail -n +2 | cut -d, -f1-6 | uniq | wc -l)
note "gemm real shapes ($n_done of $(grep -vc '^#' "$shapes") shapes, $((SECONDS - t0)) s)" $rc

# ---- 3. Triton matmul table ----
t0=$SECONDS
tri_dir=$out/triton
mkdir -p "$tri_dir"
if [ $smoke = 1 ]; then
    python3 collect/scripts/triton_matmul.py --out "$tri_dir/h100_triton_mm" --count 2 --configs 6 --gpus 1 \
        --compile-procs 6 --time-limit "$triton_s" > "$out/triton-$stamp.log" 2>&1
else
    python3 collect/scripts/triton_matmul.py --out "$tri_dir/h100_triton_mm" --time-limit "$triton_s" \
        > "$out/triton-$stamp.log" 2>&1
fi
rc=$?
tail -n 3 "$out/triton-$stamp.log"
note "triton matmul ($((SECONDS - t0)) s)" $rc

echo "wave: $((SECONDS - start)) s in all, status $status; logs in $out"
exit $status
