/* test_ps_worker.c -- the worker's protocol client (common/ps/client.c)
 * against scripted fake servers on 127.0.0.1, one pthread each: the
 * frames it sends (HELLO, PUSH slices with aux = the shard's first
 * element, BYE), the ranges it takes from the WELCOMEs (uneven ones, and
 * gaps and overlaps refused), the weights it takes back (in parts, from
 * the top down: per-bucket pull), and every way a server can
 * let it down (ERROR at hello or mid-run, a wrong header, EOF, silence),
 * each reported with the server's index and address and the step. The
 * real ps_server is exercised by tests/t_ps_*.sh. A SIGALRM watchdog turns
 * a hang into a failing case.
 *
 *   ps-worker-1.x  happy paths      ps-worker-2.x  server faults
 *   ps-worker-3.x  bad setup
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ps/client.h"
#include "wire/auth.h"
#include "check.h"
#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "wire/net.h"
#include "wire/proto.h"
#include "train/workload.h"

#define N 10            /* parameters (f64) */
#define STEPS 3

static void on_alarm(int sig)
{
    static const char msg[] = "FAIL ps-worker-watchdog a case hung past its watchdog\n";
    (void)sig;
    (void)!write(STDOUT_FILENO, msg, sizeof msg - 1);
    _exit(1);
}

enum fake_mode {
    FAKE_OK,            /* serve every step, then expect BYE */
    FAKE_HELLO_ERROR,   /* answer the hello with ERROR */
    FAKE_STEP_ERROR,    /* ERROR instead of the weights of step 1 */
    FAKE_BAD_STEP,      /* WEIGHTS of step 1 labelled step 6 */
    FAKE_CLOSE,         /* close after reading the push of step 1 */
    FAKE_SILENT,        /* read the push of step 1, then say nothing */
    FAKE_PARTS,         /* take each step's pushes in any frames from the top
                           down, noting step 0's (first:count) in parts */
};

/* One scripted server shard. */
struct fake {
    int lfd, port, mode;
    uint64_t lo, hi;
    int bye;            /* BYE seen */
    char told[300];     /* the text of an ERROR frame the worker sent */
    char bad[256];      /* what the fake saw that it did not expect */
    char parts[256];    /* FAKE_PARTS: step 0's push frames, "first:count " each */
    pthread_t th;
};

/* The gradient a test worker pushes at step s, and the weights a fake
 * server answers with: distinct per element and step. */
static double grad_value(size_t i, uint64_t s)
{
    return (double)i + 0.5 * (double)s;
}

static double weight_value(size_t i, uint64_t s)
{
    return -(double)i - 100.0 * (double)(s + 1);
}

static int recv_head(int fd, struct proto_header *h)
{
    unsigned char b[PROTO_HEADER_SIZE];
    struct proto_limits lim = { .max_payload = 1 << 20, .world = 0, .elem_size = 0 };
    int rc = net_recv_all(fd, b, sizeof b, NULL, 10.0, "worker", NULL);
    return rc != 0 ? rc : proto_header_decode(b, &lim, h);
}

static int send_frame(int fd, uint16_t type, uint64_t step, uint64_t aux, const void *p,
                      size_t len)
{
    unsigned char b[PROTO_HEADER_SIZE];
    struct proto_header h = proto_header_make(type, PROTO_RANK_SERVER, 1, step, aux, len);
    int rc;

    proto_header_encode(&h, b);
    rc = net_send_all(fd, b, sizeof b, NULL, 10.0, "worker", NULL);
    return rc != 0 || len == 0 ? rc : net_send_all(fd, p, len, NULL, 10.0, "worker", NULL);
}

/* parts_take (FAKE_PARTS): step s's pushes to shard f, in frames from the
 * top of its range down, each ending where the one before began, the
 * count and loss with the first only; the values checked; step 0's
 * frames noted in f->parts. 0, or 1 with f->bad set. */
static int parts_take(struct fake *f, int fd, uint64_t s)
{
    unsigned char buf[PROTO_PUSH_META + N * 8];
    struct proto_push_meta meta;
    struct proto_header h;
    uint64_t top = f->hi;
    size_t o = 0;

    while (top > f->lo) {
        uint64_t cnt;

        if (recv_head(fd, &h) != 0 || h.type != PROTO_PUSH || h.step != s || h.aux < f->lo ||
            h.aux >= top || h.length != PROTO_PUSH_META + (top - h.aux) * 8 ||
            net_recv_all(fd, buf, (size_t)h.length, NULL, 10.0, "worker", NULL) != 0 ||
            proto_push_meta_decode(buf, (size_t)h.length, &meta) != 0 ||
            meta.examples != (top == f->hi ? 8u : 0u)) {
            snprintf(f->bad, sizeof f->bad, "bad push frame at step %llu below %llu (type %u "
                     "step %llu aux %llu length %llu)", (unsigned long long)s,
                     (unsigned long long)top, (unsigned)h.type, (unsigned long long)h.step,
                     (unsigned long long)h.aux, (unsigned long long)h.length);
            return 1;
        }
        cnt = top - h.aux;
        for (size_t i = 0; i < cnt; i++) {
            double g;
            memcpy(&g, buf + PROTO_PUSH_META + i * 8, 8);
            if (g != grad_value((size_t)h.aux + i, s))
                snprintf(f->bad, sizeof f->bad, "step %llu element %zu: %g",
                         (unsigned long long)s, (size_t)h.aux + i, g);
        }
        if (s == 0 && o < sizeof f->parts)
            o += (size_t)snprintf(f->parts + o, sizeof f->parts - o, "%llu:%llu ",
                                  (unsigned long long)h.aux, (unsigned long long)cnt);
        top = h.aux;
    }
    return 0;
}

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    unsigned char hello[PROTO_HELLO_SIZE], buf[PROTO_PUSH_META + N * 8];
    double w[N];
    size_t cnt = (size_t)(f->hi - f->lo);
    struct proto_header h;
    struct proto_hello hl;
    struct proto_push_meta meta;
    int fd = -1;

    if (net_accept(f->lfd, 10.0, &fd, NULL, NULL) != 0) {
        snprintf(f->bad, sizeof f->bad, "no worker connected");
        return NULL;
    }
    if (auth_server(fd, auth_process_key(), PROTO_AUTH_PS, clock_now() + 10.0, "worker",
                    NULL) != 0) {
        snprintf(f->bad, sizeof f->bad, "the worker failed the AUTH handshake");
        close(fd);
        return NULL;
    }
    if (recv_head(fd, &h) != 0 || h.type != PROTO_HELLO || h.length != PROTO_HELLO_SIZE ||
        net_recv_all(fd, hello, sizeof hello, NULL, 10.0, "worker", NULL) != 0 ||
        proto_hello_decode(hello, sizeof hello, &hl) != 0 || hl.n != N ||
        hl.dtype != DTYPE_F64 || hl.batch != 8) {
        snprintf(f->bad, sizeof f->bad, "bad hello");
        goto out;
    }
    if (f->mode == FAKE_HELLO_ERROR) {
        static const char why[] = "dtype f64 is not this server's f32";
        send_frame(fd, PROTO_ERROR, 0, (uint64_t)(int64_t)ERR_MISMATCH, why, sizeof why - 1);
        goto out;
    }
    {
        unsigned char wb[PROTO_WELCOME_SIZE];
        struct proto_welcome wl = { f->lo, f->hi - f->lo };
        proto_welcome_encode(&wl, wb);
        send_frame(fd, PROTO_WELCOME, 0, 0, wb, sizeof wb);
    }
    for (uint64_t s = 0; s < STEPS; s++) {
        if (f->mode == FAKE_PARTS) {
            if (parts_take(f, fd, s) != 0)
                goto out;
            goto answer;
        }
        if (recv_head(fd, &h) != 0 || h.type != PROTO_PUSH || h.step != s || h.aux != f->lo ||
            h.length != PROTO_PUSH_META + cnt * 8 ||
            net_recv_all(fd, buf, (size_t)h.length, NULL, 10.0, "worker", NULL) != 0 ||
            proto_push_meta_decode(buf, (size_t)h.length, &meta) != 0 || meta.examples != 8 ||
            meta.loss != 2.5) {
            snprintf(f->bad, sizeof f->bad, "bad push at step %llu (type %u step %llu aux %llu "
                     "length %llu)", (unsigned long long)s, (unsigned)h.type,
                     (unsigned long long)h.step, (unsigned long long)h.aux,
                     (unsigned long long)h.length);
            goto out;
        }
        for (size_t i = 0; i < cnt; i++) {
            double g;
            memcpy(&g, buf + PROTO_PUSH_META + i * 8, 8);
            if (g != grad_value(f->lo + i, s))
                snprintf(f->bad, sizeof f->bad, "step %llu element %zu: %g",
                         (unsigned long long)s, (size_t)f->lo + i, g);
        }
        if (s == 1 && f->mode == FAKE_STEP_ERROR) {
            static const char why[] = "step 1 failed: worker 3 (127.0.0.1:9) lost";
            send_frame(fd, PROTO_ERROR, 1, (uint64_t)(int64_t)ERR_EOF, why, sizeof why - 1);
            goto out;
        }
        if (s == 1 && f->mode == FAKE_CLOSE)
            goto out;
        if (s == 1 && f->mode == FAKE_SILENT) {
            /* Wait for the worker to give up: its ERROR frame, then EOF. */
            if (recv_head(fd, &h) == 0 && h.type == PROTO_ERROR && h.step == 1 &&
                h.length < sizeof f->told)
                (void)net_recv_all(fd, f->told, (size_t)h.length, NULL, 10.0, "worker", NULL);
            goto out;
        }
answer:
        for (size_t i = 0; i < cnt; i++)
            w[i] = weight_value(f->lo + i, s);
        if (s == 1 && f->mode == FAKE_BAD_STEP) {
            send_frame(fd, PROTO_WEIGHTS, 6, f->lo, w, cnt * 8);
            goto out;
        }
        /* Per-bucket pull: the weights in parts from the top down, one
         * element, then the rest (when there are two). */
        if (cnt >= 2) {
            send_frame(fd, PROTO_WEIGHTS, s, f->hi - 1, w + cnt - 1, 8);
            send_frame(fd, PROTO_WEIGHTS, s, f->lo, w, (cnt - 1) * 8);
        } else {
            send_frame(fd, PROTO_WEIGHTS, s, f->lo, w, cnt * 8);
        }
    }
    if (recv_head(fd, &h) == 0 && h.type == PROTO_BYE && h.step == STEPS)
        f->bye = 1;
out:
    close(fd);
    return NULL;
}

/* The ranges the next fakes_start gives its fakes ({lo, hi} each), or
 * NULL: workload_split's equal ones. */
static const uint64_t (*fake_ranges)[2];

/* The mode fakes_start gives every fake but the first. */
static int fake_rest = FAKE_OK;

/* fakes_start: S fake shards over N elements, the first with mode0 and
 * the rest fake_rest (FAKE_OK). OUT: list ("127.0.0.1:P0,..."). */
static int fakes_start(struct fake *f, int s, int mode0, char *list, size_t len)
{
    size_t o = 0;

    for (int i = 0; i < s; i++) {
        memset(&f[i], 0, sizeof f[i]);
        f[i].mode = i == 0 ? mode0 : fake_rest;
        if (fake_ranges) {
            f[i].lo = fake_ranges[i][0];
            f[i].hi = fake_ranges[i][1];
        } else {
            workload_split(N, s, i, NULL, &f[i].lo, &f[i].hi);
        }
        if (net_listen("127.0.0.1", 0, &f[i].lfd, &f[i].port, NULL) != 0)
            return -1;
        o += (size_t)snprintf(list + o, len - o, "%s127.0.0.1:%d", i ? "," : "", f[i].port);
        if (pthread_create(&f[i].th, NULL, fake_main, &f[i]) != 0)
            return -1;
    }
    return 0;
}

static void fakes_join(struct fake *f, int s)
{
    for (int i = 0; i < s; i++) {
        pthread_join(f[i].th, NULL);
        close(f[i].lfd);
    }
}

static struct ps_client_cfg cfg_make(const char *list, double timeout)
{
    struct ps_client_cfg c = {
        .servers = list, .rank = 0, .world = 1,
        .hello = { .n = N, .dtype = DTYPE_F64, .workload = WORKLOAD_SYNTHETIC, .seed = 7,
                   .batch = 8 },
        .timeout = timeout,
    };
    return c;
}

/* The buckets the next run_worker pushes each step ({first, count}
 * each, from the top down, ps_client_push, then ps_client_pull), or
 * NULL: one ps_client_step. */
static const uint64_t (*run_buckets)[2];
static int run_nbuckets;

/* run_worker: init, connect, STEPS steps, bye. Returns the first failure
 * with its message in err; *at: the step it failed at (-1: before). */
static int run_worker(const char *list, double timeout, double *w, int *at, char *err)
{
    struct ps_client_cfg cfg = cfg_make(list, timeout);
    struct ps_client c;
    struct proto_push_meta meta = { .examples = 8, .loss = 2.5 };
    double g[N];
    int rc;

    *at = -1;
    rc = ps_client_init(&c, &cfg, err);
    if (rc == 0)
        rc = ps_client_connect(&c, err);
    for (int s = 0; rc == 0 && s < STEPS; s++) {
        *at = s;
        for (size_t i = 0; i < N; i++)
            g[i] = grad_value(i, (uint64_t)s);
        if (!run_buckets) {
            rc = ps_client_step(&c, (uint64_t)s, &meta, g, w, err);
        } else {
            rc = ps_client_pull_begin(&c, (uint64_t)s, err);
            for (int b = 0; rc == 0 && b < run_nbuckets; b++)
                rc = ps_client_push(&c, (uint64_t)s, &meta, g, run_buckets[b][0],
                                    run_buckets[b][1], err);
            if (rc == 0)
                rc = ps_client_pull(&c, (uint64_t)s, w, err);
        }
        if (rc != 0)
            ps_client_abort(&c, (uint64_t)s, rc, err);
    }
    if (rc == 0)
        rc = ps_client_bye(&c, STEPS, err);
    ps_client_close(&c);
    return rc;
}

/* happy: one clean run against s shards (name: a literal, T_CASE keeps it). */
static void happy(const char *id, const char *name, int s)
{
    struct fake f[4];
    char list[256], err[ERR_LEN] = "";
    double w[N];
    int at, rc;

    T_CASE(id, name);
    alarm(30);
    T_EQ_I(fakes_start(f, s, FAKE_OK, list, sizeof list), 0);
    memset(w, 0, sizeof w);
    rc = run_worker(list, 10.0, w, &at, err);
    fakes_join(f, s);
    T_EQ_I(rc, 0);
    if (rc)
        printf("     %s\n", err);
    for (size_t i = 0; i < N; i++)
        T_EQ_D(w[i], weight_value(i, STEPS - 1));
    for (int i = 0; i < s; i++) {
        T_STR(f[i].bad, "");
        T_EQ_I(f[i].bye, 1);
    }
}

/* fault: one run against S shards (f[0..s)) whose first one misbehaves. */
static int fault(struct fake *f, int s, int mode, double timeout, int *at, double *secs,
                 char *err)
{
    char list[256];
    double w[N], t0;
    int rc;

    if (fakes_start(f, s, mode, list, sizeof list) != 0)
        return 1;
    t0 = clock_now();
    rc = run_worker(list, timeout, w, at, err);
    *secs = clock_now() - t0;
    fakes_join(f, s);
    return rc;
}

int main(void)
{
    struct fake f[4];
    char err[ERR_LEN], want[64];
    double secs;
    int at, rc;

    signal(SIGALRM, on_alarm);
    signal(SIGPIPE, SIG_IGN);

    happy("ps-worker-1.1", "S=1: the push is the whole gradient, the weights come back, BYE", 1);
    happy("ps-worker-1.2", "S=2: each shard gets its slice (aux = first element), both pulled", 2);
    happy("ps-worker-1.3", "S=3 (4+3+3 elements): slices and BYE to every shard", 3);
    {
        static const uint64_t uneven[3][2] = { { 8, 10 }, { 0, 1 }, { 1, 8 } };
        fake_ranges = uneven;
        happy("ps-worker-1.4", "S=3, uneven ranges from the WELCOMEs, listed out of order "
              "([8,10) [0,1) [1,8)): each its slice, weights whole", 3);
        fake_ranges = NULL;
    }

    T_CASE("ps-worker-1.5", "S=2, buckets [6,10) [2,6) [0,2): each server gets its part of a bucket in "
           "frames of its share of it (5/10 of the bucket), from the top down; weights whole");
    alarm(30);
    {
        char list[256];
        double w[N];

        memset(w, 0, sizeof w);
        static const uint64_t bk[3][2] = { { 6, 4 }, { 2, 4 }, { 0, 2 } };

        fake_rest = FAKE_PARTS;
        T_EQ_I(fakes_start(f, 2, FAKE_PARTS, list, sizeof list), 0);
        fake_rest = FAKE_OK;
        run_buckets = bk;
        run_nbuckets = 3;
        rc = run_worker(list, 10.0, w, &at, err);
        run_buckets = NULL;
        fakes_join(f, 2);
        T_EQ_I(rc, 0);
        if (rc)
            printf("     %s\n", err);
        for (size_t i = 0; i < N; i++)
            T_EQ_D(w[i], weight_value(i, STEPS - 1));
        for (int i = 0; i < 2; i++) {
            T_STR(f[i].bad, "");
            T_EQ_I(f[i].bye, 1);
        }
        /* [0,5): [2,6)'s part [2,5) in 2s (4 x 5/10), [0,2) in 1s (2 x 5/10);
         * [5,10): [6,10) in 2s, then [2,6)'s part [5,6) */
        T_STR(f[0].parts, "3:2 2:1 1:1 0:1 ");
        T_STR(f[1].parts, "8:2 6:2 5:1 ");
    }

    {
        static const struct {
            const char *id, *name, *want;
            uint64_t r[2][2];
        } tiles[] = {
            { "ps-worker-3.2", "ranges with a gap ([0,4) [5,10)): refused naming both servers",
              "a gap", { { 0, 4 }, { 5, 10 } } },
            { "ps-worker-3.3", "overlapping ranges ([0,6) [4,10)): refused naming both servers",
              "they overlap", { { 0, 6 }, { 4, 10 } } },
            { "ps-worker-3.4", "ranges short of n ([0,4) [4,9)): refused naming the highest",
              "leaves the top owned by none", { { 0, 4 }, { 4, 9 } } },
            { "ps-worker-3.5", "ranges not from 0 ([1,4) [4,10)): refused naming the lowest",
              "elements [0, 1) are owned by none", { { 1, 4 }, { 4, 10 } } },
        };
        for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
            T_CASE(tiles[t].id, tiles[t].name);
            alarm(30);
            fake_ranges = tiles[t].r;
            rc = fault(f, 2, FAKE_OK, 5.0, &at, &secs, err);
            fake_ranges = NULL;
            T_EQ_I(rc, ERR_MISMATCH);
            T_EQ_I(at, -1);
            T_HAS(err, "hello: the servers' ranges do not tile [0, 10)");
            T_HAS(err, tiles[t].want);
            T_HAS(err, t == 2 ? "server 1 (127.0.0.1:" : "server 0 (127.0.0.1:");
            if (t < 2)
                T_HAS(err, "server 1 (127.0.0.1:");
        }
        T_CASE("ps-worker-3.6", "a WELCOME range past n ([4,12) of 10): refused naming the server");
        alarm(30);
        {
            static const uint64_t past[2][2] = { { 0, 4 }, { 4, 12 } };
            fake_ranges = past;
            rc = fault(f, 2, FAKE_OK, 5.0, &at, &secs, err);
            fake_ranges = NULL;
            T_EQ_I(rc, ERR_MISMATCH);
            T_HAS(err, "hello: server 1 (127.0.0.1:");
            T_HAS(err, "says it owns elements [4, 12), not inside the 10 parameters");
        }
    }

    T_CASE("ps-worker-2.1", "ERROR at hello: the server's reason, named, no step taken");
    alarm(30);
    rc = fault(f, 1, FAKE_HELLO_ERROR, 5.0, &at, &secs, err);
    T_EQ_I(rc, ERR_MISMATCH);
    T_EQ_I(at, -1);
    T_HAS(err, "hello: server 0 (127.0.0.1:");
    T_HAS(err, "reports: dtype f64 is not this server's f32");

    T_CASE("ps-worker-2.2", "ERROR instead of weights: its text, the server and the step");
    alarm(30);
    rc = fault(f, 2, FAKE_STEP_ERROR, 5.0, &at, &secs, err);
    T_EQ_I(rc, ERR_EOF);
    T_EQ_I(at, 1);
    T_HAS(err, "step 1: server 0 (127.0.0.1:");
    T_HAS(err, "reports: step 1 failed: worker 3 (127.0.0.1:9) lost");

    T_CASE("ps-worker-2.3", "WEIGHTS labelled with another step: refused, not read into the weights");
    alarm(30);
    rc = fault(f, 1, FAKE_BAD_STEP, 5.0, &at, &secs, err);
    T_EQ_I(rc, ERR_PROTO_FIELD);
    T_EQ_I(at, 1);
    T_HAS(err, "step 1: server 0 (127.0.0.1:");
    T_HAS(err, "sent WEIGHTS (rank 4294967295, step 6");
    T_HAS(err, "expected WEIGHTS (step 1) of elements ending at 10");

    T_CASE("ps-worker-2.4", "server closes mid-step: EOF naming server and step, at once");
    alarm(30);
    rc = fault(f, 2, FAKE_CLOSE, 20.0, &at, &secs, err);
    T_EQ_I(rc, ERR_EOF);
    T_EQ_I(at, 1);
    T_HAS(err, "step 1: recv from server 0 (127.0.0.1:");
    T_HAS(err, "connection closed");
    T_LE(secs, 10.0);       /* not the 20 s timeout: EOF is seen at once */

    T_CASE("ps-worker-2.5", "silent server: the idle timeout (1.5T for weights), named; the worker says why");
    alarm(30);
    rc = fault(f, 2, FAKE_SILENT, 1.0, &at, &secs, err);
    T_EQ_I(rc, ERR_TIMEOUT);
    T_EQ_I(at, 1);
    T_HAS(err, "step 1: recv from server 0 (127.0.0.1:");
    T_HAS(err, "timed out after 1.5 s");
    T_LE(secs, 3 * 1.0 + 10);
    T_HAS(f[0].told, "step 1: recv from server 0");    /* ps_client_abort's ERROR */
    T_HAS(f[0].told, "timed out");

    T_CASE("ps-worker-2.6", "no server: retried until the timeout, then 'no server at'");
    alarm(30);
    {
        int lfd, port;
        T_EQ_I(net_listen("127.0.0.1", 0, &lfd, &port, NULL), 0);
        close(lfd);         /* a port nobody listens on */
        snprintf(want, sizeof want, "127.0.0.1:%d", port);
        secs = clock_now();
        rc = run_worker(want, 1.0, NULL, &at, err);
        secs = clock_now() - secs;
        T_EQ_I(rc, -ECONNREFUSED);
        T_HAS(err, "no server at 127.0.0.1:");
        T_HAS(err, "(server 0 of 1)");
        T_LE(secs, 3 * 1.0 + 10);
    }

    T_CASE("ps-worker-3.1", "bad server lists are usage errors, nothing connected");
    {
        static const char *const bad[] = {
            "", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:5000,", ",127.0.0.1:5000",
            "127.0.0.1:70000", "::1:5000",
            /* 11 servers for 10 parameters */
            "h:1,h:2,h:3,h:4,h:5,h:6,h:7,h:8,h:9,h:10,h:11",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            struct ps_client_cfg cfg = cfg_make(bad[i], 1.0);
            struct ps_client c;
            err[0] = '\0';
            rc = ps_client_init(&c, &cfg, err);
            if (rc != ERR_USAGE)
                printf("     list '%s': rc %d (%s)\n", bad[i], rc, err);
            T_EQ_I(rc, ERR_USAGE);
            T_HAS(err, "--server");
            ps_client_close(&c);
        }
    }
    alarm(0);
    return t_done();
}
