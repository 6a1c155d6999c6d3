/* test_rabenseifner.c -- Rabenseifner's all-reduce (common/coll/
 * rabenseifner.c) over the partner transport (common/coll/xport_tcp.c),
 * without the launcher, and its cost in the model (common/measure/model.c).
 *
 * K ranks run as threads of this process (tests/coll_check.h's harness
 * on tests/fake_peer.h's rig), each with its own link (counters) and
 * transport, connected to their partners by socketpairs (xport_tcp_attach) or by loopback
 * listeners and the real HELLO exchange (xport_tcp_open). Ids:
 * rabenseifner-1.x the algorithm: partners and steps; sums against the
 * closed form (small integers: exact in any order) and, on random data,
 * bit for bit against the algorithm's own summation tree and within the
 * rounding bound of any order against a long-double sum; bit-identical
 * ranks for K = 1..9 (powers of two and not), odd n, n < K, f32 and f64;
 * tiny pieces; bytes moved; coll.c's gather and refusals.
 * rabenseifner-2.x the model's formula at points worked by hand. The
 * transport's fault cases are rd's (test_rd.c: the same FLOOD plan kind).
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

#define MAXK 9                  /* K = 1..9: 9 is 8 + one fold */

#include "check.h"
#include "coll/coll.h"
#include "coll/rabenseifner.h"
#include "fake_peer.h"
#include "coll_check.h"
#include "measure/model.h"

/* rabenseifner.c behind coll_check.h's interface. */
static int rab_call(void *st, enum algo_call what, struct xport *x, struct rank_job *j)
{
    if (what == ALGO_INIT)
        return rab_init(st, x, j->rank, j->world, j->piece);
    if (what == ALGO_DESTROY)
        return rab_destroy(st), 0;
    return (what == ALGO_ALLREDUCE_RAW ? rab_allreduce_raw : rab_allreduce)(st, j->buf, j->n,
                                                                            j->dtype, j->err);
}

static void rab_coll(struct coll_cfg *cc)
{
    cc->algo = COLL_RABENSEIFNER;
}

static const struct algo_test rab_test = { 0x7ab, sizeof(struct rab), rab_plan, rab_coll,
                                           rab_call };

/* rab_bytes (bytes_moved's want): 2 (P-1)/P n each way in the cube, in
 * 2 log2 P frames; the fold's n once more (in, then out); an odd rank of
 * a pair: its vector out, the result in. */
static uint64_t rab_bytes(int r, int k, size_t n, uint64_t *frames)
{
    int l, extra, p = fold_of(k, &l, &extra), fold = r < 2 * extra;
    uint64_t nb = 4 * (uint64_t)n;

    if (fold && r % 2) {
        *frames = 2;
        return nb;
    }
    *frames = 2 * (uint64_t)l + (fold ? 2 : 0);
    return 2 * (uint64_t)(p - 1) * (nb / (uint64_t)p) + (fold ? nb : 0);
}

/* tree_sum: element i summed the way rabenseifner.c does it (FOLD: v_2i +
 * v_2i+1 for the first r pairs; then in the cube's numbering, at distance
 * d = P/2 .. 1, the partial with bit d clear + its partner's), serially,
 * in the dtype. */
static double tree_sum(int k, size_t n, size_t i, int dtype, uint64_t round)
{
    double d[MAXK], w[MAXK];
    float s[MAXK], ws[MAXK];
    int p = 1, extra;

    (void)n;
    while (p * 2 <= k)
        p *= 2;
    extra = k - p;
    for (int r = 0; r < k; r++) {
        d[r] = job_value(FILL_RANDOM, r, i, round);
        s[r] = (float)d[r];
    }
    for (int c = 0; c < p; c++) {       /* the cube's numbering, folded */
        int r = c < extra ? 2 * c : c + extra;
        w[c] = c < extra ? d[r] + d[r + 1] : d[r];
        ws[c] = c < extra ? s[r] + s[r + 1] : s[r];
    }
    for (int bit = p / 2; bit >= 1; bit /= 2) {
        double nw[MAXK];
        float nws[MAXK];
        for (int c = 0; c < p; c++) {
            nw[c] = w[c & ~bit] + w[c | bit];
            nws[c] = ws[c & ~bit] + ws[c | bit];
        }
        memcpy(w, nw, sizeof nw);
        memcpy(ws, nws, sizeof nws);
    }
    return dtype == DTYPE_F32 ? (double)ws[0] : w[0];
}

int main(void)
{
    struct rank_job jobs[MAXK];
    char err[ERR_LEN];

    algo_use(&rab_test, 43000);

    T_CASE("rabenseifner-1.1", "partners: the fold's pairs, the cube at distance P/2..1, symmetric; steps 2 log2 K (+2)");
    for (int k = 1; k <= 64; k++) {
        int l, extra, p = fold_of(k, &l, &extra);
        T_EQ_I(rab_steps(k), p == k ? 2 * l : 2 * l + 2);
        for (int r = 0; r < k; r++) {
            int part[RAB_PARTNERS_MAX], back[RAB_PARTNERS_MAX];
            int n = rab_partners(r, k, part);
            int odd = r < 2 * extra && r % 2, even = r < 2 * extra && r % 2 == 0;
            T_EQ_I(n, k == 1 ? 0 : odd ? 1 : l + even);
            if (odd) {
                T_EQ_I(part[0], r - 1);
                continue;
            }
            if (even)
                T_EQ_I(part[0], r + 1);
            for (int i = 0; i < n; i++) {
                int m = rab_partners(part[i], k, back);
                T_TRUE(index_of(back, m, r) >= 0);
                T_TRUE(part[i] != r);
                if (i >= even)              /* a cube partner: never an odd rank of a pair */
                    T_TRUE(!(part[i] < 2 * extra && part[i] % 2));
            }
        }
    }
    {
        struct xport_plan pl;
        rab_plan(5, 6, &pl);            /* K = 6: rank 5 is cube 3, partners cube 1 (2), 2 (4) */
        T_EQ_I(pl.npeers, 2);
        T_EQ_I(pl.peer[0].rank, 2);
        T_EQ_I(pl.peer[1].rank, 4);
        T_EQ_I(pl.peer[0].dial, 1);
        T_EQ_I(pl.news, XPORT_NEWS_FLOOD);
    }

    T_CASE("rabenseifner-1.2", "all-reduce = closed-form sum, bit-identical: K 1..9, n 1, K-1, K+1, 1001, 65539, f32/f64");
    for (int k = 1; k <= MAXK; k++) {
        size_t ns[5] = { 1, (size_t)k - 1, (size_t)k + 1, 1001, 65539 };
        for (int d = 0; d < 2; d++)
            for (int a = 0; a < 5; a++)
                run_sums(k, ns[a], dtypes[d], FILL_SMALL, 0, 1, tree_sum);
    }

    T_CASE("rabenseifner-1.3", "random data, K 2..9, odd n, f32/f64: bit-identical, == its own tree bit for bit, within (h+1) u sum|v| of the exact sum");
    for (int k = 2; k <= MAXK; k++)
        for (int d = 0; d < 2; d++) {
            T_EQ_I(run_jobs(jobs, k, 30001, dtypes[d], FILL_RANDOM, 0, 1, OP_ALLREDUCE, NULL,
                            NULL), 0);
            T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, tree_sum), 0);
            /* the tree's depth, with the fold: ceil(log2 K) */
            T_EQ_U(rounding_wrong(jobs, k, 0, ceil_log2(k) + 1, 1), 0);
            free_jobs(jobs, k);
        }

    T_CASE("rabenseifner-1.4", "tiny staging pieces (1 and 3 elements), in place: same sums");
    {
        static const size_t pieces[] = { 8, 24 };
        for (int p = 0; p < 2; p++)
            for (int k = 2; k <= MAXK; k += 3)
                run_sums(k, 203, DTYPE_F64, FILL_RANDOM, pieces[p], 1, tree_sum);
    }

    T_CASE("rabenseifner-1.5", "three all-reduces in a row (step numbers advance), K 6 and 8");
    for (int k = 6; k <= 8; k += 2)
        run_sums(k, 100001, DTYPE_F32, FILL_RANDOM, 4096, 3, tree_sum);

    T_CASE("rabenseifner-1.6", "bytes moved per rank: 2 (P-1)/P n each way in the cube, the fold's n once, one header per frame; the busiest == the model's bytes_in");
    for (int k = 2; k <= MAXK; k++) {
        size_t n = 8 * 509;                 /* a multiple of P: equal blocks */
        T_NEAR((double)bytes_moved(k, n, rab_bytes),
               model_query(MODEL_RABENSEIFNER, MODEL_BYTES_IN, k, 1, 4.0 * n, 1e9, 0), 1e-6);
    }

    T_CASE("rabenseifner-1.7", "loopback listeners and HELLO (xport_tcp_open), K = 5 and 8");
    over_listeners(5, run_jobs, FILL_RANDOM, tree_sum);
    over_listeners(8, run_jobs, FILL_RANDOM, tree_sum);

    T_CASE("rabenseifner-1.8", "K = 1 and n = 0: no transport, nothing moves");
    {
        struct rab r1;
        double v[3] = { 1.5, -2, 3 };
        T_EQ_I(rab_init(&r1, NULL, 0, 1, 0), 0);
        T_EQ_I(rab_allreduce(&r1, v, 3, DTYPE_F64, err), 0);
        T_EQ_D(v[0], 1.5);
        T_EQ_D(v[2], 3);
        T_EQ_I(rab_allreduce(&r1, v, 3, 99, err), ERR_USAGE);
        rab_destroy(&r1);
        T_EQ_I(rab_init(&r1, NULL, 0, 2, 0), ERR_USAGE);
        nothing_moves(6);
    }

    T_CASE("rabenseifner-1.9", "coll with --algo rabenseifner: gathers every rank's values exactly, then all-reduces; refused on the device kinds; named and parsed");
    for (int k = 3; k <= MAXK; k += 3)
        gather_sums(k, tree_sum);
    coll_named(COLL_RABENSEIFNER, 0, "--algo rabenseifner", "rabenseifner");
    T_EQ_I(coll_algo_parse("rabenseifner"), COLL_RABENSEIFNER);
    T_EQ_I(coll_algo_parse("Rabenseifner"), -1);

    T_CASE("rabenseifner-1.10", "a NaN or Inf (a member with the secret): the rank that adds it, or copies it in, fails ERR_NONFINITE naming the element, round and partner; every other honest rank fails too, none hangs");
    {
        static const struct poison_case cases[] = {     /* K, -, rank, raw, at rank */
            /* K = 5: rank 3 (cube 2) sends blocks 0-1 to rank 0 in round 1 */
            { 5, 0, 3, 0, 0, 7, NAN, "element 7 is nan after round 1 from partner rank 3" },
            /* K = 5: odd rank 1 folds into rank 0 in round 0 */
            { 5, 0, 1, 0, 0, 7, INFINITY, "element 7 is inf after round 0 from partner rank 1" },
            /* K = 4, rank 3 unchecked: its block 3 goes out in the doubling's
             * round 3 to rank 2, which copies it in and checks */
            { 4, 0, 3, 1, 2, 800, NAN, "element 800 is nan after round 3 from partner rank 3" },
        };
        poisoned_cases(cases, sizeof cases / sizeof cases[0], NULL);
    }

    T_CASE("rabenseifner-1.11", "ranks that disagree on the piece (coll_piece_rule's 128K, "
           "1M, 8 B, 4K): sums bit-identical to one piece, the same bytes on every link");
    for (int k = 5; k <= MAXK; k += 3) {
        static const size_t mix[4] = { 128u << 10, 1u << 20, 8, 4096 };
        size_t n = 200003;      /* f32: the fold's whole vector 800 KB, blocks 100-200 KB */
        uint64_t out[MAXK], in[MAXK];
        unsigned char *ref[MAXK] = { NULL };
        struct xport_plan pl[MAXK];
        T_EQ_I(run_jobs(jobs, k, n, DTYPE_F32, FILL_RANDOM, 0, 1, OP_ALLREDUCE, NULL, NULL), 0);
        T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, tree_sum), 0);
        for (int r = 0; r < k; r++) {
            out[r] = jobs[r].link.bytes_out;
            in[r] = jobs[r].link.bytes_in;
            ref[r] = jobs[r].buf;
            jobs[r].buf = NULL;
        }
        T_EQ_I(jobs_init(jobs, k, n, DTYPE_F32, OP_ALLREDUCE, FILL_RANDOM, 0, 1, NULL, NULL,
                         job_fill), 0);
        for (int r = 0; r < k; r++) {
            jobs[r].piece = mix[r % 4];
            rab_plan(r, k, &pl[r]);
        }
        T_EQ_I(jobs_pair_plans(jobs, k, pl), 0);
        threads_run(job_main, jobs, sizeof jobs[0], k);
        T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, tree_sum), 0);
        for (int r = 0; r < k; r++) {
            t_row("K %d rank %d piece %zu", k, r, jobs[r].piece);
            T_TRUE(ref[r] && jobs[r].buf && memcmp(jobs[r].buf, ref[r], n * 4) == 0);
            T_EQ_U(jobs[r].link.bytes_out, out[r]);
            T_EQ_U(jobs[r].link.bytes_in, in[r]);
            free(ref[r]);
        }
        t_row("%s", "");
        free_jobs(jobs, k);
    }

    T_CASE("rabenseifner-2.1", "model: 2 log2 K a + 2(K-1)/K n b for a power of two, (2 log2 P + 2) a + (2(P-1)/P + 2) n b otherwise, by hand");
    /* K = 8, n = 1e6 B, 1e9 B/s, a = 1 ms: 6 ms + 1.75 ms */
    T_NEAR(model_rabenseifner(8, 1e6, 1e9, 1e-3), 7.75e-3, 1e-15);
    /* K = 2: one half each way twice: 2 a + n b */
    T_NEAR(model_rabenseifner(2, 1e6, 1e9, 1e-3), 3e-3, 1e-15);
    /* K = 6 (P = 4, the fold): 6 a + (1.5 + 2) n b = 6 ms + 3.5 ms */
    T_NEAR(model_rabenseifner(6, 1e6, 1e9, 1e-3), 9.5e-3, 1e-15);
    /* K = 3 (P = 2): 4 a + 3 n b */
    T_NEAR(model_rabenseifner(3, 1e6, 1e9, 0), 3e-3, 1e-15);
    T_NEAR(model_rabenseifner(1, 1e6, 1e9, 1e-3), 0, 1e-15);
    T_EQ_D(model_query(MODEL_RABENSEIFNER, MODEL_STEPS, 9, 1, 1e6, 1e9, 0), 8);
    T_EQ_D(model_query(MODEL_RABENSEIFNER, MODEL_STEPS, 16, 1, 1e6, 1e9, 0), 8);
    T_NEAR(model_query(MODEL_RABENSEIFNER, MODEL_BYTES_IN, 6, 1, 1e6, 1e9, 0), 2.5e6, 1e-6);
    T_NEAR(model_query(MODEL_RABENSEIFNER, MODEL_BYTES_OUT, 4, 1, 1e6, 1e9, 0), 1.5e6, 1e-6);
    T_TRUE(isnan(model_query(MODEL_RABENSEIFNER, MODEL_INGRESS, 4, 1, 1e6, 1e9, 0)));
    for (int k = 1; k <= 64; k++)       /* steps agree with the algorithm's own count */
        T_EQ_D(model_query(MODEL_RABENSEIFNER, MODEL_STEPS, k, 1, 1, 1, 0), rab_steps(k));

    return t_done();
}
