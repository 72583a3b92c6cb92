/* Checkpoints of a parameter block (and optionally its optimizer moments) in an HDF5 group: one float32
 * dataset per view name, so a checkpoint is checked by name and size on load, never by position. */
#include <stdint.h>
#include <string.h>

#include "nn/nn.h"

/* Writes one dataset per view of p, taking values from base (w, an optimizer moment, ...). */
static int tensors_write(hid_t parent, const char *sub, const nn_params *p, const float *base)
{
    hid_t g = H5Gcreate2(parent, sub, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return hr_error(HR_EIO, "cannot create HDF5 group '%s'", sub);
    int rc = HR_OK;
    for (int i = 0; i < p->n_views && rc == HR_OK; i++) {
        const nn_param_view *v = &p->views[i];
        HR_ASSERT(strchr(v->name, '/') == NULL); /* '/' would nest groups */
        hsize_t dim = v->size;
        hid_t space = H5Screate_simple(1, &dim, NULL);
        hid_t d = space < 0 ? -1
                            : H5Dcreate2(g, v->name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0 || (v->size > 0 && H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                              base + v->offset) < 0))
            rc = hr_error(HR_EIO, "cannot write tensor '%s/%s'", sub, v->name);
        if (d >= 0) H5Dclose(d);
        if (space >= 0) H5Sclose(space);
    }
    H5Gclose(g);
    return rc;
}

/* Reads every view of p from parent/sub into base, checking names, sizes and that nothing else is stored. */
static int tensors_read(hid_t parent, const char *group, const char *sub, const nn_params *p, float *base)
{
    int exists;
    H5E_BEGIN_TRY { exists = H5Lexists(parent, sub, H5P_DEFAULT); } H5E_END_TRY;
    if (exists <= 0) return hr_error(HR_EFORMAT, "checkpoint '%s' has no '%s' group", group, sub);
    hid_t g = H5Gopen2(parent, sub, H5P_DEFAULT);
    if (g < 0) return hr_error(HR_EIO, "cannot open checkpoint group '%s/%s'", group, sub);
    int rc = HR_OK;
    for (int i = 0; i < p->n_views && rc == HR_OK; i++) {
        const nn_param_view *v = &p->views[i];
        H5E_BEGIN_TRY { exists = H5Lexists(g, v->name, H5P_DEFAULT); } H5E_END_TRY;
        if (exists <= 0) {
            rc = hr_error(HR_EFORMAT, "checkpoint '%s/%s' has no tensor '%s' (model expects %zu values)", group,
                          sub, v->name, v->size);
            break;
        }
        hid_t d = H5Dopen2(g, v->name, H5P_DEFAULT);
        hid_t space = d < 0 ? -1 : H5Dget_space(d);
        hssize_t npts = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
        if (npts < 0)
            rc = hr_error(HR_EIO, "cannot read tensor '%s/%s/%s'", group, sub, v->name);
        else if ((size_t)npts != v->size)
            rc = hr_error(HR_EFORMAT, "checkpoint tensor '%s/%s/%s' has %lld values, model expects %zu", group,
                          sub, v->name, (long long)npts, v->size);
        else if (v->size > 0 &&
                 H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, base + v->offset) < 0)
            rc = hr_error(HR_EIO, "cannot read tensor '%s/%s/%s'", group, sub, v->name);
        if (space >= 0) H5Sclose(space);
        if (d >= 0) H5Dclose(d);
    }
    H5G_info_t info;
    if (rc == HR_OK && H5Gget_info(g, &info) < 0) rc = hr_error(HR_EIO, "cannot list '%s/%s'", group, sub);
    if (rc == HR_OK && info.nlinks != (hsize_t)p->n_views) {
        /* every view was found, so some stored name is not a view: name the first one */
        char name[256] = "?";
        for (hsize_t k = 0; k < info.nlinks; k++) {
            if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof name, H5P_DEFAULT) < 0)
                break;
            if (!nn_params_find(p, name)) break;
        }
        rc = hr_error(HR_EFORMAT, "checkpoint '%s/%s' holds %llu tensors, model has %d (unexpected '%s')", group,
                      sub, (unsigned long long)info.nlinks, p->n_views, name);
    }
    H5Gclose(g);
    return rc;
}

static int attr_write_i64(hid_t g, const char *name, int64_t value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, &value) >= 0;
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    return ok ? HR_OK : hr_error(HR_EIO, "cannot write attribute '%s'", name);
}

static int attr_read_i64(hid_t g, const char *group, const char *name, int64_t *value)
{
    int exists;
    H5E_BEGIN_TRY { exists = H5Aexists(g, name); } H5E_END_TRY;
    if (exists <= 0) return hr_error(HR_EFORMAT, "checkpoint '%s' has no attribute '%s'", group, name);
    hid_t a = H5Aopen(g, name, H5P_DEFAULT);
    int ok = a >= 0 && H5Aread(a, H5T_NATIVE_INT64, value) >= 0;
    if (a >= 0) H5Aclose(a);
    return ok ? HR_OK : hr_error(HR_EIO, "cannot read attribute '%s' of '%s'", name, group);
}

int nn_checkpoint_write(hid_t loc, const char *group, const nn_params *p, const nn_optim *o)
{
    int exists;
    H5E_BEGIN_TRY { exists = H5Lexists(loc, group, H5P_DEFAULT); } H5E_END_TRY;
    if (exists > 0) return hr_error(HR_EINVAL, "checkpoint group '%s' already exists", group);
    hid_t g = H5Gcreate2(loc, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return hr_error(HR_EIO, "cannot create checkpoint group '%s'", group);
    int rc = tensors_write(g, "w", p, p->w);
    if (rc == HR_OK && o) {
        HR_ASSERT(o->n == p->n);
        rc = tensors_write(g, "m", p, o->m);
        if (rc == HR_OK && o->v) rc = tensors_write(g, "v", p, o->v);
        if (rc == HR_OK) rc = attr_write_i64(g, "optim_kind", (int64_t)o->cfg.kind);
        if (rc == HR_OK) rc = attr_write_i64(g, "step", (int64_t)o->step);
    }
    H5Gclose(g);
    return rc == HR_OK ? rc : hr_error_wrap(rc, "writing checkpoint '%s'", group);
}

int nn_checkpoint_read(hid_t loc, const char *group, nn_params *p, nn_optim *o)
{
    int exists;
    H5E_BEGIN_TRY { exists = H5Lexists(loc, group, H5P_DEFAULT); } H5E_END_TRY;
    if (exists <= 0) return hr_error(HR_EFORMAT, "no checkpoint group '%s'", group);
    hid_t g = H5Gopen2(loc, group, H5P_DEFAULT);
    if (g < 0) return hr_error(HR_EIO, "cannot open checkpoint group '%s'", group);
    int rc = tensors_read(g, group, "w", p, p->w);
    if (rc == HR_OK && o) {
        HR_ASSERT(o->n == p->n);
        int64_t kind = -1, step = 0;
        rc = attr_read_i64(g, group, "optim_kind", &kind);
        if (rc == HR_OK && kind != (int64_t)o->cfg.kind)
            rc = hr_error(HR_EFORMAT, "checkpoint '%s' holds optimizer kind %lld, expected %d", group,
                          (long long)kind, (int)o->cfg.kind);
        if (rc == HR_OK) rc = attr_read_i64(g, group, "step", &step);
        if (rc == HR_OK) rc = tensors_read(g, group, "m", p, o->m);
        if (rc == HR_OK && o->v) rc = tensors_read(g, group, "v", p, o->v);
        if (rc == HR_OK) o->step = (long)step;
    }
    H5Gclose(g);
    return rc;
}
