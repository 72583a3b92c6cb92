/* The command line end to end: exit codes, one-line errors, data info on the shipped files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "helpers/testutil.h"

/* Runs heurist with args; returns the exit status and stdout+stderr in out (malloc'd). */
static int run(const char *args, char **out)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", HEURIST_BINARY, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

Test(cli, usage_errors_are_one_line_and_nonzero)
{
    char *out;
    cr_assert_neq(run("frobnicate", &out), 0);
    cr_assert(strstr(out, "unknown command 'frobnicate'") != NULL, "%s", out);
    cr_assert_eq(count_lines(out), 1);
    free(out);
    cr_assert_neq(run("data info --bogus 1", &out), 0);
    cr_assert(strstr(out, "unknown option '--bogus'") != NULL, "%s", out);
    cr_assert_eq(count_lines(out), 1);
    free(out);
    cr_assert_neq(run("data info", &out), 0);
    cr_assert(strstr(out, "--data is required") != NULL, "%s", out);
    free(out);
    cr_assert_neq(run("data info --data /nonexistent/file.fdb.txt", &out), 0);
    cr_assert(strstr(out, "/nonexistent/file.fdb.txt") != NULL, "%s", out);
    cr_assert_eq(count_lines(out), 1);
    free(out);
    cr_assert_neq(run("train --data x.fdb.txt --model nosuchmodel --out /tmp/x.h5", &out), 0);
    cr_assert(strstr(out, "unknown --model 'nosuchmodel'") != NULL, "%s", out);
    free(out);
    cr_assert_neq(run("predict --model /nonexistent.h5 --problem 1-2-3", &out), 0);
    cr_assert(strstr(out, "too few key fields") != NULL, "%s", out);
    free(out);
    cr_assert_eq(run("--help", &out), 0);
    cr_assert(strstr(out, "usage: heurist") != NULL);
    free(out);
}

Test(cli, data_info_reports_the_perf_db, .timeout = 120)
{
    char *out, args[1024];
    snprintf(args, sizeof args, "data info --data %s --solver ConvAsm1x1U", test_miopen("gfx906_60.db.bz2"));
    cr_assert_eq(run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "problems         17314") != NULL, "%s", out);
    cr_assert(strstr(out, "17314 of 17314 sequences valid") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "data info --data %s", test_miopen("gfx906_60.db.bz2"));
    cr_assert_neq(run(args, &out), 0);
    cr_assert(strstr(out, "needs a solver name") != NULL, "%s", out);
    free(out);
}

Test(cli, data_info_and_cache_of_a_find_db, .timeout = 120)
{
    const char *text = "1-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP32-F=A:1.0,0,a;B:2.0,0,a\n"
                       "2-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-B=B:3.0,0,a;A:0,0,a\n"
                       "3-8-8-1x1-4-8-8-2-0x0-1x1-1x1-0-NCHW-FP16-W=B:3.0,0,a\n";
    char *path = test_tmpfile(".fdb.txt", text, strlen(text));
    char *h5 = test_tmppath(".h5");
    char *out, args[1024];
    snprintf(args, sizeof args, "data info --data %s", path);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "problems         2") != NULL, "%s", out);
    cr_assert(strstr(out, "non-positive or infinite time") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "data info --data %s --strict", path);
    cr_assert_neq(run(args, &out), 0);
    cr_assert(strstr(out, ":2: non-positive or infinite time") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "data cache --data %s --out %s", path, h5);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "data info --data %s", h5);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "problems         2") != NULL, "%s", out);
    free(out);
    remove(path);
    remove(h5);
    free(path);
    free(h5);
}
