/* The mini-batch loop: shuffle, batches, clip, optimizer step on a warm-up + cosine schedule, validate,
 * keep the best parameters, stop early, checkpoint. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_internal.h"

train_opts train_opts_defaults(void)
{
    train_opts o;
    memset(&o, 0, sizeof o);
    o.epochs = 30;
    o.batch_size = 256;
    o.monitor = TRAIN_MONITOR_LOSS;
    o.optim = nn_optim_defaults(NN_OPTIM_ADAM);
    o.lr = 1e-3f;
    o.warmup = 1.0f;
    o.name = "train";
    o.metric_name = "metric";
    return o;
}

nn_lr_schedule train_schedule(const train_opts *o, long steps_per_epoch)
{
    nn_lr_schedule s;
    memset(&s, 0, sizeof s);
    s.lr = o->lr;
    s.lr_min = o->lr_min;
    s.decay = NN_LR_COSINE;
    s.total = steps_per_epoch * o->epochs;
    s.warmup = (long)lroundf(o->warmup * (float)steps_per_epoch);
    if (s.warmup >= s.total) s.warmup = s.total > 1 ? s.total - 1 : 0;
    return s;
}

void train_result_free(train_result *r)
{
    free(r->curve);
    memset(r, 0, sizeof *r);
}

static int improved(const train_opts *o, const train_progress *pr, float loss, float metric)
{
    if (pr->best_epoch == 0) return 1;
    if (o->monitor == TRAIN_MONITOR_METRIC)
        return metric > pr->best_metric || (metric == pr->best_metric && loss < pr->best_loss);
    return loss < pr->best_loss;
}

static void snapshot(float *dst_w, float *dst_s, const nn_params *params, const nn_params *state)
{
    memcpy(dst_w, params->w, params->n * sizeof *dst_w);
    if (state && state->n) memcpy(dst_s, state->w, state->n * sizeof *dst_s);
}

/* A pass over all parameters cut into one fixed slice per team member. Slices start at multiples of 16
 * values, so vector and scalar code meet each value as in one pass (nn_optim_update). */
typedef struct param_pass {
    nn_params *params;
    nn_optim *optim;
    float lr;
    int update; /* 0: zero the gradients; 1: the optimizer update */
} param_pass;

static void param_pass_run(void *ctx, int tid, int T)
{
    param_pass *pp = ctx;
    const size_t n = pp->params->n;
    size_t lo = n * (size_t)tid / (size_t)T & ~(size_t)15, hi = n * (size_t)(tid + 1) / (size_t)T & ~(size_t)15;
    if (tid == T - 1) hi = n;
    if (pp->update) nn_optim_update(pp->optim, pp->params, pp->lr, lo, hi);
    else if (pp->params->dw) memset(pp->params->dw + lo, 0, (hi - lo) * sizeof(float));
}

/* One epoch of optimizer steps over a fresh shuffle of rows; *loss = mean batch loss. */
static int run_epoch(const train_ops *ops, void *model, nn_params *params, nn_optim *optim,
                     const nn_lr_schedule *sched, const train_opts *o, int *order, const int *rows, int n_rows,
                     long steps, int bs, hr_rng *rng, float *loss, float *lr_out)
{
    memcpy(order, rows, (size_t)n_rows * sizeof *order);
    hr_rng_shuffle_int(rng, order, (size_t)n_rows);
    double sum = 0.0;
    for (long s = 0; s < steps; s++) {
        float l = 0.0f;
        param_pass pass = {params, optim, 0.0f, 0};
        hr_team_run(o->team, param_pass_run, &pass);
        int rc = ops->batch(model, order + (size_t)s * bs, bs, rng, &l);
        if (rc) return rc;
        if (!isfinite(l))
            return hr_error(HR_ESTATE, "training diverged (loss %g at step %ld); try a lower lr or clip", (double)l,
                            optim->step);
        if (o->clip > 0.0f) nn_grad_clip(params, o->clip);
        *lr_out = nn_lr_at(sched, optim->step);
        nn_optim_next(optim);
        pass.lr = *lr_out;
        pass.update = 1;
        hr_team_run(o->team, param_pass_run, &pass);
        sum += l;
    }
    *loss = (float)(sum / (double)steps);
    return HR_OK;
}

int train_run(const train_ops *ops, void *model, nn_params *params, nn_params *state, const int *rows, int n_rows,
              const int *valid, int n_valid, const train_opts *o, train_result *res)
{
    memset(res, 0, sizeof *res);
    if (o->epochs < 1) return hr_error(HR_EINVAL, "epochs must be >= 1 (got %d)", o->epochs);
    if (o->batch_size < 2) return hr_error(HR_EINVAL, "batch_size must be >= 2 (got %d)", o->batch_size);
    if (n_rows < 2) return hr_error(HR_EINVAL, "need at least 2 training rows (got %d)", n_rows);
    if (!(o->lr > 0.0f)) return hr_error(HR_EINVAL, "lr must be > 0");
    /* full batches only (drop_last): a BatchNorm batch of one row has no variance; the shuffle moves the
     * dropped remainder from epoch to epoch */
    int bs = o->batch_size < n_rows ? o->batch_size : n_rows;
    long steps = n_rows / bs;
    nn_lr_schedule sched = train_schedule(o, steps);
    size_t n_state = state ? state->n : 0;

    nn_optim optim;
    int rc = nn_optim_init(&optim, &o->optim, params->n);
    if (rc) return rc;
    int *order = hr_malloc((size_t)n_rows * sizeof *order);
    float *best_w = hr_malloc((params->n ? params->n : 1) * sizeof *best_w);
    float *best_s = hr_malloc((n_state ? n_state : 1) * sizeof *best_s);
    train_progress pr;
    memset(&pr, 0, sizeof pr);
    pr.curve = hr_calloc((size_t)o->epochs, sizeof *pr.curve);
    if (!order || !best_w || !best_s || !pr.curve) {
        rc = HR_ENOMEM;
        goto done;
    }
    hr_rng_seed(&pr.rng, o->seed);
    snapshot(best_w, best_s, params, state);
    train_fingerprint fp = {(long long)params->n, (long long)n_state, n_rows, n_valid, bs, o->epochs,
                            (long long)o->seed, o->config ? o->config : ""};
    const char *name = o->name ? o->name : "train";
    if (o->checkpoint && o->resume && hr_file_exists(o->checkpoint)) {
        free(pr.curve);
        pr.curve = NULL;
        rc = train_checkpoint_load(o->checkpoint, &fp, &pr, params, state, &optim, best_w, best_s);
        if (!rc && pr.n_curve < o->epochs) {
            train_epoch *c = realloc(pr.curve, (size_t)o->epochs * sizeof *c);
            if (!c) rc = hr_error(HR_ENOMEM, "out of memory");
            else pr.curve = c;
        }
        if (rc) goto done;
        hr_log_printf(o->log, HR_LOG_INFO, "%s: resuming from %s after epoch %d\n", name, o->checkpoint, pr.epoch);
    }
    double t0 = hr_now() - pr.seconds;
    while (pr.epoch < o->epochs && !pr.stopped) {
        float tl = 0.0f, lr = 0.0f, vl = NAN, vm = NAN;
        rc = run_epoch(ops, model, params, &optim, &sched, o, order, rows, n_rows, steps, bs, &pr.rng, &tl, &lr);
        if (!rc && n_valid > 0) rc = ops->evaluate(model, valid, n_valid, &vl, &vm);
        if (rc) goto done;
        pr.epoch++;
        if (n_valid == 0 || improved(o, &pr, vl, vm)) {
            pr.best_epoch = pr.epoch;
            pr.best_loss = vl;
            pr.best_metric = vm;
            pr.bad_epochs = 0;
            snapshot(best_w, best_s, params, state);
        } else {
            pr.bad_epochs++;
        }
        if (o->patience > 0 && pr.bad_epochs >= o->patience) pr.stopped = 1;
        pr.seconds = hr_now() - t0;
        train_epoch e = {pr.epoch, tl, vl, vm, lr, (float)pr.seconds};
        pr.curve[pr.n_curve++] = e;
        if (n_valid > 0)
            hr_log_printf(o->log, HR_LOG_INFO,
                          "%s: epoch %3d/%d  train loss %.5f  valid loss %.5f  valid %s %.4f  lr %.2e  %.1f s%s\n",
                          name, e.epoch, o->epochs, (double)tl, (double)vl, o->metric_name ? o->metric_name : "metric",
                          (double)vm, (double)lr, pr.seconds, pr.bad_epochs == 0 ? "  *" : "");
        else
            hr_log_printf(o->log, HR_LOG_INFO, "%s: epoch %3d/%d  train loss %.5f  lr %.2e  %.1f s\n", name, e.epoch,
                          o->epochs, (double)tl, (double)lr, pr.seconds);
        if (o->checkpoint) {
            rc = train_checkpoint_save(o->checkpoint, &fp, &pr, params, state, &optim, best_w, best_s);
            if (rc) goto done;
        }
    }
    if (pr.stopped)
        hr_log_printf(o->log, HR_LOG_INFO, "%s: no improvement for %d epochs, stopping; best epoch %d\n", name,
                      o->patience, pr.best_epoch);
    /* the best-validation parameters (the last ones without validation rows) */
    memcpy(params->w, best_w, params->n * sizeof *best_w);
    if (n_state) memcpy(state->w, best_s, n_state * sizeof *best_s);
    res->epochs_run = pr.epoch;
    res->best_epoch = pr.best_epoch;
    res->best_valid_loss = pr.best_loss;
    res->best_valid_metric = pr.best_metric;
    res->stopped_early = pr.stopped;
    res->n_curve = pr.n_curve;
    res->curve = pr.curve;
    pr.curve = NULL;
done:
    free(pr.curve);
    free(order);
    free(best_w);
    free(best_s);
    nn_optim_free(&optim);
    return rc;
}
