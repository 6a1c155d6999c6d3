/* coll_check.h -- the harness of the all-reduce algorithms' tests
 * (test_rd.c, test_rabenseifner.c, test_tree.c, test_hring.c,
 * test_swing.c): K ranks of one algorithm run as threads on fake_peer.h's
 * rig, and the checks every algorithm faces alike, written once.
 *
 * A test states its algorithm once, behind a small interface (struct
 * algo_test: its peer table, its init / all-reduce / destroy in one call,
 * its coll --algo, the seed of its random inputs), and hands it to
 * algo_use. Then:
 *   - run_jobs (fake_peer.h's run_fn) runs k ranks of it: OP_ALLREDUCE,
 *     `rounds` all-reduces refilled between; or OP_GATHER, coll's gather
 *     of two doubles a rank then coll's all-reduce; over socketpairs or
 *     loopback listeners; a rank that fails aborts its transport (its
 *     partners are told), as ring_worker does;
 *   - job_value, job_fill: the inputs (fake_peer.h's small_value, or
 *     random_value with the test's seed), and one poisoned element
 *     (`poison`: a NaN or Inf on one rank, all-reduced unchecked with raw);
 *   - run_sums: a job, its sums checked (check_allreduce), freed;
 *   - gather_sums, nothing_moves, bytes_moved, rounding_wrong,
 *     poisoned_job (poisoned_cases: a table of them), coll_named: the
 *     gathers, K = 1 and n = 0, the bytes on every link, the rounding
 *     bound, a non-finite value named, coll's refusal and names;
 *   - fold_of, ceil_log2, index_of: the small arithmetic of the checks.
 *
 * Static functions in a header: include it once per test program, after
 * check.h and fake_peer.h. What differs between the algorithms (their
 * own summation order, their plan's shape, their bytes) stays in each test.
 */
#ifndef COLL_CHECK_H
#define COLL_CHECK_H

#include <float.h>
#include <math.h>

#include "coll/coll.h"

enum op { OP_ALLREDUCE, OP_GATHER };

/* What the harness asks of the algorithm's state (algo_test.call). */
enum algo_call { ALGO_INIT, ALGO_ALLREDUCE, ALGO_ALLREDUCE_RAW, ALGO_DESTROY };

/* The algorithm under test. */
struct algo_test {
    uint64_t seed;              /* random_value's, XOR the round */
    size_t size;                /* bytes of its state (struct rd, ...) */
    /* rank's peer table, for the test's settings of the moment (G, trees) */
    void (*plan)(int rank, int world, struct xport_plan *pl);
    /* coll's --algo (and G) for OP_GATHER */
    void (*coll)(struct coll_cfg *cc);
    /* on st (size bytes): ALGO_INIT for j (x: its transport), an
     * all-reduce of j's buffer (RAW: without the non-finite check),
     * ALGO_DESTROY; 0 or an error, in j->err */
    int (*call)(void *st, enum algo_call what, struct xport *x, struct rank_job *j);
};

static const struct algo_test *algo;    /* set by algo_use before any job */

__attribute__((unused)) static const int dtypes[2] = { DTYPE_F32, DTYPE_F64 };

/* algo_use: the jobs run a; the fake peer table's ports from base. */
FAKE_FN void algo_use(const struct algo_test *a, int base)
{
    algo = a;
    peers_init(base);
}

/* A poisoned job: rank `rank`'s element `at` is val; with raw that rank
 * all-reduces without the check (a member that sends on what it should
 * have refused). rank -1: none. */
static struct {
    int rank, raw;
    size_t at;
    double val;
} poison = { -1, 0, 0, 0.0 };

/* ---------------------------------------------------------- the jobs */

/* Rank r's element i in round `round`. */
FAKE_FN double job_value(enum fill f, int r, size_t i, uint64_t round)
{
    return f == FILL_RANDOM ? random_value(r, i, round ^ algo->seed) : small_value(r, i);
}

FAKE_FN void job_fill(struct rank_job *j, uint64_t round)
{
    for (size_t i = 0; i < j->n; i++)
        vec_set(j->buf, i, j->dtype, job_value(j->fill, j->rank, i, round));
    if (j->rank == poison.rank && poison.at < j->n)
        vec_set(j->buf, poison.at, j->dtype, poison.val);
}

/* job_gather: coll's gather over the algorithm (every rank's two doubles,
 * everywhere), then coll's all-reduce of j's buffer. */
FAKE_FN int job_gather(struct rank_job *j, struct xport *x)
{
    struct coll co;
    struct coll_cfg cc = { .kind = COLL_TCP, .rank = j->rank, .world = j->world,
                           .dtype = j->dtype, .max_n = j->n, .timeout = 10.0, .x = x };
    double mine[2] = { j->rank * 10.0 + 0.5, -(double)j->rank };
    int rc;

    algo->coll(&cc);
    rc = coll_init(&co, &cc, j->err);
    if (rc == 0) {
        rc = coll_gather(&co, j->gathered, mine, 2, j->err);
        if (rc == 0)
            rc = coll_allreduce(&co, j->buf, j->n, j->err);
        coll_destroy(&co);
    }
    return rc;
}

FAKE_FN void *job_main(void *arg)
{
    struct rank_job *j = arg;
    struct xport_plan plan;
    struct xport *x = NULL;
    void *st = NULL;
    int rc;

    algo->plan(j->rank, j->world, &plan);
    rc = job_connect(&x, &plan, j->rank, j->world, j->n, j->dtype, j->lfd, j->peers, j->fds,
                     &j->link, 10.0, j->err);
    if (rc == 0 && j->op == OP_GATHER) {
        rc = job_gather(j, x);
    } else if (rc == 0 && !(st = malloc(algo->size))) {
        rc = -ENOMEM;
    } else if (rc == 0) {
        enum algo_call ar = j->rank == poison.rank && poison.raw ? ALGO_ALLREDUCE_RAW
                            : ALGO_ALLREDUCE;
        rc = algo->call(st, ALGO_INIT, x, j);
        for (int k = 0; rc == 0 && k < j->rounds; k++) {
            if (k > 0)
                job_fill(j, (uint64_t)k);
            rc = algo->call(st, ar, x, j);
        }
        algo->call(st, ALGO_DESTROY, x, j);
    }
    free(st);
    if (rc != 0)
        xport_abort(x, j->err);     /* as ring_worker does: the partners are told */
    xport_close(x);
    j->rc = rc;
    return NULL;
}

/* run_jobs (a run_fn): k ranks of algo, partners connected by socketpairs
 * (or, with lfds, by xport_tcp_open on loopback); jobs[] filled in. */
FAKE_FN int run_jobs(struct rank_job *jobs, int k, size_t n, int dtype, enum fill f,
                     size_t piece, int rounds, int op, const int *lfds,
                     const struct proto_peer *peers)
{
    struct xport_plan pl[MAXK];

    memset(pl, 0, sizeof pl);       /* gcc -O2 saw it maybe unset (k <= 0) */
    if (jobs_init(jobs, k, n, dtype, op, f, piece, rounds, lfds, peers, job_fill) != 0)
        return -ENOMEM;
    for (int r = 0; r < k; r++)
        algo->plan(r, k, &pl[r]);
    if (!lfds && jobs_pair_plans(jobs, k, pl) != 0)
        return -1;
    threads_run(job_main, jobs, sizeof jobs[0], k);
    return 0;
}

/* ---------------------------------------------------------- the checks */

/* run_sums: k ranks all-reduce n dtype elements filled with f, `rounds`
 * times in pieces of `piece` bytes, on socketpairs: the last round's sums
 * right (check_allreduce with order_sum), every rank bit-identical. */
FAKE_FN void run_sums(int k, size_t n, int dtype, enum fill f, size_t piece, int rounds,
                      order_sum_fn order_sum)
{
    struct rank_job jobs[MAXK];

    T_EQ_I(run_jobs(jobs, k, n, dtype, f, piece, rounds, OP_ALLREDUCE, NULL, NULL), 0);
    T_EQ_U(check_allreduce(jobs, k, f, (uint64_t)(rounds - 1), order_sum), 0);
    free_jobs(jobs, k);
}

/* gather_sums: OP_GATHER on k ranks (777 f32): every rank gathered every
 * rank's two values exactly, and the all-reduce after it is right. */
FAKE_FN void gather_sums(int k, order_sum_fn order_sum)
{
    struct rank_job jobs[MAXK];
    size_t wrong = 0;

    T_EQ_I(run_jobs(jobs, k, 777, DTYPE_F32, FILL_SMALL, 0, 1, OP_GATHER, NULL, NULL), 0);
    T_EQ_U(check_allreduce(jobs, k, FILL_SMALL, 0, order_sum), 0);
    for (int r = 0; r < k; r++)
        for (int q = 0; q < k; q++)
            wrong += jobs[r].gathered[2 * q] != q * 10.0 + 0.5 ||
                     jobs[r].gathered[2 * q + 1] != -(double)q;
    T_EQ_U(wrong, 0);
    free_jobs(jobs, k);
}

/* nothing_moves: k ranks all-reduce n = 0 twice: all ok, not a byte sent. */
FAKE_FN void nothing_moves(int k)
{
    struct rank_job jobs[MAXK];

    T_EQ_I(run_jobs(jobs, k, 0, DTYPE_F32, FILL_SMALL, 0, 2, OP_ALLREDUCE, NULL, NULL), 0);
    for (int r = 0; r < k; r++) {
        T_EQ_I(jobs[r].rc, 0);
        T_EQ_U(jobs[r].link.bytes_out, 0);
    }
    free_jobs(jobs, k);
}

/* rounding_wrong: the elements of ranks 0 .. ranks-1's results (random
 * inputs of `round`) farther from the long-double sum of the
 * (dtype-rounded) inputs than a sum of `depth` additions may be:
 * depth u sum |v| (u: the dtype's unit roundoff). */
FAKE_FN size_t rounding_wrong(const struct rank_job *jobs, int k, uint64_t round, int depth,
                              int ranks)
{
    int dt = jobs[0].dtype;
    double u = dt == DTYPE_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
    size_t bad = 0;

    for (int q = 0; q < ranks; q++)
        for (size_t i = 0; i < jobs[q].n; i++) {
            long double exact = 0, mag = 0;
            for (int r = 0; r < k; r++) {
                double v = job_value(FILL_RANDOM, r, i, round);
                if (dt == DTYPE_F32)
                    v = (float)v;
                exact += v;
                mag += fabsl((long double)v);
            }
            if (fabsl((long double)vec_get(jobs[q].buf, i, dt) - exact) > depth * u * mag)
                bad++;
        }
    return bad;
}

/* bytes_moved: k ranks all-reduce n f32 (FILL_SMALL): rank r sent and
 * received want(r, k, n, &frames) payload bytes each way, and a header a
 * frame. Returns the busiest rank's payload bytes (for the model's
 * bytes_in). */
FAKE_FN uint64_t bytes_moved(int k, size_t n, uint64_t (*want)(int r, int k, size_t n,
                                                               uint64_t *frames))
{
    struct rank_job jobs[MAXK];
    uint64_t h = PROTO_HEADER_SIZE, most = 0;

    T_EQ_I(run_jobs(jobs, k, n, DTYPE_F32, FILL_SMALL, 0, 1, OP_ALLREDUCE, NULL, NULL), 0);
    for (int r = 0; r < k; r++) {
        uint64_t frames = 0, io = want(r, k, n, &frames);
        t_row("K %d rank %d", k, r);
        T_EQ_U(jobs[r].link.bytes_out, io + frames * h);
        T_EQ_U(jobs[r].link.bytes_in, io + frames * h);
        most = io > most ? io : most;
    }
    t_row("%s", "");
    free_jobs(jobs, k);
    return most;
}

/* A row of a table of poisoned jobs (poisoned_cases). */
struct poison_case {
    int k, setting;             /* K; the test's setting (G, trees), when it has one */
    int rank, raw, at_rank;     /* poison's rank and raw; the rank that must name it */
    size_t at;
    double val;
    const char *says;
};

/* poisoned_job: k ranks all-reduce 1001 f64 (FILL_SMALL) with `poison`
 * set (case c of a table): rank at_rank (-1: some rank) fails
 * ERR_NONFINITE, its error containing says (and says_too, when not NULL);
 * every other rank fails too, but the unchecked one (poison.raw: it may
 * finish); none hangs. */
FAKE_FN void poisoned_job(size_t c, int k, int at_rank, const char *says, const char *says_too)
{
    struct rank_job jobs[MAXK];
    int named = 0;

    T_EQ_I(run_jobs(jobs, k, 1001, DTYPE_F64, FILL_SMALL, 0, 1, OP_ALLREDUCE, NULL, NULL), 0);
    for (int q = 0; q < k; q++) {
        if ((at_rank < 0 || q == at_rank) && jobs[q].rc == ERR_NONFINITE &&
            strstr(jobs[q].err, says) && (!says_too || strstr(jobs[q].err, says_too)))
            named = 1;
        if (!(poison.raw && q == poison.rank) && jobs[q].rc == 0) {
            printf("     case %zu: rank %d ended with rc 0\n", c, q);
            T_TRUE(jobs[q].rc != 0);
        }
    }
    if (at_rank >= 0) {         /* the values, when the rank is known */
        T_EQ_I(jobs[at_rank].rc, ERR_NONFINITE);
        T_HAS(jobs[at_rank].err, says);
    }
    T_TRUE(named);
    free_jobs(jobs, k);
}

/* poisoned_cases: poisoned_job for each row of cases, the test's
 * setting (when not NULL) set to the row's first. */
FAKE_FN void poisoned_cases(const struct poison_case *cases, size_t n, int *setting)
{
    for (size_t c = 0; c < n; c++) {
        if (setting)
            *setting = cases[c].setting;
        poison.rank = cases[c].rank;
        poison.raw = cases[c].raw;
        poison.at = cases[c].at;
        poison.val = cases[c].val;
        poisoned_job(c, cases[c].k, cases[c].at_rank, cases[c].says, NULL);
    }
    poison.rank = -1;
    poison.raw = 0;
}

/* coll_named: coll with --algo a (G = group) refused on the device kind,
 * saying `refused`; accepted on the host, where its name and its
 * all-reduce's are `name`. */
FAKE_FN void coll_named(int a, int group, const char *refused, const char *name)
{
    struct coll co;
    struct coll_cfg cc = { .kind = COLL_TCP_CUDA, .algo = a, .rank = 0, .world = 1,
                           .dtype = DTYPE_F32, .max_n = 4, .timeout = 1.0, .group = group };
    char err[ERR_LEN];

    T_EQ_I(coll_init(&co, &cc, err), ERR_USAGE);
    T_HAS(err, refused);
    cc.kind = COLL_TCP;
    T_EQ_I(coll_init(&co, &cc, err), 0);
    T_STR(coll_algo_name(&co), name);
    T_STR(coll_op_algo(&co, COLL_ALL_REDUCE), name);
    coll_destroy(&co);
}

/* -------------------------------------------------------- arithmetic */

/* fold_of: P, the largest power of two <= k; *l = log2 P, *extra = k - P
 * (the ranks that fold into another first). */
FAKE_FN int fold_of(int k, int *l, int *extra)
{
    int p = 1;

    *l = 0;
    while (p * 2 <= k) {
        p *= 2;
        (*l)++;
    }
    *extra = k - p;
    return p;
}

FAKE_FN int ceil_log2(int k)
{
    int d = 0;
    while ((1 << d) < k)
        d++;
    return d;
}

/* index_of: x's place in list[0..n), or -1. */
FAKE_FN int index_of(const int *list, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (list[i] == x)
            return i;
    return -1;
}

#endif /* COLL_CHECK_H */
