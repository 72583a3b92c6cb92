/* The libFuzzer target for heurist-collect's host parsers (collect/, built without CUDA): the first byte of an
 * input picks the parser, the rest is what it reads, written to a file under $TMPDIR where the parser reads a
 * file, as the commands would reach it:
 *   0 a problem key (collect_conv_from_key, then the tensor sizes and the kernel names)
 *   1 a GEMM shape line and a configuration name (collect_gemm_shape_parse, collect_gemm_config_parse)
 *   2 a gemm table file as is (collect_gemm_done_scan, what --resume scans; collect_gemm_measured_read)
 *   3 the rows of a gemm table: written as one gzip member after the header member, then read as in 2
 *   4 a find-db or heuristic sidecar file (collect_file_read, then the noise statistics of it against itself)
 *   5 a key list (cli_keys_read, what --problems reads, then each key as in 0)
 *   6 a verify report file as is, plain or gzip (collect_report_read; when it reads, what summarize and the end
 *     of a verify run print from it: collect_report_summarize by every slice field, collect_report_tail; then
 *     collect_report_resume, what verify --resume scans and cuts back)
 *   7 a verify report's text gzip-compressed: its first byte is how many bytes to cut off the end of the
 *     compressed stream (0: none), the rest the text; read and summarized as in 6
 *   8 a re-timed configurations file (verify --retimed-out) that verify --resume starts from, its finished shapes
 *     RETIMED_DONE (collect_retimed_open); when it is taken, the file it writes is taken again
 * fuzz_collect_load returns the parser's status; a refusal must come with its message. The Criterion test
 * tests/test_hostile_collect.c includes this file and replays fuzz/corpus/collect and fuzz/regressions/collect
 * through it in every build. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "collect/cli.h"
#include "collect/collect.h"
#include "collect/gemm.h"
#include "collect/verify.h"

enum { FUZZ_COLLECT_MODES = 9 };

/* The bytes as a fresh file under $TMPDIR ending in suffix (gzip-compressed after a header member when rows);
 * its malloc'd path, or NULL. */
static char *collect_bytes_to_file(const uint8_t *data, size_t size, const char *suffix, int rows)
{
    const char *dir = getenv("TMPDIR");
    size_t n = strlen(dir && *dir ? dir : "/tmp") + strlen(suffix) + 40;
    char *path = malloc(n);
    if (!path) return NULL;
    snprintf(path, n, "%s/heurist-fuzz-collect-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    if (fd < 0) {
        free(path);
        return NULL;
    }
    int ok = 1;
    if (!rows) {
        for (size_t at = 0; at < size && ok;) {
            ssize_t w = write(fd, data + at, size - at);
            ok = w > 0;
            at += ok ? (size_t)w : 0;
        }
        close(fd);
    } else {
        close(fd);
        /* two members, as heurist-collect gemm writes: the header row, then one problem's rows */
        const char *header = collect_gemm_csv_header();
        for (int m = 0; m < 2 && ok; m++) {
            gzFile g = gzopen(path, m ? "ab" : "wb");
            const void *p = m ? (const void *)data : header;
            unsigned len = (unsigned)(m ? size : strlen(header));
            ok = g && (len == 0 || gzwrite(g, p, len) == (int)len);
            if (g) ok = gzclose(g) == Z_OK && ok;
        }
    }
    if (!ok) {
        unlink(path);
        free(path);
        return NULL;
    }
    return path;
}

/* A parsed convolution's sizes and names: none may overflow or fault. */
static void conv_exercise(const collect_conv *cv)
{
    int dims[5];
    collect_conv_x_dims(cv, dims);
    collect_conv_y_dims(cv, dims);
    collect_conv_w_dims(cv, dims);
    volatile int64_t e = collect_conv_x_elems(cv) + collect_conv_y_elems(cv) + collect_conv_w_elems(cv);
    volatile double flops = collect_conv_flops(cv);
    (void)e;
    (void)flops;
    char name[128];
    for (int a = 0; a < collect_algo_count(cv->dir); a++)
        for (int m = 0; m < COLLECT_MATH_COUNT; m++)
            if (collect_kernel_name(cv->dir, a, m, name, sizeof name) == COLLECT_OK) {
                collect_dir d;
                int aa, mm;
                if (collect_kernel_parse(name, strlen(name), &d, &aa, &mm) || d != cv->dir || aa != a || mm != m)
                    abort(); /* a name written must read back */
            }
}

static int collect_load_key(const char *text, size_t len)
{
    collect_conv cv;
    int rc = collect_conv_from_key(text, len, &cv);
    if (!rc) conv_exercise(&cv);
    return rc;
}

static int collect_load_shape(const char *text)
{
    collect_gemm_shape s;
    int rc = collect_gemm_shape_parse(text, &s);
    if (rc == 0) {
        char key[256];
        size_t a, b, d;
        if (collect_gemm_shape_key(&s, key, sizeof key)) abort();
        collect_gemm_shape_bytes(&s, &a, &b, &d);
        volatile double f = collect_gemm_shape_flops(&s);
        (void)f;
    }
    collect_gemm_config c;
    if (collect_gemm_config_parse(text, &c) == COLLECT_OK) {
        rc = COLLECT_OK; /* the text is a configuration name */
        char name[512];
        collect_gemm_config back;
        if (collect_gemm_config_name(&c, name, sizeof name) || collect_gemm_config_parse(name, &back) ||
            !collect_gemm_config_equal(&c, &back))
            abort(); /* a configuration named must read back */
    }
    return rc < 0 ? rc : COLLECT_OK;
}

static int collect_load_table(const uint8_t *data, size_t size, int rows)
{
    char *path = collect_bytes_to_file(data, size, ".csv.gz", rows);
    if (!path) return collect_error(COLLECT_EIO, "fuzz: cannot write a temporary file");
    collect_gemm_done d;
    int rc = collect_gemm_done_scan(path, &d);
    if (!rc) {
        for (int i = 0; i < d.n; i++)
            if (!collect_gemm_done_has(&d, d.keys[i])) abort(); /* every key scanned is found */
        collect_gemm_done_free(&d);
    }
    collect_gemm_measured *m = NULL;
    int n = 0, rm = collect_gemm_measured_read(path, &m, &n);
    collect_gemm_measured_free(m, n);
    unlink(path);
    free(path);
    return rc ? rc : rm;
}

static int collect_load_fdb(const uint8_t *data, size_t size)
{
    char *path = collect_bytes_to_file(data, size, ".fdb.txt", 0);
    if (!path) return collect_error(COLLECT_EIO, "fuzz: cannot write a temporary file");
    collect_file f;
    int rc = collect_file_read(path, &f);
    if (!rc) {
        collect_noise noise;
        if (f.n) collect_noise_compute(&f, &f, &noise);
        for (int i = 0; i < f.n; i++)
            if (collect_file_find(&f, f.lines[i].key) < 0) abort();
        collect_file_free(&f);
    }
    unlink(path);
    free(path);
    return rc;
}

static int collect_load_keys(const uint8_t *data, size_t size)
{
    char *path = collect_bytes_to_file(data, size, ".txt", 0);
    if (!path) return collect_error(COLLECT_EIO, "fuzz: cannot write a temporary file");
    char **keys = NULL;
    int n = 0, rc = cli_keys_read(path, &keys, &n);
    for (int i = 0; !rc && i < n; i++) {
        collect_conv cv;
        if (collect_conv_from_key(keys[i], strlen(keys[i]), &cv) == COLLECT_OK) conv_exercise(&cv);
    }
    cli_keys_free(keys, n);
    unlink(path);
    free(path);
    return rc;
}

/* A report read: every row's strings set and its numbers finite, the pick times positive; what summarize and
 * the end of a verify run print from it succeed when it has a row (a report that reads summarizes). */
static void report_exercise(const collect_report *r)
{
    static const char *const fields[] = {"model", "source", "precision", "dir", "dtype", "dims", "groups", "trans"};
    for (int i = 0; i < r->n; i++) {
        const collect_report_row *w = &r->rows[i];
        const collect_verify_row *v = &w->v;
        if (!w->key || !w->model || !w->source || !w->precision) abort();
        double x[] = {v->t_model, v->t_heur, v->t_best, v->decide_us, v->find_ms, v->t_list, v->t_topk, v->topk_ms,
                      v->t_vtopk, v->vtopk_ms, w->heur_us, w->candidates, v->find_kernel_ms};
        for (size_t j = 0; j < sizeof x / sizeof *x; j++)
            if (!isfinite(x[j]) || x[j] < 0) abort();
        if (!(v->t_model > 0 && v->t_heur > 0 && v->t_best > 0) || v->k < 0 || v->topk_timings < 0) abort();
        if (v->find_algos < 0 || (v->find_algos > 0 && !(v->find_ms > 0))) abort(); /* cudnnFind's kernels, timed */
        char val[128];
        for (size_t j = 0; j < sizeof fields / sizeof *fields; j++) collect_report_field(r, i, fields[j], val, sizeof val);
    }
    if (r->n == 0) return;
    FILE *null = fopen("/dev/null", "w");
    if (!null) return;
    const char *by = r->kind == COLLECT_REPORT_CONV ? "source,precision,dir,dtype,dims,groups,dir+dtype+groups"
                                                    : "source,dtype,trans,dtype+trans";
    int rc = collect_report_summarize(null, r, 1.02, 16, 1, by);
    if (!rc) rc = collect_report_tail(null, r, 1.02);
    fclose(null);
    if (rc && rc != COLLECT_ENOMEM) abort(); /* a report that reads must summarize */
}

/* The report at path as summarize reads it, then (plain: resume's reader is stdio's) as verify --resume scans it
 * and cuts it back: every key resume keeps is a row's key of the report read, and the report cut back reads, its
 * rows' keys those resume kept. */
static int collect_load_report_file(const char *path, int plain)
{
    collect_report r;
    int rc = collect_report_read(path, &r);
    if (!rc) report_exercise(&r);
    if (plain) {
        FILE *f = fopen(path, "rb");
        char head[64] = "";
        if (f) {
            if (!fgets(head, sizeof head, f)) head[0] = '\0';
            fclose(f);
        }
        const char *header = strstr(head, "t_model_us") || (!rc && r.kind == COLLECT_REPORT_GEMM)
                                 ? COLLECT_REPORT_GEMM_HEADER
                                 : COLLECT_REPORT_CONV_HEADER;
        char **keys = NULL;
        int n = 0, has_header = 0, rr = collect_report_resume(path, header, &keys, &n, &has_header);
        for (int i = 0; !rr && !rc && i < n; i++) {
            int found = 0;
            for (int j = 0; j < r.n && !found; j++) found = strcmp(keys[i], r.rows[j].key) == 0;
            if (!found) abort(); /* resume would skip a problem the report has no row of */
        }
        if (!rr && has_header) {
            collect_report cut;
            int rcut = collect_report_read(path, &cut);
            if (rcut && rcut != COLLECT_ENOMEM) abort(); /* resume left a report that does not read */
            for (int j = 0; !rcut && j < cut.n; j++)
                if (!bsearch(&cut.rows[j].key, keys, (size_t)n, sizeof *keys, collect_cmp_str)) abort();
            if (!rcut) collect_report_free(&cut);
        }
        for (int i = 0; !rr && i < n; i++) free(keys[i]);
        free(keys);
    }
    if (!rc) collect_report_free(&r);
    return rc;
}

static int collect_load_report(const uint8_t *data, size_t size)
{
    char *path = collect_bytes_to_file(data, size, ".tsv", 0);
    if (!path) return collect_error(COLLECT_EIO, "fuzz: cannot write a temporary file");
    int gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    int rc = collect_load_report_file(path, 1);
    if (!rc && !gz && memchr(data, 0, size)) abort(); /* a text report holds no NUL byte */
    unlink(path);
    free(path);
    return rc;
}

/* data[0] bytes cut off the end of the gzip stream of data[1..size) */
static int collect_load_report_gz(const uint8_t *data, size_t size)
{
    if (size == 0) return COLLECT_OK;
    size_t cut = data[0];
    data++, size--;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return collect_error(COLLECT_ENOMEM, "fuzz: deflateInit2 failed");
    uLong cap = deflateBound(&z, (uLong)size);
    unsigned char *out = malloc(cap);
    if (!out) {
        deflateEnd(&z);
        return collect_error(COLLECT_ENOMEM, "fuzz: out of memory");
    }
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int zrc = deflate(&z, Z_FINISH);
    size_t len = z.total_out;
    deflateEnd(&z);
    if (zrc != Z_STREAM_END) {
        free(out);
        return collect_error(COLLECT_EIO, "fuzz: deflate failed");
    }
    char *path = collect_bytes_to_file(out, len > cut ? len - cut : 0, ".tsv.gz", 0);
    free(out);
    if (!path) return collect_error(COLLECT_EIO, "fuzz: cannot write a temporary file");
    int rc = collect_load_report_file(path, 0);
    if (!rc && memchr(data, 0, size)) abort(); /* a text report holds no NUL byte */
    unlink(path);
    free(path);
    return rc;
}

/* The finished shapes of mode 8's resume, sorted as collect_report_resume gives them (the seeds' keys) */
static char *const RETIMED_DONE[] = {"128,64,32,fp16,N,T", "96,96,96,bf16,T,N"};

/* The rows of path as verify --resume --retimed-out path starts from them; when it takes them, the file it wrote
 * (renamed into place by collect_retimed_close) must be taken by a second resume. */
static int collect_load_retimed(const uint8_t *data, size_t size)
{
    char *path = collect_bytes_to_file(data, size, ".tsv", 0);
    if (!path) return collect_error(COLLECT_EIO, "fuzz: cannot write a temporary file");
    int n_done = (int)(sizeof RETIMED_DONE / sizeof *RETIMED_DONE);
    collect_retimed_out o;
    int rc = collect_retimed_open(&o, path, RETIMED_DONE, n_done, 1);
    if (!rc) {
        rc = collect_retimed_close(&o);
        if (!rc) {
            int again = collect_retimed_open(&o, path, RETIMED_DONE, n_done, 1);
            if (again && again != COLLECT_ENOMEM && again != COLLECT_EIO) abort(); /* it wrote what it refuses */
            if (!again) collect_retimed_abandon(&o);
        }
    } else {
        collect_retimed_abandon(&o);
    }
    size_t n = strlen(path) + 16;
    char *side = malloc(n);
    if (side) {
        snprintf(side, n, "%s.tmp", path);
        unlink(side);
        snprintf(side, n, "%s.tmp.new", path);
        unlink(side);
        free(side);
    }
    unlink(path);
    free(path);
    return rc;
}

int fuzz_collect_load(const uint8_t *data, size_t size);

int fuzz_collect_load(const uint8_t *data, size_t size)
{
    if (size == 0) return COLLECT_OK;
    int mode = data[0] % FUZZ_COLLECT_MODES;
    data++, size--;
    /* the text parsers take a NUL-terminated copy, as a line read from a file is */
    char *text = malloc(size + 1);
    if (!text) return collect_error(COLLECT_ENOMEM, "fuzz: out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    int rc;
    switch (mode) {
    case 0: rc = collect_load_key(text, size); break;
    case 1: rc = collect_load_shape(text); break;
    case 2: rc = collect_load_table(data, size, 0); break;
    case 3: rc = collect_load_table(data, size, 1); break;
    case 4: rc = collect_load_fdb(data, size); break;
    case 5: rc = collect_load_keys(data, size); break;
    case 6: rc = collect_load_report(data, size); break;
    case 7: rc = collect_load_report_gz(data, size); break;
    default: rc = collect_load_retimed(data, size); break;
    }
    free(text);
    return rc;
}

#ifdef FUZZ_COLLECT_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc = fuzz_collect_load(data, size);
    /* a refusal must come with its message */
    if (rc < 0 && !*collect_last_error()) __builtin_trap();
    collect_error(COLLECT_OK, "%s", "");
    return 0;
}
#endif
