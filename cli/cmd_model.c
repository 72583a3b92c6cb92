/* heurist model info M.h5: what a model file holds (pipe_model_info), as text or JSON. */
#include <string.h>

#include "cli/cli.h"

static const cli_opt model_opts[] = {
    {"model", "MODEL.h5", "the model file (or give it after info)"},
    {"json", NULL, "the same as one JSON object (what train's report.json holds under \"model_info\")"},
    CLI_OPT_END,
};

const cli_spec cli_model_spec = {
    "heurist model info MODEL.h5 [--json]",
    "What a model file holds: its family, task and objective, the source it reads (a table's schema), its\n"
    "features by name, its kernels or parameters, its size in bytes and parameter count, a gbdt model's gain\n"
    "importance per feature, and the config and seed it was trained with.",
    model_opts,
    NULL,
};

int cli_cmd_model(int argc, char **argv)
{
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        cli_help_print(stdout, &cli_model_spec);
        return 0;
    }
    if (argc < 1 || strcmp(argv[0], "info") != 0) {
        cli_complain("heurist model: expected info (see heurist model --help)");
        return 2;
    }
    argc--, argv++;
    const char *path = argc >= 1 && strncmp(argv[0], "--", 2) != 0 ? argv[0] : NULL;
    if (path) argc--, argv++;
    cli_args a;
    int prc = cli_args_parse(argc, argv, &cli_model_spec, &a);
    if (prc) return cli_args_exit(prc);
    if (path && cli_get(&a, "model")) {
        cli_complain("heurist model info: give the model once (%s or --model)", path);
        return 2;
    }
    if (!path && !(path = cli_need(&a, "model info", "model"))) return 2;
    model *m;
    if (model_load(path, &m)) return cli_fail("model info");
    cJSON *info = pipe_model_info(m, path);
    int rc = 0;
    if (!info) {
        rc = cli_fail("model info");
    } else if (cli_has(&a, "json")) {
        char *s = cJSON_Print(info);
        if (s) printf("%s\n", s);
        else rc = cli_fail("model info");
        cJSON_free(s);
    } else {
        pipe_model_info_print(info, stdout);
    }
    cJSON_Delete(info);
    model_free(m);
    if (!rc && (fflush(stdout) != 0 || ferror(stdout))) rc = 1;
    return rc;
}
