/* client.c -- the worker's conversation with its S servers (see client.h
 * for the contract): set-up, the connections and the servers' ranges,
 * BYE, giving up, closing. The threads and the step's calls (push, pull)
 * are client_sync.c's; what travels on one connection (headers checked,
 * PUSH parts out, WEIGHTS parts in, ERROR frames read) is frames.c's; the
 * transport under them, client.h's struct ps_client_io (TCP:
 * client_io.c).
 *
 * One step, for each server i (its pushes in its own thread when S > 1,
 * its receiver always in its own thread):
 *
 *     pusher:   per bucket, from the top of [lo_i, hi_i) down, one PUSH of
 *               the part of the bucket server i owns (frames_push)
 *     receiver: the step's WEIGHTS parts, from the top down, until the
 *               whole range is in the client's buffer (frames_receive)
 *
 * (client_sync.c says how the threads hand the work over.)
 *
 * GIVING UP. When the worker fails, ps_client_abort sends each server it
 * can still write to cleanly (at a frame boundary) an ERROR frame with the
 * reason, so that a server's log says why the worker left rather than
 * "connection lost".
 */
#include "client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "client_internal.h"
#include "frames.h"
#include "train/overlap.h"

/* ------------------------------------------------------------- set-up */

/* parse_servers: "A,B,..." into c->conns (allocated here). */
static int parse_servers(struct ps_client *c, const char *list, char *err)
{
    char item[NET_ADDR_LEN], why[ERR_LEN];
    const char *p = list;
    int count = 1;

    if (!list || !*list) {
        err_say(err, "--server: no server given (expected HOST:PORT[,HOST:PORT...])");
        return ERR_USAGE;
    }
    for (const char *q = list; *q; q++)
        count += *q == ',';
    if (count > PS_CLIENT_MAX_SERVERS) {
        err_say(err, "--server: %d servers, at most %d", count, PS_CLIENT_MAX_SERVERS);
        return ERR_USAGE;
    }
    c->conns = calloc((size_t)count, sizeof *c->conns);
    if (!c->conns) {
        err_say(err, "out of memory for %d servers", count);
        return -ENOMEM;
    }
    for (int i = 0; i < count; i++)
        c->conns[i].fd = -1;
    c->nservers = count;
    for (int i = 0; i < count; i++) {
        struct ps_conn *k = &c->conns[i];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof item) {
            err_say(err, "--server: entry %d of '%.60s' is %s", i + 1, list,
                len == 0 ? "empty" : "too long");
            return ERR_USAGE;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (net_parse_hostport(item, k->host, sizeof k->host, &k->port, why) != 0) {
            err_say(err, "--server: %s", why);
            return ERR_USAGE;
        }
        if (k->port == 0) {
            err_say(err, "--server: '%s' has port 0; give the port the server bound "
                "(its --port-file)", item);
            return ERR_USAGE;
        }
        k->owner = c;
        k->index = i;
        snprintf(k->name, sizeof k->name, "server %d (%s)", i, item);
        p += len + (p[len] == ',');
    }
    return 0;
}

int ps_client_init(struct ps_client *c, const struct ps_client_cfg *cfg, char *err)
{
    int rc;

    memset(c, 0, sizeof *c);
    c->failed = -1;
    c->rank = cfg->rank;
    c->world = cfg->world;
    c->hello = cfg->hello;
    c->key = cfg->key ? cfg->key : auth_process_key();
    c->n = (size_t)cfg->hello.n;
    c->dtype = (int)cfg->hello.dtype;
    c->elem = dtype_size(c->dtype);
    c->comp = compress_get((int)cfg->hello.compress);
    c->timeout = cfg->timeout;
    c->io = cfg->io ? cfg->io : &ps_client_io_tcp;
    c->io_ctx = cfg->io_ctx;
    c->ex = cfg->exec ? cfg->exec : &overlap_exec_pthread;
    c->sizes_only = cfg->sizes_only;
    c->whole_parts = cfg->whole_parts;
    if (c->elem == 0 || c->n == 0 || cfg->world == 0 || cfg->rank >= cfg->world || !c->comp) {
        err_say(err, "ps_client: bad configuration (n %llu, dtype %d, rank %u of %u)",
            ull(cfg->hello.n), c->dtype, (unsigned)cfg->rank, (unsigned)cfg->world);
        return ERR_USAGE;
    }
    c->push_elem = compress_wire_size(c->comp, c->dtype);
    if ((rc = parse_servers(c, cfg->servers, err)) != 0)
        return rc;
    if ((uint64_t)c->nservers > cfg->hello.n) {
        err_say(err, "--server: %d servers for %llu parameters (each server needs at least one)",
            c->nservers, ull(cfg->hello.n));
        return ERR_USAGE;
    }
    if (cfg->has_local && (cfg->local_server < 0 || cfg->local_server >= c->nservers)) {
        err_say(err, "--local-server: %d is not a server's position in --server (S = %d)",
            cfg->local_server, c->nservers);
        return ERR_USAGE;
    }
    c->link_bw = cfg->link_bw;
    c->link_latency = cfg->link_latency;
    c->host_link = cfg->link_host != NULL;
    c->local = cfg->has_local ? cfg->local_server : -1;
    for (int i = 0; i < c->nservers; i++) {
        struct ps_conn *k = &c->conns[i];
        /* With the host's link every connection charges the host's one
         * clock at the full rate; the server on this host is not behind
         * the NIC at all (counters only). Otherwise each connection has
         * its share of the worker's own NIC: an equal one until the
         * WELCOME says its range (welcome). */
        int local = cfg->has_local && i == cfg->local_server;
        k->share = !local && !cfg->link_host;
        if (local)
            rc = link_init(&k->link, 0.0, 0.0);
        else if (cfg->link_host)
            rc = link_setup(&k->link, cfg->link_bw, cfg->link_latency, cfg->link_host, err);
        else
            rc = link_init(&k->link, cfg->link_bw / c->nservers, cfg->link_latency);
        if (rc != 0 && cfg->link_host && !local)
            return ERR_USAGE;   /* link_setup said why (a bad --link-host) */
        if (rc != 0) {
            err_say(err, "--link-bw/--link-latency: %g bytes/s over %d servers, %g s: "
                "not a valid link", cfg->link_bw, c->nservers, cfg->link_latency);
            return ERR_USAGE;
        }
    }
    if (c->sizes_only)
        return 0;           /* SIZES: no element is ever received */
    if (c->n > SIZE_MAX / c->elem || !(c->incoming = malloc(c->n * c->elem))) {
        err_say(err, "out of memory for the %zu weights to receive", c->n);
        return -ENOMEM;
    }
    if (c->comp->frame) {       /* NOT-LINEAR PUSHES (frames.c): a frame per range */
        size_t st = compress_state_bytes((int)c->hello.compress, c->n, c->dtype);
        c->wire = malloc(c->n * (4 + c->elem) + (size_t)c->nservers * (8 + c->elem));
        c->ef = calloc(1, st);
        if (!c->wire || !c->ef) {
            err_say(err, "out of memory for the %zu-element error-feedback state", c->n);
            return -ENOMEM;
        }
        return 0;
    }
    if (c->comp->kind != COMPRESS_NONE && c->comp->encode && !(c->wire = malloc(c->n * c->push_elem))) {
        err_say(err, "out of memory for the %zu encoded gradient elements", c->n);
        return -ENOMEM;
    }
    return 0;
}

/* ------------------------------------------------------------ ranges */

/* A server's first element and its index, for sorting. */
struct lo_at {
    uint64_t lo;
    int i;
};

static int by_lo(const void *a, const void *b)
{
    uint64_t x = ((const struct lo_at *)a)->lo, y = ((const struct lo_at *)b)->lo;

    return x < y ? -1 : x > y;
}

/* check_tiling: the servers' ranges tile [0, n): sorted by their first
 * element, each starts where the one before ended, the first at 0, the
 * last ends at n. ERR_MISMATCH naming the servers around the first gap or
 * overlap. */
static int check_tiling(struct ps_client *c, char *err)
{
    struct lo_at order[PS_CLIENT_MAX_SERVERS];
    uint64_t at = 0;

    for (int i = 0; i < c->nservers; i++)
        order[i] = (struct lo_at){ c->conns[i].lo, i };
    qsort(order, (size_t)c->nservers, sizeof order[0], by_lo);
    for (int j = 0; j < c->nservers; j++) {
        const struct ps_conn *k = &c->conns[order[j].i];

        if (k->lo == at) {
            at = k->hi;
            continue;
        }
        if (j == 0)
            err_say(err, "hello: the servers' ranges do not tile [0, %zu): elements [0, %llu) "
                "are owned by none (the lowest is %s's [%llu, %llu))", c->n, ull(k->lo),
                k->name, ull(k->lo), ull(k->hi));
        else
            err_say(err, "hello: the servers' ranges do not tile [0, %zu): %s owns [%llu, "
                "%llu) and %s owns [%llu, %llu): %s", c->n, c->conns[order[j - 1].i].name,
                ull(c->conns[order[j - 1].i].lo), ull(at), k->name, ull(k->lo), ull(k->hi),
                k->lo > at ? "a gap" : "they overlap");
        return ERR_MISMATCH;
    }
    if (at != c->n) {
        const struct ps_conn *k = &c->conns[order[c->nservers - 1].i];
        err_say(err, "hello: the servers' ranges do not tile [0, %zu): the highest, %s's "
            "[%llu, %llu), %s", c->n, k->name, ull(k->lo), ull(k->hi),
            at < c->n ? "leaves the top owned by none" : "ends past n");
        return ERR_MISMATCH;
    }
    return 0;
}

/* welcome: server k's WELCOME and the range it carries, inside [0, n);
 * its link's share of the NIC from it (client.h, THE EMULATED LINK). */
static int welcome(struct ps_client *c, struct ps_conn *k, char *err)
{
    uint8_t p[PROTO_WELCOME_SIZE];
    struct proto_welcome w;
    uint64_t in, out;
    char tmp[ERR_LEN];
    int rc;

    rc = frames_expect(k, "hello", c->timeout, PROTO_WELCOME, 0, 0, PROTO_WELCOME_SIZE, err);
    if (rc != 0)
        return rc;
    rc = c->io->recv(c->io_ctx, k, p, sizeof p, c->timeout, PS_IO_FRAME, tmp);
    if (rc != 0) {
        err_say(err, "hello: %s", tmp);
        return rc;
    }
    if ((rc = proto_welcome_decode(p, sizeof p, &w)) != 0 || w.first + w.count > c->n) {
        err_say(err, "hello: %s says it owns elements [%llu, %llu), not inside the %zu "
            "parameters", k->name, ull(w.first), ull(w.first + w.count), c->n);
        return rc ? rc : ERR_MISMATCH;
    }
    k->lo = w.first;
    k->hi = w.first + w.count;
    if (!k->share)
        return 0;           /* the host's link, or a server on this host */
    in = k->link.bytes_in;
    out = k->link.bytes_out;
    (void)link_init(&k->link, c->link_bw * ((double)w.count / (double)c->n), c->link_latency);
    k->link.bytes_in = in;
    k->link.bytes_out = out;
    return 0;
}

/* set_shares: with the host's link, each connection to a server off the
 * host gets its share of the worker's pushes off the host (client.h, THE
 * EMULATED LINK; link.h, FLOW SHARES): together they may take the whole
 * NIC, and the server on the host takes its turn piece by piece. A share
 * below the link's least rate is left off. */
static void set_shares(struct ps_client *c)
{
    double local = 0.0, host;

    if (!c->host_link || !(c->link_bw > 0.0))
        return;
    if (c->local >= 0)
        local = (double)(c->conns[c->local].hi - c->conns[c->local].lo);
    host = (double)c->n - local;
    if (!(host > 0.0))
        return;
    for (int i = 0; i < c->nservers; i++)
        if (i != c->local)
            (void)link_set_share(&c->conns[i].link,
                                 c->link_bw * (double)(c->conns[i].hi - c->conns[i].lo) / host);
}

/* ------------------------------------------------------------ the API */

int ps_client_connect(struct ps_client *c, char *err)
{
    char tmp[ERR_LEN];
    int rc;

    c->quit = 0;
    for (int i = 0; i < c->nservers; i++)
        c->conns[i].told = 0;
    for (int i = 0; i < c->nservers; i++) {
        struct ps_conn *k = &c->conns[i];
        rc = c->io->dial(c->io_ctx, k, tmp);
        if (rc != 0) {
            if (rc == ERR_MISMATCH)
                err_say(err, "hello: %s", tmp);
            else
                err_say(err, "no server at %s:%d (server %d of %d): %s", k->host, k->port, i,
                    c->nservers, tmp);
            return rc;
        }
        k->up = 1;
        proto_hello_encode(&c->hello, k->out + PROTO_HEADER_SIZE);
        rc = frames_send_head(k, "hello", PROTO_HELLO, 0, 0, PROTO_HELLO_SIZE, PROTO_HELLO_SIZE,
                              err);
        if (rc != 0)
            return rc;
    }
    for (int i = 0; i < c->nservers; i++)
        if ((rc = welcome(c, &c->conns[i], err)) != 0)
            return rc;
    /* Every shard must be at the same step: S servers resumed from
     * checkpoints of different steps cannot go on together. */
    c->server_step = c->conns[0].welcome_step;
    for (int i = 1; i < c->nservers; i++)
        if (c->conns[i].welcome_step != c->server_step) {
            err_say(err, "hello: the servers are at different steps: %s at %llu, %s at %llu "
                "(resume every shard from checkpoints of the same step)", c->conns[0].name,
                ull(c->server_step), c->conns[i].name, ull(c->conns[i].welcome_step));
            return ERR_MISMATCH;
        }
    if ((rc = check_tiling(c, err)) != 0) {
        /* Tell the servers why (their logs, and the other workers through
         * their ERROR, then name the servers too). */
        ps_client_abort(c, 0, rc, err);
        return rc;
    }
    set_shares(c);
    return client_sync_start(c, err);
}

int ps_client_bye(struct ps_client *c, uint64_t step, char *err)
{
    char ctx[40];
    int rc;

    snprintf(ctx, sizeof ctx, "bye after step %llu", ull(step));
    for (int i = 0; i < c->nservers; i++)
        if ((rc = frames_send_head(&c->conns[i], ctx, PROTO_BYE, step, 0, 0, 0, err)) != 0)
            return rc;
    return 0;
}

void ps_client_abort(struct ps_client *c, uint64_t step, int code, const char *reason)
{
    unsigned char frame[PROTO_HEADER_SIZE + ERR_LEN];
    size_t len = strnlen(reason, ERR_LEN - 1);
    struct proto_header h;
    char tmp[ERR_LEN];

    if (len == 0)
        return;
    h = proto_header_make(PROTO_ERROR, c->rank, c->world, step, (uint64_t)(int64_t)code, len);
    proto_header_encode(&h, frame);
    memcpy(frame + PROTO_HEADER_SIZE, reason, len);
    for (int i = 0; i < c->nservers; i++) {
        struct ps_conn *k = &c->conns[i];
        if (!k->up || !k->clean)
            continue;
        /* Best effort: a server that is gone makes this fail, quietly. */
        (void)c->io->send(c->io_ctx, k, frame, PROTO_HEADER_SIZE + len,
                          c->timeout < FRAMES_LATE_ERROR_S ? c->timeout : FRAMES_LATE_ERROR_S,
                          PS_IO_UNPACED, tmp);
        k->clean = 0;
    }
}

void ps_client_bytes(const struct ps_client *c, uint64_t *in, uint64_t *out)
{
    *in = *out = 0;
    for (int i = 0; i < c->nservers; i++) {
        *in += c->conns[i].link.bytes_in;
        *out += c->conns[i].link.bytes_out;
    }
}

int ps_client_told(const struct ps_client *c)
{
    for (int i = 0; i < c->nservers; i++)
        if (c->conns[i].told)
            return 1;
    return 0;
}

void ps_client_disconnect(struct ps_client *c)
{
    client_sync_stop(c);
    for (int i = 0; c->conns && i < c->nservers; i++)
        if (c->conns[i].up) {
            c->io->close(c->io_ctx, &c->conns[i]);
            c->conns[i].up = 0;
        }
}

void ps_client_close(struct ps_client *c)
{
    ps_client_disconnect(c);
    free(c->incoming);
    c->incoming = NULL;
    free(c->wire);
    c->wire = NULL;
    free(c->ef);
    c->ef = NULL;
    free(c->conns);
    c->conns = NULL;
    c->nservers = 0;
}
