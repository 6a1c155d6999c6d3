/* rabenseifner.c -- Rabenseifner's all-reduce, and nothing else.
 *
 * K ranks each hold a vector of n elements; each must end up with the
 * element-wise SUM of all K vectors. The ring (ring.c) moves the fewest
 * bytes, 2(K-1)/K n, in 2(K-1) steps; recursive doubling (rd.c) takes the
 * fewest steps, log2 K, but moves the whole vector in each. Rabenseifner
 * keeps the ring's bytes in 2 log2 K steps: the ring's two phases, each
 * done by the cube of rd.c instead of around a ring.
 *
 *   reduce-scatter by RECURSIVE HALVING: in step s a rank swaps HALF of
 *   what it is responsible for with its partner at distance P/2^(s+1),
 *   keeps one half, sends the other, and adds the partner's copy of the
 *   kept half into its own. The part a rank is responsible for halves each
 *   step (n, n/2, n/4, ...); after log2 P steps rank c holds block c of
 *   P, summed over all ranks.
 *   all-gather by RECURSIVE DOUBLING: the same partners in reverse order
 *   (distance 1, 2, 4, ...): swap what one holds finished, COPY the
 *   partner's in; the finished part doubles each step.
 *
 *   K = 4, blocks 0..3 of n/4; "keep|send" in the halving, "have+got" in
 *   the doubling (the blocks after the step)
 *
 *     phase      step  distance  rank 0      rank 1      rank 2      rank 3
 *     halving    0     2         01 | 23     01 | 23     23 | 01     23 | 01
 *                      (pairs 0-2, 1-3: keep the half of your top bit)
 *                1     1         0 | 1       1 | 0       2 | 3       3 | 2
 *                      (rank c now holds block c, summed over all four)
 *     doubling   0     1         0+1         1+0         2+3         3+2
 *                1     2         01+23       01+23       23+01       23+01
 *
 *         step 0, distance 2        step 1, distance 1
 *           0 <-----> 2               0 <-> 1   2 <-> 3
 *           1 <-----> 3
 *     (the doubling runs the same pictures in the other order)
 *
 * Cut: the P blocks are ring_chunk's cut of n into P (sizes differ by at
 * most one; empty when n < P), so an odd n is no special case, and a rank's
 * part is always a run of whole blocks [blo, bhi).
 *
 * COST. Halving step s moves n/2^(s+1) bytes each way, so the halving moves
 * (P-1)/P n in log2 P steps, the doubling the same again; in the
 * alpha-beta model (a: latency, b: seconds per byte, n in bytes)
 *
 *     K = P a power of two   T = 2 log2 K a + 2 (K-1)/K n b
 *     otherwise              T = (2 log2 P + 2) a + (2 (P-1)/P + 2) n b
 *
 * the ring's bandwidth term with 2 log2 K latencies for a power of two
 * (common/measure/model.h, model_rabenseifner). K = 8: 6 latencies (ring
 * 14, rd 3) and 1.75 n bytes (ring 1.75 n, rd 3 n).
 *
 * FOLD (K not a power of two), MPICH's rule. Let P be the largest power of
 * two <= K and r = K - P. The first 2r ranks pair up, (0,1), (2,3), ...,
 * (2r-2, 2r-1); the odd rank of a pair folds into the even one:
 *
 *   round 0            odd rank 2i+1 sends its vector to rank 2i, which
 *                      adds it: v_2i + v_(2i+1)
 *   rounds 1..2 log2 P the halving and the doubling among the P ranks left,
 *                      numbered 0..P-1: rank 2i is i (i < r), rank j >= 2r
 *                      is j - r
 *   round 2 log2 P + 1 rank 2i sends the result to rank 2i+1 (a copy)
 *
 *   K = 6 (P = 4, r = 2): round 0: 1 -> 0, 3 -> 2; ranks 0, 2, 4, 5 are
 *   0, 1, 2, 3 of the cube; last round: 0 -> 1, 2 -> 3.
 *
 * Two more steps of the whole vector, which the formula above counts:
 * 2 (a + n b). The even rank of a pair is the busiest: it takes n in and
 * gives n out beside its 2 (P-1)/P n. The transport's frames carry the
 * round, 0 to 2 log2 P + 1, so a frame from the wrong round is caught.
 *
 * DETERMINISM. Each element is added up by one rank per step (the one
 * whose kept half holds it) and only copied afterwards, so every rank ends
 * with the same bits. The sum of block c is one fixed tree: the fold's
 * v_2i + v_(2i+1) first, then, with w the P folded vectors in the cube's
 * numbering, at distance d = P/2, P/4, ..., 1 the partial of the cube rank
 * with bit d clear plus that of its partner: (lower) + (higher), in that
 * order, on whichever rank adds. So a rerun gives the same bits; the tree
 * differs from the ring's chain and from rd's (which pairs by bit 0 first),
 * so the three agree to rounding, exactly for sums that are exact in any
 * order.
 *
 * PATIENCE (how many --timeouts a step may wait without a byte; xport.h).
 * With a fold, a rank of a pair enters the cube one step late, and the lag
 * spreads to whoever meets it, never growing beyond that one step: every
 * cube step may wait 2, the fold-in 1, the odd rank sitting the cube out
 * 2 log2 P + 1 (one per step sat out, plus one). The same allowance on
 * every cube step keeps the blame where it belongs: a rank waiting on a
 * rank that waits on a stopped one started waiting later, so the one next
 * to the fault times out first and floods the news (a larger allowance on
 * the first step only, as rd.c has, lets the second rank in the chain time
 * out first and name the wrong rank). Without a fold nobody lags: 1.
 *
 * PIECES. The halving sends one half and adds into the other, so the bytes
 * sent are never the bytes overwritten; the partner's half is received in
 * pieces of the staging size, each added as soon as it is in. The doubling
 * and the fold-out receive straight into the buffer. Memory: the caller's
 * n elements plus one piece, as the ring.
 *
 * THE CHECK (ring.c has the why). Every sum is checked finite in the add
 * itself (vec_add_finite), every copied value once its frame is in
 * (vec_check_finite), before anything is sent on: the first rank to see a
 * NaN, an Inf or an overflow names the element, the round and the partner
 * that sent it; the caller fails the step before the weights change.
 * rab_allreduce_raw skips it, for coll_gather's doubles.
 */
#include "rabenseifner.h"

#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"
#include "rd.h"
#include "ring.h"
#include "xchg.h"


int rab_init(struct rab *r, struct xport *x, int rank, int world, size_t piece_bytes)
{
    return xport_algo_init(&r->a, x, rank, world, piece_bytes, RAB_PIECE_DEFAULT);
}

void rab_destroy(struct rab *r)
{
    xport_algo_destroy(&r->a);
}

/* cube_peer (an xchg_peer_fn): the halving's partner at distance
 * d = P >> (s + 1), P/2 first. */
static int cube_peer(int c, int s, int p)
{
    return c ^ (p >> (s + 1));
}

int rab_partners(int rank, int world, int *out)
{
    return xchg_partners(rank, world, cube_peer, out);
}

void rab_plan(int rank, int world, struct xport_plan *pl)
{
    int partners[RAB_PARTNERS_MAX];

    xport_plan_partners(pl, rank, partners, rab_partners(rank, world, partners));
}

int rab_steps(int world)
{
    int l, p = rd_pow2_floor(world < 1 ? 1 : world, &l);

    return p == world ? 2 * l : 2 * l + 2;
}

void rab_block(size_t n, int p, int c, size_t *lo, size_t *hi)
{
    ring_chunk(n, p, c, lo, hi);
}

/* cube: xchg_allreduce's body, the halving and the doubling among the
 * cube ranks (xchg_halve_double), the partner at each step cube_peer's,
 * the block position the cube number. */
static int cube(void *ctx, const struct xchg_cube *q, char *err)
{
    struct rab *r = ctx;

    return xchg_halve_double(&r->a, q, q->c, cube_peer, err);
}

static int allreduce(struct rab *r, void *buf, size_t n, int dtype, int check, char *err)
{
    return xchg_allreduce(&r->a, buf, n, dtype, check, 2, cube, r, err);
}

int rab_allreduce(struct rab *r, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(r, buf, n, dtype, 1, err);
}

int rab_allreduce_raw(struct rab *r, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(r, buf, n, dtype, 0, err);
}
