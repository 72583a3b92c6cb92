/* verify_models: the exported runtimes a heurist-collect build verifies, several in one run (so that the
 * exhaustive timing and the vendor's figures of a problem are measured once, and every model's picks are
 * re-timed interleaved with the same baseline).
 *
 * CMake writes the registry (verify_models.c in the build folder) from HEURIST_COLLECT_MODEL_DIR, a list of
 * folders each holding one runtime of `heurist export --format c --prefix P` (P.c and P.h; P distinct across
 * the folders): a selection model of a find-db (P_select_key) verifies convolutions, a table model of the
 * cuBLASLt GEMM table (P_rank, which ranks candidates, or P_tune, which writes a configuration; P_tune_vendor
 * where it has the vendor guard) GEMMs. A model's name in the report is its prefix.
 */
#ifndef HEURIST_COLLECT_VERIFY_MODELS_H
#define HEURIST_COLLECT_VERIFY_MODELS_H

#include "gemm.h"

/* A selection model: scores (n_kernels) for a problem key, its chosen kernel's index, -1 when the key does
 * not parse; a runtime exported with the vendor guard (heurist export --guard) also takes cuDNN's ranked list in
 * its kernel indices (select_key_vendor, NULL for others), and verify decides with it. */
typedef struct verify_select_model {
    const char *name;
    int (*n_kernels)(void);
    const char *(*kernel_name)(int k);
    int (*select_key)(const char *key, float *scores);
    int (*select_key_vendor)(const char *key, const int *vendor, int n_vendor, float *scores);
} verify_select_model;

/* A table model: its columns (collect_gemm_model_api) and the ranking of n candidate configurations; a runtime
 * exported with the vendor guard (heurist export --guard) also ranks them given each one's place in cuBLASLt's
 * list (rank_vendor, NULL for others), and verify decides with it. */
typedef struct verify_table_model {
    const char *name;
    collect_gemm_model_api api;
    int (*rank)(const double *pv, const double *kv, int n, float *scores, int *ranking);
    int (*n_configs)(void);
    int (*rank_vendor)(const double *pv, const double *kv, int n, const int16_t *vendor_rank, float *scores,
                       int *ranking);
} verify_table_model;

/* A tune model of the GEMM table (export/runtime/table_tune.h): its columns, the text of a category, and the
 * configuration it writes for a shape given n candidate configurations kv (the index of the candidate it is, -1
 * when none is, -2 on bad arguments). A runtime exported with the vendor guard (heurist export --guard M) also
 * writes it given cuBLASLt's first pick (first, in the model's kernel columns): the decoded configuration stands
 * only where its score beats the first pick's by guard_margin, otherwise values is the first pick (tune_vendor,
 * NULL and guard_margin 0 for others), and verify decides with it. */
typedef struct verify_tune_model {
    const char *name;
    collect_gemm_model_api api;
    const char *(*category_name)(const char *column, int value);
    int (*tune)(const double *pv, const double *kv, int n, double *values);
    int (*tune_vendor)(const double *pv, const double *kv, int n, const double *first, double *values);
    float guard_margin;
} verify_tune_model;

extern const verify_select_model verify_select_models[];
extern const int verify_n_select_models;
extern const verify_table_model verify_table_models[];
extern const int verify_n_table_models;
extern const verify_tune_model verify_tune_models[];
extern const int verify_n_tune_models;

#endif
