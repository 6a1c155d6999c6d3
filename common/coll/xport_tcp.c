/* xport_tcp.c -- the TCP transport (xport_tcp.h says what it does).
 *
 * Four parts, in file order: set-up (dial, accept, HELLO both ways), the
 * abort protocol's common pieces (claim, finish the frame, tell one peer),
 * its two ways of spreading news (RELAY along the ring, FLOOD to every
 * peer), and the step calls of xport.h (header exchange, payload in full
 * duplex, exact byte accounting). HELLO frames and their checks, the
 * accept loop, ABORT frames, the listening reader and the adopt rule are in
 * xport_conn.c.
 *
 * EXACT ACCOUNTING. net_sendrecv does not say how far it got when it
 * fails, but every byte it moves passes through this process's link
 * counters (bytes_out, bytes_in). Their growth across the call is exactly
 * what was sent and received, so after any failure the transport knows
 * where both streams stand: how much of the CHUNK frame being sent is
 * still to go (the abort protocol finishes it, so that the ABORT behind it
 * starts on a frame boundary) and how much of the incoming one (so that
 * listening can skip it and find the next frame).
 *
 * EMULATED LATENCY. A step's frame leaves as one transmission: the header
 * together with the first payload bytes (copied next to it), then the rest
 * as the receive advances, each call continuing the link's timeline. The
 * first part fills one link piece (link.h), at most HEAD_MAX: tcp_begin
 * waits for its send while it reads only the incoming header, so a longer
 * first part would leave the neighbour's payload piling up unread in the
 * kernel for as long, to be read in a burst afterwards, when its arrival
 * times are lost (the kernel stamps a buffer once) and the reader's link
 * would pace it a second time. The reader keeps to the same grid: after
 * the header it reads only the rest of that first piece (net_xfer.c,
 * link_ingress_next), so that no read runs from one kernel buffer into
 * the next and takes the later one's stamp. And every step starts that timeline
 * afresh, in real time: what a step sends is what the step before
 * received, so it could not have left earlier. Without both, the link's
 * rule for blocking senders (link.h) would see the steps of a ring in
 * lockstep as one long back-to-back send and charge the latency once per
 * all-reduce instead of once per step, or charge it twice when the header
 * went alone. With them a step costs latency + bytes / bandwidth, the
 * model's a + n b.
 */
#include "xport_tcp.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "wire/net.h"
#include "xport_conn.h"

#define HEAD_MAX (64u << 10)   /* payload bytes sent with the header (EMULATED LATENCY) */
#define BUSY_S   100e-6        /* net_busy_poll's time when the ranks fit the CPUs */

/* --------------------------------------------------------------- state */

struct conn {
    int rank, fd, dial;
    const char *role;                   /* "right neighbour", "partner" */
    char name[XPORT_NAME_LEN];          /* "rank 2 (127.0.0.1:40123)" */
    uint64_t seq;                       /* step number of its next CHUNK, both ways */
    int ok;                             /* a frame can still be sent on it */
    int sync;                           /* its incoming stream's position is known */
};

struct tcp {
    struct xport base;                  /* first: the xport.h interface */
    struct xport_conn_self self;        /* who we are in HELLO and ABORT frames */
    struct link *link;
    int news;                           /* enum xport_news */
    const char *tag, *tag_of;
    int nconn;
    struct conn conn[XPORT_PEERS_MAX];
    struct conn *down, *up;             /* RELAY: the dialled and the accepted connection */

    /* The step in progress (in_step), for the abort protocol. */
    struct conn *out, *in;
    int in_step;
    double idle;                        /* this step's idle timeout */
    uint32_t recv_tag;
    uint8_t head[PROTO_HEADER_SIZE + HEAD_MAX];   /* header + first payload bytes out */
    uint8_t hdr_in[PROTO_HEADER_SIZE];
    size_t hout_done, hin_done;         /* header bytes sent / received */
    const uint8_t *sbuf;
    size_t sbytes, sdone, rbytes, rdone;

    /* Once failed: every later call returns this. */
    int failed_rc;
    char failed_msg[ERR_LEN];
};

/* conn_for: the connection with `rank`; of two (a ring of two), the one
 * dialled when dial is set, else the accepted one. */
static struct conn *conn_for(struct tcp *t, int rank, int dial)
{
    struct conn *any = NULL;

    for (int i = 0; i < t->nconn; i++) {
        if (t->conn[i].rank != rank)
            continue;
        if (t->conn[i].dial == dial)
            return &t->conn[i];
        any = &t->conn[i];
    }
    return any;
}

/* cfg_check: a configuration open and attach can work with. */
static int cfg_check(const struct xport_tcp_cfg *cfg, char *err)
{
    const struct xport_plan *pl = cfg->plan;
    int k = cfg->world, dials = 0;

    if (k < 2 || cfg->rank < 0 || cfg->rank >= k || !(cfg->timeout > 0) || !cfg->link ||
        !cfg->peers || !pl || pl->npeers < 1 || pl->npeers > XPORT_PEERS_MAX)
        goto bad;
    for (int i = 0; i < pl->npeers; i++) {
        int q = pl->peer[i].rank;
        if (q < 0 || q >= k || q == cfg->rank)
            goto bad;
        for (int j = 0; j < i; j++)
            if (pl->peer[j].rank == q && !pl->peer[j].dial == !pl->peer[i].dial)
                goto bad;
        dials += pl->peer[i].dial != 0;
    }
    if (pl->news == XPORT_NEWS_RELAY && (pl->npeers != 2 || dials != 1))
        goto bad;
    return 0;
bad:
    err_say(err, "xport_tcp: bad configuration");
    return ERR_USAGE;
}

/* --------------------------------------------------------------- set-up */

int xport_tcp_open(struct xport **out, const struct xport_tcp_cfg *cfg, char *err)
{
    struct xport_conn_self self = { cfg->rank, cfg->world, cfg->hello, cfg->timeout };
    int fds[XPORT_PEERS_MAX], rc;

    *out = NULL;
    if ((rc = cfg_check(cfg, err)) != 0)
        return rc;
    if ((rc = xport_conn_open(&self, cfg->lfd, cfg->peers, cfg->plan, fds, err)) != 0)
        return rc;
    return xport_tcp_attach(out, cfg, fds, err);   /* it owns the fds now, also on failure */
}

static const struct xport_ops tcp_ops;

int xport_tcp_attach(struct xport **out, const struct xport_tcp_cfg *cfg, const int *fds,
                     char *err)
{
    struct tcp *t = NULL;
    int rc = cfg_check(cfg, err);

    *out = NULL;
    if (rc == 0 && !(t = calloc(1, sizeof *t))) {
        rc = -ENOMEM;
        err_say(err, "xport_tcp: out of memory");
    }
    if (rc != 0) {
        for (int i = 0; cfg->plan && i < cfg->plan->npeers && i < XPORT_PEERS_MAX; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        return rc;
    }
    t->base.ops = &tcp_ops;
    t->base.clock = &clock_real;
    /* SMALL STEPS: busy-poll briefly before sleeping when every rank can
     * have a CPU of its own (the ranks of a run share one host here);
     * when they outnumber the CPUs a spinning rank steals the CPU its
     * peer needs, so sleep at once, as before. */
    net_busy_poll(cfg->world <= sysconf(_SC_NPROCESSORS_ONLN) ? BUSY_S : 0.0);
    t->self = (struct xport_conn_self){ cfg->rank, cfg->world, cfg->hello, cfg->timeout };
    t->link = cfg->link;
    t->news = cfg->plan->news;
    t->tag = cfg->plan->tag ? cfg->plan->tag : "tag";
    t->tag_of = cfg->plan->tag_of ? cfg->plan->tag_of : "for tag";
    t->nconn = cfg->plan->npeers;
    for (int i = 0; i < t->nconn; i++) {
        struct conn *c = &t->conn[i];
        c->rank = cfg->plan->peer[i].rank;
        c->dial = cfg->plan->peer[i].dial != 0;
        c->role = cfg->plan->peer[i].role ? cfg->plan->peer[i].role : "peer";
        c->fd = fds[i];
        c->ok = c->sync = 1;
        xport_conn_name(c->name, c->rank, &cfg->peers[c->rank]);
        if (c->dial)
            t->down = c;
        else
            t->up = c;
    }
    *out = &t->base;
    return 0;
}

static void tcp_close(struct xport *xb)
{
    struct tcp *t = (struct tcp *)xb;

    for (int i = 0; i < t->nconn; i++)
        close(t->conn[i].fd);
    free(t);
}

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
        r->skip = t->rbytes - t->rdone;
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

/* fail_claim: run the abort protocol for claim cl (FAULTS), record the
 * final line. */
static int fail_claim(struct tcp *t, int rc, struct xport_claim *cl, char *err)
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

/* fail_io: a net_* call of the step failed with rc; recv_pending: our
 * receive was not complete. Work out the claim (FAULTS, 1). With FLOOD the
 * step has one peer, so the claim is about it. In a RELAY ring the two
 * connections are probed: which neighbour is gone? */
static int fail_io(struct tcp *t, int rc, int recv_pending, char *err)
{
    struct xport_claim cl;
    int pi = xport_conn_probe(t->in->fd), po = xport_conn_probe(t->out->fd);
    int in_gone = pi == XPORT_PROBE_EOF || pi == XPORT_PROBE_ERR;
    int out_gone = po == XPORT_PROBE_EOF || po == XPORT_PROBE_ERR;

    if (rc == ERR_TIMEOUT) {
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
    return fail_claim(t, rc, &cl, err);
}

/* fail_frame: the peer sent something that is not the expected CHUNK;
 * after a bad header its stream cannot be followed any more. */
__attribute__((format(printf, 4, 5)))
static int fail_frame(struct tcp *t, int rc, char *err, const char *fmt, ...)
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
    return fail_claim(t, rc, &cl, err);
}

static int tcp_abort(struct xport *xb, const char *why)
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

/* --------------------------------------------------------------- steps */

static int failed(struct tcp *t, char *err)
{
    err_say(err, "%s", t->failed_msg);
    return t->failed_rc;
}

/* moved: the link counters' growth since (out0, in0). */
static void moved(const struct tcp *t, uint64_t out0, uint64_t in0, size_t *out, size_t *in)
{
    *out = (size_t)(t->link->bytes_out - out0);
    *in = (size_t)(t->link->bytes_in - in0);
}

/* relayed: the ABORT or ERROR announced by the incoming header h; read
 * its text and run the abort protocol with it as relayed news. */
static int relayed(struct tcp *t, const struct proto_header *h, char *err)
{
    struct conn *c = t->in;
    char text[PROTO_TEXT_MAX + 1];
    struct xport_claim cl;
    int rc = net_recv_all(c->fd, text, (size_t)h->length, NULL, t->self.timeout, c->name, NULL);

    text[rc == 0 ? h->length : 0] = '\0';
    if (rc == 0 && proto_text_check((const uint8_t *)text, (size_t)h->length) != 0)
        rc = ERR_PROTO_FIELD;
    if (rc != 0)
        return fail_io(t, rc, 1, err);
    t->hin_done = 0;          /* the stream is at a frame boundary again */
    t->rbytes = t->rdone = 0;
    memset(&cl, 0, sizeof cl);
    cl.kind = XPORT_CLAIM_RELAYED;
    cl.from = c->rank;
    cl.lost = h->type == PROTO_ABORT && h->aux < (uint64_t)t->self.world ? (int)h->aux : c->rank;
    snprintf(cl.text, sizeof cl.text, "%s%s", h->type == PROTO_ERROR ? "error: " : "", text);
    return fail_claim(t, -ECONNABORTED, &cl, err);
}

/* check_header: the incoming header must be CHUNK(from, seq, recv_tag,
 * rbytes); an ABORT or ERROR is the news of a failure elsewhere. */
static int check_header(struct tcp *t, char *err)
{
    struct conn *c = t->in;
    struct proto_limits lim = { t->rbytes > PROTO_TEXT_MAX ? t->rbytes : PROTO_TEXT_MAX,
                                (uint32_t)t->self.world, 0 };
    struct proto_header h;
    int rc = proto_header_decode(t->hdr_in, &lim, &h);

    if (rc == 0 && h.rank != (uint32_t)c->rank)
        rc = fail_frame(t, ERR_PROTO_RANK, err, "a frame from rank %u on rank %d's connection",
                        h.rank, c->rank);
    else if (rc == ERR_PROTO_LENGTH || rc == ERR_PROTO_SIZE)
        rc = fail_frame(t, rc, err, "%s (%s of %llu bytes)", err_str(rc),
                        proto_type_name(h.type), (unsigned long long)h.length);
    else if (rc != 0)
        rc = fail_frame(t, rc, err, "%s", err_str(rc));
    else if (h.type == PROTO_ABORT || h.type == PROTO_ERROR)
        return relayed(t, &h, err);
    else if (h.type != PROTO_CHUNK)
        rc = fail_frame(t, ERR_PROTO_TYPE, err, "%s instead of CHUNK", proto_type_name(h.type));
    else if (h.step != c->seq)
        rc = fail_frame(t, ERR_PROTO_FIELD, err, "CHUNK for step %llu",
                        (unsigned long long)h.step);
    else if (h.aux != t->recv_tag)
        rc = fail_frame(t, ERR_PROTO_FIELD, err, "%s %llu, expected %s %u", t->tag,
                        (unsigned long long)h.aux, t->tag, t->recv_tag);
    else if (h.length != t->rbytes)
        rc = fail_frame(t, ERR_PROTO_SIZE, err, "%llu bytes %s %u, expected %zu",
                        (unsigned long long)h.length, t->tag_of, t->recv_tag, t->rbytes);
    if (rc != 0)
        return rc;
    c->seq++;
    if (t->out != c)
        t->out->seq++;
    return 0;
}

static int tcp_begin(struct xport *xb, const struct xport_step *s, char *err)
{
    struct tcp *t = (struct tcp *)xb;
    struct conn *out, *in;
    struct proto_header h;
    uint64_t out0 = t->link->bytes_out, in0 = t->link->bytes_in;
    size_t first = s->sbytes < HEAD_MAX ? s->sbytes : HEAD_MAX, sent;
    int rc;

    /* EMULATED LATENCY: header and first bytes fill one piece, no more
     * (or the whole frame, when only a runt would be left: link.h). */
    if (link_active(t->link)) {
        size_t fit = link_frame_first(t->link, PROTO_HEADER_SIZE, s->sbytes);
        if (fit < first)
            first = fit;
    }

    if (t->failed_rc)
        return failed(t, err);
    out = conn_for(t, s->to, 1);
    in = conn_for(t, s->from, 0);
    if (t->in_step || !out || !in || (s->sbytes > 0 && !s->sbuf)) {
        err_say(err, "xport_tcp: step to rank %d from rank %d: %s", s->to, s->from,
                t->in_step ? "the last step has not ended" : "not in the plan, or no buffer");
        return ERR_USAGE;
    }
    h = proto_header_make(PROTO_CHUNK, (uint32_t)t->self.rank, (uint32_t)t->self.world,
                          out->seq, s->send_tag, s->sbytes);
    proto_header_encode(&h, t->head);
    if (first)
        memcpy(t->head + PROTO_HEADER_SIZE, s->sbuf, first);
    t->out = out;
    t->in = in;
    t->in_step = 1;
    t->recv_tag = s->recv_tag;
    t->idle = t->self.timeout * (s->patience > 1 ? s->patience : 1);
    t->sbuf = s->sbuf;
    t->sbytes = s->sbytes;
    t->rbytes = s->rbytes;
    t->sdone = t->rdone = 0;
    /* EMULATED LATENCY: what a step sends was received (and reduced) in
     * the step before, so its transmission starts now, in real time, and
     * pays the link's latency once: forget the lag the link carried over
     * from the last send (link.h, BLOCKING SENDERS). */
    link_send_restart(t->link);
    rc = net_sendrecv(out->fd, t->head, PROTO_HEADER_SIZE + first, out->name,
                      in->fd, t->hdr_in, PROTO_HEADER_SIZE, in->name, t->link, t->idle, NULL);
    moved(t, out0, in0, &sent, &t->hin_done);
    t->hout_done = sent < PROTO_HEADER_SIZE ? sent : PROTO_HEADER_SIZE;
    t->sdone = sent - t->hout_done;
    /* FLOOD: a partner that failed sends ABORT and may close at once: our
     * send then fails although its ABORT is already in, in place of the
     * header. Its word explains the failure better than our broken pipe.
     * (In a ring the two directions are two neighbours: the send's failure
     * is news of its own.) */
    if (rc != 0 && t->news == XPORT_NEWS_FLOOD && t->hin_done == PROTO_HEADER_SIZE &&
        (t->hdr_in[6] == PROTO_ABORT || t->hdr_in[6] == PROTO_ERROR) && t->hdr_in[7] == 0)
        return check_header(t, err);
    if (rc != 0)
        return fail_io(t, rc, t->hin_done < PROTO_HEADER_SIZE, err);
    return check_header(t, err);
}

static int tcp_recv(struct xport *xb, void *dst, size_t len, char *err)
{
    struct tcp *t = (struct tcp *)xb;
    uint64_t out0 = t->link->bytes_out, in0 = t->link->bytes_in;
    size_t target, sent, got;
    int rc;

    if (t->failed_rc)
        return failed(t, err);
    if (!t->in_step || len > t->rbytes - t->rdone) {
        err_say(err, "xport_tcp: receive past the frame (%zu of %zu left)", len,
                t->in_step ? t->rbytes - t->rdone : 0);
        return ERR_USAGE;
    }
    /* The send keeps pace with the receive: as far as the receive will be
     * (xport.h, recv's promise). */
    target = t->rdone + len < t->sbytes ? t->rdone + len : t->sbytes;
    if (target < t->sdone)
        target = t->sdone;
    link_send_continue(t->link);   /* the rest of the frame tcp_begin began */
    rc = net_sendrecv(t->out->fd, t->sbuf + t->sdone, target - t->sdone, t->out->name,
                      t->in->fd, dst, len, t->in->name, t->link, t->idle, NULL);
    moved(t, out0, in0, &sent, &got);
    t->sdone += sent;
    t->rdone += got;
    if (rc != 0)
        return fail_io(t, rc, got < len, err);
    return 0;
}

static int tcp_end(struct xport *xb, char *err)
{
    struct tcp *t = (struct tcp *)xb;
    uint64_t out0 = t->link->bytes_out, in0 = t->link->bytes_in;
    size_t sent, got;
    int rc = 0;

    if (t->failed_rc)
        return failed(t, err);
    if (!t->in_step || t->rdone != t->rbytes) {
        err_say(err, "xport_tcp: step ended with %zu of %zu bytes received", t->rdone, t->rbytes);
        return ERR_USAGE;
    }
    if (t->sdone < t->sbytes) {
        link_send_continue(t->link);
        rc = net_send_all(t->out->fd, t->sbuf + t->sdone, t->sbytes - t->sdone, t->link,
                          t->idle, t->out->name, NULL);
    }
    moved(t, out0, in0, &sent, &got);
    t->sdone += sent;
    if (rc != 0)
        return fail_io(t, rc, 0, err);
    t->in_step = 0;
    return 0;
}

static const struct xport_ops tcp_ops = { tcp_begin, tcp_recv, tcp_end, tcp_abort, tcp_close };
