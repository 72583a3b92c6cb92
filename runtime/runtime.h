/* runtime: a trained model exported as a small dependency-free C runtime.
 *
 * `heurist export --format c` writes DIR/<prefix>.c and DIR/<prefix>.h: the problem-key parser,
 * the feature computation and the solver rules (data/portable.h, copied verbatim, so the runtime
 * computes exactly the features the model was trained on), the weights as static arrays, and a
 * documented API that takes a problem key or its numeric fields and returns the chosen kernel or the
 * parameter sequence. Only libc and libm are needed: `cc -O2 -c <prefix>.c`.
 * Every family writes its part through its export_c hook (models/gbdt_export.c, reformer_export.c,
 * transformer_export.c, seq2seq_export.c); this folder writes the shared wrapper.
 */
#ifndef HEURIST_RUNTIME_H
#define HEURIST_RUNTIME_H

#include "models/model.h"

/* Writes dir/<prefix>.c and dir/<prefix>.h (atomically); prefix is a C identifier. */
int runtime_export_c(const model *m, const char *dir, const char *prefix);

/* The text of data/portable.h, embedded at build time. */
extern const unsigned char runtime_portable_source[];

#endif
