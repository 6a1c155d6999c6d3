/* test_rd.c -- the recursive-doubling all-reduce (common/coll/rd.c) and
 * its partner transport (common/coll/xport_tcp.c), without the launcher.
 *
 * K ranks run as threads of this process, each with its own link
 * (counters) and transport, connected to their partners by socketpairs
 * (xport_tcp_attach) or by loopback listeners and the real HELLO exchange
 * (xport_tcp_open). Ids: rd-1.x the algorithm (partners, sums against the
 * closed form and against rd's own summation tree, bit-identical ranks for
 * K = 1..8, powers of two or not, pieces, bytes moved, the gathers of
 * coll.c); rd-2.x one transport facing fake partners played by the test:
 * every kind of bad frame, a closed or silent partner, ABORTs to relay, a
 * stranger at set-up (RELIABILITY.md, "ring only"). The rig it shares with
 * test_ring.c (threads, fake partners, frames, the common fault cases) is
 * tests/fake_peer.h; the harness it shares with the other algorithms'
 * tests (the jobs, their sums, gathers, bytes) tests/coll_check.h.
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

#include "check.h"
#include "coll/coll.h"
#include "coll/rd.h"
#include "fake_peer.h"
#include "coll_check.h"

static size_t seg_bytes;    /* the jobs' rd.seg_bytes (rd.h, SEGMENTS); 0: one frame */

/* rd.c behind coll_check.h's interface. */
static int rd_call(void *st, enum algo_call what, struct xport *x, struct rank_job *j)
{
    struct rd *rd = st;
    int rc;

    if (what == ALGO_INIT) {
        rc = rd_init(rd, x, j->rank, j->world, j->piece);
        rd->seg_bytes = seg_bytes;
        return rc;
    }
    if (what == ALGO_DESTROY)
        return rd_destroy(rd), 0;
    return (what == ALGO_ALLREDUCE_RAW ? rd_allreduce_raw : rd_allreduce)(rd, j->buf, j->n,
                                                                          j->dtype, j->err);
}

static void rd_coll(struct coll_cfg *cc)
{
    cc->algo = COLL_RD;
}

static const struct algo_test rd_test = { 0x5d, sizeof(struct rd), rd_plan, rd_coll, rd_call };

/* rd_bytes (bytes_moved's want): n a doubling step each way, one frame
 * a step; the fold's n once more (in, then out); an extra rank (r >= P):
 * its vector out, the result in. */
static uint64_t rd_bytes(int r, int k, size_t n, uint64_t *frames)
{
    int l, extra, p = fold_of(k, &l, &extra);
    uint64_t nb = 4 * (uint64_t)n;

    if (r >= p) {
        *frames = 2;
        return nb;
    }
    *frames = (uint64_t)l + (r < extra ? 2 : 0);
    return (uint64_t)l * nb + (r < extra ? nb : 0);
}

/* tree_sum: element i summed the way rd.c does it (FOLD, then the
 * doubling tree, lower rank's part first), serially, in the dtype. */
static double tree_sum(int k, size_t n, size_t i, int dtype, uint64_t round)
{
    double d[MAXK];
    float s[MAXK];
    int p = 1;

    (void)n;
    while (p * 2 <= k)
        p *= 2;
    for (int r = 0; r < k; r++) {
        d[r] = job_value(FILL_RANDOM, r, i, round);
        s[r] = (float)d[r];
    }
    for (int r = 0; r < k - p; r++) {
        d[r] = d[r] + d[r + p];
        s[r] = s[r] + s[r + p];
    }
    for (int bit = 1; bit < p; bit *= 2) {
        double nd[MAXK];
        float ns[MAXK];
        for (int r = 0; r < p; r++) {
            int lo = r < (r ^ bit) ? r : r ^ bit, hi = lo ^ bit;
            nd[r] = d[lo] + d[hi];
            ns[r] = s[lo] + s[hi];
        }
        memcpy(d, nd, sizeof nd);
        memcpy(s, ns, sizeof ns);
    }
    return dtype == DTYPE_F32 ? (double)s[0] : d[0];
}

/* ---------------------------------------------------------- fake peers */

/* The transport under test: rank 1 of 4, whose partners are rank 0 (round
 * 1, r XOR 1: end0) and rank 3 (round 2, r XOR 2: end_far). */
static struct rd single_rd;

static void single_close(struct single *s)
{
    rd_destroy(&single_rd);
    single_detach(s);
}

/* The all-reduce of 8 f64 under test (64 bytes): round 1 with rank 0. */
static int single_allreduce(struct single *s, double *v, char *err)
{
    (void)s;
    for (int i = 0; i < 8; i++)
        v[i] = i + 1;
    return rd_allreduce(&single_rd, v, 8, DTYPE_F64, err);
}

static int single_open(struct single *s, double timeout)
{
    struct xport_plan plan;
    int partners[RD_PARTNERS_MAX];

    rd_plan(1, 4, &plan);
    if (rd_partners(1, 4, partners) != 2 || partners[0] != 0 || partners[1] != 3 ||
        plan.npeers != 2 || plan.peer[0].rank != 0 || plan.peer[1].rank != 3)
        return -1;
    if (single_attach(s, &plan, 0, timeout) != 0)
        return -1;
    s->allreduce = single_allreduce;
    s->close = single_close;
    return rd_init(&single_rd, s->x, 1, 4, 0);
}

/* late3: rank 3 that knows better. It waits for the suspicion of rank 0
 * the rank under test sends it, then reports rank 2 lost. */
static void *late3_main(void *arg)
{
    struct late *l = arg;
    char pay[PROTO_TEXT_MAX + 1];
    struct proto_header h;

    if (get_frame(l->read_fd, &h, pay, sizeof pay) == 0)
        l->saw_suspicion = h.type == PROTO_ABORT && h.aux == 0 && strstr(pay, "lost rank 0");
    put_frame(l->write_fd, PROTO_ABORT, 3, 0, 2, l->news, strlen(l->news));
    return NULL;
}

/* stranger: connects to a listener, says HELLO as `rank` of the job, and
 * reads the answer. */
struct stranger {
    int port, rank;
    struct proto_hello hello;
    struct proto_header answer;
    char text[PROTO_TEXT_MAX + 1];
    int fd, rc;
};

static void *stranger_main(void *arg)
{
    struct stranger *s = arg;
    uint8_t frame[PROTO_HEADER_SIZE + PROTO_HELLO_SIZE];
    struct proto_header h = proto_header_make(PROTO_HELLO, (uint32_t)s->rank, 4, 0, 0,
                                              PROTO_HELLO_SIZE);
    char err[ERR_LEN];

    s->rc = net_connect("127.0.0.1", s->port, 5.0, &s->fd, err);
    if (s->rc == 0)         /* a member of the job: it passes AUTH (auth.h) */
        s->rc = auth_client(s->fd, auth_process_key(), PROTO_AUTH_DATA, clock_now() + 5.0,
                            "test", err);
    if (s->rc != 0)
        return NULL;
    proto_header_encode(&h, frame);
    proto_hello_encode(&s->hello, frame + PROTO_HEADER_SIZE);
    s->rc = net_send_all(s->fd, frame, sizeof frame, NULL, 5.0, "test", err);
    if (s->rc == 0)
        s->rc = get_frame(s->fd, &s->answer, s->text, sizeof s->text);
    return NULL;
}

/* delayed: a partner that sends its round-1 CHUNK (64 bytes) `after`
 * seconds late. */
struct delayed {
    int fd;
    double after;
};

static void *delayed_main(void *arg)
{
    struct delayed *d = arg;
    double pay[8] = { 0 };

    clock_sleep_until(clock_now() + d->after);
    put_frame(d->fd, PROTO_CHUNK, 0, 0, 1, pay, sizeof pay);
    return NULL;
}

/* answerer: plays a lower partner at set-up: accepts on the listener
 * (s->port holds its fd), reads the HELLO, answers with its own. */
static void *answerer_main(void *arg)
{
    struct stranger *s = arg;
    uint8_t frame[PROTO_HEADER_SIZE + PROTO_HELLO_SIZE];
    struct proto_header h = proto_header_make(PROTO_HELLO, (uint32_t)s->rank, 4, 0, 0,
                                              PROTO_HELLO_SIZE);
    char err[ERR_LEN], peer[NET_ADDR_LEN];

    s->rc = net_accept(s->port, 5.0, &s->fd, peer, err);
    if (s->rc == 0)
        s->rc = auth_server(s->fd, auth_process_key(), PROTO_AUTH_DATA, clock_now() + 5.0,
                            "test", err);
    if (s->rc == 0)
        s->rc = get_frame(s->fd, &s->answer, s->text, sizeof s->text);
    proto_header_encode(&h, frame);
    proto_hello_encode(&s->hello, frame + PROTO_HEADER_SIZE);
    if (s->rc == 0)
        s->rc = net_send_all(s->fd, frame, sizeof frame, NULL, 5.0, "test", err);
    return NULL;
}

/* opener: xport_tcp_open in a thread of its own. */
struct opener {
    struct xport_tcp_cfg cfg;
    struct xport_plan plan;
    struct proto_peer peers[4];
    struct link link;
    struct xport *x;
    int rc;
    char err[ERR_LEN];
};

static void *opener_main(void *arg)
{
    struct opener *o = arg;
    o->rc = xport_tcp_open(&o->x, &o->cfg, o->err);
    return NULL;
}

int main(void)
{
    struct rank_job jobs[MAXK];
    char err[ERR_LEN];

    algo_use(&rd_test, 41000);

    T_CASE("rd-1.1", "partners: XOR 2^s, the fold partner first, symmetric; step counts");
    for (int k = 1; k <= 64; k++) {
        int l, extra, p = fold_of(k, &l, &extra);
        T_EQ_I(rd_steps(k), p == k ? l : l + 2);
        for (int r = 0; r < k; r++) {
            int part[RD_PARTNERS_MAX], back[RD_PARTNERS_MAX];
            int n = rd_partners(r, k, part), s0 = 0;
            T_EQ_I(n, k == 1 ? 0 : r >= p ? 1 : l + (r < extra));
            if (r >= p) {
                T_EQ_I(part[0], r - p);
                continue;
            }
            if (r < extra)
                T_EQ_I(part[s0++], r + p);
            for (int s = 0; s < l; s++)
                T_EQ_I(part[s0 + s], r ^ (1 << s));
            for (int i = 0; i < n; i++) {
                int m = rd_partners(part[i], k, back);
                T_TRUE(index_of(back, m, r) >= 0);
            }
        }
    }

    T_CASE("rd-1.2", "all-reduce = closed-form sum, bit-identical: K 1..8, n 1, K-1, K+1, 1000, 65539, f32/f64");
    for (int k = 1; k <= MAXK; k++) {
        size_t ns[5] = { 1, (size_t)k - 1, (size_t)k + 1, 1000, 65539 };
        for (int d = 0; d < 2; d++)
            for (int a = 0; a < 5; a++)
                run_sums(k, ns[a], dtypes[d], FILL_SMALL, 0, 1, tree_sum);
    }

    T_CASE("rd-1.3", "random data: bit-identical ranks, equal to the sum in rd's tree, K 2..8");
    for (int k = 2; k <= MAXK; k++)
        for (int d = 0; d < 2; d++)
            run_sums(k, 65539, dtypes[d], FILL_RANDOM, 0, 1, tree_sum);

    T_CASE("rd-1.4", "tiny staging pieces (1 and 3 elements), in place: same sums");
    {
        static const size_t pieces[] = { 8, 24 };
        for (int p = 0; p < 2; p++)
            for (int k = 2; k <= 6; k++)
                run_sums(k, 203, DTYPE_F64, FILL_RANDOM, pieces[p], 1, tree_sum);
    }

    T_CASE("rd-1.5", "three all-reduces in a row (step numbers advance), K 4 and 7");
    for (int k = 4; k <= 7; k += 3)
        run_sums(k, 100001, DTYPE_F32, FILL_RANDOM, 4096, 3, tree_sum);

    T_CASE("rd-1.6", "bytes moved per rank: n per doubling step each way, the fold's n once, one header per frame");
    for (int k = 2; k <= MAXK; k++)
        bytes_moved(k, 4099, rd_bytes);

    T_CASE("rd-1.10", "SEGMENTS: a step as frames of 1000 or 4096 bytes, pieces 24 B or 1 KiB: the same sums, bit-identical");
    {
        static const size_t segs[] = { 1000, 4096 }, pcs[] = { 24, 1024 };
        for (int g = 0; g < 2; g++)
            for (int k = 2; k <= MAXK; k++) {
                seg_bytes = segs[g];
                run_sums(k, 4099, dtypes[(k + g) % 2], FILL_RANDOM, pcs[g], 2, tree_sum);
                seg_bytes = 0;
            }
    }

    T_CASE("rd-1.11", "SEGMENTS: one header per frame (K = 4, f32, 4099 elements in 1000-byte frames: 17 a step)");
    {
        uint64_t want = 2 * (17 * (uint64_t)PROTO_HEADER_SIZE + 4 * 4099);
        seg_bytes = 1000;
        T_EQ_I(run_jobs(jobs, 4, 4099, DTYPE_F32, FILL_SMALL, 0, 1, OP_ALLREDUCE, NULL, NULL), 0);
        seg_bytes = 0;
        T_EQ_U(check_allreduce(jobs, 4, FILL_SMALL, 0, tree_sum), 0);
        for (int r = 0; r < 4; r++) {
            T_EQ_U(jobs[r].link.bytes_out, want);
            T_EQ_U(jobs[r].link.bytes_in, want);
        }
        free_jobs(jobs, 4);
    }

    T_CASE("rd-1.7", "loopback listeners and HELLO (xport_tcp_open), K = 3, 5, 8");
    for (int k = 3; k <= MAXK; k += k == 3 ? 2 : 3)
        over_listeners(k, run_jobs, FILL_RANDOM, tree_sum);

    T_CASE("rd-1.8", "K = 1 and n = 0: no transport, nothing moves");
    {
        struct rd r1;
        double v[3] = { 1.5, -2, 3 };
        T_EQ_I(rd_init(&r1, NULL, 0, 1, 0), 0);
        T_EQ_I(rd_allreduce(&r1, v, 3, DTYPE_F64, err), 0);
        T_EQ_D(v[0], 1.5);
        T_EQ_D(v[2], 3);
        T_EQ_I(rd_allreduce(&r1, v, 3, 99, err), ERR_USAGE);
        rd_destroy(&r1);
        T_EQ_I(rd_init(&r1, NULL, 0, 2, 0), ERR_USAGE);        /* K > 1 needs one */
        T_EQ_I(rd_init(&r1, NULL, 1, 1, 0), ERR_USAGE);
        nothing_moves(5);
    }

    T_CASE("rd-1.9", "coll with --algo rd: gathers every rank's values exactly, then all-reduces");
    for (int k = 2; k <= MAXK; k += 3)
        gather_sums(k, tree_sum);
    coll_named(COLL_RD, 0, "--algo rd", "rd");

    /* ------------------------------------------ one rank, fake partners */
    {
        static const struct bad_frame bad[] = {
            { "rd-2.1", "a CHUNK from another rank on a partner's connection refused",
              "a frame from rank 2 on rank 0's connection", PROTO_CHUNK, 2, 0, 1, 64 },
            { "rd-2.2", "a CHUNK of the wrong round refused", "round 2, expected round 1",
              PROTO_CHUNK, 0, 0, 2, 64 },
            { "rd-2.3", "a CHUNK of the wrong size refused", "72 bytes in round 1, expected 64",
              PROTO_CHUNK, 0, 0, 1, 72 },
            { "rd-2.4", "a CHUNK for the wrong step refused", "CHUNK for step 5",
              PROTO_CHUNK, 0, 5, 1, 64 },
            { "rd-2.5", "a frame of the wrong type refused", "PUSH instead of CHUNK",
              PROTO_PUSH, 0, 0, 1, 16 + 64 },
        };
        bad_frames(bad, sizeof bad / sizeof bad[0], single_open, 1);
    }

    bad_magic("rd-2.6", "bad magic from a partner refused before anything is read",
              single_open);

    closed_mid_frame("rd-2.7", "partner closes mid-frame: lost rank 0, at once, ABORT to rank 3",
                     single_open, 1, 64, 0);

    T_CASE("rd-2.8", "ABORT from a partner: reported, relayed to the others, not back");
    {
        struct single s;
        double v[8];
        const char *news = "lost rank 2 (127.0.0.1:41002): connection closed (seen by rank 0)";
        T_EQ_I(single_open(&s, T_S), 0);
        put_frame(s.end0, PROTO_ABORT, 0, 0, 2, news, strlen(news));
        T_EQ_I(single_allreduce(&s, v, err), -ECONNABORTED);
        T_STR(err, "rank 0 reported: lost rank 2 (127.0.0.1:41002): connection closed (seen by rank 0)");
        expect_abort(s.end_far, 0, 2, news);
        {
            struct proto_header h;
            char text[PROTO_TEXT_MAX + 1];
            T_EQ_I(get_frame(s.end0, &h, text, sizeof text), 0);   /* our CHUNK... */
            T_EQ_U(h.type, PROTO_CHUNK);
            T_TRUE(nothing_more(s.end0));                          /* ...no echo */
        }
        single_close(&s);
    }

    abort_then_close("rd-2.9", "ABORT then close at once: the news is read, not a broken pipe",
                     single_open, LONG_T, 0, "rank 0 failed: step 3: NaN in the gradient");

    silent_partner("rd-2.10", "a silent partner: caught by --timeout, named, ABORT to rank 3",
                   single_open);

    T_CASE("rd-2.11", "a suspicion corrected: rank 3 reports rank 2 while we listen; relayed to rank 0");
    {
        struct single s;
        struct late l;
        char text[PROTO_TEXT_MAX + 1];
        struct proto_header h;
        T_EQ_I(single_open(&s, T_S), 0);
        l.read_fd = l.write_fd = s.end_far;
        with_late(&s, &l, late3_main,
                  "lost rank 2 (127.0.0.1:41002): no progress for 0.6 s (seen by rank 3)", err);
        T_STR(err, "rank 3 reported: lost rank 2 (127.0.0.1:41002): no progress for 0.6 s (seen by rank 3)");
        T_EQ_I(get_frame(s.end0, &h, text, sizeof text), 0);      /* corrected: rank 0 */
        T_EQ_U(h.type, PROTO_CHUNK);                               /* gets our CHUNK, then */
        expect_news(s.end0, 2, l.news);                            /* rank 3's news */
        single_close(&s);
    }

    T_CASE("rd-2.12", "xport_abort: this rank's own failure told to every partner");
    {
        struct single s;
        double v[8];
        T_EQ_I(single_open(&s, T_S), 0);
        T_EQ_I(xport_abort(s.x, "step 3: NaN in the gradient"), 0);
        expect_abort(s.end0, 0, 1, "rank 1 failed: step 3: NaN in the gradient");
        expect_abort(s.end_far, 0, 1, "rank 1 failed: step 3: NaN in the gradient");
        T_TRUE(single_allreduce(&s, v, err) != 0);
        T_HAS(err, "rank 1 failed");
        single_close(&s);
    }

    T_CASE("rd-2.13", "a step with a rank that is not a partner: ERR_USAGE, nothing sent");
    {
        struct single s;
        double v[8] = { 0 };
        struct xport_step st = { .to = 2, .from = 2, .send_tag = 1, .recv_tag = 1,
                                 .sbuf = v, .sbytes = 64,
                                      .rbytes = 64, .patience = 1 };
        T_EQ_I(single_open(&s, T_S), 0);
        T_EQ_I(xport_begin(s.x, &st, err), ERR_USAGE);
        T_HAS(err, "rank 2");
        T_TRUE(nothing_more(s.end0));
        T_TRUE(nothing_more(s.end_far));
        single_close(&s);
    }

    T_CASE("rd-2.14", "patience: a step allowed 10 T outlasts a partner silent for 2.5 T");
    {
        struct single s;
        struct delayed d;
        pthread_t th;
        double v[8] = { 0 }, in[8];
        struct xport_step st = { .to = 0, .from = 0, .send_tag = 1, .recv_tag = 1,
                                 .sbuf = v, .sbytes = 64,
                                      .rbytes = 64, .patience = 10 };
        int rc;
        T_EQ_I(single_open(&s, 0.4), 0);
        d.fd = s.end0;
        d.after = 1.0;
        pthread_create(&th, NULL, delayed_main, &d);
        rc = xport_begin(s.x, &st, err);
        if (rc == 0)
            rc = xport_recv(s.x, in, 64, err);
        if (rc == 0)
            rc = xport_end(s.x, err);
        pthread_join(th, NULL);
        T_EQ_I(rc, 0);
        if (rc != 0)
            printf("     %s\n", err);
        single_close(&s);
    }

    T_CASE("rd-2.15", "set-up: a rank that is not a partner is refused, the partner taken");
    {
        /* Rank 2 of 4 (partners 3 and 0) connects down to rank 0, played
         * by the test, and accepts up: rank 1 (not a partner) calls first
         * and is refused, then rank 3 is taken. */
        struct proto_hello job = { 64, DTYPE_F64, 2, 7, 1024, 0, 0 };
        struct stranger st1, st3, st0;
        struct opener o;
        pthread_t t0, t1, t3, to;
        int lfd0, lfd2, port0, port2, partners[RD_PARTNERS_MAX];

        memset(&o, 0, sizeof o);
        T_EQ_I(net_listen("127.0.0.1", 0, &lfd0, &port0, err), 0);
        T_EQ_I(net_listen("127.0.0.1", 0, &lfd2, &port2, err), 0);
        for (int r = 0; r < 4; r++) {
            strcpy(o.peers[r].addr, "127.0.0.1");
            o.peers[r].addr_len = 9;
            o.peers[r].port = (uint16_t)(r == 0 ? port0 : r == 2 ? port2 : 41000 + r);
        }
        link_init(&o.link, 0, 0);
        o.cfg.rank = 2;
        o.cfg.world = 4;
        o.cfg.lfd = lfd2;
        o.cfg.peers = o.peers;
        rd_plan(2, 4, &o.plan);
        o.cfg.plan = &o.plan;
        T_EQ_I(rd_partners(2, 4, partners), 2);
        o.cfg.hello = job;
        o.cfg.link = &o.link;
        o.cfg.timeout = 5.0;
        st0 = (struct stranger){ .port = lfd0, .rank = 0, .hello = job, .fd = -1 };
        st1 = (struct stranger){ .port = port2, .rank = 1, .hello = job, .fd = -1 };
        st3 = (struct stranger){ .port = port2, .rank = 3, .hello = job, .fd = -1 };
        pthread_create(&t0, NULL, answerer_main, &st0);    /* rank 0: accepts, answers */
        pthread_create(&to, NULL, opener_main, &o);
        pthread_create(&t1, NULL, stranger_main, &st1);
        pthread_join(t1, NULL);                             /* refused first... */
        pthread_create(&t3, NULL, stranger_main, &st3);
        pthread_join(t3, NULL);                             /* ...then rank 3 */
        pthread_join(to, NULL);
        pthread_join(t0, NULL);
        T_EQ_I(o.rc, 0);
        if (o.rc != 0)
            printf("     %s\n", o.err);
        T_EQ_I(st1.rc, 0);
        T_EQ_U(st1.answer.type, PROTO_ERROR);
        T_HAS(st1.text, "says it is rank 1, expected rank 3");
        T_EQ_I(st3.rc, 0);
        T_EQ_U(st3.answer.type, PROTO_HELLO);
        T_EQ_U(st3.answer.rank, 2);
        T_EQ_I(st0.rc, 0);
        xport_close(o.x);
        for (int i = 0; i < 3; i++) {
            struct stranger *sp = i == 0 ? &st0 : i == 1 ? &st1 : &st3;
            if (sp->fd >= 0)
                close(sp->fd);
        }
        close(lfd0);
        close(lfd2);
    }

    T_CASE("rd-2.16", "a NaN or Inf vector from a partner (a member with the secret): ERR_NONFINITE naming it");
    {
        static const double bads[] = { NAN, INFINITY };
        static const char *says[] = { "element 5 is nan", "element 5 is inf" };
        for (int b = 0; b < 2; b++) {
            struct single s;
            double v[8], pay[8] = { 0 };
            pay[5] = bads[b];
            T_EQ_I(single_open(&s, T_S), 0);
            put_frame(s.end0, PROTO_CHUNK, 0, 0, 1, pay, sizeof pay);     /* round 1, rank 0 */
            T_EQ_I(single_allreduce(&s, v, err), ERR_NONFINITE);
            T_HAS(err, says[b]);
            T_HAS(err, "after round 1 from partner rank 0");
            single_close(&s);
        }
    }

    T_CASE("rd-2.17", "SEGMENTS: a NaN in a step's second frame is named by its place in the vector");
    {
        struct single s;
        double v[8], pay[4] = { 0 };
        T_EQ_I(single_open(&s, T_S), 0);
        single_rd.seg_bytes = sizeof pay;                           /* two frames of 4 */
        put_frame(s.end0, PROTO_CHUNK, 0, 0, 1, pay, sizeof pay);  /* elements 0-3 */
        pay[1] = NAN;
        put_frame(s.end0, PROTO_CHUNK, 0, 1, 1, pay, sizeof pay);  /* 4-7: element 5 */
        T_EQ_I(single_allreduce(&s, v, err), ERR_NONFINITE);
        T_HAS(err, "element 5 is nan");
        T_HAS(err, "after round 1 from partner rank 0");
        single_close(&s);
    }

    return t_done();
}
