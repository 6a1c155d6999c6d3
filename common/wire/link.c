/* link.c -- the emulated NIC's arithmetic (see link.h for the model).
 *
 * Nothing here sleeps or reads the clock: every function takes `now` and
 * returns a time, so the same code serves blocking senders (net_xfer.c), the
 * libuv server, and unit tests with a fake clock.
 */
#include "link.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"

/* The host's file (HOST LINKS in link.h): the clocks as the bits of a
 * double, so that one compare-and-swap books a reservation. */
struct host_clocks {
    _Atomic uint64_t magic;         /* HOST_MAGIC once a process set the rate */
    _Atomic uint64_t rate;          /* the host's rate, bytes/s (double bits) */
    _Atomic uint64_t latency;       /* its latency, s (double bits) */
    _Atomic uint64_t egress, ingress;   /* the two clocks (double bits; 0 = 0.0) */
    _Atomic uint64_t bytes_out, bytes_in;   /* the host's NIC bytes (link_host_bytes) */
    _Atomic uint64_t busy, idle;    /* UTILIZATION: horizon (double bits), idle (ns) */
    _Atomic uint64_t ebusy, eidle;  /* ... of egress alone */
};
_Static_assert(offsetof(struct host_clocks, bytes_out) == LINK_HOST_BYTES_OUT_OFF, "link.h's layout");
_Static_assert(offsetof(struct host_clocks, bytes_in) == LINK_HOST_BYTES_IN_OFF, "link.h's layout");
_Static_assert(offsetof(struct host_clocks, busy) == LINK_HOST_BUSY_OFF, "link.h's layout");
_Static_assert(offsetof(struct host_clocks, idle) == LINK_HOST_IDLE_OFF, "link.h's layout");
_Static_assert(offsetof(struct host_clocks, ebusy) == LINK_HOST_EBUSY_OFF, "link.h's layout");
_Static_assert(offsetof(struct host_clocks, eidle) == LINK_HOST_EIDLE_OFF, "link.h's layout");
#define HOST_MAGIC 0x4b4e494c52535001ull  /* "\1PSRLINK" */

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The bucket's clock, and a swap that happens only when it still reads
 * `expect` (always, for a private bucket: one thread per direction). */
static double clock_get(const struct link_bucket *b)
{
    return b->shared ? double_of(atomic_load((_Atomic uint64_t *)b->shared)) : b->vclock;
}

static int clock_swap(struct link_bucket *b, double expect, double want)
{
    if (b->shared) {
        uint64_t e = bits_of(expect);
        if (!atomic_compare_exchange_strong((_Atomic uint64_t *)b->shared, &e, bits_of(want)))
            return 0;
    } else if (!(b->vclock == expect)) {
        return 0;
    }
    b->vclock = want;
    return 1;
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
    l->egress.vclock = l->ingress.vclock = l->share.vclock = -INFINITY;
    l->latency_s = latency_s;
    l->send_app = -INFINITY;
    l->in_stamp = NAN;
    l->in_due = NAN;
    l->in_virt = NAN;
    l->vin_start = NAN;
    l->vt_floor = -INFINITY;
    return 0;
}

int link_active(const struct link *l)
{
    return l->egress.rate > 0.0 || l->latency_s > 0.0;
}

size_t link_piece(const struct link *l)
{
    return l->egress.rate > 0.0 ? model_link_piece(l->egress.rate) : SIZE_MAX;
}

size_t link_frame_first(const struct link *l, size_t hdr, size_t payload)
{
    return link_first_at(l->egress.rate, hdr, payload);
}

size_t link_first_at(double rate, size_t hdr, size_t payload)
{
    size_t piece = rate > 0.0 ? model_link_piece(rate) : SIZE_MAX, room;

    if (piece == SIZE_MAX || piece <= hdr)
        return payload;
    room = piece - hdr;
    return payload <= room + LINK_PIECE_SLACK ? payload : room;
}

/* reserve: the bucket itself (no burst): the n bytes occupy the wire from
 * max(vclock, from) for n / rate; advances and returns b->vclock, and
 * the start in *at. */
static double reserve_at(struct link_bucket *b, size_t n, double from, double *at)
{
    for (;;) {      /* one pass unless another process booked in between */
        double clock = clock_get(b);
        double start = fmax(clock, from);
        double end = b->rate > 0.0 ? start + (double)n / b->rate : start;
        if (clock_swap(b, clock, end)) {
            *at = start;
            return end;
        }
    }
}

static double reserve(struct link_bucket *b, size_t n, double from)
{
    double at;

    return reserve_at(b, n, from, &at);
}

/* UTILIZATION (link.h): a horizon and an idle total, the host's when
 * shared: [UTIL_BOTH] both directions' union, [UTIL_EGRESS] egress alone. */
enum { UTIL_BOTH, UTIL_EGRESS };

static _Atomic uint64_t *util_busy(struct link *l, int which)
{
    struct host_clocks *h = l->host;
    return h ? (which == UTIL_EGRESS ? &h->ebusy : &h->busy) : &l->util_busy[which];
}

static _Atomic uint64_t *util_idle(struct link *l, int which)
{
    struct host_clocks *h = l->host;
    return h ? (which == UTIL_EGRESS ? &h->eidle : &h->idle) : &l->util_idle[which];
}

/* util_note: the link was busy over [start, end]: a start after the
 * horizon adds the gap to the idle total; the horizon moves to end if
 * later. One compare-and-swap decides which gap is whose, so two
 * processes (threads) booking at once never count one gap twice. */
static void util_note(struct link *l, int which, double start, double end)
{
    _Atomic uint64_t *busy = util_busy(l, which);
    uint64_t hb = atomic_load(busy);

    if (!(l->egress.rate > 0.0))
        return;
    for (;;) {
        double h = double_of(hb), gap = start > h ? start - h : 0.0;
        if (!(end > h))
            return;         /* inside the busy union already: nothing changes */
        if (atomic_compare_exchange_weak(busy, &hb, bits_of(end))) {
            if (which == UTIL_EGRESS && gap > 0.0 && l->util_lead > 0.0) {
                double paid = fmin(gap, l->util_lead);  /* the wait its lead allows */
                l->util_lead -= paid;
                gap -= paid;
            }
            if (gap > 0.0)
                atomic_fetch_add(util_idle(l, which), (uint64_t)llround(gap * 1e9));
            return;
        }
    }
}

/* util_lead_add: a new transmission (link_send_restart) whose wire starts
 * at `start`, while the egress's last bytes are in flight until the
 * horizon: it runs ahead of the model's step (which begins when the last
 * step's bytes are in) by the overlap, at most the latency (link.h,
 * UTILIZATION: the lead). */
static void util_lead_add(struct link *l, double start)
{
    double h = double_of(atomic_load(util_busy(l, UTIL_EGRESS)));

    if (l->egress.rate > 0.0 && h > start)
        l->util_lead += fmin(h - start, l->latency_s);
}

/* util_egress: an egress reservation, in both records. */
static void util_egress(struct link *l, double start, double end)
{
    util_note(l, UTIL_BOTH, start, end);
    util_note(l, UTIL_EGRESS, start, end);
}

static double util_mark(struct link *l, int which, double now)
{
    if (!(l->egress.rate > 0.0))
        return NAN;
    util_note(l, which, now, now);
    return (double)atomic_load(util_idle(l, which)) * 1e-9;
}

double link_util_mark(struct link *l, double now)
{
    return util_mark(l, UTIL_BOTH, now);
}

double link_util_mark_egress(struct link *l, double now)
{
    return util_mark(l, UTIL_EGRESS, now);
}

/* host_count: the host's NIC bytes (HOST LINKS), counted where they are
 * booked. */
static void host_count(struct link *l, _Atomic uint64_t *(*which)(struct host_clocks *), size_t n)
{
    if (l->host)
        atomic_fetch_add(which(l->host), (uint64_t)n);
}

static _Atomic uint64_t *host_out(struct host_clocks *h) { return &h->bytes_out; }
static _Atomic uint64_t *host_in(struct host_clocks *h) { return &h->bytes_in; }

int link_set_share(struct link *l, double rate)
{
    if (!(rate >= 0.0) || !isfinite(rate) || (rate > 0.0 && rate < LINK_RATE_MIN))
        return ERR_USAGE;
    l->share.rate = rate;
    return 0;
}

double link_egress_reserve(struct link *l, size_t n, double now)
{
    double own, at, end;

    host_count(l, host_out, n);
    if (!(l->share.rate > 0.0)) {
        end = reserve_at(&l->egress, n, now, &at) + l->latency_s;
        util_egress(l, at, end);    /* transmitting, then in flight */
        return end;
    }
    /* FLOW SHARES: the piece is booked on the flow's own clock at its
     * share and on the host's at the host's rate, both from now (so the
     * host's clock counts every byte once and leaves no gap), and may go
     * when both have passed. */
    own = reserve(&l->share, n, now);
    end = fmax(own, reserve_at(&l->egress, n, now, &at)) + l->latency_s;
    util_egress(l, at, end);
    return end;
}

double link_ingress_reserve(struct link *l, size_t n, double t)
{
    host_count(l, host_in, n);
    if (l->ingress.rate <= 0.0)
        return t;
    /* The bytes were on the wire for n / rate before their last one came. */
    double at, end = reserve_at(&l->ingress, n, t - (double)n / l->ingress.rate, &at);
    util_note(l, UTIL_BOTH, at, end);
    return end;
}

/* frame_note: n more bytes of the stamped frame being read (VIRTUAL
 * TIMELINE): their last one's arrival on the sender's schedule. */
static void frame_note(struct link *l, size_t n)
{
    if (isnan(l->vin_start) || !(l->ingress.rate > 0.0)) {
        l->in_virt = NAN;                   /* bytes of no stamped frame */
        return;
    }
    l->vin_bytes += (double)n;
    l->in_virt = l->vin_start + l->vin_bytes / l->ingress.rate + l->latency_s;
}

void link_ingress_frame(struct link *l, double start, size_t hdr, double now)
{
    l->vin_start = NAN;
    l->in_virt = NAN;
    /* Trusted only where it could be true: the header left after its wire
     * start and was read before now; a stamp from another machine's clock,
     * or a forged one, is ignored. */
    if (!(l->ingress.rate > 0.0) || !(start <= now) || !(start >= now - LINK_STAMP_SPAN))
        return;
    l->vin_start = start;
    l->vin_bytes = 0.0;
    frame_note(l, hdr);
}

double link_ingress_join(struct link *l, size_t n, double t, double stamp, int cut)
{
    double due;

    /* Same kernel buffer as the last reservation, or the rest of the piece
     * the last read was cut short in (the sender wrote it at once, but the
     * kernel may have cut it into buffers of its own: a 64 KiB piece is two
     * on loopback, whose segments hold 65483 bytes), nothing booked since,
     * and a piece at most in all: take that reservation back and book both
     * parts as one. (NAN never compares equal: a read without a stamp
     * joins only as a piece's rest.) The piece bounds the credit: bytes an
     * unpaced sender put in the buffer at once still pass no faster than
     * one piece early. */
    size_t piece = l->ingress.rate > 0.0 ? model_link_piece(l->ingress.rate) : 0;
    int rest = l->in_cut && l->in_n + n <= piece;   /* within the piece last cut short */

    if ((stamp == l->in_stamp || rest) && l->in_n + n <= piece + LINK_PIECE_SLACK &&
        l->ingress.rate > 0.0 && clock_get(&l->ingress) == l->in_end) {
        size_t both = l->in_n + n;
        double end = fmax(l->in_from, l->in_t - (double)both / l->ingress.rate) +
                     (double)both / l->ingress.rate;
        /* One swap: fails when another process on the host booked since. */
        if (clock_swap(&l->ingress, l->in_end, end)) {
            host_count(l, host_in, n);
            util_note(l, UTIL_BOTH, end - (double)both / l->ingress.rate, end);
            l->in_end = end;
            l->in_n = both;
            l->in_cut = cut;
            l->in_due = fmax(end, t);     /* (end is booked from the first part's t) */
            frame_note(l, n);
            return end;
        }
    }
    l->in_from = clock_get(&l->ingress);
    due = link_ingress_reserve(l, n, t);
    l->in_stamp = stamp;
    l->in_t = t;
    l->in_end = l->ingress.vclock;
    l->in_n = n;
    l->in_cut = cut;
    l->in_due = fmax(due, t);
    frame_note(l, n);
    return due;
}

size_t link_ingress_next(const struct link *l)
{
    size_t piece = link_piece(l);

    /* A read cut short inside a piece: the rest of that piece, no more. */
    return piece < SIZE_MAX && l->in_cut && l->in_n < piece ? piece - l->in_n : piece;
}

int link_host_attach(struct link *l, const char *path, char *err)
{
    struct host_clocks *h;
    uint64_t magic = 0;
    int fd, rc = 0;
    struct stat st;

    /* O_NONBLOCK: a FIFO or a device there is refused below, not waited on. */
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
    if (fd < 0) {
        rc = -errno;
        snprintf(err, ERR_LEN, "host link %.120s: %s", path, strerror(errno));
        return rc;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, ERR_LEN, "host link %.120s: not a regular file", path);
        close(fd);
        return ERR_USAGE;
    }
    /* Growing to the size is idempotent: two first comers agree. */
    if ((size_t)st.st_size < sizeof *h && ftruncate(fd, sizeof *h) != 0) {
        rc = -errno;
        snprintf(err, ERR_LEN, "host link %.120s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (h == MAP_FAILED) {
        rc = -errno;
        snprintf(err, ERR_LEN, "host link %.120s: mmap: %s", path, strerror(errno));
        return rc;
    }
    /* The first comer writes the host's rate and latency, then the magic;
     * the others wait (briefly: two stores) and compare. */
    if (atomic_compare_exchange_strong(&h->magic, &magic, 1)) {
        atomic_store(&h->rate, bits_of(l->egress.rate));
        atomic_store(&h->latency, bits_of(l->latency_s));
        atomic_store(&h->magic, HOST_MAGIC);
    } else {
        for (int i = 0; i < 1000000 && atomic_load(&h->magic) == 1; i++)
            ;
        if (atomic_load(&h->magic) != HOST_MAGIC) {
            snprintf(err, ERR_LEN, "host link %.120s: not a psring host link file", path);
            munmap(h, sizeof *h);
            return ERR_USAGE;
        }
    }
    if (double_of(atomic_load(&h->rate)) != l->egress.rate ||
        double_of(atomic_load(&h->latency)) != l->latency_s) {
        snprintf(err, ERR_LEN, "host link %.80s: the host's link is %.6g bytes/s, %.6g s; this process "
                 "has %.6g bytes/s, %.6g s (one host, one NIC)", path, double_of(atomic_load(&h->rate)),
                 double_of(atomic_load(&h->latency)), l->egress.rate, l->latency_s);
        munmap(h, sizeof *h);
        return ERR_USAGE;
    }
    l->host = h;
    l->egress.shared = &h->egress;
    l->ingress.shared = &h->ingress;
    return 0;
}

int link_setup(struct link *l, double rate, double latency_s, const char *host, char *err)
{
    if (link_init(l, rate, latency_s) != 0) {
        snprintf(err, ERR_LEN, "--link-bw/--link-latency: rate %g B/s, latency %g s out of range",
                 rate, latency_s);
        return ERR_USAGE;
    }
    return host ? link_host_attach(l, host, err) : 0;
}

int link_host_bytes(const struct link *l, uint64_t *in, uint64_t *out)
{
    if (!l->host)
        return ERR_USAGE;
    *in = atomic_load(&((struct host_clocks *)l->host)->bytes_in);
    *out = atomic_load(&((struct host_clocks *)l->host)->bytes_out);
    return 0;
}

void link_host_detach(struct link *l)
{
    if (!l->host)
        return;
    l->egress.vclock = clock_get(&l->egress);
    l->ingress.vclock = clock_get(&l->ingress);
    for (int w = UTIL_BOTH; w <= UTIL_EGRESS; w++) {    /* UTILIZATION goes on privately */
        atomic_store(&l->util_busy[w], atomic_load(util_busy(l, w)));
        atomic_store(&l->util_idle[w], atomic_load(util_idle(l, w)));
    }
    l->egress.shared = l->ingress.shared = NULL;
    munmap(l->host, sizeof(struct host_clocks));
    l->host = NULL;
}

double link_send_reserve(struct link *l, size_t n, double now, int cont)
{
    /* The sender's own timeline: real time minus what the link held it. */
    double app = now - l->send_lag;

    if (l->send_new && !cont) {
        /* link_send_restart fixed where this transmission starts. */
        app = fmin(now, l->send_fixed);
        l->credited_s += now - app;
        l->send_lag = now - app;
        l->send_new = 0;
        l->send_cont = 0;
        cont = 1;
    }
    if (l->send_cont && !cont) {
        /* link_send_continue: the rest of a frame, from where the wire
         * went free on the timeline (never later than now). */
        app = fmin(now, fmax(fmax(l->egress.vclock, l->share.vclock), l->send_app));
        cont = 1;
    }
    l->send_cont = 0;
    /* A new send continues the timeline only when it comes right after the
     * wire went free on it; otherwise the sender waited or computed, and
     * real time is its timeline again. */
    if (!cont && !(app <= fmax(fmax(l->egress.vclock, l->share.vclock), l->send_app) +
                                0.5 * l->latency_s)) {
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

double link_in_ready(const struct link *l)
{
    return isnan(l->in_virt) ? l->in_due : l->in_virt;
}

void link_enter(struct link *l, double now)
{
    l->vt_floor = now;
    l->util_lead = 0.0;         /* UTILIZATION: a lead is the call's own */
}

double link_enter_vt(struct link *l, double now, double cpu_s)
{
    double ready = link_in_ready(l), start = now;

    /* The thread only computed since the last call's bytes were in (the
     * bench's bookkeeping): a host with a core of its own would have
     * entered at ready + cpu_s; a later `now` is a wait for a CPU. The
     * same bounds as link_vt_late's: bytes of the last call, a lag below
     * LINK_STAMP_SPAN. */
    if (link_active(l) && cpu_s >= 0.0 && ready >= l->vt_floor && ready <= now &&
        ready + cpu_s < now && now - (ready + cpu_s) <= LINK_STAMP_SPAN)
        start = ready + cpu_s;
    link_enter(l, start);
    return start;
}

double link_vt_late(struct link *l, double now, double cpu_s)
{
    double ready = link_in_ready(l), end, late;

    /* The call's last bytes came in during it (after link_enter), and the
     * sender only computed or waited for a CPU or the link since. */
    if (!link_active(l) || !(cpu_s >= 0.0) || !(ready >= l->vt_floor) || !(ready <= now))
        return 0.0;
    end = ready + cpu_s;
    late = now - end;
    if (!(late > 0.0) || !(late <= LINK_STAMP_SPAN))
        return 0.0;
    l->credited_s += late;
    return late;
}

double link_send_restart(struct link *l, double now, double queued_s, double cpu_s)
{
    double ready = link_in_ready(l), app = now, slack = l->latency_s;

    /* VIRTUAL TIMELINE: a send that forwards the last bytes read starts
     * when they were in on the sender's schedule, plus the CPU this host
     * spent since; any other send, at real time less its waits for a CPU
     * (OWN CORES). Never before the bytes were in, never later than now,
     * and never earlier than a piece's wire time and the latency before
     * now: its first piece is then due now at the earliest, so the link
     * takes back a late wake-up but never lets a late sender catch up in
     * a burst faster than the rate. */
    if (l->egress.rate > 0.0)
        slack += (double)model_link_piece(l->egress.rate) / l->egress.rate;
    if (cpu_s >= 0.0 && ready <= now)
        app = ready + cpu_s;
    else if (queued_s > 0.0 && isfinite(queued_s))
        app = now - queued_s;
    if (ready <= now && app < ready)
        app = ready;
    app = fmin(now, fmax(fmax(app, now - slack), l->vt_floor));
    util_lead_add(l, fmax(app, fmax(clock_get(&l->egress), l->share.vclock)));
    l->send_fixed = app;
    l->send_new = 1;
    l->send_cont = 0;
    l->vin_start = NAN;                     /* the frame read is done with */
    return fmax(app, fmax(clock_get(&l->egress), l->share.vclock));
}

void link_send_continue(struct link *l)
{
    l->send_cont = 1;
}
