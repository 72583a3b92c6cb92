/* Config checks shared by the model family tests: a family's train refuses a config with one exact message. */
#ifndef HEURIST_TESTS_MODELS_CONFIG_H
#define HEURIST_TESTS_MODELS_CONFIG_H

#include "models/model.h"

/* The family's train refuses config (JSON text) with HR_EINVAL, no model and exactly `message`, before
 * touching the data (a one-row dummy of `task` is passed). */
void check_config_refused(const model_family *fam, model_task task, const char *config, const char *message);
/* The loop's options refused alike by every family trained through it: epochs "x", true, 2.9, 1e10 and 0,
 * lr 1e300, optimizer "lion". */
void check_loop_config_refused(const model_family *fam, model_task task);

#endif
