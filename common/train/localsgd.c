/* localsgd.c -- local SGD's steps and syncs (localsgd.h says what and why). */
#include "localsgd.h"
#include "step_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/vec.h"
#include "mistake.h"

int localsgd_init(struct step *d, char *err)
{
    const struct step_cfg *c = &d->cfg;

    if (c->device || c->zero || c->mistake != MISTAKE_NONE ||
        !((d->ops.flags & STEP_TRAILER) || d->ops.finish) || !(d->ops.apply || d->have_opt)) {
        err_say(err, "--sync-every %d: local SGD runs on the host, without --zero or "
                "--mistake, over the ring or the PS with a local optimizer", c->sync_every);
        return ERR_USAGE;
    }
    d->overlap = 0;             /* nothing to send during a local step's backward pass */
    if (!(d->anchor = malloc(d->n * d->es))) {
        err_say(err, "out of memory for %zu parameters", d->n);
        return -ENOMEM;
    }
    memcpy(d->anchor, d->weights, d->n * d->es);
    d->round_examples = 0;
    d->round_loss = 0;
    d->round_steps = 0;
    return 0;
}

/* say: "step S: " in front of err's line. */
static void say(char *err, int s)
{
    char why[ERR_LEN];

    snprintf(why, sizeof why, "%s", err);
    err_say(err, "step %d: %s", s, why);
}

/* sync_ps: the PS's sync (no trailer): the deltas pushed as round s / H,
 * the servers' averaged weights pulled (localsgd.h). OUT: r's times. */
static int sync_ps(struct step *d, int s, struct step_result *r, char *err)
{
    const uint64_t round = d->step / (uint64_t)d->cfg.sync_every;
    struct step_job job = { round, 0, d->g, 0, d->n, { d->round_examples, d->round_loss }, 0,
                            NULL };
    double c0, c1, f1;
    int rc;

    c0 = step_now(d);
    if ((rc = d->ops.combine(d->ops.ctx, &job, err)) != 0)
        return rc;
    c1 = step_now(d);
    if ((rc = d->ops.finish(d->ops.ctx, round, d->weights, err)) != 0)
        return rc;
    f1 = step_now(d);
    trace_add(&d->tr, d->ops.name, TRACE_COMM, c0, c1, s, (long long)(d->n * d->es));
    if (d->ops.finish_name)
        trace_add(&d->tr, d->ops.finish_name, TRACE_COMM, c1, f1, s, (long long)(d->n * d->es));
    r->t.enter = c0;
    r->t.comm = c1 - c0;
    r->t.finish = f1 - c1;
    r->t.wait = f1 - c0;
    r->count = d->round_examples;
    r->loss = d->round_examples ? d->round_loss / (double)d->round_examples : NAN;
    r->local = 0;
    return 0;
}

/* sync: the round's deltas combined, their mean added to the anchor (the
 * new weights, and the new anchor); the PS: sync_ps. OUT: r's count,
 * loss, comm, enter. */
static int sync(struct step *d, int s, struct step_result *r, char *err)
{
    const int dtype = d->cfg.w->dtype;
    const size_t n = d->n;
    const double k = (double)d->cfg.world;
    unsigned char *g = d->g;
    const unsigned char *tr = g + n * d->es;
    uint64_t want = d->want * (uint64_t)d->round_steps;
    struct step_job job = { d->step, 0, g, 0, n + STEP_TRAILER_LEN,
                            { d->round_examples, d->round_loss }, 0, NULL };
    double c0, c1;
    size_t bad;
    int rc;

    for (size_t i = 0; i < n; i++)
        vec_set(g, i, dtype, vec_get(d->weights, i, dtype) - vec_get(d->anchor, i, dtype));
    vec_set(g, n, dtype, (double)(d->round_examples % (uint64_t)STEP_COUNT_SPLIT));
    vec_set(g, n + 1, dtype, (double)(d->round_examples / (uint64_t)STEP_COUNT_SPLIT));
    vec_set(g, n + 2, dtype, d->round_loss);
    if (!(d->ops.flags & STEP_TRAILER)) {
        if ((rc = sync_ps(d, s, r, err)) != 0)
            return rc;
        goto done;
    }
    c0 = step_now(d);
    if ((rc = d->ops.combine(d->ops.ctx, &job, err)) != 0)
        return rc;
    c1 = step_now(d);
    trace_add(&d->tr, d->ops.name, TRACE_COMM, c0, c1, s,
              (long long)((n + STEP_TRAILER_LEN) * d->es));
    r->t.enter = c0;
    r->t.comm = r->t.wait = c1 - c0;
    r->count = (uint64_t)vec_get(tr, 0, dtype) +
               (uint64_t)vec_get(tr, 1, dtype) * (uint64_t)STEP_COUNT_SPLIT;
    r->loss = vec_get(tr, 2, dtype) / (double)r->count;
    r->local = 0;
    if (r->count != want) {
        err_say(err, "step %d: the ranks' example counts over the round's %d steps add up to "
                "%llu, not %llu (--sync-every or --batch differ between ranks?)", s,
                d->round_steps, (unsigned long long)r->count, (unsigned long long)want);
        return ERR_MISMATCH;
    }
    for (size_t i = 0; i < n; i++)
        vec_set(d->weights, i, dtype, vec_get(d->anchor, i, dtype) + vec_get(g, i, dtype) / k);
done:
    if (vec_check_finite(d->weights, n, dtype, &bad) != 0) {
        err_say(err, "step %d: the averaged weight %zu is %.17g (no weights are written)", s,
                bad, vec_get(d->weights, bad, dtype));
        return ERR_NONFINITE;
    }
    memcpy(d->anchor, d->weights, n * d->es);
    d->round_examples = 0;
    d->round_loss = 0;
    d->round_steps = 0;
    return 0;
}

int localsgd_run(struct step *d, int s, struct step_result *r, char *err)
{
    const struct step_ops *o = &d->ops;
    const int dtype = d->cfg.w->dtype, h = d->cfg.sync_every;
    const int last = (s + 1) % h == 0 || s == d->cfg.steps - 1;
    double t0 = step_now(d), b1, a0;
    struct step_meta meta = { 0, 0.0 };
    size_t bad;
    int rc;

    if ((rc = step_gradient(d, d->lo, d->hi, d->cfg.micro, MISTAKE_NONE, &meta, err)) != 0) {
        say(err, s);
        return rc;
    }
    b1 = step_now(d);
    d->bwd_end = b1;
    r->t.backward = b1 - t0;
    trace_add(&d->tr, "backward", TRACE_COMPUTE, t0, b1, s, -1);
    if (vec_check_finite(d->g, d->n, dtype, &bad) != 0) {
        err_say(err, "step %d: gradient element %zu is %.17g before the local update", s, bad,
                vec_get(d->g, bad, dtype));
        return ERR_NONFINITE;
    }
    d->meta = meta;
    d->round_examples += meta.examples;
    d->round_loss += meta.loss;
    d->round_steps++;
    r->count = meta.examples;
    r->loss = meta.examples > 0 ? meta.loss / (double)meta.examples : NAN;
    r->local = 1;
    a0 = step_now(d);
    if (meta.examples > 0) {
        const struct step_update u = { d->step, d->have_opt ? &d->opt : NULL, d->weights,
                                       d->g, 0, d->n, 0, meta.examples };
        const double u0 = step_cpu(d);
        /* the PS worker has no apply op: the driver's optimizer state */
        rc = o->apply ? o->apply(o->ctx, &u, err)
                      : optim_update(&d->opt, d->step + 1, d->weights, d->g, d->n, 0,
                                     meta.examples);
        d->compute_cpu += step_cpu(d) - u0;
        if (rc == ERR_NONFINITE && !o->apply)
            err_say(err, "the local update made a weight NaN or Inf");
        else if (rc != 0 && !o->apply)
            err_say(err, "the local update: %s", err_str(rc));
        if (rc != 0) {
            say(err, s);
            return rc;
        }
        trace_add(&d->tr, "optimizer", TRACE_COMPUTE, a0, step_now(d), s, -1);
    }
    if (last && (rc = sync(d, s, r, err)) != 0)
        return rc;
    r->t.step = step_now(d) - t0;
    step_keep_times(d, s, &r->t);
    trace_flush(&d->tr);
    return 0;
}
