/* Helpers shared by the gbdt tests: TSV loading and synthetic data. Header-only so that the tests of
 * other layers do not link it. */
#ifndef HEURIST_TEST_GBDT_UTIL_H
#define HEURIST_TEST_GBDT_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "gbdt/gbdt.h"

/* Reads a tab-separated numeric table ("nan" allowed) into *out (rows, cols) floats. */
static inline int tgb_read_tsv(const char *path, float **out, size_t *rows, int *cols)
{
    char *buf;
    size_t len;
    if (hr_file_read_all(path, &buf, &len)) return -1;
    size_t r = 0, cap = 1024;
    int c = -1;
    float *v = malloc(cap * sizeof *v);
    size_t nv = 0;
    char *s = buf;
    while (*s) {
        char *eol = strchr(s, '\n');
        if (!eol) eol = s + strlen(s);
        int k = 0;
        char *p = s;
        while (p < eol) {
            char *e;
            double x = strtod(p, &e);
            if (e == p) break;
            if (nv == cap) v = realloc(v, (cap *= 2) * sizeof *v);
            v[nv++] = (float)x;
            k++;
            p = e;
            while (p < eol && (*p == '\t' || *p == ' ' || *p == '\r')) p++;
        }
        if (k > 0) {
            if (c < 0) c = k;
            if (k != c) {
                free(v);
                free(buf);
                return -1;
            }
            r++;
        }
        s = *eol ? eol + 1 : eol;
    }
    free(buf);
    *out = v;
    *rows = r;
    *cols = c;
    return 0;
}

/* y = sin(3 x0) + x1^2 - 0.5 x2 + noise, x uniform in [-1, 1]^d */
static inline void tgb_make_regression(uint64_t seed, size_t n, int d, float *x, float *y)
{
    hr_rng r;
    hr_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < d; j++) x[i * d + j] = 2 * hr_rng_uniform(&r) - 1;
        const float *xi = x + i * d;
        y[i] = sinf(3 * xi[0]) + xi[1] * xi[1] - 0.5f * xi[2] + 0.05f * hr_rng_normal(&r);
    }
}

/* K classes by the argmax of K fixed linear functions of x (d >= 2) */
static inline void tgb_make_classes(uint64_t seed, size_t n, int d, int K, float *x, float *y)
{
    hr_rng r;
    hr_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < d; j++) x[i * d + j] = 2 * hr_rng_uniform(&r) - 1;
        int best = 0;
        double bv = -1e30;
        for (int k = 0; k < K; k++) {
            double a = cos(2 * 3.14159265358979323846 * k / K), b = sin(2 * 3.14159265358979323846 * k / K);
            double v = a * x[i * d] + b * x[i * d + 1];
            if (v > bv) bv = v, best = k;
        }
        y[i] = (float)best;
    }
}

static inline int tgb_argmax(const double *p, int K)
{
    int b = 0;
    for (int k = 1; k < K; k++)
        if (p[k] > p[b]) b = k;
    return b;
}

#endif
