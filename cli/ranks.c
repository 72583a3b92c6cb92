/* What the commands that run on every rank of an MPI job (train, cv, compare) share: the pipeline's view of
 * the ranks, built from dist/, and the dataset load, where a test can make one rank fail. */
#include <stdlib.h>

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
    int rc = pipe_dataset_load_caps(c->data, c->task, c->solver, c->schema, c->caps, c->threads, &c->log, d);
    if (!rc && (rc = pipe_dataset_group_by(d, c->group_by))) pipe_dataset_free(d);
    return rc;
}
