/* bench.c -- the collectives' size sweep (bench.h says what it measures
 * and how). Everything it allocates is allocated before the first size;
 * the timed loop only calls the collective (run_op) and reads the clock.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "measure/metrics.h"
#include "base/vec.h"
#include "measure/model.h"
#include "wire/net.h"

#define NSETTINGS 9     /* minbytes maxbytes stepfactor warmup iters dtype coll root imbalance */

/* The check's pattern: rank r, element i -> ((r + i) mod 8) - 3. */
static int pattern(int r, size_t i)
{
    return (int)(((size_t)r + i) & 7) - 3;
}

static void fill_pattern(void *buf, size_t count, int dtype, int rank)
{
    for (size_t i = 0; i < count; i++)
        vec_set(buf, i, dtype, pattern(rank, i));
}

/* The all-to-all's pattern: rank s's element j of its block for rank d. */
static int a2a_pattern(int s, int d, size_t j)
{
    return (int)(((size_t)s * 5 + (size_t)d * 3 + j) & 7) - 3;
}

/* count_of: the elements of one size; the reduce-scatter, the all-gather
 * and the all-to-all round down to a multiple of K, as nccl-tests does
 * (equal slices, NCCL's requirement). */
static size_t count_of(const struct bench_cfg *cfg, uint64_t size, size_t es)
{
    size_t count = (size_t)(size / es), k = (size_t)cfg->world;

    if (cfg->op == COLL_REDUCE_SCATTER || cfg->op == COLL_ALL_GATHER || cfg->op == COLL_ALLTOALL)
        count = count / k * k;
    return count;
}

static struct a2a_split split_of(const struct bench_cfg *cfg, size_t count)
{
    return (struct a2a_split){ count, cfg->world, cfg->root, cfg->imbalance };
}

/* run_op: one collective of count elements (the timed call). */
static int run_op(const struct bench_cfg *cfg, void *buf, void *rbuf, size_t count, char *err)
{
    struct coll *co = cfg->coll;
    struct a2a_split sp;

    switch (cfg->op) {
    case COLL_REDUCE_SCATTER:
        return coll_reduce_scatter(co, buf, count, err);
    case COLL_ALL_GATHER:
        return coll_all_gather(co, buf, count, err);
    case COLL_BROADCAST:
        return coll_broadcast(co, buf, count, cfg->root, err);
    case COLL_REDUCE:
        return coll_reduce(co, buf, count, cfg->root, err);
    case COLL_ALLTOALL:
        sp = split_of(cfg, count);
        return coll_alltoall(co, buf, rbuf, &sp, err);
    default:
        return coll_allreduce(co, buf, count, err);
    }
}

/* check_input: the checked call's input, on the host: the all-reduce's
 * pattern for the reductions, broadcast and all-gather (whose results are
 * then some rank's pattern), a2a_pattern per block for the all-to-all. */
static void check_input(const struct bench_cfg *cfg, void *h, size_t count)
{
    struct a2a_split sp = split_of(cfg, count);

    if (cfg->op != COLL_ALLTOALL) {
        fill_pattern(h, count, cfg->dtype, cfg->rank);
        return;
    }
    for (int d = 0; d < cfg->world; d++) {
        size_t off = a2a_offset(&sp, d), m = a2a_count(&sp, d);
        for (size_t j = 0; j < m; j++)
            vec_set(h, off + j, cfg->dtype, a2a_pattern(cfg->rank, d, j));
    }
}

/* check_result: the elements of this rank's result (host copy h) that
 * differ from what the collective defines: the closed-form sum want[i & 7]
 * (all_reduce; reduce_scatter in the own chunk; reduce on the root), rank
 * c's pattern in chunk c (all_gather), the root's (broadcast), the
 * senders' blocks (alltoall). */
static uint64_t check_result(const struct bench_cfg *cfg, const void *h, size_t count,
                             const double *want)
{
    int k = cfg->world, me = cfg->rank, dt = cfg->dtype;
    struct a2a_split sp = split_of(cfg, count);
    size_t lo = 0, hi = count, m;
    uint64_t wrong = 0;

    switch (cfg->op) {
    case COLL_REDUCE:
        if (me != cfg->root)
            return 0;
        /* fall through */
    case COLL_ALL_REDUCE:
    case COLL_REDUCE_SCATTER:
        if (cfg->op == COLL_REDUCE_SCATTER)
            ring_chunk(count, k, me, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            wrong += vec_get(h, i, dt) != want[i & 7];
        return wrong;
    case COLL_ALL_GATHER:
        for (int c = 0; c < k; c++) {
            ring_chunk(count, k, c, &lo, &hi);
            for (size_t i = lo; i < hi; i++)
                wrong += vec_get(h, i, dt) != pattern(c, i);
        }
        return wrong;
    case COLL_BROADCAST:
        for (size_t i = 0; i < count; i++)
            wrong += vec_get(h, i, dt) != pattern(cfg->root, i);
        return wrong;
    default:
        m = a2a_count(&sp, me);
        for (int s = 0; s < k; s++)
            for (size_t j = 0; j < m; j++)
                wrong += vec_get(h, (size_t)s * m + j, dt) != a2a_pattern(s, me, j);
        return wrong;
    }
}

/* same_sweep: every rank must run the same sizes and iteration counts,
 * or the ring's steps would not line up. */
static int same_sweep(const struct bench_cfg *cfg, double *all, char *err)
{
    static const char *const names[NSETTINGS] = {
        "--minbytes", "--maxbytes", "--stepfactor", "--warmup-iters", "--iters", "--dtype",
        "--coll (0 all_reduce .. 5 alltoall)", "--root", "--imbalance",
    };
    double mine[NSETTINGS] = {
        (double)cfg->minbytes, (double)cfg->maxbytes, cfg->stepfactor, cfg->warmup_iters,
        cfg->iters, cfg->dtype, cfg->op, cfg->root, cfg->imbalance,
    };
    int rc = coll_gather(cfg->coll, all, mine, NSETTINGS, err);

    if (rc != 0)
        return rc;
    for (int r = 0; r < cfg->world; r++)
        for (int j = 0; j < NSETTINGS; j++)
            if (all[r * NSETTINGS + j] != mine[j]) {
                err_say(err, "rank %d runs another sweep: %s %g, here %g", r, names[j],
                    all[r * NSETTINGS + j], mine[j]);
                return ERR_MISMATCH;
            }
    return 0;
}

/* write_record: this rank's record of one size; idle: its link's egress
 * idle over the timed loop (link.h, UTILIZATION; NaN unpaced). */
static int write_record(const struct bench_cfg *cfg, uint64_t bytes, const double *dt,
                        const uint64_t *bin, const uint64_t *bout, double cpu, double wall,
                        double idle, double credit, const struct hostload_sample *machine,
                        char *err)
{
    char path[4096 + 32], jpath[4096 + 32];
    int one = cfg->minbytes == cfg->maxbytes ||
              cfg->maxbytes / cfg->minbytes < (uint64_t)cfg->stepfactor;
    struct metrics_record rec;
    int rc = metrics_record_init(&rec, (size_t)cfg->iters);

    if (rc != 0) {
        err_say(err, "out of memory for the record");
        return rc;
    }
    snprintf(rec.system, sizeof rec.system, "ring");
    snprintf(rec.role, sizeof rec.role, "rank");
    snprintf(rec.algo, sizeof rec.algo, "%s", coll_op_algo(cfg->coll, cfg->op));
    snprintf(rec.transport, sizeof rec.transport, "%s", coll_transport(cfg->coll));
    snprintf(rec.coll, sizeof rec.coll, "%s", coll_op_name(cfg->op));
    rec.rank = cfg->rank;
    rec.world = cfg->world;
    rec.bytes = bytes;
    snprintf(rec.compress, sizeof rec.compress, "%s", coll_compress_name(cfg->coll));
    rec.wire_bytes = coll_wire_bytes(cfg->coll, bytes);
    rec.link_bw = cfg->link->egress.rate;
    rec.link_latency = cfg->link->latency_s;
    rec.cpu_s = cpu;
    rec.wall_s = wall;
    if (!isnan(idle)) {
        rec.link_span_s = wall;
        rec.link_idle_s = fmax(0.0, idle);
    }
    rec.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    rec.machine0 = machine[0];
    rec.machine1 = machine[1];
    rec.link_credit_s = credit;
    for (int i = 0; i < cfg->iters; i++) {
        struct metrics_step s = { (uint64_t)i, dt[i], NAN, NAN, bin[i], bout[i], NAN, NAN };
        metrics_record_add(&rec, &s);
    }
    /* One size: FILE; a sweep: FILE.SIZE (bench.h), for --csv and --json. */
    if (cfg->csv)
        snprintf(path, sizeof path, one ? "%s" : "%s.%llu", cfg->csv, (unsigned long long)bytes);
    if (cfg->json)
        snprintf(jpath, sizeof jpath, one ? "%s" : "%s.%llu", cfg->json, (unsigned long long)bytes);
    rc = metrics_record_save(&rec, cfg->csv ? path : NULL, cfg->json ? jpath : NULL, err);
    metrics_record_free(&rec);
    return rc;
}

/* print_header: rank 0's opening lines: what runs, the link, the columns. */
static void print_header(const struct bench_cfg *cfg, const struct coll *co)
{
    static const char *const how[COLL_OPS] = {
        NULL, "reduce-scatter (sum), the ring's first phase",
        "all-gather, the ring's second phase", "broadcast, a pipelined chain along the ring",
        "reduce (sum) to the root, a pipelined chain along the ring",
        "all-to-all, pairwise exchange over a mesh",
    };
    int k = cfg->world;

    if (cfg->op != COLL_ALL_REDUCE) {
        printf("# ring_worker --bench --coll %s: %s, K=%d ranks, transport %s\n",
               coll_op_name(cfg->op), co->kind == COLL_NCCL ? "NCCL's" : how[cfg->op], k,
               coll_transport(co));
        if (cfg->op == COLL_BROADCAST || cfg->op == COLL_REDUCE)
            printf("# root: rank %d\n", cfg->root);
        if (cfg->op == COLL_ALLTOALL && cfg->imbalance > 1)
            printf("# imbalance %g: rank %d gets %g x the average share n/K from every rank "
                   "(MoE skew; a2a.h); busbw keeps nccl-tests' balanced factor\n",
                   cfg->imbalance, cfg->root, cfg->imbalance);
    } else if (co->algo == COLL_RD)
        printf("# ring_worker --bench: all-reduce (sum) by recursive doubling among K=%d "
               "ranks (--algo rd), transport %s\n", k, coll_transport(co));
    else if (co->algo == COLL_RABENSEIFNER)
        printf("# ring_worker --bench: all-reduce (sum) by Rabenseifner (recursive halving, "
               "then doubling) among K=%d ranks (--algo rabenseifner), transport %s\n", k,
               coll_transport(co));
    else if (co->algo == COLL_STUDENT)
        printf("# ring_worker --bench: all-reduce (sum) by the student's ring "
               "(students/ring_student.c, --algo student) among K=%d ranks, transport %s\n", k,
               coll_transport(co));
    else if (co->algo == COLL_SWING_LAT || co->algo == COLL_SWING_BW)
        printf("# ring_worker --bench: all-reduce (sum) by Swing, %s (peers 1, -1, 3, -5, "
               "... apart) among K=%d ranks (--algo %s), transport %s\n",
               co->algo == COLL_SWING_LAT ? "latency-optimal, log2 K steps of the whole vector"
               : "bandwidth-optimal, reduce-scatter then all-gather", k, coll_algo_name(co),
               coll_transport(co));
    else if (co->algo == COLL_TREE || co->algo == COLL_DBTREE)
        printf("# ring_worker --bench: all-reduce (sum) by a pipelined %s (reduce up, "
               "broadcast down) among K=%d ranks (--algo %s), transport %s\n",
               co->algo == COLL_TREE ? "binary tree" : "double binary tree", k,
               coll_algo_name(co), coll_transport(co));
    else if (co->algo == COLL_HRING)
        printf("# ring_worker --bench: all-reduce (sum) by a hierarchical ring among K=%d "
               "ranks, %d per host (--algo hring --ranks-per-host %d), transport %s\n", k,
               co->hring.group, co->hring.group, coll_transport(co));
    else
        printf("# ring_worker --bench: all-reduce (sum) over a ring of K=%d ranks, "
               "transport %s\n", k, coll_transport(co));
    if (co->kind == COLL_NCCL)
        printf("# link: NCCL's own (not emulated; its bytes are not counted)\n");
    else if (cfg->link->egress.rate > 0 || cfg->link->latency_s > 0)
        printf("# link: EMULATED, %.6g bytes/s per direction, %.6g s one-way latency\n",
               cfg->link->egress.rate, cfg->link->latency_s);
    else
        printf("# link: not emulated (the host's loopback)\n");
    if (k == 1)
        printf("# K = 1: the collective of one rank is a local copy at most; the time "
               "is the call's overhead, not a transfer\n");
    printf("# time: the slowest rank's loop of %d iterations / %d (after %d warm-up "
           "and a barrier); busbw = algbw * %s (nccl-tests')\n", cfg->iters, cfg->iters,
           cfg->warmup_iters, cfg->op == COLL_ALL_REDUCE ? "2(K-1)/K"
           : cfg->op == COLL_BROADCAST || cfg->op == COLL_REDUCE ? "1" : "(K-1)/K");
    if (cfg->csv)
        printf("# the table's time is a MEAN (the loop / %d); the records' (--csv, the launcher's CSV "
               "row) time_s is the MEDIAN over the %d calls of the slowest rank's call: they differ "
               "where calls vary\n", cfg->iters, cfg->iters);
    printf("# cpu(s/GB): the costliest rank's CPU seconds (user + system) over the loop per GB "
           "(1e9 bytes) it sent and received\n");
    printf("#%11s %12s %7s %11s %12s %12s %10s %7s\n", "size", "count", "type", "time(us)",
           "algbw(GB/s)", "busbw(GB/s)", "cpu(s/GB)", "#wrong");
    fflush(stdout);
}

/* The vectors: where the collective runs (GPU memory for the GPU kinds)
 * and their host side for the check (the same memory on the host); the
 * receive pair only for the all-to-all. */
struct bufs {
    unsigned char *buf, *host, *rbuf, *rhost;
};

static int bufs_alloc(const struct bench_cfg *cfg, struct bufs *b, size_t maxcount, size_t es,
                      char *err)
{
    struct coll *co = cfg->coll;
    size_t rmax = 0;
    int rc;

    memset(b, 0, sizeof *b);
    if (cfg->op == COLL_ALLTOALL) {
        /* K blocks of this rank's share, the largest at maxcount. */
        struct a2a_split sp = split_of(cfg, count_of(cfg, cfg->maxbytes, es));
        rmax = (size_t)cfg->world * a2a_count(&sp, cfg->rank);
        if ((rc = coll_alloc(co, (void **)&b->rbuf, rmax * es, err)) != 0)
            return rc;
        b->rhost = coll_on_device(co) ? malloc(rmax * es + 1) : b->rbuf;
    }
    if ((rc = coll_alloc(co, (void **)&b->buf, maxcount * es, err)) != 0)
        return rc;
    b->host = coll_on_device(co) ? malloc(maxcount * es) : b->buf;
    if (!b->host || (b->rbuf && !b->rhost)) {
        err_say(err, "out of memory for %llu bytes", (unsigned long long)cfg->maxbytes);
        return -ENOMEM;
    }
    return 0;
}

static void bufs_free(const struct bench_cfg *cfg, struct bufs *b)
{
    if (b->host != b->buf)
        free(b->host);
    if (b->rhost != b->rbuf)
        free(b->rhost);
    if (b->buf)
        coll_free(cfg->coll, b->buf);
    if (b->rbuf)
        coll_free(cfg->coll, b->rbuf);
}

/* checked_call: the checked collective of count elements (CHECK in
 * bench.h), outside the timing; *wrong: this rank's wrong elements. */
static int checked_call(const struct bench_cfg *cfg, const struct bufs *b, size_t count,
                        const double *want, uint64_t *wrong, char *err)
{
    struct coll *co = cfg->coll;
    size_t es = dtype_size(cfg->dtype);
    struct a2a_split sp = split_of(cfg, count);
    int a2a = cfg->op == COLL_ALLTOALL, rc;

    check_input(cfg, b->host, count);
    if ((rc = coll_put(co, b->buf, b->host, count * es, err)) != 0 ||
        (rc = run_op(cfg, b->buf, b->rbuf, count, err)) != 0)
        return rc;
    if (a2a)
        rc = coll_get(co, b->rhost, b->rbuf, (size_t)cfg->world * a2a_count(&sp, cfg->rank) * es,
                      err);
    else
        rc = coll_get(co, b->host, b->buf, count * es, err);
    if (rc == 0)
        *wrong = check_result(cfg, a2a ? b->rhost : b->host, count, want);
    return rc;
}

/* START TOGETHER. The barrier lets the ranks go at once in real time, but
 * each leaves it at another time on its host's own timeline (link.h,
 * VIRTUAL TIMELINE): a rank's exit is its partners' entries plus the
 * gather, and whichever rank got its CPU late entered late. Calls back to
 * back keep that skew (each starts where the last ended on its timeline:
 * link_enter_vt; rd's ends are its ranks' starts permuted: rank r ends at
 * rank r XOR 3's start plus 2(a + n b) at K = 4), so the slowest rank's
 * every call would pay it. So the ranks agree on a moment just ahead of
 * all of them, the latest entry into a second gather plus twice the
 * slowest barrier, sleep until it and start their first call there, one
 * moment on every timeline, as hosts with clocks in step would. On an
 * emulated link only (one machine: one clock), and only when the moment
 * is ahead and near (START_AHEAD_MAX): otherwise *start stays NAN and
 * the first call starts as the others. barrier_s: this rank's barrier.
 * 0, or the gather's code. */
#define START_AHEAD_MAX 0.1
static int start_together(struct coll *co, double *all, int k, double barrier_s, double *start,
                          char *err)
{
    double mine[2] = { clock_now(), barrier_s }, at = -INFINITY, pad = 0.0, now;
    int rc = coll_gather(co, all, mine, 2, err);

    *start = NAN;
    for (int r = 0; rc == 0 && r < k; r++) {
        at = fmax(at, all[2 * r]);
        pad = fmax(pad, all[2 * r + 1]);
    }
    at += 2.0 * pad;
    now = clock_now();
    if (rc == 0 && at >= now && at - now <= START_AHEAD_MAX) {
        clock_sleep_until(at);
        *start = at;
    }
    return rc;
}

int bench_run(const struct bench_cfg *cfg, char *err)
{
    int k = cfg->world, rc = 0;
    size_t es = dtype_size(cfg->dtype), maxcount = cfg->maxbytes / (es ? es : 1);
    struct bufs b = { NULL, NULL, NULL, NULL };
    struct coll *co = cfg->coll;
    const struct clock_src *clk = coll_clock(co);     /* the transport's time */
    double *all = NULL, *dt = NULL, want[8], busbw_sum = 0;
    uint64_t *bin = NULL, *bout = NULL, wrong_total = 0;
    int nsizes = 0;

    if (es == 0 || maxcount == 0 || cfg->minbytes == 0 || cfg->minbytes > cfg->maxbytes ||
        cfg->stepfactor < 2 || cfg->iters < 1 || cfg->warmup_iters < 0) {
        err_say(err, "bad sweep: --minbytes %llu --maxbytes %llu --stepfactor %d --iters %d",
            (unsigned long long)cfg->minbytes, (unsigned long long)cfg->maxbytes,
            cfg->stepfactor, cfg->iters);
        return ERR_USAGE;
    }
    if ((rc = bufs_alloc(cfg, &b, maxcount, es, err)) != 0)
        goto out;
    all = malloc((size_t)k * NSETTINGS * sizeof *all);
    dt = malloc((size_t)cfg->iters * sizeof *dt);
    bin = malloc((size_t)cfg->iters * sizeof *bin);
    bout = malloc((size_t)cfg->iters * sizeof *bout);
    if (!all || !dt || !bin || !bout) {
        rc = -ENOMEM;
        err_say(err, "out of memory for %llu bytes", (unsigned long long)cfg->maxbytes);
        goto out;
    }
    for (int j = 0; j < 8; j++) {
        want[j] = 0;
        for (int r = 0; r < k; r++)
            want[j] += pattern(r, (size_t)j);
    }
    if ((rc = same_sweep(cfg, all, err)) != 0)
        goto out;

    if (cfg->rank == 0)
        print_header(cfg, co);
    for (uint64_t size = cfg->minbytes; size <= cfg->maxbytes; size *= (uint64_t)cfg->stepfactor) {
        size_t count = count_of(cfg, size, es);
        uint64_t bytes = count * es, wrong = 0;
        double t0, total, cpu0, wall0, cpu, wall, mine[3], tmax = 0, idle, cost = -1, credit;
        double start, barrier;     /* START TOGETHER */
        uint64_t moved = 0;
        struct hostload_sample machine[2];

        if (count > 0) {
            rc = coll_zero(co, b.buf, bytes, err);
            for (int i = 0; i < cfg->warmup_iters && rc == 0; i++)
                rc = run_op(cfg, b.buf, b.rbuf, count, err);
            /* The machine's load (metrics.h), read before the barrier so
             * that no rank starts late for it. */
            hostload_sample_read(&machine[0]);
            credit = cfg->link->credited_s;     /* link.h, OWN CORES: signal 4's share */
            /* The barrier: a tiny gather, so the loops start together. */
            mine[0] = 0;
            start = NAN;
            barrier = clock_now();
            if (rc == 0)
                rc = coll_gather(co, all, mine, 1, err);
            barrier = clock_now() - barrier;
            if (rc == 0 && clk == &clock_real && link_active(cfg->link))
                rc = start_together(co, all, k, barrier, &start, err);
            cpu0 = clock_cpu_seconds();
            wall0 = t0 = clock_src_now(clk);
            idle = link_util_mark_egress(cfg->link, wall0);     /* link.h, UTILIZATION: a rank's sends */
            for (int i = 0; i < cfg->iters && rc == 0; i++) {
                uint64_t o = cfg->link->bytes_out, in = cfg->link->bytes_in;
                double ti = clock_src_now(clk);
                if (i == 0 && start <= ti)      /* START TOGETHER */
                    link_enter(cfg->link, ti = start);
                else if (clk == &clock_real)    /* link.h: timed from its own timeline's start */
                    ti = net_vt_enter(cfg->link, ti);
                else
                    link_enter(cfg->link, ti);
                if (cfg->steps)
                    ring_steps_arm(cfg->steps, &co->ring, count, cfg->dtype);
                rc = run_op(cfg, b.buf, b.rbuf, count, err);
                dt[i] = clock_src_now(clk) - ti;
                if (clk == &clock_real)         /* link.h: its own timeline's end */
                    dt[i] -= net_vt_late(cfg->link, clock_now());
                if (cfg->steps)
                    ring_steps_disarm(cfg->steps, rc == 0);
                bout[i] = cfg->link->bytes_out - o;
                bin[i] = cfg->link->bytes_in - in;
            }
            total = clock_src_now(clk) - t0;
            cpu = clock_cpu_seconds() - cpu0;
            wall = clock_src_now(clk) - wall0;
            idle = link_util_mark_egress(cfg->link, wall0 + wall) - idle;
            hostload_sample_read(&machine[1]);
            credit = cfg->link->credited_s - credit;
            if (rc != 0)
                goto fail;

            if ((rc = checked_call(cfg, &b, count, want, &wrong, err)) != 0)
                goto fail;
            for (int i = 0; i < cfg->iters; i++)
                moved += bin[i] + bout[i];
            mine[0] = total;
            mine[1] = (double)wrong;
            /* The process's CPU on virtual time (psring_sim: every rank an
             * actor of one process) is not a rank's: no figure. */
            if (clk != &clock_real) {
                cpu = 0.0;
                /* Nor is the machine's load: virtual time is not shaped by
                 * it, so no sample, and bound_by cannot read "busy". */
                machine[0].ok = machine[1].ok = 0;
            }
            mine[2] = moved > 0 && cpu > 0 ? cpu / ((double)moved * 1e-9) : -1.0;
            if (moved == 0 || clk != &clock_real)
                idle = NAN;     /* K = 1, NCCL: the emulated link carried nothing;
                                   psring_sim: SimGrid's links, not link.h's, carry it */
            if ((rc = coll_gather(co, all, mine, 3, err)) != 0)
                goto fail;
            wrong = 0;
            for (int r = 0; r < k; r++) {
                tmax = fmax(tmax, all[3 * r]);
                wrong += (uint64_t)all[3 * r + 1];
                cost = fmax(cost, all[3 * r + 2]);      /* the costliest rank */
            }
            wrong_total += wrong;
            if (cfg->rank == 0) {
                double t = tmax / cfg->iters;
                double algbw = (double)bytes / t / 1e9;
                double busbw = algbw * model_busbw_factor(cfg->op, k);
                char cs[32] = "-";
                busbw_sum += busbw;
                nsizes++;
                if (cost >= 0)
                    snprintf(cs, sizeof cs, "%.3f", cost);
                printf("%12llu %12zu %7s %11.1f %12.3f %12.3f %10s %7llu\n",
                       (unsigned long long)bytes, count,
                       cfg->dtype == DTYPE_F32 ? "float" : "double", t * 1e6, algbw, busbw,
                       cs, (unsigned long long)wrong);
                fflush(stdout);
            }
            if ((cfg->csv || cfg->json) && (rc = write_record(cfg, bytes, dt, bin, bout, cpu, wall, idle, credit, machine, err)) != 0)
                goto out;
        }
        if (size > cfg->maxbytes / (uint64_t)cfg->stepfactor)
            break;              /* the next size would pass maxbytes (or overflow) */
    }
    if (cfg->rank == 0) {
        printf("# out of bounds values : %llu %s\n", (unsigned long long)wrong_total,
               wrong_total ? "WRONG" : "OK");
        printf("# avg bus bandwidth    : %.3f GB/s\n", nsizes ? busbw_sum / nsizes : 0.0);
        fflush(stdout);
    }
    if (wrong_total != 0) {
        rc = ERR_MISMATCH;
        err_say(err, "%llu elements differ from what %s defines",
            (unsigned long long)wrong_total, coll_op_name(cfg->op));
    }
    goto out;
fail:
    {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "bench: %s", why);
    }
out:
    free(bout);
    free(bin);
    free(dt);
    free(all);
    bufs_free(cfg, &b);
    return rc;
}
