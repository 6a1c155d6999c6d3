/* test_hring.c -- the hierarchical ring all-reduce (common/coll/hring.c)
 * over the partner transport (common/coll/xport_tcp.c), without the
 * launcher, and its cost in the model (common/measure/model.c).
 *
 * K ranks run as threads of this process (tests/coll_check.h's harness
 * on tests/fake_peer.h's rig), connected to their partners by
 * socketpairs (jobs_pair_plans) or by loopback listeners and the real
 * HELLO (xport_tcp_open). The groups: G ranks per host, every G that divides K.
 * Ids: hring-1.x the algorithm: partners, plans and steps; sums against
 * the closed form (small integers: exact in any order) and, on random
 * data, bit for bit against a replay of the algorithm's own summation
 * order and within the rounding bound of any order of that depth against
 * a long-double sum; bit-identical ranks for K = 1..9 with every G, odd n,
 * n < K, f32 and f64; tiny pieces; bytes moved; coll.c's gather, name and
 * refusals; a NaN named. hring-2.x the model's formula at points worked
 * by hand. The transport's fault cases are rd's (test_rd.c: the same
 * FLOOD plan kind).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXK 9

#include "check.h"
#include "coll/coll.h"
#include "coll/hring.h"
#include "coll/ring.h"
#include "fake_peer.h"
#include "coll_check.h"
#include "measure/model.h"

static int group = 1;           /* G of the jobs being run (and of replay) */

/* hring.c behind coll_check.h's interface, with G = group. */
static void plan(int rank, int world, struct xport_plan *pl)
{
    hring_plan(rank, world, group, pl);
}

static int hring_call(void *st, enum algo_call what, struct xport *x, struct rank_job *j)
{
    if (what == ALGO_INIT)
        return hring_init(st, x, j->rank, j->world, group, j->piece);
    if (what == ALGO_DESTROY)
        return hring_destroy(st), 0;
    return (what == ALGO_ALLREDUCE_RAW ? hring_allreduce_raw : hring_allreduce)(st, j->buf, j->n,
                                                                                j->dtype, j->err);
}

static void hring_coll(struct coll_cfg *cc)
{
    cc->algo = COLL_HRING;
    cc->group = group;
}

static const struct algo_test hring_test = { 0x4819, sizeof(struct hring), plan, hring_coll,
                                             hring_call };

/* hring_bytes (bytes_moved's want): 2 (G-1)/G n inside, 2 (H-1)/K n
 * across, a frame a step, on every rank alike. */
static uint64_t hring_bytes(int r, int k, size_t n, uint64_t *frames)
{
    uint64_t nb = 4 * (uint64_t)n;

    (void)r;
    *frames = (uint64_t)hring_steps(k, group);
    return 2 * (uint64_t)(group - 1) * (nb / (uint64_t)group) +
           2 * (uint64_t)(k / group - 1) * (nb / (uint64_t)k);
}

/* replay: element i summed the way hring.c does it (DETERMINISM): chunk c
 * of the G-cut, sub-chunk j of chunk c's H-cut; each host's sum over its
 * local ranks c+1, c+2, ..., c; then the hosts' sums over j+1, ..., j;
 * serially, in the dtype. */
static double replay(int k, size_t n, size_t i, int dtype, uint64_t round)
{
    int g = group, hosts = k / g, c = 0, j = 0;
    size_t lo, hi, slo, shi;
    double host_d[MAXK], d = 0;
    float host_s[MAXK], s = 0;

    for (c = 0; c < g; c++) {
        ring_chunk(n, g, c, &lo, &hi);
        if (i >= lo && i < hi)
            break;
    }
    for (j = 0; j < hosts; j++) {
        ring_chunk(hi - lo, hosts, j, &slo, &shi);
        if (i - lo >= slo && i - lo < shi)
            break;
    }
    for (int h = 0; h < hosts; h++)
        for (int t = 1; t <= g; t++) {
            int r = h * g + (c + t) % g;
            double v = job_value(FILL_RANDOM, r, i, round);
            host_d[h] = t == 1 ? v : host_d[h] + v;
            host_s[h] = t == 1 ? (float)v : host_s[h] + (float)v;
        }
    for (int t = 1; t <= hosts; t++) {
        int h = (j + t) % hosts;
        d = t == 1 ? host_d[h] : d + host_d[h];
        s = t == 1 ? host_s[h] : s + host_s[h];
    }
    return dtype == DTYPE_F32 ? (double)s : d;
}

int main(void)
{
    struct rank_job jobs[MAXK];
    char err[ERR_LEN];

    algo_use(&hring_test, 43600);

    T_CASE("hring-1.1", "partners: ring neighbours inside the host and across, distinct, symmetric; steps 2(G-1) + 2(K/G-1); G must divide K");
    for (int k = 1; k <= 64; k++)
        for (int g = 1; g <= k; g++) {
            if (k % g != 0) {
                T_EQ_I(hring_check(k, g, err), ERR_USAGE);
                T_EQ_I(hring_steps(k, g), 0);
                continue;
            }
            T_EQ_I(hring_check(k, g, err), 0);
            T_EQ_I(hring_steps(k, g), k == 1 ? 0 : 2 * (g - 1) + 2 * (k / g - 1));
            for (int r = 0; r < k; r++) {
                int part[HRING_PARTNERS_MAX], back[HRING_PARTNERS_MAX];
                int n = hring_partners(r, k, g, part), want = 0, h = k / g;
                want += g == 1 ? 0 : g == 2 ? 1 : 2;
                want += h == 1 ? 0 : h == 2 ? 1 : 2;
                T_EQ_I(n, k == 1 ? 0 : want);
                for (int i = 0; i < n; i++) {
                    int m = hring_partners(part[i], k, g, back);
                    T_TRUE(part[i] != r);
                    T_TRUE(index_of(back, m, r) >= 0);
                    T_TRUE(index_of(part, i, part[i]) < 0);
                    /* the same host, or the same local index */
                    T_TRUE(part[i] / g == r / g || part[i] % g == r % g);
                }
            }
        }
    T_EQ_I(hring_check(6, 4, err), ERR_USAGE);
    T_HAS(err, "--ranks-per-host 4: must divide K = 6");
    T_EQ_I(hring_check(4, 0, err), ERR_USAGE);
    {
        struct xport_plan pl;
        hring_plan(5, 8, 4, &pl);       /* host 1, local 1: 6, 4 inside; 1 across */
        T_EQ_I(pl.npeers, 3);
        T_EQ_I(pl.peer[0].rank, 6);
        T_EQ_I(pl.peer[1].rank, 4);
        T_EQ_I(pl.peer[2].rank, 1);
        T_EQ_I(pl.peer[2].dial, 1);
        T_EQ_I(pl.peer[0].dial, 0);
        T_EQ_I(pl.news, XPORT_NEWS_FLOOD);
    }

    T_CASE("hring-1.2", "all-reduce = closed-form sum, bit-identical: K 1..9, every G dividing K, n 1, K-1, K+1, 1001, f32/f64");
    for (int k = 1; k <= MAXK; k++)
        for (group = 1; group <= k; group++) {
            size_t ns[4] = { 1, (size_t)k - 1, (size_t)k + 1, 1001 };
            if (k % group != 0)
                continue;
            for (int d = 0; d < 2; d++)
                for (int a = 0; a < 4; a++)
                    run_sums(k, ns[a], dtypes[d], FILL_SMALL, 0, 1, replay);
        }

    T_CASE("hring-1.3", "random data, K 2..9, every G dividing K, odd n, f32/f64: bit-identical, == its own order bit for bit, within (G+H-1) u sum|v| of the exact sum");
    for (int k = 2; k <= MAXK; k++)
        for (group = 1; group <= k; group++) {
            if (k % group != 0)
                continue;
            for (int d = 0; d < 2; d++) {
                T_EQ_I(run_jobs(jobs, k, 20001, dtypes[d], FILL_RANDOM, 0, 1, OP_ALLREDUCE,
                                NULL, NULL), 0);
                T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, replay), 0);
                /* a chain of G-1 + H-1 additions */
                T_EQ_U(rounding_wrong(jobs, k, 0, group + k / group - 1, 1), 0);
                free_jobs(jobs, k);
            }
        }

    T_CASE("hring-1.4", "tiny staging pieces (1 and 3 elements), three all-reduces in a row: same sums, K 6 (G 2, 3) and 8 (G 2, 4)");
    {
        static const struct { int k, g; size_t piece; } cs[] = {
            { 6, 2, 8 }, { 6, 3, 24 }, { 8, 2, 24 }, { 8, 4, 8 },
        };
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
            group = cs[c].g;
            run_sums(cs[c].k, 203, DTYPE_F64, FILL_RANDOM, cs[c].piece, 3, replay);
        }
    }

    T_CASE("hring-1.5", "bytes moved per rank: 2 (G-1)/G n inside, 2 (H-1)/K n across, one header per frame; == the model's bytes_in (the ring's)");
    for (int k = 2; k <= 8; k++)
        for (group = 1; group <= k; group++) {
            size_t n = 8 * 9 * 5 * 7;       /* a multiple of every K: equal chunks */
            if (k % group != 0)
                continue;
            T_NEAR((double)bytes_moved(k, n, hring_bytes),
                   model_query(MODEL_HRING, MODEL_BYTES_IN, k, group, 4.0 * n, 1e9, 0), 1e-6);
        }

    T_CASE("hring-1.6", "loopback listeners and HELLO (xport_tcp_open), K = 6 (G 3) and 8 (G 2)");
    group = 3;
    over_listeners(6, run_jobs, FILL_RANDOM, replay);
    group = 2;
    over_listeners(8, run_jobs, FILL_RANDOM, replay);

    T_CASE("hring-1.7", "K = 1 and n = 0: no transport, nothing moves; a G that does not divide K refused at init");
    {
        struct hring h1;
        double v[3] = { 1.5, -2, 3 };
        T_EQ_I(hring_init(&h1, NULL, 0, 1, 1, 0), 0);
        T_EQ_I(hring_allreduce(&h1, v, 3, DTYPE_F64, err), 0);
        T_EQ_D(v[0], 1.5);
        T_EQ_I(hring_allreduce(&h1, v, 3, 99, err), ERR_USAGE);
        hring_destroy(&h1);
        T_EQ_I(hring_init(&h1, NULL, 0, 2, 1, 0), ERR_USAGE);
        T_EQ_I(hring_init(&h1, NULL, 0, 1, 2, 0), ERR_USAGE);
        group = 2;
        nothing_moves(6);
    }

    T_CASE("hring-1.8", "coll with --algo hring: gathers every rank's values exactly, then all-reduces; named hring:G; refused on the device kinds, with --compress and with a G that does not divide K");
    {
        static const int kg[][2] = { { 6, 2 }, { 9, 3 } };
        for (int c = 0; c < 2; c++) {
            group = kg[c][1];
            gather_sums(kg[c][0], replay);
        }
    }
    {
        struct coll co;
        struct coll_cfg cc = { .kind = COLL_TCP, .algo = COLL_HRING, .rank = 0, .world = 1,
                               .dtype = DTYPE_F32, .max_n = 4, .timeout = 1.0, .group = 1 };
        coll_named(COLL_HRING, 1, "--algo hring", "hring:1");
        cc.compress = COMPRESS_FP16;
        T_EQ_I(coll_init(&co, &cc, err), ERR_USAGE);
        T_HAS(err, "not hring");
        cc.compress = COMPRESS_NONE;
        cc.group = 2;
        T_EQ_I(coll_init(&co, &cc, err), ERR_USAGE);
        T_HAS(err, "--ranks-per-host 2");
        cc.group = 1;
        T_EQ_I(coll_init(&co, &cc, err), 0);
        T_EQ_I(coll_reduce_scatter(&co, (float[4]){ 0 }, 4, err), ERR_USAGE);
        coll_destroy(&co);
        T_EQ_I(coll_algo_parse("hring"), COLL_HRING);
        T_EQ_I(coll_algo_parse("hring:2"), -1);
    }

    T_CASE("hring-1.9", "a NaN or Inf (a member with the secret): the rank that adds it fails ERR_NONFINITE naming the element, round, rank and phase; every other rank fails too, none hangs");
    {
        static const struct poison_case cases[] = {     /* K, G, rank, raw, at rank */
            /* K = 4, G = 2: element 7 is in chunk 0; rank 1 sends chunk 0 to rank 0 at round 0 */
            { 4, 2, 1, 0, 0, 7, NAN, "element 7 is nan after round 0 from rank 1 (host-local reduce-scatter)" },
            /* K = 4, G = 1 (the ring across): rank 3 sends chunk 2 (elements 501..750 of 1001) to rank 0 at round 0 */
            { 4, 1, 3, 0, 0, 600, INFINITY, "element 600 is inf after round 0 from rank 3 (cross-host reduce-scatter)" },
        };
        poisoned_cases(cases, sizeof cases / sizeof cases[0], &group);
    }

    T_CASE("hring-2.1", "model: 2(G-1)(a + n/G b) + 2(K/G-1)(a + n/K b), by hand; links inside a host of their own");
    /* K = 8, G = 4, n = 1e6 B, 1e9 B/s, a = 1 ms: 6 (1 ms + 0.25 ms) + 2 (1 ms + 0.125 ms) */
    T_NEAR(model_hring(8, 4, 1e6, 1e9, 1e-3), 7.5e-3 + 2.25e-3, 1e-15);
    /* the ring's bytes: 1.75 n b, in 8 latencies instead of 14 */
    T_NEAR(model_hring(8, 4, 1e6, 1e9, 0), model_ring(8, 1e6, 1e9, 0), 1e-15);
    T_NEAR(model_hring(8, 1, 1e6, 1e9, 1e-3), model_ring(8, 1e6, 1e9, 1e-3), 1e-15);
    T_NEAR(model_hring(8, 8, 1e6, 1e9, 1e-3), model_ring(8, 1e6, 1e9, 1e-3), 1e-15);
    T_NEAR(model_hring(1, 1, 1e6, 1e9, 1e-3), 0, 1e-15);
    /* inside a host 10x faster and no latency: only the cross-host part's a */
    T_NEAR(model_hring_links(8, 4, 1e6, 1e9, 1e-3, 1e10, 0), 6 * 0.025e-3 + 2.25e-3, 1e-15);
    T_EQ_D(model_query(MODEL_HRING, MODEL_STEPS, 16, 4, 1e6, 1e9, 0), 12);
    T_EQ_D(model_query(MODEL_HRING, MODEL_STEPS, 16, 1, 1e6, 1e9, 0), 30);
    T_NEAR(model_query(MODEL_HRING, MODEL_TIME, 8, 4, 1e6, 1e9, 1e-3),
           model_hring(8, 4, 1e6, 1e9, 1e-3), 1e-15);
    T_TRUE(isnan(model_query(MODEL_HRING, MODEL_TIME, 6, 4, 1e6, 1e9, 1e-3)));
    T_TRUE(isnan(model_query(MODEL_HRING, MODEL_INGRESS, 4, 2, 1e6, 1e9, 0)));
    for (int k = 1; k <= 64; k++)       /* steps agree with the algorithm's own count */
        for (int g = 1; g <= k; g++)
            if (k % g == 0)
                T_EQ_D(model_query(MODEL_HRING, MODEL_STEPS, k, g, 1, 1, 0), hring_steps(k, g));

    return t_done();
}
