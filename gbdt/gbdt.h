/* gbdt: gradient-boosted decision trees over float matrices, written from scratch (no tree library).
 *
 * A booster predicts raw scores F_k(x) = base_k + sum_t [tree t belongs to class k] tree_t(x), k < K
 * (K = 1 for L2 regression, K = num_class for softmax); predictions are F (L2) or softmax(F) (multiclass).
 * Training is LightGBM-style: features are quantile-binned once (bin.c), each tree grows leaf-wise (best
 * first, tree.c) from gradient/hessian histograms (histogram.c; the smaller child is built, the larger is
 * parent - smaller; a softmax iteration's K root histograms come from one pass over the bins; with
 * quantized_grad the sums are of gradients discretised to a few integer levels, qgrad.c), with numeric splits "x <= threshold" that learn where NaN goes and categorical
 * splits "int(x) in set" (bitset). The split gain and leaf value follow second-order boosting:
 *   gain = T(G_L)^2/(H_L+l2) + T(G_R)^2/(H_R+l2) - T(G)^2/(H+l2),  leaf = -lr * T(G)/(H+l2),
 *   T(G) = sign(G) max(0, |G| - l1)   (G, H: sums of gradients and hessians over a node's rows).
 * Softmax leaves keep that Newton step unless it overshoots the exact minimiser of the leaf's loss (tiny
 * hessians p (1 - p) of rare or saturated classes), which then replaces it (objective.c).
 * Multiclass iterations grow their K trees in parallel, one per thread, each thread taking the next class.
 * Nodes use LightGBM's tree layout and decision rules, so models round-trip through its text format
 * (lightgbm.c); our own format is HDF5 (io.c). Once the trees are final (trained, loaded, imported) they
 * are also laid out for prediction as 16-byte records in one array (pack.c), with the same decisions.
 * Matrices are row-major: x is (n, d), x[i * d + j].
 * Everything is deterministic: same data, params and seed give a bit-identical model for any thread count.
 * With histogram INT (gradients on a fixed-point grid, exact sums; quant.c) also for any row order and for
 * training spread over processes (params.comm: each fits a block of the rows, histograms summed by all-reduce).
 * Errors: functions return 0 or a negative hr_status with hr_last_error() set; nothing is printed.
 */
#ifndef HEURIST_GBDT_H
#define HEURIST_GBDT_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

typedef enum gbdt_objective {
    GBDT_OBJECTIVE_L2 = 0,      /* loss = w (F - y)^2 / 2:  g = F - y,  h = 1 */
    GBDT_OBJECTIVE_SOFTMAX = 1, /* loss = -w sum_k y_k log p_k, p = softmax(F):  g_k = p_k - y_k,  h_k = p_k (1 - p_k) */
    /* LambdaRank (Burges 2010) over the rows of each query (gbdt_data.query): every pair i, j with y_i > y_j
     * adds |dNDCG_ij| log(1 + exp(-(F_i - F_j))), dNDCG_ij the change in the query's NDCG (gain 2^y - 1,
     * discount 1 / log2(2 + position by F)) if i and j swapped places:  with r = 1 / (1 + exp(F_i - F_j)),
     * g_i -= |dNDCG| r, g_j += |dNDCG| r, h_i, h_j += |dNDCG| r (1 - r). Validation metric 1 - mean NDCG@1. */
    GBDT_OBJECTIVE_LAMBDARANK = 2,
} gbdt_objective;

typedef enum gbdt_importance {
    GBDT_IMPORTANCE_SPLIT = 0, /* number of splits on the feature */
    GBDT_IMPORTANCE_GAIN = 1,  /* total gain of splits on the feature */
} gbdt_importance;

/* How histograms sum gradients and hessians. */
typedef enum gbdt_histogram {
    GBDT_HISTOGRAM_FLOAT = 0, /* the doubles as computed: sums depend (in the last bits) on the row order */
    /* each round's gradients and hessians rounded to a fixed-point grid, per class a power of two 2^-q so fine
     * that any sum over the rows stays below 2^53 grid steps: every sum is then exact in double, so it does not
     * depend on the row order nor on how the rows are split over processes (see quant.c) */
    GBDT_HISTOGRAM_INT = 1,
} gbdt_histogram;

/* The most classes one softmax booster takes. */
#define GBDT_SOFTMAX_MAX_CLASSES 256

typedef struct gbdt_params {
    gbdt_objective objective;
    int num_class;                  /* K for softmax (2..GBDT_SOFTMAX_MAX_CLASSES); 1 for L2 */
    int num_rounds;                 /* boosting iterations (each adds K trees) */
    double learning_rate;
    int num_leaves;
    int max_depth;                  /* <= 0: unlimited */
    int min_data_in_leaf;
    double min_sum_hessian_in_leaf;
    double lambda_l1, lambda_l2, min_gain_to_split;
    double bagging_fraction;        /* rows sampled per bag, without replacement */
    int bagging_freq;               /* re-bag every this many iterations; 0: no bagging */
    double feature_fraction;        /* features sampled per tree */
    int max_bin;                    /* value bins per feature (a NaN bin is extra), 2..65535 */
    int max_cat_to_onehot;          /* categorical with <= this many categories: one-vs-rest splits */
    int max_cat_threshold;          /* most categories on the left side of a categorical split */
    double cat_l2, cat_smooth;      /* categorical regularisation, as in LightGBM */
    int min_data_per_group;         /* least rows per category considered in a many-vs-many split */
    int boost_from_average;         /* 1: base score from the labels (mean / log class priors) */
    double base_score;              /* used for every class when boost_from_average == 0 */
    int early_stopping_rounds;      /* 0: off; else stop when the validation metric has not improved */
    int log_every;                  /* log progress every this many iterations; 0: never */
    uint64_t seed;
    int num_threads;                /* <= 0: all cores; never changes the result */
    /* called after every boosting round with the round (1-based), the validation metric and the
     * validation rows' raw scores (valid n, num_class) of the model so far; NULL, or no validation
     * set: not called. For training curves; it must not change anything the trainer reads. */
    void (*on_round)(void *ctx, int round, double valid_metric, const double *valid_scores);
    void *on_round_ctx;
    gbdt_histogram histogram;
    /* 1: each round's gradients and hessians discretised per class to a few integer levels by stochastic
     * rounding (qgrad.c), histograms summed as integers (8 bytes a bin), split gains from those sums scaled
     * back (LightGBM's use_quantized_grad). Needs histogram FLOAT and one process. */
    int quantized_grad;
    int grad_bins;                  /* quantized_grad: levels, g in [-grad_bins/2, grad_bins/2], h in [0, grad_bins]; even, 2..64 */
    int renew_leaf;                 /* quantized_grad: 1: leaf values from the true gradients of each leaf's rows */
    /* quantized_grad: 1: the row counts of a split's sides (min_data_in_leaf, a category's rows) estimated from
     * their hessian sums as LightGBM does, round(H_side n_leaf / H_leaf), n_leaf the leaf's exact count; then the
     * histograms skip the rows whose quantized gradient and hessian are both 0, which add nothing else */
    int hessian_counts;
    /* Data-parallel training (NULL or size 1: one process). Every process calls gbdt_booster_train with the
     * same data and params; process r bins and fits the contiguous block [n r / size, n (r + 1) / size) of
     * the training rows, histograms and the other sums over rows are added up through comm, and every
     * process grows the same trees: the booster is the one a single process trains with histogram INT
     * (which comm requires). Bin boundaries, the base score and the validation metric come from the whole
     * data on every process. Calls comm from the calling thread only. */
    const hr_comm *comm;
} gbdt_params;

/* Training or validation data. Labels: y (n) regression targets or class indices 0..K-1, or
 * y_prob (n, K) soft labels whose rows sum to 1 (exactly one of the two). */
typedef struct gbdt_data {
    const float *x;                  /* (n, d) features, NaN = missing */
    size_t n;
    int d;
    const float *y;                  /* (n) or NULL */
    const float *y_prob;             /* (n, K) or NULL */
    const float *weight;             /* (n) per-row weights or NULL (all 1) */
    const double *init_score;        /* (n, K) raw scores added before the first tree, or NULL */
    const uint8_t *is_categorical;   /* (d) 1: feature holds non-negative integer categories; NULL: none */
    const char *const *feature_names;/* (d) or NULL ("f0", "f1", ...) */
    const size_t *query;             /* lambdarank: (n_query + 1) row boundaries, query q = rows query[q] ..
                                      * query[q+1] - 1 (query[0] = 0, query[n_query] = n); NULL otherwise */
    size_t n_query;
} gbdt_data;

/* One tree in LightGBM's layout: internal node i splits on split_feature[i]; a child c >= 0 is a node,
 * c < 0 is leaf ~c. decision_type bit0: categorical, bit1: NaN goes left, bits 2-3: missing type
 * (0 none: NaN is treated as 0, 1 zero: |x| <= 1e-35 is missing, 2 NaN). For categorical nodes threshold
 * is the index j of the bitset cat_threshold[cat_boundaries[j] .. cat_boundaries[j+1]) of left categories. */
typedef struct gbdt_tree {
    int num_leaves;
    int num_cat;
    double shrinkage;
    int *split_feature;      /* (num_leaves - 1) */
    double *split_gain;      /* (num_leaves - 1) */
    double *threshold;       /* (num_leaves - 1) */
    uint8_t *decision_type;  /* (num_leaves - 1) */
    int *left_child;         /* (num_leaves - 1) */
    int *right_child;        /* (num_leaves - 1) */
    double *leaf_value;      /* (num_leaves), learning rate already applied */
    double *leaf_weight;     /* (num_leaves) sum of hessians */
    int *leaf_count;         /* (num_leaves) */
    int *cat_boundaries;     /* (num_cat + 1) */
    uint32_t *cat_threshold; /* (cat_boundaries[num_cat]) 32-bit words of category bitsets */
} gbdt_tree;

typedef struct gbdt_booster gbdt_booster;

#define GBDT_FORMAT_NAME "heurist-gbdt"
#define GBDT_FORMAT_VERSION 1

void gbdt_params_default(gbdt_params *p);
int gbdt_params_check(const gbdt_params *p);

/* Trains a booster. valid (or NULL) drives early stopping: L2 metric mean w (F - y)^2, softmax metric
 * multi_logloss mean -w sum_k y_k log p_k. init (or NULL) is a booster to continue (warm start): its
 * trees are kept and new ones fit the residual of its predictions. log (or NULL) gets progress lines. */
int gbdt_booster_train(const gbdt_params *p, const gbdt_data *train, const gbdt_data *valid,
                       const gbdt_booster *init, const hr_log *log, gbdt_booster **out);
void gbdt_booster_free(gbdt_booster *b);

int gbdt_booster_num_features(const gbdt_booster *b);
int gbdt_booster_num_class(const gbdt_booster *b);   /* K: outputs per row */
int gbdt_booster_num_trees(const gbdt_booster *b);
int gbdt_booster_num_iterations(const gbdt_booster *b); /* trees / K */
int gbdt_booster_best_iteration(const gbdt_booster *b); /* kept after early stopping; -1 if none */
gbdt_objective gbdt_booster_objective(const gbdt_booster *b);
const char *gbdt_booster_feature_name(const gbdt_booster *b, int j);
const gbdt_tree *gbdt_booster_tree(const gbdt_booster *b, int t);
const gbdt_params *gbdt_booster_params(const gbdt_booster *b);
/* (K) the constant every raw score starts from */
const double *gbdt_booster_base_score(const gbdt_booster *b);

/* out (K) = F(x): raw scores of one row x (d). Allocates nothing, thread-safe. */
void gbdt_booster_predict_raw_row(const gbdt_booster *b, const float *x, double *out);
/* out (K) = F(x) for L2, softmax(F(x)) for softmax. Allocates nothing. */
void gbdt_booster_predict_row(const gbdt_booster *b, const float *x, double *out);
/* out (n, K) for x (n, d); raw != 0 skips the softmax. */
int gbdt_booster_predict(const gbdt_booster *b, const float *x, size_t n, int raw, int num_threads,
                         double *out);
/* leaf index reached by one row in one tree */
int gbdt_tree_predict_leaf(const gbdt_tree *t, const float *x);
/* f = the largest float <= thr (thr not NaN): for every float x, x <= f iff (double)x <= thr, so a split decides
 * on floats alike (pack.c's records, the exported runtime's). */
float gbdt_threshold_float(double thr);
/* value of the leaf reached by x */
double gbdt_tree_predict(const gbdt_tree *t, const float *x);

/* out (d) = per-feature importance summed over all trees. */
void gbdt_booster_importance(const gbdt_booster *b, gbdt_importance type, double *out);

/* The objective's name in files: "l2", "softmax", "lambdarank". */
/* The objectives' names by gbdt_objective, and the histograms' names with their gbdt_histogram, NULL-terminated:
 * the one list the model files and the config tables read and write. */
extern const char *const gbdt_objective_names[];
extern const char *const gbdt_histogram_names[];
extern const int gbdt_histogram_values[];
const char *gbdt_objective_name(gbdt_objective o);
/* The objective named s; HR_EINVAL naming it otherwise. */
int gbdt_objective_parse(const char *s, gbdt_objective *out);

/* Our format: HDF5 with attributes format="heurist-gbdt", version, objective, num_class, params, and
 * datasets feature_names, is_categorical, base_score and trees as struct-of-arrays (see io.c). */
int gbdt_booster_save(const gbdt_booster *b, const char *path);
int gbdt_booster_load(const char *path, gbdt_booster **out);
/* The same content inside an open HDF5 group of the caller's file. */
int gbdt_booster_write_h5(const gbdt_booster *b, hid_t group);
int gbdt_booster_read_h5(hid_t group, gbdt_booster **out);

/* LightGBM text model format (version=v4): objectives regression* (identity) and multiclass (softmax). */
int gbdt_lightgbm_load(const char *path, gbdt_booster **out);
int gbdt_lightgbm_parse(const char *text, size_t len, const char *name, gbdt_booster **out);
int gbdt_lightgbm_save(const gbdt_booster *b, const char *path);

#endif
