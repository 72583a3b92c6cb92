/* Selection labels from measured runtimes. */
#include <math.h>
#include <string.h>

#include "data/data.h"

void data_labels_fill(const data_select *ds, const int *rows, int n_rows, data_label_kind kind, float tau,
                      float *y)
{
    data_labels_fill_ties(ds, rows, n_rows, kind, tau, 1.0f, y);
}

void data_labels_fill_ties(const data_select *ds, const int *rows, int n_rows, data_label_kind kind, float tau, float tie,
                           float *y)
{
    int K = ds->n_kernels;
    for (int r = 0; r < n_rows; r++) {
        const float *t = ds->runtime + (size_t)rows[r] * (size_t)K;
        float *p = y + (size_t)r * (size_t)K;
        memset(p, 0, (size_t)K * sizeof *p);
        int best = data_select_best(ds, rows[r]);
        if (best < 0) continue;
        double tmin = t[best], z = 0, bound = tie > 1 ? tie * tmin : tmin;
        if (kind == DATA_LABEL_ONEHOT && !(tie > 1)) {
            p[best] = 1.0f;
            continue;
        }
        for (int k = 0; k < K; k++) {
            if (!isfinite(t[k])) continue;
            double tk = t[k] <= bound ? tmin : t[k]; /* a tie counts as the fastest */
            /* both forms are scaled by t_min so that the sum is well conditioned whatever the units */
            double v = kind == DATA_LABEL_ONEHOT ? tk == tmin
                       : kind == DATA_LABEL_SOFT_RATIO ? tmin / tk : exp(-(tk / tmin - 1.0) / tau);
            p[k] = (float)v;
            z += v;
        }
        for (int k = 0; k < K; k++) p[k] = (float)(p[k] / z);
    }
}

/* One list of the kinds' names ("ratio" and "hard" are other names of soft and onehot): the config tables' enum
 * and the model files' attribute read and write through it. */
const char *const data_label_names[] = {"soft", "ratio", "onehot", "hard", "softmax", NULL};
const int data_label_values[] = {DATA_LABEL_SOFT_RATIO, DATA_LABEL_SOFT_RATIO, DATA_LABEL_ONEHOT, DATA_LABEL_ONEHOT,
                                 DATA_LABEL_SOFTMAX};

int data_label_kind_parse(const char *s, data_label_kind *out)
{
    for (int i = 0; data_label_names[i]; i++)
        if (strcmp(s, data_label_names[i]) == 0) {
            *out = (data_label_kind)data_label_values[i];
            return HR_OK;
        }
    return hr_error(HR_EINVAL, "label type '%s': expected soft, onehot or softmax", s);
}

const char *data_label_kind_name(data_label_kind k)
{
    for (int i = 0; data_label_names[i]; i++)
        if (data_label_values[i] == (int)k) return data_label_names[i];
    return "?";
}
