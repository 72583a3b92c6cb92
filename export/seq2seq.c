/* The seq2seq family as C source for an exported runtime: the nn_params block as one static array
 * with a macro per named view, the encoder (embedding, Conv1D + ReLU, (Bi)LSTM) and the attention
 * decoder as plain loops (export/runtime/seq2seq.h), and the model's own decoding (greedy, beam, or beam constrained by the
 * solver's rules with the depth-first fallback), following models/seq2seq_decode.c step for step.
 *
 * Agreement with heurist: nn sums its products with OpenBLAS, the runtime with its own partial sums
 * (hm_dot), so pre-activations may differ in the last float bits; everything after a sum (nn_tanh_fast, the
 * softmaxes, the LSTM pointwise update, beam scores) is the same float expression in the same
 * order, and every choice (argmax, beam ranking, ties to the earlier hypothesis and token) uses the
 * same comparisons, so only a near-tie within rounding can pick differently. */
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "models/models_internal.h"
#include "models/seq2seq_internal.h"

/* Generated macros never end in _H or _N_FIELDS, the names the wrapper derives from the prefix.
 * Macro name of the view at `offset` of the parameter block: "dec.attn.w_q" -> HM_P_DEC_ATTN_W_Q. */
static const char *view_macro(const seq2seq *m, size_t offset, char *buf, size_t cap)
{
    for (int i = 0; i < m->p.n_views; i++) {
        const nn_param_view *v = &m->p.views[i];
        if (v->offset != offset) continue;
        size_t k = (size_t)snprintf(buf, cap, "HM_P_");
        for (const char *s = v->name; *s && k + 1 < cap; s++)
            buf[k++] = (*s >= 'a' && *s <= 'z') ? (char)(*s - 'a' + 'A') : (*s >= '0' && *s <= '9') || (*s >= 'A' && *s <= 'Z') ? *s : '_';
        buf[k] = 0;
        return buf;
    }
    HR_ASSERT(!"parameter offset without a view");
    return NULL;
}

/* Name of the portable rule function for the model's solver (data/portable.h). */
static const char *portable_rules(const char *solver)
{
    static const struct {
        const char *solver, *fn;
    } rules[] = {
        {"ConvAsm1x1U", "data_portable_asm1x1u_valid"},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (!strcmp(rules[i].solver, solver)) return rules[i].fn;
    return NULL;
}

/* Which raw value encoder token f reads, found by asking s2s_field_value of a probe problem (so the
 * field order has one source): >= 0 a p->f index, -1 direction, -2 dtype, -3 layout. */
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

/* Writes the encoder: one call per layer, ping-ponging between two (S, HM_WIDTH) buffers. */
static void write_encoder(FILE *out, const seq2seq *m)
{
    char a[96], b[96], c[96], d[96];
    fprintf(out, "/* keys (S, Dk) = encoder(p) */\nstatic void hm_encode(const data_problem *p, float *keys)\n{\n"
                 "    float buf0[HM_TOKENS * HM_WIDTH], buf1[HM_TOKENS * HM_WIDTH];\n    float *x = buf0, *y = buf1, *t = 0;\n"
                 "    for (int f = 0; f < HM_TOKENS; f++)\n"
                 "        memcpy(x + f * HM_WIDTH, %s + (size_t)(hm_emb_off[f] + hm_token(p, f)) * HM_EMBED, sizeof(float) * HM_EMBED);\n",
            view_macro(m, m->emb.w, a, sizeof a));
    int in = m->a.embed;
    for (int l = 0; l < m->a.conv_layers; l++) {
        fprintf(out, "    hm_conv1d_relu(%d, %d, %s, %s, x, HM_WIDTH, y, HM_WIDTH);\n    t = x;\n    x = y;\n    y = t;\n", in,
                m->a.conv_channels, view_macro(m, m->conv[l].w, a, sizeof a), view_macro(m, m->conv[l].b, b, sizeof b));
        in = m->a.conv_channels;
    }
    for (int l = 0; l < m->a.lstm_layers; l++) {
        int last = l == m->a.lstm_layers - 1;
        const char *dst = last ? "keys" : "y", *ld = last ? "HM_KEY" : "HM_WIDTH";
        const nn_lstm *dirs[2] = {m->a.bidir ? &m->bi[l].fwd : &m->uni[l], m->a.bidir ? &m->bi[l].bwd : NULL};
        for (int r = 0; r < 2 && dirs[r]; r++) {
            const nn_lstm *ls = dirs[r];
            fprintf(out, "    hm_lstm_layer(%d, HM_HIDDEN, %s, %s, %s, %s, %d, x, HM_WIDTH, %s%s, %s);\n", in,
                    view_macro(m, ls->w_ih, a, sizeof a), view_macro(m, ls->w_hh, b, sizeof b),
                    view_macro(m, ls->b_ih, c, sizeof c), view_macro(m, ls->b_hh, d, sizeof d), r, dst,
                    r ? " + HM_HIDDEN" : "", ld);
        }
        if (!last) fprintf(out, "    t = x;\n    x = y;\n    y = t;\n");
        in = m->key;
    }
    fprintf(out, "    (void)t;\n    (void)y;\n}\n\n");
}

int export_seq2seq_check(const model *mb, const char *name)
{
    return export_check_params(name, &((const seq2seq *)mb)->p);
}

int export_seq2seq_write(const model *mb, FILE *out)
{
    const seq2seq *m = (const seq2seq *)mb;
    const s2s_arch *ar = &m->a;
    const int S = S2S_N_FIELDS, L = m->base.length;
    const data_constraint *con = ar->decode == S2S_DECODE_CONSTRAINED ? m->base.constraint : NULL;
    if (con && con->length != L) con = NULL; /* as s2s_decode: rules for another parameter list */
    const char *rules = con ? portable_rules(con->solver) : NULL;
    if (con && !rules)
        return hr_error(HR_EINVAL, "seq2seq export: no portable rules for solver '%s' (data/portable.h)", con->solver);
    int vmax = 1;
    for (int j = 0; j < L; j++) vmax = m->base.vocab_size[j] > vmax ? m->base.vocab_size[j] : vmax;
    int width = s2s_enc_width(m);
    if (ar->hidden > width) width = ar->hidden;

    fprintf(out, "/* seq2seq: %d encoder tokens, embedding %d, %d Conv1D of %d, %d %s of %d, decoder %d, attention %d;\n"
                 " * decoding %s, beam %d */\n",
            S, ar->embed, ar->conv_layers, ar->conv_channels, ar->lstm_layers, ar->bidir ? "BiLSTM" : "LSTM",
            ar->hidden, ar->hidden, ar->attn,
            ar->decode == S2S_DECODE_GREEDY ? "greedy" : ar->decode == S2S_DECODE_BEAM ? "beam" : "constrained beam",
            ar->decode == S2S_DECODE_GREEDY ? 1 : ar->beam);
    fprintf(out, "#define HM_TOKENS %d\n#define HM_EMBED %d\n#define HM_HIDDEN %d\n#define HM_ATTN %d\n#define HM_KEY %d\n#define HM_LEN %d\n"
                 "#define HM_VMAX %d\n#define HM_WIDTH %d /* widest encoder activation */\n#define HM_BEAM %d\n"
                 "#define HM_RULES %d\n#define HM_DFS_BUDGET %dL\n\n",
            S, ar->embed, ar->hidden, ar->attn, m->key, L, vmax, width, ar->decode == S2S_DECODE_GREEDY ? 1 : ar->beam,
            rules != NULL, 20000);

    /* parameters: the nn_params block and its views */
    fprintf(out, "/* the nn_params block (%zu floats); views by name, row-major as nn/seq.h */\n", m->p.n);
    export_c_floats(out, "hm_w", m->p.w, m->p.n);
    for (int i = 0; i < m->p.n_views; i++) {
        char name[96];
        fprintf(out, "#define %s (hm_w + %zu) /* %s (%zu) */\n", view_macro(m, m->p.views[i].offset, name, sizeof name),
                m->p.views[i].offset, m->p.views[i].name, m->p.views[i].size);
    }

    /* the decoder's tensors under the short names the step uses */
    const struct {
        const char *alias;
        size_t offset;
    } dec[] = {{"HM_DEC_EMB", m->dec.emb},         {"HM_DEC_W_Q", m->dec.att.w_q},     {"HM_DEC_W_K", m->dec.att.w_k},
               {"HM_DEC_B_K", m->dec.att.b_k},     {"HM_DEC_V", m->dec.att.v},         {"HM_DEC_W_IH", m->dec.cell.w_ih},
               {"HM_DEC_W_HH", m->dec.cell.w_hh},  {"HM_DEC_B_IH", m->dec.cell.b_ih},  {"HM_DEC_B_HH", m->dec.cell.b_hh},
               {"HM_DEC_W_OUT", m->dec.w_out},     {"HM_DEC_B_OUT", m->dec.b_out}};
    for (size_t i = 0; i < sizeof dec / sizeof dec[0]; i++) {
        char name[96];
        fprintf(out, "#define %s %s\n", dec[i].alias, view_macro(m, dec[i].offset, name, sizeof name));
    }

    /* encoder vocabularies */
    int src[S2S_N_FIELDS], voff[S2S_N_FIELDS + 1], emb_off[S2S_N_FIELDS];
    voff[0] = 0;
    for (int f = 0; f < S; f++) {
        src[f] = field_source(f);
        voff[f + 1] = voff[f] + m->n_vals[f];
        emb_off[f] = m->emb_off[f];
    }
    fprintf(out, "\n/* encoder tokens: field f reads p->f[src] (src >= 0), direction (-1), dtype (-2) or layout (-3):");
    for (int f = 0; f < S; f++) fprintf(out, " %s", s2s_field_names[f]);
    fprintf(out, " */\n");
    export_c_ints(out, "int", "hm_field_src", src, (size_t)S);
    export_c_ints(out, "int", "hm_enc_voff", voff, (size_t)S + 1);
    export_c_ints(out, "int", "hm_emb_off", emb_off, (size_t)S);
    fprintf(out, "/* sorted training values of each field, at hm_enc_voff[f] */\nstatic const int64_t hm_enc_vals[%d] = {",
            voff[S] ? voff[S] : 1);
    for (int f = 0, i = 0; f < S; f++)
        for (int v = 0; v < m->n_vals[f]; v++, i++)
            fprintf(out, "%s%s%lld", i ? "," : "", i % 8 ? " " : "\n    ", (long long)m->vals[f][v]);
    fprintf(out, "%s};\n", voff[S] ? "\n" : "0");

    /* decoder output slices and value vocabularies */
    export_c_ints(out, "int", "hm_vb", m->vb, (size_t)L);
    export_c_ints(out, "int", "hm_ve", m->ve, (size_t)L);
    fprintf(out, "static const int32_t *const hm_vocab[%d] = {", L);
    for (int j = 0; j < L; j++) fprintf(out, "%shm_vocab_%d", j ? ", " : "", j);
    fprintf(out, "};\n\n");

    static const char runtime[] = "export/runtime/seq2seq.h";
    fputs(export_source("nn/tanh_fast.h"), out);
    export_section(out, runtime, "net");
    write_encoder(out, m);
    if (ar->decode == S2S_DECODE_GREEDY) {
        export_section(out, runtime, "greedy");
    } else {
        if (rules)
            fprintf(out, "/* the solver's rules (%s) */\nstatic int hm_valid(const data_problem *p, const int32_t *v, int len)\n{\n"
                         "    return %s(p, v, len);\n}\n\n", con->solver, rules);
        else
            fprintf(out, "static int hm_valid(const data_problem *p, const int32_t *v, int len)\n{\n"
                         "    (void)p;\n    (void)v;\n    (void)len;\n    return 1;\n}\n\n");
        export_section(out, runtime, "beam");
    }
    fprintf(out, "\nstatic void hm_model_tune(const data_problem *p, const float *x, int32_t *values)\n{\n"
                 "    float keys[HM_TOKENS * HM_KEY], kproj[HM_TOKENS * HM_ATTN];\n    (void)x;\n"
                 "    hm_encode(p, keys);\n    hm_dec_keys(keys, kproj);\n    hm_decode_%s(p, keys, kproj, values);\n}\n",
            ar->decode == S2S_DECODE_GREEDY ? "greedy" : "beam");
    return HR_OK;
}
