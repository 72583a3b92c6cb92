/* models/view: what a family shows of a trained model to the layers above it (export/), by name.
 *
 * A family's views hook (model_family.views) fills a model_views with named entries: numbers (its sizes and
 * options), arrays (input statistics, folded weights, vocabularies), its parameter block (nn_params, whose own
 * views name every tensor: "head.weight"), gbdt boosters, C expressions the runtime evaluates, and arrays the
 * family computes for the occasion (owned by the model_views). The arrays point into the model, which must
 * outlive them. A reader asks for a name and, for arrays, the length it expects; a name the family does not
 * show, or an array of another length, is a programming error (the family and its exporter are written
 * together) and aborts through HR_ASSERT, except through model_view_find, which answers NULL.
 */
#ifndef HEURIST_MODELS_VIEW_H
#define HEURIST_MODELS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "models/model.h"

struct nn_params;
struct gbdt_booster;

#define MODEL_VIEWS_MAX 256
#define MODEL_VIEW_NAME 48

typedef enum model_view_kind {
    MODEL_VIEW_INT,     /* i */
    MODEL_VIEW_REAL,    /* x */
    MODEL_VIEW_FLOATS,  /* data: float (n) */
    MODEL_VIEW_DOUBLES, /* data: double (n) */
    MODEL_VIEW_INTS,    /* data: int (n) */
    MODEL_VIEW_BYTES,   /* data: unsigned char (n) */
    MODEL_VIEW_INT64S,  /* data: int64_t (n) */
    MODEL_VIEW_TEXT,    /* data: a NUL-terminated string */
    MODEL_VIEW_PARAMS,  /* data: an nn_params block */
    MODEL_VIEW_BOOSTER, /* data: a gbdt_booster */
} model_view_kind;

typedef struct model_view {
    char name[MODEL_VIEW_NAME];
    model_view_kind kind;
    long long i;
    double x;
    const void *data;
    size_t n;
} model_view;

typedef struct model_views {
    int n;
    model_view v[MODEL_VIEWS_MAX];
    int n_owned;
    void *owned[MODEL_VIEWS_MAX]; /* arrays computed for the views, freed with them */
} model_views;

/* The views of m from its family's hook into *out (model_views_free frees them); HR_EINVAL naming the family
 * when it shows none. */
int model_views_create(const model *m, model_views **out);
void model_views_free(model_views *v); /* NULL is fine */

/* Readers. */
const model_view *model_view_find(const model_views *v, const char *name);
long long model_view_int(const model_views *v, const char *name);
double model_view_real(const model_views *v, const char *name);
/* The array of that name and kind, checked to hold n elements. */
const float *model_view_floats(const model_views *v, const char *name, size_t n);
const double *model_view_doubles(const model_views *v, const char *name, size_t n);
const int *model_view_ints(const model_views *v, const char *name, size_t n);
const unsigned char *model_view_bytes(const model_views *v, const char *name, size_t n);
const int64_t *model_view_int64s(const model_views *v, const char *name, size_t n);
const char *model_view_text(const model_views *v, const char *name);
const struct nn_params *model_view_params(const model_views *v, const char *name);
/* The floats of the parameter block's tensor `tensor` (an nn_params view name), checked to hold n. */
const float *model_view_tensor(const model_views *v, const char *params, const char *tensor, size_t n);
const struct gbdt_booster *model_view_booster(const model_views *v, const char *name);

/* Writers, for the families' hooks; the name is printf-formatted. Each fails only when the table is full
 * (a programming error: HR_ASSERT). */
void model_views_int(model_views *v, long long i, const char *fmt, ...);
void model_views_real(model_views *v, double x, const char *fmt, ...);
void model_views_array(model_views *v, model_view_kind kind, const void *data, size_t n, const char *fmt, ...);
/* data (malloc'd) becomes the views' to free. */
void model_views_owned(model_views *v, model_view_kind kind, void *data, size_t n, const char *fmt, ...);

#endif
