/* Training checkpoints: one self-describing HDF5 file per run, rewritten atomically after every epoch.
 *   attributes  format, version, the run's fingerprint (sizes, epochs, seed, and "config": every option of the
 *               family in effect, "name=value" lines), epoch, best_epoch, bad_epochs, stopped,
 *               best_loss, best_metric, seconds
 *   rng         (4) uint64: the loop's generator after the last completed epoch
 *   curve       (epochs, 6) float: epoch, train loss, valid loss, valid metric, lr, seconds
 *   current/    parameters and optimizer moments (nn_checkpoint_write)
 *   state/      non-learnable state (BatchNorm running statistics), when the model has any
 *   best/, best_state/  the best-so-far copies
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "train/train_internal.h"

static const char *const fp_names[] = {"n_params", "n_state", "n_rows", "n_valid", "batch_size", "epochs", "seed"};

static void fp_values(const train_fingerprint *fp, long long v[7])
{
    long long t[7] = {fp->n_params, fp->n_state, fp->n_rows, fp->n_valid, fp->batch_size, fp->epochs, fp->seed};
    memcpy(v, t, sizeof t);
}

/* A view of `p`'s layout over other values (the best-so-far copy). */
static nn_params *params_alias(const nn_params *p, const float *w)
{
    nn_params *a = hr_malloc(sizeof *a);
    if (!a) return NULL;
    *a = *p;
    a->w = (float *)w;
    a->dw = NULL;
    return a;
}

static int has_state(const nn_params *state)
{
    return state && state->n_views > 0;
}

int train_checkpoint_save(const char *path, const train_fingerprint *fp, const train_progress *pr,
                          const nn_params *params, const nn_params *state, const nn_optim *optim,
                          const float *best_w, const float *best_s)
{
    hr_h5_out out;
    int rc = hr_h5_create(path, &out);
    if (rc) return rc;
    hid_t f = out.file;
    long long v[7];
    fp_values(fp, v);
    rc = hr_h5_attr_write_str(f, "format", TRAIN_CHECKPOINT_FORMAT);
    if (!rc) rc = hr_h5_attr_write_int(f, "version", TRAIN_CHECKPOINT_VERSION);
    for (int i = 0; i < 7 && !rc; i++) rc = hr_h5_attr_write_int(f, fp_names[i], v[i]);
    if (!rc) rc = hr_h5_attr_write_str(f, "config", fp->config ? fp->config : "");
    if (!rc) rc = hr_h5_attr_write_int(f, "epoch", pr->epoch);
    if (!rc) rc = hr_h5_attr_write_int(f, "best_epoch", pr->best_epoch);
    if (!rc) rc = hr_h5_attr_write_int(f, "bad_epochs", pr->bad_epochs);
    if (!rc) rc = hr_h5_attr_write_int(f, "stopped", pr->stopped);
    if (!rc) rc = hr_h5_attr_write_double(f, "best_loss", pr->best_loss);
    if (!rc) rc = hr_h5_attr_write_double(f, "best_metric", pr->best_metric);
    if (!rc) rc = hr_h5_attr_write_double(f, "seconds", pr->seconds);
    if (!rc) rc = hr_h5_write(f, "rng", H5T_NATIVE_UINT64, 4, 0, pr->rng.s);
    if (!rc) {
        float *c = hr_malloc((size_t)(pr->n_curve ? pr->n_curve : 1) * 6 * sizeof *c);
        if (!c) rc = HR_ENOMEM;
        for (int i = 0; !rc && i < pr->n_curve; i++) {
            const train_epoch *e = &pr->curve[i];
            float row[6] = {(float)e->epoch, e->train_loss, e->valid_loss, e->valid_metric, e->lr, e->seconds};
            memcpy(c + 6 * i, row, sizeof row);
        }
        if (!rc) rc = hr_h5_write(f, "curve", H5T_NATIVE_FLOAT, (size_t)pr->n_curve, 6, c);
        free(c);
    }
    if (!rc) rc = nn_checkpoint_write(f, "current", params, optim);
    nn_params *bw = rc ? NULL : params_alias(params, best_w);
    if (!rc && !bw) rc = HR_ENOMEM;
    if (!rc) rc = nn_checkpoint_write(f, "best", bw, NULL);
    free(bw);
    if (!rc && has_state(state)) {
        rc = nn_checkpoint_write(f, "state", state, NULL);
        nn_params *bs = rc ? NULL : params_alias(state, best_s);
        if (!rc && !bs) rc = HR_ENOMEM;
        if (!rc) rc = nn_checkpoint_write(f, "best_state", bs, NULL);
        free(bs);
    }
    int crc = hr_h5_close(&out, rc == HR_OK);
    if (!rc) rc = crc;
    return rc ? hr_error_wrap(rc, "checkpoint %s", path) : HR_OK;
}

/* The value of option `name` in "name=value\n" lines, into buf; 0 when the lines lack it. */
static int option_value(const char *lines, const char *name, size_t len, char *buf, size_t cap)
{
    for (const char *l = lines; l && *l;) {
        const char *eq = strchr(l, '='), *nl = strchr(l, '\n');
        if (!nl) nl = l + strlen(l);
        if (eq && eq < nl && (size_t)(eq - l) == len && strncmp(l, name, len) == 0) {
            snprintf(buf, cap, "%.*s", (int)(nl - eq - 1), eq + 1);
            return 1;
        }
        l = *nl ? nl + 1 : nl;
    }
    return 0;
}

/* Every option of the run (here) and of the checkpoint (there) by name: the first that differs, or that one of
 * them lacks, is refused naming it. */
static int config_compare(const char *path, const char *there, const char *here)
{
    for (const char *l = here; *l;) {
        const char *eq = strchr(l, '='), *nl = strchr(l, '\n');
        if (!nl) nl = l + strlen(l);
        if (eq && eq < nl) {
            int len = (int)(eq - l);
            char mine[128], theirs[128];
            snprintf(mine, sizeof mine, "%.*s", (int)(nl - eq - 1), eq + 1);
            if (!option_value(there, l, (size_t)len, theirs, sizeof theirs))
                return hr_error(HR_EINVAL, "%s belongs to another run: it records no option %.*s (%s here)", path, len, l,
                                mine);
            if (strcmp(mine, theirs) != 0)
                return hr_error(HR_EINVAL, "%s belongs to another run: option %.*s is %s there, %s here", path, len, l,
                                theirs, mine);
        }
        l = *nl ? nl + 1 : nl;
    }
    for (const char *l = there; *l;) {
        const char *eq = strchr(l, '='), *nl = strchr(l, '\n');
        if (!nl) nl = l + strlen(l);
        char mine[128];
        if (eq && eq < nl && !option_value(here, l, (size_t)(eq - l), mine, sizeof mine))
            return hr_error(HR_EINVAL, "%s belongs to another run: it records option %.*s, which this run does not have",
                            path, (int)(eq - l), l);
        l = *nl ? nl + 1 : nl;
    }
    return HR_OK;
}

static int load_attrs(hid_t f, const char *path, const train_fingerprint *fp, train_progress *pr)
{
    long long want[7], got, x;
    fp_values(fp, want);
    int rc;
    for (int i = 0; i < 7; i++) {
        if ((rc = hr_h5_attr_read_int(f, fp_names[i], &got))) return rc;
        if (got != want[i])
            return hr_error(HR_EINVAL, "%s belongs to another run: %s is %lld there, %lld here", path, fp_names[i],
                            got, want[i]);
    }
    /* the family's options: a checkpoint that records none comes from an older heurist and cannot be checked */
    if (!hr_h5_attr_exists(f, "config"))
        return hr_error(HR_EINVAL, "%s records no training options (written by an older heurist): it cannot be checked "
                        "against this run; remove it to start afresh", path);
    char *there = NULL;
    if ((rc = hr_h5_attr_read_str(f, "config", &there))) return rc;
    rc = config_compare(path, there, fp->config ? fp->config : "");
    free(there);
    if (rc) return rc;
    if ((rc = hr_h5_attr_read_int(f, "epoch", &x))) return rc;
    pr->epoch = (int)x;
    if ((rc = hr_h5_attr_read_int(f, "best_epoch", &x))) return rc;
    pr->best_epoch = (int)x;
    if ((rc = hr_h5_attr_read_int(f, "bad_epochs", &x))) return rc;
    pr->bad_epochs = (int)x;
    if ((rc = hr_h5_attr_read_int(f, "stopped", &x))) return rc;
    pr->stopped = (int)x;
    double d;
    if ((rc = hr_h5_attr_read_double(f, "best_loss", &d))) return rc;
    pr->best_loss = (float)d;
    if ((rc = hr_h5_attr_read_double(f, "best_metric", &d))) return rc;
    pr->best_metric = (float)d;
    if ((rc = hr_h5_attr_read_double(f, "seconds", &pr->seconds))) return rc;
    if (pr->epoch < 0 || pr->epoch > fp->epochs) return hr_error(HR_EFORMAT, "%s: epoch %d out of range", path, pr->epoch);
    return hr_h5_read(f, "rng", H5T_NATIVE_UINT64, 4, 0, pr->rng.s);
}

static int load_curve(hid_t f, const char *path, train_progress *pr)
{
    size_t rows, cols;
    float *c;
    int rc = hr_h5_read_alloc(f, "curve", H5T_NATIVE_FLOAT, &rows, &cols, (void **)&c);
    if (rc) return rc;
    if (rows != (size_t)pr->epoch || (rows && cols != 6)) {
        free(c);
        return hr_error(HR_EFORMAT, "%s: curve has %zu rows for %d epochs", path, rows, pr->epoch);
    }
    pr->curve = hr_calloc(rows ? rows : 1, sizeof *pr->curve);
    if (!pr->curve) {
        free(c);
        return HR_ENOMEM;
    }
    for (size_t i = 0; i < rows; i++) {
        const float *r = c + 6 * i;
        train_epoch e = {(int)r[0], r[1], r[2], r[3], r[4], r[5]};
        pr->curve[i] = e;
    }
    pr->n_curve = (int)rows;
    free(c);
    return HR_OK;
}

int train_checkpoint_load(const char *path, const train_fingerprint *fp, train_progress *pr, nn_params *params,
                          nn_params *state, nn_optim *optim, float *best_w, float *best_s)
{
    hid_t f;
    int rc = hr_h5_open(path, TRAIN_CHECKPOINT_FORMAT, TRAIN_CHECKPOINT_VERSION, &f, NULL);
    if (rc) return rc;
    rc = load_attrs(f, path, fp, pr);
    if (!rc) rc = load_curve(f, path, pr);
    if (!rc) rc = nn_checkpoint_read(f, "current", params, optim);
    nn_params *bw = rc ? NULL : params_alias(params, best_w);
    if (!rc && !bw) rc = HR_ENOMEM;
    if (!rc) rc = nn_checkpoint_read(f, "best", bw, NULL);
    free(bw);
    if (!rc && has_state(state)) {
        rc = nn_checkpoint_read(f, "state", state, NULL);
        nn_params *bs = rc ? NULL : params_alias(state, best_s);
        if (!rc && !bs) rc = HR_ENOMEM;
        if (!rc) rc = nn_checkpoint_read(f, "best_state", bs, NULL);
        free(bs);
    }
    H5Fclose(f);
    return rc ? hr_error_wrap(rc, "resuming from %s", path) : HR_OK;
}
