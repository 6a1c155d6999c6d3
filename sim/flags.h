/* flags.h -- bin/psring_sim's command line: its own flags (struct
 * sim_opts: the platform, the data mode, the PS placement, --bench, --kill,
 * --sg-cfg, the outputs) beside the common ones (train/cli_common.h),
 * checked against each other and turned into the job the actors read
 * (sim.h, struct sim_job) before SimGrid starts.
 *
 * Every refusal is one line "psring_sim: reason" on stderr and exit 64
 * (CLI_EXIT_USAGE, sim_usage_fail); --help and --version exit 0.
 */
#ifndef SIM_FLAGS_H
#define SIM_FLAGS_H

#include <stdint.h>

#include "coll/bench_flags.h"
#include "platform.h"
#include "sim.h"
#include "train/cli_common.h"

#define SIM_PROG "psring_sim"
#define SIM_MAX_CFG 16                  /* --sg-cfg settings at most */

struct sim_opts {
    const char *algo, *platform, *payload, *csv_out, *json_out, *platform_out, *host_bytes;
    const char *sg_cfg[SIM_MAX_CFG];
    int n_cfg, servers, hosts, colocated, no_overlap;
    uint64_t bytes, bucket;
    int bench, iters, warmup_iters;         /* --bench (ring) */
    struct bench_flags bf;                  /* --bench's --coll, --root, --imbalance */
    int kill_rank, kill_step;               /* --kill RANK@STEP; -1 */
    const char *compress;                   /* --compress (ring, real payloads) */
    int group;                              /* --ranks-per-host G (--algo hring); 0: none */
};

/* sim_usage_fail: "psring_sim: why" on stderr, exit 64. */
__attribute__((noreturn)) void sim_usage_fail(const char *why);

/* sim_flags_parse: the command line into o (its defaults first), c, pf and
 * j, with every cross-check (exit 64 with one line on the first that
 * fails); *placement becomes "colocated" when a PS shard sits on a
 * worker's host. Returns the hosts the job needs. j->proxy and j->srv are
 * malloc'd (the caller frees them), c is freed with cli_common_free. */
int sim_flags_parse(int argc, char **argv, struct sim_opts *o, struct cli_common *c,
                    struct platform *pf, struct sim_job *j, const char **placement);

#endif /* SIM_FLAGS_H */
