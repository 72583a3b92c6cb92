/* codec: a source of problems as every layer above data/ sees it, one codec per source (a convolution key, a
 * benchmark table's schema); adding a source adds a codec here and touches nothing above.
 *
 * A problem is a vector of values pv (double, data_codec_value_count of them): a convolution's key fields
 * (data_field order) then its layout, data type, direction and precision class; a table problem's problem then
 * hardware columns (a category as the index of its string in the column's vocabulary). A codec turns
 * - text into values and back (a find-db key or line, "M=128,N=4096,...");
 * - values into the problem features x (n_features, each named), and features back into values (exact for
 *   the values a float holds);
 * - a configuration's values kv (a table's kernel columns: n_kernel of them) and a problem's values into the
 *   pair features (n_pair, named), and configuration names into values and back; a source whose kernels are
 *   known by name only has none (n_kernel = n_pair = 0), and ranks every kernel, where a source of valued
 *   configurations ranks for each problem the configurations measured for it;
 * - values into its slices, the categorical axes results are broken down by and kernels are known to apply to
 *   (a convolution's direction, data type, layout and precision class; a table has none), into a kernel class
 *   (problems of one class are measured on the same kernels: a convolution's measured slices, 2-D or 3-D, grouped
 *   or not) and into the kernels it allows by name (an FP32 convolution's precision class refuses the other math's);
 * - values into encoder tokens, one per field (a convolution's sizes and categories; a table's columns, a numeric
 *   one binned by octave);
 * - itself into a model file and back (a table writes its schema, and a tune model's capability rules).
 * A tune codec also carries the validity rules of the sequences (a solver's, or a table's capability rules).
 */
#ifndef HEURIST_DATA_CODEC_H
#define HEURIST_DATA_CODEC_H

#include <hdf5.h>
#include <stdint.h>

#include "data/data.h"

typedef struct data_codec data_codec;
struct data_table_spec;

/* The most values a problem of any source has (a convolution's DATA_PROBLEM_VALUES, a table's columns). */
#define DATA_CODEC_MAX_VALUES 64

/* ---- making one ---- */
/* The convolution key's codec. */
int data_codec_conv(data_codec **out);
/* A table's codec, from its schema (copied). */
int data_codec_table(const struct data_table_spec *spec, data_codec **out);
/* The codec of a loaded dataset; a tune dataset's carries its validity rules. */
int data_codec_of_select(const data_select *s, data_codec **out);
int data_codec_of_tune(const data_tune *t, data_codec **out);
int data_codec_copy(const data_codec *c, data_codec **out);
void data_codec_free(data_codec *c); /* NULL is fine */
/* What the source is called in messages ("convolution", "benchmark table"). */
const char *data_codec_name(const data_codec *c);
/* The data kind reports name ("benchmark table"), or NULL for the contract's default (a find-db or perf-db). */
const char *data_codec_kind(const data_codec *c);
/* 1 when both read and write problems and configurations alike (the same schema and vocabularies). */
int data_codec_equal(const data_codec *a, const data_codec *b);
/* HR_OK when `now` reads problems and configurations at the positions `old` does (the same source, columns and
 * categorical vocabularies), else HR_EINVAL naming the first difference in `name`'s terms (old: a model's, now:
 * the data's). */
int data_codec_check_same(const data_codec *old, const data_codec *now, const char *name);

/* ---- model files ---- */
/* Writes the codec into a model file's root group f (a convolution writes nothing: a file without a codec is
 * one); read back by data_codec_read, which names `path` in errors. */
int data_codec_write(const data_codec *c, hid_t f);
int data_codec_read(hid_t f, const char *path, data_codec **out);

/* ---- problems ---- */
int data_codec_value_count(const data_codec *c);
/* Parses a problem as text: a find-db key or a whole find-db line (the key before '='), or a table problem's
 * "col=value,..." (every problem and hardware column once). An error names the text and what is wrong. */
int data_codec_problem_parse(const data_codec *c, const char *text, double *pv);
/* 0 when text can be a problem of some source (a convolution key or line, or column=value pairs), so a caller may
 * refuse a malformed problem before it reads the model whose codec parses it; else an error with the reason. */
int data_codec_problem_plausible(const char *text);
/* The canonical text of a problem into buf (size bytes); 0 or a negative status. */
int data_codec_problem_format(const data_codec *c, const double *pv, char *buf, size_t size);

/* ---- columns: what a problem's values and a configuration's values are called ---- */
/* Column j: a problem's value j (j < value count: a convolution's key fields then layout, dtype, direction and
 * precision; a table's problem then hardware columns) or a configuration's value j - value count (below the
 * config width). Returns its name and, through n_names and names (either may be NULL), a categorical column's
 * vocabulary (a value is an index into it) or 0 and NULL for a numeric one; NULL for j out of range. */
const char *data_codec_column(const data_codec *c, int j, int *n_names, const char *const **names);
/* HR_OK when v may be column j's value: finite, and a categorical column's an index into its vocabulary; else
 * HR_EINVAL naming the column and, for a category, how many it has. */
int data_codec_column_check(const data_codec *c, int j, double v);

/* ---- features ---- */
int data_codec_feature_count(const data_codec *c);
/* x (feature count) of a problem. */
void data_codec_features(const data_codec *c, const double *pv, float *x);
/* The values a feature vector was computed from (the inverse of data_codec_features for what a float holds). */
void data_codec_values_of_features(const data_codec *c, const float *x, double *pv);
/* Name of problem feature j (j < feature count) or of pair feature j - feature count, into buf; 0 or a status. */
int data_codec_feature_name(const data_codec *c, int j, char *buf, size_t size);

/* ---- configurations (n_kernel values each) and pair features ---- */
int data_codec_config_width(const data_codec *c);       /* n_kernel; 0: kernels known by name only */
int data_codec_pair_feature_count(const data_codec *c); /* n_pair */
/* The pair features that read the configuration alone (its columns' encodings), which lead a pair's features. */
int data_codec_config_feature_count(const data_codec *c);
/* out (n_pair) of a problem's values pv and a configuration's values kv. */
void data_codec_pair_features(const data_codec *c, const double *pv, const double *kv, float *out);
/* A configuration's name "tile_m=128,..." into its values kv and back (canonical, in schema order); 0 or a
 * negative status. */
int data_codec_config_parse(const data_codec *c, const char *name, double *kv);
int data_codec_config_format(const data_codec *c, const double *kv, char *buf, size_t size);
/* A configuration's values as a tuning sequence (n_kernel int32: a numeric field's value, a category's index);
 * an error names a numeric field that is no int32 integer. */
int data_codec_config_sequence(const data_codec *c, const double *kv, int32_t *seq);
/* The name of configuration field j of a tuning sequence's value v into buf, or NULL for a value outside a
 * categorical field's vocabulary; a numeric field prints its number. */
const char *data_codec_config_field_text(const data_codec *c, int j, int32_t v, char *buf, size_t size);
/* Configuration values of another codec's source in this one's columns and vocabularies (from: the data's, to:
 * the model's): n rows of kv. A column `to` has and `from` lacks is an error naming it; a category `to` never saw
 * becomes -1 (no category: a configuration `to` does not know). Problem values the same way (map_problems), except
 * that a problem's category `to` never saw is refused as parsing refuses it (data_table_category_unknown). */
int data_codec_map_configs(const data_codec *to, const data_codec *from, const double *kv, int n, double *out);
int data_codec_map_problems(const data_codec *to, const data_codec *from, const double *pv, int n, double *out);

/* ---- slices, kernel classes and tokens ---- */
typedef struct data_codec_slice {
    const char *name;          /* "direction", "dtype", "layout", "precision" */
    int n_values;
    const char *const *names;  /* (n_values) */
    int measured;              /* kernels are measured per value (the applicability table's axes, first); 0 for an
                                * axis that refuses kernels by rule instead (data_codec_allow_class) */
} data_codec_slice;
int data_codec_slice_count(const data_codec *c);
const data_codec_slice *data_codec_slice_at(const data_codec *c, int s);
/* The slice named `name`, or -1 when the source has none of that name. */
int data_codec_slice_find(const data_codec *c, const char *name);
/* v (slice count): the problem's value of each slice. */
void data_codec_slices(const data_codec *c, const double *pv, int *v);
/* Which kernels a problem allows by their names: a convolution's FP32 problem the kernels of the math its precision
 * class asks for (data/portable.h), any other problem every kernel. Problems fall into data_codec_allow_count
 * classes (data_codec_allow_class, -1 for a problem that allows every kernel), so a caller can tell each class's
 * kernels once (data_codec_class_allows). */
int data_codec_allow_count(const data_codec *c);
int data_codec_allow_class(const data_codec *c, const double *pv);
int data_codec_class_allows(const data_codec *c, int cls, const char *kernel);
/* The kernel class of a problem, in 0 .. data_codec_kernel_class_count(c). */
int data_codec_kernel_class_count(const data_codec *c);
int data_codec_kernel_class(const data_codec *c, const double *pv);

typedef struct data_codec_token {
    const char *name;          /* the field's name in model files */
    int n_names;               /* a categorical field stored by name: its names (NULL: stored as a number) */
    const char *const *names;
} data_codec_token;
int data_codec_token_count(const data_codec *c);
const data_codec_token *data_codec_token_at(const data_codec *c, int f);
/* Field f of a problem as an encoder token value: a number, a category's index, or a table's numeric column as the
 * bin round(bins log2(1 + |v|)) signed like v. */
int64_t data_codec_token_value(const data_codec *c, const double *pv, int f, int bins);

/* ---- tuning ---- */
/* The rules a tune codec's sequences are checked with (its table's capability rules, or the solver's); NULL:
 * none. */
const data_constraint *data_codec_constraint(const data_codec *c, const char *solver);

/* ---- a dataset's rows ---- */
/* V (n, value count): the values of every problem of a dataset. */
void data_select_values(const data_select *s, double *V);
void data_tune_values(const data_tune *t, double *V);
/* Each configuration's values (n_kernels, n_kernel) of a selection dataset; NULL for kernels known by name. */
const double *data_select_config_values(const data_select *s);
/* The axes a report pools a selection dataset's problems by, beside the codec's slices: the problems' source when
 * they are tagged (data_sources_read), then a benchmark table's group column and each categorical problem column, or
 * a convolution's class (an FP32 problem's precision class, any other's data type), direction, data type, dims (2d,
 * 3d) and groups (dense, grouped, depthwise: a group per input channel). Returns how many (at most max);
 * data_select_axis_value is row's value of axis a, an index into a->values. */
#define DATA_AXES_MAX 65 /* a group column and every problem column of a table (DATA_TABLE_MAX_COLUMNS) */
typedef struct data_axis {
    const char *name;
    int n_values;
    char *const *values;
    int column;
} data_axis;
int data_select_axes(const data_select *s, data_axis *ax, int max);
int data_select_axis_value(const data_select *s, const data_axis *a, int row);

/* 1 when selection data reads as tuning data too (a benchmark table: per problem the kernel fields of its fastest
 * measured configuration); data_select_tune turns it into tuning data (s taken over, freed on error too), with the
 * capability rules of the file `caps` (NULL: FILE.caps.json beside the table at `path` when it exists). */
int data_select_tunes(const data_select *s);
int data_select_tune(const char *path, data_select *s, const char *caps, const hr_log *log, data_tune **out);
/* The groups a dataset's problems are split by (GroupKFold's, and a random split's with a group column), chosen by
 * `by`: NULL the source's own (a table's group column when its schema names one, else its problem columns; a
 * convolution's geometry), "problem" the problems themselves, or a table's group column by its name. *rule names
 * the grouping for reports ("problem geometry", "problem columns" or the column's name) and *whole is 1 for a group
 * column's groups (a random split holds out whole groups). Another `by` is an error saying what it may be. */
int data_select_groups(const data_select *s, const char *by, int *group, int *n_groups, const char **rule, int *whole);
int data_tune_groups(const data_tune *t, const char *by, int *group, int *n_groups, const char **rule, int *whole);

#endif
