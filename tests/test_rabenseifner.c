/* test_rabenseifner.c -- Rabenseifner's all-reduce (common/coll/
 * rabenseifner.c) over the partner transport (common/coll/xport_tcp.c),
 * without the launcher, and its cost in the model (common/measure/model.c).
 *
 * K ranks run as threads of this process (tests/fake_peer.h's rig, as
 * test_rd.c), each with its own link (counters) and transport, connected
 * to their partners by socketpairs (xport_tcp_attach) or by loopback
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
#include "measure/model.h"

enum op { OP_ALLREDUCE, OP_GATHER };

/* A poisoned job (rabenseifner-1.10): rank poison_rank's element poison_at
 * is poison_val; with poison_raw that rank all-reduces without the check
 * (rab_allreduce_raw: a member that sends on what it should have refused). */
static int poison_rank = -1, poison_raw;
static size_t poison_at;
static double poison_val;

static double value(enum fill f, int r, size_t i, uint64_t round)
{
    return f == FILL_RANDOM ? random_value(r, i, round ^ 0x7ab) : small_value(r, i);
}

static void fill(struct rank_job *j, uint64_t round)
{
    for (size_t i = 0; i < j->n; i++)
        vec_set(j->buf, i, j->dtype, value(j->fill, j->rank, i, round));
    if (j->rank == poison_rank && poison_at < j->n)
        vec_set(j->buf, poison_at, j->dtype, poison_val);
}

static void *rank_main(void *arg)
{
    struct rank_job *j = arg;
    struct xport_plan plan;
    struct xport *x = NULL;
    int rc;

    rab_plan(j->rank, j->world, &plan);
    rc = job_connect(&x, &plan, j->rank, j->world, j->n, j->dtype, j->lfd, j->peers, j->fds,
                     &j->link, 10.0, j->err);
    if (rc == 0 && j->op == OP_GATHER) {
        struct coll co;
        struct coll_cfg cc = { .kind = COLL_TCP, .algo = COLL_RABENSEIFNER, .rank = j->rank,
                               .world = j->world, .dtype = j->dtype, .max_n = j->n,
                               .timeout = 10.0, .x = x };
        double mine[2] = { j->rank * 10.0 + 0.5, -(double)j->rank };
        rc = coll_init(&co, &cc, j->err);
        if (rc == 0) {
            rc = coll_gather(&co, j->gathered, mine, 2, j->err);
            if (rc == 0)
                rc = coll_allreduce(&co, j->buf, j->n, j->err);
            coll_destroy(&co);
        }
    } else if (rc == 0) {
        struct rab rab;
        rc = rab_init(&rab, x, j->rank, j->world, j->piece);
        for (int k = 0; rc == 0 && k < j->rounds; k++) {
            if (k > 0)
                fill(j, (uint64_t)k);
            rc = j->rank == poison_rank && poison_raw
                ? rab_allreduce_raw(&rab, j->buf, j->n, j->dtype, j->err)
                : rab_allreduce(&rab, j->buf, j->n, j->dtype, j->err);
        }
        rab_destroy(&rab);
    }
    if (rc != 0)
        xport_abort(x, j->err);     /* as ring_worker does: the partners are told */
    xport_close(x);
    j->rc = rc;
    return NULL;
}

static int index_of(const int *list, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (list[i] == x)
            return i;
    return -1;
}

/* run_rab: K threads, partners connected by socketpairs (or, with lfds,
 * by xport_tcp_open on loopback); jobs[] filled in. */
static int run_rab(struct rank_job *jobs, int k, size_t n, int dtype, enum fill f, size_t piece,
                   int rounds, int op, const int *lfds, const struct proto_peer *peers)
{
    struct xport_plan pl[MAXK];

    memset(pl, 0, sizeof pl);       /* gcc -O2 saw it maybe unset (k <= 0) */
    if (jobs_init(jobs, k, n, dtype, op, f, piece, rounds, lfds, peers, fill) != 0)
        return -ENOMEM;
    for (int r = 0; r < k; r++)
        rab_plan(r, k, &pl[r]);
    if (!lfds && jobs_pair_plans(jobs, k, pl) != 0)
        return -1;
    threads_run(rank_main, jobs, sizeof jobs[0], k);
    return 0;
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
        d[r] = value(FILL_RANDOM, r, i, round);
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

/* rounding: the elements of rank 0's result farther from the long-double
 * sum of the (dtype-rounded) inputs than a sum of depth h may be:
 * h u sum |v| (u: the dtype's unit roundoff), plus the result's own
 * rounding. */
static size_t rounding(struct rank_job *jobs, int k, uint64_t round)
{
    int dt = jobs[0].dtype, h = 0;
    double u = dt == DTYPE_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
    size_t bad = 0;

    while ((1 << h) < k)
        h++;                            /* ceil(log2 K): the tree's depth, with the fold */
    for (size_t i = 0; i < jobs[0].n; i++) {
        long double exact = 0, mag = 0;
        for (int r = 0; r < k; r++) {
            double v = value(FILL_RANDOM, r, i, round);
            if (dt == DTYPE_F32)
                v = (float)v;
            exact += v;
            mag += fabsl((long double)v);
        }
        double got = vec_get(jobs[0].buf, i, dt);
        if (fabsl((long double)got - exact) > (h + 1) * u * mag)
            bad++;
    }
    return bad;
}

int main(void)
{
    static const int dtypes[2] = { DTYPE_F32, DTYPE_F64 };
    struct rank_job jobs[MAXK];
    char err[ERR_LEN];

    peers_init(43000);

    T_CASE("rabenseifner-1.1", "partners: the fold's pairs, the cube at distance P/2..1, symmetric; steps 2 log2 K (+2)");
    for (int k = 1; k <= 64; k++) {
        int p = 1, l = 0, extra;
        while (p * 2 <= k) {
            p *= 2;
            l++;
        }
        extra = k - p;
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
            for (int a = 0; a < 5; a++) {
                T_EQ_I(run_rab(jobs, k, ns[a], dtypes[d], FILL_SMALL, 0, 1, OP_ALLREDUCE, NULL,
                               NULL), 0);
                T_EQ_U(check_allreduce(jobs, k, FILL_SMALL, 0, tree_sum), 0);
                free_jobs(jobs, k);
            }
    }

    T_CASE("rabenseifner-1.3", "random data, K 2..9, odd n, f32/f64: bit-identical, == its own tree bit for bit, within (h+1) u sum|v| of the exact sum");
    for (int k = 2; k <= MAXK; k++)
        for (int d = 0; d < 2; d++) {
            T_EQ_I(run_rab(jobs, k, 30001, dtypes[d], FILL_RANDOM, 0, 1, OP_ALLREDUCE, NULL,
                           NULL), 0);
            T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, tree_sum), 0);
            T_EQ_U(rounding(jobs, k, 0), 0);
            free_jobs(jobs, k);
        }

    T_CASE("rabenseifner-1.4", "tiny staging pieces (1 and 3 elements), in place: same sums");
    {
        static const size_t pieces[] = { 8, 24 };
        for (int p = 0; p < 2; p++)
            for (int k = 2; k <= MAXK; k += 3) {
                T_EQ_I(run_rab(jobs, k, 203, DTYPE_F64, FILL_RANDOM, pieces[p], 1,
                               OP_ALLREDUCE, NULL, NULL), 0);
                T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, tree_sum), 0);
                free_jobs(jobs, k);
            }
    }

    T_CASE("rabenseifner-1.5", "three all-reduces in a row (step numbers advance), K 6 and 8");
    for (int k = 6; k <= 8; k += 2) {
        T_EQ_I(run_rab(jobs, k, 100001, DTYPE_F32, FILL_RANDOM, 4096, 3, OP_ALLREDUCE, NULL,
                       NULL), 0);
        T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 2, tree_sum), 0);
        free_jobs(jobs, k);
    }

    T_CASE("rabenseifner-1.6", "bytes moved per rank: 2 (P-1)/P n each way in the cube, the fold's n once, one header per frame; the busiest == the model's bytes_in");
    for (int k = 2; k <= MAXK; k++) {
        size_t n = 8 * 509, nb = 4 * n;     /* n a multiple of P: equal blocks */
        int p = 1, l = 0, extra;
        uint64_t h = PROTO_HEADER_SIZE, most = 0;
        while (p * 2 <= k) {
            p *= 2;
            l++;
        }
        extra = k - p;
        T_EQ_I(run_rab(jobs, k, n, DTYPE_F32, FILL_SMALL, 0, 1, OP_ALLREDUCE, NULL, NULL), 0);
        for (int r = 0; r < k; r++) {
            uint64_t out, in, frames;
            if (r < 2 * extra && r % 2) {       /* odd: its vector out, the result in */
                out = in = nb;
                frames = 2;
            } else {
                out = in = 2 * (uint64_t)(p - 1) * (nb / p);
                frames = 2 * (uint64_t)l;
                if (r < 2 * extra) {            /* fold in (receive), fold out (send) */
                    out += nb;
                    in += nb;
                    frames += 2;
                }
            }
            T_EQ_U(jobs[r].link.bytes_out, out + frames * h);
            T_EQ_U(jobs[r].link.bytes_in, in + frames * h);
            most = in > most ? in : most;
        }
        T_NEAR((double)most, model_query(MODEL_RABENSEIFNER, MODEL_BYTES_IN, k, 1, (double)nb,
                                         1e9, 0), 1e-6);
        free_jobs(jobs, k);
    }

    T_CASE("rabenseifner-1.7", "loopback listeners and HELLO (xport_tcp_open), K = 5 and 8");
    over_listeners(5, run_rab, FILL_RANDOM, tree_sum);
    over_listeners(8, run_rab, FILL_RANDOM, tree_sum);

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
        T_EQ_I(run_rab(jobs, 6, 0, DTYPE_F32, FILL_SMALL, 0, 2, OP_ALLREDUCE, NULL, NULL), 0);
        for (int r = 0; r < 6; r++) {
            T_EQ_I(jobs[r].rc, 0);
            T_EQ_U(jobs[r].link.bytes_out, 0);
        }
        free_jobs(jobs, 6);
    }

    T_CASE("rabenseifner-1.9", "coll with --algo rabenseifner: gathers every rank's values exactly, then all-reduces; refused on the device kinds; named and parsed");
    for (int k = 3; k <= MAXK; k += 3) {
        size_t wrong = 0;
        T_EQ_I(run_rab(jobs, k, 777, DTYPE_F32, FILL_SMALL, 0, 1, OP_GATHER, NULL, NULL), 0);
        T_EQ_U(check_allreduce(jobs, k, FILL_SMALL, 0, tree_sum), 0);
        for (int r = 0; r < k; r++)
            for (int q = 0; q < k; q++)
                wrong += jobs[r].gathered[2 * q] != q * 10.0 + 0.5 ||
                         jobs[r].gathered[2 * q + 1] != -(double)q;
        T_EQ_U(wrong, 0);
        free_jobs(jobs, k);
    }
    {
        struct coll co;
        struct coll_cfg cc = { .kind = COLL_TCP_CUDA, .algo = COLL_RABENSEIFNER, .rank = 0,
                               .world = 1, .dtype = DTYPE_F32, .max_n = 4, .timeout = 1.0 };
        T_EQ_I(coll_init(&co, &cc, err), ERR_USAGE);
        T_HAS(err, "--algo rabenseifner");
        cc.kind = COLL_TCP;
        T_EQ_I(coll_init(&co, &cc, err), 0);
        T_STR(coll_algo_name(&co), "rabenseifner");
        T_STR(coll_op_algo(&co, COLL_ALL_REDUCE), "rabenseifner");
        coll_destroy(&co);
        T_EQ_I(coll_algo_parse("rabenseifner"), COLL_RABENSEIFNER);
        T_EQ_I(coll_algo_parse("Rabenseifner"), -1);
    }

    T_CASE("rabenseifner-1.10", "a NaN or Inf (a member with the secret): the rank that adds it, or copies it in, fails ERR_NONFINITE naming the element, round and partner; every other honest rank fails too, none hangs");
    {
        static const struct {
            int k, rank, raw, at_rank;
            size_t at;
            double val;
            const char *says;
        } cases[] = {
            /* K = 5: rank 3 (cube 2) sends blocks 0-1 to rank 0 in round 1 */
            { 5, 3, 0, 0, 7, NAN, "element 7 is nan after round 1 from partner rank 3" },
            /* K = 5: odd rank 1 folds into rank 0 in round 0 */
            { 5, 1, 0, 0, 7, INFINITY, "element 7 is inf after round 0 from partner rank 1" },
            /* K = 4, rank 3 unchecked: its block 3 goes out in the doubling's
             * round 3 to rank 2, which copies it in and checks */
            { 4, 3, 1, 2, 800, NAN, "element 800 is nan after round 3 from partner rank 3" },
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            poison_rank = cases[c].rank;
            poison_raw = cases[c].raw;
            poison_at = cases[c].at;
            poison_val = cases[c].val;
            T_EQ_I(run_rab(jobs, cases[c].k, 1001, DTYPE_F64, FILL_SMALL, 0, 1, OP_ALLREDUCE,
                           NULL, NULL), 0);
            T_EQ_I(jobs[cases[c].at_rank].rc, ERR_NONFINITE);
            T_HAS(jobs[cases[c].at_rank].err, cases[c].says);
            for (int q = 0; q < cases[c].k; q++)    /* the unchecked one may finish */
                if (!(cases[c].raw && q == cases[c].rank) && jobs[q].rc == 0) {
                    printf("     case %zu: rank %d ended with rc 0\n", c, q);
                    T_TRUE(jobs[q].rc != 0);
                }
            free_jobs(jobs, cases[c].k);
        }
        poison_rank = -1;
    }

    T_CASE("rabenseifner-1.11", "ranks that disagree on the piece (coll_piece_rule's 128K, "
           "1M, 8 B, 4K): sums bit-identical to one piece, the same bytes on every link");
    for (int k = 5; k <= MAXK; k += 3) {
        static const size_t mix[4] = { 128u << 10, 1u << 20, 8, 4096 };
        size_t n = 200003;      /* f32: the fold's whole vector 800 KB, blocks 100-200 KB */
        uint64_t out[MAXK], in[MAXK];
        unsigned char *ref[MAXK] = { NULL };
        struct xport_plan pl[MAXK];
        T_EQ_I(run_rab(jobs, k, n, DTYPE_F32, FILL_RANDOM, 0, 1, OP_ALLREDUCE, NULL, NULL), 0);
        T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, tree_sum), 0);
        for (int r = 0; r < k; r++) {
            out[r] = jobs[r].link.bytes_out;
            in[r] = jobs[r].link.bytes_in;
            ref[r] = jobs[r].buf;
            jobs[r].buf = NULL;
        }
        T_EQ_I(jobs_init(jobs, k, n, DTYPE_F32, OP_ALLREDUCE, FILL_RANDOM, 0, 1, NULL, NULL,
                         fill), 0);
        for (int r = 0; r < k; r++) {
            jobs[r].piece = mix[r % 4];
            rab_plan(r, k, &pl[r]);
        }
        T_EQ_I(jobs_pair_plans(jobs, k, pl), 0);
        threads_run(rank_main, jobs, sizeof jobs[0], k);
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
