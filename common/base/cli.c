/* cli.c -- command lines: the flag loop over a list of option tables,
 * and --help.
 *
 * The values themselves are parsed by units.c (cli_parse_*); the common
 * flags every binary takes, and rank discovery from the environment, are
 * cli_common.c's. A flag is "--name value" or "--name=value"; anything
 * else is refused with one line naming the flag.
 */
#include "cli.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"
#include "err.h"

/* ---------------------------------------------------------- the bounds */

/* THE BOUNDS. Every numeric flag of every binary, with the range a value
 * must fall in beyond what its parser takes (units.c parses; this says
 * what is sane). The flag loop applies it after the value parsed, by the
 * flag's name, so a binary's own table cannot forget it; the per-option
 * min/max of a cli_opt still apply too (the narrower wins). docs/design.md's
 * CLI section prints this table; keep the two the same.
 *
 * The value compared is the parsed one: seconds, bytes/s, bytes, a count.
 * CLI_INT, CLI_U64 and CLI_SIZE flags are compared as their integer,
 * CLI_TIME, CLI_RATE, CLI_DOUBLE and the CLI_CUSTOM ones below (lr,
 * timeout) as the double they store. Why each limit:
 *   timeout        1 ms .. 1 day: below, every wait fails at once; above,
 *                  a hang looks like a run (and 1e19 s overflows clocks)
 *   link-latency   0 .. 10 s: the emulated one-way latency (link.h)
 *   link-bw        0 (off), or 1 kbit/s .. 1 Tbit/s (125 .. 1.25e11 B/s)
 *   backward-time  0 .. 1 hour per step (a sleep)
 *   straggler-factor  --straggler RANK:FACTOR's FACTOR: 1 .. 1000 (below 1
 *                  it would be a faster worker, not a straggler); its RANK
 *                  < K is cli_common_finish's (K is known there)
 *   jitter         0 .. 2: exp(2 z) already spans 50x between z = -1 and 1
 *   pause-time     --pause RANK:TIME[@EVERY]'s TIME: 0 .. 1 hour;
 *   pause-every    its EVERY: 1 .. 10^9 steps; RANK < K as the straggler's
 *   lr             > 0 and finite (a zero lr trains nothing; parse_lr)
 *   momentum, beta1, beta2   0 .. < 1: at 1 the average never forgets
 *                  (and Adam's bias correction 1 - beta^t is 0)
 *   eps            > 0 .. 1: Adam's denominator guard; 0 divides by 0
 *   zero           0 .. 3: ring_worker's ZeRO stages (train.h)
 *   steps          1 .. 10^9
 *   world/workers  1 .. PROTO_MAX_WORLD (65536), rank 0 .. 65535
 *   micro          1 .. STORE_MAX_PUSHES (65536): sync-every-micro pushes
 *                  once per micro-batch, and the server takes at most that
 *   params, batch  1 .. 2^40 elements/examples: n * 8 and B * m stay far
 *                  from 64-bit overflow
 *   layers         1 .. 2^20
 *   bucket-size, minbytes (-b), maxbytes (-e)   1 B .. 1 TiB
 *   piece          8 B .. 1 GiB
 *   range-first, range-count   ps_server --range FIRST:COUNT's parts: FIRST
 *                  0 .. 2^40 - 1, COUNT 1 .. 2^40 (the params bound); that
 *                  the range lies inside n is setup.c's (n is known there)
 *   stepfactor (-f) 2 .. 2^20; iters (-n) 1 .. 2^20; warmup-iters (-w) 0 .. 2^20
 *   checkpoint-every  1 .. 10^9 steps, like --steps; ps_server also refuses
 *                  more than its --steps (no checkpoint would ever be written)
 *   reconnect-window  1 ms .. 1 day, as the timeout: how long a ps_worker
 *                  keeps redialling a lost server
 *   root           0 .. 65535, a rank (< K: ring_worker checks it knowing K)
 *   imbalance      1 .. 65536: below 1 no rank would be hot; at most K
 *                  (everything to one rank: ring_worker checks it knowing K)
 *   target-loss    >= 0 and finite: every workload's loss is a mean of
 *                  squares (>= 0), so a negative target is never reached
 */
/* the largest double below 1: the decays' upper bound, 1 excluded */
#define BELOW_ONE (1.0 - 0x1p-53)

struct cli_bound {
    const char *name;       /* the flag, without dashes */
    double lo, hi;          /* inclusive */
    int lo_open;            /* lo itself refused (x > lo) */
    int zero_ok;            /* 0 accepted outside [lo, hi] (off) */
    const char *range;      /* for the message */
};

static const struct cli_bound cli_bounds[] = {
    { "timeout", 1e-3, 86400, 0, 0, "1ms .. 86400s (1 day)" },
    { "link-latency", 0, 10, 0, 0, "0 .. 10s" },
    { "link-bw", 125, 1.25e11, 0, 1, "0 (off), or 1kbit/s .. 1000Gbit/s (1 Tbit/s)" },
    { "backward-time", 0, 3600, 0, 0, "0 .. 3600s (1 hour)" },
    { "straggler-factor", 1, 1000, 0, 0, "FACTOR 1 .. 1000" },
    { "jitter", 0, 2, 0, 0, "0 .. 2 (SIGMA of the log-normal factor)" },
    { "pause-time", 0, 3600, 0, 0, "TIME 0 .. 3600s (1 hour)" },
    { "pause-every", 1, 1e9, 0, 0, "EVERY 1 .. 1000000000 steps" },
    { "lr", 0, 1e300, 1, 0, "> 0 and finite" },
    { "momentum", 0, BELOW_ONE, 0, 0, "0 .. < 1" },
    { "beta1", 0, BELOW_ONE, 0, 0, "0 .. < 1" },
    { "beta2", 0, BELOW_ONE, 0, 0, "0 .. < 1" },
    { "eps", 0, 1, 1, 0, "> 0 .. 1" },
    { "zero", 0, 3, 0, 0, "0 (off), 1, 2 or 3" },
    { "steps", 1, 1e9, 0, 0, "1 .. 1000000000" },
    { "world", 1, 65536, 0, 0, "1 .. 65536 (PROTO_MAX_WORLD)" },
    { "workers", 1, 65536, 0, 0, "1 .. 65536 (PROTO_MAX_WORLD)" },
    { "rank", 0, 65535, 0, 0, "0 .. 65535" },
    { "micro", 1, 65536, 0, 0, "1 .. 65536 (STORE_MAX_PUSHES)" },
    { "params", 1, 1099511627776.0, 0, 0, "1 .. 2^40" },
    { "batch", 1, 1099511627776.0, 0, 0, "1 .. 2^40" },
    { "layers", 1, 1048576, 0, 0, "1 .. 2^20" },
    { "bucket-size", 1, 1099511627776.0, 0, 0, "1 .. 1TiB" },
    { "minbytes", 1, 1099511627776.0, 0, 0, "1 .. 1TiB" },
    { "maxbytes", 1, 1099511627776.0, 0, 0, "1 .. 1TiB" },
    { "piece", 8, 1073741824.0, 0, 0, "8 .. 1GiB" },
    { "range-first", 0, 1099511627775.0, 0, 0, "FIRST 0 .. 2^40 - 1" },
    { "range-count", 1, 1099511627776.0, 0, 0, "COUNT 1 .. 2^40" },
    { "stepfactor", 2, 1048576, 0, 0, "2 .. 2^20" },
    { "iters", 1, 1048576, 0, 0, "1 .. 2^20" },
    { "warmup-iters", 0, 1048576, 0, 0, "0 .. 2^20" },
    { "checkpoint-every", 1, 1e9, 0, 0, "1 .. 1000000000 steps (and at most --steps)" },
    { "reconnect-window", 1e-3, 86400, 0, 0, "1ms .. 86400s (1 day)" },
    { "root", 0, 65535, 0, 0, "0 .. 65535 (and < K)" },
    { "imbalance", 1, 65536, 0, 0, "1 .. 65536 (and <= K)" },
    { "target-loss", 0, DBL_MAX, 0, 0, ">= 0 and finite" },
    { "ssp-bound", 0, 1e9, 0, 0, "ssp:N, N 0 .. 1000000000 steps" },
    { "backup-count", 1, 65535, 0, 0, "backup:N, N 1 .. 65535 (and < K)" },
    { NULL, 0, 0, 0, 0, NULL },
};

int cli_bound_check(const char *name, double x, const char *v, char *err)
{
    char q[CLI_QUOTE_BUF];
    const struct cli_bound *b;

    for (b = cli_bounds; b->name && strcmp(b->name, name) != 0; b++)
        ;
    if (!b->name)
        return 0;
    if (b->zero_ok && x == 0)
        return 0;
    if (!(x >= b->lo) || x > b->hi || (b->lo_open && x <= b->lo)) {
        err_say(err, "%s is out of range: %s", cli_quote(v, q), b->range);
        return ERR_USAGE;
    }
    return 0;
}

/* check_bound: the value just stored for o (from v) against THE BOUNDS.
 * 0, or ERR_USAGE with "'v' is out of range: RANGE" in err. The flags
 * whose value is not one number (--straggler, --pause) check their parts
 * in their parsers, by the parts' names. */
static int check_bound(const struct cli_opt *o, const char *v, char *err)
{
    double x;

    switch (o->kind) {
    case CLI_INT:
        x = *(const int *)o->dst;
        break;
    case CLI_U64:
    case CLI_SIZE:
        x = (double)*(const uint64_t *)o->dst;
        break;
    case CLI_RATE:
    case CLI_TIME:
    case CLI_DOUBLE:
        x = *(const double *)o->dst;
        break;
    case CLI_CUSTOM:        /* lr, timeout: a double (see THE BOUNDS) */
        if (strcmp(o->name, "lr") != 0 && strcmp(o->name, "timeout") != 0)
            return 0;
        x = *(const double *)o->dst;
        break;
    default:
        return 0;
    }
    return cli_bound_check(o->name, x, v, err);
}

/* ----------------------------------------------------------- the loop */

/* ------------------------------------------------------- usage errors */

/* cli_value: v as a usage line shows it after its flag: as typed when it
 * is a plain word (4M, 127.0.0.1:0, /tmp/x), else in single quotes (empty,
 * blanks, quotes, shell characters), cut and escaped by cli_clean. */
_Static_assert(CLI_VALUE_BUF == CLI_QUOTE_BUF, "cli.h's CLI_VALUE_BUF is cli_clean's buffer");

const char *cli_value(const char *v, char *buf)
{
    int plain = v[0] != '\0';

    for (const char *p = v; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                (*p >= '0' && *p <= '9') || strchr("._:/,+-@%=^~[]", *p) != NULL;
    return cli_clean(v, buf, !plain);
}

/* cli_reason: a value parser's reason without the value it starts with: the
 * parsers (units.c, the custom ones) say "'v' is not a size", and the
 * usage line already shows v after its flag, so "--bytes x: not a size". */
const char *cli_reason(const char *reason, const char *v)
{
    char q[CLI_QUOTE_BUF];
    size_t n = strlen(cli_quote(v, q));

    if (strncmp(reason, q, n) == 0 && reason[n] == ' ') {
        reason += n + 1;
        if (strncmp(reason, "is ", 3) == 0)
            reason += 3;
    } else if (strncmp(reason, q, n) == 0 && reason[n] == ':' && reason[n + 1] == ' ') {
        reason += n + 2;
    }
    return reason;
}

void cli_usage_print(const char *prog, const char *msg)
{
    fprintf(stderr, "%s: %s; see %s --help\n", prog, msg, prog);
}

void cli_usage_fail(const char *prog, const char *msg)
{
    cli_usage_print(prog, msg);
    exit(CLI_EXIT_USAGE);
}


static const struct cli_opt *find_opt(const struct cli_opt *const *tables,
                                      const char *name, size_t n)
{
    /* First table first: a program's own table can shadow a common flag. */
    for (size_t t = 0; tables && tables[t]; t++)
        for (const struct cli_opt *o = tables[t]; o->name; o++)
            if (strlen(o->name) == n && memcmp(o->name, name, n) == 0)
                return o;
    return NULL;
}

/* set_value: parse v into o->dst. 0 or an error code, reason in err. */
static int set_value(const struct cli_opt *o, const char *v, char *err)
{
    char q[CLI_QUOTE_BUF];
    long long ll;
    uint64_t u;
    double d;
    int rc;

    switch (o->kind) {
    case CLI_INT: {
        long long lo = o->min < INT_MIN ? INT_MIN : o->min;
        long long hi = (o->max == 0 || o->max > INT_MAX) ? INT_MAX : o->max;
        if (lo > INT_MAX)
            lo = INT_MAX;
        if ((rc = cli_parse_ll(v, lo, hi, &ll, err)) != 0)
            return rc;
        *(int *)o->dst = (int)ll;
        return 0;
    }
    case CLI_U64:
    case CLI_SIZE: {
        uint64_t lo = o->min < 0 ? 0 : (uint64_t)o->min;
        uint64_t hi = o->max <= 0 ? UINT64_MAX : (uint64_t)o->max;
        rc = o->kind == CLI_U64 ? cli_parse_u64(v, &u, err) : cli_parse_size(v, &u, err);
        if (rc != 0)
            return rc;
        if (u < lo) {
            err_say(err, "%s is too small (at least %llu)", cli_quote(v, q), (unsigned long long)lo);
            return ERR_USAGE;
        }
        if (u > hi) {
            err_say(err, "%s is too large (at most %llu)", cli_quote(v, q), (unsigned long long)hi);
            return ERR_USAGE;
        }
        *(uint64_t *)o->dst = u;
        return 0;
    }
    case CLI_RATE:
    case CLI_TIME:
    case CLI_DOUBLE:
        rc = o->kind == CLI_RATE ? cli_parse_rate(v, &d, err) :
             o->kind == CLI_TIME ? cli_parse_time(v, &d, err) : cli_parse_double(v, &d, err);
        if (rc != 0)
            return rc;
        *(double *)o->dst = d;
        return 0;
    case CLI_STRING:
        /* Paths get ".RANK" and similar appended: leave room for them. */
        if (strlen(v) >= CLI_PATH_MAX - 16) {
            err_say(err, "%s is too long (at most %d bytes)", cli_quote(v, q), CLI_PATH_MAX - 17);
            return ERR_USAGE;
        }
        *(const char **)o->dst = v;
        return 0;
    case CLI_CUSTOM:
        return o->parse(v, o->dst, err);
    case CLI_BOOL:
        break;
    }
    err_say(err, "internal error: option kind %d", (int)o->kind);
    return ERR_USAGE;
}

int cli_parse(int argc, char **argv, const struct cli_opt *const *tables, char *err)
{
    char q[CLI_QUOTE_BUF];
    char reason[ERR_LEN];

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *name, *eq, *v;
        const struct cli_opt *o;
        size_t n;
        int rc;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return CLI_HELP;
        if (strcmp(a, "--version") == 0)
            return CLI_VERSION;
        if (a[0] != '-') {
            err_say(err, "%s: unexpected argument (this program takes only --flags)",
                     cli_quote(a, q));
            return ERR_USAGE;
        }
        if (a[1] != '-' || a[2] == '\0' || a[2] == '=') {
            err_say(err, "%s: unknown option (options are spelled --name)", cli_quote(a, q));
            return ERR_USAGE;
        }
        name = a + 2;
        eq = strchr(name, '=');
        n = eq ? (size_t)(eq - name) : strlen(name);
        o = find_opt(tables, name, n);
        if (!o) {
            char nm[CLI_QUOTE_MAX + 2];
            if (n > CLI_QUOTE_MAX + 1)
                n = CLI_QUOTE_MAX + 1;      /* one past the cut: cli_clean() adds "..." */
            memcpy(nm, name, n);
            nm[n] = '\0';
            err_say(err, "--%s: unknown option", cli_clean(nm, q, 0));
            return ERR_USAGE;
        }
        if (o->kind == CLI_BOOL) {
            if (eq) {
                err_say(err, "--%s %s: takes no value", o->name, cli_value(eq + 1, q));
                return ERR_USAGE;
            }
            *(int *)o->dst = 1;
            continue;
        }
        if (eq) {
            v = eq + 1;
        } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
            v = argv[++i];
        } else {
            err_say(err, "--%s: missing value (%s expected)", o->name,
                     o->metavar ? o->metavar : "a value");
            return ERR_USAGE;
        }
        if (v[0] == '\0') {
            err_say(err, "--%s '': empty value (%s expected)", o->name,
                     o->metavar ? o->metavar : "a value");
            return ERR_USAGE;
        }
        reason[0] = '\0';
        rc = set_value(o, v, reason);
        if (rc == 0)
            rc = check_bound(o, v, reason);
        if (rc != 0) {
            err_say(err, "--%s %s: %s", o->name, cli_value(v, q), cli_reason(reason, v));
            return rc == -ENOMEM ? rc : ERR_USAGE;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- help */

#define HELP_COL_MAX 30     /* a longer "--name METAVAR" gets its own line */

static size_t opt_width(const struct cli_opt *o)
{
    return 2 + strlen(o->name) + (o->metavar && o->kind != CLI_BOOL ? 1 + strlen(o->metavar) : 0);
}

static void print_opt(FILE *f, const char *name, const char *metavar, const char *help,
                      size_t col)
{
    size_t w = 2 + strlen(name) + (metavar ? 1 + strlen(metavar) : 0);
    fprintf(f, "  --%s%s%s", name, metavar ? " " : "", metavar ? metavar : "");
    if (w > col)
        fprintf(f, "\n%*s", (int)(col + 2), "");
    else
        fprintf(f, "%*s", (int)(col - w), "");
    fprintf(f, "  %s\n", help ? help : "");
}

void cli_usage(FILE *f, const char *prog, const char *synopsis,
               const struct cli_opt *const *tables)
{
    size_t col = strlen("--version");

    for (size_t t = 0; tables && tables[t]; t++)
        for (const struct cli_opt *o = tables[t]; o->name; o++) {
            size_t w = opt_width(o);
            if (w <= HELP_COL_MAX && w > col)
                col = w;
        }
    fprintf(f, "usage: %s %s\n", prog, synopsis ? synopsis : "[options]");
    for (size_t t = 0; tables && tables[t]; t++) {
        fprintf(f, "\n");
        for (const struct cli_opt *o = tables[t]; o->name; o++)
            print_opt(f, o->name, o->kind == CLI_BOOL ? NULL : o->metavar, o->help, col);
    }
    fprintf(f, "\n");
    print_opt(f, "help", NULL, "print this help and exit (also -h)", col);
    print_opt(f, "version", NULL, "print the version and exit", col);
    /* The notes on units and rank discovery only where they apply. */
    int units = 0, ranks = 0;
    for (size_t t = 0; tables && tables[t]; t++)
        for (const struct cli_opt *o = tables[t]; o->name; o++) {
            units |= o->kind == CLI_SIZE || o->kind == CLI_RATE || o->kind == CLI_TIME;
            ranks |= strcmp(o->name, "rank") == 0;
        }
    fprintf(f, "\nValues are given as --name VALUE or --name=VALUE; the last of a repeated\n"
               "flag wins.%s\n", units ? " Units:" : "");
    if (units)
        fprintf(f, "%s",
                "  sizes  4096, 4K, 64M, 1G, 4KiB, 64MiB: powers of 1024, whole numbers\n"
                "  rates  500Mbit, 1Gbit (bits/s), 100MB, 1GB (10^6, 10^9 bytes/s),\n"
                "         100MiB, 1GiB (2^20, 2^30 bytes/s), a bare number is bytes/s;\n"
                "         \"/s\" may follow; fractions allowed (1.5Gbit)\n"
                "  times  50us, 2ms, 1.5s; a bare number is seconds\n");
    if (ranks)
        fprintf(f, "%s",
                "Rank and world come from --rank/--world, else the environment, first\n"
                "found: RANK/WORLD_SIZE/LOCAL_RANK (torchrun), OMPI_COMM_WORLD_RANK/_SIZE/\n"
                "_LOCAL_RANK (Open MPI), PMI_RANK/PMI_SIZE/MPI_LOCALRANKID (MPICH),\n"
                "SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID (srun); else rank 0 of 1.\n");
    fprintf(f, "Invalid input exits with status 64 and one line naming the flag.\n");
}

void cli_main_parse(const char *prog, const char *synopsis, int argc, char **argv,
                    const struct cli_opt *const *tables)
{
    char err[ERR_LEN] = "";
    int rc = cli_parse(argc, argv, tables, err);

    if (rc == CLI_HELP) {
        cli_usage(stdout, prog, synopsis, tables);
        exit(fflush(stdout) == 0 ? 0 : 1);
    }
    if (rc == CLI_VERSION) {
        printf("%s (psring) %s\n", prog, PSRING_VERSION);
        exit(fflush(stdout) == 0 ? 0 : 1);
    }
    if (rc != 0)
        cli_usage_fail(prog, err[0] ? err : err_str(rc));
}

