/* nn: a small neural-network training library on OpenBLAS.
 *
 * Conventions (every op in this folder follows them):
 * - Row-major float32 arrays; a batch of B vectors of width D is a (B, D) matrix.
 * - Parameters of a model live in one nn_params block: `w` holds every learnable scalar, `dw` the
 *   gradients, both contiguous, with named views (offset, size) used by checkpoints. Layers record
 *   the offsets of their tensors at layout time (nn_params_add) and read p->w + offset afterwards,
 *   so the optimizer is one loop over flat arrays and zeroing gradients is one memset.
 * - forward(x) -> y writes y; backward(dy) accumulates (+=) into the parameter gradients and into
 *   dx, so callers zero dx before the first contribution. Caches needed by backward are passed in
 *   explicitly by the caller (no hidden allocation inside forward/backward).
 * - Randomness (initialisation, dropout) comes from an hr_rng argument.
 * - Dense matrix products go through cblas_sgemm.
 */
#ifndef HEURIST_NN_H
#define HEURIST_NN_H

#include <stddef.h>

#include "core/core.h"

#define NN_MAX_VIEWS 256

typedef struct nn_param_view {
    char name[64];  /* "block0.A1.weight" */
    size_t offset;  /* into nn_params.w / dw */
    size_t size;
} nn_param_view;

typedef struct nn_params {
    float *w;   /* (n): all learnable values */
    float *dw;  /* (n): their gradients */
    size_t n;
    int n_views;
    nn_param_view views[NN_MAX_VIEWS];
} nn_params;

void nn_params_init(nn_params *p);
/* Reserves n scalars under `name` (unique); returns their offset. Only before nn_params_alloc. */
size_t nn_params_add(nn_params *p, const char *name, size_t n);
/* Allocates w and dw (zeroed) for everything reserved so far. */
int nn_params_alloc(nn_params *p);
void nn_params_zero_grad(nn_params *p);
const nn_param_view *nn_params_find(const nn_params *p, const char *name);
void nn_params_free(nn_params *p);

#endif
