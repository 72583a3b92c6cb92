#!/usr/bin/env bash
# Issue #35's guarded single pick on the H200 real-shape pool, by the H100 pool's recipe (docs/BENCHMARKS.md, "The
# vendor guard for the single pick"): gbdt LambdaRank with vendor_feature trained without the held-out families
# llama3, mistral and resnet50; the tie ratio, the guard's N and M and the fast model's guard chosen on the
# training families' out-of-fold scores alone (three folds of them, experiments/gemm_real_models.sh calib); the
# held-out families evaluated once, offline on the H200 table's times and on the GPU. REAL picks the pool the models
# train on and are calibrated and evaluated against: the one-pass table, or the three passes merged into one whose
# times are the median of the passes (collect/scripts/gemm_merge_passes.py; docs/BENCHMARKS.md, "The single pick
# from three-pass labels").
#   bash experiments/gemm_h200_guard.sh STAGE...     (from the repository root, after a Release build)
# Stages, each writing under $OUT (default out/h200_guard):
#   models   gemm_real_models.sh split calib final on the H200 pool, vf, tie 1.02 and 1.03 (OUT/t1.02, OUT/t1.03)
#   choose   per tie, collect/scripts/gemm_offline.py's calibration grid and its rule (OUT/tTIE/calib.txt); the
#            tie whose chosen guard has the best calibration geomean among those slower beyond x1.02 on <= 2%
#            (else the best geomean): OUT/choice.txt, a line "vf TIE N M"
#   fast     the fast model (30 rounds, learning rate 0.3, 63 leaves, depth 6) at the chosen tie, split calib
#            final (OUT/fast), its own guard chosen by the same rule on its calibration scores: "fast TIE N M"
#   variants experiments/gemm_guard_variants.py on the chosen tie's calibration folds, the fast model's scores of the
#            same folds as the second model: the guard per data type and the agreement rule against the global
#            guard, by nested figures on the folds (OUT/variants.txt; the chosen variant's guards OUT/variant.txt)
#   heldout  the held-out figures: each tie's model unguarded, the chosen one and the fast one unguarded and
#            guarded, on the H200 pool's 436 held-out shapes and on the 345 of them the H100 pool holds (the GPU
#            verify's shapes, from the H100 pool's split OUT/h100): OUT/heldout.txt; where REAL is not ONEPASS,
#            the chosen model's and the fast one's figures again against ONEPASS's times (the same scores, other
#            labels); with OUT/variant.txt, the chosen variant's held-out figures too
#   device   OUT/dev, what the GPU machine needs: the 345 shapes' table (OUT/h100.test, as verify read it on the
#            H100 and in docs/BENCHMARKS.md "H200: learned GEMM shortlists timed interleaved") with the
#            vendor_feature schema beside it, the runtimes verify is built with (rt_vf: the chosen tie unguarded,
#            prefix PREFIX_vf; rt_vf_guard: guarded, PREFIX_vf_guard; rt_fast_guard: the fast one guarded,
#            PREFIX_fast_guard) and the two the decision bench reads (rt_guard, rt_fast: prefix heurist_model);
#            with OUT/variant.txt, the variant's runtimes: per data type TYPE (and default) rt_dtype_TYPE, prefix
#            PREFIX_dtype_TYPE, guarded by that type's guard (gemm_pick_runs.py --by-dtype PREFIX_dtype), or, for
#            the agreement rule, rt_agree_guard (PREFIX_agree_guard, its guard) and rt_fast_plain (PREFIX_fast,
#            the fast model unguarded; gemm_pick_runs.py --agree NAME=PREFIX_agree_guard,PREFIX_fast)
#   gpu      on the GPU machine, with DIR (default OUT/dev) made by `device`: the guarded runtimes' decision time
#            on its CPU (bench/towers_decision.sh, mode vendor, two passes each: OUT/gpu/decision.txt), then the
#            verify jobs run1 and run2 (single pick, cuBLASLt's list timed carefully, noise ratio 1.02) by
#            collect/scripts/device_verify.sh within VERIFY_S seconds (default 90): OUT/gpu/v. With CONTROL, the
#            folder `device` made for another run (its runtimes' prefixes other than DIR's), its rt_vf_guard and
#            rt_vf are verified beside DIR's in the same runs; BENCH=0 leaves the decision bench out; TOPK=K adds
#            the shortlist jobs kKfill_interleaved and kKplain_interleaved (--top-k K, with and without
#            --shortlist-fill, --shortlist-timing interleaved) after the two runs; DIR's rt_vf_guard is verified,
#            and its rt_fast_guard, rt_vf and variant runtimes (rt_dtype_*, rt_agree_guard, rt_fast_plain) where
#            DIR holds them (a DIR of one guarded runtime beside CONTROL's)
# Environment: OUT, THREADS (default 2), VERIFY_S, DIR, REAL (the pool, default the one-pass H200 table), ONEPASS
# (the one-pass table, default the same), TIES (default "1.02 1.03"), PREFIX (the runtimes' prefix, default h200),
# CONTROL, BENCH, TOPK; FOLD_A, FOLD_B, FOLD_C, exported, reach gemm_real_models.sh (the calibration folds of a pool
# with more families than the 13 of the default folds).
set -eu -o pipefail
ONEPASS=${ONEPASS:-datasets/h200/h200_cublaslt_gemm_real.csv.gz}
REAL=${REAL:-$ONEPASS}
H100=datasets/h100/h100_cublaslt_gemm_real.csv.gz
VF=datasets/h100/h100_cublaslt_gemm.vendor_feature.schema.json
HOLD=llama3,mistral,resnet50
OUT=${OUT:-out/h200_guard}
THREADS=${THREADS:-2}
TIES=${TIES:-1.02 1.03}
PREFIX=${PREFIX:-h200}
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
# rows of the 345 shapes; TABLE (default OUT/h200.test.csv.gz) the held-out table the scores' times are of
heldout_report() {
    local label=$1 scores=$2 sub
    shift 2
    sub=${scores%.tsv}_345.tsv
    awk -F '\t' 'NR == FNR { keep[$1]; next } FNR == 1 || ($1 in keep)' "$OUT/h100_keys.txt" "$scores" > "$sub"
    echo "## $label: 436 held-out shapes, then the 345 the H100 pool holds"
    python3 collect/scripts/gemm_offline.py report "$scores" "$sub" --tables "${TABLE:-$OUT/h200.test.csv.gz}" "$@"
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
    variants)
        read -r t _ _ <<< "$(choice vf)"
        read -r ft _ _ <<< "$(choice fast)"
        [ "$ft" = "$t" ] || { echo "gemm_h200_guard.sh: the fast model's tie $ft is not the chosen $t (run the stage fast)" >&2; exit 1; }
        python3 experiments/gemm_guard_variants.py --calib "$OUT/t$t"/cal_vf_{A,B,C}.tsv --second "$OUT/fast"/cal_vf_{A,B,C}.tsv \
            --choice-out "$OUT/variant.txt" > "$OUT/variants.txt.tmp"
        mv "$OUT/variants.txt.tmp" "$OUT/variants.txt"
        cat "$OUT/variants.txt"
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
            if [ "$REAL" != "$ONEPASS" ]; then
                # the same models scored on the one-pass table's held-out rows: the same candidates, its times
                $H data split --data "$ONEPASS" --hold family=$HOLD --out "$OUT/onepass" > /dev/null
                for d in "t$t" fast; do
                    python3 collect/scripts/gemm_offline.py score --runtime "$OUT/$d/rt_gemm_vf" \
                        --table "$OUT/onepass.test.csv.gz" --out "$OUT/$d/final_vf_oos_onepass.tsv" > /dev/null
                done
                TABLE=$OUT/onepass.test.csv.gz heldout_report "vf, tie $t (chosen), guard N $n M $m, one-pass times" \
                    "$OUT/t$t/final_vf_oos_onepass.tsv" --guard-top "$n" --guard "$m"
                TABLE=$OUT/onepass.test.csv.gz heldout_report "fast, tie $ft, guard N $fn M $fm, one-pass times" \
                    "$OUT/fast/final_vf_oos_onepass.tsv" --guard-top "$fn" --guard "$fm"
            fi
            if [ -e "$OUT/variant.txt" ]; then
                for times in "" _onepass; do
                    [ -z "$times" ] || [ "$REAL" != "$ONEPASS" ] || continue
                    echo "## the guard variant chosen on the training folds (experiments/gemm_guard_variants.py),${times:+ one-pass times,} 436 held-out shapes, then the 345"
                    python3 experiments/gemm_guard_variants.py --calib "$OUT/t$t"/cal_vf_{A,B,C}.tsv \
                        --second "$OUT/fast"/cal_vf_{A,B,C}.tsv --heldout "$OUT/t$t/final_vf_oos$times.tsv" \
                        --heldout-second "$OUT/fast/final_vf_oos$times.tsv" --keys "$OUT/h100_keys.txt" |
                        sed -n '/^chosen variant/p; /^held out/p'
                done
            fi
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
        $H export --model "$OUT/t$t/gemm_vf.h5" --format c --out "$d/rt_vf" --prefix "${PREFIX}_vf"
        $H export --model "$OUT/t$t/gemm_vf.h5" --format c --out "$d/rt_vf_guard" --prefix "${PREFIX}_vf_guard" \
            --guard "$m" --guard-top "$n"
        $H export --model "$OUT/fast/gemm_vf.h5" --format c --out "$d/rt_fast_guard" --prefix "${PREFIX}_fast_guard" \
            --guard "$fm" --guard-top "$fn"
        $H export --model "$OUT/t$t/gemm_vf.h5" --format c --out "$d/rt_guard" --guard "$m" --guard-top "$n"
        $H export --model "$OUT/fast/gemm_vf.h5" --format c --out "$d/rt_fast" --guard "$fm" --guard-top "$fn"
        cp "$OUT/choice.txt" "$d/"
        if [ -e "$OUT/variant.txt" ]; then
            while read -r v ty vn vm; do
                case $v in
                dtype)
                    $H export --model "$OUT/t$t/gemm_vf.h5" --format c --out "$d/rt_dtype_$ty" \
                        --prefix "${PREFIX}_dtype_$ty" --guard "$vm" --guard-top "$vn"
                    ;;
                agree)
                    $H export --model "$OUT/t$t/gemm_vf.h5" --format c --out "$d/rt_agree_guard" \
                        --prefix "${PREFIX}_agree_guard" --guard "$vm" --guard-top "$vn"
                    $H export --model "$OUT/fast/gemm_vf.h5" --format c --out "$d/rt_fast_plain" --prefix "${PREFIX}_fast"
                    ;;
                esac
            done < "$OUT/variant.txt"
            cp "$OUT/variant.txt" "$d/"
        fi
        ;;
    gpu)
        dir=${DIR:-$OUT/dev}
        g=$OUT/gpu
        mkdir -p "$g/v"
        common="--table $dir/R.test.csv.gz --shapes datasets/h100/gemm_real_shapes.txt --noise-ratio 1.02"
        {
            printf 'run1 60 %s\nrun2 60 %s\n' "$common" "$common"
            if [ -n "${TOPK:-}" ]; then
                printf 'k%sfill_interleaved 60 %s --top-k %s --shortlist-fill --shortlist-timing interleaved\n' \
                    "$TOPK" "$common" "$TOPK"
                printf 'k%splain_interleaved 60 %s --top-k %s --shortlist-timing interleaved\n' "$TOPK" "$common" "$TOPK"
            fi
        } > "$g/jobs.txt"
        models="$dir/rt_vf_guard"
        for r in "$dir/rt_fast_guard" "$dir/rt_vf" "$dir"/rt_dtype_* "$dir/rt_agree_guard" "$dir/rt_fast_plain"; do
            [ ! -d "$r" ] || models="$models $r"
        done
        [ -z "${CONTROL:-}" ] || models="$models $CONTROL/rt_vf_guard $CONTROL/rt_vf"
        # the build alone (no job), so that the bench below has the CPU to itself
        # shellcheck disable=SC2086 # models are whitespace-separated on purpose
        BUDGET_S=1 bash collect/scripts/device_verify.sh "$g/v" /dev/null $models
        if [ "${BENCH:-1}" != 0 ]; then
            {
                lscpu | sed -n '1,20p'
                for pass in 1 2; do
                    for rt in guard fast; do
                        echo "$rt, pass $pass: $(bench/towers_decision.sh "$dir/rt_$rt" "$dir/R.test.csv.gz" "-O2 -march=native" vendor)"
                    done
                done
            } > "$g/decision.txt" 2>&1
        fi
        # shellcheck disable=SC2086
        BUDGET_S=${VERIFY_S:-90} bash collect/scripts/device_verify.sh "$g/v" "$g/jobs.txt" $models
        ;;
    *)
        echo "gemm_h200_guard.sh: unknown stage '$stage' (models, choose, fast, variants, heldout, device, gpu)" >&2
        exit 2
        ;;
    esac
done
