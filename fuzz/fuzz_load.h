/* fuzz: one entry per parser or loader, shared by the libFuzzer targets (fuzz_main.c) and the Criterion
 * test that replays fuzz/regressions/ through the same code in every build (tests/test_cli_hostile.c).
 *
 * fuzz_load(target, bytes) hands the bytes to the loader the way a user's file would reach it (file
 * loaders get a temporary file under $TMPDIR) and returns the loader's status. It must never crash, hang
 * or leak: a bad input is a negative hr_status with a one-line message in hr_last_error().
 */
#ifndef HEURIST_FUZZ_LOAD_H
#define HEURIST_FUZZ_LOAD_H

#include <stddef.h>
#include <stdint.h>

typedef enum fuzz_target {
    FUZZ_FDB,    /* find-db text (data_fdb_parse) */
    FUZZ_KEY,    /* one problem key (data_key_parse) */
    FUZZ_PERFDB, /* perf-db SQLite file (data_perfdb_load of solvers ConvAsm1x1U and EmptySolver; ok if one loads) */
    FUZZ_MODEL,  /* model file (model_load and gbdt_booster_load; ok if one loads) */
    FUZZ_CACHE,  /* dataset cache (data_cache_read) */
    FUZZ_CONFIG, /* config JSON (cJSON, then the gbdt family's key and value checks) */
    FUZZ_TABLE,  /* benchmark-table CSV under a fixed GEMM schema (data_table_parse, then every feature and name) */
    FUZZ_SCHEMA, /* benchmark-table schema JSON (data_table_spec_from_json, its JSON round trip, feature names) */
    FUZZ_CAPS,   /* capability file JSON under a fixed cuBLASLt schema (data_table_rules_parse, its JSON round trip,
                  * the rules on a few configurations) */
    FUZZ_COUNT,
} fuzz_target;

extern const char *const fuzz_target_names[FUZZ_COUNT]; /* "fdb", "key", ...: folder names in fuzz/ */

int fuzz_target_find(const char *name); /* -1 if unknown */
int fuzz_load(int target, const uint8_t *data, size_t size);

#endif
