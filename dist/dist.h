/* dist: the processes of one heurist run, over MPI when heurist was built with it and started by mpirun
 * (or another MPI launcher), otherwise one process with the same calls.
 *
 * This is the only place that includes <mpi.h>: cli/ hands the pipeline what it needs (rank, size, a gather,
 * and for data-parallel gbdt an int64 all-reduce) as plain values and function pointers, so the libraries
 * below know nothing of MPI.
 * Collectives run on the calling (main) thread only (MPI_THREAD_FUNNELED); worker threads never call here.
 * A failing rank does not report its failure to the others: main() ends the whole job with
 * dist_comm_abort, so no rank waits forever in a collective that the failed rank will never join.
 */
#ifndef HEURIST_DIST_H
#define HEURIST_DIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct dist_comm dist_comm;

/* *out = the run's processes: MPI's world when started by an MPI launcher (MPI_Init here), else one
 * process (rank 0 of 1). argc and argv may be rewritten by MPI_Init. */
int dist_comm_init(int *argc, char ***argv, dist_comm **out);
/* MPI_Finalize (when MPI was initialised) and frees c; NULL is fine. */
void dist_comm_free(dist_comm *c);
int dist_comm_rank(const dist_comm *c);
int dist_comm_size(const dist_comm *c);
/* 1 when the processes talk through MPI (even a job of one rank), 0 for the serial implementation. */
int dist_comm_is_mpi(const dist_comm *c);

/* Collective. Rank 0 receives the len bytes of every rank, concatenated in rank order into *all (malloc'd,
 * free with free()) with lens[r] (size entries) the bytes of rank r; other ranks get *all = NULL and lens
 * untouched. A rank's len must be below 2^31 (MPI counts are ints). */
int dist_comm_gather(const dist_comm *c, const void *buf, size_t len, char **all, size_t *lens);
/* Collective: buf (n) = the sum (op 0) or the maximum (op 1) over every rank of its buf (n), in place
 * (MPI_Allreduce on MPI_INT64_T: integer sums are exact, so the result does not depend on the order in which
 * the ranks' values meet). The serial implementation leaves buf as it is. */
int dist_comm_allreduce_i64(const dist_comm *c, int64_t *buf, size_t n, int op);
/* Ends every rank of the job with exit status code (MPI_Abort); returns only for the serial implementation,
 * whose one process ends by returning from main. */
void dist_comm_abort(const dist_comm *c, int code);

#endif
