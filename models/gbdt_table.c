/* The gbdt family on a source whose configurations have values (objective "rank" on a benchmark table): one L2
 * booster scores a (problem, configuration) pair from the problem features x followed by the codec's pair
 * features, so it ranks any configuration from its fields, measured or not (the CK Tile recipe: regress a
 * log-performance per pair, sort the candidates by the prediction).
 * Targets (higher = better, so the prediction is the score):
 *   relative: -log(cost / cost_best of the problem)   absolute: -log(cost)   log1p: log1p(1 / cost)
 * (cost = time for better=lower tables, 1 / throughput for better=higher ones: absolute is log TFLOPS and
 * log1p is log1p(TFLOPS) there).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/model.h"
#include "models/models_internal.h"

const char *const gbdt_table_target_names[] = {"relative", "absolute", "log1p", NULL};
const int gbdt_table_target_values[] = {MODEL_TARGET_RELATIVE, MODEL_TARGET_ABSOLUTE, MODEL_TARGET_LOG1P};
const char *const gbdt_table_weight_names[] = {"none", "efficiency", NULL};
const char *const gbdt_table_loss_names[] = {"l2", "lambdarank", NULL};

int gbdt_table_feature_count(const model *m)
{
    return m->n_features + data_codec_pair_feature_count(m->codec);
}

int gbdt_table_pairs_build(const model_train_data *d, int target, int weight, const int *rows, int n,
                           gbdt_table_pairs *out)
{
    const data_select *s = d->sel;
    const double *kv = data_select_config_values(s);
    int F = d->n_features, P = data_codec_pair_feature_count(d->codec), Fe = F + P, K = s->n_kernels;
    int np = data_codec_value_count(d->codec), nk = data_codec_config_width(d->codec);
    memset(out, 0, sizeof *out);
    size_t cnt = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) cnt += isfinite(s->runtime[(size_t)rows[i] * K + k]) != 0;
    out->x = hr_malloc((cnt ? cnt : 1) * (size_t)Fe * sizeof *out->x);
    out->y = hr_malloc((cnt ? cnt : 1) * sizeof *out->y);
    out->w = hr_malloc((cnt ? cnt : 1) * sizeof *out->w);
    out->kernel = hr_malloc((cnt ? cnt : 1) * sizeof *out->kernel);
    out->start = hr_malloc(((size_t)n + 1) * sizeof *out->start);
    if (!out->x || !out->y || !out->w || !out->kernel || !out->start) {
        gbdt_table_pairs_free(out);
        return HR_ENOMEM;
    }
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        const float *rt = s->runtime + (size_t)rows[i] * K;
        const double *pv = d->V + (size_t)rows[i] * np;
        double best = INFINITY;
        for (int k = 0; k < K; k++)
            if (rt[k] < best) best = rt[k];
        out->start[i] = at;
        for (int k = 0; k < K; k++) {
            if (!isfinite(rt[k])) continue;
            float *xr = out->x + at * Fe;
            memcpy(xr, d->X + (size_t)rows[i] * F, (size_t)F * sizeof *xr);
            data_codec_pair_features(d->codec, pv, kv + (size_t)k * nk, xr + F);
            out->y[at] = (float)model_target_value(target, rt[k], best);
            out->w[at] = weight == GBDT_TABLE_WEIGHT_EFFICIENCY ? (float)(best / rt[k]) : 1.0f;
            out->kernel[at] = k;
            at++;
        }
    }
    out->start[n] = at;
    out->n = at;
    out->d = Fe;
    return HR_OK;
}

void gbdt_table_pairs_free(gbdt_table_pairs *p)
{
    free(p->x);
    free(p->y);
    free(p->w);
    free(p->kernel);
    free(p->start);
    memset(p, 0, sizeof *p);
}

/* The feature names the trees carry: the problem features', then the pair features'. */
int gbdt_table_names_create(const model *m, char ***out)
{
    int Fe = gbdt_table_feature_count(m);
    char **names = hr_calloc((size_t)Fe, sizeof *names);
    if (!names) return HR_ENOMEM;
    for (int j = 0; j < Fe; j++) {
        char buf[256];
        int rc = j < m->n_features ? (snprintf(buf, sizeof buf, "%s", m->feature_names[j]), HR_OK)
                                   : data_codec_feature_name(m->codec, j, buf, sizeof buf);
        if (rc < 0 || !(names[j] = hr_strdup(buf))) {
            for (int i = 0; i < j; i++) free(names[i]);
            free(names);
            return rc < 0 ? rc : HR_ENOMEM;
        }
    }
    *out = names;
    return HR_OK;
}

/* The scratch of one prediction: the pair's feature vector and the problem's values. */
typedef struct gbdt_table_ws {
    float *x;   /* (n_features + pair features) */
    double *pv; /* (n_problem + n_hardware) */
} gbdt_table_ws;

int gbdt_table_ws_create(const model *m, void **out)
{
    *out = NULL;
    const gbdt_model *g = (const gbdt_model *)m;
    if (!m->kernel_values || g->mode != GBDT_MODE_RANK) return HR_OK;
    gbdt_table_ws *ws = hr_calloc(1, sizeof *ws);
    if (!ws) return HR_ENOMEM;
    ws->x = hr_malloc((size_t)gbdt_table_feature_count(m) * sizeof *ws->x);
    ws->pv = hr_malloc((size_t)(data_codec_value_count(m->codec) + 1) * sizeof *ws->pv);
    if (!ws->x || !ws->pv) {
        gbdt_table_ws_free(ws);
        return HR_ENOMEM;
    }
    *out = ws;
    return HR_OK;
}

void gbdt_table_ws_free(void *p)
{
    gbdt_table_ws *ws = p;
    if (!ws) return;
    free(ws->x);
    free(ws->pv);
    free(ws);
}

int gbdt_table_predict_candidates(const model *m, void *p, const float *x, const double *kv, int n, float *scores)
{
    const gbdt_model *g = (const gbdt_model *)m;
    if (g->mode != GBDT_MODE_RANK || !m->kernel_values) return MODEL_CANDIDATES_BY_NAME; /* softmax: its vocabulary */
    gbdt_table_ws *ws = p;
    HR_ASSERT(ws != NULL);
    int F = m->n_features, nk = data_codec_config_width(m->codec);
    memcpy(ws->x, x, (size_t)F * sizeof *ws->x);
    data_codec_values_of_features(m->codec, x, ws->pv);
    for (int i = 0; i < n; i++) {
        double raw;
        data_codec_pair_features(m->codec, ws->pv, kv + (size_t)i * nk, ws->x + F);
        gbdt_booster_predict_raw_row(g->boosters[0], ws->x, &raw);
        scores[i] = (float)raw;
    }
    return HR_OK;
}
