/* Benchmark-table loader: CSV/TSV rows (libcsv) of (problem, configuration, measure) into a selection dataset.
 *
 * Rows are read in order; each problem (its problem and hardware values) and each configuration gets an id at
 * its first appearance, under its canonical name ("M=128,...,dtype=bf16"), so two spellings of one number
 * ("128", "128.0") are one problem. Measurements of one (problem, configuration) pair are merged by the
 * schema's duplicates policy. Categorical vocabularies are sorted once every row is read, and the
 * configurations sorted by name, as the find-db loader sorts its kernels. */
#include <csv.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"

/* Ids of strings, in order of insertion (core's hr_strmap). */
static int idmap_get(hr_strmap *m, const char *s, int *id, int *inserted)
{
    int rc = hr_strmap_add(m, s, strlen(s), 0, id);
    *inserted = rc == 1;
    return rc < 0 ? rc : HR_OK;
}

/* ---- reading ---- */
typedef struct table_entry {
    int problem, config;
    double value;   /* the measure as read */
    int rank;       /* vendor rank, -1: none */
    long line;
} table_entry;

typedef struct table_reader {
    const char *name;
    data_table_spec *spec;
    int strict;
    int rc;                  /* first error: reading stops */
    long line, row_line;     /* line being fed; first line of the row being read (0: none yet) */
    long lines;              /* lines read */
    char *fbuf;              /* fields of the current row, each NUL-terminated */
    size_t flen, fcap;
    size_t *foff;            /* (nf) offsets into fbuf */
    size_t *fsize;           /* (nf) field lengths */
    int nf, cap_f;
    int n_header;            /* 0 until the header is read */
    char **header;
    int pcol[DATA_TABLE_MAX_COLUMNS], kcol[DATA_TABLE_MAX_COLUMNS], mcol, vcol, gcol; /* header index of each role */
    hr_strmap pcat[DATA_TABLE_MAX_COLUMNS], kcat[DATA_TABLE_MAX_COLUMNS]; /* categorical strings, first-appearance ids */
    hr_strmap problems, configs;
    double *pv, *kv;         /* (problems.n, width), (configs.n, n_kernel) categoricals as first-appearance ids */
    int cap_p, cap_k, cap_g;
    hr_strmap groups;            /* the group column's values, first-appearance ids */
    int *pgroup;             /* (problems.n) each problem's group id, with a group column */
    long *pgroup_line;       /* (problems.n) the line that gave the problem its group */
    table_entry *entries;
    size_t n_entries, cap_entries;
    char *key;               /* scratch for canonical names */
    size_t key_cap;
    data_skips skips;
} table_reader;

static void field_cb(void *s, size_t len, void *ctx)
{
    table_reader *r = ctx;
    if (r->rc) return;
    if (!r->row_line) r->row_line = r->line;
    if (r->nf == r->cap_f) {
        int cap = r->cap_f ? r->cap_f * 2 : 32;
        size_t *o = realloc(r->foff, (size_t)cap * sizeof *o), *z = o ? realloc(r->fsize, (size_t)cap * sizeof *z) : NULL;
        if (o) r->foff = o;
        if (!o || !z) {
            r->rc = hr_error(HR_ENOMEM, "%s: out of memory", r->name);
            return;
        }
        r->fsize = z;
        r->cap_f = cap;
    }
    if (r->flen + len + 1 > r->fcap) {
        size_t cap = r->fcap ? r->fcap : 256;
        while (cap < r->flen + len + 1) cap *= 2;
        char *b = realloc(r->fbuf, cap);
        if (!b) {
            r->rc = hr_error(HR_ENOMEM, "%s: out of memory", r->name);
            return;
        }
        r->fbuf = b;
        r->fcap = cap;
    }
    if (len) memcpy(r->fbuf + r->flen, s, len);
    r->fbuf[r->flen + len] = '\0';
    r->foff[r->nf] = r->flen;
    r->fsize[r->nf++] = len;
    r->flen += len + 1;
}

static const char *field(const table_reader *r, int i)
{
    return r->fbuf + r->foff[i];
}

/* A bad data row: the error under strict, else a skip counted under `reason`; returns nonzero when reading stops. */
static int row_bad(table_reader *r, const char *reason, const char *fmt, const char *a, const char *b)
{
    if (r->strict) {
        char msg[256];
        snprintf(msg, sizeof msg, fmt, a, b);
        r->rc = hr_error(HR_EFORMAT, "%s:%ld: %s", r->name, r->row_line, msg);
        return 1;
    }
    data_skips_add(&r->skips, reason, r->row_line);
    return 0;
}

static int header_read(table_reader *r)
{
    data_table_spec *s = r->spec;
    if (!(r->header = hr_calloc((size_t)r->nf, sizeof *r->header))) return HR_ENOMEM;
    r->n_header = r->nf;
    hr_strmap names = {0}; /* header name -> column: the duplicate check and the lookups below stay linear */
    int rc = HR_OK;
    for (int i = 0; !rc && i < r->nf; i++) {
        int added;
        if (strlen(field(r, i)) != r->fsize[i] || !r->fsize[i])
            rc = hr_error(HR_EFORMAT, "%s:%ld: header field %d: empty or not text", r->name, r->row_line, i + 1);
        else if ((added = hr_strmap_add(&names, field(r, i), r->fsize[i], i, NULL)) < 0)
            rc = added;
        else if (!added)
            rc = hr_error(HR_EFORMAT, "%s:%ld: column '%s' appears twice in the header", r->name, r->row_line, field(r, i));
        else if (!(r->header[i] = hr_strdup(field(r, i))))
            rc = HR_ENOMEM;
    }
    if (rc) {
        hr_strmap_free(&names);
        return rc;
    }
    int np = s->n_problem + s->n_hardware;
    for (int c = 0; c < np + s->n_kernel + 2; c++) {
        const char *want = c < np ? s->problem[c].name : c < np + s->n_kernel ? s->kernel[c - np].name : c == np + s->n_kernel ? s->measure : s->vendor;
        if (s->vendor_feature && c == np + s->n_kernel - 1) want = s->vendor; /* the derived rank column */
        int *slot = c < np ? &r->pcol[c] : c < np + s->n_kernel ? &r->kcol[c - np] : c == np + s->n_kernel ? &r->mcol : &r->vcol;
        *slot = want ? hr_strmap_get(&names, want, -1) : -1;
        if (want && *slot < 0) {
            hr_strmap_free(&names);
            return hr_error(HR_EFORMAT, "%s:%ld: column '%s' (named by the schema) is missing from the header", r->name,
                            r->row_line, want);
        }
    }
    r->gcol = s->group ? hr_strmap_get(&names, s->group, -1) : -1;
    hr_strmap_free(&names);
    if (s->group && r->gcol < 0)
        return hr_error(HR_EFORMAT, "%s:%ld: column '%s' (the schema's \"group\") is missing from the header", r->name,
                        r->row_line, s->group);
    return HR_OK;
}

static int key_append(table_reader *r, size_t *at, const char *sep, const char *col, const char *val)
{
    size_t need = *at + strlen(sep) + strlen(col) + strlen(val) + 2;
    if (need > r->key_cap) {
        size_t cap = r->key_cap ? r->key_cap : 256;
        while (cap < need) cap *= 2;
        char *k = realloc(r->key, cap);
        if (!k) return HR_ENOMEM;
        r->key = k;
        r->key_cap = cap;
    }
    /* "sep col=val", by hand: this runs for every cell of every row */
    size_t ns = strlen(sep), nc = strlen(col), nv = strlen(val);
    char *k = r->key + *at;
    memcpy(k, sep, ns);
    memcpy(k + ns, col, nc);
    k[ns + nc] = '=';
    memcpy(k + ns + nc + 1, val, nv + 1);
    *at += ns + nc + 1 + nv;
    return HR_OK;
}

/* v as "%.15g" writes it; integers (the common case) without printf. */
static void number_format(double v, char *buf, size_t size)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        char tmp[24];
        long long x = (long long)(v < 0 ? -v : v);
        int n = 0;
        do tmp[n++] = (char)('0' + x % 10);
        while ((x /= 10) > 0);
        size_t o = 0;
        if (v < 0) buf[o++] = '-';
        while (n > 0) buf[o++] = tmp[--n];
        buf[o] = '\0';
        return;
    }
    snprintf(buf, size, "%.15g", v);
}

/* Reads the role columns of one side (0: problem+hardware, 1: kernel) into v (categoricals as first-appearance
 * ids) and the canonical name into r->key. Returns 1 when the row was rejected, a negative status on failure. */
static int side_read(table_reader *r, int side, double *v)
{
    const data_table_spec *s = r->spec;
    int n = side ? s->n_kernel : s->n_problem + s->n_hardware;
    const data_table_column *cols = side ? s->kernel : s->problem;
    const int *col = side ? r->kcol : r->pcol;
    size_t at = 0;
    r->key[0] = '\0';
    for (int j = 0; j < n; j++) {
        const char *cell = field(r, col[j]), *name = cols[j].name;
        size_t len = r->fsize[col[j]];
        char num[32];
        if (side && s->vendor_feature && j == n - 1) {
            /* the vendor's rank as a feature: an empty cell is a configuration the vendor did not list */
            char *end;
            long rank = len ? strtol(cell, &end, 10) : -1;
            if (len && (end != cell + len || rank < -1 || rank >= DATA_TABLE_VENDOR_UNLISTED))
                return row_bad(r, "vendor rank out of range", "column '%s': rank '%s' is not an integer from -1 to 1023 "
                               "(\"vendor_feature\")", s->vendor, cell) ? -1 : 1;
            if (rank < 0) rank = DATA_TABLE_VENDOR_UNLISTED;
            v[j] = (double)rank;
            number_format(v[j], num, sizeof num);
            if (key_append(r, &at, j ? "," : "", name, num)) return HR_ENOMEM;
            continue;
        }
        if (len == 0) return row_bad(r, "empty cell", "column '%s': empty cell", name, "") ? -1 : 1;
        if (cols[j].categorical) {
            if (strlen(cell) != len || strpbrk(cell, ",="))
                return row_bad(r, "category holds ',', '=' or NUL", "column '%s': value '%s' holds ',', '=' or a NUL byte",
                               name, cell) ? -1 : 1;
            int id, ins;
            if (idmap_get(side ? &r->kcat[j] : &r->pcat[j], cell, &id, &ins)) return HR_ENOMEM;
            v[j] = id;
            if (key_append(r, &at, j ? "," : "", name, cell)) return HR_ENOMEM;
        } else {
            char *end;
            v[j] = strtod(cell, &end);
            if (end != cell + len || !isfinite(v[j]))
                return row_bad(r, "not a number", "column '%s': '%s' is not a finite number", name, cell) ? -1 : 1;
            /* the features are floats: a value past float range would be an infinite feature */
            if (fabs(v[j]) > FLT_MAX)
                return row_bad(r, "value out of float range", "column '%s': '%s' is outside float range", name, cell) ? -1 : 1;
            if (v[j] == 0) v[j] = 0; /* -0 and 0 are one value */
            number_format(v[j], num, sizeof num);
            if (key_append(r, &at, j ? "," : "", name, num)) return HR_ENOMEM;
        }
    }
    return 0;
}

/* Assigns the id of the name in r->key, storing its values on first appearance. */
static int id_assign(table_reader *r, int side, const double *v, int *id)
{
    int ins, width = side ? r->spec->n_kernel : r->spec->n_problem + r->spec->n_hardware;
    hr_strmap *m = side ? &r->configs : &r->problems;
    if (idmap_get(m, r->key, id, &ins)) return HR_ENOMEM;
    if (!ins) return HR_OK;
    double **arr = side ? &r->kv : &r->pv;
    int *cap = side ? &r->cap_k : &r->cap_p;
    if (*id >= *cap) {
        int nc = *cap ? *cap * 2 : 64;
        double *a = realloc(*arr, (size_t)nc * (size_t)width * sizeof *a);
        if (!a) return HR_ENOMEM;
        *arr = a;
        *cap = nc;
    }
    memcpy(*arr + (size_t)*id * (size_t)width, v, (size_t)width * sizeof *v);
    return HR_OK;
}

/* The problem's group from the row's group cell: set on the problem's first row, the same on every later one. */
static int group_assign(table_reader *r, int problem, int inserted)
{
    const char *cell = field(r, r->gcol);
    int id, ins;
    if (idmap_get(&r->groups, cell, &id, &ins)) return HR_ENOMEM;
    if (inserted) {
        if (problem >= r->cap_g) {
            int nc = r->cap_g ? r->cap_g * 2 : 64;
            while (nc <= problem) nc *= 2;
            int *g = realloc(r->pgroup, (size_t)nc * sizeof *g);
            if (g) r->pgroup = g;
            long *l = g ? realloc(r->pgroup_line, (size_t)nc * sizeof *l) : NULL;
            if (!g || !l) return HR_ENOMEM;
            r->pgroup_line = l;
            r->cap_g = nc;
        }
        r->pgroup[problem] = id;
        r->pgroup_line[problem] = r->row_line;
        return HR_OK;
    }
    if (r->pgroup[problem] == id) return HR_OK;
    return hr_error(HR_EFORMAT, "%s:%ld: problem '%s' is in group '%s' (column '%s') here and in group '%s' at line %ld: a "
                    "problem belongs to one group", r->name, r->row_line, r->problems.keys[problem], cell, r->spec->group,
                    r->groups.keys[r->pgroup[problem]], r->pgroup_line[problem]);
}

static int row_read(table_reader *r)
{
    const data_table_spec *s = r->spec;
    if (r->nf != r->n_header) {
        char got[32];
        snprintf(got, sizeof got, "%d", r->nf);
        if (r->nf < r->n_header)
            return row_bad(r, "wrong number of fields", "%s fields: column '%s' has no value", got, r->header[r->nf]) ? -1 : 0;
        return row_bad(r, "wrong number of fields", "%s fields: more than the header's, after column '%s'", got,
                       r->header[r->n_header - 1]) ? -1 : 0;
    }
    double pv[DATA_TABLE_MAX_COLUMNS], kv[DATA_TABLE_MAX_COLUMNS];
    int rc, problem, config, rank = -1;
    if ((rc = side_read(r, 0, pv))) return rc < 0 ? rc : 0;
    const char *cell = field(r, r->mcol);
    char *end;
    double value = strtod(cell, &end);
    if (!r->fsize[r->mcol]) return row_bad(r, "empty cell", "column '%s': empty cell", s->measure, "") ? -1 : 0;
    if (end != cell + r->fsize[r->mcol] || !isfinite(value) || value <= 0)
        return row_bad(r, "measure not a positive number", "column '%s': measure '%s' is not a positive finite number",
                       s->measure, cell) ? -1 : 0;
    /* the cost is stored as a float: one that overflows to inf would read as "not measured", one that
     * underflows to 0 (or a subnormal) as infinitely fast */
    double cost = s->higher_better ? 1.0 / value : value;
    if (cost > FLT_MAX || cost < FLT_MIN)
        return row_bad(r, "measure out of float range", "column '%s': measure '%s' is outside float range "
                       "(1.2e-38 to 3.4e38)", s->measure, cell) ? -1 : 0;
    if (r->vcol >= 0 && r->fsize[r->vcol]) {
        cell = field(r, r->vcol);
        long v = strtol(cell, &end, 10);
        if (end != cell + r->fsize[r->vcol] || v < -1 || v > INT16_MAX)
            return row_bad(r, "vendor rank not an integer", "column '%s': rank '%s' is not an integer from -1 to 32767",
                           s->vendor, cell) ? -1 : 0;
        rank = (int)v;
    }
    if (r->gcol >= 0 && !r->fsize[r->gcol])
        return row_bad(r, "empty cell", "column '%s': empty cell", s->group, "") ? -1 : 0;
    if (r->gcol >= 0 && (strlen(field(r, r->gcol)) != r->fsize[r->gcol]))
        return row_bad(r, "group holds NUL", "column '%s': value '%s' holds a NUL byte", s->group, field(r, r->gcol)) ? -1 : 0;
    int n_before = r->problems.n;
    if ((rc = id_assign(r, 0, pv, &problem))) return rc;
    if (r->gcol >= 0 && (rc = group_assign(r, problem, r->problems.n > n_before))) return rc;
    if ((rc = side_read(r, 1, kv))) return rc < 0 ? rc : 0;
    if ((rc = id_assign(r, 1, kv, &config))) return rc;
    if (r->n_entries == r->cap_entries) {
        size_t cap = r->cap_entries ? r->cap_entries * 2 : 256;
        table_entry *e = realloc(r->entries, cap * sizeof *e);
        if (!e) return HR_ENOMEM;
        r->entries = e;
        r->cap_entries = cap;
    }
    r->entries[r->n_entries++] = (table_entry){problem, config, value, rank, r->row_line};
    return 0;
}

static void row_cb(int c, void *ctx)
{
    table_reader *r = ctx;
    if (r->rc) return;
    if (!r->row_line) r->row_line = r->line;
    int rc = r->n_header ? row_read(r) : header_read(r);
    if (rc > 0) rc = 0;
    if (rc && !r->rc) r->rc = rc == HR_ENOMEM ? hr_error(HR_ENOMEM, "%s: out of memory", r->name) : rc;
    r->nf = 0;
    r->flen = 0;
    r->row_line = 0;
}

static int space_csv(unsigned char c)
{
    return c == CSV_SPACE || c == CSV_TAB;
}

static int space_tsv(unsigned char c)
{
    return c == CSV_SPACE;
}

/* Feeds the text to libcsv a line at a time, so that every row knows the line it starts on. */
static int reader_run(table_reader *r, const char *text, size_t len, char delim)
{
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL)) return hr_error(HR_ENOMEM, "%s: out of memory", r->name);
    csv_set_delim(&p, (unsigned char)delim);
    csv_set_space_func(&p, delim == '\t' ? space_tsv : space_csv);
    size_t at = 0;
    r->line = 1;
    while (at < len && !r->rc) {
        /* a line ends at \n, \r\n or a lone \r (old Mac files), so that errors name the right line */
        const char *nl = memchr(text + at, '\n', len - at);
        const char *cr = memchr(text + at, '\r', (size_t)((nl ? nl : text + len) - (text + at)));
        if (cr && cr + 1 != nl) nl = cr;
        size_t n = nl ? (size_t)(nl - (text + at)) + 1 : len - at;
        if (csv_parse(&p, text + at, n, field_cb, row_cb, r) != n && !r->rc)
            r->rc = hr_error(HR_EFORMAT, "%s:%ld: malformed CSV (%s)", r->name, r->line, csv_strerror(csv_error(&p)));
        at += n;
        if (nl) r->line++;
    }
    if (!r->rc && csv_fini(&p, field_cb, row_cb, r) && !r->rc)
        r->rc = hr_error(HR_EFORMAT, "%s:%ld: malformed CSV (%s)", r->name, r->line, csv_strerror(csv_error(&p)));
    csv_free(&p);
    r->lines = len && (text[len - 1] == '\n' || text[len - 1] == '\r') ? r->line - 1 : r->line;
    if (!r->rc && !r->n_header) r->rc = hr_error(HR_EFORMAT, "%s: no header row", r->name);
    return r->rc;
}

static void reader_free(table_reader *r)
{
    free(r->fbuf);
    free(r->foff);
    free(r->fsize);
    for (int i = 0; i < r->n_header; i++) free(r->header[i]);
    free(r->header);
    for (int j = 0; j < DATA_TABLE_MAX_COLUMNS; j++) {
        hr_strmap_free(&r->pcat[j]);
        hr_strmap_free(&r->kcat[j]);
    }
    hr_strmap_free(&r->problems);
    hr_strmap_free(&r->configs);
    hr_strmap_free(&r->groups);
    free(r->pgroup);
    free(r->pgroup_line);
    free(r->pv);
    free(r->kv);
    free(r->entries);
    free(r->key);
}

/* ---- building the dataset ---- */

static int cmp_entry(const void *a, const void *b)
{
    const table_entry *x = a, *y = b;
    if (x->problem != y->problem) return x->problem < y->problem ? -1 : 1;
    if (x->config != y->config) return x->config < y->config ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted vocabulary of a categorical column: the schema's own values and those read; ids read -> sorted index
 * into remap (m->n). */
static int vocab_build(data_table_column *c, const hr_strmap *m, int *remap)
{
    char **all = hr_calloc((size_t)(c->n_vocab + m->n + 1), sizeof *all);
    if (!all) return HR_ENOMEM;
    int n = 0;
    for (int i = 0; i < c->n_vocab; i++) all[n++] = c->vocab[i];
    for (int i = 0; i < m->n; i++) all[n++] = m->keys[i];
    qsort(all, (size_t)n, sizeof *all, cmp_str);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (!u || strcmp(all[u - 1], all[i])) all[u++] = all[i];
    char **vocab = hr_calloc((size_t)(u ? u : 1), sizeof *vocab);
    int rc = vocab ? HR_OK : HR_ENOMEM;
    for (int i = 0; !rc && i < u; i++)
        if (!(vocab[i] = hr_strdup(all[i]))) rc = HR_ENOMEM;
    for (int i = 0; !rc && i < m->n; i++) {
        char **hit = bsearch(&m->keys[i], vocab, (size_t)u, sizeof *vocab, cmp_str);
        remap[i] = (int)(hit - vocab);
    }
    free(all);
    if (rc) {
        for (int i = 0; vocab && i < u; i++) free(vocab[i]);
        free(vocab);
        return rc;
    }
    for (int i = 0; i < c->n_vocab; i++) free(c->vocab[i]);
    free(c->vocab);
    c->vocab = vocab;
    c->n_vocab = u;
    return HR_OK;
}

static int vocabs_finish(table_reader *r)
{
    data_table_spec *s = r->spec;
    int np = s->n_problem + s->n_hardware;
    for (int side = 0; side < 2; side++) {
        int ncol = side ? s->n_kernel : np, nrow = side ? r->configs.n : r->problems.n;
        data_table_column *cols = side ? s->kernel : s->problem;
        double *v = side ? r->kv : r->pv;
        for (int j = 0; j < ncol; j++) {
            if (!cols[j].categorical) continue;
            const hr_strmap *m = side ? &r->kcat[j] : &r->pcat[j];
            int *remap = hr_malloc((size_t)(m->n + 1) * sizeof *remap);
            if (!remap || vocab_build(&cols[j], m, remap)) {
                free(remap);
                return HR_ENOMEM;
            }
            for (int i = 0; i < nrow; i++) v[(size_t)i * ncol + j] = remap[(int)v[(size_t)i * ncol + j]];
            free(remap);
        }
    }
    return HR_OK;
}

typedef struct named_id {
    const char *name;
    int id;
} named_id;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named_id *)a)->name, ((const named_id *)b)->name);
}

/* Merges each pair's measurements into one (entries sorted); returns the count merged or a status. */
static int entries_merge(table_reader *r, long *duplicates)
{
    size_t w = 0;
    *duplicates = 0;
    double *vals = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < r->n_entries;) {
        size_t j = i + 1;
        while (j < r->n_entries && r->entries[j].problem == r->entries[i].problem && r->entries[j].config == r->entries[i].config) j++;
        table_entry e = r->entries[i];
        if (j - i > 1) {
            ++*duplicates;
            if (r->spec->duplicates == DATA_TABLE_DUP_ERROR) {
                free(vals);
                return hr_error(HR_EFORMAT, "%s:%ld: problem '%s' configuration '%s' measured again (first at line %ld); "
                                "the schema's duplicates policy is error", r->name, r->entries[i + 1].line,
                                r->problems.keys[e.problem], r->configs.keys[e.config], e.line);
            }
            if (j - i > cap) {
                cap = (j - i) * 2;
                double *nv = realloc(vals, cap * sizeof *nv);
                if (!nv) {
                    free(vals);
                    return HR_ENOMEM;
                }
                vals = nv;
            }
            size_t m = j - i;
            double sum = 0;
            for (size_t k = 0; k < m; k++) {
                vals[k] = r->entries[i + k].value;
                sum += vals[k];
                if (e.rank < 0) e.rank = r->entries[i + k].rank;
            }
            qsort(vals, m, sizeof *vals, cmp_double);
            switch (r->spec->duplicates) {
            case DATA_TABLE_DUP_MIN: e.value = vals[0]; break;
            case DATA_TABLE_DUP_MEAN: e.value = sum / (double)m; break;
            default: e.value = m % 2 ? vals[m / 2] : 0.5 * (vals[m / 2 - 1] + vals[m / 2]); break;
            }
        }
        r->entries[w++] = e;
        i = j;
    }
    free(vals);
    r->n_entries = w;
    return HR_OK;
}

static int dataset_build(table_reader *r, data_select **out)
{
    data_table_spec *s = r->spec;
    int rc, n = r->problems.n, K = r->configs.n, np = s->n_problem + s->n_hardware, nk = s->n_kernel;
    long duplicates;
    qsort(r->entries, r->n_entries, sizeof *r->entries, cmp_entry);
    if ((rc = entries_merge(r, &duplicates)) || (rc = vocabs_finish(r))) return rc;
    data_select *ds = hr_calloc(1, sizeof *ds);
    data_table *t = ds ? hr_calloc(1, sizeof *t) : NULL;
    named_id *order = hr_malloc((size_t)K * sizeof *order);
    int *rank = hr_malloc((size_t)K * sizeof *rank);
    if (!ds || !t || !order || !rank) goto nomem;
    ds->table = t;
    ds->n = n, ds->n_kernels = K;
    ds->problems = hr_calloc((size_t)n, sizeof *ds->problems);
    ds->keys = hr_calloc((size_t)n, sizeof *ds->keys);
    ds->kernels = hr_calloc((size_t)K, sizeof *ds->kernels);
    ds->runtime = hr_malloc((size_t)n * (size_t)K * sizeof *ds->runtime);
    ds->source = hr_strdup(hr_path_basename(r->name));
    t->pv = hr_malloc((size_t)n * (size_t)np * sizeof *t->pv);
    t->kv = hr_malloc((size_t)K * (size_t)nk * sizeof *t->kv);
    if (!ds->problems || !ds->keys || !ds->kernels || !ds->runtime || !ds->source || !t->pv || !t->kv) goto nomem;
    if (s->vendor && !(ds->vendor_rank = hr_malloc((size_t)n * (size_t)K * sizeof *ds->vendor_rank))) goto nomem;
    if (s->group) {
        if (!(t->group = hr_malloc((size_t)n * sizeof *t->group))) goto nomem;
        memcpy(t->group, r->pgroup, (size_t)n * sizeof *t->group);
        /* the group names move to the table */
        if (!(t->group_names = hr_calloc((size_t)(r->groups.n ? r->groups.n : 1), sizeof *t->group_names))) goto nomem;
        for (int g = 0; g < r->groups.n; g++) {
            t->group_names[g] = r->groups.keys[g];
            r->groups.keys[g] = NULL;
        }
        t->n_group_names = r->groups.n;
    }
    for (int i = 0; i < n; i++) {
        ds->problems[i].direction = DATA_DIR_F;
        ds->problems[i].dtype = DATA_DTYPE_OTHER;
        ds->problems[i].layout = DATA_LAYOUT_OTHER;
        ds->keys[i] = r->problems.keys[i];
        r->problems.keys[i] = NULL;
    }
    memcpy(t->pv, r->pv, (size_t)n * (size_t)np * sizeof *t->pv);
    for (int k = 0; k < K; k++) order[k] = (named_id){r->configs.keys[k], k};
    qsort(order, (size_t)K, sizeof *order, cmp_named);
    for (int k = 0; k < K; k++) {
        rank[order[k].id] = k;
        ds->kernels[k] = r->configs.keys[order[k].id];
        r->configs.keys[order[k].id] = NULL;
        memcpy(t->kv + (size_t)k * nk, r->kv + (size_t)order[k].id * nk, (size_t)nk * sizeof *t->kv);
    }
    for (size_t i = 0; i < (size_t)n * (size_t)K; i++) {
        ds->runtime[i] = INFINITY;
        if (ds->vendor_rank) ds->vendor_rank[i] = -1;
    }
    for (size_t e = 0; e < r->n_entries; e++) {
        const table_entry *x = &r->entries[e];
        size_t at = (size_t)x->problem * (size_t)K + (size_t)rank[x->config];
        ds->runtime[at] = (float)(s->higher_better ? 1.0 / x->value : x->value);
        if (ds->vendor_rank) ds->vendor_rank[at] = (int16_t)x->rank;
    }
    t->spec = *s;
    memset(s, 0, sizeof *s);
    t->n = n, t->n_kernels = K;
    t->duplicates = duplicates;
    ds->skips = r->skips;
    ds->lines = r->lines;
    free(order);
    free(rank);
    *out = ds;
    return HR_OK;
nomem:
    free(order);
    free(rank);
    data_select_free(ds);
    if (ds == NULL) free(t);
    return hr_error(HR_ENOMEM, "%s: out of memory", r->name);
}

int data_table_parse(const char *name, const char *text, size_t len, char delim, const char *schema_json,
                     const data_load_opts *opts, data_select **out)
{
    *out = NULL;
    table_reader r;
    memset(&r, 0, sizeof r);
    data_table_spec spec;
    int rc = data_table_spec_from_json(schema_json, name, &spec);
    if (rc) return rc;
    /* a UTF-8 byte-order mark (Excel's "CSV UTF-8", PowerShell) is no part of the first column's name */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) text += 3, len -= 3;
    r.name = name;
    r.spec = &spec;
    r.strict = opts && opts->strict;
    if (!(r.key = hr_malloc(r.key_cap = 256))) rc = HR_ENOMEM;
    if (!rc) rc = reader_run(&r, text, len, delim);
    if (!rc && r.n_entries == 0)
        rc = hr_error(HR_EFORMAT, "%s: no usable row (%ld lines read, %ld skipped%s%s)", name, r.lines, r.skips.total,
                      r.skips.n_reasons ? ", first reason: " : "", r.skips.n_reasons ? r.skips.reason[0] : "");
    if (!rc) rc = dataset_build(&r, out);
    if (!rc && opts && opts->log)
        for (int k = 0; k < r.skips.n_reasons; k++)
            hr_log_printf(opts->log, HR_LOG_WARN, "%s: skipped %ld row(s): %s (first at line %ld)\n", name,
                          r.skips.count[k], r.skips.reason[k], r.skips.first_line[k]);
    reader_free(&r);
    data_table_spec_free(&spec);
    return rc;
}

/* ---- files ---- */

/* Length of the name without a .gz / .bz2 ending. */
static size_t strip_compression(const char *path)
{
    size_t n = strlen(path);
    if (hr_ends_with(path, n, ".gz")) return n - 3;
    if (hr_ends_with(path, n, ".bz2")) return n - 4;
    return n;
}

char *data_table_sidecar(const char *path, const char *suffix)
{
    size_t n = strip_compression(path);
    if (hr_ends_with(path, n, ".csv") || hr_ends_with(path, n, ".tsv")) n -= 4;
    char *p = hr_malloc(n + strlen(suffix) + 1);
    if (!p) return NULL;
    memcpy(p, path, n);
    strcpy(p + n, suffix);
    return p;
}

int data_table_is_table(const char *path)
{
    size_t n = strip_compression(path);
    return hr_ends_with(path, n, ".csv") || hr_ends_with(path, n, ".tsv");
}

int data_table_load(const char *path, const data_table_opts *opts, data_select **out)
{
    *out = NULL;
    char *schema = NULL, *text = NULL;
    size_t len, n = strip_compression(path);
    int rc = HR_OK;
    if (opts && opts->schema_json) {
        if (!(schema = hr_strdup(opts->schema_json))) return HR_ENOMEM;
    } else {
        char *sp = NULL;
        const char *schema_path = opts ? opts->schema_path : NULL;
        if (!schema_path) {
            size_t base = hr_ends_with(path, n, ".csv") || hr_ends_with(path, n, ".tsv") ? n - 4 : n;
            if (!(sp = hr_malloc(base + sizeof ".schema.json"))) return HR_ENOMEM;
            memcpy(sp, path, base);
            strcpy(sp + base, ".schema.json");
            schema_path = sp;
        }
        size_t slen;
        if (!hr_file_exists(schema_path))
            rc = hr_error(HR_EINVAL, "%s: no schema: %s does not exist (write it beside the table, or give --schema)",
                          path, schema_path);
        else rc = hr_file_read_all(schema_path, &schema, &slen);
        free(sp);
        if (rc) return rc;
    }
    rc = data_read_file(path, opts ? opts->threads : 0, &text, &len);
    if (!rc) {
        data_load_opts lo = {.strict = opts ? opts->strict : 0, .log = opts ? opts->log : NULL, .threads = opts ? opts->threads : 0};
        rc = data_table_parse(path, text, len, hr_ends_with(path, n, ".tsv") ? '\t' : ',', schema, &lo, out);
    }
    free(text);
    free(schema);
    return rc;
}
