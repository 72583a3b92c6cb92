/* The shared part of every model: codec, feature names, provenance, model files, config tables. What each task
 * adds (kernels, parameters) is its part's (models/task_select.c, models/task_tune.c). */
#include "models/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"
#include "train/train.h"

int model_base_init(model *m, const model_family *fam, const model_train_data *d, const model_ctx *ctx)
{
    memset(m, 0, sizeof *m);
    const model_task_part *part = model_task_part_of(d->task);
    if (!part) return HR_EINVAL;
    m->family = fam;
    m->task = d->task;
    m->seed = ctx->seed;
    int rc = data_codec_copy(d->codec, &m->codec);
    if (rc) return rc;
    if (d->n_features != data_codec_feature_count(m->codec))
        return hr_error(HR_EINVAL, "%d features for a %s with %d problem features", d->n_features,
                        data_codec_name(m->codec), data_codec_feature_count(m->codec));
    m->n_features = d->n_features;
    m->feature_names = hr_calloc((size_t)(d->n_features ? d->n_features : 1), sizeof *m->feature_names);
    if (!m->feature_names) return HR_ENOMEM;
    for (int j = 0; j < d->n_features; j++) {
        char name[256];
        if ((rc = data_codec_feature_name(m->codec, j, name, sizeof name))) return rc;
        if (!(m->feature_names[j] = hr_strdup(name))) return HR_ENOMEM;
    }
    char *cfg = ctx->config ? cJSON_PrintUnformatted(ctx->config) : NULL;
    m->config_json = hr_strdup(cfg ? cfg : "{}");
    free(cfg);
    if (!m->config_json) return HR_ENOMEM;
    return part->init(m, d);
}

void model_base_free(model *m)
{
    const model_task_part *part = m->task ? model_task_part_of(m->task) : NULL;
    if (part) part->free(m);
    hr_h5_free_strings(m->feature_names, m->feature_names ? (size_t)m->n_features : 0);
    data_codec_free(m->codec);
    free(m->config_json);
    free(m->curve);
    memset(m, 0, sizeof *m);
}

int model_curve_add(model *m, model_curve_point pt)
{
    model_curve_point *c = realloc(m->curve, (size_t)(m->n_curve + 1) * sizeof *c);
    if (!c) return hr_error(HR_ENOMEM, "out of memory");
    m->curve = c;
    m->curve[m->n_curve++] = pt;
    return HR_OK;
}

void model_free(model *m)
{
    if (m) m->family->free(m);
}

long model_n_params(const model *m)
{
    return m->family->n_params(m);
}

/* ---- train data outside the pipeline ---- */

/* V and X of n rows with the codec set: *V to fill, then X is computed from it. */
static int train_data_alloc(model_train_data *d, int n, double **V)
{
    int nv = data_codec_value_count(d->codec), nf = data_codec_feature_count(d->codec);
    *V = hr_malloc((size_t)(n ? n : 1) * (size_t)nv * sizeof **V);
    d->V = *V;
    d->X = hr_malloc((size_t)(n ? n : 1) * (size_t)nf * sizeof *d->X);
    d->n_features = nf;
    return *V && d->X ? HR_OK : HR_ENOMEM;
}

static void train_data_features(model_train_data *d, int n)
{
    int nv = data_codec_value_count(d->codec), nf = d->n_features;
    for (int i = 0; i < n; i++) data_codec_features(d->codec, d->V + (size_t)i * nv, (float *)d->X + (size_t)i * nf);
}

int model_train_data_select(const data_select *s, model_train_data *d)
{
    memset(d, 0, sizeof *d);
    d->task = MODEL_TASK_SELECT;
    d->sel = s;
    data_codec *c;
    int rc = data_codec_of_select(s, &c);
    d->codec = c;
    double *V = NULL;
    if (!rc && !(rc = train_data_alloc(d, s->n, &V))) {
        data_select_values(s, V);
        train_data_features(d, s->n);
    }
    if (rc) model_train_data_free(d);
    return rc;
}

int model_train_data_tune(const data_tune *t, model_train_data *d)
{
    memset(d, 0, sizeof *d);
    d->task = MODEL_TASK_TUNE;
    d->tune = t;
    data_codec *c;
    int rc = data_codec_of_tune(t, &c);
    d->codec = c;
    double *V = NULL;
    if (!rc && !(rc = train_data_alloc(d, t->n, &V))) {
        data_tune_values(t, V);
        train_data_features(d, t->n);
    }
    if (rc) model_train_data_free(d);
    return rc;
}

void model_train_data_free(model_train_data *d)
{
    data_codec_free((data_codec *)d->codec);
    free((double *)d->V);
    free((float *)d->X);
    memset(d, 0, sizeof *d);
}

/* ---- model files ---- */

int model_save(const model *m, const char *path)
{
    const model_task_part *part = model_task_part_of(m->task);
    const model_task_ops *ops = model_family_task(m->family, m->task);
    if (!part || !ops) return hr_error(HR_EINVAL, "%s model of no task it does", m->family->name);
    hr_h5_out out;
    int rc = hr_h5_create(path, &out);
    if (rc) return rc;
    hid_t f = out.file, g = -1;
    if ((rc = hr_h5_attr_write_str(f, "format", MODEL_FILE_FORMAT))) goto done;
    if ((rc = hr_h5_attr_write_int(f, "version", MODEL_FILE_VERSION))) goto done;
    if ((rc = hr_h5_attr_write_str(f, "family", m->family->name))) goto done;
    if ((rc = hr_h5_attr_write_str(f, "task", part->name))) goto done;
    if ((rc = hr_h5_attr_write_str(f, "config", m->config_json))) goto done;
    if ((rc = hr_h5_attr_write_int(f, "seed", (long long)m->seed))) goto done;
    if ((rc = hr_h5_attr_write_double(f, "train_seconds", m->train_seconds))) goto done;
    if ((rc = hr_h5_write_strings(f, "feature_names", m->feature_names, (size_t)m->n_features))) goto done;
    if ((rc = data_codec_write(m->codec, f))) goto done;
    if ((rc = part->write(m, f))) goto done;
    float *curve = hr_malloc((size_t)(m->n_curve ? m->n_curve : 1) * 5 * sizeof *curve);
    if (!curve) {
        rc = HR_ENOMEM;
        goto done;
    }
    for (int i = 0; i < m->n_curve; i++) {
        const model_curve_point *c = &m->curve[i];
        float row[5] = {(float)c->step, c->train_loss, c->valid_loss, c->valid_metric, c->seconds};
        memcpy(curve + 5 * i, row, sizeof row);
    }
    rc = hr_h5_write(f, "curve", H5T_NATIVE_FLOAT, (size_t)m->n_curve, 5, curve);
    free(curve);
    if (rc) goto done;
    if ((rc = hr_h5_group_create(f, "family", &g))) goto done;
    rc = ops->save(m, g);
done:
    if (g >= 0) H5Gclose(g);
    int crc = hr_h5_close(&out, rc == HR_OK);
    return rc ? rc : crc;
}

static int load_base(hid_t f, const char *path, const model_family *fam, model *m)
{
    int rc;
    char *task = NULL;
    long long seed = 0;
    size_t n;
    m->family = fam;
    if ((rc = hr_h5_attr_read_str(f, "task", &task))) return rc;
    m->task = model_task_of_name(task);
    free(task);
    if (!m->task) return hr_error(HR_EFORMAT, "%s: unknown task", path);
    if (!model_family_task(m->family, m->task))
        return hr_error(HR_EFORMAT, "%s: a %s model of the %s task, which the family does not do", path, m->family->name,
                        model_task_name(m->task));
    if ((rc = hr_h5_attr_read_str(f, "config", &m->config_json))) return rc;
    if ((rc = hr_h5_attr_read_int(f, "seed", &seed))) return rc;
    m->seed = (uint64_t)seed;
    if ((rc = hr_h5_attr_read_double(f, "train_seconds", &m->train_seconds))) return rc;
    if ((rc = hr_h5_read_strings(f, "feature_names", &m->feature_names, &n))) return rc;
    m->n_features = (int)n;
    if ((rc = data_codec_read(f, path, &m->codec))) return rc;
    /* features are matched by name: a model trained on another feature list cannot be fed ours */
    int n_ours = data_codec_feature_count(m->codec);
    if (m->n_features != n_ours) return hr_error(HR_EFORMAT, "%s: model has %d features, this heurist computes %d", path, m->n_features, n_ours);
    for (int j = 0; j < m->n_features; j++) {
        char ours[256];
        if ((rc = data_codec_feature_name(m->codec, j, ours, sizeof ours))) return rc;
        if (strcmp(m->feature_names[j], ours) != 0)
            return hr_error(HR_EFORMAT, "%s: feature %d is '%s', this heurist computes '%s'", path, j,
                            m->feature_names[j], ours);
    }
    if ((rc = model_task_part_of(m->task)->read(m, f, path))) return rc;
    size_t rows, cols;
    float *curve;
    if ((rc = hr_h5_read_alloc(f, "curve", H5T_NATIVE_FLOAT, &rows, &cols, (void **)&curve))) return rc;
    if (rows && cols != 5) {
        free(curve);
        return hr_error(HR_EFORMAT, "%s: curve has %zu columns, expected 5", path, cols);
    }
    for (size_t i = 0; i < rows && !rc; i++) {
        model_curve_point pt = {(int)curve[5 * i], curve[5 * i + 1], curve[5 * i + 2], curve[5 * i + 3], curve[5 * i + 4]};
        rc = model_curve_add(m, pt);
    }
    free(curve);
    return rc;
}

int model_file_read(hid_t f, const char *path, const model_family *fam, model **out)
{
    *out = NULL;
    model base;
    memset(&base, 0, sizeof base);
    int rc = load_base(f, path, fam, &base);
    hid_t g = -1;
    if (!rc) rc = hr_h5_group_open(f, "family", &g);
    if (!rc) {
        rc = model_family_task(base.family, base.task)->load(g, &base, out);
        if (rc) hr_error_wrap(rc, "%s", path);
    }
    if (g >= 0) H5Gclose(g);
    if (rc) model_base_free(&base);
    return rc;
}

/* ---- config ---- */

void model_config_print(const model_family *fam, FILE *out)
{
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {fam->name, rows, fam->config_options(rows)};
    hr_config_print(&t, out);
}

void model_loop_opts(train_opts *o, const model_ctx *ctx, const char *name)
{
    o->seed = ctx->seed;
    o->log = ctx->log;
    o->name = name;
    o->checkpoint = ctx->checkpoint;
    o->resume = ctx->resume;
    o->config = ctx->config_effective;
}

int model_loop_curve(model *m, const train_result *res)
{
    int rc = HR_OK;
    for (int i = 0; !rc && i < res->n_curve; i++) {
        const train_epoch *e = &res->curve[i];
        model_curve_point pt = {e->epoch, e->train_loss, e->valid_loss, e->valid_metric, e->seconds};
        rc = model_curve_add(m, pt);
    }
    return rc;
}
