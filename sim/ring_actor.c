/* ring_actor.c -- bin/psring_sim's ring rank: one SimGrid actor per rank,
 * over the simulated transport (xport_sim.h) opened with the ring's, rd's,
 * Rabenseifner's, the trees', the hierarchical ring's or the all-to-all's
 * peer table, in one of three modes:
 *   real   training: the workload and common/train/step.c through
 *          train_steps and the coll (coll.h), as ring_worker trains;
 *   sizes  the coll's all-reduce of the shared proxy vector, frames scaled
 *          to the bytes they stand for, with the simulated compute first;
 *   bench  ring_worker's benchmark (bench.c) of one size.
 * A rank that fails, or that --kill stops, marks itself gone and poisons
 * its transport, so its peers fail as the real ring's do.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>

#include "base/dtype.h"
#include "base/err.h"
#include "coll/a2a.h"
#include "coll/bench.h"
#include "coll/coll.h"
#include "coll/hring.h"
#include "coll/rabenseifner.h"
#include "coll/swing.h"
#include "coll/rd.h"
#include "coll/ring.h"
#include "coll/tree.h"
#include "coll/train.h"
#include "coll/xport_sim.h"
#include "sim.h"
#include "train/workload.h"
#include "wire/link.h"

#define SIM_PROXY_PIECE 4096            /* sizes: the algorithms' staging piece */

static void ring_actor_real(struct sim_slot *sl, struct xport *x, struct link *link)
{
    const struct sim_job *j = sl->job;
    struct cli_common c = *j->c;
    struct workload_cfg wc;
    struct workload w;
    struct coll coll;

    c.rank = sl->rank;
    c.world = j->k;
    c.steps = sim_steps(sl);       /* --kill: this rank dies at the start of that step */
    if (c.steps == 0)
        return;
    if (c.warmup >= c.steps)
        c.warmup = 0;
    c.weights_out = NULL;
    if (c.steps == j->c->steps)
        c.weights_out = j->c->weights_out;
    cli_workload_cfg(&c, &wc);
    if (workload_create(&w, &wc) != 0) {
        sl->rc = ERR_USAGE;
        err_say(sl->err, "rank %d: cannot build the workload", sl->rank);
        return;
    }
    struct coll_cfg cc = { .kind = COLL_TCP, .algo = j->algo, .rank = sl->rank, .world = j->k,
                           .dtype = c.dtype, .max_n = w.n + TRAIN_TRAILER, .timeout = c.timeout,
                           .x = x, .compress = j->compress, .group = j->group };
    if ((sl->rc = coll_init(&coll, &cc, sl->err)) == 0) {
        /* OVERLAP (xport_sim.h): the buckets' all-reduces on a second
         * actor of this host while the simulated backward pass goes on */
        struct train_cfg tc = { .c = &c, .w = &w, .coll = &coll, .link = link,
                                .bucket_bytes = j->bucket_bytes, .no_overlap = j->no_overlap,
                                .exec = &xport_sim_exec };

        sl->rc = train_steps(&tc, NULL, NULL, &sl->rec, sl->err);
        coll_destroy(&coll);
    }
    workload_destroy(&w);
}

static void ring_actor_sizes(struct sim_slot *sl, struct xport *x)
{
    const struct sim_job *j = sl->job;
    struct coll coll;
    struct coll_cfg cc = { .kind = COLL_TCP, .algo = j->algo, .rank = sl->rank, .world = j->k,
                           .dtype = j->c->dtype, .max_n = j->proxy_n,
                           .piece_bytes = SIM_PROXY_PIECE, .timeout = j->c->timeout, .x = x,
                           .group = j->group };
    char why[ERR_LEN];
    int rc = coll_init(&coll, &cc, why);

    if (rc != 0) {
        sl->rc = rc;
        err_say(sl->err, "rank %d: %s", sl->rank, why);
        return;
    }
    for (int s = 0; s < sim_steps(sl) && rc == 0; s++) {
        uint64_t in0 = sl->bytes_in, out0 = sl->bytes_out;
        double ts = simgrid_get_clock(), t0;

        sim_compute(sl, s);
        t0 = simgrid_get_clock();

        rc = coll_allreduce(&coll, j->proxy, j->proxy_n, sl->err);
        if (rc == 0 && s >= j->c->warmup) {
            double now = simgrid_get_clock();
            struct metrics_step ms = { (uint64_t)s, now - t0, NAN, NAN, sl->bytes_in - in0,
                                       sl->bytes_out - out0, now - ts, t0 };
            metrics_record_add(&sl->rec, &ms);
        }
    }
    sl->rc = rc;
    coll_destroy(&coll);
}

void sim_compute(const struct sim_slot *sl, int step)
{
    double t = compute_step_time(&sl->job->compute, sl->rank, (uint64_t)step);

    if (t > 0)
        sg_actor_sleep_for(t);
}

/* ring_actor_bench: ring_worker's benchmark (bench.c) unchanged over the
 * simulated transport: one size (--bytes), its record to this rank's
 * file (report merges them). */
static void ring_actor_bench(struct sim_slot *sl, struct xport *x, struct link *link,
                             const char *rec_path)
{
    const struct sim_job *j = sl->job;
    struct coll coll;
    struct coll_cfg cc = { .kind = COLL_TCP, .algo = j->algo, .rank = sl->rank, .world = j->k,
                           .dtype = j->c->dtype, .max_n = (size_t)(j->bytes / dtype_size(j->c->dtype)),
                           .timeout = j->c->timeout, .x = x, .compress = j->compress,
                           .group = j->group };

    if ((sl->rc = coll_init(&coll, &cc, sl->err)) == 0) {
        struct bench_cfg bc = {
            .rank = sl->rank, .world = j->k, .dtype = j->c->dtype, .minbytes = j->bytes,
            .maxbytes = j->bytes, .stepfactor = 2, .warmup_iters = j->bench.warmup_iters,
            .iters = j->bench.iters, .csv = rec_path, .op = j->bench.op,
            .root = j->bench.root, .imbalance = j->bench.imbalance, .coll = &coll, .link = link,
        };
        sl->rc = bench_run(&bc, sl->err);
        coll_destroy(&coll);
    }
}

void sim_rec_path(char *buf, size_t len, int rank)
{
    snprintf(buf, len, "%s/psring_sim.%d.rec.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid(), rank);
}

void sim_ring_actor(int argc, char **argv)
{
    struct sim_slot *sl = sg_actor_self_get_data();
    const struct sim_job *j = sl->job;
    struct xport_plan pl;
    struct xport *x = NULL;
    struct link link;

    (void)argc;
    (void)argv;
    /* counters only (train and bench read them): the network is SimGrid's;
     * with --bench the rate and latency too, for its header and record */
    link_init(&link, 0, 0);
    if (j->bench.on) {
        link.egress.rate = j->c->link_bw;
        link.latency_s = j->c->link_latency;
    }
    if (j->algo == COLL_RD)
        rd_plan(sl->rank, j->k, &pl);
    else if (j->algo == COLL_RABENSEIFNER)
        rab_plan(sl->rank, j->k, &pl);
    else if (j->algo == COLL_HRING)
        hring_plan(sl->rank, j->k, j->group, &pl);
    else if (j->algo == COLL_TREE || j->algo == COLL_DBTREE)
        tree_plan(sl->rank, j->k, j->algo == COLL_TREE ? 1 : 2, &pl);
    else if (j->algo == COLL_SWING_LAT || j->algo == COLL_SWING_BW)
        swing_plan(sl->rank, j->k, &pl);
    else if (j->bench.on && j->bench.op == COLL_ALLTOALL)
        a2a_plan(sl->rank, j->k, &pl);
    else
        ring_plan(sl->rank, j->k, &pl);
    sl->rc = xport_sim_open(&pl, sl->rank, j->k, j->real ? XPORT_SIM_REAL : XPORT_SIM_SIZES,
                            j->real ? 1.0 : j->scale, j->real ? &link.bytes_in : &sl->bytes_in,
                            j->real ? &link.bytes_out : &sl->bytes_out, &x, sl->err);
    if (sl->rc != 0)
        return;
    if (j->algo == COLL_TREE || j->algo == COLL_DBTREE)    /* xport_sim.c, EAGER AND RENDEZVOUS */
        xport_sim_pace(x, j->c->link_bw);
    if (j->bench.on) {
        char path[4200];

        sim_rec_path(path, sizeof path, sl->rank);
        ring_actor_bench(sl, x, &link, path);
        sl->bytes_in = link.bytes_in;
        sl->bytes_out = link.bytes_out;
    } else if (j->real) {
        ring_actor_real(sl, x, &link);
        sl->bytes_in = link.bytes_in;       /* for --host-bytes */
        sl->bytes_out = link.bytes_out;
    } else {
        ring_actor_sizes(sl, x);
    }
    if (sl->rc != 0 || sim_steps(sl) < j->c->steps) {
        xport_sim_set_gone(sl->slot);   /* failed, or killed (--kill): gone */
        xport_sim_poison(x, sl->rc != 0 ? sl->err : NULL);
        xport_sim_zombie();
    }
    xport_close(x);
}
