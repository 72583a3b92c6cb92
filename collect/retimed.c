/* The re-timed configurations of a GEMM verify (verify.h, verify --retimed-out): every configuration a shape's
 * interleaved re-timing ran, with its median time, one tab-separated row each, written to PATH.tmp and renamed to
 * PATH when the run ends. A shape's rows are flushed before its report rows, so that a run cut short leaves in
 * PATH.tmp every shape its report holds (and perhaps one more, which --resume drops). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

/* The file's header line: "key", collect_gemm_kernel_columns, "time_us", tab-separated, with its newline */
static void header_text(char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "key");
    for (int i = 0; i < COLLECT_GEMM_N_FIELDS; i++)
        at += (size_t)snprintf(buf + at, size - at, "\t%s", collect_gemm_kernel_columns[i]);
    snprintf(buf + at, size - at, "\ttime_us\n");
}

/* Whether a row (its newline included) is a key, COLLECT_GEMM_N_FIELDS whole numbers and a finite positive time, as
 * collect_retimed_write writes them (%d: digits after an optional '-'; %.6g: decimal digits, '.', an exponent): a
 * resumed file's rows are copied into the new one, and gemm_retimed_table.py reads them all with the same rule
 * (no sign or space before a number, no hexadecimal, which strtol and strtod would take). */
static int row_ok(const char *line)
{
    const char *p = strchr(line, '\t');
    if (!p || p == line) return 0;
    for (int i = 0; i < COLLECT_GEMM_N_FIELDS; i++) {
        const char *digits = p[1] == '-' ? p + 2 : p + 1;
        if (!isdigit((unsigned char)*digits)) return 0;
        char *end;
        errno = 0;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1 || *end != '\t' || errno || v < INT_MIN || v > INT_MAX) return 0;
        p = end;
    }
    const char *t0 = p + 1;
    if (!(isdigit((unsigned char)*t0) || *t0 == '.') || t0[strspn(t0, "0123456789.eE+-")] != '\n') return 0;
    char *end;
    double t = strtod(t0, &end);
    return end != t0 && *end == '\n' && end[1] == '\0' && isfinite(t) && t > 0;
}

/* The rows of src (PATH.tmp of an interrupted run, else PATH) whose key is among the report's finished shapes,
 * into *kept (malloc'd text); every finished shape must have rows. */
static int resume_read(const char *src, char *const *done, int n_done, char **kept, size_t *len)
{
    *kept = NULL;
    *len = 0;
    FILE *f = fopen(src, "r");
    if (!f) {
        if (errno != ENOENT) return collect_error(COLLECT_EIO, "%s: %s", src, strerror(errno));
        if (n_done > 0)
            return collect_error(COLLECT_EFORMAT, "%s: missing, while the report holds %d shapes: resume into a new "
                                                  "report to write the re-timed configurations", src, n_done);
        return COLLECT_OK;
    }
    char *buf = NULL, *text = NULL;
    size_t cap = 0, tcap = 0;
    ssize_t n;
    int rc = COLLECT_OK, line = 0;
    char *seen = calloc((size_t)(n_done > 0 ? n_done : 1), 1);
    if (!seen) rc = collect_error(COLLECT_ENOMEM, "out of memory");
    while (!rc && (n = getline(&buf, &cap, f)) >= 0) {
        line++;
        if (buf[n - 1] != '\n') break; /* a cut line */
        if (line == 1) {
            char want[1024];
            header_text(want, sizeof want);
            if (strcmp(buf, want))
                rc = collect_error(COLLECT_EFORMAT, "%s: line 1: not a re-timed configurations header", src);
            continue;
        }
        if (strlen(buf) != (size_t)n || !row_ok(buf)) {
            rc = collect_error(COLLECT_EFORMAT, "%s: line %d: not a re-timed configuration (a key, %d whole numbers "
                                                "and a positive time, tab-separated)", src, line, COLLECT_GEMM_N_FIELDS);
            break;
        }
        size_t kl = strcspn(buf, "\t\n");
        char save = buf[kl];
        buf[kl] = '\0';
        const char *kp = buf;
        char **hit = n_done > 0 ? bsearch(&kp, done, (size_t)n_done, sizeof *done, collect_cmp_str) : NULL;
        buf[kl] = save;
        if (!hit) continue;
        seen[hit - done] = 1;
        if (*len + (size_t)n + 1 > tcap) {
            size_t nc = tcap ? 2 * tcap : 1 << 16;
            while (nc < *len + (size_t)n + 1) nc *= 2;
            char *nt = realloc(text, nc);
            if (!nt) {
                rc = collect_error(COLLECT_ENOMEM, "out of memory");
                break;
            }
            text = nt;
            tcap = nc;
        }
        memcpy(text + *len, buf, (size_t)n);
        *len += (size_t)n;
    }
    if (!rc && ferror(f)) rc = collect_error(COLLECT_EIO, "%s: read failed", src);
    fclose(f);
    free(buf);
    for (int i = 0; !rc && i < n_done; i++)
        if (!seen[i])
            rc = collect_error(COLLECT_EFORMAT, "%s: no row of shape %s, which the report holds: resume into a new report "
                                                "to write the re-timed configurations", src, done[i]);
    free(seen);
    if (rc) {
        free(text);
        *len = 0;
        return rc;
    }
    *kept = text;
    return COLLECT_OK;
}

int collect_retimed_open(collect_retimed_out *o, const char *path, char *const *done, int n_done, int resume)
{
    memset(o, 0, sizeof *o);
    if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path ||
        snprintf(o->tmp, sizeof o->tmp, "%s.tmp", path) >= (int)sizeof o->tmp)
        return collect_error(COLLECT_EINVAL, "%s: path too long", path);
    char *kept = NULL;
    size_t len = 0;
    if (resume) {
        FILE *t = fopen(o->tmp, "r");
        const char *src = t ? o->tmp : o->path;
        if (t) fclose(t);
        int rc = resume_read(src, done, n_done, &kept, &len);
        if (rc) return rc;
    }
    /* the kept rows go to PATH.tmp.new, renamed over PATH.tmp once written: PATH.tmp, which a resume may have read
     * them from, is never truncated before its rows are safe in the new file */
    char next[sizeof o->tmp + 8];
    snprintf(next, sizeof next, "%s.new", o->tmp);
    if (!(o->f = fopen(next, "w"))) {
        free(kept);
        return collect_error(COLLECT_EIO, "%s: cannot open for writing: %s", next, strerror(errno));
    }
    char header[1024];
    header_text(header, sizeof header);
    fputs(header, o->f);
    int bad = len && fwrite(kept, 1, len, o->f) != len;
    free(kept);
    if (bad || fflush(o->f)) {
        fclose(o->f);
        o->f = NULL;
        remove(next);
        return collect_error(COLLECT_EIO, "%s: write failed", next);
    }
    if (rename(next, o->tmp)) {
        int e = errno;
        fclose(o->f);
        o->f = NULL;
        remove(next);
        return collect_error(COLLECT_EIO, "%s: cannot rename to %s: %s", next, o->tmp, strerror(e));
    }
    return COLLECT_OK;
}

int collect_retimed_write(collect_retimed_out *o, const char *key, const collect_gemm_config *cfg, const double *us,
                          int n)
{
    for (int i = 0; i < n; i++) {
        int f[COLLECT_GEMM_N_FIELDS];
        if (!isfinite(us[i])) continue; /* failed to run when re-timed */
        int rc = collect_gemm_config_fields(&cfg[i], f);
        if (rc) return rc;
        fputs(key, o->f);
        for (int j = 0; j < COLLECT_GEMM_N_FIELDS; j++) fprintf(o->f, "\t%d", f[j]);
        fprintf(o->f, "\t%.6g\n", us[i]);
    }
    if (ferror(o->f) || fflush(o->f)) return collect_error(COLLECT_EIO, "%s: write failed", o->tmp);
    return COLLECT_OK;
}

int collect_retimed_close(collect_retimed_out *o)
{
    if (!o->f) return COLLECT_OK;
    int bad = fclose(o->f) != 0;
    o->f = NULL;
    if (bad) return collect_error(COLLECT_EIO, "%s: write failed", o->tmp);
    if (rename(o->tmp, o->path))
        return collect_error(COLLECT_EIO, "%s: cannot rename to %s: %s", o->tmp, o->path, strerror(errno));
    return COLLECT_OK;
}

void collect_retimed_abandon(collect_retimed_out *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
}
