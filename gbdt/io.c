/* Our model format, in HDF5. A booster group holds
 *   attributes  format = "heurist-gbdt", version, objective ("l2" | "softmax"), num_class, num_features,
 *               num_trees, best_iteration
 *   params/     one attribute per gbdt_params field, by name
 *   datasets    feature_names (d fixed-length strings), is_categorical (d), base_score (K)
 *   trees/      struct-of-arrays over all trees: per tree num_leaves, num_cat, shrinkage (T); per node
 *               split_feature, split_gain, threshold, decision_type, left_child, right_child
 *               (sum of num_leaves - 1); per leaf leaf_value, leaf_weight, leaf_count (sum of num_leaves);
 *               cat_boundaries (sum of num_cat + 1) and cat_threshold (sum of bitset words).
 * Everything is addressed by name, and the reader validates every tree before use. */
#include "gbdt/gbdt_internal.h"

#include <stdlib.h>
#include <string.h>

#define PARAM_INTS(X)                                                                                      \
    X(num_class) X(num_rounds) X(num_leaves) X(max_depth) X(min_data_in_leaf) X(bagging_freq) X(max_bin)   \
    X(max_cat_to_onehot) X(max_cat_threshold) X(min_data_per_group) X(boost_from_average)                 \
    X(early_stopping_rounds) X(log_every) X(num_threads)
#define PARAM_DOUBLES(X)                                                                                   \
    X(learning_rate) X(min_sum_hessian_in_leaf) X(lambda_l1) X(lambda_l2) X(min_gain_to_split)            \
    X(bagging_fraction) X(feature_fraction) X(cat_l2) X(cat_smooth) X(base_score)

static int h5_attr_write(hid_t loc, const char *name, hid_t filetype, hid_t memtype, const void *v)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = space < 0 ? -1 : H5Acreate2(loc, name, filetype, space, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, memtype, v) >= 0;
    if (a >= 0) H5Aclose(a);
    if (space >= 0) H5Sclose(space);
    return ok ? HR_OK : hr_error(HR_EIO, "gbdt: cannot write attribute %s", name);
}

static int h5_attr_write_str(hid_t loc, const char *name, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0 || H5Tset_size(t, strlen(s) + 1) < 0) return hr_error(HR_EIO, "gbdt: cannot write attribute %s", name);
    int rc = h5_attr_write(loc, name, t, t, s);
    H5Tclose(t);
    return rc;
}

/* 1 if present (and read), 0 if absent, negative on a read error */
static int h5_attr_read(hid_t loc, const char *name, hid_t memtype, void *v)
{
    htri_t exists;
    H5E_BEGIN_TRY { exists = H5Aexists(loc, name); } H5E_END_TRY;
    if (exists <= 0) return 0;
    int ok;
    H5E_BEGIN_TRY {
        hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
        ok = a >= 0 && H5Aread(a, memtype, v) >= 0;
        if (a >= 0) H5Aclose(a);
    } H5E_END_TRY;
    return ok ? 1 : hr_error(HR_EFORMAT, "attribute %s cannot be read", name);
}

static int h5_attr_read_str(hid_t loc, const char *name, char *buf, size_t cap)
{
    htri_t exists;
    H5E_BEGIN_TRY { exists = H5Aexists(loc, name); } H5E_END_TRY;
    if (exists <= 0) return 0;
    int ok = 0;
    H5E_BEGIN_TRY {
        hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
        hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
        size_t sz = ft >= 0 && H5Tget_class(ft) == H5T_STRING && !H5Tis_variable_str(ft) ? H5Tget_size(ft) : 0;
        if (sz > 0 && sz < cap) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, sz);
            memset(buf, 0, cap);
            ok = H5Aread(a, mt, buf) >= 0;
            H5Tclose(mt);
        }
        if (ft >= 0) H5Tclose(ft);
        if (a >= 0) H5Aclose(a);
    } H5E_END_TRY;
    return ok ? 1 : hr_error(HR_EFORMAT, "attribute %s is not a short fixed-length string", name);
}

static int h5_write(hid_t g, const char *name, hid_t filetype, hid_t memtype, size_t n, const void *buf)
{
    hsize_t dim = n;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    hid_t d = space < 0 ? -1 : H5Dcreate2(g, name, filetype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = d >= 0 && (n == 0 || H5Dwrite(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    if (d >= 0) H5Dclose(d);
    if (space >= 0) H5Sclose(space);
    return ok ? HR_OK : hr_error(HR_EIO, "gbdt: cannot write dataset %s", name);
}

/* Reads dataset `name` of exactly n elements into buf. */
static int h5_read(hid_t g, const char *name, hid_t memtype, size_t n, void *buf)
{
    int rc = HR_OK;
    H5E_BEGIN_TRY {
        hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
        hid_t space = d < 0 ? -1 : H5Dget_space(d);
        hssize_t npts = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
        if (d < 0)
            rc = hr_error(HR_EFORMAT, "dataset %s is missing", name);
        else if (npts < 0 || (size_t)npts != n)
            rc = hr_error(HR_EFORMAT, "dataset %s has %lld elements, expected %zu", name, (long long)npts, n);
        else if (n > 0 && H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            rc = hr_error(HR_EIO, "dataset %s cannot be read", name);
        if (space >= 0) H5Sclose(space);
        if (d >= 0) H5Dclose(d);
    } H5E_END_TRY;
    return rc;
}

static int io_write_params(hid_t g, const gbdt_params *p)
{
    hid_t pg = H5Gcreate2(g, "params", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (pg < 0) return hr_error(HR_EIO, "gbdt: cannot create group params");
    int rc = h5_attr_write_str(pg, "objective", p->objective == GBDT_OBJECTIVE_SOFTMAX ? "softmax" : "l2");
#define WRITE_INT(f) if (rc == HR_OK) rc = h5_attr_write(pg, #f, H5T_STD_I64LE, H5T_NATIVE_INT, &p->f);
#define WRITE_DOUBLE(f) if (rc == HR_OK) rc = h5_attr_write(pg, #f, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &p->f);
    PARAM_INTS(WRITE_INT)
    PARAM_DOUBLES(WRITE_DOUBLE)
    if (rc == HR_OK) rc = h5_attr_write(pg, "seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &p->seed);
    H5Gclose(pg);
    return rc;
}

static int io_read_params(hid_t g, gbdt_params *p)
{
    gbdt_params_default(p);
    hid_t pg;
    H5E_BEGIN_TRY { pg = H5Gopen2(g, "params", H5P_DEFAULT); } H5E_END_TRY;
    if (pg < 0) return hr_error(HR_EFORMAT, "group params is missing");
    int rc = 0;
#define READ_INT(f) if (rc >= 0) rc = h5_attr_read(pg, #f, H5T_NATIVE_INT, &p->f);
#define READ_DOUBLE(f) if (rc >= 0) rc = h5_attr_read(pg, #f, H5T_NATIVE_DOUBLE, &p->f);
    PARAM_INTS(READ_INT)
    PARAM_DOUBLES(READ_DOUBLE)
    if (rc >= 0) rc = h5_attr_read(pg, "seed", H5T_NATIVE_UINT64, &p->seed);
    H5Gclose(pg);
    return rc < 0 ? rc : HR_OK;
}

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
        memcpy(a.split_feature + on, tr->split_feature, ni * sizeof(int));
        memcpy(a.left_child + on, tr->left_child, ni * sizeof(int));
        memcpy(a.right_child + on, tr->right_child, ni * sizeof(int));
        memcpy(a.split_gain + on, tr->split_gain, ni * sizeof(double));
        memcpy(a.threshold + on, tr->threshold, ni * sizeof(double));
        memcpy(a.decision_type + on, tr->decision_type, ni);
        memcpy(a.leaf_count + ol, tr->leaf_count, nl * sizeof(int));
        memcpy(a.leaf_value + ol, tr->leaf_value, nl * sizeof(double));
        memcpy(a.leaf_weight + ol, tr->leaf_weight, nl * sizeof(double));
        memcpy(a.cat_boundaries + ob, tr->cat_boundaries, nb * sizeof(int));
        memcpy(a.cat_threshold + ow, tr->cat_threshold, nw * sizeof(uint32_t));
        on += ni, ol += nl, ob += nb, ow += nw;
    }
    hid_t tg = rc ? -1 : H5Gcreate2(g, "trees", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (rc == HR_OK && tg < 0) rc = hr_error(HR_EIO, "gbdt: cannot create group trees");
#define W(name, ft, mt, n) if (rc == HR_OK) rc = h5_write(tg, #name, ft, mt, n, a.name);
    W(num_leaves, H5T_STD_I32LE, H5T_NATIVE_INT, T)
    W(num_cat, H5T_STD_I32LE, H5T_NATIVE_INT, T)
    W(shrinkage, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, T)
    W(split_feature, H5T_STD_I32LE, H5T_NATIVE_INT, a.nodes)
    W(split_gain, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, a.nodes)
    W(threshold, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, a.nodes)
    W(decision_type, H5T_STD_U8LE, H5T_NATIVE_UINT8, a.nodes)
    W(left_child, H5T_STD_I32LE, H5T_NATIVE_INT, a.nodes)
    W(right_child, H5T_STD_I32LE, H5T_NATIVE_INT, a.nodes)
    W(leaf_value, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, a.leaves)
    W(leaf_weight, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, a.leaves)
    W(leaf_count, H5T_STD_I32LE, H5T_NATIVE_INT, a.leaves)
    W(cat_boundaries, H5T_STD_I32LE, H5T_NATIVE_INT, a.bounds)
    W(cat_threshold, H5T_STD_U32LE, H5T_NATIVE_UINT32, a.words)
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
    H5E_BEGIN_TRY { tg = H5Gopen2(g, "trees", H5P_DEFAULT); } H5E_END_TRY;
    if (tg < 0) return hr_error(HR_EFORMAT, "group trees is missing");
    int rc = (a.num_leaves = hr_calloc(T + 1, sizeof(int))) && (a.num_cat = hr_calloc(T + 1, sizeof(int))) &&
                     (a.shrinkage = hr_calloc(T + 1, sizeof(double)))
                 ? HR_OK
                 : HR_ENOMEM;
#define R(name, mt, n) if (rc == HR_OK) rc = h5_read(tg, #name, mt, n, a.name);
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
    R(split_feature, H5T_NATIVE_INT, a.nodes)
    R(split_gain, H5T_NATIVE_DOUBLE, a.nodes)
    R(threshold, H5T_NATIVE_DOUBLE, a.nodes)
    R(decision_type, H5T_NATIVE_UINT8, a.nodes)
    R(left_child, H5T_NATIVE_INT, a.nodes)
    R(right_child, H5T_NATIVE_INT, a.nodes)
    R(leaf_value, H5T_NATIVE_DOUBLE, a.leaves)
    R(leaf_weight, H5T_NATIVE_DOUBLE, a.leaves)
    R(leaf_count, H5T_NATIVE_INT, a.leaves)
    R(cat_threshold, H5T_NATIVE_UINT32, a.words)
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
        memcpy(tr->split_feature, a.split_feature + on, ni * sizeof(int));
        memcpy(tr->left_child, a.left_child + on, ni * sizeof(int));
        memcpy(tr->right_child, a.right_child + on, ni * sizeof(int));
        memcpy(tr->split_gain, a.split_gain + on, ni * sizeof(double));
        memcpy(tr->threshold, a.threshold + on, ni * sizeof(double));
        memcpy(tr->decision_type, a.decision_type + on, ni);
        memcpy(tr->leaf_count, a.leaf_count + ol, nl * sizeof(int));
        memcpy(tr->leaf_value, a.leaf_value + ol, nl * sizeof(double));
        memcpy(tr->leaf_weight, a.leaf_weight + ol, nl * sizeof(double));
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
    int version = GBDT_FORMAT_VERSION;
    int rc = h5_attr_write_str(g, "format", GBDT_FORMAT_NAME);
    if (rc == HR_OK) rc = h5_attr_write(g, "version", H5T_STD_I32LE, H5T_NATIVE_INT, &version);
    if (rc == HR_OK)
        rc = h5_attr_write_str(g, "objective", b->params.objective == GBDT_OBJECTIVE_SOFTMAX ? "softmax" : "l2");
    if (rc == HR_OK) rc = h5_attr_write(g, "num_class", H5T_STD_I32LE, H5T_NATIVE_INT, &b->num_class);
    if (rc == HR_OK) rc = h5_attr_write(g, "num_features", H5T_STD_I32LE, H5T_NATIVE_INT, &b->num_features);
    if (rc == HR_OK) rc = h5_attr_write(g, "num_trees", H5T_STD_I32LE, H5T_NATIVE_INT, &b->num_trees);
    if (rc == HR_OK) rc = h5_attr_write(g, "best_iteration", H5T_STD_I32LE, H5T_NATIVE_INT, &b->best_iteration);
    if (rc == HR_OK) rc = io_write_params(g, &b->params);
    size_t d = (size_t)b->num_features, width = 1;
    for (size_t j = 0; j < d; j++)
        if (strlen(b->feature_names[j]) + 1 > width) width = strlen(b->feature_names[j]) + 1;
    char *names = rc ? NULL : hr_calloc(d, width);
    if (rc == HR_OK && !names) rc = HR_ENOMEM;
    if (rc == HR_OK) {
        for (size_t j = 0; j < d; j++) memcpy(names + j * width, b->feature_names[j], strlen(b->feature_names[j]));
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, width);
        rc = h5_write(g, "feature_names", st, st, d, names);
        H5Tclose(st);
    }
    free(names);
    if (rc == HR_OK) rc = h5_write(g, "is_categorical", H5T_STD_U8LE, H5T_NATIVE_UINT8, d, b->is_categorical);
    if (rc == HR_OK)
        rc = h5_write(g, "base_score", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (size_t)b->num_class, b->base_score);
    if (rc == HR_OK) rc = io_write_trees(g, b);
    return rc ? hr_error_wrap(rc, "gbdt: writing booster") : HR_OK;
}

static int io_read_names(hid_t g, gbdt_booster *b)
{
    int rc = HR_OK;
    size_t d = (size_t)b->num_features;
    H5E_BEGIN_TRY {
        hid_t ds = H5Dopen2(g, "feature_names", H5P_DEFAULT);
        hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
        size_t width = ft >= 0 && H5Tget_class(ft) == H5T_STRING && !H5Tis_variable_str(ft) ? H5Tget_size(ft) : 0;
        if (ds < 0 || width == 0) rc = hr_error(HR_EFORMAT, "dataset feature_names is missing or not fixed strings");
        if (ft >= 0) H5Tclose(ft);
        if (ds >= 0) H5Dclose(ds);
        char *names = rc ? NULL : hr_calloc(d, width + 1);
        if (rc == HR_OK && !names) rc = HR_ENOMEM;
        if (rc == HR_OK) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, width);
            rc = h5_read(g, "feature_names", mt, d, names);
            H5Tclose(mt);
        }
        char *one = rc ? NULL : hr_malloc(width + 1);
        if (rc == HR_OK && !one) rc = HR_ENOMEM;
        for (size_t j = 0; j < d && rc == HR_OK; j++) {
            memcpy(one, names + j * width, width);
            one[width] = 0;
            rc = gbdt_booster_set_feature_name(b, (int)j, one);
        }
        free(one);
        free(names);
    } H5E_END_TRY;
    return rc;
}

int gbdt_booster_read_h5(hid_t g, gbdt_booster **out)
{
    *out = NULL;
    char format[64] = "", objective[32] = "";
    int version = 0, num_class = 0, num_features = 0, num_trees = -1, best = -1;
    int rc = h5_attr_read_str(g, "format", format, sizeof format);
    if (rc == 0 || (rc > 0 && strcmp(format, GBDT_FORMAT_NAME) != 0))
        return hr_error(HR_EFORMAT, "not a %s booster (format attribute '%s')", GBDT_FORMAT_NAME, format);
    if (rc < 0) return rc;
    if ((rc = h5_attr_read(g, "version", H5T_NATIVE_INT, &version)) <= 0)
        return rc < 0 ? rc : hr_error(HR_EFORMAT, "version attribute is missing");
    if (version > GBDT_FORMAT_VERSION)
        return hr_error(HR_EVERSION, "written by format version %d, this build reads up to version %d", version,
                        GBDT_FORMAT_VERSION);
    if (version < 1) return hr_error(HR_EFORMAT, "bad format version %d", version);
    if (h5_attr_read_str(g, "objective", objective, sizeof objective) <= 0 ||
        h5_attr_read(g, "num_class", H5T_NATIVE_INT, &num_class) <= 0 ||
        h5_attr_read(g, "num_features", H5T_NATIVE_INT, &num_features) <= 0 ||
        h5_attr_read(g, "num_trees", H5T_NATIVE_INT, &num_trees) <= 0)
        return hr_error(HR_EFORMAT, "objective, num_class, num_features or num_trees attribute is missing");
    h5_attr_read(g, "best_iteration", H5T_NATIVE_INT, &best);
    int softmax = strcmp(objective, "softmax") == 0;
    if (!softmax && strcmp(objective, "l2") != 0) return hr_error(HR_EFORMAT, "unknown objective '%s'", objective);
    if (num_class < 1 || num_class > 256 || (!softmax && num_class != 1) || num_features < 1 ||
        num_features > (1 << 24) || num_trees < 0 || num_trees % num_class != 0)
        return hr_error(HR_EFORMAT, "bad sizes: %d classes, %d features, %d trees", num_class, num_features,
                        num_trees);
    gbdt_booster *b;
    if ((rc = gbdt_booster_alloc(num_features, num_class, &b))) return rc;
    b->best_iteration = best;
    rc = io_read_params(g, &b->params);
    b->params.objective = softmax ? GBDT_OBJECTIVE_SOFTMAX : GBDT_OBJECTIVE_L2;
    b->params.num_class = num_class;
    if (rc == HR_OK) rc = io_read_names(g, b);
    if (rc == HR_OK) rc = h5_read(g, "is_categorical", H5T_NATIVE_UINT8, (size_t)num_features, b->is_categorical);
    if (rc == HR_OK) rc = h5_read(g, "base_score", H5T_NATIVE_DOUBLE, (size_t)num_class, b->base_score);
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
    char *tmp = hr_file_tmp_path(path);
    if (!tmp) return HR_ENOMEM;
    hid_t f;
    H5E_BEGIN_TRY { f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT); } H5E_END_TRY;
    if (f < 0) {
        free(tmp);
        return hr_error(HR_EIO, "%s: cannot create a temporary HDF5 file", path);
    }
    int rc;
    H5E_BEGIN_TRY { rc = gbdt_booster_write_h5(b, f); } H5E_END_TRY;
    if (H5Fclose(f) < 0 && rc == HR_OK) rc = hr_error(HR_EIO, "cannot close the file");
    if (rc == HR_OK)
        rc = hr_file_commit(tmp, path);
    else
        remove(tmp);
    free(tmp);
    return rc ? hr_error_wrap(rc, "%s", path) : HR_OK;
}

int gbdt_booster_load(const char *path, gbdt_booster **out)
{
    *out = NULL;
    if (!hr_file_exists(path)) return hr_error(HR_EIO, "%s: no such file", path);
    hid_t f;
    H5E_BEGIN_TRY { f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT); } H5E_END_TRY;
    if (f < 0) return hr_error(HR_EFORMAT, "%s: not a readable HDF5 file (truncated or corrupt?)", path);
    int rc;
    H5E_BEGIN_TRY { rc = gbdt_booster_read_h5(f, out); } H5E_END_TRY;
    H5Fclose(f);
    return rc ? hr_error_wrap(rc, "%s", path) : HR_OK;
}
