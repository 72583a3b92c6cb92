#!/usr/bin/env bash
# Builds heurist-collect with exported models and runs a list of verify jobs on the GPU machine within a time
# budget, resumable: call it again with the same OUT to finish what an earlier call left.
#   bash collect/scripts/device_verify.sh OUT JOBS MODEL_DIR...
# MODEL_DIR: folders each holding one runtime of `heurist export --format c --prefix P` (P distinct; selection
# models of a find-db verify convolutions, models of the GEMM table verify GEMMs): one build verifies them all,
# each problem's exhaustive timing and vendor figures measured once and every model's picks re-timed together.
# JOBS: one job a line, "NAME SECONDS ARGS..." ('#' comments; ARGS are heurist-collect verify's, without --out,
# whitespace-separated, paths relative to the repository root), e.g.
#   networks 200 --problems datasets/h100/networks/networks.tsv --limit 1500 --fdb NET.fdb.txt --top-k 3 --noise-ratio 1.0175
#   pool     90  --problems POOL_TEST.keys --source pool --top-k 3 --find-cost --noise-ratio 1.0175
#   gemm     60  --table REAL.test.csv.gz --shapes datasets/h100/gemm_real_shapes.txt --top-k 3 --noise-ratio 1.02
# Each job runs `heurist-collect verify ARGS --out OUT/NAME.tsv --resume --time-limit T`, T its SECONDS or what
# is left of BUDGET_S (default 480) if less, logging to OUT/NAME.log; a job that ends (status 0) is marked
# OUT/NAME.done and skipped by later calls, one stopped by its limit (status 3) continues where it stopped.
# Then OUT/NAME.summary.txt: `heurist-collect summarize` of the report (bootstrap intervals, per-slice rows).
# Writes OUT/env.txt (nvidia-smi, versions, models) and OUT/build.log; the build is kept in BUILD_DIR
# (build-verify) and rebuilt only when the models change. Exit status: 0 every job done, 3 some left, 1 a
# failure (the build, or a job that failed: see its log).
set -u -o pipefail
if [ $# -lt 3 ]; then
    echo "usage: bash collect/scripts/device_verify.sh OUT JOBS MODEL_DIR..." >&2
    exit 2
fi
out=$1
jobs=$2
shift 2
start=$SECONDS
budget=${BUDGET_S:-480}
build=${BUILD_DIR:-build-verify}
mkdir -p "$out"
models=""
for d in "$@"; do
    [ -d "$d" ] || { echo "device_verify.sh: $d: not a folder" >&2; exit 2; }
    models="$models${models:+;}$(cd "$d" && pwd)"
done

t0=$SECONDS
if ! { cmake -S collect -B "$build" -DCMAKE_BUILD_TYPE=Release -DHEURIST_CUDA=ON -DHEURIST_COLLECT_MODEL_DIR="$models" \
         ${COLLECT_CMAKE_ARGS:-} && cmake --build "$build" -j"$(nproc)"; } > "$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    exit 1
fi
bin=$(cd "$build" && pwd)/heurist-collect # BUILD_DIR relative or absolute
echo "built heurist-collect with $# model(s) in $((SECONDS - t0)) s"
{
    date -u
    nvidia-smi
    "$bin" gemm --describe
    git rev-parse HEAD 2>/dev/null
    for d in "$@"; do ls -l "$d"; done
} > "$out/env.txt" 2>&1

status=0
while read -r name secs args; do
    case $name in ''|'#'*) continue ;; esac
    case $secs in
    ''|*[!0-9]*)
        echo "$name: '$secs' is not a number of seconds ($jobs)" >&2
        status=1
        continue
        ;;
    esac
    if [ -e "$out/$name.done" ]; then
        echo "$name: done earlier"
        continue
    fi
    left=$((budget - (SECONDS - start)))
    if [ "$left" -lt 20 ]; then
        echo "$name: no time left in the budget ($budget s)"
        status=3
        continue
    fi
    limit=$secs
    [ "$left" -lt "$limit" ] && limit=$left
    # the job's noise ratio, for its summary
    noise=1.0
    set -f
    set -- $args
    set +f
    while [ $# -gt 0 ]; do
        [ "$1" = --noise-ratio ] && [ $# -gt 1 ] && noise=$2
        shift
    done
    echo "$name: verify for at most $limit s"
    t0=$SECONDS
    # shellcheck disable=SC2086 # ARGS are whitespace-separated on purpose
    set -f
    "$bin" verify $args --out "$out/$name.tsv" --resume --time-limit "$limit" < /dev/null >> "$out/$name.log" 2>&1
    rc=$?
    set +f
    echo "$name: status $rc after $((SECONDS - t0)) s; $(grep -h '^# time a' "$out/$name.tsv" | tail -1)"
    case $rc in
    0) touch "$out/$name.done" ;;
    3) status=3 ;;
    *)
        tail -5 "$out/$name.log"
        status=1
        continue
        ;;
    esac
    # a run that verified nothing yet has no summary
    grep -q '^# \(problems\|shapes\):' "$out/$name.tsv" || continue
    "$bin" summarize --report "$out/$name.tsv" --noise-ratio "$noise" > "$out/$name.summary.txt" 2>&1 ||
        { tail -3 "$out/$name.summary.txt"; status=1; }
done < "$jobs"
echo "device_verify.sh: $((SECONDS - start)) s, status $status"
exit $status
