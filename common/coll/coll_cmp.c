/* coll_cmp.c -- the ring and rd all-reduces on a compressed wire (the
 * order and the checks: coll_cmp.h). The step structure is ring.c's and
 * rd.c's, unchanged (their schedules, partners and tags are called, not
 * copied); what differs is what travels: the encoded chunk, decoded and
 * added in the job's dtype on arrival, re-encoded before it is sent on.
 * Kept apart from ring.c and rd.c so that those stay the plain algorithm
 * a newcomer reads first.
 */
#include "coll_cmp.h"

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

/* ---------------------------------------------------------------- ring */

/* own_final: after the reduce-scatter, rank `me` rounds its chunk's sum to
 * the wire format and keeps the decoded bits, as every other rank will. */
static int own_final(struct ring *r, unsigned char *p, size_t n, int dtype,
                     const struct compressor *c, unsigned char *w, char *err)
{
    size_t es = dtype_size(dtype), ws = compress_wire_size(c, dtype), lo, hi, bad = 0;
    int rc;

    ring_chunk(n, r->a.world, r->a.rank, &lo, &hi);
    c->encode(w + lo * ws, p + lo * es, hi - lo, dtype, NULL);
    c->decode(p + lo * es, w + lo * ws, hi - lo, dtype);
    rc = vec_check_finite(p + lo * es, hi - lo, dtype, &bad);
    if (rc == ERR_NONFINITE)
        err_say(err, "element %zu is %g in %s: the sum of chunk %d does not fit the format",
                lo + bad, vec_get(p, lo + bad, dtype), c->name, r->a.rank);
    return rc;
}

static int ring_phase(struct ring *r, unsigned char *p, size_t n, int dtype, enum ring_phase ph,
                      const struct compressor *c, unsigned char *w, char *err)
{
    size_t es = dtype_size(dtype), ws = compress_wire_size(c, dtype), slo, shi, rlo, rhi;
    size_t piece = r->a.piece_bytes / ws;
    struct xport *x = r->a.x;
    int k = r->a.world, me = r->a.rank, left = (me + k - 1) % k, rc = 0;

    for (int s = 0; s < k - 1; s++) {
        int sc, rcv;
        ring_schedule(me, k, ph, s, &sc, &rcv);
        ring_chunk(n, k, sc, &slo, &shi);
        ring_chunk(n, k, rcv, &rlo, &rhi);
        if (ph == RING_REDUCE_SCATTER)          /* the partial sum, rounded to go */
            c->encode(w + slo * ws, p + slo * es, shi - slo, dtype, NULL);
        rc = xport_begin(x, &(struct xport_step){
                .to = (me + 1) % k, .from = left,
                .send_tag = (uint32_t)sc, .recv_tag = (uint32_t)rcv,
                .sbuf = w + slo * ws, .sbytes = (shi - slo) * ws, .rbytes = (rhi - rlo) * ws,
            }, err);
        if (ph == RING_ALL_GATHER) {
            size_t bad = 0;
            if (rc == 0 && (rc = xport_recv(x, w + rlo * ws, (rhi - rlo) * ws, err)) == 0) {
                c->decode(p + rlo * es, w + rlo * ws, rhi - rlo, dtype);
                rc = vec_check_finite(p + rlo * es, rhi - rlo, dtype, &bad);
            }
            if (rc == ERR_NONFINITE)
                err_say(err, "element %zu is %g after chunk %d from the left neighbour "
                        "(rank %d) at all-gather step %d", rlo + bad,
                        vec_get(p, rlo + bad, dtype), rcv, left, s);
        }
        for (size_t i = rlo; ph == RING_REDUCE_SCATTER && rc == 0 && i < rhi; i += piece) {
            size_t m = rhi - i < piece ? rhi - i : piece, bad = 0;
            if ((rc = xport_recv(x, r->a.stage, m * ws, err)) == 0)
                rc = c->add_finite(p + i * es, r->a.stage, m, dtype, &bad);
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

int ring_allreduce_cmp(struct ring *r, void *buf, size_t n, int dtype,
                       const struct compressor *c, void *wire, char *err)
{
    int rc;

    if (dtype_size(dtype) == 0 || !c || !c->linear || !c->encode)
        return ERR_USAGE;
    if (r->a.world == 1)
        return 0;
    rc = ring_phase(r, buf, n, dtype, RING_REDUCE_SCATTER, c, wire, err);
    if (rc == 0)
        rc = own_final(r, buf, n, dtype, c, wire, err);
    return rc != 0 ? rc : ring_phase(r, buf, n, dtype, RING_ALL_GATHER, c, wire, err);
}

/* ------------------------------------------------------------------ rd */

enum take { TAKE_NONE, TAKE_COPY, TAKE_ADD };

/* rd_step: one exchange of wire vectors with `peer` (rd.c's step): send w
 * whole (or an empty frame); take the partner's: COPY it into w, or ADD
 * it, w = e(d(w) + d(theirs)) piece by piece, overwriting w only as far
 * as it has been sent (xport.h, recv). p holds d(w) where a piece was
 * added (and, after a COPY, all of it). */
static int rd_step(struct rd *r, int peer, int round, unsigned char *p, unsigned char *w,
                   size_t n, int dtype, const struct compressor *c, int send, enum take take,
                   int patience, char *err)
{
    size_t es = dtype_size(dtype), ws = compress_wire_size(c, dtype);
    size_t piece = r->a.piece_bytes / ws, bad = 0, i = 0;
    struct xport_step s = {
        .to = peer, .from = peer, .send_tag = (uint32_t)round, .recv_tag = (uint32_t)round,
        .sbuf = send ? w : NULL, .sbytes = send ? n * ws : 0,
        .rbytes = take != TAKE_NONE ? n * ws : 0, .patience = patience,
    };
    int rc = xport_begin(r->a.x, &s, err);

    if (rc == 0 && take == TAKE_COPY && (rc = xport_recv(r->a.x, w, n * ws, err)) == 0) {
        c->decode(p, w, n, dtype);
        rc = vec_check_finite(p, n, dtype, &bad);
    }
    for (; rc == 0 && take == TAKE_ADD && i < n; i += piece) {
        size_t m = n - i < piece ? n - i : piece;
        if ((rc = xport_recv(r->a.x, r->a.stage, m * ws, err)) != 0)
            break;
        c->decode(p + i * es, w + i * ws, m, dtype);
        if ((rc = c->add_finite(p + i * es, r->a.stage, m, dtype, &bad)) != 0)
            break;
        c->encode(w + i * ws, p + i * es, m, dtype, NULL);
    }
    if (rc == ERR_NONFINITE)
        err_say(err, "element %zu is %g after round %d from partner rank %d", i + bad,
                vec_get(p, i + bad, dtype), round, peer);
    if (rc == 0)
        rc = xport_end(r->a.x, err);
    return rc;
}

int rd_allreduce_cmp(struct rd *r, void *buf, size_t n, int dtype,
                     const struct compressor *c, void *wire, char *err)
{
    int k = r->a.world, me = r->a.rank, l = 0, p = 1, extra, last, rc = 0;
    unsigned char *v = buf, *w = wire;
    size_t bad = 0;

    if (dtype_size(dtype) == 0 || !c || !c->linear || !c->encode)
        return ERR_USAGE;
    if (k == 1 || n == 0)
        return 0;
    while (p <= k / 2) {                    /* rd.c's largest power of two <= K */
        p *= 2;
        l++;
    }
    extra = k - p;
    last = l + 1;
    c->encode(w, v, n, dtype, NULL);
    if (me >= p) {                          /* an extra rank (rd.c, FOLD) */
        rc = rd_step(r, me - p, 0, v, w, n, dtype, c, 1, TAKE_NONE, 1, err);
        if (rc == 0)
            rc = rd_step(r, me - p, last, v, w, n, dtype, c, 0, TAKE_COPY, l + 1, err);
        return rc;
    }
    if (me < extra)
        rc = rd_step(r, me + p, 0, v, w, n, dtype, c, 0, TAKE_ADD, 1, err);
    for (int s = 0; rc == 0 && s < l; s++) {
        int partner = me ^ (1 << s), wait = s == 0 && me >= extra && partner < extra ? 2 : 1;
        rc = rd_step(r, partner, s + 1, v, w, n, dtype, c, 1, TAKE_ADD, wait, err);
    }
    if (rc == 0 && me < extra)
        rc = rd_step(r, me + p, last, v, w, n, dtype, c, 1, TAKE_NONE, 1, err);
    if (rc != 0)
        return rc;
    c->decode(v, w, n, dtype);              /* the result: d(w), on every rank */
    if ((rc = vec_check_finite(v, n, dtype, &bad)) == ERR_NONFINITE)
        err_say(err, "element %zu is %g in %s: the sum does not fit the format", bad,
                vec_get(v, bad, dtype), c->name);
    return rc;
}
