/* The transformer family's model (models/transformer.c): every scalar feature is a token.
 *   z_j = (x_j - mean_j) / std_j                         z-score fitted on the training rows
 *   e_j = z_j w_j + p_j             (T = n_features tokens of width d; w, p learned per feature)
 *   h = TransformerEncoderLayer(e)  (nn_transformer: one block, post-norm, ReLU FFN)
 *   scores = A_f mean_j(h_j) + b_f  linear head, softmax = the kernel distribution
 * trained like the Reformer: soft-target cross-entropy against runtime-ratio labels (or one-hot /
 * softmax) through train/'s loop. Single-problem prediction runs the same ops with a B = 1 cache in the
 * caller's workspace (tfm_ws, one per thread; the model is only read).
 * This file holds the model, its inference and its files; models/transformer_train.c holds the mini-batch step and
 * models/transformer.c the family (its config table, the training entry, the model_family table).
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/view.h"
#include "models/model.h"
#include "models/transformer_internal.h"
#include "nn/nn.h"
#include "train/train.h"

int transformer_build(tfm *m)
{
    const int T = m->base.n_features, d = m->d;
    nn_params_init(&m->p);
    m->value = nn_params_add(&m->p, "embed.value", (size_t)T * d);
    m->pos = nn_params_add(&m->p, "embed.position", (size_t)T * d);
    nn_transformer_layout(&m->block, &m->p, "block", d, m->heads, m->d_ff, m->norm_first);
    nn_linear_layout(&m->head, &m->p, "head", d, m->base.n_kernels);
    return nn_params_alloc(&m->p);
}

/* A prediction's scratch: the block's B = 1 cache and the activations around it. */
typedef struct tfm_ws {
    nn_transformer_cache one;
    float *buf; /* z (T) | e (T, d) | h (T, d) | pooled (d) */
} tfm_ws;

void tfm_ws_free(void *vws)
{
    tfm_ws *w = vws;
    if (!w) return;
    nn_transformer_cache_free(&w->one);
    free(w->buf);
    free(w);
}

int tfm_ws_create(const model *mb, void **out)
{
    const tfm *m = (const tfm *)mb;
    const int T = m->base.n_features, d = m->d;
    *out = NULL;
    tfm_ws *w = hr_calloc(1, sizeof *w);
    if (!w) return HR_ENOMEM;
    int rc = nn_transformer_cache_init(&w->one, &m->block, 1, T);
    if (!rc && !(w->buf = hr_calloc((size_t)T * (1 + 2 * (size_t)d) + (size_t)d, sizeof *w->buf))) rc = HR_ENOMEM;
    if (rc) {
        tfm_ws_free(w);
        return rc;
    }
    *out = w;
    return HR_OK;
}

/* e (B, T, d) = z (B, T) w + p */
void transformer_embed(const tfm *m, const float *z, float *e, int B)
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
void transformer_pool(const float *h, float *pooled, int B, int T, int d)
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

int tfm_predict(const model *mb, void *vws, const double *pv, const float *x, float *scores)
{
    const tfm *m = (const tfm *)mb;
    tfm_ws *w = vws;
    const int T = m->base.n_features, d = m->d;
    float *z = w->buf, *e = z + T, *h = e + (size_t)T * d, *pooled = h + (size_t)T * d;
    for (int j = 0; j < T; j++) z[j] = (x[j] - m->zmean[j]) / m->zstd[j];
    transformer_embed(m, z, e, 1);
    nn_transformer_forward(&m->block, &m->p, &w->one, e, h, 1, T);
    transformer_pool(h, pooled, 1, T, d);
    nn_linear_forward(&m->head, &m->p, pooled, scores, 1);
    return HR_OK;
}

void transformer_free(model *mb)
{
    tfm *m = (tfm *)mb;
    if (!m) return;
    nn_params_free(&m->p);
    free(m->zmean);
    free(m->zstd);
    model_base_free(&m->base);
    free(m);
}
/* ---- options and files ---- */

/* The options, one table for --config, the model files (the rows of file set 1, in the order files record them)
 * and the option reference. */
#define C(field) offsetof(tfm_cfg, field)
static const hr_config_option transformer_options[] = {
    {.name = "d", .type = HR_CONFIG_INT, .offset = C(d), .def = 32, .min = 1, .max = 4096,
     .doc = "token width (a multiple of heads)", .file = 1},
    {.name = "heads", .type = HR_CONFIG_INT, .offset = C(heads), .def = 4, .min = 1, .max = 256,
     .doc = "attention heads", .file = 1},
    {.name = "d_ff", .type = HR_CONFIG_INT, .offset = C(d_ff), .def = 64, .min = 1, .max = 65536,
     .doc = "width of the feed-forward layer", .file = 1},
    {.name = "norm_first", .type = HR_CONFIG_INT, .offset = C(norm_first), .def = 0, .min = 0, .max = 1,
     .doc = "1: LayerNorm before attention and feed-forward (pre-norm); 0: after (post-norm)", .file = 1},
    {.name = "label", .type = HR_CONFIG_ENUM, .offset = C(label), .def_name = "soft", .names = data_label_names,
     .values = data_label_values, .doc = "target distribution: runtime ratio, one-hot or softmax(-t/(tau t_min))",
     .file = 1},
    {.name = "tau", .type = HR_CONFIG_FLOAT, .offset = C(tau), .def = 0.1, .min = 1e-6, .max = 1e6,
     .doc = "temperature of the softmax labels", .file = 1},
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

int tfm_cfg_parse(const cJSON *c, tfm_cfg *o)
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

/* The architecture and labels from the options (training and loading alike) */
void tfm_options_apply(tfm *m, const tfm_cfg *cfg)
{
    m->d = cfg->d;
    m->heads = cfg->heads;
    m->d_ff = cfg->d_ff;
    m->norm_first = cfg->norm_first;
    m->label = cfg->label;
    m->tau = cfg->tau;
}

int tfm_save(const model *mb, hid_t g)
{
    const tfm *m = (const tfm *)mb;
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {"transformer", rows, transformer_config_options(rows)};
    tfm_cfg cfg;
    hr_config_defaults(&t, &cfg);
    cfg.d = m->d;
    cfg.heads = m->heads;
    cfg.d_ff = m->d_ff;
    cfg.norm_first = m->norm_first;
    cfg.label = m->label;
    cfg.tau = m->tau;
    int rc = hr_h5_attr_write_int(g, "transformer_version", TRANSFORMER_VERSION);
    if (!rc) rc = hr_config_write_h5(&t, &cfg, 1, g);
    if (!rc) rc = hr_h5_write(g, "zscore_mean", H5T_NATIVE_FLOAT, (size_t)m->base.n_features, 0, m->zmean);
    if (!rc) rc = hr_h5_write(g, "zscore_std", H5T_NATIVE_FLOAT, (size_t)m->base.n_features, 0, m->zstd);
    if (!rc) rc = nn_checkpoint_write(g, "params", &m->p, NULL);
    return rc;
}

int tfm_load(hid_t g, model *base, model **out)
{
    *out = NULL;
    tfm *m = hr_calloc(1, sizeof *m);
    if (!m) return HR_ENOMEM;
    m->base = *base;
    int version = 0, rc = hr_h5_attr_read_int_in(g, "transformer", "transformer_version", 0, 1 << 30, &version);
    if (!rc && version > TRANSFORMER_VERSION)
        rc = hr_error(HR_EVERSION, "transformer content version %d is newer than this heurist's %d", version,
                      TRANSFORMER_VERSION);
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {"transformer", rows, transformer_config_options(rows)};
    tfm_cfg cfg;
    if (!rc) rc = hr_config_read_h5(&t, g, 1, version, &cfg);
    if (!rc) tfm_options_apply(m, &cfg);
    if (!rc && m->d % m->heads) rc = hr_error(HR_EFORMAT, "transformer: d %% heads != 0");
    const size_t nf = (size_t)m->base.n_features;
    if (!rc && (!(m->zmean = hr_malloc(nf * sizeof *m->zmean)) || !(m->zstd = hr_malloc(nf * sizeof *m->zstd))))
        rc = HR_ENOMEM;
    if (!rc) rc = hr_h5_read(g, "zscore_mean", H5T_NATIVE_FLOAT, nf, 0, m->zmean);
    if (!rc) rc = hr_h5_read(g, "zscore_std", H5T_NATIVE_FLOAT, nf, 0, m->zstd);
    if (!rc) rc = transformer_build(m);
    if (!rc) rc = nn_checkpoint_read(g, "params", &m->p, NULL);
    if (rc) {
        memset(&m->base, 0, sizeof m->base); /* still owned by the caller */
        transformer_free(&m->base);
        return rc;
    }
    *out = &m->base;
    return HR_OK;
}

long tfm_n_params(const model *mb)
{
    return (long)((const tfm *)mb)->p.n;
}

/* What the model shows export/ (models/view.h): d, heads, d_ff, norm_first (ints), ln_eps (real: both
 * LayerNorms'), zscore_mean and zscore_std (floats, n_features), and params, the parameter block ("embed.value",
 * "embed.position", "block.self_attn.in_proj.weight", ..., "head.bias"). */
int tfm_views(const model *mb, model_views *v)
{
    const tfm *m = (const tfm *)mb;
    HR_ASSERT(m->block.ln1.eps == m->block.ln2.eps);
    model_views_int(v, m->d, "d");
    model_views_int(v, m->heads, "heads");
    model_views_int(v, m->d_ff, "d_ff");
    model_views_int(v, m->norm_first, "norm_first");
    model_views_real(v, m->block.ln1.eps, "ln_eps");
    model_views_array(v, MODEL_VIEW_FLOATS, m->zmean, (size_t)mb->n_features, "zscore_mean");
    model_views_array(v, MODEL_VIEW_FLOATS, m->zstd, (size_t)mb->n_features, "zscore_std");
    model_views_array(v, MODEL_VIEW_PARAMS, &m->p, 1, "params");
    return HR_OK;
}
