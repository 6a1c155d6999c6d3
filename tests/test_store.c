/* test_store.c -- the parameter server's summation and step barrier,
 * without sockets: pushes fed in random pieces and interleavings give the
 * big-batch update; every refusal names worker and step and changes
 * nothing; NaN/Inf, a cut-off push and B = 0 fail the step with the weights
 * untouched; memory does not grow with K beyond per-worker bookkeeping.
 *
 *   store-1.x  happy paths     store-2.x  refusals     store-3.x  faults
 *   store-4.x  the mistakes the server makes (mistake.h): P pushes per
 *              worker per step (sync-every-micro), the undivided update
 *              (sum-not-mean)
 *   store-6.x  per-bucket release (RELEASE), and the sizes-only store
 *   store-7.x  per-worker buffers (the modes, mode.h): async's update
 *              from one push by its own count, backup's from the pushes
 *              used, a dropped push, refusals, the memory they cost
 */
#include "train/optim.h"
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps/store.h"
#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "wire/proto.h"
#include "base/rng.h"
#include "train/sgd.h"
#include "base/vec.h"
#include "train/workload.h"

#define KMAX 16

/* One worker's push as it will be fed: metadata and the element bytes. */
struct push {
    struct proto_push_meta meta;
    unsigned char *bytes;
    size_t len, pos;
    int begun, ended;
};

/* ---------------------------------------------------------------- feeding */

/* feed_rank_order: every push whole, in rank order. 0 or the first error. */
static int feed_rank_order(struct store *s, struct push *p, int k, uint64_t step)
{
    char err[ERR_LEN];
    int rc;

    for (int r = 0; r < k; r++) {
        if ((rc = store_push_begin(s, (uint32_t)r, step, &p[r].meta, s->offset, s->n, err)) ||
            (rc = store_push_data(s, (uint32_t)r, p[r].bytes, p[r].len, err)) ||
            (rc = store_push_end(s, (uint32_t)r, err))) {
            printf("     feed: %s\n", err);
            return rc;
        }
    }
    return 0;
}

/* piece: a random piece length, often 1 byte or one that splits an
 * element, sometimes everything left. */
static size_t piece(struct rng *rg, size_t left, size_t es)
{
    size_t len;

    switch (rng_next(rg) % 5) {
    case 0: len = 1; break;
    case 1: len = 1 + rng_next(rg) % (es - 1); break;           /* splits */
    case 2: len = 1 + rng_next(rg) % (3 * es + 5); break;
    case 3: len = 1 + rng_next(rg) % (left ? left : 1); break;
    default: len = left; break;
    }
    return len < left ? len : left;
}

/* feed_random: the K pushes interleaved at random, in random pieces; a
 * worker's push_end comes whenever it is next picked after its last byte. */
static int feed_random(struct store *s, struct push *p, int k, uint64_t step, struct rng *rg)
{
    char err[ERR_LEN];
    int pending = k, rc;

    for (int r = 0; r < k; r++)
        p[r].pos = 0, p[r].begun = p[r].ended = 0;
    while (pending > 0) {
        int r = (int)(rng_next(rg) % (uint64_t)k);
        struct push *q = &p[r];

        if (q->ended)
            continue;
        if (!q->begun) {
            rc = store_push_begin(s, (uint32_t)r, step, &q->meta, s->offset, s->n, err);
            q->begun = 1;
        } else if (q->pos == q->len) {
            rc = store_push_end(s, (uint32_t)r, err);
            q->ended = 1;
            pending--;
        } else {
            size_t len = piece(rg, q->len - q->pos, s->elem_size);

            rc = store_push_data(s, (uint32_t)r, q->bytes + q->pos, len, err);
            q->pos += len;
        }
        if (rc) {
            printf("     feed: %s\n", err);
            return rc;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- pushes */

static void pushes_free(struct push *p, int k)
{
    for (int r = 0; r < k; r++) {
        free(p[r].bytes);
        p[r].bytes = NULL;
    }
}

/* pushes_make: each worker's gradient SUM over its share of step `step`,
 * at weights w, as workers compute it. shares: NULL (equal) or weights. */
static void pushes_make(const struct workload *wl, const void *w, uint64_t step,
                        int k, const double *shares, struct push *p)
{
    size_t es = dtype_size(wl->dtype);

    for (int r = 0; r < k; r++) {
        uint64_t lo, hi;

        workload_split(wl->batch, k, r, shares, &lo, &hi);
        p[r].len = wl->n * es;
        p[r].bytes = calloc(wl->n, es);
        p[r].meta.examples = hi - lo;
        p[r].meta.loss = 0.0;
        workload_grad_add(wl, w, step, lo, hi, p[r].bytes, &p[r].meta.loss);
    }
}

/* reference: w - lr * (g_0 + g_1 + ... in rank order) / B, in f64, the
 * same expression sgd_step evaluates. OUT: ref[n], and tol[n] (if not
 * NULL): 1e-15 of the magnitudes that went into each element. */
static uint64_t reference(const double *w, const struct push *p, int k, size_t n,
                          double lr, double *ref, double *tol)
{
    uint64_t b = 0;

    for (int r = 0; r < k; r++)
        b += p[r].meta.examples;
    for (size_t i = 0; i < n; i++) {
        double sum = 0.0, mag = 0.0, g;

        for (int r = 0; r < k; r++) {
            memcpy(&g, p[r].bytes + i * sizeof g, sizeof g);
            sum += g;
            mag += fabs(g);
        }
        ref[i] = w[i] - lr * (sum / (double)b);
        if (tol)
            tol[i] = 1e-15 * (fabs(w[i]) + lr * (mag / (double)b));
    }
    return b;
}

/* ---------------------------------------------------------------- 1.x */

/* run_linreg: S steps of linreg with K workers, fed in rank order
 * (random == 0) or at random; checks every step against the reference. */
static void run_linreg(int k, const double *shares, int random, uint64_t seed)
{
    struct workload wl;
    struct workload_cfg wc = { .kind = WORKLOAD_LINREG, .dtype = DTYPE_F64, .seed = 7 };
    struct store s;
    struct store_cfg sc = { .dtype = DTYPE_F64, .world = (uint32_t)k, .lr = 0.05 };
    struct push p[KMAX];
    struct rng rg;
    char err[ERR_LEN];
    double ref[64], tol[64], w[64];

    rng_seed(&rg, seed);
    T_EQ_I(workload_create(&wl, &wc), 0);
    sc.n = wl.n;
    T_EQ_I(store_init(&s, &sc, err), 0);
    for (uint64_t step = 0; step < 5; step++) {
        struct store_applied ap;
        uint64_t b;
        double loss = 0.0;

        memcpy(w, store_weights(&s), wl.n * sizeof *w);
        pushes_make(&wl, w, step, k, shares, p);
        b = reference(w, p, k, wl.n, sc.lr, ref, tol);
        for (int r = 0; r < k; r++)
            loss += p[r].meta.loss;
        T_EQ_I(random ? feed_random(&s, p, k, step, &rg) : feed_rank_order(&s, p, k, step), 0);
        T_TRUE(store_step_ready(&s));
        T_EQ_U(store_pushes_done(&s), (unsigned)k);
        T_EQ_I(store_apply(&s, &ap, err), 0);
        T_EQ_U(ap.step, step);
        T_EQ_U(ap.batch, b);
        T_EQ_U(ap.batch, wl.batch);     /* B is the sum of the counts */
        T_EQ_D(ap.loss, loss / (double)b);
        T_EQ_U(store_step(&s), step + 1);
        T_EQ_U(store_pushes_done(&s), 0);
        memcpy(w, store_weights(&s), wl.n * sizeof *w);
        if (random) {
            for (size_t i = 0; i < wl.n; i++)
                T_NEAR(w[i], ref[i], tol[i]);
        } else {
            T_TRUE(memcmp(w, ref, wl.n * sizeof *w) == 0);
            for (size_t i = 0; i < wl.n; i++)
                T_EQ_D(w[i], ref[i]);
        }
        pushes_free(p, k);
    }
    /* The loss went down: the update has the right sign and scale. */
    T_TRUE(workload_loss(&wl, store_weights(&s)) < workload_loss(&wl, (double[64]){ 0 }));
    store_destroy(&s);
    workload_destroy(&wl);
}

/* run_synthetic: exact equality with the closed form F(0, B) for any
 * arrival order and piece split. */
static void run_synthetic(int dtype, int k, int trials)
{
    struct workload wl;
    struct workload_cfg wc = { .kind = WORKLOAD_SYNTHETIC, .dtype = dtype, .seed = 11,
                               .params = 1000, .batch = 1000 };
    struct store s;
    struct store_cfg sc = { .dtype = dtype, .world = (uint32_t)k, .lr = 0.25 };
    struct push p[KMAX];
    struct rng rg;
    char err[ERR_LEN];
    size_t es = dtype_size(dtype);

    rng_seed(&rg, 99);
    T_EQ_I(workload_create(&wl, &wc), 0);
    sc.n = wl.n;
    T_EQ_I(store_init(&s, &sc, err), 0);
    for (uint64_t step = 0; step < (uint64_t)trials; step++) {
        void *expect = malloc(wl.n * es), *f = calloc(wl.n, es);

        /* The closed form: one range [0, B), then the one division. */
        memcpy(expect, store_weights(&s), wl.n * es);
        workload_grad_add(&wl, expect, step, 0, wl.batch, f, NULL);
        T_EQ_I(sgd_step(expect, f, wl.n, dtype, sc.lr, wl.batch), 0);
        pushes_make(&wl, store_weights(&s), step, k, NULL, p);
        T_EQ_I(feed_random(&s, p, k, step, &rg), 0);
        T_EQ_I(store_apply(&s, NULL, err), 0);
        T_TRUE(memcmp(store_weights(&s), expect, wl.n * es) == 0);
        pushes_free(p, k);
        free(expect);
        free(f);
    }
    store_destroy(&s);
    workload_destroy(&wl);
}

static void test_happy(void)
{
    T_CASE("store-1.1", "K=4 linreg f64, random pieces and interleavings: big-batch update within 1e-15");
    for (uint64_t seed = 1; seed <= 20; seed++)
        run_linreg(4, NULL, 1, seed);

    T_CASE("store-1.2", "K=4 linreg f64 in rank order, whole pushes: bit-identical to the reference");
    run_linreg(4, NULL, 0, 0);

    T_CASE("store-1.3", "synthetic f64, K=4 and K=7: exactly F(0,B) in any order and split");
    run_synthetic(DTYPE_F64, 4, 30);
    run_synthetic(DTYPE_F64, 7, 10);

    T_CASE("store-1.4", "synthetic f32: exactly F(0,B) in any order and split");
    run_synthetic(DTYPE_F32, 4, 30);

    T_CASE("store-1.5", "unequal example counts: B is the sum of the counts, not K times one");
    run_linreg(4, (const double[]){ 1, 2, 3, 10 }, 0, 0);
    run_linreg(4, (const double[]){ 1, 2, 3, 10 }, 1, 5);
}

/* ---------------------------------------------------------------- 2.x */

#define N2 8

/* A small store for the refusal cases: K=4, n=8 owned from element 100,
 * weights 1..8, and pushes with counts 1..4 and gradients r + i/8. */
struct small {
    struct store s;
    struct push p[4];
    double w0[N2];
    double g[4][N2];
};

static void small_init_batch(struct small *t, uint64_t batch, uint64_t count_max)
{
    struct store_cfg sc = { .n = N2, .offset = 100, .dtype = DTYPE_F64, .world = 4,
                            .lr = 0.5, .weights = t->w0, .batch = batch,
                            .count_max = count_max };
    char err[ERR_LEN];

    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < N2; i++)
        t->w0[i] = 1.0 + (double)i;
    for (int r = 0; r < 4; r++) {
        for (size_t i = 0; i < N2; i++)
            t->g[r][i] = (double)r + (double)i / 8.0;
        t->p[r].bytes = (unsigned char *)t->g[r];
        t->p[r].len = sizeof t->g[r];
        t->p[r].meta.examples = (uint64_t)r + 1;
        t->p[r].meta.loss = 1.0;
    }
    T_EQ_I(store_init(&t->s, &sc, err), 0);
}

static void small_init(struct small *t)
{
    small_init_batch(t, 0, 0);
}

/* small_expect_applied: after the step, the weights are the reference. */
static void small_expect_applied(struct small *t)
{
    double ref[N2];
    char err[ERR_LEN];
    struct store_applied ap;

    reference(t->w0, t->p, 4, N2, 0.5, ref, NULL);
    T_TRUE(store_step_ready(&t->s));
    T_EQ_I(store_apply(&t->s, &ap, err), 0);
    T_EQ_U(ap.batch, 10);
    T_EQ_D(ap.loss, 0.4);
    T_TRUE(memcmp(store_weights(&t->s), ref, sizeof ref) == 0);
}

static void small_expect_untouched(struct small *t)
{
    T_TRUE(memcmp(store_weights(&t->s), t->w0, sizeof t->w0) == 0);
}

static int begin(struct small *t, uint32_t r, uint64_t step, char *err)
{
    return store_push_begin(&t->s, r, step, &t->p[r < 4 ? r : 0].meta, 100, N2, err);
}

/* small_push: worker r's whole push of step 0 (the pushes of t), taken. */
static void small_push(struct small *t, uint32_t r)
{
    char err[ERR_LEN];

    T_EQ_I(begin(t, r, 0, err), 0);
    T_EQ_I(store_push_data(&t->s, r, t->p[r].bytes, t->p[r].len, err), 0);
    T_EQ_I(store_push_end(&t->s, r, err), 0);
}

/* small_case: opens case id on a fresh small store. */
static void small_case(const char *id, const char *name, struct small *t)
{
    T_CASE(id, name);
    small_init(t);
}

/* applied_end: the step applied as small_expect_applied says; then the
 * store destroyed. */
static void applied_end(struct small *t)
{
    small_expect_applied(t);
    store_destroy(&t->s);
}

static void test_refusals(void)
{
    struct small t;
    char err[ERR_LEN];

    small_case("store-2.1", "rank >= K refused naming worker and step; the step still completes", &t);
    T_EQ_I(store_push_begin(&t.s, 4, 0, &t.p[0].meta, 100, N2, err), ERR_PROTO_RANK);
    T_HAS(err, "worker 4");
    T_HAS(err, "step 0");
    T_EQ_I(store_push_data(&t.s, 9, "x", 1, err), ERR_PROTO_RANK);
    T_HAS(err, "worker 9");
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    applied_end(&t);

    small_case("store-2.2", "duplicate push for a step refused (after and during the first)", &t);
    T_EQ_I(feed_rank_order(&t.s, t.p, 2, 0), 0);
    T_EQ_I(begin(&t, 1, 0, err), ERR_PROTO_FIELD);
    T_HAS(err, "worker 1");
    T_HAS(err, "step 0");
    T_HAS(err, "duplicate");
    T_EQ_I(begin(&t, 2, 0, err), 0);
    T_EQ_I(begin(&t, 2, 0, err), ERR_PROTO_FIELD);
    T_HAS(err, "worker 2");
    T_HAS(err, "duplicate");
    T_EQ_I(store_push_data(&t.s, 2, t.p[2].bytes, t.p[2].len, err), 0);
    T_EQ_I(store_push_end(&t.s, 2, err), 0);
    small_push(&t, 3);
    applied_end(&t);

    small_case("store-2.3", "stale step refused, naming both steps", &t);
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    small_expect_applied(&t);
    T_EQ_I(begin(&t, 3, 0, err), ERR_PROTO_FIELD);
    T_HAS(err, "worker 3: push for step 0 while the server is at step 1 (stale)");
    T_EQ_U(store_pushes_done(&t.s), 0);
    store_destroy(&t.s);

    small_case("store-2.4", "future step refused; the step still completes", &t);
    T_EQ_I(begin(&t, 2, 5, err), ERR_PROTO_FIELD);
    T_HAS(err, "worker 2: push for step 5 while the server is at step 0 (future)");
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    T_EQ_I(begin(&t, 2, 1, err), ERR_PROTO_FIELD);     /* READY, not applied yet */
    T_HAS(err, "(future)");
    applied_end(&t);

    small_case("store-2.5", "wrong element range refused (first, count)", &t);
    T_EQ_I(store_push_begin(&t.s, 1, 0, &t.p[1].meta, 0, N2, err), ERR_PROTO_FIELD);
    T_HAS(err, "worker 1");
    T_HAS(err, "step 0");
    T_HAS(err, "[100, 108)");
    T_EQ_I(store_push_begin(&t.s, 1, 0, &t.p[1].meta, 100, N2 - 1, err), ERR_PROTO_SIZE);
    T_HAS(err, "worker 1");
    T_EQ_I(store_push_begin(&t.s, 1, 0, &t.p[1].meta, 100, N2 + 1, err), ERR_PROTO_SIZE);
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    applied_end(&t);

    small_case("store-2.6", "more bytes than announced refused, nothing of them added", &t);
    {
        unsigned char big[sizeof t.g[0] + 1];

        memcpy(big, t.g[0], sizeof t.g[0]);
        big[sizeof t.g[0]] = 0x7f;
        T_EQ_I(begin(&t, 0, 0, err), 0);
        T_EQ_I(store_push_data(&t.s, 0, big, 3, err), 0);
        T_EQ_I(store_push_data(&t.s, 0, big + 3, sizeof big - 3, err), ERR_PROTO_SIZE);
        T_HAS(err, "worker 0");
        T_HAS(err, "step 0");
        T_EQ_I(store_push_data(&t.s, 0, big + 3, sizeof big - 4, err), 0);
        T_EQ_I(store_push_data(&t.s, 0, big, 1, err), ERR_PROTO_SIZE);
        T_EQ_I(store_push_end(&t.s, 0, err), 0);
    }
    for (uint32_t r = 1; r < 4; r++) {
        small_push(&t, r);
    }
    applied_end(&t);

    small_case("store-2.7", "push_end before all bytes refused; the push can still finish", &t);
    T_EQ_I(begin(&t, 3, 0, err), 0);
    T_EQ_I(store_push_end(&t.s, 3, err), ERR_PROTO_SIZE);
    T_HAS(err, "worker 3: push for step 0 ended after 0 of 64 bytes");
    T_EQ_I(store_push_data(&t.s, 3, t.p[3].bytes, 13, err), 0);
    T_EQ_I(store_push_end(&t.s, 3, err), ERR_PROTO_SIZE);
    T_HAS(err, "after 13 of 64 bytes");
    T_EQ_I(store_push_data(&t.s, 3, t.p[3].bytes + 13, 64 - 13, err), 0);
    T_EQ_I(store_push_end(&t.s, 3, err), 0);
    T_EQ_I(store_push_end(&t.s, 3, err), ERR_PROTO_FIELD);    /* no push in progress */
    T_HAS(err, "worker 3");
    T_EQ_I(store_push_data(&t.s, 1, "x", 1, err), ERR_PROTO_FIELD);
    T_HAS(err, "worker 1: push data at step 0 outside a push");
    for (uint32_t r = 0; r < 3; r++) {
        small_push(&t, r);
    }
    applied_end(&t);

    small_case("store-2.8", "apply before all K pushes refused (-EAGAIN), naming a missing worker", &t);
    T_EQ_I(store_apply(&t.s, NULL, err), -EAGAIN);
    T_HAS(err, "worker 0");
    T_HAS(err, "step 0");
    T_EQ_I(feed_rank_order(&t.s, t.p, 2, 0), 0);
    small_push(&t, 3);
    T_TRUE(!store_step_ready(&t.s));
    T_EQ_I(store_apply(&t.s, NULL, err), -EAGAIN);
    T_HAS(err, "worker 2: step 0 cannot be applied yet: 3 of 4");
    small_expect_untouched(&t);
    small_push(&t, 2);
    applied_end(&t);

    small_case("store-2.9", "a non-finite loss is refused at push_begin", &t);
    t.p[1].meta.loss = NAN;
    T_EQ_I(begin(&t, 1, 0, err), ERR_NONFINITE);
    T_HAS(err, "worker 1");
    T_HAS(err, "step 0");
    t.p[1].meta.loss = 1.0;
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    applied_end(&t);

    T_CASE("store-2.10", "bad configuration refused at init (n 0, K 0, dtype, lr)");
    {
        struct store s;
        struct store_cfg bad[] = {
            { .n = 0, .dtype = DTYPE_F64, .world = 2, .lr = 0.1 },
            { .n = 4, .dtype = DTYPE_F64, .world = 0, .lr = 0.1 },
            { .n = 4, .dtype = DTYPE_F64, .world = PROTO_MAX_WORLD + 1, .lr = 0.1 },
            { .n = 4, .dtype = 9, .world = 2, .lr = 0.1 },
            { .n = 4, .dtype = DTYPE_F32, .world = 2, .lr = NAN },
            { .n = 4, .offset = UINT64_MAX - 2, .dtype = DTYPE_F32, .world = 2, .lr = 0.1 },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            T_EQ_I(store_init(&s, &bad[i], err), ERR_USAGE);
            T_HAS(err, "store: bad configuration");
            store_destroy(&s);
        }
    }

    small_case("store-2.11", "a worker with 0 examples is counted by the barrier; B sums the rest", &t);
    t.p[0].meta.examples = 0;
    memset(t.g[0], 0, sizeof t.g[0]);
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    {
        struct store_applied ap;
        double ref[N2];

        reference(t.w0, t.p, 4, N2, 0.5, ref, NULL);
        T_EQ_I(store_apply(&t.s, &ap, err), 0);
        T_EQ_U(ap.batch, 9);
        T_TRUE(memcmp(store_weights(&t.s), ref, sizeof ref) == 0);
    }
    store_destroy(&t.s);
}

/* ---------------------------------------------------------------- 3.x */

/* failed_end: the store is FAILED with code, weights untouched, and
 * nothing more is accepted; then destroyed. */
static void failed_end(struct small *t, int code)
{
    char err[ERR_LEN];
    const char *msg = NULL;

    T_EQ_I(store_failed(&t->s, &msg), code);
    T_TRUE(msg && msg[0]);
    T_TRUE(!store_step_ready(&t->s));
    T_EQ_I(store_apply(&t->s, NULL, err), code);
    T_HAS(err, "already failed");
    T_EQ_I(begin(t, 3, 0, err), code);
    T_EQ_I(store_push_abort(&t->s, 3, err), code);
    small_expect_untouched(t);
    T_EQ_U(store_step(&t->s), 0);
    store_destroy(&t->s);
}

/* nonfinite: worker 2's element 5 becomes v, fed as pieces split at `cut`
 * bytes (0: one piece); the other workers complete their pushes. */
static void nonfinite(double v, size_t cut)
{
    struct small t;
    char err[ERR_LEN];
    const unsigned char *b;

    small_init(&t);
    t.g[2][5] = v;
    b = t.p[2].bytes;
    T_EQ_I(feed_rank_order(&t.s, t.p, 2, 0), 0);
    small_push(&t, 3);
    T_EQ_I(begin(&t, 2, 0, err), 0);
    if (cut) {
        T_EQ_I(store_push_data(&t.s, 2, b, cut, err), 0);      /* element 5 incomplete */
        T_EQ_I(store_push_data(&t.s, 2, b + cut, 64 - cut, err), ERR_NONFINITE);
    } else {
        T_EQ_I(store_push_data(&t.s, 2, b, 64, err), ERR_NONFINITE);
    }
    T_HAS(err, "worker 2");
    T_HAS(err, "step 0");
    T_HAS(err, "element 105");
    failed_end(&t, ERR_NONFINITE);
}

/* test_counts: COUNTS (store.h). The small store's counts 1..4 sum to 10. */
static void test_counts(void)
{
    struct small t;
    char err[ERR_LEN];

    T_CASE("store-5.1", "counts that sum to B (10) pass the check and apply as before");
    small_init_batch(&t, 10, 0);
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    applied_end(&t);

    T_CASE("store-5.2", "a push counting more than B (2^62) fails the step at once, naming "
           "worker and step; weights untouched");
    small_init_batch(&t, 10, 0);
    t.p[1].meta.examples = (uint64_t)1 << 62;
    T_EQ_I(feed_rank_order(&t.s, t.p, 1, 0), 0);
    T_EQ_I(begin(&t, 1, 0, err), ERR_PROTO_FIELD);
    T_HAS(err, "worker 1");
    T_HAS(err, "step 0");
    T_HAS(err, "more than the whole batch 10");
    failed_end(&t, ERR_PROTO_FIELD);

    T_CASE("store-5.3", "counts summing to 9, not B = 10: the step fails at apply naming the "
           "step and every worker's count; weights untouched");
    small_init_batch(&t, 10, 0);
    t.p[3].meta.examples = 3;
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    T_EQ_I(store_apply(&t.s, NULL, err), ERR_PROTO_FIELD);
    T_HAS(err, "step 0");
    T_HAS(err, "sum to 9, not B = 10");
    T_HAS(err, "worker 3: 3");
    failed_end(&t, ERR_PROTO_FIELD);

    T_CASE("store-5.4", "mean-of-means' own check: each worker counts at most 1, the sum is K");
    small_init_batch(&t, 4, 1);
    for (int r = 0; r < 4; r++)
        t.p[r].meta.examples = 1;
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    T_EQ_I(store_apply(&t.s, NULL, err), 0);
    store_destroy(&t.s);
    small_init_batch(&t, 4, 1);
    T_EQ_I(begin(&t, 1, 0, err), ERR_PROTO_FIELD);   /* worker 1 counts 2 */
    T_HAS(err, "worker 1");
    T_HAS(err, "more than a worker may count, 1");
    store_destroy(&t.s);
}

static void test_faults(void)
{
    struct small t;
    char err[ERR_LEN];

    T_CASE("store-3.1", "NaN in a gradient: ERR_NONFINITE naming worker and step; weights untouched");
    nonfinite(NAN, 0);

    T_CASE("store-3.2", "+Inf and -Inf likewise");
    nonfinite(INFINITY, 0);
    nonfinite(-INFINITY, 0);

    T_CASE("store-3.3", "-Inf split across two pieces is caught when it completes");
    nonfinite(-INFINITY, 5 * 8 + 3);
    nonfinite(NAN, 5 * 8 + 7);

    T_CASE("store-3.4", "NaN in f32, fed one byte at a time");
    {
        struct store s;
        struct store_cfg sc = { .n = 3, .dtype = DTYPE_F32, .world = 1, .lr = 1 };
        float g[3] = { 1.0f, NAN, 2.0f };
        struct proto_push_meta m = { 1, 0.0 };
        const unsigned char *b = (const unsigned char *)g;
        int rc = 0;
        size_t i;

        T_EQ_I(store_init(&s, &sc, err), 0);
        T_EQ_I(store_push_begin(&s, 0, 0, &m, 0, 3, err), 0);
        for (i = 0; i < sizeof g && rc == 0; i++)
            rc = store_push_data(&s, 0, b + i, 1, err);
        T_EQ_I(rc, ERR_NONFINITE);
        T_EQ_U(i, 8);                   /* the last byte of element 1 */
        T_HAS(err, "worker 0: push for step 0: gradient element 1 is not finite");
        T_EQ_I(store_apply(&s, NULL, err), ERR_NONFINITE);
        T_EQ_D(((const float *)store_weights(&s))[0], 0.0);
        store_destroy(&s);
    }

    small_case("store-3.5", "a push cut off mid-frame fails the step; weights untouched", &t);
    T_EQ_I(feed_rank_order(&t.s, t.p, 3, 0), 0);
    T_EQ_I(begin(&t, 3, 0, err), 0);
    T_EQ_I(store_push_data(&t.s, 3, t.p[3].bytes, 21, err), 0);
    T_EQ_I(store_push_abort(&t.s, 3, err), ERR_EOF);
    T_HAS(err, "worker 3: push for step 0 cut off after 21 of 64 bytes");
    failed_end(&t, ERR_EOF);

    small_case("store-3.6", "a worker lost between pushes also fails the step", &t);
    T_EQ_I(feed_rank_order(&t.s, t.p, 3, 0), 0);
    T_EQ_I(store_push_abort(&t.s, 1, err), ERR_EOF);
    T_HAS(err, "worker 1: lost during step 0");
    failed_end(&t, ERR_EOF);

    small_case("store-3.7", "B = 0 (every count 0) fails the step; weights untouched", &t);
    for (int r = 0; r < 4; r++)
        t.p[r].meta.examples = 0;
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    T_EQ_I(store_apply(&t.s, NULL, err), ERR_PROTO_FIELD);
    T_HAS(err, "step 0");
    T_HAS(err, "B = 0");
    failed_end(&t, ERR_PROTO_FIELD);

    small_case("store-3.8", "finite gradients whose sum overflows fail the step at apply", &t);
    for (int r = 0; r < 4; r++)
        t.g[r][6] = 1e308;
    T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
    T_EQ_I(store_apply(&t.s, NULL, err), ERR_NONFINITE);
    T_HAS(err, "step 0");
    T_HAS(err, "element 106");
    failed_end(&t, ERR_NONFINITE);

    T_CASE("store-3.9", "memory: two n-element buffers, and K adds only small per-worker state");
    {
        struct store a, b;
        struct store_cfg c = { .n = 1u << 20, .dtype = DTYPE_F64, .world = 2, .lr = 0.1 };
        size_t two = 2 * c.n * sizeof(double);

        T_EQ_I(store_init(&a, &c, err), 0);
        c.world = 16;
        T_EQ_I(store_init(&b, &c, err), 0);
        T_LE((double)two, (double)store_bytes(&a));
        T_LE((double)store_bytes(&a), (double)(two + 1024 + 2 * 256));
        T_LE((double)(store_bytes(&b) - store_bytes(&a)), (double)(14 * 256));
        printf("     store_bytes: K=2 %zu, K=16 %zu (n = %zu f64)\n",
               store_bytes(&a), store_bytes(&b), c.n);
        store_destroy(&a);
        store_destroy(&b);
    }
}

/* ---------------------------------------------------------------- 4.x */

/* When set, push_whole sends each pass as 1 to 4 buckets of random sizes,
 * from the top down, the count and loss with the first, the highest
 * (store.h BUCKETS). */
static int bucketed;

/* push_range: one push of elements [a, b) (from the store's offset) of
 * worker r's pass, fed in random pieces. */
static int push_range(struct store *s, uint32_t r, uint64_t step,
                      const struct proto_push_meta *meta, const unsigned char *bytes,
                      size_t a, size_t b, struct rng *rg, char *err)
{
    size_t pos = a * s->elem_size, end = b * s->elem_size;
    int rc;

    if ((rc = store_push_begin(s, r, step, meta, s->offset + a, b - a, err)) != 0)
        return rc;
    while (pos < end) {
        size_t n = piece(rg, end - pos, s->elem_size);
        if ((rc = store_push_data(s, r, bytes + pos, n, err)) != 0)
            return rc;
        pos += n;
    }
    return store_push_end(s, r, err);
}

/* push_whole: one pass from worker r (len = n elements' bytes): one push,
 * or with `bucketed` several. */
static int push_whole(struct store *s, uint32_t r, uint64_t step,
                      const struct proto_push_meta *meta, const unsigned char *bytes,
                      size_t len, struct rng *rg, char *err)
{
    const struct proto_push_meta none = { 0, 0.0 };
    size_t top = len / s->elem_size;
    int left = bucketed ? 1 + (int)(rng_next(rg) % 4) : 1, rc;

    while (left-- > 1 && top > 1) {
        size_t lo = 1 + (size_t)(rng_next(rg) % (top - 1));     /* [lo, top), lo >= 1 */
        if ((rc = push_range(s, r, step, meta, bytes, lo, top, rg, err)) != 0)
            return rc;
        meta = &none;                   /* the count travels with the first push */
        if (store_step_ready(s) || store_pushes_owed(s, r) == 0)
            return ERR_MISMATCH;        /* a bucket above 0 must not end the pass */
        top = lo;
    }
    return push_range(s, r, step, meta, bytes, 0, top, rg, err);
}

/* run_micro_pushes: K workers, each pushing its m micro-batch sums as m
 * pushes of the step (the workers in a random order each round), against
 * the closed form F(0, B): exact, for synthetic f32. */
static void run_micro_pushes(int k, int m, const double *shares, int steps)
{
    struct workload wl;
    struct workload_cfg wc = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F32, .seed = 3,
                               .params = 500, .batch = 1000 };
    struct store s;
    struct store_cfg sc = { .dtype = DTYPE_F32, .world = (uint32_t)k, .lr = 0.25,
                            .pushes_per_step = (uint32_t)m };
    struct rng rg;
    char err[ERR_LEN];

    rng_seed(&rg, 17);
    T_EQ_I(workload_create(&wl, &wc), 0);
    sc.n = wl.n;
    T_EQ_I(store_init(&s, &sc, err), 0);
    for (uint64_t step = 0; step < (uint64_t)steps; step++) {
        float *expect = malloc(wl.n * 4), *f = calloc(wl.n, 4), *g = malloc(wl.n * 4);
        struct store_applied ap;
        double loss = 0.0;

        memcpy(expect, store_weights(&s), wl.n * 4);
        workload_grad_add(&wl, expect, step, 0, wl.batch, f, NULL);
        T_EQ_I(sgd_step(expect, f, wl.n, DTYPE_F32, sc.lr, wl.batch), 0);
        for (int j = 0; j < m; j++) {
            int order[KMAX];

            for (int r = 0; r < k; r++)
                order[r] = r;
            for (int r = k - 1; r > 0; r--) {
                int x = (int)(rng_next(&rg) % (uint64_t)(r + 1)), y = order[r];
                order[r] = order[x];
                order[x] = y;
            }
            T_TRUE(!store_step_ready(&s));
            T_EQ_U(store_pushes_done(&s), 0);
            for (int i = 0; i < k; i++) {
                int r = order[i];
                uint64_t lo, hi, a, b;
                struct proto_push_meta meta = { 0, 0.0 };

                T_EQ_U(store_pushes_owed(&s, (uint32_t)r), (unsigned)(m - j));
                workload_split(wl.batch, k, r, shares, &lo, &hi);
                workload_split(hi - lo, m, j, NULL, &a, &b);
                memset(g, 0, wl.n * 4);
                workload_grad_add(&wl, NULL, step, lo + a, lo + b, g, &meta.loss);
                meta.examples = b - a;
                meta.loss = 1.0 + (double)j;    /* synthetic's loss is 0: make one */
                loss += meta.loss;
                if (push_whole(&s, (uint32_t)r, step, &meta, (unsigned char *)g, wl.n * 4, &rg,
                               err) != 0)
                    printf("     push: %s\n", err);
            }
        }
        T_TRUE(store_step_ready(&s));
        T_EQ_U(store_pushes_done(&s), (unsigned)k);
        T_EQ_U(store_pushes_owed(&s, 0), 0);
        T_EQ_I(store_apply(&s, &ap, err), 0);
        T_EQ_U(ap.batch, wl.batch);             /* the counts of all K * m pushes */
        T_EQ_U(ap.divisor, wl.batch);
        T_EQ_D(ap.loss, loss / (double)wl.batch);
        T_TRUE(memcmp(store_weights(&s), expect, wl.n * 4) == 0);
        free(expect);
        free(f);
        free(g);
    }
    store_destroy(&s);
    workload_destroy(&wl);
}

static void test_mistakes(void)
{
    struct small t;
    char err[ERR_LEN];

    T_CASE("store-4.1", "4 pushes per worker per step (sync-every-micro): one update, exactly F(0,B)");
    run_micro_pushes(4, 4, NULL, 5);
    run_micro_pushes(3, 5, (const double[]){ 5, 1, 3 }, 3);
    run_micro_pushes(4, 1, NULL, 2);            /* P = 1 spelled out: the default */

    T_CASE("store-4.2", "P = 2: a third push, or one while the last still arrives, is refused");
    {
        struct store_cfg sc = { .n = N2, .offset = 100, .dtype = DTYPE_F64, .world = 4,
                                .lr = 0.5, .pushes_per_step = 2 };
        struct proto_push_meta meta = { 1, 1.0 };
        double g[N2] = { 0 };
        struct store s;

        T_EQ_I(store_init(&s, &sc, err), 0);
        T_EQ_I(store_push_begin(&s, 1, 0, &meta, 100, N2, err), 0);
        T_EQ_I(store_push_begin(&s, 1, 0, &meta, 100, N2, err), ERR_PROTO_FIELD);
        T_HAS(err, "worker 1");
        T_HAS(err, "push 2 for step 0, which takes 2 per worker");
        T_HAS(err, "still arriving");
        T_EQ_I(store_push_data(&s, 1, g, sizeof g, err), 0);
        T_EQ_I(store_push_end(&s, 1, err), 0);
        T_EQ_U(store_pushes_owed(&s, 1), 1);
        T_EQ_I(store_push_begin(&s, 1, 0, &meta, 100, N2, err), 0);
        T_EQ_I(store_push_data(&s, 1, g, sizeof g, err), 0);
        T_EQ_I(store_push_end(&s, 1, err), 0);
        T_EQ_U(store_pushes_owed(&s, 1), 0);
        T_EQ_U(store_pushes_done(&s), 1);
        T_EQ_I(store_push_begin(&s, 1, 0, &meta, 100, N2, err), ERR_PROTO_FIELD);
        T_HAS(err, "push 3 for step 0, which takes 2 per worker (duplicate)");
        T_EQ_U(store_pushes_owed(&s, 9), 0);    /* rank >= K owes nothing */
        T_EQ_I(store_apply(&s, NULL, err), -EAGAIN);
        T_EQ_I(store_failed(&s, NULL), 0);
        store_destroy(&s);
    }

    small_case("store-4.3", "divide_by_one (sum-not-mean): w -= lr * sum, B times the step; loss still / B", &t);
    store_destroy(&t.s);
    {
        struct store_cfg sc = { .n = N2, .offset = 100, .dtype = DTYPE_F64, .world = 4,
                                .lr = 0.5, .weights = t.w0, .divide_by_one = 1 };
        struct store_applied ap;
        double ref[N2], w[N2];

        T_EQ_I(store_init(&t.s, &sc, err), 0);
        T_EQ_I(feed_rank_order(&t.s, t.p, 4, 0), 0);
        T_EQ_I(store_apply(&t.s, &ap, err), 0);
        T_EQ_U(ap.batch, 10);
        T_EQ_U(ap.divisor, 1);
        T_EQ_D(ap.loss, 0.4);
        memcpy(w, store_weights(&t.s), sizeof w);
        for (size_t i = 0; i < N2; i++) {
            double sum = 0.0;
            for (int r = 0; r < 4; r++)
                sum += t.g[r][i];
            ref[i] = t.w0[i] - 0.5 * sum;
            T_EQ_D(w[i], ref[i]);
        }
        /* ... which is B = 10 times the correct step. */
        reference(t.w0, t.p, 4, N2, 0.5, ref, NULL);
        T_NEAR(t.w0[3] - w[3], 10.0 * (t.w0[3] - ref[3]), 1e-12);
        store_destroy(&t.s);
    }

    T_CASE("store-4.5", "buckets: passes cut into 1-4 pushes from the top down, workers in "
           "random order: one update, exactly F(0,B); P = 3 too");
    bucketed = 1;
    run_micro_pushes(4, 1, NULL, 4);
    run_micro_pushes(3, 3, (const double[]){ 5, 1, 3 }, 3);
    bucketed = 0;

    T_CASE("store-4.6", "buckets: a push not ending where the pass has come to is refused, "
           "nothing changed; the pass can go on");
    {
        struct store_cfg sc = { .n = N2, .offset = 100, .dtype = DTYPE_F64, .world = 1,
                                .lr = 0.5 };
        struct proto_push_meta meta = { 1, 1.0 }, none = { 0, 0.0 };
        double g[N2];
        struct store s;

        for (size_t i = 0; i < N2; i++)
            g[i] = (double)i;
        T_EQ_I(store_init(&s, &sc, err), 0);
        T_EQ_U(store_pass_left(&s, 0), N2);
        T_EQ_I(store_push_begin(&s, 0, 0, &meta, 103, 5, err), 0);        /* [103, 108) */
        T_EQ_I(store_push_data(&s, 0, g + 3, 5 * 8, err), 0);
        T_EQ_I(store_push_end(&s, 0, err), 0);
        T_EQ_U(store_pass_left(&s, 0), 3);
        T_EQ_U(store_pushes_owed(&s, 0), 1);
        T_EQ_I(store_push_begin(&s, 0, 0, &none, 101, 1, err), ERR_PROTO_FIELD);  /* gap */
        T_HAS(err, "must end at element 103");
        T_EQ_I(store_push_begin(&s, 0, 0, &none, 104, 4, err), ERR_PROTO_FIELD);  /* overlap */
        T_EQ_I(store_push_begin(&s, 0, 0, &none, 100, 4, err), ERR_PROTO_SIZE);   /* overlap */
        T_EQ_I(store_push_begin(&s, 0, 0, &none, 100, 0, err), ERR_PROTO_SIZE);   /* empty */
        T_EQ_I(store_push_begin(&s, 0, 0, &meta, 100, 3, err), ERR_PROTO_FIELD);  /* a count */
        T_HAS(err, "not the first push of its pass");
        T_EQ_I(store_push_begin(&s, 0, 0, &none, 100, 3, err), 0);        /* [100, 103) */
        T_EQ_I(store_push_data(&s, 0, g, 3 * 8, err), 0);
        T_EQ_I(store_push_end(&s, 0, err), 0);
        T_TRUE(store_step_ready(&s));
        T_EQ_I(store_apply(&s, NULL, err), 0);
        for (size_t i = 0; i < N2; i++)
            T_EQ_D(((const double *)store_weights(&s))[i], -0.5 * (double)i);
        store_destroy(&s);
    }

    T_CASE("store-4.4", "pushes per step beyond STORE_MAX_PUSHES refused at init");
    {
        struct store s;
        struct store_cfg sc = { .n = 4, .dtype = DTYPE_F64, .world = 2, .lr = 0.1,
                                .pushes_per_step = STORE_MAX_PUSHES + 1 };

        T_EQ_I(store_init(&s, &sc, err), ERR_USAGE);
        T_HAS(err, "pushes per step");
        store_destroy(&s);
    }
}


/* ---------------------------------------------------------------- 6.x */

/* One worker's pass in release_run: its gradient and its own cuts. */
struct rpass {
    float *g;                   /* the store's n elements */
    size_t top;                 /* elements pushed so far, from the top */
    int pass;                   /* passes complete */
    struct proto_push_meta meta;
};

/* release_run: K workers push `steps` steps of synthetic f32 into a store
 * owning [off, off + n) of a vector of `total` elements, P passes each,
 * each pass cut into random buckets (every worker its own cuts), the
 * workers interleaved at random; store_release after every push. Checks
 * that the releases come from the top down, contiguous, their weights the
 * one-shot update bit for bit, store_weights unchanged until the last,
 * and the payload counter. Returns the number of releases. */
static size_t release_run(int k, int p, size_t total, size_t off, size_t n, int steps,
                          uint64_t seed)
{
    struct workload wl;
    struct workload_cfg wc = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F32, .seed = 5,
                               .params = total, .batch = 997 };
    struct store s;
    struct store_cfg sc = { .n = n, .offset = off, .dtype = DTYPE_F32, .world = (uint32_t)k,
                            .lr = 0.375, .pushes_per_step = (uint32_t)p, .batch = 997 };
    struct rpass w[KMAX];
    struct rng rg;
    size_t nrel = 0;
    char err[ERR_LEN];
    float *full = calloc(total, 4), *old = malloc(n * 4), *expect = malloc(n * 4),
          *sum = calloc(total, 4);

    rng_seed(&rg, seed);
    T_EQ_I(workload_create(&wl, &wc), 0);
    workload_init_weights(&wl, full);
    sc.weights = full + off;
    T_EQ_I(store_init(&s, &sc, err), 0);
    for (int r = 0; r < k; r++)
        w[r].g = malloc(n * 4);
    for (uint64_t step = 0; step < (uint64_t)steps; step++) {
        size_t expect_top = 0;
        int done = 0;

        memcpy(old, store_weights(&s), n * 4);
        memset(sum, 0, total * 4);
        workload_grad_add(&wl, full, step, 0, wl.batch, sum, NULL);
        memcpy(expect, old, n * 4);
        T_EQ_I(sgd_step(expect, sum + off, n, DTYPE_F32, sc.lr, wl.batch), 0);
        for (int r = 0; r < k; r++)
            w[r].top = 0, w[r].pass = 0;
        while (done < k) {
            int r = (int)(rng_next(&rg) % (uint64_t)k);
            struct rpass *q = &w[r];
            struct store_released rel;
            const struct proto_push_meta none = { 0, 0.0 };
            size_t lo;

            if (q->pass == p)
                continue;
            if (q->top == 0) {          /* a new pass: its gradient, its count */
                uint64_t a, b, c, d;
                float *g = calloc(total, 4);
                workload_split(wl.batch, k, r, NULL, &a, &b);
                workload_split(b - a, p, q->pass, NULL, &c, &d);
                workload_grad_add(&wl, full, step, a + c, a + d, g, NULL);
                memcpy(q->g, g + off, n * 4);
                free(g);
                q->meta = (struct proto_push_meta){ d - c, 0.5 };
            }
            lo = n - q->top <= 1 || rng_next(&rg) % 3 == 0 ? 0
               : (size_t)(rng_next(&rg) % (n - q->top));
            if (push_range(&s, (uint32_t)r, step, q->top == 0 ? &q->meta : &none,
                           (const unsigned char *)q->g, lo, n - q->top, &rg, err) != 0) {
                printf("     push: %s\n", err);
                T_TRUE(0);
                break;
            }
            q->top = n - lo;
            if (lo == 0) {
                q->top = 0;
                if (++q->pass == p)
                    done++;
            }
            T_EQ_I(store_release(&s, &rel, err), 0);
            if (rel.count == 0)
                continue;
            nrel++;
            T_EQ_U(rel.step, step);
            T_EQ_U(rel.first + rel.count, off + n - expect_top);      /* from the top down */
            expect_top += rel.count;
            T_EQ_U(rel.top, expect_top);
            T_EQ_U(rel.batch, wl.batch);
            T_TRUE(memcmp((const float *)rel.weights + (rel.first - off),
                          expect + (rel.first - off), rel.count * 4) == 0);
            T_EQ_I(rel.last, expect_top == n);
            if (!rel.last)
                T_TRUE(memcmp(store_weights(&s), old, n * 4) == 0);
        }
        T_EQ_U(expect_top, n);
        T_EQ_U(store_step(&s), step + 1);
        T_TRUE(memcmp(store_weights(&s), expect, n * 4) == 0);
        /* The other servers' parts move the same way (one-shot here). */
        {
            float *f2 = calloc(total, 4);
            memcpy(f2, full, total * 4);
            T_EQ_I(sgd_step(f2, sum, total, DTYPE_F32, sc.lr, wl.batch), 0);
            memcpy(f2 + off, store_weights(&s), n * 4);
            memcpy(full, f2, total * 4);
            free(f2);
        }
    }
    T_EQ_U(store_payload_in(&s), (uint64_t)steps * (uint64_t)k * (uint64_t)p * n * 4);
    for (int r = 0; r < k; r++)
        free(w[r].g);
    store_destroy(&s);
    workload_destroy(&wl);
    free(full);
    free(old);
    free(expect);
    free(sum);
    return nrel;
}

/* push_f64: worker r's push of step 0 (meta m) of the f64 elements
 * [first, first + count), read from g, taken. */
static void push_f64(struct store *s, uint32_t r, const struct proto_push_meta *m,
                     uint64_t first, size_t count, const double *g)
{
    char err[ERR_LEN];

    T_EQ_I(store_push_begin(s, r, 0, m, first, count, err), 0);
    T_EQ_I(store_push_data(s, r, g, count * sizeof *g, err), 0);
    T_EQ_I(store_push_end(s, r, err), 0);
}

static void test_release(void)
{
    double g[N2] = { 1, 2, 3, 4, 5, 6, 7, 8 };     /* 6.3 spoils one */
    struct store_released rel;
    struct store s;
    char err[ERR_LEN];

    T_CASE("store-6.1", "per-bucket release: K = 1..4, random cuts per worker, odd n, "
           "offsets: released top-down, bit-identical to one update, weights kept till the end");
    {
        size_t many = 0;
        for (int k = 1; k <= 4; k++) {
            many += release_run(k, 1, 501, 0, 501, 3, 11 + (uint64_t)k);
            many += release_run(k, 1, 501, 167, 201, 3, 21 + (uint64_t)k);  /* a middle range */
            many += release_run(k, 2, 333, 100, 233, 2, 31 + (uint64_t)k);  /* P = 2 passes */
        }
        T_TRUE(many > 36);          /* more than one release per step somewhere */
    }

    T_CASE("store-6.2", "first release checks the counts: wrong sum fails the store, nothing "
           "released, weights untouched");
    {
        struct store_cfg sc = { .n = N2, .offset = 100, .dtype = DTYPE_F64, .world = 2,
                                .lr = 0.5, .batch = 10 };
        struct proto_push_meta m3 = { 3, 0.0 }, m4 = { 4, 0.0 };

        T_EQ_I(store_init(&s, &sc, err), 0);
        push_f64(&s, 0, &m3, 104, 4, g + 4);
        T_EQ_I(store_release(&s, &rel, err), 0);
        T_EQ_U(rel.count, 0);               /* worker 1 has pushed nothing */
        push_f64(&s, 1, &m4, 106, 2, g + 6);
        T_EQ_I(store_release(&s, &rel, err), ERR_PROTO_FIELD);
        T_HAS(err, "sum to 7, not B = 10");
        T_EQ_U(rel.count, 0);
        T_EQ_I(store_failed(&s, NULL), ERR_PROTO_FIELD);
        for (size_t i = 0; i < N2; i++)
            T_EQ_D(((const double *)store_weights(&s))[i], 0.0);
        store_destroy(&s);
    }

    T_CASE("store-6.3", "NaN in a lower bucket after the top was released: FAILED, "
           "store_weights still the last complete step's");
    {
        struct store_cfg sc = { .n = N2, .offset = 0, .dtype = DTYPE_F64, .world = 1,
                                .lr = 0.5 };
        struct proto_push_meta m = { 2, 0.0 }, none = { 0, 0.0 };

        T_EQ_I(store_init(&s, &sc, err), 0);
        push_f64(&s, 0, &m, 4, 4, g + 4);
        T_EQ_I(store_release(&s, &rel, err), 0);
        T_EQ_U(rel.first, 4);
        T_EQ_U(rel.count, 4);
        T_EQ_I(rel.last, 0);
        T_EQ_D(((const double *)rel.weights)[7], -0.5 * 8 / 2);
        g[1] = NAN;
        T_EQ_I(store_push_begin(&s, 0, 0, &none, 0, 4, err), 0);
        T_EQ_I(store_push_data(&s, 0, g, 32, err), ERR_NONFINITE);
        T_EQ_I(store_release(&s, &rel, err), ERR_NONFINITE);
        for (size_t i = 0; i < N2; i++)
            T_EQ_D(((const double *)store_weights(&s))[i], 0.0);
        store_destroy(&s);
    }

    T_CASE("store-6.4", "sizes_only (psring_sim --payload sizes): bytes counted, never read "
           "(a NaN, a cut element pass); released top-down by the same rule; weights untouched");
    {
        struct store_cfg sc = { .n = N2, .offset = 100, .dtype = DTYPE_F64, .world = 2,
                                .lr = 0.5, .batch = 2, .sizes_only = 1 };
        struct proto_push_meta one = { 1, 0.0 }, none = { 0, 0.0 };

        g[1] = NAN;
        T_EQ_I(store_init(&s, &sc, err), 0);
        for (uint32_t r = 0; r < 2; r++) {
            T_EQ_I(store_push_begin(&s, r, 0, &one, 104, 4, err), 0);
            T_EQ_I(store_push_data(&s, r, g, 13, err), 0);         /* a cut element */
            T_EQ_I(store_push_data(&s, r, g, 19, err), 0);
            T_EQ_I(store_push_end(&s, r, err), 0);
        }
        T_EQ_I(store_release(&s, &rel, err), 0);
        T_EQ_U(rel.first, 104);
        T_EQ_U(rel.count, 4);
        T_EQ_I(rel.last, 0);
        for (uint32_t r = 0; r < 2; r++)
            push_f64(&s, r, &none, 100, 4, g);
        T_EQ_I(store_release(&s, &rel, err), 0);
        T_EQ_U(rel.first, 100);
        T_EQ_U(rel.count, 4);
        T_EQ_I(rel.last, 1);
        T_EQ_U(store_step(&s), 1);
        for (size_t i = 0; i < N2; i++)
            T_EQ_D(((const double *)store_weights(&s))[i], 0.0);
        store_destroy(&s);
    }
}

/* ------------------------------------------------------- store-7.x */

/* mode_store: a per-worker linreg store of K workers with Adam (its step
 * t makes the version visible in the bits), and its twin optimizer for
 * the reference. */
static void mode_store(struct store *s, struct workload *wl, struct optim *twin, int k,
                       const struct optim_cfg *oc)
{
    struct workload_cfg wc = { .kind = WORKLOAD_LINREG, .dtype = DTYPE_F64, .seed = 11 };
    struct store_cfg sc = { .dtype = DTYPE_F64, .world = (uint32_t)k, .lr = oc->lr,
                            .optim = oc, .per_worker = 1 };
    char err[ERR_LEN];

    T_EQ_I(workload_create(wl, &wc), 0);
    sc.n = wl->n;
    T_EQ_I(store_init(s, &sc, err), 0);
    T_EQ_I(optim_init(twin, oc, DTYPE_F64, wl->n, err), 0);
}

static void test_modes(void)
{
    const struct optim_cfg oc = { OPTIM_ADAM, 0.01, 0.9, 0.9, 0.999, 1e-8 };
    struct workload wl;
    struct store s, sy;
    struct optim twin;
    struct push p[KMAX];
    struct store_applied ap;
    struct rng rg;
    char err[ERR_LEN];
    double w0[64], ref[64], g[64];

    T_CASE("store-7.1", "async: pushes interleaved into their own buffers, each applied alone by its own count, bit for bit");
    rng_seed(&rg, 5);
    mode_store(&s, &wl, &twin, 3, &oc);
    memcpy(w0, store_weights(&s), wl.n * sizeof *w0);
    memcpy(ref, w0, sizeof ref);
    pushes_make(&wl, w0, 0, 3, NULL, p);        /* all three computed on version 0 */
    T_EQ_I(feed_random(&s, p, 3, 0, &rg), 0);
    {
        const uint32_t order[3] = { 1, 2, 0 };

        for (int i = 0; i < 3; i++) {
            uint32_t r = order[i];

            T_EQ_I(store_apply_some(&s, &r, 1, &ap, err), 0);
            T_EQ_U(ap.step, (unsigned)i);
            T_EQ_U(ap.batch, p[r].meta.examples);
            T_EQ_I(optim_update(&twin, (uint64_t)i + 1, ref, p[r].bytes, wl.n, 0,
                                p[r].meta.examples), 0);
            T_EQ_U(store_clock(&s, r), 1);
        }
    }
    T_EQ_U(store_step(&s), 3);
    T_TRUE(memcmp(store_weights(&s), ref, wl.n * sizeof *ref) == 0);
    T_TRUE(memcmp(store_weights(&s), w0, wl.n * sizeof *w0) != 0);
    T_EQ_U(store_pushes_done(&s), 0);
    pushes_free(p, 3);
    store_destroy(&s);
    optim_destroy(&twin);
    workload_destroy(&wl);

    T_CASE("store-7.2", "backup: the used pushes summed in their order, divided by their counts; the late one dropped");
    rng_seed(&rg, 6);
    mode_store(&s, &wl, &twin, 4, &oc);
    memcpy(w0, store_weights(&s), wl.n * sizeof *w0);
    memcpy(ref, w0, sizeof ref);
    pushes_make(&wl, w0, 0, 4, NULL, p);
    T_EQ_I(feed_random(&s, p, 4, 0, &rg), 0);
    {
        const uint32_t used[3] = { 3, 1, 0 };
        uint64_t b = 0;

        memset(g, 0, sizeof g);
        for (int i = 0; i < 3; i++) {
            vec_add(g, p[used[i]].bytes, wl.n, DTYPE_F64);
            b += p[used[i]].meta.examples;
        }
        T_EQ_I(store_apply_some(&s, used, 3, &ap, err), 0);
        T_EQ_U(ap.batch, b);
        T_TRUE(b < wl.batch);                   /* the mean is over the used only */
        T_EQ_I(optim_update(&twin, 1, ref, g, wl.n, 0, b), 0);
    }
    T_TRUE(memcmp(store_weights(&s), ref, wl.n * sizeof *ref) == 0);
    T_EQ_U(store_pushes_done(&s), 1);           /* worker 2's, not used yet */
    T_EQ_I(store_drop(&s, 2, err), 0);
    T_TRUE(memcmp(store_weights(&s), ref, wl.n * sizeof *ref) == 0);
    T_EQ_U(store_step(&s), 1);
    T_EQ_U(store_clock(&s, 2), 1);
    T_EQ_U(store_pushes_done(&s), 0);
    /* the buffers were zeroed: the next step's push from 2 alone is exact */
    pushes_free(p, 4);
    pushes_make(&wl, ref, 1, 4, NULL, p);
    T_EQ_I(feed_rank_order(&s, p, 4, 1), 0);
    {
        uint32_t r = 2;

        T_EQ_I(store_apply_some(&s, &r, 1, &ap, err), 0);
        T_EQ_I(optim_update(&twin, 2, ref, p[2].bytes, wl.n, 0, p[2].meta.examples), 0);
        T_TRUE(memcmp(store_weights(&s), ref, wl.n * sizeof *ref) == 0);
    }

    T_CASE("store-7.3", "refusals change nothing: incomplete, twice, none, wrong step, release on a per-worker store");
    {
        uint32_t two[2] = { 0, 0 }, nine = 9, r2 = 2;
        uint64_t v = store_step(&s);

        memcpy(ref, store_weights(&s), wl.n * sizeof *ref);
        T_EQ_I(store_apply_some(&s, two, 2, &ap, err), ERR_PROTO_FIELD);  /* twice */
        T_HAS(err, "used twice");
        T_EQ_I(store_apply_some(&s, two, 0, &ap, err), ERR_PROTO_FIELD);
        T_EQ_I(store_apply_some(&s, &nine, 1, &ap, err), ERR_PROTO_RANK);
        T_EQ_I(store_apply_some(&s, &r2, 1, &ap, err), ERR_PROTO_FIELD);  /* 2 has no push */
        T_HAS(err, "not complete");
        T_EQ_I(store_drop(&s, 2, err), ERR_PROTO_FIELD);
        T_EQ_I(store_push_begin(&s, 2, 1, &p[2].meta, 0, wl.n, err), ERR_PROTO_FIELD);
        T_HAS(err, "stale or duplicate");
        T_EQ_I(store_push_begin(&s, 2, 3, &p[2].meta, 0, wl.n, err), ERR_PROTO_FIELD);
        T_HAS(err, "future");
        {
            struct store_released rel;

            T_EQ_I(store_release(&s, &rel, err), ERR_PROTO_FIELD);
            T_EQ_I(store_apply(&s, &ap, err), ERR_PROTO_FIELD);
        }
        T_EQ_U(store_step(&s), v);
        T_TRUE(memcmp(store_weights(&s), ref, wl.n * sizeof *ref) == 0);
        T_EQ_I(store_failed(&s, NULL), 0);
        /* and the used ones (0, 1, 3) go on */
        T_EQ_U(store_pushes_done(&s), 3);
        T_EQ_I(store_apply_some(&s, (uint32_t[]){ 0, 1, 3 }, 3, &ap, err), 0);
    }
    pushes_free(p, 4);

    T_CASE("store-7.4", "a sync store refuses apply_some and drop; per-worker buffers cost K x n");
    {
        struct store_cfg sc = { .n = wl.n, .dtype = DTYPE_F64, .world = 4, .lr = 0.01 };
        uint32_t r = 0;

        T_EQ_I(store_init(&sy, &sc, err), 0);
        T_EQ_I(store_apply_some(&sy, &r, 1, &ap, err), ERR_PROTO_FIELD);
        T_EQ_I(store_drop(&sy, 0, err), ERR_PROTO_FIELD);
        T_EQ_U(store_bytes(&s) - store_bytes(&sy), 4 * wl.n * sizeof(double));
        store_destroy(&sy);
    }
    store_destroy(&s);
    optim_destroy(&twin);
    workload_destroy(&wl);
    T_END();
}

int main(void)
{
    test_happy();
    test_refusals();
    test_faults();
    test_counts();
    test_mistakes();
    test_release();
    test_modes();
    return t_done();
}
