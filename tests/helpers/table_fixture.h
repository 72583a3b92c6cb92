/* A generated GEMM benchmark table (tests/gen/gemm_table.c) loaded for the table model tests: its problem
 * features, a fixed train / validation / test partition of its problems, and gbdt models trained on it. */
#ifndef HEURIST_TEST_TABLE_FIXTURE_H
#define HEURIST_TEST_TABLE_FIXTURE_H

#include "data/table.h"
#include "models/model.h"

typedef struct table_fixture {
    char *path;        /* the CSV (its schema beside it); NULL from table_fixture_from_select */
    data_select *sel;  /* with sel->table */
    float *X;          /* (n, F) problem features */
    int F;
    int *train, *valid, *test;
    int n_train, n_valid, n_test;
} table_fixture;

/* Generates a table of `problems` problems (seed, noise) with gen_gemm_table and loads it; problem i is a test
 * problem when i % 5 == 0, a validation one when i % 10 == 1, a training one otherwise. */
table_fixture table_fixture_make(int problems, int seed, double noise);
/* The fixture of a table already loaded (sel->table set; the fixture owns sel from then on): its problem features
 * and the partition above, and no file (path NULL). */
table_fixture table_fixture_from_select(data_select *sel);
void table_fixture_free(table_fixture *f);
/* Trains family `family` with JSON config `config` (seed 1, one thread) on the fixture's partition. */
model *table_fixture_train(const table_fixture *f, const char *family, const char *config);
/* scores (n_test, n_kernels) of the test problems over every configuration of the data through
 * model_predict_candidates, -INFINITY where the configuration was not measured for the problem; malloc'd. */
float *table_fixture_test_scores(const table_fixture *f, const model *m);

#endif
