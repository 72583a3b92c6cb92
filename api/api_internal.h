/* What only api/'s files share: the model handle. */
#ifndef HEURIST_API_INTERNAL_H
#define HEURIST_API_INTERNAL_H

#include "heurist.h"
#include "models/model.h"

struct heurist_model {
    model *m;
};

/* HEURIST_OK when h holds a model, else HEURIST_EINVAL naming fn. */
int api_need_model(const heurist_model *h, const char *fn);
/* As api_need_model, and HEURIST_ESTATE when the model does another task. */
int api_need_task(const heurist_model *h, model_task task, const char *fn);

#endif
