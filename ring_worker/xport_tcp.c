/* xport_tcp.c -- the ring's TCP transport (xport_tcp.h says what it does).
 *
 * Three parts, in file order: set-up (connect right, accept left, HELLO
 * both ways), the step calls of xport.h (header exchange, payload in full
 * duplex, exact byte accounting), and the abort protocol (claim, tell,
 * listen).
 *
 * EXACT ACCOUNTING. net_sendrecv does not say how far it got when it
 * fails, but every byte it moves passes through this process's link
 * counters (bytes_out, bytes_in). Their growth across the call is exactly
 * what was sent to the right and received from the left, so after any
 * failure the transport knows where both streams stand: how much of the
 * CHUNK frame being sent is still to go (the abort protocol finishes it,
 * so that the ABORT behind it starts on a frame boundary) and how much of
 * the incoming one (so that listening can skip it and find the next
 * frame).
 *
 * EMULATED LATENCY. A step's frame leaves as one transmission: the header
 * together with the first HEAD_MAX payload bytes (copied next to it: 64
 * KiB at most per step), then the rest as the receive advances, each call
 * continuing the link's timeline. And every step starts that timeline
 * afresh, in real time: what a step sends is what the step before
 * received, so it could not have left earlier. Without both, the link's
 * rule for blocking senders (link.h) would see the steps of a ring in
 * lockstep as one long back-to-back send and charge the latency once per
 * all-reduce instead of once per step, or charge it twice when the header
 * went alone. With them a step costs latency + chunk / bandwidth, the
 * model's a + (n/K) b.
 *
 * SIMPLIFICATIONS, said out loud: the abort protocol moves its few bytes
 * without the emulated link (no pacing, not counted): it is not measured.
 * Set-up (HELLO) is not paced either.
 *
 * What the ring shares with recursive doubling's transport (HELLO frames and
 * their checks, the accept loop, ABORT frames, the listening reader, when a
 * claim is adopted) is in xport_conn.c.
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

#include "clock.h"
#include "err.h"
#include "log.h"
#include "net.h"
#include "xport_conn.h"

#define HEAD_MAX     (64u << 10)   /* payload bytes sent with the header (EMULATED LATENCY) */

/* --------------------------------------------------------------- state */

struct xport_tcp {
    struct xport base;                  /* first: the xport.h interface */
    int rank, world, left, right;
    int fd_left, fd_right;
    char name_left[XPORT_NAME_LEN], name_right[XPORT_NAME_LEN];   /* "rank 2 (127.0.0.1:40123)" */
    struct xport_conn_self self;        /* who we are in ABORT frames */
    struct link *link;
    double timeout;
    uint64_t seq;                       /* step number of the next CHUNK, both ways */

    /* The step in progress (in_step), for the abort protocol. */
    int in_step;
    uint8_t head[PROTO_HEADER_SIZE + HEAD_MAX];   /* header + first payload bytes out */
    uint8_t hdr_in[PROTO_HEADER_SIZE];
    size_t hout_done, hin_done;         /* header bytes sent / received */
    int in_sync;                        /* the incoming stream's position is known */
    const uint8_t *sbuf;
    size_t sbytes, sdone, rbytes, rdone;
    uint32_t rchunk;

    /* Once failed: every later call returns this. */
    int failed_rc;
    char failed_msg[ERR_LEN];
    int right_ok, left_ok;              /* a frame can still be sent that way */
};

static const char *name_of(const struct xport_tcp *t, int rank)
{
    return rank == t->left ? t->name_left : t->name_right;
}

/* --------------------------------------------------------------- set-up */

int xport_tcp_open(struct xport_tcp **out, const struct xport_tcp_cfg *cfg, char *err)
{
    int k = cfg->world, left = (cfg->rank + k - 1) % k, right = (cfg->rank + 1) % k;
    const struct proto_peer *pr = &cfg->peers[right];
    char lname[XPORT_NAME_LEN], rname[XPORT_NAME_LEN], e[ERR_LEN], why[ERR_LEN] = "";
    uint8_t hello[XPORT_HELLO_FRAME], pay[PROTO_TEXT_MAX + 1];
    double deadline = clock_now() + cfg->timeout;
    struct xport_conn_self self = { cfg->rank, cfg->world, cfg->hello, cfg->timeout };
    unsigned char *wanted = NULL;
    struct proto_header h;
    int fd_r = -1, fd_l = -1, rc, who;

    *out = NULL;
    if (k < 2 || cfg->rank < 0 || cfg->rank >= k || !(cfg->timeout > 0)) {
        err_say(err, "xport_tcp_open: bad configuration");
        return ERR_USAGE;
    }
    xport_conn_name(lname, left, &cfg->peers[left]);
    xport_conn_name(rname, right, pr);
    xport_conn_hello_frame(&self, hello);

    /* Connect right and say who we are; the right's listener has been open
     * since before it registered, so a refusal here is a real failure. */
    rc = net_connect(pr->addr, pr->port, cfg->timeout, &fd_r, e);
    if (rc != 0) {
        err_say(err, "right neighbour %s: %s", rname, e);
        goto out;
    }
    rc = net_send_all(fd_r, hello, sizeof hello, NULL, cfg->timeout, rname, e);
    if (rc != 0) {
        err_say(err, "right neighbour %s: %s", rname, e);
        goto out;
    }
    /* Accept left, check it, answer it. */
    wanted = calloc((size_t)k, 1);
    if (!wanted) {
        rc = -ENOMEM;
        err_say(err, "xport_tcp: out of memory");
        goto out;
    }
    wanted[left] = 1;
    rc = xport_conn_accept(&self, cfg->lfd, wanted, deadline, &fd_l, &who, e);
    if (rc == ERR_TIMEOUT)
        err_say(err, "left neighbour %s never connected within %.1f s", lname, cfg->timeout);
    else if (rc != 0)
        err_say(err, "waiting for left neighbour %s: %s", lname, e);
    if (rc != 0)
        goto out;
    rc = net_send_all(fd_l, hello, sizeof hello, NULL, cfg->timeout, lname, e);
    if (rc != 0) {
        err_say(err, "left neighbour %s: %s", lname, e);
        goto out;
    }
    /* The right's answer proves it is the rank the table said. */
    rc = xport_conn_read_frame(fd_r, cfg->timeout, rname, &h, pay, e);
    if (rc == 0)
        rc = xport_conn_hello_check(&self, &h, pay, right, why);
    else
        snprintf(why, sizeof why, "%s", e);
    if (rc != 0) {
        err_say(err, "right neighbour %s: %s", rname, why);
        goto out;
    }
    rc = xport_tcp_attach(out, cfg, fd_l, fd_r, err);
    fd_l = fd_r = -1;           /* attach owns them now, also on failure */
out:
    free(wanted);
    if (fd_l >= 0)
        close(fd_l);
    if (fd_r >= 0)
        close(fd_r);
    return rc;
}

static const struct xport_ops tcp_ops;

int xport_tcp_attach(struct xport_tcp **out, const struct xport_tcp_cfg *cfg,
                     int left_fd, int right_fd, char *err)
{
    int k = cfg->world;
    struct xport_tcp *t = calloc(1, sizeof *t);

    *out = NULL;
    if (!t) {
        close(left_fd);
        close(right_fd);
        err_say(err, "xport_tcp: out of memory");
        return -ENOMEM;
    }
    t->base.ops = &tcp_ops;
    t->rank = cfg->rank;
    t->world = k;
    t->left = (cfg->rank + k - 1) % k;
    t->right = (cfg->rank + 1) % k;
    t->fd_left = left_fd;
    t->fd_right = right_fd;
    xport_conn_name(t->name_left, t->left, &cfg->peers[t->left]);
    xport_conn_name(t->name_right, t->right, &cfg->peers[t->right]);
    t->link = cfg->link;
    t->timeout = cfg->timeout;
    t->self = (struct xport_conn_self){ cfg->rank, cfg->world, cfg->hello, cfg->timeout };
    t->in_sync = 1;
    t->left_ok = t->right_ok = 1;
    *out = t;
    return 0;
}

struct xport *xport_tcp_base(struct xport_tcp *t)
{
    return &t->base;
}

void xport_tcp_close(struct xport_tcp *t)
{
    if (!t)
        return;
    close(t->fd_left);
    close(t->fd_right);
    free(t);
}

/* ----------------------------------------------------- abort protocol */

/* send_abort: one ABORT frame carrying the claim to one neighbour. */
static int send_abort(struct xport_tcp *t, int fd, const struct xport_claim *c, double deadline,
                      const char *peer)
{
    return xport_conn_send_abort(fd, &t->self, t->seq, c->lost, c->text, deadline, peer);
}

/* finish_frame: the rest of the CHUNK frame being sent to the right, so
 * that an ABORT after it is read as a frame. */
static int finish_frame(struct xport_tcp *t, double deadline)
{
    int rc = 0;

    if (!t->in_step)
        return 0;
    if (t->hout_done < PROTO_HEADER_SIZE)
        rc = xport_conn_send_by(t->fd_right, t->head + t->hout_done,
                     PROTO_HEADER_SIZE - t->hout_done, deadline, t->name_right);
    if (rc == 0)
        rc = xport_conn_send_by(t->fd_right, t->sbuf + t->sdone, t->sbytes - t->sdone, deadline,
                     t->name_right);
    if (rc == 0) {
        t->hout_done = PROTO_HEADER_SIZE;
        t->sdone = t->sbytes;
    }
    return rc;
}

/* tell_right: relay the claim to the right, unless the right is the rank
 * lost (or a suspect: it may not be reading). */
static void tell_right(struct xport_tcp *t, const struct xport_claim *c, double deadline)
{
    if (!t->right_ok || c->lost == t->right)
        return;
    if (finish_frame(t, deadline) != 0 ||
        send_abort(t, t->fd_right, c, deadline, t->name_right) != 0)
        t->right_ok = 0;
}


/* listen: until the deadline or the left's EOF, read both neighbours for
 * ABORTs (see xport_tcp.h, FAULTS, 3). The left is read from where its
 * stream stands: inside a header, or inside a CHUNK payload to skip. */
static void listen_news(struct xport_tcp *t, struct xport_claim *c, int left_sync, double until)
{
    struct xport_reader rd[2];
    int nrd = 0, il = -1;

    memset(rd, 0, sizeof rd);
    if (left_sync) {
        il = nrd++;
        rd[il].fd = t->fd_left;
        rd[il].from = t->left;
        if (t->in_step && t->hin_done < PROTO_HEADER_SIZE) {
            memcpy(rd[il].hdr, t->hdr_in, t->hin_done);
            rd[il].hgot = t->hin_done;
        } else if (t->in_step) {
            rd[il].skip = t->rbytes - t->rdone;
        }
    }
    if (!(c->kind == XPORT_CLAIM_CERTAIN && c->lost == t->right)) {
        rd[nrd].fd = t->fd_right;
        rd[nrd].from = t->right;
        nrd++;
    }
    for (;;) {
        struct pollfd p[2];
        double now = clock_now();
        int alive = 0;

        /* Listening ends when the left closes: whatever it had to say is in. */
        if (now >= until || (il >= 0 && rd[il].dead))
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
            while (xport_reader_feed(&rd[i], t->world)) {
                if (xport_claim_adopt(c, t->world, &rd[i]))
                    tell_right(t, c, until);
            }
        }
    }
}

/* fail_claim: run the abort protocol for claim c, record the final line. */
static int fail_claim(struct xport_tcp *t, int rc, struct xport_claim *c, char *err)
{
    double t0 = clock_now();
    int left_sync = t->in_sync;

    /* Tell: the right first (the ring's direction), or the left when the
     * right is the rank lost. */
    tell_right(t, c, t0 + t->timeout / 4);
    if (c->lost == t->right && t->left != t->right && t->left_ok &&
        c->kind != XPORT_CLAIM_RELAYED) {
        if (send_abort(t, t->fd_left, c, t0 + t->timeout / 4, t->name_left) != 0)
            t->left_ok = 0;
    }
    /* Listen for better news. A certain loss of the left needs none. */
    if (!(c->kind == XPORT_CLAIM_CERTAIN && c->lost == t->left))
        listen_news(t, c, left_sync, t0 + t->timeout / 2);

    if (c->kind == XPORT_CLAIM_RELAYED)
        err_say(t->failed_msg, "rank %d reported: %s", c->from, c->text);
    else
        err_say(t->failed_msg, "%s", c->text);
    /* Strip the "(seen by rank R)" we add for others: we are R. */
    if (c->kind != XPORT_CLAIM_RELAYED) {
        char *seen = strstr(t->failed_msg, " (seen by rank ");
        if (seen)
            *seen = '\0';
    }
    t->failed_rc = rc;
    t->in_step = 0;
    err_say(err, "%s", t->failed_msg);
    return rc;
}

/* own_claim: a claim of ours about rank `lost`. */
__attribute__((format(printf, 5, 6)))
static void own_claim(struct xport_tcp *t, struct xport_claim *c, enum xport_claim_kind kind,
                      int lost, const char *fmt, ...)
{
    char why[ERR_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->lost = lost;
    c->from = t->rank;
    snprintf(c->text, sizeof c->text, "lost %s: %s (seen by rank %d)", name_of(t, lost), why,
             t->rank);
}

/* fail_io: a net_* call of a step failed with rc; recv_pending: our
 * receive from the left was not complete. Work out the claim (FAULTS, 1). */
static int fail_io(struct xport_tcp *t, int rc, int recv_pending, char *err)
{
    struct xport_claim c;
    int pl = xport_conn_probe(t->fd_left), pr = xport_conn_probe(t->fd_right);
    int left_gone = pl == XPORT_PROBE_EOF || pl == XPORT_PROBE_ERR;
    int right_gone = pr == XPORT_PROBE_EOF || pr == XPORT_PROBE_ERR;

    if (rc == ERR_TIMEOUT) {
        own_claim(t, &c, XPORT_CLAIM_SUSPECT, recv_pending ? t->left : t->right,
                  "no progress for %.1f s (--timeout)", t->timeout);
    } else if (rc == ERR_EOF || (left_gone && rc != -EPIPE)) {
        own_claim(t, &c, XPORT_CLAIM_CERTAIN, t->left, "%s",
                  rc == ERR_EOF || pl == XPORT_PROBE_EOF ? "connection closed" : err_str(rc));
    } else if (rc == -EPIPE || right_gone) {
        own_claim(t, &c, XPORT_CLAIM_CERTAIN, t->right, "%s",
                  rc == -EPIPE ? "connection closed" : err_str(rc));
    } else {
        own_claim(t, &c, XPORT_CLAIM_CERTAIN, recv_pending ? t->left : t->right, "%s", err_str(rc));
    }
    if (c.lost == t->left && c.kind == XPORT_CLAIM_CERTAIN)
        t->in_sync = 0;
    return fail_claim(t, rc, &c, err);
}

/* fail_frame: the left sent something that is not the expected CHUNK;
 * after a bad header its stream cannot be followed any more. */
__attribute__((format(printf, 4, 5)))
static int fail_frame(struct xport_tcp *t, int rc, char *err, const char *fmt, ...)
{
    char why[ERR_LEN];
    struct xport_claim c;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    own_claim(t, &c, XPORT_CLAIM_CERTAIN, t->left, "sent a bad frame at step %llu: %s",
              (unsigned long long)t->seq, why);
    t->in_sync = 0;
    return fail_claim(t, rc, &c, err);
}

/* --------------------------------------------------------------- steps */

static int failed(struct xport_tcp *t, char *err)
{
    err_say(err, "%s", t->failed_msg);
    return t->failed_rc;
}

/* moved: the link counters' growth since (out0, in0). */
static void moved(const struct xport_tcp *t, uint64_t out0, uint64_t in0, size_t *out,
                  size_t *in)
{
    *out = (size_t)(t->link->bytes_out - out0);
    *in = (size_t)(t->link->bytes_in - in0);
}

/* check_header: the left's header must be CHUNK(left, seq, rchunk, rbytes);
 * an ABORT is the news of a failure elsewhere. */
static int check_header(struct xport_tcp *t, char *err)
{
    struct proto_limits lim = { t->rbytes > PROTO_TEXT_MAX ? t->rbytes : PROTO_TEXT_MAX,
                                (uint32_t)t->world, 0 };
    struct proto_header h;
    int rc = proto_header_decode(t->hdr_in, &lim, &h);

    if (rc == 0 && h.rank != (uint32_t)t->left)
        rc = fail_frame(t, ERR_PROTO_RANK, err, "a frame from rank %u on rank %d's connection",
                        h.rank, t->left);
    else if (rc == ERR_PROTO_LENGTH || rc == ERR_PROTO_SIZE)
        rc = fail_frame(t, rc, err, "%s (%s of %llu bytes)", err_str(rc),
                        proto_type_name(h.type), (unsigned long long)h.length);
    else if (rc != 0)
        rc = fail_frame(t, rc, err, "%s", err_str(rc));
    else if (h.type == PROTO_ABORT || h.type == PROTO_ERROR) {
        char text[PROTO_TEXT_MAX + 1];
        struct xport_claim c;
        rc = net_recv_all(t->fd_left, text, (size_t)h.length, NULL, t->timeout,
                          t->name_left, NULL);
        text[rc == 0 ? h.length : 0] = '\0';
        if (rc == 0 && proto_text_check((const uint8_t *)text, (size_t)h.length) != 0)
            rc = ERR_PROTO_FIELD;
        if (rc != 0)
            return fail_io(t, rc, 1, err);
        t->hin_done = 0;          /* the stream is at a frame boundary again */
        t->rbytes = t->rdone = 0;
        memset(&c, 0, sizeof c);
        c.kind = XPORT_CLAIM_RELAYED;
        c.from = t->left;
        c.lost = h.type == PROTO_ABORT && h.aux < (uint64_t)t->world ? (int)h.aux : t->left;
        if (h.type == PROTO_ERROR)
            snprintf(c.text, sizeof c.text, "error: %s", text);
        else
            snprintf(c.text, sizeof c.text, "%s", text);
        return fail_claim(t, -ECONNABORTED, &c, err);
    } else if (h.type != PROTO_CHUNK)
        rc = fail_frame(t, ERR_PROTO_TYPE, err, "%s instead of CHUNK", proto_type_name(h.type));
    else if (h.step != t->seq)
        rc = fail_frame(t, ERR_PROTO_FIELD, err, "CHUNK for step %llu",
                        (unsigned long long)h.step);
    else if (h.aux != t->rchunk)
        rc = fail_frame(t, ERR_PROTO_FIELD, err, "chunk %llu, expected chunk %u",
                        (unsigned long long)h.aux, t->rchunk);
    else if (h.length != t->rbytes)
        rc = fail_frame(t, ERR_PROTO_SIZE, err, "%llu bytes for chunk %u, expected %zu",
                        (unsigned long long)h.length, t->rchunk, t->rbytes);
    if (rc != 0)
        return rc;
    t->seq++;
    return 0;
}

static int tcp_begin(struct xport *xb, uint32_t send_chunk, const void *sbuf, size_t sbytes,
                     uint32_t recv_chunk, size_t rbytes, char *err)
{
    struct xport_tcp *t = (struct xport_tcp *)xb;
    struct proto_header h;
    uint64_t out0 = t->link->bytes_out, in0 = t->link->bytes_in;
    size_t first = sbytes < HEAD_MAX ? sbytes : HEAD_MAX, sent;
    int rc;

    if (t->failed_rc)
        return failed(t, err);
    h = proto_header_make(PROTO_CHUNK, (uint32_t)t->rank, (uint32_t)t->world, t->seq,
                          send_chunk, sbytes);
    proto_header_encode(&h, t->head);
    memcpy(t->head + PROTO_HEADER_SIZE, sbuf, first);
    t->in_step = 1;
    t->sbuf = sbuf;
    t->sbytes = sbytes;
    t->rbytes = rbytes;
    t->sdone = t->rdone = 0;
    t->rchunk = recv_chunk;
    /* EMULATED LATENCY: what a step sends was received (and reduced) in
     * the step before, so its transmission starts now, in real time, and
     * pays the link's latency once: forget the lag the link carried over
     * from the last send, which would otherwise make this one look like
     * its continuation (link.h, BLOCKING SENDERS). */
    link_send_restart(t->link);
    rc = net_sendrecv(t->fd_right, t->head, PROTO_HEADER_SIZE + first, t->name_right,
                      t->fd_left, t->hdr_in, PROTO_HEADER_SIZE, t->name_left,
                      t->link, t->timeout, NULL);
    moved(t, out0, in0, &sent, &t->hin_done);
    t->hout_done = sent < PROTO_HEADER_SIZE ? sent : PROTO_HEADER_SIZE;
    t->sdone = sent - t->hout_done;
    if (rc != 0)
        return fail_io(t, rc, t->hin_done < PROTO_HEADER_SIZE, err);
    return check_header(t, err);
}

static int tcp_recv(struct xport *xb, void *dst, size_t len, char *err)
{
    struct xport_tcp *t = (struct xport_tcp *)xb;
    uint64_t out0 = t->link->bytes_out, in0 = t->link->bytes_in;
    size_t target, sent, got;
    int rc;

    if (t->failed_rc)
        return failed(t, err);
    if (len > t->rbytes - t->rdone) {
        err_say(err, "xport_tcp: receive past the chunk (%zu of %zu left)", len, t->rbytes - t->rdone);
        return ERR_USAGE;
    }
    /* The send keeps pace with the receive: as far as the receive will be. */
    target = t->rdone + len < t->sbytes ? t->rdone + len : t->sbytes;
    if (target < t->sdone)
        target = t->sdone;
    rc = net_sendrecv(t->fd_right, t->sbuf + t->sdone, target - t->sdone, t->name_right,
                      t->fd_left, dst, len, t->name_left, t->link, t->timeout, NULL);
    moved(t, out0, in0, &sent, &got);
    t->sdone += sent;
    t->rdone += got;
    if (rc != 0)
        return fail_io(t, rc, got < len, err);
    return 0;
}

static int tcp_end(struct xport *xb, char *err)
{
    struct xport_tcp *t = (struct xport_tcp *)xb;
    uint64_t out0 = t->link->bytes_out, in0 = t->link->bytes_in;
    size_t sent, got;
    int rc = 0;

    if (t->failed_rc)
        return failed(t, err);
    if (t->rdone != t->rbytes) {
        err_say(err, "xport_tcp: step ended with %zu of %zu bytes received", t->rdone, t->rbytes);
        return ERR_USAGE;
    }
    if (t->sdone < t->sbytes)
        rc = net_send_all(t->fd_right, t->sbuf + t->sdone, t->sbytes - t->sdone, t->link,
                          t->timeout, t->name_right, NULL);
    moved(t, out0, in0, &sent, &got);
    t->sdone += sent;
    if (rc != 0)
        return fail_io(t, rc, 0, err);
    t->in_step = 0;
    return 0;
}

static const struct xport_ops tcp_ops = { tcp_begin, tcp_recv, tcp_end };

int xport_tcp_abort(struct xport_tcp *t, const char *why)
{
    double deadline = clock_now() + t->timeout / 4;
    struct xport_claim c;

    if (t->failed_rc)
        return 0;
    memset(&c, 0, sizeof c);
    c.kind = XPORT_CLAIM_CERTAIN;
    c.lost = t->rank;
    snprintf(c.text, sizeof c.text, "rank %d failed: %s", t->rank, why);
    if (t->right_ok && (finish_frame(t, deadline) != 0 ||
                        send_abort(t, t->fd_right, &c, deadline, t->name_right) != 0))
        t->right_ok = 0;
    if (t->left != t->right && t->left_ok &&
        send_abort(t, t->fd_left, &c, deadline, t->name_left) != 0)
        t->left_ok = 0;
    t->failed_rc = -ECONNABORTED;
    err_say(t->failed_msg, "%s", c.text);
    return 0;
}
