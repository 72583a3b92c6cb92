/* The runtimes of a benchmark table's models. A gbdt rank model or a Reformer towers model: the problem's values and
 * any candidate configurations in, their scores and ranking out (export/runtime/table.h), with the feature formulas
 * of data/table_features.h copied verbatim, the schema as constant arrays and the model's known configurations;
 * exported with the vendor guard (model.select_guard, select_guard_top), also the ranking under the guard given
 * each candidate's place in the vendor's list (data/portable.h's data_portable_guard, copied verbatim). A seq2seq
 * tune model: the problem's values and its candidates in, the configuration it writes out
 * (export/runtime/table_tune.h, export/seq2seq.c). Both name their columns and categories alike. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "data/table_features.h"
#include "export/export_internal.h"
#include "models/view.h"

/* Which runtime a table model's views call for: a towers model (mode "towers") or a gbdt rank model (objective
 * "rank"), else neither. */
enum { TABLE_NONE, TABLE_TOWERS, TABLE_GBDT };

static int table_kind(const model_views *v)
{
    const model_view *mode = model_view_find(v, "mode"), *objective = model_view_find(v, "objective");
    if (mode && mode->kind == MODEL_VIEW_TEXT && !strcmp(mode->data, "towers")) return TABLE_TOWERS;
    if (objective && objective->kind == MODEL_VIEW_TEXT && !strcmp(objective->data, "rank")) return TABLE_GBDT;
    return TABLE_NONE;
}

int export_table_check(const export_job *j, const char *name)
{
    const model *m = j->m;
    const model_views *v = j->v;
    switch (table_kind(v)) {
    case TABLE_TOWERS: return export_towers_check(m, v, name);
    case TABLE_GBDT: return export_gbdt_check(m, v, name);
    }
    return hr_error(HR_EINVAL, "%s: a %s model of a benchmark table cannot be exported to C: only gbdt with "
                    "objective rank and reformer with mode towers are", name, m->family->name);
}

/* The problem then hardware columns (j < n_problem + n_hardware) or, past them, the kernel columns. */
static const data_table_column *column_at(const data_table_spec *s, int j)
{
    int np = s->n_problem + s->n_hardware;
    return j < np ? &s->problem[j] : &s->kernel[j - np];
}

static void column_list(FILE *h, const data_table_spec *s, int from, int to)
{
    for (int j = from; j < to; j++) {
        const data_table_column *c = column_at(s, j);
        fprintf(h, " *   %d %s", j - from, c->name);
        if (c->categorical) {
            fprintf(h, " (categorical:");
            for (int v = 0; v < c->n_vocab; v++) fprintf(h, " %d %s%s", v, c->vocab[v], v + 1 < c->n_vocab ? "," : "");
            fprintf(h, ")");
        }
        fprintf(h, "\n");
    }
}

/* Every column's name and vocabulary, for <prefix>_category. */
static void write_columns(FILE *c, const data_table_spec *s, const char *prefix)
{
    int np = s->n_problem + s->n_hardware, n = np + s->n_kernel;
    for (int j = 0; j < n; j++) {
        const data_table_column *col = column_at(s, j);
        if (!col->categorical) continue;
        fprintf(c, "static const char *const hm_column_vocab_%d[%d] = {", j, col->n_vocab ? col->n_vocab : 1);
        for (int v = 0; v < col->n_vocab; v++) {
            fprintf(c, "%s", v ? ", " : "");
            export_c_string(c, col->vocab[v]);
        }
        fprintf(c, "%s};\n", col->n_vocab ? "" : "0");
    }
    fprintf(c, "static const struct {\n    const char *name;\n    int n_vocab;\n    const char *const *vocab;\n} "
               "hm_columns[%d] = {\n", n);
    for (int j = 0; j < n; j++) {
        const data_table_column *col = column_at(s, j);
        fprintf(c, "    {");
        export_c_string(c, col->name);
        if (col->categorical) fprintf(c, ", %d, hm_column_vocab_%d},\n", col->n_vocab, j);
        else fprintf(c, ", 0, 0},\n");
    }
    fprintf(c, "};\n\n");
    fprintf(c, "const char *%s_problem_column(int j)\n{\n    return j >= 0 && j < %d ? hm_columns[j].name : 0;\n}\n\n",
            prefix, np);
    fprintf(c, "const char *%s_kernel_column(int j)\n{\n    return j >= 0 && j < %d ? hm_columns[%d + j].name : 0;\n}\n\n",
            prefix, s->n_kernel, np);
    fprintf(c, "double %s_category(const char *column, const char *value)\n{\n"
               "    for (int j = 0; j < %d; j++) {\n"
               "        if (strcmp(hm_columns[j].name, column)) continue;\n"
               "        for (int v = 0; v < hm_columns[j].n_vocab; v++)\n"
               "            if (!strcmp(hm_columns[j].vocab[v], value)) return v;\n"
               "    }\n    return -1;\n}\n\n",
            prefix, n);
    fprintf(c, "const char *%s_category_name(const char *column, int value)\n{\n"
               "    for (int j = 0; j < %d; j++)\n"
               "        if (!strcmp(hm_columns[j].name, column))\n"
               "            return value >= 0 && value < hm_columns[j].n_vocab ? hm_columns[j].vocab[value] : 0;\n"
               "    return 0;\n}\n\n",
            prefix, n);
}

/* The header's column macros and accessors, shared by both runtimes; guard: the prefix in capitals. */
static void column_decls(FILE *h, const data_table_spec *s, const char *prefix, const char *guard)
{
    fprintf(h, "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n#define %s_N_PROBLEM %d\n#define %s_N_KERNEL %d\n\n",
            guard, guard, guard, s->n_problem + s->n_hardware, guard, s->n_kernel);
    fprintf(h, "/* Column names: problem columns (j < %s_N_PROBLEM) and kernel columns (j < %s_N_KERNEL). */\n"
               "const char *%s_problem_column(int j);\nconst char *%s_kernel_column(int j);\n\n", guard, guard, prefix,
            prefix);
    fprintf(h, "/* The value of category `value` of the problem or kernel column named `column`, -1 when either is\n"
               " * unknown; and the category of a value, NULL when either is unknown. */\n"
               "double %s_category(const char *column, const char *value);\n"
               "const char *%s_category_name(const char *column, int value);\n\n", prefix, prefix);
}

/* The prefix in capitals, the macros' and the include guard's stem */
static void guard_of(const char *prefix, char *guard, size_t size)
{
    size_t i = 0;
    for (; prefix[i] && i + 3 < size; i++) guard[i] = (char)toupper((unsigned char)prefix[i]);
    guard[i] = 0;
}

/* What a gbdt rank model's scores are, for the header */
static const char *rank_doc(const model_views *v)
{
    static const char *const targets[][2] = {{"relative", "-log(cost / the problem's best cost)"},
                                             {"absolute", "-log(cost)"},
                                             {"log1p", "log1p(1 / cost)"}};
    if (!strcmp(model_view_text(v, "rank_loss"), "lambdarank")) return "a LambdaRank score (no target)";
    const char *target = model_view_text(v, "rank_target");
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
        if (!strcmp(target, targets[i][0])) return targets[i][1];
    HR_ASSERT(0);
    return NULL;
}

/* The opening of a table runtime's header comment: the model (`what`), the columns of a problem's values and of a
 * configuration's (given as `config`) in order, and how a category is given. */
static void header_begin(FILE *h, const data_table_spec *s, const char *prefix, const char *what, const char *config)
{
    int np = s->n_problem + s->n_hardware;
    fprintf(h, "/* %s.h: a %s model of a benchmark table exported by heurist. Needs only libc and libm.\n"
               " * Any C11 compiler builds it (cc -O2 -std=c11 -c %s.c).\n *\n", prefix, what, prefix);
    fprintf(h, " * A problem is given as its values pv, in this column order (%d values):\n", np);
    column_list(h, s, 0, np);
    fprintf(h, " * and a configuration as its %s, in this column order (%d values):\n", config, s->n_kernel);
    column_list(h, s, np, np + s->n_kernel);
    fprintf(h, " * A categorical value is the index of its string in the column's vocabulary above (%s_category).\n",
            prefix);
}

int export_table_write_header(FILE *h, const export_job *j)
{
    const model *m = j->m;
    const model_views *v = j->v;
    const char *prefix = j->prefix;
    const data_table_spec *s = data_codec_table_spec(m->codec);
    const int towers = table_kind(v) == TABLE_TOWERS;
    header_begin(h, s, prefix, towers ? "reformer towers" : "gbdt rank", "values kv");
    if (towers)
        fprintf(h, " * The model scores a (problem, configuration) pair as u(problem) . v(configuration) + w . q(pair)\n"
                   " * (higher: more likely the fastest), v of the configurations it was trained on precomputed, and\n"
                   " * ranks the candidates by it.\n"
                   " * Every function is thread-safe and allocates nothing.\n */\n");
    else
        fprintf(h, " * The model predicts %s per (problem, configuration)\n"
                   " * pair, cost being %s (higher is better), and ranks the candidates by it.\n"
                   " * Every function is thread-safe and allocates nothing.\n */\n",
                rank_doc(v), s->higher_better ? "1 / measure" : "the measure");
    char guard[128];
    guard_of(prefix, guard, sizeof guard);
    column_decls(h, s, prefix, guard);
    fprintf(h, "/* Scores (n) of n candidate configurations kv (n, %s_N_KERNEL) for the problem pv (%s_N_PROBLEM),\n"
               " * and ranking (n), when not NULL, their indices best first (ties to the lower index).\n"
               " * Returns 0, -1 when n < 0. */\n"
               "int %s_rank(const double *pv, const double *kv, int n, float *scores, int *ranking);\n\n",
            guard, guard, prefix);
    fprintf(h, "/* The configurations the model was trained on: how many, each one's name and values (%s_N_KERNEL),\n"
               " * and %s_rank over all of them (scores and ranking sized %s_n_configs()). */\n"
               "int %s_n_configs(void);\nconst char *%s_config_name(int k);\nconst double *%s_config_values(int k);\n"
               "int %s_rank_known(const double *pv, float *scores, int *ranking);\n\n",
            guard, prefix, prefix, prefix, prefix, prefix, prefix);
    if (export_guarded(m)) {
        fprintf(h, "/* The vendor guard this runtime was exported with (heurist export --guard, --guard-top), given\n"
                   " * vendor_rank (n), each candidate's place in the vendor heuristic's list (0 its first pick, -1 not\n"
                   " * listed): %s_rank's scores, then ",
                prefix);
        export_c_guard_doc(h, m, guard, "every candidate outside the vendor's first ", " scores -INFINITY, and ",
                           "candidate", "the vendor's pick scores just above it. ranking[0] is the choice. Returns 0, "
                           "-1 when n < 0.");
        fprintf(h, "int %s_rank_vendor(const double *pv, const double *kv, int n, const int16_t *vendor_rank, "
                   "float *scores,\n    int *ranking);\n\n",
                prefix);
    }
    fprintf(h, "#endif\n");
    return HR_OK;
}

/* hm_shape: the schema as data/table_features.h's data_table_shape, and the sizes the rank section reads. */
static int write_shape(FILE *c, const model *m, int features)
{
    const data_table_spec *s = data_codec_table_spec(m->codec);
    int np = s->n_problem + s->n_hardware;
    int *pvoc = malloc((size_t)(np ? np : 1) * sizeof *pvoc);
    int *kvoc = malloc((size_t)(s->n_kernel ? s->n_kernel : 1) * sizeof *kvoc);
    if (!pvoc || !kvoc) {
        free(pvoc);
        free(kvoc);
        return hr_error(HR_ENOMEM, "out of memory exporting the table's shape");
    }
    for (int j = 0; j < np; j++) pvoc[j] = s->problem[j].categorical ? s->problem[j].n_vocab : 0;
    for (int k = 0; k < s->n_kernel; k++) kvoc[k] = s->kernel[k].categorical ? s->kernel[k].n_vocab : 0;
    export_c_ints(c, "int", "hm_problem_vocab", pvoc, (size_t)np);
    export_c_ints(c, "int", "hm_kernel_vocab", kvoc, (size_t)s->n_kernel);
    export_c_ints(c, "int", "hm_tile_of", s->tile_of, (size_t)s->n_kernel);
    fprintf(c, "static const data_table_shape hm_shape = {%d, %d, %d, hm_problem_vocab, hm_kernel_vocab, hm_tile_of, "
               "%d, %d, %d, %.17g};\n", s->n_problem, s->n_hardware, s->n_kernel, s->reduction, s->split, s->cus_column,
            s->cus);
    fprintf(c, "#define HM_NP %d\n#define HM_NK %d\n#define HM_NX %d\n#define HM_NF %d\n\n", np, s->n_kernel,
            m->n_features, features);
    free(pvoc);
    free(kvoc);
    return HR_OK;
}

/* The whole numbers whose log2(1 + v) a table runtime reads from a table: kernel columns' values and cuBLASLt's
 * ranks (1024 for a configuration outside its list) */
#define LOG2P1_MAX 1024

int export_table_write_source(FILE *c, const export_job *j)
{
    const model *m = j->m;
    const model_views *v = j->v;
    const char *prefix = j->prefix;
    const int towers = table_kind(v) == TABLE_TOWERS;
    fprintf(c, "/* %s.c: a %s model of a benchmark table exported by heurist; see %s.h. Generated code: do not "
               "edit. */\n#include \"%s.h\"\n\n#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n"
               "#include <string.h>\n\n",
            prefix, towers ? "reformer towers" : "gbdt rank", prefix, prefix);
    /* log2(1 + |v|) of the whole numbers up to HM_LOG2P1_MAX (tile sizes, stages, ranks...) from a table: the
     * log2 calls were most of a candidate's features */
    fprintf(c, "#define DATA_TABLE_LOG2P1 hm_log2p1\nstatic float hm_log2p1(double v);\n\n");
    fprintf(c, "/* ---- data/table_features.h, verbatim ---- */\n%s\n/* ---- model ---- */\n",
            export_source("data/table_features.h"));
    float log2p1[LOG2P1_MAX + 1];
    for (int i = 0; i <= LOG2P1_MAX; i++) log2p1[i] = data_table_shape_log2p1(i);
    fprintf(c, "#define HM_LOG2P1_MAX %d\n", LOG2P1_MAX);
    export_c_floats(c, "hm_log2p1_table", log2p1, LOG2P1_MAX + 1);
    fprintf(c, "static float hm_log2p1(double v)\n{\n"
               "    return v >= 0 && v <= HM_LOG2P1_MAX && v == (int)v ? hm_log2p1_table[(int)v] : data_table_shape_log2p1(v);\n"
               "}\n\n");
    /* HM_NF: a pair row's features, the problem's then the pair's (data/table.h) */
    int rc = write_shape(c, m, m->n_features + data_codec_pair_feature_count(m->codec));
    if (rc) return rc;
    export_c_doubles(c, "hm_configs", m->kernel_values, (size_t)m->n_kernels * (size_t)data_codec_config_width(m->codec));
    if (towers) {
        rc = export_towers_write(c, m, v);
    } else if (export_gbdt_flat_fits(model_view_booster(v, "booster0"))) {
        export_section(c, "export/runtime/gbdt.h", "flat");
        rc = export_gbdt_flat(c, model_view_booster(v, "booster0"));
        if (!rc) export_section(c, "export/runtime/table.h", "rank_flat");
    } else {
        /* trees the records cannot hold (categorical or missing-type-Zero splits, over 65536 leaves, a feature past
         * 32767): the generic traversal */
        export_section(c, "export/runtime/gbdt.h", "traversal");
        rc = export_gbdt_booster(c, model_view_booster(v, "booster0"), 0);
        if (!rc) export_section(c, "export/runtime/table.h", "rank");
    }
    if (rc) return rc;
    export_section(c, "export/runtime/table.h", "sort");
    fprintf(c, "\n/* ---- API ---- */\n");
    write_columns(c, data_codec_table_spec(m->codec), prefix);
    export_c_vocabulary(c, prefix, "HM_N_CONFIGS", "hm_config_names", "n_configs", "config_name", "k", m->kernels,
                        m->n_kernels);
    fprintf(c, "\nconst double *%s_config_values(int k)\n{\n    return k >= 0 && k < HM_N_CONFIGS ? hm_configs + "
               "(size_t)k * HM_NK : 0;\n}\n\n", prefix);
    fprintf(c, "int %s_rank(const double *pv, const double *kv, int n, float *scores, int *ranking)\n{\n"
               "    if (n < 0) return -1;\n    hm_table_scores(pv, kv, n, scores);\n"
               "    if (ranking) hm_rank_sort(scores, ranking, n);\n    return 0;\n}\n\n", prefix);
    fprintf(c, "int %s_rank_known(const double *pv, float *scores, int *ranking)\n{\n"
               "    return %s_rank(pv, hm_configs, HM_N_CONFIGS, scores, ranking);\n}\n", prefix, prefix);
    if (export_guarded(m)) {
        /* the guard is data/portable.h's, the rule of heurist's evaluation */
        fprintf(c, "\n");
        export_c_guard_macros(c, m, "HM");
        export_section(c, "data/portable.h", "guard");
        export_section(c, "export/runtime/table.h", "vendor");
        fprintf(c, "\nint %s_rank_vendor(const double *pv, const double *kv, int n, const int16_t *vendor_rank, "
                   "float *scores,\n    int *ranking)\n{\n"
                   "    if (n < 0) return -1;\n    hm_rank_vendor_scores(pv, kv, n, vendor_rank, scores, ranking);\n"
                   "    return 0;\n}\n", prefix);
    }
    return HR_OK;
}

int export_table_tune_check(const export_job *j, const char *name)
{
    const model *m = j->m;
    const model_views *v = j->v;
    if (m->select_guard_top > 0)
        return hr_error(HR_EINVAL, "%s: --guard-top: a tune runtime's vendor guard takes a margin only (--guard M); to "
                        "keep to the vendor's first candidates, give the runtime those as its candidates", name);
    return export_seq2seq_table_check(m, v, name);
}

int export_table_tune_write_header(FILE *h, const export_job *j)
{
    const model *m = j->m;
    const model_views *v = j->v;
    const char *prefix = j->prefix;
    const data_table_spec *s = data_codec_table_spec(m->codec);
    header_begin(h, s, prefix, "seq2seq tune", "values");
    fprintf(h, " * The model writes a configuration field by field in that order: an encoder over the problem's columns\n"
               " * (a numeric value v as the bin round(%d log2(1 + |v|))), an attention decoder, and a beam search of\n"
               " * width %d that keeps to prefixes of the candidate configurations it is given (those the GPU accepts\n"
               " * for the problem, as cublasLtMatmulAlgoCheck or an autotuner's enumeration finds them).\n"
               " * Every function is thread-safe and allocates nothing.\n */\n",
            (int)model_view_int(v, "bins"), (int)model_view_int(v, "beam"));
    char guard[128];
    guard_of(prefix, guard, sizeof guard);
    column_decls(h, s, prefix, guard);
    fprintf(h, "/* The configuration (values, %s_N_KERNEL) the model writes for the problem pv (%s_N_PROBLEM), decoding\n"
               " * within the n candidate configurations kv (n, %s_N_KERNEL): every prefix it keeps begins one of them.\n"
               " * With n = 0 it decodes unconstrained (the configuration may be one the GPU refuses); where no\n"
               " * candidate is one it can write, it decodes unconstrained too. Returns the index of the candidate equal\n"
               " * to the configuration, -1 when none is, -2 when n < 0 or kv is NULL with n > 0. */\n"
               "int %s_tune(const double *pv, const double *kv, int n, double *values);\n\n",
            guard, guard, guard, prefix);
    fprintf(h, "/* The model's log-probability of the configuration values (%s_N_KERNEL) for the problem pv: the sum over\n"
               " * its fields of the log-softmax of each value given the ones before it, the score the beam ranks by;\n"
               " * -INFINITY when a value is none the model writes at its field. */\n"
               "float %s_score(const double *pv, const double *values);\n\n", guard, prefix);
    if (m->select_guard > 0)
        fprintf(h, "/* The vendor guard this runtime was exported with (heurist export --guard): as %s_tune, given first\n"
                   " * (%s_N_KERNEL), the vendor heuristic's first pick (cuBLASLt's heuristic rank 0), or NULL; the decoded\n"
                   " * configuration stands only where its score (%s_score) beats the first pick's, a finite one, by at\n"
                   " * least %s_GUARD_MARGIN, otherwise values is the first pick (one with a value the model never writes is\n"
                   " * beyond what it can judge). Returns the index of the candidate equal to values, -1 when none is, -2 as\n"
                   " * %s_tune or when first holds a value that is no integer. */\n"
                   "#define %s_GUARD_MARGIN %#.9gf\n"
                   "int %s_tune_vendor(const double *pv, const double *kv, int n, const double *first, double *values);\n\n",
                prefix, guard, prefix, guard, prefix, guard, (double)m->select_guard, prefix);
    fprintf(h, "#endif\n");
    return HR_OK;
}

int export_table_tune_write_source(FILE *c, const export_job *j)
{
    const model *m = j->m;
    const model_views *v = j->v;
    const char *prefix = j->prefix;
    fprintf(c, "/* %s.c: a seq2seq tune model of a benchmark table exported by heurist; see %s.h. Generated code: do "
               "not edit. */\n#include \"%s.h\"\n\n#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n"
               "#include <string.h>\n\n/* ---- model ---- */\n",
            prefix, prefix, prefix);
    for (int p = 0; p < m->length; p++) {
        char name[32];
        snprintf(name, sizeof name, "hm_vocab_%d", p);
        export_c_ints(c, "int32_t", name, (const int *)m->vocab[p], (size_t)m->vocab_size[p]);
    }
    int rc = export_seq2seq_table_write(m, v, c);
    if (rc) return rc;
    fprintf(c, "\n/* ---- API ---- */\n");
    write_columns(c, data_codec_table_spec(m->codec), prefix);
    fprintf(c, "int %s_tune(const double *pv, const double *kv, int n, double *values)\n{\n"
               "    if (n < 0 || (n > 0 && !kv)) return -2;\n"
               "    hm_tune_problem p = {pv, kv, n};\n    int32_t v[HM_LEN];\n"
               "    float keys[HM_TOKENS * HM_KEY], kproj[HM_TOKENS * HM_ATTN];\n    hm_decode(&p, keys, kproj, v);\n"
               "    for (int j = 0; j < HM_LEN; j++) values[j] = v[j];\n    return hm_candidate_of(&p, v);\n}\n\n",
            prefix);
    fprintf(c, "float %s_score(const double *pv, const double *values)\n{\n"
               "    hm_tune_problem p = {pv, 0, 0};\n    int32_t v[HM_LEN];\n"
               "    float keys[HM_TOKENS * HM_KEY], kproj[HM_TOKENS * HM_ATTN];\n"
               "    if (!hm_sequence_of(values, v)) return -INFINITY;\n"
               "    hm_encode(&p, keys);\n    hm_dec_keys(keys, kproj);\n    return hm_seq_score(keys, kproj, v);\n}\n",
            prefix);
    if (m->select_guard > 0)
        /* the rule of model_predict_tune's guard (models/predict.c) */
        fprintf(c, "\n#define HM_GUARD_MARGIN %#.9gf\n\n"
                   "int %s_tune_vendor(const double *pv, const double *kv, int n, const double *first, double *values)\n{\n"
                   "    if (n < 0 || (n > 0 && !kv)) return -2;\n"
                   "    hm_tune_problem p = {pv, kv, n};\n    int32_t v[HM_LEN], f[HM_LEN];\n"
                   "    float keys[HM_TOKENS * HM_KEY], kproj[HM_TOKENS * HM_ATTN];\n"
                   "    if (first && !hm_sequence_of(first, f)) return -2;\n    hm_decode(&p, keys, kproj, v);\n"
                   "    if (first && memcmp(v, f, sizeof v)) {\n"
                   "        float sf = hm_seq_score(keys, kproj, f);\n"
                   "        if (!isfinite(sf) || !(hm_seq_score(keys, kproj, v) - sf >= HM_GUARD_MARGIN)) memcpy(v, f, sizeof v);\n"
                   "    }\n"
                   "    for (int j = 0; j < HM_LEN; j++) values[j] = v[j];\n    return hm_candidate_of(&p, v);\n}\n",
                (double)m->select_guard, prefix);
    return HR_OK;
}
