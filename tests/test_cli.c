/* test_cli.c -- the command-line module: value parsers, the flag loop,
 * rank discovery from the environment, and the cross-checks of
 * cli_common_finish (RELIABILITY.md, "Bad input to try against the command
 * line").
 *
 * Each refusal is asserted by its code (ERR_USAGE), by the output being
 * left untouched, and, where the message is the point, by its text naming
 * the flag or variable. Environment cases clear every launcher variable
 * first, so the result does not depend on where the test runs (under srun,
 * SLURM_* would otherwise leak in).
 */
#include "check.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/cli_common.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/workload.h"

static const char *const launcher_vars[] = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
    "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
    "MASTER_ADDR", "MASTER_PORT",
};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
        unsetenv(launcher_vars[i]);
}

/* A command line split at spaces. The words live in a static buffer, so
 * CLI_STRING results stay valid until the next call. */
static char line_buf[4096];
static char *line_argv[128];

static int split(const char *line)
{
    int argc = 0;
    line_argv[argc++] = "prog";
    snprintf(line_buf, sizeof line_buf, "%s", line);
    for (char *p = strtok(line_buf, " "); p; p = strtok(NULL, " "))
        line_argv[argc++] = p;
    line_argv[argc] = NULL;
    return argc;
}

/* parse: defaults, then LINE against the common table. */
static int parse(const char *line, struct cli_common *c, char *err)
{
    const struct cli_opt *tables[2];
    int argc = split(line);
    cli_common_defaults(c);
    tables[0] = cli_common_opts(c);
    tables[1] = NULL;
    err[0] = '\0';
    return cli_parse(argc, line_argv, tables, err);
}

/* parse_finish: parse, then cli_common_finish if the parse succeeded. */
static int parse_finish(const char *line, struct cli_common *c, char *err)
{
    int rc = parse(line, c, err);
    if (rc != 0)
        return rc;
    return cli_common_finish(c, err);
}

/* ------------------------------------------------------------- integers */

static void test_integers(void)
{
    char err[ERR_LEN];
    long long v;
    uint64_t u;

    T_CASE("cli-1.1", "integers in range parse exactly");
    v = -7;
    T_EQ_I(cli_parse_ll("0", 0, 10, &v, err), 0);
    T_EQ_I(v, 0);
    T_EQ_I(cli_parse_ll("1", 1, 65536, &v, err), 0);
    T_EQ_I(v, 1);
    T_EQ_I(cli_parse_ll("65536", 1, 65536, &v, err), 0);
    T_EQ_I(v, 65536);
    T_EQ_I(cli_parse_ll("-5", -10, 10, &v, err), 0);
    T_EQ_I(v, -5);
    T_EQ_I(cli_parse_ll("007", 0, 10, &v, err), 0);
    T_EQ_I(v, 7);
    T_EQ_I(cli_parse_ll("9223372036854775807", LLONG_MIN, LLONG_MAX, &v, err), 0);
    T_EQ_I(v, LLONG_MAX);
    T_EQ_I(cli_parse_ll("-9223372036854775808", LLONG_MIN, LLONG_MAX, &v, err), 0);
    T_TRUE(v == LLONG_MIN);
    T_END();

    T_CASE("cli-1.2", "non-integers are refused and leave the output alone");
    {
        static const char *const bad[] = {
            "", "abc", "10abc", " 5", "5 ", "+5", "0x10", "1.5", "1e3", "-", "--1",
            "5\n", "\t5", "1,000", "١",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            v = 42;
            err[0] = '\0';
            T_EQ_I(cli_parse_ll(bad[i], LLONG_MIN, LLONG_MAX, &v, err), ERR_USAGE);
            T_EQ_I(v, 42);
            T_TRUE(err[0] != '\0');
        }
        T_EQ_I(cli_parse_ll("10abc", 0, 100, &v, err), ERR_USAGE);
        T_HAS(err, "'10abc'");
        T_HAS(err, "not an integer");
        T_EQ_I(cli_parse_ll("2.5", 0, 100, &v, err), ERR_USAGE);
        T_HAS(err, "whole number");
    }
    T_END();

    T_CASE("cli-1.3", "K = 0, negative, huge: out of range with the bound named");
    T_EQ_I(cli_parse_ll("0", 1, 65536, &v, err), ERR_USAGE);
    T_HAS(err, "at least 1");
    T_EQ_I(cli_parse_ll("-1", 1, 65536, &v, err), ERR_USAGE);
    T_HAS(err, "at least 1");
    T_EQ_I(cli_parse_ll("65537", 1, 65536, &v, err), ERR_USAGE);
    T_HAS(err, "at most 65536");
    T_EQ_I(cli_parse_ll("99999999999999999999999", 1, 65536, &v, err), ERR_USAGE);
    T_HAS(err, "at most 65536");
    T_EQ_I(cli_parse_ll("9223372036854775808", LLONG_MIN, LLONG_MAX, &v, err), ERR_USAGE);
    T_EQ_I(cli_parse_ll("-9223372036854775809", LLONG_MIN, LLONG_MAX, &v, err), ERR_USAGE);
    T_HAS(err, "too small");
    T_END();

    T_CASE("cli-1.4", "unsigned: the full 64-bit range, no wrap of negatives");
    u = 1;
    T_EQ_I(cli_parse_u64("0", &u, err), 0);
    T_EQ_U(u, 0);
    T_EQ_I(cli_parse_u64("18446744073709551615", &u, err), 0);
    T_EQ_U(u, UINT64_MAX);
    u = 9;
    T_EQ_I(cli_parse_u64("18446744073709551616", &u, err), ERR_USAGE);
    T_HAS(err, "too large");
    T_EQ_I(cli_parse_u64("-1", &u, err), ERR_USAGE);
    T_HAS(err, "negative");
    T_EQ_I(cli_parse_u64("+1", &u, err), ERR_USAGE);
    T_EQ_I(cli_parse_u64(" 1", &u, err), ERR_USAGE);
    T_EQ_I(cli_parse_u64("1 ", &u, err), ERR_USAGE);
    T_EQ_I(cli_parse_u64("1K", &u, err), ERR_USAGE);
    T_EQ_U(u, 9);
    T_END();

    T_CASE("cli-1.5", "a message stays one line and short whatever the value");
    T_EQ_I(cli_parse_ll("5\nrm -rf /", 0, 9, &v, err), ERR_USAGE);
    T_TRUE(strchr(err, '\n') == NULL);
    T_HAS(err, "\\x0a");
    {
        char longv[1000];
        memset(longv, '7', sizeof longv - 1);
        longv[sizeof longv - 1] = '\0';
        T_EQ_I(cli_parse_ll(longv, 0, 9, &v, err), ERR_USAGE);
        T_HAS(err, "...");
        T_TRUE(strlen(err) < 120);
    }
    T_END();
}

/* ---------------------------------------------------------------- sizes */

static void test_sizes(void)
{
    char err[ERR_LEN];
    uint64_t u;

    T_CASE("cli-2.1", "sizes: bare bytes and powers of 1024");
    {
        static const struct { const char *s; uint64_t want; } ok[] = {
            { "0", 0 }, { "4096", 4096 }, { "4K", 4096 }, { "4k", 4096 },
            { "4KiB", 4096 }, { "64M", 64ull << 20 }, { "64MiB", 64ull << 20 },
            { "1G", 1ull << 30 }, { "1g", 1ull << 30 }, { "1GiB", 1ull << 30 },
            { "2T", 2ull << 40 }, { "2TiB", 2ull << 40 },
            { "16777215T", 16777215ull << 40 },
            { "18446744073709551615", UINT64_MAX },
            { "18014398509481983K", UINT64_MAX - 1023 },
        };
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
            u = 12345;
            T_EQ_I(cli_parse_size(ok[i].s, &u, err), 0);
            T_EQ_U(u, ok[i].want);
        }
    }
    T_END();

    T_CASE("cli-2.2", "sizes: negative, fractional, garbage and spaces refused");
    {
        static const char *const bad[] = {
            "-1", "-4K", "-0", "abc", "10abc", " 5", "5 ", "", "1.5G", "K", "4Ki",
            "4kib", "4KIB", "4 K", "4K ", "+4K", "0x10", "4B", "1e3", "inf", "nan", "4G/s",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            u = 12345;
            err[0] = '\0';
            T_EQ_I(cli_parse_size(bad[i], &u, err), ERR_USAGE);
            T_EQ_U(u, 12345);
            T_TRUE(err[0] != '\0');
        }
        T_EQ_I(cli_parse_size("-4K", &u, err), ERR_USAGE);
        T_HAS(err, "negative");
        T_EQ_I(cli_parse_size("1.5G", &u, err), ERR_USAGE);
        T_HAS(err, "whole number");
        T_EQ_I(cli_parse_size("10abc", &u, err), ERR_USAGE);
        T_HAS(err, "'10abc' is not a size");
    }
    T_END();

    T_CASE("cli-2.3", "sizes: overflow of the digits or of digits x unit refused");
    u = 12345;
    T_EQ_I(cli_parse_size("17179869184G", &u, err), ERR_USAGE);   /* 2^34 * 2^30 */
    T_HAS(err, "too large");
    T_EQ_I(cli_parse_size("16777216T", &u, err), ERR_USAGE);      /* 2^24 * 2^40 */
    T_EQ_I(cli_parse_size("18014398509481984K", &u, err), ERR_USAGE);
    T_EQ_I(cli_parse_size("18446744073709551616", &u, err), ERR_USAGE);
    T_EQ_I(cli_parse_size("99999999999999999999999999999G", &u, err), ERR_USAGE);
    T_EQ_U(u, 12345);
    T_END();

    T_CASE("cli-2.4", "sizes: KB/MB/GB refused as ambiguous, with the fix named");
    T_EQ_I(cli_parse_size("64MB", &u, err), ERR_USAGE);
    T_HAS(err, "64M or 64MiB");
    T_EQ_I(cli_parse_size("4KB", &u, err), ERR_USAGE);
    T_HAS(err, "powers of 1024");
    T_END();
}

/* ---------------------------------------------------------------- rates */

static void test_rates(void)
{
    char err[ERR_LEN];
    double d;

    T_CASE("cli-3.1", "rates: bits, decimal and binary bytes, exact factors");
    {
        static const struct { const char *s; double want; } ok[] = {
            { "500Mbit", 62.5e6 }, { "1Gbit/s", 125e6 }, { "1Gbit", 125e6 },
            { "100MB", 1e8 }, { "100MB/s", 1e8 }, { "1GiB", 1073741824.0 },
            { "1GiB/s", 1073741824.0 }, { "100MiB", 104857600.0 },
            { "1.5Gbit", 1.875e8 }, { "0", 0 }, { "1000", 1000 }, { "1000/s", 1000 },
            { "1000B/s", 1000 }, { "100mbit", 12.5e6 }, { "8Kbit", 1000 },
            { "10KB/s", 1e4 }, { "2KiB", 2048 }, { "1e9", 1e9 }, { "2.5GB", 2.5e9 },
            { ".5MB", 5e5 },
        };
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
            d = -1;
            T_EQ_I(cli_parse_rate(ok[i].s, &d, err), 0);
            T_EQ_D(d, ok[i].want);
        }
    }
    T_END();

    T_CASE("cli-3.2", "rates: negative, NaN, Inf, garbage, spaces refused");
    {
        static const char *const bad[] = {
            "-1Mbit", "-0", "-.5MB", "nan", "NaN", "inf", "Inf", "infinity", "abc", "10abc",
            " 5", "5 ", "1e400", "0x10", "1Gbit/s/s", "/s", "", "1 Gbit", "Gbit", "1Gbits",
            "1Tbit", "1.", "1e", "1e+",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            d = -7;
            err[0] = '\0';
            int rc = cli_parse_rate(bad[i], &d, err);
            /* "1." is a number (1.0) for strtod; accepted by design. */
            if (strcmp(bad[i], "1.") == 0) {
                T_EQ_I(rc, 0);
                T_EQ_D(d, 1.0);
                continue;
            }
            T_EQ_I(rc, ERR_USAGE);
            T_EQ_D(d, -7);
            T_TRUE(err[0] != '\0');
        }
        T_EQ_I(cli_parse_rate("10abc", &d, err), ERR_USAGE);
        T_HAS(err, "'10abc' is not a rate (examples:");
        T_EQ_I(cli_parse_rate("-1Mbit", &d, err), ERR_USAGE);
        T_HAS(err, "negative");
    }
    T_END();

    T_CASE("cli-3.3", "rates: bits-or-bytes suffixes refused as ambiguous");
    T_EQ_I(cli_parse_rate("100M", &d, err), ERR_USAGE);
    T_HAS(err, "ambiguous");
    T_HAS(err, "100Mbit");
    T_HAS(err, "100MB");
    T_EQ_I(cli_parse_rate("100Mb", &d, err), ERR_USAGE);
    T_HAS(err, "ambiguous");
    T_EQ_I(cli_parse_rate("1gbps", &d, err), ERR_USAGE);
    T_HAS(err, "1Gbit");
    T_END();
}

/* ---------------------------------------------------------------- times */

static void test_times(void)
{
    char err[ERR_LEN];
    double d;

    T_CASE("cli-4.1", "times: us, ms, s, bare seconds");
    d = -1;
    T_EQ_I(cli_parse_time("50us", &d, err), 0);
    T_EQ_D(d, 50e-6);
    T_EQ_I(cli_parse_time("2ms", &d, err), 0);
    T_EQ_D(d, 2e-3);
    T_EQ_I(cli_parse_time("0.5ms", &d, err), 0);
    T_EQ_D(d, 0.5e-3);
    T_EQ_I(cli_parse_time("1.5s", &d, err), 0);
    T_EQ_D(d, 1.5);
    T_EQ_I(cli_parse_time("10", &d, err), 0);
    T_EQ_D(d, 10);
    T_EQ_I(cli_parse_time("0", &d, err), 0);
    T_EQ_D(d, 0);
    T_EQ_I(cli_parse_time("1e-3", &d, err), 0);
    T_EQ_D(d, 1e-3);
    T_END();

    T_CASE("cli-4.2", "times: negative, NaN, Inf, unknown units refused");
    {
        static const char *const bad[] = {
            "-1s", "-0", "nan", "inf", "-inf", "1h", "1m", "1min", "5 s", " 5", "5 ",
            "1e999", "ms", "", "1ns", "1S", "1.5.s", "1sec",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            d = -7;
            err[0] = '\0';
            T_EQ_I(cli_parse_time(bad[i], &d, err), ERR_USAGE);
            T_EQ_D(d, -7);
            T_TRUE(err[0] != '\0');
        }
        T_EQ_I(cli_parse_time("-1s", &d, err), ERR_USAGE);
        T_HAS(err, "negative");
        T_EQ_I(cli_parse_time("1h", &d, err), ERR_USAGE);
        T_HAS(err, "'1h' is not a time");
    }
    T_END();

    T_CASE("cli-4.3", "doubles: finite, signs and exponents; lists of weights");
    d = 0;
    T_EQ_I(cli_parse_double("-0.25", &d, err), 0);
    T_EQ_D(d, -0.25);
    T_EQ_I(cli_parse_double("1e-3", &d, err), 0);
    T_EQ_D(d, 1e-3);
    T_EQ_I(cli_parse_double("nan", &d, err), ERR_USAGE);
    T_EQ_I(cli_parse_double("1e309", &d, err), ERR_USAGE);
    T_EQ_I(cli_parse_double("+1", &d, err), ERR_USAGE);
    T_EQ_D(d, 1e-3);
    {
        double *w = NULL;
        int n = -1;
        T_EQ_I(cli_parse_list("1,2.5,0.5", &w, &n, err), 0);
        T_EQ_I(n, 3);
        if (w && n == 3) {
            T_EQ_D(w[0], 1);
            T_EQ_D(w[1], 2.5);
            T_EQ_D(w[2], 0.5);
        }
        free(w);
        w = NULL;
        n = -1;
        T_EQ_I(cli_parse_list("3", &w, &n, err), 0);
        T_EQ_I(n, 1);
        free(w);
        w = NULL;
        n = -1;
        static const char *const bad[] = {
            "", ",", "1,", ",1", "1,,2", "1,-1", "1,0", "1,nan", "1,inf", "1, 2", "1;2",
            "a,b",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            T_EQ_I(cli_parse_list(bad[i], &w, &n, err), ERR_USAGE);
            T_TRUE(w == NULL);
            T_EQ_I(n, -1);
        }
        T_EQ_I(cli_parse_list("1,0", &w, &n, err), ERR_USAGE);
        T_HAS(err, "entry 2");
    }
    T_END();
}

/* ----------------------------------------------------------- flag loop */

static void test_flags(void)
{
    struct cli_common c;
    char err[ERR_LEN];

    T_CASE("cli-5.1", "defaults");
    T_EQ_I(parse("", &c, err), 0);
    T_EQ_I(c.rank, -1);
    T_EQ_I(c.world, -1);
    T_EQ_I(c.local_rank, -1);
    T_EQ_I(c.workload, WORKLOAD_LINREG);
    T_EQ_U(c.params, 0);
    T_EQ_U(c.batch, 0);
    T_TRUE(c.shard_weights == NULL);
    T_EQ_I(c.micro, 1);
    T_EQ_I(c.steps, 10);
    T_EQ_I(c.warmup, -1);                 /* auto until finish */
    T_EQ_D(c.lr, 0.05);
    T_EQ_U(c.seed, 7);
    T_EQ_I(c.dtype, DTYPE_F64);
    T_EQ_D(c.link_bw, 0);
    T_EQ_D(c.link_latency, 0);
    T_EQ_D(c.timeout, 30);
    T_TRUE(c.csv == NULL);
    T_TRUE(c.weights_out == NULL);
    T_TRUE(c.loss_time_out == NULL);
    T_TRUE(isnan(c.target_loss));       /* off */
    {
        /* The table has exactly the 17 common flags of docs/design.md, plus
         * --backward-time and --layers (issue 6: the EMULATED backward
         * pass, the synthetic workload's layers) and the compute-time
         * model's --straggler, --jitter, --pause (issue 16), and the
         * EMULATED host link's --link-host (issue 15), and
         * the optimizer's --optimizer, --momentum, --beta1, --beta2, --eps
         * (issue 18), and the metrics' --loss-time-out, --target-loss
         * (issue 16). */
        static const char *const names[] = {
            "rank", "world", "workload", "params", "batch", "shard-weights", "micro",
            "steps", "warmup", "lr", "seed", "dtype", "link-bw", "link-latency", "link-host",
            "timeout", "csv", "weights-out", "backward-time", "straggler", "jitter", "pause",
            "layers", "secret-file", "optimizer", "momentum", "beta1", "beta2", "eps",
            "loss-time-out", "target-loss",
        };
        const struct cli_opt *t = cli_common_opts(&c);
        size_t n = 0;
        while (t[n].name)
            n++;
        T_EQ_I(n, sizeof names / sizeof names[0]);
        for (size_t i = 0; i < n && i < sizeof names / sizeof names[0]; i++)
            T_STR(t[i].name, names[i]);
    }
    T_END();

    T_CASE("cli-5.2", "--name value and --name=value; the last repeat wins");
    T_EQ_I(parse("--steps 3 --warmup=1 --lr=0.5 --seed 99 --micro 4 --batch 64", &c, err), 0);
    T_EQ_I(c.steps, 3);
    T_EQ_I(c.warmup, 1);
    T_EQ_D(c.lr, 0.5);
    T_EQ_U(c.seed, 99);
    T_EQ_I(c.micro, 4);
    T_EQ_U(c.batch, 64);
    T_EQ_I(parse("--steps 3 --steps=5 --csv a.csv --csv b.csv", &c, err), 0);
    T_EQ_I(c.steps, 5);
    T_STR(c.csv, "b.csv");
    T_EQ_I(parse("--rank 2 --world 4", &c, err), 0);
    T_EQ_I(c.rank, 2);
    T_EQ_I(c.world, 4);
    T_END();

    T_CASE("cli-5.3", "an unknown flag is refused and named");
    T_EQ_I(parse("--steps 3 --nope 4", &c, err), ERR_USAGE);
    T_HAS(err, "--nope");
    T_HAS(err, "unknown option");
    T_EQ_I(parse("--nope=4", &c, err), ERR_USAGE);
    T_HAS(err, "--nope:");
    T_EQ_I(parse("--step 3", &c, err), ERR_USAGE);     /* no prefix matching */
    T_HAS(err, "--step:");
    T_EQ_I(parse("-steps 3", &c, err), ERR_USAGE);
    T_HAS(err, "'-steps'");
    T_EQ_I(parse("--", &c, err), ERR_USAGE);
    T_END();

    T_CASE("cli-5.4", "a missing value is refused and the flag named");
    T_EQ_I(parse("--steps", &c, err), ERR_USAGE);
    T_HAS(err, "--steps: missing value");
    T_EQ_I(parse("--link-bw --steps 3", &c, err), ERR_USAGE);
    T_HAS(err, "--link-bw: missing value");
    T_EQ_I(parse("--csv=", &c, err), ERR_USAGE);
    T_HAS(err, "--csv: empty value");
    T_END();

    T_CASE("cli-5.5", "positional arguments are refused");
    T_EQ_I(parse("foo", &c, err), ERR_USAGE);
    T_HAS(err, "'foo'");
    T_EQ_I(parse("--steps 3 4", &c, err), ERR_USAGE);
    T_HAS(err, "'4'");
    T_END();

    T_CASE("cli-5.6", "--help, -h and --version");
    T_EQ_I(parse("--help", &c, err), CLI_HELP);
    T_EQ_I(parse("-h", &c, err), CLI_HELP);
    T_EQ_I(parse("--steps 3 --version", &c, err), CLI_VERSION);
    T_END();

    T_CASE("cli-5.7", "bad values are refused with the flag and value named");
    T_EQ_I(parse("--link-bw 10abc", &c, err), ERR_USAGE);
    T_HAS(err, "--link-bw: '10abc' is not a rate (examples: 500Mbit, 100MB, 1GiB)");
    T_EQ_I(parse("--steps 0", &c, err), ERR_USAGE);
    T_HAS(err, "--steps: '0' is too small (at least 1)");
    T_EQ_I(parse("--world 0", &c, err), ERR_USAGE);
    T_HAS(err, "--world:");
    T_EQ_I(parse("--world -1", &c, err), ERR_USAGE);
    T_HAS(err, "--world:");
    T_EQ_I(parse("--world 65537", &c, err), ERR_USAGE);
    T_HAS(err, "at most 65536");
    T_EQ_I(parse("--world 99999999999999999999", &c, err), ERR_USAGE);
    T_EQ_I(parse("--world 1", &c, err), 0);
    T_EQ_I(parse("--world 65536", &c, err), 0);
    T_EQ_I(c.world, 65536);
    T_EQ_I(parse("--rank -1", &c, err), ERR_USAGE);
    T_HAS(err, "--rank:");
    T_EQ_I(parse("--micro 0", &c, err), ERR_USAGE);
    T_EQ_I(parse("--warmup -1", &c, err), ERR_USAGE);
    T_EQ_I(parse("--params 0", &c, err), ERR_USAGE);
    T_EQ_I(parse("--params 2T", &c, err), ERR_USAGE);
    T_EQ_I(parse("--batch 0", &c, err), ERR_USAGE);
    T_EQ_I(parse("--seed -1", &c, err), ERR_USAGE);
    T_EQ_I(parse("--link-latency -1s", &c, err), ERR_USAGE);
    T_HAS(err, "--link-latency:");
    T_END();

    T_CASE("cli-5.8", "learning rate: NaN, Inf, negative and zero refused");
    {
        static const char *const bad[] = {
            "--lr nan", "--lr NaN", "--lr inf", "--lr -inf", "--lr -0.1", "--lr 0",
            "--lr -0", "--lr 1e999", "--lr abc",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            T_EQ_I(parse(bad[i], &c, err), ERR_USAGE);
            T_HAS(err, "--lr:");
            T_EQ_D(c.lr, 0.05);
        }
        T_EQ_I(parse("--lr 1e-4", &c, err), 0);
        T_EQ_D(c.lr, 1e-4);
    }
    T_END();

    T_CASE("cli-5.9", "units through flags");
    T_EQ_I(parse("--link-bw 500Mbit --link-latency 50us --timeout 2ms --params 1M "
                 "--dtype f32 --workload synthetic --seed 18446744073709551615", &c, err), 0);
    T_EQ_D(c.link_bw, 62.5e6);
    T_EQ_D(c.link_latency, 50e-6);
    T_EQ_D(c.timeout, 2e-3);
    T_EQ_U(c.params, 1u << 20);
    T_EQ_I(c.dtype, DTYPE_F32);
    T_EQ_I(c.workload, WORKLOAD_SYNTHETIC);
    T_EQ_U(c.seed, UINT64_MAX);
    T_END();

    T_CASE("cli-5.10", "enumerations and positive times: timeout 0, workload, dtype");
    T_EQ_I(parse("--timeout 0", &c, err), ERR_USAGE);
    T_HAS(err, "--timeout: '0' must be > 0");
    T_EQ_I(parse("--timeout nan", &c, err), ERR_USAGE);
    T_EQ_I(parse("--workload bogus", &c, err), ERR_USAGE);
    T_HAS(err, "--workload: 'bogus' is not a workload");
    T_HAS(err, "linreg");
    T_HAS(err, "synthetic");
    T_EQ_I(parse("--dtype f16", &c, err), ERR_USAGE);
    T_HAS(err, "--dtype: 'f16'");
    T_END();

    T_CASE("cli-5.14", "THE BOUNDS: each value out of its range is refused in one line naming "
           "the flag and the range; the limits themselves pass");
    {
        static const struct { const char *arg, *text; } bad[] = {
            { "--timeout 1e19", "--timeout: '1e19' is out of range: 1ms" },
            { "--timeout 1e-320", "--timeout: '1e-320' is out of range" },
            { "--timeout 999us", "out of range" },
            { "--timeout 86401", "out of range" },
            { "--link-latency 10.001", "--link-latency: '10.001' is out of range: 0 .. 10s" },
            { "--link-bw 124", "--link-bw: '124' is out of range: 0 (off), or 1kbit/s" },
            { "--link-bw 1001Gbit", "out of range" },
            { "--link-bw auto", "--link-bw: 'auto' is resolved by experiments/lab.sh" },
            { "--steps 1000000001", "--steps: '1000000001' is out of range: 1 .. 1000000000" },
            { "--micro 65537", "--micro: '65537' is out of range" },
            { "--layers 1048577", "--layers:" },
            { "--params 1099511627777", "--params:" },
            { "--batch 1099511627777", "--batch:" },
            { "--backward-time 3601", "--backward-time: '3601' is out of range: 0 .. 3600s" },
        };
        static const char *const good[] = {
            "--timeout 1ms", "--timeout 86400", "--link-latency 10", "--link-latency 0",
            "--link-bw 0", "--link-bw 1kbit", "--link-bw 1000Gbit", "--steps 1000000000",
            "--micro 65536", "--backward-time 3600", "--params 1099511627776",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            T_EQ_I(parse(bad[i].arg, &c, err), ERR_USAGE);
            T_TRUE(strchr(err, '\n') == NULL);
            if (bad[i].text)
                T_HAS(err, bad[i].text);
        }
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
            T_EQ_I(parse(good[i], &c, err), 0);
    }
    T_END();

    T_CASE("cli-5.11", "--shard-weights: a repeat replaces the list (no leak)");
    T_EQ_I(parse("--shard-weights 1,2 --shard-weights 3,4,5", &c, err), 0);
    T_EQ_I(c.n_shard_weights, 3);
    if (c.shard_weights && c.n_shard_weights == 3)
        T_EQ_D(c.shard_weights[2], 5);
    /* A bad repeat after a good one keeps the good one, still owned by c. */
    {
        const struct cli_opt *tables[2] = { cli_common_opts(&c), NULL };
        char *argv[] = { "prog", "--shard-weights", "1,,2", NULL };
        T_EQ_I(cli_parse(3, argv, tables, err), ERR_USAGE);
        T_HAS(err, "--shard-weights:");
        T_EQ_I(c.n_shard_weights, 3);
    }
    cli_common_free(&c);
    T_TRUE(c.shard_weights == NULL);
    T_EQ_I(c.n_shard_weights, 0);
    cli_common_free(&c);        /* twice is harmless */
    T_END();

    T_CASE("cli-5.12", "role tables: bools, bounds, shadowing, one-line errors");
    {
        int verbose = 0, workers = 0;
        uint64_t chunk = 0;
        const char *listen = NULL;
        struct cli_opt role[] = {
            { "verbose", CLI_BOOL, &verbose, NULL, "talk more", 0, 0, NULL },
            { "workers", CLI_INT, &workers, "K", "workers", 1, 64, NULL },
            { "chunk", CLI_SIZE, &chunk, "SIZE", "chunk", 4096, 1 << 20, NULL },
            { "listen", CLI_STRING, &listen, "HOST:PORT", "listen", 0, 0, NULL },
            { "steps", CLI_STRING, &listen, "X", "shadows the common --steps", 0, 0, NULL },
            { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
        };
        const struct cli_opt *tables[3];
        char *argv[16];
        cli_common_defaults(&c);
        tables[0] = role;
        tables[1] = cli_common_opts(&c);
        tables[2] = NULL;
        argv[0] = "prog";
        argv[1] = "--verbose";
        argv[2] = "--workers=64";
        argv[3] = "--chunk";
        argv[4] = "64K";
        argv[5] = "--listen";
        argv[6] = "127.0.0.1:0";
        argv[7] = "--steps";
        argv[8] = "abc";
        argv[9] = NULL;
        T_EQ_I(cli_parse(9, argv, tables, err), 0);
        T_EQ_I(verbose, 1);
        T_EQ_I(workers, 64);
        T_EQ_U(chunk, 65536);
        T_STR(listen, "abc");
        T_EQ_I(c.steps, 10);
        argv[1] = "--verbose=1";
        T_EQ_I(cli_parse(2, argv, tables, err), ERR_USAGE);
        T_HAS(err, "--verbose: takes no value");
        argv[1] = "--workers=65";
        T_EQ_I(cli_parse(2, argv, tables, err), ERR_USAGE);
        T_HAS(err, "--workers: '65' is too large (at most 64)");
        argv[1] = "--chunk=1K";
        T_EQ_I(cli_parse(2, argv, tables, err), ERR_USAGE);
        T_HAS(err, "at least 4096");
        argv[1] = "--chunk=2M";
        T_EQ_I(cli_parse(2, argv, tables, err), ERR_USAGE);
        T_HAS(err, "at most 1048576");
        argv[1] = "--workers=3\n\x1b[31m";
        T_EQ_I(cli_parse(2, argv, tables, err), ERR_USAGE);
        T_TRUE(strchr(err, '\n') == NULL);
        T_TRUE(strchr(err, '\x1b') == NULL);
        argv[1] = "--work\ners=3";
        T_EQ_I(cli_parse(2, argv, tables, err), ERR_USAGE);
        T_TRUE(strchr(err, '\n') == NULL);
    }
    T_END();

    T_CASE("cli-5.13", "--help text: every flag, aligned, the link marked EMULATED");
    {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        const struct cli_opt *tables[2];
        cli_common_defaults(&c);
        tables[0] = cli_common_opts(&c);
        tables[1] = NULL;
        T_TRUE(f != NULL);
        if (f) {
            cli_usage(f, "ring_worker", "--coordinator HOST:PORT [options]", tables);
            fclose(f);
            T_HAS(text, "usage: ring_worker --coordinator HOST:PORT [options]");
            for (const struct cli_opt *o = tables[0]; o->name; o++) {
                char want[64];
                snprintf(want, sizeof want, "  --%s ", o->name);
                T_HAS(text, want);
            }
            const char *bw = strstr(text, "--link-bw RATE");
            const char *lat = strstr(text, "--link-latency TIME");
            T_TRUE(bw && lat);
            if (bw && lat) {
                const char *e1 = strchr(bw, '\n'), *e2 = strchr(lat, '\n');
                const char *m1 = strstr(bw, "EMULATED"), *m2 = strstr(lat, "EMULATED");
                T_TRUE(m1 && m1 < e1);
                T_TRUE(m2 && m2 < e2);
            }
            /* Aligned: the help of --rank and of --timeout start in one column. */
            const char *r = strstr(text, "  --rank R");
            const char *t = strstr(text, "  --timeout TIME");
            T_TRUE(r && t);
            if (r && t) {
                size_t cr = strstr(r, "this process") - r;
                size_t ct = strstr(t, "idle-progress") - t;
                T_EQ_I(cr, ct);
            }
            T_HAS(text, "--version");
            T_HAS(text, "500Mbit");
            /* Fits a terminal: no line over 80 columns. */
            for (const char *l = text; *l; ) {
                const char *e = strchr(l, '\n');
                size_t n = e ? (size_t)(e - l) : strlen(l);
                if (n > 80)
                    T_EQ_I(n, 80);
                l += n + (e != NULL);
            }
        }
        free(text);
    }
    T_END();
}

/* -------------------------------------------------- env rank discovery */

static void test_env(void)
{
    struct cli_common c;
    char err[ERR_LEN];
    char host[64];
    int port;

    T_CASE("cli-6.1", "no flags, no environment: rank 0 of 1");
    clear_env();
    T_EQ_I(parse_finish("", &c, err), 0);
    T_EQ_I(c.rank, 0);
    T_EQ_I(c.world, 1);
    T_EQ_I(c.local_rank, 0);
    T_STR(c.rank_source, "default");
    T_END();

    T_CASE("cli-6.2", "torchrun: RANK, WORLD_SIZE, LOCAL_RANK");
    clear_env();
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "8", 1);
    setenv("LOCAL_RANK", "1", 1);
    T_EQ_I(parse_finish("", &c, err), 0);
    T_EQ_I(c.rank, 3);
    T_EQ_I(c.world, 8);
    T_EQ_I(c.local_rank, 1);
    T_STR(c.rank_source, "torchrun");
    T_END();

    T_CASE("cli-6.3", "Open MPI: OMPI_COMM_WORLD_*");
    clear_env();
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "6", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
    T_EQ_I(parse_finish("", &c, err), 0);
    T_EQ_I(c.rank, 5);
    T_EQ_I(c.world, 6);
    T_EQ_I(c.local_rank, 2);
    T_STR(c.rank_source, "openmpi");
    T_END();

    T_CASE("cli-6.4", "MPICH: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID");
    clear_env();
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "2", 1);
    setenv("MPI_LOCALRANKID", "0", 1);
    T_EQ_I(parse_finish("", &c, err), 0);
    T_EQ_I(c.rank, 1);
    T_EQ_I(c.world, 2);
    T_EQ_I(c.local_rank, 0);
    T_STR(c.rank_source, "mpich");
    unsetenv("MPI_LOCALRANKID");     /* no local rank: the rank stands in */
    T_EQ_I(parse_finish("", &c, err), 0);
    T_EQ_I(c.local_rank, 1);
    T_END();

    T_CASE("cli-6.5", "Slurm: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID");
    clear_env();
    setenv("SLURM_PROCID", "7", 1);
    setenv("SLURM_NTASKS", "16", 1);
    setenv("SLURM_LOCALID", "3", 1);
    T_EQ_I(parse_finish("", &c, err), 0);
    T_EQ_I(c.rank, 7);
    T_EQ_I(c.world, 16);
    T_EQ_I(c.local_rank, 3);
    T_STR(c.rank_source, "slurm");
    T_END();

    T_CASE("cli-6.6", "precedence: torchrun > Open MPI > MPICH > Slurm");
    clear_env();
    setenv("SLURM_PROCID", "4", 1);
    setenv("SLURM_NTASKS", "40", 1);
    setenv("PMI_RANK", "3", 1);
    setenv("PMI_SIZE", "30", 1);
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "20", 1);
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "10", 1);
    T_EQ_I(parse_finish("", &c, err), 0);
    T_STR(c.rank_source, "torchrun");
    T_EQ_I(c.rank, 1);
    T_EQ_I(c.world, 10);
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    T_EQ_I(parse_finish("", &c, err), 0);
    T_STR(c.rank_source, "openmpi");
    T_EQ_I(c.rank, 2);
    T_EQ_I(c.world, 20);
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    T_EQ_I(parse_finish("", &c, err), 0);
    T_STR(c.rank_source, "mpich");
    T_EQ_I(c.rank, 3);
    T_EQ_I(c.world, 30);
    unsetenv("PMI_RANK");
    unsetenv("PMI_SIZE");
    T_EQ_I(parse_finish("", &c, err), 0);
    T_STR(c.rank_source, "slurm");
    T_EQ_I(c.rank, 4);
    T_EQ_I(c.world, 40);
    /* An empty variable counts as unset. */
    setenv("RANK", "", 1);
    T_EQ_I(parse_finish("", &c, err), 0);
    T_STR(c.rank_source, "slurm");
    T_END();

    T_CASE("cli-6.7", "flags win over the environment");
    clear_env();
    setenv("RANK", "0", 1);
    setenv("WORLD_SIZE", "4", 1);
    setenv("LOCAL_RANK", "0", 1);
    T_EQ_I(parse_finish("--rank 1 --world 2", &c, err), 0);
    T_EQ_I(c.rank, 1);
    T_EQ_I(c.world, 2);
    T_EQ_I(c.local_rank, 1);
    T_STR(c.rank_source, "flags");
    /* --rank with the world from the environment. */
    T_EQ_I(parse_finish("--rank 3", &c, err), 0);
    T_EQ_I(c.rank, 3);
    T_EQ_I(c.world, 4);
    T_STR(c.rank_source, "flags");
    /* --world with the rank from the environment. */
    setenv("RANK", "2", 1);
    T_EQ_I(parse_finish("--world 3", &c, err), 0);
    T_EQ_I(c.rank, 2);
    T_EQ_I(c.world, 3);
    T_STR(c.rank_source, "torchrun");
    T_END();

    T_CASE("cli-6.8", "environment values are parsed as strictly as flags");
    {
        static const struct { const char *var, *val; } bad[] = {
            { "RANK", "abc" }, { "RANK", " 1" }, { "RANK", "1 " }, { "RANK", "-1" },
            { "RANK", "+1" }, { "RANK", "99999999999999999999" }, { "WORLD_SIZE", "0" },
            { "WORLD_SIZE", "65537" }, { "WORLD_SIZE", "4x" }, { "LOCAL_RANK", "x" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            clear_env();
            setenv("RANK", "1", 1);
            setenv("WORLD_SIZE", "4", 1);
            setenv(bad[i].var, bad[i].val, 1);
            T_EQ_I(parse_finish("", &c, err), ERR_USAGE);
            T_HAS(err, bad[i].var);
        }
        clear_env();
        setenv("RANK", "1", 1);
        T_EQ_I(parse_finish("", &c, err), ERR_USAGE);
        T_HAS(err, "WORLD_SIZE");
        clear_env();
        setenv("SLURM_PROCID", "1", 1);
        setenv("SLURM_NTASKS", "two", 1);
        T_EQ_I(parse_finish("", &c, err), ERR_USAGE);
        T_HAS(err, "SLURM_NTASKS: 'two'");
        /* --rank with a bad world size in the environment. */
        clear_env();
        setenv("WORLD_SIZE", "many", 1);
        T_EQ_I(parse_finish("--rank 0", &c, err), ERR_USAGE);
        T_HAS(err, "WORLD_SIZE");
    }
    T_END();

    T_CASE("cli-6.9", "coordinator: HOST:PORT, [v6]:PORT, MASTER_ADDR/MASTER_PORT");
    clear_env();
    port = -5;
    T_EQ_I(cli_coordinator("127.0.0.1:5000", host, sizeof host, &port, err), 0);
    T_STR(host, "127.0.0.1");
    T_EQ_I(port, 5000);
    T_EQ_I(cli_coordinator("[::1]:0", host, sizeof host, &port, err), 0);
    T_STR(host, "::1");
    T_EQ_I(port, 0);
    T_EQ_I(cli_coordinator("node-7.example:65535", host, sizeof host, &port, err), 0);
    T_STR(host, "node-7.example");
    T_EQ_I(port, 65535);
    {
        static const char *const bad[] = {
            "h:65536", "h:-1", "h", "h:", ":5000", "::1:5000", "[::1]5000", "[::1", "[]:1",
            "h:5x", "h: 5", "h:+5", "a b:1", "", "h:99999999999999999999",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            port = -5;
            strcpy(host, "unchanged");
            T_EQ_I(cli_coordinator(bad[i], host, sizeof host, &port, err), ERR_USAGE);
            T_HAS(err, "--coordinator");
            T_EQ_I(port, -5);
            T_STR(host, "unchanged");
        }
        T_EQ_I(cli_coordinator("h:65536", host, sizeof host, &port, err), ERR_USAGE);
        T_HAS(err, "65535");
        T_EQ_I(cli_coordinator("::1:5000", host, sizeof host, &port, err), ERR_USAGE);
        T_HAS(err, "[ADDRESS]:PORT");
        T_EQ_I(cli_coordinator("averyveryverylonghostname:1", host, 8, &port, err), ERR_USAGE);
    }
    /* The environment, when no flag. */
    T_EQ_I(cli_coordinator(NULL, host, sizeof host, &port, err), ERR_USAGE);
    T_HAS(err, "--coordinator");
    T_HAS(err, "MASTER_ADDR");
    setenv("MASTER_ADDR", "10.0.0.1", 1);
    T_EQ_I(cli_coordinator(NULL, host, sizeof host, &port, err), ERR_USAGE);
    T_HAS(err, "MASTER_PORT");
    setenv("MASTER_PORT", "29500", 1);
    T_EQ_I(cli_coordinator(NULL, host, sizeof host, &port, err), 0);
    T_STR(host, "10.0.0.1");
    T_EQ_I(port, 29500);
    T_EQ_I(cli_coordinator("127.0.0.1:1", host, sizeof host, &port, err), 0);
    T_STR(host, "127.0.0.1");       /* the flag wins */
    T_EQ_I(port, 1);
    setenv("MASTER_ADDR", "[fe80::1]", 1);
    T_EQ_I(cli_coordinator(NULL, host, sizeof host, &port, err), 0);
    T_STR(host, "fe80::1");
    setenv("MASTER_ADDR", "fe80::2", 1);
    T_EQ_I(cli_coordinator(NULL, host, sizeof host, &port, err), 0);
    T_STR(host, "fe80::2");
    setenv("MASTER_PORT", "65536", 1);
    T_EQ_I(cli_coordinator(NULL, host, sizeof host, &port, err), ERR_USAGE);
    T_HAS(err, "MASTER_PORT");
    setenv("MASTER_PORT", "-1", 1);
    T_EQ_I(cli_coordinator(NULL, host, sizeof host, &port, err), ERR_USAGE);
    T_HAS(err, "MASTER_PORT");
    clear_env();
    T_END();
}

/* ---------------------------------------------------------- cross-checks */

static void test_finish(void)
{
    struct cli_common c;
    char err[ERR_LEN];

    clear_env();

    T_CASE("cli-7.1", "rank >= world is refused");
    T_EQ_I(parse_finish("--rank 4 --world 4", &c, err), ERR_USAGE);
    T_HAS(err, "--rank");
    T_HAS(err, "4");
    T_EQ_I(parse_finish("--rank 3 --world 4", &c, err), 0);
    T_EQ_I(parse_finish("--rank 1", &c, err), ERR_USAGE);    /* world 1 by default */
    T_HAS(err, "--rank");
    T_EQ_I(parse_finish("--rank 0", &c, err), 0);
    T_EQ_I(c.world, 1);
    setenv("RANK", "4", 1);
    setenv("WORLD_SIZE", "4", 1);
    T_EQ_I(parse_finish("", &c, err), ERR_USAGE);
    T_HAS(err, "RANK");
    T_HAS(err, "WORLD_SIZE");
    clear_env();
    T_END();

    T_CASE("cli-7.2", "warmup must be below steps");
    T_EQ_I(parse_finish("--steps 2 --warmup 2", &c, err), ERR_USAGE);
    T_HAS(err, "--warmup");
    T_HAS(err, "--steps");
    T_EQ_I(parse_finish("--steps 1", &c, err), 0);      /* auto warmup: 0 */
    T_EQ_I(c.warmup, 0);
    T_EQ_I(parse_finish("--steps 10", &c, err), 0);     /* auto warmup: 2 */
    T_EQ_I(c.warmup, 2);
    T_EQ_I(parse_finish("--steps 1 --warmup 0", &c, err), 0);
    T_EQ_I(parse_finish("--steps 3 --warmup 2", &c, err), 0);
    T_END();

    T_CASE("cli-7.3", "one shard weight per rank");
    T_EQ_I(parse_finish("--world 3 --rank 0 --shard-weights 1,2", &c, err), ERR_USAGE);
    T_HAS(err, "--shard-weights");
    cli_common_free(&c);
    T_EQ_I(parse_finish("--world 2 --rank 1 --shard-weights 1,2", &c, err), 0);
    T_EQ_I(c.n_shard_weights, 2);
    cli_common_free(&c);
    T_END();

    T_CASE("cli-7.4", "--world > 1 without a rank anywhere is refused");
    T_EQ_I(parse_finish("--world 3", &c, err), ERR_USAGE);
    T_HAS(err, "--rank");
    T_EQ_I(parse_finish("--world 1", &c, err), 0);
    T_EQ_I(c.rank, 0);
    T_STR(c.rank_source, "default");
    T_END();

    T_CASE("cli-7.5", "output paths: a missing folder or a folder is refused at start");
    T_EQ_I(parse_finish("--csv /nonexistent-psring-dir/r.csv", &c, err), ERR_USAGE);
    T_HAS(err, "--csv");
    T_HAS(err, "does not exist");
    T_EQ_I(parse_finish("--weights-out /nonexistent-psring-dir/w", &c, err), ERR_USAGE);
    T_HAS(err, "--weights-out");
    T_EQ_I(parse_finish("--csv /tmp", &c, err), ERR_USAGE);
    T_HAS(err, "folder");
    T_EQ_I(parse_finish("--csv /tmp/", &c, err), ERR_USAGE);
    T_EQ_I(parse_finish("--csv /tmp/psring-test-cli.csv --weights-out /tmp/w", &c, err), 0);
    T_EQ_I(parse_finish("--csv local.csv", &c, err), access(".", W_OK) == 0 ? 0 : ERR_USAGE);
    if (geteuid() != 0) {
        /* Root writes anywhere, so the read-only case needs a normal user. */
        T_EQ_I(parse_finish("--csv /proc/r.csv", &c, err), ERR_USAGE);
        T_HAS(err, "--csv: cannot write /proc/r.csv");
    }
    T_END();

    T_CASE("cli-7.6", "an output path that is a FIFO or a symlink to one is refused at start, "
           "left as it was");
    {
        char dir[] = "/tmp/psr-cli-XXXXXX", fifo[64], link[64], line[200];
        struct stat st;
        if (mkdtemp(dir)) {
            snprintf(fifo, sizeof fifo, "%s/f", dir);
            snprintf(link, sizeof link, "%s/l", dir);
            T_EQ_I(mkfifo(fifo, 0600), 0);
            T_EQ_I(symlink(fifo, link), 0);
            snprintf(line, sizeof line, "--csv %s", fifo);
            T_EQ_I(parse_finish(line, &c, err), ERR_USAGE);
            T_HAS(err, "FIFO");
            snprintf(line, sizeof line, "--csv %s", link);
            T_EQ_I(parse_finish(line, &c, err), ERR_USAGE);
            T_HAS(err, "FIFO");
            T_TRUE(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
            T_TRUE(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
            unlink(link);
            unlink(fifo);
            rmdir(dir);
        } else {
            T_TRUE(0);
        }
    }
    T_END();
}

int main(void)
{
    test_integers();
    test_sizes();
    test_rates();
    test_times();
    test_flags();
    test_env();
    test_finish();
    return t_done();
}
