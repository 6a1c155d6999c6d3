/* ps_client.c -- a simulated PS worker's side of the protocol (ps_client.h). */
#include "ps_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/comm.h>

#include "base/dtype.h"
#include "base/err.h"
#include "wire/auth.h"

/* ------------------------------------------------------------ waiting */

/* wait_one: one of the worker's comms completes: a put (its stream's next
 * message goes) or a get (its message joins the ones in). Every stream
 * keeps a get posted, so a server's frames never wait for the reader. */
static int wait_one(struct psc *cl)
{
    size_t n = 0;
    ssize_t i;

    for (int s = 0; s < cl->S; s++) {
        wire_in_post(&cl->in[s]);
        cl->comms[n] = cl->in[s].c;
        cl->tag[n++] = s;
        if (cl->out[s].c) {
            cl->comms[n] = cl->out[s].c;
            cl->tag[n++] = -s - 1;
        }
    }
    i = sg_comm_wait_any(cl->comms, n);
    if (i < 0) {
        err_say(cl->sl->err, "a simulated message failed");
        return ERR_EOF;
    }
    if (cl->tag[i] < 0) {
        (void)wire_put_done(&cl->out[-cl->tag[i] - 1]);
    } else {
        wire_in_take(&cl->in[cl->tag[i]]);
    }
    return 0;
}

/* lost: server s's stream ended (m: its eof). */
static int lost(struct psc *cl, int s, const char *ctx, const struct wmsg *m)
{
    if (m->b[0])
        err_say(cl->sl->err, "%s: server %d reported: %s", ctx, s, (const char *)m->b);
    else
        err_say(cl->sl->err, "%s: lost server %d (simulated host h%d): connection closed",
                ctx, s, cl->j->srv[s].host);
    return ERR_EOF;
}

/* get: the next len bytes of server s's stream into dst (NULL: dropped). */
static int get(struct psc *cl, int s, void *dst, size_t len, const char *ctx)
{
    struct wire_in *in = &cl->in[s];
    int rc;

    while (len > 0) {
        struct wmsg *m = in->cur;
        size_t n;

        if (!m) {
            if ((rc = wait_one(cl)) != 0)
                return rc;
            continue;
        }
        if (m->eof)
            return lost(cl, s, ctx, m);
        n = m->len - in->off < len ? m->len - in->off : len;
        if (in->off < m->real) {
            n = n < m->real - in->off ? n : m->real - in->off;
            if (dst)
                memcpy(dst, m->b + in->off, n);
        }                       /* else SIZES: nothing to copy */
        if (dst)
            dst = (unsigned char *)dst + n;
        in->off += n;
        len -= n;
        if (in->off == m->len)
            wire_in_pop(in);
    }
    return 0;
}

/* frame: the next frame header from server s, of type `type` (an ERROR
 * frame instead: its text, reported). */
static int frame(struct psc *cl, int s, uint16_t type, struct proto_header *h,
                 const char *ctx)
{
    const struct proto_limits lim = { UINT64_MAX / 2, (uint32_t)cl->j->k, 0 };
    unsigned char b[PROTO_HEADER_SIZE];
    char text[PROTO_TEXT_MAX + 1];
    int rc;

    if ((rc = get(cl, s, b, sizeof b, ctx)) != 0)
        return rc;
    if ((rc = proto_header_decode(b, &lim, h)) != 0) {
        err_say(cl->sl->err, "%s: server %d: bad frame (%s)", ctx, s, err_str(rc));
        return rc;
    }
    if (h->type == PROTO_ERROR && h->length <= PROTO_TEXT_MAX) {
        if ((rc = get(cl, s, text, (size_t)h->length, ctx)) != 0)
            return rc;
        text[h->length] = '\0';
        err_say(cl->sl->err, "%s: server %d reported: %s", ctx, s, text);
        return ERR_EOF;
    }
    if (h->type != type || h->rank != PROTO_RANK_SERVER) {
        err_say(cl->sl->err, "%s: server %d sent %s, expected %s", ctx, s,
                proto_type_name(h->type), proto_type_name(type));
        return ERR_PROTO_TYPE;
    }
    return 0;
}

static int post_msg(struct psc *cl, int s, const void *const *p, const size_t *len, unsigned nb,
                size_t payload)
{
    if (wire_send(&cl->out[s], p, len, nb, payload, -1) != 0) {
        err_say(cl->sl->err, "out of memory");
        return -ENOMEM;
    }
    if (!cl->out[s].local)
        cl->sl->bytes_out += payload;
    return 0;
}

/* drain: until every put is out. */
static int drain(struct psc *cl)
{
    for (int s = 0; s < cl->S; s++)
        while (wire_busy(&cl->out[s])) {
            int rc = wait_one(cl);

            if (rc != 0)
                return rc;
        }
    return 0;
}

/* ------------------------------------------------------------ joining */

/* join: AUTH (unkeyed: the simulated job has no secret) and HELLO with
 * server s, its A2 read. */
static int join(struct psc *cl, int s, struct auth_hs *hs, const struct proto_hello *hello)
{
    uint8_t a2[AUTH_FRAME], a3[AUTH_FRAME], hb[PROTO_HEADER_SIZE + PROTO_HELLO_SIZE];
    struct proto_header h = proto_header_make(PROTO_HELLO, (uint32_t)cl->sl->rank,
                                              (uint32_t)cl->j->k, 0, 0, PROTO_HELLO_SIZE);
    const void *p[2] = { a3, hb };
    const size_t len[2] = { sizeof a3, sizeof hb };
    char why[ERR_LEN];
    int rc;

    if ((rc = get(cl, s, a2, sizeof a2, "hello")) != 0)
        return rc;
    if ((rc = auth_prove(hs, a2, sizeof a2, a3, why)) != 0) {
        err_say(cl->sl->err, "hello: server %d: %s", s, why);
        return rc;
    }
    proto_header_encode(&h, hb);
    proto_hello_encode(hello, hb + PROTO_HEADER_SIZE);
    return post_msg(cl, s, p, len, 2, 0);
}

/* welcome: server s's WELCOME: the range the job gave it, at step 0. */
static int welcome(struct psc *cl, int s)
{
    uint8_t b[PROTO_WELCOME_SIZE];
    struct proto_header h;
    struct proto_welcome w;
    int rc;

    if ((rc = frame(cl, s, PROTO_WELCOME, &h, "hello")) != 0 ||
        (rc = get(cl, s, b, sizeof b, "hello")) != 0)
        return rc;
    if (proto_welcome_decode(b, sizeof b, &w) != 0 || w.first != cl->j->srv[s].first ||
        w.count != cl->j->srv[s].count || h.step != 0) {
        err_say(cl->sl->err, "hello: server %d welcomed elements [%llu, +%llu) at step %llu",
                s, ull(w.first), ull(w.count), ull(h.step));
        return ERR_MISMATCH;
    }
    return 0;
}

int psc_open(struct psc *cl, struct sim_slot *sl, const struct proto_hello *hello)
{
    const struct sim_job *j = sl->job;
    size_t S = (size_t)j->servers;
    struct auth_hs *hs = calloc(S, sizeof *hs);
    static const struct auth_key unkeyed;
    int rc = 0;

    *cl = (struct psc){ .sl = sl, .j = j, .S = j->servers, .es = dtype_size(j->c->dtype) };
    cl->out = calloc(S, sizeof *cl->out);
    cl->in = calloc(S, sizeof *cl->in);
    cl->comms = calloc(2 * S, sizeof *cl->comms);
    cl->tag = calloc(2 * S, sizeof *cl->tag);
    if (!hs || !cl->out || !cl->in || !cl->comms || !cl->tag) {
        free(hs);
        err_say(sl->err, "out of memory");
        return -ENOMEM;
    }
    for (int s = 0; s < cl->S; s++) {
        uint8_t a1[AUTH_FRAME];
        const void *p = a1;
        size_t len = sizeof a1;

        cl->out[s].mb = wire_mailbox(1, s, sl->rank);
        cl->out[s].local = j->srv[s].host == sl->host;
        cl->out[s].sizes = !j->real;
        cl->in[s].mb = wire_mailbox(0, s, sl->rank);
        if (j->srv[s].count == 0)
            continue;           /* a server the split gives nothing is never started */
        auth_hs_init(&hs[s], &unkeyed, PROTO_AUTH_PS);
        auth_open(&hs[s], a1);
        if ((rc = post_msg(cl, s, &p, &len, 1, 0)) != 0)
            break;
    }
    for (int s = 0; s < cl->S && rc == 0; s++)
        if (j->srv[s].count > 0)
            rc = join(cl, s, &hs[s], hello);
    for (int s = 0; s < cl->S && rc == 0; s++)
        if (j->srv[s].count > 0)
            rc = welcome(cl, s);
    free(hs);
    return rc;
}

/* ------------------------------------------------------------ a step */

int psc_push(struct psc *cl, uint64_t step, const struct proto_push_meta *meta,
             const unsigned char *grad, uint64_t first, uint64_t count)
{
    static const struct proto_push_meta none = { 0, 0 };

    for (int s = 0; s < cl->S; s++) {
        uint64_t lo = cl->j->srv[s].first, end = lo + cl->j->srv[s].count, hi = end;
        uint8_t hb[PROTO_HEADER_SIZE + PROTO_PUSH_META];
        size_t pn;
        int rc;

        lo = lo < first ? first : lo;
        hi = hi > first + count ? first + count : hi;
        if (lo >= hi)
            continue;
        pn = (size_t)(hi - lo) * cl->es;
        const void *p[2] = { hb, grad ? grad + lo * cl->es : NULL };
        const size_t len[2] = { sizeof hb, pn };
        struct proto_header h = proto_header_make(PROTO_PUSH, (uint32_t)cl->sl->rank,
                                                  (uint32_t)cl->j->k, step, lo,
                                                  PROTO_PUSH_META + pn);

        proto_header_encode(&h, hb);
        proto_push_meta_encode(hi == end ? meta : &none, hb + PROTO_HEADER_SIZE);
        if ((rc = post_msg(cl, s, p, len, 2, pn)) != 0)
            return rc;
    }
    return 0;
}

/* pull_one: server s's WEIGHTS frames of step, from the top of its range
 * down (client.c's order), until the range is whole. */
static int pull_one(struct psc *cl, int s, uint64_t step, unsigned char *weights)
{
    uint64_t lo = cl->j->srv[s].first, top = lo + cl->j->srv[s].count;
    char ctx[40];
    int rc;

    snprintf(ctx, sizeof ctx, "step %llu", ull(step));
    while (top > lo) {
        struct proto_header h;
        uint64_t cnt;

        if ((rc = frame(cl, s, PROTO_WEIGHTS, &h, ctx)) != 0)
            return rc;
        cnt = h.length / cl->es;
        if (h.step != step || cnt == 0 || h.aux < lo || h.aux >= top || cnt != top - h.aux ||
            h.length % cl->es) {
            err_say(cl->sl->err, "%s: server %d sent WEIGHTS (step %llu, aux %llu, length "
                    "%llu), expected step %llu ending at %llu", ctx, s, ull(h.step),
                    ull(h.aux), ull(h.length), ull(step), ull(top));
            return ERR_PROTO_FIELD;
        }
        if ((rc = get(cl, s, weights ? weights + h.aux * cl->es : NULL, (size_t)h.length,
                      ctx)) != 0)
            return rc;
        if (!cl->out[s].local)
            cl->sl->bytes_in += h.length;
        top = h.aux;
    }
    return 0;
}

int psc_pull(struct psc *cl, uint64_t step, unsigned char *weights)
{
    int rc = 0;

    for (int s = 0; s < cl->S && rc == 0; s++)
        if (cl->j->srv[s].count > 0)
            rc = pull_one(cl, s, step, weights);
    return rc == 0 ? drain(cl) : rc;
}

int psc_bye(struct psc *cl, uint64_t step)
{
    for (int s = 0; s < cl->S; s++) {
        uint8_t hb[PROTO_HEADER_SIZE];
        struct proto_header h = proto_header_make(PROTO_BYE, (uint32_t)cl->sl->rank,
                                                  (uint32_t)cl->j->k, step, 0, 0);
        const void *p = hb;
        size_t len = sizeof hb;
        int rc;

        if (cl->j->srv[s].count == 0)
            continue;
        proto_header_encode(&h, hb);
        if ((rc = post_msg(cl, s, &p, &len, 1, 0)) != 0)
            return rc;
    }
    return drain(cl);
}

void psc_gone(struct psc *cl, int killed)
{
    for (int s = 0; cl->out && s < cl->S; s++)
        wire_poison(&cl->out[s].mb, 1, killed ? "" : cl->sl->err);
}

void psc_close(struct psc *cl)
{
    for (int s = 0; cl->in && s < cl->S; s++)
        wire_in_close(&cl->in[s]);
    for (int s = 0; cl->out && s < cl->S; s++) {
        wire_out_free(&cl->out[s]);
        wire_in_free(&cl->in[s]);
    }
    free(cl->out);
    free(cl->in);
    free(cl->comms);
    free(cl->tag);
    cl->out = NULL;
    cl->in = NULL;
}
