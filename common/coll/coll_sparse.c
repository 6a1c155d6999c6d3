/* coll_sparse.c -- the ring's all-gather of top-k frames (the schedule,
 * the order and the checks: coll_sparse.h). Kept apart from ring.c and
 * coll_cmp.c: it is not a reduce-scatter at all, and those stay the
 * algorithms a newcomer reads first.
 */
#include "coll_sparse.h"

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

int ring_allgather_frames(struct ring *r, void *buf, size_t n, int dtype, int setting,
                          unsigned char *frames, void *state, char *err)
{
    const struct compressor *c = compress_get(setting);
    int k = r->a.world, me = r->a.rank, left = (me + k - 1) % k, rc = 0;
    size_t fb, bad = 0;
    char why[ERR_LEN];

    if (dtype_size(dtype) == 0 || !c || !c->frame)
        return ERR_USAGE;
    fb = c->frame->bytes(setting, n, dtype);
    c->frame->encode(setting, frames + (size_t)me * fb, buf, n, dtype, state);
    for (int s = 0; s < k - 1 && rc == 0; s++) {
        int sf = ((me - s) % k + k) % k, rf = ((me - s - 1) % k + k) % k;
        rc = xport_begin(r->a.x, &(struct xport_step){
                .to = (me + 1) % k, .from = left,
                .send_tag = (uint32_t)sf, .recv_tag = (uint32_t)rf,
                .sbuf = frames + (size_t)sf * fb, .sbytes = fb, .rbytes = fb,
            }, err);
        if (rc == 0)
            rc = xport_recv(r->a.x, frames + (size_t)rf * fb, fb, err);
        if (rc == 0)
            rc = xport_end(r->a.x, err);
    }
    if (rc != 0)
        return rc;
    vec_zero(buf, n, dtype);
    for (int q = 0; q < k; q++) {           /* THE ORDER: rank 0 first, on every rank */
        rc = c->frame->add(setting, buf, frames + (size_t)q * fb, fb, n, dtype, &bad, why);
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
