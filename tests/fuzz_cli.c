/* fuzz_cli.c -- fuzz target for the command-line module (common/base/units.c,
 * common/base/cli.c, common/train/cli_common.c).
 *
 * Each input, as a NUL-terminated string, goes to every value parser
 * (cli_parse_ll, _u64, _size, _rate, _time, _double, _list) and to
 * cli_coordinator; split at spaces and NULs it is also an argv for
 * cli_parse against a role table of every option kind plus the common
 * table, followed by cli_common_finish and cli_common_free. Crashes, leaks
 * and undefined behaviour are the sanitizers' to find; this file adds the
 * invariants callers rely on, each an abort() when broken:
 *   - a refusal returns ERR_USAGE and one line: non-empty, no newline,
 *     shorter than ERR_LEN; a parser writes its output only on success;
 *   - integers and sizes agree with a plain re-statement of the grammar
 *     (digits, optional unit, no overflow) computed in 128 bits, in both
 *     directions: what it accepts has the value the digits and unit say,
 *     and what the re-statement calls valid is accepted;
 *   - rates and times that parse are finite and >= 0, and for the simple
 *     form DIGITS[UNIT] equal digits x the unit's factor exactly;
 *   - after cli_parse succeeds every field is within its flag's bounds;
 *     after cli_common_finish succeeds 0 <= rank < world.
 * cli_main_parse exits, so it is not called here. Built with
 * tests/fuzzdrv.c (deterministic driver, `make check`) or with clang
 * -fsanitize=fuzzer (`make fuzz`).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/cli_common.h"
#include "base/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---------------------------------------------------------------- seeds */

const char *const fuzz_name = "cli-fuzz";

#define SEED(s) (const uint8_t *)(s)
const uint8_t *const fuzz_seeds[] = {
    SEED("64MiB"), SEED("500Mbit/s"), SEED("--link-bw 1Gbit --steps 3"),
    SEED("17179869184G"), SEED("1.5ms"), SEED("[::1]:29500"),
    SEED("--shard-weights 1,2.5,3 --shard-weights=4,5 --world 2 --rank=1"),
    SEED("--workload synthetic --params 1M --dtype f32 --lr 1e-3 --timeout 50us"),
    SEED("--csv /tmp/x.csv --warmup 0 --steps 1 --seed 18446744073709551615"),
    SEED("-9223372036854775808"),
};
const size_t fuzz_seed_sizes[] = {
    5, 9, 25, 12, 5, 11, 62, 70, 66, 20,
};
const size_t fuzz_nseeds = sizeof fuzz_seeds / sizeof fuzz_seeds[0];

_Static_assert(sizeof fuzz_seeds / sizeof fuzz_seeds[0]
               == sizeof fuzz_seed_sizes / sizeof fuzz_seed_sizes[0],
               "one size per seed");

/* ------------------------------------------------------------ oracles */

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

/* The string under test, for the report of a broken invariant. */
static const char *cur;

#define CHECK(c) do { if (!(c)) broken(__LINE__, #c); } while (0)

static void broken(int line, const char *what)
{
    fprintf(stderr, "fuzz-cli: invariant broken at %s:%d: %s\n  on \"", __FILE__, line, what);
    for (const char *p = cur; p && *p; p++)
        fprintf(stderr, *p >= ' ' && *p < 0x7f ? "%c" : "\\x%02x", (unsigned char)*p);
    fprintf(stderr, "\"\n");
    abort();
}

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

/* ref_digits: s starts with decimal digits; their value in 128 bits,
 * saturated at 2^80: past 64 bits, and still
 * room for a unit shift of up to 40 bits. OUT: *end. -1 if no digit. */
static int ref_digits(const char *s, u128 *v, const char **end)
{
    u128 x = 0, cap = (u128)1 << 80;
    if (!digit(*s))
        return -1;
    for (; digit(*s); s++) {
        x = x * 10 + (unsigned)(*s - '0');
        if (x > cap)
            x = cap;
    }
    *v = x;
    *end = s;
    return 0;
}

/* ref_size: the size grammar restated. 0 and *out, or -1. */
static int ref_size(const char *s, uint64_t *out)
{
    static const struct { const char *suf; unsigned shift; } units[] = {
        { "", 0 }, { "K", 10 }, { "M", 20 }, { "G", 30 }, { "T", 40 },
        { "k", 10 }, { "m", 20 }, { "g", 30 }, { "t", 40 },
        { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
    };
    const char *end;
    u128 v;
    if (ref_digits(s, &v, &end) != 0)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].suf) != 0)
            continue;
        v <<= units[i].shift;
        if (v > UINT64_MAX)
            return -1;
        *out = (uint64_t)v;
        return 0;
    }
    return -1;
}

/* ref_ll: [-]digits within [min, max], compared in 128 bits. */
static int ref_ll(const char *s, long long min, long long max, long long *out)
{
    const char *end;
    int neg = *s == '-';
    u128 v;
    i128 x;
    if (ref_digits(s + neg, &v, &end) != 0 || *end != '\0')
        return -1;
    x = neg ? -(i128)v : (i128)v;
    if (x < min || x > max)
        return -1;
    *out = (long long)x;
    return 0;
}

/* simple_unit: s is DIGITS (1 to 9 of them) then exactly suffix u. */
static int simple_unit(const char *s, const char *u, double *digits_value)
{
    size_t n = 0;
    while (digit(s[n]))
        n++;
    if (n == 0 || n > 9 || strcmp(s + n, u) != 0)
        return 0;
    *digits_value = (double)strtol(s, NULL, 10);
    return 1;
}

/* one_line: the message contract of every refusal. */
static void check_refusal(int rc, const char *err)
{
    CHECK(rc == ERR_USAGE);
    CHECK(err[0] != '\0');
    CHECK(strlen(err) < ERR_LEN);
    CHECK(strchr(err, '\n') == NULL);
}

/* refused_number: a double parser refused s: the message contract, d
 * left at its -3, and s not DIGITS alone nor DIGITS then `unit`. */
static void refused_number(int rc, const char *err, double d, const char *s, const char *unit)
{
    double dv;
    check_refusal(rc, err);
    CHECK(d == -3);
    if (unit)
        CHECK(!simple_unit(s, unit, &dv) && !simple_unit(s, "", &dv));
}

/* ----------------------------------------------------- value parsers */

static void fuzz_values(const char *s)
{
    char err[ERR_LEN];
    long long ll, ref;
    uint64_t u, ru;
    double d, dv;
    int rc;

    cur = s;
    /* Integers under two sets of bounds. */
    static const long long bounds[][2] = {
        { LLONG_MIN, LLONG_MAX }, { 1, 65536 }, { -1000, -10 }, { 0, 0 },
    };
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        ll = 0x5a5a;
        err[0] = '\0';
        rc = cli_parse_ll(s, bounds[i][0], bounds[i][1], &ll, err);
        int rrc = ref_ll(s, bounds[i][0], bounds[i][1], &ref);
        if (rc == 0) {
            CHECK(rrc == 0 && ll == ref);
        } else {
            check_refusal(rc, err);
            CHECK(rrc != 0);
            CHECK(ll == 0x5a5a);
        }
    }

    u = 0x5a5a;
    err[0] = '\0';
    rc = cli_parse_u64(s, &u, err);
    {
        const char *end;
        u128 v;
        int valid = ref_digits(s, &v, &end) == 0 && *end == '\0' && v <= UINT64_MAX;
        if (rc == 0) {
            CHECK(valid && u == (uint64_t)v);
        } else {
            check_refusal(rc, err);
            CHECK(!valid && u == 0x5a5a);
        }
    }

    u = 0x5a5a;
    err[0] = '\0';
    rc = cli_parse_size(s, &u, err);
    if (rc == 0) {
        CHECK(ref_size(s, &ru) == 0 && u == ru);
    } else {
        check_refusal(rc, err);
        CHECK(ref_size(s, &ru) != 0 && u == 0x5a5a);
    }

    d = -3;
    err[0] = '\0';
    rc = cli_parse_rate(s, &d, err);
    if (rc == 0) {
        static const struct { const char *u; double f; } units[] = {
            { "", 1 }, { "/s", 1 }, { "Mbit", 125000 }, { "Gbit/s", 1.25e8 },
            { "MB", 1e6 }, { "GiB", 1073741824.0 }, { "kbit", 125 },
        };
        CHECK(isfinite(d) && d >= 0);
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (simple_unit(s, units[i].u, &dv))
                CHECK(d == dv * units[i].f);
    } else {
        refused_number(rc, err, d, s, "Mbit");
    }

    d = -3;
    err[0] = '\0';
    rc = cli_parse_time(s, &d, err);
    if (rc == 0) {
        CHECK(isfinite(d) && d >= 0);
        if (simple_unit(s, "us", &dv))
            CHECK(d == dv / 1e6);
        if (simple_unit(s, "ms", &dv))
            CHECK(d == dv / 1e3);
        if (simple_unit(s, "s", &dv) || simple_unit(s, "", &dv))
            CHECK(d == dv);
    } else {
        refused_number(rc, err, d, s, "us");
    }

    d = -3;
    err[0] = '\0';
    rc = cli_parse_double(s, &d, err);
    if (rc == 0)
        CHECK(isfinite(d));
    else
        refused_number(rc, err, d, s, NULL);

    {
        double *w = NULL;
        int n = -1;
        err[0] = '\0';
        rc = cli_parse_list(s, &w, &n, err);
        if (rc == 0) {
            size_t commas = 0;
            for (const char *c = s; *c; c++)
                commas += *c == ',';
            CHECK(w != NULL && n >= 1 && n <= 65536 && (size_t)n == commas + 1);
            for (int i = 0; i < n; i++)
                CHECK(isfinite(w[i]) && w[i] > 0);
            free(w);
        } else {
            check_refusal(rc, err);
            CHECK(w == NULL && n == -1);
        }
    }

    {
        char host[64];
        int port = -9;
        strcpy(host, "unchanged");
        err[0] = '\0';
        rc = cli_coordinator(s, host, sizeof host, &port, err);
        if (rc == 0) {
            CHECK(port >= 0 && port <= 65535);
            CHECK(host[0] != '\0' && strlen(host) < sizeof host);
            for (const char *h = host; *h; h++)
                CHECK(*h > ' ' && *h < 0x7f);
        } else {
            check_refusal(rc, err);
            CHECK(port == -9 && strcmp(host, "unchanged") == 0);
        }
    }
}

/* --------------------------------------------------------- the loop */

#define MAX_ARGS 256

static void fuzz_argv(char *buf, size_t size)
{
    static int env_cleared;
    struct cli_common c;
    char err[ERR_LEN];
    char *argv[MAX_ARGS + 1];
    int argc = 0, rc;

    int verbose = 0, workers = 0;
    uint64_t count = 0, chunk = 0;
    double bw = 0, wait = 0, ratio = 0;
    const char *listen = NULL;
    const struct cli_opt role[] = {
        { "verbose", CLI_BOOL, &verbose, NULL, "bool", 0, 0, NULL },
        { "workers", CLI_INT, &workers, "K", "int", 1, 64, NULL },
        { "count", CLI_U64, &count, "N", "u64", 3, 1000, NULL },
        { "chunk", CLI_SIZE, &chunk, "SIZE", "size", 4096, 1 << 20, NULL },
        { "bw", CLI_RATE, &bw, "RATE", "rate", 0, 0, NULL },
        { "wait", CLI_TIME, &wait, "TIME", "time", 0, 0, NULL },
        { "ratio", CLI_DOUBLE, &ratio, "X", "double", 0, 0, NULL },
        { "listen", CLI_STRING, &listen, "HOST:PORT", "string", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *tables[3];

    /* The launcher variables of the machine running the fuzzer must not
     * change what cli_common_finish sees. */
    if (!env_cleared) {
        static const char *const vars[] = {
            "RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE",
            "MPI_LOCALRANKID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
        };
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            unsetenv(vars[i]);
        env_cleared = 1;
    }

    argv[argc++] = "fuzz";
    for (size_t i = 0; i <= size && argc < MAX_ARGS; ) {
        size_t j = i;
        while (j < size && buf[j] != ' ' && buf[j] != '\0')
            j++;
        buf[j] = '\0';              /* buf has size + 1 bytes */
        argv[argc++] = buf + i;
        i = j + 1;
    }
    argv[argc] = NULL;

    cli_common_defaults(&c);
    tables[0] = role;
    tables[1] = cli_common_opts(&c);
    tables[2] = NULL;
    err[0] = '\0';
    rc = cli_parse(argc, argv, tables, err);
    if (rc == CLI_HELP || rc == CLI_VERSION) {
        /* nothing to check */
    } else if (rc != 0) {
        check_refusal(rc, err);
    } else {
        CHECK(verbose == 0 || verbose == 1);
        CHECK(workers == 0 || (workers >= 1 && workers <= 64));
        CHECK(count == 0 || (count >= 3 && count <= 1000));
        CHECK(chunk == 0 || (chunk >= 4096 && chunk <= (1 << 20)));
        CHECK(isfinite(bw) && bw >= 0 && isfinite(wait) && wait >= 0 && isfinite(ratio));
        CHECK(c.rank == -1 || (c.rank >= 0 && c.rank < 65536));
        CHECK(c.world == -1 || (c.world >= 1 && c.world <= 65536));
        CHECK(c.micro >= 1 && c.steps >= 1 && c.warmup >= -1);   /* -1: auto, set by finish */
        CHECK(isfinite(c.lr) && c.lr > 0);
        CHECK(isfinite(c.timeout) && c.timeout > 0);
        CHECK(isfinite(c.link_bw) && c.link_bw >= 0);
        CHECK(isfinite(c.link_latency) && c.link_latency >= 0);
        CHECK((c.shard_weights == NULL) == (c.n_shard_weights == 0));
        for (int i = 0; i < c.n_shard_weights; i++)
            CHECK(isfinite(c.shard_weights[i]) && c.shard_weights[i] > 0);
        err[0] = '\0';
        rc = cli_common_finish(&c, err);
        if (rc == 0) {
            CHECK(c.rank >= 0 && c.rank < c.world && c.local_rank >= 0);
            CHECK(c.rank_source != NULL);
            CHECK(c.warmup < c.steps);
            CHECK(!c.shard_weights || c.n_shard_weights == c.world);
        } else {
            check_refusal(rc, err);
        }
    }
    cli_common_free(&c);
    CHECK(c.shard_weights == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    /* The value parsers see the bytes up to the first NUL, as from argv. */
    fuzz_values(s);
    fuzz_argv(s, size);
    free(s);
    return 0;
}
