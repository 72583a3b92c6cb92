/* The tune task's part of every model: the solver, the parameter names and each position's value vocabulary, and
 * the constraint the codec gives for them (a solver's rules, or a table's capability rules the codec keeps). In a
 * model file: the attribute "solver", the dataset "param_names" and the group "vocab" (one dataset per parameter). */
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"

static int tune_init(model *m, const model_train_data *d)
{
    const data_tune *t = d->tune;
    m->length = t->length;
    m->solver = hr_strdup(t->solver);
    m->param_names = model_strv_dup(t->param_names, t->length);
    m->vocab_size = hr_calloc((size_t)(t->length ? t->length : 1), sizeof *m->vocab_size);
    m->vocab = hr_calloc((size_t)(t->length ? t->length : 1), sizeof *m->vocab);
    if (!m->solver || !m->param_names || !m->vocab_size || !m->vocab) return HR_ENOMEM;
    for (int j = 0; j < t->length; j++) {
        m->vocab_size[j] = t->vocab_size[j];
        m->vocab[j] = hr_malloc((size_t)(t->vocab_size[j] ? t->vocab_size[j] : 1) * sizeof **m->vocab);
        if (!m->vocab[j]) return HR_ENOMEM;
        memcpy(m->vocab[j], t->vocab[j], (size_t)t->vocab_size[j] * sizeof **m->vocab);
    }
    m->constraint = data_codec_constraint(m->codec, m->solver);
    return HR_OK;
}

static int tune_write(const model *m, hid_t f)
{
    int rc = hr_h5_attr_write_str(f, "solver", m->solver);
    if (!rc) rc = hr_h5_write_strings(f, "param_names", m->param_names, (size_t)m->length);
    hid_t vg;
    if (!rc && !(rc = hr_h5_group_create(f, "vocab", &vg))) {
        for (int j = 0; j < m->length && !rc; j++)
            rc = hr_h5_write(vg, m->param_names[j], H5T_NATIVE_INT32, (size_t)m->vocab_size[j], 0, m->vocab[j]);
        H5Gclose(vg);
    }
    return rc;
}

static int tune_read(model *m, hid_t f, const char *path)
{
    size_t n;
    int rc = hr_h5_attr_read_str(f, "solver", &m->solver);
    if (!rc) rc = hr_h5_read_strings(f, "param_names", &m->param_names, &n);
    if (rc) return rc;
    m->length = (int)n;
    m->vocab_size = hr_calloc(n ? n : 1, sizeof *m->vocab_size);
    m->vocab = hr_calloc(n ? n : 1, sizeof *m->vocab);
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
    /* a model of valued configurations predicts one value per configuration field (and callers hold them in arrays
     * of that size) */
    int width = data_codec_config_width(m->codec);
    if (width && m->length != width)
        return hr_error(HR_EFORMAT, "%s: %d parameters for a table of %d kernel columns", path, m->length, width);
    m->constraint = data_codec_constraint(m->codec, m->solver);
    return HR_OK;
}

static void tune_free(model *m)
{
    hr_h5_free_strings(m->param_names, m->param_names ? (size_t)m->length : 0);
    if (m->vocab)
        for (int j = 0; j < m->length; j++) free(m->vocab[j]);
    free(m->vocab);
    free(m->vocab_size);
    free(m->solver);
}

/* The parameters, and each one's values. */
static int tune_vocab_check(const model *old, const model *now, int by_kernel, const char *name)
{
    (void)by_kernel;
    if (old->length != now->length)
        return hr_error(HR_EINVAL, "%s: the model predicts %d parameters, the data has %d", name, old->length,
                        now->length);
    int at = model_names_differ(old->param_names, now->param_names, old->length);
    if (at >= 0)
        return hr_error(HR_EINVAL, "%s: parameter %d is '%s' in the model, '%s' in the data", name, at + 1,
                        old->param_names[at], now->param_names[at]);
    for (int j = 0; j < old->length; j++) {
        int same = old->vocab_size[j] == now->vocab_size[j];
        for (int v = 0; same && v < old->vocab_size[j]; v++) same = old->vocab[j][v] == now->vocab[j][v];
        if (!same)
            return hr_error(HR_EINVAL, "%s: parameter '%s' takes other values in the model (%d) than in the data "
                            "(%d)", name, old->param_names[j], old->vocab_size[j], now->vocab_size[j]);
    }
    return HR_OK;
}

static const model_task_ops *tune_family_ops(const model_family *fam)
{
    return fam->tune ? &fam->tune->ops : NULL;
}

const model_task_part model_task_tune = {
    .task = MODEL_TASK_TUNE,
    .name = "tune",
    .metric = "param_accuracy",
    .init = tune_init,
    .write = tune_write,
    .read = tune_read,
    .free = tune_free,
    .family_ops = tune_family_ops,
    .vocab_check = tune_vocab_check,
};
