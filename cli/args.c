/* What the commands share: option parsing and help, the training options, output checks. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/json.h"

void cli_help_print(FILE *f, const cli_spec *spec)
{
    fprintf(f, "usage: %s\n\n%s\n\noptions:\n", spec->usage, spec->about);
    for (const cli_opt *o = spec->opts; o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
        /* a long option's text starts on the next line, under the others' */
        if (strlen(left) > 26) fprintf(f, "  %s\n  %-26s %s\n", left, "", o->help);
        else fprintf(f, "  %-26s %s\n", left, o->help);
    }
    fprintf(f, "  %-26s %s\n", "--help", "this text");
    if (spec->notes) fprintf(f, "\n%s\n", spec->notes);
}

/* After the help of a command that takes --config: the family options it reads, of the family named by
 * --model (or --models) when one is given, else of every family. */
static void cli_help_families(FILE *f, const cli_spec *spec, int argc, char **argv)
{
    int takes_config = 0;
    for (const cli_opt *o = spec->opts; o->name; o++) takes_config |= strcmp(o->name, "config") == 0;
    if (!takes_config) return;
    const char *named = NULL;
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], "--model") == 0 || strcmp(argv[i], "--models") == 0) named = argv[i + 1];
    int keyed = strncmp(spec->usage, "heurist compare", 15) == 0;
    fprintf(f, "\nfamily options (--config JSON%s):\n", keyed ? ", keyed by family: {\"gbdt\": {...}}" : "");
    const model_family *fams[CLI_MAX_FAMILIES];
    int n = cli_families_with_options(fams);
    for (int i = 0; i < n; i++) {
        if (named && !strstr(named, fams[i]->name)) continue;
        fprintf(f, "\n%s:\n", fams[i]->name);
        model_config_print(fams[i], f);
    }
}

int cli_families_with_options(const model_family **out)
{
    int n = 0;
    for (int i = 0; model_family_at(i) && n < CLI_MAX_FAMILIES; i++) {
        const model_family *fam = model_family_at(i);
        hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
        if (!fam->config_options || !fam->config_options(rows)) continue; /* the baselines take no options */
        int at = n++;
        while (at > 0 && strcmp(out[at - 1]->name, fam->name) > 0) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = fam;
    }
    return n;
}

int cli_args_parse(int argc, char **argv, const cli_spec *spec, cli_args *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_help_print(stdout, spec);
            cli_help_families(stdout, spec, argc, argv);
            return CLI_HELP;
        }
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0) {
            cli_complain("heurist: unexpected argument '%s' (options are --name value)", arg);
            return CLI_ERROR;
        }
        const char *name = arg + 2;
        const cli_opt *opt = NULL;
        for (const cli_opt *o = spec->opts; o->name && !opt; o++)
            if (strcmp(name, o->name) == 0) opt = o;
        if (!opt) {
            cli_complain("heurist: unknown option '%s'", arg);
            return CLI_ERROR;
        }
        if (out->n == CLI_MAX_OPTS) {
            cli_complain("heurist: too many options");
            return CLI_ERROR;
        }
        out->name[out->n] = opt->name;
        if (opt->value) {
            if (i + 1 >= argc) {
                cli_complain("heurist: option '%s' needs a value", arg);
                return CLI_ERROR;
            }
            out->value[out->n] = argv[++i];
        }
        out->n++;
    }
    return 0;
}

int cli_args_exit(int parse_rc)
{
    return parse_rc == CLI_HELP ? 0 : 2;
}

const char *cli_get(const cli_args *a, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->name[i], name) == 0) v = a->value[i] ? a->value[i] : "";
    return v;
}

int cli_has(const cli_args *a, const char *name)
{
    return cli_get(a, name) != NULL;
}

const char *cli_need(const cli_args *a, const char *cmd, const char *name)
{
    const char *v = cli_get(a, name);
    if (!v) cli_complain("heurist %s: --%s is required", cmd, name);
    return v;
}

int cli_get_int(const cli_args *a, const char *name, long long def, long long lo, long long hi, long long *out)
{
    const char *v = cli_get(a, name);
    *out = def;
    if (!v) return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi) {
        cli_complain("heurist: --%s '%s': expected an integer from %lld to %lld", name, v, lo, hi);
        return 1;
    }
    *out = x;
    return 0;
}

int cli_get_valid_fraction(const cli_args *a, double *out)
{
    const char *v = cli_get(a, "valid-fraction");
    *out = 0;
    if (!v) return 0;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= 0 && x < 1)) {
        cli_complain("heurist: --valid-fraction '%s': expected a number in [0, 1)", v);
        return 1;
    }
    *out = x > 0 ? x : -1;
    return 0;
}

int cli_get_config(const cli_args *a, const char *cmd, cJSON **out)
{
    const char *cfg = cli_get(a, "config");
    *out = NULL;
    if (!cfg) return 0;
    /* inline JSON (starting with '{'), or a path to a file holding it, as --schema */
    const char *s = cfg;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    cJSON *j = NULL;
    int rc;
    if (*s == '{') {
        rc = hr_json_parse_str(cfg, "--config", &j);
    } else {
        char *text;
        size_t len;
        rc = hr_file_read_all(cfg, &text, &len);
        if (!rc) {
            rc = hr_json_parse(text, len, cfg, &j);
            free(text);
        }
    }
    if (rc) {
        cli_complain("heurist %s: %s%s", cmd, *s == '{' ? "" : "--config ", hr_last_error());
        return 1;
    }
    if (!cJSON_IsObject(j)) {
        cli_complain("heurist %s: --config is neither a JSON object nor a file holding one: %.60s", cmd, cfg);
        cJSON_Delete(j);
        return 1;
    }
    *out = j;
    return 0;
}

void cli_inputs_add(cli_inputs *in, const char *opt, const char *path)
{
    if (!path || *path == '{' || in->n == CLI_MAX_INPUTS) return;
    char *o = hr_strdup(opt), *p = hr_strdup(path);
    if (!o || !p) {
        free(o);
        free(p);
        return;
    }
    in->opt[in->n] = o;
    in->path[in->n++] = p;
}

/* path with `strip` removed from its end when it ends so, then `add` appended; NULL when it does not end so. */
static char *path_swap(const char *path, const char *strip, const char *add)
{
    size_t n = strlen(path), k = strlen(strip);
    if (n < k || strcmp(path + n - k, strip) != 0) return NULL;
    char *p = hr_malloc(n - k + strlen(add) + 1);
    if (p) {
        memcpy(p, path, n - k);
        strcpy(p + n - k, add);
    }
    return p;
}

void cli_inputs_add_data(cli_inputs *in, const char *data, const char *schema, const char *caps)
{
    if (!data) return;
    cli_inputs_add(in, "--data", data);
    cli_inputs_add(in, "--schema", schema);
    cli_inputs_add(in, "--caps", caps);
    /* the files read from beside the data: the name without its compression and its table or find-db ending */
    static const char *const comp[] = {".gz", ".bz2", ""};
    static const char *const kind[] = {".csv", ".tsv", ".fdb.txt"};
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++) {
            char ending[32];
            snprintf(ending, sizeof ending, "%s%s", kind[k], comp[c]);
            char *base = path_swap(data, ending, "");
            if (!base) continue;
            /* a find-db's vendor sidecars: the TF32 class's (and every other data type's), the strict and
             * conversion classes' (data/vendor.c) */
            const char *side[5] = {k < 2 && !schema ? ".schema.json" : NULL, k < 2 && !caps ? ".caps.json" : NULL,
                                   k == 2 ? ".heuristic.txt" : NULL, k == 2 ? ".heuristic.strict.txt" : NULL,
                                   k == 2 ? ".heuristic.conversion.txt" : NULL};
            const char *what[5] = {"its schema", "its capability file", "its vendor sidecar", "its vendor sidecar",
                                   "its vendor sidecar"};
            for (int j = 0; j < 5; j++) {
                if (!side[j]) continue;
                char *p = path_swap(base, "", side[j]);
                if (p) cli_inputs_add(in, what[j], p);
                if (p && j >= 2) {
                    char *bz = path_swap(p, "", ".bz2");
                    if (bz) cli_inputs_add(in, what[j], bz);
                    free(bz);
                }
                free(p);
            }
            free(base);
            return;
        }
}

void cli_inputs_free(cli_inputs *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->opt[i]);
        free(in->path[i]);
    }
    in->n = 0;
}

/* 0, or 1 after a message when path resolves to one of the inputs */
static int output_is_input(const char *cmd, const char *opt, const char *path, const cli_inputs *in)
{
    for (int i = 0; in && i < in->n; i++)
        if (hr_file_same(path, in->path[i])) {
            cli_complain("heurist %s: --%s %s is the same file as %s %s: refusing to replace an input", cmd, opt, path,
                         in->opt[i], in->path[i]);
            return 1;
        }
    return 0;
}

int cli_check_output_in(const char *cmd, const char *opt, const char *dir, const char *name, const cli_inputs *in)
{
    char path[4096];
    if (hr_path_join(path, sizeof path, dir, name)) {
        cli_complain("heurist %s: --%s: %s", cmd, opt, hr_last_error());
        return 1;
    }
    return output_is_input(cmd, opt, path, in);
}

int cli_check_output(const char *cmd, const char *opt, const char *path, const cli_inputs *in)
{
    if (!path) return 0;
    if (!*path) {
        cli_complain("heurist %s: --%s: empty path", cmd, opt);
        return 1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        cli_complain("heurist %s: --%s %s: is a folder, expected a file path", cmd, opt, path);
        return 1;
    }
    if (output_is_input(cmd, opt, path, in)) return 1;
    char *dir = hr_strdup(path);
    if (!dir) return cli_fail(cmd);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int rc = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        cli_complain("heurist %s: --%s %s: folder %s does not exist", cmd, opt, path, dir);
        rc = 1;
    } else if (access(dir, W_OK | X_OK) != 0) {
        cli_complain("heurist %s: --%s %s: folder %s is not writable", cmd, opt, path, dir);
        rc = 1;
    }
    free(dir);
    return rc;
}

int cli_get_precisions(const cli_args *a, const char *cmd, int *out)
{
    *out = 0;
    const char *v = cli_get(a, "precision");
    if (v && data_precision_list_parse(v, out)) {
        cli_complain("heurist %s: %s", cmd, hr_last_error());
        return 1;
    }
    return 0;
}

int cli_get_guard(const cli_args *a, const char *cmd, float *margin, int *top)
{
    const char *v = cli_get(a, "guard");
    long long n;
    *margin = 0;
    *top = 0;
    if (cli_get_int(a, "guard-top", 0, 0, 1 << 15, &n)) return 1;
    *top = (int)n;
    if (!v) return 0;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= 0 && x < 1e30)) {
        cli_complain("heurist %s: --guard '%s': expected a finite number >= 0", cmd, v);
        return 1;
    }
    *margin = (float)x;
    return 0;
}

int cli_train_opts_parse(const cli_args *a, const char *cmd, int need_model, cli_train_opts *c)
{
    memset(c, 0, sizeof *c);
    c->log = hr_log_stderr(cli_has(a, "quiet") ? HR_LOG_WARN : HR_LOG_INFO);
    c->data = cli_need(a, cmd, "data");
    if (!c->data) return 1;
    c->task = cli_get(a, "task");
    if (c->task && strcmp(c->task, "select") && strcmp(c->task, "tune")) {
        cli_complain("heurist %s: --task '%s': expected select or tune", cmd, c->task);
        return 1;
    }
    c->solver = cli_get(a, "solver");
    c->schema = cli_get(a, "schema");
    c->caps = cli_get(a, "caps");
    c->group_by = cli_get(a, "group-by");
    if (cli_get_precisions(a, cmd, &c->precisions) || cli_get_guard(a, cmd, &c->guard, &c->guard_top)) return 1;
    c->sources = cli_get(a, "sources");
    c->source = cli_get(a, "source");
    if (need_model) {
        const char *m = cli_need(a, cmd, "model");
        if (!m) return 1;
        c->fam = model_family_find(m);
        if (!c->fam) {
            cli_complain("heurist %s: unknown --model '%s' (available: %s)", cmd, m, model_family_names());
            return 1;
        }
    }
    long long seed, threads;
    if (cli_get_int(a, "seed", 0, LLONG_MIN, LLONG_MAX, &seed) || cli_get_int(a, "threads", 0, 0, CLI_MAX_THREADS, &threads) ||
        cli_get_valid_fraction(a, &c->valid_fraction))
        return 1;
    c->seed = (uint64_t)seed;
    c->threads = hr_threads_resolve((int)threads);
    /* a split of 0 (random:0 or none) fits every row: no rows are held back for early stopping either, unless
     * --valid-fraction asks for them */
    double frac = 1;
    uint64_t split_seed;
    if (cli_get(a, "split") && data_split_spec_parse(cli_get(a, "split"), &frac, &split_seed, c->seed)) {
        cli_complain("heurist %s: %s", cmd, hr_last_error());
        return 1;
    }
    if (frac == 0 && !cli_has(a, "valid-fraction")) c->valid_fraction = -1;
    return cli_get_config(a, cmd, &c->config);
}

void cli_train_opts_inputs(const cli_args *a, const cli_train_opts *c, cli_inputs *in)
{
    cli_inputs_add_data(in, c->data, c->schema, c->caps);
    cli_inputs_add(in, "--sources", c->sources);
    const char *cfg = cli_get(a, "config");
    while (cfg && (*cfg == ' ' || *cfg == '\t' || *cfg == '\n' || *cfg == '\r')) cfg++;
    cli_inputs_add(in, "--config", cfg);
}

void cli_train_opts_free(cli_train_opts *c)
{
    cJSON_Delete(c->config);
    c->config = NULL;
}

pipe_opts cli_train_opts_pipe(const cli_train_opts *c)
{
    pipe_opts o;
    memset(&o, 0, sizeof o);
    o.seed = c->seed;
    o.threads = c->threads;
    o.log = &c->log;
    o.valid_fraction = c->valid_fraction;
    o.guard = c->guard;
    o.guard_top = c->guard_top;
    return o;
}

void cli_print_result(FILE *sink, const char *name, const pipe_result *r)
{
    if (!sink) return;
    char line[512];
    pipe_result_format(name, r, line, sizeof line);
    fprintf(sink, "%s\n", line);
}

void cli_print_fold(void *ctx, const char *name, int fold, int k, const pipe_result *r)
{
    FILE *sink = ctx;
    cli_print_result(sink, name, r);
    if (sink) fflush(sink);
}

int cli_complain(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hr_error(HR_EINVAL, "%s", msg);
    fprintf(stderr, "%s\n", msg);
    return 1;
}

int cli_fail(const char *context)
{
    if (context) fprintf(stderr, "heurist %s: %s\n", context, hr_last_error());
    else fprintf(stderr, "heurist: %s\n", hr_last_error());
    return 1;
}
