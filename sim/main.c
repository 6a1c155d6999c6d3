/* main.c -- bin/psring_sim: the parameter server or the all-reduce of
 * psring on a simulated network (SimGrid), one actor per rank, the same
 * algorithms (ring.c, rd.c over xport_sim), the same store and training
 * step, the same CSV row as experiments/launch.sh (transport "sim").
 *
 *   psring_sim ps|ring K [--algo ring|rd] [--bytes N] [common flags]
 *       [--platform star|fat-tree:OVERSUB|racks:R:UPLINK|file:PATH]
 *       [--payload real|sizes] [--servers S] [--colocated-servers]
 *       [--bucket-size SIZE] [--no-overlap] [--hosts N] [--host-bytes FILE]
 *       [--kill RANK@STEP]
 *       [--csv-out FILE] [--platform-out FILE] [--sg-cfg KEY:VALUE]
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
 * Exit status: 0; 1 when a rank failed; 64 for bad input (one line).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>

#include "train/cli_common.h"
#include "coll/a2a.h"
#include "coll/bench.h"
#include "train/buckets.h"
#include "coll/coll.h"
#include "base/dtype.h"
#include "base/err.h"
#include "wire/link.h"
#include "base/log.h"
#include "measure/metrics.h"
#include "measure/model.h"
#include "platform.h"
#include "coll/rd.h"
#include "coll/ring.h"
#include "sim.h"
#include "coll/train.h"
#include "train/workload.h"
#include "coll/xport_sim.h"

#define PROG "psring_sim"
#define SIM_REAL_MAX (256ull << 20)     /* K * n bytes: above, --payload sizes */
#define SIM_PROXY_PER_RANK 64           /* sizes: proxy elements per rank */
#define SIM_PROXY_PIECE 4096            /* sizes: the algorithms' staging piece */
#define SIM_MAX_CFG 16

struct opts {
    const char *algo, *platform, *payload, *csv_out, *platform_out, *host_bytes;
    const char *sg_cfg[SIM_MAX_CFG];
    int n_cfg, servers, hosts, colocated, no_overlap;
    uint64_t bytes, bucket;
    int bench, iters, warmup_iters, root;   /* --bench (ring) */
    int kill_rank, kill_step;               /* --kill RANK@STEP; -1 */
    const char *coll;
    double imbalance;
};

static struct opts *g_opts;
static int g_op;                /* --bench: enum coll_op */

__attribute__((noreturn)) static void usage_fail(const char *why)
{
    fprintf(stderr, PROG ": %s\n", why);
    exit(CLI_EXIT_USAGE);
}

static int parse_kill(const char *value, void *dst, char *err)
{
    struct opts *o = dst;
    const char *at = strchr(value, '@');
    char num[32], why[ERR_LEN];
    long long r, st;

    if (!at || (size_t)(at - value) >= sizeof num) {
        err_say(err, "RANK@STEP, not '%.40s'", value);
        return ERR_USAGE;
    }
    memcpy(num, value, (size_t)(at - value));
    num[at - value] = '\0';
    if (cli_parse_ll(num, 0, 65535, &r, why) != 0 || cli_parse_ll(at + 1, 0, 1 << 30, &st, why) != 0) {
        err_say(err, "RANK@STEP with whole numbers, not '%.40s'", value);
        return ERR_USAGE;
    }
    o->kill_rank = (int)r;
    o->kill_step = (int)st;
    return 0;
}

static int parse_cfg(const char *value, void *dst, char *err)
{
    struct opts *o = dst;

    if (o->n_cfg >= SIM_MAX_CFG || !strchr(value, ':')) {
        err_say(err, "KEY:VALUE (at most %d)", SIM_MAX_CFG);
        return ERR_USAGE;
    }
    o->sg_cfg[o->n_cfg++] = value;
    return 0;
}

/* ------------------------------------------------------------ the ring */

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
                           .x = x };
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
                           .piece_bytes = SIM_PROXY_PIECE, .timeout = j->c->timeout, .x = x };
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
                                       sl->bytes_out - out0, now - ts };
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
    const struct opts *o = g_opts;
    struct coll coll;
    struct coll_cfg cc = { .kind = COLL_TCP, .algo = j->algo, .rank = sl->rank, .world = j->k,
                           .dtype = j->c->dtype, .max_n = (size_t)(j->bytes / dtype_size(j->c->dtype)),
                           .timeout = j->c->timeout, .x = x };

    if ((sl->rc = coll_init(&coll, &cc, sl->err)) == 0) {
        struct bench_cfg bc = {
            .rank = sl->rank, .world = j->k, .dtype = j->c->dtype, .minbytes = j->bytes,
            .maxbytes = j->bytes, .stepfactor = 2, .warmup_iters = o->warmup_iters,
            .iters = o->iters, .csv = rec_path, .op = g_op, .root = o->root,
            .imbalance = o->imbalance, .coll = &coll, .link = link,
        };
        sl->rc = bench_run(&bc, sl->err);
        coll_destroy(&coll);
    }
}

/* rec_path: rank r's bench record, next to the platform file. */
static void rec_path(char *buf, size_t len, int rank)
{
    snprintf(buf, len, "%s/psring_sim.%d.rec.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid(), rank);
}

static void ring_actor(int argc, char **argv)
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
    if (g_opts->bench) {
        link.egress.rate = j->c->link_bw;
        link.latency_s = j->c->link_latency;
    }
    if (j->algo == COLL_RD)
        rd_plan(sl->rank, j->k, &pl);
    else if (g_opts->bench && g_op == COLL_ALLTOALL)
        a2a_plan(sl->rank, j->k, &pl);
    else
        ring_plan(sl->rank, j->k, &pl);
    sl->rc = xport_sim_open(&pl, sl->rank, j->k, j->real ? XPORT_SIM_REAL : XPORT_SIM_SIZES,
                            j->real ? 1.0 : j->scale, j->real ? &link.bytes_in : &sl->bytes_in,
                            j->real ? &link.bytes_out : &sl->bytes_out, &x, sl->err);
    if (sl->rc != 0)
        return;
    if (g_opts->bench) {
        char path[4200];

        rec_path(path, sizeof path, sl->rank);
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

/* ------------------------------------------------------------ set-up */

static const struct cli_opt *own_opts(struct opts *o)
{
    static struct cli_opt t[24];
    const struct cli_opt v[] = {
        { "algo", CLI_STRING, &o->algo, "ring|rd", "ring: the all-reduce (default ring)", 0, 0, NULL },
        { "bytes", CLI_SIZE, &o->bytes, "SIZE",
          "message size n (default: the workload's n * element size)", 1, 0, NULL },
        { "platform", CLI_STRING, &o->platform, "SPEC",
          "star | fat-tree:OVERSUB | racks:R:UPLINK | file:PATH (default star)", 0, 0, NULL },
        { "payload", CLI_STRING, &o->payload, "real|sizes",
          "bytes or sizes only (default real up to K*n = 256 MiB)", 0, 0, NULL },
        { "servers", CLI_INT, &o->servers, "S",
          "ps: sharded servers on hosts of their own (default 1; with --colocated-servers the "
          "extra ones, default 0)", 0, 256, NULL },
        { "colocated-servers", CLI_BOOL, &o->colocated, NULL,
          "ps: a shard on each worker's host too, Theorem 1's split", 0, 0, NULL },
        { "bucket-size", CLI_SIZE, &o->bucket, "SIZE",
          "the gradient's buckets (default 25MiB): ps, pushed last first, pulled as released; "
          "ring (--payload real), one all-reduce each, overlapped with the backward pass",
          1, 0, NULL },
        { "no-overlap", CLI_BOOL, &o->no_overlap, NULL,
          "ring: every bucket's all-reduce after the whole backward pass (the simulated PS "
          "never overlaps)", 0, 0, NULL },
        { "host-bytes", CLI_STRING, &o->host_bytes, "FILE",
          "write each host's link bytes (in, out, whole run) to FILE", 0, 0, NULL },
        { "hosts", CLI_INT, &o->hosts, "N", "hosts of a generated platform (default K + S)",
          1, 1 << 20, NULL },
        { "csv-out", CLI_STRING, &o->csv_out, "FILE", "append the row to FILE (header if new)",
          0, 0, NULL },
        { "platform-out", CLI_STRING, &o->platform_out, "FILE",
          "keep the generated platform XML in FILE", 0, 0, NULL },
        { "bench", CLI_BOOL, &o->bench, NULL,
          "ring: ring_worker's benchmark of one size (--bytes) instead of training", 0, 0, NULL },
        { "coll", CLI_STRING, &o->coll, "NAME",
          "--bench: all_reduce (default), reduce_scatter, all_gather, broadcast, reduce, "
          "alltoall", 0, 0, NULL },
        { "root", CLI_INT, &o->root, "R",
          "--bench: broadcast's and reduce's root, alltoall's hot rank (default 0)", 0, 65535,
          NULL },
        { "imbalance", CLI_DOUBLE, &o->imbalance, "F",
          "--bench --coll alltoall: the hot rank gets F x the average share, 1 .. K", 1, 65536,
          NULL },
        { "iters", CLI_INT, &o->iters, "N", "--bench: timed iterations (default 5)", 1, 1 << 20,
          NULL },
        { "warmup-iters", CLI_INT, &o->warmup_iters, "N",
          "--bench: untimed iterations first (default 1)", 0, 1 << 20, NULL },
        { "kill", CLI_CUSTOM, o, "RANK@STEP",
          "SIMULATION ONLY: ring rank or PS worker RANK dies at the start of step STEP; the "
          "others fail after --timeout of simulated time, naming it", 0, 0, parse_kill },
        { "sg-cfg", CLI_CUSTOM, o, "KEY:VALUE", "one more SimGrid --cfg (repeatable)", 0, 0,
          parse_cfg },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    memcpy(t, v, sizeof v);
    return t;
}

/* names: 2 when msg names the loss itself (needle, not relayed), 1 when
 * it relays it ("... reported: ..."), 0 when it does not name it. */
static int names(const char *msg, const char *needle)
{
    return !strstr(msg, needle) ? 0 : strstr(msg, " reported: ") ? 1 : 2;
}

/* host_bytes_write: "HOST BYTES_IN BYTES_OUT" per host, the payload bytes
 * its actors moved across its link over the whole run (--host-bytes). */
static int host_bytes_write(const char *path, const struct sim_slot *slots, int nslots,
                            int nhosts, char *err)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        err_say(err, "--host-bytes %s: %s", path, strerror(errno));
        return -errno;
    }
    fprintf(f, "# host bytes_in bytes_out   (payload across the host's link, the whole run)\n");
    for (int h = 0; h < nhosts; h++) {
        unsigned long long in = 0, out = 0;

        for (int i = 0; i < nslots; i++)
            if (slots[i].host == h) {
                in += slots[i].bytes_in;
                out += slots[i].bytes_out;
            }
        fprintf(f, "h%d %llu %llu\n", h, in, out);
    }
    if (fclose(f) != 0) {
        err_say(err, "--host-bytes %s: %s", path, strerror(errno));
        return -EIO;
    }
    return 0;
}

static int is_new(const char *path)
{
    FILE *f = fopen(path, "r");
    int c;

    if (!f)
        return 1;
    c = fgetc(f);
    fclose(f);
    return c == EOF;
}

/* job_sizes: n in bytes (--bytes or the workload's), the data mode
 * (--payload) and, for the ring with sizes only, the proxy vector. */
static void job_sizes(struct opts *o, struct cli_common *c, struct sim_job *j)
{
    char err[ERR_LEN];
    size_t es = dtype_size(c->dtype);

    if (o->bytes) {
        if (o->bytes % es != 0)
            usage_fail("--bytes: not a whole number of elements of the dtype");
        c->workload = WORKLOAD_SYNTHETIC;
        c->params = o->bytes / es;
    }
    j->c = c;
    if (!o->bytes) {
        struct workload_cfg wc;
        struct workload w;

        cli_workload_cfg(c, &wc);
        if (workload_create(&w, &wc) != 0)
            usage_fail("--workload: cannot build it with these sizes (--params, --batch)");
        o->bytes = (uint64_t)w.n * es;
        workload_destroy(&w);
    }
    j->bytes = o->bytes;
    if (!o->payload)
        j->real = (double)j->k * (double)j->bytes <= (double)SIM_REAL_MAX;
    else if (strcmp(o->payload, "real") == 0 || strcmp(o->payload, "sizes") == 0)
        j->real = strcmp(o->payload, "real") == 0;
    else
        usage_fail("--payload: real or sizes");
    if (j->real && (double)j->k * (double)j->bytes > 4.0 * (double)SIM_REAL_MAX)
        usage_fail("--payload real: K * n above 1 GiB; use --payload sizes");
    if (j->real && !j->ps && train_check(c, (uint64_t)c->batch, err) != 0)
        usage_fail(err);
    if (!j->real && !j->ps) {
        size_t n = (size_t)(j->bytes / es);

        j->proxy_n = n < (size_t)j->k * SIM_PROXY_PER_RANK ? n : (size_t)j->k * SIM_PROXY_PER_RANK;
        j->scale = (double)n / (double)j->proxy_n;
        j->proxy = calloc(j->proxy_n, es);
        if (!j->proxy)
            usage_fail("out of memory for the proxy vector");
    }
}

/* job_servers: the PS placement (the header's PS PLACEMENTS): the server
 * actors' shards and hosts, "colocated" in *placement when a shard sits
 * on a worker's host. Returns the hosts the job needs. */
static int job_servers(const struct opts *o, struct sim_job *j, const char **placement)
{
    size_t n = (size_t)(j->bytes / dtype_size(j->c->dtype));
    int extra = o->servers < 0 ? (o->colocated ? 0 : 1) : o->servers;
    int all = o->colocated ? j->k + extra : extra, placed_extra = 0;
    unsigned long long *first, *count;

    if (!j->ps)
        return j->k;
    first = calloc((size_t)all, sizeof *first);
    count = calloc((size_t)all, sizeof *count);
    j->srv = calloc((size_t)all, sizeof *j->srv);
    if (!first || !count || !j->srv)
        usage_fail("out of memory for the servers");
    if (o->colocated)
        model_ps_ranges(j->k, extra, 0, n, first, count);
    for (int i = 0; i < all; i++) {
        if (!o->colocated) {
            size_t lo, hi;

            ring_chunk(n, extra, i, &lo, &hi);
            first[i] = lo;
            count[i] = hi - lo;
        }
        if (count[i] == 0)
            continue;       /* Theorem 1 gives a colocated shard nothing (k >= K) */
        if (o->colocated && i < j->k)
            *placement = "colocated";
        j->srv[j->servers++] = (struct sim_server){ first[i], count[i],
                                                    o->colocated && i < j->k ? i
                                                    : j->k + placed_extra++ };
    }
    free(first);
    free(count);
    if (j->servers == 0)
        usage_fail("--bytes: fewer elements than servers");
    return j->k + placed_extra;
}

/* sim_job_from_flags: the command line into o, c, pf and j, with every
 * cross-check (exit 64 with one line on the first that fails). Returns
 * the hosts the job needs. */
static int sim_job_from_flags(int argc, char **argv, struct opts *o, struct cli_common *c,
                              struct platform *pf, struct sim_job *j, const char **placement)
{
    static const char *synopsis = "ps|ring K [options] [common flags]";
    char err[ERR_LEN];
    long long k;
    int nhosts;

    cli_common_defaults(c);
    const struct cli_opt *tables[] = { own_opts(o), cli_common_opts(c), NULL };
    /* Flags before the mode: --help, --version, or a bad flag named. */
    if (argc >= 2 && argv[1][0] == '-')
        cli_main_parse(PROG, synopsis, argc, argv, tables);
    if (argc < 3)
        usage_fail("expected ps|ring and K (see --help)");
    if (strcmp(argv[1], "ps") != 0 && strcmp(argv[1], "ring") != 0)
        usage_fail("mode is not ps or ring");
    if (cli_parse_ll(argv[2], 1, 65536, &k, err) != 0)
        usage_fail("K is not a worker count 1..65536");
    argv[2] = argv[0];
    cli_main_parse(PROG, synopsis, argc - 2, argv + 2, tables);
    memset(j, 0, sizeof *j);
    j->ps = strcmp(argv[1], "ps") == 0;
    j->k = (int)k;
    if (!j->ps && o->servers >= 0)
        usage_fail("--servers: the ring has no servers");
    if (!j->ps && o->colocated)
        usage_fail("--colocated-servers: the ring has no servers");
    if (j->ps && !o->colocated && o->servers == 0)
        usage_fail("--servers: 1..256 (0..256 extra servers with --colocated-servers)");
    if (strcmp(o->algo, "ring") == 0)
        j->algo = COLL_RING;
    else if (strcmp(o->algo, "rd") == 0 && !j->ps)
        j->algo = COLL_RD;
    else
        usage_fail("--algo: ring or rd (ring mode only)");
    if (j->k < 2 && !j->ps)
        usage_fail("K: the simulated ring needs K >= 2");
    if (o->bench) {
        g_op = o->coll ? coll_op_parse(o->coll) : COLL_ALL_REDUCE;
        if (j->ps)
            usage_fail("--bench: the ring's (psring_sim ring K --bench)");
        if (g_op < 0)
            usage_fail("--coll: not all_reduce, reduce_scatter, all_gather, broadcast, reduce "
                       "or alltoall");
        if (g_op != COLL_ALL_REDUCE && j->algo == COLL_RD)
            usage_fail("--coll: the collectives other than all_reduce run on the ring (--algo ring)");
        if (o->root >= j->k)
            usage_fail("--root: not a rank of K");
        if (!(o->imbalance >= 1) || o->imbalance > j->k)
            usage_fail("--imbalance: more than K");
        if (g_op == COLL_ALLTOALL && j->k > A2A_WORLD_MAX)
            usage_fail("--coll alltoall: K above the transport's peer table (A2A_WORLD_MAX)");
        if (o->payload && strcmp(o->payload, "real") != 0)
            usage_fail("--bench: real payloads only (it checks every element)");
        o->payload = "real";
    } else if (o->coll || o->root || o->imbalance != 1) {
        usage_fail("--coll/--root/--imbalance: benchmark flags (with --bench)");
    }
    if (!(c->link_bw > 0))
        usage_fail("--link-bw: the simulated network needs a bandwidth (> 0)");
    if (platform_parse(o->platform, pf, err) != 0)
        usage_fail(err);
    c->rank = 0;
    c->world = j->k;
    if (cli_common_finish(c, err) != 0)
        usage_fail(err);
    j->compute = c->compute;
    j->compute.base = c->backward_time;
    j->compute.seed = c->seed;
    j->kill_slot = j->kill_step = -1;
    if (o->kill_rank >= 0) {
        if (o->bench)
            usage_fail("--kill: not with --bench");
        if (o->kill_rank >= j->k)
            usage_fail(j->ps ? "--kill: RANK is not a worker of K" : "--kill: RANK is not a rank of K");
        if (o->kill_step >= c->steps)
            usage_fail("--kill: STEP is not below --steps");
        j->kill_slot = o->kill_rank;
        j->kill_step = o->kill_step;
    }
    job_sizes(o, c, j);
    j->bucket_bytes = o->bucket ? o->bucket : BUCKETS_DEFAULT_BYTES;
    j->no_overlap = j->ps || o->no_overlap;
    if (!j->ps && o->bucket && !j->real)
        usage_fail("--bucket-size: the ring's buckets need --payload real (sizes: one all-reduce)");
    nhosts = job_servers(o, j, placement);
    if (!o->hosts)
        o->hosts = nhosts;
    if (pf->kind != PLATFORM_FILE && nhosts > o->hosts) {
        snprintf(err, sizeof err, "K %d%s is more than the platform's %d hosts", j->k,
                 j->ps ? " + servers" : "", o->hosts);
        usage_fail(err);
    }
    return nhosts;
}

/* sg_trial: SimGrid aborts the process (an uncaught C++ exception, exit
 * 134 and a backtrace) on a --cfg key it does not know, a value it cannot
 * read, or a platform file it cannot parse. What the user gave (--sg-cfg,
 * --platform file:PATH) is therefore first tried in a child: SimGrid
 * initialised with these arguments and the platform loaded, nothing run.
 * A child that does not exit 0 ends the run here with one line, exit 64,
 * naming SimGrid's own reason where it printed one. */
static void sg_trial(int argc, char **argv, const char *xml)
{
    int fd[2], st = 0;
    char buf[8192], why[200] = "";
    size_t len = 0;
    ssize_t got;
    pid_t pid;

    if (pipe(fd) != 0)
        return;                             /* cannot try: the real load decides */
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        dup2(fd[1], STDERR_FILENO);
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        simgrid_init(&argc, argv);
        simgrid_load_platform(xml);
        _exit(0);
    }
    close(fd[1]);
    while ((got = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0 || (got < 0 && errno == EINTR))
        if (got > 0 && (len += (size_t)got) == sizeof buf - 1)
            len = 0;                        /* keep reading; only the start matters */
    buf[len] = '\0';
    close(fd[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return;
    /* SimGrid's reason: its CRITICAL line, or the exception's what(). */
    const char *r = strstr(buf, "CRITICAL] ");
    r = r ? r + 10 : strstr(buf, "what():  ");
    if (r && r == strstr(buf, "what():  "))
        r += 9;
    if (r)
        snprintf(why, sizeof why, "%.*s", (int)strcspn(r, "\n"), r);
    char line[ERR_LEN + 256];
    snprintf(line, sizeof line, "SimGrid refused %s%s%s",
             g_opts->n_cfg ? "--sg-cfg" : "the platform file",
             why[0] ? ": " : " (it gave no reason)", why);
    usage_fail(line);
}

/* load_platform: the platform file (--platform file:PATH, or written to
 * xml: --platform-out or a temporary one, *tmp_xml), then SimGrid with the
 * network model of the header and --sg-cfg. 1 when the file cannot be
 * written (one line on stderr), else 0. */
static int load_platform(char *argv0, const struct opts *o, const struct cli_common *c,
                         const struct platform *pf, const struct sim_job *j, int nhosts,
                         char *xml, size_t xml_len, int *tmp_xml)
{
    static char arg_buf[SIM_MAX_CFG + 8][160];
    static char *sg_argv[SIM_MAX_CFG + 10];
    char err[ERR_LEN];
    int sg_argc = 0;

    if (pf->kind == PLATFORM_FILE) {
        snprintf(xml, xml_len, "%s", pf->file);
        if (access(xml, R_OK) != 0)
            usage_fail("--platform file:PATH: cannot read PATH");
    } else {
        if (o->platform_out) {
            snprintf(xml, xml_len, "%s", o->platform_out);
        } else {
            snprintf(xml, xml_len, "%s/psring_sim.%d.xml", getenv("TMPDIR") ? getenv("TMPDIR")
                     : "/tmp", (int)getpid());
            *tmp_xml = 1;
        }
        int rc = platform_write(pf, o->hosts, c->link_bw, c->link_latency, xml, err);
        if (rc == ERR_USAGE)
            usage_fail(err);
        if (rc != 0) {
            fprintf(stderr, PROG ": %s\n", err);
            return 1;
        }
    }
    sg_argv[sg_argc++] = argv0;
    {
        const char *cfgs[] = {
            "network/model:CM02", "network/latency-factor:1", "network/bandwidth-factor:1",
            "network/crosstraffic:0", "network/TCP-gamma:0", "network/optim:Full",
            "contexts/stack-size:256",
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
            "contexts/factory:thread",
#endif
        };
        int nc = (int)(sizeof cfgs / sizeof cfgs[0]);

        for (int i = 0; i < nc + o->n_cfg; i++) {
            snprintf(arg_buf[i], sizeof arg_buf[i], "--cfg=%s", i < nc ? cfgs[i] : o->sg_cfg[i - nc]);
            sg_argv[sg_argc++] = arg_buf[i];
        }
        snprintf(arg_buf[nc + o->n_cfg], sizeof arg_buf[0], "--log=root.thres:warning");
        sg_argv[sg_argc++] = arg_buf[nc + o->n_cfg];
        snprintf(arg_buf[nc + o->n_cfg + 1], sizeof arg_buf[0], "--log=xbt_cfg.thres:warning");
        sg_argv[sg_argc++] = arg_buf[nc + o->n_cfg + 1];
    }
    sg_argv[sg_argc] = NULL;
    log_init(PROG, 0);
    if (o->n_cfg > 0 || pf->kind == PLATFORM_FILE)
        sg_trial(sg_argc, sg_argv, xml);
    simgrid_init(&sg_argc, sg_argv);
    simgrid_load_platform(xml);
    if ((int)sg_host_count() < nhosts) {
        snprintf(err, sizeof err, "K %d%s is more than the platform's %d hosts", j->k,
                 j->ps ? " + servers" : "", (int)sg_host_count());
        usage_fail(err);
    }
    return 0;
}

/* start_actors: one actor per slot (ring ranks, PS workers, then the
 * servers) on its host, each with its record's fixed columns. */
static void start_actors(const struct opts *o, const struct cli_common *c,
                         const struct platform *pf, const struct sim_job *j,
                         struct sim_slot *slots, int nslots)
{
    sg_host_t *hl = sg_host_list();

    for (int i = 0; i < nslots; i++) {
        struct sim_slot *sl = &slots[i];
        int server = i >= j->k;
        char name[32];
        sg_host_t h;

        sl->job = j;
        sl->rank = server ? i - j->k : i;
        sl->slot = i;
        sl->host = server ? j->srv[sl->rank].host : i;
        metrics_record_init(&sl->rec, (size_t)(c->steps - c->warmup));
        snprintf(sl->rec.system, METRICS_NAME_LEN, "%s", j->ps ? "ps" : "ring");
        snprintf(sl->rec.role, METRICS_NAME_LEN, "%s", server ? "server" : j->ps ? "worker"
                 : "rank");
        snprintf(sl->rec.algo, METRICS_NAME_LEN, "%s", j->ps ? "" : o->algo);
        snprintf(sl->rec.transport, METRICS_NAME_LEN, "sim");
        sl->rec.rank = sl->rank;
        sl->rec.world = j->k;
        sl->rec.bytes = j->bytes;
        sl->rec.link_bw = c->link_bw;
        sl->rec.link_latency = c->link_latency;
        sl->rec.ncpu = 1;
        if (pf->kind == PLATFORM_FILE) {
            h = hl[sl->host];
        } else {
            snprintf(name, sizeof name, "h%d", sl->host);
            h = sg_host_by_name(name);
        }
        snprintf(name, sizeof name, "%s%d", server ? "server" : j->ps ? "worker" : "rank",
                 sl->rank);
        sg_actor_t a = sg_actor_init(name, h);
        sg_actor_set_data(a, sl);
        sg_actor_start(a, server ? sim_ps_server : j->ps ? sim_ps_worker : ring_actor, 0,
                       NULL);
    }
    free(hl);
}

/* verdict: one line, the first failure, or with --kill the first that
 * names the rank killed (as the real ring's neighbour and the real server
 * do). 1 when it printed one, else 0. */
static int verdict(const struct opts *o, const struct sim_job *j, const struct sim_slot *slots,
                   int nslots)
{
    int first_bad = -1;

    for (int i = 0; i < nslots; i++) {
        char needle[48];

        if (slots[i].rc == 0)
            continue;
        snprintf(needle, sizeof needle, "lost %s %d (", j->ps ? "worker" : "rank", o->kill_rank);
        if (first_bad < 0 || (o->kill_rank >= 0 && names(slots[i].err, needle) >
                              names(slots[first_bad].err, needle)))
            first_bad = i;
    }
    if (first_bad >= 0) {
        fprintf(stderr, PROG ": %s %d: %s\n", slots[first_bad].rec.role, slots[first_bad].rank,
                slots[first_bad].err[0] ? slots[first_bad].err : err_str(slots[first_bad].rc));
        return 1;
    } else if (o->kill_rank >= 0) {
        fprintf(stderr, PROG ": --kill %d@%d: the others finished without it\n", o->kill_rank,
                o->kill_step);
        return 1;
    }
    return 0;
}

/* report: the slots' records (with --bench, the files bench.c wrote) merged
 * into the CSV row, --host-bytes, the row on stdout or --csv-out. Returns
 * the exit status, status unless an output fails. */
static int report(const struct opts *o, const struct sim_job *j, struct sim_slot *slots,
                  struct metrics_record *recs, int nslots, int nhosts, const char *placement,
                  int status)
{
    struct metrics_row row;
    char err[ERR_LEN];

    for (int i = 0; i < nslots; i++) {
        slots[i].rec.cpu_s = 0;         /* virtual time: the host never sets the pace */
        slots[i].rec.wall_s = 0;
        recs[i] = slots[i].rec;
    }
    if (o->bench) {
        /* the records bench.c wrote, one per rank, in place of the slots' */
        for (int i = 0; i < nslots; i++) {
            char path[4200];

            rec_path(path, sizeof path, i);
            if (status == 0) {
                metrics_record_free(&slots[i].rec);
                if (metrics_record_read(&slots[i].rec, path, err) != 0) {
                    fprintf(stderr, PROG ": %s\n", err);
                    status = 1;
                }
                slots[i].rec.cpu_s = 0;
                slots[i].rec.wall_s = 0;
                slots[i].rec.ncpu = 1;
                snprintf(slots[i].rec.transport, METRICS_NAME_LEN, "sim");
                recs[i] = slots[i].rec;
            }
            unlink(path);
        }
    }
    if (status == 0 && (metrics_merge(recs, (size_t)nslots, &row, err) != 0 ||
                        (j->ps && metrics_row_place(&row, placement, err) != 0))) {
        fprintf(stderr, PROG ": %s\n", err);
        status = 1;
    }
    if (status == 0 && o->host_bytes && host_bytes_write(o->host_bytes, slots, nslots, nhosts,
                                                         err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        status = 1;
    }
    if (status == 0 && (!o->bench || o->csv_out)) {
        FILE *f = stdout;
        int header = 1;

        if (o->csv_out) {
            header = is_new(o->csv_out);
            f = fopen(o->csv_out, "a");
            if (!f) {
                fprintf(stderr, PROG ": --csv-out %s: %s\n", o->csv_out, strerror(errno));
                status = 1;
            }
        }
        if (f) {
            if (header)
                metrics_csv_header(f);
            metrics_row_write(f, &row);
            if (f != stdout)
                fclose(f);
        }
    }
    return status;
}

int main(int argc, char **argv)
{
    struct opts o = { .algo = "ring", .platform = "star", .payload = NULL, .servers = -1,
                   .iters = 5, .warmup_iters = 1, .imbalance = 1, .kill_rank = -1,
                   .kill_step = -1 };
    struct cli_common c;
    struct platform pf;
    struct sim_job j;
    struct sim_slot *slots;
    struct metrics_record *recs;
    char xml[4096];
    int nslots, nhosts, status, tmp_xml = 0;
    unsigned char *board;
    const char *placement = "separate";

    g_opts = &o;
    nhosts = sim_job_from_flags(argc, argv, &o, &c, &pf, &j, &placement);
    nslots = j.k + j.servers;
    if (load_platform(argv[0], &o, &c, &pf, &j, nhosts, xml, sizeof xml, &tmp_xml) != 0)
        return 1;

    slots = calloc((size_t)nslots, sizeof *slots);
    recs = calloc((size_t)nslots, sizeof *recs);
    board = calloc((size_t)nslots, 1);
    if (!slots || !recs || !board)
        usage_fail("out of memory");
    xport_sim_faults_init(board, nslots, c.timeout);
    start_actors(&o, &c, &pf, &j, slots, nslots);
    if (o.bench) {
        printf("# psring_sim --bench: the network is SIMULATED (SimGrid, --platform %s); the "
               "benchmark is ring_worker's (bench.c), whose lines below say \"EMULATED\" for "
               "the platform's link and \"tcp\" for the code path; times are simulated\n",
               o.platform);
        fflush(stdout);
    }
    simgrid_run();
    status = verdict(&o, &j, slots, nslots);
    status = report(&o, &j, slots, recs, nslots, nhosts, placement, status);
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
