#!/usr/bin/env bash
# MPI scaling on the GPU machine's 16 cores, from the copy bench/mpi/bundle.sh packs (that machine has no
# package registry): gbdt train at 1, 2, 4, 8 and 16 ranks (models compared with the one-rank model) and a
# 5-fold cv at 1 and 5 ranks. Run from the repository root there: bash .dev/mpi/run.sh (reports under $OUT).
set -u
B=$PWD/.dev/mpi
mkdir -p /tmp/mpilib
for f in "$B"/libs/*; do s=$(basename "$f"); ldconfig -p | awk '{print $1}' | grep -qx "$s" || ln -sf "$f" /tmp/mpilib/"$s"; done
export LD_LIBRARY_PATH=/tmp/mpilib:$B/root/usr/lib/x86_64-linux-gnu/openmpi/lib
export OPAL_PREFIX=$B/root/usr PATH=$B/root/usr/bin:$PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
chmod +x "$B/heurist" "$B/root/usr/bin/"*
H=$B/heurist
echo "missing libs:"; ldd "$H" | grep "not found"; ldd "$B/root/usr/bin/mpirun" | grep "not found"
nproc; lscpu | grep -E "Model name|^CPU\(s\)"
T=""; [ -x /usr/bin/time ] && T="/usr/bin/time -f %e_s_%M_KB"
D=datasets/miopen/gfx90878.HIP.fdb.txt.bz2
mpirun -np 2 --bind-to none "$H" --help > /dev/null && echo "mpirun ok"
for n in 1 2 4 8 16; do
  $T mpirun -np $n --bind-to none "$H" train --data $D --task select --model gbdt --config '{"rounds":30}' \
     --threads 1 --out /tmp/m$n.h5 --report "$OUT/train_$n.json" --quiet > /tmp/train_$n.log 2>&1
  echo "train ranks=$n rc=$? $(tail -n 1 /tmp/train_$n.log)"
  "$H" export --model /tmp/m$n.h5 --format lightgbm --out /tmp/m$n.txt > /dev/null && cmp -s /tmp/m1.txt /tmp/m$n.txt && echo "  model identical to 1 rank"
done
grep -h "all-reduce" /tmp/train_*.log | head -5
for n in 1 5; do
  $T mpirun -np $n --bind-to none "$H" cv --data $D --task select --model gbdt --config '{"rounds":30}' --folds 5 \
     --threads 1 --report "$OUT/cv_$n.json" --quiet > /tmp/cv_$n.log 2>&1
  echo "cv ranks=$n rc=$? $(tail -n 1 /tmp/cv_$n.log)"
done
