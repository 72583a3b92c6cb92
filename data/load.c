/* One entry point for every input the command line accepts: find-db, perf-db, benchmark table or dataset cache. */
#include <string.h>

#include "data/data.h"
#include "data/table.h"

data_source_kind data_source_kind_of(const char *path)
{
    size_t n = strlen(path);
    if (hr_ends_with(path, n, ".h5") || hr_ends_with(path, n, ".hdf5")) return DATA_SOURCE_CACHE;
    if (hr_ends_with(path, n, ".db") || hr_ends_with(path, n, ".db.bz2")) return DATA_SOURCE_PERFDB;
    if (data_table_is_table(path)) return DATA_SOURCE_TABLE;
    return DATA_SOURCE_FDB;
}

int data_load(const char *path, const char *solver, const data_load_opts *opts, data_select **sel, data_tune **tune)
{
    *sel = NULL;
    *tune = NULL;
    data_source_kind kind = data_source_kind_of(path);
    /* a schema names a table's columns: any other source holds its own layout, and an unused --schema would be
     * ignored without a word */
    if (opts && opts->schema && kind != DATA_SOURCE_TABLE)
        return hr_error(HR_EINVAL, "--schema applies to a benchmark table (.csv, .tsv): %s is a %s, which %s", path,
                        kind == DATA_SOURCE_CACHE ? "dataset cache" : kind == DATA_SOURCE_PERFDB ? "perf-db" : "find-db",
                        kind == DATA_SOURCE_CACHE ? "keeps the schema of the table it was made from" : "has no schema");
    switch (kind) {
    case DATA_SOURCE_CACHE: return data_cache_read(path, sel, tune);
    case DATA_SOURCE_PERFDB:
        if (!solver || !*solver)
            return hr_error(HR_EINVAL, "%s: a perf-db needs a solver name (--solver ConvAsm1x1U)", path);
        return data_perfdb_load(path, solver, opts, tune);
    case DATA_SOURCE_TABLE: {
        const char *schema = opts ? opts->schema : NULL;
        while (schema && (*schema == ' ' || *schema == '\t' || *schema == '\n')) schema++;
        data_table_opts to = {.log = opts ? opts->log : NULL, .threads = opts ? opts->threads : 0,
                              .strict = opts ? opts->strict : 0};
        if (schema && *schema == '{') to.schema_json = schema;
        else if (schema) to.schema_path = schema;
        return data_table_load(path, &to, sel);
    }
    case DATA_SOURCE_FDB: {
        int found, rc = data_fdb_load(path, opts, sel);
        if (!rc && (rc = data_vendor_attach(*sel, path, opts ? opts->threads : 0, &found))) {
            data_select_free(*sel);
            *sel = NULL;
        }
        if (!rc && found && opts && opts->log)
            hr_log_printf(opts->log, HR_LOG_INFO, "%s: the vendor heuristic's ranking recorded beside it is read\n", path);
        return rc;
    }
    }
    return HR_EINVAL;
}
