/* The loop's options as rows of a family's config table (core/config.h), with the family's defaults. */
#include <stddef.h>
#include <string.h>

#include "train/train.h"

/* enum options are stored through an int */
_Static_assert(sizeof(nn_optim_kind) == sizeof(int) && sizeof(train_monitor) == sizeof(int), "enum size");

static const char *const optimizer_names[] = {"adam", "adamw", "sgd", NULL};
static const int optimizer_values[] = {NN_OPTIM_ADAM, NN_OPTIM_ADAMW, NN_OPTIM_SGD};
/* "metric" is another name for the task metric, which is top-1 for select */
static const char *const monitor_names[] = {"loss", "top1", "metric", NULL};
static const int monitor_values[] = {TRAIN_MONITOR_LOSS, TRAIN_MONITOR_METRIC, TRAIN_MONITOR_METRIC};

size_t train_config_options(const train_opts *def, size_t at, hr_config_option *rows)
{
    const char *optimizer = NULL;
    for (int i = 0; optimizer_names[i]; i++)
        if (optimizer_values[i] == (int)def->optim.kind) optimizer = optimizer_names[i];
    HR_ASSERT(optimizer);
    const hr_config_option loop[TRAIN_CONFIG_N] = {
        {.name = "epochs", .type = HR_CONFIG_INT, .offset = at + offsetof(train_opts, epochs), .def = def->epochs,
         .min = 1, .max = 1000000, .doc = "passes over the training rows"},
        {.name = "batch_size", .type = HR_CONFIG_INT, .offset = at + offsetof(train_opts, batch_size),
         .def = def->batch_size, .min = 2, .max = 1 << 20, .doc = "rows per optimizer step"},
        {.name = "lr", .type = HR_CONFIG_FLOAT, .offset = at + offsetof(train_opts, lr), .def = def->lr, .min = 1e-9,
         .max = 100, .doc = "peak learning rate (after warm-up, before the cosine decay)"},
        {.name = "lr_min", .type = HR_CONFIG_FLOAT, .offset = at + offsetof(train_opts, lr_min), .def = def->lr_min,
         .min = 0, .max = 100, .doc = "learning rate at the end of the cosine decay"},
        {.name = "weight_decay", .type = HR_CONFIG_FLOAT, .offset = at + offsetof(train_opts, optim.weight_decay),
         .def = def->optim.weight_decay, .min = 0, .max = 100, .doc = "weight decay (decoupled for adamw)"},
        {.name = "optimizer", .type = HR_CONFIG_ENUM, .offset = at + offsetof(train_opts, optim.kind),
         .def_name = optimizer, .names = optimizer_names, .values = optimizer_values, .doc = "update rule"},
        {.name = "patience", .type = HR_CONFIG_INT, .offset = at + offsetof(train_opts, patience),
         .def = def->patience, .min = 0, .max = 1000000,
         .doc = "stop after this many epochs without a better validation figure (0: never)"},
        {.name = "warmup", .type = HR_CONFIG_FLOAT, .offset = at + offsetof(train_opts, warmup), .def = def->warmup,
         .min = 0, .max = 1e6, .doc = "linear warm-up length in epochs (may be fractional)"},
        {.name = "clip", .type = HR_CONFIG_FLOAT, .offset = at + offsetof(train_opts, clip), .def = def->clip,
         .min = 0, .max = 1e12, .doc = "global gradient-norm clip (0: none)"},
        {.name = "monitor", .type = HR_CONFIG_ENUM, .offset = at + offsetof(train_opts, monitor),
         .def_name = def->monitor == TRAIN_MONITOR_LOSS ? "loss" : "top1", .names = monitor_names,
         .values = monitor_values, .doc = "validation figure that picks the best epoch"},
    };
    memcpy(rows, loop, sizeof loop);
    return TRAIN_CONFIG_N;
}

void train_config_finish(train_opts *o)
{
    float wd = o->optim.weight_decay;
    o->optim = nn_optim_defaults(o->optim.kind);
    o->optim.weight_decay = wd;
}
