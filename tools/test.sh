#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds release and sanitizer (address,undefined) trees,
# runs every Criterion test in both through ctest, the Python package's pytest against the release tree's
# libheurist, then every fuzz target for a bounded time (tools/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
jobs=$(nproc)
# Every tree is configured for Ninja where it is installed (tools/install-deps.sh installs it: a build spawns far
# fewer processes than make's, and one with nothing to do takes a fraction of a second where make takes ~13 s of
# CPU), and links its programs with gold where binutils ships it (ld.gold), which links the eighty-odd programs of
# a tree in about a third of the CPU time of the default ld (libheurist.so keeps the default ld: gold warns on its
# sanitizer symbols). A tree configured before keeps its generator.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
link=()
command -v ld.gold >/dev/null && link=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=gold)
status=0
for variant in release asan; do
  dir=build-test-$variant
  # The release tree builds every program. The sanitizer tree builds what the tests run: no bench/ programs and
  # heurist-collect without its GPU commands (the tests run its CPU build, the fake timer); at -O2 with line tables
  # only (-g1: function, file, line and inlined frames in a sanitizer's report), which compile in about a sixth
  # less time than RelWithDebInfo's full -g. (-O1 compiles faster still, but its tests ran about a fifth slower:
  # more time than the build saves.)
  flags=(-DCMAKE_BUILD_TYPE=Release)
  [ $variant = asan ] && flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
                               -DHEURIST_SANITIZE=ON -DHEURIST_BENCH=OFF -DHEURIST_CUDA=OFF)
  [ -f "$dir/CMakeCache.txt" ] || flags+=("${generator[@]}")
  echo "== $variant build"
  cmake -S . -B "$dir" "${flags[@]}" "${link[@]}" >/dev/null
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
# 6 s a target, as many targets at once as there are cores: the whole run takes about 11 minutes on 2 cores (the
# sanitizer tree's tests about 4, the three builds about 4; docs/BENCHMARKS.md, "The test suite's time");
# FUZZ_SECONDS=300 bash tools/fuzz.sh for a longer run
FUZZ_SECONDS=${FUZZ_SECONDS:-6} bash tools/fuzz.sh || status=1
exit $status
