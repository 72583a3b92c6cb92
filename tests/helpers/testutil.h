/* Small helpers shared by the Criterion tests. */
#ifndef HEURIST_TESTUTIL_H
#define HEURIST_TESTUTIL_H

#include <stddef.h>

/* The folder for temporary files: $TMPDIR, or /tmp when it is unset or empty. */
const char *test_tmpdir(void);
/* Writes len bytes to a fresh temporary file named after `tag`; returns its malloc'd path. */
char *test_tmpfile(const char *tag, const void *data, size_t len);
/* A fresh temporary path (no file) under test_tmpdir() ending in `suffix`; malloc'd. Whatever the test makes at
 * that path (a file, or a folder and all it holds) is removed when the process that asked for it exits. */
char *test_tmppath(const char *suffix);
/* A file's whole contents, malloc'd and NUL-terminated (*len, when given, without the NUL); NULL when it cannot
 * be read. */
char *test_file_read(const char *path, size_t *len);
/* Runs the built heurist command with args (a shell word list); *out (malloc'd) receives its stdout, and its
 * stderr too when with_stderr; returns its exit status (-1 when it did not exit). */
int test_run_heurist(const char *args, int with_stderr, char **out);
/* Runs a shell command line; *out (malloc'd) receives its stdout; returns its exit status (-1 when it did not
 * exit). */
int test_run_shell(const char *cmd, char **out);
/* test_run_heurist with stderr in *out: the command line tests check the one-line errors it carries. */
int test_cli_run(const char *args, char **out);
/* The number of newlines in s. */
int test_lines_count(const char *s);
/* Writes a find-db of n problems whose fastest kernel follows the problem's sizes (KA for few channels, else KC
 * for large images, else KB), so a tree learns it and the most-frequent baseline does not; with_backward makes
 * problems 288 to 575 (mod 576) backward, measuring a kernel KD (never the fastest) that no forward problem
 * has. Returns its malloc'd path. */
char *test_fdb_synthetic_write(int n, int with_backward);
/* A fresh folder (malloc'd path) holding the GEMM benchmark table of the hostile-input reproducers
 * (tests/fixtures/repro/gemm_t.csv: 36 problems M,N,K,dtype x 16 configurations tile_m,tile_n,tile_k,split_k,
 * time_us and a vendor rank) as t.csv with its schema t.schema.json. */
char *test_gemm_table_dir(void);
/* Path of a shipped MIOpen file under datasets/miopen/ of the source tree. */
const char *test_miopen(const char *name);
/* The first `lines` lines of a bzip2 file (all of it when it has fewer), decompressed only as far as they reach: a
 * test that needs the head of a large find-db does not pay for the whole file. malloc'd and NUL-terminated, *len
 * without the NUL; NULL when the file cannot be opened or is not bzip2. */
char *test_bz2_lines(const char *path, int lines, size_t *len);

#endif
