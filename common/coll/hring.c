/* hring.c -- the hierarchical (2D) ring all-reduce, and nothing else.
 *
 * K ranks each hold a vector of n elements; each must end up with the
 * element-wise SUM of all K vectors. The ring (ring.c) moves the fewest
 * bytes but pays 2(K-1) latencies, one per step around all K ranks. With
 * the ranks grouped by host, G per host and H = K/G hosts, run three
 * small rings instead of one large one:
 *
 *   1. INSIDE each host, a ring reduce-scatter among its G ranks (ring.c's
 *      phase, the vector cut into G chunks): local rank l ends holding
 *      chunk l summed over its host.
 *   2. ACROSS the hosts, a ring all-reduce of chunk l among the H ranks
 *      with local index l (one ring per l, all G at once, disjoint): chunk
 *      l, cut into H sub-chunks, summed over every host.
 *   3. INSIDE each host again, a ring all-gather of the G finished chunks.
 *
 *   K = 8, G = 4 (hosts A = ranks 0-3, B = ranks 4-7), chunks 0..3 of n/4
 *
 *      host A   0 -> 1 -> 2 -> 3 -> 0      1. and 3.: a ring inside
 *                |    |    |    |              each host (G-1 steps
 *                |    |    |    |              each, chunks of n/G)
 *      host B   4 -> 5 -> 6 -> 7 -> 4      2. rings 0-4, 1-5, 2-6, 3-7
 *                                             across (2 (H-1) steps,
 *                                             sub-chunks of n/K)
 *
 *     phase            steps     a step moves    who holds what after it
 *     1 reduce-scatter G-1       n/G             rank l: chunk l, host's sum
 *     2 all-reduce     2(H-1)    n/(G H) = n/K   rank l: chunk l, the sum
 *     3 all-gather     G-1       n/G             every rank: the sum
 *
 * COST. In the alpha-beta model with a link a_l + m b_l inside a host and
 * a + m b across (a: latency, b: seconds per byte, n in bytes):
 *
 *     T = 2 (G-1) (a_l + n/G b_l) + 2 (H-1) (a + n/K b)
 *
 * With equal links (psring's emulated link: every process has one NIC of
 * the same rate, whether its peer is on its host or not) that is
 * 2 (G + H - 2) a + 2 (K-1)/K n b: the ring's bytes, since
 * 2(G-1)/G + 2(H-1)/K = 2(K-1)/K, in G + H - 2 latencies a phase instead
 * of K - 1: O(G + K/G) instead of O(K); K = 16, G = 4: 12 steps, the ring
 * 30 (common/measure/model.h, model_hring). Where the hosts' own links are
 * faster (shared memory, NVLink: b_l < b), phase 2 is the slow one and
 * carries only n/K per step: that is why the 2D ring is used there.
 *
 * GROUPS. Rank r is on host r / G, local index r % G; G must divide K
 * (hring.h; hring_check refuses the rest). G = 1 leaves only phase 2 (the
 * plain ring across), G = K only phases 1 and 3 (the plain ring inside).
 *
 * DETERMINISM. Element i lies in chunk c of the G-cut and in sub-chunk j
 * of chunk c's H-cut (ring_chunk both). Phase 1 sums it on host h in the
 * ring's order of the local ranks, c+1, c+2, ..., c (mod G):
 * S_h = ((v[c+1] + v[c+2]) + ...) + v[c]; phase 2 sums the hosts' S_h in
 * the same way over the hosts, j+1, j+2, ..., j (mod H); phase 3 and the
 * all-gather of phase 2 only copy. So every rank ends with the same bits,
 * a rerun too; the order differs from the ring's (test_hring.c replays it),
 * so the two agree to rounding, exactly for sums exact in any order.
 *
 * TAGS. Every step's frame carries the step's number in the whole
 * all-reduce, 0 .. 2 (G-1) + 2 (H-1) - 1 (the rounds of the FLOOD plan):
 * both ends of a ring step are at the same step of the same phase, and a
 * frame from another phase is caught. A pair of ranks is never both host
 * neighbours and cross-host neighbours (they are on one host or not), so
 * each connection carries one ring's frames in order.
 *
 * PATIENCE. Every step waits one --timeout. A rank waits on a slower one
 * only at the start of a phase, by less than a phase; a stopped rank is
 * waited on first by its own neighbour in the ring where it stopped, and
 * that one times out first and floods the news (rabenseifner.c, PATIENCE).
 *
 * PIECES AND THE CHECK are ring.c's: the reduce-scatters receive in
 * pieces of the staging size, each added as soon as it is in, every sum
 * checked finite in the add (vec_add_finite); the all-gathers receive
 * straight into the buffer and check what they copied once the chunk is
 * in. The first rank to see a NaN, an Inf or an overflow names the
 * element, the round, the rank that sent it and the phase.
 * hring_allreduce_raw skips it, for coll_gather's doubles.
 */
#include "hring.h"

#include <stdio.h>
#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"
#include "ring.h"

/* One of the small rings: member i (0..size-1) is rank base + i stride;
 * this rank is member me. */
struct sub {
    int base, stride, size, me;
    const char *where;        /* in messages: "host-local", "cross-host" */
};

static int mod(int a, int k)
{
    int m = a % k;
    return m < 0 ? m + k : m;
}

static int member(const struct sub *g, int i)
{
    return g->base + mod(i, g->size) * g->stride;
}

int hring_check(int world, int group, char *err)
{
    if (group >= 1 && world >= 1 && group <= world && world % group == 0)
        return 0;
    err_say(err, "--ranks-per-host %d: must divide K = %d (the hierarchical ring has no "
            "rule for a partial host)", group, world);
    return ERR_USAGE;
}

int hring_init(struct hring *h, struct xport *x, int rank, int world, int group,
               size_t piece_bytes)
{
    char why[ERR_LEN];
    int rc;

    memset(h, 0, sizeof *h);
    if (hring_check(world, group, why) != 0)
        return ERR_USAGE;
    rc = xport_algo_init(&h->a, x, rank, world, piece_bytes, HRING_PIECE_DEFAULT);
    h->group = group;
    snprintf(h->name, sizeof h->name, "hring:%u", (unsigned)group % 1000000u);  /* G <= K <= 65536 */
    return rc;
}

void hring_destroy(struct hring *h)
{
    xport_algo_destroy(&h->a);
}

/* The two rings of `rank`: inside its host and across the hosts. */
static void subs(int rank, int world, int group, struct sub *in, struct sub *across)
{
    int host = rank / group, l = rank % group;

    *in = (struct sub){ host * group, 1, group, l, "host-local" };
    *across = (struct sub){ l, group, world / group, host, "cross-host" };
}

int hring_partners(int rank, int world, int group, int *out)
{
    struct sub g[2];
    int n = 0;

    if (world < 2 || group < 1 || world % group != 0)
        return 0;
    subs(rank, world, group, &g[0], &g[1]);
    for (int s = 0; s < 2; s++)
        for (int d = 1; d >= -1; d -= 2) {
            int q = member(&g[s], g[s].me + d), dup = q == rank;
            for (int i = 0; i < n; i++)
                dup |= out[i] == q;
            if (!dup)
                out[n++] = q;
        }
    return n;
}

void hring_plan(int rank, int world, int group, struct xport_plan *pl)
{
    int partners[HRING_PARTNERS_MAX];

    xport_plan_partners(pl, rank, partners, hring_partners(rank, world, group, partners));
}

int hring_steps(int world, int group)
{
    if (world < 2 || group < 1 || world % group != 0)
        return 0;
    return 2 * (group - 1) + 2 * (world / group - 1);
}

/* phase: one ring phase (ring.c's, on a small ring g) over the m elements
 * at p, which are elements first.. of the whole vector (for messages);
 * *round: the all-reduce's step number, advanced (TAGS). */
static int phase(struct hring *h, const struct sub *g, unsigned char *p, size_t m,
                 size_t first, int dtype, enum ring_phase ph, int *round, int check, char *err)
{
    size_t es = dtype_size(dtype), slo, shi, rlo, rhi;
    size_t piece = ph == RING_REDUCE_SCATTER ? h->a.piece_bytes / es : m;
    int k = g->size, left = member(g, g->me - 1), rc = 0;

    for (int s = 0; s < k - 1; s++) {
        int sc, rcv;
        uint32_t tag = (uint32_t)(*round)++;
        ring_schedule(g->me, k, ph, s, &sc, &rcv);
        ring_chunk(m, k, sc, &slo, &shi);
        ring_chunk(m, k, rcv, &rlo, &rhi);
        rc = xport_begin(h->a.x, &(struct xport_step){
                .to = member(g, g->me + 1), .from = left, .send_tag = tag, .recv_tag = tag,
                .sbuf = p + slo * es, .sbytes = (shi - slo) * es, .rbytes = (rhi - rlo) * es,
            }, err);
        for (size_t i = rlo; rc == 0 && i < rhi; i += piece) {
            size_t c = rhi - i < piece ? rhi - i : piece, bad = 0;
            if (ph == RING_ALL_GATHER) {
                if ((rc = xport_recv(h->a.x, p + i * es, c * es, err)) == 0 && check)
                    rc = vec_check_finite(p + i * es, c, dtype, &bad);
            } else if ((rc = xport_recv(h->a.x, h->a.stage, c * es, err)) == 0) {
                rc = check ? vec_add_finite(p + i * es, h->a.stage, c, dtype, &bad)
                           : (vec_add(p + i * es, h->a.stage, c, dtype), 0);
            }
            if (rc == ERR_NONFINITE)
                err_say(err, "element %zu is %g after round %u from rank %d (%s %s)",
                        first + i + bad, vec_get(p, i + bad, dtype), tag, left, g->where,
                        ph == RING_ALL_GATHER ? "all-gather" : "reduce-scatter");
        }
        if (rc == 0)
            rc = xport_end(h->a.x, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int allreduce(struct hring *h, void *buf, size_t n, int dtype, int check, char *err)
{
    size_t es = dtype_size(dtype), lo, hi;
    unsigned char *v = buf;
    struct sub in, across;
    int round = 0, rc;

    if (es == 0)
        return ERR_USAGE;
    if (h->a.world == 1 || n == 0)
        return 0;
    subs(h->a.rank, h->a.world, h->group, &in, &across);
    ring_chunk(n, in.size, in.me, &lo, &hi);        /* chunk l: this rank's in phase 2 */
    rc = phase(h, &in, v, n, 0, dtype, RING_REDUCE_SCATTER, &round, check, err);
    if (rc == 0)
        rc = phase(h, &across, v + lo * es, hi - lo, lo, dtype, RING_REDUCE_SCATTER, &round,
                   check, err);
    if (rc == 0)
        rc = phase(h, &across, v + lo * es, hi - lo, lo, dtype, RING_ALL_GATHER, &round, check,
                   err);
    if (rc == 0)
        rc = phase(h, &in, v, n, 0, dtype, RING_ALL_GATHER, &round, check, err);
    return rc;
}

int hring_allreduce(struct hring *h, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(h, buf, n, dtype, 1, err);
}

int hring_allreduce_raw(struct hring *h, void *buf, size_t n, int dtype, char *err)
{
    return allreduce(h, buf, n, dtype, 0, err);
}
