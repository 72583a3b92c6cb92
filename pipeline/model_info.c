/* What a model file holds (pipe_model_info): `heurist model info` prints it, train's report.json carries it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/table.h"
#include "gbdt/gbdt.h"
#include "models/view.h"
#include "pipeline/pipeline_internal.h"

/* A gbdt model's gain importance (the boosters' gains per feature, summed) as [{"feature", "gain"}] shares of the
 * total, highest first; NULL for a model without boosters. */
static cJSON *importance(const model *m)
{
    model_views *v = NULL;
    if (model_views_create(m, &v)) {
        hr_error_clear();
        return NULL; /* the family shows nothing of itself: no boosters */
    }
    const model_view *nb = model_view_find(v, "boosters");
    const model_view *b0 = model_view_find(v, "booster0");
    cJSON *arr = NULL;
    if (nb && b0 && b0->kind == MODEL_VIEW_BOOSTER) {
        int d = gbdt_booster_num_features(b0->data);
        double *sum = hr_calloc((size_t)(d ? d : 1), sizeof *sum), *one = hr_calloc((size_t)(d ? d : 1), sizeof *one);
        int *order = hr_malloc((size_t)(d ? d : 1) * sizeof *order);
        double total = 0;
        for (long long i = 0; sum && one && order && i < nb->i; i++) {
            char name[MODEL_VIEW_NAME];
            snprintf(name, sizeof name, "booster%lld", i);
            const model_view *b = model_view_find(v, name);
            if (!b || b->kind != MODEL_VIEW_BOOSTER || gbdt_booster_num_features(b->data) != d) continue;
            gbdt_booster_importance(b->data, GBDT_IMPORTANCE_GAIN, one);
            for (int j = 0; j < d; j++) sum[j] += one[j];
        }
        for (int j = 0; sum && j < d; j++) total += sum[j];
        /* highest first, ties in feature order */
        for (int j = 0; order && sum && j < d; j++) {
            int at = j;
            while (at > 0 && sum[order[at - 1]] < sum[j]) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = j;
        }
        arr = sum && one && order ? cJSON_CreateArray() : NULL;
        for (int k = 0; arr && k < d; k++) {
            cJSON *e = cJSON_CreateObject();
            const char *fname = gbdt_booster_feature_name(b0->data, order[k]);
            cJSON_AddStringToObject(e, "feature", fname ? fname : "?");
            cJSON_AddNumberToObject(e, "gain", total > 0 ? sum[order[k]] / total : 0);
            cJSON_AddItemToArray(arr, e);
        }
        free(sum);
        free(one);
        free(order);
    }
    model_views_free(v);
    return arr;
}

cJSON *pipe_model_info(const model *m, const char *path)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    if (path) {
        cJSON_AddStringToObject(j, "path", path);
        struct stat st;
        if (stat(path, &st) == 0) cJSON_AddNumberToObject(j, "file_bytes", (double)st.st_size);
    }
    cJSON_AddStringToObject(j, "family", m->family->name);
    cJSON_AddStringToObject(j, "task", model_task_name(m->task));
    model_views *v = NULL;
    if (!model_views_create(m, &v)) {
        const model_view *o = model_view_find(v, "objective");
        if (o && o->kind == MODEL_VIEW_TEXT) cJSON_AddStringToObject(j, "objective", o->data);
        const model_view *mode = model_view_find(v, "mode");
        if (mode && mode->kind == MODEL_VIEW_TEXT) cJSON_AddStringToObject(j, "mode", mode->data);
        o = model_view_find(v, "rank_loss");
        if (o && o->kind == MODEL_VIEW_TEXT) cJSON_AddStringToObject(j, "rank_loss", o->data);
    } else {
        hr_error_clear();
    }
    model_views_free(v);
    cJSON_AddStringToObject(j, "source", data_codec_name(m->codec));
    const data_table_spec *spec = data_codec_table_spec(m->codec);
    char *schema = spec ? data_table_spec_to_json(spec) : NULL;
    cJSON *sj = schema ? cJSON_Parse(schema) : NULL;
    if (sj) cJSON_AddItemToObject(j, "schema", sj);
    free(schema);
    cJSON *feats = cJSON_AddArrayToObject(j, "features");
    for (int f = 0; feats && f < m->n_features; f++) cJSON_AddItemToArray(feats, cJSON_CreateString(m->feature_names[f]));
    if (m->task == MODEL_TASK_SELECT) {
        cJSON_AddNumberToObject(j, "kernels", m->n_kernels);
    } else {
        if (m->solver) cJSON_AddStringToObject(j, "solver", m->solver);
        cJSON *params = cJSON_AddArrayToObject(j, "parameters");
        for (int p = 0; params && p < m->length; p++) cJSON_AddItemToArray(params, cJSON_CreateString(m->param_names[p]));
    }
    cJSON_AddNumberToObject(j, "params", (double)model_n_params(m));
    cJSON *imp = importance(m);
    if (imp) cJSON_AddItemToObject(j, "importance", imp);
    cJSON *cfg = m->config_json ? cJSON_Parse(m->config_json) : NULL;
    if (cfg) cJSON_AddItemToObject(j, "config", cfg);
    cJSON_AddNumberToObject(j, "seed", (double)m->seed);
    cJSON_AddNumberToObject(j, "train_seconds", m->train_seconds);
    return j;
}

/* "a, b, c" of a JSON array of strings (or of objects' "feature" and share) into f, at most `most` items */
static void list_print(FILE *f, const cJSON *arr, int most)
{
    int i = 0, n = cJSON_GetArraySize(arr);
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (i == most) {
            fprintf(f, " and %d more", n - most);
            break;
        }
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "feature");
        const cJSON *gain = cJSON_GetObjectItemCaseSensitive(e, "gain");
        if (name && gain) fprintf(f, "%s%s %.1f%%", i ? ", " : "", name->valuestring, 100 * gain->valuedouble);
        else if (cJSON_IsString(e)) fprintf(f, "%s%s", i ? ", " : "", e->valuestring);
        i++;
    }
    fputc('\n', f);
}

void pipe_model_info_print(const cJSON *info, FILE *f)
{
    const cJSON *x;
#define ITEM(key) cJSON_GetObjectItemCaseSensitive(info, key)
    if ((x = ITEM("path"))) {
        fprintf(f, "model       %s", x->valuestring);
        if ((x = ITEM("file_bytes"))) fprintf(f, " (%.0f bytes)", x->valuedouble);
        fputc('\n', f);
    }
    fprintf(f, "family      %s", ITEM("family")->valuestring);
    const char *const detail[] = {"objective", "mode", "rank_loss"};
    for (int i = 0; i < 3; i++)
        if ((x = ITEM(detail[i]))) fprintf(f, ", %s %s", detail[i], x->valuestring);
    fprintf(f, "\ntask        %s", ITEM("task")->valuestring);
    if ((x = ITEM("kernels"))) fprintf(f, " over %.0f kernels", x->valuedouble);
    if ((x = ITEM("solver"))) fprintf(f, ", solver %s", x->valuestring);
    fputc('\n', f);
    if ((x = ITEM("parameters"))) {
        fprintf(f, "parameters  ");
        list_print(f, x, 64);
    }
    fprintf(f, "source      %s\n", ITEM("source")->valuestring);
    if ((x = ITEM("schema"))) {
        char *s = cJSON_PrintUnformatted(x);
        if (s) fprintf(f, "schema      %s\n", s);
        free(s);
    }
    x = ITEM("features");
    fprintf(f, "features    %d: ", cJSON_GetArraySize(x));
    list_print(f, x, 64);
    fprintf(f, "params      %.0f\n", ITEM("params")->valuedouble);
    if ((x = ITEM("importance"))) {
        fprintf(f, "importance  gain: ");
        list_print(f, x, 12);
    }
    if ((x = ITEM("config"))) {
        char *s = cJSON_PrintUnformatted(x);
        if (s) fprintf(f, "config      %s\n", s);
        free(s);
    }
    fprintf(f, "seed        %.0f\ntrained in  %.1f s\n", ITEM("seed")->valuedouble, ITEM("train_seconds")->valuedouble);
#undef ITEM
}
