/* An exported C runtime built and run by the tests that check it against the library: the model written as the
 * runtime `hm` (hm.h, hm.c) into a folder, compiled there with a driver program, and run over an input file. */
#ifndef HEURIST_TEST_EXPORTED_RUNTIME_H
#define HEURIST_TEST_EXPORTED_RUNTIME_H

#include <stdio.h>

#include "models/model.h"

/* Exports m as the runtime hm into dir, writes driver (a C program that includes hm.h) beside it as driver.c and
 * compiles the two into dir/drv with cc -std=c11 `cflags` -Wall -Werror and nothing but libc and libm (the
 * runtime must build so); asserts each step. */
void test_runtime_build(const model *m, const char *dir, const char *driver, const char *cflags);
/* Runs dir/drv over dir/`input`, writing dir/out.txt, and returns out.txt open for reading; asserts each step. */
FILE *test_runtime_run(const char *dir, const char *input);

#endif
