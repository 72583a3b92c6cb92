#!/usr/bin/env bash
# The GEMM models of docs/BENCHMARKS.md "H100: cuBLASLt GEMMs of real workloads": out-of-source training on the
# real-shape pool with the families llama3, mistral and resnet50 held out (the GPU verify's shapes), calibration
# of the vendor guard and the shortlist on out-of-fold scores of the training families alone, and the second
# pool (the generator's shapes) added to training.
#   bash experiments/gemm_real_models.sh STAGE...      (from the repository root, after a Release build)
# Stages, each writing under $OUT (default out/gemm_real):
#   split     R.train / R.test: the real pool without / with the held-out families; G.train / G.test: the
#             generator pool's recorded 0.2 split (collect/scripts/split_table.py, seed 0)
#   calib     three folds of the training families (no held-out family in any): per fold, gbdt LambdaRank with
#             and without vendor_feature trained on the other two, exported, scoring the fold's shapes
#             (collect/scripts/gemm_offline.py score): cal_{vf,plain}_{A,B,C}.tsv
#   final     both models trained on R.train, exported unguarded, scoring R.test and G.test
#   pool2     both models trained on R.train + G.train (collect/scripts/concat_tables.py; no shape of R.test), scoring
#             R.test and G.test
# Environment: REAL (the real pool, default the H100's), TIE (gbdt tie_ratio, default 1), CONFIG (the whole gbdt
# config instead), MODELS (default "vf plain": with and without vendor_feature), THREADS (default 2), FOLD_A,
# FOLD_B, FOLD_C (the calibration folds' families, comma-separated; by default the 10 training families of the
# 13-family pool: a pool with more families names every training family in one of them, or calib refuses it).
set -eu -o pipefail
REAL=${REAL:-datasets/h100/h100_cublaslt_gemm_real.csv.gz}
GEN=datasets/h100/h100_cublaslt_gemm.csv.gz
VF=datasets/h100/h100_cublaslt_gemm.vendor_feature.schema.json
OUT=${OUT:-out/gemm_real}
TIE=${TIE:-1}
THREADS=${THREADS:-2}
HOLD=llama3,mistral,resnet50
FOLD_A=${FOLD_A:-bert,gemma2,mixtral,unet2d}
FOLD_B=${FOLD_B:-deepseek_moe,phi3,swin}
FOLD_C=${FOLD_C:-gpt2,qwen2.5,vit}
H=./build/heurist
CONFIG=${CONFIG:-"{\"objective\":\"rank\",\"rank_loss\":\"lambdarank\",\"rounds\":300,\"learning_rate\":0.1,\"tie_ratio\":$TIE}"}
MODELS=${MODELS:-vf plain}
mkdir -p "$OUT"

# train NAME TABLE: gbdt LambdaRank on every shape of TABLE (a tenth of its rows for early stopping), with
# vendor_feature when NAME holds "vf", exported to $OUT/rt_NAME (prefix NAME)
train() {
    local name=$1 table=$2
    set --
    case $name in *vf*) set -- --schema "$VF" ;; esac
    nice -n 5 $H train --data "$table" "$@" --task select --model gbdt --threads "$THREADS" --seed 0 --split none \
        --valid-fraction 0.1 --config "$CONFIG" --out "$OUT/$name.h5" --quiet
    rm -rf "$OUT/rt_$name"
    $H export --model "$OUT/$name.h5" --format c --out "$OUT/rt_$name" --prefix "$name"
}

score() {
    python3 collect/scripts/gemm_offline.py score --runtime "$OUT/rt_$1" --table "$2" --out "$3"
}

for stage in "$@"; do
    case $stage in
    split)
        $H data split --data "$REAL" --hold family=$HOLD --out "$OUT/R"
        python3 collect/scripts/split_table.py --table "$GEN" --share 0.2 --seed 0 --out-prefix "$OUT/G"
        ;;
    calib)
        # every training family in exactly one fold: a family left out would never be scored, one in two folds
        # would train on itself
        python3 -c 'import sys; sys.path.insert(0, "collect/scripts"); import gemm_offline as g
folds = [f.split(",") for f in sys.argv[2:]]
names = [x for f in folds for x in f]
fams = {fam for fam, _ in g.load_table(sys.argv[1]).values()}
if len(set(names)) < len(names) or fams - set(names):
    sys.exit("gemm_real_models.sh: FOLD_A, FOLD_B, FOLD_C: families in two folds %s, training families in none %s"
             % (sorted({x for x in names if names.count(x) > 1}), sorted(fams - set(names))))' \
            "$OUT/R.train.csv.gz" "$FOLD_A" "$FOLD_B" "$FOLD_C"
        for f in A B C; do
            eval fams=\$FOLD_$f
            $H data split --data "$OUT/R.train.csv.gz" --hold family=$fams --out "$OUT/cal_$f"
            for m in $MODELS; do
                train "cal_${m}_$f" "$OUT/cal_$f.train.csv.gz"
                score "cal_${m}_$f" "$OUT/cal_$f.test.csv.gz" "$OUT/cal_${m}_$f.tsv"
            done
        done
        ;;
    final)
        for m in $MODELS; do
            train "gemm_$m" "$OUT/R.train.csv.gz"
            score "gemm_$m" "$OUT/R.test.csv.gz" "$OUT/final_${m}_oos.tsv"
            score "gemm_$m" "$OUT/G.test.csv.gz" "$OUT/final_${m}_gen.tsv"
        done
        ;;
    pool2)
        python3 collect/scripts/concat_tables.py --out "$OUT/RG.train.csv.gz" --exclude "$OUT/R.test.csv.gz" \
            "$OUT/R.train.csv.gz" "$OUT/G.train.csv.gz" --prefix 2=gen:
        for m in $MODELS; do
            train "pool2_$m" "$OUT/RG.train.csv.gz"
            score "pool2_$m" "$OUT/R.test.csv.gz" "$OUT/pool2_${m}_oos.tsv"
            score "pool2_$m" "$OUT/G.test.csv.gz" "$OUT/pool2_${m}_gen.tsv"
        done
        ;;
    *)
        echo "gemm_real_models.sh: unknown stage '$stage' (split, calib, final, pool2)" >&2
        exit 2
        ;;
    esac
done
