/* step_zero.c -- ZeRO inside the one step driver (step.h, SHARDED;
 * docs/design.md, Optimizers and ZeRO): which part of each job a rank
 * owns, the sharded update and the all-gathers, what stages 2 and 3 give
 * back to the system, and stage 3's forward pass. step.c calls these at
 * the points SHARDED names; the collectives are the system's (ops->gather,
 * and combine with job->scatter).
 */
#include "step.h"
#include "step_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "mistake.h"
#include "base/vec.h"

/* step_zero_check: what ZeRO (cfg.zero, SHARDED in step.h) needs. */
int step_zero_check(const struct step *d, char *err)
{
    const struct step_cfg *c = &d->cfg;

    if (c->zero == 0)
        return 0;
    if (c->zero < 0 || c->zero > 3)
        err_say(err, "--zero %d: the stages are 1, 2 and 3", c->zero);
    else if (c->zero == 3 && c->w->kind == WORKLOAD_SYNTHETIC)
        err_say(err, "--zero 3: the synthetic workload has no forward pass (its gradient does not "
                "read the weights); use mlp or linreg");
    else if (c->device)
        err_say(err, "--zero: runs on the host only (--device cpu)");
    else if (!d->ops.shard || !d->ops.gather || !(d->ops.flags & STEP_TRAILER))
        err_say(err, "--zero: this system has no reduce-scatter and all-gather");
    else if (c->mistake != MISTAKE_NONE)
        err_say(err, "--zero: takes no --mistake (they change the combine ZeRO shards)");
    else
        return 0;
    return ERR_USAGE;
}

/* step_zero_is_scatter: ZeRO reduce-scatters a job that holds gradient elements; the
 * trailer alone (several buckets) is all-reduced, as without ZeRO. */
int step_zero_is_scatter(const struct step *d, size_t first)
{
    return d->cfg.zero > 0 && first < d->n;
}

/* step_zero_shards: ZeRO: each job's own range (ops->shard), as d->own[3 j ..]: lo,
 * hi, and the optimizer state's offset of lo; d->own_n, the own elements
 * below n (the trailer is not a parameter). */
int step_zero_shards(struct step *d, char *err)
{
    char name[TRACE_NAME_LEN];
    size_t off = 0;

    if (d->cfg.zero == 0)
        return 0;
    if (!(d->own = calloc(3 * step_njobs(d), sizeof *d->own))) {
        err_say(err, "out of memory for the shard table");
        return -ENOMEM;
    }
    for (size_t i = 0; i < step_njobs(d); i++) {
        struct overlap_job j = step_job_at(d, i, name);
        size_t lo = 0, hi = 0;
        if (step_zero_is_scatter(d, j.index)) {
            d->ops.shard(d->ops.ctx, j.index, j.n, &lo, &hi);
            assert(lo >= j.index && lo <= hi && hi <= j.index + j.n);
        }
        d->own[3 * i] = lo;
        d->own[3 * i + 1] = hi;
        d->own[3 * i + 2] = off;
        off += (hi < d->n ? hi : d->n) - (lo < d->n ? lo : d->n);
    }
    d->own_n = off;
    /* ZeRO-3: the count and loss travel in a 3-element slot per rank. */
    if (d->cfg.zero == 3 &&
        !(d->tslots = calloc(3 * (size_t)d->cfg.world, d->es))) {
        err_say(err, "out of memory for the trailer slots");
        return -ENOMEM;
    }
    return 0;
}

/* step_zero_gather: each job's range of the weights all-gathered from the
 * ranks' shards, in job order (after the update; ZeRO-3 before the
 * forward and the backward passes). */
int step_zero_gather(struct step *d, struct step_times *t, char *err)
{
    char name[TRACE_NAME_LEN];
    int rc;

    for (size_t i = 0; i < step_njobs(d); i++) {
        struct overlap_job j = step_job_at(d, i, name);
        double t0 = step_now(d);
        if (!step_zero_is_scatter(d, j.index))
            continue;
        if ((rc = d->ops.gather(d->ops.ctx, d->weights, j.index, j.n, err)) != 0)
            return rc;
        trace_add(&d->tr, "allgather", TRACE_COMM, t0, step_now(d), (long)d->step,
                  (long long)(j.n * d->es));
        if (t) {
            t->comm += step_now(d) - t0;
            if (!(t->enter <= t0))  /* the step's first combine (metrics.h, LAST ENTRY) */
                t->enter = t0;
        }
    }
    return 0;
}

/* step_zero_release: ZeRO-3: the weights outside the rank's shard go back to
 * the system (mem.h); they read as zero until the next gather. */
void step_zero_release(struct step *d)
{
    unsigned char *w = d->weights;
    char name[TRACE_NAME_LEN];

    for (size_t i = 0; i < step_njobs(d); i++) {
        struct overlap_job j = step_job_at(d, i, name);
        if (!step_zero_is_scatter(d, j.index))
            continue;
        mem_release(w + j.index * d->es, (d->own[3 * i] - j.index) * d->es);
        mem_release(w + d->own[3 * i + 1] * d->es, (j.index + j.n - d->own[3 * i + 1]) * d->es);
    }
}

/* step_zero_forward: ZeRO-3's forward pass: the parameters gathered, the pass run
 * (psring's workloads compute forward and backward in one call, so this is
 * that call, its gradient overwritten by the backward's below: the
 * backward recomputes the forward), the parameters freed, and gathered
 * again for the backward. */
int step_zero_forward(struct step *d, struct step_times *t, char *err)
{
    struct step_meta m;
    double t0;
    int rc;

    if ((rc = step_zero_gather(d, t, err)) != 0)
        return rc;
    t0 = step_now(d);
    if ((rc = step_gradient(d, d->lo, d->hi, d->cfg.micro, d->cfg.mistake, &m, err)) != 0)
        return rc;
    trace_add(&d->tr, "forward", TRACE_COMPUTE, t0, step_now(d), (long)d->step, -1);
    step_zero_release(d);
    return step_zero_gather(d, t, err);
}

/* trailer3: ZeRO-3 keeps no full copy to bring the combined count and loss
 * back with: the ranks that own trailer elements put them in their
 * 3-element slot, the slots are all-gathered (chunk r of 3K elements is
 * slot r), and each element is the sum of the slots (one owner, the
 * others +0: exact). */
static int trailer3(struct step *d, char *err)
{
    const int dtype = d->cfg.w->dtype, k = d->cfg.world, me = d->cfg.rank;
    unsigned char *w = d->weights;
    char name[TRACE_NAME_LEN];
    int scattered = 0, rc;

    vec_zero(d->tslots, 3 * (size_t)k, dtype);
    for (size_t i = 0; i < step_njobs(d); i++) {
        struct overlap_job j = step_job_at(d, i, name);
        if (!step_zero_is_scatter(d, j.index) || j.index + j.n <= d->n)
            continue;
        scattered = 1;
        for (size_t e = d->own[3 * i]; e < d->own[3 * i + 1]; e++)
            if (e >= d->n)
                vec_set(d->tslots, 3 * (size_t)me + (e - d->n), dtype, vec_get(d->g, e, dtype));
    }
    if (!scattered)
        return 0;               /* the trailer was all-reduced on its own */
    if ((rc = d->ops.gather(d->ops.ctx, d->tslots, 0, 3 * (size_t)k, err)) != 0)
        return rc;
    for (size_t e = 0; e < STEP_TRAILER_LEN; e++) {
        double v = 0;
        for (int r = 0; r < k; r++)
            v += vec_get(d->tslots, 3 * (size_t)r + e, dtype);
        vec_set(w, d->n + e, dtype, v);
    }
    return 0;
}

/* step_zero_update: ZeRO's apply and all-gather (step.h, SHARDED): each
 * job's own range updated (the optimizer's state of the shard only), its
 * own part of the trailer copied behind the weights, then each job's
 * range of the weights all-gathered, in job order. The count the update
 * divides by is the one the combine must add up to (B); check() then
 * verifies the gathered count, as without ZeRO. */
int step_zero_update(struct step *d, struct step_result *r, char *err)
{
    const struct step_ops *o = &d->ops;
    unsigned char *w = d->weights, *g = d->g;
    char name[TRACE_NAME_LEN];
    double a0 = step_now(d), a1;
    int rc;

    for (size_t i = 0; i < step_njobs(d); i++) {
        struct overlap_job j = step_job_at(d, i, name);
        size_t lo = d->own[3 * i], hi = d->own[3 * i + 1];
        if (!step_zero_is_scatter(d, j.index)) {
            lo = j.index;       /* the trailer, all-reduced: every rank has it */
            hi = j.index + j.n;
        }
        if (hi > d->n && hi > lo) {
            size_t t0 = lo > d->n ? lo : d->n;
            memcpy(w + t0 * d->es, g + t0 * d->es, (hi - t0) * d->es);
        }
        if (o->apply && lo < d->n && hi > lo) {
            const struct step_update u = {
                d->step, d->have_opt ? &d->opt : NULL, d->weights, d->g, lo,
                (hi < d->n ? hi : d->n) - lo, d->own[3 * i + 2], d->want,
            };
            const double u0 = step_cpu(d);
            rc = o->apply(o->ctx, &u, err);
            d->compute_cpu += step_cpu(d) - u0;
            if (rc != 0)
                return rc;
        }
    }
    a1 = step_now(d);
    trace_add(&d->tr, "optimizer", TRACE_COMPUTE, a0, a1, (long)d->step, -1);
    if (d->cfg.zero == 3)
        return trailer3(d, err);    /* the parameters stay sharded */
    return step_zero_gather(d, &r->t, err);
}

/* step_zero_release_grad: ZeRO-2: after the reduce-scatter of the job
 * that starts at `first`, the rest of its gradient is another rank's; its
 * pages go back to the system (the next backward pass faults them in). */
void step_zero_release_grad(struct step *d, size_t first)
{
    unsigned char *g = d->g;
    char name[TRACE_NAME_LEN];

    for (size_t i = 0; i < step_njobs(d); i++) {
        struct overlap_job j = step_job_at(d, i, name);
        if (j.index != first)
            continue;
        mem_release(g + first * d->es, (d->own[3 * i] - first) * d->es);
        mem_release(g + d->own[3 * i + 1] * d->es, (first + j.n - d->own[3 * i + 1]) * d->es);
        return;
    }
}
