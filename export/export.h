/* export: a trained model written as a small dependency-free C runtime.
 *
 * `heurist export --format c` writes DIR/<prefix>.c and DIR/<prefix>.h: the problem-key parser, the
 * feature computation and the solver rules (data/portable.h, copied verbatim, so the runtime computes
 * exactly the features the model was trained on), the weights as static arrays, the family's inference
 * kernels, and a documented API that takes a problem key or its numeric fields and returns the chosen
 * kernel or the parameter sequence. Only libc and libm are needed: `cc -O2 -c <prefix>.c`.
 *
 * This folder is the layer above models/ and reads models only through their views (models/view.h): export.c
 * writes the header and the API around the family's part and dispatches by family to gbdt.c, reformer.c,
 * transformer.c and seq2seq.c (table.c and reformer_towers.c for models of a benchmark table), which write the
 * weights and the code shaped by the model's sizes; emit.c holds the helpers they share; lightgbm.c writes a
 * gbdt's booster in LightGBM's text format. The fixed code
 * (the API's key parsing and features, tree traversal, sparse products, LayerNorm, LSTM cells, the
 * attention decoder, beam search ...) lives in export/runtime/ (api.h and one header per family) as real
 * C that tests/test_export_runtime.c compiles and checks against data/, gbdt/ and nn/; the build embeds
 * those files, data/portable.h and nn/tanh_fast.h as strings, and the writers copy them in by section.
 */
#ifndef HEURIST_EXPORT_EXPORT_H
#define HEURIST_EXPORT_EXPORT_H

#include "models/model.h"

/* Writes dir/<prefix>.c and dir/<prefix>.h (atomically); prefix is a C identifier. name (the model's file)
 * is named in messages, such as the refusal of a model with a non-finite weight. */
int export_c_write(const model *m, const char *name, const char *dir, const char *prefix);
/* Whether m can be written in LightGBM's text format: HR_EINVAL, naming `name`, for a model of another family or a
 * gbdt with several boosters (tune). */
int export_lightgbm_check(const model *m, const char *name);
/* Writes a gbdt model's one booster at path in LightGBM's text format (version=v4) and its tree count into *trees
 * (may be NULL); refuses what export_lightgbm_check refuses. */
int export_lightgbm_write(const model *m, const char *name, const char *path, int *trees);

#endif
