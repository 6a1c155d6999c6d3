/* xport_conn.c -- the TCP transport's connections between two ranks
 * (xport_conn.h says what each call does).
 *
 * Three parts: set-up (HELLO frames, their checks, the accept loop that
 * refuses strangers), the abort protocol's pieces (unpaced sends with a
 * deadline, ABORT frames, the non-blocking reader, adopting a peer's
 * claim), and opening a whole peer table (dial, accept, HELLO both ways).
 */
#include "xport_conn.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "rendezvous.h"

#define ABORT_PIECE (64u << 10)   /* abort-mode sends check their deadline this often */
#define XPORT_HELLO_POLL_S 0.01   /* the gate's wait while a HELLO is coming */

/* --------------------------------------------------------------- set-up */

void xport_conn_name(char *out, int rank, const struct proto_peer *p)
{
    if (strchr(p->addr, ':'))
        snprintf(out, XPORT_NAME_LEN, "rank %d ([%s]:%u)", rank, p->addr, (unsigned)p->port);
    else
        snprintf(out, XPORT_NAME_LEN, "rank %d (%s:%u)", rank, p->addr, (unsigned)p->port);
}

void xport_conn_hello_frame(const struct xport_conn_self *self, uint8_t *out)
{
    struct proto_header h = proto_header_make(PROTO_HELLO, (uint32_t)self->rank,
                                              (uint32_t)self->world, 0, 0, PROTO_HELLO_SIZE);
    proto_header_encode(&h, out);
    proto_hello_encode(&self->hello, out + PROTO_HEADER_SIZE);
}

int xport_conn_read_frame(int fd, double idle, const char *peer, struct proto_header *h,
                          uint8_t *pay, char *err)
{
    struct proto_limits lim = { PROTO_TEXT_MAX, 0, 0 };
    uint8_t hb[PROTO_HEADER_SIZE];
    struct net_frame f;
    int rc;

    /* FRAME DEADLINES (net.h): a trickled HELLO cannot stretch the wait. */
    net_frame_begin(&f, sizeof hb);
    rc = net_recv_frame(fd, hb, sizeof hb, NULL, idle, &f, peer, err);
    if (rc != 0)
        return rc;
    rc = proto_header_decode(hb, &lim, h);
    if (rc != 0) {
        err_say(err, "%s: not a psring ring peer (%s)", peer, err_str(rc));
        return rc;
    }
    f.len += (size_t)h->length;
    rc = net_recv_frame(fd, pay, (size_t)h->length, NULL, idle, &f, peer, err);
    if (rc == 0)
        pay[h->length] = '\0';
    return rc;
}

int xport_conn_hello_check(const struct xport_conn_self *self, const struct proto_header *h,
                           const uint8_t *pay, int want, char *why)
{
    struct proto_hello o;
    char diff[ERR_LEN];

    if (h->type == PROTO_ERROR) {
        err_say(why, "answered ERROR: %s", (const char *)pay);
        return ERR_MISMATCH;
    }
    if (h->type != PROTO_HELLO) {
        err_say(why, "sent %s instead of HELLO", proto_type_name(h->type));
        return ERR_PROTO_TYPE;
    }
    if (h->world != (uint32_t)self->world) {
        err_say(why, "is in a ring of %u ranks, not %d", h->world, self->world);
        return ERR_MISMATCH;
    }
    if (want >= 0 && h->rank != (uint32_t)want) {
        err_say(why, "says it is rank %u, expected rank %d", h->rank, want);
        return ERR_MISMATCH;
    }
    if (proto_hello_decode(pay, (size_t)h->length, &o) != 0) {
        err_say(why, "sent a malformed HELLO");
        return ERR_PROTO_FIELD;
    }
    if (rdv_hello_diff(&o, &self->hello, diff) == 0)
        return 0;
    err_say(why, "is another job: %s", diff);
    return ERR_MISMATCH;
}

void xport_conn_refuse(int fd, const struct xport_conn_self *self, const char *why)
{
    uint8_t buf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
    size_t n = strlen(why) < PROTO_TEXT_MAX ? strlen(why) : PROTO_TEXT_MAX;
    struct proto_header h = proto_header_make(PROTO_ERROR, (uint32_t)self->rank,
                                              (uint32_t)self->world, 0,
                                              (uint64_t)(int64_t)ERR_MISMATCH, n);
    proto_header_encode(&h, buf);
    memcpy(buf + PROTO_HEADER_SIZE, why, n);
    (void)net_send_all(fd, buf, PROTO_HEADER_SIZE + n, NULL, 1.0, "peer", NULL);
    close(fd);
}

void xport_conn_hellos_close(struct xport_hellos *hs)
{
    for (int i = 0; i < hs->n; i++)
        close(hs->in[i].fd);
    hs->n = 0;
}

/* hello_drop: refuse hs->in[i] (ERROR why, closed, logged), and forget it. */
static void hello_drop(const struct xport_conn_self *self, struct xport_hellos *hs, int i,
                       const char *why)
{
    log_msg("refused a connection from %s on the data port: %s", hs->in[i].peer, why);
    xport_conn_refuse(hs->in[i].fd, self, why);
    hs->in[i] = hs->in[--hs->n];
}

/* hello_feed: read what x's socket has of its HELLO, without waiting. 1
 * when the whole frame is in x->buf (header decoded into h); 0 when more
 * is to come; an err.h code with why when it cannot be one. */
static int hello_feed(struct xport_hello_in *x, struct proto_header *h, char *why)
{
    struct proto_limits lim = { PROTO_TEXT_MAX, 0, 0 };

    while (x->got < x->need) {
        char e[ERR_LEN];
        int rc = net_feed(x->fd, x->buf, &x->got, x->need, e);
        if (rc == 0)
            return 0;
        if (rc < 0) {
            err_say(why, "%s of its HELLO", e);
            return rc;
        }
        if (x->need == PROTO_HEADER_SIZE) {
            if ((rc = proto_header_decode(x->buf, &lim, h)) != 0) {
                err_say(why, "not a psring ring peer (%s)", err_str(rc));
                return rc;
            }
            x->need += (size_t)h->length;
        }
    }
    proto_header_decode(x->buf, &lim, h);       /* checked above */
    x->buf[x->need] = '\0';
    return 1;
}

int xport_conn_accept(const struct xport_conn_self *self, struct auth_gate *g,
                      struct xport_hellos *hs, const unsigned char *wanted, double deadline,
                      int *out, int *who, char *err)
{
    double due = net_frame_budget(NULL, PROTO_HEADER_SIZE + PROTO_TEXT_MAX, self->timeout);
    char peer[NET_ADDR_LEN], why[ERR_LEN], e[ERR_LEN];
    struct proto_header h;
    int fd = -1, rc, want = -1, nwant = 0;

    /* One rank wanted (a ring's left): the check names it. */
    for (int r = 0; r < self->world; r++)
        if (wanted[r]) {
            want = r;
            nwant++;
        }
    if (nwant != 1)
        want = -1;
    for (;;) {
        double now = clock_now(), until = deadline;
        /* The HELLOs on their way: take what came; refuse the late. */
        for (int i = 0; i < hs->n; i++) {
            struct xport_hello_in *x = &hs->in[i];
            why[0] = '\0';
            rc = hello_feed(x, &h, why);
            if (rc == 0 && now < x->t0 + due)
                continue;
            if (rc == 0)
                err_say(why, "its HELLO was not complete %.1f s after its AUTH (got %zu bytes; "
                    "due within --timeout plus its time at %.0f bytes/s)", now - x->t0, x->got,
                    NET_FLOOR_RATE);
            else if (rc == 1 && (rc = xport_conn_hello_check(self, &h, x->buf + PROTO_HEADER_SIZE,
                                                               want, why)) == 0) {
                if (h.rank < (uint32_t)self->world && wanted[h.rank]) {
                    *out = x->fd;
                    *who = (int)h.rank;
                    hs->in[i] = hs->in[--hs->n];
                    return 0;
                }
                err_say(why, "says it is rank %u, not a rank this one expects", h.rank);
            }
            hello_drop(self, hs, i--, why);
        }
        if (now >= deadline) {
            /* A HELLO still coming held a wanted rank's place: say so. */
            while (hs->n > 0) {
                err_say(why, "its HELLO was not complete %.1f s after its AUTH, at the end of "
                    "the wait for the ranks (got %zu bytes)", now - hs->in[0].t0, hs->in[0].got);
                hello_drop(self, hs, 0, why);
            }
            return ERR_TIMEOUT;
        }
        if (hs->n > 0 && now + XPORT_HELLO_POLL_S < until)
            until = now + XPORT_HELLO_POLL_S;
        /* Strangers stay in the gate, under its absolute deadlines. */
        rc = auth_gate_next(g, until, &fd, peer, e);
        if (rc == ERR_TIMEOUT)
            continue;
        if (rc != 0) {
            err_say(err, "%s", e);
            return rc;
        }
        if (hs->n == XPORT_HELLOS_MAX)
            hello_drop(self, hs, 0, "too many connections without a HELLO; the oldest goes");
        hs->in[hs->n] = (struct xport_hello_in){ .fd = fd, .need = PROTO_HEADER_SIZE,
                                                 .t0 = clock_now() };
        snprintf(hs->in[hs->n].peer, sizeof hs->in[hs->n].peer, "%s", peer);
        hs->n++;
    }
}

/* ----------------------------------------------------- abort protocol */

int xport_conn_send_by(int fd, const void *buf, size_t len, double deadline, const char *peer)
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

int xport_conn_send_abort(int fd, const struct xport_conn_self *self, uint64_t step, int lost,
                          const char *text, double deadline, const char *peer)
{
    uint8_t buf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
    size_t n = strlen(text) < PROTO_TEXT_MAX ? strlen(text) : PROTO_TEXT_MAX;
    struct proto_header h = proto_header_make(PROTO_ABORT, (uint32_t)self->rank,
                                              (uint32_t)self->world, step, (uint64_t)lost, n);
    proto_header_encode(&h, buf);
    memcpy(buf + PROTO_HEADER_SIZE, text, n);
    return xport_conn_send_by(fd, buf, PROTO_HEADER_SIZE + n, deadline, peer);
}

int xport_conn_probe(int fd)
{
    char ch;
    ssize_t r = recv(fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);

    if (r > 0)
        return XPORT_PROBE_DATA;
    if (r == 0)
        return XPORT_PROBE_EOF;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? XPORT_PROBE_IDLE
                                                                      : XPORT_PROBE_ERR;
}

int xport_reader_feed(struct xport_reader *r, int world)
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

int xport_claim_adopt(struct xport_claim *c, int world, const struct xport_reader *r)
{
    if (r->h.type != PROTO_ABORT || r->h.aux >= (uint64_t)world)
        return 0;
    if (!(c->lost == r->from || c->kind == XPORT_CLAIM_SUSPECT ||
          (c->kind == XPORT_CLAIM_RELAYED && c->from == r->from)))
        return 0;
    if (c->kind == XPORT_CLAIM_RELAYED && c->from == r->from && strcmp(c->text, r->text) == 0)
        return 0;               /* the same news again */
    c->kind = XPORT_CLAIM_RELAYED;
    c->from = r->from;
    c->lost = (int)r->h.aux;
    snprintf(c->text, sizeof c->text, "%s", r->text);
    return 1;
}

/* ------------------------------------------------------------ open */

static const struct auth_key *self_key(const struct xport_conn_self *self)
{
    (void)self;
    return auth_process_key();
}

/* accept_all: accept every peer of the plan we do not dial, in any order,
 * and answer each with our HELLO. fds[i] gets peer i's connection. */
static int accept_all(const struct xport_conn_self *self, int lfd, const struct proto_peer *peers,
                      const struct xport_plan *pl, const uint8_t *hello, double deadline,
                      int *fds, char *err)
{
    unsigned char *wanted = calloc((size_t)self->world, 1);
    char name[XPORT_NAME_LEN], e[ERR_LEN];
    int missing = 0, rc = 0, who, fd, i;
    struct auth_gate gate;
    struct xport_hellos hs = { 0 };

    if (!wanted || auth_gate_init(&gate, lfd, self_key(self), PROTO_AUTH_DATA, self->timeout,
                                  AUTH_GATE_CAP, "the data port") != 0) {
        free(wanted);
        err_say(err, "xport_conn: out of memory");
        return -ENOMEM;
    }
    for (i = 0; i < pl->npeers; i++)
        if (!pl->peer[i].dial) {
            wanted[pl->peer[i].rank] = 1;
            missing++;
        }
    while (missing > 0) {
        rc = xport_conn_accept(self, &gate, &hs, wanted, deadline, &fd, &who, e);
        if (rc != 0) {
            for (i = 0; pl->peer[i].dial || !wanted[pl->peer[i].rank]; i++)
                ;
            xport_conn_name(name, pl->peer[i].rank, &peers[pl->peer[i].rank]);
            if (rc == ERR_TIMEOUT)
                err_say(err, "%s %s never connected within %.1f s", pl->peer[i].role, name,
                        self->timeout);
            else
                err_say(err, "waiting for %s %s: %s", pl->peer[i].role, name, e);
            break;
        }
        wanted[who] = 0;
        missing--;
        for (i = 0; pl->peer[i].dial || pl->peer[i].rank != who; i++)
            ;
        fds[i] = fd;
        xport_conn_name(name, who, &peers[who]);
        rc = net_send_all(fd, hello, XPORT_HELLO_FRAME, NULL, self->timeout, name, e);
        if (rc != 0) {
            err_say(err, "%s %s: %s", pl->peer[i].role, name, e);
            break;
        }
    }
    xport_conn_hellos_close(&hs);
    auth_gate_close(&gate);
    free(wanted);
    return rc;
}

/* A dialled peer's set-up, in a thread of its own: its AUTH handshake
 * needs the peer to answer, and the peer answers only from its own accept
 * loop, which on a ring waits for this rank's left neighbour... so every
 * rank must dial and accept at the same time, or the ring waits on itself. */
struct dial {
    const struct xport_conn_self *self;
    const struct proto_peer *pp;
    const uint8_t *hello;
    double deadline;
    char name[XPORT_NAME_LEN];
    int fd, rc;
    char e[ERR_LEN];
    pthread_t t;
    int started;
};

static void *dial_run(void *arg)
{
    struct dial *d = arg;

    d->rc = auth_dial(d->pp->addr, d->pp->port, self_key(d->self), PROTO_AUTH_DATA,
                      d->deadline - clock_now(), &d->fd, d->name, d->e);
    if (d->rc == 0)
        d->rc = net_send_all(d->fd, d->hello, XPORT_HELLO_FRAME, NULL, d->self->timeout,
                             d->name, d->e);
    return NULL;
}

int xport_conn_open(const struct xport_conn_self *self, int lfd, const struct proto_peer *peers,
                    const struct xport_plan *pl, int *fds, char *err)
{
    double deadline = clock_now() + self->timeout;
    int n, rc = 0, rc_acc;
    char name[XPORT_NAME_LEN], e[ERR_LEN], why[ERR_LEN] = "", acc_err[ERR_LEN] = "";
    uint8_t hello[XPORT_HELLO_FRAME], pay[PROTO_TEXT_MAX + 1];
    struct proto_header h;
    struct dial d[XPORT_PEERS_MAX];

    n = pl->npeers;
    for (int i = 0; i < n; i++) {
        fds[i] = -1;
        d[i].started = 0;
        d[i].fd = -1;
    }
    xport_conn_hello_frame(self, hello);

    /* Dial, authenticate, and say who we are, while accepting the others;
     * the peers' listeners have been open since before they registered,
     * so a refusal is a real failure (a reset in the handshake is retried:
     * strangers at that listener may have evicted us). */
    for (int i = 0; i < n; i++) {
        if (!pl->peer[i].dial)
            continue;
        d[i].self = self;
        d[i].pp = &peers[pl->peer[i].rank];
        d[i].hello = hello;
        d[i].deadline = deadline;
        d[i].rc = 0;
        xport_conn_name(d[i].name, pl->peer[i].rank, d[i].pp);
        if (pthread_create(&d[i].t, NULL, dial_run, &d[i]) != 0) {
            d[i].e[0] = '\0';
            dial_run(&d[i]);            /* no thread: do it here (a ring with
                                           one dial and one accept may then
                                           wait; only without resources) */
        } else {
            d[i].started = 1;
        }
    }
    rc_acc = accept_all(self, lfd, peers, pl, hello, deadline, fds, acc_err);
    for (int i = 0; i < n; i++) {
        if (!pl->peer[i].dial)
            continue;
        if (d[i].started)
            pthread_join(d[i].t, NULL);
        fds[i] = d[i].fd;
        if (d[i].rc != 0 && rc == 0) {
            rc = d[i].rc;
            err_say(err, "%s %s: %s", pl->peer[i].role, d[i].name, d[i].e);
        }
    }
    if (rc != 0)
        goto out;
    if ((rc = rc_acc) != 0) {
        err_say(err, "%s", acc_err);
        goto out;
    }
    /* The dialled peers' answers prove they are the ranks the table said. */
    for (int i = 0; i < n; i++) {
        if (!pl->peer[i].dial)
            continue;
        xport_conn_name(name, pl->peer[i].rank, &peers[pl->peer[i].rank]);
        rc = xport_conn_read_frame(fds[i], self->timeout, name, &h, pay, e);
        if (rc == 0)
            rc = xport_conn_hello_check(self, &h, pay, pl->peer[i].rank, why);
        else
            snprintf(why, sizeof why, "%s", e);
        if (rc != 0) {
            err_say(err, "%s %s: %s", pl->peer[i].role, name, why);
            goto out;
        }
    }
    return 0;
out:
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return rc;
}
