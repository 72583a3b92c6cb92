/* The verify report read back: rows by column name, resume, slices and summaries (verify.h). */
#include "verify.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* ---- reading ---- */

void collect_report_free(collect_report *r)
{
    for (int i = 0; r->rows && i < r->n; i++) {
        free(r->rows[i].key);
        free(r->rows[i].model);
        free(r->rows[i].source);
        free(r->rows[i].precision);
    }
    free(r->rows);
    memset(r, 0, sizeof *r);
}

/* The columns the reader knows, each with the names it goes by in conv and GEMM reports. */
enum {
    COL_KEY, COL_T_MODEL, COL_T_HEUR, COL_T_BEST, COL_DECIDE, COL_FIND, COL_HEUR_US, COL_T_LIST, COL_CANDIDATES,
    COL_MODEL, COL_SOURCE, COL_PRECISION, COL_K, COL_TOPK_TIMINGS, COL_T_TOPK, COL_TOPK_MS, COL_T_VTOPK,
    COL_VTOPK_MS, COL_FIND_ALGOS, COL_FIND_KERNEL, COL_COUNT
};
static const char *const col_names[COL_COUNT][2] = {
    {"key", "key"}, {"t_model_ms", "t_model_us"}, {"t_heur_ms", "t_heur_us"}, {"t_best_ms", "t_best_us"},
    {"decide_us", "decide_us"}, {"find_ms", "autotune_ms"}, {"heur_us", "heur_us"}, {"", "t_list_us"},
    {"", "candidates"}, {"model_name", "model_name"}, {"source", "source"}, {"precision", "precision"},
    {"k", "k"}, {"topk_timings", "topk_timings"}, {"t_topk_ms", "t_topk_us"}, {"topk_ms", "topk_ms"},
    {"t_vendor_topk_ms", "t_vendor_topk_us"}, {"vendor_topk_ms", "vendor_topk_ms"}, {"find_algos", ""},
    {"find_kernel_ms", ""},
};
/* the columns every report has (the first twelve of every version) */
static const int col_required[] = {COL_KEY, COL_T_MODEL, COL_T_HEUR, COL_T_BEST, COL_DECIDE, COL_FIND};

#define MAX_COLUMNS 64

/* Splits line at its tabs into fld[0..max): the number of fields, max + 1 when there are more. */
static int split_tabs(char *line, char **fld, int max)
{
    int n = 0;
    for (char *c = line;;) {
        if (n == max) return max + 1;
        fld[n++] = c;
        char *t = strchr(c, '\t');
        if (!t) return n;
        *t = '\0';
        c = t + 1;
    }
}

/* The bounds of a report's numbers: each finite and within 0 .. VALUE_MAX, a time (t_*) other than 0 at least
 * TIME_MIN, so that every ratio of two times lies within 1e-21 .. 1e21 and the summaries' logarithms, sums and
 * bootstrap stay finite and positive; kernel times in ms or us, and costs, lie far inside. */
#define VALUE_MAX 1e12
#define TIME_MIN 1e-9

/* A number of a row: "-" (absent) gives 0, unless required; a time below TIME_MIN and a fraction where whole are
 * refused. */
static int row_number(const char *path, int lineno, const char *name, const char *s, int required, int time,
                      int whole, double *out)
{
    if (strcmp(s, "-") == 0 && !required) {
        *out = 0;
        return COLLECT_OK;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return collect_error(COLLECT_EFORMAT, "%s:%d: column %s: '%s' is not a number", path, lineno, name, s);
    if (!(v >= 0 && v <= VALUE_MAX))
        return collect_error(COLLECT_EFORMAT, "%s:%d: column %s: '%s' is outside 0 .. %g", path, lineno, name, s,
                             VALUE_MAX);
    if (time && v > 0 && v < TIME_MIN)
        return collect_error(COLLECT_EFORMAT, "%s:%d: column %s: the time '%s' is below %g", path, lineno, name, s,
                             TIME_MIN);
    if (whole && (v != floor(v) || v > INT_MAX))
        return collect_error(COLLECT_EFORMAT, "%s:%d: column %s: '%s' is not a whole number of at most %d", path,
                             lineno, name, s, INT_MAX);
    *out = v;
    return COLLECT_OK;
}

static char *dup_or(const char *s, const char *def)
{
    return strdup(s ? s : def);
}

/* Parses the header into col[] (the index of each known column, -1 when absent). */
static int header_parse(const char *path, char *line, collect_report_kind *kind, int col[COL_COUNT], int *n_cols)
{
    char *fld[MAX_COLUMNS];
    *n_cols = split_tabs(line, fld, MAX_COLUMNS);
    if (*n_cols > MAX_COLUMNS)
        return collect_error(COLLECT_EFORMAT, "%s: the header has more than %d columns", path, MAX_COLUMNS);
    int conv = 0, gemm = 0;
    for (int c = 0; c < *n_cols; c++) {
        conv |= strcmp(fld[c], "t_model_ms") == 0;
        gemm |= strcmp(fld[c], "t_model_us") == 0;
    }
    if (conv == gemm)
        return collect_error(COLLECT_EFORMAT, "%s: the header names neither t_model_ms nor t_model_us: not a verify report",
                             path);
    *kind = conv ? COLLECT_REPORT_CONV : COLLECT_REPORT_GEMM;
    for (int j = 0; j < COL_COUNT; j++) {
        col[j] = -1;
        for (int c = 0; c < *n_cols && col[j] < 0 && *col_names[j][*kind]; c++)
            if (strcmp(fld[c], col_names[j][*kind]) == 0) col[j] = c;
    }
    for (size_t j = 0; j < sizeof col_required / sizeof *col_required; j++)
        if (col[col_required[j]] < 0)
            return collect_error(COLLECT_EFORMAT, "%s: the header has no column %s", path,
                                 col_names[col_required[j]][*kind]);
    return COLLECT_OK;
}

static int row_parse(const char *path, int lineno, char *line, collect_report_kind kind, const int col[COL_COUNT],
                     int n_cols, collect_report_row *row)
{
    memset(row, 0, sizeof *row);
    char *fld[MAX_COLUMNS];
    int nf = split_tabs(line, fld, MAX_COLUMNS);
    if (nf != n_cols)
        return collect_error(COLLECT_EFORMAT, "%s:%d: %s%d tab-separated columns, the header has %d", path, lineno,
                             nf > MAX_COLUMNS ? "more than " : "", nf > MAX_COLUMNS ? MAX_COLUMNS : nf, n_cols);
    double v[COL_COUNT];
    for (int j = COL_T_MODEL; j < COL_COUNT; j++) {
        v[j] = 0;
        if (j == COL_MODEL || j == COL_SOURCE || j == COL_PRECISION || col[j] < 0) continue;
        int required = j <= COL_DECIDE, whole = j == COL_K || j == COL_TOPK_TIMINGS || j == COL_FIND_ALGOS;
        int time = j == COL_T_MODEL || j == COL_T_HEUR || j == COL_T_BEST || j == COL_T_LIST || j == COL_T_TOPK ||
                   j == COL_T_VTOPK;
        int rc = row_number(path, lineno, col_names[j][kind], fld[col[j]], required, time, whole, &v[j]);
        if (rc) return rc;
    }
    collect_verify_row *r = &row->v;
    r->t_model = v[COL_T_MODEL];
    r->t_heur = v[COL_T_HEUR];
    r->t_best = v[COL_T_BEST];
    r->decide_us = v[COL_DECIDE];
    r->find_ms = v[COL_FIND];
    r->t_list = v[COL_T_LIST];
    r->k = (int)v[COL_K];
    r->topk_timings = (int)v[COL_TOPK_TIMINGS];
    r->t_topk = v[COL_T_TOPK];
    r->topk_ms = v[COL_TOPK_MS];
    r->t_vtopk = v[COL_T_VTOPK];
    r->vtopk_ms = v[COL_VTOPK_MS];
    r->find_algos = (int)v[COL_FIND_ALGOS];
    r->find_kernel_ms = v[COL_FIND_KERNEL];
    row->heur_us = v[COL_HEUR_US];
    row->candidates = v[COL_CANDIDATES];
    if (!(r->t_model > 0 && r->t_heur > 0 && r->t_best > 0))
        return collect_error(COLLECT_EFORMAT, "%s:%d: a pick's time is not positive", path, lineno);
    if (r->find_algos > 0 && !(r->find_ms > 0))
        return collect_error(COLLECT_EFORMAT, "%s:%d: cudnnFind's %d algorithms without its time (find_ms)", path,
                             lineno, r->find_algos);
    if (r->k < 0 || (r->k > 0 && !(r->t_topk > 0 && r->t_vtopk > 0 && r->topk_timings >= 1)))
        return collect_error(COLLECT_EFORMAT, "%s:%d: a shortlist of k %d without its picks' times", path, lineno, r->k);
    row->key = strdup(fld[col[COL_KEY]]);
    row->model = dup_or(col[COL_MODEL] >= 0 ? fld[col[COL_MODEL]] : NULL, "-");
    row->source = dup_or(col[COL_SOURCE] >= 0 ? fld[col[COL_SOURCE]] : NULL, "-");
    row->precision = dup_or(col[COL_PRECISION] >= 0 ? fld[col[COL_PRECISION]] : NULL, "-");
    if (!row->key || !row->model || !row->source || !row->precision)
        return collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
    return COLLECT_OK;
}

/* One line of f into *buf (grown as needed), its newline kept: its length, -1 at the end of the file or on a read
 * error (gzerror tells which), -2 out of memory, -3 a NUL byte in the line (gzgets copies past it, so strlen would
 * join the rest of the line to the next one; gztell counts the bytes gzgets took). gzgets reads a plain file as it
 * is, so a report may be gzip-compressed or not. */
static ssize_t gz_getline(char **buf, size_t *cap, gzFile f)
{
    size_t len = 0;
    for (;;) {
        if (*cap - len < 2) {
            size_t nc = *cap ? 2 * *cap : 4096;
            char *nb = realloc(*buf, nc);
            if (!nb) return -2;
            *buf = nb;
            *cap = nc;
        }
        z_off_t at = gztell(f);
        if (!gzgets(f, *buf + len, (int)(*cap - len > (size_t)1 << 30 ? (size_t)1 << 30 : *cap - len)))
            return len ? (ssize_t)len : -1;
        size_t got = strlen(*buf + len);
        if ((z_off_t)got != gztell(f) - at) return -3;
        len += got;
        if (len > 0 && (*buf)[len - 1] == '\n') return (ssize_t)len;
    }
}

int collect_report_read(const char *path, collect_report *r)
{
    memset(r, 0, sizeof *r);
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) return collect_error(COLLECT_EIO, "%s: %s", path, errno ? strerror(errno) : "cannot open");
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = COLLECT_OK, have_header = 0, cap_rows = 0, n_cols = 0, col[COL_COUNT];
    while ((len = gz_getline(&buf, &cap, f)) >= 0) {
        lineno++;
        if (len > 0 && buf[len - 1] == '\n') buf[--len] = '\0';
        else if (buf[0] != '#') {
            rc = collect_error(COLLECT_EFORMAT, "%s:%d: the last line is cut short (a run that was stopped; "
                                                "verify --resume finishes it)", path, lineno);
            break;
        }
        if (len > 0 && buf[len - 1] == '\r') buf[--len] = '\0';
        if (buf[0] == '#' || len == 0) continue;
        if (!have_header) {
            if (strncmp(buf, "key\t", 4) != 0) {
                rc = collect_error(COLLECT_EFORMAT, "%s:%d: expected the header row (key<TAB>model...)", path, lineno);
                break;
            }
            if ((rc = header_parse(path, buf, &r->kind, col, &n_cols))) break;
            have_header = 1;
            continue;
        }
        if (r->n == cap_rows) {
            int nc = cap_rows ? 2 * cap_rows : 256;
            collect_report_row *nr = realloc(r->rows, (size_t)nc * sizeof *nr);
            if (!nr) {
                rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                break;
            }
            r->rows = nr;
            cap_rows = nc;
        }
        rc = row_parse(path, lineno, buf, r->kind, col, n_cols, &r->rows[r->n]);
        r->n++; /* a failed row's strings are freed with the others */
        if (rc) break;
    }
    int zerr = Z_OK;
    if (!rc && len == -2) rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
    if (!rc && len == -3)
        rc = collect_error(COLLECT_EFORMAT, "%s:%d: a NUL byte: not a text report", path, lineno + 1);
    if (!rc && (gzerror(f, &zerr), zerr != Z_OK && zerr != Z_STREAM_END))
        rc = collect_error(COLLECT_EIO, "%s: read failed (%s)", path, gzerror(f, &zerr));
    if (!rc && !have_header) rc = collect_error(COLLECT_EFORMAT, "%s: no header row: not a verify report", path);
    free(buf);
    gzclose(f);
    if (rc) collect_report_free(r);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int collect_report_resume(const char *path, const char *header, char ***keys, int *n, int *has_header)
{
    *keys = NULL;
    *n = 0;
    *has_header = 0;
    /* the columns of `header`, to read each finished row as collect_report_read does */
    char *head = strdup(header);
    if (!head) return collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
    head[strcspn(head, "\n")] = '\0';
    collect_report_kind kind;
    int col[COL_COUNT], n_cols, rc = header_parse("the verify header", head, &kind, col, &n_cols);
    free(head);
    if (rc) return rc;
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT ? COLLECT_OK : collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    long keep = 0;
    int cap_keys = 0, lineno = 0;
    while ((len = getline(&buf, &cap, f)) >= 0) {
        lineno++;
        if (buf[len - 1] != '\n' || buf[0] == '#') break; /* a cut line, or an earlier run's summary */
        if (strlen(buf) != (size_t)len) {
            rc = collect_error(COLLECT_EFORMAT, "%s:%d: a NUL byte: not a text report", path, lineno);
            break;
        }
        if (lineno == 1) {
            if (strcmp(buf, header) != 0) {
                rc = collect_error(COLLECT_EFORMAT, "%s: its header is not this verify's (another build or version): "
                                                    "resume into a new report", path);
                break;
            }
            *has_header = 1;
            keep += len;
            continue;
        }
        keep += len;
        buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '\r') buf[--len] = '\0';
        if (len == 0) continue; /* a blank line, as collect_report_read skips */
        if (*n == cap_keys) {
            int nc = cap_keys ? 2 * cap_keys : 256;
            char **nk = realloc(*keys, (size_t)nc * sizeof *nk);
            if (!nk) {
                rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                break;
            }
            *keys = nk;
            cap_keys = nc;
        }
        /* a finished row that does not read would fail the resumed run's summary at its end: refused here */
        collect_report_row row;
        rc = row_parse(path, lineno, buf, kind, col, n_cols, &row);
        if (!rc) {
            (*keys)[(*n)++] = row.key;
            row.key = NULL;
        }
        free(row.key);
        free(row.model);
        free(row.source);
        free(row.precision);
        if (rc) break;
    }
    free(buf);
    fclose(f);
    if (!rc && truncate(path, keep)) rc = collect_error(COLLECT_EIO, "%s: cannot cut back: %s", path, strerror(errno));
    if (!rc && *n > 0) {
        qsort(*keys, (size_t)*n, sizeof **keys, cmp_str);
        int m = 1;
        for (int i = 1; i < *n; i++) {
            if (strcmp((*keys)[i], (*keys)[m - 1]) == 0) free((*keys)[i]);
            else (*keys)[m++] = (*keys)[i];
        }
        *n = m;
    }
    if (rc) {
        for (int i = 0; i < *n; i++) free((*keys)[i]);
        free(*keys);
        *keys = NULL;
        *n = 0;
        *has_header = 0;
    }
    return rc;
}

/* ---- slices ---- */

int collect_report_field(const collect_report *r, int row, const char *field, char *buf, size_t size)
{
    const collect_report_row *w = &r->rows[row];
    const char *v = NULL;
    if (strcmp(field, "model") == 0) v = w->model;
    else if (strcmp(field, "source") == 0) v = w->source;
    else if (strcmp(field, "precision") == 0) v = w->precision;
    if (v) {
        snprintf(buf, size, "%s", v);
        return COLLECT_OK;
    }
    if (r->kind == COLLECT_REPORT_CONV) {
        collect_conv cv;
        int known = !strcmp(field, "dir") || !strcmp(field, "dtype") || !strcmp(field, "dims") || !strcmp(field, "groups");
        if (!known) return collect_error(COLLECT_EINVAL, "slice field '%s': expected model, source, precision, dir, "
                                                         "dtype, dims or groups", field);
        if (collect_conv_from_key(w->key, strlen(w->key), &cv)) {
            snprintf(buf, size, "?");
            return COLLECT_OK;
        }
        static const char *const dirs[] = {"F", "B", "W"}, *const types[] = {"FP32", "FP16", "BF16"};
        if (!strcmp(field, "dir")) v = dirs[cv.dir];
        else if (!strcmp(field, "dtype")) v = types[cv.dtype];
        else if (!strcmp(field, "dims")) v = cv.nd == 3 ? "3d" : "2d";
        else v = cv.groups == 1 ? "dense" : cv.groups == cv.c ? "depthwise" : "grouped";
        snprintf(buf, size, "%s", v);
        return COLLECT_OK;
    }
    if (strcmp(field, "dtype") && strcmp(field, "trans"))
        return collect_error(COLLECT_EINVAL, "slice field '%s': expected model, source, dtype or trans", field);
    /* the key: M,N,K,dtype,trans_a,trans_b */
    const char *f[6] = {w->key};
    int nf = 1;
    for (const char *c = w->key; *c && nf < 6; c++)
        if (*c == ',') f[nf++] = c + 1;
    if (nf < 6) {
        snprintf(buf, size, "?");
        return COLLECT_OK;
    }
    if (!strcmp(field, "dtype")) snprintf(buf, size, "%.*s", (int)(f[4] - f[3] - 1), f[3]);
    else snprintf(buf, size, "%c%c", f[4][0], f[5][0]);
    return COLLECT_OK;
}

/* ---- summaries ---- */

typedef struct group {
    char name[256];
    int n;
    int *rows;
} group;

/* The rows of model `model` whose spec fields (a '+'-joined list) give each value: groups in order of value. */
static int group_rows(const collect_report *r, const char *model, const char *spec, group **out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    group *g = NULL;
    int n = 0, rc = COLLECT_OK;
    for (int i = 0; i < r->n && !rc; i++) {
        if (strcmp(r->rows[i].model, model)) continue;
        char name[256] = "", field[64], val[128];
        const char *s = spec;
        while (*s) {
            size_t w = strcspn(s, "+");
            snprintf(field, sizeof field, "%.*s", (int)w, s);
            if ((rc = collect_report_field(r, i, field, val, sizeof val))) break;
            size_t used = strlen(name);
            snprintf(name + used, sizeof name - used, "%s%s", used ? "+" : "", val);
            s += w + (s[w] == '+');
        }
        if (rc) break;
        int j = 0;
        while (j < n && strcmp(g[j].name, name)) j++;
        if (j == n) {
            group *ng = realloc(g, (size_t)(n + 1) * sizeof *ng);
            if (!ng) {
                rc = collect_error(COLLECT_ENOMEM, "summarize: out of memory");
                break;
            }
            g = ng;
            memset(&g[n], 0, sizeof g[n]);
            snprintf(g[n].name, sizeof g[n].name, "%s", name);
            if (!(g[n].rows = malloc((size_t)r->n * sizeof *g[n].rows))) {
                rc = collect_error(COLLECT_ENOMEM, "summarize: out of memory");
                break;
            }
            n++;
        }
        g[j].rows[g[j].n++] = i;
    }
    /* by value, so that slices print in a stable order */
    for (int a = 1; a < n && !rc; a++)
        for (int b = a; b > 0 && strcmp(g[b - 1].name, g[b].name) > 0; b--) {
            group t = g[b];
            g[b] = g[b - 1];
            g[b - 1] = t;
        }
    if (rc) {
        for (int j = 0; j < n; j++) free(g[j].rows);
        free(g);
        return rc;
    }
    *out = g;
    *n_out = n;
    return COLLECT_OK;
}

static void groups_free(group *g, int n)
{
    for (int j = 0; j < n; j++) free(g[j].rows);
    free(g);
}

/* The summary of the listed rows, with the bootstrap intervals of the single pick's and the shortlist's
 * geometric-mean speed-ups (resamples 0: none, NAN) and the index of the worst single pick. */
typedef struct slice_summary {
    collect_verify_summary s;
    double lo, hi, topk_lo, topk_hi;
    int worst;                   /* row index */
    int k;                       /* the longest shortlist asked */
    double heur_us, candidates;  /* means */
    int n_find_algos;            /* rows with cudnnFind's algorithm count (find_algos > 0) */
    double find_algos;           /* their mean count */
    double find_kernel_share;    /* their summed find_kernel_ms over their summed find_ms */
} slice_summary;

static int slice_summarize(const collect_report *r, const int *rows, int n, double noise, int resamples,
                           uint64_t seed, slice_summary *out)
{
    collect_verify_row *v = malloc((size_t)n * sizeof *v);
    double *sp = malloc((size_t)n * sizeof *sp), *tk = malloc((size_t)n * sizeof *tk);
    int rc = COLLECT_OK, n_tk = 0;
    if (!v || !sp || !tk) rc = collect_error(COLLECT_ENOMEM, "summarize: out of memory");
    out->worst = rows[0];
    out->k = 0;
    out->heur_us = out->candidates = 0;
    out->n_find_algos = 0;
    double algos = 0, kernel_ms = 0, find_ms = 0;
    for (int i = 0; !rc && i < n; i++) {
        const collect_report_row *w = &r->rows[rows[i]];
        v[i] = w->v;
        sp[i] = v[i].t_heur / v[i].t_model;
        if (sp[i] < r->rows[out->worst].v.t_heur / r->rows[out->worst].v.t_model) out->worst = rows[i];
        if (v[i].k > 0) tk[n_tk++] = v[i].t_heur / v[i].t_topk;
        if (v[i].k > out->k) out->k = v[i].k;
        out->heur_us += w->heur_us / n;
        out->candidates += w->candidates / n;
        if (w->v.find_algos > 0) {
            out->n_find_algos++;
            algos += w->v.find_algos;
            kernel_ms += w->v.find_kernel_ms;
            find_ms += w->v.find_ms;
        }
    }
    out->find_algos = out->n_find_algos ? algos / out->n_find_algos : 0;
    out->find_kernel_share = out->n_find_algos ? kernel_ms / find_ms : 0;
    if (!rc) rc = collect_verify_summarize(v, n, noise, &out->s);
    out->lo = out->hi = out->topk_lo = out->topk_hi = NAN;
    if (!rc && resamples > 0) rc = collect_bootstrap_geomean(sp, n, resamples, seed, &out->lo, &out->hi);
    if (!rc && resamples > 0 && n_tk > 0)
        rc = collect_bootstrap_geomean(tk, n_tk, resamples, seed, &out->topk_lo, &out->topk_hi);
    free(v);
    free(sp);
    free(tk);
    return rc;
}

/* The distinct model names of the report, in order of first row. */
static int models_of(const collect_report *r, const char ***names, int *n)
{
    *names = malloc((size_t)(r->n ? r->n : 1) * sizeof **names);
    *n = 0;
    if (!*names) return collect_error(COLLECT_ENOMEM, "summarize: out of memory");
    for (int i = 0; i < r->n; i++) {
        int j = 0;
        while (j < *n && strcmp((*names)[j], r->rows[i].model)) j++;
        if (j == *n) (*names)[(*n)++] = r->rows[i].model;
    }
    return COLLECT_OK;
}

/* One model's summary as '#'-prefixed lines (prefix "# ") or indented ones (prefix "  "). */
static void summary_lines(FILE *f, const collect_report *r, const slice_summary *x, double noise, const char *p)
{
    const collect_verify_summary *s = &x->s;
    int conv = r->kind == COLLECT_REPORT_CONV;
    const char *what = conv ? "problems" : "shapes", *vendor = conv ? "cuDNN's heuristic" : "cuBLASLt's heuristic";
    fprintf(f, "%s%s: %d\n", p, what, s->n);
    fprintf(f, "%sspeed-up over %s%s: geometric mean %.4f (p10 %.4f, median %.4f, p90 %.4f)\n", p, vendor,
            conv ? "" : " (first pick)", s->speedup_geomean, s->speedup_p10, s->speedup_p50, s->speedup_p90);
    if (isfinite(x->lo))
        fprintf(f, "%s95%% bootstrap interval of the geometric mean: %.4f - %.4f\n", p, x->lo, x->hi);
    fprintf(f, "%sworst speed-up %.4f (%s)\n", p, s->speedup_worst, r->rows[x->worst].key);
    if (conv) {
        fprintf(f, "%sefficiency against the fresh best: model %.4f, heuristic %.4f\n", p, s->efficiency_mean,
                s->heur_efficiency_mean);
    } else {
        fprintf(f, "%sefficiency against the best re-timed: model %.4f, heuristic %.4f", p, s->efficiency_mean,
                s->heur_efficiency_mean);
        if (s->n_list) fprintf(f, ", best of the heuristic's list %.4f", s->list_efficiency_mean);
        fprintf(f, "\n");
        if (s->n_list)
            fprintf(f, "%sautotuning over the heuristic's list: speed-up over its first pick %.4f (geometric mean)\n", p,
                    s->list_speedup_geomean);
    }
    fprintf(f, "%sslower than the heuristic by more than x%.4f: %.4f; faster by more: %.4f\n", p, noise, s->share_slower,
            s->share_faster);
    if (conv)
        fprintf(f, "%sdecision time: model %.2f us per problem; cudnnFind %.2f ms per problem (%d timed)\n", p,
                s->decide_us_mean, s->n_find ? s->find_ms_mean * s->n / s->n_find : 0.0, s->n_find);
    if (conv && x->n_find_algos)
        fprintf(f, "%scudnnFind ran %.2f algorithms a problem (%d problems); their times as it reports them: %.4f of "
                   "its wall time\n", p, x->find_algos, x->n_find_algos, x->find_kernel_share);
    if (!conv)
        fprintf(f, "%sdecision: model %.2f us a shape (%.1f candidates ranked; a model reading cuBLASLt's ranks needs "
                   "the heuristic call too); heuristic call %.1f us; autotuning the list %.2f ms\n",
                p, s->decide_us_mean, x->candidates, x->heur_us, s->n_find ? s->find_ms_mean * s->n / s->n_find : 0.0);
    if (s->n_topk) {
        fprintf(f, "%sshortlist of %d (%d %s; the vendor's pick added on %.4f of them): efficiency against the "
                   "fresh best: model top-k %.4f, vendor top-k %.4f\n",
                p, x->k, s->n_topk, what, s->share_topk_extra, s->topk_efficiency_mean, s->vtopk_efficiency_mean);
        fprintf(f, "%sshortlist speed-up over the heuristic's single pick: model top-k %.4f", p, s->topk_speedup_geomean);
        if (isfinite(x->topk_lo)) fprintf(f, " (95%% interval %.4f - %.4f)", x->topk_lo, x->topk_hi);
        fprintf(f, ", worst %.4f; vendor top-k %.4f; slower than the single pick by more than x%.4f: %.4f\n",
                s->topk_speedup_worst, s->vtopk_speedup_geomean, noise, s->share_topk_slower);
        fprintf(f, "%sshortlist timing: model %.3f ms, vendor %.3f ms a problem", p, s->topk_ms_mean, s->vtopk_ms_mean);
        if (isfinite(s->topk_find_ratio))
            fprintf(f, "; %.4f and %.4f of the exhaustive search's time (%s)", s->topk_find_ratio, s->vtopk_find_ratio,
                    conv ? "cudnnFind" : "timing the whole list");
        fprintf(f, "\n");
    }
}

int collect_report_tail(FILE *f, const collect_report *r, double noise_ratio)
{
    const char **models;
    int n_models;
    int rc = models_of(r, &models, &n_models);
    for (int m = 0; !rc && m < n_models; m++) {
        group *g;
        int ng;
        if ((rc = group_rows(r, models[m], "model", &g, &ng))) break;
        slice_summary x;
        rc = slice_summarize(r, g[0].rows, g[0].n, noise_ratio, 0, 0, &x);
        if (!rc) {
            if (strcmp(models[m], "-")) fprintf(f, "# model %s\n", models[m]);
            summary_lines(f, r, &x, noise_ratio, "# ");
        }
        groups_free(g, ng);
    }
    free(models);
    return rc;
}

int collect_report_finish(FILE *fo, const char *out, const char *item, int measured, double seconds, int n_parts,
                          const char *const *part_names, const double *part, double noise_ratio)
{
    if (fclose(fo)) return collect_error(COLLECT_EIO, "%s: write failed", out);
    collect_report rep;
    int rc = collect_report_read(out, &rep);
    if (rc) return rc;
    if (rep.n == 0) {
        collect_report_free(&rep);
        printf("no %s verified\n", item);
        return COLLECT_OK;
    }
    if (!(fo = fopen(out, "a"))) {
        collect_report_free(&rep);
        return collect_error(COLLECT_EIO, "%s: cannot open for writing", out);
    }
    char times[512];
    int tw = snprintf(times, sizeof times, "# time a %s (this run, %d %ss): %.1f ms", item, measured, item,
                      measured ? seconds * 1e3 / measured : 0.0);
    for (int k = 0; k < n_parts; k++)
        tw += snprintf(times + tw, sizeof times - (size_t)tw, "%s %s %.2f", k ? "," : ";", part_names[k],
                       measured ? part[k] * 1e3 / measured : 0.0);
    snprintf(times + tw, sizeof times - (size_t)tw, " ms\n");
    rc = collect_report_tail(fo, &rep, noise_ratio);
    if (!rc) rc = collect_report_tail(stdout, &rep, noise_ratio);
    collect_report_free(&rep);
    if (!rc) {
        fputs(times, fo);
        fputs(times, stdout);
    }
    if (fclose(fo) && !rc) rc = collect_error(COLLECT_EIO, "%s: write failed", out);
    return rc;
}

static void slice_header(FILE *f, int topk)
{
    fprintf(f, "  %-28s %6s %8s %17s %8s %8s %8s %8s %8s", "value", "n", "speedup", "95% interval", "worst", "eff",
            "eff_heur", "slower", "faster");
    if (topk) fprintf(f, " %8s %8s %8s %8s", "eff_topk", "eff_vtop", "topk_slw", "topk/fnd");
    fprintf(f, "\n");
}

static void slice_line(FILE *f, const char *name, const slice_summary *x, int topk)
{
    const collect_verify_summary *s = &x->s;
    fprintf(f, "  %-28s %6d %8.4f %8.4f-%-8.4f %8.4f %8.4f %8.4f %8.4f %8.4f", name, s->n, s->speedup_geomean, x->lo,
            x->hi, s->speedup_worst, s->efficiency_mean, s->heur_efficiency_mean, s->share_slower, s->share_faster);
    if (topk) {
        if (s->n_topk)
            fprintf(f, " %8.4f %8.4f %8.4f %8.4f", s->topk_efficiency_mean, s->vtopk_efficiency_mean,
                    s->share_topk_slower, s->topk_find_ratio);
        else
            fprintf(f, " %8s %8s %8s %8s", "-", "-", "-", "-");
    }
    fprintf(f, "\n");
}

int collect_report_summarize(FILE *f, const collect_report *r, double noise_ratio, int resamples, uint64_t seed,
                             const char *by)
{
    if (r->n < 1) return collect_error(COLLECT_EINVAL, "summarize: the report has no row");
    const char **models;
    int n_models;
    int rc = models_of(r, &models, &n_models);
    int topk = 0;
    for (int i = 0; i < r->n; i++) topk |= r->rows[i].v.k > 0;
    for (int m = 0; !rc && m < n_models; m++) {
        group *g;
        int ng;
        if ((rc = group_rows(r, models[m], "model", &g, &ng))) break;
        slice_summary x;
        rc = slice_summarize(r, g[0].rows, g[0].n, noise_ratio, resamples, seed, &x);
        groups_free(g, ng);
        if (rc) break;
        fprintf(f, "model %s (bootstrap: %d resamples, seed %llu)\n", models[m], resamples, (unsigned long long)seed);
        summary_lines(f, r, &x, noise_ratio, "  ");
        for (const char *s = by; s && *s && !rc;) {
            size_t w = strcspn(s, ",");
            char spec[128];
            snprintf(spec, sizeof spec, "%.*s", (int)w, s);
            s += w + (s[w] == ',');
            if (!*spec) continue;
            if ((rc = group_rows(r, models[m], spec, &g, &ng))) break;
            fprintf(f, "by %s:\n", spec);
            slice_header(f, topk);
            for (int j = 0; j < ng && !rc; j++) {
                rc = slice_summarize(r, g[j].rows, g[j].n, noise_ratio, resamples, seed, &x);
                if (!rc) slice_line(f, g[j].name, &x, topk);
            }
            groups_free(g, ng);
        }
        fprintf(f, "\n");
    }
    free(models);
    return rc;
}
