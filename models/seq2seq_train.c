/* Training of the seq2seq family (models/seq2seq.c has the model and its files, models/seq2seq_decode.c its
 * decoding, models/seq2seq_options.c its options): the field vocabularies, the teacher-forced mini-batch step
 * through the shared loop of train/, and the family's table. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/seq2seq_internal.h"

#define S2S_EVAL_CHUNK 512

/* ---- config ---- */

static int s2s_cfg_parse(const cJSON *c, s2s_cfg *o)
{
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {"seq2seq", rows, s2s_config_options(rows)};
    o->train = train_opts_defaults();
    int rc = hr_config_read(&t, c, o);
    if (!rc) train_config_finish(&o->train);
    return rc;
}

/* ---- layout and vocabularies ---- */

static void s2s_reset(seq2seq *m, hr_rng *rng)
{
    nn_embedding_reset(&m->emb, &m->p, rng);
    for (int l = 0; l < m->a.conv_layers; l++) nn_conv1d_reset(&m->conv[l], &m->p, rng);
    for (int l = 0; l < m->a.lstm_layers; l++) {
        if (m->a.bidir) nn_bilstm_reset(&m->bi[l], &m->p, rng);
        else nn_lstm_reset(&m->uni[l], &m->p, rng);
    }
    nn_decoder_reset(&m->dec, &m->p, rng);
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Row r of the training data as the encoder and the constraint take it. */
static data_tune_problem fit_problem(const data_tune *t, const double *V, int r)
{
    return data_tune_problem_of(t, V, r, 0);
}

/* Field vocabularies: the sorted distinct values of each of the codec's fields over the training rows. */
static int s2s_vocab_fit(seq2seq *m, const model_train_data *d)
{
    const int *rows = d->train, n = d->n_train, nv = data_codec_value_count(d->codec);
    m->n_fields = data_codec_token_count(d->codec);
    if (m->n_fields > S2S_MAX_FIELDS)
        return hr_error(HR_EINVAL, "seq2seq: %d problem columns, at most %d", m->n_fields, S2S_MAX_FIELDS);
    for (int f = 0; f < m->n_fields; f++) {
        int64_t *v = hr_malloc((size_t)(n ? n : 1) * sizeof *v);
        if (!v) return HR_ENOMEM;
        for (int i = 0; i < n; i++) v[i] = s2s_token_value(m, d->V + (size_t)rows[i] * nv, f);
        qsort(v, (size_t)n, sizeof *v, cmp_i64);
        int u = 0;
        for (int i = 0; i < n; i++)
            if (!u || v[i] != v[u - 1]) v[u++] = v[i];
        m->vals[f] = v;
        m->n_vals[f] = u;
    }
    return HR_OK;
}

/* ---- training ---- */

typedef struct s2s_fit {
    seq2seq *m;
    const data_tune *t;
    const double *V;               /* (rows, values) every row's problem values */
    int cap;
    int *ids;                      /* (cap, S) */
    int *prev;                     /* (cap) */
    float *act[1 + S2S_MAX_CONV + S2S_MAX_LSTM];  /* (cap, S, width_l): embedding, conv, lstm outputs */
    float *dact[1 + S2S_MAX_CONV + S2S_MAX_LSTM];
    nn_conv1d_cache conv[S2S_MAX_CONV];
    nn_bilstm_cache bi[S2S_MAX_LSTM];
    nn_lstm_cache uni[S2S_MAX_LSTM];
    nn_decoder_ws dec;
    float *logits, *dlogits;       /* (cap * n_out): position j's (B, V_j) block at B * vb_j */
    const float **dl;              /* (L) */
} s2s_fit;

static int n_acts(const seq2seq *m)
{
    return 1 + m->a.conv_layers + m->a.lstm_layers;
}

static int act_width(const seq2seq *m, int i)
{
    if (i == 0) return m->a.embed;
    if (i <= m->a.conv_layers) return m->a.conv_channels;
    return m->key;
}

static void fit_free(s2s_fit *f)
{
    for (int i = 0; i < 1 + S2S_MAX_CONV + S2S_MAX_LSTM; i++) {
        free(f->act[i]);
        free(f->dact[i]);
    }
    for (int l = 0; l < S2S_MAX_CONV; l++) nn_conv1d_cache_free(&f->conv[l]);
    for (int l = 0; l < S2S_MAX_LSTM; l++) {
        nn_bilstm_cache_free(&f->bi[l]);
        nn_lstm_cache_free(&f->uni[l]);
    }
    nn_decoder_ws_free(&f->dec);
    free(f->ids);
    free(f->prev);
    free(f->logits);
    free(f->dlogits);
    free(f->dl);
}

static int fit_init(s2s_fit *f, seq2seq *m, const model_train_data *d, int cap)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    f->t = d->tune;
    f->V = d->V;
    f->cap = cap;
    const int S = m->n_fields, L = m->base.length;
    int rc = HR_OK;
    for (int i = 0; i < n_acts(m) && !rc; i++) {
        size_t n = (size_t)cap * S * act_width(m, i);
        if (!(f->act[i] = hr_calloc(n, sizeof(float))) || !(f->dact[i] = hr_calloc(n, sizeof(float)))) rc = HR_ENOMEM;
    }
    for (int l = 0; l < m->a.conv_layers && !rc; l++) rc = nn_conv1d_cache_init(&f->conv[l], &m->conv[l], cap, S);
    for (int l = 0; l < m->a.lstm_layers && !rc; l++)
        rc = m->a.bidir ? nn_bilstm_cache_init(&f->bi[l], cap, S, m->a.hidden)
                        : nn_lstm_cache_init(&f->uni[l], cap, S, m->a.hidden);
    if (!rc) rc = nn_decoder_ws_init(&f->dec, &m->dec, cap, S, L);
    if (!rc && (!(f->ids = hr_calloc((size_t)cap * S, sizeof(int))) || !(f->prev = hr_calloc((size_t)cap, sizeof(int))) ||
                !(f->logits = hr_calloc((size_t)cap * m->n_out, sizeof(float))) ||
                !(f->dlogits = hr_calloc((size_t)cap * m->n_out, sizeof(float))) ||
                !(f->dl = hr_calloc((size_t)L, sizeof(float *)))))
        rc = HR_ENOMEM;
    if (rc) fit_free(f);
    return rc;
}

/* Teacher-forced forward over rows: logits of every position. */
static void fit_forward(s2s_fit *f, const int *rows, int B)
{
    seq2seq *m = f->m;
    const data_tune *t = f->t;
    const int S = m->n_fields, L = m->base.length;
    HR_ASSERT(B <= f->cap);
    for (int b = 0; b < B; b++) {
        data_tune_problem q = fit_problem(t, f->V, rows[b]);
        s2s_encode_ids(m, &q, f->ids + (size_t)b * S);
    }
    nn_embedding_forward(&m->emb, &m->p, f->ids, f->act[0], B * S);
    int i = 0;
    for (int l = 0; l < m->a.conv_layers; l++, i++) {
        nn_conv1d_forward(&m->conv[l], &m->p, &f->conv[l], B, S, f->act[i], f->act[i + 1]);
        nn_relu_forward(f->act[i + 1], f->act[i + 1], (size_t)B * S * m->a.conv_channels);
    }
    for (int l = 0; l < m->a.lstm_layers; l++, i++) {
        if (m->a.bidir)
            nn_bilstm_forward(&m->bi[l], &m->p, &f->bi[l], B, S, f->act[i], NULL, NULL, f->act[i + 1], NULL, NULL);
        else
            nn_lstm_forward(&m->uni[l], &m->p, &f->uni[l], B, S, f->act[i], NULL, NULL, f->act[i + 1], NULL, NULL);
    }
    nn_decoder_begin(&m->dec, &m->p, &f->dec, B, S, f->act[i], NULL, NULL, NULL);
    for (int j = 0; j < L; j++) {
        for (int b = 0; b < B; b++) f->prev[b] = j ? 1 + m->vb[j - 1] + t->tokens[(size_t)rows[b] * L + j - 1] : 0;
        nn_decoder_step(&m->dec, &m->p, &f->dec, f->prev, m->vb[j], m->ve[j], f->logits + (size_t)B * m->vb[j]);
    }
}

/* Loss (1/(B L)) sum_b sum_j CE; with dlogits, writes its gradient; counts argmax hits. */
static double fit_loss(s2s_fit *f, const int *rows, int B, float *dlogits, long *hits)
{
    const seq2seq *m = f->m;
    const int L = m->base.length;
    const float scale = 1.0f / (float)(B * L);
    double loss = 0.0;
    for (int j = 0; j < L; j++) {
        const int V = m->ve[j] - m->vb[j];
        for (int b = 0; b < B; b++) {
            size_t off = (size_t)B * m->vb[j] + (size_t)b * V;
            const float *z = f->logits + off;
            int y = f->t->tokens[(size_t)rows[b] * L + j], am = 0;
            float mx = z[0];
            for (int v = 1; v < V; v++)
                if (z[v] > mx) mx = z[v], am = v;
            float s = 0.0f;
            for (int v = 0; v < V; v++) s += expf(z[v] - mx);
            loss += (double)(mx + logf(s) - z[y]);
            *hits += am == y;
            if (dlogits) {
                float *dz = dlogits + off;
                for (int v = 0; v < V; v++) dz[v] = scale * expf(z[v] - mx) / s;
                dz[y] -= scale;
            }
        }
    }
    return loss / (double)(B * L);
}

static int fit_batch(void *ctx, const int *rows, int B, hr_rng *rng, float *loss)
{
    s2s_fit *f = ctx;
    seq2seq *m = f->m;
    const int S = m->n_fields, L = m->base.length, top = n_acts(m) - 1;
    long hits = 0;
    fit_forward(f, rows, B);
    *loss = (float)fit_loss(f, rows, B, f->dlogits, &hits);
    for (int j = 0; j < L; j++) f->dl[j] = f->dlogits + (size_t)B * m->vb[j];
    for (int i = 0; i <= top; i++) memset(f->dact[i], 0, (size_t)B * S * act_width(m, i) * sizeof(float));
    nn_decoder_backward(&m->dec, &m->p, &f->dec, f->dl, NULL, NULL, f->dact[top], NULL, NULL);
    int i = top;
    for (int l = m->a.lstm_layers - 1; l >= 0; l--, i--) {
        if (m->a.bidir)
            nn_bilstm_backward(&m->bi[l], &m->p, &f->bi[l], f->act[i - 1], f->dact[i], NULL, NULL, f->dact[i - 1],
                               NULL, NULL);
        else
            nn_lstm_backward(&m->uni[l], &m->p, &f->uni[l], f->act[i - 1], f->dact[i], NULL, NULL, f->dact[i - 1],
                             NULL, NULL);
    }
    for (int l = m->a.conv_layers - 1; l >= 0; l--, i--) {
        size_t n = (size_t)B * S * m->a.conv_channels;
        float *y = f->act[i], *dy = f->dact[i];
        for (size_t k = 0; k < n; k++)
            if (!(y[k] > 0.0f)) dy[k] = 0.0f; /* ReLU */
        nn_conv1d_backward(&m->conv[l], &m->p, &f->conv[l], B, S, dy, f->dact[i - 1]);
    }
    nn_embedding_backward(&m->emb, &m->p, f->ids, f->dact[0], B * S);
    (void)rng;
    return HR_OK;
}

/* Teacher-forced validation: mean loss and per-position accuracy. */
static int fit_evaluate(void *ctx, const int *rows, int n, float *loss, float *metric)
{
    s2s_fit *f = ctx;
    double sum = 0.0;
    long hits = 0;
    for (int i = 0; i < n; i += f->cap) {
        int b = n - i < f->cap ? n - i : f->cap;
        fit_forward(f, rows + i, b);
        sum += fit_loss(f, rows + i, b, NULL, &hits) * b;
    }
    *loss = (float)(sum / n);
    *metric = (float)((double)hits / ((double)n * f->m->base.length));
    return HR_OK;
}

static int s2s_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    if (d->n_train < 1) return hr_error(HR_EINVAL, "seq2seq: no training rows");
    s2s_cfg cfg;
    int rc = s2s_cfg_parse(ctx->config, &cfg);
    if (rc) return rc;
    seq2seq *m = hr_calloc(1, sizeof *m);
    if (!m) return HR_ENOMEM;
    if ((rc = model_base_init(&m->base, &model_family_seq2seq, d, ctx))) goto fail;
    m->a = cfg.a;
    if ((rc = s2s_vocab_fit(m, d))) goto fail;
    if ((rc = s2s_build(m))) goto fail;
    hr_rng init;
    hr_rng_derive(&init, ctx->seed, 1);
    s2s_reset(m, &init);

    train_opts o = cfg.train;
    model_loop_opts(&o, ctx, "seq2seq");
    o.metric_name = model_task_metric(MODEL_TASK_TUNE);
    s2s_fit fit;
    int cap = o.batch_size > S2S_EVAL_CHUNK ? o.batch_size : S2S_EVAL_CHUNK;
    if ((rc = fit_init(&fit, m, d, cap))) goto fail;
    train_ops ops = {fit_batch, fit_evaluate};
    train_result res;
    rc = train_run(&ops, &fit, &m->p, NULL, d->train, d->n_train, d->valid, d->n_valid, &o, &res);
    fit_free(&fit);
    if (rc) goto fail;
    rc = model_loop_curve(&m->base, &res);
    train_result_free(&res);
    if (rc) goto fail;
    *out = &m->base;
    return HR_OK;
fail:
    s2s_free(&m->base);
    return rc;
}

/* ---- the family ---- */

static const model_tune_ops s2s_tune = {
    .ops = {.train = s2s_train, .save = s2s_save, .load = s2s_load},
    .predict = s2s_predict,
    .score = s2s_score,
};

const model_family model_family_seq2seq = {
    .name = "seq2seq",
    .tune = &s2s_tune,
    .ws_create = s2s_ws_create,
    .ws_free = s2s_ws_free,
    .n_params = s2s_n_params,
    .free = s2s_free,
    .views = s2s_views,
    .config_options = s2s_config_options,
};
