/* ps_client.c -- the simulated worker's connections under the real client
 * (ps_client.h says what and why). */
#include "ps_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <simgrid/comm.h>

#include "base/err.h"
#include "coll/xport_sim.h"
#include "wire/auth.h"

/* A shutdown's own eof, put by the worker into its stream in (tag). */
#define SHUT_TAG (-2)

static int sim_send(void *ctx, struct ps_conn *k, const void *buf, size_t len, double idle,
                    int flags, char *why)
{
    struct psc_conn *cn = k->io;

    (void)ctx;
    (void)idle;
    if (cn->shut_wr) {
        err_say(why, "%s: connection shut down", k->name);
        return -EPIPE;
    }
    if (wire_pend_add(&cn->pend, buf, len, flags & PS_IO_ELEMENTS ? len : 0) != 0 ||
        (!(flags & PS_IO_MORE) && wire_pend_flush(&cn->out, &cn->pend) != 0)) {
        err_say(why, "%s: out of memory", k->name);
        return -ENOMEM;
    }
    if ((flags & PS_IO_ELEMENTS) && !cn->out.local)
        cn->cl->sl->bytes_out += len;
    return 0;
}

/* ended: the stream from server k ended (m: its eof). */
static int ended(struct psc_conn *cn, struct ps_conn *k, const struct wmsg *m, char *why)
{
    if (m->tag == SHUT_TAG)
        err_say(why, "%s: connection shut down", k->name);
    else if (m->b[0])
        err_say(why, "server %d reported: %s", cn->s, (const char *)m->b);
    else
        err_say(why, "lost server %d (simulated host h%d): connection closed", cn->s,
                cn->cl->j->srv[cn->s].host);
    return ERR_EOF;
}

static int sim_recv(void *ctx, struct ps_conn *k, void *buf, size_t len, double idle,
                    int flags, char *why)
{
    struct psc_conn *cn = k->io;
    struct wire_in *in = &cn->in;
    unsigned char *dst = buf;
    size_t want = len;

    (void)ctx;
    (void)idle;
    while (want > 0) {
        struct wmsg *m = in->cur;
        const unsigned char *src;
        size_t n;

        if (!m) {
            wire_in_post(in);
            if (sg_comm_wait(in->c) != SG_OK) {
                err_say(why, "%s: a simulated message failed", k->name);
                return ERR_EOF;
            }
            wire_in_take(in);
            wire_in_post(in);   /* one get posted: the next message never waits */
            continue;
        }
        if (m->eof)
            return ended(cn, k, m, why);
        n = wire_span(m, in->off, &src);
        n = n < want ? n : want;
        if (dst) {
            if (src)
                memcpy(dst, src, n);
            dst += n;
        }                       /* else SIZES: nothing to copy */
        in->off += n;
        want -= n;
        if (in->off == m->len)
            wire_in_pop(in);
    }
    if ((flags & PS_IO_ELEMENTS) && !cn->out.local)
        cn->cl->sl->bytes_in += len;
    return 0;
}

/* sim_dial: server k's streams, and the AUTH handshake over them (A1; A2
 * read; A3 written, to go with the HELLO that follows). */
static int sim_dial(void *ctx, struct ps_conn *k, char *why)
{
    static const struct auth_key unkeyed;
    struct psc *cl = ctx;
    struct psc_conn *cn = &cl->conn[k->index];
    uint8_t a1[AUTH_FRAME], a2[AUTH_FRAME], a3[AUTH_FRAME];
    struct auth_hs hs;
    char tmp[ERR_LEN];
    int rc;

    k->io = cn;
    snprintf(k->name, sizeof k->name, "server %d (simulated host h%d)", cn->s,
             cl->j->srv[cn->s].host);
    cn->out.mb = wire_mailbox(1, cn->s, cl->sl->rank);
    cn->out.local = cl->j->srv[cn->s].host == cl->sl->host;
    cn->out.sizes = !cl->j->real;
    cn->in.mb = wire_mailbox(0, cn->s, cl->sl->rank);
    if (sim_ps_round_robin(cl->j, cn->s))
        wire_in_eager(cn->s, cl->sl->rank);     /* ps_wire.h, ROUND-ROBIN EGRESS */
    wire_in_post(&cn->in);
    auth_hs_init(&hs, &unkeyed, PROTO_AUTH_PS);
    auth_open(&hs, a1);
    if ((rc = sim_send(ctx, k, a1, sizeof a1, 0, 0, why)) != 0 ||
        (rc = sim_recv(ctx, k, a2, sizeof a2, 0, 0, why)) != 0)
        return rc;
    if ((rc = auth_prove(&hs, a2, sizeof a2, a3, tmp)) != 0) {
        err_say(why, "%s: %s", k->name, tmp);
        return rc;
    }
    return sim_send(ctx, k, a3, sizeof a3, 0, PS_IO_MORE, why);
}

/* sim_shutdown: a receive waiting on k is woken by an eof of the
 * worker's own (SHUT_TAG), put into the stream it reads; a send after
 * SHUT_RDWR fails. */
static void sim_shutdown(void *ctx, struct ps_conn *k, int how)
{
    struct psc_conn *cn = k->io;
    struct wmsg *m;

    (void)ctx;
    if (how != SHUT_RD)
        cn->shut_wr = 1;
    if (cn->shut_rd || !(m = malloc(sizeof *m + 1)))
        return;
    cn->shut_rd = 1;
    *m = (struct wmsg){ 1, 1, 0, 0.0, 1, SHUT_TAG, 0, NULL };
    m->b[0] = '\0';
    sg_comm_detach(sg_mailbox_put_init(cn->in.mb, m, 0), free);
}

/* end: cn's streams ended: its get taken back, what came in freed. */
static void end(struct psc_conn *cn)
{
    if (cn->closed)
        return;
    cn->closed = 1;
    wire_in_close(&cn->in);
    wire_in_free(&cn->in);
    wire_pend_free(&cn->pend);
}

static void sim_close(void *ctx, struct ps_conn *k)
{
    (void)ctx;
    if (k->io)
        end(k->io);
}

static const struct ps_client_io sim_io = {
    sim_dial, sim_send, sim_recv, sim_shutdown, sim_close, NULL, NULL,  /* its own clock */
};

int psc_open(struct psc *cl, struct sim_slot *sl, const struct proto_hello *hello)
{
    const struct sim_job *j = sl->job;
    struct ps_client_cfg cfg = { 0 };
    char *list;
    size_t at = 0, cap = (size_t)j->servers * 24 + 1;
    int rc;

    *cl = (struct psc){ .sl = sl, .j = j };
    cl->conn = calloc((size_t)j->servers, sizeof *cl->conn);
    list = malloc(cap);
    if (!cl->conn || !list) {
        free(list);
        err_say(sl->err, "out of memory");
        return -ENOMEM;
    }
    /* The client's server list: the servers the split gives elements (one
     * it gives nothing is never started); the names are the transport's. */
    for (int s = 0; s < j->servers; s++) {
        if (j->srv[s].count == 0)
            continue;
        cl->conn[cl->S] = (struct psc_conn){ .cl = cl, .s = s };
        at += (size_t)snprintf(list + at, cap - at, "%sh%d:%d", cl->S ? "," : "",
                               j->srv[s].host, s + 1);
        cl->S++;
    }
    cfg.servers = list;
    cfg.rank = (uint32_t)sl->rank;
    cfg.world = (uint32_t)j->k;
    cfg.hello = *hello;
    cfg.timeout = j->c->timeout;
    cfg.io = &sim_io;
    cfg.io_ctx = cl;
    cfg.exec = &xport_sim_exec;
    cfg.sizes_only = !j->real;
    cfg.whole_parts = 1;        /* as before: docs/sim.md, Not like the real worker */
    rc = ps_client_init(&cl->client, &cfg, sl->err);
    cl->inited = 1;
    free(list);
    if (rc == 0)
        rc = ps_client_connect(&cl->client, sl->err);
    return rc;
}

void psc_gone(struct psc *cl, int killed)
{
    for (int i = 0; cl->conn && i < cl->S; i++)
        if (cl->conn[i].out.mb)
            wire_poison(&cl->conn[i].out.mb, 1, killed ? "" : cl->sl->err);
}

void psc_close(struct psc *cl)
{
    if (cl->inited)
        ps_client_close(&cl->client);
    cl->inited = 0;
    for (int i = 0; cl->conn && i < cl->S; i++)
        if (cl->conn[i].in.mb)
            end(&cl->conn[i]);   /* a dial that failed half-way */
    free(cl->conn);
    cl->conn = NULL;
}
