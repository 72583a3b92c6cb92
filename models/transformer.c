/* The attention baseline (family "transformer", task select): every scalar feature is a token.
 *   z_j = (x_j - mean_j) / std_j                         z-score fitted on the training rows
 *   e_j = z_j w_j + p_j             (T = n_features tokens of width d; w, p learned per feature)
 *   h = TransformerEncoderLayer(e)  (nn_transformer: one block, post-norm, ReLU FFN)
 *   scores = A_f mean_j(h_j) + b_f  linear head, softmax = the kernel distribution
 * trained like the Reformer: soft-target cross-entropy against runtime-ratio labels (or one-hot /
 * softmax) through train/'s loop. Single-problem prediction runs the same ops with a B = 1 cache
 * preallocated in the model (not thread-safe per model).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/model.h"
#include "models/transformer_internal.h"
#include "nn/nn.h"
#include "train/train.h"

typedef struct tfm_cfg {
    train_opts train;
    int d, heads, d_ff, norm_first;
    float tau;
    data_label_kind label;
} tfm_cfg;

/* Defaults: d 32, 4 heads, d_ff 64, 8 epochs (an epoch costs ~20x a Reformer epoch). */
static int tfm_cfg_parse(const cJSON *c, tfm_cfg *o)
{
    static const char *const own[] = {"d", "heads", "d_ff", "norm_first", "label", "tau"};
    int rc = model_cfg_check_loop(c, "transformer", own, sizeof own / sizeof *own);
    o->train = train_opts_defaults();
    o->train.epochs = 8;
    o->train.batch_size = 256;
    o->train.lr = 2e-3f;
    o->train.optim = nn_optim_defaults(NN_OPTIM_ADAMW);
    o->train.optim.weight_decay = 1e-4f;
    o->train.clip = 1.0f;
    if (!rc) rc = train_opts_from_json(c, &o->train);
    if (!rc) rc = train_cfg_int(c, "d", 32, 1, 4096, &o->d);
    if (!rc) rc = train_cfg_int(c, "heads", 4, 1, 256, &o->heads);
    if (!rc) rc = train_cfg_int(c, "d_ff", 64, 1, 65536, &o->d_ff);
    if (!rc) rc = train_cfg_int(c, "norm_first", 0, 0, 1, &o->norm_first);
    if (!rc) rc = train_cfg_float(c, "tau", 0.1, 1e-6, 1e6, &o->tau);
    if (!rc && o->d % o->heads) rc = hr_error(HR_EINVAL, "--config: d (%d) must be a multiple of heads (%d)", o->d, o->heads);
    const char *label = train_cfg_str(c, "label", "soft");
    if (!rc && data_label_kind_parse(label, &o->label))
        rc = hr_error(HR_EINVAL, "--config: label '%s': expected soft, onehot or softmax", label);
    return rc;
}

static int tfm_build(tfm *m)
{
    const int T = m->base.n_features, d = m->d;
    nn_params_init(&m->p);
    m->value = nn_params_add(&m->p, "embed.value", (size_t)T * d);
    m->pos = nn_params_add(&m->p, "embed.position", (size_t)T * d);
    nn_transformer_layout(&m->block, &m->p, "block", d, m->heads, m->d_ff, m->norm_first);
    nn_linear_layout(&m->head, &m->p, "head", d, m->base.n_kernels);
    int rc = nn_params_alloc(&m->p);
    if (!rc) rc = nn_transformer_cache_init(&m->one, &m->block, 1, T);
    if (!rc && !(m->ws = hr_calloc((size_t)T * (1 + 2 * (size_t)d) + (size_t)d, sizeof *m->ws))) rc = HR_ENOMEM;
    return rc;
}

/* e (B, T, d) = z (B, T) w + p */
static void tfm_embed(const tfm *m, const float *z, float *e, int B)
{
    const int T = m->base.n_features, d = m->d;
    const float *w = m->p.w + m->value, *p = m->p.w + m->pos;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < T; j++) {
            float zj = z[(size_t)b * T + j];
            float *er = e + ((size_t)b * T + j) * d;
            for (int k = 0; k < d; k++) er[k] = zj * w[(size_t)j * d + k] + p[(size_t)j * d + k];
        }
}

/* pooled (B, d) = mean over the T tokens of h (B, T, d) */
static void tfm_pool(const float *h, float *pooled, int B, int T, int d)
{
    for (int b = 0; b < B; b++) {
        float *o = pooled + (size_t)b * d;
        memset(o, 0, (size_t)d * sizeof *o);
        for (int j = 0; j < T; j++) {
            const float *hr = h + ((size_t)b * T + j) * d;
            for (int k = 0; k < d; k++) o[k] += hr[k];
        }
        for (int k = 0; k < d; k++) o[k] /= (float)T;
    }
}

static int tfm_predict(const model *mb, const data_problem *prob, const float *x, float *scores)
{
    tfm *m = (tfm *)mb; /* the workspace is scratch: see the top of the file */
    const int T = m->base.n_features, d = m->d;
    float *z = m->ws, *e = z + T, *h = e + (size_t)T * d, *pooled = h + (size_t)T * d;
    for (int j = 0; j < T; j++) z[j] = (x[j] - m->zmean[j]) / m->zstd[j];
    tfm_embed(m, z, e, 1);
    nn_transformer_forward(&m->block, &m->p, &m->one, e, h, 1, T);
    tfm_pool(h, pooled, 1, T, d);
    nn_linear_forward(&m->head, &m->p, pooled, scores, 1);
    return HR_OK;
}

/* ---- training ---- */

typedef struct tfm_fit {
    tfm *m;
    const data_select *sel;
    const float *X;
    int cap;
    nn_transformer_cache cache;
    float *z;                          /* (cap, T) */
    float *e, *h, *de, *dh;            /* (cap, T, d) */
    float *pooled, *dpooled;           /* (cap, d) */
    float *logits, *prob, *y, *dlogits; /* (cap, K) */
} tfm_fit;

static void fit_free(tfm_fit *f)
{
    nn_transformer_cache_free(&f->cache);
    float *bufs[] = {f->z, f->e, f->h, f->de, f->dh, f->pooled, f->dpooled, f->logits, f->prob, f->y, f->dlogits};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
}

static int fit_init(tfm_fit *f, tfm *m, const model_train_data *d, int cap)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    f->sel = d->sel;
    f->X = d->X;
    f->cap = cap;
    const size_t c = (size_t)cap, T = (size_t)m->base.n_features, D = (size_t)m->d, K = (size_t)m->base.n_kernels;
    int rc = nn_transformer_cache_init(&f->cache, &m->block, cap, (int)T);
    float **bufs[] = {&f->z, &f->e, &f->h, &f->de, &f->dh, &f->pooled, &f->dpooled, &f->logits, &f->prob, &f->y,
                      &f->dlogits};
    size_t sizes[] = {c * T, c * T * D, c * T * D, c * T * D, c * T * D, c * D, c * D, c * K, c * K, c * K, c * K};
    for (size_t i = 0; !rc && i < sizeof sizes / sizeof *sizes; i++)
        if (!(*bufs[i] = hr_calloc(sizes[i], sizeof(float)))) rc = HR_ENOMEM;
    if (rc) fit_free(f);
    return rc;
}

static void fit_forward(tfm_fit *f, const int *rows, int n)
{
    tfm *m = f->m;
    const int T = m->base.n_features;
    HR_ASSERT(n <= f->cap);
    train_gather_zscore(f->X, T, rows, n, m->zmean, m->zstd, f->z);
    tfm_embed(m, f->z, f->e, n);
    nn_transformer_forward(&m->block, &m->p, &f->cache, f->e, f->h, n, T);
    tfm_pool(f->h, f->pooled, n, T, m->d);
    nn_linear_forward(&m->head, &m->p, f->pooled, f->logits, n);
    data_labels_fill(f->sel, rows, n, m->label, m->tau, f->y);
}

static int fit_batch(void *ctx, const int *rows, int n, hr_rng *rng, float *loss)
{
    tfm_fit *f = ctx;
    tfm *m = f->m;
    const int T = m->base.n_features, d = m->d, K = m->base.n_kernels;
    fit_forward(f, rows, n);
    *loss = nn_xent_forward(f->logits, f->y, f->prob, n, K);
    memset(f->dlogits, 0, (size_t)n * K * sizeof *f->dlogits);
    nn_xent_backward(f->prob, f->y, f->dlogits, n, K, 1.0f);
    memset(f->dpooled, 0, (size_t)n * d * sizeof *f->dpooled);
    nn_linear_backward(&m->head, &m->p, f->pooled, f->dlogits, f->dpooled, n);
    /* mean-pool backward: every token receives dpooled / T */
    for (int b = 0; b < n; b++)
        for (int j = 0; j < T; j++)
            for (int k = 0; k < d; k++) f->dh[((size_t)b * T + j) * d + k] = f->dpooled[(size_t)b * d + k] / (float)T;
    memset(f->de, 0, (size_t)n * T * d * sizeof *f->de);
    nn_transformer_backward(&m->block, &m->p, &f->cache, f->e, f->dh, f->de, n, T);
    /* dw_j += sum_b de_bj z_bj; dp_j += sum_b de_bj */
    float *dw = m->p.dw + m->value, *dp = m->p.dw + m->pos;
    for (int b = 0; b < n; b++)
        for (int j = 0; j < T; j++) {
            const float *der = f->de + ((size_t)b * T + j) * d;
            float zj = f->z[(size_t)b * T + j];
            for (int k = 0; k < d; k++) {
                dw[(size_t)j * d + k] += der[k] * zj;
                dp[(size_t)j * d + k] += der[k];
            }
        }
    (void)rng;
    return HR_OK;
}

static int fit_evaluate(void *ctx, const int *rows, int n, float *loss, float *metric)
{
    tfm_fit *f = ctx;
    double sum = 0.0;
    long hits = 0;
    for (int i = 0; i < n; i += f->cap) {
        int b = n - i < f->cap ? n - i : f->cap;
        fit_forward(f, rows + i, b);
        sum += (double)nn_xent_forward(f->logits, f->y, f->prob, b, f->m->base.n_kernels) * b;
        hits += train_select_hits(f->sel, rows + i, f->logits, b);
    }
    *loss = (float)(sum / n);
    *metric = (float)hits / (float)n;
    return HR_OK;
}

static void tfm_free(model *mb)
{
    tfm *m = (tfm *)mb;
    if (!m) return;
    nn_transformer_cache_free(&m->one);
    nn_params_free(&m->p);
    free(m->ws);
    free(m->zmean);
    free(m->zstd);
    model_base_free(&m->base);
    free(m);
}

static int tfm_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    if (d->task != MODEL_TASK_SELECT) return hr_error(HR_EINVAL, "transformer: only the select task");
    tfm_cfg cfg;
    int rc = tfm_cfg_parse(ctx->config, &cfg);
    if (rc) return rc;
    tfm *m = hr_calloc(1, sizeof *m);
    if (!m) return HR_ENOMEM;
    if ((rc = model_base_init(&m->base, &model_family_transformer, d, ctx))) goto fail;
    m->d = cfg.d;
    m->heads = cfg.heads;
    m->d_ff = cfg.d_ff;
    m->norm_first = cfg.norm_first;
    m->label = cfg.label;
    m->tau = cfg.tau;
    const int nf = d->n_features;
    m->zmean = hr_malloc((size_t)nf * sizeof *m->zmean);
    m->zstd = hr_malloc((size_t)nf * sizeof *m->zstd);
    if (!m->zmean || !m->zstd) {
        rc = HR_ENOMEM;
        goto fail;
    }
    data_zscore_fit(d->X, nf, d->train, d->n_train, m->zmean, m->zstd);
    if ((rc = tfm_build(m))) goto fail;
    hr_rng init;
    hr_rng_derive(&init, ctx->seed, 1);
    /* value weights and position embeddings ~ N(0, 1) (nn.Embedding's default) */
    for (size_t i = 0; i < (size_t)nf * m->d; i++) m->p.w[m->value + i] = hr_rng_normal(&init);
    for (size_t i = 0; i < (size_t)nf * m->d; i++) m->p.w[m->pos + i] = hr_rng_normal(&init);
    nn_transformer_reset(&m->block, &m->p, &init);
    nn_linear_reset(&m->head, &m->p, &init);

    train_opts o = cfg.train;
    model_loop_opts(&o, ctx, "transformer");
    tfm_fit fit;
    int cap = cfg.train.batch_size > TRANSFORMER_EVAL_CHUNK ? cfg.train.batch_size : TRANSFORMER_EVAL_CHUNK;
    if ((rc = fit_init(&fit, m, d, cap))) goto fail;
    train_ops ops = {fit_batch, fit_evaluate};
    train_result res;
    rc = train_run(&ops, &fit, &m->p, NULL, d->train, d->n_train, d->valid, d->n_valid, &o, &res);
    fit_free(&fit);
    if (!rc) rc = model_loop_curve(&m->base, &res);
    train_result_free(&res);
    if (rc) goto fail;
    *out = &m->base;
    return HR_OK;
fail:
    tfm_free(&m->base);
    return rc;
}

/* ---- files ---- */

static int tfm_save(const model *mb, hid_t g)
{
    const tfm *m = (const tfm *)mb;
    int rc = hr_h5_attr_write_int(g, "transformer_version", TRANSFORMER_VERSION);
    if (!rc) rc = hr_h5_attr_write_int(g, "d", m->d);
    if (!rc) rc = hr_h5_attr_write_int(g, "heads", m->heads);
    if (!rc) rc = hr_h5_attr_write_int(g, "d_ff", m->d_ff);
    if (!rc) rc = hr_h5_attr_write_int(g, "norm_first", m->norm_first);
    if (!rc) rc = hr_h5_attr_write_str(g, "label", data_label_kind_name(m->label));
    if (!rc) rc = hr_h5_attr_write_double(g, "tau", m->tau);
    if (!rc) rc = hr_h5_write(g, "zscore_mean", H5T_NATIVE_FLOAT, (size_t)m->base.n_features, 0, m->zmean);
    if (!rc) rc = hr_h5_write(g, "zscore_std", H5T_NATIVE_FLOAT, (size_t)m->base.n_features, 0, m->zstd);
    if (!rc) rc = nn_checkpoint_write(g, "params", &m->p, NULL);
    return rc;
}

static int tfm_load(hid_t g, model *base, model **out)
{
    *out = NULL;
    tfm *m = hr_calloc(1, sizeof *m);
    if (!m) return HR_ENOMEM;
    m->base = *base;
    int version = 0, rc = hr_h5_attr_read_int_in(g, "transformer", "transformer_version", 0, 1 << 30, &version);
    if (!rc && version > TRANSFORMER_VERSION)
        rc = hr_error(HR_EVERSION, "transformer content version %d is newer than this heurist's %d", version,
                      TRANSFORMER_VERSION);
    if (!rc && m->base.task != MODEL_TASK_SELECT) rc = hr_error(HR_EFORMAT, "transformer: task must be select");
    if (!rc) rc = hr_h5_attr_read_int_in(g, "transformer", "d", 1, 4096, &m->d);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "transformer", "heads", 1, 256, &m->heads);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "transformer", "d_ff", 1, 65536, &m->d_ff);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "transformer", "norm_first", 0, 1, &m->norm_first);
    if (!rc && m->d % m->heads) rc = hr_error(HR_EFORMAT, "transformer: d %% heads != 0");
    char *s = NULL;
    if (!rc) rc = hr_h5_attr_read_str(g, "label", &s);
    if (!rc && data_label_kind_parse(s, &m->label)) rc = hr_error(HR_EFORMAT, "transformer: unknown label '%s'", s);
    free(s);
    double v = 0;
    if (!rc) rc = hr_h5_attr_read_double(g, "tau", &v);
    m->tau = (float)v;
    const size_t nf = (size_t)m->base.n_features;
    if (!rc && (!(m->zmean = hr_malloc(nf * sizeof *m->zmean)) || !(m->zstd = hr_malloc(nf * sizeof *m->zstd))))
        rc = HR_ENOMEM;
    if (!rc) rc = hr_h5_read(g, "zscore_mean", H5T_NATIVE_FLOAT, nf, 0, m->zmean);
    if (!rc) rc = hr_h5_read(g, "zscore_std", H5T_NATIVE_FLOAT, nf, 0, m->zstd);
    if (!rc) rc = tfm_build(m);
    if (!rc) rc = nn_checkpoint_read(g, "params", &m->p, NULL);
    if (rc) {
        memset(&m->base, 0, sizeof m->base); /* still owned by the caller */
        tfm_free(&m->base);
        return rc;
    }
    *out = &m->base;
    return HR_OK;
}

static long tfm_n_params(const model *mb)
{
    return (long)((const tfm *)mb)->p.n;
}

const model_family model_family_transformer = {
    .name = "transformer",
    .tasks = MODEL_TASK_SELECT,
    .train = tfm_train,
    .predict_select = tfm_predict,
    .save = tfm_save,
    .load = tfm_load,
    .n_params = tfm_n_params,
    .free = tfm_free,
};
