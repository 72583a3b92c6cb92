/* The model families heurist knows, by name. */
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
