/* main.c -- bin/ps_server: the parameter server's transport, a libuv
 * event loop, and main.
 *
 * K workers connect and say HELLO. Each step every worker PUSHes the SUM
 * of its gradients; the bytes are added into the store's one accumulator
 * as they arrive (store.c: the server never holds K gradients); after
 * every push the part of its range that all K workers have pushed is
 * updated (store_release: the optimizer on sum / B) and its new weights go
 * to all K workers, in pieces taken round-robin (egress.c), while the
 * lower parts are still pushed (per-bucket pull). This is the only file
 * that includes uv.h: it owns the sockets and the timers and moves bytes.
 * Everything else is the protocol's (common/ps/server.h), which this file
 * calls through the server_* functions and which calls it back only
 * through the table filled here (struct server_io, `uv_io` below, and
 * its struct server_machine, `os_machine`: the CPU time, the machine's
 * load, the peak RSS and the test hook's SIGKILL, the OS's own): what
 * a connection's bytes mean and when they enter the sum (the link's
 * pacing) is server_conn.c's and session.c's, what the server does with
 * them server.c's, the sums store.c's, the order of the outgoing pieces
 * egress.c's, the timeouts silence.c's; flags.c and setup.c build it all
 * before the loop starts.
 *
 * THE LOOP'S HANDLES
 *   listener  uv_tcp_t on the socket net_listen bound (port 0 works)
 *   conn      a uv_tcp_t per connection, worker or stranger (struct conn_uv)
 *   poll      uv_poll_t on the pacer's timerfd (pacer.h): io->timer_want's
 *             deadlines (the emulated link's), to the microsecond
 *   tick      uv_timer_t, 20 times per --timeout (at most every 250 ms):
 *             server_tick (the idle-progress timeouts, silent strangers,
 *             lingering closes)
 *
 * OWNERSHIP (common/ps/server.h): a struct conn_uv is allocated at accept and freed
 * only in its close callback (on_conn_closed), after server_conn_closed.
 * A queued write's buffers are the protocol's, kept alive until
 * server_written.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "wire/auth.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "measure/hostload.h"
#include "ps/resume.h"
#include "pacer.h"
#include "flags.h"
#include "setup.h"


/* CHECK: a libuv call that cannot fail in a correct program; if it does,
 * say where, and stop. */
#define CHECK(call) do { int check_rc_ = (call); if (check_rc_ < 0) { \
    log_msg("%s:%d: %s: %s", __FILE__, __LINE__, #call, uv_strerror(check_rc_)); \
    exit(1); } } while (0)

#define NWRITES 3                    /* enum server_write's slots */

/* A connection with its handles: struct conn first, so that the struct
 * conn * the protocol holds is one of these. */
struct conn_uv {
    struct conn c;
    uv_tcp_t tcp;                    /* tcp.data points to c */
    uv_write_t wreq[NWRITES];        /* one queued write per enum server_write */
    uv_shutdown_t sreq;
};

/* The server with the loop's handles; every handle's data points to s. */
struct server_uv {
    struct server s;
    uv_loop_t loop;
    uv_tcp_t listener;
    struct pacer pacer;
    uv_poll_t poll;                   /* on pacer.fd */
    uv_timer_t tick;
    uv_prepare_t prep;                /* with a rate: marks the run delay
                                         before each block (machine_run_delay) */
    double queued_mark;
    int listener_open, timers_open, prep_open;
};

static struct conn_uv *uvc(struct conn *c)
{
    return (struct conn_uv *)(void *)c;
}

static struct server_uv *uvs(struct server *srv)
{
    return (struct server_uv *)(void *)srv;
}

/* ------------------------------------------------------------ closing */

static void on_handle_closed(uv_handle_t *h)
{
    (void)h;
}

static void on_pacer_closed(uv_handle_t *h)
{
    struct server *srv = h->data;

    pacer_close(&uvs(srv)->pacer);
}

/* io_over: the run is over: close the listener; once no connection is
 * left, the pacer and the tick too: uv_run then returns. */
static void io_over(struct server *srv, unsigned nconns)
{
    struct server_uv *su = uvs(srv);

    if (su->listener_open) {
        su->listener_open = 0;
        uv_close((uv_handle_t *)&su->listener, on_handle_closed);
    }
    if (nconns > 0)
        return;
    if (su->timers_open) {
        su->timers_open = 0;
        uv_close((uv_handle_t *)&su->tick, on_handle_closed);
        uv_close((uv_handle_t *)&su->poll, on_pacer_closed);
    }
    if (su->prep_open) {
        su->prep_open = 0;
        uv_close((uv_handle_t *)&su->prep, on_handle_closed);
    }
}

static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;

    server_conn_closed(c);
    free(uvc(c));
}

static void io_close(struct conn *c)
{
    uv_close((uv_handle_t *)&uvc(c)->tcp, on_conn_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct conn *c = req->data;

    if (status < 0 && status != UV_ECANCELED)
        server_conn_close(c);
}

static int io_shutdown(struct conn *c)
{
    uvc(c)->sreq.data = c;
    return uv_shutdown(&uvc(c)->sreq, (uv_stream_t *)&uvc(c)->tcp, on_shutdown);
}

/* ------------------------------------------------------------- writing */

/* to_uv: the protocol's buffers as libuv's (nb <= 2). */
static void to_uv(const struct server_buf *b, unsigned nb, uv_buf_t *out)
{
    assert(nb <= 2);
    for (unsigned i = 0; i < nb; i++)
        out[i] = uv_buf_init((char *)(uintptr_t)b[i].p, (unsigned)b[i].len);
}

static int io_try_write(struct conn *c, const struct server_buf *b, unsigned nb)
{
    uv_buf_t ub[2];
    int w;

    to_uv(b, nb, ub);
    w = uv_try_write((uv_stream_t *)&uvc(c)->tcp, ub, nb);
    return w == UV_EAGAIN ? 0 : w;
}

static void on_written(uv_write_t *req, int status)
{
    struct conn *c = req->data;

    server_written(c, (enum server_write)(req - uvc(c)->wreq), status);
}

static int io_write(struct conn *c, enum server_write slot, const struct server_buf *b,
                    unsigned nb)
{
    uv_write_t *req = &uvc(c)->wreq[slot];
    uv_buf_t ub[2];

    assert((unsigned)slot < NWRITES);
    to_uv(b, nb, ub);
    req->data = c;
    return uv_write(req, (uv_stream_t *)&uvc(c)->tcp, ub, nb, on_written);
}

/* ------------------------------------------------------------- reading */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    unsigned char *p;
    size_t len;

    (void)suggested;
    server_conn_buffer(h->data, &p, &len);
    *buf = uv_buf_init((char *)p, (unsigned)len);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;

    if (nread == 0)
        return;
    if (nread < 0)      /* the peer closed, or the connection broke */
        server_conn_lost(c, nread == UV_EOF ? NULL : uv_strerror((int)nread));
    else
        server_conn_read(c, (const unsigned char *)buf->base, (size_t)nread);
}

static int io_read_start(struct conn *c)
{
    return uv_read_start((uv_stream_t *)&uvc(c)->tcp, on_alloc, on_read);
}

static void io_read_stop(struct conn *c)
{
    uv_read_stop((uv_stream_t *)&uvc(c)->tcp);
}

/* ------------------------------------------------------------ the clock */

static double io_now(const struct server *srv)
{
    (void)srv;
    return clock_now();
}

static void io_timer_want(struct server *srv, double t)
{
    pacer_want(&uvs(srv)->pacer, t);
}

static void on_pacer(uv_poll_t *h, int status, int events)
{
    struct server *srv = h->data;

    (void)status;
    (void)events;
    pacer_fired(&uvs(srv)->pacer);
    server_timer(srv);
}

static void on_tick(uv_timer_t *t)
{
    server_tick(t->data);
}

static const char *io_strerror(int code)
{
    return uv_strerror(code);
}

/* ---------------------------------------------------------- the machine */

/* What the protocol measures of this process and its machine (server.h,
 * struct server_machine): the OS's own counters. */

/* on_prepare: the loop is about to block for events: its run delay so
 * far, the mark machine_run_delay counts from. */
static void on_prepare(uv_prepare_t *h)
{
    struct server_uv *su = h->data;

    su->queued_mark = clock_thread_queued_seconds();
}

static double machine_run_delay(const struct server *srv)
{
    const struct server_uv *su = (const struct server_uv *)(const void *)srv;
    double q = su->prep_open ? clock_thread_queued_seconds() - su->queued_mark : 0.0;

    return q > 0.0 ? q : 0.0;       /* NAN (the kernel cannot say): 0 */
}

static double machine_cpu_s(const struct server *srv)
{
    (void)srv;
    return clock_cpu_seconds();
}

static void machine_load(const struct server *srv, struct hostload_sample *s)
{
    (void)srv;
    (void)hostload_sample_read(s);      /* s->ok says whether it holds */
}

static double machine_peak_rss_mib(const struct server *srv)
{
    struct rusage ru;

    (void)srv;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss / 1024.0 : -1;
}

/* machine_test_kill: the test hook (resume.h): RESUME_KILL_ENV=S, and
 * step S's update is done: SIGKILL, no cleanup, as a crash would. */
static void machine_test_kill(struct server *srv, uint64_t step)
{
    const char *kill_at = getenv(RESUME_KILL_ENV);

    (void)srv;
    if (kill_at && *kill_at && strtoull(kill_at, NULL, 10) == step) {
        log_msg("%s=%llu: killing myself after the update of step %llu (a test)",
                RESUME_KILL_ENV, (unsigned long long)step, (unsigned long long)step);
        raise(SIGKILL);
    }
}

static const struct server_machine os_machine = {
    .cpu_s = machine_cpu_s,
    .load = machine_load,
    .peak_rss_mib = machine_peak_rss_mib,
    .test_kill = machine_test_kill,
    .run_delay = machine_run_delay,
};

/* The transport's table (server.h). */
static const struct server_io uv_io = {
    .now = io_now,
    .try_write = io_try_write,
    .write = io_write,
    .read_start = io_read_start,
    .read_stop = io_read_stop,
    .shutdown = io_shutdown,
    .close = io_close,
    .timer_want = io_timer_want,
    .over = io_over,
    .strerror = io_strerror,
    .machine = &os_machine,
    .frame_deadlines = 1,
};

/* ------------------------------------------------------------ accepting */

static void peer_name(uv_tcp_t *t, char *out, size_t len)
{
    struct sockaddr_storage ss;
    int n = sizeof ss;
    char ip[64] = "?";
    int port = 0;

    if (uv_tcp_getpeername(t, (struct sockaddr *)&ss, &n) == 0) {
        if (ss.ss_family == AF_INET) {
            const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)&ss;
            uv_ip4_name(a, ip, sizeof ip);
            port = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)&ss;
            uv_ip6_name(a, ip, sizeof ip);
            port = ntohs(a->sin6_port);
            snprintf(out, len, "[%s]:%d", ip, port);
            return;
        }
    }
    snprintf(out, len, "%s:%d", ip, port);
}

static void on_connection(uv_stream_t *l, int status)
{
    struct server *srv = l->data;
    struct conn_uv *cu;
    char peer[NET_ADDR_LEN];

    if (status < 0) {
        log_msg("accept: %s", uv_strerror(status));
        return;
    }
    cu = calloc(1, sizeof *cu);
    if (!cu) {
        log_msg("accept: out of memory");
        return;
    }
    CHECK(uv_tcp_init(&uvs(srv)->loop, &cu->tcp));
    cu->tcp.data = &cu->c;
    server_conn_add(srv, &cu->c);
    if (uv_accept(l, (uv_stream_t *)&cu->tcp) != 0) {
        server_conn_close(&cu->c);
        return;
    }
    peer_name(&cu->tcp, peer, sizeof peer);
    (void)uv_tcp_nodelay(&cu->tcp, 1);
    server_conn_ready(&cu->c, peer);
}

/* ----------------------------------------------------------------- main */

/* loop_open: the listening socket, the pacer and the tick on the loop.
 * OUT: bound (the port). 0, or -1 after logging why. */
static int loop_open(struct server_uv *su, int *bound)
{
    struct server *srv = &su->s;
    char err[ERR_LEN];
    int lfd = -1, rc;

    auth_policy_say();          /* every flag is checked: the secret's line now */
    if (net_listen(srv->f.host, srv->f.port, &lfd, bound, err) != 0) {
        log_msg("%s", err);
        return -1;
    }
    CHECK(uv_loop_init(&su->loop));
    CHECK(uv_tcp_init(&su->loop, &su->listener));
    su->listener.data = srv;
    CHECK(uv_tcp_open(&su->listener, lfd));
    if ((rc = uv_listen((uv_stream_t *)&su->listener, 128, on_connection)) != 0) {
        log_msg("listen %s: %s", srv->f.listen_at, uv_strerror(rc));
        return -1;
    }
    su->listener_open = 1;
    if (pacer_open(&su->pacer, err) != 0) {
        log_msg("%s", err);
        return -1;
    }
    CHECK(uv_poll_init(&su->loop, &su->poll, su->pacer.fd));
    su->poll.data = srv;
    CHECK(uv_poll_start(&su->poll, UV_READABLE, on_pacer));
    CHECK(uv_timer_init(&su->loop, &su->tick));
    su->tick.data = srv;
    CHECK(uv_timer_start(&su->tick, on_tick, srv->sil.period_ms, srv->sil.period_ms));
    su->timers_open = 1;
    if (srv->link.ingress.rate > 0.0) {     /* server_own_wait: only with a rate */
        CHECK(uv_prepare_init(&su->loop, &su->prep));
        su->prep.data = su;
        su->queued_mark = NAN;
        CHECK(uv_prepare_start(&su->prep, on_prepare));
        su->prep_open = 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct server_uv su;
    struct server *srv = &su.s;
    struct server_flags f;
    char err[ERR_LEN];
    int bound = 0, rc;

    flags_parse(&f, argc, argv);
    su.pacer.fd = -1;
    if (setup_server(srv, &f, clock_now()) != 0)
        return 1;
    srv->io = &uv_io;
    if (loop_open(&su, &bound) != 0)
        return 1;
    if (srv->f.port_file && net_port_file_write(srv->f.port_file, bound, err) != 0) {
        log_msg("%s", err);
        return 1;
    }
    setup_announce(srv, bound);

    server_start(srv);
    uv_run(&su.loop, UV_RUN_DEFAULT);

    rc = uv_loop_close(&su.loop);
    assert(rc == 0);        /* every handle was closed */
    (void)rc;
    rc = server_end(srv);
    pacer_close(&su.pacer);
    setup_destroy(srv);
    return rc;
}
