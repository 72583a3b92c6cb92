/* run: the processes of a collection, one worker per GPU.
 *
 *   alone                 one worker, GPU 0
 *   --gpus N|all          one host without MPI: the process forks N workers (worker w binds GPU w of the
 *                         visible ones) before any CUDA call, waits for them and merges
 *   mpirun -np N          one worker per rank, bound to the GPU of its local rank (its index among the ranks
 *                         of its host); rank 0 merges. Output paths must be shared by the hosts.
 *
 * Workers take positions of a shared to-do list in chunks (a slow problem holds up only its worker): an atomic
 * counter in memory shared with the forked workers, or under MPI a dealer thread of rank 0 that answers the
 * other ranks' requests while rank 0's worker measures. A worker that fails asks the others to stop after
 * their current problem. Each worker writes its own part files (parts.h); the merging process joins them when
 * every worker has ended.
 */
#ifndef HEURIST_COLLECT_RUN_H
#define HEURIST_COLLECT_RUN_H

#include <sys/types.h>

typedef struct run_shared run_shared;
typedef struct run_mpi run_mpi;

typedef struct collect_run {
    const char *cmd;     /* "conv" or "gemm", for messages */
    int workers;         /* processes that measure */
    int worker;          /* this process's worker index; -1 in the --gpus parent */
    int device;          /* the GPU this worker binds, among the visible ones */
    int merger;          /* this process merges the parts (the lone worker, the --gpus parent, rank 0) */
    int forked;          /* this process is a worker forked by --gpus */
    int n_todo, chunk;
    int next, end;       /* this worker's chunk of to-do positions, [next, end) */
    int job_rc;          /* in the merger once every worker ended: 0, or the worst worker status (3 before 1) */
    int job_stopped;     /* in the merger: a worker stopped with problems left (--time-limit) */
    double t_start;      /* the job's start, seconds (cli_now_s) */
    run_shared *sh;
    run_mpi *mpi;
} collect_run;

/* Sets up the job: initialises MPI when an MPI launcher started the process (and the build has MPI), else
 * takes the worker count from gpus ("all", a count, or NULL for one). 0, or 2 after printing a usage error,
 * or 1 after printing another error. */
int collect_run_init(collect_run *r, const char *cmd, const char *gpus, int chunk);
/* 1 when this process should read the inputs and compute the to-do list (every process but MPI ranks > 0). */
int collect_run_plans(const collect_run *r);
/* Under MPI, rank 0's to-do list (positions in the key list) sent to every rank (*todo malloc'd in the
 * others); nothing otherwise. 0, or 1 after printing an error. */
int collect_run_share(collect_run *r, int **todo, int *n_todo);
/* Starts the workers over n_todo positions. Returns in each worker with r->worker >= 0 and, under --gpus, in
 * the parent once every worker has ended (r->worker -1, r->job_rc set). 0, or 1 after printing an error. */
int collect_run_start(collect_run *r, int n_todo);
/* The next to-do position for this worker, or -1 when the list is dealt or the job stops. */
int collect_run_next(collect_run *r);
/* A failing worker asks the others to stop after their current problem. */
void collect_run_stop(collect_run *r);
/* This worker has ended with status rc, stopped set when it left problems undone (--time-limit): the merger
 * learns every worker's (r->job_rc, r->job_stopped; gathered to rank 0 under MPI). Returns rc. */
int collect_run_finish(collect_run *r, int rc, int stopped);
/* Ends MPI where it was started; frees what the job held. */
void collect_run_free(collect_run *r);

/* "[worker w/N] " in a job of several workers, "" alone: the prefix of a worker's log lines. */
const char *collect_run_tag(const collect_run *r);

#endif
