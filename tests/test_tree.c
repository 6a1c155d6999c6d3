/* test_tree.c -- the pipelined binary tree and the double binary tree
 * (common/coll/tree.c) over the transport (common/coll/xport_tcp.c),
 * without the launcher, and their cost in the model (common/measure/
 * model.c).
 *
 * K ranks run as threads of this process (tests/fake_peer.h's rig, as
 * test_rabenseifner.c), each with its own link (counters) and transport,
 * connected to their tree neighbours by socketpairs (xport_tcp_attach) or
 * by loopback listeners and the real HELLO exchange (xport_tcp_open). Ids:
 * tree-1.x the algorithm: the trees' shape and colors for any K; sums
 * against the closed form (small integers: exact in any order) and, on
 * random data, bit for bit against the algorithm's own summation order and
 * within the rounding bound of any order against a long-double sum;
 * bit-identical ranks for K = 1..9, odd n, several segments, f32 and f64,
 * one tree and two; tiny pieces; bytes and frames moved; coll.c's gather
 * and refusals; a NaN named. tree-2.x the model's formula at points
 * worked by hand, and its step count against the schedule's.
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
#include "coll/tree.h"
#include "fake_peer.h"
#include "measure/model.h"

enum op { OP_ALLREDUCE, OP_GATHER };

static int ntrees = 1;          /* the runs' algorithm: 1 tree, 2 dbtree */

/* A poisoned job (tree-1.10), as test_rabenseifner.c's. */
static int poison_rank = -1, poison_raw;
static size_t poison_at;
static double poison_val;

static double value(enum fill f, int r, size_t i, uint64_t round)
{
    return f == FILL_RANDOM ? random_value(r, i, round ^ 0x7e3) : small_value(r, i);
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

    tree_plan(j->rank, j->world, ntrees, &plan);
    rc = job_connect(&x, &plan, j->rank, j->world, j->n, j->dtype, j->lfd, j->peers, j->fds,
                     &j->link, 10.0, j->err);
    if (rc == 0 && j->op == OP_GATHER) {
        struct coll co;
        struct coll_cfg cc = { .kind = COLL_TCP, .algo = ntrees == 1 ? COLL_TREE : COLL_DBTREE,
                               .rank = j->rank, .world = j->world, .dtype = j->dtype,
                               .max_n = j->n, .timeout = 10.0, .x = x };
        double mine[2] = { j->rank * 10.0 + 0.5, -(double)j->rank };
        rc = coll_init(&co, &cc, j->err);
        if (rc == 0) {
            rc = coll_gather(&co, j->gathered, mine, 2, j->err);
            if (rc == 0)
                rc = coll_allreduce(&co, j->buf, j->n, j->err);
            coll_destroy(&co);
        }
    } else if (rc == 0) {
        struct tree t;
        rc = tree_init(&t, x, j->rank, j->world, ntrees, j->piece);
        for (int k = 0; rc == 0 && k < j->rounds; k++) {
            if (k > 0)
                fill(j, (uint64_t)k);
            rc = j->rank == poison_rank && poison_raw
                ? tree_allreduce_raw(&t, j->buf, j->n, j->dtype, j->err)
                : tree_allreduce(&t, j->buf, j->n, j->dtype, j->err);
        }
        tree_destroy(&t);
    }
    if (rc != 0)
        xport_abort(x, j->err);     /* as ring_worker does: the neighbours are told */
    xport_close(x);
    j->rc = rc;
    return NULL;
}

/* run_tree: K threads, neighbours connected by socketpairs (or, with
 * lfds, by xport_tcp_open on loopback); jobs[] filled in. */
static int run_tree(struct rank_job *jobs, int k, size_t n, int dtype, enum fill f, size_t piece,
                    int rounds, int op, const int *lfds, const struct proto_peer *peers)
{
    struct xport_plan pl[MAXK];

    if (jobs_init(jobs, k, n, dtype, op, f, piece, rounds, lfds, peers, fill) != 0)
        return -ENOMEM;
    for (int r = 0; r < k; r++)
        tree_plan(r, k, ntrees, &pl[r]);
    if (!lfds && jobs_pair_plans(jobs, k, pl) != 0)
        return -1;
    threads_run(rank_main, jobs, sizeof jobs[0], k);
    return 0;
}

/* The order tree.c sums in (DETERMINISM): at a rank its own value, then
 * its children's partials by arrival (height, then color), mine + theirs,
 * in the dtype. */
static int colors[2 * 64], colors_k = -1, colors_trees;

static double sub_sum(int x, int k, int j, size_t i, int dtype, uint64_t round)
{
    int c[2], nc = tree_children(x, k, j, c);
    double acc = value(FILL_RANDOM, x, i, round);
    float accs = (float)acc;

    if (nc == 2 && (tree_height(c[1], k, j) < tree_height(c[0], k, j) ||
                    (tree_height(c[1], k, j) == tree_height(c[0], k, j) &&
                     colors[j * k + c[1]] < colors[j * k + c[0]]))) {
        int s = c[0];
        c[0] = c[1];
        c[1] = s;
    }
    for (int m = 0; m < nc; m++) {
        double v = sub_sum(c[m], k, j, i, dtype, round);
        acc += v;
        accs += (float)v;
    }
    return dtype == DTYPE_F32 ? (double)accs : acc;
}

static double tree_sum(int k, size_t n, size_t i, int dtype, uint64_t round)
{
    size_t lo, hi;
    int j = 0, root;

    if (colors_k != k || colors_trees != ntrees) {
        tree_colors(k, ntrees, colors);
        colors_k = k;
        colors_trees = ntrees;
    }
    ring_chunk(n, ntrees, 1, &lo, &hi);
    if (ntrees == 2 && i >= lo)
        j = 1;
    for (root = 0; root < k && tree_parent(root, k, j) >= 0; root++)
        ;
    return sub_sum(root, k, j, i, dtype, round);
}

/* rounding: as test_rabenseifner.c's, with the tree's depth. */
static size_t rounding(struct rank_job *jobs, int k, uint64_t round)
{
    int dt = jobs[0].dtype, h = 0;
    double u = dt == DTYPE_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
    size_t bad = 0;

    while ((1 << h) < k)
        h++;
    h = 2 * h + 1;                      /* a chain of up to 2 adds per level */
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

static int ceil_log2(int k)
{
    int d = 0;
    while ((1 << d) < k)
        d++;
    return d;
}

int main(void)
{
    static const int dtypes[2] = { DTYPE_F32, DTYPE_F64 };
    struct rank_job jobs[MAXK];
    char err[ERR_LEN];

    peers_init(43400);

    T_CASE("tree-1.1", "shape, any K 1..64: one root, parents and children agree, depth ceil(log2 K); dbtree: leaves of one tree interior in the other; colors proper, C = 3 (tree), 4 (dbtree, K 4..48)");
    for (int k = 1; k <= 64; k++)
        for (int nt = 1; nt <= 2; nt++) {
            int col[2 * 64], c = k > 1 ? tree_colors(k, nt, col) : 0;
            for (int j = 0; j < nt; j++) {
                int roots = 0;
                for (int r = 0; r < k; r++) {
                    int p = tree_parent(r, k, j), ch[2], n = tree_children(r, k, j, ch);
                    roots += p < 0;
                    if (p >= 0) {
                        int pc[2], pn = tree_children(p, k, j, pc);
                        T_TRUE(pn >= 1 && (pc[0] == r || (pn == 2 && pc[1] == r)));
                    }
                    for (int m = 0; m < n; m++)
                        T_EQ_I(tree_parent(ch[m], k, j), r);
                    if (j == 1 && n > 0 && !(k % 2 && r == 0))  /* interior here: a leaf in tree 0 */
                        T_EQ_I(tree_children(r, k, 0, ch), 0);
                }
                T_EQ_I(roots, 1);
                T_EQ_I(tree_height(j == 0 ? 0 : k % 2 ? 1 : k - 1, k, j), ceil_log2(k));
            }
            for (int r = 0; k > 1 && r < k; r++) {       /* proper: distinct at every rank */
                unsigned seen = 0;
                for (int e = 0; e < nt * k; e++) {
                    int p = col[e] < 0 ? -1 : tree_parent(e % k, k, e / k);
                    if (p != r && !(col[e] >= 0 && e % k == r))
                        continue;
                    T_TRUE(!(seen & (1u << col[e])));
                    seen |= 1u << col[e];
                }
            }
            if (k >= 4 && (nt == 1 || k <= 48))      /* dbtree beyond: 4 to 6 (tree.c) */
                T_EQ_I(c, nt == 1 ? 3 : 4);
        }

    for (ntrees = 1; ntrees <= 2; ntrees++) {
        printf("   --- %s\n", ntrees == 1 ? "tree" : "dbtree");
        T_CASE(ntrees == 1 ? "tree-1.2" : "tree-1.3", "all-reduce = closed-form sum, bit-identical: K 1..9, n 1, K+1, 1001 (f32/f64), 100003 (f64: several segments)");
        for (int k = 1; k <= MAXK; k++) {
            size_t ns[4] = { 1, (size_t)k + 1, 1001, 100003 };
            for (int d = 0; d < 2; d++)
                for (int a = 0; a < 4 - (d == 0); a++) {
                    T_EQ_I(run_tree(jobs, k, ns[a], dtypes[d], FILL_SMALL, 0, 1, OP_ALLREDUCE,
                                    NULL, NULL), 0);
                    T_EQ_U(check_allreduce(jobs, k, FILL_SMALL, 0, tree_sum), 0);
                    free_jobs(jobs, k);
                }
        }

        T_CASE(ntrees == 1 ? "tree-1.4" : "tree-1.5", "random data, K 2..9, odd n over several segments, f32/f64: bit-identical, == its own order bit for bit, within the rounding bound of the exact sum");
        for (int k = 2; k <= MAXK; k++)
            for (int d = 0; d < 2; d++) {
                T_EQ_I(run_tree(jobs, k, 70001, dtypes[d], FILL_RANDOM, 0, 1, OP_ALLREDUCE, NULL,
                                NULL), 0);
                T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, tree_sum), 0);
                T_EQ_U(rounding(jobs, k, 0), 0);
                free_jobs(jobs, k);
            }

        T_CASE(ntrees == 1 ? "tree-1.6" : "tree-1.7", "tiny staging pieces (1 and 3 elements), three all-reduces in a row: same sums");
        for (int k = 3; k <= MAXK; k += 3) {
            T_EQ_I(run_tree(jobs, k, 40003, DTYPE_F64, FILL_RANDOM, k == 6 ? 24 : 8, 3,
                            OP_ALLREDUCE, NULL, NULL), 0);
            T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 2, tree_sum), 0);
            free_jobs(jobs, k);
        }

        T_CASE(ntrees == 1 ? "tree-1.8" : "tree-1.9", "bytes and frames per rank: its part each way per edge, one header per swap; the busiest == the model's bytes_in; swaps <= the schedule's longest chain (tree_steps)");
        for (int k = 2; k <= MAXK; k++) {
            size_t n = 2 * 70000, nb = 4 * n, part = nb / (size_t)ntrees;
            uint64_t most = 0, h = PROTO_HEADER_SIZE;
            T_EQ_I(run_tree(jobs, k, n, DTYPE_F32, FILL_SMALL, 0, 1, OP_ALLREDUCE, NULL, NULL), 0);
            for (int r = 0; r < k; r++) {
                struct tree t;
                struct xport dummy = { 0 };
                long s = (long)tree_segments(n / (size_t)ntrees, 4);
                uint64_t frames = 0, bytes;
                T_EQ_I(tree_init(&t, &dummy, r, k, ntrees, 0), 0);
                for (int e = 0; e < t.nedges; e++) {
                    long gap = t.e[e].down_at - t.e[e].height;
                    frames += (uint64_t)(s + (gap < s ? gap : s));
                }
                bytes = (uint64_t)t.nedges * part;
                T_EQ_U(jobs[r].link.bytes_out, bytes + frames * h);
                T_EQ_U(jobs[r].link.bytes_in, bytes + frames * h);
                long segs2[2] = { s, s };
                T_TRUE((long)frames <= tree_steps(k, ntrees, segs2, NULL));
                most = bytes > most ? bytes : most;
                tree_destroy(&t);
            }
            if (k >= 4)
                T_NEAR((double)most, model_query(ntrees == 1 ? MODEL_TREE : MODEL_DBTREE,
                                                 MODEL_BYTES_IN, k, 1, (double)nb, 1e9, 0), 1e-6);
            free_jobs(jobs, k);
        }

        T_CASE(ntrees == 1 ? "tree-1.10" : "tree-1.11", "loopback listeners and HELLO (xport_tcp_open), K = 5 and 8");
        over_listeners(5, run_tree, FILL_RANDOM, tree_sum);
        over_listeners(8, run_tree, FILL_RANDOM, tree_sum);

        T_CASE(ntrees == 1 ? "tree-1.12" : "tree-1.13", "coll with --algo tree|dbtree: gathers every rank's values exactly, then all-reduces");
        for (int k = 3; k <= MAXK; k += 3) {
            size_t wrong = 0;
            T_EQ_I(run_tree(jobs, k, 777, DTYPE_F32, FILL_SMALL, 0, 1, OP_GATHER, NULL, NULL), 0);
            T_EQ_U(check_allreduce(jobs, k, FILL_SMALL, 0, tree_sum), 0);
            for (int r = 0; r < k; r++)
                for (int q = 0; q < k; q++)
                    wrong += jobs[r].gathered[2 * q] != q * 10.0 + 0.5 ||
                             jobs[r].gathered[2 * q + 1] != -(double)q;
            T_EQ_U(wrong, 0);
            free_jobs(jobs, k);
        }
    }
    ntrees = 1;

    T_CASE("tree-1.14", "K = 1 and n = 0: no transport, nothing moves; refused on the device kinds; named and parsed");
    {
        struct tree t1;
        struct coll co;
        struct coll_cfg cc = { .kind = COLL_TCP_CUDA, .algo = COLL_DBTREE, .rank = 0,
                               .world = 1, .dtype = DTYPE_F32, .max_n = 4, .timeout = 1.0 };
        double v[3] = { 1.5, -2, 3 };
        T_EQ_I(tree_init(&t1, NULL, 0, 1, 1, 0), 0);
        T_EQ_I(tree_allreduce(&t1, v, 3, DTYPE_F64, err), 0);
        T_EQ_D(v[0], 1.5);
        T_EQ_I(tree_allreduce(&t1, v, 3, 99, err), ERR_USAGE);
        tree_destroy(&t1);
        T_EQ_I(tree_init(&t1, NULL, 0, 2, 1, 0), ERR_USAGE);
        T_EQ_I(run_tree(jobs, 6, 0, DTYPE_F32, FILL_SMALL, 0, 2, OP_ALLREDUCE, NULL, NULL), 0);
        for (int r = 0; r < 6; r++) {
            T_EQ_I(jobs[r].rc, 0);
            T_EQ_U(jobs[r].link.bytes_out, 0);
        }
        free_jobs(jobs, 6);
        T_EQ_I(coll_init(&co, &cc, err), ERR_USAGE);
        T_HAS(err, "--algo dbtree");
        cc.kind = COLL_TCP;
        T_EQ_I(coll_init(&co, &cc, err), 0);
        T_STR(coll_algo_name(&co), "dbtree");
        T_STR(coll_op_algo(&co, COLL_ALL_REDUCE), "dbtree");
        coll_destroy(&co);
        T_EQ_I(coll_algo_parse("tree"), COLL_TREE);
        T_EQ_I(coll_algo_parse("dbtree"), COLL_DBTREE);
        T_EQ_I(coll_algo_parse("Tree"), -1);
    }

    T_CASE("tree-1.15", "a NaN or Inf (a member with the secret): the rank that adds it, or copies it in, fails ERR_NONFINITE naming the element, round and sender; every other honest rank fails too, none hangs");
    {
        /* K = 5, one tree: 0 - 4 (color 0), 4 - 2 (1), 2 - 1 (0), 2 - 3 (2);
         * C = 3, D = 3. Leaf 3 sends segment 0 up in period 0, slot 2:
         * round 2. Rank 0 (unchecked) sends segment 0 down to 4 in period
         * D = 3, slot 0: round 9. */
        static const struct {
            int trees, rank, raw, at_rank;
            size_t at;
            double val;
            const char *says;
        } cases[] = {
            { 1, 3, 0, 2, 7, NAN, "element 7 is nan after round 2 from child rank 3" },
            { 1, 0, 1, 4, 800, INFINITY, "element 800 is inf after round 9 from parent rank 0" },
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            ntrees = cases[c].trees;
            poison_rank = cases[c].rank;
            poison_raw = cases[c].raw;
            poison_at = cases[c].at;
            poison_val = cases[c].val;
            T_EQ_I(run_tree(jobs, 5, 1001, DTYPE_F64, FILL_SMALL, 0, 1, OP_ALLREDUCE, NULL,
                            NULL), 0);
            T_EQ_I(jobs[cases[c].at_rank].rc, ERR_NONFINITE);
            T_HAS(jobs[cases[c].at_rank].err, cases[c].says);
            for (int q = 0; q < 5; q++)
                if (!(cases[c].raw && q == cases[c].rank) && jobs[q].rc == 0) {
                    printf("     case %zu: rank %d ended with rc 0\n", c, q);
                    T_TRUE(jobs[q].rc != 0);
                }
            free_jobs(jobs, 5);
        }
        poison_rank = -1;
    }

    T_CASE("tree-2.1", "tree_steps: the schedule's longest chain of swaps, each waiting for both ends; K = 4 and 2 by hand (tree.c's period table); a full period adds C steps; at most C (S + 2D - 1); the segment the same as tree.h's");
    T_EQ_D(MODEL_TREE_SEG_BYTES, (double)TREE_SEG_BYTES);
    /* K = 4, tree, S = 2 (tree.c's table): p0 2-1, 2-3 (steps 1, 2); p1
     * 0-2, 2-1, 2-3 (3, 4, 5); p2 0-2 (6); p3 0-2, 2-1, 2-3 (7, 8, 9); p4
     * 2-1, 2-3 (10, 11): 11 steps, where C P = 3 (S + 2D - 1) = 15 would
     * count the empty slots. S = 1: 2-1, 2-3, 0-2 up, 0-2 down, 2-1, 2-3. */
    long s1[2] = { 1, 1 }, s2[2] = { 2, 2 }, s8[2] = { 8, 8 };
    int c;
    T_EQ_I(tree_steps(4, 1, s2, &c), 11);
    T_EQ_I(c, 3);
    T_EQ_I(tree_steps(4, 1, s1, NULL), 6);
    /* K = 2, tree: one edge, C = 1, D = 1: S + 1 periods of one swap. */
    T_EQ_I(tree_steps(2, 1, s8, &c), 9);
    T_EQ_I(c, 1);
    T_EQ_I(tree_steps(1, 1, s8, NULL), 0);
    for (int k = 2; k <= 48; k++)
        for (int nt = 1; nt <= 2; nt++) {
            int col[2 * 64], cc = tree_colors(k, nt, col), d = ceil_log2(k);
            long a[2] = { 20, 20 }, b[2] = { 21, 21 }, ta = tree_steps(k, nt, a, NULL),
                 tb = tree_steps(k, nt, b, NULL);
            /* In the steady state every rank is busy in every slot. */
            if (tb - ta != cc || ta > (long)cc * (20 + 2 * d - 1)) {
                printf("     K = %d, %d tree(s): %ld, %ld steps at S = 20, 21; C = %d\n", k, nt,
                       ta, tb, cc);
                T_TRUE(tb - ta == cc && ta <= (long)cc * (20 + 2 * d - 1));
            }
        }

    T_CASE("tree-2.2", "tree_cost, the eager schedule: K = 4, S = 1 by hand (4 a + 6 m b: the children's segments queue at 2's ingress, 2's two down at its egress); K = 2, S = 2: 2 a + 3 m b eager, 3 a + 3 m b when the rest waits for the other's header; never above tree_steps (a + m b), never below the busiest link's bytes or a leaf's way up and down");
    {
        struct tree_cost tc;
        double a = 1e-3, b = 1.0 / 4e6, m = 4096, mb = m * b;
        /* K = 4 (0 - 2, 2 - 1, 2 - 3), all at 0. Period 0: 1 and 3 send up
         * at once, in at 2 at a + m b and a + 2 m b (one ingress); 2's
         * headers reach them at a. Period 1: 2 sends up at a + 2 m b, in at
         * 0 at 2 a + 3 m b. Period 2: 0 sends it down, in at 2 at 3 a + 4 m b.
         * Period 3: 2 sends to 1, then to 3 (one egress): 3 has it at
         * 4 a + 6 m b. */
        T_EQ_I(tree_cost(4, 1, s1, m, a, b, 0, &tc), 0);
        T_NEAR(tc.first, 4 * a + 6 * mb, 1e-12);
        T_EQ_I(tc.colors, 3);
        /* Back to back, the root and 2 are done before the leaves and
         * start the next call early: the slowest call is shorter. */
        T_TRUE(tc.time < tc.first - 0.5 * mb);
        T_NEAR(tc.time, tc.lat_terms * a + tc.byte_terms * b, 1e-12);
        /* K = 2, S = 2: 1 sends u0, u1 back to back; 0 sends d0 once u0 is
         * in (a + m b) and d1 after it: in at 1 at 2 a + 3 m b. When only
         * the first quarter goes before the other's header (piece m / 4),
         * d0 waits for 1's header of period 1, sent when d0... : 3 a + 3 m b,
         * tree_steps' 3 (a + m b). */
        T_EQ_I(tree_cost(2, 1, s2, m, a, b, 0, &tc), 0);
        T_NEAR(tc.first, 2 * a + 3 * mb, 1e-12);
        T_EQ_I(tree_cost(2, 1, s2, m, a, b, m / 4, &tc), 0);
        T_NEAR(tc.first, 3 * a + 3 * mb, 1e-12);
        T_EQ_I(tree_cost(1, 1, s2, m, a, b, 0, &tc), 0);
        T_EQ_D(tc.time, 0);
        for (int k = 2; k <= 24; k++)
            for (int nt = 1; nt <= 2; nt++)
                for (int si = 0; si < 3; si++) {
                    long sg[2] = { si == 0 ? 1 : si == 1 ? 3 : 12 };
                    sg[1] = sg[0];
                    double piece = si == 1 ? m / 8 : 0, busiest = (k == 2 ? 1 : k == 3 ? 2 : 3) *
                                                                  (double)sg[0] * m * b;
                    int d = ceil_log2(k);
                    long st = tree_steps(k, nt, sg, NULL);
                    T_EQ_I(tree_cost(k, nt, sg, m, a, b, piece, &tc), 0);
                    if (nt == 2)
                        busiest = (k == 2 ? 1 : 2) * (double)sg[0] * m * b;
                    if (!(tc.first <= st * (a + mb) + 1e-12 && tc.time <= tc.first + 1e-12 &&
                          tc.time >= busiest - 1e-12 && tc.time >= 2 * d * a - 1e-12)) {
                        printf("     K = %d, %d tree(s), S = %ld: first %g, time %g, sync %g, "
                               "busiest %g\n", k, nt, sg[0], tc.first, tc.time, st * (a + mb),
                               busiest);
                        T_TRUE(0);
                    }
                }
    }

    T_CASE("tree-2.4", "tree_cost's util, the link's own share of the schedule (the busiest egress from its entry to its end, calls 1 .. last): K = 2, a = 0 by hand, S = 1: 1/2 (up, then down: one way at a time), S = 64: 64/65 (u_q up while d_q-1 comes down); in (0, 1] for every K, both trees; model_link_util is it at the model's segments and piece, 1 for the ring");
    {
        struct tree_cost tc;
        long s64[2] = { 64, 64 };
        T_EQ_I(tree_cost(2, 1, s1, 4096, 0, 1 / 4e6, 0, &tc), 0);
        T_NEAR(tc.util, 0.5, 1e-12);
        T_EQ_I(tree_cost(2, 1, s64, 4096, 0, 1 / 4e6, 0, &tc), 0);
        T_NEAR(tc.util, 64.0 / 65.0, 1e-12);
        for (int k = 2; k <= 24; k++)
            for (int nt = 1; nt <= 2; nt++) {
                T_EQ_I(tree_cost(k, nt, s8, 4096, 1e-3, 1 / 4e6, 512, &tc), 0);
                T_TRUE(tc.util > 0 && tc.util <= 1.0);
            }
        T_EQ_I(tree_cost(4, 1, s2, 131072, 1e-3, 1 / 4e6, 4056, &tc), 0);
        T_NEAR(model_link_util("tree", 4, 262144, 4e6, 1e-3), tc.util, 1e-12);
        T_TRUE(tc.util < 0.9);          /* algo_check's cell: its leaves wait, read 0.57 */
        T_EQ_D(model_link_util("ring", 4, 262144, 4e6, 1e-3), 1.0);
    }

    T_CASE("tree-2.3", "model: model_tree and model_dbtree are tree_cost's steady call at the link's piece (4 KiB at 32 Mbit/s, so a 128 KiB segment sends 4056 bytes with its header first); MODEL_STEPS its latencies; the busiest link's bytes");
    {
        struct tree_cost tc;
        long s32[2] = { 32, 32 }, s16[2] = { 16, 16 }, s4[2] = { 4, 4 };
        T_EQ_I(tree_cost(4, 1, s2, 131072, 1e-3, 1 / 4e6, 4056, &tc), 0);
        T_NEAR(model_tree(4, 262144, 4e6, 1e-3), tc.time, 1e-12);
        T_EQ_D(model_query(MODEL_TREE, MODEL_STEPS, 4, 1, 262144, 4e6, 1e-3), tc.lat_terms);
        T_EQ_I(tree_cost(8, 2, s16, 131072, 1e-3, 1 / 4e6, 4056, &tc), 0);
        T_NEAR(model_dbtree(8, 4194304, 4e6, 1e-3), tc.time, 1e-12);
        T_EQ_I(tree_cost(8, 1, s32, 131072, 1e-3, 1 / 4e6, 4056, &tc), 0);
        T_NEAR(model_tree(8, 4194304, 4e6, 1e-3), tc.time, 1e-12);
        /* 4 KiB: one segment, all of it with its header. */
        T_EQ_I(tree_cost(4, 1, s1, 4096, 1e-3, 1 / 4e6, 0, &tc), 0);
        T_NEAR(model_tree(4, 4096, 4e6, 1e-3), tc.time, 1e-12);
        /* 1 MB at 1 Gbit/s: the piece is 60 KiB, the segment 125000 B. */
        T_EQ_I(tree_cost(8, 2, s4, 125000, 1e-3, 1 / 125e6, 61440 - 40, &tc), 0);
        T_NEAR(model_dbtree(8, 1e6, 125e6, 1e-3), tc.time, 1e-12);
        T_NEAR(model_query(MODEL_TREE, MODEL_BYTES_IN, 8, 1, 1e6, 1e9, 0), 3e6, 1e-6);
        T_NEAR(model_query(MODEL_DBTREE, MODEL_BYTES_OUT, 8, 1, 1e6, 1e9, 0), 2e6, 1e-6);
        T_NEAR(model_tree(1, 1e6, 1e9, 1e-3), 0, 1e-15);
    }

    return t_done();
}
