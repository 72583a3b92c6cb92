/* What verify decides on the CPU: problem lists with their tags, the kernels a precision class allows, the
 * candidates of the cheap mode (a collected find-db), rankings and shortlists, GEMM families (verify.h). */
#include "verify.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/portable.h"

/* ---- problem lists ---- */

void collect_problems_free(collect_problem *p, int n)
{
    for (int i = 0; p && i < n; i++) {
        free(p[i].key);
        free(p[i].source);
    }
    free(p);
}

int collect_precision_parse(const char *name, size_t len)
{
    for (int c = 0; c < DATA_PRECISION_COUNT; c++) {
        const char *s = data_portable_precision_name(c);
        if (strlen(s) == len && memcmp(s, name, len) == 0) return c;
    }
    return -1;
}

/* Splits line in place into at most max fields, at each tab for a table, else at runs of whitespace;
 * returns their count. */
static int split_fields(char *line, int table, char **fld, int max)
{
    int n = 0;
    char *c = line;
    if (table) {
        while (n < max) {
            fld[n++] = c;
            char *t = strchr(c, '\t');
            if (!t) break;
            *t = '\0';
            c = t + 1;
        }
        return n;
    }
    while (n < max) {
        while (*c && isspace((unsigned char)*c)) c++;
        if (!*c) break;
        fld[n++] = c;
        while (*c && !isspace((unsigned char)*c)) c++;
        if (!*c) break;
        *c++ = '\0';
    }
    return n;
}

static int problem_add(collect_problem **p, int *n, int *cap, const char *key, const char *source, int precision)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 256;
        collect_problem *np = realloc(*p, (size_t)nc * sizeof *np);
        if (!np) return COLLECT_ENOMEM;
        *p = np;
        *cap = nc;
    }
    collect_problem *e = &(*p)[*n];
    e->key = strdup(key);
    e->source = strdup(source);
    e->precision = precision;
    if (!e->key || !e->source) {
        free(e->key);
        free(e->source);
        return COLLECT_ENOMEM;
    }
    (*n)++;
    return COLLECT_OK;
}

int collect_problems_read(const char *path, const char *default_source, collect_problem **out, int *n)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int cap_p = 0, rc = COLLECT_OK, lineno = 0, table = -1;
    int col_key = 0, col_src = -1, col_prec = -1, n_cols = 0;
    enum { MAX_COLS = 64 };
    while ((len = getline(&buf, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        const char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        if (!*s || *s == '#') continue;
        char *fld[MAX_COLS];
        if (table < 0) {
            table = strncmp(buf, "key\t", 4) == 0;
            if (table) {
                /* the header: where the key, the source and the class are */
                n_cols = split_fields(buf, 1, fld, MAX_COLS);
                static const char *const src_names[] = {"source", "network", "family"};
                for (int pref = 2; pref >= 0; pref--)
                    for (int c = 0; c < n_cols; c++)
                        if (strcmp(fld[c], src_names[pref]) == 0) col_src = c;
                for (int c = 0; c < n_cols; c++)
                    if (strcmp(fld[c], "precision") == 0) col_prec = c;
                continue;
            }
        }
        int nf = split_fields(buf, table, fld, MAX_COLS);
        const char *key = fld[0], *src = default_source, *prec = NULL;
        if (table) {
            if (nf <= col_key || !*fld[col_key]) {
                rc = collect_error(COLLECT_EFORMAT, "%s:%d: no key in the row", path, lineno);
                break;
            }
            key = fld[col_key];
            if (col_src >= 0 && col_src < nf && *fld[col_src]) src = fld[col_src];
            if (col_prec >= 0 && col_prec < nf && *fld[col_prec]) prec = fld[col_prec];
        } else {
            char *eq = strchr(fld[0], '=');
            if (eq) {
                *eq = '\0'; /* a find-db line: its key only */
                nf = 1;
            }
            if (nf > 1) src = fld[1];
            if (nf > 2) prec = fld[2];
            if (nf > 3) {
                rc = collect_error(COLLECT_EFORMAT, "%s:%d: expected KEY [SOURCE [PRECISION]], found %d fields", path,
                                   lineno, nf);
                break;
            }
        }
        int cls = -1;
        if (prec && (cls = collect_precision_parse(prec, strlen(prec))) < 0) {
            rc = collect_error(COLLECT_EFORMAT, "%s:%d: precision class '%s' (expected strict, tf32 or conversion)", path,
                               lineno, prec);
            break;
        }
        if (problem_add(out, n, &cap_p, key, src, cls)) {
            rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
            break;
        }
    }
    if (!rc && ferror(f)) rc = collect_error(COLLECT_EIO, "%s: read failed", path);
    free(buf);
    fclose(f);
    if (rc) {
        collect_problems_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- precision classes ---- */

static int data_dtype_of(collect_dtype t)
{
    return t == COLLECT_DTYPE_FP32 ? DATA_DTYPE_FP32 : t == COLLECT_DTYPE_FP16 ? DATA_DTYPE_FP16 : DATA_DTYPE_BF16;
}

int collect_kernel_allowed(int cls, collect_dtype t, collect_dir dir, int algo, int math)
{
    char name[64];
    if (collect_kernel_name(dir, algo, math, name, sizeof name)) return 0;
    return data_portable_precision_allows(cls, data_dtype_of(t), name, strlen(name));
}

int collect_heuristic_math(int cls, collect_dtype t)
{
    return t == COLLECT_DTYPE_FP32 ? collect_precision_math(cls) : COLLECT_MATH_TENSOR_OP;
}

int collect_heuristic_kernels(int cls, collect_dtype t, collect_dir dir, int hmath, const int *ha, const int *hm, int nh,
                              int *out_a, int *out_m)
{
    int n = 0;
    for (int i = 0; i < nh; i++) {
        int a = ha[i], m = collect_kernel_allowed(cls, t, dir, ha[i], hm[i]) ? hm[i] : hmath, dup = 0;
        if (a < 0 || a >= collect_algo_count(dir) || !collect_kernel_allowed(cls, t, dir, a, m)) continue;
        for (int j = 0; j < n && !dup; j++) dup = out_a[j] == a && out_m[j] == m;
        if (dup) continue;
        out_a[n] = a;
        out_m[n++] = m;
    }
    return n;
}

int collect_conv_candidates(collect_dir dir, collect_dtype t, int cls, const int *first_a, const int *first_m,
                            int n_first, int *out_a, int *out_m)
{
    int n_algo = collect_algo_count(dir), n = 0;
    char seen[8][COLLECT_MATH_COUNT] = {{0}};
    for (int i = 0; i < n_first; i++) {
        int a = first_a[i], m = first_m[i];
        if (a < 0 || a >= n_algo || m < 0 || m >= COLLECT_MATH_COUNT || seen[a][m]) continue;
        seen[a][m] = 1;
        if (!collect_kernel_allowed(cls, t, dir, a, m)) continue;
        out_a[n] = a;
        out_m[n++] = m;
    }
    for (int a = 0; a < n_algo; a++)
        for (int m = 0; m < COLLECT_MATH_COUNT; m++)
            if (!seen[a][m] && collect_kernel_allowed(cls, t, dir, a, m)) {
                out_a[n] = a;
                out_m[n++] = m;
            }
    return n;
}

static int cmp_result_ms(const void *pa, const void *pb)
{
    const collect_result *a = pa, *b = pb;
    if (a->ms != b->ms) return a->ms < b->ms ? -1 : 1;
    return a->algo != b->algo ? a->algo - b->algo : a->math - b->math;
}

int collect_fdb_candidates(const collect_line *l, collect_dir dir, collect_dtype t, int cls, collect_result *res,
                           int max, int *n)
{
    *n = 0;
    for (int i = 0; i < l->n; i++) {
        collect_dir d;
        int a, m;
        if (collect_kernel_parse(l->names[i], strlen(l->names[i]), &d, &a, &m) || d != dir)
            return collect_error(COLLECT_EFORMAT, "%s: entry '%s' is not a kernel of the problem's direction", l->key,
                                 l->names[i]);
        if (!collect_kernel_allowed(cls, t, dir, a, m) || *n == max) continue;
        res[(*n)++] = (collect_result){a, m, l->ms[i], 0};
    }
    qsort(res, (size_t)*n, sizeof *res, cmp_result_ms);
    return COLLECT_OK;
}

/* ---- rankings and shortlists ---- */

int collect_rank_scores(const float *scores, int n, int *order)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(scores[i])) continue;
        /* insertion keeps equal scores in index order */
        int j = m++;
        while (j > 0 && scores[order[j - 1]] < scores[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    return m;
}

void collect_candidate_scores(const collect_result *res, int n_res, const int *algo, const int *math,
                              const char *allowed, const float *score, int nk, float *s)
{
    for (int r = 0; r < n_res; r++) {
        s[r] = -INFINITY;
        for (int k = 0; k < nk; k++)
            if (allowed[k] && algo[k] == res[r].algo && math[k] == res[r].math) s[r] = score[k];
    }
}

int collect_shortlist(const int *order, int n, const int *group, int k, int must, int *out)
{
    int m = 0, has_must = 0;
    for (int i = 0; i < n && m < k; i++) {
        int c = order[i], dup = 0;
        for (int j = 0; j < m && !dup; j++) dup = group ? group[out[j]] == group[c] : out[j] == c;
        if (dup) continue;
        out[m++] = c;
        has_must |= c == must;
    }
    if (must >= 0 && !has_must) out[m++] = must;
    return m;
}

/* ---- GEMM sources ---- */

void collect_gemm_tags_free(collect_gemm_tags *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->items[i].key);
        free(t->items[i].tag);
    }
    free(t->items);
    memset(t, 0, sizeof *t);
}

static int cmp_tag(const void *pa, const void *pb)
{
    const collect_gemm_tag *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    return c ? c : a->line - b->line;
}

int collect_gemm_tags_read(const char *path, collect_gemm_tags *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    int cap_t = 0, lineno = 0, rc = COLLECT_OK;
    while (getline(&buf, &cap, f) >= 0) {
        lineno++;
        collect_gemm_shape s;
        int pr = collect_gemm_shape_parse(buf, &s);
        if (pr == 1) continue;
        if (pr) {
            rc = collect_error(COLLECT_EFORMAT, "%s:%d: %s", path, lineno, collect_last_error());
            break;
        }
        char key[128], tag[128] = "-";
        collect_gemm_shape_key(&s, key, sizeof key);
        const char *hash = strchr(buf, '#');
        if (hash) {
            hash++;
            while (*hash && isspace((unsigned char)*hash)) hash++;
            size_t w = strcspn(hash, " \t\r\n");
            if (w > 0 && w < sizeof tag) {
                memcpy(tag, hash, w);
                tag[w] = '\0';
            }
        }
        if (out->n == cap_t) {
            int nc = cap_t ? 2 * cap_t : 256;
            collect_gemm_tag *ni = realloc(out->items, (size_t)nc * sizeof *ni);
            if (!ni) {
                rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                break;
            }
            out->items = ni;
            cap_t = nc;
        }
        collect_gemm_tag *t = &out->items[out->n];
        t->key = strdup(key);
        t->tag = strdup(tag);
        t->line = lineno;
        if (!t->key || !t->tag) {
            free(t->key);
            free(t->tag);
            rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
            break;
        }
        out->n++;
    }
    if (!rc && ferror(f)) rc = collect_error(COLLECT_EIO, "%s: read failed", path);
    free(buf);
    fclose(f);
    if (rc) {
        collect_gemm_tags_free(out);
        return rc;
    }
    if (out->n) qsort(out->items, (size_t)out->n, sizeof *out->items, cmp_tag);
    int m = 0;
    for (int i = 0; i < out->n; i++) {
        if (m > 0 && strcmp(out->items[m - 1].key, out->items[i].key) == 0) {
            free(out->items[i].key);
            free(out->items[i].tag);
            continue;
        }
        out->items[m++] = out->items[i];
    }
    out->n = m;
    return COLLECT_OK;
}

const char *collect_gemm_tags_find(const collect_gemm_tags *t, const char *key)
{
    int lo = 0, hi = t->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(t->items[mid].key, key);
        if (c == 0) return t->items[mid].tag;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}
