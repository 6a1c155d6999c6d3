/* frames.c -- what travels on one connection of the worker's client (see
 * frames.h): headers received and checked, ERROR frames read and
 * reported, the PUSH of a bucket's part, the WEIGHTS parts of a step.
 *
 *     PUSH(step, aux=a) header + 16-byte meta    (one 56-byte write), then
 *     the gradient elements [a, b)               (straight from grad)
 *
 *     WEIGHTS(step, aux=a', length=(b'-a')*elem) headers, b' where the
 *     part before began (hi for the first), each followed by its elements,
 *     read straight into the client's buffer at a'
 *
 * Every header is decoded and checked (proto_header_decode, then type,
 * sender, step, range and length) before its payload is read, so a server
 * that sends something else is reported as such, never read into the
 * weights. An ERROR frame is read (its text is capped at PROTO_TEXT_MAX by
 * the decoder) and reported. Every wait is the transport's (client.h,
 * struct ps_client_io; on TCP net.h's), under the idle-progress timeout.
 *
 * PULL WAIT. A part of the WEIGHTS comes only once every worker has pushed
 * it, so while this worker waits for it it waits on the others too. The
 * server watches each worker with the same --timeout T and, when one
 * stalls, tells the rest who it was (ERROR). If this worker gave up after T
 * as well, it would close at about the moment the server decides, and the
 * server would blame it instead of the stalled one. So the wait for each
 * WEIGHTS header allows 1.5T (plus, on an emulated link, the time the
 * server's link needs to take in the K pushes of the part: pull_wait): the
 * server names a worker that stalled
 * before this one's push ended within T of that worker's last byte (plus
 * its timer's granularity, T/20), so its ERROR arrives first; and a dead
 * or stopped server is noticed within 1.5T of the last byte, inside
 * docs/design.md's 2T with room for a loaded machine. (A worker that stalls
 * more than T/2 after this one's push ended outlasts this wait: then this
 * worker names the server, and the server's log names the stalled one.)
 * Every other wait is T.
 *
 * A server that refuses a push answers ERROR and closes; if the refusal
 * arrives while this worker is still sending, the send fails (EPIPE or
 * reset) before the ERROR frame is read. send_failed() then looks for that
 * frame for a moment (reading it itself when no receiver is on the socket,
 * else waiting for the receiver's report), so the user sees the server's
 * reason rather than "broken pipe".
 */
#include "frames.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/compress.h"
#include "base/err.h"
#include "base/vec.h"
#include "train/overlap.h"

/* clean_text: an ERROR payload made printable on one line (control bytes
 * become '?'). OUT: out (len + 1 bytes). */
static void clean_text(const unsigned char *in, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        out[i] = in[i] < 0x20 || in[i] == 0x7f ? '?' : (char)in[i];
    out[len] = '\0';
}

/* server_code: the err.h code an ERROR frame carries in aux when it is
 * one, else ERR_MISMATCH; never 0 (the server did refuse). */
static int server_code(uint64_t aux)
{
    int64_t a = (int64_t)aux;

    if ((a <= -1 && a >= -4095) || (a >= ERR_BASE && a < ERR_LAST))
        return (int)a;
    return ERR_MISMATCH;
}

/* read_error_text: the payload of the ERROR frame whose header is *h.
 * Returns the server's code with "CTX: NAME reports: TEXT" in err, or the
 * read's own failure (then *told stays 0). */
static int read_error_text(struct ps_conn *k, const struct proto_header *h, const char *ctx,
                           int *told, char *err)
{
    struct ps_client *c = k->owner;
    unsigned char text[PROTO_TEXT_MAX];
    char shown[PROTO_TEXT_MAX + 1], tmp[ERR_LEN];
    int rc;

    /* The decoder capped h->length at PROTO_TEXT_MAX. */
    rc = c->io->recv(c->io_ctx, k, text, (size_t)h->length, c->timeout, PS_IO_FRAME, tmp);
    if (rc != 0) {
        err_say(err, "%s: %s (reading the server's ERROR frame)", ctx, tmp);
        return rc;
    }
    clean_text(text, (size_t)h->length, shown);
    err_say(err, "%s: %s reports: %s", ctx, k->name, shown[0] ? shown : "(no reason given)");
    *told = 1;
    k->told = 1;            /* for ps_client_told */
    return server_code(h->aux);
}

/* recv_header: the next frame header from server k, waiting up to `idle`
 * seconds without progress, decoded under a payload cap of max_payload
 * (at least PROTO_TEXT_MAX). An ERROR frame is read and reported (*told
 * set when that worked). ctx ("hello", "step 7") leads every message. */
static int recv_header(struct ps_conn *k, const char *ctx, double idle, uint64_t max_payload,
                       struct proto_header *h, int *told, char *err)
{
    struct ps_client *c = k->owner;
    struct proto_limits lim = {
        .max_payload = max_payload > PROTO_TEXT_MAX ? max_payload : PROTO_TEXT_MAX,
        .world = c->world,
        .elem_size = (uint32_t)c->elem,
    };
    char tmp[ERR_LEN];
    int rc;

    *told = 0;
    /* FRAME DEADLINES (net.h): the server's link carries the K workers'
     * weights at once, round-robin (egress.h): K flows. */
    net_frame_begin(&k->rframe, PROTO_HEADER_SIZE);
    k->rframe.flows = c->world;
    rc = c->io->recv(c->io_ctx, k, k->in, PROTO_HEADER_SIZE, idle, PS_IO_FRAME, tmp);
    if (rc != 0) {
        err_say(err, "%s: %s", ctx, tmp);
        return rc;
    }
    rc = proto_header_decode(k->in, &lim, h);
    if (rc != 0) {
        err_say(err, "%s: %s sent a bad frame header: %s (type %u, rank %u, world %u, "
            "length %llu)", ctx, k->name, err_str(rc), (unsigned)h->type, (unsigned)h->rank,
            (unsigned)h->world, ull(h->length));
        return rc;
    }
    k->rframe.len += (size_t)h->length;
    if (h->type == PROTO_ERROR)
        return read_error_text(k, h, ctx, told, err);
    return 0;
}

/* frames_expect: the next frame from server k is `type`, sent by a server, with
 * `length` payload bytes, for `step` and `aux` (these two not checked for
 * WELCOME, whose step is kept in k->welcome_step); see recv_header for
 * the rest. */
int frames_expect(struct ps_conn *k, const char *ctx, double idle, uint16_t type,
                  uint64_t step, uint64_t aux, uint64_t length, char *err)
{
    struct proto_header h;
    int rc, told;

    if ((rc = recv_header(k, ctx, idle, length, &h, &told, err)) != 0)
        return rc;
    if (h.type != type || h.rank != PROTO_RANK_SERVER || h.length != length ||
        (type != PROTO_WELCOME && (h.step != step || h.aux != aux))) {
        err_say(err, "%s: %s sent %s (rank %u, step %llu, aux %llu, length %llu), expected %s "
            "(step %llu, aux %llu, length %llu)", ctx, k->name, proto_type_name(h.type),
            (unsigned)h.rank, ull(h.step), ull(h.aux), ull(h.length), proto_type_name(type),
            ull(step), ull(aux), ull(length));
        return ERR_PROTO_FIELD;
    }
    if (type == PROTO_WELCOME)
        k->welcome_step = h.step;       /* the server's step (RESUME, proto.h) */
    return 0;
}

/* receiver_report: wait (at most FRAMES_LATE_ERROR_S) for server k's receiver,
 * started on the current pull, to finish; 1 with its message in err when
 * it read the server's ERROR frame. SIMPLIFICATION: each wake-up starts
 * the wait afresh; there is one per receiver that finishes, so the wait
 * is at most S x FRAMES_LATE_ERROR_S, and only on this failure path. */
static int receiver_report(struct ps_conn *k, int *rc, char *err)
{
    struct ps_client *c = k->owner;
    const struct overlap_exec *ex = c->ex;
    int told = 0;

    ex->lock(c->mu);
    while (k->rseen != c->pull_gen && ex->wait_for(c->rdone, c->mu, FRAMES_LATE_ERROR_S) == 0)
        ;
    if (k->rseen == c->pull_gen && k->rtold) {
        told = 1;
        *rc = k->rrc;
        memcpy(err, k->rerr, ERR_LEN);
    }
    ex->unlock(c->mu);
    return told;
}

/* send_failed: a send to server k failed with rc (net's message in why).
 * If the server explained itself with an ERROR frame before it closed,
 * report that; else the send's own failure. */
static int send_failed(struct ps_conn *k, const char *ctx, int rc, const char *why, char *err)
{
    struct ps_client *c = k->owner;
    struct proto_limits lim = { .max_payload = PROTO_TEXT_MAX, .world = k->owner->world };
    struct proto_header h;
    char tmp[ERR_LEN];
    int told = 0, rc2, busy;

    busy = 0;
    if (c->sync_ready) {            /* after the handshake: receivers exist */
        c->ex->lock(c->mu);
        busy = c->pulling && k->rseen != c->pull_gen;
        c->ex->unlock(c->mu);
    }
    if ((rc == -EPIPE || rc == -ECONNRESET) && busy) {
        /* The receiver owns the socket's reading side: ask it. */
        if (receiver_report(k, &rc2, err))
            return rc2;
    } else if ((rc == -EPIPE || rc == -ECONNRESET) &&
        c->io->recv(c->io_ctx, k, k->in, PROTO_HEADER_SIZE, FRAMES_LATE_ERROR_S, PS_IO_UNPACED,
                    tmp) == 0 &&
        proto_header_decode(k->in, &lim, &h) == 0 && h.type == PROTO_ERROR) {
        rc2 = read_error_text(k, &h, ctx, &told, err);
        if (told)
            return rc2;
    }
    err_say(err, "%s: %s", ctx, why);
    return rc;
}

/* frames_send_head (frames.h). */
int frames_send_head(struct ps_conn *k, const char *ctx, uint16_t type, uint64_t step,
                     uint64_t aux, uint64_t length, size_t extra, char *err)
{
    struct ps_client *c = k->owner;
    struct proto_header h = proto_header_make(type, c->rank, c->world, step, aux, length);
    char tmp[ERR_LEN];
    int rc;

    proto_header_encode(&h, k->out);
    k->clean = 0;
    rc = c->io->send(c->io_ctx, k, k->out, PROTO_HEADER_SIZE + extra, c->timeout,
                     length > extra ? PS_IO_MORE : 0, tmp);
    if (rc != 0)
        return send_failed(k, ctx, rc, tmp, err);
    k->clean = length == extra;
    return 0;
}

const struct proto_push_meta frames_no_meta = { 0, 0.0 };

/* push_frame: NOT-LINEAR PUSHES (--compress topk:F|sign; store.h): the
 * server's whole range [lo, hi) as one frame, encoded here with the
 * range's error-feedback state (c->ef at lo x state_elems elements) into
 * the range's own place in c->wire (each range's frame fits in
 * (hi - lo) x (4 + elem) + 8 + elem bytes). A part that covers the range
 * only in part (buckets) is refused: top-k and sign take the whole range. */
static int push_frame(struct ps_conn *k, uint64_t step, const struct proto_push_meta *meta,
                      const unsigned char *grad, uint64_t first, uint64_t count, char *err)
{
    struct ps_client *c = k->owner;
    int set = (int)c->hello.compress;
    size_t m = (size_t)(k->hi - k->lo), fb = compress_frame_bytes(set, m, c->dtype);
    unsigned char *f = c->wire ? c->wire + (size_t)k->lo * (4 + c->elem) +
                                 (size_t)k->index * (8 + c->elem) : NULL;
    char ctx[40], tmp[ERR_LEN], lab[COMPRESS_LABEL_MAX];
    int rc;

    if (first + count <= k->lo || first >= k->hi)
        return 0;                   /* none of this server's elements */
    if (first > k->lo || first + count < k->hi) {
        err_say(err, "--compress %s: pushes each server's range [%llu, %llu) whole, this "
                "part is [%llu, %llu): no buckets smaller than the model",
                compress_label(set, lab, sizeof lab), ull(k->lo), ull(k->hi), ull(first),
                ull(first + count));
        return ERR_USAGE;
    }
    snprintf(ctx, sizeof ctx, "step %llu", ull(step));
    proto_push_meta_encode(meta, k->out + PROTO_HEADER_SIZE);
    rc = frames_send_head(k, ctx, PROTO_PUSH, step, k->lo, PROTO_PUSH_META + fb, PROTO_PUSH_META,
                          err);
    if (rc != 0)
        return rc;
    if (grad && f)
        c->comp->frame->encode(set, f, grad + (size_t)k->lo * c->elem, m, c->dtype,
                               c->ef + (size_t)k->lo * c->comp->state_elems * c->elem);
    rc = c->io->send(c->io_ctx, k, grad ? f : NULL, fb, c->timeout, PS_IO_ELEMENTS, tmp);
    if (rc != 0)
        return send_failed(k, ctx, rc, tmp, err);
    k->clean = 1;
    return 0;
}

/* frames_push: step `step` to server k: push the part of elements [first,
 * first + count) it owns (none when the part is empty), from the top down
 * in frames of the server's share of the bucket (client.h, SERVER PARTS):
 * count x (hi - lo) / n elements, at least one. The first frame carries
 * *meta when the part ends at the server's last element (the first push
 * of a pass, store.h BUCKETS), zeros otherwise. */
int frames_push(struct ps_conn *k, uint64_t step, const struct proto_push_meta *meta,
                     const unsigned char *grad, uint64_t first, uint64_t count, char *err)
{
    struct ps_client *c = k->owner;
    uint64_t a = first > k->lo ? first : k->lo;
    uint64_t top = first + count < k->hi ? first + count : k->hi;
    double share = (double)count * (double)(k->hi - k->lo) / (double)c->n;
    uint64_t piece = c->whole_parts ? count : share < 1.0 ? 1 : (uint64_t)share;
    char ctx[40], tmp[ERR_LEN];
    int rc;

    if (c->comp->frame)
        return push_frame(k, step, meta, grad, first, count, err);
    snprintf(ctx, sizeof ctx, "step %llu", ull(step));
    while (top > a) {
        uint64_t lo = top - a > piece ? top - piece : a;
        size_t pa = (size_t)lo * c->elem, pn = (size_t)(top - lo) * c->push_elem;
        const unsigned char *src = grad ? grad + pa : NULL;

        proto_push_meta_encode(top == k->hi ? meta : &frames_no_meta, k->out + PROTO_HEADER_SIZE);
        rc = frames_send_head(k, ctx, PROTO_PUSH, step, lo, PROTO_PUSH_META + pn, PROTO_PUSH_META,
                              err);
        if (rc != 0)
            return rc;
        /* The next part follows at once: a simulated stream sends the
         * push's parts as one message (PS_IO_MORE). */
        if (src && c->wire) {       /* COMPRESSED PUSHES: encoded once, then sent */
            c->comp->encode(c->wire + (size_t)lo * c->push_elem, src, (size_t)(top - lo),
                            c->dtype, NULL);
            src = c->wire + (size_t)lo * c->push_elem;
        }
        rc = c->io->send(c->io_ctx, k, src, pn, c->timeout,
                         PS_IO_ELEMENTS | (lo > a ? PS_IO_MORE : 0), tmp);
        if (rc != 0)
            return send_failed(k, ctx, rc, tmp, err);
        k->clean = 1;
        top = lo;
    }
    return 0;
}

/* pull_wait: how long to wait for the header of a WEIGHTS frame of
 * [k->lo, top) (PULL WAIT): 1.5T, and on an emulated link also the time
 * the server's link takes to bring in every worker's push of that range
 * (K of them at the link's rate, and its latency), which passes with no
 * byte for this worker. Without it a slow link failed honest jobs: at
 * 8 Mbit/s, K = 4 and 512 KiB pushes the server needs 2 s, and T = 1
 * waited 1.5 s. */
static double pull_wait(const struct ps_client *c, const struct ps_conn *k, uint64_t top)
{
    double wait = FRAMES_PULL_IDLE_FACTOR * c->timeout;

    if (c->link_bw > 0.0)
        wait += (double)c->world * (double)((top - k->lo) * c->elem) / c->link_bw + c->link_latency;
    return wait;
}

/* frames_receive: step `step`'s WEIGHTS frames from server k into `into` (the
 * client's buffer, NULL with sizes_only), from the top of its range down
 * (client.c's opening picture), until the range is whole. *told: the failure is the server's
 * ERROR. */
int frames_receive(struct ps_conn *k, uint64_t step, unsigned char *into, int *told, char *err)
{
    struct ps_client *c = k->owner;
    uint64_t top = k->hi;
    char ctx[40], tmp[ERR_LEN];
    int rc;

    snprintf(ctx, sizeof ctx, "step %llu", ull(step));
    while (top > k->lo) {
        struct proto_header h;
        uint64_t cnt;

        /* Each part comes when every worker has pushed it: the server
         * watches them, and needs up to one timeout to name one that
         * stalled (PULL WAIT). */
        rc = recv_header(k, ctx, pull_wait(c, k, top), (top - k->lo) * c->elem, &h, told, err);
        if (rc != 0)
            return rc;
        cnt = h.length / c->elem;       /* whole elements: the decoder checked */
        if (h.type != PROTO_WEIGHTS || h.rank != PROTO_RANK_SERVER || h.step != step ||
            cnt == 0 || h.aux < k->lo || h.aux >= top || cnt != top - h.aux) {
            err_say(err, "%s: %s sent %s (rank %u, step %llu, aux %llu, length %llu), expected "
                "WEIGHTS (step %llu) of elements ending at %llu, inside [%llu, %llu)", ctx,
                k->name, proto_type_name(h.type), (unsigned)h.rank, ull(h.step), ull(h.aux),
                ull(h.length), ull(step), ull(top), ull(k->lo), ull(k->hi));
            return ERR_PROTO_FIELD;
        }
        rc = c->io->recv(c->io_ctx, k, into ? into + (size_t)h.aux * c->elem : NULL,
                         (size_t)h.length, c->timeout, PS_IO_ELEMENTS | PS_IO_FRAME, tmp);
        if (rc != 0) {
            err_say(err, "%s: %s", ctx, tmp);
            return rc;
        }
        /* The server checked its weights before it sent them; a hostile
         * one (it holds the secret) may not have: check them on arrival. */
        if (into) {
            size_t bad;
            if (vec_check_finite(into + (size_t)h.aux * c->elem, (size_t)cnt, c->dtype, &bad) != 0) {
                err_say(err, "%s: %s sent weight element %llu = %g (NaN or Inf); "
                        "the step fails, nothing applied", ctx, k->name, ull(h.aux + bad),
                        vec_get(into, (size_t)h.aux + bad, c->dtype));
                return ERR_NONFINITE;
            }
        }
        top = h.aux;
    }
    return 0;
}
