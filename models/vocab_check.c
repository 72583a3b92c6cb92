/* models: whether a saved model was trained on the vocabularies of new data (model_vocab_check), for a warm
 * start: trees and weights address kernels, one-hot categories and parameter values by position, so positions
 * must name the same things. */
#include <string.h>

#include "data/table.h"
#include "models/model.h"

/* The first index where two name lists differ, or -1 when they are equal (n is the length of both). */
static int names_differ(char *const *a, char *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(a[i], b[i]) != 0) return i;
    return -1;
}

static int columns_check(const data_table_column *o, const data_table_column *w, int n, const char *side,
                         const char *name)
{
    for (int j = 0; j < n; j++) {
        if (strcmp(o[j].name, w[j].name) != 0 || o[j].categorical != w[j].categorical)
            return hr_error(HR_EINVAL, "%s: %s column %d is '%s' in the model, '%s' in the data", name, side, j + 1,
                            o[j].name, w[j].name);
        if (!o[j].categorical) continue;
        int n_min = o[j].n_vocab < w[j].n_vocab ? o[j].n_vocab : w[j].n_vocab;
        int at = names_differ(o[j].vocab, w[j].vocab, n_min);
        if (at < 0 && o[j].n_vocab != w[j].n_vocab) at = n_min;
        if (at >= 0)
            return hr_error(HR_EINVAL, "%s: column '%s' has the categories {%s%s} in the model, {%s%s} in the data "
                            "(category %d differs)", name, o[j].name, at < o[j].n_vocab ? o[j].vocab[at] : "",
                            at < o[j].n_vocab ? ", ..." : "", at < w[j].n_vocab ? w[j].vocab[at] : "",
                            at < w[j].n_vocab ? ", ..." : "", at + 1);
    }
    return HR_OK;
}

int model_vocab_check(const model *old, const model *now, int by_kernel, const char *name)
{
    if (old->task != now->task)
        return hr_error(HR_EINVAL, "%s: a %s model, the data is for %s", name, model_task_name(old->task),
                        model_task_name(now->task));
    if (!old->table != !now->table)
        return hr_error(HR_EINVAL, "%s: a model of %s, the data is %s", name, old->table ? "a benchmark table" : "a find-db or perf-db",
                        now->table ? "a benchmark table" : "a find-db or perf-db");
    if (old->table) {
        const data_table_spec *o = old->table, *w = now->table;
        int np = o->n_problem + o->n_hardware;
        if (o->n_problem != w->n_problem || o->n_hardware != w->n_hardware || o->n_kernel != w->n_kernel)
            return hr_error(HR_EINVAL, "%s: the model's table has %d problem, %d hardware and %d kernel columns, the "
                            "data's %d, %d and %d", name, o->n_problem, o->n_hardware, o->n_kernel, w->n_problem,
                            w->n_hardware, w->n_kernel);
        int rc = columns_check(o->problem, w->problem, np, "problem", name);
        if (!rc) rc = columns_check(o->kernel, w->kernel, o->n_kernel, "kernel", name);
        if (rc) return rc;
    }
    if (old->n_features != now->n_features)
        return hr_error(HR_EINVAL, "%s: %d features in the model, %d from the data", name, old->n_features,
                        now->n_features);
    int at = names_differ(old->feature_names, now->feature_names, old->n_features);
    if (at >= 0)
        return hr_error(HR_EINVAL, "%s: feature %d is '%s' in the model, '%s' from the data", name, at + 1,
                        old->feature_names[at], now->feature_names[at]);
    if (old->task == MODEL_TASK_SELECT && by_kernel) {
        if (old->n_kernels != now->n_kernels)
            return hr_error(HR_EINVAL, "%s: the model knows %d kernels, the data measures %d (the same kernel set is "
                            "needed)", name, old->n_kernels, now->n_kernels);
        if ((at = names_differ(old->kernels, now->kernels, old->n_kernels)) >= 0)
            return hr_error(HR_EINVAL, "%s: kernel %d is '%s' in the model, '%s' in the data (the same kernel set is "
                            "needed)", name, at + 1, old->kernels[at], now->kernels[at]);
    }
    if (old->task == MODEL_TASK_TUNE) {
        if (old->length != now->length)
            return hr_error(HR_EINVAL, "%s: the model predicts %d parameters, the data has %d", name, old->length,
                            now->length);
        if ((at = names_differ(old->param_names, now->param_names, old->length)) >= 0)
            return hr_error(HR_EINVAL, "%s: parameter %d is '%s' in the model, '%s' in the data", name, at + 1,
                            old->param_names[at], now->param_names[at]);
        for (int j = 0; j < old->length; j++) {
            int same = old->vocab_size[j] == now->vocab_size[j];
            for (int v = 0; same && v < old->vocab_size[j]; v++) same = old->vocab[j][v] == now->vocab[j][v];
            if (!same)
                return hr_error(HR_EINVAL, "%s: parameter '%s' takes other values in the model (%d) than in the data "
                                "(%d)", name, old->param_names[j], old->vocab_size[j], now->vocab_size[j]);
        }
    }
    return HR_OK;
}
