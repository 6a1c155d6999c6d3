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
#include "picks.h"
#include "setup.h"
#include "train/trace.h"
#include "coll/train.h"
#include "train/workload.h"
#include "coll/xport.h"

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
    "ring written in students/ring_student.c (docs/lab.md, S); --algo auto by the\n"
    "model's choice for this K and n, made by rank 0 (--calibration FILE: a, bw, g).\n"
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
          "bytes reduced between two receives (default 1M, 128K when K > the CPUs)", 8, 1LL << 30, NULL },
        { "loss-out", CLI_STRING, &o->loss_out, "FILE",
          "rank 0: write the global loss of every step to FILE at the end", 0, 0, NULL },
        { "mistake", CLI_CUSTOM, &o->mistake, MISTAKE_METAVAR, MISTAKE_HELP, 0, 0,
          mistake_parse },
        { "bucket-size", CLI_SIZE, &o->bucket_bytes, "SIZE",
          "gradient buckets of whole layers, last layer first (default 25MiB)", 1, 0, NULL },
        { "no-overlap", CLI_BOOL, &o->no_overlap, NULL,
          "all-reduce the buckets after the backward pass, not during it", 0, 0, NULL },
        { "bucket-student", CLI_BOOL, &o->bucket_student, NULL,
          "the buckets cut and started by students/bucket_student.c (lab.md SB)", 0, 0, NULL },
        { "trace", CLI_STRING, &o->trace, "FILE",
          "write each rank's timeline to FILE.RANK (Chrome trace-event JSON, Perfetto)",
          0, 0, NULL },
        { "phases", CLI_STRING, &o->phases, "FILE",
          "--bench, --algo ring: write each rank's ring steps (phase, step, chunk sent and "
          "received, start, end) of the first timed call to FILE.RANK", 0, 0, NULL },
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
    check_zero(o, c, *kind, *algo);
    check_sync_every(o, *kind, xargc, xargv);
    check_bucket_student(o, *kind);
    check_phases(o, *kind, *algo);
    if (o->phases && ring_steps_check(o->phases, c->rank, err) != 0)
        usage_fail(err);
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
                            .bucket_student = o->bucket_student,
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
        struct ring_steps st;
        if (!o->phases)
            return bench_run(&bc, err);
        if ((rc = ring_steps_init(&st, c->rank, c->world, coll_clock(coll), err)) != 0)
            return rc;
        bc.steps = &st;
        rc = bench_run(&bc, err);
        if (rc == 0)
            rc = ring_steps_write(&st, o->phases, err);
        ring_steps_destroy(&st);
        return rc;
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
                      BUCKETS_DEFAULT_BYTES, 0, 0, NULL,
                      4096, 64u << 20, 0 /* --piece: coll_piece_rule */, 2, 5, 20,
                      { NULL, 0, 0, 0, 0 },   /* bf: bench_flags_init, in parse */
                      COLL_ALL_REDUCE, 0, NULL, COMPRESS_NONE, 1, 0, NULL, NULL };
    char err[ERR_LEN], host[NET_HOST_LEN] = "";
    struct workload w;
    struct link link;
    struct setup_cfg sc;
    struct xport *x = NULL;
    struct coll coll;
    unsigned char nccl_id[GPU_NCCL_ID_BYTES];
    int rc, have_w = 0, coll_ok = 0, kind, algo, status = 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
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
    /* No --piece: coll.h's rule, once the algorithm is final (auto: rank 0's). */
    if (rc == 0 && o.piece == 0 &&
        (o.piece = coll_piece_rule(kind, algo, o.op, c.world, cpus, link_active(&link))) != 0)
        log_msg("piece %llu KiB: %d ranks on %ld CPUs, unpaced (coll_piece_rule)",
                (unsigned long long)(o.piece >> 10), c.world, cpus);
    if (rc == 0) {
        struct coll_cfg cc = {
            .kind = kind, .algo = algo, .rank = c.rank, .world = c.world, .dtype = c.dtype,
            .max_n = o.bench ? (size_t)(o.maxbytes / dtype_size(c.dtype))
                             : w.n + TRAIN_TRAILER,
            .piece_bytes = (size_t)o.piece, .timeout = c.timeout, .x = x, .nccl_id = nccl_id,
            .compress = o.compress, .group = o.group, .unpaced = !link_active(&link),
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
