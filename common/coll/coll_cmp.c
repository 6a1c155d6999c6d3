/* coll_cmp.c -- the ring and rd all-reduces on a compressed wire (the
 * order and the checks: coll_cmp.h). The step structure is ring.c's and
 * rd.c's, unchanged (their schedules, partners and tags are called, not
 * copied); what differs is what travels: the encoded chunk, decoded and
 * added in the job's dtype on arrival, re-encoded before it is sent on.
 * Kept apart from ring.c and rd.c so that those stay the plain algorithm
 * a newcomer reads first.
 */
#include "coll_cmp.h"

#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

/* ------------------------------------------------------------ the wire */

/* struct wire: the layout of a wire vector of n elements: the first nc
 * encoded (ws bytes each), the last n - nc (the caller's exact tail: the
 * step's trailer, its example counts and loss) raw in the job's dtype
 * (es bytes each), so the trailer rides in the gradient's frames instead
 * of a second all-reduce of its own (2(K-1) more rounds of latency on the
 * ring). woff(i): element i's byte offset. The helpers below take element
 * ranges [lo, hi) of the whole vector: p and w are the vectors' starts. */
struct wire {
    const struct compressor *c;
    int dtype;
    size_t es, ws, nc;
};

static size_t woff(const struct wire *m, size_t i)
{
    return i <= m->nc ? i * m->ws : m->nc * m->ws + (i - m->nc) * m->es;
}

/* wenc: w[lo, hi) = e(p[lo, hi)); the tail copied. */
static void wenc(const struct wire *m, unsigned char *w, const unsigned char *p, size_t lo,
                 size_t hi)
{
    size_t mid = hi < m->nc ? hi : m->nc;

    if (lo < mid)
        m->c->encode(w + woff(m, lo), p + lo * m->es, mid - lo, m->dtype, NULL);
    if (hi > mid && hi > lo) {
        size_t a = lo > mid ? lo : mid;
        memcpy(w + woff(m, a), p + a * m->es, (hi - a) * m->es);
    }
}

/* wdec: p[lo, hi) = d(w[lo, hi)); the tail copied. */
static void wdec(const struct wire *m, unsigned char *p, const unsigned char *w, size_t lo,
                 size_t hi)
{
    size_t mid = hi < m->nc ? hi : m->nc;

    if (lo < mid)
        m->c->decode(p + lo * m->es, w + woff(m, lo), mid - lo, m->dtype);
    if (hi > mid && hi > lo) {
        size_t a = lo > mid ? lo : mid;
        memcpy(p + a * m->es, w + woff(m, a), (hi - a) * m->es);
    }
}

/* wadd: p[lo, hi) += d(stage), stage holding the wire bytes of [lo, hi);
 * a piece lies on one side of nc (piece_len). *bad: from lo. */
static int wadd(const struct wire *m, unsigned char *p, const unsigned char *stage, size_t lo,
                size_t hi, size_t *bad)
{
    if (lo < m->nc)
        return m->c->add_finite(p + lo * m->es, stage, hi - lo, m->dtype, bad);
    return vec_add_finite(p + lo * m->es, stage, hi - lo, m->dtype, bad);
}

/* piece_len: the elements of the next piece from i (below hi) that fit the
 * staging piece of `bytes`, not crossing nc. */
static size_t piece_len(const struct wire *m, size_t bytes, size_t i, size_t hi)
{
    size_t end = i < m->nc && m->nc < hi ? m->nc : hi;
    size_t cap = bytes / (i < m->nc ? m->ws : m->es);

    if (cap == 0)
        cap = 1;
    return end - i < cap ? end - i : cap;
}

/* ---------------------------------------------------------------- ring */

/* own_final: after the reduce-scatter, rank `me` rounds its chunk's sum to
 * the wire format and keeps the decoded bits, as every other rank will. */
static int own_final(struct ring *r, unsigned char *p, size_t n, const struct wire *m,
                     unsigned char *w, char *err)
{
    size_t lo, hi, bad = 0;
    int rc;

    ring_chunk(n, r->a.world, r->a.rank, &lo, &hi);
    wenc(m, w, p, lo, hi);
    wdec(m, p, w, lo, hi);
    rc = vec_check_finite(p + lo * m->es, hi - lo, m->dtype, &bad);
    if (rc == ERR_NONFINITE)
        err_say(err, "element %zu is %g in %s: the sum of chunk %d does not fit the format",
                lo + bad, vec_get(p, lo + bad, m->dtype), m->c->name, r->a.rank);
    return rc;
}

static int ring_phase(struct ring *r, unsigned char *p, size_t n, enum ring_phase ph,
                      const struct wire *m, unsigned char *w, char *err)
{
    size_t slo, shi, rlo, rhi;
    struct xport *x = r->a.x;
    int k = r->a.world, me = r->a.rank, left = (me + k - 1) % k, rc = 0, dtype = m->dtype;

    for (int s = 0; s < k - 1; s++) {
        int sc, rcv;
        ring_schedule(me, k, ph, s, &sc, &rcv);
        ring_chunk(n, k, sc, &slo, &shi);
        ring_chunk(n, k, rcv, &rlo, &rhi);
        if (ph == RING_REDUCE_SCATTER)          /* the partial sum, rounded to go */
            wenc(m, w, p, slo, shi);
        rc = xport_begin(x, &(struct xport_step){
                .to = (me + 1) % k, .from = left,
                .send_tag = (uint32_t)sc, .recv_tag = (uint32_t)rcv,
                .sbuf = w + woff(m, slo), .sbytes = woff(m, shi) - woff(m, slo),
                .rbytes = woff(m, rhi) - woff(m, rlo),
            }, err);
        if (ph == RING_ALL_GATHER) {
            size_t bad = 0;
            if (rc == 0 && (rc = xport_recv(x, w + woff(m, rlo), woff(m, rhi) - woff(m, rlo),
                                            err)) == 0) {
                wdec(m, p, w, rlo, rhi);
                rc = vec_check_finite(p + rlo * m->es, rhi - rlo, dtype, &bad);
            }
            if (rc == ERR_NONFINITE)
                err_say(err, "element %zu is %g after chunk %d from the left neighbour "
                        "(rank %d) at all-gather step %d", rlo + bad,
                        vec_get(p, rlo + bad, dtype), rcv, left, s);
        }
        for (size_t i = rlo, e; ph == RING_REDUCE_SCATTER && rc == 0 && i < rhi; i = e) {
            size_t bad = 0;
            e = i + piece_len(m, r->a.piece_bytes, i, rhi);
            if ((rc = xport_recv(x, r->a.stage, woff(m, e) - woff(m, i), err)) == 0)
                rc = wadd(m, p, r->a.stage, i, e, &bad);
            if (rc == ERR_NONFINITE)
                err_say(err, "element %zu is %g after chunk %d from the left neighbour "
                        "(rank %d) at reduce-scatter step %d", i + bad,
                        vec_get(p, i + bad, dtype), rcv, left, s);
        }
        if (rc == 0)
            rc = xport_end(x, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int ring_allreduce_cmp(struct ring *r, void *buf, size_t n, size_t exact, int dtype,
                       const struct compressor *c, void *wire, char *err)
{
    struct wire m = { c, dtype, dtype_size(dtype), 0, n - exact };
    int rc;

    if (dtype_size(dtype) == 0 || !c || !c->linear || !c->encode || exact > n)
        return ERR_USAGE;
    m.ws = compress_wire_size(c, dtype);
    if (r->a.world == 1)
        return 0;
    rc = ring_phase(r, buf, n, RING_REDUCE_SCATTER, &m, wire, err);
    if (rc == 0)
        rc = own_final(r, buf, n, &m, wire, err);
    return rc != 0 ? rc : ring_phase(r, buf, n, RING_ALL_GATHER, &m, wire, err);
}

/* ------------------------------------------------------------------ rd */

enum take { TAKE_NONE, TAKE_COPY, TAKE_ADD };

/* rd_step: one exchange of wire vectors with `peer` (rd.c's step): send w
 * whole (or an empty frame); take the partner's: COPY it into w, or ADD
 * it, w = e(d(w) + d(theirs)) piece by piece, overwriting w only as far
 * as it has been sent (xport.h, recv). p holds d(w) where a piece was
 * added (and, after a COPY, all of it). */
static int rd_step(struct rd *r, int peer, int round, unsigned char *p, unsigned char *w,
                   size_t n, const struct wire *m, int send, enum take take, int patience,
                   char *err)
{
    size_t bad = 0, i = 0, e, nb = woff(m, n);
    struct xport_step s = {
        .to = peer, .from = peer, .send_tag = (uint32_t)round, .recv_tag = (uint32_t)round,
        .sbuf = send ? w : NULL, .sbytes = send ? nb : 0,
        .rbytes = take != TAKE_NONE ? nb : 0, .patience = patience,
    };
    int rc = xport_begin(r->a.x, &s, err);

    if (rc == 0 && take == TAKE_COPY && (rc = xport_recv(r->a.x, w, nb, err)) == 0) {
        wdec(m, p, w, 0, n);
        rc = vec_check_finite(p, n, m->dtype, &bad);
    }
    for (; rc == 0 && take == TAKE_ADD && i < n; i = e) {
        e = i + piece_len(m, r->a.piece_bytes, i, n);
        if ((rc = xport_recv(r->a.x, r->a.stage, woff(m, e) - woff(m, i), err)) != 0)
            break;
        wdec(m, p, w, i, e);
        if ((rc = wadd(m, p, r->a.stage, i, e, &bad)) != 0)
            break;
        wenc(m, w, p, i, e);
    }
    if (rc == ERR_NONFINITE)
        err_say(err, "element %zu is %g after round %d from partner rank %d", i + bad,
                vec_get(p, i + bad, m->dtype), round, peer);
    if (rc == 0)
        rc = xport_end(r->a.x, err);
    return rc;
}

int rd_allreduce_cmp(struct rd *r, void *buf, size_t n, size_t exact, int dtype,
                     const struct compressor *c, void *wire, char *err)
{
    int k = r->a.world, me = r->a.rank, l = 0, p = 1, extra, last, rc = 0;
    unsigned char *v = buf, *w = wire;
    struct wire m = { c, dtype, dtype_size(dtype), 0, n - exact };
    size_t bad = 0;

    if (dtype_size(dtype) == 0 || !c || !c->linear || !c->encode || exact > n)
        return ERR_USAGE;
    m.ws = compress_wire_size(c, dtype);
    if (k == 1 || n == 0)
        return 0;
    while (p <= k / 2) {                    /* rd.c's largest power of two <= K */
        p *= 2;
        l++;
    }
    extra = k - p;
    last = l + 1;
    wenc(&m, w, v, 0, n);
    if (me >= p) {                          /* an extra rank (rd.c, FOLD) */
        rc = rd_step(r, me - p, 0, v, w, n, &m, 1, TAKE_NONE, 1, err);
        if (rc == 0)
            rc = rd_step(r, me - p, last, v, w, n, &m, 0, TAKE_COPY, l + 1, err);
        return rc;
    }
    if (me < extra)
        rc = rd_step(r, me + p, 0, v, w, n, &m, 0, TAKE_ADD, 1, err);
    for (int s = 0; rc == 0 && s < l; s++) {
        int partner = me ^ (1 << s), wait = s == 0 && me >= extra && partner < extra ? 2 : 1;
        rc = rd_step(r, partner, s + 1, v, w, n, &m, 1, TAKE_ADD, wait, err);
    }
    if (rc == 0 && me < extra)
        rc = rd_step(r, me + p, last, v, w, n, &m, 1, TAKE_NONE, 1, err);
    if (rc != 0)
        return rc;
    wdec(&m, v, w, 0, n);                   /* the result: d(w), on every rank */
    if ((rc = vec_check_finite(v, n, dtype, &bad)) == ERR_NONFINITE)
        err_say(err, "element %zu is %g in %s: the sum does not fit the format", bad,
                vec_get(v, bad, dtype), c->name);
    return rc;
}
