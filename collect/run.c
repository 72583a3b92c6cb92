/* The processes of a collection (run.h): forked workers sharing an atomic counter, or MPI ranks dealt to by a
 * thread of rank 0. MPI is initialised only when a launcher started the process (OpenMPI sets
 * OMPI_COMM_WORLD_SIZE, PMIx-based launchers PMIX_RANK, MPICH's Hydra PMI_RANK), so that the plain binary
 * never needs an MPI runtime. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "run.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "collect.h"
#include "timer.h"

#ifdef HEURIST_COLLECT_MPI
#include <mpi.h>
#include <pthread.h>
#endif

#define RUN_MAX_WORKERS 64

/* What the workers of one host share (an anonymous shared mapping, inherited across fork). */
struct run_shared {
    atomic_int next;        /* the first to-do position not yet dealt */
    atomic_int stop;        /* a worker failed: the others stop after their current problem */
    atomic_int stopped;     /* a worker stopped with problems left (--time-limit) */
    collect_worker_times times[RUN_MAX_WORKERS];  /* each forked worker's, written before it exits */
    int has_times[RUN_MAX_WORKERS];
};

static int launched_by_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

/* A chunk's first position from the shared counter, or -1 when the list is dealt or the job stops; the
 * chunk's size is collect_deal_chunk's of its first position, which the taker computes again. */
static int deal_take(run_shared *sh, int chunk, int n_todo, int workers)
{
    if (atomic_load(&sh->stop)) return -1;
    int first = atomic_load(&sh->next);
    do {
        if (first >= n_todo) return -1;
    } while (!atomic_compare_exchange_weak(&sh->next, &first, first + collect_deal_chunk(first, n_todo, chunk, workers)));
    return first;
}

/* Keeps the largest of each time over the workers, and which worker it came from. */
static void times_merge(collect_run *r, int w, const collect_worker_times *t)
{
    if (t->startup > r->slowest.startup) {
        r->slowest.startup = t->startup;
        r->slowest_startup = w;
    }
    if (t->measuring > r->slowest.measuring) {
        r->slowest.measuring = t->measuring;
        r->slowest.problems = t->problems;
        r->slowest_measuring = w;
    }
    if (t->closing > r->slowest.closing) r->slowest.closing = t->closing;
}

/* 0 < 3 (a device error: --resume goes on past it) < anything else */
static int worse(int a, int b)
{
    if (a == 0) return b;
    if (b == 0 || a != 3) return a;
    return b;
}

#ifdef HEURIST_COLLECT_MPI
enum { TAG_ASK = 17, TAG_GIVE = 18 };
enum { ASK_CHUNK, ASK_STOP, ASK_QUIT };

struct run_mpi {
    MPI_Comm deal;   /* the dealer's messages, apart from the job's collectives */
    int rank, size, local_rank, local_size;
    pthread_t thread;
    int thread_on;
};

/* Rank 0's dealer: answers chunk requests from the counter rank 0's worker also takes from, polling so that
 * it leaves the cores to the measuring threads. */
static void *dealer_main(void *arg)
{
    collect_run *r = arg;
    for (;;) {
        int msg = ASK_QUIT, done = 0;
        MPI_Request rq;
        MPI_Status st;
        if (MPI_Irecv(&msg, 1, MPI_INT, MPI_ANY_SOURCE, TAG_ASK, r->mpi->deal, &rq) != MPI_SUCCESS) break;
        while (!done) {
            if (MPI_Test(&rq, &done, &st) != MPI_SUCCESS) return NULL;
            if (!done) nanosleep(&(struct timespec){0, 200000}, NULL);
        }
        if (msg == ASK_QUIT) break;
        if (msg == ASK_STOP) {
            atomic_store(&r->sh->stop, 1);
            continue;
        }
        int first = deal_take(r->sh, r->chunk, r->n_todo, r->workers);
        MPI_Send(&first, 1, MPI_INT, st.MPI_SOURCE, TAG_GIVE, r->mpi->deal);
    }
    return NULL;
}

static int mpi_init(collect_run *r)
{
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "heurist-collect %s: MPI_Init_thread failed\n", r->cmd);
        return 1;
    }
    if (!(r->mpi = calloc(1, sizeof *r->mpi))) {
        fprintf(stderr, "heurist-collect %s: out of memory\n", r->cmd);
        MPI_Finalize();
        return 1;
    }
    run_mpi *m = r->mpi;
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &m->local_rank);
    MPI_Comm_size(local, &m->local_size);
    MPI_Comm_free(&local);
    MPI_Comm_dup(MPI_COMM_WORLD, &m->deal);
    if (provided < MPI_THREAD_MULTIPLE) {
        /* every rank sees the same level: they all refuse */
        fprintf(stderr, "heurist-collect %s: the MPI library gives thread level %d, rank 0's dealer thread needs "
                        "MPI_THREAD_MULTIPLE (%d)\n", r->cmd, provided, MPI_THREAD_MULTIPLE);
        return 1;
    }
    r->workers = m->size;
    r->worker = m->rank;
    r->device = m->local_rank;
    r->merger = m->rank == 0;
    return 0;
}
#endif

int collect_run_init(collect_run *r, const char *cmd, const char *gpus, int chunk)
{
    memset(r, 0, sizeof *r);
    r->cmd = cmd;
    r->chunk = chunk > 0 ? chunk : 1;
    r->t_start = cli_now_s();
    r->workers = 1;
    r->merger = 1;
    r->bind = 1;
    void *sh = mmap(NULL, sizeof *r->sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        fprintf(stderr, "heurist-collect %s: shared memory: %s\n", cmd, strerror(errno));
        return 1;
    }
    r->sh = sh;
    atomic_init(&r->sh->next, 0);
    atomic_init(&r->sh->stop, 0);
    atomic_init(&r->sh->stopped, 0);
    if (launched_by_mpi()) {
#ifdef HEURIST_COLLECT_MPI
        if (mpi_init(r)) return 1;
        if (gpus) {
            if (r->merger) fprintf(stderr, "heurist-collect %s: --gpus does not combine with mpirun: one rank per GPU\n", cmd);
            return 2;
        }
        return 0;
#else
        const char *n = getenv("OMPI_COMM_WORLD_SIZE");
        if (n && atoi(n) > 1) {
            fprintf(stderr, "heurist-collect %s: this build has no MPI (configure where find_package(MPI) finds it), "
                            "and %s ranks would write the same files: use --gpus on one host\n", cmd, n);
            return 1;
        }
#endif
    }
    if (!gpus) return 0;
    int devices = 0;
    if (strcmp(gpus, "all") == 0) {
        double t0 = cli_now_s();
        int counted = collect_device_count(&devices);
        r->count_s = cli_now_s() - t0;
        if (counted) {
            fprintf(stderr, "heurist-collect %s: --gpus all: %s\n", cmd, collect_last_error());
            return 1;
        }
        if (devices < 1) {
            fprintf(stderr, "heurist-collect %s: --gpus all: no GPU is visible\n", cmd);
            return 1;
        }
        r->workers = devices < RUN_MAX_WORKERS ? devices : RUN_MAX_WORKERS;
        return 0;
    }
    char *end;
    long n = strtol(gpus, &end, 10);
    if (end == gpus || *end || n < 1 || n > RUN_MAX_WORKERS) {
        fprintf(stderr, "heurist-collect %s: --gpus '%s': expected all or a count in [1, %d]\n", cmd, gpus, RUN_MAX_WORKERS);
        return 2;
    }
    r->workers = (int)n;
    return 0;
}

int collect_run_plans(const collect_run *r)
{
    return !r->mpi || r->merger;
}

int collect_run_share(collect_run *r, int **todo, int *n_todo)
{
#ifdef HEURIST_COLLECT_MPI
    if (r->mpi) {
        /* rank 0 sends -1 when it could not plan: every rank ends */
        MPI_Bcast(n_todo, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (*n_todo < 0) return 1;
        if (!r->merger && !(*todo = malloc(((size_t)*n_todo + 1) * sizeof **todo))) {
            fprintf(stderr, "heurist-collect %s: out of memory\n", r->cmd);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Bcast(*todo, *n_todo, MPI_INT, 0, MPI_COMM_WORLD);
        return 0;
    }
#endif
    (void)r;
    (void)todo;
    return *n_todo < 0;
}

int collect_run_start(collect_run *r, int n_todo)
{
    r->n_todo = n_todo;
    r->next = r->end = 0;
    r->t_began = cli_now_s();
#ifdef HEURIST_COLLECT_MPI
    if (r->mpi) {
        if (r->merger && r->workers > 1) {
            if (pthread_create(&r->mpi->thread, NULL, dealer_main, r)) {
                fprintf(stderr, "heurist-collect %s: cannot start the dealer thread\n", r->cmd);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            r->mpi->thread_on = 1;
        }
        return 0;
    }
#endif
    if (r->workers == 1) return 0;
    /* nothing buffered may be written twice, by the parent and by a child */
    fflush(stdout);
    fflush(stderr);
    pid_t pids[RUN_MAX_WORKERS];
    int started = 0;
    for (; started < r->workers; started++) {
        pid_t p = fork();
        if (p < 0) {
            fprintf(stderr, "heurist-collect %s: fork: %s\n", r->cmd, strerror(errno));
            atomic_store(&r->sh->stop, 1);
            r->job_rc = 1;
            break;
        }
        if (p == 0) {
            r->t_began = cli_now_s();
            r->worker = r->device = started;
            r->forked = 1;
            r->merger = 0;
            return 0;
        }
        pids[started] = p;
    }
    r->worker = -1;
    for (int left = started; left > 0;) {
        int st;
        pid_t p = waitpid(-1, &st, 0);
        if (p < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "heurist-collect %s: waitpid: %s\n", r->cmd, strerror(errno));
            r->job_rc = 1;
            break;
        }
        int w = 0;
        while (w < started && pids[w] != p) w++;
        if (w == started) continue;
        left--;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
        atomic_store(&r->sh->stop, 1);
        if (WIFSIGNALED(st)) {
            fprintf(stderr, "heurist-collect %s: worker %d (GPU %d) killed by signal %d (%s): the others stop after "
                            "their current problem\n", r->cmd, w, w, WTERMSIG(st), strsignal(WTERMSIG(st)));
            r->job_rc = worse(r->job_rc, 1);
        } else {
            fprintf(stderr, "heurist-collect %s: worker %d (GPU %d) ended with status %d: the others stop after their "
                            "current problem\n", r->cmd, w, w, WEXITSTATUS(st));
            r->job_rc = worse(r->job_rc, WEXITSTATUS(st));
        }
    }
    r->t_ended = cli_now_s();
    for (int w = 0; w < started; w++)
        if (r->sh->has_times[w]) times_merge(r, w, &r->sh->times[w]);
    return 0;
}

int collect_run_next(collect_run *r)
{
    if (r->next < r->end) return r->next++;
    int first = -1;
#ifdef HEURIST_COLLECT_MPI
    if (r->mpi && !r->merger) {
        int ask = ASK_CHUNK;
        if (MPI_Send(&ask, 1, MPI_INT, 0, TAG_ASK, r->mpi->deal) != MPI_SUCCESS ||
            MPI_Recv(&first, 1, MPI_INT, 0, TAG_GIVE, r->mpi->deal, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            first = -1;
    } else
#endif
        first = deal_take(r->sh, r->chunk, r->n_todo, r->workers);
    if (first < 0) return -1;
    r->next = first;
    r->end = first + collect_deal_chunk(first, r->n_todo, r->chunk, r->workers);
    return r->next++;
}

void collect_run_stop(collect_run *r)
{
    r->next = r->end;
#ifdef HEURIST_COLLECT_MPI
    if (r->mpi && !r->merger) {
        int ask = ASK_STOP;
        MPI_Send(&ask, 1, MPI_INT, 0, TAG_ASK, r->mpi->deal);
        return;
    }
#endif
    atomic_store(&r->sh->stop, 1);
}

int collect_run_finish(collect_run *r, int rc, int stopped, const collect_worker_times *times)
{
    if (stopped) atomic_store(&r->sh->stopped, 1);
    collect_worker_times none = {0};
    if (!times) times = &none;
#ifdef HEURIST_COLLECT_MPI
    if (r->mpi) {
        int mine[2] = {rc, stopped}, *all = r->merger ? calloc(2 * (size_t)r->workers, sizeof *all) : NULL;
        double tm[4] = {times->startup, times->measuring, times->closing, times->problems};
        double *tall = r->merger ? calloc(4 * (size_t)r->workers, sizeof *tall) : NULL;
        MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Gather(tm, 4, MPI_DOUBLE, tall, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (r->merger) {
            r->t_ended = cli_now_s();
            for (int w = 0; tall && w < r->workers; w++)
                times_merge(r, w, &(collect_worker_times){tall[4 * w], tall[4 * w + 1], tall[4 * w + 2], (int)tall[4 * w + 3]});
            free(tall);
            r->job_rc = rc;
            r->job_stopped = stopped;
            for (int w = 1; all && w < r->workers; w++) {
                r->job_stopped |= all[2 * w + 1];
                if (all[2 * w]) {
                    fprintf(stderr, "heurist-collect %s: rank %d ended with status %d (its message above)\n", r->cmd, w,
                            all[2 * w]);
                    r->job_rc = worse(r->job_rc, all[2 * w]);
                }
            }
            free(all);
            if (r->mpi->thread_on) {
                int quit = ASK_QUIT;
                MPI_Send(&quit, 1, MPI_INT, 0, TAG_ASK, r->mpi->deal);
                pthread_join(r->mpi->thread, NULL);
                r->mpi->thread_on = 0;
            }
        }
        return rc;
    }
#endif
    if (r->forked) {
        r->sh->times[r->worker] = *times;
        r->sh->has_times[r->worker] = 1;
    } else if (r->worker >= 0) {
        r->job_rc = rc;
        r->t_ended = cli_now_s();
        times_merge(r, r->worker, times);
    }
    if (r->merger) r->job_stopped = atomic_load(&r->sh->stopped);
    return rc;
}

_Noreturn void collect_run_exit(collect_run *r, int rc)
{
    (void)r;
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
}

void collect_run_times_print(const collect_run *r, int problems, double t_merge)
{
    double now = cli_now_s(), wall = now - r->t_start, plan = r->t_began - r->t_start;
    printf("timings: plan %.2f s", plan);
    if (r->count_s > 0) printf(" (GPUs counted in %.2f s)", r->count_s);
    printf(", start-up %.2f s (slowest, worker %d), measuring %.2f s (longest, worker %d: %d problems), closing %.2f s, "
           "workers ended at %.2f s, merge %.2f s, wall %.2f s\n", r->slowest.startup, r->slowest_startup,
           r->slowest.measuring, r->slowest_measuring, r->slowest.problems, r->slowest.closing, r->t_ended - r->t_start,
           now - t_merge, wall);
    printf("throughput: %.2f problems/s over the wall time, %.2f over the longest measuring (steady state)\n",
           wall > 0 ? problems / wall : 0.0, r->slowest.measuring > 0 ? problems / r->slowest.measuring : 0.0);
}

void collect_run_bind(const collect_run *r, const char *bus)
{
    const char *tag = collect_run_tag(r);
    if (!r->bind) {
        printf("%sGPU %d (bus %s): not bound (--no-bind)\n", tag, r->device, bus);
        return;
    }
    const char *sysfs = getenv("HEURIST_COLLECT_SYSFS");
    char msg[512];
    collect_bind_gpu(sysfs && *sysfs ? sysfs : "/sys", bus, msg, sizeof msg);
    printf("%sGPU %d (bus %s): %s\n", tag, r->device, bus, msg);
}

void collect_run_gpu_columns(const collect_run *r, const char *bus, char *buf, size_t size)
{
    char host[256] = "?";
    if (gethostname(host, sizeof host - 1)) snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    /* a tab or newline in a host name would break the table's columns */
    for (char *c = host; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = '_';
    snprintf(buf, size, "%d\t%s\t%d\t%s", r->worker, host, r->device, bus);
}

void collect_run_free(collect_run *r)
{
#ifdef HEURIST_COLLECT_MPI
    if (r->mpi) {
        MPI_Comm_free(&r->mpi->deal);
        MPI_Finalize();
        free(r->mpi);
        r->mpi = NULL;
    }
#endif
    if (r->sh) munmap(r->sh, sizeof *r->sh);
    r->sh = NULL;
}

const char *collect_run_tag(const collect_run *r)
{
    static _Thread_local char tag[48];
    if (r->workers <= 1 || r->worker < 0) return "";
    snprintf(tag, sizeof tag, "[worker %d/%d] ", r->worker, r->workers);
    return tag;
}
