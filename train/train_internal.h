/* What only train/ uses: the loop's resumable state and its checkpoint file. */
#ifndef HEURIST_TRAIN_INTERNAL_H
#define HEURIST_TRAIN_INTERNAL_H

#include "train/train.h"

/* Everything besides the parameters and optimizer that a resumed run needs to continue bit for bit. */
typedef struct train_progress {
    int epoch;           /* epochs completed */
    int best_epoch;      /* 0: none yet */
    int bad_epochs;      /* epochs since the last new best */
    int stopped;         /* early stopping fired */
    float best_loss, best_metric;
    hr_rng rng;          /* state after the last completed epoch */
    double seconds;      /* training wall clock so far */
    int n_curve;
    train_epoch *curve;  /* (n_curve), malloc'd */
} train_progress;

/* Identifies a run: a checkpoint of another run (other rows, batch size, epochs, seed, model) is refused. */
typedef struct train_fingerprint {
    long long n_params, n_state, n_rows, n_valid, batch_size, epochs, seed;
    const char *config; /* train_opts.config ("" when the run records none) */
} train_fingerprint;

/* Writes the checkpoint atomically (temporary file, then rename). best_w / best_s: best-so-far copies. */
int train_checkpoint_save(const char *path, const train_fingerprint *fp, const train_progress *pr,
                          const nn_params *params, const nn_params *state, const nn_optim *optim,
                          const float *best_w, const float *best_s);
/* Restores everything train_checkpoint_save wrote; pr->curve is allocated. */
int train_checkpoint_load(const char *path, const train_fingerprint *fp, train_progress *pr, nn_params *params,
                          nn_params *state, nn_optim *optim, float *best_w, float *best_s);

#endif
