/* The gbdt family as C source for an exported runtime: every tree as flat arrays, and the traversal
 * (export/runtime/gbdt.h) with the same decision rules as gbdt/predict.c (LightGBM's); the boosters and the rank
 * mode's candidates come from the model's views (models/gbdt_view.c). */
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
