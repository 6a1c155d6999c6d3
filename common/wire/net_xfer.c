/* net_xfer.c -- TCP transfers for psring: net_send_all, net_recv_all and
 * net_sendrecv (net.h), paced through the link, under the idle timeout.
 *
 * Every wait is a ppoll() with a deadline (net_wait_until, net.c): the
 * idle-progress deadline of a transfer, restarted by every byte that
 * moves and suspended while the emulated link holds a direction back,
 * since that wait is the link's, not the peer's.
 *
 * One engine (xfer) moves bytes for net_send_all, net_recv_all and
 * net_sendrecv: each direction advances as far as it can without blocking
 * (a reserved piece whose deadline has come, or whatever the socket
 * takes), then the thread waits for the earliest of: a socket becoming
 * ready, a link deadline, the idle deadline. One thread can so keep both
 * directions of a ring step busy, and neither can deadlock the other: a
 * full send buffer never stops the receive side from draining.
 *
 * Pacing (link.h): a send reserves each piece of at most link_piece()
 * bytes with link_send_reserve(), waits for its deadline and writes it; a
 * receive reads at most one piece (after a read cut short inside a piece,
 * only its rest: link_ingress_next, so that a read never runs from one
 * kernel buffer into the next), reserves it with link_ingress_join()
 * and neither reads more nor returns before the returned time (the bytes
 * count as received then), booked at the time
 * the kernel received those bytes (SO_TIMESTAMPNS), so a reader that was
 * descheduled for a while catches up instead of shifting the link's
 * schedule for good: the link was busy, the reader merely late.
 */
#include "net.h"
#include "net_internal.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"

/* A sleep overshoots its deadline by 30-80 us on a busy VM. The last piece
 * of a send is the one whose lateness the peer sees (a latency-bound
 * message is one piece), so its wait sleeps until this long before the
 * deadline and spins the rest; earlier pieces just sleep, as the link's
 * timeline absorbs their oversleep. Not when the processes outnumber the
 * CPUs (net_busy_poll(0)): there the spin is CPU a peer needs, 75 us a
 * send, and a K = 16 ring on 2 cores made 180 polls a ring step. */
#define SPIN_S          75e-6
/* Waking a sleeping thread costs 30-40 us on this VM, as much as a small
 * all-reduce step's whole transfer. With busy-polling on (net_busy_poll),
 * a transfer with little left to move (every pending direction at most
 * BUSY_BYTES) retries its sockets for up to that long before it sleeps in
 * ppoll, yielding the CPU between tries. Not while the link holds a
 * direction: that wait has a known end and sleeps until it. */
#define BUSY_BYTES      (64u << 10)

static double busy_s;       /* net_busy_poll's setting; 0: off */

static int spin_ok = 1;     /* SPIN_S's spin; off once net_busy_poll(0) says the
                               processes outnumber the CPUs */

/* net_stats (net.h): counters, and times in nanoseconds. */
enum { ST_XFERS, ST_SENDS, ST_RECVS, ST_SEND_AGAIN, ST_RECV_AGAIN, ST_SPINS, ST_WAITS_LINK,
       ST_WAITS_PEER, ST_WAITS_BOTH, ST_T_XFER, ST_T_LINK, ST_T_PEER, ST_T_BOTH, ST_LATE, ST_NOSTAMP, ST_N };
static _Atomic uint64_t stats[ST_N];

static void count(int which, uint64_t n)
{
    atomic_fetch_add_explicit(&stats[which], n, memory_order_relaxed);
}

static void count_s(int which, double s)
{
    if (s > 0)
        count(which, (uint64_t)(s * 1e9));
}

void net_stats_get(struct net_stats *o)
{
    uint64_t v[ST_N];

    for (int i = 0; i < ST_N; i++)
        v[i] = atomic_load_explicit(&stats[i], memory_order_relaxed);
    *o = (struct net_stats){ v[ST_XFERS], v[ST_SENDS], v[ST_RECVS], v[ST_SEND_AGAIN],
                             v[ST_RECV_AGAIN], v[ST_SPINS], v[ST_WAITS_LINK], v[ST_WAITS_PEER],
                             v[ST_WAITS_BOTH], (double)v[ST_T_XFER] * 1e-9,
                             (double)v[ST_T_LINK] * 1e-9, (double)v[ST_T_PEER] * 1e-9,
                             (double)v[ST_T_BOTH] * 1e-9, (double)v[ST_LATE] * 1e-9 };
}

/* PSR_NET_STATS=1: the breakdown on stderr at exit (net.h). */
__attribute__((destructor)) static void stats_at_exit(void)
{
    const char *e = getenv("PSR_NET_STATS");
    struct net_stats st;

    if (!e || strcmp(e, "1") != 0)
        return;
    net_stats_get(&st);
    fprintf(stderr, "net_stats pid %ld: xfers %llu t_xfer %.6f sends %llu (again %llu) recvs %llu "
            "(again %llu) waits link %llu %.6f s, peer %llu %.6f s, both %llu %.6f s; late %.6f s; "
            "spins %llu nostamp %llu\n", (long)getpid(), (unsigned long long)st.xfers, st.t_xfer,
            (unsigned long long)st.sends, (unsigned long long)st.send_again,
            (unsigned long long)st.recvs, (unsigned long long)st.recv_again,
            (unsigned long long)st.waits_link, st.t_wait_link, (unsigned long long)st.waits_peer,
            st.t_wait_peer, (unsigned long long)st.waits_both, st.t_wait_both, st.late_s,
            (unsigned long long)st.spins, (unsigned long long)atomic_load(&stats[ST_NOSTAMP]));
}

void net_busy_poll(double seconds)
{
    busy_s = seconds > 0 ? seconds : 0;
    spin_ok = busy_s > 0;
}

/* recv_stamped: recv() that also reports, on clock_now()'s scale, when the
 * kernel received the newest of the bytes read (*arrived; NAN if unknown),
 * and the kernel's stamp itself, exactly, as a key that is equal for two
 * reads of one kernel buffer (*stamp: nanoseconds, modulo 10^6 s, exact in
 * a double; NAN if unknown). */
static ssize_t recv_stamped(int fd, void *p, size_t n, double *arrived, double *stamp)
{
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = { .iov_base = p, .iov_len = n };
    struct msghdr m;
    struct cmsghdr *c;
    ssize_t r;

    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl.buf;
    m.msg_controllen = sizeof ctl.buf;
    *arrived = *stamp = NAN;
    r = recvmsg(fd, &m, MSG_DONTWAIT);
    if (r <= 0)
        return r;
    for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts, real;
            memcpy(&ts, CMSG_DATA(c), sizeof ts);
            clock_gettime(CLOCK_REALTIME, &real);
            *stamp = (double)(ts.tv_sec % 1000000) * 1e9 + (double)ts.tv_nsec;
            /* The stamp is on the real-time clock: convert by its age. */
            *arrived = clock_now() - ((double)(real.tv_sec - ts.tv_sec) +
                                      (double)(real.tv_nsec - ts.tv_nsec) * 1e-9);
        }
    }
    return r;
}

/* ------------------------------------------------------------- transfers */

/* One direction of a transfer. */
struct dir {
    int fd;
    int send;             /* 1: send buf, 0: receive into buf */
    const char *peer;
    unsigned char *buf;
    size_t len, done;
    size_t need;          /* recv: done once this many are in (0: len) */
    /* pacing */
    double due;           /* send: piece deadline; recv: read nothing before */
    size_t end;           /* send: end of the reserved piece */
    int armed;            /* send: a piece is reserved */
    int held;             /* waiting for `due` (the link's wait, not idle) */
    int late;             /* recv: woke from a link wait, no EAGAIN since */
    int ready;            /* the socket may take/give bytes (else poll it) */
    /* recv: FRAME DEADLINES (net.h) */
    struct net_frame *frame;  /* NULL: none */
    size_t got0;          /* frame->got when the call began */
    double mark;          /* when its clock last started; NAN: stopped */
};

static const char *peer_name(const struct dir *x)
{
    return x->peer ? x->peer : "peer";
}

static int io_fail(const struct dir *x, int rc, char *err)
{
    if (rc == ERR_EOF)
        err_say(err, "recv from %s: connection closed after %zu of %zu bytes",
            peer_name(x), x->done, x->len);
    else
        err_say(err, "%s %s: %s (after %zu of %zu bytes)", x->send ? "send to" : "recv from",
            peer_name(x), err_str(rc), x->done, x->len);
    return rc;
}

/* advance_send: write as much as the link and the socket allow now.
 * Returns 0, or a negative code; sets x->held / x->ready for the wait. */
static int advance_send(struct dir *x, struct link *l, int pace, size_t piece,
                        double *last, int *moved, char *err)
{
    while (x->done < x->len) {
        double now = clock_now();
        size_t lim = x->len;
        ssize_t w;

        if (pace) {
            if (!x->armed) {
                size_t n = x->len - x->done < piece ? x->len - x->done : piece;
                x->due = link_send_reserve(l, n, now, x->done > 0);
                x->end = x->done + n;
                x->armed = 1;
                x->held = 1;
            }
            if (x->held) {
                if (now < x->due)
                    return 0;
                link_send_woke(l, now);
                count_s(ST_LATE, now - x->due);
                x->held = 0;
                *last = now;          /* the link's wait is not idle time */
            }
            lim = x->end;
        }
        if (!x->ready)
            return 0;           /* wait for POLLOUT first */
        w = send(x->fd, x->buf + x->done, lim - x->done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                count(ST_SEND_AGAIN, 1);
                x->ready = 0;
                return 0;
            }
            return io_fail(x, -errno, err);
        }
        count(ST_SENDS, 1);
        x->done += (size_t)w;
        if (l)
            l->bytes_out += (uint64_t)w;
        *last = clock_now();
        *moved = 1;
        if (pace && x->done == x->end)
            x->armed = 0;
    }
    return 0;
}

/* advance_recv: read as much as the link and the socket allow now. */
static int advance_recv(struct dir *x, struct link *l, int pace, size_t piece,
                        double *last, int *moved, char *err)
{
    while (x->done < x->need || x->held) {
        double now = clock_now(), t, arrived, stamp;
        size_t want = x->len - x->done;
        ssize_t r;

        if (x->held) {
            if (now < x->due)
                return 0;
            count_s(ST_LATE, now - x->due);
            x->held = 0;
            x->late = 1;
            *last = now;
            if (x->done == x->len)
                return 0;       /* the last bytes are received now */
        }
        if (!x->ready)
            return 0;           /* wait for POLLIN first */
        if (want > piece)
            want = piece;
        /* After a read cut short inside a piece (a header), the rest of
         * that piece only: one kernel buffer, one stamp (link.h). */
        if (pace && want > link_ingress_next(l))
            want = link_ingress_next(l);
        arrived = stamp = NAN;
        if (pace)
            r = recv_stamped(x->fd, x->buf + x->done, want, &arrived, &stamp);
        else
            r = recv(x->fd, x->buf + x->done, want, MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                count(ST_RECV_AGAIN, 1);
                x->ready = 0;
                x->late = 0;
                return 0;
            }
            return io_fail(x, -errno, err);
        }
        if (r == 0)
            return io_fail(x, ERR_EOF, err);
        count(ST_RECVS, 1);
        x->done += (size_t)r;
        now = clock_now();
        *last = now;
        *moved = 1;
        if (l)
            l->bytes_in += (uint64_t)r;
        if (pace) {
            /* Book the bytes when they reached us, not when this thread
             * got around to reading them: a reader that was descheduled
             * must not push the link's schedule back for good. Without a
             * timestamp: a reader that woke late from the link's wait and
             * found data waiting books from the time it meant to wake.
             * Bytes of one kernel buffer (one stamp) read in parts are
             * booked as one (link_ingress_join). */
            if (isnan(stamp))
                count(ST_NOSTAMP, 1);
            if (!isnan(arrived))
                t = fmin(arrived, now);
            else
                t = x->late ? x->due : now;
            x->due = link_ingress_join(l, (size_t)r, t, stamp, (size_t)r == want);
            x->held = x->due > now;     /* also the last piece: held until due */
            /* link.h, VIRTUAL TIMELINE: only a frame's last bytes can
             * be what the next send forwards (a part read before them
             * never is: the clocks are read once a frame). */
            if (x->done == x->len && (!x->frame || (x->got0 + x->done >= x->frame->len &&
                                                    x->got0 + x->done >= x->frame->whole)))
                net_vt_read_done(now);
        }
    }
    return 0;
}

/* finished: every byte moved, and a receive's last piece released by the
 * link (link.h: the reader holds what it read until the booked time). */
static int finished(const struct dir *x)
{
    return x->done >= x->need && !x->held;
}

static int idle_fail(struct dir *d, int n, double idle_s, char *err)
{
    const struct dir *s = NULL, *r = NULL;

    for (int i = 0; i < n; i++) {
        if (d[i].done < d[i].len) {
            if (d[i].send)
                s = &d[i];
            else
                r = &d[i];
        }
    }
    if (r && s)
        err_say(err, "recv from %s / send to %s: timed out after %.1f s without progress "
            "(got %zu of %zu, sent %zu of %zu bytes)", peer_name(r), peer_name(s), idle_s,
            r->done, r->len, s->done, s->len);
    else if (r)
        err_say(err, "recv from %s: timed out after %.1f s without progress (got %zu of %zu bytes)",
            peer_name(r), idle_s, r->done, r->len);
    else if (s)
        err_say(err, "send to %s: timed out after %.1f s without progress (sent %zu of %zu bytes)",
            peer_name(s), idle_s, s->done, s->len);
    return ERR_TIMEOUT;
}

/* ------------------------------------------------------ frame deadlines */

void net_frame_begin(struct net_frame *f, size_t len)
{
    f->len = len;
    f->got = 0;
    f->spent = 0;
    f->expired = 0;
    f->flows = 1;
    f->whole = 0;
}

double net_frame_budget(const struct link *l, size_t len, double idle_s)
{
    double rate = NET_FLOOR_RATE, lat = 0;

    if (l && l->ingress.rate > 0 && l->ingress.rate < rate)
        rate = l->ingress.rate;
    if (l)
        lat = l->latency_s;
    return idle_s + lat + (double)len / rate;
}

/* frame_budget: f's deadline in receiving time, its flows counted. */
static double frame_budget(const struct net_frame *f, struct link *l, double idle_s)
{
    double flows = f->flows > 1 ? f->flows : 1;

    return net_frame_budget(l, (size_t)((double)f->len * flows), idle_s);
}

/* frame_clock: bring x's frame clock up to now: stopped while the link
 * holds x, running from the frame's first byte otherwise. Returns the
 * time left before the frame's deadline (INFINITY: no deadline running). */
static double frame_clock(struct dir *x, struct link *l, double idle_s, double now)
{
    struct net_frame *f = x->frame;

    if (!f)
        return INFINITY;
    f->got = x->got0 + x->done;
    if (x->held) {
        if (!isnan(x->mark))
            f->spent += now - x->mark;
        x->mark = NAN;
        return INFINITY;
    }
    if (f->got == 0 || idle_s <= 0)
        return INFINITY;
    if (isnan(x->mark))
        x->mark = now;
    return frame_budget(f, l, idle_s) - (f->spent + now - x->mark);
}

/* frame_stop: the call ends; the frame's clock stops until the next one. */
static void frame_stop(struct dir *x)
{
    if (!x->frame)
        return;
    x->frame->got = x->got0 + x->done;
    if (!isnan(x->mark))
        x->frame->spent += clock_now() - x->mark;
    x->mark = NAN;
}

static int frame_fail(const struct dir *x, struct link *l, double idle_s, char *err)
{
    struct net_frame *f = x->frame;

    f->expired = 1;
    err_say(err, "recv from %s: frame not complete %.1f s after its first byte (got %zu of "
        "%zu bytes; allowed the %.1f s timeout plus its time at the link's rate, at least "
        "%.0f bytes/s)", peer_name(x), frame_budget(f, l, idle_s), f->got, f->len, idle_s,
        NET_FLOOR_RATE);
    return ERR_TIMEOUT;
}

/* frames_check: the frame deadlines of d[0..n)'s receives, brought up to
 * now; a frame past its deadline fails the transfer (silent: set when the
 * idle deadline has passed too, which then names it in plainer words).
 * Lowers *wake to the nearest deadline. 0 or ERR_TIMEOUT. */
static int frames_check(struct dir *d, int n, struct link *l, double idle_s, int silent,
                        double *wake, char *err)
{
    for (int i = 0; i < n; i++) {
        double left, now;
        if (!d[i].frame || finished(&d[i]))
            continue;
        now = clock_now();
        left = frame_clock(&d[i], l, idle_s, now);
        if (left <= 0 && silent)
            return idle_fail(d, n, idle_s, err);
        if (left <= 0)
            return frame_fail(&d[i], l, idle_s, err);
        if (isfinite(left) && now + left < *wake)
            *wake = now + left;
    }
    return 0;
}

/* last_pieces: every direction of d[0..n) is on its last piece (of at
 * most `piece` bytes), so that the wait about to begin may be the
 * transfer's last (net_vt_block). */
static int last_pieces(const struct dir *d, int n, size_t piece)
{
    for (int i = 0; i < n; i++) {
        const struct dir *x = &d[i];
        if (x->send && x->armed ? x->end < x->len : x->len - x->done > piece)
            return 0;
    }
    return 1;
}

/* xfer_run: move every direction in d[0..n) to completion (see the top). */
static int xfer_run(struct dir *d, int n, struct link *l, double idle_s, char *err)
{
    int pace = l && link_active(l);
    size_t piece = pace ? link_piece(l) : SIZE_MAX;
    double last = clock_now(), busy_end = NAN;

    for (int i = 0; i < n; i++) {
        d[i].ready = 1;
        d[i].mark = NAN;
        if (d[i].send || d[i].need == 0 || d[i].need > d[i].len)
            d[i].need = d[i].len;
        if (d[i].frame) {
            d[i].got0 = d[i].frame->got;
            if (d[i].got0 > 0)
                d[i].mark = last;
        }
        /* A receive honours the wait its link booked on earlier calls:
         * otherwise many small calls would each read a piece for free. */
        if (pace && !d[i].send && d[i].len > 0 && l->ingress.rate > 0 &&
            l->ingress.vclock > last) {
            d[i].due = l->ingress.vclock;
            d[i].held = 1;
        }
    }
    for (;;) {
        struct pollfd p[2];
        double wake = INFINITY;
        int pending = 0, polled = 0, moved = 0, rc, held = 0, spin = 0, small = 1;

        for (int i = 0; i < n; i++) {
            struct dir *x = &d[i];
            if (finished(x))
                continue;
            rc = x->send ? advance_send(x, l, pace, piece, &last, &moved, err)
                         : advance_recv(x, l, pace, piece, &last, &moved, err);
            if (rc < 0)
                return rc;
        }
        for (int i = 0; i < n; i++) {
            struct dir *x = &d[i];
            p[i].fd = -1;
            p[i].events = 0;
            p[i].revents = 0;
            if (finished(x))
                continue;
            pending = 1;
            if (x->len - x->done > BUSY_BYTES)
                small = 0;
            if (x->held) {
                held = 1;
                if (x->due < wake) {
                    wake = x->due;
                    spin = spin_ok && x->send && x->end == x->len;
                }
            } else if (!x->ready) {
                p[i].fd = x->fd;
                p[i].events = x->send ? POLLOUT : POLLIN;
                polled = 1;
            }
        }
        if (!pending)
            return 0;
        if ((rc = frames_check(d, n, l, idle_s, !held && clock_now() >= last + idle_s, &wake,
                               err)) != 0)
            return rc;
        if (moved)
            continue;               /* another pass before sleeping */
        /* The idle deadline runs only while no direction is held by the
         * link; a direction released by the link restarts it. */
        if (!held && idle_s > 0) {
            double dl = last + idle_s;
            if (clock_now() >= dl)
                return idle_fail(d, n, idle_s, err);
            if (dl < wake)
                wake = dl;
        }
        if (!polled && !isfinite(wake)) {
            /* Nothing to wait for can only mean a logic error; never hang. */
            err_say(err, "net: transfer with nothing to wait for");
            return ERR_USAGE;
        }
        if (polled && !held && small && busy_s > 0) {
            /* Busy-poll a small transfer briefly before sleeping. */
            double now = clock_now();
            if (isnan(busy_end))
                busy_end = now + busy_s;
            if (now < busy_end) {
                count(ST_SPINS, 1);
                sched_yield();
                for (int i = 0; i < n; i++)
                    if (p[i].fd >= 0)
                        d[i].ready = 1;   /* try the I/O again */
                continue;
            }
        }
        if (!polled && wake <= clock_now())
            continue;               /* the link's deadline has passed: no sleep */
        if (spin) {
            double now = clock_now();
            wake = wake - now > SPIN_S ? wake - SPIN_S : now;   /* now: poll, no wait */
        }
        {
            double w0 = clock_now();
            if (pace)
                net_vt_block(last_pieces(d, n, piece));     /* link.h, OWN CORES */
            rc = net_wait_until(p, (nfds_t)n, wake);
            w0 = clock_now() - w0;
            net_vt_waited(w0);
            count(held && polled ? ST_WAITS_BOTH : held ? ST_WAITS_LINK : ST_WAITS_PEER, 1);
            count_s(held && polled ? ST_T_BOTH : held ? ST_T_LINK : ST_T_PEER, w0);
        }
        if (rc < 0) {
            err_say(err, "net: poll: %s", err_str(rc));
            return rc;
        }
        for (int i = 0; i < n; i++)
            if (p[i].revents)
                d[i].ready = 1;   /* try the I/O: it reports any error */
    }
}

/* xfer: xfer_run, counted (net_stats). */
static int xfer(struct dir *d, int n, struct link *l, double idle_s, char *err)
{
    double t0 = clock_now();
    int rc = xfer_run(d, n, l, idle_s, err);

    net_vt_xfer_end();
    for (int i = 0; i < n; i++)
        frame_stop(&d[i]);
    count(ST_XFERS, 1);
    count_s(ST_T_XFER, clock_now() - t0);
    return rc;
}

int net_send_all(int fd, const void *buf, size_t len, struct link *l,
                 double idle_s, const char *peer, char *err)
{
    struct dir d;

    memset(&d, 0, sizeof d);
    d.fd = fd;
    d.send = 1;
    d.peer = peer;
    d.buf = (unsigned char *)(uintptr_t)buf;   /* only read */
    d.len = len;
    return xfer(&d, 1, l, idle_s, err);
}

int net_recv_all(int fd, void *buf, size_t len, struct link *l,
                 double idle_s, const char *peer, char *err)
{
    return net_recv_frame(fd, buf, len, l, idle_s, NULL, peer, err);
}

int net_recv_frame(int fd, void *buf, size_t len, struct link *l, double idle_s,
                   struct net_frame *f, const char *peer, char *err)
{
    struct dir d;

    memset(&d, 0, sizeof d);
    d.fd = fd;
    d.peer = peer;
    d.buf = buf;
    d.len = len;
    d.frame = f;
    return xfer(&d, 1, l, idle_s, err);
}

int net_sendrecv(int sfd, const void *sbuf, size_t slen, const char *speer,
                 int rfd, void *rbuf, size_t rlen, const char *rpeer,
                 struct link *l, double idle_s, char *err)
{
    return net_sendrecv_frame(sfd, sbuf, slen, speer, rfd, rbuf, rlen, rpeer, l, idle_s, NULL,
                              err);
}

int net_sendrecv_frame(int sfd, const void *sbuf, size_t slen, const char *speer,
                       int rfd, void *rbuf, size_t rlen, const char *rpeer,
                       struct link *l, double idle_s, struct net_frame *f, char *err)
{
    return net_sendrecv_some(sfd, sbuf, slen, speer, rfd, rbuf, rlen, rlen, rpeer, l, idle_s,
                             f, err);
}

int net_sendrecv_some(int sfd, const void *sbuf, size_t slen, const char *speer,
                      int rfd, void *rbuf, size_t rmin, size_t rlen, const char *rpeer,
                      struct link *l, double idle_s, struct net_frame *f, char *err)
{
    struct dir d[2];

    memset(d, 0, sizeof d);
    d[0].fd = rfd;
    d[0].peer = rpeer;
    d[0].buf = rbuf;
    d[0].len = rlen;
    d[0].need = rmin;
    d[0].frame = f;
    d[1].fd = sfd;
    d[1].send = 1;
    d[1].peer = speer;
    d[1].buf = (unsigned char *)(uintptr_t)sbuf;
    d[1].len = slen;
    return xfer(d, 2, l, idle_s, err);
}

int net_feed(int fd, void *buf, size_t *got, size_t need, char *why)
{
    while (*got < need) {
        ssize_t r = recv(fd, (char *)buf + *got, need - *got, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (r <= 0) {
            int e = r == 0 ? ERR_EOF : -errno;
            err_say(why, "%s after %zu bytes", r == 0 ? "connection closed" : strerror(errno), *got);
            return e;
        }
        *got += (size_t)r;
    }
    return 1;
}
