/* What the reformer family shares with its exporter (models/reformer_export.c). */
#ifndef HEURIST_MODELS_REFORMER_INTERNAL_H
#define HEURIST_MODELS_REFORMER_INTERNAL_H

#include <math.h>
#include <stdio.h>

#include "models/model.h"
#include "nn/nn.h"
#include "train/train.h"

#define REFORMER_VERSION 5 /* 2: the applicability head; 3: the "ple" input; 4: the "pairs" mode; 5: "towers" */
#define REFORMER_MAX_DEPTH 16
#define REFORMER_EVAL_CHUNK 1024
#define REFORMER_MAX_PARTS 8 /* batch_parts */
#define REFORMER_PAIR_BATCH 32  /* default batch of pairs mode, in problems */
#define REFORMER_PAIR_CHUNK 256 /* candidates a pairs-mode prediction scores in one pass */
#define REFORMER_FIT_PAIRS (1 << 18) /* training pairs the pair features' transform is fitted on, at most */

typedef struct reformer {
    model base;
    int depth, hidden, expand;
    nn_norm_kind norm;
    float dropout;
    data_label_kind label;
    float tau;
    int pairs;            /* mode "pairs" (benchmark tables): one score per (problem, configuration) from the raw
                           * input u = [x | data_table_pair_features(pv, kv)], the head hidden -> 1 */
    int n_pair;           /* pair features (pairs mode; 0 otherwise) */
    /* mode "towers" (benchmark tables): s = u(x) . v(c) + w . q(p, c) + b, u the blocks and the head (hidden ->
     * tower_dim) over the problem features alone, v a small network over the configuration's own columns, q the
     * interaction pair features (models/reformer_towers.c) */
    int towers;
    int tower_dim;        /* D: width of u and v */
    int cfg_hidden;       /* width of the configuration tower's hidden layer */
    int n_cfg;            /* configuration inputs: the first n_cfg pair features (the kernel columns' encodings) */
    int n_q;              /* interaction inputs q: the pair features after them */
    float *cfg_mean, *cfg_std; /* (n_cfg) z-score of the configuration inputs */
    float *q_mean, *q_std;     /* (n_q) z-score of slog q */
    nn_linear cfg1;       /* "config.0": n_cfg -> cfg_hidden, then ReLU */
    nn_linear cfg2;       /* "config.1": cfg_hidden -> tower_dim */
    nn_linear inter;      /* "interaction": n_q -> 1, w and b */
    int n_raw;            /* raw inputs u: n_features + n_pair */
    int input_log;        /* raw inputs pass through slog first (input "log" or "ple") */
    int n_in;             /* model inputs: n_raw, plus n_ple with input "ple" */
    int n_ple;            /* piecewise-linear encoding columns (input "ple"; 0 otherwise) */
    int *ple_src;         /* (n_ple) the raw input column c encodes */
    float *ple_lo, *ple_hi; /* (n_ple) its bin: value clamp((slog x - lo) / (hi - lo), 0, 1) */
    float app_weight;     /* lambda of the applicability loss; 0: no applicability head */
    int app_combine;      /* reformer_combine: how predict ranks kernels from the two heads */
    int app_eff;          /* the head's target is the efficiency t_min / t_k (0 unmeasured), not 0/1 measured */
    float app_beta;       /* product: weight beta of log sigmoid(a) */
    float *zmean, *zstd;  /* (n_in), of the (transformed) features, then of the encoding columns */
    nn_params p;          /* learnable: blocks then head */
    nn_params state;      /* BatchNorm running statistics */
    nn_gamma blocks[REFORMER_MAX_DEPTH];
    nn_linear head;       /* "head": hidden -> n_kernels (classes) or 1 (pairs) */
    nn_linear app;        /* "app": hidden -> n_kernels, when app_weight > 0 */
    /* single-problem inference */
    float *fold;          /* batch norm: per block [W12 ((d_out + d_hidden), d_in) | b12 | A3 (d_out, d_hidden)] */
    size_t fold_off[REFORMER_MAX_DEPTH];
    /* input "ple" with batch norm: the first block's product over the encoding, see reformer_fold_input */
    int ple_fast;         /* the folded form below is in use (the bins of each feature follow each other) */
    int n_ple_groups;     /* features with bins */
    int *ple_group;       /* (n_ple_groups + 1) first encoding column of each feature's bins, then n_ple */
    float *in_fold;       /* [b (o) | W_x (n_features, o) | W_e (n_ple, o) | C_e (n_ple, o)], o = d_out + d_hidden */
} reformer;

/* A prediction's scratch: the input and two block outputs, the applicability logits, and for layer norm
 * the blocks' caches (B = 1, or REFORMER_PAIR_CHUNK in pairs mode). Pairs mode: a chunk's raw inputs and
 * model inputs, the stacked block products and the block outputs. */
typedef struct reformer_ws {
    float *buf; /* x (n_in) | two (hidden + expand) buffers | a (n_kernels); pairs: u (n_raw) */
    nn_gamma_cache one[REFORMER_MAX_DEPTH];
    double *pv;  /* pairs: (n_problem + n_hardware) the problem's values */
    float *in;   /* pairs: (REFORMER_PAIR_CHUNK, n_in) */
    float *z;    /* pairs: (REFORMER_PAIR_CHUNK, hidden + expand) */
    float *y[2]; /* pairs: (REFORMER_PAIR_CHUNK, hidden) */
    /* towers: u (tower_dim), one pair's features (n_pair), and per chunk the configuration inputs (C, n_cfg),
     * the hidden layer (C, cfg_hidden), v (C, tower_dim) and q (C, n_q) */
    float *u, *pf, *cin, *ch, *cv, *qin;
} reformer_ws;

/* Ranking from the two heads: log softmax(z) + log sigmoid(a); log softmax(z) with kernels whose
 * sigmoid(a) < 1/2 vetoed; or sigmoid(a) alone (with the efficiency target, the expected efficiency). */
typedef enum reformer_combine {
    REFORMER_COMBINE_PRODUCT,
    REFORMER_COMBINE_MASK,
    REFORMER_COMBINE_HEAD,
} reformer_combine;

/* models/reformer.c, for the trainer (models/reformer_train.c) */
extern const char *const reformer_combine_names[]; /* by reformer_combine, NULL-terminated */
extern const char *const reformer_norm_names[];    /* NULL-terminated */
extern const int reformer_norm_values[];           /* nn_norm_kind of each norm name */
/* Name to value for the files, with an error naming the value. */
int reformer_parse_combine(const char *s, int *out);
int reformer_parse_norm(const char *s, nn_norm_kind *k);
/* The family's config table (models/reformer_train.c). */
size_t reformer_config_options(hr_config_option *rows);
/* Lays out blocks and head, allocates parameters and the folded inference weights. */
int reformer_build(reformer *r);
/* The single-problem path's folded weights from the trained ones (after training or loading). */
void reformer_fold(reformer *r);
/* scores (K) in place over the head z from the applicability head a, as combine `how` ranks them */
void reformer_combine_heads(float *z, const float *a, int K, int how, float beta);
void reformer_free(model *mb);
/* models/reformer_train.c: the family's train entry, and the OpenBLAS threads it wants (model_family) */
int reformer_train(const model_train_data *d, const model_ctx *ctx, model **out);
int reformer_train_blas_threads(const cJSON *config, int threads);

/* models/reformer_input.c. in (n_in) = the model input of raw inputs u (n_raw; the features x in classes
 * mode): z-score of u, through slog when the model uses it, then the z-scored encoding columns. */
void reformer_input(const reformer *r, const float *u, float *in);
/* Fits slog / bins (bins > 0: input "ple") / z-score on the training rows and returns their inputs
 * (n_train, n_in) in *in; sets n_ple, ple_*, n_in, zmean, zstd. */
int reformer_input_fit(reformer *r, const model_train_data *d, int bins, float **in);
/* Pairs mode: the same fit, the problem features' columns on the training rows and the pair features' on
 * the training rows' measured configurations (at most REFORMER_FIT_PAIRS of them, evenly spaced). */
int reformer_input_fit_pairs(reformer *r, const model_train_data *d, int bins);
/* Pairs mode: u (n_raw) = [x | pair features of the problem's values pv and configuration kv] */
void reformer_pair_raw(const reformer *r, const float *x, const double *pv, const double *kv, float *u);

/* models/reformer_pairs.c: pairs-mode training (after reformer_train set the model up), scratch and scores */
int reformer_pairs_fit(reformer *r, const model_train_data *d, const model_ctx *ctx, const train_opts *o);
int reformer_pairs_ws_init(const reformer *r, reformer_ws *w);
/* A problem set of a table (training or validation rows) as the pairs and towers modes train on it: each
 * problem's measured configurations and their labels. The training loop passes positions 0..n-1 into it. */
typedef struct reformer_cands {
    const int *rows; /* (n) dataset rows */
    int n;
    int *pos;        /* (n) 0..n-1 */
    int *off;        /* (n + 1) problem i's candidates are entries off[i] .. off[i+1] */
    int *kern;       /* (nnz) configuration of an entry */
    float *y;        /* (nnz) its label (the model's label kind, restricted to the measured configurations) */
    int most;        /* largest candidate count of a problem */
} reformer_cands;
int reformer_cands_init(reformer_cands *c, const reformer *r, const data_select *sel, const int *rows, int n);
void reformer_cands_free(reformer_cands *c);
/* Of a validation batch of m problems (pos[q] indexes rows / off / kern, the set's dataset rows, candidate offsets
 * and configurations), how many have a fastest configuration as their highest-scored candidate (logit, entries
 * boff[q] .. boff[q+1]; the first of equal scores, as eval/ breaks ties). Shared by the pairs and towers modes. */
long reformer_pairs_top1_hits(const data_select *sel, const float *logit, const int *boff, int m, const int *pos,
                              const int *rows, const int *off, const int *kern);
int reformer_pairs_predict_candidates(const model *m, void *ws, const float *x, const double *kv, int n,
                                      float *scores);
/* models/reformer_towers.c: towers-mode input fit, training, scratch and scores */
/* The configuration inputs' z-score and q's (slog, z-score) from the training pairs; sets n_cfg, n_q. */
int reformer_towers_input_fit(reformer *r, const model_train_data *d);
/* Reads a towers file's widths and z-scores (models/reformer.c's loader, before reformer_build). */
int reformer_towers_load(hid_t g, reformer *r);
/* cin (n_cfg) and q (n_q): the model inputs of one (problem, configuration) pair from its pair features pf */
void reformer_towers_inputs(const reformer *r, const float *pf, float *cin, float *q);
/* train_in (n_train, n_in): the training rows' problem inputs (reformer_input_fit), taken over */
int reformer_towers_fit(reformer *r, const model_train_data *d, const model_ctx *ctx, const train_opts *o,
                        float *train_in);
int reformer_towers_ws_init(const reformer *r, reformer_ws *w);
int reformer_towers_predict_candidates(const model *m, void *ws, const float *x, const double *kv, int n,
                                       float *scores);
/* v (n, tower_dim) of configurations kv (n, n_kernel) through w's chunk buffers (the problem plays no part) */
void reformer_towers_config(const reformer *r, reformer_ws *w, const double *kv, int n, float *v);
/* u (tower_dim) of the problem with features x: the blocks and the head, as classes mode computes its scores */
void reformer_problem_forward(const reformer *r, reformer_ws *w, const float *x, float *u);

/* Fills in_fold and ple_group from the folded first block (after reformer_fold); ple_fast says whether the
 * single-problem path can use them. */
void reformer_fold_input(reformer *r);
/* z (d_out + d_hidden) = block 0's stacked product of features x through in_fold; v (n_features) scratch */
void reformer_first_product(const reformer *r, const float *x, float *v, float *z);

/* slog(v) = sign(v) log2(1 + |v|): compresses the raw size fields (channels, batch, spatial sizes span
 * four decades) before the z-score; 0/1 indicators stay 0/1, exactly, and without a call (they are over
 * half of all feature values). */
static inline float reformer_slog(float v)
{
    if (v == 0.0f) return 0.0f;
    if (v == 1.0f) return 1.0f;
    return v >= 0.0f ? log2f(1.0f + v) : -log2f(1.0f - v);
}

/* Piecewise-linear encoding (input "ple"): how far v lies through the bin [lo, hi], 0 below, 1 above. The
 * trainer, reformer_predict and the exported runtime all evaluate this expression. */
static inline float reformer_ple(float v, float lo, float hi)
{
    const float t = (v - lo) / (hi - lo);
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

#endif
