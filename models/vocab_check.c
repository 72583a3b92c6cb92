/* models: whether a saved model was trained on the vocabularies of new data (model_vocab_check), for a warm
 * start: trees and weights address kernels, one-hot categories and parameter values by position, so positions
 * must name the same things. The source's part is its codec's (data_codec_check_same), the task's its part's. */
#include "models/models_internal.h"

int model_vocab_check(const model *old, const model *now, int by_kernel, const char *name)
{
    if (old->task != now->task)
        return hr_error(HR_EINVAL, "%s: a %s model, the data is for %s", name, model_task_name(old->task),
                        model_task_name(now->task));
    int rc = data_codec_check_same(old->codec, now->codec, name);
    if (rc) return rc;
    if (old->n_features != now->n_features)
        return hr_error(HR_EINVAL, "%s: %d features in the model, %d from the data", name, old->n_features,
                        now->n_features);
    int at = model_names_differ(old->feature_names, now->feature_names, old->n_features);
    if (at >= 0)
        return hr_error(HR_EINVAL, "%s: feature %d is '%s' in the model, '%s' from the data", name, at + 1,
                        old->feature_names[at], now->feature_names[at]);
    return model_task_part_of(old->task)->vocab_check(old, now, by_kernel, name);
}
