/* cli_common.c -- the common flags of docs/design.md (their table,
 * defaults and cross-checks), rank discovery from the environment
 * (torchrun, Open MPI, MPICH, Slurm), the coordinator's address and the
 * job secret (cli_secret).
 */
#include "cli_common.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire/auth.h"
#include "base/cli_internal.h"
#include "base/dtype.h"
#include "optim.h"
#include "base/err.h"
#include "base/infile.h"
#include "mlp.h"
#include "base/outfile.h"
#include "weights.h"
#include "workload.h"

#define WORLD_MAX 65536

/* ------------------------------------------------------- common flags */

static int parse_workload(const char *v, void *dst, char *err)
{
    char q[CLI_QUOTE_BUF], names[96] = "";
    size_t o = 0;

    if (workload_parse(v, (int *)dst) == 0)
        return 0;
    /* List what workload_parse accepts today, so the message stays true
     * when a workload is added there. */
    for (int k = 1; k <= 8; k++) {
        const char *nm = workload_name(k);
        int tmp;
        if (strcmp(nm, "?") == 0 || workload_parse(nm, &tmp) != 0)
            continue;
        int w = snprintf(names + o, sizeof names - o, "%s%s", o ? ", " : "", nm);
        if (w < 0 || (size_t)w >= sizeof names - o)
            break;
        o += (size_t)w;
    }
    err_say(err, "%s is not a workload (one of: %s)", cli_quote(v, q), names);
    return ERR_USAGE;
}

static int parse_dtype(const char *v, void *dst, char *err)
{
    char q[CLI_QUOTE_BUF];
    if (dtype_parse(v, (int *)dst) == 0)
        return 0;
    err_say(err, "%s is not a dtype (one of: f32, f64)", cli_quote(v, q));
    return ERR_USAGE;
}

/* Store a parsed value that must also be > 0 (rc: the parser's result). */
static int store_positive(int rc, double d, const char *v, void *dst, char *err)
{
    char q[CLI_QUOTE_BUF];
    if (rc != 0)
        return rc;
    if (!(d > 0)) {
        err_say(err, "%s must be > 0", cli_quote(v, q));
        return ERR_USAGE;
    }
    *(double *)dst = d;
    return 0;
}

static int parse_optimizer(const char *v, void *dst, char *err)
{
    char q[CLI_QUOTE_BUF];

    if (optim_parse(v, (int *)dst) == 0)
        return 0;
    err_say(err, "%s is not an optimizer (one of: sgd, momentum, adam)", cli_quote(v, q));
    return ERR_USAGE;
}

static int parse_lr(const char *v, void *dst, char *err)
{
    double d = 0;
    int rc = cli_parse_double(v, &d, err);   /* before d is read */
    return store_positive(rc, d, v, dst, err);
}

/* The idle timeout must be positive: 0 would fail every wait at once. */
static int parse_timeout(const char *v, void *dst, char *err)
{
    double d = 0;
    int rc = cli_parse_time(v, &d, err);
    return store_positive(rc, d, v, dst, err);
}

/* dst is the struct cli_common: a repeated flag frees the earlier list. */
static int parse_shard_weights(const char *v, void *dst, char *err)
{
    struct cli_common *c = dst;
    double *w;
    int n, rc = cli_parse_list(v, &w, &n, err);
    if (rc != 0)
        return rc;
    free(c->shard_weights);
    c->shard_weights = w;
    c->n_shard_weights = n;
    return 0;
}

/* --straggler RANK:FACTOR into the compute model (dst); FACTOR against
 * THE BOUNDS' straggler-factor. (cli_common.h: bin/model takes it too.) */
int cli_compute_straggler(const char *v, void *dst, char *err)
{
    struct compute_model *m = dst;
    double f;
    int r;

    if (compute_parse_straggler(v, &r, &f, err) != 0 ||
        cli_bound_check("straggler-factor", f, v, err) != 0)
        return ERR_USAGE;
    m->straggler_rank = r;
    m->straggler_factor = f;
    return 0;
}

/* --pause RANK:TIME[@EVERY] into the compute model (dst). */
int cli_compute_pause(const char *v, void *dst, char *err)
{
    struct compute_model *m = dst;
    uint64_t every;
    double t;
    int r;

    if (compute_parse_pause(v, &r, &t, &every, err) != 0 ||
        cli_bound_check("pause-time", t, v, err) != 0 ||
        cli_bound_check("pause-every", (double)every, v, err) != 0)
        return ERR_USAGE;
    m->pause_rank = r;
    m->pause_time = t;
    m->pause_every = every;
    return 0;
}

void cli_common_defaults(struct cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->rank = c->world = c->local_rank = -1;
    c->rank_source = NULL;
    c->workload = WORKLOAD_LINREG;
    c->params = 0;
    c->batch = 0;
    c->shard_weights = NULL;
    c->n_shard_weights = 0;
    c->micro = 1;
    c->steps = 10;
    c->warmup = -1;             /* auto: 2, or steps - 1 when fewer */
    c->lr = 0.05;
    c->seed = 7;
    c->dtype = DTYPE_F64;
    c->link_bw = 0;
    c->link_latency = 0;
    c->link_host = NULL;
    c->timeout = 30;
    c->csv = NULL;
    c->weights_out = NULL;
    c->backward_time = 0;
    c->layers = 0;
    compute_model_init(&c->compute);
    c->optimizer = OPTIM_SGD;
    c->momentum = OPTIM_DEFAULT_MOMENTUM;
    c->beta1 = OPTIM_DEFAULT_BETA1;
    c->beta2 = OPTIM_DEFAULT_BETA2;
    c->eps = OPTIM_DEFAULT_EPS;
    c->loss_time_out = NULL;
    c->target_loss = NAN;
}

void cli_optim_cfg(const struct cli_common *c, struct optim_cfg *out)
{
    *out = (struct optim_cfg){ c->optimizer, c->lr, c->momentum, c->beta1, c->beta2, c->eps };
}

#define COMMON_NOPTS 32
/* One table, rewritten by each call: the pointers are only valid until the
 * next cli_common_opts() call (a process has one struct cli_common). */
static struct cli_opt common_table[COMMON_NOPTS + 1];
static char workload_help[128];

const struct cli_opt *cli_common_opts(struct cli_common *c)
{
    /* Bounds: 2^40 elements or examples keeps n * 8 bytes and B * m far
     * from any 64-bit overflow downstream; the workload checks its own. */
    const long long big = 1LL << 40;
    const struct cli_opt t[COMMON_NOPTS + 1] = {
        { "rank", CLI_INT, &c->rank, "R",
          "this process's rank, 0..K-1 (default: environment)", 0, WORLD_MAX - 1, NULL },
        { "world", CLI_INT, &c->world, "K",
          "number of workers, 1..65536 (default: environment)", 1, WORLD_MAX, NULL },
        { "workload", CLI_CUSTOM, &c->workload, "NAME", workload_help, 0, 0, parse_workload },
        { "params", CLI_SIZE, &c->params, "N",
          "synthetic workload size in elements (1M = 2^20)", 1, big, NULL },
        { "batch", CLI_U64, &c->batch, "B",
          "global examples per step (default: the workload's)", 1, big, NULL },
        { "shard-weights", CLI_CUSTOM, c, "W,W,...",
          "relative shard sizes, one per rank (default equal)", 0, 0, parse_shard_weights },
        { "micro", CLI_INT, &c->micro, "M",
          "micro-batches accumulated per step (default 1)", 1, 1 << 20, NULL },
        { "steps", CLI_INT, &c->steps, "S", "optimizer steps (default 10)", 1, INT_MAX, NULL },
        { "warmup", CLI_INT, &c->warmup, "W",
          "first steps left untimed, < S (default 2, or S-1)", 0, INT_MAX, NULL },
        { "lr", CLI_CUSTOM, &c->lr, "X", "learning rate, > 0 (default 0.05)", 0, 0, parse_lr },
        { "seed", CLI_U64, &c->seed, "S", "seed of data and initial weights (default 7)", 0, 0, NULL },
        { "dtype", CLI_CUSTOM, &c->dtype, "f32|f64",
          "gradient and weight element type (default f64)", 0, 0, parse_dtype },
        { "link-bw", CLI_RATE, &c->link_bw, "RATE",
          "EMULATED link bandwidth per direction (default off)", 0, 0, NULL },
        { "link-latency", CLI_TIME, &c->link_latency, "TIME",
          "EMULATED one-way link latency (default 0)", 0, 0, NULL },
        { "link-host", CLI_STRING, &c->link_host, "FILE",
          "EMULATED: one host's link, shared by all given FILE", 0, 0, NULL },
        { "timeout", CLI_CUSTOM, &c->timeout, "TIME",
          "idle-progress timeout (default 30s)", 0, 0,
          parse_timeout },
        { "csv", CLI_STRING, &c->csv, "FILE", "write this process's record to FILE", 0, 0, NULL },
        { "json", CLI_STRING, &c->json, "FILE",
          "write this process's record to FILE as JSON Lines", 0, 0, NULL },
        { "weights-out", CLI_STRING, &c->weights_out, "PATH",
          "write the final weights to PATH.RANK, one per line", 0, 0, NULL },
        { "backward-time", CLI_TIME, &c->backward_time, "TIME",
          "EMULATED backward time per step, a sleep",
          0, 0, NULL },
        { "straggler", CLI_CUSTOM, &c->compute, "RANK:FACTOR",
          "EMULATED: RANK's backward time x FACTOR (>= 1)", 0, 0, cli_compute_straggler },
        { "jitter", CLI_DOUBLE, &c->compute.jitter, "SIGMA",
          "EMULATED: backward time x exp(SIGMA z - SIGMA^2/2)", 0, 0, NULL },
        { "pause", CLI_CUSTOM, &c->compute, "RANK:TIME[@N]",
          "EMULATED: RANK pauses TIME every N steps (N=1)", 0, 0, cli_compute_pause },
        { "layers", CLI_INT, &c->layers, "L",
          "synthetic: L equal layers (default 8)",
          1, 1 << 20, NULL },
        { "secret-file", CLI_STRING, &c->secret_file, "FILE",
          "the job's secret (default: $PSRING_SECRET)", 0, 0, NULL },
        { "optimizer", CLI_CUSTOM, &c->optimizer, "NAME",
          "sgd, momentum or adam (default sgd)", 0, 0, parse_optimizer },
        { "momentum", CLI_DOUBLE, &c->momentum, "MU",
          "momentum: m = MU m + g (default 0.9)", 0, 0, NULL },
        { "beta1", CLI_DOUBLE, &c->beta1, "B1", "adam: first-moment decay (default 0.9)",
          0, 0, NULL },
        { "beta2", CLI_DOUBLE, &c->beta2, "B2", "adam: second-moment decay (default 0.999)",
          0, 0, NULL },
        { "eps", CLI_DOUBLE, &c->eps, "EPS", "adam: denominator guard (default 1e-8)", 0, 0,
          NULL },
        { "loss-time-out", CLI_STRING, &c->loss_time_out, "FILE",
          "write \"step loss wall_s\" lines to FILE", 0, 0, NULL },
        { "target-loss", CLI_DOUBLE, &c->target_loss, "X",
          "CSV ttt_s: first wall_s with loss <= X", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    size_t o = 0;

    /* The names workload_parse accepts today, so --help stays true when
     * a workload is added there. */
    workload_help[0] = '\0';
    for (int k = 1, first = 1; k <= 8 && o < sizeof workload_help; k++) {
        const char *nm = workload_name(k);
        int tmp;
        if (strcmp(nm, "?") != 0 && workload_parse(nm, &tmp) == 0) {
            o += (size_t)snprintf(workload_help + o, sizeof workload_help - o, "%s%s",
                                  first ? "" : "|", nm);
            first = 0;
        }
    }
    if (o < sizeof workload_help)
        snprintf(workload_help + o, sizeof workload_help - o, " (default %s)",
                 workload_name(WORKLOAD_LINREG));
    memcpy(common_table, t, sizeof t);
    return common_table;
}

void cli_common_free(struct cli_common *c)
{
    free(c->shard_weights);
    c->shard_weights = NULL;
    c->n_shard_weights = 0;
}

void cli_workload_cfg(const struct cli_common *c, struct workload_cfg *out)
{
    *out = (struct workload_cfg){
        .kind = c->workload, .dtype = c->dtype, .seed = c->seed, .params = c->params,
        .batch = c->batch, .backward_time = c->backward_time, .layers = c->layers,
        .compute = &c->compute, .world = c->world > 0 ? c->world : 0,
        .rank = c->rank > 0 ? c->rank : 0, .shard_weights = c->shard_weights,
    };
}

/* ------------------------------------------------- rank from the environment */

static const struct env_source {
    const char *name, *rank, *size, *local;
} env_sources[] = {
    /* docs/design.md's order. Slurm last: mpirun inside an allocation also sees
     * Slurm's variables, and they describe the allocation, not the job. */
    { "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK" },
    { "openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK" },
    { "mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID" },
    { "slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" },
};
#define N_ENV_SOURCES (sizeof env_sources / sizeof env_sources[0])

/* An empty variable counts as unset ("RANK= cmd" is how scripts clear it). */
static const char *env_get(const char *var)
{
    const char *v = getenv(var);
    return v && v[0] ? v : NULL;
}

/* env_int: the variable, parsed as strictly as a flag. 0 or ERR_USAGE
 * with "VAR: reason". */
static int env_int(const char *var, long long min, long long max, int *out, char *err)
{
    char reason[ERR_LEN];
    long long v;
    if (cli_parse_ll(env_get(var), min, max, &v, reason) != 0) {
        err_say(err, "%s: %s (from the environment)", var, reason);
        return ERR_USAGE;
    }
    *out = (int)v;
    return 0;
}

/* check_out_path: the output file can be written (outfile_check: a temp
 * file is really created next to it, and what is there is a regular file),
 * so a run fails at start-up, not after its last step. */
static int check_out_path(const char *flag, const char *path, char *err)
{
    return outfile_check(flag, path, err) != 0 ? ERR_USAGE : 0;
}

/* check_files: the outputs tried, the secret file's type checked, here in
 * every program (those that never read the secret, reference and
 * psring_sim, too: a FIFO, a device, a folder; infile.h). */
static int check_files(const struct cli_common *c, char *err)
{
    if ((c->csv && check_out_path("--csv", c->csv, err) != 0) ||
        (c->json && check_out_path("--json", c->json, err) != 0) ||
        (c->loss_time_out && check_out_path("--loss-time-out", c->loss_time_out, err) != 0) ||
        (c->weights_out && weights_check(c->weights_out, c->rank, err) != 0) ||
        (c->secret_file && infile_check("--secret-file", c->secret_file, err) != 0))
        return ERR_USAGE;
    return 0;
}

int cli_common_finish(struct cli_common *c, char *err)
{
    const char *rank_label = "--rank", *world_label = "--world";
    int rank_flag = c->rank >= 0, world_flag = c->world >= 1;
    const struct env_source *src = NULL;
    int rc;

    if (rank_flag) {
        c->rank_source = "flags";
        if (!world_flag) {
            /* --rank with the world from a launcher: take the first source
             * that has a size; with none, a world of 1. */
            for (size_t i = 0; i < N_ENV_SOURCES; i++)
                if (env_get(env_sources[i].size)) {
                    src = &env_sources[i];
                    break;
                }
            if (src) {
                if ((rc = env_int(src->size, 1, WORLD_MAX, &c->world, err)) != 0)
                    return rc;
                world_label = src->size;
            } else {
                c->world = 1;
                world_label = "the default world";
            }
        }
        c->local_rank = c->rank;    /* flags mean a local job (launch.sh) */
    } else {
        for (size_t i = 0; i < N_ENV_SOURCES; i++)
            if (env_get(env_sources[i].rank)) {
                src = &env_sources[i];
                break;
            }
        if (src) {
            if ((rc = env_int(src->rank, 0, WORLD_MAX - 1, &c->rank, err)) != 0)
                return rc;
            c->rank_source = src->name;
            rank_label = src->rank;
            if (!world_flag) {
                if (!env_get(src->size)) {
                    err_say(err, "%s: set, but %s is not (give --world)", src->rank, src->size);
                    return ERR_USAGE;
                }
                if ((rc = env_int(src->size, 1, WORLD_MAX, &c->world, err)) != 0)
                    return rc;
                world_label = src->size;
            }
            if (env_get(src->local)) {
                if ((rc = env_int(src->local, 0, WORLD_MAX - 1, &c->local_rank, err)) != 0)
                    return rc;
            } else {
                c->local_rank = c->rank;
            }
        } else if (world_flag && c->world > 1) {
            err_say(err, "--rank: not given, and no rank in the environment "
                     "(RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID)");
            return ERR_USAGE;
        } else {
            c->rank = 0;
            c->local_rank = 0;
            c->world = 1;
            c->rank_source = "default";
        }
    }

    if (c->rank >= c->world) {
        err_say(err, "%s %d: not below the world size %d (%s)", rank_label, c->rank,
                 c->world, world_label);
        return ERR_USAGE;
    }
    if (c->warmup < 0)
        c->warmup = c->steps > 2 ? 2 : c->steps - 1;
    if (c->warmup >= c->steps) {
        err_say(err, "--warmup %d: not below --steps %d (at least one timed step is needed)",
                 c->warmup, c->steps);
        return ERR_USAGE;
    }
    if (c->compute.straggler_rank >= c->world) {
        err_say(err, "--straggler: rank %d is not below the world size %d (%s)",
                c->compute.straggler_rank, c->world, world_label);
        return ERR_USAGE;
    }
    if (c->compute.pause_rank >= c->world) {
        err_say(err, "--pause: rank %d is not below the world size %d (%s)",
                c->compute.pause_rank, c->world, world_label);
        return ERR_USAGE;
    }
    if (compute_model_active(&c->compute) && c->backward_time == 0) {
        err_say(err, "%s: needs a base time: give --backward-time TIME (the EMULATED time "
                "it scales)", c->compute.straggler_rank >= 0 ? "--straggler"
                : c->compute.jitter > 0 ? "--jitter" : "--pause");
        return ERR_USAGE;
    }
    if (c->layers > 0 && c->workload != WORKLOAD_SYNTHETIC) {
        err_say(err, "--layers: only the synthetic workload takes a layer count (%s has its own)",
                 workload_name(c->workload));
        return ERR_USAGE;
    }
    if (c->workload == WORKLOAD_MLP && c->params != 0) {
        err_say(err, "--params: the mlp has fixed dims 32-64-64-1 (%d parameters); "
                 "--params sizes the synthetic workload", (int)MLP_PARAMS);
        return ERR_USAGE;
    }
    if (c->workload == WORKLOAD_MLP && c->batch > WORKLOAD_MLP_MAX_BATCH) {
        err_say(err, "--batch %llu: too large for the mlp (at most %u)",
                 (unsigned long long)c->batch, (unsigned)WORKLOAD_MLP_MAX_BATCH);
        return ERR_USAGE;
    }
    if (c->shard_weights && c->n_shard_weights != c->world) {
        err_say(err, "--shard-weights: %d weights for a world of %d (%s); give one per rank",
                 c->n_shard_weights, c->world, world_label);
        return ERR_USAGE;
    }
    return check_files(c, err);
}

/* ---------------------------------------------------------- coordinator */

/* check_host: a plausible host name or address; resolution is net.c's. */
static int check_host(const char *label, const char *h, size_t n, size_t hostlen, char *err)
{
    char q[CLI_QUOTE_BUF];
    if (n == 0) {
        err_say(err, "%s: empty host", label);
        return ERR_USAGE;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '[' || ch == ']') {
            char buf[CLI_QUOTE_MAX + 1];
            size_t m = n < CLI_QUOTE_MAX ? n : CLI_QUOTE_MAX;
            memcpy(buf, h, m);
            buf[m] = '\0';
            err_say(err, "%s: %s is not a host name or address", label, cli_quote(buf, q));
            return ERR_USAGE;
        }
    }
    if (n >= hostlen) {
        err_say(err, "%s: host name longer than %zu bytes", label, hostlen ? hostlen - 1 : 0);
        return ERR_USAGE;
    }
    return 0;
}

static int parse_port(const char *label, const char *s, int *port, char *err)
{
    char reason[ERR_LEN];
    long long v;
    if (cli_parse_ll(s, 0, 65535, &v, reason) != 0) {
        err_say(err, "%s: port %s", label, reason);
        return ERR_USAGE;
    }
    *port = (int)v;
    return 0;
}

int cli_coordinator(const char *flag, char *host, size_t hostlen, int *port, char *err)
{
    char q[CLI_VALUE_BUF], label[CLI_VALUE_BUF + 32];
    const char *h, *colon;
    size_t n;
    int p;

    if (flag) {
        snprintf(label, sizeof label, "--coordinator %s", cli_value(flag, q));
        if (flag[0] == '[') {
            const char *close = strchr(flag, ']');
            if (!close || close[1] != ':') {
                err_say(err, "%s: not [ADDRESS]:PORT", label);
                return ERR_USAGE;
            }
            h = flag + 1;
            n = (size_t)(close - h);
            colon = close + 1;
        } else {
            colon = strrchr(flag, ':');
            if (!colon) {
                err_say(err, "%s: not HOST:PORT (the :PORT is missing)", label);
                return ERR_USAGE;
            }
            h = flag;
            n = (size_t)(colon - flag);
            if (memchr(h, ':', n)) {
                err_say(err, "%s: write an IPv6 address in brackets, [ADDRESS]:PORT", label);
                return ERR_USAGE;
            }
        }
        if (check_host(label, h, n, hostlen, err) != 0
            || parse_port(label, colon + 1, &p, err) != 0)
            return ERR_USAGE;
    } else {
        const char *addr = env_get("MASTER_ADDR"), *ps = env_get("MASTER_PORT");
        if (!addr && !ps) {
            err_say(err, "--coordinator: not given, and MASTER_ADDR/MASTER_PORT are not set");
            return ERR_USAGE;
        }
        if (!addr || !ps) {
            err_say(err, "%s: not set (%s is); give both, or --coordinator HOST:PORT",
                     addr ? "MASTER_PORT" : "MASTER_ADDR", addr ? "MASTER_ADDR" : "MASTER_PORT");
            return ERR_USAGE;
        }
        h = addr;
        n = strlen(addr);
        /* MASTER_ADDR holds a host alone; an IPv6 literal may be bracketed. */
        if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
            h++;
            n -= 2;
        }
        snprintf(label, sizeof label, "MASTER_ADDR=%s", cli_value(addr, q));
        if (check_host(label, h, n, hostlen, err) != 0)
            return ERR_USAGE;
        snprintf(label, sizeof label, "MASTER_PORT=%s", cli_value(ps, q));
        if (parse_port(label, ps, &p, err) != 0)
            return ERR_USAGE;
    }
    memcpy(host, h, n);
    host[n] = '\0';
    *port = p;
    return 0;
}

int cli_secret(const struct cli_common *c, struct auth_key *k, char *err)
{
    return auth_key_load(k, c->secret_file, getenv("PSRING_SECRET"), err);
}
