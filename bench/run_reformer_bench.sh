#!/bin/bash
# Reformer: heurist (C) vs PyTorch, side by side on the same rows, thread count, architecture and optimizer;
# then the Gamma-block vs transformer-block comparison inside heurist (the Reformer paper's Table 1).
#
#   bench/run_reformer_bench.sh [DATA] [EPOCHS] [REPEATS] [TRANSFORMER_ROWS]
#
# DATA: a find-db or dataset cache (default the gfx90878 find-db); EPOCHS per timed training run (default 3);
# REPEATS: each measurement is repeated and the best (lowest time) kept, per side (default 3): the machine is
# shared, so the best of several runs is the least disturbed one. TRANSFORMER_ROWS: training rows for the
# Gamma vs transformer table (default 30000; the transformer's epoch is ~20x the Reformer's).
# Environment: THREADS (default "1 2") thread counts of the training rows (heurist with "batch_parts" equal to
# the thread count unless CFG sets it; PyTorch at more than one thread both ways, its OpenMP threads or
# OpenBLAS's, its faster kept); INFER=0 / TABLE1=0 skip the
# inference timing / the Gamma vs transformer table; TEPOCHS (default 8) epochs of that table. CFG (heurist's
# --config, default {}) and TORCH_ARGS (the same options for bench/reformer_torch.py) time another configuration,
# e.g. CFG='{"input":"ple","hidden":128,"expand":128,"dropout":0.1}' TORCH_ARGS="--ple 32 --hidden 128 --expand 128 --dropout 0.1".
# With the default CFG the one-thread rows also time the default model's matrix products alone
# (bench/gemm_shapes.c): the part of heurist's epoch that OpenBLAS sets.
# Needs: $BUILD (default build/) with the bench targets (cmake --build build --target bench_reformer gemm_shapes),
# /usr/bin/python3 with torch and numpy. Results: $OUT (default $TMPDIR/reformer_bench, /tmp when TMPDIR is
# unset)/results.txt, one key=value line per run, and a summary on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
DATA=${1:-$ROOT/datasets/miopen/gfx90878.HIP.fdb.txt.bz2}
EPOCHS=${2:-3}
REPEATS=${3:-3}
TROWS=${4:-30000}
OUT=${OUT:-${TMPDIR:-/tmp}/reformer_bench}
PY=/usr/bin/python3
mkdir -p "$OUT"
RES=$OUT/results.txt
: >"$RES"
CFG=${CFG:-'{}'} # heurist's --config: the family defaults (applicability head included) unless given
TORCH_ARGS=${TORCH_ARGS:-} # the same model's options for bench/reformer_torch.py (e.g. --ple 32 --hidden 128)

echo "# $(date -u +%Y-%m-%dT%H:%MZ)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')  $(nproc) cores" | tee -a "$RES"
echo "# uptime: $(uptime)" | tee -a "$RES"

"$BUILD/bench_reformer" export "$DATA" "$OUT" 0.2 0

for threads in ${THREADS-1 2}; do
    # heurist cuts each batch into as many parts as it has threads ("batch_parts", unless CFG sets it): the
    # parts change the order of float sums, not the model, its batch or its optimizer
    hcfg=$CFG
    case $CFG in
    *batch_parts*) ;;
    '{}') hcfg="{\"batch_parts\":$threads}" ;;
    *) hcfg="{\"batch_parts\":$threads,${CFG#\{}" ;;
    esac
    for rep in $(seq "$REPEATS"); do
        # alternate the two sides so that a load spike hits both alike
        OPENBLAS_NUM_THREADS=$threads "$BUILD/bench_reformer" train "$DATA" "$OUT" reformer "$EPOCHS" "$threads" "$hcfg" \
            2>/dev/null | sed "s/^/rep=$rep cores=$threads /" | tee -a "$RES"
        # PyTorch's own OpenMP threads do the parallel work; its GEMMs call OpenBLAS from inside them, so
        # OpenBLAS keeps one thread (two of its threads under each of two OpenMP threads oversubscribe the
        # cores: 3-6x slower epochs on this 2-core machine)
        OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads $PY "$ROOT/bench/reformer_torch.py" "$OUT" "$EPOCHS" \
            "$threads" --calls 2000 $TORCH_ARGS | sed "s/^/rep=$rep cores=$threads torch_threads=omp /" | tee -a "$RES"
        # the default model's matrix products alone, at one OpenBLAS thread: the floor of heurist's epoch (rows,
        # features and kernels from the exported data; batch 512, widths 92 / 96, three blocks, two heads)
        if [ "$threads" = 1 ] && [ "$CFG" = '{}' ]; then
            read -r ntr _ nfeat nker <"$OUT/meta.txt"
            OPENBLAS_NUM_THREADS=1 "$BUILD/gemm_shapes" "$ntr" 512 "$nfeat" 92 96 3 "$nker" 2 | tail -n 1 |
                sed "s/^/rep=$rep cores=1 /" | tee -a "$RES"
        fi
        # the other way to give PyTorch the cores: one OpenMP thread, OpenBLAS's threads inside its GEMMs
        # (the summary keeps PyTorch's faster setting)
        if [ "$threads" -gt 1 ]; then
            OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=1 $PY "$ROOT/bench/reformer_torch.py" "$OUT" "$EPOCHS" \
                1 --calls 10 $TORCH_ARGS | sed "s/^/rep=$rep cores=$threads torch_threads=blas /" | tee -a "$RES"
        fi
    done
done
# the full-data model of the last training row (a run with THREADS="" reuses the one already there)
if [ -n "${THREADS-1 2}" ]; then cp "$OUT/reformer.h5" "$OUT/reformer_full.h5"; fi
for rep in $(seq "$REPEATS"); do
    [ "${INFER:-1}" = 1 ] || break
    OPENBLAS_NUM_THREADS=1 "$BUILD/bench_reformer" infer "$OUT/reformer_full.h5" "$DATA" 5000 | sed "s/^/rep=$rep /" |
        tee -a "$RES"
done

# Gamma-block vs transformer-block on the first TROWS training rows, same epochs, full test set, 1 thread
TEPOCHS=${TEPOCHS:-8}
for rep in $(seq "$REPEATS"); do
    [ "${TABLE1:-1}" = 1 ] || break
    for fam in reformer transformer; do
        OPENBLAS_NUM_THREADS=1 "$BUILD/bench_reformer" train "$DATA" "$OUT" "$fam" "$TEPOCHS" 1 '{}' "$TROWS" \
            2>/dev/null | sed "s/^/table1=1 rep=$rep /" | tee -a "$RES"
        OPENBLAS_NUM_THREADS=1 "$BUILD/bench_reformer" infer "$OUT/$fam.h5" "$DATA" 2000 |
            sed "s/^/table1=1 rep=$rep /" | tee -a "$RES"
    done
done
echo "# uptime after: $(uptime)" | tee -a "$RES"

$PY - "$RES" <<'EOF'
import re, sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    rows.append(dict(kv.split("=", 1) for kv in line.split() if "=" in kv))
def best(sel, key):
    v = [float(r[key]) for r in rows if sel(r) and key in r]
    return min(v) if v else float("nan")
print("\n== heurist vs PyTorch (best of repeats; per-epoch training time, full training rows) ==")
for th in ("1", "2"):
    # both sides' epochs alone: PyTorch's clock starts after its data preparation, heurist's loop clock too
    ours = best(lambda r: r.get("impl") == "heurist" and r.get("cores") == th and "table1" not in r,
                "loop_sec_per_epoch")
    if ours != ours:  # this thread count was not run (THREADS)
        continue
    whole = best(lambda r: r.get("impl") == "heurist" and r.get("cores") == th and "table1" not in r, "sec_per_epoch")
    torch = best(lambda r: r.get("impl") == "pytorch" and r.get("cores") == th, "sec_per_epoch")
    how = {s: best(lambda r, s=s: r.get("impl") == "pytorch" and r.get("cores") == th and r.get("torch_threads") == s,
                   "sec_per_epoch") for s in ("omp", "blas")}
    mo = best(lambda r: r.get("impl") == "heurist" and r.get("cores") == th and "table1" not in r, "peak_rss_mb")
    mt = best(lambda r: r.get("impl") == "pytorch" and r.get("cores") == th, "peak_rss_mb")
    print(f"threads={th}: heurist {ours:.2f} s/epoch, pytorch {torch:.2f} s/epoch, ratio {torch / ours:.1f}x; "
          f"peak RSS heurist {mo:.0f} MB, pytorch {mt:.0f} MB")
    print(f"  heurist with its input preparation and set-up: {whole:.2f} s/epoch, ratio {torch / whole:.1f}x")
    floor = best(lambda r: r.get("impl") == "gemm" and r.get("cores") == th, "products_sec_per_epoch")
    if floor == floor:
        print(f"  OpenBLAS's matrix products of the epoch alone (bench/gemm_shapes.c): {floor:.2f} s, "
              f"{floor / ours:.0%} of heurist's epoch; pytorch / products alone {torch / floor:.1f}x")
    if th != "1":
        print(f"  pytorch by setting: OpenMP threads {how['omp']:.2f} s/epoch, OpenBLAS threads {how['blas']:.2f} s/epoch")
ours = best(lambda r: r.get("impl") == "heurist" and "predict_us" in r and "table1" not in r, "predict_us")
key = best(lambda r: r.get("impl") == "heurist" and "predict_from_key_us" in r and "table1" not in r, "predict_from_key_us")
torch = best(lambda r: r.get("impl") == "pytorch" and r.get("torch_threads") != "blas", "predict_us")
if ours == ours:  # not with INFER=0
    print(f"single-problem inference (1 thread, median): heurist {ours:.2f} us ({key:.2f} us from the problem key), "
          f"pytorch {torch:.1f} us, ratio {torch / ours:.0f}x")
for th in ("1", "2"):
    for impl in ("heurist", "pytorch"):
        acc = [r for r in rows if r.get("impl") == impl and r.get("cores") == th and "table1" not in r and "top1" in r]
        if acc:
            print(f"  accuracy after the timed epochs, {impl} threads={th}: top1 {acc[-1]['top1']} "
                  f"efficiency_mean {acc[-1]['efficiency_mean']}")
print("\n== Gamma-block vs transformer-block (heurist, 1 thread, first training rows only) ==")
for fam in ("reformer", "transformer"):
    sel = lambda r, f=fam: "table1" in r and r.get("family") == f
    acc = [r for r in rows if sel(r) and "top1" in r]
    if not acc:
        continue
    print(f"{fam:12s} params {acc[-1]['params']:>7s}  n_train {acc[-1]['n_train']}  epochs {acc[-1]['epochs']}  "
          f"top1 {acc[-1]['top1']}  efficiency_mean {acc[-1]['efficiency_mean']}  "
          f"{best(sel, 'sec_per_epoch'):.2f} s/epoch  predict {best(sel, 'predict_us'):.2f} us")
EOF
