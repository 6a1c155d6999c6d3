/* units.c -- the strict value parsers behind every flag: integers, sizes,
 * rates, times, plain numbers and lists (cli.h's UNITS).
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
 * cut at 40 bytes and non-printable bytes are shown as \xNN (cli_clean,
 * which the flag loop and the common flags use too).
 */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"
#include "err.h"

#define LIST_MAX 65536      /* --shard-weights: at most one per rank */

/* ------------------------------------------------------------ messages */

/* cli_clean: s for a message, cut at CLI_QUOTE_MAX bytes ("..." marks the cut)
 * with non-printable bytes as \xNN, so that a value holding a newline
 * cannot break the one-line contract. OUT: buf (CLI_QUOTE_BUF bytes). */
const char *cli_clean(const char *s, char *buf, int quoted)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i;

    if (quoted)
        buf[o++] = '\'';
    for (i = 0; s[i] && i < CLI_QUOTE_MAX; i++) {
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

/* cli_quote: s as 'text' (see cli_clean). */
const char *cli_quote(const char *s, char *buf)
{
    return cli_clean(s, buf, 1);
}

/* refuse: "'s' <what fmt says>" into err; returns ERR_USAGE, so that a
 * parser refuses a value in one statement. */
__attribute__((format(printf, 3, 4)))
static int refuse(char *err, const char *s, const char *fmt, ...)
{
    char q[CLI_QUOTE_BUF], why[ERR_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    err_say(err, "%s %s", cli_quote(s, q), why);
    return ERR_USAGE;
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
    const char *end;
    uint64_t mag;
    long long v;
    int neg = s[0] == '-';
    int rc = parse_digits(s + neg, &mag, &end);

    if (rc == -1 || *end != '\0') {
        if (rc == 0 && (*end == '.' || *end == 'e' || *end == 'E'))
            return refuse(err, s, "is not a whole number");
        return refuse(err, s, "is not an integer");
    }
    /* Magnitudes past LLONG_MAX (or |LLONG_MIN|) are out of any range. */
    if (rc == -2 || mag > (uint64_t)LLONG_MAX + (uint64_t)neg) {
        if (neg)
            return refuse(err, s, "is too small (at least %lld)", min);
        return refuse(err, s, "is too large (at most %lld)", max);
    }
    if (neg)
        v = mag == (uint64_t)LLONG_MAX + 1 ? LLONG_MIN : -(long long)mag;
    else
        v = (long long)mag;
    if (v < min)
        return refuse(err, s, "is too small (at least %lld)", min);
    if (v > max)
        return refuse(err, s, "is too large (at most %lld)", max);
    *out = v;
    return 0;
}

int cli_parse_u64(const char *s, uint64_t *out, char *err)
{
    const char *end;
    uint64_t v;
    int rc = parse_digits(s, &v, &end);

    if (s[0] == '-' && is_digit(s[1]))
        return refuse(err, s, "is negative (a whole number >= 0 is expected)");
    if (rc == -1 || *end != '\0')
        return refuse(err, s, "is not a whole number");
    if (rc == -2)
        return refuse(err, s, "is too large (at most %llu)", (unsigned long long)UINT64_MAX);
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
    const char *end;
    uint64_t v;
    size_t i;
    int rc;

    if (s[0] == '-' && (is_digit(s[1]) || s[1] == '.'))
        return refuse(err, s, "is negative (a size is >= 0)");
    rc = parse_digits(s, &v, &end);
    if (rc == -1)
        return refuse(err, s, "is not a size %s", examples);
    if (*end == '.')
        return refuse(err, s, "is not a whole number of bytes (write 1536M, not 1.5G)");
    for (i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strcmp(end, size_units[i].suffix) != 0)
            continue;
        unsigned shift = size_units[i].shift;
        if (rc == -2 || (shift && v > (UINT64_MAX >> shift)))
            return refuse(err, s, "is too large (over 2^64 bytes)");
        *out = v << shift;
        return 0;
    }
    if (strcmp(end, "KB") == 0 || strcmp(end, "MB") == 0 || strcmp(end, "GB") == 0
        || strcmp(end, "TB") == 0)
        return refuse(err, s, "is ambiguous: sizes are powers of 1024, write %.*s%c or %.*s%ciB",
                      (int)(end - s), s, end[0], (int)(end - s), s, end[0]);
    return refuse(err, s, "is not a size %s", examples);
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
    const struct unit *u;
    const char *suf;
    size_t n;
    double v;

    if (s[0] == '-' && (is_digit(s[1]) || s[1] == '.'))
        return refuse(err, s, "is negative (a rate is >= 0)");
    if (strcmp(s, "auto") == 0)     /* experiments/lab.sh resolves it; the programs do not */
        return refuse(err, s, "is resolved by experiments/lab.sh, not here: give a rate %s", examples);
    if (parse_real(s, 0, &v, &suf) != 0)
        return refuse(err, s, "is not a rate %s", examples);
    n = strlen(suf);
    if (n >= 2 && strcmp(suf + n - 2, "/s") == 0)
        n -= 2;
    u = find_unit(rate_units, sizeof rate_units / sizeof rate_units[0], suf, n);
    if (!u && rate_ambiguous(suf, n)) {
        /* Bits or bytes? A factor of 8: make the user say which. */
        int len = (int)(suf - s);
        char up = (char)toupper((unsigned char)suf[0]);
        return refuse(err, s, "is ambiguous: write %.*s%cbit (bits/s), %.*s%cB or %.*s%ciB "
                      "(bytes/s)", len, s, up, len, s, up, len, s, up);
    }
    if (!u)
        return refuse(err, s, "is not a rate %s", examples);
    v *= u->factor;
    if (!isfinite(v))
        return refuse(err, s, "is too large");
    *out = v;
    return 0;
}

int cli_parse_time(const char *s, double *out, char *err)
{
    static const char examples[] = "(examples: 50us, 2ms, 1.5s, 10)";
    const char *suf;
    double v;

    if (s[0] == '-' && (is_digit(s[1]) || s[1] == '.'))
        return refuse(err, s, "is negative (a time is >= 0)");
    if (parse_real(s, 0, &v, &suf) != 0)
        return refuse(err, s, "is not a time %s", examples);
    /* Divide rather than multiply by 1e-6: 10^6 is exact and 1e-6 is not,
     * so "50us" gives the double nearest 50e-6, as strtod("50e-6") does. */
    if (strcmp(suf, "us") == 0)
        v /= 1e6;
    else if (strcmp(suf, "ms") == 0)
        v /= 1e3;
    else if (strcmp(suf, "s") != 0 && suf[0] != '\0')
        return refuse(err, s, "is not a time %s", examples);
    if (!isfinite(v))
        return refuse(err, s, "is too large");
    *out = v;
    return 0;
}

int cli_parse_double(const char *s, double *out, char *err)
{
    const char *end;
    double v;

    if (parse_real(s, 1, &v, &end) != 0 || *end != '\0')
        return refuse(err, s, "is not a number (examples: 0.05, 1e-3)");
    if (!isfinite(v))
        return refuse(err, s, "is out of range");
    *out = v;
    return 0;
}

int cli_parse_list(const char *s, double **out, int *n, char *err)
{
    char q[CLI_QUOTE_BUF];
    const char *p = s;
    double *w;
    size_t count = 1, k = 0;

    /* Count before allocating, so a huge list is refused without memory. */
    for (const char *c = s; *c; c++)
        if (*c == ',' && ++count > LIST_MAX)
            return refuse(err, s, "has more than %d entries", LIST_MAX);
    w = malloc(count * sizeof *w);
    if (!w) {
        err_say(err, "out of memory for %zu weights", count);
        return -ENOMEM;
    }
    for (;;) {
        const char *end;
        double v;
        if (parse_real(p, 1, &v, &end) != 0 || (*end != ',' && *end != '\0')) {
            char item[CLI_QUOTE_BUF];
            size_t len = strcspn(p, ",");
            char buf[CLI_QUOTE_MAX + 1];
            if (len > CLI_QUOTE_MAX)
                len = CLI_QUOTE_MAX;
            memcpy(buf, p, len);
            buf[len] = '\0';
            err_say(err, "%s: entry %zu %s is not a number (expected w0,w1,... e.g. 1,1,2)",
                     cli_quote(s, q), k + 1, cli_quote(buf, item));
            goto fail;
        }
        if (!isfinite(v) || !(v > 0)) {
            err_say(err, "%s: entry %zu is %g; weights must be positive and finite",
                     cli_quote(s, q), k + 1, v);
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

