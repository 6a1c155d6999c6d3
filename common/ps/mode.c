/* mode.c -- the training modes' policy (see mode.h for the rules).
 *
 * The record file (--record FILE), text, one line per event, in the
 * order the server applied them; '#' lines are comments:
 *
 *   # psring mode record 1
 *   mode MODE K                       e.g. "mode backup:1 8"
 *   a VERSION RANK STEP BASED_ON EXAMPLES
 *                                     one push applied alone (async, ssp):
 *                                     VERSION is the server's after it
 *   s VERSION STEP B R0 R1 ...        one step applied (sync, backup) from
 *                                     the pushes of ranks R0.. (completion
 *                                     order), B their summed counts
 *   d RANK STEP                       a late push dropped (backup)
 *   w RANK VERSION                    worker RANK was sent the weights of
 *                                     VERSION (async, ssp; the replay's
 *                                     copy of what that worker computes on)
 *
 * A replay (bin/reference --replay) needs nothing else: the workload and
 * its seed give each rank's gradient for a step and the weights of a
 * version.
 */
#include "mode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/err.h"
#include "base/mem.h"
#include "base/units.h"

static uint64_t min_clock(const struct mode *m);
#include "base/outfile.h"

int mode_parse(const char *v, struct mode_cfg *out, char *err)
{
    char q[44], reason[ERR_LEN];
    const char *bound = NULL;
    long long n = 0;
    size_t k;
    int kind;

    for (k = 0; v[k] && k < 40; k++)
        q[k] = v[k] > ' ' && v[k] < 0x7f ? v[k] : '?';
    q[k] = '\0';
    if (strcmp(v, "sync") == 0)
        kind = MODE_SYNC;
    else if (strcmp(v, "async") == 0)
        kind = MODE_ASYNC;
    else if (strncmp(v, "ssp:", 4) == 0)
        kind = MODE_SSP, bound = "ssp-bound";
    else if (strncmp(v, "backup:", 7) == 0)
        kind = MODE_BACKUP, bound = "backup-count";
    else {
        err_say(err, "'%s' is not a mode (sync, async, ssp:N or backup:N)", q);
        return ERR_USAGE;
    }
    if (bound) {
        const char *num = strchr(v, ':') + 1;

        if (cli_parse_ll(num, -1000000000000LL, 1000000000000LL, &n, reason) != 0) {
            err_say(err, "'%s': N %s", q, reason);
            return ERR_USAGE;
        }
        if (cli_bound_check(bound, (double)n, num, reason) != 0) {
            err_say(err, "'%s': %s", q, reason);
            return ERR_USAGE;
        }
    }
    out->kind = kind;
    out->n = (uint32_t)n;
    return 0;
}

const char *mode_name(const struct mode_cfg *cfg, char *out)
{
    switch (cfg->kind) {
    case MODE_ASYNC:
        snprintf(out, 32, "async");
        break;
    case MODE_SSP:
        snprintf(out, 32, "ssp:%u", (unsigned)cfg->n);
        break;
    case MODE_BACKUP:
        snprintf(out, 32, "backup:%u", (unsigned)cfg->n);
        break;
    default:
        snprintf(out, 32, "sync");
        break;
    }
    return out;
}

void mode_destroy(struct mode *m)
{
    MEM_FREE(m->clock);
    MEM_FREE(m->used);
    MEM_FREE(m->log);
    MEM_FREE(m->used_log);
    m->nlog = m->caplog = m->nused_log = m->capused = 0;
}

int mode_init(struct mode *m, const struct mode_cfg *cfg, uint32_t world, uint64_t step,
              char *err)
{
    char name[32];

    memset(m, 0, sizeof *m);
    if (world == 0 || (cfg->kind == MODE_BACKUP && cfg->n >= world)) {
        err_say(err, "--mode %s: needs N below K = %u (a step must use at least one push)",
                mode_name(cfg, name), (unsigned)world);
        return ERR_USAGE;
    }
    m->cfg = *cfg;
    m->world = world;
    m->step = m->version = step;
    m->clock = malloc(world * sizeof *m->clock);
    m->used = malloc(world * sizeof *m->used);
    if (!m->clock || !m->used) {
        mode_destroy(m);
        err_say(err, "--mode: out of memory for %u workers", (unsigned)world);
        return -ENOMEM;
    }
    for (uint32_t r = 0; r < world; r++)
        m->clock[r] = step;
    return 0;
}

uint64_t mode_min_clock(const struct mode *m)
{
    return min_clock(m);
}

static uint64_t min_clock(const struct mode *m)
{
    uint64_t lo = m->clock[0];

    for (uint32_t r = 1; r < m->world; r++)
        if (m->clock[r] < lo)
            lo = m->clock[r];
    return lo;
}

int mode_pull_ok(const struct mode *m, uint32_t rank)
{
    if (m->cfg.kind != MODE_SSP || rank >= m->world)
        return 1;
    return m->clock[rank] - min_clock(m) <= m->cfg.n;
}

/* grow: room for one more entry in the log and `ranks` more used ranks. */
static int grow(struct mode *m, size_t ranks)
{
    if (m->nlog == m->caplog) {
        size_t cap = m->caplog ? 2 * m->caplog : 64;
        struct mode_entry *p = realloc(m->log, cap * sizeof *p);

        if (!p)
            return -ENOMEM;
        m->log = p;
        m->caplog = cap;
    }
    if (m->nused_log + ranks > m->capused) {
        size_t cap = m->capused ? 2 * m->capused : 256;
        uint32_t *p;

        while (cap < m->nused_log + ranks)
            cap *= 2;
        if (!(p = realloc(m->used_log, cap * sizeof *p)))
            return -ENOMEM;
        m->used_log = p;
        m->capused = cap;
    }
    return 0;
}

static void note_staleness(struct mode *m, uint64_t s)
{
    m->hist[s < MODE_HIST - 1 ? s : MODE_HIST - 1]++;
    m->stale_sum += s;
    m->stale_n++;
}

int mode_push(struct mode *m, uint32_t rank, uint64_t step, uint64_t based_on,
              uint64_t examples, struct mode_verdict *out, char *err)
{
    struct mode_entry *e;
    char name[32];
    int lockstep = m->cfg.kind == MODE_SYNC || m->cfg.kind == MODE_BACKUP;

    memset(out, 0, sizeof *out);
    if (rank >= m->world) {
        err_say(err, "worker %u: push for step %llu refused: rank not below K = %u",
                (unsigned)rank, ull(step), (unsigned)m->world);
        return ERR_PROTO_RANK;
    }
    if (step != m->clock[rank]) {
        err_say(err, "worker %u: push for step %llu refused: its next step is %llu (%s)",
                (unsigned)rank, ull(step), ull(m->clock[rank]),
                step < m->clock[rank] ? "stale or duplicate" : "future");
        return ERR_PROTO_FIELD;
    }
    if (lockstep && step > m->step) {
        err_say(err, "worker %u: push for step %llu while the server collects step %llu "
                "(future)", (unsigned)rank, ull(step), ull(m->step));
        return ERR_PROTO_FIELD;
    }
    if (lockstep && step < m->step && m->cfg.kind == MODE_SYNC) {
        err_say(err, "worker %u: push for step %llu while the server collects step %llu "
                "(stale)", (unsigned)rank, ull(step), ull(m->step));
        return ERR_PROTO_FIELD;
    }
    if (based_on > m->version) {
        err_say(err, "worker %u: push for step %llu says it computed on version %llu; the "
                "server is at version %llu", (unsigned)rank, ull(step), ull(based_on),
                ull(m->version));
        return ERR_PROTO_FIELD;
    }
    if (!lockstep && examples == 0) {
        err_say(err, "worker %u: push for step %llu counts 0 examples (mode %s divides each "
                "push by its own count)", (unsigned)rank, ull(step), mode_name(&m->cfg, name));
        return ERR_PROTO_FIELD;
    }
    if (!lockstep) {
        uint64_t lead = step - min_clock(m);

        if (m->cfg.kind == MODE_SSP && lead > m->cfg.n) {
            err_say(err, "worker %u: push for step %llu is %llu steps ahead of the slowest "
                    "worker (step %llu): ssp:%u violated", (unsigned)rank, ull(step),
                    ull(lead), ull(min_clock(m)), (unsigned)m->cfg.n);
            return ERR_PROTO_FIELD;
        }
        if (grow(m, 0) != 0)
            goto nomem;
        if (lead > m->max_lead)
            m->max_lead = lead;
        out->action = MODE_APPLY;
        out->staleness = m->version - based_on;
        out->batch = examples;
        note_staleness(m, out->staleness);
        m->version++;
        m->clock[rank]++;
        out->version = m->version;
        e = &m->log[m->nlog++];
        *e = (struct mode_entry){ m->version, step, based_on, examples, rank, MODE_APPLY, 0, 0 };
        return 0;
    }
    if (step < m->step) {               /* backup: late for an applied step */
        if (grow(m, 0) != 0)
            goto nomem;
        m->clock[rank]++;
        m->dropped++;
        out->action = MODE_DROP;
        e = &m->log[m->nlog++];
        *e = (struct mode_entry){ m->version, step, based_on, examples, rank, MODE_DROP, 0, 0 };
        return 0;
    }
    if (grow(m, m->world) != 0)
        goto nomem;
    if (examples > UINT64_MAX - m->batch) {
        err_say(err, "worker %u: step %llu: example counts overflow", (unsigned)rank, ull(step));
        return ERR_PROTO_FIELD;
    }
    m->clock[rank]++;
    m->used[m->nused++] = rank;
    m->batch += examples;
    if (m->nused < m->world - (m->cfg.kind == MODE_BACKUP ? m->cfg.n : 0)) {
        out->action = MODE_WAIT;
        return 0;
    }
    /* The step is complete: staleness 0 by construction (every used push
     * computed on the weights of the step before). */
    m->version++;
    note_staleness(m, 0);
    out->action = MODE_STEP;
    out->version = m->version;
    out->batch = m->batch;
    out->nused = m->nused;
    out->used = m->used;
    e = &m->log[m->nlog++];
    *e = (struct mode_entry){ m->version, step, step, m->batch, UINT32_MAX, MODE_STEP,
                              m->nused_log, m->nused };
    memcpy(m->used_log + m->nused_log, m->used, m->nused * sizeof *m->used);
    m->nused_log += m->nused;
    m->step++;
    m->nused = 0;
    m->batch = 0;
    return 0;
nomem:
    err_say(err, "worker %u: step %llu: out of memory for the record", (unsigned)rank,
            ull(step));
    return -ENOMEM;
}

int mode_sent(struct mode *m, uint32_t rank)
{
    if (grow(m, 0) != 0)
        return -ENOMEM;
    m->log[m->nlog++] = (struct mode_entry){ m->version, 0, 0, 0, rank, MODE_SENT, 0, 0 };
    return 0;
}

void mode_hist_line(const struct mode *m, char *out, size_t len)
{
    uint64_t max = 0;
    size_t o;
    int k;

    for (int i = 0; i < MODE_HIST; i++)
        if (m->hist[i])
            max = (uint64_t)i;
    k = snprintf(out, len, "staleness over %llu updates: mean %.3f, max %s%llu;",
                 ull(m->stale_n), m->stale_n ? (double)m->stale_sum / (double)m->stale_n : 0.0,
                 max == MODE_HIST - 1 ? ">=" : "", ull(max));
    o = k > 0 && (size_t)k < len ? (size_t)k : len;
    for (int i = 0; i < MODE_HIST && o + 1 < len; i++) {
        if (!m->hist[i])
            continue;
        k = snprintf(out + o, len - o, " %s%d:%llu", i == MODE_HIST - 1 ? ">=" : "", i,
                     ull(m->hist[i]));
        if (k < 0 || (size_t)k >= len - o)
            break;
        o += (size_t)k;
    }
}

int mode_hist_write(const struct mode *m, const char *flag, const char *path, char *err)
{
    char name[32];
    int rc;
    struct outfile *of = outfile_new(flag, path, &rc, err);

    if (!of)
        return rc;
    outfile_printf(of, "# mode %s, K %u, %llu updates; bin %d counts staleness >= %d\n"
                   "# staleness updates\n", mode_name(&m->cfg, name), (unsigned)m->world,
                   ull(m->stale_n), MODE_HIST - 1, MODE_HIST - 1);
    for (int i = 0; i < MODE_HIST; i++)
        outfile_printf(of, "%d %llu\n", i, ull(m->hist[i]));
    return outfile_end(of, err);
}

int mode_record_write(const struct mode *m, const char *flag, const char *path, char *err)
{
    char name[32];
    int rc;
    struct outfile *of = outfile_new(flag, path, &rc, err);

    if (!of)
        return rc;
    outfile_printf(of, "# psring mode record 1\nmode %s %u\n", mode_name(&m->cfg, name),
                   (unsigned)m->world);
    for (size_t i = 0; i < m->nlog; i++) {
        const struct mode_entry *e = &m->log[i];

        if (e->action == MODE_APPLY)
            outfile_printf(of, "a %llu %u %llu %llu %llu\n", ull(e->version),
                           (unsigned)e->rank, ull(e->step), ull(e->based_on), ull(e->examples));
        else if (e->action == MODE_DROP)
            outfile_printf(of, "d %u %llu\n", (unsigned)e->rank, ull(e->step));
        else if (e->action == MODE_SENT)
            outfile_printf(of, "w %u %llu\n", (unsigned)e->rank, ull(e->version));
        else {
            outfile_printf(of, "s %llu %llu %llu", ull(e->version), ull(e->step),
                           ull(e->examples));
            for (size_t j = 0; j < e->nused; j++)
                outfile_printf(of, " %u", (unsigned)m->used_log[e->used_at + j]);
            outfile_printf(of, "\n");
        }
    }
    return outfile_end(of, err);
}
