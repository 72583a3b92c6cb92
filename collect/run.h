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
 * other ranks' requests while rank 0's worker measures. The planner orders the list longest first by an
 * estimated cost (collect_deal_order), so that the job's tail is made of short problems and the workers end
 * together; chunks shrink near the end of the list (collect_deal_chunk). A worker that fails asks the others
 * to stop after their current problem. Each worker writes its own part files (parts.h); the merging process
 * joins them, in the key list's order whatever the dealing order, when every worker has ended.
 *
 * Where the wall time goes: each worker reports its start-up (from its start to its first problem: the CUDA
 * context, the library handles, buffers and part files), its measuring and its closing; the merger prints
 * them with the planning and the merge in one "timings:" line (collect_run_times_print).
 */
#ifndef HEURIST_COLLECT_RUN_H
#define HEURIST_COLLECT_RUN_H

#include <sys/types.h>

typedef struct run_shared run_shared;
typedef struct run_mpi run_mpi;

/* One worker's times, seconds. */
typedef struct collect_worker_times {
    double startup;      /* from the worker's start (its fork, or collect_run_start) to its first problem */
    double measuring;    /* from its first problem's start to its last one's end */
    double closing;      /* releasing the device and closing its parts */
    int problems;        /* problems it wrote */
} collect_worker_times;

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
    double count_s;      /* --gpus all: the time taken to count the GPUs (a child process's CUDA start) */
    double t_began;      /* this process's start of measuring: collect_run_start (the fork for a forked worker) */
    double t_ended;      /* in the merger: when the last worker had ended */
    collect_worker_times slowest;  /* in the merger: the largest start-up, measuring and closing of the workers */
    int slowest_startup, slowest_measuring;  /* ... and the workers they came from */
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
/* This worker has ended with status rc, stopped set when it left problems undone (--time-limit), with its
 * times (NULL: none, as in a process that measured nothing): the merger learns every worker's (r->job_rc,
 * r->job_stopped, r->slowest; gathered to rank 0 under MPI). Returns rc. */
int collect_run_finish(collect_run *r, int rc, int stopped, const collect_worker_times *times);
/* The merger's "timings:" line: planning (keys, resume scan, order), the slowest start-up, the longest
 * measuring with its problems, closing, when the workers had ended, the merge (from t_merge to now) and the
 * wall time; then the throughputs over the wall time and over the longest measuring (the steady state). */
void collect_run_times_print(const collect_run *r, int problems, double t_merge);
/* Ends MPI where it was started; frees what the job held. */
void collect_run_free(collect_run *r);

/* ---- dealing (deal.c, in the CPU library) ---- */
/* Sorts todo[0..n) (key indices; cost[i] the estimated cost of todo[i]) into decreasing cost, ties in
 * increasing key index: the dealing order. The output's order is the key list's whatever this order. */
int collect_deal_order(int *todo, const double *cost, int n);
/* The size of the chunk that starts at position first of n_todo: chunk, but at most an even share of what is
 * left among twice the workers (at least 1), so that the last problems go one at a time. */
int collect_deal_chunk(int first, int n_todo, int chunk, int workers);

/* "[worker w/N] " in a job of several workers, "" alone: the prefix of a worker's log lines. */
const char *collect_run_tag(const collect_run *r);

#endif
