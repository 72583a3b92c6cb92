/* The seq2seq family as C source for an exported runtime: the nn_params block as one static array
 * with a macro per named view, the encoder (embedding, Conv1D + ReLU, (Bi)LSTM) and the attention
 * decoder as plain loops, and the model's own decoding (greedy, beam, or beam constrained by the
 * solver's rules with the depth-first fallback), following models/seq2seq_decode.c step for step.
 *
 * Agreement with heurist: nn sums its products with OpenBLAS, the runtime with its own partial sums
 * (hm_dot), so pre-activations may differ in the last float bits; everything after a sum (nn_tanh_fast, the
 * softmaxes, the LSTM pointwise update, beam scores) is the same float expression in the same
 * order, and every choice (argmax, beam ranking, ties to the earlier hypothesis and token) uses the
 * same comparisons, so only a near-tie within rounding can pick differently. */
#include <stdlib.h>
#include <string.h>

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

/* Pointwise activations (nn_tanh_fast, nn_sigmoid_fast, ReLU), dot products in double, one LSTM
 * cell and layer, Conv1D, the attention decoder step. Sizes come from the HM_* macros. */
static const char net_source[] =
    "/* nn_tanh_fast (nn/seq.h): a [13/6] rational tanh on |x| <= 7.905, |error| <= 4e-7 */\n"
    "static float hm_tanh(float x)\n{\n"
    "    const float clamp = 7.90531110763549805f;\n"
    "    x = x > clamp ? clamp : (x < -clamp ? -clamp : x);\n"
    "    float x2 = x * x;\n"
    "    float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;\n"
    "    p = x2 * p + -8.60467152213735e-11f;\n"
    "    p = x2 * p + 5.12229709037114e-08f;\n"
    "    p = x2 * p + 1.48572235717979e-05f;\n"
    "    p = x2 * p + 6.37261928875436e-04f;\n"
    "    p = x2 * p + 4.89352455891786e-03f;\n"
    "    float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;\n"
    "    q = x2 * q + 2.26843463243900e-03f;\n"
    "    q = x2 * q + 4.89352518554385e-03f;\n"
    "    return x * p / q;\n}\n\n"
    "static float hm_sigmoid(float x)\n{\n    return 0.5f + 0.5f * hm_tanh(0.5f * x);\n}\n\n"
    "/* a . b: eight float partial sums (independent chains the compiler packs into SIMD registers, about\n"
    " * as accurate as BLAS's blocked float sums) added in double; twice as fast as one double chain */\n"
    "static double hm_dot(const float *a, const float *b, int n)\n{\n"
    "    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f, s5 = 0.0f, s6 = 0.0f, s7 = 0.0f;\n"
    "    int i = 0;\n"
    "    for (; i + 8 <= n; i += 8) {\n"
    "        s0 += a[i] * b[i];\n        s1 += a[i + 1] * b[i + 1];\n"
    "        s2 += a[i + 2] * b[i + 2];\n        s3 += a[i + 3] * b[i + 3];\n"
    "        s4 += a[i + 4] * b[i + 4];\n        s5 += a[i + 5] * b[i + 5];\n"
    "        s6 += a[i + 6] * b[i + 6];\n        s7 += a[i + 7] * b[i + 7];\n    }\n"
    "    double s = (((double)s0 + s4) + ((double)s1 + s5)) + (((double)s2 + s6) + ((double)s3 + s7));\n"
    "    for (; i < n; i++) s += (double)a[i] * (double)b[i];\n"
    "    return s;\n}\n\n"
    "/* LSTM cell (PyTorch gates i, f, g, o): x (In), h, c (H) or h NULL for zeros -> hn, cn (H) */\n"
    "static void hm_lstm_cell(int In, int H, const float *wih, const float *whh, const float *bih,\n"
    "                         const float *bhh, const float *x, const float *h, const float *c, float *hn, float *cn)\n{\n"
    "    float g[4 * HM_HIDDEN];\n"
    "    for (int r = 0; r < 4 * H; r++) {\n"
    "        double s = (double)(bih[r] + bhh[r]) + hm_dot(wih + (size_t)r * In, x, In);\n"
    "        if (h) s += hm_dot(whh + (size_t)r * H, h, H);\n"
    "        g[r] = (float)s;\n    }\n"
    "    for (int j = 0; j < 2 * H; j++) g[j] = hm_sigmoid(g[j]);\n"
    "    for (int j = 2 * H; j < 3 * H; j++) g[j] = hm_tanh(g[j]);\n"
    "    for (int j = 3 * H; j < 4 * H; j++) g[j] = hm_sigmoid(g[j]);\n"
    "    for (int j = 0; j < H; j++) {\n"
    "        cn[j] = g[H + j] * c[j] + g[j] * g[2 * H + j];\n"
    "        hn[j] = g[3 * H + j] * hm_tanh(cn[j]);\n    }\n}\n\n"
    "/* One LSTM direction over the HM_TOKENS tokens: x (S, ldx) -> y (S, ldy) columns [0, H) */\n"
    "static void hm_lstm_layer(int In, int H, const float *wih, const float *whh, const float *bih, const float *bhh,\n"
    "                          int reverse, const float *x, int ldx, float *y, int ldy)\n{\n"
    "    float h[HM_HIDDEN], c[HM_HIDDEN], hn[HM_HIDDEN], cn[HM_HIDDEN];\n"
    "    memset(c, 0, sizeof c);\n"
    "    for (int s = 0; s < HM_TOKENS; s++) {\n"
    "        int t = reverse ? HM_TOKENS - 1 - s : s;\n"
    "        hm_lstm_cell(In, H, wih, whh, bih, bhh, x + (size_t)t * ldx, s ? h : 0, c, hn, cn);\n"
    "        memcpy(h, hn, sizeof(float) * (size_t)H);\n"
    "        memcpy(c, cn, sizeof(float) * (size_t)H);\n"
    "        memcpy(y + (size_t)t * ldy, hn, sizeof(float) * (size_t)H);\n    }\n}\n\n"
    "/* Conv1D, kernel 3, stride 1, pad 1, then ReLU: x (S, ldx) of Ci channels -> y (S, ldy) of Co;\n"
    " * W (Co, Ci, 3) as PyTorch */\n"
    "static void hm_conv1d_relu(int Ci, int Co, const float *W, const float *b, const float *x, int ldx, float *y, int ldy)\n{\n"
    "    for (int t = 0; t < HM_TOKENS; t++)\n"
    "        for (int o = 0; o < Co; o++) {\n"
    "            double s = b[o];\n"
    "            for (int ci = 0; ci < Ci; ci++)\n"
    "                for (int j = 0; j < 3; j++) {\n"
    "                    int src = t + j - 1;\n"
    "                    if (src >= 0 && src < HM_TOKENS) s += (double)W[((size_t)o * Ci + ci) * 3 + j] * x[(size_t)src * ldx + ci];\n"
    "                }\n"
    "            float v = (float)s;\n"
    "            y[(size_t)t * ldy + o] = v > 0.0f ? v : 0.0f;\n"
    "        }\n}\n\n"
    "/* Bahdanau key projection once per problem: kproj (S, A) = keys W_k^T + b_k */\n"
    "static void hm_dec_keys(const float *keys, float *kproj)\n{\n"
    "    for (int s = 0; s < HM_TOKENS; s++)\n"
    "        for (int a = 0; a < HM_ATTN; a++)\n"
    "            kproj[s * HM_ATTN + a] = (float)((double)HM_DEC_B_K[a] + hm_dot(HM_DEC_W_K + (size_t)a * HM_KEY, keys + (size_t)s * HM_KEY, HM_KEY));\n}\n\n"
    "/* One decoder step (nn_decoder_step): ctx = attn(h, keys); (hn, cn) = cell([E[tok], ctx], h, c);\n"
    " * logits (ve - vb) = W_out[vb:ve] [hn, ctx] + b_out[vb:ve] */\n"
    "static void hm_dec_step(const float *keys, const float *kproj, const float *h, const float *c, int tok, int vb,\n"
    "                        int ve, float *hn, float *cn, float *logits)\n{\n"
    "    float q[HM_ATTN], e[HM_TOKENS], x[HM_EMBED + HM_KEY];\n"
    "    float *ctx = x + HM_EMBED;\n"
    "    for (int a = 0; a < HM_ATTN; a++) q[a] = (float)hm_dot(HM_DEC_W_Q + (size_t)a * HM_HIDDEN, h, HM_HIDDEN);\n"
    "    for (int s = 0; s < HM_TOKENS; s++) {\n"
    "        double sc = 0.0;\n"
    "        for (int a = 0; a < HM_ATTN; a++) sc += (double)hm_tanh(q[a] + kproj[s * HM_ATTN + a]) * (double)HM_DEC_V[a];\n"
    "        e[s] = (float)sc;\n    }\n"
    "    float mx = -INFINITY, sum = 0.0f;\n"
    "    for (int s = 0; s < HM_TOKENS; s++)\n        if (e[s] > mx) mx = e[s];\n"
    "    for (int s = 0; s < HM_TOKENS; s++) {\n        e[s] = expf(e[s] - mx);\n        sum += e[s];\n    }\n"
    "    float inv = sum > 0.0f ? 1.0f / sum : 0.0f;\n"
    "    memcpy(x, HM_DEC_EMB + (size_t)tok * HM_EMBED, sizeof(float) * HM_EMBED);\n"
    "    memset(ctx, 0, sizeof(float) * HM_KEY);\n"
    "    for (int s = 0; s < HM_TOKENS; s++) {\n"
    "        float ws = e[s] * inv;\n"
    "        for (int d = 0; d < HM_KEY; d++) ctx[d] += ws * keys[s * HM_KEY + d];\n    }\n"
    "    hm_lstm_cell(HM_EMBED + HM_KEY, HM_HIDDEN, HM_DEC_W_IH, HM_DEC_W_HH, HM_DEC_B_IH,\n"
    "                 HM_DEC_B_HH, x, h, c, hn, cn);\n"
    "    for (int v = vb; v < ve; v++) {\n"
    "        const float *w = HM_DEC_W_OUT + (size_t)v * (HM_HIDDEN + HM_KEY);\n"
    "        logits[v - vb] = (float)((double)HM_DEC_B_OUT[v] + hm_dot(w, hn, HM_HIDDEN) + hm_dot(w + HM_HIDDEN, ctx, HM_KEY));\n"
    "    }\n}\n\n"
    "/* encoder token f of p: 1 + index of its value in the field's sorted training values, 0 (UNK) if unseen */\n"
    "static int hm_token(const data_problem *p, int f)\n{\n"
    "    int src = hm_field_src[f];\n"
    "    int64_t v = src >= 0 ? p->f[src] : src == -1 ? p->direction : src == -2 ? p->dtype : p->layout;\n"
    "    const int64_t *a = hm_enc_vals + hm_enc_voff[f];\n"
    "    int lo = 0, hi = hm_enc_voff[f + 1] - hm_enc_voff[f];\n"
    "    int n = hi;\n"
    "    while (lo < hi) {\n        int mid = (lo + hi) / 2;\n        if (a[mid] < v) lo = mid + 1;\n        else hi = mid;\n    }\n"
    "    return lo < n && a[lo] == v ? lo + 1 : 0;\n}\n\n";

static const char greedy_source[] =
    "/* greedy: the highest logit at each position (first one on ties) */\n"
    "static void hm_decode(const data_problem *p, const float *keys, const float *kproj, int32_t *out)\n{\n"
    "    float h[HM_HIDDEN], c[HM_HIDDEN], hn[HM_HIDDEN], cn[HM_HIDDEN], z[HM_VMAX];\n"
    "    int tok = 0;\n    (void)p;\n"
    "    memset(h, 0, sizeof h);\n    memset(c, 0, sizeof c);\n"
    "    for (int j = 0; j < HM_LEN; j++) {\n"
    "        hm_dec_step(keys, kproj, h, c, j ? 1 + hm_vb[j - 1] + tok : 0, hm_vb[j], hm_ve[j], hn, cn, z);\n"
    "        tok = 0;\n"
    "        for (int v = 1; v < hm_ve[j] - hm_vb[j]; v++)\n            if (z[v] > z[tok]) tok = v;\n"
    "        out[j] = hm_vocab[j][tok];\n"
    "        memcpy(h, hn, sizeof h);\n        memcpy(c, cn, sizeof c);\n    }\n}\n";

/* s2s_beam_search + dfs_valid (models/seq2seq_decode.c), one hypothesis per row */
static const char beam_source[] =
    "static void hm_log_softmax(float *x, int V)\n{\n"
    "    float mx = x[0];\n    for (int v = 1; v < V; v++) mx = x[v] > mx ? x[v] : mx;\n"
    "    float s = 0.0f;\n    for (int v = 0; v < V; v++) s += expf(x[v] - mx);\n"
    "    float lse = mx + logf(s);\n    for (int v = 0; v < V; v++) x[v] -= lse;\n}\n\n"
    "/* Best (<= HM_BEAM) extensions of n_act hypotheses at position j, descending; ties keep the earlier\n"
    " * (hypothesis, token); with rules, only extensions whose prefix stays valid. Returns their count. */\n"
    "static int hm_beam_select(const data_problem *p, int n_act, int j, int rules, const float *score,\n"
    "                          float (*logp)[HM_VMAX], int32_t (*vals)[HM_LEN], float *cs, int *cb, int *ct)\n{\n"
    "    int n_c = 0, V = hm_ve[j] - hm_vb[j];\n"
    "    for (int b = 0; b < n_act; b++)\n"
    "        for (int v = 0; v < V; v++) {\n"
    "            float s = score[b] + logp[b][v];\n"
    "            if (n_c == HM_BEAM && !(s > cs[HM_BEAM - 1])) continue;\n"
    "            if (rules) {\n                vals[b][j] = hm_vocab[j][v];\n"
    "                if (!hm_valid(p, vals[b], j + 1)) continue;\n            }\n"
    "            int pos = n_c < HM_BEAM ? n_c++ : HM_BEAM - 1;\n"
    "            while (pos > 0 && s > cs[pos - 1]) {\n"
    "                cs[pos] = cs[pos - 1];\n                cb[pos] = cb[pos - 1];\n                ct[pos] = ct[pos - 1];\n"
    "                pos--;\n            }\n"
    "            cs[pos] = s;\n            cb[pos] = b;\n            ct[pos] = v;\n        }\n"
    "    return n_c;\n}\n\n"
    "/* First valid sequence in the model's order (highest logit first) by depth-first search with\n"
    " * backtracking; state j is the decoder state before position j. 0 when the budget runs out. */\n"
    "static int hm_dfs(const data_problem *p, const float *keys, const float *kproj, int j, int prev, int32_t *v,\n"
    "                  float (*h)[HM_HIDDEN], float (*c)[HM_HIDDEN], long *budget)\n{\n"
    "    if (j == HM_LEN) return 1;\n"
    "    if (--*budget < 0) return 0;\n"
    "    float z[HM_VMAX];\n"
    "    int V = hm_ve[j] - hm_vb[j];\n"
    "    hm_dec_step(keys, kproj, h[j], c[j], j ? 1 + hm_vb[j - 1] + prev : 0, hm_vb[j], hm_ve[j], h[j + 1], c[j + 1], z);\n"
    "    for (int tried = 0; tried < V; tried++) {\n"
    "        int best = -1;\n"
    "        for (int t = 0; t < V; t++)\n"
    "            if (z[t] != -INFINITY && (best < 0 || z[t] > z[best])) best = t;\n"
    "        if (best < 0) break;\n"
    "        z[best] = -INFINITY;\n"
    "        v[j] = hm_vocab[j][best];\n"
    "        if (!hm_valid(p, v, j + 1)) continue;\n"
    "        if (hm_dfs(p, keys, kproj, j + 1, best, v, h, c, budget)) return 1;\n"
    "        if (*budget < 0) return 0;\n    }\n"
    "    return 0;\n}\n\n"
    "/* Beam of width HM_BEAM ranked by summed log-probability. When the rules leave no extension of any\n"
    " * hypothesis, the rest is decoded without them, then the depth-first search looks for a valid\n"
    " * sequence; if it runs out of budget the unconstrained beam output stands. */\n"
    "static void hm_decode(const data_problem *p, const float *keys, const float *kproj, int32_t *out)\n{\n"
    "    float h[HM_BEAM][HM_HIDDEN], c[HM_BEAM][HM_HIDDEN], hn[HM_BEAM][HM_HIDDEN], cn[HM_BEAM][HM_HIDDEN], logp[HM_BEAM][HM_VMAX];\n"
    "    float score[HM_BEAM], cs[HM_BEAM];\n"
    "    int cb[HM_BEAM], ct[HM_BEAM], prev[HM_BEAM];\n"
    "    int32_t vals[HM_BEAM][HM_LEN], vn[HM_BEAM][HM_LEN];\n"
    "    int n_act = 1, fell = 0;\n"
    "    score[0] = 0.0f;\n    prev[0] = 0;\n"
    "    memset(h[0], 0, sizeof h[0]);\n    memset(c[0], 0, sizeof c[0]);\n"
    "    for (int j = 0; j < HM_LEN; j++) {\n"
    "        for (int b = 0; b < n_act; b++) {\n"
    "            hm_dec_step(keys, kproj, h[b], c[b], j ? 1 + hm_vb[j - 1] + prev[b] : 0, hm_vb[j], hm_ve[j], hn[b], cn[b], logp[b]);\n"
    "            hm_log_softmax(logp[b], hm_ve[j] - hm_vb[j]);\n        }\n"
    "        int n_c = hm_beam_select(p, n_act, j, HM_RULES && !fell, score, logp, vals, cs, cb, ct);\n"
    "        if (n_c == 0) {\n            fell = 1;\n"
    "            n_c = hm_beam_select(p, n_act, j, 0, score, logp, vals, cs, cb, ct);\n        }\n"
    "        for (int k = 0; k < n_c; k++) {\n"
    "            int b = cb[k];\n"
    "            memcpy(vn[k], vals[b], sizeof(int32_t) * (size_t)j);\n"
    "            vn[k][j] = hm_vocab[j][ct[k]];\n"
    "            prev[k] = ct[k];\n            score[k] = cs[k];\n"
    "            memcpy(h[k], hn[b], sizeof h[k]);\n            memcpy(c[k], cn[b], sizeof c[k]);\n        }\n"
    "        memcpy(vals, vn, sizeof(int32_t) * HM_LEN * (size_t)n_c);\n"
    "        n_act = n_c;\n    }\n"
    "    memcpy(out, vals[0], sizeof(int32_t) * HM_LEN);\n"
    "    if (fell && HM_RULES) {\n"
    "        float dh[HM_LEN + 1][HM_HIDDEN], dc[HM_LEN + 1][HM_HIDDEN];\n"
    "        int32_t v[HM_LEN];\n"
    "        long budget = HM_DFS_BUDGET;\n"
    "        memset(dh[0], 0, sizeof dh[0]);\n        memset(dc[0], 0, sizeof dc[0]);\n"
    "        if (hm_dfs(p, keys, kproj, 0, 0, v, dh, dc, &budget)) memcpy(out, v, sizeof v);\n    }\n}\n";

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

int seq2seq_model_export_c(const model *mb, FILE *out)
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

    fputs(net_source, out);
    write_encoder(out, m);
    if (ar->decode == S2S_DECODE_GREEDY) {
        fputs(greedy_source, out);
    } else {
        if (rules)
            fprintf(out, "/* the solver's rules (%s) */\nstatic int hm_valid(const data_problem *p, const int32_t *v, int len)\n{\n"
                         "    return %s(p, v, len);\n}\n\n", con->solver, rules);
        else
            fprintf(out, "static int hm_valid(const data_problem *p, const int32_t *v, int len)\n{\n"
                         "    (void)p;\n    (void)v;\n    (void)len;\n    return 1;\n}\n\n");
        fputs(beam_source, out);
    }
    fprintf(out, "\nstatic void hm_model_tune(const data_problem *p, const float *x, int32_t *values)\n{\n"
                 "    float keys[HM_TOKENS * HM_KEY], kproj[HM_TOKENS * HM_ATTN];\n    (void)x;\n"
                 "    hm_encode(p, keys);\n    hm_dec_keys(keys, kproj);\n    hm_decode(p, keys, kproj, values);\n}\n");
    return HR_OK;
}
