/* Families "frequent" and "vendor": the two baselines every selection report can show beside the learned
 * families, trained and evaluated on the same rows.
 *
 * frequent: the kernel most often fastest among the training problems of the same combination of the source's
 *   slices (a convolution's direction, data type and layout; ties and unseen combinations by the first slice's
 *   counts, then by all training problems):
 *   score_k = f_combo(k) + 1e-3 f_first(k) + 1e-6 f_all(k), f the share of problems k was fastest for.
 *   Its rows are sized for a convolution's slices whatever the source; a source without slices fills the first
 *   combination's and the first direction's rows, which then equal the overall one.
 * vendor: the vendor's own heuristic, replayed from the ranking recorded beside the data (data/vendor.c, or a
 *   benchmark table's vendor column): score_k = -(position of k in the vendor's ranking), kernels it does not
 *   rank -inf. It learns nothing: "training" stores the ranking of every problem of the data by its canonical key,
 *   and a problem it does not hold gets no pick (every score -inf). Problems are keyed by the canonical text of the
 *   values their features hold (data_codec_values_of_features), on both sides, so the keys match whatever the
 *   features round. On the tune task it replays the sequence of the vendor's pick (the configuration it ranks
 *   first) for every problem of the data, MODEL_TUNE_NO_PICK throughout for a problem it does not hold.
 * On other data than their training data (another benchmark table), a configuration they do not know is never their
 * pick (known_only), and the vendor answers with the new data's own vendor ranking where it records one
 * (vendor_column): the vendor's heuristic on that data.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"

/* frequent's rows: per combination of a convolution's slices, per direction, overall */
#define N_COMBOS (DATA_DIR_COUNT * DATA_DTYPE_COUNT * DATA_LAYOUT_COUNT)

typedef struct frequent {
    model base;
    float *share; /* (N_COMBOS + DATA_DIR_COUNT + 1, n_kernels): per combo, per direction, overall */
} frequent;

/* The rows of frequent's table a problem counts in: its combination of slices, its first slice, overall. */
static void share_at(const model *m, const double *pv, size_t at[3])
{
    int v[8] = {0};
    data_codec_slices(m->codec, pv, v);
    int combo = model_slice_combo(m->codec, pv);
    HR_ASSERT(combo < N_COMBOS && v[0] < DATA_DIR_COUNT);
    at[0] = (size_t)combo;
    at[1] = (size_t)N_COMBOS + (size_t)v[0];
    at[2] = (size_t)N_COMBOS + DATA_DIR_COUNT;
}

static void frequent_free(model *mb)
{
    frequent *f = (frequent *)mb;
    free(f->share);
    model_base_free(&f->base);
    free(f);
}

static size_t share_rows(void)
{
    return (size_t)N_COMBOS + DATA_DIR_COUNT + 1;
}

static int frequent_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    if (ctx->config && cJSON_GetArraySize(ctx->config) > 0)
        return hr_error(HR_EINVAL, "frequent config: the baseline has no options");
    frequent *f = hr_calloc(1, sizeof *f);
    if (!f) return HR_ENOMEM;
    int rc = model_base_init(&f->base, &model_family_frequent, d, ctx);
    int K = f->base.n_kernels;
    double *count = rc ? NULL : hr_calloc(share_rows() * (size_t)K, sizeof *count);
    double total[N_COMBOS + DATA_DIR_COUNT + 1] = {0};
    if (!rc && !(f->share = hr_calloc(share_rows() * (size_t)K, sizeof *f->share))) rc = HR_ENOMEM;
    if (!rc && !count) rc = HR_ENOMEM;
    int nv = data_codec_value_count(d->codec);
    for (int i = 0; !rc && i < d->n_train; i++) {
        int row = d->train[i], best = data_select_best(d->sel, row);
        if (best < 0) continue;
        size_t at[3];
        share_at(&f->base, d->V + (size_t)row * nv, at);
        for (int a = 0; a < 3; a++) {
            count[at[a] * (size_t)K + (size_t)best] += 1;
            total[at[a]] += 1;
        }
    }
    for (size_t r = 0; !rc && r < share_rows(); r++)
        for (int k = 0; k < K; k++)
            f->share[r * (size_t)K + (size_t)k] = total[r] > 0 ? (float)(count[r * (size_t)K + (size_t)k] / total[r]) : 0;
    free(count);
    if (rc) {
        frequent_free(&f->base);
        return rc;
    }
    *out = &f->base;
    return HR_OK;
}

static int frequent_predict(const model *mb, void *ws, const double *pv, const float *x, float *scores)
{
    (void)ws, (void)x; /* needs no scratch */
    const frequent *f = (const frequent *)mb;
    int K = mb->n_kernels;
    size_t at[3];
    share_at(mb, pv, at);
    const float *c = f->share + at[0] * (size_t)K;
    const float *dir = f->share + at[1] * (size_t)K;
    const float *all = f->share + at[2] * (size_t)K;
    for (int k = 0; k < K; k++) scores[k] = c[k] + 1e-3f * dir[k] + 1e-6f * all[k];
    return HR_OK;
}

static int frequent_save(const model *mb, hid_t g)
{
    const frequent *f = (const frequent *)mb;
    return hr_h5_write(g, "share", H5T_NATIVE_FLOAT, share_rows(), (size_t)mb->n_kernels, f->share);
}

static int frequent_load(hid_t g, model *base, model **out)
{
    frequent *f = hr_calloc(1, sizeof *f);
    if (!f) return HR_ENOMEM;
    int rc = (f->share = hr_malloc(share_rows() * (size_t)(base->n_kernels > 0 ? base->n_kernels : 1) * sizeof *f->share))
                 ? hr_h5_read(g, "share", H5T_NATIVE_FLOAT, share_rows(), (size_t)base->n_kernels, f->share)
                 : HR_ENOMEM;
    if (rc) {
        free(f->share);
        free(f);
        return rc;
    }
    f->base = *base; /* ownership of the shared part moves into the model */
    memset(base, 0, sizeof *base);
    *out = &f->base;
    return HR_OK;
}

static long frequent_n_params(const model *mb)
{
    return (long)share_rows() * mb->n_kernels;
}

static size_t no_options(hr_config_option *rows)
{
    (void)rows;
    return 0;
}

static const model_select_ops frequent_select = {
    .ops = {.train = frequent_train, .save = frequent_save, .load = frequent_load},
    .predict = frequent_predict,
};

const model_family model_family_frequent = {
    .name = "frequent",
    .select = &frequent_select,
    .n_params = frequent_n_params,
    .free = frequent_free,
    .config_options = no_options,
    .known_only = 1,
};

/* ---- vendor ---- */

typedef struct vendor {
    model base;
    int n;          /* problems */
    char **keys;    /* (n) canonical problem keys, sorted */
    int32_t *off;   /* (n + 1) problem i's ranked kernels are ranked[off[i] .. off[i + 1]) */
    int32_t *ranked; /* (off[n], 2) a ranked kernel and its position in the vendor's ranking (0 = its pick): a
                      * heuristic ranks a handful of a table's thousands of configurations, so only those are kept */
    int32_t *picks; /* tune: (n, length) the sequence of each problem's pick (MODEL_TUNE_NO_PICK throughout: none) */
} vendor;

static void vendor_free(model *mb)
{
    vendor *v = (vendor *)mb;
    hr_h5_free_strings(v->keys, v->keys ? (size_t)v->n : 0);
    free(v->off);
    free(v->ranked);
    free(v->picks);
    model_base_free(&v->base);
    free(v);
}

typedef struct keyed {
    char *key;
    int row;
} keyed;

/* The key the vendor model files a problem under: the canonical text of its features' values. */
static void vendor_key(const model *m, const float *x, char *buf, size_t size)
{
    double pv[DATA_CODEC_MAX_VALUES];
    data_codec_values_of_features(m->codec, x, pv);
    if (data_codec_problem_format(m->codec, pv, buf, size)) buf[0] = '\0';
}

static int cmp_keyed(const void *a, const void *b)
{
    return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

/* Tune: each problem's key and the sequence of the vendor's pick (the configuration it ranks 0), from the tune
 * data's selection (a benchmark table's, with its vendor column). */
static int vendor_train_tune(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    if (ctx->config && cJSON_GetArraySize(ctx->config) > 0)
        return hr_error(HR_EINVAL, "vendor config: the baseline has no options");
    const data_tune *t = d->tune;
    const data_select *s = t->sel;
    if (!s || !s->vendor_rank)
        return hr_error(HR_EINVAL, "%s: no vendor heuristic is recorded in this data (a benchmark table's \"vendor\" "
                        "column)", t->source ? t->source : "data");
    vendor *v = hr_calloc(1, sizeof *v);
    if (!v) return HR_ENOMEM;
    int rc = model_base_init(&v->base, &model_family_vendor, d, ctx), K = s->n_kernels, L = t->length, n = t->n;
    const double *kv = data_select_config_values(s);
    keyed *k = rc ? NULL : hr_calloc((size_t)(n > 0 ? n : 1), sizeof *k);
    v->keys = rc ? NULL : hr_calloc((size_t)(n > 0 ? n : 1), sizeof *v->keys);
    v->picks = rc ? NULL : hr_malloc((size_t)(n > 0 ? n : 1) * (size_t)L * sizeof *v->picks);
    if (!rc && (!k || !v->keys || !v->picks)) rc = HR_ENOMEM;
    for (int i = 0; !rc && i < n; i++) {
        char buf[1024];
        vendor_key(&v->base, d->X + (size_t)i * d->n_features, buf, sizeof buf);
        if (!(k[i].key = hr_strdup(buf))) rc = HR_ENOMEM;
        k[i].row = i;
    }
    if (!rc) qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    for (int i = 0; !rc && i < n; i++) {
        if (v->n && strcmp(v->keys[v->n - 1], k[i].key) == 0) continue;
        int32_t *seq = v->picks + (size_t)v->n * L;
        for (int j = 0; j < L; j++) seq[j] = MODEL_TUNE_NO_PICK;
        for (int c = 0; c < K; c++)
            if (s->vendor_rank[(size_t)k[i].row * K + c] == 0)
                rc = data_codec_config_sequence(d->codec, kv + (size_t)c * L, seq);
        v->keys[v->n++] = k[i].key;
        k[i].key = NULL;
    }
    for (int i = 0; k && i < n; i++) free(k[i].key);
    free(k);
    if (rc) {
        vendor_free(&v->base);
        return rc;
    }
    *out = &v->base;
    return HR_OK;
}

static int vendor_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    if (ctx->config && cJSON_GetArraySize(ctx->config) > 0)
        return hr_error(HR_EINVAL, "vendor config: the baseline has no options");
    const data_select *s = d->sel;
    if (!s->vendor_rank)
        return hr_error(HR_EINVAL, "%s: no vendor heuristic is recorded beside this data (FILE.heuristic.txt next to "
                        "FILE.fdb.txt, as heurist-collect writes it)", s->source ? s->source : "data");
    vendor *v = hr_calloc(1, sizeof *v);
    if (!v) return HR_ENOMEM;
    int rc = model_base_init(&v->base, &model_family_vendor, d, ctx), K = s->n_kernels;
    keyed *k = rc ? NULL : hr_calloc((size_t)(s->n > 0 ? s->n : 1), sizeof *k);
    if (!rc && !k) rc = HR_ENOMEM;
    size_t nnz = 0;
    for (int i = 0; !rc && i < s->n; i++) {
        char buf[1024];
        vendor_key(&v->base, d->X + (size_t)i * d->n_features, buf, sizeof buf);
        if (!(k[i].key = hr_strdup(buf))) rc = HR_ENOMEM;
        k[i].row = i;
        for (int j = 0; j < K; j++) nnz += s->vendor_rank[(size_t)i * K + j] >= 0;
    }
    if (!rc) {
        qsort(k, (size_t)s->n, sizeof *k, cmp_keyed);
        v->keys = hr_calloc((size_t)(s->n > 0 ? s->n : 1), sizeof *v->keys);
        v->off = hr_malloc((size_t)(s->n + 1) * sizeof *v->off);
        v->ranked = hr_malloc((nnz ? nnz : 1) * 2 * sizeof *v->ranked);
        if (!v->keys || !v->off || !v->ranked) rc = HR_ENOMEM;
        else if (nnz > INT32_MAX) rc = hr_error(HR_EINVAL, "vendor: %zu ranked kernels, more than a model keeps", nnz);
    }
    /* one entry per distinct key: a key met twice keeps its first row */
    size_t at = 0;
    if (!rc) v->off[0] = 0;
    for (int i = 0; !rc && i < s->n; i++) {
        if (v->n && strcmp(v->keys[v->n - 1], k[i].key) == 0) continue;
        v->keys[v->n] = k[i].key;
        k[i].key = NULL;
        for (int j = 0; j < K; j++) {
            int16_t r = s->vendor_rank[(size_t)k[i].row * K + j];
            if (r < 0) continue;
            v->ranked[2 * at] = j;
            v->ranked[2 * at + 1] = r;
            at++;
        }
        v->off[++v->n] = (int32_t)at;
    }
    for (int i = 0; k && i < s->n; i++) free(k[i].key);
    free(k);
    if (rc) {
        vendor_free(&v->base);
        return rc;
    }
    *out = &v->base;
    return HR_OK;
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int vendor_predict(const model *mb, void *ws, const double *pv, const float *x, float *scores)
{
    (void)ws, (void)pv; /* needs no scratch */
    const vendor *v = (const vendor *)mb;
    int K = mb->n_kernels;
    char buf[1024];
    vendor_key(mb, x, buf, sizeof buf);
    const char *probe = buf;
    char *const *hit = bsearch(&probe, v->keys, (size_t)v->n, sizeof *v->keys, cmp_str_ptr);
    for (int k = 0; k < K; k++) scores[k] = -INFINITY;
    if (!hit) return HR_OK;
    size_t i = (size_t)(hit - v->keys);
    for (int32_t e = v->off[i]; e < v->off[i + 1]; e++) scores[v->ranked[2 * e]] = -(float)v->ranked[2 * e + 1];
    return HR_OK;
}

/* tune: the pick of the problem, or MODEL_TUNE_NO_PICK throughout for a problem the vendor was not asked about */
static int vendor_predict_tune(const model *mb, void *ws, const data_tune_problem *q, const float *x, int32_t *values)
{
    (void)ws, (void)q;
    const vendor *v = (const vendor *)mb;
    char buf[1024];
    vendor_key(mb, x, buf, sizeof buf);
    const char *probe = buf;
    char *const *hit = bsearch(&probe, v->keys, (size_t)v->n, sizeof *v->keys, cmp_str_ptr);
    for (int j = 0; j < mb->length; j++)
        values[j] = hit ? v->picks[(size_t)(hit - v->keys) * mb->length + j] : MODEL_TUNE_NO_PICK;
    return HR_OK;
}

static int vendor_save_select(const model *mb, hid_t g)
{
    const vendor *v = (const vendor *)mb;
    int rc = hr_h5_write_strings(g, "keys", v->keys, (size_t)v->n);
    if (!rc) rc = hr_h5_write(g, "offsets", H5T_NATIVE_INT32, (size_t)v->n + 1, 1, v->off);
    if (!rc) rc = hr_h5_write(g, "ranked", H5T_NATIVE_INT32, (size_t)v->off[v->n], 2, v->ranked);
    return rc;
}

static int vendor_save_tune(const model *mb, hid_t g)
{
    const vendor *v = (const vendor *)mb;
    int rc = hr_h5_write_strings(g, "keys", v->keys, (size_t)v->n);
    return rc ? rc : hr_h5_write(g, "picks", H5T_NATIVE_INT32, (size_t)v->n, (size_t)mb->length, v->picks);
}

/* The keys, sorted, and the model built from the rest of the group by read_rest. */
static int vendor_load_with(hid_t g, model *base, model **out, int (*read_rest)(hid_t g, vendor *v, const model *base))
{
    vendor *v = hr_calloc(1, sizeof *v);
    if (!v) return HR_ENOMEM;
    size_t n = 0;
    int rc = hr_h5_read_strings(g, "keys", &v->keys, &n);
    v->n = (int)n;
    if (!rc) rc = read_rest(g, v, base);
    for (size_t i = 1; !rc && i < n; i++)
        if (strcmp(v->keys[i - 1], v->keys[i]) >= 0) rc = hr_error(HR_EFORMAT, "vendor model: keys are not sorted");
    if (rc) {
        hr_h5_free_strings(v->keys, v->keys ? n : 0);
        free(v->off);
        free(v->ranked);
        free(v->picks);
        free(v);
        return rc;
    }
    v->base = *base; /* ownership of the shared part moves into the model */
    memset(base, 0, sizeof *base);
    *out = &v->base;
    return HR_OK;
}

/* The ranked kernels of every key; a corrupted file must not index out of bounds: offsets rise within the
 * entries, kernels in the vocabulary. */
static int vendor_read_ranked(hid_t g, vendor *v, const model *base)
{
    size_t n = (size_t)v->n, rows = 0, cols = 0, nnz = 0, c2 = 0;
    int K = base->n_kernels;
    int rc = hr_h5_read_alloc(g, "offsets", H5T_NATIVE_INT32, &rows, &cols, (void **)&v->off);
    if (!rc && (rows != n + 1 || cols != 1)) rc = hr_error(HR_EFORMAT, "vendor model: offsets are not one per key");
    if (!rc) rc = hr_h5_read_alloc(g, "ranked", H5T_NATIVE_INT32, &nnz, &c2, (void **)&v->ranked);
    if (!rc && c2 != 2 && nnz > 0) rc = hr_error(HR_EFORMAT, "vendor model: ranked entries are not pairs");
    for (size_t i = 0; !rc && i < n; i++)
        if (v->off[i] < 0 || v->off[i] > v->off[i + 1] || (size_t)v->off[i + 1] > nnz)
            rc = hr_error(HR_EFORMAT, "vendor model: offsets out of order at key %zu", i);
    if (!rc && n == 0 && v->off[0] != 0) rc = hr_error(HR_EFORMAT, "vendor model: offsets out of order");
    for (size_t e = 0; !rc && e < nnz; e++)
        if (v->ranked[2 * e] < 0 || v->ranked[2 * e] >= K || v->ranked[2 * e + 1] < 0)
            rc = hr_error(HR_EFORMAT, "vendor model: ranked entry %zu names no kernel of the model", e);
    return rc;
}

/* The pick's sequence of every key. */
static int vendor_read_picks(hid_t g, vendor *v, const model *base)
{
    size_t n = (size_t)v->n, rows = 0, cols = 0;
    int rc = hr_h5_read_alloc(g, "picks", H5T_NATIVE_INT32, &rows, &cols, (void **)&v->picks);
    if (!rc && n && (rows != n || cols != (size_t)base->length))
        rc = hr_error(HR_EFORMAT, "vendor model: picks are not one sequence per key");
    return rc;
}

static int vendor_load_select(hid_t g, model *base, model **out)
{
    return vendor_load_with(g, base, out, vendor_read_ranked);
}

static int vendor_load_tune(hid_t g, model *base, model **out)
{
    return vendor_load_with(g, base, out, vendor_read_picks);
}

static long vendor_n_params(const model *mb)
{
    return 0; /* it learns nothing */
}

static const model_select_ops vendor_select = {
    .ops = {.train = vendor_train, .save = vendor_save_select, .load = vendor_load_select},
    .predict = vendor_predict,
};

static const model_tune_ops vendor_tune = {
    .ops = {.train = vendor_train_tune, .save = vendor_save_tune, .load = vendor_load_tune},
    .predict = vendor_predict_tune,
};

const model_family model_family_vendor = {
    .name = "vendor",
    .select = &vendor_select,
    .tune = &vendor_tune,
    .n_params = vendor_n_params,
    .free = vendor_free,
    .config_options = no_options,
    .known_only = 1,
    .vendor_column = 1,
};
