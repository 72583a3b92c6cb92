/* Small helpers shared by the Criterion tests. */
#define _GNU_SOURCE
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int counter;

const char *test_tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

char *test_tmppath(const char *suffix)
{
    char *p = malloc(512);
    if (!p) abort();
    snprintf(p, 512, "%s/heurist_test_%ld_%d%s", test_tmpdir(), (long)getpid(), counter++, suffix);
    return p;
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

const char *test_miopen(const char *name)
{
    static char buf[8][512];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 512, "%s/miopen/%s", HEURIST_DATASETS_DIR, name);
    return b;
}
