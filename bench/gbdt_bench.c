/* gbdt training and prediction speed on a synthetic problem.
 * usage: gbdt_bench [rows] [features] [rounds] [threads] */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#include "core/core.h"
#include "gbdt/gbdt.h"

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
    int d = argc > 2 ? atoi(argv[2]) : 30;
    int rounds = argc > 3 ? atoi(argv[3]) : 50;
    int threads = argc > 4 ? atoi(argv[4]) : 0;
    float *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) return 1;
    hr_rng r;
    hr_rng_seed(&r, 1);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < d; j++) x[i * d + j] = hr_rng_normal(&r);
        y[i] = (float)(sin(x[i * d]) + x[i * d + 1] * x[i * d + 2] + 0.1 * hr_rng_normal(&r));
    }
    gbdt_params p;
    gbdt_params_default(&p);
    p.num_rounds = rounds;
    p.num_threads = threads;
    gbdt_data data = {.x = x, .n = n, .d = d, .y = y};
    gbdt_booster *b;
    double t0 = hr_now();
    if (gbdt_booster_train(&p, &data, NULL, NULL, NULL, &b)) {
        fprintf(stderr, "gbdt_bench: %s\n", hr_last_error());
        return 1;
    }
    double t1 = hr_now();
    double sink = 0, out;
    size_t m = n < 100000 ? n : 100000;
    for (size_t i = 0; i < m; i++) {
        gbdt_booster_predict_row(b, x + i * d, &out);
        sink += out;
    }
    double t2 = hr_now();
    printf("train %zu x %d, %d rounds, %d threads: %.3f s (%.1f ms/tree); predict %.2f us/row (%g)\n", n, d, rounds,
           hr_threads_resolve(threads), t1 - t0, 1e3 * (t1 - t0) / rounds, 1e6 * (t2 - t1) / m, sink);
    gbdt_booster_free(b);
    free(x), free(y);
    return 0;
}
