/* Model files with numbers edited to NaN, as a diverged run or a damaged copy leaves them: for the tests that a
 * loader or a prediction refuses them. */
#ifndef HEURIST_TEST_H5_NAN_H
#define HEURIST_TEST_H5_NAN_H

/* Sets the float datasets of `group` (a path inside the heurist HDF5 file at `path`) to NaN, the one named
 * `only` or every one when only is NULL, and seals the file again. Returns how many datasets it set, or -1 when
 * the file or group does not open or a write fails. */
int test_h5_fill_nan(const char *path, const char *group, const char *only);

#endif
