/* Family "gbdt": our gradient-boosted trees behind the model interface.
 * select, objective "softmax" (default): one multiclass booster over kernels, trained on soft labels
 *   softmax(-t/(tau t_min)) (or "soft" runtime-ratio / "onehot" labels), scores = raw class scores.
 * select, objective "rank": one L2 booster over measured (problem, kernel) pairs regressing
 *   log(t / t_fastest) from problem features plus the kernel id (categorical); scores = -prediction.
 *   On a source whose configurations have values (a benchmark table) the kernel id gives way to the pair's
 *   features, so any configuration is scored (models/gbdt_table.c).
 * tune: one multiclass booster per parameter position (the classical baseline), argmax per position.
 * This file holds the model, its prediction and its files; models/gbdt_train.c trains it and names the family's
 * parts in its table, models/gbdt_options.c reads and writes its options.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "gbdt/gbdt.h"
#include "models/model.h"
#include "models/models_internal.h"

void gbdt_model_free(model *m)
{
    gbdt_model *g = (gbdt_model *)m;
    for (int i = 0; i < g->n_boosters; i++) gbdt_booster_free(g->boosters[i]);
    free(g->boosters);
    free(g->rank_cand);
    model_base_free(&g->base);
    free(g);
}

#define GBDT_MAX_OUT 1024

int gbdt_model_predict_select(const model *m, void *ws, const double *pv, const float *x, float *scores)
{
    const gbdt_model *g = (const gbdt_model *)m;
    double out[GBDT_MAX_OUT];
    int K = m->n_kernels;
    if (g->mode == GBDT_MODE_RANK && m->kernel_values)
        return gbdt_table_predict_candidates(m, ws, x, m->kernel_values, K, scores);
    if (g->mode == GBDT_MODE_SOFTMAX) {
        HR_ASSERT(gbdt_booster_num_class(g->boosters[0]) == K && K <= GBDT_MAX_OUT);
        gbdt_booster_predict_raw_row(g->boosters[0], x, out);
        for (int k = 0; k < K; k++) scores[k] = (float)out[k];
        return HR_OK;
    }
    float xe[256 + 1];
    HR_ASSERT(m->n_features <= 256);
    memcpy(xe, x, (size_t)m->n_features * sizeof *xe);
    /* kernels never measured for this kernel class in training are ranked last */
    const unsigned char *cand = g->rank_cand + (size_t)data_codec_kernel_class(m->codec, pv) * K;
    for (int k = 0; k < K; k++) {
        xe[m->n_features] = (float)k;
        gbdt_booster_predict_raw_row(g->boosters[0], xe, out);
        scores[k] = cand[k] ? (float)-out[0] : -1e30f;
    }
    return HR_OK;
}

int gbdt_model_predict_tune(const model *m, void *ws, const data_tune_problem *q, const float *x, int32_t *values)
{
    (void)ws, (void)q;
    const gbdt_model *g = (const gbdt_model *)m;
    double out[GBDT_MAX_OUT];
    for (int j = 0; j < m->length; j++) {
        HR_ASSERT(gbdt_booster_num_class(g->boosters[j]) <= GBDT_MAX_OUT);
        gbdt_booster_predict_raw_row(g->boosters[j], x, out);
        int best = 0;
        for (int c = 1; c < m->vocab_size[j]; c++)
            if (out[c] > out[best]) best = c;
        values[j] = m->vocab[j][best];
    }
    return HR_OK;
}

/* Each sequence's log-probability with the fields taken as independent: the sum over fields of the log-softmax of
 * the field's booster's raw scores at the value's class. */
int gbdt_model_score_tune(const model *m, void *ws, const data_tune_problem *q, const float *x,
                          const int32_t *const *seqs, int n, float *scores)
{
    (void)ws, (void)q;
    const gbdt_model *g = (const gbdt_model *)m;
    double out[GBDT_MAX_OUT];
    for (int i = 0; i < n; i++) scores[i] = 0.0f;
    for (int j = 0; j < m->length; j++) {
        gbdt_booster_predict_raw_row(g->boosters[j], x, out);
        const int V = m->vocab_size[j];
        double mx = out[0], sum = 0.0;
        for (int c = 1; c < V; c++) mx = out[c] > mx ? out[c] : mx;
        for (int c = 0; c < V; c++) sum += exp(out[c] - mx);
        for (int i = 0; i < n; i++) {
            int t = 0;
            while (t < V && m->vocab[j][t] != seqs[i][j]) t++;
            scores[i] += t < V ? (float)(out[t] - mx - log(sum)) : -INFINITY;
        }
    }
    return HR_OK;
}

const char *const gbdt_mode_names[] = {"softmax", "rank", "tune", NULL};

/* The config table's rows that a rank model of a table records */
static hr_config_table gbdt_file_table(hr_config_option *rows)
{
    hr_config_table t = {"gbdt model", rows, gbdt_model_config_options(rows)};
    return t;
}

int gbdt_model_save(const model *m, hid_t group)
{
    const gbdt_model *g = (const gbdt_model *)m;
    int rc = hr_h5_attr_write_str(group, "objective", gbdt_mode_names[g->mode]);
    if (!rc) rc = hr_h5_attr_write_int(group, "boosters", g->n_boosters);
    if (!rc && g->mode == GBDT_MODE_RANK && m->kernel_values) {
        hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
        const hr_config_table t = gbdt_file_table(rows);
        gbdt_cfg cfg;
        hr_config_defaults(&t, &cfg);
        cfg.rank_target = g->target;
        cfg.rank_loss = g->loss;
        rc = hr_config_write_h5(&t, &cfg, GBDT_FILE_TABLE_RANK, group);
    }
    else if (!rc && g->mode == GBDT_MODE_RANK)
        rc = hr_h5_write(group, "rank_candidates", H5T_NATIVE_UCHAR, (size_t)data_codec_kernel_class_count(m->codec),
                         (size_t)m->n_kernels, g->rank_cand);
    for (int i = 0; !rc && i < g->n_boosters; i++) {
        char name[32];
        snprintf(name, sizeof name, "booster%d", i);
        hid_t b;
        if ((rc = hr_h5_group_create(group, name, &b))) break;
        rc = gbdt_booster_write_h5(g->boosters[i], b);
        H5Gclose(b);
    }
    return rc;
}

/* A softmax selection booster has a class per kernel. */
static int select_boosters_check(const gbdt_model *g, const model *base)
{
    if (g->mode == GBDT_MODE_SOFTMAX && gbdt_booster_num_class(g->boosters[0]) != base->n_kernels)
        return hr_error(HR_EFORMAT, "gbdt model: booster has %d classes for %d kernels",
                        gbdt_booster_num_class(g->boosters[0]), base->n_kernels);
    return HR_OK;
}

/* A tune model has a booster per parameter, with a class per value of its parameter (2 for a parameter of one
 * value): prediction reads vocab_size[j] of its outputs into a fixed buffer, so the two must agree as the file is
 * read. */
static int tune_boosters_check(const gbdt_model *g, const model *base)
{
    if (g->n_boosters != base->length)
        return hr_error(HR_EFORMAT, "gbdt model: %d boosters for %d parameters", g->n_boosters, base->length);
    for (int j = 0; j < g->n_boosters; j++) {
        int want = base->vocab_size[j] > 1 ? base->vocab_size[j] : 2;
        if (gbdt_booster_num_class(g->boosters[j]) != want)
            return hr_error(HR_EFORMAT, "gbdt model: booster %d has %d classes for the %d values of parameter '%s'", j,
                            gbdt_booster_num_class(g->boosters[j]), base->vocab_size[j], base->param_names[j]);
    }
    return HR_OK;
}

/* The boosters and their objective; `modes` the objectives a model of the file's task may have, `check` what that
 * task checks of the boosters read. */
static int gbdt_model_load(hid_t group, model *base, const int *modes, int n_modes,
                           int (*check)(const gbdt_model *g, const model *base), model **out)
{
    gbdt_model *g = hr_calloc(1, sizeof *g);
    if (!g) return HR_ENOMEM;
    char *mode = NULL;
    long long nb = 0;
    int rc = hr_h5_attr_read_str(group, "objective", &mode);
    if (!rc) rc = hr_h5_attr_read_int(group, "boosters", &nb);
    if (!rc) {
        g->mode = -1;
        for (int i = 0; gbdt_mode_names[i]; i++)
            if (!strcmp(mode, gbdt_mode_names[i])) g->mode = i;
        int known = 0;
        for (int i = 0; i < n_modes; i++) known |= g->mode == modes[i];
        if (!known || nb < 1 || nb > 64) rc = hr_error(HR_EFORMAT, "gbdt model: bad objective or booster count");
    }
    free(mode);
    if (!rc && !(g->boosters = hr_calloc((size_t)nb, sizeof *g->boosters))) rc = HR_ENOMEM;
    for (int i = 0; !rc && i < nb; i++) {
        char name[32];
        snprintf(name, sizeof name, "booster%d", i);
        hid_t b;
        if ((rc = hr_h5_group_open(group, name, &b))) break;
        rc = gbdt_booster_read_h5(b, &g->boosters[i]);
        H5Gclose(b);
        if (!rc) g->n_boosters = i + 1;
    }
    if (!rc && g->mode == GBDT_MODE_RANK && base->kernel_values) {
        hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
        const hr_config_table t = gbdt_file_table(rows);
        gbdt_cfg cfg;
        rc = hr_config_read_h5(&t, group, GBDT_FILE_TABLE_RANK, 0, &cfg);
        g->target = cfg.rank_target;
        g->loss = cfg.rank_loss;
        int want = base->n_features + data_codec_pair_feature_count(base->codec);
        if (!rc && gbdt_booster_num_features(g->boosters[0]) != want)
            rc = hr_error(HR_EFORMAT, "gbdt model: the booster reads %d features, the pairs have %d",
                          gbdt_booster_num_features(g->boosters[0]), want);
    } else if (!rc && g->mode == GBDT_MODE_RANK) {
        size_t classes = (size_t)data_codec_kernel_class_count(base->codec);
        g->rank_cand = hr_malloc(classes * (size_t)base->n_kernels);
        rc = g->rank_cand ? hr_h5_read(group, "rank_candidates", H5T_NATIVE_UCHAR, classes, (size_t)base->n_kernels,
                                       g->rank_cand)
                          : HR_ENOMEM;
    }
    if (!rc) rc = check(g, base);
    if (rc) {
        for (int i = 0; i < g->n_boosters; i++) gbdt_booster_free(g->boosters[i]);
        free(g->boosters);
        free(g->rank_cand);
        free(g);
        return rc;
    }
    g->base = *base; /* ownership of the shared part moves into the model */
    memset(base, 0, sizeof *base);
    *out = &g->base;
    return HR_OK;
}

int gbdt_model_load_select(hid_t group, model *base, model **out)
{
    static const int modes[] = {GBDT_MODE_SOFTMAX, GBDT_MODE_RANK};
    return gbdt_model_load(group, base, modes, 2, select_boosters_check, out);
}

int gbdt_model_load_tune(hid_t group, model *base, model **out)
{
    static const int modes[] = {GBDT_MODE_TUNE};
    return gbdt_model_load(group, base, modes, 1, tune_boosters_check, out);
}

int gbdt_model_score_target(const model *m)
{
    const gbdt_model *g = (const gbdt_model *)m;
    /* a lambdarank booster's scores order candidates but regress no target */
    return g->mode == GBDT_MODE_RANK && m->kernel_values && g->loss == GBDT_TABLE_LOSS_L2 ? g->target : MODEL_TARGET_NONE;
}

long gbdt_model_n_params(const model *m)
{
    const gbdt_model *g = (const gbdt_model *)m;
    long nodes = 0;
    for (int i = 0; i < g->n_boosters; i++)
        for (int t = 0; t < gbdt_booster_num_trees(g->boosters[i]); t++) {
            const gbdt_tree *tr = gbdt_booster_tree(g->boosters[i], t);
            nodes += 2L * tr->num_leaves - 1;
        }
    return nodes;
}
