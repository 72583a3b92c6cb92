/* The shared part of every model: vocabularies, provenance, model files, config tables. */
#include "models/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/table.h"
#include "models/models_internal.h"
#include "train/train.h"

static char **strv_dup(char *const *s, int n)
{
    char **out = hr_calloc((size_t)(n ? n : 1), sizeof *out);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        out[i] = hr_strdup(s[i]);
        if (!out[i]) {
            hr_h5_free_strings(out, (size_t)i);
            return NULL;
        }
    }
    return out;
}

/* A table model's configurations as field values, parsed from its kernel names with its schema. */
static int table_kernel_values(model *m)
{
    int nk = m->table->n_kernel;
    free(m->kernel_values);
    m->kernel_values = hr_malloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * (size_t)nk * sizeof *m->kernel_values);
    if (!m->kernel_values) return HR_ENOMEM;
    for (int k = 0; k < m->n_kernels; k++) {
        int rc = data_table_config_parse(m->table, m->kernels[k], m->kernel_values + (size_t)k * nk);
        if (rc) return hr_error_wrap(rc, "kernel %d", k);
    }
    return HR_OK;
}

/* The schema of a table model (a copy of spec) and its feature names. */
static int table_attach(model *m, const data_table_spec *spec)
{
    if (!(m->table = hr_calloc(1, sizeof *m->table))) return HR_ENOMEM;
    int rc = data_table_spec_copy(spec, m->table);
    if (rc) {
        free(m->table);
        m->table = NULL;
    }
    return rc;
}

/* A table tune model's own rules, from their JSON (what its file keeps) read against its schema. */
static int rules_attach(model *m, const char *json, const char *name)
{
    int rc = data_table_rules_parse(json, name, m->table, NULL, &m->rules);
    if (rc) return rc;
    if (!(m->rules_constraint = data_table_rules_constraint(m->rules, m->table))) return HR_ENOMEM;
    m->constraint = m->rules_constraint;
    return HR_OK;
}

static int rules_copy(model *m, const data_table_rules *r)
{
    char *json = data_table_rules_to_json(r);
    if (!json) return HR_ENOMEM;
    int rc = rules_attach(m, json, "the data's capability rules");
    free(json);
    return rc;
}

int model_base_init(model *m, const model_family *fam, const model_train_data *d, const model_ctx *ctx)
{
    memset(m, 0, sizeof *m);
    m->family = fam;
    m->task = d->task;
    m->seed = ctx->seed;
    m->n_features = d->n_features;
    m->feature_names = hr_calloc((size_t)d->n_features, sizeof *m->feature_names);
    if (!m->feature_names) return HR_ENOMEM;
    const data_table *table = d->task == MODEL_TASK_SELECT ? d->sel->table : d->tune->sel ? d->tune->sel->table : NULL;
    if (table) {
        int rc = table_attach(m, &table->spec);
        if (rc) return rc;
        if (d->n_features != data_table_problem_feature_count(m->table))
            return hr_error(HR_EINVAL, "%d features for a table with %d problem features", d->n_features,
                            data_table_problem_feature_count(m->table));
    }
    for (int j = 0; j < d->n_features; j++) {
        char name[256];
        if (table && data_table_feature_name(m->table, j, name, sizeof name)) return HR_EINVAL;
        if (!(m->feature_names[j] = hr_strdup(table ? name : data_feature_name(j)))) return HR_ENOMEM;
    }
    char *cfg = ctx->config ? cJSON_PrintUnformatted(ctx->config) : NULL;
    m->config_json = hr_strdup(cfg ? cfg : "{}");
    free(cfg);
    if (!m->config_json) return HR_ENOMEM;
    if (d->task == MODEL_TASK_SELECT) {
        m->n_kernels = d->sel->n_kernels;
        if (!(m->kernels = strv_dup(d->sel->kernels, m->n_kernels))) return HR_ENOMEM;
        /* on a table every configuration applies: each problem's candidates are what was measured for it */
        if (table) return table_kernel_values(m);
        const int *const rows[2] = {d->train, d->valid};
        const int n_rows[2] = {d->n_train, d->n_valid};
        int rc = model_applicability_compute(m, d->sel, rows, n_rows);
        if (rc) return rc;
    } else {
        const data_tune *t = d->tune;
        m->length = t->length;
        m->solver = hr_strdup(t->solver);
        m->param_names = strv_dup(t->param_names, t->length);
        m->vocab_size = hr_calloc((size_t)t->length, sizeof *m->vocab_size);
        m->vocab = hr_calloc((size_t)t->length, sizeof *m->vocab);
        if (!m->solver || !m->param_names || !m->vocab_size || !m->vocab) return HR_ENOMEM;
        for (int j = 0; j < t->length; j++) {
            m->vocab_size[j] = t->vocab_size[j];
            m->vocab[j] = hr_malloc((size_t)t->vocab_size[j] * sizeof **m->vocab);
            if (!m->vocab[j]) return HR_ENOMEM;
            memcpy(m->vocab[j], t->vocab[j], (size_t)t->vocab_size[j] * sizeof **m->vocab);
        }
        m->constraint = data_constraint_find(t->solver);
        if (t->rules) return rules_copy(m, t->rules);
    }
    return HR_OK;
}

void model_base_free(model *m)
{
    hr_h5_free_strings(m->feature_names, m->feature_names ? (size_t)m->n_features : 0);
    hr_h5_free_strings(m->kernels, m->kernels ? (size_t)m->n_kernels : 0);
    free(m->applicable);
    data_table_spec_free(m->table);
    free(m->table);
    free(m->kernel_values);
    free(m->rules_constraint);
    data_table_rules_free(m->rules);
    hr_h5_free_strings(m->param_names, m->param_names ? (size_t)m->length : 0);
    if (m->vocab)
        for (int j = 0; j < m->length; j++) free(m->vocab[j]);
    free(m->vocab);
    free(m->vocab_size);
    free(m->solver);
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

/* ---- model files ---- */

int model_save(const model *m, const char *path)
{
    hr_h5_out out;
    int rc = hr_h5_create(path, &out);
    if (rc) return rc;
    hid_t f = out.file, g = -1;
    if ((rc = hr_h5_attr_write_str(f, "format", MODEL_FILE_FORMAT))) goto done;
    if ((rc = hr_h5_attr_write_int(f, "version", MODEL_FILE_VERSION))) goto done;
    if ((rc = hr_h5_attr_write_str(f, "family", m->family->name))) goto done;
    if ((rc = hr_h5_attr_write_str(f, "task", m->task == MODEL_TASK_SELECT ? "select" : "tune"))) goto done;
    if ((rc = hr_h5_attr_write_str(f, "config", m->config_json))) goto done;
    if ((rc = hr_h5_attr_write_int(f, "seed", (long long)m->seed))) goto done;
    if ((rc = hr_h5_attr_write_double(f, "train_seconds", m->train_seconds))) goto done;
    if ((rc = hr_h5_write_strings(f, "feature_names", m->feature_names, (size_t)m->n_features))) goto done;
    if (m->table) {
        /* a table model keeps its schema and vocabularies, by name (data_table_spec_to_json) */
        char *json = data_table_spec_to_json(m->table);
        if (!json) {
            rc = HR_ENOMEM;
            goto done;
        }
        rc = hr_h5_attr_write_str(f, "table", json);
        free(json);
        if (rc) goto done;
    }
    if (m->rules) {
        /* and a tune model its capability rules, every list filled (data_table_rules_to_json) */
        char *json = data_table_rules_to_json(m->rules);
        if (!json) {
            rc = HR_ENOMEM;
            goto done;
        }
        rc = hr_h5_attr_write_str(f, "rules", json);
        free(json);
        if (rc) goto done;
    }
    if (m->task == MODEL_TASK_SELECT) {
        if ((rc = hr_h5_write_strings(f, "kernels", m->kernels, (size_t)m->n_kernels))) goto done;
        if (m->applicable && (rc = model_applicability_write(m, f))) goto done;
    } else {
        if ((rc = hr_h5_attr_write_str(f, "solver", m->solver))) goto done;
        if ((rc = hr_h5_write_strings(f, "param_names", m->param_names, (size_t)m->length))) goto done;
        hid_t vg;
        if ((rc = hr_h5_group_create(f, "vocab", &vg))) goto done;
        for (int j = 0; j < m->length && !rc; j++)
            rc = hr_h5_write(vg, m->param_names[j], H5T_NATIVE_INT32, (size_t)m->vocab_size[j], 0, m->vocab[j]);
        H5Gclose(vg);
        if (rc) goto done;
    }
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
    rc = m->family->save(m, g);
done:
    if (g >= 0) H5Gclose(g);
    int crc = hr_h5_close(&out, rc == HR_OK);
    return rc ? rc : crc;
}

static int load_base(hid_t f, const char *path, model *m)
{
    int rc;
    char *fam = NULL, *task = NULL;
    long long seed = 0;
    size_t n;
    if ((rc = hr_h5_attr_read_str(f, "family", &fam))) return rc;
    m->family = model_family_find(fam);
    if (!m->family) {
        rc = hr_error(HR_EFORMAT, "%s: unknown model family '%s'", path, fam);
        free(fam);
        return rc;
    }
    free(fam);
    if ((rc = hr_h5_attr_read_str(f, "task", &task))) return rc;
    m->task = strcmp(task, "select") == 0 ? MODEL_TASK_SELECT : strcmp(task, "tune") == 0 ? MODEL_TASK_TUNE : 0;
    free(task);
    if (!m->task) return hr_error(HR_EFORMAT, "%s: unknown task", path);
    if ((rc = hr_h5_attr_read_str(f, "config", &m->config_json))) return rc;
    if ((rc = hr_h5_attr_read_int(f, "seed", &seed))) return rc;
    m->seed = (uint64_t)seed;
    if ((rc = hr_h5_attr_read_double(f, "train_seconds", &m->train_seconds))) return rc;
    if ((rc = hr_h5_read_strings(f, "feature_names", &m->feature_names, &n))) return rc;
    m->n_features = (int)n;
    if (hr_h5_attr_exists(f, "table") > 0) {
        char *json = NULL;
        data_table_spec spec;
        if ((rc = hr_h5_attr_read_str(f, "table", &json))) return rc;
        rc = data_table_spec_from_json(json, path, &spec);
        free(json);
        if (!rc) rc = table_attach(m, &spec);
        data_table_spec_free(&spec);
        if (rc) return rc;
    }
    /* features are matched by name: a model trained on another feature list cannot be fed ours */
    int n_ours = m->table ? data_table_problem_feature_count(m->table) : data_features_count();
    if (m->n_features != n_ours) return hr_error(HR_EFORMAT, "%s: model has %d features, this heurist computes %d", path, m->n_features, n_ours);
    for (int j = 0; j < m->n_features; j++) {
        char ours[256];
        if (m->table) data_table_feature_name(m->table, j, ours, sizeof ours);
        else snprintf(ours, sizeof ours, "%s", data_feature_name(j));
        if (strcmp(m->feature_names[j], ours) != 0)
            return hr_error(HR_EFORMAT, "%s: feature %d is '%s', this heurist computes '%s'", path, j,
                            m->feature_names[j], ours);
    }
    if (m->task == MODEL_TASK_SELECT) {
        if ((rc = hr_h5_read_strings(f, "kernels", &m->kernels, &n))) return rc;
        m->n_kernels = (int)n;
        if ((rc = model_applicability_read(m, f))) return hr_error_wrap(rc, "%s", path);
        if (m->table && (rc = table_kernel_values(m))) return hr_error_wrap(rc, "%s", path);
    } else {
        if ((rc = hr_h5_attr_read_str(f, "solver", &m->solver))) return rc;
        if ((rc = hr_h5_read_strings(f, "param_names", &m->param_names, &n))) return rc;
        m->length = (int)n;
        m->vocab_size = hr_calloc(n, sizeof *m->vocab_size);
        m->vocab = hr_calloc(n, sizeof *m->vocab);
        if (!m->vocab_size || !m->vocab) return HR_ENOMEM;
        hid_t vg;
        if ((rc = hr_h5_group_open(f, "vocab", &vg))) return rc;
        for (int j = 0; j < m->length && !rc; j++) {
            size_t r, c;
            rc = hr_h5_read_alloc(vg, m->param_names[j], H5T_NATIVE_INT32, &r, &c, (void **)&m->vocab[j]);
            m->vocab_size[j] = (int)r;
        }
        H5Gclose(vg);
        if (rc) return rc;
        /* a table tune model predicts one value per kernel column (and callers hold them in arrays of that size) */
        if (m->table && m->length != m->table->n_kernel)
            return hr_error(HR_EFORMAT, "%s: %d parameters for a table of %d kernel columns", path, m->length,
                            m->table->n_kernel);
        m->constraint = data_constraint_find(m->solver);
        if (m->table && hr_h5_attr_exists(f, "rules") > 0) {
            char *json = NULL;
            if ((rc = hr_h5_attr_read_str(f, "rules", &json))) return rc;
            rc = rules_attach(m, json, path);
            free(json);
            if (rc) return rc;
        }
    }
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

int model_load(const char *path, model **out)
{
    *out = NULL;
    hid_t f;
    int rc = hr_h5_open(path, MODEL_FILE_FORMAT, MODEL_FILE_VERSION, &f, NULL);
    if (rc) return rc;
    model base;
    memset(&base, 0, sizeof base);
    rc = load_base(f, path, &base);
    hid_t g = -1;
    if (!rc) rc = hr_h5_group_open(f, "family", &g);
    if (!rc) {
        rc = base.family->load(g, &base, out);
        if (rc) hr_error_wrap(rc, "%s", path);
    }
    if (g >= 0) H5Gclose(g);
    H5Fclose(f);
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
