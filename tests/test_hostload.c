/* test_hostload.c -- the /proc/stat parser and the machine-bound rule
 * (common/measure/hostload.h) on made-up samples: an idle machine is "link", a
 * job that fills the cores is "cpu", other processes (steal included) make
 * it "busy", and time against the model plays no part. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "base/err.h"
#include "measure/hostload.h"

/* A two-CPU /proc/stat with the given aggregate fields (user nice system
 * idle iowait irq softirq steal) and procs_running. */
static void stat_text(char *buf, size_t cap, const unsigned long long f[8], int running)
{
    snprintf(buf, cap,
             "cpu  %llu %llu %llu %llu %llu %llu %llu %llu 0 0\n"
             "cpu0 1 2 3 4 5 6 7 8 0 0\n"
             "cpu1 1 2 3 4 5 6 7 8 0 0\n"
             "intr 12345 0 0 7\nctxt 999\nbtime 1700000000\nprocesses 4242\n"
             "procs_running %d\nprocs_blocked 0\nsoftirq 1 2 3\n",
             f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], running);
}

static struct hostload_sample sample(const unsigned long long f[8], int running)
{
    char buf[1024];
    struct hostload_sample s;
    stat_text(buf, sizeof buf, f, running);
    if (hostload_parse_stat(buf, strlen(buf), &s) != 0)
        s.ok = 0;
    return s;
}

/* after: the sample that follows the one of fields t0 when the machine
 * spent these ticks in user, system, idle and steal, with `running`
 * processes runnable. */
static struct hostload_sample after(const unsigned long long t0[8], unsigned long long user,
                                    unsigned long long system, unsigned long long idle,
                                    unsigned long long steal, int running)
{
    unsigned long long t1[8];
    memcpy(t1, t0, sizeof t1);
    t1[0] += user;
    t1[2] += system;
    t1[3] += idle;
    t1[7] += steal;
    return sample(t1, running);
}

/* verdict_is: v says bound, and (by not NULL) why. */
static void verdict_is(const struct hostload_verdict *v, int bound, const char *by)
{
    T_EQ_I(v->bound, bound);
    if (by)
        T_STR(hostload_by_name(v->by), by);
}

static void test_parse(void)
{
    struct hostload_sample s;
    const char *real = "cpu  53026 72422 101263 246955 811 0 5447 0 0 0\n"
                       "cpu0 25975 34083 49511 127564 132 0 2728 0 0 0\n"
                       "procs_running 4\nprocs_blocked 0\n";

    T_CASE("hostload-1.1", "the cpu line: busy = user+nice+system+irq+softirq+steal, total adds idle+iowait");
    T_EQ_I(hostload_parse_stat(real, strlen(real), &s), 0);
    T_EQ_I(s.ok, 1);
    T_EQ_U(s.busy, 53026 + 72422 + 101263 + 0 + 5447 + 0);
    T_EQ_U(s.total, 53026 + 72422 + 101263 + 246955 + 811 + 5447);
    T_EQ_I(s.running, 4);

    T_CASE("hostload-1.2", "steal counts as busy; guest is not counted twice");
    const char *steal = "cpu  10 0 10 50 0 0 0 30 7 3\n";
    T_EQ_I(hostload_parse_stat(steal, strlen(steal), &s), 0);
    T_EQ_U(s.busy, 50);
    T_EQ_U(s.total, 100);
    T_EQ_I(s.running, -1);                          /* no procs_running line */

    T_CASE("hostload-1.3", "an old kernel's four fields; no newline at the end; no NUL needed");
    char four[] = "cpu 1 2 3 4XXXX";
    T_EQ_I(hostload_parse_stat(four, 11, &s), 0);   /* the X's are past len */
    T_EQ_U(s.busy, 6);
    T_EQ_U(s.total, 10);

    T_CASE("hostload-1.4", "garbage is refused, never half-read");
    const char *bad[] = {
        "", "\n\n", "cpu0 1 2 3 4\n", "cpu  1 2 3\n", "cpu  1 2 x 4\n", "cpu  1 -2 3 4\n",
        "cpu  18446744073709551616 0 0 0\n",        /* 2^64 */
        "cpu  18446744073709551615 1 0 0\n",        /* the sum overflows */
        "cpu  1 2 3 4\ncpu  1 2 3 4\n",             /* two aggregate lines */
        "cpu  1 2 3 4 5 6 7 8 9 10 11 12 z\n",
        "cpu  1 2 3 4\nprocs_running\n", "cpu  1 2 3 4\nprocs_running 3 4\n",
        "cpu  1 2 3 4\nprocs_running 99999999\n", "\x01\xff\x80garbage",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = hostload_parse_stat(bad[i], strlen(bad[i]), &s);
        if (rc != ERR_FORMAT || s.ok) {
            T_EQ_I(rc, ERR_FORMAT);
            printf("     input %zu was accepted\n", i);
        }
    }

    T_CASE("hostload-1.5", "/proc/loadavg's running count");
    const char *la = "2.49 2.16 2.17 4/111 13812\n";
    T_EQ_I(hostload_parse_loadavg(la, strlen(la)), 4);
    T_EQ_I(hostload_parse_loadavg("1 2 3", 5), -1);
    T_EQ_I(hostload_parse_loadavg("1 2 3 x/5 6", 11), -1);
    T_EQ_I(hostload_parse_loadavg("", 0), -1);

    T_CASE("hostload-1.6", "this machine's /proc/stat reads (total grows, busy <= total)");
    struct hostload_sample a, b;
    T_EQ_I(hostload_sample_read(&a), 0);
    volatile double x = 0;
    for (int i = 0; i < 20000000; i++)
        x += i;                                     /* let a tick pass */
    T_EQ_I(hostload_sample_read(&b), 0);
    T_TRUE(a.ok && b.ok);
    T_TRUE(b.total >= a.total && b.busy >= a.busy && a.busy <= a.total);
    T_TRUE(a.running >= 1);                         /* this reader, at least */
    T_END();
}

/* 2 CPUs, 100 ticks/s, a 10 s window: 2000 ticks in all. */
static const unsigned long long t0[8] = { 1000, 0, 1000, 8000, 0, 0, 0, 0 };

/* A window after t0 and the verdict on it: the ticks the machine spent
 * (user, system, idle, steal), procs_running at the end, the job's CPU
 * seconds, its ranks; the verdict (bound, by) and its shares (NAN: not
 * checked). */
struct decide_row {
    const char *id, *name;
    unsigned long long user, system, idle, steal;
    int running;
    double job_cpu;
    int ranks;
    int bound;
    const char *by;
    double machine_busy, job_busy, other_cores, run_queue;
};

static const struct decide_row decide_rows[] = {
    { "hostload-2.1", "an idle machine: link, whatever the time against the model",
      100, 100, 1800, 0, 2, 1.9, 4,             /* 1 s of user, all the job's */
      0, "link", 0.1, 0.095, 0.01, 0.5 },       /* run queue (0 + 1) / 2 */
    { "hostload-2.2", "the job's own processes fill the cores: cpu",
      900, 900, 200, 0, 3, 17.5, 4, 1, "cpu", 0.9, 0.875, NAN, NAN },   /* 90% busy */
    /* 2 burners: the machine 95% busy, the job 0.2 of a core. */
    { "hostload-2.3", "other processes busy (the job light): busy",
      1800, 100, 100, 0, 3, 2.0, 4, 1, "busy", NAN, NAN, 1.7, NAN },
    /* one core's worth; the job: 2 s; 60% busy */
    { "hostload-2.4", "one burner on two cores: not over 80%, still busy (others > half a core)",
      1000, 200, 800, 0, 2, 2.0, 4, 1, "busy", 0.6, NAN, NAN, NAN },
    { "hostload-2.5", "steal time counts as busy: busy",
      100, 0, 200, 1700, 1, 1.0, 4,             /* the hypervisor took it */
      1, "busy", 0.9, NAN, NAN, NAN },
};

/* decide_case: opens row r's case and checks its verdict. The caller may
 * add checks before the next case. */
static void decide_case(const struct decide_row *r)
{
    struct hostload_sample a = sample(t0, 1);
    struct hostload_sample b = after(t0, r->user, r->system, r->idle, r->steal, r->running);
    struct hostload_verdict v;

    T_CASE(r->id, r->name);
    hostload_decide(&a, &b, r->job_cpu, 10, 100, 2, r->ranks, NAN, &v);
    verdict_is(&v, r->bound, r->by);
    if (!isnan(r->machine_busy))
        T_NEAR(v.machine_busy, r->machine_busy, 1e-12);
    if (!isnan(r->job_busy))
        T_NEAR(v.job_busy, r->job_busy, 1e-12);
    if (!isnan(r->other_cores))
        T_NEAR(v.other_cores, r->other_cores, 1e-12);
    if (!isnan(r->run_queue))
        T_NEAR(v.run_queue, r->run_queue, 1e-12);
}

static void test_decide(void)
{
    struct hostload_verdict v;
    struct hostload_sample a = sample(t0, 1), b;

    for (int i = 0; i < 4; i++)
        decide_case(&decide_rows[i]);           /* 2.1 to 2.4, which goes on: */
    /* The same burner and job on 64 cores (64000 ticks in 10 s): the
     * others' one core leaves the job's 4 processes room. */
    {
        const unsigned long long big0[8] = { 0, 0, 0, 64000, 0, 0, 0, 0 };
        unsigned long long big1[8] = { 1000, 0, 200, 64000 + 62800, 0, 0, 0, 0 };
        struct hostload_sample a64 = sample(big0, 1), b64 = sample(big1, 1);
        hostload_decide(&a64, &b64, 2.0, 10, 100, 64, 4, NAN, &v);
        T_EQ_I(v.bound, 0);
        T_NEAR(v.other_cores, 1.0, 1e-9);
        big1[0] = 60000;                            /* now they fill it */
        big1[3] = 64000 + 3800;
        b64 = sample(big1, 1);
        hostload_decide(&a64, &b64, 2.0, 10, 100, 64, 4, NAN, &v);
        verdict_is(&v, 1, "busy");
    }

    decide_case(&decide_rows[4]);               /* 2.5 */

    T_CASE("hostload-2.6", "run queue: the job's own runnable ranks are no signal, others' are, "
           "where they used CPU");
    /* the job 1 s, others 2 s: 0.2 of a core */
    b = after(t0, 300, 0, 1700, 0, 1);
    hostload_decide(&a, &b, 1.0, 10, 100, 2, 8, 7, &v);   /* 7 runnable, 8 ranks */
    T_EQ_I(v.bound, 0);
    hostload_decide(&a, &b, 1.0, 10, 100, 2, 4, 5, &v);   /* 5 runnable, 4 ranks */
    verdict_is(&v, 1, "busy");
    /* The others used nothing over the window (0.001 of a core): the
     * instant's two extra runnable threads are not believed. A K = 16
     * PS on an idle machine: 17 processes, 18 runnable besides the reader. */
    b = after(t0, 101, 0, 1899, 0, 1);
    hostload_decide(&a, &b, 1.0, 10, 100, 2, 4, 5, &v);
    verdict_is(&v, 0, "link");
    hostload_decide(&a, &b, 1.0, 10, 100, 2, 17, 18, &v);
    T_EQ_I(v.bound, 0);
    T_NEAR(v.other_cores, 0.001, 1e-12);
    /* Without the machine's shares the run queue decides alone. */
    hostload_decide(NULL, NULL, 1.0, 10, 100, 2, 4, 5, &v);
    verdict_is(&v, 1, "busy");

    T_CASE("hostload-2.7", "no samples: the job's own share decides signal 1; machine fields NaN");
    hostload_decide(NULL, NULL, 1.9, 1.0, 100, 2, 2, NAN, &v);
    verdict_is(&v, 1, "cpu");
    T_TRUE(isnan(v.machine_busy) && isnan(v.other_cores) && isnan(v.run_queue));
    hostload_decide(&a, &a, 0.1, 1.0, 100, 2, 2, NAN, &v);  /* no tick between */
    T_EQ_I(v.bound, 0);
    T_TRUE(isnan(v.machine_busy));

    T_CASE("hostload-2.8", "a window under 50 ticks measures no share: no signal 1 or 2 from one tick");
    /* rd, 4 KiB, K = 4 on an idle 2-core machine: 11 ms timed, 2 ticks,
     * one of them busy (someone's), the job 1.4 ms of CPU. */
    b = after(t0, 1, 0, 1, 0, 1);
    hostload_decide(&a, &b, 0.0014, 0.011, 100, 2, 4, NAN, &v);
    verdict_is(&v, 0, "link");
    T_TRUE(isnan(v.machine_busy) && isnan(v.other_cores));
    T_NEAR(v.job_busy, 0.0014 / (0.011 * 2), 1e-12);
    /* 49 ticks: still none; 50: the shares count (others 0.9 of the cores) */
    b = after(t0, 44, 0, 5, 0, 1);
    hostload_decide(&a, &b, 0.01, 0.245, 100, 2, 4, NAN, &v);
    T_TRUE(isnan(v.machine_busy));
    b = after(t0, 44, 0, 6, 0, 1);
    hostload_decide(&a, &b, 0.01, 0.25, 100, 2, 4, NAN, &v);
    T_NEAR(v.machine_busy, 0.88, 1e-12);
    verdict_is(&v, 1, "busy");
    T_END();
}

/* Signal 4 (hostload.h): the job's own processes' run delay. */
static void test_wait(void)
{
    struct hostload_verdict v;
    struct hostload_sample a = sample(t0, 1), b;

    T_CASE("hostload-3.1", "schedstat's run delay: the second field; garbage is -1");
    T_EQ_I(hostload_parse_schedstat("7748083 1792024 2\n", 18), 1792024);
    T_EQ_I(hostload_parse_schedstat("5 0 0", 5), 0);
    T_EQ_I(hostload_parse_schedstat("5 77XXX", 3), 7);          /* only len bytes read */
    {
        const char *bad[] = { "", "12", "12 ", "x 5 1", "1 -5 1", "1 5x 1", "1\n5 1",
                              "1 9223372036854775808 1", "1 18446744073709551616 1" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
            T_EQ_I(hostload_parse_schedstat(bad[i], strlen(bad[i])), -1);
    }
    T_EQ_I(a.wait_ns, -1);                          /* /proc/stat alone does not know it */

    T_CASE("hostload-3.2", "run delay over 8% of the processes' time: bound; cpu (the job's own "
           "ranks) or busy (others used more); under it, or unknown: no signal");
    /* an idle machine: link */
    b = after(t0, 100, 100, 1800, 0, 2);
    hostload_decide(&a, &b, 1.9, 10, 100, 2, 16, NAN, &v);
    T_EQ_I(v.bound, 0);
    T_TRUE(isnan(v.wait_share));
    hostload_wait(&v, 4.0, 10, 16);                 /* 16 ranks waited 0.25 s each */
    T_NEAR(v.wait_share, 0.025, 1e-12);
    verdict_is(&v, 0, "link");
    hostload_wait(&v, 16.0, 10, 16);                /* 1 s each: 10% */
    T_NEAR(v.wait_share, 0.1, 1e-12);
    verdict_is(&v, 1, "cpu");
    hostload_decide(&a, &b, 1.9, 10, 100, 2, 16, NAN, &v);
    hostload_wait(&v, NAN, 10, 16);                 /* a process did not know its own */
    T_EQ_I(v.bound, 0);
    T_TRUE(isnan(v.wait_share));
    hostload_wait(&v, 16.0, 0, 16);                 /* no window */
    T_EQ_I(v.bound, 0);
    /* Others used more than the job (0.16 of a core against its 0.04),
     * not enough for signals 1-3; the job's ranks waited: busy. */
    b = after(t0, 100, 100, 1800, 0, 2);
    hostload_decide(&a, &b, 0.4, 10, 100, 2, 4, NAN, &v);
    T_EQ_I(v.bound, 0);
    hostload_wait(&v, 4.0, 10, 4);
    verdict_is(&v, 1, "busy");
    /* A verdict bound already keeps its reason. */
    b = after(t0, 900, 900, 200, 0, 3);
    hostload_decide(&a, &b, 17.5, 10, 100, 2, 4, NAN, &v);
    T_STR(hostload_by_name(v.by), "cpu");
    hostload_wait(&v, 0.0, 10, 4);
    verdict_is(&v, 1, "cpu");
    T_NEAR(v.wait_share, 0.0, 1e-12);

    T_CASE("hostload-3.3", "this process's run delay reads (when the kernel keeps it) and never "
           "goes back");
    {
        struct hostload_sample c, d;
        T_EQ_I(hostload_sample_read(&c), 0);
        T_EQ_I(hostload_sample_read(&d), 0);
        if (access("/proc/self/schedstat", R_OK) == 0) {
            T_TRUE(c.wait_ns >= 0);
            T_TRUE(d.wait_ns >= c.wait_ns);
        } else {
            T_EQ_I(c.wait_ns, -1);
        }
    }
    T_END();
}

int main(void)
{
    test_parse();
    test_decide();
    test_wait();
    return t_done();
}
