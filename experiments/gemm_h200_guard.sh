#!/usr/bin/env bash
# Issue #35's guarded single pick on the H200 real-shape pool, by the H100 pool's recipe (docs/BENCHMARKS.md, "The
# vendor guard for the single pick"): gbdt LambdaRank with vendor_feature trained without the held-out families
# llama3, mistral and resnet50; the tie ratio, the guard's N and M and the fast model's guard chosen on the
# training families' out-of-fold scores alone (three folds of them, experiments/gemm_real_models.sh calib); the
# held-out families evaluated once, offline on the H200 table's times and on the GPU.
#   bash experiments/gemm_h200_guard.sh STAGE...     (from the repository root, after a Release build)
# Stages, each writing under $OUT (default out/h200_guard):
#   models   gemm_real_models.sh split calib final on the H200 pool, vf, tie 1.02 and 1.03 (OUT/t1.02, OUT/t1.03)
#   choose   per tie, collect/scripts/gemm_offline.py's calibration grid and its rule (OUT/tTIE/calib.txt); the
#            tie whose chosen guard has the best calibration geomean among those slower beyond x1.02 on <= 2%
#            (else the best geomean): OUT/choice.txt, a line "vf TIE N M"
#   fast     the fast model (30 rounds, learning rate 0.3, 63 leaves, depth 6) at the chosen tie, split calib
#            final (OUT/fast), its own guard chosen by the same rule on its calibration scores: "fast TIE N M"
#   heldout  the held-out figures: each tie's model unguarded, the chosen one and the fast one unguarded and
#            guarded, on the H200 pool's 436 held-out shapes and on the 345 of them the H100 pool holds (the GPU
#            verify's shapes, from the H100 pool's split OUT/h100): OUT/heldout.txt
#   device   OUT/dev, what the GPU machine needs: the 345 shapes' table (OUT/h100.test, as verify read it on the
#            H100 and in docs/BENCHMARKS.md "H200: learned GEMM shortlists timed interleaved") with the
#            vendor_feature schema beside it, the runtimes verify is built with (rt_vf: the chosen tie unguarded,
#            prefix h200_vf; rt_vf_guard: guarded, h200_vf_guard; rt_fast_guard: the fast one guarded,
#            h200_fast_guard) and the two the decision bench reads (rt_guard, rt_fast: prefix heurist_model)
#   gpu      on the GPU machine, with DIR (default OUT/dev) made by `device`: the guarded runtimes' decision time
#            on its CPU (bench/towers_decision.sh, mode vendor, two passes each: OUT/gpu/decision.txt), then the
#            verify jobs run1 and run2 (single pick, cuBLASLt's list timed carefully, noise ratio 1.02) by
#            collect/scripts/device_verify.sh within VERIFY_S seconds (default 90): OUT/gpu/v
# Environment: OUT, THREADS (default 2), VERIFY_S, DIR.
set -eu -o pipefail
REAL=datasets/h200/h200_cublaslt_gemm_real.csv.gz
H100=datasets/h100/h100_cublaslt_gemm_real.csv.gz
VF=datasets/h100/h100_cublaslt_gemm.vendor_feature.schema.json
HOLD=llama3,mistral,resnet50
OUT=${OUT:-out/h200_guard}
THREADS=${THREADS:-2}
TIES="1.02 1.03"
FAST='"rounds":30,"learning_rate":0.3,"num_leaves":63,"max_depth":6'
H=./build/heurist
mkdir -p "$OUT"

# calib DIR: the calibration grid of DIR's three folds' scores and the guard its rule chooses
calib() {
    python3 collect/scripts/gemm_offline.py report "$1/cal_vf_A.tsv+$1/cal_vf_B.tsv+$1/cal_vf_C.tsv" \
        --calibrate "$1/cal_vf_A.tsv" "$1/cal_vf_B.tsv" "$1/cal_vf_C.tsv" > "$1/calib.txt"
}

# chosen DIR: "N M slower geomean" of the guard calib chose
chosen() {
    sed -n 's/^chosen on the calibration scores: --guard-top \([0-9]*\) --guard \([^ ]*\) (slower \([^,]*\), geomean \([^)]*\))$/\1 \2 \3 \4/p' \
        "$1/calib.txt"
}

# choice NAME: "TIE N M" of OUT/choice.txt's line NAME
choice() {
    awk -v n="$1" '$1 == n { print $2, $3, $4; found = 1 } END { exit !found }' "$OUT/choice.txt" || {
        echo "gemm_h200_guard.sh: no '$1' line in $OUT/choice.txt (run the stages choose and fast first)" >&2
        exit 1
    }
}

# heldout_report LABEL SCORES [GUARD OPTIONS]: gemm_offline.py's figures of SCORES (the 436 shapes) and of its
# rows of the 345 shapes
heldout_report() {
    local label=$1 scores=$2 sub
    shift 2
    sub=${scores%.tsv}_345.tsv
    awk -F '\t' 'NR == FNR { keep[$1]; next } FNR == 1 || ($1 in keep)' "$OUT/h100_keys.txt" "$scores" > "$sub"
    echo "## $label: 436 held-out shapes, then the 345 the H100 pool holds"
    python3 collect/scripts/gemm_offline.py report "$scores" "$sub" --tables "$OUT/h200.test.csv.gz" "$@"
}

for stage in "$@"; do
    case $stage in
    models)
        for t in $TIES; do
            REAL=$REAL TIE=$t MODELS=vf THREADS=$THREADS OUT="$OUT/t$t" bash experiments/gemm_real_models.sh split calib final
        done
        ;;
    choose)
        best=
        for t in $TIES; do
            calib "$OUT/t$t"
            read -r n m slower geo <<< "$(chosen "$OUT/t$t")"
            [ -n "$geo" ] || { echo "gemm_h200_guard.sh: $OUT/t$t/calib.txt chose no guard" >&2; exit 1; }
            echo "tie $t: --guard-top $n --guard $m, calibration slower $slower, geomean $geo"
            # meeting the slower share first, then the geomean
            meets=$(awk -v s="$slower" 'BEGIN { print (s <= 0.02) }')
            best=$(printf '%s\n%s %s %s %s %s\n' "$best" "$meets" "$geo" "$t" "$n" "$m" | sed '/^$/d' | sort -k1,1nr -k2,2gr | head -1)
        done
        read -r _ _ t n m <<< "$best"
        echo "vf $t $n $m" > "$OUT/choice.txt.tmp"
        mv "$OUT/choice.txt.tmp" "$OUT/choice.txt"
        echo "chosen: tie $t, --guard-top $n --guard $m"
        ;;
    fast)
        read -r t _ _ <<< "$(choice vf)"
        REAL=$REAL MODELS=vf THREADS=$THREADS OUT="$OUT/fast" \
            CONFIG="{\"objective\":\"rank\",\"rank_loss\":\"lambdarank\",$FAST,\"tie_ratio\":$t}" \
            bash experiments/gemm_real_models.sh split calib final
        calib "$OUT/fast"
        read -r n m slower geo <<< "$(chosen "$OUT/fast")"
        [ -n "$geo" ] || { echo "gemm_h200_guard.sh: $OUT/fast/calib.txt chose no guard" >&2; exit 1; }
        echo "fast, tie $t: --guard-top $n --guard $m, calibration slower $slower, geomean $geo"
        grep -v '^fast ' "$OUT/choice.txt" > "$OUT/choice.txt.tmp" || true
        echo "fast $t $n $m" >> "$OUT/choice.txt.tmp"
        mv "$OUT/choice.txt.tmp" "$OUT/choice.txt"
        ;;
    heldout)
        $H data split --data "$REAL" --hold family=$HOLD --out "$OUT/h200" > /dev/null
        $H data split --data "$H100" --hold family=$HOLD --out "$OUT/h100" > /dev/null
        python3 -c 'import sys; sys.path.insert(0, "collect/scripts"); import gemm_offline as g
print("\n".join(g.load_table(sys.argv[1])))' "$OUT/h100.test.csv.gz" > "$OUT/h100_keys.txt"
        read -r t n m <<< "$(choice vf)"
        read -r ft fn fm <<< "$(choice fast)"
        {
            for tie in $TIES; do
                [ "$tie" = "$t" ] && continue
                heldout_report "vf, tie $tie, unguarded" "$OUT/t$tie/final_vf_oos.tsv"
            done
            heldout_report "vf, tie $t (chosen), guard N $n M $m" "$OUT/t$t/final_vf_oos.tsv" --guard-top "$n" --guard "$m"
            heldout_report "fast, tie $ft, guard N $fn M $fm" "$OUT/fast/final_vf_oos.tsv" --guard-top "$fn" --guard "$fm"
        } > "$OUT/heldout.txt.tmp"
        mv "$OUT/heldout.txt.tmp" "$OUT/heldout.txt"
        cat "$OUT/heldout.txt"
        ;;
    device)
        read -r t n m <<< "$(choice vf)"
        read -r ft fn fm <<< "$(choice fast)"
        [ -e "$OUT/h100.test.csv.gz" ] || $H data split --data "$H100" --hold family=$HOLD --out "$OUT/h100" > /dev/null
        d=$OUT/dev
        rm -rf "$d"
        mkdir -p "$d"
        cp "$OUT/h100.test.csv.gz" "$d/R.test.csv.gz"
        cp "$VF" "$d/R.test.schema.json"
        $H export --model "$OUT/t$t/gemm_vf.h5" --format c --out "$d/rt_vf" --prefix h200_vf
        $H export --model "$OUT/t$t/gemm_vf.h5" --format c --out "$d/rt_vf_guard" --prefix h200_vf_guard \
            --guard "$m" --guard-top "$n"
        $H export --model "$OUT/fast/gemm_vf.h5" --format c --out "$d/rt_fast_guard" --prefix h200_fast_guard \
            --guard "$fm" --guard-top "$fn"
        $H export --model "$OUT/t$t/gemm_vf.h5" --format c --out "$d/rt_guard" --guard "$m" --guard-top "$n"
        $H export --model "$OUT/fast/gemm_vf.h5" --format c --out "$d/rt_fast" --guard "$fm" --guard-top "$fn"
        cp "$OUT/choice.txt" "$d/"
        ;;
    gpu)
        dir=${DIR:-$OUT/dev}
        g=$OUT/gpu
        mkdir -p "$g/v"
        common="--table $dir/R.test.csv.gz --shapes datasets/h100/gemm_real_shapes.txt --noise-ratio 1.02"
        printf 'run1 60 %s\nrun2 60 %s\n' "$common" "$common" > "$g/jobs.txt"
        models="$dir/rt_vf_guard $dir/rt_fast_guard $dir/rt_vf"
        # the build alone (no job), so that the bench below has the CPU to itself
        # shellcheck disable=SC2086 # models are whitespace-separated on purpose
        BUDGET_S=1 bash collect/scripts/device_verify.sh "$g/v" /dev/null $models
        {
            lscpu | sed -n '1,20p'
            for pass in 1 2; do
                for rt in guard fast; do
                    echo "$rt, pass $pass: $(bench/towers_decision.sh "$dir/rt_$rt" "$dir/R.test.csv.gz" "-O2 -march=native" vendor)"
                done
            done
        } > "$g/decision.txt" 2>&1
        # shellcheck disable=SC2086
        BUDGET_S=${VERIFY_S:-90} bash collect/scripts/device_verify.sh "$g/v" "$g/jobs.txt" $models
        ;;
    *)
        echo "gemm_h200_guard.sh: unknown stage '$stage' (models, choose, fast, heldout, device, gpu)" >&2
        exit 2
        ;;
    esac
done
