/* ps_actor.c -- the parameter server in simulation: S server actors and K
 * worker actors (sim.h), on the same store (common/ps/store.c) and the same
 * training step (common/train/step.c) as bin/ps_server and bin/ps_worker.
 *
 * One step, as the real system runs it (PER-BUCKET PULL, store.h RELEASE):
 *
 *   worker w   push: each bucket of its gradient (--bucket-size, the last
 *              elements first, as step.c hands them), to every server
 *              owning a part of it: one message per (bucket, server),
 *              mailbox "sS<-wW", posted and not waited for (the count and
 *              loss ride with the push that ends at the server's last
 *              element, as ps_worker's frames_push sends them); pull: the
 *              released parts from every server ("wW<-sS") until each
 *              server's whole range is in
 *   server s   one get per worker posted at a time; each push, as it
 *              completes, goes through store_push_begin/data/end, then
 *              store_release: the part every worker has pushed goes out at
 *              once to the K workers (K puts, not waited for), while the
 *              rest of the step's pushes go on. The step ends with its last
 *              release (the buffers swap); then the server waits for its
 *              puts (they end before any worker can push the next step).
 * So the pull of the first buckets overlaps the push of the later ones,
 * like the real server.
 *
 * PLACEMENTS (sim.h sim_server; sim/flags.c job_servers places them): separate servers
 * on hosts of their own, or a shard on each worker's host (colocated) and
 * extra ones, Theorem 1's split (model_ps_ranges). A message between two
 * actors on one host is a message of size 0 (it never crosses the host's
 * link; the generated platforms give each host a free loopback) and is not
 * counted in the host's bytes.
 *
 * Records: a worker's combine_s is its first push to its last pull in; a
 * server's ingress_s is the first worker's push start to the last push in,
 * egress_s the first release sent to the last one delivered.
 *
 * Sizes mode (job->real 0): the same messages with their sizes only; no
 * workload, no store: the server releases by the same rule (the part every
 * worker has pushed), counted here.
 *
 * The messaging (frames, mailboxes, channels, the loop, POISON) is
 * ps_chan.c's; this file is the two actors.
 *
 * Simplifications said out loud: a push is one message (the real worker
 * sends PUSH frames piece by piece, and headers are not counted); the
 * server's summation takes no simulated time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>

#include "train/buckets.h"
#include "base/dtype.h"
#include "coll/ring.h"
#include "ps_chan.h"
#include "ps_client.h"
#include "sim.h"
#include "train/step.h"
#include "ps/store.h"
#include "train/workload.h"
#include "coll/xport_sim.h"

/* ------------------------------------------------------------ the worker */

struct worker {
    struct sim_slot *sl;
    const struct sim_job *j;
    size_t n, es;
    double t0;
    int64_t pushed_step;        /* the step whose first push set t0 */
    struct chan *push;          /* one per server */
    sg_mailbox_t *pull;         /* one per server */
    struct loop l;              /* the gets of a pull, the pushes in flight */
    struct ps_frame **f;        /* one per server */
    uint64_t *got;              /* elements of each server's range in */
    struct psc cl;              /* real: the protocol's streams (ps_client.h) */
};

/* push_bucket: [first, first + count) of the step's gradient to every
 * server owning a part of it; not waited for (pull_all waits). */
static int push_bucket(struct worker *w, uint64_t step, const unsigned char *grad, size_t first,
                       size_t count, const struct proto_push_meta *meta, char *err)
{
    const struct sim_job *j = w->j;
    static const struct proto_push_meta none = { 0, 0 };

    if (w->pushed_step != (int64_t)step) {
        w->pushed_step = (int64_t)step;
        w->t0 = simgrid_get_clock();
    }
    if (j->real)
        return psc_push(&w->cl, step, meta, grad, first, count);
    for (int s = 0; s < j->servers; s++) {
        uint64_t lo = j->srv[s].first, hi = lo + j->srv[s].count;
        struct ps_frame *f;

        if (lo < first)
            lo = first;
        if (hi > first + count)
            hi = first + count;
        if (lo >= hi)
            continue;
        if (!(f = malloc(sizeof *f))) {
            err_say(err, "worker %d: out of memory", w->sl->rank);
            return -ENOMEM;
        }
        *f = (struct ps_frame){ w->sl->rank, step, w->t0,
                                hi == j->srv[s].first + j->srv[s].count ? *meta : none, lo,
                                hi - lo, grad ? grad + lo * w->es : NULL, NULL };
        ps_chan_send(&w->l, w->push, s, f, w->es, w->sl->host, &w->sl->bytes_out);
    }
    return 0;
}

/* pull_all: every server's released parts of step `step` until its whole
 * range is in, into weights (may be NULL), while the pushes still queued
 * go out; it returns when both are done. */
static int pull_all(struct worker *w, uint64_t step, unsigned char *weights, char *err)
{
    const struct sim_job *j = w->j;
    int rc = 0;

    if (j->real)
        return psc_pull(&w->cl, step, weights);
    for (int s = 0; s < j->servers; s++) {
        w->got[s] = 0;
        if (j->srv[s].count > 0)
            ps_loop_add(&w->l, sg_mailbox_get_async(w->pull[s], (void **)&w->f[s]), s);
    }
    while (w->l.n > 0) {
        long i = ps_wait(&w->l, w->sl, step);
        struct ps_frame *f;
        int s;

        if (i < 0)
            return (int)i;
        if (w->l.tag[i] < 0) {
            ps_put_done(&w->l, (size_t)i, w->push, w->es, w->sl->host);
            continue;
        }
        s = w->l.tag[i];
        f = w->f[s];
        if (f->rank == PS_POISON) {
            rc = ps_poisoned(w->sl, step, f, "server", s, j->srv[s].host);
            free(f);
            return rc;
        }
        if (f->step != step && rc == 0) {
            err_say(err, "worker %d: weights of step %llu from server %d, wanted %llu",
                    w->sl->rank, (unsigned long long)f->step, s, (unsigned long long)step);
            rc = ERR_PROTO_FIELD;
        }
        if (weights && rc == 0)
            memcpy(weights + f->first * w->es, f->data, f->count * w->es);
        if (w->sl->host != j->srv[s].host)
            w->sl->bytes_in += f->count * w->es;
        w->got[s] += f->count;
        free(f);
        if (w->got[s] < j->srv[s].count)
            w->l.c[i] = sg_mailbox_get_async(w->pull[s], (void **)&w->f[s]);
        else
            ps_loop_drop(&w->l, (size_t)i);
    }
    return rc;
}

static int step_push(void *ctx, const struct step_job *job, char *err)
{
    struct worker *w = ctx;
    const struct proto_push_meta meta = { job->meta.examples, job->meta.loss };

    return push_bucket(w, job->step, job->grad, job->first, job->count, &meta, err);
}

static int step_pull(void *ctx, uint64_t step, void *weights, char *err)
{
    return pull_all(ctx, step, weights, err);
}

static void add_step(struct sim_slot *sl, int s, double combine, double in, double out,
                     uint64_t b_in, uint64_t b_out, double whole)
{
    struct metrics_step ms = { (uint64_t)s, combine, in, out, b_in, b_out, whole };

    if (s >= sl->job->c->warmup)
        metrics_record_add(&sl->rec, &ms);
}

static int worker_real(struct worker *w)
{
    struct sim_slot *sl = w->sl;
    struct cli_common c = *w->j->c;
    const struct step_ops ops = { 0, "push", "push", "", "wait for the pushes", "pull weights",
                                  step_push, step_pull, NULL, w, NULL, NULL };
    struct workload_cfg wc;
    struct workload wl;
    struct step d;
    int rc;

    c.rank = sl->rank;
    c.world = w->j->k;
    c.steps = sim_steps(sl);       /* --kill: this worker dies at the start of that step */
    if (c.warmup >= c.steps)
        c.warmup = 0;
    cli_workload_cfg(&c, &wc);
    if (workload_create(&wl, &wc) != 0) {
        err_say(sl->err, "worker %d: cannot build the workload", sl->rank);
        return ERR_USAGE;
    }
    wl.clock = &xport_sim_clock;
    const struct proto_hello hello = { .n = wl.n, .dtype = (uint32_t)c.dtype,
                                       .workload = (uint32_t)c.workload, .seed = c.seed,
                                       .batch = wl.batch };
    if ((rc = psc_open(&w->cl, sl, &hello)) != 0 || c.steps == 0) {
        workload_destroy(&wl);
        return rc;
    }
    const struct step_cfg sc = { .w = &wl, .rank = sl->rank, .world = w->j->k,
                                 .shard_weights = c.shard_weights, .micro = c.micro,
                                 .steps = c.steps, .warmup = c.warmup,
                                 .bucket_bytes = w->j->bucket_bytes, .no_overlap = 1,
                                 .clock = &xport_sim_clock };
    if ((rc = step_init(&d, &sc, &ops, sl->err)) == 0) {
        for (int s = 0; s < c.steps && rc == 0; s++) {
            uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;
            double ts = simgrid_get_clock();
            struct step_result r;

            if ((rc = step_run(&d, s, &r, sl->err)) == 0)
                add_step(sl, s, simgrid_get_clock() - w->t0, NAN, NAN, sl->bytes_in - in0,
                         sl->bytes_out - out0, simgrid_get_clock() - ts);
        }
        if (rc == 0 && c.steps == w->j->c->steps)
            rc = psc_bye(&w->cl, (uint64_t)c.steps);
        if (rc == 0 && c.weights_out)
            rc = step_weights_write(&d, c.weights_out, sl->rank, sl->err);
        step_destroy(&d);
    }
    workload_destroy(&wl);
    return rc;
}

/* worker_sizes: the buckets of n elements of bucket_bytes each, the last
 * first (step.c's order), then the pull. */
static int worker_sizes(struct worker *w)
{
    struct sim_slot *sl = w->sl;
    const struct proto_push_meta meta = { 1, 0 };
    size_t per = (size_t)(w->j->bucket_bytes / w->es);
    int rc = 0;

    if (per == 0)
        per = 1;
    for (int s = 0; s < sim_steps(sl) && rc == 0; s++) {
        uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;
        double ts = simgrid_get_clock();
        size_t top = w->n;

        sim_compute(sl, s);     /* the backward pass, before the first push */
        while (top > 0 && rc == 0) {
            size_t count = top < per ? top : per;

            rc = push_bucket(w, (uint64_t)s, NULL, top - count, count, &meta, sl->err);
            top -= count;
        }
        if (rc == 0 && (rc = pull_all(w, (uint64_t)s, NULL, sl->err)) == 0)
            add_step(sl, s, simgrid_get_clock() - w->t0, NAN, NAN, sl->bytes_in - in0,
                     sl->bytes_out - out0, simgrid_get_clock() - ts);
    }
    return rc;
}

void sim_ps_worker(int argc, char **argv)
{
    struct sim_slot *sl = sg_actor_self_get_data();
    const struct sim_job *j = sl->job;
    size_t S = (size_t)j->servers;
    struct worker w = { .sl = sl, .j = j, .es = dtype_size(j->c->dtype), .n = ps_elements(j),
                        .pushed_step = -1 };

    (void)argc;
    (void)argv;
    w.push = calloc(S, sizeof *w.push);
    w.pull = calloc(S, sizeof *w.pull);
    w.f = calloc(S, sizeof *w.f);
    w.got = calloc(S, sizeof *w.got);
    if (!w.push || !w.pull || !w.f || !w.got || ps_loop_init(&w.l, 2 * S) != 0) {
        sl->rc = -ENOMEM;
        err_say(sl->err, "worker %d: out of memory", sl->rank);
    } else {
        for (int s = 0; s < j->servers; s++) {
            w.push[s].mb = ps_mailbox(1, s, sl->rank);
            w.push[s].host = j->srv[s].host;
            w.pull[s] = ps_mailbox(0, s, sl->rank);
        }
        sl->rc = j->real ? worker_real(&w) : worker_sizes(&w);
    }
    if (sl->rc != 0 || sim_steps(sl) < j->c->steps) {
        xport_sim_set_gone(sl->slot);   /* failed, or killed (--kill): gone */
        if (j->real)
            psc_gone(&w.cl, sl->rc == 0);
        else if (w.push)
            ps_poison(&w.push[0].mb, sizeof w.push[0], j->servers, sl, sl->rc == 0);
        xport_sim_zombie();
    }
    psc_close(&w.cl);
    ps_chans_free(w.push, j->servers);
    ps_loop_free(&w.l);
    free(w.push);
    free(w.pull);
    free(w.f);
    free(w.got);
}

/* ------------------------------------------------------------ the server */

struct server {
    struct sim_slot *sl;
    const struct sim_job *j;
    struct store st;
    int have_store;
    uint64_t lo, n;             /* the owned range [lo, lo + n) */
    size_t es;
    sg_mailbox_t *in;           /* K */
    struct chan *out;           /* K: the weights to worker w */
    struct loop l;              /* the pushes' gets, the weights in flight */
    struct ps_frame **f;        /* K */
    uint64_t *top;              /* sizes: K, elements worker w has pushed this step */
    uint64_t released;          /* sizes: elements released this step, from the top */
    double first_out;           /* the step's first release sent */
};

/* release_send: the released [first, first + count) of step s, from
 * weights (NULL: sizes), to the K workers, each frame with its own copy
 * (the worker reads it when the comm completes, when the store may have
 * moved on). */
static int release_send(struct server *v, uint64_t s, uint64_t first, uint64_t count,
                        const void *weights)
{
    size_t len = (size_t)count * v->es;

    if (isnan(v->first_out))
        v->first_out = simgrid_get_clock();
    for (int w = 0; w < v->j->k; w++) {
        struct ps_frame *f = malloc(sizeof *f + (weights ? len : 0));

        if (!f) {
            err_say(v->sl->err, "server %d: out of memory", v->sl->rank);
            return -ENOMEM;
        }
        *f = (struct ps_frame){ -1, s, v->first_out, { 0, 0 }, first, count, weights ? f + 1 : NULL, NULL };
        if (weights)
            memcpy(f + 1, weights, len);
        ps_chan_send(&v->l, v->out, w, f, v->es, v->sl->host, &v->sl->bytes_out);
    }
    return 0;
}

/* take: worker f->rank's push into the store (real) or its count (sizes),
 * then whatever is now released goes out. *done: the step is complete. */
static int take(struct server *v, uint64_t s, const struct ps_frame *f, int *done)
{
    char *err = v->sl->err;
    int rc;

    if (f->step != s) {
        err_say(err, "server %d: worker %d pushed step %llu in step %llu", v->sl->rank, f->rank,
                (unsigned long long)f->step, (unsigned long long)s);
        return ERR_PROTO_FIELD;
    }
    if (v->have_store) {
        struct store_released rel;

        if ((rc = store_push_begin(&v->st, (uint32_t)f->rank, f->step, &f->meta, f->first,
                                   f->count, err)) != 0 ||
            (rc = store_push_data(&v->st, (uint32_t)f->rank, f->data, f->count * v->es,
                                  err)) != 0 ||
            (rc = store_push_end(&v->st, (uint32_t)f->rank, err)) != 0 ||
            (rc = store_release(&v->st, &rel, err)) != 0)
            return rc;
        if (rel.count > 0 &&
            (rc = release_send(v, s, rel.first, rel.count,
                               (const unsigned char *)rel.weights +
                                   (rel.first - v->lo) * v->es)) != 0)
            return rc;
        *done = rel.last;
        return 0;
    }
    /* sizes: store.h's RELEASE rule on the counts alone */
    uint64_t min = UINT64_MAX;

    v->top[f->rank] += f->count;
    for (int w = 0; w < v->j->k; w++)
        if (v->top[w] < min)
            min = v->top[w];
    if (min > v->released) {
        if ((rc = release_send(v, s, v->lo + v->n - min, min - v->released, NULL)) != 0)
            return rc;
        v->released = min;
    }
    *done = v->released == v->n;
    return 0;
}

/* one_step: the K workers' pushes of step s, each into the store as it
 * completes and the released parts out; OUT: *first (the earliest push
 * start), *last_in (the last push in). */
static int one_step(struct server *v, uint64_t s, double *first, double *last_in)
{
    int k = v->j->k, done = 0, rc;
    int left = k;

    *first = INFINITY;
    v->first_out = NAN;
    v->released = 0;
    for (int w = 0; w < k; w++) {
        v->top[w] = 0;
        ps_loop_add(&v->l, sg_mailbox_get_async(v->in[w], (void **)&v->f[w]), w);
    }
    while (left > 0) {
        long i = ps_wait(&v->l, v->sl, s);
        struct ps_frame *f;
        int w, last;

        if (i < 0)
            return (int)i;
        if (v->l.tag[i] < 0) {
            ps_put_done(&v->l, (size_t)i, v->out, v->es, v->sl->host);
            continue;
        }
        w = v->l.tag[i];
        f = v->f[w];
        if (f->rank == PS_POISON) {
            rc = ps_poisoned(v->sl, s, f, "worker", w, w);
            free(f);
            return rc;
        }
        if (f->t0 < *first)
            *first = f->t0;
        if (v->sl->host != w)
            v->sl->bytes_in += f->count * v->es;
        /* the pass's last push is the one that starts at the owned range's start */
        last = f->first == v->lo;
        rc = take(v, s, f, &done);
        free(f);
        if (rc != 0)
            return rc;
        if (!last) {
            v->l.c[i] = sg_mailbox_get_async(v->in[w], (void **)&v->f[w]);
        } else {
            left--;
            ps_loop_drop(&v->l, (size_t)i);
        }
    }
    *last_in = simgrid_get_clock();
    if (!done) {
        err_say(v->sl->err, "server %d: step %llu: every push in, nothing left to release, "
                "yet the step is not complete", v->sl->rank, (unsigned long long)s);
        return ERR_PROTO_FIELD;
    }
    return ps_loop_drain(&v->l, v->out, v->es, v->sl, s);
}

static int server_open(struct server *v)
{
    const struct sim_job *j = v->j;
    struct cli_common c = *j->c;
    struct workload_cfg wc;
    struct workload wl;
    unsigned char *w0;
    int rc;

    if (!j->real)
        return 0;
    c.rank = 0;
    c.world = j->k;
    cli_workload_cfg(&c, &wc);
    wc.backward_time = 0;
    if (workload_create(&wl, &wc) != 0) {
        err_say(v->sl->err, "server %d: cannot build the workload", v->sl->rank);
        return ERR_USAGE;
    }
    w0 = malloc(wl.n * v->es);
    if (!w0) {
        workload_destroy(&wl);
        err_say(v->sl->err, "server %d: out of memory", v->sl->rank);
        return -ENOMEM;
    }
    workload_init_weights(&wl, w0);
    const struct store_cfg sc = {
        .n = (size_t)v->n, .offset = v->lo, .dtype = c.dtype, .world = (uint32_t)j->k,
        .lr = c.lr, .weights = w0 + v->lo * v->es, .pushes_per_step = 1,
        .batch = wl.batch,      /* COUNTS: the step's counts must sum to B, as on the real server */
    };
    rc = store_init(&v->st, &sc, v->sl->err);
    v->have_store = rc == 0;
    free(w0);
    workload_destroy(&wl);
    return rc;
}

void sim_ps_server(int argc, char **argv)
{
    struct sim_slot *sl = sg_actor_self_get_data();
    const struct sim_job *j = sl->job;
    struct server v = { .sl = sl, .j = j, .es = dtype_size(j->c->dtype),
                        .lo = j->srv[sl->rank].first, .n = j->srv[sl->rank].count };
    size_t k = (size_t)j->k;
    int rc;

    (void)argc;
    (void)argv;
    if (v.n == 0) {
        sl->rc = 0;             /* a server the split gives nothing is never started */
        return;
    }
    if (j->real) {
        sim_ps_server_real(sl); /* the real protocol (ps_server.c) */
        return;
    }
    v.in = calloc(k, sizeof *v.in);
    v.out = calloc(k, sizeof *v.out);
    v.f = calloc(k, sizeof *v.f);
    v.top = calloc(k, sizeof *v.top);
    if (!v.in || !v.out || !v.f || !v.top || ps_loop_init(&v.l, 2 * k) != 0) {
        rc = -ENOMEM;
        err_say(sl->err, "server %d: out of memory", sl->rank);
        goto out;
    }
    for (int w = 0; w < j->k; w++) {
        v.in[w] = ps_mailbox(1, sl->rank, w);
        v.out[w].mb = ps_mailbox(0, sl->rank, w);
        v.out[w].host = w;
    }
    if (v.n == 0 || (rc = server_open(&v)) != 0) {
        rc = v.n == 0 ? 0 : rc;     /* a server the split gives nothing is never started */
        goto out;
    }
    for (int s = 0; s < j->c->steps; s++) {
        uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;
        double first, in_last = 0;

        if ((rc = one_step(&v, (uint64_t)s, &first, &in_last)) != 0)
            goto out;
        add_step(sl, s, NAN, in_last - first, simgrid_get_clock() - v.first_out,
                 sl->bytes_in - in0, sl->bytes_out - out0, NAN);
    }
out:
    if (rc != 0) {
        sl->rc = rc;
        xport_sim_set_gone(sl->slot);
        if (v.out)
            ps_poison(&v.out[0].mb, sizeof v.out[0], j->k, sl, 0);
        xport_sim_zombie();
    }
    ps_chans_free(v.out, j->k);
    ps_loop_free(&v.l);
    if (v.have_store)
        store_destroy(&v.st);
    free(v.in);
    free(v.out);
    free(v.f);
    free(v.top);
    sl->rc = rc;
}
