/* a2a.c -- all-to-all by pairwise exchange.
 *
 * Rank r holds a block for every rank d (a2a.h, THE SPLIT) and must end
 * with every rank's block for r: a transpose of K x K blocks. In K-1 steps,
 * step s = 1 .. K-1, every rank sends to the rank s to its right and
 * receives from the rank s to its left, at once:
 *
 *     to = r + s,  from = r - s   (mod K)
 *
 *   K = 4, "d<s": sends to d, receives from s
 *
 *     step   rank 0   rank 1   rank 2   rank 3
 *     1      1<3      2<0      3<1      0<2
 *     2      2<2      3<3      0<0      1<1
 *     3      3<1      0<2      1<3      2<0
 *
 * Each pair of ranks meets once in each direction, and in every step every
 * rank sends one block and receives one, so with balanced blocks every
 * link is busy in every step (the mesh of connections: a2a_plan). The own
 * block is a local copy.
 *
 * COST. K-1 steps; with balanced blocks of n/K bytes
 *     T = (K-1) a + (K-1)/K n b
 * (nccl-tests' busbw factor (K-1)/K). Under --imbalance F every step
 * carries one block of F n/K into the hot rank, so the steps wait for it:
 *     T = (K-1) a + (K-1) F n b / K
 * (model.h, model_coll). Bytes per rank: out, the blocks to the other
 * ranks; in, (K-1) a2a_count(r); plus one header per step each way.
 * No arithmetic: every rank's result is its own (nothing is common to
 * compare across ranks); the bench checks each block's contents.
 */
#include "a2a.h"

#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"
#include "ring.h"

int a2a_split_check(const struct a2a_split *sp, char *err)
{
    if (sp->world < 1 || sp->world > A2A_WORLD_MAX || sp->hot < 0 || sp->hot >= sp->world ||
        !(sp->imbalance >= 1.0) || sp->imbalance > (double)sp->world) {
        err_say(err, "alltoall: K %d (1 .. %d), hot rank %d, imbalance %g (1 .. K)", sp->world,
            A2A_WORLD_MAX, sp->hot, sp->imbalance);
        return ERR_USAGE;
    }
    return 0;
}

/* hot_count: h = floor(F n / K), at most n. */
static size_t hot_count(const struct a2a_split *sp)
{
    double h = sp->imbalance * (double)sp->n / (double)sp->world;
    size_t c = (size_t)h;

    return c > sp->n ? sp->n : c;
}

size_t a2a_count(const struct a2a_split *sp, int d)
{
    size_t lo, hi, h;

    if (sp->imbalance == 1.0 || sp->world == 1) {
        ring_chunk(sp->n, sp->world, d, &lo, &hi);
        return hi - lo;
    }
    h = hot_count(sp);
    if (d == sp->hot)
        return h;
    /* The others, in rank order without the hot one, cut n - h as the ring cuts. */
    ring_chunk(sp->n - h, sp->world - 1, d < sp->hot ? d : d - 1, &lo, &hi);
    return hi - lo;
}

size_t a2a_offset(const struct a2a_split *sp, int d)
{
    size_t off = 0;

    for (int q = 0; q < d; q++)
        off += a2a_count(sp, q);
    return off;
}

void a2a_plan(int rank, int world, struct xport_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    for (int r = 0; r < world && pl->npeers < XPORT_PEERS_MAX; r++)
        if (r != rank)
            pl->peer[pl->npeers++] = (struct xport_plan_peer){ r, r < rank, "peer" };
    pl->news = XPORT_NEWS_FLOOD;
    pl->tag = "step";
    pl->tag_of = "in step";
}

int a2a_alltoall(struct xport_algo *a, const void *send, void *recv, const struct a2a_split *sp,
                 int dtype, char *err)
{
    size_t es = dtype_size(dtype), mine;
    const unsigned char *s = send;
    unsigned char *r = recv;
    int k = a->world, me = a->rank, rc;

    if (es == 0 || sp->world != k) {
        err_say(err, "alltoall: dtype %d, split for %d ranks, %d here", dtype, sp->world, k);
        return ERR_USAGE;
    }
    if ((rc = a2a_split_check(sp, err)) != 0)
        return rc;
    mine = a2a_count(sp, me);
    if (mine > 0)
        memcpy(r + (size_t)me * mine * es, s + a2a_offset(sp, me) * es, mine * es);
    for (int step = 1; step < k; step++) {
        int to = (me + step) % k, from = (me - step + k) % k;
        size_t out = a2a_count(sp, to);

        rc = xport_begin(a->x, &(struct xport_step){
                .to = to, .from = from, .send_tag = (uint32_t)step, .recv_tag = (uint32_t)step,
                .sbuf = s + a2a_offset(sp, to) * es, .sbytes = out * es, .rbytes = mine * es,
            }, err);
        if (rc == 0 && mine > 0 &&
            (rc = xport_recv(a->x, r + (size_t)from * mine * es, mine * es, err)) == 0) {
            size_t bad = 0;
            if ((rc = vec_check_finite(r + (size_t)from * mine * es, mine, dtype, &bad)) != 0)
                err_say(err, "element %zu is %g from rank %d at all-to-all step %d", bad,
                        vec_get(r + (size_t)from * mine * es, bad, dtype), from, step);
        }
        if (rc == 0)
            rc = xport_end(a->x, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}
