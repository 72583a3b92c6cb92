/* Where each problem of a selection dataset comes from (a training pool, a network, a model family), for reports
 * that break their figures down by source. A key list names the sources in heurist-collect verify's format:
 *   KEY [SOURCE ...]            one a line, '#' comments, a "KEY=..." find-db line's key
 *   key<TAB>...                 a table whose header starts with "key": the source is the first of its columns
 *                               source, network, family (datasets/h100/networks/networks.tsv reads as it is)
 * A problem is matched by its key as written, without the precision class suffix data/precision.c adds. */
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

/* The index of `name` among ds's source names, added when new; -1 on allocation failure. */
static int source_index(data_select *ds, hr_strmap *names, const char *name)
{
    int at = hr_strmap_get(names, name, -1);
    if (at >= 0) return at;
    char **grown = realloc(ds->source_names, (size_t)(ds->n_sources + 1) * sizeof *grown);
    if (!grown) return -1;
    ds->source_names = grown;
    if (!(ds->source_names[ds->n_sources] = hr_strdup(name))) return -1;
    if (hr_strmap_add(names, name, strlen(name), ds->n_sources, NULL) < 0) return -1;
    return ds->n_sources++;
}

/* A row's key without the class suffix the loader appended ("_strict", "_conversion"), into buf. */
static const char *plain_key(const data_select *ds, int i, char *buf, size_t size)
{
    const data_problem *p = &ds->problems[i];
    const char *key = ds->keys[i], *name = data_portable_precision_name(p->precision);
    size_t n = strlen(key), s = name ? strlen(name) : 0;
    if (p->dtype != DATA_DTYPE_FP32 || p->precision == DATA_PRECISION_TF32 || !name || n <= s + 1 ||
        key[n - s - 1] != '_' || strcmp(key + n - s, name) != 0 || n - s - 1 >= size)
        return key;
    memcpy(buf, key, n - s - 1);
    buf[n - s - 1] = '\0';
    return buf;
}

/* The column of the source in a tab-separated header, or -1. */
static int header_source_column(char *header)
{
    static const char *const wanted[] = {"source", "network", "family"};
    int best = -1, best_rank = 3, col = 0;
    for (char *save = NULL, *f = strtok_r(header, "\t", &save); f; f = strtok_r(NULL, "\t", &save), col++)
        for (int w = 0; w < 3; w++)
            if (!strcmp(f, wanted[w]) && w < best_rank) best = col, best_rank = w;
    return best;
}

int data_sources_read(data_select *ds, const char *path, const char *fallback)
{
    char *text;
    size_t len;
    int rc = data_read_file(path, 1, &text, &len);
    if (rc) return rc;
    hr_strmap keys = {0}, names = {0};
    char **tag = NULL;
    int n_tags = 0, cap = 0, col = -1, table = 0;
    long line = 0;
    for (char *save = NULL, *ln = strtok_r(text, "\n", &save); ln && !rc; ln = strtok_r(NULL, "\n", &save)) {
        line++;
        size_t n = strlen(ln);
        if (n && ln[n - 1] == '\r') ln[--n] = '\0';
        if (line == 1 && !strncmp(ln, "key\t", 4)) {
            table = 1;
            if ((col = header_source_column(ln)) < 0)
                rc = hr_error(HR_EFORMAT, "%s:1: a key table needs a source, network or family column", path);
            continue;
        }
        if (!n || ln[0] == '#') continue;
        /* the key, then the source: the table's column, or the second word */
        char *fields[64];
        int nf = 0;
        for (char *s2 = NULL, *f = strtok_r(ln, table ? "\t" : " \t", &s2); f && nf < 64; f = strtok_r(NULL, table ? "\t" : " \t", &s2))
            fields[nf++] = f;
        if (!nf) continue;
        char *eq = strchr(fields[0], '=');
        if (eq) *eq = '\0';
        const char *src = table ? (col < nf ? fields[col] : NULL) : (nf > 1 ? fields[1] : NULL);
        if (!src) {
            if (table) rc = hr_error(HR_EFORMAT, "%s:%ld: %d fields, no source column", path, line, nf);
            continue;
        }
        if (hr_strmap_get(&keys, fields[0], -1) >= 0) continue; /* a key listed twice keeps its first source */
        if (n_tags == cap) {
            cap = cap ? 2 * cap : 256;
            char **grown = realloc(tag, (size_t)cap * sizeof *grown);
            if (!grown) {
                rc = HR_ENOMEM;
                break;
            }
            tag = grown;
        }
        if (!(tag[n_tags] = hr_strdup(src)) || hr_strmap_add(&keys, fields[0], strlen(fields[0]), n_tags, NULL) < 0) {
            free(tag[n_tags]);
            rc = HR_ENOMEM;
        } else {
            n_tags++;
        }
    }
    free(text);
    /* the fallback first: a problem the list does not name keeps it */
    const char *other = fallback ? fallback : "-";
    if (!rc) rc = data_sources_set(ds, other);
    if (!rc && hr_strmap_add(&names, other, strlen(other), 0, NULL) < 0) rc = HR_ENOMEM;
    char buf[1024];
    for (int i = 0; !rc && i < ds->n; i++) {
        int t = hr_strmap_get(&keys, plain_key(ds, i, buf, sizeof buf), -1);
        if (t < 0) continue;
        int s = source_index(ds, &names, tag[t]);
        if (s < 0) rc = HR_ENOMEM;
        else ds->problem_source[i] = s;
    }
    if (rc) data_sources_clear(ds);
    for (int i = 0; i < n_tags; i++) free(tag[i]);
    free(tag);
    hr_strmap_free(&keys);
    hr_strmap_free(&names);
    return rc;
}

int data_sources_set(data_select *ds, const char *name)
{
    data_sources_clear(ds);
    ds->problem_source = hr_calloc((size_t)(ds->n > 0 ? ds->n : 1), sizeof *ds->problem_source);
    ds->source_names = hr_calloc(1, sizeof *ds->source_names);
    if (!ds->problem_source || !ds->source_names || !(ds->source_names[0] = hr_strdup(name))) {
        data_sources_clear(ds);
        return HR_ENOMEM;
    }
    ds->n_sources = 1;
    return HR_OK;
}

void data_sources_clear(data_select *ds)
{
    for (int i = 0; i < ds->n_sources; i++) free(ds->source_names[i]);
    free(ds->source_names);
    free(ds->problem_source);
    ds->source_names = NULL;
    ds->problem_source = NULL;
    ds->n_sources = 0;
}
