/* Small helpers shared by the Criterion tests. */
#ifndef HEURIST_TESTUTIL_H
#define HEURIST_TESTUTIL_H

#include <stddef.h>

/* Writes len bytes to a fresh temporary file named after `tag`; returns its malloc'd path. */
char *test_tmpfile(const char *tag, const void *data, size_t len);
/* A fresh temporary path (no file) ending in `suffix`. */
char *test_tmppath(const char *suffix);
/* Path of a shipped MIOpen file under ../shared/data/miopen. */
const char *test_miopen(const char *name);

#endif
