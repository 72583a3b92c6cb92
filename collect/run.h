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

#include <stddef.h>
#include <stdint.h>
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
    int bind;            /* bind each worker to the CPUs local to its GPU (collect_run_bind; --no-bind: 0) */
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
/* Ends a worker forked by --gpus with status rc once its parts are closed and its times handed to the parent
 * (collect_run_finish): flushes stdout and stderr and leaves by _exit, so that the exit handlers of the GPU
 * libraries (a second or more of cuDNN's and cuBLASLt's, in a process that loaded them) do not hold up the
 * merge; the operating system frees what the worker held. Does not return. */
_Noreturn void collect_run_exit(collect_run *r, int rc);
/* The merger's "timings:" line: planning (keys, resume scan, order), the slowest start-up, the longest
 * measuring with its problems, closing, when the workers had ended, the merge (from t_merge to now) and the
 * wall time; then the throughputs over the wall time and over the longest measuring (the steady state). */
void collect_run_times_print(const collect_run *r, int problems, double t_merge);
/* Binds this worker to the CPUs local to its GPU, whose PCI bus id is bus (collect_bind_gpu under /sys, or
 * under HEURIST_COLLECT_SYSFS where set: the tests' fake tree), unless r->bind is 0; prints one log line,
 * what was bound or why not. Called before the GPU's context and the worker's buffers are made, so that
 * what they touch first lies on the GPU's node. */
void collect_run_bind(const collect_run *r, const char *bus);
/* This worker's columns of the GPU table (parts.h): "worker\thost\tgpu\tbus". */
void collect_run_gpu_columns(const collect_run *r, const char *bus, char *buf, size_t size);
/* Ends MPI where it was started; frees what the job held. */
void collect_run_free(collect_run *r);

/* ---- dealing (deal.c, in the CPU library) ---- */
/* Sorts todo[0..n) (key indices; cost[i] the estimated cost of todo[i]) into decreasing cost, ties in
 * increasing key index: the dealing order. The output's order is the key list's whatever this order. */
int collect_deal_order(int *todo, const double *cost, int n);
/* The size of the chunk that starts at position first of n_todo: chunk, but at most an even share of what is
 * left among twice the workers (at least 1), so that the last problems go one at a time. */
int collect_deal_chunk(int first, int n_todo, int chunk, int workers);

/* ---- binding to the GPU's CPUs (bind.c, in the CPU library) ---- */
#define COLLECT_CPUS_MAX 1024
/* A set of CPU numbers below COLLECT_CPUS_MAX. */
typedef struct collect_cpus {
    uint64_t bits[COLLECT_CPUS_MAX / 64];
} collect_cpus;
/* Parses a Linux cpulist ("0-15,32-47\n"; empty: no CPU). 0, or COLLECT_EFORMAT naming the offset. */
int collect_cpus_parse(const char *text, collect_cpus *out);
int collect_cpus_has(const collect_cpus *s, int cpu);
int collect_cpus_count(const collect_cpus *s);
/* The set as a cpulist ("0-15,32-47"), cut short where buf is too small. */
void collect_cpus_format(const collect_cpus *s, char *buf, size_t size);
/* "0000:1B:00.0" or "00000000:1b:00.0" (CUDA's and NVML's spellings) as sysfs names it, "0000:1b:00.0". 0, or
 * COLLECT_EFORMAT. */
int collect_pci_bus_normalize(const char *bus_id, char *buf, size_t size);
/* The CPUs local to a PCI device and its NUMA node (-1 unknown), from <sysfs>/bus/pci/devices/<bus>/
 * local_cpulist and numa_node. 0; 1 when the device has no local_cpulist there; negative on a bad bus id or a
 * malformed list. */
int collect_gpu_local_cpus(const char *sysfs, const char *bus_id, collect_cpus *cpus, int *numa_node);
/* The CPUs to bind to: allowed & local. Returns their count, or 0 (bind nothing) when none of the GPU's CPUs
 * is allowed or when they are all the allowed ones (nothing would change). */
int collect_bind_choose(const collect_cpus *allowed, const collect_cpus *local, collect_cpus *out);
/* Binds the calling thread (and the threads it starts later) to the CPUs collect_bind_choose picks for the
 * GPU at bus_id; msg gets one line: "bound to NUMA node N: CPUs L (n of m)" or "not bound: why". 1 bound, 0
 * not (a missing sysfs entry or a refused call is not an error: the worker measures unbound). */
int collect_bind_gpu(const char *sysfs, const char *bus_id, char *msg, size_t size);

/* "[worker w/N] " in a job of several workers, "" alone: the prefix of a worker's log lines. */
const char *collect_run_tag(const collect_run *r);

#endif
