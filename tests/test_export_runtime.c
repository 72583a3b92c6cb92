/* The exported runtime's kernels (the headers of export/runtime/) compiled as they are, each checked against the
 * library's own op on random inputs: the API's key parser and features, gbdt's tree traversal, the reformer's sparse products and heads,
 * the transformer's LayerNorm and softmax, seq2seq's dot, LSTM, Conv1D, tokens, decoder step and
 * decodings. (The solver's rules in the beam run inside the whole-model agreement tests of test_export_c.c.) */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "data/data.h"
#include "data/portable.h"
#include "gbdt/gbdt.h"
#include "nn/nn.h"
#include "nn/seq.h"

/* the sizes and tables an exported runtime defines before the kernels */
#define HM_Q 32
#define HM_K 7
#define HM_BETA 0.7f
#define HM_LOG_K 1.9459101090932196
#define HM_T 6
#define HM_D 12
#define HM_LN_EPS 1.00000001e-05f
#define HM_TOKENS 5
#define HM_EMBED 4
#define HM_HIDDEN 8
#define HM_ATTN 4
#define HM_KEY 16
#define HM_LEN 2
#define HM_VMAX 3
#define HM_BEAM 2
#define HM_RULES 0
#define HM_DFS_BUDGET 100L
/* the decoder's views point into a decoder the test lays out (seq2seq_decoder_step_and_greedy_match_nn) */
static nn_decoder dec;
static const float *dec_w;
#define HM_DEC_EMB (dec_w + dec.emb)
#define HM_DEC_W_Q (dec_w + dec.att.w_q)
#define HM_DEC_W_K (dec_w + dec.att.w_k)
#define HM_DEC_B_K (dec_w + dec.att.b_k)
#define HM_DEC_V (dec_w + dec.att.v)
#define HM_DEC_W_IH (dec_w + dec.cell.w_ih)
#define HM_DEC_W_HH (dec_w + dec.cell.w_hh)
#define HM_DEC_B_IH (dec_w + dec.cell.b_ih)
#define HM_DEC_B_HH (dec_w + dec.cell.b_hh)
#define HM_DEC_W_OUT (dec_w + dec.w_out)
#define HM_DEC_B_OUT (dec_w + dec.b_out)
/* encoder tokens: fields in_c, in_d, in_h, direction, dtype with their sorted training values */
static const int hm_field_src[HM_TOKENS] = {DATA_FIELD_IN_C, DATA_FIELD_IN_D, DATA_FIELD_IN_H, -1, -2};
static const int hm_enc_voff[HM_TOKENS + 1] = {0, 2, 3, 5, 6, 8};
static const int64_t hm_enc_vals[8] = {1, 64, 3, 1, 7, 1, 0, 1};
static const int hm_vb[HM_LEN] = {0, 3}, hm_ve[HM_LEN] = {3, 6};
static const int32_t hm_vocab_0[3] = {1, 2, 4}, hm_vocab_1[3] = {8, 16, 32};
static const int32_t *const hm_vocab[HM_LEN] = {hm_vocab_0, hm_vocab_1};

/* the family part an exported runtime defines before its API: the test's scores are the first features,
 * its parameters the next ones, and the features it was given are kept for the test to read */
#define HM_N_KERNELS 9
#define HM_LENGTH 3
/* the strict class refuses kernels 0 to 5, the others none (an exported runtime writes them from the kernels' names) */
static const unsigned char hm_refused[DATA_PRECISION_COUNT][HM_N_KERNELS] = {{1, 1, 1, 1, 1, 1, 0, 0, 0}};
static float last_x[DATA_N_FEATURES];
static void hm_model_scores(const data_problem *p, const float *x, float *s)
{
    (void)p;
    memcpy(last_x, x, sizeof last_x);
    for (int k = 0; k < HM_N_KERNELS; k++) s[k] = x[k];
}
static void hm_model_tune(const data_problem *p, const float *x, int32_t *v)
{
    (void)p;
    memcpy(last_x, x, sizeof last_x);
    for (int j = 0; j < HM_LENGTH; j++) v[j] = (int32_t)x[HM_N_KERNELS + j];
}

/* an exported guarded model writes these before the API's guard section */
#define HM_GUARD_TOP 2
#define HM_GUARD_MARGIN 0.5f
#include "export/runtime/api.h"
#include "export/runtime/gbdt.h"
#include "export/runtime/reformer.h"
#include "export/runtime/transformer.h"
/* the rules the beam consults; an exported runtime writes the solver's */
static int hm_valid(const data_problem *p, const int32_t *v, int len)
{
    (void)p;
    (void)v;
    (void)len;
    return 1;
}
#include "export/runtime/seq2seq.h"

static void fill_uniform(hr_rng *rng, float *v, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) v[i] = lo + (hi - lo) * hr_rng_uniform(rng);
}

static void assert_close(const float *got, const float *want, size_t n, float tol, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i])), "%s[%zu]: %.9g vs %.9g", what, i,
                  (double)got[i], (double)want[i]);
}

/* Keys through the runtime's parser and features against data/'s: the same problem, the same features. */
Test(export_runtime, api_parses_keys_and_computes_features_as_data)
{
    static const char *const keys[] = {
        "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F",
        "3-224-224-7x7-64-112-112-16-3x3-2x2-1x1-1-NHWC-FP16-B",
        "1-1-1-1-1x4x4-512-1-4-4-128-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-W",
        "256-14-14-3x3-256-14-14-8-1x1-1x1-1x1-0-NCHW-NCHW-NCHW-BF16-F_g32",
        "512-7-7-1x1-2048-7-7-64-0x0-1x1-1x1-0-NCHW-FP32-F=ConvOclDirectFwd1x1:1.2,0.3",
        "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-XQ9-F",
    };
    cr_assert_eq(data_features_count(), DATA_N_FEATURES);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        data_problem want, got;
        const char *why, *eq = strchr(keys[i], '=');
        cr_assert_eq(data_key_parse(keys[i], eq ? (size_t)(eq - keys[i]) : strlen(keys[i]), &want, &why), HR_OK, "%s", keys[i]);
        cr_assert_eq(hm_key_parse(keys[i], &got), 0, "%s", keys[i]);
        long long fields[DATA_FIELD_COUNT];
        for (int f = 0; f < DATA_FIELD_COUNT; f++) {
            cr_assert_eq(got.f[f], want.f[f], "%s field %d", keys[i], f);
            fields[f] = want.f[f];
        }
        cr_assert(got.layout == want.layout && got.dtype == want.dtype && got.direction == want.direction, "%s", keys[i]);
        float x[DATA_N_FEATURES], s[HM_N_KERNELS];
        data_features_compute(&want, x);
        hm_problem(&got, fields, want.layout, want.dtype, want.direction);
        int best = hm_select(&got, s);
        cr_assert_eq(memcmp(last_x, x, sizeof x), 0, "%s: features differ", keys[i]);
        for (int k = 0; k < HM_N_KERNELS; k++) {
            cr_assert_eq(s[k], x[k]);
            cr_assert_leq(s[k], s[best]);
        }
        cr_assert_eq(hm_select(&got, NULL), best);
        int v[HM_LENGTH];
        hm_tune(&got, v);
        for (int j = 0; j < HM_LENGTH; j++) cr_assert_eq(v[j], (int)x[HM_N_KERNELS + j]);
    }
    /* a strict FP32 key never picks a kernel its class refuses: its scores are -INFINITY */
    data_problem sp;
    cr_assert_eq(hm_key_parse("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F_strict", &sp), 0);
    cr_assert_eq(sp.precision, DATA_PRECISION_STRICT);
    float ss[HM_N_KERNELS];
    int pick = hm_select(&sp, ss);
    cr_assert_eq(pick, 7, "the largest allowed score: kernel 7 (out_c 256), not kernel 0 (in_c 64)");
    for (int k = 0; k < 6; k++) cr_assert(isinf(ss[k]) && ss[k] < 0);
    cr_assert_eq(hm_select(&sp, NULL), pick);
    /* the guard: the model picks only among the vendor's first HM_GUARD_TOP kernels, and leaves the vendor's first
     * pick only for a score HM_GUARD_MARGIN above it */
    data_problem tp;
    cr_assert_eq(hm_key_parse("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F", &tp), 0);
    float ts[HM_N_KERNELS];
    int own = hm_select(&tp, ts);
    int low = own == 0 ? 1 : 0, mid = -1;
    for (int k = 0; k < HM_N_KERNELS; k++)
        if (k != own && ts[k] < ts[low]) low = k;
    for (int k = 0; k < HM_N_KERNELS; k++)
        if (k != own && k != low && ts[own] - ts[k] > 0 && ts[own] - ts[k] < HM_GUARD_MARGIN) mid = k;
    cr_assert_gt(ts[own] - ts[low], HM_GUARD_MARGIN, "the fixture's scores spread past the margin");
    int far[2] = {low, own};
    cr_assert_eq(hm_select_vendor(&tp, far, 2, NULL), own, "a margin past the guard's: the model's pick");
    int outside[3] = {low, low == 0 ? 1 : 0, own};
    if (outside[1] == own) outside[1] = 2;
    cr_assert_eq(hm_select_vendor(&tp, outside, 3, NULL), outside[0] == own ? own : (ts[outside[1]] - ts[outside[0]]
                 >= HM_GUARD_MARGIN ? outside[1] : outside[0]), "only the vendor's first two are candidates");
    if (mid >= 0) {
        int near[2] = {mid, own};
        cr_assert_eq(hm_select_vendor(&tp, near, 2, NULL), mid, "within the margin: the vendor's pick");
    }
    data_problem p;
    cr_assert_eq(hm_key_parse("64-56-56-1x1-256", &p), -1);
    cr_assert_eq(hm_key_parse("64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-Q", &p), -1);
}

Test(export_runtime, gbdt_traversal_matches_gbdt_tree_predict_leaf)
{
    /* node 0: x0 <= 0.5 (NaN goes left); node 1: categorical x1 in {0, 1, 3}; node 2: x2 <= -0.25 with
     * |x2| <= 1e-35 missing, going right */
    int split_feature[3] = {0, 1, 2}, left[3] = {1, ~0, ~2}, right[3] = {2, ~1, ~3}, cb[2] = {0, 1};
    double threshold[3] = {0.5, 0, -0.25}, leaf_value[4] = {1, 2, 3, 4};
    uint8_t decision_type[3] = {(2u << 2) | 2u, 1u, 1u << 2};
    uint32_t cw[1] = {0xBu};
    gbdt_tree tree = {.num_leaves = 4, .num_cat = 1, .split_feature = split_feature, .threshold = threshold,
                      .decision_type = decision_type, .left_child = left, .right_child = right,
                      .leaf_value = leaf_value, .cat_boundaries = cb, .cat_threshold = cw};
    short feat[3] = {0, 1, 2};
    unsigned char dt[3] = {decision_type[0], decision_type[1], decision_type[2]};
    int cwi[1] = {(int)cw[0]};
    const hm_trees t = {feat, dt, left, right, threshold, cb, cwi};
    hr_rng rng;
    hr_rng_seed(&rng, 1);
    int seen[4] = {0};
    for (int i = 0; i < 2000; i++) {
        float x[3] = {hr_rng_uniform(&rng), (float)hr_rng_below(&rng, 6) - 1.0f, hr_rng_uniform(&rng) - 0.5f};
        if (i % 7 == 0) x[0] = NAN;
        if (i % 11 == 0) x[1] = NAN;
        if (i % 13 == 0) x[2] = 0.0f;
        const int want = gbdt_tree_predict_leaf(&tree, x);
        cr_assert_eq(hm_tree_leaf(&t, x), want, "row %d: %g %g %g", i, (double)x[0], (double)x[1], (double)x[2]);
        seen[want]++;
    }
    for (int l = 0; l < 4; l++) cr_assert_gt(seen[l], 0, "leaf %d never reached", l);
    int off[2] = {0, 3};
    cr_assert_eq(hm_node_count(off, 0), 3);
}

Test(export_runtime, reformer_sparse_product_matches_nn_linear)
{
    enum { ROWS = 64, COLS = 24 };
    nn_params p;
    nn_linear l;
    nn_params_init(&p);
    nn_linear_layout(&l, &p, "l", COLS, ROWS);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    hr_rng rng;
    hr_rng_seed(&rng, 2);
    nn_linear_reset(&l, &p, &rng);
    float wt[COLS * ROWS], x[COLS], y[ROWS], want[ROWS];
    for (int o = 0; o < ROWS; o++)
        for (int i = 0; i < COLS; i++) wt[i * ROWS + o] = p.w[l.w + (size_t)o * COLS + i];
    for (int rep = 0; rep < 20; rep++) {
        fill_uniform(&rng, x, COLS, -1.0f, 1.0f);
        int nz[COLS], n = 0;
        for (int i = 0; i < COLS; i++) {
            if (hr_rng_uniform(&rng) < 0.5f) x[i] = 0.0f;
            nz[n] = i;
            n += x[i] != 0.0f;
        }
        hm_matvec(ROWS, n, nz, x, wt, p.w + l.b, y);
        nn_linear_forward(&l, &p, x, want, 1);
        assert_close(y, want, ROWS, 1e-5f, "matvec");
        int pos[ROWS];
        const int m = hm_relu_nonzero(ROWS, y, pos);
        int k = 0;
        for (int o = 0; o < ROWS; o++)
            if (y[o] > 0.0f) {
                cr_assert_lt(k, m);
                cr_assert_eq(pos[k++], o);
            }
        cr_assert_eq(k, m);
    }
    nn_params_free(&p);
}

Test(export_runtime, reformer_input_and_heads_match_the_library)
{
    hr_rng rng;
    hr_rng_seed(&rng, 3);
    for (int i = 0; i < 5000; i++) {
        const float v = (hr_rng_uniform(&rng) - 0.5f) * powf(10.0f, (float)hr_rng_below(&rng, 8));
        const float want = v >= 0.0f ? log2f(1.0f + v) : -log2f(1.0f - v); /* models/reformer_input.c's slog */
        cr_assert(fabsf(hm_slog(v) - want) <= 2.5e-7f * fabsf(want), "slog(%g): %.9g vs %.9g", (double)v,
                  (double)hm_slog(v), (double)want);
        cr_assert(fabsf(hm_log_sigmoid(v) - nn_log_sigmoid(v)) <= 1e-6f * (1.0f + fabsf(v)), "log_sigmoid(%g)", (double)v);
        const float t = (v - -1.0f) / (2.0f - -1.0f);
        cr_assert_eq(hm_ple(v, -1.0f, 2.0f), t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t);
    }
    cr_assert(isinf(hm_slog(INFINITY)) && isnan(hm_slog(NAN)));
    for (int rep = 0; rep < 200; rep++) {
        float h[2 * HM_K], s[HM_K], want[HM_K];
        fill_uniform(&rng, h, 2 * HM_K, -4.0f, 4.0f);
        if (rep % 3 == 0) h[HM_K + 1] = h[HM_K + 2] = -0.0f;
        double lse = 0;
        for (int k = 0; k < HM_K; k++) lse += exp((double)h[k]);
        lse = log(lse);
        /* product */
        for (int k = 0; k < HM_K; k++) want[k] = (float)(h[k] - lse) + HM_BETA * nn_log_sigmoid(h[HM_K + k]);
        hm_combine_product(h, s);
        assert_close(s, want, HM_K, 1e-5f, "product");
        int best = 0;
        for (int k = 1; k < HM_K; k++) best = s[k] > s[best] ? k : best;
        const int c = hm_choose_product(h);
        cr_assert(c == -1 || c == best, "choose_product %d, argmax %d", c, best);
        /* mask */
        for (int k = 0; k < HM_K; k++) want[k] = (float)(h[k] - lse) + (h[HM_K + k] < 0.0f ? -1000.0f : 0.0f);
        hm_combine_mask(h, s);
        assert_close(s, want, HM_K, 1e-5f, "mask");
        best = 0;
        for (int k = 1; k < HM_K; k++) best = s[k] > s[best] ? k : best;
        const int cm = hm_choose_mask(h);
        cr_assert(cm == -1 || cm == best, "choose_mask %d, argmax %d", cm, best);
        /* head */
        for (int k = 0; k < HM_K; k++) want[k] = nn_log_sigmoid(h[HM_K + k]);
        hm_combine_head(h, s);
        assert_close(s, want, HM_K, 1e-6f, "head");
    }
    const float ties[HM_K] = {1, 3, 2, 3, 0, -1, 3};
    cr_assert_eq(hm_max(ties, HM_K), 3.0f);
}

Test(export_runtime, transformer_layernorm_and_softmax_match_nn)
{
    nn_params p;
    nn_layernorm ln;
    nn_params_init(&p);
    nn_layernorm_layout(&ln, &p, "ln", HM_D);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    hr_rng rng;
    hr_rng_seed(&rng, 4);
    fill_uniform(&rng, p.w, p.n, -1.0f, 1.5f);
    cr_assert_eq(ln.eps, HM_LN_EPS);
    float x[HM_T * HM_D], y[HM_T * HM_D], want[HM_T * HM_D];
    fill_uniform(&rng, x, HM_T * HM_D, -3.0f, 3.0f);
    hm_layernorm(x, p.w + ln.gamma, p.w + ln.beta, y);
    nn_layernorm_forward(&ln, &p, x, want, NULL, NULL, HM_T);
    assert_close(y, want, HM_T * HM_D, 1e-5f, "layernorm");
    /* pt (key j, query i): each column a softmax over the keys */
    float pt[HM_T * HM_T], sm[HM_T * HM_T];
    fill_uniform(&rng, pt, HM_T * HM_T, -6.0f, 6.0f);
    for (int i = 0; i < HM_T; i++) {
        double sum = 0;
        for (int j = 0; j < HM_T; j++) sum += exp((double)pt[j * HM_T + i]);
        for (int j = 0; j < HM_T; j++) sm[j * HM_T + i] = (float)(exp((double)pt[j * HM_T + i]) / sum);
    }
    hm_softmax_keys(pt);
    assert_close(pt, sm, HM_T * HM_T, 1e-6f, "softmax");
    nn_params_free(&p);
}

Test(export_runtime, seq2seq_lstm_conv_and_dot_match_nn)
{
    enum { IN = 6 };
    nn_params p;
    nn_lstm l;
    nn_conv1d cv;
    nn_params_init(&p);
    nn_lstm_layout(&l, &p, "lstm", IN, HM_HIDDEN);
    nn_conv1d_layout(&cv, &p, "conv", IN, HM_HIDDEN, 3, 1, 1);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    hr_rng rng;
    hr_rng_seed(&rng, 5);
    nn_lstm_reset(&l, &p, &rng);
    nn_conv1d_reset(&cv, &p, &rng);
    float x[HM_TOKENS * IN], xr[HM_TOKENS * IN], y[HM_TOKENS * HM_HIDDEN], want[HM_TOKENS * HM_HIDDEN];
    fill_uniform(&rng, x, HM_TOKENS * IN, -2.0f, 2.0f);
    nn_lstm_cache c;
    cr_assert_eq(nn_lstm_cache_init(&c, 1, HM_TOKENS, HM_HIDDEN), HR_OK);
    const float *W = p.w;
    hm_lstm_layer(IN, HM_HIDDEN, W + l.w_ih, W + l.w_hh, W + l.b_ih, W + l.b_hh, 0, x, IN, y, HM_HIDDEN);
    nn_lstm_forward(&l, &p, &c, 1, HM_TOKENS, x, NULL, NULL, want, NULL, NULL);
    assert_close(y, want, HM_TOKENS * HM_HIDDEN, 2e-6f, "lstm");
    /* the reverse direction is the forward one over the reversed tokens */
    for (int t = 0; t < HM_TOKENS; t++) memcpy(xr + t * IN, x + (HM_TOKENS - 1 - t) * IN, sizeof(float) * IN);
    hm_lstm_layer(IN, HM_HIDDEN, W + l.w_ih, W + l.w_hh, W + l.b_ih, W + l.b_hh, 1, x, IN, y, HM_HIDDEN);
    nn_lstm_forward(&l, &p, &c, 1, HM_TOKENS, xr, NULL, NULL, want, NULL, NULL);
    for (int t = 0; t < HM_TOKENS; t++)
        assert_close(y + t * HM_HIDDEN, want + (HM_TOKENS - 1 - t) * HM_HIDDEN, HM_HIDDEN, 2e-6f, "reverse lstm");
    nn_lstm_cache_free(&c);

    nn_conv1d_cache cc;
    cr_assert_eq(nn_conv1d_cache_init(&cc, &cv, 1, HM_TOKENS), HR_OK);
    hm_conv1d_relu(IN, HM_HIDDEN, W + cv.w, W + cv.b, x, IN, y, HM_HIDDEN);
    nn_conv1d_forward(&cv, &p, &cc, 1, HM_TOKENS, x, want);
    for (int i = 0; i < HM_TOKENS * HM_HIDDEN; i++) want[i] = want[i] > 0.0f ? want[i] : 0.0f;
    assert_close(y, want, HM_TOKENS * HM_HIDDEN, 1e-5f, "conv1d");
    nn_conv1d_cache_free(&cc);

    float a[37], b[37];
    fill_uniform(&rng, a, 37, -1.0f, 1.0f);
    fill_uniform(&rng, b, 37, -1.0f, 1.0f);
    double dot = 0;
    for (int i = 0; i < 37; i++) dot += (double)a[i] * b[i];
    cr_assert(fabs(hm_dot(a, b, 37) - dot) <= 1e-6, "dot %.9g vs %.9g", hm_dot(a, b, 37), dot);
    for (int i = -800; i <= 800; i++) {
        const float v = (float)i / 100.0f;
        cr_assert(fabsf(nn_tanh_fast(v) - tanhf(v)) <= 4e-7f + 1e-7f, "tanh(%g)", (double)v);
        cr_assert(fabsf(nn_sigmoid_fast(v) - 1.0f / (1.0f + expf(-v))) <= 4e-7f, "sigmoid(%g)", (double)v);
    }
    nn_params_free(&p);
}

Test(export_runtime, seq2seq_tokens_follow_the_sorted_values)
{
    data_problem p;
    memset(&p, 0, sizeof p);
    p.f[DATA_FIELD_IN_C] = 64;
    p.f[DATA_FIELD_IN_D] = 2;
    p.f[DATA_FIELD_IN_H] = 7;
    p.direction = DATA_DIR_B;
    p.dtype = DATA_DTYPE_FP16;
    const int want[HM_TOKENS] = {2, 0, 2, 1, 2}; /* 1 + index of the value, 0 when unseen */
    for (int f = 0; f < HM_TOKENS; f++) cr_assert_eq(hm_token(&p, f), want[f], "field %d", f);
    p.f[DATA_FIELD_IN_C] = 1;
    p.dtype = DATA_DTYPE_BF16;
    cr_assert_eq(hm_token(&p, 0), 1);
    cr_assert_eq(hm_token(&p, 4), 0);
}

/* log-probability of the sequence of values v under the decoder, through nn (ws begun on keys) */
static double sequence_logp(const nn_params *p, nn_decoder_ws *ws, const float *keys, const int32_t *v)
{
    nn_decoder_begin(&dec, p, ws, 1, HM_TOKENS, keys, NULL, NULL, NULL);
    double lp = 0;
    int tok = 0;
    for (int j = 0; j < HM_LEN; j++) {
        const int prev = j ? 1 + hm_vb[j - 1] + tok : 0, V = hm_ve[j] - hm_vb[j];
        float z[HM_VMAX];
        nn_decoder_step(&dec, p, ws, &prev, hm_vb[j], hm_ve[j], z);
        tok = -1;
        for (int t = 0; t < V; t++) tok = hm_vocab[j][t] == v[j] ? t : tok;
        cr_assert_geq(tok, 0, "value %d not in the vocabulary of position %d", v[j], j);
        double sum = 0;
        for (int t = 0; t < V; t++) sum += exp((double)z[t]);
        lp += (double)z[tok] - log(sum);
    }
    return lp;
}

/* The decoder step (attention, LSTM cell, output slice) against nn_decoder_step over a few steps, the
 * greedy decoding against the same loop run through nn, and the sequence score against the log-probability. */
Test(export_runtime, seq2seq_decoder_step_and_greedy_match_nn)
{
    nn_params p;
    nn_params_init(&p);
    nn_decoder_layout(&dec, &p, "dec", 1 + hm_ve[HM_LEN - 1], hm_ve[HM_LEN - 1], HM_EMBED, HM_KEY, HM_HIDDEN, HM_ATTN);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    hr_rng rng;
    hr_rng_seed(&rng, 6);
    nn_decoder_reset(&dec, &p, &rng);
    dec_w = p.w;
    nn_decoder_ws ws;
    cr_assert_eq(nn_decoder_ws_init(&ws, &dec, 1, HM_TOKENS, 4), HR_OK);
    for (int rep = 0; rep < 10; rep++) {
        float keys[HM_TOKENS * HM_KEY], kproj[HM_TOKENS * HM_ATTN];
        fill_uniform(&rng, keys, HM_TOKENS * HM_KEY, -1.0f, 1.0f);
        hm_dec_keys(keys, kproj);
        nn_decoder_begin(&dec, &p, &ws, 1, HM_TOKENS, keys, NULL, NULL, NULL);
        assert_close(kproj, ws.kproj, HM_TOKENS * HM_ATTN, 1e-5f, "key projection");
        float h[HM_HIDDEN] = {0}, c[HM_HIDDEN] = {0}, hn[HM_HIDDEN], cn[HM_HIDDEN], z[HM_VMAX], want[HM_VMAX];
        int32_t out[HM_LEN], greedy[HM_LEN];
        int tok = 0;
        for (int j = 0; j < HM_LEN; j++) {
            const int prev = j ? 1 + hm_vb[j - 1] + tok : 0;
            hm_dec_step(keys, kproj, h, c, prev, hm_vb[j], hm_ve[j], hn, cn, z);
            nn_decoder_step(&dec, &p, &ws, &prev, hm_vb[j], hm_ve[j], want);
            assert_close(z, want, (size_t)(hm_ve[j] - hm_vb[j]), 1e-5f, "logits");
            assert_close(hn, ws.h + (size_t)(j + 1) * HM_HIDDEN, HM_HIDDEN, 1e-5f, "h");
            assert_close(cn, ws.c + (size_t)(j + 1) * HM_HIDDEN, HM_HIDDEN, 1e-5f, "c");
            tok = 0;
            for (int v = 1; v < hm_ve[j] - hm_vb[j]; v++) tok = want[v] > want[tok] ? v : tok;
            greedy[j] = hm_vocab[j][tok];
            memcpy(h, hn, sizeof h);
            memcpy(c, cn, sizeof c);
        }
        hm_decode_greedy(NULL, keys, kproj, out);
        for (int j = 0; j < HM_LEN; j++) cr_assert_eq(out[j], greedy[j], "greedy position %d", j);
        /* without rules the beam keeps greedy's first choice among its hypotheses, so its best sequence
         * scores at least as high */
        hm_decode_beam(NULL, keys, kproj, out);
        const double beam = sequence_logp(&p, &ws, keys, out), best_first = sequence_logp(&p, &ws, keys, greedy);
        cr_assert_geq(beam, best_first - 1e-6, "beam %g < greedy %g", beam, best_first);
        /* the tuner guard's score is the sequence's log-probability; a value outside the vocabulary scores -inf */
        const double score = hm_seq_score(keys, kproj, out);
        cr_assert(fabs(score - beam) <= 1e-5 * (1 + fabs(beam)), "score %.9g, log-probability %.9g", score, beam);
        out[HM_LEN - 1] = 3;
        cr_assert_eq(hm_seq_score(keys, kproj, out), -INFINITY);
    }
    nn_decoder_ws_free(&ws);
    nn_params_free(&p);
}
