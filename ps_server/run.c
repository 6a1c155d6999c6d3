/* run.c -- what the server does with each event of the protocol: a HELLO
 * (join), the first and last bytes of a push, the K-th push (apply the
 * step, start sending the weights), a BYE, a worker's fault; how a run
 * ends (run_succeed, run_fail) and how the server names whom it waits
 * for. No libuv: the bytes come from main.c's loop, and what goes back
 * (a control frame, a close, the weights) is handed to main.c's conn_*
 * and egress_pump (server.h).
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
 * THE WEIGHTS BUFFER is read by K queued writes at once and changed only by
 * store_apply, which needs all K pushes of the next step; session.c refuses
 * a push from a worker whose weights are still being written (pulling), so
 * no apply can happen while a write of the previous weights is queued
 * (asserted in step_apply).
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "clock.h"
#include "err.h"
#include "log.h"
#include "server.h"

#define LOG_EVERY_S 1.0                 /* loss lines, at most this often */

/* ------------------------------------------------------------- messages */

/* say: snprintf for messages, where a long peer name may cut the line. */
void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

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

unsigned long long ull(uint64_t x)
{
    return (unsigned long long)x;
}

void run_succeed(struct server *srv)
{
    if (srv->over)
        return;
    srv->over = 1;
    srv->exit_code = 0;
    /* Peak RSS: the figure that shows the server's memory does not grow
     * with K (experiments/bench_ps.sh reads this line). */
    struct rusage ru;
    double rss_mib = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss / 1024.0 : -1;
    log_msg("all %u workers done after %d steps; peak RSS %.1f MiB", (unsigned)srv->k,
            srv->f.c.steps, rss_mib);
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
    say(text, sizeof text, "%s: run failed: %s", FLAGS_PROG, line);
    for (struct conn *c = srv->conns; c; c = c->next) {
        if (c->joined || c == culprit)
            conn_linger(c, code, text);
        else
            conn_close(c);
    }
    server_maybe_stop(srv);
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

void egress_finished(struct server *srv)
{
    double now = clock_now();

    srv->cur.egress_s = srv->out_last - srv->out_first;
    srv->cur.bytes_out = srv->link.bytes_out - srv->out_mark;
    srv->out_mark = srv->link.bytes_out;
    if (srv->cur.step >= (uint64_t)srv->f.c.warmup) {
        int rc = metrics_record_add(&srv->rec, &srv->cur);
        assert(rc == 0);    /* room for every timed step, made at start */
        (void)rc;
    }
    if (srv->cur.step + 1 == (uint64_t)srv->f.c.steps && srv->timing) {
        srv->rec.wall_s = now - srv->t0_wall;
        srv->rec.cpu_s = clock_cpu_seconds() - srv->t0_cpu;
        hostload_sample_read(&srv->rec.machine1);
        srv->timing = 0;
    }
    if (srv->finished == srv->k)
        run_succeed(srv);
}

static void step_apply(struct server *srv)
{
    struct store_applied ap;
    char err[ERR_LEN];
    double now;
    int rc;

    /* A push needs its worker's previous weights written (session.c), so
     * all K pushes in means the previous step's writes are done. */
    assert(!egress_active(&srv->eg));
    rc = store_apply(&srv->store, &ap, err);
    if (rc != 0) {
        run_fail(srv, NULL, rc, err);
        return;
    }
    now = clock_now();
    if (ap.step == 0 || ap.step + 1 == (uint64_t)srv->f.c.steps ||
        now - srv->last_log >= LOG_EVERY_S) {
        log_msg("step %llu loss %.6g %llu examples", ull(ap.step), ap.loss, ull(ap.batch));
        srv->last_log = now;
    }
    losscurve_set(&srv->loss, (size_t)ap.step, ap.loss);     /* no-op without --loss-out */
    srv->cur.step = ap.step;
    srv->cur.combine_s = NAN;
    srv->cur.step_s = NAN;
    srv->cur.ingress_s = srv->in_last - srv->in_first;
    srv->cur.bytes_in = srv->link.bytes_in - srv->in_mark;
    srv->in_mark = srv->link.bytes_in;
    srv->in_started = 0;
    srv->sending = ap.step;
    for (uint32_t r = 0; r < srv->k; r++) {
        struct conn *c = srv->by_rank[r];
        struct proto_header h = proto_header_make(PROTO_WEIGHTS, PROTO_RANK_SERVER, srv->k,
                                                  ap.step, srv->scfg.lo, srv->wlen);

        assert(c);          /* every rank pushed, so every rank is here */
        proto_header_encode(&h, c->whdr);
        c->ses.pulling = 1;
    }
    srv->out_first = NAN;
    srv->out_last = now;
    egress_start(&srv->eg, PROTO_HEADER_SIZE + srv->wlen, now);
    egress_pump(srv);
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
            say(why, sizeof why, "HELLO refused: rank %u: the job is full (all %u "
                     "workers joined; rank %u is %s)", (unsigned)r, (unsigned)srv->k,
                     (unsigned)r, srv->by_rank[r]->peer);
        else if (srv->joined == srv->k)
            say(why, sizeof why, "HELLO refused: rank %u: the job is full (all %u "
                     "workers joined; rank %u has finished and left)", (unsigned)r,
                     (unsigned)srv->k, (unsigned)r);
        else
            say(why, sizeof why, "HELLO refused: rank %u already joined from %s",
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
    (void)conn_send_ctl(c, PROTO_WELCOME, 0, NULL);
    log_msg("worker %u joined from %s (%u of %u)", (unsigned)r, c->peer,
            (unsigned)srv->joined, (unsigned)srv->k);
}

static void on_push_begin(struct server *srv, double now)
{
    if (srv->in_started)
        return;
    srv->in_started = 1;
    srv->in_first = now;
    if (store_step(&srv->store) == (uint64_t)srv->f.c.warmup && !srv->timing) {
        srv->timing = 1;
        hostload_sample_read(&srv->rec.machine0);   /* the machine's load: metrics.h */
        srv->t0_wall = now;
        srv->t0_cpu = clock_cpu_seconds();
    }
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

/* conn_lost: the peer closed (reason NULL) or the connection broke
 * (reason: why). A stranger is logged, a worker that owed nothing has
 * finished, any other worker fails the run. */
void conn_lost(struct conn *c, const char *reason)
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
        say(msg, sizeof msg, "%s (%s)", err, reason);
    else
        say(msg, sizeof msg, "%s", err);
    /* A worker that owed nothing and hung up most likely timed out waiting
     * for the server, which was itself waiting for someone else (a stalled
     * worker): name them too. */
    owed[0] = '\0';
    if (!c->ses.pulling && c->ses.hdr_have == 0)
        session_waiting(&c->ses, &srv->store, owed, sizeof owed);
    if (!owed[0] && !c->ses.pulling && c->ses.hdr_have == 0 &&
        waiting_for(srv, c, list, sizeof list) > 0) {
        size_t o = strlen(msg);
        say(msg + o, sizeof msg - o, ", having sent all it owed (its own timeout?); "
            "the server was waiting for %s", list);
    }
    run_fail(srv, c, rc, msg);
    conn_close(c);
}

/* conn_process: bytes from a connection, at their (paced) time. */
void conn_process(struct conn *c, const unsigned char *p, size_t len, double now)
{
    struct server *srv = c->srv;
    char err[ERR_LEN], msg[ERR_LEN + PROTO_TEXT_MAX];

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
            break;
        case SESSION_PUSH_END:
            srv->in_last = now;
            if (store_step_ready(&srv->store))
                step_apply(srv);
            break;
        case SESSION_BYE:
            conn_finished(c);
            break;
        case SESSION_PEER_ERROR:
            if (c->joined) {
                snprintf(msg, sizeof msg, "worker %u: sent ERROR at step %llu: %s",
                         (unsigned)c->ses.rank, ull(store_step(&srv->store)), c->ses.text);
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
        say(out, len, "not taking the weights of step %llu (%llu of %llu bytes written)",
            ull(srv->sending), ull(srv->eg.w[r].sent - (srv->eg.w[r].blocked ? c->wqueued : 0)),
            ull(srv->eg.total));
        return srv->eg.w[r].blocked;
    }
    session_waiting(&c->ses, &srv->store, out, len);
    return out[0] != '\0';
}

/* waiting_for: "; "-separated, what each worker (but skip) still owes the
 * step: not joined, its push, its BYE, or taking the weights. OUT: out.
 * Returns how many were named. */
int waiting_for(struct server *srv, const struct conn *skip, char *out, size_t len)
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
            say(what, sizeof what, "worker %u: not joined", (unsigned)r);
        } else {
            (void)owes(srv, c, owed, sizeof owed);
            if (owed[0])
                say(what, sizeof what, "worker %u (%s): %s", (unsigned)r, c->peer, owed);
        }
        if (what[0]) {
            say(out + o, len - o, "%s%s", named ? "; " : "", what);
            o += strlen(out + o);
            named++;
        }
    }
    return named;
}

/* idle_fail: no byte moved for --timeout: name who the server waits for. */
void run_idle_fail(struct server *srv)
{
    char msg[ERR_LEN * 4], list[ERR_LEN * 3];

    if (waiting_for(srv, NULL, list, sizeof list) == 0)
        snprintf(list, sizeof list, "nothing (internal: idle with no one to wait for)");
    say(msg, sizeof msg, "step %llu: no progress for %.1f s; waiting for %s",
        ull(store_step(&srv->store)), srv->timeout, list);
    run_fail(srv, NULL, ERR_TIMEOUT, msg);
}

/* run_silence_check: SILENCE (silence.h): tell the clocks what the server
 * waits for from each rank; fail the run naming the worker whose clock
 * reached --timeout. */
void run_silence_check(struct server *srv, double now)
{
    struct conn *worst;
    char what[128], msg[ERR_LEN];
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
    say(msg, sizeof msg, "worker %u: no progress for %.1f s (--timeout) at step %llu: %s",
        (unsigned)worst->ses.rank, srv->timeout, ull(store_step(&srv->store)), what);
    run_fail(srv, worst, ERR_TIMEOUT, msg);
    /* The ERROR went out if its socket had room. Lingering for a worker
     * that does not read would only hold the server's exit back. */
    conn_close(worst);
}
