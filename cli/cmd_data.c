/* heurist data info|cache: look at a database, or parse it once into a dataset cache. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "data/data.h"
#include "data/table.h"

static void print_skips(const data_skips *s)
{
    if (!s->total) {
        printf("  skipped          0\n");
        return;
    }
    printf("  skipped          %ld\n", s->total);
    for (int r = 0; r < s->n_reasons; r++)
        printf("    %-28s %8ld  (first at %ld)\n", s->reason[r], s->count[r], s->first_line[r]);
}

static void print_categories(const data_problem *p, int n)
{
    long dir[DATA_DIR_COUNT] = {0}, dt[DATA_DTYPE_COUNT] = {0}, lay[DATA_LAYOUT_COUNT] = {0}, d3 = 0;
    long prec[DATA_PRECISION_COUNT] = {0}, fp32 = 0;
    for (int i = 0; i < n; i++) {
        dir[p[i].direction]++;
        dt[p[i].dtype]++;
        lay[p[i].layout]++;
        d3 += p[i].f[DATA_FIELD_SPATIAL_DIM] == 3;
        if (p[i].dtype == DATA_DTYPE_FP32) prec[p[i].precision]++, fp32++;
    }
    printf("  direction       ");
    for (int i = 0; i < DATA_DIR_COUNT; i++) printf(" %s %ld (%.1f%%)", data_direction_names[i], dir[i], 100.0 * dir[i] / n);
    printf("\n  data type       ");
    for (int i = 0; i < DATA_DTYPE_COUNT; i++)
        if (dt[i]) printf(" %s %ld (%.1f%%)", data_dtype_names[i], dt[i], 100.0 * dt[i] / n);
    if (fp32) {
        printf("\n  FP32 precision  ");
        for (int i = 0; i < DATA_PRECISION_COUNT; i++)
            if (prec[i]) printf(" %s %ld", data_precision_names[i], prec[i]);
    }
    printf("\n  layout          ");
    for (int i = 0; i < DATA_LAYOUT_COUNT; i++)
        if (lay[i]) printf(" %s %ld", data_layout_names[i], lay[i]);
    printf("\n  spatial          2-D %ld, 3-D %ld\n", n - d3, d3);
    int *group = malloc((size_t)n * sizeof *group);
    int ng = 0;
    if (group && data_groups_compute(p, n, group, &ng) == HR_OK) printf("  geometries       %d distinct\n", ng);
    free(group);
}

typedef struct kcount {
    int k;
    long wins;
} kcount;

static int cmp_kcount(const void *a, const void *b)
{
    const kcount *x = a, *y = b;
    if (x->wins != y->wins) return x->wins > y->wins ? -1 : 1;
    return x->k - y->k;
}

static void info_select(const char *path, const data_select *ds)
{
    printf("%s: find-db (kernel selection)\n", path);
    printf("  lines            %ld\n", ds->lines);
    printf("  problems         %d\n", ds->n);
    printf("  kernels          %d\n", ds->n_kernels);
    print_skips(&ds->skips);
    long measured = 0;
    kcount *kc = calloc((size_t)ds->n_kernels, sizeof *kc);
    long *applicable = calloc((size_t)ds->n_kernels, sizeof *applicable);
    if (!kc || !applicable) {
        free(kc);
        free(applicable);
        return;
    }
    for (int k = 0; k < ds->n_kernels; k++) kc[k].k = k;
    double gap_sum = 0;
    long gap_n = 0, close3 = 0;
    for (int i = 0; i < ds->n; i++) {
        const float *t = ds->runtime + (size_t)i * (size_t)ds->n_kernels;
        float best = INFINITY, second = INFINITY;
        for (int k = 0; k < ds->n_kernels; k++) {
            if (!isfinite(t[k])) continue;
            measured++;
            applicable[k]++;
            if (t[k] < best) {
                second = best;
                best = t[k];
            } else if (t[k] < second) {
                second = t[k];
            }
        }
        int b = data_select_best(ds, i);
        if (b >= 0) kc[b].wins++;
        if (isfinite(second)) {
            gap_sum += second / best - 1;
            gap_n++;
            close3 += second / best - 1 < 0.034;
        }
    }
    printf("  kernels/problem  %.2f measured on average\n", (double)measured / ds->n);
    if (gap_n)
        printf("  runner-up gap    mean %.1f%%; within 3.4%% of the fastest in %.1f%% of problems\n",
               100 * gap_sum / gap_n, 100.0 * close3 / gap_n);
    print_categories(ds->problems, ds->n);
    qsort(kc, (size_t)ds->n_kernels, sizeof *kc, cmp_kcount);
    printf("  label distribution (fastest kernel):\n");
    long shown = 0;
    int top = ds->n_kernels < 12 ? ds->n_kernels : 12;
    for (int r = 0; r < top; r++) {
        printf("    %-36s %7ld  %5.1f%%   measured in %ld\n", ds->kernels[kc[r].k], kc[r].wins,
               100.0 * kc[r].wins / ds->n, applicable[kc[r].k]);
        shown += kc[r].wins;
    }
    if (top < ds->n_kernels)
        printf("    %-36s %7ld  %5.1f%%   (%d kernels)\n", "others", ds->n - shown, 100.0 * (ds->n - shown) / ds->n,
               ds->n_kernels - top);
    free(kc);
    free(applicable);
}

static void info_table(const char *path, const data_select *ds)
{
    const data_table *t = ds->table;
    const data_table_spec *s = &t->spec;
    printf("%s: benchmark table (kernel selection)\n", path);
    printf("  lines            %ld\n", ds->lines);
    printf("  problems         %d (%d problem and %d hardware columns)\n", ds->n, s->n_problem, s->n_hardware);
    printf("  configurations   %d distinct (%d kernel columns)\n", ds->n_kernels, s->n_kernel);
    printf("  measure          %s, %s is better (cost = %s)\n", s->measure, s->higher_better ? "higher" : "lower",
           s->higher_better ? "1 / measure" : "measure");
    printf("  duplicates       %ld pairs merged (policy %s)\n", t->duplicates,
           (const char *const[]){"median", "min", "mean", "error"}[s->duplicates]);
    if (t->group) {
        long *count = calloc((size_t)t->n_group_names, sizeof *count);
        for (int i = 0; count && i < ds->n; i++) count[t->group[i]]++;
        printf("  groups           %d (column %s):", t->n_group_names, s->group);
        for (int g = 0; count && g < t->n_group_names; g++) printf(" %s %ld", t->group_names[g], count[g]);
        printf("\n");
        free(count);
    }
    print_skips(&ds->skips);
    double *cand = malloc((size_t)ds->n * sizeof *cand), *spread = malloc((size_t)ds->n * sizeof *spread);
    double *gap = malloc((size_t)ds->n * sizeof *gap);
    kcount *kc = calloc((size_t)ds->n_kernels, sizeof *kc);
    if (!cand || !spread || !gap || !kc) {
        free(cand), free(spread), free(gap), free(kc);
        return;
    }
    int n_gap = 0;
    for (int k = 0; k < ds->n_kernels; k++) kc[k].k = k;
    for (int i = 0; i < ds->n; i++) {
        const float *c = ds->runtime + (size_t)i * (size_t)ds->n_kernels;
        double best = INFINITY, second = INFINITY, worst = 0;
        int m = 0;
        for (int k = 0; k < ds->n_kernels; k++) {
            if (!isfinite(c[k])) continue;
            m++;
            if (c[k] > worst) worst = c[k];
            if (c[k] < best) second = best, best = c[k];
            else if (c[k] < second) second = c[k];
        }
        cand[i] = m;
        spread[i] = worst / best;
        if (isfinite(second)) gap[n_gap++] = second / best;
        int b = data_select_best(ds, i);
        if (b >= 0) kc[b].wins++;
    }
    double lo = eval_quantile(cand, ds->n, 0), med = eval_quantile(cand, ds->n, 0.5), hi = eval_quantile(cand, ds->n, 1);
    printf("  candidates       min %.0f, median %.0f, max %.0f configurations measured per problem\n", lo, med, hi);
    printf("  spread           worst / best cost per problem: median %.3g, p90 %.3g\n", eval_quantile(spread, ds->n, 0.5),
           eval_quantile(spread, ds->n, 0.9));
    if (n_gap)
        printf("  runner-up gap    second-best / best cost: median %.4f, p10 %.4f\n", eval_quantile(gap, n_gap, 0.5),
               eval_quantile(gap, n_gap, 0.1));
    if (ds->vendor_rank) printf("  vendor ranking   column %s\n", s->vendor);
    qsort(kc, (size_t)ds->n_kernels, sizeof *kc, cmp_kcount);
    int top = ds->n_kernels < 8 ? ds->n_kernels : 8;
    printf("  most often best:\n");
    for (int r = 0; r < top; r++)
        printf("    %-56s %7ld  %5.1f%%\n", ds->kernels[kc[r].k], kc[r].wins, 100.0 * kc[r].wins / ds->n);
    free(cand), free(spread), free(gap), free(kc);
}

static void info_tune(const char *path, const data_tune *dt)
{
    printf("%s: perf-db (tuning parameters of %s)\n", path, dt->solver);
    printf("  problems         %d\n", dt->n);
    printf("  parameters       %d\n", dt->length);
    print_skips(&dt->skips);
    const data_constraint *con = data_constraint_find(dt->solver);
    if (con) {
        int bad = 0;
        for (int i = 0; i < dt->n; i++)
            bad += !con->valid_prefix(&dt->problems[i], dt->values + (size_t)i * (size_t)dt->length, dt->length);
        printf("  validity rules   %s: %d of %d sequences valid\n", dt->solver, dt->n - bad, dt->n);
    } else {
        printf("  validity rules   none known for %s\n", dt->solver);
    }
    print_categories(dt->problems, dt->n);
    printf("  value vocabulary per position:\n");
    for (int j = 0; j < dt->length; j++) {
        printf("    %-18s %2d values:", dt->param_names[j], dt->vocab_size[j]);
        for (int v = 0; v < dt->vocab_size[j]; v++) printf(" %d", dt->vocab[j][v]);
        printf("\n");
    }
}

static const cli_opt data_opts[] = {
    CLI_OPT_DATA,
    {"solver", "S", "solver whose parameters a perf-db provides (perf-db only)"},
    {"out", "F.h5|PREFIX", "cache: where the dataset cache is written; split: PREFIX.train.csv.gz and PREFIX.test.csv.gz (required for both)"},
    {"strict", NULL, "a line that cannot be read is an error rather than skipped and counted"},
    {"share", "F", "split: the share of the problems (of the groups with --group-by) held out, (0, 1) (default 0.2)"},
    {"seed", "N", "split: seed of the held-out share (default 0)"},
    {"group-by", "problem|COLUMN", "split: what is held out whole, a problem or each value of COLUMN (default: the schema's group column, else problem)"},
    {"hold", "COLUMN=V1,V2,...", "split: hold out every problem whose COLUMN is one of the values (instead of --share)"},
    {"quiet", NULL, "only errors on stderr"},
    CLI_OPT_END,
};

const cli_spec cli_data_spec = {
    "heurist data info --data FILE [--solver S] [--strict]\n"
    "       heurist data cache --data FILE [--solver S] --out F.h5\n"
    "       heurist data split --data TABLE [--schema JSON] [--share F --seed N [--group-by COLUMN] | --hold COLUMN=V,...] --out PREFIX",
    "info: what a database holds (problems, kernels or parameters, skipped lines by reason, label\n"
    "distribution). cache: parses it once into a versioned HDF5 dataset that loads faster. split: a benchmark\n"
    "table's problems into a training table and a held-out table, every row as written, each with its schema (and\n"
    "capability file) beside it.",
    data_opts,
    NULL,
};

/* The text of --schema (inline JSON or a file), else of FILE.schema.json beside the table (malloc'd in *out). */
static int schema_text(const char *table, const char *schema, char **out)
{
    size_t len;
    while (schema && (*schema == ' ' || *schema == '\n' || *schema == '\t')) schema++;
    if (schema && *schema == '{') return (*out = hr_strdup(schema)) ? HR_OK : HR_ENOMEM;
    if (schema) return hr_file_read_all(schema, out, &len);
    char *path = data_table_sidecar(table, ".schema.json");
    if (!path) return HR_ENOMEM;
    int rc = hr_file_exists(path) ? hr_file_read_all(path, out, &len)
                                  : hr_error(HR_EINVAL, "%s: no schema: %s does not exist (write it beside the table, "
                                             "or give --schema)", table, path);
    free(path);
    return rc;
}

/* heurist data split: the table's problems into PREFIX.train and PREFIX.test tables, each with the schema and the
 * capability file (when the table has one) beside it. */
static int data_split_cmd(const cli_args *a, const char *table)
{
    const char *prefix = cli_need(a, "data split", "out"), *hold = cli_get(a, "hold"), *by = cli_get(a, "group-by");
    if (!prefix) return 2;
    if (!data_table_is_table(table)) {
        cli_complain("heurist data split: --data %s: not a benchmark table (.csv or .tsv, optionally .gz or .bz2)",
                table);
        return 2;
    }
    if (hold && (cli_has(a, "share") || cli_has(a, "seed") || by)) {
        cli_complain("heurist data split: --hold names what is held out: give it without --share, --seed or --group-by");
        return 2;
    }
    data_table_split_opts o = {.share = 0.2};
    long long seed;
    if (cli_get_int(a, "seed", 0, 0, LLONG_MAX, &seed)) return 2;
    o.seed = (uint64_t)seed;
    if (cli_has(a, "share")) {
        char *end;
        const char *v = cli_get(a, "share");
        o.share = strtod(v, &end);
        if (end == v || *end || !(o.share > 0 && o.share < 1)) {
            cli_complain("heurist data split: --share '%s': expected a number in (0, 1)", v);
            return 2;
        }
    }
    char *values = NULL, *hv[256];
    if (hold) {
        const char *eq = strchr(hold, '=');
        if (!eq || eq == hold || !eq[1]) {
            cli_complain("heurist data split: --hold '%s': expected COLUMN=V1,V2,...", hold);
            return 2;
        }
        if (!(values = hr_strdup(hold))) return cli_fail("data split");
        values[eq - hold] = '\0';
        o.hold_column = values;
        for (char *p = values + (eq - hold) + 1, *save = NULL, *t; (t = strtok_r(p, ",", &save)) && o.n_hold < 256; p = NULL)
            hv[o.n_hold++] = t;
        o.hold_values = hv;
    }
    char *schema = NULL;
    int rc = schema_text(table, cli_get(a, "schema"), &schema);
    data_table_spec spec;
    memset(&spec, 0, sizeof spec);
    if (!rc) rc = data_table_spec_from_json(schema, table, &spec);
    if (!rc && !hold) o.group_column = by && strcmp(by, "problem") != 0 ? by : by ? NULL : spec.group;
    o.schema_json = schema;
    /* the outputs: the tables, then their schemas and capability files */
    const int tsv = strstr(table, ".tsv") != NULL;
    char *caps = data_table_sidecar(table, ".caps.json"), paths[6][4096];
    const char *const part[2] = {"train", "test"};
    for (int i = 0; i < 2; i++) {
        snprintf(paths[i], sizeof paths[i], "%s.%s.%s.gz", prefix, part[i], tsv ? "tsv" : "csv");
        snprintf(paths[2 + i], sizeof paths[2 + i], "%s.%s.schema.json", prefix, part[i]);
        snprintf(paths[4 + i], sizeof paths[4 + i], "%s.%s.caps.json", prefix, part[i]);
    }
    const int with_caps = caps && hr_file_exists(caps);
    cli_inputs in = {0};
    cli_inputs_add_data(&in, table, cli_get(a, "schema"), NULL);
    int bad = rc != 0;
    for (int i = 0; i < (with_caps ? 6 : 4) && !bad; i++) bad = cli_check_output("data split", "out", paths[i], &in);
    cli_inputs_free(&in);
    data_table_split_counts n;
    if (!bad) {
        o.train_path = paths[0];
        o.test_path = paths[1];
        rc = data_table_split(table, &o, &n);
    }
    for (int i = 0; !bad && !rc && i < 2; i++) rc = hr_file_write_atomic(paths[2 + i], schema, strlen(schema));
    char *caps_text = NULL;
    size_t caps_len = 0;
    if (!bad && !rc && with_caps) rc = hr_file_read_all(caps, &caps_text, &caps_len);
    for (int i = 0; !bad && !rc && with_caps && i < 2; i++) rc = hr_file_write_atomic(paths[4 + i], caps_text, caps_len);
    if (!bad && !rc)
        printf("%ld problems: %ld training (%ld rows) in %s, %ld held out (%ld rows) in %s; %s\n",
               n.problems[0] + n.problems[1], n.problems[0], n.rows[0], paths[0], n.problems[1], n.rows[1], paths[1],
               hold ? hold : o.group_column ? "whole groups" : "by problem");
    if (!bad && !rc && !hold)
        printf("held out %d of %d %s%s%s, seed %llu\n", n.held_units, n.units, o.group_column ? "values of " : "problems",
               o.group_column ? o.group_column : "", "", (unsigned long long)o.seed);
    free(caps_text);
    free(caps);
    free(schema);
    free(values);
    data_table_spec_free(&spec);
    if (bad) return 2;
    return rc ? cli_fail("data split") : 0;
}

int cli_cmd_data(int argc, char **argv)
{
    cli_args a;
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        cli_help_print(stdout, &cli_data_spec);
        return 0;
    }
    if (argc < 1 || (strcmp(argv[0], "info") != 0 && strcmp(argv[0], "cache") != 0 && strcmp(argv[0], "split") != 0)) {
        cli_complain("heurist data: expected info, cache or split (see heurist data --help)");
        return 2;
    }
    int prc = cli_args_parse(argc - 1, argv + 1, &cli_data_spec, &a);
    if (prc) return cli_args_exit(prc);
    const char *path = cli_need(&a, "data", "data");
    if (!path) return 2;
    if (strcmp(argv[0], "split") == 0) return data_split_cmd(&a, path);
    const char *out = NULL;
    if (strcmp(argv[0], "cache") == 0) {
        cli_inputs in = {0};
        cli_inputs_add_data(&in, path, cli_get(&a, "schema"), NULL);
        int bad = !(out = cli_need(&a, "data cache", "out")) || cli_check_output("data cache", "out", out, &in);
        cli_inputs_free(&in);
        if (bad) return 2;
    }
    hr_log log = hr_log_stderr(cli_has(&a, "quiet") ? HR_LOG_ERROR : HR_LOG_WARN);
    data_load_opts opts = {.strict = cli_has(&a, "strict"), .log = &log, .schema = cli_get(&a, "schema")};
    if (cli_get_precisions(&a, "data", &opts.precisions)) return 2;
    data_select *sel;
    data_tune *tune;
    double t0 = hr_now();
    if (data_load(path, cli_get(&a, "solver"), &opts, &sel, &tune)) return cli_fail("data");
    double secs = hr_now() - t0;
    int rc = 0;
    if (!out) {
        if (sel && sel->table) info_table(path, sel);
        else if (sel) info_select(path, sel);
        else info_tune(path, tune);
        printf("  loaded in        %.2f s, peak memory %.0f MB\n", secs, hr_peak_rss() / 1e6);
    } else if (sel ? data_cache_write_select(out, sel) : data_cache_write_tune(out, tune)) {
        rc = cli_fail("data cache");
    } else {
        printf("wrote %s (%d problems)\n", out, sel ? sel->n : tune->n);
    }
    data_select_free(sel);
    data_tune_free(tune);
    return rc;
}
