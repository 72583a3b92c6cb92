#!/usr/bin/env bash
# Packs what bench/gbdt_vs_lightgbm.sh needs onto a machine without a package registry or a LightGBM build (the
# GPU machine's 16 quiet cores, say): heurist's gbdt_select_bench from BUILD, the LightGBM C API library and
# header of a tree you built, the lgbm_bench driver compiled here, GNU time and bc, and the few shared libraries
# they load that such a machine may lack (cJSON, libcsv, bzip2, OpenMP's runtime, readline; the machine's own
# C and C++ runtimes, OpenBLAS and HDF5 serve the rest), into DIR (default .dev/gbench, which the device tool carries). There:
#   bash DIR/run.sh [gbdt_vs_lightgbm.sh options]      (runs the script against the copy)
#   bash bench/lightgbm/bundle.sh --build BUILD --lightgbm LIGHTGBM [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build
lgb=
R=.dev/gbench
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --lightgbm) lgb=$2; shift 2 ;;
    --out) R=$2; shift 2 ;;
    *) echo "bundle.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$build/gbdt_select_bench" ] || { echo "bundle.sh: $build/gbdt_select_bench not built" >&2; exit 2; }
[ -n "$lgb" ] && [ -f "$lgb/lib_lightgbm.so" ] || { echo "bundle.sh: pass --lightgbm DIR (DIR/lib_lightgbm.so)" >&2; exit 2; }
rm -rf "$R"
mkdir -p "$R/build" "$R/lgb/include/LightGBM" "$R/cache/lightgbm" "$R/libs" "$R/bin"
cp "$build/gbdt_select_bench" "$R/build/"
cp -L "$lgb/lib_lightgbm.so" "$R/lgb/"
cp "$lgb/include/LightGBM/c_api.h" "$R/lgb/include/LightGBM/"
cp "$lgb/VERSION.txt" "$R/lgb/" 2>/dev/null || true
cc -O2 -w -I"$lgb/include" bench/lightgbm/lgbm_bench.c -o "$R/cache/lightgbm/lgbm_bench" -L"$lgb" -l_lightgbm -lm
cp /usr/bin/time /usr/bin/bc "$R/bin/"
{ ldd "$build/gbdt_select_bench"; ldd "$lgb/lib_lightgbm.so"; ldd /usr/bin/bc; } 2>/dev/null | awk '$3 ~ /^\// {print $3}' |
  sort -u | grep -E '/(libcjson|libcsv|libbz2|libgomp|libreadline|libtinfo)\.so' | while read -r f; do cp -L "$f" "$R/libs/"; done
# the commit the binaries were built from (the copy of the tree there may carry another)
git rev-parse --short HEAD > "$R/REV" 2>/dev/null || echo '?' > "$R/REV"
cat > "$R/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs bench/gbdt_vs_lightgbm.sh (from the repository root) against this bundle's binaries and libraries.
set -euo pipefail
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$B/lgb:$B/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PATH="$B/bin:$PATH"
export HEURIST_REV="$(cat "$B/REV")"
touch "$B/cache/lightgbm/lgbm_bench"   # newer than the driver's source: the script uses it as built
exec bash bench/gbdt_vs_lightgbm.sh --build "$B/build" --lightgbm "$B/lgb" --cache "$B/cache" "$@"
RUN
du -sh "$R"
