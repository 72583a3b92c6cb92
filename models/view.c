/* Named views of a trained model (models/view.h). */
#include "models/view.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"

int model_views_create(const model *m, model_views **out)
{
    *out = NULL;
    if (!m->family->views) return hr_error(HR_EINVAL, "the %s family shows no views of its models", m->family->name);
    model_views *v = hr_calloc(1, sizeof *v);
    if (!v) return HR_ENOMEM;
    int rc = m->family->views(m, v);
    if (rc) {
        model_views_free(v);
        return rc;
    }
    *out = v;
    return HR_OK;
}

void model_views_free(model_views *v)
{
    if (!v) return;
    for (int i = 0; i < v->n_owned; i++) free(v->owned[i]);
    free(v);
}

const model_view *model_view_find(const model_views *v, const char *name)
{
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->v[i].name, name)) return &v->v[i];
    return NULL;
}

static const model_view *need(const model_views *v, const char *name, model_view_kind kind)
{
    const model_view *e = model_view_find(v, name);
    if (!e || e->kind != kind) {
        fprintf(stderr, "model views: no %s of kind %d\n", name, (int)kind);
        HR_ASSERT(0);
    }
    return e;
}

static const void *array(const model_views *v, const char *name, model_view_kind kind, size_t n)
{
    const model_view *e = need(v, name, kind);
    if (e->n != n) {
        fprintf(stderr, "model views: %s holds %zu, not %zu\n", name, e->n, n);
        HR_ASSERT(0);
    }
    return e->data;
}

long long model_view_int(const model_views *v, const char *name)
{
    return need(v, name, MODEL_VIEW_INT)->i;
}

double model_view_real(const model_views *v, const char *name)
{
    return need(v, name, MODEL_VIEW_REAL)->x;
}

const float *model_view_floats(const model_views *v, const char *name, size_t n)
{
    return array(v, name, MODEL_VIEW_FLOATS, n);
}

const double *model_view_doubles(const model_views *v, const char *name, size_t n)
{
    return array(v, name, MODEL_VIEW_DOUBLES, n);
}

const int *model_view_ints(const model_views *v, const char *name, size_t n)
{
    return array(v, name, MODEL_VIEW_INTS, n);
}

const unsigned char *model_view_bytes(const model_views *v, const char *name, size_t n)
{
    return array(v, name, MODEL_VIEW_BYTES, n);
}

const int64_t *model_view_int64s(const model_views *v, const char *name, size_t n)
{
    return array(v, name, MODEL_VIEW_INT64S, n);
}

const char *model_view_text(const model_views *v, const char *name)
{
    return need(v, name, MODEL_VIEW_TEXT)->data;
}

const nn_params *model_view_params(const model_views *v, const char *name)
{
    return need(v, name, MODEL_VIEW_PARAMS)->data;
}

const float *model_view_tensor(const model_views *v, const char *params, const char *tensor, size_t n)
{
    const nn_params *p = model_view_params(v, params);
    const nn_param_view *t = nn_params_find(p, tensor);
    if (!t || t->size != n) {
        fprintf(stderr, "model views: %s has no tensor %s of %zu\n", params, tensor, n);
        HR_ASSERT(0);
    }
    return p->w + t->offset;
}

const struct gbdt_booster *model_view_booster(const model_views *v, const char *name)
{
    return need(v, name, MODEL_VIEW_BOOSTER)->data;
}

/* the next entry, named from fmt */
static model_view *add(model_views *v, model_view_kind kind, const char *fmt, va_list ap)
{
    HR_ASSERT(v->n < MODEL_VIEWS_MAX);
    model_view *e = &v->v[v->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    vsnprintf(e->name, sizeof e->name, fmt, ap);
    return e;
}

void model_views_int(model_views *v, long long i, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add(v, MODEL_VIEW_INT, fmt, ap)->i = i;
    va_end(ap);
}

void model_views_real(model_views *v, double x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add(v, MODEL_VIEW_REAL, fmt, ap)->x = x;
    va_end(ap);
}

void model_views_array(model_views *v, model_view_kind kind, const void *data, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    model_view *e = add(v, kind, fmt, ap);
    va_end(ap);
    e->data = data;
    e->n = n;
}

void model_views_owned(model_views *v, model_view_kind kind, void *data, size_t n, const char *fmt, ...)
{
    HR_ASSERT(v->n_owned < MODEL_VIEWS_MAX);
    v->owned[v->n_owned++] = data;
    va_list ap;
    va_start(ap, fmt);
    model_view *e = add(v, kind, fmt, ap);
    va_end(ap);
    e->data = data;
    e->n = n;
}
