/* test_coll.c -- the standalone collectives behind coll.h on the host:
 * reduce-scatter and all-gather (ring.c), broadcast and reduce (chain.c),
 * all-to-all with and without imbalance (a2a.c), each against a serial
 * computation, and the bytes each rank's link counted against the
 * collective's formula.
 *
 * K ranks run as threads of this process, each with its own link
 * (counters) and TCP transport (xport_tcp_attach over socketpairs): the
 * ring's two connections per rank for the ring and the chain, a full mesh
 * (a2a_plan) for the all-to-all. Ids: coll-1.x results, coll-2.x bytes,
 * coll-3.x the split, the names and the rules (busy-poll, the piece).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll/a2a.h"
#include "coll/chain.h"
#include "coll/coll.h"
#include "coll/ring.h"
#include "coll/xport_tcp.h"
#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "wire/link.h"
#include "measure/model.h"
#include "wire/proto.h"
#include "base/rng.h"
#include "base/vec.h"

#define MAXK 8
#define HDR PROTO_HEADER_SIZE
/* A job's op besides coll_op's: ZeRO's pattern (common/coll/train.c), a
 * reduce-scatter then an all-gather of a range of the buffer. */
#define OP_RANGE 100

struct job {
    int rank, world, dtype, op, root;
    size_t n, piece;
    struct a2a_split split;
    int fds[MAXK];              /* the plan's connections, in plan order */
    unsigned char *buf, *rbuf;  /* rbuf: the all-to-all's receive buffer */
    struct link link;
    uint64_t out, in;           /* the link's counters across the collective */
    size_t first, count;        /* OP_RANGE: the range */
    size_t slo, shi;            /* OP_RANGE: coll_slice of it */
    int xport_ok;               /* coll_xport is the transport attached (NULL at K = 1) */
    int rc;
    char err[ERR_LEN];
};

static struct proto_peer fake_peers[MAXK];

/* value: rank r's input element i: random, with a seed per (r, i, salt). */
static double value(int r, size_t i, uint64_t salt)
{
    struct rng g;
    rng_seed(&g, ((uint64_t)r << 40) ^ ((uint64_t)i << 8) ^ salt);
    return rng_normal(&g) * 100.0;
}

/* as_dtype: v rounded to dtype, as vec_set stores it. */
static double as_dtype(double v, int dtype)
{
    return dtype == DTYPE_F32 ? (double)(float)v : v;
}

/* sum_from: the sum over the K ranks of element i, starting at rank
 * `first` and going round (first, first+1, ..., first-1), in dtype. */
static double sum_from(int k, int first, size_t i, int dtype, uint64_t salt)
{
    float af = 0;
    double ad = 0;

    for (int s = 0; s < k; s++) {
        int r = (first + s) % k;
        double v = as_dtype(value(r, i, salt), dtype);
        if (dtype == DTYPE_F32)
            af = s == 0 ? (float)v : af + (float)v;
        else
            ad = s == 0 ? v : ad + v;
    }
    return dtype == DTYPE_F32 ? af : ad;
}

static void fill(struct job *j, uint64_t salt)
{
    for (size_t i = 0; i < j->n; i++)
        vec_set(j->buf, i, j->dtype, value(j->rank, i, salt));
}

static void *rank_main(void *arg)
{
    struct job *j = arg;
    struct xport_tcp_cfg cfg;
    struct xport_plan plan;
    struct xport *t = NULL;
    struct coll co;
    int rc = 0, have = 0;

    memset(&cfg, 0, sizeof cfg);
    cfg.rank = j->rank;
    cfg.world = j->world;
    cfg.lfd = -1;
    cfg.peers = fake_peers;
    if (j->world > 1) {
        if (j->op == COLL_ALLTOALL)
            a2a_plan(j->rank, j->world, &plan);
        else
            ring_plan(j->rank, j->world, &plan);
    }
    cfg.plan = &plan;
    cfg.hello = (struct proto_hello){ j->n, (uint32_t)j->dtype, 2, 7, 1024, 0, 0 };
    cfg.link = &j->link;
    cfg.timeout = 10.0;
    link_init(&j->link, 0, 0);
    if (j->world > 1)
        rc = xport_tcp_attach(&t, &cfg, j->fds, j->err);
    if (rc == 0) {
        struct coll_cfg cc = { .kind = COLL_TCP, .algo = COLL_RING, .rank = j->rank,
                               .world = j->world, .dtype = j->dtype, .max_n = j->n,
                               .piece_bytes = j->piece, .timeout = 10.0, .x = t };
        rc = coll_init(&co, &cc, j->err);
        have = rc == 0;
    }
    if (rc == 0) {
        uint64_t o = j->link.bytes_out, in = j->link.bytes_in;
        j->xport_ok = coll_xport(&co) == t;
        switch (j->op) {
        case OP_RANGE:
            coll_slice(&co, j->first, j->count, &j->slo, &j->shi);
            rc = coll_reduce_scatter_range(&co, j->buf, j->first, j->count, j->err);
            if (rc == 0)
                rc = coll_all_gather_range(&co, j->buf, j->first, j->count, j->err);
            break;
        case COLL_ALL_REDUCE: rc = coll_allreduce(&co, j->buf, j->n, j->err); break;
        case COLL_REDUCE_SCATTER: rc = coll_reduce_scatter(&co, j->buf, j->n, j->err); break;
        case COLL_ALL_GATHER: rc = coll_all_gather(&co, j->buf, j->n, j->err); break;
        case COLL_BROADCAST: rc = coll_broadcast(&co, j->buf, j->n, j->root, j->err); break;
        case COLL_REDUCE: rc = coll_reduce(&co, j->buf, j->n, j->root, j->err); break;
        default: rc = coll_alltoall(&co, j->buf, j->rbuf, &j->split, j->err); break;
        }
        j->out = j->link.bytes_out - o;
        j->in = j->link.bytes_in - in;
    }
    /* The mesh also carries the ring's steps (the bench's gathers): one
     * all-reduce of a few doubles after the all-to-all, checked below. */
    if (rc == 0 && j->op == COLL_ALLTOALL) {
        double g[3] = { j->rank, 1, -j->rank };
        rc = ring_allreduce(&co.ring, g, 3, DTYPE_F64, j->err);
        if (rc == 0 && (g[0] != j->world * (j->world - 1) / 2.0 || g[1] != j->world ||
                        g[2] != -g[0])) {
            snprintf(j->err, ERR_LEN, "ring over the mesh: %g %g %g", g[0], g[1], g[2]);
            rc = ERR_MISMATCH;
        }
    }
    if (have)
        coll_destroy(&co);
    xport_close(t);
    j->rc = rc;
    return NULL;
}

/* PIECE_MIXED as run's piece: rank r stages mixed[r % 4] bytes (coll-3.7:
 * ranks that disagree on the piece). */
#define PIECE_MIXED ((size_t)-1)
static const size_t mixed[4] = { 128u << 10, 0 /* 1 MiB */, 8, 4096 };

/* run: K threads doing op; jobs[r] filled and run. Connections: the
 * ring's (right, left) or the mesh's (one per pair, in rank order). */
static int run(struct job *jobs, int k, int op, size_t n, int dtype, int root, size_t piece,
               double imbalance, uint64_t salt)
{
    pthread_t th[MAXK];
    int sp[MAXK][MAXK][2];

    for (int r = 0; r < k; r++) {
        struct job *j = &jobs[r];
        *j = (struct job){ .rank = r, .world = k, .dtype = dtype, .op = op, .root = root,
                           .n = n, .piece = piece == PIECE_MIXED ? mixed[r % 4] : piece,
                           .split = (struct a2a_split){ n, k, root, imbalance } };
        j->buf = calloc(n + 1, 8);
        j->rbuf = calloc((size_t)k * (n + 1), 8);
        if (!j->buf || !j->rbuf)
            return -ENOMEM;
        fill(j, salt);
    }
    if (k > 1 && op != COLL_ALLTOALL) {
        for (int r = 0; r < k; r++)
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[r][0]) != 0)
                return -errno;
        for (int r = 0; r < k; r++) {
            jobs[r].fds[0] = sp[r][0][0];                   /* right: dialled */
            jobs[r].fds[1] = sp[(r + k - 1) % k][0][1];     /* left: accepted */
        }
    } else if (k > 1) {
        int next[MAXK] = { 0 };
        for (int a = 0; a < k; a++)
            for (int b = a + 1; b < k; b++) {
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[a][b]) != 0)
                    return -errno;
            }
        /* a2a_plan lists the other ranks in rank order. */
        for (int r = 0; r < k; r++)
            for (int q = 0; q < k; q++)
                if (q != r)
                    jobs[r].fds[next[r]++] = q > r ? sp[r][q][0] : sp[q][r][1];
    }
    for (int r = 0; r < k; r++)
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    for (int r = 0; r < k; r++)
        pthread_join(th[r], NULL);
    return 0;
}

/* run_range: run's ring with OP_RANGE over [first, first + count). */
static int run_range(struct job *jobs, int k, size_t n, int dtype, size_t first, size_t count,
                     uint64_t salt)
{
    pthread_t th[MAXK];
    int sp[MAXK][2];

    for (int r = 0; r < k; r++) {
        struct job *j = &jobs[r];
        memset(j, 0, sizeof *j);
        *j = (struct job){ .rank = r, .world = k, .dtype = dtype, .op = OP_RANGE, .n = n,
                           .first = first, .count = count };
        j->buf = calloc(n + 1, 8);
        if (!j->buf)
            return -ENOMEM;
        fill(j, salt);
    }
    for (int r = 0; k > 1 && r < k; r++)
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[r]) != 0)
            return -errno;
    for (int r = 0; k > 1 && r < k; r++) {
        jobs[r].fds[0] = sp[r][0];                  /* right: dialled */
        jobs[r].fds[1] = sp[(r + k - 1) % k][1];    /* left: accepted */
    }
    for (int r = 0; r < k; r++)
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    for (int r = 0; r < k; r++)
        pthread_join(th[r], NULL);
    return 0;
}

static void free_jobs(struct job *jobs, int k)
{
    for (int r = 0; r < k; r++) {
        free(jobs[r].buf);
        free(jobs[r].rbuf);
        jobs[r].buf = jobs[r].rbuf = NULL;
    }
}

/* all_ok: every rank returned 0; else the first error printed. */
static int all_ok(const struct job *jobs, int k)
{
    for (int r = 0; r < k; r++)
        if (jobs[r].rc != 0) {
            printf("     rank %d of %d: rc %d: %s\n", r, k, jobs[r].rc, jobs[r].err);
            return 0;
        }
    return 1;
}

/* wrong: the elements of jobs' results that differ from the serial
 * computation (the first one printed). */
static size_t wrong(const struct job *jobs, int k, uint64_t salt)
{
    const struct job *j0 = &jobs[0];
    size_t n = j0->n, bad = 0, lo, hi;
    int dt = j0->dtype;
    double got = 0, want = 0;

#define MISS(...) do { if (bad++ == 0) { printf("     K=%d n=%zu %s %s: ", k, n, \
        coll_op_name(j0->op), dtype_name(dt)); printf(__VA_ARGS__); printf("\n"); } } while (0)
    for (int r = 0; r < k; r++) {
        const struct job *j = &jobs[r];
        switch (j0->op) {
        case COLL_REDUCE_SCATTER:     /* chunk r, summed from rank r+1 round to r */
            ring_chunk(n, k, r, &lo, &hi);
            for (size_t i = lo; i < hi; i++)
                if ((got = vec_get(j->buf, i, dt)) != (want = sum_from(k, (r + 1) % k, i, dt, salt)))
                    MISS("rank %d element %zu = %.17g, want %.17g", r, i, got, want);
            break;
        case COLL_ALL_GATHER:         /* chunk c is rank c's input */
            for (int c = 0; c < k; c++) {
                ring_chunk(n, k, c, &lo, &hi);
                for (size_t i = lo; i < hi; i++)
                    if ((got = vec_get(j->buf, i, dt)) != (want = as_dtype(value(c, i, salt), dt)))
                        MISS("rank %d element %zu = %.17g, want %.17g", r, i, got, want);
            }
            break;
        case COLL_BROADCAST:          /* the root's input everywhere */
            for (size_t i = 0; i < n; i++)
                if ((got = vec_get(j->buf, i, dt)) != (want = as_dtype(value(j0->root, i, salt), dt)))
                    MISS("rank %d element %zu = %.17g, want %.17g", r, i, got, want);
            break;
        case COLL_REDUCE:             /* the root: summed from root+1 round to root */
            if (r != j0->root)
                break;
            for (size_t i = 0; i < n; i++)
                if ((got = vec_get(j->buf, i, dt)) != (want = sum_from(k, (r + 1) % k, i, dt, salt)))
                    MISS("root %d element %zu = %.17g, want %.17g", r, i, got, want);
            break;
        case OP_RANGE:                /* the range's chunk c summed from c+1 round; the rest
                                         untouched */
            for (size_t i = 0; i < n; i++) {
                int c = -1;
                if (i >= j0->first && i < j0->first + j0->count)
                    for (c = 0; c < k; c++) {
                        ring_chunk(j0->count, k, c, &lo, &hi);
                        if (i - j0->first < hi)
                            break;
                    }
                want = c < 0 ? as_dtype(value(r, i, salt), dt) : sum_from(k, (c + 1) % k, i, dt, salt);
                if ((got = vec_get(j->buf, i, dt)) != want)
                    MISS("rank %d element %zu = %.17g, want %.17g", r, i, got, want);
            }
            break;
        case COLL_ALLTOALL: {         /* block s = rank s's block for r */
            size_t m = a2a_count(&j0->split, r), off = a2a_offset(&j0->split, r);
            for (int s = 0; s < k; s++)
                for (size_t i = 0; i < m; i++)
                    if ((got = vec_get(j->rbuf, (size_t)s * m + i, dt)) !=
                        (want = as_dtype(value(s, off + i, salt), dt)))
                        MISS("rank %d from %d element %zu = %.17g, want %.17g", r, s, i, got, want);
            break;
        }
        default:
            break;
        }
    }
#undef MISS
    return bad;
}

/* Bytes per rank, from the collective's formula (one header per step each
 * way, HDR bytes, plus the payload): ring.h's phases, chain.c, a2a.c. */
static void want_bytes(const struct job *jobs, int k, int r, uint64_t *out, uint64_t *in)
{
    const struct job *j = &jobs[r];
    size_t n = j->n, es = dtype_size(j->dtype), lo, hi, me, left, right;
    /* xport_algo_init rounds the staging piece up to 64 bytes. */
    size_t seg = chain_segment((j->piece + 63) / 64 * 64, j->dtype), steps = chain_steps(n, k, seg);
    int pos;

    *out = *in = 0;
    if (k == 1)
        return;
    ring_chunk(n, k, r, &lo, &hi);
    me = hi - lo;
    ring_chunk(n, k, (r + k - 1) % k, &lo, &hi);
    left = hi - lo;
    ring_chunk(n, k, (r + 1) % k, &lo, &hi);
    right = hi - lo;
    switch (j->op) {
    case COLL_REDUCE_SCATTER:     /* sends every chunk but r, receives every one but r-1 */
        *out = (uint64_t)(k - 1) * HDR + (n - me) * es;
        *in = (uint64_t)(k - 1) * HDR + (n - left) * es;
        break;
    case COLL_ALL_GATHER:         /* sends every chunk but r+1, receives every one but r */
        *out = (uint64_t)(k - 1) * HDR + (n - right) * es;
        *in = (uint64_t)(k - 1) * HDR + (n - me) * es;
        break;
    case COLL_BROADCAST:
    case COLL_REDUCE:             /* all but the tail send n; all but the head receive n */
        pos = j->op == COLL_BROADCAST ? (r - j->root + k) % k : (r - j->root - 1 + 2 * k) % k;
        *out = steps * HDR + (pos < k - 1 ? n * es : 0);
        *in = steps * HDR + (pos > 0 ? n * es : 0);
        break;
    case COLL_ALLTOALL:
        me = a2a_count(&j->split, r);
        *out = (uint64_t)(k - 1) * HDR + (n - me) * es;
        *in = (uint64_t)(k - 1) * (HDR + me * es);
        break;
    default:
        break;
    }
}

int main(void)
{
    static const int ks[] = { 1, 2, 3, 5, 8 };
    static const size_t ns[] = { 1, 7, 1001, 65539 };
    static const int dtypes[2] = { DTYPE_F32, DTYPE_F64 };
    struct job jobs[MAXK];
    char err[ERR_LEN];

    for (int r = 0; r < MAXK; r++) {
        fake_peers[r].port = (uint16_t)(42000 + r);
        snprintf(fake_peers[r].addr, sizeof fake_peers[r].addr, "127.0.0.1");
        fake_peers[r].addr_len = 9;
    }

    /* coll-1.1 .. 1.5: every op, K in {1,2,3,5,8}, odd n, f32 and f64,
     * roots 0, K/2 and K-1, staging pieces of 64 bytes (many segments) and
     * default; the bytes of the same runs in coll-2.1. */
    static const struct { const char *id, *name; int op; } cases[] = {
        { "coll-1.1", "reduce_scatter: rank r's chunk = the serial sum (ring order), K 1,2,3,5,8, odd n, f32/f64", COLL_REDUCE_SCATTER },
        { "coll-1.2", "all_gather: every chunk c = rank c's input, on every rank", COLL_ALL_GATHER },
        { "coll-1.3", "broadcast: every rank = the root's input, roots 0, K/2, K-1, segments of 64 B and 1 MiB", COLL_BROADCAST },
        { "coll-1.4", "reduce: the root = the serial sum from root+1 round, roots 0, K/2, K-1", COLL_REDUCE },
        { "coll-1.5", "alltoall balanced: block s on rank r = rank s's block for r; the ring on the mesh", COLL_ALLTOALL },
    };
    uint64_t bytes_bad = 0, bytes_runs = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        T_CASE(cases[c].id, cases[c].name);
        for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
            for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
                for (int d = 0; d < 2; d++) {
                    int k = ks[a], roots[3] = { 0, k / 2, k - 1 };
                    int rooted = cases[c].op == COLL_BROADCAST || cases[c].op == COLL_REDUCE;
                    for (int ri = 0; ri < (rooted ? 3 : 1); ri++) {
                        size_t piece = (ri + b) % 2 ? 64 : 0;
                        uint64_t salt = c * 1000 + a * 100 + b * 10 + (size_t)d + 1;
                        T_EQ_I(run(jobs, k, cases[c].op, ns[b], dtypes[d], roots[ri], piece, 1.0,
                                   salt), 0);
                        if (all_ok(jobs, k)) {
                            T_EQ_U(wrong(jobs, k, salt), 0);
                            for (int r = 0; r < k; r++) {
                                uint64_t wo, wi;
                                jobs[r].piece = jobs[r].piece ? jobs[r].piece : RING_PIECE_DEFAULT;
                                want_bytes(jobs, k, r, &wo, &wi);
                                bytes_runs++;
                                if (wo != jobs[r].out || wi != jobs[r].in) {
                                    if (bytes_bad++ == 0)
                                        printf("     %s K=%d n=%zu rank %d: out %llu in %llu, "
                                               "want %llu %llu\n", coll_op_name(cases[c].op), k,
                                               ns[b], r, (unsigned long long)jobs[r].out,
                                               (unsigned long long)jobs[r].in,
                                               (unsigned long long)wo, (unsigned long long)wi);
                                }
                            }
                        } else {
                            T_TRUE(0);
                        }
                        free_jobs(jobs, k);
                    }
                }
    }

    T_CASE("coll-1.6", "alltoall with --imbalance 1.5, 2.5 and K: hot rank 0 and K-1, contents and bytes");
    {
        static const double fs[] = { 1.5, 2.5, 8 };
        for (size_t a = 1; a < sizeof ks / sizeof ks[0]; a++)
            for (size_t f = 0; f < 3; f++)
                for (int hot = 0; hot < 2; hot++) {
                    int k = ks[a], h = hot ? k - 1 : 0;
                    double imb = fs[f] > k ? k : fs[f];
                    T_EQ_I(run(jobs, k, COLL_ALLTOALL, 1001, DTYPE_F64, h, 0, imb, 77 + f), 0);
                    if (all_ok(jobs, k)) {
                        T_EQ_U(wrong(jobs, k, 77 + f), 0);
                        for (int r = 0; r < k; r++) {
                            uint64_t wo, wi;
                            want_bytes(jobs, k, r, &wo, &wi);
                            T_EQ_U(jobs[r].out, wo);
                            T_EQ_U(jobs[r].in, wi);
                        }
                        /* The hot rank takes F times the average share from each. */
                        T_EQ_U(a2a_count(&jobs[0].split, h), (size_t)floor(imb * 1001 / k));
                    } else {
                        T_TRUE(0);
                    }
                    free_jobs(jobs, k);
                }
    }

    T_CASE("coll-4.1", "a range (ZeRO's buckets): coll_reduce_scatter_range + coll_all_gather_range of "
                       "[n/3, n/3 + n/2) = its all-reduce, the rest untouched; coll_slice = ring_chunk "
                       "+ n/3; coll_xport");
    for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
        for (size_t b = 1; b < sizeof ns / sizeof ns[0]; b++)
            for (int d = 0; d < 2; d++) {
                int k = ks[a];
                uint64_t salt = 4000 + a * 100 + b * 10 + (size_t)d;

                T_EQ_I(run_range(jobs, k, ns[b], dtypes[d], ns[b] / 3, ns[b] / 2, salt), 0);
                if (all_ok(jobs, k)) {
                    T_EQ_U(wrong(jobs, k, salt), 0);
                    for (int r = 0; r < k; r++) {
                        size_t lo, hi;
                        ring_chunk(ns[b] / 2, k, r, &lo, &hi);
                        T_EQ_U(jobs[r].slo, ns[b] / 3 + lo);
                        T_EQ_U(jobs[r].shi, ns[b] / 3 + hi);
                        T_TRUE(jobs[r].xport_ok);
                    }
                } else {
                    T_TRUE(0);
                }
                free_jobs(jobs, k);
            }

    T_CASE("coll-2.1", "bytes per rank = the formula for every run of coll-1.1 .. 1.5");
    T_EQ_U(bytes_bad, 0);
    T_TRUE(bytes_runs > 300);

    T_CASE("coll-2.2", "bytes, K = 4, n = 4096 f32: reduce_scatter and all_gather (K-1)/K n each way; broadcast n");
    {
        T_EQ_I(run(jobs, 4, COLL_REDUCE_SCATTER, 4096, DTYPE_F32, 0, 0, 1.0, 5), 0);
        for (int r = 0; r < 4 && all_ok(jobs, 4); r++) {
            T_EQ_U(jobs[r].out, 3 * 1024 * 4 + 3 * HDR);
            T_EQ_U(jobs[r].in, 3 * 1024 * 4 + 3 * HDR);
        }
        free_jobs(jobs, 4);
        T_EQ_I(run(jobs, 4, COLL_BROADCAST, 4096, DTYPE_F32, 1, 4096, 1.0, 5), 0);
        /* 4 segments of 1024 elements: 4 + 4 - 2 = 6 steps; rank 0 is the tail. */
        for (int r = 0; r < 4 && all_ok(jobs, 4); r++) {
            T_EQ_U(jobs[r].out, 6 * HDR + (r == 0 ? 0 : 16384));
            T_EQ_U(jobs[r].in, 6 * HDR + (r == 1 ? 0 : 16384));
        }
        free_jobs(jobs, 4);
    }

    T_CASE("coll-3.1", "the split: counts sum to n; balanced = ring_chunk; F = K sends all to the hot rank");
    {
        for (int k = 1; k <= MAXK; k++)
            for (double f = 1; f <= k; f += 0.75) {
                struct a2a_split sp = { 1001, k, k / 2, f };
                size_t sum = 0, lo, hi;
                T_EQ_I(a2a_split_check(&sp, err), 0);
                for (int d = 0; d < k; d++) {
                    T_EQ_U(a2a_offset(&sp, d), sum);
                    sum += a2a_count(&sp, d);
                    if (f == 1) {
                        ring_chunk(1001, k, d, &lo, &hi);
                        T_EQ_U(a2a_count(&sp, d), hi - lo);
                    }
                }
                T_EQ_U(sum, 1001);
            }
        struct a2a_split all = { 1000, 4, 2, 4.0 };
        T_EQ_U(a2a_count(&all, 2), 1000);
        T_EQ_U(a2a_count(&all, 0), 0);
        struct a2a_split two = { 1000, 4, 0, 2.0 };   /* 500 hot, 500 over three */
        T_EQ_U(a2a_count(&two, 0), 500);
        T_EQ_U(a2a_count(&two, 1), 167);
        T_EQ_U(a2a_count(&two, 3), 166);
    }

    T_CASE("coll-3.2", "bad splits refused: F < 1, F > K, NaN, hot >= K, K > A2A_WORLD_MAX");
    {
        struct a2a_split bad[] = {
            { 10, 4, 0, 0.5 }, { 10, 4, 0, 4.5 }, { 10, 4, 0, NAN }, { 10, 4, 4, 1 },
            { 10, A2A_WORLD_MAX + 1, 0, 1 },
        };
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
            T_EQ_I(a2a_split_check(&bad[b], err), ERR_USAGE);
    }

    T_CASE("coll-3.3", "names: nccl-tests' six, round trip; unknown refused; chain steps P + K - 2");
    {
        static const char *const names[] = { "all_reduce", "reduce_scatter", "all_gather",
                                             "broadcast", "reduce", "alltoall" };
        for (int op = 0; op < COLL_OPS; op++) {
            T_STR(coll_op_name(op), names[op]);
            T_EQ_I(coll_op_parse(names[op]), op);
        }
        T_EQ_I(coll_op_parse("allreduce"), -1);
        T_TRUE(coll_op_name(COLL_OPS) == NULL);
        T_EQ_U(chain_steps(4096, 4, 1024), 6);
        T_EQ_U(chain_steps(4097, 4, 1024), 7);
        T_EQ_U(chain_steps(1, 8, 1024), 7);
        T_EQ_U(chain_steps(0, 8, 1024), 0);
        T_EQ_U(chain_steps(100, 1, 3), 0);
    }

    T_CASE("coll-3.4", "busbw factors (nccl-tests'): K = 4: 1.5, 0.75, 0.75, 1, 1, 0.75; K = 1: 0");
    {
        static const double want[COLL_OPS] = { 1.5, 0.75, 0.75, 1, 1, 0.75 };
        for (int op = 0; op < COLL_OPS; op++) {
            T_EQ_D(model_busbw_factor(op, 4), want[op]);
            T_EQ_D(model_busbw_factor(op, 1), 0);
        }
        T_EQ_D(model_busbw_factor(COLL_ALL_REDUCE, 8), 1.75);
        T_EQ_D(model_busbw_factor(COLL_ALL_GATHER, 8), 0.875);
    }

    T_CASE("coll-3.5", "busy-poll rule: unpaced up to 4x the CPUs, paced up to the CPUs, else 0");
    T_EQ_D(xport_tcp_busy_s(2, 2, 0), 100e-6);
    T_EQ_D(xport_tcp_busy_s(4, 2, 0), 100e-6);
    T_EQ_D(xport_tcp_busy_s(8, 2, 0), 100e-6);
    T_EQ_D(xport_tcp_busy_s(9, 2, 0), 0.0);
    T_EQ_D(xport_tcp_busy_s(16, 2, 0), 0.0);
    T_EQ_D(xport_tcp_busy_s(2, 2, 1), 100e-6);
    T_EQ_D(xport_tcp_busy_s(4, 2, 1), 0.0);
    T_EQ_D(xport_tcp_busy_s(16, 16, 1), 100e-6);
    T_EQ_D(xport_tcp_busy_s(2, -1, 0), 0.0);    /* sysconf failed: sleep */

    T_CASE("coll-3.6", "piece rule: 128 KiB for the unpaced ring and Rabenseifner all-reduce "
           "with more ranks than CPUs, else 0 (the default)");
    {
        static const struct { int kind, algo, op, k; long cpus; int paced; size_t want; } rows[] = {
            { COLL_TCP, COLL_RING, COLL_ALL_REDUCE, 2, 2, 0, 0 },
            { COLL_TCP, COLL_RING, COLL_ALL_REDUCE, 3, 2, 0, 128u << 10 },
            { COLL_TCP, COLL_RING, COLL_ALL_REDUCE, 8, 2, 0, 128u << 10 },
            { COLL_TCP, COLL_RABENSEIFNER, COLL_ALL_REDUCE, 4, 2, 0, 128u << 10 },
            { COLL_TCP, COLL_RABENSEIFNER, COLL_ALL_REDUCE, 2, 2, 0, 0 },
            { COLL_TCP, COLL_RING, COLL_ALL_REDUCE, 16, 16, 0, 0 },
            { COLL_TCP, COLL_RING, COLL_ALL_REDUCE, 17, 16, 0, 128u << 10 },
            { COLL_TCP, COLL_RING, COLL_ALL_REDUCE, 8, 2, 1, 0 },        /* paced */
            { COLL_TCP, COLL_RD, COLL_ALL_REDUCE, 8, 2, 0, 0 },
            { COLL_TCP, COLL_TREE, COLL_ALL_REDUCE, 8, 2, 0, 0 },
            { COLL_TCP, COLL_STUDENT, COLL_ALL_REDUCE, 8, 2, 0, 0 },
            { COLL_TCP, COLL_RING, COLL_REDUCE_SCATTER, 8, 2, 0, 0 },
            { COLL_TCP, COLL_RING, COLL_BROADCAST, 8, 2, 0, 0 },
            { COLL_TCP_CUDA, COLL_RING, COLL_ALL_REDUCE, 8, 2, 0, 0 },
            { COLL_NCCL, COLL_RING, COLL_ALL_REDUCE, 8, 2, 0, 0 },
            { COLL_TCP, COLL_RING, COLL_ALL_REDUCE, 8, -1, 0, 0 },      /* sysconf failed */
            { COLL_TCP, COLL_RING, COLL_ALL_REDUCE, 8, 0, 0, 0 },
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            t_row("%zu: kind %d algo %d op %d K %d cpus %ld paced %d", i, rows[i].kind,
                  rows[i].algo, rows[i].op, rows[i].k, rows[i].cpus, rows[i].paced);
            T_EQ_U(coll_piece_rule(rows[i].kind, rows[i].algo, rows[i].op, rows[i].k,
                                   rows[i].cpus, rows[i].paced), rows[i].want);
        }
        t_row("%s", "");
    }

    T_CASE("coll-3.7", "ranks that disagree on the piece (128K, 1M, 8 B, 4K): the ring "
           "all-reduce's sums bit-identical to one piece, the same bytes on every link");
    for (int k = 3; k <= MAXK; k += 5) {
        size_t n = 150001;      /* f32: a chunk of 200 KiB at K = 3, 75 KiB at 8 */
        uint64_t out[MAXK], in[MAXK];
        unsigned char *ref[MAXK] = { NULL };
        T_EQ_I(run(jobs, k, COLL_ALL_REDUCE, n, DTYPE_F32, 0, 0, 1.0, 77), 0);
        T_TRUE(all_ok(jobs, k));
        for (int r = 0; r < k; r++) {
            out[r] = jobs[r].out;
            in[r] = jobs[r].in;
            ref[r] = jobs[r].buf;
            jobs[r].buf = NULL;
        }
        free_jobs(jobs, k);
        T_EQ_I(run(jobs, k, COLL_ALL_REDUCE, n, DTYPE_F32, 0, PIECE_MIXED, 1.0, 77), 0);
        T_TRUE(all_ok(jobs, k));
        for (int r = 0; r < k; r++) {
            t_row("K %d rank %d piece %zu", k, r, jobs[r].piece);
            T_TRUE(ref[r] && memcmp(jobs[r].buf, ref[r], n * 4) == 0);
            T_TRUE(memcmp(jobs[r].buf, jobs[0].buf, n * 4) == 0);
            T_EQ_U(jobs[r].out, out[r]);
            T_EQ_U(jobs[r].in, in[r]);
            free(ref[r]);
        }
        t_row("%s", "");
        free_jobs(jobs, k);
    }
    T_END();
    return t_done();
}
