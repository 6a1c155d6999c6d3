/* test_tree.c -- the pipelined binary tree and the double binary tree
 * (common/coll/tree.c) over the transport (common/coll/xport_tcp.c),
 * without the launcher, and their cost in the model (common/measure/
 * model.c).
 *
 * K ranks run as threads of this process (tests/coll_check.h's harness
 * on tests/fake_peer.h's rig), each with its own link (counters) and
 * transport, connected to their tree neighbours by socketpairs (xport_tcp_attach) or
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
#include "coll_check.h"
#include "measure/model.h"

static int ntrees = 1;          /* the jobs' algorithm: 1 tree, 2 dbtree */

/* tree.c behind coll_check.h's interface, with ntrees trees. */
static void plan(int rank, int world, struct xport_plan *pl)
{
    tree_plan(rank, world, ntrees, pl);
}

static int tree_call(void *st, enum algo_call what, struct xport *x, struct rank_job *j)
{
    if (what == ALGO_INIT)
        return tree_init(st, x, j->rank, j->world, ntrees, j->piece);
    if (what == ALGO_DESTROY)
        return tree_destroy(st), 0;
    return (what == ALGO_ALLREDUCE_RAW ? tree_allreduce_raw : tree_allreduce)(st, j->buf, j->n,
                                                                              j->dtype, j->err);
}

static void tree_coll(struct coll_cfg *cc)
{
    cc->algo = ntrees == 1 ? COLL_TREE : COLL_DBTREE;
}

static const struct algo_test tree_test = { 0x7e3, sizeof(struct tree), plan, tree_coll,
                                            tree_call };

/* tree_bytes (bytes_moved's want): its part of the vector each way on
 * each of its edges; a frame a swap, as the schedule has them (tree.c:
 * S segments, and each edge's gap between up and down), never more than
 * the longest chain (tree_steps). */
static uint64_t tree_bytes(int r, int k, size_t n, uint64_t *frames)
{
    struct tree t;
    struct xport dummy = { 0 };
    long s = (long)tree_segments(n / (size_t)ntrees, 4), segs2[2] = { s, s };
    uint64_t bytes;

    *frames = 0;
    T_EQ_I(tree_init(&t, &dummy, r, k, ntrees, 0), 0);
    for (int e = 0; e < t.nedges; e++) {
        long gap = t.e[e].down_at - t.e[e].height;
        *frames += (uint64_t)(s + (gap < s ? gap : s));
    }
    bytes = (uint64_t)t.nedges * (4 * (uint64_t)n / (uint64_t)ntrees);
    T_TRUE((long)*frames <= tree_steps(k, ntrees, segs2, NULL));
    tree_destroy(&t);
    return bytes;
}

/* The order tree.c sums in (DETERMINISM): at a rank its own value, then
 * its children's partials by arrival (height, then color), mine + theirs,
 * in the dtype. */
static int colors[2 * 64], colors_k = -1, colors_trees;

static double sub_sum(int x, int k, int j, size_t i, int dtype, uint64_t round)
{
    int c[2], nc = tree_children(x, k, j, c);
    double acc = job_value(FILL_RANDOM, x, i, round);
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

int main(void)
{
    struct rank_job jobs[MAXK];
    char err[ERR_LEN];

    algo_use(&tree_test, 43400);

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
                for (int a = 0; a < 4 - (d == 0); a++)
                    run_sums(k, ns[a], dtypes[d], FILL_SMALL, 0, 1, tree_sum);
        }

        T_CASE(ntrees == 1 ? "tree-1.4" : "tree-1.5", "random data, K 2..9, odd n over several segments, f32/f64: bit-identical, == its own order bit for bit, within the rounding bound of the exact sum");
        for (int k = 2; k <= MAXK; k++)
            for (int d = 0; d < 2; d++) {
                T_EQ_I(run_jobs(jobs, k, 70001, dtypes[d], FILL_RANDOM, 0, 1, OP_ALLREDUCE, NULL,
                                NULL), 0);
                T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, tree_sum), 0);
                /* a chain of up to 2 adds per level: depth 2 ceil(log2 K) + 1 */
                T_EQ_U(rounding_wrong(jobs, k, 0, 2 * ceil_log2(k) + 2, 1), 0);
                free_jobs(jobs, k);
            }

        T_CASE(ntrees == 1 ? "tree-1.6" : "tree-1.7", "tiny staging pieces (1 and 3 elements), three all-reduces in a row: same sums");
        for (int k = 3; k <= MAXK; k += 3)
            run_sums(k, 40003, DTYPE_F64, FILL_RANDOM, k == 6 ? 24 : 8, 3, tree_sum);

        T_CASE(ntrees == 1 ? "tree-1.8" : "tree-1.9", "bytes and frames per rank: its part each way per edge, one header per swap; the busiest == the model's bytes_in; swaps <= the schedule's longest chain (tree_steps)");
        for (int k = 2; k <= MAXK; k++) {
            size_t n = 2 * 70000;
            uint64_t most = bytes_moved(k, n, tree_bytes);
            if (k >= 4)
                T_NEAR((double)most, model_query(ntrees == 1 ? MODEL_TREE : MODEL_DBTREE,
                                                 MODEL_BYTES_IN, k, 1, 4.0 * n, 1e9, 0), 1e-6);
        }

        T_CASE(ntrees == 1 ? "tree-1.10" : "tree-1.11", "loopback listeners and HELLO (xport_tcp_open), K = 5 and 8");
        over_listeners(5, run_jobs, FILL_RANDOM, tree_sum);
        over_listeners(8, run_jobs, FILL_RANDOM, tree_sum);

        T_CASE(ntrees == 1 ? "tree-1.12" : "tree-1.13", "coll with --algo tree|dbtree: gathers every rank's values exactly, then all-reduces");
        for (int k = 3; k <= MAXK; k += 3)
            gather_sums(k, tree_sum);
    }
    ntrees = 1;

    T_CASE("tree-1.14", "K = 1 and n = 0: no transport, nothing moves; refused on the device kinds; named and parsed");
    {
        struct tree t1;
        double v[3] = { 1.5, -2, 3 };
        T_EQ_I(tree_init(&t1, NULL, 0, 1, 1, 0), 0);
        T_EQ_I(tree_allreduce(&t1, v, 3, DTYPE_F64, err), 0);
        T_EQ_D(v[0], 1.5);
        T_EQ_I(tree_allreduce(&t1, v, 3, 99, err), ERR_USAGE);
        tree_destroy(&t1);
        T_EQ_I(tree_init(&t1, NULL, 0, 2, 1, 0), ERR_USAGE);
        nothing_moves(6);
        coll_named(COLL_DBTREE, 0, "--algo dbtree", "dbtree");
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
        static const struct poison_case cases[] = {     /* K, trees, rank, raw, at rank */
            { 5, 1, 3, 0, 2, 7, NAN, "element 7 is nan after round 2 from child rank 3" },
            { 5, 1, 0, 1, 4, 800, INFINITY, "element 800 is inf after round 9 from parent rank 0" },
        };
        poisoned_cases(cases, sizeof cases / sizeof cases[0], &ntrees);
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
