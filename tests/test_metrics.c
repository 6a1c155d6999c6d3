/* test_metrics.c -- summaries, record files, the merge into one CSV row,
 * and the alpha-beta formulas it uses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "base/err.h"
#include "measure/metrics.h"
#include "measure/model.h"

static char dir[] = "/tmp/psring-metrics-XXXXXX";

static void rec_make(struct metrics_record *r, const char *system, const char *role,
                     int rank, int world, const double *combine, const double *ingress,
                     size_t n, uint64_t bin, uint64_t bout)
{
    metrics_record_init(r, n);
    snprintf(r->system, sizeof r->system, "%s", system);
    snprintf(r->role, sizeof r->role, "%s", role);
    snprintf(r->transport, sizeof r->transport, "tcp");
    if (strcmp(system, "ring") == 0)
        snprintf(r->algo, sizeof r->algo, "ring");
    r->rank = rank;
    r->world = world;
    r->bytes = 1000000;
    r->link_bw = 1e8;
    r->link_latency = 1e-4;
    r->cpu_s = 0.1;
    r->wall_s = 1.0;
    r->ncpu = 2;
    for (size_t i = 0; i < n; i++) {
        struct metrics_step s = { .step = 2 + i, .combine_s = combine ? combine[i] : NAN,
                                  .ingress_s = ingress ? ingress[i] : NAN,
                                  .egress_s = ingress ? ingress[i] / 2 : NAN,
                                  .bytes_in = bin, .bytes_out = bout, .step_s = NAN,
                                  .enter_t = NAN };
        metrics_record_add(r, &s);
    }
}

static void test_summarize(void)
{
    struct metrics_stats st;
    double odd[5] = { 5, 1, 4, 2, 3 }, even[4] = { 4, 1, 3, 2 };

    T_CASE("metrics-1.1", "min, median, max (odd and even counts)");
    T_EQ_I(metrics_summarize(odd, 5, &st), 0);
    T_EQ_D(st.min, 1);
    T_EQ_D(st.median, 3);
    T_EQ_D(st.max, 5);
    T_EQ_I(metrics_summarize(even, 4, &st), 0);
    T_EQ_D(st.median, 2.5);
    T_EQ_D(odd[0], 5);                 /* the input is not reordered */
    T_EQ_I(metrics_summarize(odd, 0, &st), ERR_USAGE);
    T_END();
}

static void test_record_file(void)
{
    struct metrics_record r, back;
    double c[3] = { 0.5, 0.25, 0.125 };
    char path[128], err[ERR_LEN] = "";
    FILE *f;

    T_CASE("metrics-2.1", "a record round-trips through its file");
    rec_make(&r, "ring", "rank", 3, 4, c, NULL, 3, 1500000, 1500000);
    snprintf(path, sizeof path, "%s/r3", dir);
    T_EQ_I(metrics_record_write(&r, path, err), 0);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_STR(back.system, "ring");
    T_STR(back.role, "rank");
    T_STR(back.algo, "ring");
    T_EQ_I(back.rank, 3);
    T_EQ_I(back.world, 4);
    T_EQ_U(back.bytes, 1000000);
    T_EQ_D(back.link_bw, 1e8);
    T_EQ_U(back.nsteps, 3);
    T_EQ_D(back.steps[2].combine_s, 0.125);
    T_TRUE(isnan(back.steps[2].ingress_s));
    T_EQ_U(back.steps[1].step, 3);
    T_EQ_I(back.machine0.ok, 0);                   /* none written, none read */
    metrics_record_free(&back);

    T_CASE("metrics-2.5", "the machine samples round-trip; a bad one is refused");
    r.machine0 = (struct hostload_sample){ .ok = 1, .total = 5000, .busy = 1200, .running = 3 };
    r.machine1 = (struct hostload_sample){ .ok = 1, .total = 7000, .busy = 1900, .running = -1 };
    T_EQ_I(metrics_record_write(&r, path, err), 0);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_EQ_I(back.machine0.ok, 1);
    T_EQ_U(back.machine0.total, 5000);
    T_EQ_U(back.machine0.busy, 1200);
    T_EQ_I(back.machine0.running, 3);
    T_EQ_U(back.machine1.busy, 1900);
    T_EQ_I(back.machine1.running, -1);
    metrics_record_free(&back);

    T_CASE("metrics-2.6", "step_s round-trips; a record without it (6 fields, older) reads NaN");
    r.steps[0].step_s = 0.75;
    T_EQ_I(metrics_record_write(&r, path, err), 0);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_EQ_D(back.steps[0].step_s, 0.75);
    T_TRUE(isnan(back.steps[1].step_s));          /* NaN written as -, read back */
    metrics_record_free(&back);
    f = fopen(path, "w");
    fputs("psring-record 1\nsystem ring\nrole rank\nrank 0\nworld 2\nstep 2 0.1 - - 5 5\n", f);
    fclose(f);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_EQ_U(back.nsteps, 1);
    T_TRUE(isnan(back.steps[0].step_s));
    metrics_record_free(&back);

    T_CASE("metrics-2.7", "enter_t and the clock id round-trip; a record without them (older) "
           "reads NaN and \"\"; a new record is on this machine's boot clock");
    T_TRUE(r.clock_id[0] != '\0');               /* the boot id, from rec_make's init */
    snprintf(r.clock_id, sizeof r.clock_id, "boot-a");
    r.steps[0].enter_t = 1234.5;
    r.steps[2].enter_t = 100000.000123456;        /* a day's uptime: every digit back */
    T_EQ_I(metrics_record_write(&r, path, err), 0);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_STR(back.clock_id, "boot-a");
    T_EQ_D(back.steps[0].enter_t, 1234.5);
    T_TRUE(isnan(back.steps[1].enter_t));
    T_EQ_D(back.steps[2].enter_t, 100000.000123456);
    metrics_record_free(&back);
    f = fopen(path, "w");
    fputs("psring-record 1\nsystem ring\nrole rank\nrank 0\nworld 2\nstep 2 0.1 - - 5 5 0.2\n", f);
    fclose(f);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_STR(back.clock_id, "");
    T_TRUE(isnan(back.steps[0].enter_t));
    metrics_record_free(&back);

    T_CASE("metrics-4.1", "ttt_s and wait_s round-trip; absent (an older record, or none) reads NaN; a negative one is refused");
    T_TRUE(isnan(r.ttt_s) && isnan(r.wait_s));    /* metrics_record_init: none */
    T_EQ_I(metrics_record_write(&r, path, err), 0);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_TRUE(isnan(back.ttt_s));
    T_TRUE(isnan(back.wait_s));
    metrics_record_free(&back);
    r.ttt_s = 12.5;
    r.wait_s = 0.03125;
    T_EQ_I(metrics_record_write(&r, path, err), 0);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_EQ_D(back.ttt_s, 12.5);
    T_EQ_D(back.wait_s, 0.03125);
    metrics_record_free(&back);
    f = fopen(path, "w");
    fputs("psring-record 1\nsystem ps\nrole server\nrank 0\nworld 2\nwait_s -1\n", f);
    fclose(f);
    T_EQ_I(metrics_record_read(&back, path, err), ERR_FORMAT);
    T_HAS(err, ":6:");
    metrics_record_free(&back);

    T_CASE("metrics-4.3", "the wait of a worker: mean and max; none is NaN; a negative time counts 0");
    {
        struct metrics_wait w = { 0, 0, 0 };
        T_TRUE(isnan(metrics_wait_mean(&w)));
        metrics_wait_add(&w, 0.5);
        metrics_wait_add(&w, 1.5);
        metrics_wait_add(&w, -1e-9);
        T_EQ_D(metrics_wait_mean(&w), 2.0 / 3);
        T_EQ_D(w.max, 1.5);
        T_EQ_U(w.n, 3);
    }

    T_CASE("metrics-2.2", "a full record refuses one more step (no growth in timed code)");
    struct metrics_step s = { 0 };
    T_EQ_I(metrics_record_add(&r, &s), ERR_USAGE);
    metrics_record_free(&r);

    T_CASE("metrics-2.3", "malformed records are refused naming file and line");
    const char *bad[] = {
        "not a record\n",
        "psring-record 2\nsystem ps\nworld 2\n",
        "psring-record 1\nsystem ps\nworld 2\nstep 1 0.1 - -\n",
        "psring-record 1\nsystem ps\nworld 2\nstep 1 abc - - 1 1\n",
        "psring-record 1\nsystem ps\nworld 2\nstep 1 0.1 - - 1 1 7 8 9\n",
        "psring-record 1\nsystem ps\nworld 2\nstep 1 0.1 - - 1 1 7 abc\n",
        "psring-record 1\nsystem ps\nworld 2\nclock 0123456789012345678901234567890123456789\n",
        "psring-record 1\nsystem ps\nworld 2\nstep 1 0.1 - - 1 1 abc\n",
        "psring-record 1\nsystem ps\nworld two\n",
        "psring-record 1\nsystem ps\nworld 2\nbogus 1\n",
        "psring-record 1\nsystem aVeryLongSystemName\nworld 2\n",
        "psring-record 1\nworld 2\n",
        "psring-record 1\nsystem ps\nworld 2\nmachine0 10 5\n",
        "psring-record 1\nsystem ps\nworld 2\nmachine0 10 11 1\n",    /* busy > total */
        "psring-record 1\nsystem ps\nworld 2\nmachine1 10 5 x\n",
        "psring-record 1\nsystem ps\nworld 2\nmachine1 10 5 1 2\n",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = fopen(path, "w");
        fputs(bad[i], f);
        fclose(f);
        err[0] = 0;
        int rc = metrics_record_read(&back, path, err);
        metrics_record_free(&back);
        if (rc != ERR_FORMAT) {
            T_EQ_I(rc, ERR_FORMAT);
            printf("     input %zu was accepted\n", i);
        }
        T_HAS(err, path);
    }

    T_CASE("metrics-2.4", "a missing file is an errno error naming the path");
    snprintf(path, sizeof path, "%s/missing", dir);
    T_TRUE(metrics_record_read(&back, path, err) < 0);
    metrics_record_free(&back);
    T_HAS(err, "missing");
    T_END();
}

static void test_merge(void)
{
    struct metrics_record recs[5];
    struct metrics_row row;
    double r0[3] = { 0.10, 0.30, 0.20 }, r1[3] = { 0.15, 0.05, 0.40 };
    double w0[3] = { 0.5, 0.7, 0.6 }, w1[3] = { 0.9, 0.4, 0.65 };
    double in[3] = { 0.3, 0.2, 0.25 };
    char err[ERR_LEN] = "", line[512];
    FILE *f;

    T_CASE("metrics-3.1", "ring: slowest rank per step, median over steps, busbw 2(K-1)/K");
    rec_make(&recs[0], "ring", "rank", 0, 2, r0, NULL, 3, 1000000, 1000000);
    rec_make(&recs[1], "ring", "rank", 1, 2, r1, NULL, 3, 7, 7);
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    /* per-step max: 0.15, 0.30, 0.40 -> median 0.30, min 0.15, max 0.40 */
    T_EQ_D(row.time_s, 0.30);
    T_EQ_D(row.time_min_s, 0.15);
    T_EQ_D(row.time_max_s, 0.40);
    T_EQ_U(row.steps, 3);
    T_EQ_I(row.k, 2);
    T_NEAR(row.algbw, 1e6 / 0.30, 1e-6);
    T_NEAR(row.busbw, 1e6 / 0.30, 1e-6);          /* 2(K-1)/K = 1 at K=2 */
    T_EQ_D(row.bytes_in, 1000000);                 /* rank 0's counters */
    T_TRUE(isnan(row.ingress_s));
    T_NEAR(row.model_s, model_ring(2, 1e6, 1e8, 1e-4), 1e-15);
    T_EQ_I(row.host_bound, 0);                     /* 0.2 CPU-s in 1 s on 2 CPUs */
    T_STR(row.bound_by, "link");                   /* 0.30 s vs ~0.01 s: no matter */
    T_TRUE(isnan(row.machine_busy));               /* no samples in the records */
    T_NEAR(row.job_busy, 0.1, 1e-12);

    T_CASE("metrics-3.10", "LAST ENTRY: with enter times on one clock, a step's combine is timed "
           "from the last process to enter; on two clocks, or without them, the slowest as before");
    for (int i = 0; i < 2; i++)
        metrics_record_free(&recs[i]);
    {
        /* Rank 0 enters 0.05 s before rank 1 and waits for it: its 0.15 s
         * all-reduce is 0.10 s of collective after the last entry. */
        const double c0[3] = { 0.15, 0.12, 0.20 }, c1[3] = { 0.10, 0.11, 0.09 };
        const double e0[3] = { 10.00, 11.00, 12.00 }, e1[3] = { 10.05, 11.00, 12.10 };
        rec_make(&recs[0], "ring", "rank", 0, 2, c0, NULL, 3, 7, 7);
        rec_make(&recs[1], "ring", "rank", 1, 2, c1, NULL, 3, 7, 7);
        for (int s = 0; s < 3; s++) {
            recs[0].steps[s].enter_t = e0[s];
            recs[1].steps[s].enter_t = e1[s];
        }
        snprintf(recs[0].clock_id, sizeof recs[0].clock_id, "boot-a");
        snprintf(recs[1].clock_id, sizeof recs[1].clock_id, "boot-a");
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        /* per step: max(0.15 - 0.05, 0.10) = 0.10; max(0.12, 0.11) = 0.12;
         * max(0.20 - 0.10, 0.09) = 0.10 -> median 0.10, max 0.12 */
        T_NEAR(row.time_s, 0.10, 1e-12);
        T_NEAR(row.time_max_s, 0.12, 1e-12);
        snprintf(recs[1].clock_id, sizeof recs[1].clock_id, "boot-b");   /* two machines */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_NEAR(row.time_s, 0.15, 1e-12);          /* the slowest: 0.15 0.12 0.20 */
        snprintf(recs[1].clock_id, sizeof recs[1].clock_id, "boot-a");
        recs[1].steps[0].enter_t = NAN;           /* a step without it: that step as before */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_NEAR(row.time_min_s, 0.10, 1e-12);
        T_NEAR(row.time_max_s, 0.15, 1e-12);
        for (int i = 0; i < 2; i++)
            metrics_record_free(&recs[i]);
        rec_make(&recs[0], "ring", "rank", 0, 2, r0, NULL, 3, 1000000, 1000000);
        rec_make(&recs[1], "ring", "rank", 1, 2, r1, NULL, 3, 7, 7);
    }

    T_CASE("metrics-3.8", "--coll records: coll round-trips, busbw uses its factor, model_s its formula");
    {
        struct metrics_record back;
        char path[64];
        snprintf(recs[0].coll, sizeof recs[0].coll, "reduce_scatter");
        snprintf(recs[1].coll, sizeof recs[1].coll, "reduce_scatter");
        snprintf(path, sizeof path, "%s/coll.rec", dir);
        T_EQ_I(metrics_record_write(&recs[0], path, err), 0);
        T_EQ_I(metrics_record_read(&back, path, err), 0);
        T_STR(back.coll, "reduce_scatter");
        metrics_record_free(&back);
        recs[0].world = recs[1].world = 4;         /* two of four ranks' records suffice */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_STR(row.coll, "reduce_scatter");
        T_NEAR(row.busbw, 1e6 / 0.30 * 0.75, 1e-6);     /* (K-1)/K */
        T_NEAR(row.model_s, 3 * 1e-4 + 0.75 * 1e6 / 1e8, 1e-15);
        snprintf(recs[0].coll, sizeof recs[0].coll, "broadcast");
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_NEAR(row.busbw, 1e6 / 0.30, 1e-6);            /* 1 */
        T_TRUE(isnan(row.model_s));                     /* the segment is not recorded */
        snprintf(recs[0].coll, sizeof recs[0].coll, "alltoall");
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_NEAR(row.busbw, 1e6 / 0.30 * 0.75, 1e-6);
        T_TRUE(isnan(row.model_s));                     /* nor the imbalance */
        /* --bench --algo rd: an all_reduce row costs rd's formula */
        snprintf(recs[0].coll, sizeof recs[0].coll, "all_reduce");
        snprintf(recs[1].coll, sizeof recs[1].coll, "all_reduce");
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_NEAR(row.model_s, model_ring(4, 1e6, 1e8, 1e-4), 1e-15);
        snprintf(recs[0].algo, sizeof recs[0].algo, "rd");
        snprintf(recs[1].algo, sizeof recs[1].algo, "rd");
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_STR(row.algo, "rd");
        T_NEAR(row.model_s, model_rd(4, 1e6, 1e8, 1e-4), 1e-15);
        T_NEAR(row.model_s, 2 * (1e-4 + 1e6 / 1e8), 1e-15);   /* log2 4 steps of a + n b */
        snprintf(recs[0].algo, sizeof recs[0].algo, "ring");
        snprintf(recs[1].algo, sizeof recs[1].algo, "ring");
        recs[0].coll[0] = recs[1].coll[0] = '\0';
        recs[0].world = recs[1].world = 2;
    }

    T_CASE("metrics-3.2", "without samples the job's own share flags it: cpu; no link limit: empty");
    recs[0].cpu_s = recs[1].cpu_s = 0.95;          /* 1.9 of 2 CPUs for 1 s */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_EQ_I(row.host_bound, 1);
    T_STR(row.bound_by, "cpu");
    recs[0].link_bw = recs[1].link_bw = 0;         /* no emulated link: empty */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_EQ_I(row.host_bound, -1);
    T_STR(row.bound_by, "");
    T_TRUE(isnan(row.model_s));
    T_NEAR(row.job_busy, 0.95, 1e-12);             /* measured all the same */

    T_CASE("metrics-3.6", "machine samples: the union window, the others' share, the run-queue median");
    {
        long hz = sysconf(_SC_CLK_TCK);
        /* 2 CPUs, 1 s: 2 hz ticks. Rank 0's window starts first and rank
         * 1's ends last; the machine is 95% busy, the job used 0.2 s. */
        uint64_t tot = 2 * (uint64_t)hz;
        recs[0].link_bw = recs[1].link_bw = 1e8;
        recs[0].cpu_s = recs[1].cpu_s = 0.1;
        recs[0].machine0 = (struct hostload_sample){ 1, 100000, 50000, 4, -1 };
        recs[1].machine0 = (struct hostload_sample){ 1, 100002, 50001, 2, -1 };
        recs[0].machine1 = (struct hostload_sample){ 1, 100000 + tot - 2, 50000, 3, -1 };
        recs[1].machine1 = (struct hostload_sample){ 1, 100000 + tot,
                                                     50000 + (uint64_t)(0.95 * (double)tot), 5, -1 };
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_NEAR(row.machine_busy, 0.95, 1e-9);
        T_NEAR(row.job_busy, 0.1, 1e-9);
        T_EQ_D(row.run_queue, 2.5);                /* median of 3, 1, 2, 4 */
        T_EQ_I(row.host_bound, 1);
        T_STR(row.bound_by, "busy");
        recs[1].machine1.busy = 50000 + (uint64_t)(0.12 * (double)tot);   /* quiet */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_EQ_I(row.host_bound, 0);
        T_STR(row.bound_by, "link");
        recs[1].machine1.ok = 0;                   /* one record without: left out */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_NEAR(row.machine_busy, 0.0, 1e-9);       /* rank 0's own window: 0 busy */

        T_CASE("metrics-5.4", "signal 4 in the merge: the ranks' run delays (wait0/wait1) over "
               "8% of their time (13.5%: yes, 2.5%: no) flag a quiet row cpu; one record without them: no signal; "
               "they round-trip through the record file");
        recs[1].machine1.ok = 1;                   /* the quiet window again: link */
        recs[0].machine0.wait_ns = 1000;
        recs[0].machine1.wait_ns = 1000 + 20000000;     /* 0.02 s of 1 s */
        recs[1].machine0.wait_ns = 0;
        recs[1].machine1.wait_ns = 30000000;            /* 0.03 s: 2.5% on average */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_EQ_I(row.host_bound, 0);
        T_STR(row.bound_by, "link");
        recs[1].machine1.wait_ns = 250000000;           /* 0.25 s: 13.5% on average */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_EQ_I(row.host_bound, 1);
        T_STR(row.bound_by, "cpu");
        recs[0].machine1.wait_ns = -1;                  /* rank 0 did not know its own */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_EQ_I(row.host_bound, 0);
        recs[0].machine1.wait_ns = 1000 + 20000000;
        {
            struct metrics_record back;
            char path[160];
            FILE *fw;
            snprintf(path, sizeof path, "%s/rwait", dir);
            T_EQ_I(metrics_record_write(&recs[1], path, err), 0);
            T_EQ_I(metrics_record_read(&back, path, err), 0);
            T_EQ_I(back.machine0.wait_ns, 0);
            T_EQ_I(back.machine1.wait_ns, 250000000);
            metrics_record_free(&back);
            recs[1].machine0.wait_ns = -1;               /* unknown: not written */
            T_EQ_I(metrics_record_write(&recs[1], path, err), 0);
            T_EQ_I(metrics_record_read(&back, path, err), 0);
            T_EQ_I(back.machine0.wait_ns, -1);
            T_EQ_I(back.machine1.wait_ns, 250000000);
            metrics_record_free(&back);
            fw = fopen(path, "w");
            T_TRUE(fw != NULL);
            if (fw) {
                fputs("psring-record 1\nsystem ring\nworld 2\nwait0 -5\n", fw);
                fclose(fw);
                T_EQ_I(metrics_record_read(&back, path, err), ERR_FORMAT);
                metrics_record_free(&back);
            }
        }
    }
    metrics_record_free(&recs[0]);
    metrics_record_free(&recs[1]);

    T_CASE("metrics-3.3", "ps: server ingress/egress medians, server byte counters, busbw K x algbw");
    rec_make(&recs[0], "ps", "server", -1, 2, NULL, in, 3, 2000000, 2000000);
    rec_make(&recs[1], "ps", "worker", 0, 2, w0, NULL, 3, 1000000, 1000000);
    rec_make(&recs[2], "ps", "worker", 1, 2, w1, NULL, 3, 1000000, 1000000);
    T_EQ_I(metrics_merge(recs, 3, &row, err), 0);
    T_EQ_D(row.time_s, 0.7);                       /* max per step: .9 .7 .65 */
    T_EQ_D(row.time_min_s, 0.65);
    T_EQ_D(row.ingress_s, 0.25);
    T_EQ_D(row.egress_s, 0.125);
    T_EQ_D(row.bytes_in, 2000000);
    T_NEAR(row.busbw, 2 * 1e6 / 0.7, 1e-6);
    /* one server of its own: its round-robin egress (model.h, model_ps_sched) */
    T_NEAR(row.model_s, model_ps_sched(2, 1, 1e6, 1e6, 1e8, 1e-4), 1e-15);
    T_TRUE(row.model_s < model_ps_step(2, 1e6, 1e8, 1e-4));
    T_STR(row.algo, "");
    {   /* a row whose one timed step is the first: the seeds' formula */
        struct metrics_row cold;

        for (int i = 0; i < 3; i++) {
            recs[i].nsteps = 1;
            recs[i].steps[0].step = 0;
        }
        T_EQ_I(metrics_merge(recs, 3, &cold, err), 0);
        T_NEAR(cold.model_s, model_ps_step(2, 1e6, 1e8, 1e-4), 1e-15);
        for (int i = 0; i < 3; i++) {
            recs[i].nsteps = 3;
            recs[i].steps[0].step = 2;
        }
    }

    T_CASE("metrics-3.4", "the row is docs/design.md's columns, empty where they do not apply");
    f = tmpfile();
    metrics_csv_header(f);
    metrics_row_write(f, &row);
    rewind(f);
    T_TRUE(fgets(line, sizeof line, f) != NULL);
    T_STR(line, "system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,"
                "ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,"
                "model_s,host_bound,bound_by,machine_busy,job_busy,run_queue,servers,placement,coll,step_s,"
                "ttt_s,wait_s,link_util,cpu_s_per_gb,compress\n");
    T_TRUE(fgets(line, sizeof line, f) != NULL);
    T_TRUE(strncmp(line, "ps,,tcp,2,1000000,3,0.7,0.65,0.9,0.25,0.125,", 44) == 0);
    {
        int commas = 0;
        for (char *p = line; *p; p++)
            commas += *p == ',';
        T_EQ_I(commas, 31);
        T_HAS(line, ",1,separate,,,,,,");  /* one server, on a host of its own; no
                                              step_s, ttt_s, wait_s, link_util */
        T_TRUE(!isnan(row.cpu_s_per_gb) && row.cpu_s_per_gb > 0);
    }
    fclose(f);

    T_CASE("metrics-3.7", "placement: the column and model_s follow it (model.h, PLACEMENTS)");
    {
        struct metrics_row pr = row;
        T_EQ_I(pr.servers, 1);
        T_NEAR(pr.model_s, model_ps_sched(2, 1, 1e6, 1e6, 1e8, 1e-4), 1e-15);
        pr.servers = 2;             /* K = 2 shards, one on each worker's host */
        T_EQ_I(metrics_row_place(&pr, "colocated", err), 0);
        T_STR(pr.placement, "colocated");
        T_NEAR(pr.model_s, 2 * (1e-4 + 0.5 * 1e6 / 1e8), 1e-15);   /* (K-1)/K n each phase */
        pr.servers = 4;             /* + 2 extra, equal shards: x = y = 1/4 */
        T_EQ_I(metrics_row_place(&pr, "colocated-even", err), 0);
        T_NEAR(pr.model_s, model_ps_mix(MODEL_TIME, 2, 2, 0.25, 1e6, 1e8, 1e-4), 1e-15);
        T_EQ_I(metrics_row_place(&pr, "separate", err), 0);
        T_NEAR(pr.model_s, 2 * (1e-4 + 1e6 / 1e8), 1e-15);         /* S = 4 > K: a worker's n */
        T_EQ_I(metrics_row_place(&pr, "star", err), ERR_USAGE);
        pr.servers = 1;
        T_EQ_I(metrics_row_place(&pr, "colocated", err), ERR_USAGE);
        T_HAS(err, "one on each worker's host");
    }

    T_CASE("metrics-3.9", "step_s: the slowest rank's whole step per step, median over steps; empty if a rank lacks it");
    {
        struct metrics_record sr[3];
        double s0[3] = { 0.6, 0.9, 0.7 }, s1[3] = { 0.8, 0.5, 0.75 };
        rec_make(&sr[0], "ring", "rank", 0, 2, r0, NULL, 3, 10, 10);
        rec_make(&sr[1], "ring", "rank", 1, 2, r1, NULL, 3, 10, 10);
        for (int i = 0; i < 3; i++) {
            sr[0].steps[i].step_s = s0[i];
            sr[1].steps[i].step_s = s1[i];
        }
        T_EQ_I(metrics_merge(sr, 2, &row, err), 0);
        T_EQ_D(row.step_s, 0.8);                  /* per step 0.8, 0.9, 0.75 */
        T_EQ_D(row.time_s, 0.30);                 /* the combine, as before */
        sr[1].steps[2].step_s = NAN;
        T_EQ_I(metrics_merge(sr, 2, &row, err), 0);
        T_TRUE(isnan(row.step_s));
        /* A server's record (no step_s) does not empty the workers'. */
        sr[1].steps[2].step_s = 0.75;
        rec_make(&sr[2], "ring", "server", 0, 2, NULL, in, 3, 10, 10);
        snprintf(sr[0].system, sizeof sr[0].system, "ps");
        snprintf(sr[1].system, sizeof sr[1].system, "ps");
        snprintf(sr[2].system, sizeof sr[2].system, "ps");
        T_EQ_I(metrics_merge(sr, 3, &row, err), 0);
        T_EQ_D(row.step_s, 0.8);
        for (int i = 0; i < 3; i++)
            metrics_record_free(&sr[i]);
    }

    T_CASE("metrics-4.2", "ttt_s: the smallest a record carries, empty when none does; wait_s: the largest; then link_util and cpu_s_per_gb, by name");
    {
        struct metrics_record sr[3];
        char buf[1024], *last;
        FILE *g;
        rec_make(&sr[0], "ps", "server", 0, 2, NULL, in, 3, 10, 10);
        rec_make(&sr[1], "ps", "worker", 0, 2, r0, NULL, 3, 10, 10);
        rec_make(&sr[2], "ps", "worker", 1, 2, r1, NULL, 3, 10, 10);
        T_EQ_I(metrics_merge(sr, 3, &row, err), 0);
        T_TRUE(isnan(row.ttt_s));
        T_TRUE(isnan(row.wait_s));
        sr[0].ttt_s = 2.5;
        sr[0].wait_s = 0.25;
        T_EQ_I(metrics_merge(sr, 3, &row, err), 0);
        T_EQ_D(row.ttt_s, 2.5);
        T_EQ_D(row.wait_s, 0.25);
        sr[1].ttt_s = 3.5;                        /* a later ttt_s does not win */
        sr[2].wait_s = 0.5;                       /* a larger wait does */
        T_EQ_I(metrics_merge(sr, 3, &row, err), 0);
        T_EQ_D(row.ttt_s, 2.5);
        T_EQ_D(row.wait_s, 0.5);
        g = tmpfile();
        metrics_csv_header(g);
        metrics_row_write(g, &row);
        rewind(g);
        T_TRUE(fgets(buf, sizeof buf, g) != NULL);
        T_TRUE(fgets(buf, sizeof buf, g) != NULL);
        last = strrchr(buf, ',');
        T_TRUE(last && strcmp(last, ",\n") == 0);                /* compress, last: empty */
        T_HAS(buf, ",1.66667e+06,\n");                           /* cpu_s_per_gb before it */
        T_HAS(buf, ",2.5,0.5,,");                /* ttt_s, wait_s, then link_util (none) */
        fclose(g);
        for (int i = 0; i < 3; i++)
            metrics_record_free(&sr[i]);
    }

    T_CASE("metrics-3.5", "records that disagree are refused with a reason");
    recs[2].world = 3;
    T_EQ_I(metrics_merge(recs, 3, &row, err), ERR_FORMAT);
    T_HAS(err, "disagree");
    recs[2].world = 2;
    recs[2].steps[1].step = 99;
    T_EQ_I(metrics_merge(recs, 3, &row, err), ERR_FORMAT);
    T_HAS(err, "step");
    recs[2].nsteps = 2;
    T_EQ_I(metrics_merge(recs, 3, &row, err), ERR_FORMAT);
    T_EQ_I(metrics_merge(recs, 1, &row, err), ERR_FORMAT);   /* server alone */
    T_HAS(err, "no worker");
    T_EQ_I(metrics_merge(recs, 0, &row, err), ERR_FORMAT);
    for (int i = 0; i < 3; i++)
        metrics_record_free(&recs[i]);
    T_END();
}

static void test_link_util(void)
{
    struct metrics_record recs[3], back;
    struct metrics_row row;
    double c[2] = { 0.5, 0.5 }, in[2] = { 0.3, 0.3 };
    char err[ERR_LEN] = "", path[160], boot[sizeof recs[0].clock_id];

    T_CASE("metrics-8.1", "link_util: the busiest ring rank's 1 - idle/span; below 0.95 bound_by "
           "link becomes sw, host_bound stays 0; cpu, busy keep precedence; no link: empty");
    rec_make(&recs[0], "ring", "rank", 0, 2, c, NULL, 2, 1000000, 1000000);
    rec_make(&recs[1], "ring", "rank", 1, 2, c, NULL, 2, 1000000, 1000000);
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_TRUE(isnan(row.link_util));                      /* no record carries one */
    T_STR(row.bound_by, "link");
    recs[0].link_span_s = recs[1].link_span_s = 1.0;
    recs[0].link_idle_s = 0.20;
    recs[1].link_idle_s = 0.10;
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.link_util, 0.90, 1e-12);                /* the busier of 0.8 and 0.9 */
    T_STR(row.bound_by, "sw");
    T_EQ_I(row.host_bound, 0);
    recs[1].link_idle_s = 0.04;                        /* idle 4%: the link set the pace */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.link_util, 0.96, 1e-12);
    T_STR(row.bound_by, "link");
    recs[1].link_idle_s = 0.10;
    recs[0].cpu_s = recs[1].cpu_s = 0.95;              /* the job's own CPU: cpu first */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_STR(row.bound_by, "cpu");
    recs[0].cpu_s = recs[1].cpu_s = 0.1;
    recs[0].link_bw = recs[1].link_bw = 0;             /* unpaced: empty */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_TRUE(isnan(row.link_util));
    T_STR(row.bound_by, "");
    recs[0].link_bw = recs[1].link_bw = 1e8;
    recs[0].link_idle_s = 1.5;                         /* more idle than span: clamped */
    recs[1].link_idle_s = 1.5;
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_EQ_D(row.link_util, 0.0);

    T_CASE("metrics-8.4", "link_util leaves out a ring rank's compute skew: the time it entered "
           "each timed combine before the last rank did (its link waited for a neighbour still "
           "computing, as time_s leaves out); only on one clock");
    memcpy(boot, recs[0].clock_id, sizeof boot);
    recs[0].link_idle_s = 0.20;                        /* entered 0.15 s early in all */
    recs[1].link_idle_s = 0.06;
    recs[0].steps[0].enter_t = 10.0;
    recs[0].steps[1].enter_t = 20.0;
    recs[1].steps[0].enter_t = 10.1;
    recs[1].steps[1].enter_t = 20.05;
    snprintf(recs[0].clock_id, sizeof recs[0].clock_id, "boot-x");
    snprintf(recs[1].clock_id, sizeof recs[1].clock_id, "boot-y");     /* two clocks */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);      /* skew unknown: not left out */
    T_NEAR(row.link_util, 0.94, 1e-12);
    T_STR(row.bound_by, "sw");
    snprintf(recs[1].clock_id, sizeof recs[1].clock_id, "boot-x");
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.link_util, 1.0 - 0.05 / 0.85, 1e-9);   /* rank 0: (0.20 - 0.15) / (1 - 0.15) */
    T_STR(row.bound_by, "sw");
    recs[0].link_idle_s = 0.18;
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.link_util, 1.0 - 0.03 / 0.85, 1e-9);
    T_STR(row.bound_by, "link");
    recs[0].link_idle_s = 0.10;                        /* less idle than skew: clamped */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.link_util, 1.0, 1e-12);
    recs[0].steps[0].enter_t = NAN;                    /* an entry unknown: not left out */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.link_util, 0.94, 1e-12);
    memcpy(recs[0].clock_id, boot, sizeof boot);       /* this machine's again */
    memcpy(recs[1].clock_id, boot, sizeof boot);
    for (int i = 0; i < 2; i++)
        recs[i].steps[0].enter_t = recs[i].steps[1].enter_t = NAN;

    T_CASE("metrics-8.5", "a tree's link_util is held against its own schedule's "
           "(model_link_util, the replay's busiest egress: leaves wait for the broadcast): at "
           "its model's share the row stays link, below 0.95 of it sw; the ring's share is 1");
    {
        double u = model_link_util("dbtree", 2, 1e6, 1e8, 1e-4);
        double span0 = recs[0].link_span_s, idle0 = recs[0].link_idle_s;
        double span1 = recs[1].link_span_s, idle1 = recs[1].link_idle_s;
        T_TRUE(u > 0.5 && u < 0.9);                    /* K = 2, 4 segments a tree */
        T_EQ_D(model_link_util("ring", 2, 1e6, 1e8, 1e-4), 1.0);
        T_EQ_D(model_link_util("hring:2", 4, 1e6, 1e8, 1e-4), 1.0);
        for (int i = 0; i < 2; i++) {
            snprintf(recs[i].algo, sizeof recs[i].algo, "dbtree");
            snprintf(recs[i].coll, sizeof recs[i].coll, "all_reduce");
            recs[i].link_span_s = 1.0;
            recs[i].link_idle_s = 1.0 - (u - 0.01);    /* 0.99 of the model's share */
        }
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_NEAR(row.link_util, u - 0.01, 1e-12);
        T_STR(row.bound_by, "link");
        recs[0].link_idle_s = recs[1].link_idle_s = 1.0 - 0.9 * u;     /* 0.9 of it */
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
        T_STR(row.bound_by, "sw");
        recs[0].link_idle_s = recs[1].link_idle_s = 1.0 - (u - 0.01);
        for (int i = 0; i < 2; i++)
            snprintf(recs[i].algo, sizeof recs[i].algo, "ring");
        T_EQ_I(metrics_merge(recs, 2, &row, err), 0);    /* the ring's own share is 1 */
        T_STR(row.bound_by, "sw");
        recs[0].coll[0] = recs[1].coll[0] = '\0';       /* as 8.4 left them */
        recs[0].link_span_s = span0;
        recs[0].link_idle_s = idle0;
        recs[1].link_span_s = span1;
        recs[1].link_idle_s = idle1;
    }

    T_CASE("metrics-8.2", "cpu_s_per_gb: each record's cpu_s less its compute_cpu_s over the GB it "
           "moved (in + out), the largest; the record's link and compute fields round-trip, a "
           "negative one is refused");
    /* rank 0: 0.1 s over 2 steps x 2 MB = 4 MB: 25 s/GB; rank 1: 0.3 s: 75 */
    recs[1].cpu_s = 0.3;
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.cpu_s_per_gb, 75.0, 1e-9);
    recs[1].compute_cpu_s = 0.2;                       /* training: its compute left out */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.cpu_s_per_gb, 25.0, 1e-9);              /* (0.3 - 0.2) / 4 MB, rank 0's 25 */
    recs[1].compute_cpu_s = 0.5;                       /* more than cpu_s (clock skew): 0 */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_NEAR(row.cpu_s_per_gb, 25.0, 1e-9);
    recs[1].compute_cpu_s = NAN;
    recs[0].cpu_s = recs[1].cpu_s = 0;                 /* the simulator: empty */
    T_EQ_I(metrics_merge(recs, 2, &row, err), 0);
    T_TRUE(isnan(row.cpu_s_per_gb));
    snprintf(path, sizeof path, "%s/util.rec", dir);
    recs[0].link_idle_s = 0.125;
    T_EQ_I(metrics_record_write(&recs[0], path, err), 0);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_EQ_D(back.link_span_s, 1.0);
    T_EQ_D(back.link_idle_s, 0.125);
    T_TRUE(isnan(back.compute_cpu_s));                 /* not written when none */
    metrics_record_free(&back);
    recs[0].compute_cpu_s = 0.0625;
    T_EQ_I(metrics_record_write(&recs[0], path, err), 0);
    T_EQ_I(metrics_record_read(&back, path, err), 0);
    T_EQ_D(back.compute_cpu_s, 0.0625);
    metrics_record_free(&back);
    {
        FILE *f = fopen(path, "w");
        T_TRUE(f != NULL);
        if (f) {
            fputs("psring-record 1\nsystem ring\nrole rank\nrank 0\nworld 2\nlink_idle_s -1\n", f);
            fclose(f);
        }
        T_EQ_I(metrics_record_read(&back, path, err), ERR_FORMAT);
        metrics_record_free(&back);
    }
    for (int i = 0; i < 2; i++)
        metrics_record_free(&recs[i]);

    T_CASE("metrics-8.3", "PS: only the servers' links are the critical path; a worker's idle "
           "link never flags the row");
    rec_make(&recs[0], "ps", "worker", 0, 2, c, NULL, 2, 1000000, 1000000);
    rec_make(&recs[1], "ps", "worker", 1, 2, c, NULL, 2, 1000000, 1000000);
    rec_make(&recs[2], "ps", "server", 0, 2, NULL, in, 2, 2000000, 2000000);
    recs[0].link_span_s = recs[1].link_span_s = 1.0;
    recs[0].link_idle_s = recs[1].link_idle_s = 0.6;     /* a worker's link: idle, as modelled */
    T_EQ_I(metrics_merge(recs, 3, &row, err), 0);
    T_TRUE(isnan(row.link_util));
    T_STR(row.bound_by, "link");
    recs[2].link_span_s = 1.0;
    recs[2].link_idle_s = 0.01;
    T_EQ_I(metrics_merge(recs, 3, &row, err), 0);
    T_NEAR(row.link_util, 0.99, 1e-12);
    T_STR(row.bound_by, "link");
    recs[2].link_idle_s = 0.30;                          /* the server's link stood idle */
    T_EQ_I(metrics_merge(recs, 3, &row, err), 0);
    T_NEAR(row.link_util, 0.70, 1e-12);
    T_STR(row.bound_by, "sw");
    for (int i = 0; i < 3; i++)
        metrics_record_free(&recs[i]);
    T_END();
}

static void test_model(void)
{
    T_CASE("metrics-6.1", "server link carries K n; ring link 2(K-1)/K n");
    T_EQ_D(model_ps_link_bytes(8, 1e6), 8e6);
    T_EQ_D(model_ring_link_bytes(2, 1e6), 1e6);
    T_EQ_D(model_ring_link_bytes(4, 1e6), 1.5e6);
    T_EQ_D(model_ring_link_bytes(1, 1e6), 0);

    T_CASE("metrics-6.2", "the seed's exercise: P=2e9 x 2 B, 25 GB/s, K=512");
    /* server ingress: 512 x 4e9 B / 25e9 B/s = 81.92 s; ring ~0.32 s */
    T_NEAR(model_ps_ingress(512, 4e9, 25e9, 0), 81.92, 1e-9);
    T_NEAR(model_ring(512, 4e9, 25e9, 0), 2.0 * 511 / 512 * 4e9 / 25e9, 1e-12);
    T_NEAR(model_ring(4, 0, 1e9, 1e-3), 6e-3, 1e-15);    /* 2(K-1) latencies */
    T_NEAR(model_ps_step(4, 1e6, 1e9, 1e-3), 2 * (1e-3 + 4e-3), 1e-15);

    T_CASE("metrics-6.3", "recursive doubling: log2 K whole-vector exchanges, +2 to fold");
    T_NEAR(model_rd(8, 1e6, 1e9, 1e-3), 3 * (1e-3 + 1e-3), 1e-15);
    T_NEAR(model_rd(2, 1e6, 1e9, 0), 1e-3, 1e-15);
    T_NEAR(model_rd(6, 0, 1e9, 1e-3), 4e-3, 1e-15);     /* 2 + fold in and out */
    T_NEAR(model_rd(1, 1e6, 1e9, 1e-3), 0, 1e-15);
    T_END();
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_summarize();
    test_record_file();
    test_merge();
    test_link_util();
    test_model();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", dir);
    return t_done();
}
