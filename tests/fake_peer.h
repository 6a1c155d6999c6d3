/* fake_peer.h -- for the tests of the partner transports (test_rd.c,
 * test_ring.c): ranks run as threads of the test, and the test plays a
 * rank's partner on a socket end, writing and reading frames by hand.
 *
 * What it holds:
 *   - the input values every check can sum (small_value exactly, in f32
 *     too; random_value for the order of the sums), and the peer table
 *     (fake_peers: addresses the attached transports only print);
 *   - struct rank_job, one rank of a K-rank job run as a thread: its
 *     transport set up by job_connect (attached to socketpairs, or opened
 *     on a loopback listener with the real HELLO: listeners_open,
 *     over_listeners), the threads started and joined by threads_run, the
 *     sums checked by check_allreduce;
 *   - struct single, one transport under test (rank 1 of 4) whose two
 *     partners are socket ends the test holds, and the frames the test
 *     writes (put_part, put_frame) and reads (get_frame, expect_abort,
 *     expect_news); a late partner (struct late, with_late);
 *   - the fault cases every partner transport faces alike (bad_frames,
 *     bad_magic, closed_mid_frame, abort_then_close, silent_partner), each
 *     opening its case with the id it is given.
 *
 * The all-reduce algorithms' tests run their jobs through tests/
 * coll_check.h, which builds on this rig.
 *
 * Static functions in a header: include it once per test program, after
 * check.h. The program defines nothing for it; what differs between the
 * algorithms (the plan, the summation order, the step) stays in each test.
 */
#ifndef FAKE_PEER_H
#define FAKE_PEER_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/rng.h"
#include "base/vec.h"
#include "coll/xport_tcp.h"
#include "wire/auth.h"
#include "wire/link.h"
#include "wire/net.h"
#include "wire/proto.h"

#ifndef MAXK
#define MAXK 8                  /* a test may define more before it includes this */
#endif
#define T_S 0.6                 /* --timeout of the fault cases */
#define WATCHDOG (3 * T_S + 10) /* a bound on "no hang", never a timing claim */
#define LONG_T 30.0             /* --timeout where the case must not wait for it */
#define FAKE_PARTNERS MAXK      /* connections of one rank, at the most */
#define FAKE_FN __attribute__((unused)) static  /* not every test uses all */

/* ------------------------------------------------------------- values */

enum fill { FILL_SMALL, FILL_RANDOM, FILL_OWN_CHUNK };

/* The small integers every check can sum exactly, in f32 too. */
FAKE_FN double small_value(int r, size_t i)
{
    return (double)((int)((r * 7 + i * 3) % 17) - 8);
}

/* Rank r's element i: random, with a seed per (r, i, seed). */
FAKE_FN double random_value(int r, size_t i, uint64_t seed)
{
    struct rng g;
    rng_seed(&g, ((uint64_t)r << 40) ^ ((uint64_t)i << 8) ^ seed);
    return rng_normal(&g) * 100.0;
}

/* The peer table the transports are given: 127.0.0.1, ports from `base`
 * (never dialled by attached transports; they appear in messages). */
static struct proto_peer fake_peers[MAXK];

FAKE_FN void peers_init(int base)
{
    for (int r = 0; r < MAXK; r++) {
        fake_peers[r].port = (uint16_t)(base + r);
        snprintf(fake_peers[r].addr, sizeof fake_peers[r].addr, "127.0.0.1");
        fake_peers[r].addr_len = 9;
    }
}

/* job_connect: rank `rank` of `world`'s transport for `plan`: attached to
 * fds (one per plan peer, in plan order) when lfd < 0, else opened on the
 * listener lfd with the HELLO of a job of n dtype elements. peers NULL:
 * fake_peers. Resets *link. World 1: no transport, 0. */
FAKE_FN int job_connect(struct xport **x, const struct xport_plan *plan, int rank, int world,
                        size_t n, int dtype, int lfd, const struct proto_peer *peers,
                        const int *fds, struct link *link, double timeout, char *err)
{
    struct xport_tcp_cfg cfg;

    memset(&cfg, 0, sizeof cfg);
    cfg.rank = rank;
    cfg.world = world;
    cfg.lfd = lfd;
    cfg.peers = peers ? peers : fake_peers;
    cfg.plan = plan;
    cfg.hello = (struct proto_hello){ n, (uint32_t)dtype, 2, 7, 1024, 0, 0 };
    cfg.link = link;
    cfg.timeout = timeout;
    link_init(link, 0, 0);
    if (world == 1)
        return 0;
    return lfd < 0 ? xport_tcp_attach(x, &cfg, fds, err) : xport_tcp_open(x, &cfg, err);
}

/* threads_run: fn(arg + r * size) for r < k, each in a thread; joined. */
FAKE_FN void threads_run(void *(*fn)(void *), void *arg, size_t size, int k)
{
    pthread_t th[MAXK];
    for (int r = 0; r < k; r++)
        pthread_create(&th[r], NULL, fn, (char *)arg + (size_t)r * size);
    for (int r = 0; r < k; r++)
        pthread_join(th[r], NULL);
}

/* --------------------------------------------------- a job of K threads */

struct rank_job {
    int rank, world, dtype;
    size_t n, piece;
    int fds[FAKE_PARTNERS];     /* attach: one per plan peer, in plan order */
    int lfd;                    /* open: the data listener; attach: -1 */
    const struct proto_peer *peers;     /* NULL: fake_peers */
    int op;                     /* what the rank does: the test's own codes */
    enum fill fill;
    int rounds;
    unsigned char *buf;
    double gathered[MAXK * 2];  /* a gather's result: two doubles a rank */
    struct link link;
    int rc;
    char err[ERR_LEN];
};

/* jobs_init: k ranks of a job of n dtype elements, buf allocated (n
 * elements and a guard byte) and filled for round 0 by fill_fn; on the
 * listeners lfds (with their peers), or, lfds NULL, with no connection
 * yet (fds -1: the test makes them). */
FAKE_FN int jobs_init(struct rank_job *jobs, int k, size_t n, int dtype, int op, enum fill f,
                      size_t piece, int rounds, const int *lfds,
                      const struct proto_peer *peers,
                      void (*fill_fn)(struct rank_job *j, uint64_t round))
{
    for (int r = 0; r < k; r++) {
        struct rank_job *j = &jobs[r];
        *j = (struct rank_job){ .rank = r, .world = k, .dtype = dtype, .n = n,
                                .piece = piece, .lfd = lfds ? lfds[r] : -1,
                                .peers = peers, .op = op, .fill = f, .rounds = rounds };
        for (int i = 0; i < FAKE_PARTNERS; i++)
            j->fds[i] = -1;
        j->buf = malloc(n * dtype_size(dtype) + 1);
        if (!j->buf)
            return -ENOMEM;
        fill_fn(j, 0);
    }
    return 0;
}

FAKE_FN void free_jobs(struct rank_job *jobs, int k)
{
    for (int r = 0; r < k; r++) {
        free(jobs[r].buf);
        jobs[r].buf = NULL;
    }
}

/* check_allreduce: every rank ok, equal to the expected sums (the closed
 * form for FILL_SMALL, order_sum(k, n, i, dtype, round) for FILL_RANDOM:
 * the algorithm's own summation order), and all ranks bit-identical.
 * Returns the number of wrong elements. */
typedef double (*order_sum_fn)(int k, size_t n, size_t i, int dtype, uint64_t round);

FAKE_FN size_t check_allreduce(struct rank_job *jobs, int k, enum fill f, uint64_t round,
                               order_sum_fn order_sum)
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
        double want = 0.0;
        if (f == FILL_RANDOM)
            want = order_sum(k, n, i, jobs[0].dtype, round);
        else
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

/* A test's job runner: k ranks doing op (the test's code; 0 an
 * all-reduce) on n dtype elements, filled with f, `rounds` times; on the
 * listeners lfds (with their peers), or on socketpairs when lfds is NULL. */
typedef int (*run_fn)(struct rank_job *jobs, int k, size_t n, int dtype, enum fill f,
                      size_t piece, int rounds, int op, const int *lfds,
                      const struct proto_peer *peers);

/* jobs_pair_plans: the ranks' peer tables (xport.h: pl[r] is rank r's,
 * as its algorithm's *_plan gives it) connected by socketpairs: jobs[r].
 * fds[i] talks to pl[r].peer[i]. 0, or -1 when a peer does not list the
 * rank back or a socketpair fails. */
FAKE_FN int jobs_pair_plans(struct rank_job *jobs, int k, const struct xport_plan *pl)
{
    for (int r = 0; r < k; r++)
        for (int i = 0; i < pl[r].npeers; i++) {
            int q = pl[r].peer[i].rank, sp[2], back = -1;
            if (q < r)
                continue;       /* made from q's side */
            for (int j = 0; j < pl[q].npeers; j++)
                if (pl[q].peer[j].rank == r)
                    back = j;
            if (back < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
                return -1;
            jobs[r].fds[i] = sp[0];
            jobs[q].fds[back] = sp[1];
        }
    return 0;
}

/* listeners_open: k loopback listeners, their fds in lfd[], their
 * addresses in peers[] (for xport_tcp_open). 0 or the first error. */
FAKE_FN int listeners_open(int k, int *lfd, struct proto_peer *peers, char *err)
{
    memset(peers, 0, sizeof *peers * (size_t)k);
    for (int r = 0; r < k; r++) {
        int port, rc = net_listen("127.0.0.1", 0, &lfd[r], &port, err);
        if (rc != 0)
            return rc;
        peers[r].port = (uint16_t)port;
        strcpy(peers[r].addr, "127.0.0.1");
        peers[r].addr_len = 9;
    }
    return 0;
}

/* over_listeners: an all-reduce of k ranks that find each other on
 * loopback listeners with HELLO (xport_tcp_open): sums right, identical. */
FAKE_FN void over_listeners(int k, run_fn run, enum fill f, order_sum_fn order_sum)
{
    struct rank_job jobs[MAXK];
    struct proto_peer peers[MAXK];
    int lfd[MAXK];
    char err[ERR_LEN];

    T_EQ_I(listeners_open(k, lfd, peers, err), 0);
    T_EQ_I(run(jobs, k, 5000, DTYPE_F64, f, 0, 1, 0, lfd, peers), 0);
    T_EQ_U(check_allreduce(jobs, k, f, 0, order_sum), 0);
    for (int r = 0; r < k; r++)
        close(lfd[r]);
    free_jobs(jobs, k);
}

/* -------------------------------------------- one rank, fake partners */

/* A transport under test: rank 1 of 4 attached to two socketpairs whose
 * other ends the test holds. end0 plays rank 0 (the partner of round 1,
 * or the left); end_far the other partner (rank 3, or the right, rank 2),
 * where news of a loss is relayed; far_chunk: the bytes of the CHUNK the
 * rank may send end_far before its ABORT (0: none). */
struct single {
    struct xport *x;
    struct link link;
    int end0, end_far;
    size_t far_chunk;
    /* Set by the test's open: the all-reduce of 8 f64 (1..8) by the
     * algorithm under test, and its close (the transport's too). */
    int (*allreduce)(struct single *s, double *v, char *err);
    void (*close)(struct single *s);
};

/* The test's open: a single with a timeout of `timeout` s; 0 or an error. */
typedef int (*single_open_fn)(struct single *s, double timeout);

/* single_attach: s's transport for plan (rank 1 of 4), whose peers are
 * far_is_first ? (end_far, end0) : (end0, end_far). */
FAKE_FN int single_attach(struct single *s, const struct xport_plan *plan, int far_is_first,
                          double timeout)
{
    int a[2], b[2], fds[2];
    char err[ERR_LEN];

    memset(s, 0, sizeof *s);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b) != 0)
        return -errno;
    s->end0 = a[0];
    s->end_far = b[0];
    fds[far_is_first] = a[1];
    fds[!far_is_first] = b[1];
    if (job_connect(&s->x, plan, 1, 4, 0, DTYPE_F64, -1, NULL, fds, &s->link, timeout,
                    err) != 0)
        return -1;
    return 0;
}

FAKE_FN void single_detach(struct single *s)
{
    xport_close(s->x);
    if (s->end0 >= 0)
        close(s->end0);
    if (s->end_far >= 0)
        close(s->end_far);
}

/* put_part: a header saying `hlen` payload bytes, then `len` bytes. */
FAKE_FN void put_part(int fd, uint16_t type, uint32_t rank, uint64_t step, uint64_t aux,
                      uint64_t hlen, const void *pay, size_t len)
{
    uint8_t h[PROTO_HEADER_SIZE];
    struct proto_header ph = proto_header_make(type, rank, 4, step, aux, hlen);
    proto_header_encode(&ph, h);
    if (write(fd, h, sizeof h) != (ssize_t)sizeof h || (len && write(fd, pay, len) != (ssize_t)len))
        printf("     put_frame: short write\n");
}

FAKE_FN void put_frame(int fd, uint16_t type, uint32_t rank, uint64_t step, uint64_t aux,
                       const void *pay, size_t len)
{
    put_part(fd, type, rank, step, aux, len, pay, len);
}

/* get_frame: read one frame the transport sent. 0 and the header;
 * payload into pay (cap bytes, NUL-terminated when it fits). */
FAKE_FN int get_frame(int fd, struct proto_header *h, void *pay, size_t cap)
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

/* expect_abort: the next frame on fd (after a CHUNK of chunk bytes, when
 * chunk > 0 and one comes) is ABORT(from rank 1, aux lost) containing
 * text. */
FAKE_FN void expect_abort(int fd, size_t chunk, int lost, const char *text)
{
    char pay[PROTO_TEXT_MAX + 1];
    struct proto_header h;
    int rc = get_frame(fd, &h, pay, sizeof pay);

    T_EQ_I(rc, 0);
    if (rc != 0)
        return;
    if (chunk > 0 && h.type == PROTO_CHUNK) {
        T_EQ_U(h.length, chunk);        /* completed, all of it */
        rc = get_frame(fd, &h, pay, sizeof pay);
        T_EQ_I(rc, 0);
    }
    T_EQ_U(h.type, PROTO_ABORT);
    T_EQ_U(h.aux, (unsigned)lost);
    T_EQ_U(h.rank, 1);
    T_HAS(pay, text);
}

/* nothing_more: fd holds no further byte now. */
FAKE_FN int nothing_more(int fd)
{
    char ch;
    return recv(fd, &ch, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/* A partner that was only late, played by a thread of the test (the
 * test's own fn): it reads the suspicion of rank 0 the rank under test
 * sends on read_fd, then writes its news (an ABORT) on write_fd. */
struct late {
    int read_fd, write_fd;
    const char *news;
    int saw_suspicion;
};

/* with_late: the all-reduce under test while fn plays l with `news`: it
 * times out (filling err), and l saw the suspicion of rank 0. */
FAKE_FN void with_late(struct single *s, struct late *l, void *(*fn)(void *),
                       const char *news, char *err)
{
    pthread_t th;
    double v[8];

    l->news = news;
    l->saw_suspicion = 0;
    pthread_create(&th, NULL, fn, l);
    T_EQ_I(s->allreduce(s, v, err), ERR_TIMEOUT);
    pthread_join(th, NULL);
    T_TRUE(l->saw_suspicion);
}

/* expect_news: the next frame on fd is ABORT(aux lost) carrying news to
 * the letter. */
FAKE_FN void expect_news(int fd, int lost, const char *news)
{
    char text[PROTO_TEXT_MAX + 1];
    struct proto_header h;

    T_EQ_I(get_frame(fd, &h, text, sizeof text), 0);
    T_EQ_U(h.type, PROTO_ABORT);
    T_EQ_U(h.aux, (unsigned)lost);
    T_STR(text, news);
}

/* ------------------------------- cases every partner transport faces */

/* A bad frame from rank 0's end, and what the refusal must name. */
struct bad_frame {
    const char *id, *name, *want;
    uint16_t type;
    uint32_t rank;
    uint64_t step, aux, len;
};

/* bad_frames: one case per row: the frame refused, rank 0 named as lost,
 * the news relayed to end_far, and the transport failed for good. With
 * end0_chunk, rank 0 gets our CHUNK, finished, and no ABORT: it is the
 * one lost. */
FAKE_FN void bad_frames(const struct bad_frame *bad, size_t nbad, single_open_fn open,
                        int end0_chunk)
{
    for (size_t b = 0; b < nbad; b++) {
        struct single s;
        double v[8], pay[10] = { 0 };
        char err[ERR_LEN], again[ERR_LEN];
        T_CASE(bad[b].id, bad[b].name);
        T_EQ_I(open(&s, T_S), 0);
        put_frame(s.end0, bad[b].type, bad[b].rank, bad[b].step, bad[b].aux, pay,
                  (size_t)bad[b].len);
        T_TRUE(s.allreduce(&s, v, err) != 0);
        T_HAS(err, "lost rank 0 (127.0.0.1:41000): sent a bad frame at step 0");
        T_HAS(err, bad[b].want);
        expect_abort(s.end_far, s.far_chunk, 0, "sent a bad frame");
        if (end0_chunk) {
            struct proto_header h;
            char text[PROTO_TEXT_MAX + 1];
            T_EQ_I(get_frame(s.end0, &h, text, sizeof text), 0);
            T_EQ_U(h.type, PROTO_CHUNK);
            T_TRUE(nothing_more(s.end0));
        }
        T_TRUE(s.allreduce(&s, v, again) != 0);           /* stays failed */
        T_STR(again, err);
        s.close(&s);
    }
}

/* bad_magic: a header of junk from rank 0, refused before anything is
 * read, its loss relayed. */
FAKE_FN void bad_magic(const char *id, const char *name, single_open_fn open)
{
    struct single s;
    double v[8];
    uint8_t junk[PROTO_HEADER_SIZE];
    char err[ERR_LEN];

    T_CASE(id, name);
    memset(junk, 'x', sizeof junk);
    T_EQ_I(open(&s, T_S), 0);
    T_EQ_I(write(s.end0, junk, sizeof junk), (int)sizeof junk);
    T_EQ_I(s.allreduce(&s, v, err), ERR_PROTO_MAGIC);
    T_HAS(err, "sent a bad frame at step 0: bad frame magic");
    expect_abort(s.end_far, s.far_chunk, 0, "lost rank 0");
    s.close(&s);
}

/* closed_mid_frame: rank 0 sends half of its CHUNK (`full` bytes, index
 * aux) and closes: lost at once, without waiting for the timeout, the
 * all-reduce returning want_rc (0: any error). */
FAKE_FN void closed_mid_frame(const char *id, const char *name, single_open_fn open,
                              uint64_t aux, size_t full, int want_rc)
{
    struct single s;
    double v[8], pay[8] = { 1.0 };
    char err[ERR_LEN];

    T_CASE(id, name);
    T_EQ_I(open(&s, LONG_T), 0);                /* EOF needs no timeout to be seen */
    put_part(s.end0, PROTO_CHUNK, 0, 0, aux, full, pay, full / 2);
    s.end0 = (close(s.end0), -1);
    double t0 = clock_now();
    int rc = s.allreduce(&s, v, err);
    T_TRUE(rc != 0);
    if (want_rc != 0)
        T_EQ_I(rc, want_rc);
    T_LE(clock_now() - t0, LONG_T / 2);                         /* no waiting */
    T_STR(err, "lost rank 0 (127.0.0.1:41000): connection closed");
    expect_abort(s.end_far, s.far_chunk, 0,
                 "lost rank 0 (127.0.0.1:41000): connection closed (seen by rank 1)");
    s.close(&s);
}

/* abort_then_close: rank 0 sends ABORT(aux lost, news) and closes: the
 * news is reported and relayed, not a broken pipe. */
FAKE_FN void abort_then_close(const char *id, const char *name, single_open_fn open,
                              double timeout, int lost, const char *news)
{
    struct single s;
    double v[8];
    char err[ERR_LEN], want[ERR_LEN];

    T_CASE(id, name);
    T_EQ_I(open(&s, timeout), 0);
    put_frame(s.end0, PROTO_ABORT, 0, 0, (uint64_t)lost, news, strlen(news));
    s.end0 = (close(s.end0), -1);
    T_EQ_I(s.allreduce(&s, v, err), -ECONNABORTED);
    snprintf(want, sizeof want, "rank 0 reported: %s", news);
    T_STR(err, want);
    expect_abort(s.end_far, s.far_chunk, lost, news);
    s.close(&s);
}

/* silent_partner: rank 0 says nothing: caught by --timeout, not sooner,
 * named, its loss relayed. */
FAKE_FN void silent_partner(const char *id, const char *name, single_open_fn open)
{
    struct single s;
    double v[8];
    char err[ERR_LEN];

    T_CASE(id, name);
    T_EQ_I(open(&s, T_S), 0);
    double t0 = clock_now();
    T_EQ_I(s.allreduce(&s, v, err), ERR_TIMEOUT);
    double dt = clock_now() - t0;
    T_LE(T_S, dt);                                  /* the timeout, not sooner */
    T_LE(dt, WATCHDOG);
    T_HAS(err, "lost rank 0 (127.0.0.1:41000): no progress for 0.6 s");
    expect_abort(s.end_far, s.far_chunk, 0, "no progress");
    s.close(&s);
}

#endif /* FAKE_PEER_H */
