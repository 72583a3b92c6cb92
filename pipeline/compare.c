/* compare: several families on exactly the same folds or split; report.json, report.md and figures. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_internal.h"
#include "pipeline/plot.h"

const char *const pipe_compare_files[] = {"report.json", "report.md", "efficiency_cdf.png", "top1_slices.png",
                                         "training_curves.png", "tradeoff.png", NULL};

/* The header and tables of report.md, which are also the terminal summary. */
static void md_tables(FILE *f, const pipe_dataset *d, const pipe_compare_spec *s, const char *split_desc, uint64_t seed,
                      const char *const *names, const pipe_result *const *res, const int *nres)
{
    int nm = s->n_models;
    fprintf(f, "# heurist compare: %s\n\n", d->name);
    const pipe_task *t = pipe_task_of(d->task);
    const char *solver = t->solver(d), *kind = data_codec_kind(d->codec);
    fprintf(f, "Task `%s`%s%s%s%s, %d problems, %s%s%s%s; every model trained and tested on the same rows%s.\n\n",
            model_task_name(d->task), solver ? ", solver " : "", solver ? solver : "", kind ? " on a " : "",
            kind ? kind : "", d->n, s->folds ? "GroupKFold by " : split_desc,
            s->folds ? d->grouping : d->by_column ? ", whole groups by " : "",
            !s->folds && d->by_column ? d->grouping : "", d->by_column ? " (no group both trained and tested on)" : "",
            s->folds ? "; figures are means over folds" : "");
    if (s->folds) fprintf(f, "Folds: %d (seed %llu).\n\n", s->folds, (unsigned long long)seed);
    t->md_tables(f, d, nm, names, res, nres);
}

/* report.md: the tables, then the figures (drawn into dir) with their links. */
static int write_markdown(const char *dir, const pipe_dataset *d, const char *tables, int nm, const char *const *names,
                          const pipe_result *const *res, const int *nres)
{
    char path[4096];
    int rc = hr_path_join(path, sizeof path, dir, "report.md");
    if (rc) return rc;
    char *tmp = hr_file_tmp_path(path);
    if (!tmp) return HR_ENOMEM;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return hr_error(HR_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    fputs(tables, f);
    /* a figure that cannot be written (a full disk) is an error of the run, as report.md's own write is */
    int np = plot_compare(dir, d, pipe_task_of(d->task), nm, names, res, nres, f);
    rc = np < 0 ? np : HR_OK;
    if (ferror(f) | (fclose(f) != 0) && !rc) rc = hr_error(HR_EIO, "%s: write failed", path);
    if (rc) remove(tmp);
    else rc = hr_file_commit(tmp, path);
    free(tmp);
    return rc;
}

int pipe_compare(const pipe_dataset *d, const pipe_compare_spec *s, const pipe_opts *o, const char *dir,
                 pipe_result_fn on_result, void *ctx, char **summary)
{
    *summary = NULL;
    int nm = s->n_models;
    if (nm < 1 || nm > PIPE_COMPARE_MAX)
        return hr_error(HR_EINVAL, "compare: %d models, expected 1 to %d", nm, PIPE_COMPARE_MAX);
    if (s->folds == 1 || s->folds < 0) return hr_error(HR_EINVAL, "--folds %d: need at least 2 folds", s->folds);
    for (int m = 0; m < nm; m++)
        if (!model_family_task(s->fams[m], d->task))
            return hr_error(HR_EINVAL, "model family '%s' does not support the %s task", s->fams[m]->name,
                            model_task_name(d->task));
    int rc = hr_mkdir_p(dir);
    if (rc) return rc;
    int nfold = s->folds ? s->folds : 1;
    const char *names[PIPE_COMPARE_MAX];
    pipe_result *res[PIPE_COMPARE_MAX] = {0};
    int nres[PIPE_COMPARE_MAX] = {0};
    cJSON *report = cJSON_CreateArray();
    char desc[64] = "";
    data_split split;
    memset(&split, 0, sizeof split);
    if (!report) rc = HR_ENOMEM;
    if (!rc && !s->folds) {
        rc = s->split ? pipe_split_random(d, s->split, o->seed, &split, desc, sizeof desc)
                      : hr_error(HR_EINVAL, "compare: neither folds nor a split given");
    }
    for (int m = 0; m < nm && !rc; m++) {
        names[m] = s->fams[m]->name;
        if (!(res[m] = hr_calloc((size_t)nfold, sizeof *res[m]))) rc = HR_ENOMEM;
    }
    pipe_opts om = *o;
    om.save_path = NULL;
    om.keep_model = 0;
    if (!rc) rc = pipe_jobs_run(d, nm, s->fams, s->configs, s->folds, s->folds ? NULL : &split, &om, res, on_result, ctx);
    int root = pipe_ranks_is_root(o->ranks), nranks = o->ranks ? o->ranks->size : 1;
    for (int m = 0; m < nm && !rc && root; m++) {
        cJSON *obj = s->folds ? pipe_report_cv(d, names[m], nfold, o->seed, res[m])
                              : pipe_report_object(d, names[m], desc, &res[m][0]);
        cJSON_AddNumberToObject(obj, "ranks", nranks);
        cJSON_AddItemToArray(report, obj);
        nres[m] = nfold;
    }
    /* the results and the reports are rank 0's */
    if (!rc && root) {
        char path[4096];
        rc = hr_path_join(path, sizeof path, dir, "report.json");
        if (!rc) rc = pipe_json_write(path, report);
    }
    if (!rc && root) {
        const pipe_result *cres[PIPE_COMPARE_MAX];
        for (int m = 0; m < nm; m++) cres[m] = res[m];
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (!mem) {
            rc = hr_error(HR_ENOMEM, "compare: cannot build the report text");
        } else {
            md_tables(mem, d, s, desc, o->seed, names, cres, nres);
            if (fclose(mem) != 0) rc = hr_error(HR_ENOMEM, "compare: cannot build the report text");
        }
        if (!rc) rc = write_markdown(dir, d, text, nm, names, cres, nres);
        if (!rc) *summary = text;
        else free(text);
    }
    for (int m = 0; m < nm; m++) {
        for (int i = 0; res[m] && i < nfold; i++) pipe_result_free(&res[m][i]);
        free(res[m]);
    }
    cJSON_Delete(report);
    data_split_free(&split);
    return rc;
}
