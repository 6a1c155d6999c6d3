/* flags.c -- bin/psring_sim's command line (flags.h): its own flags'
 * table, their parsers, and the cross-checks that turn them and the common
 * flags into the job (sim.h): the mode and K, the data mode with its
 * proxy vector (job_sizes), the PS placement (job_servers), --bench's
 * collective, --kill.
 */
#include "flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/infile.h"
#include "base/outfile.h"
#include "coll/a2a.h"
#include "coll/coll.h"
#include "coll/hring.h"
#include "coll/ring.h"
#include "coll/train.h"
#include "measure/model.h"
#include "train/buckets.h"
#include "train/weights.h"
#include "train/workload.h"

#define SIM_REAL_MAX (256ull << 20)     /* K * n bytes: above, --payload sizes */
#define SIM_PROXY_PER_RANK 64           /* sizes: proxy elements per rank */

void sim_usage_fail(const char *why)
{
    cli_usage_fail(SIM_PROG, why);
}

static int parse_kill(const char *value, void *dst, char *err)
{
    struct sim_opts *o = dst;
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
    struct sim_opts *o = dst;

    if (o->n_cfg >= SIM_MAX_CFG || !strchr(value, ':')) {
        err_say(err, "KEY:VALUE (at most %d)", SIM_MAX_CFG);
        return ERR_USAGE;
    }
    o->sg_cfg[o->n_cfg++] = value;
    return 0;
}

static const struct cli_opt *own_opts(struct sim_opts *o)
{
    static struct cli_opt t[24];
    const struct cli_opt v[] = {
        { "algo", CLI_STRING, &o->algo, "ring|rd|rabenseifner|tree|dbtree|swing-lat|swing-bw|hring",
          "ring: the all-reduce (default ring)", 0, 0, NULL },
        { "ranks-per-host", CLI_INT, &o->group, "G",
          "--algo hring: ranks per host, dividing K (default: a rack of racks:R:U, a leaf of "
          "fat-tree)", 1, 65536, NULL },
        { "bytes", CLI_SIZE, &o->bytes, "SIZE",
          "message size n (default: the workload's n * element size)", 1, 0, NULL },
        { "platform", CLI_STRING, &o->platform, "SPEC",
          "star | fat-tree:OVERSUB | racks:R:UPLINK | torus:X:Y | file:PATH (default star)",
          0, 0, NULL },
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
        { "json-out", CLI_STRING, &o->json_out, "FILE",
          "append a manifest line and the row to FILE as JSON Lines", 0, 0, NULL },
        { "platform-out", CLI_STRING, &o->platform_out, "FILE",
          "keep the generated platform XML in FILE", 0, 0, NULL },
        { "compress", CLI_STRING, &o->compress, "none|fp16|bf16|powersgd:R",
          "ring, --payload real: the all-reduce on a 16-bit wire (ring_worker's)", 0, 0, NULL },
        { "bench", CLI_BOOL, &o->bench, NULL,
          "ring: ring_worker's benchmark of one size (--bytes) instead of training", 0, 0, NULL },
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

/* job_sizes: n in bytes (--bytes or the workload's), the data mode
 * (--payload) and, for the ring with sizes only, the proxy vector. */
static void job_sizes(struct sim_opts *o, struct cli_common *c, struct sim_job *j)
{
    char err[ERR_LEN];
    size_t es = dtype_size(c->dtype);

    if (o->bytes) {
        if (o->bytes % es != 0)
            sim_usage_fail("--bytes: not a whole number of elements of the dtype");
        c->workload = WORKLOAD_SYNTHETIC;
        c->params = o->bytes / es;
    }
    j->c = c;
    if (!o->bytes) {
        struct workload_cfg wc;
        struct workload w;

        cli_workload_cfg(c, &wc);
        if (workload_create(&w, &wc) != 0)
            sim_usage_fail("--workload: cannot build it with these sizes (--params, --batch)");
        o->bytes = (uint64_t)w.n * es;
        workload_destroy(&w);
    }
    j->bytes = o->bytes;
    if (!o->payload)
        j->real = (double)j->k * (double)j->bytes <= (double)SIM_REAL_MAX;
    else if (strcmp(o->payload, "real") == 0 || strcmp(o->payload, "sizes") == 0)
        j->real = strcmp(o->payload, "real") == 0;
    else
        sim_usage_fail("--payload: real or sizes");
    if (j->real && (double)j->k * (double)j->bytes > 4.0 * (double)SIM_REAL_MAX)
        sim_usage_fail("--payload real: K * n above 1 GiB; use --payload sizes");
    if (j->real && !j->ps && train_check(c, (uint64_t)c->batch, err) != 0)
        sim_usage_fail(err);
    /* The trees cut their segments from the vector they are given: a proxy
     * of K * 64 elements would be one segment, an unpipelined tree. */
    if (!j->real && (j->algo == COLL_TREE || j->algo == COLL_DBTREE))
        sim_usage_fail("--payload sizes: the trees (--algo tree|dbtree) cut 128 KiB segments "
                       "from the real vector; use --payload real (K * n up to 1 GiB)");
    if (!j->real && !j->ps) {
        size_t n = (size_t)(j->bytes / es);

        j->proxy_n = n < (size_t)j->k * SIM_PROXY_PER_RANK ? n : (size_t)j->k * SIM_PROXY_PER_RANK;
        j->scale = (double)n / (double)j->proxy_n;
        j->proxy = calloc(j->proxy_n, es);
        if (!j->proxy)
            sim_usage_fail("out of memory for the proxy vector");
    }
}

/* job_servers: the PS placement (the header's PS PLACEMENTS): the server
 * actors' shards and hosts, "colocated" in *placement when a shard sits
 * on a worker's host. Returns the hosts the job needs. */
static int job_servers(const struct sim_opts *o, struct sim_job *j, const char **placement)
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
        sim_usage_fail("out of memory for the servers");
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
        sim_usage_fail("--bytes: fewer elements than servers");
    return j->k + placed_extra;
}

/* platform_hosts: --hosts (default: the job's nhosts; a torus: X*Y, which
 * --hosts may only repeat), and the job fits in them. */
static void platform_hosts(struct sim_opts *o, const struct platform *pf,
                           const struct sim_job *j, int nhosts)
{
    char err[ERR_LEN];

    if (pf->kind == PLATFORM_TORUS && o->hosts && o->hosts != pf->tx * pf->ty)
        sim_usage_fail("--hosts: a torus:X:Y platform has X*Y hosts");
    if (pf->kind == PLATFORM_TORUS)
        o->hosts = pf->tx * pf->ty;
    if (!o->hosts)
        o->hosts = nhosts;
    if (pf->kind != PLATFORM_FILE && nhosts > o->hosts) {
        snprintf(err, sizeof err, "K %d%s is more than the platform's %d hosts", j->k,
                 j->ps ? " + servers" : "", o->hosts);
        sim_usage_fail(err);
    }
}

/* job_group: --algo hring's G (common/coll/hring.h, GROUPS): --ranks-per-host,
 * else the platform's groups: on racks:R:U a rack (the hosts are dealt out
 * in order, ceil(hosts / R) a rack, and ring rank r runs on host r), on
 * fat-tree a leaf (PLATFORM_LEAF hosts); none on star or file:. G must
 * divide K (no rule for a partial rack): exit 64 otherwise. */
static void job_group(const struct sim_opts *o, const struct platform *pf, struct sim_job *j)
{
    const char *from = "--ranks-per-host";
    char err[ERR_LEN], why[ERR_LEN];

    if (j->algo != COLL_HRING) {
        if (o->group)
            sim_usage_fail("--ranks-per-host: the hierarchical ring's (--algo hring)");
        return;
    }
    j->group = o->group;
    if (!j->group && pf->kind == PLATFORM_RACKS && pf->racks > 0) {
        j->group = (o->hosts + pf->racks - 1) / pf->racks;
        from = "the platform's racks";
    } else if (!j->group && pf->kind == PLATFORM_FAT_TREE) {
        j->group = PLATFORM_LEAF;
        from = "the platform's leaves";
    }
    if (j->group > j->k)
        j->group = j->k;            /* the ranks all on one rack or leaf */
    if (!j->group)
        sim_usage_fail("--algo hring: needs --ranks-per-host G on a star or file: platform "
                       "(racks:R:U groups by rack, fat-tree by leaf)");
    if (hring_check(j->k, j->group, why) != 0) {
        snprintf(err, sizeof err, "%.180s (G from %s)", why, from);
        sim_usage_fail(err);
    }
}

int sim_flags_parse(int argc, char **argv, struct sim_opts *o, struct cli_common *c,
                    struct platform *pf, struct sim_job *j, const char **placement)
{
    static const char *synopsis = "ps|ring K [options] [common flags]";
    char err[ERR_LEN];
    long long k;
    int nhosts;

    *o = (struct sim_opts){ .algo = "ring", .platform = "star", .payload = NULL, .servers = -1,
                            .iters = 5, .warmup_iters = 1, .kill_rank = -1,
                            .kill_step = -1 };
    bench_flags_init(&o->bf);
    cli_common_defaults(c);
    const struct cli_opt *tables[] = { own_opts(o), bench_flags_opts(&o->bf), cli_common_opts(c),
                                       NULL };
    /* Flags before the mode: --help, --version, or a bad flag named. */
    if (argc >= 2 && argv[1][0] == '-')
        cli_main_parse(SIM_PROG, synopsis, argc, argv, tables);
    if (argc < 3)
        sim_usage_fail("expected ps|ring and K");
    if (strcmp(argv[1], "ps") != 0 && strcmp(argv[1], "ring") != 0)
        sim_usage_fail("mode is not ps or ring");
    if (cli_parse_ll(argv[2], 1, 65536, &k, err) != 0)
        sim_usage_fail("K is not a worker count 1..65536");
    argv[2] = argv[0];
    cli_main_parse(SIM_PROG, synopsis, argc - 2, argv + 2, tables);
    memset(j, 0, sizeof *j);
    j->ps = strcmp(argv[1], "ps") == 0;
    j->k = (int)k;
    if (!j->ps && o->servers >= 0)
        sim_usage_fail("--servers: the ring has no servers");
    if (!j->ps && o->colocated)
        sim_usage_fail("--colocated-servers: the ring has no servers");
    if (j->ps && !o->colocated && o->servers == 0)
        sim_usage_fail("--servers: 1..256 (0..256 extra servers with --colocated-servers)");
    j->algo = coll_algo_parse(o->algo);
    if (j->algo < 0 || (j->algo != COLL_RING && j->ps)) {
        char q[CLI_VALUE_BUF];
        snprintf(err, ERR_LEN, "--algo %s: ring, rd, rabenseifner, tree, dbtree, swing-lat, "
                 "swing-bw or hring, in ring mode only", cli_value(o->algo, q));
        sim_usage_fail(err);
    }
    if (j->k < 2 && !j->ps)
        sim_usage_fail("K: the simulated ring needs K >= 2");
    if (o->bench && j->ps)
        sim_usage_fail("--bench: the ring's (psring_sim ring K --bench)");
    /* --root and --imbalance count as given when not their defaults. */
    o->bf.root_given = o->bf.root != 0;
    o->bf.imbalance_given = o->bf.imbalance != 1;
    int op = bench_flags_check(&o->bf, o->bench, j->k,
                               j->algo != COLL_RING ? "the ring (--algo ring)" : NULL,
                               A2A_WORLD_MAX, err);
    if (op < 0)
        sim_usage_fail(err);
    if (o->bench) {
        j->bench = (struct sim_bench){ 1, op, o->iters, o->warmup_iters, o->bf.root,
                                       o->bf.imbalance };
        if (o->payload && strcmp(o->payload, "real") != 0)
            sim_usage_fail("--bench: real payloads only (it checks every element)");
        o->payload = "real";
    }
    if (!(c->link_bw > 0))
        sim_usage_fail("--link-bw: the simulated network needs a bandwidth (> 0)");
    if (platform_parse(o->platform, pf, err) != 0)
        sim_usage_fail(err);
    c->rank = 0;
    c->world = j->k;
    if (cli_common_finish(c, err) != 0)
        sim_usage_fail(err);
    if (c->json)        /* the common flag; the simulator writes one row, not records */
        sim_usage_fail("--json: the simulator writes its row as JSON with --json-out FILE");
    /* The outputs are tried now, the platform file is checked for its type
     * (outfile.h, infile.h): refused before the simulation, never waited on. */
    if ((o->host_bytes && outfile_check("--host-bytes", o->host_bytes, err) != 0) ||
        (o->csv_out && outfile_check("--csv-out", o->csv_out, err) != 0) ||
        (o->json_out && outfile_check("--json-out", o->json_out, err) != 0) ||
        (o->platform_out && outfile_check("--platform-out", o->platform_out, err) != 0) ||
        (pf->kind == PLATFORM_FILE && infile_check("--platform", pf->file, err) != 0))
        sim_usage_fail(err);
    /* cli_common_finish tried PATH.0; every simulated rank writes its own. */
    for (int r = 1; c->weights_out && r < j->k; r++)
        if (weights_check(c->weights_out, r, err) != 0)
            sim_usage_fail(err);
    j->compute = c->compute;
    j->compute.base = c->backward_time;
    j->compute.seed = c->seed;
    j->kill_slot = j->kill_step = -1;
    if (o->kill_rank >= 0) {
        if (o->bench)
            sim_usage_fail("--kill: not with --bench");
        if (o->kill_rank >= j->k)
            sim_usage_fail(j->ps ? "--kill: RANK is not a worker of K" : "--kill: RANK is not a rank of K");
        if (o->kill_step >= c->steps)
            sim_usage_fail("--kill: STEP is not below --steps");
        j->kill_slot = o->kill_rank;
        j->kill_step = o->kill_step;
    }
    job_sizes(o, c, j);
    j->bucket_bytes = o->bucket ? o->bucket : BUCKETS_DEFAULT_BYTES;
    j->no_overlap = j->ps || o->no_overlap;
    if (!j->ps && o->bucket && !j->real)
        sim_usage_fail("--bucket-size: the ring's buckets need --payload real (sizes: one all-reduce)");
    if (o->compress && compress_parse(o->compress, &j->compress) != 0)
        sim_usage_fail("--compress: none, fp16 or bf16");
    if (j->compress && compress_get(j->compress)->frame)
        sim_usage_fail("--compress: topk:F and sign are not simulated; they run on bin/ring_worker "
                       "and bin/ps_worker (bin/model --compress gives their bytes)");
    if (COMPRESS_KIND(j->compress) == COMPRESS_POWERSGD && o->bench)
        sim_usage_fail("--compress powersgd: compresses training's gradient (the layers' shapes "
                       "come from the workload); it needs training, not --bench");
    if (j->compress && (j->ps || !j->real))
        sim_usage_fail("--compress: simulated on the ring with real payloads only (psring_sim ring "
                       "K --payload real); the PS's runs on bin/ps_worker");
    if (j->compress && j->algo != COLL_RING && j->algo != COLL_RD)
        sim_usage_fail("--compress: the ring and rd only (--algo ring|rd), as ring_worker's");
    nhosts = job_servers(o, j, placement);
    platform_hosts(o, pf, j, nhosts);
    job_group(o, pf, j);
    return nhosts;
}

