/* The gbdt family as C source for an exported runtime: every tree as flat arrays, and the traversal
 * (export/runtime/gbdt.h) with the same decision rules as gbdt/predict.c (LightGBM's); or, for a table model's
 * booster, one 16-byte record per split and leaf (gbdt.h's flat section). The boosters and the rank mode's
 * candidates come from the model's views (models/gbdt_view.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "gbdt/gbdt.h"
#include "models/view.h"

/* One booster as arrays: per tree, offsets into node, leaf and category arrays. */
int export_gbdt_booster(FILE *out, const gbdt_booster *b, int idx)
{
    int T = gbdt_booster_num_trees(b), K = gbdt_booster_num_class(b);
    size_t nodes = 0, leaves = 0, cbound = 0, cwords = 0;
    for (int t = 0; t < T; t++) {
        const gbdt_tree *tr = gbdt_booster_tree(b, t);
        nodes += (size_t)(tr->num_leaves - 1);
        leaves += (size_t)tr->num_leaves;
        cbound += (size_t)tr->num_cat + 1;
        cwords += tr->num_cat ? (size_t)tr->cat_boundaries[tr->num_cat] : 0;
    }
    int *node_off = malloc((size_t)(T + 1) * sizeof(int)), *leaf_off = malloc((size_t)(T + 1) * sizeof(int));
    int *cb_off = malloc((size_t)(T + 1) * sizeof(int)), *cw_off = malloc((size_t)(T + 1) * sizeof(int));
    int *feat = malloc((nodes ? nodes : 1) * sizeof(int)), *dt = malloc((nodes ? nodes : 1) * sizeof(int));
    int *left = malloc((nodes ? nodes : 1) * sizeof(int)), *right = malloc((nodes ? nodes : 1) * sizeof(int));
    double *thr = malloc((nodes ? nodes : 1) * sizeof(double)), *lv = malloc((leaves ? leaves : 1) * sizeof(double));
    int *cb = malloc((cbound ? cbound : 1) * sizeof(int));
    int *cw = malloc((cwords ? cwords : 1) * sizeof(int));
    int rc = HR_OK;
    if (!node_off || !leaf_off || !cb_off || !cw_off || !feat || !dt || !left || !right || !thr || !lv || !cb || !cw) {
        rc = hr_error(HR_ENOMEM, "out of memory exporting trees");
        goto done;
    }
    size_t n = 0, l = 0, c = 0, w = 0;
    for (int t = 0; t < T; t++) {
        const gbdt_tree *tr = gbdt_booster_tree(b, t);
        node_off[t] = (int)n;
        leaf_off[t] = (int)l;
        cb_off[t] = (int)c;
        cw_off[t] = (int)w;
        for (int i = 0; i < tr->num_leaves - 1; i++, n++) {
            feat[n] = tr->split_feature[i];
            dt[n] = tr->decision_type[i];
            left[n] = tr->left_child[i];
            right[n] = tr->right_child[i];
            thr[n] = tr->threshold[i];
        }
        for (int i = 0; i < tr->num_leaves; i++) lv[l++] = tr->leaf_value[i];
        for (int i = 0; i <= tr->num_cat; i++) cb[c++] = tr->num_cat ? tr->cat_boundaries[i] : 0;
        for (int i = 0; tr->num_cat && i < tr->cat_boundaries[tr->num_cat]; i++) cw[w++] = (int)tr->cat_threshold[i];
    }
    node_off[T] = (int)n;
    leaf_off[T] = (int)l;
    cb_off[T] = (int)c;
    cw_off[T] = (int)w;
    char name[64];
#define NAME(s) (snprintf(name, sizeof name, "hm_b%d_%s", idx, s), name)
    export_c_ints(out, "int", NAME("node_off"), node_off, (size_t)T + 1);
    export_c_ints(out, "int", NAME("leaf_off"), leaf_off, (size_t)T + 1);
    export_c_ints(out, "int", NAME("cb_off"), cb_off, (size_t)T + 1);
    export_c_ints(out, "int", NAME("cw_off"), cw_off, (size_t)T + 1);
    export_c_ints(out, "short", NAME("feat"), feat, n);
    export_c_ints(out, "unsigned char", NAME("dt"), dt, n);
    export_c_ints(out, "int", NAME("left"), left, n);
    export_c_ints(out, "int", NAME("right"), right, n);
    export_c_doubles(out, NAME("thr"), thr, n);
    export_c_doubles(out, NAME("leaf"), lv, l);
    export_c_ints(out, "int", NAME("cb"), cb, c);
    /* bitset words are unsigned; printed through int they keep their bits */
    export_c_ints(out, "int", NAME("cw"), cw, w);
    export_c_doubles(out, NAME("base"), gbdt_booster_base_score(b), (size_t)K);
    fprintf(out,
            "static void hm_b%d_raw(const float *x, double *out)\n{\n"
            "    memcpy(out, hm_b%d_base, sizeof hm_b%d_base);\n"
            "    for (int t = 0; t < %d; t++) {\n"
            "        const hm_trees tr = {hm_b%d_feat + hm_b%d_node_off[t], hm_b%d_dt + hm_b%d_node_off[t],\n"
            "                             hm_b%d_left + hm_b%d_node_off[t], hm_b%d_right + hm_b%d_node_off[t],\n"
            "                             hm_b%d_thr + hm_b%d_node_off[t], hm_b%d_cb + hm_b%d_cb_off[t], hm_b%d_cw + hm_b%d_cw_off[t]};\n"
            "        int leaf = hm_node_count(hm_b%d_node_off, t) ? hm_tree_leaf(&tr, x) : 0;\n"
            "        out[t %% %d] += hm_b%d_leaf[hm_b%d_leaf_off[t] + leaf];\n"
            "    }\n}\n\n",
            idx, idx, idx, T, idx, idx, idx, idx, idx, idx, idx, idx, idx, idx, idx, idx, idx, idx, idx, K, idx, idx);
#undef NAME
done:
    free(node_off);
    free(leaf_off);
    free(cb_off);
    free(cw_off);
    free(feat);
    free(dt);
    free(left);
    free(right);
    free(thr);
    free(lv);
    free(cb);
    free(cw);
    return rc;
}


/* The flat records' limits: a feature in 15 bits, a height in 16 (a tree of L leaves is at most L - 1 deep). */
#define FLAT_MAX_FEATURE 0x7fff
#define FLAT_MAX_LEAVES 65536

/* A decision type as gbdt/predict.c reads it: bit 0 categorical, bit 1 NaN goes left, bits 2-3 the missing type
 * (0 None: NaN reads as 0; 1 Zero: |x| <= 1e-35 takes the default direction; 2 NaN: NaN takes it). A record
 * holds a numeric split of type None or NaN: x <= thr, and NaN one fixed way. */
int export_gbdt_flat_fits(const gbdt_booster *b)
{
    if (gbdt_booster_num_class(b) != 1) return 0;
    for (int t = 0; t < gbdt_booster_num_trees(b); t++) {
        const gbdt_tree *tr = gbdt_booster_tree(b, t);
        if (tr->num_leaves > FLAT_MAX_LEAVES) return 0;
        for (int i = 0; i < tr->num_leaves - 1; i++) {
            unsigned dt = tr->decision_type[i], missing = (dt >> 2) & 3u;
            if ((dt & 1u) || (missing != 0u && missing != 2u) || tr->split_feature[i] < 0 ||
                tr->split_feature[i] > FLAT_MAX_FEATURE)
                return 0;
        }
    }
    return 1;
}

/* A float literal that reads back as f. */
static void flat_float(FILE *out, float f)
{
    if (isinf(f)) fprintf(out, "%sHUGE_VALF", f < 0 ? "-" : "");
    else fprintf(out, "%#.9gf", (double)f);
}

/* The records of a booster (export/runtime/gbdt.h, flat), per field, and per tree its root's record. */
typedef struct flat_records {
    float *thr;
    int *feat, *height, *kid; /* kid: (2 n) */
    double *value;
    int *root;
} flat_records;

/* Per-tree scratch sized for the largest tree (L leaves). */
typedef struct flat_scratch {
    int *stack;              /* (2 L) child codes to visit */
    int *order;              /* (L) splits in depth-first order */
    int *pos_node, *pos_leaf; /* (L) each split's and each leaf's record */
} flat_scratch;

/* Lays tree t out depth first from record base, left subtree first, and fills its records; returns how many
 * (2 L - 1). */
static int flat_tree(const gbdt_tree *t, int base, flat_scratch *s, flat_records *r)
{
    int n_int = t->num_leaves - 1, top = 0, next = 0, n_order = 0;
    s->stack[top++] = n_int > 0 ? 0 : ~0;
    while (top > 0) {
        int c = s->stack[--top];
        if (c < 0) {
            s->pos_leaf[~c] = base + next++;
            continue;
        }
        s->order[n_order++] = c;
        s->pos_node[c] = base + next++;
        s->stack[top++] = t->right_child[c];
        s->stack[top++] = t->left_child[c];
    }
    for (int l = 0; l < t->num_leaves; l++) {
        int p = s->pos_leaf[l];
        r->thr[p] = 0.0f;
        r->feat[p] = r->height[p] = 0;
        r->kid[2 * p] = r->kid[2 * p + 1] = p;
        r->value[p] = t->leaf_value[l];
    }
    /* children before parents: the depth-first order backwards */
    for (int j = n_order - 1; j >= 0; j--) {
        int i = s->order[j], p = s->pos_node[i];
        int kids[2] = {t->left_child[i], t->right_child[i]}, h = 0;
        for (int k = 0; k < 2; k++) {
            int q = kids[k] >= 0 ? s->pos_node[kids[k]] : s->pos_leaf[~kids[k]];
            r->kid[2 * p + k] = q;
            if (r->height[q] > h) h = r->height[q];
        }
        unsigned dt = t->decision_type[i], missing = (dt >> 2) & 3u;
        double thr = t->threshold[i];
        int nan_right = missing == 0u ? !(0.0 <= thr) : !(dt & 2u);
        r->thr[p] = gbdt_threshold_float(thr);
        r->feat[p] = t->split_feature[i] | (nan_right << 15);
        r->height[p] = h + 1;
        r->value[p] = 0.0;
    }
    return next;
}

int export_gbdt_flat(FILE *out, const gbdt_booster *b)
{
    HR_ASSERT(export_gbdt_flat_fits(b));
    int T = gbdt_booster_num_trees(b), max_leaves = 1;
    size_t n = 0;
    for (int t = 0; t < T; t++) {
        const gbdt_tree *tr = gbdt_booster_tree(b, t);
        n += 2 * (size_t)tr->num_leaves - 1;
        if (tr->num_leaves > max_leaves) max_leaves = tr->num_leaves;
    }
    if (n > INT32_MAX) return hr_error(HR_EINVAL, "%zu tree records are more than an int indexes", n);
    size_t m = (size_t)max_leaves, nn = n ? n : 1;
    flat_records r = {malloc(nn * sizeof(float)), malloc(nn * sizeof(int)), malloc(nn * sizeof(int)),
                      malloc(2 * nn * sizeof(int)), malloc(nn * sizeof(double)), malloc((size_t)(T > 0 ? T : 1) * sizeof(int))};
    flat_scratch s = {malloc(2 * m * sizeof(int)), malloc(m * sizeof(int)), malloc(m * sizeof(int)),
                      malloc(m * sizeof(int))};
    int rc = HR_OK, *used = NULL;
    if (!r.thr || !r.feat || !r.height || !r.kid || !r.value || !r.root || !s.stack || !s.order || !s.pos_node ||
        !s.pos_leaf) {
        rc = hr_error(HR_ENOMEM, "out of memory exporting %d trees", T);
        goto done;
    }
    int base = 0;
    for (int t = 0; t < T; t++) {
        r.root[t] = base;
        base += flat_tree(gbdt_booster_tree(b, t), base, &s, &r);
    }
    /* the features some split reads */
    int F = gbdt_booster_num_features(b);
    used = calloc((size_t)(F > 0 ? F : 1), sizeof *used);
    if (!used) {
        rc = hr_error(HR_ENOMEM, "out of memory exporting %d trees", T);
        goto done;
    }
    for (int t = 0; t < T; t++) {
        const gbdt_tree *tr = gbdt_booster_tree(b, t);
        for (int i = 0; i < tr->num_leaves - 1; i++) used[tr->split_feature[i]] = 1;
    }
    fprintf(out, "#define HM_FLAT_TREES %d\nstatic const double hm_flat_base = %.17g;\n", T, gbdt_booster_base_score(b)[0]);
    export_c_ints(out, "unsigned char", "hm_flat_used", used, (size_t)F);
    export_c_ints(out, "int", "hm_flat_root", r.root, (size_t)T);
    fprintf(out, "static const hm_flat_node hm_flat[%zu] = {\n", nn);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "    {");
        flat_float(out, r.thr[i]);
        fprintf(out, ", %d, %d, {%d, %d}},\n", r.feat[i], r.height[i], r.kid[2 * i], r.kid[2 * i + 1]);
    }
    fprintf(out, "%s};\n", n ? "" : "    {0}\n");
    export_c_doubles(out, "hm_flat_value", r.value, n);
done:
    free(used);
    free(r.thr);
    free(r.feat);
    free(r.height);
    free(r.kid);
    free(r.value);
    free(r.root);
    free(s.stack);
    free(s.order);
    free(s.pos_node);
    free(s.pos_leaf);
    return rc;
}

/* The i-th booster of the model's views */
static const gbdt_booster *booster(const model_views *v, int i)
{
    char name[MODEL_VIEW_NAME];
    snprintf(name, sizeof name, "booster%d", i);
    return model_view_booster(v, name);
}

int export_gbdt_check(const model *m, const model_views *v, const char *name)
{
    (void)m;
    char tensor[64];
    const int nb = (int)model_view_int(v, "boosters");
    for (int i = 0; i < nb; i++) {
        const gbdt_booster *b = booster(v, i);
        int rc = export_check_finite_double(name, (snprintf(tensor, sizeof tensor, "booster %d base score", i), tensor),
                                            gbdt_booster_base_score(b), (size_t)gbdt_booster_num_class(b));
        for (int t = 0; !rc && t < gbdt_booster_num_trees(b); t++) {
            const gbdt_tree *tr = gbdt_booster_tree(b, t);
            snprintf(tensor, sizeof tensor, "booster %d tree %d leaf values", i, t);
            rc = export_check_finite_double(name, tensor, tr->leaf_value, (size_t)tr->num_leaves);
            snprintf(tensor, sizeof tensor, "booster %d tree %d thresholds", i, t);
            if (!rc) rc = export_check_finite_double(name, tensor, tr->threshold, (size_t)(tr->num_leaves - 1));
        }
        if (rc) return rc;
    }
    return HR_OK;
}

int export_gbdt_write(const model *m, const model_views *v, FILE *out)
{
    const int nb = (int)model_view_int(v, "boosters");
    const char *objective = model_view_text(v, "objective");
    export_section(out, "export/runtime/gbdt.h", "traversal");
    for (int i = 0; i < nb; i++) {
        int rc = export_gbdt_booster(out, booster(v, i), i);
        if (rc) return rc;
    }
    int maxk = 1;
    for (int i = 0; i < nb; i++)
        if (gbdt_booster_num_class(booster(v, i)) > maxk) maxk = gbdt_booster_num_class(booster(v, i));
    if (!strcmp(objective, "softmax")) {
        fprintf(out, "static void hm_model_scores(const data_problem *p, const float *x, float *scores)\n{\n"
                     "    double raw[%d];\n    (void)p;\n    hm_b0_raw(x, raw);\n"
                     "    for (int k = 0; k < %d; k++) scores[k] = (float)raw[k];\n}\n",
                maxk, m->n_kernels);
    } else if (!strcmp(objective, "rank")) {
        const int n = (int)model_view_int(v, "rank_signatures") * m->n_kernels;
        const unsigned char *rank_cand = model_view_bytes(v, "rank_candidates", (size_t)n);
        int *cand = malloc((size_t)n * sizeof *cand);
        if (!cand) return hr_error(HR_ENOMEM, "out of memory exporting candidates");
        for (int i = 0; i < n; i++) cand[i] = rank_cand[i];
        export_c_ints(out, "unsigned char", "hm_cand", cand, (size_t)n);
        free(cand);
        fprintf(out, "static void hm_model_scores(const data_problem *p, const float *x, float *scores)\n{\n"
                     "    float xe[%d + 1];\n    double raw[1];\n"
                     "    const unsigned char *cand = hm_cand + (size_t)(%s) * %d;\n"
                     "    memcpy(xe, x, sizeof(float) * %d);\n"
                     "    for (int k = 0; k < %d; k++) {\n        xe[%d] = (float)k;\n        hm_b0_raw(xe, raw);\n"
                     "        scores[k] = cand[k] ? (float)-raw[0] : -1e30f;\n    }\n}\n",
                m->n_features, model_view_text(v, "rank_signature"), m->n_kernels, m->n_features, m->n_kernels,
                m->n_features);
    } else {
        fprintf(out, "static void hm_model_tune(const data_problem *p, const float *x, int32_t *values)\n{\n"
                     "    double raw[%d];\n    (void)p;\n", maxk);
        for (int j = 0; j < m->length; j++) {
            fprintf(out, "    hm_b%d_raw(x, raw);\n    {\n        int best = 0;\n"
                         "        for (int c = 1; c < %d; c++)\n            if (raw[c] > raw[best]) best = c;\n"
                         "        values[%d] = hm_vocab_%d[best];\n    }\n",
                    j, m->vocab_size[j], j, j);
        }
        fprintf(out, "}\n");
    }
    return HR_OK;
}
