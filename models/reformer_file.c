/* The Reformer's model files (models/reformer_internal.h): the trunk's sizes and options, the input transform, the
 * head's own part and the parameter block, under the model file's group "family". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/reformer_internal.h"

const char *const reformer_combine_names[] = {"product", "mask", "head", NULL};
const char *const reformer_norm_names[] = {"batch", "layer", NULL};
const int reformer_norm_values[] = {NN_NORM_BATCH, NN_NORM_LAYER};

int reformer_parse_combine(const char *s, int *out)
{
    for (int i = 0; reformer_combine_names[i]; i++)
        if (!strcmp(s, reformer_combine_names[i])) {
            *out = i;
            return HR_OK;
        }
    return hr_error(HR_EINVAL, "combine '%s': expected product, mask or head", s);
}

int reformer_parse_norm(const char *s, nn_norm_kind *k)
{
    for (int i = 0; reformer_norm_names[i]; i++)
        if (!strcmp(s, reformer_norm_names[i])) {
            *k = (nn_norm_kind)reformer_norm_values[i];
            return HR_OK;
        }
    return hr_error(HR_EINVAL, "norm '%s': expected batch or layer", s);
}

const reformer_head *reformer_head_find(const char *s)
{
    static const reformer_head *const heads[] = {&reformer_head_classes, &reformer_head_pairs, &reformer_head_towers};
    for (size_t i = 0; i < sizeof heads / sizeof *heads; i++)
        if (!strcmp(s, heads[i]->name)) return heads[i];
    return NULL;
}

static const char *norm_name(nn_norm_kind k)
{
    return k == NN_NORM_BATCH ? "batch" : "layer";
}

int reformer_save(const model *mb, hid_t g)
{
    const reformer *r = (const reformer *)mb;
    int rc = hr_h5_attr_write_int(g, "reformer_version", REFORMER_VERSION);
    if (!rc) rc = hr_h5_attr_write_int(g, "depth", r->depth);
    if (!rc) rc = hr_h5_attr_write_int(g, "hidden", r->hidden);
    if (!rc) rc = hr_h5_attr_write_int(g, "expand", r->expand);
    if (!rc) rc = hr_h5_attr_write_str(g, "norm", norm_name(r->norm));
    if (!rc) rc = hr_h5_attr_write_double(g, "dropout", r->dropout);
    if (!rc) rc = hr_h5_attr_write_str(g, "label", data_label_kind_name(r->label));
    if (!rc) rc = hr_h5_attr_write_double(g, "tau", r->tau);
    if (!rc) rc = hr_h5_attr_write_str(g, "input", r->n_ple ? "ple" : r->input_log ? "log" : "zscore");
    if (!rc) rc = hr_h5_attr_write_str(g, "mode", r->mode->name);
    if (!rc && r->mode->save) rc = r->mode->save(r, g);
    if (!rc) rc = hr_h5_attr_write_double(g, "applicability", r->app_weight);
    if (!rc) rc = hr_h5_attr_write_str(g, "combine", reformer_combine_names[r->app_combine]);
    if (!rc) rc = hr_h5_attr_write_str(g, "app_target", r->app_eff ? "efficiency" : "measured");
    if (!rc) rc = hr_h5_attr_write_double(g, "combine_weight", r->app_beta);
    if (!rc) rc = hr_h5_write(g, "zscore_mean", H5T_NATIVE_FLOAT, (size_t)r->n_in, 0, r->zmean);
    if (!rc) rc = hr_h5_write(g, "zscore_std", H5T_NATIVE_FLOAT, (size_t)r->n_in, 0, r->zstd);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_feature", H5T_NATIVE_INT, (size_t)r->n_ple, 0, r->ple_src);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_lo", H5T_NATIVE_FLOAT, (size_t)r->n_ple, 0, r->ple_lo);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_hi", H5T_NATIVE_FLOAT, (size_t)r->n_ple, 0, r->ple_hi);
    if (!rc) rc = nn_checkpoint_write(g, "params", &r->p, NULL);
    if (!rc && r->state.n_views) rc = nn_checkpoint_write(g, "state", &r->state, NULL);
    return rc;
}

/* The encoding's bins of a "ple" file, checked: every column names a feature, its bin has lo < hi */
static int reformer_ple_load(hid_t g, reformer *r)
{
    size_t n = 0, cols = 0;
    int rc = hr_h5_shape(g, "ple_feature", &n, &cols);
    if (!rc && (n < 1 || n > (size_t)r->n_raw * 4096 || cols != 0))
        rc = hr_error(HR_EFORMAT, "reformer: ple_feature: %zu entries", n);
    if (!rc && (!(r->ple_src = hr_malloc(n * sizeof *r->ple_src)) || !(r->ple_lo = hr_malloc(n * sizeof *r->ple_lo)) ||
                !(r->ple_hi = hr_malloc(n * sizeof *r->ple_hi))))
        rc = HR_ENOMEM;
    if (!rc) rc = hr_h5_read(g, "ple_feature", H5T_NATIVE_INT, n, 0, r->ple_src);
    if (!rc) rc = hr_h5_read(g, "ple_lo", H5T_NATIVE_FLOAT, n, 0, r->ple_lo);
    if (!rc) rc = hr_h5_read(g, "ple_hi", H5T_NATIVE_FLOAT, n, 0, r->ple_hi);
    for (size_t c = 0; !rc && c < n; c++) {
        if (r->ple_src[c] < 0 || r->ple_src[c] >= r->n_raw)
            rc = hr_error(HR_EFORMAT, "reformer: ple_feature[%zu] = %d: not a feature", c, r->ple_src[c]);
        else if (!(r->ple_lo[c] < r->ple_hi[c]) || !isfinite(r->ple_lo[c]) || !isfinite(r->ple_hi[c]))
            rc = hr_error(HR_EFORMAT, "reformer: ple bin %zu: [%g, %g] is not an interval", c, r->ple_lo[c],
                          r->ple_hi[c]);
    }
    if (!rc) r->n_ple = (int)n;
    return rc;
}

int reformer_load(hid_t g, model *base, model **out)
{
    *out = NULL;
    reformer *r = hr_calloc(1, sizeof *r);
    if (!r) return HR_ENOMEM;
    r->base = *base;
    int version = 0, rc = hr_h5_attr_read_int_in(g, "reformer", "reformer_version", 0, 1 << 30, &version);
    if (!rc && version > REFORMER_VERSION)
        rc = hr_error(HR_EVERSION, "reformer content version %d is newer than this heurist's %d", version,
                      REFORMER_VERSION);
    if (!rc && r->base.task != MODEL_TASK_SELECT) rc = hr_error(HR_EFORMAT, "reformer: task must be select");
    if (!rc) rc = hr_h5_attr_read_int_in(g, "reformer", "depth", 1, REFORMER_MAX_DEPTH, &r->depth);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "reformer", "hidden", 1, 8192, &r->hidden);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "reformer", "expand", 1, 8192, &r->expand);
    char *s = NULL;
    if (!rc) rc = hr_h5_attr_read_str(g, "norm", &s);
    if (!rc) rc = reformer_parse_norm(s, &r->norm);
    free(s);
    s = NULL;
    if (!rc) rc = hr_h5_attr_read_str(g, "label", &s);
    if (!rc && data_label_kind_parse(s, &r->label)) rc = hr_error(HR_EFORMAT, "reformer: unknown label '%s'", s);
    free(s);
    s = NULL;
    double v = 0;
    if (!rc) rc = hr_h5_attr_read_double(g, "dropout", &v);
    r->dropout = (float)v;
    if (!rc) rc = hr_h5_attr_read_double(g, "tau", &v);
    r->tau = (float)v;
    if (!rc) rc = hr_h5_attr_read_str(g, "input", &s);
    if (!rc && strcmp(s, "log") && strcmp(s, "zscore") && strcmp(s, "ple"))
        rc = hr_error(HR_EFORMAT, "reformer: unknown input '%s'", s);
    const int ple = !rc && strcmp(s, "ple") == 0;
    if (!rc) r->input_log = strcmp(s, "zscore") != 0;
    free(s);
    /* version 1 files predate the applicability head */
    if (!rc && version >= 2) rc = hr_h5_attr_read_double(g, "applicability", &v);
    r->app_weight = !rc && version >= 2 ? (float)v : 0.0f;
    if (!rc && !(r->app_weight >= 0.0f)) rc = hr_error(HR_EFORMAT, "reformer: applicability %g < 0", v);
    s = NULL;
    if (!rc && version >= 2) rc = hr_h5_attr_read_str(g, "combine", &s);
    if (!rc && s && reformer_parse_combine(s, &r->app_combine)) rc = HR_EFORMAT; /* the message names the value */
    free(s);
    s = NULL;
    if (!rc && version >= 2 && hr_h5_attr_exists(g, "app_target") > 0)
        rc = hr_h5_attr_read_str(g, "app_target", &s);
    if (!rc && s && strcmp(s, "measured") && strcmp(s, "efficiency"))
        rc = hr_error(HR_EFORMAT, "reformer: unknown app_target '%s'", s);
    r->app_eff = s && !strcmp(s, "efficiency");
    free(s);
    v = 1.0;
    if (!rc && version >= 2 && hr_h5_attr_exists(g, "combine_weight") > 0)
        rc = hr_h5_attr_read_double(g, "combine_weight", &v);
    r->app_beta = (float)v;
    if (!rc && !(r->app_beta >= 0.0f)) rc = hr_error(HR_EFORMAT, "reformer: combine_weight %g < 0", v);
    /* files before version 4 are classes mode */
    s = NULL;
    r->mode = &reformer_head_classes;
    if (!rc && version >= 4) rc = hr_h5_attr_read_str(g, "mode", &s);
    if (!rc && s && !(r->mode = reformer_head_find(s))) rc = hr_error(HR_EFORMAT, "reformer: unknown mode '%s'", s);
    free(s);
    if (!rc && r->mode->table && !r->base.table)
        rc = hr_error(HR_EFORMAT, "reformer: a %s-mode model without its table's schema", r->mode->name);
    if (!rc && r->mode->table && !r->base.kernel_values)
        rc = hr_error(HR_EFORMAT, "reformer: a %s-mode model without its configurations' values", r->mode->name);
    if (!rc && r->mode->load) rc = r->mode->load(g, r);
    r->n_raw = r->base.n_features + r->n_pair;
    if (!rc && ple) rc = reformer_ple_load(g, r);
    r->n_in = r->n_raw + r->n_ple;
    const size_t ni = (size_t)r->n_in;
    if (!rc && (!(r->zmean = hr_malloc(ni * sizeof *r->zmean)) || !(r->zstd = hr_malloc(ni * sizeof *r->zstd))))
        rc = HR_ENOMEM;
    if (!rc) rc = hr_h5_read(g, "zscore_mean", H5T_NATIVE_FLOAT, ni, 0, r->zmean);
    if (!rc) rc = hr_h5_read(g, "zscore_std", H5T_NATIVE_FLOAT, ni, 0, r->zstd);
    if (!rc) rc = reformer_build(r);
    if (!rc) rc = nn_checkpoint_read(g, "params", &r->p, NULL);
    if (!rc && r->state.n_views) rc = nn_checkpoint_read(g, "state", &r->state, NULL);
    if (rc) {
        memset(&r->base, 0, sizeof r->base); /* still owned by the caller */
        reformer_free(&r->base);
        return rc;
    }
    reformer_fold(r);
    *out = &r->base;
    return HR_OK;
}

