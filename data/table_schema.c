/* Benchmark-table schemas: JSON in and out with validation, the feature functions over the portable formulas
 * (data/table_features.h), problem and configuration names, and the GroupKFold groups of a table. */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "data/table.h"
#include "data/table_features.h"

static const char *const schema_keys[] = {"problem", "kernel", "hardware", "categorical", "measure", "better", "tiles",
                                          "reduction", "split", "cus", "vendor", "vendor_feature", "duplicates", "vocab",
                                          "group", NULL};
static const char *const dup_names[] = {"median", "min", "mean", "error"};

void data_table_spec_free(data_table_spec *s)
{
    if (!s) return;
    data_table_column *cols[2] = {s->problem, s->kernel};
    int ns[2] = {s->n_problem + s->n_hardware, s->n_kernel};
    for (int r = 0; r < 2; r++) {
        for (int j = 0; cols[r] && j < ns[r]; j++) {
            free(cols[r][j].name);
            for (int v = 0; v < cols[r][j].n_vocab; v++) free(cols[r][j].vocab[v]);
            free(cols[r][j].vocab);
        }
        free(cols[r]);
    }
    free(s->tile_of);
    free(s->measure);
    free(s->vendor);
    free(s->group);
    memset(s, 0, sizeof *s);
}

/* Index of a problem/hardware (kernel_side 0) or kernel column by name, or -1. */
static int column_find(const data_table_spec *s, int kernel_side, const char *name, size_t len)
{
    const data_table_column *c = kernel_side ? s->kernel : s->problem;
    int n = kernel_side ? s->n_kernel : s->n_problem + s->n_hardware;
    for (int j = 0; j < n; j++)
        if (strlen(c[j].name) == len && memcmp(c[j].name, name, len) == 0) return j;
    return -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fills cols[at..at+n) from a JSON array of distinct column names. */
static int columns_read(const cJSON *arr, const char *name, const char *key, data_table_column *cols, int at)
{
    int j = at;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (!cJSON_IsString(e) || !*e->valuestring)
            return hr_error(HR_EFORMAT, "%s: schema: \"%s\": every entry must be a non-empty column name", name, key);
        if (!(cols[j++].name = hr_strdup(e->valuestring))) return HR_ENOMEM;
    }
    return HR_OK;
}

static int names_array(const cJSON *j, const char *name, const char *key, int required, int *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, key);
    *n = 0;
    if (!a) return required ? hr_error(HR_EFORMAT, "%s: schema: \"%s\" is required", name, key) : HR_OK;
    if (!cJSON_IsArray(a)) return hr_error(HR_EFORMAT, "%s: schema: \"%s\" must be an array of column names", name, key);
    *n = cJSON_GetArraySize(a);
    if (*n > DATA_TABLE_MAX_COLUMNS)
        return hr_error(HR_EFORMAT, "%s: schema: \"%s\" names %d columns, at most %d", name, key, *n, DATA_TABLE_MAX_COLUMNS);
    return HR_OK;
}

static const char *string_item(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int spec_fill(const cJSON *j, const char *name, data_table_spec *s)
{
    int rc, np, nh, nk, nc;
    if (!cJSON_IsObject(j)) return hr_error(HR_EFORMAT, "%s: schema: not a JSON object", name);
    for (const cJSON *e = j->child; e; e = e->next) {
        int known = 0;
        for (int k = 0; schema_keys[k] && !known; k++) known = strcmp(e->string, schema_keys[k]) == 0;
        if (!known)
            return hr_error(HR_EFORMAT, "%s: schema: unknown key \"%s\" (known: problem, kernel, hardware, categorical, "
                            "measure, better, tiles, reduction, split, cus, vendor, vendor_feature, duplicates, vocab, group)", name,
                            e->string);
    }
    if ((rc = names_array(j, name, "problem", 1, &np)) || (rc = names_array(j, name, "hardware", 0, &nh)) ||
        (rc = names_array(j, name, "kernel", 1, &nk)) || (rc = names_array(j, name, "categorical", 0, &nc)))
        return rc;
    if (np == 0) return hr_error(HR_EFORMAT, "%s: schema: \"problem\" names no column", name);
    if (nk == 0) return hr_error(HR_EFORMAT, "%s: schema: \"kernel\" names no column", name);
    const cJSON *vf = cJSON_GetObjectItemCaseSensitive(j, "vendor_feature");
    if (vf && !cJSON_IsBool(vf)) return hr_error(HR_EFORMAT, "%s: schema: \"vendor_feature\" must be true or false", name);
    int vendor_feature = cJSON_IsTrue(vf);
    if (vendor_feature && !cJSON_GetObjectItemCaseSensitive(j, "vendor"))
        return hr_error(HR_EFORMAT, "%s: schema: \"vendor_feature\" needs \"vendor\", the column of the vendor's ranks", name);
    nk += vendor_feature; /* the derived kernel column DATA_TABLE_VENDOR_FEATURE, last */
    if (nk > DATA_TABLE_MAX_COLUMNS)
        return hr_error(HR_EFORMAT, "%s: schema: \"kernel\" names %d columns and \"vendor_feature\" adds %s: at most %d "
                        "kernel columns in all", name, nk - 1, DATA_TABLE_VENDOR_FEATURE, DATA_TABLE_MAX_COLUMNS);
    if (np + nh > DATA_TABLE_MAX_COLUMNS)
        return hr_error(HR_EFORMAT, "%s: schema: %d problem and hardware columns, at most %d", name, np + nh, DATA_TABLE_MAX_COLUMNS);
    s->n_problem = np, s->n_hardware = nh, s->n_kernel = nk;
    s->problem = hr_calloc((size_t)(np + nh), sizeof *s->problem);
    s->kernel = hr_calloc((size_t)nk, sizeof *s->kernel);
    s->tile_of = hr_malloc((size_t)nk * sizeof *s->tile_of);
    if (!s->problem || !s->kernel || !s->tile_of) return HR_ENOMEM;
    for (int k = 0; k < nk; k++) s->tile_of[k] = -1;
    s->reduction = s->split = s->cus_column = -1;
    if ((rc = columns_read(cJSON_GetObjectItemCaseSensitive(j, "problem"), name, "problem", s->problem, 0)) ||
        (rc = columns_read(cJSON_GetObjectItemCaseSensitive(j, "hardware"), name, "hardware", s->problem, np)) ||
        (rc = columns_read(cJSON_GetObjectItemCaseSensitive(j, "kernel"), name, "kernel", s->kernel, 0)))
        return rc;
    s->vendor_feature = vendor_feature;
    if (vendor_feature && !(s->kernel[nk - 1].name = hr_strdup(DATA_TABLE_VENDOR_FEATURE))) return HR_ENOMEM;
    const char *measure = string_item(j, "measure"), *vendor = string_item(j, "vendor"), *group = string_item(j, "group");
    if (!measure || !*measure) return hr_error(HR_EFORMAT, "%s: schema: \"measure\" (the measured column's name) is required", name);
    if (cJSON_GetObjectItemCaseSensitive(j, "vendor") && (!vendor || !*vendor))
        return hr_error(HR_EFORMAT, "%s: schema: \"vendor\" must be a column name", name);
    if (cJSON_GetObjectItemCaseSensitive(j, "group") && (!group || !*group))
        return hr_error(HR_EFORMAT, "%s: schema: \"group\" must be a column name (the column naming each problem's group)",
                        name);
    if (!(s->measure = hr_strdup(measure)) || (vendor && !(s->vendor = hr_strdup(vendor))) ||
        (group && !(s->group = hr_strdup(group))))
        return HR_ENOMEM;
    /* every column has one role */
    const char *all[2 * DATA_TABLE_MAX_COLUMNS + 3];
    int n_all = 0;
    for (int i = 0; i < np + nh; i++) all[n_all++] = s->problem[i].name;
    for (int i = 0; i < nk; i++) all[n_all++] = s->kernel[i].name;
    all[n_all++] = s->measure;
    if (s->vendor) all[n_all++] = s->vendor;
    if (s->group) all[n_all++] = s->group;
    for (int a = 0; a < n_all; a++)
        for (int b = a + 1; b < n_all; b++)
            if (strcmp(all[a], all[b]) == 0)
                return hr_error(HR_EFORMAT, "%s: schema: column '%s' is named twice (a column has one role)", name, all[a]);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "categorical"))
    {
        if (!cJSON_IsString(e)) return hr_error(HR_EFORMAT, "%s: schema: \"categorical\": entries must be column names", name);
        size_t len = strlen(e->valuestring);
        int p = column_find(s, 0, e->valuestring, len), k = column_find(s, 1, e->valuestring, len);
        if (p < 0 && k < 0)
            return hr_error(HR_EFORMAT, "%s: schema: categorical column '%s' is not a problem, kernel or hardware column",
                            name, e->valuestring);
        (p >= 0 ? &s->problem[p] : &s->kernel[k])->categorical = 1;
    }
    const char *better = string_item(j, "better");
    if (cJSON_GetObjectItemCaseSensitive(j, "better") && (!better || (strcmp(better, "lower") && strcmp(better, "higher"))))
        return hr_error(HR_EFORMAT, "%s: schema: \"better\" must be \"lower\" or \"higher\"", name);
    s->higher_better = better && strcmp(better, "higher") == 0;
    const cJSON *tiles = cJSON_GetObjectItemCaseSensitive(j, "tiles");
    if (tiles && !cJSON_IsObject(tiles))
        return hr_error(HR_EFORMAT, "%s: schema: \"tiles\" must map kernel columns to problem columns", name);
    for (e = tiles ? tiles->child : NULL; e; e = e->next) {
        int k = column_find(s, 1, e->string, strlen(e->string));
        int p = cJSON_IsString(e) ? column_find(s, 0, e->valuestring, strlen(e->valuestring)) : -1;
        if (k < 0) return hr_error(HR_EFORMAT, "%s: schema: tiles: '%s' is not a kernel column", name, e->string);
        if (p < 0 || p >= np)
            return hr_error(HR_EFORMAT, "%s: schema: tiles: '%s' must name a problem column", name, e->string);
        if (s->kernel[k].categorical || s->problem[p].categorical)
            return hr_error(HR_EFORMAT, "%s: schema: tiles: '%s' -> '%s': a tile and its dimension are numeric", name,
                            e->string, e->valuestring);
        for (int o = 0; o < nk; o++)
            if (s->tile_of[o] == p)
                return hr_error(HR_EFORMAT, "%s: schema: tiles: problem column '%s' is tiled twice", name, e->valuestring);
        s->tile_of[k] = p;
    }
    const cJSON *red = cJSON_GetObjectItemCaseSensitive(j, "reduction"), *split = cJSON_GetObjectItemCaseSensitive(j, "split");
    if (red) {
        s->reduction = cJSON_IsString(red) ? column_find(s, 0, red->valuestring, strlen(red->valuestring)) : -1;
        if (s->reduction < 0 || s->reduction >= np || s->problem[s->reduction].categorical)
            return hr_error(HR_EFORMAT, "%s: schema: \"reduction\" must name a numeric problem column", name);
    }
    if (split) {
        s->split = cJSON_IsString(split) ? column_find(s, 1, split->valuestring, strlen(split->valuestring)) : -1;
        if (s->split < 0 || s->kernel[s->split].categorical)
            return hr_error(HR_EFORMAT, "%s: schema: \"split\" must name a numeric kernel column", name);
    }
    const cJSON *cus = cJSON_GetObjectItemCaseSensitive(j, "cus");
    if (cJSON_IsNumber(cus)) {
        if (!(cus->valuedouble > 0) || !isfinite(cus->valuedouble))
            return hr_error(HR_EFORMAT, "%s: schema: \"cus\" must be a positive number or a hardware column", name);
        s->cus = cus->valuedouble;
    } else if (cus) {
        s->cus_column = cJSON_IsString(cus) ? column_find(s, 0, cus->valuestring, strlen(cus->valuestring)) : -1;
        if (s->cus_column < np || s->problem[s->cus_column].categorical)
            return hr_error(HR_EFORMAT, "%s: schema: \"cus\" must be a positive number or a numeric hardware column", name);
    }
    const char *dup = string_item(j, "duplicates");
    if (cJSON_GetObjectItemCaseSensitive(j, "duplicates")) {
        int d = -1;
        for (int i = 0; dup && i < 4; i++)
            if (strcmp(dup, dup_names[i]) == 0) d = i;
        if (d < 0) return hr_error(HR_EFORMAT, "%s: schema: \"duplicates\" must be median, min, mean or error", name);
        s->duplicates = (data_table_dup)d;
    }
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(j, "vocab");
    if (vocab && !cJSON_IsObject(vocab))
        return hr_error(HR_EFORMAT, "%s: schema: \"vocab\" must map categorical columns to their values", name);
    for (e = vocab ? vocab->child : NULL; e; e = e->next) {
        size_t len = strlen(e->string);
        int p = column_find(s, 0, e->string, len), k = column_find(s, 1, e->string, len);
        data_table_column *c = p >= 0 ? &s->problem[p] : k >= 0 ? &s->kernel[k] : NULL;
        if (!c || !c->categorical || !cJSON_IsArray(e))
            return hr_error(HR_EFORMAT, "%s: schema: vocab: '%s' must be a categorical column with an array of values",
                            name, e->string);
        int n = cJSON_GetArraySize(e);
        if (!(c->vocab = hr_calloc((size_t)(n ? n : 1), sizeof *c->vocab))) return HR_ENOMEM;
        const cJSON *v;
        cJSON_ArrayForEach(v, e)
        {
            if (!cJSON_IsString(v)) return hr_error(HR_EFORMAT, "%s: schema: vocab: '%s': values are strings", name, e->string);
            if (!(c->vocab[c->n_vocab++] = hr_strdup(v->valuestring))) return HR_ENOMEM;
        }
        qsort(c->vocab, (size_t)c->n_vocab, sizeof *c->vocab, cmp_str);
        for (int i = 1; i < c->n_vocab; i++)
            if (strcmp(c->vocab[i - 1], c->vocab[i]) == 0)
                return hr_error(HR_EFORMAT, "%s: schema: vocab: '%s' lists '%s' twice", name, e->string, c->vocab[i]);
    }
    return HR_OK;
}

int data_table_spec_from_json(const char *json, const char *name, data_table_spec *out)
{
    memset(out, 0, sizeof *out);
    char doc[512];
    snprintf(doc, sizeof doc, "%s: schema", name);
    cJSON *j;
    int rc = hr_json_parse_str(json, doc, &j);
    if (rc) return rc;
    rc = spec_fill(j, name, out);
    cJSON_Delete(j);
    if (rc) data_table_spec_free(out);
    return rc;
}

static cJSON *names_json(const data_table_column *c, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(c[i].name));
    return a;
}

char *data_table_spec_to_json(const data_table_spec *s)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON_AddItemToObject(j, "problem", names_json(s->problem, s->n_problem));
    cJSON_AddItemToObject(j, "hardware", names_json(s->problem + s->n_problem, s->n_hardware));
    cJSON_AddItemToObject(j, "kernel", names_json(s->kernel, s->n_kernel - s->vendor_feature));
    cJSON *cat = cJSON_AddArrayToObject(j, "categorical"), *vocab = cJSON_CreateObject();
    for (int side = 0; side < 2; side++) {
        const data_table_column *c = side ? s->kernel : s->problem;
        int n = side ? s->n_kernel : s->n_problem + s->n_hardware;
        for (int i = 0; i < n; i++) {
            if (!c[i].categorical) continue;
            cJSON_AddItemToArray(cat, cJSON_CreateString(c[i].name));
            cJSON *v = cJSON_AddArrayToObject(vocab, c[i].name);
            for (int t = 0; t < c[i].n_vocab; t++) cJSON_AddItemToArray(v, cJSON_CreateString(c[i].vocab[t]));
        }
    }
    cJSON_AddStringToObject(j, "measure", s->measure);
    cJSON_AddStringToObject(j, "better", s->higher_better ? "higher" : "lower");
    cJSON *tiles = cJSON_AddObjectToObject(j, "tiles");
    for (int k = 0; k < s->n_kernel; k++)
        if (s->tile_of[k] >= 0) cJSON_AddStringToObject(tiles, s->kernel[k].name, s->problem[s->tile_of[k]].name);
    if (s->reduction >= 0) cJSON_AddStringToObject(j, "reduction", s->problem[s->reduction].name);
    if (s->split >= 0) cJSON_AddStringToObject(j, "split", s->kernel[s->split].name);
    if (s->cus_column >= 0) cJSON_AddStringToObject(j, "cus", s->problem[s->cus_column].name);
    else if (s->cus > 0) cJSON_AddNumberToObject(j, "cus", s->cus);
    if (s->vendor) cJSON_AddStringToObject(j, "vendor", s->vendor);
    if (s->vendor_feature) cJSON_AddBoolToObject(j, "vendor_feature", 1);
    cJSON_AddStringToObject(j, "duplicates", dup_names[s->duplicates]);
    if (s->group) cJSON_AddStringToObject(j, "group", s->group);
    cJSON_AddItemToObject(j, "vocab", vocab);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!text) hr_error(HR_ENOMEM, "out of memory");
    return text;
}

int data_table_spec_same(const data_table_spec *a, const data_table_spec *b)
{
    data_table_spec sa = *a, sb = *b;
    sa.group = sb.group = NULL;
    char *x = data_table_spec_to_json(&sa), *y = data_table_spec_to_json(&sb);
    int same = x && y && !strcmp(x, y);
    free(x);
    free(y);
    return same;
}

int data_table_spec_copy(const data_table_spec *s, data_table_spec *out)
{
    memset(out, 0, sizeof *out);
    char *json = data_table_spec_to_json(s);
    if (!json) return HR_ENOMEM;
    int rc = data_table_spec_from_json(json, "table schema", out);
    free(json);
    return rc;
}

/* ---- features ---- */

typedef struct shape_arrays {
    int pvocab[DATA_TABLE_MAX_COLUMNS], kvocab[DATA_TABLE_MAX_COLUMNS];
} shape_arrays;

static data_table_shape shape_of(const data_table_spec *s, shape_arrays *a)
{
    for (int j = 0; j < s->n_problem + s->n_hardware; j++) a->pvocab[j] = s->problem[j].categorical ? s->problem[j].n_vocab : 0;
    for (int k = 0; k < s->n_kernel; k++) a->kvocab[k] = s->kernel[k].categorical ? s->kernel[k].n_vocab : 0;
    data_table_shape sh = {s->n_problem, s->n_hardware, s->n_kernel, a->pvocab, a->kvocab, s->tile_of,
                           s->reduction, s->split, s->cus_column, s->cus};
    return sh;
}

int data_table_problem_feature_count(const data_table_spec *s)
{
    shape_arrays a;
    data_table_shape sh = shape_of(s, &a);
    return data_table_shape_problem_count(&sh);
}

int data_table_pair_feature_count(const data_table_spec *s)
{
    shape_arrays a;
    data_table_shape sh = shape_of(s, &a);
    return data_table_shape_pair_count(&sh);
}

void data_table_problem_features(const data_table_spec *s, const double *pv, float *x)
{
    shape_arrays a;
    data_table_shape sh = shape_of(s, &a);
    data_table_shape_problem_features(&sh, pv, x);
}

void data_table_pair_features(const data_table_spec *s, const double *pv, const double *kv, float *out)
{
    shape_arrays a;
    data_table_shape sh = shape_of(s, &a);
    data_table_shape_pair_features(&sh, pv, kv, out);
}

void data_table_problem_values(const data_table_spec *s, const float *x, double *pv)
{
    shape_arrays a;
    data_table_shape sh = shape_of(s, &a);
    data_table_shape_problem_values(&sh, x, pv);
}

/* A column's encoding: its categories one-hot, or a number and its log2. */
static int encoding_width(const data_table_column *c)
{
    return c->categorical ? c->n_vocab : 2;
}

int data_table_config_feature_count(const data_table_spec *s)
{
    int n = 0;
    for (int k = 0; k < s->n_kernel; k++) n += encoding_width(&s->kernel[k]);
    return n;
}

/* Walks a column's encoding: j-th slot's name, or the slot count left (*j reduced) when it is not there. */
static int encoding_name(const data_table_column *c, int *j, char *buf, size_t size)
{
    int w = encoding_width(c);
    if (*j >= w) {
        *j -= w;
        return 0;
    }
    if (c->categorical) snprintf(buf, size, "%s=%s", c->name, c->vocab[*j]);
    else snprintf(buf, size, *j ? "log2_%s" : "%s", c->name);
    return 1;
}

int data_table_feature_name(const data_table_spec *s, int j, char *buf, size_t size)
{
    if (j < 0) return hr_error(HR_EINVAL, "table feature %d: out of range", j);
    for (int c = 0; c < s->n_problem + s->n_hardware; c++)
        if (encoding_name(&s->problem[c], &j, buf, size)) return HR_OK;
    for (int k = 0; k < s->n_kernel; k++)
        if (encoding_name(&s->kernel[k], &j, buf, size)) return HR_OK;
    static const char *const tiled[3] = {"tiles_%s", "waste_%s", "ratio_%s"};
    for (int k = 0; k < s->n_kernel; k++) {
        if (s->tile_of[k] < 0) continue;
        if (j < 3) {
            snprintf(buf, size, tiled[j], s->problem[s->tile_of[k]].name);
            return HR_OK;
        }
        j -= 3;
    }
    shape_arrays a;
    data_table_shape sh = shape_of(s, &a);
    int n_out, n_red;
    data_table_shape_tiled(&sh, &n_out, &n_red);
    const char *tail[3];
    int nt = 0;
    if (n_out > 0) {
        tail[nt++] = "output_tiles";
        if (data_table_shape_has_cus(&sh)) tail[nt++] = "waves";
    }
    if (n_out == 2 && n_red == 1) tail[nt++] = "intensity";
    if (j < nt) {
        snprintf(buf, size, "%s", tail[j]);
        return HR_OK;
    }
    return hr_error(HR_EINVAL, "table feature: index out of range");
}

/* ---- names ---- */

static int vocab_find(const data_table_column *c, const char *v, size_t len)
{
    int lo = 0, hi = c->n_vocab - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, r = strncmp(c->vocab[mid], v, len);
        if (r == 0 && c->vocab[mid][len]) r = 1;
        if (r == 0) return mid;
        if (r < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int data_table_category_unknown(const data_table_column *c, const char *value, size_t len, const char *context)
{
    char known[1024];
    size_t o = 0;
    known[0] = '\0';
    int listed = c->n_vocab < DATA_TABLE_KNOWN_LISTED ? c->n_vocab : DATA_TABLE_KNOWN_LISTED;
    for (int k = 0; k < listed && o < sizeof known; k++) {
        int w = snprintf(known + o, sizeof known - o, "%s%s", k ? ", " : "", c->vocab[k]);
        if (w < 0) break;
        o += (size_t)w;
    }
    if (o >= sizeof known) strcpy(known + sizeof known - 5, " ...");
    char more[48] = "";
    if (c->n_vocab > listed) snprintf(more, sizeof more, " and %d more", c->n_vocab - listed);
    if (len > 200) len = 200;
    return hr_error(HR_EINVAL, "%s: column '%s': '%.*s' is not one of its %d known value%s: %s%s", context, c->name,
                    (int)len, value, c->n_vocab, c->n_vocab == 1 ? "" : "s", known, more);
}

/* "a=1,b=x" over the problem (kernel_side 0) or kernel columns into v. */
static int assignments_parse(const data_table_spec *s, int kernel_side, const char *text, double *v)
{
    const data_table_column *cols = kernel_side ? s->kernel : s->problem;
    int n = kernel_side ? s->n_kernel : s->n_problem + s->n_hardware;
    const char *what = kernel_side ? "configuration" : "problem";
    unsigned char seen[DATA_TABLE_MAX_COLUMNS] = {0};
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ','), *eq;
        size_t len = end ? (size_t)(end - p) : strlen(p);
        eq = memchr(p, '=', len);
        if (!eq) return hr_error(HR_EINVAL, "%s '%s': '%.*s' is not column=value", what, text, (int)len, p);
        size_t nlen = (size_t)(eq - p), vlen = len - nlen - 1;
        int j = column_find(s, kernel_side, p, nlen);
        if (j < 0) return hr_error(HR_EINVAL, "%s '%s': unknown column '%.*s'", what, text, (int)nlen, p);
        if (seen[j]++) return hr_error(HR_EINVAL, "%s '%s': column '%s' given twice", what, text, cols[j].name);
        if (cols[j].categorical) {
            int id = vocab_find(&cols[j], eq + 1, vlen);
            if (id < 0) {
                char context[320];
                snprintf(context, sizeof context, "%s '%.250s'", what, text);
                return data_table_category_unknown(&cols[j], eq + 1, vlen, context);
            }
            v[j] = id;
        } else {
            char num[64];
            char *e;
            if (vlen == 0 || vlen >= sizeof num)
                return hr_error(HR_EINVAL, "%s '%s': column '%s': not a number", what, text, cols[j].name);
            memcpy(num, eq + 1, vlen);
            num[vlen] = '\0';
            v[j] = strtod(num, &e);
            if (*e || !isfinite(v[j]))
                return hr_error(HR_EINVAL, "%s '%s': column '%s': '%s' is not a number", what, text, cols[j].name, num);
        }
        if (!end) break;
        p = end + 1;
    }
    for (int j = 0; j < n; j++)
        if (!seen[j]) return hr_error(HR_EINVAL, "%s '%s': column '%s' is missing", what, text, cols[j].name);
    return HR_OK;
}

int data_table_problem_parse(const data_table_spec *s, const char *text, double *pv)
{
    return assignments_parse(s, 0, text, pv);
}

int data_table_config_parse(const data_table_spec *s, const char *text, double *kv)
{
    return assignments_parse(s, 1, text, kv);
}

static int assignments_format(const data_table_column *cols, int n, const double *v, char *buf, size_t size)
{
    size_t o = 0;
    if (size) buf[0] = '\0';
    for (int j = 0; j < n; j++) {
        int w;
        if (cols[j].categorical) {
            int id = (int)v[j];
            if (!(v[j] >= 0 && v[j] < cols[j].n_vocab))
                return hr_error(HR_EINVAL, "column '%s': value %g is outside its vocabulary", cols[j].name, v[j]);
            w = snprintf(buf + o, size - o, "%s%s=%s", j ? "," : "", cols[j].name, cols[j].vocab[id]);
        } else {
            w = snprintf(buf + o, size - o, "%s%s=%.15g", j ? "," : "", cols[j].name, v[j]);
        }
        if (w < 0 || (size_t)w >= size - o) return hr_error(HR_EINVAL, "name longer than %zu bytes", size);
        o += (size_t)w;
    }
    return HR_OK;
}

int data_table_problem_format(const data_table_spec *s, const double *pv, char *buf, size_t size)
{
    return assignments_format(s->problem, s->n_problem + s->n_hardware, pv, buf, size);
}

int data_table_config_format(const data_table_spec *s, const double *kv, char *buf, size_t size)
{
    return assignments_format(s->kernel, s->n_kernel, kv, buf, size);
}

/* ---- groups ---- */

typedef struct group_row {
    const double *pv;
    int np, row;
} group_row;

static int pv_equal(const double *a, const double *b, int np)
{
    for (int j = 0; j < np; j++)
        if (a[j] != b[j]) return 0;
    return 1;
}

static int cmp_group_row(const void *a, const void *b)
{
    const group_row *x = a, *y = b;
    for (int j = 0; j < x->np; j++)
        if (x->pv[j] != y->pv[j]) return x->pv[j] < y->pv[j] ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

int data_table_groups(const data_table *t, int *group, int *n_groups)
{
    if (!t->group) return data_table_problem_groups(t, group, n_groups);
    /* group_names is in order of first appearance, so the ids are already dense in that order */
    memcpy(group, t->group, (size_t)t->n * sizeof *group);
    *n_groups = t->n_group_names;
    return HR_OK;
}

int data_table_problem_groups(const data_table *t, int *group, int *n_groups)
{
    int n = t->n, np = t->spec.n_problem, width = t->spec.n_problem + t->spec.n_hardware;
    group_row *r = hr_malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    int *first = hr_malloc((size_t)(n > 0 ? n : 1) * sizeof *first);
    if (!r || !first) {
        free(r);
        free(first);
        return HR_ENOMEM;
    }
    for (int i = 0; i < n; i++) r[i] = (group_row){t->pv + (size_t)i * width, np, i};
    qsort(r, (size_t)n, sizeof *r, cmp_group_row);
    /* run heads name each run by its first row; ids then follow the order of first appearance */
    for (int i = 0; i < n; i++) {
        int head = i > 0 && pv_equal(r[i].pv, r[i - 1].pv, np) ? first[r[i - 1].row] : r[i].row;
        first[r[i].row] = head;
    }
    int g = 0;
    for (int i = 0; i < n; i++) group[i] = -1;
    for (int i = 0; i < n; i++) group[i] = first[i] == i ? g++ : group[first[i]];
    *n_groups = g;
    free(r);
    free(first);
    return HR_OK;
}
