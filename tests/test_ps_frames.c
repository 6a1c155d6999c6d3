/* test_ps_frames.c -- the parameter server's frames: session.c and
 * egress.c without sockets, then bin/ps_server as a black box, talked to
 * over raw TCP by clients built here from proto.h.
 *
 *   ps-frames-1.x  session: frames cut anywhere, HELLO checks, PUSH checks
 *                  (1.9: in async, the worker's own step named),
 *                 a lost connection (no sockets)
 *   ps-frames-2.x  egress: round robin, blocked workers, link deadlines
 *                 (fake clock, no sockets)
 *   ps-frames-3.x  bad connections are refused and closed, and logged,
 *                 while good workers join before and after them
 *   ps-frames-4.x  a full run with K raw clients pushing synthetic
 *                 gradients: the weights returned every step equal the
 *                 closed form exactly; BYE; exit 0; the record
 *   ps-frames-5.x  faults that end the run: NaN, refused pushes (stale,
 *                 duplicate, future, after the end, wrong range or size),
 *                 BYE too early, a client cut off mid-push, a silent one,
 *                 one silent mid-push, one that stops reading its weights:
 *                 exit non-zero naming worker and step, ERROR to the others;
 *                 and the server's own stall, which is no one's fault
 *
 * The server runs with --timeout 1; every wait for it is bounded by the
 * watchdog of RELIABILITY.md (3x the timeout + 10 s), never by a timing
 * assertion. Each server is its own process group, killed at the end of
 * its case whatever happened. Without $PSR_BIN/ps_server the 3.x-5.x
 * cases are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "ps/egress.h"
#include "ps/session.h"
#include "ps/store.h"
#include "wire/auth.h"
#include "check.h"
#include "base/cli.h"
#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "wire/link.h"
#include "measure/metrics.h"
#include "wire/net.h"
#include "wire/proto.h"
#include "base/rng.h"
#include "train/sgd.h"
#include "train/workload.h"

#define SECRET_TEXT "psframes-secret-0123456789abcdef"
#define N_ELEMS    1003            /* synthetic parameters: odd on purpose */
#define LR         0.5
#define LR_TEXT    "0.5"
#define TMO_S      1.0             /* the server's --timeout */
#define TMO_TEXT   "1"
#define WATCHDOG_S (3 * TMO_S + 10) /* RELIABILITY.md */

static volatile pid_t live_server;    /* the server of the case running, if any */

static void on_alarm(int sig)
{
    static const char msg[] = "FAIL ps-frames-watchdog a case hung past its watchdog\n";
    (void)sig;
    (void)!write(STDOUT_FILENO, msg, sizeof msg - 1);
    if (live_server > 0)
        kill(-live_server, SIGKILL);
    _exit(1);
}

static void watch(unsigned s)
{
    alarm(s);
}

/* ================================================= sessions, no sockets */

static struct auth_key no_key;      /* unkeyed: the sessions' handshake */
static struct auth_key job_key;     /* the servers' secret (SECRET_TEXT) */

/* session_open: session_init, then the AUTH handshake fed to it the way a
 * worker would (auth.h), so the session is NEW and authenticated. */
static void session_open(struct session *s, const struct session_cfg *c)
{
    struct auth_hs hs;
    uint8_t a1[AUTH_FRAME], a3[AUTH_FRAME];
    size_t used = 0;
    char err[ERR_LEN];
    int ev;

    session_init(s, c);
    auth_hs_init(&hs, c->key, PROTO_AUTH_PS);
    auth_open(&hs, a1);
    ev = session_feed(s, NULL, a1, sizeof a1, &used, err);
    T_EQ_I(ev, SESSION_AUTH_REPLY);
    T_EQ_I(auth_prove(&hs, s->auth_out, AUTH_FRAME, a3, err), 0);
    ev = session_feed(s, NULL, a3, sizeof a3, &used, err);
    T_EQ_I(ev, SESSION_AUTHED);
    T_EQ_I(s->state, SESSION_NEW);
}

static struct session_cfg small_cfg(void)
{
    return (struct session_cfg){ .world = 2, .n = 10, .lo = 0, .hi = 10,
                                 .dtype = DTYPE_F64, .workload = WORKLOAD_SYNTHETIC,
                                 .seed = 7, .key = &no_key, .batch = 8, .steps = 2 };
}

static size_t frame(unsigned char *out, uint16_t type, uint32_t rank, uint32_t world,
                    uint64_t step, uint64_t aux, uint64_t length)
{
    struct proto_header h = proto_header_make(type, rank, world, step, aux, length);

    proto_header_encode(&h, out);
    return PROTO_HEADER_SIZE;
}

static size_t hello_frame(unsigned char *out, uint32_t rank, const struct session_cfg *c,
                          const struct proto_hello *override)
{
    struct proto_hello m = { .n = c->n, .dtype = (uint32_t)c->dtype,
                             .workload = (uint32_t)c->workload, .seed = c->seed,
                             .batch = c->batch };

    if (override)
        m = *override;
    frame(out, PROTO_HELLO, rank, c->world, 0, 0, PROTO_HELLO_SIZE);
    proto_hello_encode(&m, out + PROTO_HEADER_SIZE);
    return PROTO_HEADER_SIZE + PROTO_HELLO_SIZE;
}

/* push_frame: PUSH of step with `examples`, loss 0, elements g[0..count). */
static size_t push_frame(unsigned char *out, uint32_t rank, uint32_t world, uint64_t step,
                         uint64_t aux, uint64_t examples, const double *g, size_t count)
{
    struct proto_push_meta m = { .examples = examples, .loss = 0.0 };

    frame(out, PROTO_PUSH, rank, world, step, aux, PROTO_PUSH_META + count * sizeof(double));
    proto_push_meta_encode(&m, out + PROTO_HEADER_SIZE);
    memcpy(out + PROTO_HEADER_SIZE + PROTO_PUSH_META, g, count * sizeof(double));
    return PROTO_HEADER_SIZE + PROTO_PUSH_META + count * sizeof(double);
}

static int store_for(struct store *st, const struct session_cfg *c)
{
    char err[ERR_LEN];
    struct store_cfg sc = { .n = (size_t)(c->hi - c->lo), .offset = c->lo, .dtype = c->dtype,
                            .world = c->world, .lr = LR, .weights = NULL };

    return store_init(st, &sc, err);
}

/* store_case: opens case id with a fresh store for c in st. */
static void store_case(const char *id, const char *name, struct store *st,
                       const struct session_cfg *c)
{
    T_CASE(id, name);
    T_EQ_I(store_for(st, c), 0);
}

static void t_session_hello(void)
{
    struct session_cfg c = small_cfg();
    struct session s;
    struct store st;
    unsigned char buf[256];
    char err[ERR_LEN];
    size_t len, used;
    int ev = -1, early = 0;

    store_case("ps-frames-1.1", "a HELLO fed one byte at a time is one event at its last byte",
               &st, &c);
    watch(20);
    session_open(&s, &c);
    len = hello_frame(buf, 1, &c, NULL);
    for (size_t i = 0; i < len; i++) {
        ev = session_feed(&s, &st, buf + i, 1, &used, err);
        T_EQ_U(used, 1);
        if (i + 1 < len && ev != SESSION_NONE)
            early = 1;
    }
    T_TRUE(!early);
    T_EQ_I(ev, SESSION_HELLO);
    T_EQ_U(s.rank, 1);
    session_join(&s);
    T_EQ_I(s.state, SESSION_JOINED);
    store_destroy(&st);
    T_END();

    T_CASE("ps-frames-1.2", "HELLO mismatches (n, dtype, workload, seed, batch) are "
           "refused naming the field");
    {
        static const char *const field[] = { "n = 11", "n = 11", "dtype", "workload", "seed",
                                             "batch" };
        T_EQ_I(store_for(&st, &c), 0);
        for (int f = 0; f < 6; f++) {
            struct proto_hello m = { .n = c.n, .dtype = (uint32_t)c.dtype,
                                     .workload = (uint32_t)c.workload, .seed = c.seed,
                                     .batch = c.batch };
            switch (f) {
            case 0:
            case 1: m.n = 11; break;
            case 2: m.dtype = DTYPE_F32; break;
            case 3: m.workload = WORKLOAD_LINREG; break;
            case 4: m.seed = 8; break;
            default: m.batch = 9; break;
            }
            session_open(&s, &c);
            len = hello_frame(buf, 0, &c, &m);
            ev = session_feed(&s, &st, buf, len, &used, err);
            T_EQ_I(ev, ERR_MISMATCH);
            T_HAS(err, "HELLO refused");
            T_HAS(err, field[f]);
            T_EQ_I(s.state, SESSION_DEAD);
            /* A dead session refuses whatever follows. */
            T_TRUE(session_feed(&s, &st, buf, len, &used, err) < 0);
        }
        store_destroy(&st);
    }
    T_END();

    store_case("ps-frames-1.3", "PUSH before HELLO, a wrong K, an oversized length: refused "
               "at the header, before any payload byte", &st, &c);
    session_open(&s, &c);
    len = frame(buf, PROTO_PUSH, 0, 2, 0, 0, 16 + 80);
    T_EQ_I(session_feed(&s, &st, buf, len, &used, err), ERR_PROTO_TYPE);
    T_HAS(err, "PUSH before HELLO");
    session_open(&s, &c);
    len = frame(buf, PROTO_HELLO, 0, 3, 0, 0, PROTO_HELLO_SIZE);
    T_EQ_I(session_feed(&s, &st, buf, len, &used, err), ERR_PROTO_WORLD);
    T_HAS(err, "K = 3");
    session_open(&s, &c);
    len = frame(buf, PROTO_HELLO, 0, 2, 0, 0, UINT64_MAX);
    memset(buf + len, 0xAB, 64);        /* payload bytes that must not be read */
    T_EQ_I(session_feed(&s, &st, buf, len + 64, &used, err), ERR_PROTO_LENGTH);
    T_EQ_U(used, PROTO_HEADER_SIZE);
    T_HAS(err, "cap");
    session_open(&s, &c);
    len = frame(buf, PROTO_HELLO, PROTO_RANK_SERVER, 2, 0, 0, PROTO_HELLO_SIZE);
    T_EQ_I(session_feed(&s, &st, buf, len, &used, err), ERR_PROTO_RANK);
    store_destroy(&st);
    T_END();
}

/* joined: a session of rank r on store st, joined. */
static void joined(struct session *s, const struct session_cfg *c, struct store *st, uint32_t r)
{
    unsigned char buf[128];
    char err[ERR_LEN];
    size_t used, len = hello_frame(buf, r, c, NULL);

    session_open(s, c);
    if (session_feed(s, st, buf, len, &used, err) == SESSION_HELLO)
        session_join(s);
}

static void t_session_push(void)
{
    struct session_cfg c = small_cfg();
    struct session s0, s1;
    struct store st;
    unsigned char buf[1024], *p;
    double g[10];
    char err[ERR_LEN];
    size_t len, used, left;
    struct rng rg;
    int nbegin = 0, nend = 0, nbye = 0, bad = 0;

    for (int i = 0; i < 10; i++)
        g[i] = (double)(i + 1);
    T_CASE("ps-frames-1.4", "two pushes cut at random points, then BYE in the same bytes: "
           "events in order, the step applies");
    watch(20);
    rng_seed(&rg, 99);
    c.steps = 1;
    T_EQ_I(store_for(&st, &c), 0);
    joined(&s0, &c, &st, 0);
    joined(&s1, &c, &st, 1);
    T_EQ_I(s0.state, SESSION_JOINED);
    for (uint32_t r = 0; r < 2; r++) {
        struct session *s = r ? &s1 : &s0;

        len = push_frame(buf, r, 2, 0, 0, 4, g, 10);
        p = buf;
        left = len;
        while (left > 0) {
            size_t piece = 1 + (size_t)(rng_next(&rg) % 23);
            int ev;

            if (piece > left)
                piece = left;
            ev = session_feed(s, &st, p, piece, &used, err);
            if (ev < 0) {
                printf("     %s\n", err);
                bad = 1;
                break;
            }
            nbegin += ev == SESSION_PUSH_BEGIN;
            nend += ev == SESSION_PUSH_END;
            p += used;
            left -= used;
        }
    }
    T_TRUE(!bad);
    T_EQ_I(nbegin, 2);
    T_EQ_I(nend, 2);
    T_TRUE(store_step_ready(&st));
    T_EQ_I(store_apply(&st, NULL, err), 0);
    /* Weights: w = 0 - lr * (2 g) / 8. */
    T_EQ_D(((const double *)store_weights(&st))[3], -LR * (2 * 4.0) / 8.0);
    /* Both BYEs in one buffer for s0: the first is taken, the second refused. */
    len = frame(buf, PROTO_BYE, 0, 2, 1, 0, 0);
    len += frame(buf + len, PROTO_BYE, 0, 2, 1, 0, 0);
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), SESSION_BYE);
    T_EQ_U(used, PROTO_HEADER_SIZE);
    nbye++;
    T_TRUE(session_feed(&s0, &st, buf + used, len - used, &used, err) < 0);
    T_HAS(err, "after BYE");
    T_EQ_I(nbye, 1);
    store_destroy(&st);
    T_END();

    T_CASE("ps-frames-1.5", "PUSH refused at the header: wrong range, wrong size, after "
           "the last step, while pulling; the store is untouched");
    c.steps = 2;
    T_EQ_I(store_for(&st, &c), 0);
    joined(&s0, &c, &st, 0);
    len = push_frame(buf, 0, 2, 0, 10, 4, g, 1);          /* aux 10: not owned */
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_FIELD);
    T_HAS(err, "worker 0");
    T_HAS(err, "starts at element 10");
    joined(&s0, &c, &st, 0);
    len = push_frame(buf, 0, 2, 0, 1, 4, g, 10);          /* [1, 11): past the end */
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_SIZE);
    T_HAS(err, "payload bytes");
    joined(&s0, &c, &st, 0);
    len = push_frame(buf, 0, 2, 0, 0, 4, g, 9);           /* one element short */
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_SIZE);
    T_HAS(err, "must end at element 10");
    joined(&s0, &c, &st, 0);
    len = push_frame(buf, 0, 2, 2, 0, 4, g, 10);          /* step 2 of 2 */
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_FIELD);
    T_HAS(err, "after the last step");
    joined(&s0, &c, &st, 0);
    s0.pulling = 1;
    len = push_frame(buf, 0, 2, 0, 0, 4, g, 10);
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_FIELD);
    T_HAS(err, "refused: the server is still sending it the weights");
    joined(&s0, &c, &st, 0);
    len = push_frame(buf, 1, 2, 0, 0, 4, g, 10);          /* says rank 1 */
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_RANK);
    joined(&s0, &c, &st, 0);
    len = frame(buf, PROTO_BYE, 0, 2, 0, 0, 0);
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_FIELD);
    T_HAS(err, "before the last step");
    T_EQ_U(store_pushes_done(&st), 0);
    T_EQ_I(store_failed(&st, NULL), 0);
    store_destroy(&st);
    T_END();

    store_case("ps-frames-1.8", "buckets: a pass of pushes from the top down ([6,10) [2,6) [0,2)) "
               "counts once and sums like one push; a bucket out of order is refused", &st, &c);
    joined(&s0, &c, &st, 0);
    joined(&s1, &c, &st, 1);
    {
        static const uint64_t cut[] = { 10, 6, 2, 0 };
        int ok = 1;

        for (int b = 0; b < 3; b++) {
            /* worker 0 in buckets, its count with the first (the one at hi) */
            len = push_frame(buf, 0, 2, 0, cut[b + 1], b == 0 ? 4 : 0, g + cut[b + 1],
                             (size_t)(cut[b] - cut[b + 1]));
            ok &= session_feed(&s0, &st, buf, len, &used, err) == SESSION_PUSH_BEGIN;
            ok &= session_feed(&s0, &st, buf + used, len - used, &used, err) ==
                  SESSION_PUSH_END;
            ok &= store_pushes_done(&st) == (b == 2);
            ok &= store_pass_left(&st, 0) == (b == 2 ? 0 : cut[b + 1]);
        }
        T_TRUE(ok);
    }
    len = push_frame(buf, 1, 2, 0, 0, 4, g, 4);           /* [0, 4) first: wrong end */
    T_EQ_I(session_feed(&s1, &st, buf, len, &used, err), ERR_PROTO_SIZE);
    T_HAS(err, "worker 1");
    T_HAS(err, "must end at element 10");
    joined(&s1, &c, &st, 1);
    len = push_frame(buf, 1, 2, 0, 0, 4, g, 10);          /* worker 1 whole */
    T_EQ_I(session_feed(&s1, &st, buf, len, &used, err), SESSION_PUSH_BEGIN);
    T_EQ_I(session_feed(&s1, &st, buf + used, len - used, &used, err), SESSION_PUSH_END);
    T_TRUE(store_step_ready(&st));
    T_EQ_I(store_apply(&st, NULL, err), 0);
    /* the same weights as two whole pushes (1.4): w = 0 - lr * (2 g) / 8 */
    T_EQ_D(((const double *)store_weights(&st))[3], -LR * (2 * 4.0) / 8.0);
    T_EQ_D(((const double *)store_weights(&st))[8], -LR * (2 * 9.0) / 8.0);
    store_destroy(&st);
    T_END();

    store_case("ps-frames-1.6", "a connection lost mid-push fails the store naming worker and "
               "step; lost after the last step is clean", &st, &c);
    joined(&s0, &c, &st, 0);
    len = push_frame(buf, 0, 2, 0, 0, 4, g, 10);
    T_EQ_I(session_feed(&s0, &st, buf, 40 + 16 + 20, &used, err), SESSION_PUSH_BEGIN);
    T_EQ_I(session_feed(&s0, &st, buf + used, 40 + 16 + 20 - used, &used, err), SESSION_NONE);
    T_EQ_I(session_lost(&s0, &st, err), ERR_EOF);
    T_HAS(err, "worker 0");
    T_HAS(err, "step 0");
    T_HAS(err, "cut off");
    T_TRUE(store_failed(&st, NULL) != 0);
    store_destroy(&st);
    c.steps = 1;
    T_EQ_I(store_for(&st, &c), 0);
    joined(&s0, &c, &st, 0);
    joined(&s1, &c, &st, 1);
    len = push_frame(buf, 0, 2, 0, 0, 4, g, 10);
    T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), SESSION_PUSH_BEGIN);
    T_EQ_I(session_feed(&s0, &st, buf + used, len - used, &used, err), SESSION_PUSH_END);
    len = push_frame(buf, 1, 2, 0, 0, 4, g, 10);
    T_EQ_I(session_feed(&s1, &st, buf, len, &used, err), SESSION_PUSH_BEGIN);
    T_EQ_I(session_feed(&s1, &st, buf + used, len - used, &used, err), SESSION_PUSH_END);
    T_EQ_I(store_apply(&st, NULL, err), 0);
    T_EQ_I(session_lost(&s0, &st, err), 0);
    s1.pulling = 1;         /* still receiving the last weights: not clean */
    T_EQ_I(session_lost(&s1, &st, err), ERR_EOF);
    T_HAS(err, "while receiving the weights");
    store_destroy(&st);
    T_END();

    T_CASE("ps-frames-1.7", "hostile frames: PUSH lengths 0, +-1, not whole elements, step "
           "UINT64_MAX refused at the header; ERROR text made one printable line; counts "
           "summing past 2^64 fail the apply; subnormals are taken");
    {
        static const uint64_t lens[] = { 0, 16 + 80 - 1, 16 + 80 + 1, 16 + 80 - 8 + 3, 15 };
        static const char evil[] = "bye\nps_server[0]: all 2 workers done\x1b[2J\r\x7f!";
        double sub[10];

        c.steps = 2;
        T_EQ_I(store_for(&st, &c), 0);
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            joined(&s0, &c, &st, 0);
            len = frame(buf, PROTO_PUSH, 0, 2, 0, 0, lens[i]);
            memset(buf + len, 0x7f, 128);   /* payload bytes that must not be read */
            T_TRUE(session_feed(&s0, &st, buf, len + 128, &used, err) < 0);
            T_EQ_U(used, PROTO_HEADER_SIZE);
            T_HAS(err, "worker 0");
        }
        joined(&s0, &c, &st, 0);
        len = push_frame(buf, 0, 2, UINT64_MAX, 0, 4, g, 10);
        T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_FIELD);
        T_HAS(err, "after the last step");
        T_EQ_U(store_pushes_done(&st), 0);
        T_EQ_I(store_failed(&st, NULL), 0);
        /* ERROR before HELLO, and from a joined worker. */
        for (int joined_first = 0; joined_first < 2; joined_first++) {
            int ctl = 0;

            if (joined_first)
                joined(&s0, &c, &st, 0);
            else
                session_open(&s0, &c);
            len = frame(buf, PROTO_ERROR, 0, 2, 0, 0, sizeof evil - 1);
            memcpy(buf + len, evil, sizeof evil - 1);
            T_EQ_I(session_feed(&s0, &st, buf, len + sizeof evil - 1, &used, err),
                   SESSION_PEER_ERROR);
            T_EQ_U(strlen(s0.text), sizeof evil - 1);
            for (size_t i = 0; s0.text[i]; i++)
                ctl += (unsigned char)s0.text[i] < 0x20 || s0.text[i] == 0x7f;
            T_EQ_I(ctl, 0);
            T_HAS(s0.text, "bye?ps_server[0]");
        }
        /* Two workers whose example counts add up past 2^64. */
        joined(&s0, &c, &st, 0);
        joined(&s1, &c, &st, 1);
        for (uint32_t r = 0; r < 2; r++) {
            struct session *sp = r ? &s1 : &s0;

            len = push_frame(buf, r, 2, 0, 0, UINT64_MAX / 2 + 1, g, 10);
            T_EQ_I(session_feed(sp, &st, buf, len, &used, err), SESSION_PUSH_BEGIN);
            T_EQ_I(session_feed(sp, &st, buf + used, len - used, &used, err), SESSION_PUSH_END);
        }
        T_TRUE(store_step_ready(&st));
        T_EQ_I(store_apply(&st, NULL, err), ERR_PROTO_FIELD);
        T_TRUE(store_failed(&st, NULL) != 0);
        T_EQ_D(((const double *)store_weights(&st))[0], 0.0);
        store_destroy(&st);
        /* Subnormals are finite: added, and the step applies. */
        T_EQ_I(store_for(&st, &c), 0);
        joined(&s0, &c, &st, 0);
        joined(&s1, &c, &st, 1);
        for (int i = 0; i < 10; i++)
            sub[i] = 4.9406564584124654e-324 * (i + 1);
        for (uint32_t r = 0; r < 2; r++) {
            struct session *sp = r ? &s1 : &s0;

            len = push_frame(buf, r, 2, 0, 0, 4, sub, 10);
            T_EQ_I(session_feed(sp, &st, buf, len, &used, err), SESSION_PUSH_BEGIN);
            T_EQ_I(session_feed(sp, &st, buf + used, len - used, &used, err), SESSION_PUSH_END);
        }
        T_EQ_I(store_apply(&st, NULL, err), 0);
        T_EQ_I(store_failed(&st, NULL), 0);
        store_destroy(&st);
    }
    T_END();

    /* In the modes other than sync the store counts versions (K or more a
     * step): a worker's words name its own step, and the version apart. */
    T_CASE("ps-frames-1.9", "async: a step-0 push refused while pulling says step 0 and the "
           "server's version; what a worker owes names its own next step");
    {
        struct store_cfg sc = { .n = 10, .offset = 0, .dtype = c.dtype, .world = 2, .lr = LR,
                                .weights = NULL, .per_worker = 1 };
        char what[160];

        c.steps = 40;
        T_EQ_I(store_init(&st, &sc, err), 0);
        st.step = 30;                           /* 30 versions applied, by others */
        joined(&s0, &c, &st, 0);
        s0.pulling = 1;
        len = push_frame(buf, 0, 2, 0, 0, 4, g, 10);
        T_EQ_I(session_feed(&s0, &st, buf, len, &used, err), ERR_PROTO_FIELD);
        T_HAS(err, "worker 0");
        T_HAS(err, "push for step 0 refused: the server is still sending it the weights "
              "(version 30)");
        T_TRUE(strstr(err, "step 30") == NULL);
        joined(&s0, &c, &st, 0);
        len = push_frame(buf, 0, 2, 0, 0, 4, g, 10);
        T_EQ_I(session_feed(&s0, &st, buf, 5, &used, err), 0);     /* 5 header bytes */
        session_waiting(&s0, &st, what, sizeof what);
        T_HAS(what, "its push for step 0 (its next step): 5 of");
        T_TRUE(strstr(what, "step 30") == NULL);
        store_destroy(&st);
    }
    T_END();
}

/* ================================================== egress, no sockets */

static void t_egress(void)
{
    struct link l;
    struct egress e;
    struct egress_piece pc;
    uint32_t order[16];
    uint64_t offs[16];
    int n = 0, what;

    T_CASE("ps-frames-2.1", "without the link: chunks round-robin across the workers, "
           "then DONE");
    watch(20);
    link_init(&l, 0, 0);
    T_EQ_I(egress_init(&e, 3, &l, 30, 60, 1), 0);
    egress_release(&e, 60, 0.0);            /* one frame: 40 + 60 bytes */
    while ((what = egress_next(&e, 0.0, &pc)) == EGRESS_WRITE && n < 16) {
        order[n] = pc.rank;
        offs[n++] = pc.off;
    }
    T_EQ_I(what, EGRESS_DONE);
    T_EQ_I(n, 12);          /* 4 pieces (30, 30, 30, 10) for each of 3 */
    for (int i = 0; i < n && i < 12; i++) {
        T_EQ_U(order[i], (uint32_t)(i % 3));
        T_EQ_U(offs[i], (uint64_t)(i / 3) * 30);
    }
    T_TRUE(egress_rank_done(&e, 0) && egress_rank_done(&e, 2));
    T_END();

    T_CASE("ps-frames-2.2", "a blocked worker is skipped until its write completes; DONE "
           "waits for it");
    egress_destroy(&e);
    T_EQ_I(egress_init(&e, 3, &l, 30, 20, 1), 0);
    egress_release(&e, 20, 1.0);            /* frames of 60 bytes */
    T_EQ_I(egress_next(&e, 1.0, &pc), EGRESS_WRITE);
    T_EQ_U(pc.rank, 0);
    egress_blocked(&e, 0);
    T_EQ_I(egress_next(&e, 1.0, &pc), EGRESS_WRITE);
    T_EQ_U(pc.rank, 1);
    T_EQ_I(egress_next(&e, 1.0, &pc), EGRESS_WRITE);
    T_EQ_U(pc.rank, 2);
    T_EQ_I(egress_next(&e, 1.0, &pc), EGRESS_WRITE);
    T_EQ_U(pc.rank, 1);     /* 0 is blocked */
    T_EQ_I(egress_next(&e, 1.0, &pc), EGRESS_WRITE);
    T_EQ_U(pc.rank, 2);
    T_EQ_I(egress_next(&e, 1.0, &pc), EGRESS_BLOCKED);
    T_TRUE(!egress_rank_done(&e, 0));
    T_TRUE(egress_rank_done(&e, 1));
    egress_unblocked(&e, 0, 2.0);
    T_EQ_I(egress_next(&e, 2.0, &pc), EGRESS_WRITE);
    T_EQ_U(pc.rank, 0);
    T_EQ_U(pc.off, 30);
    T_EQ_I(egress_next(&e, 2.0, &pc), EGRESS_DONE);
    T_TRUE(!egress_active(&e));
    egress_destroy(&e);
    T_END();

    T_CASE("ps-frames-2.3", "with the link: pieces of link_piece bytes, due at the link's "
           "deadlines; the last after L + K*total/B exactly (no burst)");
    {
        const double rate = 1e6, lat = 1e-3, t0 = 100.0;
        const uint64_t total = 40000;
        double due = 0, last = 0, now = t0;
        uint64_t bytes = 0;
        int waits = 0, early = 0;

        link_init(&l, rate, lat);
        T_EQ_I(egress_init(&e, 2, &l, 1u << 20, total - PROTO_HEADER_SIZE, 1), 0);
        egress_release(&e, total - PROTO_HEADER_SIZE, t0);
        for (;;) {
            what = egress_next(&e, now, &pc);
            if (what == EGRESS_WAIT) {
                waits++;
                now = pc.due;           /* a perfect timer */
                continue;
            }
            if (what != EGRESS_WRITE)
                break;
            if (pc.due > now)
                early = 1;
            T_LE((double)pc.len, (double)link_piece(&l));
            bytes += pc.len;
            due = pc.due;
            last = due;
        }
        T_EQ_I(what, EGRESS_DONE);
        T_TRUE(!early);
        T_TRUE(waits > 0);
        T_EQ_U(bytes, 2 * total);
        /* No idle credit: the last piece is due at t0 + 2*total/B + L. */
        T_NEAR(last, t0 + 2.0 * (double)total / rate + lat, 1e-9);
        egress_destroy(&e);
    }
    T_END();

    T_CASE("ps-frames-2.4", "per-bucket pull: releases go out as frames from the top down; "
           "a blocked worker gets what piled up in one frame; payload and frame counters");
    {
        uint64_t top[2] = { 1, 7 };     /* where each worker's next frame must end */
        int frames[2] = { 0, 0 }, bad = 0;

        link_init(&l, 0, 0);
        T_EQ_I(egress_init(&e, 2, &l, 1000, 10, 4), 0);   /* 10 f32 */
        T_TRUE(!egress_rank_done(&e, 0));                  /* before any step */
        egress_release(&e, 3, 5.0);                        /* [7, 10) */
        T_TRUE(egress_active(&e));
        for (int i = 0; i < 2; i++) {
            T_EQ_I(egress_next(&e, 5.0, &pc), EGRESS_WRITE);
            T_EQ_U(pc.first, 7);
            T_EQ_U(pc.count, 3);
            T_EQ_U(pc.off, 0);
            T_EQ_U(pc.len, PROTO_HEADER_SIZE + 12);
            T_TRUE(egress_at_boundary(&e, pc.rank));
            if (pc.rank == 1)
                egress_blocked(&e, 1);      /* worker 1's socket is full */
        }
        T_EQ_I(egress_next(&e, 5.0, &pc), EGRESS_BLOCKED);   /* nothing more released */
        egress_release(&e, 2, 6.0);                        /* [5, 7) */
        egress_release(&e, 4, 7.0);                        /* [1, 5) */
        T_EQ_I(egress_next(&e, 7.0, &pc), EGRESS_WRITE);
        T_EQ_U(pc.rank, 0);
        T_EQ_U(pc.first, 1);        /* both releases in one frame: [1, 7) */
        T_EQ_U(pc.count, 6);
        T_EQ_I(egress_next(&e, 7.0, &pc), EGRESS_BLOCKED);
        egress_unblocked(&e, 1, 7.5);
        egress_release(&e, 1, 8.0);                        /* [0, 1): the last */
        while ((what = egress_next(&e, 8.0, &pc)) == EGRESS_WRITE && frames[0] + frames[1] < 20) {
            if (pc.off == 0) {
                frames[pc.rank]++;
                if (pc.first + pc.count != top[pc.rank])
                    bad++;
                top[pc.rank] = pc.first;
            }
        }
        T_EQ_I(what, EGRESS_DONE);
        T_EQ_I(bad, 0);
        T_EQ_U(top[0], 0);
        T_EQ_U(top[1], 0);
        T_EQ_I(frames[0], 1);       /* worker 0: [0, 1) */
        T_EQ_I(frames[1], 1);       /* worker 1: [0, 7) at once */
        T_TRUE(egress_rank_done(&e, 0) && egress_rank_done(&e, 1));
        T_EQ_U(e.payload_out, 2 * 10 * 4);                 /* K x n x size exactly */
        T_EQ_U(e.frames_out, 2 + 1 + 2);
        egress_destroy(&e);
    }
    T_END();

    T_CASE("ps-frames-2.5", "per-bucket pull with the link: a release after an idle link "
           "gets no credit; the headers are paced too");
    {
        const double rate = 1e6, lat = 1e-3;

        link_init(&l, rate, lat);
        T_EQ_I(egress_init(&e, 1, &l, 1u << 20, 1000, 1), 0);
        egress_release(&e, 500, 10.0);
        T_EQ_I(egress_next(&e, 10.0, &pc), EGRESS_WAIT);
        T_NEAR(pc.due, 10.0 + (PROTO_HEADER_SIZE + 500) / rate + lat, 1e-12);
        T_EQ_I(egress_next(&e, pc.due, &pc), EGRESS_WRITE);
        T_EQ_I(egress_next(&e, 20.0, &pc), EGRESS_BLOCKED);
        egress_release(&e, 500, 20.0);                     /* the link idled: no burst */
        T_EQ_I(egress_next(&e, 20.0, &pc), EGRESS_WAIT);
        T_NEAR(pc.due, 20.0 + (PROTO_HEADER_SIZE + 500) / rate + lat, 1e-12);
        T_EQ_I(egress_next(&e, pc.due, &pc), EGRESS_WRITE);
        T_EQ_I(egress_next(&e, 30.0, &pc), EGRESS_DONE);
        T_EQ_U(l.bytes_out, 0);     /* the caller counts bytes written; the link paced */
        egress_destroy(&e);
    }
    T_END();
}

/* ====================================================== the real server */

struct server {
    pid_t pid;
    int port;
    char dir[64], port_path[96], err_path[96], rec_path[96];
    char log[16384];
};

static char server_bin[CLI_PATH_MAX];

/* server_start: ps_server with --listen 127.0.0.1:0 --port-file, its
 * stderr into a file, in its own process group; args end with NULL. */
static int server_start(struct server *s, const char *const *args)
{
    const char *argv[64];
    int n = 0;
    double deadline;

    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s/psframes.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(s->dir)) {
        printf("     mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    snprintf(s->port_path, sizeof s->port_path, "%s/port", s->dir);
    snprintf(s->err_path, sizeof s->err_path, "%s/err", s->dir);
    snprintf(s->rec_path, sizeof s->rec_path, "%s/rec", s->dir);
    argv[n++] = server_bin;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--port-file";
    argv[n++] = s->port_path;
    for (int i = 0; args[i] && n < 62; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    fflush(stdout);
    s->pid = fork();
    if (s->pid < 0)
        return -1;
    if (s->pid == 0) {
        int fd = open(s->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int nul = open("/dev/null", O_RDWR);

        setpgid(0, 0);
        if (fd >= 0)
            dup2(fd, 2);
        if (nul >= 0)
            dup2(nul, 1);
        execv(server_bin, (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    setpgid(s->pid, s->pid);
    live_server = s->pid;
    deadline = clock_now() + 10.0;
    while (clock_now() < deadline) {
        FILE *f = fopen(s->port_path, "r");
        int status;

        if (f) {
            int ok = fscanf(f, "%d", &s->port) == 1;
            fclose(f);
            if (ok)
                return 0;
        }
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            printf("     server exited at start (status %d)\n", status);
            return -1;
        }
        clock_sleep_until(clock_now() + 0.005);
    }
    printf("     server wrote no port file in 10 s\n");
    return -1;
}

static void server_read_log(struct server *s)
{
    FILE *f = fopen(s->err_path, "r");
    size_t n = 0;

    s->log[0] = '\0';
    if (!f)
        return;
    n = fread(s->log, 1, sizeof s->log - 1, f);
    s->log[n] = '\0';
    fclose(f);
}

/* server_wait: its exit status (128 + signal if killed), or -1 when it
 * outlived `limit` seconds (it is killed then). Reads its log. */
static int server_wait(struct server *s, double limit, double *took)
{
    double t0 = clock_now();
    int status, rc = -1;

    if (s->pid <= 0)
        return -1;
    while (clock_now() - t0 < limit) {
        pid_t p = waitpid(s->pid, &status, WNOHANG);
        if (p == s->pid) {
            rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            s->pid = 0;
            live_server = 0;
            break;
        }
        clock_sleep_until(clock_now() + 0.01);
    }
    if (took)
        *took = clock_now() - t0;
    if (s->pid > 0) {
        kill(-s->pid, SIGKILL);
        waitpid(s->pid, &status, 0);
        s->pid = 0;
    }
    server_read_log(s);
    /* A sanitizer build reports on stderr: that is a failure whatever the
     * exit status says. */
    if (strstr(s->log, "Sanitizer") || strstr(s->log, "runtime error")) {
        printf("     the server's sanitizer spoke:\n%s", s->log);
        T_TRUE(0);
    }
    return rc;
}

static void server_end(struct server *s)
{
    if (s->pid > 0) {
        kill(-s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    live_server = 0;
    unlink(s->port_path);
    unlink(s->err_path);
    unlink(s->rec_path);
    rmdir(s->dir);
}

/* server_up: start the case's server under a watchdog of watch_s
 * seconds; when it does not start, the case fails and ends here (0:
 * running). */
static int server_up(struct server *s, const char *const *args, unsigned watch_s)
{
    int rc;

    watch(watch_s);
    rc = server_start(s, args);

    T_EQ_I(rc, 0);
    if (rc != 0) {
        server_end(s);
        T_END();
    }
    return rc;
}

/* server_exit_is: the server exits with status `want` within the
 * watchdog; its log is shown when not. */
static void server_exit_is(struct server *s, int want)
{
    int rc = server_wait(s, WATCHDOG_S, NULL);

    T_EQ_I(rc, want);
    if (rc != want)
        printf("     server log:\n%s", s->log);
}

/* case_end: the case's clients (nfds descriptors, -1 for none) closed,
 * its server gone, the case ended. */
static void case_end(struct server *s, int nfds, ...)
{
    va_list ap;

    va_start(ap, nfds);
    for (int i = 0; i < nfds; i++) {
        int fd = va_arg(ap, int);
        if (fd >= 0)
            close(fd);
    }
    va_end(ap);
    server_end(s);
    T_END();
}

/* ------------------------------------------------------- raw clients */

static struct workload wl;          /* the clients' copy of the workload */
/* cl_raw: a connection that has not authenticated (a stranger's). */
static int cl_raw(const struct server *s)
{
    char err[ERR_LEN];
    int fd = -1;

    if (net_connect("127.0.0.1", s->port, 5.0, &fd, err) != 0) {
        printf("     %s\n", err);
        return -1;
    }
    return fd;
}

/* cl_open: a connection through the AUTH handshake with the job's secret. */
static int cl_open(const struct server *s)
{
    char err[ERR_LEN];
    int fd = cl_raw(s);

    if (fd >= 0 && auth_client(fd, &job_key, PROTO_AUTH_PS, clock_now() + 5.0, "server",
                               err) != 0) {
        printf("     %s\n", err);
        close(fd);
        return -1;
    }
    return fd;
}

/* cl_port: the client's own port, as the server names it. */
static int cl_port(int fd)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;

    if (getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    return ntohs(a.sin_port);
}

static int cl_send(int fd, const void *p, size_t n)
{
    char err[ERR_LEN];
    int rc = net_send_all(fd, p, n, NULL, 5.0, "server", err);

    if (rc != 0)
        printf("     send: %s\n", err);
    return rc;
}

/* cl_bye: BYE from rank of world after `step` steps, on fd. */
static void cl_bye(int fd, uint32_t rank, uint32_t world, uint64_t step)
{
    unsigned char bye[PROTO_HEADER_SIZE];

    frame(bye, PROTO_BYE, rank, world, step, 0, 0);
    cl_send(fd, bye, sizeof bye);
}

/* cl_read: up to len bytes within timeout; bytes read (fewer: EOF), or -1
 * on timeout or error. */
static long cl_read(int fd, void *buf, size_t len, double timeout)
{
    double deadline = clock_now() + timeout;
    size_t got = 0;

    while (got < len) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        double left = deadline - clock_now();
        ssize_t r;

        if (left <= 0)
            return -1;
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        r = recv(fd, (char *)buf + got, len - got, 0);
        if (r == 0)
            break;
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            if (errno == ECONNRESET)
                break;
            return -1;
        }
        got += (size_t)r;
    }
    return (long)got;
}

/* cl_recv: one frame, payload up to cap bytes into payload. 0; 1 on EOF
 * before any byte; -1 otherwise (timeout, cut frame, bad header). */
static int cl_recv(int fd, struct proto_header *h, void *payload, size_t cap, double timeout)
{
    unsigned char hb[PROTO_HEADER_SIZE];
    struct proto_limits lim = { .max_payload = cap, .world = 0, .elem_size = 0 };
    long r = cl_read(fd, hb, sizeof hb, timeout);

    if (r == 0)
        return 1;
    if (r != (long)sizeof hb)
        return -1;
    if (proto_header_decode(hb, &lim, h) != 0)
        return -1;
    if (h->length && cl_read(fd, payload, (size_t)h->length, timeout) != (long)h->length)
        return -1;
    return 0;
}

/* expect_error: the next frame is ERROR (its code and text returned) and
 * the server then closes. 1: ERROR then EOF; 0: EOF without ERROR; -1:
 * anything else. */
static int expect_error(int fd, int *code, char *text, size_t tlen, double timeout)
{
    struct proto_header h;
    char buf[PROTO_TEXT_MAX + 1];
    int rc = cl_recv(fd, &h, buf, PROTO_TEXT_MAX, timeout);

    text[0] = '\0';
    *code = 0;
    if (rc == 1)
        return 0;
    if (rc != 0 || h.type != PROTO_ERROR) {
        printf("     expected ERROR, got %s\n", rc ? "nothing" : proto_type_name(h.type));
        return -1;
    }
    buf[h.length] = '\0';
    snprintf(text, tlen, "%s", buf);
    *code = (int)(int64_t)h.aux;
    rc = cl_recv(fd, &h, buf, PROTO_TEXT_MAX, timeout);
    if (rc != 1) {
        printf("     expected EOF after the ERROR\n");
        return -1;
    }
    return 1;
}

static struct proto_hello good_hello(void)
{
    return (struct proto_hello){ .n = N_ELEMS, .dtype = DTYPE_F64,
                                 .workload = WORKLOAD_SYNTHETIC, .seed = 7,
                                 .batch = wl.batch };
}

static int cl_hello(int fd, uint32_t rank, uint32_t world, const struct proto_hello *m)
{
    unsigned char buf[PROTO_HEADER_SIZE + PROTO_HELLO_SIZE];

    frame(buf, PROTO_HELLO, rank, world, 0, 0, PROTO_HELLO_SIZE);
    proto_hello_encode(m, buf + PROTO_HEADER_SIZE);
    return cl_send(fd, buf, sizeof buf);
}

/* cl_join: connect, HELLO, WELCOME. fd or -1. */
static int cl_join(const struct server *s, uint32_t rank, uint32_t world)
{
    struct proto_hello m = good_hello();
    struct proto_header h;
    char buf[PROTO_TEXT_MAX + 1];
    int fd = cl_open(s);

    if (fd < 0)
        return -1;
    if (cl_hello(fd, rank, world, &m) != 0 || cl_recv(fd, &h, buf, PROTO_TEXT_MAX, 5.0) != 0 ||
        h.type != PROTO_WELCOME) {
        printf("     rank %u: no WELCOME\n", (unsigned)rank);
        close(fd);
        return -1;
    }
    return fd;
}

/* grad_of: worker k of kk's gradient SUM for `step` (synthetic: exact). */
static void grad_of(int k, int kk, uint64_t step, double *g, struct proto_push_meta *m)
{
    static double zero[N_ELEMS];
    uint64_t lo, hi;
    double loss = 0;

    workload_split(wl.batch, kk, k, NULL, &lo, &hi);
    memset(g, 0, N_ELEMS * sizeof *g);
    workload_grad_add(&wl, zero, step, lo, hi, g, &loss);
    m->examples = hi - lo;
    m->loss = loss;
}

static unsigned char push_buf[PROTO_HEADER_SIZE + PROTO_PUSH_META + (N_ELEMS + 1) * 8];

/* cl_push: PUSH(step, aux) with worker k's gradient; `len_elems` elements
 * announced and sent (N_ELEMS normally); nan_at >= 0 plants a NaN there. */
static int cl_push(int fd, int k, int kk, uint64_t step, uint64_t aux, size_t len_elems,
                   long nan_at)
{
    static double g[N_ELEMS + 1];
    struct proto_push_meta m;
    size_t len;

    grad_of(k, kk, step, g, &m);
    if (nan_at >= 0)
        g[nan_at] = NAN;
    len = push_frame(push_buf, (uint32_t)k, (uint32_t)kk, step, aux, m.examples, g, len_elems);
    proto_push_meta_encode(&m, push_buf + PROTO_HEADER_SIZE);
    return cl_send(fd, push_buf, len);
}

/* cl_push_counting: cl_push, but the metadata counts `examples`. */
static int cl_push_counting(int fd, int k, int kk, uint64_t step, uint64_t examples)
{
    static double g[N_ELEMS];
    struct proto_push_meta m;
    size_t len;

    grad_of(k, kk, step, g, &m);
    m.examples = examples;
    len = push_frame(push_buf, (uint32_t)k, (uint32_t)kk, step, 0, m.examples, g, N_ELEMS);
    proto_push_meta_encode(&m, push_buf + PROTO_HEADER_SIZE);
    return cl_send(fd, push_buf, len);
}

/* reference: the weights after step `step` from w (in place), computed the
 * way the server must: the full gradient F(0, B), one sgd_step. */
static void reference_step(double *w, uint64_t step)
{
    static double zero[N_ELEMS], g[N_ELEMS];

    memset(g, 0, sizeof g);
    workload_grad_add(&wl, zero, step, 0, wl.batch, g, NULL);
    sgd_step(w, g, N_ELEMS, DTYPE_F64, LR, wl.batch);
}

/* The server's flags for a job of kk workers and `steps` steps. */
#define SERVER_ARGS_T(kk, steps, tmo) "--workers", kk, "--workload", "synthetic", \
    "--params", "1003", "--dtype", "f64", "--steps", steps, "--warmup", "0", "--lr", LR_TEXT, \
    "--timeout", tmo
#define SERVER_ARGS(kk, steps) SERVER_ARGS_T(kk, steps, TMO_TEXT)

/* ------------------------------------------------------------ 3.x */

struct bad_case {
    const char *id, *name;
    int want_code;          /* 0: just closed */
    const char *want_text;
};

static void t_bad_connections(void)
{
    static const struct bad_case cases[] = {
        { "ps-frames-3.2", "garbage bytes", ERR_PROTO_MAGIC, "magic" },
        { "ps-frames-3.3", "wrong magic", ERR_PROTO_MAGIC, "magic" },
        { "ps-frames-3.4", "wrong version", ERR_PROTO_VERSION, "version 9" },
        { "ps-frames-3.5", "length 0xFFFFFFFF", ERR_PROTO_LENGTH, "cap" },
        { "ps-frames-3.6", "length UINT64_MAX", ERR_PROTO_LENGTH, "cap" },
        { "ps-frames-3.7", "HELLO with the wrong n", ERR_MISMATCH, "n = 1004" },
        { "ps-frames-3.8", "HELLO with the wrong dtype", ERR_MISMATCH, "dtype f32" },
        { "ps-frames-3.9", "a stranger's HELLO, without AUTH", ERR_PROTO_TYPE,
          "not authenticated: HELLO before the AUTH handshake" },
        { "ps-frames-3.10", "HELLO with K = 3 for a job of 2", ERR_PROTO_WORLD, "K = 3" },
        { "ps-frames-3.11", "HELLO from the taken rank 0", ERR_MISMATCH, "already joined" },
        { "ps-frames-3.12", "PUSH before HELLO", ERR_PROTO_TYPE, "before HELLO" },
        { "ps-frames-3.13", "connect and close at once", 0, NULL },
    };
    /* A longer --timeout here: the job waits for rank 1 while all this
     * happens, and that wait has the idle timeout too. */
    const char *const args[] = { SERVER_ARGS_T("2", "1", "5"), NULL };
    struct server s;
    int a = -1, b = -1, rc, code = 0;
    char text[PROTO_TEXT_MAX + 1];
    double took = 0;

    T_CASE("ps-frames-3.1", "a good worker joins first (rank 0 of 2)");
    watch(60);
    rc = server_start(&s, args);
    T_EQ_I(rc, 0);
    if (rc != 0) {
        server_end(&s);
        return;
    }
    a = cl_join(&s, 0, 2);
    T_TRUE(a >= 0);
    T_END();

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct bad_case *bc = &cases[i];
        unsigned char buf[256];
        struct proto_hello m = good_hello();
        int fd;

        T_CASE(bc->id, bc->name);
        watch((unsigned)WATCHDOG_S + 5);
        fd = i == 7 ? cl_raw(&s) : cl_open(&s);
        T_TRUE(fd >= 0);
        if (fd < 0)
            continue;
        switch (i) {
        case 0:
            memset(buf, 'x', 100);
            memcpy(buf, "GET / HTTP/1.0\r\n", 16);
            cl_send(fd, buf, 100);
            break;
        case 1: case 2: case 3: case 4: {
            struct proto_header h = proto_header_make(PROTO_HELLO, 1, 2, 0, 0, PROTO_HELLO_SIZE);
            if (i == 1)
                h.magic = 0xDEADBEEF;
            if (i == 2)
                h.version = 9;
            if (i == 3)
                h.length = 0xFFFFFFFFu;
            if (i == 4)
                h.length = UINT64_MAX;
            proto_header_encode(&h, buf);
            cl_send(fd, buf, PROTO_HEADER_SIZE);
            break;
        }
        case 5: case 6: case 7: case 8: case 9:
            /* HELLO: the wrong n, the wrong dtype, a stranger's (on a raw
             * connection), K = 3, the taken rank 0 */
            if (i == 5)
                m.n = N_ELEMS + 1;
            if (i == 6)
                m.dtype = DTYPE_F32;
            cl_hello(fd, i == 9 ? 0 : 1, i == 8 ? 3 : 2, &m);
            break;
        case 10:
            cl_push(fd, 1, 2, 0, 0, N_ELEMS, -1);
            break;
        case 11:
            close(fd);
            fd = -1;
            break;
        default:
            break;
        }
        if (fd >= 0) {
            rc = expect_error(fd, &code, text, sizeof text, WATCHDOG_S);
            T_EQ_I(rc, 1);
            T_EQ_I(code, bc->want_code);
            T_HAS(text, bc->want_text);
            close(fd);
        }
        T_END();
    }

    T_CASE("ps-frames-3.14", "after all that, rank 1 still joins; a K+1th worker is refused "
           "(the job is full); the run completes and exits 0");
    watch((unsigned)WATCHDOG_S + 10);
    b = cl_join(&s, 1, 2);
    T_TRUE(b >= 0);
    {
        struct proto_hello m = good_hello();
        int fd = cl_open(&s);

        if (fd >= 0) {
            cl_hello(fd, 1, 2, &m);
            T_EQ_I(expect_error(fd, &code, text, sizeof text, WATCHDOG_S), 1);
            T_HAS(text, "job is full");
            close(fd);
        }
    }
    if (a >= 0 && b >= 0) {
        struct proto_header h;
        static unsigned char wbuf[N_ELEMS * 8];

        T_EQ_I(cl_push(a, 0, 2, 0, 0, N_ELEMS, -1), 0);
        T_EQ_I(cl_push(b, 1, 2, 0, 0, N_ELEMS, -1), 0);
        T_EQ_I(cl_recv(a, &h, wbuf, sizeof wbuf, WATCHDOG_S), 0);
        T_EQ_U(h.type, PROTO_WEIGHTS);
        T_EQ_I(cl_recv(b, &h, wbuf, sizeof wbuf, WATCHDOG_S), 0);
        T_EQ_U(h.type, PROTO_WEIGHTS);
        cl_bye(a, 0, 2, 1);
        cl_bye(b, 1, 2, 1);
    }
    rc = server_wait(&s, WATCHDOG_S, &took);
    T_EQ_I(rc, 0);
    /* Every refusal was logged with the peer's address. */
    {
        int refused = 0;
        for (const char *p = s.log; (p = strstr(p, "refused")) != NULL; p++)
            refused++;
        T_LE(11, refused);
        T_HAS(s.log, "closed before a complete HELLO");
        T_HAS(s.log, "connection from 127.0.0.1:");
    }
    if (rc != 0)
        printf("     server log:\n%s", s.log);
    case_end(&s, 2, a, b);
}

/* A stranger that connects and says nothing is closed after --timeout,
 * while a worker's steps go on (a silent stranger is no reason to fail the
 * job; the job's own idle timeout only counts its workers). */
static void t_silent_stranger(void)
{
    const char *const args[] = { SERVER_ARGS("1", "400"), NULL };
    static unsigned char wbuf[N_ELEMS * 8];
    struct server s;
    struct proto_header h;
    char text[PROTO_TEXT_MAX + 1];
    int a, q, code = 0, refused = 0, steps = 0, ok = 1;
    double t0, took = 0;

    T_CASE("ps-frames-3.15", "connect and say nothing: ERROR and closed after --timeout, "
           "while the joined worker's steps go on; exit 0");
    if (server_up(&s, args, 90) != 0)
        return;
    a = cl_join(&s, 0, 1);
    q = cl_open(&s);
    T_TRUE(a >= 0 && q >= 0);
    t0 = clock_now();
    for (; a >= 0 && q >= 0 && steps < 400; steps++) {
        struct pollfd p = { .fd = q, .events = POLLIN };

        if (cl_push(a, 0, 1, (uint64_t)steps, 0, N_ELEMS, -1) != 0 ||
            cl_recv(a, &h, wbuf, sizeof wbuf, WATCHDOG_S) != 0 || h.type != PROTO_WEIGHTS) {
            ok = 0;
            break;
        }
        if (!refused && poll(&p, 1, 20) > 0) {
            took = clock_now() - t0;
            refused = expect_error(q, &code, text, sizeof text, WATCHDOG_S);
        }
    }
    T_TRUE(ok);
    T_EQ_I(refused, 1);
    T_EQ_I(code, ERR_TIMEOUT);
    T_HAS(text, "no complete HELLO");
    T_LE(0.5 * TMO_S, took);
    T_LE(took, WATCHDOG_S);
    if (ok && a >= 0) {

        cl_bye(a, 0, 1, 400);
    }
    server_exit_is(&s, 0);
    case_end(&s, 2, a, q);
}

/* ------------------------------------------------------------ 4.x */

static void t_full_run(void)
{
    enum { KK = 3, STEPS = 3 };
    const char *args[32] = { SERVER_ARGS("3", "3"), "--csv", NULL, NULL };
    static double wref[N_ELEMS], wgot[N_ELEMS];
    struct server s;
    int fd[KK], rc, ok = 1;
    double took;

    T_CASE("ps-frames-4.1", "3 raw clients x 3 steps: WEIGHTS equal the closed form "
           "exactly every step; BYE; exit 0");
    watch(60);
    /* The record goes to a folder of our own (the server's is made at start). */
    {
        static char rec[96];
        char tmpl[64];

        snprintf(tmpl, sizeof tmpl, "%s/psframes-rec.XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(tmpl)) {
            T_TRUE(0);
            return;
        }
        snprintf(rec, sizeof rec, "%s/rec", tmpl);
        for (int i = 0; args[i]; i++)
            if (strcmp(args[i], "--csv") == 0)
                args[i + 1] = rec;
        rc = server_start(&s, args);
        snprintf(s.rec_path, sizeof s.rec_path, "%s", rec);
    }
    T_EQ_I(rc, 0);
    if (rc != 0) {
        server_end(&s);
        return;
    }
    for (int k = 0; k < KK; k++) {
        fd[k] = cl_join(&s, (uint32_t)k, KK);
        ok &= fd[k] >= 0;
    }
    T_TRUE(ok);
    memset(wref, 0, sizeof wref);
    for (uint64_t step = 0; ok && step < STEPS; step++) {
        for (int k = 0; k < KK; k++) {
            if (k == 1 && step == 0) {
                /* The header one byte per segment, then the rest. */
                static double g[N_ELEMS];
                struct proto_push_meta m;
                size_t len;

                grad_of(k, KK, step, g, &m);
                len = push_frame(push_buf, 1, KK, step, 0, m.examples, g, N_ELEMS);
                proto_push_meta_encode(&m, push_buf + PROTO_HEADER_SIZE);
                for (int i = 0; i < PROTO_HEADER_SIZE; i++) {
                    cl_send(fd[k], push_buf + i, 1);
                    clock_sleep_until(clock_now() + 0.0005);
                }
                cl_send(fd[k], push_buf + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE);
            } else {
                ok &= cl_push(fd[k], k, KK, step, 0, N_ELEMS, -1) == 0;
            }
        }
        reference_step(wref, step);
        if (step == 0) {
            /* From w0 = 0 the first step is the closed form itself: -lr F(0,B)/B. */
            static double zero[N_ELEMS], f[N_ELEMS];
            int off = 0;

            workload_grad_add(&wl, zero, 0, 0, wl.batch, f, NULL);
            for (int i = 0; i < N_ELEMS; i++)
                off += !(wref[i] == -LR * (f[i] / (double)wl.batch));
            T_EQ_I(off, 0);
        }
        for (int k = 0; k < KK; k++) {
            struct proto_header h;
            int bad = 0;

            rc = cl_recv(fd[k], &h, wgot, sizeof wgot, WATCHDOG_S);
            T_EQ_I(rc, 0);
            if (rc != 0) {
                ok = 0;
                break;
            }
            T_EQ_U(h.type, PROTO_WEIGHTS);
            T_EQ_U(h.step, step);
            T_EQ_U(h.aux, 0);
            T_EQ_U(h.length, N_ELEMS * 8);
            T_EQ_U(h.rank, PROTO_RANK_SERVER);
            for (int i = 0; i < N_ELEMS; i++)
                if (!(wgot[i] == wref[i]) && !bad++)
                    printf("     step %llu rank %d: w[%d] = %.17g, want %.17g\n",
                           (unsigned long long)step, k, i, wgot[i], wref[i]);
            T_EQ_I(bad, 0);
        }
    }
    for (int k = 0; k < KK && ok; k++)
        cl_bye(fd[k], (uint32_t)k, KK, STEPS);
    rc = server_wait(&s, WATCHDOG_S, &took);
    T_EQ_I(rc, 0);
    T_HAS(s.log, "step 0 done (synthetic workload: no loss)");
    T_HAS(s.log, "all 3 workers done");
    if (rc != 0)
        printf("     server log:\n%s", s.log);
    for (int k = 0; k < KK; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    T_END();

    T_CASE("ps-frames-4.2", "the server's record: one step line per timed step, byte "
           "counters of K pushes and K weights frames");
    {
        struct metrics_record r;
        char err[ERR_LEN];
        const uint64_t in = KK * (uint64_t)(40 + 16 + N_ELEMS * 8);
        const uint64_t out = KK * (uint64_t)(40 + N_ELEMS * 8);

        rc = metrics_record_read(&r, s.rec_path, err);
        T_EQ_I(rc, 0);
        if (rc == 0) {
            T_STR(r.system, "ps");
            T_STR(r.role, "server");
            T_EQ_I(r.world, KK);
            T_EQ_U(r.bytes, N_ELEMS * 8);
            T_EQ_U(r.nsteps, STEPS);
            for (size_t i = 1; i < r.nsteps; i++) {     /* step 0 also holds the HELLOs */
                T_EQ_U(r.steps[i].bytes_in, in);
                T_EQ_U(r.steps[i].bytes_out, out);
                T_TRUE(r.steps[i].ingress_s >= 0 && r.steps[i].egress_s >= 0);
                T_TRUE(isnan(r.steps[i].combine_s));
            }
        } else {
            printf("     %s\n", err);
        }
        metrics_record_free(&r);
    }
    {
        char dir[96];
        snprintf(dir, sizeof dir, "%s", s.rec_path);
        *strrchr(dir, '/') = '\0';
        unlink(s.rec_path);
        rmdir(dir);
    }
    server_end(&s);
    T_END();
}

/* A rank joins once per run; and a HELLO may share a segment with the
 * first PUSH. */
static void t_more_joins(void)
{
    const char *const args[] = { SERVER_ARGS("2", "1"), NULL };
    const char *const args1[] = { SERVER_ARGS("1", "1"), NULL };
    static unsigned char wbuf[N_ELEMS * 8];
    static unsigned char both[PROTO_HEADER_SIZE + PROTO_HELLO_SIZE + sizeof push_buf];
    struct proto_hello m = good_hello();
    struct proto_header h;
    struct server s;
    char text[PROTO_TEXT_MAX + 1];
    int a, b, q, code = 0;

    T_CASE("ps-frames-3.16", "a rank that finished and left cannot join again: refused, the "
           "job is full; the run still ends with exit 0");
    if (server_up(&s, args, (unsigned)WATCHDOG_S + 20) != 0)
        return;
    a = cl_join(&s, 0, 2);
    b = cl_join(&s, 1, 2);
    T_TRUE(a >= 0 && b >= 0);
    if (a >= 0 && b >= 0) {
        T_EQ_I(cl_push(a, 0, 2, 0, 0, N_ELEMS, -1), 0);
        T_EQ_I(cl_push(b, 1, 2, 0, 0, N_ELEMS, -1), 0);
        T_EQ_I(cl_recv(a, &h, wbuf, sizeof wbuf, WATCHDOG_S), 0);
        T_EQ_I(cl_recv(b, &h, wbuf, sizeof wbuf, WATCHDOG_S), 0);
        cl_bye(a, 0, 2, 1);
        close(a);
        a = -1;
        clock_sleep_until(clock_now() + 0.2);       /* its close is seen */
        q = cl_open(&s);
        T_TRUE(q >= 0);
        if (q >= 0) {
            cl_hello(q, 0, 2, &m);
            T_EQ_I(expect_error(q, &code, text, sizeof text, WATCHDOG_S), 1);
            T_EQ_I(code, ERR_MISMATCH);
            T_HAS(text, "job is full");
            close(q);
        }
        cl_bye(b, 1, 2, 1);
    }
    server_exit_is(&s, 0);
    T_HAS(s.log, "all 2 workers done");
    case_end(&s, 2, a, b);

    T_CASE("ps-frames-4.3", "HELLO and the first PUSH in one segment: WELCOME, then the "
           "weights; exit 0");
    if (server_up(&s, args1, (unsigned)WATCHDOG_S + 20) != 0)
        return;
    q = cl_open(&s);
    T_TRUE(q >= 0);
    if (q >= 0) {
        static double g[N_ELEMS];
        struct proto_push_meta pm;
        size_t len;

        frame(both, PROTO_HELLO, 0, 1, 0, 0, PROTO_HELLO_SIZE);
        proto_hello_encode(&m, both + PROTO_HEADER_SIZE);
        grad_of(0, 1, 0, g, &pm);
        len = push_frame(both + PROTO_HEADER_SIZE + PROTO_HELLO_SIZE, 0, 1, 0, 0, pm.examples,
                         g, N_ELEMS);
        T_EQ_I(cl_send(q, both, PROTO_HEADER_SIZE + PROTO_HELLO_SIZE + len), 0);
        T_EQ_I(cl_recv(q, &h, wbuf, sizeof wbuf, WATCHDOG_S), 0);
        T_EQ_U(h.type, PROTO_WELCOME);
        T_EQ_I(cl_recv(q, &h, wbuf, sizeof wbuf, WATCHDOG_S), 0);
        T_EQ_U(h.type, PROTO_WEIGHTS);
        T_EQ_U(h.step, 0);
        cl_bye(q, 0, 1, 1);
    }
    server_exit_is(&s, 0);
    case_end(&s, 1, q);
}

/* ------------------------------------------------------------ 5.x */

/* fault_run: a 2-worker job (steps `steps`) where `act` makes worker 0
 * misbehave while worker 1 behaves; the server must exit non-zero within
 * the watchdog, its log holding every string of `want`, and worker 1 must
 * get ERROR, not WEIGHTS. */
enum fault {
    F_NAN, F_STALE, F_DUPLICATE, F_FUTURE, F_AFTER_END, F_AUX, F_SIZE, F_BYE_EARLY,
    F_CUT, F_SILENT, F_CUT_SILENT, F_COUNT_OVER, F_COUNT_SUM,
};

/* half_push: worker 1 (on b) pushes step 0 whole, worker 0 (on a) the
 * first half of its push. */
static void half_push(int a, int b)
{
    static double g[N_ELEMS];
    struct proto_push_meta m;
    size_t len;

    cl_push(b, 1, 2, 0, 0, N_ELEMS, -1);
    grad_of(0, 2, 0, g, &m);
    len = push_frame(push_buf, 0, 2, 0, 0, m.examples, g, N_ELEMS);
    cl_send(a, push_buf, len / 2);
}

static void fault_run(const char *id, const char *name, enum fault act, const char *steps,
                      const char *const *want)
{
    const char *const args[] = { SERVER_ARGS("2", steps), NULL };
    static unsigned char wbuf[N_ELEMS * 8 + PROTO_TEXT_MAX];
    struct server s;
    int a = -1, b = -1, rc, code = 0, port_a = -1;
    char text[PROTO_TEXT_MAX + 1], addr[64];

    T_CASE(id, name);
    if (server_up(&s, args, (unsigned)WATCHDOG_S + 20) != 0)
        return;
    a = cl_join(&s, 0, 2);
    b = cl_join(&s, 1, 2);
    T_TRUE(a >= 0 && b >= 0);
    if (a < 0 || b < 0)
        goto out;
    port_a = cl_port(a);
    /* Steps that go well before the fault, where the fault needs them. */
    if (act == F_NAN || act == F_STALE || act == F_AFTER_END || act == F_COUNT_SUM) {
        struct proto_header h;

        cl_push(a, 0, 2, 0, 0, N_ELEMS, -1);
        cl_push(b, 1, 2, 0, 0, N_ELEMS, -1);
        T_EQ_I(cl_recv(a, &h, wbuf, sizeof wbuf, WATCHDOG_S), 0);
        T_EQ_I(cl_recv(b, &h, wbuf, sizeof wbuf, WATCHDOG_S), 0);
        T_EQ_U(h.type, PROTO_WEIGHTS);
    }
    switch (act) {
    case F_NAN:
        cl_push(b, 1, 2, 1, 0, N_ELEMS, -1);
        cl_push(a, 0, 2, 1, 0, N_ELEMS, 5);
        break;
    case F_STALE:
        cl_push(a, 0, 2, 0, 0, N_ELEMS, -1);
        break;
    case F_COUNT_OVER:
        /* One push claiming more than the whole batch (2^62): refused at once. */
        cl_push_counting(a, 0, 2, 0, (uint64_t)1 << 62);
        break;
    case F_COUNT_SUM: {
        /* Step 1: worker 0 counts one example too few; the sum is not B. */
        uint64_t lo, hi;
        workload_split(wl.batch, 2, 0, NULL, &lo, &hi);
        cl_push(b, 1, 2, 1, 0, N_ELEMS, -1);
        cl_push_counting(a, 0, 2, 1, hi - lo - 1);
        break;
    }
    case F_DUPLICATE:
        cl_push(a, 0, 2, 0, 0, N_ELEMS, -1);
        cl_push(a, 0, 2, 0, 0, N_ELEMS, -1);
        break;
    case F_FUTURE:
        cl_push(a, 0, 2, 2, 0, N_ELEMS, -1);
        break;
    case F_AFTER_END:
        cl_push(a, 0, 2, 1, 0, N_ELEMS, -1);
        break;
    case F_AUX:
        cl_push(a, 0, 2, 0, N_ELEMS, 1, -1);     /* element N: not owned */
        break;
    case F_SIZE:
        cl_push(a, 0, 2, 0, 0, N_ELEMS + 1, -1); /* one past the end */
        break;
    case F_BYE_EARLY:
        cl_bye(a, 0, 2, 0);
        break;
    case F_CUT:
        half_push(a, b);
        clock_sleep_until(clock_now() + 0.05);
        close(a);
        a = -1;
        break;
    case F_SILENT:
        /* Worker 0 pushes, worker 1 says nothing (as if SIGSTOPped). */
        cl_push(a, 0, 2, 0, 0, N_ELEMS, -1);
        break;
    case F_CUT_SILENT:
        /* Half a push, then silence with the connection open (as if
         * SIGSTOPped mid-push), while worker 1's push is complete. */
        half_push(a, b);
        break;
    }
    if (act != F_SILENT) {
        /* Worker 1, waiting for weights, is told the run failed. */
        rc = expect_error(b, &code, text, sizeof text, WATCHDOG_S);
        T_EQ_I(rc, 1);
        T_HAS(text, "run failed");
    } else if (a >= 0) {
        double t0 = clock_now();

        rc = expect_error(a, &code, text, sizeof text, WATCHDOG_S);
        T_EQ_I(rc, 1);
        T_EQ_I(code, ERR_TIMEOUT);
        /* It waited for the timeout (lower bound only: no timing test). */
        T_LE(0.5 * TMO_S, clock_now() - t0);
    }
out:
    rc = server_wait(&s, WATCHDOG_S, NULL);
    T_EQ_I(rc, 1);
    for (int i = 0; want && want[i]; i++)
        T_HAS(s.log, want[i]);
    if (act == F_CUT || act == F_NAN || act == F_SILENT || act == F_CUT_SILENT ||
        act == F_COUNT_OVER) {
        /* The address of the worker at fault is named. */
        snprintf(addr, sizeof addr, "(127.0.0.1:%d)", act == F_SILENT ? -1 : port_a);
        if (act != F_SILENT)
            T_HAS(s.log, addr);
        else
            T_HAS(s.log, "worker 1 (127.0.0.1:");
    }
    case_end(&s, 2, a, b);
}

static void t_faults(void)
{
    static const char *const w_nan[] = { "run failed", "worker 0", "step 1", "not finite", NULL };
    static const char *const w_count_over[] = { "run failed", "worker 0", "step 0",
                                                "4611686018427387904 examples",
                                                "more than the whole batch", NULL };
    static const char *const w_count_sum[] = { "run failed", "step 1", "sum to 1023, not B = 1024",
                                               "worker 0: 511", "worker 1: 512",
                                               "weights untouched", NULL };
    static const char *const w_stale[] = { "worker 0", "step 0", "stale", NULL };
    static const char *const w_dup[] = { "worker 0", "step 0", "duplicate", NULL };
    static const char *const w_future[] = { "worker 0", "step 2", "future", NULL };
    static const char *const w_end[] = { "worker 0", "step 1", "after the last step", NULL };
    static const char *const w_aux[] = { "worker 0", "step 0", "starts at element 1003", NULL };
    static const char *const w_size[] = { "worker 0", "step 0", "payload bytes", NULL };
    static const char *const w_bye[] = { "worker 0", "BYE at step 0", NULL };
    static const char *const w_cut[] = { "worker 0", "step 0", "cut off", NULL };
    static const char *const w_silent[] = { "no progress", "worker 1", "no push for step 0",
                                            NULL };
    static const char *const w_cut_silent[] = { "no progress", "worker 0", "step 0",
                                                "push for step 0: 4040 of 8080 bytes", NULL };

    fault_run("ps-frames-5.1", "a NaN in a push fails the run naming worker and step; the "
              "other worker gets ERROR, no new weights", F_NAN, "3", w_nan);
    fault_run("ps-frames-5.14", "a push counting 2^62 examples (more than B) fails the run at "
              "once naming worker and step; the other worker gets ERROR", F_COUNT_OVER, "3",
              w_count_over);
    fault_run("ps-frames-5.15", "counts that do not sum to B fail the step naming it, the sum "
              "and each worker's count; the other worker gets ERROR", F_COUNT_SUM, "3",
              w_count_sum);
    fault_run("ps-frames-5.2", "a stale push (step 0 again at step 1) fails the run", F_STALE,
              "3", w_stale);
    fault_run("ps-frames-5.3", "a duplicate push fails the run", F_DUPLICATE, "3", w_dup);
    fault_run("ps-frames-5.4", "a push from the future fails the run", F_FUTURE, "3", w_future);
    fault_run("ps-frames-5.5", "a push after the last step fails the run", F_AFTER_END, "1",
              w_end);
    fault_run("ps-frames-5.6", "a push for the wrong element range (aux) fails the run",
              F_AUX, "3", w_aux);
    fault_run("ps-frames-5.7", "a push of the wrong size fails the run", F_SIZE, "3", w_size);
    fault_run("ps-frames-5.8", "BYE before the last step fails the run", F_BYE_EARLY, "3",
              w_bye);
    fault_run("ps-frames-5.9", "a worker cut off mid-push: exit non-zero within the watchdog "
              "naming rank and address", F_CUT, "3", w_cut);
    fault_run("ps-frames-5.10", "a silent worker (stalled): the idle timeout names it", F_SILENT,
              "3", w_silent);
    fault_run("ps-frames-5.11", "a push cut off, then silence (connection open): named with "
              "how far it got, by its own clock; the other worker gets ERROR", F_CUT_SILENT,
              "3", w_cut_silent);
}

/* big_push: a PUSH of `count` f64 zeros for `step` from rank k of kk with
 * `examples`, written into buf (40 + 16 + count * 8 bytes). */
static size_t big_push(unsigned char *buf, uint32_t k, uint32_t kk, uint64_t step, size_t count,
                       uint64_t examples)
{
    struct proto_push_meta m = { .examples = examples, .loss = 0.0 };

    frame(buf, PROTO_PUSH, k, kk, step, 0, PROTO_PUSH_META + count * 8);
    proto_push_meta_encode(&m, buf + PROTO_HEADER_SIZE);
    memset(buf + PROTO_HEADER_SIZE + PROTO_PUSH_META, 0, count * 8);
    return PROTO_HEADER_SIZE + PROTO_PUSH_META + count * 8;
}

/* A worker that stops reading its weights: its socket fills, the server's
 * write to it waits, and the worker's own clock names it after --timeout,
 * while the other worker, which took its weights and pushed the next step,
 * is told. 16 MiB of weights: far more than the sockets between them hold. */
static void t_stalled_reader(void)
{
    enum { BIG = 2 << 20 };
    const char *const args[] = { "--workers", "2", "--workload", "synthetic", "--params", "2M",
                                 "--dtype", "f64", "--steps", "3", "--warmup", "0", "--lr",
                                 LR_TEXT, "--timeout", TMO_TEXT, NULL };
    size_t cap = PROTO_HEADER_SIZE + PROTO_PUSH_META + (size_t)BIG * 8, len;
    unsigned char *buf = malloc(cap);
    struct proto_hello m = good_hello();
    struct proto_header h;
    struct server s;
    int fd[2] = { -1, -1 }, rc, code = 0;
    char text[PROTO_TEXT_MAX + 1];

    T_CASE("ps-frames-5.12", "a worker that stops reading its weights (its socket full): "
           "named after --timeout as not taking them; the other worker gets ERROR");
    watch((unsigned)WATCHDOG_S + 30);
    T_TRUE(buf != NULL);
    rc = buf ? server_start(&s, args) : -1;
    T_EQ_I(rc, 0);
    if (rc != 0) {
        free(buf);
        server_end(&s);
        T_END();
        return;
    }
    m.n = BIG;
    for (uint32_t k = 0; k < 2; k++) {
        struct proto_header w;
        char small[PROTO_TEXT_MAX + 1];

        fd[k] = cl_open(&s);
        if (fd[k] < 0 || cl_hello(fd[k], k, 2, &m) != 0 ||
            cl_recv(fd[k], &w, small, PROTO_TEXT_MAX, 5.0) != 0 || w.type != PROTO_WELCOME)
            T_TRUE(0);
    }
    if (fd[0] >= 0 && fd[1] >= 0) {
        for (uint32_t k = 0; k < 2; k++) {
            len = big_push(buf, k, 2, 0, BIG, 512);    /* B 1024: half each */
            T_EQ_I(cl_send(fd[k], buf, len), 0);
        }
        /* Worker 1 takes its weights and pushes step 1; worker 0 reads nothing. */
        T_EQ_I(cl_recv(fd[1], &h, buf, cap, WATCHDOG_S), 0);
        T_EQ_U(h.type, PROTO_WEIGHTS);
        len = big_push(buf, 1, 2, 1, BIG, 512);
        T_EQ_I(cl_send(fd[1], buf, len), 0);
        rc = expect_error(fd[1], &code, text, sizeof text, WATCHDOG_S);
        T_EQ_I(rc, 1);
        T_EQ_I(code, ERR_TIMEOUT);
        T_HAS(text, "worker 0 (127.0.0.1:");
    }
    server_exit_is(&s, 1);
    T_HAS(s.log, "run failed: worker 0 (127.0.0.1:");
    T_HAS(s.log, "not taking the weights of step 0");
    for (int k = 0; k < 2; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    free(buf);
    server_end(&s);
    T_END();
}

/* The server itself stopped (SIGSTOP, a loaded machine) for longer than
 * --timeout while a worker's push arrives: when it runs again, that time
 * is no one's silence; it takes the push and the run completes. */
static void t_server_stalled(void)
{
    const char *const args[] = { SERVER_ARGS("1", "1"), NULL };
    static unsigned char wbuf[N_ELEMS * 8];
    struct proto_header h;
    struct server s;
    int a, rc;

    T_CASE("ps-frames-5.13", "the server stopped for 2.5 x --timeout while a push arrives: "
           "nobody is blamed, the step completes, exit 0");
    if (server_up(&s, args, (unsigned)WATCHDOG_S + 20) != 0)
        return;
    a = cl_join(&s, 0, 1);
    T_TRUE(a >= 0);
    if (a >= 0) {
        kill(-s.pid, SIGSTOP);
        T_EQ_I(cl_push(a, 0, 1, 0, 0, N_ELEMS, -1), 0);
        clock_sleep_until(clock_now() + 2.5 * TMO_S);
        kill(-s.pid, SIGCONT);
        rc = cl_recv(a, &h, wbuf, sizeof wbuf, WATCHDOG_S);
        T_EQ_I(rc, 0);
        T_EQ_U(h.type, PROTO_WEIGHTS);
        cl_bye(a, 0, 1, 1);
    }
    server_exit_is(&s, 0);
    case_end(&s, 1, a);
}

/* ================================================================ main */

int main(void)
{
    struct workload_cfg wc = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F64, .seed = 7,
                               .params = N_ELEMS, .batch = 0 };
    const char *bin = getenv("PSR_BIN");
    struct stat st;

    signal(SIGALRM, on_alarm);
    signal(SIGPIPE, SIG_IGN);
    t_session_hello();
    t_session_push();
    t_egress();
    T_END();

    if (workload_create(&wl, &wc) != 0) {
        T_CASE("ps-frames-0.1", "the synthetic workload builds");
        T_TRUE(0);
        return t_done();
    }
    /* The job's secret, in our environment: the servers inherit it. */
    setenv("PSRING_SECRET", SECRET_TEXT, 1);
    if (auth_key_load(&job_key, NULL, SECRET_TEXT, NULL) != 0)
        return t_done();
    snprintf(server_bin, sizeof server_bin, "%s/ps_server", bin ? bin : "bin");
    if (stat(server_bin, &st) != 0 || !(st.st_mode & S_IXUSR)) {
        t_skip("ps-frames-3.x", "bad connections, full run, faults",
               "no ps_server in $PSR_BIN");
        workload_destroy(&wl);
        return t_done();
    }
    t_bad_connections();
    t_silent_stranger();
    t_full_run();
    t_more_joins();
    t_faults();
    t_stalled_reader();
    t_server_stalled();
    workload_destroy(&wl);
    alarm(0);
    return t_done();
}
