/* test_replay.c -- a real member's handshake, recorded on the wire and
 * replayed against real processes (issue 14; docs/security.md).
 *
 * tests/test_auth.c shows at the function level that a recorded A3 or a
 * reflected MAC fails; tests/t_auth.sh sends strangers' hand-made frames.
 * This program closes the gap between the two: a REAL ps_worker (or ring
 * rank) authenticates and trains through a small recording TCP proxy
 * written here (127.0.0.1:0, both directions forwarded and recorded), and
 * the bytes it sent are then replayed on fresh connections:
 *
 *   replay-1.x  parameter server. 1.1 worker 0 of a job of 2 dials the
 *               server through the proxy: its A1 A3 HELLO and the server's
 *               A2 are recorded. 1.2 the recorded A1 A3 HELLO, sent at once
 *               and paced (A1, wait for the A2, then the rest), to the SAME
 *               server while it waits for worker 1: refused with a fresh
 *               Nr, no WELCOME or WEIGHTS, the server logs the wrong proof;
 *               the job (worker 0 still through the proxy) finishes with
 *               the weights, byte for byte, of the same job run first
 *               without proxy or replays. 1.3 the whole recorded client
 *               stream (every PUSH, the BYE) and the handshake, to a SECOND
 *               server with the same secret before its workers join: the
 *               same checks; then its real job finishes, same weights.
 *   replay-2.x  reflection at process level: the server's own challenge
 *               Nr fed back to it as a second connection's Ni, and each
 *               connection's A2 MAC (its own, or the other's) sent back as
 *               the A3 proof: refused, logged, no WELCOME.
 *   replay-3.x  the ring: rank 1's connection to the coordinator (A1 A3
 *               REGISTER) recorded, replayed to the same coordinator
 *               during the rendezvous and to a second one: refused (no
 *               TABLE), logged; both rings end with the weights of the
 *               ring without the proxy.
 *
 * Pass/fail never depends on timing: every wait is bounded by the
 * watchdog of RELIABILITY.md (3x --timeout + 10 s) and a late answer is
 * only a failure when that bound is hit. Each child is its own process
 * group, killed at the end of its case and on any exit (the whole program
 * also runs under an alarm). Without $PSR_BIN/ps_server and ring_worker
 * the cases are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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

#include "wire/auth.h"
#include "check.h"
#include "base/clock.h"
#include "wire/proto.h"

#define SECRET "replay-secret-0123456789abcdef0123456789"
#define T_S 3                           /* the jobs' --timeout */
#define BOUND (3.0 * T_S + 10.0)        /* RELIABILITY.md's watchdog */
#define MAX_KIDS 16
#define PATH_LEN 512

static const char *const job_flags[] = {
    "--workload", "synthetic", "--params", "4K", "--steps", "30", "--timeout", "3", NULL
};

static char bin_dir[256], tmp_dir[256];  /* short: names are built from them */

/* ------------------------------------------------------------ children */

static volatile pid_t kids[MAX_KIDS];

static void kids_kill(void)
{
    for (int i = 0; i < MAX_KIDS; i++)
        if (kids[i] > 0) {
            kill(-kids[i], SIGKILL);
            (void)waitpid(kids[i], NULL, 0);
            kids[i] = 0;
        }
}

static void on_alarm(int sig)
{
    static const char msg[] = "FAIL replay-0.1 the whole program ran past its watchdog\n";
    (void)sig;
    for (int i = 0; i < MAX_KIDS; i++)
        if (kids[i] > 0)
            kill(-kids[i], SIGKILL);
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

/* spawn: PSR_BIN/prog with args then the job's flags (if job), in its own
 * process group, stderr to tmp/log (stdout dropped). 0 on failure. */
static pid_t spawn(const char *prog, const char *const *args, int job, const char *log)
{
    const char *argv[48];
    char path[PATH_LEN], logp[PATH_LEN];
    int n = 0, slot;
    pid_t pid;

    snprintf(path, sizeof path, "%s/%s", bin_dir, prog);
    snprintf(logp, sizeof logp, "%s/%s", tmp_dir, log);
    argv[n++] = path;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    for (int i = 0; job && job_flags[i]; i++)
        argv[n++] = job_flags[i];
    argv[n] = NULL;
    for (slot = 0; slot < MAX_KIDS && kids[slot] > 0; slot++)
        ;
    if (slot == MAX_KIDS)
        return 0;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int nul = open("/dev/null", O_RDWR);
        setpgid(0, 0);
        if (fd < 0 || nul < 0)
            _exit(127);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(fd, 2);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    if (pid < 0)
        return 0;
    setpgid(pid, pid);
    kids[slot] = pid;
    return pid;
}

/* reap: pid's exit status, waiting at most limit s; past it the group is
 * killed and -1 returned. */
static int reap(pid_t pid, double limit)
{
    double end = clock_now() + limit;
    int st = 0, rc = -1;

    if (pid <= 0)
        return -1;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        if (w < 0 || clock_now() > end) {
            kill(-pid, SIGKILL);
            (void)waitpid(pid, NULL, 0);
            break;
        }
        usleep(20000);
    }
    for (int i = 0; i < MAX_KIDS; i++)
        if (kids[i] == pid)
            kids[i] = 0;
    return rc;
}

/* file_read: the whole of tmp/name, NUL-terminated, malloc'd (the
 * caller's); NULL when absent. OUT: *len if not NULL. */
static char *file_read(const char *name, size_t *len)
{
    char p[PATH_LEN];
    FILE *f;
    char *buf = NULL;
    long n;

    snprintf(p, sizeof p, "%s/%s", tmp_dir, name);
    if (!(f = fopen(p, "rb")))
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = 0;
            if (len)
                *len = (size_t)n;
        }
    }
    fclose(f);
    return buf;
}

/* wait_port: the port written to tmp/name, waiting at most BOUND s; 0 if
 * none. */
static int wait_port(const char *name)
{
    double end = clock_now() + BOUND;
    while (clock_now() < end) {
        char *s = file_read(name, NULL);
        int port = s ? atoi(s) : 0;
        free(s);
        if (port > 0)
            return port;
        usleep(20000);
    }
    return 0;
}

/* count_in: how many times needle occurs in tmp/name. */
static int count_in(const char *name, const char *needle)
{
    char *s = file_read(name, NULL), *p;
    int n = 0;
    for (p = s; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    free(s);
    return n;
}

/* same_file: tmp/a and tmp/b exist, are not empty and are equal. */
static int same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = file_read(a, &la), *y = file_read(b, &lb);
    int same = x && y && la > 0 && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* ------------------------------------------------------------- frames */

static unsigned frame_type(const uint8_t *f) { return (unsigned)f[6] | (unsigned)f[7] << 8; }
static uint64_t frame_aux(const uint8_t *f) { return proto_get_u64(f + 24); }
static uint64_t frame_len(const uint8_t *f) { return proto_get_u64(f + 32); }

/* frames_span: the bytes of the first k whole frames of p[0..n), or 0 when
 * p does not hold k of them yet. */
static size_t frames_span(const uint8_t *p, size_t n, int k)
{
    size_t at = 0;
    while (k-- > 0) {
        if (n - at < PROTO_HEADER_SIZE || frame_len(p + at) > n - at - PROTO_HEADER_SIZE)
            return 0;
        at += PROTO_HEADER_SIZE + (size_t)frame_len(p + at);
    }
    return at;
}

/* frame_at: the i-th frame of p[0..n) (which must hold it). */
static const uint8_t *frame_at(const uint8_t *p, size_t n, int i)
{
    size_t at = frames_span(p, n, i);
    return frames_span(p, n, i + 1) ? p + at : NULL;
}

/* -------------------------------------------------- the recording proxy */

struct rec {
    uint8_t *p;
    size_t n, cap;
    int eof;
};

struct proxy {
    int lfd, port, upstream;            /* our listener; the real server's port */
    pthread_t th;
    pthread_mutex_t mu;
    struct rec c2s, s2c;                /* client -> server, server -> client */
    int done;
};

static int rec_add(struct proxy *x, struct rec *r, const uint8_t *p, size_t n)
{
    int rc = 0;
    pthread_mutex_lock(&x->mu);
    if (r->n + n > r->cap) {
        size_t cap = (r->n + n) * 2;
        uint8_t *q = realloc(r->p, cap);
        if (!q)
            rc = -1;
        else {
            r->p = q;
            r->cap = cap;
        }
    }
    if (rc == 0) {
        memcpy(r->p + r->n, p, n);
        r->n += n;
    }
    pthread_mutex_unlock(&x->mu);
    return rc;
}

static int send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* proxy_run: accept one connection, dial the server, forward both ways
 * (recording each direction) until both have ended or BOUND * 4 s. */
static void *proxy_run(void *arg)
{
    struct proxy *x = arg;
    struct sockaddr_in a = { .sin_family = AF_INET };
    struct pollfd pl = { .fd = x->lfd, .events = POLLIN };
    static __thread uint8_t buf[65536];
    int fd[2] = { -1, -1 };             /* 0: the client, 1: the server */
    double end = clock_now() + 4 * BOUND;

    if (poll(&pl, 1, (int)(BOUND * 1000)) != 1 || (fd[0] = accept(x->lfd, NULL, NULL)) < 0)
        goto out;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)x->upstream);
    if ((fd[1] = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
        connect(fd[1], (struct sockaddr *)&a, sizeof a) != 0)
        goto out;
    while (!(x->c2s.eof && x->s2c.eof) && clock_now() < end) {
        struct pollfd p[2] = { { .fd = x->c2s.eof ? -1 : fd[0], .events = POLLIN },
                               { .fd = x->s2c.eof ? -1 : fd[1], .events = POLLIN } };
        if (poll(p, 2, 200) < 0 && errno != EINTR)
            break;
        for (int s = 0; s < 2; s++) {
            struct rec *r = s == 0 ? &x->c2s : &x->s2c;
            ssize_t n;
            if (!(p[s].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            n = recv(fd[s], buf, sizeof buf, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                pthread_mutex_lock(&x->mu);
                r->eof = 1;
                pthread_mutex_unlock(&x->mu);
                shutdown(fd[1 - s], SHUT_WR);
                continue;
            }
            if (rec_add(x, r, buf, (size_t)n) != 0 || send_all(fd[1 - s], buf, (size_t)n) != 0) {
                pthread_mutex_lock(&x->mu);
                x->c2s.eof = x->s2c.eof = 1;
                pthread_mutex_unlock(&x->mu);
            }
        }
    }
out:
    for (int s = 0; s < 2; s++)
        if (fd[s] >= 0)
            close(fd[s]);
    pthread_mutex_lock(&x->mu);
    x->c2s.eof = x->s2c.eof = x->done = 1;
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

static int proxy_start(struct proxy *x, int upstream)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t al = sizeof a;

    memset(x, 0, sizeof *x);
    x->upstream = upstream;
    pthread_mutex_init(&x->mu, NULL);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((x->lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
        bind(x->lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(x->lfd, 4) != 0 ||
        getsockname(x->lfd, (struct sockaddr *)&a, &al) != 0)
        return -1;
    x->port = ntohs(a.sin_port);
    return pthread_create(&x->th, NULL, proxy_run, x) == 0 ? 0 : -1;
}

static void proxy_end(struct proxy *x)
{
    pthread_join(x->th, NULL);
    close(x->lfd);
    free(x->c2s.p);
    free(x->s2c.p);
    pthread_mutex_destroy(&x->mu);
}

/* proxy_take: a copy (the caller's, malloc'd) of the first k frames a
 * direction recorded (k < 0: everything, once that direction ended),
 * waiting at most BOUND s. NULL on timeout. OUT: *len. */
static uint8_t *proxy_take(struct proxy *x, struct rec *r, int k, size_t *len)
{
    double end = clock_now() + BOUND;
    for (;;) {
        uint8_t *out = NULL;
        size_t n = 0;
        pthread_mutex_lock(&x->mu);
        if (k >= 0)
            n = frames_span(r->p, r->n, k);
        else if (r->eof)
            n = r->n;
        if (n > 0 && (out = malloc(n)) != NULL)
            memcpy(out, r->p, n);
        pthread_mutex_unlock(&x->mu);
        if (out || clock_now() > end) {
            *len = n;
            return out;
        }
        usleep(10000);
    }
}

/* ------------------------------------------------------- the replayer */

struct answer {
    int closed;                         /* the server closed (EOF or reset) */
    int frames, welcome, weights, table, error, auth2;
    uint8_t nr[PROTO_NONCE_SIZE], mac[PROTO_MAC_SIZE];   /* the first A2's */
    char text[PROTO_TEXT_MAX + 1];      /* the first ERROR's */
};

static int dial(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0)
        fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* parse: what the server said in b[0..n) (whole frames only). */
static void parse(const uint8_t *b, size_t n, struct answer *a)
{
    const uint8_t *f;
    a->frames = a->welcome = a->weights = a->table = a->error = a->auth2 = 0;
    for (int i = 0; (f = frame_at(b, n, i)) != NULL; i++) {
        const uint8_t *pay = f + PROTO_HEADER_SIZE;
        a->frames++;
        switch (frame_type(f)) {
        case PROTO_WELCOME: a->welcome++; break;
        case PROTO_WEIGHTS: a->weights++; break;
        case PROTO_TABLE: a->table++; break;
        case PROTO_ERROR:
            if (a->error++ == 0) {
                size_t l = frame_len(f) < PROTO_TEXT_MAX ? (size_t)frame_len(f) : PROTO_TEXT_MAX;
                memcpy(a->text, pay, l);
                a->text[l] = 0;
            }
            break;
        case PROTO_AUTH:
            if (frame_aux(f) == 2 && frame_len(f) == PROTO_AUTH_SIZE && a->auth2++ == 0) {
                memcpy(a->nr, pay + 8, PROTO_NONCE_SIZE);
                memcpy(a->mac, pay + 40, PROTO_MAC_SIZE);
            }
            break;
        default: break;
        }
    }
}

/* exchange: on fd, send p[0..hold), wait for one whole frame back, then
 * send p[hold..n) (hold 0: all at once); read until the server closes or
 * stop_after frames came (0: until it closes), at most BOUND s. Sending
 * stops quietly when the server resets. OUT: *a. 0, or -1 at the bound. */
static int exchange(int fd, const uint8_t *p, size_t n, size_t hold, int stop_after,
                    struct answer *a)
{
    size_t cap = 1 << 20, got = 0, sent = 0;
    uint8_t *b = malloc(cap);
    double end = clock_now() + BOUND;
    int rc = -1, can_send = 1;

    memset(a, 0, sizeof *a);
    if (!b)
        return -1;
    while (clock_now() < end) {
        size_t limit = hold && frames_span(b, got, 1) == 0 ? hold : n;
        struct pollfd pl = { .fd = fd, .events = POLLIN };
        if (can_send && sent < limit)
            pl.events |= POLLOUT;
        if (poll(&pl, 1, 100) < 0 && errno != EINTR)
            break;
        if ((pl.revents & POLLOUT) && can_send && sent < limit) {
            ssize_t w = send(fd, p + sent, limit - sent, MSG_NOSIGNAL);
            if (w > 0)
                sent += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != EINTR)
                can_send = 0;
        }
        if (pl.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r;
            if (got == cap) {           /* a server that floods us: keep every frame */
                uint8_t *nb = cap < ((size_t)1 << 28) ? realloc(b, cap * 2) : NULL;
                if (!nb)
                    break;
                b = nb;
                cap *= 2;
            }
            r = recv(fd, b + got, cap - got, 0);
            if (r > 0)
                got += (size_t)r;
            else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                a->closed = 1;
                rc = 0;
                break;
            }
        }
        parse(b, got, a);
        if (stop_after && a->frames >= stop_after) {
            rc = 0;
            break;
        }
    }
    parse(b, got, a);
    free(b);
    return rc;
}

/* replay: a fresh connection to port, p[0..n) sent (paced after the first
 * frame when paced), read until the server closes. OUT: *a. */
static int replay(int port, const uint8_t *p, size_t n, int paced, struct answer *a)
{
    int fd = dial(port), rc;
    if (fd < 0) {
        memset(a, 0, sizeof *a);
        return -1;
    }
    rc = exchange(fd, p, n, paced ? frames_span(p, n, 1) : 0, 0, a);
    close(fd);
    return rc;
}

/* refused: the checks every replay must pass: the server closed on it,
 * said nothing of the job (no WELCOME, WEIGHTS or TABLE); paced: it got a
 * fresh A2 (not the recorded one, rec_nr) and an ERROR "not
 * authenticated". */
static void refused(int rc, const struct answer *a, int paced, const uint8_t *rec_nr)
{
    T_EQ_I(rc, 0);
    T_TRUE(a->closed);
    T_EQ_I(a->welcome, 0);
    T_EQ_I(a->weights, 0);
    T_EQ_I(a->table, 0);
    if (paced) {
        T_EQ_I(a->auth2, 1);
        T_TRUE(memcmp(a->nr, rec_nr, PROTO_NONCE_SIZE) != 0);
        T_EQ_I(a->error, 1);
        T_HAS(a->text, "not authenticated");
    }
}

/* replays: p[0..n) replayed on two fresh connections to port, at once
 * and paced, each checked by refused (rec_nr: the recorded A2's nonce).
 * The server logs one wrong proof per replay. */
static void replays(int port, const uint8_t *p, size_t n, const uint8_t *rec_nr)
{
    struct answer a;
    for (int paced = 0; paced < 2; paced++) {
        int rc = replay(port, p, n, paced, &a);
        refused(rc, &a, paced, rec_nr);
    }
}

/* ------------------------------------------------------------- the jobs */

struct job {
    int ring;                           /* 0: a ps_server and k workers; 1: a ring of k */
    pid_t srv, w[4];
    int port, k;                        /* the server's or the coordinator's port */
    char tag[32];
};

/* ps_server_start: a server for k workers, its port in *port. */
static int ps_server_start(struct job *j, const char *tag, int k)
{
    char kk[8], pf[PATH_LEN], log[64], pfn[64];
    memset(j, 0, sizeof *j);
    snprintf(j->tag, sizeof j->tag, "%s", tag);
    snprintf(kk, sizeof kk, "%d", k);
    snprintf(pfn, sizeof pfn, "%s.port", tag);
    snprintf(pf, sizeof pf, "%s/%s", tmp_dir, pfn);
    snprintf(log, sizeof log, "%s.s.err", tag);
    {
        const char *args[] = { "--workers", kk, "--port-file", pf, NULL };
        j->srv = spawn("ps_server", args, 1, log);
    }
    j->k = k;
    j->port = j->srv ? wait_port(pfn) : 0;
    return j->port > 0 ? 0 : -1;
}

/* ps_worker_start: worker r of the job, dialling port (the server's or a
 * proxy's); weights to tmp/TAG.w.r. */
static void ps_worker_start(struct job *j, int r, int port)
{
    char rr[8], kk[8], srv[32], wo[PATH_LEN], log[64];
    snprintf(rr, sizeof rr, "%d", r);
    snprintf(kk, sizeof kk, "%d", j->k);
    snprintf(srv, sizeof srv, "127.0.0.1:%d", port);
    snprintf(wo, sizeof wo, "%s/%s.w", tmp_dir, j->tag);
    snprintf(log, sizeof log, "%s.w%d.err", j->tag, r);
    {
        const char *args[] = { "--rank", rr, "--world", kk, "--server", srv, "--weights-out", wo,
                               NULL };
        j->w[r] = spawn("ps_worker", args, 1, log);
    }
}

/* ring_rank_start: rank r of a ring of k, coordinator at port (0: rank 0
 * is the coordinator and writes its port to tmp/TAG.port). */
static void ring_rank_start(struct job *j, int r, int port)
{
    char rr[8], kk[8], co[32], wo[PATH_LEN], pf[PATH_LEN], log[64];
    snprintf(rr, sizeof rr, "%d", r);
    snprintf(kk, sizeof kk, "%d", j->k);
    snprintf(co, sizeof co, "127.0.0.1:%d", port);
    snprintf(wo, sizeof wo, "%s/%s.w", tmp_dir, j->tag);
    snprintf(pf, sizeof pf, "%s/%s.port", tmp_dir, j->tag);
    snprintf(log, sizeof log, "%s.%d.err", j->tag, r);
    {
        const char *a0[] = { "--rank", rr, "--world", kk, "--coordinator", co, "--port-file", pf,
                             "--weights-out", wo, NULL };
        const char *an[] = { "--rank", rr, "--world", kk, "--coordinator", co, "--weights-out",
                             wo, NULL };
        j->w[r] = spawn("ring_worker", port ? an : a0, 1, log);
    }
}

static int ring_start(struct job *j, const char *tag, int k)
{
    char pfn[64];
    memset(j, 0, sizeof *j);
    snprintf(j->tag, sizeof j->tag, "%s", tag);
    snprintf(pfn, sizeof pfn, "%s.port", tag);
    j->k = k;
    ring_rank_start(j, 0, 0);
    j->port = j->w[0] ? wait_port(pfn) : 0;
    return j->port > 0 ? 0 : -1;
}

/* job_end: every process of j exited 0 (each waited for at most BOUND s,
 * killed past it). Says which did not. */
/* job_start: the listening side of a job (the server; a ring's rank 0,
 * the coordinator), its port in j->port. 0, or -1 when it did not start. */
static int job_start(struct job *j, int ring, const char *tag, int k)
{
    int rc = ring ? ring_start(j, tag, k) : ps_server_start(j, tag, k);
    j->ring = ring;
    return rc;
}

/* member_start: worker or rank r of j, dialling port (j's, or a proxy's). */
static void member_start(struct job *j, int r, int port)
{
    if (j->ring)
        ring_rank_start(j, r, port);
    else
        ps_worker_start(j, r, port);
}

/* first_member: the first process that dials: worker 0, or ring rank 1. */
static int first_member(const struct job *j) { return j->ring ? 1 : 0; }

/* members_start: every member from first_member + from on, dialling j. */
static void members_start(struct job *j, int from)
{
    for (int r = first_member(j) + from; r < j->k; r++)
        member_start(j, r, j->port);
}

static int job_end(struct job *j);

/* proxied: a baseline job TAG-base without proxy, run to its end (its
 * weights are the reference), then job j (TAG) with its first member
 * dialling through the recording proxy x. 0, or -1 (the case failed). */
static int proxied(struct job *j, struct proxy *x, int ring, const char *tag, int k)
{
    struct job base;
    char bt[32];

    snprintf(bt, sizeof bt, "%s-base", tag);
    if (job_start(&base, ring, bt, k) == 0)
        members_start(&base, 0);
    T_TRUE(job_end(&base));
    if (job_start(j, ring, tag, k) != 0 || proxy_start(x, j->port) != 0) {
        T_TRUE(!"the server, the coordinator or the proxy did not start");
        job_end(j);
        return -1;
    }
    member_start(j, first_member(j), x->port);
    return 0;
}

static int job_end(struct job *j)
{
    int ok = 1;
    for (int r = 0; r < j->k; r++) {
        int rc = reap(j->w[r], BOUND);
        if (rc != 0) {
            printf("     %s: process %d exited %d\n", j->tag, r, rc);
            ok = 0;
        }
    }
    if (j->srv) {
        int rc = reap(j->srv, BOUND);
        if (rc != 0) {
            printf("     %s: the server exited %d\n", j->tag, rc);
            ok = 0;
        }
    }
    return ok;
}

/* weights_as: every process of j wrote the weights of job ref (rank by
 * rank, byte for byte). */
static int weights_as(const struct job *j, const char *ref)
{
    int ok = 1;
    for (int r = 0; r < j->k; r++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "%s.w.%d", j->tag, r);
        snprintf(b, sizeof b, "%s.w.%d", ref, r);
        if (!same_file(a, b)) {
            printf("     %s differs from %s (or is missing)\n", a, b);
            ok = 0;
        }
    }
    return ok;
}

static void show_log(const char *name)
{
    char *s = file_read(name, NULL);
    size_t n = s ? strlen(s) : 0;
    printf("     %s ends: %s\n", name, s ? s + (n > 600 ? n - 600 : 0) : "(none)");
    free(s);
}

/* ---------------------------------------------------------- the cases */

/* recorded: what the proxy saw the member say first: A1, A3 and a frame
 * of type third (HELLO, REGISTER), as a copy (the caller's; NULL when it
 * did not come within BOUND s, the case failed then); OUT: *n, and nr, the
 * nonce of the A2 the member was given. */
static uint8_t *recorded(struct proxy *x, unsigned third, size_t *n, uint8_t *nr)
{
    size_t m = 0;
    uint8_t *hs = proxy_take(x, &x->c2s, 3, n), *a2 = proxy_take(x, &x->s2c, 1, &m);

    T_TRUE(hs != NULL && a2 != NULL);
    if (hs && a2) {
        T_EQ_I(frame_type(hs), PROTO_AUTH);
        T_EQ_I(frame_type(frame_at(hs, *n, 1)), PROTO_AUTH);
        T_EQ_I(frame_type(frame_at(hs, *n, 2)), third);
        T_EQ_I(frame_type(a2), PROTO_AUTH);
        memcpy(nr, a2 + PROTO_HEADER_SIZE + 8, PROTO_NONCE_SIZE);
    } else {
        free(hs);
        hs = NULL;
    }
    free(a2);
    return hs;
}

static uint8_t *ps_hs, *ps_all;         /* the worker's A1 A3 HELLO; its whole stream */
static size_t ps_hs_len, ps_all_len;
static uint8_t ps_nr[PROTO_NONCE_SIZE]; /* the A2 nonce it was given */

static void t_ps(void)
{
    struct job j1, j2;
    struct proxy x;
    int ok;

    T_CASE("replay-1.1", "PS: a worker dials through a recording proxy: its A1 A3 HELLO and "
           "the server's A2 are on the wire");
    if (proxied(&j1, &x, 0, "ps1", 2) != 0)
        return;
    if (!(ps_hs = recorded(&x, PROTO_HELLO, &ps_hs_len, ps_nr))) {
        job_end(&j1);
        proxy_end(&x);
        return;
    }
    T_END();

    T_CASE("replay-1.2", "PS: the recorded A1 A3 HELLO replayed to the same server while it "
           "waits (at once, and paced): refused with a fresh Nr, no WELCOME or WEIGHTS, the "
           "wrong proof logged; the job (worker 0 through the proxy) finishes with the weights of "
           "the job without proxy or replays");
    replays(j1.port, ps_hs, ps_hs_len, ps_nr);
    members_start(&j1, 1);
    ok = job_end(&j1);
    T_TRUE(ok);
    ps_all = proxy_take(&x, &x.c2s, -1, &ps_all_len);
    proxy_end(&x);
    T_TRUE(weights_as(&j1, "ps1-base"));      /* worker 0 went through the proxy */
    T_TRUE(ps_all != NULL && ps_all_len > ps_hs_len);
    T_EQ_I(count_in("ps1.s.err", "wrong proof"), 2);
    if (!ok)
        show_log("ps1.s.err");
    T_END();

    T_CASE("replay-1.3", "PS: the whole recorded client stream and the handshake, replayed "
           "to a second server with the same secret before its workers join: refused, "
           "logged; then its real job finishes with the reference weights");
    if (job_start(&j2, 0, "ps2", 2) != 0 || !ps_all) {
        T_TRUE(!"the second server did not start, or nothing was recorded");
        job_end(&j2);
        return;
    }
    replays(j2.port, ps_all, ps_all_len, ps_nr);
    replays(j2.port, ps_hs, ps_hs_len, ps_nr);
    T_EQ_I(count_in("ps2.s.err", "wrong proof"), 4);
    members_start(&j2, 0);
    T_TRUE(job_end(&j2));
    T_TRUE(weights_as(&j2, "ps1-base"));
    T_END();
}

/* auth_with: an AUTH frame like tmpl (a recorded A1 or A3) with its nonce
 * (A1) or mac (A3) replaced by v. OUT: out[AUTH_FRAME]. */
static void auth_with(uint8_t *out, const uint8_t *tmpl, const uint8_t *v)
{
    memcpy(out, tmpl, AUTH_FRAME);
    memcpy(out + PROTO_HEADER_SIZE + (frame_aux(tmpl) == 1 ? 8 : 40), v, 32);
}

static void t_reflect(void)
{
    struct job j;
    struct answer a1, a2, a3, e;
    uint8_t f[AUTH_FRAME];
    const uint8_t *A1 = ps_hs, *A3 = ps_hs ? frame_at(ps_hs, ps_hs_len, 1) : NULL;
    int c1, c2, c3;

    T_CASE("replay-2.1", "PS reflection: the server's challenge Nr fed back as a second "
           "connection's Ni, and the A2 MACs (the other connection's, the same one's) sent back "
           "as A3: each refused and logged, no WELCOME; the job then finishes");
    if (!A1 || !A3 || job_start(&j, 0, "ps3", 2) != 0) {
        T_TRUE(!"no recorded handshake, or the server did not start");
        job_end(&j);
        return;
    }
    c1 = dial(j.port);
    c2 = dial(j.port);
    c3 = dial(j.port);
    T_TRUE(c1 >= 0 && c2 >= 0 && c3 >= 0);
    /* c1: the recorded A1; the server challenges it with Nr1, MAC_R1. */
    T_EQ_I(exchange(c1, A1, AUTH_FRAME, 0, 1, &a1), 0);
    T_EQ_I(a1.auth2, 1);
    /* c2: an A1 whose Ni is the server's own challenge Nr1. */
    auth_with(f, A1, a1.nr);
    T_EQ_I(exchange(c2, f, AUTH_FRAME, 0, 1, &a2), 0);
    T_EQ_I(a2.auth2, 1);
    /* c3: the recorded A1 again, for its own MAC_R3. */
    T_EQ_I(exchange(c3, A1, AUTH_FRAME, 0, 1, &a3), 0);
    T_EQ_I(a3.auth2, 1);
    /* The answers, as A3: c1 gets c2's MAC (the server's MAC over its own
     * challenge), c2 gets c1's, c3 its own. */
    auth_with(f, A3, a2.mac);
    T_EQ_I(exchange(c1, f, AUTH_FRAME, 0, 0, &e), 0);
    refused(0, &e, 0, NULL);
    T_EQ_I(e.error, 1);
    T_HAS(e.text, "not authenticated");
    auth_with(f, A3, a1.mac);
    T_EQ_I(exchange(c2, f, AUTH_FRAME, 0, 0, &e), 0);
    refused(0, &e, 0, NULL);
    T_EQ_I(e.error, 1);
    T_HAS(e.text, "not authenticated");
    auth_with(f, A3, a3.mac);
    T_EQ_I(exchange(c3, f, AUTH_FRAME, 0, 0, &e), 0);
    refused(0, &e, 0, NULL);
    T_EQ_I(e.error, 1);
    T_HAS(e.text, "not authenticated");
    if (c1 >= 0) close(c1);
    if (c2 >= 0) close(c2);
    if (c3 >= 0) close(c3);
    T_EQ_I(count_in("ps3.s.err", "wrong proof"), 3);
    members_start(&j, 0);
    T_TRUE(job_end(&j));
    T_TRUE(weights_as(&j, "ps1-base"));
    T_END();
}

static void t_ring(void)
{
    struct job r1, r2;
    struct proxy x;
    uint8_t *hs;
    size_t n = 0;
    uint8_t nr[PROTO_NONCE_SIZE];

    T_CASE("replay-3.1", "ring: rank 1's connection to the coordinator (A1 A3 REGISTER) "
           "recorded through a proxy, replayed to the same coordinator during the rendezvous "
           "(at once, paced): refused, no TABLE, logged; the ring finishes with the weights "
           "of the ring without the proxy");
    if (proxied(&r1, &x, 1, "ring1", 3) != 0)
        return;
    if ((hs = recorded(&x, PROTO_REGISTER, &n, nr)) != NULL) {
        replays(r1.port, hs, n, nr);
    }
    members_start(&r1, 1);
    T_TRUE(job_end(&r1));
    proxy_end(&x);
    T_TRUE(weights_as(&r1, "ring1-base"));
    T_EQ_I(count_in("ring1.0.err", "wrong proof"), 2);
    T_END();

    T_CASE("replay-3.2", "ring: the recorded rank-1 stream replayed to a second coordinator "
           "with the same secret before any rank registers: refused, logged; that ring "
           "finishes with the same weights");
    if (!hs || job_start(&r2, 1, "ring2", 3) != 0) {
        T_TRUE(!"nothing recorded, or rank 0 did not start");
        free(hs);
        return;
    }
    replays(r2.port, hs, n, nr);
    free(hs);
    T_EQ_I(count_in("ring2.0.err", "wrong proof"), 2);
    members_start(&r2, 0);
    T_TRUE(job_end(&r2));
    T_TRUE(weights_as(&r2, "ring1-base"));
    T_END();
}

int main(void)
{
    const char *b = getenv("PSR_BIN");
    char p1[PATH_LEN], p2[PATH_LEN], p3[PATH_LEN];

    snprintf(p1, sizeof p1, "%s/ps_server", b ? b : "");
    snprintf(p2, sizeof p2, "%s/ps_worker", b ? b : "");
    snprintf(p3, sizeof p3, "%s/ring_worker", b ? b : "");
    if (!b || access(p1, X_OK) != 0 || access(p2, X_OK) != 0 || access(p3, X_OK) != 0) {
        t_skip("replay-1.1", "recorded handshakes replayed against real processes",
               "no ps_server, ps_worker or ring_worker in $PSR_BIN");
        return 0;
    }
    snprintf(bin_dir, sizeof bin_dir, "%s", b);
    snprintf(tmp_dir, sizeof tmp_dir, "%s/psring-replay.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("PSRING_SECRET", SECRET, 1);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGALRM, on_alarm);
    alarm(240);                         /* far above the cases' own bounds */
    atexit(kids_kill);

    t_ps();
    t_end();
    t_reflect();
    t_end();
    t_ring();
    t_end();
    free(ps_hs);
    free(ps_all);
    kids_kill();
    if (!t_state.failed && !getenv("PSR_KEEP")) {
        char cmd[PATH_LEN + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "test_replay: could not remove %s\n", tmp_dir);
    } else
        printf("     (the logs are in %s)\n", tmp_dir);
    return t_done();
}
