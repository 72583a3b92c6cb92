/* Reading a table `heurist-collect gemm` wrote back into shapes and their timed configurations (gemm.h): the
 * candidate lists `heurist-collect verify` ranks with a table model on held-out shapes. */
#include "gemm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int collect_gemm_is_categorical(const char *column)
{
    for (int i = 0; i < COLLECT_GEMM_N_CATEGORICAL; i++)
        if (strcmp(collect_gemm_categorical_columns[i], column) == 0) return 1;
    return 0;
}

void collect_gemm_measured_free(collect_gemm_measured *p, int n)
{
    for (int i = 0; p && i < n; i++) free(p[i].rows);
    free(p);
}

static const char *const problem_columns[7] = {"M", "N", "K", "dtype", "trans_a", "trans_b", "batch"};

/* The collector's own columns of a row (21 in a table without the batch column); a table may carry more after
 * them (a group column joined in), which the reader skips. */
#define GEMM_ROW_FIELDS 22

/* One data row of n_fields fields (the header's count): the shape (its first six fields and, with `batched`,
 * the batch), the configuration, time, rank and workspace; the fields after those are not read. */
static int row_parse(char *line, int n_fields, int batched, collect_gemm_shape *s, collect_gemm_row *r)
{
    char *fld[GEMM_ROW_FIELDS];
    int nf = 0;
    for (char *c = line;;) {
        char *comma = strchr(c, ',');
        if (nf == n_fields)
            return collect_error(COLLECT_EFORMAT, "expected %d comma-separated fields (the header's), found more", n_fields);
        if (nf < GEMM_ROW_FIELDS) fld[nf] = c;
        nf++;
        if (!comma) break;
        *comma = '\0';
        c = comma + 1;
    }
    if (nf != n_fields)
        return collect_error(COLLECT_EFORMAT, "expected %d comma-separated fields (the header's), found %d", n_fields, nf);
    /* the problem columns as one shape line: each a single word */
    for (int i = 0; i < 6 + batched; i++)
        if (!fld[i][0] || strpbrk(fld[i], " \t#\r\n"))
            return collect_error(COLLECT_EFORMAT, "%s '%s': expected one word", problem_columns[i], fld[i]);
    char shape[512];
    snprintf(shape, sizeof shape, "%s %s %s %s %s %s %s", fld[0], fld[1], fld[2], fld[3], fld[4], fld[5],
             batched ? fld[6] : "");
    int rc = collect_gemm_shape_parse(shape, s);
    if (rc) return rc < 0 ? rc : collect_error(COLLECT_EFORMAT, "empty shape fields");
    char **k = fld + 6 + batched; /* the kernel columns, then time_us, heuristic_rank and workspace */
    int f[COLLECT_GEMM_N_FIELDS];
    for (int j = 0; j < COLLECT_GEMM_N_FIELDS; j++) {
        char *end;
        errno = 0;
        long v = strtol(k[j], &end, 10);
        if (end == k[j] || *end || errno || v < -1000000 || v > 1000000)
            return collect_error(COLLECT_EFORMAT, "%s '%s': expected an integer", collect_gemm_kernel_columns[j], k[j]);
        f[j] = (int)v;
    }
    if (collect_gemm_config_from_fields(f, &r->cfg))
        return collect_error(COLLECT_EFORMAT, "the configuration's fields name no cuBLASLt tile, stages or cluster id");
    char *end;
    char *time = k[COLLECT_GEMM_N_FIELDS], *rank = k[COLLECT_GEMM_N_FIELDS + 1], *ws = k[COLLECT_GEMM_N_FIELDS + 2];
    r->time_us = strtod(time, &end);
    if (end == time || *end || !(r->time_us > 0) || r->time_us > 1e12)
        return collect_error(COLLECT_EFORMAT, "time_us '%s': expected a positive number", time);
    r->heuristic_rank = -1;
    if (rank[0]) {
        long v = strtol(rank, &end, 10);
        if (*end || v < 0 || v > 1000000)
            return collect_error(COLLECT_EFORMAT, "heuristic_rank '%s': expected empty or an integer >= 0", rank);
        r->heuristic_rank = (int)v;
    }
    ws[strcspn(ws, "\r\n")] = '\0';
    unsigned long long w = strtoull(ws, &end, 10);
    if (end == ws || *end || ws[0] == '-') return collect_error(COLLECT_EFORMAT, "workspace '%s': expected bytes", ws);
    r->workspace = (size_t)w;
    return COLLECT_OK;
}

static int shape_equal(const collect_gemm_shape *a, const collect_gemm_shape *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->dtype == b->dtype && a->trans_a == b->trans_a &&
           a->trans_b == b->trans_b && a->batch == b->batch;
}

static int cmp_shape(const void *pa, const void *pb)
{
    const collect_gemm_shape *a = &((const collect_gemm_measured *)pa)->s, *b = &((const collect_gemm_measured *)pb)->s;
    long d[7] = {a->m - b->m, a->n - b->n, a->k - b->k, (long)a->dtype - (long)b->dtype, a->trans_a - b->trans_a,
                 a->trans_b - b->trans_b, a->batch - b->batch};
    for (int i = 0; i < 7; i++)
        if (d[i]) return d[i] < 0 ? -1 : 1;
    return 0;
}

static int append(collect_gemm_measured **p, int *n, int *cap, const collect_gemm_shape *s)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 64;
        collect_gemm_measured *np = realloc(*p, (size_t)nc * sizeof *np);
        if (!np) return COLLECT_ENOMEM;
        *p = np;
        *cap = nc;
    }
    (*p)[*n] = (collect_gemm_measured){*s, 0, 0, NULL};
    (*n)++;
    return COLLECT_OK;
}

static int row_append(collect_gemm_measured *m, const collect_gemm_row *r)
{
    if (m->n == m->cap) {
        int nc = m->cap ? 2 * m->cap : 32;
        collect_gemm_row *nr = realloc(m->rows, (size_t)nc * sizeof *nr);
        if (!nr) return COLLECT_ENOMEM;
        m->rows = nr;
        m->cap = nc;
    }
    m->rows[m->n++] = *r;
    return COLLECT_OK;
}

int collect_gemm_measured_read(const char *path, collect_gemm_measured **out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) return collect_error(COLLECT_EIO, "%s: %s", path, errno ? strerror(errno) : "cannot open");
    collect_gemm_measured *p = NULL;
    int n = 0, cap = 0, rc = COLLECT_OK;
    long lineno = 0;
    int n_fields = GEMM_ROW_FIELDS, batched = 1;
    char line[1024];
    while (gzgets(f, line, sizeof line)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            rc = collect_error(COLLECT_EFORMAT, "%s:%ld: line longer than %zu characters", path, lineno, sizeof line - 2);
            break;
        }
        if (lineno == 1) {
            /* the collector's header, with or without the batch column, then any extra columns
             * ("...,workspace,family") */
            const char *h = collect_gemm_csv_header(), *h1 = collect_gemm_csv_header_unbatched();
            size_t hl = strcspn(h, "\n"), h1l = strcspn(h1, "\n");
            if (strncmp(line, h1, h1l) == 0 && (line[h1l] == ',' || strcmp(line + h1l, "\n") == 0)) {
                batched = 0;
                n_fields = GEMM_ROW_FIELDS - 1;
                hl = h1l;
            } else if (strncmp(line, h, hl) != 0 || (line[hl] != ',' && strcmp(line + hl, "\n") != 0)) {
                rc = collect_error(COLLECT_EFORMAT, "%s:1: not the header row of a table heurist-collect gemm writes "
                                                    "(%.*s)", path, (int)hl, h);
                break;
            }
            for (const char *c = line + hl; line[hl] == ',' && *c; c++) n_fields += *c == ',';
            continue;
        }
        if (line[0] == '\n' || line[0] == '\r') continue;
        collect_gemm_shape s;
        collect_gemm_row r;
        if ((rc = row_parse(line, n_fields, batched, &s, &r))) {
            char why[512];
            snprintf(why, sizeof why, "%s", collect_last_error());
            rc = collect_error(COLLECT_EFORMAT, "%s:%ld: %s", path, lineno, why);
            break;
        }
        if ((n == 0 || !shape_equal(&p[n - 1].s, &s)) && append(&p, &n, &cap, &s)) {
            rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
            break;
        }
        if (row_append(&p[n - 1], &r)) {
            rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
            break;
        }
    }
    int gz_err = 0;
    const char *gz_msg = gzerror(f, &gz_err);
    if (!rc && gz_err != Z_OK && gz_err != Z_STREAM_END)
        rc = collect_error(COLLECT_EFORMAT, "%s:%ld: %s", path, lineno, gz_msg);
    gzclose(f);
    if (!rc && lineno == 0) rc = collect_error(COLLECT_EFORMAT, "%s: empty file", path);
    if (!rc && n > 1) {
        /* a shape's rows are consecutive: a shape seen twice is a damaged or concatenated table */
        collect_gemm_measured *sorted = malloc((size_t)n * sizeof *sorted);
        if (!sorted) rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
        else {
            memcpy(sorted, p, (size_t)n * sizeof *sorted);
            qsort(sorted, (size_t)n, sizeof *sorted, cmp_shape);
            for (int i = 1; i < n && !rc; i++)
                if (cmp_shape(&sorted[i - 1], &sorted[i]) == 0) {
                    char key[128];
                    collect_gemm_shape_key(&sorted[i].s, key, sizeof key);
                    rc = collect_error(COLLECT_EFORMAT, "%s: shape %s appears in two separate runs of rows", path, key);
                }
            free(sorted);
        }
    }
    if (rc) {
        collect_gemm_measured_free(p, n);
        return rc;
    }
    *out = p;
    *n_out = n;
    return COLLECT_OK;
}


int collect_gemm_model_values(const collect_gemm_model_api *api, const collect_gemm_shape *s,
                              const collect_gemm_config *cfg, const int *vendor_rank, int n, double *pv, double *kv)
{
    char text[7][32];
    snprintf(text[0], sizeof text[0], "%ld", s->m);
    snprintf(text[1], sizeof text[1], "%ld", s->n);
    snprintf(text[2], sizeof text[2], "%ld", s->k);
    snprintf(text[3], sizeof text[3], "%s", collect_gemm_dtype_name(s->dtype));
    snprintf(text[4], sizeof text[4], "%c", s->trans_a);
    snprintf(text[5], sizeof text[5], "%c", s->trans_b);
    snprintf(text[6], sizeof text[6], "%ld", s->batch);
    for (int j = 0; j < api->n_problem; j++) {
        const char *name = api->problem_column(j);
        int c = 0;
        while (c < 7 && strcmp(problem_columns[c], name) != 0) c++;
        if (c == 7) return collect_error(COLLECT_EINVAL, "the model's problem column '%s' is not a gemm table column", name);
        pv[j] = collect_gemm_is_categorical(name) ? api->category(name, text[c]) : strtod(text[c], NULL);
    }
    int col[64];
    if (api->n_kernel > 64) return collect_error(COLLECT_EINVAL, "the model has %d kernel columns", api->n_kernel);
    for (int j = 0; j < api->n_kernel; j++) {
        const char *name = api->kernel_column(j);
        col[j] = 0;
        while (col[j] < COLLECT_GEMM_N_FIELDS && strcmp(collect_gemm_kernel_columns[col[j]], name) != 0) col[j]++;
        if (col[j] == COLLECT_GEMM_N_FIELDS && strcmp(name, "vendor_rank") == 0) {
            if (!vendor_rank)
                return collect_error(COLLECT_EINVAL, "the model reads the vendor's rank of each candidate (kernel "
                                                     "column 'vendor_rank'): pass cuBLASLt's ranks");
            col[j] = -1;
        } else if (col[j] == COLLECT_GEMM_N_FIELDS)
            return collect_error(COLLECT_EINVAL, "the model's kernel column '%s' is not a gemm table column", name);
    }
    for (int i = 0; i < n; i++) {
        int f[COLLECT_GEMM_N_FIELDS];
        int rc = collect_gemm_config_fields(&cfg[i], f);
        if (rc) return rc;
        for (int j = 0; j < api->n_kernel; j++) {
            if (col[j] < 0) {
                kv[(size_t)i * api->n_kernel + j] = vendor_rank[i] >= 0 ? vendor_rank[i] : COLLECT_GEMM_UNLISTED;
                continue;
            }
            const char *name = collect_gemm_kernel_columns[col[j]];
            double v = f[col[j]];
            if (collect_gemm_is_categorical(name)) {
                char t[16];
                snprintf(t, sizeof t, "%d", f[col[j]]);
                v = api->category(name, t);
            }
            kv[(size_t)i * api->n_kernel + j] = v;
        }
    }
    return COLLECT_OK;
}

int collect_gemm_model_config(const collect_gemm_model_api *api, const char *(*category_name)(const char *column, int value),
                              const double *values, collect_gemm_config *cfg)
{
    int f[COLLECT_GEMM_N_FIELDS];
    for (int i = 0; i < COLLECT_GEMM_N_FIELDS; i++) {
        const char *name = collect_gemm_kernel_columns[i];
        int j = 0;
        while (j < api->n_kernel && strcmp(api->kernel_column(j), name) != 0) j++;
        if (j == api->n_kernel) return collect_error(COLLECT_EINVAL, "the model has no kernel column '%s'", name);
        double v = values[j];
        if (!(v == floor(v) && fabs(v) < 1e9))
            return collect_error(COLLECT_EINVAL, "the model's %s is %g, no integer", name, v);
        if (collect_gemm_is_categorical(name)) {
            const char *text = category_name(name, (int)v);
            char *end = NULL;
            long x = text ? strtol(text, &end, 10) : 0;
            if (!text || end == text || *end)
                return collect_error(COLLECT_EINVAL, "the model's %s is category %d, which it does not name as a number",
                                     name, (int)v);
            f[i] = (int)x;
        } else {
            f[i] = (int)v;
        }
    }
    return collect_gemm_config_from_fields(f, cfg);
}
