/* The model families heurist knows, by name, and the tasks' names. */
#include <string.h>

#include "models/model.h"

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

static const struct task_names {
    model_task task;
    const char *name, *metric;
} tasks[] = {
    {MODEL_TASK_SELECT, "select", "top1"},
    {MODEL_TASK_TUNE, "tune", "param_accuracy"},
};

static const struct task_names *task_find(model_task task)
{
    for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++)
        if (tasks[i].task == task) return &tasks[i];
    return NULL;
}

const char *model_task_name(model_task task)
{
    const struct task_names *t = task_find(task);
    return t ? t->name : NULL;
}

const char *model_task_metric(model_task task)
{
    const struct task_names *t = task_find(task);
    return t ? t->metric : NULL;
}
