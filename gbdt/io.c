/* Our model format, in HDF5. A booster group holds
 *   attributes  format = "heurist-gbdt", version, objective ("l2" | "softmax" | "lambdarank"), num_class, num_features,
 *               num_trees, best_iteration
 *   params/     one attribute per gbdt_params field, by name
 *   datasets    feature_names (d fixed-length strings), is_categorical (d), base_score (K)
 *   trees/      struct-of-arrays over all trees: per tree num_leaves, num_cat, shrinkage (T); per node
 *               split_feature, split_gain, threshold, decision_type, left_child, right_child
 *               (sum of num_leaves - 1); per leaf leaf_value, leaf_weight, leaf_count (sum of num_leaves);
 *               cat_boundaries (sum of num_cat + 1) and cat_threshold (sum of bitset words).
 * Everything is addressed by name, and the reader validates every tree before use. The HDF5 calls go
 * through core/h5, which checks each one and names the file object on failure; integers are read at any
 * stored width (format-1 files written before that move hold 32-bit top-level attributes). */
#include "gbdt/gbdt_internal.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/h5.h"

/* The params group's rows: every gbdt_params field by its name (the objective and the histogram by their names),
 * in the order files record them: set 1, then the seed (an unsigned 64-bit attribute of its own), then set 2. A
 * parameter a file lacks keeps its default, so files older than a parameter still load. */
enum { PARAMS_FILE_FIELDS = 1, PARAMS_FILE_AFTER_SEED = 2 };
#define P(f) offsetof(gbdt_params, f)
#define INT(f) {.name = #f, .type = HR_CONFIG_INT, .offset = P(f), .min = INT_MIN, .max = INT_MAX, .file = 1, .file_optional = 1}
#define DOUBLE(f) {.name = #f, .type = HR_CONFIG_DOUBLE, .offset = P(f), .min = -HUGE_VAL, .max = HUGE_VAL, .file = 1, .file_optional = 1}
static const hr_config_option param_rows[] = {
    {.name = "objective", .type = HR_CONFIG_ENUM, .offset = P(objective), .names = gbdt_objective_names, .file = 1,
     .file_optional = 1},
    INT(num_class), INT(num_rounds), INT(num_leaves), INT(max_depth), INT(min_data_in_leaf), INT(bagging_freq),
    INT(max_bin), INT(max_cat_to_onehot), INT(max_cat_threshold), INT(min_data_per_group), INT(boost_from_average),
    INT(early_stopping_rounds), INT(log_every), INT(num_threads), INT(quantized_grad), INT(grad_bins),
    INT(renew_leaf), INT(hessian_counts),
    DOUBLE(learning_rate), DOUBLE(min_sum_hessian_in_leaf), DOUBLE(lambda_l1), DOUBLE(lambda_l2),
    DOUBLE(min_gain_to_split), DOUBLE(bagging_fraction), DOUBLE(feature_fraction), DOUBLE(cat_l2), DOUBLE(cat_smooth),
    DOUBLE(base_score),
    {.name = "histogram", .type = HR_CONFIG_ENUM, .offset = P(histogram), .names = gbdt_histogram_names,
     .values = gbdt_histogram_values, .file = PARAMS_FILE_AFTER_SEED, .file_optional = 1},
};
#undef INT
#undef DOUBLE
#undef P

/* The rows with gbdt_params_default's values as their defaults */
static hr_config_table params_table(hr_config_option *rows)
{
    const size_t n = sizeof param_rows / sizeof *param_rows;
    memcpy(rows, param_rows, sizeof param_rows);
    gbdt_params def;
    gbdt_params_default(&def);
    for (size_t i = 0; i < n; i++) {
        const char *field = (const char *)&def + rows[i].offset;
        switch (rows[i].type) {
        case HR_CONFIG_DOUBLE: rows[i].def = *(const double *)field; break;
        case HR_CONFIG_ENUM: {
            const int v = *(const int *)field;
            for (int k = 0; rows[i].names[k]; k++)
                if ((rows[i].values ? rows[i].values[k] : k) == v) rows[i].def_name = rows[i].names[k];
            break;
        }
        default: rows[i].def = *(const int *)field;
        }
    }
    hr_config_table t = {"gbdt params", rows, n};
    return t;
}

static int io_write_params(hid_t g, const gbdt_params *p)
{
    hid_t pg;
    int rc = hr_h5_group_create(g, "params", &pg);
    if (rc) return rc;
    hr_config_option rows[sizeof param_rows / sizeof *param_rows];
    const hr_config_table t = params_table(rows);
    rc = hr_config_write_h5(&t, p, PARAMS_FILE_FIELDS, pg);
    if (rc == HR_OK) rc = hr_h5_attr_write_uint64(pg, "seed", p->seed);
    if (rc == HR_OK) rc = hr_config_write_h5(&t, p, PARAMS_FILE_AFTER_SEED, pg);
    H5Gclose(pg);
    return rc;
}

static int io_read_params(hid_t g, gbdt_params *p)
{
    gbdt_params_default(p);
    hid_t pg;
    int rc = hr_h5_group_open(g, "params", &pg);
    if (rc) return rc;
    hr_config_option rows[sizeof param_rows / sizeof *param_rows];
    const hr_config_table t = params_table(rows);
    rc = hr_config_read_h5(&t, pg, PARAMS_FILE_FIELDS | PARAMS_FILE_AFTER_SEED, 0, p);
    if (rc == HR_OK && hr_h5_attr_exists(pg, "seed")) rc = hr_h5_attr_read_uint64(pg, "seed", &p->seed);
    H5Gclose(pg);
    return rc;
}

/* The per-node and per-leaf arrays of a tree, in file order: (name, HDF5 memory type). Each is a field of both
 * gbdt_tree and io_trees, so the writer, the reader and the copies between the two walk one list. */
#define TREE_NODE_ARRAYS(X)                                                                                \
    X(split_feature, H5T_NATIVE_INT) X(split_gain, H5T_NATIVE_DOUBLE) X(threshold, H5T_NATIVE_DOUBLE)      \
    X(decision_type, H5T_NATIVE_UINT8) X(left_child, H5T_NATIVE_INT) X(right_child, H5T_NATIVE_INT)
#define TREE_LEAF_ARRAYS(X) X(leaf_value, H5T_NATIVE_DOUBLE) X(leaf_weight, H5T_NATIVE_DOUBLE) X(leaf_count, H5T_NATIVE_INT)

/* Concatenated tree arrays, struct-of-arrays. */
typedef struct io_trees {
    int *num_leaves, *num_cat;
    double *shrinkage;
    int *split_feature, *left_child, *right_child, *leaf_count, *cat_boundaries;
    double *split_gain, *threshold, *leaf_value, *leaf_weight;
    uint8_t *decision_type;
    uint32_t *cat_threshold;
    size_t nodes, leaves, bounds, words;
} io_trees;

static void io_trees_free(io_trees *a)
{
    free(a->num_leaves), free(a->num_cat), free(a->shrinkage), free(a->split_feature);
    free(a->left_child), free(a->right_child), free(a->leaf_count), free(a->cat_boundaries);
    free(a->split_gain), free(a->threshold), free(a->leaf_value), free(a->leaf_weight);
    free(a->decision_type), free(a->cat_threshold);
}

static int io_trees_alloc(io_trees *a, size_t T)
{
    int ok = (a->num_leaves || (a->num_leaves = hr_calloc(T + 1, sizeof(int)))) &&
             (a->num_cat || (a->num_cat = hr_calloc(T + 1, sizeof(int)))) &&
             (a->shrinkage || (a->shrinkage = hr_calloc(T + 1, sizeof(double)))) &&
             (a->split_feature = hr_calloc(a->nodes + 1, sizeof(int))) &&
             (a->left_child = hr_calloc(a->nodes + 1, sizeof(int))) &&
             (a->right_child = hr_calloc(a->nodes + 1, sizeof(int))) &&
             (a->split_gain = hr_calloc(a->nodes + 1, sizeof(double))) &&
             (a->threshold = hr_calloc(a->nodes + 1, sizeof(double))) &&
             (a->decision_type = hr_calloc(a->nodes + 1, 1)) &&
             (a->leaf_count = hr_calloc(a->leaves + 1, sizeof(int))) &&
             (a->leaf_value = hr_calloc(a->leaves + 1, sizeof(double))) &&
             (a->leaf_weight = hr_calloc(a->leaves + 1, sizeof(double))) &&
             (a->cat_boundaries = hr_calloc(a->bounds + 1, sizeof(int))) &&
             (a->cat_threshold = hr_calloc(a->words + 1, sizeof(uint32_t)));
    return ok ? HR_OK : HR_ENOMEM;
}

static int io_write_trees(hid_t g, const gbdt_booster *b)
{
    io_trees a;
    memset(&a, 0, sizeof a);
    size_t T = (size_t)b->num_trees;
    for (size_t t = 0; t < T; t++) {
        const gbdt_tree *tr = &b->trees[t];
        a.nodes += (size_t)tr->num_leaves - 1;
        a.leaves += (size_t)tr->num_leaves;
        a.bounds += (size_t)tr->num_cat + 1;
        a.words += (size_t)tr->cat_boundaries[tr->num_cat];
    }
    int rc = io_trees_alloc(&a, T);
    size_t on = 0, ol = 0, ob = 0, ow = 0;
    for (size_t t = 0; t < T && rc == HR_OK; t++) {
        const gbdt_tree *tr = &b->trees[t];
        size_t ni = (size_t)tr->num_leaves - 1, nl = (size_t)tr->num_leaves, nb = (size_t)tr->num_cat + 1;
        size_t nw = (size_t)tr->cat_boundaries[tr->num_cat];
        a.num_leaves[t] = tr->num_leaves;
        a.num_cat[t] = tr->num_cat;
        a.shrinkage[t] = tr->shrinkage;
#define TO_NODES(f, type) memcpy(a.f + on, tr->f, ni * sizeof *a.f);
#define TO_LEAVES(f, type) memcpy(a.f + ol, tr->f, nl * sizeof *a.f);
        TREE_NODE_ARRAYS(TO_NODES)
        TREE_LEAF_ARRAYS(TO_LEAVES)
#undef TO_NODES
#undef TO_LEAVES
        memcpy(a.cat_boundaries + ob, tr->cat_boundaries, nb * sizeof(int));
        memcpy(a.cat_threshold + ow, tr->cat_threshold, nw * sizeof(uint32_t));
        on += ni, ol += nl, ob += nb, ow += nw;
    }
    hid_t tg = -1;
    if (rc == HR_OK) rc = hr_h5_group_create(g, "trees", &tg);
#define W(name, type, n) if (rc == HR_OK) rc = hr_h5_write(tg, #name, type, n, 0, a.name);
    W(num_leaves, H5T_NATIVE_INT, T)
    W(num_cat, H5T_NATIVE_INT, T)
    W(shrinkage, H5T_NATIVE_DOUBLE, T)
#define W_NODES(f, type) W(f, type, a.nodes)
#define W_LEAVES(f, type) W(f, type, a.leaves)
    TREE_NODE_ARRAYS(W_NODES)
    TREE_LEAF_ARRAYS(W_LEAVES)
#undef W_NODES
#undef W_LEAVES
    W(cat_boundaries, H5T_NATIVE_INT, a.bounds)
    W(cat_threshold, H5T_NATIVE_UINT32, a.words)
#undef W
    if (tg >= 0) H5Gclose(tg);
    io_trees_free(&a);
    return rc;
}

static int io_read_trees(hid_t g, gbdt_booster *b, int num_trees)
{
    io_trees a;
    memset(&a, 0, sizeof a);
    size_t T = (size_t)num_trees;
    hid_t tg;
    int rc = hr_h5_group_open(g, "trees", &tg);
    if (rc) return rc;
    rc = (a.num_leaves = hr_calloc(T + 1, sizeof(int))) && (a.num_cat = hr_calloc(T + 1, sizeof(int))) &&
                 (a.shrinkage = hr_calloc(T + 1, sizeof(double)))
             ? HR_OK
             : HR_ENOMEM;
#define R(name, type, n) if (rc == HR_OK) rc = hr_h5_read(tg, #name, type, n, 0, a.name);
    R(num_leaves, H5T_NATIVE_INT, T)
    R(num_cat, H5T_NATIVE_INT, T)
    R(shrinkage, H5T_NATIVE_DOUBLE, T)
    for (size_t t = 0; t < T && rc == HR_OK; t++) {
        if (a.num_leaves[t] < 1 || a.num_leaves[t] > (1 << 24) || a.num_cat[t] < 0 || a.num_cat[t] >= a.num_leaves[t])
            rc = hr_error(HR_EFORMAT, "tree %zu has %d leaves and %d categorical nodes", t, a.num_leaves[t],
                          a.num_cat[t]);
        a.nodes += (size_t)a.num_leaves[t] - 1;
        a.leaves += (size_t)a.num_leaves[t];
        a.bounds += (size_t)a.num_cat[t] + 1;
    }
    /* the per-node arrays are sized from the per-tree counts; cat_threshold is resized below */
    if (rc == HR_OK) rc = io_trees_alloc(&a, T);
    R(cat_boundaries, H5T_NATIVE_INT, a.bounds)
    size_t ob = 0;
    for (size_t t = 0; t < T && rc == HR_OK; t++) {
        const int *cb = a.cat_boundaries + ob;
        if (cb[0] != 0 || cb[a.num_cat[t]] < 0 || cb[a.num_cat[t]] > (1 << 26))
            rc = hr_error(HR_EFORMAT, "tree %zu has bad cat_boundaries", t);
        else
            a.words += (size_t)cb[a.num_cat[t]];
        ob += (size_t)a.num_cat[t] + 1;
    }
    if (rc == HR_OK) {
        free(a.cat_threshold);
        if (!(a.cat_threshold = hr_calloc(a.words + 1, sizeof(uint32_t)))) rc = HR_ENOMEM;
    }
#define R_NODES(f, type) R(f, type, a.nodes)
#define R_LEAVES(f, type) R(f, type, a.leaves)
    TREE_NODE_ARRAYS(R_NODES)
    TREE_LEAF_ARRAYS(R_LEAVES)
#undef R_NODES
#undef R_LEAVES
    R(cat_threshold, H5T_NATIVE_UINT32, a.words)
#undef R
    H5Gclose(tg);
    size_t on = 0, ol = 0, ow = 0;
    ob = 0;
    for (size_t t = 0; t < T && rc == HR_OK; t++) {
        gbdt_tree *tr = gbdt_booster_push_tree(b);
        int nc = a.num_cat[t], nw = a.cat_boundaries[ob + (size_t)nc];
        if (!tr || (rc = gbdt_tree_alloc(tr, a.num_leaves[t], nc, nw))) {
            if (tr) b->num_trees--;
            rc = rc ? rc : HR_ENOMEM;
            break;
        }
        size_t ni = (size_t)tr->num_leaves - 1, nl = (size_t)tr->num_leaves;
        tr->shrinkage = a.shrinkage[t];
#define FROM_NODES(f, type) memcpy(tr->f, a.f + on, ni * sizeof *tr->f);
#define FROM_LEAVES(f, type) memcpy(tr->f, a.f + ol, nl * sizeof *tr->f);
        TREE_NODE_ARRAYS(FROM_NODES)
        TREE_LEAF_ARRAYS(FROM_LEAVES)
#undef FROM_NODES
#undef FROM_LEAVES
        memcpy(tr->cat_boundaries, a.cat_boundaries + ob, ((size_t)nc + 1) * sizeof(int));
        memcpy(tr->cat_threshold, a.cat_threshold + ow, (size_t)nw * sizeof(uint32_t));
        on += ni, ol += nl, ob += (size_t)nc + 1, ow += (size_t)nw;
        char where[32];
        snprintf(where, sizeof where, "tree %zu", t);
        rc = gbdt_tree_validate(tr, b->num_features, where);
    }
    io_trees_free(&a);
    return rc;
}

int gbdt_booster_write_h5(const gbdt_booster *b, hid_t g)
{
    size_t d = (size_t)b->num_features;
    int rc = hr_h5_attr_write_str(g, "format", GBDT_FORMAT_NAME);
    if (rc == HR_OK) rc = hr_h5_attr_write_int(g, "version", GBDT_FORMAT_VERSION);
    if (rc == HR_OK)
        rc = hr_h5_attr_write_str(g, "objective", gbdt_objective_name(b->params.objective));
    if (rc == HR_OK) rc = hr_h5_attr_write_int(g, "num_class", b->num_class);
    if (rc == HR_OK) rc = hr_h5_attr_write_int(g, "num_features", b->num_features);
    if (rc == HR_OK) rc = hr_h5_attr_write_int(g, "num_trees", b->num_trees);
    if (rc == HR_OK) rc = hr_h5_attr_write_int(g, "best_iteration", b->best_iteration);
    if (rc == HR_OK) rc = io_write_params(g, &b->params);
    if (rc == HR_OK) rc = hr_h5_write_fixed_strings(g, "feature_names", b->feature_names, d);
    if (rc == HR_OK) rc = hr_h5_write(g, "is_categorical", H5T_NATIVE_UINT8, d, 0, b->is_categorical);
    if (rc == HR_OK) rc = hr_h5_write(g, "base_score", H5T_NATIVE_DOUBLE, (size_t)b->num_class, 0, b->base_score);
    if (rc == HR_OK) rc = io_write_trees(g, b);
    return rc ? hr_error_wrap(rc, "gbdt: writing booster") : HR_OK;
}

static int io_read_names(hid_t g, gbdt_booster *b)
{
    char **names;
    size_t n;
    int rc = hr_h5_read_fixed_strings(g, "feature_names", &names, &n);
    if (rc) return rc;
    if (n != (size_t)b->num_features)
        rc = hr_error(HR_EFORMAT, "dataset feature_names has %zu names for %d features", n, b->num_features);
    for (size_t j = 0; j < n && rc == HR_OK; j++) rc = gbdt_booster_set_feature_name(b, (int)j, names[j]);
    hr_h5_free_strings(names, n);
    return rc;
}

int gbdt_booster_read_h5(hid_t g, gbdt_booster **out)
{
    *out = NULL;
    char *format = NULL, *objective = NULL;
    long long version = 0;
    int num_class = 0, num_features = 0, num_trees = -1, best = -1;
    if (hr_h5_attr_read_str(g, "format", &format) || strcmp(format, GBDT_FORMAT_NAME) != 0) {
        int rc = hr_error(HR_EFORMAT, "not a %s booster (format attribute '%s')", GBDT_FORMAT_NAME,
                          format ? format : "missing");
        free(format);
        return rc;
    }
    free(format);
    int rc = hr_h5_attr_read_int(g, "version", &version);
    if (rc) return rc;
    if (version > GBDT_FORMAT_VERSION)
        return hr_error(HR_EVERSION, "written by format version %lld, this build reads up to version %d", version,
                        GBDT_FORMAT_VERSION);
    if (version < 1) return hr_error(HR_EFORMAT, "bad format version %lld", version);
    if ((rc = hr_h5_attr_read_str(g, "objective", &objective))) return rc;
    gbdt_objective obj = GBDT_OBJECTIVE_L2;
    if (gbdt_objective_parse(objective, &obj)) rc = hr_error(HR_EFORMAT, "unknown objective '%s'", objective);
    const int softmax = obj == GBDT_OBJECTIVE_SOFTMAX;
    free(objective);
    if (rc == HR_OK) rc = hr_h5_attr_read_int_in(g, "booster", "num_class", 1, 256, &num_class);
    if (rc == HR_OK && !softmax && num_class != 1)
        rc = hr_error(HR_EFORMAT, "an l2 booster with num_class %d (expected 1)", num_class);
    if (rc == HR_OK) rc = hr_h5_attr_read_int_in(g, "booster", "num_features", 1, 1 << 24, &num_features);
    if (rc == HR_OK) rc = hr_h5_attr_read_int_in(g, "booster", "num_trees", 0, INT_MAX, &num_trees);
    /* optional: absent means none (-1) */
    if (rc == HR_OK && hr_h5_attr_exists(g, "best_iteration"))
        rc = hr_h5_attr_read_int_in(g, "booster", "best_iteration", -1, INT_MAX, &best);
    if (rc) return rc;
    if (num_trees % num_class != 0)
        return hr_error(HR_EFORMAT, "bad sizes: %d trees is not a multiple of %d classes", num_trees, num_class);
    gbdt_booster *b;
    if ((rc = gbdt_booster_alloc(num_features, num_class, &b))) return rc;
    b->best_iteration = best;
    rc = io_read_params(g, &b->params);
    b->params.objective = obj;
    b->params.num_class = num_class;
    if (rc == HR_OK) rc = io_read_names(g, b);
    if (rc == HR_OK) rc = hr_h5_read(g, "is_categorical", H5T_NATIVE_UINT8, (size_t)num_features, 0, b->is_categorical);
    if (rc == HR_OK) rc = hr_h5_read(g, "base_score", H5T_NATIVE_DOUBLE, (size_t)num_class, 0, b->base_score);
    if (rc == HR_OK) rc = io_read_trees(g, b, num_trees);
    if (rc == HR_OK) rc = gbdt_booster_pack(b);
    if (rc) {
        gbdt_booster_free(b);
        return rc;
    }
    *out = b;
    return HR_OK;
}

int gbdt_booster_save(const gbdt_booster *b, const char *path)
{
    hr_h5_out out;
    int rc = hr_h5_create(path, &out); /* a temporary sibling, renamed into place on success */
    if (rc) return rc;
    rc = gbdt_booster_write_h5(b, out.file);
    if (rc) {
        hr_h5_close(&out, 0);
        return hr_error_wrap(rc, "%s", path);
    }
    return hr_h5_close(&out, 1);
}

int gbdt_booster_load(const char *path, gbdt_booster **out)
{
    *out = NULL;
    hid_t f;
    int rc = hr_h5_open(path, GBDT_FORMAT_NAME, GBDT_FORMAT_VERSION, &f, NULL);
    if (rc) return rc;
    rc = gbdt_booster_read_h5(f, out);
    H5Fclose(f);
    /* core/h5's messages already start with the file name; the others get it here */
    if (rc && strncmp(hr_last_error(), path, strlen(path)) != 0) hr_error_wrap(rc, "%s", path);
    return rc;
}
