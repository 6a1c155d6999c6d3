/* link.c -- the emulated NIC's arithmetic (see link.h for the model).
 *
 * Nothing here sleeps or reads the clock: every function takes `now` and
 * returns a time, so the same code serves blocking senders (net.c), the
 * libuv server, and unit tests with a fake clock.
 */
#include "link.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "err.h"

static size_t piece_bytes(double rate)
{
    double p = fmax(LINK_PIECE_MIN, rate * LINK_PIECE_S);
    return p >= (double)LINK_PIECE_MAX ? (size_t)LINK_PIECE_MAX : (size_t)p;
}

int link_init(struct link *l, double rate, double latency_s)
{
    memset(l, 0, sizeof *l);
    /* The comparisons are written so that NaN fails them. */
    if (!(rate >= 0.0) || !isfinite(rate) || (rate > 0.0 && rate < LINK_RATE_MIN))
        return ERR_USAGE;
    if (!(latency_s >= 0.0) || !(latency_s <= LINK_LATENCY_MAX))
        return ERR_USAGE;

    l->egress.rate = l->ingress.rate = rate;
    l->egress.vclock = l->ingress.vclock = -INFINITY;
    l->latency_s = latency_s;
    l->send_app = -INFINITY;
    l->in_stamp = NAN;
    return 0;
}

int link_active(const struct link *l)
{
    return l->egress.rate > 0.0 || l->latency_s > 0.0;
}

size_t link_piece(const struct link *l)
{
    return l->egress.rate > 0.0 ? piece_bytes(l->egress.rate) : SIZE_MAX;
}

/* reserve: the bucket itself (no burst): the n bytes occupy the wire from
 * max(vclock, from) for n / rate; advances and returns b->vclock. */
static double reserve(struct link_bucket *b, size_t n, double from)
{
    double start = fmax(b->vclock, from);

    b->vclock = b->rate > 0.0 ? start + (double)n / b->rate : start;
    return b->vclock;
}

double link_egress_reserve(struct link *l, size_t n, double now)
{
    return reserve(&l->egress, n, now) + l->latency_s;
}

double link_ingress_reserve(struct link *l, size_t n, double t)
{
    if (l->ingress.rate <= 0.0)
        return t;
    /* The bytes were on the wire for n / rate before their last one came. */
    return reserve(&l->ingress, n, t - (double)n / l->ingress.rate);
}

double link_ingress_join(struct link *l, size_t n, double t, double stamp)
{
    double due;

    /* Same kernel buffer as the last reservation, nothing booked since,
     * and a piece at most in all: take that reservation back and book both
     * parts as one. (NAN never compares equal: a read without a stamp never
     * joins.) The piece bounds the credit: bytes an unpaced sender put in
     * the buffer at once still pass no faster than one piece early. */
    if (stamp == l->in_stamp && l->ingress.vclock == l->in_end &&
        l->in_n + n <= piece_bytes(l->ingress.rate)) {
        l->ingress.vclock = l->in_from;
        n += l->in_n;
        t = l->in_t;
    } else {
        l->in_from = l->ingress.vclock;
    }
    due = link_ingress_reserve(l, n, t);
    l->in_stamp = stamp;
    l->in_t = t;
    l->in_end = l->ingress.vclock;
    l->in_n = n;
    return due;
}

double link_send_reserve(struct link *l, size_t n, double now, int cont)
{
    /* The sender's own timeline: real time minus what the link held it. */
    double app = now - l->send_lag;

    /* A new send continues the timeline only when it comes right after the
     * wire went free on it; otherwise the sender waited or computed, and
     * real time is its timeline again. */
    if (!cont && !(app <= fmax(l->egress.vclock, l->send_app) + 0.5 * l->latency_s)) {
        l->send_lag = 0.0;
        app = now;
    }
    l->send_app = app;
    return link_egress_reserve(l, n, app);
}

void link_send_woke(struct link *l, double now)
{
    /* Whatever time passed since the reservation, the sender was held. */
    if (now > l->send_app)
        l->send_lag = now - l->send_app;
}

void link_send_restart(struct link *l)
{
    /* Real time is the sender's timeline again. */
    l->send_lag = 0.0;
}
