/* The select task's part of every model: the kernel vocabulary, each configuration's values when the source's
 * configurations have them, and which kernels the training data measured per combination of the source's slices
 * (models/applicability.c), or, for valued configurations, per combination of the categorical problem columns
 * (models/match.c). In a model file: the dataset "kernels" and the group "applicability" or "config_match". */
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"

/* A model's configurations as field values, parsed from its kernel names by its codec. */
static int kernel_values(model *m)
{
    int nk = data_codec_config_width(m->codec);
    if (!nk) return HR_OK;
    free(m->kernel_values);
    m->kernel_values = hr_malloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * (size_t)nk * sizeof *m->kernel_values);
    if (!m->kernel_values) return HR_ENOMEM;
    for (int k = 0; k < m->n_kernels; k++) {
        int rc = data_codec_config_parse(m->codec, m->kernels[k], m->kernel_values + (size_t)k * nk);
        if (rc) return hr_error_wrap(rc, "kernel %d", k);
    }
    return HR_OK;
}

static int select_init(model *m, const model_train_data *d)
{
    m->n_kernels = d->sel->n_kernels;
    if (!(m->kernels = model_strv_dup(d->sel->kernels, m->n_kernels))) return HR_ENOMEM;
    int rc = kernel_values(m);
    /* where configurations have values every one applies: each problem's candidates are what was measured for it */
    if (!rc && !m->kernel_values) rc = model_applicability_compute(m, d);
    if (!rc && m->kernel_values) rc = model_match_compute(m, d);
    return rc;
}

static int select_write(const model *m, hid_t f)
{
    int rc = hr_h5_write_strings(f, "kernels", m->kernels, (size_t)m->n_kernels);
    if (!rc && m->applicable) rc = model_applicability_write(m, f);
    if (!rc && m->match) rc = model_match_write(m, f);
    return rc;
}

static int select_read(model *m, hid_t f, const char *path)
{
    size_t n;
    int rc = hr_h5_read_strings(f, "kernels", &m->kernels, &n);
    if (rc) return rc;
    m->n_kernels = (int)n;
    if ((rc = model_applicability_read(m, f))) return hr_error_wrap(rc, "%s", path);
    if ((rc = kernel_values(m))) return hr_error_wrap(rc, "%s", path);
    if (m->kernel_values && (rc = model_match_read(m, f))) return hr_error_wrap(rc, "%s", path);
    return HR_OK;
}

static void select_free(model *m)
{
    hr_h5_free_strings(m->kernels, m->kernels ? (size_t)m->n_kernels : 0);
    free(m->applicable);
    model_match_free(m->match);
    free(m->kernel_values);
}

/* The kernel vocabulary, when the model's outputs or features index it. */
static int select_vocab_check(const model *old, const model *now, int by_kernel, const char *name)
{
    if (!by_kernel) return HR_OK;
    if (old->n_kernels != now->n_kernels)
        return hr_error(HR_EINVAL, "%s: the model knows %d kernels, the data measures %d (the same kernel set is "
                        "needed)", name, old->n_kernels, now->n_kernels);
    int at = model_names_differ(old->kernels, now->kernels, old->n_kernels);
    if (at >= 0)
        return hr_error(HR_EINVAL, "%s: kernel %d is '%s' in the model, '%s' in the data (the same kernel set is "
                        "needed)", name, at + 1, old->kernels[at], now->kernels[at]);
    return HR_OK;
}

static const model_task_ops *select_family_ops(const model_family *fam)
{
    return fam->select ? &fam->select->ops : NULL;
}

const model_task_part model_task_select = {
    .task = MODEL_TASK_SELECT,
    .name = "select",
    .metric = "top1",
    .init = select_init,
    .write = select_write,
    .read = select_read,
    .free = select_free,
    .family_ops = select_family_ops,
    .vocab_check = select_vocab_check,
};
