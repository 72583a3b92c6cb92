/* heurist export: a trained model as a standalone C runtime, or a gbdt as LightGBM's text format. */
#include <string.h>

#include "cli/cli.h"
#include "export/export.h"

static const cli_opt export_opts[] = {
    {"model", "MODEL.h5", "the saved model (required)"},
    {"format", "c|lightgbm", "c: a standalone C runtime; lightgbm: a one-booster gbdt in LightGBM's text format (required)"},
    {"out", "PATH", "c: the folder for PREFIX.c and PREFIX.h; lightgbm: the model file (required)"},
    {"prefix", "NAME", "c: the runtime's file and symbol prefix (default heurist_model)"},
    {"guard", "M", "c: PREFIX_select_key_vendor (a model of a find-db) or PREFIX_rank_vendor (of a table), which take the vendor's ranking and keep the vendor's first pick unless the model's score beats it by M; PREFIX_tune_vendor (a tune model of a table), which keeps the vendor's first pick unless the decoded configuration's log-probability beats the pick's by M"},
    {"guard-top", "N", "c: PREFIX_select_key_vendor or PREFIX_rank_vendor pick among the vendor's first N candidates only (0: any kernel; not a tune model's)"},
    CLI_OPT_END,
};

const cli_spec cli_export_spec = {
    "heurist export --model MODEL.h5 --format c|lightgbm --out PATH [--prefix NAME] [--guard M] [--guard-top N]",
    "Writes a trained model as a standalone C runtime (every family) or a gbdt with one booster in\n"
    "LightGBM's text format.",
    export_opts,
    NULL,
};

int cli_cmd_export(int argc, char **argv)
{
    cli_args a;
    int prc = cli_args_parse(argc, argv, &cli_export_spec, &a);
    if (prc) return cli_args_exit(prc);
    const char *mpath = cli_need(&a, "export", "model"), *format = cli_need(&a, "export", "format");
    const char *out = cli_need(&a, "export", "out");
    float guard;
    int guard_top;
    if (!mpath || !format || !out || cli_get_guard(&a, "export", &guard, &guard_top)) return 2;
    if (strcmp(format, "c") && strcmp(format, "lightgbm")) {
        fprintf(stderr, "heurist export: --format '%s': expected c or lightgbm\n", format);
        return 2;
    }
    /* --format c writes PREFIX.c and PREFIX.h into the folder --out, lightgbm the file --out: neither may be the
     * model */
    cli_inputs in = {0};
    cli_inputs_add(&in, "--model", mpath);
    const char *prefix = cli_get(&a, "prefix") ? cli_get(&a, "prefix") : "heurist_model";
    char c_name[1024], h_name[1024];
    snprintf(c_name, sizeof c_name, "%s.c", prefix);
    snprintf(h_name, sizeof h_name, "%s.h", prefix);
    int bad = strcmp(format, "c") == 0 ? cli_check_output_in("export", "out", out, c_name, &in) ||
                                             cli_check_output_in("export", "out", out, h_name, &in)
                                       : cli_check_output("export", "out", out, &in);
    cli_inputs_free(&in);
    if (bad) return 2;
    model *m;
    if (model_load(mpath, &m)) return cli_fail("export");
    int rc = 0;
    m->select_guard = guard;
    m->select_guard_top = guard_top;
    if (strcmp(format, "c") == 0) {
        char c_path[4096], h_path[4096];
        if (export_c_write(m, mpath, out, prefix)) rc = cli_fail("export");
        else if (!hr_path_join(c_path, sizeof c_path, out, c_name) && !hr_path_join(h_path, sizeof h_path, out, h_name))
            printf("wrote %s and %s\n", c_path, h_path);
    } else {
        int trees = 0;
        if (guard > 0 || guard_top > 0) {
            fprintf(stderr, "heurist export: --guard and --guard-top are options of --format c\n");
            rc = 2;
        } else if (export_lightgbm_check(m, mpath)) {
            fprintf(stderr, "heurist export: --format lightgbm: %s\n", hr_last_error());
            rc = 2;
        } else if (export_lightgbm_write(m, mpath, out, &trees)) {
            rc = cli_fail("export");
        } else {
            printf("wrote %s (LightGBM text model, %d trees)\n", out, trees);
        }
    }
    model_free(m);
    return rc;
}
