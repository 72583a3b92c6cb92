/* The boosting loop: F_0 = base score (+ init scores, + a warm-start booster), then per iteration
 * g, h = objective(F), one tree per class fit to (g, h) on a row bag and feature sample, F += tree(x).
 * Randomness comes from generators derived from (seed, iteration, class), never from thread timing. */
#include "gbdt/gbdt_internal.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* rng stream families, so bagging and feature sampling never share a stream */
#define STREAM_BAGGING 0x100000000ull
#define STREAM_FEATURES 0x200000000ull

void gbdt_params_default(gbdt_params *p)
{
    memset(p, 0, sizeof *p);
    p->objective = GBDT_OBJECTIVE_L2;
    p->num_class = 1;
    p->num_rounds = 100;
    p->learning_rate = 0.1;
    p->num_leaves = 31;
    p->max_depth = -1;
    p->min_data_in_leaf = 20;
    p->min_sum_hessian_in_leaf = 1e-3;
    p->bagging_fraction = 1.0;
    p->feature_fraction = 1.0;
    p->max_bin = 255;
    p->max_cat_to_onehot = 4;
    p->max_cat_threshold = 32;
    p->cat_l2 = 10.0;
    p->cat_smooth = 10.0;
    p->min_data_per_group = 100;
    p->boost_from_average = 1;
    p->grad_bins = 4;
    p->renew_leaf = 1;
}

int gbdt_params_check(const gbdt_params *p)
{
    if (p->objective != GBDT_OBJECTIVE_L2 && p->objective != GBDT_OBJECTIVE_SOFTMAX &&
        p->objective != GBDT_OBJECTIVE_LAMBDARANK)
        return hr_error(HR_EINVAL, "gbdt: unknown objective %d", (int)p->objective);
    if (p->objective == GBDT_OBJECTIVE_SOFTMAX && (p->num_class < 2 || p->num_class > GBDT_SOFTMAX_MAX_CLASSES))
        return hr_error(HR_EINVAL, "gbdt: softmax needs num_class in 2..%d, got %d", GBDT_SOFTMAX_MAX_CLASSES,
                        p->num_class);
    if (p->num_rounds < 0) return hr_error(HR_EINVAL, "gbdt: num_rounds %d < 0", p->num_rounds);
    if (!(p->learning_rate > 0)) return hr_error(HR_EINVAL, "gbdt: learning_rate %g <= 0", p->learning_rate);
    if (p->num_leaves < 2 || p->num_leaves > 131072)
        return hr_error(HR_EINVAL, "gbdt: num_leaves %d outside 2..131072", p->num_leaves);
    if (p->min_data_in_leaf < 0 || p->min_sum_hessian_in_leaf < 0 || p->lambda_l1 < 0 || p->lambda_l2 < 0 ||
        p->min_gain_to_split < 0 || p->cat_l2 < 0 || p->cat_smooth < 0 || p->min_data_per_group < 0)
        return hr_error(HR_EINVAL, "gbdt: regularisation parameters must be >= 0");
    if (!(p->bagging_fraction > 0 && p->bagging_fraction <= 1) || p->bagging_freq < 0)
        return hr_error(HR_EINVAL, "gbdt: bagging_fraction %g must be in (0, 1], bagging_freq >= 0",
                        p->bagging_fraction);
    if (!(p->feature_fraction > 0 && p->feature_fraction <= 1))
        return hr_error(HR_EINVAL, "gbdt: feature_fraction %g must be in (0, 1]", p->feature_fraction);
    if (p->max_bin < 2 || p->max_bin > 65535) return hr_error(HR_EINVAL, "gbdt: max_bin %d outside 2..65535", p->max_bin);
    if (p->max_cat_threshold < 1) return hr_error(HR_EINVAL, "gbdt: max_cat_threshold must be >= 1");
    if (p->early_stopping_rounds < 0 || p->log_every < 0)
        return hr_error(HR_EINVAL, "gbdt: early_stopping_rounds and log_every must be >= 0");
    if (p->histogram != GBDT_HISTOGRAM_FLOAT && p->histogram != GBDT_HISTOGRAM_INT)
        return hr_error(HR_EINVAL, "gbdt: unknown histogram kind %d", (int)p->histogram);
    if (p->quantized_grad && (p->grad_bins < 2 || p->grad_bins > 64 || p->grad_bins % 2))
        return hr_error(HR_EINVAL, "gbdt: grad_bins %d must be even and in 2..64", p->grad_bins);
    if (p->quantized_grad && (p->histogram != GBDT_HISTOGRAM_FLOAT || gbdt_comm_active(p->comm)))
        return hr_error(HR_EINVAL, "gbdt: quantized_grad needs histogram float on one process (histogram int and "
                        "training over processes sum exact gradients)");
    if (p->hessian_counts && !p->quantized_grad)
        return hr_error(HR_EINVAL, "gbdt: hessian_counts needs quantized_grad (it lets quantized histograms skip rows)");
    if (gbdt_comm_active(p->comm) && p->histogram != GBDT_HISTOGRAM_INT)
        return hr_error(HR_EINVAL, "gbdt: training over %d processes needs histogram int (exact sums)", p->comm->size);
    return HR_OK;
}

typedef struct score_job {
    const gbdt_tree *tree;
    const float *x;
    int d, K, k;
    double *F; /* (n, K) */
} score_job;

static void score_range(void *ctx, size_t begin, size_t end, int tid)
{
    const score_job *job = ctx;
    for (size_t i = begin; i < end; i++)
        job->F[i * (size_t)job->K + (size_t)job->k] += gbdt_tree_predict(job->tree, job->x + i * (size_t)job->d);
}

static int boost_add_tree(const gbdt_tree *t, const gbdt_data *data, int K, int k, int nthreads, double *F)
{
    score_job job = {t, data->x, data->d, K, k, F};
    return hr_parallel_for(nthreads, data->n, score_range, &job);
}

/* F (n, K) = booster's raw scores + the data's own init scores */
static int boost_init_scores(const gbdt_booster *b, const gbdt_data *data, int nthreads, double *F)
{
    int rc = gbdt_booster_predict(b, data->x, data->n, 1, nthreads, F);
    if (rc == HR_OK && data->init_score)
        for (size_t i = 0; i < data->n * (size_t)b->num_class; i++) F[i] += data->init_score[i];
    return rc;
}

/* m = round(fraction n) of the rows 0..n-1 chosen uniformly without replacement, in increasing order
 * (selection sampling, Knuth's algorithm S), so the bag depends only on the generator; rows gets those in
 * [lo, hi) (this process's share), less lo, and their number is returned. */
static size_t boost_bag(hr_rng *rng, size_t n, double fraction, size_t lo, size_t hi, int *rows)
{
    size_t m = (size_t)llround(fraction * (double)n), got = 0, kept = 0;
    if (m < 1) m = 1;
    for (size_t i = 0; i < n && got < m; i++)
        if (hr_rng_uniform_d(rng) * (double)(n - i) < (double)(m - got)) {
            got++;
            if (i >= lo && i < hi) rows[kept++] = (int)(i - lo);
        }
    return kept;
}

static void boost_features(hr_rng *rng, int d, double fraction, int *perm, uint8_t *used)
{
    int m = (int)lround(fraction * d);
    if (m < 1) m = 1;
    if (m >= d) {
        memset(used, 1, (size_t)d);
        return;
    }
    for (int j = 0; j < d; j++) perm[j] = j;
    memset(used, 0, (size_t)d);
    for (int j = 0; j < m; j++) {
        int r = j + (int)hr_rng_below(rng, (uint64_t)(d - j));
        int t = perm[j];
        perm[j] = perm[r];
        perm[r] = t;
        used[perm[j]] = 1;
    }
}

static int boost_setup(const gbdt_params *p, const gbdt_data *train, const gbdt_data *valid,
                       const gbdt_booster *init, gbdt_booster **out)
{
    int rc = gbdt_params_check(p);
    if (rc == HR_OK) rc = gbdt_data_check(p, train, "training");
    if (rc == HR_OK && valid) {
        rc = gbdt_data_check(p, valid, "validation");
        if (rc == HR_OK && valid->d != train->d)
            rc = hr_error(HR_EINVAL, "gbdt: validation data has %d features, training %d", valid->d, train->d);
    }
    if (rc) return rc;
    int K = p->objective == GBDT_OBJECTIVE_SOFTMAX ? p->num_class : 1;
    if (init && (init->num_features != train->d || init->num_class != K || init->params.objective != p->objective))
        return hr_error(HR_EINVAL,
                        "gbdt: warm-start booster (%d features, %d outputs, objective %d) does not match the "
                        "training setup (%d, %d, %d)",
                        init->num_features, init->num_class, (int)init->params.objective, train->d, K,
                        (int)p->objective);
    gbdt_booster *b;
    if ((rc = gbdt_booster_alloc(train->d, K, &b))) return rc;
    b->params = *p;
    for (int j = 0; j < train->d && rc == HR_OK; j++) {
        b->is_categorical[j] = train->is_categorical ? train->is_categorical[j] != 0 : 0;
        rc = gbdt_booster_set_feature_name(b, j, train->feature_names ? train->feature_names[j] : NULL);
    }
    if (init) {
        memcpy(b->base_score, init->base_score, (size_t)K * sizeof(double));
        for (int t = 0; t < init->num_trees && rc == HR_OK; t++) {
            gbdt_tree *tr = gbdt_booster_push_tree(b);
            rc = tr ? gbdt_tree_copy(tr, &init->trees[t]) : HR_ENOMEM;
            if (rc && tr) b->num_trees--;
        }
    } else {
        gbdt_objective_base_score(p, train, b->base_score);
    }
    if (rc) {
        gbdt_booster_free(b);
        return rc;
    }
    *out = b;
    return HR_OK;
}

/* One tree builder: a grower and its feature-sample buffers. Multiclass iterations give each worker thread
 * its own, so that the K trees of an iteration grow in parallel. */
typedef struct boost_worker {
    gbdt_grower *grower;
    int *perm;     /* (d) */
    uint8_t *used; /* (d) */
} boost_worker;

typedef struct boost_state {
    gbdt_data shard;             /* this process's rows of the training data (all of them with one process) */
    size_t lo, n_total;          /* the share is rows [lo, lo + shard.n) of n_total */
    size_t *shard_query;         /* lambdarank over processes: the share's query boundaries, from 0; else NULL */
    int *ue;                     /* (K, 2) histogram INT: this round's grids of g and h per class; else NULL */
    int ue_w;                    /* histogram INT: the grid of softmax leaf-step terms */
    gbdt_binned bd;
    int nworkers, inner_threads; /* trees grown at once, threads inside each tree */
    boost_worker *workers;       /* (nworkers) */
    double *F, *Fv;  /* (n, K), (nv, K) raw scores */
    double *gh;      /* (K, n, 2) */
    gbdt_hist_bin **roots; /* (K) multiclass: this iteration's root histograms, built together; else NULL
                            * (with quantized_grad each holds hist_total uint64_t words) */
    uint16_t *qv;          /* (K, n) quantized_grad: this round's codes of each class and row; else NULL */
    gbdt_qgrad *qlay;      /* (K) their scales and field widths */
    gbdt_gh_range *qrange; /* (K) quantized_grad: this round's range of each class's gh, gathered with them */
    uint8_t *root_built;   /* (K) quantized_grad: whether roots[k] holds this round's root of class k (else its
                            * tree builds it) */
    int *root_cls;         /* (K) scratch: the classes whose roots are built together */
    uint8_t *leaf_of;      /* (K, n) multiclass with <= 256 leaves: each row's leaf in this iteration's trees */
    int *all_rows, *bag_rows;
    int *status;     /* (K) per-class result of an iteration */
    double *class_s; /* (K) seconds each class's tree took last round: the order they are handed out */
    int *class_order;
    int nroots;      /* entries of roots */
    /* softmax over several processes: the rows of each leaf of this iteration's K trees, kept so that all K x
     * num_leaves leaf steps are searched together (one exchange of sums per search step, not one per tree) */
    int *round_rows;      /* (K, n) class k's rows grouped by leaf; else NULL */
    size_t *round_begin;  /* (K, num_leaves) where leaf l of tree k starts in round_rows + k n */
    size_t *round_count;  /* (K, num_leaves) */
    int round_stride;     /* num_leaves */
} boost_state;

static void boost_state_free(boost_state *s)
{
    free(s->shard_query);
    for (int w = 0; s->workers && w < s->nworkers; w++) {
        gbdt_grower_free(s->workers[w].grower);
        free(s->workers[w].perm);
        free(s->workers[w].used);
    }
    free(s->workers);
    gbdt_binned_free(&s->bd);
    free(s->F);
    free(s->Fv);
    free(s->gh);
    free(s->qv);
    free(s->qlay);
    free(s->qrange);
    for (int k = 0; s->roots && k < s->nroots; k++) free(s->roots[k]);
    free(s->roots);
    free(s->leaf_of);
    free(s->root_built);
    free(s->root_cls);
    free(s->all_rows);
    free(s->bag_rows);
    free(s->status);
    free(s->class_s);
    free(s->class_order);
    free(s->ue);
    free(s->round_rows);
    free(s->round_begin);
    free(s->round_count);
}

/* The trees of one iteration: tree k fits class k's gradients. A tree depends only on (data, params,
 * iteration, k), never on which worker grows it, so the model is the same for any thread count. */
typedef struct class_job {
    const gbdt_params *p;
    const gbdt_data *train, *valid;
    boost_state *s;
    gbdt_tree *trees; /* (K) this iteration's slots */
    int it;
    const int *rows;
    size_t nrows;
    int K;
    atomic_int next; /* the next class to grow */
    const int *order; /* (K) the classes in the order they are handed out */
} class_job;

/* The leaves of the softmax trees t[0..nk) (classes k0..k0+nk), their Newton steps replaced where they
 * overshoot (gbdt_objective_softmax_steps): leaf l of tree i holds rows[at + l][0..cnt[at + l]), at the number
 * of leaves of the trees before it. */
static int boost_softmax_leaves(const gbdt_params *p, const boost_state *s, gbdt_tree *t, int k0, int nk,
                                const int *const *rows, const double *const *gl, const size_t *neg,
                                const size_t *cnt)
{
    int L = 0;
    for (int i = 0; i < nk; i++) L += t[i].num_leaves;
    int *cls = hr_malloc((size_t)L * sizeof *cls);
    double *newton = hr_malloc((size_t)L * sizeof *newton), *step = hr_malloc((size_t)L * sizeof *step);
    int rc = cls && newton && step ? HR_OK : HR_ENOMEM;
    for (int i = 0, at = 0; i < nk && rc == HR_OK; i++)
        for (int l = 0; l < t[i].num_leaves; l++, at++) {
            cls[at] = k0 + i;
            newton[at] = t[i].leaf_value[l] / p->learning_rate;
        }
    if (rc == HR_OK)
        rc = gbdt_objective_softmax_steps(p, &s->shard, s->gh, cls, L, rows, gl, neg, cnt, newton,
                                          s->ue ? s->ue_w : INT_MIN, step);
    for (int i = 0, at = 0; i < nk && rc == HR_OK; i++)
        for (int l = 0; l < t[i].num_leaves; l++, at++)
            if (step[at] != newton[at]) t[i].leaf_value[l] = p->learning_rate * step[at];
    free(cls);
    free(newton);
    free(step);
    return rc;
}

/* The leaves of one tree just grown by g. */
static int boost_softmax_tree(const gbdt_params *p, const boost_state *s, const gbdt_grower *g, int k, gbdt_tree *t)
{
    int L = t->num_leaves;
    const int **rows = hr_malloc((size_t)L * sizeof *rows);
    const double **gl = hr_malloc((size_t)L * sizeof *gl);
    size_t *cnt = hr_malloc((size_t)L * sizeof *cnt), *neg = hr_malloc((size_t)L * sizeof *neg);
    int rc = rows && gl && cnt && neg ? HR_OK : HR_ENOMEM;
    for (int l = 0; l < L && rc == HR_OK; l++) {
        rows[l] = gbdt_grower_leaf_rows(g, l, &cnt[l]);
        gl[l] = gbdt_grower_leaf_grads(g, l, &neg[l]);
    }
    if (rc == HR_OK) rc = boost_softmax_leaves(p, s, t, k, 1, rows, gl[0] ? gl : NULL, gl[0] ? neg : NULL, cnt);
    free(rows);
    free(gl);
    free(neg);
    free(cnt);
    return rc;
}

/* Keeps the rows of each leaf of tree k (just grown by g) for boost_round_finish. */
static void boost_round_keep(boost_state *s, const gbdt_grower *g, int k, const gbdt_tree *t)
{
    size_t n = s->shard.n, at = 0, L = (size_t)t->num_leaves;
    int *dst = s->round_rows + (size_t)k * n;
    size_t stride = (size_t)s->round_stride;
    for (size_t l = 0; l < L; l++) {
        size_t c;
        const int *rows = gbdt_grower_leaf_rows(g, (int)l, &c);
        memcpy(dst + at, rows, c * sizeof *rows);
        s->round_begin[(size_t)k * stride + l] = at;
        s->round_count[(size_t)k * stride + l] = c;
        at += c;
    }
}

/* The K softmax trees of an iteration over several processes, once all are grown: every leaf step searched
 * together, then the scores of the training rows (from the kept rows when the trees were fit on all of them,
 * bagged == 0) and of the validation rows. */
static int boost_round_finish(const gbdt_params *p, boost_state *s, gbdt_tree *t, int K, int bagged,
                              const gbdt_data *valid)
{
    size_t n = s->shard.n, stride = (size_t)s->round_stride, L = 0;
    for (int k = 0; k < K; k++) L += (size_t)t[k].num_leaves;
    const int **rows = hr_malloc((L + 1) * sizeof *rows);
    size_t *cnt = hr_malloc((L + 1) * sizeof *cnt);
    int rc = rows && cnt ? HR_OK : HR_ENOMEM;
    for (int k = 0, at = 0; k < K && rc == HR_OK; k++)
        for (int l = 0; l < t[k].num_leaves; l++, at++) {
            rows[at] = s->round_rows + (size_t)k * n + s->round_begin[(size_t)k * stride + (size_t)l];
            cnt[at] = s->round_count[(size_t)k * stride + (size_t)l];
        }
    if (rc == HR_OK) rc = boost_softmax_leaves(p, s, t, 0, K, rows, NULL, NULL, cnt);
    for (int k = 0, at = 0; k < K && rc == HR_OK && !bagged; k++)
        for (int l = 0; l < t[k].num_leaves; l++, at++)
            for (size_t i = 0; i < cnt[at]; i++) s->F[(size_t)rows[at][i] * (size_t)K + (size_t)k] += t[k].leaf_value[l];
    for (int k = 0; k < K && rc == HR_OK && bagged; k++) rc = boost_add_tree(&t[k], &s->shard, K, k, s->inner_threads, s->F);
    for (int k = 0; k < K && rc == HR_OK && valid; k++) rc = boost_add_tree(&t[k], valid, K, k, s->inner_threads, s->Fv);
    free(rows);
    free(cnt);
    return rc;
}

static int boost_grow_class(const class_job *job, boost_worker *w, int k)
{
    const gbdt_params *p = job->p;
    const gbdt_data *train = &job->s->shard;
    boost_state *s = job->s;
    size_t n = train->n;
    int K = p->objective == GBDT_OBJECTIVE_SOFTMAX ? p->num_class : 1;
    const double *gh = s->gh + 2 * (size_t)k * n;
    gbdt_tree *t = &job->trees[k];
    hr_rng rng;
    hr_rng_derive(&rng, p->seed, STREAM_FEATURES + (uint64_t)job->it * (uint64_t)K + (uint64_t)k);
    boost_features(&rng, train->d, p->feature_fraction, w->perm, w->used);
    int rc = s->qv ? gbdt_grower_grow_quant(w->grower, gh, s->qv + (size_t)k * n, &s->qlay[k], job->rows, job->nrows,
                                            w->used, s->roots && s->root_built[k] ? (const uint64_t *)s->roots[k] : NULL, t)
                   : gbdt_grower_grow_exact(w->grower, gh, job->rows, job->nrows, w->used,
                                            s->roots ? s->roots[k] : NULL, s->ue ? s->ue + 2 * k : NULL, t);
    if (rc) return rc;
    if (s->round_rows) { /* the leaf steps and scores wait for the iteration's other trees */
        boost_round_keep(s, w->grower, k, t);
        return HR_OK;
    }
    if (p->objective == GBDT_OBJECTIVE_SOFTMAX && (rc = boost_softmax_tree(p, s, w->grower, k, t))) return rc;
    if (job->nrows == n && s->leaf_of)
        gbdt_grower_leaf_ids(w->grower, t->num_leaves, s->leaf_of + (size_t)k * n); /* added by boost_add_leaves */
    else if (job->nrows == n)
        gbdt_grower_add_scores(w->grower, t, K, k, s->F);
    else
        rc = boost_add_tree(t, train, K, k, s->inner_threads, s->F);
    if (rc == HR_OK && job->valid) rc = boost_add_tree(t, job->valid, K, k, s->inner_threads, s->Fv);
    return rc;
}

typedef struct leaves_job {
    const gbdt_tree *trees; /* (K) */
    const uint8_t *leaf_of; /* (K, n) */
    size_t n;
    int K;
    double *F;              /* (n, K) */
} leaves_job;

static void leaves_range(void *ctx, size_t begin, size_t end, int tid)
{
    const leaves_job *job = ctx;
    for (size_t r = begin; r < end; r++)
        for (int k = 0; k < job->K; k++)
            job->F[r * (size_t)job->K + (size_t)k] += job->trees[k].leaf_value[job->leaf_of[(size_t)k * job->n + r]];
}

/* F += the leaf values of an iteration's K trees, a row at a time (a tree at a time would touch a cache line of
 * F per row and tree) */
static int boost_add_leaves(const gbdt_tree *trees, const uint8_t *leaf_of, size_t n, int K, int nthreads, double *F)
{
    leaves_job job = {trees, leaf_of, n, K, F};
    return hr_parallel_for(nthreads, n, leaves_range, &job);
}

/* s->class_order = the classes by decreasing class_s, ties in class order (insertion sort: K <= 256) */
static void boost_class_order(boost_state *s, int K)
{
    for (int i = 0; i < K; i++) {
        int k = i, j = i - 1;
        while (j >= 0 && s->class_s[s->class_order[j]] < s->class_s[k]) {
            s->class_order[j + 1] = s->class_order[j];
            j--;
        }
        s->class_order[j + 1] = k;
    }
}

/* Each worker takes the next class not yet taken: trees differ in cost (a rare class's tree stops early),
 * so a fixed share of the classes per worker would leave one waiting. The classes are handed out longest first
 * (by the time each took last round), so that the last ones to finish are short; which worker grows a tree
 * never changes it. */
static void class_range(void *ctx, size_t begin, size_t end, int tid)
{
    class_job *job = ctx;
    for (int i; (i = atomic_fetch_add(&job->next, 1)) < job->K;) {
        int k = job->order[i];
        double t0 = hr_now();
        job->s->status[k] = boost_grow_class(job, &job->s->workers[tid], k);
        job->s->class_s[k] = hr_now() - t0;
    }
}

typedef struct qgrad_job {
    const gbdt_params *p;
    boost_state *s;
    size_t nrows;
    int it;
    int *status; /* (K) */
} qgrad_job;

static void qgrad_range(void *ctx, size_t begin, size_t end, int tid)
{
    const qgrad_job *job = ctx;
    boost_state *s = job->s;
    size_t n = s->shard.n;
    for (size_t k = begin; k < end; k++)
        job->status[k] = gbdt_qgrad_discretize_range(s->gh + 2 * k * n, n, &s->qrange[k], job->nrows,
                                                     job->p->grad_bins, job->p->seed, (uint64_t)job->it, (int)k,
                                                     s->qv + k * n, &s->qlay[k]);
}

/* A class whose share of rows with a word of more than a count is below this has its root histogram built by its
 * own tree from those rows alone (hessian_counts), not in the pass that adds a row's words to 16 classes' bins at
 * once: per class, that pass costs about what a sparse pass over this share of the rows costs. */
#define BOOST_SPARSE_ROOT_SHARE 1.01

/* quantized_grad: this round's root histograms of the classes built together (all, or with hessian_counts those
 * with rows enough); which root a class's tree gets never changes the tree, only the time */
static int boost_quant_roots(const gbdt_params *p, boost_state *s, int K, const int *rows, size_t nrows, int nthreads)
{
    int nk = 0;
    for (int k = 0; k < K; k++) {
        size_t n = s->shard.n, live = n - s->qlay[k].zeros;
        s->root_built[k] = !p->hessian_counts || (double)live >= BOOST_SPARSE_ROOT_SHARE * (double)n;
        if (s->root_built[k]) s->root_cls[nk++] = k;
    }
    if (!nk) return HR_OK;
    return gbdt_qhist_build_classes(&s->bd, rows, nrows, s->qv, s->qlay, s->root_cls, nk, nthreads,
                                    (uint64_t *const *)s->roots);
}

/* quantized_grad: every class's codes for this round from its gh and their range s->qrange, classes in parallel
 * (each code depends only on its (seed, round, class, row)) */
static int boost_quantize(const gbdt_params *p, boost_state *s, int K, size_t nrows, int it, int nthreads)
{
    qgrad_job job = {p, s, nrows, it, s->status};
    int rc = hr_parallel_for(nthreads, (size_t)K, qgrad_range, &job);
    for (int k = 0; k < K && rc == HR_OK; k++) rc = s->status[k];
    return rc;
}

/* Over several processes every one runs the same iterations. At the top of each, and once as it leaves the loop,
 * a process tells the others whether it goes on, so that one which leaves early (given fewer rounds, or stopping
 * where the others do not) is an error on every process instead of a collective the others wait in forever. */
static int boost_loop_turn(const gbdt_params *p, int going_on, int it)
{
    if (!gbdt_comm_active(p->comm)) return HR_OK;
    /* v[0]: the lowest process leaving, as size - rank (0: none); v[1]: whether any goes on */
    int64_t v[2] = {going_on ? 0 : p->comm->size - p->comm->rank, going_on != 0};
    int rc = p->comm->allreduce_i64(p->comm->ctx, v, 2, HR_REDUCE_MAX);
    if (rc) return rc;
    if (v[0] && v[1])
        return hr_error(HR_ESTATE, "process %d of %d left the training loop before iteration %d while others went on "
                        "(were the processes given different runs?)", p->comm->size - (int)v[0], p->comm->size, it + 1);
    return HR_OK;
}

static int boost_loop(const gbdt_params *p, const gbdt_data *train, const gbdt_data *valid, const hr_log *log,
                      int nthreads, boost_state *s, gbdt_booster *b)
{
    int K = b->num_class, rc = HR_OK;
    size_t n = s->shard.n;
    int first_tree = b->num_trees, best_iter = 0, stopped = 0;
    double best_metric = INFINITY;
    const char *metric_name = p->objective == GBDT_OBJECTIVE_L2           ? "l2"
                              : p->objective == GBDT_OBJECTIVE_LAMBDARANK ? "1-ndcg@1"
                                                                          : "multi_logloss";
    const int *rows = s->all_rows;
    size_t nrows = n;
    int it = 0;
    for (; it < p->num_rounds && rc == HR_OK; it++) {
        if ((rc = boost_loop_turn(p, 1, it))) break;
        if (p->bagging_freq > 0 && p->bagging_fraction < 1 && it % p->bagging_freq == 0) {
            hr_rng rng;
            hr_rng_derive(&rng, p->seed, STREAM_BAGGING + (uint64_t)it);
            nrows = boost_bag(&rng, s->n_total, p->bagging_fraction, s->lo, s->lo + n, s->bag_rows);
            rows = s->bag_rows;
        }
        if ((rc = gbdt_objective_gradients_range(p, &s->shard, s->F, nthreads, s->gh, s->qrange))) break;
        if (s->ue && (rc = gbdt_quant_gradients(p, n, K, s->n_total, s->gh, s->ue))) break;
        if (s->qv && (rc = boost_quantize(p, s, K, nrows, it, nthreads))) break;
        if (s->roots && s->qv && (rc = boost_quant_roots(p, s, K, rows, nrows, nthreads))) break;
        if (s->roots && !s->qv && (rc = gbdt_hist_build_classes(&s->bd, rows, nrows, s->gh, K, nthreads, s->roots))) break;
        if (s->roots && s->ue && (rc = gbdt_hist_allreduce(p->comm, &s->bd, s->roots, K, s->ue))) break;
        int first = b->num_trees;
        for (int k = 0; k < K && rc == HR_OK; k++)
            if (!gbdt_booster_push_tree(b)) rc = HR_ENOMEM;
        if (rc == HR_OK) {
            if (s->nworkers > 1) boost_class_order(s, K); /* over processes every one grows the classes in order */
            class_job job = {p, train, valid, s, b->trees + first, it, rows, nrows, K, 0, s->class_order};
            rc = hr_parallel_for(s->nworkers, (size_t)s->nworkers, class_range, &job);
            for (int k = 0; k < K && rc == HR_OK; k++) rc = s->status[k];
            if (rc == HR_OK && s->round_rows) rc = boost_round_finish(p, s, b->trees + first, K, nrows != n, valid);
            else if (rc == HR_OK && s->leaf_of && nrows == n)
                rc = boost_add_leaves(b->trees + first, s->leaf_of, n, K, nthreads, s->F);
        }
        if (rc) {
            gbdt_booster_truncate(b, first);
            break;
        }
        /* a non-finite leaf (a Newton step over a zero hessian sum, a learning rate that overshoots) would be
         * saved into the model and rank nothing: training stops. Every process holds the same leaves. */
        for (int k = 0; k < K && rc == HR_OK; k++)
            for (int l = 0; l < b->trees[first + k].num_leaves && rc == HR_OK; l++)
                if (!isfinite(b->trees[first + k].leaf_value[l]))
                    rc = hr_error(HR_ESTATE, "diverged at iteration %d (a leaf value is %g); try a lower "
                                  "learning_rate or a larger lambda_l2 / min_sum_hessian_in_leaf", it + 1,
                                  b->trees[first + k].leaf_value[l]);
        if (rc) break;
        int grown = 0;
        /* a stump still moves the scores when they are off on average (e.g. given init scores) */
        for (int k = 0; k < K; k++)
            grown += b->trees[first + k].num_leaves > 1 || fabs(b->trees[first + k].leaf_value[0]) > 1e-10;
        if (!grown) {
            /* no tree splits and the stumps are ~0: further iterations would change nothing */
            gbdt_booster_truncate(b, b->num_trees - K);
            hr_log_printf(log, HR_LOG_INFO, "gbdt: stopped at iteration %d: no split meets the requirements\n", it);
            break;
        }
        double vm = valid ? gbdt_objective_metric(p, valid, s->Fv) : 0;
        if (!isfinite(vm)) {
            rc = hr_error(HR_ESTATE, "diverged at iteration %d (valid %s %g); try a lower learning_rate "
                          "or a larger lambda_l2 / min_sum_hessian_in_leaf", it + 1, metric_name, vm);
            break;
        }
        if (valid && p->on_round) p->on_round(p->on_round_ctx, it + 1, vm, s->Fv);
        if (valid && vm < best_metric) {
            best_metric = vm;
            best_iter = it + 1;
        } else if (valid && p->early_stopping_rounds > 0 && it + 1 - best_iter >= p->early_stopping_rounds) {
            stopped = 1;
        }
        if (p->log_every > 0 && ((it + 1) % p->log_every == 0 || stopped)) {
            double tm;
            if ((rc = gbdt_objective_metric_all(p, &s->shard, s->F, &tm))) break;
            if (valid)
                hr_log_printf(log, HR_LOG_INFO, "gbdt: [%d] train %s %.6g, valid %s %.6g\n", it + 1, metric_name, tm,
                              metric_name, vm);
            else
                hr_log_printf(log, HR_LOG_INFO, "gbdt: [%d] train %s %.6g\n", it + 1, metric_name, tm);
        }
        if (stopped) break;
    }
    if (rc) return rc;
    if ((rc = boost_loop_turn(p, 0, it))) return rc;
    /* finite leaves can still sum past float range: the training rows' metric must be finite at the end (every
     * process computes it, over all of them) */
    double tm;
    if ((rc = gbdt_objective_metric_all(p, &s->shard, s->F, &tm))) return rc;
    if (!isfinite(tm))
        return hr_error(HR_ESTATE, "diverged (train %s %g after %d iterations); try a lower learning_rate "
                        "or a larger lambda_l2 / min_sum_hessian_in_leaf", metric_name, tm, (b->num_trees - first_tree) / K);
    if (stopped) {
        gbdt_booster_truncate(b, first_tree + best_iter * K);
        b->best_iteration = first_tree / K + best_iter;
        /* iterations count this run's rounds, as the progress lines and the config's rounds do */
        if (first_tree)
            hr_log_printf(log, HR_LOG_INFO, "gbdt: early stopping, best iteration %d (the model keeps %d: %d from the "
                          "initial model), valid %s %.6g\n", best_iter, b->best_iteration, first_tree / K,
                          metric_name, best_metric);
        else
            hr_log_printf(log, HR_LOG_INFO, "gbdt: early stopping, best iteration %d, valid %s %.6g\n", best_iter,
                          metric_name, best_metric);
    }
    return HR_OK;
}

int gbdt_booster_train(const gbdt_params *p, const gbdt_data *train, const gbdt_data *valid,
                       const gbdt_booster *init, const hr_log *log, gbdt_booster **out)
{
    *out = NULL;
    if (!p || !train) return hr_error(HR_EINVAL, "gbdt_booster_train: NULL argument");
    gbdt_booster *b = NULL;
    int rc = boost_setup(p, train, valid, init, &b);
    if (rc) return rc;
    int nthreads = hr_threads_resolve(p->num_threads), K = b->num_class;
    boost_state s;
    memset(&s, 0, sizeof s);
    /* this process's share of the rows: a contiguous block, so that a global row index is lo + a local one */
    int dist = gbdt_comm_active(p->comm), rank = dist ? p->comm->rank : 0, size = dist ? p->comm->size : 1;
    s.n_total = train->n;
    s.lo = train->n * (size_t)rank / (size_t)size;
    size_t n = train->n * (size_t)(rank + 1) / (size_t)size - s.lo;
    /* lambdarank: a query's rows stay in one share (its gradients pair them), so the shares are whole queries */
    size_t q_lo = 0, q_hi = 0;
    if (train->query && dist) {
        q_lo = train->n_query * (size_t)rank / (size_t)size;
        q_hi = train->n_query * (size_t)(rank + 1) / (size_t)size;
        s.lo = train->query[q_lo];
        n = train->query[q_hi] - s.lo;
    }
    if (n == 0) {
        gbdt_booster_free(b);
        return train->query && dist
                   ? hr_error(HR_EINVAL, "gbdt: %zu training queries for %d processes: process %d gets none",
                              train->n_query, size, rank)
                   : hr_error(HR_EINVAL, "gbdt: %zu training rows for %d processes: process %d gets none", train->n,
                              size, rank);
    }
    s.shard = *train;
    s.shard.n = n;
    if (train->query && dist) {
        if (!(s.shard_query = hr_malloc((q_hi - q_lo + 1) * sizeof *s.shard_query))) {
            gbdt_booster_free(b);
            return HR_ENOMEM;
        }
        for (size_t q = q_lo; q <= q_hi; q++) s.shard_query[q - q_lo] = train->query[q] - s.lo;
        s.shard.query = s.shard_query;
        s.shard.n_query = q_hi - q_lo;
    }
    s.shard.x = train->x + s.lo * (size_t)train->d;
    if (train->y) s.shard.y = train->y + s.lo;
    if (train->y_prob) s.shard.y_prob = train->y_prob + s.lo * (size_t)K;
    if (train->weight) s.shard.weight = train->weight + s.lo;
    if (train->init_score) s.shard.init_score = train->init_score + s.lo * (size_t)K;
    rc = gbdt_binned_build_shard(train, p->max_bin, nthreads, s.lo, s.lo + n, &s.bd);
    if (rc == HR_OK && p->histogram == GBDT_HISTOGRAM_INT) {
        double wmax = 1.0;
        if (train->weight) {
            wmax = 0;
            for (size_t i = 0; i < train->n; i++) wmax = train->weight[i] > wmax ? train->weight[i] : wmax;
        }
        s.ue_w = gbdt_quant_exponent(wmax, gbdt_quant_bits(train->n));
        if (!(s.ue = hr_calloc(2 * (size_t)K, sizeof *s.ue))) rc = HR_ENOMEM;
    }
    if (rc == HR_OK && dist) {
        int used = 0;
        for (int j = 0; j < train->d; j++) used += !s.bd.mappers[j].trivial;
        hr_log_printf(log, HR_LOG_INFO,
                      "gbdt: process %d of %d fits rows [%zu, %zu) of %zu; a histogram all-reduce sends %zu bins "
                      "(%d features) x 24 bytes\n",
                      rank, size, s.lo, s.lo + n, train->n, s.bd.hist_total, used);
    }
    /* many classes: one tree per thread at a time; one class: every thread inside the tree. Over several
     * processes the trees grow one after the other, every process in the same order, since each exchanges
     * its sums with the others (from this thread: the collectives are not thread-safe) */
    s.nworkers = K >= 2 && !dist ? (nthreads < K ? nthreads : K) : 1;
    s.inner_threads = s.nworkers > 1 ? 1 : nthreads;
    s.workers = hr_calloc((size_t)s.nworkers, sizeof *s.workers);
    if (rc == HR_OK && !s.workers) rc = HR_ENOMEM;
    for (int w = 0; w < s.nworkers && rc == HR_OK; w++) {
        rc = gbdt_grower_new(&s.bd, p, s.inner_threads, &s.workers[w].grower);
        s.workers[w].perm = hr_malloc((size_t)train->d * sizeof(int));
        s.workers[w].used = hr_malloc((size_t)train->d);
        if (rc == HR_OK && (!s.workers[w].perm || !s.workers[w].used)) rc = HR_ENOMEM;
    }
    if (rc == HR_OK) {
        s.F = hr_malloc(n * (size_t)K * sizeof(double));
        s.Fv = valid ? hr_malloc(valid->n * (size_t)K * sizeof(double)) : NULL;
        s.gh = hr_malloc(2 * n * (size_t)K * sizeof(double));
        s.all_rows = hr_malloc(n * sizeof(int));
        s.bag_rows = hr_malloc(n * sizeof(int));
        s.status = hr_calloc((size_t)K, sizeof(int));
        s.class_s = hr_calloc((size_t)K, sizeof(double));
        s.class_order = hr_calloc((size_t)K, sizeof(int));
        if (!s.F || (valid && !s.Fv) || !s.gh || !s.all_rows || !s.bag_rows || !s.status || !s.class_s || !s.class_order)
            rc = HR_ENOMEM;
    }
    if (rc == HR_OK && p->quantized_grad) {
        s.qv = hr_malloc(n * (size_t)K * sizeof *s.qv);
        s.qlay = hr_calloc((size_t)K, sizeof *s.qlay);
        s.qrange = hr_calloc((size_t)K, sizeof *s.qrange);
        s.root_built = hr_calloc((size_t)K, 1);
        s.root_cls = hr_calloc((size_t)K, sizeof *s.root_cls);
        if (!s.qv || !s.qlay || !s.qrange || !s.root_built || !s.root_cls) rc = HR_ENOMEM;
    }
    /* the K trees of an iteration start from the same rows: their root histograms are built in one pass */
    if (rc == HR_OK && K >= 2) {
        s.roots = hr_calloc((size_t)K, sizeof *s.roots);
        s.nroots = s.roots ? K : 0;
        for (int k = 0; k < s.nroots && rc == HR_OK; k++)
            if (!(s.roots[k] = gbdt_hist_alloc(GBDT_HIST_BYTES(s.bd.hist_total)))) rc = HR_ENOMEM;
        if (!s.roots) rc = HR_ENOMEM;
        if (rc == HR_OK && p->num_leaves <= 256 && !dist && !(s.leaf_of = hr_malloc(n * (size_t)K))) rc = HR_ENOMEM;
        if (rc == HR_OK && dist) {
            s.round_stride = p->num_leaves;
            s.round_rows = hr_malloc(n * (size_t)K * sizeof *s.round_rows);
            s.round_begin = hr_malloc((size_t)K * (size_t)p->num_leaves * sizeof *s.round_begin);
            s.round_count = hr_malloc((size_t)K * (size_t)p->num_leaves * sizeof *s.round_count);
            if (!s.round_rows || !s.round_begin || !s.round_count) rc = HR_ENOMEM;
        }
    }
    if (rc == HR_OK) {
        for (size_t i = 0; i < n; i++) s.all_rows[i] = (int)i;
        for (int k = 0; k < K; k++) s.class_order[k] = k;
        rc = boost_init_scores(b, &s.shard, nthreads, s.F);
        if (rc == HR_OK && valid) rc = boost_init_scores(b, valid, nthreads, s.Fv);
    }
    if (rc == HR_OK) rc = boost_loop(p, train, valid, log, nthreads, &s, b);
    boost_state_free(&s);
    /* the trees are final: lay them out for prediction */
    if (rc == HR_OK) rc = gbdt_booster_pack(b);
    if (rc) {
        gbdt_booster_free(b);
        return hr_error_wrap(rc, "gbdt: training");
    }
    *out = b;
    return HR_OK;
}
