#!/usr/bin/env bash
# The seq2seq tuner's vendor guard of docs/BENCHMARKS.md (the cuBLASLt GEMM table out of source): the tuner
# trained on a real pool's training families plus a second pool (by default the H100 real pool and the generator
# pool), its margin calibrated on out-of-fold shapes of the training families alone, then the guarded runtime
# scored on the held-out families (llama3, mistral, resnet50), decoding within cuBLASLt's list.
#   bash experiments/gemm_tune_guard.sh STAGE...      (from the repository root, after a Release build)
# Stages, each writing under $OUT (default out/tune_guard):
#   split   real_oos.train / real_oos.test: the real pool without / with the held-out families; times_oos the same
#           of TIMES; RG.train: the training families plus the second pool (no shape of real_oos.test)
#   calib   three folds of the training families (no held-out family in any): per fold, the tuner trained on the
#           other two plus the second pool (no shape of the fold's), exported, its unguarded decodes within
#           cuBLASLt's list scored on the fold's shapes, TIMES's times (gemm_tune_offline.py --scores):
#           cal_{A,B,C}.tsv; then the margin chosen on the three (gemm_tune_offline.py --calibrate): calib.txt
#   final   the tuner trained on RG.train, exported unguarded (rt_s2s_tune) and with the calibrated margin
#           (rt_s2s_guard, or --guard $MARGIN when set), both scored on times_oos.test within cuBLASLt's list
# Environment: REAL (the real pool, family column; default datasets/h100/h100_cublaslt_gemm_real.csv.gz), GEN (the
# second pool, its groups prefixed gen:; default datasets/h100/h100_cublaslt_gemm.csv.gz, the generator pool; empty:
# none, the tuner trained on the real pool's families alone), EPOCHS (default 30), MARGIN (skips calib.txt),
# CANDIDATES (list, the default; rows: the tuner decodes within each shape's rows; list:N: within the list's first
# N entries; the files calib, final and the guarded runtime gain the suffix _rows or _listN), LABELS (options of
# experiments/gemm_tune_labels.py, e.g. "--list --tie 1.02": every training table, the second pool's shapes with
# it, passes through it before the tuner learns from it), TIMES (a table of the same rows as REAL, e.g. its passes
# merged: its times score the out-of-fold and held-out decodes, and the guard's margin is calibrated on them;
# default REAL). The H200 pool alone:
#   REAL=datasets/h200/h200_cublaslt_gemm_real.csv.gz GEN= OUT=out/tune_guard_h200 bash experiments/gemm_tune_guard.sh split calib final
# Its three passes merged (collect/scripts/gemm_merge_passes.py --out out/h200_real3.csv.gz ...), the labels among
# the list and the decode within its first two entries (docs/BENCHMARKS.md, "Three-pass labels"):
#   REAL=out/h200_real3.csv.gz TIMES=out/h200_real3.csv.gz LABELS="--list --tie 1.02" CANDIDATES=list:2 \
#       OUT=out/tune3 bash experiments/gemm_tune_guard.sh split calib final
set -eu -o pipefail
REAL=${REAL-datasets/h100/h100_cublaslt_gemm_real.csv.gz}
GEN=${GEN-datasets/h100/h100_cublaslt_gemm.csv.gz}
OUT=${OUT:-out/tune_guard}
EPOCHS=${EPOCHS:-30}
CAND=${CANDIDATES:-list}
LABELS=${LABELS:-}
TIMES=${TIMES:-$REAL}
sfx=""
[ "$CAND" = list ] || sfx=_${CAND//:/}
HOLD=llama3,mistral,resnet50
FOLD_A=bert,gemma2,mixtral,unet2d
FOLD_B=deepseek_moe,phi3,swin
FOLD_C=gpt2,qwen2.5,vit
H=./build/heurist
CONFIG="{\"epochs\":$EPOCHS,\"hidden\":128,\"embed\":64,\"space\":\"measured\"}"
mkdir -p "$OUT"

# with_gen OUT TABLE EXCLUDE...: TABLE plus the second pool's shapes that no EXCLUDE table holds (TABLE alone,
# copied with its sidecars, when GEN is empty)
with_gen() {
    local out=$1 table=$2 ex=()
    shift 2
    for t in "$@"; do ex+=(--exclude "$t"); done
    if [ -n "$GEN" ]; then
        python3 collect/scripts/concat_tables.py --out "$out" "${ex[@]}" "$table" "$GEN" --prefix 2=gen:
    else
        python3 collect/scripts/concat_tables.py --out "$out" "${ex[@]}" "$table"
    fi
}

# train NAME TABLE: the seq2seq tuner on every shape of TABLE (its labels chosen by $LABELS when set), one thread,
# exported unguarded to $OUT/rt_NAME
train() {
    local data=$2
    if [ -n "$LABELS" ]; then
        data=${2%.csv.gz}.labels.csv.gz
        # shellcheck disable=SC2086 # LABELS holds whitespace-separated options
        python3 experiments/gemm_tune_labels.py $LABELS "$2" "$data"
    fi
    nice -n 5 $H train --data "$data" --task tune --model seq2seq --split none --seed 0 --threads 1 --config "$CONFIG" \
        --out "$OUT/$1.h5" --quiet
    rm -rf "$OUT/rt_$1"
    $H export --model "$OUT/$1.h5" --format c --prefix "$1" --out "$OUT/rt_$1"
}

for stage in "$@"; do
    case $stage in
    split)
        $H data split --data "$REAL" --hold family=$HOLD --out "$OUT/real_oos"
        $H data split --data "$TIMES" --hold family=$HOLD --out "$OUT/times_oos"
        with_gen "$OUT/RG.train.csv.gz" "$OUT/real_oos.train.csv.gz" "$OUT/real_oos.test.csv.gz"
        ;;
    calib)
        for f in A B C; do
            eval fams=\$FOLD_$f
            $H data split --data "$OUT/real_oos.train.csv.gz" --hold family=$fams --out "$OUT/cal_$f"
            $H data split --data "$OUT/times_oos.train.csv.gz" --hold family=$fams --out "$OUT/tcal_$f"
            with_gen "$OUT/cal_$f.RG.csv.gz" "$OUT/cal_$f.train.csv.gz" "$OUT/cal_$f.test.csv.gz" "$OUT/real_oos.test.csv.gz"
            train "cal_$f" "$OUT/cal_$f.RG.csv.gz"
            python3 experiments/gemm_tune_offline.py --runtime "$OUT/rt_cal_$f" --table "$OUT/tcal_$f.test.csv.gz" \
                --candidates "$CAND" --scores "$OUT/cal_$f$sfx.tsv"
        done
        python3 experiments/gemm_tune_offline.py --calibrate "$OUT"/cal_{A,B,C}$sfx.tsv | tee "$OUT/calib$sfx.txt"
        ;;
    final)
        margin=${MARGIN:-$(sed -n 's/^chosen on the calibration scores: --guard \([^ ]*\) .*/\1/p' "$OUT/calib$sfx.txt")}
        train s2s_tune "$OUT/RG.train.csv.gz"
        rm -rf "$OUT/rt_s2s_guard$sfx"
        $H export --model "$OUT/s2s_tune.h5" --format c --prefix s2s_guard --out "$OUT/rt_s2s_guard$sfx" --guard "$margin"
        python3 experiments/gemm_tune_offline.py --runtime "$OUT/rt_s2s_tune" --table "$OUT/times_oos.test.csv.gz" \
            --candidates "$CAND" --scores "$OUT/final$sfx.tsv"
        python3 experiments/gemm_tune_offline.py --runtime "$OUT/rt_s2s_guard$sfx" --table "$OUT/times_oos.test.csv.gz" \
            --candidates "$CAND"
        ;;
    *)
        echo "gemm_tune_guard.sh: unknown stage '$stage' (split, calib, final)" >&2
        exit 2
        ;;
    esac
done
