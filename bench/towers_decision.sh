#!/bin/sh
# Decision time of an exported table model (gbdt rank or reformer towers) on held-out GEMM shapes: the median over
# every shape of TEST, repeated, of one <prefix>_rank call over that shape's timed candidates (68-72), one thread.
#   bench/towers_decision.sh RUNTIME_DIR TEST.csv.gz [CC_FLAGS] [vendor]
# RUNTIME_DIR holds heurist_model.{c,h} (heurist export --format c); TEST a table of held-out shapes
# (collect/scripts/split_table.py) with its schema beside it. With "vendor" the call timed is
# <prefix>_rank_vendor (a runtime exported with --guard), each candidate's place in the vendor's list read from
# the schema's vendor column (cuBLASLt's heuristic_rank; empty or -1: not listed), as heurist-collect verify gives
# it. Prints: shapes, candidates (mean), median us, p90 us.
set -e
rt=$1
test=$2
flags=${3:-"-O3 -march=native"}
mode=${4:-rank}
case $mode in
rank) ;;
vendor) flags="$flags -DVENDOR" ;;
*) echo "towers_decision.sh: unknown mode '$mode' (rank, vendor)" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$test" "$work/in.txt" "$mode" <<'PY'
import csv, gzip, json, sys
path, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
schema = json.load(open(path.replace(".csv.gz", ".schema.json")))
prob = schema["problem"] + schema.get("hardware", [])
kern = [k for k in schema["kernel"]]
vendor = schema.get("vendor")
vf = schema.get("vendor_feature") and vendor
if mode == "vendor" and not vendor:
    sys.exit("towers_decision.sh: %s's schema names no vendor column, which mode vendor reads" % path)
shapes, places = {}, {}
with gzip.open(path, "rt") as f:
    for row in csv.DictReader(f):
        key = tuple(row[c] for c in prob)
        k = [row[c] for c in kern]
        r = row[vendor] if vendor else ""
        if vf:
            k.append(r if r not in ("", "-1") else "1024")
        shapes.setdefault(key, []).append(k)
        places.setdefault(key, []).append(r if r != "" else "-1")
with open(out, "w") as f:
    for key, cands in shapes.items():
        f.write("%d %s\n" % (len(cands), " ".join(key)))
        for k in cands:
            f.write(" ".join(k) + "\n")
        if mode == "vendor":
            f.write(" ".join(places[key]) + "\n")
PY
cat > "$work/drv.c" <<'C'
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include "heurist_model.h"
/* a column's token: its category's index when the column has a vocabulary, else the number */
static double value(const char *col, const char *tok)
{
    double c = heurist_model_category(col, tok);
    return c >= 0 ? c : strtod(tok, 0);
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "r");
    static double pv[4096][HEURIST_MODEL_N_PROBLEM], kv[4096][128 * HEURIST_MODEL_N_KERNEL];
    static int n[4096];
    static int16_t place[4096][128];
    static double us[4096 * 50];
    char tok[256];
    int np = 0, reps = 50, total = 0;
    if (!f || argc != 2) return 1;
    while (np < 4096 && fscanf(f, "%d", &n[np]) == 1 && n[np] <= 128) {
        for (int j = 0; j < HEURIST_MODEL_N_PROBLEM; j++) {
            if (fscanf(f, "%255s", tok) != 1) return 1;
            pv[np][j] = value(heurist_model_problem_column(j), tok);
        }
        for (int i = 0; i < n[np] * HEURIST_MODEL_N_KERNEL; i++) {
            if (fscanf(f, "%255s", tok) != 1) return 1;
            kv[np][i] = value(heurist_model_kernel_column(i % HEURIST_MODEL_N_KERNEL), tok);
        }
#ifdef VENDOR
        for (int i = 0; i < n[np]; i++) {
            int v;
            if (fscanf(f, "%d", &v) != 1) return 1;
            place[np][i] = (int16_t)v;
        }
#endif
        total += n[np++];
    }
    float s[128];
    int r[128];
    double sink = 0;
    for (int c = 0; c < reps * np; c++) {
        const int p = c % np;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
#ifdef VENDOR
        heurist_model_rank_vendor(pv[p], kv[p], n[p], place[p], s, r);
#else
        heurist_model_rank(pv[p], kv[p], n[p], s, r);
#endif
        clock_gettime(CLOCK_MONOTONIC, &b);
        sink += r[0];
        us[c] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) * 1e-3;
    }
    qsort(us, (size_t)reps * np, sizeof *us, cmp);
    printf("shapes %d candidates %.1f median_us %.2f p90_us %.2f (%g)\n", np, (double)total / np,
           us[reps * np / 2], us[reps * np * 9 / 10], sink);
    return 0;
}
C
cc -std=c11 $flags -I"$rt" -o "$work/drv" "$work/drv.c" "$rt/heurist_model.c" -lm
"$work/drv" "$work/in.txt"
