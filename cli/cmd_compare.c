/* heurist compare: several families on exactly the same folds or split, one report (pipe_compare). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

static const cli_opt compare_opts[] = {
    CLI_OPT_DATA,
    CLI_OPT_SOURCES,
    CLI_OPT_GUARD,
    CLI_OPT_GROUP_BY,
    CLI_OPT_TASK,
    CLI_OPT_CAPS,
    CLI_OPT_SOLVER,
    {"models", "M1,M2,...", "model families to compare, at most 8 (required)"},
    {"config", "JSON", "options keyed by family, {\"gbdt\": {...}, \"reformer\": {...}} (default {})"},
    {"folds", "K", "GroupKFold with K folds, 2..1000 (give --folds or --split)"},
    {"split", "random:F[:seed=S]|none", "one seeded random hold-out (give --folds or --split); random:0 or none: every family trains on every problem, no validation rows, figures on the training problems"},
    CLI_OPT_SEED,
    {"out", "DIR", "folder for report.json, report.md and the figures (required; created)"},
    CLI_OPT_THREADS,
    CLI_OPT_VALID,
    CLI_OPT_QUIET,
    CLI_OPT_END,
};

const cli_spec cli_compare_spec = {
    "heurist compare --data FILE --models M1,M2 (--folds K | --split random:F) --out DIR [options]",
    "Trains and evaluates several model families on the same rows; writes DIR/report.json (one report\n"
    "object per family), DIR/report.md (tables and figures) and the figures, and prints the tables.\n"
    "Selection comparisons add two baseline rows: frequent (the most frequent fastest kernel of the\n"
    "problem's direction, data type and layout) and vendor (the vendor heuristic's pick, where a\n"
    "FILE.heuristic.txt[.bz2] beside the find-db records it, as heurist-collect writes). Tune comparisons on\n"
    "a benchmark table with a vendor column add the vendor row: the configuration the vendor ranks first.",
    compare_opts,
    NULL,
};

/* --models: known families, at least one. */
static int parse_models(const char *list, pipe_compare_spec *s)
{
    char *copy = hr_strdup(list);
    if (!copy) return cli_fail("compare");
    int rc = 0;
    for (char *tok = strtok(copy, ","); tok && !rc; tok = strtok(NULL, ",")) {
        const model_family *f = model_family_find(tok);
        if (!f) {
            cli_complain("heurist compare: --models: unknown model '%s' (available: %s)", tok, model_family_names());
            rc = 1;
        } else if (s->n_models == PIPE_COMPARE_MAX) {
            cli_complain("heurist compare: --models: more than %d models", PIPE_COMPARE_MAX);
            rc = 1;
        } else {
            s->fams[s->n_models++] = f;
        }
    }
    if (!rc && s->n_models == 0) {
        cli_complain("heurist compare: --models '%s' names no model (available: %s)", list, model_family_names());
        rc = 1;
    }
    free(copy);
    return rc;
}

/* --config keyed by family: every key a family, every value an object. */
static int parse_configs(const cJSON *cfg, pipe_compare_spec *s)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cfg)
    {
        if (!model_family_find(it->string)) {
            cli_complain("heurist compare: --config key '%s' is not a model family: the config is keyed by family, "
                         "{\"gbdt\": {...}} (available: %s)", it->string, model_family_names());
            return 1;
        }
        if (!cJSON_IsObject(it)) {
            cli_complain("heurist compare: --config '%s': expected a JSON object of that family's options", it->string);
            return 1;
        }
    }
    for (int m = 0; m < s->n_models; m++) s->configs[m] = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, s->fams[m]->name) : NULL;
    return 0;
}

int cli_cmd_compare(int argc, char **argv, const dist_comm *comm)
{
    return cli_job_compare(argc, argv, comm, stdout);
}

int cli_job_compare(int argc, char **argv, const dist_comm *comm, FILE *sink)
{
    cli_args a;
    int prc = cli_args_parse(argc, argv, &cli_compare_spec, &a);
    if (prc) return cli_args_exit(prc);
    cli_train_opts c;
    pipe_compare_spec s;
    memset(&s, 0, sizeof s);
    const char *models = NULL, *out = NULL;
    long long k = 0;
    if (cli_train_opts_parse(&a, "compare", 0, &c) || !(models = cli_need(&a, "compare", "models")) ||
        !(out = cli_need(&a, "compare", "out")) || (cli_has(&a, "folds") && cli_get_int(&a, "folds", 0, 2, 1000, &k)) ||
        parse_models(models, &s) || parse_configs(c.config, &s)) {
        cli_train_opts_free(&c);
        return 2;
    }
    if (cli_has(&a, "folds") == cli_has(&a, "split")) {
        cli_complain("heurist compare: give exactly one of --folds K or --split random:F");
        cli_train_opts_free(&c);
        return 2;
    }
    s.folds = (int)k;
    s.split = cli_get(&a, "split");
    double frac;
    uint64_t split_seed;
    if (s.split && data_split_spec_parse(s.split, &frac, &split_seed, c.seed)) {
        cli_train_opts_free(&c);
        return cli_fail("compare");
    }
    /* the output folder exists and is writable before any training, and none of the files written into it is an
     * input */
    cli_inputs in = {0};
    cli_train_opts_inputs(&a, &c, &in);
    int bad = 0;
    for (int f = 0; pipe_compare_files[f] && !bad; f++) bad = cli_check_output_in("compare", "out", out, pipe_compare_files[f], &in);
    cli_inputs_free(&in);
    if (!bad && hr_mkdir_p(out)) bad = cli_fail("compare");
    struct stat st;
    if (!bad && (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))) {
        cli_complain("heurist compare: --out %s: not a folder", out);
        bad = 1;
    } else if (!bad && access(out, W_OK | X_OK) != 0) {
        cli_complain("heurist compare: --out %s: folder is not writable", out);
        bad = 1;
    }
    if (bad) {
        cli_train_opts_free(&c);
        return 2;
    }
    pipe_opts o = cli_train_opts_pipe(&c);
    pipe_ranks rk = cli_ranks_of(comm);
    o.ranks = &rk;
    pipe_dataset d;
    if (cli_ranks_load(comm, &c, &d)) {
        cli_train_opts_free(&c);
        return cli_fail("compare");
    }
    static const char *const own[] = {"models", "folds", "split", NULL};
    if (cli_ranks_check(comm, "compare", &a, &c, own, &d, NULL)) {
        pipe_dataset_free(&d);
        cli_train_opts_free(&c);
        return cli_fail(NULL);
    }
    /* the baselines the data has a row for (pipe_baselines): the most frequent fastest kernel, the vendor's own
     * heuristic where one is recorded */
    const model_family *baselines[PIPE_COMPARE_MAX];
    int nb = pipe_baselines(&d, baselines);
    for (int b = 0; b < nb; b++) {
        int listed = 0;
        for (int m = 0; m < s.n_models; m++) listed |= s.fams[m] == baselines[b];
        if (!listed && s.n_models < PIPE_COMPARE_MAX) s.fams[s.n_models++] = baselines[b];
    }
    char *summary = NULL;
    int rc = 0;
    if (pipe_compare(&d, &s, &o, out, cli_print_fold, sink, &summary)) rc = cli_fail("compare");
    char md[4096], json[4096];
    if (!rc && summary && sink && !hr_path_join(md, sizeof md, out, "report.md") &&
        !hr_path_join(json, sizeof json, out, "report.json"))
        fprintf(sink, "\n%s\nreport: %s, %s\n", summary, md, json);
    free(summary);
    pipe_dataset_free(&d);
    cli_train_opts_free(&c);
    return rc;
}
