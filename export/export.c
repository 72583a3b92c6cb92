/* A trained model as a standalone C runtime: the header with the API, and the source around the family's
 * part. The runtime is chosen by the model's source and task (export_runtime): a convolution model's takes a
 * problem key or its fields (data/portable.h, the vocabularies, the task's API functions of
 * export/runtime/api.h), a benchmark table's models' the problem's and candidates' values (export/table.c: a
 * select model's scores, a tune model's configuration). Each family's writer reads the model through its views (models/view.h), created once here. */
#include "export/export.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "models/view.h"

/* Each family's writer; a family not listed cannot be exported to C. */
struct export_family {
    const model_family *family;
    int (*check)(const model *m, const model_views *v, const char *name);
    int (*write)(const model *m, const model_views *v, FILE *out);
};

typedef int (*writer_fn)(FILE *f, const export_job *j);

/* The problem-key runtime's part for one task (export/runtime/api.h): the header's declarations, the arrays the
 * family's part reads (NULL: none), and the vocabulary and API functions after the family's part; guard: the
 * header's include guard, which names its macros. */
typedef struct key_api {
    void (*declare)(FILE *h, const model *m, const char *prefix, const char *guard);
    void (*arrays)(FILE *c, const model *m);
    void (*define)(FILE *c, const model *m, const char *prefix);
} key_api;

/* A runtime an export writes: for a model of one source (data_codec_name of its codec) and one task, the check
 * made before anything is written, the writers of the header and the source; api: the task's part of the problem-key runtime. */
struct export_runtime {
    const char *source;
    model_task task;
    int (*check)(const export_job *j, const char *name);
    writer_fn write_h, write_c;
    const key_api *api;
};

static const export_family *export_family_of(const model *m)
{
    static const export_family families[] = {
        {&model_family_gbdt, export_gbdt_check, export_gbdt_write},
        {&model_family_reformer, export_reformer_check, export_reformer_write},
        {&model_family_transformer, export_transformer_check, export_transformer_write},
        {&model_family_seq2seq, export_seq2seq_check, export_seq2seq_write},
    };
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (families[i].family == m->family) return &families[i];
    return NULL;
}

/* " (0 A, 1 B, ...)" from a name table, for the header's comment */
static void name_list(FILE *h, int n, const char *(*name)(int))
{
    for (int i = 0; i < n; i++) fprintf(h, "%s%d %s", i ? ", " : " (", i, name(i));
    fputc(')', h);
}

/* The problem-key runtime's API sections */
#define KEY_API "export/runtime/api.h"

static const char *direction_name(int i)
{
    return data_direction_names[i];
}

static int key_header(FILE *h, const export_job *j)
{
    const model *m = j->m;
    const char *prefix = j->prefix;
    char guard[128];
    size_t i = 0;
    for (; prefix[i] && i < sizeof guard - 3; i++) guard[i] = (char)toupper((unsigned char)prefix[i]);
    memcpy(guard + i, "_H", 3);
    fprintf(h, "/* %s.h: a %s model exported by heurist (task %s). Needs only libc and libm.\n", prefix,
            m->family->name, model_task_name(m->task));
    fprintf(h, " * Any C11 compiler builds it (cc -O2 -std=c11 -c %s.c); recommended: cc -O3 -march=native -c %s.c\n"
               " * for the CPU that runs it, whose vector width and FMA the model's loops then use.\n",
            prefix, prefix);
    fprintf(h, " *\n * A problem is given either as a MIOpen find-db problem key, e.g.\n"
               " *   \"64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F\"\n"
               " * (an FP32 key may end in a precision class, \"_strict\" or \"_conversion\"; without one it is the TF32\n"
               " * class, and the pick is never a kernel of a math type the class refuses)\n"
               " * or as its numeric fields, in this order (%d values; the TF32 class):\n *  ",
            DATA_FIELD_COUNT);
    for (int f = 0; f < DATA_FIELD_COUNT; f++) fprintf(h, " %s%s", data_field_names[f], f + 1 < DATA_FIELD_COUNT ? "," : "");
    fprintf(h, "\n * with layout");
    name_list(h, DATA_LAYOUT_COUNT, data_portable_layout_name);
    fprintf(h, ",\n * dtype");
    name_list(h, DATA_DTYPE_COUNT, data_portable_dtype_name);
    fprintf(h, "\n * and direction");
    name_list(h, DATA_DIR_COUNT, direction_name);
    fprintf(h, ". For B and W problems \"in\" is dy, as in MIOpen's keys.\n"
               " * Every function is thread-safe and allocates nothing.\n */\n");
    fprintf(h, "#ifndef %s\n#define %s\n\n#define %s_N_FIELDS %d\n\n", guard, guard, guard, DATA_FIELD_COUNT);
    j->rt->api->declare(h, m, prefix, guard);
    fprintf(h, "#endif\n");
    return HR_OK;
}

static void select_declare(FILE *h, const model *m, const char *prefix, const char *guard)
{
    fprintf(h, "/* Number of kernels the model ranks, and their names. */\nint %s_n_kernels(void);\n"
               "const char *%s_kernel_name(int k);\n\n", prefix, prefix);
    fprintf(h, "/* The chosen kernel (index for %s_kernel_name) for a problem key, or -1 when the key does\n"
               " * not parse. scores (n_kernels), when not NULL, receives every kernel's score (higher is\n"
               " * better). */\nint %s_select_key(const char *key, float *scores);\n\n", prefix, prefix);
    fprintf(h, "/* The same from the numeric fields and categorical codes. */\n"
               "int %s_select_fields(const long long fields[%d], int layout, int dtype, int direction, float *scores);\n\n",
            prefix, DATA_FIELD_COUNT);
    if (export_guarded(m)) {
        fprintf(h, "/* The vendor guard this runtime was exported with, given the vendor heuristic's ranked list for the\n"
                   " * problem (vendor[0] its first pick, as indices for %s_kernel_name; -1 for a kernel the model does\n"
                   " * not know): ", prefix);
        export_c_guard_doc(h, m, guard, "the choice is one of the vendor's first ", " candidates, and ", "kernel",
                           "the vendor's pick is the choice and ranks first in scores. Returns the chosen kernel,\n"
                           " * or -1 when the key does not parse.");
        fprintf(h, "int %s_select_key_vendor(const char *key, const int *vendor, int n_vendor, float *scores);\n\n",
                prefix);
    }
}

static void tune_declare(FILE *h, const model *m, const char *prefix, const char *guard)
{
    (void)guard;
    fprintf(h, "/* Length of the parameter sequence (%s) and the parameter names. */\nint %s_length(void);\n"
               "const char *%s_param_name(int j);\n\n", m->solver, prefix, prefix);
    fprintf(h, "/* Writes the predicted parameter values (length) for a problem key; returns 0, -1 when the\n"
               " * key does not parse. %s */\nint %s_tune_key(const char *key, int values[]);\n"
               "int %s_tune_fields(const long long fields[%d], int layout, int dtype, int direction, int values[]);\n\n",
            m->constraint ? "The sequence satisfies the solver's validity rules." : "", prefix, prefix,
            DATA_FIELD_COUNT);
}

/* hm_refused[class][kernel]: the kernels each precision class refuses an FP32 problem, by their names. */
static void write_refused(FILE *c, const model *m)
{
    fprintf(c, "/* 1 where precision class c (");
    for (int p = 0; p < DATA_PRECISION_COUNT; p++) fprintf(c, "%s%d %s", p ? ", " : "", p, data_portable_precision_name(p));
    fprintf(c, ") refuses kernel k of an FP32 problem */\nstatic const unsigned char hm_refused[%d][HM_N_KERNELS] = {\n",
            DATA_PRECISION_COUNT);
    for (int p = 0; p < DATA_PRECISION_COUNT; p++) {
        fprintf(c, "    {");
        for (int k = 0; k < m->n_kernels; k++)
            fprintf(c, "%s%d", k ? ", " : "",
                    !data_portable_precision_allows(p, DATA_DTYPE_FP32, m->kernels[k], strlen(m->kernels[k])));
        fprintf(c, "},\n");
    }
    fprintf(c, "};\n\n");
}

static int key_source(FILE *c, const export_job *j)
{
    const model *m = j->m;
    const char *prefix = j->prefix;
    fprintf(c, "/* %s.c: a %s model exported by heurist; see %s.h. Generated code: do not edit. */\n", prefix,
            m->family->name, prefix);
    fprintf(c, "#include \"%s.h\"\n\n#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n", prefix);
    fprintf(c, "/* ---- data/portable.h, verbatim ---- */\n%s\n/* ---- model ---- */\n", export_source("data/portable.h"));
    if (j->rt->api->arrays) j->rt->api->arrays(c, m);
    int rc = j->fam->write(m, j->v, c);
    if (rc) return rc;
    fprintf(c, "\n/* ---- API ---- */\n");
    export_section(c, KEY_API, "problem");
    j->rt->api->define(c, m, prefix);
    return HR_OK;
}

static void select_define(FILE *c, const model *m, const char *prefix)
{
    export_c_vocabulary(c, prefix, "HM_N_KERNELS", "hm_kernels", "n_kernels", "kernel_name", "k", m->kernels, m->n_kernels);
    write_refused(c, m);
    export_section(c, KEY_API, "select");
    fprintf(c, "int %s_select_key(const char *key, float *scores)\n{\n    data_problem p;\n"
               "    if (hm_key_parse(key, &p)) return -1;\n    return hm_select(&p, scores);\n}\n\n", prefix);
    fprintf(c, "int %s_select_fields(const long long fields[%d], int layout, int dtype, int direction, float *scores)\n{\n"
               "    data_problem p;\n    hm_problem(&p, fields, layout, dtype, direction);\n"
               "    return hm_select(&p, scores);\n}\n", prefix, DATA_FIELD_COUNT);
    if (export_guarded(m)) {
        fprintf(c, "\n");
        export_c_guard_macros(c, m, "HM");
        export_section(c, KEY_API, "guard");
        fprintf(c, "int %s_select_key_vendor(const char *key, const int *vendor, int n_vendor, float *scores)\n{\n"
                   "    data_problem p;\n    if (hm_key_parse(key, &p)) return -1;\n"
                   "    return hm_select_vendor(&p, vendor, n_vendor, scores);\n}\n", prefix);
    }
}

/* hm_vocab_<p>: the values of parameter p, which the family's hm_model_tune indexes */
static void tune_arrays(FILE *c, const model *m)
{
    for (int p = 0; p < m->length; p++) {
        char name[32];
        snprintf(name, sizeof name, "hm_vocab_%d", p);
        export_c_ints(c, "int32_t", name, (const int *)m->vocab[p], (size_t)m->vocab_size[p]);
    }
}

static void tune_define(FILE *c, const model *m, const char *prefix)
{
    export_c_vocabulary(c, prefix, "HM_LENGTH", "hm_params", "length", "param_name", "j", m->param_names, m->length);
    export_section(c, KEY_API, "tune");
    fprintf(c, "\nint %s_tune_key(const char *key, int values[])\n{\n    data_problem p;\n"
               "    if (hm_key_parse(key, &p)) return -1;\n    hm_tune(&p, values);\n    return 0;\n}\n\n", prefix);
    fprintf(c, "int %s_tune_fields(const long long fields[%d], int layout, int dtype, int direction, int values[])\n{\n"
               "    data_problem p;\n    hm_problem(&p, fields, layout, dtype, direction);\n"
               "    hm_tune(&p, values);\n    return 0;\n}\n", prefix, DATA_FIELD_COUNT);
}

static int key_check(const export_job *j, const char *name)
{
    return j->fam->check(j->m, j->v, name);
}

static const key_api key_select = {select_declare, NULL, select_define};
static const key_api key_tune = {tune_declare, tune_arrays, tune_define};

/* Adding a source or a task to the exported runtimes adds a row. */
static const export_runtime runtimes[] = {
    {"convolution", MODEL_TASK_SELECT, key_check, key_header, key_source, &key_select},
    {"convolution", MODEL_TASK_TUNE, key_check, key_header, key_source, &key_tune},
    {"benchmark table", MODEL_TASK_SELECT, export_table_check, export_table_write_header, export_table_write_source,
     NULL},
    {"benchmark table", MODEL_TASK_TUNE, export_table_tune_check, export_table_tune_write_header,
     export_table_tune_write_source, NULL},
};

static const export_runtime *runtime_of(const model *m, const char *name)
{
    const char *source = data_codec_name(m->codec);
    char have[256] = "";
    for (size_t i = 0; i < sizeof runtimes / sizeof *runtimes; i++) {
        if (runtimes[i].task == m->task && !strcmp(runtimes[i].source, source)) return &runtimes[i];
        size_t at = strlen(have);
        snprintf(have + at, sizeof have - at, "%s%s %s", i ? ", " : "", runtimes[i].source,
                 model_task_name(runtimes[i].task));
    }
    hr_error(HR_EINVAL, "%s: a %s %s model of a %s cannot be exported to C: the exported runtimes are for %s models",
             name, m->family->name, model_task_name(m->task), source, have);
    return NULL;
}

static int write_file(const char *dir, const char *ext, writer_fn fn, const export_job *j)
{
    char path[1024];
    int rc = hr_path_join(path, sizeof path - strlen(ext), dir, j->prefix);
    if (rc) return rc;
    strcat(path, ext);
    char *tmp = hr_file_tmp_path(path);
    if (!tmp) return HR_ENOMEM;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return hr_error(HR_EIO, "%s: cannot create", path);
    }
    rc = fn(f, j);
    if (ferror(f)) rc = rc ? rc : hr_error(HR_EIO, "%s: write failed", path);
    if (fclose(f) != 0 && !rc) rc = hr_error(HR_EIO, "%s: write failed", path);
    if (rc) remove(tmp);
    else rc = hr_file_commit(tmp, path);
    free(tmp);
    return rc;
}

int export_c_write(const model *m, const char *name, const char *dir, const char *prefix)
{
    const export_family *fam = export_family_of(m);
    if (!fam) return hr_error(HR_EINVAL, "%s: the %s family cannot be exported to C", name, m->family->name);
    if (!prefix[0] || !(isalpha((unsigned char)prefix[0]) || prefix[0] == '_'))
        return hr_error(HR_EINVAL, "export prefix '%s' is not a C identifier", prefix);
    for (const char *s = prefix; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return hr_error(HR_EINVAL, "export prefix '%s' is not a C identifier", prefix);
    const export_runtime *rt = runtime_of(m, name);
    if (!rt) return HR_EINVAL;
    model_views *v = NULL;
    int rc = model_views_create(m, &v);
    const export_job j = {m, v, fam, rt, prefix};
    if (!rc) rc = rt->check(&j, name);
    if (!rc) rc = hr_mkdir_p(dir);
    if (!rc) rc = write_file(dir, ".h", rt->write_h, &j);
    if (!rc) rc = write_file(dir, ".c", rt->write_c, &j);
    model_views_free(v);
    return rc;
}
