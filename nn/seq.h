/* nn/seq: sequence ops for the seq2seq tuning-parameter model (Mahmood et al., arXiv 2404.10162):
 * a Conv1D + BiLSTM encoder, Bahdanau attention and an LSTM decoder driven one step at a time.
 *
 * Follows the nn.h conventions (row-major float32, parameters in an nn_params block reserved by
 * *_layout before nn_params_alloc, backward accumulates += into p->dw and into input gradients).
 * Sequences are batch-first: a batch of B sequences of T vectors of width D is a (B, T, D) array.
 * Parameter layouts match PyTorch (Conv1d, LSTM/LSTMCell with gate order i, f, g, o, Linear), so
 * weights can be copied tensor by tensor. Caches live in workspaces allocated once for a maximum
 * batch and length; forward and backward never allocate.
 *
 * Training (teacher forcing): conv1d -> bilstm -> keys; nn_decoder_begin(keys); nn_decoder_step for
 * each target position with the previous gold token; loss on the logits; nn_decoder_backward
 * (dkeys) -> nn_bilstm_backward -> nn_conv1d_backward. Inference: the same steps on a workspace
 * prepared once (nn_decoder_ws_prepare), a beam as k batch rows with replicated keys, and
 * nn_decoder_reorder after choosing each step's survivors.
 *
 *   conv1d:     y[b,t,o] = b[o] + sum_{c,j} W[o,c,j] x[b, t*stride + j - pad, c]      (im2col + GEMM)
 *   lstm:       [i f g o] = [s s tanh s](x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)
 *               c_t = f*c_{t-1} + i*g,  h_t = o*tanh(c_t)                           (full BPTT)
 *   bilstm:     y[b,t] = [h_fwd_t, h_bwd_t] with h_bwd run from t = T-1 down to 0
 *   attention:  e_s = v^T tanh(W_q q + W_k k_s + b_k),  a = softmax_s(e) (masked),  ctx = sum_s a_s k_s
 *   decoder:    ctx_t = attn(h_{t-1}, K);  (h_t, c_t) = cell([E[y_{t-1}], ctx_t], h_{t-1}, c_{t-1});
 *               logits_t = W_out[vb:ve] [h_t, ctx_t] + b_out[vb:ve]
 */
#ifndef HEURIST_NN_SEQ_H
#define HEURIST_NN_SEQ_H

#include <stddef.h>

#include "core/core.h"
#include "nn/nn.h"

/* ---- Conv1D over a token sequence ---- */
typedef struct nn_conv1d {
    int in, out;          /* C_in, C_out */
    int kernel, stride, pad;
    size_t w;             /* (C_out, C_in, k), PyTorch Conv1d.weight */
    size_t b;             /* (C_out) */
} nn_conv1d;

typedef struct nn_conv1d_cache {
    int max_rows;         /* capacity in B * T_out rows */
    float *cols;          /* (B * T_out, C_in * k): im2col of the last forward input */
    float *dcols;         /* (B * T_out, C_in * k): backward scratch */
} nn_conv1d_cache;

void nn_conv1d_layout(nn_conv1d *l, nn_params *p, const char *name, int in, int out, int kernel,
                      int stride, int pad);
/* PyTorch's default: U(-1/sqrt(C_in k), 1/sqrt(C_in k)) for weight and bias. */
void nn_conv1d_reset(const nn_conv1d *l, nn_params *p, hr_rng *rng);
/* T_out = (T + 2 pad - k) / stride + 1 (0 if the kernel does not fit). */
int nn_conv1d_out_len(const nn_conv1d *l, int T);
int nn_conv1d_cache_init(nn_conv1d_cache *c, const nn_conv1d *l, int max_batch, int max_time);
void nn_conv1d_cache_free(nn_conv1d_cache *c);
/* x (B, T, C_in) -> y (B, T_out, C_out) */
void nn_conv1d_forward(const nn_conv1d *l, const nn_params *p, nn_conv1d_cache *c, int B, int T,
                       const float *x, float *y);
/* dy (B, T_out, C_out) -> dW, db += ; dx (B, T, C_in) += (dx may be NULL for the first layer) */
void nn_conv1d_backward(const nn_conv1d *l, nn_params *p, nn_conv1d_cache *c, int B, int T,
                        const float *dy, float *dx);

/* ---- LSTM (one layer, one direction) ---- */
typedef struct nn_lstm {
    int input, hidden;    /* I, H */
    size_t w_ih;          /* (4H, I) rows i, f, g, o as PyTorch weight_ih_l0 */
    size_t w_hh;          /* (4H, H) */
    size_t b_ih, b_hh;    /* (4H) each */
} nn_lstm;

/* Everything one direction's backward needs, for up to max_batch sequences of max_time steps. */
typedef struct nn_lstm_cache {
    int max_batch, max_time, hidden;
    int batch, time, reverse;  /* of the last forward */
    float *gates;   /* (B, T, 4H): activated i, f, g, o at each step */
    float *c;       /* (B, T, H): cell state after each step */
    float *tc;      /* (B, T, H): tanh(c) */
    float *hprev;   /* (B, T, H): hidden state entering each step (h0 for the first one) */
    float *c0;      /* (B, H): initial cell state (zeros when none given) */
    float *dgates;  /* (B, T, 4H): backward scratch, pre-activation gate gradients */
    float *dh, *dc; /* (B, H): running gradients of the state during BPTT */
} nn_lstm_cache;

void nn_lstm_layout(nn_lstm *l, nn_params *p, const char *name, int input, int hidden);
/* PyTorch's default: every weight and bias U(-1/sqrt(H), 1/sqrt(H)). */
void nn_lstm_reset(const nn_lstm *l, nn_params *p, hr_rng *rng);
int nn_lstm_cache_init(nn_lstm_cache *c, int max_batch, int max_time, int hidden);
void nn_lstm_cache_free(nn_lstm_cache *c);
/* x (B, T, I), h0/c0 (B, H) or NULL for zeros -> y (B, T, H); hn/cn (B, H) final state or NULL. */
void nn_lstm_forward(const nn_lstm *l, const nn_params *p, nn_lstm_cache *c, int B, int T,
                     const float *x, const float *h0, const float *c0, float *y, float *hn, float *cn);
/* dy (B, T, H), dhn/dcn (B, H): any may be NULL (no gradient). Accumulates into dW, and into
 * dx (B, T, I), dh0, dc0 (B, H) where not NULL. x is the forward input. */
void nn_lstm_backward(const nn_lstm *l, nn_params *p, nn_lstm_cache *c, const float *x,
                      const float *dy, const float *dhn, const float *dcn, float *dx, float *dh0,
                      float *dc0);

/* One LSTMCell step without caching over time (the decoder's recurrence; PyTorch LSTMCell).
 * x (B, I) with row stride ldx, h_prev/c_prev (B, H) -> gates (B, 4H) activated, c, tc, h (B, H).
 * wt_ih (I, 4H) and wt_hh (H, 4H): transposed weights for small-batch inference (OpenBLAS packs
 * a transposed operand on every call, which dominates when B ~ 10), or NULL to read p. */
void nn_lstm_cell_forward(const nn_lstm *l, const nn_params *p, const float *wt_ih, const float *wt_hh,
                          int B, const float *x, int ldx, const float *h_prev, const float *c_prev,
                          float *gates, float *c, float *tc, float *h);
/* Given dh, dc (B, H) for the cell's outputs (dc is overwritten), writes dgates (B, 4H), accumulates
 * dW, dx (B, I; stride ldx; may be NULL), and writes dh_prev = dgates W_hh (beta 0) and
 * dc (in place) = gradient for c_prev. */
void nn_lstm_cell_backward(const nn_lstm *l, nn_params *p, int B, const float *x, int ldx,
                           const float *h_prev, const float *c_prev, const float *gates,
                           const float *tc, const float *dh, float *dc, float *dgates, float *dx,
                           float *dh_prev);

/* ---- Bidirectional LSTM: two nn_lstm over the same input ---- */
typedef struct nn_bilstm {
    nn_lstm fwd, bwd;     /* params "<name>.fwd.*" and "<name>.bwd.*" (PyTorch *_l0 and *_l0_reverse) */
} nn_bilstm;

typedef struct nn_bilstm_cache {
    nn_lstm_cache fwd, bwd;
} nn_bilstm_cache;

void nn_bilstm_layout(nn_bilstm *l, nn_params *p, const char *name, int input, int hidden);
void nn_bilstm_reset(const nn_bilstm *l, nn_params *p, hr_rng *rng);
int nn_bilstm_cache_init(nn_bilstm_cache *c, int max_batch, int max_time, int hidden);
void nn_bilstm_cache_free(nn_bilstm_cache *c);
/* x (B, T, I); h0/c0 (2, B, H) [forward, backward] or NULL -> y (B, T, 2H) forward half then
 * backward half; hn/cn (2, B, H) or NULL, the backward direction's final state being after t = 0
 * (PyTorch h_n layout). */
void nn_bilstm_forward(const nn_bilstm *l, const nn_params *p, nn_bilstm_cache *c, int B, int T,
                       const float *x, const float *h0, const float *c0, float *y, float *hn,
                       float *cn);
/* dy (B, T, 2H), dhn/dcn (2, B, H) or NULL; accumulates into dW and dx (B, T, I), dh0/dc0 (2, B, H). */
void nn_bilstm_backward(const nn_bilstm *l, nn_params *p, nn_bilstm_cache *c, const float *x,
                        const float *dy, const float *dhn, const float *dcn, float *dx, float *dh0,
                        float *dc0);

/* ---- Bahdanau additive attention ---- */
typedef struct nn_attn_additive {
    int query, key, attn; /* Dq, Dk, A */
    size_t w_q;           /* (A, Dq) */
    size_t w_k;           /* (A, Dk) */
    size_t b_k;           /* (A) */
    size_t v;             /* (A) */
} nn_attn_additive;

void nn_attn_additive_layout(nn_attn_additive *a, nn_params *p, const char *name, int query, int key,
                             int attn);
/* U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as PyTorch Linear (v: fan_in A). */
void nn_attn_additive_reset(const nn_attn_additive *a, nn_params *p, hr_rng *rng);
/* kproj = K W_k^T + b_k: keys (B, S, Dk) -> kproj (B, S, A), once per sequence. */
void nn_attn_additive_keys(const nn_attn_additive *a, const nn_params *p, int B, int S,
                           const float *keys, float *kproj);
/* dkproj (B, S, A) -> dW_k, db_k += ; dkeys (B, S, Dk) += (may be NULL). */
void nn_attn_additive_keys_backward(const nn_attn_additive *a, nn_params *p, int B, int S,
                                    const float *keys, const float *dkproj, float *dkeys);
/* q (B, Dq), keys (B, S, Dk), kproj (B, S, A), mask (B, S) nonzero = attend, or NULL ->
 * ctx (B, Dk); caches tanh_e (B, S, A) and weights w (B, S). A row with every key masked gets
 * w = 0 and ctx = 0. w_q_t (Dq, A): W_q transposed for small-batch inference, or NULL to read p. */
void nn_attn_additive_forward(const nn_attn_additive *a, const nn_params *p, const float *w_q_t, int B,
                              int S, const float *q, const float *keys, const float *kproj,
                              const unsigned char *mask, float *tanh_e, float *w, float *ctx);
/* dctx (B, Dk) -> dW_q, dv += ; dq (B, Dq), dkeys (B, S, Dk) (the sum_s a_s k_s path only) and
 * dkproj (B, S, A) += where not NULL. scratch: (B, A + S). Finish with nn_attn_additive_keys_backward
 * once all dkproj contributions are in. */
void nn_attn_additive_backward(const nn_attn_additive *a, nn_params *p, int B, int S, const float *q,
                               const float *keys, const float *tanh_e, const float *w,
                               const float *dctx, float *scratch, float *dq, float *dkeys,
                               float *dkproj);

/* ---- Attention LSTM decoder, one step per call ---- */
typedef struct nn_decoder {
    int n_in;             /* input-token vocabulary (rows of the embedding, including BOS) */
    int n_out;            /* output vocabulary: logits rows */
    int embed, key, hidden, attn; /* E, Dk, H, A */
    size_t emb;           /* (n_in, E) */
    nn_attn_additive att; /* query H, key Dk */
    nn_lstm cell;         /* input E + Dk, hidden H */
    size_t w_out;         /* (n_out, H + Dk) applied to [h_t, ctx_t] */
    size_t b_out;         /* (n_out) */
} nn_decoder;

/* Per-step caches for a whole decoded sequence, so teacher-forced training can run BPTT and
 * inference can reuse the same memory; sized once for (max_batch, max_len keys, max_steps). */
typedef struct nn_decoder_ws {
    int max_batch, max_len, max_steps;
    int batch, len, steps;      /* current problem: B, S, steps run so far */
    const float *keys;          /* (B, S, Dk): encoder output, owned by the caller */
    const unsigned char *mask;  /* (B, S) or NULL */
    float *kproj;               /* (B, S, A) */
    float *h, *c;               /* (T + 1, B, H): state before step 0 .. after step T-1 */
    float *xcat;                /* (T, B, E + Dk): cell input [embedding, context] */
    float *gates, *tc;          /* (T, B, 4H), (T, B, H) */
    float *tanh_e, *attw;       /* (T, B, S, A), (T, B, S) */
    int *tokens;                /* (T, B): previous token fed at each step */
    int *vb, *ve;               /* (T): logits row range of each step */
    /* backward scratch */
    float *dh, *dc, *dh_prev;   /* (B, H) */
    float *dgates;              /* (B, 4H) */
    float *dxcat;               /* (B, E + Dk) */
    float *dctx;                /* (B, Dk) */
    float *dkproj;              /* (B, S, A) */
    float *scratch;             /* (B, A + S): attention backward scratch */
    float *ctx;                 /* (B, Dk): forward scratch for the step's context */
    /* inference copies of the weights, transposed (nn_decoder_ws_prepare); NULL until prepared */
    float *wt_q;                /* (H, A) */
    float *wt_ih, *wt_hh;       /* (E + Dk, 4H), (H, 4H) */
    float *wt_out;              /* (H + Dk, n_out) */
} nn_decoder_ws;

void nn_decoder_layout(nn_decoder *d, nn_params *p, const char *name, int n_in, int n_out, int embed,
                       int key, int hidden, int attn);
/* Embedding N(0, 1) as PyTorch; the rest as the components' defaults. */
void nn_decoder_reset(const nn_decoder *d, nn_params *p, hr_rng *rng);
int nn_decoder_ws_init(nn_decoder_ws *ws, const nn_decoder *d, int max_batch, int max_len,
                       int max_steps);
void nn_decoder_ws_free(nn_decoder_ws *ws);
/* Inference only: keeps transposed copies of the step's weights so that small-batch steps (a beam
 * of ~10 rows) run as plain NN GEMMs without repacking the weights each call. The copies go stale
 * when p changes: call again after loading or updating weights. nn_decoder_backward refuses a
 * prepared workspace (HR_ASSERT). */
int nn_decoder_ws_prepare(nn_decoder_ws *ws, const nn_decoder *d, const nn_params *p);
/* Starts a sequence: keys (B, S, Dk) stay owned by the caller until backward is done; mask (B, S)
 * or NULL; h0/c0 (B, H) or NULL for zeros. Computes the key projection once. */
void nn_decoder_begin(const nn_decoder *d, const nn_params *p, nn_decoder_ws *ws, int B, int S,
                      const float *keys, const unsigned char *mask, const float *h0,
                      const float *c0);
/* Step t = ws->steps: prev (B) token ids in [0, n_in) -> logits (B, ve - vb) for output rows
 * [vb, ve); the new state is ws->h/c + (t + 1) * B * H. */
void nn_decoder_step(const nn_decoder *d, const nn_params *p, nn_decoder_ws *ws, const int *prev,
                     int vb, int ve, float *logits);
/* Beam search: row r of the current state continues hypothesis parent[r] (B entries, each in
 * [0, B) and attending to the same keys as r). Inference only: earlier steps' caches are not
 * reordered, so nn_decoder_backward is invalid afterwards. */
void nn_decoder_reorder(const nn_decoder *d, nn_decoder_ws *ws, const int *parent);
/* BPTT through every step run since begin: dlogits[t] (B, ve_t - vb_t); dhn/dcn (B, H) for the
 * final state or NULL. Accumulates dW, dkeys (B, S, Dk), dh0, dc0 (B, H) where not NULL. */
void nn_decoder_backward(const nn_decoder *d, nn_params *p, nn_decoder_ws *ws,
                         const float *const *dlogits, const float *dhn, const float *dcn,
                         float *dkeys, float *dh0, float *dc0);

/* ---- pointwise helpers shared by the sequence ops ---- */
/* Hot pointwise loops get an AVX2 clone picked at load time (x86-64 GCC builds only: the
 * project compiles for baseline x86-64, where these loops would run 4 lanes wide). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NN_SEQ_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NN_SEQ_CLONES
#endif
/* helpers called from the clones must be inlined into them to get the wide instructions */
#if defined(__GNUC__)
#define NN_SEQ_INLINE static inline __attribute__((always_inline))
#else
#define NN_SEQ_INLINE static inline
#endif

/* nn_tanh_fast and nn_sigmoid_fast: nn/tanh_fast.h (|error| <= 4e-7, no libm call; lstm.c and
 * attention_additive.c enable the vectoriser for loops over them) */
#include "nn/tanh_fast.h"

#endif
