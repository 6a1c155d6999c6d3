/* test_compute.c -- the EMULATED compute-time model (compute.h): its
 * per-rank, per-step times (deterministic, the straggler's factor exact,
 * the jitter's log-mean and spread within bounds computed here, the pause
 * on the right steps), the flags' grammar, and the sleep the workload
 * makes of it, measured on a fake clock (no wall-clock assertion). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "train/cli_common.h"
#include "cli_line.h"
#include "base/clock.h"
#include "train/compute.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/workload.h"

/* ------------------------------------------------------------ fake clock */

/* A clock that only moves when slept on: the time a call sleeps is the
 * difference of two readings, exactly. */
static double fake_now(void *ctx)
{
    return *(double *)ctx;
}

static void fake_sleep_until(void *ctx, double t)
{
    double *now = ctx;
    if (t > *now)
        *now = t;
}

static struct compute_model model(double base, uint64_t seed)
{
    struct compute_model m;
    compute_model_init(&m);
    m.base = base;
    m.seed = seed;
    return m;
}

static void test_times(void)
{
    struct compute_model m = model(0.05, 7), m2 = model(0.05, 7), m3 = model(0.05, 8);
    int same = 1, differ = 0, exact = 1;

    T_CASE("compute-1.1", "t(r, s) is deterministic: same seed same times, another seed others");
    m.jitter = m2.jitter = m3.jitter = 0.3;
    for (int r = 0; r < 4; r++)
        for (uint64_t s = 0; s < 50; s++) {
            double a = compute_step_time(&m, r, s);
            same &= a == compute_step_time(&m2, r, s);
            same &= a == compute_step_time(&m, r, s);     /* no state between calls */
            differ += a != compute_step_time(&m3, r, s);
        }
    /* Taken backwards, the same values: a draw depends on (seed, r, s) only. */
    for (uint64_t s = 50; s-- > 0;)
        same &= compute_jitter_z(7, 2, s) == compute_jitter_z(7, 2, s);
    T_TRUE(same);
    T_EQ_I(differ, 200);
    T_TRUE(compute_jitter_z(7, 0, 3) != compute_jitter_z(7, 1, 3));
    T_TRUE(compute_jitter_z(7, 0, 3) != compute_jitter_z(7, 0, 4));

    T_CASE("compute-1.2", "no model: t = T; the straggler's factor exact, others untouched");
    m = model(0.05, 7);
    T_EQ_D(compute_step_time(&m, 0, 0), 0.05);
    T_EQ_D(compute_step_time(&m, 5, 99), 0.05);
    T_TRUE(!compute_model_active(&m));
    m.straggler_rank = 1;
    m.straggler_factor = 3;
    T_TRUE(compute_model_active(&m));
    for (uint64_t s = 0; s < 20; s++) {
        exact &= compute_step_time(&m, 1, s) == 0.05 * 3;
        exact &= compute_step_time(&m, 0, s) == 0.05;
        exact &= compute_step_time(&m, 2, s) == 0.05;
    }
    T_TRUE(exact);
    /* With jitter too, the straggler is F times what it would draw anyway. */
    m.jitter = 0.2;
    m2 = m;
    m2.straggler_rank = -1;
    exact = 1;
    for (uint64_t s = 0; s < 20; s++)
        exact &= fabs(compute_step_time(&m, 1, s) / compute_step_time(&m2, 1, s) - 3) < 1e-14;
    T_TRUE(exact);
    m.base = 0;
    T_EQ_D(compute_step_time(&m, 1, 0), 0);          /* no base: nothing */

    T_CASE("compute-1.3", "jitter: log J ~ N(-s^2/2, s^2), E[J] = 1, within 5-sigma bounds");
    {
        const double sig = 0.4;
        const int n = 40000;
        double sum = 0, sum2 = 0, sumj = 0;
        m = model(1.0, 11);
        m.jitter = sig;
        for (int i = 0; i < n; i++) {
            double j = compute_step_time(&m, i % 8, (uint64_t)(i / 8));
            double l = log(j);
            sum += l;
            sum2 += l * l;
            sumj += j;
        }
        double mean = sum / n, var = (sum2 - n * mean * mean) / (n - 1);
        double sd_j = sqrt(exp(sig * sig) - 1);     /* of the log-normal, mean 1 */
        /* mean of n normals: sd sig/sqrt(n); sample variance: sd
         * sig^2 sqrt(2/(n-1)); mean of J: sd sd_j/sqrt(n). */
        T_NEAR(mean, -sig * sig / 2, 5 * sig / sqrt(n));
        T_NEAR(var, sig * sig, 5 * sig * sig * sqrt(2.0 / (n - 1)));
        T_NEAR(sumj / n, 1.0, 5 * sd_j / sqrt(n));
    }

    T_CASE("compute-1.4", "--pause 2:0.5@3: rank 2 pauses on steps 2, 5, 8, ... only");
    {
        int right = 1;
        m = model(0.05, 7);
        m.pause_rank = 2;
        m.pause_time = 0.5;
        m.pause_every = 3;
        for (uint64_t s = 0; s < 30; s++) {
            int on = (s % 3) == 2;
            right &= compute_step_time(&m, 2, s) == (on ? 0.05 + 0.5 : 0.05);
            right &= compute_step_time(&m, 1, s) == 0.05;
        }
        T_TRUE(right);
        m.pause_every = 1;
        T_EQ_D(compute_step_time(&m, 2, 0), 0.55);
        T_EQ_D(compute_step_time(&m, 2, 1), 0.55);
    }
    T_END();
}

static void test_parse(void)
{
    char err[ERR_LEN];
    int r;
    double f, t;
    uint64_t e;

    T_CASE("compute-2.1", "RANK:FACTOR and RANK:TIME[@EVERY] parse; malformed ones refused");
    T_EQ_I(compute_parse_straggler("1:3", &r, &f, err), 0);
    T_EQ_I(r, 1);
    T_EQ_D(f, 3);
    T_EQ_I(compute_parse_straggler("0:1.5", &r, &f, err), 0);
    T_EQ_D(f, 1.5);
    T_EQ_I(compute_parse_pause("2:500ms@10", &r, &t, &e, err), 0);
    T_EQ_I(r, 2);
    T_NEAR(t, 0.5, 1e-15);
    T_EQ_U(e, 10);
    T_EQ_I(compute_parse_pause("0:1s", &r, &t, &e, err), 0);
    T_EQ_D(t, 1);
    T_EQ_U(e, 1);
    {
        static const char *const bad_s[] = { "", "1", "1:", ":3", "a:3", "1:x", "-1:3",
                                             "1:3:4", "1:nan" };
        static const char *const bad_p[] = { "", "1", "1:", ":1s", "1:1s@", "1:@3",
                                             "1:x", "1:1s@x", "1:-1s", "1:1s@-2" };
        for (size_t i = 0; i < sizeof bad_s / sizeof bad_s[0]; i++) {
            err[0] = '\0';
            T_EQ_I(compute_parse_straggler(bad_s[i], &r, &f, err), ERR_USAGE);
            T_TRUE(err[0] != '\0' && strchr(err, '\n') == NULL);
        }
        for (size_t i = 0; i < sizeof bad_p / sizeof bad_p[0]; i++) {
            err[0] = '\0';
            T_EQ_I(compute_parse_pause(bad_p[i], &r, &t, &e, err), ERR_USAGE);
            T_TRUE(err[0] != '\0' && strchr(err, '\n') == NULL);
        }
    }

    T_CASE("compute-2.2", "THE BOUNDS: factor 1..1000, jitter 0..2, pause time and EVERY");
    T_EQ_I(cli_bound_check("straggler-factor", 1, "1", err), 0);
    T_EQ_I(cli_bound_check("straggler-factor", 0.5, "0.5", err), ERR_USAGE);
    T_HAS(err, "out of range");
    T_EQ_I(cli_bound_check("straggler-factor", 1001, "1001", err), ERR_USAGE);
    T_EQ_I(cli_bound_check("jitter", 0, "0", err), 0);
    T_EQ_I(cli_bound_check("jitter", -1, "-1", err), ERR_USAGE);
    T_EQ_I(cli_bound_check("jitter", NAN, "nan", err), ERR_USAGE);
    T_EQ_I(cli_bound_check("jitter", 2.5, "2.5", err), ERR_USAGE);
    T_EQ_I(cli_bound_check("pause-time", 3601, "3601", err), ERR_USAGE);
    T_EQ_I(cli_bound_check("pause-every", 0, "0", err), ERR_USAGE);
    T_EQ_I(cli_bound_check("pause-every", 1e9, "1e9", err), 0);

    T_CASE("compute-2.3", "compute_describe names what is set, nothing when none");
    {
        char buf[256];
        struct compute_model m = model(0.05, 7);
        compute_describe(&m, buf, sizeof buf);
        T_STR(buf, "");
        m.straggler_rank = 1;
        m.straggler_factor = 3;
        m.jitter = 0.1;
        m.pause_rank = 0;
        m.pause_time = 0.25;
        m.pause_every = 10;
        compute_describe(&m, buf, sizeof buf);
        T_HAS(buf, "straggler rank 1 x3");
        T_HAS(buf, "jitter sigma 0.1");
        T_HAS(buf, "mean-preserving");
        T_HAS(buf, "pause rank 0 0.25 s every 10 steps");
        compute_describe(&m, buf, 8);               /* cut, still a string */
        T_EQ_U(strlen(buf), 7);
    }
    T_END();
}

/* ------------------------------------------------ the workload's sleep */

/* slept: fake seconds a workload_grad_add of [lo, hi) of `step` took. */
static double slept(struct workload *w, double *now, uint64_t step, uint64_t lo, uint64_t hi,
                    void *grad, const void *weights)
{
    double t0 = *now;
    workload_grad_add(w, weights, step, lo, hi, grad, NULL);
    return *now - t0;
}

static void test_workload_sleep(void)
{
    const double T = 0.05;
    double now = 100.0;
    struct clock_src fake = { fake_now, fake_sleep_until, &now };
    struct compute_model m;
    struct workload w;
    struct workload_cfg c = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F64, .seed = 7,
                              .params = 100, .batch = 64, .backward_time = T,
                              .world = 4, .rank = 1, .compute = &m };
    static double g[6337], wts[6337];

    T_CASE("compute-3.1", "synthetic, rank 1 of 4, --straggler 1:3: 3T per step on the fake clock, "
           "split over micro-batches");
    compute_model_init(&m);
    m.straggler_rank = 1;
    m.straggler_factor = 3;
    T_EQ_I(workload_create(&w, &c), 0);
    w.clock = &fake;
    T_NEAR(slept(&w, &now, 0, 16, 32, g, NULL), 3 * T, 1e-12);
    T_NEAR(slept(&w, &now, 1, 16, 20, g, NULL), 3 * T / 4, 1e-12);   /* micro 1 of 4 */
    T_NEAR(slept(&w, &now, 1, 20, 32, g, NULL), 3 * T * 3 / 4, 1e-12);
    T_NEAR(workload_backward_time(&w, 5), 3 * T, 1e-15);
    workload_destroy(&w);
    c.rank = 2;                                     /* not the straggler */
    T_EQ_I(workload_create(&w, &c), 0);
    w.clock = &fake;
    T_NEAR(slept(&w, &now, 0, 32, 48, g, NULL), T, 1e-12);
    workload_destroy(&w);

    T_CASE("compute-3.2", "jitter and pause in the sleep: exactly t(r, s) of the model");
    compute_model_init(&m);
    m.jitter = 0.3;
    m.pause_rank = 2;
    m.pause_time = 0.2;
    m.pause_every = 2;
    T_EQ_I(workload_create(&w, &c), 0);
    w.clock = &fake;
    {
        struct compute_model mm = m;
        mm.base = T;
        mm.seed = 7;
        for (uint64_t s = 0; s < 6; s++)
            T_NEAR(slept(&w, &now, s, 32, 48, g, NULL), compute_step_time(&mm, 2, s), 1e-12);
    }
    workload_destroy(&w);

    T_CASE("compute-3.3", "mlp and linreg: the sleep is on top of the real compute (fake clock: exactly t)");
    compute_model_init(&m);
    m.straggler_rank = 0;
    m.straggler_factor = 2;
    c.kind = WORKLOAD_MLP;
    c.params = 0;
    c.batch = 64;
    c.rank = 0;
    T_EQ_I(workload_create(&w, &c), 0);
    w.clock = &fake;
    workload_init_weights(&w, wts);
    T_NEAR(slept(&w, &now, 0, 0, 16, g, wts), 2 * T, 1e-12);
    workload_destroy(&w);
    c.kind = WORKLOAD_LINREG;
    c.batch = 64;
    T_EQ_I(workload_create(&w, &c), 0);
    w.clock = &fake;
    memset(wts, 0, sizeof wts);
    T_NEAR(slept(&w, &now, 0, 0, 16, g, wts), 2 * T, 1e-12);
    workload_destroy(&w);

    T_CASE("compute-3.4", "no backward time: the model does nothing (a server clears T)");
    c.kind = WORKLOAD_SYNTHETIC;
    c.params = 100;
    c.backward_time = 0;
    T_EQ_I(workload_create(&w, &c), 0);
    w.clock = &fake;
    T_EQ_D(slept(&w, &now, 0, 0, 16, g, NULL), 0);
    T_EQ_D(workload_backward_time(&w, 0), 0);
    workload_destroy(&w);
    T_END();
}

/* ------------------------------------------------------- command line */


static void test_flags(void)
{
    struct cli_common c;
    struct workload_cfg cfg;
    char err[ERR_LEN];
    const char *base = "--rank 0 --world 8 --workload synthetic --params 10";
    char line[400];

    T_CASE("compute-4.1", "--straggler, --jitter, --pause parse into the model; cli_workload_cfg hands it on");
    snprintf(line, sizeof line, "%s --backward-time 50ms --straggler 1:3 --jitter 0.1 "
             "--pause 7:200ms@5", base);
    T_EQ_I(cli_line_common(line, &c, err), 0);
    T_EQ_I(c.compute.straggler_rank, 1);
    T_EQ_D(c.compute.straggler_factor, 3);
    T_EQ_D(c.compute.jitter, 0.1);
    T_EQ_I(c.compute.pause_rank, 7);
    T_NEAR(c.compute.pause_time, 0.2, 1e-15);
    T_EQ_U(c.compute.pause_every, 5);
    cli_workload_cfg(&c, &cfg);
    T_TRUE(cfg.compute == &c.compute);
    cli_common_free(&c);

    T_CASE("compute-4.2", "bad values: one line naming the flag");
    {
        static const struct { const char *args, *flag, *say; } bad[] = {
            { "--backward-time 50ms --straggler 9:2", "--straggler", "not below the world size 8" },
            { "--backward-time 50ms --straggler 8:2", "--straggler", "not below" },
            { "--backward-time 50ms --straggler 1:0.5", "--straggler", "out of range" },
            { "--backward-time 50ms --jitter -1", "--jitter", "out of range" },
            { "--backward-time 50ms --jitter nan", "--jitter", "nan" },
            { "--backward-time 50ms --straggler 1-3", "--straggler", "RANK:FACTOR" },
            { "--backward-time 50ms --pause 8:1s", "--pause", "not below" },
            { "--backward-time 50ms --pause 1:1s@0", "--pause", "out of range" },
            { "--straggler 1:3", "--straggler", "base time" },
            { "--jitter 0.1", "--jitter", "base time" },
            { "--pause 1:1s", "--pause", "base time" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            snprintf(line, sizeof line, "%s %s", base, bad[i].args);
            T_EQ_I(cli_line_common(line, &c, err), ERR_USAGE);
            T_HAS(err, bad[i].flag);
            T_HAS(err, bad[i].say);
            T_TRUE(strchr(err, '\n') == NULL);
            cli_common_free(&c);
        }
    }
    T_END();
}

int main(void)
{
    test_times();
    test_parse();
    test_workload_sleep();
    test_flags();
    return t_done();
}
