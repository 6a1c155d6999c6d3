/* auth.c -- the job's secret, the AUTH handshake and the gate (auth.h).
 *
 * No cryptography is written here: the MACs are libsodium's
 * crypto_auth_hmacsha256 (multi-part, so the key may be any length), the
 * nonces randombytes_buf, the comparisons sodium_memcmp (constant time).
 * What is MACed, in this order (mac_of):
 *
 *     AUTH_LABEL with its NUL (14 bytes)   "psring-auth-2"
 *     direction (1 byte)                   'R' in A2, 'I' in A3
 *     purpose (4 bytes, little-endian)     enum proto_auth_purpose
 *     keyed (4 bytes, little-endian)       0 or 1
 *     Ni (32 bytes), Nr (32 bytes)
 *
 * so a MAC is good for one connection (both nonces), one direction (a
 * responder's proof reflected back as an initiator's fails) and one
 * purpose. The responder refuses a frame that is not A1 before it spends
 * anything on it, and says no more than "not authenticated" and why.
 *
 * THE GATE is a poll() loop over the listener and the connections still in
 * the handshake, each with its own absolute deadline (accepted + timeout);
 * when the table is full the oldest is evicted to make room, so strangers
 * can delay a real peer by at most one handshake's round trip, not lock it
 * out, and a slot is free again the moment its connection closes.
 */
#include "auth.h"

#include <errno.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "net.h"

#define RETRY_PAUSE_S 0.05      /* between two dials after a reset */

/* ------------------------------------------------------------ the secret */

int auth_key_load(struct auth_key *k, const char *file, const char *env, char *err)
{
    char buf[AUTH_SECRET_MAX + 2];
    const char *src = file ? file : "PSRING_SECRET";
    size_t n = 0;

    memset(k, 0, sizeof *k);
    if (file) {
        struct stat st;
        FILE *f = fopen(file, "rb");
        if (!f) {
            err_say(err, "--secret-file: cannot open '%s': %s", file, strerror(errno));
            return ERR_USAGE;
        }
        if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077) != 0) {
            fclose(f);
            err_say(err, "--secret-file: '%s' may be read by group or others (mode %03o); "
                "chmod 600 it", file, (unsigned)(st.st_mode & 0777));
            return ERR_USAGE;
        }
        n = fread(buf, 1, sizeof buf, f);
        fclose(f);
    } else if (env && *env) {
        n = strlen(env);
        if (n > sizeof buf)
            n = sizeof buf;
        memcpy(buf, env, n);
    } else {
        return 0;               /* no secret: unkeyed */
    }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
                     buf[n - 1] == '\t'))
        n--;
    if (n < AUTH_SECRET_MIN || n > AUTH_SECRET_MAX) {
        err_say(err, "%s: the secret must be %d to %d bytes (this one: %s%zu); e.g. 64 hex "
            "digits from /dev/urandom", src, AUTH_SECRET_MIN, AUTH_SECRET_MAX,
            n > AUTH_SECRET_MAX ? "over " : "", n > AUTH_SECRET_MAX ? (size_t)AUTH_SECRET_MAX : n);
        sodium_memzero(buf, sizeof buf);
        return ERR_USAGE;
    }
    memcpy(k->key, buf, n);
    k->len = n;
    k->keyed = 1;
    sodium_memzero(buf, sizeof buf);
    return 0;
}

static struct auth_key process_key;     /* unkeyed until set */

const struct auth_key *auth_process_key(void)
{
    return &process_key;
}

void auth_process_key_set(const struct auth_key *k)
{
    process_key = *k;
}

int auth_is_loopback(const char *host)
{
    if (!host || !*host)
        return 1;               /* net.h: no host is 127.0.0.1 */
    if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
        strcmp(host, "[::1]") == 0)
        return 1;
    /* 127.d.d.d */
    if (strncmp(host, "127.", 4) == 0) {
        int dots = 0;
        for (const char *p = host + 4; *p; p++) {
            if (*p == '.')
                dots++;
            else if (*p < '0' || *p > '9')
                return 0;
        }
        return dots == 2;
    }
    return 0;
}

static char notice[320];        /* auth_policy's line, said by auth_policy_say */

void auth_policy_say(void)
{
    if (notice[0])
        fputs(notice, stderr);
    notice[0] = '\0';
}

int auth_policy(const char *prog, const struct auth_key *k, const char *listen_host,
                const char *const *hosts, int n, char *err)
{
    const char *outside = NULL;

    if (listen_host && !auth_is_loopback(listen_host))
        outside = listen_host;
    for (int i = 0; i < n && !outside; i++)
        if (hosts[i] && !auth_is_loopback(hosts[i]))
            outside = hosts[i];
    if (k->keyed) {
        if (listen_host && !auth_is_loopback(listen_host))
            snprintf(notice, sizeof notice, "%s: listening on %s: reachable beyond this "
                     "machine; only processes with the job's secret are let in\n", prog,
                     *listen_host ? listen_host : "*");
        return 0;
    }
    if (outside) {
        err_say(err, "%s is not a loopback address: the job needs a secret "
            "(--secret-file FILE or PSRING_SECRET)", outside);
        return ERR_USAGE;
    }
    snprintf(notice, sizeof notice, "%s: warning: no secret (--secret-file, PSRING_SECRET): "
             "running unauthenticated on loopback\n", prog);
    return 0;
}

/* ---------------------------------------------------------- the handshake */

static void mac_of(const struct auth_hs *hs, char dir, uint8_t *mac)
{
    crypto_auth_hmacsha256_state st;
    uint8_t meta[1 + 4 + 4];
    uint32_t keyed = (uint32_t)hs->key->keyed;

    meta[0] = (uint8_t)dir;
    for (int i = 0; i < 4; i++) {
        meta[1 + i] = (uint8_t)(hs->purpose >> (8 * i));
        meta[5 + i] = (uint8_t)(keyed >> (8 * i));
    }
    crypto_auth_hmacsha256_init(&st, hs->key->key, hs->key->len);
    crypto_auth_hmacsha256_update(&st, (const uint8_t *)AUTH_LABEL, sizeof AUTH_LABEL);
    crypto_auth_hmacsha256_update(&st, meta, sizeof meta);
    crypto_auth_hmacsha256_update(&st, hs->ni, sizeof hs->ni);
    crypto_auth_hmacsha256_update(&st, hs->nr, sizeof hs->nr);
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_memzero(&st, sizeof st);
}

void auth_hs_init(struct auth_hs *hs, const struct auth_key *k, uint32_t purpose)
{
    /* Safe to call again and from any thread; fails only without a
     * source of randomness, and then nothing can be trusted to run. */
    if (sodium_init() < 0) {
        fprintf(stderr, "psring: libsodium cannot start (no randomness source)\n");
        abort();
    }
    memset(hs, 0, sizeof *hs);
    hs->key = k;
    hs->purpose = purpose;
    hs->step = 1;
}

static void frame_make(uint8_t *out, uint64_t step, const struct proto_auth *a)
{
    struct proto_header h = proto_header_make(PROTO_AUTH, 0, 1, 0, step, PROTO_AUTH_SIZE);

    proto_header_encode(&h, out);
    proto_auth_encode(a, out + PROTO_HEADER_SIZE);
}

static const char *purpose_name(uint32_t p)
{
    switch (p) {
    case PROTO_AUTH_PS: return "a worker of a parameter server";
    case PROTO_AUTH_RDV: return "a ring rank at its coordinator";
    case PROTO_AUTH_DATA: return "a ring rank at a peer";
    default: return "?";
    }
}

/* frame_take: in[0..len) as AUTH message `step` of our purpose and
 * keying. ERROR frames are the caller's to read; here they are refusals. */
static int frame_take(const struct auth_hs *hs, const uint8_t *in, size_t len, uint64_t step,
                      struct proto_auth *a, char *why)
{
    const struct proto_limits lim = { PROTO_AUTH_SIZE, 0, 0 };
    struct proto_header h;
    int rc;

    if (len < PROTO_HEADER_SIZE) {
        err_say(why, "not authenticated: a frame of %zu bytes", len);
        return ERR_PROTO_SIZE;
    }
    rc = proto_header_decode(in, &lim, &h);
    if (rc == 0 && h.type != PROTO_AUTH)
        rc = ERR_PROTO_TYPE;
    if (rc != 0) {
        if (h.magic == PROTO_MAGIC && h.version == PROTO_VERSION && h.type != PROTO_AUTH)
            err_say(why, "not authenticated: %s before the AUTH handshake",
                proto_type_name(h.type));
        else
            err_say(why, "not authenticated: not an AUTH frame (%s)", err_str(rc));
        return rc;
    }
    if (h.aux != step || h.rank != 0 || h.world != 1 || h.step != 0 ||
        len != PROTO_HEADER_SIZE + PROTO_AUTH_SIZE) {
        err_say(why, "not authenticated: AUTH message %llu out of place (expected %llu)",
            (unsigned long long)h.aux, (unsigned long long)step);
        return ERR_PROTO_FIELD;
    }
    rc = proto_auth_decode(in + PROTO_HEADER_SIZE, PROTO_AUTH_SIZE, a);
    if (rc != 0) {
        err_say(why, "not authenticated: a malformed AUTH frame (%s)", err_str(rc));
        return rc;
    }
    if (a->purpose != hs->purpose) {
        err_say(why, "not authenticated: the peer is %s, this side expects %s",
            purpose_name(a->purpose), purpose_name(hs->purpose));
        return ERR_MISMATCH;
    }
    if (a->keyed != (uint32_t)hs->key->keyed) {
        if (hs->key->keyed)
            err_say(why, "not authenticated: the peer has no secret and this job has one "
                "(give it --secret-file or PSRING_SECRET)");
        else
            err_say(why, "not authenticated: the peer has a secret and this side runs "
                "without one (give both the same --secret-file or PSRING_SECRET)");
        return ERR_MISMATCH;
    }
    return 0;
}

void auth_open(struct auth_hs *hs, uint8_t *out)
{
    struct proto_auth a;

    memset(&a, 0, sizeof a);
    randombytes_buf(hs->ni, sizeof hs->ni);
    a.keyed = (uint32_t)hs->key->keyed;
    a.purpose = hs->purpose;
    memcpy(a.nonce, hs->ni, sizeof a.nonce);
    frame_make(out, 1, &a);
    hs->step = 2;
}

int auth_answer(struct auth_hs *hs, const uint8_t *in, size_t len, uint8_t *out, char *why)
{
    struct proto_auth a;
    int rc;

    if (hs->step != 1) {
        err_say(why, "not authenticated: AUTH message 1 twice");
        return ERR_PROTO_FIELD;
    }
    if ((rc = frame_take(hs, in, len, 1, &a, why)) != 0)
        return rc;
    memcpy(hs->ni, a.nonce, sizeof hs->ni);
    randombytes_buf(hs->nr, sizeof hs->nr);
    memset(&a, 0, sizeof a);
    a.keyed = (uint32_t)hs->key->keyed;
    a.purpose = hs->purpose;
    memcpy(a.nonce, hs->nr, sizeof a.nonce);
    mac_of(hs, 'R', a.mac);
    frame_make(out, 2, &a);
    hs->step = 3;
    return 0;
}

int auth_prove(struct auth_hs *hs, const uint8_t *in, size_t len, uint8_t *out, char *why)
{
    struct proto_auth a;
    uint8_t want[PROTO_MAC_SIZE];
    int rc;

    if (hs->step != 2) {
        err_say(why, "AUTH message 2 out of place");
        return ERR_PROTO_FIELD;
    }
    if ((rc = frame_take(hs, in, len, 2, &a, why)) != 0)
        return rc;
    memcpy(hs->nr, a.nonce, sizeof hs->nr);
    mac_of(hs, 'R', want);
    if (sodium_memcmp(want, a.mac, sizeof want) != 0) {
        err_say(why, "the peer failed to prove it holds this job's secret (a different "
            "--secret-file or PSRING_SECRET?)");
        return ERR_MISMATCH;
    }
    memset(&a, 0, sizeof a);
    a.keyed = (uint32_t)hs->key->keyed;
    a.purpose = hs->purpose;
    mac_of(hs, 'I', a.mac);
    frame_make(out, 3, &a);
    hs->step = 4;
    return 0;
}

int auth_verify(struct auth_hs *hs, const uint8_t *in, size_t len, char *why)
{
    struct proto_auth a;
    uint8_t want[PROTO_MAC_SIZE];
    int rc;

    if (hs->step != 3) {
        err_say(why, "not authenticated: AUTH message 3 out of place");
        return ERR_PROTO_FIELD;
    }
    if ((rc = frame_take(hs, in, len, 3, &a, why)) != 0)
        return rc;
    mac_of(hs, 'I', want);
    if (sodium_memcmp(want, a.mac, sizeof want) != 0) {
        err_say(why, "not authenticated: wrong proof (it does not hold this job's secret)");
        return ERR_MISMATCH;
    }
    hs->step = 4;
    return 0;
}

size_t auth_refusal(uint8_t *out, int code, const char *why)
{
    size_t n = strlen(why) < PROTO_TEXT_MAX ? strlen(why) : PROTO_TEXT_MAX;
    struct proto_header h = proto_header_make(PROTO_ERROR, 0, 1, 0, (uint64_t)(int64_t)code, n);

    proto_header_encode(&h, out);
    memcpy(out + PROTO_HEADER_SIZE, why, n);
    return PROTO_HEADER_SIZE + n;
}

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
                (void)frame_take(&c->hs, c->buf, PROTO_HEADER_SIZE, c->hs.step, NULL, why);
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
