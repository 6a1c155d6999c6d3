/* xport_tcp_abort.c -- the TCP transport's abort protocol (xport_tcp.h,
 * FAULTS): a rank that fails, or sees a peer fail, makes a claim (who is
 * lost, and how sure it is), finishes the frame it was sending so that
 * the ABORT behind it starts on a frame boundary, tells its peers, and
 * listens for their news: RELAY passes it rank by rank along the ring,
 * FLOOD sends it to every peer at once. In file order: the common pieces
 * (finish the frame, tell one peer, read a peer, make a claim), RELAY,
 * FLOOD, and the whole (tcp_fail_claim, tcp_fail_io, tcp_fail_frame,
 * tcp_abort), which xport_tcp.c's step calls enter (xport_tcp_internal.h:
 * the transport's internal names keep the tcp_ prefix of its ops).
 */
#include "xport_tcp_internal.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "wire/net.h"

/* ------------------------------------------ abort protocol: the pieces */

/* finish_frame: the rest of the step's outgoing CHUNK frame, so that an
 * ABORT after it is read as a frame. */
static int finish_frame(struct tcp *t, double deadline)
{
    struct conn *c = t->out;
    int rc = 0;

    if (!t->in_step)
        return 0;
    if (t->hout_done < PROTO_HEADER_SIZE)
        rc = xport_conn_send_by(c->fd, t->head + t->hout_done, PROTO_HEADER_SIZE - t->hout_done,
                                deadline, c->name);
    if (rc == 0)
        rc = xport_conn_send_by(c->fd, t->sbuf + t->sdone, t->sbytes - t->sdone, deadline,
                                c->name);
    if (rc == 0) {
        t->hout_done = PROTO_HEADER_SIZE;
        t->sdone = t->sbytes;
    }
    return rc;
}

/* tell: the claim to one peer, after the step's frame on that connection. */
static void tell(struct tcp *t, struct conn *c, const struct xport_claim *cl, double deadline)
{
    if (!c->ok)
        return;
    if ((c == t->out && finish_frame(t, deadline) != 0) ||
        xport_conn_send_abort(c->fd, &t->self, c->seq, cl->lost, cl->text, deadline,
                              c->name) != 0)
        c->ok = 0;
}

/* reader_at: a reader of c from where its stream stands: at a frame
 * boundary, or for the step's incoming connection inside the header, or
 * inside the CHUNK payload to skip. */
static void reader_at(const struct tcp *t, struct conn *c, struct xport_reader *r)
{
    memset(r, 0, sizeof *r);
    r->fd = c->fd;
    r->from = c->rank;
    if (c == t->in && t->in_step && t->hin_done < PROTO_HEADER_SIZE) {
        memcpy(r->hdr, t->hdr_in, t->hin_done);
        r->hgot = t->hin_done;
    } else if (c == t->in && t->in_step) {
        r->skip = t->rbytes - t->rdone - t->staged;     /* ONE READ: staged is read */
    }
}

/* own_claim: a claim of ours about the rank of connection c. */
__attribute__((format(printf, 5, 6)))
static void own_claim(struct tcp *t, struct xport_claim *cl, enum xport_claim_kind kind,
                      const struct conn *c, const char *fmt, ...)
{
    char why[ERR_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    memset(cl, 0, sizeof *cl);
    cl->kind = kind;
    cl->lost = c->rank;
    cl->from = t->self.rank;
    snprintf(cl->text, sizeof cl->text, "lost %s: %s (seen by rank %d)", c->name, why,
             t->self.rank);
}

/* ----------------------------------------------- RELAY (along a ring) */

/* relay_tell: to the downstream neighbour, unless it is the rank lost. */
static void relay_tell(struct tcp *t, const struct xport_claim *cl, double deadline)
{
    if (cl->lost != t->down->rank)
        tell(t, t->down, cl, deadline);
}

/* relay_listen: until the deadline or the upstream neighbour's EOF, read
 * both neighbours for ABORTs (FAULTS, 3). */
static void relay_listen(struct tcp *t, struct xport_claim *cl, int up_sync, double until)
{
    struct xport_reader rd[2];
    int nrd = 0, iu = -1;

    if (up_sync) {
        iu = nrd++;
        reader_at(t, t->up, &rd[iu]);
    }
    if (!(cl->kind == XPORT_CLAIM_CERTAIN && cl->lost == t->down->rank))
        reader_at(t, t->down, &rd[nrd++]);
    for (;;) {
        struct pollfd p[2];
        double now = clock_now();
        int alive = 0;

        /* Listening ends when upstream closes: whatever it had to say is in. */
        if (now >= until || (iu >= 0 && rd[iu].dead))
            break;
        for (int i = 0; i < nrd; i++) {
            p[i].fd = rd[i].dead ? -1 : rd[i].fd;
            p[i].events = POLLIN;
            p[i].revents = 0;
            alive += !rd[i].dead;
        }
        if (!alive)
            break;
        if (poll(p, (nfds_t)nrd, (int)ceil((until - now) * 1e3)) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < nrd; i++) {
            if (!p[i].revents)
                continue;
            while (xport_reader_feed(&rd[i], t->self.world)) {
                if (xport_claim_adopt(cl, t->self.world, &rd[i]))
                    relay_tell(t, cl, until);
            }
        }
    }
}

static void relay(struct tcp *t, struct xport_claim *cl)
{
    double t0 = clock_now(), T = t->self.timeout;
    int up_sync = t->up->sync;

    /* Downstream first (the ring's direction), or upstream when
     * downstream is the rank lost. */
    relay_tell(t, cl, t0 + T / 4);
    if (cl->lost == t->down->rank && t->up->rank != t->down->rank &&
        cl->kind != XPORT_CLAIM_RELAYED)
        tell(t, t->up, cl, t0 + T / 4);
    /* Listen for better news. A certain loss of upstream needs none. */
    if (!(cl->kind == XPORT_CLAIM_CERTAIN && cl->lost == t->up->rank))
        relay_listen(t, cl, up_sync, t0 + T / 2);
}

/* ------------------------------------------- FLOOD (to every peer) */

/* flood_tell: to every peer but the rank lost and the one the news came
 * from (FAULTS, 2). */
static void flood_tell(struct tcp *t, const struct xport_claim *cl, double deadline)
{
    for (int i = 0; i < t->nconn; i++) {
        struct conn *c = &t->conn[i];
        if (c->rank == cl->lost || (cl->kind == XPORT_CLAIM_RELAYED && c->rank == cl->from))
            continue;
        tell(t, c, cl, deadline);
    }
}

/* flood_news: read every connection for ABORTs until `until` (one pass
 * without waiting when it has passed already). An adopted ABORT is passed
 * on when pass_on is set. Stops early when every reader is dead, or when
 * the peer our news came from has closed: it said all it had. */
static void flood_news(struct tcp *t, struct xport_claim *cl, struct xport_reader *rd, int nrd,
                       double until, int pass_on)
{
    struct pollfd pfd[XPORT_PEERS_MAX];

    for (;;) {
        int alive = 0, source_dead = 0;
        double now;

        for (int i = 0; i < nrd; i++) {
            if (rd[i].dead)
                continue;
            while (xport_reader_feed(&rd[i], t->self.world)) {
                if (xport_claim_adopt(cl, t->self.world, &rd[i]) && pass_on)
                    flood_tell(t, cl, until);
            }
        }
        for (int i = 0; i < nrd; i++) {
            alive += !rd[i].dead;
            if (rd[i].dead && cl->kind == XPORT_CLAIM_RELAYED && rd[i].from == cl->from)
                source_dead = 1;
        }
        now = clock_now();
        if (now >= until || alive == 0 || source_dead)
            return;
        for (int i = 0; i < nrd; i++) {
            pfd[i].fd = rd[i].dead ? -1 : rd[i].fd;
            pfd[i].events = POLLIN;
            pfd[i].revents = 0;
        }
        if (poll(pfd, (nfds_t)nrd, (int)ceil((until - now) * 1e3)) < 0 && errno != EINTR)
            return;
    }
}

static void flood(struct tcp *t, struct xport_claim *cl)
{
    struct xport_reader rd[XPORT_PEERS_MAX];
    double t0 = clock_now();
    int nrd = 0;

    for (int i = 0; i < t->nconn; i++)
        if (t->conn[i].sync)
            reader_at(t, &t->conn[i], &rd[nrd++]);
    flood_news(t, cl, rd, nrd, t0, 0);                   /* what is there already */
    flood_tell(t, cl, t0 + t->self.timeout / 4);
    if (cl->kind != XPORT_CLAIM_CERTAIN)
        flood_news(t, cl, rd, nrd, t0 + t->self.timeout / 2, 1);
}

/* ------------------------------------------- abort protocol: the whole */

int tcp_fail_claim(struct tcp *t, int rc, struct xport_claim *cl, char *err)
{
    if (t->news == XPORT_NEWS_RELAY)
        relay(t, cl);
    else
        flood(t, cl);
    if (cl->kind == XPORT_CLAIM_RELAYED) {
        err_say(t->failed_msg, "rank %d reported: %s", cl->from, cl->text);
    } else {
        /* Strip the "(seen by rank R)" we add for others: we are R. */
        char *seen;
        err_say(t->failed_msg, "%s", cl->text);
        if ((seen = strstr(t->failed_msg, " (seen by rank ")) != NULL)
            *seen = '\0';
    }
    t->failed_rc = rc;
    t->in_step = 0;
    err_say(err, "%s", t->failed_msg);
    return rc;
}

/* tcp_fail_io: with FLOOD the step has one peer, so the claim is about
 * it. In a RELAY ring the two connections are probed: which neighbour is
 * gone? */
int tcp_fail_io(struct tcp *t, int rc, int recv_pending, char *err)
{
    struct xport_claim cl;
    int pi = xport_conn_probe(t->in->fd), po = xport_conn_probe(t->out->fd);
    int in_gone = pi == XPORT_PROBE_EOF || pi == XPORT_PROBE_ERR;
    int out_gone = po == XPORT_PROBE_EOF || po == XPORT_PROBE_ERR;

    if (rc == ERR_TIMEOUT && recv_pending && t->rframe.expired) {
        /* FRAME DEADLINES (net.h): bytes came, but too slowly. */
        own_claim(t, &cl, XPORT_CLAIM_SUSPECT, t->in, "frame not complete %.1f s after its "
                  "first byte (got %zu of %zu bytes; --timeout plus its time at the link's "
                  "rate)", t->rframe.spent, t->rframe.got, t->rframe.len);
    } else if (rc == ERR_TIMEOUT) {
        own_claim(t, &cl, XPORT_CLAIM_SUSPECT, recv_pending ? t->in : t->out,
                  "no progress for %.1f s (--timeout)", t->idle);
    } else if (t->news == XPORT_NEWS_FLOOD) {
        own_claim(t, &cl, XPORT_CLAIM_CERTAIN, t->in, "%s",
                  rc == ERR_EOF || rc == -EPIPE || rc == -ECONNRESET ? "connection closed"
                                                                     : err_str(rc));
    } else if (rc == ERR_EOF || (in_gone && rc != -EPIPE)) {
        own_claim(t, &cl, XPORT_CLAIM_CERTAIN, t->in, "%s",
                  rc == ERR_EOF || pi == XPORT_PROBE_EOF ? "connection closed" : err_str(rc));
    } else if (rc == -EPIPE || out_gone) {
        own_claim(t, &cl, XPORT_CLAIM_CERTAIN, t->out, "%s",
                  rc == -EPIPE ? "connection closed" : err_str(rc));
    } else {
        own_claim(t, &cl, XPORT_CLAIM_CERTAIN, recv_pending ? t->in : t->out, "%s",
                  err_str(rc));
    }
    if (t->news == XPORT_NEWS_RELAY && cl.lost == t->in->rank && cl.kind == XPORT_CLAIM_CERTAIN)
        t->in->sync = 0;
    return tcp_fail_claim(t, rc, &cl, err);
}

int tcp_fail_frame(struct tcp *t, int rc, char *err, const char *fmt, ...)
{
    char why[ERR_LEN];
    struct xport_claim cl;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    own_claim(t, &cl, XPORT_CLAIM_CERTAIN, t->in, "sent a bad frame at step %llu: %s",
              (unsigned long long)t->in->seq, why);
    t->in->sync = 0;
    return tcp_fail_claim(t, rc, &cl, err);
}

int tcp_abort(struct xport *xb, const char *why)
{
    struct tcp *t = (struct tcp *)xb;
    double deadline = clock_now() + t->self.timeout / 4;
    struct xport_claim cl;

    if (t->failed_rc)
        return 0;
    memset(&cl, 0, sizeof cl);
    cl.kind = XPORT_CLAIM_CERTAIN;
    cl.lost = cl.from = t->self.rank;
    snprintf(cl.text, sizeof cl.text, "rank %d failed: %s", t->self.rank, why);
    if (t->news == XPORT_NEWS_FLOOD) {
        flood_tell(t, &cl, deadline);
    } else {
        tell(t, t->down, &cl, deadline);
        if (t->up->rank != t->down->rank)
            tell(t, t->up, &cl, deadline);
    }
    t->failed_rc = -ECONNABORTED;
    t->in_step = 0;
    err_say(t->failed_msg, "%s", cl.text);
    return 0;
}
