/* nn/seq gradients by central finite differences.
 * Each op is wrapped as L = sum(r . outputs) with fixed random r; backward with dy = r must match
 * (L(x + eps) - L(x - eps)) / 2 eps for every parameter and every input scalar. All ops here are
 * smooth (sigmoid, tanh, softmax), so there are no kinks to avoid; eps = 1e-2 keeps float32
 * rounding noise in L well below the O(eps^2) truncation error. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "nn/seq.h"

#define FD_EPS 1e-2f

typedef double (*loss_fn)(void *ctx);

static float *randn(hr_rng *rng, size_t n, float scale)
{
    float *v = malloc((n ? n : 1) * sizeof(float));
    cr_assert(v);
    for (size_t i = 0; i < n; i++) v[i] = scale * hr_rng_normal(rng);
    return v;
}

static float *zeros(size_t n)
{
    float *v = calloc(n ? n : 1, sizeof(float));
    cr_assert(v);
    return v;
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* Compares the analytic gradient g (n) of loss with respect to x (n) with central differences. */
static void check_fd(loss_fn loss, void *ctx, float *x, const float *g, size_t n, const char *what)
{
    double num2 = 0.0, err2 = 0.0, ana2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        float save = x[i];
        x[i] = save + FD_EPS;
        double lp = loss(ctx);
        x[i] = save - FD_EPS;
        double lm = loss(ctx);
        x[i] = save;
        double num = (lp - lm) / (2.0 * FD_EPS);
        cr_assert(fabs(num - g[i]) <= 5e-3 + 2e-2 * fmax(fabs(num), fabs(g[i])),
                  "%s[%zu]: analytic %.6g, numeric %.6g", what, i, (double)g[i], num);
        num2 += num * num;
        ana2 += (double)g[i] * g[i];
        err2 += (num - g[i]) * (num - g[i]);
    }
    cr_assert(ana2 > 0.0, "%s: gradient is identically zero, the check proves nothing", what);
    cr_assert(sqrt(err2) <= 1e-2 * sqrt(fmax(num2, ana2)), "%s: relative error %.3g", what,
              sqrt(err2 / fmax(num2, ana2)));
}

/* Every parameter view of p, against the gradient saved in dw (copied before any FD evaluation). */
static void check_params(loss_fn loss, void *ctx, nn_params *p)
{
    float *saved = malloc(p->n * sizeof(float));
    cr_assert(saved);
    memcpy(saved, p->dw, p->n * sizeof(float));
    for (int i = 0; i < p->n_views; i++)
        check_fd(loss, ctx, p->w + p->views[i].offset, saved + p->views[i].offset, p->views[i].size,
                 p->views[i].name);
    free(saved);
}

/* ---- conv1d ---- */
typedef struct conv_case {
    nn_conv1d conv;
    nn_params p;
    nn_conv1d_cache cache;
    int B, T;
    float *x, *y, *r, *dx;
} conv_case;

static double conv_loss(void *vc)
{
    conv_case *c = vc;
    nn_conv1d_forward(&c->conv, &c->p, &c->cache, c->B, c->T, c->x, c->y);
    return dot(c->r, c->y, (size_t)c->B * nn_conv1d_out_len(&c->conv, c->T) * c->conv.out);
}

static void conv_run(int B, int T, int Ci, int Co, int k, int stride, int pad)
{
    hr_rng rng;
    hr_rng_seed(&rng, 11);
    conv_case c = {.B = B, .T = T};
    nn_params_init(&c.p);
    nn_conv1d_layout(&c.conv, &c.p, "conv", Ci, Co, k, stride, pad);
    cr_assert_eq(nn_params_alloc(&c.p), HR_OK);
    nn_conv1d_reset(&c.conv, &c.p, &rng);
    cr_assert_eq(nn_conv1d_cache_init(&c.cache, &c.conv, B, T), HR_OK);
    size_t nx = (size_t)B * T * Ci, ny = (size_t)B * nn_conv1d_out_len(&c.conv, T) * Co;
    c.x = randn(&rng, nx, 1.0f);
    c.r = randn(&rng, ny, 1.0f);
    c.y = zeros(ny);
    c.dx = zeros(nx);
    conv_loss(&c);
    nn_conv1d_backward(&c.conv, &c.p, &c.cache, B, T, c.r, c.dx);
    check_params(conv_loss, &c, &c.p);
    check_fd(conv_loss, &c, c.x, c.dx, nx, "dx");
    free(c.x);
    free(c.y);
    free(c.r);
    free(c.dx);
    nn_conv1d_cache_free(&c.cache);
    nn_params_free(&c.p);
}

Test(nn_seq_grad, conv1d_same_padding)
{
    conv_run(2, 6, 3, 4, 3, 1, 1);
}

Test(nn_seq_grad, conv1d_strided_wide_padding)
{
    conv_run(3, 9, 2, 3, 4, 2, 2);
}

Test(nn_seq_grad, conv1d_output_length)
{
    nn_params p;
    nn_params_init(&p);
    nn_conv1d c;
    nn_conv1d_layout(&c, &p, "c", 1, 1, 3, 2, 1);
    cr_assert_eq(nn_conv1d_out_len(&c, 7), 4); /* (7 + 2 - 3) / 2 + 1 */
    cr_assert_eq(nn_conv1d_out_len(&c, 1), 1);
    nn_conv1d_layout(&c, &p, "d", 1, 1, 5, 1, 0);
    cr_assert_eq(nn_conv1d_out_len(&c, 4), 0);
}

/* ---- LSTM and BiLSTM ---- */
typedef struct lstm_case {
    nn_lstm uni;
    nn_bilstm bi;
    int bidirectional, with_state;
    nn_params p;
    nn_lstm_cache cache;
    nn_bilstm_cache bcache;
    int B, T, In, H;
    float *x, *h0, *c0, *y, *hn, *cn, *ry, *rh, *rc, *dx, *dh0, *dc0;
} lstm_case;

static double lstm_loss(void *vc)
{
    lstm_case *c = vc;
    int D = c->bidirectional ? 2 : 1;
    const float *h0 = c->with_state ? c->h0 : NULL, *c0 = c->with_state ? c->c0 : NULL;
    if (c->bidirectional)
        nn_bilstm_forward(&c->bi, &c->p, &c->bcache, c->B, c->T, c->x, h0, c0, c->y, c->hn, c->cn);
    else
        nn_lstm_forward(&c->uni, &c->p, &c->cache, c->B, c->T, c->x, h0, c0, c->y, c->hn, c->cn);
    size_t ny = (size_t)c->B * c->T * D * c->H, ns = (size_t)D * c->B * c->H;
    return dot(c->ry, c->y, ny) + dot(c->rh, c->hn, ns) + dot(c->rc, c->cn, ns);
}

static void lstm_run(int bidirectional, int with_state, int B, int T, int In, int H)
{
    hr_rng rng;
    hr_rng_seed(&rng, 12 + bidirectional);
    lstm_case c = {.bidirectional = bidirectional, .with_state = with_state, .B = B, .T = T, .In = In,
                   .H = H};
    int D = bidirectional ? 2 : 1;
    nn_params_init(&c.p);
    if (bidirectional) {
        nn_bilstm_layout(&c.bi, &c.p, "bi", In, H);
        cr_assert_eq(nn_params_alloc(&c.p), HR_OK);
        nn_bilstm_reset(&c.bi, &c.p, &rng);
        cr_assert_eq(nn_bilstm_cache_init(&c.bcache, B, T, H), HR_OK);
    } else {
        nn_lstm_layout(&c.uni, &c.p, "lstm", In, H);
        cr_assert_eq(nn_params_alloc(&c.p), HR_OK);
        nn_lstm_reset(&c.uni, &c.p, &rng);
        cr_assert_eq(nn_lstm_cache_init(&c.cache, B + 1, T + 2, H), HR_OK); /* capacity > use */
    }
    /* larger weights than the default init so that gates saturate partly and BPTT terms matter */
    for (size_t i = 0; i < c.p.n; i++) c.p.w[i] *= 2.0f;
    size_t nx = (size_t)B * T * In, ny = (size_t)B * T * D * H, ns = (size_t)D * B * H;
    c.x = randn(&rng, nx, 1.0f);
    c.h0 = randn(&rng, ns, 0.5f);
    c.c0 = randn(&rng, ns, 0.5f);
    c.ry = randn(&rng, ny, 1.0f);
    c.rh = randn(&rng, ns, 1.0f);
    c.rc = randn(&rng, ns, 1.0f);
    c.y = zeros(ny);
    c.hn = zeros(ns);
    c.cn = zeros(ns);
    c.dx = zeros(nx);
    c.dh0 = zeros(ns);
    c.dc0 = zeros(ns);
    lstm_loss(&c);
    if (bidirectional)
        nn_bilstm_backward(&c.bi, &c.p, &c.bcache, c.x, c.ry, c.rh, c.rc, c.dx, c.dh0, c.dc0);
    else
        nn_lstm_backward(&c.uni, &c.p, &c.cache, c.x, c.ry, c.rh, c.rc, c.dx, c.dh0, c.dc0);
    check_params(lstm_loss, &c, &c.p);
    check_fd(lstm_loss, &c, c.x, c.dx, nx, "dx");
    if (with_state) {
        check_fd(lstm_loss, &c, c.h0, c.dh0, ns, "dh0");
        check_fd(lstm_loss, &c, c.c0, c.dc0, ns, "dc0");
    }
    float *bufs[] = {c.x, c.h0, c.c0, c.y, c.hn, c.cn, c.ry, c.rh, c.rc, c.dx, c.dh0, c.dc0};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    if (bidirectional)
        nn_bilstm_cache_free(&c.bcache);
    else
        nn_lstm_cache_free(&c.cache);
    nn_params_free(&c.p);
}

Test(nn_seq_grad, lstm_with_initial_state)
{
    lstm_run(0, 1, 3, 5, 4, 3);
}

Test(nn_seq_grad, lstm_zero_initial_state)
{
    lstm_run(0, 0, 2, 4, 3, 5);
}

Test(nn_seq_grad, bilstm_with_initial_state)
{
    lstm_run(1, 1, 2, 5, 3, 4);
}

Test(nn_seq_grad, bilstm_zero_initial_state)
{
    lstm_run(1, 0, 3, 3, 2, 3);
}

Test(nn_seq_grad, bilstm_single_step)
{
    lstm_run(1, 1, 3, 1, 2, 3);
}

/* The two halves of a BiLSTM output are the forward LSTM and the forward LSTM run on the
 * time-reversed input (with the backward direction's weights), reversed back. */
Test(nn_seq_grad, bilstm_halves_are_forward_and_reversed_lstm)
{
    hr_rng rng;
    hr_rng_seed(&rng, 3);
    int B = 2, T = 4, In = 3, H = 2;
    nn_params p;
    nn_params_init(&p);
    nn_bilstm bi;
    nn_bilstm_layout(&bi, &p, "bi", In, H);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    nn_bilstm_reset(&bi, &p, &rng);
    nn_bilstm_cache bc;
    nn_lstm_cache lc;
    cr_assert_eq(nn_bilstm_cache_init(&bc, B, T, H), HR_OK);
    cr_assert_eq(nn_lstm_cache_init(&lc, B, T, H), HR_OK);
    float *x = randn(&rng, (size_t)B * T * In, 1.0f), *xr = zeros((size_t)B * T * In);
    float *y = zeros((size_t)B * T * 2 * H), *yf = zeros((size_t)B * T * H), *yr = zeros((size_t)B * T * H);
    float hn[2 * 2 * 2], hr[2 * 2];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            memcpy(xr + ((size_t)b * T + t) * In, x + ((size_t)b * T + T - 1 - t) * In, In * sizeof(float));
    nn_bilstm_forward(&bi, &p, &bc, B, T, x, NULL, NULL, y, hn, NULL);
    nn_lstm_forward(&bi.fwd, &p, &lc, B, T, x, NULL, NULL, yf, NULL, NULL);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < H; j++)
                cr_assert_float_eq(y[((size_t)b * T + t) * 2 * H + j], yf[((size_t)b * T + t) * H + j], 1e-6);
    nn_lstm_forward(&bi.bwd, &p, &lc, B, T, xr, NULL, NULL, yr, hr, NULL);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < H; j++)
                cr_assert_float_eq(y[((size_t)b * T + t) * 2 * H + H + j],
                                   yr[((size_t)b * T + T - 1 - t) * H + j], 1e-6);
    for (int k = 0; k < B * H; k++) cr_assert_float_eq(hn[B * H + k], hr[k], 1e-6);
    free(x);
    free(xr);
    free(y);
    free(yf);
    free(yr);
    nn_bilstm_cache_free(&bc);
    nn_lstm_cache_free(&lc);
    nn_params_free(&p);
}

/* ---- additive attention ---- */
typedef struct attn_case {
    nn_attn_additive att;
    nn_params p;
    int B, S;
    unsigned char *mask;
    float *q, *keys, *kproj, *tanh_e, *w, *ctx, *r;
    float *dq, *dkeys, *dkproj, *scratch;
} attn_case;

static double attn_loss(void *vc)
{
    attn_case *c = vc;
    nn_attn_additive_keys(&c->att, &c->p, c->B, c->S, c->keys, c->kproj);
    nn_attn_additive_forward(&c->att, &c->p, NULL, c->B, c->S, c->q, c->keys, c->kproj, c->mask, c->tanh_e,
                             c->w, c->ctx);
    return dot(c->r, c->ctx, (size_t)c->B * c->att.key);
}

Test(nn_seq_grad, additive_attention_with_mask)
{
    hr_rng rng;
    hr_rng_seed(&rng, 21);
    int B = 4, S = 5, Dq = 3, Dk = 4, A = 6;
    attn_case c = {.B = B, .S = S};
    nn_params_init(&c.p);
    nn_attn_additive_layout(&c.att, &c.p, "att", Dq, Dk, A);
    cr_assert_eq(nn_params_alloc(&c.p), HR_OK);
    nn_attn_additive_reset(&c.att, &c.p, &rng);
    for (size_t i = 0; i < c.p.n; i++) c.p.w[i] *= 2.0f; /* peakier attention */
    size_t nk = (size_t)B * S * Dk, nkp = (size_t)B * S * A;
    c.mask = malloc((size_t)B * S);
    for (int i = 0; i < B * S; i++) c.mask[i] = 1;
    c.mask[1 * S + 3] = c.mask[1 * S + 4] = 0; /* padded tail */
    c.mask[2 * S + 0] = 0;
    for (int s = 0; s < S; s++) c.mask[3 * S + s] = 0; /* nothing to attend: ctx = 0, no NaN */
    c.q = randn(&rng, (size_t)B * Dq, 1.0f);
    c.keys = randn(&rng, nk, 1.0f);
    c.r = randn(&rng, (size_t)B * Dk, 1.0f);
    c.kproj = zeros(nkp);
    c.tanh_e = zeros(nkp);
    c.w = zeros((size_t)B * S);
    c.ctx = zeros((size_t)B * Dk);
    c.dq = zeros((size_t)B * Dq);
    c.dkeys = zeros(nk);
    c.dkproj = zeros(nkp);
    c.scratch = zeros((size_t)B * (A + S));
    attn_loss(&c);
    for (int b = 0; b < B; b++) {
        double sum = 0.0;
        for (int s = 0; s < S; s++) {
            if (!c.mask[b * S + s]) cr_assert_eq(c.w[b * S + s], 0.0f);
            sum += c.w[b * S + s];
        }
        cr_assert_float_eq(sum, b == 3 ? 0.0 : 1.0, 1e-5);
    }
    for (int d = 0; d < Dk; d++) cr_assert_eq(c.ctx[3 * Dk + d], 0.0f);
    nn_attn_additive_backward(&c.att, &c.p, B, S, c.q, c.keys, c.tanh_e, c.w, c.r, c.scratch, c.dq, c.dkeys,
                              c.dkproj);
    nn_attn_additive_keys_backward(&c.att, &c.p, B, S, c.keys, c.dkproj, c.dkeys);
    check_params(attn_loss, &c, &c.p);
    check_fd(attn_loss, &c, c.q, c.dq, (size_t)B * Dq, "dq");
    check_fd(attn_loss, &c, c.keys, c.dkeys, nk, "dkeys");
    float *bufs[] = {c.q, c.keys, c.r, c.kproj, c.tanh_e, c.w, c.ctx, c.dq, c.dkeys, c.dkproj, c.scratch};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(c.mask);
    nn_params_free(&c.p);
}

/* ---- decoder ---- */
#define DEC_T 3
typedef struct dec_case {
    nn_decoder dec;
    nn_params p;
    nn_decoder_ws ws;
    int B, S;
    int prev[DEC_T][8];
    int vb[DEC_T], ve[DEC_T];
    unsigned char *mask;
    float *keys, *h0, *c0, *logits[DEC_T], *r[DEC_T], *rh, *rc;
    float *dkeys, *dh0, *dc0;
} dec_case;

static double dec_loss(void *vc)
{
    dec_case *c = vc;
    nn_decoder_begin(&c->dec, &c->p, &c->ws, c->B, c->S, c->keys, c->mask, c->h0, c->c0);
    double L = 0.0;
    for (int t = 0; t < DEC_T; t++) {
        nn_decoder_step(&c->dec, &c->p, &c->ws, c->prev[t], c->vb[t], c->ve[t], c->logits[t]);
        L += dot(c->r[t], c->logits[t], (size_t)c->B * (c->ve[t] - c->vb[t]));
    }
    size_t bh = (size_t)c->B * c->dec.hidden;
    return L + dot(c->rh, c->ws.h + DEC_T * bh, bh) + dot(c->rc, c->ws.c + DEC_T * bh, bh);
}

Test(nn_seq_grad, decoder_teacher_forcing_bptt)
{
    hr_rng rng;
    hr_rng_seed(&rng, 31);
    int B = 3, S = 4, Dk = 4, E = 3, H = 4, A = 3, n_in = 7, n_out = 6;
    dec_case c = {.B = B, .S = S};
    nn_params_init(&c.p);
    nn_decoder_layout(&c.dec, &c.p, "dec", n_in, n_out, E, Dk, H, A);
    cr_assert_eq(nn_params_alloc(&c.p), HR_OK);
    nn_decoder_reset(&c.dec, &c.p, &rng);
    cr_assert_eq(nn_decoder_ws_init(&c.ws, &c.dec, B, S, DEC_T), HR_OK);
    int ranges[DEC_T][2] = {{0, 2}, {2, 6}, {1, 4}};
    for (int t = 0; t < DEC_T; t++) {
        c.vb[t] = ranges[t][0];
        c.ve[t] = ranges[t][1];
        /* token 0 appears twice in step 1 so that embedding rows accumulate from two positions */
        for (int b = 0; b < B; b++)
            c.prev[t][b] = t == 0 ? n_in - 1 : (t == 1 ? 0 : (int)hr_rng_below(&rng, n_in));
        c.r[t] = randn(&rng, (size_t)B * (c.ve[t] - c.vb[t]), 1.0f);
        c.logits[t] = zeros((size_t)B * (c.ve[t] - c.vb[t]));
    }
    size_t nk = (size_t)B * S * Dk, bh = (size_t)B * H;
    c.mask = malloc((size_t)B * S);
    for (int i = 0; i < B * S; i++) c.mask[i] = i != S + 2;
    c.keys = randn(&rng, nk, 1.0f);
    c.h0 = randn(&rng, bh, 0.5f);
    c.c0 = randn(&rng, bh, 0.5f);
    c.rh = randn(&rng, bh, 1.0f);
    c.rc = randn(&rng, bh, 1.0f);
    c.dkeys = zeros(nk);
    c.dh0 = zeros(bh);
    c.dc0 = zeros(bh);
    dec_loss(&c);
    nn_decoder_backward(&c.dec, &c.p, &c.ws, (const float *const *)c.r, c.rh, c.rc, c.dkeys, c.dh0, c.dc0);
    check_params(dec_loss, &c, &c.p);
    check_fd(dec_loss, &c, c.keys, c.dkeys, nk, "dkeys");
    check_fd(dec_loss, &c, c.h0, c.dh0, bh, "dh0");
    check_fd(dec_loss, &c, c.c0, c.dc0, bh, "dc0");
    for (int t = 0; t < DEC_T; t++) {
        free(c.r[t]);
        free(c.logits[t]);
    }
    float *bufs[] = {c.keys, c.h0, c.c0, c.rh, c.rc, c.dkeys, c.dh0, c.dc0};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(c.mask);
    nn_decoder_ws_free(&c.ws);
    nn_params_free(&c.p);
}

/* Beam bookkeeping: swapping two hypotheses that share the keys swaps their next-step logits. */
Test(nn_seq_grad, decoder_reorder_moves_state_rows)
{
    hr_rng rng;
    hr_rng_seed(&rng, 41);
    int B = 3, S = 3, Dk = 2, E = 2, H = 3, A = 2, V = 5;
    nn_params p;
    nn_params_init(&p);
    nn_decoder dec;
    nn_decoder_layout(&dec, &p, "dec", V + 1, V, E, Dk, H, A);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    nn_decoder_reset(&dec, &p, &rng);
    nn_decoder_ws ws;
    cr_assert_eq(nn_decoder_ws_init(&ws, &dec, B, S, 2), HR_OK);
    float *key1 = randn(&rng, (size_t)S * Dk, 1.0f), keys[3 * 3 * 2];
    for (int b = 0; b < B; b++) memcpy(keys + b * S * Dk, key1, (size_t)S * Dk * sizeof(float));
    float *h0 = randn(&rng, (size_t)B * H, 1.0f), l0[3 * 5], l1[3 * 5], l1s[3 * 5];
    int bos[3] = {V, V, V}, next[3] = {0, 1, 2}, parent[3] = {2, 0, 1}, next_perm[3] = {2, 0, 1};
    nn_decoder_begin(&dec, &p, &ws, B, S, keys, NULL, h0, NULL);
    nn_decoder_step(&dec, &p, &ws, bos, 0, V, l0);
    nn_decoder_step(&dec, &p, &ws, next, 0, V, l1);
    nn_decoder_begin(&dec, &p, &ws, B, S, keys, NULL, h0, NULL);
    nn_decoder_step(&dec, &p, &ws, bos, 0, V, l0);
    nn_decoder_reorder(&dec, &ws, parent);
    nn_decoder_step(&dec, &p, &ws, next_perm, 0, V, l1s);
    for (int b = 0; b < B; b++)
        for (int v = 0; v < V; v++) cr_assert_float_eq(l1s[b * V + v], l1[parent[b] * V + v], 1e-6);
    free(key1);
    free(h0);
    nn_decoder_ws_free(&ws);
    nn_params_free(&p);
}

/* The inference path (transposed weight copies) computes the same steps as the training path. */
Test(nn_seq_grad, decoder_prepared_workspace_matches)
{
    hr_rng rng;
    hr_rng_seed(&rng, 43);
    int B = 4, S = 5, Dk = 6, E = 3, H = 5, A = 4, V = 9, T = 3;
    nn_params p;
    nn_params_init(&p);
    nn_decoder dec;
    nn_decoder_layout(&dec, &p, "dec", V + 1, V, E, Dk, H, A);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    nn_decoder_reset(&dec, &p, &rng);
    nn_decoder_ws plain, fast;
    cr_assert_eq(nn_decoder_ws_init(&plain, &dec, B, S, T), HR_OK);
    cr_assert_eq(nn_decoder_ws_init(&fast, &dec, B, S, T), HR_OK);
    cr_assert_eq(nn_decoder_ws_prepare(&fast, &dec, &p), HR_OK);
    float *keys = randn(&rng, (size_t)B * S * Dk, 1.0f), la[4 * 9], lb[4 * 9];
    int prev[4] = {V, V, V, V};
    nn_decoder_begin(&dec, &p, &plain, B, S, keys, NULL, NULL, NULL);
    nn_decoder_begin(&dec, &p, &fast, B, S, keys, NULL, NULL, NULL);
    int ranges[3][2] = {{0, 3}, {3, 9}, {0, 9}};
    for (int t = 0; t < T; t++) {
        nn_decoder_step(&dec, &p, &plain, prev, ranges[t][0], ranges[t][1], la);
        nn_decoder_step(&dec, &p, &fast, prev, ranges[t][0], ranges[t][1], lb);
        int n = B * (ranges[t][1] - ranges[t][0]);
        for (int i = 0; i < n; i++) cr_assert_float_eq(la[i], lb[i], 1e-5);
        for (int b = 0; b < B; b++) prev[b] = (b + t) % V;
    }
    free(keys);
    nn_decoder_ws_free(&plain);
    nn_decoder_ws_free(&fast);
    nn_params_free(&p);
}

Test(nn_seq_grad, fast_tanh_and_sigmoid_accuracy)
{
    double max_t = 0.0, max_s = 0.0;
    for (double x = -30.0; x <= 30.0; x += 1e-3) {
        max_t = fmax(max_t, fabs(nn_tanh_fast((float)x) - tanh(x)));
        max_s = fmax(max_s, fabs(nn_sigmoid_fast((float)x) - 1.0 / (1.0 + exp(-x))));
    }
    cr_assert_lt(max_t, 5e-7);
    cr_assert_lt(max_s, 5e-7);
    cr_assert(isnan(nn_tanh_fast(NAN)));
}
