/* A static parallel-for over pthreads, and OpenBLAS thread control. */
#include "core.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);

int hr_threads_resolve(int n)
{
    if (n > 0) return n;
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

void hr_blas_set_threads(int n)
{
    openblas_set_num_threads(hr_threads_resolve(n));
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
