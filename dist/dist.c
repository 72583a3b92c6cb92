/* dist over MPI (HEURIST_HAVE_MPI, set by CMake when find_package(MPI) succeeds), or serial. MPI is
 * initialised only when a launcher started this process, so that the plain binary never needs an MPI
 * runtime: OpenMPI's launcher sets OMPI_COMM_WORLD_SIZE, PMIx-based ones PMIX_RANK, MPICH's Hydra PMI_RANK. */
#include "dist/dist.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"

#ifdef HEURIST_HAVE_MPI
#include <mpi.h>

static int dist_mpi_wait_all(void);
#endif

struct dist_comm {
    int rank, size;
    int mpi; /* MPI_Init was called here */
};

static int dist_launched_by_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int dist_comm_init(int *argc, char ***argv, dist_comm **out)
{
    *out = NULL;
    dist_comm *c = hr_calloc(1, sizeof *c);
    if (!c) return HR_ENOMEM;
    c->size = 1;
#ifdef HEURIST_HAVE_MPI
    if (dist_launched_by_mpi()) {
        int provided = 0;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            free(c);
            return hr_error(HR_ESTATE, "dist: MPI_Init_thread failed");
        }
        c->mpi = 1;
        /* errors come back as codes (checked below), not as MPI's default abort without a message */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    }
#else
    (void)argc;
    (void)argv;
    (void)dist_launched_by_mpi;
#endif
    *out = c;
    return HR_OK;
}

void dist_comm_free(dist_comm *c)
{
    if (!c) return;
#ifdef HEURIST_HAVE_MPI
    if (c->mpi) {
        dist_mpi_wait_all(); /* MPI_Finalize would spin while the other ranks finish */
        MPI_Finalize();
    }
#endif
    free(c);
}

int dist_comm_rank(const dist_comm *c) { return c ? c->rank : 0; }
int dist_comm_size(const dist_comm *c) { return c ? c->size : 1; }
int dist_comm_is_mpi(const dist_comm *c) { return c ? c->mpi : 0; }

#ifdef HEURIST_HAVE_MPI
static int dist_mpi_error(int err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", err);
    return hr_error(HR_EIO, "dist: %s failed: %s", what, msg);
}

/* Waits until every rank arrives, sleeping between polls: OpenMPI's blocking collectives spin, and a rank
 * that finished its jobs early would take a core from the ranks still training on it. */
static int dist_mpi_wait_all(void)
{
    MPI_Request req;
    int err = MPI_Ibarrier(MPI_COMM_WORLD, &req), done = 0;
    if (err != MPI_SUCCESS) return dist_mpi_error(err, "MPI_Ibarrier");
    const struct timespec nap = {0, 1000000};
    while (!done) {
        if ((err = MPI_Test(&req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return dist_mpi_error(err, "MPI_Test");
        if (!done) nanosleep(&nap, NULL);
    }
    return HR_OK;
}
#endif

int dist_comm_gather(const dist_comm *c, const void *buf, size_t len, char **all, size_t *lens)
{
    *all = NULL;
    if (len >= (size_t)INT_MAX) return hr_error(HR_EINVAL, "dist: gather of %zu bytes from one rank (at most 2^31 - 1)", len);
    if (!c || !c->mpi) {
        *all = hr_malloc(len + 1);
        if (!*all) return HR_ENOMEM;
        if (len) memcpy(*all, buf, len);
        lens[0] = len;
        return HR_OK;
    }
#ifdef HEURIST_HAVE_MPI
    int n = (int)len, *counts = NULL, *displs = NULL, err;
    int rc = dist_mpi_wait_all();
    if (rc) return rc;
    if (c->rank == 0) {
        counts = hr_malloc((size_t)c->size * sizeof *counts);
        displs = hr_malloc((size_t)c->size * sizeof *displs);
    }
    /* every rank joins both collectives even when rank 0 is out of memory, then rank 0 reports it */
    if ((err = MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD)) != MPI_SUCCESS) {
        free(counts);
        free(displs);
        return dist_mpi_error(err, "MPI_Gather");
    }
    size_t total = 0;
    if (c->rank == 0 && counts && displs) {
        for (int r = 0; r < c->size; r++) {
            if (total + (size_t)counts[r] >= (size_t)INT_MAX) rc = hr_error(HR_EINVAL, "dist: gather of more than 2^31 bytes");
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        if (rc == HR_OK && !(*all = hr_malloc(total + 1))) rc = HR_ENOMEM;
    } else if (c->rank == 0) {
        rc = HR_ENOMEM;
    }
    if (rc == HR_OK || c->rank != 0) {
        err = MPI_Gatherv(buf, n, MPI_BYTE, *all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (err != MPI_SUCCESS) rc = dist_mpi_error(err, "MPI_Gatherv");
    }
    if (rc == HR_OK && c->rank == 0)
        for (int r = 0; r < c->size; r++) lens[r] = (size_t)counts[r];
    if (rc) {
        free(*all);
        *all = NULL;
    }
    free(counts);
    free(displs);
    return rc;
#else
    return hr_error(HR_ESTATE, "dist: built without MPI");
#endif
}

int dist_comm_allreduce_i64(const dist_comm *c, int64_t *buf, size_t n, int op)
{
    if (op != 0 && op != 1) return hr_error(HR_EINVAL, "dist: all-reduce operation %d (0 sum, 1 max)", op);
    if (!c || !c->mpi || c->size == 1) return HR_OK;
#ifdef HEURIST_HAVE_MPI
    /* in pieces of at most 2^30 values (MPI counts are ints); each piece waits by polling and yielding the core:
     * OpenMPI's blocking wait spins, and a training run's ranks meet here thousands of times on shared cores */
    for (size_t at = 0; at < n;) {
        int cnt = n - at < ((size_t)1 << 30) ? (int)(n - at) : 1 << 30, done = 0, err;
        MPI_Request req;
        err = MPI_Iallreduce(MPI_IN_PLACE, buf + at, cnt, MPI_INT64_T, op ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD, &req);
        if (err != MPI_SUCCESS) return dist_mpi_error(err, "MPI_Iallreduce");
        while (!done) {
            if ((err = MPI_Test(&req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return dist_mpi_error(err, "MPI_Test");
            if (!done) sched_yield();
        }
        at += (size_t)cnt;
    }
    return HR_OK;
#else
    (void)buf;
    (void)n;
    return hr_error(HR_ESTATE, "dist: built without MPI");
#endif
}

void dist_comm_abort(const dist_comm *c, int code)
{
#ifdef HEURIST_HAVE_MPI
    if (c && c->mpi) MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
#else
    (void)c;
    (void)code;
#endif
}
