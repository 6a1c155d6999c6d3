/* cli.h -- command lines: the common flags, strict value parsing, rank
 * discovery from the environment.
 *
 * Every binary builds a list of option tables (its own, then
 * cli_common_opts()) and calls cli_main_parse(), which prints --help and
 * --version and exits 64 with one line naming the flag on any bad value.
 * The value parsers (sizes, rates, times: the UNITS) are in units.h,
 * which this header includes; the flag loop and --help are cli.c, the
 * common flags and rank discovery cli_common.c.
 */
#ifndef CLI_H
#define CLI_H

#include <stdint.h>
#include <stdio.h>

#include "train/compute.h"
#include "units.h"

#define PSRING_VERSION "0.1.0"
#define CLI_EXIT_USAGE 64
#define CLI_HELP     1      /* cli_parse results that are not errors */
#define CLI_VERSION  2
#define CLI_PATH_MAX 4096

enum cli_kind {
    CLI_BOOL,     /* int*: set to 1 by the bare flag */
    CLI_INT,      /* int*: decimal, within [min, max] */
    CLI_U64,      /* uint64_t*: decimal, within [min, max] */
    CLI_SIZE,     /* uint64_t*: a size, within [min, max] */
    CLI_RATE,     /* double*: bytes per second, >= 0, finite */
    CLI_TIME,     /* double*: seconds, >= 0, finite */
    CLI_DOUBLE,   /* double*: finite */
    CLI_STRING,   /* const char**: the argv string itself (not copied) */
    CLI_CUSTOM,   /* parse(value, dst, err) decides */
};

struct cli_opt {
    const char *name;        /* without the dashes: "link-bw" */
    enum cli_kind kind;
    void *dst;
    const char *metavar;     /* "RATE"; NULL for CLI_BOOL */
    const char *help;        /* one line */
    long long min, max;      /* CLI_INT/CLI_U64/CLI_SIZE bounds (max 0: none) */
    int (*parse)(const char *value, void *dst, char *err);  /* CLI_CUSTOM */
};
/* A table ends with an entry whose name is NULL. */

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

/* cli_bound_check: x, parsed from v, against THE BOUNDS' entry `name`
 * (cli.c; a flag, or a part of one such as "straggler-factor"). 0, or
 * ERR_USAGE with "'v' is out of range: RANGE" in err. No entry: 0. */
int cli_bound_check(const char *name, double x, const char *v, char *err);

/* cli_parse: argv against the NULL-terminated list of tables. Accepts
 * "--name value" and "--name=value". Returns 0, CLI_HELP, CLI_VERSION, or
 * ERR_USAGE with "--name: reason" (or the unknown argument) in err. */
int cli_parse(int argc, char **argv, const struct cli_opt *const *tables, char *err);

/* cli_usage: the --help text: synopsis, then one line per option. */
void cli_usage(FILE *f, const char *prog, const char *synopsis,
               const struct cli_opt *const *tables);

/* cli_main_parse: cli_parse for main(): --help -> usage on stdout, exit 0;
 * --version -> exit 0; bad input -> "PROG: --flag: reason" on stderr and
 * exit 64. Returns only when the arguments parsed. */
void cli_main_parse(const char *prog, const char *synopsis, int argc, char **argv,
                    const struct cli_opt *const *tables);

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

#endif /* CLI_H */
