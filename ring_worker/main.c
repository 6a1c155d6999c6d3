/* main.c -- bin/ring_worker: one rank of a ring all-reduce over TCP, or
 * over GPUs (the CUDA-staged TCP ring, NCCL).
 *
 *     ring_worker --coordinator HOST:PORT [--device cpu|cuda] [--transport tcp|nccl]
 *                 [--algo ring|rd|rabenseifner|tree|dbtree|swing-lat|swing-bw|hring|student|auto]
 *                 [--ranks-per-host G] [--calibration FILE] [--compress none|fp16|bf16|topk:F]
 *                 [--bench ...] [common flags]
 *
 * Set-up, in order: flags (rank and world from the flags or the launcher's
 * environment, so `mpirun.openmpi -np K` and `srun -n K` work unchanged), the
 * emulated link, the workload (training), the GPU (--device cuda:
 * cudaSetDevice(local rank % devices); --transport nccl: rank 0 makes the
 * NCCL id), the data listener, the rendezvous (rendezvous.h; its blob
 * carries the NCCL id to every rank, or else rank 0's --algo, checked),
 * the neighbour connections (xport_tcp.h), or with --algo rd, rabenseifner,
 * tree, dbtree or hring the partner connections (xport_tcp.h with rd_plan,
 * rab_plan, tree_plan or hring_plan), or with NCCL the check that this host
 * has a GPU per local rank and the communicator; then training (train.h)
 * or the benchmark (bench.h), over the all-reduce coll.h picks. K = 1
 * opens no socket at all. A failure is one line on stderr naming the peer
 * or the step, and exit status 1 (64 for bad flags, and for more NCCL ranks
 * on a host than GPUs); a rank that fails on its own tells its neighbours
 * first (xport_abort; with NCCL it aborts its
 * communicator), so the ring ends everywhere.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/bench.h"
#include "coll/bench_flags.h"
#include "train/buckets.h"
#include "wire/auth.h"
#include "train/cli_common.h"
#include "base/clock.h"
#include "coll/coll.h"
#include "base/dtype.h"
#include "base/err.h"
#include "gpu.h"
#include "wire/link.h"
#include "base/log.h"
#include "train/losscurve.h"
#include "measure/metrics.h"
#include "train/mistake.h"
#include "wire/net.h"
#include "base/outfile.h"
#include "coll/rendezvous.h"
#include "auto.h"
#include "setup.h"
#include "train/trace.h"
#include "coll/train.h"
#include "train/workload.h"
#include "coll/xport.h"

#define PROG "ring_worker"

static const char synopsis[] =
    "--coordinator HOST:PORT [--device cpu|cuda] [--transport tcp|nccl]\n"
    "       [--algo ring|rd|rabenseifner|tree|dbtree|swing-lat|swing-bw|hring|student|auto]\n"
    "       [--ranks-per-host G] [--calibration FILE] [--compress none|fp16|bf16|powersgd:R|topk:F]\n"
    "       [--bench [-b 4K] [-e 64M] [-f 2] [-w 5] [-n 20] [--coll NAME] [--root R]\n"
    "       [--imbalance F]] [common flags]\n"
    "One rank of a ring all-reduce over TCP: rank 0 serves the rendezvous at the\n"
    "coordinator address (port 0: any free port, see --port-file); every rank then\n"
    "connects to its right neighbour and trains (default) or benchmarks (--bench).\n"
    "--device cuda keeps weights and gradients on the GPU and stages the ring's\n"
    "chunks through pinned memory; --transport nccl all-reduces with NCCL instead.\n"
    "--algo rd all-reduces by recursive doubling (log2 K exchanges of the whole\n"
    "vector: fewer latencies, more bytes) instead of the ring, on the host over TCP;\n"
    "--algo rabenseifner by recursive halving then doubling (2 log2 K exchanges of\n"
    "the ring's bytes); --algo tree by a pipelined binary tree (reduce up, broadcast\n"
    "down, 128 KiB segments), --algo dbtree by NCCL's double binary tree; --algo\n"
    "swing-lat|swing-bw by Swing (rd's or Rabenseifner's steps, peers 1, -1, 3, -5 apart);\n"
    "--algo hring by a hierarchical ring of G ranks per host (--ranks-per-host, else\n"
    "LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE or SLURM_NTASKS_PER_NODE; dividing K):\n"
    "a ring inside each host, across the hosts, inside again; --algo student by the\n"
    "ring written in students/ring_student.c (docs/lab.md, S).\n"
    "--compress fp16|bf16 sends the all-reduce's values as 16-bit floats (half an f32\n"
    "run's payload), rounded at every hop and summed in --dtype (CPU ring and rd);\n"
    "--compress topk:F all-gathers each rank's F n largest values (CPU ring);\n"
    "--compress powersgd:R all-reduces rank-R factors P and Q of each weight matrix\n"
    "(two rounds, error feedback; powersgd:R:noef without) when training.\n"
    "--bench --coll benchmarks another collective (nccl-tests' names): all_reduce,\n"
    "reduce_scatter, all_gather, broadcast, reduce (--root R), alltoall (--imbalance F:\n"
    "rank --root gets F times the average share from every rank, as MoE routing skews).\n"
    "The coordinator may also come from MASTER_ADDR/MASTER_PORT, rank and world from\n"
    "RANK/WORLD_SIZE, OMPI_COMM_WORLD_*, PMI_* or SLURM_* (mpirun, srun, torchrun).";

struct opts {
    const char *coordinator, *port_file, *advertise, *listen, *device, *transport, *algo;
    int bench;
    const char *loss_out;       /* --loss-out FILE: rank 0 writes the loss per step */
    int mistake;                /* --mistake (mistake.h) */
    uint64_t bucket_bytes;      /* --bucket-size (buckets.h) */
    int no_overlap;             /* --no-overlap */
    const char *trace;          /* --trace FILE */
    uint64_t minbytes, maxbytes, piece;
    int stepfactor, warmup_iters, iters;
    struct bench_flags bf;      /* --coll, --root, --imbalance (bench_flags.h) */
    int op;                     /* the collective --coll names (enum coll_op) */
    int zero;                   /* --zero STAGE (train.h, ZeRO) */
    const char *compress_arg;   /* --compress */
    int compress;               /* enum compress_kind (base/compress.h) */
    int sync_every;             /* --sync-every H (train.h, LOCAL SGD) */
    int group;                  /* --ranks-per-host G (--algo hring; hring.h) */
    const char *calibration;    /* --calibration FILE (--algo auto, auto.h) */
};

/* The nccl-tests spellings: -b 4K, -b4K, and so on, become --minbytes 4K. */
static const struct { char c; const char *name; } shorts[] = {
    { 'b', "--minbytes" }, { 'e', "--maxbytes" }, { 'f', "--stepfactor" },
    { 'w', "--warmup-iters" }, { 'n', "--iters" },
};

/* expand_shorts: a copy of argv with the short bench flags spelled long.
 * The copy (and any string it holds) lives until exit. */
static char **expand_shorts(int argc, char **argv, int *out_argc)
{
    char **v = calloc((size_t)argc * 2 + 1, sizeof *v);
    int n = 0;

    if (!v)
        return NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        size_t s = 0, ns = sizeof shorts / sizeof shorts[0];
        if (i > 0 && a[0] == '-' && a[1] != '-' && a[1] != '\0') {
            for (s = 0; s < ns && shorts[s].c != a[1]; s++)
                ;
        } else {
            s = ns;
        }
        if (s == ns) {
            v[n++] = argv[i];
            continue;
        }
        v[n++] = (char *)(uintptr_t)shorts[s].name;
        if (a[2] != '\0')
            v[n++] = (char *)(uintptr_t)(a + 2);       /* -b4K */
    }
    *out_argc = n;
    return v;
}

/* has_flag: was --name given (the parser cannot tell a default from it)? */
static int has_flag(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
            return 1;
    return 0;
}

static void usage_fail(const char *msg)
{
    cli_usage_fail(PROG, msg);
}

/* usage_fail_value: "FLAG VALUE: why" as THE USAGE LINE (cli.h). */
static void usage_fail_value(const char *flag, const char *value, const char *why)
{
    char q[CLI_VALUE_BUF], msg[ERR_LEN];

    snprintf(msg, sizeof msg, "%s %s: %s", flag, cli_value(value, q), why);
    cli_usage_fail(PROG, msg);
}

static int env_set(const char *var)
{
    const char *v = getenv(var);
    return v && *v;
}

static int is_wildcard(const char *h)
{
    return strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0 || h[0] == '\0';
}

/* pick_kind: the all-reduce back end from --device and --transport
 * (coll.h), refusing the combinations that make no sense. */
static int pick_kind(const struct opts *o, const struct cli_common *c, int argc, char **argv)
{
    int cuda;

    if (strcmp(o->device, "cpu") != 0 && strcmp(o->device, "cuda") != 0)
        usage_fail_value("--device", o->device, "not cpu or cuda");
    cuda = strcmp(o->device, "cuda") == 0;
    if (strcmp(o->transport, "tcp") == 0)
        return cuda ? COLL_TCP_CUDA : COLL_TCP;
    if (strcmp(o->transport, "nccl") != 0)
        usage_fail_value("--transport", o->transport, "not tcp or nccl");
    if (!cuda && has_flag(argc, argv, "--device"))
        usage_fail("--transport nccl: NCCL runs on the GPU; drop --device cpu");
    if (c->link_bw > 0 || c->link_latency > 0)
        usage_fail("--link-bw/--link-latency: the emulated link paces psring's TCP ring; "
                   "NCCL moves its bytes itself (use --transport tcp)");
    return COLL_NCCL;
}

/* pick_algo: --algo, the ring (default), recursive doubling,
 * Rabenseifner, the tree, the double tree or the hierarchical ring; all but
 * the ring run on the host over TCP only. */
static int pick_algo(const struct opts *o, int kind, int workload)
{
    int algo = coll_algo_parse(o->algo);

    if (strcmp(o->algo, "auto") == 0) {         /* the selector (auto.h) */
        if (kind != COLL_TCP || (o->compress_arg && strcmp(o->compress_arg, "none") != 0))
            usage_fail("--algo auto: chooses among the host's algorithms over TCP, "
                       "uncompressed (--device cpu --transport tcp, no --compress)");
        return ALGO_AUTO;
    }
    if (o->calibration)
        usage_fail("--calibration: is --algo auto's");
    if (algo == COLL_RING)
        return COLL_RING;
    if (algo < 0)
        usage_fail_value("--algo", o->algo, "not ring, rd, rabenseifner, tree, dbtree, swing-lat, "
                         "swing-bw, hring, student or auto");
    if (kind != COLL_TCP) {
        char msg[ERR_LEN];
        snprintf(msg, sizeof msg, "--algo %s: %sruns on the host over TCP (--device cpu "
                 "--transport tcp)", coll_algo_str(algo),
                 algo == COLL_RD ? "recursive doubling " : "");
        usage_fail(msg);
    }
    /* swing-lat's ranks sum in orders of their own (swing.h, BITS): they
     * train bit-identical only where every order gives the same bits. */
    if (algo == COLL_SWING_LAT && !o->bench && workload != WORKLOAD_SYNTHETIC)
        usage_fail("--algo swing-lat: its ranks sum in different orders and would end with "
                   "different weights; it trains --workload synthetic (exact sums) or "
                   "benchmarks (--bench); train with --algo swing-bw");
    return algo;
}

/* pick_group: --algo hring's G, ranks per host (hring.h, GROUPS): from
 * --ranks-per-host, else the launcher's count of local ranks; it must
 * divide K. --ranks-per-host without --algo hring is refused. */
static void pick_group(struct opts *o, const struct cli_common *c, int algo)
{
    static const char *const vars[] = {
        "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE",
    };
    const char *from = "--ranks-per-host";
    char err[ERR_LEN], why[ERR_LEN];

    if (algo != COLL_HRING) {
        if (o->group)
            usage_fail("--ranks-per-host: the hierarchical ring's (--algo hring)");
        return;
    }
    for (size_t i = 0; !o->group && i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        long long g;
        if (v && *v && cli_parse_ll(v, 1, 65536, &g, why) == 0) {
            o->group = (int)g;
            from = vars[i];
        }
    }
    if (!o->group)
        usage_fail("--algo hring: needs --ranks-per-host G (or LOCAL_WORLD_SIZE, "
                   "OMPI_COMM_WORLD_LOCAL_SIZE or SLURM_NTASKS_PER_NODE from the launcher)");
    if (hring_check(c->world, o->group, why) != 0) {
        snprintf(err, sizeof err, "%.180s (G from %s)", why, from);
        usage_fail(err);
    }
}

/* pick_compress: --compress, on the host's TCP ring and rd, for the
 * all-reduce (training without ZeRO, or --bench --coll all_reduce). */
static void pick_compress(struct opts *o, int kind, int algo)
{
    char why[ERR_LEN];

    if (!o->compress_arg)
        return;
    if (compress_parse(o->compress_arg, &o->compress) != 0)
        usage_fail_value("--compress", o->compress_arg, "not " COMPRESS_CHOICES);
    if (o->compress == COMPRESS_NONE)
        return;
    if (COMPRESS_KIND(o->compress) == COMPRESS_POWERSGD && (o->bench || o->sync_every > 1 ||
                                                            o->mistake != MISTAKE_NONE))
        usage_fail_value("--compress", o->compress_arg, o->bench
                         ? "compresses training's gradient (the layers' shapes come from the "
                         "workload); it needs training, not --bench" : o->sync_every > 1
                         ? "compresses every step's gradient; it needs --sync-every 1"
                         : "runs on the plain step; it needs no --mistake");
    if (kind != COLL_TCP)
        usage_fail_value("--compress", o->compress_arg, "compresses psring's host ring and rd "
                         "only; it needs --device cpu --transport tcp");
    if (COMPRESS_KIND(o->compress) == COMPRESS_SIGN)
        usage_fail_value("--compress", o->compress_arg, "needs the parameter server (ps_worker, "
                         "ps_server): a sign frame's scale is its sender's, so it is summed "
                         "where it is decoded, not along a ring");
    if (COMPRESS_KIND(o->compress) == COMPRESS_TOPK && algo != COLL_RING)
        usage_fail_value("--compress", o->compress_arg, "needs --algo ring (an all-gather of "
                         "the K frames) or the parameter server: each rank's indices are its "
                         "own, so the frames cannot be summed hop by hop");
    if (algo != COLL_RING && algo != COLL_RD) {
        snprintf(why, sizeof why, "compresses the ring and rd only (--algo ring|rd), not %s",
                 coll_algo_str(algo));
        usage_fail_value("--compress", o->compress_arg, why);
    }
    if (o->zero || (o->bench && o->op != COLL_ALL_REDUCE)) {
        snprintf(why, sizeof why, "compresses the all-reduce only; it needs %s",
                 o->zero ? "training without --zero" : "--coll all_reduce");
        usage_fail_value("--compress", o->compress_arg, why);
    }
}

/* pick_coll: --coll, --root and --imbalance, which only the benchmark
 * takes (bench_flags.h); the collectives other than the all-reduce run on
 * the host ring (--algo ring --device cpu) or with NCCL (coll.h). */
static int pick_coll(struct opts *o, const struct cli_common *c, int kind, int algo, int argc,
                     char **argv)
{
    char err[ERR_LEN];
    int op;

    o->bf.root_given = has_flag(argc, argv, "--root");
    o->bf.imbalance_given = has_flag(argc, argv, "--imbalance");
    op = bench_flags_check(&o->bf, o->bench, c->world,
                           algo != COLL_RING || kind == COLL_TCP_CUDA
                               ? "the host ring (--algo ring --device cpu) or with NCCL "
                                 "(--transport nccl)" : NULL,
                           kind == COLL_TCP ? A2A_WORLD_MAX : 0, err);
    if (op < 0)
        usage_fail(err);
    return op;
}

/* check_sync_every: local SGD's combinations (train.h, LOCAL SGD). */
static void check_sync_every(const struct opts *o, int kind, int xargc, char **xargv)
{
    char v[32];
    const char *why = NULL;

    if (o->sync_every == 1)
        return;
    if (o->bench)
        why = "local SGD trains; --bench has no steps";
    else if (o->zero)
        why = "not with --zero (the sync averages whole weights, ZeRO shards them)";
    else if (o->mistake != MISTAKE_NONE)
        why = "not with --mistake (the mistakes live in the every-step all-reduce)";
    else if (kind != COLL_TCP)
        why = "local SGD runs on the CPU ring only (--device cpu --transport tcp)";
    else if (has_flag(xargc, xargv, "--bucket-size") || has_flag(xargc, xargv, "--no-overlap"))
        why = "the sync is one all-reduce of the weights: no buckets, no overlap";
    if (!why)
        return;
    snprintf(v, sizeof v, "%d", o->sync_every);
    usage_fail_value("--sync-every", v, why);
}

/* parse: the flags, with the refusals that need no peer; exits 64 on a
 * bad one. Returns the argv copy, which must live until exit. */
static char **parse(int argc, char **argv, struct opts *o, struct cli_common *c, int *kind,
                    int *algo)
{
    const struct cli_opt own[] = {
        { "coordinator", CLI_STRING, &o->coordinator, "HOST:PORT",
          "rank 0 serves the rendezvous here (port 0: any); others connect (default MASTER_ADDR:MASTER_PORT)",
          0, 0, NULL },
        { "port-file", CLI_STRING, &o->port_file, "FILE",
          "rank 0: write the coordinator's port to FILE (for port 0)", 0, 0, NULL },
        { "advertise", CLI_STRING, &o->advertise, "ADDR",
          "the address peers connect to (default: --listen, else 127.0.0.1)", 0, 0, NULL },
        { "listen", CLI_STRING, &o->listen, "ADDR",
          "bind the data port here (default: --advertise, else 127.0.0.1)", 0, 0, NULL },
        { "device", CLI_STRING, &o->device, "cpu|cuda",
          "where weights, gradients and the ring's sums live (default cpu; cuda: "
          "local rank % GPUs)", 0, 0, NULL },
        { "transport", CLI_STRING, &o->transport, "tcp|nccl",
          "psring's ring over TCP (default), or NCCL's all-reduce (implies --device cuda)",
          0, 0, NULL },
        { "algo", CLI_STRING, &o->algo, "ring|rd|rabenseifner|tree|dbtree|swing-lat|swing-bw|hring|student|auto",
          "the all-reduce: the ring (default), recursive doubling (rd: log2 K steps, "
          "for small messages), Rabenseifner (2 log2 K steps, the ring's bytes), a "
          "pipelined binary tree (tree), NCCL's double binary tree (dbtree), Swing "
          "(swing-lat: rd's steps, swing-bw: Rabenseifner's, peers 1, -1, 3, -5 apart), "
          "the hierarchical ring (hring: 2(G-1) + 2(K/G-1) steps, the ring's bytes), "
          "the student's ring (student: students/ring_student.c), or the model's choice "
          "for this K and n (auto: rank 0 chooses, the others follow)",
          0, 0, NULL },
        { "calibration", CLI_STRING, &o->calibration, "FILE",
          "--algo auto: a, bw and g from FILE; a missing FILE is written from the "
          "link's a and bw and a local reduction loop", 0, 0, NULL },
        { "ranks-per-host", CLI_INT, &o->group, "G",
          "--algo hring: ranks per host, consecutive ranks on one host, dividing K (default: "
          "LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE or SLURM_NTASKS_PER_NODE)",
          1, 65536, NULL },
        { "compress", CLI_STRING, &o->compress_arg, COMPRESS_METAVAR,
          "the all-reduce's wire format: fp16 or bf16 halve an f32 run's payload (rounded "
          "each hop, summed in --dtype; CPU ring and rd); powersgd:R all-reduces rank-R "
          "factors (ring, rd; training); topk:F all-gathers each rank's top F of |g| (ring); "
          "error feedback, :noef none", 0, 0, NULL },
        { "bench", CLI_BOOL, &o->bench, NULL,
          "benchmark the all-reduce over a size sweep instead of training", 0, 0, NULL },
        { "minbytes", CLI_SIZE, &o->minbytes, "SIZE", "-b: smallest size (default 4K)",
          1, 0, NULL },
        { "maxbytes", CLI_SIZE, &o->maxbytes, "SIZE", "-e: largest size (default 64M)",
          1, 0, NULL },
        { "stepfactor", CLI_INT, &o->stepfactor, "F", "-f: size multiplier (default 2)",
          2, 1 << 20, NULL },
        { "warmup-iters", CLI_INT, &o->warmup_iters, "N",
          "-w: untimed all-reduces per size (default 5)", 0, 1 << 20, NULL },
        { "iters", CLI_INT, &o->iters, "N", "-n: timed all-reduces per size (default 20)",
          1, 1 << 20, NULL },
        { "piece", CLI_SIZE, &o->piece, "SIZE",
          "bytes reduced between two receives (default 1M)", 8, 1LL << 30, NULL },
        { "loss-out", CLI_STRING, &o->loss_out, "FILE",
          "rank 0: write the global loss of every step to FILE at the end", 0, 0, NULL },
        { "mistake", CLI_CUSTOM, &o->mistake, MISTAKE_METAVAR, MISTAKE_HELP, 0, 0,
          mistake_parse },
        { "bucket-size", CLI_SIZE, &o->bucket_bytes, "SIZE",
          "gradient buckets of whole layers, last layer first (default 25MiB)", 1, 0, NULL },
        { "no-overlap", CLI_BOOL, &o->no_overlap, NULL,
          "all-reduce the buckets after the backward pass, not during it", 0, 0, NULL },
        { "trace", CLI_STRING, &o->trace, "FILE",
          "write each rank's timeline to FILE.RANK (Chrome trace-event JSON, Perfetto)",
          0, 0, NULL },
        { "zero", CLI_INT, &o->zero, "STAGE",
          "ZeRO 1: shard the optimizer, 2: + gradients, 3: + weights", 0, 0,
          NULL },
        { "sync-every", CLI_INT, &o->sync_every, "H",
          "local SGD: H local steps, then the weights averaged (default 1: every step)",
          1, 1 << 20, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    bench_flags_init(&o->bf);
    const struct cli_opt *tables[4] = { own, bench_flags_opts(&o->bf), cli_common_opts(c), NULL };
    char err[ERR_LEN];
    int xargc = 0;
    char **xargv = expand_shorts(argc, argv, &xargc);

    if (!xargv)
        exit(1);
    cli_main_parse(PROG, synopsis, xargc, xargv, tables);
    if (o->bench && !has_flag(xargc, xargv, "--dtype"))
        c->dtype = DTYPE_F32;                   /* nccl-tests' default type */
    if (cli_common_finish(c, err) != 0)
        usage_fail(err);
    *kind = pick_kind(o, c, xargc, xargv);
    *algo = pick_algo(o, *kind, c->workload);
    pick_group(o, c, *algo);
    o->op = pick_coll(o, c, *kind, *algo, xargc, xargv);
    pick_compress(o, *kind, *algo);
    /* Every output path is tried now, so a bad one ends the run here. */
    if (o->loss_out && c->rank == 0 && !o->bench && losscurve_probe(o->loss_out, err) != 0)
        usage_fail(err);
    if (o->trace && trace_check(o->trace, c->rank, err) != 0)
        usage_fail(err);
    if (o->port_file && c->rank == 0 && outfile_check("--port-file", o->port_file, err) != 0)
        usage_fail(err);
    if (*kind != COLL_TCP && o->mistake != MISTAKE_NONE && o->mistake != MISTAKE_SUM_NOT_MEAN) {
        snprintf(err, sizeof err, "--mistake %s: not made on the GPU (only sum-not-mean "
                 "is); use --device cpu --transport tcp", mistake_name(o->mistake));
        usage_fail(err);
    }
    if (*kind != COLL_TCP && (has_flag(xargc, xargv, "--bucket-size") ||
                              has_flag(xargc, xargv, "--no-overlap") || o->trace))
        usage_fail("--bucket-size/--no-overlap/--trace: buckets and overlap run on the CPU "
                   "ring only (--device cpu --transport tcp)");
    if (o->zero && *kind == COLL_TCP && !o->bench && *algo != COLL_RING) {
        snprintf(err, ERR_LEN, "--zero: trains on the CPU ring only (reduce-scatter + "
                 "all-gather), not with --algo %s", coll_algo_str(*algo));
        usage_fail(err);
    }
    if (o->zero && (o->bench || *kind != COLL_TCP))
        usage_fail("--zero: trains on the CPU ring only (reduce-scatter + all-gather; "
                   "not with --bench, --device cuda or --transport nccl)");
    if (o->zero && o->mistake != MISTAKE_NONE)
        usage_fail("--zero: takes no --mistake");
    if (o->zero == 3 && c->workload == WORKLOAD_SYNTHETIC)
        usage_fail("--zero 3: the synthetic workload has no forward pass; use mlp or linreg");
    check_sync_every(o, *kind, xargc, xargv);
    return xargv;
}

/* choose: --algo auto (auto.h). Rank 0 calibrates and picks for the
 * benchmark's largest size or the vector's bytes, and says so; a rank > 0
 * takes rank 0's choice from the rendezvous (sc->adopt). Exits on failure
 * (set-up). */
static void choose(const struct opts *o, const struct cli_common *c, double vec_bytes,
                   struct setup_cfg *sc, int *algo)
{
    struct auto_calib cal;
    char err[ERR_LEN], line[400];
    int rc;

    if (c->rank != 0) {
        sc->adopt = algo;
        return;
    }
    rc = auto_calibrate(o->calibration, c->link_bw, c->link_latency, c->dtype, &cal, err);
    if (rc == ERR_USAGE)
        usage_fail(err);
    if (rc != 0) {
        log_msg("%s", err);
        exit(1);
    }
    *algo = sc->algo = auto_choose(&cal, c->world, o->bench ? (double)o->maxbytes : vec_bytes,
                                   line, sizeof line);
    log_msg("%s", line);
    if (*algo < 0) {            /* a row of model_algos that coll.h does not run */
        log_msg("--algo auto: the model's choice is not an algorithm of this ring_worker");
        exit(1);
    }
}

/* job: the workload (training) and the job as the rendezvous and the peers
 * compare it. */
static void job(const struct opts *o, const struct cli_common *c, struct workload *w,
                int *have_w, struct proto_hello *hello)
{
    struct workload_cfg wc;
    char err[ERR_LEN];

    memset(hello, 0, sizeof *hello);
    hello->dtype = (uint32_t)c->dtype;
    hello->workload = (uint32_t)c->workload;
    hello->seed = c->seed;
    hello->compress = (uint32_t)o->compress;
    hello->sync_every = (uint32_t)o->sync_every;    /* the ranks must agree */
    if (o->bench) {
        hello->n = 1;            /* the sweep itself is compared in bench_run */
        hello->batch = 1;
        return;
    }
    cli_workload_cfg(c, &wc);      /* --backward-time spread over this rank's examples */
    if (workload_create(w, &wc) != 0) {
        snprintf(err, sizeof err, "--workload %s: cannot build it with these sizes "
                 "(--params, --batch)", workload_name(c->workload));
        usage_fail(err);
    }
    *have_w = 1;
    if (train_check(c, w->batch, err) != 0)
        usage_fail(err);
    hello->n = w->n;
    hello->batch = w->batch;
}

/* where: where peers reach us, and where the coordinator is (world > 1). */
static void where(const struct opts *o, const struct cli_common *c, struct setup_cfg *s,
                  char *host)
{
    char err[ERR_LEN];

    s->listen_host = o->listen ? o->listen : o->advertise ? o->advertise : "127.0.0.1";
    s->adv_host = o->advertise ? o->advertise : s->listen_host;
    s->port_file = o->port_file;
    s->coord_host = host;
    /* What was given is checked even at --world 1, which opens no socket:
     * a malformed address is a mistake in the command line either way. */
    if (o->listen && !is_wildcard(o->listen) && proto_addr_check(o->listen, strlen(o->listen)) != 0)
        usage_fail_value("--listen", o->listen, "not a host name or IP literal of at most 255 bytes");
    if (o->advertise && proto_addr_check(o->advertise, strlen(o->advertise)) != 0)
        usage_fail_value("--advertise", o->advertise,
                         "not a host name or IP literal of at most 255 bytes");
    if (c->world == 1) {
        if ((o->coordinator || env_set("MASTER_ADDR") || env_set("MASTER_PORT")) &&
            cli_coordinator(o->coordinator, host, NET_HOST_LEN, &s->coord_port, err) != 0)
            usage_fail(err);
        return;
    }
    if (is_wildcard(s->adv_host))
        usage_fail("--advertise: needed when --listen is a wildcard address "
                   "(peers must be told a real one)");
    if (proto_addr_check(s->adv_host, strlen(s->adv_host)) != 0)
        usage_fail_value("--advertise", s->adv_host,
                         "not a host name or IP literal of at most 255 bytes");
    if (cli_coordinator(o->coordinator, host, NET_HOST_LEN, &s->coord_port, err) != 0)
        usage_fail(err);
    if (s->coord_port == 0 && c->rank != 0)
        usage_fail("--coordinator: port 0 is for rank 0 only (it binds a free port and "
                   "writes --port-file); give the other ranks the port it wrote");
}

/* secret: the job's secret (--secret-file, PSRING_SECRET), checked
 * against where this rank listens and connects (auth.h, auth_policy),
 * and made the process's key: the rendezvous and the transport use it. */
static void secret(const struct cli_common *c, const struct setup_cfg *s)
{
    static struct auth_key key;
    const char *hosts[2] = { s->coord_host, s->adv_host };
    const char *listen = s->listen_host;
    char err[ERR_LEN];

    if (cli_secret(c, &key, err) != 0)
        usage_fail(err);
    if (c->world == 1)
        return;                 /* no sockets */
    if (c->rank == 0 && auth_is_loopback(listen))
        listen = s->coord_host; /* rank 0 binds the coordinator too */
    if (auth_policy(PROG, &key, listen, hosts, 2, err) != 0)
        usage_fail(err);
    auth_process_key_set(&key);
}

/* run: the benchmark, or training with its record. */
static int run(const struct opts *o, struct cli_common *c, struct workload *w, int kind,
               struct coll *coll, struct link *link, char *err)
{
    struct metrics_record rec;
    struct train_cfg tc = { .c = c, .w = w, .coll = coll, .link = link,
                            .mistake = o->mistake, .loss_out = o->loss_out,
                            .bucket_bytes = o->bucket_bytes, .no_overlap = o->no_overlap,
                            .trace = o->trace, .zero = o->zero,
                            .sync_every = o->sync_every };
    int rc;

    if (o->bench) {
        struct bench_cfg bc = {
            .rank = c->rank, .world = c->world, .dtype = c->dtype, .minbytes = o->minbytes,
            .maxbytes = o->maxbytes, .stepfactor = o->stepfactor,
            .warmup_iters = o->warmup_iters, .iters = o->iters, .csv = c->csv, .json = c->json, .coll = coll,
            .link = link, .op = o->op, .root = o->bf.root, .imbalance = o->bf.imbalance,
        };
        return bench_run(&bc, err);
    }
    if (metrics_record_init(&rec, (size_t)(c->steps - c->warmup)) != 0) {
        snprintf(err, ERR_LEN, "out of memory for the record");
        return -ENOMEM;
    }
    snprintf(rec.system, sizeof rec.system, "ring");
    snprintf(rec.role, sizeof rec.role, "rank");
    snprintf(rec.algo, sizeof rec.algo, "%s", coll_algo_name(coll));
    snprintf(rec.transport, sizeof rec.transport, "%s", coll_transport(coll));
    rec.rank = c->rank;
    rec.world = c->world;
    rec.bytes = (uint64_t)w->n * dtype_size(c->dtype);
    snprintf(rec.compress, sizeof rec.compress, "%s", coll_compress_name(coll));
    rec.wire_bytes = coll_wire_bytes(coll, rec.bytes);
    rec.link_bw = c->link_bw;
    rec.link_latency = c->link_latency;
    rec.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    rc = kind == COLL_TCP ? train_run(&tc, &rec, err) : train_cuda_run(&tc, &rec, err);
    if (rc == 0 && (c->csv || c->json))
        rc = metrics_record_save(&rec, c->csv, c->json, err);
    metrics_record_free(&rec);
    return rc;
}

int main(int argc, char **argv)
{
    struct cli_common c;
    struct opts o = { NULL, NULL, NULL, NULL, "cpu", "tcp", "ring", 0, NULL, MISTAKE_NONE,
                      BUCKETS_DEFAULT_BYTES, 0, NULL,
                      4096, 64u << 20, RING_PIECE_DEFAULT, 2, 5, 20,
                      { NULL, 0, 0, 0, 0 },   /* bf: bench_flags_init, in parse */
                      COLL_ALL_REDUCE, 0, NULL, COMPRESS_NONE, 1, 0, NULL };
    char err[ERR_LEN], host[NET_HOST_LEN] = "";
    struct workload w;
    struct link link;
    struct setup_cfg sc;
    struct xport *x = NULL;
    struct coll coll;
    unsigned char nccl_id[GPU_NCCL_ID_BYTES];
    int rc, have_w = 0, coll_ok = 0, kind, algo, status = 1;
    char **xargv;

    cli_common_defaults(&c);
    xargv = parse(argc, argv, &o, &c, &kind, &algo);
    log_init(PROG, c.rank);
    mistake_announce(o.mistake);
    clock_precise_timers();
    {
        char lerr[ERR_LEN];
        if (link_setup(&link, c.link_bw, c.link_latency, c.link_host, lerr) != 0)
            usage_fail(lerr);
    }
    memset(&sc, 0, sizeof sc);
    sc.c = &c;
    sc.kind = kind;
    sc.algo = algo;
    sc.op = o.op;
    sc.group = o.group;
    sc.link = &link;
    job(&o, &c, &w, &have_w, &sc.hello);
    if (algo == ALGO_AUTO)
        choose(&o, &c, have_w ? (double)w.n * dtype_size(c.dtype) : 0, &sc, &algo);
    where(&o, &c, &sc, host);
    secret(&c, &sc);
    log_msg("rank %d of %d (rank from %s)%s", c.rank, c.world, c.rank_source,
            link_active(&link) ? ", link EMULATED" : "");
    memset(nccl_id, 0, sizeof nccl_id);
    rc = kind != COLL_TCP ? setup_gpu(kind, &c, nccl_id, err) : 0;
    if (rc != 0) {
        log_msg("%s", err);
        goto out;
    }
    rc = setup_connect(&sc, nccl_id, &x, err);
    if (rc == 0) {
        struct coll_cfg cc = {
            .kind = kind, .algo = algo, .rank = c.rank, .world = c.world, .dtype = c.dtype,
            .max_n = o.bench ? (size_t)(o.maxbytes / dtype_size(c.dtype))
                             : w.n + TRAIN_TRAILER,
            .piece_bytes = (size_t)o.piece, .timeout = c.timeout, .x = x, .nccl_id = nccl_id,
            .compress = o.compress, .group = o.group,
        };
        rc = coll_init(&coll, &cc, err);
        coll_ok = rc == 0;
        if (coll_ok && sc.adopt)
            log_msg("--algo auto: rank 0 chose %s", coll_algo_name(&coll));
    }
    if (rc != 0) {
        log_msg("%s", err);
        if (rc == ERR_USAGE)
            status = CLI_EXIT_USAGE;
        goto out;
    }
    rc = run(&o, &c, &w, kind, &coll, &link, err);
    if (rc != 0) {
        xport_abort(x, err);            /* a no-op when the transport itself failed */
        coll_abort(&coll);              /* NCCL: the communicator */
        log_msg("%s", err);
    }
    status = rc == 0 ? 0 : 1;
out:
    if (coll_ok)
        coll_destroy(&coll);
    xport_close(x);
    if (have_w)
        workload_destroy(&w);
    cli_common_free(&c);
    free(xargv);
    return status;
}
