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
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "log.h"
#include "net.h"
#include "rendezvous.h"

#define NAME_LEN     (NET_ADDR_LEN + 24)   /* "rank 65535 (host:port)" */
#define HELLO_FRAME  (PROTO_HEADER_SIZE + PROTO_HELLO_SIZE)
#define ABORT_PIECE  (64u << 10)   /* abort-mode sends check their deadline this often */
#define HEAD_MAX     (64u << 10)   /* payload bytes sent with the header (EMULATED LATENCY) */

/* --------------------------------------------------------------- state */

enum claim_kind {
    CLAIM_NONE,
    CLAIM_SUSPECT,    /* a timeout: the neighbour we waited on, maybe wrongly */
    CLAIM_CERTAIN,    /* a closed or reset connection, a bad frame */
    CLAIM_RELAYED,    /* a neighbour's ABORT */
};

struct claim {
    enum claim_kind kind;
    int lost;                           /* the rank lost */
    int from;                           /* RELAYED: the neighbour that said so */
    char text[PROTO_TEXT_MAX + 1];      /* what our ABORT carries */
};

struct xport_tcp {
    struct xport base;                  /* first: the xport.h interface */
    int rank, world, left, right;
    int fd_left, fd_right;
    char name_left[NAME_LEN], name_right[NAME_LEN];   /* "rank 2 (127.0.0.1:40123)" */
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

__attribute__((format(printf, 2, 3)))
static void say(char *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
}

/* peer_name: "rank R (host:port)", the address its listener has. */
static void peer_name(char *out, int rank, const struct proto_peer *p)
{
    if (strchr(p->addr, ':'))
        snprintf(out, NAME_LEN, "rank %d ([%s]:%u)", rank, p->addr, (unsigned)p->port);
    else
        snprintf(out, NAME_LEN, "rank %d (%s:%u)", rank, p->addr, (unsigned)p->port);
}

static const char *name_of(const struct xport_tcp *t, int rank)
{
    return rank == t->left ? t->name_left : t->name_right;
}

/* --------------------------------------------------------------- set-up */

static void hello_frame(const struct xport_tcp_cfg *cfg, uint8_t *out)
{
    struct proto_header h = proto_header_make(PROTO_HELLO, (uint32_t)cfg->rank,
                                              (uint32_t)cfg->world, 0, 0, PROTO_HELLO_SIZE);
    proto_header_encode(&h, out);
    proto_hello_encode(&cfg->hello, out + PROTO_HEADER_SIZE);
}

/* read_frame: one small frame (HELLO or ERROR) from fd. OUT: *h, and the
 * payload (NUL-terminated for text) in pay[PROTO_TEXT_MAX + 1]. */
static int read_frame(int fd, double idle, const char *peer, struct proto_header *h,
                      uint8_t *pay, char *err)
{
    struct proto_limits lim = { PROTO_TEXT_MAX, 0, 0 };
    uint8_t hb[PROTO_HEADER_SIZE];
    int rc = net_recv_all(fd, hb, sizeof hb, NULL, idle, peer, err);

    if (rc != 0)
        return rc;
    rc = proto_header_decode(hb, &lim, h);
    if (rc != 0) {
        say(err, "%s: not a psring ring peer (%s)", peer, err_str(rc));
        return rc;
    }
    rc = net_recv_all(fd, pay, (size_t)h->length, NULL, idle, peer, err);
    if (rc == 0)
        pay[h->length] = '\0';
    return rc;
}

/* hello_check: is this frame the HELLO of rank `want` of our job? A reason
 * in why (ERR_LEN) when not. */
static int hello_check(const struct xport_tcp_cfg *cfg, const struct proto_header *h,
                       const uint8_t *pay, int want, char *why)
{
    const struct proto_hello *me = &cfg->hello;
    struct proto_hello o;
    char diff[ERR_LEN];

    if (h->type == PROTO_ERROR) {
        say(why, "answered ERROR: %s", (const char *)pay);
        return ERR_MISMATCH;
    }
    if (h->type != PROTO_HELLO) {
        say(why, "sent %s instead of HELLO", proto_type_name(h->type));
        return ERR_PROTO_TYPE;
    }
    if (h->world != (uint32_t)cfg->world) {
        say(why, "is in a ring of %u ranks, not %d", h->world, cfg->world);
        return ERR_MISMATCH;
    }
    if (h->rank != (uint32_t)want) {
        say(why, "says it is rank %u, expected rank %d", h->rank, want);
        return ERR_MISMATCH;
    }
    if (proto_hello_decode(pay, (size_t)h->length, &o) != 0) {
        say(why, "sent a malformed HELLO");
        return ERR_PROTO_FIELD;
    }
    if (rdv_hello_diff(&o, me, diff) == 0)
        return 0;
    say(why, "is another job: %s", diff);
    return ERR_MISMATCH;
}

/* refuse: tell a connection why it is not welcome, then close it. */
static void refuse(int fd, const struct xport_tcp_cfg *cfg, const char *why)
{
    uint8_t buf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
    size_t n = strlen(why) < PROTO_TEXT_MAX ? strlen(why) : PROTO_TEXT_MAX;
    struct proto_header h = proto_header_make(PROTO_ERROR, (uint32_t)cfg->rank,
                                              (uint32_t)cfg->world, 0,
                                              (uint64_t)(int64_t)ERR_MISMATCH, n);
    proto_header_encode(&h, buf);
    memcpy(buf + PROTO_HEADER_SIZE, why, n);
    (void)net_send_all(fd, buf, PROTO_HEADER_SIZE + n, NULL, 1.0, "peer", NULL);
    close(fd);
}

/* accept_left: accept connections until one is our left neighbour with a
 * good HELLO, refusing the others, until the deadline. */
static int accept_left(const struct xport_tcp_cfg *cfg, int left, const char *lname,
                       double deadline, int *out, char *err)
{
    uint8_t pay[PROTO_TEXT_MAX + 1];
    char peer[NET_ADDR_LEN], why[ERR_LEN], e[ERR_LEN];
    struct proto_header h;
    int fd = -1, rc;

    why[0] = '\0';
    for (;;) {
        double left_s = deadline - clock_now();
        if (left_s <= 0) {
            say(err, "left neighbour %s never connected within %.1f s", lname, cfg->timeout);
            return ERR_TIMEOUT;
        }
        rc = net_accept(cfg->lfd, left_s, &fd, peer, e);
        if (rc == ERR_TIMEOUT)
            continue;           /* the deadline check above words the message */
        if (rc != 0) {
            say(err, "waiting for left neighbour %s: %s", lname, e);
            return rc;
        }
        rc = read_frame(fd, cfg->timeout, peer, &h, pay, e);
        if (rc == 0 && (rc = hello_check(cfg, &h, pay, left, why)) == 0) {
            *out = fd;
            return 0;
        }
        if (rc != 0 && why[0] == '\0')
            snprintf(why, sizeof why, "%s", e);
        log_msg("refused a connection from %s on the data port: %s", peer, why);
        refuse(fd, cfg, why);
        why[0] = '\0';
    }
}

int xport_tcp_open(struct xport_tcp **out, const struct xport_tcp_cfg *cfg, char *err)
{
    int k = cfg->world, left = (cfg->rank + k - 1) % k, right = (cfg->rank + 1) % k;
    const struct proto_peer *pr = &cfg->peers[right];
    char lname[NAME_LEN], rname[NAME_LEN], e[ERR_LEN], why[ERR_LEN] = "";
    uint8_t hello[HELLO_FRAME], pay[PROTO_TEXT_MAX + 1];
    double deadline = clock_now() + cfg->timeout;
    struct proto_header h;
    int fd_r = -1, fd_l = -1, rc;

    *out = NULL;
    if (k < 2 || cfg->rank < 0 || cfg->rank >= k || !(cfg->timeout > 0)) {
        say(err, "xport_tcp_open: bad configuration");
        return ERR_USAGE;
    }
    peer_name(lname, left, &cfg->peers[left]);
    peer_name(rname, right, pr);
    hello_frame(cfg, hello);

    /* Connect right and say who we are; the right's listener has been open
     * since before it registered, so a refusal here is a real failure. */
    rc = net_connect(pr->addr, pr->port, cfg->timeout, &fd_r, e);
    if (rc != 0) {
        say(err, "right neighbour %s: %s", rname, e);
        goto out;
    }
    rc = net_send_all(fd_r, hello, sizeof hello, NULL, cfg->timeout, rname, e);
    if (rc != 0) {
        say(err, "right neighbour %s: %s", rname, e);
        goto out;
    }
    /* Accept left, check it, answer it. */
    rc = accept_left(cfg, left, lname, deadline, &fd_l, err);
    if (rc != 0)
        goto out;
    rc = net_send_all(fd_l, hello, sizeof hello, NULL, cfg->timeout, lname, e);
    if (rc != 0) {
        say(err, "left neighbour %s: %s", lname, e);
        goto out;
    }
    /* The right's answer proves it is the rank the table said. */
    rc = read_frame(fd_r, cfg->timeout, rname, &h, pay, e);
    if (rc == 0)
        rc = hello_check(cfg, &h, pay, right, why);
    else
        snprintf(why, sizeof why, "%s", e);
    if (rc != 0) {
        say(err, "right neighbour %s: %s", rname, why);
        goto out;
    }
    rc = xport_tcp_attach(out, cfg, fd_l, fd_r, err);
    fd_l = fd_r = -1;           /* attach owns them now, also on failure */
out:
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
        say(err, "xport_tcp: out of memory");
        return -ENOMEM;
    }
    t->base.ops = &tcp_ops;
    t->rank = cfg->rank;
    t->world = k;
    t->left = (cfg->rank + k - 1) % k;
    t->right = (cfg->rank + 1) % k;
    t->fd_left = left_fd;
    t->fd_right = right_fd;
    peer_name(t->name_left, t->left, &cfg->peers[t->left]);
    peer_name(t->name_right, t->right, &cfg->peers[t->right]);
    t->link = cfg->link;
    t->timeout = cfg->timeout;
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

/* send_by: send len bytes on fd before `deadline`, unpaced (SIMPLIFICATIONS). */
static int send_by(int fd, const void *buf, size_t len, double deadline, const char *peer)
{
    const uint8_t *p = buf;

    while (len > 0) {
        size_t n = len < ABORT_PIECE ? len : ABORT_PIECE;
        double left_s = deadline - clock_now();
        int rc;
        if (left_s <= 0)
            return ERR_TIMEOUT;
        rc = net_send_all(fd, p, n, NULL, left_s, peer, NULL);
        if (rc != 0)
            return rc;
        p += n;
        len -= n;
    }
    return 0;
}

/* send_abort: one ABORT frame carrying the claim to one neighbour. */
static int send_abort(struct xport_tcp *t, int fd, const struct claim *c, double deadline,
                      const char *peer)
{
    uint8_t buf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
    size_t n = strlen(c->text);
    struct proto_header h = proto_header_make(PROTO_ABORT, (uint32_t)t->rank,
                                              (uint32_t)t->world, t->seq, (uint64_t)c->lost, n);
    proto_header_encode(&h, buf);
    memcpy(buf + PROTO_HEADER_SIZE, c->text, n);
    return send_by(fd, buf, PROTO_HEADER_SIZE + n, deadline, peer);
}

/* finish_frame: the rest of the CHUNK frame being sent to the right, so
 * that an ABORT after it is read as a frame. */
static int finish_frame(struct xport_tcp *t, double deadline)
{
    int rc = 0;

    if (!t->in_step)
        return 0;
    if (t->hout_done < PROTO_HEADER_SIZE)
        rc = send_by(t->fd_right, t->head + t->hout_done,
                     PROTO_HEADER_SIZE - t->hout_done, deadline, t->name_right);
    if (rc == 0)
        rc = send_by(t->fd_right, t->sbuf + t->sdone, t->sbytes - t->sdone, deadline,
                     t->name_right);
    if (rc == 0) {
        t->hout_done = PROTO_HEADER_SIZE;
        t->sdone = t->sbytes;
    }
    return rc;
}

/* tell_right: relay the claim to the right, unless the right is the rank
 * lost (or a suspect: it may not be reading). */
static void tell_right(struct xport_tcp *t, const struct claim *c, double deadline)
{
    if (!t->right_ok || c->lost == t->right)
        return;
    if (finish_frame(t, deadline) != 0 ||
        send_abort(t, t->fd_right, c, deadline, t->name_right) != 0)
        t->right_ok = 0;
}

/* A reader of one connection while listening: it skips CHUNK payloads and
 * hands over ABORT texts. */
struct reader {
    int fd, from, dead;
    uint8_t hdr[PROTO_HEADER_SIZE];
    size_t hgot;
    uint64_t skip;                      /* payload bytes to throw away */
    struct proto_header h;
    int in_text;
    char text[PROTO_TEXT_MAX + 1];
    size_t tgot;
};

/* reader_feed: read what is there. Returns 1 when an ABORT (or ERROR)
 * text is complete in r->text / r->h, 0 otherwise; r->dead at EOF, on an
 * error or on a frame that makes no sense. */
static int reader_feed(struct reader *r, int world)
{
    uint8_t scratch[16384];
    ssize_t got;

    for (;;) {
        if (r->skip > 0) {
            size_t want = r->skip < sizeof scratch ? (size_t)r->skip : sizeof scratch;
            got = recv(r->fd, scratch, want, MSG_DONTWAIT);
            if (got > 0)
                r->skip -= (uint64_t)got;
        } else if (r->in_text) {
            size_t want = (size_t)r->h.length - r->tgot;
            got = want ? recv(r->fd, r->text + r->tgot, want, MSG_DONTWAIT) : 0;
            if (want == 0 || got > 0) {
                r->tgot += want ? (size_t)got : 0;
                if (r->tgot == r->h.length) {
                    r->text[r->tgot] = '\0';
                    r->in_text = 0;
                    r->tgot = 0;
                    r->hgot = 0;
                    return 1;
                }
                continue;
            }
        } else {
            got = recv(r->fd, r->hdr + r->hgot, PROTO_HEADER_SIZE - r->hgot, MSG_DONTWAIT);
            if (got > 0) {
                r->hgot += (size_t)got;
                if (r->hgot == PROTO_HEADER_SIZE) {
                    struct proto_limits lim = { UINT64_MAX, (uint32_t)world, 0 };
                    r->hgot = 0;
                    if (proto_header_decode(r->hdr, &lim, &r->h) != 0 ||
                        r->h.rank != (uint32_t)r->from) {
                        r->dead = 1;
                        return 0;
                    }
                    if (r->h.type == PROTO_ABORT || r->h.type == PROTO_ERROR)
                        r->in_text = 1;
                    else if (r->h.type == PROTO_CHUNK)
                        r->skip = r->h.length;
                    else {
                        r->dead = 1;
                        return 0;
                    }
                }
            }
        }
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            r->dead = 1;
            return 0;
        }
        if (got < 0)
            return 0;           /* nothing more for now */
    }
}

/* adopt: a neighbour's ABORT replaces our claim when we blamed that very
 * neighbour (it was alive to tell us), when ours was only a suspicion, or
 * when ours came from that neighbour too (its later word wins). */
static int adopt(struct xport_tcp *t, struct claim *c, const struct reader *r)
{
    if (r->h.type != PROTO_ABORT || r->h.aux >= (uint64_t)t->world)
        return 0;
    if (!(c->lost == r->from || c->kind == CLAIM_SUSPECT ||
          (c->kind == CLAIM_RELAYED && c->from == r->from)))
        return 0;
    if (c->kind == CLAIM_RELAYED && c->from == r->from && strcmp(c->text, r->text) == 0)
        return 0;               /* the same news again */
    c->kind = CLAIM_RELAYED;
    c->from = r->from;
    c->lost = (int)r->h.aux;
    snprintf(c->text, sizeof c->text, "%s", r->text);
    return 1;
}

/* listen: until the deadline or the left's EOF, read both neighbours for
 * ABORTs (see xport_tcp.h, FAULTS, 3). The left is read from where its
 * stream stands: inside a header, or inside a CHUNK payload to skip. */
static void listen_news(struct xport_tcp *t, struct claim *c, int left_sync, double until)
{
    struct reader rd[2];
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
    if (!(c->kind == CLAIM_CERTAIN && c->lost == t->right)) {
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
            while (reader_feed(&rd[i], t->world)) {
                if (adopt(t, c, &rd[i]))
                    tell_right(t, c, until);
            }
        }
    }
}

/* fail_claim: run the abort protocol for claim c, record the final line. */
static int fail_claim(struct xport_tcp *t, int rc, struct claim *c, char *err)
{
    double t0 = clock_now();
    int left_sync = t->in_sync;

    /* Tell: the right first (the ring's direction), or the left when the
     * right is the rank lost. */
    tell_right(t, c, t0 + t->timeout / 4);
    if (c->lost == t->right && t->left != t->right && t->left_ok &&
        c->kind != CLAIM_RELAYED) {
        if (send_abort(t, t->fd_left, c, t0 + t->timeout / 4, t->name_left) != 0)
            t->left_ok = 0;
    }
    /* Listen for better news. A certain loss of the left needs none. */
    if (!(c->kind == CLAIM_CERTAIN && c->lost == t->left))
        listen_news(t, c, left_sync, t0 + t->timeout / 2);

    if (c->kind == CLAIM_RELAYED)
        say(t->failed_msg, "rank %d reported: %s", c->from, c->text);
    else
        say(t->failed_msg, "%s", c->text);
    /* Strip the "(seen by rank R)" we add for others: we are R. */
    if (c->kind != CLAIM_RELAYED) {
        char *seen = strstr(t->failed_msg, " (seen by rank ");
        if (seen)
            *seen = '\0';
    }
    t->failed_rc = rc;
    t->in_step = 0;
    say(err, "%s", t->failed_msg);
    return rc;
}

/* own_claim: a claim of ours about rank `lost`. */
__attribute__((format(printf, 5, 6)))
static void own_claim(struct xport_tcp *t, struct claim *c, enum claim_kind kind, int lost,
                      const char *fmt, ...)
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

/* probe: what a connection looks like now, without consuming anything. */
enum { PROBE_IDLE, PROBE_DATA, PROBE_EOF, PROBE_ERR };
static int probe(int fd)
{
    char ch;
    ssize_t r = recv(fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);

    if (r > 0)
        return PROBE_DATA;
    if (r == 0)
        return PROBE_EOF;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? PROBE_IDLE : PROBE_ERR;
}

/* fail_io: a net_* call of a step failed with rc; recv_pending: our
 * receive from the left was not complete. Work out the claim (FAULTS, 1). */
static int fail_io(struct xport_tcp *t, int rc, int recv_pending, char *err)
{
    struct claim c;
    int pl = probe(t->fd_left), pr = probe(t->fd_right);
    int left_gone = pl == PROBE_EOF || pl == PROBE_ERR;
    int right_gone = pr == PROBE_EOF || pr == PROBE_ERR;

    if (rc == ERR_TIMEOUT) {
        own_claim(t, &c, CLAIM_SUSPECT, recv_pending ? t->left : t->right,
                  "no progress for %.1f s (--timeout)", t->timeout);
    } else if (rc == ERR_EOF || (left_gone && rc != -EPIPE)) {
        own_claim(t, &c, CLAIM_CERTAIN, t->left, "%s",
                  rc == ERR_EOF || pl == PROBE_EOF ? "connection closed" : err_str(rc));
    } else if (rc == -EPIPE || right_gone) {
        own_claim(t, &c, CLAIM_CERTAIN, t->right, "%s",
                  rc == -EPIPE ? "connection closed" : err_str(rc));
    } else {
        own_claim(t, &c, CLAIM_CERTAIN, recv_pending ? t->left : t->right, "%s", err_str(rc));
    }
    if (c.lost == t->left && c.kind == CLAIM_CERTAIN)
        t->in_sync = 0;
    return fail_claim(t, rc, &c, err);
}

/* fail_frame: the left sent something that is not the expected CHUNK;
 * after a bad header its stream cannot be followed any more. */
__attribute__((format(printf, 4, 5)))
static int fail_frame(struct xport_tcp *t, int rc, char *err, const char *fmt, ...)
{
    char why[ERR_LEN];
    struct claim c;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    own_claim(t, &c, CLAIM_CERTAIN, t->left, "sent a bad frame at step %llu: %s",
              (unsigned long long)t->seq, why);
    t->in_sync = 0;
    return fail_claim(t, rc, &c, err);
}

/* --------------------------------------------------------------- steps */

static int failed(struct xport_tcp *t, char *err)
{
    say(err, "%s", t->failed_msg);
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
        struct claim c;
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
        c.kind = CLAIM_RELAYED;
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
        say(err, "xport_tcp: receive past the chunk (%zu of %zu left)", len, t->rbytes - t->rdone);
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
        say(err, "xport_tcp: step ended with %zu of %zu bytes received", t->rdone, t->rbytes);
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
    struct claim c;

    if (t->failed_rc)
        return 0;
    memset(&c, 0, sizeof c);
    c.kind = CLAIM_CERTAIN;
    c.lost = t->rank;
    snprintf(c.text, sizeof c.text, "rank %d failed: %s", t->rank, why);
    if (t->right_ok && (finish_frame(t, deadline) != 0 ||
                        send_abort(t, t->fd_right, &c, deadline, t->name_right) != 0))
        t->right_ok = 0;
    if (t->left != t->right && t->left_ok &&
        send_abort(t, t->fd_left, &c, deadline, t->name_left) != 0)
        t->left_ok = 0;
    t->failed_rc = -ECONNABORTED;
    say(t->failed_msg, "%s", c.text);
    return 0;
}
