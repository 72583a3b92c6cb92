/* LightGBM's text model format (version=v4), read and written.
 * A file is a header of key=value lines ("tree", version, num_class, num_tree_per_iteration,
 * max_feature_idx, objective, feature_names, feature_infos, tree_sizes), then blocks "Tree=i" of
 * key=value arrays in LightGBM's tree layout (the same as gbdt_tree), then "end of trees", feature
 * importances and parameters. Leaf values already include the shrinkage, and the first iteration's
 * trees carry the base score (boost_from_average), so a reader only sums trees. Only models whose output
 * is the raw score (regression-type objectives) or its softmax (multiclass) are accepted. */
#include "gbdt/gbdt_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading ---- */

typedef struct lgb_line {
    const char *key, *val; /* val is NUL-terminated inside a private copy of the text */
    int lineno;
} lgb_line;

typedef struct lgb_parser {
    const char *name; /* file name for messages */
    char *text;       /* private copy, split into lines in place */
    lgb_line *lines;
    size_t nlines, pos;
} lgb_parser;

/* Splits the copy into lines; each line is "key=value" (value may be empty) or a bare key. */
static int lgb_split_lines(lgb_parser *ps, size_t len)
{
    size_t cap = 1;
    for (size_t i = 0; i < len; i++) cap += ps->text[i] == '\n';
    ps->lines = hr_calloc(cap, sizeof *ps->lines);
    if (!ps->lines) return HR_ENOMEM;
    char *s = ps->text, *end = ps->text + len;
    int lineno = 0;
    while (s < end) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        char *e = nl ? nl : end;
        lineno++;
        *e = 0;
        if (e > s && e[-1] == '\r') e[-1] = 0;
        if (*s) {
            lgb_line *l = &ps->lines[ps->nlines++];
            char *eq = strchr(s, '=');
            l->key = s;
            l->val = "";
            if (eq) {
                *eq = 0;
                l->val = eq + 1;
            }
            l->lineno = lineno;
        }
        s = e + 1;
    }
    return HR_OK;
}

/* Parses exactly n whitespace-separated numbers of the value into out (double or int). */
static int lgb_parse_array(const lgb_parser *ps, const lgb_line *l, size_t n, int as_int, void *out)
{
    const char *s = l->val;
    for (size_t i = 0; i < n; i++) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s)
            return hr_error(HR_EFORMAT, "%s:%d: %s has %zu values, expected %zu", ps->name, l->lineno, l->key, i, n);
        char *e;
        errno = 0;
        if (as_int) {
            long v = strtol(s, &e, 10);
            if (e == s || (*e && *e != ' ' && *e != '\t') || errno || v < INT32_MIN || v > INT32_MAX)
                return hr_error(HR_EFORMAT, "%s:%d: %s value %zu is not an integer", ps->name, l->lineno, l->key, i);
            ((int *)out)[i] = (int)v;
        } else {
            double v = strtod(s, &e);
            if (e == s || (*e && *e != ' ' && *e != '\t') || (errno == ERANGE && fabs(v) > 1))
                return hr_error(HR_EFORMAT, "%s:%d: %s value %zu is not a number", ps->name, l->lineno, l->key, i);
            ((double *)out)[i] = v;
        }
        s = e;
    }
    while (*s == ' ' || *s == '\t') s++;
    if (*s) return hr_error(HR_EFORMAT, "%s:%d: %s has more than %zu values", ps->name, l->lineno, l->key, n);
    return HR_OK;
}

static int lgb_parse_int(const lgb_parser *ps, const lgb_line *l, int *out)
{
    return lgb_parse_array(ps, l, 1, 1, out);
}

/* The line with this key among lines [begin, end), or NULL. */
static const lgb_line *lgb_find(const lgb_parser *ps, size_t begin, size_t end, const char *key)
{
    for (size_t i = begin; i < end; i++)
        if (strcmp(ps->lines[i].key, key) == 0) return &ps->lines[i];
    return NULL;
}

static int lgb_require(const lgb_parser *ps, size_t begin, size_t end, const char *key, const char *block,
                       const lgb_line **out)
{
    *out = lgb_find(ps, begin, end, key);
    if (!*out) return hr_error(HR_EFORMAT, "%s: %s has no %s", ps->name, block, key);
    return HR_OK;
}

/* Reads a uint8 array through int parsing. */
static int lgb_parse_u8(const lgb_parser *ps, const lgb_line *l, size_t n, uint8_t *out)
{
    int *tmp = hr_malloc((n + 1) * sizeof(int));
    if (!tmp) return HR_ENOMEM;
    int rc = lgb_parse_array(ps, l, n, 1, tmp);
    for (size_t i = 0; i < n && rc == HR_OK; i++) {
        if (tmp[i] < 0 || tmp[i] > 255)
            rc = hr_error(HR_EFORMAT, "%s:%d: %s value %d out of range", ps->name, l->lineno, l->key, tmp[i]);
        out[i] = (uint8_t)tmp[i];
    }
    free(tmp);
    return rc;
}

/* Parses the tree block in lines [begin, end) into t. */
static int lgb_parse_tree(const lgb_parser *ps, size_t begin, size_t end, const char *block, int num_features,
                          gbdt_tree *t)
{
    const lgb_line *l;
    int num_leaves, num_cat = 0, rc;
    if ((rc = lgb_require(ps, begin, end, "num_leaves", block, &l)) || (rc = lgb_parse_int(ps, l, &num_leaves)))
        return rc;
    if (num_leaves < 1 || num_leaves > (1 << 24))
        return hr_error(HR_EFORMAT, "%s:%d: num_leaves %d out of range", ps->name, l->lineno, num_leaves);
    if ((l = lgb_find(ps, begin, end, "num_cat")) && (rc = lgb_parse_int(ps, l, &num_cat))) return rc;
    if (num_cat < 0 || num_cat > num_leaves - 1)
        return hr_error(HR_EFORMAT, "%s: %s has num_cat %d with %d leaves", ps->name, block, num_cat, num_leaves);
    if ((l = lgb_find(ps, begin, end, "is_linear")) && strcmp(l->val, "0") != 0)
        return hr_error(HR_EFORMAT, "%s:%d: linear trees are not supported", ps->name, l->lineno);
    int *bounds = hr_calloc((size_t)num_cat + 1, sizeof(int));
    if (!bounds) return HR_ENOMEM;
    int words = 0;
    if (num_cat > 0) {
        rc = lgb_require(ps, begin, end, "cat_boundaries", block, &l);
        if (rc == HR_OK) rc = lgb_parse_array(ps, l, (size_t)num_cat + 1, 1, bounds);
        if (rc == HR_OK) {
            words = bounds[num_cat];
            if (bounds[0] != 0 || words < 0 || words > (1 << 26))
                rc = hr_error(HR_EFORMAT, "%s:%d: bad cat_boundaries", ps->name, l->lineno);
        }
    }
    if (rc == HR_OK) rc = gbdt_tree_alloc(t, num_leaves, num_cat, words);
    if (rc) {
        free(bounds);
        return rc;
    }
    memcpy(t->cat_boundaries, bounds, ((size_t)num_cat + 1) * sizeof(int));
    free(bounds);
    size_t ni = (size_t)num_leaves - 1, nl = (size_t)num_leaves;
    if (rc == HR_OK && (rc = lgb_require(ps, begin, end, "leaf_value", block, &l)) == HR_OK)
        rc = lgb_parse_array(ps, l, nl, 0, t->leaf_value);
    if (rc == HR_OK && (l = lgb_find(ps, begin, end, "shrinkage"))) rc = lgb_parse_array(ps, l, 1, 0, &t->shrinkage);
    if (rc == HR_OK && num_leaves > 1) {
        if ((rc = lgb_require(ps, begin, end, "split_feature", block, &l)) == HR_OK)
            rc = lgb_parse_array(ps, l, ni, 1, t->split_feature);
        if (rc == HR_OK && (rc = lgb_require(ps, begin, end, "threshold", block, &l)) == HR_OK)
            rc = lgb_parse_array(ps, l, ni, 0, t->threshold);
        if (rc == HR_OK && (rc = lgb_require(ps, begin, end, "decision_type", block, &l)) == HR_OK)
            rc = lgb_parse_u8(ps, l, ni, t->decision_type);
        if (rc == HR_OK && (rc = lgb_require(ps, begin, end, "left_child", block, &l)) == HR_OK)
            rc = lgb_parse_array(ps, l, ni, 1, t->left_child);
        if (rc == HR_OK && (rc = lgb_require(ps, begin, end, "right_child", block, &l)) == HR_OK)
            rc = lgb_parse_array(ps, l, ni, 1, t->right_child);
        if (rc == HR_OK && (l = lgb_find(ps, begin, end, "split_gain")))
            rc = lgb_parse_array(ps, l, ni, 0, t->split_gain);
    }
    if (rc == HR_OK && (l = lgb_find(ps, begin, end, "leaf_weight"))) rc = lgb_parse_array(ps, l, nl, 0, t->leaf_weight);
    if (rc == HR_OK && (l = lgb_find(ps, begin, end, "leaf_count"))) rc = lgb_parse_array(ps, l, nl, 1, t->leaf_count);
    if (rc == HR_OK && num_cat > 0 && (rc = lgb_require(ps, begin, end, "cat_threshold", block, &l)) == HR_OK) {
        double *tmp = hr_malloc(((size_t)words + 1) * sizeof(double));
        rc = tmp ? lgb_parse_array(ps, l, (size_t)words, 0, tmp) : HR_ENOMEM;
        for (int w = 0; w < words && rc == HR_OK; w++) {
            if (!(tmp[w] >= 0 && tmp[w] <= 4294967295.0) || tmp[w] != floor(tmp[w]))
                rc = hr_error(HR_EFORMAT, "%s:%d: cat_threshold word %d is not a 32-bit mask", ps->name, l->lineno, w);
            t->cat_threshold[w] = (uint32_t)tmp[w];
        }
        free(tmp);
    }
    char where[160];
    snprintf(where, sizeof where, "%s: %s", ps->name, block);
    if (rc == HR_OK) rc = gbdt_tree_validate(t, num_features, where);
    if (rc) gbdt_tree_free(t);
    return rc;
}

/* Objectives whose prediction is the raw score are read as L2; multiclass as softmax. */
static int lgb_objective(const lgb_parser *ps, const lgb_line *l, gbdt_objective *out)
{
    static const char *identity[] = {"regression", "regression_l2", "l2", "mean_squared_error", "mse",
                                     "l2_root", "root_mean_squared_error", "rmse", "regression_l1", "l1",
                                     "huber", "fair", "quantile", "mape"};
    char first[64];
    size_t n = strcspn(l->val, " \t");
    if (n >= sizeof first) n = sizeof first - 1;
    memcpy(first, l->val, n);
    first[n] = 0;
    if (strcmp(first, "multiclass") == 0 || strcmp(first, "softmax") == 0) {
        *out = GBDT_OBJECTIVE_SOFTMAX;
        return HR_OK;
    }
    for (size_t i = 0; i < sizeof identity / sizeof *identity; i++)
        if (strcmp(first, identity[i]) == 0) {
            *out = GBDT_OBJECTIVE_L2;
            return HR_OK;
        }
    return hr_error(HR_EFORMAT, "%s:%d: objective '%s' is not supported (only regression and multiclass)",
                    ps->name, l->lineno, first);
}

/* feature_names and feature_infos (categorical features list their categories, numeric ones "[lo:hi]") */
static int lgb_parse_features(const lgb_parser *ps, size_t hdr_end, gbdt_booster *b)
{
    const lgb_line *names = lgb_find(ps, 0, hdr_end, "feature_names");
    const lgb_line *infos = lgb_find(ps, 0, hdr_end, "feature_infos");
    const char *s = names ? names->val : NULL, *u = infos ? infos->val : NULL;
    for (int j = 0; j < b->num_features; j++) {
        char name[256];
        const char *nm = NULL;
        if (s) {
            while (*s == ' ') s++;
            size_t k = strcspn(s, " ");
            if (k == 0) return hr_error(HR_EFORMAT, "%s:%d: feature_names has %d names, expected %d", ps->name,
                                        names->lineno, j, b->num_features);
            if (k >= sizeof name) k = sizeof name - 1;
            memcpy(name, s, k);
            name[k] = 0;
            s += strcspn(s, " ");
            nm = name;
        }
        int rc = gbdt_booster_set_feature_name(b, j, nm);
        if (rc) return rc;
        if (u) {
            while (*u == ' ') u++;
            size_t k = strcspn(u, " ");
            b->is_categorical[j] = k > 0 && u[0] != '[' && strncmp(u, "none", k) != 0;
            u += k;
        }
    }
    return HR_OK;
}

int gbdt_lightgbm_parse(const char *text, size_t len, const char *name, gbdt_booster **out)
{
    *out = NULL;
    lgb_parser ps = {name ? name : "<lightgbm text>", NULL, NULL, 0, 0};
    ps.text = hr_malloc(len + 1);
    if (!ps.text) return HR_ENOMEM;
    memcpy(ps.text, text, len);
    ps.text[len] = 0;
    gbdt_booster *b = NULL;
    int rc = lgb_split_lines(&ps, len);
    if (rc == HR_OK && (ps.nlines == 0 || strcmp(ps.lines[0].key, "tree") != 0))
        rc = hr_error(HR_EFORMAT, "%s: not a LightGBM text model (first line is not 'tree')", ps.name);
    size_t hdr_end = 0;
    while (hdr_end < ps.nlines && strcmp(ps.lines[hdr_end].key, "Tree") != 0 &&
           strcmp(ps.lines[hdr_end].key, "end of trees") != 0)
        hdr_end++;
    const lgb_line *l;
    int num_class = 1, per_iter = 1, max_feature = -1;
    gbdt_objective obj = GBDT_OBJECTIVE_L2;
    if (rc == HR_OK && (rc = lgb_require(&ps, 0, hdr_end, "version", "header", &l)) == HR_OK &&
        strcmp(l->val, "v4") != 0 && strcmp(l->val, "v3") != 0 && strcmp(l->val, "v2") != 0)
        rc = hr_error(HR_EVERSION, "%s:%d: model version '%s' is not supported (v2..v4)", ps.name, l->lineno, l->val);
    if (rc == HR_OK && (rc = lgb_require(&ps, 0, hdr_end, "num_class", "header", &l)) == HR_OK)
        rc = lgb_parse_int(&ps, l, &num_class);
    if (rc == HR_OK && (l = lgb_find(&ps, 0, hdr_end, "num_tree_per_iteration"))) rc = lgb_parse_int(&ps, l, &per_iter);
    if (rc == HR_OK && (rc = lgb_require(&ps, 0, hdr_end, "max_feature_idx", "header", &l)) == HR_OK)
        rc = lgb_parse_int(&ps, l, &max_feature);
    if (rc == HR_OK && (rc = lgb_require(&ps, 0, hdr_end, "objective", "header", &l)) == HR_OK)
        rc = lgb_objective(&ps, l, &obj);
    if (rc == HR_OK && (max_feature < 0 || max_feature >= (1 << 24) || num_class < 1 || num_class > 256 ||
                        per_iter != (obj == GBDT_OBJECTIVE_SOFTMAX ? num_class : 1) ||
                        (obj == GBDT_OBJECTIVE_SOFTMAX && num_class < 2)))
        rc = hr_error(HR_EFORMAT, "%s: inconsistent header (num_class %d, num_tree_per_iteration %d, "
                      "max_feature_idx %d)", ps.name, num_class, per_iter, max_feature);
    if (rc == HR_OK) rc = gbdt_booster_alloc(max_feature + 1, per_iter, &b);
    if (rc == HR_OK) {
        b->params.objective = obj;
        b->params.num_class = num_class;
        rc = lgb_parse_features(&ps, hdr_end, b);
    }
    size_t i = hdr_end;
    int ended = 0;
    while (rc == HR_OK && i < ps.nlines) {
        if (strcmp(ps.lines[i].key, "end of trees") == 0) {
            ended = 1;
            break;
        }
        char block[64];
        snprintf(block, sizeof block, "Tree=%s (line %d)", ps.lines[i].val, ps.lines[i].lineno);
        size_t j = i + 1;
        while (j < ps.nlines && strcmp(ps.lines[j].key, "Tree") != 0 && strcmp(ps.lines[j].key, "end of trees") != 0)
            j++;
        gbdt_tree *t = gbdt_booster_push_tree(b);
        if (!t) {
            rc = HR_ENOMEM;
            break;
        }
        if ((rc = lgb_parse_tree(&ps, i + 1, j, block, b->num_features, t))) b->num_trees--;
        i = j;
    }
    if (rc == HR_OK && !ended) rc = hr_error(HR_EFORMAT, "%s: truncated: no 'end of trees' line", ps.name);
    if (rc == HR_OK && b->num_trees % b->num_class != 0)
        rc = hr_error(HR_EFORMAT, "%s: %d trees is not a multiple of %d trees per iteration", ps.name, b->num_trees,
                      b->num_class);
    if (rc == HR_OK) rc = gbdt_booster_pack(b);
    free(ps.lines);
    free(ps.text);
    if (rc) {
        gbdt_booster_free(b);
        return rc;
    }
    *out = b;
    return HR_OK;
}

int gbdt_lightgbm_load(const char *path, gbdt_booster **out)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = hr_file_read_all(path, &buf, &len);
    if (rc) return rc;
    rc = gbdt_lightgbm_parse(buf, len, path, out);
    free(buf);
    return rc;
}

/* ---- writing ---- */

typedef struct lgb_buf {
    char *s;
    size_t len, cap;
    int failed;
} lgb_buf;

static void lgb_printf(lgb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lgb_printf(lgb_buf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = 2 * (b->cap + (size_t)n + 64);
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static void lgb_put_doubles(lgb_buf *b, const char *key, const double *v, int n)
{
    lgb_printf(b, "%s=", key);
    for (int i = 0; i < n; i++) lgb_printf(b, i ? " %.17g" : "%.17g", v[i]);
    lgb_printf(b, "\n");
}

static void lgb_put_ints(lgb_buf *b, const char *key, const int *v, int n)
{
    lgb_printf(b, "%s=", key);
    for (int i = 0; i < n; i++) lgb_printf(b, i ? " %d" : "%d", v[i]);
    lgb_printf(b, "\n");
}

/* One "Tree=i" block; `add` is folded into every leaf (the base score, on the first iteration). */
static void lgb_put_tree(lgb_buf *b, int index, const gbdt_tree *t, double add)
{
    int ni = t->num_leaves - 1;
    lgb_printf(b, "Tree=%d\nnum_leaves=%d\nnum_cat=%d\n", index, t->num_leaves, t->num_cat);
    lgb_put_ints(b, "split_feature", t->split_feature, ni);
    lgb_put_doubles(b, "split_gain", t->split_gain, ni);
    lgb_put_doubles(b, "threshold", t->threshold, ni);
    lgb_printf(b, "decision_type=");
    for (int i = 0; i < ni; i++) lgb_printf(b, i ? " %d" : "%d", t->decision_type[i]);
    lgb_printf(b, "\n");
    lgb_put_ints(b, "left_child", t->left_child, ni);
    lgb_put_ints(b, "right_child", t->right_child, ni);
    lgb_printf(b, "leaf_value=");
    for (int i = 0; i < t->num_leaves; i++) lgb_printf(b, i ? " %.17g" : "%.17g", t->leaf_value[i] + add);
    lgb_printf(b, "\n");
    lgb_put_doubles(b, "leaf_weight", t->leaf_weight, t->num_leaves);
    lgb_put_ints(b, "leaf_count", t->leaf_count, t->num_leaves);
    if (t->num_cat > 0) {
        lgb_put_ints(b, "cat_boundaries", t->cat_boundaries, t->num_cat + 1);
        lgb_printf(b, "cat_threshold=");
        for (int w = 0; w < t->cat_boundaries[t->num_cat]; w++) lgb_printf(b, w ? " %u" : "%u", t->cat_threshold[w]);
        lgb_printf(b, "\n");
    }
    lgb_printf(b, "is_linear=0\nshrinkage=%.17g\n\n\n", t->shrinkage);
}

/* feature_infos entry: categorical features list the categories their splits send left */
static void lgb_put_feature_info(lgb_buf *out, const gbdt_booster *b, int j)
{
    if (!b->is_categorical[j]) {
        lgb_printf(out, "[-1e+300:1e+300]");
        return;
    }
    int words = 0;
    for (int t = 0; t < b->num_trees; t++)
        for (int i = 0; i < b->trees[t].num_leaves - 1; i++) {
            const gbdt_tree *tr = &b->trees[t];
            if (tr->split_feature[i] != j || !(tr->decision_type[i] & GBDT_DT_CATEGORICAL)) continue;
            int k = (int)tr->threshold[i], w = tr->cat_boundaries[k + 1] - tr->cat_boundaries[k];
            if (w > words) words = w;
        }
    uint32_t *all = hr_calloc((size_t)words + 1, sizeof *all);
    if (!all) {
        out->failed = 1;
        return;
    }
    for (int t = 0; t < b->num_trees; t++)
        for (int i = 0; i < b->trees[t].num_leaves - 1; i++) {
            const gbdt_tree *tr = &b->trees[t];
            if (tr->split_feature[i] != j || !(tr->decision_type[i] & GBDT_DT_CATEGORICAL)) continue;
            int k = (int)tr->threshold[i], begin = tr->cat_boundaries[k];
            for (int w = 0; w < tr->cat_boundaries[k + 1] - begin; w++) all[w] |= tr->cat_threshold[begin + w];
        }
    int any = 0;
    for (int c = 0; c < 32 * words; c++)
        if ((all[c / 32] >> (c % 32)) & 1u) lgb_printf(out, any++ ? ":%d" : "%d", c);
    if (!any) lgb_printf(out, "0");
    free(all);
}

int gbdt_lightgbm_save(const gbdt_booster *b, const char *path)
{
    int K = b->num_class, softmax = b->params.objective == GBDT_OBJECTIVE_SOFTMAX;
    int ntrees = b->num_trees > 0 ? b->num_trees : K;
    /* trees as strings first: the header's tree_sizes lists each block's length */
    lgb_buf trees = {0}, out = {0};
    size_t *sizes = hr_calloc((size_t)ntrees, sizeof *sizes);
    if (!sizes) return HR_ENOMEM;
    gbdt_tree stump;
    double zero = 0;
    memset(&stump, 0, sizeof stump);
    stump.num_leaves = 1;
    stump.shrinkage = 1;
    stump.leaf_value = &zero;
    stump.leaf_weight = &zero;
    int zero_i = 0;
    stump.leaf_count = &zero_i;
    stump.cat_boundaries = &zero_i;
    for (int t = 0; t < ntrees; t++) {
        size_t before = trees.len;
        const gbdt_tree *tr = b->num_trees > 0 ? &b->trees[t] : &stump;
        lgb_put_tree(&trees, t, tr, t < K ? b->base_score[t] : 0.0);
        sizes[t] = trees.len - before;
    }
    lgb_printf(&out, "tree\nversion=v4\nnum_class=%d\nnum_tree_per_iteration=%d\nlabel_index=0\nmax_feature_idx=%d\n",
               softmax ? K : 1, K, b->num_features - 1);
    if (softmax)
        lgb_printf(&out, "objective=multiclass num_class:%d\n", K);
    else
        lgb_printf(&out, "objective=%s\n", b->params.objective == GBDT_OBJECTIVE_LAMBDARANK ? "lambdarank" : "regression");
    lgb_printf(&out, "feature_names=");
    for (int j = 0; j < b->num_features; j++) {
        lgb_printf(&out, j ? " " : "");
        for (const char *c = b->feature_names[j]; *c; c++)
            lgb_printf(&out, "%c", isspace((unsigned char)*c) || *c == '=' ? '_' : *c);
    }
    lgb_printf(&out, "\nfeature_infos=");
    for (int j = 0; j < b->num_features; j++) {
        lgb_printf(&out, j ? " " : "");
        lgb_put_feature_info(&out, b, j);
    }
    lgb_printf(&out, "\ntree_sizes=");
    for (int t = 0; t < ntrees; t++) lgb_printf(&out, t ? " %zu" : "%zu", sizes[t]);
    lgb_printf(&out, "\n\n");
    if (!trees.failed && !out.failed && trees.len) lgb_printf(&out, "%.*s", (int)trees.len, trees.s);
    lgb_printf(&out, "end of trees\n\nfeature_importances:\n");
    double *imp = hr_calloc((size_t)b->num_features, sizeof *imp);
    if (imp) {
        gbdt_booster_importance(b, GBDT_IMPORTANCE_SPLIT, imp);
        for (int j = 0; j < b->num_features; j++)
            if (imp[j] > 0) lgb_printf(&out, "%s=%.0f\n", b->feature_names[j], imp[j]);
    }
    const gbdt_params *p = &b->params;
    lgb_printf(&out, "\nparameters:\n[boosting: gbdt]\n[objective: %s]\n[num_class: %d]\n[learning_rate: %g]\n"
               "[num_leaves: %d]\n[max_depth: %d]\n[min_data_in_leaf: %d]\n[min_sum_hessian_in_leaf: %g]\n"
               "[lambda_l1: %g]\n[lambda_l2: %g]\n[min_gain_to_split: %g]\n[bagging_fraction: %g]\n"
               "[bagging_freq: %d]\n[feature_fraction: %g]\n[max_bin: %d]\n[max_cat_to_onehot: %d]\n"
               "[max_cat_threshold: %d]\n[cat_l2: %g]\n[cat_smooth: %g]\n[min_data_per_group: %d]\n"
               "end of parameters\n\npandas_categorical:null\n",
               softmax ? "multiclass" : "regression", softmax ? K : 1, p->learning_rate, p->num_leaves, p->max_depth,
               p->min_data_in_leaf, p->min_sum_hessian_in_leaf, p->lambda_l1, p->lambda_l2, p->min_gain_to_split,
               p->bagging_fraction, p->bagging_freq, p->feature_fraction, p->max_bin, p->max_cat_to_onehot,
               p->max_cat_threshold, p->cat_l2, p->cat_smooth, p->min_data_per_group);
    int rc = (!imp || trees.failed || out.failed) ? hr_error(HR_ENOMEM, "%s: out of memory writing the model", path)
                                                 : hr_file_write_atomic(path, out.s, out.len);
    free(imp);
    free(sizes);
    free(trees.s);
    free(out.s);
    return rc;
}
