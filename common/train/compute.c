/* compute.c -- the EMULATED compute-time model (compute.h has the
 * formulas), its flags' grammar, and its one-line description for the log.
 * The ranges of the values are THE BOUNDS' (cli.c), not checked here.
 */
#include "compute.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/cli_internal.h"
#include "base/err.h"
#include "base/rng.h"
#include "base/units.h"

/* The jitter's stream, independent of every workload's ("psr-jitt"). */
#define COMPUTE_SALT_JITTER 0x7073722d6a697474ULL

void compute_model_init(struct compute_model *m)
{
    memset(m, 0, sizeof *m);
    m->straggler_rank = -1;
    m->straggler_factor = 1.0;
    m->pause_rank = -1;
    m->pause_every = 1;
}

int compute_model_active(const struct compute_model *m)
{
    return m->straggler_rank >= 0 || m->jitter > 0 || m->pause_rank >= 0;
}

double compute_jitter_z(uint64_t seed, int rank, uint64_t step)
{
    struct rng r;

    /* A fresh generator per (seed, rank, step): no state carried between
     * steps, so a step's draw does not depend on which came before. */
    rng_seed(&r, rng_mix(rng_mix(seed ^ COMPUTE_SALT_JITTER) ^ (uint64_t)rank) ^ step);
    return rng_normal(&r);
}

double compute_step_time(const struct compute_model *m, int rank, uint64_t step)
{
    double t = m->base;

    if (t == 0)
        return 0;
    if (rank == m->straggler_rank)
        t *= m->straggler_factor;
    if (m->jitter > 0) {
        double s = m->jitter;
        t *= exp(s * compute_jitter_z(m->seed, rank, step) - s * s / 2);
    }
    if (rank == m->pause_rank && (step + 1) % m->pause_every == 0)
        t += m->pause_time;
    return t;
}

/* split: s at the first `sep` into head (n bytes of buf) and the tail;
 * ERR_USAGE when sep is missing or either part is empty or too long. */
static int split(const char *s, char sep, char *head, size_t n, const char **tail)
{
    const char *p = strchr(s, sep);

    if (!p || p == s || p[1] == '\0' || (size_t)(p - s) >= n)
        return ERR_USAGE;
    memcpy(head, s, (size_t)(p - s));
    head[p - s] = '\0';
    *tail = p + 1;
    return 0;
}

/* rank_colon: s's "RANK:" into *rank, what follows into *tail; else the
 * refusal in err, naming the form (e.g. "RANK:FACTOR (e.g. 1:3)"), and
 * ERR_USAGE. */
static int rank_colon(const char *s, const char *form, int *rank, const char **tail, char *err)
{
    char q[CLI_QUOTE_BUF], head[32], why[ERR_LEN];
    long long v;

    if (split(s, ':', head, sizeof head, tail) != 0) {
        err_say(err, "%s is not %s", cli_quote(s, q), form);
        return ERR_USAGE;
    }
    if (cli_parse_ll(head, 0, 65535, &v, why) != 0) {
        err_say(err, "rank in %s: %s", cli_quote(s, q), why);
        return ERR_USAGE;
    }
    *rank = (int)v;
    return 0;
}

int compute_parse_straggler(const char *s, int *rank, double *factor, char *err)
{
    char q[CLI_QUOTE_BUF], why[ERR_LEN];
    const char *tail;

    if (rank_colon(s, "RANK:FACTOR (e.g. 1:3)", rank, &tail, err) != 0)
        return ERR_USAGE;
    if (cli_parse_double(tail, factor, why) != 0) {
        err_say(err, "factor in %s: %s", cli_quote(s, q), why);
        return ERR_USAGE;
    }
    return 0;
}

int compute_parse_pause(const char *s, int *rank, double *time, uint64_t *every, char *err)
{
    static const char form[] = "RANK:TIME[@EVERY] (e.g. 2:500ms@10)";
    char q[CLI_QUOTE_BUF], tbuf[64], why[ERR_LEN];
    const char *tail, *ev = NULL;

    if (rank_colon(s, form, rank, &tail, err) != 0)
        return ERR_USAGE;
    if (strchr(tail, '@')) {
        if (split(tail, '@', tbuf, sizeof tbuf, &ev) != 0) {
            err_say(err, "%s is not %s", cli_quote(s, q), form);
            return ERR_USAGE;
        }
    } else {
        if (strlen(tail) >= sizeof tbuf) {
            err_say(err, "time in %s is too long", cli_quote(s, q));
            return ERR_USAGE;
        }
        strcpy(tbuf, tail);
    }
    if (cli_parse_time(tbuf, time, why) != 0) {
        err_say(err, "time in %s: %s", cli_quote(s, q), why);
        return ERR_USAGE;
    }
    *every = 1;
    if (ev && cli_parse_u64(ev, every, why) != 0) {
        err_say(err, "EVERY in %s: %s", cli_quote(s, q), why);
        return ERR_USAGE;
    }
    return 0;
}

void compute_describe(const struct compute_model *m, char *buf, size_t len)
{
    size_t o = 0;
    int w;

    buf[0] = '\0';
    if (m->straggler_rank >= 0) {
        w = snprintf(buf + o, len - o, "straggler rank %d x%g", m->straggler_rank,
                     m->straggler_factor);
        o = w < 0 ? o : (size_t)w + o < len ? (size_t)w + o : len - 1;
    }
    if (m->jitter > 0) {
        w = snprintf(buf + o, len - o, "%sjitter sigma %g (log-normal, mean-preserving)",
                     o ? ", " : "", m->jitter);
        o = w < 0 ? o : (size_t)w + o < len ? (size_t)w + o : len - 1;
    }
    if (m->pause_rank >= 0)
        snprintf(buf + o, len - o, "%spause rank %d %g s every %llu step%s", o ? ", " : "",
                 m->pause_rank, m->pause_time, (unsigned long long)m->pause_every,
                 m->pause_every == 1 ? "" : "s");
}
