/* xport_peer.c -- recursive doubling's TCP transport (xport_peer.h says
 * what it does).
 *
 * Three parts, in file order: set-up (connect down, accept up, HELLO both
 * ways), the step calls (header exchange, payload in full duplex on one
 * connection, exact byte accounting), and the abort protocol (claim,
 * read what is there, tell every partner, listen). What it shares with the
 * ring's transport (HELLO frames and checks, the accept loop, ABORT frames,
 * the listening reader, the adopt rule) is in xport_conn.c.
 *
 * EXACT ACCOUNTING, as in xport_tcp.c: a step moves bytes on one
 * connection only, and every byte passes through the link's counters, so
 * their growth across a failed net_sendrecv says how far the outgoing and
 * the incoming frame got: the abort protocol finishes the one and the
 * listener skips the rest of the other.
 *
 * EMULATED LATENCY, as in xport_tcp.c: the header leaves together with the
 * first HEAD_MAX payload bytes (copied next to it), and every step starts
 * the link's timeline afresh (link_send_restart), so a step costs
 * latency + bytes / bandwidth.
 */
#include "xport_peer.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "net.h"
#include "xport_conn.h"

#define HEAD_MAX (64u << 10)   /* payload bytes sent with the header (EMULATED LATENCY) */

/* --------------------------------------------------------------- state */

struct conn {
    int rank, fd;
    char name[XPORT_NAME_LEN];          /* "rank 2 (127.0.0.1:40123)" */
    uint64_t seq;                       /* step number of its next CHUNK, both ways */
    int ok;                             /* a frame can still be sent on it */
    int sync;                           /* its incoming stream's position is known */
};

struct xport_peer {
    struct xport_conn_self self;
    struct link *link;
    int nconn;
    struct conn conn[XPORT_PEER_MAX];

    /* The step in progress (in_step), for the abort protocol. */
    struct conn *cur;
    int in_step;
    double idle;                        /* this step's idle timeout */
    uint32_t round;
    uint8_t head[PROTO_HEADER_SIZE + HEAD_MAX];   /* header + first payload bytes out */
    uint8_t hdr_in[PROTO_HEADER_SIZE];
    size_t hout_done, hin_done;         /* header bytes sent / received */
    const uint8_t *sbuf;
    size_t sbytes, sdone, rbytes, rdone;

    /* Once failed: every later call returns this. */
    int failed_rc;
    char failed_msg[ERR_LEN];
};

static struct conn *conn_of(struct xport_peer *p, int rank)
{
    for (int i = 0; i < p->nconn; i++)
        if (p->conn[i].rank == rank)
            return &p->conn[i];
    return NULL;
}

/* cfg_check: a configuration open and attach can work with. */
static int cfg_check(const struct xport_peer_cfg *cfg, char *err)
{
    int k = cfg->world;

    if (k < 2 || cfg->rank < 0 || cfg->rank >= k || !(cfg->timeout > 0) || !cfg->link ||
        !cfg->peers || !cfg->partners || cfg->npartners < 1 || cfg->npartners > XPORT_PEER_MAX)
        goto bad;
    for (int i = 0; i < cfg->npartners; i++) {
        int q = cfg->partners[i];
        if (q < 0 || q >= k || q == cfg->rank)
            goto bad;
        for (int j = 0; j < i; j++)
            if (cfg->partners[j] == q)
                goto bad;
    }
    return 0;
bad:
    err_say(err, "xport_peer: bad configuration");
    return ERR_USAGE;
}

/* --------------------------------------------------------------- set-up */

int xport_peer_open(struct xport_peer **out, const struct xport_peer_cfg *cfg, char *err)
{
    struct xport_conn_self self = { cfg->rank, cfg->world, cfg->hello, cfg->timeout };
    int fds[XPORT_PEER_MAX], n = cfg->npartners, rc, missing, who, fd;
    char name[XPORT_NAME_LEN], e[ERR_LEN], why[ERR_LEN] = "";
    uint8_t hello[XPORT_HELLO_FRAME], pay[PROTO_TEXT_MAX + 1];
    double deadline = clock_now() + cfg->timeout;
    unsigned char *wanted = NULL;
    struct proto_header h;

    *out = NULL;
    if ((rc = cfg_check(cfg, err)) != 0)
        return rc;
    for (int i = 0; i < n; i++)
        fds[i] = -1;
    xport_conn_hello_frame(&self, hello);

    /* Down: connect to the lower partners and say who we are; their
     * listeners have been open since before they registered. */
    for (int i = 0; i < n; i++) {
        const struct proto_peer *pp = &cfg->peers[cfg->partners[i]];
        if (cfg->partners[i] > cfg->rank)
            continue;
        xport_conn_name(name, cfg->partners[i], pp);
        rc = net_connect(pp->addr, pp->port, cfg->timeout, &fds[i], e);
        if (rc == 0)
            rc = net_send_all(fds[i], hello, sizeof hello, NULL, cfg->timeout, name, e);
        if (rc != 0) {
            err_say(err, "partner %s: %s", name, e);
            goto out;
        }
    }
    /* Up: accept the higher partners in whatever order they come, answer each. */
    wanted = calloc((size_t)cfg->world, 1);
    if (!wanted) {
        rc = -ENOMEM;
        err_say(err, "xport_peer: out of memory");
        goto out;
    }
    missing = 0;
    for (int i = 0; i < n; i++)
        if (cfg->partners[i] > cfg->rank) {
            wanted[cfg->partners[i]] = 1;
            missing++;
        }
    while (missing > 0) {
        rc = xport_conn_accept(&self, cfg->lfd, wanted, deadline, &fd, &who, e);
        if (rc != 0) {
            int first = 0;
            while (!wanted[first])
                first++;
            xport_conn_name(name, first, &cfg->peers[first]);
            if (rc == ERR_TIMEOUT)
                err_say(err, "partner %s never connected within %.1f s", name, cfg->timeout);
            else
                err_say(err, "waiting for partner %s: %s", name, e);
            goto out;
        }
        wanted[who] = 0;
        missing--;
        for (int i = 0; i < n; i++)
            if (cfg->partners[i] == who)
                fds[i] = fd;
        xport_conn_name(name, who, &cfg->peers[who]);
        rc = net_send_all(fd, hello, sizeof hello, NULL, cfg->timeout, name, e);
        if (rc != 0) {
            err_say(err, "partner %s: %s", name, e);
            goto out;
        }
    }
    /* The lower partners' answers prove they are the ranks the table said. */
    for (int i = 0; i < n; i++) {
        if (cfg->partners[i] > cfg->rank)
            continue;
        xport_conn_name(name, cfg->partners[i], &cfg->peers[cfg->partners[i]]);
        rc = xport_conn_read_frame(fds[i], cfg->timeout, name, &h, pay, e);
        if (rc == 0)
            rc = xport_conn_hello_check(&self, &h, pay, cfg->partners[i], why);
        else
            snprintf(why, sizeof why, "%s", e);
        if (rc != 0) {
            err_say(err, "partner %s: %s", name, why);
            goto out;
        }
    }
    rc = xport_peer_attach(out, cfg, fds, err);
    for (int i = 0; i < n; i++)
        fds[i] = -1;            /* attach owns them now, also on failure */
out:
    free(wanted);
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return rc;
}

int xport_peer_attach(struct xport_peer **out, const struct xport_peer_cfg *cfg, const int *fds,
                      char *err)
{
    struct xport_peer *p = NULL;
    int rc = cfg_check(cfg, err);

    *out = NULL;
    if (rc == 0 && !(p = calloc(1, sizeof *p))) {
        rc = -ENOMEM;
        err_say(err, "xport_peer: out of memory");
    }
    if (rc != 0) {
        for (int i = 0; i < cfg->npartners && i < XPORT_PEER_MAX; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        return rc;
    }
    p->self = (struct xport_conn_self){ cfg->rank, cfg->world, cfg->hello, cfg->timeout };
    p->link = cfg->link;
    p->nconn = cfg->npartners;
    for (int i = 0; i < p->nconn; i++) {
        struct conn *c = &p->conn[i];
        c->rank = cfg->partners[i];
        c->fd = fds[i];
        c->ok = c->sync = 1;
        xport_conn_name(c->name, c->rank, &cfg->peers[c->rank]);
    }
    *out = p;
    return 0;
}

void xport_peer_close(struct xport_peer *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nconn; i++)
        close(p->conn[i].fd);
    free(p);
}

/* ----------------------------------------------------- abort protocol */

/* finish_frame: the rest of the step's outgoing CHUNK frame, so that an
 * ABORT after it is read as a frame. */
static int finish_frame(struct xport_peer *p, double deadline)
{
    struct conn *c = p->cur;
    int rc = 0;

    if (!p->in_step)
        return 0;
    if (p->hout_done < PROTO_HEADER_SIZE)
        rc = xport_conn_send_by(c->fd, p->head + p->hout_done, PROTO_HEADER_SIZE - p->hout_done,
                                deadline, c->name);
    if (rc == 0)
        rc = xport_conn_send_by(c->fd, p->sbuf + p->sdone, p->sbytes - p->sdone, deadline,
                                c->name);
    if (rc == 0) {
        p->hout_done = PROTO_HEADER_SIZE;
        p->sdone = p->sbytes;
    }
    return rc;
}

/* tell: the claim to every partner but the rank lost and the one the news
 * came from (FAULTS, 2). */
static void tell(struct xport_peer *p, const struct xport_claim *cl, double deadline)
{
    for (int i = 0; i < p->nconn; i++) {
        struct conn *c = &p->conn[i];
        if (!c->ok || c->rank == cl->lost ||
            (cl->kind == XPORT_CLAIM_RELAYED && c->rank == cl->from))
            continue;
        if ((c == p->cur && finish_frame(p, deadline) != 0) ||
            xport_conn_send_abort(c->fd, &p->self, c->seq, cl->lost, cl->text, deadline,
                                  c->name) != 0)
            c->ok = 0;
    }
}

/* readers_init: a reader for every connection whose stream can still be
 * followed; the step's connection from where it stands (inside the
 * header, or inside the CHUNK payload to skip). Returns the count. */
static int readers_init(struct xport_peer *p, struct xport_reader *rd)
{
    int n = 0;

    for (int i = 0; i < p->nconn; i++) {
        struct conn *c = &p->conn[i];
        struct xport_reader *r = &rd[n];
        if (!c->sync)
            continue;
        memset(r, 0, sizeof *r);
        r->fd = c->fd;
        r->from = c->rank;
        if (c == p->cur && p->in_step && p->hin_done < PROTO_HEADER_SIZE) {
            memcpy(r->hdr, p->hdr_in, p->hin_done);
            r->hgot = p->hin_done;
        } else if (c == p->cur && p->in_step) {
            r->skip = p->rbytes - p->rdone;
        }
        n++;
    }
    return n;
}

/* news: read every connection for ABORTs until `until` (one pass without
 * waiting when it has passed already). An adopted ABORT is passed on when
 * relay is set. Stops early when every reader is dead, or when the peer
 * our news came from has closed: it said all it had. */
static void news(struct xport_peer *p, struct xport_claim *cl, struct xport_reader *rd, int nrd,
                 double until, int relay)
{
    struct pollfd pfd[XPORT_PEER_MAX];

    for (;;) {
        int alive = 0, source_dead = 0;
        double now;

        for (int i = 0; i < nrd; i++) {
            if (rd[i].dead)
                continue;
            while (xport_reader_feed(&rd[i], p->self.world)) {
                if (xport_claim_adopt(cl, p->self.world, &rd[i]) && relay)
                    tell(p, cl, until);
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

/* fail_claim: run the abort protocol for claim cl (FAULTS), record the
 * final line. */
static int fail_claim(struct xport_peer *p, int rc, struct xport_claim *cl, char *err)
{
    struct xport_reader rd[XPORT_PEER_MAX];
    double t0 = clock_now();
    int nrd = readers_init(p, rd);

    news(p, cl, rd, nrd, t0, 0);                     /* what is there already */
    tell(p, cl, t0 + p->self.timeout / 4);
    if (cl->kind != XPORT_CLAIM_CERTAIN)
        news(p, cl, rd, nrd, t0 + p->self.timeout / 2, 1);

    if (cl->kind == XPORT_CLAIM_RELAYED) {
        err_say(p->failed_msg, "rank %d reported: %s", cl->from, cl->text);
    } else {
        /* Strip the "(seen by rank R)" we add for others: we are R. */
        char *seen;
        err_say(p->failed_msg, "%s", cl->text);
        if ((seen = strstr(p->failed_msg, " (seen by rank ")) != NULL)
            *seen = '\0';
    }
    p->failed_rc = rc;
    p->in_step = 0;
    err_say(err, "%s", p->failed_msg);
    return rc;
}

/* own_claim: a claim of ours about the step's partner. */
__attribute__((format(printf, 4, 5)))
static void own_claim(struct xport_peer *p, struct xport_claim *cl, enum xport_claim_kind kind,
                      const char *fmt, ...)
{
    char why[ERR_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    memset(cl, 0, sizeof *cl);
    cl->kind = kind;
    cl->lost = p->cur->rank;
    cl->from = p->self.rank;
    snprintf(cl->text, sizeof cl->text, "lost %s: %s (seen by rank %d)", p->cur->name, why,
             p->self.rank);
}

/* fail_io: a net_* call of the step failed with rc (FAULTS, 1). The step
 * has one partner, so the claim is about it: a timeout is a suspicion,
 * anything else certain. */
static int fail_io(struct xport_peer *p, int rc, char *err)
{
    struct xport_claim cl;

    if (rc == ERR_TIMEOUT)
        own_claim(p, &cl, XPORT_CLAIM_SUSPECT, "no progress for %.1f s (--timeout)", p->idle);
    else
        own_claim(p, &cl, XPORT_CLAIM_CERTAIN, "%s",
                  rc == ERR_EOF || rc == -EPIPE || rc == -ECONNRESET ? "connection closed"
                                                                     : err_str(rc));
    return fail_claim(p, rc, &cl, err);
}

/* fail_frame: the partner sent something that is not the expected CHUNK;
 * after a bad header its stream cannot be followed any more. */
__attribute__((format(printf, 4, 5)))
static int fail_frame(struct xport_peer *p, int rc, char *err, const char *fmt, ...)
{
    char why[ERR_LEN];
    struct xport_claim cl;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    own_claim(p, &cl, XPORT_CLAIM_CERTAIN, "sent a bad frame at step %llu: %s",
              (unsigned long long)p->cur->seq, why);
    p->cur->sync = 0;
    return fail_claim(p, rc, &cl, err);
}

/* --------------------------------------------------------------- steps */

static int failed(struct xport_peer *p, char *err)
{
    err_say(err, "%s", p->failed_msg);
    return p->failed_rc;
}

/* moved: the link counters' growth since (out0, in0). */
static void moved(const struct xport_peer *p, uint64_t out0, uint64_t in0, size_t *out,
                  size_t *in)
{
    *out = (size_t)(p->link->bytes_out - out0);
    *in = (size_t)(p->link->bytes_in - in0);
}

/* check_header: the partner's header must be CHUNK(partner, seq, round,
 * rbytes); an ABORT or ERROR is the news of a failure elsewhere. */
static int check_header(struct xport_peer *p, char *err)
{
    struct conn *c = p->cur;
    struct proto_limits lim = { p->rbytes > PROTO_TEXT_MAX ? p->rbytes : PROTO_TEXT_MAX,
                                (uint32_t)p->self.world, 0 };
    struct proto_header h;
    int rc = proto_header_decode(p->hdr_in, &lim, &h);

    if (rc == 0 && h.rank != (uint32_t)c->rank)
        rc = fail_frame(p, ERR_PROTO_RANK, err, "a frame from rank %u on rank %d's connection",
                        h.rank, c->rank);
    else if (rc == ERR_PROTO_LENGTH || rc == ERR_PROTO_SIZE)
        rc = fail_frame(p, rc, err, "%s (%s of %llu bytes)", err_str(rc),
                        proto_type_name(h.type), (unsigned long long)h.length);
    else if (rc != 0)
        rc = fail_frame(p, rc, err, "%s", err_str(rc));
    else if (h.type == PROTO_ABORT || h.type == PROTO_ERROR) {
        char text[PROTO_TEXT_MAX + 1];
        struct xport_claim cl;
        rc = net_recv_all(c->fd, text, (size_t)h.length, NULL, p->self.timeout, c->name, NULL);
        text[rc == 0 ? h.length : 0] = '\0';
        if (rc == 0 && proto_text_check((const uint8_t *)text, (size_t)h.length) != 0)
            rc = ERR_PROTO_FIELD;
        if (rc != 0)
            return fail_io(p, rc, err);
        p->hin_done = 0;          /* the stream is at a frame boundary again */
        p->rbytes = p->rdone = 0;
        memset(&cl, 0, sizeof cl);
        cl.kind = XPORT_CLAIM_RELAYED;
        cl.from = c->rank;
        cl.lost = h.type == PROTO_ABORT && h.aux < (uint64_t)p->self.world ? (int)h.aux : c->rank;
        if (h.type == PROTO_ERROR)
            snprintf(cl.text, sizeof cl.text, "error: %s", text);
        else
            snprintf(cl.text, sizeof cl.text, "%s", text);
        return fail_claim(p, -ECONNABORTED, &cl, err);
    } else if (h.type != PROTO_CHUNK)
        rc = fail_frame(p, ERR_PROTO_TYPE, err, "%s instead of CHUNK", proto_type_name(h.type));
    else if (h.step != c->seq)
        rc = fail_frame(p, ERR_PROTO_FIELD, err, "CHUNK for step %llu",
                        (unsigned long long)h.step);
    else if (h.aux != p->round)
        rc = fail_frame(p, ERR_PROTO_FIELD, err, "round %llu, expected round %u",
                        (unsigned long long)h.aux, p->round);
    else if (h.length != p->rbytes)
        rc = fail_frame(p, ERR_PROTO_SIZE, err, "%llu bytes in round %u, expected %zu",
                        (unsigned long long)h.length, p->round, p->rbytes);
    if (rc != 0)
        return rc;
    c->seq++;
    return 0;
}

int xport_peer_begin(struct xport_peer *p, const struct xport_peer_step *s, char *err)
{
    struct conn *c;
    struct proto_header h;
    uint64_t out0 = p->link->bytes_out, in0 = p->link->bytes_in;
    size_t first = s->sbytes < HEAD_MAX ? s->sbytes : HEAD_MAX, sent;
    int rc;

    if (p->failed_rc)
        return failed(p, err);
    if (p->in_step || !(c = conn_of(p, s->peer)) || (s->sbytes > 0 && !s->sbuf)) {
        err_say(err, "xport_peer: step with rank %d: %s", s->peer,
            p->in_step ? "the last step has not ended" : "not a partner, or no buffer");
        return ERR_USAGE;
    }
    h = proto_header_make(PROTO_CHUNK, (uint32_t)p->self.rank, (uint32_t)p->self.world, c->seq,
                          s->round, s->sbytes);
    proto_header_encode(&h, p->head);
    if (first)
        memcpy(p->head + PROTO_HEADER_SIZE, s->sbuf, first);
    p->cur = c;
    p->in_step = 1;
    p->round = s->round;
    p->idle = p->self.timeout * (s->patience > 1 ? s->patience : 1);
    p->sbuf = s->sbuf;
    p->sbytes = s->sbytes;
    p->rbytes = s->rbytes;
    p->sdone = p->rdone = 0;
    /* EMULATED LATENCY: a new transmission, in real time. */
    link_send_restart(p->link);
    rc = net_sendrecv(c->fd, p->head, PROTO_HEADER_SIZE + first, c->name,
                      c->fd, p->hdr_in, PROTO_HEADER_SIZE, c->name, p->link, p->idle, NULL);
    moved(p, out0, in0, &sent, &p->hin_done);
    p->hout_done = sent < PROTO_HEADER_SIZE ? sent : PROTO_HEADER_SIZE;
    p->sdone = sent - p->hout_done;
    /* A partner that failed sends ABORT and may close at once: our send
     * then fails although its ABORT is already in, in place of the header.
     * Its word explains the failure better than our broken pipe. */
    if (rc != 0 && p->hin_done == PROTO_HEADER_SIZE &&
        (p->hdr_in[6] == PROTO_ABORT || p->hdr_in[6] == PROTO_ERROR) && p->hdr_in[7] == 0)
        return check_header(p, err);
    if (rc != 0)
        return fail_io(p, rc, err);
    return check_header(p, err);
}

int xport_peer_recv(struct xport_peer *p, void *dst, size_t len, char *err)
{
    struct conn *c = p->cur;
    uint64_t out0 = p->link->bytes_out, in0 = p->link->bytes_in;
    size_t target, sent, got;
    int rc;

    if (p->failed_rc)
        return failed(p, err);
    if (!p->in_step || len > p->rbytes - p->rdone) {
        err_say(err, "xport_peer: receive past the frame (%zu of %zu left)", len,
            p->in_step ? p->rbytes - p->rdone : 0);
        return ERR_USAGE;
    }
    /* The send keeps pace with the receive: as far as the receive will be
     * (STEPS: recv's promise). */
    target = p->rdone + len < p->sbytes ? p->rdone + len : p->sbytes;
    if (target < p->sdone)
        target = p->sdone;
    rc = net_sendrecv(c->fd, p->sbuf + p->sdone, target - p->sdone, c->name,
                      c->fd, dst, len, c->name, p->link, p->idle, NULL);
    moved(p, out0, in0, &sent, &got);
    p->sdone += sent;
    p->rdone += got;
    if (rc != 0)
        return fail_io(p, rc, err);
    return 0;
}

int xport_peer_end(struct xport_peer *p, char *err)
{
    struct conn *c = p->cur;
    uint64_t out0 = p->link->bytes_out, in0 = p->link->bytes_in;
    size_t sent, got;
    int rc = 0;

    if (p->failed_rc)
        return failed(p, err);
    if (!p->in_step || p->rdone != p->rbytes) {
        err_say(err, "xport_peer: step ended with %zu of %zu bytes received", p->rdone, p->rbytes);
        return ERR_USAGE;
    }
    if (p->sdone < p->sbytes)
        rc = net_send_all(c->fd, p->sbuf + p->sdone, p->sbytes - p->sdone, p->link, p->idle,
                          c->name, NULL);
    moved(p, out0, in0, &sent, &got);
    p->sdone += sent;
    if (rc != 0)
        return fail_io(p, rc, err);
    p->in_step = 0;
    return 0;
}

int xport_peer_abort(struct xport_peer *p, const char *why)
{
    struct xport_claim cl;

    if (p->failed_rc)
        return 0;
    memset(&cl, 0, sizeof cl);
    cl.kind = XPORT_CLAIM_CERTAIN;
    cl.lost = p->self.rank;
    cl.from = p->self.rank;
    snprintf(cl.text, sizeof cl.text, "rank %d failed: %s", p->self.rank, why);
    tell(p, &cl, clock_now() + p->self.timeout / 4);
    p->failed_rc = -ECONNABORTED;
    p->in_step = 0;
    err_say(p->failed_msg, "%s", cl.text);
    return 0;
}
