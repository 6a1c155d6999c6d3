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

/* ------------------------------------------------------ the table checks
 *
 * Most cases below are tables: an input, the code it must give and, for a
 * refusal, a text its message must hold (NULL: any message). A refused
 * value leaves the output as it was (the sentinel the helper put there). */

/* Integers: cli_parse_ll with its bounds. */
struct ll_row { const char *s; long long lo, hi; int rc; long long want; const char *has; };

static void check_ll(const struct ll_row *r, size_t n)
{
    char err[ERR_LEN];
    for (size_t i = 0; i < n; i++, r++) {
        long long v = 42;
        t_row("'%s'", r->s);
        err[0] = '\0';
        T_EQ_I(cli_parse_ll(r->s, r->lo, r->hi, &v, err), r->rc);
        T_TRUE(v == (r->rc == 0 ? r->want : 42));
        if (r->rc != 0)
            T_TRUE(err[0] != '\0');
        if (r->has)
            T_HAS(err, r->has);
    }
    t_row("%s", "");
}

/* The other value parsers, one table per parser. A row gives the value in
 * u (cli_parse_u64, cli_parse_size) or in d (the rest). */
enum num_parser { NUM_U64, NUM_SIZE, NUM_RATE, NUM_TIME, NUM_DOUBLE };
struct num_row { const char *s; int rc; const char *has; uint64_t u; double d; };

static void check_num(enum num_parser p, const struct num_row *r, size_t n)
{
    char err[ERR_LEN];
    for (size_t i = 0; i < n; i++, r++) {
        uint64_t u = 12345;
        double d = -7;
        int rc = -1;
        t_row("'%s'", r->s);
        err[0] = '\0';
        switch (p) {
        case NUM_U64: rc = cli_parse_u64(r->s, &u, err); break;
        case NUM_SIZE: rc = cli_parse_size(r->s, &u, err); break;
        case NUM_RATE: rc = cli_parse_rate(r->s, &d, err); break;
        case NUM_TIME: rc = cli_parse_time(r->s, &d, err); break;
        case NUM_DOUBLE: rc = cli_parse_double(r->s, &d, err); break;
        }
        T_EQ_I(rc, r->rc);
        if (p == NUM_U64 || p == NUM_SIZE)
            T_EQ_U(u, rc == 0 ? r->u : 12345);
        else
            T_EQ_D(d, rc == 0 ? r->d : -7);
        if (r->rc != 0)
            T_TRUE(err[0] != '\0');
        if (r->has)
            T_HAS(err, r->has);
    }
    t_row("%s", "");
}

/* A list of inputs that must all be refused, with no text asked for. */
static void refuse_ll(const char *const *bad, size_t n, long long lo, long long hi)
{
    for (size_t i = 0; i < n; i++)
        check_ll(&(struct ll_row){ bad[i], lo, hi, ERR_USAGE, 0, NULL }, 1);
}

/* refused_with: s refused by parser p, its message holding text. */
static void refused_with(enum num_parser p, const char *s, const char *text)
{
    check_num(p, &(struct num_row){ s, ERR_USAGE, text, 0, 0 }, 1);
}

static void refuse_num(enum num_parser p, const char *const *bad, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_num(p, &(struct num_row){ bad[i], ERR_USAGE, NULL, 0, 0 }, 1);
}

/* Command lines: parse (or parse_finish) each line; the code, and the text
 * of a refusal. */
typedef int (*line_parser)(const char *line, struct cli_common *c, char *err);
struct line_row { const char *line; int rc; const char *has; };

static void check_lines(line_parser fn, const struct line_row *r, size_t n)
{
    struct cli_common c;
    char err[ERR_LEN];
    for (size_t i = 0; i < n; i++, r++) {
        t_row("'%s'", r->line);
        T_EQ_I(fn(r->line, &c, err), r->rc);
        T_TRUE(strchr(err, '\n') == NULL);
        if (r->has)
            T_HAS(err, r->has);
        cli_common_free(&c);
    }
    t_row("%s", "");
}

/* refused_line: fn refuses line, the message (one line) holding text. */
static void refused_line(line_parser fn, const char *line, const char *text)
{
    check_lines(fn, &(struct line_row){ line, ERR_USAGE, text }, 1);
}

#define N_OF(a) (sizeof (a) / sizeof (a)[0])

/* ------------------------------------------------------------- integers */

static void test_integers(void)
{
    char err[ERR_LEN];
    long long v;

    T_CASE("cli-1.1", "integers in range parse exactly");
    {
        static const struct ll_row ok[] = {
            { "0", 0, 10, 0, 0, NULL }, { "1", 1, 65536, 0, 1, NULL },
            { "65536", 1, 65536, 0, 65536, NULL }, { "-5", -10, 10, 0, -5, NULL },
            { "007", 0, 10, 0, 7, NULL },
            { "9223372036854775807", LLONG_MIN, LLONG_MAX, 0, LLONG_MAX, NULL },
            { "-9223372036854775808", LLONG_MIN, LLONG_MAX, 0, LLONG_MIN, NULL },
        };
        check_ll(ok, N_OF(ok));
    }
    T_END();

    T_CASE("cli-1.2", "non-integers are refused and leave the output alone");
    {
        static const char *const bad[] = {
            "", "abc", "10abc", " 5", "5 ", "+5", "0x10", "1.5", "1e3", "-", "--1",
            "5\n", "\t5", "1,000", "١",
        };
        static const struct ll_row named[] = {
            { "10abc", 0, 100, ERR_USAGE, 0, "'10abc'" },
            { "10abc", 0, 100, ERR_USAGE, 0, "not an integer" },
            { "2.5", 0, 100, ERR_USAGE, 0, "whole number" },
        };
        refuse_ll(bad, N_OF(bad), LLONG_MIN, LLONG_MAX);
        check_ll(named, N_OF(named));
    }
    T_END();

    T_CASE("cli-1.3", "K = 0, negative, huge: out of range with the bound named");
    {
        static const struct ll_row bad[] = {
            { "0", 1, 65536, ERR_USAGE, 0, "at least 1" },
            { "-1", 1, 65536, ERR_USAGE, 0, "at least 1" },
            { "65537", 1, 65536, ERR_USAGE, 0, "at most 65536" },
            { "99999999999999999999999", 1, 65536, ERR_USAGE, 0, "at most 65536" },
            { "9223372036854775808", LLONG_MIN, LLONG_MAX, ERR_USAGE, 0, NULL },
            { "-9223372036854775809", LLONG_MIN, LLONG_MAX, ERR_USAGE, 0, "too small" },
        };
        check_ll(bad, N_OF(bad));
    }
    T_END();

    T_CASE("cli-1.4", "unsigned: the full 64-bit range, no wrap of negatives");
    {
        static const struct num_row rows[] = {
            { "0", 0, NULL, 0, 0 }, { "18446744073709551615", 0, NULL, UINT64_MAX, 0 },
            { "18446744073709551616", ERR_USAGE, "too large", 0, 0 },
            { "-1", ERR_USAGE, "negative", 0, 0 }, { "+1", ERR_USAGE, NULL, 0, 0 },
            { " 1", ERR_USAGE, NULL, 0, 0 }, { "1 ", ERR_USAGE, NULL, 0, 0 },
            { "1K", ERR_USAGE, NULL, 0, 0 },
        };
        check_num(NUM_U64, rows, N_OF(rows));
    }
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
    T_CASE("cli-2.1", "sizes: bare bytes and powers of 1024");
    {
        static const struct num_row ok[] = {
            { "0", 0, NULL, 0, 0 }, { "4096", 0, NULL, 4096, 0 }, { "4K", 0, NULL, 4096, 0 },
            { "4k", 0, NULL, 4096, 0 }, { "4KiB", 0, NULL, 4096, 0 },
            { "64M", 0, NULL, 64ull << 20, 0 }, { "64MiB", 0, NULL, 64ull << 20, 0 },
            { "1G", 0, NULL, 1ull << 30, 0 }, { "1g", 0, NULL, 1ull << 30, 0 },
            { "1GiB", 0, NULL, 1ull << 30, 0 }, { "2T", 0, NULL, 2ull << 40, 0 },
            { "2TiB", 0, NULL, 2ull << 40, 0 }, { "16777215T", 0, NULL, 16777215ull << 40, 0 },
            { "18446744073709551615", 0, NULL, UINT64_MAX, 0 },
            { "18014398509481983K", 0, NULL, UINT64_MAX - 1023, 0 },
        };
        check_num(NUM_SIZE, ok, N_OF(ok));
    }
    T_END();

    T_CASE("cli-2.2", "sizes: negative, fractional, garbage and spaces refused");
    {
        static const char *const bad[] = {
            "-1", "-4K", "-0", "abc", "10abc", " 5", "5 ", "", "1.5G", "K", "4Ki",
            "4kib", "4KIB", "4 K", "4K ", "+4K", "0x10", "4B", "1e3", "inf", "nan", "4G/s",
        };
        refuse_num(NUM_SIZE, bad, N_OF(bad));
        refused_with(NUM_SIZE, "-4K", "negative");
        refused_with(NUM_SIZE, "1.5G", "whole number");
        refused_with(NUM_SIZE, "10abc", "'10abc' is not a size");
    }
    T_END();

    T_CASE("cli-2.3", "sizes: overflow of the digits or of digits x unit refused");
    {
        static const struct num_row bad[] = {
            { "17179869184G", ERR_USAGE, "too large", 0, 0 },      /* 2^34 * 2^30 */
            { "16777216T", ERR_USAGE, NULL, 0, 0 },                /* 2^24 * 2^40 */
            { "18014398509481984K", ERR_USAGE, NULL, 0, 0 },
            { "18446744073709551616", ERR_USAGE, NULL, 0, 0 },
            { "99999999999999999999999999999G", ERR_USAGE, NULL, 0, 0 },
        };
        check_num(NUM_SIZE, bad, N_OF(bad));
    }
    T_END();

    T_CASE("cli-2.4", "sizes: KB/MB/GB refused as ambiguous, with the fix named");
    {
        static const struct num_row bad[] = {
            { "64MB", ERR_USAGE, "64M or 64MiB", 0, 0 }, { "4KB", ERR_USAGE, "powers of 1024", 0, 0 },
        };
        check_num(NUM_SIZE, bad, N_OF(bad));
    }
    T_END();
}

/* ---------------------------------------------------------------- rates */

static void test_rates(void)
{
    T_CASE("cli-3.1", "rates: bits, decimal and binary bytes, exact factors");
    {
        static const struct num_row ok[] = {
            { "500Mbit", 0, NULL, 0, 62.5e6 }, { "1Gbit/s", 0, NULL, 0, 125e6 },
            { "1Gbit", 0, NULL, 0, 125e6 }, { "100MB", 0, NULL, 0, 1e8 },
            { "100MB/s", 0, NULL, 0, 1e8 }, { "1GiB", 0, NULL, 0, 1073741824.0 },
            { "1GiB/s", 0, NULL, 0, 1073741824.0 }, { "100MiB", 0, NULL, 0, 104857600.0 },
            { "1.5Gbit", 0, NULL, 0, 1.875e8 }, { "0", 0, NULL, 0, 0 }, { "1000", 0, NULL, 0, 1000 },
            { "1000/s", 0, NULL, 0, 1000 }, { "1000B/s", 0, NULL, 0, 1000 },
            { "100mbit", 0, NULL, 0, 12.5e6 }, { "8Kbit", 0, NULL, 0, 1000 },
            { "10KB/s", 0, NULL, 0, 1e4 }, { "2KiB", 0, NULL, 0, 2048 }, { "1e9", 0, NULL, 0, 1e9 },
            { "2.5GB", 0, NULL, 0, 2.5e9 }, { ".5MB", 0, NULL, 0, 5e5 },
        };
        check_num(NUM_RATE, ok, N_OF(ok));
    }
    T_END();

    T_CASE("cli-3.2", "rates: negative, NaN, Inf, garbage, spaces refused");
    {
        static const char *const bad[] = {
            "-1Mbit", "-0", "-.5MB", "nan", "NaN", "inf", "Inf", "infinity", "abc", "10abc",
            " 5", "5 ", "1e400", "0x10", "1Gbit/s/s", "/s", "", "1 Gbit", "Gbit", "1Gbits",
            "1Tbit", "1e", "1e+",
        };
        refuse_num(NUM_RATE, bad, N_OF(bad));
        /* "1." is a number (1.0) for strtod; accepted by design. */
        check_num(NUM_RATE, &(struct num_row){ "1.", 0, NULL, 0, 1.0 }, 1);
        refused_with(NUM_RATE, "10abc", "'10abc' is not a rate (examples:");
        refused_with(NUM_RATE, "-1Mbit", "negative");
    }
    T_END();

    T_CASE("cli-3.3", "rates: bits-or-bytes suffixes refused as ambiguous");
    {
        static const struct num_row bad[] = {
            { "100M", ERR_USAGE, "ambiguous", 0, 0 }, { "100M", ERR_USAGE, "100Mbit", 0, 0 },
            { "100M", ERR_USAGE, "100MB", 0, 0 }, { "100Mb", ERR_USAGE, "ambiguous", 0, 0 },
            { "1gbps", ERR_USAGE, "1Gbit", 0, 0 },
        };
        check_num(NUM_RATE, bad, N_OF(bad));
    }
    T_END();
}

/* ---------------------------------------------------------------- times */

static void test_times(void)
{
    char err[ERR_LEN];

    T_CASE("cli-4.1", "times: us, ms, s, bare seconds");
    {
        static const struct num_row ok[] = {
            { "50us", 0, NULL, 0, 50e-6 }, { "2ms", 0, NULL, 0, 2e-3 },
            { "0.5ms", 0, NULL, 0, 0.5e-3 }, { "1.5s", 0, NULL, 0, 1.5 }, { "10", 0, NULL, 0, 10 },
            { "0", 0, NULL, 0, 0 }, { "1e-3", 0, NULL, 0, 1e-3 },
        };
        check_num(NUM_TIME, ok, N_OF(ok));
    }
    T_END();

    T_CASE("cli-4.2", "times: negative, NaN, Inf, unknown units refused");
    {
        static const char *const bad[] = {
            "-1s", "-0", "nan", "inf", "-inf", "1h", "1m", "1min", "5 s", " 5", "5 ",
            "1e999", "ms", "", "1ns", "1S", "1.5.s", "1sec",
        };
        refuse_num(NUM_TIME, bad, N_OF(bad));
        refused_with(NUM_TIME, "-1s", "negative");
        refused_with(NUM_TIME, "1h", "'1h' is not a time");
    }
    T_END();

    T_CASE("cli-4.3", "doubles: finite, signs and exponents; lists of weights");
    {
        static const struct num_row rows[] = {
            { "-0.25", 0, NULL, 0, -0.25 }, { "1e-3", 0, NULL, 0, 1e-3 },
            { "nan", ERR_USAGE, NULL, 0, 0 }, { "1e309", ERR_USAGE, NULL, 0, 0 },
            { "+1", ERR_USAGE, NULL, 0, 0 },
        };
        check_num(NUM_DOUBLE, rows, N_OF(rows));
    }
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
         * (issue 16), and --json beside --csv (issue 32). */
        static const char *const names[] = {
            "rank", "world", "workload", "params", "batch", "shard-weights", "micro",
            "steps", "warmup", "lr", "seed", "dtype", "link-bw", "link-latency", "link-host",
            "timeout", "csv", "json", "weights-out", "backward-time", "straggler", "jitter", "pause",
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
    {
        static const struct line_row rows[] = {
            { "--steps 3 --nope 4", ERR_USAGE, "--nope" },
            { "--steps 3 --nope 4", ERR_USAGE, "unknown option" },
            { "--nope=4", ERR_USAGE, "--nope:" },
            { "--step 3", ERR_USAGE, "--step:" },         /* no prefix matching */
            { "-steps 3", ERR_USAGE, "'-steps'" }, { "--", ERR_USAGE, NULL },
        };
        check_lines(parse, rows, N_OF(rows));
    }
    T_END();

    T_CASE("cli-5.4", "a missing value is refused and the flag named");
    refused_line(parse, "--steps", "--steps: missing value");
    refused_line(parse, "--link-bw --steps 3", "--link-bw: missing value");
    refused_line(parse, "--csv=", "--csv '': empty value");
    T_END();

    T_CASE("cli-5.5", "positional arguments are refused");
    refused_line(parse, "foo", "'foo'");
    refused_line(parse, "--steps 3 4", "'4'");
    T_END();

    T_CASE("cli-5.6", "--help, -h and --version");
    {
        static const struct line_row rows[] = {
            { "--help", CLI_HELP, NULL }, { "-h", CLI_HELP, NULL },
            { "--steps 3 --version", CLI_VERSION, NULL },
        };
        check_lines(parse, rows, N_OF(rows));
    }
    T_END();

    T_CASE("cli-5.7", "bad values are refused with the flag and value named");
    {
        static const struct line_row rows[] = {
            { "--link-bw 10abc", ERR_USAGE,
              "--link-bw 10abc: not a rate (examples: 500Mbit, 100MB, 1GiB)" },
            { "--steps 0", ERR_USAGE, "--steps 0: too small (at least 1)" },
            { "--world 0", ERR_USAGE, "--world 0:" }, { "--world -1", ERR_USAGE, "--world -1:" },
            { "--world 65537", ERR_USAGE, "at most 65536" },
            { "--world 99999999999999999999", ERR_USAGE, NULL },
            { "--world 1", 0, NULL }, { "--rank -1", ERR_USAGE, "--rank -1:" },
            { "--micro 0", ERR_USAGE, NULL }, { "--warmup -1", ERR_USAGE, NULL },
            { "--params 0", ERR_USAGE, NULL }, { "--params 2T", ERR_USAGE, NULL },
            { "--batch 0", ERR_USAGE, NULL }, { "--seed -1", ERR_USAGE, NULL },
            { "--link-latency -1s", ERR_USAGE, "--link-latency -1s:" },
        };
        check_lines(parse, rows, N_OF(rows));
    }
    T_EQ_I(parse("--world 65536", &c, err), 0);
    T_EQ_I(c.world, 65536);
    T_END();

    T_CASE("cli-5.8", "learning rate: NaN, Inf, negative and zero refused");
    {
        static const char *const bad[] = {
            "--lr nan", "--lr NaN", "--lr inf", "--lr -inf", "--lr -0.1", "--lr 0",
            "--lr -0", "--lr 1e999", "--lr abc",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            T_EQ_I(parse(bad[i], &c, err), ERR_USAGE);
            T_HAS(err, "--lr ");
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
    {
        static const struct line_row rows[] = {
            { "--timeout 0", ERR_USAGE, "--timeout 0: must be > 0" },
            { "--timeout nan", ERR_USAGE, NULL },
            { "--workload bogus", ERR_USAGE, "--workload bogus: not a workload" },
            { "--workload bogus", ERR_USAGE, "linreg" },
            { "--workload bogus", ERR_USAGE, "synthetic" },
            { "--dtype f16", ERR_USAGE, "--dtype f16:" },
        };
        check_lines(parse, rows, N_OF(rows));
    }
    T_END();

    T_CASE("cli-5.14", "THE BOUNDS: each value out of its range is refused in one line naming "
           "the flag and the range; the limits themselves pass");
    {
        static const struct { const char *arg, *text; } bad[] = {
            { "--timeout 1e19", "--timeout 1e19: out of range: 1ms" },
            { "--timeout 1e-320", "--timeout 1e-320: out of range" },
            { "--timeout 999us", "out of range" },
            { "--timeout 86401", "out of range" },
            { "--link-latency 10.001", "--link-latency 10.001: out of range: 0 .. 10s" },
            { "--link-bw 124", "--link-bw 124: out of range: 0 (off), or 1kbit/s" },
            { "--link-bw 1001Gbit", "out of range" },
            { "--link-bw auto", "--link-bw auto: resolved by experiments/lab.sh" },
            { "--steps 1000000001", "--steps 1000000001: out of range: 1 .. 1000000000" },
            { "--micro 65537", "--micro 65537: out of range" },
            { "--layers 1048577", "--layers 1048577:" },
            { "--params 1099511627777", "--params 1099511627777:" },
            { "--batch 1099511627777", "--batch 1099511627777:" },
            { "--backward-time 3601", "--backward-time 3601: out of range: 0 .. 3600s" },
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
        T_HAS(err, "--shard-weights ");
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
        {
            /* Refused in one line, free of the value's control bytes. */
            static const struct { const char *arg, *has; } bad[] = {
                { "--verbose=1", "--verbose 1: takes no value" },
                { "--workers=65", "--workers 65: too large (at most 64)" },
                { "--chunk=1K", "at least 4096" },
                { "--chunk=2M", "at most 1048576" },
                { "--workers=3\n\x1b[31m", "--workers" },
                { "--work\ners=3", "" },
            };
            for (size_t i = 0; i < N_OF(bad); i++) {
                argv[1] = (char *)bad[i].arg;
                T_EQ_I(cli_parse(2, argv, tables, err), ERR_USAGE);
                T_TRUE(strchr(err, '\n') == NULL);
                T_TRUE(strchr(err, '\x1b') == NULL);
                T_HAS(err, bad[i].has);
            }
        }
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

/* A launcher's rank, size and local-rank variables, values for them, and
 * what rank discovery must make of them. */
struct launcher_row {
    const char *var[3], *val[3];
    int rank, world, local_rank;
    const char *source;
};

static const struct launcher_row launchers[] = {
    { { NULL }, { NULL }, 0, 1, 0, "default" },
    { { "RANK", "WORLD_SIZE", "LOCAL_RANK" }, { "3", "8", "1" }, 3, 8, 1, "torchrun" },
    { { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK" },
      { "5", "6", "2" }, 5, 6, 2, "openmpi" },
    { { "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID" }, { "1", "2", "0" }, 1, 2, 0, "mpich" },
    { { "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" }, { "7", "16", "3" }, 7, 16, 3,
      "slurm" },
};

/* parse_finish LINE succeeds with this rank and world, found from SOURCE. */
static void expect_rank(const char *line, int rank, int world, const char *source)
{
    struct cli_common c;
    char err[ERR_LEN];
    t_row("'%s' (%s)", line, source);
    T_EQ_I(parse_finish(line, &c, err), 0);
    T_EQ_I(c.rank, rank);
    T_EQ_I(c.world, world);
    T_STR(c.rank_source, source);
    t_row("%s", "");
}

/* Opens case ID: only launcher L's variables set, no flags. The caller
 * may add checks before the next case. */
static void launcher_case(const char *id, const char *name, const struct launcher_row *l)
{
    struct cli_common c;
    char err[ERR_LEN];

    T_CASE(id, name);
    clear_env();
    for (int i = 0; i < 3 && l->var[i]; i++)
        setenv(l->var[i], l->val[i], 1);
    expect_rank("", l->rank, l->world, l->source);
    T_EQ_I(parse_finish("", &c, err), 0);
    T_EQ_I(c.local_rank, l->local_rank);
}

static void test_env(void)
{
    struct cli_common c;
    char err[ERR_LEN];
    char host[64];
    int port;

    launcher_case("cli-6.1", "no flags, no environment: rank 0 of 1", &launchers[0]);
    launcher_case("cli-6.2", "torchrun: RANK, WORLD_SIZE, LOCAL_RANK", &launchers[1]);
    launcher_case("cli-6.3", "Open MPI: OMPI_COMM_WORLD_*", &launchers[2]);
    launcher_case("cli-6.4", "MPICH: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID", &launchers[3]);
    unsetenv("MPI_LOCALRANKID");     /* no local rank: the rank stands in */
    T_EQ_I(parse_finish("", &c, err), 0);
    T_EQ_I(c.local_rank, 1);
    launcher_case("cli-6.5", "Slurm: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID", &launchers[4]);
    T_END();

    T_CASE("cli-6.6", "precedence: torchrun > Open MPI > MPICH > Slurm");
    /* Launcher i (torchrun first) says rank i, world 10 i; unset in turn,
     * each one gives way to the next. */
    clear_env();
    for (int i = 1; i <= 4; i++) {
        char val[16];
        snprintf(val, sizeof val, "%d", i);
        setenv(launchers[i].var[0], val, 1);
        snprintf(val, sizeof val, "%d", 10 * i);
        setenv(launchers[i].var[1], val, 1);
    }
    for (int i = 1; i <= 4; i++) {
        expect_rank("", i, 10 * i, launchers[i].source);
        if (i < 4) {
            unsetenv(launchers[i].var[0]);
            unsetenv(launchers[i].var[1]);
        }
    }
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
    expect_rank("--rank 1 --world 2", 1, 2, "flags");
    T_EQ_I(parse_finish("--rank 1 --world 2", &c, err), 0);
    T_EQ_I(c.local_rank, 1);
    /* --rank with the world from the environment. */
    expect_rank("--rank 3", 3, 4, "flags");
    /* --world with the rank from the environment. */
    setenv("RANK", "2", 1);
    expect_rank("--world 3", 2, 3, "torchrun");
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
    {
        /* In order: set MASTER_ADDR and MASTER_PORT where given, call with
         * the flag (NULL: none); a success gives host and port. */
        static const struct {
            const char *addr, *port, *flag;
            int rc;
            const char *host;
            int want_port;
            const char *has;
        } rows[] = {
            { NULL, NULL, "127.0.0.1:5000", 0, "127.0.0.1", 5000, NULL },
            { NULL, NULL, "[::1]:0", 0, "::1", 0, NULL },
            { NULL, NULL, "node-7.example:65535", 0, "node-7.example", 65535, NULL },
            { NULL, NULL, "h:65536", ERR_USAGE, NULL, 0, "65535" },
            { NULL, NULL, "::1:5000", ERR_USAGE, NULL, 0, "[ADDRESS]:PORT" },
            /* The environment, when no flag. */
            { NULL, NULL, NULL, ERR_USAGE, NULL, 0, "--coordinator" },
            { NULL, NULL, NULL, ERR_USAGE, NULL, 0, "MASTER_ADDR" },
            { "10.0.0.1", NULL, NULL, ERR_USAGE, NULL, 0, "MASTER_PORT" },
            { NULL, "29500", NULL, 0, "10.0.0.1", 29500, NULL },
            { NULL, NULL, "127.0.0.1:1", 0, "127.0.0.1", 1, NULL },   /* the flag wins */
            { "[fe80::1]", NULL, NULL, 0, "fe80::1", 29500, NULL },
            { "fe80::2", NULL, NULL, 0, "fe80::2", 29500, NULL },
            { NULL, "65536", NULL, ERR_USAGE, NULL, 0, "MASTER_PORT" },
            { NULL, "-1", NULL, ERR_USAGE, NULL, 0, "MASTER_PORT" },
        };
        static const char *const bad[] = {
            "h:65536", "h:-1", "h", "h:", ":5000", "::1:5000", "[::1]5000", "[::1", "[]:1",
            "h:5x", "h: 5", "h:+5", "a b:1", "", "h:99999999999999999999",
        };
        clear_env();
        for (size_t i = 0; i < N_OF(rows); i++) {
            t_row("%s %s %s", rows[i].addr ? rows[i].addr : "-",
                  rows[i].port ? rows[i].port : "-", rows[i].flag ? rows[i].flag : "-");
            if (rows[i].addr)
                setenv("MASTER_ADDR", rows[i].addr, 1);
            if (rows[i].port)
                setenv("MASTER_PORT", rows[i].port, 1);
            T_EQ_I(cli_coordinator(rows[i].flag, host, sizeof host, &port, err), rows[i].rc);
            if (rows[i].host) {
                T_STR(host, rows[i].host);
                T_EQ_I(port, rows[i].want_port);
            }
            if (rows[i].has)
                T_HAS(err, rows[i].has);
        }
        t_row("%s", "");
        clear_env();
        for (size_t i = 0; i < N_OF(bad); i++) {
            port = -5;
            strcpy(host, "unchanged");
            T_EQ_I(cli_coordinator(bad[i], host, sizeof host, &port, err), ERR_USAGE);
            T_HAS(err, "--coordinator");
            T_EQ_I(port, -5);
            T_STR(host, "unchanged");
        }
        T_EQ_I(cli_coordinator("averyveryverylonghostname:1", host, 8, &port, err), ERR_USAGE);
    }
    T_END();
}

/* ---------------------------------------------------------- cross-checks */

static void test_finish(void)
{
    struct cli_common c;
    char err[ERR_LEN];

    clear_env();

    T_CASE("cli-7.1", "rank >= world is refused");
    {
        static const struct line_row rows[] = {
            { "--rank 4 --world 4", ERR_USAGE, "--rank" },
            { "--rank 4 --world 4", ERR_USAGE, "4" }, { "--rank 3 --world 4", 0, NULL },
            { "--rank 1", ERR_USAGE, "--rank" },      /* world 1 by default */
        };
        check_lines(parse_finish, rows, N_OF(rows));
    }
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
    {
        static const struct line_row rows[] = {
            { "--steps 2 --warmup 2", ERR_USAGE, "--warmup" },
            { "--steps 2 --warmup 2", ERR_USAGE, "--steps" },
            { "--steps 1 --warmup 0", 0, NULL }, { "--steps 3 --warmup 2", 0, NULL },
        };
        check_lines(parse_finish, rows, N_OF(rows));
    }
    T_EQ_I(parse_finish("--steps 1", &c, err), 0);      /* auto warmup: 0 */
    T_EQ_I(c.warmup, 0);
    T_EQ_I(parse_finish("--steps 10", &c, err), 0);     /* auto warmup: 2 */
    T_EQ_I(c.warmup, 2);
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
    expect_rank("--world 1", 0, 1, "default");
    T_END();

    T_CASE("cli-7.5", "output paths: a missing folder or a folder is refused at start");
    refused_line(parse_finish, "--csv /nonexistent-psring-dir/r.csv", "--csv");
    refused_line(parse_finish, "--csv /nonexistent-psring-dir/r.csv", "does not exist");
    refused_line(parse_finish, "--weights-out /nonexistent-psring-dir/w", "--weights-out");
    refused_line(parse_finish, "--csv /tmp", "folder");
    refused_line(parse_finish, "--csv /tmp/", NULL);
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
