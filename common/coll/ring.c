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
 * bandwidth term stays near 2 n b as K grows (common/measure/model.h model_ring).
 * The parameter server's link, by contrast, carries K n each way.
 *
 * DETERMINISM. Chunk c's sum is computed once, by the ranks c+1, c+2, ...,
 * c in that order around the ring ((v[c+1] + v[c+2]) + v[c+3]) + ...;
 * the all-gather then only copies it. So all K ranks end bit-identical,
 * and a rerun gives the same bits (vec_add_finite: plain adds, no FMA).
 *
 * PIECES. In the reduce-scatter, the incoming chunk is received in pieces
 * of the staging size, each added in as soon as it is in, while the kernel
 * keeps receiving the next piece (and the transport keeps sending): the
 * reduction overlaps the transfer and needs one piece of staging, not a
 * chunk. The all-gather receives straight into the buffer, no staging and
 * no pieces: THE CHECK reads the chunk once it is all in.
 * (Checking it in pieces between receives was measured slower, 5-15% of
 * the unpaced K = 2, 4 MiB all-reduce: the transfer stalls while the
 * receiver checks.) Memory: the caller's n elements plus one piece.
 *
 * THE CHECK. A member that holds the job's secret can still send NaN or
 * Inf. So each piece is checked finite as it comes in: the reduce-scatter
 * checks every sum in the add itself (vec_add_finite: a NaN or Inf
 * received, or a finite sum that overflows), the all-gather every value it
 * copied in, once the chunk is in. Every rank checks what it receives
 * before it sends anything on, so the first rank to see a bad value names
 * the neighbour that sent it, the chunk and the step; the caller fails
 * the training step before the weights change (docs/security.md). The
 * cost: a subtract and an add
 * per element, vectorized with the reduce (vec.c); the reduce is faster
 * than the unvectorized vec_add it replaced, and the all-gather's pass
 * reads the chunk from cache.
 */
#include "ring.h"

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

int ring_init(struct ring *r, struct xport *x, int rank, int world, size_t piece_bytes)
{
    r->hook = NULL;
    return xport_algo_init(&r->a, x, rank, world, piece_bytes, RING_PIECE_DEFAULT);
}

void ring_destroy(struct ring *r)
{
    xport_algo_destroy(&r->a);
}

void ring_plan(int rank, int world, struct xport_plan *pl)
{
    *pl = (struct xport_plan){
        .npeers = 2,
        .peer = { { (rank + 1) % world, 1, "right neighbour" },
                  { (rank + world - 1) % world, 0, "left neighbour" } },
        .news = XPORT_NEWS_RELAY, .tag = "chunk", .tag_of = "for chunk",
    };
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

/* The one place the step table above is computed: the reduce-scatter
 * sends r-s-1 and receives r-s-2, the all-gather one chunk later. */
void ring_schedule(int rank, int world, enum ring_phase phase, int s, int *send, int *recv)
{
    int o = phase == RING_ALL_GATHER ? 1 : 0;

    *send = mod(rank - s - 1 + o, world);
    *recv = mod(rank - s - 2 + o, world);
}

/* phase: the K-1 steps of one phase. The reduce-scatter receives in pieces
 * through the staging piece and ADDs each in (PIECES); the all-gather
 * receives straight into the buffer (a COPY). With `check` (THE CHECK)
 * every sum is checked finite as its piece is added, every copied value
 * once its chunk is in: ERR_NONFINITE naming the element, the chunk, the
 * left neighbour that sent it and the phase's step. */
static int phase(struct ring *r, unsigned char *p, size_t n, int dtype, enum ring_phase ph,
                 int check, char *err)
{
    size_t es = dtype_size(dtype), slo, shi, rlo, rhi, piece;
    struct xport *x = r->a.x;
    int k = r->a.world, me = r->a.rank, rc = 0;

    if (es == 0)
        return ERR_USAGE;
    if (k == 1)
        return 0;
    piece = ph == RING_REDUCE_SCATTER ? r->a.piece_bytes / es : n;
    for (int s = 0; s < k - 1; s++) {
        int sc, rcv;
        ring_schedule(me, k, ph, s, &sc, &rcv);
        ring_chunk(n, k, sc, &slo, &shi);
        ring_chunk(n, k, rcv, &rlo, &rhi);
        if (r->hook)
            r->hook->step(r->hook->arg, ph, s, sc, rcv, (shi - slo) * es, 0);
        rc = xport_begin(x, &(struct xport_step){
                .to = (me + 1) % k, .from = (me + k - 1) % k,
                .send_tag = (uint32_t)sc, .recv_tag = (uint32_t)rcv,
                .sbuf = p + slo * es, .sbytes = (shi - slo) * es, .rbytes = (rhi - rlo) * es,
            }, err);
        for (size_t i = rlo; rc == 0 && i < rhi; i += piece) {
            size_t m = rhi - i < piece ? rhi - i : piece, bad = 0;
            if (ph == RING_ALL_GATHER) {
                if ((rc = xport_recv(x, p + i * es, m * es, err)) == 0 && check)
                    rc = vec_check_finite(p + i * es, m, dtype, &bad);
            } else if ((rc = xport_recv(x, r->a.stage, m * es, err)) == 0) {
                rc = check ? vec_add_finite(p + i * es, r->a.stage, m, dtype, &bad)
                           : (vec_add(p + i * es, r->a.stage, m, dtype), 0);
            }
            if (rc == ERR_NONFINITE)
                err_say(err, "element %zu is %g after chunk %d from the left neighbour "
                        "(rank %d) at %s step %d", i + bad, vec_get(p, i + bad, dtype), rcv,
                        (me + k - 1) % k, ph == RING_ALL_GATHER ? "all-gather" : "reduce-scatter",
                        s);
        }
        if (rc == 0)
            rc = xport_end(x, err);
        if (rc != 0)
            return rc;
        if (r->hook)
            r->hook->step(r->hook->arg, ph, s, sc, rcv, (shi - slo) * es, 1);
    }
    return 0;
}

int ring_reduce_scatter(struct ring *r, void *buf, size_t n, int dtype, char *err)
{
    return phase(r, buf, n, dtype, RING_REDUCE_SCATTER, 1, err);
}

int ring_all_gather(struct ring *r, void *buf, size_t n, int dtype, char *err)
{
    return phase(r, buf, n, dtype, RING_ALL_GATHER, 1, err);
}

int ring_all_gather_raw(struct ring *r, void *buf, size_t n, int dtype, char *err)
{
    return phase(r, buf, n, dtype, RING_ALL_GATHER, 0, err);
}

int ring_allreduce(struct ring *r, void *buf, size_t n, int dtype, char *err)
{
    int rc = ring_reduce_scatter(r, buf, n, dtype, err);

    return rc != 0 ? rc : ring_all_gather(r, buf, n, dtype, err);
}
