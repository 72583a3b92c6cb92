/* The (family, fold) jobs of cv (pipe_run_folds) and compare spread over the ranks of a distributed run, and
 * their results carried to rank 0. Job j = family * folds + fold runs on rank j % size: a fixed function of the
 * job count and the rank count. A result travels as bytes: a header (magic, sizeof(pipe_result), the record
 * count), then per job its (family, fold), the pipe_result's own bytes (every rank runs the same binary, whose
 * struct layout the header's size checks), and the arrays its pointers held: the per-problem efficiencies, picks,
 * rows and speed-ups (selection) and the training curve. */
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_internal.h"

#define RANKS_MAGIC 0x68726e6bu /* "hrnk" */

int pipe_ranks_is_root(const pipe_ranks *r)
{
    return !r || r->rank == 0;
}

/* one job's result appended to f */
static void ranks_pack(FILE *f, int m, int fold, const pipe_result *r)
{
    int32_t head[2] = {m, fold};
    fwrite(head, sizeof head, 1, f);
    fwrite(r, sizeof *r, 1, f);
    pipe_task_of(r->task)->pack(f, r);
    if (r->n_curve > 0 && r->curve) fwrite(r->curve, sizeof *r->curve, (size_t)r->n_curve, f);
}

/* the records of one rank's bytes into res[m][fold] */
static int ranks_unpack(const char *buf, size_t len, int nm, int nfold, pipe_result *const *res)
{
    size_t at = 0;
    uint32_t head[3];
    int rc = pipe_ranks_read(buf, len, &at, head, sizeof head);
    if (rc) return rc;
    if (head[0] != RANKS_MAGIC || head[1] != (uint32_t)sizeof(pipe_result))
        return hr_error(HR_EFORMAT, "ranks: results from a different heurist binary (every rank must run the same one)");
    for (uint32_t i = 0; i < head[2]; i++) {
        int32_t jf[2];
        pipe_result r;
        if ((rc = pipe_ranks_read(buf, len, &at, jf, sizeof jf)) || (rc = pipe_ranks_read(buf, len, &at, &r, sizeof r)))
            return rc;
        if (jf[0] < 0 || jf[0] >= nm || jf[1] < 0 || jf[1] >= nfold || r.n_test < 0 || r.n_curve < 0)
            return hr_error(HR_EFORMAT, "ranks: result record %u names job (%d, %d) of %d x %d", i, jf[0], jf[1], nm, nfold);
        const pipe_task *t = pipe_task_of(r.task);
        if (!t) return hr_error(HR_EFORMAT, "ranks: result record %u has no task", i);
        pipe_result *dst = &res[jf[0]][jf[1]];
        r.curve = NULL;
        /* the record's pointers are the sending rank's: every array travels after the record */
        if ((rc = t->unpack(buf, len, &at, &r))) {
            t->result_free(&r);
            return rc;
        }
        *dst = r;
        if (r.n_curve > 0) {
            size_t n = (size_t)r.n_curve * sizeof *r.curve;
            if (!(dst->curve = hr_malloc(n))) return HR_ENOMEM;
            if ((rc = pipe_ranks_read(buf, len, &at, dst->curve, n))) return rc;
        }
    }
    if (at != len) return hr_error(HR_EFORMAT, "ranks: %zu bytes after the last result record", len - at);
    return HR_OK;
}

/* Every rank's results to rank 0: this rank's jobs are packed and freed, and on rank 0 every job's result
 * lands in res. */
static int ranks_gather(const pipe_ranks *rk, int nm, int nfold, pipe_result *const *res)
{
    char *bytes = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&bytes, &len);
    if (!f) return hr_error(HR_ENOMEM, "ranks: cannot pack the results");
    uint32_t head[3] = {RANKS_MAGIC, (uint32_t)sizeof(pipe_result), 0};
    for (int j = 0; j < nm * nfold; j++) head[2] += j % rk->size == rk->rank;
    fwrite(head, sizeof head, 1, f);
    for (int j = 0; j < nm * nfold; j++)
        if (j % rk->size == rk->rank) ranks_pack(f, j / nfold, j % nfold, &res[j / nfold][j % nfold]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(bytes);
        return hr_error(HR_ENOMEM, "ranks: cannot pack the results");
    }
    /* rank 0 keeps its own results; the others' come back through the gather */
    for (int j = 0; j < nm * nfold; j++)
        if (j % rk->size == rk->rank && rk->rank != 0) {
            pipe_result_free(&res[j / nfold][j % nfold]);
            memset(&res[j / nfold][j % nfold], 0, sizeof(pipe_result));
        }
    char *all = NULL;
    size_t *lens = hr_calloc((size_t)rk->size, sizeof *lens);
    int rc = lens ? rk->gather(rk->ctx, bytes, len, &all, lens) : HR_ENOMEM;
    free(bytes);
    size_t at = 0;
    for (int r = 0; rc == HR_OK && all && r < rk->size; at += lens[r], r++)
        if (r != 0) rc = ranks_unpack(all + at, lens[r], nm, nfold, res);
    free(all);
    free(lens);
    return rc;
}

int pipe_jobs_run(const pipe_dataset *d, int nm, const model_family *const *fams, const cJSON *const *configs,
                  int folds, const data_split *split, const pipe_opts *o, pipe_result *const *res,
                  pipe_result_fn on_result, void *ctx)
{
    int nfold = folds ? folds : 1;
    for (int m = 0; m < nm; m++) memset(res[m], 0, (size_t)nfold * sizeof *res[m]);
    if (folds == 1 || folds < 0) return hr_error(HR_EINVAL, "--folds %d: need at least 2 folds", folds);
    if (!folds && !split) return hr_error(HR_EINVAL, "jobs: neither folds nor a split given");
    if (folds > d->n_groups)
        return hr_error(HR_EINVAL, "--folds %d: only %d groups (by %s) to spread over the folds", folds, d->n_groups,
                        d->grouping ? d->grouping : "problem");
    const pipe_ranks *rk = o->ranks && o->ranks->size > 1 ? o->ranks : NULL;
    for (int j = 0; j < nm * nfold; j++) {
        int m = j / nfold, f = j % nfold;
        if (rk && j % rk->size != rk->rank) continue;
        pipe_opts om = *o;
        if (configs) om.config = configs[m];
        int rc;
        if (folds) {
            data_split s;
            if ((rc = data_split_group_kfold(d->group, d->n, d->n_groups, folds, o->seed, f, &s))) return rc;
            hr_log_printf(o->log, HR_LOG_INFO, "%s fold %d/%d: %d train / %d test problems\n", fams[m]->name, f + 1,
                          folds, s.n_train, s.n_test);
            rc = pipe_run(d, &s, fams[m], &om, &res[m][f], NULL);
            data_split_free(&s);
        } else {
            hr_log_printf(o->log, HR_LOG_INFO, "compare: training %s (%d train / %d test)\n", fams[m]->name,
                          split->n_train, split->n_test);
            rc = pipe_run(d, split, fams[m], &om, &res[m][0], NULL);
        }
        if (rc) return rc;
        if (!rk && on_result) on_result(ctx, fams[m]->name, f, nfold, &res[m][f]);
    }
    if (!rk) return HR_OK;
    int rc = ranks_gather(rk, nm, nfold, res);
    for (int j = 0; rc == HR_OK && rk->rank == 0 && on_result && j < nm * nfold; j++)
        on_result(ctx, fams[j / nfold]->name, j % nfold, nfold, &res[j / nfold][j % nfold]);
    return rc;
}

int pipe_run_folds(const pipe_dataset *d, const model_family *fam, int k, const pipe_opts *o, pipe_result *folds,
                   pipe_result_fn on_result, void *ctx)
{
    memset(folds, 0, (size_t)(k > 0 ? k : 0) * sizeof *folds);
    if (k < 2) return hr_error(HR_EINVAL, "--folds %d: need at least 2 folds", k);
    pipe_result *const res[1] = {folds};
    return pipe_jobs_run(d, 1, &fam, NULL, k, NULL, o, res, on_result, ctx);
}
