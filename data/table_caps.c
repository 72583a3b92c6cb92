/* Validity rules of a benchmark table's configurations from a capability file (data/table.h): the JSON that
 * heurist-collect writes per data type and cuBLASLt algorithm id, compiled against the table's schema and, where
 * the file's lists are empty or cuBLASLt's own picks go beyond them, the values the table measured. */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "data/table.h"

#define CAPS_FORMAT "heurist-collect gemm capabilities"
#define CAPS_VERSION 1
#define CAPS_K_PER_SPLIT 32.0 /* the collector's draws keep >= 32 of K per split */

/* the kernel fields the rules read, by column name */
enum { R_ALGO, R_TILE_M, R_TILE_N, R_STAGE_K, R_STAGES, R_SPLIT, R_RED, R_SWIZZLE, R_CUSTOM, R_CLUSTER_M, R_CLUSTER_N,
       R_INNER, R_COUNT };
static const char *const rule_fields[R_COUNT] = {"algo_id",  "tile_m",   "tile_n",        "stage_k",
                                                 "stages",   "split_k",  "reduction_scheme", "swizzle",
                                                 "custom_option", "cluster_m", "cluster_n",     "inner_shape"};

/* a set of integer pairs (b = 0 for single values), unordered, no duplicates */
typedef struct caps_set {
    int n, cap;
    int64_t (*v)[2];
} caps_set;

typedef struct caps_algo {
    int dtype;                /* index in the schema's dtype vocabulary */
    int64_t algo;
    caps_set tiles, stages;   /* (tile_m, tile_n), (stage_k, stages) */
    int tiles_seen, stages_seen; /* the file's list was empty: filled from the table */
    int64_t splitk, red_mask, swizzle, custom_max;
    double k_per_split;       /* smallest K / split_k for split_k > 1 */
    caps_set splits;          /* (split_k <= 0, reduction_scheme) pairs the table measured */
    caps_set clusters;        /* cluster shapes the table measured beyond cluster_shapes_tried */
    caps_set inner;           /* inner shapes the table measured */
} caps_algo;

struct data_table_rules {
    int n_algos;
    caps_algo *algos;
    caps_set clusters;        /* cluster_shapes_tried */
    int col[R_COUNT];         /* kernel column of each field */
    int p_dtype, p_k;         /* problem columns of the data type and K */
    double *num[R_COUNT];     /* categorical fields: each vocabulary entry as a number (NAN: none); NULL: numeric */
    int n_num[R_COUNT];
    int n_dtypes;
    char **dtypes;            /* (n_dtypes) the schema's dtype vocabulary */
    char **names;             /* (n_kernel) kernel column names, for the constraint */
    int n_kernel;
};

static void set_free(caps_set *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int set_has(const caps_set *s, int64_t a, int64_t b)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i][0] == a && s->v[i][1] == b) return 1;
    return 0;
}

static int set_add(caps_set *s, int64_t a, int64_t b)
{
    if (set_has(s, a, b)) return HR_OK;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        int64_t(*v)[2] = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) return hr_error(HR_ENOMEM, "out of memory");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n][0] = a;
    s->v[s->n][1] = b;
    s->n++;
    return HR_OK;
}

/* 1 when some pair matches the halves that are known (ka, kb) */
static int set_match(const caps_set *s, int ka, int64_t a, int kb, int64_t b)
{
    for (int i = 0; i < s->n; i++)
        if ((!ka || s->v[i][0] == a) && (!kb || s->v[i][1] == b)) return 1;
    return 0;
}

void data_table_rules_free(data_table_rules *r)
{
    if (!r) return;
    for (int i = 0; i < r->n_algos; i++) {
        caps_algo *a = &r->algos[i];
        set_free(&a->tiles);
        set_free(&a->stages);
        set_free(&a->splits);
        set_free(&a->clusters);
        set_free(&a->inner);
    }
    free(r->algos);
    set_free(&r->clusters);
    for (int f = 0; f < R_COUNT; f++) free(r->num[f]);
    for (int i = 0; i < r->n_dtypes; i++) free(r->dtypes[i]);
    free(r->dtypes);
    for (int i = 0; r->names && i < r->n_kernel; i++) free(r->names[i]);
    free(r->names);
    free(r);
}

/* ---- reading the file ---- */

/* The ranges the rules hold their numbers in: flags 0 or 1, everything else within int32 (the values of a table's
 * kernel columns, which the rules compare them with, are int32 in sequences), sizes and masks non-negative. Each is
 * checked as the file is read, so an out-of-range value is reported naming the file and the field. */
#define CAPS_ANY INT32_MIN, INT32_MAX
#define CAPS_SIZE 0, INT32_MAX
#define CAPS_FLAG 0, 1

static int json_int(const cJSON *o, const char *name, const char *path, const char *key, int64_t lo, int64_t hi,
                    int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9e15)
        return hr_error(HR_EFORMAT, "%s: %s%s: expected an integer", name, path, key);
    if (v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return hr_error(HR_EFORMAT, "%s: %s%s: %.17g is outside [%lld, %lld]", name, path, key, v->valuedouble,
                        (long long)lo, (long long)hi);
    *out = (int64_t)v->valuedouble;
    return HR_OK;
}

/* a list of [a, b] integer pairs (pairs 1) or of integers (pairs 0) into s */
static int json_pairs(const cJSON *o, const char *name, const char *path, const char *key, int pairs, int required,
                      int64_t lo, int64_t hi, caps_set *s)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!arr && !required) return HR_OK;
    if (!cJSON_IsArray(arr))
        return hr_error(HR_EFORMAT, "%s: %s%s: expected a list of %s", name, path, key, pairs ? "[a, b] pairs" : "integers");
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        int64_t ab[2] = {0, 0};
        const cJSON *parts[2] = {e, NULL};
        if (pairs) {
            if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2)
                return hr_error(HR_EFORMAT, "%s: %s%s[%d]: expected a pair of integers", name, path, key, i);
            parts[0] = cJSON_GetArrayItem(e, 0);
            parts[1] = cJSON_GetArrayItem(e, 1);
        }
        for (int h = 0; h < 1 + pairs; h++) {
            const cJSON *x = parts[h];
            if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble) || fabs(x->valuedouble) > 9e15)
                return hr_error(HR_EFORMAT, "%s: %s%s[%d]: expected %s", name, path, key, i,
                                pairs ? "a pair of integers" : "an integer");
            if (x->valuedouble < (double)lo || x->valuedouble > (double)hi)
                return hr_error(HR_EFORMAT, "%s: %s%s[%d]: %.17g is outside [%lld, %lld]", name, path, key, i,
                                x->valuedouble, (long long)lo, (long long)hi);
            ab[h] = (int64_t)x->valuedouble;
        }
        int rc = set_add(s, ab[0], ab[1]);
        if (rc) return rc;
        i++;
    }
    return HR_OK;
}

static int column_of(const data_table_column *c, int n, const char *name)
{
    for (int j = 0; j < n; j++)
        if (!strcmp(c[j].name, name)) return j;
    return -1;
}

/* Column indices and the categorical fields' numbers from the schema. */
static int rules_bind(data_table_rules *r, const data_table_spec *spec, const char *name)
{
    int np = spec->n_problem + spec->n_hardware;
    for (int f = 0; f < R_COUNT; f++) {
        r->col[f] = column_of(spec->kernel, spec->n_kernel, rule_fields[f]);
        if (r->col[f] < 0)
            return hr_error(HR_EINVAL, "%s: the capability rules need kernel column '%s', which the schema lacks", name,
                            rule_fields[f]);
        const data_table_column *c = &spec->kernel[r->col[f]];
        if (!c->categorical) continue;
        r->n_num[f] = c->n_vocab;
        if (!(r->num[f] = hr_malloc((size_t)(c->n_vocab ? c->n_vocab : 1) * sizeof *r->num[f]))) return HR_ENOMEM;
        for (int v = 0; v < c->n_vocab; v++) {
            char *end;
            double x = strtod(c->vocab[v], &end);
            r->num[f][v] = *c->vocab[v] && !*end ? x : NAN;
        }
    }
    r->p_dtype = column_of(spec->problem, np, "dtype");
    if (r->p_dtype < 0 || !spec->problem[r->p_dtype].categorical)
        return hr_error(HR_EINVAL, "%s: the capability rules need a categorical problem column 'dtype'", name);
    r->p_k = spec->reduction >= 0 ? spec->reduction : column_of(spec->problem, np, "K");
    if (r->p_k < 0 || spec->problem[r->p_k].categorical)
        return hr_error(HR_EINVAL, "%s: the capability rules need the numeric reduction column K of the problem", name);
    const data_table_column *dc = &spec->problem[r->p_dtype];
    r->n_dtypes = dc->n_vocab;
    if (!(r->dtypes = hr_calloc((size_t)(dc->n_vocab ? dc->n_vocab : 1), sizeof *r->dtypes))) return HR_ENOMEM;
    for (int v = 0; v < dc->n_vocab; v++)
        if (!(r->dtypes[v] = hr_strdup(dc->vocab[v]))) return HR_ENOMEM;
    r->n_kernel = spec->n_kernel;
    if (!(r->names = hr_calloc((size_t)spec->n_kernel, sizeof *r->names))) return HR_ENOMEM;
    for (int j = 0; j < spec->n_kernel; j++)
        if (!(r->names[j] = hr_strdup(spec->kernel[j].name))) return HR_ENOMEM;
    return HR_OK;
}

/* Field f of a sequence or configuration value x as a number (a category's number; NAN when it has none). */
static double field_num(const data_table_rules *r, int f, double x)
{
    if (!r->num[f]) return x;
    int i = (int)x;
    return i >= 0 && i < r->n_num[f] && x == i ? r->num[f][i] : NAN;
}

static caps_algo *algo_find(const data_table_rules *r, int dtype, double algo)
{
    for (int i = 0; i < r->n_algos; i++)
        if (r->algos[i].dtype == dtype && (double)r->algos[i].algo == algo) return &r->algos[i];
    return NULL;
}

/* One algorithm entry; fill: its empty tile and stage lists are to be filled from the table. */
static int read_algo(const cJSON *o, const char *name, const char *path, int dtype, caps_algo *a, int fill)
{
    memset(a, 0, sizeof *a);
    a->dtype = dtype;
    a->k_per_split = CAPS_K_PER_SPLIT;
    int rc;
    if (!cJSON_IsObject(o)) return hr_error(HR_EFORMAT, "%s: %s: expected an object", name, path);
    if ((rc = json_int(o, name, path, "algo_id", CAPS_SIZE, &a->algo))) return rc;
    if ((rc = json_pairs(o, name, path, "tiles", 1, 1, CAPS_SIZE, &a->tiles))) return rc;
    if ((rc = json_pairs(o, name, path, "stages", 1, 1, CAPS_SIZE, &a->stages))) return rc;
    if ((rc = json_int(o, name, path, "splitk_support", CAPS_FLAG, &a->splitk))) return rc;
    if ((rc = json_int(o, name, path, "reduction_scheme_mask", CAPS_SIZE, &a->red_mask))) return rc;
    if ((rc = json_int(o, name, path, "cta_swizzling_support", CAPS_FLAG, &a->swizzle))) return rc;
    if ((rc = json_int(o, name, path, "custom_option_max", CAPS_SIZE, &a->custom_max))) return rc;
    /* what a compiled file (data_table_rules_to_json) adds */
    if ((rc = json_pairs(o, name, path, "splits_seen", 1, 0, CAPS_ANY, &a->splits))) return rc;
    if ((rc = json_pairs(o, name, path, "clusters_seen", 1, 0, CAPS_SIZE, &a->clusters))) return rc;
    if ((rc = json_pairs(o, name, path, "inner_shapes", 0, 0, CAPS_ANY, &a->inner))) return rc;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "min_k_per_split");
    if (k && (!cJSON_IsNumber(k) || !(k->valuedouble >= 0) || !isfinite(k->valuedouble)))
        return hr_error(HR_EFORMAT, "%s: %smin_k_per_split: expected a finite number >= 0", name, path);
    if (k) a->k_per_split = k->valuedouble;
    a->tiles_seen = fill && a->tiles.n == 0;
    a->stages_seen = fill && a->stages.n == 0;
    return HR_OK;
}

/* The values the table measured: lists the file leaves empty, cuBLASLt's own codes and shapes beyond the file's. */
static int rules_fill(data_table_rules *r, const data_select *ds, const char *name, long *unknown)
{
    const data_table *t = ds->table;
    int np = t->spec.n_problem + t->spec.n_hardware, nk = t->spec.n_kernel, K = ds->n_kernels;
    int rc = HR_OK;
    *unknown = 0;
    for (int i = 0; !rc && i < ds->n; i++) {
        const double *pv = t->pv + (size_t)i * np;
        int dtype = (int)pv[r->p_dtype];
        for (int k = 0; !rc && k < K; k++) {
            if (!isfinite(ds->runtime[(size_t)i * K + k])) continue;
            const double *kv = t->kv + (size_t)k * nk;
            double x[R_COUNT];
            for (int f = 0; f < R_COUNT; f++) x[f] = field_num(r, f, kv[r->col[f]]);
            caps_algo *a = algo_find(r, dtype, x[R_ALGO]);
            if (!a) {
                ++*unknown;
                continue;
            }
            if (a->tiles_seen) rc = set_add(&a->tiles, (int64_t)x[R_TILE_M], (int64_t)x[R_TILE_N]);
            if (!rc && a->stages_seen) rc = set_add(&a->stages, (int64_t)x[R_STAGE_K], (int64_t)x[R_STAGES]);
            if (!rc && !isnan(x[R_INNER])) rc = set_add(&a->inner, (int64_t)x[R_INNER], 0);
            if (!rc && x[R_SPLIT] <= 0) rc = set_add(&a->splits, (int64_t)x[R_SPLIT], (int64_t)x[R_RED]);
            if (!rc && x[R_SPLIT] > 1 && pv[r->p_k] / x[R_SPLIT] < a->k_per_split) a->k_per_split = pv[r->p_k] / x[R_SPLIT];
            if (!rc && !set_has(&r->clusters, (int64_t)x[R_CLUSTER_M], (int64_t)x[R_CLUSTER_N]))
                rc = set_add(&a->clusters, (int64_t)x[R_CLUSTER_M], (int64_t)x[R_CLUSTER_N]);
        }
    }
    (void)name;
    return rc;
}

int data_table_rules_parse(const char *json, const char *name, const data_table_spec *spec, const data_select *ds,
                           data_table_rules **out)
{
    *out = NULL;
    cJSON *root;
    int prc = hr_json_parse_str(json, name, &root);
    if (prc) return prc;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return hr_error(HR_EFORMAT, "%s: not a JSON object (a capability file)", name);
    }
    data_table_rules *r = hr_calloc(1, sizeof *r);
    int rc = r ? HR_OK : HR_ENOMEM;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!rc && (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, CAPS_FORMAT)))
        rc = hr_error(HR_EFORMAT, "%s: format: expected \"%s\"", name, CAPS_FORMAT);
    int64_t version = 0;
    if (!rc) rc = json_int(root, name, "", "version", CAPS_ANY, &version);
    if (!rc && (version < 1 || version > CAPS_VERSION))
        rc = hr_error(HR_EVERSION, "%s: version: %lld, this heurist reads capability files up to version %d", name,
                      (long long)version, CAPS_VERSION);
    if (!rc) rc = rules_bind(r, spec, name);
    if (!rc) rc = json_pairs(root, name, "", "cluster_shapes_tried", 1, 1, CAPS_SIZE, &r->clusters);
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "types");
    if (!rc && !cJSON_IsArray(types)) rc = hr_error(HR_EFORMAT, "%s: types: expected a list", name);
    int ti = 0;
    const cJSON *ty;
    if (!rc)
        cJSON_ArrayForEach(ty, types)
        {
            char path[96];
            const cJSON *dt = cJSON_GetObjectItemCaseSensitive(ty, "dtype");
            const cJSON *algos = cJSON_GetObjectItemCaseSensitive(ty, "algos");
            if (!cJSON_IsString(dt)) rc = hr_error(HR_EFORMAT, "%s: types[%d].dtype: expected a string", name, ti);
            else if (!cJSON_IsArray(algos)) rc = hr_error(HR_EFORMAT, "%s: types[%d].algos: expected a list", name, ti);
            if (rc) break;
            int dtype = -1;
            for (int v = 0; v < r->n_dtypes; v++)
                if (!strcmp(r->dtypes[v], dt->valuestring)) dtype = v;
            int ai = 0;
            const cJSON *ao;
            cJSON_ArrayForEach(ao, algos)
            {
                snprintf(path, sizeof path, "types[%d].algos[%d].", ti, ai++);
                caps_algo a;
                rc = read_algo(ao, name, path, dtype, &a, ds != NULL);
                if (!rc && dtype >= 0 && algo_find(r, dtype, (double)a.algo))
                    rc = hr_error(HR_EFORMAT, "%s: %salgo_id: %lld listed twice for %s", name, path, (long long)a.algo,
                                  dt->valuestring);
                caps_algo *grown = rc || dtype < 0 ? NULL : realloc(r->algos, (size_t)(r->n_algos + 1) * sizeof *grown);
                if (!rc && dtype >= 0 && !grown) rc = hr_error(HR_ENOMEM, "out of memory");
                if (grown) {
                    r->algos = grown;
                    r->algos[r->n_algos++] = a;
                } else {
                    set_free(&a.tiles);
                    set_free(&a.stages);
                    set_free(&a.splits);
                    set_free(&a.clusters);
                    set_free(&a.inner);
                }
                if (rc) break;
            }
            if (rc) break;
            ti++;
        }
    cJSON_Delete(root);
    long unknown = 0;
    if (!rc && ds) rc = rules_fill(r, ds, name, &unknown);
    if (!rc && unknown)
        rc = hr_error(HR_EINVAL, "%s: %ld measured configurations have a (dtype, algo_id) the capability file does not list",
                      name, unknown);
    if (rc) {
        data_table_rules_free(r);
        return rc;
    }
    *out = r;
    return HR_OK;
}

/* ---- checking ---- */

int data_table_rules_valid(const void *rules, const double *pv, const int32_t *values, int len)
{
    const data_table_rules *r = rules;
    int has[R_COUNT];
    double x[R_COUNT];
    for (int f = 0; f < R_COUNT; f++) {
        has[f] = r->col[f] < len;
        x[f] = has[f] ? field_num(r, f, values[r->col[f]]) : 0;
        if (has[f] && isnan(x[f])) return 0; /* a category with no number */
    }
    const caps_algo *a = NULL;
    if (has[R_ALGO] && !(a = algo_find(r, (int)pv[r->p_dtype], x[R_ALGO]))) return 0;
    if ((has[R_CLUSTER_M] || has[R_CLUSTER_N]) &&
        !set_match(&r->clusters, has[R_CLUSTER_M], (int64_t)x[R_CLUSTER_M], has[R_CLUSTER_N], (int64_t)x[R_CLUSTER_N]) &&
        !(a && set_match(&a->clusters, has[R_CLUSTER_M], (int64_t)x[R_CLUSTER_M], has[R_CLUSTER_N],
                         (int64_t)x[R_CLUSTER_N])))
        return 0;
    if (!a) return 1; /* the rest is per algorithm */
    if ((has[R_TILE_M] || has[R_TILE_N]) &&
        !set_match(&a->tiles, has[R_TILE_M], (int64_t)x[R_TILE_M], has[R_TILE_N], (int64_t)x[R_TILE_N]))
        return 0;
    if ((has[R_STAGE_K] || has[R_STAGES]) &&
        !set_match(&a->stages, has[R_STAGE_K], (int64_t)x[R_STAGE_K], has[R_STAGES], (int64_t)x[R_STAGES]))
        return 0;
    double s = x[R_SPLIT], red = x[R_RED];
    if (has[R_SPLIT]) {
        if (s > 1 && (!a->splitk || pv[r->p_k] < s * a->k_per_split)) return 0;
        if (s <= 0 && !set_match(&a->splits, 1, (int64_t)s, has[R_RED], (int64_t)red)) return 0;
    }
    if (has[R_RED]) {
        int in_mask = red > 0 && ((int64_t)red & ~a->red_mask) == 0;
        if (has[R_SPLIT] && s == 1 && red != 0) return 0;
        if (has[R_SPLIT] && s > 1 && !in_mask) return 0;
        if (!has[R_SPLIT] && red != 0 && !in_mask && !set_match(&a->splits, 0, 0, 1, (int64_t)red)) return 0;
    }
    if (has[R_SWIZZLE] && x[R_SWIZZLE] != 0 && !(x[R_SWIZZLE] > 0 && a->swizzle)) return 0;
    if (has[R_CUSTOM] && !(x[R_CUSTOM] >= 0 && x[R_CUSTOM] <= (double)a->custom_max)) return 0;
    if (has[R_INNER] && !set_has(&a->inner, (int64_t)x[R_INNER], 0)) return 0;
    return 1;
}

data_constraint *data_table_rules_constraint(const data_table_rules *r, const data_table_spec *spec)
{
    data_constraint *c = hr_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->solver = "caps";
    c->length = spec->n_kernel;
    c->param_names = (const char *const *)r->names;
    c->valid_prefix_pv = data_table_rules_valid;
    c->rules = r;
    return c;
}

/* ---- writing ---- */

static cJSON *set_json(const caps_set *s, int pairs)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < s->n; i++) {
        cJSON *e = pairs ? cJSON_CreateArray() : cJSON_CreateNumber((double)s->v[i][0]);
        if (pairs) {
            cJSON_AddItemToArray(e, cJSON_CreateNumber((double)s->v[i][0]));
            cJSON_AddItemToArray(e, cJSON_CreateNumber((double)s->v[i][1]));
        }
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

char *data_table_rules_to_json(const data_table_rules *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", CAPS_FORMAT);
    cJSON_AddNumberToObject(root, "version", CAPS_VERSION);
    cJSON_AddItemToObject(root, "cluster_shapes_tried", set_json(&r->clusters, 1));
    cJSON *types = cJSON_AddArrayToObject(root, "types");
    for (int i = 0; i < r->n_algos; i++) {
        const caps_algo *a = &r->algos[i];
        cJSON *ty = cJSON_CreateObject(), *algos = cJSON_CreateArray(), *o = cJSON_CreateObject();
        cJSON_AddStringToObject(ty, "dtype", r->dtypes[a->dtype]);
        cJSON_AddNumberToObject(o, "algo_id", (double)a->algo);
        cJSON_AddItemToObject(o, "tiles", set_json(&a->tiles, 1));
        cJSON_AddItemToObject(o, "stages", set_json(&a->stages, 1));
        cJSON_AddNumberToObject(o, "splitk_support", (double)a->splitk);
        cJSON_AddNumberToObject(o, "reduction_scheme_mask", (double)a->red_mask);
        cJSON_AddNumberToObject(o, "cta_swizzling_support", (double)a->swizzle);
        cJSON_AddNumberToObject(o, "custom_option_max", (double)a->custom_max);
        cJSON_AddNumberToObject(o, "min_k_per_split", a->k_per_split);
        cJSON_AddItemToObject(o, "splits_seen", set_json(&a->splits, 1));
        cJSON_AddItemToObject(o, "clusters_seen", set_json(&a->clusters, 1));
        cJSON_AddItemToObject(o, "inner_shapes", set_json(&a->inner, 0));
        cJSON_AddItemToArray(algos, o);
        cJSON_AddItemToObject(ty, "algos", algos);
        cJSON_AddItemToArray(types, ty);
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!s) hr_error(HR_ENOMEM, "out of memory");
    return s;
}
