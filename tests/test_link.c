/* test_link.c -- the emulated link's arithmetic, with a fake clock.
 *
 * Nothing here sleeps or reads the clock: `now` is a number the test
 * moves, so every bound below is exact arithmetic and cannot flake on a
 * loaded machine. The contract checked throughout (link.h): on either
 * direction, N bytes never pass faster than N / B (there is no burst), a
 * message costs exactly L + n/B, and latency is a pipelined delivery
 * deadline.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "base/err.h"
#include "wire/link.h"

static const double rates[] = { 1e7, 3e7, 1e8, 3e8, 1e9, 3e9, 1e10 };
#define NRATES (sizeof rates / sizeof rates[0])

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* uniform in [0, 1) */
static double rnd01(void)
{
    return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
}

/* A few bytes of slack for rounding in doubles near t = 1000 s. */
static double tol_bytes(double rate)
{
    return 1.0 + rate * 1e-9;
}

/* Greedy egress sender: reserve `sz` bytes at a time at `now`, "sleep" to
 * the deadline plus a random oversleep of up to `jitter` seconds. Checks
 * the lower bound from the first reservation for every prefix: no burst,
 * so N bytes never pass before N/B. */
static void egress_greedy(double rate, size_t sz, double jitter, double latency)
{
    struct link l;
    double t0 = 1000.0, now = t0, d = 0, sent = 0;
    int bad = 0;

    T_EQ_I(link_init(&l, rate, latency), 0);
    for (int i = 0; i < 4000 && !bad; i++) {
        d = link_egress_reserve(&l, sz, now);
        sent += (double)sz;
        /* The bytes are written at d: the prefix must obey the bound. */
        if (!(sent <= (d - latency - t0) * rate + tol_bytes(rate))) {
            T_LE(sent, (d - latency - t0) * rate + tol_bytes(rate));
            bad = 1;
        }
        if (!(d >= now + latency + (double)sz / rate - 1e-12)) {
            T_LE(now + latency + (double)sz / rate, d);
            bad = 1;
        }
        now = fmax(now, d) + jitter * rnd01();
    }
}

static void t_init(void)
{
    struct link l;
    const double bad_rates[] = { -1.0, NAN, INFINITY, -INFINITY, 0.5, 1e-300 };
    const double bad_lat[] = { -1e-9, NAN, INFINITY, LINK_LATENCY_MAX * 2 };

    T_CASE("link-1.1", "init refuses negative, NaN, infinite and absurd values");
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++)
        T_EQ_I(link_init(&l, bad_rates[i], 0.0), ERR_USAGE);
    for (size_t i = 0; i < sizeof bad_lat / sizeof bad_lat[0]; i++)
        T_EQ_I(link_init(&l, 1e8, bad_lat[i]), ERR_USAGE);
    T_EQ_I(link_init(&l, 0.0, 0.0), 0);
    T_EQ_I(link_active(&l), 0);
    T_EQ_U(l.bytes_in, 0);
    T_EQ_U(l.bytes_out, 0);
    T_EQ_I(link_init(&l, 1e8, 0.0), 0);
    T_TRUE(link_active(&l));
    T_EQ_I(link_init(&l, 0.0, 50e-6), 0);
    T_TRUE(link_active(&l));
    T_EQ_I(link_init(&l, LINK_RATE_MIN, LINK_LATENCY_MAX), 0);
    T_END();
}

static void t_piece(void)
{
    struct link l;

    T_CASE("link-1.2", "piece = min(max(4 KiB, B * 1 ms), max(60 KiB, B * 250 us)) <= 16 MiB; "
           "no burst state");
    for (size_t i = 0; i < NRATES; i++) {
        double b = rates[i], want = fmin(fmax(LINK_PIECE_MIN, b * LINK_PIECE_S),
                                         fmax(LINK_PIECE_CAP, b * LINK_PIECE_FAST_S));
        T_EQ_I(link_init(&l, b, 0.0), 0);
        T_NEAR((double)link_piece(&l), want, 1.0);
    }
    /* The three regimes, by hand: 8 Mbit/s (the floor), 400 Mbit/s (1 ms
     * of wire), 1 Gbit/s (the 60 KiB cap), 10 Gbit/s (250 us of wire). */
    T_EQ_I(link_init(&l, 1e6, 0.0), 0);
    T_EQ_U(link_piece(&l), 4096);
    T_EQ_I(link_init(&l, 50e6, 0.0), 0);
    T_EQ_U(link_piece(&l), 50000);
    T_EQ_I(link_init(&l, 125e6, 0.0), 0);
    T_EQ_U(link_piece(&l), 61440);
    T_EQ_I(link_init(&l, 1.25e9, 0.0), 0);
    T_EQ_U(link_piece(&l), 312500);
    T_EQ_I(link_init(&l, 1e15, 0.0), 0);
    T_EQ_U(link_piece(&l), LINK_PIECE_MAX);
    T_EQ_I(link_init(&l, 0.0, 1e-3), 0);
    T_EQ_U(link_piece(&l), SIZE_MAX);
    T_END();
}

static void t_egress_bound(void)
{
    const size_t sizes[] = { 1, 40, 1500, 4096, 65536, 1u << 20 };

    T_CASE("link-1.3", "egress: N bytes never pass faster than N/B (no burst)");
    for (size_t i = 0; i < NRATES; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            egress_greedy(rates[i], sizes[j], 0.0, 0.0);
            egress_greedy(rates[i], sizes[j], 300e-6, 0.0);      /* late wake-ups */
            egress_greedy(rates[i], sizes[j], 5e-3, 100e-6);     /* very late, latency */
        }
    /* Without oversleep the bound is tight: N bytes take N/B. */
    {
        struct link l;
        double now = 50.0, d = 0, n = 0;
        T_EQ_I(link_init(&l, 1e8, 0.0), 0);
        for (int k = 0; k < 1000; k++) {
            d = link_egress_reserve(&l, 25000, now);
            n += 25000;
            now = fmax(now, d);
        }
        T_NEAR(d - 50.0, n / 1e8, 1e-9);
    }
    T_END();
}

static void t_ingress_bound(void)
{
    T_CASE("link-1.4", "ingress: a reader is handed N bytes no faster than N/B");
    for (size_t i = 0; i < NRATES; i++) {
        for (int jit = 0; jit < 3; jit++) {
            struct link l;
            double b = rates[i], now = 77.0, t_first = 0, got = 0, due = 0;
            double jitter = jit == 0 ? 0 : jit == 1 ? 200e-6 : 4e-3;
            size_t piece;
            int bad = 0;

            T_EQ_I(link_init(&l, b, 0.0), 0);
            piece = link_piece(&l);
            for (int k = 0; k < 3000 && !bad; k++) {
                /* read up to one piece (the socket gives any amount) that
                 * arrived by now, book it, hold it until its due time ... */
                size_t r = 1 + (size_t)(rnd() % piece);
                if (rnd() % 4 == 0)
                    r = piece;
                due = link_ingress_reserve(&l, r, now);
                if (k == 0)
                    t_first = due - (double)r / b;     /* its wire time began */
                got += (double)r;
                T_TRUE(due >= now - 1e-12);
                if (!(got <= (due - t_first) * b + tol_bytes(b))) {
                    T_LE(got, (due - t_first) * b + tol_bytes(b));
                    bad = 1;
                }
                /* ... then read again when it is handed over (late). */
                now = fmax(now, due) + jitter * rnd01();
            }
        }
    }
    T_END();
}

/* Several "sockets" of one process book on the same link in a random
 * interleaving with random idle gaps; for every window of consecutive
 * pieces the bytes in it obey dt * B: there is no burst to exceed it. */
static void t_interleave(void)
{
    enum { N = 1500 };
    static double dl[N], sz[N];

    T_CASE("link-1.5", "random interleavings: every window obeys dt * B (no burst)");
    for (size_t i = 0; i < NRATES; i++) {
        for (int dir = 0; dir < 2; dir++) {
            struct link l;
            double b = rates[i], now = 10.0, lat = dir ? 0.0 : 30e-6;
            int bad = 0;

            T_EQ_I(link_init(&l, b, lat), 0);
            for (int k = 0; k < N; k++) {
                size_t n = 1 + (size_t)(rnd() % (2 * link_piece(&l)));
                double u = rnd01();
                /* mostly back-to-back, sometimes a short or a long idle */
                now += u < 0.7 ? 0.0 : u < 0.95 ? 1e-3 * rnd01() : 20e-3 * rnd01();
                if (dir == 0) {
                    dl[k] = link_egress_reserve(&l, n, now) - lat;
                } else {
                    /* the bytes are handed over at their due time */
                    dl[k] = link_ingress_reserve(&l, n, now);
                }
                sz[k] = (double)n;
            }
            for (int a = 0; a < N && !bad; a += 7) {
                double sum = 0;
                for (int c = a + 1; c < N && !bad; c++) {
                    sum += sz[c];
                    if (!(sum <= (dl[c] - dl[a]) * b + tol_bytes(b))) {
                        T_LE(sum, (dl[c] - dl[a]) * b + tol_bytes(b));
                        bad = 1;
                    }
                }
            }
        }
    }
    T_END();
}

static void t_no_credit(void)
{
    struct link l;
    double b = 1e8, v;

    T_CASE("link-1.6", "no idle credit: an idle link passes nothing for free, both directions");
    T_EQ_I(link_init(&l, b, 0.0), 0);
    /* Long idle (10 s): 100 MB still take exactly 1 s. */
    T_NEAR(link_egress_reserve(&l, 100000000, 100.0) - 100.0, 1.0, 1e-9);
    T_NEAR(link_egress_reserve(&l, 100000000, 111.0) - 111.0, 1.0, 1e-9);
    /* A short idle gap is not credited either. */
    v = link_egress_reserve(&l, 1000000, 5.0);          /* busy to v */
    T_NEAR(link_egress_reserve(&l, 1000000, v + 1e-4) - (v + 1e-4), 0.01, 1e-9);
    /* Ingress: bytes that arrived at t were on the wire for n/B before:
     * handed over at t, not earlier and not later, when the link is idle. */
    T_EQ_I(link_init(&l, b, 0.0), 0);
    T_NEAR(link_ingress_reserve(&l, 100000000, 20.0), 20.0, 1e-9);
    /* ... and after an idle gap as long as you like, the same. */
    T_NEAR(link_ingress_reserve(&l, 1000000, 40.0), 40.0, 1e-9);
    /* Two senders at once into one reader: the second waits its turn. */
    T_NEAR(link_ingress_reserve(&l, 1000000, 40.0), 40.01, 1e-9);
    T_END();
}

/* one_message: n bytes from an idle sender at `now`, through the sender's
 * egress (net_xfer.c's blocking protocol: pieces of link_piece(), each reserved,
 * slept to and woken exactly) and the receiver's ingress (each piece booked
 * at its arrival, the sender's deadline; the reader holds it until due).
 * Returns when the receiver is handed the last byte. */
static double one_message(struct link *snd, struct link *rcv, size_t n, double now)
{
    size_t piece = link_piece(snd), done = 0;
    double handed = now;

    link_send_restart(snd, now, 0.0, NAN);
    while (done < n) {
        size_t p = n - done < piece ? n - done : piece;
        double d = link_send_reserve(snd, p, now, done > 0);
        now = fmax(now, d);
        link_send_woke(snd, now);
        handed = fmax(handed, link_ingress_reserve(rcv, p, now));
        done += p;
    }
    return handed;
}

static void t_message(void)
{
    const double rate = 500e6 / 8, lat = 200e-6;        /* 500 Mbit/s, 200 us */
    const size_t sizes[] = { 4096, 16384, 65536, 262144, 1u << 20, 4u << 20, 16u << 20 };

    T_CASE("link-1.12", "one message, 4 KiB to 16 MiB at 500 Mbit/s and 200 us, costs "
           "exactly a + n/bw (the model's), from an idle link and after a long idle");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct link s, r;
        double n = (double)sizes[i], t0 = 10.0, end;

        T_EQ_I(link_init(&s, rate, lat), 0);
        T_EQ_I(link_init(&r, rate, lat), 0);
        end = one_message(&s, &r, sizes[i], t0);
        T_NEAR(end - t0, lat + n / rate, 1e-9);
        /* The same message again after 5 s of idle: no credit, same cost. */
        t0 = end + 5.0;
        end = one_message(&s, &r, sizes[i], t0);
        T_NEAR(end - t0, lat + n / rate, 1e-9);
        /* And with only the sender paced (the receiver's link off). */
        T_EQ_I(link_init(&r, 0.0, 0.0), 0);
        t0 = end + 1.0;
        end = one_message(&s, &r, sizes[i], t0);
        T_NEAR(end - t0, lat + n / rate, 1e-9);
    }
    T_END();
}

/* t_join: a ring step's frame through the sender's egress and the reader's
 * ingress, the reader taking one kernel buffer in parts, as net_xfer.c does:
 * the 40-byte header, then the rest of its piece; or a piece in small
 * reads. Booked part after part (link_ingress_reserve), each part starts
 * where the last one ended and bytes already in are held as if still on
 * the wire; joined (link_ingress_join), the frame costs exactly a + n/bw. */
static void t_join(void)
{
    const double rate = 4e6, lat = 200e-6;              /* 32 Mbit/s, 200 us */
    const size_t hdr = 40, sizes[] = { 1024, 4056, 16384, 65536, 262144 };

    T_CASE("link-1.13", "one kernel buffer read in parts (header, then payload; or small "
           "reads) is booked once: a + n/bw, not the wire time twice; no burst beyond a piece");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct link s, r, old;
        size_t n = hdr + sizes[i], piece, done = 0;
        double t0 = 10.0, now = t0, handed = t0, handed_old = t0;

        T_EQ_I(link_init(&s, rate, lat), 0);
        T_EQ_I(link_init(&r, rate, lat), 0);
        T_EQ_I(link_init(&old, rate, lat), 0);
        piece = link_piece(&s);
        /* Header, then payload: each piece read in two parts, both under
         * the piece's stamp (its arrival: the sender's deadline). */
        link_send_restart(&s, now, 0.0, NAN);
        while (done < n) {
            size_t p = n - done < piece ? n - done : piece, a = done == 0 ? hdr : p / 2;
            double d = link_send_reserve(&s, p, now, done > 0);
            now = fmax(now, d);
            link_send_woke(&s, now);
            handed = fmax(handed, link_ingress_join(&r, a, now, now, 1));
            handed = fmax(handed, link_ingress_join(&r, p - a, now, now, 1));
            handed_old = fmax(handed_old, link_ingress_reserve(&old, a, now));
            handed_old = fmax(handed_old, link_ingress_reserve(&old, p - a, now));
            done += p;
        }
        T_NEAR(handed - t0, lat + (double)n / rate, 1e-9);
        /* The bug this fixes: parts booked one after the other. */
        T_LE(t0 + lat + (double)n / rate + 0.5 * (double)hdr / rate, handed_old);

        /* Each piece read in 1000-byte parts under its stamp. */
        T_EQ_I(link_init(&r, rate, lat), 0);
        t0 = now + 1.0;
        now = t0;
        handed = t0;
        link_send_restart(&s, now, 0.0, NAN);
        for (done = 0; done < n; ) {
            size_t p = n - done < piece ? n - done : piece;
            double d = link_send_reserve(&s, p, now, done > 0);
            now = fmax(now, d);
            link_send_woke(&s, now);
            for (size_t k = 0; k < p; k += 1000)
                handed = fmax(handed, link_ingress_join(&r, p - k < 1000 ? p - k : 1000,
                                                        now, now + 7.0, 1));
            done += p;
        }
        T_NEAR(handed - t0, lat + (double)n / rate, 1e-9);

        /* No burst: a backlog the kernel stamped once (an unpaced sender's
         * bytes, all in at once) joins a piece at most, so it passes no
         * faster than one piece early. */
        T_EQ_I(link_init(&r, rate, lat), 0);
        t0 = now + 1.0;
        handed = t0;
        for (done = 0; done < n; done += 1000)
            handed = fmax(handed, link_ingress_join(&r, n - done < 1000 ? n - done : 1000,
                                                    t0, t0 + 1e6, 1));
        T_LE(t0 + ((double)n - (double)piece) / rate, handed);
    }
    /* No burst: a part joins only the reservation just before it, under
     * the same stamp. Two senders' bytes (two stamps) into one reader, at
     * the same time: the second waits its turn. */
    {
        struct link r;
        T_EQ_I(link_init(&r, rate, 0.0), 0);
        T_NEAR(link_ingress_join(&r, 400000, 40.0, 1.0, 1), 40.0, 1e-9);
        T_NEAR(link_ingress_join(&r, 400000, 40.0, 2.0, 1), 40.1, 1e-9);
        /* Stamp 1 again, but stamp 2's bytes were booked in between. */
        T_NEAR(link_ingress_join(&r, 400000, 40.0, 1.0, 1), 40.2, 1e-9);
        /* Without a stamp (NAN) nothing joins. */
        T_NEAR(link_ingress_join(&r, 400000, 40.0, NAN, 1), 40.3, 1e-9);
        T_NEAR(link_ingress_join(&r, 400000, 40.0, NAN, 1), 40.4, 1e-9);
    }
    T_END();
}

/* A kernel receive queue on virtual time: the buffers a sender's pieces
 * became, each stamped with its arrival (TCP stamps a buffer with its
 * newest bytes). */
struct kqueue {
    size_t n[64];
    double at[64];
    int len, head;
    size_t off;             /* bytes of buffer `head` already read */
};

/* kq_read: a recv of at most `want` bytes at time `now`: whatever has
 * arrived, across buffers; *stamp: the newest buffer it touched. */
static size_t kq_read(struct kqueue *q, size_t want, double now, double *stamp)
{
    size_t got = 0;

    while (got < want && q->head < q->len && q->at[q->head] <= now) {
        size_t take = q->n[q->head] - q->off;
        if (take > want - got)
            take = want - got;
        got += take;
        q->off += take;
        *stamp = q->at[q->head];
        if (q->off == q->n[q->head]) {
            q->head++;
            q->off = 0;
        }
    }
    return got;
}

/* small_frame: one ring step's CHUNK frame of `payload` bytes, as
 * common/coll/xport_tcp.c and net_xfer.c move it: the sender's first piece is
 * the 40-byte header and the payload's first piece - 40 bytes, the rest
 * goes in pieces from a second call; the reader reads the header (40
 * bytes, cut short by the reader), then the payload a piece at a time,
 * `late` seconds after data is there (another rank's wake-up, its own
 * send). Every read is booked with link_ingress_join(); grid: the reader
 * keeps to link_ingress_next() as net_xfer.c does (0: a piece at a time
 * whatever it read before, as before issue 13). Returns the latest time
 * the link held a read until. */
static double small_frame(double rate, double lat, size_t payload, double late, int grid,
                          double t0)
{
    const size_t hdr = 40;
    struct link s, r;
    struct kqueue q;
    size_t piece, frame = hdr + payload, done = 0, first;
    double now = t0, d, held = t0, stamp = NAN;

    memset(&q, 0, sizeof q);
    link_init(&s, rate, lat);
    link_init(&r, rate, lat);
    piece = link_piece(&s);
    first = link_frame_first(&s, hdr, payload);
    /* The sender: its pieces' deadlines are the buffers' arrivals. */
    link_send_restart(&s, now, 0.0, NAN);
    d = link_send_reserve(&s, hdr + first, now, 0);
    now = fmax(now, d) + 5e-6;
    link_send_woke(&s, now);
    q.n[q.len] = hdr + first;
    q.at[q.len++] = d;
    for (done = hdr + first; done < frame && q.len < 64; ) {
        size_t p = frame - done < piece ? frame - done : piece;
        d = link_send_reserve(&s, p, now, done > hdr + first);
        now = fmax(now, d);
        link_send_woke(&s, now);
        q.n[q.len] = p;
        q.at[q.len++] = d;
        done += p;
    }
    /* The reader: the header as soon as it is in, then the payload. */
    now = q.at[0];
    for (done = 0; done < frame; ) {
        size_t want = done < hdr ? hdr - done : frame - done, got;
        double due;
        if (want > piece)
            want = piece;
        if (grid && want > link_ingress_next(&r))
            want = link_ingress_next(&r);
        now = fmax(now, q.at[q.head]) + (done < hdr ? 0.0 : late);
        got = kq_read(&q, want, now, &stamp);
        due = link_ingress_join(&r, got, stamp, stamp, got == want);
        held = fmax(held, due);
        now = fmax(now, due);
        done += got;
    }
    return held;
}

static void t_small(void)
{
    const double rate = 4e6, lat = 200e-6;              /* 32 Mbit/s, 200 us: piece 4 KiB */
    const size_t sizes[] = { 1024, 4056, 4096, 4100, 4120, 4121, 4200, 8192, 16384, 65536 };

    T_CASE("link-3.1", "a small frame (header + 1 KiB to 64 KiB at 32 Mbit/s, 200 us) is held "
           "until exactly a + n/bw, read promptly or late, when the reader keeps to "
           "link_ingress_next (one kernel buffer per read)");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double n = 40.0 + (double)sizes[i];
        for (int k = 0; k < 4; k++) {
            double late = (double)k * 15e-6, t0 = 10.0 + (double)k;
            T_NEAR(small_frame(rate, lat, sizes[i], late, 1, t0) - t0, lat + n / rate, 1e-9);
        }
    }
    /* The bug: a piece at a time after the header, a frame read late (its
     * tail already in) reads into the tail, takes its stamp and waits a
     * piece's wire time more. A tail of 80 bytes is 20 us of wire, 160
     * bytes 40 us. */
    T_LE(10.0 + lat + 4176.0 / rate + 0.9 * 4096.0 / rate, small_frame(rate, lat, 4136, 30e-6, 0, 10.0));
    T_LE(10.0 + lat + 4256.0 / rate + 0.9 * 4096.0 / rate, small_frame(rate, lat, 4216, 45e-6, 0, 10.0));
    T_END();

    T_CASE("link-3.4", "a piece the kernel cut into two buffers (two stamps: a 64 KiB piece on "
           "loopback, whose segments hold 65483 bytes; any piece over a 1500-byte MTU), read as "
           "its header then its rest, is booked as one: held until its arrival, not a piece's "
           "wire time more");
    {
        const double r1g = 125e6, t1 = 20.0, s1 = 1e9, s2 = 1e9 + 2000;   /* stamps, ns */
        struct link l;
        size_t piece;
        T_EQ_I(link_init(&l, r1g, 100e-6), 0);
        piece = link_piece(&l);
        T_EQ_U(piece, 61440);
        T_NEAR(link_ingress_join(&l, 40, t1, s1, 1), t1, 1e-12);
        T_EQ_U(link_ingress_next(&l), piece - 40);
        /* The rest, 3 us later, carries the second buffer's stamp. */
        T_NEAR(link_ingress_join(&l, piece - 40, t1 + 3e-6, s2, 1), t1, 1e-12);
        /* Not the rest: a new stamp and more than the piece's rest is a
         * reservation of its own, from its arrival less its wire time. */
        T_EQ_I(link_init(&l, r1g, 100e-6), 0);
        (void)link_ingress_join(&l, 40, t1, s1, 1);
        T_NEAR(link_ingress_join(&l, piece, t1 + 3e-6, s2, 1), t1 + (double)piece / r1g, 1e-9);
    }
    T_END();

    T_CASE("link-3.3", "link_frame_first: the header and the payload fill the first piece, "
           "the whole frame when at most LINK_PIECE_SLACK bytes would be left");
    {
        struct link l;
        T_EQ_I(link_init(&l, rate, lat), 0);
        T_EQ_U(link_piece(&l), 4096);
        T_EQ_U(link_frame_first(&l, 40, 1024), 1024);
        T_EQ_U(link_frame_first(&l, 40, 4056), 4056);          /* exactly a piece */
        T_EQ_U(link_frame_first(&l, 40, 4096), 4096);          /* a 40-byte runt: with it */
        T_EQ_U(link_frame_first(&l, 40, 4056 + LINK_PIECE_SLACK), 4056 + LINK_PIECE_SLACK);
        T_EQ_U(link_frame_first(&l, 40, 4057 + LINK_PIECE_SLACK), 4056);
        T_EQ_U(link_frame_first(&l, 40, 65536), 4056);
        /* the reader joins the whole 4136-byte buffer: one reservation */
        T_NEAR(link_ingress_join(&l, 40, 5.0, 5.0, 1), 5.0, 1e-12);
        T_NEAR(link_ingress_join(&l, 4056, 5.0, 5.0, 1), 5.0, 1e-12);
        T_NEAR(link_ingress_join(&l, 40, 5.0, 5.0, 0), 5.0, 1e-12);
        T_EQ_I(link_init(&l, 0.0, lat), 0);                    /* no rate: all of it */
        T_EQ_U(link_frame_first(&l, 40, 1u << 20), 1u << 20);
    }
    T_END();

    T_CASE("link-3.2", "link_ingress_next: the rest of a piece after a read cut short inside "
           "it, else a piece");
    {
        struct link r;
        size_t piece;
        T_EQ_I(link_init(&r, rate, 0.0), 0);
        piece = link_piece(&r);
        T_EQ_U(link_ingress_next(&r), piece);                   /* nothing read yet */
        link_ingress_join(&r, 40, 1.0, 1.0, 1);                 /* a header, cut */
        T_EQ_U(link_ingress_next(&r), piece - 40);
        link_ingress_join(&r, piece - 40, 1.0, 1.0, 1);         /* its piece's rest: joined */
        T_EQ_U(link_ingress_next(&r), piece);
        link_ingress_join(&r, 100, 2.0, 2.0, 0);                /* ran dry: a new buffer next */
        T_EQ_U(link_ingress_next(&r), piece);
        link_ingress_join(&r, 100, 3.0, 3.0, 1);                /* cut: its buffer's rest */
        T_EQ_U(link_ingress_next(&r), piece - 100);
        link_ingress_join(&r, 50, 3.0, 3.0, 1);                 /* same stamp: joined */
        T_EQ_U(link_ingress_next(&r), piece - 150);
        T_EQ_I(link_init(&r, 0.0, 1e-3), 0);                    /* no rate: no pieces */
        link_ingress_join(&r, 40, 1.0, 1.0, 1);
        T_EQ_U(link_ingress_next(&r), SIZE_MAX);
    }
    T_END();
}

static void t_latency(void)
{
    struct link l;
    double b = 1e8, lat = 500e-6, d = 0, total = 0, t0 = 3.0;

    T_CASE("link-1.7", "latency pipelines: k pieces end at start + total/B + L, not k*L");
    T_EQ_I(link_init(&l, b, lat), 0);
    for (int k = 0; k < 64; k++) {
        d = link_egress_reserve(&l, 40000, t0);
        total += 40000;
    }
    T_NEAR(d, t0 + total / b + lat, 1e-9);
    /* A small message after idle is delivered at now + n/B + L exactly
     * (a ping-pong sees 2L). */
    T_NEAR(link_egress_reserve(&l, 64, 10.0), 10.0 + 64 / b + lat, 1e-12);
    T_NEAR(link_egress_reserve(&l, 64, 10.0), 10.0 + 128 / b + lat, 1e-12);
    /* Unlimited rate: every piece at the same now lands at now + L. */
    T_EQ_I(link_init(&l, 0.0, lat), 0);
    for (int k = 0; k < 10; k++)
        T_NEAR(link_egress_reserve(&l, 1u << 20, t0), t0 + lat, 1e-12);
    T_END();
}

/* A blocking sender (net_xfer.c's protocol): reserve, sleep to the deadline
 * (oversleeping by up to `over`), woke, write; `gap` between calls. */
static double send_calls(struct link *l, int calls, size_t n, double *now, double over,
                         double gap)
{
    double d = 0;
    for (int c = 0; c < calls; c++) {
        d = link_send_reserve(l, n, *now, 0);
        *now = fmax(*now, d) + over * rnd01();
        link_send_woke(l, *now);
        *now += gap;
    }
    return d;
}

static void t_blocking(void)
{
    struct link l;
    double lat = 200e-6, now, d, t0;

    T_CASE("link-1.8", "blocking sender: back-to-back calls pipeline, replies do not");
    /* header + payload + 8 more frames, latency only: one L, not 10 L. */
    T_EQ_I(link_init(&l, 0.0, lat), 0);
    now = t0 = 1.0;
    d = send_calls(&l, 10, 40, &now, 60e-6, 5e-6);
    T_NEAR(d, t0 + lat + 9 * 5e-6, 1e-9);
    /* ping-pong: the reply comes one latency after our bytes left, so the
     * next send starts from real time and pays its own latency. */
    for (int k = 0; k < 20; k++) {
        now += lat + 30e-6 * rnd01();                /* the reply's trip */
        double t = now;
        d = link_send_reserve(&l, 64, now, 0);
        T_NEAR(d, t + lat, 1e-12);
        now = d + 50e-6 * rnd01();
        link_send_woke(&l, now);
    }
    /* Rate chain with late wake-ups (up to 2 ms, beyond the burst): the
     * timeline keeps the exact rate from the first byte, no idle credit. */
    T_EQ_I(link_init(&l, 1e8, lat), 0);
    now = t0 = 5.0;
    d = 0;
    for (int k = 0; k < 400; k++) {
        d = link_send_reserve(&l, 25000, now, k > 0);
        now = fmax(now, d) + 2e-3 * rnd01();
        link_send_woke(&l, now);
    }
    T_NEAR(d, t0 + 400 * 25000 / 1e8 + lat, 1e-9);
    /* The chain's timeline ran at the wire's pace; real time (`now`) is
     * ahead by the oversleeps. A gap that ends more than L/2 after the
     * wire went free on the timeline (computation, a wait for a peer) is
     * real time again: the next send pays the full latency from its start. */
    now += (d - lat - t0) + 10e-3;
    t0 = now;
    d = link_send_reserve(&l, 64, now, 0);
    T_NEAR(d, t0 + 64 / 1e8 + lat, 1e-9);
    /* A gap shorter than L/2 after the wire went free continues it. */
    now = d + 1e-6 * rnd01();
    link_send_woke(&l, now);
    now += 20e-6;
    d = link_send_reserve(&l, 64, now, 0);
    T_NEAR(d, t0 + 20e-6 + 64 / 1e8 + lat, 1e-9);       /* not + 2 L */
    T_END();
}

/* ring_steps: `steps` ring steps of a rank in lockstep with its neighbours
 * (identical ranks on identical links: the left's chunk arrives when our
 * own would at the right). Each step sends n bytes in pieces as net_xfer.c does
 * (reserve, sleep to the deadline oversleeping up to `over`, woke) and
 * ends when its last piece is through and the left's chunk is in, at that
 * piece's deadline. restart: call link_send_restart() at each step's
 * start, as the ring's transport does. OUT: ends[s], when step s ended. */
static void ring_steps(struct link *l, int steps, size_t n, double over, int restart,
                       double *now, double *ends)
{
    size_t piece = link_piece(l);

    for (int s = 0; s < steps; s++) {
        double d = *now;
        size_t done = 0;

        if (restart)
            link_send_restart(l, *now, 0.0, NAN);
        while (done < n) {
            size_t p = n - done < piece ? n - done : piece;
            d = link_send_reserve(l, p, *now, done > 0);
            *now = fmax(*now, d) + over * rnd01();
            link_send_woke(l, *now);
            done += p;
        }
        *now = fmax(*now, d);
        ends[s] = *now;
    }
}

/* t_continue: one ring step's frame as xport_tcp.c sends it, the header
 * and first piece in one call, the rest in the next, with the sender held
 * `peer` seconds in between by its peer's header (ranks out of lockstep).
 * Returns the deadline of the frame's last piece, from t0. */
static double frame_rest(struct link *l, size_t n, double peer, int cont, double t0)
{
    size_t piece = link_piece(l), done;
    double now = t0, d;

    link_send_restart(l, now, 0.0, NAN);
    d = link_send_reserve(l, piece, now, 0);
    now = fmax(now, d);
    link_send_woke(l, now);
    now += peer;                       /* reading the neighbour's header */
    if (cont)
        link_send_continue(l);
    for (done = piece; done < n; ) {
        size_t p = n - done < piece ? n - done : piece;
        d = link_send_reserve(l, p, now, done > piece);
        now = fmax(now, d);
        link_send_woke(l, now);
        done += p;
    }
    return d - t0;
}

static void t_continue(void)
{
    const double rate = 8e6, lat = 20e-3;                 /* 64 Mbit/s, 20 ms */
    const size_t n = 262144;                              /* a K = 4 ring's chunk of 1 MiB */
    struct link l;

    T_CASE("link-1.14", "link_send_continue: the rest of a frame continues its first "
           "piece's transmission whatever held the sender in between: L + n/B, the "
           "latency paid once");
    for (int i = 0; i < 4; i++) {
        const double peer[] = { 0.0, 2e-3, 0.6 * lat, 3 * lat };
        double want = lat + (double)n / rate;

        T_EQ_I(link_init(&l, rate, lat), 0);
        /* Held for less than the wire time the rest needs: on time. */
        if (peer[i] + link_piece(&l) / rate < (double)n / rate)
            T_NEAR(frame_rest(&l, n, peer[i], 1, 5.0), want, 1e-9);
        /* Held longer: the rest goes at once, never later than its wire. */
        T_LE(frame_rest(&l, n, peer[i], 1, 9.0), fmax(want, lat + peer[i] + (double)n / rate) + 1e-9);
    }
    /* Without it a sender held past L/2 restarts: the latency twice (this
     * is why the call exists: such a ring locks into it, 1.5x its model). */
    T_EQ_I(link_init(&l, rate, lat), 0);
    T_LE(lat + 0.6 * lat + (double)n / rate - 1e-9, frame_rest(&l, n, 0.6 * lat, 0, 5.0));
    /* The flag is one send's: the next step's restart pays the latency. */
    T_EQ_I(link_init(&l, rate, lat), 0);
    link_send_continue(&l);
    link_send_restart(&l, 20.0, 0.0, NAN);
    T_NEAR(link_send_reserve(&l, 1000, 20.0, 0) - 20.0, lat + 1000 / rate, 1e-9);
    T_END();
}

static void t_restart(void)
{
    enum { STEPS = 6 };              /* 2(K-1) for K = 4 */
    const double lat = 500e-6, rate = 1e8;
    double now, t0, ends[STEPS], d;
    struct link l;

    T_CASE("link-1.11", "link_send_restart: a send that forwards what was just received "
           "pays the latency again: a ring step costs L + n/B, large or small");
    /* Large chunks, 1 MB (10 ms of wire, 40 pieces), exact wake-ups: every
     * step ends exactly L + n/B after the one before. */
    T_EQ_I(link_init(&l, rate, lat), 0);
    now = t0 = 3.0;
    ring_steps(&l, STEPS, 1000000, 0.0, 1, &now, ends);
    for (int s = 0; s < STEPS; s++)
        T_NEAR(ends[s] - (s ? ends[s - 1] : t0), lat + 1000000 / rate, 1e-9);
    /* Without it the rule for blocking senders takes the lockstep for one
     * back-to-back send: all six steps pay the latency once between them
     * (this is why the call exists). */
    T_EQ_I(link_init(&l, rate, lat), 0);
    now = t0 = 3.0;
    ring_steps(&l, STEPS, 1000000, 0.0, 0, &now, ends);
    T_NEAR(ends[STEPS - 1] - t0, lat + STEPS * 1000000 / rate, 1e-9);
    /* Small chunks (latency-bound, one piece): L + n/B per step too, and a
     * wake-up up to 60 us late is the sender's, never carried over. */
    T_EQ_I(link_init(&l, rate, lat), 0);
    now = t0 = 7.0;
    ring_steps(&l, STEPS, 64, 60e-6, 1, &now, ends);
    for (int s = 0; s < STEPS; s++) {
        double prev = s ? ends[s - 1] : t0;
        T_LE(lat + 64 / rate - 1e-12, ends[s] - prev);
        T_LE(ends[s] - prev, lat + 64 / rate + 60e-6 + 1e-12);
    }
    /* The rate still holds: a restart while the wire is busy queues behind
     * what is on it (no idle credit for the restarted sender either). */
    T_EQ_I(link_init(&l, rate, lat), 0);
    now = 11.0;
    d = link_send_reserve(&l, 1000000, now, 0);       /* wire busy until 11.01 */
    link_send_woke(&l, now);                            /* (not held: woke early) */
    link_send_restart(&l, now + 1e-3, 0.0, NAN);
    d = link_send_reserve(&l, 1000000, now + 1e-3, 0);
    T_NEAR(d, 11.0 + 2 * 1000000 / rate + lat, 1e-9);
    /* After a restart, the pieces of the same send still pipeline. */
    now = d;
    link_send_woke(&l, now);
    link_send_restart(&l, now, 0.0, NAN);
    t0 = now;
    for (int k = 0; k < 10; k++) {
        d = link_send_reserve(&l, 25000, now, k > 0);
        now = fmax(now, d);
        link_send_woke(&l, now);
    }
    T_NEAR(d, t0 + 10 * 25000 / rate + lat, 1e-9);
    T_END();
}

static void t_unlimited(void)
{
    struct link l;

    T_CASE("link-1.9", "rate 0: no bandwidth wait either way; counters untouched");
    T_EQ_I(link_init(&l, 0.0, 0.0), 0);
    T_EQ_D(link_egress_reserve(&l, 1u << 30, 2.5), 2.5);
    T_EQ_D(link_ingress_reserve(&l, 1u << 30, 2.5), 2.5);
    T_EQ_D(link_ingress_reserve(&l, 1u << 30, 2.5), 2.5);
    T_EQ_I(link_init(&l, 0.0, 1e-3), 0);
    T_EQ_D(link_ingress_reserve(&l, 1u << 30, 7.0), 7.0);
    T_NEAR(link_egress_reserve(&l, 1u << 30, 7.0), 7.001, 1e-12);
    T_NEAR(link_egress_reserve(&l, 1u << 30, 7.0), 7.001, 1e-12);
    T_EQ_U(l.bytes_in + l.bytes_out, 0);       /* net_xfer.c counts, not link.c */
    T_END();
}

static void t_independent(void)
{
    struct link l;
    double t, e0, i0;

    T_CASE("link-1.10", "egress and ingress are independent buckets");
    T_EQ_I(link_init(&l, 1e8, 0.0), 0);
    e0 = link_egress_reserve(&l, 10000000, 1.0);
    i0 = link_ingress_reserve(&l, 10000000, 1.0);
    /* Each pays for its own 10 MB only: egress 0.1 s from now; ingress
     * books the bytes' 0.1 s of wire before their arrival at 1.0. */
    T_NEAR(e0 - 1.0, 0.1, 1e-9);
    T_NEAR(i0 - 1.0, 0.0, 1e-9);
    T_NEAR(link_ingress_reserve(&l, 10000000, 1.0) - 1.0, 0.1, 1e-9);
    t = link_egress_reserve(&l, 1000000, 1.0);
    T_NEAR(t - e0, 0.01, 1e-9);
    T_END();
}

/* charge: M pieces of P bytes on l's egress, all ready at virtual time 0
 * (so each starts when the wire is free); returns the last deadline. */
static double charge(struct link *l, int m, size_t p)
{
    double due = 0.0;
    for (int i = 0; i < m; i++)
        due = link_egress_reserve(l, p, 0.0);
    return due;
}

/* HOST LINKS: two processes charging one host's link take twice as long
 * for the same bytes as one; exact on virtual time, whatever the order in
 * which the two processes' reservations interleave. */
static void t_host(void)
{
    char dir[] = "/tmp/psr-linkhost.XXXXXX", one[64], two[64], err[ERR_LEN];
    const double rate = 1e8;
    const int m = 2000;
    const size_t p = 25000;
    struct link a, b;
    int fds[2];

    if (!mkdtemp(dir)) {
        t_skip("link-2.1", "two processes on one host link", "mkdtemp failed");
        return;
    }
    snprintf(one, sizeof one, "%s/host.0", dir);
    snprintf(two, sizeof two, "%s/host.1", dir);

    T_CASE("link-2.1", "host link: one process alone takes M P / rate; two on one host 2 M P / rate");
    T_EQ_I(link_init(&a, rate, 0.0), 0);
    T_EQ_I(link_host_attach(&a, one, err), 0);
    T_NEAR(charge(&a, m, p), m * (double)p / rate, 1e-9);
    link_host_detach(&a);
    T_EQ_I(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {             /* the other role on the host */
        struct link c;
        double due = -1.0;
        if (link_init(&c, rate, 0.0) == 0 && link_host_attach(&c, two, err) == 0)
            due = charge(&c, m, p);
        if (write(fds[1], &due, sizeof due) != sizeof due)
            _exit(2);
        _exit(0);
    }
    T_TRUE(pid > 0);
    T_EQ_I(link_init(&b, rate, 0.0), 0);
    T_EQ_I(link_host_attach(&b, two, err), 0);
    double mine = charge(&b, m, p), theirs = -1.0;
    int st = -1;
    T_EQ_I(read(fds[0], &theirs, sizeof theirs), (long long)sizeof theirs);
    T_EQ_I(waitpid(pid, &st, 0), pid);
    T_EQ_I(st, 0);
    T_TRUE(theirs > 0);
    /* the last byte of the two leaves at 2 M P / rate, and each process's
     * own last byte no earlier than its own M P / rate */
    T_NEAR(fmax(mine, theirs), 2.0 * m * (double)p / rate, 1e-9);
    T_TRUE(fmin(mine, theirs) >= m * (double)p / rate - 1e-9);
    /* the host's clock, as a third process sees it after attaching */
    struct link c;
    T_EQ_I(link_init(&c, rate, 0.0), 0);
    T_EQ_I(link_host_attach(&c, two, err), 0);
    T_NEAR(link_egress_reserve(&c, 0, 0.0), 2.0 * m * (double)p / rate, 1e-9);
    {   /* the host's NIC counted both processes' bytes */
        uint64_t in = 1, out = 0;
        T_EQ_I(link_host_bytes(&c, &in, &out), 0);
        T_EQ_U(out, 2ull * m * p);
        T_EQ_U(in, 0);
    }
    link_host_detach(&c);
    link_host_detach(&b);
    close(fds[0]);
    close(fds[1]);
    T_END();

    T_CASE("link-2.2", "host link, ingress: a join never takes back what another role booked in between");
    snprintf(one, sizeof one, "%s/host.2", dir);
    T_EQ_I(link_init(&a, rate, 0.0), 0);
    T_EQ_I(link_init(&b, rate, 0.0), 0);
    T_EQ_I(link_host_attach(&a, one, err), 0);
    T_EQ_I(link_host_attach(&b, one, err), 0);
    /* a reads 1000 bytes stamped 1.0; then 1000 more with the same stamp:
     * joined (nobody booked between): the clock reads 1.0 + 0 */
    T_NEAR(link_ingress_join(&a, 1000, 1.0, 1.0, 1), 1.0, 1e-12);
    T_NEAR(link_ingress_join(&a, 1000, 1.0, 1.0, 1), 1.0, 1e-12);
    /* b books 1e6 bytes arriving at 1.0: a's 2000 bytes hold the host's
     * ingress until 1.0, so b's are held until 1.0 + 1e6 / rate */
    double bdue = link_ingress_reserve(&b, 1000000, 1.0);
    T_NEAR(bdue, 1.0 + 1e6 / rate, 1e-12);
    /* a's third part, same stamp: b booked since, so it is booked on its own, after b */
    T_NEAR(link_ingress_join(&a, 1000, 1.0, 1.0, 1), bdue + 1000 / rate, 1e-12);
    {   /* every byte read counted once on the host, joined or not */
        uint64_t in = 0, out = 1;
        T_EQ_I(link_host_bytes(&b, &in, &out), 0);
        T_EQ_U(in, 1003000);
        T_EQ_U(out, 0);
    }
    link_host_detach(&a);
    link_host_detach(&b);
    T_END();

    T_CASE("link-2.3", "host link: another rate, a folder, a missing folder are refused with a reason");
    snprintf(one, sizeof one, "%s/host.0", dir);
    T_EQ_I(link_init(&a, 2 * rate, 0.0), 0);
    T_EQ_I(link_host_attach(&a, one, err), ERR_USAGE);
    T_HAS(err, "one host, one NIC");
    T_EQ_I(link_init(&a, rate, 1e-3), 0);
    T_EQ_I(link_host_attach(&a, one, err), ERR_USAGE);
    T_EQ_I(link_init(&a, rate, 0.0), 0);
    T_EQ_I(link_host_attach(&a, dir, err), -EISDIR);
    T_HAS(err, dir);
    snprintf(two, sizeof two, "%s/no/such", dir);
    T_EQ_I(link_host_attach(&a, two, err), -ENOENT);
    T_TRUE(a.host == NULL);
    {
        uint64_t in, out;
        T_EQ_I(link_host_bytes(&a, &in, &out), ERR_USAGE);
    }
    link_host_detach(&a);       /* a private link: nothing to do */
    T_END();

    /* FLOW SHARES: a flow with a share of 1/4 of the host's rate goes at
     * that share however idle the host is; one without a share books the
     * host's clock alone; the host's clock still holds both. */
    T_CASE("link-2.4", "flow shares: a flow goes at its share of the host link, the host's clock caps the sum, bad shares refused");
    snprintf(one, sizeof one, "%s/host.3", dir);     /* a host of its own rate */
    T_EQ_I(link_init(&a, 1000.0, 0.0), 0);
    T_EQ_I(link_init(&b, 1000.0, 0.0), 0);
    T_EQ_I(link_host_attach(&a, one, err), 0);
    T_EQ_I(link_host_attach(&b, one, err), 0);
    T_EQ_I(link_set_share(&a, 250.0), 0);
    {
        double t0 = 10.0;                                 /* an idle host from t0 on */
        T_NEAR(link_egress_reserve(&a, 100, t0), t0 + 0.4, 1e-12);     /* 100 B at 250 B/s */
        T_NEAR(link_egress_reserve(&b, 100, t0), t0 + 0.2, 1e-12);     /* after a's 0.1 s of host */
        T_NEAR(link_egress_reserve(&a, 100, t0), t0 + 0.8, 1e-12);     /* its own clock: 0.4 more */
        /* the host's clock counted a's 0.2 s, no gap: b fills it until
         * t0 + 1.2, so a's next piece, due at t0 + 1.2 on its share, is
         * held by the host until t0 + 1.3 */
        T_NEAR(link_egress_reserve(&b, 900, t0), t0 + 1.2, 1e-12);
        T_NEAR(link_egress_reserve(&a, 100, t0), t0 + 1.3, 1e-12);
    }
    T_EQ_I(link_set_share(&a, -1.0), ERR_USAGE);
    T_EQ_I(link_set_share(&a, NAN), ERR_USAGE);
    T_EQ_I(link_set_share(&a, INFINITY), ERR_USAGE);
    T_EQ_I(link_set_share(&a, 0.5), ERR_USAGE);
    T_NEAR(a.share.rate, 250.0, 0.0);           /* a refused share changed nothing */
    T_EQ_I(link_set_share(&a, 0.0), 0);         /* no share: the host's clock alone */
    T_NEAR(link_egress_reserve(&a, 100, 1e6), 1e6 + 0.1, 1e-6);
    link_host_detach(&a);
    link_host_detach(&b);
    T_END();

    for (int i = 0; i < 4; i++) {
        snprintf(one, sizeof one, "%s/host.%d", dir, i);
        unlink(one);
    }
    rmdir(dir);
}

int main(void)
{
    t_init();
    t_piece();
    t_egress_bound();
    t_ingress_bound();
    t_interleave();
    t_no_credit();
    t_latency();
    t_blocking();
    t_restart();
    t_continue();
    t_unlimited();
    t_independent();
    t_message();
    t_join();
    t_small();
    t_host();
    return t_done();
}
