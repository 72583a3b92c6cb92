/* Whole commands run in a fixture folder (test_gemm_table_dir), for the tests of the commands: heurist with its
 * arguments, or a shell line in which $H is the heurist binary, with stderr in the output; and the asserts those
 * tests share. */
#ifndef HEURIST_TEST_RUN_IN_H
#define HEURIST_TEST_RUN_IN_H

#include <criterion/criterion.h>
#include <stdlib.h>

/* heurist with the arguments fmt in dir: its exit status (-1 when it did not exit), *out (malloc'd) its output. */
int test_heurist_in(const char *dir, char **out, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A shell command line in dir, $H the heurist binary: the same. */
int test_shell_in(const char *dir, char **out, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Removes the folder and everything in it, and frees its path. */
void test_dir_remove(char *dir);
/* Asserts that dir holds no file `name` (NULL: nothing to check). */
void test_assert_absent(const char *dir, const char *name);

/* Asserts that heurist (TEST_HEURIST_OK) or the shell line (TEST_SHELL_OK) exits 0 in dir, showing its output
 * when it does not. */
#define TEST_HEURIST_OK(dir, ...) TEST_OK_(test_heurist_in, dir, __VA_ARGS__)
#define TEST_SHELL_OK(dir, ...) TEST_OK_(test_shell_in, dir, __VA_ARGS__)
#define TEST_OK_(run, dir, ...)                                                                                   \
    do {                                                                                                          \
        char *o_;                                                                                                 \
        int r_ = run(dir, &o_, __VA_ARGS__);                                                                      \
        cr_assert_eq(r_, 0, "exit %d\n%s", r_, o_);                                                               \
        free(o_);                                                                                                 \
    } while (0)

#endif
