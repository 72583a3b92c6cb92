/* What the reformer family's files share (models/reformer*.c).
 *
 * The model is one Gamma-block trunk and one of three heads:
 *   classes  z = A_f x_L + b_f over the kernel vocabulary (and the applicability head a), x_L from the problem
 *   pairs    s = A_f x_L + b_f, one score per (problem, configuration), x_L from [x | pair features]
 *   towers   s = u(x) . v(c) + w . q(p, c), u = A_f x_L + b_f from the problem, v and q from the configuration
 * The files depend one way:
 *   reformer_input.c  the input transform (slog, z-score, "ple" bins) and its fit
 *   reformer_trunk.c  the parameter block, the blocks' layout, reset and fold, their forward and backward passes
 *   reformer_list.c   the listwise training the pairs and towers heads share (per problem, its candidates)
 *   reformer_classes.c, reformer_pairs.c, reformer_towers.c   the heads, each a reformer_head
 *   reformer_options.c the options: one table for --config, the model files and the option reference
 *   reformer_file.c   the model files: sizes, options, the input transform, the head's part, the parameters
 *   reformer_view.c   what the model shows export/ (models/view.h)
 *   reformer.c        the family: its config table, the training written once over the head's hooks, prediction
 *                     through the head, the model_family table
 */
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

typedef struct reformer_head reformer_head;

typedef struct reformer {
    model base;
    const reformer_head *mode; /* the head: classes, pairs or towers */
    int depth, hidden, expand;
    nn_norm_kind norm;
    float dropout;
    data_label_kind label;
    float tau;
    float tie;          /* training only: a candidate within this ratio of the fastest shares its label (1: none) */
    int n_pair;           /* pair features (pairs head; 0 otherwise) */
    /* towers head: s = u(x) . v(c) + w . q(p, c), u the blocks and the head (hidden -> tower_dim) over the problem
     * features alone, v a small network over the configuration's own columns, q the interaction pair features */
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
    float app_weight;     /* lambda of the applicability loss; 0: no applicability head (always 0 but in classes) */
    int app_combine;      /* reformer_combine: how predict ranks kernels from the two heads */
    int app_eff;          /* the head's target is the efficiency t_min / t_k (0 unmeasured), not 0/1 measured */
    float app_beta;       /* product: weight beta of log sigmoid(a) */
    float *zmean, *zstd;  /* (n_in), of the (transformed) features, then of the encoding columns */
    nn_params p;          /* learnable: blocks then the head's */
    nn_params state;      /* BatchNorm running statistics */
    nn_gamma blocks[REFORMER_MAX_DEPTH];
    nn_linear head;       /* "head": hidden -> n_kernels (classes), 1 (pairs) or tower_dim (towers) */
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

/* The family's options (models/reformer_options.c's config table fills it). */
enum { REFORMER_INPUT_ZSCORE, REFORMER_INPUT_LOG, REFORMER_INPUT_PLE };
/* The sets of options a model file records, in this order: the trunk's (and the mode), the towers' widths, and
 * after the head's own part the classes head's options. */
enum { REFORMER_FILE_TRUNK = 1, REFORMER_FILE_TOWERS = 2, REFORMER_FILE_HEADS = 4 };
enum { REFORMER_MODE_AUTO, REFORMER_MODE_CLASSES, REFORMER_MODE_PAIRS, REFORMER_MODE_TOWERS };
typedef struct reformer_cfg {
    train_opts train;
    int hidden, depth, expand;
    float dropout, tau, tie, app_weight, app_beta;
    int input, input_bins, app_combine, app_eff;
    int batch_parts;
    int tower_dim, config_hidden;
    int mode;  /* REFORMER_MODE_* */
    int norm;  /* nn_norm_kind */
    int label; /* data_label_kind */
} reformer_cfg;

/* One head: what differs between classes, pairs and towers. The family (reformer.c, reformer_file.c) calls these
 * in a fixed order; a head calls the trunk, the input transform and the listwise training, never the family. */
struct reformer_head {
    const char *name; /* its mode in the config and in model files */
    int valued;       /* scores configurations from their fields: needs a source whose configurations have values
                       * (data_codec_config_width, a benchmark table) and those values */
    int pair_input;   /* the trunk's input holds the pair features (no folded first product of "ple" bins) */
    /* the head's own fields, from the config (training; NULL: none) */
    void (*setup)(reformer *r, const reformer_cfg *cfg);
    /* fits the input transform on the training data; *train_in (n_train, n_in) the training rows' inputs, or NULL */
    int (*input_fit)(reformer *r, const model_train_data *d, int bins, float **train_in);
    /* lays out the head's parameters after the blocks', and draws their initial values after the blocks' */
    void (*layout)(reformer *r);
    void (*reset)(reformer *r, hr_rng *rng);
    /* trains the model built and reset; takes train_in over (freed on failure) */
    int (*fit)(reformer *r, const model_train_data *d, const model_ctx *ctx, const reformer_cfg *cfg,
               const train_opts *o, float *train_in);
    int (*ws_init)(const reformer *r, reformer_ws *w);
    /* scores (n_kernels) over the kernel vocabulary; NULL: the candidates hook over the model's configurations */
    int (*select)(const reformer *r, reformer_ws *w, const float *x, float *scores);
    /* scores (n) of candidate configurations kv (n, n_kernel); NULL: the vocabulary's scores, by name */
    int (*candidates)(const reformer *r, reformer_ws *w, const float *x, const double *kv, int n, float *scores);
    /* the head's own part of a model file, after "mode" (NULL: none); load also sets the head's fields */
    int (*save)(const reformer *r, hid_t g);
    int (*load)(hid_t g, reformer *r);
};
extern const reformer_head reformer_head_classes, reformer_head_pairs, reformer_head_towers;

/* ---- models/reformer_options.c ---- */
extern const char *const reformer_combine_names[]; /* by reformer_combine, NULL-terminated */
extern const char *const reformer_norm_names[];    /* NULL-terminated */
extern const int reformer_norm_values[];           /* nn_norm_kind of each norm name */
extern const char *const reformer_mode_names[];    /* by REFORMER_MODE_*, NULL-terminated */
/* The config table (its own options, then the training loop's) into rows (HR_CONFIG_MAX_OPTIONS), as a table. */
size_t reformer_config_options(hr_config_option *rows);
void reformer_config_table(hr_config_table *t, hr_config_option *rows);
/* --config's options, with the defaults that depend on others (a pairs batch, batch_parts below batch 4). */
int reformer_cfg_parse(const cJSON *c, reformer_cfg *o);
/* The head of a REFORMER_MODE_* (auto: classes). */
const reformer_head *reformer_head_of(int mode);
/* The model's options from cfg (training and loading), and back (saving). */
void reformer_options_apply(reformer *r, const reformer_cfg *cfg);
void reformer_options_of(const reformer *r, reformer_cfg *cfg);

/* ---- models/reformer_file.c: the family's save and load (model_family) ---- */
int reformer_save(const model *mb, hid_t g);
int reformer_load(hid_t g, model *base, model **out);

/* ---- models/reformer_view.c: the family's views (model_family.views, models/view.h) ---- */
struct model_views;
int reformer_views(const model *mb, struct model_views *v);

/* ---- models/reformer_towers.c: v (n, tower_dim) of configurations kv (n, n_kernel) through w's chunk buffers
 * (the problem plays no part) ---- */
void reformer_towers_config(const reformer *r, reformer_ws *w, const double *kv, int n, float *v);

/* ---- models/reformer_trunk.c ---- */
/* Lays out the blocks and the head's parameters, allocates them and the folded inference weights. */
int reformer_build(reformer *r);
/* The blocks' initial values from rng, then the head's. */
void reformer_reset(reformer *r, hr_rng *rng);
/* The single-problem path's folded weights from the trained ones (after training or loading). */
void reformer_fold(reformer *r);
void reformer_free(model *mb);
/* The trunk's training buffers for up to `rows` rows: each block's cache, the activations act[0] (rows, n_in) and
 * act[l] (rows, hidden), l = 1..L, and their gradients dact[1..L]. */
typedef struct reformer_trunk_bufs {
    nn_gamma_cache cache[REFORMER_MAX_DEPTH];
    float *act[REFORMER_MAX_DEPTH + 1];
    float *dact[REFORMER_MAX_DEPTH + 1];
} reformer_trunk_bufs;
int reformer_trunk_bufs_init(reformer_trunk_bufs *t, const reformer *r, int rows);
void reformer_trunk_bufs_free(reformer_trunk_bufs *t, const reformer *r);
/* act[l + 1] = Gamma_l(act[l]), l = 0..L-1, over rows s0..s0+n of act, through the caches cache[0..L) */
void reformer_trunk_forward(reformer *r, nn_gamma_cache *cache, float *const *act, int s0, int n, int train,
                            hr_rng *rng);
/* The blocks' gradients into p from dact[L] of rows 0..n (after the forward pass over them), dact[L-1..1] written */
void reformer_trunk_backward(const reformer *r, nn_params *p, nn_gamma_cache *cache, float *const *act,
                             float *const *dact, int n);
/* The last block's output (hidden) of the problem with features x, in w's buffer: batch norm folded (two
 * matrix-vector products a block) or layer norm through a B = 1 cache. */
const float *reformer_trunk_forward1(const reformer *r, reformer_ws *w, const float *x);
/* The last block's outputs (B, hidden) of B <= REFORMER_PAIR_CHUNK model inputs w->in, in w's buffers. */
const float *reformer_trunk_forward_chunk(const reformer *r, reformer_ws *w, int B);
/* out (head.out) = A_f cur + b_f, the head over one last-block output */
void reformer_head_forward1(const reformer *r, const float *cur, float *out);

/* ---- models/reformer_input.c. in (n_in) = the model input of raw inputs u (n_raw; the features x in classes
 * mode): z-score of u, through slog when the model uses it, then the z-scored encoding columns. ---- */
void reformer_input(const reformer *r, const float *u, float *in);
/* Fits slog / bins (bins > 0: input "ple") / z-score on the training rows and returns their inputs
 * (n_train, n_in) in *in; sets n_ple, ple_*, n_in, zmean, zstd. */
int reformer_input_fit(reformer *r, const model_train_data *d, int bins, float **in);
/* Pairs mode: the same fit, the problem features' columns on the training rows and the pair features' on
 * the training rows' measured configurations (at most REFORMER_FIT_PAIRS of them, evenly spaced). */
int reformer_input_fit_pairs(reformer *r, const model_train_data *d, int bins);
/* Pairs mode: u (n_raw) = [x | pair features of the problem's values pv and configuration kv] */
void reformer_pair_raw(const reformer *r, const float *x, const double *pv, const double *kv, float *u);
/* Fills in_fold and ple_group from the folded first block (after reformer_fold); ple_fast says whether the
 * single-problem path can use them. */
void reformer_fold_input(reformer *r);
/* z (d_out + d_hidden) = block 0's stacked product of features x through in_fold; v (n_features) scratch */
void reformer_first_product(const reformer *r, const float *x, float *v, float *z);

/* ---- models/reformer_list.c: the listwise training of the pairs and towers heads ----
 * A problem set of a table (training or validation rows): each problem's measured configurations and their
 * labels. The training loop passes positions 0..n-1 into it. */
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

/* A listwise fit: per problem, the softmax of its candidates' scores against its labels (nn_xent_seg_*), a
 * mini-batch of problems flattened into their candidates. The head gathers a batch's inputs, scores it from the
 * trunk's output and takes the gradient of the scores back to the trunk's output. */
typedef struct reformer_list reformer_list;
typedef struct reformer_list_head {
    int per_problem; /* the trunk runs once per problem (towers), not once per candidate (pairs) */
    /* the head's sets (after the candidates' of both sets), and its batch buffers (after the list's) */
    int (*init)(reformer_list *f, float *train_in);
    void (*free)(reformer_list *f);
    /* inputs of positions pos[0..n) of set s (0 training, 1 validation): the trunk's act[0], its own, and the
     * labels y; returns the candidates gathered */
    int (*gather)(reformer_list *f, int s, const int *pos, int n);
    /* the scores logit (N) from the trunk's output act[L] */
    void (*forward)(reformer_list *f, int n, int N);
    /* the head's parameter gradients from dlogit (N), and dact[L] of the trunk's rows */
    void (*backward)(reformer_list *f, int n, int N);
} reformer_list_head;
struct reformer_list {
    reformer *r;
    const model_train_data *d;
    const reformer_list_head *h;
    reformer_cands set[2];               /* training, validation */
    int cap;                             /* candidates of a batch or an evaluation chunk, at most */
    int cap_prob;                        /* problems of a batch or an evaluation chunk, at most */
    int *off;                            /* (cap_prob + 1) the batch's offsets */
    reformer_trunk_bufs t;               /* cap rows (pairs) or cap_prob rows (towers) */
    float *logit, *prob, *y, *dlogit;    /* (cap) */
    void *own;                           /* the head's state */
};
/* Trains r with head h's hooks through train/'s loop; train_in as the head's init takes it. */
int reformer_list_fit(reformer *r, const reformer_list_head *h, const model_train_data *d, const train_opts *o,
                      float *train_in);

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
