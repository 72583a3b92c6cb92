#!/usr/bin/env bash
# Installs the Debian packages heurist needs to build, test and benchmark (as root; skips what is present).
# ninja-build: tools/test.sh and tools/fuzz.sh build their trees with Ninja (make works too, slower).
set -euo pipefail
BUILD_PKGS="build-essential cmake ninja-build pkg-config libopenblas-dev libhdf5-dev libcjson-dev libcriterion-dev libbz2-dev libsqlite3-dev libcairo2-dev zlib1g-dev libcsv-dev clang libopenmpi-dev openmpi-bin"
# the Python package (python/) and its tests: Debian's interpreter with numpy and pytest
PY_PKGS="python3 python3-numpy python3-pytest"
missing=""
for p in $BUILD_PKGS $PY_PKGS ${HEURIST_EXTRA_PKGS:-}; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "heurist: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
