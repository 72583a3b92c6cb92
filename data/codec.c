/* The codec interface (data/codec.h): each call goes to the source's operations (codec_conv.c, codec_table.c);
 * and what a dataset's rows are through their codec. */
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

const char *data_codec_group_rule(const data_codec *c)
{
    if (c->spec && c->spec->group) return c->spec->group; /* a table's group column */
    return c->ops->group_rule;
}

int data_codec_equal(const data_codec *a, const data_codec *b)
{
    return a->ops == b->ops && a->ops->equal(a, b);
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

int data_codec_config_width(const data_codec *c)
{
    return c->n_kernel;
}

int data_codec_pair_feature_count(const data_codec *c)
{
    return c->n_pair;
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

int data_select_groups(const data_select *s, int *group, int *n_groups)
{
    return s->table ? data_table_groups(s->table, group, n_groups) : data_groups_compute(s->problems, s->n, group, n_groups);
}

int data_tune_groups(const data_tune *t, int *group, int *n_groups)
{
    return t->sel ? data_table_groups(t->sel->table, group, n_groups) : data_groups_compute(t->problems, t->n, group, n_groups);
}
