#!/usr/bin/env bash
# Runs heurist-collect's GPU code paths under the sanitizers on the GPU machine: AddressSanitizer with UBSan over
# the host code, then compute-sanitizer's memcheck over the device's accesses and allocations.
#   bash collect/scripts/device_sanitize.sh OUT MODEL_DIR...
# MODEL_DIR: folders each holding one runtime of `heurist export --format c --prefix P` (P distinct), as
# device_verify.sh takes them: selection models of a find-db add the convolution verify commands, table and tune
# models of the GEMM table the GEMM ones (a tune model the --tune-candidates list:2 command).
#
# (a) An ASan + UBSan build (BUILD_DIR, build-sanitize: RelWithDebInfo, -DHEURIST_SANITIZE=ON, recoverable, so
#     each command reports every finding) runs: `gemm` on 8 shapes (fp16, bf16, fp32, tf32, fp8 TN, fp8 NN that
#     cuBLASLt refuses, odd sizes, one strided batch of 64); `conv` on 9 problems (F, B and W, FP32, FP16 and BF16,
#     3-D, grouped, 3-D depthwise; a forked worker, --gpus 1); `verify` of 7 network problems (`--top-k 3
#     --shortlist-timing batch --find-cost`), of 3 with `--shortlist-retime-within 1.5` and of 3 with
#     `--shortlist-timing once`; `verify` of 8 GEMM shapes of GEMM_TABLE, two of each data type (`--top-k 3
#     --shortlist-timing interleaved`), of the same
#     with the tune models deciding within cuBLASLt's first two entries (`--tune-candidates list:2`, interleaved),
#     and of 6 strided batches of BATCHED_TABLE (`--top-k 3`, careful timing); `summarize` of every report.
#     ASAN_OPTIONS=protect_shadow_gap=0 (the CUDA driver maps memory where ASan's shadow gap would be),
#     detect_stack_use_after_return=1 and leak detection on, with the named, commented entries of lsan_cuda.supp
#     (leaks traced to a vendor library: cuDNN's); each LeakSanitizer report lists the suppressions it used.
#     Reports go to OUT/asan/ (ASan's and UBSan's log_path).
# (b) A release build (BUILD_DIR-release, -lineinfo) runs the same commands scaled down (memcheck is slow: 4 GEMM
#     shapes of 4 + 4 candidates, 3 conv problems, 2 verify problems, 2 GEMM shapes and 1 batch, one repeat)
#     under `compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 --report-api-errors no` with
#     HEURIST_COLLECT_MEMCHECK=1 (collect/timer.h: tensors, operands and convolution workspaces at their exact
#     sizes, so that an access past a tensor's end leaves its allocation; the device reset when a timer closes, so
#     that the leak check sees what is still allocated). First the controls (sanitize_control.cu): a planted
#     out-of-bounds write and a planted leak, which memcheck must report.
# Every command runs with --time-limit and under `timeout`, its limit its own or what is left of BUDGET_S (default
# 300) s, the ASan commands within half of what the builds left; its output in
# OUT/logs/NAME.log and its outputs in OUT/outputs/. OUT/summary.tsv: one line a command (tool, exit status, seconds,
# findings); OUT/env.txt: the GPU, the toolkit, compute-sanitizer's path and version, the models.
# Exit status: 0 every command ran and no sanitizer reported; 9 a sanitizer reported (OUT/asan/*, or a memcheck
# log's ERROR SUMMARY); 1 a failure (a build, a command's own error, a control memcheck did not catch); 3 commands
# left undone by the budget. OUT.tgz holds OUT.
set -u -o pipefail
if [ $# -lt 2 ]; then
    echo "usage: bash collect/scripts/device_sanitize.sh OUT MODEL_DIR..." >&2
    exit 2
fi
out=$1
shift
start=$SECONDS
budget=${BUDGET_S:-300}
build=${BUILD_DIR:-build-sanitize}
gemm_table=${GEMM_TABLE:-datasets/h200/h200_cublaslt_gemm_real.csv.gz}
batched_table=${BATCHED_TABLE:-datasets/h200/h200_cublaslt_gemm_batched.csv.gz}
conv_list=datasets/h100/verify/h100_networks_oos_list.txt
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/logs" "$out/outputs" "$out/asan" "$out/inputs"
out=$(cd "$out" && pwd)
models=""
n_select=0
n_table=0
n_tune=0
for d in "$@"; do
    [ -d "$d" ] || { echo "device_sanitize.sh: $d: not a folder" >&2; exit 2; }
    models="$models${models:+;}$(cd "$d" && pwd)"
    grep -qs '_select_key(' "$d"/*.h && n_select=$((n_select + 1))
    grep -qs '_rank(' "$d"/*.h && n_table=$((n_table + 1))
    grep -qs '_tune(' "$d"/*.h && n_tune=$((n_tune + 1))
done
printf 'name\ttool\tstatus\tseconds\tfindings\n' > "$out/summary.tsv"

# compute-sanitizer: on the PATH, beside nvcc, or in the toolkit's own folder
csan=$(command -v compute-sanitizer || true)
for c in "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/compute-sanitizer" \
         /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [ -z "$csan" ] && [ -x "$c" ] && csan=$c
done
{
    date -u
    nvidia-smi
    nvcc --version
    echo "compute-sanitizer: ${csan:-not found}"
    [ -n "$csan" ] && "$csan" --version
    git rev-parse HEAD 2>/dev/null
    echo "models: $models ($n_select selection, $n_table table, $n_tune tune)"
    for d in "$@"; do ls -l "$d"; done
} > "$out/env.txt" 2>&1

# the two builds, side by side; COLLECT_CMAKE_ARGS: more cmake arguments, split at spaces
read -r -a cmake_extra <<< "${COLLECT_CMAKE_ARGS:-}"
jobs=$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))
t0=$SECONDS
( cmake -S collect -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEURIST_SANITIZE=ON -DHEURIST_CUDA=ON \
      -DHEURIST_COLLECT_MODEL_DIR="$models" ${cmake_extra[@]+"${cmake_extra[@]}"} &&
  cmake --build "$build" -j"$jobs" ) \
    > "$out/logs/build-asan.log" 2>&1 &
asan_pid=$!
( cmake -S collect -B "$build-release" -DCMAKE_BUILD_TYPE=Release -DHEURIST_CUDA=ON -DCMAKE_CUDA_FLAGS=-lineinfo \
      -DCMAKE_EXE_LINKER_FLAGS=-rdynamic -DHEURIST_COLLECT_MODEL_DIR="$models" ${cmake_extra[@]+"${cmake_extra[@]}"} &&
  cmake --build "$build-release" -j"$jobs" &&
  nvcc -arch=native -lineinfo -o "$build-release/sanitize_control" "$here/sanitize_control.cu" ) \
    > "$out/logs/build-release.log" 2>&1 &
release_pid=$!
wait $asan_pid
asan_rc=$?
wait $release_pid
release_rc=$?
echo "builds: $((SECONDS - t0)) s (ASan status $asan_rc, release status $release_rc)"
asan_bin=$(cd "$build" 2>/dev/null && pwd)/heurist-collect
rel_bin=$(cd "$build-release" 2>/dev/null && pwd)/heurist-collect
status=0
[ $asan_rc -eq 0 ] || { tail -20 "$out/logs/build-asan.log"; status=1; }
[ $release_rc -eq 0 ] || { tail -20 "$out/logs/build-release.log"; status=1; }

# the inputs
cat > "$out/inputs/shapes.txt" <<'EOF'
# M N K DTYPE TRANS_A TRANS_B [BATCH]
4096 4096 1024 fp16 N T
1024 3072 768 bf16 T N
512 1024 2048 fp32 N N
2048 512 4096 tf32 T T
1024 2048 4096 fp8e4m3 T N
256 256 256 fp8e4m3 N N
1000 77 333 fp16 N N
128 64 128 bf16 N N 64
EOF
cat > "$out/inputs/shapes_memcheck.txt" <<'EOF'
512 512 256 fp16 N T
256 512 1024 fp8e4m3 T N
77 33 100 fp32 N N
128 64 128 bf16 N N 8
EOF
cat > "$out/inputs/keys.txt" <<'EOF'
64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F
64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-B
64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-W
64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP16-F
64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP16-W
64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-BF16-B
256-1-13-13-1x3x3-256-1-13-13-32-0x1x1-1x1x1-1x1x1-0-NCDHW-FP32-F
512-28-28-3x3-512-56-56-42-1x1-2x2-1x1-0-NCHW-FP16-W_g32
512-2-7-7-3x3x3-512-2-7-7-4-1x1x1-1x1x1-1x1x1-0-NCDHW-FP16-F_g512
EOF
cat > "$out/inputs/keys_memcheck.txt" <<'EOF'
64-28-28-3x3-64-28-28-4-1x1-1x1-1x1-0-NCHW-FP32-F
32-8-8-3x3-32-8-8-2-1x1-1x1-1x1-0-NCHW-FP16-W_g32
16-4-8-8-3x3x3-16-4-8-8-2-1x1x1-1x1x1-1x1x1-0-NCDHW-FP32-B
EOF
# network problems: FP32 under each precision class, BF16, grouped FP16, 3-D, depthwise
{ head -4 "$conv_list"; grep -m1 -- '-FP16-W_g' "$conv_list"; grep -m1 NCDHW "$conv_list"; grep -m1 -- '-B_g' "$conv_list"; } \
    > "$out/inputs/problems.txt"
{ sed -n 2p "$conv_list"; grep -m1 -- '-B_g' "$conv_list"; } > "$out/inputs/problems_memcheck.txt"
# a table's first PER shapes of each data type, all their rows (the shape is the first 6 columns, 7 with a batch)
pick_shapes() {
    zcat "$1" | awk -F, -v per="$2" 'NR == 1 { nk = $7 == "batch" ? 7 : 6; print; next }
        { k = $1; for (j = 2; j <= nk; j++) k = k "," $j
          if (!(k in seen)) { seen[k] = 1; if (cnt[$4] < per) { cnt[$4]++; keep[k] = 1 } }
          if (k in keep) print }' | gzip > "$3"
}
pick_shapes "$gemm_table" 2 "$out/inputs/gemm_table.csv.gz"
pick_shapes "$batched_table" 2 "$out/inputs/batched_table.csv.gz"
zcat "$gemm_table" | awk -F, 'NR == 1 { print; next } $4 == "fp16" || $4 == "tf32" { k = $1 "," $2 "," $3 "," $4 "," $5 "," $6
    if (!(k in seen)) { seen[k] = 1; if (cnt[$4]++ < 1) keep[k] = 1 } if (k in keep) print }' |
    gzip > "$out/inputs/gemm_table_memcheck.csv.gz"
zcat "$batched_table" | awk -F, 'NR == 1 { print; next } $4 == "fp8e4m3" { k = $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7
    if (!(k in seen)) { seen[k] = 1; if (n++ < 1) keep[k] = 1 } if (k in keep) print }' |
    gzip > "$out/inputs/batched_table_memcheck.csv.gz"

export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=0:detect_stack_use_after_return=1:log_path=$out/asan/asan"
export LSAN_OPTIONS="suppressions=$here/lsan_cuda.supp:print_suppressions=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=0:log_path=$out/asan/ubsan"
findings=0
undone=0
# the ASan commands take at most half of what the builds left, the memcheck ones the rest
asan_end=$((SECONDS + (budget - (SECONDS - start)) / 2))
last_rc=0
last_found=0
# run NAME TOOL SECONDS COMMAND...: TOOL asan (the ASan build's reports in OUT/asan/) or memcheck (compute-sanitizer)
run() {
    local name=$1 tool=$2 secs=$3 left rc found t
    shift 3
    left=$((budget - (SECONDS - start)))
    [ "$tool" = asan ] && [ $((asan_end - SECONDS)) -lt "$left" ] && left=$((asan_end - SECONDS))
    if [ "$left" -lt 10 ]; then
        printf '%s\t%s\tnot run (budget)\t0\t-\n' "$name" "$tool" >> "$out/summary.tsv"
        undone=$((undone + 1))
        last_rc=-
        last_found=-
        return
    fi
    [ "$left" -lt "$secs" ] && secs=$left
    # the collector's own limit first, so that it ends its problem, writes its summary and exits (LeakSanitizer
    # looks at exit); timeout's kill only where that fails
    case " $* " in *" gemm "* | *" conv "* | *" verify "*) set -- "$@" --time-limit $((secs > 20 ? secs - 8 : secs / 2)) ;; esac
    t=$SECONDS
    local before
    before=$(cat "$out"/asan/* 2>/dev/null | grep -c -E 'ERROR: (Address|Leak)Sanitizer|runtime error:')
    if [ "$tool" = memcheck ]; then
        HEURIST_COLLECT_MEMCHECK=1 ASAN_OPTIONS='' LSAN_OPTIONS='' UBSAN_OPTIONS='' timeout -k 5 "$secs" \
            "$csan" --tool memcheck --leak-check full --error-exitcode 9 --report-api-errors no \
            --target-processes all "$@" > "$out/logs/$name.log" 2>&1 < /dev/null
        rc=$?
        found=$(grep -h '========= ERROR SUMMARY' "$out/logs/$name.log" | awk '{s += $4} END {print s + 0}')
    else
        timeout -k 5 "$secs" "$@" > "$out/logs/$name.log" 2>&1 < /dev/null
        rc=$?
        found=$(( $(cat "$out"/asan/* 2>/dev/null | grep -c -E 'ERROR: (Address|Leak)Sanitizer|runtime error:') - before ))
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$tool" "$rc" "$((SECONDS - t))" "$found" >> "$out/summary.tsv"
    last_rc=$rc
    last_found=$found
    echo "$name ($tool): status $rc after $((SECONDS - t)) s, $found finding(s)"
    [ "$found" -gt 0 ] && findings=$((findings + found))
    case $rc in
    0 | 3) ;;        # 3: a collection or verify stopped with work left (its --time-limit), not a fault
    9) [ "$tool" = memcheck ] || status=1 ;;       # memcheck's --error-exitcode: counted in findings
    23) [ "$found" -gt 0 ] || status=1 ;;          # LeakSanitizer's exit status: counted in findings
    124 | 137) undone=$((undone + 1)) ;;
    *) status=1; tail -3 "$out/logs/$name.log" ;;
    esac
}
w=$out/outputs
if [ $asan_rc -eq 0 ]; then
    run gemm asan 60 "$asan_bin" gemm --shapes "$out/inputs/shapes.txt" --out "$w/gemm.csv.gz" --candidates 24 --verbose
    run conv asan 60 "$asan_bin" conv --problems "$out/inputs/keys.txt" --out "$w/conv.fdb.txt" --heuristic "$w/conv.heuristic.txt" \
        --gpus 1
    if [ $n_select -gt 0 ]; then
        run verify_conv asan 60 "$asan_bin" verify --problems "$out/inputs/problems.txt" --out "$w/verify_conv.tsv" \
            --top-k 3 --shortlist-timing batch --find-cost
        run verify_conv_retime asan 40 "$asan_bin" verify --problems "$out/inputs/problems.txt" --limit 3 \
            --out "$w/verify_conv_retime.tsv" --top-k 3 --shortlist-timing batch --shortlist-retime-within 1.5
        run verify_conv_once asan 40 "$asan_bin" verify --problems "$out/inputs/problems.txt" --limit 3 \
            --out "$w/verify_conv_once.tsv" --top-k 3 --shortlist-timing once
    fi
    if [ $((n_table + n_tune)) -gt 0 ]; then
        run verify_gemm asan 60 "$asan_bin" verify --table "$out/inputs/gemm_table.csv.gz" --out "$w/verify_gemm.tsv" \
            --top-k 3 --shortlist-timing interleaved
        [ $n_tune -gt 0 ] &&
            run verify_gemm_tune asan 60 "$asan_bin" verify --table "$out/inputs/gemm_table.csv.gz" \
                --out "$w/verify_gemm_tune.tsv" --top-k 2 --shortlist-fill --no-list --tune-candidates list:2 \
                --shortlist-timing interleaved
        run verify_gemm_batched asan 60 "$asan_bin" verify --table "$out/inputs/batched_table.csv.gz" \
            --out "$w/verify_gemm_batched.tsv" --top-k 3
    fi
    for r in "$w"/verify_*.tsv; do
        [ -e "$r" ] || continue
        run "summarize_$(basename "$r" .tsv)" asan 30 "$asan_bin" summarize --report "$r"
    done
fi
if [ $release_rc -eq 0 ] && [ -n "$csan" ]; then
    # the controls: memcheck must report both planted faults (status 9)
    for c in oob leak; do
        run "control_$c" memcheck 30 "$build-release/sanitize_control" "$c"
        if [ "$last_rc" = 9 ] && [ "$last_found" != - ] && [ "$last_found" -gt 0 ]; then
            findings=$((findings - last_found))
        else
            echo "control_$c: memcheck did not report the planted fault (status $last_rc): its clean runs show nothing"
            status=1
        fi
    done
    once=(--repeats 1)
    run gemm_memcheck memcheck 60 "$rel_bin" gemm --shapes "$out/inputs/shapes_memcheck.txt" --out "$w/gemm_mc.csv.gz" \
        --candidates 4 --heuristic-count 4 "${once[@]}" --min-batch-us 0 --max-batch 1
    run conv_memcheck memcheck 60 "$rel_bin" conv --problems "$out/inputs/keys_memcheck.txt" --out "$w/conv_mc.fdb.txt" \
        --heuristic "$w/conv_mc.heuristic.txt" "${once[@]}" --min-repeat-ms 0
    [ $n_select -gt 0 ] &&
        run verify_conv_memcheck memcheck 60 "$rel_bin" verify --problems "$out/inputs/problems_memcheck.txt" \
            --out "$w/verify_conv_mc.tsv" --top-k 3 --shortlist-timing batch --find-cost --rounds 1 "${once[@]}" \
            --min-repeat-ms 0
    if [ $((n_table + n_tune)) -gt 0 ]; then
        run verify_gemm_memcheck memcheck 60 "$rel_bin" verify --table "$out/inputs/gemm_table_memcheck.csv.gz" \
            --out "$w/verify_gemm_mc.tsv" --top-k 3 --shortlist-timing interleaved --heuristic-count 8 --shortlist-rounds 2 \
            --rounds 1 "${once[@]}" --min-batch-us 0 --max-batch 1
        [ $n_tune -gt 0 ] &&
            run verify_gemm_tune_memcheck memcheck 60 "$rel_bin" verify --table "$out/inputs/gemm_table_memcheck.csv.gz" \
                --out "$w/verify_gemm_tune_mc.tsv" --top-k 2 --shortlist-fill --no-list --tune-candidates list:2 \
                --shortlist-timing interleaved --shortlist-rounds 2 --rounds 1 "${once[@]}" --min-batch-us 0 \
                --max-batch 1
        run verify_gemm_batched_memcheck memcheck 60 "$rel_bin" verify --table "$out/inputs/batched_table_memcheck.csv.gz" \
            --out "$w/verify_gemm_batched_mc.tsv" --top-k 3 --rounds 1 "${once[@]}" --min-batch-us 0 --max-batch 1
    fi
elif [ -z "$csan" ]; then
    echo "compute-sanitizer not found: the memcheck commands did not run"
    status=1
fi
[ $status -eq 0 ] && [ $undone -gt 0 ] && status=3
[ $findings -gt 0 ] && status=9
echo "device_sanitize.sh: $((SECONDS - start)) s, $findings finding(s), $undone command(s) undone, status $status"
cat "$out/summary.tsv"
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
exit $status
