/* main.c -- bin/ps_server: the parameter server's libuv event loop.
 *
 * K workers connect and say HELLO. Each step every worker PUSHes the SUM
 * of its gradients; the bytes are added into the store's one accumulator
 * as they arrive (store.c: the server never holds K gradients); when all K
 * pushes are in, the server applies w -= lr * sum / B and writes the new
 * weights to all K workers at once, from the one store buffer, in pieces
 * taken round-robin (egress.c). A step so has the two phases of docs/design.md:
 * ingress (K pushes through the server's one link), then egress (K copies
 * of the weights through it). This is the only file that includes uv.h:
 * it moves bytes and keeps time; what the bytes mean is session.c's, the
 * sums store.c's, the order of the outgoing pieces egress.c's.
 *
 * THE LOOP'S HANDLES
 *   listener  uv_tcp_t on the socket net_listen bound (port 0 works)
 *   conn      a uv_tcp_t per connection, worker or stranger (struct conn)
 *   pacer     uv_poll_t on a timerfd: the emulated link's deadlines, to the
 *             microsecond (a uv_timer_t counts milliseconds, and one piece
 *             of a 500 Mbit/s link takes 250 us)
 *   tick      uv_timer_t, 20 times per --timeout (at most every 250 ms):
 *             the idle-progress timeouts (SILENCE), silent strangers,
 *             lingering closes
 *
 * EMULATED LINK (link.h, docs/link.md). The server's one NIC is shared by
 * all its connections. Ingress: every read is at most one link piece and is
 * booked with link_ingress_reserve; when the booking says "not before t",
 * the bytes are held (reading that connection stops) until the pacer fires
 * at t, and only then enter the store: they reach the sum at their paced
 * time. Bookings are made in time order, so the held connections form a
 * FIFO queue sorted by release time. Egress: egress_next hands out pieces
 * when their deadline comes. Without the link, reads are 256 KiB and the
 * weights go in 1 MiB writes, as fast as the sockets take them.
 *
 * FAULTS. Before all K workers have joined, a connection that sends
 * anything wrong (garbage, a wrong HELLO, a taken rank) is answered with
 * ERROR, closed and logged, and the server goes on. A joined worker's
 * fault (lost connection, refused push, NaN, an ERROR frame, silence past
 * --timeout) ends the run: one log line naming the worker, its address and
 * the step, ERROR to every other worker, exit 1. Closing after an ERROR
 * "lingers": the server shuts its side down and drains what the peer still
 * sends (up to LINGER_MAX_S), so the peer reads the ERROR instead of a
 * reset.
 *
 * SILENCE (--timeout T, docs/design.md's idle-progress timeout). Each joined
 * worker the server is waiting on has a clock of its own, restarted by its
 * progress: a byte read from it, a write of the weights to it completed.
 * The server waits on a worker while it owes a push (or a part of one, or
 * its BYE) or while a write of the weights sits on its full socket; not
 * while it owes nothing, while the link holds its bytes, or while its next
 * piece of weights is the server's to send. A clock that reaches T fails
 * the run naming that worker, T (+ one tick) after its last byte, however
 * busy the others are; the workers, whose wait for the weights allows 2T,
 * hear the ERROR well before they would give up. The server's own clock
 * (any progress at all) still covers what no worker's does: workers that
 * have not joined. A tick that comes late (the server itself did not run)
 * moves every clock on by its lateness: that time is no one's silence.
 *
 * OWNERSHIP. A struct conn is allocated at accept and freed only in its
 * close callback (on_conn_closed), so the callbacks libuv runs before that
 * (cancelled writes, a shutdown) still find it. Its read buffer is
 * allocated when it joins (one per worker, none for strangers) and freed
 * with it. The store, the egress schedule and the record are allocated
 * before the loop starts and freed after it returns.
 *
 * THE WEIGHTS BUFFER is read by K queued writes at once and changed only by
 * store_apply, which needs all K pushes of the next step; session.c refuses
 * a push from a worker whose weights are still being written (pulling), so
 * no apply can happen while a write of the previous weights is queued
 * (asserted in step_apply).
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <uv.h>

#include "cli.h"
#include "clock.h"
#include "dtype.h"
#include "egress.h"
#include "err.h"
#include "link.h"
#include "log.h"
#include "losscurve.h"
#include "metrics.h"
#include "mistake.h"
#include "net.h"
#include "proto.h"
#include "session.h"
#include "store.h"
#include "workload.h"

#define PROG "ps_server"
#define READ_BUF_MAX   (256u << 10)   /* per joined worker, without the link */
#define READ_BUF_MIN   (16u << 10)    /* ... when K is huge */
#define READ_BUF_TOTAL (64u << 20)    /* all workers' read buffers, at most */
#define SMALL_READ     1024           /* before the HELLO */
#define EGRESS_CHUNK   (1u << 20)     /* a weights write without the link */
#define STRANGERS_MAX  64             /* unjoined connections beyond K */
#define LINGER_MAX_S   0.5
#define LOG_EVERY_S    1.0            /* loss lines, at most this often */

/* CHECK: a libuv call that cannot fail in a correct program; if it does,
 * say where, and stop. */
#define CHECK(call) do { int check_rc_ = (call); if (check_rc_ < 0) { \
    log_msg("%s:%d: %s: %s", __FILE__, __LINE__, #call, uv_strerror(check_rc_)); \
    exit(1); } } while (0)

struct server;

__attribute__((format(printf, 3, 4)))
static void say(char *buf, size_t len, const char *fmt, ...);

struct conn {
    uv_tcp_t tcp;                    /* tcp.data points back here */
    struct server *srv;
    struct conn *next, *prev;        /* srv->conns */
    struct conn *held_next;          /* srv's queue of held reads */
    char peer[NET_ADDR_LEN];
    struct session ses;
    int joined;                      /* worker ses.rank, in srv->by_rank */
    int finished;                    /* said BYE, or closed cleanly at the end */
    int reading, closing, lingering;
    double accepted, linger_until;
    double heard;                    /* the last sign of progress on it (SILENCE) */
    /* reading: sbuf before the join, rbuf (owned) after */
    unsigned char *rbuf;
    size_t rcap;
    int held;                        /* bytes read and held by the link */
    const unsigned char *held_p;
    size_t held_len;
    double held_due;
    /* writing */
    uv_write_t wreq;                 /* the rest of a weights piece */
    uint64_t wqueued;
    unsigned char whdr[PROTO_HEADER_SIZE];
    uv_write_t creq;                 /* the rest of a WELCOME or ERROR */
    int cbusy;
    uint64_t cqueued;
    uv_shutdown_t sreq;
    unsigned char cbuf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
    unsigned char sbuf[SMALL_READ];
};

struct server {
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_poll_t pacer;
    uv_timer_t tick;
    int tfd;                          /* the pacer's timerfd */
    double pacer_at;                  /* when it is armed for; INFINITY: not */
    int listener_open, timers_open;
    /* settings */
    struct cli_common c;
    int mistake;                      /* enum mistake (mistake.h) */
    const char *loss_out;             /* --loss-out FILE (shard 0 writes), or NULL */
    struct session_cfg scfg;
    uint32_t k;
    size_t es, rcap;
    uint64_t wlen;                    /* bytes of weights per WEIGHTS frame */
    double timeout, linger_s;
    double tick_s;                    /* the tick's period */
    /* state */
    struct store store;
    struct egress eg;
    struct link link;
    struct conn **by_rank;            /* K entries */
    struct conn *conns;
    unsigned nconns, nstrangers;
    uint32_t joined, finished;
    struct conn *held_head, *held_tail;
    int over;                         /* the run ended: no new work */
    int exit_code;
    double last_progress, last_log, last_tick;
    uint64_t sending;                 /* step whose weights are going out */
    /* measurement */
    struct losscurve loss;            /* --loss-out: the loss of every applied step */
    struct metrics_record rec;
    struct metrics_step cur;          /* the step whose weights are going out */
    int in_started;
    double in_first, in_last, out_first, out_last;
    uint64_t in_mark, out_mark;
    int timing;
    double t0_wall, t0_cpu;
};

/* ---------------------------------------------------------------- flags */

struct shard {
    int i, s;
};

static int parse_shard(const char *v, void *dst, char *err)
{
    char a[32], q[44], reason[ERR_LEN];
    const char *slash = strchr(v, '/');
    struct shard *sh = dst;
    long long i, s;
    size_t n = slash ? (size_t)(slash - v) : 0, k;

    /* The value as quoted in a message: printable, cut at 40 bytes. */
    for (k = 0; v[k] && k < 40; k++)
        q[k] = v[k] > ' ' && v[k] < 0x7f ? v[k] : '?';
    q[k] = '\0';
    if (!slash || n == 0 || n >= sizeof a) {
        snprintf(err, ERR_LEN, "'%s' is not I/S (examples: 0/1, 1/2)", q);
        return ERR_USAGE;
    }
    memcpy(a, v, n);
    a[n] = '\0';
    if (cli_parse_ll(slash + 1, 1, PROTO_MAX_WORLD, &s, reason) != 0 ||
        cli_parse_ll(a, 0, PROTO_MAX_WORLD - 1, &i, reason) != 0) {
        say(err, ERR_LEN, "'%s' is not I/S: %s", q, reason);
        return ERR_USAGE;
    }
    if (i >= s) {
        snprintf(err, ERR_LEN, "'%s': shard index %lld is not below the count %lld", q, i, s);
        return ERR_USAGE;
    }
    sh->i = (int)i;
    sh->s = (int)s;
    return 0;
}

__attribute__((format(printf, 1, 2), noreturn))
static void usage_fail(const char *fmt, ...)
{
    char msg[ERR_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", PROG, msg);
    exit(CLI_EXIT_USAGE);
}

/* dir_writable: the folder of path exists and can take a new file. */
static int dir_writable(const char *path)
{
    char dir[CLI_PATH_MAX];
    const char *slash = strrchr(path, '/');
    struct stat st;

    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0;
}

/* ------------------------------------------------------------- messages */

/* say: snprintf for messages, where a long peer name may cut the line. */
__attribute__((format(printf, 3, 4)))
static void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* with_peer: msg with c's address after its "worker R", or appended. */
static void with_peer(const char *msg, const struct conn *c, char *out, size_t len)
{
    unsigned r;
    int pos = 0;

    if (!c)
        snprintf(out, len, "%s", msg);
    else if (sscanf(msg, "worker %u:%n", &r, &pos) == 1 && pos > 0)
        snprintf(out, len, "worker %u (%s):%s", r, c->peer, msg + pos);
    else
        snprintf(out, len, "%s (%s)", msg, c->peer);
}

static unsigned long long ull(uint64_t x)
{
    return (unsigned long long)x;
}

/* ---------------------------------------------------------------- pacer */

/* pacer_want: make sure the pacer fires at t or earlier. */
static void pacer_want(struct server *srv, double t)
{
    struct itimerspec its;
    double sec;

    if (!(t < srv->pacer_at))
        return;
    if (t < 1e-6)
        t = 1e-6;           /* an all-zero it_value would disarm it */
    memset(&its, 0, sizeof its);
    sec = floor(t);
    its.it_value.tv_sec = (time_t)sec;
    its.it_value.tv_nsec = (long)((t - sec) * 1e9);
    if (its.it_value.tv_nsec > 999999999L)
        its.it_value.tv_nsec = 999999999L;
    if (timerfd_settime(srv->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0) {
        log_msg("timerfd_settime: %s", strerror(errno));
        exit(1);
    }
    srv->pacer_at = t;
}

static void held_remove(struct server *srv, struct conn *c)
{
    struct conn **pp, *prev = NULL;

    if (!c->held)
        return;
    for (pp = &srv->held_head; *pp; prev = *pp, pp = &(*pp)->held_next) {
        if (*pp == c) {
            *pp = c->held_next;
            if (srv->held_tail == c)
                srv->held_tail = prev;
            break;
        }
    }
    c->held = 0;
    c->held_next = NULL;
}

/* ------------------------------------------------------------ closing */

static void conn_process(struct conn *c, const unsigned char *p, size_t len, double now);
static void egress_pump(struct server *srv);
static void run_fail(struct server *srv, struct conn *culprit, int code, const char *msg);
static int waiting_for(struct server *srv, const struct conn *skip, char *out, size_t len);

static void on_handle_closed(uv_handle_t *h)
{
    (void)h;
}

static void on_pacer_closed(uv_handle_t *h)
{
    struct server *srv = h->data;

    close(srv->tfd);
    srv->tfd = -1;
}

/* srv_maybe_stop: once the run is over and every connection is closed,
 * close the last handles: uv_run then returns. */
static void srv_maybe_stop(struct server *srv)
{
    if (!srv->over)
        return;
    if (srv->listener_open) {
        srv->listener_open = 0;
        uv_close((uv_handle_t *)&srv->listener, on_handle_closed);
    }
    if (srv->nconns > 0)
        return;
    if (srv->timers_open) {
        srv->timers_open = 0;
        uv_close((uv_handle_t *)&srv->tick, on_handle_closed);
        uv_close((uv_handle_t *)&srv->pacer, on_pacer_closed);
    }
}

static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    struct server *srv = c->srv;

    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->nconns--;
    if (!c->joined)
        srv->nstrangers--;
    else if (srv->by_rank[c->ses.rank] == c)
        srv->by_rank[c->ses.rank] = NULL;
    free(c->rbuf);
    free(c);
    srv_maybe_stop(srv);
}

static void conn_close(struct conn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    held_remove(c->srv, c);
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void on_ctl_written(uv_write_t *req, int status)
{
    struct conn *c = req->data;

    c->cbusy = 0;
    if (status == 0)
        c->srv->link.bytes_out += c->cqueued;
}

/* conn_send_ctl: a WELCOME or ERROR frame (text: the reason, or NULL).
 * Written at once if the socket takes it, else queued. -1 when a control
 * frame is still queued (nothing sent). */
static int conn_send_ctl(struct conn *c, uint16_t type, int code, const char *text)
{
    struct server *srv = c->srv;
    size_t tlen = text ? strlen(text) : 0, len;
    struct proto_header h;
    uv_buf_t b;
    int w;

    if (c->cbusy || c->closing)
        return -1;
    if (tlen > PROTO_TEXT_MAX)
        tlen = PROTO_TEXT_MAX;
    h = proto_header_make(type, PROTO_RANK_SERVER, srv->k, store_step(&srv->store),
                          (uint64_t)(int64_t)code, tlen);
    proto_header_encode(&h, c->cbuf);
    if (tlen)
        memcpy(c->cbuf + PROTO_HEADER_SIZE, text, tlen);
    len = PROTO_HEADER_SIZE + tlen;
    b = uv_buf_init((char *)c->cbuf, (unsigned)len);
    w = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (w == UV_EAGAIN)
        w = 0;
    if (w < 0)
        return -1;          /* the peer is gone; the read side will see it */
    srv->link.bytes_out += (uint64_t)w;
    if ((size_t)w == len)
        return 0;
    b = uv_buf_init((char *)c->cbuf + w, (unsigned)(len - (size_t)w));
    c->creq.data = c;
    c->cqueued = len - (size_t)w;
    if (uv_write(&c->creq, (uv_stream_t *)&c->tcp, &b, 1, on_ctl_written) != 0)
        return -1;
    c->cbusy = 1;
    return 0;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct conn *c = req->data;

    if (status < 0 && status != UV_ECANCELED)
        conn_close(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void conn_read_start(struct conn *c)
{
    if (c->reading || c->closing)
        return;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = 1;
}

static void conn_read_stop(struct conn *c)
{
    if (!c->reading)
        return;
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = 0;
}

/* conn_linger: send ERROR (when the outgoing stream is at a frame
 * boundary), shut our side down, and drain the peer until EOF or
 * linger_s: a close with unread bytes would reset the connection, and the
 * peer might lose the ERROR. */
static void conn_linger(struct conn *c, int code, const char *text)
{
    struct server *srv = c->srv;
    int boundary;

    if (c->closing || c->lingering)
        return;
    /* Not in the middle of a WEIGHTS frame: none of it handed out, or all
     * of it (queued writes keep their order). */
    boundary = !c->ses.pulling || srv->eg.w[c->ses.rank].sent == 0 ||
               srv->eg.w[c->ses.rank].sent == srv->eg.total;
    if (text && boundary)
        (void)conn_send_ctl(c, PROTO_ERROR, code, text);
    c->lingering = 1;
    c->linger_until = clock_now() + srv->linger_s;
    held_remove(srv, c);
    conn_read_start(c);
    c->sreq.data = c;
    if (uv_shutdown(&c->sreq, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        conn_close(c);
}

/* ------------------------------------------------------------- the run */

static void run_succeed(struct server *srv)
{
    if (srv->over)
        return;
    srv->over = 1;
    srv->exit_code = 0;
    /* Peak RSS: the figure that shows the server's memory does not grow
     * with K (experiments/bench_ps.sh reads this line). */
    struct rusage ru;
    double rss_mib = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss / 1024.0 : -1;
    log_msg("all %u workers done after %d steps; peak RSS %.1f MiB", (unsigned)srv->k,
            srv->c.steps, rss_mib);
    for (struct conn *c = srv->conns; c; c = c->next)
        conn_close(c);
    srv_maybe_stop(srv);
}

/* run_fail: the run ends: one line naming what failed (msg names the
 * worker and the step; culprit adds its address), ERROR to every worker,
 * exit status 1. */
static void run_fail(struct server *srv, struct conn *culprit, int code, const char *msg)
{
    char line[ERR_LEN * 4], text[PROTO_TEXT_MAX];

    if (srv->over)
        return;
    srv->over = 1;
    srv->exit_code = 1;
    with_peer(msg, culprit, line, sizeof line);
    log_msg("run failed: %s", line);
    say(text, sizeof text, "%s: run failed: %s", PROG, line);
    for (struct conn *c = srv->conns; c; c = c->next) {
        if (c->joined || c == culprit)
            conn_linger(c, code, text);
        else
            conn_close(c);
    }
    srv_maybe_stop(srv);
}

/* conn_refuse: a connection that has not joined sent something wrong:
 * ERROR, close, one line; the run goes on. */
static void conn_refuse(struct conn *c, int code, const char *why)
{
    log_msg("connection from %s refused: %s", c->peer, why);
    conn_linger(c, code, why);
}

/* conn_fault: a refusal on connection c: before the join only c goes;
 * after it, the run. */
static void conn_fault(struct conn *c, int code, const char *why)
{
    if (c->joined)
        run_fail(c->srv, c, code, why);
    else
        conn_refuse(c, code, why);
}

/* ------------------------------------------------------------- egress */

static void egress_finished(struct server *srv)
{
    double now = clock_now();

    srv->cur.egress_s = srv->out_last - srv->out_first;
    srv->cur.bytes_out = srv->link.bytes_out - srv->out_mark;
    srv->out_mark = srv->link.bytes_out;
    if (srv->cur.step >= (uint64_t)srv->c.warmup) {
        int rc = metrics_record_add(&srv->rec, &srv->cur);
        assert(rc == 0);    /* room for every timed step, made at start */
        (void)rc;
    }
    if (srv->cur.step + 1 == (uint64_t)srv->c.steps && srv->timing) {
        srv->rec.wall_s = now - srv->t0_wall;
        srv->rec.cpu_s = clock_cpu_seconds() - srv->t0_cpu;
        srv->timing = 0;
    }
    if (srv->finished == srv->k)
        run_succeed(srv);
}

static void on_weights_written(uv_write_t *req, int status);

/* write_piece: bytes [off, off+len) of the WEIGHTS frame to one worker:
 * what the socket takes now, the rest queued (that worker is then blocked
 * in the egress schedule until the write completes). */
static void write_piece(struct server *srv, const struct egress_piece *pc, double now)
{
    struct conn *c = srv->by_rank[pc->rank];
    const unsigned char *w = store_weights(&srv->store);
    uint64_t off = pc->off, end = pc->off + pc->len, skip;
    uv_buf_t b[2];
    unsigned nb = 0;
    int rc;
    char msg[ERR_LEN];

    if (!c || c->closing || c->lingering) {
        snprintf(msg, sizeof msg, "worker %u: gone while the weights of step %llu were "
                 "being sent", (unsigned)pc->rank, ull(srv->sending));
        run_fail(srv, c, ERR_EOF, msg);
        return;
    }
    if (off < PROTO_HEADER_SIZE) {
        uint64_t e = end < PROTO_HEADER_SIZE ? end : PROTO_HEADER_SIZE;
        b[nb++] = uv_buf_init((char *)c->whdr + off, (unsigned)(e - off));
    }
    if (end > PROTO_HEADER_SIZE) {
        uint64_t s = off > PROTO_HEADER_SIZE ? off - PROTO_HEADER_SIZE : 0;
        b[nb++] = uv_buf_init((char *)(uintptr_t)(w + s),
                              (unsigned)(end - PROTO_HEADER_SIZE - s));
    }
    if (isnan(srv->out_first))
        srv->out_first = now;
    rc = uv_try_write((uv_stream_t *)&c->tcp, b, nb);
    if (rc == UV_EAGAIN)
        rc = 0;
    if (rc < 0) {
        snprintf(msg, sizeof msg, "worker %u: sending the weights of step %llu: %s",
                 (unsigned)pc->rank, ull(srv->sending), uv_strerror(rc));
        run_fail(srv, c, ERR_EOF, msg);
        return;
    }
    srv->link.bytes_out += (uint64_t)rc;
    if (rc > 0)
        srv->last_progress = now;
    /* Taken in full, or not: from now on the rest waits on this worker's
     * reading (SILENCE). */
    c->heard = now;
    if ((uint64_t)rc == pc->len) {
        srv->out_last = clock_now();
        if (egress_rank_done(&srv->eg, pc->rank))
            c->ses.pulling = 0;
        return;
    }
    /* Queue the rest: skip what the socket took. */
    skip = (uint64_t)rc;
    for (unsigned i = 0; i < nb; i++) {
        uint64_t t = skip < b[i].len ? skip : b[i].len;
        b[i].base += t;
        b[i].len -= (size_t)t;
        skip -= t;
    }
    if (b[0].len == 0) {
        b[0] = b[1];
        nb--;
    }
    c->wreq.data = c;
    c->wqueued = pc->len - (uint64_t)rc;
    rc = uv_write(&c->wreq, (uv_stream_t *)&c->tcp, b, nb, on_weights_written);
    if (rc < 0) {
        snprintf(msg, sizeof msg, "worker %u: sending the weights of step %llu: %s",
                 (unsigned)pc->rank, ull(srv->sending), uv_strerror(rc));
        run_fail(srv, c, ERR_EOF, msg);
        return;
    }
    egress_blocked(&srv->eg, pc->rank);
}

static void on_weights_written(uv_write_t *req, int status)
{
    struct conn *c = req->data;
    struct server *srv = c->srv;
    double now = clock_now();
    char msg[ERR_LEN];

    if (srv->over || c->closing)
        return;
    if (status < 0) {
        snprintf(msg, sizeof msg, "worker %u: sending the weights of step %llu: %s",
                 (unsigned)c->ses.rank, ull(srv->sending), uv_strerror(status));
        run_fail(srv, c, ERR_EOF, msg);
        return;
    }
    srv->link.bytes_out += c->wqueued;
    srv->out_last = now;
    srv->last_progress = now;
    c->heard = now;
    egress_unblocked(&srv->eg, c->ses.rank, now);
    if (egress_rank_done(&srv->eg, c->ses.rank))
        c->ses.pulling = 0;
    egress_pump(srv);
}

/* egress_pump: write every piece that is due; arm the pacer for the next. */
static void egress_pump(struct server *srv)
{
    struct egress_piece pc;

    while (!srv->over && egress_active(&srv->eg)) {
        double now = clock_now();

        switch (egress_next(&srv->eg, now, &pc)) {
        case EGRESS_WRITE:
            write_piece(srv, &pc, now);
            continue;
        case EGRESS_WAIT:
            pacer_want(srv, pc.due);
            return;
        case EGRESS_BLOCKED:
            return;             /* a write callback pumps again */
        case EGRESS_DONE:
            egress_finished(srv);
            return;
        }
    }
}

/* ------------------------------------------------------------- a step */

static void step_apply(struct server *srv)
{
    struct store_applied ap;
    char err[ERR_LEN];
    double now;
    int rc;

    /* A push needs its worker's previous weights written (session.c), so
     * all K pushes in means the previous step's writes are done. */
    assert(!egress_active(&srv->eg));
    rc = store_apply(&srv->store, &ap, err);
    if (rc != 0) {
        run_fail(srv, NULL, rc, err);
        return;
    }
    now = clock_now();
    if (ap.step == 0 || ap.step + 1 == (uint64_t)srv->c.steps ||
        now - srv->last_log >= LOG_EVERY_S) {
        log_msg("step %llu loss %.6g %llu examples", ull(ap.step), ap.loss, ull(ap.batch));
        srv->last_log = now;
    }
    losscurve_set(&srv->loss, (size_t)ap.step, ap.loss);     /* no-op without --loss-out */
    srv->cur.step = ap.step;
    srv->cur.combine_s = NAN;
    srv->cur.ingress_s = srv->in_last - srv->in_first;
    srv->cur.bytes_in = srv->link.bytes_in - srv->in_mark;
    srv->in_mark = srv->link.bytes_in;
    srv->in_started = 0;
    srv->sending = ap.step;
    for (uint32_t r = 0; r < srv->k; r++) {
        struct conn *c = srv->by_rank[r];
        struct proto_header h = proto_header_make(PROTO_WEIGHTS, PROTO_RANK_SERVER, srv->k,
                                                  ap.step, srv->scfg.lo, srv->wlen);

        assert(c);          /* every rank pushed, so every rank is here */
        proto_header_encode(&h, c->whdr);
        c->ses.pulling = 1;
    }
    srv->out_first = NAN;
    srv->out_last = now;
    egress_start(&srv->eg, PROTO_HEADER_SIZE + srv->wlen, now);
    egress_pump(srv);
}

static void on_hello(struct conn *c, double now)
{
    struct server *srv = c->srv;
    uint32_t r = c->ses.rank;
    char why[ERR_LEN];

    /* Once all K have joined, no HELLO is taken, even for a rank whose
     * worker has finished and left: a rank joins once per run. */
    if (srv->joined == srv->k || srv->by_rank[r]) {
        if (srv->joined == srv->k && srv->by_rank[r])
            say(why, sizeof why, "HELLO refused: rank %u: the job is full (all %u "
                     "workers joined; rank %u is %s)", (unsigned)r, (unsigned)srv->k,
                     (unsigned)r, srv->by_rank[r]->peer);
        else if (srv->joined == srv->k)
            say(why, sizeof why, "HELLO refused: rank %u: the job is full (all %u "
                     "workers joined; rank %u has finished and left)", (unsigned)r,
                     (unsigned)srv->k, (unsigned)r);
        else
            say(why, sizeof why, "HELLO refused: rank %u already joined from %s",
                     (unsigned)r, srv->by_rank[r]->peer);
        conn_refuse(c, ERR_MISMATCH, why);
        return;
    }
    c->rbuf = malloc(srv->rcap);
    if (!c->rbuf) {
        snprintf(why, sizeof why, "HELLO refused: rank %u: out of memory for its read buffer",
                 (unsigned)r);
        conn_refuse(c, -ENOMEM, why);
        return;
    }
    c->rcap = srv->rcap;
    srv->by_rank[r] = c;
    c->joined = 1;
    srv->nstrangers--;
    srv->joined++;
    session_join(&c->ses);
    srv->last_progress = now;
    c->heard = now;
    (void)conn_send_ctl(c, PROTO_WELCOME, 0, NULL);
    log_msg("worker %u joined from %s (%u of %u)", (unsigned)r, c->peer,
            (unsigned)srv->joined, (unsigned)srv->k);
}

static void on_push_begin(struct server *srv, double now)
{
    if (srv->in_started)
        return;
    srv->in_started = 1;
    srv->in_first = now;
    if (store_step(&srv->store) == (uint64_t)srv->c.warmup && !srv->timing) {
        srv->timing = 1;
        srv->t0_wall = now;
        srv->t0_cpu = clock_cpu_seconds();
    }
}

/* conn_finished: a worker is done (BYE, or closed after the last step). */
static void conn_finished(struct conn *c)
{
    struct server *srv = c->srv;

    if (c->finished)
        return;
    c->finished = 1;
    srv->finished++;
    if (srv->finished == srv->k && !egress_active(&srv->eg))
        run_succeed(srv);
}

/* conn_process: bytes from a connection, at their (paced) time. */
static void conn_process(struct conn *c, const unsigned char *p, size_t len, double now)
{
    struct server *srv = c->srv;
    char err[ERR_LEN], msg[ERR_LEN + PROTO_TEXT_MAX];

    while (len > 0 && !c->closing && !c->lingering && !srv->over) {
        size_t used = 0;
        int ev = session_feed(&c->ses, &srv->store, p, len, &used, err);

        p += used;
        len -= used;
        if (ev < 0) {
            conn_fault(c, ev, err);
            return;
        }
        switch (ev) {
        case SESSION_HELLO:
            on_hello(c, now);
            break;
        case SESSION_PUSH_BEGIN:
            on_push_begin(srv, now);
            break;
        case SESSION_PUSH_END:
            srv->in_last = now;
            if (store_step_ready(&srv->store))
                step_apply(srv);
            break;
        case SESSION_BYE:
            conn_finished(c);
            break;
        case SESSION_PEER_ERROR:
            if (c->joined) {
                snprintf(msg, sizeof msg, "worker %u: sent ERROR at step %llu: %s",
                         (unsigned)c->ses.rank, ull(store_step(&srv->store)), c->ses.text);
                run_fail(srv, c, ERR_EOF, msg);
            } else {
                log_msg("connection from %s sent ERROR before HELLO: %s; closed", c->peer,
                        c->ses.text);
                conn_close(c);
            }
            return;
        default:
            break;
        }
    }
}

/* ------------------------------------------------------------- reading */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct conn *c = h->data;

    (void)suggested;
    assert(!c->held);       /* reading stops while bytes are held */
    if (c->rbuf)
        *buf = uv_buf_init((char *)c->rbuf, (unsigned)c->rcap);
    else
        *buf = uv_buf_init((char *)c->sbuf, sizeof c->sbuf);
}

/* conn_eof: the peer closed (or the connection broke). */
static void conn_eof(struct conn *c, ssize_t why)
{
    struct server *srv = c->srv;
    char err[ERR_LEN], msg[ERR_LEN * 4], list[ERR_LEN * 2], owed[96];
    int rc;

    if (c->lingering || srv->over) {
        conn_close(c);
        return;
    }
    rc = session_lost(&c->ses, &srv->store, err);
    if (!c->joined) {
        log_msg("connection from %s %s%s%s", c->peer, err,
                why == UV_EOF ? "" : ": ", why == UV_EOF ? "" : uv_strerror((int)why));
        conn_close(c);
        return;
    }
    if (rc == 0) {
        conn_close(c);
        conn_finished(c);
        return;
    }
    if (why != UV_EOF)
        say(msg, sizeof msg, "%s (%s)", err, uv_strerror((int)why));
    else
        say(msg, sizeof msg, "%s", err);
    /* A worker that owed nothing and hung up most likely timed out waiting
     * for the server, which was itself waiting for someone else (a stalled
     * worker): name them too. */
    owed[0] = '\0';
    if (!c->ses.pulling && c->ses.hdr_have == 0)
        session_waiting(&c->ses, &srv->store, owed, sizeof owed);
    if (!owed[0] && !c->ses.pulling && c->ses.hdr_have == 0 &&
        waiting_for(srv, c, list, sizeof list) > 0) {
        size_t o = strlen(msg);
        say(msg + o, sizeof msg - o, ", having sent all it owed (its own timeout?); "
            "the server was waiting for %s", list);
    }
    run_fail(srv, c, rc, msg);
    conn_close(c);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    struct server *srv = c->srv;
    double now, due;

    if (nread == 0)
        return;
    if (nread < 0) {
        conn_eof(c, nread);
        return;
    }
    srv->link.bytes_in += (uint64_t)nread;
    if (c->closing || c->lingering || srv->over)
        return;             /* draining */
    now = clock_now();
    c->heard = now;
    if (c->joined)
        srv->last_progress = now;
    if (srv->link.ingress.rate > 0) {
        due = link_ingress_reserve(&srv->link, (size_t)nread, now);
        if (due > now) {
            /* Hold the bytes where they are until the link lets them in. */
            conn_read_stop(c);
            c->held = 1;
            c->held_p = (const unsigned char *)buf->base;
            c->held_len = (size_t)nread;
            c->held_due = due;
            c->held_next = NULL;
            if (srv->held_tail)
                srv->held_tail->held_next = c;
            else
                srv->held_head = c;
            srv->held_tail = c;
            pacer_want(srv, due);
            return;
        }
    }
    conn_process(c, (const unsigned char *)buf->base, (size_t)nread, now);
}

/* on_pacer: the link's next deadline came: release held reads in order,
 * then write the weights pieces that are due. */
static void on_pacer(uv_poll_t *h, int status, int events)
{
    struct server *srv = h->data;
    uint64_t expirations;
    double now = clock_now();

    (void)status;
    (void)events;
    (void)!read(srv->tfd, &expirations, sizeof expirations);
    srv->pacer_at = INFINITY;
    while (srv->held_head && srv->held_head->held_due <= now && !srv->over) {
        struct conn *c = srv->held_head;

        srv->held_head = c->held_next;
        if (!srv->held_head)
            srv->held_tail = NULL;
        c->held = 0;
        c->held_next = NULL;
        /* The link's wait was not idle time. */
        srv->last_progress = now;
        c->heard = now;
        conn_process(c, c->held_p, c->held_len, now);
        if (!c->closing && !c->lingering && !srv->over)
            conn_read_start(c);
        now = clock_now();
    }
    if (srv->held_head && !srv->over)
        pacer_want(srv, srv->held_head->held_due);
    egress_pump(srv);
}

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
    struct conn *c;

    if (status < 0) {
        log_msg("accept: %s", uv_strerror(status));
        return;
    }
    c = calloc(1, sizeof *c);
    if (!c) {
        log_msg("accept: out of memory");
        return;
    }
    c->srv = srv;
    CHECK(uv_tcp_init(&srv->loop, &c->tcp));
    c->tcp.data = c;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->nconns++;
    srv->nstrangers++;
    session_init(&c->ses, &srv->scfg);
    c->accepted = clock_now();
    if (uv_accept(l, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    peer_name(&c->tcp, c->peer, sizeof c->peer);
    if (srv->over) {
        conn_close(c);
        return;
    }
    if (srv->nstrangers > STRANGERS_MAX + srv->k - srv->joined) {
        log_msg("connection from %s refused: %u connections have not said HELLO", c->peer,
                srv->nstrangers - 1);
        conn_close(c);
        return;
    }
    (void)uv_tcp_nodelay(&c->tcp, 1);
    conn_read_start(c);
}

/* ------------------------------------------------------------ the clock */

/* owes: what joined worker c still owes the step, as a phrase in out
 * ("no push for step 3 yet", "not taking the weights of step 2 (...)");
 * empty when it owes nothing. Returns 1 when the server is waiting on the
 * worker itself (SILENCE): it owes bytes, or a write of the weights sits
 * on its full socket. 0 when it owes nothing, or when the next piece of
 * its weights is the server's to send. */
static int owes(struct server *srv, const struct conn *c, char *out, size_t len)
{
    uint32_t r = c->ses.rank;

    out[0] = '\0';
    if (c->ses.pulling && !egress_rank_done(&srv->eg, r)) {
        say(out, len, "not taking the weights of step %llu (%llu of %llu bytes written)",
            ull(srv->sending), ull(srv->eg.w[r].sent - (srv->eg.w[r].blocked ? c->wqueued : 0)),
            ull(srv->eg.total));
        return srv->eg.w[r].blocked;
    }
    session_waiting(&c->ses, &srv->store, out, len);
    return out[0] != '\0';
}

/* waiting_for: "; "-separated, what each worker (but skip) still owes the
 * step: not joined, its push, its BYE, or taking the weights. OUT: out.
 * Returns how many were named. */
static int waiting_for(struct server *srv, const struct conn *skip, char *out, size_t len)
{
    char what[NET_ADDR_LEN + 160], owed[128];
    size_t o = 0;
    int named = 0;

    out[0] = '\0';
    for (uint32_t r = 0; r < srv->k && o + 1 < len; r++) {
        struct conn *c = srv->by_rank[r];

        what[0] = '\0';
        if (c == skip && c)
            continue;
        if (!c) {
            say(what, sizeof what, "worker %u: not joined", (unsigned)r);
        } else {
            (void)owes(srv, c, owed, sizeof owed);
            if (owed[0])
                say(what, sizeof what, "worker %u (%s): %s", (unsigned)r, c->peer, owed);
        }
        if (what[0]) {
            say(out + o, len - o, "%s%s", named ? "; " : "", what);
            o += strlen(out + o);
            named++;
        }
    }
    return named;
}

/* idle_fail: no byte moved for --timeout: name who the server waits for. */
static void idle_fail(struct server *srv)
{
    char msg[ERR_LEN * 4], list[ERR_LEN * 3];

    if (waiting_for(srv, NULL, list, sizeof list) == 0)
        snprintf(list, sizeof list, "nothing (internal: idle with no one to wait for)");
    say(msg, sizeof msg, "step %llu: no progress for %.1f s; waiting for %s",
        ull(store_step(&srv->store)), srv->timeout, list);
    run_fail(srv, NULL, ERR_TIMEOUT, msg);
}

/* silence_check: SILENCE (see the top). Every joined worker the server is
 * waiting on has its own clock, c->heard, restarted by every byte read
 * from it, every write of the weights to it that completes, and every
 * moment the server is not waiting on it (it owes nothing, the link holds
 * its bytes, the next piece is the server's to send). A clock that reaches
 * --timeout fails the run naming that worker (the longest silent, if
 * several). This is what catches a stopped worker while the others still
 * make progress: a single clock for the whole server would restart with
 * each of their bytes, and the workers waiting for the step would time
 * out before the server named the culprit. */
static void silence_check(struct server *srv, double now)
{
    struct conn *worst = NULL;
    char what[128], msg[ERR_LEN];

    for (uint32_t r = 0; r < srv->k; r++) {
        struct conn *c = srv->by_rank[r];

        if (!c || c->closing || c->lingering)
            continue;
        if (c->held || !owes(srv, c, what, sizeof what)) {
            c->heard = now;
            continue;
        }
        if (now - c->heard >= srv->timeout && (!worst || c->heard < worst->heard))
            worst = c;
    }
    if (!worst)
        return;
    (void)owes(srv, worst, what, sizeof what);
    say(msg, sizeof msg, "worker %u: no progress for %.1f s (--timeout) at step %llu: %s",
        (unsigned)worst->ses.rank, srv->timeout, ull(store_step(&srv->store)), what);
    run_fail(srv, worst, ERR_TIMEOUT, msg);
    /* The ERROR went out if its socket had room. Lingering for a worker
     * that does not read would only hold the server's exit back. */
    conn_close(worst);
}

/* excuse_lateness: the tick came `late` seconds after it was due: the
 * server itself did not run (a long callback, a loaded machine), and the
 * bytes that came meanwhile are still unread, since libuv runs timers
 * before it polls. That time is no one's silence: every clock moves on by
 * it. */
static void excuse_lateness(struct server *srv, double late, double now)
{
    srv->last_progress = fmin(now, srv->last_progress + late);
    for (struct conn *c = srv->conns; c; c = c->next) {
        c->heard = fmin(now, c->heard + late);
        c->accepted = fmin(now, c->accepted + late);
    }
}

static void on_tick(uv_timer_t *t)
{
    struct server *srv = t->data;
    double now = clock_now(), gap = now - srv->last_tick;
    struct conn *c, *next;

    srv->last_tick = now;
    if (gap > 2 * srv->tick_s)
        excuse_lateness(srv, gap - srv->tick_s, now);
    for (c = srv->conns; c; c = next) {
        next = c->next;
        if (c->closing)
            continue;
        if (c->lingering) {
            if (now >= c->linger_until)
                conn_close(c);
            continue;
        }
        /* From the accept, not the last byte: a HELLO comes in one go, and
         * a stranger trickling bytes must not keep a slot forever. */
        if (!c->joined && !srv->over && !c->held && now - c->accepted >= srv->timeout) {
            char why[ERR_LEN];

            snprintf(why, sizeof why, "no complete HELLO within %.1f s of connecting "
                     "(%llu bytes received)", srv->timeout, ull(c->ses.bytes));
            conn_refuse(c, ERR_TIMEOUT, why);
        }
    }
    if (srv->over)
        return;
    silence_check(srv, now);
    if (srv->over)
        return;
    /* The whole server's clock: what no worker's clock covers (workers
     * that have not joined). The link holding bytes back is not idle time
     * (net.h). */
    if (srv->held_head || (srv->eg.active && srv->eg.have && srv->eg.res.due > now)) {
        srv->last_progress = now;
        return;
    }
    if (now - srv->last_progress >= srv->timeout)
        idle_fail(srv);
}

/* ---------------------------------------------------------------- main */

static void describe_link(const struct server *srv, char *out, size_t len)
{
    if (!link_active(&srv->link))
        snprintf(out, len, "link off (loopback speed)");
    else
        snprintf(out, len, "link EMULATED %.6g MB/s, latency %.6g us",
                 srv->c.link_bw / 1e6, srv->c.link_latency * 1e6);
}

int main(int argc, char **argv)
{
    static struct server srv_storage;
    struct server *srv = &srv_storage;
    const char *listen_at = "127.0.0.1:0", *port_file = NULL;
    struct shard shard = { 0, 1 };
    int workers = -1, port = 0, bound = 0, lfd = -1, rc;
    char host[NET_HOST_LEN], err[ERR_LEN], linkdesc[96];
    struct workload wl;
    struct workload_cfg wcfg;
    uint64_t lo, hi;
    void *w0;
    const struct cli_opt own[] = {
        { "listen", CLI_STRING, &listen_at, "HOST:PORT",
          "address to listen on (default 127.0.0.1:0, a free port)", 0, 0, NULL },
        { "port-file", CLI_STRING, &port_file, "FILE",
          "write the port it listens on to FILE (for port 0)", 0, 0, NULL },
        { "workers", CLI_INT, &workers, "K", "number of workers K (same as --world)",
          1, PROTO_MAX_WORLD, NULL },
        { "shard", CLI_CUSTOM, &shard, "I/S",
          "own part I of S of the parameter vector (default 0/1)", 0, 0, parse_shard },
        { "loss-out", CLI_STRING, &srv->loss_out, "FILE",
          "write the global loss of every step to FILE at the end (shard 0 only)", 0, 0, NULL },
        { "mistake", CLI_CUSTOM, &srv->mistake, MISTAKE_METAVAR, MISTAKE_HELP, 0, 0,
          mistake_parse },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *tables[3];

    memset(srv, 0, sizeof *srv);
    srv->tfd = -1;
    cli_common_defaults(&srv->c);
    tables[0] = own;
    tables[1] = cli_common_opts(&srv->c);
    tables[2] = NULL;
    cli_main_parse(PROG, "--workers K [--listen HOST:PORT] [--port-file FILE] "
                   "[--shard I/S] [--loss-out FILE] [--mistake NAME] [common flags]",
                   argc, argv, tables);

    /* --workers K, or the common --world K: the server has no rank of its
     * own, so rank discovery must not run (or fail) for it. */
    if (workers > 0 && srv->c.world > 0 && workers != srv->c.world)
        usage_fail("--workers %d and --world %d disagree", workers, srv->c.world);
    if (workers < 0)
        workers = srv->c.world;
    if (workers < 1)
        usage_fail("--workers: required (the number of workers K; --world K also works)");
    srv->c.world = workers;
    if (srv->c.rank < 0)
        srv->c.rank = 0;
    if (cli_common_finish(&srv->c, err) != 0)
        usage_fail("%s", err);
    if (net_parse_hostport(listen_at, host, sizeof host, &port, err) != 0)
        usage_fail("--listen: %s", err);
    if (port_file && !dir_writable(port_file))
        usage_fail("--port-file: the folder of '%.200s' does not exist or is not writable",
                   port_file);
    if (srv->loss_out && !dir_writable(srv->loss_out))
        usage_fail("--loss-out: the folder of '%.200s' does not exist or is not writable",
                   srv->loss_out);
    if (link_init(&srv->link, srv->c.link_bw, srv->c.link_latency) != 0)
        usage_fail("--link-bw/--link-latency: rate %g B/s, latency %g s out of range",
                   srv->c.link_bw, srv->c.link_latency);

    signal(SIGPIPE, SIG_IGN);
    clock_precise_timers();
    log_init(PROG, shard.i);
    mistake_announce(srv->mistake);
    srv->k = (uint32_t)workers;
    srv->timeout = srv->c.timeout;
    srv->linger_s = fmin(LINGER_MAX_S, srv->timeout / 4);

    /* The same workload as the workers: n, B and the initial weights. */
    memset(&wcfg, 0, sizeof wcfg);
    wcfg.kind = srv->c.workload;
    wcfg.dtype = srv->c.dtype;
    wcfg.seed = srv->c.seed;
    wcfg.params = srv->c.params;
    wcfg.batch = srv->c.batch;
    if (wcfg.kind == WORKLOAD_SYNTHETIC && wcfg.params == 0)
        usage_fail("--params: required with --workload synthetic");
    if ((rc = workload_create(&wl, &wcfg)) != 0)
        usage_fail("--workload %s: cannot build it (%s)", workload_name(wcfg.kind), err_str(rc));
    if ((uint64_t)shard.s > wl.n)
        usage_fail("--shard %d/%d: more servers than the %zu parameters", shard.i, shard.s, wl.n);
    workload_split(wl.n, shard.s, shard.i, NULL, &lo, &hi);
    srv->es = dtype_size(srv->c.dtype);
    srv->wlen = (hi - lo) * srv->es;
    srv->scfg = (struct session_cfg){
        .world = srv->k, .n = wl.n, .lo = lo, .hi = hi, .dtype = srv->c.dtype,
        .workload = srv->c.workload, .seed = srv->c.seed, .token = cli_token(),
        .batch = wl.batch, .steps = (uint64_t)srv->c.steps,
    };
    /* The full vector once, for its slice: freed before the accumulator's
     * pages are first touched, so the peak stays at two shard buffers. */
    w0 = malloc(wl.n * srv->es);
    if (!w0) {
        log_msg("out of memory for %zu initial weights", wl.n);
        return 1;
    }
    workload_init_weights(&wl, w0);
    rc = store_init(&srv->store, &(struct store_cfg){
                        .n = (size_t)(hi - lo), .offset = lo, .dtype = srv->c.dtype,
                        .world = srv->k, .lr = srv->c.lr,
                        .weights = (unsigned char *)w0 + lo * srv->es,
                        /* The mistakes the server makes itself (mistake.h). */
                        .pushes_per_step = srv->mistake == MISTAKE_SYNC_EVERY_MICRO ?
                                           (uint32_t)srv->c.micro : 1,
                        .divide_by_one = srv->mistake == MISTAKE_SUM_NOT_MEAN }, err);
    free(w0);
    if (rc != 0) {
        log_msg("%s", err);
        return 1;
    }
    srv->by_rank = calloc(srv->k, sizeof *srv->by_rank);
    /* Every shard has every worker's loss; shard 0 alone writes the file. */
    if (srv->loss_out && shard.i > 0)
        srv->loss_out = NULL;
    if (!srv->by_rank || egress_init(&srv->eg, srv->k, &srv->link, EGRESS_CHUNK) != 0 ||
        metrics_record_init(&srv->rec, (size_t)(srv->c.steps - srv->c.warmup)) != 0 ||
        (srv->loss_out && losscurve_init(&srv->loss, (size_t)srv->c.steps) != 0)) {
        log_msg("out of memory for %u workers", (unsigned)srv->k);
        return 1;
    }
    /* Read buffers: at most one link piece when paced; smaller when K is
     * huge, so that all of them together stay bounded. */
    srv->rcap = READ_BUF_TOTAL / srv->k;
    if (srv->rcap > READ_BUF_MAX)
        srv->rcap = READ_BUF_MAX;
    if (srv->rcap < READ_BUF_MIN)
        srv->rcap = READ_BUF_MIN;
    if (link_active(&srv->link) && link_piece(&srv->link) < srv->rcap)
        srv->rcap = link_piece(&srv->link);
    snprintf(srv->rec.system, sizeof srv->rec.system, "ps");
    snprintf(srv->rec.role, sizeof srv->rec.role, "server");
    srv->rec.algo[0] = '\0';
    snprintf(srv->rec.transport, sizeof srv->rec.transport, "tcp");
    srv->rec.rank = shard.i;
    srv->rec.world = (int)srv->k;
    srv->rec.bytes = (uint64_t)wl.n * srv->es;
    srv->rec.link_bw = srv->c.link_bw;
    srv->rec.link_latency = srv->c.link_latency;
    srv->rec.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    srv->out_first = NAN;

    /* Sockets and timers. */
    if ((rc = net_listen(host, port, &lfd, &bound, err)) != 0) {
        log_msg("%s", err);
        return 1;
    }
    CHECK(uv_loop_init(&srv->loop));
    CHECK(uv_tcp_init(&srv->loop, &srv->listener));
    srv->listener.data = srv;
    CHECK(uv_tcp_open(&srv->listener, lfd));
    if ((rc = uv_listen((uv_stream_t *)&srv->listener, 128, on_connection)) != 0) {
        log_msg("listen %s: %s", listen_at, uv_strerror(rc));
        return 1;
    }
    srv->listener_open = 1;
    srv->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (srv->tfd < 0) {
        log_msg("timerfd_create: %s", strerror(errno));
        return 1;
    }
    srv->pacer_at = INFINITY;
    CHECK(uv_poll_init(&srv->loop, &srv->pacer, srv->tfd));
    srv->pacer.data = srv;
    CHECK(uv_poll_start(&srv->pacer, UV_READABLE, on_pacer));
    CHECK(uv_timer_init(&srv->loop, &srv->tick));
    srv->tick.data = srv;
    {
        /* T/20: a silent worker is named within T + T/20 of its last byte. */
        double ms = srv->timeout * 1000.0 / 20.0;
        uint64_t every = ms < 10 ? 10 : ms > 250 ? 250 : (uint64_t)ms;
        srv->tick_s = (double)every / 1000.0;
        CHECK(uv_timer_start(&srv->tick, on_tick, every, every));
    }
    srv->timers_open = 1;
    if (port_file && (rc = net_port_file_write(port_file, bound, err)) != 0) {
        log_msg("%s", err);
        return 1;
    }
    describe_link(srv, linkdesc, sizeof linkdesc);
    log_msg("listening on %s:%d for %u workers: %s n %zu %s, elements [%llu, %llu) "
            "(shard %d/%d), B %llu, %d steps, lr %g; %s", host, bound, (unsigned)srv->k,
            workload_name(wl.kind), wl.n, dtype_name(srv->c.dtype), ull(lo), ull(hi),
            shard.i, shard.s, ull(wl.batch), srv->c.steps, srv->c.lr, linkdesc);
    workload_destroy(&wl);

    srv->last_progress = srv->last_tick = clock_now();
    srv->last_log = -INFINITY;
    uv_run(&srv->loop, UV_RUN_DEFAULT);

    if (srv->exit_code == 0 && srv->c.csv &&
        metrics_record_write(&srv->rec, srv->c.csv, err) != 0) {
        log_msg("%s", err);
        srv->exit_code = 1;
    }
    /* The loss file also after a failure: the steps applied until then
     * (a diverging run is worth plotting), marked incomplete. */
    if (srv->loss_out &&
        losscurve_write(&srv->loss, srv->loss_out, "the run failed", err) != 0) {
        log_msg("%s", err);
        srv->exit_code = 1;
    }
    rc = uv_loop_close(&srv->loop);
    assert(rc == 0);        /* every handle was closed */
    if (srv->tfd >= 0)
        close(srv->tfd);
    metrics_record_free(&srv->rec);
    losscurve_free(&srv->loss);
    egress_destroy(&srv->eg);
    free(srv->by_rank);
    store_destroy(&srv->store);
    cli_common_free(&srv->c);
    return srv->exit_code;
}
