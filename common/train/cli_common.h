/* cli_common.h -- the common flags of docs/design.md (struct cli_common:
 * the workload, the training, the link, the outputs), accepted by every
 * binary; rank discovery from the environment (torchrun, Open MPI, MPICH,
 * Slurm); the coordinator's address; the job's secret.
 *
 * A binary puts cli_common_opts() among the tables it hands to the flag
 * loop (base/cli.h: cli_main_parse), then calls cli_common_finish().
 * The flag loop is the base layer's and knows nothing of training; this
 * header is where the common flags meet the workload (workload.h), the
 * optimizer (optim.h) and the emulated compute (compute.h).
 * Code: common/train/cli_common.c.
 */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "base/cli.h"
#include "compute.h"

/* The common flags of docs/design.md, accepted by every binary. Fields hold
 * their defaults after cli_common_defaults(); -1 / 0 mean "not given"
 * where noted, and cli_common_finish() fills them in. */
struct cli_common {
    int rank, world, local_rank;   /* -1 until given or discovered */
    const char *rank_source;       /* "flags", "torchrun", "openmpi", "mpich",
                                      "slurm", or "default" (rank 0 of 1) */
    int workload;                  /* enum workload_kind (workload.h) */
    uint64_t params;               /* --params N (synthetic); 0 = default */
    uint64_t batch;                /* --batch B; 0 = workload default */
    double *shard_weights;         /* --shard-weights, malloc'd; NULL = equal */
    int n_shard_weights;
    int micro, steps, warmup;
    double lr;
    uint64_t seed;
    int dtype;                     /* enum dtype */
    double link_bw;                /* bytes/s, 0 = unlimited */
    double link_latency;           /* seconds */
    const char *link_host;         /* --link-host FILE: EMULATED, the host's shared link
                                      (link.h, HOST LINKS); NULL = a link of its own */
    double timeout;                /* idle-progress timeout, seconds */
    const char *csv;               /* per-process record, or NULL */
    const char *json;              /* the same record as JSON Lines, or NULL */
    const char *weights_out;       /* PATH (writes PATH.RANK), or NULL */
    double backward_time;          /* --backward-time: EMULATED seconds per
                                      worker per step (T, compute.h); 0 = off */
    int layers;                    /* --layers: synthetic layer count; 0 = the default */
    struct compute_model compute;  /* --straggler, --jitter, --pause (compute.h;
                                      its base and seed unused: backward_time, seed) */
    const char *secret_file;       /* --secret-file FILE: the job's secret, or NULL
                                      (then PSRING_SECRET; common/wire/auth.h) */
    int optimizer;                 /* --optimizer: enum optim_kind (optim.h) */
    double momentum;               /* --momentum MU (default 0.9) */
    double beta1, beta2, eps;      /* --beta1, --beta2, --eps (Adam: 0.9, 0.999, 1e-8) */
    const char *loss_time_out;     /* --loss-time-out FILE: "step loss wall_s" (losscurve.h;
                                      ps_server shard 0 and ring rank 0 write it), or NULL */
    double target_loss;            /* --target-loss X: the CSV's ttt_s (metrics.h); NaN = off */
};

void cli_common_defaults(struct cli_common *c);
/* cli_common_opts: the common flags' table, writing into *c. */
const struct cli_opt *cli_common_opts(struct cli_common *c);
/* cli_common_finish: after parsing: rank/world/local rank from the
 * environment where the flags did not give them (docs/design.md's order),
 * then cross-checks (rank < world, warmup < steps, one shard weight per
 * rank, ...). 0 or ERR_USAGE with the reason in err. */
int cli_common_finish(struct cli_common *c, char *err);
/* cli_common_free: what cli_common owns (shard_weights). */
void cli_common_free(struct cli_common *c);

/* cli_workload_cfg: the workload configuration the common flags describe,
 * for this process as a worker (rank, world and shard weights set where the
 * emulated backward time is spread; see workload.h). After
 * cli_common_finish; out borrows c->shard_weights. A process that computes
 * no gradient (the server) clears out->backward_time. */
struct workload_cfg;
void cli_workload_cfg(const struct cli_common *c, struct workload_cfg *out);

/* cli_optim_cfg: the optimizer the common flags describe (optim.h). */
struct optim_cfg;
void cli_optim_cfg(const struct cli_common *c, struct optim_cfg *out);

/* cli_compute_straggler, cli_compute_pause: the CLI_CUSTOM parsers of
 * --straggler RANK:FACTOR and --pause RANK:TIME[@EVERY] into a struct
 * compute_model (dst; compute.h), each part against THE BOUNDS; the rank
 * is checked against K by the caller. The common flags use them, and
 * bin/model's straggler query. 0, or ERR_USAGE with the reason in err. */
int cli_compute_straggler(const char *v, void *dst, char *err);
int cli_compute_pause(const char *v, void *dst, char *err);

/* cli_coordinator: the --coordinator value if given, else
 * MASTER_ADDR:MASTER_PORT from the environment. OUT: host, port.
 * ERR_USAGE if neither is there or it does not parse. */
int cli_coordinator(const char *flag, char *host, size_t hostlen, int *port, char *err);

/* cli_secret: the job's secret (auth.h): --secret-file, else the
 * PSRING_SECRET environment variable, else none (k->keyed 0). The secret
 * itself never goes on a command line, so it does not show in `ps`; it
 * never crosses the wire either (AUTH proves it). ERR_USAGE with a line
 * in err for a bad file or secret. */
struct auth_key;
int cli_secret(const struct cli_common *c, struct auth_key *k, char *err);

#endif /* CLI_COMMON_H */
