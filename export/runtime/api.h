/* The runtime's API behind the exported functions: a problem from its fields or its key, its features
 * (data/portable.h), and the family's hm_model_select / hm_model_tune.
 *
 * Copied into every exported runtime by section (export/export.c writes the functions named by the
 * prefix around these, and HM_N_KERNELS (select) or HM_LENGTH (tune) before them) and compiled as it is
 * by tests/test_export_runtime.c, which checks keys and features against data/'s parser and features.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "data/portable.h"

/* @section problem */
static void hm_problem(data_problem *p, const long long *fields, int layout, int dtype, int direction)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < DATA_FIELD_COUNT; i++) p->f[i] = (int64_t)fields[i];
    p->layout = (int8_t)layout;
    p->dtype = (int8_t)dtype;
    p->direction = (int8_t)direction;
    p->precision = DATA_PRECISION_TF32;
}

/* A find-db problem key, up to an '=' when a whole find-db line is given; 0, or -1 when it does not parse */
static int hm_key_parse(const char *key, data_problem *p)
{
    const char *why;
    const char *eq = strchr(key, '=');
    return data_portable_key_parse(key, eq ? (size_t)(eq - key) : strlen(key), p, &why);
}

/* @section select */
/* a family may define its own hm_model_select (and HM_MODEL_SELECT), e.g. to skip work the choice alone
 * does not need; this one ranks hm_model_scores, the first of the highest scores winning */
#ifndef HM_MODEL_SELECT
static int hm_model_select(const data_problem *p, const float *x, float *scores)
{
    float s[HM_N_KERNELS];
    hm_model_scores(p, x, s);
    int best = 0;
    for (int k = 1; k < HM_N_KERNELS; k++)
        if (s[k] > s[best]) best = k;
    if (scores) memcpy(scores, s, sizeof s);
    return best;
}
#endif

/* hm_refused[c][k] (written beside the kernel names): 1 when precision class c refuses kernel k of an FP32 problem
 * (data_portable_precision_allows), which is then never the pick and scores -INFINITY */
static int hm_select(const data_problem *p, float *scores)
{
    float x[DATA_N_FEATURES];
    data_portable_features(p, x);
    if (p->dtype != DATA_DTYPE_FP32 || p->precision < 0 || p->precision >= DATA_PRECISION_COUNT)
        return hm_model_select(p, x, scores);
    float s[HM_N_KERNELS];
    hm_model_select(p, x, s);
    int best = -1;
    for (int k = 0; k < HM_N_KERNELS; k++) {
        if (hm_refused[p->precision][k]) s[k] = -INFINITY;
        if (best < 0 || s[k] > s[best]) best = k;
    }
    if (scores) memcpy(scores, s, sizeof s);
    return best;
}

/* @section guard */
/* The vendor guard (data_portable_guard, with HM_GUARD_TOP and HM_GUARD_MARGIN written before this section) given
 * the vendor's ranked list in the model's kernel indices: vendor[0] its first pick; an entry out of range (a kernel
 * the model does not know) keeps its place in the ranking and names no kernel */
static int hm_select_vendor(const data_problem *p, const int *vendor, int n_vendor, float *scores)
{
    float s[HM_N_KERNELS];
    int16_t rank[HM_N_KERNELS];
    hm_select(p, s);
    for (int k = 0; k < HM_N_KERNELS; k++) rank[k] = -1;
    for (int r = n_vendor < INT16_MAX ? n_vendor - 1 : INT16_MAX - 1; r >= 0; r--)
        if (vendor[r] >= 0 && vendor[r] < HM_N_KERNELS) rank[vendor[r]] = (int16_t)r;
    int pick = data_portable_guard(s, HM_N_KERNELS, rank, HM_GUARD_TOP, HM_GUARD_MARGIN);
    if (scores) memcpy(scores, s, sizeof s);
    return pick;
}

/* @section tune */
static void hm_tune(const data_problem *p, int values[])
{
    float x[DATA_N_FEATURES];
    int32_t v[HM_LENGTH];
    data_portable_features(p, x);
    hm_model_tune(p, x, v);
    for (int j = 0; j < HM_LENGTH; j++) values[j] = v[j];
}
