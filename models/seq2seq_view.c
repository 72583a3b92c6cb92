/* What a seq2seq model shows of itself to export/ (models/view.h):
 *   embed, conv_layers, conv_channels, lstm_layers, bidir, hidden, attn, key, beam (ints): the architecture
 *   width (int): the widest encoder activation per token; decode (text): greedy, beam or constrained
 *   tokens (int): the encoder's tokens S; field<f>.name (text), field<f>.values (int64s: its sorted training
 *     values), field_source (ints (S): which value token f reads, >= 0 a data_problem field index, -1 direction,
 *     -2 dtype, -3 layout), embedding_offsets (ints (S): the first embedding row of each token's field)
 *   bins (int), space (text: caps or measured): on a source of valued configurations (a benchmark table), the bins
 *     an octave of its numeric columns' tokens and the space constrained decoding keeps to
 *   vb, ve (ints (length)): each output position's slice of the decoder's vocabulary
 *   params: the parameter block ("enc.embedding.weight", "enc.conv<l>.*", "enc.lstm<l>[.fwd|.bwd].*", "dec.*") */
#include <stdlib.h>
#include <string.h>

#include "models/seq2seq_internal.h"
#include "models/view.h"

/* Which raw value encoder token f reads, found by asking s2s_field_value of a probe problem (so the field order
 * has one source) */
static int field_source(int f)
{
    data_problem p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < DATA_FIELD_COUNT; i++) p.f[i] = 1000 + i;
    p.direction = 101;
    p.dtype = 102;
    p.layout = 103;
    int64_t v = s2s_field_value(&p, f);
    if (v >= 1000) return (int)(v - 1000);
    HR_ASSERT(v >= 101 && v <= 103);
    return (int)(100 - v);
}

int s2s_views(const model *mb, model_views *v)
{
    const seq2seq *m = (const seq2seq *)mb;
    const s2s_arch *a = &m->a;
    model_views_int(v, a->embed, "embed");
    model_views_int(v, a->conv_layers, "conv_layers");
    model_views_int(v, a->conv_channels, "conv_channels");
    model_views_int(v, a->lstm_layers, "lstm_layers");
    model_views_int(v, a->bidir, "bidir");
    model_views_int(v, a->hidden, "hidden");
    model_views_int(v, a->attn, "attn");
    model_views_int(v, m->key, "key");
    model_views_int(v, a->beam, "beam");
    model_views_int(v, s2s_enc_width(m), "width");
    model_views_array(v, MODEL_VIEW_TEXT, s2s_decode_names[a->decode], 1, "decode");
    /* a convolution key's tokens read its fields (field_source); a source of valued configurations' read its values
     * in order */
    const int by_value = data_codec_config_width(m->base.codec) > 0;
    const int S = by_value ? m->n_fields : S2S_N_FIELDS;
    model_views_int(v, S, "tokens");
    if (by_value) {
        model_views_int(v, a->bins, "bins");
        model_views_array(v, MODEL_VIEW_TEXT, s2s_space_names[a->space], 1, "space");
    }
    int *src = hr_malloc((size_t)S * sizeof *src);
    if (!src) return HR_ENOMEM;
    for (int f = 0; f < S; f++) {
        src[f] = by_value ? f : field_source(f);
        if (!by_value) model_views_array(v, MODEL_VIEW_TEXT, s2s_field_names[f], 1, "field%d.name", f);
        model_views_array(v, MODEL_VIEW_INT64S, m->vals[f], (size_t)m->n_vals[f], "field%d.values", f);
    }
    model_views_owned(v, MODEL_VIEW_INTS, src, (size_t)S, "field_source");
    model_views_array(v, MODEL_VIEW_INTS, m->emb_off, (size_t)S, "embedding_offsets");
    model_views_array(v, MODEL_VIEW_INTS, m->vb, (size_t)mb->length, "vb");
    model_views_array(v, MODEL_VIEW_INTS, m->ve, (size_t)mb->length, "ve");
    model_views_array(v, MODEL_VIEW_PARAMS, &m->p, 1, "params");
    return HR_OK;
}
