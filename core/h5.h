/* h5: checked HDF5 helpers shared by dataset caches, checkpoints and model files.
 *
 * Every call checks HDF5's status and turns a failure into an hr_status with a message naming the
 * file object. String lists are stored as one NUL-separated uint8 dataset (fast for 10^5 keys).
 * Files are built in memory and sealed: a 512-byte HDF5 user block at the start records the format name,
 * the byte count and a crc32 of everything after it. hr_h5_close writes the sealed image through the atomic
 * writer (temporary file, fsync, rename); hr_h5_open reads the whole file, checks the seal ("checksum
 * mismatch, the file is damaged"), and only then lets HDF5 parse the image, from memory. A file without
 * the block (an HDF5 file from another tool) is refused; hr_h5_seal_file seals one on purpose.
 */
#ifndef HEURIST_CORE_H5_H
#define HEURIST_CORE_H5_H

#include <hdf5.h>
#include <stdint.h>

#include "core/core.h"

#define HR_H5_USERBLOCK 512

typedef struct hr_h5_out {
    hid_t file; /* in memory until hr_h5_close */
    char *path; /* final path */
} hr_h5_out;

/* Starts an in-memory HDF5 file for path (refused when path exists and is not a regular file). */
int hr_h5_create(const char *path, hr_h5_out *out);
/* Seals the image and writes it atomically to path (commit != 0), or discards it (commit == 0). */
int hr_h5_close(hr_h5_out *out, int commit);
/* Checks the seal of a whole file image and opens it read-only from memory (HDF5 copies the image). */
int hr_h5_open_image(const char *path, const void *img, size_t len, hid_t *file);
/* (Re)seals an HDF5 file in place: recomputes the checksum of a sealed file, or prepends the block to a
 * plain one. For files edited through HDF5 on purpose (tests, repairs), never part of loading. */
int hr_h5_seal_file(const char *path);
/* Opens an existing file read-only; checks attribute "format" == format and "version" <= max_version
 * (a newer version is refused with HR_EVERSION). *version receives the stored version. */
int hr_h5_open(const char *path, const char *format, int max_version, hid_t *file, int *version);

int hr_h5_attr_write_str(hid_t obj, const char *name, const char *value);
int hr_h5_attr_write_int(hid_t obj, const char *name, long long value);
int hr_h5_attr_write_double(hid_t obj, const char *name, double value);
/* Stored as u64 (seeds): a signed read would clip values >= 2^63. */
int hr_h5_attr_write_uint64(hid_t obj, const char *name, uint64_t value);
/* Reads a string attribute into a malloc'd buffer. */
int hr_h5_attr_read_str(hid_t obj, const char *name, char **value);
int hr_h5_attr_read_int(hid_t obj, const char *name, long long *value);
int hr_h5_attr_read_double(hid_t obj, const char *name, double *value);
int hr_h5_attr_read_uint64(hid_t obj, const char *name, uint64_t *value);
/* An integer attribute that must lie in [lo, hi]; out of range is HR_EFORMAT naming `what` and the attribute. */
int hr_h5_attr_read_int_in(hid_t obj, const char *what, const char *name, int lo, int hi, int *value);
int hr_h5_attr_exists(hid_t obj, const char *name);

/* Datasets of rank 1 or 2 (dims[1] == 0 means rank 1). type: H5T_NATIVE_FLOAT, _INT32, _INT64, _INT8, ... */
int hr_h5_write(hid_t loc, const char *name, hid_t type, size_t rows, size_t cols, const void *data);
/* Reads a dataset whose shape must be exactly (rows, cols) (cols 0: rank 1). */
int hr_h5_read(hid_t loc, const char *name, hid_t type, size_t rows, size_t cols, void *data);
/* Shape of a dataset: rank 1 gives cols = 0. */
int hr_h5_shape(hid_t loc, const char *name, size_t *rows, size_t *cols);
/* Reads a whole rank-1 or rank-2 dataset into a malloc'd buffer (element size from type). */
int hr_h5_read_alloc(hid_t loc, const char *name, hid_t type, size_t *rows, size_t *cols, void **data);

int hr_h5_write_strings(hid_t loc, const char *name, char *const *s, size_t n);
/* Reads a string list; *s is an array of n malloc'd strings (free each, then the array). */
int hr_h5_read_strings(hid_t loc, const char *name, char ***s, size_t *n);
void hr_h5_free_strings(char **s, size_t n);
/* A short string list as a rank-1 dataset of fixed-length strings (width: longest + 1, NUL-terminated),
 * which other HDF5 tools show as text. The reader takes any rank-1 fixed-length string dataset; *s is an
 * array of n malloc'd strings (hr_h5_free_strings). */
int hr_h5_write_fixed_strings(hid_t loc, const char *name, char *const *s, size_t n);
int hr_h5_read_fixed_strings(hid_t loc, const char *name, char ***s, size_t *n);

int hr_h5_exists(hid_t loc, const char *name);
/* Names of the links directly in group loc (datasets and groups), in name order: *names is an array of
 * n malloc'd strings (hr_h5_free_strings). */
int hr_h5_list(hid_t loc, char ***names, size_t *n);
/* Creates a group (write) or opens one (read), with a clear error naming it. */
int hr_h5_group_create(hid_t loc, const char *name, hid_t *group);
int hr_h5_group_open(hid_t loc, const char *name, hid_t *group);

/* Silences HDF5's own error stack printing (our messages replace it). Call once in main/tests. */
void hr_h5_quiet(void);

#endif
