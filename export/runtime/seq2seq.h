/* The seq2seq runtime: dot products, the LSTM cell and layer, Conv1D, the attention decoder step, the
 * encoder's tokens of a convolution, and the model's decoding (greedy, or beam with the rules and the depth-first
 * fallback), following models/seq2seq_decode.c step for step.
 *
 * Copied into exported seq2seq runtimes by section, after nn/tanh_fast.h (export/seq2seq.c writes the
 * parameter block, the sizes HM_TOKENS, HM_EMBED, HM_HIDDEN, HM_ATTN, HM_KEY, HM_LEN, HM_VMAX, HM_BEAM,
 * HM_RULES, HM_DFS_BUDGET, the decoder's views HM_DEC_*, the token tables hm_enc_voff, hm_enc_vals, the
 * vocabularies hm_vb, hm_ve, hm_vocab and the rules hm_valid) and compiled as it is by
 * tests/test_export_runtime.c, which checks it against nn/'s LSTM, Conv1D and decoder. The problem the decoding
 * reads is an hm_tune_problem: a convolution (data_problem, whose tokens the "token" section reads through
 * hm_field_src), or a benchmark table's problem (export/runtime/table_tune.h, which has its own hm_token and
 * hm_valid).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "data/portable.h"
#include "nn/tanh_fast.h"

typedef data_problem hm_tune_problem;

/* @section net */
/* a . b: eight float partial sums (independent chains the compiler packs into SIMD registers, about
 * as accurate as BLAS's blocked float sums) added in double; twice as fast as one double chain */
static double hm_dot(const float *a, const float *b, int n)
{
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f, s5 = 0.0f, s6 = 0.0f, s7 = 0.0f;
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
        s4 += a[i + 4] * b[i + 4];
        s5 += a[i + 5] * b[i + 5];
        s6 += a[i + 6] * b[i + 6];
        s7 += a[i + 7] * b[i + 7];
    }
    double s = (((double)s0 + s4) + ((double)s1 + s5)) + (((double)s2 + s6) + ((double)s3 + s7));
    for (; i < n; i++) s += (double)a[i] * (double)b[i];
    return s;
}

/* LSTM cell (PyTorch gates i, f, g, o): x (In), h, c (H) or h NULL for zeros -> hn, cn (H) */
static void hm_lstm_cell(int In, int H, const float *wih, const float *whh, const float *bih,
                         const float *bhh, const float *x, const float *h, const float *c, float *hn, float *cn)
{
    float g[4 * HM_HIDDEN];
    for (int r = 0; r < 4 * H; r++) {
        double s = (double)(bih[r] + bhh[r]) + hm_dot(wih + (size_t)r * In, x, In);
        if (h) s += hm_dot(whh + (size_t)r * H, h, H);
        g[r] = (float)s;
    }
    for (int j = 0; j < 2 * H; j++) g[j] = nn_sigmoid_fast(g[j]);
    for (int j = 2 * H; j < 3 * H; j++) g[j] = nn_tanh_fast(g[j]);
    for (int j = 3 * H; j < 4 * H; j++) g[j] = nn_sigmoid_fast(g[j]);
    for (int j = 0; j < H; j++) {
        cn[j] = g[H + j] * c[j] + g[j] * g[2 * H + j];
        hn[j] = g[3 * H + j] * nn_tanh_fast(cn[j]);
    }
}

/* One LSTM direction over the HM_TOKENS tokens: x (S, ldx) -> y (S, ldy) columns [0, H) */
static void hm_lstm_layer(int In, int H, const float *wih, const float *whh, const float *bih, const float *bhh,
                          int reverse, const float *x, int ldx, float *y, int ldy)
{
    float h[HM_HIDDEN], c[HM_HIDDEN], hn[HM_HIDDEN], cn[HM_HIDDEN];
    memset(c, 0, sizeof c);
    for (int s = 0; s < HM_TOKENS; s++) {
        int t = reverse ? HM_TOKENS - 1 - s : s;
        hm_lstm_cell(In, H, wih, whh, bih, bhh, x + (size_t)t * ldx, s ? h : 0, c, hn, cn);
        memcpy(h, hn, sizeof(float) * (size_t)H);
        memcpy(c, cn, sizeof(float) * (size_t)H);
        memcpy(y + (size_t)t * ldy, hn, sizeof(float) * (size_t)H);
    }
}

/* Conv1D, kernel 3, stride 1, pad 1, then ReLU: x (S, ldx) of Ci channels -> y (S, ldy) of Co;
 * W (Co, Ci, 3) as PyTorch */
static void hm_conv1d_relu(int Ci, int Co, const float *W, const float *b, const float *x, int ldx, float *y, int ldy)
{
    for (int t = 0; t < HM_TOKENS; t++)
        for (int o = 0; o < Co; o++) {
            double s = b[o];
            for (int ci = 0; ci < Ci; ci++)
                for (int j = 0; j < 3; j++) {
                    int src = t + j - 1;
                    if (src >= 0 && src < HM_TOKENS) s += (double)W[((size_t)o * Ci + ci) * 3 + j] * x[(size_t)src * ldx + ci];
                }
            float v = (float)s;
            y[(size_t)t * ldy + o] = v > 0.0f ? v : 0.0f;
        }
}

/* Bahdanau key projection once per problem: kproj (S, A) = keys W_k^T + b_k */
static void hm_dec_keys(const float *keys, float *kproj)
{
    for (int s = 0; s < HM_TOKENS; s++)
        for (int a = 0; a < HM_ATTN; a++)
            kproj[s * HM_ATTN + a] = (float)((double)HM_DEC_B_K[a] + hm_dot(HM_DEC_W_K + (size_t)a * HM_KEY, keys + (size_t)s * HM_KEY, HM_KEY));
}

/* One decoder step (nn_decoder_step): ctx = attn(h, keys); (hn, cn) = cell([E[tok], ctx], h, c);
 * logits (ve - vb) = W_out[vb:ve] [hn, ctx] + b_out[vb:ve] */
static void hm_dec_step(const float *keys, const float *kproj, const float *h, const float *c, int tok, int vb,
                        int ve, float *hn, float *cn, float *logits)
{
    float q[HM_ATTN], e[HM_TOKENS], x[HM_EMBED + HM_KEY];
    float *ctx = x + HM_EMBED;
    for (int a = 0; a < HM_ATTN; a++) q[a] = (float)hm_dot(HM_DEC_W_Q + (size_t)a * HM_HIDDEN, h, HM_HIDDEN);
    for (int s = 0; s < HM_TOKENS; s++) {
        double sc = 0.0;
        for (int a = 0; a < HM_ATTN; a++) sc += (double)nn_tanh_fast(q[a] + kproj[s * HM_ATTN + a]) * (double)HM_DEC_V[a];
        e[s] = (float)sc;
    }
    float mx = -INFINITY, sum = 0.0f;
    for (int s = 0; s < HM_TOKENS; s++)
        if (e[s] > mx) mx = e[s];
    for (int s = 0; s < HM_TOKENS; s++) {
        e[s] = expf(e[s] - mx);
        sum += e[s];
    }
    float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    memcpy(x, HM_DEC_EMB + (size_t)tok * HM_EMBED, sizeof(float) * HM_EMBED);
    memset(ctx, 0, sizeof(float) * HM_KEY);
    for (int s = 0; s < HM_TOKENS; s++) {
        float ws = e[s] * inv;
        for (int d = 0; d < HM_KEY; d++) ctx[d] += ws * keys[s * HM_KEY + d];
    }
    hm_lstm_cell(HM_EMBED + HM_KEY, HM_HIDDEN, HM_DEC_W_IH, HM_DEC_W_HH, HM_DEC_B_IH,
                 HM_DEC_B_HH, x, h, c, hn, cn);
    for (int v = vb; v < ve; v++) {
        const float *w = HM_DEC_W_OUT + (size_t)v * (HM_HIDDEN + HM_KEY);
        logits[v - vb] = (float)((double)HM_DEC_B_OUT[v] + hm_dot(w, hn, HM_HIDDEN) + hm_dot(w + HM_HIDDEN, ctx, HM_KEY));
    }
}

/* @section enc_index */
/* encoder field f's token of the value v: 1 + index of v in the field's sorted training values, 0 (UNK) if unseen */
static int hm_enc_index(int f, int64_t v)
{
    const int64_t *a = hm_enc_vals + hm_enc_voff[f];
    int lo = 0, hi = hm_enc_voff[f + 1] - hm_enc_voff[f];
    int n = hi;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && a[lo] == v ? lo + 1 : 0;
}

/* @section token */
/* encoder token f of p: its value's (hm_enc_index) */
static int hm_token(const hm_tune_problem *p, int f)
{
    int src = hm_field_src[f];
    return hm_enc_index(f, src >= 0 ? p->f[src] : src == -1 ? p->direction : src == -2 ? p->dtype : p->layout);
}

/* @section greedy */
/* greedy: the highest logit at each position (first one on ties) */
static void hm_decode_greedy(const hm_tune_problem *p, const float *keys, const float *kproj, int32_t *out)
{
    float h[HM_HIDDEN], c[HM_HIDDEN], hn[HM_HIDDEN], cn[HM_HIDDEN], z[HM_VMAX];
    int tok = 0;
    (void)p;
    memset(h, 0, sizeof h);
    memset(c, 0, sizeof c);
    for (int j = 0; j < HM_LEN; j++) {
        hm_dec_step(keys, kproj, h, c, j ? 1 + hm_vb[j - 1] + tok : 0, hm_vb[j], hm_ve[j], hn, cn, z);
        tok = 0;
        for (int v = 1; v < hm_ve[j] - hm_vb[j]; v++)
            if (z[v] > z[tok]) tok = v;
        out[j] = hm_vocab[j][tok];
        memcpy(h, hn, sizeof h);
        memcpy(c, cn, sizeof c);
    }
}

/* @section softmax */
/* x (V) -= log sum exp x: the log-probabilities of a position's values, as the beam and the score sum them */
static void hm_log_softmax(float *x, int V)
{
    float mx = x[0];
    for (int v = 1; v < V; v++) mx = x[v] > mx ? x[v] : mx;
    float s = 0.0f;
    for (int v = 0; v < V; v++) s += expf(x[v] - mx);
    float lse = mx + logf(s);
    for (int v = 0; v < V; v++) x[v] -= lse;
}

/* @section beam */

/* Best (<= HM_BEAM) extensions of n_act hypotheses at position j, descending; ties keep the earlier
 * (hypothesis, token); with rules, only extensions whose prefix stays valid. Returns their count. */
static int hm_beam_select(const hm_tune_problem *p, int n_act, int j, int rules, const float *score,
                          float (*logp)[HM_VMAX], int32_t (*vals)[HM_LEN], float *cs, int *cb, int *ct)
{
    int n_c = 0, V = hm_ve[j] - hm_vb[j];
    for (int b = 0; b < n_act; b++)
        for (int v = 0; v < V; v++) {
            float s = score[b] + logp[b][v];
            if (n_c == HM_BEAM && !(s > cs[HM_BEAM - 1])) continue;
            if (rules) {
                vals[b][j] = hm_vocab[j][v];
                if (!hm_valid(p, vals[b], j + 1)) continue;
            }
            int pos = n_c < HM_BEAM ? n_c++ : HM_BEAM - 1;
            while (pos > 0 && s > cs[pos - 1]) {
                cs[pos] = cs[pos - 1];
                cb[pos] = cb[pos - 1];
                ct[pos] = ct[pos - 1];
                pos--;
            }
            cs[pos] = s;
            cb[pos] = b;
            ct[pos] = v;
        }
    return n_c;
}

/* First valid sequence in the model's order (highest logit first) by depth-first search with
 * backtracking; state j is the decoder state before position j. 0 when the budget runs out. */
static int hm_dfs(const hm_tune_problem *p, const float *keys, const float *kproj, int j, int prev, int32_t *v,
                  float (*h)[HM_HIDDEN], float (*c)[HM_HIDDEN], long *budget)
{
    if (j == HM_LEN) return 1;
    if (--*budget < 0) return 0;
    float z[HM_VMAX];
    int V = hm_ve[j] - hm_vb[j];
    hm_dec_step(keys, kproj, h[j], c[j], j ? 1 + hm_vb[j - 1] + prev : 0, hm_vb[j], hm_ve[j], h[j + 1], c[j + 1], z);
    for (int tried = 0; tried < V; tried++) {
        int best = -1;
        for (int t = 0; t < V; t++)
            if (z[t] != -INFINITY && (best < 0 || z[t] > z[best])) best = t;
        if (best < 0) break;
        z[best] = -INFINITY;
        v[j] = hm_vocab[j][best];
        if (!hm_valid(p, v, j + 1)) continue;
        if (hm_dfs(p, keys, kproj, j + 1, best, v, h, c, budget)) return 1;
        if (*budget < 0) return 0;
    }
    return 0;
}

/* Beam of width HM_BEAM ranked by summed log-probability. When the rules leave no extension of any
 * hypothesis, the rest is decoded without them, then the depth-first search looks for a valid
 * sequence; if it runs out of budget the unconstrained beam output stands. */
static void hm_decode_beam(const hm_tune_problem *p, const float *keys, const float *kproj, int32_t *out)
{
    float h[HM_BEAM][HM_HIDDEN], c[HM_BEAM][HM_HIDDEN], hn[HM_BEAM][HM_HIDDEN], cn[HM_BEAM][HM_HIDDEN], logp[HM_BEAM][HM_VMAX];
    float score[HM_BEAM], cs[HM_BEAM];
    int cb[HM_BEAM], ct[HM_BEAM], prev[HM_BEAM];
    int32_t vals[HM_BEAM][HM_LEN], vn[HM_BEAM][HM_LEN];
    int n_act = 1, fell = 0;
    score[0] = 0.0f;
    prev[0] = 0;
    memset(h[0], 0, sizeof h[0]);
    memset(c[0], 0, sizeof c[0]);
    for (int j = 0; j < HM_LEN; j++) {
        for (int b = 0; b < n_act; b++) {
            hm_dec_step(keys, kproj, h[b], c[b], j ? 1 + hm_vb[j - 1] + prev[b] : 0, hm_vb[j], hm_ve[j], hn[b], cn[b], logp[b]);
            hm_log_softmax(logp[b], hm_ve[j] - hm_vb[j]);
        }
        int n_c = hm_beam_select(p, n_act, j, HM_RULES && !fell, score, logp, vals, cs, cb, ct);
        if (n_c == 0) {
            fell = 1;
            n_c = hm_beam_select(p, n_act, j, 0, score, logp, vals, cs, cb, ct);
        }
        for (int k = 0; k < n_c; k++) {
            int b = cb[k];
            memcpy(vn[k], vals[b], sizeof(int32_t) * (size_t)j);
            vn[k][j] = hm_vocab[j][ct[k]];
            prev[k] = ct[k];
            score[k] = cs[k];
            memcpy(h[k], hn[b], sizeof h[k]);
            memcpy(c[k], cn[b], sizeof c[k]);
        }
        memcpy(vals, vn, sizeof(int32_t) * HM_LEN * (size_t)n_c);
        n_act = n_c;
    }
    memcpy(out, vals[0], sizeof(int32_t) * HM_LEN);
    if (fell && HM_RULES) {
        float dh[HM_LEN + 1][HM_HIDDEN], dc[HM_LEN + 1][HM_HIDDEN];
        int32_t v[HM_LEN];
        long budget = HM_DFS_BUDGET;
        memset(dh[0], 0, sizeof dh[0]);
        memset(dc[0], 0, sizeof dc[0]);
        if (hm_dfs(p, keys, kproj, 0, 0, v, dh, dc, &budget)) memcpy(out, v, sizeof v);
    }
}

/* @section score */
/* The model's log-probability of the sequence v (HM_LEN) for the encoded problem (keys, kproj): the log-softmax of
 * each value given the ones before it, summed in order as the beam sums a hypothesis's (models/seq2seq_decode.c,
 * s2s_score); -INFINITY when a value is none the model writes at its position. */
static float hm_seq_score(const float *keys, const float *kproj, const int32_t *v)
{
    float h[HM_HIDDEN], c[HM_HIDDEN], hn[HM_HIDDEN], cn[HM_HIDDEN], z[HM_VMAX];
    float s = 0.0f;
    memset(h, 0, sizeof h);
    memset(c, 0, sizeof c);
    for (int j = 0, prev = 0; j < HM_LEN; j++) {
        int V = hm_ve[j] - hm_vb[j], t = 0;
        while (t < V && hm_vocab[j][t] != v[j]) t++;
        if (t == V) return -INFINITY;
        hm_dec_step(keys, kproj, h, c, j ? 1 + hm_vb[j - 1] + prev : 0, hm_vb[j], hm_ve[j], hn, cn, z);
        hm_log_softmax(z, V);
        s += z[t];
        memcpy(h, hn, sizeof h);
        memcpy(c, cn, sizeof c);
        prev = t;
    }
    return s;
}
