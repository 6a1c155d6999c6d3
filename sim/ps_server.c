/* ps_server.c -- the parameter server in simulation: the server actor
 * runs bin/ps_server's own protocol (common/ps/server.c,
 * server_conn.c, session.c, store.c, egress.c, silence.c) under a SimGrid
 * transport: this file fills the protocol's table (struct server_io,
 * server.h) as ps_server/main.c fills it with libuv, so a change to the
 * server is made once. The workers (bin/ps_worker's client,
 * common/ps/client.c, over sim/ps_client.c's transport) send it the real
 * frames (AUTH, HELLO, PUSH, BYE) and read its WELCOME, WEIGHTS and ERROR
 * frames; every frame crosses the simulated links at its real size,
 * headers included.
 *
 * THE TRANSPORT. A connection is two simulated byte streams (ps_wire.h),
 * one per direction, to worker w's actor. Reading: a get is always posted
 * on a connection that reads (io->read_start), and each message that comes
 * is handed to server_conn_read in pieces of at most the protocol's read
 * buffer (server_conn_buffer), as libuv's reads are. Writing: try_write
 * takes nothing (a simulated socket buffer is empty only once the message
 * before is delivered), so every write is queued (io->write) as one
 * message and server_written follows when it is delivered: the egress
 * schedule then sees each WEIGHTS frame's delivery as the real server sees
 * its socket drain, and one channel carries one frame at a time, as the
 * simulated PS always did. The clock is SimGrid's. No timer runs: the
 * emulated link's deadlines (io->timer_want) do not arise (the simulated
 * network is the link), and the tick's work (server_tick: the silence
 * timeouts, the lingering closes) is not simulated (see NOT SIMULATED):
 * every wait ends by a message. A message with eof (the worker is gone:
 * POISON) is the peer's close: server_conn_lost; a close sends one too.
 *
 * SET-UP from the job, not from flags: the workload's initial weights,
 * this shard's [lo, hi) in the store, the sync mode, no emulated link (the
 * simulated network is the link; one server of its own with a link rate
 * sends round-robin: ps_wire.h, ROUND-ROBIN EGRESS), one egress piece per
 * WEIGHTS frame, no
 * --weights-out, --csv or loss files of its own (the workers and the
 * simulator write those); the rest is server_alloc's, as for
 * bin/ps_server and tests/test_ps_server.c. The protocol's log lines are kept
 * from stderr (log_sink): its "run failed" line becomes the actor's
 * error, reported in the simulator's one line.
 *
 * Records: the protocol's own (server.c: egress_s from the first WEIGHTS
 * frame handed out to the last one delivered; ingress_s to the step's
 * last PUSH in, from its first PUSH written: record); the bytes are the
 * payload across the host's link (the frames' elements, not their
 * headers, as the model counts).
 *
 * SIZES (--payload sizes): the same protocol, the same frames; their
 * elements are counted and never materialised (ps_wire.h SIZES): the
 * protocol's read buffer is handed over unfilled, to a store that counts
 * (store.h sizes_only: no check, no sum, no update), so K = 1024 of 64 MiB
 * allocates no gradient and sums nothing.
 *
 * THE MACHINE (struct server_machine): no CPU seconds, no load samples,
 * no peak RSS, no SIGKILL test hook: a simulated server is no process of
 * its own (see sim_machine).
 *
 * NOT SIMULATED: the tick, hence the silence timeouts (--timeout: a push
 * is one message, whose bytes arrive when its transfer ends, not as a
 * trickle; a gone actor's POISON ends every wait instead, xport_sim.h
 * FAULTS) and the lingering closes (the peer's eof closes); the gate
 * against strangers without AUTH (AUTH_GATE_CAP: every simulated
 * connection is the job's own).
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include "base/dtype.h"
#include "base/log.h"
#include "coll/xport_sim.h"
#include "measure/model.h"
#include "ps/server.h"
#include "ps_wire.h"
#include "sim.h"
#include "train/optim.h"
#include "train/workload.h"

#define READ_CAP (256u << 10)       /* the protocol's read buffer, as ps_server's */
#define SIM_NO_TIMEOUT 1e9          /* seconds: never */

/* A connection: struct conn first (server.h OWNERSHIP). */
struct sconn {
    struct conn c;
    int w, host;
    struct wire_out out;
    struct wire_in in;
    int reading, shut, shut_sent, close_asked, closed, eof;
};

struct ssrv {
    struct server s;                /* first: the table's struct server * */
    struct sim_slot *sl;
    struct sconn *cs;               /* K */
    sg_comm_t *comms;               /* 2K + 1: the loop's */
    int *tag;
    double *push_t0, *push_in;      /* per step: the first PUSH written, and in */
    struct wire_host eg;            /* ROUND-ROBIN EGRESS (ps_wire.h): on a host of its own */
    int paced;                      /* ... with a link rate: 1 */
};

static struct sconn *sc_of(struct conn *c)
{
    return (struct sconn *)(void *)c;
}

static struct ssrv *ss_of(struct server *s)
{
    return (struct ssrv *)(void *)s;
}

/* ------------------------------------------------------- the table */

static double io_now(const struct server *srv)
{
    (void)srv;
    return simgrid_get_clock();
}

static int io_try_write(struct conn *c, const struct server_buf *b, unsigned nb)
{
    (void)c;
    (void)b;
    (void)nb;
    return 0;
}

static int io_write(struct conn *c, enum server_write slot, const struct server_buf *b,
                    unsigned nb)
{
    struct sconn *k = sc_of(c);
    const void *p[2];
    size_t len[2], pay = 0;

    for (unsigned i = 0; i < nb; i++) {
        p[i] = b[i].p;
        len[i] = b[i].len;
        /* a WEIGHTS piece: its header (in c->whdr), then elements */
        if (slot == SERVER_WRITE_WEIGHTS && !(b[i].p >= c->whdr &&
                                              b[i].p < c->whdr + sizeof c->whdr)) {
            pay += b[i].len;
            if (k->out.sizes)
                p[i] = NULL;    /* SIZES: counted, not copied */
        }
    }
    if (wire_send(&k->out, p, len, nb, pay, (int)slot) != 0)
        return -ENOMEM;
    if (!k->out.local)
        ss_of(c->srv)->sl->bytes_out += pay;
    return 0;
}

static int io_read_start(struct conn *c)
{
    sc_of(c)->reading = 1;
    return 0;
}

static void io_read_stop(struct conn *c)
{
    sc_of(c)->reading = 0;
}

/* io_shutdown: the eof goes once the queued writes are out (settle),
 * detached: a worker that is gone never reads it. */
static int io_shutdown(struct conn *c)
{
    sc_of(c)->shut = 1;
    return 0;
}

static void io_close(struct conn *c)
{
    sc_of(c)->close_asked = 1;
}

/* io_timer_want: the emulated link's deadlines (held reads, paced
 * weights); the simulated server has none (the network is simulated:
 * srv_make sets no link), so it is never called. */
static void io_timer_want(struct server *srv, double t)
{
    (void)srv;
    (void)t;
    assert(!"a timer wanted without an emulated link");
}

static void io_over(struct server *srv, unsigned nconns)
{
    (void)srv;
    (void)nconns;
}

static const char *io_strerror(int code)
{
    return err_str(code);
}

/* The machine (server.h, struct server_machine): a simulated server has
 * no process of its own to measure. Its work costs no simulated time (its
 * CPU is not modelled) and the simulator's own CPU time, /proc samples
 * and RSS are the simulator's, not the server's: so no CPU seconds (0, as
 * sim/report.c sets every record's cpu_s), no machine samples (ok 0: the
 * record carries none), no peak RSS (-1: the log line says -1.0, and
 * those lines are kept from stderr). The test hook's SIGKILL (resume.h)
 * would kill the whole simulator: it does nothing here; a simulated fault
 * is the simulator's --kill RANK@STEP. */
static double machine_cpu_s(const struct server *srv)
{
    (void)srv;
    return 0;
}

static void machine_load(const struct server *srv, struct hostload_sample *s)
{
    (void)srv;
    *s = (struct hostload_sample){ .ok = 0, .running = -1, .wait_ns = -1 };
}

static double machine_peak_rss_mib(const struct server *srv)
{
    (void)srv;
    return -1;
}

static void machine_test_kill(struct server *srv, uint64_t step)
{
    (void)srv;
    (void)step;
}

static const struct server_machine sim_machine = {
    .cpu_s = machine_cpu_s, .load = machine_load, .peak_rss_mib = machine_peak_rss_mib,
    .test_kill = machine_test_kill,
};

static const struct server_io sim_io = {
    .now = io_now, .try_write = io_try_write, .write = io_write,
    .read_start = io_read_start, .read_stop = io_read_stop, .shutdown = io_shutdown,
    .close = io_close, .timer_want = io_timer_want, .over = io_over,
    .strerror = io_strerror, .machine = &sim_machine,
};

/* ------------------------------------------------------- set-up */

/* srv_store: the workload's initial weights, [lo, hi) of them in the
 * store; the session's settings (what a HELLO must match). SIZES: no
 * workload; n from --bytes, one example per worker, a store that counts. */
static int srv_store(struct ssrv *v, uint64_t lo, uint64_t hi, char *err)
{
    struct server *srv = &v->s;
    const struct cli_common *c = &srv->f.c;
    struct store_cfg sc = { .n = (size_t)(hi - lo), .offset = lo, .dtype = c->dtype,
                            .world = srv->k, .lr = c->lr, .pushes_per_step = 1,
                            .batch = srv->k, .batch_what = "B" };
    uint64_t n = ps_elements(v->sl->job);
    struct workload_cfg wc;
    struct workload wl;
    struct optim_cfg oc;
    unsigned char *w0 = NULL;
    int rc;

    cli_optim_cfg(c, &oc);
    sc.optim = &oc;
    sc.sizes_only = !v->sl->job->real;
    if (v->sl->job->real) {
        cli_workload_cfg(c, &wc);
        wc.backward_time = 0;
        if (workload_create(&wl, &wc) != 0) {
            err_say(err, "cannot build the workload");
            return ERR_USAGE;
        }
        if (!(w0 = malloc(wl.n * srv->es))) {
            workload_destroy(&wl);
            return -ENOMEM;
        }
        workload_init_weights(&wl, w0);
        n = wl.n;
        sc.batch = wl.batch;
        sc.weights = w0 + lo * srv->es;
        workload_destroy(&wl);
    }
    sc.count_max = sc.batch;
    srv->scfg = (struct session_cfg){ .world = srv->k, .n = n, .lo = lo, .hi = hi,
                                      .dtype = c->dtype, .workload = c->workload,
                                      .seed = c->seed, .key = &srv->f.key, .batch = sc.batch,
                                      .steps = (uint64_t)c->steps };
    rc = store_init(&srv->store, &sc, err);
    free(w0);
    return rc;
}

/* srv_make: what ps_server/setup.c builds from its flags, from the job. */
static int srv_make(struct ssrv *v, const struct sim_job *j, int s, char *err)
{
    struct server *srv = &v->s;
    uint64_t lo = j->srv[s].first, hi = lo + j->srv[s].count;
    int rc;

    srv->io = &sim_io;
    srv->f.c = *j->c;
    srv->f.c.rank = 0;
    srv->f.c.world = j->k;
    srv->f.c.csv = srv->f.c.json = NULL;          /* the simulator writes the record, the workers the weights */
    srv->f.c.weights_out = NULL;
    srv->f.c.loss_time_out = NULL;
    srv->f.local_worker = -1;
    srv->f.shard_i = s;
    srv->f.shard_s = j->servers;
    srv->k = (uint32_t)j->k;
    srv->es = dtype_size(j->c->dtype);
    /* No silence timeouts: a push is one message, and its bytes arrive
     * when its transfer ends (a 64 MiB push of 1024 workers through one
     * link takes minutes of simulated time), not as a trickle; the
     * simulated PS never timed out (a gone actor's POISON ends the wait:
     * xport_sim.h FAULTS). So no tick either (run): what it does, the
     * timeouts and the lingering closes, comes by the peers' eof. */
    srv->timeout = SIM_NO_TIMEOUT;
    srv->linger_s = fmin(0.5, srv->timeout / 4);
    srv->rcap = READ_CAP;
    if ((rc = srv_store(v, lo, hi, err)) != 0 ||
        (rc = link_setup(&srv->link, 0, 0, NULL, err)) != 0 ||
        (rc = mode_init(&srv->mode, &srv->f.mode_cfg, srv->k, 0, err)) != 0)
        return rc;
    return server_alloc(srv, (size_t)(hi - lo) * srv->es + PROTO_HEADER_SIZE,
                        simgrid_get_clock());
}


/* ------------------------------------------------------- the loop */

/* The server actor running now (actors run one at a time, and switch
 * only inside SimGrid's calls): its protocol's log lines come here while
 * it runs (log_sink), and the first "run failed" names its failure. */
static struct ssrv *running;

static void keep_line(const char *msg)
{
    static const char failed[] = "run failed: ";

    if (running && !running->sl->err[0] && strncmp(msg, failed, sizeof failed - 1) == 0)
        snprintf(running->sl->err, sizeof running->sl->err, "%s", msg + sizeof failed - 1);
}

static void enter(struct ssrv *v)
{
    running = v;
    log_sink(keep_line);
}

static void leave(void)
{
    running = NULL;
    log_sink(NULL);
}

/* eof_in: worker k's stream ended (m: its eof): it closed, or it is
 * gone (its claim in m->b, "" when killed). The server's failure names
 * it the simulator's way (xport_sim.h FAULTS). */
static void eof_in(struct ssrv *v, struct sconn *k, const struct wmsg *m)
{
    if (!v->s.over && k->c.joined && !k->c.finished && !k->c.lingering) {
        if (m->b[0])
            err_say(v->sl->err, "step %llu: worker %d reported: %s",
                    ull(store_step(&v->s.store)), k->w, (const char *)m->b);
        else
            err_say(v->sl->err, "step %llu: lost worker %d (simulated host h%d): "
                    "connection closed", ull(store_step(&v->s.store)), k->w, k->host);
    }
    k->eof = 1;
    wire_in_free(&k->in);
    if (!k->close_asked)
        server_conn_lost(&k->c, NULL);
}

/* feed: connection k's messages in, in read-buffer pieces, while it
 * reads; an eof is the peer's close. */
static void feed(struct ssrv *v, struct sconn *k)
{
    struct wmsg *m;

    while ((m = k->in.cur) && !k->closed) {
        if (m->eof) {
            eof_in(v, k, m);
            return;
        }
        while (k->reading && !k->close_asked && k->in.off < m->len) {
            const unsigned char *src;
            unsigned char *p;
            size_t cap, n = m->len - k->in.off, span = wire_span(m, k->in.off, &src);

            server_conn_buffer(&k->c, &p, &cap);
            if (n > cap)
                n = cap;
            if (n > span)
                n = span;
            if (src)
                memcpy(p, src, n);
            /* else SIZES: the buffer unfilled (a sizes-only store) */
            k->in.off += n;
            server_conn_read(&k->c, p, n);
        }
        if (k->in.off < m->len && !k->close_asked)
            return;             /* reading stopped: the rest later */
        wire_in_pop(&k->in);
    }
}

/* settle: the connections' closes that are due (their writes out), the
 * reads that may go on, the tails whose turn has come (ROUND-ROBIN
 * EGRESS, with its alarm's tick). Returns the comms to wait for, in
 * v->comms. */
static size_t settle(struct ssrv *v)
{
    size_t n = 0;
    sg_comm_t tick;

    for (uint32_t w = 0; w < v->s.k; w++) {
        struct sconn *k = &v->cs[w];

        if (k->shut && !k->shut_sent && !wire_busy(&k->out)) {
            k->shut_sent = 1;
            wire_poison(&k->out.mb, 1, "");
        }
        /* A failed run does not wait for its writes: their reader may be
         * gone. */
        if (k->close_asked && !k->closed && (!wire_busy(&k->out) || v->s.exit_code)) {
            k->closed = 1;
            /* the close's FIN, to a worker that may still read (one that
             * said BYE reads no more) */
            if (!k->shut_sent && !k->c.finished)
                wire_poison(&k->out.mb, 1, "");
            server_conn_closed(&k->c);
        }
        if (k->in.cur && !k->closed && k->reading)
            feed(v, k);
        if (!k->eof && !k->closed)
            wire_in_post(&k->in);
    }
    if (v->paced && (tick = wire_host_go(&v->eg))) {
        v->comms[n] = tick;
        v->tag[n++] = INT_MIN;
    }
    for (uint32_t w = 0; w < v->s.k; w++) {
        struct sconn *k = &v->cs[w];

        if (k->in.c) {
            v->comms[n] = k->in.c;
            v->tag[n++] = (int)w;
        }
        if (k->out.c) {
            v->comms[n] = k->out.c;
            v->tag[n++] = -(int)w - 1;
        }
    }
    return n;
}

static int done(const struct ssrv *v)
{
    if (!v->s.over)
        return 0;
    for (uint32_t w = 0; w < v->s.k; w++)
        if (!v->cs[w].closed || (wire_busy(&v->cs[w].out) && !v->s.exit_code))
            return 0;
    return 1;
}

/* accept: worker w's connection, as if accepted. The simulated
 * connections are the job's own: the gate against strangers without AUTH
 * (AUTH_GATE_CAP, auth.h), which would evict the oldest of K > 64
 * handshakes begun at once, is not simulated (the handshake itself is). */
static void accept_one(struct ssrv *v, int w)
{
    struct sconn *k = &v->cs[w];
    char peer[48];

    k->w = w;
    k->host = w;
    k->out.mb = wire_mailbox(0, v->sl->rank, w);
    k->out.local = v->sl->host == w;
    k->out.sizes = !v->sl->job->real;
    k->out.host = v->paced ? &v->eg : NULL;
    k->in.mb = wire_mailbox(1, v->sl->rank, w);
    server_conn_add(&v->s, &k->c);
    snprintf(peer, sizeof peer, "simulated host h%d", w);
    server_conn_ready(&k->c, peer);
    conn_unauth_release(&k->c);
}

/* push_seen: m, if a PUSH (a worker's message is one frame), marks its
 * step's first push written and in (record). */
static void push_seen(struct ssrv *v, const struct wmsg *m)
{
    const struct proto_limits lim = { UINT64_MAX / 2, v->s.k, 0 };
    struct proto_header h;

    if (m->eof || m->real < PROTO_HEADER_SIZE || proto_header_decode(m->b, &lim, &h) != 0 ||
        h.type != PROTO_PUSH || h.step >= (uint64_t)v->s.f.c.steps)
        return;
    if (!(m->t0 >= v->push_t0[h.step]))
        v->push_t0[h.step] = m->t0;
    if (!(simgrid_get_clock() >= v->push_in[h.step]))
        v->push_in[h.step] = simgrid_get_clock();
}

static void run(struct ssrv *v)
{
    struct server *srv = &v->s;

    enter(v);
    for (uint32_t w = 0; w < srv->k; w++)
        accept_one(v, (int)w);
    server_start(srv);
    while (!done(v)) {
        size_t n = settle(v);
        ssize_t i;

        if (done(v))
            break;
        leave();
        i = sg_comm_wait_any(v->comms, n);
        enter(v);
        if (i >= 0 && v->tag[i] == INT_MIN) {
            wire_host_tick(&v->eg);     /* a tail's turn (ROUND-ROBIN EGRESS) */
            continue;
        }
        if (i < 0) {
            err_say(v->sl->err, "step %llu: a simulated message failed",
                    ull(store_step(&srv->store)));
            srv->exit_code = 1;
            break;
        }
        if (v->tag[i] < 0) {
            struct sconn *k = &v->cs[-v->tag[i] - 1];
            int tag = wire_put_done(&k->out);

            if (tag >= 0 && !k->closed)
                server_written(&k->c, (enum server_write)tag, 0);
            continue;
        }
        /* a message in */
        struct sconn *k = &v->cs[v->tag[i]];

        if (!k->out.local)
            v->sl->bytes_in += k->in.got->payload;
        push_seen(v, k->in.got);
        wire_in_take(&k->in);
        if (k->closed)
            wire_in_free(&k->in);
        else
            feed(v, k);
    }
    leave();
}

/* record: the protocol's steps into the simulator's record, with the
 * payload bytes across the host's link spread evenly over them. Ingress
 * counts from the step's first push WRITTEN, not its first byte in as
 * server.c counts: a simulated message's bytes all arrive at its end (a
 * TCP stream's first bytes arrive one latency after the write). */
static void record(struct ssrv *v, uint64_t in0, uint64_t out0)
{
    const struct metrics_record *r = &v->s.rec;
    struct sim_slot *sl = v->sl;
    uint64_t steps = (uint64_t)sl->job->c->steps;

    for (size_t i = 0; i < r->nsteps; i++) {
        struct metrics_step ms = r->steps[i];

        if (ms.step < steps && !isnan(v->push_t0[ms.step]))
            ms.ingress_s += v->push_in[ms.step] - v->push_t0[ms.step];
        ms.bytes_in = (sl->bytes_in - in0) / steps;
        ms.bytes_out = (sl->bytes_out - out0) / steps;
        metrics_record_add(&sl->rec, &ms);
    }
}

void sim_ps_server(int argc, char **argv)
{
    struct sim_slot *sl = sg_actor_self_get_data();
    const struct sim_job *j = sl->job;
    struct ssrv *v = calloc(1, sizeof *v);
    int rc;

    (void)argc;
    (void)argv;
    if (j->srv[sl->rank].count == 0) {
        free(v);
        sl->rc = 0;             /* a server the split gives nothing is never started */
        return;
    }
    if (!v || !(v->cs = calloc((size_t)j->k, sizeof *v->cs)) ||
        !(v->comms = calloc(2 * (size_t)j->k + 1, sizeof *v->comms)) ||
        !(v->tag = calloc(2 * (size_t)j->k + 1, sizeof *v->tag)) ||
        !(v->push_t0 = malloc((size_t)j->c->steps * sizeof *v->push_t0)) ||
        !(v->push_in = malloc((size_t)j->c->steps * sizeof *v->push_in))) {
        rc = -ENOMEM;
        err_say(sl->err, "out of memory");
        goto out;
    }
    v->sl = sl;
    /* ROUND-ROBIN EGRESS: one server, on a host of its own (the workers'
     * are hosts 0 .. K-1), with a link rate sends as bin/ps_server's
     * egress (model.h, model_ps_sched: S > 1 is not derived) */
    v->paced = sim_ps_round_robin(j, sl->rank);
    v->eg = (struct wire_host){ .rate = j->c->link_bw, .bulk_end = -INFINITY, .free = -INFINITY,
                                .piece = model_ps_piece(j->c->link_bw) };
    if (v->paced)
        wire_host_start(&v->eg, sl->rank);
    for (int s = 0; s < j->c->steps; s++)
        v->push_t0[s] = v->push_in[s] = NAN;
    if ((rc = srv_make(v, j, sl->rank, sl->err)) != 0)
        goto out;
    run(v);
    enter(v);
    rc = server_end(&v->s);
    leave();
    if (rc != 0 && !sl->err[0])
        err_say(sl->err, "step %llu: the run failed", ull(store_step(&v->s.store)));
    record(v, 0, 0);
    for (int w = 0; w < j->k; w++)
        wire_in_close(&v->cs[w].in);
out:
    if (rc != 0) {
        sl->rc = rc == 1 ? ERR_EOF : rc;
        xport_sim_set_gone(sl->slot);
        if (v && v->cs) {
            sg_mailbox_t *mbs = malloc((size_t)j->k * sizeof *mbs);

            for (int w = 0; mbs && w < j->k; w++)
                mbs[w] = wire_mailbox(0, sl->rank, w);
            if (mbs)
                wire_poison(mbs, j->k, sl->err);
            free(mbs);
        }
        xport_sim_zombie();
    }
    if (v) {
        if (v->cs) {
            for (int w = 0; w < j->k; w++) {
                wire_out_free(&v->cs[w].out);
                wire_in_free(&v->cs[w].in);
            }
            server_free(&v->s);
        }
        free(v->cs);
        free(v->comms);
        free(v->tag);
        free(v->push_t0);
        free(v->push_in);
        free(v);
    }
    sl->rc = rc;
}
