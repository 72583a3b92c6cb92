/* Whole-file input, decompressed by content: bzip2 (libbz2, its blocks on several threads) or gzip (zlib). */
#include <bzlib.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

/* ---- parallel decompression of one bzip2 stream ----
 * A bzip2 stream is a header "BZh<level>", blocks that each start with the 48-bit magic 0x314159265359
 * followed by the block's CRC, and an end-of-stream marker 0x177245385090 with the combined CRC, all at
 * arbitrary bit offsets. Each block is made into a stream of its own (header + block bits + end marker
 * whose combined CRC, for one block, equals the block CRC), so blocks decompress independently on
 * separate threads and are concatenated in order. Anything unexpected (several streams, a magic inside
 * the data that does not decode) falls back to the serial path, which also reports damage. */

#define BZ_BLOCK_MAGIC 0x314159265359ULL
#define BZ_EOS_MAGIC 0x177245385090ULL
#define BZ_MASK48 0xffffffffffffULL

static int get_bit(const unsigned char *b, size_t i)
{
    return (b[i >> 3] >> (7 - (i & 7))) & 1;
}

static void put_bits(unsigned char *out, size_t *at, uint64_t v, int n)
{
    for (int k = n - 1; k >= 0; k--, (*at)++)
        if ((v >> k) & 1) out[*at >> 3] |= (unsigned char)(0x80 >> (*at & 7));
}

typedef struct bz_job {
    const unsigned char *in;
    size_t *starts;     /* (n_blocks + 1) bit offsets; the last is the end-of-stream marker */
    int n_blocks;
    char level;
    char **out;
    size_t *out_len;
    int *status;
    const char *path;
} bz_job;

static void bz_job_run(void *ctx, size_t begin, size_t end, int tid)
{
    bz_job *j = ctx;
    for (size_t b = begin; b < end; b++) {
        size_t s = j->starts[b], e = j->starts[b + 1], nbits = e - s;
        size_t bytes = 4 + (nbits + 80 + 7) / 8 + 1;
        unsigned char *tmp = calloc(bytes, 1);
        if (!tmp) {
            j->status[b] = HR_ENOMEM;
            continue;
        }
        memcpy(tmp, "BZh", 3);
        tmp[3] = (unsigned char)j->level;
        size_t at = 32;
        for (size_t i = s; i < e; i++, at++)
            if (get_bit(j->in, i)) tmp[at >> 3] |= (unsigned char)(0x80 >> (at & 7));
        uint64_t crc = 0;
        for (size_t i = s + 48; i < s + 80; i++) crc = (crc << 1) | (uint64_t)get_bit(j->in, i);
        put_bits(tmp, &at, BZ_EOS_MAGIC, 48);
        put_bits(tmp, &at, crc, 32);
        j->status[b] = bz2_decompress(j->path, (const char *)tmp, (at + 7) / 8, &j->out[b], &j->out_len[b]);
        free(tmp);
    }
}

/* Returns HR_OK with the data, or HR_EINVAL when the file does not suit splitting (caller goes serial). */
static int bz2_decompress_parallel(const char *path, const char *in, size_t in_len, int threads, char **out,
                                   size_t *out_len)
{
    const unsigned char *u = (const unsigned char *)in;
    if (in_len < 14 || threads < 2) return HR_EINVAL;
    size_t cap = 64, n = 0, eos = 0;
    size_t *starts = malloc(cap * sizeof *starts);
    if (!starts) return HR_EINVAL;
    uint64_t reg = 0;
    size_t nbits = in_len * 8;
    for (size_t i = 32; i < nbits; i++) {
        reg = ((reg << 1) | (uint64_t)get_bit(u, i)) & BZ_MASK48;
        if (i < 32 + 47) continue;
        if (reg == BZ_BLOCK_MAGIC) {
            if (n + 2 > cap) {
                size_t *ns = realloc(starts, (cap *= 2) * sizeof *ns);
                if (!ns) {
                    free(starts);
                    return HR_EINVAL;
                }
                starts = ns;
            }
            starts[n++] = i - 47;
        } else if (reg == BZ_EOS_MAGIC) {
            eos = i - 47;
            break;
        }
    }
    /* one stream only: the end marker, its CRC and padding must close the file */
    if (n < 2 || !eos || (eos + 80 + 7) / 8 != in_len) {
        free(starts);
        return HR_EINVAL;
    }
    starts[n] = eos;
    bz_job j = {u, starts, (int)n, in[3], calloc(n, sizeof(char *)), calloc(n, sizeof(size_t)), calloc(n, sizeof(int)), path};
    int rc = HR_OK;
    if (!j.out || !j.out_len || !j.status) rc = HR_EINVAL;
    if (!rc) hr_parallel_for(threads, n, bz_job_run, &j);
    size_t total = 0;
    for (size_t b = 0; !rc && b < n; b++) {
        if (j.status[b]) rc = HR_EINVAL;
        else total += j.out_len[b];
    }
    char *buf = rc ? NULL : hr_malloc(total + 1);
    if (!rc && !buf) rc = HR_EINVAL;
    if (!rc) {
        size_t at = 0;
        for (size_t b = 0; b < n; b++) {
            memcpy(buf + at, j.out[b], j.out_len[b]);
            at += j.out_len[b];
        }
        buf[total] = '\0';
        *out = buf;
        *out_len = total;
    }
    for (size_t b = 0; j.out && b < n; b++) free(j.out[b]);
    free(j.out);
    free(j.out_len);
    free(j.status);
    free(starts);
    return rc;
}

/* gzip (one member or several concatenated) into a NUL-terminated buffer that replaces *buf. */
static int gunzip(const char *path, char **buf, size_t *len)
{
    size_t cap = *len * 4 + 4096, n = 0;
    char *outb = hr_malloc(cap + 1);
    if (!outb) return HR_ENOMEM;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) {
        free(outb);
        return hr_error(HR_ENOMEM, "%s: cannot start gzip decompression", path);
    }
    z.next_in = (unsigned char *)*buf;
    z.avail_in = (uInt)(*len > 0x7fffffff ? 0x7fffffff : *len);
    int zr = Z_OK;
    for (;;) {
        if (n == cap) {
            char *nb = realloc(outb, cap * 2 + 1);
            if (!nb) {
                zr = Z_MEM_ERROR;
                break;
            }
            outb = nb;
            cap *= 2;
        }
        z.next_out = (unsigned char *)outb + n;
        z.avail_out = (uInt)(cap - n > 0x7fffffff ? 0x7fffffff : cap - n);
        zr = inflate(&z, Z_NO_FLUSH);
        n = (size_t)((char *)z.next_out - outb);
        if (zr == Z_STREAM_END) {
            /* concatenated gzip members: go on with the next one */
            if (z.avail_in == 0) break;
            if (inflateReset(&z) != Z_OK) break;
            continue;
        }
        if (zr != Z_OK && !(zr == Z_BUF_ERROR && z.avail_out == 0)) break;
    }
    inflateEnd(&z);
    if (zr != Z_STREAM_END) {
        free(outb);
        return zr == Z_MEM_ERROR ? hr_error(HR_ENOMEM, "%s: out of memory", path)
                                 : hr_error(HR_EFORMAT, "%s: gzip data is truncated or corrupt", path);
    }
    free(*buf);
    outb[n] = '\0';
    *buf = outb;
    *len = n;
    return HR_OK;
}

int data_read_file(const char *path, int threads, char **buf, size_t *len)
{
    char *raw;
    size_t raw_len;
    int rc = hr_file_read_all(path, &raw, &raw_len);
    if (rc) return rc;
    if (raw_len >= 4 && memcmp(raw, "BZh", 3) == 0 && raw[3] >= '1' && raw[3] <= '9') {
        rc = bz2_decompress_parallel(path, raw, raw_len, hr_threads_resolve(threads), buf, len);
        if (rc) rc = bz2_decompress(path, raw, raw_len, buf, len);
        free(raw);
        return rc;
    }
    *buf = raw;
    *len = raw_len;
    if (raw_len >= 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b) {
        rc = gunzip(path, buf, len);
        if (rc) {
            free(raw);
            *buf = NULL;
            *len = 0;
        }
    }
    return rc;
}
