/* What only data/'s codecs share: the codec struct and the operations each source fills in (codec_conv.c,
 * codec_table.c); data/codec.c dispatches to them. */
#ifndef HEURIST_DATA_CODEC_INTERNAL_H
#define HEURIST_DATA_CODEC_INTERNAL_H

#include "data/codec.h"
#include "data/table.h"

_Static_assert(DATA_CONV_VALUES == DATA_PROBLEM_VALUES && DATA_CONV_VALUES <= DATA_CODEC_MAX_VALUES,
               "a convolution's values");
_Static_assert(DATA_TABLE_MAX_COLUMNS <= DATA_CODEC_MAX_VALUES, "a table problem's values");
_Static_assert(DATA_TABLE_MAX_COLUMNS + 1 <= DATA_AXES_MAX, "a table's axes");

typedef struct data_codec_ops {
    const char *name;
    const char *kind;       /* data_codec_kind */
    int (*problem_parse)(const data_codec *c, const char *text, double *pv);
    int (*problem_format)(const data_codec *c, const double *pv, char *buf, size_t size);
    void (*features)(const data_codec *c, const double *pv, float *x);
    void (*values_of_features)(const data_codec *c, const float *x, double *pv);
    int (*feature_name)(const data_codec *c, int j, char *buf, size_t size);
    void (*pair_features)(const data_codec *c, const double *pv, const double *kv, float *out);
    /* column j of a problem's values then of a configuration's: its name, a categorical one's vocabulary */
    const char *(*column)(const data_codec *c, int j, int *n_names, const char *const **names);
    int (*config_parse)(const data_codec *c, const char *name, double *kv);
    int (*config_format)(const data_codec *c, const double *kv, char *buf, size_t size);
    int (*config_sequence)(const data_codec *c, const double *kv, int32_t *seq);
    const char *(*config_field_text)(const data_codec *c, int j, int32_t v, char *buf, size_t size);
    void (*slices)(const data_codec *c, const double *pv, int *v);
    int (*kernel_class)(const data_codec *c, const double *pv);
    int64_t (*token_value)(const data_codec *c, const double *pv, int f, int bins);
    int (*allow_class)(const data_codec *c, const double *pv);
    int (*class_allows)(const data_codec *c, int cls, const char *kernel);
    /* map rows of `from`'s values (a codec of the same ops) into c's: kernel side or problem side */
    int (*map)(const data_codec *c, const data_codec *from, int kernel_side, const double *v, int n, double *out);
    int (*equal)(const data_codec *a, const data_codec *b);
    int (*check_same)(const data_codec *old, const data_codec *now, const char *name);
    int (*write)(const data_codec *c, hid_t f);
    const data_constraint *(*constraint)(const data_codec *c, const char *solver);
    int (*copy)(const data_codec *c, data_codec **out);
    void (*free)(data_codec *c);
} data_codec_ops;

struct data_codec {
    const data_codec_ops *ops;
    int n_values, n_features, n_kernel, n_pair, n_config_features;
    int n_slices, n_kernel_classes, n_tokens, n_allow;
    const data_codec_slice *slices; /* (n_slices) */
    const data_codec_token *tokens; /* (n_tokens); a table's are owned */
    /* a table's */
    data_table_spec *spec;          /* its schema (owned) */
    data_table_rules *rules;        /* a tune codec's capability rules (owned), or NULL */
    data_constraint *rules_constraint; /* the constraint over them (owned), or NULL */
};

extern const data_codec_ops data_codec_conv_ops;
extern const data_codec_ops data_codec_table_ops;

/* A table codec of spec (copied), with the rules of `rules_json` when not NULL (their text, as a model file keeps
 * them; `name` names it in errors). */
int data_codec_table_create(const data_table_spec *spec, const char *rules_json, const char *name, data_codec **out);

#endif
