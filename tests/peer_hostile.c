/* peer_hostile.c -- a member of a job that holds its secret and then
 * misbehaves: it trickles a frame, says nothing, or stops mid-frame
 * (RELIABILITY.md row 11; tests/t_hostile_trickle.sh starts it).
 *
 *   peer_hostile MODE HOST:PORT [--rank R] [--world K] [--gap S] [--to R]
 *                [--stop-after B] [--hello N,DTYPE,WORKLOAD,SEED,BATCH[,COMPRESS]]
 *                [--elems C] [--max S] [--lie FIELD=V] [--nan I]
 *
 * The secret is PSRING_SECRET's. After the AUTH handshake the frame the
 * mode names is sent one byte every S seconds (--gap; 0: nothing at all,
 * silence), the first B bytes only with --stop-after B (then silence).
 * It exits when the other end closes, or after --max seconds (60).
 * --lie FIELD=V sends that frame with one field set to V: the header's
 * step, length, rank, world or aux, or a PUSH's examples (its count);
 * with a small --gap (0.00001) the lie goes out whole, at once.
 * --hello's COMPRESS is the HELLO's compress setting as an int
 * (compress.h, THE SETTING: 1027 is powersgd:2); --nan I makes a PUSH's
 * element I a NaN (the others are zeros).
 *
 * MODES
 *   register  at the coordinator: a REGISTER claiming rank R of K.
 *   hello     at a ring rank's data port: a HELLO claiming rank R of K.
 *   member    a whole ring member, rank R of K, its data listener on
 *             127.0.0.1: a REGISTER sent whole, the TABLE read, the right
 *             neighbour dialled and the left one accepted with whole
 *             HELLOs both ways; then its first CHUNK (step 0, C elements
 *             of 8 bytes) to the right neighbour is the frame trickled.
 *   ring-hello  as member, but the HELLO to the right neighbour (or to
 *             rank --to R) is the frame trickled (the left one is never
 *             accepted).
 *   push      at a parameter server: a HELLO sent whole as worker R of
 *             K, the WELCOME read, then a PUSH of step 0 for elements
 *             0..C-1 (8 bytes each) is the frame trickled.
 *   server    a parameter server of C elements on HOST:PORT (port 0: any;
 *             the port is written to the file --port-file names): one
 *             worker's AUTH and HELLO, a WELCOME for elements 0..C-1, then
 *             the WEIGHTS frame of its step 0 is the frame trickled.
 *
 * Exit status 0 when it ran its course, 2 on a bad argument, 1 when the
 * job refused it before the frame (the handshake, a HELLO): the test
 * tells these apart from what it checks.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "wire/auth.h"
#include "wire/net.h"
#include "wire/proto.h"

static int rank = 1, world = 2;
static double gap = 1.0, max_s = 60;
static long stop_after = -1;
static unsigned long long elems = 4;
static struct proto_hello hello = { 1, 1, 1, 7, 1, 0, 0 };
static long long nan_at = -1;      /* --nan I: the PUSH element made a NaN */
static struct auth_key key;
static const char *port_file;
static int to = -1;
static char lie_field[16];
static unsigned long long lie_value;

/* lie: the trickled frame's header h (and a PUSH's meta m, may be NULL)
 * with --lie's field set. */
static void lie(struct proto_header *h, struct proto_push_meta *m)
{
    if (!lie_field[0])
        return;
    if (strcmp(lie_field, "step") == 0)
        h->step = lie_value;
    else if (strcmp(lie_field, "length") == 0)
        h->length = lie_value;
    else if (strcmp(lie_field, "rank") == 0)
        h->rank = (uint32_t)lie_value;
    else if (strcmp(lie_field, "world") == 0)
        h->world = (uint32_t)lie_value;
    else if (strcmp(lie_field, "aux") == 0)
        h->aux = lie_value;
    else if (strcmp(lie_field, "examples") == 0 && m)
        m->examples = lie_value;
    else {
        fprintf(stderr, "peer_hostile: --lie %s: not a field of this frame\n", lie_field);
        exit(2);
    }
}

static void die(const char *what, const char *e)
{
    fprintf(stderr, "peer_hostile: %s: %s\n", what, e);
    exit(1);
}

/* trickle: len bytes of buf, one each gap seconds (stop_after: that many
 * only); then wait for the peer to close, or max_s from the start. */
static void trickle(int fd, const uint8_t *buf, size_t len, double t_start)
{
    size_t sent = 0, n = len;
    char sink[4096];

    if (stop_after >= 0 && (size_t)stop_after < n)
        n = (size_t)stop_after;
    if (gap <= 0)
        n = 0;
    for (;;) {
        struct pollfd p = { fd, POLLIN, 0 };
        double now = clock_now();
        int wait_ms = (int)((t_start + max_s - now) * 1000);
        if (wait_ms <= 0)
            break;
        if (sent < n && gap * 1000 < wait_ms)
            wait_ms = (int)(gap * 1000);
        if (poll(&p, 1, wait_ms) > 0) {
            ssize_t r = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                fprintf(stderr, "peer_hostile: closed by the peer after %zu of %zu bytes\n",
                        sent, len);
                return;
            }
            continue;
        }
        if (sent < n) {
            if (send(fd, buf + sent, 1, MSG_NOSIGNAL) != 1) {
                fprintf(stderr, "peer_hostile: send failed after %zu of %zu bytes\n", sent, len);
                return;
            }
            sent++;
        }
    }
    fprintf(stderr, "peer_hostile: --max %.0f s reached after %zu of %zu bytes\n", max_s, sent,
            len);
}

static size_t hello_frame(uint8_t *out)
{
    struct proto_header h = proto_header_make(PROTO_HELLO, (uint32_t)rank, (uint32_t)world, 0,
                                              0, PROTO_HELLO_SIZE);
    proto_header_encode(&h, out);
    proto_hello_encode(&hello, out + PROTO_HEADER_SIZE);
    return PROTO_HEADER_SIZE + PROTO_HELLO_SIZE;
}

static size_t register_frame(uint8_t *out, int data_port)
{
    struct proto_register reg;
    struct proto_header h;
    size_t len = 0;

    memset(&reg, 0, sizeof reg);
    reg.hello = hello;
    reg.peer.port = (uint16_t)data_port;
    reg.peer.addr_len = 9;
    memcpy(reg.peer.addr, "127.0.0.1", 10);
    if (proto_register_encode(&reg, out + PROTO_HEADER_SIZE, PROTO_REGISTER_MAX, &len) != 0)
        die("register", "cannot encode");
    h = proto_header_make(PROTO_REGISTER, (uint32_t)rank, (uint32_t)world, 0, 0, len);
    proto_header_encode(&h, out);
    return PROTO_HEADER_SIZE + len;
}

/* read_frame: one whole frame (payload at most cap bytes) into pay. */
static void read_frame(int fd, const char *what, struct proto_header *h, uint8_t *pay, size_t cap)
{
    struct proto_limits lim = { cap, 0, 0 };
    uint8_t hb[PROTO_HEADER_SIZE];
    char e[ERR_LEN];

    if (net_recv_all(fd, hb, sizeof hb, NULL, 30, what, e) != 0)
        die(what, e);
    if (proto_header_decode(hb, &lim, h) != 0)
        die(what, "a bad header");
    if (net_recv_all(fd, pay, (size_t)h->length, NULL, 30, what, e) != 0)
        die(what, e);
    if (h->type == PROTO_ERROR) {
        pay[h->length < cap ? h->length : cap - 1] = '\0';
        die(what, (const char *)pay);
    }
}

/* ring: register as a member, then the data connections (see the top). */
static void ring(const char *host, int port, int trickle_hello, double t0)
{
    static uint8_t pay[1 << 16];
    static struct proto_peer peers[64];
    uint8_t frame[PROTO_HEADER_SIZE + PROTO_REGISTER_MAX], blob[PROTO_BLOB_SIZE];
    struct proto_header h;
    char e[ERR_LEN], name[NET_ADDR_LEN];
    int lfd, dport, cfd, rfd, afd, right = to >= 0 ? to % world : (rank + 1) % world;
    size_t n;

    if (world > 64)
        die("member", "--world too large");
    if (net_listen("127.0.0.1", 0, &lfd, &dport, e) != 0)
        die("listen", e);
    if (auth_dial(host, port, &key, PROTO_AUTH_RDV, 10, &cfd, "coordinator", e) != 0)
        die("coordinator", e);
    n = register_frame(frame, dport);
    if (net_send_all(cfd, frame, n, NULL, 10, "coordinator", e) != 0)
        die("coordinator", e);
    read_frame(cfd, "coordinator", &h, pay, sizeof pay);
    if (proto_table_decode(pay, (size_t)h.length, (uint32_t)world, blob, peers) != 0)
        die("coordinator", "a bad table");
    close(cfd);
    snprintf(name, sizeof name, "rank %d", right);
    if (auth_dial(peers[right].addr, peers[right].port, &key, PROTO_AUTH_DATA, 10, &rfd, name,
                  e) != 0)
        die(name, e);
    n = hello_frame(frame);
    if (trickle_hello) {
        trickle(rfd, frame, n, t0);
        return;
    }
    if (net_send_all(rfd, frame, n, NULL, 10, name, e) != 0)
        die(name, e);
    /* The left neighbour: accept, AUTH, its HELLO, ours. */
    if (net_accept(lfd, 10, &afd, name, e) != 0 ||
        auth_server(afd, &key, PROTO_AUTH_DATA, clock_now() + 10, name, e) != 0)
        die("left neighbour", e);
    read_frame(afd, "left neighbour", &h, pay, sizeof pay);
    if (net_send_all(afd, frame, n, NULL, 10, name, e) != 0)
        die("left neighbour", e);
    read_frame(rfd, "right neighbour", &h, pay, sizeof pay);
    /* The first CHUNK, trickled. */
    {
        size_t len = (size_t)elems * 8;
        uint8_t *chunk = calloc(1, PROTO_HEADER_SIZE + len);
        struct proto_header ch = proto_header_make(PROTO_CHUNK, (uint32_t)rank,
                                                   (uint32_t)world, 0, 0, len);
        if (!chunk)
            die("chunk", "out of memory");
        lie(&ch, NULL);
        proto_header_encode(&ch, chunk);
        trickle(rfd, chunk, PROTO_HEADER_SIZE + len, t0);
        free(chunk);
    }
}

/* push: join a parameter server as worker rank, then trickle a PUSH. */
static void push(int fd, double t0)
{
    uint8_t frame[PROTO_HEADER_SIZE + PROTO_HELLO_SIZE], pay[PROTO_TEXT_MAX + 1];
    struct proto_push_meta m;
    struct proto_header h;
    size_t len = PROTO_PUSH_META + (size_t)elems * 8;
    uint8_t *p = calloc(1, PROTO_HEADER_SIZE + len);
    char e[ERR_LEN];

    if (!p)
        die("push", "out of memory");
    if (net_send_all(fd, frame, hello_frame(frame), NULL, 10, "server", e) != 0)
        die("server", e);
    read_frame(fd, "server", &h, pay, sizeof pay - 1);
    memset(&m, 0, sizeof m);
    m.examples = 1;
    h = proto_header_make(PROTO_PUSH, (uint32_t)rank, (uint32_t)world, 0, 0, len);
    lie(&h, &m);
    proto_header_encode(&h, p);
    proto_push_meta_encode(&m, p + PROTO_HEADER_SIZE);
    if (nan_at >= 0 && (unsigned long long)nan_at < elems) {
        double q = NAN;
        memcpy(p + PROTO_HEADER_SIZE + PROTO_PUSH_META + (size_t)nan_at * 8, &q, 8);
    }
    trickle(fd, p, PROTO_HEADER_SIZE + len, t0);
    free(p);
}

/* server: serve one worker as a parameter server would, up to its weights. */
static void server(const char *host, int port, double t0)
{
    uint8_t pay[PROTO_TEXT_MAX + 1], w[PROTO_HEADER_SIZE + PROTO_WELCOME_SIZE];
    uint8_t head[PROTO_HEADER_SIZE];
    struct proto_welcome wel = { 0, elems };
    struct proto_header h;
    char e[ERR_LEN], peer[NET_ADDR_LEN];
    int lfd, fd, bound;
    FILE *f;

    if (net_listen(host, port, &lfd, &bound, e) != 0)
        die("listen", e);
    if (port_file && (!(f = fopen(port_file, "w")) || fprintf(f, "%d\n", bound) < 0 ||
                      fclose(f) != 0))
        die(port_file, "cannot write");
    if (net_accept(lfd, 30, &fd, peer, e) != 0 ||
        auth_server(fd, &key, PROTO_AUTH_PS, clock_now() + 10, peer, e) != 0)
        die("worker", e);
    read_frame(fd, "worker", &h, pay, sizeof pay - 1);
    h = proto_header_make(PROTO_WELCOME, PROTO_RANK_SERVER, (uint32_t)world, 0, 0,
                          PROTO_WELCOME_SIZE);
    proto_header_encode(&h, w);
    proto_welcome_encode(&wel, w + PROTO_HEADER_SIZE);
    if (net_send_all(fd, w, sizeof w, NULL, 10, "worker", e) != 0)
        die("worker", e);
    h = proto_header_make(PROTO_WEIGHTS, PROTO_RANK_SERVER, (uint32_t)world, 0, 0,
                          (uint64_t)elems * 8);
    if (lie_field[0]) {
        /* a whole WEIGHTS frame (zeros), its header lying */
        uint8_t *wf = calloc(1, PROTO_HEADER_SIZE + (size_t)elems * 8);
        if (!wf)
            die("weights", "out of memory");
        lie(&h, NULL);
        proto_header_encode(&h, wf);
        trickle(fd, wf, PROTO_HEADER_SIZE + (size_t)elems * 8, t0);
        free(wf);
        return;
    }
    proto_header_encode(&h, head);
    trickle(fd, head, sizeof head, t0);     /* its push, unread, waits in the kernel */
}

int main(int argc, char **argv)
{
    char host[NET_HOST_LEN], e[ERR_LEN];
    const char *mode;
    int port, fd;
    uint8_t frame[PROTO_HEADER_SIZE + PROTO_REGISTER_MAX];
    double t0 = clock_now();

    if (argc < 3) {
        fprintf(stderr, "usage: peer_hostile MODE HOST:PORT [options] (see the source)\n");
        return 2;
    }
    mode = argv[1];
    if (net_parse_hostport(argv[2], host, sizeof host, &port, e) != 0)
        die(argv[2], e);
    for (int i = 3; i + 1 < argc; i += 2) {
        const char *f = argv[i], *v = argv[i + 1];
        if (strcmp(f, "--rank") == 0)
            rank = atoi(v);
        else if (strcmp(f, "--world") == 0)
            world = atoi(v);
        else if (strcmp(f, "--gap") == 0)
            gap = atof(v);
        else if (strcmp(f, "--stop-after") == 0)
            stop_after = atol(v);
        else if (strcmp(f, "--elems") == 0)
            elems = strtoull(v, NULL, 10);
        else if (strcmp(f, "--to") == 0)
            to = atoi(v);
        else if (strcmp(f, "--port-file") == 0)
            port_file = v;
        else if (strcmp(f, "--max") == 0)
            max_s = atof(v);
        else if (strcmp(f, "--lie") == 0) {
            if (sscanf(v, "%15[a-z]=%llu", lie_field, &lie_value) != 2)
                die("--lie", "FIELD=V");
        }
        else if (strcmp(f, "--hello") == 0) {
            unsigned long long a, s, b;
            unsigned d, w, c = 0;
            int got = sscanf(v, "%llu,%u,%u,%llu,%llu,%u", &a, &d, &w, &s, &b, &c);
            if (got != 5 && got != 6)
                die("--hello", "N,DTYPE,WORKLOAD,SEED,BATCH[,COMPRESS]");
            hello = (struct proto_hello){ a, d, w, s, b, c, 0 };
        } else if (strcmp(f, "--nan") == 0) {
            nan_at = atoll(v);
        } else {
            fprintf(stderr, "peer_hostile: unknown option %s\n", f);
            return 2;
        }
    }
    if (auth_key_load(&key, NULL, getenv("PSRING_SECRET"), e) != 0)
        die("secret", e);
    if (strcmp(mode, "server") == 0) {
        server(host, port, t0);
        return 0;
    }
    if (strcmp(mode, "member") == 0 || strcmp(mode, "ring-hello") == 0) {
        ring(host, port, mode[0] == 'r', t0);
        return 0;
    }
    {
        uint32_t purpose = strcmp(mode, "register") == 0 ? PROTO_AUTH_RDV
                         : strcmp(mode, "hello") == 0 ? PROTO_AUTH_DATA
                         : strcmp(mode, "push") == 0 ? PROTO_AUTH_PS : 0;
        if (!purpose) {
            fprintf(stderr, "peer_hostile: unknown mode %s\n", mode);
            return 2;
        }
        if (auth_dial(host, port, &key, purpose, 10, &fd, argv[2], e) != 0)
            die(argv[2], e);
    }
    if (strcmp(mode, "register") == 0)
        trickle(fd, frame, register_frame(frame, 1), t0);
    else if (strcmp(mode, "hello") == 0)
        trickle(fd, frame, hello_frame(frame), t0);
    else
        push(fd, t0);
    close(fd);
    return 0;
}
