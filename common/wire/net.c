/* net.c -- TCP for psring: addresses, listen, accept, connect with retry,
 * the port file (net.h). The transfers (send/recv in full, paced, under
 * the idle timeout) are net_xfer.c's.
 *
 * Every wait is a ppoll() with a deadline (net_wait_until): the connect
 * deadline, the accept timeout, or the idle-progress deadline of a
 * transfer. ppoll, not poll, because the link's deadlines are
 * microseconds apart and poll rounds to milliseconds.
 */
#include "net.h"
#include "net_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/outfile.h"

#define BACKOFF_FIRST_S 0.010
#define BACKOFF_MAX_S   0.500
#define ATTEMPT_MIN_S   0.100     /* a connect attempt's wait, at least */
#define LISTEN_BACKLOG  128
/* ---------------------------------------------------------------- helpers */

/* "host:port", bracketing an IPv6 literal. */
static void fmt_hostport(char *out, size_t n, const char *host, int port)
{
    if (strchr(host, ':'))
        snprintf(out, n, "[%s]:%d", host, port);
    else
        snprintf(out, n, "%s:%d", host, port);
}

/* endpoint: the start of a listen or connect (verb): no host means
 * 127.0.0.1 (*host is set to it), where gets "host:port" for messages
 * (NET_ADDR_LEN bytes), and a port outside 0..65535 is ERR_USAGE with
 * "VERB host:port: port out of range 0..65535" in err. */
static int endpoint(const char *verb, const char **host, int port, char *where, char *err)
{
    if (!*host || !**host)
        *host = "127.0.0.1";
    fmt_hostport(where, NET_ADDR_LEN, *host, port);
    if (port < 0 || port > 65535) {
        err_say(err, "%s %s: port out of range 0..65535", verb, where);
        return ERR_USAGE;
    }
    return 0;
}

static void fmt_sockaddr(const struct sockaddr *sa, char *out, size_t n)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;

    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        port = ntohs(in->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
        port = ntohs(in6->sin6_port);
    }
    fmt_hostport(out, n, ip, port);
}

static void fd_name(int fd, char *out, size_t n)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;

    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        fmt_sockaddr((struct sockaddr *)&ss, out, n);
    else
        snprintf(out, n, "fd %d", fd);
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

/* tune: TCP_NODELAY (a frame goes out at once), and receive timestamps,
 * which tell a paced reader when its bytes really arrived (net_xfer.c,
 * recv_stamped).
 * Failures only cost latency or pacing precision: ignored. */
static void tune(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

int net_wait_until(struct pollfd *fds, nfds_t n, double until)
{
    struct timespec ts, *tp = NULL;
    double left;
    int rc;

    if (isfinite(until)) {
        left = until - clock_now();
        if (left < 0)
            left = 0;
        ts.tv_sec = (time_t)left;
        ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec > 999999999L)
            ts.tv_nsec = 999999999L;
        tp = &ts;
    }
    rc = ppoll(fds, n, tp, NULL);
    if (rc < 0 && errno != EINTR)
        return -errno;
    return rc < 0 ? 0 : rc;
}

/* ------------------------------------------------------------- addresses */

int net_parse_hostport(const char *s, char *host, size_t hostlen, int *port, char *err)
{
    const char *h, *colon, *p;
    size_t hl;
    long v = 0;

    if (!s || !*s)
        goto bad;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':')
            goto bad;
        h = s + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
        if (hl == 0 || !memchr(h, ':', hl))
            goto bad;          /* brackets are for IPv6 literals */
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            goto bad;
        h = s;
        hl = (size_t)(colon - s);
        if (hl == 0 || memchr(h, ':', hl)) {
            if (hl != 0) {
                err_say(err, "bad address \"%s\": an IPv6 address needs brackets, [ADDR]:PORT", s);
                return ERR_USAGE;
            }
            goto bad;
        }
    }
    for (size_t i = 0; i < hl; i++)
        if ((unsigned char)h[i] <= ' ' || h[i] == '[' || h[i] == ']' || h[i] == 0x7f)
            goto bad;
    p = colon + 1;
    if (!*p)
        goto bad;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            goto bad;
        v = v * 10 + (*p - '0');
        if (v > 65535) {
            err_say(err, "bad address \"%s\": port out of range 0..65535", s);
            return ERR_USAGE;
        }
    }
    if (hl >= hostlen) {
        err_say(err, "bad address \"%s\": host name too long", s);
        return ERR_USAGE;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)v;
    return 0;
bad:
    err_say(err, "bad address \"%s\": expected HOST:PORT or [IPV6]:PORT, port 0..65535",
        s ? s : "(null)");
    return ERR_USAGE;
}

/* ------------------------------------------------------ listen and accept */

int net_host_check(const char *host, char *err)
{
    struct addrinfo hints, *res = NULL;
    int rc;

    if (!host || !*host)
        return 0;
    /* Digits and dots are an IPv4 address or nothing: no resolver asked
     * (a DNS lookup of "999.1.1.1" can take its timeout to fail). */
    if (strspn(host, "0123456789.") == strlen(host)) {
        struct in_addr a;
        if (inet_pton(AF_INET, host, &a) == 1)
            return 0;
        err_say(err, "%s is not an IPv4 address", host);
        return ERR_USAGE;
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, NULL, &hints, &res);
    if (res)
        freeaddrinfo(res);
    if (rc == 0 || rc == EAI_AGAIN)
        return 0;
    err_say(err, "%s does not resolve (%s)", host,
            rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    return ERR_USAGE;
}

int net_listen(const char *host, int port, int *fd, int *bound_port, char *err)
{
    struct addrinfo hints, *res = NULL, *ai;
    char where[NET_ADDR_LEN], ps[16];
    int s = -1, rc = 0, one = 1;

    if (endpoint("listen", &host, port, where, err) != 0)
        return ERR_USAGE;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(ps, sizeof ps, "%d", port);
    rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0) {
        err_say(err, "listen %s: %s", where, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return ERR_RESOLVE;
    }
    rc = -EADDRNOTAVAIL;
    for (ai = res; ai; ai = ai->ai_next) {
        s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (s < 0) {
            rc = -errno;
            continue;
        }
        (void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(s, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s, LISTEN_BACKLOG) != 0)
            rc = -errno;
        else
            rc = set_nonblock(s);
        if (rc == 0)
            break;
        close(s);
        s = -1;
    }
    freeaddrinfo(res);
    if (s < 0) {
        err_say(err, "listen %s: %s", where, err_str(rc));
        return rc;
    }
    if (bound_port) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        if (getsockname(s, (struct sockaddr *)&ss, &len) != 0) {
            rc = -errno;
            err_say(err, "listen %s: getsockname: %s", where, err_str(rc));
            close(s);
            return rc;
        }
        *bound_port = ss.ss_family == AF_INET6
            ? ntohs(((struct sockaddr_in6 *)(void *)&ss)->sin6_port)
            : ntohs(((struct sockaddr_in *)(void *)&ss)->sin_port);
    }
    *fd = s;
    return 0;
}

int net_accept(int lfd, double timeout_s, int *fd, char *peer, char *err)
{
    double deadline = timeout_s > 0 ? clock_now() + timeout_s : INFINITY;
    struct sockaddr_storage ss;
    socklen_t len;
    char where[NET_ADDR_LEN];
    int s, rc;

    for (;;) {
        len = sizeof ss;
        s = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (s >= 0) {
            tune(s);
            if (peer)
                fmt_sockaddr((struct sockaddr *)&ss, peer, NET_ADDR_LEN);
            *fd = s;
            return 0;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            rc = -errno;
            fd_name(lfd, where, sizeof where);
            err_say(err, "accept on %s: %s", where, err_str(rc));
            return rc;
        }
        if (clock_now() >= deadline) {
            fd_name(lfd, where, sizeof where);
            err_say(err, "accept on %s: no connection within %.1f s", where, timeout_s);
            return ERR_TIMEOUT;
        }
        struct pollfd p = { .fd = lfd, .events = POLLIN };
        rc = net_wait_until(&p, 1, deadline);
        if (rc < 0) {
            fd_name(lfd, where, sizeof where);
            err_say(err, "accept on %s: poll: %s", where, err_str(rc));
            return rc;
        }
    }
}

/* --------------------------------------------------------------- connect */

static int retryable(int rc)
{
    switch (-rc) {
    case ECONNREFUSED: case ENETUNREACH: case EHOSTUNREACH: case ETIMEDOUT:
    case ECONNRESET: case ECONNABORTED: case EAGAIN: case EADDRNOTAVAIL:
    case ENETDOWN: case EHOSTDOWN: case EINTR:
        return 1;
    default:
        return 0;
    }
}

/* try_connect: one non-blocking connect to ai, waiting until `until`. */
static int try_connect(const struct addrinfo *ai, double until, int *fd)
{
    struct pollfd p;
    socklen_t len;
    int s, rc, soerr = 0;

    s = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (s < 0)
        return -errno;
    if (connect(s, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
            goto fail;
        }
        p.fd = s;
        p.events = POLLOUT;
        do {
            rc = net_wait_until(&p, 1, until);
        } while (rc == 0 && clock_now() < until);
        if (rc < 0)
            goto fail;
        if (rc == 0) {
            rc = -ETIMEDOUT;
            goto fail;
        }
        len = sizeof soerr;
        if (getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0) {
            rc = -errno;
            goto fail;
        }
        if (soerr != 0) {
            rc = -soerr;
            goto fail;
        }
    }
    tune(s);
    *fd = s;
    return 0;
fail:
    close(s);
    return rc;
}

int net_connect(const char *host, int port, double timeout_s, int *fd, char *err)
{
    struct addrinfo hints, *res, *ai;
    char where[NET_ADDR_LEN], ps[16];
    double t0 = clock_now(), deadline, backoff = BACKOFF_FIRST_S, now;
    int rc = -ECONNREFUSED, gai, tries = 0;

    if (endpoint("connect", &host, port, where, err) != 0)
        return ERR_USAGE;
    deadline = t0 + (timeout_s > 0 ? timeout_s : 0);
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    snprintf(ps, sizeof ps, "%d", port);
    for (;;) {
        res = NULL;
        gai = getaddrinfo(host, ps, &hints, &res);
        if (gai != 0 && (gai != EAI_AGAIN || clock_now() >= deadline)) {
            /* A name that does not resolve will not start resolving: fail
             * at once. Only a temporary failure (EAI_AGAIN) is retried. */
            err_say(err, "connect %s: %s", where,
                gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai));
            return ERR_RESOLVE;
        }
        tries++;
        for (ai = gai == 0 ? res : NULL; ai; ai = ai->ai_next) {
            rc = try_connect(ai, fmax(deadline, clock_now() + ATTEMPT_MIN_S), fd);
            if (rc == 0 || !retryable(rc))
                break;
        }
        if (res)
            freeaddrinfo(res);
        if (gai == 0 && rc == 0)
            return 0;
        now = clock_now();
        if (gai == 0 && (!retryable(rc) || now >= deadline)) {
            err_say(err, "connect %s: %s (%d tr%s in %.1f s)", where, err_str(rc), tries,
                tries == 1 ? "y" : "ies", now - t0);
            return rc;
        }
        clock_sleep_until(fmin(now + backoff, deadline));
        backoff = fmin(2 * backoff, BACKOFF_MAX_S);
    }
}

/* ------------------------------------------------------------ port file */

int net_port_file_write(const char *path, int port, char *err)
{
    char text[16];
    int len = snprintf(text, sizeof text, "%d\n", port);

    /* outfile.h: atomic, and never over a FIFO, a device or a folder. */
    return outfile_write_text("--port-file", path ? path : "", text, (size_t)len, err);
}

int net_send_now(int fd, const void *buf, size_t len, struct link *l, size_t *sent)
{
    *sent = 0;
    if (l && link_active(l))
        return 0;               /* paced: every piece is reserved (net_xfer.c) */
    while (*sent < len) {
        ssize_t w = send(fd, (const char *)buf + *sent, len - *sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        *sent += (size_t)w;
        if (l)
            l->bytes_out += (uint64_t)w;
    }
    return 0;
}
