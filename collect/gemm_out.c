/* The gemm command's files: the gzip CSV table (one member per problem), its resume scan, the schema JSON and
 * the capability JSON (gemm.h). */
#include "gemm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "parts.h"

static const char csv_header[] =
    "M,N,K,dtype,trans_a,trans_b,batch,algo_id,tile_m,tile_n,stage_k,stages,split_k,reduction_scheme,swizzle,"
    "custom_option,cluster_m,cluster_n,inner_shape,time_us,heuristic_rank,workspace\n";
static const char csv_header_unbatched[] =
    "M,N,K,dtype,trans_a,trans_b,algo_id,tile_m,tile_n,stage_k,stages,split_k,reduction_scheme,swizzle,"
    "custom_option,cluster_m,cluster_n,inner_shape,time_us,heuristic_rank,workspace\n";

const char *collect_gemm_csv_header(void)
{
    return csv_header;
}

const char *collect_gemm_csv_header_unbatched(void)
{
    return csv_header_unbatched;
}

int collect_gemm_row_format(const collect_gemm_shape *s, const collect_gemm_row *r, char *buf, size_t size)
{
    int f[COLLECT_GEMM_N_FIELDS];
    int rc = collect_gemm_config_fields(&r->cfg, f);
    if (rc) return rc;
    char rank[16] = "";
    if (r->heuristic_rank >= 0) snprintf(rank, sizeof rank, "%d", r->heuristic_rank);
    /* six significant digits; a time is never written as 0 (loaders refuse it) */
    double t = r->time_us > 1e-3 ? r->time_us : 1e-3;
    int len = snprintf(buf, size, "%ld,%ld,%ld,%s,%c,%c,%ld,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.6g,%s,%zu\n", s->m,
                       s->n, s->k, collect_gemm_dtype_name(s->dtype), s->trans_a, s->trans_b, s->batch, f[0], f[1],
                       f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], t, rank, r->workspace);
    if (len < 0 || (size_t)len >= size) return collect_error(COLLECT_EINVAL, "row longer than %zu", size);
    return len;
}

int collect_gemm_sidecar_path(const char *table, const char *suffix, char *buf, size_t size)
{
    size_t len = strlen(table);
    if (len >= 3 && strcmp(table + len - 3, ".gz") == 0) len -= 3;
    if (len >= 4 && strncmp(table + len - 4, ".csv", 4) == 0) len -= 4;
    int n = snprintf(buf, size, "%.*s%s", (int)len, table, suffix);
    if (n < 0 || (size_t)n >= size) return collect_error(COLLECT_EINVAL, "%s: path too long", table);
    return COLLECT_OK;
}

/* ---- small JSON files, written to a temporary file and renamed into place ---- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static void json_names(FILE *f, const char *const *names, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        json_string(f, names[i]);
    }
    fputc(']', f);
}

int collect_gemm_schema_write(const char *path, int cus)
{
    static const char *const problem[] = {"M", "N", "K", "dtype", "trans_a", "trans_b", "batch"};
    char tmp[4200];
    FILE *f = collect_tmp_open(path, tmp, sizeof tmp);
    if (!f) return COLLECT_EIO;
    fputs("{\"problem\": ", f);
    json_names(f, problem, 7);
    fputs(",\n \"kernel\": ", f);
    json_names(f, collect_gemm_kernel_columns, COLLECT_GEMM_N_FIELDS);
    fputs(",\n \"hardware\": [],\n \"categorical\": ", f);
    json_names(f, collect_gemm_categorical_columns, COLLECT_GEMM_N_CATEGORICAL);
    fprintf(f, ",\n \"measure\": \"time_us\", \"better\": \"lower\",\n \"tiles\": {\"tile_m\": \"M\", \"tile_n\": \"N\"}, "
               "\"reduction\": \"K\", \"split\": \"split_k\", \"cus\": %d,\n \"vendor\": \"heuristic_rank\", "
               "\"duplicates\": \"error\"}\n", cus);
    return collect_tmp_commit(f, tmp, path);
}

static void json_ints(FILE *f, const int *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fputc(']', f);
}

/* [[a, b], ...] of the ids' sizes; an id missing from the table is written as [-1, -1] */
static void json_sizes(FILE *f, const collect_gemm_enum *tab, int nt, const int *ids, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        int a = -1, b = -1;
        collect_gemm_enum_sizes(tab, nt, ids[i], &a, &b);
        fprintf(f, "%s[%d, %d]", i ? ", " : "", a, b);
    }
    fputc(']', f);
}

static void caps_algo_write(FILE *f, const collect_gemm_caps *c)
{
    static const char *const schemes[3] = {"inplace", "compute_type", "output_type"};
    fprintf(f, "    {\"algo_id\": %d,\n     \"tile_ids\": ", c->algo_id);
    json_ints(f, c->tiles, c->n_tiles);
    fputs(",\n     \"tiles\": ", f);
    json_sizes(f, collect_gemm_tiles, collect_gemm_n_tiles, c->tiles, c->n_tiles);
    fputs(",\n     \"stages_ids\": ", f);
    json_ints(f, c->stages, c->n_stages);
    fputs(",\n     \"stages\": ", f);
    json_sizes(f, collect_gemm_stages, collect_gemm_n_stages, c->stages, c->n_stages);
    fprintf(f, ",\n     \"splitk_support\": %d, \"reduction_scheme_mask\": %u, \"reduction_schemes\": [",
            c->splitk_support, (unsigned)c->reduction_mask);
    int first = 1;
    for (int b = 0; b < 3; b++)
        if (c->reduction_mask & (1u << b)) {
            fprintf(f, "%s{\"%s\": %d}", first ? "" : ", ", schemes[b], 1 << b);
            first = 0;
        }
    fprintf(f, "],\n     \"cta_swizzling_support\": %u, \"custom_option_max\": %d, \"strided_batch_support\": %d, "
               "\"out_of_place_result_support\": %d,\n     \"uplo_support\": %d, \"custom_memory_order\": %d, "
               "\"ld_negative\": %d, \"pointer_array_batch_support\": %d, \"floating_point_emulation_support\": %d,\n"
               "     \"pointer_mode_mask\": %u, \"epilogue_mask\": %u, \"numerical_impl_flags\": %llu,\n"
               "     \"min_alignment_bytes\": {\"A\": %u, \"B\": %u, \"C\": %u, \"D\": %u}}",
            (unsigned)c->swizzle_support, c->custom_option_max, c->strided_batch, c->out_of_place, c->uplo,
            c->custom_memory_order, c->ld_negative, c->pointer_array_batch, c->fp_emulation,
            (unsigned)c->pointer_mode_mask, (unsigned)c->epilogue_mask, (unsigned long long)c->numerical_impl_flags,
            (unsigned)c->min_align[0], (unsigned)c->min_align[1], (unsigned)c->min_align[2], (unsigned)c->min_align[3]);
}

int collect_gemm_caps_write(const char *path, const char *gpu, long cublaslt_version, const collect_gemm_capset *sets,
                            int n_sets)
{
    char tmp[4200];
    FILE *f = collect_tmp_open(path, tmp, sizeof tmp);
    if (!f) return COLLECT_EIO;
    fputs("{\"format\": \"heurist-collect gemm capabilities\", \"version\": 1,\n \"gpu\": ", f);
    json_string(f, gpu ? gpu : "");
    fprintf(f, ", \"cublaslt_version\": %ld,\n", cublaslt_version);
    fputs(" \"note\": \"per data type and cuBLASLt algorithm id, cublasLtMatmulAlgoCapGetAttribute's lists; tiles as "
          "[tile_m, tile_n], stages as [stage_k, stages] (stages 0: automatic count), the table's fields. cuBLASLt "
          "lists no cluster shapes or inner shapes per algorithm: cublasLtMatmulAlgoCheck decides those.\",\n", f);
    fputs(" \"cluster_shapes_tried\": ", f);
    json_sizes(f, collect_gemm_clusters, collect_gemm_n_clusters, collect_gemm_cluster_tries,
               collect_gemm_n_cluster_tries);
    fputs(",\n \"types\": [\n", f);
    for (int s = 0; s < n_sets; s++) {
        fprintf(f, "  {\"dtype\": \"%s\", \"algos\": [\n", collect_gemm_dtype_name(sets[s].dtype));
        for (int a = 0; a < sets[s].n_algos; a++) {
            caps_algo_write(f, &sets[s].algos[a]);
            fputs(a + 1 < sets[s].n_algos ? ",\n" : "\n", f);
        }
        fprintf(f, "  ]}%s\n", s + 1 < n_sets ? "," : "");
    }
    fputs(" ]}\n", f);
    return collect_tmp_commit(f, tmp, path);
}

/* ---- resume scan ---- */

typedef struct text_buf {
    char *p;
    size_t n, cap;
} text_buf;

static int text_append(text_buf *t, const void *src, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        size_t nc = t->cap ? t->cap : 1 << 16;
        while (nc < t->n + n + 1) nc *= 2;
        char *np = realloc(t->p, nc);
        if (!np) return COLLECT_ENOMEM;
        t->p = np;
        t->cap = nc;
    }
    memcpy(t->p + t->n, src, n);
    t->n += n;
    t->p[t->n] = '\0';
    return COLLECT_OK;
}

static int key_add(collect_gemm_done *d, int *cap, const char *key)
{
    size_t len = strlen(key);
    if (d->n && strlen(d->keys[d->n - 1]) == len && memcmp(d->keys[d->n - 1], key, len) == 0) return COLLECT_OK;
    if (d->n == *cap) {
        int nc = *cap ? 2 * *cap : 256;
        char **nk = realloc(d->keys, (size_t)nc * sizeof *nk);
        if (!nk) return COLLECT_ENOMEM;
        d->keys = nk;
        *cap = nc;
    }
    char *k = malloc(len + 1);
    if (!k) return COLLECT_ENOMEM;
    memcpy(k, key, len);
    k[len] = '\0';
    d->keys[d->n++] = k;
    return COLLECT_OK;
}

int collect_gemm_header_check(const char *path, const char *text)
{
    if (text && strcmp(text, csv_header) == 0) return COLLECT_OK;
    if (text && strcmp(text, csv_header_unbatched) == 0)
        return collect_error(COLLECT_EFORMAT, "%s: a gemm table without the batch column: collect into a new file",
                             path);
    return collect_error(COLLECT_EFORMAT, "%s: the first gzip member is not the gemm table's header row (not a file "
                                          "heurist-collect gemm wrote)", path);
}

/* A finished member: the header (the first), or a problem's rows, keyed by collect_gemm_row_key. */
static int member_done(const char *path, collect_gemm_done *d, int *cap, int index, const text_buf *t)
{
    if (index == 0) return collect_gemm_header_check(path, t->p);
    for (const char *line = t->p; line && *line;) {
        const char *nl = strchr(line, '\n');
        char key[160];
        if (!nl) return collect_error(COLLECT_EFORMAT, "%s: member %d ends without a newline", path, index);
        if (collect_gemm_row_key(line, key, sizeof key))
            return collect_error(COLLECT_EFORMAT, "%s: member %d: a row with fewer than 8 fields", path, index);
        if (key_add(d, cap, key)) return collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
        d->rows++;
        line = nl + 1;
    }
    return COLLECT_OK;
}

int collect_gemm_done_scan(const char *path, collect_gemm_done *d)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "rb");
    if (!f) return errno == ENOENT ? COLLECT_OK : collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        fclose(f);
        return collect_error(COLLECT_ENOMEM, "%s: zlib init failed", path);
    }
    static const size_t chunk = 1 << 16;
    unsigned char *in = malloc(chunk), *out = malloc(chunk);
    text_buf t = {0};
    int rc = in && out ? COLLECT_OK : collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
    int cap = 0, members = 0, in_member = 0, stop = 0;
    long pos = 0; /* file offset of in[0] */
    while (!rc && !stop) {
        size_t got = fread(in, 1, chunk, f);
        if (got == 0) break;
        zs.next_in = in;
        zs.avail_in = (uInt)got;
        while (!rc && zs.avail_in > 0) {
            zs.next_out = out;
            zs.avail_out = (uInt)chunk;
            int zr = inflate(&zs, Z_NO_FLUSH);
            in_member = 1;
            if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
                if (members == 0) rc = collect_error(COLLECT_EFORMAT, "%s: not gzip data (%s)", path, zs.msg ? zs.msg : "");
                stop = 1; /* a damaged member: keep what precedes it */
                break;
            }
            if (text_append(&t, out, chunk - zs.avail_out)) {
                rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                break;
            }
            if (zr == Z_STREAM_END) {
                if ((rc = member_done(path, d, &cap, members, &t))) break;
                members++;
                d->good_bytes = pos + (long)(got - zs.avail_in);
                t.n = 0;
                in_member = 0;
                inflateReset(&zs);
            }
        }
        pos += (long)got;
    }
    if (!rc && ferror(f)) rc = collect_error(COLLECT_EIO, "%s: read failed", path);
    d->truncated = !rc && (in_member || stop || pos > d->good_bytes);
    inflateEnd(&zs);
    free(in);
    free(out);
    free(t.p);
    fclose(f);
    if (rc) {
        collect_gemm_done_free(d);
        return rc;
    }
    if (members == 0) d->good_bytes = 0;
    if (d->n) qsort(d->keys, (size_t)d->n, sizeof *d->keys, collect_cmp_str); /* a header-only file has no key list */
    return COLLECT_OK;
}

int collect_gemm_done_has(const collect_gemm_done *d, const char *key)
{
    return d->n && bsearch(&key, d->keys, (size_t)d->n, sizeof *d->keys, collect_cmp_str) != NULL;
}

void collect_gemm_done_free(collect_gemm_done *d)
{
    for (int i = 0; i < d->n; i++) free(d->keys[i]);
    free(d->keys);
    memset(d, 0, sizeof *d);
}

/* ---- output ---- */

static int gz_fail(collect_gemm_out *o, const char *what)
{
    int zerr = 0;
    const char *msg = o->gz ? gzerror((gzFile)o->gz, &zerr) : "";
    return collect_error(COLLECT_EIO, "%s: %s failed: %s", o->path, what, zerr == Z_ERRNO ? strerror(errno) : msg);
}

int collect_gemm_out_open(collect_gemm_out *o, const char *path, long good_bytes)
{
    memset(o, 0, sizeof *o);
    if (strlen(path) >= sizeof o->path) return collect_error(COLLECT_EINVAL, "%s: path too long", path);
    strcpy(o->path, path);
    if (good_bytes > 0) {
        /* cut off an unfinished problem's member, then append new members */
        if (truncate(path, (off_t)good_bytes))
            return collect_error(COLLECT_EIO, "%s: truncate to %ld bytes failed: %s", path, good_bytes, strerror(errno));
        if (!(o->gz = gzopen(path, "ab"))) return collect_error(COLLECT_EIO, "%s: cannot open for appending", path);
        return COLLECT_OK;
    }
    if (!(o->gz = gzopen(path, "wb"))) return collect_error(COLLECT_EIO, "%s: cannot open for writing", path);
    if (gzputs((gzFile)o->gz, csv_header) < 0 || gzflush((gzFile)o->gz, Z_FINISH) != Z_OK) {
        int rc = gz_fail(o, "header write");
        gzclose((gzFile)o->gz);
        o->gz = NULL;
        return rc;
    }
    return COLLECT_OK;
}

int collect_gemm_out_write(collect_gemm_out *o, const collect_gemm_shape *s, const collect_gemm_row *rows, int n)
{
    char line[512];
    for (int i = 0; i < n; i++) {
        int len = collect_gemm_row_format(s, &rows[i], line, sizeof line);
        if (len < 0) return len;
        if (gzwrite((gzFile)o->gz, line, (unsigned)len) != len) return gz_fail(o, "write");
    }
    /* end the member: a member that ends is a finished problem */
    if (gzflush((gzFile)o->gz, Z_FINISH) != Z_OK) return gz_fail(o, "flush");
    return COLLECT_OK;
}

int collect_gemm_out_close(collect_gemm_out *o)
{
    if (!o->gz) return COLLECT_OK;
    int zr = gzclose((gzFile)o->gz);
    o->gz = NULL;
    return zr == Z_OK ? COLLECT_OK : collect_error(COLLECT_EIO, "%s: close failed", o->path);
}
