/* Exported runtimes built and run with a driver (exported_runtime.h). */
#include "helpers/exported_runtime.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#include "core/core.h"
#include "export/export.h"

void test_runtime_build(const model *m, const char *dir, const char *driver, const char *cflags)
{
    cr_assert_eq(export_c_write(m, "model", dir, "hm"), HR_OK, "%s", hr_last_error());
    char path[1024], cmd[4096];
    snprintf(path, sizeof path, "%s/driver.c", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    cr_assert_geq(fputs(driver, f), 0, "%s", path);
    cr_assert_eq(fclose(f), 0, "%s", path);
    snprintf(cmd, sizeof cmd, "cc -std=c11 %s -Wall -Werror -o %s/drv %s/driver.c %s/hm.c -lm 2>&1", cflags, dir, dir,
             dir);
    cr_assert_eq(system(cmd), 0, "compiling the exported runtime failed: %s", cmd);
}

FILE *test_runtime_run(const char *dir, const char *input)
{
    char path[1024], cmd[4096];
    snprintf(cmd, sizeof cmd, "%s/drv %s/%s %s/out.txt", dir, dir, input, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    FILE *out = fopen(path, "r");
    cr_assert_not_null(out, "%s", path);
    return out;
}
