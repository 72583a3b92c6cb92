/* Convolution problem keys: parsing, formatting and the geometry group hash. */
#include <stdio.h>
#include <string.h>

#include "data/data.h"

const char *const data_field_names[DATA_FIELD_COUNT] = {
    "in_c",     "in_d",     "in_h",     "in_w",  "fil_d", "fil_h", "fil_w", "out_c",
    "out_d",    "out_h",    "out_w",    "batch", "pad_d", "pad_h", "pad_w", "stride_d",
    "stride_h", "stride_w", "dil_d",    "dil_h", "dil_w", "bias",  "groups", "spatial_dim",
};
const char *const data_direction_names[DATA_DIR_COUNT] = {"F", "B", "W"};
const char *const data_dtype_names[DATA_DTYPE_COUNT] = {"FP32", "FP16", "BF16", "INT8", "INT32",
                                                        "FP8",  "BFP8", "FP64", "other"};
const char *const data_layout_names[DATA_LAYOUT_COUNT] = {"NCHW", "NHWC", "NCDHW", "NDHWC",
                                                          "CHWN", "mixed", "other"};

typedef struct tok {
    const char *s;
    size_t n;
} tok;

static int tok_eq(tok t, const char *lit)
{
    size_t n = strlen(lit);
    return t.n == n && memcmp(t.s, lit, n) == 0;
}

/* Non-negative decimal integer, the whole token. */
static int parse_uint(const char *s, size_t n, int64_t *v)
{
    if (n == 0 || n > 12) return -1;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

/* "AxB" or "AxBxC": exactly `dims` numbers separated by 'x'. */
static int parse_dims(tok t, int dims, int64_t *v)
{
    size_t start = 0;
    int k = 0;
    for (size_t i = 0; i <= t.n; i++) {
        if (i == t.n || t.s[i] == 'x') {
            if (k >= dims || parse_uint(t.s + start, i - start, &v[k])) return -1;
            k++;
            start = i + 1;
        }
    }
    return k == dims ? 0 : -1;
}

static int count_x(tok t)
{
    int c = 0;
    for (size_t i = 0; i < t.n; i++) c += t.s[i] == 'x';
    return c;
}

static int layout_of(tok t)
{
    for (int i = 0; i < DATA_LAYOUT_MIXED; i++)
        if (tok_eq(t, data_layout_names[i])) return i;
    return DATA_LAYOUT_OTHER;
}

static int dtype_of(tok t)
{
    for (int i = 0; i < DATA_DTYPE_OTHER; i++)
        if (tok_eq(t, data_dtype_names[i])) return i;
    return -1;
}

#define KEY_MAX_TOKENS 24

int data_key_parse(const char *key, size_t len, data_problem *out, const char **why)
{
    tok t[KEY_MAX_TOKENS];
    int nt = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || key[i] == '-') {
            if (nt == KEY_MAX_TOKENS) {
                *why = "too many key fields";
                return HR_EFORMAT;
            }
            t[nt].s = key + start;
            t[nt].n = i - start;
            nt++;
            start = i + 1;
        }
    }
    if (nt < 15) {
        *why = "too few key fields";
        return HR_EFORMAT;
    }
    memset(out, 0, sizeof *out);
    int64_t *f = out->f;
    int is3d;
    if (count_x(t[3]) == 1) is3d = 0;
    else if (count_x(t[3]) == 0 && count_x(t[4]) == 2) is3d = 1;
    else {
        *why = "bad filter field";
        return HR_EFORMAT;
    }
    int nd = is3d ? 3 : 2;
    int bias_at = is3d ? 13 : 11;
    if (nt < bias_at + 4) {
        *why = "too few key fields";
        return HR_EFORMAT;
    }
    int64_t v3[3];
    int i = 0;
    if (parse_uint(t[i++].s, t[0].n, &f[DATA_FIELD_IN_C])) goto numeric;
    f[DATA_FIELD_IN_D] = 1;
    if (is3d && parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_IN_D])) goto numeric;
    i += is3d;
    if (parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_IN_H])) goto numeric;
    i++;
    if (parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_IN_W])) goto numeric;
    i++;
    if (parse_dims(t[i++], nd, v3)) {
        *why = "bad filter field";
        return HR_EFORMAT;
    }
    f[DATA_FIELD_FIL_D] = is3d ? v3[0] : 1;
    f[DATA_FIELD_FIL_H] = v3[nd - 2];
    f[DATA_FIELD_FIL_W] = v3[nd - 1];
    if (parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_OUT_C])) goto numeric;
    i++;
    f[DATA_FIELD_OUT_D] = 1;
    if (is3d && parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_OUT_D])) goto numeric;
    i += is3d;
    if (parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_OUT_H])) goto numeric;
    i++;
    if (parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_OUT_W])) goto numeric;
    i++;
    if (parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_BATCH])) goto numeric;
    i++;
    static const data_field triple[3][3] = {
        {DATA_FIELD_PAD_D, DATA_FIELD_PAD_H, DATA_FIELD_PAD_W},
        {DATA_FIELD_STRIDE_D, DATA_FIELD_STRIDE_H, DATA_FIELD_STRIDE_W},
        {DATA_FIELD_DIL_D, DATA_FIELD_DIL_H, DATA_FIELD_DIL_W},
    };
    static const char *const triple_why[3] = {"bad pad field", "bad stride field", "bad dilation field"};
    for (int k = 0; k < 3; k++) {
        if (parse_dims(t[i++], nd, v3)) {
            *why = triple_why[k];
            return HR_EFORMAT;
        }
        f[triple[k][0]] = is3d ? v3[0] : (k == 0 ? 0 : 1);
        f[triple[k][1]] = v3[nd - 2];
        f[triple[k][2]] = v3[nd - 1];
    }
    if (parse_uint(t[i].s, t[i].n, &f[DATA_FIELD_BIAS]) || f[DATA_FIELD_BIAS] > 1) {
        *why = "bad bias field";
        return HR_EFORMAT;
    }
    i++;
    int rest = nt - i;
    if (rest == 3) {
        out->layout = (int8_t)layout_of(t[i]);
    } else if (rest == 5) {
        int a = layout_of(t[i]), b = layout_of(t[i + 1]), c = layout_of(t[i + 2]);
        out->layout = (int8_t)((a == b && b == c) ? a : DATA_LAYOUT_MIXED);
    } else {
        *why = "bad layout/type/direction fields";
        return HR_EFORMAT;
    }
    int dt = dtype_of(t[nt - 2]);
    if (dt < 0) {
        /* unknown but well-formed type names (upper-case letters and digits) are kept as "other" */
        tok d = t[nt - 2];
        if (d.n == 0) {
            *why = "bad data type field";
            return HR_EFORMAT;
        }
        for (size_t k = 0; k < d.n; k++)
            if (!((d.s[k] >= 'A' && d.s[k] <= 'Z') || (d.s[k] >= '0' && d.s[k] <= '9'))) {
                *why = "bad data type field";
                return HR_EFORMAT;
            }
        dt = DATA_DTYPE_OTHER;
    }
    out->dtype = (int8_t)dt;
    tok d = t[nt - 1];
    if (d.n == 0 || (d.n > 1 && d.s[1] != '_')) {
        *why = "bad direction field";
        return HR_EFORMAT;
    }
    switch (d.s[0]) {
    case 'F': out->direction = DATA_DIR_F; break;
    case 'B': out->direction = DATA_DIR_B; break;
    case 'W': out->direction = DATA_DIR_W; break;
    default: *why = "bad direction field"; return HR_EFORMAT;
    }
    f[DATA_FIELD_GROUPS] = 1;
    /* suffixes: "_g<G>" sets the group count; other "_..." suffixes are accepted and ignored */
    for (size_t k = 1; k < d.n; k++) {
        if (d.s[k] == '_' && k + 1 < d.n && d.s[k + 1] == 'g') {
            size_t e = k + 2;
            while (e < d.n && d.s[e] != '_') e++;
            if (parse_uint(d.s + k + 2, e - k - 2, &f[DATA_FIELD_GROUPS]) || f[DATA_FIELD_GROUPS] < 1) {
                *why = "bad group suffix";
                return HR_EFORMAT;
            }
        }
    }
    f[DATA_FIELD_SPATIAL_DIM] = nd;
    if (f[DATA_FIELD_IN_C] == 0 || f[DATA_FIELD_OUT_C] == 0 || f[DATA_FIELD_BATCH] == 0 ||
        f[DATA_FIELD_IN_H] == 0 || f[DATA_FIELD_IN_W] == 0 || f[DATA_FIELD_FIL_H] == 0 ||
        f[DATA_FIELD_FIL_W] == 0 || f[DATA_FIELD_STRIDE_H] == 0 || f[DATA_FIELD_STRIDE_W] == 0) {
        *why = "zero size field";
        return HR_EFORMAT;
    }
    return HR_OK;
numeric:
    *why = "non-numeric size field";
    return HR_EFORMAT;
}

int data_key_format(const data_problem *p, char *buf, size_t size)
{
    const int64_t *f = p->f;
    char dir[32];
    if (f[DATA_FIELD_GROUPS] > 1)
        snprintf(dir, sizeof dir, "%s_g%lld", data_direction_names[p->direction],
                 (long long)f[DATA_FIELD_GROUPS]);
    else
        snprintf(dir, sizeof dir, "%s", data_direction_names[p->direction]);
    const char *layout = data_layout_names[p->layout];
    if (p->layout >= DATA_LAYOUT_MIXED) layout = f[DATA_FIELD_SPATIAL_DIM] == 3 ? "NCDHW" : "NCHW";
    if (f[DATA_FIELD_SPATIAL_DIM] == 3)
        return snprintf(buf, size,
                        "%lld-%lld-%lld-%lld-%lldx%lldx%lld-%lld-%lld-%lld-%lld-%lld-%lldx%lldx%lld-"
                        "%lldx%lldx%lld-%lldx%lldx%lld-%lld-%s-%s-%s",
                        (long long)f[0], (long long)f[1], (long long)f[2], (long long)f[3], (long long)f[4],
                        (long long)f[5], (long long)f[6], (long long)f[7], (long long)f[8], (long long)f[9],
                        (long long)f[10], (long long)f[11], (long long)f[12], (long long)f[13],
                        (long long)f[14], (long long)f[15], (long long)f[16], (long long)f[17],
                        (long long)f[18], (long long)f[19], (long long)f[20], (long long)f[21], layout,
                        data_dtype_names[p->dtype], dir);
    return snprintf(buf, size,
                    "%lld-%lld-%lld-%lldx%lld-%lld-%lld-%lld-%lld-%lldx%lld-%lldx%lld-%lldx%lld-%lld-%s-%s-%s",
                    (long long)f[DATA_FIELD_IN_C], (long long)f[DATA_FIELD_IN_H], (long long)f[DATA_FIELD_IN_W],
                    (long long)f[DATA_FIELD_FIL_H], (long long)f[DATA_FIELD_FIL_W], (long long)f[DATA_FIELD_OUT_C],
                    (long long)f[DATA_FIELD_OUT_H], (long long)f[DATA_FIELD_OUT_W], (long long)f[DATA_FIELD_BATCH],
                    (long long)f[DATA_FIELD_PAD_H], (long long)f[DATA_FIELD_PAD_W],
                    (long long)f[DATA_FIELD_STRIDE_H], (long long)f[DATA_FIELD_STRIDE_W],
                    (long long)f[DATA_FIELD_DIL_H], (long long)f[DATA_FIELD_DIL_W], (long long)f[DATA_FIELD_BIAS],
                    layout, data_dtype_names[p->dtype], dir);
}

uint64_t data_problem_geometry_hash(const data_problem *p)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < DATA_FIELD_COUNT; i++) {
        uint64_t v = (uint64_t)p->f[i];
        for (int b = 0; b < 8; b++) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 1099511628211ULL;
        }
    }
    return h;
}
