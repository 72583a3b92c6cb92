/* api_rank: the time of the C API's ranking calls (include/heurist.h), the figure a language binding's overhead
 * is measured against.
 *
 *   api_rank MODEL.h5 PROBLEM [--calls N] [--batch N] [--k K] [--threads T]
 *
 * single: heurist_predictor_rank of PROBLEM (text) and heurist_predictor_rank_values of its values, N calls each
 * (default 2000) after a warm-up, k best (default 8); batch: heurist_rank_values_batch of N problems (default
 * 10,000: PROBLEM's values with its first numeric column scaled by 1..8) over T threads (default 1). Prints
 * microseconds per problem. Only heurist.h: it measures what a program linked with libheurist sees. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heurist.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "api_rank: %s: %s\n", what, heurist_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: api_rank MODEL.h5 PROBLEM [--calls N] [--batch N] [--k K] [--threads T]\n");
        return 2;
    }
    int calls = 2000, batch = 10000, k = 8, threads = 1;
    for (int i = 3; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--calls")) calls = v;
        else if (!strcmp(argv[i], "--batch")) batch = v;
        else if (!strcmp(argv[i], "--k")) k = v;
        else if (!strcmp(argv[i], "--threads")) threads = v;
        else {
            fprintf(stderr, "api_rank: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (calls < 1 || batch < 1 || k < 1 || threads < 0) {
        fprintf(stderr, "api_rank: --calls, --batch and --k take a positive count, --threads 0 or more\n");
        return 2;
    }
    heurist_model *m;
    heurist_predictor *p;
    if (heurist_model_load(argv[1], &m)) return fail(argv[1]);
    if (heurist_predictor_create(m, &p)) return fail("heurist_predictor_create");
    int np = heurist_model_problem_count(m), n = 0, *index = malloc((size_t)k * sizeof *index);
    float *score = malloc((size_t)k * sizeof *score);
    double *pv = malloc((size_t)np * sizeof *pv);
    if (heurist_model_problem_parse(m, argv[2], pv)) return fail(argv[2]);
    /* warm-up: page in the model and the workspace */
    for (int i = 0; i < 50; i++)
        if (heurist_predictor_rank(p, argv[2], NULL, 0, k, index, score, &n)) return fail("heurist_predictor_rank");
    double t0 = now();
    for (int i = 0; i < calls; i++) heurist_predictor_rank(p, argv[2], NULL, 0, k, index, score, &n);
    double text_us = (now() - t0) / calls * 1e6;
    t0 = now();
    for (int i = 0; i < calls; i++) heurist_predictor_rank_values(p, pv, NULL, 0, k, index, score, &n);
    double values_us = (now() - t0) / calls * 1e6;
    printf("model %s: %d kernels, problem %s: %d ranked, best %s\n", argv[1], heurist_model_kernel_count(m), argv[2], n,
           heurist_model_kernel_name(m, index[0]));
    printf("single (text)   heurist_predictor_rank         %10.2f us/problem (%d calls, k=%d)\n", text_us, calls, k);
    printf("single (values) heurist_predictor_rank_values  %10.2f us/problem (%d calls, k=%d)\n", values_us, calls, k);
    /* the batch: the problem with its first numeric column scaled, so the problems differ */
    int col = 0;
    while (col < np && heurist_model_category_count(m, col) > 0) col++;
    double *problems = malloc((size_t)batch * (size_t)np * sizeof *problems);
    int *top = malloc((size_t)batch * (size_t)k * sizeof *top);
    for (int i = 0; i < batch; i++) {
        memcpy(problems + (size_t)i * np, pv, (size_t)np * sizeof *pv);
        if (col < np) problems[(size_t)i * np + col] *= 1 + i % 8;
    }
    t0 = now();
    if (heurist_rank_values_batch(m, problems, batch, NULL, 0, k, threads, top)) return fail("heurist_rank_values_batch");
    double batch_us = (now() - t0) / batch * 1e6;
    printf("batch           heurist_rank_values_batch      %10.2f us/problem (%d problems, k=%d, %d threads)\n", batch_us,
           batch, k, threads);
    free(problems), free(top), free(pv), free(index), free(score);
    heurist_predictor_free(p);
    heurist_model_free(m);
    return 0;
}
