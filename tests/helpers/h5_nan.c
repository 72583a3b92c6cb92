/* Edits a model file's float datasets to NaN through HDF5 (h5_nan.h). */
#include "h5_nan.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"

/* Fills one dataset of g with NaN when it is a float dataset: 1 when it did, 0 when it is none, -1 on failure. */
static int fill_one(hid_t g, const char *name)
{
    H5O_info_t info;
    if (H5Oget_info_by_name(g, name, &info, H5P_DEFAULT) < 0 || info.type != H5O_TYPE_DATASET) return 0;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0) return -1;
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
    int done = 0;
    if (H5Tget_class(t) == H5T_FLOAT) {
        hssize_t n = H5Sget_simple_extent_npoints(sp);
        float *nan = malloc((size_t)(n > 0 ? n : 1) * sizeof *nan);
        for (hssize_t j = 0; nan && j < n; j++) nan[j] = NAN;
        done = nan && H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, nan) >= 0 ? 1 : -1;
        free(nan);
    }
    H5Tclose(t);
    H5Sclose(sp);
    H5Dclose(d);
    return done;
}

int test_h5_fill_nan(const char *path, const char *group, const char *only)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return -1;
    hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
    char **names = NULL;
    size_t n = 0;
    int edited = g >= 0 && hr_h5_list(g, &names, &n) == HR_OK ? 0 : -1;
    for (size_t i = 0; edited >= 0 && i < n; i++) {
        if (only && strcmp(names[i], only)) continue;
        int r = fill_one(g, names[i]);
        edited = r < 0 ? -1 : edited + r;
    }
    if (names) hr_h5_free_strings(names, n);
    if (g >= 0) H5Gclose(g);
    H5Fclose(f);
    if (edited >= 0 && hr_h5_seal_file(path) != HR_OK) edited = -1;
    return edited;
}
