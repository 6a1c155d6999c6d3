/* main.c -- bin/psring_sim: the parameter server or the all-reduce of
 * psring on a simulated network (SimGrid), one actor per rank, the same
 * algorithms (ring.c, rd.c, rabenseifner.c, tree.c over xport_sim), the same store and training
 * step, the same CSV row as experiments/launch.sh (transport "sim").
 *
 *   psring_sim ps|ring K [--algo ring|rd|rabenseifner|tree|dbtree|hring [--ranks-per-host G]]
 *              [--bytes N] [common flags]
 *       [--platform star|fat-tree:OVERSUB|racks:R:UPLINK|file:PATH]
 *       [--payload real|sizes] [--servers S] [--colocated-servers]
 *       [--bucket-size SIZE] [--no-overlap] [--hosts N] [--host-bytes FILE]
 *       [--kill RANK@STEP]
 *       [--csv-out FILE] [--json-out FILE] [--platform-out FILE] [--sg-cfg KEY:VALUE]
 *
 * PS PLACEMENTS (launch.sh's, common/measure/model.h PLACEMENTS): --servers S
 * alone: S servers on hosts of their own (ring_chunk's equal shards);
 * --colocated-servers: a shard on each worker's host (sharing its link),
 * plus --servers k extra server hosts (default 0), Theorem 1's split
 * (model_ps_ranges); with k >= K the colocated shards get nothing and the
 * job is the separate PS with S = k. --host-bytes FILE writes, per host,
 * the payload bytes that crossed its link each way over the whole run.
 *
 * THE NETWORK MODEL (docs/sim.md): CM02, SimGrid's plain max-min sharing,
 * with its latency and bandwidth factors at 1, no cross-traffic and no TCP
 * window bound, so one message alone on a path of links costs exactly
 * a + m/bw, the alpha-beta model's price. --sg-cfg passes any other
 * SimGrid setting (repeatable), after these; SimGrid aborts on a key or
 * value it does not know, so they (and a --platform file:PATH) are first
 * tried in a child process (sg_trial), and a refusal exits 64 with one line.
 *
 * DATA MODES (--payload; default real when K * n <= SIM_REAL_MAX):
 *   real   each rank trains: the workload, common/train/step.c, coll_allreduce
 *          (ring) or push/pull to the store (PS); --weights-out works
 *   sizes  the messages carry sizes only. The ring's algorithm runs on a
 *          proxy vector of K * SIM_PROXY_PER_RANK elements (one, shared:
 *          its values are never read) and the transport scales every
 *          frame to the bytes it stands for; the PS sends slice sizes.
 *
 * BENCH (--bench [--coll NAME] [--root R] [--imbalance F] [--iters N]
 * [--warmup-iters N], ring only): ring_worker's benchmark (bench.c)
 * unchanged over xport_sim, one size (--bytes), real payloads: its table on
 * stdout (rank 0), every element checked (#wrong), the CSV row (coll
 * column, transport sim) only with --csv-out.
 *
 * THE CODE: main.c runs the steps in order: flags.c (the command line
 * into the job, sim.h), engine.c (the platform, SimGrid, the actors),
 * the simulation, report.c (the verdict and the outputs). The actors:
 * ring_actor.c (a ring rank), ps_server.c (a PS server: common/ps/server.c
 * under a SimGrid transport), ps_actor.c (a PS worker: bin/ps_worker's
 * client, common/ps/client.c, over ps_client.c's SimGrid transport).
 *
 * Exit status: 0; 1 when a rank failed; 64 for bad input (one line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <simgrid/engine.h>

#include "coll/xport_sim.h"
#include "engine.h"
#include "flags.h"
#include "measure/metrics.h"
#include "report.h"
#include "sim.h"

int main(int argc, char **argv)
{
    struct sim_opts o;
    struct cli_common c;
    struct platform pf;
    struct sim_job j;
    struct sim_slot *slots;
    struct metrics_record *recs;
    char xml[4096];
    int nslots, nhosts, status, tmp_xml = 0;
    unsigned char *board;
    const char *placement = "separate";

    nhosts = sim_flags_parse(argc, argv, &o, &c, &pf, &j, &placement);
    nslots = j.k + j.servers;
    if (sim_platform_load(argv[0], &o, &c, &pf, &j, nhosts, xml, sizeof xml, &tmp_xml) != 0)
        return 1;

    slots = calloc((size_t)nslots, sizeof *slots);
    recs = calloc((size_t)nslots, sizeof *recs);
    board = calloc((size_t)nslots, 1);
    if (!slots || !recs || !board)
        sim_usage_fail("out of memory");
    xport_sim_faults_init(board, nslots, c.timeout);
    sim_actors_start(&o, &c, &pf, &j, slots, nslots);
    if (o.bench) {
        printf("# psring_sim --bench: the network is SIMULATED (SimGrid, --platform %s); the "
               "benchmark is ring_worker's (bench.c), whose lines below say \"EMULATED\" for "
               "the platform's link and \"tcp\" for the code path; times are simulated\n",
               o.platform);
        fflush(stdout);
    }
    simgrid_run();
    status = sim_verdict(&o, &j, slots, nslots);
    status = sim_report(&o, &j, slots, recs, nslots, nhosts, placement, status);
    for (int i = 0; i < nslots; i++)
        metrics_record_free(&slots[i].rec);
    free(slots);
    free(recs);
    free(board);
    free(j.proxy);
    free(j.srv);
    if (tmp_xml)
        unlink(xml);
    cli_common_free(&c);
    return status;
}
