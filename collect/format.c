/* The text formats: find-db lines (written and read back) and the heuristic sidecar. */
#include "collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_result(const void *a, const void *b)
{
    const collect_result *x = a, *y = b;
    if (x->ms != y->ms) return x->ms < y->ms ? -1 : 1;
    if (x->algo != y->algo) return x->algo - y->algo;
    return x->math - y->math;
}

int collect_fdb_write_line(FILE *f, const char *key, collect_dir dir, collect_result *res, int n)
{
    if (n < 1) return collect_error(COLLECT_EINVAL, "%s: no result to write", key);
    qsort(res, (size_t)n, sizeof *res, cmp_result);
    if (fprintf(f, "%s=", key) < 0) goto io;
    for (int i = 0; i < n; i++) {
        char name[64];
        int rc = collect_kernel_name(dir, res[i].algo, res[i].math, name, sizeof name);
        if (rc) return rc;
        /* %.6g keeps six significant digits; a time is never written as 0 (the loaders refuse it) */
        double ms = res[i].ms > 1e-6 ? res[i].ms : 1e-6;
        if (fprintf(f, "%s%s:%.6g,%zu,%s", i ? ";" : "", name, ms, res[i].workspace, collect_algo_column(dir)) < 0) goto io;
    }
    if (fputc('\n', f) == EOF || fflush(f)) goto io;
    return COLLECT_OK;
io:
    return collect_error(COLLECT_EIO, "%s: write failed: %s", key, strerror(errno));
}

int collect_sidecar_write_line(FILE *f, const char *key, const char *const *names, int n)
{
    if (fprintf(f, "%s=", key) < 0) goto io;
    for (int i = 0; i < n; i++)
        if (fprintf(f, "%s%s", i ? ";" : "", names[i]) < 0) goto io;
    if (fputc('\n', f) == EOF || fflush(f)) goto io;
    return COLLECT_OK;
io:
    return collect_error(COLLECT_EIO, "%s: write failed: %s", key, strerror(errno));
}

static void line_free(collect_line *l)
{
    for (int i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    free(l->ms);
    free(l->key);
}

void collect_file_free(collect_file *f)
{
    for (int i = 0; i < f->n; i++) line_free(&f->lines[i]);
    free(f->lines);
    f->lines = NULL;
    f->n = 0;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* Parses "key=e;e;..." (text without its newline); an entry is "name" or "name:ms,..." */
static const char *line_parse(char *text, collect_line *l, int *nomem)
{
    memset(l, 0, sizeof *l);
    char *eq = strchr(text, '=');
    if (!eq || eq == text) return "missing key or '='";
    if (!(l->key = dup_n(text, (size_t)(eq - text)))) goto nomem;
    int cap = 1;
    for (char *c = eq + 1; *c; c++) cap += *c == ';';
    l->names = calloc((size_t)cap, sizeof *l->names);
    l->ms = calloc((size_t)cap, sizeof *l->ms);
    if (!l->names || !l->ms) goto nomem;
    for (char *e = eq + 1; *e;) {
        char *semi = strchr(e, ';');
        size_t n = semi ? (size_t)(semi - e) : strlen(e);
        char *colon = memchr(e, ':', n);
        size_t nn = colon ? (size_t)(colon - e) : n;
        if (nn == 0) return "empty entry";
        if (colon) {
            char *stop;
            errno = 0;
            double ms = strtod(colon + 1, &stop);
            if (stop == colon + 1 || errno || !(ms > 0) || (*stop != ',' && stop != e + n)) return "bad time";
            l->ms[l->n] = ms;
        }
        if (!(l->names[l->n] = dup_n(e, nn))) goto nomem;
        l->n++;
        e = semi ? semi + 1 : e + n;
    }
    if (l->n == 0) return "no entry";
    return NULL;
nomem:
    *nomem = 1;
    return "out of memory";
}

int collect_file_read(const char *path, collect_file *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    int cap_lines = 0, rc = COLLECT_OK;
    while ((len = getline(&buf, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        if (len == 0) continue;
        if (out->n == cap_lines) {
            int nc = cap_lines ? 2 * cap_lines : 256;
            collect_line *nl = realloc(out->lines, (size_t)nc * sizeof *nl);
            if (!nl) {
                rc = collect_error(COLLECT_ENOMEM, "%s:%ld: out of memory", path, lineno);
                break;
            }
            out->lines = nl;
            cap_lines = nc;
        }
        int nomem = 0;
        const char *why = line_parse(buf, &out->lines[out->n], &nomem);
        if (why) {
            line_free(&out->lines[out->n]);
            rc = collect_error(nomem ? COLLECT_ENOMEM : COLLECT_EFORMAT, "%s:%ld: %s", path, lineno, why);
            break;
        }
        out->n++;
    }
    if (!rc && ferror(f)) rc = collect_error(COLLECT_EIO, "%s: read failed", path);
    free(buf);
    fclose(f);
    if (rc) collect_file_free(out);
    return rc;
}

int collect_file_find(const collect_file *f, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->lines[i].key, key) == 0) return i;
    return -1;
}

int collect_sidecar_class_path(const char *side, const char *cls, const char *ext, char *buf, size_t size)
{
    size_t len = strlen(side);
    if (len >= 4 && strcmp(side + len - 4, ".txt") == 0) len -= 4;
    int n = snprintf(buf, size, "%.*s.%s%s", (int)len, side, cls, ext);
    if (n < 0 || (size_t)n >= size) return collect_error(COLLECT_EINVAL, "%s: path too long for the %s sidecar", side, cls);
    return COLLECT_OK;
}
