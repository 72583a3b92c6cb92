/* Checked HDF5 helpers. */
#include "core/h5.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

void hr_h5_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static const char *obj_name(hid_t obj, char *buf, size_t n)
{
    ssize_t k = H5Iget_name(obj, buf, n);
    if (k <= 0) snprintf(buf, n, "?");
    return buf;
}

/* An image opened from memory carries its path plus this suffix: HDF5's core driver refuses to open an
 * image under the name of a file that exists on disk. Messages show the path without it. */
#define IMAGE_SUFFIX "#heurist-image"

static const char *file_name(hid_t obj, char *buf, size_t n)
{
    ssize_t k = H5Fget_name(obj, buf, n);
    if (k <= 0) snprintf(buf, n, "?");
    size_t len = strlen(buf), sl = strlen(IMAGE_SUFFIX);
    if (len > sl && strcmp(buf + len - sl, IMAGE_SUFFIX) == 0) buf[len - sl] = '\0';
    return buf;
}

/* The names are fetched first: as sibling arguments, strcmp(on_) could run before obj_name fills on_. */
#define H5_FAIL(obj, code, ...)                                                                    \
    do {                                                                                           \
        char fn_[512], on_[256], msg_[512];                                                        \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                                  \
        file_name(obj, fn_, sizeof fn_);                                                           \
        obj_name(obj, on_, sizeof on_);                                                            \
        return hr_error(code, "%s: %s%s%s", fn_, on_, strcmp(on_, "/") ? "/" : "", msg_);          \
    } while (0)

/* ---- the integrity block ----
 * Every file heurist writes starts with a 512-byte HDF5 user block (HDF5 itself skips it):
 *   "heurist-sealed-hdf5 1\nformat <name>\nbytes <n>\ncrc32 <8 hex digits>\n", NUL-padded,
 * where crc32 (zlib's) covers the n bytes after the block. The file is built in memory (HDF5's core
 * driver, no backing store), sealed, and written through the atomic writer; a reader checks the seal on
 * the whole image before HDF5 parses a byte of it, and opens the checked image from memory. */
#define SEAL_MAGIC "heurist-sealed-hdf5 1\n"

static int seal_fill(unsigned char *img, size_t len, const char *format)
{
    if (len < HR_H5_USERBLOCK) return HR_EINVAL;
    unsigned long crc = crc32_z(0L, img + HR_H5_USERBLOCK, len - HR_H5_USERBLOCK);
    char block[HR_H5_USERBLOCK];
    memset(block, 0, sizeof block);
    int k = snprintf(block, sizeof block, SEAL_MAGIC "format %.200s\nbytes %zu\ncrc32 %08lx\n", format,
                     len - HR_H5_USERBLOCK, crc);
    if (k < 0 || (size_t)k >= sizeof block) return HR_EINVAL;
    memcpy(img, block, sizeof block);
    return HR_OK;
}

/* Checks the seal of a whole file image; messages name path. */
static int seal_check(const char *path, const unsigned char *img, size_t len)
{
    if (len < HR_H5_USERBLOCK || memcmp(img, SEAL_MAGIC, strlen(SEAL_MAGIC)) != 0) {
        static const unsigned char hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
        if (len >= 8 && memcmp(img, hdf5_sig, 8) == 0)
            return hr_error(HR_EFORMAT, "%s: HDF5 file without heurist's integrity block (not written by heurist, "
                                        "or by a heurist older than its checksums); it cannot be verified",
                            path);
        return hr_error(HR_EFORMAT, "%s: not a heurist HDF5 file (no integrity block)", path);
    }
    char block[HR_H5_USERBLOCK + 1];
    memcpy(block, img, HR_H5_USERBLOCK);
    block[HR_H5_USERBLOCK] = '\0';
    const char *b = strstr(block, "\nbytes "), *c = strstr(block, "\ncrc32 ");
    unsigned long long n = 0;
    unsigned long crc = 0;
    if (!b || !c || sscanf(b, "\nbytes %llu", &n) != 1 || sscanf(c, "\ncrc32 %8lx", &crc) != 1)
        return hr_error(HR_EFORMAT, "%s: integrity block is malformed, the file is damaged", path);
    if (n != len - HR_H5_USERBLOCK)
        return hr_error(HR_EFORMAT, "%s: %zu bytes after the integrity block, it records %llu: the file is "
                                    "truncated or damaged", path, len - HR_H5_USERBLOCK, n);
    if (crc32_z(0L, img + HR_H5_USERBLOCK, len - HR_H5_USERBLOCK) != crc)
        return hr_error(HR_EFORMAT, "%s: checksum mismatch, the file is damaged", path);
    return HR_OK;
}

int hr_h5_create(const char *path, hr_h5_out *out)
{
    hr_h5_quiet();
    memset(out, 0, sizeof *out);
    out->file = -1;
    int rc = hr_file_check_target(path);
    if (rc) return rc;
    /* the file is written only at hr_h5_close: a folder that cannot take it is reported now, before the work */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : hr_strdup(".");
    if (!dir) return HR_ENOMEM;
    if (access(dir, W_OK | X_OK) != 0) {
        rc = hr_error(HR_EIO, "%s: cannot write in folder %s: %s", path, dir, strerror(errno));
        free(dir);
        return rc;
    }
    free(dir);
    out->path = hr_strdup(path);
    if (!out->path) return HR_ENOMEM;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE);
    int ok = fapl >= 0 && fcpl >= 0 && H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0 &&
             H5Pset_userblock(fcpl, HR_H5_USERBLOCK) >= 0;
    /* in memory only: the name labels the file in HDF5's messages and ours */
    out->file = ok ? H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl) : -1;
    if (fapl >= 0) H5Pclose(fapl);
    if (fcpl >= 0) H5Pclose(fcpl);
    if (out->file < 0) {
        free(out->path);
        memset(out, 0, sizeof *out);
        return hr_error(HR_EIO, "%s: cannot create an in-memory HDF5 file", path);
    }
    return HR_OK;
}

int hr_h5_close(hr_h5_out *out, int commit)
{
    int rc = HR_OK;
    unsigned char *img = NULL;
    if (out->file >= 0 && commit) {
        char *format = NULL;
        if (H5Aexists(out->file, "format") > 0) hr_h5_attr_read_str(out->file, "format", &format);
        /* the image HDF5 hands out starts at the superblock: the user block goes in front of it */
        ssize_t n = H5Fflush(out->file, H5F_SCOPE_GLOBAL) >= 0 ? H5Fget_file_image(out->file, NULL, 0) : -1;
        size_t total = (size_t)n + HR_H5_USERBLOCK;
        if (n <= 0) rc = hr_error(HR_EIO, "%s: cannot build the HDF5 image", out->path);
        else if (!(img = hr_calloc(total, 1))) rc = HR_ENOMEM;
        else if (H5Fget_file_image(out->file, img + HR_H5_USERBLOCK, (size_t)n) != n)
            rc = hr_error(HR_EIO, "%s: cannot build the HDF5 image", out->path);
        else if (seal_fill(img, total, format ? format : "unknown"))
            rc = hr_error(HR_EIO, "%s: cannot seal the HDF5 image", out->path);
        if (!rc) rc = hr_file_write_atomic(out->path, img, total);
        free(format);
    }
    if (out->file >= 0 && H5Fclose(out->file) < 0 && !rc) rc = hr_error(HR_EIO, "%s: closing HDF5 file failed", out->path);
    out->file = -1;
    free(img);
    free(out->path);
    out->path = NULL;
    return rc;
}

int hr_h5_open_image(const char *path, const void *img, size_t len, hid_t *file)
{
    hr_h5_quiet();
    *file = -1;
    int rc = seal_check(path, img, len);
    if (rc) return rc;
    size_t nn = strlen(path) + sizeof IMAGE_SUFFIX;
    char *name = hr_malloc(nn);
    if (!name) return HR_ENOMEM;
    snprintf(name, nn, "%s" IMAGE_SUFFIX, path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int ok = fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0 && H5Pset_file_image(fapl, (void *)img, len) >= 0;
    hid_t f = ok ? H5Fopen(name, H5F_ACC_RDONLY, fapl) : -1;
    if (fapl >= 0) H5Pclose(fapl);
    free(name);
    if (f < 0) return hr_error(HR_EFORMAT, "%s: cannot open HDF5 file (corrupt?)", path);
    *file = f;
    return HR_OK;
}

int hr_h5_open(const char *path, const char *format, int max_version, hid_t *file, int *version)
{
    hr_h5_quiet();
    *file = -1;
    if (!hr_file_exists(path)) return hr_error(HR_EIO, "%s: no such file", path);
    char *img;
    size_t len;
    int rc = hr_file_read_all(path, &img, &len);
    if (rc) return rc;
    hid_t f;
    rc = hr_h5_open_image(path, img, len, &f);
    free(img); /* HDF5 keeps its own copy of the image */
    if (rc) return rc;
    char *fmt = NULL;
    long long ver = 0;
    if (hr_h5_attr_read_str(f, "format", &fmt) || strcmp(fmt, format) != 0) {
        rc = hr_error(HR_EFORMAT, "%s: not a %s file (format attribute is '%s')", path, format, fmt ? fmt : "missing");
        free(fmt);
        H5Fclose(f);
        return rc;
    }
    free(fmt);
    if (hr_h5_attr_read_int(f, "version", &ver)) {
        H5Fclose(f);
        return hr_error(HR_EFORMAT, "%s: %s file without a version attribute", path, format);
    }
    if (ver < 1) {
        H5Fclose(f);
        return hr_error(HR_EFORMAT, "%s: %s file with a bad version %lld", path, format, ver);
    }
    if (ver > max_version) {
        H5Fclose(f);
        return hr_error(HR_EVERSION, "%s: %s version %lld is newer than this heurist reads (up to %d); upgrade heurist",
                        path, format, ver, max_version);
    }
    *file = f;
    if (version) *version = (int)ver;
    return HR_OK;
}

int hr_h5_seal_file(const char *path)
{
    char *buf;
    size_t len;
    int rc = hr_file_read_all(path, &buf, &len);
    if (rc) return rc;
    static const unsigned char hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char *img = NULL;
    size_t n = 0;
    if (len >= HR_H5_USERBLOCK && memcmp(buf, SEAL_MAGIC, strlen(SEAL_MAGIC)) == 0) {
        img = (unsigned char *)buf;
        n = len;
        buf = NULL;
    } else if (len >= 8 && memcmp(buf, hdf5_sig, 8) == 0) {
        /* HDF5 finds a superblock at 512 and takes addresses relative to it, so prepending a block works */
        n = len + HR_H5_USERBLOCK;
        if (!(img = hr_malloc(n))) rc = HR_ENOMEM;
        else memcpy(img + HR_H5_USERBLOCK, buf, len);
    } else {
        rc = hr_error(HR_EFORMAT, "%s: not an HDF5 file", path);
    }
    free(buf);
    if (!rc) {
        /* the format name from the file itself */
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
        char *format = NULL;
        memset(img, 0, HR_H5_USERBLOCK);
        if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0 && H5Pset_file_image(fapl, img, n) >= 0)
            f = H5Fopen(IMAGE_SUFFIX, H5F_ACC_RDONLY, fapl);
        if (fapl >= 0) H5Pclose(fapl);
        if (f >= 0 && H5Aexists(f, "format") > 0) hr_h5_attr_read_str(f, "format", &format);
        if (f >= 0) H5Fclose(f);
        rc = seal_fill(img, n, format ? format : "unknown") ? hr_error(HR_EIO, "%s: cannot seal", path)
                                                            : hr_file_write_atomic(path, img, n);
        free(format);
    }
    free(img);
    return rc;
}

int hr_h5_attr_exists(hid_t obj, const char *name)
{
    return H5Aexists(obj, name) > 0;
}

int hr_h5_attr_write_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(value) + 1);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t w = a >= 0 ? H5Awrite(a, t, value) : -1;
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    if (w < 0) H5_FAIL(obj, HR_EIO, "cannot write attribute '%s'", name);
    return HR_OK;
}

static int attr_write_num(hid_t obj, const char *name, hid_t type, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t w = a >= 0 ? H5Awrite(a, type, v) : -1;
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    if (w < 0) H5_FAIL(obj, HR_EIO, "cannot write attribute '%s'", name);
    return HR_OK;
}

int hr_h5_attr_write_int(hid_t obj, const char *name, long long value)
{
    return attr_write_num(obj, name, H5T_NATIVE_LLONG, &value);
}

int hr_h5_attr_write_double(hid_t obj, const char *name, double value)
{
    return attr_write_num(obj, name, H5T_NATIVE_DOUBLE, &value);
}

int hr_h5_attr_write_uint64(hid_t obj, const char *name, uint64_t value)
{
    return attr_write_num(obj, name, H5T_NATIVE_UINT64, &value);
}

int hr_h5_attr_read_str(hid_t obj, const char *name, char **value)
{
    *value = NULL;
    if (H5Aexists(obj, name) <= 0) H5_FAIL(obj, HR_EFORMAT, "missing attribute '%s'", name);
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (sp >= 0) H5Sclose(sp);
    if (ft < 0 || H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft) > 0 || np != 1 ||
        H5Tget_size(ft) == 0 || H5Tget_size(ft) > (1u << 24)) {
        if (ft >= 0) H5Tclose(ft);
        if (a >= 0) H5Aclose(a);
        H5_FAIL(obj, HR_EFORMAT, "attribute '%s' is not a fixed-length string", name);
    }
    size_t n = H5Tget_size(ft);
    char *buf = hr_calloc(n + 1, 1);
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, n);
    herr_t r = buf ? H5Aread(a, mt, buf) : -1;
    H5Tclose(mt);
    H5Tclose(ft);
    H5Aclose(a);
    if (r < 0) {
        free(buf);
        H5_FAIL(obj, HR_EFORMAT, "cannot read attribute '%s'", name);
    }
    *value = buf;
    return HR_OK;
}

static int attr_read_num(hid_t obj, const char *name, hid_t type, void *v)
{
    if (H5Aexists(obj, name) <= 0) H5_FAIL(obj, HR_EFORMAT, "missing attribute '%s'", name);
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    /* one number of a numeric class: a string or an array attribute would be read past v */
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    H5T_class_t fc = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (ft >= 0) H5Tclose(ft);
    if (sp >= 0) H5Sclose(sp);
    if (a >= 0 && ((fc != H5T_INTEGER && fc != H5T_FLOAT) || np != 1)) {
        H5Aclose(a);
        H5_FAIL(obj, HR_EFORMAT, "attribute '%s' is not a single number", name);
    }
    herr_t r = a >= 0 ? H5Aread(a, type, v) : -1;
    if (a >= 0) H5Aclose(a);
    if (r < 0) H5_FAIL(obj, HR_EFORMAT, "cannot read attribute '%s'", name);
    return HR_OK;
}

int hr_h5_attr_read_int(hid_t obj, const char *name, long long *value)
{
    return attr_read_num(obj, name, H5T_NATIVE_LLONG, value);
}

int hr_h5_attr_read_double(hid_t obj, const char *name, double *value)
{
    return attr_read_num(obj, name, H5T_NATIVE_DOUBLE, value);
}

int hr_h5_attr_read_uint64(hid_t obj, const char *name, uint64_t *value)
{
    return attr_read_num(obj, name, H5T_NATIVE_UINT64, value);
}

int hr_h5_attr_read_int_in(hid_t obj, const char *what, const char *name, int lo, int hi, int *value)
{
    long long v;
    int rc = hr_h5_attr_read_int(obj, name, &v);
    if (rc) return rc;
    if (v < lo || v > hi) return hr_error(HR_EFORMAT, "%s: %s = %lld out of range [%d, %d]", what, name, v, lo, hi);
    *value = (int)v;
    return HR_OK;
}

int hr_h5_write(hid_t loc, const char *name, hid_t type, size_t rows, size_t cols, const void *data)
{
    hsize_t dims[2] = {rows, cols};
    hid_t sp = H5Screate_simple(cols ? 2 : 1, dims, NULL);
    hid_t d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t w = d >= 0 ? ((rows && (cols || 1)) ? H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : 0) : -1;
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    if (w < 0) H5_FAIL(loc, HR_EIO, "cannot write dataset '%s'", name);
    return HR_OK;
}

int hr_h5_exists(hid_t loc, const char *name)
{
    return H5Lexists(loc, name, H5P_DEFAULT) > 0;
}

int hr_h5_list(hid_t loc, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    H5G_info_t info;
    if (H5Gget_info(loc, &info) < 0) H5_FAIL(loc, HR_EIO, "cannot list the group");
    char **out = hr_calloc(info.nlinks ? (size_t)info.nlinks : 1, sizeof *out);
    if (!out) return HR_ENOMEM;
    for (hsize_t k = 0; k < info.nlinks; k++) {
        ssize_t len = H5Lget_name_by_idx(loc, ".", H5_INDEX_NAME, H5_ITER_INC, k, NULL, 0, H5P_DEFAULT);
        char *name = len < 0 ? NULL : hr_malloc((size_t)len + 1);
        if (!name || H5Lget_name_by_idx(loc, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, (size_t)len + 1,
                                        H5P_DEFAULT) < 0) {
            free(name);
            hr_h5_free_strings(out, (size_t)k);
            if (len >= 0 && !name) return HR_ENOMEM;
            H5_FAIL(loc, HR_EIO, "cannot read the name of link %llu", (unsigned long long)k);
        }
        out[k] = name;
    }
    *names = out;
    *n = (size_t)info.nlinks;
    return HR_OK;
}

int hr_h5_shape(hid_t loc, const char *name, size_t *rows, size_t *cols)
{
    if (!hr_h5_exists(loc, name)) H5_FAIL(loc, HR_EFORMAT, "missing dataset '%s'", name);
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) H5_FAIL(loc, HR_EFORMAT, "cannot open dataset '%s'", name);
    hid_t sp = H5Dget_space(d);
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[2] = {0, 0};
    if (rank >= 1 && rank <= 2) H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    H5Dclose(d);
    if (rank < 1 || rank > 2) H5_FAIL(loc, HR_EFORMAT, "dataset '%s' has rank %d, expected 1 or 2", name, rank);
    *rows = dims[0];
    *cols = rank == 2 ? dims[1] : 0;
    return HR_OK;
}

int hr_h5_read(hid_t loc, const char *name, hid_t type, size_t rows, size_t cols, void *data)
{
    size_t r, c;
    int rc = hr_h5_shape(loc, name, &r, &c);
    if (rc) return rc;
    if (r != rows || c != cols)
        H5_FAIL(loc, HR_EFORMAT, "dataset '%s' has shape (%zu, %zu), expected (%zu, %zu)", name, r, c, rows, cols);
    if (rows == 0) return HR_OK;
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    /* HDF5 converts between numbers of one class; a string or compound stored where numbers belong is an error */
    hid_t ft = d >= 0 ? H5Dget_type(d) : -1;
    H5T_class_t fc = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS, mc = H5Tget_class(type);
    if (ft >= 0) H5Tclose(ft);
    if (d >= 0 && fc != mc && !(fc == H5T_INTEGER && mc == H5T_FLOAT)) {
        H5Dclose(d);
        H5_FAIL(loc, HR_EFORMAT, "dataset '%s' has the wrong element type", name);
    }
    herr_t e = d >= 0 ? H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : -1;
    if (d >= 0) H5Dclose(d);
    if (e < 0) H5_FAIL(loc, HR_EFORMAT, "cannot read dataset '%s' (truncated file?)", name);
    return HR_OK;
}

int hr_h5_read_alloc(hid_t loc, const char *name, hid_t type, size_t *rows, size_t *cols, void **data)
{
    *data = NULL;
    int rc = hr_h5_shape(loc, name, rows, cols);
    if (rc) return rc;
    size_t per = H5Tget_size(type), width = *cols ? *cols : 1;
    if (per == 0 || width > SIZE_MAX / per || *rows > SIZE_MAX / (width * per) - 1)
        H5_FAIL(loc, HR_EFORMAT, "dataset '%s' is too large (%zu x %zu)", name, *rows, *cols);
    size_t count = *rows * width;
    void *buf = hr_malloc(count * per + 1);
    if (!buf) return HR_ENOMEM;
    rc = hr_h5_read(loc, name, type, *rows, *cols, buf);
    if (rc) {
        free(buf);
        return rc;
    }
    *data = buf;
    return HR_OK;
}

int hr_h5_write_strings(hid_t loc, const char *name, char *const *s, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += strlen(s[i]) + 1;
    char *blob = hr_malloc(total ? total : 1);
    if (!blob) return HR_ENOMEM;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(s[i]) + 1;
        memcpy(blob + at, s[i], k);
        at += k;
    }
    int rc = hr_h5_write(loc, name, H5T_NATIVE_UCHAR, total, 0, blob);
    free(blob);
    if (rc) return rc;
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    rc = hr_h5_attr_write_int(d, "count", (long long)n);
    if (!rc) rc = hr_h5_attr_write_str(d, "encoding", "NUL-separated UTF-8 strings");
    H5Dclose(d);
    return rc;
}

int hr_h5_read_strings(hid_t loc, const char *name, char ***s, size_t *n)
{
    *s = NULL;
    *n = 0;
    size_t rows, cols;
    char *blob;
    int rc = hr_h5_read_alloc(loc, name, H5T_NATIVE_UCHAR, &rows, &cols, (void **)&blob);
    if (rc) return rc;
    long long count = 0;
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    rc = hr_h5_attr_read_int(d, "count", &count);
    H5Dclose(d);
    if (rc) {
        free(blob);
        return rc;
    }
    size_t nul = 0;
    for (size_t i = 0; i < rows; i++) nul += blob[i] == '\0';
    if (cols != 0 || count < 0 || (size_t)count != nul || (rows && blob[rows - 1] != '\0')) {
        free(blob);
        H5_FAIL(loc, HR_EFORMAT, "string list '%s' is malformed (%zu strings, count says %lld)", name, nul, count);
    }
    char **out = hr_calloc((size_t)count ? (size_t)count : 1, sizeof *out);
    if (!out) {
        free(blob);
        return HR_ENOMEM;
    }
    size_t at = 0;
    for (size_t i = 0; i < (size_t)count; i++) {
        out[i] = hr_strdup(blob + at);
        if (!out[i]) {
            hr_h5_free_strings(out, i);
            free(blob);
            return HR_ENOMEM;
        }
        at += strlen(blob + at) + 1;
    }
    free(blob);
    *s = out;
    *n = (size_t)count;
    return HR_OK;
}

void hr_h5_free_strings(char **s, size_t n)
{
    if (!s) return;
    for (size_t i = 0; i < n; i++) free(s[i]);
    free(s);
}

int hr_h5_write_fixed_strings(hid_t loc, const char *name, char *const *s, size_t n)
{
    size_t width = 1;
    for (size_t i = 0; i < n; i++)
        if (strlen(s[i]) + 1 > width) width = strlen(s[i]) + 1;
    char *buf = hr_calloc(n ? n : 1, width);
    if (!buf) return HR_ENOMEM;
    for (size_t i = 0; i < n; i++) memcpy(buf + i * width, s[i], strlen(s[i]));
    /* a failure to make the type shows up as a failed write, which names the dataset */
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && H5Tset_size(t, width) < 0) {
        H5Tclose(t);
        t = -1;
    }
    int rc = hr_h5_write(loc, name, t, n, 0, buf);
    if (t >= 0) H5Tclose(t);
    free(buf);
    return rc;
}

int hr_h5_read_fixed_strings(hid_t loc, const char *name, char ***s, size_t *n)
{
    *s = NULL;
    *n = 0;
    size_t rows, cols;
    int rc = hr_h5_shape(loc, name, &rows, &cols);
    if (rc) return rc;
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t ft = d >= 0 ? H5Dget_type(d) : -1;
    size_t width = ft >= 0 && H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) == 0 ? H5Tget_size(ft) : 0;
    /* one byte more than stored, so that a string filling its width (NUL- or space-padded by other
     * writers) keeps its last character */
    hid_t mt = width ? H5Tcopy(ft) : -1;
    if (ft >= 0) H5Tclose(ft);
    if (cols != 0 || width == 0 || mt < 0 || H5Tset_size(mt, width + 1) < 0 ||
        H5Tset_strpad(mt, H5T_STR_NULLTERM) < 0) {
        if (mt >= 0) H5Tclose(mt);
        if (d >= 0) H5Dclose(d);
        H5_FAIL(loc, HR_EFORMAT, "dataset '%s' is not a list of fixed-length strings", name);
    }
    char *buf = hr_calloc(rows ? rows : 1, width + 1);
    char **out = hr_calloc(rows ? rows : 1, sizeof *out);
    herr_t e = buf && out && rows ? H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : 0;
    H5Tclose(mt);
    H5Dclose(d);
    rc = !buf || !out ? HR_ENOMEM : HR_OK;
    for (size_t i = 0; i < rows && rc == HR_OK && e >= 0; i++)
        if (!(out[i] = hr_strdup(buf + i * (width + 1)))) rc = HR_ENOMEM;
    free(buf);
    if (rc || e < 0) {
        hr_h5_free_strings(out, rows);
        if (rc) return rc;
        H5_FAIL(loc, HR_EFORMAT, "cannot read dataset '%s' (truncated file?)", name);
    }
    *s = out;
    *n = rows;
    return HR_OK;
}

int hr_h5_group_create(hid_t loc, const char *name, hid_t *group)
{
    *group = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (*group < 0) H5_FAIL(loc, HR_EIO, "cannot create group '%s'", name);
    return HR_OK;
}

int hr_h5_group_open(hid_t loc, const char *name, hid_t *group)
{
    *group = -1;
    if (!hr_h5_exists(loc, name)) H5_FAIL(loc, HR_EFORMAT, "missing group '%s'", name);
    *group = H5Gopen2(loc, name, H5P_DEFAULT);
    if (*group < 0) H5_FAIL(loc, HR_EFORMAT, "cannot open group '%s'", name);
    return HR_OK;
}
