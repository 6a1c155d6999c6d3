/* tree.c -- the pipelined binary tree and NCCL's double binary tree, and
 * nothing else.
 *
 * K ranks each hold a vector of n elements; each must end up with the
 * element-wise SUM of all K vectors. A TREE reduces the vector up a binary
 * tree to its root and broadcasts the root's sum back down; cut into S
 * segments, the two waves are PIPELINED: while segment u climbs, segment w
 * < u descends, so the depth is paid once, not once per segment. The
 * DOUBLE tree (Sanders, Speck and Traff 2009; NCCL 2.4) runs two trees at
 * once, each on half of the vector, built so that a rank that is a leaf in
 * one is interior in the other: no rank forwards more than about 2 n.
 *
 * TREES (any K). The first tree numbers the ranks IN ORDER: rank q's level
 * is its lowest set bit b; its parent is (q ^ b) | 2b, or q ^ b when that
 * is >= K; its children are q - b/2 and the first of q + b/2, q + b/4, ...
 * below K (none when b = 1: the odd ranks are the leaves). Rank 0 is the
 * root, with one child: the largest power of two below K. Its depth is
 * D = ceil(log2 K). K = 8:
 *
 *          0
 *          |
 *          4                    level 2
 *        /   \
 *       2     6                 level 1
 *      / \   / \
 *     1   3 5   7               level 0: leaves
 *
 * The second tree (dbtree) gives rank r the place of another: for even K
 * the MIRROR, K-1-r (root K-1); for odd K the SHIFT, r-1 mod K (root 1).
 * Either way the odd ranks are interior and the even ones leaves (rank 0
 * with odd K is interior in both, as in NCCL). --algo tree runs the first
 * tree on the whole vector; --algo dbtree the first on the first half
 * (ring_chunk's cut in 2) and the second on the second.
 *
 * SEGMENTS. A tree's part of the vector is cut into S segments by
 * ring_chunk, S = ceil(part bytes / 128 KiB) (TREE_SEG_BYTES, fixed; at
 * most one per element): 4 MiB is S = 32 for tree, 16 per tree for dbtree.
 *
 * PERIODS AND SLOTS. Every step is a swap with one neighbour (xport.h):
 * up goes a child's partial sum, down its parent's finished one, at once.
 * Time is cut into PERIODS of C SLOTS; every edge of the trees has a slot
 * (a COLOR: the two or three edges of a rank in a tree, and in both trees,
 * have different ones), and in period q, slot k, every rank swaps on its
 * edge of color k, if it has one and the edge carries something:
 *
 *     up   in period q, a child of height h (a leaf: 0) sends segment
 *          u = q - h: its own plus what its children sent in periods < q
 *     down in period q, a child at depth d gets segment w = q - (D + d - 1)
 *          from its parent, which got it one period earlier (the root:
 *          finished in period w + D - 1, when its last child's came in)
 *
 *   K = 4, S = 2 (tree: 0 - 2, 2 - 1, 2 - 3; D = 2; colors 0, 1, 2):
 *
 *     period  slot 0 (0-2)     slot 1 (2-1)       slot 2 (2-3)
 *     0       -                up 0               up 0
 *     1       up 0             up 1               up 1
 *     2       up 1, down 0     -                  -
 *     3       down 1           down 0             down 0
 *     4       -                down 1             down 1
 *
 * A swap whose two directions are both empty is skipped, on both sides.
 * The slots give every rank one order of its swaps, the same on both ends
 * of an edge and consistent across ranks (by period, then slot), so the
 * frames on a connection line up and no cycle of waits can form.
 *
 * COLORS. One tree: the root's edge 0, and below a node whose own edge has
 * color c its children's edges the two colors other than c, the lower
 * child first: C = 3 (K >= 4). Two trees: a rank has up to 4 edges (3 in
 * the tree where it is interior, 1 in the other), so C >= 4; the edges are
 * colored by a search (DSatur order, backtracking, a fixed budget) for the
 * least C; for K > 64, or when the budget runs out, greedily. Every rank runs the same search on the same K and gets the
 * same colors (tree_colors).
 *
 * COST. S + 2D - 1 periods (the last segment leaves the root at period
 * S - 1 + D and reaches the deepest leaf D - 1 periods later), C slots
 * each, with D = ceil(log2 K), for any K (K = 2: tree C = 1, dbtree 2;
 * K = 3: tree C = 2, dbtree 4, the two trees sharing an edge). A rank
 * skips the slots with nothing to move, and a swap does not wait for its
 * other end: the transport writes a frame's header and first piece at
 * once (TCP buffers it), the rest once the other end's header is in, and
 * a swap ends when the other end's frame is in. So the time is that of
 * this schedule with one wire each way per host (a: latency, b: seconds
 * per byte, m = n / (trees S) a segment):
 *
 *     S = ceil(n / trees / 128 KiB),  T = tree_cost(K, trees, S, m, a, b)
 *
 * (base/tree_shape.h, tree_cost, which says the rules; the model's,
 * common/measure/model.h, model_tree), exact arithmetic on a, b, n, K: K
 * = 4, one 4 KiB segment, 4 a + 6 m b for a first call; in a loop of
 * calls 4 a + 5 m b, the root entering its next call while the leaves
 * get their last segment. If every swap waited for both ends (a + m b
 * each) it would be tree_steps' longest chain of swaps, K = 4, S = 2: 11,
 * where C P = 15. For S >> D, T -> C S m b: the tree's bandwidth term
 * 3 n b, the double tree's 2 n b (the ring's: 2 (K-1)/K n b), and the
 * latency grows with log2 K, not K. The search finds C = 4 for every K
 * <= 48 (test_tree.c checks) and most K <= 64; above, the greedy colors
 * take 5 or 6 slots. psring_sim (xport_sim.c, EAGER AND RENDEZVOUS) runs
 * the same mechanism (docs/design.md, The trees).
 *
 * DETERMINISM. Every element of a segment is summed once, on its way up,
 * in one fixed order: at a rank, its own value, then each child's partial
 * in the order they arrive (by period, then slot: tree_colors and
 * tree_height fix it), each added as mine + theirs; the root's sum is then
 * only copied down. So every rank ends with the same bits, and a rerun
 * too; the order differs from the ring's, rd's and Rabenseifner's, so all
 * agree to rounding, exactly for sums that are exact in any order.
 *
 * PATIENCE. No rank waits by design: every swap's partner is at most the
 * few short steps of one period behind. Every step gets the same
 * allowance, one --timeout (rabenseifner.c, PATIENCE, says why the same).
 * Known limit: a rank whose partner is still computing the step before
 * starts its wait earlier than the partner's own wait on a stopped rank,
 * so under a loaded machine it can time out first and name that partner
 * (t_tree.sh, tree-proc-1.4: seen once in three runs under the
 * sanitizers); every rank still ends in time, naming a lost rank.
 *
 * THE CHECK (ring.c has the why). Every sum is checked finite in the add
 * itself (vec_add_finite), every copied value once its frame is in
 * (vec_check_finite), before anything is sent on: the first rank to see a
 * NaN, an Inf or an overflow names the element, the round and the rank
 * that sent it. tree_allreduce_raw skips it, for coll_gather's doubles.
 */
#include "tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"
#include "ring.h"

size_t tree_segments(size_t elems, size_t es)
{
    size_t s = (elems * es + TREE_SEG_BYTES - 1) / TREE_SEG_BYTES;

    if (elems == 0)
        return 0;
    return s < 1 ? 1 : s > elems ? elems : s;
}

/* ------------------------------------------------------------ set-up */

static int by_color(const void *x, const void *y)
{
    return ((const struct tree_edge *)x)->color - ((const struct tree_edge *)y)->color;
}

int tree_init(struct tree *t, struct xport *x, int rank, int world, int ntrees,
              size_t piece_bytes)
{
    int rc, *color;

    memset(t, 0, sizeof *t);
    if (ntrees < 1 || ntrees > 2)
        return ERR_USAGE;
    if ((rc = xport_algo_init(&t->a, x, rank, world, piece_bytes, TREE_PIECE_DEFAULT)) != 0)
        return rc;
    t->ntrees = ntrees;
    if (world < 2)
        return 0;
    if (!(color = malloc(sizeof *color * (size_t)world * 2))) {
        tree_destroy(t);
        return -ENOMEM;
    }
    t->colors = tree_colors(world, ntrees, color);
    t->depth = tree_height(0, world, 0);
    for (int j = 0; j < ntrees && t->colors > 0; j++) {
        int p = tree_parent(rank, world, j), c[2], nc = tree_children(rank, world, j, c);
        if (p >= 0)
            t->e[t->nedges++] = (struct tree_edge){
                j, p, 1, color[j * world + rank], tree_height(rank, world, j),
                t->depth + tree_depth(rank, world, j) - 1 };
        for (int i = 0; i < nc; i++)
            t->e[t->nedges++] = (struct tree_edge){
                j, c[i], 0, color[j * world + c[i]], tree_height(c[i], world, j),
                t->depth + tree_depth(c[i], world, j) - 1 };
    }
    free(color);
    if (t->colors < 0) {
        rc = t->colors;
        tree_destroy(t);
        return rc;
    }
    qsort(t->e, (size_t)t->nedges, sizeof t->e[0], by_color);
    return 0;
}

void tree_destroy(struct tree *t)
{
    xport_algo_destroy(&t->a);
}

void tree_plan(int rank, int world, int ntrees, struct xport_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    for (int j = 0; j < ntrees && world > 1; j++) {
        int nb[3], n = tree_children(rank, world, j, nb), p = tree_parent(rank, world, j);
        if (p >= 0)
            nb[n++] = p;
        for (int i = 0; i < n; i++) {
            int dup = 0;
            for (int m = 0; m < pl->npeers; m++)
                dup |= pl->peer[m].rank == nb[i];
            if (!dup)
                pl->peer[pl->npeers++] =
                    (struct xport_plan_peer){ nb[i], nb[i] < rank, "tree neighbour" };
        }
    }
    pl->news = XPORT_NEWS_FLOOD;
    pl->tag = "round";
    pl->tag_of = "in round";
}

/* ------------------------------------------------------------ the run */

/* One swap: send sn elements from sbuf, receive rn into rbuf (element
 * `first` of the vector), added (add) or copied. */
struct swap {
    int peer, round, add, check;
    const char *who;
    const unsigned char *sbuf;
    size_t sn;
    unsigned char *rbuf;
    size_t rn, first;
};

static int swap(struct tree *t, const struct swap *w, int dtype, char *err)
{
    size_t es = dtype_size(dtype), piece = t->a.piece_bytes / es, bad = 0, i = 0;
    struct xport_step s = {
        .to = w->peer, .from = w->peer, .send_tag = (uint32_t)w->round,
        .recv_tag = (uint32_t)w->round, .sbuf = w->sbuf, .sbytes = w->sn * es,
        .rbytes = w->rn * es, .patience = 1,
    };
    int rc = xport_begin(t->a.x, &s, err);

    /* A copy is received whole, then checked (ring.c, PIECES, says why). */
    if (rc == 0 && !w->add && w->rn > 0 &&
        (rc = xport_recv(t->a.x, w->rbuf, w->rn * es, err)) == 0 && w->check)
        rc = vec_check_finite(w->rbuf, w->rn, dtype, &bad);
    for (; rc == 0 && w->add && i < w->rn; i += piece) {
        size_t m = w->rn - i < piece ? w->rn - i : piece;
        if ((rc = xport_recv(t->a.x, t->a.stage, m * es, err)) != 0)
            break;
        if (w->check)
            rc = vec_add_finite(w->rbuf + i * es, t->a.stage, m, dtype, &bad);
        else
            vec_add(w->rbuf + i * es, t->a.stage, m, dtype);
        if (rc == ERR_NONFINITE)
            break;
    }
    if (rc == ERR_NONFINITE)
        err_say(err, "element %zu is %g after round %d from %s rank %d", w->first + i + bad,
                vec_get(w->rbuf, i + bad, dtype), w->round, w->who, w->peer);
    if (rc == 0)
        rc = xport_end(t->a.x, err);
    return rc;
}

static int allreduce(struct tree *t, void *buf, size_t n, int dtype, int check, char *err)
{
    size_t es = dtype_size(dtype), lo[2] = { 0, 0 }, hi[2] = { 0, 0 }, segs[2] = { 0, 0 };
    long periods = 0;
    unsigned char *v = buf;
    int rc = 0;

    if (es == 0)
        return ERR_USAGE;
    if (t->a.world == 1 || n == 0)
        return 0;
    for (int j = 0; j < t->ntrees; j++) {
        ring_chunk(n, t->ntrees, j, &lo[j], &hi[j]);
        segs[j] = tree_segments(hi[j] - lo[j], es);
        if ((long)segs[j] + 2 * t->depth - 1 > periods)
            periods = (long)segs[j] + 2 * t->depth - 1;
    }
    for (long q = 0; rc == 0 && q < periods; q++) {
        for (int i = 0; rc == 0 && i < t->nedges; i++) {
            const struct tree_edge *e = &t->e[i];
            long up = q - e->height, down = q - e->down_at, s = (long)segs[e->tree];
            int has_up = up >= 0 && up < s, has_down = down >= 0 && down < s;
            size_t n_j = hi[e->tree] - lo[e->tree], ulo = 0, uhi = 0, dlo = 0, dhi = 0;
            if (!has_up && !has_down)
                continue;
            if (has_up)
                ring_chunk(n_j, (int)s, (int)up, &ulo, &uhi);
            if (has_down)
                ring_chunk(n_j, (int)s, (int)down, &dlo, &dhi);
            ulo += lo[e->tree], uhi += lo[e->tree], dlo += lo[e->tree], dhi += lo[e->tree];
            struct swap w = { .peer = e->peer, .round = (int)(q * t->colors + e->color),
                              .check = check };
            if (e->to_parent) {         /* up: my partial; down: the sum, copied */
                w = (struct swap){ e->peer, w.round, 0, check, "parent", v + ulo * es,
                                   uhi - ulo, v + dlo * es, dhi - dlo, dlo };
            } else {                    /* down: the sum; up: the child's, added */
                w = (struct swap){ e->peer, w.round, 1, check, "child", v + dlo * es,
                                   dhi - dlo, v + ulo * es, uhi - ulo, ulo };
            }
            rc = swap(t, &w, dtype, err);
        }
    }
    return rc;
}

int tree_allreduce(struct tree *t, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(t, buf, n, dtype, 1, err);
}

int tree_allreduce_raw(struct tree *t, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(t, buf, n, dtype, 0, err);
}
