/* test_ring.c -- the ring all-reduce (common/coll/ring.c) and its TCP
 * transport (common/coll/xport_tcp.c), without the launcher.
 *
 * K ranks run as threads of this process, each with its own link (counters)
 * and transport, wired into a ring by socketpairs (xport_tcp_attach) or by
 * loopback listeners and the real HELLO exchange (xport_tcp_open). Ids:
 * ring-1.x the algorithm (chunk bounds, sums against the closed form and
 * against the ring's own summation order, bit-identical ranks, the two
 * phases alone, pieces, bytes moved); ring-2.x one transport facing a fake
 * neighbour played by the test: every kind of bad frame, a closed or
 * silent left, an ABORT to relay, a closed right (RELIABILITY.md, "ring
 * only").
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll/ring.h"
#include "coll/xport_tcp.h"
#include "check.h"
#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "wire/link.h"
#include "wire/net.h"
#include "wire/proto.h"
#include "base/rng.h"
#include "base/vec.h"

#define MAXK 8
#define T_S 0.6                 /* --timeout of the fault cases */
#define WATCHDOG (3 * T_S + 10) /* a bound on "no hang", never a timing claim */
#define LONG_T 30.0             /* --timeout where the case must not wait for it */

enum op { OP_ALLREDUCE, OP_RS, OP_AG };
enum fill { FILL_SMALL, FILL_RANDOM, FILL_OWN_CHUNK };

struct job {
    int rank, world, dtype;
    size_t n, piece;
    int left_fd, right_fd;      /* attach: the sockets; open: -1 */
    int lfd;                    /* open: the data listener */
    const struct proto_peer *peers;
    enum op op;
    enum fill fill;
    int rounds;
    unsigned char *buf;
    struct link link;
    int rc;
    char err[ERR_LEN];
};

/* The small integers every check can sum exactly, in f32 too. */
static double small_value(int r, size_t i)
{
    return (double)((int)((r * 7 + i * 3) % 17) - 8);
}

static double random_value(int r, size_t i, uint64_t round)
{
    struct rng g;
    rng_seed(&g, ((uint64_t)r << 40) ^ ((uint64_t)i << 8) ^ round);
    return rng_normal(&g) * 100.0;
}

static void fill(struct job *j, uint64_t round)
{
    size_t lo, hi;

    memset(j->buf, 0, j->n * dtype_size(j->dtype) + 1);
    ring_chunk(j->n, j->world, j->rank, &lo, &hi);
    for (size_t i = 0; i < j->n; i++) {
        double v = j->fill == FILL_RANDOM ? random_value(j->rank, i, round)
                                          : small_value(j->rank, i);
        if (j->fill == FILL_OWN_CHUNK && (i < lo || i >= hi))
            continue;           /* all-gather: only the own chunk is input */
        vec_set(j->buf, i, j->dtype, v);
    }
}

static struct proto_peer fake_peers[MAXK];

static void peers_init(void)
{
    for (int r = 0; r < MAXK; r++) {
        fake_peers[r].port = (uint16_t)(41000 + r);
        snprintf(fake_peers[r].addr, sizeof fake_peers[r].addr, "127.0.0.1");
        fake_peers[r].addr_len = 9;
    }
}

static void *rank_main(void *arg)
{
    struct job *j = arg;
    struct xport_tcp_cfg cfg;
    struct xport_plan plan;
    struct xport *t = NULL;
    struct ring ring;
    int rc, fds[2] = { j->right_fd, j->left_fd };   /* ring_plan's order */

    memset(&cfg, 0, sizeof cfg);
    cfg.rank = j->rank;
    cfg.world = j->world;
    cfg.lfd = j->lfd;
    cfg.peers = j->peers ? j->peers : fake_peers;
    if (j->world > 1)
        ring_plan(j->rank, j->world, &plan);
    cfg.plan = &plan;
    cfg.hello = (struct proto_hello){ j->n, (uint32_t)j->dtype, 2, 7, 1024 };
    cfg.link = &j->link;
    cfg.timeout = 10.0;
    link_init(&j->link, 0, 0);
    if (j->world == 1)
        rc = 0;
    else if (j->left_fd >= 0)
        rc = xport_tcp_attach(&t, &cfg, fds, j->err);
    else
        rc = xport_tcp_open(&t, &cfg, j->err);
    if (rc == 0)
        rc = ring_init(&ring, t, j->rank, j->world, j->piece);
    for (int k = 0; rc == 0 && k < j->rounds; k++) {
        if (k > 0)
            fill(j, (uint64_t)k);
        if (j->op == OP_ALLREDUCE)
            rc = ring_allreduce(&ring, j->buf, j->n, j->dtype, j->err);
        else if (j->op == OP_RS)
            rc = ring_reduce_scatter(&ring, j->buf, j->n, j->dtype, j->err);
        else
            rc = ring_all_gather(&ring, j->buf, j->n, j->dtype, j->err);
    }
    if (rc == 0 || t)
        ring_destroy(&ring);
    xport_close(t);
    j->rc = rc;
    return NULL;
}

/* run_ring: K threads on a socketpair ring; jobs[] filled in. */
static int run_ring(struct job *jobs, int k, size_t n, int dtype, enum op op, enum fill f,
                    size_t piece, int rounds)
{
    pthread_t th[MAXK];
    int sp[MAXK][2];

    for (int r = 0; r < k; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r].rank = r;
        jobs[r].world = k;
        jobs[r].dtype = dtype;
        jobs[r].n = n;
        jobs[r].piece = piece;
        jobs[r].op = op;
        jobs[r].fill = f;
        jobs[r].rounds = rounds;
        jobs[r].lfd = -1;
        jobs[r].buf = malloc(n * dtype_size(dtype) + 1);
        if (!jobs[r].buf)
            return -ENOMEM;
        fill(&jobs[r], 0);
        if (k > 1 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[r]) != 0)
            return -errno;
    }
    for (int r = 0; r < k; r++) {
        jobs[r].right_fd = k > 1 ? sp[r][0] : -1;
        jobs[r].left_fd = k > 1 ? sp[(r + k - 1) % k][1] : -1;
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
        jobs[r].buf = NULL;
    }
}

/* The sum over ranks of element i, in the ring's order for chunk c:
 * rank c+1 first, then c+2, ..., c (ring.c, DETERMINISM). */
static double ring_order_sum(int k, size_t n, size_t i, int dtype, enum fill f, uint64_t round)
{
    size_t lo, hi;
    int c = 0;

    for (int q = 0; q < k; q++) {
        ring_chunk(n, k, q, &lo, &hi);
        if (i >= lo && i < hi)
            c = q;
    }
    if (dtype == DTYPE_F32) {
        float acc = 0.0f;
        for (int s = 1; s <= k; s++) {
            int r = (c + s) % k;
            float v = (float)(f == FILL_RANDOM ? random_value(r, i, round) : small_value(r, i));
            acc = s == 1 ? v : acc + v;
        }
        return acc;
    }
    double acc = 0.0;
    for (int s = 1; s <= k; s++) {
        int r = (c + s) % k;
        double v = f == FILL_RANDOM ? random_value(r, i, round) : small_value(r, i);
        acc = s == 1 ? v : acc + v;
    }
    return acc;
}

/* check_allreduce: every rank ok, equal to the expected sums, and all
 * ranks bit-identical. Returns the number of wrong elements. */
static size_t check_allreduce(struct job *jobs, int k, enum fill f, uint64_t round)
{
    size_t n = jobs[0].n, es = dtype_size(jobs[0].dtype), wrong = 0;

    for (int r = 0; r < k; r++) {
        if (jobs[r].rc != 0) {
            T_EQ_I(jobs[r].rc, 0);
            printf("     rank %d: %s\n", r, jobs[r].err);
            return n ? n : 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        double want = f == FILL_RANDOM ? ring_order_sum(k, n, i, jobs[0].dtype, f, round) : 0.0;
        if (f == FILL_SMALL)
            for (int r = 0; r < k; r++)
                want += small_value(r, i);
        if (vec_get(jobs[0].buf, i, jobs[0].dtype) != want) {
            if (wrong++ == 0)
                printf("     K=%d n=%zu %s: element %zu = %.17g, want %.17g\n", k, n,
                       dtype_name(jobs[0].dtype), i, vec_get(jobs[0].buf, i, jobs[0].dtype),
                       want);
        }
    }
    for (int r = 1; r < k; r++)
        if (memcmp(jobs[r].buf, jobs[0].buf, n * es) != 0) {
            printf("     K=%d n=%zu: rank %d differs from rank 0\n", k, n, r);
            wrong++;
        }
    return wrong;
}

/* ---------------------------------------------------------- fake peers */

/* A transport under test: rank 1 of 4, whose left (rank 0) and right
 * (rank 2) are socket ends the test holds; rank 3 is further away. */
struct single {
    struct xport *t;
    struct link link;
    int left_end, right_end;    /* the test's ends: write as rank 0, read as rank 2 */
    struct ring ring;
};

static int single_open(struct single *s, double timeout)
{
    struct xport_tcp_cfg cfg;
    struct xport_plan plan;
    int a[2], b[2], fds[2];
    char err[ERR_LEN];

    memset(s, 0, sizeof *s);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b) != 0)
        return -errno;
    memset(&cfg, 0, sizeof cfg);
    cfg.rank = 1;
    cfg.world = 4;
    cfg.peers = fake_peers;
    ring_plan(1, 4, &plan);
    cfg.plan = &plan;
    cfg.link = &s->link;
    cfg.timeout = timeout;
    link_init(&s->link, 0, 0);
    s->left_end = a[0];
    s->right_end = b[1];
    fds[0] = b[0];              /* the right, then the left: ring_plan's order */
    fds[1] = a[1];
    if (xport_tcp_attach(&s->t, &cfg, fds, err) != 0)
        return -1;
    return ring_init(&s->ring, s->t, 1, 4, 0);
}

static void single_close(struct single *s)
{
    ring_destroy(&s->ring);
    xport_close(s->t);
    if (s->left_end >= 0)
        close(s->left_end);
    close(s->right_end);
}

/* put_frame: a header saying `hlen` payload bytes, then the `len` bytes
 * at pay, written as the fake left. */
static void put_part(int fd, uint16_t type, uint32_t rank, uint64_t step, uint64_t aux,
                     uint64_t hlen, const void *pay, size_t len)
{
    uint8_t h[PROTO_HEADER_SIZE];
    struct proto_header ph = proto_header_make(type, rank, 4, step, aux, hlen);
    proto_header_encode(&ph, h);
    if (write(fd, h, sizeof h) != (ssize_t)sizeof h || (len && write(fd, pay, len) != (ssize_t)len))
        printf("     put_frame: short write\n");
}

static void put_frame(int fd, uint16_t type, uint32_t rank, uint64_t step, uint64_t aux,
                      const void *pay, size_t len)
{
    put_part(fd, type, rank, step, aux, len, pay, len);
}

/* get_frame: read one frame the transport sent to its right (or left).
 * Returns 0 and the header; payload into pay (cap bytes). */
static int get_frame(int fd, struct proto_header *h, void *pay, size_t cap)
{
    struct proto_limits lim = { cap, 4, 0 };
    uint8_t hb[PROTO_HEADER_SIZE];
    int rc = net_recv_all(fd, hb, sizeof hb, NULL, 2.0, "test", NULL);

    if (rc == 0)
        rc = proto_header_decode(hb, &lim, h);
    if (rc == 0)
        rc = net_recv_all(fd, pay, (size_t)h->length, NULL, 2.0, "test", NULL);
    if (rc == 0 && h->length < cap)
        ((char *)pay)[h->length] = '\0';
    return rc;
}

static int get_frame(int fd, struct proto_header *h, void *pay, size_t cap);

/* late: a left neighbour that was only slow. It waits until the rank
 * under test has timed out and sent its suspicion of rank 0 to the right
 * (our CHUNK, finished, then ABORT(lost 0): the test reads them as rank
 * 2), then finishes its own chunk (8 more bytes) and sends its ABORT(lost
 * rank 3). No sleeps: each side waits for the other's bytes. */
struct late {
    int left_fd, right_fd;
    const char *news;
    int saw_suspicion;
};

static void *late_main(void *arg)
{
    struct late *l = arg;
    char pay[PROTO_TEXT_MAX + 1];
    struct proto_header h;
    double rest = 0;

    while (get_frame(l->right_fd, &h, pay, sizeof pay) == 0) {
        if (h.type == PROTO_ABORT) {
            l->saw_suspicion = h.aux == 0 && strstr(pay, "lost rank 0") != NULL;
            break;
        }
    }
    if (write(l->left_fd, &rest, sizeof rest) != (ssize_t)sizeof rest)
        printf("     late: short write\n");
    put_frame(l->left_fd, PROTO_ABORT, 0, 0, 3, l->news, strlen(l->news));
    return NULL;
}

/* The all-reduce of 8 f64 under test: K=4 chunks of 2 elements (16 bytes).
 * Rank 1's first step sends chunk 0 and receives chunk 3 (ring.c's table). */
static int single_allreduce(struct single *s, double *v, char *err)
{
    for (int i = 0; i < 8; i++)
        v[i] = i + 1;
    return ring_allreduce(&s->ring, v, 8, DTYPE_F64, err);
}

/* expect_abort_right: after a failure, the right end holds our first CHUNK
 * (completed) and then an ABORT naming `lost`. */
static void expect_abort_right(struct single *s, int lost, const char *text)
{
    char pay[PROTO_TEXT_MAX + 1];
    struct proto_header h;
    int rc = get_frame(s->right_end, &h, pay, sizeof pay);

    T_EQ_I(rc, 0);
    if (rc != 0)
        return;
    if (h.type == PROTO_CHUNK) {
        T_EQ_U(h.length, 16);           /* completed, all of it */
        rc = get_frame(s->right_end, &h, pay, sizeof pay);
        T_EQ_I(rc, 0);
    }
    T_EQ_U(h.type, PROTO_ABORT);
    T_EQ_U(h.aux, (unsigned)lost);
    T_EQ_U(h.rank, 1);
    T_HAS(pay, text);
}

int main(void)
{
    static const int dtypes[2] = { DTYPE_F32, DTYPE_F64 };
    struct job jobs[MAXK];
    char err[ERR_LEN];

    peers_init();

    T_CASE("ring-1.1", "chunk bounds: contiguous, cover [0,n), sizes differ by <= 1");
    {
        static const size_t ns[] = { 0, 1, 2, 7, 8, 9, 1000, 65539 };
        for (int k = 1; k <= MAXK; k++)
            for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
                size_t lo, hi, prev = 0, mn = SIZE_MAX, mx = 0;
                for (int c = 0; c < k; c++) {
                    ring_chunk(ns[a], k, c, &lo, &hi);
                    T_EQ_U(lo, prev);
                    T_TRUE(hi >= lo);
                    prev = hi;
                    mn = hi - lo < mn ? hi - lo : mn;
                    mx = hi - lo > mx ? hi - lo : mx;
                    if (c > 0) {
                        size_t plo, phi;
                        ring_chunk(ns[a], k, c - 1, &plo, &phi);
                        T_TRUE(phi - plo >= hi - lo);     /* larger ones first */
                    }
                }
                T_EQ_U(prev, ns[a]);
                T_TRUE(mx - mn <= 1);
            }
        size_t lo, hi;
        ring_chunk(10, 4, 0, &lo, &hi);             /* 3 3 2 2 */
        T_EQ_U(hi - lo, 3);
        ring_chunk(10, 4, 3, &lo, &hi);
        T_EQ_U(lo, 8);
        T_EQ_U(hi, 10);
    }

    T_CASE("ring-1.2", "all-reduce = closed-form sum, bit-identical: K 1..8, n 1, K-1, K, K+1, 1000, 2^16+3, f32/f64");
    for (int k = 1; k <= MAXK; k++) {
        size_t ns[6] = { 1, (size_t)k - 1, (size_t)k, (size_t)k + 1, 1000, (1u << 16) + 3 };
        for (int d = 0; d < 2; d++)
            for (int a = 0; a < 6; a++) {
                T_EQ_I(run_ring(jobs, k, ns[a], dtypes[d], OP_ALLREDUCE, FILL_SMALL, 0, 1), 0);
                T_EQ_U(check_allreduce(jobs, k, FILL_SMALL, 0), 0);
                free_jobs(jobs, k);
            }
    }

    T_CASE("ring-1.3", "random data: bit-identical ranks, equal to the sum in the ring's order");
    for (int k = 2; k <= MAXK; k += 3)
        for (int d = 0; d < 2; d++) {
            T_EQ_I(run_ring(jobs, k, 65539, dtypes[d], OP_ALLREDUCE, FILL_RANDOM, 0, 1), 0);
            T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0), 0);
            free_jobs(jobs, k);
        }

    T_CASE("ring-1.4", "reduce-scatter alone: rank r holds the sum of chunk r");
    for (int k = 1; k <= MAXK; k++)
        for (int d = 0; d < 2; d++) {
            size_t n = 1000 + (size_t)k, lo, hi, wrong = 0;
            T_EQ_I(run_ring(jobs, k, n, dtypes[d], OP_RS, FILL_SMALL, 0, 1), 0);
            for (int r = 0; r < k; r++) {
                T_EQ_I(jobs[r].rc, 0);
                ring_chunk(n, k, r, &lo, &hi);
                for (size_t i = lo; i < hi; i++) {
                    double want = 0;
                    for (int q = 0; q < k; q++)
                        want += small_value(q, i);
                    wrong += vec_get(jobs[r].buf, i, dtypes[d]) != want;
                }
            }
            T_EQ_U(wrong, 0);
            free_jobs(jobs, k);
        }

    T_CASE("ring-1.5", "all-gather alone: every rank gets every rank's own chunk");
    for (int k = 1; k <= MAXK; k++)
        for (int d = 0; d < 2; d++) {
            size_t n = 777 + (size_t)k, lo, hi, wrong = 0;
            T_EQ_I(run_ring(jobs, k, n, dtypes[d], OP_AG, FILL_OWN_CHUNK, 0, 1), 0);
            for (int r = 0; r < k; r++) {
                T_EQ_I(jobs[r].rc, 0);
                for (int c = 0; c < k; c++) {
                    ring_chunk(n, k, c, &lo, &hi);
                    for (size_t i = lo; i < hi; i++)
                        wrong += vec_get(jobs[r].buf, i, dtypes[d]) != small_value(c, i);
                }
            }
            T_EQ_U(wrong, 0);
            free_jobs(jobs, k);
        }

    T_CASE("ring-1.6", "tiny staging pieces (1 and 3 elements): same sums");
    {
        static const size_t pieces[] = { 8, 24 };
        for (int p = 0; p < 2; p++)
            for (int k = 2; k <= 5; k++) {
                T_EQ_I(run_ring(jobs, k, 203, DTYPE_F64, OP_ALLREDUCE, FILL_RANDOM, pieces[p], 1), 0);
                T_EQ_U(check_allreduce(jobs, k, FILL_RANDOM, 0), 0);
                free_jobs(jobs, k);
            }
    }

    T_CASE("ring-1.7", "three all-reduces in a row on one ring (step numbers advance)");
    T_EQ_I(run_ring(jobs, 4, 1001, DTYPE_F32, OP_ALLREDUCE, FILL_RANDOM, 64, 3), 0);
    T_EQ_U(check_allreduce(jobs, 4, FILL_RANDOM, 2), 0);
    free_jobs(jobs, 4);

    T_CASE("ring-1.8", "bytes moved per rank: 2(K-1) chunks plus one header per step");
    for (int k = 2; k <= MAXK; k++) {
        size_t n = 4096 + 3, lo, hi;
        T_EQ_I(run_ring(jobs, k, n, DTYPE_F32, OP_ALLREDUCE, FILL_SMALL, 0, 1), 0);
        for (int r = 0; r < k; r++) {
            uint64_t want_out = 0, want_in = 0;
            for (int s = 0; s < k - 1; s++) {
                ring_chunk(n, k, ((r - s - 1) % k + k) % k, &lo, &hi);
                want_out += PROTO_HEADER_SIZE + 4 * (hi - lo);
                ring_chunk(n, k, ((r - s - 2) % k + k) % k, &lo, &hi);
                want_in += PROTO_HEADER_SIZE + 4 * (hi - lo);
                ring_chunk(n, k, ((r - s) % k + k) % k, &lo, &hi);
                want_out += PROTO_HEADER_SIZE + 4 * (hi - lo);
                ring_chunk(n, k, ((r - s - 1) % k + k) % k, &lo, &hi);
                want_in += PROTO_HEADER_SIZE + 4 * (hi - lo);
            }
            T_EQ_U(jobs[r].link.bytes_out, want_out);
            T_EQ_U(jobs[r].link.bytes_in, want_in);
            /* ... which is 2(K-1)/K n elements, give or take the rounding. */
            T_NEAR((double)(want_out - 2 * (k - 1) * PROTO_HEADER_SIZE),
                   2.0 * (k - 1) / k * n * 4, 2.0 * (k - 1) * 4);
        }
        free_jobs(jobs, k);
    }

    T_CASE("ring-1.9", "loopback listeners and HELLO (xport_tcp_open), K = 3 and 2");
    for (int k = 3; k >= 2; k--) {
        struct proto_peer peers[MAXK];
        pthread_t th[MAXK];
        int lfd[MAXK], port;
        memset(peers, 0, sizeof peers);
        for (int r = 0; r < k; r++) {
            T_EQ_I(net_listen("127.0.0.1", 0, &lfd[r], &port, err), 0);
            peers[r].port = (uint16_t)port;
            strcpy(peers[r].addr, "127.0.0.1");
            peers[r].addr_len = 9;
            memset(&jobs[r], 0, sizeof jobs[r]);
            jobs[r] = (struct job){ .rank = r, .world = k, .dtype = DTYPE_F64, .n = 5000,
                                    .left_fd = -1, .right_fd = -1, .lfd = lfd[r],
                                    .peers = peers, .op = OP_ALLREDUCE, .fill = FILL_SMALL,
                                    .rounds = 1 };
            jobs[r].buf = malloc(5000 * 8 + 1);
            fill(&jobs[r], 0);
        }
        for (int r = 0; r < k; r++)
            pthread_create(&th[r], NULL, rank_main, &jobs[r]);
        for (int r = 0; r < k; r++)
            pthread_join(th[r], NULL);
        T_EQ_U(check_allreduce(jobs, k, FILL_SMALL, 0), 0);
        for (int r = 0; r < k; r++)
            close(lfd[r]);
        free_jobs(jobs, k);
    }

    T_CASE("ring-1.10", "K = 1: no transport, the buffer is its own sum");
    {
        struct ring r1;
        double v[3] = { 1.5, -2, 3 };
        T_EQ_I(ring_init(&r1, NULL, 0, 1, 0), 0);
        T_EQ_I(ring_allreduce(&r1, v, 3, DTYPE_F64, err), 0);
        T_EQ_D(v[0], 1.5);
        T_EQ_D(v[2], 3);
        T_EQ_I(ring_allreduce(&r1, v, 3, 99, err), ERR_USAGE);
        ring_destroy(&r1);
        T_EQ_I(ring_init(&r1, NULL, 0, 2, 0), ERR_USAGE);      /* K > 1 needs one */
        T_EQ_I(ring_init(&r1, NULL, 1, 1, 0), ERR_USAGE);
    }

    /* ------------------------------------------- one rank, fake neighbours */
    {
        static const struct {
            const char *id, *name, *want;
            uint16_t type;
            uint32_t rank;
            uint64_t step, aux, len;
        } bad[] = {
            { "ring-2.1", "a CHUNK from a non-neighbour refused", "from rank 3", PROTO_CHUNK, 3, 0, 3, 16 },
            { "ring-2.2", "a wrong chunk index refused", "chunk 1, expected chunk 3", PROTO_CHUNK, 0, 0, 1, 16 },
            { "ring-2.3", "a chunk of the wrong size refused", "24 bytes for chunk 3, expected 16", PROTO_CHUNK, 0, 0, 3, 24 },
            { "ring-2.4", "a chunk for the wrong step refused", "CHUNK for step 5", PROTO_CHUNK, 0, 5, 3, 16 },
            { "ring-2.5", "a frame of the wrong type refused", "PUSH instead of CHUNK", PROTO_PUSH, 0, 0, 3, 16 + 16 },
            { "ring-2.6", "an index out of range refused", "chunk 4, expected chunk 3", PROTO_CHUNK, 0, 0, 4, 16 },
        };
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            struct single s;
            double v[8], pay[4] = { 0 };
            T_CASE(bad[b].id, bad[b].name);
            T_EQ_I(single_open(&s, T_S), 0);
            put_frame(s.left_end, bad[b].type, bad[b].rank, bad[b].step, bad[b].aux, pay,
                      (size_t)bad[b].len);
            T_TRUE(single_allreduce(&s, v, err) != 0);
            T_HAS(err, "lost rank 0 (127.0.0.1:41000): sent a bad frame at step 0");
            T_HAS(err, bad[b].want);
            expect_abort_right(&s, 0, "sent a bad frame");
            /* The transport stays failed, with the same line. */
            char again[ERR_LEN];
            T_TRUE(single_allreduce(&s, v, again) != 0);
            T_STR(again, err);
            single_close(&s);
        }
    }

    T_CASE("ring-2.7", "bad magic from the left refused before anything is read");
    {
        struct single s;
        double v[8];
        uint8_t junk[PROTO_HEADER_SIZE];
        memset(junk, 'x', sizeof junk);
        T_EQ_I(single_open(&s, T_S), 0);
        T_EQ_I(write(s.left_end, junk, sizeof junk), (int)sizeof junk);
        T_EQ_I(single_allreduce(&s, v, err), ERR_PROTO_MAGIC);
        T_HAS(err, "sent a bad frame at step 0: bad frame magic");
        expect_abort_right(&s, 0, "lost rank 0");
        single_close(&s);
    }

    T_CASE("ring-2.8", "left closes mid-chunk: lost rank 0, chunk finished, ABORT relayed right");
    {
        struct single s;
        double v[8], pay[1] = { 1.0 };
        T_EQ_I(single_open(&s, LONG_T), 0);       /* EOF needs no timeout to be seen */
        put_part(s.left_end, PROTO_CHUNK, 0, 0, 3, 16, pay, 8);  /* 8 of 16 bytes */
        s.left_end = (close(s.left_end), -1);
        double t0 = clock_now();
        T_EQ_I(single_allreduce(&s, v, err), ERR_EOF);
        T_LE(clock_now() - t0, LONG_T / 2);                         /* no waiting */
        T_STR(err, "lost rank 0 (127.0.0.1:41000): connection closed");
        expect_abort_right(&s, 0, "lost rank 0 (127.0.0.1:41000): connection closed (seen by rank 1)");
        single_close(&s);
    }

    T_CASE("ring-2.9", "ABORT from the left: reported, relayed right after the chunk");
    {
        struct single s;
        double v[8];
        const char *news = "lost rank 3 (127.0.0.1:41003): connection closed (seen by rank 0)";
        T_EQ_I(single_open(&s, T_S), 0);
        put_frame(s.left_end, PROTO_ABORT, 0, 0, 3, news, strlen(news));
        s.left_end = (close(s.left_end), -1);
        T_EQ_I(single_allreduce(&s, v, err), -ECONNABORTED);
        T_STR(err, "rank 0 reported: lost rank 3 (127.0.0.1:41003): connection closed (seen by rank 0)");
        expect_abort_right(&s, 3, news);
        single_close(&s);
    }

    T_CASE("ring-2.10", "news of the right's loss is not sent to the right");
    {
        struct single s;
        double v[8];
        char text[PROTO_TEXT_MAX + 1];
        struct proto_header h;
        const char *news = "lost rank 2 (127.0.0.1:41002): connection closed (seen by rank 3)";
        T_EQ_I(single_open(&s, T_S), 0);
        put_frame(s.left_end, PROTO_ABORT, 0, 0, 2, news, strlen(news));
        s.left_end = (close(s.left_end), -1);
        T_EQ_I(single_allreduce(&s, v, err), -ECONNABORTED);
        T_HAS(err, "rank 0 reported: lost rank 2");
        T_EQ_I(get_frame(s.right_end, &h, text, sizeof text), 0);   /* our CHUNK... */
        T_EQ_U(h.type, PROTO_CHUNK);
        T_EQ_I(recv(s.right_end, text, 1, MSG_DONTWAIT), -1);      /* ...and no ABORT */
        single_close(&s);
    }

    T_CASE("ring-2.11", "a silent left: caught by --timeout, named, within 1.5 T");
    {
        struct single s;
        double v[8];
        T_EQ_I(single_open(&s, T_S), 0);
        double t0 = clock_now();
        T_EQ_I(single_allreduce(&s, v, err), ERR_TIMEOUT);
        double dt = clock_now() - t0;
        T_LE(T_S, dt);                                  /* the timeout, not sooner */
        T_LE(dt, WATCHDOG);
        T_HAS(err, "lost rank 0 (127.0.0.1:41000): no progress for 0.6 s");
        expect_abort_right(&s, 0, "no progress");
        single_close(&s);
    }

    T_CASE("ring-2.12", "a suspicion corrected: the slow left sends ABORT while we listen");
    {
        struct single s;
        struct late l;
        pthread_t th;
        double v[8], pay[1] = { 0 };
        char text[PROTO_TEXT_MAX + 1];
        struct proto_header h;
        T_EQ_I(single_open(&s, T_S), 0);
        /* Half of the chunk, then silence: we time out suspecting rank 0,
         * which then finishes its chunk and reports rank 3 while we listen. */
        put_part(s.left_end, PROTO_CHUNK, 0, 0, 3, 16, pay, 8);
        l.left_fd = s.left_end;
        l.right_fd = s.right_end;
        l.news = "lost rank 3 (127.0.0.1:41003): no progress (seen by rank 0)";
        l.saw_suspicion = 0;
        pthread_create(&th, NULL, late_main, &l);
        T_EQ_I(single_allreduce(&s, v, err), ERR_TIMEOUT);
        pthread_join(th, NULL);
        T_TRUE(l.saw_suspicion);                                   /* our suspicion... */
        T_HAS(err, "rank 0 reported: lost rank 3 (127.0.0.1:41003)");
        T_EQ_I(get_frame(s.right_end, &h, text, sizeof text), 0);  /* ...corrected */
        T_EQ_U(h.type, PROTO_ABORT);
        T_EQ_U(h.aux, 3);
        T_STR(text, l.news);
        single_close(&s);
    }

    T_CASE("ring-2.13", "right closed: lost rank 2, ABORT sent back to the left");
    {
        struct single s;
        double v[8], pay[2] = { 0 };
        char text[PROTO_TEXT_MAX + 1];
        struct proto_header h;
        T_EQ_I(single_open(&s, T_S), 0);
        close(s.right_end);
        s.right_end = open("/dev/null", O_RDONLY);
        put_frame(s.left_end, PROTO_CHUNK, 0, 0, 3, pay, 16);
        T_TRUE(single_allreduce(&s, v, err) != 0);
        T_HAS(err, "lost rank 2 (127.0.0.1:41002)");
        T_EQ_I(get_frame(s.left_end, &h, text, sizeof text), 0);
        T_EQ_U(h.type, PROTO_ABORT);
        T_EQ_U(h.aux, 2);
        T_HAS(text, "lost rank 2");
        single_close(&s);
    }

    T_CASE("ring-2.14", "xport_abort: this rank's own failure told to both neighbours");
    {
        struct single s;
        char text[PROTO_TEXT_MAX + 1];
        struct proto_header h;
        double v[8];
        T_EQ_I(single_open(&s, T_S), 0);
        T_EQ_I(xport_abort(s.t, "step 3: NaN in the gradient"), 0);
        T_EQ_I(get_frame(s.right_end, &h, text, sizeof text), 0);
        T_EQ_U(h.type, PROTO_ABORT);
        T_EQ_U(h.aux, 1);
        T_STR(text, "rank 1 failed: step 3: NaN in the gradient");
        T_EQ_I(get_frame(s.left_end, &h, text, sizeof text), 0);
        T_EQ_U(h.type, PROTO_ABORT);
        T_TRUE(single_allreduce(&s, v, err) != 0);
        T_HAS(err, "rank 1 failed");
        single_close(&s);
    }

    return t_done();
}
