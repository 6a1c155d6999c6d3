/* swing.c -- Swing's all-reduce, both variants, and nothing else.
 *
 * Recursive doubling (rd.c) and Rabenseifner (rabenseifner.c) pair rank r
 * with r XOR 2^s in step s: partners 1, 2, 4, ... apart. On a ring or a
 * torus, where a message to a rank d apart crosses d links, the late steps
 * cross many links and share them with the other pairs' messages. Swing
 * (De Sensi, Bonato, Saam, Hoefler, NSDI 2024) keeps the step counts but
 * "swings" left and right, so that the distance grows by about 2 per step,
 * not doubles:
 *
 *     rho(s) = sum_{i=0..s} (-2)^i = 1, -1, 3, -5, 11, -21, ...   |rho(s)| ~ 2^(s+1)/3
 *     peer(r, s) = r + rho(s) (r even),  r - rho(s) (r odd),  mod K
 *
 * An even rank's peer is odd (rho is odd) and its peer is r again, so each
 * step is K/2 disjoint swaps, as in rd. K = 8:
 *
 *     step  rho   pairs                          farthest pair (ring hops)
 *     0      1    0-1  2-3  4-5  6-7             1
 *     1     -1    0-7  2-1  4-3  6-5             1
 *     2      3    0-3  2-5  4-7  6-1             3 (rd's step 2: 4)
 *
 *       step 2 on a ring of 8:   0   1   2   3   4   5   6   7
 *                                 `--------->'                 0-3: 3 hops
 *                                         `---------->'        2-5: 3 hops
 *
 * After log2 K steps every rank has heard from every other exactly once
 * (the sets it has heard from double each step and never overlap: the
 * paper proves it; tests/test_swing.c checks the sets for K up to 64 and
 * the sums for K up to 9).
 *
 * swing-lat: in each step swap the WHOLE vector with the peer and add
 * (rd.c with other partners). log2 K steps of n bytes:
 *
 *     T = log2 K (a + n b)
 *
 * swing-bw: a reduce-scatter in log2 K steps, then an all-gather in log2 K
 * steps meeting the same peers in the reverse order, each step halving
 * (then doubling) the data, as Rabenseifner's:
 *
 *     T = 2 log2 K a + 2 (K-1)/K n b
 *
 * BLOCKS (swing-bw's bookkeeping). Cut the vector into P blocks
 * (ring_chunk's cut). In reduce-scatter step s rank r keeps the blocks
 * that r and the ranks r meets in steps s+1.. will own, and sends its peer
 * q the blocks that q and the ranks q meets later will own:
 *
 *     reach(q, s) = {q} + reach(peer(q, s+1), s+1) + ... + reach(peer(q, L-1), L-1)
 *
 * reach(r, s) and reach(q, s) split reach(r, s-1) in two halves. For rd
 * those sets are the ranks agreeing in some bits, contiguous once the bits
 * are reversed; for Swing they are scattered (K = 8: reach(0, 0) = {0, 3,
 * 4, 7}), but they nest (each set at step s is one half of a set at step
 * s-1), so one numbering of the ranks makes every such set a run. Each
 * rank's position: bit L-1-s says which half of its step-(s-1) set it is
 * in, the half whose smallest rank is the smaller being 0. Block number =
 * position: rank r owns block pos(r) after the reduce-scatter, and in step
 * s keeps the half of its run holding pos(r), exactly Rabenseifner's cube
 * with pos(r) in place of r (the halving at distance P/2, P/4, ...
 * between positions, whatever the peer's rank). K = 4: positions 0, 2, 3,
 * 1 for ranks 0..3; "keep | send":
 *
 *     step          pairs     rank 0     rank 1     rank 2     rank 3
 *     rs 0 (rho 1)  0-1 2-3   01 | 23    23 | 01    23 | 01    01 | 23
 *     rs 1 (rho-1)  0-3 1-2   0 | 1      2 | 3      3 | 2      1 | 0
 *     ag 1          0-3 1-2   0+1        2+3        3+2        1+0
 *     ag 0          0-1 2-3   01+23      23+01      23+01      01+23
 *
 * Computing pos(r) takes O(P) peer look-ups, once, in swing_init.
 *
 * FOLD (K not a power of two): Rabenseifner's (rabenseifner.c, FOLD).
 * With P = 2^floor(log2 K) and r = K - P, ranks 2i+1 (i < r) hand their
 * vector to rank 2i in round 0 and get the result back in the last round;
 * Swing runs among the P ranks left, numbered 0..P-1 (rank 2i is i, rank j
 * >= 2r is j - r), the peers computed mod P in that numbering. Two more
 * steps of the whole vector:
 *
 *     swing-lat  T = (log2 P + 2)(a + n b)
 *     swing-bw   T = (2 log2 P + 2) a + (2 (P-1)/P + 2) n b
 *
 * the same as rd's and Rabenseifner's: in the alpha-beta model, which
 * knows no topology, Swing costs what they cost (common/measure/model.h,
 * model_swing_lat, model_swing_bw). Its gain is in the hops, which only a
 * topology shows (psring_sim --platform torus:X:Y; docs/design.md, Swing).
 *
 * DETERMINISM. swing-bw: each element is added up by one rank per step
 * and only copied afterwards, so every rank ends with the same bits.
 * swing-lat: both ranks of a pair compute (lower rank's) + (higher rank's)
 * and hold the same bits after the step, but the sets a rank has heard from
 * do not form rd's cube (K = 8: after step 1 rank 0 has {0, 1, 6, 7}, rank
 * 1 has {0, 1, 2, 3}), so rank 0's tree is ((01)(67))((23)(45)) and rank
 * 1's ((01)(23))((67)(45)): ranks agree to rounding, bit for bit when the
 * sum is exact in any order; a rerun gives each rank the same bits. No
 * log2 K-step whole-vector exchange with Swing's peers can do better;
 * swing-bw is the variant to use where ranks must agree bit for bit.
 *
 * PATIENCE, PIECES, THE CHECK: as rabenseifner.c's (with a fold every
 * step may wait two --timeouts, the odd rank sitting Swing out one per
 * step plus one; the partner's bytes added piece by piece as they come in;
 * every sum and every copied value checked finite before it is sent on).
 */
#include "swing.h"

#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"
#include "rd.h"
#include "ring.h"
#include "xchg.h"


long long swing_rho(int s)
{
    long long t = 1;

    for (int i = 0; i <= s; i++)
        t *= -2;
    return (1 - t) / 3;
}

int swing_peer(int c, int s, int p)
{
    long long q = c % 2 == 0 ? c + swing_rho(s) : c - swing_rho(s);

    q %= p;
    return (int)(q < 0 ? q + p : q);
}

/* reach_min: the smallest cube rank of reach(q, s) (BLOCKS) among p = 2^l. */
static int reach_min(int q, int s, int l, int p)
{
    int m = q;

    for (int t = s + 1; t < l; t++) {
        int x = reach_min(swing_peer(q, t, p), t, l, p);
        m = x < m ? x : m;
    }
    return m;
}

/* pos_of: cube rank c's position (BLOCKS). */
static int pos_of(int c, int l, int p)
{
    int pos = 0;

    for (int s = 0; s < l; s++)
        if (reach_min(c, s, l, p) > reach_min(swing_peer(c, s, p), s, l, p))
            pos |= 1 << (l - 1 - s);
    return pos;
}

int swing_block(int rank, int world)
{
    int l, p = rd_pow2_floor(world < 1 ? 1 : world, &l), c = xchg_cube_of(rank, world - p);

    return c < 0 ? -1 : pos_of(c, l, p);
}

int swing_init(struct swing *w, struct xport *x, int rank, int world, int bw, size_t piece_bytes)
{
    int rc = xport_algo_init(&w->a, x, rank, world, piece_bytes, SWING_PIECE_DEFAULT);

    w->bw = bw;
    w->pos = rc == 0 && bw ? swing_block(rank, world) : -1;
    return rc;
}

void swing_destroy(struct swing *w)
{
    xport_algo_destroy(&w->a);
}

int swing_partners(int rank, int world, int *out)
{
    return xchg_partners(rank, world, swing_peer, out);
}

void swing_plan(int rank, int world, struct xport_plan *pl)
{
    int partners[SWING_PARTNERS_MAX];

    xport_plan_partners(pl, rank, partners, swing_partners(rank, world, partners));
}

int swing_steps(int world, int bw)
{
    int l, p = rd_pow2_floor(world < 1 ? 1 : world, &l), steps = bw ? 2 * l : l;

    return p == world ? steps : steps + 2;
}

/* lat: swing-lat among the cube ranks: at step s the whole vector to and
 * from Swing's peer, added in. */
static int lat(struct swing *w, const struct xchg_cube *q, char *err)
{
    int rc = 0;

    for (int s = 0; rc == 0 && s < q->l; s++) {
        struct xchg e = {
            .peer = xchg_rank_of(swing_peer(q->c, s, q->p), q->extra), .round = s + 1,
            .patience = q->wait, .check = q->check, .sbuf = q->v, .sn = q->n, .rbuf = q->v,
            .rn = q->n, .take = XCHG_ADD,
        };
        rc = xchg_step(&w->a, &e, q->dtype, err);
    }
    return rc;
}

/* body: xchg_allreduce's: swing-lat, or swing-bw's reduce-scatter and
 * all-gather over positions (BLOCKS): the run [blo, bhi) halves around
 * pos, then doubles back (xchg_halve_double), Swing's peer at each step. */
static int body(void *ctx, const struct xchg_cube *q, char *err)
{
    struct swing *w = ctx;

    return w->bw ? xchg_halve_double(&w->a, q, w->pos, swing_peer, err) : lat(w, q, err);
}

static int allreduce(struct swing *w, void *buf, size_t n, int dtype, int check, char *err)
{
    return xchg_allreduce(&w->a, buf, n, dtype, check, w->bw ? 2 : 1, body, w, err);
}

int swing_allreduce(struct swing *w, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(w, buf, n, dtype, 1, err);
}

int swing_allreduce_raw(struct swing *w, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(w, buf, n, dtype, 0, err);
}
