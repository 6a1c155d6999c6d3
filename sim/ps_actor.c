/* ps_actor.c -- the parameter server's workers in simulation: K worker
 * actors (sim.h) on the same training step as bin/ps_worker
 * (common/train/step.c), running bin/ps_worker's own client
 * (common/ps/client.c, client_sync.c, frames.c: the real protocol,
 * common/wire/proto.h) over ps_client.c's simulated streams, to S server
 * actors that run bin/ps_server's own protocol code (common/ps/server.c,
 * through ps_server.c's transport). As on bin/ps_worker, the client's
 * receivers (and with S > 1 its pushers) are threads: here actors on the
 * worker's host (xport_sim_exec).
 *
 * One step, as the real system runs it (PER-BUCKET PULL, store.h RELEASE):
 *
 *   worker w   push: each bucket of its gradient (--bucket-size, the last
 *              elements first, as step.c hands them), to every server
 *              owning a part of it (ps_client_push): one PUSH frame per
 *              (bucket, server), written and not waited for (the count and
 *              loss ride with the push that ends at the server's last
 *              element: frames_push); pull (ps_client_pull_begin with the
 *              first push, ps_client_pull): each server's receiver reads
 *              its WEIGHTS frames until its whole range is in
 *   server s   server.c: each push into the store as it comes in, then
 *              store_release: the part every worker has pushed goes out at
 *              once to the K workers (the egress schedule, one WEIGHTS
 *              frame per release and worker), while the rest of the step's
 *              pushes go on.
 * So the pull of the first buckets overlaps the push of the later ones,
 * like the real server.
 *
 * PLACEMENTS (sim.h sim_server; sim/flags.c job_servers places them):
 * separate servers on hosts of their own, or a shard on each worker's
 * host (colocated) and extra ones, Theorem 1's split (model_ps_ranges). A
 * message between two actors on one host is a message of size 0 (it never
 * crosses the host's link; the generated platforms give each host a free
 * loopback) and is not counted in the host's bytes.
 *
 * Records: a worker's combine_s is its first push to its last pull in.
 *
 * Sizes mode (job->real 0): the same frames, with their elements counted
 * and not materialised (ps_wire.h SIZES); no workload, a store that
 * counts (store.h sizes_only); one example per worker.
 *
 * Simplifications said out loud: a push to a server is one frame (the
 * client's whole_parts; the real worker cuts it into frames of the
 * server's share when S > 1, client.h SERVER PARTS); the server's
 * summation takes no simulated time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>

#include "base/dtype.h"
#include "coll/xport_sim.h"
#include "ps_client.h"
#include "sim.h"
#include "train/step.h"
#include "train/workload.h"

struct worker {
    struct sim_slot *sl;
    const struct sim_job *j;
    size_t n;
    double t0;
    int64_t pushed_step;        /* the step whose first push set t0 */
    struct psc cl;              /* the real client on simulated streams (ps_client.h) */
};

size_t ps_elements(const struct sim_job *j)
{
    return (size_t)(j->bytes / dtype_size(j->c->dtype));
}

/* push_bucket: [first, first + count) of the step's gradient (NULL:
 * sizes) to every server owning a part of it (ps_client_push); the
 * step's weights are received from its first push on (PER-BUCKET PULL,
 * as bin/ps_worker's push). */
static int push_bucket(struct worker *w, uint64_t step, const unsigned char *grad, size_t first,
                       size_t count, const struct proto_push_meta *meta, char *err)
{
    int rc;

    if (w->pushed_step != (int64_t)step) {
        w->pushed_step = (int64_t)step;
        w->t0 = simgrid_get_clock();
    }
    if ((rc = ps_client_pull_begin(&w->cl.client, step, err)) != 0)
        return rc;
    return ps_client_push(&w->cl.client, step, meta, grad, first, count, err);
}

static int step_push(void *ctx, const struct step_job *job, char *err)
{
    struct worker *w = ctx;
    const struct proto_push_meta meta = { job->meta.examples, job->meta.loss };

    return push_bucket(w, job->step, job->grad, job->first, job->count, &meta, err);
}

static int step_pull(void *ctx, uint64_t step, void *weights, char *err)
{
    struct worker *w = ctx;

    return ps_client_pull(&w->cl.client, step, weights, err);
}

static void add_step(struct sim_slot *sl, int s, double combine, uint64_t b_in, uint64_t b_out,
                     double whole)
{
    struct metrics_step ms = { (uint64_t)s, combine, NAN, NAN, b_in, b_out, whole, NAN };

    if (s >= sl->job->c->warmup)
        metrics_record_add(&sl->rec, &ms);
}

/* join: the streams to every server, HELLO with the job's settings. */
static int join(struct worker *w, uint64_t n, uint64_t batch)
{
    const struct cli_common *c = w->j->c;
    const struct proto_hello hello = { .n = n, .dtype = (uint32_t)c->dtype,
                                       .workload = (uint32_t)c->workload, .seed = c->seed,
                                       .batch = batch };

    return psc_open(&w->cl, w->sl, &hello);
}

static int worker_real(struct worker *w)
{
    struct sim_slot *sl = w->sl;
    struct cli_common c = *w->j->c;
    const struct step_ops ops = { 0, "push", "push", "", "wait for the pushes", "pull weights",
                                  step_push, step_pull, NULL, w, NULL, NULL };
    struct workload_cfg wc;
    struct workload wl;
    struct step d;
    int rc;

    c.rank = sl->rank;
    c.world = w->j->k;
    c.steps = sim_steps(sl);       /* --kill: this worker dies at the start of that step */
    if (c.warmup >= c.steps)
        c.warmup = 0;
    cli_workload_cfg(&c, &wc);
    if (workload_create(&wl, &wc) != 0) {
        err_say(sl->err, "worker %d: cannot build the workload", sl->rank);
        return ERR_USAGE;
    }
    wl.clock = &xport_sim_clock;
    if ((rc = join(w, wl.n, wl.batch)) != 0 || c.steps == 0) {
        workload_destroy(&wl);
        return rc;
    }
    const struct step_cfg sc = { .w = &wl, .rank = sl->rank, .world = w->j->k,
                                 .shard_weights = c.shard_weights, .micro = c.micro,
                                 .steps = c.steps, .warmup = c.warmup,
                                 .bucket_bytes = w->j->bucket_bytes, .no_overlap = 1,
                                 .clock = &xport_sim_clock };
    if ((rc = step_init(&d, &sc, &ops, sl->err)) == 0) {
        if (step_buckets(&d) > 1) {     /* the record says so, for model_s (as ps_worker's) */
            sl->rec.buckets = (uint32_t)step_buckets(&d);
            sl->rec.bucket_bytes = buckets_bytes_max(&d.plan, dtype_size(c.dtype));
        }
        for (int s = 0; s < c.steps && rc == 0; s++) {
            uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;
            double ts = simgrid_get_clock();
            struct step_result r;

            if ((rc = step_run(&d, s, &r, sl->err)) == 0)
                add_step(sl, s, simgrid_get_clock() - w->t0, sl->bytes_in - in0,
                         sl->bytes_out - out0, simgrid_get_clock() - ts);
        }
        if (rc == 0 && c.steps == w->j->c->steps)
            rc = ps_client_bye(&w->cl.client, (uint64_t)c.steps, sl->err);
        if (rc == 0 && c.weights_out)
            rc = step_weights_write(&d, c.weights_out, sl->rank, sl->err);
        step_destroy(&d);
    }
    workload_destroy(&wl);
    return rc;
}

/* worker_sizes: the buckets of n elements of bucket_bytes each, the last
 * first (step.c's order), then the pull; one example per worker. */
static int worker_sizes(struct worker *w)
{
    struct sim_slot *sl = w->sl;
    const struct proto_push_meta meta = { 1, 0 };
    size_t per = (size_t)(w->j->bucket_bytes / dtype_size(w->j->c->dtype));
    int steps = sim_steps(sl), rc;

    if (per == 0)
        per = 1;
    if (w->n > per) {                   /* several buckets: the record says so (model_s) */
        sl->rec.buckets = (uint32_t)((w->n + per - 1) / per);
        sl->rec.bucket_bytes = (uint64_t)per * dtype_size(w->j->c->dtype);
    }
    if ((rc = join(w, w->n, (uint64_t)w->j->k)) != 0)
        return rc;
    for (int s = 0; s < steps && rc == 0; s++) {
        uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;
        double ts = simgrid_get_clock();
        size_t top = w->n;

        sim_compute(sl, s);     /* the backward pass, before the first push */
        while (top > 0 && rc == 0) {
            size_t count = top < per ? top : per;

            rc = push_bucket(w, (uint64_t)s, NULL, top - count, count, &meta, sl->err);
            top -= count;
        }
        if (rc == 0 && (rc = ps_client_pull(&w->cl.client, (uint64_t)s, NULL, sl->err)) == 0)
            add_step(sl, s, simgrid_get_clock() - w->t0, sl->bytes_in - in0,
                     sl->bytes_out - out0, simgrid_get_clock() - ts);
    }
    if (rc == 0 && steps == w->j->c->steps)
        rc = ps_client_bye(&w->cl.client, (uint64_t)steps, sl->err);
    return rc;
}

void sim_ps_worker(int argc, char **argv)
{
    struct sim_slot *sl = sg_actor_self_get_data();
    const struct sim_job *j = sl->job;
    struct worker w = { .sl = sl, .j = j, .n = ps_elements(j), .pushed_step = -1 };

    (void)argc;
    (void)argv;
    sl->rc = j->real ? worker_real(&w) : worker_sizes(&w);
    if (sl->rc != 0 || sim_steps(sl) < j->c->steps) {
        xport_sim_set_gone(sl->slot);   /* failed, or killed (--kill): gone */
        psc_gone(&w.cl, sl->rc == 0);
        psc_close(&w.cl);               /* the client's actors stopped and joined */
        xport_sim_zombie();
    }
    psc_close(&w.cl);
}
