/* A vendor's own heuristic, recorded beside a find-db, as a baseline every report can show.
 *
 * FILE.heuristic.txt (or .txt.bz2) next to FILE.fdb.txt (or .fdb.txt.bz2) holds one line per problem,
 * "<problem key>=<kernel>;<kernel>;...": the kernels the vendor's heuristic proposes for that problem, best
 * first (heurist-collect writes cuDNN's cudnnGet*Algorithm_v7 ranking so). Problems are matched by their
 * key as written; kernels by name, and a kernel the find-db never measured is left out of the ranking. The
 * strict and conversion precision classes of FP32 problems have their own files, FILE.heuristic.strict.txt and
 * FILE.heuristic.conversion.txt, whose keys are the problems' keys without the class's suffix.
 */
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

/* The sidecar's path for a find-db path, or NULL (*path_out untouched) when the name has no find-db suffix. */
static char *sidecar_path(const char *fdb, const char *ext)
{
    static const char *const suffixes[] = {".fdb.txt.bz2", ".fdb.txt", NULL};
    for (int i = 0; suffixes[i]; i++)
        if (hr_ends_with(fdb, strlen(fdb), suffixes[i])) {
            size_t stem = strlen(fdb) - strlen(suffixes[i]);
            char *p = hr_malloc(stem + strlen(ext) + 1);
            if (!p) return NULL;
            memcpy(p, fdb, stem);
            strcpy(p + stem, ext);
            return p;
        }
    return NULL;
}

typedef struct key_row {
    const char *key;
    int row;
} key_row;

static int cmp_key_row(const void *a, const void *b)
{
    return strcmp(((const key_row *)a)->key, ((const key_row *)b)->key);
}

static int cmp_name_index(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Parses the sidecar's text (the ranking of class `cls`) into ds->vendor_rank, allocated on the first call. A
 * strict or conversion sidecar's keys name the FP32 problems of that class, keyed in ds with the class's suffix. */
static int parse(data_select *ds, const char *path, char *text, int cls)
{
    int K = ds->n_kernels, rc = HR_OK;
    key_row *rows = hr_malloc((size_t)(ds->n > 0 ? ds->n : 1) * sizeof *rows);
    if (!ds->vendor_rank) {
        ds->vendor_rank = hr_malloc((size_t)(ds->n > 0 ? ds->n : 1) * (size_t)(K > 0 ? K : 1) * sizeof *ds->vendor_rank);
        for (size_t i = 0; ds->vendor_rank && i < (size_t)ds->n * (size_t)K; i++) ds->vendor_rank[i] = -1;
    }
    if (!rows || !ds->vendor_rank) {
        free(rows);
        return HR_ENOMEM;
    }
    for (int i = 0; i < ds->n; i++) rows[i] = (key_row){ds->keys[i], i};
    qsort(rows, (size_t)ds->n, sizeof *rows, cmp_key_row);
    const char *suffix = cls == DATA_PRECISION_TF32 ? NULL : data_portable_precision_name(cls);
    char probe_key[1024];
    long line = 0;
    /* a line ends at \n, \r\n or a lone \r, and every line counts, blank ones too, so errors name the right one */
    for (char *ln = text, *rest; ln && *ln && !rc; ln = rest) {
        line++;
        char *end = ln + strcspn(ln, "\r\n");
        rest = *end ? end + 1 + (end[0] == '\r' && end[1] == '\n') : NULL;
        *end = '\0';
        size_t len = (size_t)(end - ln);
        if (!len || ln[0] == '#') continue;
        char *eq = strchr(ln, '=');
        if (!eq) {
            rc = hr_error(HR_EFORMAT, "%s:%ld: expected <problem key>=<kernel>;<kernel>;...", path, line);
            break;
        }
        *eq = '\0';
        if (suffix && snprintf(probe_key, sizeof probe_key, "%s_%s", ln, suffix) >= (int)sizeof probe_key) continue;
        key_row probe = {suffix ? probe_key : ln, 0}, *hit = bsearch(&probe, rows, (size_t)ds->n, sizeof *rows, cmp_key_row);
        if (!hit) continue; /* a problem the find-db skipped, or a class it was not asked under */
        const data_problem *p = &ds->problems[hit->row];
        int16_t *rank = ds->vendor_rank + (size_t)hit->row * (size_t)K;
        int16_t next = 0;
        for (char *s2 = NULL, *name = strtok_r(eq + 1, ";", &s2); name; name = strtok_r(NULL, ";", &s2)) {
            const char *const *k = bsearch(&name, ds->kernels, (size_t)K, sizeof *ds->kernels, cmp_name_index);
            /* an entry the problem's class refuses would be a pick outside the class */
            if (k && rank[k - (const char *const *)ds->kernels] < 0 && next < INT16_MAX &&
                data_portable_precision_allows(p->precision, p->dtype, name, strlen(name)))
                rank[k - (const char *const *)ds->kernels] = next++;
        }
    }
    free(rows);
    return rc;
}

int data_vendor_attach(data_select *ds, const char *fdb_path, int threads, int *found)
{
    *found = 0;
    /* the TF32 class's ranking (and every other data type's) first, then the strict and conversion classes' */
    static const int classes[] = {DATA_PRECISION_TF32, DATA_PRECISION_STRICT, DATA_PRECISION_CONVERSION};
    static const char *const exts[][2] = {{".heuristic.txt.bz2", ".heuristic.txt"},
                                          {".heuristic.strict.txt.bz2", ".heuristic.strict.txt"},
                                          {".heuristic.conversion.txt.bz2", ".heuristic.conversion.txt"}};
    int rc = HR_OK;
    for (int c = 0; c < 3 && !rc; c++)
        for (int e = 0; e < 2; e++) {
            char *path = sidecar_path(fdb_path, exts[c][e]);
            if (!path) return HR_OK;
            if (!hr_file_exists(path)) {
                free(path);
                continue;
            }
            char *text;
            size_t len;
            rc = data_read_file(path, threads, &text, &len);
            if (!rc) {
                rc = parse(ds, path, text, classes[c]);
                free(text);
            }
            free(path);
            *found |= !rc;
            break;
        }
    if (rc) {
        free(ds->vendor_rank);
        ds->vendor_rank = NULL;
        *found = 0;
    }
    return rc;
}
