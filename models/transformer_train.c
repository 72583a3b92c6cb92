/* Training of the transformer family (models/transformer.c has the model, its inference and its files): the
 * config table and the mini-batch step through the shared loop of train/. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "models/model.h"
#include "models/transformer_internal.h"
#include "nn/nn.h"
#include "train/train.h"

typedef struct tfm_cfg {
    train_opts train;
    int d, heads, d_ff, norm_first;
    float tau;
    int label; /* data_label_kind */
} tfm_cfg;

#define C(field) offsetof(tfm_cfg, field)
static const hr_config_option transformer_options[] = {
    {.name = "d", .type = HR_CONFIG_INT, .offset = C(d), .def = 32, .min = 1, .max = 4096,
     .doc = "token width (a multiple of heads)"},
    {.name = "heads", .type = HR_CONFIG_INT, .offset = C(heads), .def = 4, .min = 1, .max = 256,
     .doc = "attention heads"},
    {.name = "d_ff", .type = HR_CONFIG_INT, .offset = C(d_ff), .def = 64, .min = 1, .max = 65536,
     .doc = "width of the feed-forward layer"},
    {.name = "norm_first", .type = HR_CONFIG_INT, .offset = C(norm_first), .def = 0, .min = 0, .max = 1,
     .doc = "1: LayerNorm before attention and feed-forward (pre-norm); 0: after (post-norm)"},
    {.name = "label", .type = HR_CONFIG_ENUM, .offset = C(label), .def_name = "soft", .names = model_label_names,
     .values = model_label_values, .doc = "target distribution: runtime ratio, one-hot or softmax(-t/(tau t_min))"},
    {.name = "tau", .type = HR_CONFIG_FLOAT, .offset = C(tau), .def = 0.1, .min = 1e-6, .max = 1e6,
     .doc = "temperature of the softmax labels"},
};
#undef C

/* Defaults: d 32, 4 heads, d_ff 64, 8 epochs (an epoch costs ~20x a Reformer epoch). */
size_t transformer_config_options(hr_config_option *rows)
{
    train_opts loop = train_opts_defaults();
    loop.epochs = 8;
    loop.batch_size = 256;
    loop.lr = 2e-3f;
    loop.optim = nn_optim_defaults(NN_OPTIM_ADAMW);
    loop.optim.weight_decay = 1e-4f;
    loop.clip = 1.0f;
    size_t n = sizeof transformer_options / sizeof *transformer_options;
    memcpy(rows, transformer_options, sizeof transformer_options);
    return n + train_config_options(&loop, offsetof(tfm_cfg, train), rows + n);
}

static int tfm_cfg_parse(const cJSON *c, tfm_cfg *o)
{
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {"transformer", rows, transformer_config_options(rows)};
    o->train = train_opts_defaults();
    int rc = hr_config_read(&t, c, o);
    if (rc) return rc;
    train_config_finish(&o->train);
    if (o->d % o->heads)
        return hr_error(HR_EINVAL, "transformer config: \"d\" must be a multiple of \"heads\" (%d), got %d", o->heads,
                        o->d);
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
    transformer_embed(m, f->z, f->e, n);
    nn_transformer_forward(&m->block, &m->p, &f->cache, f->e, f->h, n, T);
    transformer_pool(f->h, f->pooled, n, T, m->d);
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
        hits += eval_select_hits(f->sel->runtime, f->m->base.n_kernels, rows + i, f->logits, b);
    }
    *loss = (float)(sum / n);
    *metric = (float)hits / (float)n;
    return HR_OK;
}

int transformer_train(const model_train_data *d, const model_ctx *ctx, model **out)
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
    if ((rc = transformer_build(m))) goto fail;
    hr_rng init;
    hr_rng_derive(&init, ctx->seed, 1);
    /* value weights and position embeddings ~ N(0, 1) (nn.Embedding's default) */
    for (size_t i = 0; i < (size_t)nf * m->d; i++) m->p.w[m->value + i] = hr_rng_normal(&init);
    for (size_t i = 0; i < (size_t)nf * m->d; i++) m->p.w[m->pos + i] = hr_rng_normal(&init);
    nn_transformer_reset(&m->block, &m->p, &init);
    nn_linear_reset(&m->head, &m->p, &init);

    train_opts o = cfg.train;
    model_loop_opts(&o, ctx, "transformer");
    o.metric_name = model_task_metric(MODEL_TASK_SELECT);
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
    transformer_free(&m->base);
    return rc;
}
