/* What only export/ shares: the emit helpers (emit.c), the embedded runtime sources and each family's writer. */
#ifndef HEURIST_EXPORT_INTERNAL_H
#define HEURIST_EXPORT_INTERNAL_H

#include <stdio.h>

#include "models/model.h"

struct model_views;
typedef struct export_family export_family;   /* a family's writer (export.c) */
typedef struct export_runtime export_runtime; /* the runtime written for a source and a task (export.c) */

/* What the writers of one export share: the model, its views (created once by export_c_write), its family's writer,
 * the runtime written, and the prefix of the runtime's names */
typedef struct export_job {
    const model *m;
    const struct model_views *v;
    const export_family *fam;
    const export_runtime *rt;
    const char *prefix;
} export_job;

/* Writes `static const <type> name[n] = {...};` with values that read back exactly. */
void export_c_floats(FILE *out, const char *name, const float *v, size_t n);
/* The same with _Alignas(align) in front when align > 0 (the runtime's vector loads). */
void export_c_floats_aligned(FILE *out, const char *name, const float *v, size_t n, int align);
/* The same for M (rows, cols) written transposed, as `name` (cols, rows); align as above. */
int export_c_floats_transposed(FILE *out, const char *name, const float *M, int rows, int cols, int align);
void export_c_doubles(FILE *out, const char *name, const double *v, size_t n);
void export_c_ints(FILE *out, const char *type, const char *name, const int *v, size_t n);
/* s as a C string literal, non-printable bytes as octal escapes. */
void export_c_string(FILE *out, const char *s);

/* A selection model exported with the vendor guard (model.select_guard, select_guard_top) */
int export_guarded(const model *m);
/* `#define <guard>_GUARD_MARGIN` and `<guard>_GUARD_TOP`, the vendor guard m was exported with. */
void export_c_guard_macros(FILE *out, const model *m, const char *guard);
/* The vendor guard's rule closing a runtime header's comment, then its macros: with a top, top_before
 * <guard>_GUARD_TOP top_after; then "the model's best <best> replaces the vendor's first pick only where its score
 * beats that pick's by <guard>_GUARD_MARGIN; otherwise <otherwise>". */
void export_c_guard_doc(FILE *h, const model *m, const char *guard, const char *top_before, const char *top_after,
                        const char *best, const char *otherwise);
/* A name table of the runtime and its two accessors: `#define COUNT n`, `static const char *const
 * table[COUNT]`, `int <prefix>_<count_fn>(void)` and `const char *<prefix>_<name_fn>(int i)` (0 out of range). */
void export_c_vocabulary(FILE *c, const char *prefix, const char *count, const char *table, const char *count_fn,
                         const char *name_fn, const char *i, char *const *names, int n);

/* The text of a file the build embeds (data/portable.h, nn/tanh_fast.h, the files in export/runtime/), by its path
 * in the source tree; aborts on a path that is not embedded (a programming error). */
const char *export_source(const char *path);
/* Copies one section of an embedded file: the lines after its marker, a line holding only a comment
 * "@section NAME", up to the next marker or the end. The text before the first marker (the file's own
 * comment and the includes that let it compile alone) is never copied. Aborts on an unknown section. */
void export_section(FILE *out, const char *path, const char *name);

/* 0 when every v[0..n) is finite, else an error naming `name` (the model file), the tensor and the index. */
int export_check_finite(const char *name, const char *tensor, const float *v, size_t n);
int export_check_finite_double(const char *name, const char *tensor, const double *v, size_t n);
/* The same over every view of a parameter block. */
struct nn_params;
int export_check_params(const char *name, const struct nn_params *p);

/* Each family's part of the runtime, from the model's views (models/view.h): static weights and
 * `static void hm_model_scores(const data_problem *p, const float *x, float *scores)` (select) or
 * `static void hm_model_tune(const data_problem *p, const float *x, int32_t *values)` (tune).
 * The check functions refuse a model with a non-finite weight before anything is written. */
int export_gbdt_check(const model *m, const struct model_views *v, const char *name);
int export_gbdt_write(const model *m, const struct model_views *v, FILE *out);
/* One booster's trees as arrays and `static void hm_b<idx>_raw(const float *x, double *out)`, its raw scores. */
struct gbdt_booster;
int export_gbdt_booster(FILE *out, const struct gbdt_booster *b, int idx);
/* 1 when booster b can be written as flat records (export/runtime/gbdt.h, flat): one class, numeric splits of
 * missing type None or NaN on features below 32768, trees of at most 65536 leaves. */
int export_gbdt_flat_fits(const struct gbdt_booster *b);
/* b's trees as flat records (it must fit): `HM_FLAT_TREES`, `hm_flat_base`, `hm_flat_used` (a flag per feature:
 * some split reads it), `hm_flat_root` (HM_FLAT_TREES), `hm_flat` and `hm_flat_value` (each record's leaf value, 0
 * for splits); the flat section must come before. */
int export_gbdt_flat(FILE *out, const struct gbdt_booster *b);
/* A select model of a benchmark table (data_codec_table_spec of its codec): the check (gbdt rank and reformer
 * towers only) and its header and source (export/table.c), in place of the problem-key runtime. */
int export_table_check(const export_job *j, const char *name);
int export_table_write_header(FILE *h, const export_job *j);
int export_table_write_source(FILE *c, const export_job *j);
/* A Reformer towers model of a benchmark table (export/reformer_towers.c): the check (batch norm, finite weights)
 * and its weights, known configurations' v and scoring section, written after hm_configs. */
int export_towers_check(const model *m, const struct model_views *v, const char *name);
int export_towers_write(FILE *c, const model *m, const struct model_views *v);
int export_reformer_check(const model *m, const struct model_views *v, const char *name);
int export_reformer_write(const model *m, const struct model_views *v, FILE *out);
int export_transformer_check(const model *m, const struct model_views *v, const char *name);
int export_transformer_write(const model *m, const struct model_views *v, FILE *out);
int export_seq2seq_check(const model *m, const struct model_views *v, const char *name);
int export_seq2seq_write(const model *m, const struct model_views *v, FILE *out);
/* A seq2seq tune model of a benchmark table (export/seq2seq.c): the check (space measured, finite weights) and its
 * part of the runtime, `static void hm_decode(const hm_tune_problem *p, float *keys, float *kproj, int32_t *values)`
 * over the problem's values and candidates (export/runtime/table_tune.h), leaving the problem's encoding for
 * `static float hm_seq_score(const float *keys, const float *kproj, const int32_t *v)`, after the position vocabularies
 * hm_vocab_<j>. */
int export_seq2seq_table_check(const model *m, const struct model_views *v, const char *name);
int export_seq2seq_table_write(const model *m, const struct model_views *v, FILE *out);
/* A tune model of a benchmark table (seq2seq only): the check and its header and source (export/table.c). */
int export_table_tune_check(const export_job *j, const char *name);
int export_table_tune_write_header(FILE *h, const export_job *j);
int export_table_tune_write_source(FILE *c, const export_job *j);

#endif
