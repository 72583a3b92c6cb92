/* Part files and their merge (parts.h). */
#include "parts.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "collect.h"
#include "gemm.h"

int collect_part_path(const char *base, int worker, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s.part%d", base, worker);
    if (n < 0 || (size_t)n >= size) return collect_error(COLLECT_EINVAL, "%s: path too long", base);
    return COLLECT_OK;
}

/* base split into its folder ("." when none) and file name */
static int split_path(const char *base, char *dir, size_t size, const char **name)
{
    const char *slash = strrchr(base, '/');
    *name = slash ? slash + 1 : base;
    int n = slash ? snprintf(dir, size, "%.*s", (int)(slash - base > 0 ? slash - base : 1), base) : snprintf(dir, size, ".");
    if (n < 0 || (size_t)n >= size) return collect_error(COLLECT_EINVAL, "%s: path too long", base);
    return COLLECT_OK;
}

typedef struct part_num {
    long num;
    char *path;
} part_num;

static int cmp_part(const void *a, const void *b)
{
    long x = ((const part_num *)a)->num, y = ((const part_num *)b)->num;
    return x < y ? -1 : x > y;
}

int collect_parts_list(const char *base, char ***paths, int *n)
{
    *paths = NULL;
    *n = 0;
    char dir[4096];
    const char *name;
    int rc = split_path(base, dir, sizeof dir, &name);
    if (rc) return rc;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? COLLECT_OK : collect_error(COLLECT_EIO, "%s: %s", dir, strerror(errno));
    size_t name_len = strlen(name);
    part_num *found = NULL;
    int cap = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        const char *s = e->d_name;
        if (strncmp(s, name, name_len) != 0 || strncmp(s + name_len, ".part", 5) != 0) continue;
        const char *digits = s + name_len + 5;
        char *end;
        errno = 0;
        long num = strtol(digits, &end, 10);
        if (end == digits || *end || errno || num < 0 || digits[0] == '+' || digits[0] == '-') continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            part_num *nf = realloc(found, (size_t)cap * sizeof *nf);
            if (!nf) {
                rc = collect_error(COLLECT_ENOMEM, "out of memory");
                break;
            }
            found = nf;
        }
        size_t len = strlen(base) + strlen(digits) + 8;
        if (!(found[*n].path = malloc(len))) {
            rc = collect_error(COLLECT_ENOMEM, "out of memory");
            break;
        }
        snprintf(found[*n].path, len, "%s.part%s", base, digits);
        found[(*n)++].num = num;
    }
    closedir(d);
    if (found) qsort(found, (size_t)*n, sizeof *found, cmp_part);
    if (!rc && *n && !(*paths = malloc((size_t)*n * sizeof **paths))) rc = collect_error(COLLECT_ENOMEM, "out of memory");
    for (int i = 0; i < *n; i++) {
        if (rc) free(found[i].path);
        else (*paths)[i] = found[i].path;
    }
    free(found);
    if (rc) *n = 0;
    return rc;
}

void collect_parts_free(char **paths, int n)
{
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

int collect_parts_remove(const char *base)
{
    char **paths;
    int n, rc = collect_parts_list(base, &paths, &n);
    for (int i = 0; !rc && i < n; i++)
        if (remove(paths[i]) && errno != ENOENT) rc = collect_error(COLLECT_EIO, "%s: %s", paths[i], strerror(errno));
    collect_parts_free(paths, n);
    return rc;
}

/* ---- keys ---- */

typedef struct key_pos {
    const char *key;
    int pos;
} key_pos;

static int cmp_key_pos(const void *a, const void *b)
{
    const key_pos *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

int collect_keys_unique(char **keys, int *n, int *kept)
{
    key_pos *kp = malloc(((size_t)*n + 1) * sizeof *kp);
    char *drop = calloc((size_t)*n + 1, 1);
    if (!kp || !drop) {
        free(kp);
        free(drop);
        return collect_error(COLLECT_ENOMEM, "out of memory");
    }
    for (int i = 0; i < *n; i++) kp[i] = (key_pos){keys[i], i};
    if (*n > 1) qsort(kp, (size_t)*n, sizeof *kp, cmp_key_pos);
    for (int i = 1; i < *n; i++)
        if (strcmp(kp[i].key, kp[i - 1].key) == 0) drop[kp[i].pos] = 1;
    int m = 0;
    for (int i = 0; i < *n; i++) {
        if (drop[i]) {
            free(keys[i]);
            continue;
        }
        if (kept) kept[m] = i;
        keys[m++] = keys[i];
    }
    *n = m;
    free(kp);
    free(drop);
    return COLLECT_OK;
}

/* ---- whole files ---- */

/* The bytes of a file (NUL-terminated); *data NULL when it does not exist. */
static int file_read(const char *path, unsigned char **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return errno == ENOENT ? COLLECT_OK : collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap + 1);
    int rc = buf ? COLLECT_OK : collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
    while (!rc) {
        if (n == cap) {
            unsigned char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (!rc && ferror(f)) rc = collect_error(COLLECT_EIO, "%s: read failed", path);
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return COLLECT_OK;
}

FILE *collect_tmp_open(const char *path, char *tmp, size_t size)
{
    int n = snprintf(tmp, size, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= size) {
        collect_error(COLLECT_EINVAL, "%s: path too long", path);
        return NULL;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) collect_error(COLLECT_EIO, "%s: %s", tmp, strerror(errno));
    return f;
}

int collect_tmp_commit(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        remove(tmp);
        return collect_error(COLLECT_EIO, "%s: write failed", tmp);
    }
    if (rename(tmp, path)) {
        int e = errno;
        remove(tmp);
        return collect_error(COLLECT_EIO, "%s: rename to %s failed: %s", tmp, path, strerror(e));
    }
    return COLLECT_OK;
}

/* ---- text lines ---- */

int collect_text_trim(const char *path)
{
    unsigned char *data;
    size_t size;
    int rc = file_read(path, &data, &size);
    if (rc || !data) return rc;
    size_t keep = size;
    while (keep > 0 && data[keep - 1] != '\n') keep--;
    free(data);
    if (keep < size && truncate(path, (off_t)keep))
        return collect_error(COLLECT_EIO, "%s: truncate to %zu bytes failed: %s", path, keep, strerror(errno));
    return COLLECT_OK;
}

int collect_lines_add_file(collect_lines *l, const char *path)
{
    unsigned char *data;
    size_t size;
    int rc = file_read(path, &data, &size);
    if (rc || !data) return rc;
    char **nt = realloc(l->texts, ((size_t)l->n_texts + 1) * sizeof *nt);
    if (!nt) {
        free(data);
        return collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
    }
    l->texts = nt;
    l->texts[l->n_texts++] = (char *)data;
    l->indexed = 0;
    char sep = l->sep ? l->sep : '=';
    size_t header_len = l->header ? strlen(l->header) : 0;
    for (char *s = (char *)data; *s;) {
        char *nl = strchr(s, '\n');
        if (!nl) break; /* an unfinished last line */
        size_t len = (size_t)(nl + 1 - s);
        if (len > 1 && !(len == 2 && s[0] == '\r') && !(len == header_len && memcmp(s, l->header, len) == 0)) {
            char *eq = memchr(s, sep, len);
            size_t key_len = eq ? (size_t)(eq - s) : len - 1;
            while (!eq && key_len > 0 && s[key_len - 1] == '\r') key_len--;
            if (l->n == l->cap) {
                int nc = l->cap ? 2 * l->cap : 1024;
                collect_line_ref *nr = realloc(l->refs, (size_t)nc * sizeof *nr);
                if (!nr) return collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                l->refs = nr;
                l->cap = nc;
            }
            l->refs[l->n] = (collect_line_ref){s, s, key_len, len, l->n, l->n_texts - 1};
            l->n++;
        }
        s = nl + 1;
    }
    return COLLECT_OK;
}

static int key_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static int cmp_line(const void *a, const void *b)
{
    const collect_line_ref *x = a, *y = b;
    int c = key_cmp(x->key, x->key_len, y->key, y->key_len);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

void collect_lines_index(collect_lines *l)
{
    if (l->n) qsort(l->refs, (size_t)l->n, sizeof *l->refs, cmp_line);
    l->indexed = 1;
}

/* The first line (in the order read) with this key, or -1. */
static int lines_first(const collect_lines *l, const char *key, size_t len)
{
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (key_cmp(l->refs[mid].key, l->refs[mid].key_len, key, len) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < l->n && key_cmp(l->refs[lo].key, l->refs[lo].key_len, key, len) == 0 ? lo : -1;
}

int collect_lines_has(const collect_lines *l, const char *key)
{
    return lines_first(l, key, strlen(key)) >= 0;
}

void collect_lines_free(collect_lines *l)
{
    for (int i = 0; i < l->n_texts; i++) free(l->texts[i]);
    free(l->texts);
    free(l->refs);
    l->texts = NULL;
    l->refs = NULL;
    l->n_texts = l->n = l->cap = l->indexed = 0;
}

/* The sorted key list, to tell the keys it lacks. */
static int keys_sorted(char *const *keys, int n, const char ***out)
{
    *out = malloc(((size_t)n + 1) * sizeof **out);
    if (!*out) return collect_error(COLLECT_ENOMEM, "out of memory");
    memcpy(*out, keys, (size_t)n * sizeof **out);
    return COLLECT_OK;
}

/* a line (member) of a key the list lacks: its place in the order read, its index in the sorted refs */
typedef struct extra_ref {
    int order, j;
} extra_ref;

static int cmp_extra(const void *a, const void *b)
{
    int x = ((const extra_ref *)a)->order, y = ((const extra_ref *)b)->order;
    return (x > y) - (x < y);
}

static int keys_have(const char **sorted, int n, const char *key, size_t len)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = key_cmp(sorted[mid], strlen(sorted[mid]), key, len);
        if (c == 0) return 1;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* The line refs[j], the first of its key, and with l->group the key's next lines from the same source. */
static void lines_write_key(FILE *f, const collect_lines *l, int j)
{
    const collect_line_ref *first = &l->refs[j];
    fwrite(first->line, 1, first->len, f);
    for (int k = j + 1; l->group && k < l->n; k++) {
        const collect_line_ref *r = &l->refs[k];
        if (key_cmp(r->key, r->key_len, first->key, first->key_len) != 0) break;
        if (r->src == first->src) fwrite(r->line, 1, r->len, f);
    }
}

int collect_lines_merge(const char *path, char *const *keys, int n_keys, const collect_lines *l,
                        const collect_lines *only, int *written)
{
    *written = 0;
    const char **sorted;
    int rc = keys_sorted(keys, n_keys, &sorted);
    if (rc) return rc;
    qsort(sorted, (size_t)n_keys, sizeof *sorted, collect_cmp_str);
    char tmp[4200];
    FILE *f = collect_tmp_open(path, tmp, sizeof tmp);
    if (!f) {
        free(sorted);
        return COLLECT_EIO;
    }
    if (l->header) fputs(l->header, f);
    for (int i = 0; i < n_keys; i++) {
        int j = lines_first(l, keys[i], strlen(keys[i]));
        if (j < 0 || (only && !collect_lines_has(only, keys[i]))) continue;
        lines_write_key(f, l, j);
        (*written)++;
    }
    /* keys the list lacks (a resumed run given another list keeps them), in the order read */
    extra_ref *extra = malloc(((size_t)l->n + 1) * sizeof *extra);
    int n_extra = 0;
    if (!extra) rc = collect_error(COLLECT_ENOMEM, "out of memory");
    for (int j = 0; !rc && j < l->n; j++) {
        const collect_line_ref *r = &l->refs[j];
        if ((j > 0 && key_cmp(l->refs[j - 1].key, l->refs[j - 1].key_len, r->key, r->key_len) == 0) ||
            keys_have(sorted, n_keys, r->key, r->key_len))
            continue;
        if (only && lines_first(only, r->key, r->key_len) < 0) continue;
        extra[n_extra++].j = j;
    }
    /* back in the order read */
    for (int k = 0; k < n_extra; k++) extra[k] = (extra_ref){l->refs[extra[k].j].order, extra[k].j};
    if (n_extra) qsort(extra, (size_t)n_extra, sizeof *extra, cmp_extra);
    for (int k = 0; !rc && k < n_extra; k++) {
        lines_write_key(f, l, extra[k].j);
        (*written)++;
    }
    free(extra);
    free(sorted);
    if (rc) {
        fclose(f);
        remove(tmp);
        return rc;
    }
    return collect_tmp_commit(f, tmp, path);
}

/* ---- the GPU table ---- */

const char collect_gpu_table_header[] = "key\tworker\thost\tgpu\tbus\tseconds\n";

int collect_gpu_table_write(FILE *f, const char *key, const char *columns, double seconds)
{
    if (fprintf(f, "%s\t%s\t%.4f\n", key, columns, seconds) < 0 || fflush(f))
        return collect_error(COLLECT_EIO, "GPU table: write failed");
    return COLLECT_OK;
}

/* ---- gzip members ---- */

/* The key of a member's first row (collect_gemm_row_key); NULL when it has none. */
static char *member_key(const char *text)
{
    char key[160];
    if (!strchr(text, '\n') || collect_gemm_row_key(text, key, sizeof key)) return NULL;
    return strdup(key);
}

int collect_members_add_file(collect_members *m, const char *path, long *good_bytes)
{
    if (good_bytes) *good_bytes = 0;
    if (m->n_data == 0) m->header_src = -1;
    unsigned char *data;
    size_t size;
    int rc = file_read(path, &data, &size);
    if (rc || !data) return rc;
    unsigned char **nd = realloc(m->data, ((size_t)m->n_data + 1) * sizeof *nd);
    size_t *ns = nd ? realloc(m->size, ((size_t)m->n_data + 1) * sizeof *ns) : NULL;
    if (nd) m->data = nd;
    if (ns) m->size = ns;
    if (!nd || !ns) {
        free(data);
        return collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
    }
    int src = m->n_data++;
    m->data[src] = data;
    m->size[src] = size;
    m->indexed = 0;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return collect_error(COLLECT_ENOMEM, "%s: zlib init failed", path);
    size_t cap = 1 << 16, off = 0;
    char *text = malloc(cap);
    if (!text) rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
    for (int index = 0; !rc && off < size; index++) {
        inflateReset(&zs);
        zs.next_in = data + off;
        zs.avail_in = (uInt)(size - off > 0x7fffffff ? 0x7fffffff : size - off);
        size_t n = 0;
        int zr = Z_OK;
        while (zr == Z_OK) {
            if (cap - n < 4096) {
                char *nt = realloc(text, 2 * cap);
                if (!nt) {
                    rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                    break;
                }
                text = nt;
                cap *= 2;
            }
            zs.next_out = (unsigned char *)text + n;
            zs.avail_out = (uInt)(cap - n - 1);
            zr = inflate(&zs, Z_NO_FLUSH);
            n = cap - 1 - zs.avail_out;
            /* with room left for output, Z_BUF_ERROR means the input ended inside the member */
        }
        if (rc || zr != Z_STREAM_END) break; /* an unfinished or damaged member: keep what precedes it */
        text[n] = '\0';
        size_t len = (size_t)(zs.next_in - (data + off));
        if (index == 0) {
            if ((rc = collect_gemm_header_check(path, text))) break;
            if (m->header_src < 0) {
                m->header_src = src;
                m->header_len = len;
            }
        } else {
            char *key = member_key(text);
            if (!key) {
                rc = collect_error(COLLECT_EFORMAT, "%s: member %d: a row with fewer than 8 fields", path, index);
                break;
            }
            if (m->n == m->cap) {
                int nc = m->cap ? 2 * m->cap : 256;
                collect_member_ref *nr = realloc(m->refs, (size_t)nc * sizeof *nr);
                if (!nr) {
                    free(key);
                    rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                    break;
                }
                m->refs = nr;
                m->cap = nc;
            }
            m->refs[m->n] = (collect_member_ref){key, src, off, len, m->n};
            m->n++;
        }
        off += len;
        if (good_bytes) *good_bytes = (long)off;
    }
    inflateEnd(&zs);
    free(text);
    return rc;
}

static int cmp_member(const void *a, const void *b)
{
    const collect_member_ref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

void collect_members_index(collect_members *m)
{
    if (m->n) qsort(m->refs, (size_t)m->n, sizeof *m->refs, cmp_member);
    m->indexed = 1;
}

static int members_first(const collect_members *m, const char *key)
{
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(m->refs[mid].key, key) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->n && strcmp(m->refs[lo].key, key) == 0 ? lo : -1;
}

int collect_members_has(const collect_members *m, const char *key)
{
    return members_first(m, key) >= 0;
}

void collect_members_free(collect_members *m)
{
    for (int i = 0; i < m->n_data; i++) free(m->data[i]);
    for (int i = 0; i < m->n; i++) free(m->refs[i].key);
    free(m->data);
    free(m->size);
    free(m->refs);
    memset(m, 0, sizeof *m);
}

int collect_members_merge(const char *path, char *const *keys, int n_keys, const collect_members *m, int *written)
{
    *written = 0;
    if (m->n_data == 0 || m->header_src < 0) {
        /* nothing was written: a table of the header alone */
        collect_gemm_out o;
        int rc = collect_gemm_out_open(&o, path, 0);
        int rc2 = collect_gemm_out_close(&o);
        return rc ? rc : rc2;
    }
    const char **sorted;
    int rc = keys_sorted(keys, n_keys, &sorted);
    if (rc) return rc;
    qsort(sorted, (size_t)n_keys, sizeof *sorted, collect_cmp_str);
    char tmp[4200];
    FILE *f = collect_tmp_open(path, tmp, sizeof tmp);
    if (!f) {
        free(sorted);
        return COLLECT_EIO;
    }
    fwrite(m->data[m->header_src], 1, m->header_len, f);
    for (int i = 0; i < n_keys; i++) {
        int j = members_first(m, keys[i]);
        if (j < 0) continue;
        fwrite(m->data[m->refs[j].src] + m->refs[j].off, 1, m->refs[j].len, f);
        (*written)++;
    }
    extra_ref *extra = malloc(((size_t)m->n + 1) * sizeof *extra);
    int n_extra = 0;
    if (!extra) rc = collect_error(COLLECT_ENOMEM, "out of memory");
    for (int j = 0; !rc && j < m->n; j++) {
        if ((j > 0 && strcmp(m->refs[j - 1].key, m->refs[j].key) == 0) ||
            keys_have(sorted, n_keys, m->refs[j].key, strlen(m->refs[j].key)))
            continue;
        extra[n_extra++].j = j;
    }
    for (int k = 0; k < n_extra; k++) extra[k] = (extra_ref){m->refs[extra[k].j].order, extra[k].j};
    if (n_extra) qsort(extra, (size_t)n_extra, sizeof *extra, cmp_extra);
    for (int k = 0; !rc && k < n_extra; k++) {
        const collect_member_ref *r = &m->refs[extra[k].j];
        fwrite(m->data[r->src] + r->off, 1, r->len, f);
        (*written)++;
    }
    free(extra);
    free(sorted);
    if (rc) {
        fclose(f);
        remove(tmp);
        return rc;
    }
    return collect_tmp_commit(f, tmp, path);
}
