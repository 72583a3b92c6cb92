/* Whole-file input with transparent bzip2 decompression (libbz2). */
#include <bzlib.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

static int bz2_decompress(const char *path, const char *in, size_t in_len, char **out, size_t *out_len)
{
    size_t cap = in_len * 6 + (1 << 20), n = 0;
    char *buf = hr_malloc(cap + 1);
    if (!buf) return HR_ENOMEM;
    size_t pos = 0;
    /* a .bz2 file may hold several concatenated streams (pbzip2 writes them) */
    while (pos < in_len) {
        bz_stream s;
        memset(&s, 0, sizeof s);
        if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) {
            free(buf);
            return hr_error(HR_ENOMEM, "%s: cannot start bzip2 decompression", path);
        }
        s.next_in = (char *)in + pos;
        s.avail_in = (unsigned)(in_len - pos > 0x7fffffff ? 0x7fffffff : in_len - pos);
        int rc;
        for (;;) {
            if (n == cap) {
                cap *= 2;
                char *nb = realloc(buf, cap + 1);
                if (!nb) {
                    BZ2_bzDecompressEnd(&s);
                    free(buf);
                    return hr_error(HR_ENOMEM, "%s: out of memory decompressing", path);
                }
                buf = nb;
            }
            s.next_out = buf + n;
            size_t room = cap - n;
            s.avail_out = (unsigned)(room > 0x7fffffff ? 0x7fffffff : room);
            unsigned before_out = s.avail_out, before_in = s.avail_in;
            rc = BZ2_bzDecompress(&s);
            n += before_out - s.avail_out;
            if (rc == BZ_STREAM_END) break;
            if (rc != BZ_OK) {
                BZ2_bzDecompressEnd(&s);
                free(buf);
                return hr_error(HR_EFORMAT, "%s: corrupt bzip2 data (libbz2 code %d) after %zu bytes out", path,
                                rc, n);
            }
            if (s.avail_in == 0 && s.avail_out != 0) {
                BZ2_bzDecompressEnd(&s);
                free(buf);
                return hr_error(HR_EFORMAT, "%s: truncated bzip2 file (ends inside a stream after %zu bytes out)",
                                path, n);
            }
            if (before_in == s.avail_in && before_out == s.avail_out) {
                BZ2_bzDecompressEnd(&s);
                free(buf);
                return hr_error(HR_EFORMAT, "%s: bzip2 decompression made no progress", path);
            }
        }
        pos = (size_t)(s.next_in - in);
        BZ2_bzDecompressEnd(&s);
        /* trailing garbage that is not another stream ends the data */
        if (pos + 3 > in_len || memcmp(in + pos, "BZh", 3) != 0) break;
    }
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return HR_OK;
}

int data_read_maybe_bz2(const char *path, char **buf, size_t *len)
{
    char *raw;
    size_t raw_len;
    int rc = hr_file_read_all(path, &raw, &raw_len);
    if (rc) return rc;
    if (raw_len >= 4 && memcmp(raw, "BZh", 3) == 0 && raw[3] >= '1' && raw[3] <= '9') {
        rc = bz2_decompress(path, raw, raw_len, buf, len);
        free(raw);
        return rc;
    }
    *buf = raw;
    *len = raw_len;
    return HR_OK;
}
