/* metrics_merge.c -- the merge of one job's per-process records into one
 * row of the shared CSV (metrics.h, MERGE RULES): the checks that the
 * records are of one job, the per-step series and their medians, the
 * machine's verdict (host_bound, bound_by), the link's own (link_util,
 * bound_by "sw"), the CPU per byte and the row's model_s. The
 * records themselves, their file format and the CSV are metrics.c's.
 */
#include "metrics.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "model.h"

static int fail(char *err, const char *msg)
{
    if (err)
        snprintf(err, ERR_LEN, "merge: %s", msg);
    return ERR_FORMAT;
}

/* machine_verdict: machine_busy, job_busy, run_queue and, with a link
 * limit, host_bound and bound_by (hostload.h's rule). The window is the
 * union of the records' timed parts: the start sample with the fewest
 * ticks, the end sample with the most (the counters are the machine's, so
 * samples from different processes compare). */
static void machine_verdict(const struct metrics_record *recs, size_t n, double cpu,
                            double wall, int ncpu, struct metrics_row *row)
{
    const struct hostload_sample *a = NULL, *b = NULL;
    struct hostload_verdict v;
    double *q = calloc(2 * n, sizeof *q), runq = NAN, wait = 0.0;
    size_t nq = 0;

    for (size_t i = 0; i < n; i++) {
        const struct hostload_sample *m0 = &recs[i].machine0, *m1 = &recs[i].machine1;
        /* signal 4 (hostload.h) needs every process's own run delay */
        if (m0->ok && m1->ok && m0->wait_ns >= 0 && m1->wait_ns >= m0->wait_ns)
            wait += fmax(0.0, (double)(m1->wait_ns - m0->wait_ns) * 1e-9 -
                              (recs[i].link_credit_s > 0 ? recs[i].link_credit_s : 0.0));
        else
            wait = NAN;
        if (!m0->ok || !m1->ok)
            continue;
        if (!a || m0->total < a->total)
            a = m0;
        if (!b || m1->total > b->total)
            b = m1;
        if (q && m0->running >= 1)
            q[nq++] = m0->running - 1;
        if (q && m1->running >= 1)
            q[nq++] = m1->running - 1;
    }
    if (nq > 0) {
        struct metrics_stats st;
        metrics_summarize(q, nq, &st);
        runq = st.median;
    }
    free(q);
    hostload_decide(a, b, cpu, wall, (double)sysconf(_SC_CLK_TCK), ncpu, (int)n, runq, &v);
    hostload_wait(&v, wait, wall, (int)n);
    row->machine_busy = v.machine_busy;
    row->job_busy = v.job_busy;
    row->run_queue = v.run_queue;
    row->bound_by[0] = '\0';
    if (row->link_bw > 0) {
        row->host_bound = v.bound;
        snprintf(row->bound_by, sizeof row->bound_by, "%s", hostload_by_name(v.by));
    }
}

/* skew_of: how long ring record r entered the timed steps' combines
 * before the last rank did, summed (metrics.h, LAST ENTRY; all on one
 * clock, else 0): its link then waited for a neighbour still computing,
 * compute skew that time_s leaves out, and link_util does too: each
 * record's window begins at its own entry, and this is the one place
 * the skew is taken off (from its span and, at most all of it, its
 * idle: the span is then the last rank's entry to the record's end). */
static double skew_of(const struct metrics_record *recs, size_t n, const struct metrics_record *r,
                      size_t nsteps)
{
    double skew = 0.0;

    for (size_t s = 0; s < nsteps && s < r->nsteps; s++) {
        double last = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            if (recs[i].nsteps <= s || !isfinite(recs[i].steps[s].enter_t) ||
                strcmp(recs[i].clock_id, r->clock_id) != 0 || !r->clock_id[0])
                return 0.0;
            last = fmax(last, recs[i].steps[s].enter_t);
        }
        if (isfinite(r->steps[s].enter_t))
            skew += fmax(0.0, last - r->steps[s].enter_t);
    }
    return skew;
}

/* link_and_cost: link_util, cpu_s_per_gb and bound_by "sw" (metrics.h,
 * MERGE RULES), after machine_verdict: "sw" replaces only "link", when
 * the utilization is below 0.95 of the algorithm's own (model_link_util:
 * 1 but for the trees, whose leaves wait for the broadcast). The ring's
 * model's own idle on every span a record measures is 0 (a ring step's
 * latency is bytes in flight, counted busy, and a wait after running
 * ahead of the model's step is the lead's, link.h; a ring rank's span
 * is taken from the last rank's entry, skew_of; a server's span
 * starts at the last worker's first push and ends at its weights'
 * arrival), so a record's utilization is 1 - idle / span. */
static void link_and_cost(const struct metrics_record *recs, size_t n, struct metrics_row *row)
{
    int ps = strcmp(row->system, "ps") == 0;

    row->link_util = row->cpu_s_per_gb = NAN;
    for (size_t i = 0; i < n; i++) {
        const struct metrics_record *r = &recs[i];
        double moved = 0.0, u;

        for (size_t s = 0; s < r->nsteps; s++)
            moved += (double)r->steps[s].bytes_in + (double)r->steps[s].bytes_out;
        if (r->cpu_s > 0 && moved > 0) {     /* the compute left out */
            double c = fmax(0.0, r->cpu_s - (r->compute_cpu_s >= 0 ? r->compute_cpu_s : 0.0)) /
                       (moved * 1e-9);
            if (!(row->cpu_s_per_gb >= c))
                row->cpu_s_per_gb = c;
        }
        /* the PS's critical path is its servers' links (the host's, colocated) */
        if (!(row->link_bw > 0) || (ps && strcmp(r->role, "server") != 0) ||
            !(r->link_span_s > 0) || !(r->link_idle_s >= 0))
            continue;
        if (ps) {
            u = fmin(1.0, fmax(0.0, 1.0 - r->link_idle_s / r->link_span_s));
        } else {                /* a ring rank's: its compute skew left out */
            double skew = fmin(skew_of(recs, n, r, r->nsteps), r->link_idle_s);
            u = r->link_span_s - skew > 0 ? fmin(1.0, fmax(0.0, 1.0 - (r->link_idle_s - skew) /
                                                             (r->link_span_s - skew))) : NAN;
        }
        if (!(row->link_util >= u))
            row->link_util = u;
    }
    /* against the algorithm's own share: 1 but for the trees, whose
     * schedule leaves links idle (model.h, model_link_util) */
    if (strcmp(row->bound_by, "link") == 0 && !ps &&
        row->link_util < METRICS_SW_UTIL * model_link_util(row->algo, row->k,
                                                           (double)row->bytes, row->link_bw,
                                                           row->link_latency))
        snprintf(row->bound_by, sizeof row->bound_by, "sw");
    else if (strcmp(row->bound_by, "link") == 0 && ps && row->link_util < METRICS_SW_UTIL)
        snprintf(row->bound_by, sizeof row->bound_by, "sw");
}

/* ps_pipelined: model_s of a PS row whose workers pushed several buckets
 * (model.h, model_ps_pipelined), in the row's placement. */
static double ps_pipelined(const struct metrics_row *row, int extra, double n, double bw, double a)
{
    double b = row->bucket_bytes;

    if (strcmp(row->placement, "colocated") == 0)
        return model_ps_pipelined(MODEL_PS_COLOC, row->k, extra, n, b, bw, a);
    if (strcmp(row->placement, "colocated-even") == 0)
        return model_ps_mix_pipelined(row->k, extra, 1.0 / row->servers, n, b, bw, a);
    return model_ps_pipelined(MODEL_PS, row->k, row->servers > 0 ? row->servers : 1, n, b, bw, a);
}

/* ps_one_pull: model_s of a PS row with S servers of their own and one
 * bucket, pushing w bytes and pulling n: as the server's round-robin
 * egress serves it (model.h, model_ps_sched; the seeds' 2a + 2 K n / bw
 * is its headline), but for a row whose one timed step is the first: no
 * step before it spread the workers, so the seeds' ingress + egress. */
static double ps_one_pull(const struct metrics_row *row, double w, double n, double bw, double a)
{
    int s = row->servers > 0 ? row->servers : 1;

    if (row->cold)
        return model_query(MODEL_PS, MODEL_INGRESS, row->k, s, w, bw, a) +
               model_query(MODEL_PS, MODEL_EGRESS, row->k, s, n, bw, a);
    return model_ps_sched(row->k, s, w, n, bw, a);
}

/* row_model: model_s of a merged row (NaN without a bandwidth limit):
 * a standalone collective's (--coll), the ring's or rd's, or the
 * parameter server's in its placement (separate: S = the server records,
 * at least 1). */
static double row_model(const struct metrics_row *row)
{
    double n = (double)row->bytes, bw = row->link_bw, a = row->link_latency;
    int extra = row->servers - row->k, g = 0;
    const struct model_algo_row *algo = model_algo_find(row->algo);    /* NULL: the ring's */
    int hring = sscanf(row->algo, "hring:%d", &g) == 1 && g > 0;        /* "hring:G": its G */
    int ps = strcmp(row->system, "ps") == 0;
    double w = row->wire_bytes && row->wire_bytes != row->bytes ? (double)row->wire_bytes : n;

    if (!(bw > 0))
        return NAN;
    if (w != n && !ps && strncmp(row->compress, "topk:", 5) == 0)
        return (row->k - 1) * (a + w / bw);    /* the ring's all-gather of K frames of w */
    if (w != n && !ps)              /* --compress: the ring's and rd's link carries w */
        n = w;
    if (w != n) {                   /* the PS's pushes carry w, its weights n */
        if (row->buckets > 1 || (row->placement[0] && strcmp(row->placement, "separate") != 0))
            return NAN;             /* not modelled: MERGE RULES, compress */
        return ps_one_pull(row, w, n, bw, a);
    }
    /* Every all-reduce algorithm of model_algos (--bench --algo rd, ...)
     * and the hierarchical ring (its G in the algo column "hring:G") has
     * its own cost, not the ring's that model_coll gives all_reduce. */
    if (row->coll[0] && !((algo || hring) && model_coll_parse(row->coll) == MODEL_COLL_ALL_REDUCE))
        return model_coll(model_coll_parse(row->coll), MODEL_TIME, row->k, n, bw, a, NAN, NAN);
    if (!ps)
        return hring ? model_hring(row->k, g, n, bw, a)
             : algo ? algo->time(row->k, n, bw, a) : model_ring(row->k, n, bw, a);
    if (row->buckets > 1)       /* per-bucket pull: the pull of one overlaps the next's push */
        return ps_pipelined(row, extra, n, bw, a);
    if (strcmp(row->placement, "colocated") == 0)
        return model_query(MODEL_PS_COLOC, MODEL_TIME, row->k, extra, n, bw, a);
    if (strcmp(row->placement, "colocated-even") == 0)
        return model_ps_mix(MODEL_TIME, row->k, extra, 1.0 / row->servers, n, bw, a);
    return ps_one_pull(row, n, n, bw, a);
}

/* merge_ttt_wait: record r into the row's ttt_s (the smallest carried)
 * and wait_s (the largest; MERGE RULES). */
static void merge_ttt_wait(const struct metrics_record *r, struct metrics_row *row)
{
    if (!isnan(r->ttt_s) && !(row->ttt_s <= r->ttt_s))
        row->ttt_s = r->ttt_s;
    if (!isnan(r->wait_s) && !(row->wait_s >= r->wait_s))
        row->wait_s = r->wait_s;
}

/* What metrics_merge's first pass learns from the records. */
struct merge_scan {
    const struct metrics_record *first; /* the first worker or rank */
    const struct metrics_record *low;   /* the lowest rank: its bytes without servers */
    size_t nsteps, nservers;
    double cpu, wall, bucket_bytes;
    uint32_t buckets;                   /* the workers' (metrics.h: model_s) */
    int ncpu;
};

/* merge_scan: check that the records are of one job (system, K, bytes,
 * the same timed steps) and gather what the row takes from them whole. */
static int merge_scan(const struct metrics_record *recs, size_t n, struct metrics_row *row,
                      struct merge_scan *m, char *err)
{
    memset(m, 0, sizeof *m);
    m->ncpu = 1;
    if (n == 0)
        return fail(err, "no records");
    for (size_t i = 0; i < n; i++) {
        const struct metrics_record *r = &recs[i];
        if (strcmp(r->system, recs[0].system) != 0 || r->world != recs[0].world ||
            r->bytes != recs[0].bytes)
            return fail(err, "records disagree on system, K or bytes");
        merge_ttt_wait(r, row);
        m->cpu += r->cpu_s;
        m->wall = fmax(m->wall, r->wall_s);
        m->ncpu = r->ncpu > m->ncpu ? r->ncpu : m->ncpu;
        if (strcmp(r->role, "server") == 0) {
            m->nservers++;
            continue;
        }
        if (!m->first) {
            m->first = r;
            m->nsteps = r->nsteps;
        }
        if ((r->buckets > 1) != (r->bucket_bytes > 0))
            return fail(err, "a record's buckets and bucket_bytes go together");
        if (r->buckets > m->buckets)
            m->buckets = r->buckets;
        if ((double)r->bucket_bytes > m->bucket_bytes)
            m->bucket_bytes = (double)r->bucket_bytes;
        if (!m->low || r->rank < m->low->rank)
            m->low = r;
    }
    if (!m->first)
        return fail(err, "no worker or rank record");
    if (m->nsteps == 0)
        return fail(err, "no timed steps");
    for (size_t i = 0; i < n; i++) {
        if (recs[i].nsteps != m->nsteps)
            return fail(err, "records disagree on the number of timed steps");
        for (size_t s = 0; s < m->nsteps; s++)
            if (recs[i].steps[s].step != m->first->steps[s].step)
                return fail(err, "records disagree on the timed step numbers");
    }
    return 0;
}

/* The per-step series metrics_merge summarizes: per timed step, the
 * slowest worker's combine (t) and whole step (ws), the slowest server's
 * ingress and egress, the servers' (or the lowest rank's) bytes. */
struct merge_series {
    double *t, *in, *eg, *bin, *bout, *ws;
    int whole;                          /* every worker/rank step has step_s */
};

static void series_free(struct merge_series *z)
{
    free(z->ws);
    free(z->t);
    free(z->in);
    free(z->eg);
    free(z->bin);
    free(z->bout);
}

/* last_entry: step s's latest enter_t over the worker/rank records when
 * every one has it on one clock (metrics.h, LAST ENTRY); NaN otherwise. */
static double last_entry(const struct metrics_record *recs, size_t n, const struct merge_scan *m,
                         size_t s)
{
    double e = -INFINITY;

    for (size_t i = 0; i < n; i++) {
        const struct metrics_record *r = &recs[i];
        if (strcmp(r->role, "server") == 0)
            continue;
        if (!r->clock_id[0] || strcmp(r->clock_id, m->first->clock_id) != 0 ||
            !isfinite(r->steps[s].enter_t))
            return NAN;
        e = fmax(e, r->steps[s].enter_t);
    }
    return e;
}

static int merge_steps(const struct metrics_record *recs, size_t n, const struct merge_scan *m,
                       struct merge_series *z, char *err)
{
    size_t nsteps = m->nsteps;

    z->whole = 1;
    z->t = calloc(nsteps, sizeof *z->t);
    z->in = calloc(nsteps, sizeof *z->in);
    z->eg = calloc(nsteps, sizeof *z->eg);
    z->bin = calloc(nsteps, sizeof *z->bin);
    z->bout = calloc(nsteps, sizeof *z->bout);
    z->ws = calloc(nsteps, sizeof *z->ws);
    if (!z->t || !z->in || !z->eg || !z->bin || !z->bout || !z->ws)
        return -ENOMEM;
    for (size_t s = 0; s < nsteps; s++) {
        double e = last_entry(recs, n, m, s);
        z->t[s] = z->in[s] = z->eg[s] = z->ws[s] = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            const struct metrics_step *p = &recs[i].steps[s];
            if (strcmp(recs[i].role, "server") == 0) {
                z->in[s] = fmax(z->in[s], p->ingress_s);
                z->eg[s] = fmax(z->eg[s], p->egress_s);
                z->bin[s] += (double)p->bytes_in;
                z->bout[s] += (double)p->bytes_out;
            } else {
                /* LAST ENTRY: less the wait for the last process to enter */
                z->t[s] = fmax(z->t[s], isnan(e) ? p->combine_s : p->combine_s - (e - p->enter_t));
                if (isnan(p->step_s))
                    z->whole = 0;
                z->ws[s] = fmax(z->ws[s], p->step_s);
            }
        }
        if (m->nservers == 0) {
            z->bin[s] = (double)m->low->steps[s].bytes_in;
            z->bout[s] = (double)m->low->steps[s].bytes_out;
        }
        if (!isfinite(z->t[s]))
            return fail(err, "a worker step has no combine time");
    }
    return 0;
}

/* merge_row: the row from the series' medians and the first record's
 * labels (MERGE RULES). */
static void merge_row(const struct metrics_record *recs, size_t n, const struct merge_scan *m,
                      const struct merge_series *z, struct metrics_row *row)
{
    const struct metrics_record *first = m->first;
    size_t nsteps = m->nsteps;
    struct metrics_stats st;

    snprintf(row->system, sizeof row->system, "%s", first->system);
    snprintf(row->algo, sizeof row->algo, "%s", first->algo);
    snprintf(row->transport, sizeof row->transport, "%s", first->transport);
    snprintf(row->coll, sizeof row->coll, "%s", first->coll);
    snprintf(row->compress, sizeof row->compress, "%s", first->compress);
    row->wire_bytes = first->compress[0] ? first->wire_bytes : 0;
    row->cold = nsteps == 1 && first->steps[0].step == 0;
    row->k = first->world;
    row->bytes = first->bytes;
    row->steps = nsteps;
    metrics_summarize(z->t, nsteps, &st);
    row->time_s = st.median;
    row->time_min_s = st.min;
    row->time_max_s = st.max;
    row->step_s = NAN;
    if (z->whole) {
        metrics_summarize(z->ws, nsteps, &st);
        row->step_s = st.median;
    }
    row->ingress_s = row->egress_s = NAN;
    if (m->nservers) {
        metrics_summarize(z->in, nsteps, &st);
        row->ingress_s = isfinite(st.median) ? st.median : NAN;
        metrics_summarize(z->eg, nsteps, &st);
        row->egress_s = isfinite(st.median) ? st.median : NAN;
    }
    metrics_summarize(z->bin, nsteps, &st);
    row->bytes_in = st.median;
    metrics_summarize(z->bout, nsteps, &st);
    row->bytes_out = st.median;
    row->algbw = row->time_s > 0 ? (double)row->bytes / row->time_s : NAN;
    if (strcmp(row->system, "ps") == 0)
        row->busbw = row->algbw * row->k;
    else if (row->coll[0])
        row->busbw = row->algbw * model_busbw_factor(model_coll_parse(row->coll), row->k);
    else
        row->busbw = row->algbw * (row->k > 1 ? 2.0 * (row->k - 1) / row->k : 0.0);
    row->link_bw = first->link_bw;
    row->link_latency = first->link_latency;
    row->model_s = NAN;
    row->host_bound = -1;
    machine_verdict(recs, n, m->cpu, m->wall, m->ncpu, row);
    link_and_cost(recs, n, row);
    row->servers = (int)m->nservers;
    if (m->nservers)
        snprintf(row->placement, sizeof row->placement, "separate");
    row->buckets = m->buckets;
    row->bucket_bytes = m->buckets > 1 ? m->bucket_bytes : 0.0;
    row->model_s = row_model(row);
}

int metrics_merge(const struct metrics_record *recs, size_t n,
                  struct metrics_row *row, char *err)
{
    struct merge_scan m;
    struct merge_series z = { 0 };
    int rc;

    memset(row, 0, sizeof *row);
    row->ttt_s = row->wait_s = NAN;     /* none yet: merge_ttt_wait */
    rc = merge_scan(recs, n, row, &m, err);
    if (rc == 0)
        rc = merge_steps(recs, n, &m, &z, err);
    if (rc == 0)
        merge_row(recs, n, &m, &z, row);
    series_free(&z);
    return rc;
}

int metrics_row_place(struct metrics_row *row, const char *placement, char *err)
{
    int colocated = strcmp(placement, "colocated") == 0 || strcmp(placement, "colocated-even") == 0;

    if (strcmp(row->system, "ps") != 0 || row->servers < 1) {
        snprintf(err, ERR_LEN, "a placement is the parameter server's (a row with servers)");
        return ERR_USAGE;
    }
    if (!colocated && strcmp(placement, "separate") != 0) {
        snprintf(err, ERR_LEN, "placement '%.40s' is not separate, colocated or colocated-even", placement);
        return ERR_USAGE;
    }
    if (colocated && row->servers < row->k) {
        snprintf(err, ERR_LEN, "placement %s: %d servers for K = %d (one on each worker's host at least)",
                 placement, row->servers, row->k);
        return ERR_USAGE;
    }
    snprintf(row->placement, sizeof row->placement, "%s", placement);
    row->model_s = row_model(row);
    return 0;
}
