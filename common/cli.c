/* cli.c -- command lines: strict value parsers, the flag loop, --help, the
 * common flags of docs/design.md and rank discovery from the environment.
 *
 * Every value a user can type goes through one of the cli_parse_* parsers
 * below, and every parser is strict in the same way: no leading or trailing
 * spaces, no '+', no hex, no "inf" or "nan", no silent wrap-around of a
 * negative number into a huge unsigned one, no overflow (of the digits or of
 * the digits times the unit). A parser writes *out only on success; on
 * failure it returns ERR_USAGE and writes a reason that quotes the value
 * ("'10abc' is not a rate (examples: ...)"); cli_parse() puts the flag's
 * name in front, so the user sees one line "--link-bw: '10abc' is not ...".
 *
 * UNIT SPELLINGS (the docs/design.md units, plus what is unambiguous):
 *   sizes  whole numbers only; K M G T (also k m g t, as nccl-tests) and
 *          KiB MiB GiB TiB, all powers of 1024. "KB"/"MB"/"GB" are refused
 *          for sizes, since for rates MB means 10^6: the user must say which.
 *   rates  Kbit Mbit Gbit (also kbit mbit gbit, as tc writes them): 10^3/6/9
 *          bits/s; KB MB GB: 10^3/6/9 bytes/s; KiB MiB GiB: 2^10/20/30
 *          bytes/s; B or a bare number: bytes/s; each may end in "/s".
 *          "M", "Mb", "mb" and friends are refused as ambiguous (bits or
 *          bytes? a factor of 8).
 *   times  us, ms, s; a bare number is seconds.
 *   Rates and times may be fractional ("1.5Gbit", "0.5ms") and may carry a
 *   decimal exponent ("1e9"); the unit factors are exact (125000 for Mbit,
 *   division by 10^6 for us), so "500Mbit" is exactly 62.5e6 bytes/s and
 *   "50us" exactly the double nearest 50e-6.
 *
 * Error messages are a single line whatever the input: a quoted value is
 * cut at 40 bytes and non-printable bytes are shown as \xNN.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "err.h"
#include "mlp.h"
#include "workload.h"

#define QUOTE_MAX 40        /* bytes of a bad value echoed in a message */
#define LIST_MAX 65536      /* --shard-weights: at most one per rank */
#define WORLD_MAX 65536

/* ------------------------------------------------------------ messages */

__attribute__((format(printf, 2, 3)))
static void setf(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
}

/* clean: s for a message, cut at QUOTE_MAX bytes ("..." marks the cut)
 * with non-printable bytes as \xNN, so that a value holding a newline
 * cannot break the one-line contract. OUT: buf (QUOTE_BUF bytes). */
#define QUOTE_BUF (QUOTE_MAX * 4 + 8)
static const char *clean(const char *s, char *buf, int quoted)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i;

    if (quoted)
        buf[o++] = '\'';
    for (i = 0; s[i] && i < QUOTE_MAX; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7f) {
            buf[o++] = (char)ch;
        } else {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[ch >> 4];
            buf[o++] = hex[ch & 15];
        }
    }
    if (quoted)
        buf[o++] = '\'';
    if (s[i]) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

/* quote: s as 'text' (see clean). */
static const char *quote(const char *s, char *buf)
{
    return clean(s, buf, 1);
}

/* --------------------------------------------------------- number scans */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* scan_real: the length of the longest prefix of s that is a plain decimal
 * number: [-]digits[.digits][e[+-]digits] or [-].digits[...]; 0 if none.
 * strtod alone would also take " 5", "+5", "0x1p3", "inf" and "nan". */
static size_t scan_real(const char *s, int allow_minus)
{
    size_t i = 0, digits = 0;
    if (allow_minus && s[i] == '-')
        i++;
    while (is_digit(s[i])) {
        i++;
        digits++;
    }
    if (s[i] == '.') {
        size_t j = i + 1, frac = 0;
        while (is_digit(s[j])) {
            j++;
            frac++;
        }
        if (digits + frac > 0) {
            i = j;
            digits += frac;
        }
    }
    if (digits == 0)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        /* An exponent only when digits follow: "5e" is 5 with suffix "e". */
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-')
            j++;
        if (is_digit(s[j])) {
            while (is_digit(s[j]))
                j++;
            i = j;
        }
    }
    return i;
}

/* parse_real: the number at the start of s (scan_real's grammar). OUT: *v,
 * *end (the suffix). 0, or -1 if s does not start with a number. */
static int parse_real(const char *s, int allow_minus, double *v, const char **end)
{
    size_t n = scan_real(s, allow_minus);
    char *e;
    if (n == 0)
        return -1;
    /* Overflow gives +-HUGE_VAL (callers refuse non-finite results);
     * underflow gives 0 or a subnormal, which is what the user wrote. */
    *v = strtod(s, &e);
    /* strtod agrees with the scan for every string the scan accepts; the
     * check is the cheap proof that no other grammar slipped in. */
    if (e != s + n)
        return -1;
    *end = e;
    return 0;
}

/* parse_digits: a run of decimal digits at the start of s. OUT: *v, *end.
 * 0; -1 if s does not start with a digit; -2 on overflow of 64 bits. */
static int parse_digits(const char *s, uint64_t *v, const char **end)
{
    uint64_t x = 0;
    size_t i = 0;
    if (!is_digit(s[0]))
        return -1;
    for (; is_digit(s[i]); i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10) {
            while (is_digit(s[i]))
                i++;
            *end = s + i;
            return -2;
        }
        x = x * 10 + d;
    }
    *v = x;
    *end = s + i;
    return 0;
}

/* ------------------------------------------------------- value parsers */

int cli_parse_ll(const char *s, long long min, long long max, long long *out, char *err)
{
    char q[QUOTE_BUF];
    const char *end;
    uint64_t mag;
    long long v;
    int neg = s[0] == '-';
    int rc = parse_digits(s + neg, &mag, &end);

    if (rc == -1 || *end != '\0') {
        if (rc == 0 && (*end == '.' || *end == 'e' || *end == 'E'))
            setf(err, "%s is not a whole number", quote(s, q));
        else
            setf(err, "%s is not an integer", quote(s, q));
        return ERR_USAGE;
    }
    /* Magnitudes past LLONG_MAX (or |LLONG_MIN|) are out of any range. */
    if (rc == -2 || mag > (uint64_t)LLONG_MAX + (uint64_t)neg) {
        if (neg)
            setf(err, "%s is too small (at least %lld)", quote(s, q), min);
        else
            setf(err, "%s is too large (at most %lld)", quote(s, q), max);
        return ERR_USAGE;
    }
    if (neg)
        v = mag == (uint64_t)LLONG_MAX + 1 ? LLONG_MIN : -(long long)mag;
    else
        v = (long long)mag;
    if (v < min) {
        setf(err, "%s is too small (at least %lld)", quote(s, q), min);
        return ERR_USAGE;
    }
    if (v > max) {
        setf(err, "%s is too large (at most %lld)", quote(s, q), max);
        return ERR_USAGE;
    }
    *out = v;
    return 0;
}

int cli_parse_u64(const char *s, uint64_t *out, char *err)
{
    char q[QUOTE_BUF];
    const char *end;
    uint64_t v;
    int rc = parse_digits(s, &v, &end);

    if (s[0] == '-' && is_digit(s[1])) {
        setf(err, "%s is negative (a whole number >= 0 is expected)", quote(s, q));
        return ERR_USAGE;
    }
    if (rc == -1 || *end != '\0') {
        setf(err, "%s is not a whole number", quote(s, q));
        return ERR_USAGE;
    }
    if (rc == -2) {
        setf(err, "%s is too large (at most %llu)", quote(s, q),
             (unsigned long long)UINT64_MAX);
        return ERR_USAGE;
    }
    *out = v;
    return 0;
}

struct unit {
    const char *suffix;
    double factor;
};

static const struct {
    const char *suffix;
    unsigned shift;
} size_units[] = {
    { "", 0 },
    { "K", 10 }, { "M", 20 }, { "G", 30 }, { "T", 40 },
    { "k", 10 }, { "m", 20 }, { "g", 30 }, { "t", 40 },
    { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
};

int cli_parse_size(const char *s, uint64_t *out, char *err)
{
    static const char examples[] = "(examples: 4096, 4K, 64MiB, 1G; powers of 1024)";
    char q[QUOTE_BUF];
    const char *end;
    uint64_t v;
    size_t i;
    int rc;

    if (s[0] == '-' && (is_digit(s[1]) || s[1] == '.')) {
        setf(err, "%s is negative (a size is >= 0)", quote(s, q));
        return ERR_USAGE;
    }
    rc = parse_digits(s, &v, &end);
    if (rc == -1) {
        setf(err, "%s is not a size %s", quote(s, q), examples);
        return ERR_USAGE;
    }
    if (*end == '.') {
        setf(err, "%s is not a whole number of bytes (write 1536M, not 1.5G)", quote(s, q));
        return ERR_USAGE;
    }
    for (i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strcmp(end, size_units[i].suffix) != 0)
            continue;
        unsigned shift = size_units[i].shift;
        if (rc == -2 || (shift && v > (UINT64_MAX >> shift))) {
            setf(err, "%s is too large (over 2^64 bytes)", quote(s, q));
            return ERR_USAGE;
        }
        *out = v << shift;
        return 0;
    }
    if (strcmp(end, "KB") == 0 || strcmp(end, "MB") == 0 || strcmp(end, "GB") == 0
        || strcmp(end, "TB") == 0)
        setf(err, "%s is ambiguous: sizes are powers of 1024, write %.*s%c or %.*s%ciB",
             quote(s, q), (int)(end - s), s, end[0], (int)(end - s), s, end[0]);
    else
        setf(err, "%s is not a size %s", quote(s, q), examples);
    return ERR_USAGE;
}

static const struct unit rate_units[] = {
    { "", 1 }, { "B", 1 },
    { "Kbit", 1e3 / 8 }, { "Mbit", 1e6 / 8 }, { "Gbit", 1e9 / 8 },
    { "kbit", 1e3 / 8 }, { "mbit", 1e6 / 8 }, { "gbit", 1e9 / 8 },
    { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 },
    { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
};

/* Suffixes that could mean bits or bytes: refused with a hint. */
static int rate_ambiguous(const char *suf, size_t n)
{
    static const char *const amb[] = {
        "K", "M", "G", "k", "m", "g", "Kb", "Mb", "Gb", "kb", "mb", "gb",
        "KBit", "MBit", "GBit", "Kbps", "Mbps", "Gbps", "kbps", "mbps", "gbps",
    };
    for (size_t i = 0; i < sizeof amb / sizeof amb[0]; i++)
        if (strlen(amb[i]) == n && memcmp(suf, amb[i], n) == 0)
            return 1;
    return 0;
}

/* find_unit: suf (n bytes) in a table. NULL if absent. */
static const struct unit *find_unit(const struct unit *t, size_t nt, const char *suf, size_t n)
{
    for (size_t i = 0; i < nt; i++)
        if (strlen(t[i].suffix) == n && memcmp(suf, t[i].suffix, n) == 0)
            return &t[i];
    return NULL;
}

int cli_parse_rate(const char *s, double *out, char *err)
{
    static const char examples[] = "(examples: 500Mbit, 100MB, 1GiB)";
    char q[QUOTE_BUF];
    const struct unit *u;
    const char *suf;
    size_t n;
    double v;

    if (s[0] == '-' && (is_digit(s[1]) || s[1] == '.')) {
        setf(err, "%s is negative (a rate is >= 0)", quote(s, q));
        return ERR_USAGE;
    }
    if (parse_real(s, 0, &v, &suf) != 0) {
        setf(err, "%s is not a rate %s", quote(s, q), examples);
        return ERR_USAGE;
    }
    n = strlen(suf);
    if (n >= 2 && strcmp(suf + n - 2, "/s") == 0)
        n -= 2;
    u = find_unit(rate_units, sizeof rate_units / sizeof rate_units[0], suf, n);
    if (!u) {
        if (rate_ambiguous(suf, n)) {
            /* Bits or bytes? A factor of 8: make the user say which. */
            int len = (int)(suf - s);
            char up = (char)toupper((unsigned char)suf[0]);
            setf(err, "%s is ambiguous: write %.*s%cbit (bits/s), %.*s%cB or %.*s%ciB "
                 "(bytes/s)", quote(s, q), len, s, up, len, s, up, len, s, up);
        } else {
            setf(err, "%s is not a rate %s", quote(s, q), examples);
        }
        return ERR_USAGE;
    }
    v *= u->factor;
    if (!isfinite(v)) {
        setf(err, "%s is too large", quote(s, q));
        return ERR_USAGE;
    }
    *out = v;
    return 0;
}

int cli_parse_time(const char *s, double *out, char *err)
{
    static const char examples[] = "(examples: 50us, 2ms, 1.5s, 10)";
    char q[QUOTE_BUF];
    const char *suf;
    double v;

    if (s[0] == '-' && (is_digit(s[1]) || s[1] == '.')) {
        setf(err, "%s is negative (a time is >= 0)", quote(s, q));
        return ERR_USAGE;
    }
    if (parse_real(s, 0, &v, &suf) != 0) {
        setf(err, "%s is not a time %s", quote(s, q), examples);
        return ERR_USAGE;
    }
    /* Divide rather than multiply by 1e-6: 10^6 is exact and 1e-6 is not,
     * so "50us" gives the double nearest 50e-6, as strtod("50e-6") does. */
    if (strcmp(suf, "us") == 0)
        v /= 1e6;
    else if (strcmp(suf, "ms") == 0)
        v /= 1e3;
    else if (strcmp(suf, "s") != 0 && suf[0] != '\0') {
        setf(err, "%s is not a time %s", quote(s, q), examples);
        return ERR_USAGE;
    }
    if (!isfinite(v)) {
        setf(err, "%s is too large", quote(s, q));
        return ERR_USAGE;
    }
    *out = v;
    return 0;
}

int cli_parse_double(const char *s, double *out, char *err)
{
    char q[QUOTE_BUF];
    const char *end;
    double v;

    if (parse_real(s, 1, &v, &end) != 0 || *end != '\0') {
        setf(err, "%s is not a number (examples: 0.05, 1e-3)", quote(s, q));
        return ERR_USAGE;
    }
    if (!isfinite(v)) {
        setf(err, "%s is out of range", quote(s, q));
        return ERR_USAGE;
    }
    *out = v;
    return 0;
}

int cli_parse_list(const char *s, double **out, int *n, char *err)
{
    char q[QUOTE_BUF];
    const char *p = s;
    double *w;
    size_t count = 1, k = 0;

    /* Count before allocating, so a huge list is refused without memory. */
    for (const char *c = s; *c; c++)
        if (*c == ',' && ++count > LIST_MAX) {
            setf(err, "%s has more than %d entries", quote(s, q), LIST_MAX);
            return ERR_USAGE;
        }
    w = malloc(count * sizeof *w);
    if (!w) {
        setf(err, "out of memory for %zu weights", count);
        return -ENOMEM;
    }
    for (;;) {
        const char *end;
        double v;
        if (parse_real(p, 1, &v, &end) != 0 || (*end != ',' && *end != '\0')) {
            char item[QUOTE_BUF];
            size_t len = strcspn(p, ",");
            char buf[QUOTE_MAX + 1];
            if (len > QUOTE_MAX)
                len = QUOTE_MAX;
            memcpy(buf, p, len);
            buf[len] = '\0';
            setf(err, "%s: entry %zu %s is not a number (expected w0,w1,... e.g. 1,1,2)",
                 quote(s, q), k + 1, quote(buf, item));
            goto fail;
        }
        if (!isfinite(v) || !(v > 0)) {
            setf(err, "%s: entry %zu is %g; weights must be positive and finite",
                 quote(s, q), k + 1, v);
            goto fail;
        }
        w[k++] = v;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    *out = w;
    *n = (int)k;
    return 0;
fail:
    free(w);
    return ERR_USAGE;
}

/* ----------------------------------------------------------- the loop */

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
    char q[QUOTE_BUF];
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
            setf(err, "%s is too small (at least %llu)", quote(v, q), (unsigned long long)lo);
            return ERR_USAGE;
        }
        if (u > hi) {
            setf(err, "%s is too large (at most %llu)", quote(v, q), (unsigned long long)hi);
            return ERR_USAGE;
        }
        *(uint64_t *)o->dst = u;
        return 0;
    }
    case CLI_RATE:
        if ((rc = cli_parse_rate(v, &d, err)) != 0)
            return rc;
        *(double *)o->dst = d;
        return 0;
    case CLI_TIME:
        if ((rc = cli_parse_time(v, &d, err)) != 0)
            return rc;
        *(double *)o->dst = d;
        return 0;
    case CLI_DOUBLE:
        if ((rc = cli_parse_double(v, &d, err)) != 0)
            return rc;
        *(double *)o->dst = d;
        return 0;
    case CLI_STRING:
        /* Paths get ".RANK" and similar appended: leave room for them. */
        if (strlen(v) >= CLI_PATH_MAX - 16) {
            setf(err, "%s is too long (at most %d bytes)", quote(v, q), CLI_PATH_MAX - 17);
            return ERR_USAGE;
        }
        *(const char **)o->dst = v;
        return 0;
    case CLI_CUSTOM:
        return o->parse(v, o->dst, err);
    case CLI_BOOL:
        break;
    }
    setf(err, "internal error: option kind %d", (int)o->kind);
    return ERR_USAGE;
}

int cli_parse(int argc, char **argv, const struct cli_opt *const *tables, char *err)
{
    char q[QUOTE_BUF];
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
            setf(err, "%s: unexpected argument (this program takes only --flags)",
                 quote(a, q));
            return ERR_USAGE;
        }
        if (a[1] != '-' || a[2] == '\0' || a[2] == '=') {
            setf(err, "%s: unknown option (options are spelled --name)", quote(a, q));
            return ERR_USAGE;
        }
        name = a + 2;
        eq = strchr(name, '=');
        n = eq ? (size_t)(eq - name) : strlen(name);
        o = find_opt(tables, name, n);
        if (!o) {
            char nm[QUOTE_MAX + 2];
            if (n > QUOTE_MAX + 1)
                n = QUOTE_MAX + 1;      /* one past the cut: clean() adds "..." */
            memcpy(nm, name, n);
            nm[n] = '\0';
            setf(err, "--%s: unknown option (see --help)", clean(nm, q, 0));
            return ERR_USAGE;
        }
        if (o->kind == CLI_BOOL) {
            if (eq) {
                setf(err, "--%s: takes no value (got %s)", o->name, quote(eq + 1, q));
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
            setf(err, "--%s: missing value (%s expected)", o->name,
                 o->metavar ? o->metavar : "a value");
            return ERR_USAGE;
        }
        if (v[0] == '\0') {
            setf(err, "--%s: empty value (%s expected)", o->name,
                 o->metavar ? o->metavar : "a value");
            return ERR_USAGE;
        }
        reason[0] = '\0';
        rc = set_value(o, v, reason);
        if (rc != 0) {
            setf(err, "--%s: %s", o->name, reason);
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
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", prog, err[0] ? err : err_str(rc));
        exit(CLI_EXIT_USAGE);
    }
}

/* ------------------------------------------------------- common flags */

static int parse_workload(const char *v, void *dst, char *err)
{
    char q[QUOTE_BUF], names[96] = "";
    size_t o = 0;

    if (workload_parse(v, (int *)dst) == 0)
        return 0;
    /* List what workload_parse accepts today, so the message stays true
     * when a workload is added there. */
    for (int k = 1; k <= 8; k++) {
        const char *nm = workload_name(k);
        int tmp;
        if (strcmp(nm, "?") == 0 || workload_parse(nm, &tmp) != 0)
            continue;
        int w = snprintf(names + o, sizeof names - o, "%s%s", o ? ", " : "", nm);
        if (w < 0 || (size_t)w >= sizeof names - o)
            break;
        o += (size_t)w;
    }
    setf(err, "%s is not a workload (one of: %s)", quote(v, q), names);
    return ERR_USAGE;
}

static int parse_dtype(const char *v, void *dst, char *err)
{
    char q[QUOTE_BUF];
    if (dtype_parse(v, (int *)dst) == 0)
        return 0;
    setf(err, "%s is not a dtype (one of: f32, f64)", quote(v, q));
    return ERR_USAGE;
}

/* Store a parsed value that must also be > 0 (rc: the parser's result). */
static int store_positive(int rc, double d, const char *v, void *dst, char *err)
{
    char q[QUOTE_BUF];
    if (rc != 0)
        return rc;
    if (!(d > 0)) {
        setf(err, "%s must be > 0", quote(v, q));
        return ERR_USAGE;
    }
    *(double *)dst = d;
    return 0;
}

static int parse_lr(const char *v, void *dst, char *err)
{
    double d = 0;
    int rc = cli_parse_double(v, &d, err);   /* before d is read */
    return store_positive(rc, d, v, dst, err);
}

/* The idle timeout must be positive: 0 would fail every wait at once. */
static int parse_timeout(const char *v, void *dst, char *err)
{
    double d = 0;
    int rc = cli_parse_time(v, &d, err);
    return store_positive(rc, d, v, dst, err);
}

/* dst is the struct cli_common: a repeated flag frees the earlier list. */
static int parse_shard_weights(const char *v, void *dst, char *err)
{
    struct cli_common *c = dst;
    double *w;
    int n, rc = cli_parse_list(v, &w, &n, err);
    if (rc != 0)
        return rc;
    free(c->shard_weights);
    c->shard_weights = w;
    c->n_shard_weights = n;
    return 0;
}

void cli_common_defaults(struct cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->rank = c->world = c->local_rank = -1;
    c->rank_source = NULL;
    c->workload = WORKLOAD_LINREG;
    c->params = 0;
    c->batch = 0;
    c->shard_weights = NULL;
    c->n_shard_weights = 0;
    c->micro = 1;
    c->steps = 10;
    c->warmup = -1;             /* auto: 2, or steps - 1 when fewer */
    c->lr = 0.05;
    c->seed = 7;
    c->dtype = DTYPE_F64;
    c->link_bw = 0;
    c->link_latency = 0;
    c->timeout = 30;
    c->csv = NULL;
    c->weights_out = NULL;
    c->backward_time = 0;
    c->layers = 0;
}

#define COMMON_NOPTS 19
/* One table, rewritten by each call: the pointers are only valid until the
 * next cli_common_opts() call (a process has one struct cli_common). */
static struct cli_opt common_table[COMMON_NOPTS + 1];
static char workload_help[128];

const struct cli_opt *cli_common_opts(struct cli_common *c)
{
    /* Bounds: 2^40 elements or examples keeps n * 8 bytes and B * m far
     * from any 64-bit overflow downstream; the workload checks its own. */
    const long long big = 1LL << 40;
    const struct cli_opt t[COMMON_NOPTS + 1] = {
        { "rank", CLI_INT, &c->rank, "R",
          "this process's rank, 0..K-1 (default: environment)", 0, WORLD_MAX - 1, NULL },
        { "world", CLI_INT, &c->world, "K",
          "number of workers, 1..65536 (default: environment)", 1, WORLD_MAX, NULL },
        { "workload", CLI_CUSTOM, &c->workload, "NAME", workload_help, 0, 0, parse_workload },
        { "params", CLI_SIZE, &c->params, "N",
          "synthetic workload size in elements (1M = 2^20)", 1, big, NULL },
        { "batch", CLI_U64, &c->batch, "B",
          "global examples per step (default: the workload's)", 1, big, NULL },
        { "shard-weights", CLI_CUSTOM, c, "W,W,...",
          "relative shard sizes, one per rank (default equal)", 0, 0, parse_shard_weights },
        { "micro", CLI_INT, &c->micro, "M",
          "micro-batches accumulated per step (default 1)", 1, 1 << 20, NULL },
        { "steps", CLI_INT, &c->steps, "S", "optimizer steps (default 10)", 1, INT_MAX, NULL },
        { "warmup", CLI_INT, &c->warmup, "W",
          "first steps left untimed, < S (default 2, or S-1)", 0, INT_MAX, NULL },
        { "lr", CLI_CUSTOM, &c->lr, "X", "learning rate, > 0 (default 0.05)", 0, 0, parse_lr },
        { "seed", CLI_U64, &c->seed, "S", "seed of data and initial weights (default 7)", 0, 0, NULL },
        { "dtype", CLI_CUSTOM, &c->dtype, "f32|f64",
          "gradient and weight element type (default f64)", 0, 0, parse_dtype },
        { "link-bw", CLI_RATE, &c->link_bw, "RATE",
          "EMULATED link bandwidth per direction (default off)", 0, 0, NULL },
        { "link-latency", CLI_TIME, &c->link_latency, "TIME",
          "EMULATED one-way link latency (default 0)", 0, 0, NULL },
        { "timeout", CLI_CUSTOM, &c->timeout, "TIME",
          "idle-progress timeout (default 30s)", 0, 0,
          parse_timeout },
        { "csv", CLI_STRING, &c->csv, "FILE", "write this process's record to FILE", 0, 0, NULL },
        { "weights-out", CLI_STRING, &c->weights_out, "PATH",
          "write the final weights to PATH.RANK, one per line", 0, 0, NULL },
        { "backward-time", CLI_TIME, &c->backward_time, "TIME",
          "EMULATED backward time per step, a sleep (synthetic)",
          0, 0, NULL },
        { "layers", CLI_INT, &c->layers, "L",
          "synthetic: L equal layers (default 8)",
          1, 1 << 20, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    size_t o = 0;

    /* The names workload_parse accepts today, so --help stays true when
     * a workload is added there. */
    workload_help[0] = '\0';
    for (int k = 1, first = 1; k <= 8 && o < sizeof workload_help; k++) {
        const char *nm = workload_name(k);
        int tmp;
        if (strcmp(nm, "?") != 0 && workload_parse(nm, &tmp) == 0) {
            o += (size_t)snprintf(workload_help + o, sizeof workload_help - o, "%s%s",
                                  first ? "" : "|", nm);
            first = 0;
        }
    }
    if (o < sizeof workload_help)
        snprintf(workload_help + o, sizeof workload_help - o, " (default %s)",
                 workload_name(WORKLOAD_LINREG));
    memcpy(common_table, t, sizeof t);
    return common_table;
}

void cli_common_free(struct cli_common *c)
{
    free(c->shard_weights);
    c->shard_weights = NULL;
    c->n_shard_weights = 0;
}

void cli_workload_cfg(const struct cli_common *c, struct workload_cfg *out)
{
    memset(out, 0, sizeof *out);
    out->kind = c->workload;
    out->dtype = c->dtype;
    out->seed = c->seed;
    out->params = c->params;
    out->batch = c->batch;
    out->backward_time = c->backward_time;
    out->layers = c->layers;
    out->world = c->world > 0 ? c->world : 0;
    out->rank = c->rank > 0 ? c->rank : 0;
    out->shard_weights = c->shard_weights;
}

/* ------------------------------------------------- rank from the environment */

static const struct env_source {
    const char *name, *rank, *size, *local;
} env_sources[] = {
    /* docs/design.md's order. Slurm last: mpirun inside an allocation also sees
     * Slurm's variables, and they describe the allocation, not the job. */
    { "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK" },
    { "openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK" },
    { "mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID" },
    { "slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" },
};
#define N_ENV_SOURCES (sizeof env_sources / sizeof env_sources[0])

/* An empty variable counts as unset ("RANK= cmd" is how scripts clear it). */
static const char *env_get(const char *var)
{
    const char *v = getenv(var);
    return v && v[0] ? v : NULL;
}

/* env_int: the variable, parsed as strictly as a flag. 0 or ERR_USAGE
 * with "VAR: reason". */
static int env_int(const char *var, long long min, long long max, int *out, char *err)
{
    char reason[ERR_LEN];
    long long v;
    if (cli_parse_ll(env_get(var), min, max, &v, reason) != 0) {
        setf(err, "%s: %s (from the environment)", var, reason);
        return ERR_USAGE;
    }
    *out = (int)v;
    return 0;
}

/* check_out_path: the folder an output file goes into exists and is
 * writable, so a run fails at start-up, not after its last step. */
static int check_out_path(const char *flag, const char *path, char *err)
{
    char q[QUOTE_BUF], dir[CLI_PATH_MAX];
    const char *slash = strrchr(path, '/');
    struct stat st;
    size_t n;

    if (strlen(path) >= sizeof dir) {
        setf(err, "--%s: path longer than %zu bytes", flag, sizeof dir - 1);
        return ERR_USAGE;
    }
    if (slash && slash[1] == '\0') {
        setf(err, "--%s: %s names a folder, not a file", flag, quote(path, q));
        return ERR_USAGE;
    }
    if (!slash) {
        strcpy(dir, ".");
    } else {
        n = slash == path ? 1 : (size_t)(slash - path);
        memcpy(dir, path, n);   /* n < strlen(path) < CLI_PATH_MAX (set_value) */
        dir[n] = '\0';
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        setf(err, "--%s: folder %s does not exist", flag, quote(dir, q));
        return ERR_USAGE;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        setf(err, "--%s: folder %s is not writable", flag, quote(dir, q));
        return ERR_USAGE;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        setf(err, "--%s: %s is a folder, not a file", flag, quote(path, q));
        return ERR_USAGE;
    }
    return 0;
}

int cli_common_finish(struct cli_common *c, char *err)
{
    const char *rank_label = "--rank", *world_label = "--world";
    int rank_flag = c->rank >= 0, world_flag = c->world >= 1;
    const struct env_source *src = NULL;
    int rc;

    if (rank_flag) {
        c->rank_source = "flags";
        if (!world_flag) {
            /* --rank with the world from a launcher: take the first source
             * that has a size; with none, a world of 1. */
            for (size_t i = 0; i < N_ENV_SOURCES; i++)
                if (env_get(env_sources[i].size)) {
                    src = &env_sources[i];
                    break;
                }
            if (src) {
                if ((rc = env_int(src->size, 1, WORLD_MAX, &c->world, err)) != 0)
                    return rc;
                world_label = src->size;
            } else {
                c->world = 1;
                world_label = "the default world";
            }
        }
        c->local_rank = c->rank;    /* flags mean a local job (launch.sh) */
    } else {
        for (size_t i = 0; i < N_ENV_SOURCES; i++)
            if (env_get(env_sources[i].rank)) {
                src = &env_sources[i];
                break;
            }
        if (src) {
            if ((rc = env_int(src->rank, 0, WORLD_MAX - 1, &c->rank, err)) != 0)
                return rc;
            c->rank_source = src->name;
            rank_label = src->rank;
            if (!world_flag) {
                if (!env_get(src->size)) {
                    setf(err, "%s: set, but %s is not (give --world)", src->rank, src->size);
                    return ERR_USAGE;
                }
                if ((rc = env_int(src->size, 1, WORLD_MAX, &c->world, err)) != 0)
                    return rc;
                world_label = src->size;
            }
            if (env_get(src->local)) {
                if ((rc = env_int(src->local, 0, WORLD_MAX - 1, &c->local_rank, err)) != 0)
                    return rc;
            } else {
                c->local_rank = c->rank;
            }
        } else if (world_flag && c->world > 1) {
            setf(err, "--rank: not given, and no rank in the environment "
                 "(RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID)");
            return ERR_USAGE;
        } else {
            c->rank = 0;
            c->local_rank = 0;
            c->world = 1;
            c->rank_source = "default";
        }
    }

    if (c->rank >= c->world) {
        setf(err, "%s: %d is not below the world size %d (%s)", rank_label, c->rank,
             c->world, world_label);
        return ERR_USAGE;
    }
    if (c->warmup < 0)
        c->warmup = c->steps > 2 ? 2 : c->steps - 1;
    if (c->warmup >= c->steps) {
        setf(err, "--warmup: %d is not below --steps %d (at least one timed step is needed)",
             c->warmup, c->steps);
        return ERR_USAGE;
    }
    if (c->backward_time > 0 && c->workload != WORKLOAD_SYNTHETIC) {
        setf(err, "--backward-time: only the synthetic workload emulates its backward "
             "pass (%s computes a real one)", workload_name(c->workload));
        return ERR_USAGE;
    }
    if (c->layers > 0 && c->workload != WORKLOAD_SYNTHETIC) {
        setf(err, "--layers: only the synthetic workload takes a layer count (%s has its own)",
             workload_name(c->workload));
        return ERR_USAGE;
    }
    if (c->workload == WORKLOAD_MLP && c->params != 0) {
        setf(err, "--params: the mlp has fixed dims 32-64-64-1 (%d parameters); "
             "--params sizes the synthetic workload", (int)MLP_PARAMS);
        return ERR_USAGE;
    }
    if (c->workload == WORKLOAD_MLP && c->batch > WORKLOAD_MLP_MAX_BATCH) {
        setf(err, "--batch: %llu is too large for the mlp (at most %u)",
             (unsigned long long)c->batch, (unsigned)WORKLOAD_MLP_MAX_BATCH);
        return ERR_USAGE;
    }
    if (c->shard_weights && c->n_shard_weights != c->world) {
        setf(err, "--shard-weights: %d weights for a world of %d (%s); give one per rank",
             c->n_shard_weights, c->world, world_label);
        return ERR_USAGE;
    }
    if (c->csv && (rc = check_out_path("csv", c->csv, err)) != 0)
        return rc;
    if (c->weights_out && (rc = check_out_path("weights-out", c->weights_out, err)) != 0)
        return rc;
    return 0;
}

/* ---------------------------------------------------------- coordinator */

/* check_host: a plausible host name or address; resolution is net.c's. */
static int check_host(const char *label, const char *h, size_t n, size_t hostlen, char *err)
{
    char q[QUOTE_BUF];
    if (n == 0) {
        setf(err, "%s: empty host", label);
        return ERR_USAGE;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '[' || ch == ']') {
            char buf[QUOTE_MAX + 1];
            size_t m = n < QUOTE_MAX ? n : QUOTE_MAX;
            memcpy(buf, h, m);
            buf[m] = '\0';
            setf(err, "%s: %s is not a host name or address", label, quote(buf, q));
            return ERR_USAGE;
        }
    }
    if (n >= hostlen) {
        setf(err, "%s: host name longer than %zu bytes", label, hostlen ? hostlen - 1 : 0);
        return ERR_USAGE;
    }
    return 0;
}

static int parse_port(const char *label, const char *s, int *port, char *err)
{
    char reason[ERR_LEN];
    long long v;
    if (cli_parse_ll(s, 0, 65535, &v, reason) != 0) {
        setf(err, "%s: port %s", label, reason);
        return ERR_USAGE;
    }
    *port = (int)v;
    return 0;
}

int cli_coordinator(const char *flag, char *host, size_t hostlen, int *port, char *err)
{
    char q[QUOTE_BUF];
    const char *h, *colon;
    size_t n;
    int p;

    if (flag) {
        const char *label = "--coordinator";
        if (flag[0] == '[') {
            const char *close = strchr(flag, ']');
            if (!close || close[1] != ':') {
                setf(err, "%s: %s is not [ADDRESS]:PORT", label, quote(flag, q));
                return ERR_USAGE;
            }
            h = flag + 1;
            n = (size_t)(close - h);
            colon = close + 1;
        } else {
            colon = strrchr(flag, ':');
            if (!colon) {
                setf(err, "%s: %s is not HOST:PORT (the :PORT is missing)", label,
                     quote(flag, q));
                return ERR_USAGE;
            }
            h = flag;
            n = (size_t)(colon - flag);
            if (memchr(h, ':', n)) {
                setf(err, "%s: %s: write an IPv6 address in brackets, [ADDRESS]:PORT",
                     label, quote(flag, q));
                return ERR_USAGE;
            }
        }
        if (check_host(label, h, n, hostlen, err) != 0
            || parse_port(label, colon + 1, &p, err) != 0)
            return ERR_USAGE;
    } else {
        const char *addr = env_get("MASTER_ADDR"), *ps = env_get("MASTER_PORT");
        if (!addr && !ps) {
            setf(err, "--coordinator: not given, and MASTER_ADDR/MASTER_PORT are not set");
            return ERR_USAGE;
        }
        if (!addr || !ps) {
            setf(err, "%s: not set (%s is); give both, or --coordinator HOST:PORT",
                 addr ? "MASTER_PORT" : "MASTER_ADDR", addr ? "MASTER_ADDR" : "MASTER_PORT");
            return ERR_USAGE;
        }
        h = addr;
        n = strlen(addr);
        /* MASTER_ADDR holds a host alone; an IPv6 literal may be bracketed. */
        if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
            h++;
            n -= 2;
        }
        if (check_host("MASTER_ADDR", h, n, hostlen, err) != 0
            || parse_port("MASTER_PORT", ps, &p, err) != 0)
            return ERR_USAGE;
    }
    memcpy(host, h, n);
    host[n] = '\0';
    *port = p;
    return 0;
}

uint64_t cli_token(void)
{
    const char *s = getenv("PSRING_TOKEN");
    if (s == NULL || *s == '\0')
        return 0;
    uint64_t h = 0xcbf29ce484222325ull;          /* FNV-1a 64 */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h ? h : 1;                            /* 0 means "no token" */
}
