/* heurist compare: several families on exactly the same folds or split, one report. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeline/pipeline.h"
#include "pipeline/plot.h"

#define COMPARE_MAX_MODELS 8

static void md_select_table(FILE *f, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    fprintf(f, "| model | top1 | top5 | eff. mean | eff. median | eff. p10 | eff. min | unmeasured | train s | predict us | params | model bytes |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < nm; m++) {
        double v[11] = {0};
        for (int i = 0; i < nres[m]; i++) {
            const pipe_result *r = &res[m][i];
            double x[11] = {r->sel.top1, r->sel.top5, r->sel.efficiency_mean, r->sel.efficiency_median,
                            r->sel.efficiency_p10, r->sel.efficiency_min, r->sel.unmeasured_rate, r->train_seconds,
                            r->predict_us, (double)r->params, (double)r->model_bytes};
            for (int j = 0; j < 11; j++) v[j] += x[j] / nres[m];
        }
        fprintf(f, "| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.1f | %.2f | %.0f | %.0f |\n", names[m], v[0], v[1],
                v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
    }
}

static void md_tune_table(FILE *f, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    fprintf(f, "| model | param_accuracy | exact | valid | decode us | train s | predict us | params | model bytes |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < nm; m++) {
        double v[8] = {0};
        for (int i = 0; i < nres[m]; i++) {
            const pipe_result *r = &res[m][i];
            double x[8] = {r->tune.param_accuracy, r->tune.exact, r->tune.valid, r->decode_us, r->train_seconds,
                           r->predict_us, (double)r->params, (double)r->model_bytes};
            for (int j = 0; j < 8; j++) v[j] += x[j] / nres[m];
        }
        fprintf(f, "| %s | %.4f | %.4f | %.4f | %.1f | %.1f | %.2f | %.0f | %.0f |\n", names[m], v[0], v[1], v[2], v[3],
                v[4], v[5], v[6], v[7]);
    }
}

static void md_slices(FILE *f, int nm, const char *const *names, const pipe_result *const *res, const int *nres)
{
    fprintf(f, "\n### Top-1 by direction and data type\n\n| model |");
    for (int d = 0; d < DATA_DIR_COUNT; d++) fprintf(f, " %s |", data_direction_names[d]);
    int used[DATA_DTYPE_COUNT] = {0};
    for (int m = 0; m < nm; m++)
        for (int i = 0; i < nres[m]; i++)
            for (int t = 0; t < DATA_DTYPE_COUNT; t++) used[t] |= res[m][i].by_dtype[t].n > 0;
    for (int t = 0; t < DATA_DTYPE_COUNT; t++)
        if (used[t]) fprintf(f, " %s |", data_dtype_names[t]);
    fprintf(f, "\n|---|");
    for (int d = 0; d < DATA_DIR_COUNT; d++) fprintf(f, "---|");
    for (int t = 0; t < DATA_DTYPE_COUNT; t++)
        if (used[t]) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int m = 0; m < nm; m++) {
        fprintf(f, "| %s |", names[m]);
        for (int d = 0; d < DATA_DIR_COUNT; d++) {
            long n = 0, h = 0;
            for (int i = 0; i < nres[m]; i++) {
                n += res[m][i].by_direction[d].n;
                h += res[m][i].by_direction[d].top1;
            }
            fprintf(f, " %.4f |", n ? (double)h / n : NAN);
        }
        for (int t = 0; t < DATA_DTYPE_COUNT; t++) {
            if (!used[t]) continue;
            long n = 0, h = 0;
            for (int i = 0; i < nres[m]; i++) {
                n += res[m][i].by_dtype[t].n;
                h += res[m][i].by_dtype[t].top1;
            }
            fprintf(f, " %.4f |", n ? (double)h / n : NAN);
        }
        fprintf(f, "\n");
    }
}

int cli_cmd_compare(int argc, char **argv)
{
    static const char *const spec[] = {"data", "task", "solver", "models", "config", "folds", "split", "seed", "out",
                                       "threads", "valid-fraction", "quiet!", NULL};
    cli_args a;
    if (cli_args_parse(argc, argv, spec, &a)) return 2;
    const char *data = cli_need(&a, "compare", "data"), *models = cli_need(&a, "compare", "models");
    const char *out = cli_need(&a, "compare", "out");
    long long k, seed, threads;
    double valid_fraction;
    if (!data || !models || !out || cli_get_int(&a, "folds", 0, &k) || cli_get_int(&a, "seed", 0, &seed) ||
        cli_get_int(&a, "threads", 0, &threads) || cli_get_valid_fraction(&a, &valid_fraction))
        return 2;
    if ((k > 0) == (cli_get(&a, "split") != NULL)) {
        fprintf(stderr, "heurist compare: give exactly one of --folds K or --split random:F\n");
        return 2;
    }
    hr_log log = hr_log_stderr(cli_has(&a, "quiet") ? HR_LOG_WARN : HR_LOG_INFO);
    /* family list */
    char *list = hr_strdup(models);
    const char *names[COMPARE_MAX_MODELS];
    const model_family *fams[COMPARE_MAX_MODELS];
    int nm = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (nm == COMPARE_MAX_MODELS || !(fams[nm] = model_family_find(tok))) {
            fprintf(stderr, "heurist compare: unknown or too many models at '%s' (available: %s)\n", tok, model_family_names());
            free(list);
            return 2;
        }
        names[nm++] = tok;
    }
    /* --config may hold one object per family: {"gbdt": {...}, "reformer": {...}} */
    cJSON *cfg = NULL;
    if (cli_get(&a, "config")) {
        cfg = cJSON_Parse(cli_get(&a, "config"));
        if (!cJSON_IsObject(cfg)) {
            fprintf(stderr, "heurist compare: --config must be a JSON object keyed by model name\n");
            free(list);
            cJSON_Delete(cfg);
            return 2;
        }
    }
    if (hr_mkdir_p(out)) {
        free(list);
        cJSON_Delete(cfg);
        return cli_fail("compare");
    }
    pipe_dataset d;
    if (pipe_dataset_load(data, cli_get(&a, "task"), cli_get(&a, "solver"), &log, &d)) {
        free(list);
        cJSON_Delete(cfg);
        return cli_fail("compare");
    }
    int nfold = k > 0 ? (int)k : 1;
    pipe_result *res[COMPARE_MAX_MODELS] = {0};
    int nres[COMPARE_MAX_MODELS] = {0};
    cJSON *report = cJSON_CreateArray();
    int rc = 0;
    char desc[64] = "";
    data_split split;
    memset(&split, 0, sizeof split);
    if (k <= 0) {
        double frac;
        uint64_t sseed;
        if (data_split_spec_parse(cli_get(&a, "split"), &frac, &sseed, (uint64_t)seed) ||
            data_split_random(d.n, frac, sseed, &split))
            rc = cli_fail("compare");
        snprintf(desc, sizeof desc, "random:%g:seed=%llu", frac, (unsigned long long)sseed);
    }
    for (int m = 0; m < nm && !rc; m++) {
        res[m] = calloc((size_t)nfold, sizeof *res[m]);
        pipe_opts o = {(uint64_t)seed, hr_threads_resolve((int)threads), &log,
                       cfg ? cJSON_GetObjectItem(cfg, names[m]) : NULL, NULL, NULL, 0, NULL, 0, valid_fraction};
        if (!(fams[m]->tasks & d.task)) {
            fprintf(stderr, "heurist compare: model '%s' does not support this task\n", names[m]);
            rc = 2;
            break;
        }
        if (k > 0) {
            if (cli_run_folds(&d, fams[m], nfold, &o, res[m])) rc = cli_fail("compare");
            else cJSON_AddItemToArray(report, pipe_report_cv(&d, names[m], nfold, (uint64_t)seed, res[m]));
        } else {
            hr_log_printf(&log, HR_LOG_INFO, "compare: training %s (%d train / %d test)\n", names[m], split.n_train,
                          split.n_test);
            if (pipe_run(&d, &split, fams[m], &o, &res[m][0], NULL)) rc = cli_fail("compare");
            else cJSON_AddItemToArray(report, pipe_report_object(&d, names[m], desc, &res[m][0]));
        }
        nres[m] = rc ? 0 : nfold;
    }
    if (!rc) {
        char path[1024];
        snprintf(path, sizeof path, "%s/report.json", out);
        if (pipe_json_write(path, report)) rc = cli_fail("compare");
        snprintf(path, sizeof path, "%s/report.md", out);
        char *tmp = hr_file_tmp_path(path);
        FILE *f = tmp ? fopen(tmp, "w") : NULL;
        if (!f) {
            rc = cli_fail("compare");
        } else {
            fprintf(f, "# heurist compare: %s\n\n", d.name);
            fprintf(f, "Task `%s`%s%s, %d problems, %s; every model trained and tested on the same rows%s.\n\n",
                    d.task == MODEL_TASK_SELECT ? "select" : "tune", d.tune ? ", solver " : "",
                    d.tune ? d.tune->solver : "", d.n,
                    k > 0 ? "GroupKFold by problem geometry" : desc, k > 0 ? "; figures are means over folds" : "");
            if (k > 0) fprintf(f, "Folds: %d (seed %lld).\n\n", nfold, seed);
            const pipe_result *cres[COMPARE_MAX_MODELS];
            for (int m = 0; m < nm; m++) cres[m] = res[m];
            if (d.task == MODEL_TASK_SELECT) {
                md_select_table(f, nm, names, cres, nres);
                md_slices(f, nm, names, cres, nres);
            } else {
                md_tune_table(f, nm, names, cres, nres);
            }
            int np = plot_compare(out, &d, nm, names, cres, nres, f);
            if (np < 0) fprintf(f, "\n(plots could not be drawn: %s)\n", hr_last_error());
            int bad = fclose(f) != 0;
            if (bad || hr_file_commit(tmp, path)) rc = cli_fail("compare");
            if (!rc) {
                /* the terminal summary is the markdown table itself */
                char *text;
                size_t len;
                if (hr_file_read_all(path, &text, &len) == HR_OK) {
                    char *cut = strstr(text, "\n![");
                    if (cut) *cut = '\0';
                    printf("\n%s\n\nreport: %s/report.md, %s/report.json\n", text, out, out);
                    free(text);
                }
            }
        }
        free(tmp);
    }
    for (int m = 0; m < nm; m++) {
        for (int i = 0; res[m] && i < nfold; i++) pipe_result_free(&res[m][i]);
        free(res[m]);
    }
    cJSON_Delete(report);
    data_split_free(&split);
    pipe_dataset_free(&d);
    free(list);
    cJSON_Delete(cfg);
    return rc;
}
