/* server_conn.c -- the server's side of its connections, under the protocol and
 * above the transport: what happens to the bytes a connection reads (the
 * emulated link's pacing, then server.c's conn_process), how the server's
 * frames go out (control frames, the egress schedule's weights pieces, the
 * modes' whole frames), how a connection closes or lingers, and the tick.
 * No libuv and no sockets: everything that touches one goes through the
 * server's transport table (struct server_io, server.h), which ps_server/main.c
 * fills with libuv; the transport calls back only through the server_*
 * functions of server.h.
 *
 * EMULATED LINK (link.h, docs/link.md). The server's one NIC is shared by
 * all its connections. Ingress: every read is at most one link piece and is
 * booked with link_ingress_reserve (a read right after a late release from
 * the release's due time); when the booking says "not before t",
 * the bytes are held (reading that connection stops) until the timer fires
 * at t, and only then enter the store: they reach the sum at their paced
 * time. Bookings are made in time order, so the held connections form a
 * FIFO queue sorted by release time. Egress: egress_next hands out pieces
 * when their deadline comes. Without the link, reads are 256 KiB and the
 * weights go in 1 MiB writes, as fast as the sockets take them.
 *
 * CLOSING after an ERROR "lingers": the server shuts its side down and
 * drains what the peer still sends (up to linger_s), so the peer reads the
 * ERROR instead of a reset.
 *
 * OWNERSHIP (server.h): writes keep their buffers (the store's weights,
 * the conn's header and control frame, a mode's frame) alive until the
 * transport reports them written (server_written): the weights change only
 * after all K pushes of the next step, which need every write of these to
 * have completed (server.c).
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "wire/auth.h"
#include "server.h"

static double now_of(const struct server *srv)
{
    return srv->io->now(srv);
}

/* ------------------------------------------------------------ the link */

double server_own_wait(const struct server *srv)
{
    const struct server_machine *m = srv->io->machine;
    double q, cap;

    if (!m || !m->run_delay || !(srv->link.ingress.rate > 0.0))
        return 0.0;
    q = m->run_delay(srv);
    cap = (double)link_piece(&srv->link) / srv->link.ingress.rate + srv->link.latency_s;
    return q > 0.0 ? (q < cap ? q : cap) : 0.0;
}

/* held_remove: c leaves the queue of reads the link holds back. */
static void held_remove(struct server *srv, struct conn *c)
{
    struct conn **pp, *prev = NULL;

    if (!c->held)
        return;
    for (pp = &srv->held_head; *pp; prev = *pp, pp = &(*pp)->held_next) {
        if (*pp == c) {
            *pp = c->held_next;
            if (srv->held_tail == c)
                srv->held_tail = prev;
            break;
        }
    }
    c->held = 0;
    c->held_next = NULL;
}

/* ------------------------------------------------------------ closing */

/* server_maybe_stop: once the run is over, no more connections; once every
 * connection is closed too, the transport closes the rest. */
void server_maybe_stop(struct server *srv)
{
    if (!srv->over)
        return;
    srv->io->over(srv, srv->nconns);
}

void server_conn_closed(struct conn *c)
{
    struct server *srv = c->srv;

    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->nconns--;
    if (!c->joined)
        srv->nstrangers--;
    else if (srv->by_rank[c->ses.rank] == c)
        srv->by_rank[c->ses.rank] = NULL;
    free(c->rbuf);
    c->rbuf = NULL;
    server_mode_gone(srv, c);
    free(c->wsnap);
    c->wsnap = NULL;
    server_maybe_stop(srv);
}

/* conn_unauth_release: c no longer counts against the cap on connections
 * without AUTH (it passed, or it is going). */
void conn_unauth_release(struct conn *c)
{
    if (c->unauth) {
        c->unauth = 0;
        c->srv->nunauth--;
    }
}

void conn_close(struct conn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    conn_unauth_release(c);
    held_remove(c->srv, c);
    c->srv->io->close(c);
}

void server_conn_close(struct conn *c)
{
    conn_close(c);
}

/* ------------------------------------------------------------- writing */

/* conn_send_ctl: a WELCOME or ERROR frame (text: the reason, or NULL).
 * Before the AUTH handshake is done the header says nothing of the job
 * (world 1, step 0). Written at once if the socket takes it, else queued.
 * -1 when a control frame is still queued (nothing sent). */
int conn_send_ctl(struct conn *c, uint16_t type, int code, const char *text)
{
    struct server *srv = c->srv;
    size_t tlen = text ? strlen(text) : 0;
    struct proto_header h;

    if (c->cbusy || c->closing)
        return -1;
    if (tlen > PROTO_TEXT_MAX)
        tlen = PROTO_TEXT_MAX;
    if (c->ses.authed)
        h = proto_header_make(type, PROTO_RANK_SERVER, srv->k, store_step(&srv->store),
                              (uint64_t)(int64_t)code, tlen);
    else
        h = proto_header_make(type, PROTO_RANK_SERVER, 1, 0, (uint64_t)(int64_t)code, tlen);
    proto_header_encode(&h, c->cbuf);
    if (tlen)
        memcpy(c->cbuf + PROTO_HEADER_SIZE, text, tlen);
    return conn_send_raw(c, c->cbuf, PROTO_HEADER_SIZE + tlen);
}

/* conn_send_raw: len bytes (at most sizeof c->cbuf) through the control
 * buffer: AUTH message 2, or a frame conn_send_ctl made there. */
int conn_send_raw(struct conn *c, const void *p, size_t len)
{
    struct server *srv = c->srv;
    struct server_buf b;
    int w;

    if (c->cbusy || c->closing || len > sizeof c->cbuf)
        return -1;
    if (p != c->cbuf)
        memcpy(c->cbuf, p, len);
    b = (struct server_buf){ c->cbuf, len };
    w = srv->io->try_write(c, &b, 1);
    if (w < 0)
        return -1;          /* the peer is gone; the read side will see it */
    srv->link.bytes_out += (uint64_t)w;
    if ((size_t)w == len)
        return 0;
    b = (struct server_buf){ c->cbuf + w, len - (size_t)w };
    c->cqueued = len - (size_t)w;
    if (srv->io->write(c, SERVER_WRITE_CTL, &b, 1) != 0)
        return -1;
    c->cbusy = 1;
    return 0;
}

static void ctl_written(struct conn *c, int status)
{
    c->cbusy = 0;
    if (status == 0)
        c->srv->link.bytes_out += c->cqueued;
}

static void snap_written(struct conn *c, int status)
{
    struct server *srv = c->srv;
    double now = now_of(srv);
    char msg[ERR_LEN];

    if (c->wlen == 0) {     /* a paced frame is freed with its last piece */
        free(c->wsnap);
        c->wsnap = NULL;
    }
    if (srv->over || c->closing)
        return;
    if (status < 0) {
        snprintf(msg, sizeof msg, "worker %u: sending the weights of its step: %s",
                 (unsigned)c->ses.rank, srv->io->strerror(status));
        run_lost(srv, c, ERR_EOF, msg);
        return;
    }
    srv->link.bytes_out += c->wqueued;
    silence_progress(&srv->sil, now);
    silence_heard(&srv->sil, c->ses.rank, now);
    if (c->wlen > 0) {
        server_mode_written(srv, c, now);
        return;
    }
    c->ses.pulling = 0;
}

int conn_send_weights(struct conn *c, unsigned char *frame, size_t len)
{
    struct server *srv = c->srv;
    struct server_buf b;
    int w;

    assert(!c->wsnap && len <= UINT32_MAX);
    c->wsnap = frame;
    if (c->closing || c->lingering)
        return -1;
    b = (struct server_buf){ frame, len };
    w = srv->io->try_write(c, &b, 1);
    if (w < 0)
        return -1;
    srv->link.bytes_out += (uint64_t)w;
    if ((size_t)w == len) {
        free(c->wsnap);
        c->wsnap = NULL;
        c->ses.pulling = 0;
        return 0;
    }
    b = (struct server_buf){ frame + w, len - (size_t)w };
    c->wqueued = len - (size_t)w;
    c->ses.pulling = 1;
    if (srv->io->write(c, SERVER_WRITE_SNAP, &b, 1) != 0)
        return -1;
    return 0;
}

static void conn_read_start(struct conn *c)
{
    if (c->reading || c->closing)
        return;
    if (c->srv->io->read_start(c) == 0)
        c->reading = 1;
}

static void conn_read_stop(struct conn *c)
{
    if (!c->reading)
        return;
    c->srv->io->read_stop(c);
    c->reading = 0;
}

/* conn_linger: send ERROR (when the outgoing stream is at a frame
 * boundary), shut our side down, and drain the peer until EOF or
 * linger_s: a close with unread bytes would reset the connection, and the
 * peer might lose the ERROR. */
void conn_linger(struct conn *c, int code, const char *text)
{
    struct server *srv = c->srv;
    int boundary;

    if (c->closing || c->lingering)
        return;
    conn_unauth_release(c);
    /* Not in the middle of a WEIGHTS frame: none of it handed out, or all
     * of it (queued writes keep their order); a mode's paced frame too. */
    boundary = !c->joined || (egress_at_boundary(&srv->eg, c->ses.rank) &&
                              (c->woff == 0 || c->woff == c->wlen));
    if (text && boundary)
        (void)conn_send_ctl(c, PROTO_ERROR, code, text);
    c->lingering = 1;
    c->linger_until = now_of(srv) + srv->linger_s;
    held_remove(srv, c);
    conn_read_start(c);
    if (srv->io->shutdown(c) != 0)
        conn_close(c);
}

/* ------------------------------------------------------------- egress */

/* write_fail: a weights write to worker `rank` failed (code from the
 * transport): the run loses it. */
static void write_fail(struct server *srv, struct conn *c, uint32_t rank, int code)
{
    char msg[ERR_LEN];

    snprintf(msg, sizeof msg, "worker %u: sending the weights of step %llu: %s",
             (unsigned)rank, ull(srv->sending), srv->io->strerror(code));
    run_lost(srv, c, ERR_EOF, msg);
}

/* write_piece: bytes [off, off+len) of the WEIGHTS frame to one worker:
 * what the socket takes now, the rest queued (that worker is then blocked
 * in the egress schedule until the write completes). */
static void write_piece(struct server *srv, const struct egress_piece *pc, double now)
{
    struct conn *c = srv->by_rank[pc->rank];
    const unsigned char *w = (const unsigned char *)srv->wbuf + pc->first * srv->es;
    uint64_t off = pc->off, end = pc->off + pc->len, skip;
    struct server_buf b[2];
    unsigned nb = 0;
    int rc;
    char msg[ERR_LEN];

    if (!c || c->closing || c->lingering) {
        snprintf(msg, sizeof msg, "worker %u: gone while the weights of step %llu were "
                 "being sent", (unsigned)pc->rank, ull(srv->sending));
        run_lost(srv, c, ERR_EOF, msg);
        return;
    }
    if (off == 0)           /* a new frame: its header (egress.h) */
        server_weights_header(srv, pc, c->whdr);
    if (off < PROTO_HEADER_SIZE) {
        uint64_t e = end < PROTO_HEADER_SIZE ? end : PROTO_HEADER_SIZE;
        b[nb++] = (struct server_buf){ c->whdr + off, (size_t)(e - off) };
    }
    if (end > PROTO_HEADER_SIZE) {
        uint64_t s = off > PROTO_HEADER_SIZE ? off - PROTO_HEADER_SIZE : 0;
        b[nb++] = (struct server_buf){ w + s, (size_t)(end - PROTO_HEADER_SIZE - s) };
    }
    if (isnan(srv->out_first))
        srv->out_first = now;
    rc = srv->io->try_write(c, b, nb);
    if (rc < 0) {
        write_fail(srv, c, pc->rank, rc);
        return;
    }
    srv->link.bytes_out += (uint64_t)rc;
    if (rc > 0)
        silence_progress(&srv->sil, now);
    /* Taken in full, or not: from now on the rest waits on this worker's
     * reading (SILENCE). */
    silence_heard(&srv->sil, pc->rank, now);
    if ((uint64_t)rc == pc->len) {
        srv->out_last = now_of(srv);
        if (egress_rank_done(&srv->eg, pc->rank))
            c->ses.pulling = 0;
        return;
    }
    /* Queue the rest: skip what the socket took. */
    skip = (uint64_t)rc;
    for (unsigned i = 0; i < nb; i++) {
        uint64_t t = skip < b[i].len ? skip : b[i].len;
        b[i].p += t;
        b[i].len -= (size_t)t;
        skip -= t;
    }
    if (b[0].len == 0) {
        b[0] = b[1];
        nb--;
    }
    c->wqueued = pc->len - (uint64_t)rc;
    rc = srv->io->write(c, SERVER_WRITE_WEIGHTS, b, nb);
    if (rc < 0) {
        write_fail(srv, c, pc->rank, rc);
        return;
    }
    egress_blocked(&srv->eg, pc->rank);
}

static void weights_written(struct conn *c, int status)
{
    struct server *srv = c->srv;
    double now = now_of(srv);

    if (srv->over || c->closing)
        return;
    if (status < 0) {
        write_fail(srv, c, c->ses.rank, status);
        return;
    }
    srv->link.bytes_out += c->wqueued;
    srv->out_last = now;
    silence_progress(&srv->sil, now);
    silence_heard(&srv->sil, c->ses.rank, now);
    egress_unblocked(&srv->eg, c->ses.rank, now);
    if (egress_rank_done(&srv->eg, c->ses.rank))
        c->ses.pulling = 0;
    server_egress_pump(srv);
}

/* What ends a queued write, by its slot. */
static void (*const written[])(struct conn *c, int status) = {
    [SERVER_WRITE_CTL] = ctl_written,
    [SERVER_WRITE_WEIGHTS] = weights_written,
    [SERVER_WRITE_SNAP] = snap_written,
};

void server_written(struct conn *c, enum server_write slot, int status)
{
    assert((size_t)slot < sizeof written / sizeof written[0]);
    written[slot](c, status);
}

/* server_egress_pump: write every piece that is due; arm the timer for the next. */
void server_egress_pump(struct server *srv)
{
    struct egress_piece pc;

    while (!srv->over && egress_active(&srv->eg)) {
        double now = now_of(srv);

        switch (egress_next(&srv->eg, now, &pc)) {
        case EGRESS_WRITE:
            write_piece(srv, &pc, now);
            continue;
        case EGRESS_WAIT:
            srv->io->timer_want(srv, pc.due);
            return;
        case EGRESS_BLOCKED:
            return;             /* a write's completion pumps again */
        case EGRESS_DONE:
            server_egress_done(srv);
            return;
        }
    }
}

/* ------------------------------------------------------------- reading */

void server_conn_buffer(struct conn *c, unsigned char **p, size_t *len)
{
    assert(!c->held);       /* reading stops while bytes are held */
    if (c->rbuf) {
        *p = c->rbuf;
        *len = c->rcap;
    } else {
        *p = c->sbuf;
        *len = sizeof c->sbuf;
    }
}

/* frame_mark: FRAME DEADLINES (net.h) on a joined worker's frames: the
 * clock of one starts with its first byte read and stops at its end. A
 * worker silent for T is left to the silence check (SILENCE), which says
 * how far its push got. */
static void frame_mark(struct conn *c, double now)
{
    if (!c->joined || c->ses.hdr_have == 0)
        c->frame_t0 = NAN;
    else if (isnan(c->frame_t0))
        c->frame_t0 = now;
}

/* frame_late: the frame in progress missed its deadline: fail the run
 * naming the worker (a member trickling its push). 1 when it did. */
static int frame_late(struct server *srv, struct conn *c, double now)
{
    const struct session *s = &c->ses;
    size_t len = PROTO_HEADER_SIZE;
    double budget;
    char msg[ERR_LEN];

    if (!srv->io->frame_deadlines || !c->joined || c->held || c->closing || c->lingering ||
        isnan(c->frame_t0))
        return 0;
    if (s->hdr_have == PROTO_HEADER_SIZE)
        len += (size_t)s->h.length;
    budget = net_frame_budget(&srv->link, len, srv->timeout);
    if (now - c->frame_t0 <= budget)
        return 0;
    /* Silent for T as well: the silence check names it in plainer words. */
    if (silence_expired(&srv->sil, srv->sil.heard[s->rank], now))
        return 0;
    err_sayn(msg, sizeof msg, "worker %u: its %s frame was not complete %.1f s after its first "
        "byte (%llu of %zu bytes in; allowed --timeout %.1f s plus its time at the link's rate)",
        (unsigned)s->rank, s->hdr_have == PROTO_HEADER_SIZE ? proto_type_name(s->h.type) : "next",
        now - c->frame_t0, ull(s->hdr_have == PROTO_HEADER_SIZE ? len - s->left : s->hdr_have),
        len, srv->timeout);
    run_fail(srv, c, ERR_TIMEOUT, msg);
    conn_close(c);
    return 1;
}

void server_conn_read(struct conn *c, const unsigned char *p, size_t n)
{
    struct server *srv = c->srv;
    double now, due;

    srv->link.bytes_in += (uint64_t)n;
    if (c->closing || c->lingering || srv->over)
        return;             /* draining */
    now = now_of(srv);
    if (c->joined) {
        silence_heard(&srv->sil, c->ses.rank, now);
        silence_progress(&srv->sil, now);
    }
    /* The worker on this host (--local-worker) never crosses the NIC. */
    if (srv->link.ingress.rate > 0 && !(c->joined && (int64_t)c->ses.rank == srv->f.local_worker)) {
        /* The bytes arrived by now. A read right after a release by the
         * timer may find bytes that waited while the loop was late: book
         * them from the release's due time, a credit no larger than the
         * loop's lateness (link.h, LATE EVENT LOOPS). Either way, not
         * later than the loop would have read them on cores of its own
         * (server_own_wait). */
        double t = now - server_own_wait(srv);
        if (c->resumed)
            t = fmin(now, c->held_due + (double)n / srv->link.ingress.rate);
        c->resumed = 0;
        due = link_ingress_reserve(&srv->link, n, t);
        if (due > now) {
            /* Hold the bytes where they are until the link lets them in. */
            conn_read_stop(c);
            c->held = 1;
            c->held_p = p;
            c->held_len = n;
            c->held_due = due;
            c->held_at = now;
            c->held_next = NULL;
            if (srv->held_tail)
                srv->held_tail->held_next = c;
            else
                srv->held_head = c;
            srv->held_tail = c;
            srv->io->timer_want(srv, due);
            return;
        }
    }
    conn_process(c, p, n, now);
    frame_mark(c, now);
}

/* server_timer: the link's next deadline came: release held reads in
 * order, then write the weights pieces that are due. */
void server_timer(struct server *srv)
{
    double now = now_of(srv);

    while (srv->held_head && srv->held_head->held_due <= now && !srv->over) {
        struct conn *c = srv->held_head;

        srv->held_head = c->held_next;
        if (!srv->held_head)
            srv->held_tail = NULL;
        c->held = 0;
        c->held_next = NULL;
        c->resumed = 1;
        /* The link's wait was not idle time. */
        silence_progress(&srv->sil, now);
        if (c->joined)
            silence_heard(&srv->sil, c->ses.rank, now);
        if (!isnan(c->frame_t0))
            c->frame_t0 += now - c->held_at;    /* the link's wait, not the worker's */
        conn_process(c, c->held_p, c->held_len, now);
        frame_mark(c, now);
        if (!c->closing && !c->lingering && !srv->over)
            conn_read_start(c);
        now = now_of(srv);
    }
    if (srv->held_head && !srv->over)
        srv->io->timer_want(srv, srv->held_head->held_due);
    server_egress_pump(srv);
    server_mode_pump(srv);
}

/* ------------------------------------------------------------ accepting */

void server_conn_add(struct server *srv, struct conn *c)
{
    c->srv = srv;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->nconns++;
    srv->nstrangers++;
    session_init(&c->ses, &srv->scfg);
    c->accepted = now_of(srv);
    c->frame_t0 = NAN;
}

void server_conn_ready(struct conn *c, const char *peer)
{
    struct server *srv = c->srv;

    snprintf(c->peer, sizeof c->peer, "%s", peer);
    if (srv->over) {
        conn_close(c);
        return;
    }
    /* Strangers cannot lock the job out: past the cap, the oldest
     * connection without AUTH goes, never the new one (the list is newest
     * first), so a worker gets in at the cost of one handshake's time. */
    c->unauth = 1;
    srv->nunauth++;
    if (srv->nunauth > AUTH_GATE_CAP) {
        struct conn *old = NULL;
        for (struct conn *o = c->next; o; o = o->next)
            if (o->unauth)
                old = o;
        if (old) {
            log_msg("connection from %s evicted: %u connections without AUTH, the oldest "
                    "goes", old->peer, srv->nunauth - 1);
            conn_close(old);
        }
    }
    conn_read_start(c);
}

/* ------------------------------------------------------------ the clock */

void server_tick(struct server *srv)
{
    double now = now_of(srv), late = silence_tick(&srv->sil, now);
    struct conn *c, *next;

    for (c = srv->conns; c; c = next) {
        next = c->next;
        c->accepted = silence_excuse(c->accepted, late, now);
        if (!isnan(c->frame_t0))
            c->frame_t0 = silence_excuse(c->frame_t0, late, now);
        if (c->closing)
            continue;
        if (!srv->over && frame_late(srv, c, now))
            return;
        if (c->lingering) {
            if (now >= c->linger_until)
                conn_close(c);
            continue;
        }
        /* From the accept, not the last byte: a HELLO comes in one go, and
         * a stranger trickling bytes must not keep a slot forever. */
        if (!c->joined && !srv->over && !c->held &&
            silence_expired(&srv->sil, c->accepted, now)) {
            char why[ERR_LEN];

            snprintf(why, sizeof why, "no complete HELLO within %.1f s of connecting "
                     "(%llu bytes received)", srv->timeout, ull(c->ses.bytes));
            conn_refuse(c, ERR_TIMEOUT, why);
        }
    }
    if (srv->over)
        return;
    run_silence_check(srv, now);
    if (srv->over)
        return;
    /* The whole server's clock: what no worker's clock covers (workers
     * that have not joined). The link holding bytes back is not idle time
     * (net.h). */
    if (silence_idle(&srv->sil, srv->held_head ||
                     (srv->eg.active && srv->eg.have && srv->eg.res.due > now), now))
        run_idle_fail(srv);
}
