/* The model families heurist knows, by name: training one, and loading a model file, which names its family. */
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"

static const model_family *const families[] = {
    &model_family_reformer,
    &model_family_transformer,
    &model_family_gbdt,
    &model_family_seq2seq,
    &model_family_frequent,
    &model_family_vendor,
    NULL,
};

const model_family *model_family_find(const char *name)
{
    for (size_t i = 0; families[i]; i++)
        if (strcmp(families[i]->name, name) == 0) return families[i];
    return NULL;
}

const model_family *model_family_at(int i)
{
    int n = (int)(sizeof families / sizeof *families) - 1;
    return i >= 0 && i < n ? families[i] : NULL;
}

const char *model_family_names(void)
{
    static _Thread_local char buf[256];
    buf[0] = '\0';
    for (size_t i = 0; families[i]; i++) {
        if (i) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, families[i]->name, sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

int model_train(const model_family *fam, const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    const model_task_ops *ops = model_family_task(fam, d->task);
    if (!ops)
        return hr_error(HR_EINVAL, "model family '%s' does not support the %s task", fam->name, model_task_name(d->task));
    return ops->train(d, ctx, out);
}

int model_load(const char *path, model **out)
{
    *out = NULL;
    hid_t f;
    int rc = hr_h5_open(path, MODEL_FILE_FORMAT, MODEL_FILE_VERSION, &f, NULL);
    if (rc) return rc;
    char *name = NULL;
    const model_family *fam = NULL;
    if (!(rc = hr_h5_attr_read_str(f, "family", &name)) && !(fam = model_family_find(name)))
        rc = hr_error(HR_EFORMAT, "%s: unknown model family '%s'", path, name);
    free(name);
    if (!rc) rc = model_file_read(f, path, fam, out);
    H5Fclose(f);
    return rc;
}
