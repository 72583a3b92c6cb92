/* core: errors, logging, allocation, time and memory figures. */
#define _GNU_SOURCE
#include "core.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HR_ERRMSG_MAX 1024

static _Thread_local char tls_errmsg[HR_ERRMSG_MAX];

int hr_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_errmsg, sizeof tls_errmsg, fmt, ap);
    va_end(ap);
    return code;
}

int hr_error_wrap(int code, const char *fmt, ...)
{
    char prefix[HR_ERRMSG_MAX], old[HR_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, tls_errmsg, sizeof old);
    if (old[0])
        snprintf(tls_errmsg, sizeof tls_errmsg, "%.400s: %.600s", prefix, old);
    else
        snprintf(tls_errmsg, sizeof tls_errmsg, "%s", prefix);
    return code;
}

const char *hr_last_error(void)
{
    return tls_errmsg[0] ? tls_errmsg : "no error recorded";
}

void hr_error_clear(void)
{
    tls_errmsg[0] = '\0';
}

void hr_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "heurist: internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
    abort();
}

void *hr_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) hr_error(HR_ENOMEM, "out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *hr_malloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) hr_error(HR_ENOMEM, "out of memory allocating %zu bytes", size);
    return p;
}

char *hr_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = hr_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

hr_log hr_log_stderr(int level)
{
    hr_log log = {stderr, level};
    return log;
}

hr_log hr_log_silent(void)
{
    hr_log log = {NULL, -1};
    return log;
}

void hr_log_printf(const hr_log *log, int level, const char *fmt, ...)
{
    if (!log || !log->sink || level > log->level) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(log->sink, fmt, ap);
    va_end(ap);
    fflush(log->sink);
}

double hr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

size_t hr_peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = (size_t)strtoull(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb * 1024;
}
