/* A model never scores a kernel outside an FP32 problem's precision class (models/predict.c, models/applicability.c),
 * whatever it learned from the other classes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "eval/eval.h"
#include "models/model.h"

/* A problem's values, from its key. */
typedef struct problem {
    double v[DATA_CODEC_MAX_VALUES];
} problem;

static problem parse_ok(const char *key)
{
    data_problem p;
    const char *why = NULL;
    cr_assert_eq(data_key_parse(key, strlen(key), &p, &why), HR_OK, "key %s: %s", key, why ? why : "");
    problem q;
    data_problem_values(&p, q.v);
    return q;
}

/* FP32 forward problems, each kernel a math type of one algorithm, the conversion kernel the fastest: the first in
 * every class, two more in the conversion class alone, so that kernel is the one most often fastest. */
static const char fdb[] =
    "8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F=A.tensor_op_allow_conversion:1,0,x;A.tensor_op:2,0,x;A.default:3,0,x;"
    "A.fma:4,0,x;B.fma:5,0,x\n"
    "9-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F_conversion=A.tensor_op_allow_conversion:1,0,x;A.fma:4,0,x\n"
    "7-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F_conversion=A.tensor_op_allow_conversion:1,0,x;A.fma:4,0,x\n";

/* The most frequent kernel of FP32 forward problems is a conversion kernel; a strict problem's scores still never
 * reach past its class, through model_predict_select and model_rank alike. */
Test(models_precision, a_model_never_scores_a_kernel_outside_the_class)
{
    data_load_opts o = {.threads = 1, .precisions = DATA_PRECISION_ALL};
    data_select *ds;
    cr_assert_eq(data_fdb_parse("t.fdb.txt", fdb, strlen(fdb), &o, &ds), HR_OK, "%s", hr_last_error());
    int rows[8];
    for (int i = 0; i < ds->n; i++) rows[i] = i;
    model_train_data td;
    cr_assert_eq(model_train_data_select(ds, &td), HR_OK, "%s", hr_last_error());
    td.train = rows, td.n_train = ds->n;
    hr_log log = hr_log_silent();
    model_ctx ctx = {.seed = 1, .threads = 1, .log = &log};
    model *m;
    cr_assert_eq(model_train(&model_family_frequent, &td, &ctx, &m), HR_OK, "%s", hr_last_error());
    model_ws *ws;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    float s[16];
    model_ranked r[16];
    problem strict = parse_ok("8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F_strict");
    problem conv = parse_ok("8-8-8-3x3-8-8-8-2-1x1-1x1-1x1-0-NCHW-FP32-F_conversion");
    cr_assert_eq(model_predict_select(m, ws, conv.v, s), HR_OK);
    cr_assert_str_eq(m->kernels[eval_select_argmax(s, m->n_kernels)], "A.tensor_op_allow_conversion");
    cr_assert_eq(model_predict_select(m, ws, strict.v, s), HR_OK);
    for (int k = 0; k < m->n_kernels; k++) {
        int fma = strstr(m->kernels[k], ".fma") != NULL;
        cr_assert(fma || (isinf(s[k]) && s[k] < 0), "%s scored %g for a strict problem", m->kernels[k], (double)s[k]);
    }
    int n = model_rank(m, strict.v, s, r, NULL);
    cr_assert_gt(n, 0);
    for (int i = 0; i < n; i++) cr_assert(strstr(m->kernels[r[i].kernel], ".fma") != NULL, "%s", m->kernels[r[i].kernel]);
    model_ws_free(ws);
    model_free(m);
    model_train_data_free(&td);
    data_select_free(ds);
}
