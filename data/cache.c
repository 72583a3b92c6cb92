/* Dataset cache: a self-describing, versioned HDF5 image of a parsed database.
 *
 * Layout (version 1):
 *   attrs: format="heurist-dataset", version=1, task="select"|"tune", source, n
 *   problems/fields (n, DATA_FIELD_COUNT) int64, problems/field_names, problems/layout|dtype|direction|precision
 *   (n) int8, problems/layout_names|dtype_names|direction_names|precision_names (a cache without precision holds
 *   TF32 problems), groups (n) int32,
 *   features (n, F) float32 with feature_names (for readers outside heurist; heurist recomputes them),
 *   skips/reasons, skips/count, skips/first_line
 *   select: keys, kernels, runtime (n, K) float32 ms (inf = not measured), attr lines
 *   tune:   solver attr, param_names, values (n, L) int32
 *   a benchmark table's select also: attr table (its schema as JSON, data_table_spec_to_json), attr
 *   table_duplicates, table_pv (n, problem + hardware columns) float64, table_kv (K, kernel columns) float64 and,
 *   with a vendor column, vendor_rank (n, K) int16; with a group column (the schema's "group"), table_group (n)
 *   int32 indices into table_group_names; a cache without the attribute is a find-db's
 * Categoricals are stored with their names, and mapped back by name on reading.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "data/data.h"
#include "data/table.h"

static int write_problems(hid_t file, const data_problem *p, int n)
{
    hid_t g;
    int rc = hr_h5_group_create(file, "problems", &g);
    if (rc) return rc;
    int64_t *fields = hr_malloc((size_t)n * DATA_FIELD_COUNT * sizeof *fields);
    int8_t *cat = hr_malloc((size_t)n * 4);
    if (!fields || !cat) {
        rc = HR_ENOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        memcpy(fields + (size_t)i * DATA_FIELD_COUNT, p[i].f, sizeof p[i].f);
        cat[i] = p[i].layout;
        cat[n + i] = p[i].dtype;
        cat[2 * n + i] = p[i].direction;
        cat[3 * n + i] = p[i].precision;
    }
    if ((rc = hr_h5_write(g, "fields", H5T_NATIVE_INT64, (size_t)n, DATA_FIELD_COUNT, fields))) goto done;
    if ((rc = hr_h5_write_strings(g, "field_names", (char *const *)data_field_names, DATA_FIELD_COUNT))) goto done;
    if ((rc = hr_h5_write(g, "layout", H5T_NATIVE_INT8, (size_t)n, 0, cat))) goto done;
    if ((rc = hr_h5_write(g, "dtype", H5T_NATIVE_INT8, (size_t)n, 0, cat + n))) goto done;
    if ((rc = hr_h5_write(g, "direction", H5T_NATIVE_INT8, (size_t)n, 0, cat + 2 * n))) goto done;
    if ((rc = hr_h5_write_strings(g, "layout_names", (char *const *)data_layout_names, DATA_LAYOUT_COUNT))) goto done;
    if ((rc = hr_h5_write_strings(g, "dtype_names", (char *const *)data_dtype_names, DATA_DTYPE_COUNT))) goto done;
    if ((rc = hr_h5_write_strings(g, "direction_names", (char *const *)data_direction_names, DATA_DIR_COUNT))) goto done;
    if ((rc = hr_h5_write(g, "precision", H5T_NATIVE_INT8, (size_t)n, 0, cat + 3 * n))) goto done;
    rc = hr_h5_write_strings(g, "precision_names", (char *const *)data_precision_names, DATA_PRECISION_COUNT);
done:
    free(fields);
    free(cat);
    H5Gclose(g);
    return rc;
}

static int write_common(hid_t file, const char *task, const char *source, const data_problem *p, int n,
                        const data_skips *skips)
{
    int rc;
    if ((rc = hr_h5_attr_write_str(file, "format", DATA_CACHE_FORMAT))) return rc;
    if ((rc = hr_h5_attr_write_int(file, "version", DATA_CACHE_VERSION))) return rc;
    if ((rc = hr_h5_attr_write_str(file, "task", task))) return rc;
    if ((rc = hr_h5_attr_write_str(file, "source", source ? source : "?"))) return rc;
    if ((rc = hr_h5_attr_write_int(file, "n", n))) return rc;
    if ((rc = write_problems(file, p, n))) return rc;
    int *group = hr_malloc((size_t)n * sizeof *group);
    int F = data_features_count();
    float *X = hr_malloc((size_t)n * (size_t)F * sizeof *X);
    char **names = hr_malloc((size_t)F * sizeof *names);
    int ng = 0;
    if (!group || !X || !names) {
        rc = HR_ENOMEM;
        goto done;
    }
    if ((rc = data_groups_compute(p, n, group, &ng))) goto done;
    if ((rc = hr_h5_write(file, "groups", H5T_NATIVE_INT32, (size_t)n, 0, group))) goto done;
    data_features_compute_all(p, n, X);
    for (int j = 0; j < F; j++) names[j] = (char *)data_feature_name(j);
    if ((rc = hr_h5_write(file, "features", H5T_NATIVE_FLOAT, (size_t)n, (size_t)F, X))) goto done;
    if ((rc = hr_h5_write_strings(file, "feature_names", names, (size_t)F))) goto done;
    hid_t g;
    if ((rc = hr_h5_group_create(file, "skips", &g))) goto done;
    char *reasons[DATA_SKIP_MAX_REASONS];
    for (int r = 0; r < skips->n_reasons; r++) reasons[r] = (char *)skips->reason[r];
    rc = hr_h5_write_strings(g, "reasons", reasons, (size_t)skips->n_reasons);
    if (!rc) rc = hr_h5_write(g, "count", H5T_NATIVE_LONG, (size_t)skips->n_reasons, 0, skips->count);
    if (!rc) rc = hr_h5_write(g, "first_line", H5T_NATIVE_LONG, (size_t)skips->n_reasons, 0, skips->first_line);
    if (!rc) rc = hr_h5_attr_write_int(g, "total", skips->total);
    H5Gclose(g);
done:
    free(group);
    free(X);
    free(names);
    return rc;
}

static int table_write(hid_t f, const data_select *ds)
{
    const data_table *t = ds->table;
    char *json = data_table_spec_to_json(&t->spec);
    if (!json) return HR_ENOMEM;
    int rc = hr_h5_attr_write_str(f, "table", json);
    free(json);
    if (!rc) rc = hr_h5_attr_write_int(f, "table_duplicates", t->duplicates);
    if (!rc)
        rc = hr_h5_write(f, "table_pv", H5T_NATIVE_DOUBLE, (size_t)ds->n, (size_t)(t->spec.n_problem + t->spec.n_hardware), t->pv);
    if (!rc) rc = hr_h5_write(f, "table_kv", H5T_NATIVE_DOUBLE, (size_t)ds->n_kernels, (size_t)t->spec.n_kernel, t->kv);
    if (!rc && ds->vendor_rank)
        rc = hr_h5_write(f, "vendor_rank", H5T_NATIVE_INT16, (size_t)ds->n, (size_t)ds->n_kernels, ds->vendor_rank);
    if (!rc && t->group) rc = hr_h5_write(f, "table_group", H5T_NATIVE_INT, (size_t)ds->n, 0, t->group);
    if (!rc && t->group) rc = hr_h5_write_strings(f, "table_group_names", t->group_names, (size_t)t->n_group_names);
    return rc;
}

/* A group column's ids and names: every id names a value, and every value has a problem (ids dense, as the loader
 * gives them). */
static int table_groups_read(hid_t f, const char *path, data_table *t)
{
    size_t n_names = 0;
    int rc;
    if (!(t->group = hr_malloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *t->group))) return HR_ENOMEM;
    if ((rc = hr_h5_read(f, "table_group", H5T_NATIVE_INT, (size_t)t->n, 0, t->group)) ||
        (rc = hr_h5_read_strings(f, "table_group_names", &t->group_names, &n_names)))
        return rc;
    t->n_group_names = (int)n_names;
    int next = 0;
    for (int i = 0; i < t->n; i++) {
        if (t->group[i] < 0 || t->group[i] > next || t->group[i] >= t->n_group_names)
            return hr_error(HR_EFORMAT, "%s: table_group row %d: group %d is not among the %d names in order", path, i,
                            t->group[i], t->n_group_names);
        if (t->group[i] == next) next++;
    }
    if (next != t->n_group_names)
        return hr_error(HR_EFORMAT, "%s: table_group_names holds %d names, the problems use %d", path, t->n_group_names, next);
    return HR_OK;
}

/* Every categorical value of a table is an index into its vocabulary. */
static int table_values_check(const char *path, const char *what, const data_table_column *c, int ncol, const double *v, int nrow)
{
    for (int i = 0; i < nrow; i++)
        for (int j = 0; j < ncol; j++) {
            double x = v[(size_t)i * ncol + j];
            if (!isfinite(x) || (c[j].categorical && (x < 0 || x >= c[j].n_vocab || x != (int)x)))
                return hr_error(HR_EFORMAT, "%s: %s row %d column '%s': value %g out of range", path, what, i, c[j].name, x);
        }
    return HR_OK;
}

static int table_read(hid_t f, const char *path, data_select *ds)
{
    char *json = NULL;
    long long dups = 0;
    int rc = hr_h5_attr_read_str(f, "table", &json);
    data_table *t = rc ? NULL : hr_calloc(1, sizeof *t);
    if (!rc && !t) rc = HR_ENOMEM;
    if (!rc) rc = data_table_spec_from_json(json, path, &t->spec);
    free(json);
    if (rc) {
        free(t);
        return rc;
    }
    ds->table = t;
    t->n = ds->n, t->n_kernels = ds->n_kernels;
    int np = t->spec.n_problem + t->spec.n_hardware, nk = t->spec.n_kernel;
    if ((rc = hr_h5_attr_read_int(f, "table_duplicates", &dups))) return rc;
    t->duplicates = (long)dups;
    t->pv = hr_malloc((size_t)ds->n * (size_t)np * sizeof *t->pv);
    t->kv = hr_malloc((size_t)ds->n_kernels * (size_t)nk * sizeof *t->kv);
    if (!t->pv || !t->kv) return HR_ENOMEM;
    if ((rc = hr_h5_read(f, "table_pv", H5T_NATIVE_DOUBLE, (size_t)ds->n, (size_t)np, t->pv)) ||
        (rc = hr_h5_read(f, "table_kv", H5T_NATIVE_DOUBLE, (size_t)ds->n_kernels, (size_t)nk, t->kv)) ||
        (rc = table_values_check(path, "table_pv", t->spec.problem, np, t->pv, ds->n)) ||
        (rc = table_values_check(path, "table_kv", t->spec.kernel, nk, t->kv, ds->n_kernels)))
        return rc;
    if (hr_h5_exists(f, "vendor_rank") > 0) {
        if (!(ds->vendor_rank = hr_malloc((size_t)ds->n * (size_t)ds->n_kernels * sizeof *ds->vendor_rank))) return HR_ENOMEM;
        rc = hr_h5_read(f, "vendor_rank", H5T_NATIVE_INT16, (size_t)ds->n, (size_t)ds->n_kernels, ds->vendor_rank);
    }
    if (!rc && t->spec.group) rc = table_groups_read(f, path, t);
    return rc;
}

int data_cache_write_select(const char *path, const data_select *ds)
{
    if (ds->n <= 0 || ds->n_kernels <= 0)
        return hr_error(HR_EINVAL, "%s: refusing to cache a selection dataset with %d problems and %d kernels", path,
                        ds->n, ds->n_kernels);
    hr_h5_out out;
    int rc = hr_h5_create(path, &out);
    if (rc) return rc;
    hid_t f = out.file;
    if ((rc = write_common(f, "select", ds->source, ds->problems, ds->n, &ds->skips))) goto done;
    if ((rc = hr_h5_attr_write_int(f, "lines", ds->lines))) goto done;
    if ((rc = hr_h5_write_strings(f, "keys", ds->keys, (size_t)ds->n))) goto done;
    if ((rc = hr_h5_write_strings(f, "kernels", ds->kernels, (size_t)ds->n_kernels))) goto done;
    rc = hr_h5_write(f, "runtime", H5T_NATIVE_FLOAT, (size_t)ds->n, (size_t)ds->n_kernels, ds->runtime);
    if (!rc && ds->table) rc = table_write(f, ds);
done:
    return hr_h5_close(&out, rc == HR_OK) ? HR_EIO : rc;
}

int data_cache_write_tune(const char *path, const data_tune *dt)
{
    if (dt->n <= 0 || dt->length <= 0)
        return hr_error(HR_EINVAL, "%s: refusing to cache a tuning dataset with %d rows of %d parameters", path, dt->n,
                        dt->length);
    hr_h5_out out;
    int rc = hr_h5_create(path, &out);
    if (rc) return rc;
    hid_t f = out.file;
    if ((rc = write_common(f, "tune", dt->source, dt->problems, dt->n, &dt->skips))) goto done;
    if ((rc = hr_h5_attr_write_str(f, "solver", dt->solver))) goto done;
    if ((rc = hr_h5_write_strings(f, "param_names", dt->param_names, (size_t)dt->length))) goto done;
    rc = hr_h5_write(f, "values", H5T_NATIVE_INT32, (size_t)dt->n, (size_t)dt->length, dt->values);
done:
    return hr_h5_close(&out, rc == HR_OK) ? HR_EIO : rc;
}

/* Maps stored category ids to ours by name. */
static int read_category(hid_t g, const char *ids_name, const char *names_name, const char *const *ours,
                         int n_ours, int fallback, int8_t *out, int n, const char *path)
{
    char **names;
    size_t nn;
    int rc = hr_h5_read_strings(g, names_name, &names, &nn);
    if (rc) return rc;
    int map[128];
    if (nn > 128) {
        hr_h5_free_strings(names, nn);
        return hr_error(HR_EFORMAT, "%s: problems/%s has too many names", path, names_name);
    }
    for (size_t i = 0; i < nn; i++) {
        map[i] = fallback;
        for (int j = 0; j < n_ours; j++)
            if (strcmp(names[i], ours[j]) == 0) map[i] = j;
    }
    hr_h5_free_strings(names, nn);
    rc = hr_h5_read(g, ids_name, H5T_NATIVE_INT8, (size_t)n, 0, out);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        if (out[i] < 0 || (size_t)out[i] >= nn)
            return hr_error(HR_EFORMAT, "%s: problems/%s row %d: id %d out of range", path, ids_name, i, out[i]);
        if (map[out[i]] < 0)
            return hr_error(HR_EFORMAT, "%s: problems/%s row %d: unknown category", path, ids_name, i);
        out[i] = (int8_t)map[out[i]];
    }
    return HR_OK;
}

static int read_problems(hid_t file, const char *path, int n, data_problem **out)
{
    hid_t g;
    int rc = hr_h5_group_open(file, "problems", &g);
    if (rc) return rc;
    data_problem *p = hr_calloc((size_t)n, sizeof *p);
    int64_t *fields = NULL;
    int8_t *cat = hr_malloc((size_t)n * 4 + 1);
    char **fnames = NULL;
    size_t nf = 0;
    if (!p || !cat) {
        rc = HR_ENOMEM;
        goto done;
    }
    if ((rc = hr_h5_read_strings(g, "field_names", &fnames, &nf))) goto done;
    fields = hr_malloc((size_t)n * nf * sizeof *fields + 1);
    if (!fields) {
        rc = HR_ENOMEM;
        goto done;
    }
    if ((rc = hr_h5_read(g, "fields", H5T_NATIVE_INT64, (size_t)n, nf, fields))) goto done;
    /* fields by name: a field this version does not know is an error, a missing one too */
    int col_of[DATA_FIELD_COUNT];
    for (int j = 0; j < DATA_FIELD_COUNT; j++) {
        col_of[j] = -1;
        for (size_t c = 0; c < nf; c++)
            if (strcmp(fnames[c], data_field_names[j]) == 0) col_of[j] = (int)c;
        if (col_of[j] < 0) {
            rc = hr_error(HR_EFORMAT, "%s: problems/fields lacks field '%s'", path, data_field_names[j]);
            goto done;
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < DATA_FIELD_COUNT; j++) p[i].f[j] = fields[(size_t)i * nf + (size_t)col_of[j]];
    if ((rc = read_category(g, "layout", "layout_names", data_layout_names, DATA_LAYOUT_COUNT, DATA_LAYOUT_OTHER, cat,
                            n, path)))
        goto done;
    if ((rc = read_category(g, "dtype", "dtype_names", data_dtype_names, DATA_DTYPE_COUNT, DATA_DTYPE_OTHER,
                            cat + n, n, path)))
        goto done;
    if ((rc = read_category(g, "direction", "direction_names", data_direction_names, DATA_DIR_COUNT, -1,
                            cat + 2 * n, n, path)))
        goto done;
    /* the precision class: a cache without it holds TF32 problems */
    if (hr_h5_exists(g, "precision") > 0 &&
        (rc = read_category(g, "precision", "precision_names", data_precision_names, DATA_PRECISION_COUNT, -1,
                            cat + 3 * n, n, path)))
        goto done;
    for (int i = 0; i < n; i++) {
        p[i].layout = cat[i];
        p[i].dtype = cat[n + i];
        p[i].direction = cat[2 * n + i];
        p[i].precision = hr_h5_exists(g, "precision") > 0 ? cat[3 * n + i] : DATA_PRECISION_TF32;
    }
done:
    hr_h5_free_strings(fnames, nf);
    free(fields);
    free(cat);
    H5Gclose(g);
    if (rc) free(p);
    else *out = p;
    return rc;
}

static int read_skips(hid_t file, data_skips *s)
{
    memset(s, 0, sizeof *s);
    hid_t g;
    int rc = hr_h5_group_open(file, "skips", &g);
    if (rc) return rc;
    char **reasons = NULL;
    size_t nr = 0;
    long long total = 0;
    rc = hr_h5_read_strings(g, "reasons", &reasons, &nr);
    if (!rc && nr > DATA_SKIP_MAX_REASONS) rc = hr_error(HR_EFORMAT, "skips/reasons: too many reasons");
    if (!rc) rc = hr_h5_read(g, "count", H5T_NATIVE_LONG, nr, 0, s->count);
    if (!rc) rc = hr_h5_read(g, "first_line", H5T_NATIVE_LONG, nr, 0, s->first_line);
    if (!rc) rc = hr_h5_attr_read_int(g, "total", &total);
    if (!rc) {
        s->n_reasons = (int)nr;
        s->total = total;
        for (size_t r = 0; r < nr; r++) snprintf(s->reason[r], sizeof s->reason[r], "%s", reasons[r]);
    }
    hr_h5_free_strings(reasons, nr);
    H5Gclose(g);
    return rc;
}

int data_cache_read(const char *path, data_select **sel, data_tune **tune)
{
    *sel = NULL;
    *tune = NULL;
    hid_t f;
    int rc = hr_h5_open(path, DATA_CACHE_FORMAT, DATA_CACHE_VERSION, &f, NULL);
    if (rc) return rc;
    char *task = NULL, *source = NULL;
    long long n = 0;
    if ((rc = hr_h5_attr_read_str(f, "task", &task)) || (rc = hr_h5_attr_read_str(f, "source", &source)) ||
        (rc = hr_h5_attr_read_int(f, "n", &n)))
        goto done;
    if (n <= 0 || n > 100000000) {
        rc = hr_error(HR_EFORMAT, "%s: row count %lld out of range", path, n);
        goto done;
    }
    if (strcmp(task, "select") == 0) {
        data_select *ds = hr_calloc(1, sizeof *ds);
        if (!ds) {
            rc = HR_ENOMEM;
            goto done;
        }
        ds->n = (int)n;
        ds->source = source;
        source = NULL;
        size_t nk = 0, nkeys = 0;
        long long lines = 0;
        if (!(rc = read_problems(f, path, ds->n, &ds->problems)) && !(rc = read_skips(f, &ds->skips)) &&
            !(rc = hr_h5_attr_read_int(f, "lines", &lines)) &&
            !(rc = hr_h5_read_strings(f, "kernels", &ds->kernels, &nk))) {
            ds->n_kernels = (int)nk;
            ds->lines = lines;
            if (nk == 0 || nk > (size_t)INT32_MAX / 2)
                rc = hr_error(HR_EFORMAT, "%s: kernels: %zu names, expected at least one", path, nk);
            if (!rc && !(rc = hr_h5_read_strings(f, "keys", &ds->keys, &nkeys)) && nkeys != (size_t)n)
                rc = hr_error(HR_EFORMAT, "%s: %zu keys for %lld problems", path, nkeys, n);
            if (!rc) {
                ds->runtime = hr_malloc((size_t)n * nk * sizeof *ds->runtime);
                rc = ds->runtime ? hr_h5_read(f, "runtime", H5T_NATIVE_FLOAT, (size_t)n, nk, ds->runtime) : HR_ENOMEM;
            }
            if (!rc && hr_h5_attr_exists(f, "table")) rc = table_read(f, path, ds);
        } else if (ds->kernels == NULL) {
            ds->n_kernels = 0;
        }
        if (rc) {
            if (!ds->keys) ds->n = 0; /* keys array absent: nothing to free per row */
            data_select_free(ds);
        } else {
            *sel = ds;
        }
    } else if (strcmp(task, "tune") == 0) {
        data_tune *dt = hr_calloc(1, sizeof *dt);
        if (!dt) {
            rc = HR_ENOMEM;
            goto done;
        }
        dt->n = (int)n;
        dt->source = source;
        source = NULL;
        size_t L = 0;
        if (!(rc = read_problems(f, path, dt->n, &dt->problems)) && !(rc = read_skips(f, &dt->skips)) &&
            !(rc = hr_h5_attr_read_str(f, "solver", &dt->solver)) &&
            !(rc = hr_h5_read_strings(f, "param_names", &dt->param_names, &L)) &&
            !(rc = (L == 0 || L > 4096) ? hr_error(HR_EFORMAT, "%s: param_names: %zu names, expected 1 to 4096",
                                                   path, L)
                                        : HR_OK)) {
            dt->values = hr_malloc((size_t)n * L * sizeof *dt->values + 1);
            rc = dt->values ? hr_h5_read(f, "values", H5T_NATIVE_INT32, (size_t)n, L, dt->values) : HR_ENOMEM;
            if (!rc) rc = data_tune_build_vocab(dt, (int)L);
        }
        if (rc) {
            if (dt->param_names && dt->length == 0) {
                hr_h5_free_strings(dt->param_names, L);
                dt->param_names = NULL;
            }
            data_tune_free(dt);
        } else {
            *tune = dt;
        }
    } else {
        rc = hr_error(HR_EFORMAT, "%s: unknown task '%s'", path, task);
    }
done:
    free(task);
    free(source);
    H5Fclose(f);
    return rc;
}
