/* The codec interface (data/codec.h): each call goes to the source's operations (codec_conv.c, codec_table.c);
 * and what a dataset's rows are through their codec. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/codec_internal.h"

int data_codec_of_select(const data_select *s, data_codec **out)
{
    return s->table ? data_codec_table(&s->table->spec, out) : data_codec_conv(out);
}

int data_codec_of_tune(const data_tune *t, data_codec **out)
{
    if (!t->sel) return data_codec_conv(out);
    char *json = t->rules ? data_table_rules_to_json(t->rules) : NULL;
    if (t->rules && !json) return HR_ENOMEM;
    int rc = data_codec_table_create(&t->sel->table->spec, json, "the data's capability rules", out);
    free(json);
    return rc;
}

int data_codec_copy(const data_codec *c, data_codec **out)
{
    return c->ops->copy(c, out);
}

void data_codec_free(data_codec *c)
{
    if (c) c->ops->free(c);
}

const char *data_codec_name(const data_codec *c)
{
    return c->ops->name;
}

const char *data_codec_kind(const data_codec *c)
{
    return c->ops->kind;
}

int data_codec_equal(const data_codec *a, const data_codec *b)
{
    return a->ops == b->ops && a->ops->equal(a, b);
}

int data_codec_check_same(const data_codec *old, const data_codec *now, const char *name)
{
    if (old->ops != now->ops)
        return hr_error(HR_EINVAL, "%s: a model of a %s, the data is a %s", name, old->ops->name, now->ops->name);
    return old->ops->check_same(old, now, name);
}

int data_codec_write(const data_codec *c, hid_t f)
{
    return c->ops->write(c, f);
}

int data_codec_read(hid_t f, const char *path, data_codec **out)
{
    *out = NULL;
    if (hr_h5_attr_exists(f, "table") <= 0) return data_codec_conv(out);
    char *json = NULL, *rules = NULL;
    data_table_spec spec;
    memset(&spec, 0, sizeof spec);
    int rc = hr_h5_attr_read_str(f, "table", &json);
    if (!rc) rc = data_table_spec_from_json(json, path, &spec);
    if (!rc && hr_h5_attr_exists(f, "rules") > 0) rc = hr_h5_attr_read_str(f, "rules", &rules);
    if (!rc) rc = data_codec_table_create(&spec, rules, path, out);
    data_table_spec_free(&spec);
    free(json);
    free(rules);
    return rc;
}

int data_codec_value_count(const data_codec *c)
{
    return c->n_values;
}

int data_codec_problem_parse(const data_codec *c, const char *text, double *pv)
{
    if (!text) return hr_error(HR_EINVAL, "problem is NULL");
    return c->ops->problem_parse(c, text, pv);
}

int data_codec_problem_plausible(const char *text)
{
    if (!text) return hr_error(HR_EINVAL, "problem is NULL");
    double pv[DATA_CODEC_MAX_VALUES];
    data_codec *conv;
    int rc = data_codec_conv(&conv);
    if (rc) return rc;
    /* a convolution key, or a table problem's col=value pairs (the table's codec checks the columns) */
    rc = strchr(text, '=') ? HR_OK : data_codec_problem_parse(conv, text, pv);
    data_codec_free(conv);
    return rc;
}

int data_codec_problem_format(const data_codec *c, const double *pv, char *buf, size_t size)
{
    return c->ops->problem_format(c, pv, buf, size);
}

int data_codec_feature_count(const data_codec *c)
{
    return c->n_features;
}

void data_codec_features(const data_codec *c, const double *pv, float *x)
{
    c->ops->features(c, pv, x);
}

void data_codec_values_of_features(const data_codec *c, const float *x, double *pv)
{
    c->ops->values_of_features(c, x, pv);
}

int data_codec_feature_name(const data_codec *c, int j, char *buf, size_t size)
{
    if (j < 0 || j >= c->n_features + c->n_pair) return hr_error(HR_EINVAL, "feature %d: out of range", j);
    return c->ops->feature_name(c, j, buf, size);
}

const char *data_codec_column(const data_codec *c, int j, int *n_names, const char *const **names)
{
    int n = 0;
    const char *const *v = NULL;
    const char *name = j >= 0 && j < c->n_values + c->n_kernel ? c->ops->column(c, j, &n, &v) : NULL;
    if (n_names) *n_names = name ? n : 0;
    if (names) *names = name ? v : NULL;
    return name;
}

int data_codec_column_check(const data_codec *c, int j, double v)
{
    int n;
    const char *name = data_codec_column(c, j, &n, NULL);
    if (!name) return hr_error(HR_EINVAL, "column %d: a %s has %d problem and %d configuration columns", j, c->ops->name,
                               c->n_values, c->n_kernel);
    const char *side = j < c->n_values ? "problem" : "configuration";
    if (!isfinite(v)) return hr_error(HR_EINVAL, "%s column '%s': value %g is not finite", side, name, v);
    if (n && (v < 0 || v >= n || v != floor(v)))
        return hr_error(HR_EINVAL, "%s column '%s': %g is no category (an index 0..%d into its %d values)", side, name, v,
                        n - 1, n);
    return HR_OK;
}

int data_codec_config_width(const data_codec *c)
{
    return c->n_kernel;
}

int data_codec_pair_feature_count(const data_codec *c)
{
    return c->n_pair;
}

int data_codec_config_feature_count(const data_codec *c)
{
    return c->n_config_features;
}

void data_codec_pair_features(const data_codec *c, const double *pv, const double *kv, float *out)
{
    c->ops->pair_features(c, pv, kv, out);
}

int data_codec_config_parse(const data_codec *c, const char *name, double *kv)
{
    return c->ops->config_parse(c, name, kv);
}

int data_codec_config_format(const data_codec *c, const double *kv, char *buf, size_t size)
{
    return c->ops->config_format(c, kv, buf, size);
}

int data_codec_config_sequence(const data_codec *c, const double *kv, int32_t *seq)
{
    return c->ops->config_sequence(c, kv, seq);
}

const char *data_codec_config_field_text(const data_codec *c, int j, int32_t v, char *buf, size_t size)
{
    return c->ops->config_field_text(c, j, v, buf, size);
}

/* Values of another source can be read only by a codec of the same kind. */
static int map_check(const data_codec *to, const data_codec *from)
{
    if (to->ops != from->ops)
        return hr_error(HR_EINVAL, "a model of a %s cannot read the problems of a %s", to->ops->name, from->ops->name);
    return HR_OK;
}

int data_codec_map_configs(const data_codec *to, const data_codec *from, const double *kv, int n, double *out)
{
    int rc = map_check(to, from);
    return rc ? rc : to->ops->map(to, from, 1, kv, n, out);
}

int data_codec_map_problems(const data_codec *to, const data_codec *from, const double *pv, int n, double *out)
{
    int rc = map_check(to, from);
    return rc ? rc : to->ops->map(to, from, 0, pv, n, out);
}

int data_codec_slice_count(const data_codec *c)
{
    return c->n_slices;
}

const data_codec_slice *data_codec_slice_at(const data_codec *c, int s)
{
    HR_ASSERT(s >= 0 && s < c->n_slices);
    return &c->slices[s];
}

int data_codec_slice_find(const data_codec *c, const char *name)
{
    for (int s = 0; s < c->n_slices; s++)
        if (!strcmp(c->slices[s].name, name)) return s;
    return -1;
}

void data_codec_slices(const data_codec *c, const double *pv, int *v)
{
    c->ops->slices(c, pv, v);
}

int data_codec_allow_count(const data_codec *c)
{
    return c->n_allow;
}

int data_codec_allow_class(const data_codec *c, const double *pv)
{
    return c->n_allow ? c->ops->allow_class(c, pv) : -1;
}

int data_codec_class_allows(const data_codec *c, int cls, const char *kernel)
{
    return cls < 0 || cls >= c->n_allow || c->ops->class_allows(c, cls, kernel);
}

int data_codec_kernel_class_count(const data_codec *c)
{
    return c->n_kernel_classes;
}

int data_codec_kernel_class(const data_codec *c, const double *pv)
{
    return c->ops->kernel_class(c, pv);
}

int data_codec_token_count(const data_codec *c)
{
    return c->n_tokens;
}

const data_codec_token *data_codec_token_at(const data_codec *c, int f)
{
    HR_ASSERT(f >= 0 && f < c->n_tokens);
    return &c->tokens[f];
}

int64_t data_codec_token_value(const data_codec *c, const double *pv, int f, int bins)
{
    return c->ops->token_value(c, pv, f, bins);
}

const data_constraint *data_codec_constraint(const data_codec *c, const char *solver)
{
    return c->ops->constraint(c, solver);
}

/* ---- a dataset's rows ---- */

static void table_values(const data_table *t, double *V)
{
    memcpy(V, t->pv, (size_t)t->n * (size_t)(t->spec.n_problem + t->spec.n_hardware) * sizeof *V);
}

void data_select_values(const data_select *s, double *V)
{
    if (s->table) table_values(s->table, V);
    else
        for (int i = 0; i < s->n; i++) data_problem_values(&s->problems[i], V + (size_t)i * DATA_CONV_VALUES);
}

void data_tune_values(const data_tune *t, double *V)
{
    if (t->sel) table_values(t->sel->table, V);
    else
        for (int i = 0; i < t->n; i++) data_problem_values(&t->problems[i], V + (size_t)i * DATA_CONV_VALUES);
}

const double *data_select_config_values(const data_select *s)
{
    return s->table ? s->table->kv : NULL;
}

/* A convolution's axes are computed from its problem (column < 0, these codes); a table's read its columns. */
enum {
    AXIS_TABLE_GROUP = -1,
    AXIS_CLASS = -2,
    AXIS_DIRECTION = -3,
    AXIS_DTYPE = -4,
    AXIS_DIMS = -5,
    AXIS_GROUPS = -6,
    AXIS_SOURCE = -7,
};
static const char *const dims_names[] = {"2d", "3d"};
static const char *const groups_names[] = {"dense", "grouped", "depthwise"};
/* the class of a problem as its user asks for it: an FP32 problem's precision class, any other's data type */
static const char *const class_names[DATA_PRECISION_COUNT + DATA_DTYPE_COUNT] = {
    DATA_PRECISION_LIST(DATA_PORTABLE_NAME) DATA_DTYPE_LIST(DATA_PORTABLE_NAME)};

/* dense (one group), depthwise (a group per input channel: in_c of a forward key, out_c of a B or W key, whose
 * "in" is dy) or grouped */
static int conv_groups_value(const data_problem *p)
{
    int64_t g = p->f[DATA_FIELD_GROUPS], c = p->direction == DATA_DIR_F ? p->f[DATA_FIELD_IN_C] : p->f[DATA_FIELD_OUT_C];
    return g <= 1 ? 0 : g == c ? 2 : 1;
}

int data_select_axes(const data_select *s, data_axis *ax, int max)
{
    const data_table *t = s->table;
    int n = 0;
    if (!t) {
        const data_axis conv[] = {
            {"class", DATA_PRECISION_COUNT + DATA_DTYPE_COUNT, (char *const *)class_names, AXIS_CLASS},
            {"direction", DATA_DIR_COUNT, (char *const *)data_direction_names, AXIS_DIRECTION},
            {"dtype", DATA_DTYPE_COUNT, (char *const *)data_dtype_names, AXIS_DTYPE},
            {"dims", 2, (char *const *)dims_names, AXIS_DIMS},
            {"groups", 3, (char *const *)groups_names, AXIS_GROUPS},
        };
        if (s->n_sources > 0 && n < max) ax[n++] = (data_axis){"source", s->n_sources, s->source_names, AXIS_SOURCE};
        for (size_t i = 0; i < sizeof conv / sizeof conv[0] && n < max; i++) ax[n++] = conv[i];
        return n;
    }
    if (s->n_sources > 0 && n < max) ax[n++] = (data_axis){"source", s->n_sources, s->source_names, AXIS_SOURCE};
    if (t->group && n < max) ax[n++] = (data_axis){t->spec.group, t->n_group_names, t->group_names, AXIS_TABLE_GROUP};
    for (int j = 0; j < t->spec.n_problem + t->spec.n_hardware && n < max; j++)
        if (t->spec.problem[j].categorical)
            ax[n++] = (data_axis){t->spec.problem[j].name, t->spec.problem[j].n_vocab, t->spec.problem[j].vocab, j};
    return n;
}

int data_select_axis_value(const data_select *s, const data_axis *a, int row)
{
    const data_problem *p = s->problems ? &s->problems[row] : NULL;
    switch (a->column) {
    case AXIS_SOURCE: return s->problem_source[row];
    case AXIS_CLASS: return p->dtype == DATA_DTYPE_FP32 ? p->precision : DATA_PRECISION_COUNT + p->dtype;
    case AXIS_DIRECTION: return p->direction;
    case AXIS_DTYPE: return p->dtype;
    case AXIS_DIMS: return p->f[DATA_FIELD_SPATIAL_DIM] == 3;
    case AXIS_GROUPS: return conv_groups_value(p);
    default: break;
    }
    const data_table *t = s->table;
    int np = t->spec.n_problem + t->spec.n_hardware;
    return a->column == AXIS_TABLE_GROUP ? t->group[row] : (int)t->pv[(size_t)row * np + a->column];
}

int data_select_tunes(const data_select *s)
{
    return s->table != NULL;
}

int data_select_tune(const char *path, data_select *s, const char *caps, const hr_log *log, data_tune **out)
{
    return data_table_tune(path, s, caps, log, out);
}

/* The groups of a table (t) or of n convolutions (p) by `by` (data_select_groups); `name` names the data. */
static int groups_by(const data_table *t, const data_problem *p, int n, const char *name, const char *by, int *group,
                     int *n_groups, const char **rule, int *whole)
{
    const char *col = t ? t->spec.group : NULL;
    if (by && strcmp(by, "problem") != 0 && !(col && !strcmp(by, col))) {
        if (col) return hr_error(HR_EINVAL, "expected problem or %s (the schema's group column)", col);
        return hr_error(HR_EINVAL, "expected problem (%s names no group column)", name ? name : "the data");
    }
    *whole = 0;
    if (!t) {
        *rule = "problem geometry";
        return data_groups_compute(p, n, group, n_groups);
    }
    if (col && t->group && (!by || !strcmp(by, col))) {
        *rule = col;
        *whole = 1;
        return data_table_groups(t, group, n_groups);
    }
    *rule = "problem columns";
    return data_table_problem_groups(t, group, n_groups);
}

int data_select_groups(const data_select *s, const char *by, int *group, int *n_groups, const char **rule, int *whole)
{
    return groups_by(s->table, s->problems, s->n, s->source, by, group, n_groups, rule, whole);
}

int data_tune_groups(const data_tune *t, const char *by, int *group, int *n_groups, const char **rule, int *whole)
{
    return groups_by(t->sel ? t->sel->table : NULL, t->problems, t->n, t->source, by, group, n_groups, rule, whole);
}
