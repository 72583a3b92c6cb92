/* The seq2seq tuner (family "seq2seq", task tune), after the seq2seq tuning-parameter paper:
 * tuning-parameter prediction as translation of the problem descriptor into the parameter sequence.
 *   encoder:  tokens (S) -> embedding (S, E) -> [Conv1D k=3 pad 1, ReLU]^c -> [BiLSTM]^l -> keys (S, Dk)
 *   decoder:  BOS, then the previous value; Bahdanau attention over the keys; LSTM cell;
 *             logits_j over position j's value vocabulary only
 *   loss:     (1/L) sum_j CE(softmax(logits_j), y_j), teacher forcing, mean over the batch
 * Decoding (seq2seq_decode.c): greedy, beam of width k, or beam constrained by the solver's rules.
 * The layout, vocabularies and weights are written by name, so a model file describes itself.
 * This file holds the model, its layout and its files; models/seq2seq_train.c trains it and names the family's
 * parts in its table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"
#include "models/seq2seq_internal.h"

/* The convolution codec's encoder tokens as export/seq2seq.c reads them (data/codec_conv.c holds the list the model
 * encodes with, through data_codec_token_value). */
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

int64_t s2s_token_value(const seq2seq *m, const double *pv, int f)
{
    return data_codec_token_value(m->base.codec, pv, f, m->a.bins);
}

void s2s_encode_ids(const seq2seq *m, const data_tune_problem *q, int *ids)
{
    for (int f = 0; f < m->n_fields; f++) ids[f] = m->emb_off[f] + field_token(m, f, s2s_token_value(m, q->pv, f));
}

/* The options that only a source of valued configurations reads: the decoding space (its problems' measured
 * configurations) and the bins of its numeric columns. */
static int s2s_has_space(const seq2seq *m)
{
    return data_codec_config_width(m->base.codec) > 0;
}

int s2s_enc_width(const seq2seq *m)
{
    int w = m->a.embed;
    if (m->a.conv_layers && m->a.conv_channels > w) w = m->a.conv_channels;
    return m->key > w ? m->key : w;
}

/* ---- layout ---- */

/* Lays out every tensor from the architecture and vocabularies, allocates the parameters. */
int s2s_build(seq2seq *m)
{
    const s2s_arch *a = &m->a;
    const int L = m->base.length;
    m->n_emb = 0;
    for (int f = 0; f < m->n_fields; f++) {
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
/* ---- memory and size ---- */

void s2s_free(model *mb)
{
    seq2seq *m = (seq2seq *)mb;
    if (!m) return;
    nn_params_free(&m->p);
    for (int f = 0; f < S2S_MAX_FIELDS; f++) free(m->vals[f]);
    free(m->vb);
    free(m->ve);
    model_base_free(&m->base);
    free(m);
}
long s2s_n_params(const model *mb)
{
    return (long)((const seq2seq *)mb)->p.n;
}

/* ---- files ---- */

int s2s_save(const model *mb, hid_t g)
{
    const seq2seq *m = (const seq2seq *)mb;
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {"seq2seq", rows, s2s_config_options(rows)};
    s2s_cfg cfg;
    hr_config_defaults(&t, &cfg);
    cfg.a = m->a;
    int rc = hr_h5_attr_write_int(g, "seq2seq_version", SEQ2SEQ_VERSION);
    if (!rc) rc = hr_config_write_h5(&t, &cfg, S2S_FILE_MODEL | (s2s_has_space(m) ? S2S_FILE_TABLE : 0), g);
    /* encoder vocabularies by the codec's field name: numbers (a value, a bin, or an index into the categories the
     * model's codec records), or a category stored by its name */
    hid_t vg = -1;
    if (!rc) rc = hr_h5_group_create(g, "encoder_vocab", &vg);
    for (int f = 0; f < m->n_fields && !rc; f++) {
        const data_codec_token *tok = data_codec_token_at(m->base.codec, f);
        if (!tok->names) {
            rc = hr_h5_write(vg, tok->name, H5T_NATIVE_INT64, (size_t)m->n_vals[f], 0, m->vals[f]);
            continue;
        }
        char **s = hr_calloc((size_t)(m->n_vals[f] ? m->n_vals[f] : 1), sizeof *s);
        if (!s) rc = HR_ENOMEM;
        for (int i = 0; !rc && i < m->n_vals[f]; i++) s[i] = (char *)tok->names[m->vals[f][i]];
        if (!rc) rc = hr_h5_write_strings(vg, tok->name, s, (size_t)m->n_vals[f]);
        free(s);
    }
    if (vg >= 0) H5Gclose(vg);
    if (!rc) rc = nn_checkpoint_write(g, "params", &m->p, NULL);
    return rc;
}

static int load_vocab(hid_t vg, seq2seq *m)
{
    int rc = HR_OK;
    for (int f = 0; f < m->n_fields && !rc; f++) {
        const data_codec_token *tok = data_codec_token_at(m->base.codec, f);
        size_t r = 0, c = 0;
        if (!tok->names) {
            rc = hr_h5_read_alloc(vg, tok->name, H5T_NATIVE_INT64, &r, &c, (void **)&m->vals[f]);
            m->n_vals[f] = (int)r;
            for (size_t i = 1; !rc && i < r; i++)
                if (m->vals[f][i] <= m->vals[f][i - 1])
                    rc = hr_error(HR_EFORMAT, "seq2seq: encoder vocabulary '%s' is not sorted", tok->name);
            continue;
        }
        char **s = NULL;
        if ((rc = hr_h5_read_strings(vg, tok->name, &s, &r))) break;
        m->n_vals[f] = (int)r;
        if (!(m->vals[f] = hr_calloc(r ? r : 1, sizeof(int64_t)))) rc = HR_ENOMEM;
        for (size_t i = 0; !rc && i < r; i++) {
            int e = -1;
            for (int k = 0; k < tok->n_names; k++)
                if (!strcmp(s[i], tok->names[k])) e = k;
            if (e < 0) rc = hr_error(HR_EFORMAT, "seq2seq: unknown %s '%s'", tok->name, s[i]);
            else m->vals[f][i] = e;
            if (!rc && i && m->vals[f][i] <= m->vals[f][i - 1])
                rc = hr_error(HR_EFORMAT, "seq2seq: encoder vocabulary '%s' is not sorted", tok->name);
        }
        hr_h5_free_strings(s, r);
    }
    return rc;
}

int s2s_load(hid_t g, model *base, model **out)
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
    m->n_fields = data_codec_token_count(m->base.codec);
    if (!rc && m->n_fields > S2S_MAX_FIELDS)
        rc = hr_error(HR_EFORMAT, "seq2seq: %d problem columns, at most %d", m->n_fields, S2S_MAX_FIELDS);
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t = {"seq2seq", rows, s2s_config_options(rows)};
    s2s_cfg cfg;
    if (!rc) rc = hr_config_read_h5(&t, g, S2S_FILE_MODEL | (s2s_has_space(m) ? S2S_FILE_TABLE : 0), version, &cfg);
    if (!rc) *a = cfg.a;
    if (!s2s_has_space(m)) { /* a model of kernels known by name records neither; it reads neither */
        a->bins = 4;
        a->space = S2S_SPACE_CAPS;
    }
    hid_t vg = -1;
    if (!rc) rc = hr_h5_group_open(g, "encoder_vocab", &vg);
    if (!rc) rc = load_vocab(vg, m);
    if (vg >= 0) H5Gclose(vg);
    if (!rc) rc = s2s_build(m);
    if (!rc) rc = nn_checkpoint_read(g, "params", &m->p, NULL);
    if (rc) {
        memset(&m->base, 0, sizeof m->base); /* still owned by the caller */
        s2s_free(&m->base);
        return rc;
    }
    *out = &m->base;
    return HR_OK;
}
