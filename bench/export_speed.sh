#!/usr/bin/env bash
# Time of one problem through an exported C runtime: median and p90 over 2,000 problem keys of the MI100
# find-db, each call (key parse + features + model, hm_select_key without scores) timed on its own, one
# thread. The runtime is built twice, with the portable `cc -O2` and with the recommended
# `cc -O3 -march=native` (see the exported header); CFLAGS="..." times one build with those flags instead.
# usage: bench/export_speed.sh MODEL.h5 [HEURIST_BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=$1
heurist=${2:-$root/build/heurist}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$heurist" export --model "$model" --format c --out "$dir" --prefix hm >/dev/null
(bzcat "$root/datasets/miopen/gfx90878.HIP.fdb.txt.bz2" || true) | head -n 2000 | cut -d= -f1 > "$dir/keys.txt"
cat > "$dir/time.c" <<'C'
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hm.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
    static char keys[2000][256]; static double t[2000]; int n = 0;
    FILE *f = fopen(argv[1], "r");
    while (n < 2000 && fgets(keys[n], 256, f)) { keys[n][strcspn(keys[n], "\n")] = 0; n++; }
    volatile int sink = 0;
    for (int i = 0; i < n; i++) sink += hm_select_key(keys[i], NULL); /* warm-up */
    for (int i = 0; i < n; i++) { double t0 = now(); sink += hm_select_key(keys[i], NULL); t[i] = now() - t0; }
    qsort(t, n, sizeof *t, cmp);
    printf("exported runtime (cc %s): median %.2f us, p90 %.2f us per problem (key parse + features + model), %d problems\n", argv[2], t[n / 2], t[n * 9 / 10], n);
    return sink == -12345;
}
C
if [ -n "${CFLAGS:-}" ]; then builds=("$CFLAGS"); else builds=("-O2" "-O3 -march=native"); fi
for flags in "${builds[@]}"; do
  cc $flags -std=c11 -o "$dir/time" "$dir/time.c" "$dir/hm.c" -lm
  "$dir/time" "$dir/keys.txt" "$flags"
done
