/* chain.c -- broadcast and reduce-to-root as a pipelined chain.
 *
 * The ranks stand in the ring's order, starting at the chain's head, and
 * the vector flows to the right in segments, one segment per link per
 * step, like a bucket brigade. Every link carries n bytes once:
 *
 *   broadcast: head = the root, tail = root-1. Position p = (r - root) mod K.
 *   reduce:    head = root+1,  tail = the root. Position p = (r - root - 1) mod K;
 *              a rank ADDS what comes in to its own segment and passes the
 *              partial sum on, so the root ends with
 *              ((v[root+1] + v[root+2]) + ...) + v[root].
 *
 * At step t (0 .. P+K-3, P segments) position p sends segment t-p (when
 * p < K-1 and 0 <= t-p < P) and receives segment t-p+1 (when p > 0 and it
 * is in range): what a rank sends at step t it received at step t-1.
 *
 *   K = 4, P = 3, "s>r": segment sent > segment received ("." none)
 *
 *     step   p=0    p=1    p=2    p=3
 *     0      0>.    .>0    .>.    .>.
 *     1      1>.    0>1    .>0    .>.
 *     2      2>.    1>2    0>1    .>0
 *     3      .>.    2>.    1>2    .>1
 *     4      .>.    .>.    2>.    .>2
 *
 * The transport's step is a frame each way (xport.h), so where the table
 * says "." the rank sends or expects an EMPTY frame (a header, 40 bytes on
 * TCP): the chain moves in lockstep and every rank takes part in every
 * step. That keeps the transport's contract and costs one header per rank
 * per step; a transport with one-sided steps could drop them.
 *
 * COST. P + K - 2 steps of one segment, n/P bytes:
 *     T = (P + K - 2) (a + n b / P)
 * which for P >> K is n b: busbw = algbw, nccl-tests' factor 1 for both.
 * Bytes per rank: every rank but the tail sends n, every rank but the head
 * receives n, plus one header per step each way (tests/test_coll.c).
 */
#include "chain.h"

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

size_t chain_segment(size_t piece_bytes, int dtype)
{
    size_t es = dtype_size(dtype);

    return es == 0 || piece_bytes < es ? 1 : piece_bytes / es;
}

size_t chain_steps(size_t n, int world, size_t seg)
{
    if (n == 0 || world < 2 || seg == 0)
        return 0;
    return (n + seg - 1) / seg + (size_t)world - 2;
}

/* run: the chain of either kind (the opening comment): pos is this rank's
 * position, add says whether an incoming segment is added or copied. */
static int run(struct xport_algo *a, unsigned char *p, size_t n, int dtype, int pos, int add,
               char *err)
{
    size_t es = dtype_size(dtype), seg = chain_segment(a->piece_bytes, dtype);
    size_t nseg = (n + seg - 1) / seg, steps = chain_steps(n, a->world, seg);
    int k = a->world, me = a->rank;

    for (size_t t = 0; t < steps; t++) {
        size_t s_idx = t - (size_t)pos, r_idx = t + 1 - (size_t)pos;    /* mod 2^64 when negative */
        int sends = pos < k - 1 && t >= (size_t)pos && s_idx < nseg;
        int recvs = pos > 0 && t + 1 >= (size_t)pos && r_idx < nseg;
        size_t slo = sends ? s_idx * seg : 0, shi = sends ? (s_idx + 1) * seg : 0;
        size_t rlo = recvs ? r_idx * seg : 0, rhi = recvs ? (r_idx + 1) * seg : 0;
        int rc;

        shi = shi > n ? n : shi;
        rhi = rhi > n ? n : rhi;
        rc = xport_begin(a->x, &(struct xport_step){
                .to = (me + 1) % k, .from = (me + k - 1) % k,
                .send_tag = (uint32_t)t, .recv_tag = (uint32_t)t,
                .sbuf = p + slo * es, .sbytes = (shi - slo) * es, .rbytes = (rhi - rlo) * es,
            }, err);
        if (rc == 0 && rhi > rlo) {
            size_t bad = 0;
            if (!add) {
                if ((rc = xport_recv(a->x, p + rlo * es, (rhi - rlo) * es, err)) == 0)
                    rc = vec_check_finite(p + rlo * es, rhi - rlo, dtype, &bad);
            } else if ((rc = xport_recv(a->x, a->stage, (rhi - rlo) * es, err)) == 0) {
                rc = vec_add_finite(p + rlo * es, a->stage, rhi - rlo, dtype, &bad);
            }
            if (rc == ERR_NONFINITE)
                err_say(err, "element %zu is %g after segment %zu from the left neighbour "
                        "(rank %d) at chain step %zu", rlo + bad, vec_get(p, rlo + bad, dtype),
                        r_idx, (me + k - 1) % k, t);
        }
        if (rc == 0)
            rc = xport_end(a->x, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* check: the arguments both calls share. */
static int check(const struct xport_algo *a, int dtype, int root, char *err)
{
    if (dtype_size(dtype) == 0 || root < 0 || root >= a->world) {
        err_say(err, "chain: dtype %d, root %d of %d ranks", dtype, root, a->world);
        return ERR_USAGE;
    }
    return 0;
}

int chain_broadcast(struct xport_algo *a, void *buf, size_t n, int dtype, int root, char *err)
{
    int rc = check(a, dtype, root, err);

    if (rc != 0 || a->world == 1)
        return rc;
    return run(a, buf, n, dtype, (a->rank - root + a->world) % a->world, 0, err);
}

int chain_reduce(struct xport_algo *a, void *buf, size_t n, int dtype, int root, char *err)
{
    int rc = check(a, dtype, root, err);

    if (rc != 0 || a->world == 1)
        return rc;
    return run(a, buf, n, dtype, (a->rank - root - 1 + 2 * a->world) % a->world, 1, err);
}
