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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"

/* ---------------------------------------------- the POSIX executor */

static void *px_mutex_new(void)
{
    pthread_mutex_t *m = malloc(sizeof *m);

    if (m)
        pthread_mutex_init(m, NULL);
    return m;
}

static void px_mutex_free(void *m)
{
    pthread_mutex_destroy(m);
    free(m);
}

static void px_lock(void *m) { pthread_mutex_lock(m); }
static void px_unlock(void *m) { pthread_mutex_unlock(m); }

static void *px_cond_new(void)
{
    pthread_cond_t *c = malloc(sizeof *c);

    if (c)
        pthread_cond_init(c, NULL);
    return c;
}

static void px_cond_free(void *c)
{
    pthread_cond_destroy(c);
    free(c);
}

static void px_wait(void *c, void *m) { pthread_cond_wait(c, m); }

static int px_wait_for(void *c, void *m, double seconds)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)seconds;
    until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    return pthread_cond_timedwait(c, m, &until) == ETIMEDOUT;
}
static void px_broadcast(void *c) { pthread_cond_broadcast(c); }

struct px_start {
    pthread_t t;
    void (*fn)(void *);
    void *arg;
};

static void *px_main(void *p)
{
    struct px_start *s = p;

    s->fn(s->arg);
    return NULL;
}

static int px_start(void (*fn)(void *), void *arg, void **handle)
{
    struct px_start *s = malloc(sizeof *s);
    int rc;

    if (!s)
        return -ENOMEM;
    s->fn = fn;
    s->arg = arg;
    if ((rc = pthread_create(&s->t, NULL, px_main, s)) != 0) {
        free(s);
        return -rc;
    }
    *handle = s;
    return 0;
}

static void px_join(void *handle)
{
    struct px_start *s = handle;

    pthread_join(s->t, NULL);
    free(s);
}

const struct overlap_exec overlap_exec_pthread = {
    px_mutex_new, px_mutex_free, px_lock, px_unlock, px_cond_new, px_cond_free,
    px_wait, px_wait_for, px_broadcast, px_start, px_join,
};

/* ------------------------------------------------------------ the pass */

static void thread_main(void *arg)
{
    struct overlap *o = arg;
    const struct overlap_exec *ex = o->ex;
    char err[ERR_LEN];

    ex->lock(o->mu);
    for (;;) {
        struct overlap_job *job;
        int rc;

        while (!o->quit && (o->rc != 0 || o->ndone == o->nsub))
            ex->wait(o->cv, o->mu);
        if (o->quit)
            break;
        job = &o->jobs[o->ndone];
        o->busy = 1;
        ex->unlock(o->mu);
        err[0] = '\0';
        job->t0 = clock_src_now(o->clock);
        job->late = 0.0;
        rc = o->run(o->ctx, job, err);
        job->t1 = clock_src_now(o->clock) - job->late;
        ex->lock(o->mu);
        o->busy = 0;
        if (rc != 0) {
            o->rc = rc;
            memcpy(o->err, err, sizeof o->err);
        } else {
            o->ndone++;
        }
        ex->broadcast(o->cv);
    }
    ex->unlock(o->mu);
}

int overlap_init(struct overlap *o, overlap_fn run, void *ctx, size_t cap,
                 const struct clock_src *clock, const struct overlap_exec *ex, char *err)
{
    int rc;

    memset(o, 0, sizeof *o);
    o->run = run;
    o->ctx = ctx;
    o->clock = clock;
    o->cap = cap;
    o->ex = ex ? ex : &overlap_exec_pthread;
    o->jobs = calloc(cap, sizeof *o->jobs);
    o->mu = o->jobs ? o->ex->mutex_new() : NULL;
    o->cv = o->mu ? o->ex->cond_new() : NULL;
    if (!o->cv) {
        snprintf(err, ERR_LEN, "out of memory for %zu buckets", cap);
        return -ENOMEM;
    }
    if ((rc = o->ex->start(thread_main, o, &o->thread)) != 0) {
        snprintf(err, ERR_LEN, "cannot start the communication thread: %s", strerror(-rc));
        return rc;
    }
    o->started = 1;
    return 0;
}

/* wake: set *flag under the lock (when flag is not NULL) and wake the
 * thread and any waiter. */
static void wake(struct overlap *o, int *flag)
{
    o->ex->lock(o->mu);
    if (flag)
        *flag = 1;
    o->ex->broadcast(o->cv);
    o->ex->unlock(o->mu);
}

void overlap_destroy(struct overlap *o)
{
    if (o->started) {
        wake(o, &o->quit);      /* the thread leaves its loop and returns */
        o->ex->join(o->thread);
        o->started = 0;
    }
    if (o->cv)
        o->ex->cond_free(o->cv);
    if (o->mu)
        o->ex->mutex_free(o->mu);
    o->cv = o->mu = NULL;
    free(o->jobs);
    o->jobs = NULL;
}

void overlap_begin(struct overlap *o)
{
    o->ex->lock(o->mu);
    o->nsub = o->ndone = 0;
    o->rc = 0;
    o->err[0] = '\0';
    o->ex->unlock(o->mu);
}

long overlap_submit(struct overlap *o, const struct overlap_job *job)
{
    long i = -1;

    o->ex->lock(o->mu);
    if (o->rc == 0 && o->nsub < o->cap) {
        o->jobs[o->nsub] = *job;
        i = (long)o->nsub++;
        o->ex->broadcast(o->cv);
    }
    o->ex->unlock(o->mu);
    return i;
}

int overlap_wait(struct overlap *o, char *err)
{
    int rc;

    o->ex->lock(o->mu);
    while (o->busy || (o->rc == 0 && o->ndone < o->nsub))
        o->ex->wait(o->cv, o->mu);
    rc = o->rc;
    if (rc != 0)
        memcpy(err, o->err, ERR_LEN);
    o->ex->unlock(o->mu);
    return rc;
}

const struct overlap_job *overlap_job_at(const struct overlap *o, size_t i)
{
    return i < o->nsub ? &o->jobs[i] : NULL;
}
