/* test_step.c -- the training step driver (common/train/step.c) in one process,
 * with fake combines: the jobs it makes and their order (one job of n + 3,
 * or the buckets then the trailer), the same bits with and without the
 * communication thread and under sync-every-micro, the checks (the count,
 * the closed form, a non-finite element), the PS-like shape (no trailer, a
 * finish, no apply), and a device that lives behind step_device.
 *
 *   step-1.x  jobs and bits      step-2.x  checks      step-3.x  shapes
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "train/mistake.h"
#include "train/optim.h"
#include "train/sgd.h"
#include "train/step.h"
#include "base/vec.h"
#include "train/workload.h"

#define P 64            /* parameters: 4 layers of 16 f64 */
#define B 12
#define MAXJOBS 64

/* What the fake combine saw. */
struct fake {
    size_t njobs, first[MAXJOBS], count[MAXJOBS];
    int finishes, applies;
    uint64_t divide_by, examples;
    int corrupt_count;  /* add 1 to the combined count */
    int scatters, gathers;  /* ZeRO: jobs combined with scatter, gathers */
};

static int fake_combine(void *ctx, const struct step_job *job, char *err)
{
    struct fake *f = ctx;

    (void)err;
    if (f->njobs < MAXJOBS) {
        f->first[f->njobs] = job->first;
        f->count[f->njobs] = job->count;
    }
    f->njobs++;
    f->scatters += job->scatter;
    f->examples = job->meta.examples;
    if (f->corrupt_count && job->first + job->count == P + STEP_TRAILER_LEN) {
        double *g = job->grad;
        g[P] += 1.0;    /* one rank, so the "sum" is the buffer itself */
    }
    return 0;
}

static int fake_finish(void *ctx, uint64_t step, void *weights, char *err)
{
    struct fake *f = ctx;

    (void)step, (void)weights, (void)err;
    f->finishes++;
    return 0;
}

/* applied: the fake counts an apply and keeps its divisor. */
static void applied(void *ctx, const struct step_update *u, char *err)
{
    struct fake *f = ctx;

    (void)err;
    f->applies++;
    f->divide_by = u->divide_by;
}

static int fake_apply(void *ctx, const struct step_update *u, char *err)
{
    applied(ctx, u, err);
    return sgd_step((double *)u->weights + u->first, (const double *)u->sum + u->first, u->count,
                    DTYPE_F64, 0.125, u->divide_by);
}

static struct workload wl;

/* ZeRO with one rank: the rank owns every range, and the all-gather has
 * nothing to bring. The apply is the ring's: optim_update with the
 * driver's state. */
static void fake_shard(void *ctx, size_t first, size_t count, size_t *lo, size_t *hi)
{
    (void)ctx;
    *lo = first;
    *hi = first + count;
}

static int fake_gather(void *ctx, void *buf, size_t first, size_t count, char *err)
{
    struct fake *f = ctx;

    (void)buf, (void)first, (void)count, (void)err;
    f->gathers++;
    return 0;
}

static int optim_apply_fake(void *ctx, const struct step_update *u, char *err)
{
    applied(ctx, u, err);
    return optim_update(u->opt, u->step + 1, (double *)u->weights + u->first,
                        (const double *)u->sum + u->first, u->count, u->state_off, u->divide_by);
}

static struct step_cfg cfg(int micro, int mistake, uint64_t bucket, int no_overlap)
{
    struct step_cfg c = { &wl, 0, 1, NULL, micro, mistake, 3, 1, bucket, no_overlap, NULL,
                          &clock_real, NULL, NULL, 0, NULL, 0 };
    return c;
}

static struct step_ops ring_ops(struct fake *f)
{
    struct step_ops o = { STEP_TRAILER | STEP_CHECK_FINITE, "allreduce", "all-reduce", "",
                          "wait", NULL, fake_combine, NULL, fake_apply, f, NULL, NULL };
    return o;
}

/* run: steps 0..2 with c and o; the final weights into w (P doubles). */
static int run(const struct step_cfg *c, const struct step_ops *o, double *w, char *err)
{
    struct step d;
    struct step_result r;
    int rc;

    if ((rc = step_init(&d, c, o, err)) == 0)
        for (int s = 0; s < 3 && rc == 0; s++)
            rc = step_run(&d, s, &r, err);
    if (rc == 0 && w)
        memcpy(w, d.weights, sizeof(double) * P);
    step_destroy(&d);
    return rc;
}

/* run_zero: c run again, counters fresh, at ZeRO stage `zero` over the
 * one-rank shard and gather. */
static int run_zero(struct step_cfg *c, struct step_ops *o, struct fake *f, int zero, double *w,
                    char *err)
{
    memset(f, 0, sizeof *f);
    o->shard = fake_shard;
    o->gather = fake_gather;
    c->zero = zero;
    return run(c, o, w, err);
}

static void test_jobs(void)
{
    struct fake f;
    struct step_ops o;
    struct step_cfg c;
    double w1[P], w4[P], wo[P], ws[P];
    char err[ERR_LEN] = "";

    T_CASE("step-1.1", "one bucket: one job of n + 3 per step, apply divides by B");
    memset(&f, 0, sizeof f);
    o = ring_ops(&f);
    c = cfg(1, MISTAKE_NONE, 0, 0);
    T_EQ_I(run(&c, &o, w1, err), 0);
    T_EQ_U(f.njobs, 3);
    T_EQ_U(f.first[0], 0);
    T_EQ_U(f.count[0], P + STEP_TRAILER_LEN);
    T_EQ_I(f.applies, 3);
    T_EQ_U(f.divide_by, B);

    T_CASE("step-1.2", "4 buckets without overlap: buckets from the top down, then the trailer");
    memset(&f, 0, sizeof f);
    c = cfg(1, MISTAKE_NONE, 16 * 8, 1);
    T_EQ_I(run(&c, &o, w4, err), 0);
    T_EQ_U(f.njobs, 15);
    for (size_t i = 0; i < 4; i++) {
        T_EQ_U(f.first[i], P - 16 * (i + 1));
        T_EQ_U(f.count[i], 16);
    }
    T_EQ_U(f.first[4], P);
    T_EQ_U(f.count[4], STEP_TRAILER_LEN);
    T_TRUE(memcmp(w1, w4, sizeof w1) == 0);

    T_CASE("step-1.3", "with the communication thread: the same jobs, the same bits");
    memset(&f, 0, sizeof f);
    c = cfg(2, MISTAKE_NONE, 16 * 8, 0);
    T_EQ_I(run(&c, &o, wo, err), 0);
    T_EQ_U(f.njobs, 15);
    T_EQ_U(f.first[0], P - 16);
    T_EQ_U(f.first[4], P);
    T_TRUE(memcmp(w1, wo, sizeof w1) == 0);

    T_CASE("step-1.4", "sync-every-micro: a pass per micro-batch, the same weights");
    memset(&f, 0, sizeof f);
    c = cfg(3, MISTAKE_SYNC_EVERY_MICRO, 0, 0);
    T_EQ_I(run(&c, &o, ws, err), 0);
    T_EQ_U(f.njobs, 9);
    T_EQ_U(f.examples, B / 3);
    T_TRUE(memcmp(w1, ws, sizeof w1) == 0);
    T_END();
}

/* A host "device" whose gradient is NaN at element 5 from step 1 on. */
struct nandev {
    uint64_t step;
    int calls;
};

static int nd_alloc(void *ctx, void **p, size_t bytes, char *err)
{
    (void)ctx, (void)err;
    *p = calloc(1, bytes);
    return *p ? 0 : ERR_USAGE;
}

static void nd_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static int nd_copy(void *ctx, void *dst, const void *src, size_t bytes, char *err)
{
    struct nandev *n = ctx;

    (void)err;
    n->calls++;
    memcpy(dst, src, bytes);
    return 0;
}

static int nd_zero(void *ctx, void *grad, size_t n, char *err)
{
    (void)ctx, (void)err;
    vec_zero(grad, n, DTYPE_F64);
    return 0;
}

static int nd_add(void *ctx, const void *weights, uint64_t step, uint64_t lo, uint64_t hi,
                  void *grad, char *err)
{
    (void)ctx, (void)err;
    workload_grad_add(&wl, weights, step, lo, hi, grad, NULL);
    if (step >= 1)
        ((double *)grad)[5] = NAN;
    return 0;
}

static int nd_loss(void *ctx, double *loss, char *err)
{
    (void)ctx, (void)err;
    *loss = 0.0;
    return 0;
}

static void test_checks(void)
{
    struct fake f;
    struct step_ops o;
    struct step_cfg c;
    struct nandev nd = { 0, 0 };
    const struct step_device dev = { nd_alloc, nd_free, nd_copy, nd_copy, nd_zero, nd_add,
                                     nd_loss, &nd };
    char err[ERR_LEN] = "";

    T_CASE("step-2.1", "a combined count that is not B fails the step, naming it");
    memset(&f, 0, sizeof f);
    f.corrupt_count = 1;
    o = ring_ops(&f);
    c = cfg(1, MISTAKE_NONE, 0, 0);
    T_EQ_I(run(&c, &o, NULL, err), ERR_MISMATCH);
    T_HAS(err, "step 0: the ranks' example counts add up to 13");

    T_CASE("step-2.2", "a device's non-finite element stops step 1 before the combine");
    memset(&f, 0, sizeof f);
    c = cfg(2, MISTAKE_NONE, 16 * 8, 0);
    c.device = &dev;
    T_EQ_I(run(&c, &o, NULL, err), ERR_NONFINITE);
    T_HAS(err, "step 1: gradient element 5 is nan before the all-reduce");
    T_EQ_U(f.njobs, 1);     /* step 0's one job (a device has one bucket), none of step 1 */
    T_TRUE(nd.calls > 0);

    T_CASE("step-2.3", "mean-of-means: the count to expect is the ranks with data (1)");
    memset(&f, 0, sizeof f);
    c = cfg(2, MISTAKE_MEAN_OF_MEANS, 0, 0);
    T_EQ_I(run(&c, &o, NULL, err), 0);
    T_EQ_U(f.divide_by, 1);
    T_END();
}

static void test_ps_shape(void)
{
    struct fake f;
    struct step_ops o = { 0, "push", "push", ", pushed one by one", "wait for the pushes",
                          "pull weights", fake_combine, fake_finish, NULL, NULL, NULL, NULL };
    struct step_cfg c = cfg(2, MISTAKE_NONE, 16 * 8, 0);
    double w[P];
    char err[ERR_LEN] = "";

    T_CASE("step-3.1", "no trailer, a finish, no apply: the buckets, one finish per step");
    memset(&f, 0, sizeof f);
    o.ctx = &f;
    T_EQ_I(run(&c, &o, w, err), 0);
    T_EQ_U(f.njobs, 12);
    T_EQ_I(f.finishes, 3);
    T_EQ_I(f.applies, 0);
    T_EQ_U(f.examples, B);
    T_EQ_D(w[0], 0.0);      /* nobody applied: the weights are the initial zeros */
    T_END();
}

static void test_zero(void)
{
    const struct optim_cfg adam = { OPTIM_ADAM, 0.01, 0.9, 0.9, 0.999, 1e-8 };
    struct fake f;
    struct step_ops o;
    struct step_cfg c;
    struct step d;
    double w0[P], w1[P];
    char err[ERR_LEN] = "";

    T_CASE("step-4.1", "--zero 1, one bucket, Adam: scatter, own update, one gather a step == DDP");
    memset(&f, 0, sizeof f);
    o = ring_ops(&f);
    o.apply = optim_apply_fake;
    c = cfg(1, MISTAKE_NONE, 0, 0);
    c.optim = &adam;
    T_EQ_I(run(&c, &o, w0, err), 0);
    T_EQ_I(f.scatters, 0);
    T_EQ_I(run_zero(&c, &o, &f, 1, w1, err), 0);
    T_TRUE(memcmp(w0, w1, sizeof w0) == 0);
    T_EQ_I(f.scatters, 3);
    T_EQ_I(f.gathers, 3);
    T_EQ_U(f.divide_by, B);
    T_EQ_I(step_init(&d, &c, &o, err), 0);
    T_EQ_U(step_memory(&d)->optim, 2 * P * sizeof(double));
    T_EQ_U(step_memory(&d)->params, (P + STEP_TRAILER_LEN) * sizeof(double));
    step_destroy(&d);

    T_CASE("step-4.2", "--zero 2, 4 buckets with overlap: 4 scatters and 4 gathers a step, == DDP");
    memset(&f, 0, sizeof f);
    c = cfg(1, MISTAKE_NONE, 16 * 8, 0);
    c.optim = &adam;
    o.shard = NULL;
    o.gather = NULL;
    T_EQ_I(run(&c, &o, w0, err), 0);
    T_EQ_I(run_zero(&c, &o, &f, 2, w1, err), 0);
    T_TRUE(memcmp(w0, w1, sizeof w0) == 0);
    T_EQ_U(f.njobs, 15);            /* the trailer alone is all-reduced */
    T_EQ_I(f.scatters, 12);
    T_EQ_I(f.gathers, 12);

    T_CASE("step-4.3", "ZeRO refused: stage 4, a mistake, stage 3 on synthetic, no gather op");
    c = cfg(1, MISTAKE_NONE, 0, 0);
    c.zero = 4;
    T_EQ_I(step_init(&d, &c, &o, err), ERR_USAGE);
    T_HAS(err, "--zero 4");
    step_destroy(&d);
    c = cfg(1, MISTAKE_SUM_NOT_MEAN, 0, 0);
    c.zero = 1;
    T_EQ_I(step_init(&d, &c, &o, err), ERR_USAGE);
    step_destroy(&d);
    c = cfg(1, MISTAKE_NONE, 0, 0);
    c.zero = 3;
    T_EQ_I(step_init(&d, &c, &o, err), ERR_USAGE);
    T_HAS(err, "synthetic");
    step_destroy(&d);
    o.gather = NULL;
    c.zero = 1;
    T_EQ_I(step_init(&d, &c, &o, err), ERR_USAGE);
    step_destroy(&d);
    T_END();
}

int main(void)
{
    struct workload_cfg wc = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F64, .seed = 3,
                               .params = P, .batch = B, .layers = 4 };

    log_init("test_step", -1);
    if (workload_create(&wl, &wc) != 0) {
        printf("FAIL step-0 cannot build the synthetic workload\n");
        return 1;
    }
    test_jobs();
    test_checks();
    test_ps_shape();
    test_zero();
    workload_destroy(&wl);
    return t_done();
}
