/* step.c -- one training step for every system (step.h says what and why).
 *
 * The route of a step's gradient, without overlap: step_gradient() writes it
 * into d->g (mistake_grad, or the device), trailer() appends the count and
 * loss, send_jobs() calls the combine for each job in order, check() reads
 * the combined count and sum, and the apply op takes it. With overlap,
 * pass_overlapped() replaces the first three: backward_bucketed() calls
 * on_ready() for each complete bucket, which submits it to the thread,
 * whose run_job() calls the same combine on the same job.
 */
#include "step.h"
#include "step_internal.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward.h"
#include "localsgd.h"
#include "base/dtype.h"
#include "base/log.h"
#include "base/mem.h"
#include "measure/metrics.h"
#include "mistake.h"
#include "base/vec.h"
#include "weights.h"

enum { T_STEP, T_BACKWARD, T_COMM, T_FINISH, T_WAIT };

double step_now(const struct step *d)
{
    return clock_src_now(d->cfg.clock);
}

/* prefix: "step S: " in front of err's line. */
static void prefix(char *err, int s)
{
    char why[ERR_LEN];

    snprintf(why, sizeof why, "%s", err);
    err_say(err, "step %d: %s", s, why);
}

/* ------------------------------------------------------------ memory */

/* mem_alloc, mem_free: the device's memory, or on the host a mapping
 * (mem.h) that mem_release can give back page by page (ZeRO-2). */
static int mem_alloc(struct step *d, void **p, size_t bytes, char *err)
{
    const struct step_device *dev = d->cfg.device;

    if (dev)
        return dev->alloc(dev->ctx, p, bytes, err);
    if (!(*p = mem_map(bytes))) {
        err_say(err, "out of memory for %zu parameters", d->n);
        return -ENOMEM;
    }
    return 0;
}

static void mem_free(struct step *d, void *p, size_t bytes)
{
    if (d->cfg.device && p)
        d->cfg.device->free(d->cfg.device->ctx, p);
    else if (!d->cfg.device)
        mem_unmap(p, bytes);
}

/* to_host: bytes of the device's src into host (a copy), or src itself. */
static int to_host(struct step *d, unsigned char **host, const void *src, size_t off,
                   size_t bytes, char *err)
{
    const struct step_device *dev = d->cfg.device;

    if (!dev) {
        *host = (unsigned char *)src;
        return 0;
    }
    *host = d->host;
    return dev->get(dev->ctx, d->host + off, (const unsigned char *)src + off, bytes, err);
}

int step_weights_write(struct step *d, const char *path, int rank, char *err)
{
    unsigned char *h;
    int rc = d->cfg.zero == 3 ? step_zero_gather(d, NULL, err) : 0;   /* ZeRO-3: a collective */

    if (rc == 0)
        rc = to_host(d, &h, d->weights, 0, d->n * d->es, err);

    return rc != 0 ? rc : weights_write(path, rank, h, d->n, d->cfg.w->dtype, err);
}

/* ------------------------------------------------------------ set-up */

/* expected_count: what the combined count must be: B, or under
 * mean-of-means the number of ranks with a non-empty share (each counts 1). */
static uint64_t expected_count(const struct step_cfg *c)
{
    uint64_t lo, hi, k = 0;

    if (c->mistake != MISTAKE_MEAN_OF_MEANS)
        return c->w->batch;
    for (int r = 0; r < c->world; r++) {
        workload_split(c->w->batch, c->world, r, c->shard_weights, &lo, &hi);
        k += hi > lo;
    }
    return k;
}

/* plan: the buckets (one on a device), whether they overlap the backward
 * pass, and rank 0's line about a plan of several. */
static int plan(struct step *d, char *err)
{
    const struct step_cfg *c = &d->cfg;
    const uint64_t size = c->device ? UINT64_MAX
                          : c->bucket_bytes ? c->bucket_bytes : BUCKETS_DEFAULT_BYTES;
    const char *why = NULL;
    int rc;

    if ((rc = buckets_plan(&d->plan, c->w->layer_off, c->w->nlayers, d->es, size, err)) != 0)
        return rc;
    if (d->plan.count == 1 && !(d->ops.flags & STEP_STUDENT))
        return 0;
    if (c->no_overlap)
        why = "--no-overlap";
    else if (c->mistake != MISTAKE_NONE && c->mistake != MISTAKE_SUM_NOT_MEAN)
        why = "this --mistake changes the gradient after the backward pass";
    d->overlap = why == NULL;
    if (c->rank == 0)
        log_msg("%zu buckets of %llu bytes at most (--bucket-size %llu, %zu layers)%s, "
                "overlap %s%s%s", d->plan.count,
                (unsigned long long)buckets_bytes_max(&d->plan, d->es),
                (unsigned long long)size, c->w->nlayers, d->ops.plan_note,
                why ? "off: " : "on", why ? why : "", why ? "" : " (a communication thread)");
    return 0;
}

static int run_job(void *ctx, struct overlap_job *job, char *err);

/* optimizer: cfg.optim's state for the n elements, or for the own ones
 * under ZeRO; zeroed (a device's through the host buffer); and the
 * memory table. */
static int optimizer(struct step *d, char *err)
{
    const struct step_device *dev = d->cfg.device;
    const size_t nt = d->n + STEP_TRAILER_LEN, es = d->es;
    const size_t elems = d->cfg.zero ? d->own_n : d->n;
    void *state = NULL;
    int rc;

    d->mem = (struct step_memory){
        .params = nt * es, .grads = nt * es, .grads_resident = nt * es,
        .buffers = (d->acc ? nt * es : 0) + (d->host ? nt * es : 0) + (d->ref ? d->n * es : 0) +
                   (d->scratch ? d->n * es : 0),
    };
    if (d->cfg.zero >= 2) {
        d->mem.grads_resident = 0;
        for (size_t i = 0; i < step_njobs(d); i++)
            d->mem.grads_resident += (d->own[3 * i + 1] - d->own[3 * i]) * es;
    }
    if (d->cfg.zero == 3)
        d->mem.params = d->mem.grads_resident;  /* between steps: the shard */
    if (!d->cfg.optim)
        return 0;
    if (!dev) {
        rc = optim_init(&d->opt, d->cfg.optim, d->cfg.w->dtype, elems, err);
    } else {
        const size_t bytes = optim_state_bytes(d->cfg.optim->kind, d->cfg.w->dtype, elems);
        rc = bytes ? mem_alloc(d, &state, bytes, err) : 0;
        memset(d->host, 0, nt * es);
        for (size_t at = 0; rc == 0 && at < bytes; at += nt * es)
            rc = dev->put(dev->ctx, (unsigned char *)state + at, d->host,
                          bytes - at < nt * es ? bytes - at : nt * es, err);
        if (rc == 0)
            rc = optim_init_at(&d->opt, d->cfg.optim, d->cfg.w->dtype, elems, state, err);
        else
            mem_free(d, state, bytes);
    }
    if (rc != 0)
        return rc;
    d->have_opt = 1;
    d->mem.optim = d->opt.state_bytes;
    return 0;
}

/* buffers: everything step_run touches, allocated once. */
static int buffers(struct step *d, char *err)
{
    const struct step_cfg *c = &d->cfg;
    const size_t nt = d->n + STEP_TRAILER_LEN, timed = (size_t)(c->steps - c->warmup);
    int rc;

    /* The weights have the trailer's room too: ZeRO all-gathers the
     * combined count and loss with the parameters (SHARDED). */
    if ((rc = mem_alloc(d, &d->weights, nt * d->es, err)) != 0 ||
        (rc = mem_alloc(d, &d->g, nt * d->es, err)) != 0)
        return rc;
    if (d->passes > 1 && (d->ops.flags & STEP_TRAILER))
        d->acc = malloc(nt * d->es);
    if (c->device)
        d->host = malloc(nt * d->es);
    if (d->closed_form)
        d->ref = malloc(d->n * d->es);
    if (!c->device && mistake_needs_scratch(c->mistake))
        d->scratch = malloc(d->n * d->es);
    for (int i = 0; i < 5; i++)
        d->times[i] = calloc(timed ? timed : 1, sizeof *d->times[i]);
    if ((d->passes > 1 && (d->ops.flags & STEP_TRAILER) && !d->acc) ||
        (c->device && !d->host) || (d->closed_form && !d->ref) ||
        (!c->device && mistake_needs_scratch(c->mistake) && !d->scratch) ||
        !d->times[0] || !d->times[1] || !d->times[2] || !d->times[3] || !d->times[4]) {
        err_say(err, "out of memory for %zu parameters", d->n);
        return -ENOMEM;
    }
    return 0;
}

int step_init(struct step *d, const struct step_cfg *cfg, const struct step_ops *ops,
              char *err)
{
    const struct workload *w = cfg->w;
    const int m = cfg->mistake;
    int rc;

    memset(d, 0, sizeof *d);
    d->cfg = *cfg;
    d->ops = *ops;
    d->n = w->n;
    d->es = dtype_size(w->dtype);
    workload_split(w->batch, cfg->world, cfg->rank, cfg->shard_weights, &d->lo, &d->hi);
    d->want = expected_count(cfg);
    d->passes = m == MISTAKE_SYNC_EVERY_MICRO ? cfg->micro : 1;
    d->closed_form = (ops->flags & (STEP_TRAILER | STEP_LOSSY)) == STEP_TRAILER &&
        w->kind == WORKLOAD_SYNTHETIC &&
        (m == MISTAKE_NONE || m == MISTAKE_SUM_NOT_MEAN || m == MISTAKE_SYNC_EVERY_MICRO);
    if ((rc = step_zero_check(d, err)) != 0 || (rc = plan(d, err)) != 0 ||
        (rc = buffers(d, err)) != 0 || (rc = step_zero_shards(d, err)) != 0 ||
        (rc = optimizer(d, err)) != 0)
        return rc;
    if (cfg->device) {
        workload_init_weights(w, d->host);
        rc = cfg->device->put(cfg->device->ctx, d->weights, d->host, d->n * d->es, err);
    } else {
        workload_init_weights(w, d->weights);
    }
    if (rc != 0 || (cfg->sync_every > 1 && (rc = localsgd_init(d, err)) != 0))
        return rc;
    if (cfg->zero == 3)
        step_zero_release(d);      /* only the shard stays between steps */
    if (d->overlap &&
        (rc = overlap_init(&d->ov, run_job, d, d->plan.nlayers + 1, cfg->clock, cfg->exec, err)) != 0)
        return rc;
    /* events per step: a layer or micro-batch each, the jobs of each pass,
     * the wait, finish, optimizer */
    return trace_open(&d->tr, cfg->trace, cfg->rank,
                      w->nlayers + (size_t)cfg->micro * (d->plan.nlayers + 3) + 8, err);
}

void step_destroy(struct step *d)
{
    char why[ERR_LEN];

    if (d->overlap)
        overlap_destroy(&d->ov);
    d->overlap = 0;
    (void)trace_close(&d->tr, why);     /* after a failure: the run failed anyway */
    buckets_free(&d->plan);
    for (int i = 0; i < 5; i++)
        free(d->times[i]);
    free(d->scratch);
    free(d->ref);
    free(d->host);
    free(d->acc);
    free(d->anchor);
    if (d->have_opt && d->cfg.device)
        mem_free(d, d->opt.state, d->opt.state_bytes);
    if (d->have_opt)
        optim_destroy(&d->opt);
    d->have_opt = 0;
    free(d->own);
    free(d->tslots);
    d->own = NULL;
    d->tslots = NULL;
    mem_free(d, d->g, (d->n + STEP_TRAILER_LEN) * d->es);
    mem_free(d, d->weights, (d->n + STEP_TRAILER_LEN) * d->es);
    d->g = d->weights = d->anchor = NULL;
}

int step_trace_close(struct step *d, char *err)
{
    return trace_close(&d->tr, err);
}

const struct step_memory *step_memory(const struct step *d)
{
    return &d->mem;
}

size_t step_buckets(const struct step *d)
{
    return d->plan.count;
}

int step_overlapping(const struct step *d)
{
    return d->overlap;
}

/* ------------------------------------------------------------ a pass */

/* gradient: this rank's sum over [lo, hi) in `micro` micro-batches into
 * d->g; its count and loss into *meta. */
int step_gradient(struct step *d, uint64_t lo, uint64_t hi, int micro, int mistake,
                  struct step_meta *meta, char *err)
{
    const struct step_device *dev = d->cfg.device;
    const double c0 = step_cpu(d);
    int rc = 0;

    if (!dev) {
        mistake_grad(mistake, d->cfg.w, d->weights, d->step, lo, hi, micro, d->g, d->scratch,
                     &meta->examples, &meta->loss);
    } else {
        meta->examples = hi - lo;
        rc = dev->zero(dev->ctx, d->g, d->n, err);
        for (int j = 0; j < micro && rc == 0; j++) {
            uint64_t a, b;
            workload_split(hi - lo, micro, j, NULL, &a, &b);
            rc = dev->grad_add(dev->ctx, d->weights, d->step, lo + a, lo + b, d->g, err);
        }
        if (rc == 0)
            rc = dev->loss(dev->ctx, &meta->loss, err);
    }
    d->compute_cpu += step_cpu(d) - c0;
    return rc;
}

/* finite: elements [first, first + count) of the host buffer g finite, or
 * ERR_NONFINITE naming the first that is not. */
static int all_finite(const struct step *d, const unsigned char *g, size_t first, size_t count,
                  char *err)
{
    const int dtype = d->cfg.w->dtype;
    size_t bad;

    if (vec_check_finite(g + first * d->es, count, dtype, &bad) == 0)
        return 0;
    err_say(err, "step %llu: gradient element %zu is %g before the %s",
        (unsigned long long)d->step, first + bad, vec_get(g, first + bad, dtype), d->ops.verb);
    return ERR_NONFINITE;
}

/* trailer: the pass's count and loss behind the gradient (in d->g). */
static int trailer(struct step *d, const struct step_meta *meta, char *err)
{
    const struct step_device *dev = d->cfg.device;
    const int dtype = d->cfg.w->dtype;
    unsigned char *t = dev ? d->host : d->g;

    vec_set(t, d->n, dtype, fmod((double)meta->examples, STEP_COUNT_SPLIT));
    vec_set(t, d->n + 1, dtype, floor((double)meta->examples / STEP_COUNT_SPLIT));
    vec_set(t, d->n + 2, dtype, meta->loss);
    if (!dev)
        return 0;
    return dev->put(dev->ctx, (unsigned char *)d->g + d->n * d->es, d->host + d->n * d->es,
                    STEP_TRAILER_LEN * d->es, err);
}

/* njobs, job_at: the pass's jobs (step.h, ONE STEP 4), and their trace
 * names. */
size_t step_njobs(const struct step *d)
{
    return d->plan.count + ((d->ops.flags & STEP_TRAILER) && d->plan.count > 1);
}

struct overlap_job step_job_at(const struct step *d, size_t i, char *name)
{
    const int trail = (d->ops.flags & STEP_TRAILER) != 0;
    unsigned char *g = d->g;
    struct overlap_job j = { NULL, 0, 0, 1, 0.0, 0.0, 0.0 };

    if (d->plan.count == 1 && trail) {
        j.n = d->n + STEP_TRAILER_LEN;
        snprintf(name, TRACE_NAME_LEN, "%s", d->ops.name);
    } else if (i < d->plan.count) {
        j.index = d->plan.b[i].first;
        j.n = d->plan.b[i].count;
        snprintf(name, TRACE_NAME_LEN, "%s bucket %zu", d->ops.name, i);
    } else {
        j.index = d->n;
        j.n = STEP_TRAILER_LEN;
        j.check = 0;
        snprintf(name, TRACE_NAME_LEN, "%s count+loss", d->ops.name);
    }
    j.buf = g + j.index * d->es;
    return j;
}

/* send: one job through the combine, its gradient elements checked first
 * (on the host: a device's were checked before the pass's jobs). */
static int send_job(struct step *d, struct overlap_job *oj, char *err)
{
    struct step_job j = { d->step, d->pass, d->g, oj->index, oj->n, d->meta,
                          step_zero_is_scatter(d, oj->index), &oj->late };
    int rc;

    if (oj->check && (d->ops.flags & STEP_CHECK_FINITE) && !d->cfg.device &&
        (rc = all_finite(d, d->g, oj->index, oj->index + oj->n > d->n ? d->n - oj->index : oj->n,
                     err)) != 0)
        return rc;
    if ((rc = d->ops.combine(d->ops.ctx, &j, err)) == 0 && j.scatter && d->cfg.zero >= 2)
        step_zero_release_grad(d, oj->index);
    return rc;
}

/* run_job: the communication thread's overlap_fn. */
static int run_job(void *ctx, struct overlap_job *job, char *err)
{
    return send_job(ctx, job, err);
}

/* trace_jobs: the pass's jobs into the trace, their time into *comm. */
static void trace_job(struct step *d, const struct overlap_job *j, const char *name,
                      struct step_times *t)
{
    trace_add(&d->tr, name, TRACE_COMM, j->t0, j->t1, (long)d->step, (long long)(j->n * d->es));
    t->comm += j->t1 - j->t0;
    if (!(t->enter <= j->t0))       /* NaN: the step's first job */
        t->enter = j->t0;
}

/* pass_plain: the gradient straight, then each job in order, here. */
static int pass_plain(struct step *d, uint64_t lo, uint64_t hi, int micro, int mistake,
                      struct step_times *t, char *err)
{
    unsigned char *h;
    char name[TRACE_NAME_LEN];
    double t0 = step_now(d), t1;
    int rc;

    if ((rc = step_gradient(d, lo, hi, micro, mistake, &d->meta, err)) != 0) {
        prefix(err, (int)d->step);
        return rc;
    }
    t1 = step_now(d);
    t->backward += t1 - t0;
    trace_add(&d->tr, "backward", TRACE_COMPUTE, t0, t1, (long)d->step, -1);
    d->bwd_end = t1;
    if (d->cfg.device && (d->ops.flags & STEP_CHECK_FINITE)) {
        if ((rc = to_host(d, &h, d->g, 0, d->n * d->es, err)) != 0) {
            prefix(err, (int)d->step);
            return rc;
        }
        if ((rc = all_finite(d, h, 0, d->n, err)) != 0)
            return rc;
    }
    if ((d->ops.flags & STEP_TRAILER) && (rc = trailer(d, &d->meta, err)) != 0) {
        prefix(err, (int)d->step);
        return rc;
    }
    for (size_t i = 0; i < step_njobs(d); i++) {
        struct overlap_job j = step_job_at(d, i, name);
        j.t0 = step_now(d);
        j.late = 0.0;
        rc = send_job(d, &j, err);
        j.t1 = step_now(d) - j.late;
        trace_job(d, &j, name, t);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* on_ready: a bucket is complete (backward_bucketed's callback): fix the
 * pass's count and loss with the first (the loss is whole by then, no job
 * has started), hand the bucket to the communication thread. */
struct ready {
    struct step *d;
    int first;
};

static void on_ready(void *arg, size_t bucket, double loss)
{
    struct ready *x = arg;
    char name[TRACE_NAME_LEN];
    struct overlap_job j = step_job_at(x->d, bucket, name);

    if (x->first) {
        x->d->meta = (struct step_meta){ x->d->hi - x->d->lo, loss };
        x->first = 0;
    }
    overlap_submit(&x->d->ov, &j);
}

/* pass_overlapped: the backward pass with each bucket handed to the
 * thread as it completes; then the trailer; then the wait for all. */
static int pass_overlapped(struct step *d, struct step_times *t, char *err)
{
    struct ready x = { d, 1 };
    char name[TRACE_NAME_LEN];
    double t0 = step_now(d), t1, loss, c0 = step_cpu(d);
    int rc;

    overlap_begin(&d->ov);
    loss = backward_bucketed(d->cfg.w, d->weights, d->step, d->lo, d->hi, d->cfg.micro, d->g,
                             &d->plan, &d->tr, d->cfg.clock, on_ready, &x);
    d->compute_cpu += step_cpu(d) - c0;     /* this thread's: the jobs run on the other */
    d->meta = (struct step_meta){ d->hi - d->lo, loss };
    if (d->ops.flags & STEP_TRAILER) {
        struct overlap_job tj;
        (void)trailer(d, &d->meta, err);        /* on the host: cannot fail */
        tj = step_job_at(d, d->plan.count, name);
        overlap_submit(&d->ov, &tj);
    }
    t1 = d->bwd_end = step_now(d);
    t->backward = t1 - t0;
    rc = overlap_wait(&d->ov, err);
    t->wait = step_now(d) - t1;
    for (size_t i = 0; i < step_njobs(d); i++) {
        const struct overlap_job *j = overlap_job_at(&d->ov, i);
        if (!j || j->t1 == 0.0)
            break;              /* not run: the pass failed before it */
        (void)step_job_at(d, i, name);
        trace_job(d, j, name, t);
    }
    return rc;
}

/* ------------------------------------------------------------ the step */

/* check: the combined count (want) and, with the closed form, the sum
 * (host view h of n + trailer elements). OUT: *count, *loss. */
static int check(struct step *d, const unsigned char *h, const unsigned char *tr,
                 struct step_result *r, char *err)
{
    const struct workload *w = d->cfg.w;
    const int dtype = w->dtype, s = (int)d->step;
    struct workload q = *w;
    size_t i = 0;

    r->count = (uint64_t)vec_get(tr, 0, dtype) +
               (uint64_t)vec_get(tr, 1, dtype) * (uint64_t)STEP_COUNT_SPLIT;
    r->loss = vec_get(tr, 2, dtype) / (double)r->count;
    if (r->count != d->want) {
        err_say(err, "step %d: the ranks' example counts add up to %llu, not %s %llu "
            "(--shard-weights, --batch or --mistake differ between ranks?)", s,
            (unsigned long long)r->count, d->cfg.mistake == MISTAKE_MEAN_OF_MEANS ?
            "the number of ranks with data (mean-of-means counts 1 each)" : "the global batch",
            (unsigned long long)d->want);
        return ERR_MISMATCH;
    }
    if (!d->closed_form)
        return 0;
    /* The closed form over the whole batch, without the EMULATED backward
     * time (that is the ranks' compute, not this check's). */
    q.backward_per_example = 0;
    if (!d->cfg.zero) {     /* compared block by block as it is made */
        if (workload_synth_compare(&q, d->step, 0, w->batch, h, d->ref, &i) == 0)
            return 0;
        goto differ;
    }
    vec_zero(d->ref, d->n, dtype);      /* ZeRO: this rank holds its own ranges' sum */
    workload_grad_add(&q, NULL, d->step, 0, w->batch, d->ref, NULL);
    for (size_t j = 0; j < step_njobs(d); j++)
        for (i = d->own[3 * j]; i < d->own[3 * j + 1] && i < d->n; i++)
            if (vec_get(d->ref, i, dtype) != vec_get(h, i, dtype))
                goto differ;
    return 0;
differ:
    err_say(err, "step %d: the all-reduced sum differs from the closed form F(0, B) at element "
        "%zu: %.17g, want %.17g", s, i, i < d->n ? vec_get(h, i, dtype) : NAN,
        i < d->n ? vec_get(d->ref, i, dtype) : NAN);
    return ERR_MISMATCH;
}

/* combine: every pass of step s (one, or a micro-batch each under
 * sync-every-micro, their combined buffers summed into d->acc). OUT:
 * *sum, where the combined gradient is (in the device's memory). */
static int combine(struct step *d, struct step_times *t, void **sum, char *err)
{
    const size_t nt = d->n + STEP_TRAILER_LEN;
    const int dtype = d->cfg.w->dtype, sync = d->passes > 1;
    int rc;

    *sum = d->g;
    if (d->overlap)
        return d->ops.flags & STEP_STUDENT ? step_student_pass(d, t, err) : pass_overlapped(d, t, err);
    if (!sync)
        return pass_plain(d, d->lo, d->hi, d->cfg.micro, d->cfg.mistake, t, err);
    if (d->acc) {
        vec_zero(d->acc, nt, dtype);
        *sum = d->acc;
    }
    for (d->pass = 0; d->pass < d->passes; d->pass++) {
        uint64_t a, b;
        workload_split(d->hi - d->lo, d->passes, d->pass, NULL, &a, &b);
        if ((rc = pass_plain(d, d->lo + a, d->lo + b, 1, MISTAKE_NONE, t, err)) != 0)
            return rc;
        if (d->acc)
            vec_add(d->acc, d->g, nt, dtype);
    }
    return 0;
}

int step_run(struct step *d, int s, struct step_result *r, char *err)
{
    const struct step_ops *o = &d->ops;
    const size_t nt = d->n + STEP_TRAILER_LEN;
    double t_step = step_now(d), f0, f1, a0;
    unsigned char *h;
    void *sum;
    int rc;

    memset(r, 0, sizeof *r);
    r->t.enter = NAN;
    d->step = (uint64_t)s;
    d->pass = 0;
    if (d->cfg.sync_every > 1)
        return localsgd_run(d, s, r, err);  /* LOCAL SGD (localsgd.h) */
    if (d->cfg.zero == 3 && (rc = step_zero_forward(d, &r->t, err)) != 0) {
        prefix(err, s);
        return rc;
    }
    if ((rc = combine(d, &r->t, &sum, err)) != 0)
        return rc;
    if (d->cfg.zero == 3)
        step_zero_release(d);      /* used by the backward; the shard stays */
    f0 = step_now(d);
    if (o->finish && (rc = o->finish(o->ctx, d->step, d->weights, err)) != 0)
        return rc;
    f1 = step_now(d);
    trace_add(&d->tr, o->wait_name, TRACE_COMPUTE, d->bwd_end, f0, s, -1);
    if (o->finish_name)
        trace_add(&d->tr, o->finish_name, TRACE_COMM, f0, f1, s,
                  (long long)(d->n * d->es));
    r->t.finish = f1 - f0;
    if (!d->overlap)
        r->t.wait = r->t.comm;  /* without overlap, all of it is waited for */
    r->t.wait += r->t.finish;
    r->count = d->meta.examples;
    r->loss = NAN;
    if (d->cfg.zero && (rc = step_zero_update(d, r, err)) != 0) {
        prefix(err, s);
        return rc;
    }
    if (o->flags & STEP_TRAILER) {
        double c0 = step_now(d), u0 = step_cpu(d);
        const unsigned char *tr;
        if ((rc = d->closed_form ? to_host(d, &h, sum, 0, nt * d->es, err)
                                 : to_host(d, &h, sum, d->n * d->es, STEP_TRAILER_LEN * d->es,
                                           err)) != 0) {
            prefix(err, s);
            return rc;
        }
        /* ZeRO: the combined trailer came back with the parameters. */
        tr = d->cfg.zero ? (unsigned char *)d->weights + d->n * d->es : h + d->n * d->es;
        rc = check(d, h, tr, r, err);
        d->compute_cpu += step_cpu(d) - u0;
        if (rc != 0)
            return rc;
        t_step += step_now(d) - c0;  /* the check is not part of the step's time */
    }
    a0 = step_now(d);
    if (o->apply && !d->cfg.zero) {
        const double u0 = step_cpu(d);
        const struct step_update u = {
            d->step, d->have_opt ? &d->opt : NULL, d->weights, sum, 0, d->n, 0,
            d->cfg.mistake == MISTAKE_SUM_NOT_MEAN ? 1 : r->count,
        };
        rc = o->apply(o->ctx, &u, err);
        d->compute_cpu += step_cpu(d) - u0;
        if (rc != 0) {
            prefix(err, s);
            return rc;
        }
        trace_add(&d->tr, "optimizer", TRACE_COMPUTE, a0, step_now(d), s, -1);
    }
    r->t.step = step_now(d) - t_step;
    step_keep_times(d, s, &r->t);
    trace_flush(&d->tr);
    return 0;
}

size_t step_medians(const struct step *d, struct step_times *med)
{
    double v[5];
    struct metrics_stats st;

    for (int i = 0; i < 5; i++)
        v[i] = d->ntimed > 0 && metrics_summarize(d->times[i], d->ntimed, &st) == 0
               ? st.median : NAN;
    *med = (struct step_times){ v[T_STEP], v[T_BACKWARD], v[T_COMM], v[T_FINISH], v[T_WAIT], NAN };
    return d->ntimed;
}
