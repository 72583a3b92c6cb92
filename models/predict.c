/* Single-problem prediction: the caller's workspace and the dispatch to the family.
 * A model is read-only while it predicts; everything a prediction writes besides its answer lives in a
 * model_ws, which wraps the family's own scratch (its ws_create hook) and remembers the model it fits. */
#include <stdlib.h>

#include "models/model.h"

struct model_ws {
    const model *m; /* the model the scratch was sized for */
    void *family;   /* the family's scratch (NULL when it needs none) */
};

int model_ws_create(const model *m, model_ws **out)
{
    *out = NULL;
    model_ws *ws = hr_calloc(1, sizeof *ws);
    if (!ws) return HR_ENOMEM;
    ws->m = m;
    int rc = m->family->ws_create ? m->family->ws_create(m, &ws->family) : HR_OK;
    if (rc) {
        free(ws);
        return rc;
    }
    *out = ws;
    return HR_OK;
}

void model_ws_free(model_ws *ws)
{
    if (!ws) return;
    if (ws->m->family->ws_free) ws->m->family->ws_free(ws->family);
    free(ws);
}

static int ws_check(const model *m, const model_ws *ws, model_task task)
{
    if (m->task != task)
        return hr_error(HR_EINVAL, task == MODEL_TASK_SELECT ? "this %s model predicts tuning parameters, not kernels"
                                                             : "this %s model selects kernels, not tuning parameters",
                        m->family->name);
    if (!ws || ws->m != m)
        return hr_error(HR_EINVAL, "%s prediction: the workspace was not created for this model (model_ws_create)",
                        m->family->name);
    return HR_OK;
}

int model_predict_select_x(const model *m, model_ws *ws, const data_problem *p, const float *x, float *scores)
{
    int rc = ws_check(m, ws, MODEL_TASK_SELECT);
    return rc ? rc : m->family->predict_select(m, ws->family, p, x, scores);
}

int model_predict_tune_x(const model *m, model_ws *ws, const data_problem *p, const float *x, int32_t *values)
{
    int rc = ws_check(m, ws, MODEL_TASK_TUNE);
    return rc ? rc : m->family->predict_tune(m, ws->family, p, x, values);
}

int model_predict_select(const model *m, model_ws *ws, const data_problem *p, float *scores)
{
    float x[256];
    HR_ASSERT(m->n_features <= 256);
    data_features_compute(p, x);
    return model_predict_select_x(m, ws, p, x, scores);
}

int model_predict_tune(const model *m, model_ws *ws, const data_problem *p, int32_t *values)
{
    float x[256];
    HR_ASSERT(m->n_features <= 256);
    data_features_compute(p, x);
    return model_predict_tune_x(m, ws, p, x, values);
}
