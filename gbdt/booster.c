/* Booster and tree storage: allocation, copying, validation, accessors, feature importance. */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gbdt_booster_alloc(int num_features, int num_class, gbdt_booster **out)
{
    *out = NULL;
    if (num_features <= 0 || num_class <= 0)
        return hr_error(HR_EINVAL, "gbdt: booster needs features and classes (got %d, %d)", num_features,
                        num_class);
    gbdt_booster *b = hr_calloc(1, sizeof *b);
    if (!b) return HR_ENOMEM;
    gbdt_params_default(&b->params);
    b->num_features = num_features;
    b->num_class = num_class;
    b->best_iteration = -1;
    b->base_score = hr_calloc((size_t)num_class, sizeof *b->base_score);
    b->feature_names = hr_calloc((size_t)num_features, sizeof *b->feature_names);
    b->is_categorical = hr_calloc((size_t)num_features, 1);
    if (!b->base_score || !b->feature_names || !b->is_categorical) {
        gbdt_booster_free(b);
        return HR_ENOMEM;
    }
    *out = b;
    return HR_OK;
}

void gbdt_booster_free(gbdt_booster *b)
{
    if (!b) return;
    gbdt_packed_free(&b->packed);
    for (int t = 0; t < b->num_trees; t++) gbdt_tree_free(&b->trees[t]);
    free(b->trees);
    if (b->feature_names)
        for (int j = 0; j < b->num_features; j++) free(b->feature_names[j]);
    free(b->feature_names);
    free(b->is_categorical);
    free(b->base_score);
    free(b);
}

/* Both change the tree list, so both drop the packed layout: it is rebuilt once the list is final. */
gbdt_tree *gbdt_booster_push_tree(gbdt_booster *b)
{
    gbdt_packed_free(&b->packed);
    if (b->num_trees == b->cap_trees) {
        int cap = b->cap_trees ? 2 * b->cap_trees : 64;
        gbdt_tree *t = realloc(b->trees, (size_t)cap * sizeof *t);
        if (!t) {
            hr_error(HR_ENOMEM, "gbdt: out of memory growing the tree list to %d", cap);
            return NULL;
        }
        b->trees = t;
        b->cap_trees = cap;
    }
    gbdt_tree *t = &b->trees[b->num_trees++];
    memset(t, 0, sizeof *t);
    return t;
}

void gbdt_booster_truncate(gbdt_booster *b, int num_trees)
{
    if (b->num_trees > num_trees) gbdt_packed_free(&b->packed);
    while (b->num_trees > num_trees) gbdt_tree_free(&b->trees[--b->num_trees]);
}

int gbdt_booster_set_feature_name(gbdt_booster *b, int j, const char *name)
{
    char buf[32];
    if (!name) {
        snprintf(buf, sizeof buf, "f%d", j);
        name = buf;
    }
    char *s = hr_strdup(name);
    if (!s) return HR_ENOMEM;
    free(b->feature_names[j]);
    b->feature_names[j] = s;
    return HR_OK;
}

int gbdt_tree_alloc(gbdt_tree *t, int num_leaves, int num_cat, int cat_words)
{
    memset(t, 0, sizeof *t);
    if (num_leaves < 1 || num_cat < 0 || cat_words < 0)
        return hr_error(HR_EINVAL, "gbdt: bad tree size (%d leaves, %d categorical nodes)", num_leaves, num_cat);
    size_t ni = (size_t)(num_leaves - 1), nl = (size_t)num_leaves;
    t->num_leaves = num_leaves;
    t->num_cat = num_cat;
    t->shrinkage = 1.0;
    /* +1 so that zero-size arrays are still distinct non-NULL allocations */
    t->split_feature = hr_calloc(ni + 1, sizeof(int));
    t->split_gain = hr_calloc(ni + 1, sizeof(double));
    t->threshold = hr_calloc(ni + 1, sizeof(double));
    t->decision_type = hr_calloc(ni + 1, 1);
    t->left_child = hr_calloc(ni + 1, sizeof(int));
    t->right_child = hr_calloc(ni + 1, sizeof(int));
    t->leaf_value = hr_calloc(nl, sizeof(double));
    t->leaf_weight = hr_calloc(nl, sizeof(double));
    t->leaf_count = hr_calloc(nl, sizeof(int));
    t->cat_boundaries = hr_calloc((size_t)num_cat + 1, sizeof(int));
    t->cat_threshold = hr_calloc((size_t)cat_words + 1, sizeof(uint32_t));
    if (!t->split_feature || !t->split_gain || !t->threshold || !t->decision_type || !t->left_child ||
        !t->right_child || !t->leaf_value || !t->leaf_weight || !t->leaf_count || !t->cat_boundaries ||
        !t->cat_threshold) {
        gbdt_tree_free(t);
        return HR_ENOMEM;
    }
    return HR_OK;
}

void gbdt_tree_free(gbdt_tree *t)
{
    free(t->split_feature);
    free(t->split_gain);
    free(t->threshold);
    free(t->decision_type);
    free(t->left_child);
    free(t->right_child);
    free(t->leaf_value);
    free(t->leaf_weight);
    free(t->leaf_count);
    free(t->cat_boundaries);
    free(t->cat_threshold);
    memset(t, 0, sizeof *t);
}

int gbdt_tree_copy(gbdt_tree *dst, const gbdt_tree *src)
{
    int words = src->cat_boundaries[src->num_cat];
    int rc = gbdt_tree_alloc(dst, src->num_leaves, src->num_cat, words);
    if (rc) return rc;
    size_t ni = (size_t)(src->num_leaves - 1), nl = (size_t)src->num_leaves;
    dst->shrinkage = src->shrinkage;
    memcpy(dst->split_feature, src->split_feature, ni * sizeof(int));
    memcpy(dst->split_gain, src->split_gain, ni * sizeof(double));
    memcpy(dst->threshold, src->threshold, ni * sizeof(double));
    memcpy(dst->decision_type, src->decision_type, ni);
    memcpy(dst->left_child, src->left_child, ni * sizeof(int));
    memcpy(dst->right_child, src->right_child, ni * sizeof(int));
    memcpy(dst->leaf_value, src->leaf_value, nl * sizeof(double));
    memcpy(dst->leaf_weight, src->leaf_weight, nl * sizeof(double));
    memcpy(dst->leaf_count, src->leaf_count, nl * sizeof(int));
    memcpy(dst->cat_boundaries, src->cat_boundaries, ((size_t)src->num_cat + 1) * sizeof(int));
    memcpy(dst->cat_threshold, src->cat_threshold, (size_t)words * sizeof(uint32_t));
    return HR_OK;
}

/* A loaded tree must be a real binary tree over nodes 0..L-2 rooted at 0 reaching every leaf exactly
 * once, or prediction could loop forever or read out of bounds. */
int gbdt_tree_validate(const gbdt_tree *t, int num_features, const char *where)
{
    int L = t->num_leaves;
    if (L < 1) return hr_error(HR_EFORMAT, "%s: tree has %d leaves", where, L);
    for (int l = 0; l < L; l++)
        if (!isfinite(t->leaf_value[l])) return hr_error(HR_EFORMAT, "%s: leaf %d value is not finite", where, l);
    if (t->num_cat < 0 || t->cat_boundaries[0] != 0)
        return hr_error(HR_EFORMAT, "%s: bad categorical boundaries", where);
    for (int c = 0; c < t->num_cat; c++)
        if (t->cat_boundaries[c + 1] < t->cat_boundaries[c])
            return hr_error(HR_EFORMAT, "%s: cat_boundaries decrease at %d", where, c);
    if (L == 1) return HR_OK;
    int n_int = L - 1;
    int *seen = hr_calloc((size_t)(n_int + L), sizeof *seen);
    if (!seen) return HR_ENOMEM;
    int rc = HR_OK;
    seen[0] = 1;
    for (int i = 0; i < n_int && rc == HR_OK; i++) {
        int f = t->split_feature[i];
        if (f < 0 || f >= num_features) {
            rc = hr_error(HR_EFORMAT, "%s: node %d splits on feature %d of %d", where, i, f, num_features);
            break;
        }
        if (t->decision_type[i] & GBDT_DT_CATEGORICAL) {
            double c = t->threshold[i];
            if (!(c >= 0 && c < t->num_cat) || c != floor(c)) {
                rc = hr_error(HR_EFORMAT, "%s: node %d categorical index %g outside 0..%d", where, i, c,
                              t->num_cat - 1);
                break;
            }
        } else if (isnan(t->threshold[i])) {
            rc = hr_error(HR_EFORMAT, "%s: node %d threshold is NaN", where, i);
            break;
        }
        if (((t->decision_type[i] >> 2) & 3u) == 3u) {
            rc = hr_error(HR_EFORMAT, "%s: node %d has unknown missing type 3", where, i);
            break;
        }
        int kids[2] = {t->left_child[i], t->right_child[i]};
        for (int s = 0; s < 2; s++) {
            int c = kids[s];
            int slot = c >= 0 ? c : n_int + ~c;
            /* children must come after their parent, which also rules out cycles */
            if ((c >= 0 && (c >= n_int || c <= i)) || (c < 0 && ~c >= L) || seen[slot]) {
                rc = hr_error(HR_EFORMAT, "%s: node %d has a bad child %d", where, i, c);
                break;
            }
            seen[slot] = 1;
        }
    }
    for (int s = 0; s < n_int + L && rc == HR_OK; s++)
        if (!seen[s]) rc = hr_error(HR_EFORMAT, "%s: tree node/leaf %d is unreachable", where, s);
    free(seen);
    return rc;
}

int gbdt_booster_num_features(const gbdt_booster *b) { return b->num_features; }
int gbdt_booster_num_class(const gbdt_booster *b) { return b->num_class; }
int gbdt_booster_num_trees(const gbdt_booster *b) { return b->num_trees; }
int gbdt_booster_num_iterations(const gbdt_booster *b) { return b->num_trees / b->num_class; }
int gbdt_booster_best_iteration(const gbdt_booster *b) { return b->best_iteration; }
gbdt_objective gbdt_booster_objective(const gbdt_booster *b) { return b->params.objective; }
const gbdt_params *gbdt_booster_params(const gbdt_booster *b) { return &b->params; }

const char *gbdt_booster_feature_name(const gbdt_booster *b, int j)
{
    return j >= 0 && j < b->num_features ? b->feature_names[j] : NULL;
}

const gbdt_tree *gbdt_booster_tree(const gbdt_booster *b, int t)
{
    return t >= 0 && t < b->num_trees ? &b->trees[t] : NULL;
}

void gbdt_booster_importance(const gbdt_booster *b, gbdt_importance type, double *out)
{
    memset(out, 0, (size_t)b->num_features * sizeof *out);
    for (int t = 0; t < b->num_trees; t++) {
        const gbdt_tree *tr = &b->trees[t];
        for (int i = 0; i < tr->num_leaves - 1; i++)
            out[tr->split_feature[i]] += type == GBDT_IMPORTANCE_GAIN ? tr->split_gain[i] : 1.0;
    }
}
