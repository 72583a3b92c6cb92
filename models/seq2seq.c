/* The seq2seq tuner (family "seq2seq", task tune), after the seq2seq tuning-parameter paper:
 * tuning-parameter prediction as translation of the problem descriptor into the parameter sequence.
 *   encoder:  tokens (S) -> embedding (S, E) -> [Conv1D k=3 pad 1, ReLU]^c -> [BiLSTM]^l -> keys (S, Dk)
 *   decoder:  BOS, then the previous value; Bahdanau attention over the keys; LSTM cell;
 *             logits_j over position j's value vocabulary only
 *   loss:     (1/L) sum_j CE(softmax(logits_j), y_j), teacher forcing, mean over the batch
 * Decoding (seq2seq_decode.c): greedy, beam of width k, or beam constrained by the solver's rules.
 * The layout, vocabularies and weights are written by name, so a model file describes itself.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"
#include "models/seq2seq_internal.h"

#define S2S_EVAL_CHUNK 512

/* numeric descriptor fields that become encoder tokens, then direction, dtype, layout */
static const int numeric_fields[S2S_N_FIELDS - 3] = {
    DATA_FIELD_IN_C,   DATA_FIELD_IN_H,     DATA_FIELD_IN_W,     DATA_FIELD_FIL_H, DATA_FIELD_FIL_W,
    DATA_FIELD_OUT_C,  DATA_FIELD_OUT_H,    DATA_FIELD_OUT_W,    DATA_FIELD_BATCH, DATA_FIELD_PAD_H,
    DATA_FIELD_PAD_W,  DATA_FIELD_STRIDE_H, DATA_FIELD_STRIDE_W, DATA_FIELD_DIL_H, DATA_FIELD_DIL_W,
    DATA_FIELD_GROUPS,
};
#define N_NUMERIC (S2S_N_FIELDS - 3)

const char *const s2s_field_names[S2S_N_FIELDS] = {
    "in_c",  "in_h",  "in_w",     "fil_h",    "fil_w", "out_c", "out_h",     "out_w", "batch", "pad_h",
    "pad_w", "stride_h", "stride_w", "dil_h", "dil_w", "groups", "direction", "dtype", "layout",
};

int64_t s2s_field_value(const data_problem *p, int f)
{
    if (f < N_NUMERIC) return p->f[numeric_fields[f]];
    if (f == N_NUMERIC) return p->direction;
    if (f == N_NUMERIC + 1) return p->dtype;
    return p->layout;
}

/* token of value v in field f: 1 + its index in the sorted vocabulary, 0 (UNK) when unseen */
static int field_token(const seq2seq *m, int f, int64_t v)
{
    const int64_t *a = m->vals[f];
    int lo = 0, hi = m->n_vals[f];
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->n_vals[f] && a[lo] == v ? lo + 1 : 0;
}

void s2s_encode_ids(const seq2seq *m, const data_problem *p, int *ids)
{
    for (int f = 0; f < S2S_N_FIELDS; f++) ids[f] = m->emb_off[f] + field_token(m, f, s2s_field_value(p, f));
}

int s2s_enc_width(const seq2seq *m)
{
    int w = m->a.embed;
    if (m->a.conv_layers && m->a.conv_channels > w) w = m->a.conv_channels;
    return m->key > w ? m->key : w;
}

/* ---- config ---- */

typedef struct s2s_cfg {
    train_opts train;
    s2s_arch a;
} s2s_cfg;

static int parse_decode(const char *s, s2s_decode_kind *k)
{
    if (!strcmp(s, "greedy")) *k = S2S_DECODE_GREEDY;
    else if (!strcmp(s, "beam")) *k = S2S_DECODE_BEAM;
    else if (!strcmp(s, "constrained")) *k = S2S_DECODE_CONSTRAINED;
    else return hr_error(HR_EINVAL, "seq2seq: decode '%s': expected greedy, beam or constrained", s);
    return HR_OK;
}

static const char *decode_name(s2s_decode_kind k)
{
    return k == S2S_DECODE_GREEDY ? "greedy" : k == S2S_DECODE_BEAM ? "beam" : "constrained";
}

/* Defaults: E 32, one Conv1D of 64 channels, one BiLSTM of 64 per direction, decoder 64, attention 64,
 * 15 epochs of Adam 3e-3 with warm-up and cosine decay, batch 64, constrained beam of width 4. */
static int s2s_cfg_parse(const cJSON *c, s2s_cfg *o)
{
    static const char *const own[] = {"embed", "conv_layers", "conv_channels", "lstm_layers", "hidden",
                                      "attn",  "decode",      "beam",          "encoder"};
    int rc = model_cfg_check_loop(c, "seq2seq", own, sizeof own / sizeof *own);
    o->train = train_opts_defaults();
    o->train.epochs = 15;
    o->train.batch_size = 64;
    o->train.lr = 3e-3f;
    o->train.lr_min = 1e-5f;
    o->train.clip = 5.0f;
    o->train.patience = 0;
    o->train.monitor = TRAIN_MONITOR_METRIC;
    s2s_arch *a = &o->a;
    if (!rc) rc = train_opts_from_json(c, &o->train);
    if (!rc) rc = train_cfg_int(c, "embed", 32, 1, 4096, &a->embed);
    if (!rc) rc = train_cfg_int(c, "conv_layers", 1, 0, S2S_MAX_CONV, &a->conv_layers);
    if (!rc) rc = train_cfg_int(c, "conv_channels", 64, 1, 4096, &a->conv_channels);
    if (!rc) rc = train_cfg_int(c, "lstm_layers", 1, 1, S2S_MAX_LSTM, &a->lstm_layers);
    if (!rc) rc = train_cfg_int(c, "hidden", 64, 1, 4096, &a->hidden);
    if (!rc) rc = train_cfg_int(c, "attn", 64, 1, 4096, &a->attn);
    if (!rc) rc = train_cfg_int(c, "beam", 4, 1, S2S_MAX_BEAM, &a->beam);
    if (!rc) rc = parse_decode(train_cfg_str(c, "decode", "constrained"), &a->decode);
    const char *enc = train_cfg_str(c, "encoder", "bilstm");
    if (!rc && strcmp(enc, "bilstm") && strcmp(enc, "lstm"))
        rc = hr_error(HR_EINVAL, "seq2seq: encoder '%s': expected bilstm or lstm", enc);
    a->bidir = strcmp(enc, "lstm") != 0;
    return rc;
}

/* ---- layout ---- */

/* Lays out every tensor from the architecture and vocabularies, allocates the parameters. */
static int s2s_build(seq2seq *m)
{
    const s2s_arch *a = &m->a;
    const int L = m->base.length;
    m->n_emb = 0;
    for (int f = 0; f < S2S_N_FIELDS; f++) {
        m->emb_off[f] = m->n_emb;
        m->n_emb += m->n_vals[f] + 1;
    }
    m->vb = hr_calloc((size_t)L, sizeof *m->vb);
    m->ve = hr_calloc((size_t)L, sizeof *m->ve);
    if (!m->vb || !m->ve) return HR_ENOMEM;
    m->n_out = 0;
    for (int j = 0; j < L; j++) {
        m->vb[j] = m->n_out;
        m->n_out += m->base.vocab_size[j];
        m->ve[j] = m->n_out;
    }
    m->key = a->bidir ? 2 * a->hidden : a->hidden;
    nn_params_init(&m->p);
    char name[32];
    nn_embedding_layout(&m->emb, &m->p, "enc.embedding", m->n_emb, a->embed);
    int in = a->embed;
    for (int l = 0; l < a->conv_layers; l++) {
        snprintf(name, sizeof name, "enc.conv%d", l);
        nn_conv1d_layout(&m->conv[l], &m->p, name, in, a->conv_channels, 3, 1, 1);
        in = a->conv_channels;
    }
    for (int l = 0; l < a->lstm_layers; l++) {
        snprintf(name, sizeof name, "enc.lstm%d", l);
        if (a->bidir) nn_bilstm_layout(&m->bi[l], &m->p, name, in, a->hidden);
        else nn_lstm_layout(&m->uni[l], &m->p, name, in, a->hidden);
        in = m->key;
    }
    nn_decoder_layout(&m->dec, &m->p, "dec", 1 + m->n_out, m->n_out, a->embed, m->key, a->hidden, a->attn);
    return nn_params_alloc(&m->p);
}

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

/* Field vocabularies: the sorted distinct values of each field over the training rows. */
static int s2s_vocab_fit(seq2seq *m, const data_tune *t, const int *rows, int n)
{
    for (int f = 0; f < S2S_N_FIELDS; f++) {
        int64_t *v = hr_malloc((size_t)(n ? n : 1) * sizeof *v);
        if (!v) return HR_ENOMEM;
        for (int i = 0; i < n; i++) v[i] = s2s_field_value(&t->problems[rows[i]], f);
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

static int fit_init(s2s_fit *f, seq2seq *m, const data_tune *t, int cap)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    f->t = t;
    f->cap = cap;
    const int S = S2S_N_FIELDS, L = m->base.length;
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
    const int S = S2S_N_FIELDS, L = m->base.length;
    HR_ASSERT(B <= f->cap);
    for (int b = 0; b < B; b++) s2s_encode_ids(m, &t->problems[rows[b]], f->ids + (size_t)b * S);
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
    const int S = S2S_N_FIELDS, L = m->base.length, top = n_acts(m) - 1;
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

/* ---- family ---- */

static void s2s_free(model *mb)
{
    seq2seq *m = (seq2seq *)mb;
    if (!m) return;
    s2s_infer_free(m);
    nn_params_free(&m->p);
    for (int f = 0; f < S2S_N_FIELDS; f++) free(m->vals[f]);
    free(m->vb);
    free(m->ve);
    model_base_free(&m->base);
    free(m);
}

static int s2s_train(const model_train_data *d, const model_ctx *ctx, model **out)
{
    *out = NULL;
    if (d->task != MODEL_TASK_TUNE) return hr_error(HR_EINVAL, "seq2seq: only the tune task");
    if (d->n_train < 1) return hr_error(HR_EINVAL, "seq2seq: no training rows");
    s2s_cfg cfg;
    int rc = s2s_cfg_parse(ctx->config, &cfg);
    if (rc) return rc;
    seq2seq *m = hr_calloc(1, sizeof *m);
    if (!m) return HR_ENOMEM;
    if ((rc = model_base_init(&m->base, &model_family_seq2seq, d, ctx))) goto fail;
    m->a = cfg.a;
    if ((rc = s2s_vocab_fit(m, d->tune, d->train, d->n_train))) goto fail;
    if ((rc = s2s_build(m))) goto fail;
    hr_rng init;
    hr_rng_derive(&init, ctx->seed, 1);
    s2s_reset(m, &init);

    train_opts o = cfg.train;
    model_loop_opts(&o, ctx, "seq2seq");
    o.metric_name = "acc";
    s2s_fit fit;
    int cap = o.batch_size > S2S_EVAL_CHUNK ? o.batch_size : S2S_EVAL_CHUNK;
    if ((rc = fit_init(&fit, m, d->tune, cap))) goto fail;
    train_ops ops = {fit_batch, fit_evaluate};
    train_result res;
    rc = train_run(&ops, &fit, &m->p, NULL, d->train, d->n_train, d->valid, d->n_valid, &o, &res);
    fit_free(&fit);
    if (rc) goto fail;
    rc = model_loop_curve(&m->base, &res);
    train_result_free(&res);
    if (!rc) rc = s2s_infer_init(m);
    if (rc) goto fail;
    *out = &m->base;
    return HR_OK;
fail:
    s2s_free(&m->base);
    return rc;
}

static int s2s_predict(const model *mb, const data_problem *p, const float *x, int32_t *values)
{
    const seq2seq *m = (const seq2seq *)mb;
    (void)x;
    return s2s_decode(m, p, m->a.decode, m->a.beam, values, NULL);
}

static long s2s_n_params(const model *mb)
{
    return (long)((const seq2seq *)mb)->p.n;
}

/* ---- files ---- */

static int s2s_save(const model *mb, hid_t g)
{
    const seq2seq *m = (const seq2seq *)mb;
    const s2s_arch *a = &m->a;
    int rc = hr_h5_attr_write_int(g, "seq2seq_version", SEQ2SEQ_VERSION);
    if (!rc) rc = hr_h5_attr_write_int(g, "embed", a->embed);
    if (!rc) rc = hr_h5_attr_write_int(g, "conv_layers", a->conv_layers);
    if (!rc) rc = hr_h5_attr_write_int(g, "conv_channels", a->conv_channels);
    if (!rc) rc = hr_h5_attr_write_int(g, "lstm_layers", a->lstm_layers);
    if (!rc) rc = hr_h5_attr_write_str(g, "encoder", a->bidir ? "bilstm" : "lstm");
    if (!rc) rc = hr_h5_attr_write_int(g, "hidden", a->hidden);
    if (!rc) rc = hr_h5_attr_write_int(g, "attn", a->attn);
    if (!rc) rc = hr_h5_attr_write_str(g, "decode", decode_name(a->decode));
    if (!rc) rc = hr_h5_attr_write_int(g, "beam", a->beam);
    /* encoder vocabularies by field name: numbers, or the category names */
    hid_t vg = -1;
    if (!rc) rc = hr_h5_group_create(g, "encoder_vocab", &vg);
    for (int f = 0; f < S2S_N_FIELDS && !rc; f++) {
        if (f < N_NUMERIC) {
            rc = hr_h5_write(vg, s2s_field_names[f], H5T_NATIVE_INT64, (size_t)m->n_vals[f], 0, m->vals[f]);
            continue;
        }
        const char *const *names = f == N_NUMERIC ? data_direction_names
                                   : f == N_NUMERIC + 1 ? data_dtype_names
                                                        : data_layout_names;
        char *s[DATA_DTYPE_COUNT + DATA_LAYOUT_COUNT + DATA_DIR_COUNT];
        for (int i = 0; i < m->n_vals[f]; i++) s[i] = (char *)names[m->vals[f][i]];
        rc = hr_h5_write_strings(vg, s2s_field_names[f], s, (size_t)m->n_vals[f]);
    }
    if (vg >= 0) H5Gclose(vg);
    if (!rc) rc = nn_checkpoint_write(g, "params", &m->p, NULL);
    return rc;
}

static int load_vocab(hid_t vg, seq2seq *m)
{
    int rc = HR_OK;
    for (int f = 0; f < S2S_N_FIELDS && !rc; f++) {
        size_t r = 0, c = 0;
        if (f < N_NUMERIC) {
            rc = hr_h5_read_alloc(vg, s2s_field_names[f], H5T_NATIVE_INT64, &r, &c, (void **)&m->vals[f]);
            m->n_vals[f] = (int)r;
            for (size_t i = 1; !rc && i < r; i++)
                if (m->vals[f][i] <= m->vals[f][i - 1])
                    rc = hr_error(HR_EFORMAT, "seq2seq: encoder vocabulary '%s' is not sorted", s2s_field_names[f]);
            continue;
        }
        const char *const *names = f == N_NUMERIC ? data_direction_names
                                   : f == N_NUMERIC + 1 ? data_dtype_names
                                                        : data_layout_names;
        int count = f == N_NUMERIC ? DATA_DIR_COUNT : f == N_NUMERIC + 1 ? DATA_DTYPE_COUNT : DATA_LAYOUT_COUNT;
        char **s = NULL;
        if ((rc = hr_h5_read_strings(vg, s2s_field_names[f], &s, &r))) break;
        m->n_vals[f] = (int)r;
        if (!(m->vals[f] = hr_calloc(r ? r : 1, sizeof(int64_t)))) rc = HR_ENOMEM;
        for (size_t i = 0; !rc && i < r; i++) {
            int e = -1;
            for (int k = 0; k < count; k++)
                if (!strcmp(s[i], names[k])) e = k;
            if (e < 0) rc = hr_error(HR_EFORMAT, "seq2seq: unknown %s '%s'", s2s_field_names[f], s[i]);
            else m->vals[f][i] = e;
            if (!rc && i && m->vals[f][i] <= m->vals[f][i - 1])
                rc = hr_error(HR_EFORMAT, "seq2seq: encoder vocabulary '%s' is not sorted", s2s_field_names[f]);
        }
        hr_h5_free_strings(s, r);
    }
    return rc;
}

static int s2s_load(hid_t g, model *base, model **out)
{
    *out = NULL;
    seq2seq *m = hr_calloc(1, sizeof *m);
    if (!m) return HR_ENOMEM;
    m->base = *base;
    s2s_arch *a = &m->a;
    int version = 0, rc = hr_h5_attr_read_int_in(g, "seq2seq", "seq2seq_version", 0, 1 << 30, &version);
    if (!rc && version > SEQ2SEQ_VERSION)
        rc = hr_error(HR_EVERSION, "seq2seq content version %d is newer than this heurist's %d", version,
                      SEQ2SEQ_VERSION);
    if (!rc && m->base.task != MODEL_TASK_TUNE) rc = hr_error(HR_EFORMAT, "seq2seq: task must be tune");
    if (!rc) rc = hr_h5_attr_read_int_in(g, "seq2seq", "embed", 1, 4096, &a->embed);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "seq2seq", "conv_layers", 0, S2S_MAX_CONV, &a->conv_layers);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "seq2seq", "conv_channels", 1, 4096, &a->conv_channels);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "seq2seq", "lstm_layers", 1, S2S_MAX_LSTM, &a->lstm_layers);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "seq2seq", "hidden", 1, 4096, &a->hidden);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "seq2seq", "attn", 1, 4096, &a->attn);
    if (!rc) rc = hr_h5_attr_read_int_in(g, "seq2seq", "beam", 1, S2S_MAX_BEAM, &a->beam);
    char *s = NULL;
    if (!rc) rc = hr_h5_attr_read_str(g, "encoder", &s);
    if (!rc && strcmp(s, "bilstm") && strcmp(s, "lstm")) rc = hr_error(HR_EFORMAT, "seq2seq: unknown encoder '%s'", s);
    if (!rc) a->bidir = strcmp(s, "bilstm") == 0;
    free(s);
    s = NULL;
    if (!rc) rc = hr_h5_attr_read_str(g, "decode", &s);
    if (!rc) rc = parse_decode(s, &a->decode);
    free(s);
    hid_t vg = -1;
    if (!rc) rc = hr_h5_group_open(g, "encoder_vocab", &vg);
    if (!rc) rc = load_vocab(vg, m);
    if (vg >= 0) H5Gclose(vg);
    if (!rc) rc = s2s_build(m);
    if (!rc) rc = nn_checkpoint_read(g, "params", &m->p, NULL);
    if (!rc) rc = s2s_infer_init(m);
    if (rc) {
        memset(&m->base, 0, sizeof m->base); /* still owned by the caller */
        s2s_free(&m->base);
        return rc;
    }
    *out = &m->base;
    return HR_OK;
}

const model_family model_family_seq2seq = {
    .name = "seq2seq",
    .tasks = MODEL_TASK_TUNE,
    .train = s2s_train,
    .predict_tune = s2s_predict,
    .save = s2s_save,
    .load = s2s_load,
    .n_params = s2s_n_params,
    .free = s2s_free,
};
