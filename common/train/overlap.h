/* overlap.h -- a communication thread that sends a step's gradient
 * buckets in order while the caller's backward pass goes on.
 *
 * One thread per process (overlap_init starts it, overlap_destroy joins
 * it). Per step the caller opens a pass (overlap_begin), hands over jobs as
 * their data becomes final (overlap_submit: a bucket the moment its last
 * layer's gradient is ready), and waits for all of them (overlap_wait)
 * before it reads the results. The thread runs the jobs strictly in
 * submission order, one at a time, each as one call of the run function
 * given at init: common/train/step.c's, which calls the system's combine (the
 * ring's one coll_allreduce, the parameter server worker's one push to its
 * servers). Every rank submits the same jobs in the same order, so the
 * ring's all-reduces pair up around the ring exactly as they do when the
 * same jobs are run one after another on the caller's thread (the
 * --no-overlap path): the same calls on the same bytes, hence the same
 * bits, with or without the thread.
 *
 * THREADING. Between overlap_begin and the return of overlap_wait whatever
 * the run function uses (the coll, the client, their sockets and links)
 * belongs to the thread; the caller must not touch it, nor the bytes of a
 * submitted job. It may write the rest of the buffer (the layers still
 * being computed). Outside a pass the thread sleeps and the caller owns
 * everything again. What the caller writes before overlap_submit is
 * visible to the run function (the submit takes the mutex).
 *
 * ERRORS. A failed job stops the pass: the jobs after it are not run (the
 * ring is broken, a server is gone), and overlap_wait returns its code and
 * its line once the thread is idle, so the caller can then abort the
 * transport from its own thread.
 *
 * OWNERSHIP. overlap_init allocates room for `cap` jobs per pass; ctx is
 * the caller's and must outlive the overlap. Job buffers are the caller's.
 * overlap_destroy frees everything, also after a failed init.
 *
 * THE EXECUTOR (struct overlap_exec): what "a thread", "a mutex" and "a
 * condition variable" are. NULL is POSIX threads (overlap_exec_pthread).
 * bin/psring_sim gives SimGrid's (common/coll/xport_sim.c, xport_sim_exec): the
 * communication side is an actor on the rank's simulated host, and the
 * waits are SimGrid's, so a pass overlaps the simulated backward pass with
 * the simulated transfers exactly as the thread overlaps real ones. The
 * pass's logic above is the same code for both.
 */
#ifndef OVERLAP_H
#define OVERLAP_H

#include <stddef.h>

#include "base/clock.h"
#include "base/err.h"

/* An executor: handles are its own (void *). start runs fn(arg) on the
 * communication side and returns 0 or a negative errno; join waits for
 * it to return. wait releases m while it sleeps on c, as
 * pthread_cond_wait does; wait_for likewise, for at most `seconds` on the
 * executor's own clock (the wall clock, or the simulated one), and
 * returns 1 when that time ran out, 0 when woken (perhaps spuriously, as
 * pthread_cond_timedwait). The PS worker's client (common/ps/client.h)
 * runs its threads on it too. */
struct overlap_exec {
    void *(*mutex_new)(void);
    void (*mutex_free)(void *m);
    void (*lock)(void *m);
    void (*unlock)(void *m);
    void *(*cond_new)(void);
    void (*cond_free)(void *c);
    void (*wait)(void *c, void *m);
    int (*wait_for)(void *c, void *m, double seconds);
    void (*broadcast)(void *c);
    int (*start)(void (*fn)(void *arg), void *arg, void **handle);
    void (*join)(void *handle);
};

extern const struct overlap_exec overlap_exec_pthread;

struct overlap_job {
    void *buf;              /* n elements: the bucket's bytes */
    size_t n;
    size_t index;           /* buf's first element in the whole vector */
    int check;              /* the run function checks it is finite first */
    double t0, t1;          /* OUT: when its run began and ended (the clock) */
    double late;            /* OUT, by the run: how much later than on this
                               EMULATED host's own timeline its end came
                               (time waiting for a CPU another host held:
                               common/wire/link.h, OWN CORES); t1 is on
                               that timeline */
};

/* overlap_fn: send one job; 0, or a negative err.h code with one line in
 * err (ERR_LEN). Called on the communication thread. */
typedef int (*overlap_fn)(void *ctx, struct overlap_job *job, char *err);

struct overlap {
    overlap_fn run;
    void *ctx;
    const struct clock_src *clock;
    struct overlap_job *jobs;   /* cap, owned */
    size_t cap, nsub, ndone;
    int rc, busy, quit, started;
    char err[ERR_LEN];
    const struct overlap_exec *ex;
    void *thread, *mu, *cv;     /* the executor's handles */
};

/* overlap_init: room for cap jobs per pass, and the thread, which runs
 * each job as run(ctx, job, err), timed by clock (the caller's, which must
 * outlive the overlap), started by ex (NULL: POSIX threads; THE EXECUTOR).
 * 0, or a negative code with one line in err. */
int overlap_init(struct overlap *o, overlap_fn run, void *ctx, size_t cap,
                 const struct clock_src *clock, const struct overlap_exec *ex, char *err);
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

#endif /* OVERLAP_H */
