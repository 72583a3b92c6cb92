/* The seq2seq family as C source for an exported runtime: the nn_params block as one static array
 * with a macro per named view, the encoder (embedding, Conv1D + ReLU, (Bi)LSTM) and the attention
 * decoder as plain loops (export/runtime/seq2seq.h), and the model's own decoding (greedy, beam, or beam constrained by the
 * rules with the depth-first fallback), following models/seq2seq_decode.c step for step. Two runtimes take it: a
 * convolution's (the solver's portable rules, hm_model_tune) and a benchmark table's (export/table.c: the
 * problem's values and candidates, export/runtime/table_tune.h, hm_decode).
 *
 * Agreement with heurist: nn sums its products with OpenBLAS, the runtime with its own partial sums
 * (hm_dot), so pre-activations may differ in the last float bits; everything after a sum (nn_tanh_fast, the
 * softmaxes, the LSTM pointwise update, beam scores) is the same float expression in the same
 * order, and every choice (argmax, beam ranking, ties to the earlier hypothesis and token) uses the
 * same comparisons, so only a near-tie within rounding can pick differently. The model is read through its views
 * (models/seq2seq_view.c). */
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "export/export_internal.h"
#include "models/view.h"
#include "nn/nn.h"

/* Generated macros never end in _H or _N_FIELDS, the names the wrapper derives from the prefix.
 * Macro name of a view of the parameter block: "dec.attn.w_q" -> HM_P_DEC_ATTN_W_Q. The view must exist. */
static const char *view_macro(const model_views *mv, const char *view, char *buf, size_t cap)
{
    HR_ASSERT(nn_params_find(model_view_params(mv, "params"), view));
    size_t k = (size_t)snprintf(buf, cap, "HM_P_");
    for (const char *s = view; *s && k + 1 < cap; s++)
        buf[k++] = (*s >= 'a' && *s <= 'z') ? (char)(*s - 'a' + 'A') : (*s >= '0' && *s <= '9') || (*s >= 'A' && *s <= 'Z') ? *s : '_';
    buf[k] = 0;
    return buf;
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

/* Writes the encoder: one call per layer, ping-ponging between two (S, HM_WIDTH) buffers. */
static void write_encoder(FILE *out, const model_views *v)
{
    char a[96], b[96], c[96], d[96], name[64];
    const int embed = (int)model_view_int(v, "embed"), conv_layers = (int)model_view_int(v, "conv_layers");
    const int channels = (int)model_view_int(v, "conv_channels"), lstm_layers = (int)model_view_int(v, "lstm_layers");
    const int bidir = (int)model_view_int(v, "bidir"), key = (int)model_view_int(v, "key");
    fprintf(out, "/* keys (S, Dk) = encoder(p) */\nstatic void hm_encode(const hm_tune_problem *p, float *keys)\n{\n"
                 "    float buf0[HM_TOKENS * HM_WIDTH], buf1[HM_TOKENS * HM_WIDTH];\n    float *x = buf0, *y = buf1, *t = 0;\n"
                 "    for (int f = 0; f < HM_TOKENS; f++)\n"
                 "        memcpy(x + f * HM_WIDTH, %s + (size_t)(hm_emb_off[f] + hm_token(p, f)) * HM_EMBED, sizeof(float) * HM_EMBED);\n",
            view_macro(v, "enc.embedding.weight", a, sizeof a));
    int in = embed;
    for (int l = 0; l < conv_layers; l++) {
        char w[64], bias[64];
        snprintf(w, sizeof w, "enc.conv%d.weight", l);
        snprintf(bias, sizeof bias, "enc.conv%d.bias", l);
        fprintf(out, "    hm_conv1d_relu(%d, %d, %s, %s, x, HM_WIDTH, y, HM_WIDTH);\n    t = x;\n    x = y;\n    y = t;\n", in,
                channels, view_macro(v, w, a, sizeof a), view_macro(v, bias, b, sizeof b));
        in = channels;
    }
    static const char *const tensors[] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    for (int l = 0; l < lstm_layers; l++) {
        int last = l == lstm_layers - 1;
        const char *dst = last ? "keys" : "y", *ld = last ? "HM_KEY" : "HM_WIDTH";
        static const char *const dirs[2] = {".fwd", ".bwd"};
        for (int r = 0; r < (bidir ? 2 : 1); r++) {
            char *bufs[4] = {a, b, c, d};
            for (int t = 0; t < 4; t++) {
                snprintf(name, sizeof name, "enc.lstm%d%s.%s", l, bidir ? dirs[r] : "", tensors[t]);
                view_macro(v, name, bufs[t], 96);
            }
            fprintf(out, "    hm_lstm_layer(%d, HM_HIDDEN, %s, %s, %s, %s, %d, x, HM_WIDTH, %s%s, %s);\n", in, a, b, c, d,
                    r, dst, r ? " + HM_HIDDEN" : "", ld);
        }
        if (!last) fprintf(out, "    t = x;\n    x = y;\n    y = t;\n");
        in = key;
    }
    fprintf(out, "    (void)t;\n    (void)y;\n}\n\n");
}

int export_seq2seq_check(const model *m, const model_views *v, const char *name)
{
    (void)m;
    return export_check_params(name, model_view_params(v, "params"));
}

/* The model's part of a runtime; table: a benchmark table's (tokens from the problem's values, the rule a prefix of
 * one of its candidates when the model decodes in the measured space), else a convolution's. */
static int seq2seq_write(const model *m, const model_views *v, FILE *out, int table)
{
    const int S = (int)model_view_int(v, "tokens"), L = m->length;
    const int embed = (int)model_view_int(v, "embed"), hidden = (int)model_view_int(v, "hidden");
    const int attn = (int)model_view_int(v, "attn"), key = (int)model_view_int(v, "key");
    const char *decode = model_view_text(v, "decode");
    const int greedy = !strcmp(decode, "greedy"), beam = greedy ? 1 : (int)model_view_int(v, "beam");
    const data_constraint *con = !table && !strcmp(decode, "constrained") ? m->constraint : NULL;
    if (con && con->length != L) con = NULL; /* as s2s_decode: rules for another parameter list */
    const char *rules = con ? portable_rules(con->solver) : NULL;
    if (con && !rules)
        return hr_error(HR_EINVAL, "seq2seq export: no portable rules for solver '%s' (data/portable.h)", con->solver);
    /* a table model's rule: the candidates it is given (export_seq2seq_table_check: the measured space) */
    const int has_rules = table ? !strcmp(decode, "constrained") : rules != NULL;
    int vmax = 1;
    for (int j = 0; j < L; j++) vmax = m->vocab_size[j] > vmax ? m->vocab_size[j] : vmax;
    int width = (int)model_view_int(v, "width");
    if (hidden > width) width = hidden;

    fprintf(out, "/* seq2seq: %d encoder tokens, embedding %d, %d Conv1D of %d, %d %s of %d, decoder %d, attention %d;\n"
                 " * decoding %s, beam %d */\n",
            S, embed, (int)model_view_int(v, "conv_layers"), (int)model_view_int(v, "conv_channels"),
            (int)model_view_int(v, "lstm_layers"), model_view_int(v, "bidir") ? "BiLSTM" : "LSTM", hidden, hidden, attn,
            !strcmp(decode, "constrained") ? "constrained beam" : decode, beam);
    fprintf(out, "#define HM_TOKENS %d\n#define HM_EMBED %d\n#define HM_HIDDEN %d\n#define HM_ATTN %d\n#define HM_KEY %d\n#define HM_LEN %d\n"
                 "#define HM_VMAX %d\n#define HM_WIDTH %d /* widest encoder activation */\n#define HM_BEAM %d\n"
                 "#define HM_RULES %d\n#define HM_DFS_BUDGET %dL\n\n",
            S, embed, hidden, attn, key, L, vmax, width, beam, has_rules, 20000);
    if (table) fprintf(out, "#define HM_BINS %d /* bins an octave of a numeric column's token */\n\n", (int)model_view_int(v, "bins"));
    else fprintf(out, "typedef data_problem hm_tune_problem;\n\n");

    /* parameters: the nn_params block and its views */
    const nn_params *p = model_view_params(v, "params");
    fprintf(out, "/* the nn_params block (%zu floats); views by name, row-major as nn/seq.h */\n", p->n);
    export_c_floats(out, "hm_w", p->w, p->n);
    for (int i = 0; i < p->n_views; i++) {
        char name[96];
        fprintf(out, "#define %s (hm_w + %zu) /* %s (%zu) */\n", view_macro(v, p->views[i].name, name, sizeof name),
                p->views[i].offset, p->views[i].name, p->views[i].size);
    }

    /* the decoder's tensors under the short names the step uses */
    static const char *const dec[][2] = {
        {"HM_DEC_EMB", "dec.embedding"},        {"HM_DEC_W_Q", "dec.attn.w_q"},        {"HM_DEC_W_K", "dec.attn.w_k"},
        {"HM_DEC_B_K", "dec.attn.b_k"},         {"HM_DEC_V", "dec.attn.v"},            {"HM_DEC_W_IH", "dec.cell.weight_ih"},
        {"HM_DEC_W_HH", "dec.cell.weight_hh"},  {"HM_DEC_B_IH", "dec.cell.bias_ih"},   {"HM_DEC_B_HH", "dec.cell.bias_hh"},
        {"HM_DEC_W_OUT", "dec.out.weight"},     {"HM_DEC_B_OUT", "dec.out.bias"}};
    for (size_t i = 0; i < sizeof dec / sizeof dec[0]; i++) {
        char name[96];
        fprintf(out, "#define %s %s\n", dec[i][0], view_macro(v, dec[i][1], name, sizeof name));
    }

    /* encoder vocabularies */
    int *voff = malloc(((size_t)S + 1) * sizeof *voff);
    if (!voff) return hr_error(HR_ENOMEM, "out of memory exporting the seq2seq model");
    char name[64];
    voff[0] = 0;
    for (int f = 0; f < S; f++) {
        snprintf(name, sizeof name, "field%d.values", f);
        const model_view *vals = model_view_find(v, name);
        HR_ASSERT(vals);
        voff[f + 1] = voff[f] + (int)vals->n;
    }
    if (table) {
        const data_table_spec *spec = data_codec_table_spec(m->codec);
        int cat[DATA_TABLE_MAX_COLUMNS];
        HR_ASSERT(S <= DATA_TABLE_MAX_COLUMNS && S == spec->n_problem + spec->n_hardware);
        fprintf(out, "\n/* encoder tokens: the problem's values in column order, 1 for a categorical column */\n");
        for (int f = 0; f < S; f++) cat[f] = spec->problem[f].categorical;
        export_c_ints(out, "int", "hm_categorical", cat, (size_t)S);
    } else {
        fprintf(out, "\n/* encoder tokens: field f reads p->f[src] (src >= 0), direction (-1), dtype (-2) or layout (-3):");
        for (int f = 0; f < S; f++) {
            snprintf(name, sizeof name, "field%d.name", f);
            fprintf(out, " %s", model_view_text(v, name));
        }
        fprintf(out, " */\n");
        export_c_ints(out, "int", "hm_field_src", model_view_ints(v, "field_source", (size_t)S), (size_t)S);
    }
    export_c_ints(out, "int", "hm_enc_voff", voff, (size_t)S + 1);
    export_c_ints(out, "int", "hm_emb_off", model_view_ints(v, "embedding_offsets", (size_t)S), (size_t)S);
    fprintf(out, "/* sorted training values of each field, at hm_enc_voff[f] */\nstatic const int64_t hm_enc_vals[%d] = {",
            voff[S] ? voff[S] : 1);
    for (int f = 0, i = 0; f < S; f++) {
        snprintf(name, sizeof name, "field%d.values", f);
        const int64_t *vals = model_view_int64s(v, name, (size_t)(voff[f + 1] - voff[f]));
        for (int k = 0; k < voff[f + 1] - voff[f]; k++, i++)
            fprintf(out, "%s%s%lld", i ? "," : "", i % 8 ? " " : "\n    ", (long long)vals[k]);
    }
    fprintf(out, "%s};\n", voff[S] ? "\n" : "0");
    free(voff);

    /* decoder output slices and value vocabularies */
    export_c_ints(out, "int", "hm_vb", model_view_ints(v, "vb", (size_t)L), (size_t)L);
    export_c_ints(out, "int", "hm_ve", model_view_ints(v, "ve", (size_t)L), (size_t)L);
    fprintf(out, "static const int32_t *const hm_vocab[%d] = {", L);
    for (int j = 0; j < L; j++) fprintf(out, "%shm_vocab_%d", j ? ", " : "", j);
    fprintf(out, "};\n\n");

    static const char runtime[] = "export/runtime/seq2seq.h", table_runtime[] = "export/runtime/table_tune.h";
    fputs(export_source("nn/tanh_fast.h"), out);
    export_section(out, runtime, "net");
    export_section(out, runtime, "enc_index");
    export_section(out, table ? table_runtime : runtime, table ? "problem" : "token");
    write_encoder(out, v);
    if (!greedy || table) export_section(out, runtime, "softmax");
    if (greedy) {
        export_section(out, runtime, "greedy");
    } else {
        if (table)
            export_section(out, table_runtime, "valid");
        else if (rules)
            fprintf(out, "/* the solver's rules (%s) */\nstatic int hm_valid(const data_problem *p, const int32_t *v, int len)\n{\n"
                         "    return %s(p, v, len);\n}\n\n", con->solver, rules);
        else
            fprintf(out, "static int hm_valid(const data_problem *p, const int32_t *v, int len)\n{\n"
                         "    (void)p;\n    (void)v;\n    (void)len;\n    return 1;\n}\n\n");
        export_section(out, runtime, "beam");
    }
    if (table) {
        export_section(out, runtime, "score");
        fprintf(out, "\n/* values (HM_LEN) decoded for p, whose encoding keys (HM_TOKENS, HM_KEY) and kproj (HM_TOKENS, "
                     "HM_ATTN) are left\n * for hm_seq_score */\nstatic void hm_decode(const hm_tune_problem *p, float *keys, "
                     "float *kproj, int32_t *values)\n{\n"
                     "    hm_encode(p, keys);\n    hm_dec_keys(keys, kproj);\n    hm_decode_%s(p, keys, kproj, values);\n}\n",
                greedy ? "greedy" : "beam");
    } else
        fprintf(out, "\nstatic void hm_model_tune(const data_problem *p, const float *x, int32_t *values)\n{\n"
                     "    float keys[HM_TOKENS * HM_KEY], kproj[HM_TOKENS * HM_ATTN];\n    (void)x;\n"
                     "    hm_encode(p, keys);\n    hm_dec_keys(keys, kproj);\n    hm_decode_%s(p, keys, kproj, values);\n}\n",
                greedy ? "greedy" : "beam");
    return HR_OK;
}

int export_seq2seq_write(const model *m, const model_views *v, FILE *out)
{
    return seq2seq_write(m, v, out, 0);
}

int export_seq2seq_table_check(const model *m, const model_views *v, const char *name)
{
    if (m->family != &model_family_seq2seq)
        return hr_error(HR_EINVAL, "%s: a %s tune model of a benchmark table cannot be exported to C: only seq2seq is",
                        name, m->family->name);
    if (strcmp(model_view_text(v, "space"), "measured") != 0)
        return hr_error(HR_EINVAL, "%s: a seq2seq model of a benchmark table exports with space measured (it decodes "
                        "within the candidates the runtime is given); this one decodes in the %s space, whose "
                        "capability rules the runtime does not hold", name, model_view_text(v, "space"));
    if (model_view_int(v, "tokens") > DATA_TABLE_MAX_COLUMNS)
        return hr_error(HR_EINVAL, "%s: %lld problem columns, the runtime takes at most %d", name,
                        model_view_int(v, "tokens"), DATA_TABLE_MAX_COLUMNS);
    return export_check_params(name, model_view_params(v, "params"));
}

int export_seq2seq_table_write(const model *m, const model_views *v, FILE *out)
{
    return seq2seq_write(m, v, out, 1);
}
