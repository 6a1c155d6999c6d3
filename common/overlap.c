/* overlap.c -- the communication thread (overlap.h says what and why).
 *
 * A pass is an array of jobs and two counters under one mutex: nsub, the
 * jobs handed over, and ndone, those finished. The thread sleeps on the
 * condition variable until ndone < nsub, runs jobs[ndone] without the
 * lock (the caller only appends behind it), and wakes the caller after
 * each. busy marks "inside the run function", so that a wait after a
 * failure returns only when the thread has let go of what it uses.
 */
#include "overlap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

static void *thread_main(void *arg)
{
    struct overlap *o = arg;
    char err[ERR_LEN];

    pthread_mutex_lock(&o->mu);
    for (;;) {
        struct overlap_job *job;
        int rc;

        while (!o->quit && (o->rc != 0 || o->ndone == o->nsub))
            pthread_cond_wait(&o->cv, &o->mu);
        if (o->quit)
            break;
        job = &o->jobs[o->ndone];
        o->busy = 1;
        pthread_mutex_unlock(&o->mu);
        err[0] = '\0';
        job->t0 = clock_src_now(o->clock);
        rc = o->run(o->ctx, job, err);
        job->t1 = clock_src_now(o->clock);
        pthread_mutex_lock(&o->mu);
        o->busy = 0;
        if (rc != 0) {
            o->rc = rc;
            memcpy(o->err, err, sizeof o->err);
        } else {
            o->ndone++;
        }
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

int overlap_init(struct overlap *o, overlap_fn run, void *ctx, size_t cap,
                 const struct clock_src *clock, char *err)
{
    int rc;

    memset(o, 0, sizeof *o);
    o->run = run;
    o->ctx = ctx;
    o->clock = clock;
    o->cap = cap;
    o->jobs = calloc(cap, sizeof *o->jobs);
    if (!o->jobs) {
        snprintf(err, ERR_LEN, "out of memory for %zu buckets", cap);
        return -ENOMEM;
    }
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    if ((rc = pthread_create(&o->thread, NULL, thread_main, o)) != 0) {
        snprintf(err, ERR_LEN, "cannot start the communication thread: %s", strerror(rc));
        return -rc;
    }
    o->started = 1;
    return 0;
}

/* wake: set *flag under the lock (when flag is not NULL) and wake the
 * thread and any waiter. */
static void wake(struct overlap *o, int *flag)
{
    pthread_mutex_lock(&o->mu);
    if (flag)
        *flag = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

void overlap_destroy(struct overlap *o)
{
    if (o->started) {
        wake(o, &o->quit);      /* the thread leaves its loop and returns */
        pthread_join(o->thread, NULL);
        o->started = 0;
    }
    if (o->jobs) {
        pthread_cond_destroy(&o->cv);
        pthread_mutex_destroy(&o->mu);
    }
    free(o->jobs);
    o->jobs = NULL;
}

void overlap_begin(struct overlap *o)
{
    pthread_mutex_lock(&o->mu);
    o->nsub = o->ndone = 0;
    o->rc = 0;
    o->err[0] = '\0';
    pthread_mutex_unlock(&o->mu);
}

long overlap_submit(struct overlap *o, const struct overlap_job *job)
{
    long i = -1;

    pthread_mutex_lock(&o->mu);
    if (o->rc == 0 && o->nsub < o->cap) {
        o->jobs[o->nsub] = *job;
        i = (long)o->nsub++;
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
    return i;
}

int overlap_wait(struct overlap *o, char *err)
{
    int rc;

    pthread_mutex_lock(&o->mu);
    while (o->busy || (o->rc == 0 && o->ndone < o->nsub))
        pthread_cond_wait(&o->cv, &o->mu);
    rc = o->rc;
    if (rc != 0)
        memcpy(err, o->err, ERR_LEN);
    pthread_mutex_unlock(&o->mu);
    return rc;
}

const struct overlap_job *overlap_job_at(const struct overlap *o, size_t i)
{
    return i < o->nsub ? &o->jobs[i] : NULL;
}
