/* buckets_step.c -- a step in buckets (buckets_step.h says what and why).
 *
 * Both paths build the same jobs (bucket_job: bucket i's range of the
 * gradient) and run them with the same function (push_job); the overlap
 * path hands them to the communication thread as they complete (on_ready,
 * called by common/backward.c's backward_bucketed), the plain path runs them
 * one after another after the backward pass (overlap_call). Then one pull.
 */
#include "buckets_step.h"

#include <stdio.h>
#include <string.h>

#include "backward.h"
#include "clock.h"
#include "dtype.h"
#include "log.h"
#include "mistake.h"
#include "vec.h"

/* push_job: the overlap_fn: one bucket to the servers. */
static int push_job(void *ctx, struct overlap_job *job, char *err)
{
    struct bstep *b = ctx;

    return ps_client_push(b->cfg.client, b->step, &b->meta, b->grad, job->index, job->n, err);
}

static struct overlap_job bucket_job(const struct bstep *b, size_t i)
{
    const struct bucket *k = &b->plan.b[i];
    const size_t es = dtype_size(b->cfg.w->dtype);
    struct overlap_job j = { b->grad + k->first * es, k->count, k->first, 0, 0.0, 0.0 };
    return j;
}

int bstep_init(struct bstep *b, const struct bstep_cfg *cfg, char *err)
{
    const struct workload *w = cfg->w;
    const size_t es = dtype_size(w->dtype);
    const uint64_t size = cfg->bucket_bytes ? cfg->bucket_bytes : BUCKETS_DEFAULT_BYTES;
    const char *why = NULL;
    int rc;

    memset(b, 0, sizeof *b);
    b->cfg = *cfg;
    if ((rc = buckets_plan(&b->plan, w->layer_off, w->nlayers, es, size, err)) != 0)
        return rc;
    if (b->plan.count > 1) {
        if (cfg->no_overlap)
            why = "--no-overlap";
        else if (cfg->mistake != MISTAKE_NONE && cfg->mistake != MISTAKE_SUM_NOT_MEAN)
            why = "this --mistake changes the gradient after the backward pass";
        b->overlap = why == NULL;
        if (cfg->rank == 0)
            log_msg("%zu buckets of %llu bytes at most (--bucket-size %llu, %zu layers), "
                    "pushed one by one, overlap %s%s%s", b->plan.count,
                    (unsigned long long)buckets_bytes_max(&b->plan, es),
                    (unsigned long long)size, w->nlayers, why ? "off: " : "on",
                    why ? why : "", why ? "" : " (a communication thread)");
    }
    if (b->overlap &&
        (rc = overlap_init(&b->ov, push_job, b, b->plan.count, err)) != 0)
        return rc;
    /* events per step: a layer or micro-batch each, a push per bucket, wait, pull */
    return trace_open(&b->tr, cfg->trace, cfg->rank,
                      w->nlayers + (size_t)cfg->micro + b->plan.count + 8, err);
}

void bstep_destroy(struct bstep *b)
{
    char why[ERR_LEN];

    if (b->overlap)
        overlap_destroy(&b->ov);
    b->overlap = 0;
    (void)trace_close(&b->tr, why);     /* after a failure: the run failed anyway */
    buckets_free(&b->plan);
}

int bstep_trace_close(struct bstep *b, char *err)
{
    return trace_close(&b->tr, err);
}

size_t bstep_buckets(const struct bstep *b)
{
    return b->plan.count;
}

void bstep_trace_flush(struct bstep *b)
{
    trace_flush(&b->tr);
}

/* The ready callback's view of a step with overlap. */
struct ready_ctx {
    struct bstep *b;
    uint64_t examples;
    int first;              /* no bucket handed over yet */
};

/* on_ready: a bucket is complete: on the first, fix the count and loss the
 * pushes carry (the loss is whole by then, and no push has started); hand
 * the bucket to the communication thread. */
static void on_ready(void *arg, size_t bucket, double loss)
{
    struct ready_ctx *x = arg;
    struct overlap_job j = bucket_job(x->b, bucket);

    if (x->first) {
        x->b->meta.examples = x->examples;
        x->b->meta.loss = loss;
        x->first = 0;
    }
    overlap_submit(&x->b->ov, &j);
}

/* backward_overlapped: the backward pass with each bucket handed to the
 * communication thread as it completes (backward_bucketed: mistake_grad's
 * calls, so the same bits); then the wait for the last push. OUT:
 * t->backward, t->comm (the pushes). */
static int backward_overlapped(struct bstep *b, const void *weights, uint64_t lo, uint64_t hi,
                               struct bstep_times *t, double *t_end, char *err)
{
    const struct workload *w = b->cfg.w;
    struct ready_ctx x = { b, hi - lo, 1 };
    char name[TRACE_NAME_LEN];
    double t0 = clock_now();
    int rc;

    overlap_begin(&b->ov);
    (void)backward_bucketed(w, weights, b->step, lo, hi, b->cfg.micro, b->grad, &b->plan,
                            &b->tr, on_ready, &x);
    *t_end = clock_now();
    t->backward = *t_end - t0;
    rc = overlap_wait(&b->ov, err);
    for (size_t i = 0; i < b->plan.count; i++) {
        const struct overlap_job *j = overlap_job_at(&b->ov, i);
        if (!j || j->t1 == 0.0)
            break;              /* not run: the pass failed before it */
        snprintf(name, sizeof name, "push bucket %zu", i);
        trace_add(&b->tr, name, TRACE_COMM, j->t0, j->t1, (long)b->step,
                  (long long)(j->n * dtype_size(w->dtype)));
        t->comm += j->t1 - j->t0;
    }
    return rc;
}

/* backward_then_push: the gradient (mistake_grad, mistakes included), then
 * the buckets pushed one by one on this thread. */
static int backward_then_push(struct bstep *b, const void *weights, uint64_t lo, uint64_t hi,
                              struct bstep_times *t, double *t_end, char *err)
{
    const struct workload *w = b->cfg.w;
    char name[TRACE_NAME_LEN];
    double t0 = clock_now();
    int rc = 0;

    mistake_grad(b->cfg.mistake, w, weights, b->step, lo, hi, b->cfg.micro, b->grad,
                 b->scratch, &b->meta.examples, &b->meta.loss);
    *t_end = clock_now();
    t->backward = *t_end - t0;
    trace_add(&b->tr, "backward", TRACE_COMPUTE, t0, *t_end, (long)b->step, -1);
    for (size_t i = 0; i < b->plan.count && rc == 0; i++) {
        struct overlap_job j = bucket_job(b, i);
        rc = overlap_call(push_job, b, &j, err);
        snprintf(name, sizeof name, "push bucket %zu", i);
        trace_add(&b->tr, name, TRACE_COMM, j.t0, j.t1, (long)b->step,
                  (long long)(j.n * dtype_size(w->dtype)));
        t->comm += j.t1 - j.t0;
    }
    return rc;
}

int bstep_run(struct bstep *b, void *weights, void *grad, void *scratch, uint64_t step,
              uint64_t lo, uint64_t hi, struct bstep_times *t, char *err)
{
    double t_end, p0, p1;
    int rc;

    memset(t, 0, sizeof *t);
    b->grad = grad;
    b->scratch = scratch;
    b->step = step;
    b->meta = (struct proto_push_meta){ 0, 0.0 };
    if (b->overlap)
        rc = backward_overlapped(b, weights, lo, hi, t, &t_end, err);
    else
        rc = backward_then_push(b, weights, lo, hi, t, &t_end, err);
    if (rc != 0)
        return rc;              /* its line names the step and the server */
    p0 = clock_now();
    trace_add(&b->tr, "wait for the pushes", TRACE_COMPUTE, t_end, p0, (long)step, -1);
    rc = ps_client_pull(b->cfg.client, step, weights, err);
    p1 = clock_now();
    trace_add(&b->tr, "pull weights", TRACE_COMM, p0, p1, (long)step,
              (long long)(b->cfg.w->n * dtype_size(b->cfg.w->dtype)));
    t->comm += p1 - p0;
    t->pull = p1 - p0;
    t->wait = p1 - t_end;
    return rc;
}
