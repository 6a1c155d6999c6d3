/* client_sync.c -- the worker client's threads and its step (client.h:
 * PER-BUCKET PULL, PARALLELISM, STREAMED PUSHES): a receiver per server,
 * a pusher per server when S > 1, the queue of buckets between the caller
 * and the pushers, and the pull generation between the caller and the
 * receivers, all under one lock (c->mu). The threads, the lock and the
 * conditions are the executor's (cfg->exec: POSIX threads, or SimGrid
 * actors in bin/psring_sim; common/train/overlap.h, THE EXECUTOR).
 *
 * The pushers take the buckets from the queue, each at its own pace; the
 * receivers run one generation (c->pull_gen) per ps_client_pull_begin,
 * whose step is written under c->mu before the generation is bumped and
 * not changed until every receiver has reported back, so they read it
 * without the lock.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/socket.h>

#include "base/err.h"
#include "client_internal.h"
#include "frames.h"
#include "train/overlap.h"

/* ------------------------------------------------------------ threads */

/* conn_thread: server k's parts of the queued buckets, in order, until
 * quit (S > 1; client.h, STREAMED PUSHES). An entry is not overwritten
 * before every pusher has taken it, and a failure drops the entries
 * after it unsent. */
static void conn_thread(void *arg)
{
    struct ps_conn *k = arg;
    struct ps_client *c = k->owner;
    const struct overlap_exec *ex = c->ex;

    ex->lock(c->mu);
    for (;;) {
        struct ps_push job;
        int rc = 0;

        while (!c->quit && k->taken == c->head)
            ex->wait(c->go, c->mu);
        if (c->quit)
            break;
        job = c->queue[k->taken % PS_CLIENT_QUEUE];
        if (c->failed < 0) {
            ex->unlock(c->mu);
            rc = frames_push(k, job.step, &job.meta, job.grad, job.first, job.count, k->err);
            ex->lock(c->mu);
        }
        if (rc != 0) {
            k->rc = rc;
            if (c->failed < 0)
                c->failed = k->index;
        }
        k->taken++;
        ex->broadcast(c->done);
    }
    ex->unlock(c->mu);
}

/* receiver_thread: server k's WEIGHTS of each pull generation into the
 * client's buffer (PER-BUCKET PULL), until quit. pull_step is written
 * under mu before pull_gen is bumped and not changed until every receiver
 * has reported. */
static void receiver_thread(void *arg)
{
    struct ps_conn *k = arg;
    struct ps_client *c = k->owner;
    const struct overlap_exec *ex = c->ex;
    int rc, told;
    double end;

    ex->lock(c->mu);
    for (;;) {
        uint64_t gen;

        while (!c->quit && c->pull_gen == k->rseen)
            ex->wait(c->rgo, c->mu);
        if (c->quit)
            break;
        gen = c->pull_gen;
        ex->unlock(c->mu);
        rc = frames_receive(k, c->pull_step, c->incoming, &told, k->rerr);
        /* OWN TIMELINE (client.h): read before the lock, which may wait. */
        end = rc == 0 && c->io->own_end ? c->io->own_end(c->io_ctx, k) : NAN;
        ex->lock(c->mu);
        k->rend = end;
        k->rrc = rc;
        k->rtold = rc != 0 && told;
        k->rseen = gen;
        ex->broadcast(c->rdone);
    }
    ex->unlock(c->mu);
}

/* sync_free: the lock and the conditions that exist. */
static void sync_free(struct ps_client *c)
{
    void **conds[] = { &c->go, &c->done, &c->rgo, &c->rdone };

    for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++)
        if (*conds[i]) {
            c->ex->cond_free(*conds[i]);
            *conds[i] = NULL;
        }
    if (c->mu)
        c->ex->mutex_free(c->mu);
    c->mu = NULL;
    c->sync_ready = 0;
}

int client_sync_start(struct ps_client *c, char *err)
{
    const struct overlap_exec *ex = c->ex;
    int rc = -ENOMEM;

    c->mu = ex->mutex_new();
    c->go = ex->cond_new();
    c->done = ex->cond_new();
    c->rgo = ex->cond_new();
    c->rdone = ex->cond_new();
    if (!c->mu || !c->go || !c->done || !c->rgo || !c->rdone) {
        sync_free(c);
        err_say(err, "cannot set up the per-server threads: %s", strerror(ENOMEM));
        return -ENOMEM;
    }
    c->sync_ready = 1;
    /* The threads start from the queue and the pull generation as they
     * are now (a client connected again counts on from there). */
    c->failed = -1;
    for (int i = 0; i < c->nservers; i++) {
        struct ps_conn *k = &c->conns[i];

        k->taken = c->head;
        k->rseen = c->pull_gen;
        if ((rc = ex->start(receiver_thread, k, &k->rthread)) != 0)
            goto fail;
        k->rstarted = 1;
        if (c->nservers == 1)
            continue;
        if ((rc = ex->start(conn_thread, k, &k->thread)) != 0)
            goto fail;
        k->started = 1;
    }
    return 0;
fail:
    err_say(err, "cannot start the per-server threads: %s", strerror(-rc));
    return rc;
}

void client_shutdown_all(struct ps_client *c, int how)
{
    for (int i = 0; i < c->nservers; i++)
        if (c->conns[i].up)
            c->io->shutdown(c->io_ctx, &c->conns[i], how);
}

void client_sync_stop(struct ps_client *c)
{
    const struct overlap_exec *ex = c->ex;

    if (!c->sync_ready)
        return;
    ex->lock(c->mu);
    c->quit = 1;
    ex->broadcast(c->go);
    ex->broadcast(c->rgo);
    ex->unlock(c->mu);
    client_shutdown_all(c, SHUT_RDWR);
    for (int i = 0; i < c->nservers; i++) {
        if (c->conns[i].started) {
            ex->join(c->conns[i].thread);
            c->conns[i].started = 0;
        }
        if (c->conns[i].rstarted) {
            ex->join(c->conns[i].rthread);
            c->conns[i].rstarted = 0;
        }
    }
    c->pulling = 0;     /* a pull cut short: the next connect starts afresh */
    sync_free(c);
}

/* ------------------------------------------------------------ a step */

/* slowest: the fewest queue entries any pusher has finished (under mu). */
static uint64_t slowest(const struct ps_client *c)
{
    uint64_t least = c->head;

    for (int i = 0; i < c->nservers; i++)
        if (c->conns[i].taken < least)
            least = c->conns[i].taken;
    return least;
}

/* op: one bucket to every server (client.h: ps_client_push); in this
 * thread when S = 1, else queued for the servers' pushers (STREAMED
 * PUSHES), and waited for when it is the pass's last (first = 0). */
static int op(struct ps_client *c, uint64_t step, const struct proto_push_meta *meta,
              const void *grad, uint64_t first, uint64_t count, char *err)
{
    const struct overlap_exec *ex = c->ex;
    int failed;

    if (!meta)
        meta = &frames_no_meta;
    if (c->nservers == 1)
        return frames_push(&c->conns[0], step, meta, grad, first, count, err);
    ex->lock(c->mu);
    while (c->failed < 0 && c->head - slowest(c) >= PS_CLIENT_QUEUE)
        ex->wait(c->done, c->mu);
    if (c->failed < 0) {
        c->queue[c->head % PS_CLIENT_QUEUE] = (struct ps_push){ step, *meta, grad, first, count };
        c->head++;
        ex->broadcast(c->go);
        while (first == 0 && c->failed < 0 && slowest(c) < c->head)
            ex->wait(c->done, c->mu);
    }
    failed = c->failed;
    if (failed >= 0) {
        /* Report the first failure now; the other pushers may be blocked
         * on servers that are fine: cut them short, and wait until they
         * have dropped the rest, so that no gradient is touched once this
         * returns. */
        client_shutdown_all(c, SHUT_RDWR);
        while (slowest(c) < c->head)
            ex->wait(c->done, c->mu);
    }
    ex->unlock(c->mu);
    if (failed < 0)
        return 0;
    memcpy(err, c->conns[failed].err, ERR_LEN);
    return c->conns[failed].rc;
}

int ps_client_step(struct ps_client *c, uint64_t step, const struct proto_push_meta *meta,
                   const void *grad, void *weights, char *err)
{
    int rc;

    if (weights && (rc = ps_client_pull_begin(c, step, err)) != 0)
        return rc;
    if ((rc = op(c, step, meta, grad, 0, c->n, err)) != 0)
        return rc;
    return weights ? ps_client_pull(c, step, weights, err) : 0;
}

int ps_client_push(struct ps_client *c, uint64_t step, const struct proto_push_meta *meta,
                   const void *grad, uint64_t first, uint64_t count, char *err)
{
    if (count == 0 || first > c->n || count > c->n - first) {
        err_say(err, "step %llu: push of elements [%llu, %llu) outside the %zu parameters",
            ull(step), ull(first), ull(first + count), c->n);
        return ERR_USAGE;
    }
    return op(c, step, meta, grad, first, count, err);
}

int ps_client_pull_begin(struct ps_client *c, uint64_t step, char *err)
{
    int rc = 0;

    c->ex->lock(c->mu);
    if (c->pulling && c->pull_step != step) {
        err_say(err, "step %llu: the weights of step %llu are still being received",
            ull(step), ull(c->pull_step));
        rc = ERR_USAGE;
    } else if (!c->pulling) {
        c->pulling = 1;
        c->pull_step = step;
        c->pull_gen++;
        c->ex->broadcast(c->rgo);
    }
    c->ex->unlock(c->mu);
    return rc;
}

double ps_client_own_late(const struct ps_client *c, double t0, double now)
{
    double end = t0;

    if (!(c->link_bw > 0.0) && !(c->link_latency > 0.0))
        return 0.0;             /* no emulated link: the machine is the host */
    for (int i = 0; i < c->nservers; i++) {
        const struct ps_conn *k = &c->conns[i];
        if (k->hi == k->lo)
            continue;
        if (!(k->rend <= now))
            return 0.0;         /* NAN: unknown */
        end = end > k->rend ? end : k->rend;
    }
    return now - end > 0.0 && now - end <= LINK_STAMP_SPAN ? now - end : 0.0;
}

int ps_client_pull(struct ps_client *c, uint64_t step, void *weights, char *err)
{
    int failed = -1, rc;
    double t0 = c->io->now ? c->io->now(c->io_ctx) : NAN;

    c->pull_late = 0.0;
    if ((rc = ps_client_pull_begin(c, step, err)) != 0)
        return rc;
    c->ex->lock(c->mu);
    for (;;) {
        int left = 0;

        for (int i = 0; i < c->nservers; i++) {
            struct ps_conn *k = &c->conns[i];
            if (k->rseen != c->pull_gen)
                left++;
            else if (k->rrc != 0 && failed < 0)
                failed = i;
        }
        if (left == 0)
            break;
        if (failed >= 0) {
            /* The first failure is the one to report; the others may wait
             * on servers that are fine: cut them short. */
            client_shutdown_all(c, SHUT_RD);
        }
        c->ex->wait(c->rdone, c->mu);
    }
    c->pulling = 0;
    c->ex->unlock(c->mu);
    if (failed >= 0) {
        memcpy(err, c->conns[failed].rerr, ERR_LEN);
        return c->conns[failed].rrc;
    }
    if (c->io->now && !isnan(t0)) {
        c->pull_late = ps_client_own_late(c, t0, c->io->now(c->io_ctx));
        c->late_total += c->pull_late;
    }
    if (weights && c->incoming)
        memcpy(weights, c->incoming, c->n * c->elem);
    return 0;
}

double ps_client_pull_late(const struct ps_client *c)
{
    return c->pull_late;
}
