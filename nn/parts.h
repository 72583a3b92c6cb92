/* nn/parts: a training batch cut into parts that threads run side by side (the Reformer's batch_parts,
 * models/reformer_classes.c). Each part runs the passes on its own contiguous rows with its own cache; what
 * couples the rows, BatchNorm's statistics over the whole batch, is computed in phases: every part writes
 * its partial sums into its own row of a shared scratch, and after a barrier every part adds all rows in part
 * order. Every sum therefore has an order fixed by the number of parts, never by the threads. One part gives
 * the whole-batch ops of nn/nn.h bit for bit.
 */
#ifndef HEURIST_NN_PARTS_H
#define HEURIST_NN_PARTS_H

#include "nn/nn.h"

/* Train-mode BatchNorm over a batch of B rows cut into nparts parts of contiguous rows, for parts run by
 * different threads: each part's passes write its own partial column sums, and the statistics add the
 * parts' sums in part order, so the result depends on the number of parts, never on which thread ran
 * which part. Per part, forward: part_sum -> (all parts) -> part_mean, part_sumsq -> (all) -> part_rstd,
 * part_apply; backward: part_dsums -> (all) -> part_backward. sums / ss are (nparts, d), dsums
 * (nparts, 2 d); a part writes only its own row of them. One part is nn_batchnorm_forward / _backward. */
void nn_batchnorm_part_sum(const nn_batchnorm *bn, const float *x, int Bp, float *sum);
void nn_batchnorm_part_mean(const nn_batchnorm *bn, const float *sums, int nparts, int B, float *mean);
void nn_batchnorm_part_sumsq(const nn_batchnorm *bn, const float *x, int Bp, const float *mean, float *ss);
/* rstd (d) from the parts' centred squares; the running statistics are updated when state is given (by
 * one part only) */
void nn_batchnorm_part_rstd(const nn_batchnorm *bn, nn_params *state, const float *mean, const float *ss,
                            int nparts, int B, float *rstd);
void nn_batchnorm_part_apply(const nn_batchnorm *bn, const nn_params *p, const float *x, float *y,
                             const float *mean, const float *rstd, int Bp);
void nn_batchnorm_part_dsums(const nn_batchnorm *bn, const float *x, const float *dy, const float *mean,
                             const float *rstd, int Bp, float *dsums);
/* dgamma, dbeta += this part's sums (row `part` of dsums); dx (Bp rows, ld apart) += (or = when !add) the
 * input gradient from the whole batch's column means */
void nn_batchnorm_part_backward(const nn_batchnorm *bn, nn_params *p, const float *x, const float *dy,
                                const float *mean, const float *rstd, const float *dsums, int nparts, int part,
                                int Bp, float *dx, int ld, int add, int B);

/* The same over a batch of B rows cut into parts (see nn_batchnorm_part_*), a part's rows x, y, dy, dx and
 * its own cache c: forward in phases 0, 1, 2 and backward in phases 0, 1, every part finishing a phase
 * before any part starts the next (the caller's barrier). `part` says which part, of how many, with how
 * many rows (Bp), and the block's shared scratch: 2 nparts d_hidden floats (forward; dsums in backward),
 * one scratch per block. Running statistics go to state when it is given (one part only). One part gives
 * nn_gamma_forward / _backward bit for bit. */
typedef struct nn_part {
    int index, n; /* this part, of n */
    int B;        /* rows of the whole batch */
    float *scratch;
} nn_part;
void nn_gamma_forward_part(const nn_gamma *g, const nn_params *p, nn_params *state, nn_gamma_cache *c,
                           const float *x, float *y, int Bp, int train, hr_rng *rng, const nn_part *part,
                           int phase);
void nn_gamma_backward_part(const nn_gamma *g, nn_params *p, nn_gamma_cache *c, const float *x, const float *y,
                            const float *dy, float *dx, int Bp, const nn_part *part, int phase);

#endif
