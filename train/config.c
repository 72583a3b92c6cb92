/* The loop's options from a family's --config object, range-checked with messages naming the key. */
#include <math.h>
#include <string.h>

#include "train/train.h"

const char *const train_config_keys[] = {"epochs", "batch_size", "lr",      "lr_min", "weight_decay", "optimizer",
                                         "patience", "warmup",   "clip",    "monitor", NULL};

static int cfg_number(const cJSON *cfg, const char *key, double def, double *out)
{
    const cJSON *v = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, key) : NULL;
    if (!v) {
        *out = def;
        return HR_OK;
    }
    if (!cJSON_IsNumber(v)) return hr_error(HR_EINVAL, "--config: %s must be a number", key);
    *out = v->valuedouble;
    return HR_OK;
}

int train_cfg_int(const cJSON *cfg, const char *key, int def, int lo, int hi, int *out)
{
    double v = def;
    int rc = cfg_number(cfg, key, def, &v);
    if (rc) return rc;
    if (!(v >= lo && v <= hi) || v != floor(v))
        return hr_error(HR_EINVAL, "--config: %s must be an integer in [%d, %d] (got %g)", key, lo, hi, v);
    *out = (int)v;
    return HR_OK;
}

int train_cfg_float(const cJSON *cfg, const char *key, double def, double lo, double hi, float *out)
{
    double v = def;
    int rc = cfg_number(cfg, key, def, &v);
    if (rc) return rc;
    if (!(v >= lo && v <= hi)) return hr_error(HR_EINVAL, "--config: %s must be in [%g, %g] (got %g)", key, lo, hi, v);
    *out = (float)v;
    return HR_OK;
}

const char *train_cfg_str(const cJSON *cfg, const char *key, const char *def)
{
    const cJSON *v = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : def;
}

int train_opts_from_json(const cJSON *c, train_opts *o)
{
    int rc = train_cfg_int(c, "epochs", o->epochs, 1, 1000000, &o->epochs);
    if (!rc) rc = train_cfg_int(c, "batch_size", o->batch_size, 2, 1 << 20, &o->batch_size);
    if (!rc) rc = train_cfg_int(c, "patience", o->patience, 0, 1000000, &o->patience);
    if (!rc) rc = train_cfg_float(c, "lr", o->lr, 1e-9, 100, &o->lr);
    if (!rc) rc = train_cfg_float(c, "lr_min", o->lr_min, 0, 100, &o->lr_min);
    if (!rc) rc = train_cfg_float(c, "warmup", o->warmup, 0, 1e6, &o->warmup);
    if (!rc) rc = train_cfg_float(c, "clip", o->clip, 0, 1e12, &o->clip);
    if (rc) return rc;
    const char *opt = train_cfg_str(c, "optimizer", NULL);
    if (opt) {
        nn_optim_kind k;
        if (!strcmp(opt, "adam")) k = NN_OPTIM_ADAM;
        else if (!strcmp(opt, "adamw")) k = NN_OPTIM_ADAMW;
        else if (!strcmp(opt, "sgd")) k = NN_OPTIM_SGD;
        else return hr_error(HR_EINVAL, "--config: optimizer '%s': expected adam, adamw or sgd", opt);
        float wd = o->optim.weight_decay;
        o->optim = nn_optim_defaults(k);
        o->optim.weight_decay = wd;
    }
    if ((rc = train_cfg_float(c, "weight_decay", o->optim.weight_decay, 0, 100, &o->optim.weight_decay))) return rc;
    const char *mon = train_cfg_str(c, "monitor", NULL);
    if (mon) {
        if (!strcmp(mon, "loss")) o->monitor = TRAIN_MONITOR_LOSS;
        else if (!strcmp(mon, "top1") || !strcmp(mon, "metric")) o->monitor = TRAIN_MONITOR_METRIC;
        else return hr_error(HR_EINVAL, "--config: monitor '%s': expected loss or top1", mon);
    }
    return HR_OK;
}
