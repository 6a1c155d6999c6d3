/* test_net.c -- TCP over real sockets on 127.0.0.1 (and ::1 if present).
 *
 * Each case builds its own connected pair (listen on port 0, connect,
 * accept, all in this process); a pthread plays the peer where both ends
 * must move at once. Timing checks are lower bounds only (a paced transfer
 * is never faster than the link allows); this machine is a loaded 2-core
 * box, so how much slower is not a test. A SIGALRM watchdog turns a hang
 * into a failing case instead of a stuck suite.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "base/err.h"
#include "wire/link.h"
#include "wire/net.h"

static void on_alarm(int sig)
{
    static const char msg[] = "FAIL net-watchdog a case hung past its watchdog\n";
    (void)sig;
    (void)!write(STDOUT_FILENO, msg, sizeof msg - 1);
    _exit(1);
}

/* watch: (re)arm the watchdog for the case that follows. */
static void watch(unsigned s)
{
    alarm(s);
}

/* A connected pair: a (the connecting end), b (the accepted end). */
struct pair {
    int a, b, port;
    char a_name[NET_ADDR_LEN], b_name[NET_ADDR_LEN];
};

static int pair_open(struct pair *p, const char *host)
{
    char err[ERR_LEN];
    int lfd, rc;

    memset(p, 0, sizeof *p);
    p->a = p->b = -1;
    rc = net_listen(host, 0, &lfd, &p->port, err);
    if (rc != 0) {
        printf("     pair: %s\n", err);
        return rc;
    }
    rc = net_connect(host, p->port, 5.0, &p->a, err);
    if (rc == 0)
        rc = net_accept(lfd, 5.0, &p->b, p->a_name, err);
    if (rc != 0)
        printf("     pair: %s\n", err);
    close(lfd);
    snprintf(p->b_name, sizeof p->b_name, "%s:%d", host, p->port);
    return rc;
}

static void pair_close(struct pair *p)
{
    if (p->a >= 0)
        close(p->a);
    if (p->b >= 0)
        close(p->b);
    p->a = p->b = -1;
}

static unsigned char *pattern(size_t n, unsigned seed)
{
    unsigned char *b = malloc(n);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        b[i] = (unsigned char)(x >> 24);
    }
    return b;
}

/* ---------------------------------------------------------- peer thread */

enum peer_job { JOB_SEND, JOB_RECV, JOB_ECHO, JOB_SENDRECV };

struct peer {
    enum peer_job job;
    int fd;
    unsigned char *sbuf, *rbuf;
    size_t len;
    struct link *link;
    int rc;
    char err[ERR_LEN];
};

/* peer_set: pe holds one job for peer_main on fd: send sbuf, receive into
 * rbuf (or both), len bytes, over link (NULL: none). */
static void peer_set(struct peer *pe, enum peer_job job, int fd, unsigned char *sbuf,
                     unsigned char *rbuf, size_t len, struct link *link)
{
    *pe = (struct peer){ .job = job, .fd = fd, .sbuf = sbuf, .rbuf = rbuf, .len = len,
                         .link = link };
}

static void *peer_main(void *arg)
{
    struct peer *p = arg;

    switch (p->job) {
    case JOB_SEND:
        p->rc = net_send_all(p->fd, p->sbuf, p->len, p->link, 10.0, "main", p->err);
        break;
    case JOB_RECV:
        p->rc = net_recv_all(p->fd, p->rbuf, p->len, p->link, 10.0, "main", p->err);
        break;
    case JOB_ECHO:
        p->rc = net_recv_all(p->fd, p->rbuf, p->len, p->link, 10.0, "main", p->err);
        if (p->rc == 0)
            p->rc = net_send_all(p->fd, p->rbuf, p->len, p->link, 10.0, "main", p->err);
        break;
    case JOB_SENDRECV:
        p->rc = net_sendrecv(p->fd, p->sbuf, p->len, "main", p->fd, p->rbuf, p->len, "main",
                             p->link, 10.0, p->err);
        break;
    }
    return NULL;
}

/* ---------------------------------------------------------------- cases */

static void t_listen(void)
{
    char err[ERR_LEN];
    int fd, port = -1, fd2, port2 = -1;

    T_CASE("net-1.1", "listen on port 0 reports the real bound port; in use is refused");
    watch(20);
    T_EQ_I(net_listen("127.0.0.1", 0, &fd, &port, err), 0);
    T_TRUE(port > 0 && port <= 65535);
    /* The port is really ours: listening on it again fails, naming it. */
    int rc = net_listen("127.0.0.1", port, &fd2, &port2, err);
    T_EQ_I(rc, -EADDRINUSE);
    if (rc == 0)
        close(fd2);
    char where[64];
    snprintf(where, sizeof where, "127.0.0.1:%d", port);
    T_HAS(err, where);
    close(fd);
    T_EQ_I(net_listen("127.0.0.1", 65536, &fd, &port, err), ERR_USAGE);
    T_END();
}

static void t_roundtrip(void)
{
    const size_t n = 8u << 20;
    struct pair p;
    struct peer peer;
    pthread_t th;
    unsigned char *out = pattern(n, 1), *back = calloc(1, n), *tmp = calloc(1, n);
    char err[ERR_LEN] = "";

    T_CASE("net-1.2", "8 MiB send_all/recv_all round trip returns the exact bytes");
    watch(60);
    if (pair_open(&p, "127.0.0.1") == 0) {
        peer_set(&peer, JOB_ECHO, p.b, NULL, tmp, n, NULL);
        pthread_create(&th, NULL, peer_main, &peer);
        T_EQ_I(net_send_all(p.a, out, n, NULL, 10.0, "echo", err), 0);
        T_EQ_I(net_recv_all(p.a, back, n, NULL, 10.0, "echo", err), 0);
        pthread_join(th, NULL);
        T_EQ_I(peer.rc, 0);
        T_TRUE(memcmp(out, back, n) == 0);
    } else {
        T_TRUE(0);
    }
    pair_close(&p);
    free(out);
    free(back);
    free(tmp);
    T_END();
}

static void t_eof(void)
{
    struct pair p;
    unsigned char buf[4096];
    char err[ERR_LEN] = "", peer[NET_ADDR_LEN + 16];

    T_CASE("net-1.3", "peer closing mid-transfer -> ERR_EOF naming the peer");
    watch(20);
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    memset(buf, 7, sizeof buf);
    T_EQ_I(net_send_all(p.a, buf, 1000, NULL, 5.0, "x", err), 0);
    close(p.a);
    p.a = -1;
    snprintf(peer, sizeof peer, "rank 3 (%s)", p.a_name);
    T_EQ_I(net_recv_all(p.b, buf, sizeof buf, NULL, 5.0, peer, err), ERR_EOF);
    T_HAS(err, peer);
    T_HAS(err, "1000 of 4096");
    pair_close(&p);
    T_END();
}

static void t_idle(void)
{
    struct pair p;
    struct link l;
    unsigned char buf[64];
    char err[ERR_LEN] = "";
    double t0, dt;

    T_CASE("net-1.4", "silent peer -> ERR_TIMEOUT after the idle timeout, naming it");
    watch(30);
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    t0 = clock_now();
    T_EQ_I(net_recv_all(p.b, buf, sizeof buf, NULL, 0.3, "rank 1 (silent)", err), ERR_TIMEOUT);
    dt = clock_now() - t0;
    T_LE(0.3, dt);
    T_HAS(err, "rank 1 (silent)");
    T_HAS(err, "timed out");
    /* Progress restarts the clock: a trickle of bytes every 0.1 s keeps a
     * 0.3 s timeout from firing although the whole wait is 0.5 s. */
    struct peer pe;
    pthread_t th;
    memset(buf, 1, sizeof buf);
    /* paced peer: 80 KiB at 160 KiB/s, 4 KiB pieces 25 ms apart, 0.5 s */
    T_EQ_I(link_init(&l, 163840.0, 0.0), 0);
    unsigned char *big = pattern(5u * 16384u, 3), *got = malloc(5u * 16384u);
    peer_set(&pe, JOB_SEND, p.a, big, NULL, 5u * 16384u, &l);
    pthread_create(&th, NULL, peer_main, &pe);
    t0 = clock_now();
    T_EQ_I(net_recv_all(p.b, got, 5u * 16384u, NULL, 0.3, "trickle", err), 0);
    pthread_join(th, NULL);
    T_EQ_I(pe.rc, 0);
    T_TRUE(memcmp(big, got, 5u * 16384u) == 0);
    free(big);
    free(got);
    /* A send held by the link for longer than the idle timeout is not idle:
     * 4 pieces of 4 KiB at 16 KiB/s, 0.25 s apart, with a 0.1 s timeout
     * (16 KiB fits the socket buffers with nobody reading). */
    T_EQ_I(link_init(&l, 16384.0, 0.0), 0);
    T_EQ_U(link_piece(&l), 4096);
    unsigned char *four = calloc(1, 16384);
    t0 = clock_now();
    T_EQ_I(net_send_all(p.a, four, 16384, &l, 0.1, "slow link", err), 0);
    T_LE(0.75, clock_now() - t0);
    free(four);
    pair_close(&p);
    T_END();
}

static void t_refused(void)
{
    char err[ERR_LEN] = "", where[64];
    int lfd, port, fd = -1, rc;
    double t0, dt;

    T_CASE("net-1.5", "connect to a closed port retries until the timeout, then names it");
    watch(20);
    T_EQ_I(net_listen("127.0.0.1", 0, &lfd, &port, err), 0);
    close(lfd);                       /* now nobody listens there */
    t0 = clock_now();
    rc = net_connect("127.0.0.1", port, 0.5, &fd, err);
    dt = clock_now() - t0;
    T_EQ_I(rc, -ECONNREFUSED);
    T_LE(0.5, dt + 1e-3);
    snprintf(where, sizeof where, "connect 127.0.0.1:%d: ", port);
    T_HAS(err, where);
    T_HAS(err, "refused");
    T_HAS(err, "tries in");
    if (rc == 0)
        close(fd);
    T_END();
}

static void t_resolve(void)
{
    char err[ERR_LEN] = "";
    int fd = -1, lfd, port;

    T_CASE("net-1.6", "an unresolvable host fails at once with ERR_RESOLVE");
    watch(30);
    T_EQ_I(net_connect("no-such-host.invalid", 80, 0.5, &fd, err), ERR_RESOLVE);
    T_HAS(err, "no-such-host.invalid:80");
    T_EQ_I(net_listen("no-such-host.invalid", 0, &lfd, &port, err), ERR_RESOLVE);
    T_HAS(err, "no-such-host.invalid");
    T_END();
}

static void t_parse(void)
{
    static const char *good[] = { "host:80", "127.0.0.1:0", "1.2.3.4:65535", "[::1]:80",
                                  "[fe80::1%eth0]:5000", "a-b.example:00080" };
    static const int good_port[] = { 80, 0, 65535, 80, 5000, 80 };
    static const char *good_host[] = { "host", "127.0.0.1", "1.2.3.4", "::1",
                                       "fe80::1%eth0", "a-b.example" };
    static const char *bad[] = { "", "abc", "1.2.3.4", ":80", "host:", "host:80x",
                                 "host:65536", "host:-1", "host:+80", "host: 80",
                                 "host:80 ", "::1:80", "[::1]", "[::1]80", "[]:80",
                                 "[host]:80", "ho st:80", "host:99999999999999999999" };
    char host[NET_HOST_LEN], err[ERR_LEN], tiny[4];
    int port;

    T_CASE("net-1.7", "parse_hostport: host:port and [v6]:port, strict port 0..65535");
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        port = -1;
        T_EQ_I(net_parse_hostport(good[i], host, sizeof host, &port, err), 0);
        T_STR(host, good_host[i]);
        T_EQ_I(port, good_port[i]);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (net_parse_hostport(bad[i], host, sizeof host, &port, err) != ERR_USAGE)
            t_fail(__FILE__, __LINE__, "rejects", "accepted \"%s\"", bad[i]);
        T_HAS(err, "bad address");
    }
    T_EQ_I(net_parse_hostport(NULL, host, sizeof host, &port, err), ERR_USAGE);
    T_EQ_I(net_parse_hostport("longhost:1", tiny, sizeof tiny, &port, err), ERR_USAGE);
    T_HAS(err, "too long");
    T_END();
}

/* Both ends sendrecv on one socket each: more than the socket buffers in
 * both directions at once, so a half-duplex loop would deadlock. */
static void sendrecv_both(size_t n, struct link *la, struct link *lb, const char *what)
{
    struct pair p;
    struct peer pe;
    pthread_t th;
    unsigned char *x = pattern(n, 11), *y = pattern(n, 12);
    unsigned char *xr = calloc(1, n), *yr = calloc(1, n);
    char err[ERR_LEN] = "";

    if (pair_open(&p, "127.0.0.1") != 0) {
        T_TRUE(0);
        goto out;
    }
    peer_set(&pe, JOB_SENDRECV, p.b, y, xr, n, lb);
    pthread_create(&th, NULL, peer_main, &pe);
    int rc = net_sendrecv(p.a, x, n, "peer b", p.a, yr, n, "peer b", la, 10.0, err);
    pthread_join(th, NULL);
    if (rc != 0 || pe.rc != 0)
        printf("     %s: %s / %s\n", what, err, pe.err);
    T_EQ_I(rc, 0);
    T_EQ_I(pe.rc, 0);
    T_TRUE(memcmp(x, xr, n) == 0);
    T_TRUE(memcmp(y, yr, n) == 0);
out:
    pair_close(&p);
    free(x);
    free(y);
    free(xr);
    free(yr);
}

static void t_sendrecv(void)
{
    struct link la, lb;

    T_CASE("net-1.8", "sendrecv: 4 MiB each way at once on one socket, no deadlock");
    watch(60);
    sendrecv_both(4u << 20, NULL, NULL, "unpaced");
    T_EQ_I(link_init(&la, 200e6, 50e-6), 0);
    T_EQ_I(link_init(&lb, 200e6, 50e-6), 0);
    sendrecv_both(4u << 20, &la, &lb, "paced 200 MB/s");
    T_EQ_U(la.bytes_out, 4u << 20);
    T_EQ_U(la.bytes_in, 4u << 20);
    T_EQ_U(lb.bytes_out, 4u << 20);
    T_EQ_U(lb.bytes_in, 4u << 20);
    T_END();
}

static void t_counters(void)
{
    struct pair p;
    struct link la, lb;
    unsigned char *buf = pattern(300000, 5), *got = malloc(300000);
    char err[ERR_LEN] = "";

    T_CASE("net-1.9", "byte counters equal the bytes moved, pacing on or off");
    watch(20);
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    T_EQ_I(link_init(&la, 0.0, 0.0), 0);             /* off: counts only */
    T_EQ_I(link_init(&lb, 0.0, 0.0), 0);
    T_EQ_I(net_send_all(p.a, buf, 100000, &la, 5.0, "b", err), 0);
    T_EQ_I(net_recv_all(p.b, got, 100000, &lb, 5.0, "a", err), 0);
    T_EQ_I(net_send_all(p.a, buf, 0, &la, 5.0, "b", err), 0);
    T_EQ_U(la.bytes_out, 100000);
    T_EQ_U(lb.bytes_in, 100000);
    T_EQ_U(la.bytes_in + lb.bytes_out, 0);
    T_EQ_I(link_init(&la, 1e9, 10e-6), 0);           /* on */
    T_EQ_I(net_send_all(p.a, buf, 200000, &la, 5.0, "b", err), 0);
    T_EQ_I(net_recv_all(p.b, got, 200000, &lb, 5.0, "a", err), 0);
    T_EQ_U(la.bytes_out, 200000);
    T_EQ_U(lb.bytes_in, 300000);
    T_TRUE(memcmp(buf, got, 200000) == 0);
    pair_close(&p);
    free(buf);
    free(got);
    T_END();
}

static void t_paced(void)
{
    const size_t n = 1u << 20;
    const double rate = 20e6;
    struct pair p;
    struct link ls, lr;
    struct peer pe;
    pthread_t th;
    unsigned char *buf = pattern(n, 9), *got = malloc(n);
    char err[ERR_LEN] = "";
    double t0, dt, bound;

    T_CASE("net-1.10", "paced 1 MiB at 20 MB/s takes >= 1 MiB/rate sending, >= (1 MiB - piece)/rate "
           "receiving from an unpaced sender; whole or in 1000-byte calls");
    watch(60);
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    /* egress: the sender is paced, the receiver is not */
    T_EQ_I(link_init(&ls, rate, 0.0), 0);
    bound = (double)n / rate;
    peer_set(&pe, JOB_RECV, p.b, NULL, got, n, NULL);
    pthread_create(&th, NULL, peer_main, &pe);
    t0 = clock_now();
    T_EQ_I(net_send_all(p.a, buf, n, &ls, 10.0, "b", err), 0);
    pthread_join(th, NULL);
    dt = clock_now() - t0;
    T_EQ_I(pe.rc, 0);
    T_LE(bound, dt);
    T_TRUE(memcmp(buf, got, n) == 0);
    /* ingress: the receiver is paced, the sender is not. The first piece
     * read is taken as having crossed the wire before it arrived (link.h:
     * ingress books bytes before their arrival), which an unpaced sender
     * did not do: the bound is one piece less. */
    T_EQ_I(link_init(&lr, rate, 0.0), 0);
    bound = ((double)n - (double)link_piece(&lr)) / rate;
    memset(got, 0, n);
    peer_set(&pe, JOB_SEND, p.a, buf, NULL, n, NULL);
    t0 = clock_now();             /* before the sender starts: its bytes' stamps are later */
    pthread_create(&th, NULL, peer_main, &pe);
    T_EQ_I(net_recv_all(p.b, got, n, &lr, 10.0, "a", err), 0);
    dt = clock_now() - t0;
    pthread_join(th, NULL);
    T_EQ_I(pe.rc, 0);
    T_LE(bound, dt);
    T_TRUE(memcmp(buf, got, n) == 0);
    T_EQ_U(lr.bytes_in, n);
    /* The same in 1000-byte calls, each way: the link's schedule carries
     * over from call to call (no call reads or writes a piece for free). */
    T_EQ_I(link_init(&ls, rate, 0.0), 0);
    bound = (double)n / rate;
    peer_set(&pe, JOB_RECV, p.b, NULL, got, n, NULL);
    pthread_create(&th, NULL, peer_main, &pe);
    t0 = clock_now();
    for (size_t off = 0; off < n; off += 1000)
        T_EQ_I(net_send_all(p.a, buf + off, n - off < 1000 ? n - off : 1000, &ls, 10.0, "b", err), 0);
    pthread_join(th, NULL);
    T_LE(bound, clock_now() - t0);
    T_EQ_I(link_init(&lr, rate, 0.0), 0);
    bound = ((double)n - (double)link_piece(&lr)) / rate;
    peer_set(&pe, JOB_SEND, p.a, buf, NULL, n, NULL);
    t0 = clock_now();             /* before the sender starts: its bytes' stamps are later */
    pthread_create(&th, NULL, peer_main, &pe);
    for (size_t off = 0; off < n; off += 1000)
        T_EQ_I(net_recv_all(p.b, got + off, n - off < 1000 ? n - off : 1000, &lr, 10.0, "a", err), 0);
    dt = clock_now() - t0;
    pthread_join(th, NULL);
    T_LE(bound, dt);
    T_TRUE(memcmp(buf, got, n) == 0);
    pair_close(&p);
    free(buf);
    free(got);
    T_END();
}

static void t_port_file(void)
{
    char dir[] = "/tmp/psring-net-XXXXXX", path[128], bad[160], err[ERR_LEN] = "", line[32];
    FILE *f;

    T_CASE("net-1.11", "port file written atomically and readable; bad folder named");
    if (!mkdtemp(dir)) {
        T_TRUE(0);
        T_END();
        return;
    }
    snprintf(path, sizeof path, "%s/port", dir);
    T_EQ_I(net_port_file_write(path, 40112, err), 0);
    T_EQ_I(net_port_file_write(path, 40113, err), 0);   /* replaces */
    f = fopen(path, "r");
    T_TRUE(f != NULL);
    if (f) {
        T_TRUE(fgets(line, sizeof line, f) != NULL);
        T_STR(line, "40113\n");
        fclose(f);
    }
    /* no temporary left behind */
    snprintf(bad, sizeof bad, "%s/port.tmp.%ld", dir, (long)getpid());
    T_TRUE(access(bad, F_OK) != 0);
    snprintf(bad, sizeof bad, "%s/missing/port", dir);
    T_EQ_I(net_port_file_write(bad, 1, err), -ENOENT);
    T_HAS(err, bad);
    unlink(path);
    rmdir(dir);
    T_END();
}

static void t_latency(void)
{
    const double lat = 20e-3;
    struct pair p;
    struct link la, lb;
    unsigned char ping[64] = { 1 }, pong[64];
    char err[ERR_LEN] = "";
    double t0, rtt;
    struct peer pe;
    pthread_t th;

    T_CASE("net-1.12", "latency: a ping-pong takes at least 2L; a frame still arrives whole");
    watch(30);
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    T_EQ_I(link_init(&la, 0.0, lat), 0);
    T_EQ_I(link_init(&lb, 0.0, lat), 0);
    peer_set(&pe, JOB_ECHO, p.b, NULL, pong, sizeof ping, &lb);
    for (int k = 0; k < 3; k++) {
        pthread_create(&th, NULL, peer_main, &pe);
        t0 = clock_now();
        T_EQ_I(net_send_all(p.a, ping, 40, &la, 5.0, "b", err), 0);       /* header */
        T_EQ_I(net_send_all(p.a, ping + 40, 24, &la, 5.0, "b", err), 0);  /* payload */
        T_EQ_I(net_recv_all(p.a, pong, sizeof pong, &la, 5.0, "b", err), 0);
        rtt = clock_now() - t0;
        pthread_join(th, NULL);
        T_EQ_I(pe.rc, 0);
        T_LE(2 * lat, rtt);
        T_TRUE(memcmp(ping, pong, sizeof ping) == 0);
    }
    pair_close(&p);
    T_END();
}

static void t_accept_timeout(void)
{
    char err[ERR_LEN] = "", where[64];
    int lfd, port, fd;
    double t0;

    T_CASE("net-1.13", "accept with nobody coming -> ERR_TIMEOUT naming the listen address");
    watch(20);
    T_EQ_I(net_listen("127.0.0.1", 0, &lfd, &port, err), 0);
    t0 = clock_now();
    T_EQ_I(net_accept(lfd, 0.2, &fd, NULL, err), ERR_TIMEOUT);
    T_LE(0.2, clock_now() - t0);
    snprintf(where, sizeof where, "127.0.0.1:%d", port);
    T_HAS(err, where);
    close(lfd);
    T_END();
}

static void t_epipe(void)
{
    struct pair p;
    unsigned char *buf = calloc(1, 8u << 20);
    char err[ERR_LEN] = "";
    int rc;

    T_CASE("net-1.14", "sending to a closed peer -> -EPIPE/-ECONNRESET, no SIGPIPE");
    watch(20);
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    close(p.b);
    p.b = -1;
    rc = net_send_all(p.a, buf, 8u << 20, NULL, 5.0, "rank 2 (gone)", err);
    T_TRUE(rc == -EPIPE || rc == -ECONNRESET);
    T_HAS(err, "send to rank 2 (gone)");
    pair_close(&p);
    free(buf);
    T_END();
}

static void t_ipv6(void)
{
    struct pair p;
    unsigned char buf[1000], got[1000];
    char err[ERR_LEN] = "";
    int fd, port;

    if (net_listen("::1", 0, &fd, &port, err) != 0) {
        t_skip("net-1.15", "IPv6 loopback", err);
        return;
    }
    close(fd);
    T_CASE("net-1.15", "IPv6 loopback: listen, connect, move bytes; peer in brackets");
    watch(20);
    T_EQ_I(pair_open(&p, "::1"), 0);
    T_HAS(p.a_name, "[::1]:");
    memset(buf, 42, sizeof buf);
    T_EQ_I(net_send_all(p.a, buf, sizeof buf, NULL, 5.0, p.b_name, err), 0);
    T_EQ_I(net_recv_all(p.b, got, sizeof got, NULL, 5.0, p.a_name, err), 0);
    T_TRUE(memcmp(buf, got, sizeof buf) == 0);
    pair_close(&p);
    T_END();
}

/* A member that trickles: n bytes, one each gap_s seconds. */
struct trickler {
    int fd;
    size_t n;
    double gap_s;
};

static void *trickle_main(void *arg)
{
    const struct trickler *tr = arg;
    unsigned char b = 7;

    for (size_t i = 0; i < tr->n; i++) {
        clock_sleep_until(clock_now() + tr->gap_s);
        if (send(tr->fd, &b, 1, MSG_NOSIGNAL) != 1)
            break;
    }
    return NULL;
}

static void t_frame_deadline(void)
{
    struct pair p;
    struct link l;
    struct net_frame f;
    struct trickler tr;
    pthread_t th;
    unsigned char buf[64], *big;
    char err[ERR_LEN] = "";
    int rc;

    T_CASE("net-1.16", "frame deadlines: a trickle fails the frame, across calls; the link's hold "
           "does not count");
    watch(30);
    /* One byte each 0.1 s never trips a 0.3 s idle timeout, but the
     * frame's deadline (0.3 s + 40 bytes at 1 MB/s after its first byte). */
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    tr = (struct trickler){ p.a, 40, 0.1 };
    pthread_create(&th, NULL, trickle_main, &tr);
    net_frame_begin(&f, 40);
    T_EQ_I(net_recv_frame(p.b, buf, 40, NULL, 0.3, &f, "rank 2 (trickle)", err), ERR_TIMEOUT);
    T_TRUE(f.expired);
    T_TRUE(f.got > 0 && f.got < 40);
    T_HAS(err, "rank 2 (trickle)");
    T_HAS(err, "frame not complete");
    pthread_join(th, NULL);
    pair_close(&p);
    /* The clock carries from the header's call to the payload's: 20 + 20
     * bytes, one each 20 ms (at least 0.78 s from the first byte), under
     * 0.5 s: each call alone would be in time, the frame is not. */
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    tr = (struct trickler){ p.a, 40, 0.02 };
    pthread_create(&th, NULL, trickle_main, &tr);
    net_frame_begin(&f, 20);
    rc = net_recv_frame(p.b, buf, 20, NULL, 0.5, &f, "trickle", err);
    if (rc == 0) {
        f.len += 20;
        rc = net_recv_frame(p.b, buf + 20, 20, NULL, 0.5, &f, "trickle", err);
    }
    T_EQ_I(rc, ERR_TIMEOUT);
    T_TRUE(f.expired);
    pthread_join(th, NULL);
    pair_close(&p);
    /* Bytes the receiver's link holds back are not the sender's delay:
     * 16 KiB sent at once, read at 64 KiB/s under a 0.1 s timeout (the
     * deadline: 0.1 + 16384 / 65536 s), while another flow's 32 KiB,
     * booked between the frame's two reads, holds the link 0.5 s more. */
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    T_EQ_I(link_init(&l, 65536.0, 0.0), 0);
    big = calloc(1, 16384);
    T_EQ_I(net_send_all(p.a, big, 16384, NULL, 1.0, "peer", err), 0);
    net_frame_begin(&f, 16384);
    T_EQ_I(net_recv_frame(p.b, big, 4096, &l, 0.1, &f, "held", err), 0);
    link_ingress_reserve(&l, 32768, clock_now());
    T_EQ_I(net_recv_frame(p.b, big + 4096, 12288, &l, 0.1, &f, "held", err), 0);
    T_TRUE(!f.expired);
    T_EQ_U(f.got, 16384);
    free(big);
    pair_close(&p);
    T_END();
}

/* net_send_now: what the socket takes, never waiting; nothing on a paced
 * link (xport_tcp.c, SEND AHEAD). */
static void t_send_now(void)
{
    const size_t n = 64u << 20;
    struct pair p;
    struct link la, lb;
    unsigned char *buf = pattern(n, 7), *got = malloc(n);
    char err[ERR_LEN] = "";
    size_t sent = 1, again = 1;
    int rc = 0;

    T_CASE("net-1.17", "send_now: unpaced, sends what the socket takes and returns with the "
                       "rest unsent (no reader); paced, nothing; a closed peer -> -errno");
    watch(20);
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    T_EQ_I(link_init(&la, 1e9, 10e-6), 0);           /* paced: nothing */
    T_EQ_I(net_send_now(p.a, buf, n, &la, &sent), 0);
    T_EQ_U(sent, 0);
    T_EQ_U(la.bytes_out, 0);
    T_EQ_I(link_init(&la, 0.0, 0.0), 0);
    T_EQ_I(link_init(&lb, 0.0, 0.0), 0);
    T_EQ_I(net_send_now(p.a, buf, n, &la, &sent), 0);
    T_TRUE(sent > 0 && sent < n);                     /* 64 MiB never fits a socket */
    T_EQ_U(la.bytes_out, sent);
    T_EQ_I(net_recv_all(p.b, got, sent, &lb, 5.0, "a", err), 0);
    T_TRUE(memcmp(buf, got, sent) == 0);
    T_EQ_I(net_send_now(p.a, buf + sent, n - sent, NULL, &again), 0);
    T_TRUE(again > 0);                                /* drained: room again */
    close(p.b);
    p.b = -1;
    for (int i = 0; i < 100 && rc == 0; i++)     /* the RST may take a call */
        rc = net_send_now(p.a, buf, n, NULL, &again);
    T_TRUE(rc == -EPIPE || rc == -ECONNRESET);
    pair_close(&p);
    free(buf);
    free(got);
    T_END();
}

/* net_sendrecv_some (xport_tcp.c, ONE READ): ends once rmin bytes are in,
 * with whatever else of rlen was already there; never before rmin. */
static void t_sendrecv_some(void)
{
    struct pair p;
    struct link lb;
    unsigned char out[140], in[1000];
    char err[ERR_LEN];

    T_CASE("net-1.18", "sendrecv_some: a header and its payload in one call; fewer than "
                       "rmin bytes keep it waiting (here: its idle timeout)");
    watch(20);
    for (size_t i = 0; i < sizeof out; i++)
        out[i] = (unsigned char)(i * 7 + 1);
    T_EQ_I(pair_open(&p, "127.0.0.1"), 0);
    T_EQ_I(link_init(&lb, 0.0, 0.0), 0);
    T_EQ_I(net_send_all(p.a, out, sizeof out, NULL, 5.0, "b", err), 0);
    T_EQ_I(net_sendrecv_some(p.b, NULL, 0, "a", p.b, in, 40, sizeof in, "a", &lb, 5.0, NULL,
                             err), 0);
    T_EQ_U(lb.bytes_in, sizeof out);                  /* all 140, not just the 40 */
    T_TRUE(memcmp(in, out, sizeof out) == 0);
    T_EQ_I(net_send_all(p.a, out, 10, NULL, 5.0, "b", err), 0);
    T_EQ_I(net_sendrecv_some(p.b, NULL, 0, "a", p.b, in, 40, sizeof in, "a", &lb, 0.2, NULL,
                             err), ERR_TIMEOUT);
    T_EQ_U(lb.bytes_in, sizeof out + 10);
    pair_close(&p);
    T_END();
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    clock_precise_timers();
    t_listen();
    t_roundtrip();
    t_eof();
    t_idle();
    t_refused();
    t_resolve();
    t_parse();
    t_sendrecv();
    t_counters();
    t_paced();
    t_port_file();
    t_latency();
    t_accept_timeout();
    t_epipe();
    t_ipv6();
    t_frame_deadline();
    t_send_now();
    t_sendrecv_some();
    alarm(0);
    return t_done();
}
