/* A small cuBLASLt-style GEMM benchmark table with its schema and capability file (the formats heurist-collect
 * writes), for the tests of --task tune on a table. */
#ifndef HEURIST_TEST_GEMM_CAPS_FIXTURE_H
#define HEURIST_TEST_GEMM_CAPS_FIXTURE_H

/* The capability file the fixture writes: bf16 algos 5 (tiles and stages left empty: the table's; split-K, mask
 * 7, swizzle), 11 (no split-K, custom_option up to 1) and 21 (tiles 64x64, 128x64, 64x128; stages 32x3, 32x4;
 * mask 2; custom_option up to 1); fp32 algos 5 and 21 alike; cluster shapes 0x0, 1x1, 2x1. */
extern const char gemm_caps_fixture_caps[];

/* Writes `problems` problems (bf16 and fp32 in turn, sizes from a fixed list, K from 64 up) with their valid
 * configurations (a seeded subset, at least 4 a problem) and analytic times to DIR/gemm.csv, DIR/gemm.schema.json
 * and DIR/gemm.caps.json in a fresh folder; the heuristic_rank column ranks two of each problem's configurations.
 * Returns the CSV path (malloc'd). */
char *gemm_caps_fixture_write(int problems, unsigned seed);

#endif
