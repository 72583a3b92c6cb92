#!/usr/bin/env bash
# heurist's gbdt against LightGBM, side by side: the same rows (float32 arrays written by gbdt_select_bench),
# matched settings, each trainer in its own process, back to back in one run. Prints per run the training
# time, accuracy, single-row and batch prediction time and peak memory of both, and the time ratio (wall clock,
# and CPU time of training: with one thread the CPU-time ratio is the one other load on the machine disturbs least).
#
# Cases:
#   a  the 70-class softmax on a find-db (default datasets/miopen/gfx90878.HIP.fdb.txt.bz2, 80/20 random split
#      seed 0: 145,942 training rows x 76 features, hard labels), 30 rounds, 63 leaves, lr 0.1, 255 bins,
#      min_data_in_leaf 20, min_sum_hessian_in_leaf 1, at each thread count of --threads
#   b  L2 regression on a synthetic table (gbdt_select_bench synth: 2,000,000 rows x 60 features, seed 1, plus
#      200,000 validation rows; the generator is documented there), 100 rounds, 63 leaves, lr 0.1, 255 bins,
#      min_data_in_leaf 20, min_sum_hessian_in_leaf 1e-3: same rounds, validation loss of both printed
#   Prediction (single row, one thread, median of 2,000 calls; whole test set with the run's threads) is
#   measured on every run's model.
#
# --heurist-config JSON passes gbdt options to heurist's trainer (those gbdt_select_bench takes, e.g.
# '{"quantized_grad": true}'); --lightgbm-quantized adds, after each run, a row of LightGBM with
# use_quantized_grad=true (num_grad_quant_bins 4, its default) against the same heurist run, so quantized
# training is compared with quantized training too.
#
# LightGBM is not built here: pass --lightgbm DIR, a LightGBM source tree you built yourself (its C API
# library, DIR/lib_lightgbm.so, and headers, DIR/include/LightGBM/c_api.h; OpenMP on). lgbm_bench, the small
# driver that feeds it the same float32 rows through that C API, is compiled against it into the cache folder.
#
# usage (from the repository root, after building gbdt_select_bench into BUILD):
#   bash bench/gbdt_vs_lightgbm.sh --build build --lightgbm ~/src/LightGBM [--cases a,b] [--threads "1 2"]
#        [--repeat 2] [--cache ~/.cache/heurist-bench] [--data FDB] [--rows 2000000]
#        [--heurist-config JSON] [--lightgbm-quantized]
set -euo pipefail

build=build
lgb_src=
cases=a,b
threads="1 2"
repeat=2
cache="${XDG_CACHE_HOME:-$HOME/.cache}/heurist-bench"
data=datasets/miopen/gfx90878.HIP.fdb.txt.bz2
rows=2000000
hcfg='{}'
lgb_quant=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --lightgbm) lgb_src=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    --heurist-config) hcfg=$2; shift 2 ;;
    --lightgbm-quantized) lgb_quant=1; shift ;;
    *) echo "gbdt_vs_lightgbm.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
ours="$build/gbdt_select_bench"
[ -x "$ours" ] || { echo "gbdt_vs_lightgbm.sh: $ours not built" >&2; exit 2; }

# ---- LightGBM: the user's build, and our driver compiled against its C API ----
[ -n "$lgb_src" ] && [ -f "$lgb_src/lib_lightgbm.so" ] && [ -f "$lgb_src/include/LightGBM/c_api.h" ] ||
  { echo "gbdt_vs_lightgbm.sh: pass --lightgbm DIR, a LightGBM tree you built (DIR/lib_lightgbm.so, DIR/include)" >&2; exit 2; }
lgb_src=$(cd "$lgb_src" && pwd)
lgb="$cache/lightgbm"
mkdir -p "$lgb"
lgb_bench="$lgb/lgbm_bench"
if [ ! -x "$lgb_bench" ] || [ bench/lightgbm/lgbm_bench.c -nt "$lgb_bench" ]; then
  cc -O2 -w -I"$lgb_src/include" bench/lightgbm/lgbm_bench.c -o "$lgb_bench" -L"$lgb_src" -l_lightgbm \
    -Wl,-rpath,"$lgb_src" -lm
fi

kv() { # kv LINE KEY -> value
  tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print $2}'
}
peak() { # the peak RSS /usr/bin/time saw, MB
  awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$1"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gbdt_vs_lgb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(lscpu | awk -F': +' '/Model name/ {print $2}'), $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ);" \
  "heurist ${HEURIST_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}; LightGBM $(cat "$lgb_src/VERSION.txt" 2>/dev/null || echo '?');" \
  "heurist config $hcfg"

side_by_side() { # side_by_side CASE THREADS REP OURS_CMD... -- LGB_CMD...
  local case=$1 t=$2 rep=$3; shift 3
  local oc=() lc=()
  while [ "$1" != "--" ]; do oc+=("$1"); shift; done; shift
  lc=("$@")
  local o l
  if [ -z "${REUSE_OURS:-}" ]; then o=$(/usr/bin/time -v -o "$tmp/time_o" "${oc[@]}" | tail -1); last_o=$o
  else o=$last_o; fi
  l=$(/usr/bin/time -v -o "$tmp/time_l" "${lc[@]}" | tail -1)
  local acc
  if [ "$case" = a ]; then acc="top1 %s / %s  eff %s / %s"; else acc="valid_l2 %s / %s"; fi
  local ot lt
  ot=$(kv "$o" train_s); lt=$(kv "$l" train_s)
  local ocpu lcpu
  ocpu=$(kv "$o" cpu_s); lcpu=$(kv "$l" cpu_s)
  printf "[%s t=%s #%s%s] train heurist %7.2f s  LightGBM %7.2f s (binning %.2f)  ratio %.3f  cpu %.2f / %.2f s" \
    "$case" "$t" "$rep" "${REUSE_OURS:+ LightGBM quantized}" "$ot" "$lt" "$(kv "$l" construct_s)" "$(echo "$ot / $lt" | bc -l)" "$ocpu" "$lcpu"
  printf " (ratio %.3f)  " "$(echo "$ocpu / $lcpu" | bc -l)"
  if [ "$case" = a ]; then
    printf "$acc" "$(kv "$o" top1)" "$(kv "$l" top1)" "$(kv "$o" eff)" "$(kv "$l" eff)"
  else
    printf "$acc" "$(kv "$o" valid_l2)" "$(kv "$l" valid_l2)"
  fi
  printf "  predict_us %s / %s  batch_us %s / %s  peak MB %s / %s  (load %s)\n" \
    "$(kv "$o" predict_us)" "$(kv "$l" predict_us)" "$(kv "$o" batch_us)" "$(kv "$l" batch_us)" \
    "$(peak "$tmp/time_o")" "$(peak "$tmp/time_l")" "$(cut -d' ' -f1 /proc/loadavg)"
}

if [[ ",$cases," == *,a,* ]]; then
  mkdir -p "$tmp/a"
  "$ours" export "$data" "$tmp/a" 0.2 0
  read -r ntr nte d K <"$tmp/a/meta.txt"
  echo "case a: $(basename "$data"): $ntr train x $d features, $nte test, $K classes; 30 rounds, 63 leaves, lr 0.1," \
    "255 bins, min_data_in_leaf 20, min_sum_hessian_in_leaf 1 (heurist / LightGBM)"
  for t in $threads; do
    for rep in $(seq 1 "$repeat"); do
      side_by_side a "$t" "$rep" "$ours" train "$tmp/a" 30 63 0.1 255 "$t" onehot -1 20 0 1 "$hcfg" -- \
        "$lgb_bench" select "$tmp/a" 30 63 0.1 255 "$t" 20 1
      if [ "$lgb_quant" = 1 ]; then REUSE_OURS=1 side_by_side a "$t" "$rep" -- \
        "$lgb_bench" select "$tmp/a" 30 63 0.1 255 "$t" 20 1 "use_quantized_grad=true"; fi
    done
  done
fi

if [[ ",$cases," == *,b,* ]]; then
  mkdir -p "$tmp/b"
  "$ours" synth "$tmp/b" "$rows" 60 1
  read -r ntr nv d K <"$tmp/b/meta.txt"
  echo "case b: synthetic L2, $ntr train x $d features, $nv validation; 100 rounds, 63 leaves, lr 0.1, 255 bins," \
    "min_data_in_leaf 20, min_sum_hessian_in_leaf 1e-3 (heurist / LightGBM)"
  for t in $threads; do
    for rep in $(seq 1 "$repeat"); do
      side_by_side b "$t" "$rep" "$ours" l2 "$tmp/b" 100 63 0.1 255 "$t" 20 1e-3 "$hcfg" -- \
        "$lgb_bench" l2 "$tmp/b" 100 63 0.1 255 "$t" 20 1e-3
      if [ "$lgb_quant" = 1 ]; then REUSE_OURS=1 side_by_side b "$t" "$rep" -- \
        "$lgb_bench" l2 "$tmp/b" 100 63 0.1 255 "$t" 20 1e-3 "use_quantized_grad=true"; fi
    done
  done
fi
