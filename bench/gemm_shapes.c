/* Benchmark: OpenBLAS sgemm on the matrix products of one Reformer training step, and the time they set for an
 * epoch. Each product of the step (nn/gamma.c, nn/linear.c: the layouts and shapes they pass to cblas_sgemm)
 * is timed alone on warm operands (best of 5 rounds); their sum times the epoch's steps is the time an epoch
 * spends in matrix products at that throughput, whatever else the step does.
 *
 * usage: gemm_shapes [ROWS BATCH N_IN HIDDEN EXPAND DEPTH KERNELS HEADS]
 *   defaults: 145942 512 76 92 96 3 70 2 (the default Reformer on the gfx90878 training rows: 76 features,
 *   width 92, T width 96, three blocks, 70 kernels, softmax and applicability heads)
 * Run it with OPENBLAS_NUM_THREADS=1 for the one-thread figure. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

typedef struct product {
    char what[40];
    int ta, tb, M, N, K;
} product;

/* seconds per call of C (M, N) += op(A) op(B), row-major, best of 5 rounds */
static double time_product(const product *p)
{
    const size_t na = (size_t)p->M * p->K, nb = (size_t)p->K * p->N, nc = (size_t)p->M * p->N;
    float *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B), *C = calloc(nc, sizeof *C);
    if (!A || !B || !C) {
        fprintf(stderr, "gemm_shapes: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < na; i++) A[i] = (float)(i % 7) * 0.01f;
    for (size_t i = 0; i < nb; i++) B[i] = (float)(i % 5) * 0.01f;
    const int lda = p->ta ? p->M : p->K, ldb = p->tb ? p->K : p->N;
    const double flops = 2.0 * p->M * p->N * p->K;
    const int calls = flops > 5e7 ? 20 : 200;
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        const double t0 = hr_now();
        for (int c = 0; c < calls; c++)
            cblas_sgemm(CblasRowMajor, p->ta ? CblasTrans : CblasNoTrans, p->tb ? CblasTrans : CblasNoTrans, p->M,
                        p->N, p->K, 1.0f, A, lda, B, ldb, 1.0f, C, p->N);
        const double t = (hr_now() - t0) / calls;
        if (t < best) best = t;
    }
    free(A);
    free(B);
    free(C);
    return best;
}

/* p[(*n)++] = one product of block l (a head's for l < 0) */
static void add(product *p, int *n, const char *what, int l, int ta, int tb, int M, int N, int K)
{
    product *q = &p[(*n)++];
    if (l < 0)
        snprintf(q->what, sizeof q->what, "head %s", what);
    else
        snprintf(q->what, sizeof q->what, "block %d %s", l, what);
    q->ta = ta;
    q->tb = tb;
    q->M = M;
    q->N = N;
    q->K = K;
}

static int arg(int argc, char **argv, int i, int def)
{
    return argc > i ? atoi(argv[i]) : def;
}

int main(int argc, char **argv)
{
    const int rows = arg(argc, argv, 1, 145942), Bt = arg(argc, argv, 2, 512), nin = arg(argc, argv, 3, 76);
    const int H = arg(argc, argv, 4, 92), E = arg(argc, argv, 5, 96), L = arg(argc, argv, 6, 3);
    const int K = arg(argc, argv, 7, 70), heads = arg(argc, argv, 8, 2);
    if (rows < Bt || Bt < 1 || nin < 1 || H < 1 || E < 1 || L < 1 || L > 16 || K < 1 || heads < 1 || heads > 2) {
        fprintf(stderr, "usage: gemm_shapes [ROWS BATCH N_IN HIDDEN EXPAND DEPTH KERNELS HEADS(1|2)]\n");
        return 2;
    }
    product p[7 * 16 + 3 * 2]; /* 3 forward and up to 4 backward products a block (16 at most), 3 a head */
    int n = 0;
    for (int l = 0; l < L; l++) { /* forward: A2, A1, A3 (x W^T) */
        const int din = l ? H : nin;
        add(p, &n, "fwd A2", l, 0, 1, Bt, E, din);
        add(p, &n, "fwd A1", l, 0, 1, Bt, H, din);
        add(p, &n, "fwd A3", l, 0, 1, Bt, H, E);
    }
    for (int h = 0; h < heads; h++) { /* the heads: forward, dW, dx */
        add(p, &n, "fwd", -1, 0, 1, Bt, K, H);
        add(p, &n, "dW", -1, 1, 0, K, H, Bt);
        add(p, &n, "dx", -1, 0, 0, Bt, H, K);
    }
    for (int l = L - 1; l >= 0; l--) { /* backward: dA3, dt, d[A1; A2], dx (not for the input) */
        const int din = l ? H : nin;
        add(p, &n, "dA3", l, 1, 0, H, E, Bt);
        add(p, &n, "dt", l, 0, 0, Bt, E, H);
        add(p, &n, "d[A1;A2]", l, 1, 0, H + E, din, Bt);
        if (l) add(p, &n, "dx", l, 0, 0, Bt, din, H + E);
    }
    const long steps = rows / Bt; /* the remainder batch is dropped, as in training */
    double step = 0.0, flops = 0.0;
    printf("%-20s %2s %2s %5s %5s %5s %10s %8s\n", "product", "tA", "tB", "M", "N", "K", "us", "GFLOPS");
    for (int i = 0; i < n; i++) {
        const double t = time_product(&p[i]), f = 2.0 * p[i].M * p[i].N * p[i].K;
        step += t;
        flops += f;
        printf("%-20s %2d %2d %5d %5d %5d %10.2f %8.1f\n", p[i].what, p[i].ta, p[i].tb, p[i].M, p[i].N, p[i].K, t * 1e6,
               f / t * 1e-9);
    }
    /* key=value, for bench/run_reformer_bench.sh */
    printf("impl=gemm products=%d step_gflop=%.3f step_us=%.1f gflops=%.1f steps=%ld products_sec_per_epoch=%.3f\n", n,
           flops * 1e-9, step * 1e6, flops / step * 1e-9, steps, step * steps);
    return 0;
}
