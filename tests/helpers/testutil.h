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
/* Path of a shipped MIOpen file under datasets/miopen/ of the source tree. */
const char *test_miopen(const char *name);

#endif
