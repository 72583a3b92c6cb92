/* A predictor's calls allocate nothing (include/heurist.h): this test program replaces malloc, calloc and realloc
 * (forwarding to the next definition: the C library's, or the sanitizer's) and counts the calls the testing thread
 * makes while it asks a predictor 1,000 times, on a table model and on a convolution model. Only heurist.h and the
 * tests' helpers, linked against libheurist. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heurist.h"
#include "helpers/testutil.h"

static _Thread_local int counting;
static _Thread_local long allocations;

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);

/* dlsym may itself call calloc before the next calloc is known: those few bytes come from here. */
static _Alignas(16) unsigned char early[4096];
static size_t early_used;
static int resolving;

static void resolve(void)
{
    resolving = 1;
    next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    resolving = 0;
}

static void *early_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (early_used + n > sizeof early) return NULL;
    void *p = early + early_used;
    early_used += n;
    return p;
}

void *malloc(size_t n)
{
    if (!next_malloc) {
        if (resolving) return early_alloc(n);
        resolve();
    }
    allocations += counting;
    return next_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    if (!next_calloc) {
        if (resolving) return early_alloc(n * size); /* early is static: zeroed */
        resolve();
    }
    allocations += counting;
    return next_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    if (!next_realloc) resolve();
    allocations += counting;
    return next_realloc(p, n);
}

void free(void *p)
{
    if ((unsigned char *)p >= early && (unsigned char *)p < early + sizeof early) return;
    if (!next_free) resolve();
    next_free(p);
}

static char *train(const char *data, const char *family, const char *config)
{
    char *mpath = test_tmppath(".h5"), *out, args[2048];
    snprintf(args, sizeof args, "train --data '%s' --task select --model %s --config '%s' --threads 1 --out '%s' "
             "--quiet", data, family, config, mpath);
    cr_assert_eq(test_run_heurist(args, 1, &out), 0, "%s", out);
    free(out);
    return mpath;
}

Test(api_alloc, a_predictor_allocates_nothing_in_1000_calls, .timeout = 300)
{
    /* OpenBLAS on several threads allocates its own job buffers in every matrix product (the Reformer's chunks):
     * the test counts heurist's allocations, with OpenBLAS on one thread as ctest runs it (and as heurist.h
     * advises for a predictor per thread) */
    void (*blas_threads)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (blas_threads) blas_threads(1);
    char *csv = test_tmppath(".csv"), args[1024];
    snprintf(args, sizeof args, "'%s' --problems 40 --seed 5 --out '%s'", HEURIST_GEN_GEMM_TABLE, csv);
    cr_assert_eq(system(args), 0, "%s", args);
    char *fdb = test_fdb_synthetic_write(200, 0);
    /* gbdt and the Reformer's towers and pairs on the table, gbdt on the convolutions */
    char *paths[4] = {train(csv, "gbdt", "{\"objective\":\"rank\",\"rounds\":3}"),
                      train(csv, "reformer", "{\"mode\":\"towers\",\"epochs\":1}"),
                      train(csv, "reformer", "{\"mode\":\"pairs\",\"epochs\":1}"), train(fdb, "gbdt", "{\"rounds\":2}")};
    const char *table = "M=128,N=4096,K=4096,dtype=bf16";
    const char *problem[4] = {table, table, table, "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F"};
    const char *what[4] = {"gbdt table", "reformer towers table", "reformer pairs table", "gbdt convolution"};
    for (int t = 0; t < 4; t++) {
        heurist_model *m;
        heurist_predictor *p;
        cr_assert_eq(heurist_model_load(paths[t], &m), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_eq(heurist_predictor_create(m, &p), HEURIST_OK, "%s", heurist_last_error());
        int K = heurist_model_kernel_count(m), np = heurist_model_problem_count(m), nc = heurist_model_config_count(m);
        int idx[8], n = 0;
        float score[8];
        double pv[64];
        /* the problem's values, and for the table a candidate matrix of the model's first configurations */
        cr_assert_eq(heurist_predictor_rank(p, problem[t], NULL, 0, 8, idx, score, &n), HEURIST_OK, "%s",
                     heurist_last_error());
        double *kv = calloc((size_t)(nc ? nc : 1) * 4, sizeof *kv);
        for (int j = 0; j < np; j++) pv[j] = 0;
        if (t < 3) {
            pv[0] = 128, pv[1] = 4096, pv[2] = 4096;
            for (int v = 0; v < heurist_model_category_count(m, 3); v++)
                if (!strcmp(heurist_model_category_name(m, 3, v), "bf16")) pv[3] = v;
            for (int r = 0; r < 4; r++)
                for (int j = 0; j < nc; j++) kv[r * nc + j] = j == 4 ? 1 : 64; /* tiles 64, stages 64, split 1 */
        }
        allocations = 0;
        counting = 1;
        for (int i = 0; i < 1000; i++) {
            int rc = heurist_predictor_rank(p, problem[t], NULL, 0, 8, idx, score, &n);
            if (!rc && t < 3 && i % 2) rc = heurist_predictor_rank_values(p, pv, NULL, 0, 8, idx, score, &n);
            if (!rc && t < 3 && i % 3 == 0) rc = heurist_predictor_rank_values(p, pv, kv, 4, 4, idx, score, &n);
            if (rc) {
                counting = 0;
                cr_assert_fail("call %d: %s", i, heurist_last_error());
            }
        }
        counting = 0;
        cr_expect_eq(allocations, 0, "%s model: %ld allocations in 1,000 calls (%d kernels)", what[t],
                     allocations, K);
        heurist_predictor_free(p);
        heurist_model_free(m);
        free(kv);
        remove(paths[t]);
        free(paths[t]);
    }
    remove(csv);
    strcpy(strstr(csv, ".csv"), ".schema.json");
    remove(csv);
    remove(fdb);
    free(csv);
    free(fdb);
}
