/* bench.c -- the all-reduce size sweep (bench.h says what it measures and
 * how). Everything it allocates is allocated before the first size; the
 * timed loop only calls coll_allreduce and reads the clock.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "dtype.h"
#include "err.h"
#include "log.h"
#include "metrics.h"

#define NSETTINGS 6             /* minbytes maxbytes stepfactor warmup iters dtype */

/* The check's pattern: rank r, element i -> ((r + i) mod 8) - 3. */
static int pattern(int r, size_t i)
{
    return (int)(((size_t)r + i) & 7) - 3;
}

static void fill_pattern(void *buf, size_t count, int dtype, int rank)
{
    if (dtype == DTYPE_F32) {
        float *p = buf;
        for (size_t i = 0; i < count; i++)
            p[i] = (float)pattern(rank, i);
    } else {
        double *p = buf;
        for (size_t i = 0; i < count; i++)
            p[i] = (double)pattern(rank, i);
    }
}

/* count_wrong: elements that differ from the closed-form sum want[i & 7]. */
static uint64_t count_wrong(const void *buf, size_t count, int dtype, const double *want)
{
    uint64_t wrong = 0;

    if (dtype == DTYPE_F32) {
        const float *p = buf;
        for (size_t i = 0; i < count; i++)
            wrong += (double)p[i] != want[i & 7];
    } else {
        const double *p = buf;
        for (size_t i = 0; i < count; i++)
            wrong += p[i] != want[i & 7];
    }
    return wrong;
}

/* same_sweep: every rank must run the same sizes and iteration counts,
 * or the ring's steps would not line up. */
static int same_sweep(const struct bench_cfg *cfg, double *all, char *err)
{
    static const char *const names[NSETTINGS] = {
        "--minbytes", "--maxbytes", "--stepfactor", "--warmup-iters", "--iters", "--dtype",
    };
    double mine[NSETTINGS] = {
        (double)cfg->minbytes, (double)cfg->maxbytes, cfg->stepfactor, cfg->warmup_iters,
        cfg->iters, cfg->dtype,
    };
    int rc = coll_gather(cfg->coll, all, mine, NSETTINGS, err);

    if (rc != 0)
        return rc;
    for (int r = 0; r < cfg->world; r++)
        for (int j = 0; j < NSETTINGS; j++)
            if (all[r * NSETTINGS + j] != mine[j]) {
                err_say(err, "rank %d runs another sweep: %s %.0f, here %.0f", r, names[j],
                    all[r * NSETTINGS + j], mine[j]);
                return ERR_MISMATCH;
            }
    return 0;
}

static int write_record(const struct bench_cfg *cfg, uint64_t bytes, const double *dt,
                        const uint64_t *bin, const uint64_t *bout, double cpu, double wall,
                        const struct hostload_sample *machine, char *err)
{
    char path[4096 + 32];
    struct metrics_record rec;
    int rc = metrics_record_init(&rec, (size_t)cfg->iters);

    if (rc != 0) {
        err_say(err, "out of memory for the record");
        return rc;
    }
    snprintf(rec.system, sizeof rec.system, "ring");
    snprintf(rec.role, sizeof rec.role, "rank");
    snprintf(rec.algo, sizeof rec.algo, "%s", coll_algo_name(cfg->coll));
    snprintf(rec.transport, sizeof rec.transport, "%s", coll_transport(cfg->coll));
    rec.rank = cfg->rank;
    rec.world = cfg->world;
    rec.bytes = bytes;
    rec.link_bw = cfg->link->egress.rate;
    rec.link_latency = cfg->link->latency_s;
    rec.cpu_s = cpu;
    rec.wall_s = wall;
    rec.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    rec.machine0 = machine[0];
    rec.machine1 = machine[1];
    for (int i = 0; i < cfg->iters; i++) {
        struct metrics_step s = { (uint64_t)i, dt[i], NAN, NAN, bin[i], bout[i], NAN };
        metrics_record_add(&rec, &s);
    }
    if (cfg->minbytes == cfg->maxbytes || cfg->maxbytes / cfg->minbytes < (uint64_t)cfg->stepfactor)
        snprintf(path, sizeof path, "%s", cfg->csv);
    else
        snprintf(path, sizeof path, "%s.%llu", cfg->csv, (unsigned long long)bytes);
    rc = metrics_record_write(&rec, path, err);
    metrics_record_free(&rec);
    return rc;
}

/* print_header: rank 0's opening lines: what runs, the link, the columns. */
static void print_header(const struct bench_cfg *cfg, const struct coll *co)
{
    int k = cfg->world;

    if (co->algo == COLL_RD)
        printf("# ring_worker --bench: all-reduce (sum) by recursive doubling among K=%d "
               "ranks (--algo rd), transport %s\n", k, coll_transport(co));
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
        printf("# K = 1: the all-reduce of one vector in place is already done; the time "
               "is the call's overhead, not a transfer\n");
    printf("# time: the slowest rank's loop of %d iterations / %d (after %d warm-up "
           "and a barrier); busbw = algbw * 2(K-1)/K\n", cfg->iters, cfg->iters,
           cfg->warmup_iters);
    printf("#%11s %12s %7s %11s %12s %12s %7s\n", "size", "count", "type", "time(us)",
           "algbw(GB/s)", "busbw(GB/s)", "#wrong");
    fflush(stdout);
}

int bench_run(const struct bench_cfg *cfg, char *err)
{
    int k = cfg->world, rc = 0;
    size_t es = dtype_size(cfg->dtype), maxcount = cfg->maxbytes / (es ? es : 1);
    unsigned char *buf = NULL, *hbuf = NULL, *dbuf = NULL;
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
    /* buf: where the all-reduce runs (GPU memory for the GPU kinds); hbuf:
     * the host side of the check (buf itself on the host). */
    if ((rc = coll_alloc(co, (void **)&dbuf, maxcount * es, err)) != 0)
        goto out;
    buf = dbuf;
    hbuf = coll_on_device(co) ? malloc(maxcount * es) : buf;
    all = malloc((size_t)k * NSETTINGS * sizeof *all);
    dt = malloc((size_t)cfg->iters * sizeof *dt);
    bin = malloc((size_t)cfg->iters * sizeof *bin);
    bout = malloc((size_t)cfg->iters * sizeof *bout);
    if (!hbuf || !all || !dt || !bin || !bout) {
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
        size_t count = size / es;
        uint64_t bytes = count * es, wrong;
        double t0, total, cpu0, wall0, cpu, wall, mine[2], tmax = 0;
        struct hostload_sample machine[2];

        if (count > 0) {
            rc = coll_zero(co, buf, bytes, err);
            for (int i = 0; i < cfg->warmup_iters && rc == 0; i++)
                rc = coll_allreduce(co, buf, count, err);
            /* The machine's load (metrics.h), read before the barrier so
             * that no rank starts late for it. */
            hostload_sample_read(&machine[0]);
            /* The barrier: a tiny gather, so the loops start together. */
            mine[0] = 0;
            if (rc == 0)
                rc = coll_gather(co, all, mine, 1, err);
            cpu0 = clock_cpu_seconds();
            wall0 = t0 = clock_src_now(clk);
            for (int i = 0; i < cfg->iters && rc == 0; i++) {
                uint64_t o = cfg->link->bytes_out, in = cfg->link->bytes_in;
                double ti = clock_src_now(clk);
                rc = coll_allreduce(co, buf, count, err);
                dt[i] = clock_src_now(clk) - ti;
                bout[i] = cfg->link->bytes_out - o;
                bin[i] = cfg->link->bytes_in - in;
            }
            total = clock_src_now(clk) - t0;
            cpu = clock_cpu_seconds() - cpu0;
            wall = clock_src_now(clk) - wall0;
            hostload_sample_read(&machine[1]);
            if (rc != 0)
                goto fail;

            fill_pattern(hbuf, count, cfg->dtype, cfg->rank);
            if ((rc = coll_put(co, buf, hbuf, bytes, err)) != 0 ||
                (rc = coll_allreduce(co, buf, count, err)) != 0 ||
                (rc = coll_get(co, hbuf, buf, bytes, err)) != 0)
                goto fail;
            mine[0] = total;
            mine[1] = (double)count_wrong(hbuf, count, cfg->dtype, want);
            if ((rc = coll_gather(co, all, mine, 2, err)) != 0)
                goto fail;
            wrong = 0;
            for (int r = 0; r < k; r++) {
                tmax = fmax(tmax, all[2 * r]);
                wrong += (uint64_t)all[2 * r + 1];
            }
            wrong_total += wrong;
            if (cfg->rank == 0) {
                double t = tmax / cfg->iters;
                double algbw = (double)bytes / t / 1e9;
                double busbw = algbw * (k > 1 ? 2.0 * (k - 1) / k : 0.0);
                busbw_sum += busbw;
                nsizes++;
                printf("%12llu %12zu %7s %11.1f %12.3f %12.3f %7llu\n",
                       (unsigned long long)bytes, count,
                       cfg->dtype == DTYPE_F32 ? "float" : "double", t * 1e6, algbw, busbw,
                       (unsigned long long)wrong);
                fflush(stdout);
            }
            if (cfg->csv && (rc = write_record(cfg, bytes, dt, bin, bout, cpu, wall, machine, err)) != 0)
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
        err_say(err, "%llu elements differ from the closed-form sum",
            (unsigned long long)wrong_total);
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
    if (hbuf != dbuf)
        free(hbuf);
    coll_free(co, dbuf);
    return rc;
}
