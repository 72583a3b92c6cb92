/* The model families heurist knows, by name, and the tasks: their names, and each family's table for each. */
#include <string.h>

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

static const model_task_part *const tasks[] = {&model_task_select, &model_task_tune};

const model_task_part *model_task_part_of(model_task task)
{
    for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++)
        if (tasks[i]->task == task) return tasks[i];
    hr_error(HR_EINVAL, "no task %d", (int)task);
    return NULL;
}

const char *model_task_name(model_task task)
{
    for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++)
        if (tasks[i]->task == task) return tasks[i]->name;
    return NULL;
}

const char *model_task_metric(model_task task)
{
    for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++)
        if (tasks[i]->task == task) return tasks[i]->metric;
    return NULL;
}

model_task model_task_of_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof tasks / sizeof *tasks; i++)
        if (!strcmp(tasks[i]->name, name)) return tasks[i]->task;
    return 0;
}

const model_task_ops *model_family_task(const model_family *fam, model_task task)
{
    const model_task_part *part = model_task_part_of(task);
    return part ? part->family_ops(fam) : NULL;
}

int model_train(const model_family *fam, const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    const model_task_ops *ops = model_family_task(fam, d->task);
    if (!ops)
        return hr_error(HR_EINVAL, "model family '%s' does not support the %s task", fam->name, model_task_name(d->task));
    return ops->train(d, ctx, out);
}
