/* test_swing.c -- Swing's all-reduce, both variants (common/coll/swing.c),
 * over the partner transport (common/coll/xport_tcp.c), without the
 * launcher, and its cost in the model (common/measure/model.c).
 *
 * K ranks run as threads of this process (tests/coll_check.h's harness
 * on tests/fake_peer.h's rig), connected to their partners by
 * socketpairs (jobs_pair_plans) or by loopback listeners and the real
 * HELLO (xport_tcp_open). Ids: swing-1.x the algorithm: rho and the peers; the
 * contributor sets (each rank hears from every other exactly once) and
 * swing-bw's block positions, for K up to 127; sums against the closed
 * form (small integers: exact in any order, every rank bit-identical) and,
 * on random data, every rank bit for bit against a serial replay of its own
 * summation tree and within the rounding bound of any order (swing-bw:
 * every rank bit-identical; swing-lat: each rank its own tree, swing.h,
 * BITS), K = 1..9, odd n, n < K, f32 and f64; tiny pieces; bytes moved;
 * coll.c's gather and refusals; a NaN: swing-1.3..1.9 for swing-lat, the
 * same cases as swing-3.3..3.9 for swing-bw. swing-2.x the model's
 * formulas.
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
#include "coll/ring.h"
#include "coll/swing.h"
#include "fake_peer.h"
#include "coll_check.h"
#include "measure/model.h"

static int variant_bw;          /* the variant the jobs run: 1 swing-bw, 0 swing-lat */

/* swing.c behind coll_check.h's interface, the variant variant_bw. */
static int swing_call(void *st, enum algo_call what, struct xport *x, struct rank_job *j)
{
    if (what == ALGO_INIT)
        return swing_init(st, x, j->rank, j->world, variant_bw, j->piece);
    if (what == ALGO_DESTROY)
        return swing_destroy(st), 0;
    return (what == ALGO_ALLREDUCE_RAW ? swing_allreduce_raw : swing_allreduce)(st, j->buf, j->n,
                                                                                j->dtype, j->err);
}

static void swing_coll(struct coll_cfg *cc)
{
    cc->algo = variant_bw ? COLL_SWING_BW : COLL_SWING_LAT;
}

static const struct algo_test swing_test = { 0x5e1, sizeof(struct swing), swing_plan,
                                             swing_coll, swing_call };

/* swing_bytes (bytes_moved's want): swing-lat n a step each way, log2 P
 * frames; swing-bw 2 (P-1)/P n in 2 log2 P; the fold's n once more (in,
 * then out); an odd rank of a pair: its vector out, the result in. */
static uint64_t swing_bytes(int r, int k, size_t n, uint64_t *frames)
{
    int l, extra, p = fold_of(k, &l, &extra), fold = r < 2 * extra;
    uint64_t nb = 4 * (uint64_t)n;

    if (fold && r % 2) {
        *frames = 2;
        return nb;
    }
    *frames = (variant_bw ? 2 * (uint64_t)l : (uint64_t)l) + (fold ? 2 : 0);
    return (variant_bw ? 2 * (uint64_t)(p - 1) * (nb / (uint64_t)p) : (uint64_t)l * nb) +
           (fold ? nb : 0);
}

static int cube_rank(int c, int extra)
{
    return c < extra ? 2 * c : c + extra;
}

/* replay: element i as swing-lat leaves it on cube rank `want` (the FOLD:
 * v_2c + v_2c+1 for c < extra; then in step s every cube rank c holds
 * (lower's) + (higher's) of its value and its peer's), serially, in the
 * dtype. swing-bw's block b is summed by the same tree as swing-lat's
 * result on the rank owning b (swing.c, BLOCKS). */
static double replay(int k, size_t i, int dtype, uint64_t round, int want)
{
    double d[MAXK], w[MAXK];
    float s[MAXK], ws[MAXK];
    int l, extra, p = fold_of(k, &l, &extra);

    for (int r = 0; r < k; r++) {
        d[r] = job_value(FILL_RANDOM, r, i, round);
        s[r] = (float)d[r];
    }
    for (int c = 0; c < p; c++) {
        int r = cube_rank(c, extra);
        w[c] = c < extra ? d[r] + d[r + 1] : d[r];
        ws[c] = c < extra ? s[r] + s[r + 1] : s[r];
    }
    for (int st = 0; st < l; st++) {
        double nw[MAXK];
        float nws[MAXK];
        for (int c = 0; c < p; c++) {
            int q = swing_peer(c, st, p), lo = c < q ? c : q, hi = c < q ? q : c;
            nw[c] = w[lo] + w[hi];
            nws[c] = ws[lo] + ws[hi];
        }
        memcpy(w, nw, sizeof nw);
        memcpy(ws, nws, sizeof nws);
    }
    return dtype == DTYPE_F32 ? (double)ws[want] : w[want];
}

/* bw_sum: swing-bw's element i (order_sum_fn): the tree of its block's owner. */
static double bw_sum(int k, size_t n, size_t i, int dtype, uint64_t round)
{
    int l, extra, p = fold_of(k, &l, &extra);

    for (int c = 0; c < p; c++) {
        size_t lo, hi;
        ring_chunk(n, p, swing_block(cube_rank(c, extra), k), &lo, &hi);
        if (i >= lo && i < hi)
            return replay(k, i, dtype, round, c);
    }
    return NAN;
}

/* lat_sum: swing-lat's element i on rank 0 (order_sum_fn). */
static double lat_sum(int k, size_t n, size_t i, int dtype, uint64_t round)
{
    (void)n;
    return replay(k, i, dtype, round, 0);
}

/* check_lat: swing-lat on random data: every rank ok and bit for bit its
 * own tree (a folded odd rank: its even partner's). Wrong elements. */
static size_t check_lat(struct rank_job *jobs, int k, uint64_t round)
{
    int l, extra;
    size_t wrong = 0;

    fold_of(k, &l, &extra);
    for (int r = 0; r < k; r++) {
        int c = r < 2 * extra ? r / 2 : r - extra;
        if (jobs[r].rc != 0) {
            printf("     rank %d: %s\n", r, jobs[r].err);
            return 1;
        }
        for (size_t i = 0; i < jobs[r].n; i++)
            if (vec_get(jobs[r].buf, i, jobs[r].dtype) != replay(k, i, jobs[r].dtype, round, c) &&
                wrong++ == 0)
                printf("     K=%d rank %d element %zu: %.17g, its tree %.17g\n", k, r, i,
                       vec_get(jobs[r].buf, i, jobs[r].dtype),
                       replay(k, i, jobs[r].dtype, round, c));
    }
    return wrong;
}

int main(void)
{
    static const char *const vname[2] = { "swing-lat", "swing-bw" };
    struct rank_job jobs[MAXK];
    char err[ERR_LEN];

    algo_use(&swing_test, 44000);

    T_CASE("swing-1.1", "rho 1, -1, 3, -5, 11; peers: an even rank's is odd and points back, K 2..128; partners symmetric with the fold's; steps");
    T_EQ_I((int)swing_rho(0), 1);
    T_EQ_I((int)swing_rho(1), -1);
    T_EQ_I((int)swing_rho(2), 3);
    T_EQ_I((int)swing_rho(3), -5);
    T_EQ_I((int)swing_rho(4), 11);
    T_EQ_I(swing_peer(0, 1, 8), 7);     /* K = 8, step 1: 0-7, 2-1 */
    T_EQ_I(swing_peer(2, 1, 8), 1);
    T_EQ_I(swing_peer(6, 2, 8), 1);     /* step 2: 6 + 3 = 9 = 1 mod 8 */
    for (int p = 2; p <= 128; p *= 2)
        for (int c = 0; c < p; c++)
            for (int s = 0; (1 << s) < p; s++) {
                int q = swing_peer(c, s, p);
                T_TRUE(q % 2 != c % 2);
                T_EQ_I(swing_peer(q, s, p), c);
            }
    for (int k = 1; k <= 64; k++) {
        int l, extra, p = fold_of(k, &l, &extra);
        T_EQ_I(swing_steps(k, 0), p == k ? l : l + 2);
        T_EQ_I(swing_steps(k, 1), p == k ? 2 * l : 2 * l + 2);
        for (int r = 0; r < k; r++) {
            int part[SWING_PARTNERS_MAX], back[SWING_PARTNERS_MAX];
            int n = swing_partners(r, k, part), odd = r < 2 * extra && r % 2;
            T_EQ_I(n, k == 1 ? 0 : odd ? 1 : l + (r < 2 * extra));
            for (int i = 0; i < n; i++) {
                int m = swing_partners(part[i], k, back), found = 0;
                for (int j = 0; j < m; j++)
                    found |= back[j] == r;
                T_TRUE(found && part[i] != r);
            }
        }
    }

    T_CASE("swing-1.2", "P = 2..64: the sets a rank has heard from never overlap and end whole; swing-bw's positions a permutation, a peer's in the same run and the other half");
    for (int p = 2; p <= 64; p *= 2) {
        uint64_t have[64], seen = 0;
        int l = 0, pos[64];
        while ((1 << l) < p)
            l++;
        for (int c = 0; c < p; c++) {
            have[c] = 1ull << c;
            pos[c] = swing_block(c, p);
            T_TRUE(pos[c] >= 0 && pos[c] < p && !(seen >> pos[c] & 1));
            seen |= 1ull << pos[c];
        }
        for (int s = 0; s < l; s++) {
            uint64_t nh[64];
            for (int c = 0; c < p; c++) {
                int q = swing_peer(c, s, p);
                T_TRUE((have[c] & have[q]) == 0);
                nh[c] = have[c] | have[q];
                T_EQ_I((pos[c] ^ pos[q]) >> (l - 1 - s), 1);
            }
            memcpy(have, nh, sizeof nh);
        }
        for (int c = 0; c < p; c++)
            T_TRUE(have[c] == (p == 64 ? ~0ull : (1ull << p) - 1));
    }
    T_EQ_I(swing_block(1, 4), 2);       /* swing.c's K = 4 table: 0, 2, 3, 1 */
    T_EQ_I(swing_block(2, 4), 3);
    T_EQ_I(swing_block(3, 4), 1);
    T_EQ_I(swing_block(1, 6), -1);      /* K = 6: rank 1 folds into rank 0 */

    for (int v = 0; v < 2; v++) {
        variant_bw = v;
        printf("  -- %s\n", vname[v]);
        T_CASE(v ? "swing-3.3" : "swing-1.3", "all-reduce = closed-form sum, every rank bit-identical: K 1..9, n 1, K-1, K+1, 1001, 65539, f32/f64");
        for (int k = 1; k <= MAXK; k++) {
            size_t ns[5] = { 1, (size_t)k - 1, (size_t)k + 1, 1001, 65539 };
            for (int d = 0; d < 2; d++)
                for (int a = 0; a < 5; a++)
                    run_sums(k, ns[a], dtypes[d], FILL_SMALL, 0, 1, v ? bw_sum : lat_sum);
        }

        T_CASE(v ? "swing-3.4" : "swing-1.4", "random data, K 2..9, n 30001, f32/f64: each rank == a replay of its own tree bit for bit (swing-bw: all ranks identical), within (h+1) u sum|v| of the exact sum");
        for (int k = 2; k <= MAXK; k++)
            for (int d = 0; d < 2; d++) {
                T_EQ_I(run_jobs(jobs, k, 30001, dtypes[d], FILL_RANDOM, 0, 1, OP_ALLREDUCE,
                                NULL, NULL), 0);
                if (v)
                    T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0, bw_sum), 0);
                else
                    T_EQ_U(check_lat(jobs, k, 0), 0);
                /* every rank: a sum of depth ceil(log2 K) */
                T_EQ_U(rounding_wrong(jobs, k, 0, ceil_log2(k) + 1, k), 0);
                free_jobs(jobs, k);
            }

        T_CASE(v ? "swing-3.5" : "swing-1.5", "tiny staging pieces (1 and 3 elements), three rounds in a row, K 3, 6, 8, 9");
        for (int k = 3; k <= MAXK; k += 3) {
            static const size_t pieces[] = { 8, 24 };
            int kk = k == 9 ? 8 : k;
            T_EQ_I(run_jobs(jobs, kk, 203, DTYPE_F64, FILL_RANDOM, pieces[k % 2], 3,
                             OP_ALLREDUCE, NULL, NULL), 0);
            T_EQ_U(v ? check_allreduce(jobs, kk, FILL_RANDOM, 2, bw_sum) : check_lat(jobs, kk, 2),
                   0);
            free_jobs(jobs, kk);
        }

        T_CASE(v ? "swing-3.6" : "swing-1.6", "bytes moved per rank (swing-lat: log2 P n each way; swing-bw: 2 (P-1)/P n; the fold's n once), one header per frame; the busiest == the model's bytes_in");
        for (int k = 2; k <= MAXK; k++) {
            size_t n = 8 * 509;             /* a multiple of P: equal blocks */
            T_NEAR((double)bytes_moved(k, n, swing_bytes),
                   model_query(v ? MODEL_SWING_BW : MODEL_SWING_LAT, MODEL_BYTES_IN, k, 1,
                               4.0 * n, 1e9, 0), 1e-6);
        }

        T_CASE(v ? "swing-3.7" : "swing-1.7", "loopback listeners and HELLO (xport_tcp_open), K = 5 and 8");
        over_listeners(5, run_jobs, FILL_SMALL, bw_sum);
        over_listeners(8, run_jobs, FILL_SMALL, bw_sum);

        T_CASE(v ? "swing-3.8" : "swing-1.8", "coll with --algo swing-*: gathers every rank's values exactly, then all-reduces; K 3, 6, 9");
        for (int k = 3; k <= MAXK; k += 3)
            gather_sums(k, bw_sum);

        T_CASE(v ? "swing-3.9" : "swing-1.9", "a NaN on rank 3 of K = 5: the rank that adds it fails ERR_NONFINITE naming element and partner; no rank ends with rc 0");
        poison.rank = 3;
        poison.at = 7;
        poison.val = NAN;
        poisoned_job(0, 5, -1, "element 7 is nan", "from partner rank 3");
        poison.rank = -1;
    }

    T_CASE("swing-1.10", "K = 1 and n = 0: no transport, nothing moves; coll refuses the device kinds and --compress, names and parses both");
    {
        struct swing w1;
        struct coll co;
        double v[3] = { 1.5, -2, 3 };
        struct coll_cfg cc = { .kind = COLL_TCP, .algo = COLL_SWING_BW, .rank = 0, .world = 1,
                               .dtype = DTYPE_F32, .max_n = 4, .timeout = 1.0 };
        T_EQ_I(swing_init(&w1, NULL, 0, 1, 1, 0), 0);
        T_EQ_I(swing_allreduce(&w1, v, 3, DTYPE_F64, err), 0);
        T_EQ_D(v[0], 1.5);
        T_EQ_I(swing_allreduce(&w1, v, 3, 99, err), ERR_USAGE);
        swing_destroy(&w1);
        T_EQ_I(swing_init(&w1, NULL, 0, 2, 0, 0), ERR_USAGE);
        variant_bw = 0;
        nothing_moves(6);
        cc.compress = COMPRESS_FP16;
        T_EQ_I(coll_init(&co, &cc, err), ERR_USAGE);
        T_HAS(err, "not swing-bw");
        cc.compress = COMPRESS_NONE;
        for (int a = COLL_SWING_LAT; a <= COLL_SWING_BW; a++) {
            static const char *const refused[2] = {
                "--algo swing-lat: runs on the host over TCP only",
                "--algo swing-bw: runs on the host over TCP only" };
            coll_named(a, 0, refused[a - COLL_SWING_LAT], vname[a - COLL_SWING_LAT]);
            T_EQ_I(coll_algo_parse(vname[a - COLL_SWING_LAT]), a);
        }
        T_EQ_I(coll_algo_parse("swing"), -1);
    }

    T_CASE("swing-2.1", "model: swing-lat log2 K (a + n b), swing-bw 2 log2 K a + 2(K-1)/K n b; the fold's two steps of n; steps == the algorithm's count");
    /* K = 8, n = 1e6 B, 1e9 B/s, a = 1 ms: lat 3 (1 + 1) ms; bw 6 ms + 1.75 ms */
    T_NEAR(model_swing_lat(8, 1e6, 1e9, 1e-3), 6e-3, 1e-15);
    T_NEAR(model_swing_bw(8, 1e6, 1e9, 1e-3), 7.75e-3, 1e-15);
    /* K = 6 (P = 4): lat (2 + 2)(1 + 1) ms; bw 6 ms + (1.5 + 2) ms */
    T_NEAR(model_swing_lat(6, 1e6, 1e9, 1e-3), 8e-3, 1e-15);
    T_NEAR(model_swing_bw(6, 1e6, 1e9, 1e-3), 9.5e-3, 1e-15);
    T_NEAR(model_swing_lat(1, 1e6, 1e9, 1e-3), 0, 1e-15);
    T_NEAR(model_query(MODEL_SWING_BW, MODEL_BYTES_OUT, 4, 1, 1e6, 1e9, 0), 1.5e6, 1e-6);
    T_TRUE(isnan(model_query(MODEL_SWING_LAT, MODEL_INGRESS, 4, 1, 1e6, 1e9, 0)));
    for (int k = 1; k <= 64; k++) {
        T_EQ_D(model_query(MODEL_SWING_LAT, MODEL_STEPS, k, 1, 1, 1, 0), swing_steps(k, 0));
        T_EQ_D(model_query(MODEL_SWING_BW, MODEL_STEPS, k, 1, 1, 1, 0), swing_steps(k, 1));
    }

    return t_done();
}
