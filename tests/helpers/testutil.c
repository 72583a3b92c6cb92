/* Small helpers shared by the Criterion tests. */
#define _GNU_SOURCE
#include "testutil.h"

#include <bzlib.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int counter;

/* The paths test_tmppath handed out in this process, removed (a folder with all it holds) when the process exits:
 * Criterion runs each test in a process of its own and ends it with exit, passed or failed, so a test leaves
 * nothing under the temporary folder. A forked child starts a list of its own and leaves its parent's paths. */
static struct {
    char **path;
    int n, cap;
    pid_t owner;
} handed_out;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

static void handed_out_remove(void)
{
    if (handed_out.owner != getpid()) return;
    for (int i = 0; i < handed_out.n; i++) {
        nftw(handed_out.path[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(handed_out.path[i]);
    }
    free(handed_out.path);
    handed_out.path = NULL;
    handed_out.n = handed_out.cap = 0;
}

static void handed_out_add(const char *path)
{
    if (handed_out.owner != getpid()) {
        if (!handed_out.owner) atexit(handed_out_remove); /* a forked child inherits the registration */
        for (int i = 0; i < handed_out.n; i++) free(handed_out.path[i]);
        handed_out.n = 0;
        handed_out.owner = getpid();
    }
    if (handed_out.n == handed_out.cap) {
        handed_out.cap = handed_out.cap ? 2 * handed_out.cap : 16;
        handed_out.path = realloc(handed_out.path, (size_t)handed_out.cap * sizeof *handed_out.path);
        if (!handed_out.path) abort();
    }
    if (!(handed_out.path[handed_out.n++] = strdup(path))) abort();
}

const char *test_tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

/* A path under the temporary folder that names nothing yet: a name an earlier run left behind (another test
 * process that had the same process id) is passed over, so that a test creating the path does not find it there. */
char *test_tmppath(const char *suffix)
{
    char *p = malloc(512);
    if (!p) abort();
    do
        snprintf(p, 512, "%s/heurist_test_%ld_%d%s", test_tmpdir(), (long)getpid(), counter++, suffix);
    while (access(p, F_OK) == 0);
    handed_out_add(p);
    return p;
}

char *test_file_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = (size_t)n;
    return buf;
}

char *test_tmpfile(const char *tag, const void *data, size_t len)
{
    char *p = test_tmppath(tag);
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    if (len && fwrite(data, 1, len, f) != len) abort();
    fclose(f);
    return p;
}

char *test_gemm_table_dir(void)
{
    char *dir = test_tmppath(".d"), cmd[2048], *out;
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s/../tests/fixtures/repro/gemm_t.csv' '%s/t.csv' && "
             "cp '%s/../tests/fixtures/repro/gemm_t.schema.json' '%s/t.schema.json'", dir, HEURIST_DATASETS_DIR, dir,
             HEURIST_DATASETS_DIR, dir);
    if (test_run_shell(cmd, &out) != 0) abort();
    free(out);
    return dir;
}

const char *test_miopen(const char *name)
{
    static char buf[8][512];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 512, "%s/miopen/%s", HEURIST_DATASETS_DIR, name);
    return b;
}

char *test_bz2_lines(const char *path, int lines, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    int bzerr;
    BZFILE *bz = BZ2_bzReadOpen(&bzerr, fp, 0, 0, NULL, 0);
    char *buf = NULL;
    size_t n = 0, cap = 0, cut = 0;
    int seen = 0, ok = bzerr == BZ_OK;
    while (ok && seen < lines) {
        if (cap - n < 65536) {
            cap = cap ? 2 * cap : (size_t)1 << 20;
            char *grown = realloc(buf, cap + 1);
            if (!grown) abort();
            buf = grown;
        }
        int got = BZ2_bzRead(&bzerr, bz, buf + n, 65536);
        if (bzerr != BZ_OK && bzerr != BZ_STREAM_END) ok = 0;
        for (int i = 0; ok && i < got && seen < lines; i++)
            if (buf[n + i] == '\n' && ++seen == lines) cut = n + i + 1;
        if (ok && got > 0) n += (size_t)got;
        if (ok && bzerr == BZ_STREAM_END) {
            /* a file of several streams (pbzip2) goes on after the first: reopen on the bytes read past its end */
            void *rest;
            int n_rest;
            char unused[BZ_MAX_UNUSED];
            BZ2_bzReadGetUnused(&bzerr, bz, &rest, &n_rest);
            memcpy(unused, rest, (size_t)n_rest);
            BZ2_bzReadClose(&bzerr, bz);
            bz = NULL;
            if (n_rest == 0) {
                int c = fgetc(fp);
                if (c == EOF) break;
                ungetc(c, fp);
            }
            bz = BZ2_bzReadOpen(&bzerr, fp, 0, 0, unused, n_rest);
            ok = bzerr == BZ_OK;
        }
    }
    if (bz) BZ2_bzReadClose(&bzerr, bz);
    fclose(fp);
    if (!ok || !buf) {
        free(buf);
        return NULL;
    }
    if (seen < lines) cut = n;
    buf[cut] = '\0';
    if (len) *len = cut;
    return buf;
}

int test_run_shell(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    if (!p) abort();
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, p)) > 0)
        if ((n += got) + 1 == cap) buf = realloc(buf, cap *= 2);
    if (!buf) abort();
    buf[n] = '\0';
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int test_run_heurist(const char *args, int with_stderr, char **out)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s %s", HEURIST_BINARY, args, with_stderr ? "2>&1" : "2>/dev/null");
    return test_run_shell(cmd, out);
}

int test_cli_run(const char *args, char **out)
{
    return test_run_heurist(args, 1, out);
}

int test_lines_count(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

char *test_fdb_synthetic_write(int n, int with_backward)
{
    size_t cap = (size_t)n * 176, len = 0;
    char *t = malloc(cap);
    if (!t) abort();
    for (int i = 0; i < n; i++) {
        int c = 1 << (i % 9), hw = 7 << (i / 9 % 4), nb = 1 + i / 36 % 8;
        int bwd = with_backward && (i / 288) % 2;
        double ta = c < 32 ? 1.0 : 3.0, tb = 2.0, tc = hw > 20 ? 1.5 : 4.0;
        len += (size_t)snprintf(t + len, cap - len,
                                "%d-%d-%d-1x1-%d-%d-%d-%d-0x0-1x1-1x1-0-NCHW-FP32-%s=KA:%g,0,a;KB:%g,0,a;KC:%g,0,a%s\n", c,
                                hw, hw, 2 * c, hw, hw, nb, bwd ? "B" : "F", ta * nb, tb * nb, tc * nb,
                                bwd ? ";KD:9,0,a" : "");
    }
    char *path = test_tmpfile(".fdb.txt", t, len);
    free(t);
    return path;
}
