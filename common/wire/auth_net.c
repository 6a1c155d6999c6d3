/* auth_net.c -- the AUTH handshake on sockets (auth.h, ON SOCKETS):
 * auth_client and auth_server run the two sides of auth.c's handshake on
 * a connection under an absolute deadline, auth_dial connects and retries,
 * and the gate serves a listener.
 *
 * THE GATE is a poll() loop over the listener and the connections still in
 * the handshake, each with its own absolute deadline (accepted + timeout);
 * when the table is full the oldest is evicted to make room, so strangers
 * can delay a real peer by at most one handshake's round trip, not lock it
 * out, and a slot is free again the moment its connection closes.
 */
#include "auth.h"
#include "auth_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "net.h"

#define RETRY_PAUSE_S 0.05      /* between two dials after a reset */

/* --------------------------------------------------------- on sockets */

/* io_by: move len bytes (send when out, else recv) by the absolute
 * deadline; no idle reset. */
static int io_by(int fd, int out, void *buf, size_t len, double deadline)
{
    uint8_t *p = buf;

    while (len > 0) {
        double left = deadline - clock_now();
        struct pollfd pf = { fd, (short)(out ? POLLOUT : POLLIN), 0 };
        ssize_t r;
        int ms;
        if (left <= 0)
            return ERR_TIMEOUT;
        ms = (int)(left * 1e3) + 1;
        if (poll(&pf, 1, ms) < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (pf.revents == 0)
            continue;
        r = out ? send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL)
                : recv(fd, p, len, MSG_DONTWAIT);
        if (r == 0 && !out)
            return ERR_EOF;
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                continue;
            return -errno;
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static void io_say(char *err, const char *peer, const char *what, int rc)
{
    if (rc == ERR_TIMEOUT)
        err_say(err, "%s: no AUTH handshake by the deadline (%s)", peer, what);
    else if (rc == ERR_EOF)
        err_say(err, "%s: connection closed during the AUTH handshake (%s)", peer, what);
    else
        err_say(err, "%s: %s during the AUTH handshake (%s)", peer, err_str(rc), what);
}

int auth_retryable(int rc)
{
    return rc == ERR_EOF || rc == -ECONNRESET || rc == -EPIPE || rc == -ECONNREFUSED ||
           rc == -ECONNABORTED;
}

/* read_reply: the responder's next frame, A2 or an ERROR. An ERROR's text
 * goes into err as the refusal it is. */
static int read_reply(int fd, double deadline, uint8_t *frame, const char *peer, char *err)
{
    const struct proto_limits lim = { PROTO_TEXT_MAX, 0, 0 };
    uint8_t text[PROTO_TEXT_MAX + 1];
    struct proto_header h;
    int rc = io_by(fd, 0, frame, PROTO_HEADER_SIZE, deadline);

    if (rc != 0) {
        io_say(err, peer, "waiting for AUTH message 2", rc);
        return rc;
    }
    if (proto_header_decode(frame, &lim, &h) == 0 && h.type == PROTO_ERROR) {
        rc = io_by(fd, 0, text, (size_t)h.length, deadline);
        if (rc != 0) {
            io_say(err, peer, "reading its refusal", rc);
            return rc;
        }
        for (size_t i = 0; i < h.length; i++)
            if (text[i] < 0x20 || text[i] == 0x7f)
                text[i] = '?';
        text[h.length] = '\0';
        err_say(err, "%s refused the connection: %s", peer, (const char *)text);
        return ERR_MISMATCH;
    }
    rc = io_by(fd, 0, frame + PROTO_HEADER_SIZE, PROTO_AUTH_SIZE, deadline);
    if (rc != 0)
        io_say(err, peer, "reading AUTH message 2", rc);
    return rc;
}

int auth_client(int fd, const struct auth_key *k, uint32_t purpose, double deadline,
                const char *peer, char *err)
{
    struct auth_hs hs;
    uint8_t out[AUTH_FRAME], in[AUTH_FRAME];
    char why[ERR_LEN];
    int rc;

    auth_hs_init(&hs, k, purpose);
    auth_open(&hs, out);
    if ((rc = io_by(fd, 1, out, sizeof out, deadline)) != 0) {
        io_say(err, peer, "sending AUTH message 1", rc);
        return rc;
    }
    if ((rc = read_reply(fd, deadline, in, peer, err)) != 0)
        return rc;
    if ((rc = auth_prove(&hs, in, sizeof in, out, why)) != 0) {
        err_say(err, "%s: %s", peer, why);
        return rc;
    }
    if ((rc = io_by(fd, 1, out, sizeof out, deadline)) != 0)
        io_say(err, peer, "sending AUTH message 3", rc);
    return rc;
}

int auth_server(int fd, const struct auth_key *k, uint32_t purpose, double deadline,
                const char *peer, char *err)
{
    struct auth_hs hs;
    uint8_t in[AUTH_FRAME], out[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
    char why[ERR_LEN];
    int rc;

    auth_hs_init(&hs, k, purpose);
    for (int step = 1; step <= 3; step += 2) {
        if ((rc = io_by(fd, 0, in, sizeof in, deadline)) != 0) {
            io_say(err, peer, step == 1 ? "waiting for AUTH message 1"
                                        : "waiting for AUTH message 3", rc);
            return rc;
        }
        rc = step == 1 ? auth_answer(&hs, in, sizeof in, out, why)
                       : auth_verify(&hs, in, sizeof in, why);
        if (rc != 0) {
            size_t n = auth_refusal(out, rc, why);
            (void)io_by(fd, 1, out, n, deadline);
            err_say(err, "%s: %s", peer, why);
            return rc;
        }
        if (step == 1 && (rc = io_by(fd, 1, out, AUTH_FRAME, deadline)) != 0) {
            io_say(err, peer, "sending AUTH message 2", rc);
            return rc;
        }
    }
    return 0;
}

int auth_dial(const char *host, int port, const struct auth_key *k, uint32_t purpose,
              double timeout_s, int *fd, const char *peer, char *err)
{
    double deadline = clock_now() + timeout_s;
    int rc;

    *fd = -1;
    for (;;) {
        double left = deadline - clock_now();
        if (left <= 0)
            left = 0.001;
        rc = net_connect(host, port, left, fd, err);
        if (rc != 0)
            return rc;
        rc = auth_client(*fd, k, purpose, deadline, peer, err);
        if (rc == 0)
            return 0;
        close(*fd);
        *fd = -1;
        /* A listener that resets or closes us during the handshake may
         * have evicted us for strangers: try again while there is time. */
        if (!auth_retryable(rc) || clock_now() + RETRY_PAUSE_S >= deadline)
            return rc;
        clock_sleep_until(clock_now() + RETRY_PAUSE_S);
    }
}

/* ------------------------------------------------------------- the gate */

struct auth_gate_conn {
    int fd;
    char peer[NET_ADDR_LEN];
    double until;                       /* absolute: accepted + timeout */
    struct auth_hs hs;
    uint8_t buf[AUTH_FRAME];
    size_t got;
};

int auth_gate_init(struct auth_gate *g, int lfd, const struct auth_key *k, uint32_t purpose,
                   double timeout, int cap, const char *what)
{
    memset(g, 0, sizeof *g);
    g->lfd = lfd;
    g->key = k;
    g->purpose = purpose;
    g->timeout = timeout;
    g->cap = cap > 0 ? cap : AUTH_GATE_CAP;
    g->what = what;
    g->c = calloc((size_t)g->cap, sizeof *g->c);
    return g->c ? 0 : -ENOMEM;
}

/* gate_drop: close entry i (with a refusal when why), keep the rest in
 * order (oldest first). */
static void gate_drop(struct auth_gate *g, int i, int code, const char *why)
{
    struct auth_gate_conn *c = &g->c[i];

    if (why) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
        size_t n = auth_refusal(buf, code, why);
        log_msg("refused a connection from %s on %s: %s", c->peer, g->what, why);
        (void)send(c->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        g->refused++;
    }
    close(c->fd);
    memmove(&g->c[i], &g->c[i + 1], (size_t)(g->n - i - 1) * sizeof *g->c);
    g->n--;
}

/* gate_read: progress on entry i. 1 when it passed A3, 0 to wait, -1
 * when it was dropped. */
static int gate_read(struct auth_gate *g, int i)
{
    struct auth_gate_conn *c = &g->c[i];
    uint8_t out[AUTH_FRAME];
    char why[ERR_LEN];
    ssize_t r;
    int rc;

    for (;;) {
        r = recv(c->fd, c->buf + c->got, sizeof c->buf - c->got, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            log_msg("closed the connection from %s on %s: %s before authenticating",
                    c->peer, g->what, r == 0 ? "it closed" : strerror(errno));
            gate_drop(g, i, 0, NULL);
            return -1;
        }
        if (r < 0)
            return 0;
        c->got += (size_t)r;
        /* A header that is not AUTH is refused at once, without waiting
         * for a payload it may never send. */
        if (c->got >= PROTO_HEADER_SIZE && c->got < sizeof c->buf) {
            const struct proto_limits lim = { PROTO_AUTH_SIZE, 0, 0 };
            struct proto_header h;
            if (proto_header_decode(c->buf, &lim, &h) != 0 || h.type != PROTO_AUTH) {
                (void)auth_frame_take(&c->hs, c->buf, PROTO_HEADER_SIZE, c->hs.step, NULL, why);
                gate_drop(g, i, ERR_MISMATCH, why);
                return -1;
            }
        }
        if (c->got < sizeof c->buf)
            continue;
        c->got = 0;
        if (c->hs.step == 1) {
            rc = auth_answer(&c->hs, c->buf, sizeof c->buf, out, why);
            /* A2 fits any fresh socket's buffer; a peer that cannot take
             * 112 bytes is not a peer. */
            if (rc == 0 && send(c->fd, out, sizeof out, MSG_DONTWAIT | MSG_NOSIGNAL) !=
                (ssize_t)sizeof out) {
                rc = ERR_EOF;
                snprintf(why, sizeof why, "could not send AUTH message 2");
            }
        } else {
            rc = auth_verify(&c->hs, c->buf, sizeof c->buf, why);
            if (rc == 0)
                return 1;
        }
        if (rc != 0) {
            gate_drop(g, i, rc, why);
            return -1;
        }
    }
}

int auth_gate_next(struct auth_gate *g, double deadline, int *fd, char *peer, char *err)
{
    struct pollfd *pf = malloc(((size_t)g->cap + 1) * sizeof *pf);
    int rc = ERR_TIMEOUT;

    if (!pf) {
        err_say(err, "%s: out of memory", g->what);
        return -ENOMEM;
    }
    for (;;) {
        double now = clock_now(), wake = deadline;
        int np = 0, nfds;

        /* Absolute deadlines: a trickled byte extends none of them. */
        for (int i = 0; i < g->n;) {
            if (now >= g->c[i].until) {
                char why[ERR_LEN];
                snprintf(why, sizeof why, "not authenticated within %.1f s of connecting",
                         g->timeout);
                gate_drop(g, i, ERR_TIMEOUT, why);
                continue;
            }
            if (g->c[i].until < wake)
                wake = g->c[i].until;
            i++;
        }
        if (now >= deadline)
            break;
        pf[np].fd = g->lfd;
        pf[np++].events = POLLIN;
        for (int i = 0; i < g->n; i++) {
            pf[np].fd = g->c[i].fd;
            pf[np++].events = POLLIN;
        }
        nfds = poll(pf, (nfds_t)np, (int)((wake - now) * 1e3) + 1);
        if (nfds < 0 && errno != EINTR) {
            rc = -errno;
            err_say(err, "%s: poll: %s", g->what, strerror(errno));
            break;
        }
        if (nfds <= 0)
            continue;
        /* The connections first (their indices shift as they go), from
         * the newest down so that a drop does not move one not yet seen. */
        for (int i = np - 2; i >= 0; i--) {
            if (!pf[i + 1].revents)
                continue;
            if (gate_read(g, i) == 1) {
                *fd = g->c[i].fd;
                snprintf(peer, NET_ADDR_LEN, "%s", g->c[i].peer);
                memmove(&g->c[i], &g->c[i + 1], (size_t)(g->n - i - 1) * sizeof *g->c);
                g->n--;
                free(pf);
                return 0;
            }
        }
        if (pf[0].revents) {
            char e[ERR_LEN];
            int nfd;
            struct auth_gate_conn *c;
            if ((rc = net_accept(g->lfd, 0.001, &nfd, peer, e)) != 0) {
                if (rc == ERR_TIMEOUT)
                    continue;
                err_say(err, "%s", e);
                break;
            }
            if (g->n == g->cap) {
                g->evicted++;
                gate_drop(g, 0, ERR_TIMEOUT, "evicted: too many connections without AUTH "
                          "(the oldest goes)");
            }
            c = &g->c[g->n++];
            memset(c, 0, sizeof *c);
            c->fd = nfd;
            snprintf(c->peer, sizeof c->peer, "%s", peer);
            c->until = clock_now() + g->timeout;
            auth_hs_init(&c->hs, g->key, g->purpose);
            rc = ERR_TIMEOUT;
        }
    }
    free(pf);
    return rc;
}

void auth_gate_close(struct auth_gate *g)
{
    while (g->n > 0)
        gate_drop(g, g->n - 1, 0, NULL);
    free(g->c);
    g->c = NULL;
}
