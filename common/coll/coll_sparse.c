/* coll_sparse.c -- the ring's all-gather of top-k frames (the schedule,
 * the order and the checks: coll_sparse.h). Kept apart from ring.c and
 * coll_cmp.c: it is not a reduce-scatter at all, and those stay the
 * algorithms a newcomer reads first.
 */
#include "coll_sparse.h"

#include <stddef.h>
#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

/* add_tail: tail += the n raw elements at src, which follow a frame of
 * any length and so may sit at any address: copied into an aligned
 * buffer first, a few at a time (vec_add_finite's contract; *bad from
 * tail). */
static int add_tail(unsigned char *tail, const unsigned char *src, size_t n, int dtype,
                    size_t *bad)
{
    _Alignas(max_align_t) unsigned char tmp[64];
    size_t es = dtype_size(dtype), step = sizeof tmp / es;
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < n; i += step) {
        size_t m = n - i < step ? n - i : step;
        memcpy(tmp, src + i * es, m * es);
        if ((rc = vec_add_finite(tail + i * es, tmp, m, dtype, bad)) == ERR_NONFINITE)
            *bad += i;
    }
    return rc;
}

int ring_allgather_frames(struct ring *r, void *buf, size_t n, size_t exact, int dtype,
                          int setting, unsigned char *frames, void *state, char *err)
{
    const struct compressor *c = compress_get(setting);
    int k = r->a.world, me = r->a.rank, left = (me + k - 1) % k, rc = 0;
    size_t fb, sb, es = dtype_size(dtype), m = n - exact, bad = 0;
    unsigned char *tail = (unsigned char *)buf + m * es;
    char why[ERR_LEN];

    if (es == 0 || !c || !c->frame || exact > n)
        return ERR_USAGE;
    fb = c->frame->bytes(setting, m, dtype);
    sb = fb + exact * es;                   /* a rank's slot: its frame, then its exact tail */
    c->frame->encode(setting, frames + (size_t)me * sb, buf, m, dtype, state);
    memcpy(frames + (size_t)me * sb + fb, tail, exact * es);
    for (int s = 0; s < k - 1 && rc == 0; s++) {
        int sf = ((me - s) % k + k) % k, rf = ((me - s - 1) % k + k) % k;
        rc = xport_begin(r->a.x, &(struct xport_step){
                .to = (me + 1) % k, .from = left,
                .send_tag = (uint32_t)sf, .recv_tag = (uint32_t)rf,
                .sbuf = frames + (size_t)sf * sb, .sbytes = sb, .rbytes = sb,
            }, err);
        if (rc == 0)
            rc = xport_recv(r->a.x, frames + (size_t)rf * sb, sb, err);
        if (rc == 0)
            rc = xport_end(r->a.x, err);
    }
    if (rc != 0)
        return rc;
    vec_zero(buf, n, dtype);
    for (int q = 0; q < k; q++) {           /* THE ORDER: rank 0 first, on every rank */
        rc = c->frame->add(setting, buf, frames + (size_t)q * sb, fb, m, dtype, &bad, why);
        if (rc == 0 && (rc = add_tail(tail, frames + (size_t)q * sb + fb, exact, dtype,
                                      &bad)) == ERR_NONFINITE)
            bad += m;
        if (rc == ERR_NONFINITE)
            err_say(err, "element %zu is %g after rank %d's top-k frame (all-gather)", bad,
                    vec_get(buf, bad, dtype), q);
        else if (rc != 0)
            err_say(err, "rank %d's top-k frame (from the left neighbour, rank %d): %s", q,
                    left, why);
        if (rc != 0)
            return rc;
    }
    return 0;
}
