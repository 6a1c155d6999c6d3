/* test_link_util.c -- the link's own record of its busy and idle time
 * (link.h, UTILIZATION), both directions' and egress alone, with a fake
 * clock.
 *
 * A window's utilization is 1 - idle / window, the idle being the
 * difference of two link_util_mark calls at the window's ends (what the
 * records carry, common/measure/metrics.h: link_util). Nothing here
 * sleeps: the times are numbers the test moves, so every figure is exact
 * arithmetic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "base/err.h"
#include "wire/link.h"

/* util_over: 1 - idle / (t1 - t0) from two marks. */
static double util_over(double idle0, double idle1, double t0, double t1)
{
    return 1.0 - (idle1 - idle0) / (t1 - t0);
}

/* send_at: a sender whose pieces of p bytes become ready every `every`
 * seconds from t0 (every <= p / rate: as fast as the wire; more: a slow
 * sender); returns the last piece's deadline (its arrival). */
static double send_at(struct link *l, int pieces, size_t p, double t0, double every)
{
    double due = t0;

    for (int i = 0; i < pieces; i++)
        due = link_egress_reserve(l, p, t0 + i * every);
    return due;
}

static void t_egress(void)
{
    const double rate = 62.5e6, lat = 1e-3;    /* 500 Mbit/s, 1 ms */
    const size_t p = 15625;                    /* 250 us of wire */
    const double wire = (double)p / rate;
    struct link l;
    double t0 = 10.0, i0, end, u;

    T_CASE("link-util-1.1", "a sender that keeps the wire busy leaves no idle: utilization 1, "
           "its last piece's flight counted busy");
    T_EQ_I(link_init(&l, rate, lat), 0);
    i0 = link_util_mark(&l, t0);
    end = send_at(&l, 400, p, t0, wire);       /* ready as fast as the wire goes */
    T_NEAR(end, t0 + 400 * wire + lat, 1e-9);
    T_NEAR(util_over(i0, link_util_mark(&l, end), t0, end), 1.0, 1e-9);
    /* a sender far ahead of the wire (everything ready at t0) likewise */
    t0 = end;
    i0 = link_util_mark(&l, t0);
    end = send_at(&l, 400, p, t0, 0.0);
    T_NEAR(util_over(i0, link_util_mark(&l, end), t0, end), 1.0, 1e-9);
    T_END();

    T_CASE("link-util-1.2", "a slow sender (a piece ready every 2 wire times, 100 us latency) "
           "leaves the link idle between its pieces' arrivals: utilization ~0.7, below the 0.95 "
           "of bound_by=sw; with 1 ms latency its gaps are bytes in flight: utilization 1");
    {
        struct link s;
        const double l2 = 1e-4;
        T_EQ_I(link_init(&s, rate, l2), 0);
        t0 = 20.0;
        i0 = link_util_mark(&s, t0);
        end = send_at(&s, 400, p, t0, 2.0 * wire);
        /* 399 gaps of one wire time less the flight */
        u = util_over(i0, link_util_mark(&s, end), t0, end);
        T_NEAR(end - t0, 798 * wire + wire + l2, 1e-9);
        T_NEAR(u, 1.0 - 399 * (wire - l2) / (end - t0), 1e-7);     /* idle kept in ns */
        T_TRUE(u < 0.95);
        T_TRUE(u > 0.65 && u < 0.75);
    }
    t0 = end + 5.0;
    i0 = link_util_mark(&l, t0);
    end = send_at(&l, 400, p, t0, 2.0 * wire);
    T_NEAR(util_over(i0, link_util_mark(&l, end), t0, end), 1.0, 1e-9);
    T_END();

    T_CASE("link-util-1.3", "a window that ends before its bytes: the time after the last "
           "arrival until the mark is idle; the idle between two windows is neither's");
    t0 = end + 1.0;
    i0 = link_util_mark(&l, t0);
    end = send_at(&l, 100, p, t0, wire);
    /* the caller (a slow reduce, a late wake-up) comes back 20% late */
    u = util_over(i0, link_util_mark(&l, t0 + 1.25 * (end - t0)), t0, t0 + 1.25 * (end - t0));
    T_NEAR(u, 0.8, 1e-9);
    T_END();
}

/* A ring step (K ranks in lockstep): each rank sends its chunk and, once
 * its neighbour's has arrived (L + chunk/B after the send began), sends
 * the next. The egress's flight and the ingress cover the step: no
 * idle, as the model has none. A rank whose reduce takes `over` per step
 * leaves that much idle each step. */
static double ring_rank(struct link *l, int steps, size_t chunk, double t0, double over)
{
    double t = t0;

    for (int s = 0; s < steps; s++) {
        double due = link_egress_reserve(l, chunk, t);             /* my chunk out */
        double in = link_ingress_reserve(l, chunk, due);           /* theirs in, same time */
        t = fmax(due, in) + over;                                  /* reduce, then forward */
    }
    return t;
}

/* A small-message ring step, latency-dominated (the lab's K = 4 ring at
 * 4 KiB: a 1 KiB chunk at 16 Mbit/s is 0.51 ms of wire, the 1 ms latency
 * most of the step). The model's step is chunk / B + L; the link's own
 * record counts the flight busy, so the model's idle on the span is 0 and
 * the idle the link reads is the software's alone (docs/link.md,
 * UTILIZATION). A frame's header (40 B on the wire, not in the model) is
 * busy too: a row over its model by its headers' wire time is the link's. */
static void t_ring_small(void)
{
    const double rate = 2e6, lat = 1e-3;       /* 16 Mbit/s, 1 ms */
    const size_t chunk = 1024, hdr = 40;
    const int steps = 6;                       /* 2 (K - 1), K = 4 */
    const double model = steps * ((double)chunk / rate + lat);
    struct link l;
    double t0 = 7.0, e0, end, u;

    T_CASE("link-util-2.3", "a latency-dominated ring step (1 KiB chunk, 16 Mbit/s, 1 ms) that "
           "keeps to its model: no idle beyond the model's (its flight is busy), the headers' "
           "wire time busy too; not flagged although 1.3% over the payload's model");
    T_EQ_I(link_init(&l, rate, lat), 0);
    e0 = link_util_mark_egress(&l, t0);
    end = ring_rank(&l, steps, chunk + hdr, t0, 0.0);
    T_NEAR(end - t0, model + steps * (double)hdr / rate, 1e-9);
    T_TRUE((end - t0) / model > 1.01);
    u = util_over(e0, link_util_mark_egress(&l, end), t0, end);
    T_NEAR(u, 1.0, 1e-9);
    T_TRUE(!(u < 0.95));
    /* a sender 3% of a step late each step: idle, but under 5% (not flagged) */
    t0 = end + 1.0;
    e0 = link_util_mark_egress(&l, t0);
    end = ring_rank(&l, steps, chunk + hdr, t0, 0.03 * model / steps);
    u = util_over(e0, link_util_mark_egress(&l, end), t0, end);
    T_NEAR(1.0 - u, steps * 0.03 * model / steps / (end - t0), 1e-7);
    T_TRUE(u > 0.95);
    T_END();

    T_CASE("link-util-2.4", "the same step left idle by a slow sender (its wake-up and reduce "
           "take 8% of the model's step) beyond the model's latency: the egress reads that idle "
           "(over 5% of the combine: flagged)");
    T_EQ_I(link_init(&l, rate, lat), 0);
    t0 = 9.0;
    e0 = link_util_mark_egress(&l, t0);
    end = ring_rank(&l, steps, chunk + hdr, t0, 0.08 * model / steps);
    u = util_over(e0, link_util_mark_egress(&l, end), t0, end);
    T_NEAR(1.0 - u, 0.08 * model / (end - t0), 1e-7);      /* idle kept in ns */
    T_TRUE(u < 0.95);
    T_END();
}

/* transmit: one ring step's frame as the transport sends it (a new
 * transmission: link_send_restart, then its bytes), ready at `at`;
 * returns its last byte's arrival. */
static double transmit(struct link *l, size_t n, double at)
{
    (void)link_send_restart(l, at, 0.0, NAN);
    return link_send_reserve(l, n, at, 0);
}

/* A ring that is not in lockstep (its ranks entered a step at different
 * times, or one reduced faster): a rank whose neighbour's chunk is
 * already in when its own chunk's last byte leaves forwards at once,
 * while that byte is still in flight. It then runs ahead of the model's
 * step (L + n/B, the next begins when the last step's bytes are in) by
 * up to L, and later waits for the ring to catch up: the link stands
 * idle, but only as long as the rank ran ahead, and the call ends when
 * the model says. That wait is the lead (link.h, UTILIZATION), not idle:
 * the K = 16 training ring at 1 MiB (docs/link.md) read 9.5-12.8 ms of
 * lead and 12-18 ms of gaps a step, flagged sw at 1.005x its model. */
static void t_ring_lead(void)
{
    const double rate = 62.5e6, lat = 1e-3;
    const size_t chunk = 62500;                /* 1 ms of wire: a step of 2 ms */
    const double w = (double)chunk / rate;
    struct link l;
    double t0 = 30.0, e0, end, u;

    T_CASE("link-util-2.5", "a ring rank that forwards at once (its neighbour's chunk in "
           "early: the next frame starts while the last is in flight) and then waits for the "
           "ring as long as it ran ahead: no idle (util 1; the union alone read 0.83); a wait "
           "longer than the lead is idle; the lead is the call's own (link_enter)");
    T_EQ_I(link_init(&l, rate, lat), 0);
    e0 = link_util_mark_egress(&l, t0);
    link_enter(&l, t0);
    (void)transmit(&l, chunk, t0);                         /* my chunk */
    (void)transmit(&l, chunk, t0 + w);                     /* forward at once: lead L */
    end = transmit(&l, chunk, t0 + 2 * w + 2 * lat);       /* waits L for the ring */
    T_NEAR(end, t0 + 3 * (w + lat), 1e-9);                 /* the model's 3 steps */
    u = util_over(e0, link_util_mark_egress(&l, end), t0, end);
    T_NEAR(u, 1.0, 1e-9);
    /* the same call, the third frame 0.6 L later still: that much idle */
    t0 = end + 1.0;
    e0 = link_util_mark_egress(&l, t0);
    link_enter(&l, t0);
    (void)transmit(&l, chunk, t0);
    (void)transmit(&l, chunk, t0 + w);
    end = transmit(&l, chunk, t0 + 2 * w + 2.6 * lat);
    u = util_over(e0, link_util_mark_egress(&l, end), t0, end);
    T_NEAR(1.0 - u, 0.6 * lat / (end - t0), 1e-7);
    /* a lead left over from one call pays no wait of the next */
    t0 = end + 1.0;
    e0 = link_util_mark_egress(&l, t0);
    link_enter(&l, t0);
    (void)transmit(&l, chunk, t0);
    (void)transmit(&l, chunk, t0 + w);                     /* lead L, never waited off */
    t0 = t0 + 1.0;
    e0 = link_util_mark_egress(&l, t0);
    link_enter(&l, t0);
    (void)transmit(&l, chunk, t0);
    end = transmit(&l, chunk, t0 + w + 2 * lat);           /* waits L: idle */
    u = util_over(e0, link_util_mark_egress(&l, end), t0, end);
    T_NEAR(1.0 - u, lat / (end - t0), 1e-7);
    T_END();

    T_CASE("link-util-2.6", "frames that never start in flight earn no lead: a rank whose "
           "reduce and wake-up take 8% of each step in lockstep reads that idle (flagged), "
           "sent as the transport sends (link_send_restart)");
    T_EQ_I(link_init(&l, rate, lat), 0);
    t0 = 40.0;
    e0 = link_util_mark_egress(&l, t0);
    link_enter(&l, t0);
    end = t0;
    for (int s = 0; s < 6; s++)
        end = transmit(&l, chunk, end + (s ? 0.08 * (w + lat) : 0.0));
    u = util_over(e0, link_util_mark_egress(&l, end), t0, end);
    T_NEAR(1.0 - u, 5 * 0.08 * (w + lat) / (end - t0), 1e-7);
    T_TRUE(u < 0.95);
    T_END();
}

/* ring_skewed: K ranks' egress (each its own link) through one ring
 * all-reduce of 2(K - 1) steps, rank r entering at t0 + enter[r], each
 * forward `over` after its bytes were in (and its wire free): the
 * model's dependencies (a step's chunk is in L + w after it left the
 * neighbour). Into u[r] each rank's utilization as the merge takes it
 * (metrics_merge.c, skew_of): its window from its own entry to its last
 * chunk's arrival, less its skew E - e from span and idle (at most the
 * idle). Returns the call's time from the last entry E. */
#define RK 4
static double ring_skewed(const double *enter, double over, double t0, double *u)
{
    const double rate = 62.5e6, lat = 1e-3, w = 62500 / rate, T = w + lat;
    struct link l[RK];
    double S[RK][2 * (RK - 1)], e0[RK], E = -1.0, last = 0.0;
    const int J = 2 * (RK - 1);

    for (int r = 0; r < RK; r++) {
        (void)link_init(&l[r], rate, lat);
        S[r][0] = t0 + enter[r];
        E = fmax(E, S[r][0]);
        e0[r] = link_util_mark_egress(&l[r], S[r][0]);
        link_enter(&l[r], S[r][0]);
    }
    for (int j = 1; j < J; j++)
        for (int r = 0; r < RK; r++)
            S[r][j] = fmax(S[r][j - 1] + w, S[(r + RK - 1) % RK][j - 1] + T) + over;
    for (int j = 0; j < J; j++)
        for (int r = 0; r < RK; r++)
            (void)transmit(&l[r], 62500, S[r][j]);
    for (int r = 0; r < RK; r++) {
        double end = S[(r + RK - 1) % RK][J - 1] + T;
        double idle = link_util_mark_egress(&l[r], end) - e0[r], span = end - S[r][0];
        double skew = fmin(E - S[r][0], idle);
        u[r] = fmin(1.0, 1.0 - (idle - skew) / (span - skew));
        last = fmax(last, end - E);
    }
    return last;
}

static void t_ring_skewed(void)
{
    const double enter[RK] = { 0.0, 3.5e-3, 1e-3, 6e-3 };    /* the last enters 6 ms late */
    const double model = 2 * (RK - 1) * (62500 / 62.5e6 + 1e-3);
    double u[RK], t;

    T_CASE("link-util-2.7", "a K = 4 ring whose ranks enter up to 3 steps apart, its software "
           "instant: the call takes the model's time from the last entry and every rank reads "
           "util 1 with its skew left out (its lead pays its waits; the union alone read "
           "as low as 0.67); the same ring forwarding 10% of a step late reads ~0.9 at its "
           "busiest rank (flagged)");
    t = ring_skewed(enter, 0.0, 60.0, u);
    T_NEAR(t, model, 1e-9);
    for (int r = 0; r < RK; r++)
        T_NEAR(u[r], 1.0, 1e-7);
    t = ring_skewed(enter, 0.1 * model / (2 * (RK - 1)), 70.0, u);
    double best = 0.0;
    for (int r = 0; r < RK; r++)
        best = fmax(best, u[r]);
    T_TRUE(t > 1.05 * model);
    T_TRUE(best < 0.95);
    T_TRUE(best > 0.85);
    T_END();
}

static void t_ring(void)
{
    const double rate = 62.5e6, lat = 1e-3;
    const size_t chunk = 1u << 20;
    struct link l;
    double t0 = 3.0, i0, end;

    T_CASE("link-util-2.1", "ring steps in lockstep: egress in flight and ingress leave no idle; "
           "a reduce of 10% of a step per step leaves ~9% idle (flagged)");
    T_EQ_I(link_init(&l, rate, lat), 0);
    i0 = link_util_mark(&l, t0);
    end = ring_rank(&l, 6, chunk, t0, 0.0);
    T_NEAR(util_over(i0, link_util_mark(&l, end), t0, end), 1.0, 1e-9);
    double step = lat + (double)chunk / rate;
    t0 = end + 1.0;
    i0 = link_util_mark(&l, t0);
    end = ring_rank(&l, 6, chunk, t0, 0.1 * step);
    double u = util_over(i0, link_util_mark(&l, end), t0, end);
    T_NEAR(u, 1.0 / 1.1, 1e-7);
    T_TRUE(u < 0.95);
    T_END();

    T_CASE("link-util-2.2", "a neighbour late by d each step: the union of both directions reads "
           "busy (the late bytes arrive), the egress alone reads d idle per step (flagged)");
    T_EQ_I(link_init(&l, rate, lat), 0);
    t0 = 50.0;
    double e0 = link_util_mark_egress(&l, t0);
    i0 = link_util_mark(&l, t0);
    double t = t0, d = 0.2 * step;
    for (int s = 0; s < 6; s++) {
        (void)link_egress_reserve(&l, chunk, t);                    /* mine, at once */
        t = link_ingress_reserve(&l, chunk, t + d + step);          /* theirs, d late */
    }
    end = t;
    T_NEAR(util_over(i0, link_util_mark(&l, end), t0, end), 1.0, 1e-9);
    u = util_over(e0, link_util_mark_egress(&l, end), t0, end);
    T_NEAR(u, 1.0 / 1.2, 1e-7);
    T_TRUE(u < 0.95);
    T_END();

    t_ring_small();
    t_ring_lead();
    t_ring_skewed();
}

static void t_ingress(void)
{
    const double rate = 1e8;
    const size_t p = 25000;                    /* 250 us */
    struct link l;
    double t0 = 1.0, i0, t = t0;

    T_CASE("link-util-3.1", "ingress: K senders into one reader keep it busy (util 1); one slow "
           "sender leaves it idle between its pieces");
    T_EQ_I(link_init(&l, rate, 0.0), 0);
    i0 = link_util_mark(&l, t0);
    for (int i = 0; i < 200; i++)               /* 4 senders, all at once */
        t = link_ingress_reserve(&l, p, t0 + (double)p / rate);
    T_NEAR(util_over(i0, link_util_mark(&l, t), t0, t), 1.0, 1e-9);
    t0 = t + 2.0;
    i0 = link_util_mark(&l, t0);
    for (int i = 0; i < 200; i++)               /* a piece every 4 wire times */
        t = link_ingress_reserve(&l, p, t0 + (4.0 * i + 1.0) * (double)p / rate);
    T_NEAR(util_over(i0, link_util_mark(&l, t), t0, t), 200.0 / 797.0, 1e-9);
    T_END();

    T_CASE("link-util-3.2", "rate 0: nothing tracked, the mark is NaN");
    T_EQ_I(link_init(&l, 0.0, 1e-3), 0);
    (void)link_egress_reserve(&l, 1000, 1.0);
    T_TRUE(isnan(link_util_mark(&l, 2.0)));
    T_END();
}

static void t_host(void)
{
    char dir[] = "/tmp/psr-linkutil.XXXXXX", path[64], err[ERR_LEN];
    const double rate = 1e8, lat = 2e-4;
    const size_t p = 25000;
    const double wire = (double)p / rate;
    struct link a, b, pa, pb;
    double t0 = 7.0, ia, ib, ipa, ipb, end = t0;

    if (!mkdtemp(dir)) {
        t_skip("link-util-4.1", "a host link shared by two links", "mkdtemp failed");
        return;
    }
    snprintf(path, sizeof path, "%s/host.0", dir);
    T_CASE("link-util-4.1", "host link: two roles taking turns keep the host's NIC busy; each "
           "sees the host's record (util 1), where two private links would read 0.5");
    T_EQ_I(link_init(&a, rate, lat), 0);
    T_EQ_I(link_init(&b, rate, lat), 0);
    T_EQ_I(link_init(&pa, rate, lat), 0);
    T_EQ_I(link_init(&pb, rate, lat), 0);
    T_EQ_I(link_host_attach(&a, path, err), 0);
    T_EQ_I(link_host_attach(&b, path, err), 0);
    ia = link_util_mark(&a, t0);
    double ea = link_util_mark_egress(&b, t0);
    ipa = link_util_mark(&pa, t0);
    ipb = link_util_mark(&pb, t0);
    /* a worker's push (egress) and its colocated server's weights
     * (egress) in turns of 10 pieces: the host is never idle */
    for (int turn = 0; turn < 20; turn++) {
        struct link *who = turn % 2 ? &b : &a, *priv = turn % 2 ? &pb : &pa;
        double from = t0 + turn * 10 * wire;
        for (int i = 0; i < 10; i++) {
            end = link_egress_reserve(who, p, from + i * wire);
            (void)link_egress_reserve(priv, p, from + i * wire);
        }
    }
    T_NEAR(end, t0 + 200 * wire + lat, 1e-9);
    ib = link_util_mark(&b, end);
    T_NEAR(util_over(ia, ib, t0, end), 1.0, 1e-9);
    T_NEAR(util_over(ia, link_util_mark(&a, end), t0, end), 1.0, 1e-9);
    T_NEAR(util_over(ea, link_util_mark_egress(&a, end), t0, end), 1.0, 1e-9);   /* egress: the host's too */
    /* each private link was busy only in its own turns */
    double ua = util_over(ipa, link_util_mark(&pa, end), t0, end);
    double ub = util_over(ipb, link_util_mark(&pb, end), t0, end);
    T_TRUE(ua < 0.6 && ub < 0.6);
    T_END();

    T_CASE("link-util-4.2", "host link: idle on the host is seen by both roles, once");
    t0 = end + 1.0;
    ia = link_util_mark(&a, t0);
    (void)link_egress_reserve(&a, p, t0);               /* busy wire + lat */
    end = link_egress_reserve(&b, p, t0 + 1.0) ;        /* then 1 s idle less the first */
    ib = link_util_mark(&b, end);
    T_NEAR(ib - ia, 1.0 - wire - lat, 1e-9);
    T_NEAR(link_util_mark(&a, end), ib, 1e-12);
    link_host_detach(&a);
    link_host_detach(&b);
    T_END();
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    t_egress();
    t_ring();
    t_ingress();
    t_host();
    return t_done();
}
