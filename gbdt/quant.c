/* Exact sums for histogram INT and data-parallel training.
 *
 * Values of magnitude <= 2^e rounded to the grid 2^(e - B) (a power of two, so the rounding and every
 * conversion below are exact) are integers times that grid step. While |sum| < 2^53 steps, every partial sum
 * of them is a double computed exactly, so the sum is the same in any order: the histogram code sums them as
 * doubles, and across processes they travel as int64 counts of grid steps (an exact, order-free MPI_SUM).
 * B = 52 - bits(n_total) keeps n_total values of magnitude <= 2^e below 2^52 steps: about 35 bits of a
 * gradient survive for 10^5 rows, far below anything a split or leaf value can tell apart. */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gbdt_quant_bits(size_t n_total)
{
    int b = 0;
    while (b < 63 && ((size_t)1 << b) <= n_total) b++;
    return 52 - b;
}

int gbdt_quant_exponent(double maxabs, int bits)
{
    if (!(maxabs > 0)) return 0; /* every value is 0: any grid holds them */
    int e;
    frexp(maxabs, &e); /* maxabs < 2^e */
    return e - bits;
}

double gbdt_quant_round(double v, int ue)
{
    return gbdt_quant_round_scaled(v, ldexp(1.0, -ue), ldexp(1.0, ue));
}

int gbdt_comm_active(const hr_comm *c)
{
    return c && c->size > 1 && c->allreduce_i64;
}

int gbdt_quant_allreduce(const hr_comm *c, double *v, size_t n, const int *ue, size_t period)
{
    if (!gbdt_comm_active(c) || n == 0) return HR_OK;
    int64_t *buf = hr_malloc(n * sizeof *buf);
    if (!buf) return HR_ENOMEM;
    for (size_t i = 0; i < n; i++) buf[i] = (int64_t)ldexp(v[i], -ue[i % period]);
    int rc = c->allreduce_i64(c->ctx, buf, n, HR_REDUCE_SUM);
    if (rc == HR_OK)
        for (size_t i = 0; i < n; i++) v[i] = ldexp((double)buf[i], ue[i % period]);
    free(buf);
    return rc;
}

int gbdt_quant_allmax(const hr_comm *c, double *v, size_t n)
{
    if (!gbdt_comm_active(c) || n == 0) return HR_OK;
    int64_t *buf = hr_malloc(n * sizeof *buf);
    if (!buf) return HR_ENOMEM;
    /* the bits of a non-negative double order as an int64 the way the doubles do */
    for (size_t i = 0; i < n; i++) {
        double x = v[i] > 0 ? v[i] : 0.0;
        memcpy(&buf[i], &x, sizeof x);
    }
    int rc = c->allreduce_i64(c->ctx, buf, n, HR_REDUCE_MAX);
    if (rc == HR_OK)
        for (size_t i = 0; i < n; i++) memcpy(&v[i], &buf[i], sizeof v[i]);
    free(buf);
    return rc;
}

int gbdt_quant_gradients(const gbdt_params *p, size_t n, int K, size_t n_total, double *gh, int *ue)
{
    double *mx = hr_calloc(2 * (size_t)K, sizeof *mx);
    if (!mx) return HR_ENOMEM;
    for (int k = 0; k < K; k++) {
        const double *e = gh + 2 * (size_t)k * n;
        double mg = 0, mh = 0;
        for (size_t i = 0; i < n; i++) {
            double a = fabs(e[2 * i]), b = fabs(e[2 * i + 1]);
            mg = a > mg ? a : mg;
            mh = b > mh ? b : mh;
        }
        mx[2 * k] = mg, mx[2 * k + 1] = mh;
    }
    int rc = gbdt_quant_allmax(p->comm, mx, 2 * (size_t)K), bits = gbdt_quant_bits(n_total);
    for (int k = 0; k < 2 * K && rc == HR_OK; k++)
        if (!isfinite(mx[k])) rc = hr_error(HR_EINVAL, "gbdt: class %d's %s are not finite", k / 2, k % 2 ? "hessians" : "gradients");
    for (int k = 0; k < K && rc == HR_OK; k++) {
        ue[2 * k] = gbdt_quant_exponent(mx[2 * k], bits);
        ue[2 * k + 1] = gbdt_quant_exponent(mx[2 * k + 1], bits);
        double *e = gh + 2 * (size_t)k * n;
        double sg = ldexp(1.0, -ue[2 * k]), ig = ldexp(1.0, ue[2 * k]);
        double sh = ldexp(1.0, -ue[2 * k + 1]), ih = ldexp(1.0, ue[2 * k + 1]);
        for (size_t i = 0; i < n; i++) {
            e[2 * i] = gbdt_quant_round_scaled(e[2 * i], sg, ig);
            e[2 * i + 1] = gbdt_quant_round_scaled(e[2 * i + 1], sh, ih);
        }
    }
    free(mx);
    return rc;
}
