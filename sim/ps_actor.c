/* ps_actor.c -- the parameter server in simulation: S server actors and K
 * worker actors (sim.h), on the same store (ps_server/store.c) and the same
 * training step (common/step.c) as bin/ps_server and bin/ps_worker.
 *
 * One step, as the real system runs it:
 * A push's bytes stay in the worker's buffer (it waits for the push to
 * complete and then for the weights, which come only after the server has
 * read every push); the weights travel as a copy (egress).
 *
 *   worker w   push: for each server s, one message of its slice of the
 *              gradient (mailbox "s<-w"), all S at once; then pull: one
 *              message of the new weights from each server ("w<-s")
 *   server s   K gets posted at once (so the K pushes share its link's
 *              ingress, K n / S bytes in all); each push, as it completes,
 *              goes through store_push_begin/data/end; store_apply; then K
 *              puts of the weights at once (the egress half)
 * The slices are ring_chunk's (sizes differ by at most one element).
 *
 * Records: a worker's combine_s is push start to pull end (ps_worker's
 * comm + finish); a server's ingress_s is the first worker's push start to
 * the last push in, egress_s the first weights put to the last one done.
 *
 * Sizes mode (job->real 0): the same messages with their sizes only; no
 * workload, no store (a 4 GB vector is never allocated).
 *
 * Simplifications said out loud: a push is one message (the real worker
 * sends PUSH frames piece by piece, and headers are not counted); the
 * server's summation takes no simulated time; one bucket per step.
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

#include "dtype.h"
#include "ring.h"
#include "sim.h"
#include "step.h"
#include "store.h"
#include "workload.h"
#include "xport_sim.h"

#define SIM_MAX_SERVERS 256

struct ps_frame {
    int rank;                   /* the worker */
    uint64_t step;
    double t0;                  /* push: when the worker started pushing */
    struct proto_push_meta meta;
    uint64_t first, count;      /* elements (absolute indices) */
    const void *data;           /* REAL: the sender's bytes, alive until it is told */
};

/* mailbox: "sS<-wW" (push = 1: worker W's pushes to server S) or
 * "wW<-sS" (server S's weights to worker W). */
static sg_mailbox_t mailbox(int push, int s, int w)
{
    char name[48];

    if (push)
        snprintf(name, sizeof name, "s%d<-w%d", s, w);
    else
        snprintf(name, sizeof name, "w%d<-s%d", w, s);
    return sg_mailbox_by_name(name);
}

/* slice: server s's elements [lo, hi) of n. */
static void slice(const struct sim_job *j, size_t n, int s, size_t *lo, size_t *hi)
{
    ring_chunk(n, j->servers, s, lo, hi);
}

static size_t elements(const struct sim_job *j)
{
    return (size_t)(j->bytes / dtype_size(j->c->dtype));
}

/* ------------------------------------------------------------ the worker */

struct worker {
    struct sim_slot *sl;
    const struct sim_job *j;
    size_t n, es;
    double t0;
    sg_mailbox_t push[SIM_MAX_SERVERS], pull[SIM_MAX_SERVERS];
    sg_comm_t comm[SIM_MAX_SERVERS];
};

/* push_all: one push per server of [first, first + count) and meta. */
static int push_all(struct worker *w, uint64_t step, const unsigned char *grad, size_t first,
                    size_t count, const struct proto_push_meta *meta, char *err)
{
    const struct sim_job *j = w->j;

    w->t0 = simgrid_get_clock();
    for (int s = 0; s < j->servers; s++) {
        size_t lo, hi;
        struct ps_frame *f = malloc(sizeof *f);

        if (!f) {
            err_say(err, "worker %d: out of memory", w->sl->rank);
            return -ENOMEM;
        }
        slice(j, w->n, s, &lo, &hi);
        if (lo < first)
            lo = first;
        if (hi > first + count)
            hi = first + count;
        *f = (struct ps_frame){ w->sl->rank, step, w->t0, *meta, lo, hi - lo,
                                grad ? grad + lo * w->es : NULL };
        w->comm[s] = sg_mailbox_put_async(w->push[s], f, (long)((hi - lo) * w->es));
        w->sl->bytes_out += (hi - lo) * w->es;
    }
    sg_comm_wait_all(w->comm, (size_t)j->servers);
    return 0;
}

/* pull_all: the weights from every server, into weights (may be NULL). */
static int pull_all(struct worker *w, uint64_t step, unsigned char *weights, char *err)
{
    const struct sim_job *j = w->j;
    struct ps_frame *f[SIM_MAX_SERVERS];
    int rc = 0;

    for (int s = 0; s < j->servers; s++)
        w->comm[s] = sg_mailbox_get_async(w->pull[s], (void **)&f[s]);
    sg_comm_wait_all(w->comm, (size_t)j->servers);
    for (int s = 0; s < j->servers; s++) {
        if (f[s]->step != step && rc == 0) {
            err_say(err, "worker %d: weights of step %llu from server %d, wanted %llu",
                    w->sl->rank, (unsigned long long)f[s]->step, s, (unsigned long long)step);
            rc = ERR_PROTO_FIELD;
        }
        if (weights && rc == 0)
            memcpy(weights + f[s]->first * w->es, f[s]->data, f[s]->count * w->es);
        w->sl->bytes_in += f[s]->count * w->es;
        free(f[s]);
    }
    return rc;
}

static int step_push(void *ctx, const struct step_job *job, char *err)
{
    struct worker *w = ctx;
    const struct proto_push_meta meta = { job->meta.examples, job->meta.loss };

    return push_all(w, job->step, job->grad, job->first, job->count, &meta, err);
}

static int step_pull(void *ctx, uint64_t step, void *weights, char *err)
{
    return pull_all(ctx, step, weights, err);
}

static void add_step(struct sim_slot *sl, int s, double combine, double in, double out,
                     uint64_t b_in, uint64_t b_out)
{
    struct metrics_step ms = { (uint64_t)s, combine, in, out, b_in, b_out, NAN };

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
    cli_workload_cfg(&c, &wc);
    if (workload_create(&wl, &wc) != 0) {
        err_say(sl->err, "worker %d: cannot build the workload", sl->rank);
        return ERR_USAGE;
    }
    wl.clock = &xport_sim_clock;
    const struct step_cfg sc = { &wl, sl->rank, w->j->k, c.shard_weights, c.micro, 0, c.steps,
                                 c.warmup, (uint64_t)1 << 62, 1, NULL, &xport_sim_clock, NULL,
                                 NULL, 0 };
    if ((rc = step_init(&d, &sc, &ops, sl->err)) == 0) {
        for (int s = 0; s < c.steps && rc == 0; s++) {
            uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;
            struct step_result r;

            if ((rc = step_run(&d, s, &r, sl->err)) == 0)
                add_step(sl, s, r.t.comm + r.t.finish, NAN, NAN, sl->bytes_in - in0,
                         sl->bytes_out - out0);
        }
        if (rc == 0 && c.weights_out)
            rc = step_weights_write(&d, c.weights_out, sl->rank, sl->err);
        step_destroy(&d);
    }
    workload_destroy(&wl);
    return rc;
}

static int worker_sizes(struct worker *w)
{
    struct sim_slot *sl = w->sl;
    const struct proto_push_meta meta = { 1, 0 };
    int rc = 0;

    for (int s = 0; s < w->j->c->steps && rc == 0; s++) {
        uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;

        if ((rc = push_all(w, (uint64_t)s, NULL, 0, w->n, &meta, sl->err)) == 0 &&
            (rc = pull_all(w, (uint64_t)s, NULL, sl->err)) == 0)
            add_step(sl, s, simgrid_get_clock() - w->t0, NAN, NAN, sl->bytes_in - in0,
                     sl->bytes_out - out0);
    }
    return rc;
}

void sim_ps_worker(int argc, char **argv)
{
    struct sim_slot *sl = sg_actor_self_get_data();
    struct worker *w = calloc(1, sizeof *w);

    (void)argc;
    (void)argv;
    if (!w) {
        sl->rc = -ENOMEM;
        err_say(sl->err, "worker %d: out of memory", sl->rank);
        return;
    }
    w->sl = sl;
    w->j = sl->job;
    w->es = dtype_size(w->j->c->dtype);
    w->n = elements(w->j);
    for (int s = 0; s < w->j->servers; s++) {
        w->push[s] = mailbox(1, s, sl->rank);
        w->pull[s] = mailbox(0, s, sl->rank);
    }
    sl->rc = w->j->real ? worker_real(w) : worker_sizes(w);
    free(w);
}

/* ------------------------------------------------------------ the server */

struct server {
    struct sim_slot *sl;
    const struct sim_job *j;
    struct store st;
    int have_store;
    size_t lo, hi, es;
    sg_mailbox_t *in, *out;     /* K each */
    sg_comm_t *comm;            /* K */
    struct ps_frame **f;        /* K */
    int *who;                   /* K: the worker of comm[i] */
};

/* ingress: the K pushes of step s, each into the store as it completes.
 * OUT: *first (the earliest push start). */
static int ingress(struct server *v, uint64_t s, double *first)
{
    int k = v->j->k;
    size_t left = (size_t)k;

    *first = INFINITY;
    for (int w = 0; w < k; w++) {
        v->comm[w] = sg_mailbox_get_async(v->in[w], (void **)&v->f[w]);
        v->who[w] = w;
    }
    while (left > 0) {
        ssize_t i = sg_comm_wait_any(v->comm, left);
        struct ps_frame *f;
        int rc = 0;

        if (i < 0) {
            err_say(v->sl->err, "server %d: a push of step %llu was lost", v->sl->rank,
                    (unsigned long long)s);
            return ERR_EOF;
        }
        f = v->f[v->who[i]];
        if (f->t0 < *first)
            *first = f->t0;
        v->sl->bytes_in += f->count * v->es;
        if (v->have_store &&
            ((rc = store_push_begin(&v->st, (uint32_t)f->rank, f->step, &f->meta, f->first,
                                    f->count, v->sl->err)) != 0 ||
             (rc = store_push_data(&v->st, (uint32_t)f->rank, f->data, f->count * v->es,
                                   v->sl->err)) != 0 ||
             (rc = store_push_end(&v->st, (uint32_t)f->rank, v->sl->err)) != 0))
            return rc;
        if (!v->have_store && f->step != s) {
            err_say(v->sl->err, "server %d: worker %d pushed step %llu in step %llu",
                    v->sl->rank, f->rank, (unsigned long long)f->step, (unsigned long long)s);
            return ERR_PROTO_FIELD;
        }
        left--;
        v->comm[i] = v->comm[left];
        v->who[i] = v->who[left];
    }
    return 0;
}

/* egress: the weights of step s to the K workers at once. */
static int egress(struct server *v, uint64_t s)
{
    int k = v->j->k;
    const void *wts = v->have_store ? store_weights(&v->st) : NULL;

    size_t len = (v->hi - v->lo) * v->es;

    /* Each frame carries its own copy of the weights: the worker reads
     * them after the comm completes, when this actor may already have run
     * on (and, after the last step, freed the store). */
    for (int w = 0; w < k; w++) {
        struct ps_frame *f = malloc(sizeof *f + (wts ? len : 0));

        if (!f) {
            err_say(v->sl->err, "server %d: out of memory", v->sl->rank);
            return -ENOMEM;
        }
        *f = (struct ps_frame){ -1, s, simgrid_get_clock(), { 0, 0 }, v->lo, v->hi - v->lo,
                                wts ? f + 1 : NULL };
        if (wts)
            memcpy(f + 1, wts, len);
        v->comm[w] = sg_mailbox_put_async(v->out[w], f, (long)((v->hi - v->lo) * v->es));
        v->sl->bytes_out += (v->hi - v->lo) * v->es;
    }
    sg_comm_wait_all(v->comm, (size_t)k);
    return 0;
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
        .n = v->hi - v->lo, .offset = v->lo, .dtype = c.dtype, .world = (uint32_t)j->k,
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
    struct server v = { .sl = sl, .j = j, .es = dtype_size(j->c->dtype) };
    int k = j->k, rc;

    (void)argc;
    (void)argv;
    slice(j, elements(j), sl->rank, &v.lo, &v.hi);
    v.in = calloc((size_t)k, sizeof *v.in);
    v.out = calloc((size_t)k, sizeof *v.out);
    v.comm = calloc((size_t)k, sizeof *v.comm);
    v.f = calloc((size_t)k, sizeof *v.f);
    v.who = calloc((size_t)k, sizeof *v.who);
    if (!v.in || !v.out || !v.comm || !v.f || !v.who) {
        rc = -ENOMEM;
        err_say(sl->err, "server %d: out of memory", sl->rank);
        goto out;
    }
    for (int w = 0; w < k; w++) {
        v.in[w] = mailbox(1, sl->rank, w);
        v.out[w] = mailbox(0, sl->rank, w);
    }
    if ((rc = server_open(&v)) != 0)
        goto out;
    for (int s = 0; s < j->c->steps; s++) {
        uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;
        double first, in_last, out_first;

        if ((rc = ingress(&v, (uint64_t)s, &first)) != 0)
            goto out;
        in_last = simgrid_get_clock();
        if (v.have_store && (rc = store_apply(&v.st, NULL, sl->err)) != 0)
            goto out;
        out_first = simgrid_get_clock();
        if ((rc = egress(&v, (uint64_t)s)) != 0)
            goto out;
        add_step(sl, s, NAN, in_last - first, simgrid_get_clock() - out_first,
                 sl->bytes_in - in0, sl->bytes_out - out0);
        for (int w = 0; w < k; w++)
            free(v.f[w]);
    }
out:
    if (v.have_store)
        store_destroy(&v.st);
    free(v.in);
    free(v.out);
    free(v.comm);
    free(v.f);
    free(v.who);
    sl->rc = rc;
}
