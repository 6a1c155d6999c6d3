/* picks.c -- ring_worker's flag checks (picks.h): each pick_* reads the
 * parsed options and the common flags, and ends the program with THE
 * USAGE LINE (cli.h) for a combination that cannot run. */
#include "picks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto.h"
#include "base/cli.h"
#include "base/compress.h"
#include "base/err.h"
#include "coll/coll.h"
#include "coll/hring.h"
#include "gpu.h"
#include "train/mistake.h"
#include "train/workload.h"

/* has_flag: was --name given (the parser cannot tell a default from it)? */
int has_flag(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
            return 1;
    return 0;
}

void usage_fail(const char *msg)
{
    cli_usage_fail(PROG, msg);
}

/* usage_fail_value: "FLAG VALUE: why" as THE USAGE LINE (cli.h). */
void usage_fail_value(const char *flag, const char *value, const char *why)
{
    char q[CLI_VALUE_BUF], msg[ERR_LEN];

    snprintf(msg, sizeof msg, "%s %s: %s", flag, cli_value(value, q), why);
    cli_usage_fail(PROG, msg);
}

int env_set(const char *var)
{
    const char *v = getenv(var);
    return v && *v;
}

int is_wildcard(const char *h)
{
    return strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0 || h[0] == '\0';
}

/* pick_kind: the all-reduce back end from --device and --transport
 * (coll.h), refusing the combinations that make no sense. */
int pick_kind(const struct opts *o, const struct cli_common *c, int argc, char **argv)
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
int pick_algo(const struct opts *o, int kind, int workload)
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
void pick_group(struct opts *o, const struct cli_common *c, int algo)
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
void pick_compress(struct opts *o, int kind, int algo)
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
int pick_coll(struct opts *o, const struct cli_common *c, int kind, int algo, int argc,
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
void check_sync_every(const struct opts *o, int kind, int xargc, char **xargv)
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

/* check_phases: --phases FILE observes the host ring's steps in the
 * benchmark (ring_steps.h): --bench, --algo ring on the CPU, a collective
 * the ring runs, no compressed wire (its own loop). */
void check_phases(const struct opts *o, int kind, int algo)
{
    const char *why = NULL;

    if (!o->phases)
        return;
    if (!o->bench)
        why = "the ring's steps of one benchmark call: give --bench";
    else if (kind != COLL_TCP || algo != COLL_RING)
        why = "the steps of the host ring: --algo ring --device cpu --transport tcp";
    else if (o->op != COLL_ALL_REDUCE && o->op != COLL_REDUCE_SCATTER && o->op != COLL_ALL_GATHER)
        why = "--coll all_reduce, reduce_scatter or all_gather (the ring's phases)";
    else if (o->compress != COMPRESS_NONE)
        why = "not with --compress (the compressed ring runs its own loop)";
    if (why)
        usage_fail_value("--phases", o->phases, why);
}

/* check_zero: --zero trains on the CPU ring only, without --mistake;
 * stage 3 needs a forward pass. */
void check_zero(const struct opts *o, const struct cli_common *c, int kind, int algo)
{
    char err[ERR_LEN];

    if (o->zero && kind == COLL_TCP && !o->bench && algo != COLL_RING) {
        snprintf(err, sizeof err, "--zero: trains on the CPU ring only (reduce-scatter + "
                 "all-gather), not with --algo %s", coll_algo_str(algo));
        usage_fail(err);
    }
    if (o->zero && (o->bench || kind != COLL_TCP))
        usage_fail("--zero: trains on the CPU ring only (reduce-scatter + all-gather; "
                   "not with --bench, --device cuda or --transport nccl)");
    if (o->zero && o->mistake != MISTAKE_NONE)
        usage_fail("--zero: takes no --mistake");
    if (o->zero == 3 && c->workload == WORKLOAD_SYNTHETIC)
        usage_fail("--zero 3: the synthetic workload has no forward pass; use mlp or linreg");
}

/* check_bucket_student: --bucket-student replaces the overlapped pass's
 * buckets (common/train/bucket_student.h): training on the host, with the
 * overlap on and nothing that changes the buckets or the gradient. */
void check_bucket_student(const struct opts *o, int kind)
{
    const char *why = NULL;
    char err[ERR_LEN];

    if (!o->bucket_student)
        return;
    if (o->bench)
        why = "the buckets are a training step's; --bench has none";
    else if (kind != COLL_TCP)
        why = "buckets and overlap run on the CPU ring only (--device cpu --transport tcp)";
    else if (o->no_overlap)
        why = "it is the overlapped pass's buckets: not with --no-overlap";
    else if (o->zero || o->sync_every != 1)
        why = "not with --zero or --sync-every (they have their own steps)";
    else if (o->mistake != MISTAKE_NONE && o->mistake != MISTAKE_SUM_NOT_MEAN)
        why = "not with this --mistake (it changes the gradient after the backward pass)";
    else if (o->compress != COMPRESS_NONE)
        why = "not with --compress";
    if (!why)
        return;
    snprintf(err, sizeof err, "--bucket-student: %s", why);
    usage_fail(err);
}
