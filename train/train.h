/* train: the mini-batch training loop shared by every nn model family.
 *
 * A model plugs in through train_ops, two callbacks over row indices of whatever dataset it holds:
 *   batch(rows)    -> forward + backward in training mode, gradients accumulated into params->dw
 *                     (the loop zeroes them first), returns the batch's mean loss;
 *   evaluate(rows) -> evaluation-mode mean loss and the family's validation metric (higher is better,
 *                     named by opts.metric_name: eval/'s top-1 for selection, parameter accuracy for tuning).
 * The loop knows rows, batches and these callbacks, nothing of datasets or tasks.
 * The loop owns everything else: per epoch a seeded shuffle of the training rows (hr_rng from
 * opts.seed), mini-batches, gradient clipping, the optimizer step at lr = nn_lr_at(schedule, step)
 * (linear warm-up then cosine to lr_min over the whole run), validation, early stopping with a
 * patience, a progress line per epoch, and the best-validation parameters restored at the end.
 * With opts.checkpoint set, a checkpoint (parameters, non-learnable state, optimizer moments, epoch,
 * rng state, best-so-far parameters, curve) is written atomically after every epoch, and
 * opts.resume continues from it: the resumed run is bit-identical to an uninterrupted one.
 * Determinism: same seed, rows and ops => the same parameters, bit for bit (the loop itself adds no
 * thread-dependent reduction; the ops must not either).
 * The loop's options (epochs, batch_size, lr, ...) are rows of each family's config table (core/config.h),
 * with the family's defaults (train_config_options).
 */
#ifndef HEURIST_TRAIN_H
#define HEURIST_TRAIN_H

#include <cJSON.h>
#include <stdint.h>

#include "core/config.h"
#include "core/core.h"
#include "nn/nn.h"

#define TRAIN_CHECKPOINT_FORMAT "heurist-checkpoint"
#define TRAIN_CHECKPOINT_VERSION 1

typedef struct train_ops {
    /* Training mode over rows[0..n): accumulate gradients (+=) into the params' dw; *loss = mean loss.
     * rng drives dropout and must be the only randomness used. */
    int (*batch)(void *model, const int *rows, int n, hr_rng *rng, float *loss);
    /* Evaluation mode over rows[0..n): *loss = mean loss, *metric = task metric (higher is better). */
    int (*evaluate)(void *model, const int *rows, int n, float *loss, float *metric);
} train_ops;

typedef enum train_monitor {
    TRAIN_MONITOR_LOSS = 0,   /* best = lowest validation loss */
    TRAIN_MONITOR_METRIC = 1, /* best = highest validation metric (ties: lower loss) */
} train_monitor;

typedef struct train_opts {
    int epochs;
    int batch_size;
    int patience;          /* stop after this many epochs without a new best (0: never stop early) */
    train_monitor monitor;
    nn_optim_config optim;
    float lr;              /* peak learning rate */
    float lr_min;          /* cosine floor */
    float warmup;          /* warm-up length in epochs (may be fractional) */
    float clip;            /* global gradient-norm clip (0: none) */
    uint64_t seed;
    const hr_log *log;     /* progress lines (NULL: silent) */
    const char *name;      /* prefix of progress lines */
    const char *metric_name; /* name of evaluate's metric in progress lines (default "metric") */
    const char *checkpoint;/* HDF5 checkpoint path (NULL: none) */
    int resume;            /* continue from `checkpoint` when it exists */
    const char *config;    /* the family's options in effect, "name=value" lines (hr_config_effective): recorded in
                            * the checkpoint, and a resume under other values is refused naming the option */
    hr_team *team;         /* threads for the step's passes over all parameters (zeroing, the optimizer
                            * update), each on fixed slices: the same bits as one thread. NULL: the caller */
} train_opts;

/* Defaults: 30 epochs, batch 256, patience 0, Adam lr 1e-3, cosine to 0, 1 warm-up epoch, no clip. */
train_opts train_opts_defaults(void);

typedef struct train_epoch {
    int epoch;             /* 1-based */
    float train_loss;      /* mean over the epoch's batches */
    float valid_loss;      /* NAN without validation rows */
    float valid_metric;
    float lr;              /* at the epoch's last step */
    float seconds;         /* wall clock since the start of training (across resumes) */
} train_epoch;

typedef struct train_result {
    int epochs_run;        /* epochs completed, including ones before a resume */
    int best_epoch;        /* epoch whose parameters were restored (last epoch without validation) */
    float best_valid_loss, best_valid_metric;
    int stopped_early;
    int n_curve;
    train_epoch *curve;    /* (n_curve) */
} train_result;

/* Trains params (and the non-learnable block `state`, may be NULL) in place on rows[0..n_rows),
 * validating on valid[0..n_valid) (n_valid may be 0). params and state must be initialised. */
int train_run(const train_ops *ops, void *model, nn_params *params, nn_params *state, const int *rows, int n_rows,
              const int *valid, int n_valid, const train_opts *opts, train_result *res);
void train_result_free(train_result *r);

/* ---- the loop's options in a family's config table (core/config.h) ---- */
enum { TRAIN_CONFIG_N = 10 };
/* Writes the loop's TRAIN_CONFIG_N options (epochs, batch_size, lr, lr_min, weight_decay, optimizer
 * adam|adamw|sgd, patience, warmup, clip, monitor loss|top1) into rows, with the defaults in *def, for a
 * config struct that holds its train_opts at byte offset `at`; returns TRAIN_CONFIG_N. */
size_t train_config_options(const train_opts *def, size_t at, hr_config_option *rows);
/* After hr_config_read: the optimizer's constants for the kind read, keeping the weight decay read. */
void train_config_finish(train_opts *o);

/* ---- helpers for the nn families' ops ---- */
/* out (n, nf) = (X[rows[i]] - mean) / std, row by row. */
void train_gather_zscore(const float *X, int nf, const int *rows, int n, const float *mean, const float *std,
                         float *out);

/* The schedule train_run uses for a run of `steps_per_epoch` steps per epoch. */
nn_lr_schedule train_schedule(const train_opts *opts, long steps_per_epoch);

#endif
