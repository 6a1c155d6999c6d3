/* model.c -- bin/model: the alpha-beta model (common/measure/model.h) on the
 * command line, for people and for the scripts and plots that draw it.
 * Nothing here is measured, and no formula is written here: every number
 * comes from common/measure/model.c, the code psr_merge fills model_s with.
 * The modes (`model --help` gives every flag; docs/design.md, The cost
 * model, says what each number means):
 *   model [--table ...]     the seed's table (also with no flags): PS
 *                           ingress against the ring, one row per K (seed 000)
 *   model --algo ALGO ...   one number (or --sweep LO,HI,N: "bytes,value"
 *                           lines, log-spaced) of model_algos' rows, hring
 *                           (--ranks-per-host G) or the PS; --gamma adds
 *                           the reduction term; --algo auto is the
 *                           selector: "BEST SECONDS RUNNER-UP SECONDS"
 *   model --split ...       the colocated shards (launch.sh --colocated-servers)
 *   model --crossover ...   n* where the ring and rd cost the same
 *   model --coll | --tp-layer | --bubble | --stragglers ...
 *                           a standalone collective, tensor parallelism's
 *                           all-reduces, the pipeline bubble, the straggler
 *                           models on the run's EMULATED compute times
 * Numbers print as %.12g. Bad input: one line on stderr, exit 64.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/cli_common.h"
#include "train/compute.h"
#include "base/compress.h"
#include "base/powersgd.h"
#include "base/dtype.h"
#include "base/err.h"
#include "measure/metrics.h"
#include "measure/model.h"
#include "wire/proto.h"

/* --algo's names: ps, model_algos' rows (model.h), hring (not a row: its
 * G), auto (the selector). */
static const char *algo_list(char *buf, size_t len, const char *sep, const char *last)
{
    size_t at = (size_t)snprintf(buf, len, "ps");
    for (int i = 0; i <= model_nalgos && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", sep,
                               i < model_nalgos ? model_algos[i].name : "hring");
    if (at < len)
        snprintf(buf + at, len - at, "%sauto", last);
    return buf;
}
/* hring's links inside a host (--local-bw, --local-latency; < 0, NaN: --bw's, --latency's). */
static double local_bw = -1, local_lat = NAN;
static const char *const quantity_names[] = { "time", "ingress", "egress", "bytes_in",
                                              "bytes_out", "steps", "t_opt", "pipelined", "sched", NULL };
enum { Q_PIPELINED = 7, Q_SCHED };  /* not model_quantities: model_ps_pipelined, _sched */
static const char *const placement_names[] = { "separate", "colocated", NULL };

/* name_index: NAME's position in the NULL-terminated list, or -1. */
static int name_index(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* parse_bytes: a size (4K, 1MiB, 4096) or a positive finite number. */
static int parse_bytes(const char *v, void *dst, char *err)
{
    double *out = dst;
    uint64_t u;
    char ignored[ERR_LEN];

    if (cli_parse_size(v, &u, ignored) == 0 && u > 0) {
        *out = (double)u;
        return 0;
    }
    if (cli_parse_double(v, out, ignored) == 0 && *out > 0 && isfinite(*out))
        return 0;
    snprintf(err, ERR_LEN, "'%.40s' is not a byte count > 0 (4096, 4K, 1MiB, 1.5e6)", v);
    return ERR_USAGE;
}

/* --sweep LO,HI,N */
struct sweep {
    double lo, hi;
    int n;
};

static int parse_sweep(const char *v, void *dst, char *err)
{
    struct sweep *s = dst;
    char buf[128], *hi, *n, *end;
    long count;

    if (strlen(v) >= sizeof buf)
        goto bad;
    strcpy(buf, v);
    if (!(hi = strchr(buf, ',')) || !(n = strchr(hi + 1, ',')))
        goto bad;
    *hi++ = '\0';
    *n++ = '\0';
    if (parse_bytes(buf, &s->lo, err) != 0 || parse_bytes(hi, &s->hi, err) != 0)
        return ERR_USAGE;
    count = strtol(n, &end, 10);
    if (*n == '\0' || *end != '\0' || count < 2 || count > 100000 || !(s->lo < s->hi))
        goto bad;
    s->n = (int)count;
    return 0;
bad:
    snprintf(err, ERR_LEN, "'%.40s' is not LO,HI,N (sizes LO < HI, 2 <= N <= 100000)", v);
    return ERR_USAGE;
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "model: %s; see model --help\n", msg);
    return CLI_EXIT_USAGE;
}

/* wire_factor: --compress NAME on --dtype D: the share of the vector's bytes that travels, into *f (1: none;
 * topk, sign: *sparse, sparse_eval's frames), the link charged f x the query's bytes. 0, or the usage line and 64. */
static struct { int rank, kind; double es, cost, spread; } psq;  /* the setting; powersgd:R; --spread */

static int wire_factor(const char *name, const char *dt, int algo, double *f, int *sparse,
                       int *d)
{
    int kind;
    char msg[ERR_LEN];

    *f = 1.0;
    if (!name && !dt)
        return 0;
    if (dt && dtype_parse(dt, d) != 0) {
        snprintf(msg, sizeof msg, "--dtype %.40s: not f32 or f64", dt);
        return usage_error(msg);
    }
    if (name && compress_parse(name, &kind) != 0) {
        snprintf(msg, sizeof msg, "--compress %.40s: not " COMPRESS_CHOICES, name);
        return usage_error(msg);
    }
    if (!name || kind == COMPRESS_NONE)
        return 0;
    psq.kind = kind, psq.es = (double)dtype_size(*d);   /* compress_cost's, psgd_cost's */
    if (compress_get(kind)->frame) {    /* sparse_eval's; topk: ring or ps, sign: ps */
        if (algo != MODEL_PS && (algo != MODEL_RING || COMPRESS_KIND(kind) != COMPRESS_TOPK))
            return usage_error("--compress topk:F|sign: topk models --algo ring (an all-gather) "
                               "or ps, sign --algo ps");
        *sparse = kind;
        return 0;
    }
    if (algo != MODEL_RING && algo != MODEL_RD) {
        snprintf(msg, sizeof msg, "--compress %.40s: models the ring's and rd's all-reduce "
                 "(--algo ring|rd); the PS's weights travel in full", name);
        return usage_error(msg);
    }
    *f = (double)compress_wire_size(compress_get(kind), *d) / (double)dtype_size(*d);
    psq.rank = COMPRESS_KIND(kind) == COMPRESS_POWERSGD ? COMPRESS_PSGD_RANK(kind) : 0;
    return 0;
}

/* psq_measure: the compressor's cost per element of a step of algo at K (psgd_cost; compress_cost x model_codec). */
static void psq_measure(double bytes, int algo, int k, int framed)
{
    int d = psq.es == 8 ? DTYPE_F64 : DTYPE_F32;
    char lb[COMPRESS_LABEL_MAX];
    struct compress_costs c = { 0, 0, 0, 0 };
    size_t n = (size_t)(bytes / psq.es);

    psq.cost = fmax(0.0, psq.rank ? psgd_cost(n, psq.rank, d) : compress_cost(psq.kind, n, d, &c) < 0 ? 0 : model_codec(algo, k, framed, &c));
    fprintf(stderr, "model: %s: the compressor's cost %.3g s per element (measured here, CPU time, a step at K %d: encode %.3g, decode-and-add "
            "%.3g, decode %.3g, check %.3g s each, model_codec's count; --compress-cost S gives it)\n", compress_label(psq.kind, lb, sizeof lb), psq.cost, k, c.enc, c.dec_add, c.dec, c.check);
}

/* print_table: the seed's exercise table (the default output). */
static int print_table(double elements, double elem_bytes, double bw, double latency,
                       const char *workers)
{
    char err[ERR_LEN];
    double *ks = NULL;
    int nk = 0;

    if (!(elements >= 1) || !(elem_bytes > 0) || !(bw > 0))
        return usage_error("--elements must be >= 1, --elem-bytes and --bw > 0");
    if (cli_parse_list(workers, &ks, &nk, err) != 0) {
        fprintf(stderr, "model: --workers: %s; see model --help\n", err);
        return CLI_EXIT_USAGE;
    }
    for (int i = 0; i < nk; i++) {
        if (ks[i] != floor(ks[i]) || ks[i] < 1 || ks[i] > 1e7) {
            fprintf(stderr, "model: --workers: %g is not a worker count (a whole number 1..1e7); see model --help\n", ks[i]);
            free(ks);
            return CLI_EXIT_USAGE;
        }
    }

    double n = elements * elem_bytes;
    printf("# alpha-beta model (common/measure/model.h), nothing measured: P = %g elements x %g B = %g GB per gradient,\n"
           "# links of %g GB/s each way, latency a = %g s\n", elements, elem_bytes, n / 1e9, bw / 1e9, latency);
    printf("# %-8s %14s %14s %14s %12s %12s %10s\n", "K", "ps_ingress_s", "ps_step_s", "ring_s",
           "ps_over_ring", "server_GB", "ring_GB");
    for (int i = 0; i < nk; i++) {
        int k = (int)ks[i];
        double ps_in = model_ps_ingress(k, n, bw, latency);
        double ring = model_ring(k, n, bw, latency);
        printf("  %-8d %14.4g %14.4g %14.4g %12.4g %12.4g %10.4g\n", k, ps_in,
               model_ps_step(k, n, bw, latency), ring, ring > 0 ? ps_in / ring : INFINITY,
               model_ps_link_bytes(k, n) / 1e9, model_ring_link_bytes(k, n) / 1e9);
    }
    printf("# The server's ingress grows as K n / bw; a ring worker's traffic 2(K-1)/K n tends to 2n,\n"
           "# so its time barely moves with K. Their ratio is K^2 / (2(K-1)), about K/2.\n");
    free(ks);
    return 0;
}

/* print_split: the colocated placement's shards over P elements, in the
 * order colocated 0..K-1, extra 0..k-1; each range ends where the
 * cumulative fraction times P rounds to, so the ranges tile [0, P). */
static int print_split(int k, int extra, double elements, int even)
{
    struct model_split sp = model_ps_split(k, extra);
    unsigned long long *first, *count;

    if (!(elements >= 1) || elements > 1e15 || elements != floor(elements))
        return usage_error("--elements must be a whole number 1..1e15");
    if (even)
        sp.colocated = sp.extra = 1.0 / (k + extra);
    first = calloc((size_t)(k + extra), sizeof *first);
    count = calloc((size_t)(k + extra), sizeof *count);
    if (!first || !count) {
        free(first);
        free(count);
        fprintf(stderr, "model: out of memory\n");
        return 1;
    }
    model_ps_ranges(k, extra, even, (unsigned long long)elements, first, count);
    printf("# role index first count fraction   (K = %d workers, %d extra servers, %s split)\n", k,
           extra, even ? "even" : "Theorem 1's");
    for (int i = 0; i < k + extra; i++) {
        int coloc = i < k;
        double f = coloc ? sp.colocated : sp.extra;

        if (f == 0.0)
            continue;       /* a placement that gives the colocated shards nothing */
        printf("%s %d %llu %llu %.12g\n", coloc ? "colocated" : "extra", coloc ? i : i - k,
               first[i], count[i], f);
    }
    free(first);
    free(count);
    return 0;
}

static void print_number(double v)
{
    printf("%.12g\n", isnan(v) ? NAN : v);     /* "nan", never "-nan" */
}

/* place_query: a PS query's placement flags checked (one line on stderr
 * when not), --placement colocated turned into MODEL_PS_COLOC, and the
 * servers' default (separate 1, colocated 0 extra) filled in. */
static int place_query(const char *placement_name, int even, int q, double bucket, int *algo,
                       int *servers)
{
    int place = placement_name ? name_index(placement_names, placement_name) : 0;

    if (place < 0) {
        fprintf(stderr, "model: --placement: '%.40s' is not separate or colocated\n", placement_name);
        return -1;
    }
    if (even && place != 1)
        return usage_error("--even-split is the colocated placement's (--placement colocated)");
    if (place == 0 && *servers == 0)
        return usage_error("--servers: a separate placement needs 1 server or more");
    if ((q == Q_PIPELINED) != !isnan(bucket))
        return usage_error("--quantity pipelined and --bucket SIZE go together");
    if (place == 1)
        *algo = MODEL_PS_COLOC;
    if (*servers < 0)
        *servers = place == 1 ? 0 : 1;
    return 0;
}

/* evaluate: one query's number (q may be Q_PIPELINED). */
static double evaluate(int algo, int q, int k, int servers, int even, double bytes, double bucket,
                       double bw, double lat)
{
    if (q == Q_PIPELINED && even)
        return model_ps_mix_pipelined(k, servers, 1.0 / (k + servers), bytes, bucket, bw, lat);
    if (q == Q_PIPELINED)
        return model_ps_pipelined(algo, k, servers, bytes, bucket, bw, lat);
    if (q == Q_SCHED)
        return model_ps_sched(k, servers, bytes, bytes, bw, lat);
    if (even)
        return model_ps_mix(q, k, servers, 1.0 / (k + servers), bytes, bw, lat);
    if (algo == MODEL_HRING && q == MODEL_TIME)     /* servers: G */
        return model_hring_links(k, servers, bytes, bw, lat, local_bw >= 0 ? local_bw : bw,
                                 isnan(local_lat) ? lat : local_lat);
    if (psq.rank)
        return model_psgd(algo, q, k, bytes, psq.es, psq.rank, psq.cost, bw, lat);
    if (algo == MODEL_PS && q == MODEL_TIME && psq.spread > 0)
        return model_ps_spread(k, bytes, bytes, psq.spread, bw, lat);
    return model_query(algo, q, k, servers, bytes, bw, lat);
}

/* sparse_eval: --compress topk:F|sign, bytes x of dtype d as one frame
 * (compress_frame_bytes, headers apart). The ring's top-k: an all-gather,
 * K - 1 frames each way per link in K - 1 steps. The PS (one server of
 * its own): the K pushes as frames in (--spread; sched: model_ps_sched), the weights dense out. */
static double sparse_eval(int set, int algo, int q, int k, double x, double bw, double lat, int d)
{
    double fb = (double)compress_frame_bytes(set, (size_t)(x / (double)dtype_size(d)), d);

    if (algo == MODEL_RING)
        return q == MODEL_STEPS ? k - 1 : q == MODEL_TIME ? (k - 1) * (lat + fb / bw) : (k - 1) * fb;
    if (q == MODEL_TIME || q == Q_SCHED)
        return q == Q_SCHED ? model_ps_sched(k, 1, fb, x, bw, lat) : model_ps_spread(k, fb, x, psq.spread, bw, lat);
    return model_query(MODEL_PS, q, k, 1, q == MODEL_INGRESS || q == MODEL_BYTES_IN ? fb : x, bw, lat);
}

/* The queries of issue 18 (--coll, --tp-layer, --bubble), apart from the
 * parameter server's and the ring's: what they take, and the answer. */
struct other {
    const char *coll;
    int tp, bubble, stages, micro, layers;
    uint64_t piece;
    double imbalance;
};

static int other_query(const struct other *o, int k, double bytes, const struct sweep *sweep,
                       double bw, double latency, const char *quantity_name, int has_algo)
{
    static const char *const qnames[] = { "time", "bytes_in", "bytes_out", "steps", NULL };
    static const int qs[] = { MODEL_TIME, MODEL_BYTES_IN, MODEL_BYTES_OUT, MODEL_STEPS };
    int modes = (o->coll != NULL) + o->tp + o->bubble, coll, qi = 0;

    if (modes > 1 || has_algo)
        return usage_error("--coll, --tp-layer, --bubble and --algo are separate queries; give one");
    if (o->bubble) {
        if (!o->stages || !o->micro || k || !isnan(bytes) || sweep->n || quantity_name)
            return usage_error("--bubble takes --stages P and --micro M only");
        print_number(model_pipeline_bubble(o->stages, o->micro));
        return 0;
    }
    if (o->stages || o->micro)
        return usage_error("--stages and --micro are --bubble's");
    if (!k)
        return usage_error("--coll and --tp-layer need --K");
    if (o->tp) {
        if (isnan(bytes) || sweep->n || quantity_name || !(bw > 0) || o->piece ||
            o->imbalance != 1)
            return usage_error("--tp-layer takes --K, --bytes, --bw > 0, --latency and --layers");
        print_number(o->layers * model_tp_layer(k, bytes, bw, latency));
        return 0;
    }
    if (o->layers != 1)
        return usage_error("--layers is --tp-layer's");
    if ((coll = model_coll_parse(o->coll)) < 0) {
        fprintf(stderr, "model: --coll %.40s: not all_reduce, reduce_scatter, all_gather, "
                "broadcast, reduce or alltoall; see model --help\n", o->coll);
        return CLI_EXIT_USAGE;
    }
    if (quantity_name)
        for (qi = 0; qnames[qi] && strcmp(qnames[qi], quantity_name) != 0; qi++)
            ;
    if (!qnames[qi]) {
        fprintf(stderr, "model: --quantity %.40s: not time, bytes_in, bytes_out or steps "
                "(for --coll); see model --help\n", quantity_name);
        return CLI_EXIT_USAGE;
    }
    if (o->imbalance != 1 && coll != MODEL_COLL_ALLTOALL)
        return usage_error("--imbalance is alltoall's");
    if (o->imbalance > k)
        return usage_error("--imbalance: at most K (everything to one rank)");
    if (isnan(bytes) == !sweep->n)
        return usage_error("a query needs one of --bytes and --sweep");
    if (qs[qi] == MODEL_TIME && !(bw > 0))
        return usage_error("a time needs --bw > 0");
    double seg = o->piece ? (double)o->piece : 1048576.0;
    for (int i = 0; i < (sweep->n ? sweep->n : 1); i++) {
        double x = sweep->n ? exp(log(sweep->lo) + i * (log(sweep->hi) - log(sweep->lo)) /
                                  (sweep->n - 1)) : bytes;
        double v = model_coll(coll, qs[qi], k, x, bw, latency, seg, o->imbalance);
        if (sweep->n)
            printf("%.12g,%.12g\n", x, v);
        else
            print_number(v);
    }
    return 0;
}

/* The straggler query (issue 16): the mode, the run's EMULATED compute
 * model (the flags of compute.h), the communication t and the steps. */
struct strag {
    const char *mode;           /* NULL: not this query */
    struct compute_model cm;
    double comm;                /* < 0: not given */
    uint64_t steps, warmup;
};

/* strag_given: any of the query's own flags is set (so it is this query). */
static int strag_given(const struct strag *s)
{
    return s->mode || s->cm.base > 0 || compute_model_active(&s->cm) || s->comm >= 0 ||
           s->steps || s->warmup || s->cm.seed != 7;
}

/* bytes, bw, lat: the link instead of --comm (model.h, THE STALE MODES): the ring's t, the PS
 * modes' model_stale.c (async, ssp on the mean compute; ssp's cap with a --straggler F > 1). */
static int straggler_query(const struct strag *s, int k, const char *quantity_name,
                           double bytes, double bw, double lat)
{
    enum { SYNC, BACKUP, ASYNC, SSP } kind;
    const char *m = s->mode;
    long b = 0;
    char *end;

    if (!m)
        return usage_error("--backward-time, --straggler, --jitter, --pause, --seed, --comm, "
                           "--steps and --warmup are --stragglers' (give MODE)");
    if (strcmp(m, "sync") == 0 || strcmp(m, "ring") == 0) {
        kind = SYNC;
    } else if (strncmp(m, "backup:", 7) == 0) {
        kind = BACKUP;
        b = strtol(m + 7, &end, 10);
        if (m[7] < '0' || m[7] > '9' || *end != '\0' || b < 1 || b >= (k ? k : 2))
            return usage_error("--stragglers backup:B: B must be 1 .. K-1");
    } else if (strcmp(m, "async") == 0) {
        kind = ASYNC;
    } else if (strcmp(m, "ssp") == 0 || (strncmp(m, "ssp:", 4) == 0 && m[4] >= '0' && m[4] <= '9' &&
                                         strtol(m + 4, &end, 10) >= 0 && *end == '\0')) {
        kind = SSP;
    } else {
        fprintf(stderr, "model: --stragglers %.40s: not sync, ring, backup:B, async or ssp[:N]; see model --help\n", m);
        return CLI_EXIT_USAGE;
    }
    if (quantity_name)
        return usage_error("--stragglers prints seconds per step (sync, backup) or updates/s (async, ssp); no --quantity");
    if (!k || !(s->cm.base > 0))
        return usage_error("--stragglers needs --K and --backward-time T > 0 (the compute model's base)");
    int link = !isnan(bytes) || bw >= 0 || lat != 0;
    if (link ? s->comm >= 0 || !(bytes > 0) || !(bw > 0) : s->comm < 0)
        return usage_error("--stragglers needs --comm TIME (the step's communication, >= 0) "
                           "or the link's --bytes N --bw RATE [--latency TIME], not both");
    if (s->cm.straggler_rank >= k || s->cm.pause_rank >= k)
        return usage_error("--straggler, --pause: the rank must be below K");
    uint64_t steps = s->steps ? s->steps : 1;
    if (s->warmup >= steps)
        return usage_error("--warmup must be below --steps");
    size_t n = (size_t)(steps - s->warmup);
    double *c = calloc(2 * (size_t)k, sizeof *c), *v = calloc(n, sizeof *v), *mean = c ? c + k : NULL;
    struct metrics_stats st;
    int ring = strcmp(m, "ring") == 0, slow = kind == SSP && s->cm.straggler_factor > 1 ? s->cm.straggler_rank : -1;
    double t = !link ? s->comm : ring ? model_ring(k, bytes, bw, lat) : 0, fr = bytes + PROTO_HEADER_SIZE;
    for (size_t i = 0; c && v && i < n; i++) {
        for (int r = 0; r < k; r++)
            mean[r] += (c[r] = compute_step_time(&s->cm, r, s->warmup + i)) / (double)n;
        v[i] = link && !ring && kind <= BACKUP ? model_ps_link_step(k, k - (int)b, c, fr, fr, bw, lat)
             : kind == SYNC ? model_sync_step(k, c, t)
             : kind == BACKUP ? model_backup_step(k, (int)b, c, t)
             : kind == ASYNC ? model_async_rate(k, c, t) : model_ssp_rate(k, c, t);
    }
    if (link && kind >= ASYNC && c && v)    /* the long-run rate: on the mean compute */
        v[0] = model_async_link_rate(k, mean, slow, fr, fr, bw, lat), n = 1;
    if (c && v)
        metrics_summarize(v, n, &st), print_number(st.median);
    else
        fprintf(stderr, "model: out of memory\n");
    free(c);
    free(v);
    return c && v ? 0 : 1;
}

/* select_query: --algo auto, "BEST SECONDS RUNNER-UP SECONDS" (model_select). */
static int select_query(int k, double bytes, double bw, double lat, double gamma)
{
    const struct model_algo_row *second, *best;
    double t[2];

    best = model_select(k, bytes, bw, lat, gamma, &second, t);
    printf("%s %.12g %s %.12g\n", best->name, t[0], second ? second->name : "none", t[1]);
    return 0;
}

int main(int argc, char **argv)
{
    /* NAN / NULL / 0 mark "not given": the modes take different flags. */
    double elements = NAN, elem_bytes = NAN, bw = -1, latency = 0, bytes = NAN;
    const char *workers = NULL, *algo_name = NULL, *quantity_name = NULL;
    const char *placement_name = NULL, *compress = NULL, *dt = NULL;
    double wf = 1.0;            /* --compress: the wire's share of the bytes */
    int sparse = 0, d = DTYPE_F32;  /* --compress topk:F|sign (sparse_eval), --dtype */
    int table = 0, crossover = 0, k = 0, servers = -1, split = 0, even = 0, rph = 0;
    double bucket = NAN, gamma = 0;
    char names[200], metavar[200];
    struct sweep sweep = { 0, 0, 0 };
    struct other other = { NULL, 0, 0, 0, 0, 1, 0, 1.0 };
    struct strag strag = { NULL, { 0 }, -1, 0, 0 };

    psq.cost = NAN;             /* --compress-cost: not given, measured */
    compute_model_init(&strag.cm);
    strag.cm.seed = 7;          /* the runs' default --seed (cli_common.c) */
    const struct cli_opt opts[] = {
        { "table", CLI_BOOL, &table, NULL, "the seed's table (what no flags print)", 0, 0, NULL },
        { "elements", CLI_DOUBLE, &elements, "P", "table: gradient elements (default 2e9, the seed's exercise)", 0, 0, NULL },
        { "elem-bytes", CLI_DOUBLE, &elem_bytes, "E", "table: bytes per element (default 2)", 0, 0, NULL },
        { "workers", CLI_STRING, &workers, "K,...", "table: worker counts (default 8,64,512)", 0, 0, NULL },
        { "bw", CLI_RATE, &bw, "RATE", "link bandwidth each way (table default 25GB = 25e9 bytes/s)", 0, 0, NULL },
        { "latency", CLI_TIME, &latency, "TIME", "one-way link latency a (default 0)", 0, 0, NULL },
        { "algo", CLI_STRING, &algo_name, algo_list(metavar, sizeof metavar, "|", "|"), "query: the algorithm "
          "(auto: the least time, then the runner-up: NAME SECONDS NAME SECONDS)", 0, 0, NULL },
        { "gamma", CLI_DOUBLE, &gamma, "G", "query, time: + G seconds per byte reduced (model.h, "
          "THE REDUCTION TERM; default 0: the a-b model)", 0, 0, NULL },
        { "ranks-per-host", CLI_INT, &rph, "G", "query, hring: ranks per host (dividing --K)", 1, 10000000, NULL },
        { "local-bw", CLI_RATE, &local_bw, "RATE", "query, hring: the links inside a host (default --bw: "
          "the emulated link's, every link alike)", 0, 0, NULL },
        { "local-latency", CLI_TIME, &local_lat, "TIME", "query, hring: their latency (default --latency)", 0, 0, NULL },
        { "K", CLI_INT, &k, "K", "query, crossover: workers", 1, 10000000, NULL },
        { "bytes", CLI_CUSTOM, &bytes, "N", "query: message size n in bytes (4K, 1MiB, 1.5e6)", 0, 0, parse_bytes },
        { "sweep", CLI_CUSTOM, &sweep, "LO,HI,N", "query: N sizes LO..HI, log-spaced: lines \"bytes,value\"", 0, 0, parse_sweep },
        { "servers", CLI_INT, &servers, "S", "query, ps: server hosts of their own (separate: default 1; "
          "colocated: the extra servers, default 0)", 0, 65536, NULL },
        { "placement", CLI_STRING, &placement_name, "P", "query, ps: separate (default) or colocated (a shard on "
          "each worker's host too; Theorem 1's split)", 0, 0, NULL },
        { "even-split", CLI_BOOL, &even, NULL, "colocated, --split: 1/(K+k) per server, not Theorem 1's", 0, 0, NULL },
        { "split", CLI_BOOL, &split, NULL, "the colocated byte split: ROLE INDEX FIRST COUNT FRACTION per server "
          "(--K, --servers, --elements)", 0, 0, NULL },
        { "bucket", CLI_CUSTOM, &bucket, "SIZE", "query: the bucket for --quantity pipelined", 0, 0, parse_bytes },
        { "quantity", CLI_STRING, &quantity_name, "Q", "query: time (default), ingress, egress, bytes_in, bytes_out, "
          "steps, t_opt, pipelined, sched (ps: the server's round-robin egress, model_ps_sched: a row's model_s)", 0, 0, NULL },
        { "coll", CLI_STRING, &other.coll, "NAME", "query: a standalone collective (all_reduce, reduce_scatter, all_gather, broadcast, reduce, alltoall)", 0, 0, NULL },
        { "piece", CLI_SIZE, &other.piece, "SIZE", "--coll broadcast/reduce: the chain's segment (default 1M)", 8, 0, NULL },
        { "imbalance", CLI_DOUBLE, &other.imbalance, "F", "--coll alltoall: the hot rank's F x the average share (1 .. K)", 0, 0, NULL },
        { "tp-layer", CLI_BOOL, &other.tp, NULL, "tensor parallelism: the 4 all-reduces per layer per step (--K T --bytes ACT)", 0, 0, NULL },
        { "layers", CLI_INT, &other.layers, "L", "--tp-layer: layers (default 1)", 1, 0, NULL },
        { "bubble", CLI_BOOL, &other.bubble, NULL, "the pipeline bubble (P-1)/(M+P-1) (--stages P --micro M)", 0, 0, NULL },
        { "stages", CLI_INT, &other.stages, "P", "--bubble: pipeline stages", 1, 1000000, NULL },
        { "micro", CLI_INT, &other.micro, "M", "--bubble: micro-batches", 1, 0, NULL },
        { "compress", CLI_STRING, &compress, COMPRESS_METAVAR, "query: the wire format (bytes N are "
          "--dtype's; fp16/bf16 on ring|rd: N x 2 / its size; powersgd:R on ring|rd: N as a "
          "near-square matrix, two all-reduces of its factors; topk:F on ring|ps, sign on ps: frames)", 0, 0, NULL },
        { "dtype", CLI_STRING, &dt, "f32|f64", "--compress: the elements' type (default f32)", 0, 0, NULL },
        { "spread", CLI_TIME, &psq.spread, "TIME", "query, ps, time: the workers' entries TIME apart (model_ps_spread)", 0, 0, NULL },
        { "compress-cost", CLI_DOUBLE, &psq.cost, "S", "--compress C, a time: its CPU seconds per element of the step "
          "(default: each operation measured here, counted for --algo and --K: model_codec; said on stderr)", 0, 0, NULL },
        { "crossover", CLI_BOOL, &crossover, NULL, "n* in bytes where the ring and rd cost the same (--K, --bw, --latency)", 0, 0, NULL },
        { "stragglers", CLI_STRING, &strag.mode, "MODE", "the straggler models: sync|ring|backup:B (s per step), async|ssp (updates/s)", 0, 0, NULL },
        { "backward-time", CLI_TIME, &strag.cm.base, "TIME", "--stragglers: EMULATED backward time T (the run's)", 0, 0, NULL },
        { "straggler", CLI_CUSTOM, &strag.cm, "RANK:FACTOR", "--stragglers: RANK computes FACTOR x T (the run's)", 0, 0, cli_compute_straggler },
        { "jitter", CLI_DOUBLE, &strag.cm.jitter, "SIGMA", "--stragglers: the run's log-normal jitter", 0, 0, NULL },
        { "pause", CLI_CUSTOM, &strag.cm, "RANK:TIME[@N]", "--stragglers: the run's pause", 0, 0, cli_compute_pause },
        { "seed", CLI_U64, &strag.cm.seed, "S", "--stragglers: the run's seed (default 7)", 0, 0, NULL },
        { "comm", CLI_TIME, &strag.comm, "TIME", "--stragglers: the step's communication t (or the link's: --bytes N --bw RATE [--latency TIME])", 0, 0, NULL },
        { "steps", CLI_U64, &strag.steps, "N", "--stragglers: the run's steps (default 1)", 0, 0, NULL },
        { "warmup", CLI_U64, &strag.warmup, "W", "--stragglers: its warm-up steps, left out (default 0)", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *const tables[] = { opts, NULL };

    cli_main_parse("model", "[--table] [--elements P] [--elem-bytes E] [--bw RATE] [--latency TIME] [--workers K,...]\n"
                   "       model --algo ps|ring|rd|...|hring|auto --K K --bytes N|--sweep LO,HI,N\n"
                   "             --bw RATE [--latency TIME] [--gamma G]\n"
                   "             [--ranks-per-host G [--local-bw RATE] [--local-latency TIME]] (hring)\n"
                   "             [--servers S] [--placement separate|colocated] [--even-split] [--bucket SIZE] [--spread TIME]\n"
                   "             [--quantity time|ingress|egress|bytes_in|bytes_out|steps|t_opt|pipelined|sched]\n"
                   "             [--compress none|fp16|bf16|powersgd:R [--dtype f32|f64] [--compress-cost S]]\n"
                   "       model --split --K K [--servers k] [--elements P] [--even-split]\n"
                   "       model --crossover --K K --bw RATE [--latency TIME]\n"
                   "       model --coll NAME --K K --bytes N|--sweep LO,HI,N [--bw RATE] [--latency TIME]\n"
                   "             [--piece SIZE] [--imbalance F] [--quantity time|bytes_in|bytes_out|steps]\n"
                   "       model --tp-layer --K T --bytes ACT --bw RATE [--latency TIME] [--layers L]\n"
                   "       model --bubble --stages P --micro M\n"
                   "       model --stragglers sync|backup:B|async|ssp --K K --backward-time T [--straggler R:F]\n"
                   "             [--jitter SIGMA] [--pause R:TIME[@N]] [--seed S] [--steps N] [--warmup W] --comm TIME\n"
                   "The alpha-beta model (common/measure/model.h): the seed's table of parameter-server ingress\n"
                   "against ring all-reduce time, or one number per query, for scripts and plots.",
                   argc, argv, tables);

    int ps_flags = servers >= 0 || placement_name || even || !isnan(bucket);
    if ((compress || dt) && !algo_name)
        return usage_error("--compress and --dtype are a query's (--algo ring|rd)");
    if (strag_given(&strag)) {
        if (table || crossover || split || !isnan(elements) || !isnan(elem_bytes) || workers ||
            ps_flags || algo_name || sweep.n ||
            other.coll || other.tp || other.bubble || other.stages || other.micro ||
            other.layers != 1 || other.piece || other.imbalance != 1)
            return usage_error("--stragglers is a query of its own: --K, the compute model's "
                               "flags, --comm or the link, --steps and --warmup only");
        return straggler_query(&strag, k, quantity_name, bytes, bw, latency);
    }
    if (other.coll || other.tp || other.bubble || other.stages || other.micro ||
        other.layers != 1 || other.piece || other.imbalance != 1) {
        if (table || crossover || split || !isnan(elements) || !isnan(elem_bytes) || workers ||
            ps_flags)
            return usage_error("--coll, --tp-layer and --bubble are queries of their own; "
                               "not with the table, --crossover, --split or the PS's flags");
        return other_query(&other, k, bytes, &sweep, bw, latency, quantity_name,
                           algo_name != NULL);
    }
    int query = algo_name || !isnan(bytes) || sweep.n || quantity_name;
    int tabular = table || !isnan(elements) || !isnan(elem_bytes) || workers;
    if (split) {
        if (crossover || query || table || !isnan(elem_bytes) || workers || placement_name || !isnan(bucket))
            return usage_error("--split takes only --K, --servers, --elements and --even-split");
        if (!k)
            return usage_error("--split needs --K");
        return print_split(k, servers < 0 ? 0 : servers, isnan(elements) ? 1e6 : elements, even);
    }
    query = query || ps_flags;
    if (crossover) {
        if (tabular || query)
            return usage_error("--crossover takes only --K, --bw and --latency");
        if (!k || !(bw > 0))
            return usage_error("--crossover needs --K and --bw > 0");
        print_number(model_crossover(k, bw, latency));
        return 0;
    }
    if (!query && k)
        return usage_error("--K is the queries' (--algo, --crossover); the table takes --workers");
    if (!query)
        return print_table(isnan(elements) ? 2e9 : elements, isnan(elem_bytes) ? 2 : elem_bytes,
                           bw < 0 ? 25e9 : bw, latency, workers ? workers : "8,64,512");
    if (tabular)
        return usage_error("--table, --elements, --elem-bytes and --workers are the table's; not with --algo");

    const struct model_algo_row *row = model_algo_find(algo_name);
    int autosel = algo_name && strcmp(algo_name, "auto") == 0;
    int algo = row ? (int)row->algo : algo_name && strcmp(algo_name, "ps") == 0 ? MODEL_PS
             : algo_name && strcmp(algo_name, "hring") == 0 ? MODEL_HRING
             : autosel ? MODEL_RING : -1;
    int q = quantity_name ? name_index(quantity_names, quantity_name) : MODEL_TIME;
    if (!algo_name)
        return usage_error("a query needs --algo");
    if (algo < 0) {
        fprintf(stderr, "model: --algo %.40s: not %s; see model --help\n", algo_name,
                algo_list(names, sizeof names, ", ", " or "));
        return CLI_EXIT_USAGE;
    }
    if ((rph || local_bw >= 0 || !isnan(local_lat)) && algo != MODEL_HRING)
        return usage_error("--ranks-per-host, --local-bw and --local-latency are the "
                           "hierarchical ring's (--algo hring)");
    if (algo == MODEL_HRING && !rph)
        return usage_error("--algo hring needs --ranks-per-host G");
    if (gamma != 0 && (!(gamma >= 0) || q != MODEL_TIME || compress))
        return usage_error("--gamma: seconds per byte >= 0, for --quantity time (not with --compress)");
    if (autosel)
        return quantity_name || sweep.n || compress || !k || isnan(bytes) || !(bw > 0) || ps_flags
            ? usage_error("--algo auto takes --K, --bytes, --bw > 0, --latency and --gamma only")
            : select_query(k, bytes, bw, latency, gamma);
    if (q < 0) {
        fprintf(stderr, "model: --quantity %.40s: not time, ingress, egress, bytes_in, bytes_out, steps, t_opt, pipelined or sched; see model --help\n",
                quantity_name);
        return CLI_EXIT_USAGE;
    }
    if ((q == MODEL_INGRESS || q == MODEL_EGRESS || q == Q_SCHED) && algo != MODEL_PS)
        return usage_error("--quantity ingress, egress and sched are the parameter server's (--algo ps)");
    if (ps_flags && algo != MODEL_PS)
        return usage_error("--servers, --placement, --even-split and --bucket are the parameter server's (--algo ps)");
    if (place_query(placement_name, even, q, bucket, &algo, &servers) != 0 ||
        wire_factor(compress, dt, algo, &wf, &sparse, &d) != 0)
        return CLI_EXIT_USAGE;
    if (q == Q_SCHED && (algo != MODEL_PS || psq.spread || (wf != 1.0 || psq.rank) || !(bw > 0)))
        return usage_error("--quantity sched: separate servers, no --spread, --bw > 0, --compress none, topk:F or sign");
    if ((sparse || psq.spread) && (q == MODEL_TOPT || q == Q_PIPELINED || servers > 1 || even || placement_name))
        return usage_error("--compress topk:F|sign, --spread: one server of its own, no t_opt or pipelined");
    if (psq.spread && (algo != MODEL_PS || q != MODEL_TIME))
        return usage_error("--spread: a time of --algo ps");
    if (!k)
        return usage_error("a query needs --K");
    if (algo == MODEL_HRING) {
        if (k % rph != 0) {
            fprintf(stderr, "model: --ranks-per-host %d: must divide --K %d (the hierarchical ring "
                    "has no rule for a partial host); see model --help\n", rph, k);
            return CLI_EXIT_USAGE;
        }
        servers = rph;                  /* model_query's G */
    }
    if (psq.kind && (q == MODEL_TIME || q == Q_SCHED) && isnan(psq.cost) && isnan(bytes) == !!sweep.n)
        psq_measure(isnan(bytes) ? sweep.hi : bytes, algo, k, sparse != 0);
    if (isnan(bytes) == !sweep.n)
        return usage_error("a query needs one of --bytes and --sweep");
    int timed = q == MODEL_TIME || q == MODEL_INGRESS || q == MODEL_EGRESS || q == MODEL_TOPT ||
                q == Q_PIPELINED;
    if (timed && !(bw > 0))
        return usage_error("a time needs --bw > 0");

    double red = gamma == 0 ? 0 : row ? row->reduced(k) : algo == MODEL_PS ? (double)k / servers
               : k * (even ? 1.0 / (k + servers) : model_ps_split(k, servers).colocated); /* g */
    red = gamma * red + ((q == MODEL_TIME || q == Q_SCHED) && psq.kind && !psq.rank ? psq.cost / psq.es : 0); /* s/byte */
    if (!sweep.n) {
        print_number((sparse ? sparse_eval(sparse, algo, q, k, bytes, bw, latency, d)
                      : evaluate(algo, q, k, servers, even, bytes * wf, bucket * wf, bw, latency))
                     + red * bytes);
        return 0;
    }
    for (int i = 0; i < sweep.n; i++) {
        double x = exp(log(sweep.lo) + i * (log(sweep.hi) - log(sweep.lo)) / (sweep.n - 1));
        printf("%.12g,%.12g\n", x, (sparse ? sparse_eval(sparse, algo, q, k, x, bw, latency, d)
               : evaluate(algo, q, k, servers, even, x * wf, bucket * wf, bw, latency)) + red * x);
    }
    return 0;
}
