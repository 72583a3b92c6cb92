#!/bin/sh
# Installs the build into a temporary prefix and builds a program against the installed C API the way README
# shows (`pkg-config --cflags --libs heurist`), then runs it and the installed command with no LD_LIBRARY_PATH:
# the failure this catches is `libheurist.so.1: cannot open shared object file`.
#   tests/install_check.sh BUILD_DIR C_COMPILER SANITIZE(ON|OFF)
set -eu
build=$1 cc=$2 sanitize=$3
prefix=$(mktemp -d "${TMPDIR:-/tmp}/heurist-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/heurist"
test -f "$prefix/include/heurist.h"
pc=$(dirname "$(find "$prefix" -name heurist.pc | head -n 1)")
test -n "$pc"
soname=$(objdump -p "$(find "$prefix" -name 'libheurist.so.1*' | head -n 1)" | awk '/SONAME/ {print $2}')
test "$soname" = libheurist.so.1 || { echo "SONAME is '$soname', expected libheurist.so.1"; exit 1; }
cat > "$prefix/app.c" <<'APP'
#include <stdio.h>
#include "heurist.h"
int main(void)
{
    heurist_model *m;
    /* a file that is no model: the library answers with its message */
    if (heurist_model_load("/nonexistent.h5", &m) == HEURIST_OK) return 1;
    printf("api %d: %s\n", heurist_api_version(), heurist_last_error());
    return heurist_api_version() == HEURIST_API_VERSION ? 0 : 1;
}
APP
flags=
[ "$sanitize" = ON ] && flags="-fsanitize=address,undefined"
# shellcheck disable=SC2046 # pkg-config's words are the compiler's arguments
"$cc" $flags "$prefix/app.c" -o "$prefix/app" $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs heurist)
env -u LD_LIBRARY_PATH "$prefix/app"
env -u LD_LIBRARY_PATH "$prefix/bin/heurist" --help >/dev/null
echo "install check: ok"
