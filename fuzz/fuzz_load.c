/* The loaders behind each fuzz target (see fuzz_load.h). */
#define _GNU_SOURCE
#include "fuzz/fuzz_load.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/h5.h"
#include "core/json.h"
#include "data/data.h"
#include "data/table.h"
#include "gbdt/gbdt.h"
#include "models/model.h"
#include "train/train.h"

const char *const fuzz_target_names[FUZZ_COUNT] = {"fdb", "key", "perfdb", "model", "cache", "config", "table", "schema",
                                                      "caps"};

int fuzz_target_find(const char *name)
{
    for (int t = 0; t < FUZZ_COUNT; t++)
        if (strcmp(name, fuzz_target_names[t]) == 0) return t;
    return -1;
}

/* The bytes as a fresh file under $TMPDIR ending in suffix; returns its malloc'd path or NULL. */
static char *bytes_to_file(const uint8_t *data, size_t size, const char *suffix)
{
    const char *dir = getenv("TMPDIR");
    size_t n = strlen(dir && *dir ? dir : "/tmp") + strlen(suffix) + 32;
    char *path = malloc(n);
    if (!path) return NULL;
    snprintf(path, n, "%s/heurist-fuzz-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    if (fd < 0) {
        free(path);
        return NULL;
    }
    size_t at = 0;
    while (at < size) {
        ssize_t w = write(fd, data + at, size - at);
        if (w <= 0) break;
        at += (size_t)w;
    }
    close(fd);
    if (at != size) {
        unlink(path);
        free(path);
        return NULL;
    }
    return path;
}

static int load_fdb(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return HR_ENOMEM;
    memcpy(text, data, size);
    text[size] = '\0';
    data_select *ds = NULL;
    int rc = data_fdb_parse("fuzz.fdb.txt", text, size, NULL, &ds);
    data_select_free(ds);
    free(text);
    return rc;
}

static int load_key(const uint8_t *data, size_t size)
{
    data_problem p;
    const char *why = NULL;
    int rc = data_key_parse((const char *)data, size, &p, &why);
    if (rc == HR_OK) {
        char buf[512];
        data_key_format(&p, buf, sizeof buf); /* a parsed key must format without overflow */
        return HR_OK;
    }
    /* the parser gives its reason as a string; a refusal without one is a bug the targets report */
    return hr_error(rc, "key: %s", why ? why : "no error recorded");
}

static int load_perfdb(const uint8_t *data, size_t size)
{
    char *path = bytes_to_file(data, size, ".db");
    if (!path) return HR_EIO;
    static const char *const solvers[] = {"ConvAsm1x1U", "EmptySolver"};
    /* both solvers are loaded (each is a different path through the rows); the file is usable when one loads */
    int rc = HR_OK, loaded = 0;
    for (int s = 0; s < 2; s++) {
        data_tune *dt = NULL;
        int r = data_perfdb_load(path, solvers[s], NULL, &dt);
        data_tune_free(dt);
        if (r == HR_OK) loaded = 1;
        else if (rc == HR_OK) rc = r;
    }
    if (loaded) rc = HR_OK;
    unlink(path);
    free(path);
    return rc;
}

static int load_model(const uint8_t *data, size_t size)
{
    char *path = bytes_to_file(data, size, ".h5");
    if (!path) return HR_EIO;
    model *m = NULL;
    int rc = model_load(path, &m);
    model_free(m);
    /* a bare booster file (gbdt_booster_save) is the other kind of model file; usable when one loads */
    gbdt_booster *b = NULL;
    int rb = gbdt_booster_load(path, &b);
    gbdt_booster_free(b);
    unlink(path);
    free(path);
    return rc && rb ? rc : HR_OK;
}

static int load_cache(const uint8_t *data, size_t size)
{
    char *path = bytes_to_file(data, size, ".h5");
    if (!path) return HR_EIO;
    data_select *ds = NULL;
    data_tune *dt = NULL;
    int rc = data_cache_read(path, &ds, &dt);
    data_select_free(ds);
    data_tune_free(dt);
    unlink(path);
    free(path);
    return rc;
}

/* The config reader (core/config.h) through every family's option table, as train reads --config; the
 * fields land in a zeroed scratch block that covers every table's offsets. The first family's status is
 * returned (a config fits one family at most). */
static int load_config(const uint8_t *data, size_t size)
{
    cJSON *cfg;
    int prc = hr_json_parse((const char *)data, size, "config", &cfg);
    if (prc) return prc;
    int first = HR_OK;
    for (int i = 0; model_family_at(i); i++) {
        const model_family *fam = model_family_at(i);
        hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
        hr_config_table t = {fam->name, rows, fam->config_options(rows)};
        _Alignas(16) unsigned char scratch[8192];
        memset(scratch, 0, sizeof scratch);
        for (size_t r = 0; r < t.n; r++)
            if (rows[r].offset + sizeof(double) > sizeof scratch) abort(); /* a table larger than the scratch */
        int rc = hr_config_read(&t, cfg, scratch);
        if (i == 0) first = rc;
    }
    cJSON_Delete(cfg);
    return first;
}

#define FUZZ_TABLE_SCHEMA                                                                                    \
    "{\"problem\":[\"M\",\"N\",\"K\",\"dtype\"],\"hardware\":[\"sms\"],\"kernel\":[\"tile_m\",\"tile_n\",\"tile_k\",\"split_k\"]," \
    "\"categorical\":[\"dtype\"],\"measure\":\"time_us\",\"vendor\":\"rank\",\"tiles\":{\"tile_m\":\"M\",\"tile_n\":\"N\"," \
    "\"tile_k\":\"K\"},\"reduction\":\"K\",\"split\":\"split_k\",\"cus\":\"sms\"}"

/* Every feature of every (problem, configuration) pair of a loaded table, and every name: none may fault. */
static int table_exercise(const data_select *ds)
{
    const data_table *t = ds->table;
    int np = t->spec.n_problem + t->spec.n_hardware, nx = data_table_problem_feature_count(&t->spec);
    int npair = data_table_pair_feature_count(&t->spec);
    float *x = malloc((size_t)(nx + 1) * sizeof *x), *f = malloc((size_t)(npair + 1) * sizeof *f);
    int rc = x && f ? HR_OK : HR_ENOMEM;
    char buf[4096];
    double pv[DATA_TABLE_MAX_COLUMNS];
    for (int i = 0; !rc && i < ds->n; i++) {
        data_table_problem_features(&t->spec, t->pv + (size_t)i * np, x);
        data_table_problem_values(&t->spec, x, pv);
        if (data_table_problem_format(&t->spec, t->pv + (size_t)i * np, buf, sizeof buf) == HR_OK)
            rc = data_table_problem_parse(&t->spec, buf, pv);
        for (int k = 0; !rc && k < ds->n_kernels && k < 64; k++)
            data_table_pair_features(&t->spec, t->pv + (size_t)i * np, t->kv + (size_t)k * t->spec.n_kernel, f);
    }
    for (int j = 0; !rc && j < nx + npair; j++) rc = data_table_feature_name(&t->spec, j, buf, sizeof buf);
    int *g = malloc((size_t)(ds->n + 1) * sizeof *g), ng;
    if (!rc) rc = g ? data_table_groups(t, g, &ng) : HR_ENOMEM;
    free(g);
    free(x);
    free(f);
    return rc;
}

static int load_table(const uint8_t *data, size_t size)
{
    data_load_opts o = {.threads = 1};
    data_select *ds = NULL;
    int rc = data_table_parse("fuzz.csv", (const char *)data, size, ',', FUZZ_TABLE_SCHEMA, &o, &ds);
    if (!rc) rc = table_exercise(ds);
    data_select_free(ds);
    return rc;
}

static int load_schema(const uint8_t *data, size_t size)
{
    char *json = malloc(size + 1);
    if (!json) return HR_ENOMEM;
    memcpy(json, data, size);
    json[size] = '\0';
    data_table_spec s, back;
    int rc = data_table_spec_from_json(json, "fuzz.schema.json", &s);
    free(json);
    if (rc) return rc;
    rc = data_table_spec_copy(&s, &back);
    char buf[4096];
    int n = rc ? 0 : data_table_problem_feature_count(&back) + data_table_pair_feature_count(&back);
    for (int j = 0; !rc && j < n; j++) rc = data_table_feature_name(&back, j, buf, sizeof buf);
    if (!rc) {
        double pv[DATA_TABLE_MAX_COLUMNS] = {0}, kv[DATA_TABLE_MAX_COLUMNS] = {0};
        float *x = malloc((size_t)(n + 1) * sizeof *x);
        if (!x) rc = HR_ENOMEM;
        else {
            data_table_problem_features(&back, pv, x);
            data_table_pair_features(&back, pv, kv, x);
            free(x);
        }
    }
    data_table_spec_free(&s);
    data_table_spec_free(&back);
    return rc;
}

#define FUZZ_CAPS_SCHEMA                                                                                     \
    "{\"problem\":[\"M\",\"N\",\"K\",\"dtype\"],\"kernel\":[\"algo_id\",\"tile_m\",\"tile_n\",\"stage_k\",\"stages\"," \
    "\"split_k\",\"reduction_scheme\",\"swizzle\",\"custom_option\",\"cluster_m\",\"cluster_n\",\"inner_shape\"]," \
    "\"categorical\":[\"dtype\",\"algo_id\",\"reduction_scheme\",\"inner_shape\"],\"measure\":\"time_us\"," \
    "\"reduction\":\"K\",\"split\":\"split_k\",\"vocab\":{\"dtype\":[\"bf16\",\"fp32\"],\"algo_id\":[\"5\",\"21\",\"x\"]," \
    "\"reduction_scheme\":[\"0\",\"2\"],\"inner_shape\":[\"0\",\"1\"]}}"

/* A capability file compiled against a fixed schema, written back and read again, and its rules asked about every
 * prefix of a few configurations (categories in and out of range included): none may fault. */
static int load_caps(const uint8_t *data, size_t size)
{
    char *json = malloc(size + 1);
    if (!json) return HR_ENOMEM;
    memcpy(json, data, size);
    json[size] = '\0';
    data_table_spec spec;
    int rc = data_table_spec_from_json(FUZZ_CAPS_SCHEMA, "fuzz.schema.json", &spec);
    data_table_rules *r = NULL, *back = NULL;
    if (!rc) rc = data_table_rules_parse(json, "fuzz.caps.json", &spec, NULL, &r);
    free(json);
    char *text = rc ? NULL : data_table_rules_to_json(r);
    if (!rc && !text) rc = HR_ENOMEM;
    if (!rc) rc = data_table_rules_parse(text, "fuzz.caps.json (written back)", &spec, NULL, &back);
    static const int32_t seqs[3][12] = {{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
                                        {1, 64, 128, 32, 3, 2, 1, 1, 1, 1, 1, 1},
                                        {2, -1, 7, 64, 0, -1, 5, 9, 2, 4, 2, -3}};
    const double pv[2][4] = {{128, 64, 256, 0}, {1, 1, 8, 1}};
    for (int i = 0; !rc && i < 3; i++)
        for (int p = 0; p < 2; p++)
            for (int len = 0; len <= 12; len++)
                if (data_table_rules_valid(r, pv[p], seqs[i], len) != data_table_rules_valid(back, pv[p], seqs[i], len))
                    abort(); /* the written rules must answer as the read ones */
    free(text);
    data_table_rules_free(r);
    data_table_rules_free(back);
    data_table_spec_free(&spec);
    return rc;
}

int fuzz_load(int target, const uint8_t *data, size_t size)
{
    hr_h5_quiet();
    switch (target) {
    case FUZZ_FDB: return load_fdb(data, size);
    case FUZZ_KEY: return load_key(data, size);
    case FUZZ_PERFDB: return load_perfdb(data, size);
    case FUZZ_MODEL: return load_model(data, size);
    case FUZZ_CACHE: return load_cache(data, size);
    case FUZZ_CONFIG: return load_config(data, size);
    case FUZZ_TABLE: return load_table(data, size);
    case FUZZ_SCHEMA: return load_schema(data, size);
    case FUZZ_CAPS: return load_caps(data, size);
    default: return hr_error(HR_EINVAL, "unknown fuzz target %d", target);
    }
}
