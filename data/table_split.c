/* A benchmark table split into a training table and a held-out table by problem (data_table_split): the rows are
 * copied as they are written, each table with the schema beside it, so that heurist trains on the first and
 * evaluates (or heurist-collect verify times) the second. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/data.h"
#include "data/table.h"

/* Field `col` of a CSV or TSV line [s, e) into buf (quotes removed, "" as "); 0, or -1 when the line has fewer
 * fields. */
static int field_at(const char *s, const char *e, char delim, int col, char *buf, size_t cap)
{
    int at = 0;
    const char *p = s;
    for (;;) {
        size_t o = 0;
        int quoted = p < e && *p == '"';
        if (quoted) p++;
        while (p < e) {
            if (quoted && *p == '"' && p + 1 < e && p[1] == '"') {
                if (at == col && o + 1 < cap) buf[o++] = '"';
                p += 2;
                continue;
            }
            if (quoted && *p == '"') {
                quoted = 0;
                p++;
                continue;
            }
            if (!quoted && (*p == delim || *p == '\r')) break;
            if (at == col && o + 1 < cap) buf[o++] = *p;
            p++;
        }
        if (at == col) {
            buf[o] = '\0';
            return 0;
        }
        if (p >= e || *p != delim) return -1;
        p++, at++;
    }
}

/* The index of column `name` in the header line [s, e), or -1. */
static int column_index(const char *s, const char *e, char delim, const char *name)
{
    char buf[256];
    for (int c = 0; field_at(s, e, delim, c, buf, sizeof buf) == 0; c++)
        if (!strcmp(buf, name)) return c;
    return -1;
}

/* Writes the header and the rows of `part` (which[i] == part for row i) to path through a temporary file, gzip
 * when the name ends in .gz. */
static int part_write(const char *path, const char *text, size_t header_len, char *const *row, const size_t *row_len,
                      const unsigned char *which, long n, int part)
{
    char *tmp = hr_file_tmp_path(path);
    if (!tmp) return HR_ENOMEM;
    size_t pl = strlen(path);
    int gz = hr_ends_with(path, pl, ".gz"), rc = HR_OK;
    gzFile g = gz ? gzopen(tmp, "wb6") : NULL;
    FILE *f = gz ? NULL : fopen(tmp, "wb");
    if (!g && !f) {
        free(tmp);
        return hr_error(HR_EIO, "%s: cannot create", path);
    }
    int ok = gz ? gzwrite(g, text, (unsigned)header_len) == (int)header_len : fwrite(text, 1, header_len, f) == header_len;
    for (long i = 0; ok && i < n; i++) {
        if (which[i] != part) continue;
        ok = gz ? gzwrite(g, row[i], (unsigned)row_len[i]) == (int)row_len[i] && gzputc(g, '\n') == '\n'
                : fwrite(row[i], 1, row_len[i], f) == row_len[i] && fputc('\n', f) == '\n';
    }
    ok = (gz ? gzclose(g) == Z_OK : fclose(f) == 0) && ok;
    if (!ok) {
        remove(tmp);
        rc = hr_error(HR_EIO, "%s: write failed", path);
    } else {
        rc = hr_file_commit(tmp, path);
    }
    free(tmp);
    return rc;
}

int data_table_split(const char *path, const data_table_split_opts *o, data_table_split_counts *counts)
{
    memset(counts, 0, sizeof *counts);
    data_table_spec spec;
    memset(&spec, 0, sizeof spec);
    int rc = data_table_spec_from_json(o->schema_json, path, &spec);
    if (rc) return rc;
    size_t n = strlen(path);
    size_t base = n - (hr_ends_with(path, n, ".gz") ? 3 : hr_ends_with(path, n, ".bz2") ? 4 : 0);
    char delim = hr_ends_with(path, base, ".tsv") ? '\t' : ',';
    char *text = NULL;
    size_t len = 0;
    if ((rc = data_read_file(path, 0, &text, &len))) {
        data_table_spec_free(&spec);
        return rc;
    }
    /* the header, the problem's columns (problem and hardware), the column that groups the problems */
    const char *eol = memchr(text, '\n', len);
    size_t header_len = eol ? (size_t)(eol - text) + 1 : len;
    const char *header_end = eol ? eol : text + len;
    int np = spec.n_problem + spec.n_hardware, key_col[DATA_TABLE_MAX_COLUMNS], unit_col = -1;
    for (int j = 0; !rc && j < np; j++)
        if ((key_col[j] = column_index(text, header_end, delim, spec.problem[j].name)) < 0)
            rc = hr_error(HR_EFORMAT, "%s:1: no column '%s' (a problem column of the schema)", path, spec.problem[j].name);
    const char *by = o->hold_column ? o->hold_column : o->group_column;
    if (!rc && by && (unit_col = column_index(text, header_end, delim, by)) < 0)
        rc = hr_error(HR_EINVAL, "%s:1: no column '%s' (%s)", path, by, o->hold_column ? "--hold" : "--group-by");
    /* every row: its problem (by the text of its problem columns) and the unit held out whole (its group value, or
     * the problem) */
    long cap = 1024, rows = 0;
    char **row = hr_malloc((size_t)cap * sizeof *row);
    size_t *row_len = hr_malloc((size_t)cap * sizeof *row_len);
    int *unit = hr_malloc((size_t)cap * sizeof *unit), *problem = hr_malloc((size_t)cap * sizeof *problem);
    hr_strmap problems = {0}, units = {0};
    if (!rc && (!row || !row_len || !unit || !problem)) rc = HR_ENOMEM;
    for (const char *s = text + header_len; !rc && s < text + len;) {
        const char *e = memchr(s, '\n', (size_t)(text + len - s));
        if (!e) e = text + len;
        const char *next = e < text + len ? e + 1 : e;
        if (e > s && e[-1] == '\r') e--;
        if (e == s) {
            s = next;
            continue;
        }
        char key[2048], val[256];
        size_t k = 0;
        for (int j = 0; !rc && j < np; j++) {
            if (field_at(s, e, delim, key_col[j], val, sizeof val))
                rc = hr_error(HR_EFORMAT, "%s: row %ld has no column '%s'", path, rows + 1, spec.problem[j].name);
            else k += (size_t)snprintf(key + k, k < sizeof key ? sizeof key - k : 0, "%s\x1f", val);
        }
        if (!rc && k >= sizeof key)
            rc = hr_error(HR_EFORMAT, "%s: row %ld: a problem longer than %zu bytes", path, rows + 1, sizeof key);
        if (!rc && unit_col >= 0 && field_at(s, e, delim, unit_col, val, sizeof val))
            rc = hr_error(HR_EFORMAT, "%s: row %ld has no column '%s'", path, rows + 1, by);
        const char *u = unit_col >= 0 ? val : key;
        int pid = -1, uid = -1;
        if (!rc && hr_strmap_add(&problems, key, strlen(key), 0, &pid) < 0) rc = HR_ENOMEM;
        if (!rc && hr_strmap_add(&units, u, strlen(u), 0, &uid) < 0) rc = HR_ENOMEM;
        if (!rc && rows == cap) {
            cap *= 2;
            char **nr = realloc(row, (size_t)cap * sizeof *row);
            size_t *nl = nr ? realloc(row_len, (size_t)cap * sizeof *row_len) : NULL;
            int *nu = nl ? realloc(unit, (size_t)cap * sizeof *unit) : NULL;
            int *np2 = nu ? realloc(problem, (size_t)cap * sizeof *problem) : NULL;
            if (nr) row = nr;
            if (nl) row_len = nl;
            if (nu) unit = nu;
            if (np2) problem = np2;
            if (!np2) rc = hr_error(HR_ENOMEM, "out of memory");
        }
        if (!rc) {
            row[rows] = (char *)s;
            row_len[rows] = (size_t)(e - s);
            problem[rows] = pid;
            unit[rows++] = uid;
        }
        s = next;
    }
    int n_units = units.n;
    unsigned char *held = rc ? NULL : hr_calloc((size_t)(n_units ? n_units : 1), 1);
    unsigned char *which = rc ? NULL : hr_calloc((size_t)(rows ? rows : 1), 1);
    if (!rc && (!held || !which)) rc = HR_ENOMEM;
    if (!rc && !rows) rc = hr_error(HR_EFORMAT, "%s: no rows to split", path);
    if (!rc && o->hold_column) {
        for (int v = 0; !rc && v < o->n_hold; v++) {
            int at = hr_strmap_find(&units, o->hold_values[v], strlen(o->hold_values[v]));
            if (at < 0) rc = hr_error(HR_EINVAL, "--hold: '%s' never appears in column '%s'", o->hold_values[v], by);
            else held[at] = 1;
        }
    } else if (!rc) {
        /* a seeded share of the units, in a seeded order: round(share x units), at least one on each side */
        int *order = hr_malloc((size_t)n_units * sizeof *order);
        if (!order) rc = HR_ENOMEM;
        long take = (long)(o->share * n_units + 0.5);
        if (!rc && (take < 1 || take >= n_units))
            rc = hr_error(HR_EINVAL, "--share %g of %d %s leaves %s", o->share, n_units, by ? "groups" : "problems",
                          take < 1 ? "none held out" : "none to train on");
        for (int i = 0; !rc && i < n_units; i++) order[i] = i;
        if (!rc) {
            hr_rng rng;
            hr_rng_seed(&rng, o->seed);
            hr_rng_shuffle_int(&rng, order, (size_t)n_units);
            for (long i = 0; i < take; i++) held[order[i]] = 1;
        }
        free(order);
    }
    /* rows and problems on each side */
    unsigned char *problem_side = rc ? NULL : hr_calloc((size_t)(problems.n ? problems.n : 1), 1);
    if (!rc && !problem_side) rc = HR_ENOMEM;
    for (long i = 0; !rc && i < rows; i++) {
        which[i] = held[unit[i]];
        counts->rows[which[i]]++;
        problem_side[problem[i]] = which[i];
    }
    for (int p = 0; !rc && p < problems.n; p++) counts->problems[problem_side[p]]++;
    free(problem_side);
    if (!rc) {
        rc = part_write(o->train_path, text, header_len, row, row_len, which, rows, 0);
        if (!rc) rc = part_write(o->test_path, text, header_len, row, row_len, which, rows, 1);
    }
    counts->units = n_units;
    for (int u = 0; held && u < n_units; u++) counts->held_units += held[u];
    hr_strmap_free(&problems);
    hr_strmap_free(&units);
    free(row);
    free(row_len);
    free(unit);
    free(problem);
    free(held);
    free(which);
    free(text);
    data_table_spec_free(&spec);
    return rc;
}
