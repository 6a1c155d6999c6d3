/* model.c -- alpha-beta formulas (derivations in model.h). Each formula is
 * written once, here; the shorthands at the end call model_query. */
#include <math.h>
#include <string.h>

#include "model.h"

#include "base/compress.h"
#include "base/powersgd.h"
#include "base/tree_shape.h"

int model_rd_steps(int k)
{
    int steps = 0;
    while ((1 << (steps + 1)) <= k)
        steps++;
    if ((1 << steps) != k)
        steps += 2;     /* the fold: extra ranks in first, the result out last */
    return steps;
}

/* rab_fold: Rabenseifner's P = 2^floor(log2 K) (*l its log2), and 1 when
 * K is not a power of two (the fold in and out, model.h). */
static int rab_fold(int k, int *p, int *l)
{
    *p = 1;
    *l = 0;
    while (*p * 2 <= k) {
        *p *= 2;
        (*l)++;
    }
    return *p != k;
}

struct tree_shape {
    int colors, trees;
    double steps, seg, time, util;  /* NAN when out of memory */
};

/* What of a frame of `bytes` goes with its 40-byte header before the other
 * end's header is in (xport_tcp.c, tcp_begin): the emulated link's first
 * piece at bw (wire/link.h, PIECE and link_frame_first: a piece of
 * min(max(4 KiB, 1 ms of wire), max(60 KiB, 250 us of wire), 16 MiB),
 * less the header, or the whole frame when at most 64 bytes would be
 * left). 0: the whole frame. */
static double model_first_bytes(double bytes, double bw)
{
    double piece = fmin(fmin(fmax(4096.0, bw * 1e-3), fmax(61440.0, bw * 250e-6)), 16777216.0);

    return bytes <= piece - 40.0 + 64.0 ? 0.0 : piece - 40.0;
}

/* The trees: S segments of at most 128 KiB a tree, C colors; the time of
 * the schedule tree.c runs with eager sends, one wire each way per host
 * (base/tree_shape.h, tree_cost), and the latencies on its longest path
 * (steps: the times a counts, with bw and lat as given). */
static struct tree_shape tree_shape(enum model_algo algo, int k, double bytes, double bw,
                                    double lat)
{
    struct tree_shape t = { 0, algo == MODEL_DBTREE ? 2 : 1, 0.0, 0.0, 0.0, 1.0 };
    double part = bytes / t.trees, s = fmax(1.0, ceil(part / MODEL_TREE_SEG_BYTES));
    long segs[2] = { (long)s, (long)s };
    struct tree_cost c;

    if (k <= 1)
        return t;
    t.seg = part / s;
    if (tree_cost(k, t.trees, segs, t.seg, lat, 1.0 / bw, model_first_bytes(t.seg, bw), &c) != 0) {
        t.steps = t.time = t.util = NAN;
        return t;
    }
    t.util = c.util > 0 ? c.util : 1.0;
    t.colors = c.colors;
    t.steps = c.lat_terms;
    t.time = c.time;
    return t;
}

/* Bytes one direction of the busiest link carries per step. rd, K not a
 * power of two: the rank that takes an extra rank's vector in (and gives
 * the result back) carries one vector more than the exchanges. */
static double link_bytes(enum model_algo algo, int k, int servers, double bytes)
{
    switch (algo) {
    case MODEL_PS:      /* a server's K n / S, or a worker's own n */
        return fmax((double)k / servers, 1.0) * bytes;
    case MODEL_PS_COLOC:
        return NAN;     /* model_ps_mix */
    case MODEL_RING:
        return k <= 1 ? 0.0 : 2.0 * (double)(k - 1) / (double)k * bytes;
    case MODEL_RD:
    case MODEL_SWING_LAT: {     /* the same bytes, other peers (model.h) */
        int s = model_rd_steps(k);
        return ((1 << s) == k || k <= 1 ? s : s - 1) * bytes;
    }
    case MODEL_RABENSEIFNER:    /* halving + doubling, and the fold's vector */
    case MODEL_SWING_BW: {
        int p, l, fold = rab_fold(k, &p, &l);
        return (2.0 * (p - 1) / p + fold) * bytes;
    }
    case MODEL_HRING:           /* 2(G-1)/G n inside + 2(H-1)/K n across: the ring's */
        return k % servers != 0 ? NAN : link_bytes(MODEL_RING, k, 1, bytes);
    case MODEL_TREE:            /* an interior rank: two children and a parent */
    case MODEL_DBTREE:          /* 3 halves where interior, 1 where a leaf */
        /* a rank's edges (3 in one tree; 3 + 1 in two), not C, which the
         * greedy colors of K > 64 make 5 or 6 */
        return algo == MODEL_TREE ? (k == 2 ? 1.0 : k == 3 ? 2.0 : 3.0) * bytes
                                  : (k == 2 ? 1.0 : 2.0) * bytes;
    }
    return NAN;
}

/* Messages in sequence per step: the number of times the latency counts. */
static int latency_terms(enum model_algo algo, int k, int g)
{
    switch (algo) {
    case MODEL_PS:
    case MODEL_PS_COLOC:
        return 2;                       /* push, then pull */
    case MODEL_RING:
        return k <= 1 ? 0 : 2 * (k - 1);   /* reduce-scatter + all-gather */
    case MODEL_RD:
    case MODEL_SWING_LAT:
        return model_rd_steps(k);
    case MODEL_RABENSEIFNER:
    case MODEL_SWING_BW: {
        int p, l, fold = rab_fold(k, &p, &l);
        return 2 * l + 2 * fold;
    }
    case MODEL_HRING:           /* inside (twice), across (twice) */
        return k <= 1 || g < 1 || k % g != 0 ? 0 : 2 * (g - 1) + 2 * (k / g - 1);
    case MODEL_TREE:            /* one segment: model_query counts S */
    case MODEL_DBTREE:
        return (int)tree_shape(algo, k, 0.0, 1.0, 1.0).steps;
    }
    return 0;
}

struct model_split model_ps_split(int k, int extra)
{
    struct model_split s = { 0.0, 0.0 };
    double den = (double)k * k + (double)extra * k - 2.0 * extra;

    if (extra <= 0) {
        s.colocated = 1.0 / k;
    } else if (extra >= k) {    /* the workers' own n sets the pace: no colocated shard */
        s.extra = 1.0 / extra;
    } else {                    /* Theorem 1: 1 + (K-2) x = K y, K x + k y = 1 */
        s.colocated = (double)(k - extra) / den;
        s.extra = 2.0 * (k - 1) / den;
    }
    return s;
}

void model_ps_ranges(int k, int extra, int even, unsigned long long elements,
                     unsigned long long *first, unsigned long long *count)
{
    struct model_split sp = model_ps_split(k, extra);
    unsigned long long at = 0;
    double cum = 0.0;

    if (even)
        sp.colocated = sp.extra = 1.0 / (k + extra);
    for (int i = 0; i < k + extra; i++) {
        double f = i < k ? sp.colocated : sp.extra;
        unsigned long long end;

        cum += f;
        end = i == k + extra - 1 ? elements : (unsigned long long)llround(cum * (double)elements);
        if (f == 0.0 || end < at)
            end = at;
        first[i] = at;
        count[i] = end - at;
        at = end;
    }
}

/* The colocated placement's busiest link, per step and direction, and in
 * one phase (push or pull) of a one-pull step: PLACEMENTS in model.h. */
double model_ps_mix(enum model_quantity q, int k, int extra, double x, double bytes,
                    double bw, double lat)
{
    double y, phase, step;

    if (k < 1 || extra < 0 || !(x >= 0.0) || x * k > 1.0 + 1e-12 ||
        (extra == 0 && fabs(x * k - 1.0) > 1e-12))
        return NAN;
    y = extra ? (1.0 - k * x) / extra : 0.0;
    step = fmax((1.0 + (k - 2.0) * x), k * y) * bytes;
    if (k == 1 && extra == 0)
        step = 0.0;     /* one worker with its own shard: nothing crosses a link */
    phase = fmax(fmax(1.0 - x, (k - 1.0) * x), k * y) * bytes;
    switch (q) {
    case MODEL_BYTES_IN:
    case MODEL_BYTES_OUT:
        return step;
    case MODEL_STEPS:
        return 2;
    case MODEL_INGRESS:
    case MODEL_EGRESS:
        return lat + phase / bw;
    case MODEL_TIME:
        return 2.0 * (lat + phase / bw);
    case MODEL_TOPT:
        return step / bw;
    }
    return NAN;
}

double model_ps_topt(int k, int extra, double bytes, double bw)
{
    double den = (double)k * k + (double)extra * k - 2.0 * extra;

    if (k < 1 || extra < 0 || extra > k || !(den > 0))
        return NAN;
    return 2.0 * k * (k - 1.0) * bytes / (den * bw);
}

/* pipelined: a per-bucket pull's step (model.h, model_ps_pipelined) from
 * its placement's t_opt of the vector, push phase of the vector and pull
 * phase of the last bucket, each without latency. */
static double pipelined(double topt, double push_all, double pull_last, double lat)
{
    return fmax(topt, push_all + pull_last) + 2.0 * lat;
}

double model_ps_pipelined(enum model_algo algo, int k, int servers, double bytes,
                          double bucket, double bw, double lat)
{
    if (algo == MODEL_PS_COLOC)
        return model_ps_mix_pipelined(k, servers, model_ps_split(k, servers).colocated, bytes,
                                      bucket, bw, lat);
    if (algo != MODEL_PS)
        return NAN;
    return pipelined(model_query(MODEL_PS, MODEL_TOPT, k, servers, bytes, bw, 0.0),
                     model_query(MODEL_PS, MODEL_INGRESS, k, servers, bytes, bw, 0.0),
                     model_query(MODEL_PS, MODEL_EGRESS, k, servers, bucket, bw, 0.0), lat);
}

double model_ps_mix_pipelined(int k, int extra, double x, double bytes, double bucket,
                              double bw, double lat)
{
    return pipelined(model_ps_mix(MODEL_TOPT, k, extra, x, bytes, bw, 0.0),
                     model_ps_mix(MODEL_INGRESS, k, extra, x, bytes, bw, 0.0),
                     model_ps_mix(MODEL_EGRESS, k, extra, x, bucket, bw, 0.0), lat);
}

double model_query(enum model_algo algo, enum model_quantity q, int k, int servers,
                   double bytes, double bw, double lat)
{
    if (algo == MODEL_PS_COLOC)
        return model_ps_mix(q, k, servers, model_ps_split(k, servers).colocated, bytes, bw, lat);
    if (algo == MODEL_HRING && (servers < 1 || k % servers != 0))
        return NAN;
    if (algo != MODEL_PS && algo != MODEL_HRING)
        servers = 1;
    switch (q) {
    case MODEL_TOPT:
        return link_bytes(algo, k, servers, bytes) / bw;
    case MODEL_BYTES_IN:
    case MODEL_BYTES_OUT:
        return link_bytes(algo, k, servers, bytes);
    case MODEL_STEPS:
        if (algo == MODEL_TREE || algo == MODEL_DBTREE)
            return tree_shape(algo, k, bytes, bw, lat).steps;
        return latency_terms(algo, k, servers);
    case MODEL_INGRESS:
    case MODEL_EGRESS:
        if (algo != MODEL_PS)
            return NAN;
        return lat + link_bytes(algo, k, servers, bytes) / bw;
    case MODEL_TIME:
        if (algo == MODEL_PS)
            return model_query(algo, MODEL_INGRESS, k, servers, bytes, bw, lat) +
                   model_query(algo, MODEL_EGRESS, k, servers, bytes, bw, lat);
        if (algo == MODEL_RD || algo == MODEL_SWING_LAT)   /* every exchange: the whole vector */
            return latency_terms(algo, k, servers) * (lat + bytes / bw);
        if (algo == MODEL_TREE || algo == MODEL_DBTREE)     /* the eager schedule */
            return tree_shape(algo, k, bytes, bw, lat).time;
        if (algo == MODEL_HRING)
            return model_hring_links(k, servers, bytes, bw, lat, bw, lat);
        if (algo == MODEL_RABENSEIFNER || algo == MODEL_SWING_BW) {  /* fold: 2 steps of n */
            int p, l, fold = rab_fold(k, &p, &l);
            return latency_terms(algo, k, servers) * lat + (2.0 * (p - 1) / p + 2 * fold) * bytes / bw;
        }
        return latency_terms(algo, k, servers) * lat + link_bytes(algo, k, 1, bytes) / bw;
    }
    return NAN;
}

/* Ring: 2(K-1) a + r n b with r = 2(K-1)/K; rd: s a + s n b. Equal where
 * (2(K-1) - s) a = (s - r) n b. */
double model_crossover(int k, double bw, double lat)
{
    double num = latency_terms(MODEL_RING, k, 1) - latency_terms(MODEL_RD, k, 1);
    double den = model_rd_steps(k) - (k <= 1 ? 0.0 : 2.0 * (double)(k - 1) / (double)k);
    if (!(num > 0) || !(den > 0))
        return NAN;
    return num * lat / (den / bw);
}

double model_ps_link_bytes(int k, double bytes)
{
    return link_bytes(MODEL_PS, k, 1, bytes);
}

double model_ring_link_bytes(int k, double bytes)
{
    return link_bytes(MODEL_RING, k, 1, bytes);
}

double model_ps_ingress(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_PS, MODEL_INGRESS, k, 1, bytes, bw, lat);
}

double model_ps_step(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_PS, MODEL_TIME, k, 1, bytes, bw, lat);
}

double model_ps_spread(int k, double push, double pull, double spread, double bw, double lat)
{
    if (k < 1 || !(bw > 0))
        return NAN;
    return 2 * lat + fmax(push / bw, k * push / bw - fmax(spread, 0)) + k * pull / bw;
}

size_t model_link_piece(double rate)
{
    double cap = fmax(LINK_PIECE_CAP, rate * LINK_PIECE_FAST_S);
    double p = fmin(fmax(LINK_PIECE_MIN, rate * LINK_PIECE_S), cap);

    return p >= (double)LINK_PIECE_MAX ? (size_t)LINK_PIECE_MAX : (size_t)p;
}

double model_ps_piece(double rate)
{
    return fmin((double)model_link_piece(rate), (double)MODEL_PS_CHUNK);
}

double model_last_piece(double frame, double piece)
{
    return frame - piece * ceil(frame / piece - 1);
}

double model_ps_tail(double n, double piece)
{
    double frame = n + MODEL_FRAME_HEADER;

    return frame <= piece ? n : model_last_piece(frame, piece);
}

double model_ps_sched(int k, int servers, double push, double bytes, double bw, double lat)
{
    if (k < 1 || servers < 1 || !(bw > 0))
        return NAN;
    if (servers > 1)            /* not derived (model.h) */
        return model_query(MODEL_PS, MODEL_INGRESS, k, servers, push, bw, lat) +
               model_query(MODEL_PS, MODEL_EGRESS, k, servers, bytes, bw, lat);
    return model_ps_spread(k, push, bytes, (k - 1) * model_ps_tail(bytes, model_ps_piece(bw)) / bw,
                           bw, lat);
}

double model_ring(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_RING, MODEL_TIME, k, 1, bytes, bw, lat);
}

double model_rd(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_RD, MODEL_TIME, k, 1, bytes, bw, lat);
}

double model_rabenseifner(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_RABENSEIFNER, MODEL_TIME, k, 1, bytes, bw, lat);
}

double model_tree(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_TREE, MODEL_TIME, k, 1, bytes, bw, lat);
}

double model_dbtree(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_DBTREE, MODEL_TIME, k, 1, bytes, bw, lat);
}

double model_link_util(const char *algo, int k, double bytes, double bw, double lat)
{
    const struct model_algo_row *row = model_algo_find(algo);

    if (!row || !(bw > 0) || (row->algo != MODEL_TREE && row->algo != MODEL_DBTREE))
        return 1.0;
    return tree_shape(row->algo, k, bytes, bw, lat).util;
}

/* ---------------------------------------------------------------------
 * The all-reduce algorithms as one table (model.h, THE REDUCTION TERM). */

static double reduced_ring(int k)
{
    return k <= 1 ? 0.0 : (double)(k - 1) / k;
}

static double reduced_rd(int k)
{
    int p, l, fold = rab_fold(k, &p, &l);
    return l + fold;
}

static double reduced_rab(int k)
{
    int p, l, fold = rab_fold(k, &p, &l);
    return k <= 1 ? 0.0 : (double)(p - 1) / p + fold;
}

static double reduced_tree(int k)
{
    return k <= 1 ? 0.0 : k == 2 ? 1.0 : 2.0;
}

static double reduced_dbtree(int k)
{
    return k <= 1 ? 0.0 : 1.0;
}

const struct model_algo_row model_algos[] = {
    { "ring", MODEL_RING, "any K: chunks of n/K", model_ring, reduced_ring, NULL },
    { "rd", MODEL_RD, "K not 2^l: the extra ranks fold in first, get the result last (+2 steps)",
      model_rd, reduced_rd, NULL },
    { "rabenseifner", MODEL_RABENSEIFNER, "K not 2^l: MPICH's fold of 2r ranks (+2 steps of n)",
      model_rabenseifner, reduced_rab, NULL },
    { "tree", MODEL_TREE, "any K: the tree is cut where the ranks end", model_tree, reduced_tree, NULL },
    { "dbtree", MODEL_DBTREE, "any K: the mirrored tree (NCCL's)", model_dbtree,
      reduced_dbtree, NULL },
    { "swing-lat", MODEL_SWING_LAT, "K not 2^l: Rabenseifner's fold (+2 steps of n)",
      model_swing_lat, reduced_rd, "rd" },
    { "swing-bw", MODEL_SWING_BW, "K not 2^l: Rabenseifner's fold (+2 steps of n)",
      model_swing_bw, reduced_rab, "rabenseifner" },
};
const int model_nalgos = (int)(sizeof model_algos / sizeof model_algos[0]);

const struct model_algo_row *model_algo_find(const char *name)
{
    for (int i = 0; name && i < model_nalgos; i++)
        if (strcmp(name, model_algos[i].name) == 0)
            return &model_algos[i];
    return NULL;
}

double model_algo_time(const struct model_algo_row *a, int k, double bytes, double bw,
                       double lat, double gamma)
{
    return a->time(k, bytes, bw, lat) + gamma * a->reduced(k) * bytes;
}

const struct model_algo_row *model_select(int k, double bytes, double bw, double lat,
                                          double gamma, const struct model_algo_row **runner,
                                          double t[2])
{
    const struct model_algo_row *best = NULL, *second = NULL;

    t[0] = t[1] = NAN;
    for (int i = 0; i < model_nalgos; i++) {
        double x = model_algo_time(&model_algos[i], k, bytes, bw, lat, gamma);
        if (isnan(x) || model_algos[i].twin)    /* a twin ties its row: never the choice */
            continue;
        if (!best || x < t[0]) {
            second = best;
            t[1] = t[0];
            best = &model_algos[i];
            t[0] = x;
        } else if (!second || x < t[1]) {
            second = &model_algos[i];
            t[1] = x;
        }
    }
    if (runner)
        *runner = second;
    return best;
}

/* ---------------------------------------------------------------------
 * The other collectives, tensor and pipeline parallelism (model.h). */

static const char *const coll_names[] = {
    "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "alltoall",
};
#define NCOLLS ((int)(sizeof coll_names / sizeof coll_names[0]))

int model_coll_parse(const char *name)
{
    for (int c = 0; c < NCOLLS; c++)
        if (strcmp(name, coll_names[c]) == 0)
            return c;
    return -1;
}

const char *model_coll_name(int coll)
{
    return coll >= 0 && coll < NCOLLS ? coll_names[coll] : NULL;
}

double model_busbw_factor(int coll, int k)
{
    double r = k > 1 ? (double)(k - 1) / (double)k : 0.0;

    switch (coll) {
    case MODEL_COLL_ALL_REDUCE:
        return 2.0 * r;
    case MODEL_COLL_BROADCAST:
    case MODEL_COLL_REDUCE:
        return k > 1 ? 1.0 : 0.0;
    case MODEL_COLL_REDUCE_SCATTER:
    case MODEL_COLL_ALL_GATHER:
    case MODEL_COLL_ALLTOALL:
        return r;
    }
    return NAN;
}

double model_coll(int coll, enum model_quantity q, int k, double bytes, double bw, double lat,
                  double seg, double imbalance)
{
    double r = k > 1 ? (double)(k - 1) / (double)k : 0.0, steps, link, in, out, pieces = 1;

    if (coll == MODEL_COLL_ALL_REDUCE)
        return q == MODEL_INGRESS || q == MODEL_EGRESS
            ? NAN : model_query(MODEL_RING, q, k, 1, bytes, bw, lat);
    switch (coll) {
    case MODEL_COLL_REDUCE_SCATTER:
    case MODEL_COLL_ALL_GATHER:
        steps = k - 1;
        in = out = link = r * bytes;
        break;
    case MODEL_COLL_BROADCAST:
    case MODEL_COLL_REDUCE:
        if (!(seg > 0) && q != MODEL_BYTES_IN && q != MODEL_BYTES_OUT)
            return NAN;
        pieces = seg > 0 && bytes > 0 ? ceil(bytes / seg) : 1;
        steps = k > 1 && bytes > 0 ? pieces + k - 2 : 0;
        in = out = k > 1 ? bytes : 0;
        link = pieces > 0 ? bytes / pieces : 0;
        break;
    case MODEL_COLL_ALLTOALL:
        if (!(imbalance >= 1) || imbalance > k)
            return NAN;
        steps = k - 1;
        in = (k - 1) * imbalance * bytes / k;
        /* The busiest sender keeps the smallest own block. */
        out = k > 1 ? bytes - fmin(imbalance * bytes / k, (bytes - imbalance * bytes / k) / (k - 1))
                    : 0;
        link = in;
        break;
    default:
        return NAN;
    }
    switch (q) {
    case MODEL_TIME:
        if (coll == MODEL_COLL_BROADCAST || coll == MODEL_COLL_REDUCE)
            return steps * (lat + link / bw);
        return steps * lat + link / bw;
    case MODEL_BYTES_IN:
        return in;
    case MODEL_BYTES_OUT:
        return out;
    case MODEL_STEPS:
        return steps;
    default:
        return NAN;
    }
}

double model_tp_layer(int t, double act_bytes, double bw, double lat)
{
    return 4.0 * model_ring(t, act_bytes, bw, lat);
}

double model_pipeline_bubble(int p, int m)
{
    if (p < 1 || m < 1)
        return NAN;
    return (double)(p - 1) / (double)(m + p - 1);
}

/* ------------------------------------------------------ stragglers (issue 16) */

/* computes_ok: k >= 1 finite non-negative compute times and t. */
static int computes_ok(int k, const double *compute, double t)
{
    if (k < 1 || !compute || !isfinite(t) || t < 0)
        return 0;
    for (int r = 0; r < k; r++)
        if (!isfinite(compute[r]) || compute[r] < 0)
            return 0;
    return 1;
}

double model_sync_step(int k, const double *compute, double t)
{
    return model_backup_step(k, 0, compute, t);
}

double model_backup_step(int k, int b, const double *compute, double t)
{
    if (!computes_ok(k, compute, t) || b < 0 || b >= k)
        return NAN;
    /* the (K-b)-th smallest: the c_i with fewer than K-b values below it
     * and at least K-b at or below it (ties counted once each) */
    for (int i = 0; i < k; i++) {
        int below = 0, at_or_below = 0;

        for (int j = 0; j < k; j++) {
            below += compute[j] < compute[i];
            at_or_below += compute[j] <= compute[i];
        }
        if (below < k - b && at_or_below >= k - b)
            return compute[i] + t;
    }
    return NAN;     /* not reached: some c_i is the (K-b)-th */
}

double model_async_rate(int k, const double *compute, double t)
{
    double u = 0;

    if (!computes_ok(k, compute, t))
        return NAN;
    for (int r = 0; r < k; r++)
        u += 1.0 / (compute[r] + t);    /* +Inf when both are 0: no time at all */
    return u;
}

double model_ssp_rate(int k, const double *compute, double t)
{
    double slow = model_sync_step(k, compute, t);

    return isnan(slow) ? NAN : (double)k / slow;
}

double model_swing_lat(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_SWING_LAT, MODEL_TIME, k, 1, bytes, bw, lat);
}

double model_swing_bw(int k, double bytes, double bw, double lat)
{
    return model_query(MODEL_SWING_BW, MODEL_TIME, k, 1, bytes, bw, lat);
}

double model_hring(int k, int g, double bytes, double bw, double lat)
{
    return model_query(MODEL_HRING, MODEL_TIME, k, g, bytes, bw, lat);
}

/* 2(G-1) steps of n/G inside, 2(H-1) of n/K across (model.h). */
double model_hring_links(int k, int g, double bytes, double bw, double lat, double bw_local,
                         double lat_local)
{
    int h;

    if (k < 1 || g < 1 || k % g != 0)
        return NAN;
    h = k / g;          /* G = 1 or H = 1: that part has no step (and may have no link) */
    return (g > 1 ? 2.0 * (g - 1) * (lat_local + bytes / g / bw_local) : 0.0) +
           (h > 1 ? 2.0 * (h - 1) * (lat + bytes / k / bw) : 0.0);
}

double model_psgd(enum model_algo algo, enum model_quantity q, int k, double bytes, double es,
                  int rank, double cost, double bw, double lat)
{
    size_t n = (size_t)(bytes / es), rows, cols;
    double v;

    psgd_near_square(n, &rows, &cols);
    if (!psgd_pays(rows, cols, rank))
        return model_query(algo, q, k, 0, bytes, bw, lat);
    v = model_query(algo, q, k, 0, (double)(rows * (size_t)rank) * es, bw, lat) +
        model_query(algo, q, k, 0, (double)(cols * (size_t)rank) * es, bw, lat);
    return q == MODEL_TIME ? v + cost * (double)n : v;
}

double model_codec(enum model_algo algo, int k, int framed, const struct compress_costs *c)
{
    int r = 0;

    if (k <= 1)
        return 0;
    if (algo == MODEL_PS || (algo == MODEL_RING && framed))
        return c->enc + (algo == MODEL_PS ? 1 : k) * c->dec_add;
    if (algo == MODEL_RING)
        return c->enc + (double)(k - 1) / k * c->dec_add + c->dec + c->check;
    while ((1 << r) < k)
        r++;
    return (r + 1) * (c->enc + c->dec) + r * c->dec_add + c->check;
}
