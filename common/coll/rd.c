/* rd.c -- the recursive-doubling all-reduce, and nothing else.
 *
 * K ranks each hold a vector of n elements; each must end up with the
 * element-wise SUM of all K vectors. The ring (ring.c) does it in 2(K-1)
 * steps of n/K elements: few bytes, many steps. When the vector is small
 * the steps are what costs (each pays the link's latency), so here is the
 * other extreme: few steps, whole vectors. Number the ranks in binary and
 * put them on the corners of a cube (K = 8), one bit per axis:
 *
 *             4 ----------- 5
 *            /|            /|      step 0: along the edges like 0 - 1  (partner r XOR 1)
 *           0 ----------- 1 |      step 1: along the edges like 0 | 2  (partner r XOR 2)
 *           | |           | |      step 2: along the edges like 0 / 4  (partner r XOR 4)
 *           | 6 ----------|-7
 *           |/            |/
 *           2 ----------- 3
 *
 * In step s every rank swaps its WHOLE vector with its partner r XOR 2^s
 * (both directions at once: the link is full duplex) and adds what it got
 * into its own. After step s each rank holds the sum over the 2^(s+1) ranks
 * that agree with it on the bits above s; after log2 K steps, the sum over
 * all of them, on every rank at once. No gather phase is needed.
 *
 *   K = 8: each rank's partner in each step, and what two ranks hold after it
 *
 *     step  partner of rank 0 1 2 3 4 5 6 7   rank 0 holds      rank 5 holds
 *     0     (r XOR 1)       1 0 3 2 5 4 7 6   v0+v1             v4+v5
 *     1     (r XOR 2)       2 3 0 1 6 7 4 5   (v0+v1)+(v2+v3)   (v4+v5)+(v6+v7)
 *     2     (r XOR 4)       4 5 6 7 0 1 2 3   ((v0+v1)+(v2+v3))+((v4+v5)+(v6+v7)), both
 *
 *   Read a column down: a rank's partners differ from it in bit 0, then
 *   bit 1, then bit 2 (they are 1, 2, 4 apart); read a row across: the
 *   pairs of a step are disjoint, so all K/2 swaps of a step run at the
 *   same time.
 *
 * COST. log2 K steps, each moving the whole n bytes each way, so in the
 * alpha-beta model (a: latency, b: seconds per byte)
 *
 *     recursive doubling   T = log2 K a + log2 K n b
 *     ring                 T = 2(K-1) a + 2 (K-1)/K n b
 *
 * For K = 8: 3 latencies instead of 14, but 3 n bytes per rank instead of
 * 1.75 n. Small messages (latency-bound) go faster; large ones
 * (bandwidth-bound) slower. The two meet where 11 a = 1.25 n b, at
 * n = 8.8 a/b: about 107 KiB on the lab's link (500 Mbit/s, 200 us).
 * In general the crossover is n* = (2(K-1) - log2 K) a / ((log2 K -
 * 2(K-1)/K) b). docs/rd.md has the measurements against these formulas.
 *
 * WHY NOT HALVING-DOUBLING (Rabenseifner). Its reduce-scatter halves the
 * vector at each step (recursive halving) and its all-gather doubles it
 * back: T = 2 log2 K a + 2 (K-1)/K n b, the ring's bandwidth term with
 * 2 log2 K latencies. It beats the ring on large messages too, but on
 * small ones it pays twice the latencies of plain recursive doubling,
 * which is the latency-optimal all-reduce: log2 K is the fewest steps in
 * which every rank can have heard from every other. --algo rd is the
 * small-message answer, so it is plain recursive doubling.
 *
 * FOLD (K not a power of two). Let P be the largest power of two <= K and
 * r = K - P. The r ranks P..K-1 above it are the extra ones; extra rank
 * P+i pairs with rank i:
 *
 *   round 0          extra rank P+i sends its vector to rank i, which adds
 *                    it: v_i + v_(P+i)
 *   rounds 1..log2 P recursive doubling among ranks 0..P-1, as above
 *   round log2 P + 1 rank i sends the result to extra rank P+i (a copy)
 *
 *   K = 6 (P = 4): round 0: 4 -> 0, 5 -> 1; rounds 1, 2: 0..3 double;
 *   round 3: 0 -> 4, 1 -> 5.
 *
 * Two more steps: T = (log2 P + 2)(a + n b). Extra ranks are chosen from
 * the top so that ranks 0..P-1 keep their own numbers in the doubling. The
 * transport's frames carry the round (0 to log2 P + 1) so a frame from
 * the wrong round is caught; with K a power of two, rounds 1..log2 K are
 * the doubling steps.
 *
 * DETERMINISM. Every element's sum is one balanced tree, the same on
 * every rank: before step s the ranks of each block of 2^s hold the same
 * bits (by induction), and in step s both partners compute (the lower
 * rank's block) + (the higher rank's block), in that order (IEEE addition is commutative, so the order matters only for
 * which NaN survives; it is fixed anyway, so that the sum is one
 * expression). The fold adds v_i + v_(P+i) first and copies the result
 * out. So all K ranks end bit-identical and a rerun gives the same bits.
 * The tree differs from the ring's chain of adds, so rd and ring agree to
 * rounding, exactly for sums that are exact in any order.
 *
 * PIECES, IN PLACE. A rank sends the very vector it adds into. The partner's
 * vector is received in pieces of the staging size and each piece is added
 * in as soon as it is in; the transport promises that by then our own
 * vector has been sent at least as far (xport.h, recv), so the piece
 * of the buffer is free to overwrite. Memory: the caller's n elements plus
 * one piece, as the ring.
 */
#include "rd.h"

#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

int rd_pow2_floor(int k, int *log2p)
{
    int p = 1, l = 0;

    while (p <= k / 2) {
        p *= 2;
        l++;
    }
    *log2p = l;
    return p;
}

int rd_init(struct rd *r, struct xport *x, int rank, int world, size_t piece_bytes)
{
    r->seg_bytes = 0;
    return xport_algo_init(&r->a, x, rank, world, piece_bytes, RD_PIECE_DEFAULT);
}

void rd_destroy(struct rd *r)
{
    xport_algo_destroy(&r->a);
}

int rd_partners(int rank, int world, int *out)
{
    int l, p = rd_pow2_floor(world, &l), n = 0;

    if (world < 2)
        return 0;
    if (rank >= p)
        out[n++] = rank - p;                /* an extra rank: its fold partner only */
    else {
        if (rank < world - p)
            out[n++] = rank + p;            /* a rank with an extra to fold in */
        for (int s = 0; s < l; s++)
            out[n++] = rank ^ (1 << s);
    }
    return n;
}

void rd_plan(int rank, int world, struct xport_plan *pl)
{
    int partners[RD_PARTNERS_MAX];

    xport_plan_partners(pl, rank, partners, rd_partners(rank, world, partners));
}

int rd_steps(int world)
{
    int l, p = rd_pow2_floor(world < 1 ? 1 : world, &l);

    return p == world ? l : l + 2;
}

/* What a step does with the partner's bytes. */
enum take { TAKE_NONE, TAKE_COPY, TAKE_ADD };

/* frame: one frame each way with `peer`: send buf's n elements (or an
 * empty frame), and take the partner's n as `take` says; `at` is buf's
 * first element's index in the vector, for the error. With `check`, what
 * is taken is checked finite as each piece comes in (rd.h, ERRORS). */
static int frame(struct rd *r, int peer, int round, unsigned char *buf, size_t at, size_t n,
                 int dtype, int send, enum take take, int patience, int check, char *err)
{
    size_t es = dtype_size(dtype), piece = r->a.piece_bytes / es, bad = 0, i = 0;
    struct xport_step s = {
        .to = peer, .from = peer, .send_tag = (uint32_t)round, .recv_tag = (uint32_t)round,
        .sbuf = send ? buf : NULL, .sbytes = send ? n * es : 0,
        .rbytes = take != TAKE_NONE ? n * es : 0, .patience = patience,
    };
    int rc = xport_begin(r->a.x, &s, err);

    /* A copy is received whole, then checked (ring.c, PIECES, says why). */
    if (rc == 0 && take == TAKE_COPY && (rc = xport_recv(r->a.x, buf, n * es, err)) == 0 && check)
        rc = vec_check_finite(buf, n, dtype, &bad);
    for (; rc == 0 && take == TAKE_ADD && i < n; i += piece) {
        size_t m = n - i < piece ? n - i : piece;
        if ((rc = xport_recv(r->a.x, r->a.stage, m * es, err)) == 0)
            rc = vec_add_ordered(buf + i * es, r->a.stage, m, dtype, r->a.rank < peer, check, &bad);
        if (rc == ERR_NONFINITE)
            break;
    }
    if (rc == ERR_NONFINITE)
        err_say(err, "element %zu is %g after round %d from partner rank %d", at + i + bad,
                vec_get(buf, i + bad, dtype), round, peer);
    if (rc == 0)
        rc = xport_end(r->a.x, err);
    return rc;
}

/* step: one exchange of the whole vector with `peer`, as frames of at most
 * r->seg_bytes each (0: one frame; rd.h, SEGMENTS). Both partners cut the
 * same n the same way, so their frames pair up. */
static int step(struct rd *r, int peer, int round, unsigned char *buf, size_t n, int dtype,
                int send, enum take take, int patience, int check, char *err)
{
    size_t es = dtype_size(dtype), seg = r->seg_bytes ? r->seg_bytes / es : n, i = 0;
    int rc = 0;

    if (seg == 0)
        seg = 1;
    do {
        size_t m = n - i < seg ? n - i : seg;
        rc = frame(r, peer, round, buf + i * es, i, m, dtype, send, take, patience, check, err);
        i += m;
    } while (rc == 0 && i < n);
    return rc;
}

static int allreduce(struct rd *r, void *buf, size_t n, int dtype, int check, char *err)
{
    int k = r->a.world, me = r->a.rank, l, p, extra, last, rc = 0;
    unsigned char *v = buf;

    if (dtype_size(dtype) == 0)
        return ERR_USAGE;
    if (k == 1 || n == 0)
        return 0;
    p = rd_pow2_floor(k, &l);
    extra = k - p;
    last = l + 1;                           /* the fold-out round */

    if (me >= p) {
        /* An extra rank: hand the vector in, wait out the doubling (two
         * --timeouts per step sat out, the doubling's own allowance below,
         * plus one: xport_tcp.h, FAULTS), copy the result. */
        rc = step(r, me - p, 0, v, n, dtype, 1, TAKE_NONE, 1, check, err);
        if (rc == 0)
            rc = step(r, me - p, last, v, n, dtype, 0, TAKE_COPY, 2 * l + 1, check, err);
        return rc;
    }
    if (me < extra)
        rc = step(r, me + p, 0, v, n, dtype, 0, TAKE_ADD, 1, check, err);
    for (int s = 0; rc == 0 && s < l; s++) {
        /* With extras, a rank whose partner folds one in enters the
         * doubling a step late, and that lag spreads to whoever meets it,
         * never growing beyond the one step: every doubling step may wait
         * two --timeouts. The same allowance on every step keeps the blame
         * where it belongs: a rank waiting on a rank that waits on a
         * stopped one began later, so the one next to the fault times out
         * first (a larger allowance on the first step only let a second
         * rank in the chain time out first and name the wrong rank:
         * rd-proc-1.9; rabenseifner.c, PATIENCE). */
        int partner = me ^ (1 << s), wait = extra > 0 ? 2 : 1;
        rc = step(r, partner, s + 1, v, n, dtype, 1, TAKE_ADD, wait, check, err);
    }
    if (rc == 0 && me < extra)
        rc = step(r, me + p, last, v, n, dtype, 1, TAKE_NONE, 1, check, err);
    return rc;
}

int rd_allreduce(struct rd *r, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(r, buf, n, dtype, 1, err);
}

int rd_allreduce_raw(struct rd *r, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(r, buf, n, dtype, 0, err);
}
