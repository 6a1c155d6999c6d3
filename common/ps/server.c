/* server.c -- what the server does with each event of the protocol: a HELLO
 * (join), the first and last bytes of a push, the K-th push (apply the
 * step, start sending the weights), a BYE, a worker's fault; how a run
 * ends (run_succeed, run_fail) and how the server names whom it waits
 * for; the run's start and end (server_start, server_end), and the state
 * every builder of a server shares (server_alloc). No libuv: the
 * bytes come from server_conn.c (under the transport's table, server.h),
 * and what goes back (a control frame, a close, the weights) is handed to
 * server_conn.c's
 * conn_* and server_egress_pump.
 *
 * FAULTS. A connection that has not passed the AUTH handshake and sends
 * anything else is refused ("not authenticated: ...", nothing of the
 * job said), closed and logged. Before all K workers have joined, a
 * connection that sends anything wrong (garbage, a wrong HELLO, a taken rank) is answered with
 * ERROR, closed and logged, and the server goes on. A joined worker's
 * fault (lost connection, refused push, NaN, an ERROR frame, silence past
 * --timeout) ends the run: one log line naming the worker, its address and
 * the step, ERROR to every other worker, exit 1.
 *
 * PER-BUCKET PULL. After every push the server asks the store for what
 * every worker has now pushed (store_release, store.h RELEASE) and hands
 * each released part to the egress at once (egress_release), so the
 * weights of the top buckets go out while the lower ones still come in.
 * The step's last release completes it: the loss is logged and the
 * ingress half of the record filled.
 *
 * THE WEIGHTS BUFFER of a step (srv->wbuf, the store's) is read by K
 * queued writes at once and written only in parts not yet released; it is
 * overwritten only by the step after next, which needs all K pushes of the
 * next step complete; session.c refuses a push from a worker whose weights
 * of the step before are still being written (pulling), so no new step's
 * release can start while a write of the previous weights is queued
 * (asserted in step_release).
 *
 * THE MODES (mode.h): in sync the barrier above runs the step; the
 * other modes' pushes are taken by server_mode.c (server_mode_push), which
 * applies them and sends the weights.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "resume.h"
#include "server.h"

#define LOG_EVERY_S 1.0                 /* loss lines, at most this often */

/* ------------------------------------------------------------- messages */

/* with_peer: msg with c's address after its "worker R", or appended. */
static void with_peer(const char *msg, const struct conn *c, char *out, size_t len)
{
    unsigned r;
    int pos = 0;

    if (!c)
        snprintf(out, len, "%s", msg);
    else if (sscanf(msg, "worker %u:%n", &r, &pos) == 1 && pos > 0)
        snprintf(out, len, "worker %u (%s):%s", r, c->peer, msg + pos);
    else
        snprintf(out, len, "%s (%s)", msg, c->peer);
}

/* payload_note: one step's payload bytes into *p (server.h). */
static void payload_note(struct payload *p, uint64_t bytes, uint64_t step)
{
    if (p->steps == 0)
        p->per_step = bytes;
    else if (bytes != p->per_step)
        p->uneven = 1;
    p->steps++;
    p->total += bytes;
    (void)step;
}

int server_alloc(struct server *srv, size_t chunk, double now)
{
    srv->sent_version = calloc(srv->k, sizeof *srv->sent_version);
    srv->want_pull = calloc(srv->k, 1);
    srv->by_rank = calloc(srv->k, sizeof *srv->by_rank);
    srv->sil_state = calloc(srv->k, 1);
    if (!srv->sent_version || !srv->want_pull || !srv->by_rank || !srv->sil_state ||
        egress_init(&srv->eg, srv->k, &srv->link, chunk, srv->scfg.hi - srv->scfg.lo,
                    srv->es) != 0 ||
        silence_init(&srv->sil, srv->k, srv->timeout, now) != 0 ||
        metrics_record_init(&srv->rec, (size_t)(srv->f.c.steps - srv->f.c.warmup)) != 0 ||
        measure_init(srv) != 0)
        return -ENOMEM;
    srv->eg.local = srv->f.local_worker;
    srv->out_first = NAN;
    return 0;
}

void server_free(struct server *srv)
{
    metrics_record_free(&srv->rec);
    measure_destroy(srv);
    egress_destroy(&srv->eg);
    silence_destroy(&srv->sil);
    free(srv->sil_state);
    free(srv->by_rank);
    free(srv->sent_version);
    free(srv->want_pull);
    mode_destroy(&srv->mode);
    store_destroy(&srv->store);
}

void server_start(struct server *srv)
{
    assert(srv->io && srv->io->machine);    /* every builder fills both (server.h) */
    silence_restart(&srv->sil, srv->io->now(srv));
    srv->last_log = -INFINITY;
}

int server_end(struct server *srv)
{
    char err[ERR_LEN];

    if (srv->exit_code == 0 && (srv->f.c.csv || srv->f.c.json) &&
        metrics_record_save(&srv->rec, srv->f.c.csv, srv->f.c.json, err) != 0) {
        log_msg("%s", err);
        srv->exit_code = 1;
    }
    /* The loss files also after a failure (server_measure.c). */
    if (measure_write(srv) != 0)
        srv->exit_code = 1;
    return srv->exit_code;
}

void run_succeed(struct server *srv)
{
    if (srv->over)
        return;
    srv->over = 1;
    srv->exit_code = server_mode_finish(srv);
    measure_finish(srv);
    /* Peak RSS: the figure that shows the server's memory does not grow
     * with K (experiments/bench_ps.sh reads this line). The machine's
     * (server.h, struct server_machine): -1.0 when not known. */
    double rss_mib = srv->io->machine->peak_rss_mib(srv);
    log_msg("all %u workers done after %d steps; peak RSS %.1f MiB", (unsigned)srv->k,
            srv->f.c.steps, rss_mib);
    /* The payload (elements only, no headers): K x count x size each way
     * per step, P times that in with P pushes per step
     * (tests/t_ps_range.sh reads this line). */
    if (srv->mode.cfg.kind != MODE_SYNC)
        ;   /* no server steps: the mode's own line above says what was applied */
    else if (!srv->pay_in.uneven && !srv->pay_out.uneven)
        log_msg("payload bytes per step: in %llu, out %llu (%llu steps; %llu WEIGHTS frames)",
                ull(srv->pay_in.per_step), ull(srv->pay_out.per_step), ull(srv->pay_in.steps),
                ull(srv->eg.frames_out));
    else
        log_msg("payload bytes: in %llu over %llu steps, out %llu over %llu steps (steps "
                "differ; %llu WEIGHTS frames)", ull(srv->pay_in.total), ull(srv->pay_in.steps),
                ull(srv->pay_out.total), ull(srv->pay_out.steps), ull(srv->eg.frames_out));
    for (struct conn *c = srv->conns; c; c = c->next)
        conn_close(c);
    server_maybe_stop(srv);
}

/* run_fail: the run ends: one line naming what failed (msg names the
 * worker and the step; culprit adds its address), ERROR to every worker,
 * exit status 1. */
void run_fail(struct server *srv, struct conn *culprit, int code, const char *msg)
{
    char line[ERR_LEN * 4], text[PROTO_TEXT_MAX];

    if (srv->over)
        return;
    srv->over = 1;
    srv->exit_code = 1;
    with_peer(msg, culprit, line, sizeof line);
    log_msg("run failed: %s", line);
    err_sayn(text, sizeof text, "%s: run failed: %s", SERVER_PROG, line);
    for (struct conn *c = srv->conns; c; c = c->next) {
        if (c->joined || c == culprit)
            conn_linger(c, code, text);
        else
            conn_close(c);
    }
    server_maybe_stop(srv);
}

/* run_lost: joined worker c's connection is gone (msg says how). Without
 * --checkpoint the run fails, as the design says. With it the server goes
 * back to its last checkpoint (ROLLBACK, resume.h): it closes every
 * worker, reloads the file, and takes K HELLOs again; the workers
 * (--reconnect-window) and a restarted one rejoin at its step. The wait
 * for them is the server's --timeout, like the first join. */
void run_lost(struct server *srv, struct conn *c, int code, const char *msg)
{
    char line[ERR_LEN * 4], err[ERR_LEN];
    int rc;

    if (!srv->f.checkpoint || srv->over) {
        run_fail(srv, c, code, msg);
        return;
    }
    with_peer(msg, c, line, sizeof line);
    log_msg("%s; going back to the last checkpoint (%s), waiting for all %u workers to "
            "rejoin", line, srv->f.checkpoint, (unsigned)srv->k);
    for (struct conn *k = srv->conns; k; k = k->next)
        if (k->joined) {
            if (srv->by_rank[k->ses.rank] == k)
                srv->by_rank[k->ses.rank] = NULL;
            conn_close(k);
        }
    srv->joined = srv->finished = 0;
    srv->in_started = 0;
    srv->resending = 0;
    egress_cancel(&srv->eg);
    if ((rc = resume_load(srv, srv->f.checkpoint, err)) != 0) {
        run_fail(srv, NULL, rc, err);
        return;
    }
    while (srv->rec.nsteps > 0 && srv->rec.steps[srv->rec.nsteps - 1].step >= srv->first_step)
        srv->rec.nsteps--;
    silence_restart(&srv->sil, srv->io->now(srv));
}

/* conn_refuse: a connection that has not joined sent something wrong:
 * ERROR, close, one line; the run goes on. */
void conn_refuse(struct conn *c, int code, const char *why)
{
    log_msg("connection from %s refused: %s", c->peer, why);
    conn_linger(c, code, why);
}

/* conn_fault: a refusal on connection c: before the join only c goes;
 * after it, the run. */
static void conn_fault(struct conn *c, int code, const char *why)
{
    if (c->joined)
        run_fail(c->srv, c, code, why);
    else
        conn_refuse(c, code, why);
}

static void step_release(struct server *srv);

void server_egress_done(struct server *srv)
{
    double now = srv->io->now(srv);

    if (srv->psgd_reply) {          /* PowerSGD: a round's sum, not the weights */
        server_psgd_sent(srv);
        step_release(srv);
        return;
    }
    if (srv->resending) {           /* a resumed run's first weights: no step's record */
        srv->resending = 0;
        srv->out_mark = srv->link.bytes_out;
        if (srv->finished == srv->k)
            run_succeed(srv);
        return;
    }

    srv->cur.egress_s = srv->out_last - srv->out_first;
    srv->cur.bytes_out = srv->link.bytes_out - srv->out_mark;
    srv->out_mark = srv->link.bytes_out;
    payload_note(&srv->pay_out, srv->eg.payload_out - srv->pay_out_mark, srv->cur.step);
    srv->pay_out_mark = srv->eg.payload_out;
    if (srv->cur.step >= (uint64_t)srv->f.c.warmup) {
        int rc = metrics_record_add(&srv->rec, &srv->cur);
        assert(rc == 0);    /* room for every timed step, made at start */
        (void)rc;
    }
    measure_util_close(srv, now);       /* the link's utilization (server_measure.c) */
    if (srv->cur.step + 1 == (uint64_t)srv->f.c.steps && srv->timing)
        measure_timed_end(srv, now);
    if (srv->finished == srv->k)
        run_succeed(srv);
}

/* weights_send: a resumed server's first weights (RESUME, proto.h): the
 * store's weights, those of `step`, whole, to all K workers through the
 * egress schedule (one release of the whole range). */
static void weights_send(struct server *srv, uint64_t step, double now)
{
    assert(!egress_active(&srv->eg));
    srv->sending = step;
    srv->wbuf = store_weights(&srv->store);
    srv->out_first = NAN;
    srv->out_last = now;
    egress_release(&srv->eg, srv->scfg.hi - srv->scfg.lo, now);
    for (uint32_t r = 0; r < srv->k; r++) {
        assert(srv->by_rank[r]);    /* every rank joined */
        srv->by_rank[r]->ses.pulling = 1;
    }
    server_egress_pump(srv);
}

void server_weights_header(const struct server *srv, const struct egress_piece *pc,
                           unsigned char *out)
{
    struct proto_header h = proto_header_make(PROTO_WEIGHTS, PROTO_RANK_SERVER, srv->k,
                                              srv->sending, srv->scfg.lo + pc->first,
                                              pc->count * srv->es);
    proto_header_encode(&h, out);
}

/* step_done: the step's last release: its loss, the ingress half of its
 * record, the checkpoint (--checkpoint), and every worker still being
 * written to is now pulling. Nonzero: the run failed (run_fail said why). */
static int step_done(struct server *srv, const struct store_released *rel, double now)
{
    uint64_t pay = store_payload_in(&srv->store) - srv->pay_in_mark;
    char err[ERR_LEN];
    int rc;

    if (rel->step == 0 || rel->step + 1 == (uint64_t)srv->f.c.steps ||
        now - srv->last_log >= LOG_EVERY_S) {
        if (srv->f.c.workload == PROTO_WORKLOAD_SYNTHETIC)     /* no model, no loss to show */
            log_msg("step %llu done (synthetic workload: no loss) %llu examples", ull(rel->step),
                    ull(rel->batch));
        else
            log_msg("step %llu loss %.6g %llu examples", ull(rel->step), rel->loss,
                    ull(rel->batch));
        srv->last_log = now;
    }
    measure_released(srv, rel->step, rel->loss, now);  /* the loss curve, the waits */
    srv->cur.step = rel->step;
    srv->cur.combine_s = NAN;
    srv->cur.step_s = NAN;
    srv->cur.enter_t = NAN;
    srv->cur.ingress_s = srv->in_last - srv->in_first;
    srv->cur.bytes_in = srv->link.bytes_in - srv->in_mark;
    srv->in_mark = srv->link.bytes_in;
    srv->in_started = 0;
    payload_note(&srv->pay_in, pay, rel->step);
    srv->pay_in_mark = store_payload_in(&srv->store);
    /* --checkpoint (resume.h): the step's weights are whole now (its last
     * part is released but not yet written). */
    if ((rc = resume_after_apply(srv, rel->step, err)) != 0) {
        run_fail(srv, NULL, rc, err);
        return rc;
    }
    for (uint32_t r = 0; r < srv->k; r++) {
        struct conn *c = srv->by_rank[r];

        assert(c);          /* every rank pushed, so every rank is here */
        if (!egress_rank_done(&srv->eg, r))
            c->ses.pulling = 1;
    }
    return 0;
}

/* step_release: what every worker has pushed and is not released yet
 * goes out (PER-BUCKET PULL above). */
static void step_release(struct server *srv)
{
    struct store_released rel;
    char err[ERR_LEN];
    double now;
    int rc;

    if (srv->psgd_reply || server_psgd_release(srv) != 0)
        return;                     /* a round's sum goes out first (server_psgd.c) */
    rc = store_release(&srv->store, &rel, err);
    if (rc != 0) {
        run_fail(srv, NULL, rc, err);
        return;
    }
    if (rel.count == 0)
        return;
    now = srv->io->now(srv);
    if (rel.top == rel.count) {
        /* The step's first release. A push needs its worker's previous
         * weights written (session.c), so all K pushes in means the
         * previous step's writes are done. */
        assert(!egress_active(&srv->eg));
        srv->sending = rel.step;
        srv->wbuf = rel.weights;
        srv->out_first = NAN;
        srv->out_last = now;
    }
    /* Ready when the loop would have released it on cores of its own:
     * its waits for a CPU taken off (server_own_wait). */
    egress_release(&srv->eg, rel.count, now - server_own_wait(srv));
    if (rel.last && step_done(srv, &rel, now) != 0)
        return;
    server_egress_pump(srv);
}

static void on_hello(struct conn *c, double now)
{
    struct server *srv = c->srv;
    uint32_t r = c->ses.rank;
    char why[ERR_LEN];

    /* Once all K have joined, no HELLO is taken, even for a rank whose
     * worker has finished and left: a rank joins once per run. */
    if (srv->joined == srv->k || srv->by_rank[r]) {
        if (srv->joined == srv->k && srv->by_rank[r])
            err_sayn(why, sizeof why, "HELLO refused: rank %u: the job is full (all %u "
                     "workers joined; rank %u is %s)", (unsigned)r, (unsigned)srv->k,
                     (unsigned)r, srv->by_rank[r]->peer);
        else if (srv->joined == srv->k)
            err_sayn(why, sizeof why, "HELLO refused: rank %u: the job is full (all %u "
                     "workers joined; rank %u has finished and left)", (unsigned)r,
                     (unsigned)srv->k, (unsigned)r);
        else
            err_sayn(why, sizeof why, "HELLO refused: rank %u already joined from %s",
                     (unsigned)r, srv->by_rank[r]->peer);
        conn_refuse(c, ERR_MISMATCH, why);
        return;
    }
    c->rbuf = malloc(srv->rcap);
    if (!c->rbuf) {
        snprintf(why, sizeof why, "HELLO refused: rank %u: out of memory for its read buffer",
                 (unsigned)r);
        conn_refuse(c, -ENOMEM, why);
        return;
    }
    c->rcap = srv->rcap;
    srv->by_rank[r] = c;
    c->joined = 1;
    srv->nstrangers--;
    srv->joined++;
    session_join(&c->ses);
    silence_progress(&srv->sil, now);
    silence_heard(&srv->sil, r, now);
    {
        /* WELCOME: the range this server owns (proto.h). */
        uint8_t frame[PROTO_HEADER_SIZE + PROTO_WELCOME_SIZE];
        struct proto_header h = proto_header_make(PROTO_WELCOME, PROTO_RANK_SERVER, srv->k,
                                                  store_clock(&srv->store, r), 0,
                                                  PROTO_WELCOME_SIZE);
        struct proto_welcome w = { srv->scfg.lo, srv->scfg.hi - srv->scfg.lo };

        proto_header_encode(&h, frame);
        proto_welcome_encode(&w, frame + PROTO_HEADER_SIZE);
        (void)conn_send_raw(c, frame, sizeof frame);
    }
    log_msg("worker %u joined from %s (%u of %u)", (unsigned)r, c->peer,
            (unsigned)srv->joined, (unsigned)srv->k);
    measure_joined(srv, now);           /* the first: wall_s counts from here (server_measure.c) */
    /* RESUME (proto.h): a server that goes on from step s > 0 sends every
     * worker the weights of step s - 1 once all have joined. */
    if (srv->joined == srv->k && store_step(&srv->store) > 0 &&
        srv->mode.cfg.kind == MODE_SYNC) {
        srv->resending = 1;
        weights_send(srv, store_step(&srv->store) - 1, now);
    }
}

static void on_push_begin(struct server *srv, double now)
{
    if (srv->in_started)
        return;
    srv->in_started = 1;
    srv->in_first = now;
    /* Timed from --warmup on, or from the step a resumed run starts at. */
    if (store_step(&srv->store) == ((uint64_t)srv->f.c.warmup > srv->first_step ?
                                    (uint64_t)srv->f.c.warmup : srv->first_step) &&
        !srv->timing)
        measure_timed_begin(srv, now);
}

/* conn_finished: a worker is done (BYE, or closed after the last step). */
void conn_finished(struct conn *c)
{
    struct server *srv = c->srv;

    if (c->finished)
        return;
    c->finished = 1;
    srv->finished++;
    if (srv->finished == srv->k && !egress_active(&srv->eg))
        run_succeed(srv);
}

/* server_conn_lost: the peer closed (reason NULL) or the connection broke
 * (reason: why). A stranger is logged, a worker that owed nothing has
 * finished, any other worker fails the run. */
void server_conn_lost(struct conn *c, const char *reason)
{
    struct server *srv = c->srv;
    char err[ERR_LEN], msg[ERR_LEN * 4], list[ERR_LEN * 2], owed[96];
    int rc;

    if (c->lingering || srv->over) {
        conn_close(c);
        return;
    }
    rc = session_lost(&c->ses, &srv->store, err);
    if (!c->joined) {
        log_msg("connection from %s %s%s%s", c->peer, err,
                reason ? ": " : "", reason ? reason : "");
        conn_close(c);
        return;
    }
    if (rc == 0) {
        conn_close(c);
        conn_finished(c);
        return;
    }
    if (reason)
        err_sayn(msg, sizeof msg, "%s (%s)", err, reason);
    else
        err_sayn(msg, sizeof msg, "%s", err);
    /* A worker that owed nothing and hung up most likely timed out waiting
     * for the server, which was itself waiting for someone else (a stalled
     * worker): name them too. */
    owed[0] = '\0';
    if (!c->ses.pulling && c->ses.hdr_have == 0)
        session_waiting(&c->ses, &srv->store, owed, sizeof owed);
    if (!owed[0] && !c->ses.pulling && c->ses.hdr_have == 0 &&
        server_waiting_for(srv, c, list, sizeof list) > 0) {
        size_t o = strlen(msg);
        err_sayn(msg + o, sizeof msg - o, ", having sent all it owed (its own timeout?); "
            "the server was waiting for %s", list);
    }
    run_lost(srv, c, rc, msg);
    conn_close(c);
}

/* at_step: where the run is, for a message: "step S" in sync and backup;
 * in async and ssp the store's step is the weights' version and each
 * worker has a step of its own: "version V (worker R at its step S)" for
 * rank R >= 0, "version V" for none. Returns buf. */
static const char *at_step(const struct server *srv, int rank, char *buf, size_t len)
{
    unsigned long long v = ull(store_step(&srv->store));

    if (srv->mode.cfg.kind == MODE_SYNC || srv->mode.cfg.kind == MODE_BACKUP)
        snprintf(buf, len, "step %llu", v);
    else if (rank >= 0)
        snprintf(buf, len, "version %llu (worker %d at its step %llu)", v, rank,
                 ull(store_clock(&srv->store, (uint32_t)rank)));
    else
        snprintf(buf, len, "version %llu", v);
    return buf;
}

/* conn_process: bytes from a connection, at their (paced) time. */
void conn_process(struct conn *c, const unsigned char *p, size_t len, double now)
{
    struct server *srv = c->srv;
    char err[ERR_LEN], msg[ERR_LEN + PROTO_TEXT_MAX], at[96];

    while (len > 0 && !c->closing && !c->lingering && !srv->over) {
        size_t used = 0;
        int ev = session_feed(&c->ses, &srv->store, p, len, &used, err);

        p += used;
        len -= used;
        if (ev < 0) {
            conn_fault(c, ev, err);
            return;
        }
        switch (ev) {
        case SESSION_AUTH_REPLY:
            if (conn_send_raw(c, c->ses.auth_out, AUTH_FRAME) != 0) {
                conn_close(c);
                return;
            }
            break;
        case SESSION_AUTHED:
            conn_unauth_release(c);
            break;
        case SESSION_HELLO:
            on_hello(c, now);
            break;
        case SESSION_PUSH_BEGIN:
            on_push_begin(srv, now);
            measure_util_enter(srv, c->ses.rank, c->ses.h.step, now);
            break;
        case SESSION_PUSH_END:
            srv->in_last = now;
            measure_push_end(srv, c->ses.rank, now);
            if (server_mode_push(srv, c, now) == 0)
                step_release(srv);
            break;
        case SESSION_BYE:
            conn_finished(c);
            break;
        case SESSION_PEER_ERROR:
            if (c->joined) {
                snprintf(msg, sizeof msg, "worker %u: sent ERROR at %s: %s", (unsigned)c->ses.rank,
                         at_step(srv, (int)c->ses.rank, at, sizeof at), c->ses.text);
                run_fail(srv, c, ERR_EOF, msg);
            } else {
                log_msg("connection from %s sent ERROR before HELLO: %s; closed", c->peer,
                        c->ses.text);
                conn_close(c);
            }
            return;
        default:
            break;
        }
    }
}

/* owes: what joined worker c still owes the step, as a phrase in out
 * ("no push for step 3 yet", "not taking the weights of step 2 (...)");
 * empty when it owes nothing. Returns 1 when the server is waiting on the
 * worker itself (SILENCE): it owes bytes, or a write of the weights sits
 * on its full socket. 0 when it owes nothing, or when the next piece of
 * its weights is the server's to send. */
static int owes(struct server *srv, const struct conn *c, char *out, size_t len)
{
    uint32_t r = c->ses.rank;

    out[0] = '\0';
    if (c->ses.pulling && !egress_rank_done(&srv->eg, r)) {
        err_sayn(out, len, "not taking the weights of step %llu (%llu of %llu elements handed "
            "out%s)", ull(srv->sending), ull(srv->eg.w[r].done), ull(srv->eg.n),
            srv->eg.w[r].blocked ? ", a write queued" : "");
        return srv->eg.w[r].blocked;
    }
    session_waiting(&c->ses, &srv->store, out, len);
    return out[0] != '\0';
}

/* server_waiting_for: "; "-separated, what each worker (but skip) still owes the
 * step: not joined, its push, its BYE, or taking the weights. OUT: out.
 * Returns how many were named. */
int server_waiting_for(struct server *srv, const struct conn *skip, char *out, size_t len)
{
    char what[NET_ADDR_LEN + 160], owed[128];
    size_t o = 0;
    int named = 0;

    out[0] = '\0';
    for (uint32_t r = 0; r < srv->k && o + 1 < len; r++) {
        struct conn *c = srv->by_rank[r];

        what[0] = '\0';
        if (c == skip && c)
            continue;
        if (!c) {
            err_sayn(what, sizeof what, "worker %u: not joined", (unsigned)r);
        } else {
            (void)owes(srv, c, owed, sizeof owed);
            if (owed[0])
                err_sayn(what, sizeof what, "worker %u (%s): %s", (unsigned)r, c->peer, owed);
        }
        if (what[0]) {
            err_sayn(out + o, len - o, "%s%s", named ? "; " : "", what);
            o += strlen(out + o);
            named++;
        }
    }
    return named;
}

/* idle_fail: no byte moved for --timeout: name who the server waits for. */
void run_idle_fail(struct server *srv)
{
    char msg[ERR_LEN * 4], list[ERR_LEN * 3], at[96];

    if (server_waiting_for(srv, NULL, list, sizeof list) == 0)
        snprintf(list, sizeof list, "nothing (internal: idle with no one to wait for)");
    err_sayn(msg, sizeof msg, "%s: no progress for %.1f s; waiting for %s",
        at_step(srv, -1, at, sizeof at), srv->timeout, list);
    run_fail(srv, NULL, ERR_TIMEOUT, msg);
}

/* run_silence_check: SILENCE (silence.h): tell the clocks what the server
 * waits for from each rank; fail the run naming the worker whose clock
 * reached --timeout. */
void run_silence_check(struct server *srv, double now)
{
    struct conn *worst;
    char what[128], msg[ERR_LEN], at[96];
    int r;

    for (uint32_t i = 0; i < srv->k; i++) {
        struct conn *c = srv->by_rank[i];

        if (!c || c->closing || c->lingering)
            srv->sil_state[i] = SILENCE_GONE;
        else if (c->held || !owes(srv, c, what, sizeof what))
            srv->sil_state[i] = SILENCE_OWES_NOTHING;
        else
            srv->sil_state[i] = SILENCE_WAITING;
    }
    r = silence_check(&srv->sil, srv->sil_state, now);
    if (r < 0)
        return;
    worst = srv->by_rank[r];
    (void)owes(srv, worst, what, sizeof what);
    err_sayn(msg, sizeof msg, "worker %u: no progress for %.1f s (--timeout) at %s: %s",
        (unsigned)worst->ses.rank, srv->timeout,
        at_step(srv, (int)worst->ses.rank, at, sizeof at), what);
    run_fail(srv, worst, ERR_TIMEOUT, msg);
    /* The ERROR went out if its socket had room. Lingering for a worker
     * that does not read would only hold the server's exit back. */
    conn_close(worst);
}
