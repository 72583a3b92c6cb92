#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ for a bounded time: builds a clang tree with HEURIST_FUZZ=ON
# (address,undefined,fuzzer), seeds each target from fuzz/corpus/<target>/ and fuzz/regressions/<target>/,
# and fails on the first crash, leak, hang (-timeout) or sanitizer report. A crashing input is left as
# $WORK/<target>/crash-*: commit it to fuzz/regressions/<target>/ once fixed.
#   FUZZ_SECONDS   seconds per target (default 30)
#   FUZZ_RUNS      also stop a target after this many executions (default: no limit)
#   FUZZ_TARGETS   space-separated subset (default: all)
#   FUZZ_JOBS      targets fuzzed at once, each its own process on one core (default: the number of cores)
#   FUZZ_BUILD     build folder (default build-fuzz)
#   FUZZ_WORK      scratch folder for the growing corpora and logs (default $TMPDIR/heurist-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
build=${FUZZ_BUILD:-build-fuzz}
work=${FUZZ_WORK:-${TMPDIR:-/tmp}/heurist-fuzz}
targets=${FUZZ_TARGETS:-"fdb key perfdb model cache config table schema caps collect"}
root=$PWD
case $build in /*) ;; *) build=$root/$build ;; esac
if ! command -v clang >/dev/null; then
  echo "fuzz.sh: clang is not installed (tools/install-deps.sh installs it)" >&2
  exit 2
fi
# only the fuzz targets are built: no tests, and heurist-collect's GPU commands not even looked for; -O2 for the
# executions a second, line tables (-gline-tables-only: file, line and inlined frames in a report) rather than full
# debug information, Ninja where installed (a tree configured before keeps its generator), gold to link where
# binutils ships it
flags=(-DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG"
       -DHEURIST_FUZZ=ON -DHEURIST_TESTS=OFF -DHEURIST_CUDA=OFF)
command -v ld.gold >/dev/null && flags+=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=gold)
[ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null && flags+=(-G Ninja)
cmake -S . -B "$build" "${flags[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target $(printf 'fuzz_%s ' $targets) >/dev/null
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export LSAN_OPTIONS=suppressions="$PWD/tools/lsan.supp"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One target's run, its summary in $work/$t/result: each target runs for FUZZ_SECONDS in one process (libFuzzer
# fuzzes on one thread), so FUZZ_JOBS of them at once give each the time and the core it has when run alone.
fuzz_one() {
  local t=$1 start runs
  local -a limit
  limit=(-max_total_time="$seconds")
  [ -n "${FUZZ_RUNS:-}" ] && limit+=(-runs="$FUZZ_RUNS")
  start=$(date +%s)
  # -timeout: one input may take at most 10 s (a hang is a failure); -rss_limit_mb: 2 GB per input run
  if (cd "$work/$t" && TMPDIR="$work/$t" "$build/fuzz/fuzz_$t" "${limit[@]}" -timeout=10 \
        -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 corpus "$root/fuzz/corpus/$t" \
        "$root/fuzz/regressions/$t" >"$work/$t/log" 2>&1); then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$t/log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz $t: ok, $runs executions in $(( $(date +%s) - start )) s" >"$work/$t/result"
  else
    { echo "fuzz $t: FAILED (see $work/$t/log)"
      grep -m3 -E "ERROR|SUMMARY|runtime error|Test unit written" "$work/$t/log" || true; } >"$work/$t/result"
  fi
}
jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for t in $targets; do
  mkdir -p "$work/$t/corpus"
  rm -f "$work/$t/result"
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true # fuzz_one records a failure in its result
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
# the summaries in the targets' order, whichever finished first
status=0
for t in $targets; do
  if [ -f "$work/$t/result" ]; then
    cat "$work/$t/result"
    grep -q "^fuzz $t: ok" "$work/$t/result" || status=1
  else
    echo "fuzz $t: FAILED (no result; see $work/$t/log)"
    status=1
  fi
done
exit $status
