/* train.c -- SGD steps over the ring (train.h says what and why).
 *
 * One step: zero the buffer, add this rank's micro-batch gradient sums
 * (mistake_grad, which also makes the micro-batch loop's mistakes),
 * write the trailer, check it is finite, all-reduce (the timed part), check
 * the count (and the closed form), sgd_step. The order of the adds inside
 * a rank is the workload's; across ranks it is the ring's, fixed, so a
 * rerun gives the same bits. sync-every-micro does the first three and
 * the all-reduce once per micro-batch and sums the results.
 *
 * With several buckets (train.h: BUCKETS AND OVERLAP) "all-reduce" is one
 * all-reduce per bucket and one of the trailer, run after the backward
 * pass by reduce(), or during it by the communication thread
 * (backward_overlapped: common/backward.c's backward_bucketed calls on_ready
 * for each bucket as it completes). Both paths build the same
 * jobs (bucket_job, trailer_job), so the bits do not depend on the path.
 */
#include "train.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward.h"
#include "buckets.h"
#include "clock.h"
#include "dtype.h"
#include "err.h"
#include "log.h"
#include "losscurve.h"
#include "mistake.h"
#include "overlap.h"
#include "sgd.h"
#include "trace.h"
#include "vec.h"
#include "weights.h"

#define COUNT_SPLIT TRAIN_COUNT_SPLIT
#define LOSS_LOG_EVERY_S 1.0

int train_check(const struct cli_common *c, uint64_t batch, char *err)
{
    /* f32 holds integers exactly up to 2^24: each trailer slot's sum over
     * K ranks must stay below that. f64 (2^53) is never the limit here. */
    if (c->dtype == DTYPE_F32 && (c->world > 4096 || batch >= (1ull << 36))) {
        err_say(err, "--dtype f32: the example count travels in f32 and is exact only for "
            "K <= 4096 and B < 2^36 (K %d, B %llu); use --dtype f64", c->world,
            (unsigned long long)batch);
        return ERR_USAGE;
    }
    return 0;
}

/* Everything a run uses, allocated before its first step. */
struct bufs {
    unsigned char *weights;     /* n */
    unsigned char *g;           /* n + trailer: what is all-reduced */
    unsigned char *acc;         /* n + trailer: sync-every-micro's sum of the m results */
    unsigned char *ref;         /* n: the closed form (synthetic) */
    unsigned char *scratch;     /* n: mistake_grad's, when it needs one */
    struct buckets plan;        /* the buckets (buckets.h) */
    struct overlap ov;          /* the communication thread, when overlapping */
    int overlap;                /* 1: buckets handed to ov from the layer callback */
    struct trace tr;            /* --trace */
    double *st[4];              /* per timed step: step, backward, all-reduce, wait */
};

enum { T_STEP, T_BACKWARD, T_COMM, T_WAIT };

/* fill: this rank's contribution for step s over batch positions [lo, hi)
 * in `micro` micro-batches (mistake_grad), count and loss into the
 * trailer. */
static void fill(const struct train_cfg *cfg, struct bufs *b, int mistake, uint64_t s,
                 uint64_t lo, uint64_t hi, int micro)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    uint64_t ex;
    double loss;

    mistake_grad(mistake, w, b->weights, s, lo, hi, micro, b->g, b->scratch, &ex, &loss);
    vec_set(b->g, w->n, c->dtype, fmod((double)ex, COUNT_SPLIT));
    vec_set(b->g, w->n + 1, c->dtype, floor((double)ex / COUNT_SPLIT));
    vec_set(b->g, w->n + 2, c->dtype, loss);
}

/* bucket_job: bucket i of the plan over buffer g, checked for NaN/Inf. */
static struct overlap_job bucket_job(const struct bufs *b, unsigned char *g, size_t i, size_t es)
{
    const struct bucket *k = &b->plan.b[i];
    struct overlap_job j = { g + k->first * es, k->count, k->first, 1, 0.0, 0.0 };
    return j;
}

static struct overlap_job trailer_job(unsigned char *g, size_t n, size_t es)
{
    struct overlap_job j = { g + n * es, TRAIN_TRAILER, n, 0, 0.0, 0.0 };
    return j;
}

/* allreduce_job: the ring's overlap_fn: job's bucket checked for NaN and
 * Inf when job->check is set ("gradient element I is X before the
 * all-reduce", I counted from job->index), then all-reduced over ctx, the
 * train_cfg's coll. */
static int allreduce_job(void *ctx, struct overlap_job *job, char *err)
{
    const struct train_cfg *cfg = ctx;
    const int dtype = cfg->c->dtype;
    size_t bad;

    if (job->check && vec_check_finite(job->buf, job->n, dtype, &bad) != 0) {
        err_say(err, "gradient element %zu is %g before the all-reduce", job->index + bad,
            vec_get(job->buf, bad, dtype));
        return ERR_NONFINITE;
    }
    return coll_allreduce(cfg->coll, job->buf, job->n, err);
}

/* reduce: b->g all-reduced bucket by bucket on this thread (no overlap),
 * the time it took added to *t. One bucket: one all-reduce of n + 3
 * elements, checked first; several: each bucket (checked), then the
 * trailer. */
static int reduce(const struct train_cfg *cfg, struct bufs *b, int s, double *t, char *err)
{
    const struct cli_common *c = cfg->c;
    size_t n = cfg->w->n, es = dtype_size(c->dtype), bad;
    char name[TRACE_NAME_LEN];
    int rc = 0;

    if (b->plan.count == 1 && vec_check_finite(b->g, n, c->dtype, &bad) != 0) {
        err_say(err, "step %d: gradient element %zu is %g before the all-reduce", s, bad,
            vec_get(b->g, bad, c->dtype));
        return ERR_NONFINITE;
    }
    for (size_t i = 0; i < b->plan.count + (b->plan.count > 1) && rc == 0; i++) {
        struct overlap_job j;
        if (b->plan.count == 1) {
            j = (struct overlap_job){ b->g, n + TRAIN_TRAILER, 0, 0, 0.0, 0.0 };
            snprintf(name, sizeof name, "allreduce");
        } else if (i < b->plan.count) {
            j = bucket_job(b, b->g, i, es);
            snprintf(name, sizeof name, "allreduce bucket %zu", i);
        } else {
            j = trailer_job(b->g, n, es);
            snprintf(name, sizeof name, "allreduce count+loss");
        }
        rc = overlap_call(allreduce_job, (void *)cfg, &j, err);
        trace_add(&b->tr, name, TRACE_COMM, j.t0, j.t1, s, (long long)(j.n * es));
        *t += j.t1 - j.t0;
    }
    if (rc != 0) {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "step %d: %s", s, why);
    }
    return rc;
}

/* The ready callback's view of a step with overlap. */
struct ready_ctx {
    struct bufs *b;
    size_t es;
};

/* on_ready: a bucket is complete: hand it to the communication thread. */
static void on_ready(void *arg, size_t bucket, double loss)
{
    struct ready_ctx *x = arg;
    struct overlap_job j = bucket_job(x->b, x->b->g, bucket, x->es);

    (void)loss;                 /* the trailer carries it, after the pass */
    overlap_submit(&x->b->ov, &j);
}

/* backward_overlapped: the backward pass with each bucket handed to the
 * communication thread as it completes (backward_bucketed: mistake_grad's
 * calls, so the same bits); then the trailer, and the wait for all of it. OUT: *bwd, the backward time; *wait,
 * from its end to the last all-reduce's; *t, the time in all-reduces. */
static int backward_overlapped(const struct train_cfg *cfg, struct bufs *b, int s,
                               uint64_t lo, uint64_t hi, double *bwd, double *wait, double *t,
                               char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    const size_t n = w->n, es = dtype_size(c->dtype);
    struct ready_ctx x = { b, es };
    struct overlap_job tj;
    char name[TRACE_NAME_LEN];
    double l, t0 = clock_now(), t1;
    uint64_t ex = hi - lo;
    int rc;

    overlap_begin(&b->ov);
    l = backward_bucketed(w, b->weights, (uint64_t)s, lo, hi, c->micro, b->g, &b->plan, &b->tr,
                          on_ready, &x);
    vec_set(b->g, n, c->dtype, fmod((double)ex, COUNT_SPLIT));
    vec_set(b->g, n + 1, c->dtype, floor((double)ex / COUNT_SPLIT));
    vec_set(b->g, n + 2, c->dtype, l);
    tj = trailer_job(b->g, n, es);
    overlap_submit(&b->ov, &tj);
    t1 = clock_now();
    *bwd = t1 - t0;
    rc = overlap_wait(&b->ov, err);
    *wait = clock_now() - t1;
    trace_add(&b->tr, "wait", TRACE_COMPUTE, t1, t1 + *wait, s, -1);
    for (size_t i = 0; i <= b->plan.count; i++) {
        const struct overlap_job *j = overlap_job_at(&b->ov, i);
        if (!j || j->t1 == 0.0)
            break;              /* not run: the pass failed before it */
        if (i < b->plan.count)
            snprintf(name, sizeof name, "allreduce bucket %zu", i);
        else
            snprintf(name, sizeof name, "allreduce count+loss");
        trace_add(&b->tr, name, TRACE_COMM, j->t0, j->t1, s, (long long)(j->n * es));
        *t += j->t1 - j->t0;
    }
    if (rc != 0) {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "step %d: %s", s, why);
    }
    return rc;
}

/* combine: step s's gradient, all-reduced: in b->g, or with
 * sync-every-micro the sum of the m micro-batch all-reduces in b->acc.
 * OUT: *sum, the buffer that holds it; *t, the time in all-reduces;
 * *bwd and *wait (see backward_overlapped; without overlap the wait is
 * the whole communication). */
static int combine(const struct train_cfg *cfg, struct bufs *b, int s, unsigned char **sum,
                   double *t, double *bwd, double *wait, char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    uint64_t lo, hi, a, z;
    double t0;
    int rc;

    *t = *bwd = *wait = 0.0;
    workload_split(w->batch, c->world, c->rank, c->shard_weights, &lo, &hi);
    if (b->overlap) {
        *sum = b->g;
        return backward_overlapped(cfg, b, s, lo, hi, bwd, wait, t, err);
    }
    if (cfg->mistake != MISTAKE_SYNC_EVERY_MICRO) {
        t0 = clock_now();
        fill(cfg, b, cfg->mistake, (uint64_t)s, lo, hi, c->micro);
        *bwd = clock_now() - t0;
        trace_add(&b->tr, "backward", TRACE_COMPUTE, t0, t0 + *bwd, s, -1);
        *sum = b->g;
        rc = reduce(cfg, b, s, t, err);
        *wait = *t;
        return rc;
    }
    vec_zero(b->acc, w->n + TRAIN_TRAILER, c->dtype);
    for (int j = 0; j < c->micro; j++) {
        workload_split(hi - lo, c->micro, j, NULL, &a, &z);
        t0 = clock_now();
        fill(cfg, b, MISTAKE_NONE, (uint64_t)s, lo + a, lo + z, 1);
        *bwd += clock_now() - t0;
        trace_add(&b->tr, "backward", TRACE_COMPUTE, t0, clock_now(), s, -1);
        if ((rc = reduce(cfg, b, s, t, err)) != 0)
            return rc;
        vec_add(b->acc, b->g, w->n + TRAIN_TRAILER, c->dtype);
    }
    *wait = *t;
    *sum = b->acc;
    return 0;
}

/* expected_count: what the all-reduced count must be: B, or under
 * mean-of-means the number of ranks with a non-empty share. */
static uint64_t expected_count(const struct train_cfg *cfg)
{
    const struct cli_common *c = cfg->c;
    uint64_t lo, hi, k = 0;

    if (cfg->mistake != MISTAKE_MEAN_OF_MEANS)
        return cfg->w->batch;
    for (int r = 0; r < c->world; r++) {
        workload_split(cfg->w->batch, c->world, r, c->shard_weights, &lo, &hi);
        k += hi > lo;
    }
    return k;
}

/* setup: the bucket plan, the communication thread when it is used, the
 * trace, the per-step times; rank 0 logs a plan of several buckets. */
static int setup(const struct train_cfg *cfg, struct bufs *b, char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    const size_t es = dtype_size(c->dtype), timed = (size_t)(c->steps - c->warmup);
    const uint64_t size = cfg->bucket_bytes ? cfg->bucket_bytes : BUCKETS_DEFAULT_BYTES;
    const int m = cfg->mistake;
    const char *why = NULL;
    int rc;

    if ((rc = buckets_plan(&b->plan, w->layer_off, w->nlayers, es, size, err)) != 0)
        return rc;
    for (int i = 0; i < 4; i++) {
        b->st[i] = calloc(timed ? timed : 1, sizeof *b->st[i]);
        if (!b->st[i]) {
            err_say(err, "out of memory for %zu step times", timed);
            return -ENOMEM;
        }
    }
    if (b->plan.count > 1) {
        if (cfg->no_overlap)
            why = "--no-overlap";
        else if (m != MISTAKE_NONE && m != MISTAKE_SUM_NOT_MEAN)
            why = "this --mistake changes the gradient after the backward pass";
        b->overlap = why == NULL;
        if (c->rank == 0)
            log_msg("%zu buckets of %llu bytes at most (--bucket-size %llu, %zu layers), "
                    "overlap %s%s%s", b->plan.count,
                    (unsigned long long)buckets_bytes_max(&b->plan, es),
                    (unsigned long long)size, w->nlayers, why ? "off: " : "on",
                    why ? why : "", why ? "" : " (a communication thread)");
    }
    if (b->overlap &&
        (rc = overlap_init(&b->ov, allreduce_job, (void *)cfg, b->plan.count + 1, err)) != 0)
        return rc;
    /* events per step: one per layer and micro-batch, per all-reduce, wait, optimizer */
    return trace_open(&b->tr, cfg->trace, c->rank,
                      w->nlayers + (size_t)c->micro * (b->plan.count + 2) + 8, err);
}

static double median(const double *v, size_t n)
{
    struct metrics_stats st;

    if (n == 0 || metrics_summarize(v, n, &st) != 0)
        return NAN;
    return st.median;
}

int train_run(const struct train_cfg *cfg, struct metrics_record *rec, char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    const int m = cfg->mistake;
    size_t n = w->n, es = dtype_size(c->dtype);
    struct bufs b;
    struct losscurve lc = { NULL, 0 };
    const int closed_form = w->kind == WORKLOAD_SYNTHETIC &&
        (m == MISTAKE_NONE || m == MISTAKE_SUM_NOT_MEAN || m == MISTAKE_SYNC_EVERY_MICRO);
    const uint64_t want = expected_count(cfg);
    const char *loss_out = c->rank == 0 ? cfg->loss_out : NULL;
    double cpu0 = 0, wall0 = 0, last_log = -INFINITY;
    int rc = 0;

    memset(&b, 0, sizeof b);
    if ((rc = setup(cfg, &b, err)) != 0)
        goto out;
    b.weights = malloc(n * es);
    b.g = malloc((n + TRAIN_TRAILER) * es);
    if (closed_form)
        b.ref = malloc(n * es);
    if (m == MISTAKE_SYNC_EVERY_MICRO)
        b.acc = malloc((n + TRAIN_TRAILER) * es);
    if (mistake_needs_scratch(m))
        b.scratch = malloc(n * es);
    if (!b.weights || !b.g || (closed_form && !b.ref) ||
        (m == MISTAKE_SYNC_EVERY_MICRO && !b.acc) || (mistake_needs_scratch(m) && !b.scratch) ||
        (loss_out && losscurve_init(&lc, (size_t)c->steps) != 0)) {
        rc = -ENOMEM;
        err_say(err, "out of memory for %zu parameters", n);
        goto out;
    }
    workload_init_weights(w, b.weights);

    for (int s = 0; s < c->steps; s++) {
        uint64_t out0, in0, count;
        unsigned char *g;
        double t, loss, bwd, wait, t_step = clock_now(), t_opt;

        if (s == c->warmup) {
            cpu0 = clock_cpu_seconds();
            wall0 = clock_now();
        }
        out0 = cfg->link->bytes_out;
        in0 = cfg->link->bytes_in;
        if ((rc = combine(cfg, &b, s, &g, &t, &bwd, &wait, err)) != 0)
            goto out;

        count = (uint64_t)vec_get(g, n, c->dtype) +
                (uint64_t)vec_get(g, n + 1, c->dtype) * (uint64_t)COUNT_SPLIT;
        if (count != want) {
            rc = ERR_MISMATCH;
            err_say(err, "step %d: the ranks' example counts add up to %llu, not %s %llu "
                "(--shard-weights, --batch or --mistake differ between ranks?)", s,
                (unsigned long long)count, m == MISTAKE_MEAN_OF_MEANS ?
                "the number of ranks with data (mean-of-means counts 1 each)" : "the global batch",
                (unsigned long long)want);
            goto out;
        }
        if (b.ref) {
            double c0 = clock_now();
            /* The closed form over the whole batch, without the EMULATED
             * backward time (that is the ranks' compute, not this check's). */
            struct workload q = *w;
            q.backward_per_example = 0;
            vec_zero(b.ref, n, c->dtype);
            workload_grad_add(&q, b.weights, (uint64_t)s, 0, w->batch, b.ref, NULL);
            if (memcmp(b.ref, g, n * es) != 0) {
                size_t i = 0;
                while (i < n && vec_get(b.ref, i, c->dtype) == vec_get(g, i, c->dtype))
                    i++;
                rc = ERR_MISMATCH;
                err_say(err, "step %d: the all-reduced sum differs from the closed form F(0, B) "
                    "at element %zu: %.17g, want %.17g", s, i,
                    i < n ? vec_get(g, i, c->dtype) : NAN,
                    i < n ? vec_get(b.ref, i, c->dtype) : NAN);
                goto out;
            }
            t_step += clock_now() - c0;     /* the check is not part of the step's time */
        }
        loss = vec_get(g, n + 2, c->dtype) / (double)count;
        t_opt = clock_now();
        rc = sgd_step(b.weights, g, n, c->dtype, c->lr, m == MISTAKE_SUM_NOT_MEAN ? 1 : count);
        if (rc != 0) {
            err_say(err, "step %d: sgd_step: %s", s, err_str(rc));
            goto out;
        }
        trace_add(&b.tr, "optimizer", TRACE_COMPUTE, t_opt, clock_now(), s, -1);
        losscurve_set(&lc, (size_t)s, loss);
        if (c->rank == 0 && (s == 0 || s == c->steps - 1 ||
                             clock_now() - last_log >= LOSS_LOG_EVERY_S)) {
            log_msg("step %d: loss %.9g (mean over the global batch of %llu)", s, loss,
                    (unsigned long long)count);
            last_log = clock_now();
        }
        if (s >= c->warmup) {
            struct metrics_step st = {
                .step = (uint64_t)s, .combine_s = t, .ingress_s = NAN, .egress_s = NAN,
                .bytes_in = cfg->link->bytes_in - in0, .bytes_out = cfg->link->bytes_out - out0,
            };
            metrics_record_add(rec, &st);
            b.st[T_STEP][s - c->warmup] = clock_now() - t_step;
            b.st[T_BACKWARD][s - c->warmup] = bwd;
            b.st[T_COMM][s - c->warmup] = t;
            b.st[T_WAIT][s - c->warmup] = wait;
        }
        trace_flush(&b.tr);
    }
    rec->cpu_s = clock_cpu_seconds() - cpu0;
    rec->wall_s = clock_now() - wall0;
    if (c->rank == 0 && c->steps > c->warmup) {
        size_t k = (size_t)(c->steps - c->warmup);
        log_msg("medians over %zu timed steps: step %.4f s, backward %.4f s, all-reduces "
                "%.4f s, wait after backward %.4f s (%zu bucket%s, overlap %s)", k,
                median(b.st[T_STEP], k), median(b.st[T_BACKWARD], k), median(b.st[T_COMM], k),
                median(b.st[T_WAIT], k), b.plan.count, b.plan.count == 1 ? "" : "s",
                b.overlap ? "on" : "off");
    }
    if (c->weights_out)
        rc = weights_write(c->weights_out, c->rank, b.weights, n, c->dtype, err);
out:
    if (loss_out) {
        char why[ERR_LEN];
        int rc2 = losscurve_write(&lc, loss_out, rc != 0 ? "the run failed" : NULL, why);
        if (rc2 != 0 && rc == 0) {
            rc = rc2;
            snprintf(err, ERR_LEN, "%s", why);
        }
    }
    losscurve_free(&lc);
    if (b.overlap)
        overlap_destroy(&b.ov);
    {
        char why[ERR_LEN];
        int rc2 = trace_close(&b.tr, why);
        if (rc2 != 0 && rc == 0) {
            rc = rc2;
            snprintf(err, ERR_LEN, "%s", why);
        }
    }
    buckets_free(&b.plan);
    for (int i = 0; i < 4; i++)
        free(b.st[i]);
    free(b.scratch);
    free(b.acc);
    free(b.ref);
    free(b.g);
    free(b.weights);
    return rc;
}
