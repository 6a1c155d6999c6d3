/* test_ps_server.c -- the parameter server's protocol (common/ps/server.h)
 * without sockets and without libuv: a fake transport fills the table
 * (struct server_io) with in-memory buffers and a made-up clock, and the
 * test plays the workers' bytes into server_conn_read and reads what the
 * server wrote. It shows that the protocol reaches its transport only
 * through the table, and it checks the events a transport sees.
 *
 *   ps-server-1.1  two workers: AUTH, HELLO, WELCOME through the table;
 *                  reading started at accept
 *   ps-server-1.2  a step: both push, each gets one WEIGHTS frame with the
 *                  updated weights (w - lr * sum / B, exact)
 *   ps-server-1.3  BYE from both: exit 0, every connection closed through
 *                  the table, then io->over(0)
 *   ps-server-1.4  a socket that takes a few bytes at a time: the rest is
 *                  queued (SERVER_WRITE_WEIGHTS), the worker owes it until
 *                  server_written
 *   ps-server-1.5  a worker lost mid-step: the run fails (exit 1), the
 *                  other worker is sent ERROR and shut down (linger), the
 *                  tick closes it
 *   ps-server-1.6  the machine through the table (struct server_machine):
 *                  a fake CPU clock and fake load samples are what the
 *                  record's cpu_s, wall_s, machine0 and machine1 hold, the
 *                  fake peak RSS is the last line's, the test hook is
 *                  called once per applied step
 *   ps-server-1.7  ... and in async (server_mode.c's end of the timed part)
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "check.h"
#include "ps/server.h"
#include "wire/auth.h"
#include "train/workload.h"
#include "wire/proto.h"

#define K      2
#define N      10
#define LR     0.5
#define OUTCAP 8192

/* ------------------------------------------------------ the fake transport */

/* A connection of the fake transport: struct conn first (server.h,
 * OWNERSHIP), what the server wrote, and the transport's own state. */
struct fconn {
    struct conn c;
    unsigned char out[OUTCAP];      /* every byte the server wrote, in order */
    size_t out_len;
    size_t take;                    /* try_write takes at most this much */
    struct server_buf q[3][2];      /* a queued write per slot */
    unsigned qn[3];
    int reading, shut, close_asked, closed;
};

struct fake {
    struct server srv;              /* first: the table's struct server * */
    double t;                       /* the made-up clock */
    double timer_at;                /* the earliest timer_want since cleared */
    int over_calls;
    unsigned over_nconns;
    /* the made-up machine (struct server_machine) */
    double cpu;                     /* what cpu_s returns */
    int loads;                      /* load calls: sample i has total 1000 (i + 1) */
    int kills;                      /* test_kill calls ... */
    uint64_t kill_step;             /* ... and the last one's step */
    char last[256];                 /* the last log line (log_sink) */
};

static struct fake fk;
static struct fconn fc[K];

static struct fconn *fcon(struct conn *c)
{
    return (struct fconn *)(void *)c;
}

static void out_append(struct fconn *f, const unsigned char *p, size_t n)
{
    T_TRUE(f->out_len + n <= OUTCAP);
    if (f->out_len + n > OUTCAP)
        return;
    memcpy(f->out + f->out_len, p, n);
    f->out_len += n;
}

static double io_now(const struct server *srv)
{
    (void)srv;
    return fk.t;
}

static int io_try_write(struct conn *c, const struct server_buf *b, unsigned nb)
{
    struct fconn *f = fcon(c);
    size_t room = f->take, took = 0;

    for (unsigned i = 0; i < nb && room > 0; i++) {
        size_t n = b[i].len < room ? b[i].len : room;

        out_append(f, b[i].p, n);
        took += n;
        room -= n;
    }
    return (int)took;
}

static int io_write(struct conn *c, enum server_write slot, const struct server_buf *b,
                    unsigned nb)
{
    struct fconn *f = fcon(c);

    T_EQ_I(f->qn[slot], 0);         /* one queued write per slot */
    for (unsigned i = 0; i < nb; i++)
        f->q[slot][i] = b[i];
    f->qn[slot] = nb;
    return 0;
}

static int io_read_start(struct conn *c)
{
    fcon(c)->reading = 1;
    return 0;
}

static void io_read_stop(struct conn *c)
{
    fcon(c)->reading = 0;
}

static int io_shutdown(struct conn *c)
{
    fcon(c)->shut = 1;
    return 0;
}

static void io_close(struct conn *c)
{
    fcon(c)->close_asked = 1;
}

static void io_timer_want(struct server *srv, double t)
{
    (void)srv;
    if (t < fk.timer_at)
        fk.timer_at = t;
}

static void io_over(struct server *srv, unsigned nconns)
{
    (void)srv;
    fk.over_calls++;
    fk.over_nconns = nconns;
}

static const char *io_strerror(int code)
{
    return strerror(-code);
}

/* The made-up machine: values no real machine gives at these calls, so
 * that finding them in the record shows the protocol read them here. */
static double machine_cpu_s(const struct server *srv)
{
    (void)srv;
    return fk.cpu;
}

static void machine_load(const struct server *srv, struct hostload_sample *s)
{
    (void)srv;
    fk.loads++;
    *s = (struct hostload_sample){ .ok = 1, .total = 1000u * (unsigned)fk.loads,
                                   .busy = 7u * (unsigned)fk.loads, .running = fk.loads,
                                   .wait_ns = 42 * fk.loads };
}

static double machine_peak_rss_mib(const struct server *srv)
{
    (void)srv;
    return 12.5;
}

static void machine_test_kill(struct server *srv, uint64_t step)
{
    (void)srv;
    fk.kills++;
    fk.kill_step = step;
}

static const struct server_machine fake_machine = {
    .cpu_s = machine_cpu_s, .load = machine_load, .peak_rss_mib = machine_peak_rss_mib,
    .test_kill = machine_test_kill,
};

static const struct server_io fake_io = {
    .now = io_now, .try_write = io_try_write, .write = io_write,
    .read_start = io_read_start, .read_stop = io_read_stop, .shutdown = io_shutdown,
    .close = io_close, .timer_want = io_timer_want, .over = io_over,
    .strerror = io_strerror, .machine = &fake_machine,
};

/* keep_line: the protocol's log lines (log_sink): the run's last line
 * with its peak RSS kept. */
static void keep_line(const char *msg)
{
    if (strstr(msg, "peak RSS"))
        snprintf(fk.last, sizeof fk.last, "%s", msg);
}

/* complete: the queued write of slot on f goes out in full. */
static void complete(struct fconn *f, enum server_write slot)
{
    unsigned nb = f->qn[slot];

    for (unsigned i = 0; i < nb; i++)
        out_append(f, f->q[slot][i].p, f->q[slot][i].len);
    f->qn[slot] = 0;
    server_written(&f->c, slot, 0);
}

/* closes: the transport finishes every close asked for. */
static void closes(void)
{
    for (int i = 0; i < K; i++)
        if (fc[i].close_asked && !fc[i].closed) {
            fc[i].closed = 1;
            server_conn_closed(&fc[i].c);
        }
}

/* ------------------------------------------------------------- set-up */

/* server_make_mode: what ps_server/setup.c builds from the flags, by hand: K
 * workers, synthetic f64 n = 10, B = 8, `steps` steps, sync (or `mode`),
 * no link. */
static int server_make_mode(int steps, int mode)
{
    struct server *srv = &fk.srv;
    char err[ERR_LEN];

    memset(&fk, 0, sizeof fk);
    memset(fc, 0, sizeof fc);
    fk.t = 100.0;
    fk.timer_at = INFINITY;
    srv->io = &fake_io;
    srv->f.c.steps = steps;
    srv->f.c.dtype = DTYPE_F64;
    srv->f.c.target_loss = NAN;
    srv->f.local_worker = -1;
    srv->f.shard_s = 1;
    srv->f.mode_cfg.kind = mode;
    srv->k = K;
    srv->es = sizeof(double);
    srv->timeout = 5.0;
    srv->linger_s = 0.5;
    srv->rcap = 4096;
    srv->scfg = (struct session_cfg){ .world = K, .n = N, .lo = 0, .hi = N,
                                      .dtype = DTYPE_F64, .workload = WORKLOAD_SYNTHETIC,
                                      .seed = 7, .key = &srv->f.key, .batch = 8,
                                      .steps = (uint64_t)steps };
    if (store_init(&srv->store, &(struct store_cfg){ .n = N, .dtype = DTYPE_F64, .world = K,
                                                     .lr = LR, .batch = 8, .count_max = 8,
                                                     .batch_what = "B",
                                                     .per_worker = mode != MODE_SYNC },
                   err) != 0 ||
        link_setup(&srv->link, 0, 0, NULL, err) != 0 ||
        mode_init(&srv->mode, &srv->f.mode_cfg, K, 0, err) != 0) {
        printf("     %s\n", err);
        return -1;
    }
    if (server_alloc(srv, 1u << 20, fk.t) != 0)
        return -1;
    server_start(srv);
    return 0;
}

/* ------------------------------------------------------------- workers */

/* feed: bytes from worker i, as one read into the server's buffer. */
static void feed(int i, const void *p, size_t n)
{
    unsigned char *buf;
    size_t cap;

    server_conn_buffer(&fc[i].c, &buf, &cap);
    T_TRUE(n <= cap);
    memcpy(buf, p, n);
    server_conn_read(&fc[i].c, buf, n);
}

/* join: worker i connects, passes AUTH (unkeyed, auth.h) and says HELLO.
 * Returns the offset in its output just past the server's A2. */
static size_t join(int i)
{
    struct auth_hs hs;
    uint8_t a1[AUTH_FRAME], a3[AUTH_FRAME];
    unsigned char hello[PROTO_HEADER_SIZE + PROTO_HELLO_SIZE];
    struct proto_header h = proto_header_make(PROTO_HELLO, (uint32_t)i, K, 0, 0,
                                              PROTO_HELLO_SIZE);
    struct proto_hello m = { .n = N, .dtype = DTYPE_F64, .workload = WORKLOAD_SYNTHETIC,
                             .seed = 7, .batch = 8 };
    char why[ERR_LEN];
    char peer[32];

    fc[i].take = SIZE_MAX;
    server_conn_add(&fk.srv, &fc[i].c);
    snprintf(peer, sizeof peer, "fake:%d", i);
    server_conn_ready(&fc[i].c, peer);
    T_EQ_I(fc[i].reading, 1);
    auth_hs_init(&hs, &fk.srv.f.key, PROTO_AUTH_PS);
    auth_open(&hs, a1);
    feed(i, a1, sizeof a1);
    T_EQ_U(fc[i].out_len, AUTH_FRAME);  /* A2, through try_write */
    T_EQ_I(auth_prove(&hs, fc[i].out, AUTH_FRAME, a3, why), 0);
    feed(i, a3, sizeof a3);
    proto_header_encode(&h, hello);
    proto_hello_encode(&m, hello + PROTO_HEADER_SIZE);
    feed(i, hello, sizeof hello);
    return AUTH_FRAME;
}

/* frame_at: the header of the frame at out[*at] of worker i, *at moved
 * past it and its payload (OUT: *payload). 0, or -1: none there. */
static int frame_at(int i, size_t *at, struct proto_header *h, const unsigned char **payload)
{
    const struct proto_limits lim = { 1u << 20, 0, 0 };

    if (*at + PROTO_HEADER_SIZE > fc[i].out_len)
        return -1;
    (void)proto_header_decode(fc[i].out + *at, &lim, h);
    if (*at + PROTO_HEADER_SIZE + h->length > fc[i].out_len)
        return -1;
    *payload = fc[i].out + *at + PROTO_HEADER_SIZE;
    *at += PROTO_HEADER_SIZE + h->length;
    return 0;
}

/* push: worker i pushes step `step`: g[j] = j + 1, 4 examples. */
static void push(int i, uint64_t step)
{
    unsigned char buf[PROTO_HEADER_SIZE + PROTO_PUSH_META + N * sizeof(double)];
    struct proto_header h = proto_header_make(PROTO_PUSH, (uint32_t)i, K, step, 0,
                                              PROTO_PUSH_META + N * sizeof(double));
    struct proto_push_meta m = { .examples = 4, .loss = 0.0 };

    proto_header_encode(&h, buf);
    proto_push_meta_encode(&m, buf + PROTO_HEADER_SIZE);
    for (int j = 0; j < N; j++)
        proto_put_f64(buf + PROTO_HEADER_SIZE + PROTO_PUSH_META + j * sizeof(double),
                      (double)(j + 1));
    feed(i, buf, sizeof buf);
}

static void bye(int i, uint64_t step)
{
    unsigned char buf[PROTO_HEADER_SIZE];
    struct proto_header h = proto_header_make(PROTO_BYE, (uint32_t)i, K, step, 0, 0);

    proto_header_encode(&h, buf);
    feed(i, buf, sizeof buf);
}

/* weights_ok: the WEIGHTS payload of step 0 is -(j + 1) / 8: 0 - 0.5 *
 * (2 (j + 1)) / 8, exact. */
static void weights_ok(const struct proto_header *h, const unsigned char *p)
{
    T_EQ_U(h->type, PROTO_WEIGHTS);
    T_EQ_U(h->aux, 0);
    T_EQ_U(h->length, N * sizeof(double));
    for (int j = 0; j < N; j++)
        T_EQ_D(proto_get_f64(p + j * sizeof(double)), -(double)(j + 1) / 8.0);
}

/* joined: the server made for `steps` steps (sync, or `mode`), then every
 * worker joined and its WELCOME for step 0 read (OUT: at[i], past it in
 * worker i's bytes). */
static void joined_mode(int steps, int mode, size_t at[K])
{
    struct proto_header h;
    const unsigned char *p;

    T_EQ_I(server_make_mode(steps, mode), 0);
    for (int i = 0; i < K; i++) {
        at[i] = join(i);
        T_EQ_I(frame_at(i, &at[i], &h, &p), 0);
        T_EQ_U(h.type, PROTO_WELCOME);
        T_EQ_U(h.step, 0);
    }
}

static void joined(int steps, size_t at[K])
{
    joined_mode(steps, MODE_SYNC, at);
}

/* ------------------------------------------------------------- cases */

static void t_join_and_step(void)
{
    size_t at[K];
    struct proto_header h;
    const unsigned char *p;

    T_CASE("ps-server-1.1", "two workers: AUTH, HELLO and WELCOME through the table; "
           "reading started at accept");
    joined(1, at);
    T_EQ_U(fk.srv.joined, K);
    T_EQ_I(fk.over_calls, 0);
    T_END();

    T_CASE("ps-server-1.2", "a step: both push, each gets one WEIGHTS frame of "
           "w - lr * sum / B, exactly");
    push(0, 0);
    T_EQ_I(frame_at(0, &at[0], &h, &p), -1);    /* nothing before the barrier */
    push(1, 0);
    for (int i = 0; i < K; i++) {
        T_EQ_I(frame_at(i, &at[i], &h, &p), 0);
        weights_ok(&h, p);
        T_EQ_U(h.step, 0);
    }
    T_EQ_U(store_step(&fk.srv.store), 1);
    T_END();

    T_CASE("ps-server-1.3", "BYE from both after the last step: exit 0, every connection "
           "closed through the table, then io->over(0)");
    bye(0, 1);
    bye(1, 1);
    T_EQ_I(fk.srv.over, 1);
    T_EQ_I(fk.srv.exit_code, 0);
    T_EQ_I(fc[0].close_asked && fc[1].close_asked, 1);
    closes();
    T_EQ_U(fk.srv.nconns, 0);
    T_EQ_U(fk.over_nconns, 0);
    T_EQ_I(server_end(&fk.srv), 0);
    server_free(&fk.srv);
    T_END();
}

static void t_slow_socket(void)
{
    size_t at[K];
    struct proto_header h;
    const unsigned char *p;

    T_CASE("ps-server-1.4", "a socket taking 7 bytes a time: the rest of a WEIGHTS piece "
           "is queued on SERVER_WRITE_WEIGHTS, the worker owes it until server_written");
    joined(2, at);
    fc[1].take = 7;
    push(0, 0);
    push(1, 0);
    T_EQ_I(frame_at(0, &at[0], &h, &p), 0);
    weights_ok(&h, p);
    T_EQ_U(fc[1].out_len - at[1], 7);           /* what the socket took */
    T_TRUE(fc[1].qn[SERVER_WRITE_WEIGHTS] > 0);
    T_EQ_I(fc[1].c.ses.pulling, 1);
    T_EQ_I(egress_rank_done(&fk.srv.eg, 1), 0);
    complete(&fc[1], SERVER_WRITE_WEIGHTS);
    T_EQ_I(fc[1].c.ses.pulling, 0);
    T_EQ_I(frame_at(1, &at[1], &h, &p), 0);
    weights_ok(&h, p);
    T_EQ_I(fk.srv.over, 0);
    T_END();

    T_CASE("ps-server-1.5", "a worker lost mid-step fails the run (exit 1): the other is "
           "sent ERROR and shut down, both closed in the end");
    fc[1].take = SIZE_MAX;
    push(0, 1);
    server_conn_lost(&fc[1].c, "connection reset by peer");
    T_EQ_I(fk.srv.over, 1);
    T_EQ_I(fk.srv.exit_code, 1);
    T_EQ_I(fc[1].close_asked, 1);
    T_EQ_I(fc[0].shut, 1);                      /* lingering: ERROR, then drain */
    T_EQ_I(fc[0].c.lingering, 1);
    T_EQ_I(frame_at(0, &at[0], &h, &p), 0);
    T_EQ_U(h.type, PROTO_ERROR);
    T_TRUE(h.length > 0 && memmem(p, h.length, "worker 1", 8) != NULL);
    T_EQ_I(fc[0].close_asked, 0);
    fk.t += 1.0;                                /* past linger_s: the tick closes it */
    server_tick(&fk.srv);
    T_EQ_I(fc[0].close_asked, 1);
    closes();
    T_EQ_U(fk.over_nconns, 0);
    T_EQ_I(server_end(&fk.srv), 1);
    server_free(&fk.srv);
    T_END();
}

/* timed_step: the one step of a 1-step run, both workers pushing, with
 * the made-up CPU clock at 3.0 s when the first push comes (the timed
 * part begins) and 4.25 s when the second does (in sync its weights go
 * out at once: the timed part ends), the wall clock 2 s later; then both
 * say BYE, and the run ends. */
static void timed_step(void)
{
    fk.cpu = 3.0;
    push(0, 0);
    fk.cpu = 4.25;
    fk.t += 2.0;
    push(1, 0);
    bye(0, 1);
    bye(1, 1);
}

/* machine_ok: what timed_step leaves in the record: the fake clock's
 * 1.25 s, the wall clock's 2 s, the first and second load samples. */
static void machine_ok(void)
{
    const struct metrics_record *r = &fk.srv.rec;

    T_EQ_D(r->cpu_s, 1.25);
    T_EQ_D(r->wall_s, 2.0);
    T_EQ_I(fk.loads, 2);
    T_EQ_I(r->machine0.ok, 1);
    T_EQ_U(r->machine0.total, 1000);
    T_EQ_U(r->machine0.busy, 7);
    T_EQ_I(r->machine0.running, 1);
    T_EQ_I(r->machine0.wait_ns, 42);
    T_EQ_U(r->machine1.total, 2000);
    T_EQ_I(r->machine1.running, 2);
}

static void t_machine(void)
{
    size_t at[K];

    T_CASE("ps-server-1.6", "the machine through the table: a fake CPU clock and load "
           "samples in the record's cpu_s, wall_s, machine0/1; the fake peak RSS in the "
           "last line; the test hook once per applied step");
    joined(1, at);
    log_sink(keep_line);
    timed_step();
    T_EQ_I(fk.srv.over, 1);
    T_EQ_I(fk.srv.exit_code, 0);
    machine_ok();
    T_EQ_I(fk.kills, 1);
    T_EQ_U(fk.kill_step, 0);
    closes();
    T_EQ_I(server_end(&fk.srv), 0);
    log_sink(NULL);
    T_HAS(fk.last, "peak RSS 12.5 MiB");
    T_HAS(fk.last, "all 2 workers done after 1 steps");
    server_free(&fk.srv);
    T_END();

    T_CASE("ps-server-1.7", "async: the timed part ends when every worker has pushed the "
           "last step (server_mode.c), read through the same table");
    joined_mode(1, MODE_ASYNC, at);
    timed_step();
    T_EQ_I(fk.srv.exit_code, 0);
    machine_ok();
    T_EQ_I(fk.kills, 0);            /* async applies no server step (resume.h) */
    closes();
    T_EQ_I(server_end(&fk.srv), 0);
    server_free(&fk.srv);
    T_END();
}

int main(void)
{
    log_init("test_ps_server", 0);
    t_join_and_step();
    t_slow_socket();
    t_machine();
    return t_done();
}
