/* A static parallel-for over pthreads, a persistent thread team, and OpenBLAS thread control. */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

int hr_threads_resolve(int n)
{
    if (n > 0) return n;
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

void hr_blas_set_threads(int n)
{
    /* more BLAS threads than cores only adds spinning threads (and, by the thousand, memory) */
    int cores = hr_threads_resolve(0);
    n = hr_threads_resolve(n);
    openblas_set_num_threads(n < cores ? n : cores);
}

int hr_blas_threads(void)
{
    return openblas_get_num_threads();
}

typedef struct range_job {
    hr_range_fn fn;
    void *ctx;
    size_t begin, end;
    int tid;
} range_job;

static void *range_job_run(void *arg)
{
    range_job *job = arg;
    job->fn(job->ctx, job->begin, job->end, job->tid);
    return NULL;
}

int hr_parallel_for(int nthreads, size_t n, hr_range_fn fn, void *ctx)
{
    nthreads = hr_threads_resolve(nthreads);
    if ((size_t)nthreads > n) nthreads = n ? (int)n : 1;
    if (nthreads <= 1) {
        fn(ctx, 0, n, 0);
        return HR_OK;
    }
    range_job *jobs = hr_calloc((size_t)nthreads, sizeof *jobs);
    pthread_t *th = hr_calloc((size_t)nthreads, sizeof *th);
    if (!jobs || !th) {
        free(jobs);
        free(th);
        return HR_ENOMEM;
    }
    for (int t = 0; t < nthreads; t++) {
        jobs[t].fn = fn;
        jobs[t].ctx = ctx;
        jobs[t].begin = n * (size_t)t / (size_t)nthreads;
        jobs[t].end = n * (size_t)(t + 1) / (size_t)nthreads;
        jobs[t].tid = t;
    }
    int started = 1;
    for (int t = 1; t < nthreads; t++) {
        if (pthread_create(&th[t], NULL, range_job_run, &jobs[t]) != 0) break;
        started++;
    }
    /* chunks whose thread could not start run here, so the result never depends on thread creation */
    range_job_run(&jobs[0]);
    for (int t = started; t < nthreads; t++) range_job_run(&jobs[t]);
    for (int t = 1; t < started; t++) pthread_join(th[t], NULL);
    free(jobs);
    free(th);
    return HR_OK;
}

/* ---- a persistent team ---- */

struct hr_team {
    int n;                 /* members, the caller included */
    pthread_t *th;         /* (n): th[1..n) started */
    atomic_int arrived;    /* barrier: members arrived in the current phase */
    atomic_int phase;      /* barrier: bumped by the last arrival */
    atomic_int job;        /* bumped by hr_team_run to start the members; -1 ends them */
    hr_team_fn fn;
    void *ctx;
};

typedef struct team_member {
    hr_team *t;
    int tid;
} team_member;

/* Waits until *v != old: spins (a phase of a training step is tens of microseconds), then yields the core,
 * then, after ~0.1 s (the caller is in a long serial stretch, e.g. a validation pass), sleeps 0.1 ms a turn. */
static void team_wait_change(atomic_int *v, int old)
{
    for (long spin = 0; atomic_load_explicit(v, memory_order_acquire) == old; spin++) {
        if (spin < 2000) continue;
        if (spin < 200000) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

void hr_team_barrier(hr_team *t)
{
    if (!t || t->n <= 1) return;
    int phase = atomic_load_explicit(&t->phase, memory_order_acquire);
    if (atomic_fetch_add_explicit(&t->arrived, 1, memory_order_acq_rel) == t->n - 1) {
        atomic_store_explicit(&t->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&t->phase, 1, memory_order_acq_rel);
    } else {
        team_wait_change(&t->phase, phase);
    }
}

static void *team_member_main(void *arg)
{
    team_member *m = arg;
    hr_team *t = m->t;
    int seen = 0;
    for (;;) {
        team_wait_change(&t->job, seen);
        seen = atomic_load_explicit(&t->job, memory_order_acquire);
        if (seen < 0) break;
        t->fn(t->ctx, m->tid, t->n);
        hr_team_barrier(t);
    }
    free(m);
    return NULL;
}

int hr_team_create(int nthreads, hr_team **out)
{
    *out = NULL;
    hr_team *t = hr_calloc(1, sizeof *t);
    int n = hr_threads_resolve(nthreads);
    if (!t || !(t->th = hr_calloc((size_t)n, sizeof *t->th))) {
        free(t);
        return HR_ENOMEM;
    }
    atomic_init(&t->arrived, 0);
    atomic_init(&t->phase, 0);
    atomic_init(&t->job, 0);
    t->n = 1;
    int err = 0;
    for (int i = 1; i < n; i++) {
        team_member *m = hr_malloc(sizeof *m);
        if (!m) {
            err = ENOMEM;
            break;
        }
        m->t = t;
        m->tid = i;
        if ((err = pthread_create(&t->th[i], NULL, team_member_main, m)) != 0) {
            free(m);
            break;
        }
        t->n++; /* members read n only inside a job, after the next hr_team_run */
    }
    if (err) {
        /* the members started so far are told to end and joined: nothing is left spinning */
        int started = t->n;
        hr_team_free(t);
        return hr_error(err == ENOMEM || err == EAGAIN ? HR_ENOMEM : HR_EIO,
                        "cannot start a team of %d threads (started %d): %s", n, started, strerror(err));
    }
    *out = t;
    return HR_OK;
}

int hr_team_size(const hr_team *t)
{
    return t ? t->n : 1;
}

void hr_team_run(hr_team *t, hr_team_fn fn, void *ctx)
{
    if (!t || t->n <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    t->fn = fn;
    t->ctx = ctx;
    atomic_fetch_add_explicit(&t->job, 1, memory_order_acq_rel);
    fn(ctx, 0, t->n);
    hr_team_barrier(t); /* every member has returned from fn */
}

void hr_team_free(hr_team *t)
{
    if (!t) return;
    if (t->n > 1) {
        atomic_store_explicit(&t->job, -1, memory_order_release);
        for (int i = 1; i < t->n; i++) pthread_join(t->th[i], NULL);
    }
    free(t->th);
    free(t);
}
