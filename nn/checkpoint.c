/* Checkpoints of a parameter block (and optionally its optimizer moments) in an HDF5 group: one float32
 * dataset per view name, so a checkpoint is checked by name and size on load, never by position. The
 * HDF5 calls go through core/h5, which checks each one and names the file object on failure. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "nn/nn.h"

/* Writes one dataset per view of p, taking values from base (w, an optimizer moment, ...). */
static int tensors_write(hid_t parent, const char *sub, const nn_params *p, const float *base)
{
    hid_t g;
    int rc = hr_h5_group_create(parent, sub, &g);
    if (rc) return rc;
    for (int i = 0; i < p->n_views && rc == HR_OK; i++) {
        const nn_param_view *v = &p->views[i];
        HR_ASSERT(strchr(v->name, '/') == NULL); /* '/' would nest groups */
        rc = hr_h5_write(g, v->name, H5T_NATIVE_FLOAT, v->size, 0, base + v->offset);
    }
    H5Gclose(g);
    return rc;
}

/* A tensor read from a file must hold finite numbers: a NaN or infinite weight (a diverged run, a damaged
 * file) would make every prediction NaN, so the file is refused where it is read, naming the tensor. */
static int tensor_check_finite(const char *group, const char *sub, const nn_param_view *v, const float *x)
{
    for (size_t i = 0; i < v->size; i++)
        if (!isfinite(x[i]))
            return hr_error(HR_EFORMAT, "checkpoint tensor '%s/%s/%s' holds a non-finite value (%g at index %zu of %zu)",
                            group, sub, v->name, (double)x[i], i, v->size);
    return HR_OK;
}

/* Reads every view of p from parent/sub into base, checking names, sizes, finite values and that nothing else
 * is stored. */
static int tensors_read(hid_t parent, const char *group, const char *sub, const nn_params *p, float *base)
{
    if (!hr_h5_exists(parent, sub)) return hr_error(HR_EFORMAT, "checkpoint '%s' has no '%s' group", group, sub);
    hid_t g;
    int rc = hr_h5_group_open(parent, sub, &g);
    if (rc) return rc;
    for (int i = 0; i < p->n_views && rc == HR_OK; i++) {
        const nn_param_view *v = &p->views[i];
        size_t rows, cols;
        if (!hr_h5_exists(g, v->name)) {
            rc = hr_error(HR_EFORMAT, "checkpoint '%s/%s' has no tensor '%s' (model expects %zu values)", group,
                          sub, v->name, v->size);
            break;
        }
        rc = hr_h5_shape(g, v->name, &rows, &cols);
        size_t count = rows * (cols ? cols : 1);
        if (rc == HR_OK && (cols != 0 || count != v->size))
            rc = hr_error(HR_EFORMAT, "checkpoint tensor '%s/%s/%s' has %zu values, model expects %zu", group, sub,
                          v->name, count, v->size);
        if (rc == HR_OK) rc = hr_h5_read(g, v->name, H5T_NATIVE_FLOAT, v->size, 0, base + v->offset);
        if (rc == HR_OK) rc = tensor_check_finite(group, sub, v, base + v->offset);
    }
    char **names = NULL;
    size_t n = 0;
    if (rc == HR_OK) rc = hr_h5_list(g, &names, &n);
    if (rc == HR_OK && n != (size_t)p->n_views) {
        /* every view was found, so some stored name is not a view: name the first one */
        const char *extra = "?";
        for (size_t k = 0; k < n; k++)
            if (!nn_params_find(p, names[k])) {
                extra = names[k];
                break;
            }
        rc = hr_error(HR_EFORMAT, "checkpoint '%s/%s' holds %zu tensors, model has %d (unexpected '%s')", group,
                      sub, n, p->n_views, extra);
    }
    hr_h5_free_strings(names, n);
    H5Gclose(g);
    return rc;
}

int nn_checkpoint_write(hid_t loc, const char *group, const nn_params *p, const nn_optim *o)
{
    if (hr_h5_exists(loc, group)) return hr_error(HR_EINVAL, "checkpoint group '%s' already exists", group);
    hid_t g;
    int rc = hr_h5_group_create(loc, group, &g);
    if (rc) return hr_error_wrap(rc, "writing checkpoint '%s'", group);
    rc = tensors_write(g, "w", p, p->w);
    if (rc == HR_OK && o) {
        HR_ASSERT(o->n == p->n);
        rc = tensors_write(g, "m", p, o->m);
        if (rc == HR_OK && o->v) rc = tensors_write(g, "v", p, o->v);
        if (rc == HR_OK) rc = hr_h5_attr_write_int(g, "optim_kind", (long long)o->cfg.kind);
        if (rc == HR_OK) rc = hr_h5_attr_write_int(g, "step", (long long)o->step);
    }
    H5Gclose(g);
    return rc == HR_OK ? rc : hr_error_wrap(rc, "writing checkpoint '%s'", group);
}

int nn_checkpoint_read(hid_t loc, const char *group, nn_params *p, nn_optim *o)
{
    if (!hr_h5_exists(loc, group)) return hr_error(HR_EFORMAT, "no checkpoint group '%s'", group);
    hid_t g;
    int rc = hr_h5_group_open(loc, group, &g);
    if (rc) return rc;
    rc = tensors_read(g, group, "w", p, p->w);
    if (rc == HR_OK && o) {
        HR_ASSERT(o->n == p->n);
        long long kind = -1, step = 0;
        rc = hr_h5_attr_read_int(g, "optim_kind", &kind);
        if (rc == HR_OK && kind != (long long)o->cfg.kind)
            rc = hr_error(HR_EFORMAT, "checkpoint '%s' holds optimizer kind %lld, expected %d", group, kind,
                          (int)o->cfg.kind);
        if (rc == HR_OK) rc = hr_h5_attr_read_int(g, "step", &step);
        if (rc == HR_OK) rc = tensors_read(g, group, "m", p, o->m);
        if (rc == HR_OK && o->v) rc = tensors_read(g, group, "v", p, o->v);
        if (rc == HR_OK) o->step = (long)step;
    }
    H5Gclose(g);
    return rc;
}
