/* train.c -- SGD steps over the ring (train.h says what and why).
 *
 * The step itself is common/train/step.c's (step.h): the gradient, the buckets,
 * the communication thread, the trailer and the checks. The ring hands it
 * a combine, one coll_allreduce per job (a bucket, the trailer, or the
 * n + 3 elements at once), and an apply, sgd_step here or gpu_sgd_step in
 * train_cuda.c; train_steps, shared by both, runs the steps and keeps the
 * ring's own output: the loss lines, the loss file, the record and the
 * medians. The order of the adds inside a rank is the workload's; across
 * ranks it is the ring's, fixed, so a rerun gives the same bits.
 */
#include "train.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "train/losscurve.h"
#include "base/mem.h"
#include "train/mistake.h"
#include "train/optim.h"
#include "train/step.h"
#include "coll_psgd.h"
#include "wire/net.h"

#define LOSS_LOG_EVERY_S 1.0
/* STUDENT_NOTE: rank 0's plan line under --bucket-student (step.h, STEP_STUDENT). */
#define STUDENT_NOTE " (the project's plan; --bucket-student cuts its own)"
/* LOSS_NOTE: what a step of the --loss-time-out file is (losscurve.h). */
#define LOSS_NOTE "step: the training step; wall_s at rank 0 after the step's update"

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

/* allreduce_job: the job's elements all-reduced; with --compress the
 * gradient's on the compressed wire and the trailer's (the example counts
 * and the loss, which must stay exact) raw in the same frames
 * (coll_allreduce_tail): no round of its own. */
static int allreduce_job(const struct train_cfg *cfg, const struct step_job *job, char *err)
{
    size_t es = dtype_size(cfg->c->dtype), n = cfg->w->n, lo = job->first;
    size_t hi = job->first + job->count, mid = hi < n ? hi : n > lo ? n : lo;
    unsigned char *g = job->grad;

    if (cfg->psgd)              /* PowerSGD: the factors, two rounds (coll_psgd.h) */
        return coll_psgd_allreduce(cfg->coll, cfg->psgd, g, lo, job->count, err);
    if (!cfg->coll->comp)
        return coll_allreduce(cfg->coll, g + lo * es, job->count, err);
    if (cfg->coll->comp->frame && (lo != 0 || mid != n)) {
        err_say(err, "--compress %s: selects the top k of the whole gradient, this bucket is "
                "[%zu, %zu) of %zu: one bucket (--bucket-size at least the model)",
                cfg->coll->label, lo, mid, n);
        return ERR_USAGE;
    }
    if (mid == lo)              /* a bucket of the trailer alone */
        return coll_allreduce_exact(cfg->coll, g + lo * es, hi - lo, err);
    return coll_allreduce_tail(cfg->coll, g + lo * es, hi - lo, hi - mid, err);
}

/* ring_combine: the ring's combine (step.h): the job's elements
 * all-reduced over the coll, in host or device memory as the coll's kind
 * says. The step's first job also measures the step's wait (train.h,
 * WAIT). */
static int ring_combine(void *ctx, const struct step_job *job, char *err)
{
    const struct train_cfg *cfg = ctx;
    struct train_wait *tw = cfg->wait;
    struct xport *x = NULL;
    const struct clock_src *clk = coll_clock(cfg->coll);
    double enter = 0, t0 = 0, idle0 = NAN;
    int rc;

    if (tw && (!tw->seen || tw->step != job->step)) {
        tw->seen = 1;
        tw->step = job->step;
        tw->wait = cfg->c->world == 1 ? 0.0 : NAN;
        if ((x = coll_xport(cfg->coll)) != NULL) {
            xport_arm(x);
            enter = clock_src_now(x->clock);
        }
    }
    if (tw && tw->util_on) {        /* the link's egress idle over the combine (link.h, UTILIZATION) */
        t0 = clock_src_now(clk);
        idle0 = link_util_mark_egress(cfg->link, t0);
    }
    link_enter(cfg->link, clock_src_now(clk));      /* link.h: the combine starts here */
    rc = job->scatter
        ? coll_reduce_scatter_range(cfg->coll, job->grad, job->first, job->count, err)
        : allreduce_job(cfg, job, err);
    if (x && rc == 0 && !x->armed)
        tw->wait = x->first_recv_at - enter;
    if (rc == 0 && job->late && clk == &clock_real)     /* link.h: its own timeline's end */
        *job->late = net_vt_late(cfg->link, clock_now());
    if (!isnan(idle0)) {
        double t1 = clock_src_now(clk) - (job->late ? *job->late : 0.0);
        tw->util_span += t1 - t0;   /* from the entry: the merge takes the skew off */
        tw->util_idle += link_util_mark_egress(cfg->link, t1) - idle0;
    }
    if (rc != 0) {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "step %llu: %s", (unsigned long long)job->step, why);
    }
    return rc;
}

/* optim_apply_host: the CPU apply: optim_update (--optimizer) on the host
 * weights, with the state the driver keeps. */
static int optim_apply_host(void *ctx, const struct step_update *u, char *err)
{
    const struct train_cfg *cfg = ctx;
    const size_t es = dtype_size(cfg->c->dtype);
    int rc = optim_update(u->opt, u->step + 1, (unsigned char *)u->weights + u->first * es,
                          (const unsigned char *)u->sum + u->first * es, u->count, u->state_off,
                          u->divide_by);

    if (rc == ERR_NONFINITE)
        err_say(err, "%s: the update made a weight NaN or Inf (no weights are written)",
                optim_name(cfg->c->optimizer));
    else if (rc != 0)
        err_say(err, "%s: %s", optim_name(cfg->c->optimizer), err_str(rc));
    return rc;
}

/* ZeRO (step.h, SHARDED): after the coll's reduce-scatter of a range
 * (ring_combine), this rank holds the sum of the range's slice
 * (coll_slice); the coll's all-gather of the range sends it round (coll.h,
 * A RANGE). Both on the host ring (main.c refuses --zero with --algo rd
 * and on the GPU; coll.c would refuse them too). */
static void ring_shard(void *ctx, size_t first, size_t count, size_t *lo, size_t *hi)
{
    const struct train_cfg *cfg = ctx;

    coll_slice(cfg->coll, first, count, lo, hi);
}

static int ring_gather(void *ctx, void *buf, size_t first, size_t count, char *err)
{
    const struct train_cfg *cfg = ctx;
    int rc = coll_all_gather_range(cfg->coll, buf, first, count, err);

    if (rc != 0) {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "all-gather of the parameters: %s", why);
    }
    return rc;
}

/* log_memory: every rank's line (train.h, MEMORY). */
static void log_memory(const struct train_cfg *cfg, const struct step *d)
{
    const struct step_memory *m = step_memory(d);

    log_msg("memory (--zero %d, --optimizer %s, K %d): parameters %llu B, gradients %llu B "
            "(%llu B kept after the reduce-scatter), optimizer state %llu B, other buffers "
            "%llu B; peak RSS %llu B", cfg->zero, optim_name(cfg->c->optimizer), cfg->c->world,
            (unsigned long long)m->params, (unsigned long long)m->grads,
            (unsigned long long)m->grads_resident, (unsigned long long)m->optim,
            (unsigned long long)m->buffers, (unsigned long long)mem_peak_rss());
}

/* record: a timed step into *rec: the all-reduce time, the whole step's,
 * the link's bytes, when the all-reduce began (metrics.h, LAST ENTRY). */
static void record(const struct train_cfg *cfg, struct metrics_record *rec, int s,
                   const struct step_times *t, uint64_t in0, uint64_t out0)
{
    struct metrics_step st = {
        .step = (uint64_t)s, .combine_s = t->comm, .ingress_s = NAN, .egress_s = NAN,
        .bytes_in = cfg->link->bytes_in - in0, .bytes_out = cfg->link->bytes_out - out0,
        .step_s = t->step, .enter_t = t->enter,
    };
    metrics_record_add(rec, &st);
}

/* log_medians: rank 0's last line with buckets (train.h). */
static void log_medians(const struct step *d)
{
    struct step_times m;
    size_t k = step_medians(d, &m);

    log_msg("medians over %zu timed steps: step %.4f s, backward %.4f s, all-reduces "
            "%.4f s, wait after backward %.4f s (%zu bucket%s, overlap %s)", k, m.step,
            m.backward, m.comm, m.wait, step_buckets(d), step_buckets(d) == 1 ? "" : "s",
            step_overlapping(d) ? "on" : "off");
}

/* finish: the loss files (also after a failure) and the trace; rc, or
 * their failure when rc is 0. */
static int finish(const char *loss_out, const char *time_out, struct losscurve *lc,
                  struct step *d, int rc, char *err)
{
    char why[ERR_LEN];
    int rc2;

    if (loss_out) {
        rc2 = losscurve_write(lc, loss_out, rc != 0 ? "the run failed" : NULL, why);
        if (rc2 != 0 && rc == 0) {
            rc = rc2;
            snprintf(err, ERR_LEN, "%s", why);
        }
    }
    if (time_out) {
        rc2 = losscurve_write_time(lc, time_out, LOSS_NOTE, rc != 0 ? "the run failed" : NULL,
                                   why);
        if (rc2 != 0 && rc == 0) {
            rc = rc2;
            snprintf(err, ERR_LEN, "%s", why);
        }
    }
    rc2 = step_trace_close(d, why);
    if (rc2 != 0 && rc == 0) {
        rc = rc2;
        snprintf(err, ERR_LEN, "%s", why);
    }
    return rc;
}

/* log_loss: rank 0's loss line for step s (train.h, LOCAL SGD). */
static void log_loss(int s, const struct step_result *r, int sync_every, int synthetic)
{
    if (synthetic)              /* no model, no loss to show */
        log_msg("step %d: done (synthetic workload: no loss; %s %llu)", s,
                r->local ? "rank 0's own share of" : "global batch of",
                (unsigned long long)r->count);
    else if (r->local)
        log_msg("step %d: loss %.9g (rank 0's own share of %llu, a local step)", s, r->loss,
                (unsigned long long)r->count);
    else if (sync_every > 1)
        log_msg("step %d: loss %.9g (a sync: mean over all ranks' %llu examples since the last "
                "one)", s, r->loss, (unsigned long long)r->count);
    else
        log_msg("step %d: loss %.9g (mean over the global batch of %llu)", s, r->loss,
                (unsigned long long)r->count);
}

/* log_wait: every rank's wait line (train.h, WAIT); the record's wait_s. */
static void log_wait(const struct metrics_wait *w, struct metrics_record *rec)
{
    rec->wait_s = metrics_wait_mean(w);
    if (w->n == 0)
        return;                 /* not measured (NCCL: no transport of ours) */
    log_msg("waited for the neighbour's first chunk (from entering the step's all-reduce; "
            "lateness along the ring included): mean %.6g s, max %.6g s over %llu timed steps",
            rec->wait_s, w->max, (unsigned long long)w->n);
}

/* record_link: what the emulated link says of the timed steps: the run
 * delay its timeline took back since `credit0` (link.h, OWN CORES), and
 * its egress utilization over the combines (UTILIZATION), when it carried
 * anything (NCCL, K = 1: nothing). */
static void record_link(const struct train_cfg *cfg, struct metrics_record *rec,
                        const struct train_wait *tw, double credit0)
{
    uint64_t moved = 0;

    rec->link_credit_s = cfg->link->credited_s - credit0;
    if (!(tw->util_span > 0))     /* a paced link was measured (ring_combine) */
        return;
    for (size_t i = 0; i < rec->nsteps; i++)
        moved += rec->steps[i].bytes_in + rec->steps[i].bytes_out;
    if (moved > 0) {
        rec->link_span_s = tw->util_span;
        rec->link_idle_s = fmax(0.0, tw->util_idle);
    }
}

int train_steps(const struct train_cfg *cfg_in, const struct step_device *dev,
                train_apply_fn apply, struct metrics_record *rec, char *err)
{
    struct train_wait tw = { 0, 0, NAN, 0, 0.0, 0.0 };
    struct train_cfg local = *cfg_in;         /* the ctx: cfg_in and the wait's state */
    const struct train_cfg *cfg = &local;
    const struct cli_common *c = cfg->c;
    const struct step_ops ops = {
        STEP_TRAILER | STEP_CHECK_FINITE | (cfg->bucket_student ? STEP_STUDENT : 0) |
        (cfg->coll->comp && cfg->coll->comp->rounds == 2 ? STEP_LOSSY : 0), cfg->zero ? "reducescatter" : "allreduce",
        cfg->zero ? "reduce-scatter" : "all-reduce", cfg->bucket_student ? STUDENT_NOTE : "", "wait", NULL,
        ring_combine, NULL, apply ? apply : optim_apply_host, (void *)cfg,
        cfg->zero ? ring_shard : NULL, cfg->zero ? ring_gather : NULL,
    };
    struct optim_cfg oc;
    const struct step_cfg sc = {
        cfg->w, c->rank, c->world, c->shard_weights, c->micro, cfg->mistake, c->steps,
        c->warmup, cfg->bucket_bytes, cfg->no_overlap, cfg->trace,
        coll_clock(cfg->coll),      /* the transport's clock (xport.h) */
        dev, &oc, cfg->zero, cfg->exec, cfg->sync_every,
    };
    const struct clock_src *clk = sc.clock;
    const char *loss_out = c->rank == 0 ? cfg->loss_out : NULL;
    const char *time_out = c->rank == 0 ? c->loss_time_out : NULL;
    int keep = c->rank == 0 && (loss_out || time_out || !isnan(c->target_loss));
    struct losscurve lc = { NULL, 0, NULL };
    struct metrics_wait wt = { 0, 0, 0 };
    struct step d;
    struct psgd ps = { 0 };
    double cpu0 = 0, wall0 = 0, run0 = 0, last_log = -INFINITY, round_s = -1, credit0 = 0;
    uint64_t out0 = 0, in0 = 0;
    int rc;

    local.wait = &tw;
    if (cfg->coll->comp && cfg->coll->comp->rounds == 2) {
        if ((rc = coll_psgd_init(&ps, cfg->w, STEP_TRAILER_LEN, cfg->coll->compress, c->dtype,
                                 c->seed, err)) != 0)
            return rc;
        local.psgd = &ps;
        rec->wire_bytes = psgd_wire_elems(&ps, 0) * dtype_size(c->dtype);
    }
    cli_optim_cfg(c, &oc);
    cfg->w->clock = clk;        /* the EMULATED backward time sleeps on it too */
    if ((rc = step_init(&d, &sc, &ops, err)) != 0)
        goto out;
    if (keep && losscurve_init(&lc, (size_t)c->steps) != 0) {
        rc = -ENOMEM;
        err_say(err, "out of memory for the loss of %d steps", c->steps);
        goto out;
    }
    for (int s = 0; s < c->steps; s++) {
        struct step_result r;

        if (round_s < 0) {      /* a round begins (every step without local SGD) */
            out0 = cfg->link->bytes_out;
            in0 = cfg->link->bytes_in;
            round_s = 0;
        }

        if (s == c->warmup) {
            tw.util_on = 1;
            hostload_sample_read(&rec->machine0);   /* the machine's load: metrics.h */
            credit0 = cfg->link->credited_s;    /* link.h, OWN CORES: signal 4 */
            cpu0 = clock_cpu_seconds();
            wall0 = clock_src_now(clk);
        }
        if (s == 0)
            run0 = clock_src_now(clk);          /* wall_s's zero (train.h, LOSS FILE) */
        if ((rc = step_run(&d, s, &r, err)) != 0)
            goto out;
        losscurve_set_at(&lc, (size_t)s, r.loss, clock_src_now(clk) - run0);
        if (c->rank == 0 && (s == 0 || s == c->steps - 1 ||
                             clock_src_now(clk) - last_log >= LOSS_LOG_EVERY_S)) {
            log_loss(s, &r, cfg->sync_every, c->workload == WORKLOAD_SYNTHETIC);
            last_log = clock_src_now(clk);
        }
        round_s += r.t.step;
        if (r.local)
            continue;           /* LOCAL SGD: the row is the round's (train.h) */
        r.t.step = round_s;
        round_s = -1;
        if (s >= c->warmup) {
            record(cfg, rec, cfg->sync_every > 1 ? s / cfg->sync_every : s, &r.t, in0, out0);
            if (!isnan(tw.wait))
                metrics_wait_add(&wt, tw.wait);
        }
    }
    rec->cpu_s = clock_cpu_seconds() - cpu0;
    rec->compute_cpu_s = step_compute_cpu(&d);      /* the timed steps'; cpu_s_per_gb leaves it out */
    rec->wall_s = clock_src_now(clk) - wall0;
    hostload_sample_read(&rec->machine1);
    record_link(cfg, rec, &tw, credit0);
    if (c->rank == 0 && c->steps > c->warmup && !dev)
        log_medians(&d);
    log_memory(cfg, &d);
    log_wait(&wt, rec);
    if (keep && !isnan(c->target_loss)) {
        rec->ttt_s = losscurve_time_to(&lc, c->target_loss);
        if (isnan(rec->ttt_s))
            log_msg("--target-loss %g: not reached", c->target_loss);
        else
            log_msg("--target-loss %g: reached after %.6g s (wall_s)", c->target_loss,
                    rec->ttt_s);
    }
    if (c->weights_out)
        rc = step_weights_write(&d, c->weights_out, c->rank, err);
out:
    rc = finish(loss_out, time_out, &lc, &d, rc, err);
    losscurve_free(&lc);
    step_destroy(&d);
    psgd_destroy(&ps);
    return rc;
}

int train_run(const struct train_cfg *cfg, struct metrics_record *rec, char *err)
{
    return train_steps(cfg, NULL, NULL, rec, err);
}
