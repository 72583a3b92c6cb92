#!/usr/bin/env bash
# Packs a built heurist with Debian's OpenMPI (its mpirun, orted, components and help files) and the shared
# libraries they need into DIR (default .dev/mpi, which the device tool carries), for a machine that has no
# package registry: bench/mpi/run.sh there links the libraries it lacks and points OpenMPI at the copy
# (OPAL_PREFIX). Libraries such a machine is sure to have (OpenBLAS, HDF5, OpenSSL, SQLite, zlib, the C and
# C++ runtimes) stay behind, to keep the copy small.
#   bash bench/mpi/bundle.sh [DIR]     (after cmake --build build --target heurist)
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${1:-.dev/mpi}
M=/usr/lib/x86_64-linux-gnu/openmpi
rm -rf "$R"
mkdir -p "$R/root/usr/bin" "$R/root/usr/lib/x86_64-linux-gnu" "$R/root/usr/share" "$R/libs"
cp -a "$M" "$R/root/usr/lib/x86_64-linux-gnu/"
rm -rf "$R/root/usr/lib/x86_64-linux-gnu/openmpi/include"
cp -a /usr/share/openmpi "$R/root/usr/share/"
cp -L /usr/bin/orterun "$R/root/usr/bin/mpirun"
cp -L /usr/bin/orted "$R/root/usr/bin/orted"
cp build/heurist "$R/heurist"
cp bench/mpi/run.sh "$R/run.sh"
{ ldd build/heurist; ldd /usr/bin/orterun; ldd /usr/bin/orted; for f in "$M"/lib/openmpi3/*.so; do ldd "$f"; done; } 2>/dev/null |
    awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libopenblas|libhdf5_serial|libhdf5_serial_hl|libgfortran|libquadmath|libcrypto|libssl|libsqlite3|libstdc\+\+|libgcc_s|libz|libcurl|libsz|libaec)\.so|ld-linux' |
    while read -r f; do cp -L "$f" "$R/libs/"; done
du -sh "$R"
