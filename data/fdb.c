/* find-db loader: "<key>=<entry>;<entry>;..." lines into a problems x kernels runtime table. */
#define _GNU_SOURCE
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

/* The id of name[0..n) in t (core's hr_strmap, ids in order of insertion), inserted when absent (*inserted = 1);
 * -2 on allocation failure. */
static int strtab_get(hr_strmap *t, const char *name, size_t n, int *inserted)
{
    int id, rc = hr_strmap_add(t, name, n, 0, &id);
    *inserted = rc == 1;
    return rc < 0 ? -2 : id;
}

/* ---- parsing ---- */
typedef struct fdb_entry {
    int problem, kernel;
    float ms;
} fdb_entry;

typedef struct fdb_builder {
    data_problem *problems;
    char **keys;
    long *lines;           /* source line of each problem */
    uint32_t *key_len;     /* key length (chunks: keys point into the text) */
    int n, cap;
    fdb_entry *entries;
    size_t n_entries, cap_entries;
    hr_strmap kernels;
    hr_strmap keyset;
    /* duplicate-kernel check in O(1) per entry: kernel id -> number of the line that last used it */
    long *kernel_line;
    int cap_kernel_line;
    long parsed;           /* lines given to line_parse so far: the stamps */
} fdb_builder;

static int builder_reserve(fdb_builder *b, size_t more_entries)
{
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 64;
        data_problem *p = realloc(b->problems, (size_t)cap * sizeof *p);
        if (!p) return HR_ENOMEM;
        b->problems = p;
        char **k = realloc(b->keys, (size_t)cap * sizeof *k);
        if (!k) return HR_ENOMEM;
        b->keys = k;
        long *l = realloc(b->lines, (size_t)cap * sizeof *l);
        if (!l) return HR_ENOMEM;
        b->lines = l;
        uint32_t *kl = realloc(b->key_len, (size_t)cap * sizeof *kl);
        if (!kl) return HR_ENOMEM;
        b->key_len = kl;
        b->cap = cap;
    }
    if (b->n_entries + more_entries > b->cap_entries) {
        size_t cap = b->cap_entries ? b->cap_entries * 2 : 256;
        while (cap < b->n_entries + more_entries) cap *= 2;
        fdb_entry *e = realloc(b->entries, cap * sizeof *e);
        if (!e) return HR_ENOMEM;
        b->entries = e;
        b->cap_entries = cap;
    }
    return HR_OK;
}

/* "ddd.ddd" with at most 15 significant digits: mantissa and power of ten are exact doubles, so one
 * division rounds correctly and the value equals strtod's. Anything else returns 0 (use strtod). */
static int decimal_fast(const char *s, size_t n, double *out)
{
    static const double p10[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t m = 0;
    int digits = 0, frac = -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            if (++digits > 15) return 0;
            m = m * 10 + (uint64_t)(c - '0');
            if (frac >= 0) frac++;
        } else if (c == '.' && frac < 0) {
            frac = 0;
        } else {
            return 0;
        }
    }
    if (digits == 0) return 0;
    *out = (double)m / p10[frac > 0 ? frac : 0];
    return 1;
}

/* Parses one entry (either "Solver:ms,ws,algo" or the older "algo:Solver,ms,ws,algo,unused").
 * Returns 0 and sets name/ms, or a reason. */
static const char *entry_parse(const char *s, size_t n, const char **name, size_t *name_len, double *ms)
{
    const char *colon = memchr(s, ':', n);
    if (!colon) return "malformed entry";
    const char *rest = colon + 1, *end = s + n;
    if (n >= 6 && memcmp(s, "miopen", 6) == 0) {
        /* older layout: the solver is the first comma field after the colon */
        const char *comma = memchr(rest, ',', (size_t)(end - rest));
        if (!comma) return "malformed entry";
        *name = rest;
        *name_len = (size_t)(comma - rest);
        rest = comma + 1;
    } else {
        *name = s;
        *name_len = (size_t)(colon - s);
    }
    if (*name_len == 0) return "malformed entry";
    /* a NUL or other control byte would cut or disguise the name once it is a C string */
    for (size_t i = 0; i < *name_len; i++)
        if ((unsigned char)(*name)[i] < 0x20 || (*name)[i] == 0x7f) return "control byte in kernel name";
    const char *comma = memchr(rest, ',', (size_t)(end - rest));
    const char *tend = comma ? comma : end;
    char num[64];
    size_t tn = (size_t)(tend - rest);
    if (tn == 0 || tn >= sizeof num) return "non-numeric time";
    double v;
    if (!decimal_fast(rest, tn, &v)) {
        memcpy(num, rest, tn);
        num[tn] = '\0';
        char *stop;
        v = strtod(num, &stop);
        if (stop != num + tn || isnan(v)) return "non-numeric time";
    }
    if (!(v > 0) || isinf(v)) return "non-positive or infinite time";
    /* stored as float: a time that overflows to inf would read as "not measured", one that underflows to 0
     * (or to a subnormal) as infinitely fast */
    if (v > FLT_MAX || v < FLT_MIN) return "time out of float range";
    *ms = v;
    return NULL;
}

static const char *line_parse(fdb_builder *b, const char *line, size_t len, long lineno, int *status)
{
    *status = HR_OK;
    const char *eq = memchr(line, '=', len);
    if (!eq) return "missing '='";
    data_problem p;
    const char *why = NULL;
    if (data_key_parse(line, (size_t)(eq - line), &p, &why)) return why;
    const char *v = eq + 1, *end = line + len;
    if (v == end) return "no kernel entries";
    size_t n_semis = 1;
    for (const char *c = v; c < end; c++) n_semis += *c == ';';
    if ((*status = builder_reserve(b, n_semis))) return "out of memory";
    size_t first = b->n_entries;
    int pid = b->n;
    long stamp = ++b->parsed;
    while (v < end) {
        const char *semi = memchr(v, ';', (size_t)(end - v));
        const char *e = semi ? semi : end;
        if (e > v) {
            const char *name;
            size_t name_len;
            double ms;
            const char *bad = entry_parse(v, (size_t)(e - v), &name, &name_len, &ms);
            if (bad) {
                b->n_entries = first;
                return bad;
            }
            int ins;
            int kid = strtab_get(&b->kernels, name, name_len, &ins);
            if (kid < 0) {
                *status = HR_ENOMEM;
                return "out of memory";
            }
            if (kid >= b->cap_kernel_line) {
                int cap = b->cap_kernel_line ? b->cap_kernel_line * 2 : 256;
                while (cap <= kid) cap *= 2;
                long *kl = realloc(b->kernel_line, (size_t)cap * sizeof *kl);
                if (!kl) {
                    *status = HR_ENOMEM;
                    return "out of memory";
                }
                memset(kl + b->cap_kernel_line, 0, (size_t)(cap - b->cap_kernel_line) * sizeof *kl);
                b->kernel_line = kl;
                b->cap_kernel_line = cap;
            }
            if (b->kernel_line[kid] == stamp) {
                b->n_entries = first;
                return "duplicate kernel in line";
            }
            b->kernel_line[kid] = stamp;
            b->entries[b->n_entries++] = (fdb_entry){pid, kid, (float)ms};
        }
        v = semi ? semi + 1 : end;
    }
    if (b->n_entries == first) return "no kernel entries";
    /* keys point into the text here; duplicates are found when the chunks are merged */
    b->problems[pid] = p;
    b->keys[pid] = (char *)line;
    b->key_len[pid] = (uint32_t)(eq - line);
    b->lines[pid] = lineno;
    b->n++;
    return NULL;
}

static int cmp_name_index(const void *a, const void *b, void *names)
{
    char **nm = names;
    return strcmp(nm[*(const int *)a], nm[*(const int *)b]);
}

static void builder_free(fdb_builder *b)
{
    free(b->problems);
    free(b->keys);
    free(b->lines);
    free(b->key_len);
    free(b->entries);
    free(b->kernel_line);
    hr_strmap_free(&b->kernels);
    hr_strmap_free(&b->keyset);
}

/* ---- chunked parsing: line-aligned chunks parse on their own threads, then merge in order ---- */
typedef struct fdb_chunk {
    const char *begin, *end; /* line-aligned text */
    long line0;              /* lines before this chunk */
    long lines;              /* lines in this chunk */
    fdb_builder b;
    data_skips skips;
    int strict;
    long err_line;           /* strict mode: first bad line (0: none) */
    const char *err_why;
    int status;              /* allocation failure */
} fdb_chunk;

static void chunk_parse(fdb_chunk *c)
{
    const char *s = c->begin, *end = c->end;
    long lineno = c->line0;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        lineno++;
        size_t n = (size_t)(e - s);
        if (n && s[n - 1] == '\r') n--;
        if (n > 0 && s[0] != '#') {
            int st = HR_OK;
            const char *why = memchr(s, '\r', n) ? "carriage return inside a line (CR-only line endings?)"
                                                  : line_parse(&c->b, s, n, lineno, &st);
            if (st) {
                c->status = st;
                c->err_line = lineno;
                break;
            }
            if (why) {
                if (c->strict) {
                    c->err_line = lineno;
                    c->err_why = why;
                    break;
                }
                data_skips_add(&c->skips, why, lineno);
            }
        }
        s = nl ? nl + 1 : end;
    }
    c->lines = lineno - c->line0;
}

static void chunk_run(void *ctx, size_t begin, size_t end, int tid)
{
    fdb_chunk *chunks = ctx;
    for (size_t i = begin; i < end; i++) chunk_parse(&chunks[i]);
}

static int cmp_skip_first(const void *a, const void *b)
{
    const long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Merges skip counts by reason; reasons ordered by first occurrence, as a serial parse lists them. */
static void skips_merge(data_skips *into, const data_skips *from)
{
    for (int r = 0; r < from->n_reasons; r++) {
        int k = 0;
        while (k < into->n_reasons && strcmp(into->reason[k], from->reason[r]) != 0) k++;
        if (k == into->n_reasons) {
            if (k == DATA_SKIP_MAX_REASONS) continue;
            snprintf(into->reason[k], sizeof into->reason[k], "%s", from->reason[r]);
            into->count[k] = 0;
            into->first_line[k] = from->first_line[r];
            into->n_reasons++;
        }
        into->count[k] += from->count[r];
        if (from->first_line[r] < into->first_line[k]) into->first_line[k] = from->first_line[r];
    }
    into->total += from->total;
    long order[DATA_SKIP_MAX_REASONS][2];
    for (int k = 0; k < into->n_reasons; k++) {
        order[k][0] = into->first_line[k];
        order[k][1] = k;
    }
    qsort(order, (size_t)into->n_reasons, sizeof order[0], cmp_skip_first);
    data_skips sorted = *into;
    for (int k = 0; k < into->n_reasons; k++) {
        int o = (int)order[k][1];
        memcpy(sorted.reason[k], into->reason[o], sizeof sorted.reason[k]);
        sorted.count[k] = into->count[o];
        sorted.first_line[k] = into->first_line[o];
    }
    *into = sorted;
}

/* Concatenates the chunks' problems into b (first occurrence of a key wins, as in one pass). */
static int chunks_merge(fdb_chunk *ch, int nch, fdb_builder *b, data_skips *skips, long *dup_line)
{
    *dup_line = 0;
    for (int c = 0; c < nch; c++) {
        fdb_builder *cb = &ch[c].b;
        int *kmap = hr_malloc((size_t)(cb->kernels.n ? cb->kernels.n : 1) * sizeof *kmap);
        int *pmap = hr_malloc((size_t)(cb->n ? cb->n : 1) * sizeof *pmap);
        if (!kmap || !pmap) {
            free(kmap);
            free(pmap);
            return HR_ENOMEM;
        }
        int ins;
        for (int k = 0; k < cb->kernels.n; k++)
            if ((kmap[k] = strtab_get(&b->kernels, cb->kernels.keys[k], strlen(cb->kernels.keys[k]), &ins)) < 0) {
                free(kmap);
                free(pmap);
                return HR_ENOMEM;
            }
        data_skips dups;
        memset(&dups, 0, sizeof dups);
        for (int i = 0; i < cb->n; i++) {
            int id = strtab_get(&b->keyset, cb->keys[i], cb->key_len[i], &ins);
            if (id < 0 || builder_reserve(b, 0)) {
                free(kmap);
                free(pmap);
                return HR_ENOMEM;
            }
            if (!ins) {
                pmap[i] = -1;
                data_skips_add(&dups, "duplicate problem key", cb->lines[i]);
                if (!*dup_line) *dup_line = cb->lines[i];
                continue;
            }
            pmap[i] = b->n;
            b->problems[b->n] = cb->problems[i];
            b->keys[b->n] = b->keyset.keys[id];
            b->key_len[b->n] = cb->key_len[i];
            b->lines[b->n] = cb->lines[i];
            b->n++;
        }
        if (builder_reserve(b, cb->n_entries)) {
            free(kmap);
            free(pmap);
            return HR_ENOMEM;
        }
        for (size_t e = 0; e < cb->n_entries; e++) {
            const fdb_entry *en = &cb->entries[e];
            if (pmap[en->problem] >= 0) b->entries[b->n_entries++] = (fdb_entry){pmap[en->problem], kmap[en->kernel], en->ms};
        }
        skips_merge(skips, &ch[c].skips);
        skips_merge(skips, &dups);
        free(kmap);
        free(pmap);
    }
    return HR_OK;
}

int data_fdb_parse(const char *name, const char *text, size_t len, const data_load_opts *opts, data_select **out)
{
    *out = NULL;
    fdb_builder b;
    memset(&b, 0, sizeof b);
    data_skips skips;
    memset(&skips, 0, sizeof skips);
    int rc = HR_OK;
    /* text with carriage returns and no line feed (classic Mac line ends) would read as one long line */
    if (len && !memchr(text, '\n', len) && memchr(text, '\r', len) &&
        memchr(text, '\r', len) != text + len - 1)
        return hr_error(HR_EFORMAT, "%s: CR-only line endings; convert the file to LF (or CRLF) line ends", name);
    /* one chunk per thread for large inputs; boundaries fall on line starts */
    int nch = len > (1u << 20) ? hr_threads_resolve(opts ? opts->threads : 0) : 1;
    if (nch > 8) nch = 8;
    fdb_chunk *ch = hr_calloc((size_t)nch, sizeof *ch);
    if (!ch) return HR_ENOMEM;
    const char *at = text, *end = text + len;
    for (int c = 0; c < nch; c++) {
        const char *stop = c == nch - 1 ? end : text + len * (size_t)(c + 1) / (size_t)nch;
        if (stop < at) stop = at;
        const char *nl = stop < end ? memchr(stop, '\n', (size_t)(end - stop)) : NULL;
        stop = c == nch - 1 ? end : (nl ? nl + 1 : end);
        ch[c].begin = at;
        ch[c].end = stop;
        ch[c].strict = opts && opts->strict;
        at = stop;
    }
    /* line numbers need the line counts of earlier chunks */
    long before = 0;
    for (int c = 0; c < nch; c++) {
        ch[c].line0 = before;
        for (const char *p = ch[c].begin; (p = memchr(p, '\n', (size_t)(ch[c].end - p))) != NULL; p++) before++;
        if (ch[c].end > ch[c].begin && ch[c].end[-1] != '\n') before++;
    }
    hr_parallel_for(nch, (size_t)nch, chunk_run, ch);
    long lineno = 0, err_line = 0, dup_line = 0;
    const char *err_why = NULL;
    int status = HR_OK;
    for (int c = 0; c < nch; c++) {
        lineno += ch[c].lines;
        if (ch[c].status && !status) status = ch[c].status;
        if (ch[c].err_line && (!err_line || ch[c].err_line < err_line) && !ch[c].status) {
            err_line = ch[c].err_line;
            err_why = ch[c].err_why;
        }
    }
    if (status) {
        rc = hr_error(status, "%s: out of memory", name);
    } else if (!err_line || nch > 1) {
        rc = chunks_merge(ch, nch, &b, &skips, &dup_line);
        if (rc) hr_error(rc, "%s: out of memory", name);
    }
    if (!rc && (err_line || (opts && opts->strict && dup_line))) {
        if (!err_line || (dup_line && dup_line < err_line)) {
            err_line = dup_line;
            err_why = "duplicate problem key";
        }
        rc = hr_error(HR_EFORMAT, "%s:%ld: %s", name, err_line, err_why);
    }
    for (int c = 0; c < nch; c++) builder_free(&ch[c].b);
    free(ch);
    if (rc) goto fail;
    if (b.n == 0) {
        rc = hr_error(HR_EFORMAT, "%s: no usable line (%ld lines read, %ld skipped%s%s)", name, lineno,
                      skips.total, skips.n_reasons ? ", first reason: " : "",
                      skips.n_reasons ? skips.reason[0] : "");
        goto fail;
    }
    data_select *ds = hr_calloc(1, sizeof *ds);
    if (!ds) {
        rc = HR_ENOMEM;
        goto fail;
    }
    int K = b.kernels.n;
    ds->n = b.n;
    ds->n_kernels = K;
    ds->problems = b.problems;
    b.problems = NULL;
    ds->skips = skips;
    ds->lines = lineno;
    ds->source = hr_strdup(hr_path_basename(name));
    /* keys keep their own copies so the key table can go */
    ds->keys = b.keys;
    b.keys = NULL;
    for (int i = 0; i < b.keyset.n; i++) b.keyset.keys[i] = NULL; /* ownership moved to ds->keys */
    /* kernels sorted by name, so the vocabulary does not depend on line order */
    int *order = hr_malloc((size_t)K * sizeof *order), *rank = hr_malloc((size_t)K * sizeof *rank);
    ds->kernels = hr_calloc((size_t)K, sizeof *ds->kernels);
    ds->runtime = hr_malloc((size_t)ds->n * (size_t)K * sizeof *ds->runtime);
    if (!order || !rank || !ds->kernels || !ds->runtime || !ds->source) {
        free(order);
        free(rank);
        data_select_free(ds);
        rc = HR_ENOMEM;
        goto fail;
    }
    for (int k = 0; k < K; k++) order[k] = k;
    qsort_r(order, (size_t)K, sizeof *order, cmp_name_index, b.kernels.keys);
    for (int k = 0; k < K; k++) {
        rank[order[k]] = k;
        ds->kernels[k] = b.kernels.keys[order[k]];
    }
    for (int k = 0; k < K; k++) b.kernels.keys[k] = NULL; /* names now owned by ds */
    for (size_t i = 0; i < (size_t)ds->n * (size_t)K; i++) ds->runtime[i] = INFINITY;
    for (size_t e = 0; e < b.n_entries; e++)
        ds->runtime[(size_t)b.entries[e].problem * (size_t)K + (size_t)rank[b.entries[e].kernel]] = b.entries[e].ms;
    free(order);
    free(rank);
    builder_free(&b);
    if ((rc = data_precision_apply(ds, opts ? opts->precisions : 0))) {
        data_select_free(ds);
        return rc;
    }
    if (ds->n == 0) {
        rc = hr_error(HR_EFORMAT, "%s: no problem has a kernel of its precision class", name);
        data_select_free(ds);
        return rc;
    }
    skips = ds->skips;
    if (opts && opts->log && skips.total)
        for (int r = 0; r < skips.n_reasons; r++)
            hr_log_printf(opts->log, HR_LOG_WARN, "%s: skipped %ld line(s): %s (first at line %ld)\n", name,
                          skips.count[r], skips.reason[r], skips.first_line[r]);
    *out = ds;
    return HR_OK;
fail:
    builder_free(&b);
    return rc;
}

int data_fdb_load(const char *path, const data_load_opts *opts, data_select **out)
{
    char *text;
    size_t len;
    *out = NULL;
    int rc = data_read_file(path, opts ? opts->threads : 0, &text, &len);
    if (rc) return rc;
    rc = data_fdb_parse(path, text, len, opts, out);
    free(text);
    return rc;
}
