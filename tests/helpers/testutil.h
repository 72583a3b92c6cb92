/* Small helpers shared by the Criterion tests. */
#ifndef HEURIST_TESTUTIL_H
#define HEURIST_TESTUTIL_H

#include <stddef.h>

/* The folder for temporary files: $TMPDIR, or /tmp when it is unset or empty. */
const char *test_tmpdir(void);
/* Writes len bytes to a fresh temporary file named after `tag`; returns its malloc'd path. */
char *test_tmpfile(const char *tag, const void *data, size_t len);
/* A fresh temporary path (no file) under test_tmpdir() ending in `suffix`; malloc'd. */
char *test_tmppath(const char *suffix);
/* Runs the built heurist command with args (a shell word list); *out (malloc'd) receives its stdout, and its
 * stderr too when with_stderr; returns its exit status (-1 when it did not exit). */
int test_run_heurist(const char *args, int with_stderr, char **out);
/* Path of a shipped MIOpen file under datasets/miopen/ of the source tree. */
const char *test_miopen(const char *name);

#endif
