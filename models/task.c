/* The tasks heurist learns (select, tune): their names and metrics, the part each adds to a model
 * (models/task_select.c, models/task_tune.c), and a family's table for each. */
#include <string.h>

#include "models/models_internal.h"

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
