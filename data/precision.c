/* Precision classes of a find-db's problems (data/portable.h, DATA_PRECISION_LIST).
 *
 * An FP32 convolution is one problem per class it is asked under: the class restricts its candidates (a kernel
 * of a math type the class refuses is not one of them, whatever the find-db measured), so every layer above sees
 * a class as part of the problem: labels, scores and picks never leave it, and the vendor's ranking of a class is
 * read from that class's own sidecar (data/vendor.c). A find-db as heurist-collect writes it keys its FP32
 * problems without a class: each such line becomes the rows of the classes asked for (data_load_opts.precisions),
 * keyed with the class's suffix ("_strict", "_conversion"; TF32, the default, has none), or the TF32 row alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

int data_precision_list_parse(const char *s, int *mask)
{
    *mask = 0;
    if (!s || !*s) return hr_error(HR_EINVAL, "--precision: empty list (strict, tf32, conversion or all)");
    if (!strcmp(s, "all")) {
        *mask = DATA_PRECISION_ALL;
        return HR_OK;
    }
    const char *at = s;
    while (*at) {
        const char *comma = strchr(at, ',');
        size_t n = comma ? (size_t)(comma - at) : strlen(at);
        int found = -1;
        for (int c = 0; c < DATA_PRECISION_COUNT; c++)
            if (strlen(data_portable_precision_name(c)) == n && !strncmp(at, data_portable_precision_name(c), n)) found = c;
        if (found < 0)
            return hr_error(HR_EINVAL, "--precision %s: '%.*s' is no precision class (strict, tf32, conversion or all)", s,
                            (int)n, at);
        *mask |= 1 << found;
        at += n + (comma != NULL);
    }
    return HR_OK;
}

/* 1 when the find-db key key[0..len) names a precision class in a suffix of its direction field ("_strict", ...). */
static int key_has_class(const char *key)
{
    const char *dash = strrchr(key, '-');
    if (!dash) return 0;
    for (const char *u = strchr(dash, '_'); u; u = strchr(u + 1, '_')) {
        size_t n = strcspn(u + 1, "_");
        for (int c = 0; c < DATA_PRECISION_COUNT; c++)
            if (strlen(data_portable_precision_name(c)) == n && !strncmp(u + 1, data_portable_precision_name(c), n))
                return 1;
    }
    return 0;
}

static int expand(data_select *ds, int classes)
{
    if (!classes || classes == (1 << DATA_PRECISION_TF32)) return HR_OK;
    int K = ds->n_kernels, n = 0, nc = 0, order[DATA_PRECISION_COUNT];
    for (int c = 0; c < DATA_PRECISION_COUNT; c++)
        if (classes & (1 << c)) order[nc++] = c;
    for (int i = 0; i < ds->n; i++)
        n += ds->problems[i].dtype == DATA_DTYPE_FP32 && !key_has_class(ds->keys[i]) ? nc : 1;
    data_problem *p = hr_malloc((size_t)n * sizeof *p);
    char **keys = hr_calloc((size_t)n, sizeof *keys);
    float *rt = hr_malloc((size_t)n * (size_t)K * sizeof *rt);
    int rc = p && keys && rt && !ds->vendor_rank ? HR_OK : HR_ENOMEM;
    if (!rc && ds->vendor_rank) rc = hr_error(HR_EINVAL, "precision classes are set before the vendor's rankings are read");
    int at = 0;
    for (int i = 0; !rc && i < ds->n; i++) {
        int fp32 = ds->problems[i].dtype == DATA_DTYPE_FP32 && !key_has_class(ds->keys[i]);
        for (int j = 0; j < (fp32 ? nc : 1); j++, at++) {
            p[at] = ds->problems[i];
            memcpy(rt + (size_t)at * K, ds->runtime + (size_t)i * K, (size_t)K * sizeof *rt);
            const char *name = fp32 && order[j] != DATA_PRECISION_TF32 ? data_portable_precision_name(order[j]) : NULL;
            if (fp32) p[at].precision = (int8_t)order[j];
            size_t len = strlen(ds->keys[i]) + (name ? strlen(name) + 2 : 1);
            if (!(keys[at] = hr_malloc(len))) {
                rc = HR_ENOMEM;
                break;
            }
            snprintf(keys[at], len, name ? "%s_%s" : "%s", ds->keys[i], name);
        }
    }
    if (rc) {
        for (int i = 0; keys && i < n; i++) free(keys[i]);
        free(keys);
        free(p);
        free(rt);
        return rc;
    }
    for (int i = 0; i < ds->n; i++) free(ds->keys[i]);
    free(ds->keys);
    free(ds->problems);
    free(ds->runtime);
    ds->keys = keys;
    ds->problems = p;
    ds->runtime = rt;
    ds->n = n;
    return HR_OK;
}

/* Refuses, in every FP32 row, the kernels its class does not allow (their times become INFINITY), then drops the
 * rows left with no kernel, counted in the skips. */
static int mask_rows(data_select *ds)
{
    int K = ds->n_kernels;
    unsigned char *allowed = hr_malloc((size_t)(K > 0 ? K : 1) * DATA_PRECISION_COUNT);
    if (!allowed) return HR_ENOMEM;
    for (int c = 0; c < DATA_PRECISION_COUNT; c++)
        for (int k = 0; k < K; k++)
            allowed[c * K + k] = (unsigned char)data_portable_precision_allows(c, DATA_DTYPE_FP32, ds->kernels[k],
                                                                                strlen(ds->kernels[k]));
    int kept = 0;
    for (int i = 0; i < ds->n; i++) {
        const data_problem *p = &ds->problems[i];
        float *t = ds->runtime + (size_t)i * K;
        int any = 0;
        for (int k = 0; k < K; k++) {
            if (p->dtype == DATA_DTYPE_FP32 && !allowed[p->precision * K + k]) t[k] = INFINITY;
            any |= isfinite(t[k]) != 0;
        }
        if (!any) {
            data_skips_add(&ds->skips, "no kernel of its precision class", 0);
            free(ds->keys[i]);
            continue;
        }
        if (kept != i) {
            ds->problems[kept] = ds->problems[i];
            ds->keys[kept] = ds->keys[i];
            memmove(ds->runtime + (size_t)kept * K, t, (size_t)K * sizeof *t);
        }
        kept++;
    }
    ds->n = kept;
    free(allowed);
    return HR_OK;
}

int data_precision_apply(data_select *ds, int classes)
{
    int rc = expand(ds, classes);
    return rc ? rc : mask_rows(ds);
}
