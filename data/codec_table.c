/* A benchmark table's codec: a problem is its problem and hardware columns' values, a configuration its kernel
 * columns' (data/table.h); a tune codec keeps the table's capability rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/codec_internal.h"

static int table_parse(const data_codec *c, const char *text, double *pv)
{
    /* a find-db key has no column=value pairs: say what a table problem looks like */
    if (!strchr(text, '='))
        return hr_error(HR_EINVAL, "problem '%.200s': a benchmark-table problem is given by its column values "
                        "(\"col=value,...\", every problem and hardware column once), not by a problem key", text);
    return data_table_problem_parse(c->spec, text, pv);
}

static int table_format(const data_codec *c, const double *pv, char *buf, size_t size)
{
    return data_table_problem_format(c->spec, pv, buf, size);
}

static void table_features(const data_codec *c, const double *pv, float *x)
{
    data_table_problem_features(c->spec, pv, x);
}

static void table_values_of_features(const data_codec *c, const float *x, double *pv)
{
    data_table_problem_values(c->spec, x, pv);
}

static int table_feature_name(const data_codec *c, int j, char *buf, size_t size)
{
    return data_table_feature_name(c->spec, j, buf, size);
}

static void table_pair_features(const data_codec *c, const double *pv, const double *kv, float *out)
{
    data_table_pair_features(c->spec, pv, kv, out);
}

/* The problem then hardware columns, then the kernel columns (data/table.h). */
static const char *table_column(const data_codec *c, int j, int *n_names, const char *const **names)
{
    const data_table_spec *s = c->spec;
    const data_table_column *col = j < c->n_values ? &s->problem[j] : &s->kernel[j - c->n_values];
    *n_names = col->categorical ? col->n_vocab : 0;
    *names = col->categorical ? (const char *const *)col->vocab : NULL;
    return col->name;
}

static int table_config_parse(const data_codec *c, const char *name, double *kv)
{
    return data_table_config_parse(c->spec, name, kv);
}

static int table_config_format(const data_codec *c, const double *kv, char *buf, size_t size)
{
    return data_table_config_format(c->spec, kv, buf, size);
}

static int table_config_sequence(const data_codec *c, const double *kv, int32_t *seq)
{
    return data_table_config_sequence(c->spec, kv, seq);
}

static const char *table_config_field_text(const data_codec *c, int j, int32_t v, char *buf, size_t size)
{
    const data_table_column *col = &c->spec->kernel[j];
    if (!col->categorical) {
        snprintf(buf, size, "%d", v);
        return buf;
    }
    return v >= 0 && v < col->n_vocab ? col->vocab[v] : NULL;
}

static void table_slices(const data_codec *c, const double *pv, int *v)
{
    (void)c, (void)pv, (void)v; /* a table's problems are not sliced */
}

static int table_kernel_class(const data_codec *c, const double *pv)
{
    (void)c, (void)pv; /* each problem's candidates are the configurations measured for it */
    return 0;
}

static int64_t table_token_value(const data_codec *c, const double *pv, int f, int bins)
{
    double v = pv[f];
    if (c->spec->problem[f].categorical) return (int64_t)v;
    double b = floor(bins * log2(1.0 + fabs(v)) + 0.5);
    if (!(b < 1e15)) b = 1e15; /* inf or NaN: one bin past every size */
    return v < 0 ? -(int64_t)b : (int64_t)b;
}

/* Where the values of `to`'s columns come from in `from`'s: src[j] is the column of `from` named as column j of
 * `to`; a column the data lacks is an error. */
static int columns_map(const data_table_column *from, int n_from, const data_table_column *to, int n_to,
                       const char *role, int *src)
{
    for (int j = 0; j < n_to; j++) {
        src[j] = -1;
        for (int i = 0; i < n_from && src[j] < 0; i++)
            if (!strcmp(from[i].name, to[j].name)) src[j] = i;
        if (src[j] < 0) return hr_error(HR_EINVAL, "the model's %s column '%s' is not in the data", role, to[j].name);
    }
    return HR_OK;
}

/* Value v of column fc in column tc's terms: a category by its string in tc's vocabulary (-1, no category, for one
 * tc never saw), since the two tables may have read different vocabularies. */
static double value_map(const data_table_column *fc, const data_table_column *tc, double v)
{
    if (!tc->categorical) return v;
    int i = (int)v;
    if (!fc->categorical || i < 0 || i >= fc->n_vocab) return -1;
    for (int k = 0; k < tc->n_vocab; k++)
        if (!strcmp(tc->vocab[k], fc->vocab[i])) return k;
    return -1;
}

/* A problem's category the model's column never saw is refused (data_table_category_unknown: the model knows
 * nothing of it); a configuration's becomes -1, a configuration the model does not know. */
static int table_map(const data_codec *c, const data_codec *from, int kernel_side, const double *v, int n, double *out)
{
    const data_table_spec *ds = from->spec, *ms = c->spec;
    const data_table_column *fc = kernel_side ? ds->kernel : ds->problem, *tc = kernel_side ? ms->kernel : ms->problem;
    int nf = kernel_side ? ds->n_kernel : ds->n_problem + ds->n_hardware;
    int nt = kernel_side ? ms->n_kernel : ms->n_problem + ms->n_hardware;
    int src[DATA_TABLE_MAX_COLUMNS];
    int rc = columns_map(fc, nf, tc, nt, kernel_side ? "kernel" : "problem", src);
    for (int i = 0; !rc && i < n; i++)
        for (int j = 0; j < nt && !rc; j++) {
            const data_table_column *f = &fc[src[j]];
            const double x = v[(size_t)i * nf + src[j]];
            out[(size_t)i * nt + j] = value_map(f, &tc[j], x);
            if (kernel_side || !tc[j].categorical || out[(size_t)i * nt + j] >= 0) continue;
            const char *name = f->categorical && x >= 0 && x < f->n_vocab ? f->vocab[(int)x] : "?";
            char context[64];
            snprintf(context, sizeof context, "problem %d of the data, in the model's table", i + 1);
            rc = data_table_category_unknown(&tc[j], name, strlen(name), context);
        }
    return rc;
}

/* Two schemas are alike when they name every column and category alike (data_table_spec_same). */
static int table_equal(const data_codec *a, const data_codec *b)
{
    return data_table_spec_same(a->spec, b->spec);
}

/* The first index where two name lists differ, or -1 when they are equal (n is the length of both). */
static int names_differ(char *const *a, char *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(a[i], b[i]) != 0) return i;
    return -1;
}

static int columns_check(const data_table_column *o, const data_table_column *w, int n, const char *side,
                         const char *name)
{
    for (int j = 0; j < n; j++) {
        if (strcmp(o[j].name, w[j].name) != 0 || o[j].categorical != w[j].categorical)
            return hr_error(HR_EINVAL, "%s: %s column %d is '%s' in the model, '%s' in the data", name, side, j + 1,
                            o[j].name, w[j].name);
        if (!o[j].categorical) continue;
        int n_min = o[j].n_vocab < w[j].n_vocab ? o[j].n_vocab : w[j].n_vocab;
        int at = names_differ(o[j].vocab, w[j].vocab, n_min);
        if (at < 0 && o[j].n_vocab != w[j].n_vocab) at = n_min;
        if (at >= 0)
            return hr_error(HR_EINVAL, "%s: column '%s' has the categories {%s%s} in the model, {%s%s} in the data "
                            "(category %d differs)", name, o[j].name, at < o[j].n_vocab ? o[j].vocab[at] : "",
                            at < o[j].n_vocab ? ", ..." : "", at < w[j].n_vocab ? w[j].vocab[at] : "",
                            at < w[j].n_vocab ? ", ..." : "", at + 1);
    }
    return HR_OK;
}

/* The same columns, roles and categorical vocabularies, position by position. */
static int table_check_same(const data_codec *old, const data_codec *now, const char *name)
{
    const data_table_spec *o = old->spec, *w = now->spec;
    if (o->n_problem != w->n_problem || o->n_hardware != w->n_hardware || o->n_kernel != w->n_kernel)
        return hr_error(HR_EINVAL, "%s: the model's table has %d problem, %d hardware and %d kernel columns, the "
                        "data's %d, %d and %d", name, o->n_problem, o->n_hardware, o->n_kernel, w->n_problem,
                        w->n_hardware, w->n_kernel);
    int rc = columns_check(o->problem, w->problem, o->n_problem + o->n_hardware, "problem", name);
    return rc ? rc : columns_check(o->kernel, w->kernel, o->n_kernel, "kernel", name);
}

/* The schema as the "table" attribute, by name (data_table_spec_to_json), and a tune codec's capability rules as
 * "rules", every list filled (data_table_rules_to_json). */
static int table_write(const data_codec *c, hid_t f)
{
    char *json = data_table_spec_to_json(c->spec);
    if (!json) return HR_ENOMEM;
    int rc = hr_h5_attr_write_str(f, "table", json);
    free(json);
    if (rc || !c->rules) return rc;
    if (!(json = data_table_rules_to_json(c->rules))) return HR_ENOMEM;
    rc = hr_h5_attr_write_str(f, "rules", json);
    free(json);
    return rc;
}

static const data_constraint *table_constraint(const data_codec *c, const char *solver)
{
    if (c->rules_constraint) return c->rules_constraint;
    return solver ? data_constraint_find(solver) : NULL;
}

static void table_free(data_codec *c)
{
    free((void *)c->tokens);
    free(c->rules_constraint);
    data_table_rules_free(c->rules);
    data_table_spec_free(c->spec);
    free(c->spec);
    free(c);
}

static int table_copy(const data_codec *c, data_codec **out)
{
    char *json = c->rules ? data_table_rules_to_json(c->rules) : NULL;
    if (c->rules && !json) return HR_ENOMEM;
    int rc = data_codec_table_create(c->spec, json, "the data's capability rules", out);
    free(json);
    return rc;
}

const data_codec_ops data_codec_table_ops = {
    .name = "benchmark table",
    .kind = "benchmark table",
    .problem_parse = table_parse,
    .problem_format = table_format,
    .features = table_features,
    .values_of_features = table_values_of_features,
    .feature_name = table_feature_name,
    .pair_features = table_pair_features,
    .column = table_column,
    .config_parse = table_config_parse,
    .config_format = table_config_format,
    .config_sequence = table_config_sequence,
    .config_field_text = table_config_field_text,
    .slices = table_slices,
    .kernel_class = table_kernel_class,
    .token_value = table_token_value,
    .map = table_map,
    .equal = table_equal,
    .check_same = table_check_same,
    .write = table_write,
    .constraint = table_constraint,
    .copy = table_copy,
    .free = table_free,
};

int data_codec_table_create(const data_table_spec *spec, const char *rules_json, const char *name, data_codec **out)
{
    *out = NULL;
    data_codec *c = hr_calloc(1, sizeof *c);
    if (!c) return HR_ENOMEM;
    c->ops = &data_codec_table_ops;
    int rc = (c->spec = hr_calloc(1, sizeof *c->spec)) ? data_table_spec_copy(spec, c->spec) : HR_ENOMEM;
    const data_table_spec *s = c->spec;
    int np = rc ? 0 : s->n_problem + s->n_hardware;
    data_codec_token *tokens = rc ? NULL : hr_calloc((size_t)(np ? np : 1), sizeof *tokens);
    if (!rc && !tokens) rc = HR_ENOMEM;
    c->tokens = tokens;
    /* a token per column, stored as a number: a numeric column's bin, a category's index */
    for (int j = 0; !rc && j < np; j++) tokens[j] = (data_codec_token){s->problem[j].name, 0, NULL};
    if (!rc) {
        c->n_values = np;
        c->n_features = data_table_problem_feature_count(s);
        c->n_kernel = s->n_kernel;
        c->n_pair = data_table_pair_feature_count(s);
        c->n_config_features = data_table_config_feature_count(s);
        c->n_kernel_classes = 1;
        c->n_tokens = np;
    }
    if (!rc && rules_json && !(rc = data_table_rules_parse(rules_json, name, s, NULL, &c->rules)) &&
        !(c->rules_constraint = data_table_rules_constraint(c->rules, s)))
        rc = HR_ENOMEM;
    if (rc) {
        table_free(c);
        return rc;
    }
    *out = c;
    return HR_OK;
}

int data_codec_table(const data_table_spec *spec, data_codec **out)
{
    return data_codec_table_create(spec, NULL, NULL, out);
}

const data_table_spec *data_codec_table_spec(const data_codec *c)
{
    return c->ops == &data_codec_table_ops ? c->spec : NULL;
}
