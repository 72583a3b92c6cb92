/* Checked file I/O: whole-file reads and atomic (temporary + rename) writes. */
#define _GNU_SOURCE
#include "core.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hr_file_read_all(const char *path, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return hr_error(HR_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = hr_malloc(cap + 1);
    if (!b) {
        fclose(f);
        return HR_ENOMEM;
    }
    for (;;) {
        if (n == cap) {
            cap *= 2;
            char *nb = realloc(b, cap + 1);
            if (!nb) {
                free(b);
                fclose(f);
                return hr_error(HR_ENOMEM, "%s: out of memory reading file", path);
            }
            b = nb;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        return hr_error(HR_EIO, "%s: read error", path);
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return HR_OK;
}

static atomic_uint tmp_counter;

char *hr_file_tmp_path(const char *path)
{
    size_t n = strlen(path) + 64;
    char *tmp = hr_malloc(n);
    if (!tmp) return NULL;
    snprintf(tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1u));
    return tmp;
}

int hr_file_commit(const char *tmp, const char *path)
{
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return hr_error(HR_EIO, "%s: cannot move %s into place: %s", path, tmp, strerror(e));
    }
    return HR_OK;
}

int hr_file_write_atomic(const char *path, const void *data, size_t len)
{
    char *tmp = hr_file_tmp_path(path);
    if (!tmp) return HR_ENOMEM;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int rc = hr_error(HR_EIO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    int ok = fwrite(data, 1, len, f) == len;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        remove(tmp);
        free(tmp);
        return hr_error(HR_EIO, "%s: write failed", path);
    }
    int rc = hr_file_commit(tmp, path);
    free(tmp);
    return rc;
}

int hr_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

const char *hr_path_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int hr_mkdir_p(const char *dir)
{
    char *p = hr_strdup(dir);
    if (!p) return HR_ENOMEM;
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                int rc = hr_error(HR_EIO, "%s: cannot create directory: %s", p, strerror(errno));
                free(p);
                return rc;
            }
            *s = c;
            if (c == '\0') break;
        }
    }
    free(p);
    return HR_OK;
}
