/* perf-db loader: the tuned parameter sequences of one solver from MIOpen's SQLite perf-db. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

#define TUNE_MAX_LENGTH 64

static int table_exists(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st, NULL) !=
        SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    return -1;
}

static int open_perfdb(const char *path, int threads, sqlite3 **db)
{
    char *buf;
    size_t len;
    int rc = data_read_file(path, threads, &buf, &len);
    if (rc) return rc;
    if (len < 16 || memcmp(buf, "SQLite format 3", 16) != 0) {
        free(buf);
        return hr_error(HR_EFORMAT, "%s: not an SQLite database", path);
    }
    unsigned char *mem = sqlite3_malloc64(len);
    if (!mem) {
        free(buf);
        return hr_error(HR_ENOMEM, "%s: out of memory", path);
    }
    memcpy(mem, buf, len);
    free(buf);
    if (sqlite3_open_v2(":memory:", db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_free(mem);
        return hr_error(HR_EIO, "%s: cannot open SQLite", path);
    }
    int src = sqlite3_deserialize(*db, "main", mem, (sqlite3_int64)len, (sqlite3_int64)len,
                                  SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
    if (src != SQLITE_OK) {
        int r = hr_error(HR_EFORMAT, "%s: cannot load SQLite image: %s", path, sqlite3_errmsg(*db));
        sqlite3_close(*db);
        *db = NULL;
        return r;
    }
    const char *need[2] = {"config", "perf_db"};
    for (int i = 0; i < 2; i++) {
        int ex = table_exists(*db, need[i]);
        if (ex != 1) {
            int r = ex < 0 ? hr_error(HR_EFORMAT, "%s: not a readable SQLite database: %s", path, sqlite3_errmsg(*db))
                           : hr_error(HR_EFORMAT, "%s: not a perf-db: table '%s' is missing", path, need[i]);
            sqlite3_close(*db);
            *db = NULL;
            return r;
        }
    }
    return HR_OK;
}

/* Parses "a,b,c" into v; returns the count, -1 on a non-integer field, -2 on one outside int32. */
static int params_parse(const char *s, int32_t *v, int max)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || (*end != ',' && *end != '\0') || n == max) return -1;
        if (x < INT32_MIN || x > INT32_MAX) return -2;
        v[n++] = (int32_t)x;
        p = *end ? end + 1 : end;
        if (*end == ',' && *p == '\0') return -1;
    }
    return n;
}

static const char *config_to_problem(sqlite3_stmt *st, data_problem *p)
{
    memset(p, 0, sizeof *p);
    const char *layout = (const char *)sqlite3_column_text(st, 0);
    const char *dtype = (const char *)sqlite3_column_text(st, 1);
    const char *dir = (const char *)sqlite3_column_text(st, 2);
    if (!layout || !dtype || !dir) return "missing layout, type or direction";
    p->layout = DATA_LAYOUT_OTHER;
    for (int i = 0; i < DATA_LAYOUT_MIXED; i++)
        if (strcmp(layout, data_layout_names[i]) == 0) p->layout = (int8_t)i;
    p->dtype = DATA_DTYPE_OTHER;
    for (int i = 0; i < DATA_DTYPE_OTHER; i++)
        if (strcmp(dtype, data_dtype_names[i]) == 0) p->dtype = (int8_t)i;
    if (strcmp(dir, "F") == 0) p->direction = DATA_DIR_F;
    else if (strcmp(dir, "B") == 0) p->direction = DATA_DIR_B;
    else if (strcmp(dir, "W") == 0) p->direction = DATA_DIR_W;
    else return "bad direction";
    int64_t *f = p->f;
    f[DATA_FIELD_SPATIAL_DIM] = sqlite3_column_int64(st, 3);
    f[DATA_FIELD_IN_C] = sqlite3_column_int64(st, 4);
    f[DATA_FIELD_IN_H] = sqlite3_column_int64(st, 5);
    f[DATA_FIELD_IN_W] = sqlite3_column_int64(st, 6);
    f[DATA_FIELD_IN_D] = sqlite3_column_int64(st, 7);
    f[DATA_FIELD_FIL_H] = sqlite3_column_int64(st, 8);
    f[DATA_FIELD_FIL_W] = sqlite3_column_int64(st, 9);
    f[DATA_FIELD_FIL_D] = sqlite3_column_int64(st, 10);
    f[DATA_FIELD_OUT_C] = sqlite3_column_int64(st, 11);
    f[DATA_FIELD_BATCH] = sqlite3_column_int64(st, 12);
    f[DATA_FIELD_PAD_H] = sqlite3_column_int64(st, 13);
    f[DATA_FIELD_PAD_W] = sqlite3_column_int64(st, 14);
    f[DATA_FIELD_PAD_D] = sqlite3_column_int64(st, 15);
    f[DATA_FIELD_STRIDE_H] = sqlite3_column_int64(st, 16);
    f[DATA_FIELD_STRIDE_W] = sqlite3_column_int64(st, 17);
    f[DATA_FIELD_STRIDE_D] = sqlite3_column_int64(st, 18);
    f[DATA_FIELD_DIL_H] = sqlite3_column_int64(st, 19);
    f[DATA_FIELD_DIL_W] = sqlite3_column_int64(st, 20);
    f[DATA_FIELD_DIL_D] = sqlite3_column_int64(st, 21);
    f[DATA_FIELD_BIAS] = sqlite3_column_int64(st, 22);
    f[DATA_FIELD_GROUPS] = sqlite3_column_int64(st, 23);
    if (f[DATA_FIELD_SPATIAL_DIM] != 3) {
        f[DATA_FIELD_SPATIAL_DIM] = 2;
        f[DATA_FIELD_IN_D] = f[DATA_FIELD_FIL_D] = f[DATA_FIELD_STRIDE_D] = f[DATA_FIELD_DIL_D] = 1;
        f[DATA_FIELD_PAD_D] = 0;
    }
    if (f[DATA_FIELD_GROUPS] < 1) f[DATA_FIELD_GROUPS] = 1;
    static const int sizes[] = {DATA_FIELD_IN_C, DATA_FIELD_IN_H, DATA_FIELD_IN_W, DATA_FIELD_IN_D,
                                DATA_FIELD_FIL_H, DATA_FIELD_FIL_W, DATA_FIELD_FIL_D, DATA_FIELD_OUT_C,
                                DATA_FIELD_BATCH, DATA_FIELD_STRIDE_H, DATA_FIELD_STRIDE_W, DATA_FIELD_STRIDE_D,
                                DATA_FIELD_DIL_H, DATA_FIELD_DIL_W, DATA_FIELD_DIL_D};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (f[sizes[i]] < 1) return "non-positive size";
    /* The "out" tensor: for F the forward output; for B and W the key's out is x, the largest input
     * that gives the stored output (for 1x1 filters: in * stride, as MIOpen's problem descriptors). */
    static const int dims[3][5] = {
        {DATA_FIELD_IN_D, DATA_FIELD_FIL_D, DATA_FIELD_PAD_D, DATA_FIELD_STRIDE_D, DATA_FIELD_OUT_D},
        {DATA_FIELD_IN_H, DATA_FIELD_FIL_H, DATA_FIELD_PAD_H, DATA_FIELD_STRIDE_H, DATA_FIELD_OUT_H},
        {DATA_FIELD_IN_W, DATA_FIELD_FIL_W, DATA_FIELD_PAD_W, DATA_FIELD_STRIDE_W, DATA_FIELD_OUT_W},
    };
    int64_t dil[3] = {f[DATA_FIELD_DIL_D], f[DATA_FIELD_DIL_H], f[DATA_FIELD_DIL_W]};
    for (int d = 0; d < 3; d++) {
        int64_t in = f[dims[d][0]], fil = f[dims[d][1]], pad = f[dims[d][2]], s = f[dims[d][3]];
        int64_t out = p->direction == DATA_DIR_F ? (in + 2 * pad - dil[d] * (fil - 1) - 1) / s + 1
                                                 : in * s + dil[d] * (fil - 1) - 2 * pad;
        if (out < 1) return "non-positive output size";
        f[dims[d][4]] = out;
    }
    return NULL;
}

int data_perfdb_load(const char *path, const char *solver, const data_load_opts *opts, data_tune **out)
{
    *out = NULL;
    sqlite3 *db;
    int rc = open_perfdb(path, opts ? opts->threads : 0, &db);
    if (rc) return rc;
    const char *sql =
        "SELECT c.layout, c.data_type, c.direction, c.spatial_dim, c.in_channels, c.in_h, c.in_w, c.in_d, "
        "c.fil_h, c.fil_w, c.fil_d, c.out_channels, c.batchsize, c.pad_h, c.pad_w, c.pad_d, c.conv_stride_h, "
        "c.conv_stride_w, c.conv_stride_d, c.dilation_h, c.dilation_w, c.dilation_d, c.bias, c.group_count, "
        "p.params, p.id FROM perf_db p JOIN config c ON p.config = c.id WHERE p.solver = ? ORDER BY p.id";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = hr_error(HR_EFORMAT, "%s: perf-db tables lack expected columns: %s", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return rc;
    }
    sqlite3_bind_text(st, 1, solver, -1, SQLITE_STATIC);
    const data_constraint *con = data_constraint_find(solver);
    data_tune *dt = hr_calloc(1, sizeof *dt);
    if (!dt) {
        sqlite3_finalize(st);
        sqlite3_close(db);
        return HR_ENOMEM;
    }
    int cap = 0, length = con ? con->length : 0;
    int32_t v[TUNE_MAX_LENGTH];
    rc = HR_OK;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        long rowid = (long)sqlite3_column_int64(st, 25);
        const char *params = (const char *)sqlite3_column_text(st, 24);
        data_problem prob;
        const char *why = config_to_problem(st, &prob);
        int np = 0;
        if (!why) {
            np = params ? params_parse(params, v, TUNE_MAX_LENGTH) : -1;
            if (np == -2) why = "parameter outside the int32 range";
            else if (np < 0) why = "non-integer parameter";
            else if (np == 0) why = "empty parameter string"; /* a zero-length sequence trains nothing */
            else if (length == 0) length = np;
            if (!why && np != length) why = "wrong parameter count";
            if (!why && con && !con->valid_prefix(&prob, v, np)) why = "violates solver rules";
        }
        if (why) {
            if (opts && opts->strict) {
                rc = hr_error(HR_EFORMAT, "%s: perf_db row id %ld: %s", path, rowid, why);
                break;
            }
            data_skips_add(&dt->skips, why, rowid);
            continue;
        }
        if (dt->n == cap) {
            cap = cap ? cap * 2 : 1024;
            data_problem *pp = realloc(dt->problems, (size_t)cap * sizeof *pp);
            if (pp) dt->problems = pp;
            int32_t *vv = realloc(dt->values, (size_t)cap * (size_t)length * sizeof *vv);
            if (vv) dt->values = vv;
            if (!pp || !vv) {
                rc = hr_error(HR_ENOMEM, "%s: out of memory", path);
                break;
            }
        }
        dt->problems[dt->n] = prob;
        memcpy(dt->values + (size_t)dt->n * (size_t)length, v, (size_t)length * sizeof *v);
        dt->n++;
    }
    if (rc == HR_OK && step != SQLITE_DONE && step != SQLITE_ROW)
        rc = hr_error(HR_EFORMAT, "%s: reading perf_db failed: %s", path, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (rc == HR_OK && dt->n == 0)
        rc = hr_error(HR_EFORMAT, "%s: no usable perf_db row for solver '%s' (%ld skipped%s%s)", path, solver,
                      dt->skips.total, dt->skips.n_reasons ? ", first reason: " : "",
                      dt->skips.n_reasons ? dt->skips.reason[0] : "");
    if (rc) {
        data_tune_free(dt);
        return rc;
    }
    dt->solver = hr_strdup(solver);
    dt->source = hr_strdup(hr_path_basename(path));
    dt->param_names = hr_calloc((size_t)length, sizeof *dt->param_names);
    if (!dt->solver || !dt->source || !dt->param_names) {
        data_tune_free(dt);
        return HR_ENOMEM;
    }
    for (int j = 0; j < length; j++) {
        char name[32];
        snprintf(name, sizeof name, "p%d", j);
        dt->param_names[j] = hr_strdup(con ? con->param_names[j] : name);
    }
    dt->length = length;
    if ((rc = data_tune_build_vocab(dt, length))) {
        data_tune_free(dt);
        return rc;
    }
    if (opts && opts->log)
        for (int r = 0; r < dt->skips.n_reasons; r++)
            hr_log_printf(opts->log, HR_LOG_WARN, "%s: skipped %ld row(s): %s (first at id %ld)\n", path,
                          dt->skips.count[r], dt->skips.reason[r], dt->skips.first_line[r]);
    *out = dt;
    return HR_OK;
}
