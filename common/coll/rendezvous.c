/* rendezvous.c -- the coordinator (rank 0) and its clients (rendezvous.h).
 *
 * The coordinator takes connections from an auth_gate (common/wire/auth.h):
 * strangers are handled there, many at once, each under an absolute
 * deadline and a global cap that evicts the oldest, and never reach the
 * code below. The REGISTER frames of the authenticated connections are
 * read all at once, without blocking, between waits at the gate of at
 * most POLL_S: a member that holds the secret and then trickles its
 * REGISTER, or says nothing, stalls no one else. Each has a deadline that
 * bytes do not extend (FRAME DEADLINES, net.h): --timeout plus the frame's
 * time at 1 MB/s after it authenticated (an honest rank sends it at once).
 * The header is decoded with the REGISTER cap before the payload is read.
 * A member that misses its deadline or sends anything else is logged,
 * closed and remembered: when ranks are then missing, the ERROR names it
 * (its address and the rank it claimed). The loop ends when K ranks have
 * registered (agreeing or not: a rank that disagrees is still told why) or
 * when --timeout has passed since the coordinator started; then every
 * registered rank gets the same answer, TABLE or ERROR.
 *
 * A client registers once and waits for that answer: the coordinator
 * started before the client could connect, so it answers within --timeout
 * of the registration; the client gives it a second more.
 */
#include "rendezvous.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire/auth.h"
#include "base/clock.h"
#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "wire/net.h"
#include "train/workload.h"

#define REG_FRAME  (PROTO_HEADER_SIZE + PROTO_REGISTER_MAX)
#define CLIENT_SLACK_S 1.0       /* a client waits --timeout plus this for the answer */
#define EXTRA_CONNS 16           /* room for strangers beside the K-1 ranks */
#define POLL_S 0.01              /* the gate's wait while a REGISTER is coming */
#define REG_DUE(t) net_frame_budget(NULL, REG_FRAME, t)   /* a REGISTER's time after AUTH */

static void fmt_addr(char *out, size_t n, const char *host, int port)
{
    if (strchr(host, ':'))
        snprintf(out, n, "[%s]:%d", host, port);
    else
        snprintf(out, n, "%s:%d", host, port);
}

int rdv_hello_diff(const struct proto_hello *a, const struct proto_hello *b, char *why)
{
    if (a->n != b->n)
        err_say(why, "n %llu vs %llu (--params / --workload)", (unsigned long long)a->n,
            (unsigned long long)b->n);
    else if (a->dtype != b->dtype)
        err_say(why, "dtype %s vs %s (--dtype)", dtype_name((int)a->dtype), dtype_name((int)b->dtype));
    else if (a->workload != b->workload)
        err_say(why, "workload %s vs %s (--workload)", workload_name((int)a->workload),
            workload_name((int)b->workload));
    else if (a->batch != b->batch)
        err_say(why, "batch %llu vs %llu (--batch)", (unsigned long long)a->batch,
            (unsigned long long)b->batch);
    else if ((a->sync_every > 1 ? a->sync_every : 1) != (b->sync_every > 1 ? b->sync_every : 1))
        err_say(why, "sync-every %u vs %u (--sync-every)", a->sync_every > 1 ? a->sync_every : 1,
            b->sync_every > 1 ? b->sync_every : 1);
    else if (a->seed != b->seed)
        err_say(why, "seed %llu vs %llu (--seed)", (unsigned long long)a->seed,
            (unsigned long long)b->seed);
    else if (a->compress != b->compress)
        err_say(why, "compress %s vs %s (--compress)", compress_name((int)a->compress),
            compress_name((int)b->compress));
    else
        return 0;
    return ERR_MISMATCH;
}

void rdv_table_free(struct rdv_table *t)
{
    free(t->peers);
    t->peers = NULL;
}

static int own_peer(const struct rdv_cfg *cfg, struct proto_peer *p, char *err)
{
    size_t n = strlen(cfg->data_host);

    memset(p, 0, sizeof *p);
    if (proto_addr_check(cfg->data_host, n) != 0 || cfg->data_port < 1 || cfg->data_port > 65535) {
        err_say(err, "--advertise: \"%s\" port %d cannot be sent to peers (host name or IP literal, "
            "at most %d bytes)", cfg->data_host, cfg->data_port, PROTO_ADDR_MAX);
        return ERR_USAGE;
    }
    p->port = (uint16_t)cfg->data_port;
    p->addr_len = (uint16_t)n;
    memcpy(p->addr, cfg->data_host, n + 1);
    return 0;
}

/* send_answer: ERROR(code, text) or TABLE(payload) to one rank. */
static void send_error(int fd, const struct rdv_cfg *cfg, int code, const char *text,
                       const char *peer)
{
    uint8_t buf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
    size_t n = strlen(text) < PROTO_TEXT_MAX ? strlen(text) : PROTO_TEXT_MAX;
    struct proto_header h = proto_header_make(PROTO_ERROR, 0, (uint32_t)cfg->world, 0,
                                              (uint64_t)(int64_t)code, n);
    char e[ERR_LEN];

    proto_header_encode(&h, buf);
    memcpy(buf + PROTO_HEADER_SIZE, text, n);
    if (net_send_all(fd, buf, PROTO_HEADER_SIZE + n, NULL, cfg->timeout, peer, e) != 0)
        log_msg("coordinator: %s", e);
}

/* ------------------------------------------------------------ coordinator */

struct conn {
    int fd;
    char peer[NET_ADDR_LEN];
    uint8_t buf[REG_FRAME];
    size_t got, need;              /* need: the header, then the whole frame */
    int rank;                      /* -1 until it registered */
    long claim;                    /* the rank its header claims; -1 before it */
    double t0;                     /* when it authenticated */
};

/* conn_drop: log why a connection is not a rank, and close it. */
static void conn_drop(struct conn *c, const char *why)
{
    log_msg("coordinator: closed the connection from %s: %s", c->peer, why);
    close(c->fd);
    c->fd = -1;
}

/* conn_who: "the member at ADDR (claiming rank R)" into out. */
static void conn_who(const struct conn *c, char *out, size_t n)
{
    if (c->claim >= 0)
        snprintf(out, n, "the member at %s (claiming rank %ld)", c->peer, c->claim);
    else
        snprintf(out, n, "the member at %s", c->peer);
}

/* conn_late: c missed its REGISTER's deadline (or the rendezvous's): drop
 * it, and remember it in held (ERR_LEN) if that is empty. */
static void conn_late(struct conn *c, double now, char *held)
{
    char who[NET_ADDR_LEN + 64], why[ERR_LEN];

    conn_who(c, who, sizeof who);
    err_say(why, "%s authenticated and had sent %zu bytes of its REGISTER in %.1f s", who,
        c->got, now - c->t0);
    if (!held[0])
        snprintf(held, ERR_LEN, "%s", why);
    log_msg("coordinator: closed the connection from %s: %s (due within --timeout plus its time "
            "at %.0f bytes/s)", c->peer, why, NET_FLOOR_RATE);
    close(c->fd);
    c->fd = -1;
}

/* conn_add: an authenticated connection into conns[*n] (cap entries),
 * reclaiming the slots of closed ones; closed when none is free. */
static void conn_add(struct conn *conns, int *n, int cap, int fd, const char *peer)
{
    struct conn *c;

    if (*n == cap) {
        int j = 0;
        for (int i = 0; i < *n; i++)
            if (conns[i].fd >= 0)
                conns[j++] = conns[i];
        *n = j;
    }
    if (*n == cap) {
        log_msg("coordinator: closed the connection from %s: too many connections", peer);
        close(fd);
        return;
    }
    c = &conns[(*n)++];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->rank = -1;
    c->claim = -1;
    c->need = PROTO_HEADER_SIZE;
    c->t0 = clock_now();
    snprintf(c->peer, sizeof c->peer, "%s", peer);
}

/* conn_feed: read what c's socket has of its REGISTER, without waiting.
 * 1 when the whole frame is in c->buf; 0 when more is to come; -1 when
 * the connection was dropped. */
static int conn_feed(struct conn *c)
{
    struct proto_limits lim = { PROTO_REGISTER_MAX, 0, 0 };
    struct proto_header h;
    char why[ERR_LEN], e[ERR_LEN];

    while (c->got < c->need) {
        int rc = net_feed(c->fd, c->buf, &c->got, c->need, e);
        if (rc == 0)
            return 0;
        if (rc < 0) {
            err_say(why, "before registering: %s", e);
            conn_drop(c, why);
            return -1;
        }
        if (c->need > PROTO_HEADER_SIZE)
            break;                              /* the whole frame */
        rc = proto_header_decode(c->buf, &lim, &h);
        if (rc == 0 && h.type != PROTO_REGISTER)
            rc = ERR_PROTO_TYPE;
        if (rc != 0) {
            snprintf(why, sizeof why, "not a REGISTER frame (%s)", err_str(rc));
            conn_drop(c, why);
            return -1;
        }
        c->claim = (long)h.rank;
        c->need = PROTO_HEADER_SIZE + (size_t)h.length;
    }
    return 1;
}

/* registered: a whole REGISTER from c; check it against rank 0's and
 * record it. The first disagreement goes to *mismatch. */
static void registered(struct conn *c, const struct rdv_cfg *cfg, struct proto_peer *peers,
                       char (*from)[NET_ADDR_LEN], int *count, char *mismatch)
{
    struct proto_limits lim = { PROTO_REGISTER_MAX, 0, 0 };
    struct proto_header h;
    struct proto_register reg;
    char why[ERR_LEN];
    int rc;

    proto_header_decode(c->buf, &lim, &h);     /* checked in conn_feed */
    rc = proto_register_decode(c->buf + PROTO_HEADER_SIZE, (size_t)h.length, &reg);
    if (rc != 0) {
        snprintf(why, sizeof why, "a malformed REGISTER (%s)", err_str(rc));
        conn_drop(c, why);
        return;
    }
    if (h.world != (uint32_t)cfg->world) {
        /* Its rank may be >= our K: keep it as an extra, to tell it why. */
        if (!mismatch[0])
            err_say(mismatch, "rank %u (%s) was started with K = %u, rank 0 with K = %d (--world)",
                h.rank, c->peer, h.world, cfg->world);
        c->rank = cfg->world;
        (*count)++;
        return;
    }
    if (h.rank == 0 || peers[h.rank].port != 0) {
        if (!mismatch[0])
            err_say(mismatch, "rank %u registered twice (from %s and %s)", h.rank,
                h.rank == 0 ? "rank 0 itself" : from[h.rank], c->peer);
        c->rank = cfg->world;       /* an extra: told, not counted twice */
        return;
    }
    rc = rdv_hello_diff(&reg.hello, &cfg->hello, why);
    if (rc != 0 && !mismatch[0])
        err_say(mismatch, "rank %u (%s) disagrees with rank 0: %s", h.rank, c->peer, why);
    c->rank = (int)h.rank;
    peers[h.rank] = reg.peer;
    snprintf(from[h.rank], NET_ADDR_LEN, "%s", c->peer);
    (*count)++;
}

/* missing_list: "ranks 2, 3" of those that never registered. */
static void missing_list(const struct proto_peer *peers, int k, char *out, size_t n)
{
    size_t o = 0;
    int first = 1, nmiss = 0;

    for (int r = 0; r < k; r++)
        nmiss += peers[r].port == 0;
    o += (size_t)snprintf(out, n, "rank%s", nmiss > 1 ? "s" : "");
    for (int r = 0; r < k && o < n; r++) {
        if (peers[r].port != 0)
            continue;
        if (o + 16 >= n) {
            snprintf(out + o, n - o, ", ...");
            break;
        }
        o += (size_t)snprintf(out + o, n - o, "%s %d", first ? "" : ",", r);
        first = 0;
    }
}

static const struct auth_key *cfg_key(const struct rdv_cfg *cfg)
{
    return cfg->key ? cfg->key : auth_process_key();
}

static int coordinate(const struct rdv_cfg *cfg, const void *blob, struct rdv_table *out,
                      char *err)
{
    int k = cfg->world, lfd = -1, port = 0, count = 1, ncap = k - 1 + EXTRA_CONNS, rc = 0;
    char where[NET_ADDR_LEN], e[ERR_LEN], mismatch[ERR_LEN] = "", answer[ERR_LEN] = "";
    char held[ERR_LEN] = "";       /* the first member dropped before registering */
    char (*from)[NET_ADDR_LEN] = calloc((size_t)k, sizeof *from);
    struct conn *conns = calloc((size_t)ncap, sizeof *conns);
    uint8_t *frame = NULL;
    double deadline = clock_now() + cfg->timeout, reg_due = REG_DUE(cfg->timeout);
    int nconn = 0, gate_open = 0;
    struct auth_gate gate;

    if (!from || !conns) {
        rc = -ENOMEM;
        err_say(err, "coordinator: out of memory for %d ranks", k);
        goto out;
    }
    fmt_addr(where, sizeof where, cfg->coord_host, cfg->coord_port);
    rc = net_listen(cfg->coord_host, cfg->coord_port, &lfd, &port, e);
    if (rc != 0) {
        err_say(err, "coordinator: %s", e);
        goto out;
    }
    out->coord_port = port;
    fmt_addr(where, sizeof where, cfg->coord_host, port);
    if (auth_gate_init(&gate, lfd, cfg_key(cfg), PROTO_AUTH_RDV, cfg->timeout, AUTH_GATE_CAP,
                       "the coordinator port") != 0) {
        rc = -ENOMEM;
        err_say(err, "coordinator: out of memory");
        goto out;
    }
    gate_open = 1;
    if (cfg->port_file && (rc = net_port_file_write(cfg->port_file, port, e)) != 0) {
        err_say(err, "coordinator: %s", e);
        goto out;
    }
    log_msg("coordinator at %s, waiting for %d ranks", where, k - 1);

    /* Gather: until all K are in, or the deadline. Strangers never get
     * past the gate, so they can neither hold a slot here nor say
     * anything that fails the rendezvous. */
    while (count < k) {
        char peer[NET_ADDR_LEN];
        double now = clock_now(), until = deadline;
        int fd, pending = 0;

        /* The REGISTER frames on their way: take what came; drop the late. */
        for (int i = 0; i < nconn && count < k; i++) {
            struct conn *c = &conns[i];
            int got;
            if (c->fd < 0 || c->rank >= 0)
                continue;
            got = conn_feed(c);
            if (got > 0)
                registered(c, cfg, out->peers, from, &count, mismatch);
            else if (got == 0 && now >= c->t0 + reg_due)
                conn_late(c, now, held);
            else if (got == 0)
                pending = 1;
        }
        if (count >= k || now >= deadline)
            break;
        if (pending && now + POLL_S < until)
            until = now + POLL_S;
        rc = auth_gate_next(&gate, until, &fd, peer, e);
        if (rc == ERR_TIMEOUT)
            continue;               /* the loop's top sees the deadline */
        if (rc != 0) {
            err_say(err, "coordinator: %s", e);
            goto out;
        }
        conn_add(conns, &nconn, ncap, fd, peer);
    }
    /* Ranks missing: a member still sending its REGISTER held one back. */
    for (int i = 0; i < nconn && count < k; i++)
        if (conns[i].fd >= 0 && conns[i].rank < 0)
            conn_late(&conns[i], clock_now(), held);

    /* Answer every rank that registered, the same answer. */
    if (mismatch[0]) {
        rc = ERR_MISMATCH;
        err_say(answer, "%s", mismatch);
    } else if (count < k) {
        char miss[160];
        missing_list(out->peers, k, miss, sizeof miss);
        rc = ERR_TIMEOUT;
        err_say(answer, "%s never registered at the coordinator %s within %.1f s%s%s", miss, where,
            cfg->timeout, held[0] ? "; " : "", held);
    } else {
        size_t len = proto_table_size(out->peers, (uint32_t)k);
        uint8_t zeros[PROTO_BLOB_SIZE] = { 0 };
        struct proto_header h = proto_header_make(PROTO_TABLE, 0, (uint32_t)k, 0, 0, len);
        frame = malloc(PROTO_HEADER_SIZE + len);
        if (!frame) {
            rc = -ENOMEM;
            err_say(err, "coordinator: out of memory for the table");
        } else {
            proto_header_encode(&h, frame);
            rc = proto_table_encode(blob ? blob : zeros, out->peers, (uint32_t)k,
                                    frame + PROTO_HEADER_SIZE, len, &len);
            if (rc != 0)
                err_say(err, "coordinator: a registered address does not encode (%s)", err_str(rc));
            memcpy(out->blob, blob ? blob : zeros, PROTO_BLOB_SIZE);
        }
    }
    for (int i = 0; i < nconn; i++) {
        if (conns[i].fd < 0 || conns[i].rank < 0)
            continue;
        if (rc == 0) {
            if (net_send_all(conns[i].fd, frame, PROTO_HEADER_SIZE + proto_table_size(out->peers,
                             (uint32_t)k), NULL, cfg->timeout, conns[i].peer, e) != 0)
                log_msg("coordinator: %s", e);
        } else if (answer[0]) {
            send_error(conns[i].fd, cfg, rc, answer, conns[i].peer);
        }
    }
    if (answer[0])
        err_say(err, "rendezvous failed: %s", answer);
out:
    for (int i = 0; i < nconn; i++)
        if (conns[i].fd >= 0)
            close(conns[i].fd);
    if (lfd >= 0)
        close(lfd);
    if (gate_open)
        auth_gate_close(&gate);
    free(frame);
    free(conns);
    free(from);
    return rc;
}

/* ----------------------------------------------------------------- client */

static int client(const struct rdv_cfg *cfg, struct rdv_table *out, char *err)
{
    struct proto_register reg;
    struct proto_header h;
    struct proto_limits lim;
    char where[NET_ADDR_LEN], e[ERR_LEN];
    uint8_t frame[REG_FRAME], hb[PROTO_HEADER_SIZE], *pay = NULL;
    struct net_frame f;            /* the answer's deadline (net.h) */
    size_t len = 0;
    int fd = -1, rc;

    fmt_addr(where, sizeof where, cfg->coord_host, cfg->coord_port);
    reg.hello = cfg->hello;
    reg.peer = out->peers[cfg->rank];
    rc = proto_register_encode(&reg, frame + PROTO_HEADER_SIZE, PROTO_REGISTER_MAX, &len);
    if (rc != 0) {
        err_say(err, "rendezvous: cannot register address %s (%s)", reg.peer.addr, err_str(rc));
        return rc;
    }
    h = proto_header_make(PROTO_REGISTER, (uint32_t)cfg->rank, (uint32_t)cfg->world, 0, 0, len);
    proto_header_encode(&h, frame);

    rc = auth_dial(cfg->coord_host, cfg->coord_port, cfg_key(cfg), PROTO_AUTH_RDV,
                   cfg->timeout, &fd, where, e);
    if (rc != 0) {
        if (rc == ERR_MISMATCH)
            err_say(err, "rendezvous: coordinator %s", e);
        else
            err_say(err, "coordinator %s never appeared within %.1f s (%s)", where,
                cfg->timeout, e);
        return rc;
    }
    rc = net_send_all(fd, frame, PROTO_HEADER_SIZE + len, NULL, cfg->timeout, where, e);
    net_frame_begin(&f, sizeof hb);
    if (rc == 0)
        rc = net_recv_frame(fd, hb, sizeof hb, NULL, cfg->timeout + CLIENT_SLACK_S, &f, where, e);
    if (rc != 0) {
        err_say(err, "rendezvous: coordinator %s: %s", where, e);
        goto out;
    }
    lim.max_payload = PROTO_BLOB_SIZE + (uint64_t)cfg->world * (PROTO_PEER_META + PROTO_ADDR_MAX);
    lim.world = 0;              /* an ERROR tells a rank of another K why, too */
    lim.elem_size = 0;
    rc = proto_header_decode(hb, &lim, &h);
    if (rc == 0 && h.type != PROTO_TABLE && h.type != PROTO_ERROR)
        rc = ERR_PROTO_TYPE;
    if (rc == 0 && h.type == PROTO_TABLE && h.world != (uint32_t)cfg->world)
        rc = ERR_PROTO_WORLD;
    if (rc == 0 && h.type == PROTO_ERROR && h.length > PROTO_TEXT_MAX)
        rc = ERR_PROTO_SIZE;
    if (rc != 0) {
        err_say(err, "rendezvous: coordinator %s answered a bad frame (%s %s)", where,
            proto_type_name(h.type), err_str(rc));
        goto out;
    }
    pay = malloc((size_t)h.length + 1);
    if (!pay) {
        rc = -ENOMEM;
        err_say(err, "rendezvous: out of memory for the table");
        goto out;
    }
    f.len += (size_t)h.length;
    rc = net_recv_frame(fd, pay, (size_t)h.length, NULL, cfg->timeout, &f, where, e);
    if (rc != 0) {
        err_say(err, "rendezvous: coordinator %s: %s", where, e);
        goto out;
    }
    if (h.type == PROTO_ERROR) {
        int64_t code = (int64_t)h.aux;
        pay[h.length] = '\0';
        if (proto_text_check(pay, (size_t)h.length) != 0)
            snprintf((char *)pay, 2, "?");
        rc = code == ERR_TIMEOUT ? ERR_TIMEOUT : ERR_MISMATCH;
        err_say(err, "rendezvous failed: %s", (const char *)pay);
        goto out;
    }
    rc = proto_table_decode(pay, (size_t)h.length, (uint32_t)cfg->world, out->blob, out->peers);
    if (rc == 0 && (out->peers[cfg->rank].port != reg.peer.port ||
                    strcmp(out->peers[cfg->rank].addr, reg.peer.addr) != 0))
        rc = ERR_PROTO_FIELD;
    if (rc != 0)
        err_say(err, "rendezvous: coordinator %s sent a bad table (%s)", where, err_str(rc));
out:
    free(pay);
    close(fd);
    return rc;
}

int rdv_run(const struct rdv_cfg *cfg, const void *blob, struct rdv_table *out, char *err)
{
    int rc;

    memset(out, 0, sizeof *out);
    if (cfg->world < 1 || cfg->rank < 0 || cfg->rank >= cfg->world || !(cfg->timeout > 0)) {
        err_say(err, "rendezvous: bad configuration (rank %d of %d)", cfg->rank, cfg->world);
        return ERR_USAGE;
    }
    out->world = cfg->world;
    out->peers = calloc((size_t)cfg->world, sizeof *out->peers);
    if (!out->peers) {
        err_say(err, "rendezvous: out of memory for %d ranks", cfg->world);
        return -ENOMEM;
    }
    if (cfg->world == 1) {
        uint8_t zeros[PROTO_BLOB_SIZE] = { 0 };
        memcpy(out->blob, blob ? blob : zeros, PROTO_BLOB_SIZE);
        if (cfg->data_host && cfg->data_port > 0)
            own_peer(cfg, &out->peers[0], NULL);
        return 0;
    }
    rc = own_peer(cfg, &out->peers[cfg->rank], err);
    if (rc == 0)
        rc = cfg->rank == 0 ? coordinate(cfg, blob, out, err) : client(cfg, out, err);
    if (rc != 0)
        rdv_table_free(out);
    return rc;
}
