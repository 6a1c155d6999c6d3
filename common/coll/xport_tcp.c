/* xport_tcp.c -- the TCP transport (xport_tcp.h says what it does).
 *
 * Two parts, in file order: set-up (dial, accept, HELLO both ways) and the
 * step calls of xport.h (header exchange, payload in full duplex, exact
 * byte accounting). The abort protocol (its common pieces: claim, finish
 * the frame, tell one peer; its two ways of spreading news: RELAY along
 * the ring, FLOOD to every peer) is xport_tcp_abort.c's, entered through
 * xport_tcp_internal.h. HELLO frames and their checks, the accept loop,
 * ABORT frames, the listening reader and the adopt rule are in
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
#include "xport_tcp_internal.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/units.h"
#include "wire/net.h"
#include "xport_conn.h"

#define BUSY_S   100e-6        /* net_busy_poll's time where the rule below says spin */
#define BUSY_ENV "PSR_NET_BUSY"  /* microseconds, 0: off; overrides the rule (measuring it) */

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

/* BUSY-POLL RULE (docs/link.md, "Busy-poll"): how long a small transfer
 * retries its sockets before it sleeps (net_busy_poll), for `world` ranks
 * on `cpus` CPUs (the ranks of a run share one host here). A wake-up from
 * ppoll costs more than a small step's transfer, and Open MPI's progress
 * engine spins (yielding) even when oversubscribed. Measured unpaced at
 * K = 4 on 2 cores, spinning made 16 KiB all-reduces 1.3-2.7x faster in
 * five interleaved runs, with less CPU per byte (fewer wake-ups); at K = 8
 * it was mixed (slower at 64 KiB-4 MiB in 15 of 24 cases), so the ranks
 * may outnumber the CPUs at most twice. On an emulated link the spin
 * before a send's last deadline (net_xfer.c, SPIN_S) comes with it, so
 * there the ranks must fit the CPUs, as before. PSR_NET_BUSY overrides it. */
double xport_tcp_busy_s(int world, long cpus, int paced)
{
    long fit = paced ? cpus : 4 * cpus;

    return cpus > 0 && world <= fit ? BUSY_S : 0.0;
}

/* busy_setting: the rule, or PSR_NET_BUSY's microseconds (0-1000000). */
static int busy_setting(const struct xport_tcp_cfg *cfg, double *s, char *err)
{
    const char *e = getenv(BUSY_ENV);
    char reason[ERR_LEN];
    long long us;

    *s = xport_tcp_busy_s(cfg->world, sysconf(_SC_NPROCESSORS_ONLN), link_active(cfg->link));
    if (!e || !*e)
        return 0;
    if (cli_parse_ll(e, 0, 1000000, &us, reason) != 0) {
        err_say(err, "%s: %s (from the environment)", BUSY_ENV, reason);
        return ERR_USAGE;
    }
    *s = (double)us * 1e-6;
    return 0;
}

int xport_tcp_attach(struct xport **out, const struct xport_tcp_cfg *cfg, const int *fds,
                     char *err)
{
    struct tcp *t = NULL;
    int rc = cfg_check(cfg, err);
    double busy = 0;

    *out = NULL;
    if (rc == 0)
        rc = busy_setting(cfg, &busy, err);
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
    net_busy_poll(busy);        /* SMALL STEPS: the BUSY-POLL RULE above */
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
    size_t have = t->staged < (size_t)h->length ? t->staged : (size_t)h->length;
    int rc;

    /* ONE READ: the text's first bytes may have come with the header;
     * bytes staged beyond it leave the stream's position unknown. */
    memcpy(text, t->hdr_in + t->stage_at, have);
    if (t->staged > have)
        c->sync = 0;
    t->staged = 0;
    t->rframe.len += (size_t)h->length;
    rc = net_recv_frame(c->fd, text + have, (size_t)h->length - have, NULL, t->self.timeout,
                        &t->rframe, c->name, NULL);

    text[rc == 0 ? h->length : 0] = '\0';
    if (rc == 0 && proto_text_check((const uint8_t *)text, (size_t)h->length) != 0)
        rc = ERR_PROTO_FIELD;
    if (rc != 0)
        return tcp_fail_io(t, rc, 1, err);
    t->hin_done = 0;          /* the stream is at a frame boundary again */
    t->rbytes = t->rdone = 0;
    memset(&cl, 0, sizeof cl);
    cl.kind = XPORT_CLAIM_RELAYED;
    cl.from = c->rank;
    cl.lost = h->type == PROTO_ABORT && h->aux < (uint64_t)t->self.world ? (int)h->aux : c->rank;
    snprintf(cl.text, sizeof cl.text, "%s%s", h->type == PROTO_ERROR ? "error: " : "", text);
    return tcp_fail_claim(t, -ECONNABORTED, &cl, err);
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
        rc = tcp_fail_frame(t, ERR_PROTO_RANK, err, "a frame from rank %u on rank %d's "
                            "connection", h.rank, c->rank);
    else if (rc == ERR_PROTO_LENGTH || rc == ERR_PROTO_SIZE)
        rc = tcp_fail_frame(t, rc, err, "%s (%s of %llu bytes)", err_str(rc),
                            proto_type_name(h.type), (unsigned long long)h.length);
    else if (rc != 0)
        rc = tcp_fail_frame(t, rc, err, "%s", err_str(rc));
    else if (h.type == PROTO_ABORT || h.type == PROTO_ERROR)
        return relayed(t, &h, err);
    else if (h.type != PROTO_CHUNK)
        rc = tcp_fail_frame(t, ERR_PROTO_TYPE, err, "%s instead of CHUNK",
                            proto_type_name(h.type));
    else if (h.step != c->seq)
        rc = tcp_fail_frame(t, ERR_PROTO_FIELD, err, "CHUNK for step %llu",
                            (unsigned long long)h.step);
    else if (proto_chunk_tag(h.aux) != t->recv_tag)
        rc = tcp_fail_frame(t, ERR_PROTO_FIELD, err, "%s %u, expected %s %u", t->tag,
                            proto_chunk_tag(h.aux), t->tag, t->recv_tag);
    else if (h.length != t->rbytes)
        rc = tcp_fail_frame(t, ERR_PROTO_SIZE, err, "%llu bytes %s %u, expected %zu",
                            (unsigned long long)h.length, t->tag_of, t->recv_tag, t->rbytes);
    if (rc != 0)
        return rc;
    if (link_active(t->link) && proto_chunk_stamp(h.aux) != 0) {
        double now = clock_now();
        link_ingress_frame(t->link, proto_stamp_time(proto_chunk_stamp(h.aux), now),
                           PROTO_HEADER_SIZE, now);
    }
    t->rframe.len += t->rbytes;
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
    size_t first = s->sbytes < HEAD_MAX ? s->sbytes : HEAD_MAX, sent, got;
    size_t stage = !link_active(t->link) && s->rbytes <= STAGE_MAX ? s->rbytes : 0;
    uint32_t stamp;
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
    /* EMULATED LATENCY: what a step sends was received (and reduced) in
     * the step before, so it is a new transmission and pays the link's
     * latency once: forget the lag the link carried over from the last
     * send (link.h, BLOCKING SENDERS). It starts on this host's own
     * timeline (link.h, VIRTUAL TIMELINE), and the frame says where. */
    stamp = 0;
    if (link_active(t->link)) {
        double now = clock_now();
        stamp = proto_stamp_of(net_vt_restart(t->link, now));
    }
    h = proto_header_make(PROTO_CHUNK, (uint32_t)t->self.rank, (uint32_t)t->self.world,
                          out->seq, proto_chunk_aux(s->send_tag, stamp), s->sbytes);
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
    net_frame_begin(&t->rframe, PROTO_HEADER_SIZE);
    t->rframe.whole = PROTO_HEADER_SIZE + s->rbytes;    /* the header is not its end */
    /* ONE READ. Unpaced, a small payload is read with its header, in one
     * recv where it is already in (docs/link.md, "Unpaced loopback"), and
     * tcp_recv takes it from there. Paced, the header is read alone
     * (EMULATED LATENCY above). */
    rc = net_sendrecv_some(out->fd, t->head, PROTO_HEADER_SIZE + first, out->name,
                           in->fd, t->hdr_in, PROTO_HEADER_SIZE, PROTO_HEADER_SIZE + stage,
                           in->name, t->link, t->idle, &t->rframe, NULL);
    moved(t, out0, in0, &sent, &got);
    t->hin_done = got < PROTO_HEADER_SIZE ? got : PROTO_HEADER_SIZE;
    t->staged = got - t->hin_done;
    t->stage_at = PROTO_HEADER_SIZE;
    t->hout_done = sent < PROTO_HEADER_SIZE ? sent : PROTO_HEADER_SIZE;
    t->sdone = sent - t->hout_done;
    /* A peer that failed sends ABORT and may close at once: our send then
     * fails although its ABORT is already in, in place of the header
     * (FLOOD: the same partner; a ring: downstream went with the rank
     * upstream names, and ONE READ may have taken the ABORT's text too, so
     * that a probe of upstream finds only its close). Its word explains
     * the failure better than our broken pipe. */
    if (rc != 0 && t->hin_done == PROTO_HEADER_SIZE &&
        (t->hdr_in[6] == PROTO_ABORT || t->hdr_in[6] == PROTO_ERROR) && t->hdr_in[7] == 0)
        return check_header(t, err);
    if (rc != 0)
        return tcp_fail_io(t, rc, t->hin_done < PROTO_HEADER_SIZE, err);
    return check_header(t, err);
}

static int tcp_recv(struct xport *xb, void *dst, size_t len, char *err)
{
    struct tcp *t = (struct tcp *)xb;
    uint64_t out0 = t->link->bytes_out, in0 = t->link->bytes_in;
    size_t target, sent, got, ahead = 0, take, at;
    unsigned char *to = dst;
    int rc = 0;

    if (t->failed_rc)
        return failed(t, err);
    if (!t->in_step || len > t->rbytes - t->rdone) {
        err_say(err, "xport_tcp: receive past the frame (%zu of %zu left)", len,
                t->in_step ? t->rbytes - t->rdone : 0);
        return ERR_USAGE;
    }
    /* The send goes at least as far as the receive will be (xport.h,
     * recv's promise); unpaced, further (SEND FIRST, SEND AHEAD below). */
    target = t->rdone + len < t->sbytes ? t->rdone + len : t->sbytes;
    if (target < t->sdone)
        target = t->sdone;
    /* ONE READ: what came with the header first. */
    take = len < t->staged ? len : t->staged;
    if (take > 0) {
        memcpy(to, t->hdr_in + t->stage_at, take);
        t->stage_at += take;
        t->staged -= take;
        t->rdone += take;
        to += take;
        len -= take;
    }
    link_send_continue(t->link);   /* the rest of the frame tcp_begin began */
    /* SEND FIRST. Unpaced, the rest of the outgoing frame goes before the
     * receive, as far as the socket takes it now: the receive below reads
     * what is in first, and at K = 2 the two ends fell into a lockstep
     * where one rank read the whole piece its neighbour had sent before
     * it sent its own, and the neighbour slept until then: the two copies
     * of each step ran one after the other instead of side by side
     * (docs/link.md, "Unpaced loopback"). What it cannot take now goes
     * below. Never waits (SEND AHEAD says why); paced, nothing. */
    if (t->sdone < t->sbytes)
        (void)net_send_now(t->out->fd, t->sbuf + t->sdone, t->sbytes - t->sdone, t->link,
                           &ahead);
    at = t->sdone + ahead;
    if (len > 0 || target > at)
        rc = net_sendrecv_frame(t->out->fd, t->sbuf + at, target > at ? target - at : 0,
                                t->out->name, t->in->fd, to, len, t->in->name, t->link,
                                t->idle, &t->rframe, NULL);
    if (target < at)
        target = at;
    /* SEND AHEAD. Unpaced, the rest of the outgoing frame goes on as far
     * as the socket takes it now, so that the neighbour finds its next
     * piece already in while this rank adds (ring.c, PIECES): without it
     * a step's send only kept pace with its receive, and both ends woke
     * once a piece. Never waits (a receiver reading piece by piece while
     * every rank waited to send its whole frame would deadlock); a failed
     * socket is left to the next call, which names the peer. Paced sends
     * keep to the link's reservations (net_send_now sends nothing). */
    if (rc == 0 && target < t->sbytes)
        (void)net_send_now(t->out->fd, t->sbuf + target, t->sbytes - target, t->link, &ahead);
    moved(t, out0, in0, &sent, &got);
    t->sdone += sent;
    t->rdone += got;
    if (rc != 0)
        return tcp_fail_io(t, rc, got < len, err);
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
        return tcp_fail_io(t, rc, 0, err);
    t->in_step = 0;
    return 0;
}

static const struct xport_ops tcp_ops = { tcp_begin, tcp_recv, tcp_end, tcp_abort, tcp_close };
