/* Whole commands run in a fixture folder (run_in.h). */
#include "helpers/run_in.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/core.h"
#include "helpers/testutil.h"

static int run_in(const char *dir, const char *prefix, char **out, const char *fmt, va_list ap)
{
    char line[4096], cmd[8192];
    vsnprintf(line, sizeof line, fmt, ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s %s 2>&1", dir, prefix, line);
    return test_run_shell(cmd, out);
}

int test_heurist_in(const char *dir, char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = run_in(dir, HEURIST_BINARY, out, fmt, ap);
    va_end(ap);
    return rc;
}

int test_shell_in(const char *dir, char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = run_in(dir, "H='" HEURIST_BINARY "' &&", out, fmt, ap);
    va_end(ap);
    return rc;
}

void test_dir_remove(char *dir)
{
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    test_run_shell(cmd, &out);
    free(out);
    free(dir);
}

void test_assert_absent(const char *dir, const char *name)
{
    if (!name) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert(!hr_file_exists(path), "%s was written", name);
}
