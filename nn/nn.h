/* nn: a small neural-network training library on OpenBLAS.
 *
 * Conventions (every op in this folder follows them):
 * - Row-major float32 arrays; a batch of B vectors of width D is a (B, D) matrix, a batch of B sequences
 *   of T tokens is (B, T, D). N = B * T when an op treats tokens independently.
 * - Parameters of a model live in one nn_params block: `w` holds every learnable scalar, `dw` the
 *   gradients, both contiguous, with named views (offset, size) used by checkpoints. Layers record
 *   the offsets of their tensors at layout time (nn_*_layout -> nn_params_add), read p->w + offset after
 *   nn_params_alloc, and nn_*_reset fills them (PyTorch's default initialisation). Non-learnable state
 *   (BatchNorm running statistics) lives in a second block of the same type, the "state" block.
 * - forward(x) -> y writes y; backward(dy) accumulates (+=) into the parameter gradients and into dx, so
 *   callers zero dx before the first contribution. Activations kept for backward live in caller-owned
 *   caches (nn_*_cache_init for a batch capacity); forward and backward never allocate, so a B = 1 cache
 *   gives allocation-free single-problem inference.
 * - Randomness (initialisation, dropout) comes from an hr_rng argument. Matrix products use cblas_sgemm.
 * - Optimizers keep their moments as flat arrays parallel to nn_params.w; checkpoints store one HDF5
 *   dataset per view name.
 * Dense ops are declared here; sequence ops (Conv1D, LSTM, additive attention, decoder) in nn/seq.h; the
 * protocol for one training batch cut into parts that threads run side by side in nn/parts.h.
 */
#ifndef HEURIST_NN_H
#define HEURIST_NN_H

#include <hdf5.h>
#include <stddef.h>

#include "core/core.h"

#define NN_MAX_VIEWS 256

typedef struct nn_param_view {
    char name[64];  /* "block0.A1.weight" */
    size_t offset;  /* into nn_params.w / dw */
    size_t size;
} nn_param_view;

typedef struct nn_params {
    float *w;   /* (n): all learnable values */
    float *dw;  /* (n): their gradients */
    size_t n;
    int n_views;
    nn_param_view views[NN_MAX_VIEWS];
} nn_params;

void nn_params_init(nn_params *p);
/* Reserves n scalars under `name` (unique); returns their offset. Only before nn_params_alloc. */
size_t nn_params_add(nn_params *p, const char *name, size_t n);
/* Allocates w and dw (zeroed) for everything reserved so far. */
int nn_params_alloc(nn_params *p);
void nn_params_zero_grad(nn_params *p);
const nn_param_view *nn_params_find(const nn_params *p, const char *name);
void nn_params_free(nn_params *p);

/* ---- linear: y = x W^T + b, W (out, in) as in PyTorch ---- */
typedef struct nn_linear {
    int in, out;
    size_t w, b; /* offsets of W (out, in) and b (out) */
} nn_linear;

/* Reserves "<name>.weight" and "<name>.bias". */
void nn_linear_layout(nn_linear *l, nn_params *p, const char *name, int in, int out);
/* W, b ~ U(-1/sqrt(in), 1/sqrt(in)) */
void nn_linear_reset(const nn_linear *l, nn_params *p, hr_rng *rng);
/* y (B, out) = x (B, in) W^T + b */
void nn_linear_forward(const nn_linear *l, const nn_params *p, const float *x, float *y, int B);
/* dW += dy^T x; db += sum_rows dy; dx (B, in) += dy W (skipped when dx is NULL) */
void nn_linear_backward(const nn_linear *l, nn_params *p, const float *x, const float *dy, float *dx, int B);

/* ---- activations (elementwise over n values; y may alias x) ---- */
/* y = max(x, 0) */
void nn_relu_forward(const float *x, float *y, size_t n);
/* dx += dy * [y > 0] (uses the output, so x may have been overwritten) */
void nn_relu_backward(const float *y, const float *dy, float *dx, size_t n);
/* y = x * Phi(x) (exact erf form, PyTorch's default) */
void nn_gelu_forward(const float *x, float *y, size_t n);
/* dx += dy * (Phi(x) + x phi(x)) */
void nn_gelu_backward(const float *x, const float *dy, float *dx, size_t n);

/* ---- normalisation ---- */
typedef enum nn_norm_kind {
    NN_NORM_BATCH = 0, /* BatchNorm1d over the batch, per feature */
    NN_NORM_LAYER = 1, /* LayerNorm over the features, per row */
} nn_norm_kind;

typedef struct nn_layernorm {
    int d;
    float eps;            /* 1e-5 */
    size_t gamma, beta;   /* offsets of "<name>.weight" (d) and "<name>.bias" (d) */
} nn_layernorm;

void nn_layernorm_layout(nn_layernorm *ln, nn_params *p, const char *name, int d);
/* gamma = 1, beta = 0 */
void nn_layernorm_reset(const nn_layernorm *ln, nn_params *p);
/* y (B, d) = gamma * (x - mean_row) * rstd_row + beta, rstd = 1/sqrt(var_row + eps); mean, rstd (B) are
 * written for backward and may be NULL at inference. y may alias x. */
void nn_layernorm_forward(const nn_layernorm *ln, const nn_params *p, const float *x, float *y, float *mean,
                          float *rstd, int B);
/* xh = (x - mean) rstd; dgamma += sum dy xh; dbeta += sum dy;
 * dx += rstd (g - mean_row(g) - xh mean_row(g xh)) with g = dy gamma */
void nn_layernorm_backward(const nn_layernorm *ln, nn_params *p, const float *x, const float *mean,
                           const float *rstd, const float *dy, float *dx, int B);

typedef struct nn_batchnorm {
    int d;
    float eps;            /* 1e-5 */
    float momentum;       /* 0.1: running = (1 - m) running + m batch, as in PyTorch */
    size_t gamma, beta;   /* learnable: "<name>.weight", "<name>.bias" (d) */
    size_t run_mean, run_var; /* in the state block: "<name>.running_mean", "<name>.running_var" (d) */
} nn_batchnorm;

void nn_batchnorm_layout(nn_batchnorm *bn, nn_params *p, nn_params *state, const char *name, int d);
/* gamma = 1, beta = 0, running mean 0, running var 1 */
void nn_batchnorm_reset(const nn_batchnorm *bn, nn_params *p, nn_params *state);
/* train: mean, var over the B rows (biased var to normalise, unbiased var B/(B-1) into the running
 * average; B > 1). eval: running statistics. y = gamma (x - mean) rstd + beta; mean, rstd (d) are
 * written (the statistics used) and may be NULL in eval mode. y may alias x. */
void nn_batchnorm_forward(const nn_batchnorm *bn, const nn_params *p, nn_params *state, const float *x,
                          float *y, float *mean, float *rstd, int B, int train);
/* train: dx += rstd (g - mean_col(g) - xh mean_col(g xh)), g = dy gamma; eval: dx += g rstd */
void nn_batchnorm_backward(const nn_batchnorm *bn, nn_params *p, const float *x, const float *mean,
                           const float *rstd, const float *dy, float *dx, int B, int train);

/* ---- dropout (inverted): y = x * mask, mask = [u >= rate] / (1 - rate), u ~ U[0,1) from rng ---- */
/* mask (n) is written for backward; rate == 0 copies (y may alias x). */
void nn_dropout_forward(const float *x, float *y, float *mask, size_t n, float rate, hr_rng *rng);
/* dx += dy * mask */
void nn_dropout_backward(const float *dy, const float *mask, float *dx, size_t n);

/* ---- softmax and cross-entropy with soft targets ---- */
/* p (B, C) = softmax(z) per row (p may alias z) */
void nn_softmax_forward(const float *z, float *p, int B, int C);
/* Returns loss = -(1/B) sum_b sum_i y_bi log softmax(z_b)_i and writes prob (B, C) = softmax(z). */
float nn_xent_forward(const float *z, const float *y, float *prob, int B, int C);
/* dz (B, C) += scale (prob sum_i y_i - y) / B   (= scale (prob - y) / B for targets summing to 1) */
void nn_xent_backward(const float *prob, const float *y, float *dz, int B, int C, float scale);

/* ---- softmax cross-entropy over segments of variable length (a problem's candidates) ----
 * Segment s holds entries off[s] .. off[s+1] of z, y, prob (N = off[S]); an empty segment adds nothing. */
/* Returns loss = -(1/S) sum_s sum_{i in s} y_i log softmax_s(z)_i and writes prob = softmax_s(z) per segment. */
float nn_xent_seg_forward(const float *z, const float *y, const int *off, int S, float *prob);
/* dz_i += scale (prob_i sum_{j in s} y_j - y_i) / S for i in segment s */
void nn_xent_seg_backward(const float *prob, const float *y, const int *off, int S, float *dz, float scale);

/* ---- dot products of segments with their rows (a two-tower score: problem s, its candidates i) ----
 * Segment s holds rows off[s] .. off[s+1] of v (N, D) and z (N); u (S, D) is one row per segment. */
/* z_i = u_s . v_i for i in segment s */
void nn_seg_dot_forward(const float *u, const float *v, const int *off, int S, int D, float *z);
/* du_s += sum_{i in s} dz_i v_i; dv_i += dz_i u_s (either may be NULL to skip it) */
void nn_seg_dot_backward(const float *u, const float *v, const int *off, int S, int D, const float *dz, float *du,
                         float *dv);

/* ---- per-class binary cross-entropy on logits (independent sigmoids, targets y in [0, 1]) ---- */
/* Returns loss = (1/B) sum_b sum_i [softplus(z_bi) - y_bi z_bi] (= -y log s - (1-y) log(1-s), s = sigmoid(z),
 * without overflow) and writes prob (B, C) = sigmoid(z). */
float nn_bce_logits_forward(const float *z, const float *y, float *prob, int B, int C);
/* dz (B, C) += scale (prob - y) / B */
void nn_bce_logits_backward(const float *prob, const float *y, float *dz, int B, int C, float scale);
/* log sigmoid(z) = -softplus(-z), finite for any finite z */
float nn_log_sigmoid(float z);

/* ---- embedding: y_n = E[ids_n], E (count, d) ---- */
typedef struct nn_embedding {
    int count, d;
    size_t w; /* "<name>.weight" (count, d) */
} nn_embedding;

void nn_embedding_layout(nn_embedding *e, nn_params *p, const char *name, int count, int d);
/* E ~ N(0, 1) as in PyTorch */
void nn_embedding_reset(const nn_embedding *e, nn_params *p, hr_rng *rng);
/* y (N, d) = E[ids] */
void nn_embedding_forward(const nn_embedding *e, const nn_params *p, const int *ids, float *y, int N);
/* dE[ids_n] += dy_n */
void nn_embedding_backward(const nn_embedding *e, nn_params *p, const int *ids, const float *dy, int N);

/* ---- multi-head self-attention over (B, T, D), H heads of width D/H (PyTorch MultiheadAttention) ----
 * [Q K V] = x Win^T + bin;  per head: P = softmax(Q K^T / sqrt(D/H));  y = concat_h(P V) Wo^T + bo */
typedef struct nn_mhsa {
    int d, heads;
    nn_linear in_proj;  /* "<name>.in_proj": D -> 3D, rows Q then K then V */
    nn_linear out_proj; /* "<name>.out_proj": D -> D */
} nn_mhsa;

typedef struct nn_mhsa_cache {
    int cap_b, cap_t;
    float *qkv;  /* (B, T, 3D) */
    float *att;  /* (B, H, T, T): softmax probabilities */
    float *ctx;  /* (B, T, D): heads concatenated, before out_proj */
    float *dctx; /* (B, T, D) workspace */
    float *dqkv; /* (B, T, 3D) workspace */
    float *datt; /* (T, T) workspace */
} nn_mhsa_cache;

void nn_mhsa_layout(nn_mhsa *a, nn_params *p, const char *name, int d, int heads);
/* xavier-uniform in_proj, zero biases, out_proj as a Linear (PyTorch's choices) */
void nn_mhsa_reset(const nn_mhsa *a, nn_params *p, hr_rng *rng);
int nn_mhsa_cache_init(nn_mhsa_cache *c, const nn_mhsa *a, int max_b, int t);
void nn_mhsa_cache_free(nn_mhsa_cache *c);
/* y (B, T, D) = MHSA(x (B, T, D)); B and T up to the cache's capacity */
void nn_mhsa_forward(const nn_mhsa *a, const nn_params *p, nn_mhsa_cache *c, const float *x, float *y, int B,
                     int T);
/* dS = P (dP - rowsum(dP P)); dQ = dS K / sqrt(dh); dK = dS^T Q / sqrt(dh); dV = P^T dctx; dx += dqkv Win */
void nn_mhsa_backward(const nn_mhsa *a, nn_params *p, nn_mhsa_cache *c, const float *x, const float *dy,
                      float *dx, int B, int T);

/* ---- feed-forward block: y = W2 ReLU(W1 x + b1) + b2 over N rows ---- */
typedef struct nn_ffn {
    int d, d_ff;
    nn_linear l1; /* "<name>.linear1": d -> d_ff */
    nn_linear l2; /* "<name>.linear2": d_ff -> d */
} nn_ffn;

typedef struct nn_ffn_cache {
    int cap;
    float *a;  /* (N, d_ff): ReLU(W1 x + b1) */
    float *da; /* (N, d_ff) workspace */
} nn_ffn_cache;

void nn_ffn_layout(nn_ffn *f, nn_params *p, const char *l1_name, const char *l2_name, int d, int d_ff);
void nn_ffn_reset(const nn_ffn *f, nn_params *p, hr_rng *rng);
int nn_ffn_cache_init(nn_ffn_cache *c, const nn_ffn *f, int max_n);
void nn_ffn_cache_free(nn_ffn_cache *c);
void nn_ffn_forward(const nn_ffn *f, const nn_params *p, nn_ffn_cache *c, const float *x, float *y, int N);
/* da = (dy W2) [a > 0]; dx += da W1 */
void nn_ffn_backward(const nn_ffn *f, nn_params *p, nn_ffn_cache *c, const float *x, const float *dy, float *dx,
                     int N);

/* ---- Gamma-block (Reformer, eq. 1): y = ReLU(A1 x + b1 + A3 T(x) + b3),
 *      T(x) = dropout(ReLU(norm(A2 x + b2))), norm = BatchNorm1d or LayerNorm over d_hidden ---- */
typedef struct nn_gamma {
    int d_in, d_hidden, d_out;
    nn_norm_kind norm;
    float dropout;
    nn_linear a1;    /* "<name>.A1": d_in -> d_out, the linear path */
    nn_linear a2;    /* "<name>.A2": d_in -> d_hidden, first layer of T; its weight follows A1's, its bias b1 */
    nn_batchnorm bn; /* "<name>.norm" when norm == NN_NORM_BATCH */
    nn_layernorm ln; /* "<name>.norm" when norm == NN_NORM_LAYER */
    nn_linear a3;    /* "<name>.A3": d_hidden -> d_out */
} nn_gamma;

typedef struct nn_gamma_cache {
    int cap;
    int train;      /* mode of the last forward (backward follows it) */
    float *h;       /* (B, d_hidden): A2 x + b2 */
    float *r;       /* (B, d_hidden): ReLU(norm(h)) */
    float *t;       /* (B, d_hidden): dropout(r); unused (r is used) in eval mode or with dropout 0 */
    float *mask;    /* (B, d_hidden): dropout mask */
    float *mean;    /* (max(B, d_hidden)): norm statistics, per feature (batch) or per row (layer) */
    float *rstd;    /* (max(B, d_hidden)) */
    float *dz;      /* (B, d_out + d_hidden) workspace: [dz | dh], the gradients w.r.t. A1 x + A3 t + b and h */
    float *dt;      /* (B, d_hidden) workspace: gradient w.r.t. t, then w.r.t. the norm output */
} nn_gamma_cache;

/* `state` receives BatchNorm running statistics (may be NULL for NN_NORM_LAYER). */
void nn_gamma_layout(nn_gamma *g, nn_params *p, nn_params *state, const char *name, int d_in, int d_hidden,
                     int d_out, nn_norm_kind norm, float dropout);
void nn_gamma_reset(const nn_gamma *g, nn_params *p, nn_params *state, hr_rng *rng);
int nn_gamma_cache_init(nn_gamma_cache *c, const nn_gamma *g, int max_b);
void nn_gamma_cache_free(nn_gamma_cache *c);
/* y (B, d_out); train selects batch statistics and dropout (rng used only then). */
void nn_gamma_forward(const nn_gamma *g, const nn_params *p, nn_params *state, nn_gamma_cache *c,
                      const float *x, float *y, int B, int train, hr_rng *rng);
/* dz = dy [y > 0]; dA1 += dz^T x; dA3 += dz^T t; dh = norm'(ReLU'(dropout'(dz A3))); dx += dz A1 + dh A2
 * (dx may be NULL for a first block whose input needs no gradient) */
void nn_gamma_backward(const nn_gamma *g, nn_params *p, nn_gamma_cache *c, const float *x, const float *y,
                       const float *dy, float *dx, int B);

/* ---- transformer encoder block (torch.nn.TransformerEncoderLayer, batch_first, ReLU, no dropout) ----
 * post-norm (PyTorch default): s = LN1(x + MHSA(x)); y = LN2(s + FFN(s))
 * pre-norm (norm_first):       s = x + MHSA(LN1(x)); y = s + FFN(LN2(s)) */
typedef struct nn_transformer {
    int d, heads, d_ff, norm_first;
    nn_mhsa attn;       /* "<name>.self_attn" */
    nn_ffn ffn;         /* "<name>.linear1", "<name>.linear2" */
    nn_layernorm ln1;   /* "<name>.norm1" */
    nn_layernorm ln2;   /* "<name>.norm2" */
} nn_transformer;

typedef struct nn_transformer_cache {
    int cap_b, cap_t;
    nn_mhsa_cache attn;
    nn_ffn_cache ffn;
    float *s1;          /* (N, D): x + attention, input of LN1 (post) or LN2 (pre) */
    float *n1;          /* (N, D): LN1 output */
    float *s2;          /* (N, D): LN1 out + FFN, input of LN2 (post-norm only) */
    float *n2;          /* (N, D): LN2 output (pre-norm only) */
    float *mean1, *rstd1, *mean2, *rstd2; /* (N) */
    float *d1, *d2, *d3; /* (N, D) workspaces */
} nn_transformer_cache;

void nn_transformer_layout(nn_transformer *tb, nn_params *p, const char *name, int d, int heads, int d_ff,
                           int norm_first);
void nn_transformer_reset(const nn_transformer *tb, nn_params *p, hr_rng *rng);
int nn_transformer_cache_init(nn_transformer_cache *c, const nn_transformer *tb, int max_b, int t);
void nn_transformer_cache_free(nn_transformer_cache *c);
/* y (B, T, D) from x (B, T, D); y must not alias x */
void nn_transformer_forward(const nn_transformer *tb, const nn_params *p, nn_transformer_cache *c,
                            const float *x, float *y, int B, int T);
void nn_transformer_backward(const nn_transformer *tb, nn_params *p, nn_transformer_cache *c, const float *x,
                             const float *dy, float *dx, int B, int T);

/* ---- optimizers over the flat block (PyTorch semantics); moments m, v are parallel to w ---- */
typedef enum nn_optim_kind {
    NN_OPTIM_SGD = 0,   /* g += wd w; m = mu m + g; w -= lr m */
    NN_OPTIM_ADAM = 1,  /* g += wd w; m, v EMAs of g, g^2; w -= lr m^ / (sqrt(v^) + eps) */
    NN_OPTIM_ADAMW = 2, /* w -= lr wd w; then Adam without decay in g */
} nn_optim_kind;

typedef struct nn_optim_config {
    nn_optim_kind kind;
    float momentum;     /* SGD */
    float beta1, beta2; /* Adam */
    float eps;          /* Adam */
    float weight_decay;
} nn_optim_config;

typedef struct nn_optim {
    nn_optim_config cfg;
    size_t n;
    long step;  /* steps taken (Adam bias correction) */
    float *m;   /* (n): SGD momentum buffer or Adam first moment */
    float *v;   /* (n): Adam second moment (NULL for SGD) */
} nn_optim;

/* Defaults: momentum 0.9, betas (0.9, 0.999), eps 1e-8, weight decay 0 (0.01 for AdamW). */
nn_optim_config nn_optim_defaults(nn_optim_kind kind);
int nn_optim_init(nn_optim *o, const nn_optim_config *cfg, size_t n);
void nn_optim_free(nn_optim *o);
/* One update of p->w from p->dw at learning rate lr. */
void nn_optim_step(nn_optim *o, nn_params *p, float lr);
/* The same step cut into slices for threads: nn_optim_next once, then nn_optim_update over slices covering
 * [0, n). Each value's update reads only its own slot, so the slices give nn_optim_step's bits. */
void nn_optim_next(nn_optim *o);
void nn_optim_update(nn_optim *o, nn_params *p, float lr, size_t lo, size_t hi);
/* Global-norm clipping: if ||dw||_2 > max_norm, dw *= max_norm / ||dw||. Returns the norm before clipping. */
float nn_grad_clip(nn_params *p, float max_norm);

/* ---- learning-rate schedules: a pure function of the step ---- */
typedef enum nn_lr_decay {
    NN_LR_CONSTANT = 0,
    NN_LR_COSINE = 1, /* lr_min + (lr - lr_min) (1 + cos(pi s / (total - warmup))) / 2 */
    NN_LR_STEP = 2,   /* lr gamma^floor(s / step_size) */
} nn_lr_decay;

typedef struct nn_lr_schedule {
    float lr;          /* peak learning rate */
    long warmup;       /* steps of linear warm-up: lr (step + 1) / warmup */
    nn_lr_decay decay; /* after warm-up; s = step - warmup */
    long total;        /* cosine: step at which lr reaches lr_min */
    float lr_min;      /* cosine floor */
    long step_size;    /* step decay period */
    float gamma;       /* step decay factor */
} nn_lr_schedule;

float nn_lr_at(const nn_lr_schedule *s, long step);

/* ---- checkpoints: HDF5 group with one float32 dataset per view name ----
 * <group>/w/<view>, and with an optimizer <group>/m/<view>, <group>/v/<view> and attribute "step".
 * Reading checks that every view exists with its size and finite values (a NaN or infinite weight is refused,
 * naming the tensor) and that the group holds no other tensors. */
int nn_checkpoint_write(hid_t loc, const char *group, const nn_params *p, const nn_optim *o);
int nn_checkpoint_read(hid_t loc, const char *group, nn_params *p, nn_optim *o);

/* Sequence ops (Conv1D, LSTM, additive attention, decoder) for the seq2seq model. */
#include "nn/seq.h"

#endif
