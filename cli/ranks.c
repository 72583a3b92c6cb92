/* What the commands that run on every rank of an MPI job (train, cv, compare) share: the pipeline's view of
 * the ranks, built from dist/, and the dataset load, where a test can make one rank fail. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int cli_ranks_gather(void *ctx, const void *buf, size_t len, char **all, size_t *lens)
{
    return dist_comm_gather((const dist_comm *)ctx, buf, len, all, lens);
}

pipe_ranks cli_ranks_of(const dist_comm *comm)
{
    pipe_ranks r = {dist_comm_rank(comm), dist_comm_size(comm), cli_ranks_gather, (void *)comm};
    return r;
}

static int cli_ranks_allreduce(void *ctx, int64_t *buf, size_t n, hr_reduce_op op)
{
    cli_reduce_stats *st = ctx;
    double t0 = hr_now();
    int rc = dist_comm_allreduce_i64(st->comm, buf, n, op == HR_REDUCE_MAX);
    st->seconds += hr_now() - t0;
    st->calls++;
    st->values += (double)n;
    return rc;
}

hr_comm cli_ranks_comm(cli_reduce_stats *st)
{
    hr_comm c = {dist_comm_rank(st->comm), dist_comm_size(st->comm), cli_ranks_allreduce, st};
    return c;
}

int cli_ranks_load(const dist_comm *comm, const cli_train_opts *c, pipe_dataset *d)
{
    /* for tests only: HEURIST_TEST_FAIL_RANK=R makes rank R's load fail, as a rank with an unreadable shard
     * would, to check that the whole job then ends with that rank's message and a non-zero status */
    const char *fail = getenv("HEURIST_TEST_FAIL_RANK");
    if (fail && *fail && atoi(fail) == dist_comm_rank(comm))
        return hr_error(HR_EIO, "%s: rank %d of %d: load failed on purpose (HEURIST_TEST_FAIL_RANK, a test hook)",
                        c->data, dist_comm_rank(comm), dist_comm_size(comm));
    pipe_load l = {.task = c->task, .solver = c->solver, .schema = c->schema, .caps = c->caps, .threads = c->threads,
                   .log = &c->log, .precisions = c->precisions, .sources = c->sources, .source = c->source};
    int rc = pipe_dataset_open(c->data, &l, d);
    if (!rc && (rc = pipe_dataset_group_by(d, c->group_by))) pipe_dataset_free(d);
    return rc;
}

uint64_t cli_digest_dataset(const pipe_dataset *d)
{
    return pipe_dataset_digest(d, CLI_DIGEST_INIT);
}

int cli_ranks_agree(const dist_comm *comm, const char *cmd, const uint64_t digest[CLI_AGREE_PARTS])
{
    int size = dist_comm_size(comm), rank = dist_comm_rank(comm);
    if (size < 2) return HR_OK;
    /* rank 0's digests reach every rank as a sum to which the others add 0 (exact in int64 arithmetic) */
    int64_t ref[CLI_AGREE_PARTS];
    for (int p = 0; p < CLI_AGREE_PARTS; p++) ref[p] = rank == 0 ? (int64_t)digest[p] : 0;
    int rc = dist_comm_allreduce_i64(comm, ref, CLI_AGREE_PARTS, 0);
    if (rc) return rc;
    /* the lowest rank that differs in each part, as the largest of size - rank (0: none) */
    int64_t low[CLI_AGREE_PARTS];
    for (int p = 0; p < CLI_AGREE_PARTS; p++) low[p] = (int64_t)digest[p] != ref[p] ? size - rank : 0;
    if ((rc = dist_comm_allreduce_i64(comm, low, CLI_AGREE_PARTS, 1))) return rc;
    static const char *const part[CLI_AGREE_PARTS] = {
        "options (model, task, config, split or folds)", "data (its rows, kernels or measurements)",
        "seed", "training and test rows"};
    for (int p = 0; p < CLI_AGREE_PARTS; p++)
        if (low[p])
            return hr_error(HR_EINVAL, "%s: ranks disagree: rank %d's %s differ from rank 0's; every rank of a job must "
                            "be given the same run", cmd, size - (int)low[p], part[p]);
    return HR_OK;
}

int cli_ranks_check(const dist_comm *comm, const char *cmd, const cli_args *a, const cli_train_opts *c,
                    const char *const *opts, const pipe_dataset *d, const data_split *s)
{
    if (dist_comm_size(comm) < 2) return HR_OK;
    /* for tests only: HEURIST_TEST_NO_AGREEMENT skips the check, so that the training loop's own exchange (a rank
     * leaving it early tells the others) can be seen on ranks given different runs */
    const char *skip = getenv("HEURIST_TEST_NO_AGREEMENT");
    if (skip && *skip) return HR_OK;
    uint64_t dg[CLI_AGREE_PARTS];
    uint64_t h = pipe_digest_str(CLI_DIGEST_INIT, cmd);
    h = pipe_digest_str(h, c->fam ? c->fam->name : NULL);
    h = pipe_digest_str(h, c->task);
    h = pipe_digest_str(h, c->solver);
    h = pipe_digest(h, &c->valid_fraction, sizeof c->valid_fraction);
    h = pipe_digest(h, &c->guard, sizeof c->guard);
    h = pipe_digest(h, &c->guard_top, sizeof c->guard_top);
    char *cfg = c->config ? cJSON_PrintUnformatted(c->config) : NULL;
    h = pipe_digest_str(h, cfg);
    free(cfg);
    for (int i = 0; opts && opts[i]; i++) {
        h = pipe_digest_str(h, opts[i]);
        h = pipe_digest_str(h, cli_get(a, opts[i]));
    }
    dg[CLI_AGREE_OPTIONS] = h;
    dg[CLI_AGREE_DATA] = cli_digest_dataset(d);
    h = CLI_DIGEST_INIT;
    if (s) {
        h = pipe_digest(h, &s->n_train, sizeof s->n_train);
        h = pipe_digest(h, s->train, (size_t)s->n_train * sizeof *s->train);
        h = pipe_digest(h, &s->n_test, sizeof s->n_test);
        h = pipe_digest(h, s->test, (size_t)s->n_test * sizeof *s->test);
    }
    dg[CLI_AGREE_SPLIT] = h;
    dg[CLI_AGREE_SEED] = pipe_digest(CLI_DIGEST_INIT, &c->seed, sizeof c->seed);
    return cli_ranks_agree(comm, cmd, dg);
}
