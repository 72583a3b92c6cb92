/* export: a trained model written as a small dependency-free C runtime.
 *
 * `heurist export --format c` writes DIR/<prefix>.c and DIR/<prefix>.h: the problem-key parser, the
 * feature computation and the solver rules (data/portable.h, copied verbatim, so the runtime computes
 * exactly the features the model was trained on), the weights as static arrays, the family's inference
 * kernels, and a documented API that takes a problem key or its numeric fields and returns the chosen
 * kernel or the parameter sequence. Only libc and libm are needed: `cc -O2 -c <prefix>.c`.
 *
 * This folder is the layer above models/: export.c writes the header and the API around the family's
 * part and dispatches by family to gbdt.c, reformer.c, transformer.c and seq2seq.c, which write the
 * weights and the code shaped by the model's sizes; emit.c holds the helpers they share. The fixed code
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

#endif
