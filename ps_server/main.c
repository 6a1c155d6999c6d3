/* main.c -- bin/ps_server: the parameter server's libuv event loop.
 *
 * K workers connect and say HELLO. Each step every worker PUSHes the SUM
 * of its gradients; the bytes are added into the store's one accumulator
 * as they arrive (store.c: the server never holds K gradients); after
 * every push the part of its range that all K workers have pushed is
 * updated (store_release: the optimizer on sum / B) and its new weights go
 * to all K workers, in pieces taken round-robin (egress.c), while the
 * lower parts are still pushed (per-bucket pull). A step so has the two
 * flows of docs/design.md through the server's one link: ingress (K
 * pushes) and egress (K copies of the weights), overlapping where the
 * worker pushes several buckets. This is the only file that includes uv.h:
 * it moves bytes and keeps time; what the bytes mean is session.c's, what
 * the server does with them run.c's, the sums store.c's, the order of the
 * outgoing pieces egress.c's, the timeouts silence.c's; flags.c and
 * setup.c build it all before the loop starts.
 *
 * THE LOOP'S HANDLES
 *   listener  uv_tcp_t on the socket net_listen bound (port 0 works)
 *   conn      a uv_tcp_t per connection, worker or stranger (struct conn_uv)
 *   poll      uv_poll_t on the pacer's timerfd (pacer.h): the emulated
 *             link's deadlines, to the microsecond
 *   tick      uv_timer_t, 20 times per --timeout (at most every 250 ms):
 *             the idle-progress timeouts (silence.h), silent strangers,
 *             lingering closes
 *
 * EMULATED LINK (link.h, docs/link.md). The server's one NIC is shared by
 * all its connections. Ingress: every read is at most one link piece and is
 * booked with link_ingress_reserve (a read right after a late release from
 * the release's due time); when the booking says "not before t",
 * the bytes are held (reading that connection stops) until the pacer fires
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
 * OWNERSHIP (server.h): a struct conn_uv is allocated at accept and freed
 * only in its close callback (on_conn_closed). Writes keep their buffers
 * (the store's weights, the conn's header and control frame) alive until
 * their callback: the weights change only after all K pushes of the next
 * step, which need every write of these to have completed (run.c).
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "wire/auth.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "server.h"


/* CHECK: a libuv call that cannot fail in a correct program; if it does,
 * say where, and stop. */
#define CHECK(call) do { int check_rc_ = (call); if (check_rc_ < 0) { \
    log_msg("%s:%d: %s: %s", __FILE__, __LINE__, #call, uv_strerror(check_rc_)); \
    exit(1); } } while (0)

/* A connection with its handles: struct conn first, so that the struct
 * conn * the other files hold is one of these. */
struct conn_uv {
    struct conn c;
    uv_tcp_t tcp;                    /* tcp.data points to c */
    uv_write_t wreq;                 /* the rest of a weights piece */
    uv_write_t creq;                 /* the rest of a WELCOME or ERROR */
    uv_shutdown_t sreq;
};

/* The server with the loop's handles; every handle's data points to s. */
struct server_uv {
    struct server s;
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_poll_t poll;                   /* on srv->pacer.fd */
    uv_timer_t tick;
    int listener_open, timers_open;
};

static struct conn_uv *uvc(struct conn *c)
{
    return (struct conn_uv *)(void *)c;
}

static struct server_uv *uvs(struct server *srv)
{
    return (struct server_uv *)(void *)srv;
}

/* ------------------------------------------------------------ the link */

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

static void on_handle_closed(uv_handle_t *h)
{
    (void)h;
}

static void on_pacer_closed(uv_handle_t *h)
{
    struct server *srv = h->data;

    pacer_close(&srv->pacer);
}

/* server_maybe_stop: once the run is over and every connection is closed,
 * close the last handles: uv_run then returns. */
void server_maybe_stop(struct server *srv)
{
    if (!srv->over)
        return;
    if (uvs(srv)->listener_open) {
        uvs(srv)->listener_open = 0;
        uv_close((uv_handle_t *)&uvs(srv)->listener, on_handle_closed);
    }
    if (srv->nconns > 0)
        return;
    if (uvs(srv)->timers_open) {
        uvs(srv)->timers_open = 0;
        uv_close((uv_handle_t *)&uvs(srv)->tick, on_handle_closed);
        uv_close((uv_handle_t *)&uvs(srv)->poll, on_pacer_closed);
    }
}

static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
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
    free(c->wsnap);
    free(c);
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
    uv_close((uv_handle_t *)&uvc(c)->tcp, on_conn_closed);
}

static void on_ctl_written(uv_write_t *req, int status)
{
    struct conn *c = req->data;

    c->cbusy = 0;
    if (status == 0)
        c->srv->link.bytes_out += c->cqueued;
}

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
    uv_buf_t b;
    int w;

    if (c->cbusy || c->closing || len > sizeof c->cbuf)
        return -1;
    if (p != c->cbuf)
        memcpy(c->cbuf, p, len);
    b = uv_buf_init((char *)c->cbuf, (unsigned)len);
    w = uv_try_write((uv_stream_t *)&uvc(c)->tcp, &b, 1);
    if (w == UV_EAGAIN)
        w = 0;
    if (w < 0)
        return -1;          /* the peer is gone; the read side will see it */
    srv->link.bytes_out += (uint64_t)w;
    if ((size_t)w == len)
        return 0;
    b = uv_buf_init((char *)c->cbuf + w, (unsigned)(len - (size_t)w));
    uvc(c)->creq.data = c;
    c->cqueued = len - (size_t)w;
    if (uv_write(&uvc(c)->creq, (uv_stream_t *)&uvc(c)->tcp, &b, 1, on_ctl_written) != 0)
        return -1;
    c->cbusy = 1;
    return 0;
}

static void on_snap_written(uv_write_t *req, int status)
{
    struct conn *c = req->data;
    struct server *srv = c->srv;
    double now = clock_now();
    char msg[ERR_LEN];

    free(c->wsnap);
    c->wsnap = NULL;
    if (srv->over || c->closing)
        return;
    if (status < 0) {
        snprintf(msg, sizeof msg, "worker %u: sending the weights of its step: %s",
                 (unsigned)c->ses.rank, uv_strerror(status));
        run_lost(srv, c, ERR_EOF, msg);
        return;
    }
    srv->link.bytes_out += c->wqueued;
    silence_progress(&srv->sil, now);
    silence_heard(&srv->sil, c->ses.rank, now);
    c->ses.pulling = 0;
}

int conn_send_weights(struct conn *c, unsigned char *frame, size_t len)
{
    struct server *srv = c->srv;
    uv_buf_t b;
    int w;

    assert(!c->wsnap && len <= UINT32_MAX);
    c->wsnap = frame;
    if (c->closing || c->lingering)
        return -1;
    b = uv_buf_init((char *)frame, (unsigned)len);
    w = uv_try_write((uv_stream_t *)&uvc(c)->tcp, &b, 1);
    if (w == UV_EAGAIN)
        w = 0;
    if (w < 0)
        return -1;
    srv->link.bytes_out += (uint64_t)w;
    if ((size_t)w == len) {
        free(c->wsnap);
        c->wsnap = NULL;
        c->ses.pulling = 0;
        return 0;
    }
    b = uv_buf_init((char *)frame + w, (unsigned)(len - (size_t)w));
    uvc(c)->wreq.data = c;
    c->wqueued = len - (size_t)w;
    c->ses.pulling = 1;
    if (uv_write(&uvc(c)->wreq, (uv_stream_t *)&uvc(c)->tcp, &b, 1, on_snap_written) != 0)
        return -1;
    return 0;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct conn *c = req->data;

    if (status < 0 && status != UV_ECANCELED)
        conn_close(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void conn_read_start(struct conn *c)
{
    if (c->reading || c->closing)
        return;
    if (uv_read_start((uv_stream_t *)&uvc(c)->tcp, on_alloc, on_read) == 0)
        c->reading = 1;
}

static void conn_read_stop(struct conn *c)
{
    if (!c->reading)
        return;
    uv_read_stop((uv_stream_t *)&uvc(c)->tcp);
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
     * of it (queued writes keep their order). */
    boundary = !c->joined || egress_at_boundary(&srv->eg, c->ses.rank);
    if (text && boundary)
        (void)conn_send_ctl(c, PROTO_ERROR, code, text);
    c->lingering = 1;
    c->linger_until = clock_now() + srv->linger_s;
    held_remove(srv, c);
    conn_read_start(c);
    uvc(c)->sreq.data = c;
    if (uv_shutdown(&uvc(c)->sreq, (uv_stream_t *)&uvc(c)->tcp, on_shutdown) != 0)
        conn_close(c);
}

/* ------------------------------------------------------------- egress */

static void on_weights_written(uv_write_t *req, int status);

/* write_piece: bytes [off, off+len) of the WEIGHTS frame to one worker:
 * what the socket takes now, the rest queued (that worker is then blocked
 * in the egress schedule until the write completes). */
static void write_piece(struct server *srv, const struct egress_piece *pc, double now)
{
    struct conn *c = srv->by_rank[pc->rank];
    const unsigned char *w = (const unsigned char *)srv->wbuf + pc->first * srv->es;
    uint64_t off = pc->off, end = pc->off + pc->len, skip;
    uv_buf_t b[2];
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
        weights_header(srv, pc, c->whdr);
    if (off < PROTO_HEADER_SIZE) {
        uint64_t e = end < PROTO_HEADER_SIZE ? end : PROTO_HEADER_SIZE;
        b[nb++] = uv_buf_init((char *)c->whdr + off, (unsigned)(e - off));
    }
    if (end > PROTO_HEADER_SIZE) {
        uint64_t s = off > PROTO_HEADER_SIZE ? off - PROTO_HEADER_SIZE : 0;
        b[nb++] = uv_buf_init((char *)(uintptr_t)(w + s),
                              (unsigned)(end - PROTO_HEADER_SIZE - s));
    }
    if (isnan(srv->out_first))
        srv->out_first = now;
    rc = uv_try_write((uv_stream_t *)&uvc(c)->tcp, b, nb);
    if (rc == UV_EAGAIN)
        rc = 0;
    if (rc < 0) {
        snprintf(msg, sizeof msg, "worker %u: sending the weights of step %llu: %s",
                 (unsigned)pc->rank, ull(srv->sending), uv_strerror(rc));
        run_lost(srv, c, ERR_EOF, msg);
        return;
    }
    srv->link.bytes_out += (uint64_t)rc;
    if (rc > 0)
        silence_progress(&srv->sil, now);
    /* Taken in full, or not: from now on the rest waits on this worker's
     * reading (SILENCE). */
    silence_heard(&srv->sil, pc->rank, now);
    if ((uint64_t)rc == pc->len) {
        srv->out_last = clock_now();
        if (egress_rank_done(&srv->eg, pc->rank))
            c->ses.pulling = 0;
        return;
    }
    /* Queue the rest: skip what the socket took. */
    skip = (uint64_t)rc;
    for (unsigned i = 0; i < nb; i++) {
        uint64_t t = skip < b[i].len ? skip : b[i].len;
        b[i].base += t;
        b[i].len -= (size_t)t;
        skip -= t;
    }
    if (b[0].len == 0) {
        b[0] = b[1];
        nb--;
    }
    uvc(c)->wreq.data = c;
    c->wqueued = pc->len - (uint64_t)rc;
    rc = uv_write(&uvc(c)->wreq, (uv_stream_t *)&uvc(c)->tcp, b, nb, on_weights_written);
    if (rc < 0) {
        snprintf(msg, sizeof msg, "worker %u: sending the weights of step %llu: %s",
                 (unsigned)pc->rank, ull(srv->sending), uv_strerror(rc));
        run_lost(srv, c, ERR_EOF, msg);
        return;
    }
    egress_blocked(&srv->eg, pc->rank);
}

static void on_weights_written(uv_write_t *req, int status)
{
    struct conn *c = req->data;
    struct server *srv = c->srv;
    double now = clock_now();
    char msg[ERR_LEN];

    if (srv->over || c->closing)
        return;
    if (status < 0) {
        snprintf(msg, sizeof msg, "worker %u: sending the weights of step %llu: %s",
                 (unsigned)c->ses.rank, ull(srv->sending), uv_strerror(status));
        run_lost(srv, c, ERR_EOF, msg);
        return;
    }
    srv->link.bytes_out += c->wqueued;
    srv->out_last = now;
    silence_progress(&srv->sil, now);
    silence_heard(&srv->sil, c->ses.rank, now);
    egress_unblocked(&srv->eg, c->ses.rank, now);
    if (egress_rank_done(&srv->eg, c->ses.rank))
        c->ses.pulling = 0;
    egress_pump(srv);
}

/* egress_pump: write every piece that is due; arm the pacer for the next. */
void egress_pump(struct server *srv)
{
    struct egress_piece pc;

    while (!srv->over && egress_active(&srv->eg)) {
        double now = clock_now();

        switch (egress_next(&srv->eg, now, &pc)) {
        case EGRESS_WRITE:
            write_piece(srv, &pc, now);
            continue;
        case EGRESS_WAIT:
            pacer_want(&srv->pacer, pc.due);
            return;
        case EGRESS_BLOCKED:
            return;             /* a write callback pumps again */
        case EGRESS_DONE:
            egress_finished(srv);
            return;
        }
    }
}

/* ------------------------------------------------------------- reading */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct conn *c = h->data;

    (void)suggested;
    assert(!c->held);       /* reading stops while bytes are held */
    if (c->rbuf)
        *buf = uv_buf_init((char *)c->rbuf, (unsigned)c->rcap);
    else
        *buf = uv_buf_init((char *)c->sbuf, sizeof c->sbuf);
}

/* conn_eof: the peer closed (or the connection broke): run.c's conn_lost
 * says what that means for the run. */
static void conn_eof(struct conn *c, ssize_t why)
{
    conn_lost(c, why == UV_EOF ? NULL : uv_strerror((int)why));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    struct server *srv = c->srv;
    double now, due;

    if (nread == 0)
        return;
    if (nread < 0) {
        conn_eof(c, nread);
        return;
    }
    srv->link.bytes_in += (uint64_t)nread;
    if (c->closing || c->lingering || srv->over)
        return;             /* draining */
    now = clock_now();
    if (c->joined) {
        silence_heard(&srv->sil, c->ses.rank, now);
        silence_progress(&srv->sil, now);
    }
    /* The worker on this host (--local-worker) never crosses the NIC. */
    if (srv->link.ingress.rate > 0 && !(c->joined && (int64_t)c->ses.rank == srv->f.local_worker)) {
        /* The bytes arrived by now. A read right after a release by the
         * pacer may find bytes that waited while the loop was late: book
         * them from the release's due time, a credit no larger than the
         * loop's lateness (link.h, LATE EVENT LOOPS). */
        double t = now;
        if (c->resumed)
            t = fmin(now, c->held_due + (double)nread / srv->link.ingress.rate);
        c->resumed = 0;
        due = link_ingress_reserve(&srv->link, (size_t)nread, t);
        if (due > now) {
            /* Hold the bytes where they are until the link lets them in. */
            conn_read_stop(c);
            c->held = 1;
            c->held_p = (const unsigned char *)buf->base;
            c->held_len = (size_t)nread;
            c->held_due = due;
            c->held_next = NULL;
            if (srv->held_tail)
                srv->held_tail->held_next = c;
            else
                srv->held_head = c;
            srv->held_tail = c;
            pacer_want(&srv->pacer, due);
            return;
        }
    }
    conn_process(c, (const unsigned char *)buf->base, (size_t)nread, now);
}

/* on_pacer: the link's next deadline came: release held reads in order,
 * then write the weights pieces that are due. */
static void on_pacer(uv_poll_t *h, int status, int events)
{
    struct server *srv = h->data;
    double now = clock_now();

    (void)status;
    (void)events;
    pacer_fired(&srv->pacer);
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
        conn_process(c, c->held_p, c->held_len, now);
        if (!c->closing && !c->lingering && !srv->over)
            conn_read_start(c);
        now = clock_now();
    }
    if (srv->held_head && !srv->over)
        pacer_want(&srv->pacer, srv->held_head->held_due);
    egress_pump(srv);
}

/* ------------------------------------------------------------ accepting */

static void peer_name(uv_tcp_t *t, char *out, size_t len)
{
    struct sockaddr_storage ss;
    int n = sizeof ss;
    char ip[64] = "?";
    int port = 0;

    if (uv_tcp_getpeername(t, (struct sockaddr *)&ss, &n) == 0) {
        if (ss.ss_family == AF_INET) {
            const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)&ss;
            uv_ip4_name(a, ip, sizeof ip);
            port = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)&ss;
            uv_ip6_name(a, ip, sizeof ip);
            port = ntohs(a->sin6_port);
            snprintf(out, len, "[%s]:%d", ip, port);
            return;
        }
    }
    snprintf(out, len, "%s:%d", ip, port);
}

static void on_connection(uv_stream_t *l, int status)
{
    struct server *srv = l->data;
    struct conn_uv *cu;
    struct conn *c;

    if (status < 0) {
        log_msg("accept: %s", uv_strerror(status));
        return;
    }
    cu = calloc(1, sizeof *cu);
    if (!cu) {
        log_msg("accept: out of memory");
        return;
    }
    c = &cu->c;
    c->srv = srv;
    CHECK(uv_tcp_init(&uvs(srv)->loop, &uvc(c)->tcp));
    uvc(c)->tcp.data = c;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->nconns++;
    srv->nstrangers++;
    session_init(&c->ses, &srv->scfg);
    c->accepted = clock_now();
    if (uv_accept(l, (uv_stream_t *)&uvc(c)->tcp) != 0) {
        conn_close(c);
        return;
    }
    peer_name(&uvc(c)->tcp, c->peer, sizeof c->peer);
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
    (void)uv_tcp_nodelay(&uvc(c)->tcp, 1);
    conn_read_start(c);
}

/* ------------------------------------------------------------ the clock */

static void on_tick(uv_timer_t *t)
{
    struct server *srv = t->data;
    double now = clock_now(), late = silence_tick(&srv->sil, now);
    struct conn *c, *next;

    for (c = srv->conns; c; c = next) {
        next = c->next;
        c->accepted = silence_excuse(c->accepted, late, now);
        if (c->closing)
            continue;
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


/* ----------------------------------------------------------------- main */

/* loop_open: the listening socket, the pacer and the tick on the loop.
 * OUT: bound (the port). 0, or -1 after logging why. */
static int loop_open(struct server_uv *su, int *bound)
{
    struct server *srv = &su->s;
    char err[ERR_LEN];
    int lfd = -1, rc;

    auth_policy_say();          /* every flag is checked: the secret's line now */
    if (net_listen(srv->f.host, srv->f.port, &lfd, bound, err) != 0) {
        log_msg("%s", err);
        return -1;
    }
    CHECK(uv_loop_init(&su->loop));
    CHECK(uv_tcp_init(&su->loop, &su->listener));
    su->listener.data = srv;
    CHECK(uv_tcp_open(&su->listener, lfd));
    if ((rc = uv_listen((uv_stream_t *)&su->listener, 128, on_connection)) != 0) {
        log_msg("listen %s: %s", srv->f.listen_at, uv_strerror(rc));
        return -1;
    }
    su->listener_open = 1;
    if (pacer_open(&srv->pacer, err) != 0) {
        log_msg("%s", err);
        return -1;
    }
    CHECK(uv_poll_init(&su->loop, &su->poll, srv->pacer.fd));
    su->poll.data = srv;
    CHECK(uv_poll_start(&su->poll, UV_READABLE, on_pacer));
    CHECK(uv_timer_init(&su->loop, &su->tick));
    su->tick.data = srv;
    CHECK(uv_timer_start(&su->tick, on_tick, srv->sil.period_ms, srv->sil.period_ms));
    su->timers_open = 1;
    return 0;
}

int main(int argc, char **argv)
{
    static struct server_uv su;
    struct server *srv = &su.s;
    struct flags f;
    char err[ERR_LEN];
    int bound = 0, rc;

    flags_parse(&f, argc, argv);
    if (setup_server(srv, &f, clock_now()) != 0 || loop_open(&su, &bound) != 0)
        return 1;
    if (srv->f.port_file && net_port_file_write(srv->f.port_file, bound, err) != 0) {
        log_msg("%s", err);
        return 1;
    }
    setup_announce(srv, bound);

    silence_restart(&srv->sil, clock_now());
    srv->last_log = -INFINITY;
    uv_run(&su.loop, UV_RUN_DEFAULT);

    if (srv->exit_code == 0 && srv->f.c.csv &&
        metrics_record_write(&srv->rec, srv->f.c.csv, err) != 0) {
        log_msg("%s", err);
        srv->exit_code = 1;
    }
    /* The loss files also after a failure (measure.c). */
    if (measure_write(srv) != 0)
        srv->exit_code = 1;
    rc = uv_loop_close(&su.loop);
    assert(rc == 0);        /* every handle was closed */
    (void)rc;
    setup_destroy(srv);
    return srv->exit_code;
}
