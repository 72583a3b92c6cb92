/* Checked file I/O: whole-file reads and atomic (temporary + rename) writes. */
#define _GNU_SOURCE
#include "core.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
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
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return hr_error(HR_EINVAL, "%s: is a folder, not a file", path);
    }
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

#define TMP_TAG ".heurist-tmp."

int hr_file_check_target(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return HR_OK;
        return hr_error(HR_EIO, "%s: cannot inspect the output path: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return hr_error(HR_EINVAL, "%s: exists and is not a regular file; refusing to replace it", path);
    return HR_OK;
}

/* Is name "<anything>.heurist-tmp.<pid>.<n>" of a process that no longer runs? */
static int tmp_is_stale(const char *name)
{
    const char *tag = strstr(name, TMP_TAG);
    if (!tag) return 0;
    const char *p = tag + strlen(TMP_TAG);
    char *end;
    long pid = strtol(p, &end, 10);
    if (end == p || *end != '.' || pid <= 0) return 0;
    p = end + 1;
    strtoul(p, &end, 10);
    if (end == p || *end != '\0') return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int hr_file_remove_stale_tmps(const char *dir)
{
    DIR *d = opendir(dir[0] ? dir : ".");
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!tmp_is_stale(e->d_name)) continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = hr_malloc(n);
        if (!p) break;
        snprintf(p, n, "%s%s%s", dir, dir[0] ? "/" : "", e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && unlink(p) == 0) removed++;
        free(p);
    }
    closedir(d);
    return removed;
}

char *hr_file_tmp_path(const char *path)
{
    size_t n = strlen(path) + 64;
    char *tmp = hr_malloc(n);
    if (!tmp) return NULL;
    /* temporaries left by killed runs of any heurist output in this folder go first */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : hr_strdup("");
    if (dir) hr_file_remove_stale_tmps(dir);
    free(dir);
    snprintf(tmp, n, "%s" TMP_TAG "%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1u));
    return tmp;
}

int hr_file_commit(const char *tmp, const char *path)
{
    int rc = hr_file_check_target(path);
    if (rc) {
        remove(tmp);
        return rc;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return hr_error(HR_EIO, "%s: cannot move %s into place: %s", path, tmp, strerror(e));
    }
    return HR_OK;
}

int hr_file_write_atomic(const char *path, const void *data, size_t len)
{
    int rc0 = hr_file_check_target(path);
    if (rc0) return rc0;
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
        int e = errno;
        remove(tmp);
        free(tmp);
        return hr_error(HR_EIO, "%s: write failed: %s", path, strerror(e));
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

int hr_ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

int hr_file_same(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int hr_path_join(char *buf, size_t cap, const char *dir, const char *name)
{
    size_t n = strlen(dir);
    const char *sep = n && dir[n - 1] == '/' ? "" : "/";
    int len = snprintf(buf, cap, "%s%s%s", dir, sep, name);
    if (len < 0 || (size_t)len >= cap)
        return hr_error(HR_EINVAL, "%s%s%s: the path is longer than %zu bytes", dir, sep, name, cap - 1);
    return HR_OK;
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
