/* The contract's report JSON (docs/contract.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_internal.h"

static cJSON *metrics_object(const pipe_dataset *d, const pipe_result *r)
{
    cJSON *m = cJSON_CreateObject();
    const pipe_task *t = pipe_task_of(r->task);
    if (t) t->metrics_json(m, d, r);
    return m;
}

static cJSON *header(const pipe_dataset *d, const char *model_name, const char *split_desc)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", model_task_name(d->task));
    cJSON_AddStringToObject(o, "model", model_name);
    cJSON_AddStringToObject(o, "data", d->name);
    const char *kind = d->codec ? data_codec_kind(d->codec) : NULL, *solver = pipe_task_of(d->task)->solver(d);
    if (kind) cJSON_AddStringToObject(o, "data_kind", kind);
    if (solver) cJSON_AddStringToObject(o, "solver", solver);
    cJSON_AddStringToObject(o, "split", split_desc);
    if (d->grouping) cJSON_AddStringToObject(o, "groups", d->grouping);
    return o;
}

cJSON *pipe_report_object(const pipe_dataset *d, const char *model_name, const char *split_desc, const pipe_result *r)
{
    cJSON *o = header(d, model_name, split_desc);
    cJSON_AddNumberToObject(o, "n_train", r->n_train);
    cJSON_AddNumberToObject(o, "n_test", r->n_test);
    cJSON_AddItemToObject(o, "metrics", metrics_object(d, r));
    cJSON *t = cJSON_AddObjectToObject(o, "timing");
    pipe_json_num(t, "train_seconds", r->train_seconds);
    pipe_json_num(t, "predict_us", r->predict_us);
    cJSON *s = cJSON_AddObjectToObject(o, "size");
    cJSON_AddNumberToObject(s, "params", (double)r->params);
    cJSON_AddNumberToObject(s, "model_bytes", (double)r->model_bytes);
    const pipe_task *task = pipe_task_of(r->task);
    if (task && task->report_json) task->report_json(o, d, r, 1);
    return o;
}

cJSON *pipe_report_cv(const pipe_dataset *d, const char *model_name, int k, uint64_t seed, const pipe_result *folds)
{
    char desc[64];
    snprintf(desc, sizeof desc, "groupkfold:%d:seed=%llu", k, (unsigned long long)seed);
    /* the summary is the mean of the folds' figures, field by field */
    cJSON *o = header(d, model_name, desc);
    cJSON *arr = cJSON_CreateArray();
    double n_train = 0, n_test = 0, ts = 0, pu = 0, params = 0, bytes = 0;
    for (int f = 0; f < k; f++) {
        cJSON *fo = pipe_report_object(d, model_name, desc, &folds[f]);
        cJSON_AddNumberToObject(fo, "fold", f);
        cJSON_AddItemToArray(arr, fo);
        n_train += folds[f].n_train;
        n_test += folds[f].n_test;
        ts += folds[f].train_seconds;
        pu += folds[f].predict_us;
        params += (double)folds[f].params;
        bytes += (double)folds[f].model_bytes;
    }
    cJSON_AddNumberToObject(o, "n_train", n_train / k);
    cJSON_AddNumberToObject(o, "n_test", n_test / k);
    cJSON *mean = cJSON_CreateObject();
    cJSON *first = cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "metrics");
    const cJSON *it;
    cJSON_ArrayForEach(it, first)
    {
        if (!cJSON_IsNumber(it) && !cJSON_IsNull(it)) continue; /* a null (r2 of a model with none) stays null */
        double s = 0;
        int cnt = 0;
        for (int f = 0; f < k; f++) {
            const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, f), "metrics"), it->string);
            if (cJSON_IsNumber(v)) {
                s += v->valuedouble;
                cnt++;
            }
        }
        pipe_json_num(mean, it->string, cnt ? s / cnt : NAN);
    }
    cJSON_AddItemToObject(o, "metrics", mean);
    cJSON *t = cJSON_AddObjectToObject(o, "timing");
    pipe_json_num(t, "train_seconds", ts / k);
    pipe_json_num(t, "predict_us", pu / k);
    cJSON *s = cJSON_AddObjectToObject(o, "size");
    cJSON_AddNumberToObject(s, "params", params / k);
    cJSON_AddNumberToObject(s, "model_bytes", bytes / k);
    const pipe_task *task = pipe_task_of(folds[0].task);
    if (task && task->report_json) task->report_json(o, d, folds, k);
    cJSON_AddItemToObject(o, "folds", arr);
    return o;
}

int pipe_json_write(const char *path, const cJSON *json)
{
    char *text = cJSON_Print(json);
    if (!text) return hr_error(HR_ENOMEM, "%s: cannot render JSON", path);
    size_t n = strlen(text);
    text[n] = '\n';
    int rc = hr_file_write_atomic(path, text, n + 1);
    free(text);
    return rc;
}

void pipe_result_format(const char *model_name, const pipe_result *r, char *buf, size_t n)
{
    const pipe_task *t = pipe_task_of(r->task);
    if (t) t->format(model_name, r, buf, n);
    else snprintf(buf, n, "%-12s (no result)", model_name);
}

int pipe_report_md(const char *path, const pipe_dataset *d, const char *model_name, const char *split_desc,
                   const pipe_result *r)
{
    const pipe_task *t = pipe_task_of(r->task);
    char *tmp = hr_file_tmp_path(path);
    if (!tmp) return HR_ENOMEM;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return hr_error(HR_EIO, "%s: cannot create", path);
    }
    fprintf(f, "# heurist eval: %s on %s\n\nTask `%s`, %d of %d problems (split %s).\n\n", model_name, d->name,
            model_task_name(d->task), r->n_test, d->n, split_desc);
    const char *names[1] = {model_name};
    const pipe_result *res[1] = {r};
    int nres[1] = {1};
    t->md_tables(f, d, 1, names, res, nres);
    int rc = ferror(f) ? hr_error(HR_EIO, "%s: write failed", path) : HR_OK;
    if (fclose(f) != 0 && !rc) rc = hr_error(HR_EIO, "%s: write failed", path);
    if (rc) remove(tmp);
    else rc = hr_file_commit(tmp, path);
    free(tmp);
    return rc;
}
