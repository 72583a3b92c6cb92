#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds release and sanitizer (address,undefined) trees,
# runs every Criterion test in both through ctest, the Python package's pytest against the release tree's
# libheurist, then every fuzz target for a bounded time (tools/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
jobs=$(nproc)
status=0
for variant in release asan; do
  dir=build-test-$variant
  # The release tree builds every program; the sanitizer tree what the tests run: no bench/ programs and
  # heurist-collect without its GPU commands (the tests run its CPU build, the fake timer).
  flags="-DCMAKE_BUILD_TYPE=Release"
  [ $variant = asan ] && flags="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEURIST_SANITIZE=ON -DHEURIST_BENCH=OFF -DHEURIST_CUDA=OFF"
  echo "== $variant build"
  cmake -S . -B "$dir" $flags >/dev/null
  cmake --build "$dir" -j"$jobs" 2>&1 | grep -E "warning|error" || true
  cmake --build "$dir" -j"$jobs" >/dev/null
  echo "== $variant tests"
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     LSAN_OPTIONS=suppressions="$PWD/../tools/lsan.supp" \
     ctest --output-on-failure -j"$jobs") || status=1
  if [ $variant = release ]; then
    echo "== python tests"
    HEURIST_LIBRARY="$PWD/$dir/libheurist.so" "$(bash tools/python.sh)" -m pytest -q -p no:cacheprovider python \
      || status=1
  fi
done
# libFuzzer: every parser and loader for a bounded time (FUZZ_SECONDS each)
echo "== fuzz"
# 6 s a target keeps the whole run under 15 minutes on 2 cores (the two builds take most of it); FUZZ_SECONDS=300 bash tools/fuzz.sh for a longer run
FUZZ_SECONDS=${FUZZ_SECONDS:-6} bash tools/fuzz.sh || status=1
exit $status
