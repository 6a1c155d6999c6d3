/* ring.c -- the ring all-reduce, and nothing else.
 *
 * K ranks each hold a vector of n elements; each must end up with the
 * element-wise SUM of all K vectors. Arrange the ranks in a ring: every
 * rank sends to its right neighbour and receives from its left one, both
 * at the same time (the link is full duplex), and never talks to anyone
 * else:
 *
 *                 chunk              chunk
 *       +--------+ ---> +--------+ ---> +--------+
 *       | rank 0 |      | rank 1 |      | rank 2 |
 *       +--------+      +--------+      +--------+
 *            ^                               |
 *            |          +--------+           |
 *            +--------- | rank 3 | <---------+
 *                 chunk +--------+   chunk
 *
 * Cut the vector into K chunks (ring_chunk below). The all-reduce is two
 * phases of K-1 steps each; in every step each rank sends one chunk and
 * receives one chunk (r: the rank, s: the step from 0, indices mod K):
 *
 *   reduce-scatter  send chunk r-s-1, receive chunk r-s-2 and ADD it into
 *                   the own copy. What a rank sends at step s is what it
 *                   received and added at step s-1, so partial sums travel
 *                   round; after K-1 steps rank r holds chunk r summed
 *                   over all K ranks (each chunk had one rank to finish it).
 *   all-gather      send chunk r-s, receive chunk r-s-1 and COPY it in.
 *                   The finished chunks travel round; after K-1 steps
 *                   every rank holds every finished chunk.
 *
 *   K = 4, "s>r": the chunk a rank sends > the chunk it receives
 *
 *     phase           step   rank 0   rank 1   rank 2   rank 3
 *     reduce-scatter  0      3 > 2    0 > 3    1 > 0    2 > 1
 *                     1      2 > 1    3 > 2    0 > 3    1 > 0
 *                     2      1 > 0    2 > 1    3 > 2    0 > 3
 *                     (rank r now holds the full sum of chunk r)
 *     all-gather      0      0 > 3    1 > 0    2 > 1    3 > 2
 *                     1      3 > 2    0 > 3    1 > 0    2 > 1
 *                     2      2 > 1    3 > 2    0 > 3    1 > 0
 *
 *   Read a column down: in each step, what rank r receives is exactly
 *   what its left neighbour r-1 sends in the same step.
 *
 * COST. 2(K-1) steps, each moving one chunk of n/K elements each way, so
 * in the alpha-beta model (a: latency, b: seconds per byte, n in bytes)
 *
 *     T = 2(K-1) a + 2 (K-1)/K n b
 *
 * and every rank sends and receives 2(K-1)/K n bytes, whatever K: the
 * bandwidth term stays near 2 n b as K grows (common/model.h model_ring).
 * The parameter server's link, by contrast, carries K n each way.
 *
 * DETERMINISM. Chunk c's sum is computed once, by the ranks c+1, c+2, ...,
 * c in that order around the ring ((v[c+1] + v[c+2]) + v[c+3]) + ...;
 * the all-gather then only copies it. So all K ranks end bit-identical,
 * and a rerun gives the same bits (vec_add: plain adds, no FMA).
 *
 * PIECES. In the reduce-scatter, the incoming chunk is received in pieces
 * of the staging size, each added in as soon as it is in, while the kernel
 * keeps receiving the next piece (and the transport keeps sending): the
 * reduction overlaps the transfer and needs one piece of staging, not a
 * chunk. The all-gather receives straight into the buffer, no staging and
 * no pieces. Memory: the caller's n elements plus one piece.
 */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "err.h"
#include "vec.h"

#define STAGE_ALIGN 64

int ring_init(struct ring *r, struct xport *x, int rank, int world, size_t piece_bytes)
{
    memset(r, 0, sizeof *r);
    if (world < 1 || rank < 0 || rank >= world || (world > 1 && !x))
        return ERR_USAGE;
    if (piece_bytes == 0)
        piece_bytes = RING_PIECE_DEFAULT;
    if (piece_bytes < 8)
        return ERR_USAGE;
    piece_bytes = (piece_bytes + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN;
    r->stage = aligned_alloc(STAGE_ALIGN, piece_bytes);
    if (!r->stage)
        return -ENOMEM;
    r->x = x;
    r->rank = rank;
    r->world = world;
    r->piece_bytes = piece_bytes;
    return 0;
}

void ring_destroy(struct ring *r)
{
    free(r->stage);
    r->stage = NULL;
}

/* The one place chunk bounds are computed. With q = n / K and e = n mod K,
 * chunk c has q + 1 elements when c < e and q otherwise, so it starts at
 * c q + min(c, e). Both ends of a ring step call this with the same n and
 * K, which is how a receiver knows the size to expect. */
void ring_chunk(size_t n, int world, int c, size_t *lo, size_t *hi)
{
    size_t k = (size_t)world, q = n / k, e = n % k, i = (size_t)c;

    *lo = i * q + (i < e ? i : e);
    *hi = *lo + q + (i < e ? 1 : 0);
}

/* mod: rank arithmetic around the ring, for any (negative) offset. */
static int mod(int a, int k)
{
    int m = a % k;
    return m < 0 ? m + k : m;
}

int ring_reduce_scatter(struct ring *r, void *buf, size_t n, int dtype, char *err)
{
    size_t es = dtype_size(dtype), slo, shi, rlo, rhi, piece;
    unsigned char *p = buf;
    struct xport *x = r->x;
    int k = r->world, rc = 0;

    if (es == 0)
        return ERR_USAGE;
    if (k == 1)
        return 0;
    piece = r->piece_bytes / es;
    for (int s = 0; s < k - 1; s++) {
        int sc = mod(r->rank - s - 1, k), rcv = mod(r->rank - s - 2, k);
        ring_chunk(n, k, sc, &slo, &shi);
        ring_chunk(n, k, rcv, &rlo, &rhi);
        rc = x->ops->begin(x, (uint32_t)sc, p + slo * es, (shi - slo) * es,
                           (uint32_t)rcv, (rhi - rlo) * es, err);
        for (size_t i = rlo; rc == 0 && i < rhi; i += piece) {
            size_t m = rhi - i < piece ? rhi - i : piece;
            rc = x->ops->recv(x, r->stage, m * es, err);
            if (rc == 0)
                vec_add(p + i * es, r->stage, m, dtype);
        }
        if (rc == 0)
            rc = x->ops->end(x, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int ring_all_gather(struct ring *r, void *buf, size_t n, int dtype, char *err)
{
    size_t es = dtype_size(dtype), slo, shi, rlo, rhi;
    unsigned char *p = buf;
    struct xport *x = r->x;
    int k = r->world, rc = 0;

    if (es == 0)
        return ERR_USAGE;
    if (k == 1)
        return 0;
    for (int s = 0; s < k - 1; s++) {
        int sc = mod(r->rank - s, k), rcv = mod(r->rank - s - 1, k);
        ring_chunk(n, k, sc, &slo, &shi);
        ring_chunk(n, k, rcv, &rlo, &rhi);
        rc = x->ops->begin(x, (uint32_t)sc, p + slo * es, (shi - slo) * es,
                           (uint32_t)rcv, (rhi - rlo) * es, err);
        if (rc == 0 && rhi > rlo)
            rc = x->ops->recv(x, p + rlo * es, (rhi - rlo) * es, err);
        if (rc == 0)
            rc = x->ops->end(x, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int ring_allreduce(struct ring *r, void *buf, size_t n, int dtype, char *err)
{
    int rc = ring_reduce_scatter(r, buf, n, dtype, err);

    return rc != 0 ? rc : ring_all_gather(r, buf, n, dtype, err);
}
