/* overlap.h -- a communication thread that all-reduces a step's buckets in
 * order while the caller's backward pass goes on.
 *
 * One thread per process (overlap_init starts it, overlap_destroy joins
 * it). Per step the caller opens a pass (overlap_begin), hands over jobs as
 * their data becomes final (overlap_submit: a bucket the moment its last
 * layer's gradient is ready, then the count/loss trailer), and waits for
 * all of them (overlap_wait) before it reads the sums. The thread runs the
 * jobs strictly in submission order, one at a time, each as one
 * coll_allreduce: every rank submits the same jobs in the same order, so
 * the all-reduces pair up around the ring exactly as they do when the same
 * jobs are run one after another on the caller's thread (overlap_run, the
 * --no-overlap path): the same calls on the same bytes, hence the same
 * bits, with or without the thread.
 *
 * THREADING. Between overlap_begin and the return of overlap_wait the coll
 * (and its transport and link) belong to the thread; the caller must not
 * touch them, nor the bytes of a submitted job. It may write the rest of
 * the buffer (the layers still being computed). Outside a pass the thread
 * sleeps and the caller owns everything again.
 *
 * CHECKS. A job with check set is first checked for NaN and Inf
 * (vec_check_finite), as train.c checks the whole gradient without
 * buckets: "gradient element I is X before the all-reduce", I counted from
 * the job's `index`.
 *
 * ERRORS. A failed job stops the pass: the jobs after it are not run (the
 * ring is broken, or this rank refuses to send a NaN), and overlap_wait
 * returns its code and its line once the thread is idle, so the caller can
 * then abort the transport (xport_tcp_abort) from its own thread.
 *
 * OWNERSHIP. overlap_init allocates room for `cap` jobs per pass; the
 * coll is the caller's and must outlive the overlap. Job buffers are the
 * caller's. overlap_destroy frees everything, also after a failed init.
 */
#ifndef OVERLAP_H
#define OVERLAP_H

#include <pthread.h>
#include <stddef.h>

#include "coll.h"
#include "err.h"

struct overlap_job {
    void *buf;              /* n elements of the coll's dtype */
    size_t n;
    size_t index;           /* buf's first element in the whole vector, for messages */
    int check;              /* check finite before sending */
    double t0, t1;          /* OUT: when its all-reduce began and ended (clock_now) */
};

struct overlap {
    struct coll *coll;
    int dtype;
    struct overlap_job *jobs;   /* cap, owned */
    size_t cap, nsub, ndone;
    int rc, busy, quit, started;
    char err[ERR_LEN];
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* overlap_init: room for cap jobs per pass, and the thread. 0, or a
 * negative code with one line in err. */
int overlap_init(struct overlap *o, struct coll *coll, int dtype, size_t cap, char *err);
void overlap_destroy(struct overlap *o);

/* overlap_begin: a new pass (the previous one must have been waited for). */
void overlap_begin(struct overlap *o);

/* overlap_submit: queue job (copied; its t0/t1 are filled in the copy,
 * read them with overlap_job_at after overlap_wait). Returns the job's
 * index in the pass, or -1 when the pass already holds cap jobs (a
 * caller's bug) or has failed (the job is then dropped). */
long overlap_submit(struct overlap *o, const struct overlap_job *job);

/* overlap_wait: until every submitted job is done, or one failed and the
 * thread is idle. 0, or the failed job's code and line (copied to err). */
int overlap_wait(struct overlap *o, char *err);

/* overlap_job_at: the i-th job of the last pass, with its times. */
const struct overlap_job *overlap_job_at(const struct overlap *o, size_t i);

/* overlap_run: one job on the caller's thread, exactly as the thread runs
 * it (the --no-overlap path). Fills job->t0, t1. */
int overlap_run(struct coll *coll, int dtype, struct overlap_job *job, char *err);

#endif /* OVERLAP_H */
